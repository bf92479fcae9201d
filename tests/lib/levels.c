/* Integer-level images, runs and comparisons (see levels.h). */
#include "levels.h"
#include "t.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long long lv_seed = 0x9e3779b97f4a7c15ull;

/* ---------------------------------------------------------------- images */

uint32_t lv_max(vkimg_fmt f) { return f == VKIMG_U16 ? 65535u : 255u; }

vkimg_image lv_image(int w, int h, int c, vkimg_fmt fmt, dist_kind d, const uint32_t lo[4], const uint32_t hi[4],
                     bool force_ends)
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
            uint64_t r = t_rand(&lv_seed);
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

vkimg_image lv_full(int w, int h, int c, vkimg_fmt fmt, dist_kind d)
{
    uint32_t m = lv_max(fmt);
    const uint32_t lo[4] = { 0, 0, 0, 0 }, hi[4] = { m, m, m, m };
    return lv_image(w, h, c, fmt, d, lo, hi, false);
}

uint64_t lv_sample(const vkimg_image *im, size_t i)
{
    switch (im->fmt) {
    case VKIMG_U8: return ((const uint8_t *)im->data)[i];
    case VKIMG_U16: return ((const uint16_t *)im->data)[i];
    case VKIMG_U32: return ((const uint32_t *)im->data)[i];
    case VKIMG_U64: return ((const uint64_t *)im->data)[i];
    default: return 0;
    }
}

size_t lv_nsamples(const vkimg_image *im) { return (size_t)im->w * im->h * im->c; }

uint32_t *lv_levels(const vkimg_image *im)
{
    size_t n = lv_nsamples(im);
    uint32_t *q = gh_calloc(n, sizeof *q);
    for (size_t i = 0; i < n; i++)
        q[i] = (uint32_t)lv_sample(im, i);
    return q;
}

double *lv_normalized(const vkimg_image *im)
{
    size_t n = lv_nsamples(im);
    double *v = gh_calloc(n, sizeof *v);
    double m = lv_max(im->fmt);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)lv_sample(im, i) / m;
    return v;
}

double *lv_to_double(const uint32_t *q, size_t n)
{
    double *d = gh_calloc(n, sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = q[i];
    return d;
}

uint32_t lv_quantize(double x, double m, double win, uint32_t *lo, uint32_t *hi)
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
    snprintf(b, sizeof b, "%s %dx%d c=%d", vkimg_fmt_name(in->fmt), in->w, in->h, in->c);
    return b;
}

int lv_run(vkimg_ctx *ctx, const char *text, const vkimg_image *in, vkimg_fmt out_fmt, vkimg_image *out)
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
    gh_runs++;
    int rc = vkimg_run(ctx, p, in, &o, out, &e);
    CHECK(rc == 0, "[%s] vkimg_run: %s", cur_case, e.msg);
    vkimg_pipeline_free(p);
    return rc ? -1 : 0;
}

void lv_check(const char *group, const vkimg_image *got, int w, int h, int c, vkimg_fmt fmt, const double *ex,
              const uint32_t *lo, const uint32_t *hi, double tol)
{
    lv_stat *st = lv_stats(group);
    st->cases++;
    bool shape = got->data && got->w == w && got->h == h && got->c == c && got->fmt == fmt;
    CHECK(shape, "[%s] %s: got %dx%d c=%d %s, expected %dx%d c=%d %s", cur_case, group, got->w, got->h,
          got->c, vkimg_fmt_name(got->fmt), w, h, c, vkimg_fmt_name(fmt));
    if (!shape)
        return;
    size_t n = (size_t)w * h * c, nbad = 0, nnz = 0, nund = 0, worst = 0;
    double maxe = 0;
    for (size_t i = 0; i < n; i++) {
        double g = (double)lv_sample(got, i), nom = floor(ex[i] + 0.5);
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
                    group, p % (size_t)w, p / (size_t)w, i % (size_t)c, ex[i]);
            if (lo)
                fprintf(stderr, " (allowed %u..%u)", lo[i], hi[i]);
            fprintf(stderr, ", got %.0f\n", g);
        }
    }
    CHECK(nbad == 0, "[%s] %s: %zu of %zu samples wrong (max abs error %g, tolerance %g)", cur_case, group,
          nbad, n, maxe, tol);
    st->samples += (double)n;
    st->nonzero += (double)nnz;
    st->undecided += (double)nund;
    if (maxe > st->max_err || !st->worst[0]) {
        size_t p = worst / (size_t)c;
        snprintf(st->worst, sizeof st->worst, "%s, pixel (%zu,%zu) ch %zu", cur_case, p % (size_t)w,
                 p / (size_t)w, worst % (size_t)c);
    }
    if (maxe > st->max_err)
        st->max_err = maxe;
}

void lv_check_exact(const char *group, const vkimg_image *got, int w, int h, int c, vkimg_fmt fmt,
                    const uint32_t *ex)
{
    size_t n = (size_t)w * h * c;
    double *d = lv_to_double(ex, n);
    lv_check(group, got, w, h, c, fmt, d, NULL, NULL, 0.0);
    free(d);
}

/* ---------------------------------------------------------------- sizes */

const size2 lv_sizes[9] = {
    { 1, 1 }, { 1, 2049 }, { 2049, 1 }, { 3, 5 }, { 131, 67 }, { 257, 129 }, { 1100, 1030 }, { 3000, 40 }, { 40, 3000 },
};
static bool is_large(int i) { return lv_sizes[i].w * lv_sizes[i].h > 100000; }

int lv_chans(int i, int v, int out[4])
{
    if (!is_large(i)) {
        for (int c = 0; c < 4; c++)
            out[c] = c + 1;
        return 4;
    }
    out[0] = 1 + (i + v) % 4;
    return 1;
}

/* ---------------------------------------------------------------- the table */

typedef struct named_stat {
    const char *name;
    lv_stat s;
} named_stat;

enum { MAX_GROUPS = 16 };
static named_stat stats[MAX_GROUPS];
static int ngroups;

lv_stat *lv_stats(const char *group)
{
    for (int i = 0; i < ngroups; i++)
        if (!strcmp(stats[i].name, group))
            return &stats[i].s;
    if (ngroups == MAX_GROUPS) {
        fprintf(stderr, "levels: more than %d groups\n", MAX_GROUPS);
        abort();
    }
    stats[ngroups].name = group;
    return &stats[ngroups++].s;
}

void lv_print_stats(void)
{
    for (int i = 0; i < ngroups; i++) {
        const lv_stat *s = &stats[i].s;
        printf("%s: max abs error %g over %d cases (%.0f samples, %.0f not exact", stats[i].name, s->max_err, s->cases,
               s->samples, s->nonzero);
        if (s->undecided > 0)
            printf(", %.0f undecidable", s->undecided);
        printf(")\n");
        if (s->max_err > 0 && s->worst[0])
            printf("    worst: %s\n", s->worst);
    }
}
