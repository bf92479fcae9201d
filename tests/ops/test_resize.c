/* resize on the device against its double-precision reference (resize_ref.h:
 * the README's resampling definition, fast path and ImageMagick geometry;
 * tolerances: tests/lib/run_ref.h): every filter at factors from 0.01x to 16x,
 * shrinking and enlarging each axis on its own (1xN -> Mx1), on awkward sizes
 * (1x1, 1xN, Nx1, primes, larger than the fused pass's 32x16 tile), 1-4
 * channels (alpha premultiplied), u8/u16/f32 in and out; the definition's
 * exact boundaries (box's [-1/2, 1/2), nearest's floor) where they fall on a
 * tap; linear light; the fast path (box pre-shrink of the axes shrinking 4x or
 * more) against its own definition and fast=false against the exact one; every
 * geometry form through the device; a result of the input's size is the input
 * as it is; every GPU code path against the reference (VKIMG_RESIZE_PATH=fused:
 * one dispatch, =passes: two, =rows: the pre-shrink folded into the horizontal
 * pass), fused and passes byte for byte with f32 between the axes (which kernels
 * a run made is read from the library's log); and chains whose sizes change from
 * op to op. */
#include "blur_ref.h"
#include "gpu/gpu.h" /* whether the device reads texel sources (the vec passes need them) */
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
#define G_PASSES "resize two passes"
#define G_ROWS "resize rows pass (pre-shrink folded in)"
#define G_STRIP "resize strip pass (integer factors, 8-bit)"
#define G_LINES "resize lines pass (CPU devices: integer factors, 8-bit)"
#define G_VEC "resize vec passes (CPU devices: the other 8-bit cases)"
#define G_VEC_OLD "resize two passes on the vec passes' cases"
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

/* ---------------------------------------------------------------- filters */

/* The exact definition (fast=false) for every filter: input size, geometry.
 * Factors per axis: 0.01x (100 -> 1, 300 -> 3), 0.1x, 1/7.5, 0.5x, 2/3,
 * 1.5x, 4x, 16x; one axis shrinking while the other grows; 1 -> N, N -> 1. */
static const struct {
    int w, h;
    const char *geo;
} exact_cases[] = {
    { 1, 1, "9x4!" },        /* 1x1 -> anything */
    { 1, 7, "5x1!" },        /* 1xN -> Mx1 */
    { 7, 1, "1x11!" },       /* Nx1 -> 1xM */
    { 3, 5, "48x80!" },      /* 16x */
    { 17, 13, "5x29!" },     /* x shrinks 3.4x, y grows 2.2x */
    { 131, 67, "17x67!" },   /* primes: 7.7x along x only */
    { 300, 200, "1%" },      /* 0.01x: 3x2 */
    { 100, 61, "1x7!" },     /* 0.01x along x */
    { 40, 33, "641x530!" },  /* 16x, larger than a 32x16 tile both ways */
    { 257, 129, "50%" },     /* 0.5x, odd sides (129 rounds to 65) */
    { 97, 61, "150%" },      /* 1.5x */
    { 61, 97, "x65" },       /* 2/3 */
};

static void test_filters(vkimg_ctx *ctx)
{
    int rf = ref_resize_self_check();
    CHECK(rf == 0, "resize reference self-check: %d failures", rf);
    int k = 0;
    for (int f = 0; f < RF_COUNT; f++)
        for (size_t i = 0; i < sizeof exact_cases / sizeof exact_cases[0]; i++, k++) {
            int c = 1 + (int)((i + (size_t)f) % 4);
            rz(ctx, g_filter[f], exact_cases[i].w, exact_cases[i].h, c, in_fmts[k % 3], fmts_of(k), exact_cases[i].geo,
               (ref_filter)f, false, false);
        }
    /* a shrink and an enlargement per filter with alpha (fully transparent
     * blocks larger than the kernels), every channel count for lanczos3 */
    for (int f = 0; f < RF_COUNT; f++) {
        rz(ctx, g_filter[f], 61, 43, 2 + 2 * (f % 2), VKIMG_U8, FMT_U8, "23x17!", (ref_filter)f, false, false);
        rz(ctx, g_filter[f], 23, 17, 4 - 2 * (f % 2), VKIMG_U8, FMT_U8, "61x43!", (ref_filter)f, false, false);
    }
    for (int c = 1; c <= 4; c++)
        rz(ctx, g_filter[RF_LANCZOS3], 61, 43, c, VKIMG_U8, c == 3 ? FMT_ALL : FMT_U8, "23x17!", RF_LANCZOS3, false,
           false);
    /* the defaults: lanczos3, fast (factors under 4: the exact definition) */
    {
        ref_resize_args a = { "77%", { RF_LANCZOS3, false, true } };
        ref_step s[] = { RESIZE(&a) };
        run_rand(ctx, g_filter[RF_LANCZOS3], "resize=77%", s, 1, 131, 67, 4, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, g_filter[RF_LANCZOS3], "resize=size=77%", s, 1, 600, 530, 3, VKIMG_U8, FMT_U8, -1);
    }
}

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
        for (int c = 1 + (int)(i % 2); c <= 4; c += 2) /* 1 and 3, or 2 and 4 */
            rz(ctx, g_filter[cs[i].f], cs[i].w, cs[i].h, c, in_fmts[(i + (size_t)c) % 3], fmts_of((int)i + c),
               cs[i].geo, cs[i].f, false, false);
}

/* ---------------------------------------------------------------- fast path */

/* fast=true against the pre-shrink definition, and fast=false on the same
 * images against the exact one: factors 4x (k = 2) to 100x (k = 50), one axis
 * at a time, sizes that leave a partial block; nearest never pre-shrinks. */
static void test_fast(vkimg_ctx *ctx)
{
    static const struct {
        int w, h;
        const char *geo;
    } cs[] = {
        { 8, 8, "2x2!" },        /* 4x: k = 2, whole blocks */
        { 9, 7, "2x1!" },        /* 4.5x, 7x: k = 2, 3; partial blocks */
        { 101, 3, "1x3!" },      /* 101x along x only: k = 50 */
        { 3, 250, "3x5!" },      /* 50x along y only: k = 25 */
        { 131, 67, "13x16!" },   /* 10x, 4.2x: k = 5, 2 */
        { 257, 129, "7%" },      /* 14.3x (18x9): k = 7, 7 */
        { 600, 530, "59x37!" },  /* 10.2x, 14.3x */
        { 1, 400, "1x4!" },      /* 1 x N */
        { 127, 1, "3x1!" },
        { 64, 64, "15x50!" },    /* 4.27x along x, 1.28x along y */
        { 800, 600, "1%" },      /* 0.01x: 8x6 (k = 50) */
    };
    /* per case three filters with fast=true (nearest, which never pre-shrinks,
     * every third), one with fast=false (the exact definition at that factor) */
    int k = 0;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int j = 0; j < 4; j++, k++) {
            bool big = cs[i].w * cs[i].h > 100000;
            ref_filter f = (ref_filter)((3 * i + (size_t)j) % RF_COUNT);
            int c = 1 + (k % 4);
            if (j < 3)
                rz(ctx, f == RF_NEAREST ? g_filter[f] : G_FAST, cs[i].w, cs[i].h, c, in_fmts[k % 3],
                   big ? FMT_U8 : fmts_of(k), cs[i].geo, f, false, true);
            else
                rz(ctx, g_filter[f], cs[i].w, cs[i].h, c, in_fmts[k % 3], big ? FMT_U8 : fmts_of(k), cs[i].geo, f,
                   false, false);
        }
    /* with alpha and linear light */
    rz(ctx, G_FAST, 131, 97, 4, VKIMG_U8, FMT_U8 | FMT_F32, "17x9!", RF_LANCZOS3, true, true);
    rz(ctx, G_FAST, 97, 131, 2, VKIMG_U16, FMT_U8 | FMT_U16, "9x17!", RF_CATROM, true, true);
    rz(ctx, G_FAST, 97, 131, 3, VKIMG_F32, FMT_U8, "9x17!", RF_MITCHELL, true, true);
}

/* ---------------------------------------------------------------- linear light */

/* linear=true: every filter, shrinking and enlarging, every channel count and
 * format (f32 inputs go to 1.25: decoded clamped to [0, 1]). */
static void test_linear(vkimg_ctx *ctx)
{
    int k = 0;
    for (int f = 0; f < RF_COUNT; f++, k += 2) {
        rz(ctx, G_LINEAR, 67, 41, 1 + k % 4, in_fmts[k % 3], fmts_of(k), "29x13!", (ref_filter)f, true, false);
        rz(ctx, G_LINEAR, 13, 7, 2 + k % 3, in_fmts[(k + 1) % 3], fmts_of(k + 1), "40x30!", (ref_filter)f, true, false);
    }
    rz(ctx, G_LINEAR, 1, 1, 4, VKIMG_U8, FMT_ALL, "3x2!", RF_LANCZOS3, true, false);
    rz(ctx, G_LINEAR, 1, 9, 2, VKIMG_F32, FMT_ALL, "4x1!", RF_MITCHELL, true, false);
    rz(ctx, G_LINEAR, 600, 530, 3, VKIMG_U8, FMT_U8, "257x129!", RF_LANCZOS3, true, false);
}

/* ---------------------------------------------------------------- geometry */

/* Every geometry form through the device (the output size is the reference's
 * ImageMagick rounding; run_case checks it with the pixels). */
static void test_geometry(vkimg_ctx *ctx)
{
    static const struct {
        int w, h;
        const char *geo;
    } cs[] = {
        { 50, 20, "29%" },      /* 14.5 -> 15, 5.8 -> 6 */
        { 33, 21, "150x50%" },  /* 49.5 -> 50, 10.5 -> 11 */
        { 40, 25, "12.5%" },
        { 30, 20, "20x20" },    /* fit: 20x13 */
        { 30, 20, "20x20^" },   /* cover: 30x20 -> 30x20 scaled 1: the same size */
        { 30, 20, "10x10^" },   /* cover: 15x10 */
        { 30, 20, "17x5!" },
        { 30, 20, "60x60>" },   /* only shrink: unchanged */
        { 30, 20, "12x12>" },   /* 12x8 */
        { 30, 20, "12x12<" },   /* only enlarge: unchanged */
        { 30, 20, "45x45<" },   /* 45x30 */
        { 30, 20, "45" },       /* width given */
        { 30, 20, "45x" },
        { 30, 20, "x7" },       /* height given: 10.5 -> 11 */
        { 20, 30, "7^" },       /* covers a 7x7 box: 7x11 (10.5 -> 11) */
        { 1000, 3, "10x10" },   /* 10 x 0.03 -> 10 x 1 */
        { 3, 1000, "1x1" },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        rz(ctx, G_GEO, cs[i].w, cs[i].h, i % 2 ? 4 : 1, VKIMG_U8, FMT_U8, cs[i].geo, (ref_filter)(i % RF_COUNT), false,
           true);
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
static int made_fused, made_two, ran_strip, ran_lines, ran_vec, ran_vslide, ran_dp4;

static void tap(vkimg_log_level lvl, const char *msg)
{
    (void)lvl;
    made_fused += !strncmp(msg, "pipeline resize created", 23);
    made_two += !strncmp(msg, "pipeline resize-v created", 25);
    ran_strip += !strncmp(msg, "dispatch resize-strip ", 22);
    ran_dp4 += !strcmp(msg, "resize-strip: block sums by 4x8-bit dot products");
    ran_lines += !strncmp(msg, "dispatch resize-lines", 21); /* and resize-lines-edge */
    ran_vec += !strncmp(msg, "dispatch resize-h-vec ", 22);
    ran_vslide += !strncmp(msg, "dispatch resize-v-slide ", 24);
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
        /* f32 between the axes in both, for the byte comparison (8-bit outputs have
         * 16 bits between them by default: the reference runs below check that) */
        setenv("VKIMG_RESIZE_TMP", "f32", 1);
        setenv("VKIMG_RESIZE_PATH", "fused", 1);
        made_fused = made_two = 0;
        run_u8(ctx, t, &in, &o1);
        nfused += made_fused > 0;
        setenv("VKIMG_RESIZE_PATH", "passes", 1);
        made_fused = 0;
        run_u8(ctx, t, &in, &o0); /* the two passes: the same bytes as the fused pass (below) */
        unsetenv("VKIMG_RESIZE_TMP");
        CHECK(made_fused == 0, "'%s' %dx%d c=%d: VKIMG_RESIZE_PATH=passes made the fused kernel", t, cs[i].w,
              cs[i].h, cs[i].c);
        /* every path against the reference, with its default intermediate */
        static const char *const paths[] = { "fused", "passes", "rows" }, *const groups[] = { G_FUSED, G_PASSES, G_ROWS };
        for (int p = 0; p < 3; p++) {
            setenv("VKIMG_RESIZE_PATH", paths[p], 1);
            run_case(ctx, groups[p], t, s, 1, &in, fmts_of(k), -1);
        }
        unsetenv("VKIMG_RESIZE_PATH");
        /* the same bytes either way */
        CHECK(o0.data && o1.data && vkimg_image_bytes(&o0) == vkimg_image_bytes(&o1) &&
                  !memcmp(o0.data, o1.data, vkimg_image_bytes(&o0)),
              "'%s' %dx%d c=%d: the fused pass and the two passes differ", t, cs[i].w, cs[i].h, cs[i].c);
        vkimg_image_free(&o0);
        vkimg_image_free(&o1);
        ref_image_free(&in);
    }
    gh_log_tap = NULL;
    printf("  VKIMG_RESIZE_PATH=fused: %d of %zu cases made a fused kernel (the others: made before, or their rows "
           "don't fit shared memory: two passes)\n",
           nfused, sizeof cs / sizeof cs[0]);
    CHECK(nfused >= 8, "VKIMG_RESIZE_PATH=fused made the fused kernel in %d cases only", nfused);
}

/* ---------------------------------------------------------------- the strip pass */

/* VKIMG_RESIZE_PATH=strip (the GPUs' default where it fits: 8-bit input with
 * rows of whole words, integer factors on both axes, so every output has the
 * same weights): both axes and the pre-shrink in one dispatch, against the
 * reference. Factors 2x to 10x (pre-shrink 1 to 5), every filter, 1-4
 * channels, the taps past the left and right edges (the invocations there
 * read byte by byte, clamped), several workgroups across (OW outputs each) and
 * down (R rows each), and small workgroups (VKIMG_RESIZE_STRIP=NTxR); which
 * runs made the strip pass is read from the library's log ("dispatch
 * resize-strip"). Where it does not fit, the run takes another path: those
 * cases are checked too. (With the fast path's pre-shrink factor, floor(s / 2),
 * a uniform table means whole blocks: no partial block reaches this pass.) */
typedef struct uniform_case {
    int w, h, c;
    const char *geo;
    ref_filter f;
    bool fast;
    const char *shape; /* VKIMG_RESIZE_STRIP, or NULL */
} uniform_case;

static const uniform_case uniform_cases[] = {
    { 8, 8, 3, "2x2!", RF_LANCZOS3, true, NULL },          /* 4x: k = 2, one output per workgroup row */
    { 132, 68, 3, "33x17!", RF_LANCZOS3, true, NULL },     /* 4x, RGB: 2 columns an invocation */
    { 132, 68, 4, "33x17!", RF_LANCZOS3, true, NULL },     /* RGBA: alpha premultiplied in integers */
    { 132, 68, 2, "33x17!", RF_MITCHELL, true, NULL },     /* gray + alpha */
    { 132, 68, 1, "33x17!", RF_CATROM, true, NULL },       /* gray: 6 columns an invocation */
    { 64, 48, 4, "32x24!", RF_LANCZOS3, false, NULL },     /* 2x, no pre-shrink: 12 taps */
    { 96, 40, 4, "24x10!", RF_LANCZOS3, false, NULL },     /* 4x exact: 24 taps, step 4 */
    { 256, 64, 4, "32x8!", RF_LANCZOS2, true, NULL },      /* 8x: k = 4 */
    { 640, 360, 4, "64x36!", RF_BILINEAR, true, NULL },    /* 10x, RGBA */
    { 100, 60, 1, "50x30!", RF_BOX, false, NULL },         /* box at 2x */
    { 208, 100, 3, "104x50!", RF_LANCZOS3, false, NULL },  /* RGB 2x, no pre-shrink: 4 columns, 78 registers */
    { 1040, 24, 3, "260x6!", RF_LANCZOS3, true, NULL },    /* three workgroups across */
    { 64, 1000, 3, "16x250!", RF_MITCHELL, true, NULL },   /* many strips down */
    { 1040, 300, 4, "260x75!", RF_LANCZOS3, true, "32x6" },  /* small workgroups, 6 rows */
    { 1040, 300, 2, "25%", RF_CATROM, true, "64x12" },       /* gray + alpha, 12 rows */
    { 404, 200, 1, "202x100!", RF_LANCZOS3, false, "32x18" }, /* 2x, many workgroups across */
    { 9, 7, 4, "2x1!", RF_LANCZOS3, true, NULL },          /* one output row: another path */
    { 520, 130, 3, "52x13!", RF_LANCZOS3, true, NULL },    /* 10x: k = 5, 15 words a row: too many registers */
    { 133, 67, 3, "33x17!", RF_LANCZOS3, true, NULL },     /* rows not whole words: another path */
    { 97, 61, 3, "150%", RF_LANCZOS3, false, NULL },       /* not an integer factor: another path */
};
#define N_UNIFORM (sizeof uniform_cases / sizeof uniform_cases[0])

/* Runs uniform case i (8-bit and fmt2 outputs) under group and checks whether
 * the pass that *ran counts (reset here, counted by the log tap; what names it)
 * ran: all but the last four cases, which take another path. True where it ran. */
static bool run_uniform_case(vkimg_ctx *ctx, const char *group, size_t i, unsigned fmt2, int *ran, const char *what)
{
    const uniform_case *u = &uniform_cases[i];
    *ran = 0;
    rz(ctx, group, u->w, u->h, u->c, VKIMG_U8, FMT_U8 | fmt2, u->geo, u->f, false, u->fast);
    const bool other = i + 4 >= N_UNIFORM;
    CHECK(other ? *ran == 0 : *ran > 0, "resize=%s:filter=%s:fast=%d %dx%d c=%d: %s the %s", u->geo,
          ref_filter_names[u->f], u->fast, u->w, u->h, u->c, other ? "ran" : "did not run", what);
    return *ran > 0;
}

static void test_strip(vkimg_ctx *ctx)
{
    int nstrip = 0, ndp4 = 0;
    gh_log_tap = tap;
    setenv("VKIMG_RESIZE_PATH", "strip", 1);
    /* the cases with the block sums as dot products wherever the device has them
     * (VKIMG_RESIZE_STRIP_DP4=2: RGB whose blocks are 6 bytes wide, one column an
     * invocation), then the RGB cases again with the 16-bit lanes' sums (=0) and
     * with VKIMG_RESIZE_STRIP_HW=0 (two columns an invocation); half the cases of
     * the first two rounds with the rows shared out evenly among 7 strips
     * (VKIMG_RESIZE_STRIP_NY, where the device tells its multiprocessors: strips
     * of 35 and 36 rows for 250, fewer strips where they would be below U rows) */
    for (size_t n = 0; n < 3 * N_UNIFORM; n++) {
        const size_t i = n % N_UNIFORM, pass = n / N_UNIFORM;
        if (pass && uniform_cases[i].c != 3)
            continue;
        setenv("VKIMG_RESIZE_STRIP_DP4", pass == 0 ? "2" : "0", 1);
        if (pass == 2)
            setenv("VKIMG_RESIZE_STRIP_HW", "0", 1);
        if (uniform_cases[i].shape)
            setenv("VKIMG_RESIZE_STRIP", uniform_cases[i].shape, 1);
        if (pass < 2 && i % 2 == pass)
            setenv("VKIMG_RESIZE_STRIP_NY", "7", 1);
        ran_dp4 = 0;
        nstrip += run_uniform_case(ctx, G_STRIP, i, i % 2 ? FMT_F32 : FMT_U16, &ran_strip, "strip pass");
        ndp4 += ran_dp4 > 0;
        CHECK(pass || !ran_dp4 || uniform_cases[i].c == 3, "case %zu: dot products for %d channels", i,
              uniform_cases[i].c);
        unsetenv("VKIMG_RESIZE_STRIP");
        unsetenv("VKIMG_RESIZE_STRIP_HW");
        unsetenv("VKIMG_RESIZE_STRIP_NY");
    }
    unsetenv("VKIMG_RESIZE_STRIP_DP4");
    unsetenv("VKIMG_RESIZE_PATH");
    gh_log_tap = NULL;
    /* Vulkan 1.3 requires shaderIntegerDotProduct: there the dot products must have run */
    const char *v = strstr(vkimg_ctx_device_desc(ctx), "Vulkan ");
    int major = 0, minor = 0;
    if (v && sscanf(v, "Vulkan %d.%d", &major, &minor) == 2 && (major > 1 || minor >= 3))
        CHECK(ndp4 > 0, "VKIMG_RESIZE_STRIP_DP4=2 on a Vulkan %d.%d device: no strip pass used the dot products",
              major, minor);
    printf("  VKIMG_RESIZE_PATH=strip: %d runs made the strip pass, %d with the dot products\n", nstrip, ndp4);
}

/* VKIMG_RESIZE_PATH=lines (CPU devices' default where it fits, the same cases
 * as the strip pass): an invocation makes NB outputs of a row down R rows
 * from 16-byte vectors, no shared memory. The strip pass's cases (the same
 * four take another path), then every third again with NB 4 and 16
 * (VKIMG_RESIZE_LINES_NB) and workgroups of 8 invocations (VKIMG_RESIZE_LINES_WG):
 * windows that start 0-3 bytes into a word (SB), output rows that start
 * inside a word (33 RGB pixels a row), blocks cut by the right edge,
 * invocations whose window leaves the image (read byte by byte). */
static void test_lines(vkimg_ctx *ctx)
{
    static const char *const nbs[] = { NULL, "4", "16" };
    int nlines = 0;
    gh_log_tap = tap;
    setenv("VKIMG_RESIZE_PATH", "lines", 1);
    for (size_t v = 0; v < sizeof nbs / sizeof nbs[0]; v++)
        for (size_t i = 0; i < N_UNIFORM; i++) {
            if (v && i % 3)
                continue;
            if (nbs[v])
                setenv("VKIMG_RESIZE_LINES_NB", nbs[v], 1);
            if (uniform_cases[i].shape)
                setenv("VKIMG_RESIZE_LINES_WG", "8", 1);
            char what[40];
            snprintf(what, sizeof what, "lines pass (NB %s)", nbs[v] ? nbs[v] : "8");
            nlines += run_uniform_case(ctx, G_LINES, i, i % 2 ? FMT_U16 : FMT_F32, &ran_lines, what);
            unsetenv("VKIMG_RESIZE_LINES_NB");
            unsetenv("VKIMG_RESIZE_LINES_WG");
        }
    unsetenv("VKIMG_RESIZE_PATH");
    gh_log_tap = NULL;
    printf("  VKIMG_RESIZE_PATH=lines: %d runs made the lines pass\n", nlines);
}

/* VKIMG_RESIZE_PATH=vec (CPU devices' default for the 8-bit cases the lines
 * pass does not take: factors that are not integers, enlargements, linear
 * light): pass 5 makes 4 outputs of 16 rows an invocation from 64-bit words
 * moved into place (every start in 0 .. w - T: the taps past the edges folded
 * into the edge pixels by the host); pass 8 runs of 8 outputs of 4 rows,
 * every intermediate row their taps reach read once with a dense table of
 * weights (a column's last block its last 4 rows), or (VKIMG_RESIZE_SLIDE=0,
 * fewer than 4 output rows, nearest) pass 6 runs of 8 outputs of a row (a
 * row's last run its last 8, overlapping the one before). Both read their
 * input through texel buffers. Against the reference, with pass 8 and with
 * pass 6, and the same cases through the old two passes
 * (VKIMG_RESIZE_PATH=passes). Taps past both edges, inputs whose size is not
 * a multiple of 8 bytes (the last 64-bit word passes the end: buffers are
 * padded), 8 outputs a row exactly, T = w, rows of one pixel, 1-4 channels,
 * every filter, 16-bit and f32 intermediates (linear light); then cases that
 * take another path: T > w, fewer than 8 outputs a row, 16-bit input, a
 * pre-shrink. */
static void test_vec(vkimg_ctx *ctx)
{
    static const struct {
        int w, h, c;
        vkimg_fmt in;
        const char *geo;
        ref_filter f;
        bool linear, fast, vec, vslide;
    } cs[] = {
        { 37, 5, 1, VKIMG_U8, "17x3!", RF_LANCZOS3, false, false, true, false },   /* 185 bytes */
        { 97, 61, 3, VKIMG_U8, "150%", RF_LANCZOS3, false, true, true, true },    /* enlarged */
        { 131, 67, 4, VKIMG_U8, "53x29!", RF_MITCHELL, false, true, true, true }, /* alpha */
        { 64, 33, 2, VKIMG_U8, "45x20!", RF_CATROM, false, true, true, true },
        { 9, 7, 3, VKIMG_U8, "8x7!", RF_LANCZOS3, false, true, true, true },      /* 8 outputs, T = 8 */
        { 20, 9, 4, VKIMG_U8, "13x5!", RF_BILINEAR, false, true, true, true },
        { 1000, 40, 3, VKIMG_U8, "333x13!", RF_LANCZOS3, false, true, true, true }, /* T = 20, 333 = 41 runs + 5 */
        { 300, 200, 1, VKIMG_U8, "130x87!", RF_BOX, false, true, true, true },
        { 50, 30, 3, VKIMG_U8, "23x19!", RF_NEAREST, false, true, true, false },
        { 131, 67, 3, VKIMG_U8, "71x40!", RF_LANCZOS2, true, true, true, true },  /* linear: f32 between */
        { 7, 5, 3, VKIMG_U8, "16x9!", RF_LANCZOS3, false, true, true, true },     /* T = w = 7 */
        { 50, 1, 3, VKIMG_U8, "20x1!", RF_LANCZOS3, false, true, true, false },    /* one row */
        { 61, 3, 4, VKIMG_U8, "29x40!", RF_CATROM, true, true, true, true },      /* linear, alpha */
        { 750, 9, 1, VKIMG_U8, "100x9!", RF_LANCZOS2, false, false, true, true }, /* T = 30 */
        { 750, 9, 4, VKIMG_U8, "100x9!", RF_LANCZOS2, false, false, true, true }, /* T = 30 of RGBA */
        { 203, 4, 2, VKIMG_U8, "613x3!", RF_CATROM, false, true, true, false },    /* 3x enlarged, 3 rows: pass 6 */
        { 5, 9, 3, VKIMG_U8, "9x4!", RF_LANCZOS3, false, true, false, false },     /* T = 8 > w: passes */
        { 40, 10, 3, VKIMG_U8, "7x5!", RF_LANCZOS3, false, true, false, false },   /* 7 outputs a row */
        { 97, 61, 3, VKIMG_U16, "53x29!", RF_LANCZOS3, false, true, false, false },
        { 400, 61, 3, VKIMG_U8, "53x29!", RF_LANCZOS3, false, true, false, false }, /* 7.5x: pre-shrunk */
    };
    int nvec = 0, nvslide = 0;
    gh_log_tap = tap;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int p = 0; p < 3; p++) { /* vec, passes, vec with pass 6 */
            setenv("VKIMG_RESIZE_PATH", p == 1 ? "passes" : "vec", 1);
            setenv("VKIMG_RESIZE_SLIDE", p == 2 ? "0" : "1", 1);
            ran_vec = ran_vslide = 0;
            char t[160];
            snprintf(t, sizeof t, "resize=%s:filter=%s:linear=%s:fast=%s", cs[i].geo, ref_filter_names[cs[i].f],
                     cs[i].linear ? "true" : "false", cs[i].fast ? "true" : "false");
            ref_resize_args a = { cs[i].geo, { cs[i].f, cs[i].linear, cs[i].fast } };
            ref_step s[] = { RESIZE(&a) };
            run_rand(ctx, p == 1 ? G_VEC_OLD : G_VEC, t, s, 1, cs[i].w, cs[i].h, cs[i].c, cs[i].in,
                     FMT_U8 | (i % 2 ? FMT_F32 : FMT_U16), -1);
            /* (the vec passes read texel buffers: devices that take them, ctx->gpu.texel) */
            const bool vec = cs[i].vec && ctx->gpu.texel;
            CHECK((ran_vec > 0) == (p != 1 && vec), "'%s' %dx%d c=%d: VKIMG_RESIZE_PATH=%s %s the vec passes", t,
                  cs[i].w, cs[i].h, cs[i].c, p == 1 ? "passes" : "vec", ran_vec ? "ran" : "did not run");
            CHECK((ran_vslide > 0) == (p == 0 && vec && cs[i].vslide), "'%s' %dx%d c=%d: VKIMG_RESIZE_SLIDE=%d %s pass 8",
                  t, cs[i].w, cs[i].h, cs[i].c, p != 2, ran_vslide ? "ran" : "did not run");
            nvec += ran_vec > 0;
            nvslide += ran_vslide > 0;
        }
    unsetenv("VKIMG_RESIZE_PATH");
    unsetenv("VKIMG_RESIZE_SLIDE");
    gh_log_tap = NULL;
    printf("  VKIMG_RESIZE_PATH=vec: %d runs made the vec passes, %d of them pass 8\n", nvec, nvslide);
}

/* Very large factors: a constant image stays that constant (every filter's
 * weights sum to 1) down to a pixel, through the fast path's pre-shrink, whose
 * blocks are capped (lavapipe ends all the loops of an invocation after 65535
 * iterations: 1024 -> 1 made blocks of 512 x 512 and came out at a quarter),
 * and the exact path's 1024 x 1024 region of taps. */
static void test_huge_factors(vkimg_ctx *ctx)
{
    static const char *const texts[] = { "resize=1x1!", "resize=1x1!:filter=box", "thumbnail=3",
                                         "resize=1x1!:fast=false:filter=bilinear" };
    const int w = 1024, h = 1024, c = 3;
    vkimg_image in = ref_random_image(w, h, c, VKIMG_U8, run_next_seed++);
    uint8_t *px = in.data;
    for (size_t i = 0; i < (size_t)w * h; i++) {
        px[3 * i] = 200;
        px[3 * i + 1] = 100;
        px[3 * i + 2] = 50;
    }
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        vkimg_image out;
        memset(&out, 0, sizeof out);
        run_u8(ctx, texts[t], &in, &out);
        const uint8_t *o = out.data;
        int bad = 0;
        for (size_t i = 0; o && i < (size_t)out.w * out.h; i++)
            bad += o[3 * i] != 200 || o[3 * i + 1] != 100 || o[3 * i + 2] != 50;
        CHECK(o && bad == 0, "'%s' on a constant %dx%d image: %d of %d pixels changed (first %u,%u,%u)", texts[t], w,
              h, bad, out.w * out.h, o ? o[0] : 0, o ? o[1] : 0, o ? o[2] : 0);
        vkimg_image_free(&out);
    }
    ref_image_free(&in);
}

/* ---------------------------------------------------------------- chains */

/* Sizes that change from op to op: the composition of the references. */
static void test_chains(vkimg_ctx *ctx)
{
    ref_resize_args half = { "50%", { RF_LANCZOS3, false, true } }, up = { "37x23!", { RF_CATROM, false, false } };
    ref_resize_args back = { "131x67!", { RF_MITCHELL, true, false } };
    {
        ref_step s[] = { RESIZE(&half), BLUR(1.0, -1) };
        for (int c = 1; c <= 4; c += 3)
            run_rand(ctx, G_CHAIN, "resize=50%,blur=1", s, 2, 131, 67, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
    }
    {
        ref_step s[] = { GRAY(0), RESIZE(&up), BLUR(1.5, -1), RESIZE(&back) };
        const char *t = "gray,resize=37x23!:filter=catrom:fast=false,blur=1.5,"
                        "resize=131x67!:filter=mitchell:linear=true:fast=false";
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_CHAIN, t, s, 4, 64, 48, c, in_fmts[c % 3], fmts_of(c), -1);
        run_rand(ctx, G_CHAIN, t, s, 4, 1, 1, 4, VKIMG_U8, FMT_ALL, -1);
    }
}

int main(void)
{
    static const gh_suite suites[] = {
        { "ties", test_ties },       { "unchanged", test_unchanged }, { "paths", test_paths }, { "strip", test_strip },
        { "lines", test_lines },     { "vec", test_vec },
        { "huge", test_huge_factors },
        { "filters", test_filters }, { "fast", test_fast },           { "linear", test_linear },
        { "geometry", test_geometry }, { "chains", test_chains },
    };
    run_next_seed = 7001;
    ref_alpha_weighted = true; /* colour / alpha is unbounded (negative lobes): ref.h */
    return gh_main("test_resize", suites, sizeof suites / sizeof suites[0]);
}
