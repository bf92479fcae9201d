/* Independent CPU references for the summed-area-table family of ops
 * (integral, boxblur, threshold) and for normalize, equalize, and the ops that
 * appear in their chains (gray, blur), used by test_ops_sat.c.
 *
 * Nothing here shares code with the library (not even its headers): the
 * references work on plain arrays, written from the specification in the
 * shaders' header comments:
 *   - integer ops take the integer sample levels q (0..255 for 8-bit input,
 *     0..65535 for 16-bit) and compute in exact integer arithmetic;
 *   - float ops (normalize, gray, blur) take normalized doubles and compute in
 *     double.
 * Samples are packed and interleaved: sample (y*w + x)*c + k. With c = 2 or 4
 * the last channel is alpha; the others are colour (rs_colour()).
 */
#ifndef VKI_REF_SAT_H
#define VKI_REF_SAT_H

#include <stdint.h>

/* Colour (non-alpha) channels of a c-channel image: 1, 1, 3, 3 for c = 1..4. */
int rs_colour(int c);

/* ---------------------------------------------------------------- integral */

/* One row of the summed-area table, computed in place: on entry acc[x*c + k]
 * holds S(x, y-1, k) (all zeros for y = 0), q points at row y's levels; on
 * return acc holds S(x, y, k) = sum of q(i, j, k) over i <= x, j <= y. Exact
 * uint64. Memory: one row, whatever the height. */
void rs_sat_row(const uint32_t *q, int w, int c, uint64_t *acc);

/* ---------------------------------------------------------------- box sums */

/* Number of pixels of the (2r+1)^2 window around (x, y) clipped to w x h. */
uint64_t rs_box_count(int x, int y, int w, int h, int r);

/* Exact window sums of every sample: sum[(y*w + x)*c + k] = sum of q over the
 * clipped (2r+1)^2 window around (x, y), channel k. Separable running sums
 * (rows, then columns) in uint64; O(w*h*c) whatever r. */
void rs_box_sums(const uint32_t *q, int w, int h, int c, int r, uint64_t *sum);

/* The same by brute force, O(r^2) per sample (self-check of rs_box_sums). */
void rs_box_sums_brute(const uint32_t *q, int w, int h, int c, int r, uint64_t *sum);

/* boxblur: out = mean over the clipped window rounded half up,
 * (2*sum + n) / (2*n), in levels (all channels, alpha included). */
void rs_boxblur(const uint32_t *q, int w, int h, int c, int r, uint32_t *out);

/* ---------------------------------------------------------------- threshold */

/* Colour samples: `levels` (white) if q > floor(value * levels), else 0.
 * Alpha samples are copied. */
void rs_threshold_value(const uint32_t *q, int w, int h, int c, uint32_t levels, double value, uint32_t *out);

/* Bradley & Roth: colour white iff q * n * 100 > sum * (100 - offset) over the
 * clipped (2r+1)^2 window (n pixels, window sum `sum`). Alpha copied. */
void rs_threshold_adaptive(const uint32_t *q, int w, int h, int c, uint32_t levels, int r, int offset,
                           uint32_t *out);

/* Otsu's threshold of a 256-bin histogram: the first bin t (0..254) that
 * maximizes the between-class variance w0*w1*(m0 - m1)^2 in double, where class
 * 0 is bins <= t (both classes non-empty). A histogram with one non-empty bin
 * gives that bin (so everything is <= it: black). */
int rs_otsu_hist(const uint64_t hist[256]);

/* 256-bin histograms of the colour channels (bin = q for 255 levels, q >> 8
 * for 65535) and their Otsu thresholds thr[k]. */
void rs_otsu_thresholds(const uint32_t *q, int w, int h, int c, uint32_t levels, int thr[4]);

/* Colour white iff bin(q) > thr[k]; alpha copied. */
void rs_threshold_apply_bins(const uint32_t *q, int w, int h, int c, uint32_t levels, const int thr[4],
                             uint32_t *out);

/* ---------------------------------------------------------------- equalize */

/* Histogram equalization per colour channel, integer formula: n = w*h, per
 * channel 256 bins (as above), cdf_min = the count of the first non-empty bin,
 *   lut(b) = (2 * (cdf(b) - cdf_min) * 255 + (n - cdf_min)) / (2 * (n - cdf_min))
 * (round half up of (cdf - cdf_min) * 255 / (n - cdf_min)). out is in output
 * units of out_max (255 or 65535): lut(b) * out_max / 255, exact. A constant
 * channel (n == cdf_min) and alpha keep their value: q * out_max / levels. */
void rs_equalize(const uint32_t *q, int w, int h, int c, uint32_t levels, uint32_t out_max, uint32_t *out);

/* ---------------------------------------------------------------- float ops (double) */

/* Normalize: each colour channel's (or with link, all colour channels') min..max
 * of v stretched to 0..1: (v - min) / (max - min); if max == min the channel is
 * unchanged. Alpha unchanged. */
void rs_normalize(const double *v, int w, int h, int c, int link, double *out);

/* Luma, BT.601 weights (0.299, 0.587, 0.114) on the stored values: c = 3 -> 1
 * channel, c = 4 -> 2 (Y, alpha), c = 1, 2 copied. Returns the output
 * channel count. */
int rs_gray601(const double *v, int w, int h, int c, double *out);

/* Gaussian blur, weights exp(-i^2 / (2 sigma^2)), i = -r..r, normalized;
 * clamp-to-edge; with alpha (c = 2, 4) the colour is blurred premultiplied and
 * divided by the blurred alpha afterwards (0 where that is 0). Double. */
void rs_gauss(const double *v, int w, int h, int c, double sigma, int r, double *out);

#endif
