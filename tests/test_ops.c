/* Every op against the independent double-precision CPU references (ref.c), on
 * the device (lavapipe in CI), with the validation layers on.
 *
 * Tolerances (errors after quantizing the reference once, at the end):
 *   U8 output:  <= 1 LSB (8-bit), and <= 0.51 LSB against the unrounded reference
 *   U16 output: <= 1 LSB (16-bit), and <= 0.6 LSB against the unrounded reference
 *   F32 output: <= 1e-5 absolute
 *   chains of copies, blur radius 0 without alpha: exact (0)
 * The max error found per op and output format is printed at the end. */
#include "t.h"
#include "ref.h"
#include "vkimg/vkimg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- bookkeeping */

enum { G_COPY, G_GRAY, G_BLUR, G_BOX, G_CHAIN, NGROUPS };
static const char *const group_name[NGROUPS] = { "copy", "gray", "blur", "blur-box", "chain" };

enum { F_U8, F_U16, F_F32, NF };
#define FMT_U8 (1u << F_U8)
#define FMT_U16 (1u << F_U16)
#define FMT_F32 (1u << F_F32)
#define FMT_ALL (FMT_U8 | FMT_U16 | FMT_F32)
static const vkimg_fmt slot_fmt[NF] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };

static const double tol_default[NF] = { 1.0, 1.0, 1e-5 };
/* U8/U16: the device's value against the unrounded reference, in LSBs. A
 * correctly rounded result is within 0.5 plus the kernel's float error (seen on
 * lavapipe: <= 0.0001 LSB at 8 bits, <= 0.03 LSB at 16 bits); this catches a
 * biased rounding (truncation: up to 1.0; floor(x + 0.4): up to 0.6) that the
 * 1-LSB check after rounding lets through. */
static const double raw_tol[NF] = { 0.51, 0.6, 0 };

static struct {
    double max_err[NF];
    double max_raw[NF]; /* u8/u16: error before rounding, in LSBs */
    double samples[NF], mismatch[NF];
    int runs[NF];
    char worst[NF][200];
} stats[NGROUPS];

static int ncases;
static char cur_case[160] = "(context creation)"; /* for validation messages */
static int nlogged;
static int verbose; /* VKIMG_TEST_VERBOSE=1: time of every case */
static uint64_t next_seed = 1;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time of the whole process (all threads: lavapipe runs on several). */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *fname(vkimg_fmt f)
{
    return f == VKIMG_U8 ? "u8" : f == VKIMG_U16 ? "u16" : f == VKIMG_F32 ? "f32" : "?";
}

/* The library's log: validation warnings and errors, with the case that was
 * running (the count is asserted at the end). */
static void log_cb(void *user, vkimg_log_level lvl, const char *msg)
{
    (void)user;
    if (lvl < VKIMG_LOG_WARN)
        return;
    if (nlogged++ < 20)
        fprintf(stderr, "[%s] %s\n", cur_case, msg);
}

/* ---------------------------------------------------------------- reference pipelines */

typedef enum { R_COPY, R_GRAY, R_BLUR, R_BOX } ref_kind;
typedef struct ref_step {
    ref_kind k;
    int weights;  /* gray */
    double sigma; /* blur */
    int radius;   /* blur; -1 = the op's auto default ceil(3 sigma) */
} ref_step;

#define COPY { R_COPY, 0, 0, 0 }
#define GRAY(wt) { R_GRAY, (wt), 0, 0 }
#define BLUR(s, r) { R_BLUR, 0, (s), (r) }
#define BOX(s) { R_BOX, 0, (s), 0 }

static ref_img ref_apply(const vkimg_image *in, const ref_step *st, int n)
{
    ref_img cur = ref_from_image(in);
    for (int i = 0; i < n; i++) {
        ref_img nx;
        switch (st[i].k) {
        case R_COPY:
            nx = ref_copy_d(&cur);
            break;
        case R_GRAY:
            nx = ref_gray_d(&cur, st[i].weights);
            break;
        case R_BOX: /* blur.c: the exact Gaussian below sigma 3 */
            nx = st[i].sigma < 3.0 ? ref_blur_d(&cur, st[i].sigma, (int)ceil(3.0 * st[i].sigma))
                                   : ref_box3_d(&cur, st[i].sigma);
            break;
        default: {
            int r = st[i].radius >= 0 ? st[i].radius : (int)ceil(3.0 * st[i].sigma);
            nx = ref_blur_d(&cur, st[i].sigma, r);
            break;
        }
        }
        ref_img_free(&cur);
        cur = nx;
    }
    return cur;
}

/* ---------------------------------------------------------------- one case */

/* Runs `text` on `in` once per output format in fmts and compares with the
 * reference composition of st[0..n). tol < 0: the defaults. */
static void run_case(vkimg_ctx *ctx, int group, const char *text, const ref_step *st, int n, const vkimg_image *in,
                     unsigned fmts, double tol)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "parse '%s': %s (pos %d)", text, e.msg, e.pos);
    if (!p)
        return;
    double t_ref = now_s();
    ref_img exp = ref_apply(in, st, n);
    t_ref = now_s() - t_ref;
    double t_dev = now_s();
    CHECK(vkimg_pipeline_out_channels(p, in->c) == exp.c, "'%s' c=%d: out_channels %d, reference has %d", text, in->c,
          vkimg_pipeline_out_channels(p, in->c), exp.c);
    for (int f = 0; f < NF; f++) {
        if (!(fmts & (1u << f)))
            continue;
        vkimg_run_opts o;
        memset(&o, 0, sizeof o);
        o.out_fmt = slot_fmt[f];
        vkimg_image out;
        memset(&out, 0, sizeof out);
        ncases++;
        snprintf(cur_case, sizeof cur_case, "%s %dx%d c=%d %s->%s", text, in->w, in->h, in->c, fname(in->fmt),
                 fname(slot_fmt[f]));
        int rc = vkimg_run(ctx, p, in, &o, &out, &e);
        CHECK(rc == 0, "%s '%s' %dx%d c=%d %s->%s: vkimg_run failed: %s", group_name[group], text, in->w, in->h, in->c,
              fname(in->fmt), fname(slot_fmt[f]), e.msg);
        if (rc == 0) {
            ref_cmp c;
            double err = ref_compare(&out, &exp, &c);
            double t = tol >= 0 ? tol : tol_default[f];
            CHECK(c.shape_ok, "%s '%s' %dx%d c=%d %s->%s: got %dx%d c=%d %s, reference %dx%d c=%d", group_name[group],
                  text, in->w, in->h, in->c, fname(in->fmt), fname(slot_fmt[f]), out.w, out.h, out.c, fname(out.fmt),
                  exp.w, exp.h, exp.c);
            CHECK(err <= t,
                  "%s '%s' %dx%d c=%d %s->%s: max abs error %.6g %s (tolerance %g) at pixel (x=%d, y=%d) channel %d: "
                  "expected %.9g (quantized %.9g), got %.9g",
                  group_name[group], text, in->w, in->h, in->c, fname(in->fmt), fname(slot_fmt[f]), err,
                  f == F_F32 ? "abs" : "LSB", t, c.x, c.y, c.ch, c.expected, c.expected_q, c.got);
            if (f != F_F32 && c.shape_ok)
                CHECK(c.max_raw_err <= raw_tol[f],
                      "%s '%s' %dx%d c=%d %s->%s: against the unrounded reference the error is %.4f LSB (limit %g: "
                      "correct rounding gives 0.5 + float error) at pixel (x=%d, y=%d) channel %d",
                      group_name[group], text, in->w, in->h, in->c, fname(in->fmt), fname(slot_fmt[f]), c.max_raw_err,
                      raw_tol[f], c.raw_x, c.raw_y, c.raw_ch);
            stats[group].runs[f]++;
            if (c.shape_ok && (err > stats[group].max_err[f] || !stats[group].worst[f][0]))
                snprintf(stats[group].worst[f], sizeof stats[group].worst[f], "'%s' %dx%d c=%d %s->%s (%d,%d) ch %d",
                         text, in->w, in->h, in->c, fname(in->fmt), fname(slot_fmt[f]), c.x, c.y, c.ch);
            if (err > stats[group].max_err[f])
                stats[group].max_err[f] = err;
            if (c.shape_ok) {
                if (c.max_raw_err > stats[group].max_raw[f])
                    stats[group].max_raw[f] = c.max_raw_err;
                stats[group].samples[f] += (double)c.nsamples;
                stats[group].mismatch[f] += (double)c.nmismatch;
            }
        }
        vkimg_image_free(&out);
    }
    t_dev = now_s() - t_dev;
    if (verbose)
        printf("    %-44s %4dx%-4d c=%d %s: reference %.3f s, device %.3f s\n", text, in->w, in->h, in->c,
               fname(in->fmt), t_ref, t_dev);
    ref_img_free(&exp);
    vkimg_pipeline_free(p);
}

/* A fresh random image of w x h x c in fmt, run through run_case. */
static void run_rand(vkimg_ctx *ctx, int group, const char *text, const ref_step *st, int n, int w, int h, int c,
                     vkimg_fmt in_fmt, unsigned fmts, double tol)
{
    vkimg_image in = ref_random_image(w, h, c, in_fmt, next_seed++);
    run_case(ctx, group, text, st, n, &in, fmts, tol);
    ref_image_free(&in);
}

/* ---------------------------------------------------------------- the tests */

typedef struct { int w, h; } size2;

/* 1x1, 1xN, Nx1, 3x5, primes, 257x129, larger than one tile both ways */
static const size2 sizes[] = {
    { 1, 1 }, { 1, 7 }, { 7, 1 }, { 3, 5 }, { 17, 13 }, { 131, 67 }, { 257, 129 }, { 600, 530 },
};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static void test_copy(vkimg_ctx *ctx)
{
    const ref_step s[] = { COPY };
    for (int i = 0; i < NSIZES; i++)
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_COPY, "copy", s, 1, sizes[i].w, sizes[i].h, c, VKIMG_U8,
                     sizes[i].w * sizes[i].h > 100000 ? (c % 2 ? FMT_U8 : FMT_F32) : FMT_ALL, -1);
    for (int c = 1; c <= 4; c++) {
        run_rand(ctx, G_COPY, "copy", s, 1, 17, 13, c, VKIMG_U16, FMT_ALL, -1);
        run_rand(ctx, G_COPY, "copy", s, 1, 17, 13, c, VKIMG_F32, FMT_ALL, -1);
    }
    run_rand(ctx, G_COPY, "copy", s, 1, 131, 67, 3, VKIMG_U16, FMT_U16, -1);
    run_rand(ctx, G_COPY, "copy", s, 1, 257, 129, 4, VKIMG_F32, FMT_F32, -1);
    run_rand(ctx, G_COPY, "copy", s, 1, 1920, 1080, 3, VKIMG_U8, FMT_U8, -1);
    run_rand(ctx, G_COPY, "copy", s, 1, 1920, 1080, 1, VKIMG_F32, FMT_F32, -1);
}

static void test_gray(vkimg_ctx *ctx)
{
    static const char *const txt[2] = { "gray=weights=bt601", "gray=weights=bt709" };
    const ref_step s[2][1] = { { GRAY(0) }, { GRAY(1) } };
    /* the default is bt601 */
    run_rand(ctx, G_GRAY, "gray", s[0], 1, 17, 13, 3, VKIMG_U8, FMT_U8 | FMT_F32, -1);
    for (int i = 0; i < NSIZES; i++)
        for (int c = 1; c <= 4; c++)
            for (int k = 0; k < 2; k++)
                run_rand(ctx, G_GRAY, txt[k], s[k], 1, sizes[i].w, sizes[i].h, c, VKIMG_U8,
                         sizes[i].w * sizes[i].h > 100000 ? FMT_U8 : (k ? FMT_U8 | FMT_F32 : FMT_ALL), -1);
    /* packed RGB8 path (U8, c = 3): widths not a multiple of 4, totals not a
     * multiple of 4 (and some that are); U8 output is the word-store path, F32
     * and U16 the float path */
    static const size2 packed[] = {
        { 1, 1 }, { 2, 1 }, { 3, 1 }, { 5, 1 }, { 1, 5 }, { 6, 1 }, { 7, 3 }, { 3, 3 },
        { 13, 1 }, { 9, 7 }, { 4, 1 }, { 8, 2 }, { 5, 4 }, { 255, 3 }, { 1023, 1 },
    };
    for (size_t i = 0; i < sizeof packed / sizeof packed[0]; i++)
        for (int k = 0; k < 2; k++)
            run_rand(ctx, G_GRAY, txt[k], s[k], 1, packed[i].w, packed[i].h, 3, VKIMG_U8, FMT_ALL, -1);
    /* U16 and F32 input */
    for (int c = 1; c <= 4; c++) {
        run_rand(ctx, G_GRAY, txt[c % 2], s[c % 2], 1, 17, 13, c, VKIMG_U16, FMT_ALL, -1);
        run_rand(ctx, G_GRAY, txt[c / 2 % 2], s[c / 2 % 2], 1, 17, 13, c, VKIMG_F32, FMT_ALL, -1);
    }
    run_rand(ctx, G_GRAY, txt[0], s[0], 1, 1, 1, 3, VKIMG_U16, FMT_ALL, -1);
    run_rand(ctx, G_GRAY, txt[1], s[1], 1, 131, 67, 3, VKIMG_F32, FMT_ALL, -1);
    /* full HD */
    run_rand(ctx, G_GRAY, txt[0], s[0], 1, 1920, 1080, 3, VKIMG_U8, FMT_U8, -1);
    run_rand(ctx, G_GRAY, txt[1], s[1], 1, 1920, 1080, 3, VKIMG_U8, FMT_F32, -1);
    run_rand(ctx, G_GRAY, txt[1], s[1], 1, 1920, 1080, 4, VKIMG_U8, FMT_U8, -1);
}

static void test_blur(vkimg_ctx *ctx)
{
    char t[96];
    /* explicit radii */
    static const struct { double sigma; int r; } ex[] = { { 0.5, 2 }, { 1.0, 3 }, { 2.5, 5 }, { 3.0, 9 } };
    for (size_t k = 0; k < sizeof ex / sizeof ex[0]; k++) {
        ref_step s[] = { BLUR(ex[k].sigma, ex[k].r) };
        snprintf(t, sizeof t, "blur=sigma=%g:radius=%d", ex[k].sigma, ex[k].r);
        for (int i = 0; i < NSIZES - 2; i++) /* up to 131x67 */
            for (int c = 1; c <= 4; c++)
                run_rand(ctx, G_BLUR, t, s, 1, sizes[i].w, sizes[i].h, c, VKIMG_U8,
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
            for (int i = 0; i < NSIZES - 1; i++)
                run_rand(ctx, G_BLUR, "blur=1.5", s, 1, sizes[i].w, sizes[i].h, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
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
        for (int i = 0; i < NSIZES - 1; i++)
            for (int c = 1; c <= 4; c++)
                run_rand(ctx, G_BOX, t, s, 1, sizes[i].w, sizes[i].h, c, VKIMG_U8,
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
        if (verbose || k == 0)
            printf("  box vs Gaussian sigma %5g: boxes r=%d,%d,%d (sigma %.3f), step-response error %.2f LSB, L1/2 %.2f LSB\n",
                   sg[k], rad[0], rad[1], rad[2], sqrt(var), 255 * step, 255 * l1 / 2);
        CHECK(step <= 0.01, "box approximation at sigma %g: step-response error %.4f over 0.01 (1%% promised)", sg[k], step);
        free(d.d);
        ref_img_free(&kb);
        ref_img_free(&kg);
    }
}

static void test_chains(vkimg_ctx *ctx)
{
    /* copy,copy,copy: exact in the input's format */
    {
        ref_step s[] = { COPY, COPY, COPY };
        static const vkimg_fmt fm[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
        for (int f = 0; f < 3; f++)
            for (int c = 1; c <= 4; c++) {
                run_rand(ctx, G_CHAIN, "copy,copy,copy", s, 3, 17, 13, c, fm[f], 1u << f, 0.0);
                run_rand(ctx, G_CHAIN, "copy,copy,copy", s, 3, 131, 67, c, fm[f], 1u << f, 0.0);
            }
        run_rand(ctx, G_CHAIN, "copy,copy,copy", s, 3, 1, 1, 4, VKIMG_U8, FMT_U8, 0.0);
    }
    /* blur=2,copy,blur=1: composition of the references, quantized once */
    {
        ref_step s[] = { BLUR(2.0, -1), COPY, BLUR(1.0, -1) };
        const char *t = "blur=2,copy,blur=1";
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_CHAIN, t, s, 3, 131, 67, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 1, 1, 4, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 7, 1, 2, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 1, 7, 3, VKIMG_U16, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 257, 129, 4, VKIMG_U8, FMT_U8, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 600, 530, 2, VKIMG_U8, FMT_U8, -1);
    }
    /* gray,blur=2 (gray of RGBA gives gray+alpha: the blur is alpha-aware) */
    {
        ref_step s[] = { GRAY(0), BLUR(2.0, -1) };
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 131, 67, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 1, 1, 3, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 5, 1, 3, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 7, 3, 3, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 17, 13, 4, VKIMG_F32, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 600, 530, 3, VKIMG_U8, FMT_U8, -1);
        ref_step s2[] = { GRAY(1), BLUR(1.0, 2), COPY };
        run_rand(ctx, G_CHAIN, "gray=weights=bt709,blur=sigma=1:radius=2,copy", s2, 3, 17, 13, 4, VKIMG_U16, FMT_ALL, -1);
        ref_step s3[] = { BLUR(1.0, -1), GRAY(0) };
        run_rand(ctx, G_CHAIN, "blur=1,gray", s3, 2, 131, 67, 4, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_CHAIN, "blur=1,gray", s3, 2, 131, 67, 3, VKIMG_U8, FMT_U8 | FMT_F32, -1);
    }
}

int main(void)
{
    double t0 = now_s();
    const char *ev = getenv("VKIMG_TEST_VERBOSE");
    verbose = ev && *ev && *ev != '0';
    int rf = ref_self_check();
    CHECK(rf == 0, "reference self-check: %d failures", rf);

    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_ctx_opts co;
    memset(&co, 0, sizeof co);
    co.validate = true;
    co.log = log_cb;
    vkimg_ctx *ctx = vkimg_ctx_create(&co, &e);
    if (!ctx)
        return t_skip_no_device(e.msg);
    printf("device: %s\n", vkimg_ctx_device_desc(ctx));

    static const struct { const char *name; void (*fn)(vkimg_ctx *); } suites[] = {
        { "copy", test_copy }, { "gray", test_gray }, { "blur", test_blur }, { "box", test_blur_box },
        { "chains", test_chains },
    };
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        double ts = now_s(), cs = cpu_s();
        int before = ncases, vm0 = vkimg_ctx_validation_messages(ctx);
        suites[i].fn(ctx);
        printf("  %-6s %4d runs in %.2f s (cpu %.2f s)\n", suites[i].name, ncases - before, now_s() - ts, cpu_s() - cs);
        int vm1 = vkimg_ctx_validation_messages(ctx);
        CHECK(vm1 == vm0, "%s: %d validation messages", suites[i].name, vm1 - vm0);
    }

    for (int g = 0; g < NGROUPS; g++) {
        int total = 0;
        for (int f = 0; f < NF; f++)
            total += stats[g].runs[f];
        printf("%s: max abs error", group_name[g]);
        const char *sep = " ";
        for (int f = 0; f < NF; f++) {
            if (!stats[g].runs[f])
                continue;
            if (f == F_F32)
                printf("%s%.3g (f32 out, %d runs)", sep, stats[g].max_err[f], stats[g].runs[f]);
            else
                printf("%s%g LSB (%s out, %d runs)", sep, stats[g].max_err[f], fname(slot_fmt[f]), stats[g].runs[f]);
            sep = ", ";
        }
        printf(" over %d cases\n", total);
        for (int f = 0; f < NF; f++)
            if (stats[g].runs[f] && f != F_F32)
                printf("    %s: before rounding max %.4f LSB; %.0f of %.0f samples (%.4f%%) off by 1 LSB\n", fname(slot_fmt[f]),
                       stats[g].max_raw[f], stats[g].mismatch[f], stats[g].samples[f],
                       100.0 * stats[g].mismatch[f] / (stats[g].samples[f] > 0 ? stats[g].samples[f] : 1));
        for (int f = 0; f < NF; f++)
            if (stats[g].runs[f] && stats[g].max_err[f] > 0)
                printf("    worst %s: %s\n", fname(slot_fmt[f]), stats[g].worst[f]);
    }

    int vm = vkimg_ctx_validation_messages(ctx);
    CHECK(vm == 0, "%d validation messages", vm);
    vkimg_ctx_destroy(ctx);
    printf("test_ops: %d runs, %.1f s (cpu %.1f s)\n", ncases, now_s() - t0, cpu_s());
    return t_done("test_ops");
}
