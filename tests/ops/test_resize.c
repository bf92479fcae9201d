/* resize on the device against its double-precision reference (resize_ref.h:
 * the README's resampling definition; tolerances: tests/lib/run_ref.h): the
 * definition's exact boundaries (box's [-1/2, 1/2), nearest's floor) where
 * they fall on a tap. */#include "blur_ref.h"
#include "gpu_harness.h"
#include "gray_ref.h"
#include "resize_ref.h"
#include "run_ref.h"
#include "t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G_FAST "resize fast=true"
#define G_LINEAR "resize linear=true"
#define G_GEO "resize geometry"
#define G_FUSED "resize fused pass"
#define G_CHAIN "resize in chains"

/* One group per filter (exact definition: fast=false, or factors under 4). */
static const char *const g_filter[RF_COUNT] = { "resize lanczos3", "resize lanczos2", "resize mitchell",
                                                "resize catrom",   "resize bilinear", "resize box",
                                                "resize nearest" };

static const vkimg_fmt in_fmts[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };

/* resize=GEO:filter=F:linear=L:fast=S on a random w x h x c image. */
static void rz(vkimg_ctx *ctx, const char *group, int w, int h, int c, vkimg_fmt in_fmt, unsigned fmts,
               const char *geo, ref_filter f, bool linear, bool fast)
{
    char t[160];
    snprintf(t, sizeof t, "resize=%s:filter=%s:linear=%s:fast=%s", geo, ref_filter_names[f], linear ? "true" : "false",
             fast ? "true" : "false");
    ref_resize_args a = { geo, { f, linear, fast } };
    ref_step s[] = { RESIZE(&a) };
    run_rand(ctx, group, t, s, 1, w, h, c, in_fmt, fmts, -1);
}

/* Output formats rotating with k: u8 always, u16 or f32 every other case (each
 * format and size is a kernel of its own: the compile time on lavapipe is most
 * of this test's). */
static unsigned fmts_of(int k) { return k % 4 == 0 ? FMT_U8 | FMT_F32 : k % 4 == 2 ? FMT_U8 | FMT_U16 : FMT_U8; }

/* ---------------------------------------------------------------- exact ends */

/* Where the definition's boundaries fall exactly on a tap (box's t = +-1/2,
 * nearest's (i + 0.5) s an integer) though s is not a binary fraction: the
 * double evaluation of c = (i + 0.5) s - 0.5 can land on either side. Box
 * 257 -> 18 has t = 1/2 at j = 128 (between outputs 8 and 9), 7 -> 6 at j = 3 (output
 * 2), 13 -> 6 at j = 6, 2 -> 3 (enlarging) at j = 0 (output 1); nearest
 * 30 -> 11 takes j = 15 for output 5 (5.5 x 30 / 11 = 15, 14.999999999999998
 * in double), 2 -> 3 j = 1 for output 1. */
static void test_ties(vkimg_ctx *ctx)
{
    static const struct {
        int w, h;
        const char *geo;
        ref_filter f;
    } cs[] = {
        { 257, 5, "18x5!", RF_BOX },   { 5, 257, "5x18!", RF_BOX },   { 7, 7, "6x6!", RF_BOX },
        { 13, 13, "6x6!", RF_BOX },    { 2, 2, "3x3!", RF_BOX },      { 257, 129, "7%", RF_BOX },
        { 30, 20, "11x7!", RF_NEAREST }, { 20, 30, "7x11!", RF_NEAREST }, { 2, 2, "3x3!", RF_NEAREST },
        { 30, 20, "x7", RF_NEAREST },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int c = 1; c <= 4; c += 1 + (int)(i % 2))
            rz(ctx, g_filter[cs[i].f], cs[i].w, cs[i].h, c, in_fmts[(i + (size_t)c) % 3], fmts_of((int)i + c),
               cs[i].geo, cs[i].f, false, false);
}

int main(void)
{
    static const gh_suite suites[] = {
        { "ties", test_ties },
    };
    run_next_seed = 7001;
    ref_alpha_weighted = true; /* colour / alpha is unbounded (negative lobes): ref.h */
    return gh_main("test_resize", suites, sizeof suites / sizeof suites[0]);
}
