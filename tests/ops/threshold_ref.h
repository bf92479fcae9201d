/* The references of threshold (value, adaptive, Otsu), on integer levels
 * (tests/lib/ref_levels.h). */
#ifndef VKI_THRESHOLD_REF_H
#define VKI_THRESHOLD_REF_H

#include "ref_levels.h"

#include <stdint.h>

/* Colour samples: `levels` (white) if q > floor(value * levels), else 0.
 * Alpha samples are copied. */
void ref_threshold_value(const uint32_t *q, int w, int h, int c, uint32_t levels, double value, uint32_t *out);

/* Bradley & Roth: colour white iff q * n * 100 > sum * (100 - offset) over the
 * clipped (2r+1)^2 window (n pixels, window sum `sum`). Alpha copied. */
void ref_threshold_adaptive(const uint32_t *q, int w, int h, int c, uint32_t levels, int r, int offset,
                            uint32_t *out);

/* Otsu's threshold of a 256-bin histogram: the first bin t (0..254) that
 * maximizes the between-class variance w0*w1*(m0 - m1)^2 in double, where class
 * 0 is bins <= t (both classes non-empty). A histogram with one non-empty bin
 * gives that bin (so everything is <= it: black). */
int ref_otsu_hist(const uint64_t hist[256]);

/* 256-bin histograms of the colour channels (bin = q for 255 levels, q >> 8
 * for 65535) and their Otsu thresholds thr[k]. */
void ref_otsu_thresholds(const uint32_t *q, int w, int h, int c, uint32_t levels, int thr[4]);

/* Colour white iff bin(q) > thr[k]; alpha copied. */
void ref_threshold_apply_bins(const uint32_t *q, int w, int h, int c, uint32_t levels, const int thr[4],
                              uint32_t *out);

#endif
