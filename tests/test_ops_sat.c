/* The summed-area-table family (integral, boxblur, threshold) and normalize /
 * equalize on the device (lavapipe in CI) against the independent CPU
 * references of ref_sat.c, with the validation layers on.
 *
 * What is exact and what is not:
 *   integral, boxblur, threshold (all modes), equalize: integer arithmetic on
 *     the input's integer levels: bit-exact (tolerance 0).
 *   normalize: float on the device: <= 1 LSB of round((v - min) / (max - min) * 255).
 *   chains: intermediates are f32 on the device; an op that works on integer
 *     levels quantizes them (floor(x * 255 + 0.5)). Where the exact value of an
 *     intermediate lies within float error of a rounding tie the level may be
 *     either neighbour; the references compute the set of possible levels
 *     (an interval) and the result must lie in what that set allows:
 *       gray,boxblur=3:     the luma is a multiple of 1e-4 level, ambiguous only
 *                           within 3e-4 of a tie; result in [mean(lo), mean(hi)]
 *                           and <= 1 LSB from the nominal mean.
 *       normalize,equalize: channel spans (max - min) are odd, so no exact ties:
 *                           the levels are decided (checked) and equalize exact.
 *       blur=2,threshold=otsu: levels within 2e-3 of a tie are ambiguous; Otsu's
 *                           thresholds must be the same whichever way they go
 *                           (checked), decided samples exact, the undecidable
 *                           ones (level straddles the threshold) counted.
 * The max error per op is printed at the end. */
#include "t.h"
#include "ref_sat.h"
#include "vkimg/vkimg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- bookkeeping */

enum { S_INTEGRAL, S_BOXBLUR, S_THR_VALUE, S_THR_ADAPTIVE, S_THR_OTSU, S_NORMALIZE, S_EQUALIZE,
       S_CH_GRAYBOX, S_CH_NORMEQ, S_CH_BLUROTSU, NSTATS };
static const char *const stat_name[NSTATS] = {
    "integral", "boxblur", "threshold=value", "threshold=adaptive", "threshold=otsu", "normalize", "equalize",
    "chain gray,boxblur=3", "chain normalize,equalize", "chain blur=2,threshold=otsu",
};
static struct {
    double max_err;
    int cases;
    double samples, nonzero, undecided;
    char worst[320];
} stats[NSTATS];

static char cur_case[200] = "(context creation)";
static int nlogged, nruns;
static unsigned long long seed = 0x9e3779b97f4a7c15ull;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void log_cb(void *user, vkimg_log_level lvl, const char *msg)
{
    (void)user;
    if (lvl < VKIMG_LOG_WARN)
        return;
    if (nlogged++ < 20)
        fprintf(stderr, "[%s] %s\n", cur_case, msg);
}

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s);
    if (!p) {
        fprintf(stderr, "test_ops_sat: out of memory\n");
        abort();
    }
    return p;
}

static const char *fmt_s(vkimg_fmt f)
{
    switch (f) {
    case VKIMG_U8: return "u8";
    case VKIMG_U16: return "u16";
    case VKIMG_F16: return "f16";
    case VKIMG_F32: return "f32";
    case VKIMG_U32: return "u32";
    case VKIMG_U64: return "u64";
    }
    return "?";
}

static uint32_t fmt_max(vkimg_fmt f) { return f == VKIMG_U16 ? 65535u : 255u; }

/* ---------------------------------------------------------------- images */

/* Value distributions of the test images. */
typedef enum { D_UNIFORM, D_BIMODAL, D_NEAR_TOP } dist_kind;

/* A random w x h x c image of fmt (U8 or U16); channel k uniform in
 * [lo[k], hi[k]] (D_UNIFORM), or two clusters (D_BIMODAL). With force_ends and
 * at least 2 pixels, pixel 0 holds lo and pixel 1 hi in every channel (so the
 * channel's extremes are exactly lo and hi). */
static vkimg_image make_image(int w, int h, int c, vkimg_fmt fmt, dist_kind d, const uint32_t lo[4],
                              const uint32_t hi[4], bool force_ends)
{
    vkimg_image im;
    vkimg_err e;
    memset(&e, 0, sizeof e);
    if (vkimg_image_alloc(&im, w, h, c, fmt, &e)) {
        fprintf(stderr, "vkimg_image_alloc %dx%dx%d: %s\n", w, h, c, e.msg);
        abort();
    }
    size_t np = (size_t)w * h;
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < c; k++) {
            uint64_t r = t_rand(&seed);
            uint32_t span = hi[k] - lo[k] + 1, v;
            if (d == D_BIMODAL) {
                /* clusters around lo + span/4 and lo + 3 span/4, 40%/60% */
                uint32_t centre = lo[k] + (((r >> 60) & 15) < 6 ? span / 4 : 3 * span / 4);
                uint32_t spread = span / 8 + 1;
                int64_t x = (int64_t)centre + (int64_t)((r >> 8) % (2 * spread + 1)) - (int64_t)spread;
                if (x < (int64_t)lo[k])
                    x = lo[k];
                if (x > (int64_t)hi[k])
                    x = hi[k];
                v = (uint32_t)x;
            } else {
                v = lo[k] + (uint32_t)((r >> 11) % span);
            }
            if (force_ends && np >= 2 && p < 2)
                v = p == 0 ? lo[k] : hi[k];
            if (fmt == VKIMG_U8)
                ((uint8_t *)im.data)[p * c + k] = (uint8_t)v;
            else
                ((uint16_t *)im.data)[p * c + k] = (uint16_t)v;
        }
    return im;
}

static vkimg_image make_full(int w, int h, int c, vkimg_fmt fmt, dist_kind d)
{
    uint32_t m = fmt_max(fmt);
    const uint32_t lo[4] = { 0, 0, 0, 0 }, hi[4] = { m, m, m, m };
    return make_image(w, h, c, fmt, d, lo, hi, false);
}

static uint64_t sample_at(const vkimg_image *im, size_t i)
{
    switch (im->fmt) {
    case VKIMG_U8: return ((const uint8_t *)im->data)[i];
    case VKIMG_U16: return ((const uint16_t *)im->data)[i];
    case VKIMG_U32: return ((const uint32_t *)im->data)[i];
    case VKIMG_U64: return ((const uint64_t *)im->data)[i];
    default: return 0;
    }
}

static size_t nsamples(const vkimg_image *im) { return (size_t)im->w * im->h * im->c; }

/* The integer levels of a U8/U16 image. */
static uint32_t *levels_of(const vkimg_image *im)
{
    size_t n = nsamples(im);
    uint32_t *q = xcalloc(n, sizeof *q);
    for (size_t i = 0; i < n; i++)
        q[i] = (uint32_t)sample_at(im, i);
    return q;
}

/* Normalized doubles of a U8/U16 image. */
static double *normalized_of(const vkimg_image *im)
{
    size_t n = nsamples(im);
    double *v = xcalloc(n, sizeof *v);
    double m = fmt_max(im->fmt);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)sample_at(im, i) / m;
    return v;
}

static double *u32_to_double(const uint32_t *q, size_t n)
{
    double *d = xcalloc(n, sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = q[i];
    return d;
}

/* The level a device quantizes x (normalized) to, floor(clamp(x) * m + 0.5),
 * and the interval of levels float error can give: lo < hi where x * m is
 * within win of a tie. */
static uint32_t quantize(double x, double m, double win, uint32_t *lo, uint32_t *hi)
{
    double l = (x < 0 ? 0 : x > 1 ? 1 : x) * m;
    uint32_t nom = (uint32_t)floor(l + 0.5);
    double f = l - floor(l);
    if (fabs(f - 0.5) < win) {
        *lo = (uint32_t)floor(l);
        *hi = *lo + 1;
    } else {
        *lo = *hi = nom;
    }
    return nom;
}

/* ---------------------------------------------------------------- running */

static const char *sz(const vkimg_image *in)
{
    static char b[64];
    snprintf(b, sizeof b, "%s %dx%d c=%d", fmt_s(in->fmt), in->w, in->h, in->c);
    return b;
}

/* Parses and runs text on in; 0 on success (failures are CHECKed). */
static int run_text(vkimg_ctx *ctx, const char *text, const vkimg_image *in, vkimg_fmt out_fmt, vkimg_image *out)
{
    memset(out, 0, sizeof *out);
    vkimg_err e;
    memset(&e, 0, sizeof e);
    snprintf(cur_case, sizeof cur_case, "%s on %s", text, sz(in));
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "[%s] parse: %s (pos %d)", cur_case, e.msg, e.pos);
    if (!p)
        return -1;
    vkimg_run_opts o;
    memset(&o, 0, sizeof o);
    o.out_fmt = out_fmt;
    nruns++;
    int rc = vkimg_run(ctx, p, in, &o, out, &e);
    CHECK(rc == 0, "[%s] vkimg_run: %s", cur_case, e.msg);
    vkimg_pipeline_free(p);
    return rc ? -1 : 0;
}

/* Compares got (fmt, w x h x c) with the expected values ex (output units; the
 * nominal result is floor(ex + 0.5)). Without lo/hi a sample passes if it is
 * within tol of the nominal result. With lo/hi (tol unused) the sample must lie
 * in [lo, hi] (lo == hi: exact); samples with hi - lo > 1 (a binary result
 * whose input level was undecided) are counted as undecidable and left out of
 * the error. */
static void check_out(int sid, const vkimg_image *got, int w, int h, int c, vkimg_fmt fmt, const double *ex,
                      const uint32_t *lo, const uint32_t *hi, double tol)
{
    stats[sid].cases++;
    bool shape = got->data && got->w == w && got->h == h && got->c == c && got->fmt == fmt;
    CHECK(shape, "[%s] %s: got %dx%d c=%d %s, expected %dx%d c=%d %s", cur_case, stat_name[sid], got->w, got->h,
          got->c, fmt_s(got->fmt), w, h, c, fmt_s(fmt));
    if (!shape)
        return;
    size_t n = (size_t)w * h * c, nbad = 0, nnz = 0, nund = 0, worst = 0;
    double maxe = 0;
    for (size_t i = 0; i < n; i++) {
        double g = (double)sample_at(got, i), nom = floor(ex[i] + 0.5);
        double err = fabs(g - nom);
        bool bad;
        if (lo) {
            /* the nominal value lies in [lo, hi]; a sample in the interval is
             * within hi - lo of it */
            bad = g < lo[i] || g > hi[i];
            if (hi[i] - lo[i] > 1) {
                nund++;
                err = bad ? err : 0;
            }
        } else {
            bad = err > tol;
        }
        if (err > 0)
            nnz++;
        if (err > maxe) {
            maxe = err;
            worst = i;
        }
        if (bad && ++nbad <= 8) {
            size_t p = i / (size_t)c;
            fprintf(stderr, "  MISMATCH [%s] %s: pixel (x=%zu, y=%zu) channel %zu: expected %.6g", cur_case,
                    stat_name[sid], p % (size_t)w, p / (size_t)w, i % (size_t)c, ex[i]);
            if (lo)
                fprintf(stderr, " (allowed %u..%u)", lo[i], hi[i]);
            fprintf(stderr, ", got %.0f\n", g);
        }
    }
    CHECK(nbad == 0, "[%s] %s: %zu of %zu samples wrong (max abs error %g, tolerance %g)", cur_case, stat_name[sid],
          nbad, n, maxe, tol);
    stats[sid].samples += (double)n;
    stats[sid].nonzero += (double)nnz;
    stats[sid].undecided += (double)nund;
    if (maxe > stats[sid].max_err || !stats[sid].worst[0]) {
        size_t p = worst / (size_t)c;
        snprintf(stats[sid].worst, sizeof stats[sid].worst, "%s, pixel (%zu,%zu) ch %zu", cur_case, p % (size_t)w,
                 p / (size_t)w, worst % (size_t)c);
    }
    if (maxe > stats[sid].max_err)
        stats[sid].max_err = maxe;
}

/* Integer expected values (levels of the output format). */
static void check_exact(int sid, const vkimg_image *got, int w, int h, int c, vkimg_fmt fmt, const uint32_t *ex)
{
    size_t n = (size_t)w * h * c;
    double *d = u32_to_double(ex, n);
    check_out(sid, got, w, h, c, fmt, d, NULL, NULL, 0.0);
    free(d);
}

/* ---------------------------------------------------------------- sizes */

typedef struct { int w, h; } size2;
/* 1x1, 1xN, Nx1, 3x5, primes, and larger than one scan segment (1024 texels on
 * lavapipe: 256 invocations x 4) and one column band (32 rows) both ways */
static const size2 sizes[] = {
    { 1, 1 }, { 1, 2049 }, { 2049, 1 }, { 3, 5 }, { 131, 67 }, { 257, 129 }, { 1100, 1030 }, { 3000, 40 }, { 40, 3000 },
};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
static bool is_large(int i) { return sizes[i].w * sizes[i].h > 100000; }

/* Channel counts to run at size i for variant v: all four on small sizes, one
 * (rotating with v) on the large ones. */
static int chans_for(int i, int v, int out[4])
{
    if (!is_large(i)) {
        for (int c = 0; c < 4; c++)
            out[c] = c + 1;
        return 4;
    }
    out[0] = 1 + (i + v) % 4;
    return 1;
}

/* ---------------------------------------------------------------- integral */

/* Compares the device's table with the reference built row by row (one row of
 * uint64 in memory). Returns the total of channel 0, S(w-1, h-1, 0). */
static uint64_t check_integral(const vkimg_image *in, const vkimg_image *got)
{
    int w = in->w, h = in->h, c = in->c;
    stats[S_INTEGRAL].cases++;
    bool shape = got->data && got->w == w && got->h == h && got->c == c && got->fmt == VKIMG_U64;
    CHECK(shape, "[%s] integral: got %dx%d c=%d %s, expected %dx%d c=%d u64", cur_case, got->w, got->h, got->c,
          fmt_s(got->fmt), w, h, c);
    if (!shape)
        return 0;
    size_t rs = (size_t)w * c;
    uint64_t *acc = xcalloc(rs, sizeof *acc);
    uint32_t *q = xcalloc(rs, sizeof *q);
    const uint64_t *g = got->data;
    size_t nbad = 0, nnz = 0;
    double maxe = 0;
    for (int y = 0; y < h; y++) {
        for (size_t i = 0; i < rs; i++)
            q[i] = (uint32_t)sample_at(in, (size_t)y * rs + i);
        rs_sat_row(q, w, c, acc);
        const uint64_t *gr = g + (size_t)y * rs;
        for (size_t i = 0; i < rs; i++) {
            if (gr[i] == acc[i])
                continue;
            nnz++;
            double err = gr[i] > acc[i] ? (double)(gr[i] - acc[i]) : (double)(acc[i] - gr[i]);
            if (err > maxe)
                maxe = err;
            if (++nbad <= 8)
                fprintf(stderr, "  MISMATCH [%s] integral: pixel (x=%zu, y=%d) channel %zu: expected %llu, got %llu\n",
                        cur_case, i / (size_t)c, y, i % (size_t)c, (unsigned long long)acc[i],
                        (unsigned long long)gr[i]);
        }
    }
    CHECK(nbad == 0, "[%s] integral: %zu of %zu entries wrong (max abs error %g)", cur_case, nbad, rs * (size_t)h,
          maxe);
    uint64_t total = acc[(size_t)(w - 1) * c];
    stats[S_INTEGRAL].samples += (double)rs * h;
    stats[S_INTEGRAL].nonzero += (double)nnz;
    if (maxe > stats[S_INTEGRAL].max_err)
        stats[S_INTEGRAL].max_err = maxe;
    free(acc);
    free(q);
    return total;
}

static void integral_case(vkimg_ctx *ctx, const vkimg_image *in, vkimg_fmt ask)
{
    vkimg_image out;
    char t[64];
    if (!run_text(ctx, "integral", in, ask, &out)) {
        snprintf(t, sizeof t, " (out_fmt %s asked)", fmt_s(ask));
        strncat(cur_case, t, sizeof cur_case - strlen(cur_case) - 1);
        check_integral(in, &out);
    }
    vkimg_image_free(&out);
}

static void test_integral(vkimg_ctx *ctx)
{
    /* data output: uint64 whatever out_fmt says, only as the last op */
    {
        vkimg_err e;
        memset(&e, 0, sizeof e);
        vkimg_pipeline *p = vkimg_pipeline_parse("integral", &e);
        CHECK(p != NULL, "parse 'integral': %s", e.msg);
        vkimg_fmt f = VKIMG_U8;
        CHECK(p && vkimg_pipeline_data_output(p, &f) && f == VKIMG_U64, "integral: data output u64 (got %s)",
              fmt_s(f));
        vkimg_pipeline_free(p);
        p = vkimg_pipeline_parse("boxblur=2", &e);
        CHECK(p && !vkimg_pipeline_data_output(p, &f), "boxblur is not a data output");
        vkimg_pipeline_free(p);

        static const char *const bad[] = { "integral,blur", "integral,integral", "integral,boxblur=1" };
        vkimg_image in = make_full(5, 3, 1, VKIMG_U8, D_UNIFORM);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            memset(&e, 0, sizeof e);
            snprintf(cur_case, sizeof cur_case, "%s (must fail)", bad[i]);
            p = vkimg_pipeline_parse(bad[i], &e);
            if (!p) {
                CHECK(e.code == VKIMG_E_USAGE, "'%s': parse failed with code %d, expected VKIMG_E_USAGE (%s)", bad[i],
                      e.code, e.msg);
                continue;
            }
            vkimg_image out;
            memset(&out, 0, sizeof out);
            vkimg_run_opts o;
            memset(&o, 0, sizeof o);
            o.out_fmt = VKIMG_U8;
            int rc = vkimg_run(ctx, p, &in, &o, &out, &e);
            CHECK(rc == VKIMG_E_USAGE && e.code == VKIMG_E_USAGE, "'%s': vkimg_run gave %d (%s), expected VKIMG_E_USAGE",
                  bad[i], rc, e.msg);
            CHECK(out.data == NULL, "'%s': failed run left output data", bad[i]);
            vkimg_image_free(&out);
            vkimg_pipeline_free(p);
        }
        vkimg_image_free(&in);
    }

    static const vkimg_fmt ask[] = { VKIMG_U8, VKIMG_F32, VKIMG_U16, VKIMG_U64 };
    int v = 0;
    for (int i = 0; i < NSIZES; i++) {
        int cs[4], nc = chans_for(i, 0, cs);
        for (int j = 0; j < nc; j++, v++) {
            vkimg_image in = make_full(sizes[i].w, sizes[i].h, cs[j], VKIMG_U8, D_UNIFORM);
            integral_case(ctx, &in, ask[v % 4]);
            vkimg_image_free(&in);
        }
    }
    /* 16-bit levels: totals far beyond 2^32 */
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = make_full(131, 67, c, VKIMG_U16, D_UNIFORM);
        integral_case(ctx, &in, VKIMG_U16);
        vkimg_image_free(&in);
    }
    {
        vkimg_image in = make_full(1100, 1030, 2, VKIMG_U16, D_UNIFORM);
        integral_case(ctx, &in, VKIMG_U16);
        vkimg_image_free(&in);
        in = make_full(3000, 40, 3, VKIMG_U16, D_UNIFORM);
        integral_case(ctx, &in, VKIMG_F32);
        vkimg_image_free(&in);
    }
    /* 8192 x 8192 gray near 255: the total exceeds 2^32 (512 MiB of output;
     * the reference keeps one row) */
    {
        const uint32_t lo[4] = { 250 }, hi[4] = { 255 };
        vkimg_image in = make_image(8192, 8192, 1, VKIMG_U8, D_UNIFORM, lo, hi, false);
        vkimg_image out;
        double t0 = now_s();
        if (!run_text(ctx, "integral", &in, VKIMG_U8, &out)) {
            double t1 = now_s();
            uint64_t total = check_integral(&in, &out);
            printf("    integral 8192x8192: device %.2f s, reference + compare %.2f s, total %llu\n", t1 - t0,
                   now_s() - t1, (unsigned long long)total);
            CHECK(total > (1ull << 32), "8192x8192 integral: total %llu does not exceed 2^32",
                  (unsigned long long)total);
        }
        vkimg_image_free(&out);
        vkimg_image_free(&in);
    }
}

/* ---------------------------------------------------------------- boxblur */

static void boxblur_case(vkimg_ctx *ctx, const char *text, int r, const vkimg_image *in)
{
    vkimg_image out;
    if (!run_text(ctx, text, in, in->fmt, &out)) {
        uint32_t *q = levels_of(in), *ex = xcalloc(nsamples(in), sizeof *ex);
        rs_boxblur(q, in->w, in->h, in->c, r, ex);
        check_exact(S_BOXBLUR, &out, in->w, in->h, in->c, in->fmt, ex);
        free(q);
        free(ex);
    }
    vkimg_image_free(&out);
}

/* rs_box_sums (separable) against brute force. */
static void box_self_check(void)
{
    static const size2 s[] = { { 1, 1 }, { 1, 9 }, { 9, 1 }, { 3, 5 }, { 17, 13 }, { 40, 7 } };
    static const int radii[] = { 0, 1, 2, 5, 20 };
    int bad = 0;
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        for (size_t j = 0; j < sizeof radii / sizeof radii[0]; j++) {
            int w = s[i].w, h = s[i].h, c = 1 + (int)(i + j) % 4;
            size_t n = (size_t)w * h * c;
            uint32_t *q = xcalloc(n, sizeof *q);
            uint64_t *a = xcalloc(n, sizeof *a), *b = xcalloc(n, sizeof *b);
            for (size_t k = 0; k < n; k++)
                q[k] = (uint32_t)(t_rand(&seed) >> 48);
            rs_box_sums(q, w, h, c, radii[j], a);
            rs_box_sums_brute(q, w, h, c, radii[j], b);
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
        for (int i = 0; i < NSIZES; i++) {
            int cs[4], nc = chans_for(i, ri, cs);
            for (int j = 0; j < nc; j++) {
                /* both spellings: positional and radius= */
                snprintf(t, sizeof t, (i + j) % 2 ? "boxblur=%d" : "boxblur=radius=%d", r);
                vkimg_image in = make_full(sizes[i].w, sizes[i].h, cs[j], VKIMG_U8, D_UNIFORM);
                boxblur_case(ctx, t, r, &in);
                vkimg_image_free(&in);
            }
        }
    }
    /* the default radius is 1 */
    {
        vkimg_image in = make_full(17, 13, 3, VKIMG_U8, D_UNIFORM);
        boxblur_case(ctx, "boxblur", 1, &in);
        vkimg_image_free(&in);
    }
    /* 16-bit input, 16-bit output */
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = make_full(131, 67, c, VKIMG_U16, D_UNIFORM);
        snprintf(t, sizeof t, "boxblur=%d", c == 4 ? 50 : c);
        boxblur_case(ctx, t, c == 4 ? 50 : c, &in);
        vkimg_image_free(&in);
    }
    {
        /* the 32-bit table wraps (total ~7e10), the boxes fit: modular arithmetic */
        vkimg_image in = make_full(1100, 1030, 1, VKIMG_U16, D_UNIFORM);
        boxblur_case(ctx, "boxblur=7", 7, &in);
        vkimg_image_free(&in);
        in = make_full(3000, 40, 2, VKIMG_U16, D_UNIFORM);
        boxblur_case(ctx, "boxblur=50", 50, &in);
        vkimg_image_free(&in);
    }
    {
        /* box sums beyond 2^32: 300x300 at ~62000 with radius 200 (the window
         * covers most of the image) forces the uint64 table */
        const uint32_t lo[4] = { 58000, 58000 }, hi[4] = { 65535, 65535 };
        for (int c = 1; c <= 2; c++) {
            vkimg_image in = make_image(300, 300, c, VKIMG_U16, D_UNIFORM, lo, hi, false);
            uint32_t *q = levels_of(&in);
            uint64_t *s = xcalloc(nsamples(&in), sizeof *s), mx = 0;
            rs_box_sums(q, 300, 300, c, 200, s);
            for (size_t i = 0; i < nsamples(&in); i++)
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

/* ---------------------------------------------------------------- threshold */

static void thr_value_case(vkimg_ctx *ctx, double value, const vkimg_image *in)
{
    char t[64];
    snprintf(t, sizeof t, "threshold=mode=value:value=%.17g", value);
    vkimg_image out;
    if (!run_text(ctx, t, in, in->fmt, &out)) {
        uint32_t *q = levels_of(in), *ex = xcalloc(nsamples(in), sizeof *ex);
        rs_threshold_value(q, in->w, in->h, in->c, fmt_max(in->fmt), value, ex);
        check_exact(S_THR_VALUE, &out, in->w, in->h, in->c, in->fmt, ex);
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
    if (!run_text(ctx, t, in, in->fmt, &out)) {
        uint32_t *q = levels_of(in), *ex = xcalloc(nsamples(in), sizeof *ex);
        rs_threshold_adaptive(q, in->w, in->h, in->c, fmt_max(in->fmt), r, offset, ex);
        check_exact(S_THR_ADAPTIVE, &out, in->w, in->h, in->c, in->fmt, ex);
        free(q);
        free(ex);
    }
    vkimg_image_free(&out);
}

static void thr_otsu_case(vkimg_ctx *ctx, const char *text, const vkimg_image *in, bool expect_black)
{
    vkimg_image out;
    if (!run_text(ctx, text, in, in->fmt, &out)) {
        uint32_t *q = levels_of(in), *ex = xcalloc(nsamples(in), sizeof *ex);
        int thr[4];
        rs_otsu_thresholds(q, in->w, in->h, in->c, fmt_max(in->fmt), thr);
        rs_threshold_apply_bins(q, in->w, in->h, in->c, fmt_max(in->fmt), thr, ex);
        if (expect_black) { /* a constant colour channel: all black */
            int cc = rs_colour(in->c), white = 0;
            for (size_t p = 0; p < (size_t)in->w * in->h; p++)
                for (int k = 0; k < cc; k++)
                    white += ex[p * in->c + k] != 0;
            CHECK(white == 0, "otsu reference: constant image gives %d white samples", white);
        }
        check_exact(S_THR_OTSU, &out, in->w, in->h, in->c, in->fmt, ex);
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
    for (int i = 0; i < NSIZES; i++) {
        int cs[4], nc = chans_for(i, i, cs);
        for (int j = 0; j < nc; j++, v++) {
            int w = sizes[i].w, h = sizes[i].h, c = cs[j];
            vkimg_image in = make_full(w, h, c, VKIMG_U8, D_UNIFORM);
            thr_value_case(ctx, values[v % 6], &in);
            thr_adaptive_case(ctx, ad[v % 5].r, ad[v % 5].off, &in);
            vkimg_image_free(&in);
            in = make_full(w, h, c, VKIMG_U8, v % 2 ? D_BIMODAL : D_UNIFORM);
            thr_otsu_case(ctx, v % 3 ? "threshold=otsu" : "threshold=mode=otsu", &in, false);
            vkimg_image_free(&in);
        }
    }
    /* the default value is 0.5 */
    {
        vkimg_image in = make_full(17, 13, 4, VKIMG_U8, D_UNIFORM);
        vkimg_image out;
        if (!run_text(ctx, "threshold", &in, VKIMG_U8, &out)) {
            uint32_t *q = levels_of(&in), *ex = xcalloc(nsamples(&in), sizeof *ex);
            rs_threshold_value(q, 17, 13, 4, 255, 0.5, ex);
            check_exact(S_THR_VALUE, &out, 17, 13, 4, VKIMG_U8, ex);
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
        vkimg_image in = make_image(131, 67, c, VKIMG_U8, D_UNIFORM, c == 2 ? l2 : lo, c == 2 ? h2 : hi, false);
        thr_otsu_case(ctx, "threshold=otsu", &in, true);
        vkimg_image_free(&in);
    }
    /* An exact tie in Otsu's criterion: three equally spaced, equally frequent
     * levels a < b < c give the same between-class variance for t = a and
     * t = b; the first maximum wins, so b and c are white (2/3 of the samples). */
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = make_full(129, 67, c, VKIMG_U8, D_UNIFORM); /* 8643 = 3 * 2881 pixels */
        int cc = rs_colour(c);
        for (size_t p = 0; p < (size_t)129 * 67; p++)
            for (int k = 0; k < cc; k++)
                ((uint8_t *)in.data)[p * c + k] = (uint8_t)(40 + k + 60 * (int)((p + (size_t)k) % 3));
        uint32_t *q = levels_of(&in), *ex = xcalloc(nsamples(&in), sizeof *ex);
        int thr[4];
        rs_otsu_thresholds(q, 129, 67, c, 255, thr);
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
        vkimg_image in = make_full(131, 67, c, VKIMG_U16, c % 2 ? D_UNIFORM : D_BIMODAL);
        thr_value_case(ctx, values[c], &in);
        thr_adaptive_case(ctx, 2 * c + 1, 10 * c, &in);
        thr_otsu_case(ctx, "threshold=otsu", &in, false);
        vkimg_image_free(&in);
    }
    {
        vkimg_image in = make_full(1100, 1030, 1, VKIMG_U16, D_BIMODAL);
        thr_adaptive_case(ctx, 15, 10, &in);
        thr_otsu_case(ctx, "threshold=otsu", &in, false);
        vkimg_image_free(&in);
        const uint32_t lo[4] = { 58000, 0 }, hi[4] = { 65535, 65535 };
        in = make_image(300, 300, 2, VKIMG_U16, D_UNIFORM, lo, hi, false);
        thr_adaptive_case(ctx, 200, 5, &in);
        thr_adaptive_case(ctx, 200, 0, &in);
        vkimg_image_free(&in);
    }
}

/* ---------------------------------------------------------------- normalize */

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
    return make_image(w, h, c, VKIMG_U8, D_UNIFORM, lo, hi, false);
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
    size_t n = nsamples(out), at = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)sample_at(out, i) - r[i]);
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
    if (!run_text(ctx, t, in, VKIMG_U8, &out)) {
        size_t n = nsamples(in);
        double *v = normalized_of(in), *r = xcalloc(n, sizeof *r);
        rs_normalize(v, in->w, in->h, in->c, link, r);
        for (size_t i = 0; i < n; i++)
            r[i] *= 255.0;
        check_out(S_NORMALIZE, &out, in->w, in->h, in->c, VKIMG_U8, r, NULL, NULL, 1.0);
        normalize_raw(&out, r);
        /* a constant channel (and alpha) must be unchanged: exact */
        if (out.data && out.c == in->c && out.fmt == VKIMG_U8)
            for (size_t i = 0; i < n; i++)
                if (fabs(r[i] - 255.0 * v[i]) == 0 && sample_at(&out, i) != sample_at(in, i)) {
                    CHECK(0, "[%s] normalize: unchanged sample %zu (channel %zu) became %llu, was %llu", cur_case, i,
                          i % (size_t)in->c, (unsigned long long)sample_at(&out, i),
                          (unsigned long long)sample_at(in, i));
                    break;
                }
        free(v);
        free(r);
    }
    vkimg_image_free(&out);
}

static void test_normalize(vkimg_ctx *ctx)
{
    for (int i = 0; i < NSIZES; i++) {
        int cs[4], nc = chans_for(i, 1, cs);
        for (int j = 0; j < nc; j++)
            for (int link = 0; link <= 1; link++) {
                vkimg_image in = normalize_image(sizes[i].w, sizes[i].h, cs[j], false);
                normalize_case(ctx, link, &in);
                vkimg_image_free(&in);
            }
    }
    /* "normalize" alone is link=0; all colour channels constant */
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = normalize_image(131, 67, c, false);
        vkimg_image out;
        if (!run_text(ctx, "normalize", &in, VKIMG_U8, &out)) {
            size_t n = nsamples(&in);
            double *v = normalized_of(&in), *r = xcalloc(n, sizeof *r);
            rs_normalize(v, 131, 67, c, 0, r);
            for (size_t k = 0; k < n; k++)
                r[k] *= 255.0;
            check_out(S_NORMALIZE, &out, 131, 67, c, VKIMG_U8, r, NULL, NULL, 1.0);
            normalize_raw(&out, r);
            free(v);
            free(r);
        }
        vkimg_image_free(&out);
        vkimg_image_free(&in);
        const uint32_t lo[4] = { 123, 123, 123, 0 }, hi[4] = { 123, 123, 123, 255 };
        uint32_t l2[4] = { 123, 0 }, h2[4] = { 123, 255 };
        in = make_image(57, 31, c, VKIMG_U8, D_UNIFORM, c == 2 ? l2 : lo, c == 2 ? h2 : hi, false);
        normalize_case(ctx, c % 2, &in);
        vkimg_image_free(&in);
    }
}

/* ---------------------------------------------------------------- equalize */

static void equalize_case(vkimg_ctx *ctx, const vkimg_image *in)
{
    vkimg_image out;
    if (!run_text(ctx, "equalize", in, in->fmt, &out)) {
        uint32_t *q = levels_of(in), *ex = xcalloc(nsamples(in), sizeof *ex);
        rs_equalize(q, in->w, in->h, in->c, fmt_max(in->fmt), fmt_max(in->fmt), ex);
        check_exact(S_EQUALIZE, &out, in->w, in->h, in->c, in->fmt, ex);
        free(q);
        free(ex);
    }
    vkimg_image_free(&out);
}

static void test_equalize(vkimg_ctx *ctx)
{
    int v = 0;
    for (int i = 0; i < NSIZES; i++) {
        int cs[4], nc = chans_for(i, 2, cs);
        for (int j = 0; j < nc; j++, v++) {
            /* narrow, skewed ranges per channel, bimodal or uniform */
            const uint32_t lo[4] = { 40, 10, 100, 0 }, hi[4] = { 120, 250, 140, 255 };
            vkimg_image in = make_image(sizes[i].w, sizes[i].h, cs[j], VKIMG_U8, v % 2 ? D_BIMODAL : D_UNIFORM, lo,
                                        hi, false);
            equalize_case(ctx, &in);
            vkimg_image_free(&in);
        }
    }
    /* constant colour: unchanged (alpha random) */
    for (int c = 1; c <= 4; c++) {
        const uint32_t lo[4] = { 200, 200, 200, 0 }, hi[4] = { 200, 200, 200, 255 };
        uint32_t l2[4] = { 200, 0 }, h2[4] = { 200, 255 };
        vkimg_image in = make_image(131, 67, c, VKIMG_U8, D_UNIFORM, c == 2 ? l2 : lo, c == 2 ? h2 : hi, false);
        equalize_case(ctx, &in);
        vkimg_image_free(&in);
    }
    /* one channel constant, the others not */
    {
        const uint32_t lo[4] = { 30, 5, 5, 0 }, hi[4] = { 90, 5, 250, 255 };
        vkimg_image in = make_image(257, 129, 4, VKIMG_U8, D_BIMODAL, lo, hi, false);
        equalize_case(ctx, &in);
        vkimg_image_free(&in);
    }
    /* 16-bit: bins q >> 8, output lut * 257 */
    for (int c = 1; c <= 4; c += 3) {
        vkimg_image in = make_full(131, 67, c, VKIMG_U16, D_BIMODAL);
        equalize_case(ctx, &in);
        vkimg_image_free(&in);
    }
}

/* ---------------------------------------------------------------- chains */

/* gray,boxblur=3 on U8: the luma level is round-half-up((2990 R + 5870 G +
 * 1140 B) / 10000) in exact arithmetic; the device's float luma can round
 * either way within 3e-4 level of a tie. */
static void chain_gray_box(vkimg_ctx *ctx, const vkimg_image *in)
{
    const int r = 3;
    vkimg_image out;
    if (run_text(ctx, "gray,boxblur=3", in, VKIMG_U8, &out)) {
        vkimg_image_free(&out);
        return;
    }
    int w = in->w, h = in->h, c = in->c, oc = c == 3 ? 1 : c == 4 ? 2 : c;
    size_t np = (size_t)w * h, n = np * oc;
    uint32_t *nom = xcalloc(n, sizeof *nom), *lo = xcalloc(n, sizeof *lo), *hi = xcalloc(n, sizeof *hi);
    /* the double reference of the luma, for the ambiguity test */
    double *v = normalized_of(in), *g = xcalloc(n, sizeof *g);
    rs_gray601(v, w, h, c, g);
    size_t ref_disagree = 0;
    for (size_t p = 0; p < np; p++) {
        const uint8_t *s = (const uint8_t *)in->data + p * c;
        for (int k = 0; k < oc; k++) {
            size_t i = p * oc + k;
            if (c >= 3 && k == 0) {
                uint32_t num = 2990u * s[0] + 5870u * s[1] + 1140u * s[2];
                nom[i] = (num + 5000) / 10000;
                uint32_t rem = num % 10000;
                lo[i] = hi[i] = nom[i];
                if (rem >= 4997 && rem <= 5003) {
                    lo[i] = num / 10000;
                    hi[i] = lo[i] + 1;
                }
                uint32_t ql, qh;
                if (quantize(g[i], 255.0, 1e-9, &ql, &qh) != nom[i] && lo[i] == hi[i])
                    ref_disagree++;
            } else {
                nom[i] = lo[i] = hi[i] = s[c >= 3 ? 3 : k];
            }
        }
    }
    CHECK(ref_disagree == 0, "[%s] reference self-check: integer and double luma levels differ in %zu pixels",
          cur_case, ref_disagree);
    uint32_t *mn = xcalloc(n, sizeof *mn), *ml = xcalloc(n, sizeof *ml), *mh = xcalloc(n, sizeof *mh);
    rs_boxblur(nom, w, h, oc, r, mn);
    rs_boxblur(lo, w, h, oc, r, ml);
    rs_boxblur(hi, w, h, oc, r, mh);
    double *ex = u32_to_double(mn, n);
    check_out(S_CH_GRAYBOX, &out, w, h, oc, VKIMG_U8, ex, ml, mh, 1.0);
    free(ex);
    free(nom);
    free(lo);
    free(hi);
    free(mn);
    free(ml);
    free(mh);
    free(v);
    free(g);
    vkimg_image_free(&out);
}

/* normalize,equalize: the normalized value is exact in double; equalize
 * quantizes it to 255 levels, decided when no value is within 1e-3 level of a
 * tie (odd spans: the nearest is 1/(2 span) away). */
static void chain_norm_eq(vkimg_ctx *ctx, const vkimg_image *in)
{
    vkimg_image out;
    if (run_text(ctx, "normalize,equalize", in, VKIMG_U8, &out)) {
        vkimg_image_free(&out);
        return;
    }
    int w = in->w, h = in->h, c = in->c;
    size_t n = nsamples(in);
    double *v = normalized_of(in), *nv = xcalloc(n, sizeof *nv);
    rs_normalize(v, w, h, c, 0, nv);
    uint32_t *q = xcalloc(n, sizeof *q), *ex = xcalloc(n, sizeof *ex);
    size_t amb = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t l, hh;
        q[i] = quantize(nv[i], 255.0, 1e-3, &l, &hh);
        amb += l != hh;
    }
    CHECK(amb == 0, "[%s] test data: %zu normalized levels within 1e-3 of a tie (the chain is then not decided)",
          cur_case, amb);
    rs_equalize(q, w, h, c, 255, 255, ex);
    check_exact(S_CH_NORMEQ, &out, w, h, c, VKIMG_U8, ex);
    free(v);
    free(nv);
    free(q);
    free(ex);
    vkimg_image_free(&out);
}

/* blur=2,threshold=otsu: the blurred value in double; its level is ambiguous
 * within 2e-3 of a tie (the device's float error is ~1e-4 level). */
static void chain_blur_otsu(vkimg_ctx *ctx, const vkimg_image *in)
{
    vkimg_image out;
    if (run_text(ctx, "blur=2,threshold=otsu", in, VKIMG_U8, &out)) {
        vkimg_image_free(&out);
        return;
    }
    const double win = 2e-3;
    int w = in->w, h = in->h, c = in->c, cc = rs_colour(c);
    size_t np = (size_t)w * h, n = np * c;
    double *v = normalized_of(in), *b = xcalloc(n, sizeof *b);
    rs_gauss(v, w, h, c, 2.0, 6, b); /* radius ceil(3 sigma) */
    uint32_t *nom = xcalloc(n, sizeof *nom), *lo = xcalloc(n, sizeof *lo), *hi = xcalloc(n, sizeof *hi);
    for (size_t i = 0; i < n; i++)
        nom[i] = quantize(b[i], 255.0, win, &lo[i], &hi[i]);
    int tn[4], tl[4], th[4];
    rs_otsu_thresholds(nom, w, h, c, 255, tn);
    rs_otsu_thresholds(lo, w, h, c, 255, tl);
    rs_otsu_thresholds(hi, w, h, c, 255, th);
    for (int k = 0; k < cc; k++)
        CHECK(tn[k] == tl[k] && tn[k] == th[k],
              "[%s] test data: Otsu threshold of channel %d depends on undecided levels (%d / %d / %d)", cur_case, k,
              tl[k], tn[k], th[k]);
    double *ex = xcalloc(n, sizeof *ex);
    uint32_t *al = xcalloc(n, sizeof *al), *ah = xcalloc(n, sizeof *ah);
    for (size_t i = 0; i < n; i++) {
        int k = (int)(i % (size_t)c);
        if (k >= cc) { /* alpha: the blurred alpha, quantized */
            ex[i] = nom[i];
            al[i] = lo[i];
            ah[i] = hi[i];
        } else {
            ex[i] = (int)nom[i] > tn[k] ? 255 : 0;
            al[i] = (int)lo[i] > tn[k] ? 255 : 0;
            ah[i] = (int)hi[i] > tn[k] ? 255 : 0;
        }
    }
    check_out(S_CH_BLUROTSU, &out, w, h, c, VKIMG_U8, ex, al, ah, 0.0);
    free(v);
    free(b);
    free(nom);
    free(lo);
    free(hi);
    free(ex);
    free(al);
    free(ah);
    vkimg_image_free(&out);
}

static void test_chains(vkimg_ctx *ctx)
{
    static const size2 cs[] = { { 1, 1 }, { 3, 5 }, { 131, 67 }, { 257, 129 }, { 1, 300 }, { 300, 1 } };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int c = 1; c <= 4; c++) {
            int w = cs[i].w, h = cs[i].h;
            vkimg_image in = make_full(w, h, c, VKIMG_U8, D_UNIFORM);
            chain_gray_box(ctx, &in);
            vkimg_image_free(&in);
            /* odd spans per channel (139, 159, 89), extremes present */
            const uint32_t lo[4] = { 41, 60, 10, 0 }, hi[4] = { 180, 219, 99, 255 };
            uint32_t l2[4] = { 60, 0 }, h2[4] = { 219, 255 };
            in = make_image(w, h, c, VKIMG_U8, (i + c) % 2 ? D_BIMODAL : D_UNIFORM, c == 2 ? l2 : lo,
                            c == 2 ? h2 : hi, true);
            chain_norm_eq(ctx, &in);
            vkimg_image_free(&in);
            in = make_full(w, h, c, VKIMG_U8, D_BIMODAL);
            chain_blur_otsu(ctx, &in);
            vkimg_image_free(&in);
        }
    {
        vkimg_image in = make_full(1100, 1030, 3, VKIMG_U8, D_UNIFORM);
        chain_gray_box(ctx, &in);
        vkimg_image_free(&in);
        in = make_full(1100, 1030, 4, VKIMG_U8, D_UNIFORM);
        chain_gray_box(ctx, &in);
        vkimg_image_free(&in);
        const uint32_t lo[4] = { 41, 60, 77, 0 }, hi[4] = { 180, 219, 77, 255 }; /* channel 2 constant */
        in = make_image(1100, 1030, 3, VKIMG_U8, D_BIMODAL, lo, hi, true);
        chain_norm_eq(ctx, &in);
        vkimg_image_free(&in);
        in = make_full(600, 530, 1, VKIMG_U8, D_BIMODAL);
        chain_blur_otsu(ctx, &in);
        vkimg_image_free(&in);
    }
}

/* ---------------------------------------------------------------- main */

int main(void)
{
    double t0 = now_s();
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
        { "integral", test_integral }, { "boxblur", test_boxblur },   { "threshold", test_threshold },
        { "normalize", test_normalize }, { "equalize", test_equalize }, { "chains", test_chains },
    };
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        double ts = now_s();
        int r0 = nruns, vm0 = vkimg_ctx_validation_messages(ctx);
        suites[i].fn(ctx);
        printf("  %-9s %4d runs in %6.2f s\n", suites[i].name, nruns - r0, now_s() - ts);
        fflush(stdout);
        int vm1 = vkimg_ctx_validation_messages(ctx);
        CHECK(vm1 == vm0, "%s: %d validation messages", suites[i].name, vm1 - vm0);
    }

    for (int s = 0; s < NSTATS; s++) {
        printf("%s: max abs error %g over %d cases (%.0f samples, %.0f not exact", stat_name[s], stats[s].max_err,
               stats[s].cases, stats[s].samples, stats[s].nonzero);
        if (stats[s].undecided > 0)
            printf(", %.0f undecidable", stats[s].undecided);
        printf(")\n");
        if (s == S_NORMALIZE)
            printf("    before rounding: max %.4f LSB (off by 1 only at ties)\n", normalize_max_raw);
        if (stats[s].max_err > 0 && stats[s].worst[0])
            printf("    worst: %s\n", stats[s].worst);
    }

    int vm = vkimg_ctx_validation_messages(ctx);
    CHECK(vm == 0, "%d validation messages", vm);
    vkimg_ctx_destroy(ctx);
    printf("test_ops_sat: %d runs, %.1f s\n", nruns, now_s() - t0);
    return t_done("test_ops_sat");
}
