/* The summed-area table (shaders/integral.comp), shared by integral, boxblur and
 * threshold=mode=adaptive. */
#ifndef VKI_SAT_H
#define VKI_SAT_H

#include "exec/exec.h"

/* Records the passes that build the table of s->in (s->in_c channels, integer
 * levels s->levels) into `sat` (w*h*in_c entries of uint32, or uint64 if wide). */
int vki_record_sat(vki_rec *r, const vki_step *s, VkDeviceAddress sat, bool wide);

/* True if a box sum of this radius may not fit 32 bits (use a uint64 table). */
bool vki_box_needs_wide(const vki_step *s, int radius);

#endif
