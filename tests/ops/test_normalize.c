/* normalize on the device against its double-precision reference
 * (normalize_ref.h): float on the device, so <= 1 LSB of
 * round((v - min) / (max - min) * 255), <= 0.51 LSB from the unrounded value,
 * and constant channels (and alpha) exactly unchanged. */
#include "gpu_harness.h"
#include "levels.h"
#include "normalize_ref.h"
#include "t.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define S_NORMALIZE "normalize"

/* Channel ranges that do not span 0..255, different per channel; channel 2
 * constant; alpha anything. */
static vkimg_image normalize_image(int w, int h, int c, bool constant_gray)
{
    uint32_t lo[4] = { 40, 60, 97, 0 }, hi[4] = { 180, 200, 97, 255 };
    if (c == 2) {
        lo[1] = 0;
        hi[1] = 255;
    }
    if (constant_gray)
        lo[0] = hi[0] = 123;
    return lv_image(w, h, c, VKIMG_U8, D_UNIFORM, lo, hi, false);
}

/* Against the unrounded reference: a correctly rounded result is within 0.5
 * LSB plus the kernel's float error (~1e-4 LSB); a biased rounding
 * (truncation, floor(x + 0.4)) is caught here although within 1 LSB. */
static double normalize_max_raw;
static void normalize_raw(const vkimg_image *out, const double *r)
{
    if (!out->data || out->fmt != VKIMG_U8)
        return;
    double mx = 0;
    size_t n = lv_nsamples(out), at = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)lv_sample(out, i) - r[i]);
        if (d > mx) {
            mx = d;
            at = i;
        }
    }
    CHECK(mx <= 0.51, "[%s] normalize: %.4f LSB from the unrounded reference (%.6f) at sample %zu (limit 0.51)",
          cur_case, mx, r[at], at);
    if (mx > normalize_max_raw)
        normalize_max_raw = mx;
}

static void normalize_case(vkimg_ctx *ctx, int link, const vkimg_image *in)
{
    char t[64];
    snprintf(t, sizeof t, link ? "normalize=link=1" : "normalize=link=0");
    vkimg_image out;
    if (!lv_run(ctx, t, in, VKIMG_U8, &out)) {
        size_t n = lv_nsamples(in);
        double *v = lv_normalized(in), *r = gh_calloc(n, sizeof *r);
        ref_normalize(v, in->w, in->h, in->c, link, r);
        for (size_t i = 0; i < n; i++)
            r[i] *= 255.0;
        lv_check(S_NORMALIZE, &out, in->w, in->h, in->c, VKIMG_U8, r, NULL, NULL, 1.0);
        normalize_raw(&out, r);
        /* a constant channel (and alpha) must be unchanged: exact */
        if (out.data && out.c == in->c && out.fmt == VKIMG_U8)
            for (size_t i = 0; i < n; i++)
                if (fabs(r[i] - 255.0 * v[i]) == 0 && lv_sample(&out, i) != lv_sample(in, i)) {
                    CHECK(0, "[%s] normalize: unchanged sample %zu (channel %zu) became %llu, was %llu", cur_case, i,
                          i % (size_t)in->c, (unsigned long long)lv_sample(&out, i),
                          (unsigned long long)lv_sample(in, i));
                    break;
                }
        free(v);
        free(r);
    }
    vkimg_image_free(&out);
}

static void test_normalize(vkimg_ctx *ctx)
{
    for (int i = 0; i < LV_NSIZES; i++) {
        int cs[4], nc = lv_chans(i, 1, cs);
        for (int j = 0; j < nc; j++)
            for (int link = 0; link <= 1; link++) {
                vkimg_image in = normalize_image(lv_sizes[i].w, lv_sizes[i].h, cs[j], false);
                normalize_case(ctx, link, &in);
                vkimg_image_free(&in);
            }
    }
    /* "normalize" alone is link=0; all colour channels constant */
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = normalize_image(131, 67, c, false);
        vkimg_image out;
        if (!lv_run(ctx, "normalize", &in, VKIMG_U8, &out)) {
            size_t n = lv_nsamples(&in);
            double *v = lv_normalized(&in), *r = gh_calloc(n, sizeof *r);
            ref_normalize(v, 131, 67, c, 0, r);
            for (size_t k = 0; k < n; k++)
                r[k] *= 255.0;
            lv_check(S_NORMALIZE, &out, 131, 67, c, VKIMG_U8, r, NULL, NULL, 1.0);
            normalize_raw(&out, r);
            free(v);
            free(r);
        }
        vkimg_image_free(&out);
        vkimg_image_free(&in);
        const uint32_t lo[4] = { 123, 123, 123, 0 }, hi[4] = { 123, 123, 123, 255 };
        uint32_t l2[4] = { 123, 0 }, h2[4] = { 123, 255 };
        in = lv_image(57, 31, c, VKIMG_U8, D_UNIFORM, c == 2 ? l2 : lo, c == 2 ? h2 : hi, false);
        normalize_case(ctx, c % 2, &in);
        vkimg_image_free(&in);
    }
    printf("  normalize before rounding: max %.4f LSB (off by 1 only at ties)\n", normalize_max_raw);
}

/* the per-pixel shape and the CPU shape (runs) wherever the tests run: the
 * same cases again with each (gpu_harness.h gh_shapes) */
static void test_normalize_shapes(vkimg_ctx *ctx)
{
    gh_shapes(ctx, test_normalize, "normalize-runs");
}

int main(void)
{
    static const gh_suite suites[] = { { "normalize", test_normalize }, { "shapes", test_normalize_shapes } };
    lv_seed = 0x2773b80d007220a3ull; /* any seed; this one gives the images of the former test_ops_sat.c */
    return gh_main("test_normalize", suites, 2);
}
