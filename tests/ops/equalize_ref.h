/* The reference of equalize, on integer levels (tests/lib/ref_levels.h). */
#ifndef VKI_EQUALIZE_REF_H
#define VKI_EQUALIZE_REF_H

#include "ref_levels.h"

#include <stdint.h>

/* Histogram equalization per colour channel, integer formula: n = w*h, per
 * channel 256 bins (ref_bin), cdf_min = the count of the first non-empty bin,
 *   lut(b) = (2 * (cdf(b) - cdf_min) * 255 + (n - cdf_min)) / (2 * (n - cdf_min))
 * (round half up of (cdf - cdf_min) * 255 / (n - cdf_min)). out is in output
 * units of out_max (255 or 65535): lut(b) * out_max / 255, exact. A constant
 * channel (n == cdf_min) and alpha keep their value: q * out_max / levels. */
void ref_equalize(const uint32_t *q, int w, int h, int c, uint32_t levels, uint32_t out_max, uint32_t *out);

#endif
