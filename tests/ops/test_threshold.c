/* threshold (mode=value, adaptive, otsu) on the device against its references
 * (threshold_ref.h), on integer levels: bit-exact, including a tie in Otsu's
 * criterion and 16-bit images whose adaptive tables wrap or need uint64. */
#include "gpu_harness.h"
#include "levels.h"
#include "t.h"
#include "threshold_ref.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_THR_VALUE "threshold=value"
#define S_THR_ADAPTIVE "threshold=adaptive"
#define S_THR_OTSU "threshold=otsu"

static void thr_value_case(vkimg_ctx *ctx, double value, const vkimg_image *in)
{
    char t[64];
    snprintf(t, sizeof t, "threshold=mode=value:value=%.17g", value);
    vkimg_image out;
    if (!lv_run(ctx, t, in, in->fmt, &out)) {
        uint32_t *q = lv_levels(in), *ex = gh_calloc(lv_nsamples(in), sizeof *ex);
        ref_threshold_value(q, in->w, in->h, in->c, lv_max(in->fmt), value, ex);
        lv_check_exact(S_THR_VALUE, &out, in->w, in->h, in->c, in->fmt, ex);
        free(q);
        free(ex);
    }
    vkimg_image_free(&out);
}

static void thr_adaptive_case(vkimg_ctx *ctx, int r, int offset, const vkimg_image *in)
{
    char t[80];
    snprintf(t, sizeof t, "threshold=mode=adaptive:radius=%d:offset=%d", r, offset);
    vkimg_image out;
    if (!lv_run(ctx, t, in, in->fmt, &out)) {
        uint32_t *q = lv_levels(in), *ex = gh_calloc(lv_nsamples(in), sizeof *ex);
        ref_threshold_adaptive(q, in->w, in->h, in->c, lv_max(in->fmt), r, offset, ex);
        lv_check_exact(S_THR_ADAPTIVE, &out, in->w, in->h, in->c, in->fmt, ex);
        free(q);
        free(ex);
    }
    vkimg_image_free(&out);
}

static void thr_otsu_case(vkimg_ctx *ctx, const char *text, const vkimg_image *in, bool expect_black)
{
    vkimg_image out;
    if (!lv_run(ctx, text, in, in->fmt, &out)) {
        uint32_t *q = lv_levels(in), *ex = gh_calloc(lv_nsamples(in), sizeof *ex);
        int thr[4];
        ref_otsu_thresholds(q, in->w, in->h, in->c, lv_max(in->fmt), thr);
        ref_threshold_apply_bins(q, in->w, in->h, in->c, lv_max(in->fmt), thr, ex);
        if (expect_black) { /* a constant colour channel: all black */
            int cc = ref_colour(in->c), white = 0;
            for (size_t p = 0; p < (size_t)in->w * in->h; p++)
                for (int k = 0; k < cc; k++)
                    white += ex[p * in->c + k] != 0;
            CHECK(white == 0, "otsu reference: constant image gives %d white samples", white);
        }
        lv_check_exact(S_THR_OTSU, &out, in->w, in->h, in->c, in->fmt, ex);
        free(q);
        free(ex);
    }
    vkimg_image_free(&out);
}

static void test_threshold(vkimg_ctx *ctx)
{
    static const double values[] = { 0.3, 0.5, 0.0, 1.0, 0.75, 0.123 };
    static const struct { int r, off; } ad[] = { { 1, 0 }, { 3, 15 }, { 15, 15 }, { 50, 50 }, { 7, 100 } };
    int v = 0;
    for (int i = 0; i < LV_NSIZES; i++) {
        int cs[4], nc = lv_chans(i, i, cs);
        for (int j = 0; j < nc; j++, v++) {
            int w = lv_sizes[i].w, h = lv_sizes[i].h, c = cs[j];
            vkimg_image in = lv_full(w, h, c, VKIMG_U8, D_UNIFORM);
            thr_value_case(ctx, values[v % 6], &in);
            thr_adaptive_case(ctx, ad[v % 5].r, ad[v % 5].off, &in);
            vkimg_image_free(&in);
            in = lv_full(w, h, c, VKIMG_U8, v % 2 ? D_BIMODAL : D_UNIFORM);
            thr_otsu_case(ctx, v % 3 ? "threshold=otsu" : "threshold=mode=otsu", &in, false);
            vkimg_image_free(&in);
        }
    }
    /* the default value is 0.5 */
    {
        vkimg_image in = lv_full(17, 13, 4, VKIMG_U8, D_UNIFORM);
        vkimg_image out;
        if (!lv_run(ctx, "threshold", &in, VKIMG_U8, &out)) {
            uint32_t *q = lv_levels(&in), *ex = gh_calloc(lv_nsamples(&in), sizeof *ex);
            ref_threshold_value(q, 17, 13, 4, 255, 0.5, ex);
            lv_check_exact(S_THR_VALUE, &out, 17, 13, 4, VKIMG_U8, ex);
            free(q);
            free(ex);
        }
        vkimg_image_free(&out);
        vkimg_image_free(&in);
    }
    /* Otsu of a constant colour image: threshold = its value, all black; the
     * alpha channel (random) is copied */
    for (int c = 1; c <= 4; c++) {
        const uint32_t lo[4] = { 77, 77, 77, 0 }, hi[4] = { 77, 77, 77, 255 };
        uint32_t l2[4] = { 77, 0 }, h2[4] = { 77, 255 };
        vkimg_image in = lv_image(131, 67, c, VKIMG_U8, D_UNIFORM, c == 2 ? l2 : lo, c == 2 ? h2 : hi, false);
        thr_otsu_case(ctx, "threshold=otsu", &in, true);
        vkimg_image_free(&in);
    }
    /* An exact tie in Otsu's criterion: three equally spaced, equally frequent
     * levels a < b < c give the same between-class variance for t = a and
     * t = b; the first maximum wins, so b and c are white (2/3 of the samples). */
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = lv_full(129, 67, c, VKIMG_U8, D_UNIFORM); /* 8643 = 3 * 2881 pixels */
        int cc = ref_colour(c);
        for (size_t p = 0; p < (size_t)129 * 67; p++)
            for (int k = 0; k < cc; k++)
                ((uint8_t *)in.data)[p * c + k] = (uint8_t)(40 + k + 60 * (int)((p + (size_t)k) % 3));
        uint32_t *q = lv_levels(&in), *ex = gh_calloc(lv_nsamples(&in), sizeof *ex);
        int thr[4];
        ref_otsu_thresholds(q, 129, 67, c, 255, thr);
        for (int k = 0; k < cc; k++)
            CHECK(thr[k] == 40 + k, "otsu reference: tie case channel %d: threshold %d, expected %d (first maximum)",
                  k, thr[k], 40 + k);
        free(q);
        free(ex);
        thr_otsu_case(ctx, "threshold=otsu", &in, false);
        vkimg_image_free(&in);
    }
    /* 16-bit: value, adaptive (32-bit table that wraps; and the uint64 table),
     * Otsu on bins q >> 8 */
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = lv_full(131, 67, c, VKIMG_U16, c % 2 ? D_UNIFORM : D_BIMODAL);
        thr_value_case(ctx, values[c], &in);
        thr_adaptive_case(ctx, 2 * c + 1, 10 * c, &in);
        thr_otsu_case(ctx, "threshold=otsu", &in, false);
        vkimg_image_free(&in);
    }
    {
        vkimg_image in = lv_full(1100, 1030, 1, VKIMG_U16, D_BIMODAL);
        thr_adaptive_case(ctx, 15, 10, &in);
        thr_otsu_case(ctx, "threshold=otsu", &in, false);
        vkimg_image_free(&in);
        const uint32_t lo[4] = { 58000, 0 }, hi[4] = { 65535, 65535 };
        in = lv_image(300, 300, 2, VKIMG_U16, D_UNIFORM, lo, hi, false);
        thr_adaptive_case(ctx, 200, 5, &in);
        thr_adaptive_case(ctx, 200, 0, &in);
        vkimg_image_free(&in);
    }
}

/* the per-pixel shape and the CPU shape (runs) wherever the tests run: the
 * same cases again with each (gpu_harness.h gh_shapes) */
static void test_threshold_shapes(vkimg_ctx *ctx)
{
    gh_shapes(ctx, test_threshold, "threshold-hist-runs");
}

/* mode=adaptive's last pass in both shapes (VKIMG_ADAPTIVE_LINES=0 / 1: the
 * per-pixel one, and strips of whole windows with the pixels around them), 8-
 * and 16-bit, 1-4 channels (alpha copied), radii from 1 to past the image; which
 * dispatches ran is read from the library's log. */
static void test_adaptive_shapes(vkimg_ctx *ctx)
{
    static const size2 ss[] = { { 1, 1 }, { 7, 3 }, { 9, 9 }, { 26, 5 }, { 31, 29 }, { 131, 67 }, { 300, 41 } };
    static const int radii[] = { 1, 2, 4, 15 };
    for (int lines = 0; lines < 2; lines++) {
        setenv("VKIMG_ADAPTIVE_LINES", lines ? "1" : "0", 1);
        for (size_t i = 0; i < sizeof ss / sizeof ss[0]; i++)
            for (int c = 1; c <= 4; c++) {
                const int r = radii[(i + (size_t)c) % 4];
                vkimg_image in = lv_full(ss[i].w, ss[i].h, c, (i + (size_t)c) % 3 ? VKIMG_U8 : VKIMG_U16, D_UNIFORM);
                gh_dispatches_start();
                thr_adaptive_case(ctx, r, (int)(i * 7 + (size_t)c) % 30, &in);
                gh_dispatches_stop();
                const int ran_strips = gh_dispatched("threshold-lines"), ran_px = gh_dispatched("threshold"),
                          ran_edge = gh_dispatched("threshold-lines-edge");
                const int nx = ss[i].w - 2 * r - 1, ny = ss[i].h - 2 * r - 1;
                const bool strips = nx > 0 && ny > 0 && nx * c >= (c == 3 ? 24 : 8);
                CHECK(lines ? ran_px == 0 && (ran_strips > 0) == strips && ran_edge > 0
                            : ran_px == 1 && ran_strips + ran_edge == 0,
                      "adaptive r=%d %dx%d c=%d, lines %d: the strips ran %d times, their edges %d, the pixels %d", r,
                      ss[i].w, ss[i].h, c, lines, ran_strips, ran_edge, ran_px);
                vkimg_image_free(&in);
            }
    }
    unsetenv("VKIMG_ADAPTIVE_LINES");
}

int main(void)
{
    static const gh_suite suites[] = { { "threshold", test_threshold },
                                       { "shapes", test_threshold_shapes },
                                       { "adaptive", test_adaptive_shapes } };
    lv_seed = 0x25f528f4d7188a75ull; /* any seed; this one gives the images of the former test_ops_sat.c */
    return gh_main("test_threshold", suites, 3);
}
