/* equalize on the device against its reference (equalize_ref.h), on integer
 * levels: bit-exact for 8- and 16-bit images, constant channels unchanged. */
#include "equalize_ref.h"
#include "gpu_harness.h"
#include "levels.h"

#include <stdint.h>
#include <stdlib.h>

#define S_EQUALIZE "equalize"

static void equalize_case(vkimg_ctx *ctx, const vkimg_image *in)
{
    vkimg_image out;
    if (!lv_run(ctx, "equalize", in, in->fmt, &out)) {
        uint32_t *q = lv_levels(in), *ex = gh_calloc(lv_nsamples(in), sizeof *ex);
        ref_equalize(q, in->w, in->h, in->c, lv_max(in->fmt), lv_max(in->fmt), ex);
        lv_check_exact(S_EQUALIZE, &out, in->w, in->h, in->c, in->fmt, ex);
        free(q);
        free(ex);
    }
    vkimg_image_free(&out);
}

static void test_equalize(vkimg_ctx *ctx)
{
    int v = 0;
    for (int i = 0; i < LV_NSIZES; i++) {
        int cs[4], nc = lv_chans(i, 2, cs);
        for (int j = 0; j < nc; j++, v++) {
            /* narrow, skewed ranges per channel, bimodal or uniform */
            const uint32_t lo[4] = { 40, 10, 100, 0 }, hi[4] = { 120, 250, 140, 255 };
            vkimg_image in = lv_image(lv_sizes[i].w, lv_sizes[i].h, cs[j], VKIMG_U8, v % 2 ? D_BIMODAL : D_UNIFORM, lo,
                                        hi, false);
            equalize_case(ctx, &in);
            vkimg_image_free(&in);
        }
    }
    /* constant colour: unchanged (alpha random) */
    for (int c = 1; c <= 4; c++) {
        const uint32_t lo[4] = { 200, 200, 200, 0 }, hi[4] = { 200, 200, 200, 255 };
        uint32_t l2[4] = { 200, 0 }, h2[4] = { 200, 255 };
        vkimg_image in = lv_image(131, 67, c, VKIMG_U8, D_UNIFORM, c == 2 ? l2 : lo, c == 2 ? h2 : hi, false);
        equalize_case(ctx, &in);
        vkimg_image_free(&in);
    }
    /* one channel constant, the others not */
    {
        const uint32_t lo[4] = { 30, 5, 5, 0 }, hi[4] = { 90, 5, 250, 255 };
        vkimg_image in = lv_image(257, 129, 4, VKIMG_U8, D_BIMODAL, lo, hi, false);
        equalize_case(ctx, &in);
        vkimg_image_free(&in);
    }
    /* 16-bit: bins q >> 8, output lut * 257 */
    for (int c = 1; c <= 4; c += 3) {
        vkimg_image in = lv_full(131, 67, c, VKIMG_U16, D_BIMODAL);
        equalize_case(ctx, &in);
        vkimg_image_free(&in);
    }
}

/* the per-pixel shape and the CPU shape (runs) wherever the tests run: the
 * same cases again with each (gpu_harness.h gh_shapes) */
static void test_equalize_shapes(vkimg_ctx *ctx)
{
    gh_shapes(ctx, test_equalize, "equalize-hist-runs");
}

int main(void)
{
    static const gh_suite suites[] = { { "equalize", test_equalize }, { "shapes", test_equalize_shapes } };
    lv_seed = 0x67839ac123d4e73ull; /* any seed; this one gives the images of the former test_ops_sat.c */
    return gh_main("test_equalize", suites, 2);
}
