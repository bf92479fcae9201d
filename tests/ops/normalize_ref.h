/* The reference of normalize, in double on plain arrays (samples packed and
 * interleaved as in tests/lib/ref_levels.h). */
#ifndef VKI_NORMALIZE_REF_H
#define VKI_NORMALIZE_REF_H

/* Normalize: each colour channel's (or with link, all colour channels') min..max
 * of v stretched to 0..1: (v - min) / (max - min); if max == min the channel is
 * unchanged. Alpha unchanged. */
void ref_normalize(const double *v, int w, int h, int c, int link, double *out);

#endif
