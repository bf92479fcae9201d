/* The reference of copy: the identity (ref_copy_d, tests/lib/ref.h). */
#ifndef VKI_COPY_REF_H
#define VKI_COPY_REF_H

#include "ref.h"

ref_img ref_copy_step(const ref_img *in, const ref_step *st);
#define COPY { .fn = ref_copy_step }

#endif
