/* The exact moves (flip, flop, transpose, transverse, rotate by multiples of 90
 * degrees, orient, crop: one remap kernel) on the device against their references
 * (tests/ops/remap_ref.h): a move is a table that names, for every output pixel,
 * the input pixel it takes, and the device's output must be byte-identical to
 * the input's bytes moved by it. When the output format differs from the input's,
 * the values are the device's `copy` of the input to that format (the conversion
 * is copy's, tested by test_copy) moved by the table: a move changes no value.
 * The mismatches per group are printed by rm_print_stats. */
#ifndef VKI_REMAP_UTIL_H
#define VKI_REMAP_UTIL_H

#include "gpu_harness.h"

#include <stddef.h>
#include <stdint.h>

/* A move: the output is w x h; output pixel p = y*w + x takes input pixel src[p]
 * (an index y'*in_w + x' of the input, in_w x in_h). */
typedef struct rm_map {
    int in_w, in_h;
    int w, h;
    size_t *src;
} rm_map;

/* A map of w x h outputs from an in_w x in_h input, every src unset (SIZE_MAX). */
rm_map rm_map_new(int in_w, int in_h, int w, int h);
void rm_map_free(rm_map *m);
/* a, then b (b's input is a's output): the move that does both. */
rm_map rm_then(const rm_map *a, const rm_map *b);
/* Whether every output pixel has a source inside the input (and, with
 * bijective, every input pixel is taken exactly once). */
int rm_map_valid(const rm_map *m, int bijective);
int rm_map_equal(const rm_map *a, const rm_map *b);

/* The input's bytes moved by m: a new image of m's size (same c and fmt). */
vkimg_image rm_apply(const rm_map *m, const vkimg_image *in);

/* A random test image (ref_random_image), with F32 samples that no conversion
 * keeps (-0, negatives, above 1, 1e30, infinities, a subnormal) sprinkled in, so
 * that a move that goes through a conversion is caught. */
vkimg_image rm_image(int w, int h, int c, vkimg_fmt fmt, uint64_t seed);

/* Runs text on in with output format out_fmt (and o's orientation when o is
 * given) and checks the result is byte-identical to in moved by m. */
void rm_check(vkimg_ctx *ctx, const char *group, const char *text, const rm_map *m, const vkimg_image *in,
              vkimg_fmt out_fmt, const vkimg_run_opts *o);
/* Runs text on in (with o's orientation when o is given) and checks that it fails
 * with code and message msg. */
void rm_check_fails(vkimg_ctx *ctx, const char *text, const vkimg_image *in, const vkimg_run_opts *o, int code,
                    const char *msg);

/* The table of the groups checked since the last call: runs and samples per
 * output format and the samples that differ (all must be 0). */
void rm_print_stats(void);

#endif
