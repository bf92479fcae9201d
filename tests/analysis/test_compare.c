/* vkimg_compare against a double-precision CPU computation, on the device with
 * the validation layers on.
 *
 * MAE / RMSE / PSNR / max_err within 1e-6 relative; counts, the location of
 * the largest error and the verdicts exact (thresholds are placed between the
 * error values); SSIM within 1e-4 of a direct (non-separable) double
 * computation, identical images give 1 within 1e-6; difference images exact.
 * The subgroup and the shared-memory reduction paths both run. The largest
 * errors seen are printed at the end. */
#include "t.h"
#include "vkimg/vkimg.h"
#include "gpu/gpu.h" /* to force the shared-memory fallback */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vkimg_ctx *ctx;
static double max_rel_metric, max_ssim_err, max_ssim_one_err;

static double rel(double a, double b)
{
    if (a == b)
        return 0;
    double d = fabs(a - b), m = fmax(fabs(a), fabs(b));
    return m > 0 ? d / m : d;
}

static double norm(const vkimg_image *im, size_t i)
{
    if (im->fmt == VKIMG_U8)
        return ((const uint8_t *)im->data)[i] / 255.0;
    if (im->fmt == VKIMG_U16)
        return ((const uint16_t *)im->data)[i] / 65535.0;
    return ((const float *)im->data)[i];
}

static void mk(vkimg_image *im, int w, int h, int c, vkimg_fmt f)
{
    vkimg_err e = { 0 };
    if (vkimg_image_alloc(im, w, h, c, f, &e)) {
        fprintf(stderr, "alloc: %s\n", e.msg);
        exit(1);
    }
}

static void copy_img(vkimg_image *dst, const vkimg_image *src)
{
    mk(dst, src->w, src->h, src->c, src->fmt);
    memcpy(dst->data, src->data, vkimg_image_bytes(src));
}

/* random samples in [lo, hi] (u8/u16 raw units; f32: [lo, hi] / 255) */
static void fill(vkimg_image *im, unsigned long long seed, int lo, int hi)
{
    size_t n = (size_t)im->w * im->h * im->c;
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 7;
    for (size_t i = 0; i < n; i++) {
        unsigned long long r = t_rand(&s);
        int v = lo + (int)((r >> 33) % (unsigned long long)(hi - lo + 1));
        if (im->fmt == VKIMG_U8)
            ((uint8_t *)im->data)[i] = (uint8_t)v;
        else if (im->fmt == VKIMG_U16)
            ((uint16_t *)im->data)[i] = (uint16_t)v;
        else
            ((float *)im->data)[i] = (float)(v / 255.0 + (double)(r & 0xffff) / 65536.0 / 255.0);
    }
}

typedef struct {
    double mae, rmse, psnr, max_err;
    int mx, my, mc;
    uint64_t nfail, nwarn;
} ref_metrics;

static ref_metrics ref_compare(const vkimg_image *a, const vkimg_image *b, double fail, double warn)
{
    ref_metrics m = { 0 };
    const size_t npx = (size_t)a->w * a->h;
    const int C = a->c;
    double se = 0, se2 = 0, best = -1;
    size_t bi = 0;
    for (size_t p = 0; p < npx; p++) {
        bool f = false, w = false;
        for (int c = 0; c < C; c++) {
            size_t i = p * C + c;
            double e = fabs(norm(a, i) - norm(b, i));
            se += e;
            se2 += e * e;
            if (e > best) {
                best = e;
                bi = i;
            }
            f = f || e > fail;
            w = w || e > warn;
        }
        m.nfail += f;
        m.nwarn += w;
    }
    double N = (double)npx * C, mse = se2 / N;
    m.mae = se / N;
    m.rmse = sqrt(mse);
    m.psnr = mse > 0 ? 10 * log10(1 / mse) : INFINITY;
    m.max_err = best;
    m.mc = (int)(bi % C);
    m.mx = (int)(bi / C % a->w);
    m.my = (int)(bi / C / a->w);
    return m;
}

/* Direct 2D Gaussian-window SSIM in double (same definition as the library:
 * valid positions along axes >= 11, cut + renormalized window otherwise). */
static double ref_ssim(const vkimg_image *a, const vkimg_image *b)
{
    const int W = a->w, H = a->h, C = a->c;
    const int offx = W >= 11 ? 5 : 0, offy = H >= 11 ? 5 : 0, ow = W >= 11 ? W - 10 : W, oh = H >= 11 ? H - 10 : H;
    double g[11], gs = 0;
    for (int k = -5; k <= 5; k++)
        gs += g[k + 5] = exp(-k * k / (2 * 1.5 * 1.5));
    for (int k = 0; k < 11; k++)
        g[k] /= gs;
    const double C1 = 0.01 * 0.01, C2 = 0.03 * 0.03;
    double total = 0;
    for (int c = 0; c < C; c++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                int x = ox + offx, y = oy + offy;
                double ws = 0, sa = 0, sb = 0;
                for (int ky = -5; ky <= 5; ky++)
                    for (int kx = -5; kx <= 5; kx++)
                        if (x + kx >= 0 && x + kx < W && y + ky >= 0 && y + ky < H) {
                            double w = g[kx + 5] * g[ky + 5];
                            size_t i = ((size_t)(y + ky) * W + (x + kx)) * C + c;
                            ws += w;
                            sa += w * norm(a, i);
                            sb += w * norm(b, i);
                        }
                double mua = sa / ws, mub = sb / ws, saa = 0, sbb = 0, sab = 0;
                for (int ky = -5; ky <= 5; ky++)
                    for (int kx = -5; kx <= 5; kx++)
                        if (x + kx >= 0 && x + kx < W && y + ky >= 0 && y + ky < H) {
                            double w = g[kx + 5] * g[ky + 5];
                            size_t i = ((size_t)(y + ky) * W + (x + kx)) * C + c;
                            double da = norm(a, i) - mua, db = norm(b, i) - mub;
                            saa += w * da * da;
                            sbb += w * db * db;
                            sab += w * da * db;
                        }
                saa /= ws;
                sbb /= ws;
                sab /= ws;
                total += ((2 * mua * mub + C1) * (2 * sab + C2)) / ((mua * mua + mub * mub + C1) * (saa + sbb + C2));
            }
    return total / ((double)ow * oh * C);
}

static int cmp(const vkimg_image *a, const vkimg_image *b, const vkimg_compare_opts *o, vkimg_compare_result *r)
{
    vkimg_err e = { 0 };
    vkimg_timing tm;
    int rc = vkimg_compare(ctx, a, b, o, r, &tm, &e);
    if (rc && r->verdict != VKIMG_CMP_MISMATCH)
        fprintf(stderr, "vkimg_compare: %s\n", e.msg);
    return rc;
}

static void check_metrics(const char *label, const vkimg_compare_result *r, const ref_metrics *m)
{
    double d[4] = { rel(r->mae, m->mae), rel(r->rmse, m->rmse), rel(r->psnr, m->psnr), rel(r->max_err, m->max_err) };
    for (int i = 0; i < 4; i++)
        if (d[i] > max_rel_metric)
            max_rel_metric = d[i];
    CHECK(d[0] <= 1e-6, "%s: mae %.10g, want %.10g", label, r->mae, m->mae);
    CHECK(d[1] <= 1e-6, "%s: rmse %.10g, want %.10g", label, r->rmse, m->rmse);
    CHECK(d[2] <= 1e-6, "%s: psnr %.10g, want %.10g", label, r->psnr, m->psnr);
    CHECK(d[3] <= 1e-6, "%s: max_err %.10g, want %.10g", label, r->max_err, m->max_err);
    CHECK(r->max_x == m->mx && r->max_y == m->my && r->max_c == m->mc, "%s: max at (%d,%d,%d), want (%d,%d,%d)", label,
          r->max_x, r->max_y, r->max_c, m->mx, m->my, m->mc);
    CHECK(r->nfail == m->nfail && r->nwarn == m->nwarn, "%s: nfail %llu nwarn %llu, want %llu %llu", label,
          (unsigned long long)r->nfail, (unsigned long long)r->nwarn, (unsigned long long)m->nfail,
          (unsigned long long)m->nwarn);
}

static void test_identical(void)
{
    static const vkimg_fmt fmts[] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
    for (int f = 0; f < 3; f++) {
        vkimg_image a = { 0 }, b = { 0 };
        mk(&a, 97, 61, 1 + f, fmts[f]);
        fill(&a, 11 + f, 0, 255);
        copy_img(&b, &a);
        vkimg_compare_result r;
        vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
        o.ssim = true;
        int rc = cmp(&a, &b, f == 0 ? NULL : &o, &r);
        CHECK(rc == 0, "identical %s", vkimg_fmt_name(fmts[f]));
        CHECK(r.verdict == VKIMG_CMP_OK, "identical %s: verdict %d", vkimg_fmt_name(fmts[f]), r.verdict);
        CHECK(r.mae == 0 && r.rmse == 0 && isinf(r.psnr) && r.psnr > 0 && r.max_err == 0, "identical %s: metrics",
              vkimg_fmt_name(fmts[f]));
        CHECK(r.nfail == 0 && r.nwarn == 0 && r.pct_fail == 0, "identical: counts");
        CHECK(r.max_x == 0 && r.max_y == 0 && r.max_c == 0, "identical: max at (%d,%d,%d)", r.max_x, r.max_y, r.max_c);
        CHECK(r.pixels == 97 * 61 && r.channels == 1 + f, "identical: pixels/channels");
        CHECK(r.diff.data == NULL, "identical: no diff image asked for");
        if (f == 0)
            CHECK(isnan(r.ssim), "ssim not asked: %g", r.ssim);
        else {
            double d = fabs(r.ssim - 1);
            if (d > max_ssim_one_err)
                max_ssim_one_err = d;
            CHECK(r.ssim == 1.0, "identical %s: ssim %.17g, want exactly 1", vkimg_fmt_name(fmts[f]), r.ssim);
        }
        vkimg_image_free(&a);
        vkimg_image_free(&b);
    }
}

/* The same samples with no picture and no SSIM asked for: vkimg_compare runs
 * nothing and gives what the device gives for them (the run with a picture):
 * every metric and count, ignore regions, both metrics, 8 and 16 bits,
 * 1x1, 1xN, Nx1 and larger; and a pair that differs in one last sample still
 * runs (its difference counted). */
static void test_equal_fast(void)
{
    static const struct { int w, h, c; vkimg_fmt f; vkimg_metric m; } cs[] = {
        { 1, 1, 1, VKIMG_U8, VKIMG_METRIC_ABS },   { 1, 37, 3, VKIMG_U8, VKIMG_METRIC_YIQ },
        { 41, 1, 4, VKIMG_U16, VKIMG_METRIC_ABS }, { 67, 45, 2, VKIMG_U8, VKIMG_METRIC_YIQ },
        { 131, 7, 3, VKIMG_U16, VKIMG_METRIC_YIQ },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        char label[96];
        snprintf(label, sizeof label, "equal %dx%dx%d %s metric %d", cs[i].w, cs[i].h, cs[i].c,
                 vkimg_fmt_name(cs[i].f), (int)cs[i].m);
        vkimg_image a = { 0 }, b = { 0 };
        mk(&a, cs[i].w, cs[i].h, cs[i].c, cs[i].f);
        fill(&a, 5 + i, 0, 255);
        copy_img(&b, &a);
        vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
        o.metric = cs[i].m;
        vkimg_rect rect = { 0, 0, cs[i].w / 2, 0 };
        o.ignore = &rect;
        o.nignore = i % 2;
        vkimg_compare_result fast, dev;
        o.want_diff = false;
        int rc1 = cmp(&a, &b, &o, &fast);
        o.want_diff = true;
        int rc2 = cmp(&a, &b, &o, &dev);
        CHECK(rc1 == 0 && rc2 == 0, "%s: rc %d %d", label, rc1, rc2);
        CHECK(fast.verdict == dev.verdict && fast.verdict == VKIMG_CMP_OK && fast.ndiff == 0 && dev.ndiff == 0 &&
                  fast.naa == dev.naa && fast.nfail == dev.nfail && fast.nwarn == dev.nwarn &&
                  fast.compared == dev.compared && fast.ignored == dev.ignored && fast.pixels == dev.pixels &&
                  fast.channels == dev.channels && fast.width == dev.width && fast.outside == dev.outside,
              "%s: counts differ (compared %llu/%llu, ignored %llu/%llu)", label, (unsigned long long)fast.compared,
              (unsigned long long)dev.compared, (unsigned long long)fast.ignored, (unsigned long long)dev.ignored);
        CHECK(fast.mae == dev.mae && fast.rmse == dev.rmse && fast.max_err == dev.max_err &&
                  (fast.psnr == dev.psnr || (isinf(fast.psnr) && isinf(dev.psnr))) && isnan(fast.ssim) &&
                  fast.max_x == dev.max_x && fast.max_y == dev.max_y && fast.pct_fail == dev.pct_fail &&
                  fast.diff_ratio == dev.diff_ratio && !fast.diff.data,
              "%s: metrics differ (psnr %g/%g)", label, fast.psnr, dev.psnr);
        CHECK(dev.diff.data != NULL, "%s: want_diff made no picture", label);
        vkimg_image_free(&dev.diff);
        /* diff_unless_equal: no picture for the same samples, the same counts */
        o.diff_unless_equal = true;
        vkimg_compare_result un;
        CHECK(cmp(&a, &b, &o, &un) == 0 && !un.diff.data && un.verdict == VKIMG_CMP_OK && un.ndiff == 0 &&
                  un.compared == fast.compared && un.ignored == fast.ignored && un.mae == fast.mae,
              "%s: diff_unless_equal on the same samples (picture %p)", label, un.diff.data);
        vkimg_image_free(&un.diff);
        /* the last sample differs: counted, and pictured with diff_unless_equal */
        size_t n = vkimg_image_bytes(&b);
        ((uint8_t *)b.data)[n - 1] ^= 0x80;
        o.threshold = 0;
        CHECK(cmp(&a, &b, &o, &un) == 0 && un.ndiff == 1 && un.diff.data && un.verdict == VKIMG_CMP_FAIL,
              "%s: diff_unless_equal, one different sample: %llu differ, picture %p", label,
              (unsigned long long)un.ndiff, un.diff.data);
        vkimg_image_free(&un.diff);
        o.want_diff = false;
        o.diff_unless_equal = false;
        CHECK(cmp(&a, &b, &o, &fast) == 0 && fast.ndiff == 1 && fast.verdict == VKIMG_CMP_FAIL,
              "%s: one different sample: %llu differ", label, (unsigned long long)fast.ndiff);
        vkimg_image_free(&a);
        vkimg_image_free(&b);
    }
}

/* a: u8 in [0, 200]; b = a with k samples +d (1..40) and one +55 (the unique max). */
static void perturb(const vkimg_image *a, vkimg_image *b, int k, unsigned long long seed, size_t *max_i)
{
    size_t n = (size_t)b->w * b->h * b->c;
    unsigned long long s = seed;
    for (int j = 0; j < k; j++) {
        size_t i = (size_t)(t_rand(&s) % n);
        ((uint8_t *)b->data)[i] = (uint8_t)(((const uint8_t *)a->data)[i] + 1 + (int)(t_rand(&s) % 40));
    }
    size_t i = (size_t)(t_rand(&s) % n);
    ((uint8_t *)b->data)[i] = (uint8_t)(((const uint8_t *)a->data)[i] + 55);
    *max_i = i;
}

static void test_perturbed(const char *tag, int w, int h, int c, int k)
{
    char label[96];
    vkimg_image a = { 0 }, b = { 0 };
    mk(&a, w, h, c, VKIMG_U8);
    fill(&a, 21, 0, 200);
    copy_img(&b, &a);
    size_t mi;
    perturb(&a, &b, k, 77, &mi);
    vkimg_compare_result r;
    vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
    o.fail = 10.5 / 255;
    o.warn = 0.5 / 255;
    o.want_diff = true;
    ref_metrics m = ref_compare(&a, &b, o.fail, o.warn);
    snprintf(label, sizeof label, "%s perturbed %dx%dx%d k=%d", tag, w, h, c, k);
    CHECK(m.mx == (int)(mi / c % w) && m.my == (int)(mi / c / w), "%s: reference max is the planted one", label);
    CHECK(cmp(&a, &b, &o, &r) == 0, "%s", label);
    check_metrics(label, &r, &m);
    CHECK(r.verdict == VKIMG_CMP_FAIL, "%s: verdict %d", label, r.verdict);
    CHECK(fabs(r.pct_fail - 100.0 * m.nfail / ((double)w * h)) < 1e-12, "%s: pct_fail", label);
    /* diff image: |a-b| * 1 exactly */
    int bad = 0;
    CHECK(r.diff.data && r.diff.w == w && r.diff.h == h && r.diff.c == c && r.diff.fmt == VKIMG_U8, "%s: diff image",
          label);
    if (r.diff.data)
        for (size_t i = 0; i < (size_t)w * h * c; i++) {
            int d = abs((int)((uint8_t *)a.data)[i] - (int)((uint8_t *)b.data)[i]);
            bad += ((uint8_t *)r.diff.data)[i] != d;
        }
    CHECK(bad == 0, "%s: %d diff samples wrong (scale 1)", label, bad);
    vkimg_image_free(&r.diff);

    /* diff scale 4, clamped */
    o.diff_scale = 4;
    CHECK(cmp(&a, &b, &o, &r) == 0, "%s scale 4", label);
    bad = 0;
    if (r.diff.data)
        for (size_t i = 0; i < (size_t)w * h * c; i++) {
            int d = 4 * abs((int)((uint8_t *)a.data)[i] - (int)((uint8_t *)b.data)[i]);
            bad += ((uint8_t *)r.diff.data)[i] != (d > 255 ? 255 : d);
        }
    CHECK(r.diff.data && bad == 0, "%s: %d diff samples wrong (scale 4)", label, bad);
    vkimg_image_free(&r.diff);
    o.want_diff = false;
    o.diff_scale = 1;

    /* verdict transitions */
    const double npx = (double)w * h, pf = 100.0 * m.nfail / npx, pw = 100.0 * m.nwarn / npx;
    struct {
        double fail, failpercent, hardfail, warn, warnpercent, hardwarn;
        int want;
        const char *what;
    } cases[] = {
        { 1e-6, 0, INFINITY, 1e-6, 0, INFINITY, VKIMG_CMP_FAIL, "defaults" },
        { 60.5 / 255, 0, INFINITY, 60.5 / 255, 0, INFINITY, VKIMG_CMP_OK, "thresholds above every error" },
        { 60.5 / 255, 0, INFINITY, 0.5 / 255, 0, INFINITY, VKIMG_CMP_WARN, "warn below the errors" },
        { 10.5 / 255, pf * 1.01, INFINITY, 60.5 / 255, 0, INFINITY, VKIMG_CMP_OK, "failpercent just above" },
        { 10.5 / 255, pf * 0.99, INFINITY, 60.5 / 255, 0, INFINITY, VKIMG_CMP_FAIL, "failpercent just below" },
        { 10.5 / 255, pf, INFINITY, 60.5 / 255, 0, INFINITY, VKIMG_CMP_OK, "failpercent equal (not above)" },
        { 10.5 / 255, pf * 1.01, INFINITY, 0.5 / 255, pw * 1.01, INFINITY, VKIMG_CMP_OK, "warnpercent above" },
        { 10.5 / 255, pf * 1.01, INFINITY, 0.5 / 255, pw * 0.99, INFINITY, VKIMG_CMP_WARN, "warnpercent below" },
        { 60.5 / 255, 0, 54.5 / 255, 60.5 / 255, 0, INFINITY, VKIMG_CMP_FAIL, "hardfail below max" },
        { 60.5 / 255, 0, 55.5 / 255, 60.5 / 255, 0, INFINITY, VKIMG_CMP_OK, "hardfail above max" },
        { 60.5 / 255, 0, INFINITY, 60.5 / 255, 0, 54.5 / 255, VKIMG_CMP_WARN, "hardwarn below max" },
        { 60.5 / 255, 100, 54.5 / 255, 60.5 / 255, 0, 54.5 / 255, VKIMG_CMP_FAIL, "hardfail wins over warn" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vkimg_compare_opts q = VKIMG_COMPARE_DEFAULTS;
        q.fail = cases[i].fail;
        q.failpercent = cases[i].failpercent;
        q.hardfail = cases[i].hardfail;
        q.warn = cases[i].warn;
        q.warnpercent = cases[i].warnpercent;
        q.hardwarn = cases[i].hardwarn;
        int rc = cmp(&a, &b, &q, &r);
        CHECK(rc == 0 && r.verdict == cases[i].want, "%s: %s: verdict %d, want %d", label, cases[i].what, r.verdict,
              cases[i].want);
        ref_metrics mm = ref_compare(&a, &b, q.fail, q.warn);
        CHECK(r.nfail == mm.nfail && r.nwarn == mm.nwarn, "%s: %s: counts", label, cases[i].what);
    }
    vkimg_image_free(&a);
    vkimg_image_free(&b);
}

static void test_mixed_formats(void)
{
    vkimg_image a = { 0 }, b = { 0 };
    mk(&a, 53, 29, 3, VKIMG_U8);
    fill(&a, 31, 0, 255);
    mk(&b, 53, 29, 3, VKIMG_U16);
    for (size_t i = 0; i < 53 * 29 * 3; i++)
        ((uint16_t *)b.data)[i] = (uint16_t)(((uint8_t *)a.data)[i] * 257);
    vkimg_compare_result r;
    CHECK(cmp(&a, &b, NULL, &r) == 0 && r.verdict == VKIMG_CMP_OK && r.max_err < 1e-6,
          "u8 vs u16 (v * 257): verdict %d max_err %g", r.verdict, r.max_err);
    /* perturb the u16 one by non-multiples of 257 */
    unsigned long long s = 5;
    for (int j = 0; j < 200; j++) {
        size_t i = (size_t)(t_rand(&s) % (53 * 29 * 3));
        uint16_t *p = (uint16_t *)b.data + i;
        *p = (uint16_t)(*p > 30000 ? *p - 1000 - j : *p + 1000 + 3 * j);
    }
    vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
    o.fail = 0.02;
    o.warn = 0.01;
    ref_metrics m = ref_compare(&a, &b, o.fail, o.warn);
    CHECK(cmp(&a, &b, &o, &r) == 0, "u8 vs u16 perturbed");
    check_metrics("u8 vs u16 perturbed", &r, &m);
    vkimg_image_free(&a);
    vkimg_image_free(&b);
}

/* two u16 images (the word-load path for 16 bits), 37x23 (a tail of 3 pixels):
 * metrics, counts and the diff image (round(min(1, d/65535 * scale) * 255)) */
static void test_u16(void)
{
    vkimg_image a = { 0 }, b = { 0 };
    mk(&a, 37, 23, 3, VKIMG_U16);
    fill(&a, 61, 0, 60000);
    copy_img(&b, &a);
    unsigned long long s = 17;
    size_t n = 37 * 23 * 3;
    for (int j = 0; j < 300; j++) {
        size_t i = (size_t)(t_rand(&s) % n);
        ((uint16_t *)b.data)[i] = (uint16_t)(((uint16_t *)a.data)[i] + 1 + t_rand(&s) % 5000);
    }
    ((uint16_t *)b.data)[n - 2] = (uint16_t)(((uint16_t *)a.data)[n - 2] + 5500); /* unique max, in the tail */
    vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
    o.fail = 2000.5 / 65535;
    o.warn = 100.5 / 65535;
    o.want_diff = true;
    o.diff_scale = 3;
    ref_metrics m = ref_compare(&a, &b, o.fail, o.warn);
    vkimg_compare_result r;
    CHECK(cmp(&a, &b, &o, &r) == 0, "u16");
    check_metrics("u16 vs u16", &r, &m);
    CHECK(m.mx == 36 && m.my == 22 && m.mc == 1, "u16: planted max");
    int bad = 0;
    for (size_t i = 0; r.diff.data && i < n; i++) {
        double d = fabs((double)((uint16_t *)a.data)[i] - ((uint16_t *)b.data)[i]) / 65535 * 3;
        bad += ((uint8_t *)r.diff.data)[i] != (uint8_t)floor(fmin(d, 1.0) * 255 + 0.5);
    }
    CHECK(r.diff.data && bad == 0, "u16: %d diff samples wrong", bad);
    vkimg_image_free(&r.diff);
    vkimg_image_free(&a);
    vkimg_image_free(&b);
}

static void test_float(void)
{
    vkimg_image a = { 0 }, b = { 0 };
    mk(&a, 77, 45, 4, VKIMG_F32);
    fill(&a, 41, 0, 255);
    copy_img(&b, &a);
    unsigned long long s = 9;
    float *pb = b.data;
    for (size_t i = 0; i < 77 * 45 * 4; i++)
        pb[i] += (float)(((double)(t_rand(&s) >> 11) / 9007199254740992.0 - 0.5) * 0.01);
    pb[1234] += 0.25f; /* unique max */
    vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
    o.fail = 0.004;
    o.warn = 0.003;
    ref_metrics m = ref_compare(&a, &b, o.fail, o.warn);
    vkimg_compare_result r;
    CHECK(cmp(&a, &b, &o, &r) == 0, "f32");
    check_metrics("f32", &r, &m);

    /* ties: equal errors (exact in fp32) at several places -> the smallest index wins */
    vkimg_image_free(&b);
    copy_img(&b, &a);
    pb = b.data;
    size_t at[] = { 9000, 4321, 13000, 4322 };
    for (size_t j = 0; j < 4; j++) {
        ((float *)a.data)[at[j]] = 0.25f;
        pb[at[j]] = 0.75f;
    }
    CHECK(cmp(&a, &b, &o, &r) == 0 && r.max_err == 0.5 && r.max_x == (int)(4321 / 4 % 77) &&
              r.max_y == (int)(4321 / 4 / 77) && r.max_c == 4321 % 4,
          "ties: max %g at (%d,%d,%d)", r.max_err, r.max_x, r.max_y, r.max_c);
    vkimg_image_free(&a);
    vkimg_image_free(&b);
}

static void test_mismatch(void)
{
    vkimg_image a = { 0 }, b = { 0 }, c = { 0 };
    mk(&a, 64, 64, 3, VKIMG_U8);
    mk(&b, 64, 63, 3, VKIMG_U8);
    mk(&c, 64, 64, 4, VKIMG_U8);
    vkimg_compare_result r;
    vkimg_err e = { 0 };
    int rc = vkimg_compare(ctx, &a, &b, NULL, &r, NULL, &e);
    CHECK(rc == VKIMG_E_USAGE && r.verdict == VKIMG_CMP_MISMATCH && strstr(e.msg, "64x64") && strstr(e.msg, "64x63"),
          "size mismatch: rc %d verdict %d: %s", rc, r.verdict, e.msg);
    rc = vkimg_compare(ctx, &a, &c, NULL, &r, NULL, &e);
    CHECK(rc == VKIMG_E_USAGE && r.verdict == VKIMG_CMP_MISMATCH && strstr(e.msg, "3 channel") &&
              strstr(e.msg, "4 channel"),
          "channel mismatch: rc %d verdict %d: %s", rc, r.verdict, e.msg);
    vkimg_image_free(&a);
    vkimg_image_free(&b);
    vkimg_image_free(&c);
}

static void test_ssim(void)
{
    static const struct {
        int w, h, c;
        vkimg_fmt f;
    } cs[] = {
        { 40, 30, 2, VKIMG_U8 }, { 23, 17, 3, VKIMG_F32 }, { 7, 5, 1, VKIMG_U8 },   { 50, 9, 1, VKIMG_U16 },
        { 11, 11, 4, VKIMG_U8 }, { 1, 1, 1, VKIMG_U8 },   { 67, 41, 1, VKIMG_U8 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        vkimg_image a = { 0 }, b = { 0 };
        mk(&a, cs[i].w, cs[i].h, cs[i].c, cs[i].f);
        int top = cs[i].f == VKIMG_U16 ? 65535 : 255;
        fill(&a, 51 + i, 0, top);
        if (i == 6) /* smooth: a ramp, so that SSIM is not near 0 */
            for (int y = 0; y < cs[i].h; y++)
                for (int x = 0; x < cs[i].w; x++)
                    ((uint8_t *)a.data)[y * cs[i].w + x] = (uint8_t)(3 * x + 2 * y);
        copy_img(&b, &a);
        size_t n = (size_t)cs[i].w * cs[i].h * cs[i].c;
        unsigned long long s = 3 + i;
        for (size_t j = 0; j < n; j++) {
            int d = (int)(t_rand(&s) % 21) - 10;
            if (b.fmt == VKIMG_U8) {
                int v = ((uint8_t *)b.data)[j] + d;
                ((uint8_t *)b.data)[j] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            } else if (b.fmt == VKIMG_U16) {
                int v = ((uint16_t *)b.data)[j] + d * 300;
                ((uint16_t *)b.data)[j] = (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v);
            } else
                ((float *)b.data)[j] += d / 255.0f;
        }
        vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
        o.ssim = true;
        vkimg_compare_result r;
        CHECK(cmp(&a, &b, &o, &r) == 0, "ssim %dx%dx%d", cs[i].w, cs[i].h, cs[i].c);
        double want = ref_ssim(&a, &b), d = fabs(r.ssim - want);
        if (d > max_ssim_err)
            max_ssim_err = d;
        CHECK(d <= 1e-4, "ssim %dx%dx%d %s: %.8f, want %.8f", cs[i].w, cs[i].h, cs[i].c, vkimg_fmt_name(cs[i].f), r.ssim,
              want);
        CHECK(cmp(&a, &a, &o, &r) == 0 && r.ssim == 1.0, "ssim of identical %dx%d: %.17g, want exactly 1", cs[i].w,
              cs[i].h, r.ssim);
        if (fabs(r.ssim - 1) > max_ssim_one_err)
            max_ssim_one_err = fabs(r.ssim - 1);
        vkimg_image_free(&a);
        vkimg_image_free(&b);
    }
}

int main(void)
{
    vkimg_err e = { 0 };
    ctx = vkimg_ctx_create(&(vkimg_ctx_opts){ .validate = true }, &e);
    if (!ctx)
        return t_skip_no_device(e.msg);

    test_identical();
    test_equal_fast();
    test_perturbed("subgroup", 131, 67, 4, 300);
    test_perturbed("subgroup", 1920, 1080, 3, 5000);
    test_mixed_formats();
    test_u16();
    test_float();
    test_mismatch();
    test_ssim();

    /* shared-memory fallback */
    ctx->gpu.lim.subgroup_ops &= ~(uint32_t)VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
    test_perturbed("shared", 257, 129, 3, 800);
    test_u16();
    test_ssim();

    printf("max relative error of MAE/RMSE/PSNR/max_err: %.3g; SSIM: %.3g (identical: %.3g)\n", max_rel_metric,
           max_ssim_err, max_ssim_one_err);
    CHECK(vkimg_ctx_validation_messages(ctx) == 0, "%d validation messages", vkimg_ctx_validation_messages(ctx));
    vkimg_ctx_destroy(ctx);
    return t_done("test_compare");
}
