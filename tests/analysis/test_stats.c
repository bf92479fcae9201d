/* vkimg_image_stats against a straightforward CPU computation, on the device
 * with the validation layers on.
 *
 * u8/u16: min, max, integer sums and histograms exact; mean and stddev (two-pass
 * long double reference) within 1e-12 relative. f32: min/max/histograms exact,
 * sum/mean within 1e-12 relative, stddev within 1e-12 relative of the
 * reference plus 1e-12 * rms/stddev (the device computes var = Q/n - mean^2).
 * Both the subgroup and the shared-memory reduction paths run, and a smaller
 * workgroup size (device limits lowered in the context). The largest errors
 * seen are printed at the end. */
#include "t.h"
#include "vkimg/vkimg.h"
#include "gpu/gpu.h" /* to force the shared-memory fallback and smaller workgroups */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static vkimg_ctx *ctx;
static double max_rel_mean[3], max_rel_sd[3], max_rel_sum_f;
static int ncases;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fidx(vkimg_fmt f) { return f == VKIMG_U8 ? 0 : f == VKIMG_U16 ? 1 : 2; }

/* mode 0: uniform random; 1: near the top (u8 250..255); 2: constant max */
static void fill(vkimg_image *im, unsigned long long seed, int mode)
{
    size_t n = (size_t)im->w * im->h * im->c;
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        unsigned long long r = t_rand(&s);
        if (im->fmt == VKIMG_U8)
            ((uint8_t *)im->data)[i] = mode == 0 ? (uint8_t)(r >> 56) : mode == 1 ? (uint8_t)(250 + (r >> 32) % 6) : 255;
        else if (im->fmt == VKIMG_U16)
            ((uint16_t *)im->data)[i] = mode == 0 ? (uint16_t)(r >> 48) : mode == 1 ? (uint16_t)(65000 + (r >> 32) % 536) : 65535;
        else {
            /* mostly [0,1), some HDR and negative values (histogram clamping) */
            double u = (double)(r >> 11) / 9007199254740992.0;
            float x = (float)u;
            if ((r & 15) == 0)
                x = (float)(u * 4.0 - 1.5);
            ((float *)im->data)[i] = mode == 2 ? 1.0f : x;
        }
    }
}

static double sample(const vkimg_image *im, size_t i)
{
    if (im->fmt == VKIMG_U8)
        return ((const uint8_t *)im->data)[i];
    if (im->fmt == VKIMG_U16)
        return ((const uint16_t *)im->data)[i];
    return ((const float *)im->data)[i];
}

static int bin_of(const vkimg_image *im, double v)
{
    if (im->fmt == VKIMG_U8)
        return (int)v;
    if (im->fmt == VKIMG_U16)
        return (int)v >> 8;
    double b = floor(v * 256.0);
    return b < 0 ? 0 : b > 255 ? 255 : (int)b;
}

static double rel(double a, double b)
{
    if (a == b)
        return 0;
    double d = fabs(a - b), m = fmax(fabs(a), fabs(b));
    return m > 0 ? d / m : d;
}

static void check_image(const vkimg_image *im, bool hist, const char *label)
{
    vkimg_stats st;
    vkimg_err e = { 0 };
    vkimg_timing tm;
    int rc = vkimg_image_stats(ctx, im, hist, &st, &tm, &e);
    ncases++;
    CHECK(rc == 0, "%s: %s", label, e.msg);
    if (rc)
        return;
    CHECK(st.w == im->w && st.h == im->h && st.c == im->c && st.fmt == im->fmt && st.has_hist == hist, "%s: header",
          label);
    const size_t npx = (size_t)im->w * im->h;
    const int C = im->c;
    const bool isint = im->fmt != VKIMG_F32;
    const double L = im->fmt == VKIMG_U8 ? 255.0 : im->fmt == VKIMG_U16 ? 65535.0 : 1.0;
    static uint64_t h[4][256];
    for (int c = 0; c < C; c++) {
        uint64_t isum = 0, isumsq = 0;
        long double lsum = 0, lcomp = 0; /* Kahan: exact for integers, ~1e-19 for floats */
        double mn = INFINITY, mx = -INFINITY;
        memset(h[c], 0, sizeof h[c]);
        for (size_t p = 0; p < npx; p++) {
            double v = sample(im, p * C + c);
            if (isint) {
                isum += (uint64_t)v;
                isumsq += (uint64_t)v * (uint64_t)v;
            }
            long double y = v - lcomp, t = lsum + y;
            lcomp = (t - lsum) - y;
            lsum = t;
            mn = fmin(mn, v);
            mx = fmax(mx, v);
            h[c][bin_of(im, v)]++;
        }
        /* two-pass, Kahan-compensated long double: exact to ~1e-19 */
        long double mean = lsum / npx, ss = 0, comp = 0;
        for (size_t p = 0; p < npx; p++) {
            long double d = sample(im, p * C + c) - mean;
            long double y = d * d - comp, t = ss + y;
            comp = (t - ss) - y;
            ss = t;
        }
        double ref_mean = (double)(mean / L), ref_sd = (double)(sqrtl(ss / npx) / L);
        const vkimg_channel_stats *s = &st.ch[c];
        CHECK(s->min == mn / L && s->max == mx / L, "%s ch%d: min/max %.17g %.17g, want %.17g %.17g", label, c, s->min,
              s->max, mn / L, mx / L);
        double rm = rel(s->mean, ref_mean), rs = rel(s->stddev, ref_sd);
        int f = fidx(im->fmt);
        if (rm > max_rel_mean[f])
            max_rel_mean[f] = rm;
        if (rs > max_rel_sd[f])
            max_rel_sd[f] = rs;
        if (getenv("T_DEBUG") && rs > 1e-15)
            fprintf(stderr, "%s ch%d rs %.3g sd %.17g ref %.17g\n", label, c, rs, s->stddev, ref_sd);
        CHECK(rm <= 1e-12, "%s ch%d: mean %.17g, want %.17g (rel %.3g)", label, c, s->mean, ref_mean, rm);
        if (isint) {
            CHECK(s->isum == isum && s->isumsq == isumsq, "%s ch%d: isum %llu isumsq %llu, want %llu %llu", label, c,
                  (unsigned long long)s->isum, (unsigned long long)s->isumsq, (unsigned long long)isum,
                  (unsigned long long)isumsq);
            CHECK(s->sum == (double)isum / L, "%s ch%d: sum", label, c);
            CHECK(rs <= 1e-12, "%s ch%d: stddev %.17g, want %.17g (rel %.3g)", label, c, s->stddev, ref_sd, rs);
        } else {
            double rsum = rel(s->sum, (double)lsum);
            if (rsum > max_rel_sum_f)
                max_rel_sum_f = rsum;
            CHECK(rsum <= 1e-12, "%s ch%d: sum %.17g, want %.17g", label, c, s->sum, (double)lsum);
            /* var = Q/n - mean^2 loses ~log10(rms^2/var) digits */
            double rms = sqrt((double)(ss / npx) + (double)(mean * mean));
            double tol = 1e-12 * (ref_sd > 0 ? fmax(1.0, rms * rms / (ref_sd * ref_sd)) : 1.0);
            if (ref_sd > 0)
                CHECK(rs <= tol, "%s ch%d: stddev %.17g, want %.17g (rel %.3g, tol %.3g)", label, c, s->stddev, ref_sd,
                      rs, tol);
            else
                CHECK(s->stddev <= 1e-6 * rms, "%s ch%d: stddev %.17g of a constant channel", label, c, s->stddev);
            CHECK(s->isum == 0 && s->isumsq == 0, "%s ch%d: isum for float", label, c);
        }
        if (hist) {
            int bad = -1;
            for (int b = 0; b < 256 && bad < 0; b++)
                if (s->hist[b] != h[c][b])
                    bad = b;
            CHECK(bad < 0, "%s ch%d: histogram bin %d: %llu, want %llu", label, c, bad,
                  bad < 0 ? 0ull : (unsigned long long)s->hist[bad], bad < 0 ? 0ull : (unsigned long long)h[c][bad]);
        }
    }
    CHECK(tm.total_ms > 0 && tm.nstages >= 0, "%s: timing", label);
}

static void run(int w, int h, int c, vkimg_fmt fmt, bool hist, int mode, unsigned long long seed)
{
    vkimg_image im = { 0 };
    vkimg_err e = { 0 };
    if (vkimg_image_alloc(&im, w, h, c, fmt, &e)) {
        CHECK(0, "alloc %dx%dx%d: %s", w, h, c, e.msg);
        return;
    }
    fill(&im, seed, mode);
    char label[96];
    snprintf(label, sizeof label, "%dx%dx%d %s%s mode %d", w, h, c, vkimg_fmt_name(fmt), hist ? " hist" : "", mode);
    double t0 = now_ms();
    check_image(&im, hist, label);
    if (getenv("T_DEBUG"))
        fprintf(stderr, "%-40s %8.1f ms\n", label, now_ms() - t0);
    vkimg_image_free(&im);
}

/* Awkward sizes x 1..4 channels x u8/u16/f32, with histograms. all = false: a
 * few of them (each new format/channel combination compiles a pipeline). */
static void sweep(bool all)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 1000 }, { 1000, 1 }, { 3, 5 }, { 131, 67 }, { 257, 129 } };
    static const vkimg_fmt fmts[] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
    unsigned long long seed = 1;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int c = 1; c <= 4; c++)
            for (size_t f = 0; f < 3; f++, seed++)
                if (all || (size_t)c == 1 + (s + f) % 4)
                    run(sizes[s][0], sizes[s][1], c, fmts[f], true, 0, seed);
}

int main(void)
{
    vkimg_err e = { 0 };
    ctx = vkimg_ctx_create(&(vkimg_ctx_opts){ .validate = true }, &e);
    if (!ctx)
        return t_skip_no_device(e.msg);
    vki_limits saved = ctx->gpu.lim;

    /* 1. the device's own path (subgroups where supported) */
    sweep(true);
    run(1920, 1080, 3, VKIMG_U8, true, 0, 101);
    run(1920, 1080, 4, VKIMG_U16, true, 0, 102);
    run(1920, 1080, 1, VKIMG_F32, true, 0, 103);
    run(1920, 1080, 2, VKIMG_F32, false, 0, 104);
    run(64, 48, 3, VKIMG_F32, true, 2, 105); /* constant channel: stddev 0 */
    run(300, 200, 2, VKIMG_U16, true, 2, 106);
    /* a u8 channel whose sum exceeds 2^32 (8192*4096*~252.5 = 8.5e9) */
    run(8192, 4096, 1, VKIMG_U8, false, 1, 107);
    /* u16 near the top: sum of squares ~6.6e16 */
    run(4096, 2048, 1, VKIMG_U16, false, 1, 108);

    /* 2. shared-memory fallback (no subgroup arithmetic) */
    ctx->gpu.lim.subgroup_ops &= ~(uint32_t)VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
    sweep(false);
    run(1920, 1080, 3, VKIMG_U8, true, 0, 201);
    run(1920, 1080, 1, VKIMG_F32, true, 0, 202);

    /* 3. smaller workgroups (64 invocations) with little shared memory */
    ctx->gpu.lim = saved;
    ctx->gpu.lim.max_wg_invocations = 64;
    ctx->gpu.lim.max_shared = 64 * 8 + 4 * 256 * 4;
    run(257, 129, 4, VKIMG_U8, true, 0, 301);
    run(257, 129, 3, VKIMG_F32, true, 0, 302);
    ctx->gpu.lim.subgroup_ops &= ~(uint32_t)VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
    run(257, 129, 2, VKIMG_U16, true, 0, 303);
    ctx->gpu.lim = saved;

    /* 4. errors */
    {
        vkimg_image im = { 0 };
        vkimg_stats st;
        vkimg_image_alloc(&im, 4, 4, 1, VKIMG_U32, &e);
        int rc = vkimg_image_stats(ctx, &im, false, &st, NULL, &e);
        CHECK(rc == VKIMG_E_USAGE && strstr(e.msg, "u32"), "u32 image: rc %d, %s", rc, e.msg);
        vkimg_image_free(&im);
        vkimg_image none = { 0 };
        rc = vkimg_image_stats(ctx, &none, false, &st, NULL, &e);
        CHECK(rc != 0 && e.msg[0], "empty image: rc %d", rc);
    }

    printf("max relative error (mean / stddev): u8 %.3g / %.3g, u16 %.3g / %.3g, f32 %.3g / %.3g (f32 sum %.3g); "
           "%d images\n",
           max_rel_mean[0], max_rel_sd[0], max_rel_mean[1], max_rel_sd[1], max_rel_mean[2], max_rel_sd[2], max_rel_sum_f,
           ncases);
    CHECK(vkimg_ctx_validation_messages(ctx) == 0, "%d validation messages", vkimg_ctx_validation_messages(ctx));
    vkimg_ctx_destroy(ctx);
    return t_done("test_stats");
}
