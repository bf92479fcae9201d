/* blur on the device against its double-precision references (blur_ref.h):
 * the exact Gaussian (fused and two-pass kernels, the CPU-shaped line passes
 * that CPU devices run and the GPU shapes, chunked spans, every workgroup size)
 * and method=box against the composite box kernel, which is
 * also checked to stay within 1% of the Gaussian (tolerances:
 * tests/lib/run_ref.h). */
#include "blur_ref.h"
#include "gray_ref.h"
#include "gpu_harness.h"
#include "gpu/gpu.h" /* whether the device reads texel sources (the sliding passes need them) */
#include "run_ref.h"
#include "t.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G_BLUR "blur"
#define G_BOX "blur-box"

static void test_blur(vkimg_ctx *ctx)
{
    int rf = ref_blur_self_check();
    CHECK(rf == 0, "blur reference self-check: %d failures", rf);
    char t[96];
    /* explicit radii */
    static const struct { double sigma; int r; } ex[] = { { 0.5, 2 }, { 1.0, 3 }, { 2.5, 5 }, { 3.0, 9 } };
    for (size_t k = 0; k < sizeof ex / sizeof ex[0]; k++) {
        ref_step s[] = { BLUR(ex[k].sigma, ex[k].r) };
        snprintf(t, sizeof t, "blur=sigma=%g:radius=%d", ex[k].sigma, ex[k].r);
        for (int i = 0; i < OP_NSIZES - 2; i++) /* up to 131x67 */
            for (int c = 1; c <= 4; c++)
                run_rand(ctx, G_BLUR, t, s, 1, op_sizes[i].w, op_sizes[i].h, c, VKIMG_U8,
                         (c + (int)k) % 2 ? FMT_U8 | FMT_F32 : FMT_U8 | FMT_U16, -1);
    }
    /* auto radius (ceil(3 sigma)), positional sigma */
    {
        ref_step s[] = { BLUR(2.5, -1) };
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_BLUR, "blur=2.5", s, 1, 257, 129, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        ref_step s1[] = { BLUR(1.0, -1) };
        run_rand(ctx, G_BLUR, "blur", s1, 1, 17, 13, 4, VKIMG_U8, FMT_U8, -1); /* default sigma 1 */
        run_rand(ctx, G_BLUR, "blur=1:3", s1, 1, 17, 13, 3, VKIMG_U8, FMT_U8, -1);
    }
    /* tiny sigmas (any sigma > 0 passes the option check): the limit, a copy, not
     * the 0/0 of exp(-i^2 / (2 sigma^2)) */
    {
        ref_step t1[] = { BLUR(1e-200, -1) }, t2[] = { BLUR(1e-300, 5) }, t3[] = { BLUR(0.05, -1) };
        run_rand(ctx, G_BLUR, "blur=sigma=1e-200", t1, 1, 37, 23, 3, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=1e-300:radius=5", t2, 1, 37, 23, 4, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=0.05", t3, 1, 37, 23, 1, VKIMG_U16, FMT_ALL, -1);
    }
    /* larger than one tile both ways */
    {
        ref_step s3[] = { BLUR(3.0, 9) }, s8[] = { BLUR(8.0, -1) };
        run_rand(ctx, G_BLUR, "blur=sigma=3:radius=9", s3, 1, 600, 530, 4, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=8", s8, 1, 600, 530, 2, VKIMG_U8, FMT_U8, -1);
    }
    /* sigma 8 and 20 */
    {
        ref_step s8[] = { BLUR(8.0, -1) }, s20[] = { BLUR(20.0, -1) };
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_BLUR, "blur=sigma=8", s8, 1, 131, 67, c, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=8", s8, 1, 1, 1, 4, VKIMG_U8, FMT_ALL, -1); /* radius >> image */
        run_rand(ctx, G_BLUR, "blur=sigma=8", s8, 1, 3, 5, 2, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=20", s20, 1, 257, 129, 2, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=20", s20, 1, 257, 129, 3, VKIMG_U8, FMT_U16, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=20", s20, 1, 1, 300, 4, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=20", s20, 1, 300, 1, 4, VKIMG_U8, FMT_ALL, -1);
    }
    /* sigma 50 (radius 150) on modest sizes */
    {
        ref_step s[] = { BLUR(50.0, -1) };
        run_rand(ctx, G_BLUR, "blur=sigma=50", s, 1, 400, 300, 4, VKIMG_U8, FMT_U8, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=50", s, 1, 1, 400, 2, VKIMG_U8, FMT_U16, -1);
        run_rand(ctx, G_BLUR, "blur=sigma=50", s, 1, 400, 1, 3, VKIMG_U8, FMT_ALL, -1);
    }
    /* A span longer than the shared-memory tile (the chunked loop). Along y the
     * tile holds 16 columns, so sigma 20 and 50 above (radius 60, 150) already
     * take several chunks (lavapipe: 32 KiB -> 128 texels; 48 KiB -> 192); along
     * x a line of 256 outputs needs radius > 896 (32 KiB) or > 1920 (64 KiB). */
    {
        ref_step s[] = { BLUR(700.0, 2100) };
        run_rand(ctx, G_BLUR, "blur=sigma=700:radius=2100", s, 1, 300, 1, 3, VKIMG_U8, FMT_U8 | FMT_F32, -1);
    }
    /* radius 0: identity (alpha: colour of transparent pixels becomes 0) */
    {
        ref_step s[] = { BLUR(2.0, 0) };
        for (int c = 1; c <= 4; c++) {
            run_rand(ctx, G_BLUR, "blur=sigma=2:radius=0", s, 1, 17, 13, c, VKIMG_U8, FMT_U8, c % 2 ? 0.0 : -1);
            run_rand(ctx, G_BLUR, "blur=sigma=2:radius=0", s, 1, 17, 13, c, VKIMG_F32, FMT_F32, -1);
        }
    }
    /* alpha with transparent regions: c = 2 and 4 on more sizes and sigmas */
    {
        ref_step s[] = { BLUR(1.5, -1) };
        for (int c = 2; c <= 4; c += 2)
            for (int i = 0; i < OP_NSIZES - 1; i++)
                run_rand(ctx, G_BLUR, "blur=1.5", s, 1, op_sizes[i].w, op_sizes[i].h, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
    }
    /* U16 and F32 input */
    {
        ref_step s[] = { BLUR(1.5, -1) }, s2[] = { BLUR(2.0, -1) };
        for (int c = 1; c <= 4; c++) {
            run_rand(ctx, G_BLUR, "blur=1.5", s, 1, 131, 67, c, VKIMG_U16, FMT_ALL, -1);
            run_rand(ctx, G_BLUR, "blur=2", s2, 1, 131, 67, c, VKIMG_F32, FMT_F32 | FMT_U8, -1);
        }
        run_rand(ctx, G_BLUR, "blur=2", s2, 1, 1, 1, 2, VKIMG_F32, FMT_ALL, -1);
    }
    /* full HD */
    {
        ref_step s25[] = { BLUR(2.5, -1) };
        run_rand(ctx, G_BLUR, "blur=2.5", s25, 1, 1920, 1080, 3, VKIMG_U8, FMT_U8, -1);
    }
    /* the fused kernel with the other workgroup sizes (blur.c picks TX = 32
     * invocations on CPU devices such as this CI's, vki_wg_1d = 256 on GPUs):
     * both must be tested wherever the tests run */
    {
        static const char *const wgs[] = { "256", "64", "32" };
        ref_step s[] = { BLUR(3.0, 9) }, s1[] = { BLUR(1.0, -1) };
        for (size_t k = 0; k < sizeof wgs / sizeof wgs[0]; k++) {
            setenv("VKIMG_BLUR_WG", wgs[k], 1);
            setenv("VKIMG_BLUR_FUSED", "1", 1);
            for (int c = 1; c <= 4; c++) {
                run_rand(ctx, G_BLUR, "blur=sigma=3:radius=9", s, 1, 131, 67, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
                run_rand(ctx, G_BLUR, "blur", s1, 1, 97, 61, c, VKIMG_U16, FMT_U16, -1);
            }
            run_rand(ctx, G_BLUR, "blur=sigma=3:radius=9", s, 1, 600, 530, 3, VKIMG_U8, FMT_U8, -1);
            run_rand(ctx, G_BLUR, "blur=sigma=3:radius=9", s, 1, 1, 300, 4, VKIMG_U8, FMT_U8, -1);
            unsetenv("VKIMG_BLUR_WG");
            unsetenv("VKIMG_BLUR_FUSED");
        }
    }
}

/* blur=method=box: against the composite-kernel reference (ref_box3_d), on the
 * awkward sizes, every channel count and format, small and large sigma (the
 * extended domains of the later passes reach past small images). */
static void test_blur_box(vkimg_ctx *ctx)
{
    static const double sig[] = { 2.0, 3.0, 5.0, 20.0 };
    char t[96];
    for (size_t k = 0; k < sizeof sig / sizeof sig[0]; k++) {
        ref_step s[] = { BOX(sig[k]) };
        snprintf(t, sizeof t, "blur=sigma=%g:method=box", sig[k]);
        for (int i = 0; i < OP_NSIZES - 1; i++)
            for (int c = 1; c <= 4; c++)
                run_rand(ctx, G_BOX, t, s, 1, op_sizes[i].w, op_sizes[i].h, c, VKIMG_U8,
                         (c + i + (int)k) % 2 ? FMT_U8 | FMT_F32 : FMT_U8 | FMT_U16, -1);
    }
    ref_step s50[] = { BOX(50.0) }, s3[] = { BOX(3.0) };
    run_rand(ctx, G_BOX, "blur=sigma=50:method=box", s50, 1, 400, 300, 3, VKIMG_U8, FMT_ALL, -1);
    run_rand(ctx, G_BOX, "blur=sigma=50:method=box", s50, 1, 1, 400, 4, VKIMG_U8, FMT_U8 | FMT_F32, -1);
    for (int c = 1; c <= 4; c++) {
        run_rand(ctx, G_BOX, "blur=sigma=3:method=box", s3, 1, 131, 67, c, VKIMG_U16, FMT_ALL, -1);
        run_rand(ctx, G_BOX, "blur=sigma=3:method=box", s3, 1, 131, 67, c, VKIMG_F32, FMT_ALL, -1);
    }
    run_rand(ctx, G_BOX, "blur=sigma=3:method=box", s3, 1, 1920, 1080, 3, VKIMG_U8, FMT_U8, -1);
    /* Nearly transparent: alpha 0 but for sparse pixels of alpha 1/255 (and one
     * of 255 far off), colours that vary: where the blurred alpha is ~1e-5 the
     * colour is the ratio of two such small sums, which the device's sums must
     * know to a float's relative precision, not to a fixed absolute step (with
     * 32 fraction bits alone: 1 LSB of u16 off; these cases were found by other
     * random images of the suite above) */
    for (int c = 2; c <= 4; c += 2) {
        ref_step s5[] = { BOX(5.0) };
        vkimg_image im;
        vkimg_err e;
        CHECK(vkimg_image_alloc(&im, 97, 61, c, VKIMG_U8, &e) == 0, "alloc: %s", e.msg);
        unsigned char *p = im.data;
        unsigned long long seed = 77 + (unsigned long long)c;
        for (int i = 0; i < 97 * 61; i++) {
            for (int k = 0; k < c - 1; k++)
                p[i * c + k] = (unsigned char)(t_rand(&seed) >> 56);
            p[i * c + c - 1] = i % 37 == 5 ? 1 : i == 3000 ? 255 : 0;
        }
        run_case(ctx, G_BOX, "blur=sigma=5:method=box", s5, 1, &im, FMT_ALL, -1);
        vkimg_image_free(&im);
    }

    /* How far the approximation is from the Gaussian (README): the largest
     * difference of the two step responses (a sharp edge; the worst case for
     * any image in [0,1] is at most the kernels' L1 distance / 2, also shown)
     * in 8-bit steps, for sigma 3..200. Asserted below the documented 1%. */
    static const double sg[] = { 3, 4, 5, 10, 20, 50, 100, 200 };
    for (size_t k = 0; k < sizeof sg / sizeof sg[0]; k++) {
        int rad[3], R = ref_box_radii(sg[k], rad), G = (int)ceil(4 * sg[k]), n = 2 * (R > G ? R : G) + 1;
        ref_img d = { n, 1, 1, NULL };
        d.d = calloc((size_t)n, sizeof(double));
        d.d[n / 2] = 1.0; /* impulse: the 1D kernels */
        ref_img kb = ref_box3_d(&d, sg[k]), kg = ref_blur_d(&d, sg[k], G);
        /* the 2D kernels are products; a 1D step's response is a kernel's CDF */
        double cb = 0, cg = 0, step = 0, l1 = 0;
        for (int i = 0; i < n; i++) {
            cb += kb.d[i];
            cg += kg.d[i];
            step = fmax(step, fabs(cb - cg));
            l1 += fabs(kb.d[i] - kg.d[i]);
        }
        double var = 0;
        for (int i = 0; i < 3; i++)
            var += ((2.0 * rad[i] + 1) * (2.0 * rad[i] + 1) - 1) / 12.0;
        if (gh_verbose || k == 0)
            printf("  box vs Gaussian sigma %5g: boxes r=%d,%d,%d (sigma %.3f), step-response error %.2f LSB, L1/2 %.2f LSB\n",
                   sg[k], rad[0], rad[1], rad[2], sqrt(var), 255 * step, 255 * l1 / 2);
        CHECK(step <= 0.01, "box approximation at sigma %g: step-response error %.4f over 0.01 (1%% promised)", sg[k], step);
        free(d.d);
        ref_img_free(&kb);
        ref_img_free(&kg);
    }
}

/* Both shapes wherever the tests run: a CPU device runs the line passes by
 * default (blur.c use_lines), a GPU the fused or separable kernels. Last, so
 * that the suites before it see the random images they always did. */
static void test_blur_shapes(vkimg_ctx *ctx)
{
    /* the GPU shapes on this device too (a CPU device runs the line passes by
     * default, a GPU the fused or separable kernels): the explicit radii again,
     * and the line passes with the other block sizes */
    {
        setenv("VKIMG_BLUR_LINES", "0", 1);
        static const struct { double sigma; int r; } ex[] = { { 0.5, 2 }, { 1.0, 3 }, { 2.5, 5 }, { 3.0, 9 } };
        char t[96];
        for (size_t k = 0; k < sizeof ex / sizeof ex[0]; k++) {
            ref_step s[] = { BLUR(ex[k].sigma, ex[k].r) };
            snprintf(t, sizeof t, "blur=sigma=%g:radius=%d", ex[k].sigma, ex[k].r);
            for (int i = 0; i < OP_NSIZES - 2; i++)
                for (int c = 1; c <= 4; c++)
                    run_rand(ctx, G_BLUR, t, s, 1, op_sizes[i].w, op_sizes[i].h, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        }
        setenv("VKIMG_BLUR_LINES", "1", 1);
        static const char *const nbs[] = { "1", "5", "32" };
        ref_step s[] = { BLUR(3.0, 9) };
        for (size_t k = 0; k < sizeof nbs / sizeof nbs[0]; k++) {
            setenv("VKIMG_BLUR_LINES_NB", nbs[k], 1);
            for (int c = 1; c <= 4; c++)
                run_rand(ctx, G_BLUR, "blur=sigma=3:radius=9", s, 1, 131, 67, c, VKIMG_U8, FMT_U8 | FMT_U16, -1);
            run_rand(ctx, G_BLUR, "blur=sigma=3:radius=9", s, 1, 1, 37, 4, VKIMG_U16, FMT_ALL, -1);
        }
        unsetenv("VKIMG_BLUR_LINES_NB");
        unsetenv("VKIMG_BLUR_LINES");
    }
}

/* The vec passes (blur.c record_vec: 8-bit input and output on CPU devices;
 * VKIMG_BLUR_LINES=1 makes any device take them): the interior dispatches
 * (windows inside a row along x, runs of whole words along y) and the edge
 * dispatches each where the sizes call for them. Which ran is read from the
 * library's log. */
enum { NRAN = 7 };
static int ran[NRAN]; /* blur-h-vec, -h-vec-edge, -v-vec, -v-vec-edge, -v-ring, -h-ring, -h-ring-edge */
static int ring_texels, ring_address; /* sliding passes that read their input as texels / through its address */

static void vec_tap(vkimg_log_level lvl, const char *msg)
{
    static const char *const names[NRAN] = { "dispatch blur-h-vec ",      "dispatch blur-h-vec-edge ",
                                              "dispatch blur-v-vec ",      "dispatch blur-v-vec-edge ",
                                              "dispatch blur-v-ring ",     "dispatch blur-h-ring ",
                                              "dispatch blur-h-ring-edge " };
    (void)lvl;
    for (int k = 0; k < NRAN; k++)
        ran[k] += !strncmp(msg, names[k], strlen(names[k]));
    if (!strncmp(msg, "blur-h-ring ", 12) || !strncmp(msg, "blur-v-ring ", 12)) {
        ring_texels += strstr(msg, " reads its input as texels") != NULL;
        ring_address += strstr(msg, " reads its input through its address") != NULL;
    }
}

static void test_blur_vec(vkimg_ctx *ctx)
{
    setenv("VKIMG_BLUR_LINES", "1", 1);
    setenv("VKIMG_OPAQUE", "0", 1); /* the alpha path wherever there is alpha (some random images are opaque) */
    gh_log_tap = vec_tap;
    /* default shapes: x blocks of 8 outputs, y runs of 4 64-bit words (16 u16 samples;
     * 8 f32 with alpha) of 8 rows. want: which of the four dispatches must run */
    static const struct { int w, h, c, r; double sigma; int want[4]; } cs[] = {
        { 131, 67, 3, 9, 3.0, { 1, 1, 1, 1 } },  /* blocks 2..14 inside; 393 samples: 24 runs + 9 */
        { 64, 40, 4, 3, 1.0, { 1, 1, 1, 0 } },   /* blocks 1..6 inside; 256 f32 samples: 32 runs */
        { 64, 40, 2, 3, 1.0, { 1, 1, 1, 0 } },   /* 128 f32 samples: 16 runs */
        { 67, 9, 2, 3, 1.0, { 1, 1, 1, 1 } },    /* 134 samples: 16 runs + 3 pixels */
        { 5, 3, 1, 9, 3.0, { 0, 1, 0, 1 } },     /* narrower than the radius: edges only */
        { 16, 17, 1, 2, 0.7, { 0, 1, 1, 0 } },   /* b0 = 1, b1 = 1: no block inside; one run a row */
        { 24, 5, 1, 2, 0.7, { 1, 1, 1, 1 } },    /* block 1 inside; 24 samples: a run + 8 */
        { 1, 1, 4, 9, 3.0, { 0, 1, 0, 1 } },
        { 1, 37, 3, 9, 3.0, { 0, 1, 0, 1 } },
        { 37, 1, 4, 9, 3.0, { 1, 1, 1, 1 } },    /* one row, block 2 inside; 148 f32: 18 runs + 1 pixel */
        { 257, 129, 4, 9, 3.0, { 1, 1, 1, 1 } },
        { 608, 530, 3, 9, 3.0, { 1, 1, 1, 0 } }, /* larger than a tile; 1824 samples: 114 runs */
        { 96, 31, 1, 0, 0.3, { 1, 0, 1, 0 } },   /* radius 0: every block inside, 96 = 6 runs */
        { 8, 3, 3, 9, 3.0, { 0, 1, 1, 1 } },     /* 3 words a row, halo 4: no sliding run along x */
        { 200, 7, 3, 9, 3.0, { 1, 1, 1, 1 } },   /* 75 words, 67 inside: one partial run, or several overlapping */
        { 1000, 3, 2, 5, 1.7, { 1, 1, 1, 0 } },  /* 250 words; alpha premultiplied in the ring */
        { 44, 13, 1, 9, 3.0, { 1, 1, 1, 1 } },   /* 44 samples a row: the sliding pass along y on runs of one
                                                    word (rows of a whole number of 2-word runs take two) */
    };
    char t[96];
    /* first with h_vec and v_vec (VKIMG_BLUR_RING=0), then with the sliding
     * passes where they apply, with their default RING_M (8 periods of the
     * ring: more than most of these sizes), 1 and 3 (partial blocks, several
     * runs a row and the last one overlapping), and 3 reading the input through
     * its address instead of the texel source (VKIMG_TEXEL_SRC=0: what they do
     * where the input's offset in its buffer is not one the device allows) */
    static const char *const ms[] = { NULL, "8", "1", "3", "3" };
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
        setenv("VKIMG_BLUR_RING", mi == 0 ? "0" : "1", 1);
        if (ms[mi])
            setenv("VKIMG_BLUR_RING_M", ms[mi], 1);
        if (mi == 4)
            setenv("VKIMG_TEXEL_SRC", "0", 1);
        for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
            ref_step s[] = { BLUR(cs[k].sigma, cs[k].r) };
            snprintf(t, sizeof t, "blur=sigma=%g:radius=%d", cs[k].sigma, cs[k].r);
            memset(ran, 0, sizeof ran);
            ring_texels = ring_address = 0;
            run_rand(ctx, G_BLUR, t, s, 1, cs[k].w, cs[k].h, cs[k].c, VKIMG_U8, FMT_U8, -1);
            /* the sliding passes where blur.c use_ring takes them: x on rows of whole 64-bit words (its
             * runs on the words whose windows of xd words each side are in the row; blocks of 8 pixels
             * for the rest), y on rows of whole 32-bit words without alpha */
            const int w = cs[k].w, c = cs[k].c, xd = (cs[k].r * c + 7) / 8, nw = w * c / 8;
            const bool on = mi > 0 && ctx->gpu.texel, xring = on && w * c % 8 == 0, yring = on && w * c % 4 == 0 && c % 2 == 1;
            const int ni = nw > 2 * xd ? nw - 2 * xd : 0, xl = (8 * xd + c - 1) / c, xr = ni ? 8 * (nw - xd) / c : 0;
            const int eb0 = (xl + 7) / 8, enin = xr / 8 > eb0 ? xr / 8 - eb0 : 0;
            const bool wants[NRAN] = { !xring && cs[k].want[0], !xring && cs[k].want[1], !yring && cs[k].want[2],
                                       !yring && cs[k].want[3], yring, xring && ni > 0,
                                       xring && (w + 7) / 8 - enin > 0 };
            for (int d = 0; d < NRAN; d++) {
                const bool want = wants[d];
                CHECK((ran[d] > 0) == want, "%s on %dx%d, %d channels, RING_M %s: dispatch %d ran %d times, want %s", t,
                      cs[k].w, cs[k].h, cs[k].c, ms[mi] ? ms[mi] : "(off)", d, ran[d], want ? "some" : "none");
            }
            /* each sliding pass reads its input one way: as texels, or through its address where told to */
            const int rings = ran[4] + ran[5];
            CHECK(ring_texels + ring_address == rings && ring_address == (mi == 4 ? rings : 0),
                  "%s on %dx%d, %d channels, RING_M %s%s: %d sliding passes, %d read texels, %d through the address", t,
                  cs[k].w, cs[k].h, cs[k].c, ms[mi] ? ms[mi] : "(off)", mi == 4 ? ", VKIMG_TEXEL_SRC=0" : "", rings,
                  ring_texels, ring_address);
        }
    }
    unsetenv("VKIMG_TEXEL_SRC");
    unsetenv("VKIMG_BLUR_RING_M");
    unsetenv("VKIMG_BLUR_RING");
    /* the passes in bands of rows (blur.c record_vec): VKIMG_BLUR_BAND_BYTES=1 makes a band the y pass's
     * rows an invocation (the sliding pass: RING_M (2R + 1); v_vec: 8); none where the image is under 1.5
     * bands. Each pair of passes: the sliding ones (RGB, gray: the last band one row, the x pass on the
     * edges only, an image just under 1.5 bands), the sliding x pass and v_vec (alpha: its f32
     * intermediate), h_vec and the sliding y pass (44 samples a row), h_vec and v_vec (with its edge
     * dispatch). Rows whose bands' inputs start at offsets the passes take (texels: 16 bytes). */
    if (ctx->gpu.texel && ctx->gpu.tex_align <= 16) {
        static const struct { int w, h, c, r, m; double sigma; bool xring, yring; } bc[] = {
            { 64, 200, 3, 9, 1, 3.0, 1, 1 }, { 608, 130, 3, 9, 3, 3.0, 1, 1 }, { 48, 61, 1, 2, 1, 0.7, 1, 1 },
            { 16, 45, 1, 9, 1, 3.0, 1, 1 },  { 64, 28, 3, 9, 1, 3.0, 1, 1 },   { 32, 100, 1, 3, 2, 1.2, 1, 1 },
            { 64, 50, 4, 3, 1, 1.0, 1, 0 },  { 40, 30, 2, 2, 1, 0.7, 1, 0 },   { 44, 61, 1, 2, 2, 0.7, 0, 1 },
            { 66, 40, 2, 2, 1, 0.7, 0, 0 },
        };
        setenv("VKIMG_BLUR_RING", "1", 1);
        setenv("VKIMG_BLUR_BAND_BYTES", "1", 1);
        for (size_t k = 0; k < sizeof bc / sizeof bc[0]; k++) {
            char m[8];
            snprintf(m, sizeof m, "%d", bc[k].m);
            setenv("VKIMG_BLUR_RING_M", m, 1);
            ref_step s[] = { BLUR(bc[k].sigma, bc[k].r) };
            snprintf(t, sizeof t, "blur=sigma=%g:radius=%d", bc[k].sigma, bc[k].r);
            memset(ran, 0, sizeof ran);
            run_rand(ctx, G_BLUR, t, s, 1, bc[k].w, bc[k].h, bc[k].c, VKIMG_U8, FMT_U8, -1);
            const int band = bc[k].yring ? bc[k].m * (2 * bc[k].r + 1) : 8, h = bc[k].h;
            const int bands = band + band / 2 >= h ? 1 : (h + band - 1) / band;
            const int ny = bc[k].yring ? ran[4] : ran[2], nx = bc[k].xring ? ran[6] : ran[1];
            CHECK(ny == bands && nx == bands && (bc[k].yring ? !ran[2] : !ran[4]) && (bc[k].xring ? !ran[1] : !ran[6]),
                  "%s on %dx%d, %d channels, bands of %d rows: %d bands want, %d y and %d x edge passes ran", t,
                  bc[k].w, h, bc[k].c, band, bands, ny, nx);
        }
        unsetenv("VKIMG_BLUR_BAND_BYTES");
        unsetenv("VKIMG_BLUR_RING_M");
        unsetenv("VKIMG_BLUR_RING");
    }
    /* 16-bit and float input (a float image between two ops, as in gray,blur) with 8-bit output: the
     * sliding pass along x where rows are whole steps of 8 samples, then the sliding pass along y (16-bit
     * input without alpha: a u16 intermediate) or v_vec (f32); the line passes where rows are not whole
     * steps; h_vec never (it reads bytes) */
    {
        static const struct { int w, h; } fs[] = { { 64, 9 }, { 200, 7 }, { 24, 5 }, { 8, 3 }, { 131, 4 }, { 1, 1 } };
        static const vkimg_fmt ffmt[] = { VKIMG_U16, VKIMG_F32 };
        ref_step s[] = { BLUR(3.0, 9) };
        for (size_t f = 0; f < 2; f++)
            for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++)
                for (int c = 1; c <= 4; c++) {
                    memset(ran, 0, sizeof ran);
                    run_rand(ctx, G_BLUR, "blur=sigma=3:radius=9", s, 1, fs[k].w, fs[k].h, c, ffmt[f], FMT_U8, -1);
                    const bool xring = ctx->gpu.texel && fs[k].w * c % 8 == 0;
                    const bool yring = xring && ffmt[f] == VKIMG_U16 && c % 2 == 1;
                    CHECK(!ran[0] && (ran[6] > 0) == xring && (ran[4] > 0) == yring && (ran[2] > 0) == (xring && !yring),
                          "%s input %dx%d, %d channels: dispatches ran h-vec %d h-ring-edge %d v-ring %d v-vec %d",
                          ffmt[f] == VKIMG_U16 ? "16-bit" : "float", fs[k].w, fs[k].h, c, ran[0], ran[6], ran[4], ran[2]);
                }
    }
    /* other shapes: x blocks of 4 and 16, y blocks of 1, 5 (partial) and 16 rows,
     * runs of 2 and 8 words; every channel count */
    static const char *const shapes[][3] = { { "4", "5", "2" }, { "16", "1", "8" }, { "12", "16", "6" } };
    setenv("VKIMG_BLUR_RING", "0", 1); /* 131 x 2 and x 4 are whole words */
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        setenv("VKIMG_BLUR_VEC_NB", shapes[k][0], 1);
        setenv("VKIMG_BLUR_VEC_NBV", shapes[k][1], 1);
        setenv("VKIMG_BLUR_VEC_VW", shapes[k][2], 1);
        ref_step s[] = { BLUR(2.5, 5) };
        for (int c = 1; c <= 4; c++) {
            memset(ran, 0, sizeof ran);
            run_rand(ctx, G_BLUR, "blur=sigma=2.5:radius=5", s, 1, 131, 67, c, VKIMG_U8, FMT_U8, -1);
            CHECK(ran[0] && ran[1] && ran[2], "shape %s/%s/%s, %d channels: the vec passes did not run", shapes[k][0],
                  shapes[k][1], shapes[k][2], c);
        }
    }
    unsetenv("VKIMG_BLUR_VEC_NB");
    unsetenv("VKIMG_BLUR_VEC_NBV");
    unsetenv("VKIMG_BLUR_VEC_VW");
    unsetenv("VKIMG_BLUR_RING");
    /* the line passes for 8-bit images too (VKIMG_BLUR_VEC=0), and not the vec passes */
    setenv("VKIMG_BLUR_VEC", "0", 1);
    {
        ref_step s[] = { BLUR(3.0, 9) };
        for (int c = 1; c <= 4; c++) {
            memset(ran, 0, sizeof ran);
            run_rand(ctx, G_BLUR, "blur=sigma=3:radius=9", s, 1, 131, 67, c, VKIMG_U8, FMT_U8, -1);
            CHECK(!ran[0] && !ran[2] && !ran[4] && !ran[5], "VKIMG_BLUR_VEC=0, %d channels: the vec passes ran", c);
        }
    }
    unsetenv("VKIMG_BLUR_VEC");
    gh_log_tap = NULL;
    unsetenv("VKIMG_BLUR_LINES");
    unsetenv("VKIMG_OPAQUE");
}

/* Input whose alpha is all at its maximum: on CPU devices the run looks
 * (apply.c plan_for) and blur blurs the channels as they are (blur.c
 * blur_alpha: no premultiplication, a u16 intermediate, the sliding pass along
 * y where rows are whole words); against the alpha-aware reference as before.
 * An alpha sample one below the maximum anywhere (the first, the last: the
 * scan's tail) or VKIMG_OPAQUE=0 keeps the alpha path. Which ran is read from
 * the log: blur-v-ring runs only on a u16 intermediate. */
static void test_blur_opaque(vkimg_ctx *ctx)
{
    const bool cpu = gh_cpu_device(ctx);
    gh_log_tap = vec_tap;
    static const struct { int w, h, c; vkimg_fmt fmt; int spoil; } cs[] = {
        { 131, 67, 4, VKIMG_U8, 0 },  { 64, 40, 2, VKIMG_U8, 0 },   { 3, 1, 2, VKIMG_U8, 0 }, /* 6 bytes: the tail */
        { 97, 61, 4, VKIMG_U16, 0 },  { 98, 61, 4, VKIMG_U16, 0 },  { 1, 1, 4, VKIMG_U8, 0 },
        { 600, 53, 4, VKIMG_U8, 0 },
        { 131, 67, 4, VKIMG_U8, 1 },  { 131, 67, 4, VKIMG_U8, 2 }, /* the first alpha, the last one below it */
        { 3, 1, 2, VKIMG_U8, 2 },     { 97, 61, 4, VKIMG_U16, 2 },
    };
    ref_step st[] = { BLUR(3.0, 9) };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++)
        for (int off = 0; off < 2; off++) {
            vkimg_image im;
            vkimg_err e;
            CHECK(vkimg_image_alloc(&im, cs[k].w, cs[k].h, cs[k].c, cs[k].fmt, &e) == 0, "alloc: %s", e.msg);
            const size_t n = (size_t)cs[k].w * cs[k].h;
            const int c = cs[k].c;
            unsigned long long seed = 901 + k;
            for (size_t i = 0; i < n * (size_t)c; i++) {
                const unsigned v = (unsigned)(t_rand(&seed) >> 48), top = cs[k].fmt == VKIMG_U8 ? 255u : 65535u;
                const unsigned x = (int)(i % (size_t)c) == c - 1 ? top : v % (top + 1);
                if (cs[k].fmt == VKIMG_U8)
                    ((unsigned char *)im.data)[i] = (unsigned char)x;
                else
                    ((uint16_t *)im.data)[i] = (uint16_t)x;
            }
            if (cs[k].spoil) { /* one alpha sample one below the maximum */
                const size_t i = (cs[k].spoil == 1 ? 0 : n - 1) * (size_t)c + (size_t)c - 1;
                if (cs[k].fmt == VKIMG_U8)
                    ((unsigned char *)im.data)[i] = 254;
                else
                    ((uint16_t *)im.data)[i] = 65534;
            }
            if (off)
                setenv("VKIMG_OPAQUE", "0", 1);
            memset(ran, 0, sizeof ran);
            run_case(ctx, G_BLUR, "blur=sigma=3:radius=9", st, 1, &im, FMT_U8, -1);
            unsetenv("VKIMG_OPAQUE");
            /* (16-bit input takes the vec passes where rows are whole steps of 8 samples: blur.c use_vec) */
            const bool want = cpu && !off && !cs[k].spoil && cs[k].w * c % 4 == 0 &&
                              (cs[k].fmt == VKIMG_U8 || cs[k].w * c % 8 == 0);
            CHECK((ran[4] > 0) == want, "%dx%d c=%d %s%s%s: blur-v-ring ran %d times, want %s", cs[k].w, cs[k].h, c,
                  vkimg_fmt_name(cs[k].fmt), cs[k].spoil ? ", one alpha below the maximum" : "",
                  off ? ", VKIMG_OPAQUE=0" : "", ran[4], want ? "some" : "none");
            vkimg_image_free(&im);
        }
    gh_log_tap = NULL;
}

/* p on in with o (alpha_unused as given); fails the test where the run does. */
static vkimg_image run_opts(vkimg_ctx *ctx, const vkimg_pipeline *p, const char *text, const vkimg_image *in,
                            bool alpha_unused)
{
    vkimg_run_opts o = { .out_fmt = VKIMG_U8, .alpha_unused = alpha_unused };
    vkimg_image out = { 0 };
    vkimg_err e;
    gh_runs++;
    CHECK(vkimg_run(ctx, p, in, &o, &out, &e) == 0, "'%s' %dx%d c=%d%s: vkimg_run failed: %s", text, in->w, in->h,
          in->c, alpha_unused ? " (alpha unused)" : "", e.msg);
    return out;
}

/* The caller keeps no alpha (vkimg_run_opts.alpha_unused, as for a JPEG file):
 * on CPU devices an input whose alpha is all at its maximum is run without it
 * where every op keeps it so (blur, gray, moves: vki_plan_may_drop_alpha). The
 * result then has one channel fewer and is byte for byte the run of the image
 * with its alpha stripped on the host, which is checked against the double
 * references of the stripped image. Elsewhere (an alpha sample one below the
 * maximum, an op that makes alpha of its own or resamples it, GPUs,
 * VKIMG_DROP_ALPHA=0) the result is the one without alpha_unused, alpha and all. */
static void test_blur_drop_alpha(vkimg_ctx *ctx)
{
    const bool cpu = gh_cpu_device(ctx);
    static const struct { int w, h, c; vkimg_fmt fmt; int spoil; } cs[] = {
        { 131, 67, 4, VKIMG_U8, 0 }, { 64, 40, 2, VKIMG_U8, 0 }, { 1, 1, 4, VKIMG_U8, 0 }, { 3, 1, 2, VKIMG_U8, 0 },
        { 5, 1, 4, VKIMG_U8, 0 },    { 1, 7, 4, VKIMG_U8, 0 },  { 97, 61, 4, VKIMG_U16, 0 },
        { 131, 67, 4, VKIMG_U8, 1 }, { 64, 40, 2, VKIMG_U8, 2 }, { 97, 61, 4, VKIMG_U16, 2 },
    };
    static const struct { const char *text; ref_step st[2]; int n; bool drops; } ps[] = {
        { "blur=sigma=3:radius=9", { BLUR(3.0, 9) }, 1, true },
        { "gray,blur=sigma=2", { GRAY(0), BLUR(2.0, -1) }, 2, true },
        { "blur=sigma=2,blur=sigma=1", { BLUR(2.0, -1), BLUR(1.0, -1) }, 2, true },
        { "flip,blur=1.5,transpose", { { 0 } }, 0, true },
        { "blur=2,rotate=30", { { 0 } }, 0, false },
        { "blur=1,resize=50%", { { 0 } }, 0, false },
    };
    for (size_t q = 0; q < sizeof ps / sizeof ps[0]; q++) {
        vkimg_err e;
        vkimg_pipeline *p = vkimg_pipeline_parse(ps[q].text, &e);
        CHECK(p != NULL, "parse '%s': %s", ps[q].text, e.msg);
        if (!p)
            continue;
        for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++)
            for (int off = 0; off < 2; off++) {
                const int c = cs[k].c;
                const size_t n = (size_t)cs[k].w * cs[k].h, ss = vkimg_fmt_size(cs[k].fmt);
                vkimg_image im = ref_random_image(cs[k].w, cs[k].h, c, cs[k].fmt, run_next_seed++), rgb;
                CHECK(vkimg_image_alloc(&rgb, cs[k].w, cs[k].h, c - 1, cs[k].fmt, &e) == 0, "alloc: %s", e.msg);
                unsigned char *d = im.data;
                for (size_t i = 0; i < n; i++) {
                    memset(d + (i * c + c - 1) * ss, 0xFF, ss);
                    memcpy((unsigned char *)rgb.data + i * (c - 1) * ss, d + i * c * ss, (c - 1) * ss);
                }
                if (cs[k].spoil) /* one alpha sample one below the maximum: the first or the last */
                    d[((cs[k].spoil == 1 ? 0 : n - 1) * c + c - 1) * ss] = 0xFE;
                if (off)
                    setenv("VKIMG_DROP_ALPHA", "0", 1);
                vkimg_image got = run_opts(ctx, p, ps[q].text, &im, true);
                unsetenv("VKIMG_DROP_ALPHA");
                const bool drops = cpu && ps[q].drops && !cs[k].spoil && !off;
                vkimg_image want = drops ? run_opts(ctx, p, ps[q].text, &rgb, false)
                                         : run_opts(ctx, p, ps[q].text, &im, false);
                const char *why = drops ? "the stripped image's run" : "the run keeping alpha";
                if (got.data && want.data) {
                    CHECK(got.c == want.c && got.w == want.w && got.h == want.h, "'%s' %dx%d c=%d %s%s%s: %dx%d c=%d, "
                          "%s gives %dx%d c=%d", ps[q].text, cs[k].w, cs[k].h, c, vkimg_fmt_name(cs[k].fmt),
                          cs[k].spoil ? ", one alpha below the maximum" : "", off ? ", VKIMG_DROP_ALPHA=0" : "", got.w,
                          got.h, got.c, why, want.w, want.h, want.c);
                    if (got.c == want.c && got.w == want.w && got.h == want.h)
                        CHECK(!memcmp(got.data, want.data, vkimg_image_bytes(&got)), "'%s' %dx%d c=%d %s%s%s: "
                              "bytes differ from %s", ps[q].text, cs[k].w, cs[k].h, c, vkimg_fmt_name(cs[k].fmt),
                              cs[k].spoil ? ", one alpha below the maximum" : "", off ? ", VKIMG_DROP_ALPHA=0" : "", why);
                }
                if (drops && ps[q].n && got.data) { /* and the references of the stripped image */
                    ref_img exp = ref_apply(&rgb, ps[q].st, ps[q].n);
                    char what[160];
                    snprintf(what, sizeof what, "'%s' %dx%d c=%d %s, alpha left behind", ps[q].text, cs[k].w, cs[k].h,
                             c, vkimg_fmt_name(cs[k].fmt));
                    run_check(G_BLUR, what, &got, &exp, -1);
                    ref_img_free(&exp);
                }
                vkimg_image_free(&got);
                vkimg_image_free(&want);
                vkimg_image_free(&rgb);
                ref_image_free(&im);
            }
        vkimg_pipeline_free(p);
    }
}

int main(void)
{
    static const gh_suite suites[] = { { "blur", test_blur },   { "box", test_blur_box },
                                       { "shapes", test_blur_shapes }, { "vec", test_blur_vec },
                                       { "opaque", test_blur_opaque }, { "drop_alpha", test_blur_drop_alpha } };
    run_next_seed = 153; /* any seed; this one gives the images of the former test_ops.c */
    return gh_main("test_blur", suites, 6);
}
