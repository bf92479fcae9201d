/* The reference of boxblur, on integer levels (tests/lib/ref_levels.h). */
#ifndef VKI_BOXBLUR_REF_H
#define VKI_BOXBLUR_REF_H

#include "ref_levels.h"

#include <stdint.h>

/* boxblur: out = mean over the clipped window rounded half up,
 * (2*sum + n) / (2*n), in levels (all channels, alpha included). */
void ref_boxblur(const uint32_t *q, int w, int h, int c, int r, uint32_t *out);

#endif
