/* resize on the device against its double-precision reference (resize_ref.h:
 * the README's resampling definition; tolerances: tests/lib/run_ref.h): the
 * definition's exact boundaries (box's [-1/2, 1/2), nearest's floor) where
 * they fall on a tap; both GPU code paths (VKIMG_RESIZE_FUSED=1: one dispatch,
 * =0: two passes; which kernels a run made is read from the library's log),
 * which give the same bytes, with and without the fast path's pre-shrink; a
 * result of the input's size is the input as it is. */#include "blur_ref.h"
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

/* A result of the input's size is the input as it is (README, Geometry: "the
 * image is left as it is"; ImageMagick and libvips copy it): the same bytes in
 * the same format, the colour under transparent pixels included, whatever the
 * filter (mitchell would blur it) and linear. */
static void test_unchanged(vkimg_ctx *ctx)
{
    static const struct {
        const char *text;
        int w, h;
    } cs[] = {
        { "resize=60x60>:filter=mitchell", 30, 20 },          { "resize=12x12<:filter=lanczos3:linear=true", 30, 20 },
        { "resize=30x20:filter=catrom", 30, 20 },             { "resize=100%:filter=bilinear", 1, 7 },
        { "resize=20x20^:filter=box", 30, 20 },               { "thumbnail=64>", 41, 23 },
        { "thumbnail=50x50>:crop=centre:filter=mitchell", 37, 23 }, { "resize=1x1", 1, 1 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int f = 0; f < 3; f++) {
            int c = 2 + 2 * (int)((i + (size_t)f) % 2);
            vkimg_image in = ref_random_image(cs[i].w, cs[i].h, c, in_fmts[f], run_next_seed++);
            vkimg_err e;
            memset(&e, 0, sizeof e);
            vkimg_pipeline *p = vkimg_pipeline_parse(cs[i].text, &e);
            CHECK(p != NULL, "parse '%s': %s", cs[i].text, e.msg);
            vkimg_run_opts o;
            memset(&o, 0, sizeof o);
            o.out_fmt = in_fmts[f];
            vkimg_image out;
            memset(&out, 0, sizeof out);
            gh_runs++;
            snprintf(cur_case, sizeof cur_case, "%s %dx%d c=%d %s", cs[i].text, cs[i].w, cs[i].h, c,
                     vkimg_fmt_name(in_fmts[f]));
            int rc = p ? vkimg_run(ctx, p, &in, &o, &out, &e) : -1;
            CHECK(rc == 0 && out.w == in.w && out.h == in.h && out.c == in.c &&
                      !memcmp(out.data, in.data, vkimg_image_bytes(&in)),
                  "%s: not the input as it is (%dx%d)", cur_case, out.w, out.h);
            vkimg_image_free(&out);
            vkimg_pipeline_free(p);
            ref_image_free(&in);
        }
}

/* ---------------------------------------------------------------- the two paths */

/* Which kernels the runs create (the library logs "pipeline NAME created"):
 * "resize" is the fused pass, "resize-h" / "resize-v" the two passes. A kernel
 * made once is not made again, so a case sees its path only where its
 * specialization is new (each case here has sizes of its own). */
static int made_fused, made_two;

static void tap(vkimg_log_level lvl, const char *msg)
{
    (void)lvl;
    made_fused += !strncmp(msg, "pipeline resize created", 23);
    made_two += !strncmp(msg, "pipeline resize-v created", 25);
}

/* Runs text on in to u8 (for the comparison of the two paths' bytes). */
static void run_u8(vkimg_ctx *ctx, const char *text, const vkimg_image *in, vkimg_image *out)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "parse '%s': %s", text, e.msg);
    if (!p)
        return;
    vkimg_run_opts o;
    memset(&o, 0, sizeof o);
    o.out_fmt = VKIMG_U8;
    gh_runs++;
    snprintf(cur_case, sizeof cur_case, "%s %dx%d c=%d", text, in->w, in->h, in->c);
    int rc = vkimg_run(ctx, p, in, &o, out, &e);
    CHECK(rc == 0, "'%s': vkimg_run failed: %s", text, e.msg);
    vkimg_pipeline_free(p);
}

static void test_paths(vkimg_ctx *ctx)
{
    static const struct {
        int w, h, c;
        const char *geo;
        ref_filter f;
        bool fast;
    } cs[] = {
        { 1, 1, 4, "9x4!", RF_LANCZOS3, false },     { 1, 7, 2, "5x1!", RF_CATROM, false },
        { 7, 1, 3, "1x11!", RF_MITCHELL, false },    { 17, 13, 1, "5x29!", RF_LANCZOS2, false },
        { 131, 67, 4, "200x150!", RF_LANCZOS3, false }, { 131, 67, 3, "65x33!", RF_BILINEAR, false },
        { 600, 530, 4, "257x129!", RF_LANCZOS3, false }, { 600, 530, 1, "33x31!", RF_BOX, true },
        { 40, 33, 2, "641x530!", RF_CATROM, false }, { 257, 129, 3, "7%", RF_MITCHELL, true },
        { 131, 67, 4, "40x20!", RF_NEAREST, false }, { 300, 200, 1, "1%", RF_LANCZOS3, false },
        { 64, 64, 1, "15x50!", RF_LANCZOS3, true },  { 97, 61, 2, "150%", RF_BOX, false },
    };
    int nfused = 0, k = 0;
    gh_log_tap = tap;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++, k++) {
        char t[160];
        snprintf(t, sizeof t, "resize=%s:filter=%s:fast=%s", cs[i].geo, ref_filter_names[cs[i].f],
                 cs[i].fast ? "true" : "false");
        ref_resize_args a = { cs[i].geo, { cs[i].f, false, cs[i].fast } };
        ref_step s[] = { RESIZE(&a) };
        vkimg_image in = ref_random_image(cs[i].w, cs[i].h, cs[i].c, in_fmts[k % 3], run_next_seed++);
        vkimg_image o1, o0;
        memset(&o1, 0, sizeof o1);
        memset(&o0, 0, sizeof o0);
        setenv("VKIMG_RESIZE_FUSED", "1", 1);
        made_fused = made_two = 0;
        run_u8(ctx, t, &in, &o1);
        nfused += made_fused > 0;
        run_case(ctx, G_FUSED, t, s, 1, &in, fmts_of(k), -1);
        setenv("VKIMG_RESIZE_FUSED", "0", 1);
        made_fused = 0;
        run_u8(ctx, t, &in, &o0); /* the two passes: the same bytes as the fused pass (below) */
        unsetenv("VKIMG_RESIZE_FUSED");
        CHECK(made_fused == 0, "'%s' %dx%d c=%d: VKIMG_RESIZE_FUSED=0 made the fused kernel", t, cs[i].w, cs[i].h,
              cs[i].c);
        /* the same bytes either way */
        CHECK(o0.data && o1.data && vkimg_image_bytes(&o0) == vkimg_image_bytes(&o1) &&
                  !memcmp(o0.data, o1.data, vkimg_image_bytes(&o0)),
              "'%s' %dx%d c=%d: the fused pass and the two passes differ", t, cs[i].w, cs[i].h, cs[i].c);
        vkimg_image_free(&o0);
        vkimg_image_free(&o1);
        ref_image_free(&in);
    }
    gh_log_tap = NULL;
    printf("  VKIMG_RESIZE_FUSED=1: %d of %zu cases made a fused kernel (the others: made before, or their rows "
           "don't fit shared memory: two passes)\n",
           nfused, sizeof cs / sizeof cs[0]);
    CHECK(nfused >= 8, "VKIMG_RESIZE_FUSED=1 made the fused kernel in %d cases only", nfused);
}

int main(void)
{
    static const gh_suite suites[] = {
        { "ties", test_ties }, { "unchanged", test_unchanged }, { "paths", test_paths },
    };
    run_next_seed = 7001;
    ref_alpha_weighted = true; /* colour / alpha is unbounded (negative lobes): ref.h */
    return gh_main("test_resize", suites, sizeof suites / sizeof suites[0]);
}
