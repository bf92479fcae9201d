/* boxblur on the device against its reference (boxblur_ref.h), on integer
 * levels: bit-exact, also where the 32-bit table wraps and where box sums
 * exceed 2^32. */
#include "boxblur_ref.h"
#include "gpu_harness.h"
#include "levels.h"
#include "t.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_BOXBLUR "boxblur"

static void boxblur_case(vkimg_ctx *ctx, const char *text, int r, const vkimg_image *in)
{
    vkimg_image out;
    if (!lv_run(ctx, text, in, in->fmt, &out)) {
        uint32_t *q = lv_levels(in), *ex = gh_calloc(lv_nsamples(in), sizeof *ex);
        ref_boxblur(q, in->w, in->h, in->c, r, ex);
        lv_check_exact(S_BOXBLUR, &out, in->w, in->h, in->c, in->fmt, ex);
        free(q);
        free(ex);
    }
    vkimg_image_free(&out);
}

/* ref_box_sums (separable) against brute force. */
static void box_self_check(void)
{
    static const size2 s[] = { { 1, 1 }, { 1, 9 }, { 9, 1 }, { 3, 5 }, { 17, 13 }, { 40, 7 } };
    static const int radii[] = { 0, 1, 2, 5, 20 };
    int bad = 0;
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        for (size_t j = 0; j < sizeof radii / sizeof radii[0]; j++) {
            int w = s[i].w, h = s[i].h, c = 1 + (int)(i + j) % 4;
            size_t n = (size_t)w * h * c;
            uint32_t *q = gh_calloc(n, sizeof *q);
            uint64_t *a = gh_calloc(n, sizeof *a), *b = gh_calloc(n, sizeof *b);
            for (size_t k = 0; k < n; k++)
                q[k] = (uint32_t)(t_rand(&lv_seed) >> 48);
            ref_box_sums(q, w, h, c, radii[j], a);
            ref_box_sums_brute(q, w, h, c, radii[j], b);
            bad += memcmp(a, b, n * sizeof *a) != 0;
            free(q);
            free(a);
            free(b);
        }
    CHECK(bad == 0, "reference self-check: separable box sums differ from brute force in %d cases", bad);
}

static void test_boxblur(vkimg_ctx *ctx)
{
    box_self_check();
    static const int radii[] = { 0, 1, 2, 7, 50 };
    char t[64];
    for (int ri = 0; ri < 5; ri++) {
        int r = radii[ri];
        for (int i = 0; i < LV_NSIZES; i++) {
            int cs[4], nc = lv_chans(i, ri, cs);
            for (int j = 0; j < nc; j++) {
                /* both spellings: positional and radius= */
                snprintf(t, sizeof t, (i + j) % 2 ? "boxblur=%d" : "boxblur=radius=%d", r);
                vkimg_image in = lv_full(lv_sizes[i].w, lv_sizes[i].h, cs[j], VKIMG_U8, D_UNIFORM);
                boxblur_case(ctx, t, r, &in);
                vkimg_image_free(&in);
            }
        }
    }
    /* the default radius is 1 */
    {
        vkimg_image in = lv_full(17, 13, 3, VKIMG_U8, D_UNIFORM);
        boxblur_case(ctx, "boxblur", 1, &in);
        vkimg_image_free(&in);
    }
    /* 16-bit input, 16-bit output */
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = lv_full(131, 67, c, VKIMG_U16, D_UNIFORM);
        snprintf(t, sizeof t, "boxblur=%d", c == 4 ? 50 : c);
        boxblur_case(ctx, t, c == 4 ? 50 : c, &in);
        vkimg_image_free(&in);
    }
    {
        /* the 32-bit table wraps (total ~7e10), the boxes fit: modular arithmetic */
        vkimg_image in = lv_full(1100, 1030, 1, VKIMG_U16, D_UNIFORM);
        boxblur_case(ctx, "boxblur=7", 7, &in);
        vkimg_image_free(&in);
        in = lv_full(3000, 40, 2, VKIMG_U16, D_UNIFORM);
        boxblur_case(ctx, "boxblur=50", 50, &in);
        vkimg_image_free(&in);
    }
    {
        /* box sums beyond 2^32: 300x300 at ~62000 with radius 200 (the window
         * covers most of the image) forces the uint64 table */
        const uint32_t lo[4] = { 58000, 58000 }, hi[4] = { 65535, 65535 };
        for (int c = 1; c <= 2; c++) {
            vkimg_image in = lv_image(300, 300, c, VKIMG_U16, D_UNIFORM, lo, hi, false);
            uint32_t *q = lv_levels(&in);
            uint64_t *s = gh_calloc(lv_nsamples(&in), sizeof *s), mx = 0;
            ref_box_sums(q, 300, 300, c, 200, s);
            for (size_t i = 0; i < lv_nsamples(&in); i++)
                if (s[i] > mx)
                    mx = s[i];
            CHECK(mx > (1ull << 32), "boxblur wide case: largest box sum %llu does not exceed 2^32",
                  (unsigned long long)mx);
            free(q);
            free(s);
            boxblur_case(ctx, "boxblur=200", 200, &in);
            vkimg_image_free(&in);
        }
    }
}

/* Both shapes of the table of 32-bit entries (the 64-bit one: test_integral;
 * VKIMG_SAT_LINES=0 / 1: entries two a word where rows have an even number of
 * samples, one where odd, rows of whole strips and not) and of the last pass
 * (VKIMG_BOXBLUR_LINES=0 / 1: strips of whole windows and the pixels around
 * them, or a pixel an invocation), 8- and 16-bit, radii from 0 to past the
 * image; which dispatches ran is read from the library's log. */
static void test_shapes(vkimg_ctx *ctx)
{
    static const size2 ss[] = { { 1, 1 }, { 7, 3 }, { 8, 8 }, { 24, 5 }, { 29, 31 }, { 131, 67 }, { 300, 41 } };
    static const int radii[] = { 0, 1, 2, 5, 9, 40 };
    char t[64];
    for (int lines = 0; lines < 2; lines++) {
        setenv("VKIMG_SAT_LINES", lines ? "1" : "0", 1);
        setenv("VKIMG_BOXBLUR_LINES", lines ? "1" : "0", 1);
        for (size_t i = 0; i < sizeof ss / sizeof ss[0]; i++)
            for (int c = 1; c <= 4; c++)
                for (int k = 0; k < 2; k++) {
                    const int r = radii[(i + (size_t)c + (size_t)k * 3) % 6];
                    snprintf(t, sizeof t, "boxblur=%d", r);
                    vkimg_image in =
                        lv_full(ss[i].w, ss[i].h, c, (i + (size_t)c) % 3 ? VKIMG_U8 : VKIMG_U16, D_UNIFORM);
                    gh_dispatches_start();
                    boxblur_case(ctx, t, r, &in);
                    gh_dispatches_stop();
                    const int ran_strips = gh_dispatched("boxblur-lines"), ran_px = gh_dispatched("boxblur"),
                              ran_edge = gh_dispatched("boxblur-lines-edge");
                    /* strips where a row of whole windows holds a strip (8 samples, 24 for RGB) */
                    const int nx = ss[i].w - 2 * r - 1, ny = ss[i].h - 2 * r - 1;
                    const bool strips = nx > 0 && ny > 0 && nx * c >= (c == 3 ? 24 : 8);
                    const bool edge = !strips || r > 0 || ss[i].w * c % (c == 3 ? 24 : 8); /* not all inside */
                    CHECK(lines ? ran_px == 0 && (ran_strips > 0) == strips && (ran_edge > 0 || !edge)
                                : ran_px == 1 && ran_strips + ran_edge == 0,
                          "boxblur=%d %dx%d c=%d, lines %d: the strips ran %d times, their edges %d, the pixels %d",
                          r, ss[i].w, ss[i].h, c, lines, ran_strips, ran_edge, ran_px);
                    vkimg_image_free(&in);
                }
    }
    unsetenv("VKIMG_SAT_LINES");
    unsetenv("VKIMG_BOXBLUR_LINES");
}

int main(void)
{
    static const gh_suite suites[] = { { "boxblur", test_boxblur }, { "shapes", test_shapes } };
    lv_seed = 0xaac3e21fc1b42935ull; /* any seed; this one gives the images of the former test_ops_sat.c */
    return gh_main("test_boxblur", suites, 2);
}
