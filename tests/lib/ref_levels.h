/* Shared primitives of the independent CPU references that work on integer
 * sample levels (tests/ops: boxblur_ref.h, threshold_ref.h, equalize_ref.h; the
 * integral's is in test_integral.c).
 *
 * Nothing here shares code with the library (not even its headers): the
 * references work on plain arrays, written from the specification in the
 * shaders' header comments. Integer ops take the integer sample levels q (0..255
 * for 8-bit input, 0..65535 for 16-bit) and compute in exact integer arithmetic.
 * Samples are packed and interleaved: sample (y*w + x)*c + k. With c = 2 or 4
 * the last channel is alpha; the others are colour (ref_colour()).
 */
#ifndef VKI_REF_LEVELS_H
#define VKI_REF_LEVELS_H

#include <stdint.h>

/* Colour (non-alpha) channels of a c-channel image: 1, 1, 3, 3 for c = 1..4. */
int ref_colour(int c);

/* The 256-bin histogram bin of level q: q for 255 levels, q >> 8 for 65535. */
uint32_t ref_bin(uint32_t q, uint32_t levels);

/* ---------------------------------------------------------------- box sums */

/* Number of pixels of the (2r+1)^2 window around (x, y) clipped to w x h. */
uint64_t ref_box_count(int x, int y, int w, int h, int r);

/* Exact window sums of every sample: sum[(y*w + x)*c + k] = sum of q over the
 * clipped (2r+1)^2 window around (x, y), channel k. Separable running sums
 * (rows, then columns) in uint64; O(w*h*c) whatever r. */
void ref_box_sums(const uint32_t *q, int w, int h, int c, int r, uint64_t *sum);

/* The same by brute force, O(r^2) per sample (self-check of ref_box_sums). */
void ref_box_sums_brute(const uint32_t *q, int w, int h, int c, int r, uint64_t *sum);

#endif
