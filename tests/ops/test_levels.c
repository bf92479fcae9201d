/* levels (ImageMagick's -level black,white,gamma) on the device against its
 * double-precision reference (levels_ref.h): every awkward size, channel count
 * and format in and out, the options by name, by position and by default, and
 * black/white/gamma from gentle to extreme (tolerances: tests/lib/run_ref.h). */
#include "gpu_harness.h"
#include "levels_ref.h"
#include "run_ref.h"
#include "t.h"

#include <stdint.h>
#include <stdio.h>

#define G_LEVELS "levels"

/* The parameter sets, each with its own spelling. */
static const struct {
    const char *text;
    double black, white, gamma;
} sets[] = {
    { "levels", 0, 1, 1 },                                   /* the defaults: clamps HDR values only */
    { "levels=0.1:0.9", 0.1, 0.9, 1 },                       /* positional */
    { "levels=black=0.2:white=0.8:gamma=2.2", 0.2, 0.8, 2.2 },
    { "levels=gamma=0.5", 0, 1, 0.5 },
    { "levels = white = 0.5 : gamma = 3", 0, 0.5, 3 },
    { "levels=0.25:0.26", 0.25, 0.26, 1 },                   /* steep: most samples clamp */
    { "levels=0.05:1:0.25", 0.05, 1, 0.25 },
    { "levels=gamma=8:black=0.3", 0.3, 1, 8 },
    { "levels=0.999:1", 0.999, 1, 1 },
    { "levels=0:1e-3", 0, 1e-3, 1 },
    { "levels=black=0.2:gamma=8", 0.2, 1, 8 },               /* 0.2 is 8-bit 51 and 16-bit 13107 */
};
#define NSETS ((int)(sizeof sets / sizeof sets[0]))

static void test_levels(vkimg_ctx *ctx)
{
    int rf = ref_levels_self_check();
    CHECK(rf == 0, "levels reference self-check: %d failures", rf);
    ref_step s[NSETS][1];
    for (int k = 0; k < NSETS; k++) {
        ref_step st = LEVELS(ref_levels_params(sets[k].black, sets[k].white, sets[k].gamma));
        s[k][0] = st;
    }
    /* every size and channel count, u8 in; the sets in turn */
    int v = 0;
    for (int i = 0; i < OP_NSIZES; i++)
        for (int c = 1; c <= 4; c++, v++)
            run_rand(ctx, G_LEVELS, sets[v % NSETS].text, s[v % NSETS], 1, op_sizes[i].w, op_sizes[i].h, c, VKIMG_U8,
                     op_sizes[i].w * op_sizes[i].h > 100000 ? (c % 2 ? FMT_U8 : FMT_U16) : FMT_ALL, -1);
    /* every set on u8, u16 and f32 (HDR values above 1) in, every format out */
    static const vkimg_fmt in_fmts[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
    for (int k = 0; k < NSETS; k++)
        for (int f = 0; f < 3; f++)
            run_rand(ctx, G_LEVELS, sets[k].text, s[k], 1, 17 + 2 * k, 13, 1 + (k + f) % 4, in_fmts[f], FMT_ALL, -1);
    /* after and before other ops (f32 in between) */
    const ref_step chain[2] = { s[2][0], s[6][0] };
    run_rand(ctx, G_LEVELS, "levels=black=0.2:white=0.8:gamma=2.2,levels=0.05:1:0.25", chain, 2, 131, 67, 4,
             VKIMG_U16, FMT_ALL, -1);
    /* every level of 8 and 16 bits, with black and white on levels (0.2 = 51/255 =
     * 13107/65535, 0.6 = 153/255 = 39321/65535): exactly 0 and 1 there, also with a
     * gamma that makes any float error at black visible */
    {
        static uint8_t r8[256 * 2];
        static uint16_t r16[256 * 256];
        for (int i = 0; i < 256; i++)
            r8[2 * i] = r8[2 * i + 1] = (uint8_t)i;
        for (int i = 0; i < 256 * 256; i++)
            r16[i] = (uint16_t)i;
        const vkimg_image ramp8 = ref_wrap(256, 1, 2, VKIMG_U8, r8), ramp16 = ref_wrap(256, 256, 1, VKIMG_U16, r16);
        static const struct { const char *text; double black, white, gamma; } at[] = {
            { "levels=0.2:0.6:8", 0.2, 0.6, 8 },
            { "levels=0.2:0.6:0.125", 0.2, 0.6, 0.125 },
            { "levels=0.2:0.6:2.2", 0.2, 0.6, 2.2 },
            { "levels=0.6:1:100", 0.6, 1, 100 },
        };
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
            const ref_step st[1] = { LEVELS(ref_levels_params(at[k].black, at[k].white, at[k].gamma)) };
            run_case(ctx, G_LEVELS, at[k].text, st, 1, &ramp8, FMT_ALL, -1);
            run_case(ctx, G_LEVELS, at[k].text, st, 1, &ramp16, FMT_ALL, -1);
        }
    }
    /* full HD */
    run_rand(ctx, G_LEVELS, sets[2].text, s[2], 1, 1920, 1080, 3, VKIMG_U8, FMT_U8, -1);
    run_rand(ctx, G_LEVELS, sets[7].text, s[7], 1, 1920, 1080, 4, VKIMG_U8, FMT_U8, -1);
}

/* the per-pixel shape and the CPU shape (runs) wherever the tests run: the
 * same cases again with each (gpu_harness.h gh_shapes) */
static void test_levels_shapes(vkimg_ctx *ctx)
{
    gh_shapes(ctx, test_levels, "levels-runs");
}

int main(void)
{
    static const gh_suite suites[] = { { "levels", test_levels }, { "shapes", test_levels_shapes } };
    return gh_main("test_levels", suites, 2);
}
