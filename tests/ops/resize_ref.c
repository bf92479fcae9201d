/* The references of resize and thumbnail (see resize_ref.h). Written from the
 * README's definitions (and ImageMagick's and libvips's documented size rules)
 * only; shares no code with src/ or shaders/. */
#include "resize_ref.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ref_filter_names[RF_COUNT] = { "lanczos3", "lanczos2", "mitchell", "catrom",
                                                 "bilinear", "box",      "nearest" };

/* ---------------------------------------------------------------- kernels */

static double sinc_pi(double x)
{
    if (x == 0.0)
        return 1.0;
    return sin(M_PI * x) / (M_PI * x);
}

double ref_filter_support(ref_filter f)
{
    switch (f) {
    case RF_LANCZOS3: return 3.0;
    case RF_LANCZOS2: return 2.0;
    case RF_MITCHELL:
    case RF_CATROM: return 2.0;
    case RF_BILINEAR: return 1.0;
    default: return 0.5;
    }
}

/* Mitchell-Netravali cubics, the coefficients worked out by hand from
 * Mitchell & Netravali (1988) for B = C = 1/3 and for Catmull-Rom (B = 0,
 * C = 1/2). */
static double mitchell(double t)
{
    t = fabs(t);
    if (t < 1.0)
        return (7.0 / 6.0) * t * t * t - 2.0 * t * t + 8.0 / 9.0;
    if (t < 2.0)
        return (-7.0 / 18.0) * t * t * t + 2.0 * t * t - (10.0 / 3.0) * t + 16.0 / 9.0;
    return 0.0;
}

static double catrom(double t)
{
    t = fabs(t);
    if (t < 1.0)
        return 1.5 * t * t * t - 2.5 * t * t + 1.0;
    if (t < 2.0)
        return -0.5 * t * t * t + 2.5 * t * t - 4.0 * t + 2.0;
    return 0.0;
}

double ref_filter_kernel(ref_filter f, double t)
{
    switch (f) {
    case RF_LANCZOS3: return fabs(t) < 3.0 ? sinc_pi(t) * sinc_pi(t / 3.0) : 0.0;
    case RF_LANCZOS2: return fabs(t) < 2.0 ? sinc_pi(t) * sinc_pi(t / 2.0) : 0.0;
    case RF_MITCHELL: return mitchell(t);
    case RF_CATROM: return catrom(t);
    case RF_BILINEAR: return fabs(t) < 1.0 ? 1.0 - fabs(t) : 0.0;
    default: return t >= -0.5 && t < 0.5 ? 1.0 : 0.0;
    }
}

/* ---------------------------------------------------------------- one axis */

ref_axis ref_axis_weights(int n_in, int n_out, ref_filter f)
{
    ref_axis a;
    memset(&a, 0, sizeof a);
    a.n_out = n_out;
    double fs = n_in > n_out ? (double)n_in / n_out : 1.0;
    double sup = ref_filter_support(f) * fs;
    a.maxtaps = f == RF_NEAREST ? 1 : (int)ceil(2.0 * sup) + 5;
    a.start = ref_xmalloc((size_t)n_out * sizeof *a.start);
    a.count = ref_xmalloc((size_t)n_out * sizeof *a.count);
    a.w = ref_xmalloc((size_t)n_out * (size_t)a.maxtaps * sizeof *a.w);
    a.inside = ref_xmalloc((size_t)n_out * (size_t)a.maxtaps);
    const int64_t ni = n_in, no = n_out;
    for (int i = 0; i < n_out; i++) {
        double *w = a.w + (size_t)i * (size_t)a.maxtaps;
        if (f == RF_NEAREST) { /* j = floor((i + 0.5) n_in / n_out), exactly */
            a.start[i] = (int)(((2 * (int64_t)i + 1) * ni) / (2 * no));
            a.count[i] = 1;
            w[0] = 1.0;
            a.inside[(size_t)i * a.maxtaps] = 1;
            continue;
        }
        /* 2 n_out (j - c) = 2 j n_out - (2 i + 1) n_in + n_out, an integer */
        double c = (double)((2 * (int64_t)i + 1) * ni - no) / (double)(2 * no);
        int lo = (int)floor(c - sup) - 1, hi = (int)ceil(c + sup) + 1;
        if (hi - lo + 1 > a.maxtaps) {
            fprintf(stderr, "ref_axis_weights: %d taps over %d\n", hi - lo + 1, a.maxtaps);
            abort();
        }
        double sum = 0.0;
        const int64_t den = n_in > n_out ? ni : no; /* (j - c) / f = num / (2 den) */
        const int64_t two_a = (int64_t)(2.0 * ref_filter_support(f));
        for (int j = lo; j <= hi; j++) {
            int64_t num = 2 * (int64_t)j * no - (2 * (int64_t)i + 1) * ni + no;
            /* box's ends are decided exactly (the definition's [-1/2, 1/2)) */
            a.inside[(size_t)i * a.maxtaps + (size_t)(j - lo)] =
                f == RF_BOX ? num >= -den && num < den : (num < 0 ? -num : num) <= two_a * den;
            double k;
            if (f == RF_BOX) { /* -1/2 <= (j - c) / f < 1/2 */
                int64_t half = n_in > n_out ? ni : no; /* num / (2 half) = (j - c) / f */
                k = num >= -half && num < half ? 1.0 : 0.0;
            } else {
                k = ref_filter_kernel(f, (double)num / (double)(2 * (n_in > n_out ? ni : no)));
            }
            w[j - lo] = k;
            sum += k;
        }
        if (!(sum != 0.0)) {
            fprintf(stderr, "ref_axis_weights: no weight for output %d (%d -> %d)\n", i, n_in, n_out);
            abort();
        }
        for (int j = lo; j <= hi; j++)
            w[j - lo] /= sum;
        a.start[i] = lo;
        a.count[i] = hi - lo + 1;
    }
    return a;
}

void ref_axis_free(ref_axis *a)
{
    free(a->inside);
    free(a->start);
    free(a->count);
    free(a->w);
    memset(a, 0, sizeof *a);
}

/* README, Fast path: k = min(floor(s / 2), 128) where s >= 4 (never for nearest). */
int ref_preshrink_factor(int n_in, int n_out, ref_filter f)
{
    if (f == RF_NEAREST || (int64_t)n_in < 4 * (int64_t)n_out)
        return 1;
    const int64_t k = (int64_t)n_in / (2 * (int64_t)n_out);
    return k < 128 ? (int)k : 128;
}

/* ---------------------------------------------------------------- 2D */

static double clamp01(double v) { return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v; }

static double srgb_to_linear(double v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static double linear_to_srgb(double l)
{
    return l <= 0.0031308 ? 12.92 * l : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The block means of kx x ky blocks (the last ones partial). */
static ref_img box_shrink(const ref_img *in, int kx, int ky)
{
    int w = (in->w + kx - 1) / kx, h = (in->h + ky - 1) / ky, c = in->c;
    ref_img o = ref_img_new(w, h, c);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int x1 = (x + 1) * kx < in->w ? (x + 1) * kx : in->w, y1 = (y + 1) * ky < in->h ? (y + 1) * ky : in->h;
            double *d = o.d + ((size_t)y * w + x) * c;
            for (int yy = y * ky; yy < y1; yy++)
                for (int xx = x * kx; xx < x1; xx++)
                    for (int k = 0; k < c; k++)
                        d[k] += in->d[((size_t)yy * in->w + xx) * c + k];
            double n = (double)(x1 - x * kx) * (double)(y1 - y * ky);
            for (int k = 0; k < c; k++)
                d[k] /= n;
        }
    return o;
}

/* Premultiplied (linear) values, and back: the ends of the definition. */
static ref_img to_working(const ref_img *in, bool linear)
{
    ref_img p = ref_copy_d(in);
    int ai = ref_alpha_channel(in->c);
    size_t npx = (size_t)in->w * (size_t)in->h;
    for (size_t q = 0; q < npx; q++) {
        double *s = p.d + q * (size_t)in->c;
        for (int k = 0; k < in->c; k++) {
            if (k == ai)
                continue;
            if (linear)
                s[k] = srgb_to_linear(clamp01(s[k]));
            if (ai >= 0)
                s[k] *= s[ai];
        }
    }
    return p;
}

/* The resized alpha under which the colour is undecided where the output
 * reaches some alpha that is not 0: the device sums it in float (errors of
 * 1e-7 and more), so an exact 0 (or a tap whose weight is an exact 0 there and
 * a 1e-17 in float) can come out on either side of 0, and colour / alpha jumps
 * between 0 and a colour. Far below what u8 and u16 store as more than 0
 * (0.5 / 65535 = 7.6e-6). Where every tap is transparent the alpha is an exact
 * 0 everywhere and the colour must be 0. */
#define UNDECIDED_ALPHA 1e-6

/* Whether output (x, y) reaches a pixel whose alpha is not 0 (through taps
 * inside the support, the ends included): where none does, the device's alpha
 * is an exact 0 too, and the colour decided (0). ow * oh flags. */
static unsigned char *reaches_alpha(const ref_img *p, const ref_axis *ax, const ref_axis *ay)
{
    int ai = ref_alpha_channel(p->c), ow = ax->n_out, oh = ay->n_out;
    unsigned char *t = ref_xmalloc((size_t)ow * p->h), *o = ref_xmalloc((size_t)ow * oh);
    for (int y = 0; y < p->h; y++)
        for (int x = 0; x < ow; x++) {
            unsigned char any = 0;
            for (int k = 0; k < ax->count[x] && !any; k++)
                any = ax->inside[(size_t)x * ax->maxtaps + k] &&
                      p->d[((size_t)y * p->w + clampi(ax->start[x] + k, 0, p->w - 1)) * p->c + ai] != 0.0;
            t[(size_t)y * ow + x] = any;
        }
    for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++) {
            unsigned char any = 0;
            for (int k = 0; k < ay->count[y] && !any; k++)
                any = ay->inside[(size_t)y * ay->maxtaps + k] && t[(size_t)clampi(ay->start[y] + k, 0, p->h - 1) * ow + x];
            o[(size_t)y * ow + x] = any;
        }
    free(t);
    return o;
}

static void from_working(ref_img *im, bool linear, const unsigned char *reach)
{
    int ai = ref_alpha_channel(im->c);
    size_t npx = (size_t)im->w * (size_t)im->h;
    for (size_t q = 0; q < npx; q++) {
        double *s = im->d + q * (size_t)im->c;
        if (ai >= 0 && reach && reach[q] && fabs(s[ai]) < UNDECIDED_ALPHA)
            for (int k = 0; k < im->c; k++)
                if (k != ai)
                    ref_mark_undecided(im, q * (size_t)im->c + (size_t)k);
        double a = ai >= 0 ? clamp01(s[ai]) : 1.0;
        for (int k = 0; k < im->c; k++) {
            if (k == ai)
                continue;
            if (ai >= 0)
                s[k] = a > 0.0 ? s[k] / a : 0.0;
            if (linear)
                s[k] = linear_to_srgb(clamp01(s[k]));
        }
        if (ai >= 0)
            s[ai] = a;
    }
}

ref_img ref_resample_d(const ref_img *in, int ow, int oh, const ref_resample *rs)
{
    if (ow < 1 || oh < 1) {
        fprintf(stderr, "ref_resample_d: output %dx%d\n", ow, oh);
        abort();
    }
    int c = in->c;
    ref_img p = to_working(in, rs->linear);
    int kx = rs->fast ? ref_preshrink_factor(p.w, ow, rs->filter) : 1;
    int ky = rs->fast ? ref_preshrink_factor(p.h, oh, rs->filter) : 1;
    if (kx > 1 || ky > 1) {
        ref_img s = box_shrink(&p, kx, ky);
        ref_img_free(&p);
        p = s;
    }
    ref_axis ax = ref_axis_weights(p.w, ow, rs->filter), ay = ref_axis_weights(p.h, oh, rs->filter);
    ref_img t = ref_img_new(ow, p.h, c); /* horizontal */
    for (int y = 0; y < p.h; y++)
        for (int x = 0; x < ow; x++) {
            double *d = t.d + ((size_t)y * ow + x) * c;
            const double *w = ax.w + (size_t)x * ax.maxtaps;
            for (int k = 0; k < ax.count[x]; k++) {
                const double *s = p.d + ((size_t)y * p.w + clampi(ax.start[x] + k, 0, p.w - 1)) * c;
                for (int ch = 0; ch < c; ch++)
                    d[ch] += w[k] * s[ch];
            }
        }
    ref_img o = ref_img_new(ow, oh, c); /* vertical, row by row */
    size_t row = (size_t)ow * c;
    for (int y = 0; y < oh; y++) {
        const double *w = ay.w + (size_t)y * ay.maxtaps;
        double *d = o.d + (size_t)y * row;
        for (int k = 0; k < ay.count[y]; k++) {
            const double *s = t.d + (size_t)clampi(ay.start[y] + k, 0, p.h - 1) * row;
            for (size_t i = 0; i < row; i++)
                d[i] += w[k] * s[i];
        }
    }
    unsigned char *reach = ref_alpha_channel(c) >= 0 ? reaches_alpha(&p, &ax, &ay) : NULL;
    from_working(&o, rs->linear, reach);
    free(reach);
    ref_axis_free(&ax);
    ref_axis_free(&ay);
    ref_img_free(&t);
    ref_img_free(&p);
    return o;
}

/* The same sums straight in 2D (for the self-check): out = finish(sum_j sum_i
 * wy wx pre[j][i]), the pre-shrink done the same way. */
static ref_img resample_direct(const ref_img *in, int ow, int oh, const ref_resample *rs)
{
    int c = in->c;
    ref_img p = to_working(in, rs->linear);
    int kx = rs->fast ? ref_preshrink_factor(p.w, ow, rs->filter) : 1;
    int ky = rs->fast ? ref_preshrink_factor(p.h, oh, rs->filter) : 1;
    if (kx > 1 || ky > 1) {
        ref_img s = box_shrink(&p, kx, ky);
        ref_img_free(&p);
        p = s;
    }
    ref_axis ax = ref_axis_weights(p.w, ow, rs->filter), ay = ref_axis_weights(p.h, oh, rs->filter);
    ref_img o = ref_img_new(ow, oh, c);
    for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++)
            for (int j = 0; j < ay.count[y]; j++)
                for (int i = 0; i < ax.count[x]; i++) {
                    double ww = ay.w[(size_t)y * ay.maxtaps + j] * ax.w[(size_t)x * ax.maxtaps + i];
                    const double *s = p.d + ((size_t)clampi(ay.start[y] + j, 0, p.h - 1) * p.w +
                                             clampi(ax.start[x] + i, 0, p.w - 1)) * c;
                    for (int ch = 0; ch < c; ch++)
                        o.d[((size_t)y * ow + x) * c + ch] += ww * s[ch];
                }
    from_working(&o, rs->linear, NULL);
    ref_axis_free(&ax);
    ref_axis_free(&ay);
    ref_img_free(&p);
    return o;
}

/* ---------------------------------------------------------------- sizes */

static double im_side(double v) { return v < 1.0 ? 1.0 : v; }

int ref_geometry_size(const char *g, int w, int h, int *ow, int *oh)
{
    const char *p = g;
    char *e;
    double W = -1, H = -1;
    bool pct = false, exact = false, fill = false, shrink = false, enlarge = false;
    if (isdigit((unsigned char)*p) || *p == '.') {
        W = strtod(p, &e);
        p = e;
    }
    if (*p == 'x' || *p == 'X') {
        p++;
        if (isdigit((unsigned char)*p) || *p == '.') {
            H = strtod(p, &e);
            p = e;
        }
    }
    for (; *p; p++) {
        switch (*p) {
        case '%': pct = true; break;
        case '!': exact = true; break;
        case '^': fill = true; break;
        case '>': shrink = true; break;
        case '<': enlarge = true; break;
        default: return -1;
        }
    }
    if (W < 0 && H < 0)
        return -1;
    double rw, rh;
    if (pct) { /* ImageMagick: a missing width is 100%, a missing height the width's */
        double sx = W >= 0 ? W : 100.0, sy = H >= 0 ? H : sx;
        rw = im_side(floor(sx * w / 100.0 + 0.5));
        rh = im_side(floor(sy * h / 100.0 + 0.5));
    } else {
        rw = W >= 0 ? W : w;
        rh = H >= 0 ? H : h;
        if (!exact && (rw != w || rh != h)) {
            double scale;
            if (W >= 0 && H >= 0) {
                scale = W / w;
                if (fill ? scale < H / h : scale > H / h)
                    scale = H / h;
            } else if (W >= 0) {
                scale = W / w;
                if (fill && scale < W / h)
                    scale = W / h;
            } else {
                scale = H / h;
                if (fill && scale < H / w)
                    scale = H / w;
            }
            rw = im_side(floor(scale * w + 0.5));
            rh = im_side(floor(scale * h + 0.5));
        }
        if (shrink) {
            rw = rw > w ? w : rw;
            rh = rh > h ? h : rh;
        }
        if (enlarge) {
            rw = rw < w ? w : rw;
            rh = rh < h ? h : rh;
        }
    }
    *ow = (int)rw;
    *oh = (int)rh;
    return 0;
}

/* A rational shrink factor n / d (n >= 0, d > 0). */
typedef struct q64 {
    int64_t n, d;
} q64;

static int qcmp(q64 a, q64 b) /* sign of a - b */
{
    int64_t l = a.n * b.d, r = b.n * a.d;
    return l < r ? -1 : l > r;
}

/* round(side / s) exactly, ties up, and whether it was a tie. */
static int qside(int side, q64 s, bool *tie)
{
    int64_t num = 2 * (int64_t)side * s.d; /* 2 side / s = num / s.n */
    *tie = num % s.n == 0 && (num / s.n) % 2 == 1;
    int64_t v = (num + s.n) / (2 * s.n);
    return v < 1 ? 1 : (int)v;
}

int ref_thumbnail_size(const char *size, bool crop, int w, int h, ref_thumb *t)
{
    memset(t, 0, sizeof *t);
    const char *p = size;
    long bw = 0, bh = 0;
    bool x = false;
    while (isdigit((unsigned char)*p))
        bw = bw * 10 + (*p++ - '0');
    if (*p == 'x') {
        x = true;
        p++;
        while (isdigit((unsigned char)*p))
            bh = bh * 10 + (*p++ - '0');
    } else {
        bh = bw; /* a single number: an N x N box */
    }
    char mode = *p ? *p++ : 0;
    if (*p || (mode && mode != '<' && mode != '>' && mode != '!') || (!bw && !bh) || (!x && !bw))
        return -1;
    if ((crop || mode == '!') && (!bw || !bh))
        return -1; /* vipsthumbnail refuses these (a box to fill needs both sides) */
    q64 hs = { bw ? w : 0, bw ? bw : 1 }, vs = { bh ? h : 0, bh ? bh : 1 };
    if (mode != '!') {
        bool hless = qcmp(hs, vs) < 0;
        bool horizontal = crop ? hless : !hless; /* the axis whose shrink both take */
        if (horizontal)
            vs = hs;
        else
            hs = vs;
    }
    const q64 one = { 1, 1 };
    if (mode == '<') { /* only enlarge: never a shrink over 1 */
        hs = qcmp(hs, one) > 0 ? one : hs;
        vs = qcmp(vs, one) > 0 ? one : vs;
    } else if (mode == '>') { /* only shrink */
        hs = qcmp(hs, one) < 0 ? one : hs;
        vs = qcmp(vs, one) < 0 ? one : vs;
    }
    const q64 wq = { w, 1 }, hq = { h, 1 };
    hs = qcmp(hs, wq) > 0 ? wq : hs;
    vs = qcmp(vs, hq) > 0 ? hq : vs;
    t->rw = qside(w, hs, &t->tie_w);
    t->rh = qside(h, vs, &t->tie_h);
    t->ow = crop && bw < t->rw ? (int)bw : t->rw;
    t->oh = crop && bh < t->rh ? (int)bh : t->rh;
    t->x = (t->rw - t->ow) / 2;
    t->y = (t->rh - t->oh) / 2;
    return 0;
}

/* ---------------------------------------------------------------- steps */

static ref_img crop(const ref_img *in, int x0, int y0, int w, int h)
{
    ref_img o = ref_img_new(w, h, in->c);
    for (int y = 0; y < h; y++)
        memcpy(o.d + (size_t)y * w * in->c, in->d + ((size_t)(y0 + y) * in->w + x0) * in->c,
               (size_t)w * in->c * sizeof(double));
    for (int y = 0; y < h; y++) /* the undecided samples stay so */
        for (size_t k = 0; k < (size_t)w * in->c; k++)
            if (ref_is_undecided(in, ((size_t)(y0 + y) * in->w + x0) * in->c + k))
                ref_mark_undecided(&o, (size_t)y * w * in->c + k);
    return o;
}

ref_img ref_resize_step(const ref_img *in, const ref_step *st)
{
    const ref_resize_args *a = st->arg;
    int ow, oh;
    if (ref_geometry_size(a->geometry, in->w, in->h, &ow, &oh)) {
        fprintf(stderr, "ref_resize_step: bad geometry '%s'\n", a->geometry);
        abort();
    }
    if (ow == in->w && oh == in->h)
        return ref_copy_d(in); /* left as it is (README, Geometry) */
    return ref_resample_d(in, ow, oh, &a->rs);
}

ref_img ref_thumbnail_step(const ref_img *in, const ref_step *st)
{
    const ref_thumbnail_args *a = st->arg;
    ref_thumb t;
    if (ref_thumbnail_size(a->size, a->crop, a->geo_w > 0 ? a->geo_w : in->w, a->geo_h > 0 ? a->geo_h : in->h, &t)) {
        fprintf(stderr, "ref_thumbnail_step: bad size '%s'\n", a->size);
        abort();
    }
    ref_img r = t.rw == in->w && t.rh == in->h ? ref_copy_d(in) : ref_resample_d(in, t.rw, t.rh, &a->rs);
    if (t.ow == t.rw && t.oh == t.rh)
        return r;
    ref_img o = crop(&r, t.x, t.y, t.ow, t.oh);
    ref_img_free(&r);
    return o;
}

/* ---------------------------------------------------------------- self-check */

static ref_img row_img(int w, int h, int c, const double *v)
{
    ref_img r = ref_img_new(w, h, c);
    memcpy(r.d, v, ref_nsamples(w, h, c) * sizeof(double));
    return r;
}

static void expect_img(const char *what, const ref_img *got, const double *want, double tol)
{
    char m[200];
    for (size_t i = 0; i < ref_nsamples(got->w, got->h, got->c); i++) {
        snprintf(m, sizeof m, "%.160s [%zu]", what, i);
        ref_expect(m, got->d[i], want[i], tol);
    }
}

static void expect_size(const char *g, int w, int h, int ww, int wh)
{
    int ow = -1, oh = -1;
    char m[160];
    snprintf(m, sizeof m, "geometry '%s' of %dx%d: rc", g, w, h);
    ref_expect(m, ref_geometry_size(g, w, h, &ow, &oh), 0, 0);
    snprintf(m, sizeof m, "geometry '%s' of %dx%d: width", g, w, h);
    ref_expect(m, ow, ww, 0);
    snprintf(m, sizeof m, "geometry '%s' of %dx%d: height", g, w, h);
    ref_expect(m, oh, wh, 0);
}

static void expect_thumb(const char *s, bool cr, int w, int h, int rw, int rh, int ow, int oh, int x, int y)
{
    ref_thumb t;
    char m[160];
    snprintf(m, sizeof m, "thumbnail '%s'%s of %dx%d", s, cr ? " crop" : "", w, h);
    ref_expect(m, ref_thumbnail_size(s, cr, w, h, &t), 0, 0);
    int got[6] = { t.rw, t.rh, t.ow, t.oh, t.x, t.y }, want[6] = { rw, rh, ow, oh, x, y };
    for (int i = 0; i < 6; i++) {
        snprintf(m, sizeof m, "thumbnail '%s'%s of %dx%d: field %d (rw rh ow oh x y)", s, cr ? " crop" : "", w, h, i);
        ref_expect(m, got[i], want[i], 0);
    }
}

int ref_resize_self_check(void)
{
    int fails0 = ref_fail_count();
    char m[160];
    /* kernels: values, continuity, partition of unity (sum over integer shifts) */
    ref_expect("lanczos3(0)", ref_filter_kernel(RF_LANCZOS3, 0), 1, 0);
    ref_expect("lanczos3(1)", ref_filter_kernel(RF_LANCZOS3, 1), 0, 1e-15);
    ref_expect("lanczos3(2.5)", ref_filter_kernel(RF_LANCZOS3, 2.5), (1 / (2.5 * M_PI)) * (sin(2.5 * M_PI / 3) / (2.5 * M_PI / 3)),
               1e-15);
    ref_expect("lanczos2(0.5)", ref_filter_kernel(RF_LANCZOS2, 0.5), (2 / M_PI) * (sin(M_PI / 4) / (M_PI / 4)), 1e-15);
    ref_expect("lanczos3(3)", ref_filter_kernel(RF_LANCZOS3, 3), 0, 0);
    ref_expect("mitchell(0)", ref_filter_kernel(RF_MITCHELL, 0), 8.0 / 9.0, 1e-15);
    ref_expect("mitchell(1)", ref_filter_kernel(RF_MITCHELL, 1), 1.0 / 18.0, 1e-15);
    ref_expect("mitchell(1-)", ref_filter_kernel(RF_MITCHELL, 1 - 1e-9), 1.0 / 18.0, 1e-8);
    ref_expect("mitchell(2-)", ref_filter_kernel(RF_MITCHELL, 2 - 1e-9), 0, 1e-8);
    ref_expect("catrom(0)", ref_filter_kernel(RF_CATROM, 0), 1, 0);
    ref_expect("catrom(1)", ref_filter_kernel(RF_CATROM, 1), 0, 1e-15);
    ref_expect("catrom(0.5)", ref_filter_kernel(RF_CATROM, 0.5), 0.5625, 1e-15);
    ref_expect("catrom(1.5)", ref_filter_kernel(RF_CATROM, -1.5), -0.0625, 1e-15);
    ref_expect("box(-0.5)", ref_filter_kernel(RF_BOX, -0.5), 1, 0);
    ref_expect("box(0.5)", ref_filter_kernel(RF_BOX, 0.5), 0, 0);
    for (int f = RF_MITCHELL; f <= RF_BOX; f++)
        for (double t = 0; t < 1; t += 0.0625) {
            double s = 0;
            for (int n = -3; n <= 3; n++)
                s += ref_filter_kernel((ref_filter)f, t + n);
            snprintf(m, sizeof m, "%s: partition of unity at %g", ref_filter_names[f], t);
            ref_expect(m, s, 1, 1e-14);
        }

    /* axes: weights sum to 1; the identity at n_in == n_out (interpolating
     * filters); box 6 -> 3 pairs; box 5 -> 2: {0, 1}, {2, 3, 4}; nearest */
    {
        static const int sz[][2] = { { 7, 3 }, { 3, 7 }, { 100, 1 }, { 1, 9 }, { 13, 13 }, { 5, 2 }, { 7, 6 } };
        for (int f = 0; f < RF_COUNT; f++)
            for (size_t k = 0; k < sizeof sz / sizeof sz[0]; k++) {
                ref_axis a = ref_axis_weights(sz[k][0], sz[k][1], (ref_filter)f);
                for (int i = 0; i < a.n_out; i++) {
                    double s = 0;
                    for (int t = 0; t < a.count[i]; t++)
                        s += a.w[(size_t)i * a.maxtaps + t];
                    snprintf(m, sizeof m, "%s %d->%d: weights of %d sum to 1", ref_filter_names[f], sz[k][0], sz[k][1], i);
                    ref_expect(m, s, 1, 1e-13);
                }
                ref_axis_free(&a);
            }
        for (int f = 0; f < RF_COUNT; f++) {
            if (f == RF_MITCHELL)
                continue; /* not interpolating: k(0) = 8/9 */
            double v[9] = { 0.1, 0.9, 0.3, 0.0, 1.0, 0.5, 0.25, 0.75, 0.6 };
            ref_img in = row_img(9, 1, 1, v);
            ref_resample rs = { (ref_filter)f, false, false };
            ref_img o = ref_resample_d(&in, 9, 1, &rs);
            snprintf(m, sizeof m, "%s: identity at 9 -> 9", ref_filter_names[f]);
            expect_img(m, &o, v, 1e-15);
            ref_img_free(&o);
            ref_img_free(&in);
        }
        double v6[6] = { 0, 1, 0.25, 0.75, 0.5, 0.5 }, w3[3] = { 0.5, 0.5, 0.5 };
        ref_img in = row_img(6, 1, 1, v6);
        ref_resample box = { RF_BOX, false, false };
        ref_img o = ref_resample_d(&in, 3, 1, &box);
        expect_img("box 6 -> 3", &o, w3, 1e-15);
        ref_img_free(&o);
        ref_img_free(&in);
        double v5[5] = { 0.2, 0.4, 0.3, 0.6, 0.9 }, w2[2] = { 0.3, 0.6 };
        in = row_img(1, 5, 1, v5);
        o = ref_resample_d(&in, 1, 2, &box);
        expect_img("box 5 -> 2 (column)", &o, w2, 1e-15);
        ref_img_free(&o);
        ref_img_free(&in);
        /* 7 -> 6: output 2 has centre 2.4166...: taps 2 (t = -0.357), 3 (0.5: out) */
        ref_axis a = ref_axis_weights(7, 6, RF_BOX);
        int n2 = 0;
        for (int t = 0; t < a.count[2]; t++)
            n2 += a.w[2 * (size_t)a.maxtaps + t] != 0;
        ref_expect("box 7 -> 6 output 2: one tap", n2, 1, 0);
        ref_axis_free(&a);
        static const int nn73[3] = { 1, 3, 5 }, nn37[7] = { 0, 0, 1, 1, 1, 2, 2 };
        a = ref_axis_weights(7, 3, RF_NEAREST);
        for (int i = 0; i < 3; i++)
            ref_expect("nearest 7 -> 3", a.start[i], nn73[i], 0);
        ref_axis_free(&a);
        a = ref_axis_weights(3, 7, RF_NEAREST);
        for (int i = 0; i < 7; i++)
            ref_expect("nearest 3 -> 7", a.start[i], nn37[i], 0);
        ref_axis_free(&a);
        /* bilinear 2 -> 4: centres -0.25, 0.25, 0.75, 1.25 (clamped at the edges) */
        double v2[2] = { 0, 1 }, w4[4] = { 0, 0.25, 0.75, 1 };
        in = row_img(2, 1, 1, v2);
        ref_resample bl = { RF_BILINEAR, false, false };
        o = ref_resample_d(&in, 4, 1, &bl);
        expect_img("bilinear 2 -> 4", &o, w4, 1e-15);
        ref_img_free(&o);
        ref_img_free(&in);
    }

    /* alpha: (colour, alpha) = (1, 1), (0.3, 0): box 2 -> 1 gives colour 1, alpha
     * 0.5; both transparent: 0, 0 */
    {
        double v[4] = { 1, 1, 0.3, 0 }, w[2] = { 1, 0.5 }, t[4] = { 0.7, 0, 0.3, 0 }, z[2] = { 0, 0 };
        ref_resample box = { RF_BOX, false, false };
        ref_img in = row_img(2, 1, 2, v), o = ref_resample_d(&in, 1, 1, &box);
        expect_img("box alpha", &o, w, 1e-15);
        ref_img_free(&o);
        ref_img_free(&in);
        in = row_img(2, 1, 2, t);
        o = ref_resample_d(&in, 1, 1, &box);
        expect_img("box transparent", &o, z, 0);
        ref_img_free(&o);
        ref_img_free(&in);
    }
    /* linear: the mean of 0 and 1 is 0.5 in linear light, sRGB 0.7353569830524495 */
    {
        double v[2] = { 0, 1 }, wl[1] = { 0.7353569830524495 }, wn[1] = { 0.5 };
        ref_img in = row_img(2, 1, 1, v);
        ref_resample lin = { RF_BOX, true, false }, non = { RF_BOX, false, false };
        ref_img o = ref_resample_d(&in, 1, 1, &lin);
        expect_img("box linear", &o, wl, 1e-13);
        ref_img_free(&o);
        o = ref_resample_d(&in, 1, 1, &non);
        expect_img("box not linear", &o, wn, 0);
        ref_img_free(&o);
        ref_img_free(&in);
        ref_expect("sRGB round trip", linear_to_srgb(srgb_to_linear(0.2)), 0.2, 1e-15);
        ref_expect("sRGB linear segment", srgb_to_linear(0.04), 0.04 / 12.92, 0);
    }
    /* fast path: the factors; 8 -> 2 box equals the exact box; 9 -> 2: blocks
     * {0,1} {2,3} {4,5} {6,7} {8}, then 5 -> 2 box: {b0, b1}, {b2, b3, b4} */
    {
        static const int fk[][4] = { { 8, 2, RF_BOX, 2 },   { 7, 2, RF_BOX, 1 },      { 9, 2, RF_LANCZOS3, 2 },
                                     { 100, 1, RF_MITCHELL, 50 }, { 16, 4, RF_CATROM, 2 }, { 100, 10, RF_BOX, 5 },
                                     { 100, 1, RF_NEAREST, 1 }, { 3, 7, RF_BOX, 1 },     { 1000, 1, RF_MITCHELL, 128 },
                                     { 257, 1, RF_BOX, 128 } };
        for (size_t k = 0; k < sizeof fk / sizeof fk[0]; k++) {
            snprintf(m, sizeof m, "preshrink factor %d -> %d %s", fk[k][0], fk[k][1], ref_filter_names[fk[k][2]]);
            ref_expect(m, ref_preshrink_factor(fk[k][0], fk[k][1], (ref_filter)fk[k][2]), fk[k][3], 0);
        }
        double v[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
        ref_resample fb = { RF_BOX, false, true }, eb = { RF_BOX, false, false };
        ref_img in = row_img(8, 1, 1, v), a = ref_resample_d(&in, 2, 1, &fb), b = ref_resample_d(&in, 2, 1, &eb);
        expect_img("fast box 8 -> 2 = exact box", &a, b.d, 1e-15);
        ref_img_free(&a);
        ref_img_free(&b);
        ref_img_free(&in);
        double w[2] = { 1.5, 19.0 / 3.0 }, we[2] = { 1.5, 6.0 };
        in = row_img(9, 1, 1, v);
        a = ref_resample_d(&in, 2, 1, &fb);
        expect_img("fast box 9 -> 2 (partial block)", &a, w, 1e-14);
        b = ref_resample_d(&in, 2, 1, &eb); /* exact: centres 1.75, 6.25, f 4.5: {0..3}, {4..8} */
        expect_img("exact box 9 -> 2", &b, we, 1e-14);
        ref_img_free(&a);
        ref_img_free(&b);
        ref_img_free(&in);
    }
    /* separable == direct 2D (with alpha, linear, fast, both directions) */
    {
        static const struct { int w, h, c, ow, oh, f, lin, fast; } cs[] = {
            { 13, 11, 4, 5, 17, RF_LANCZOS3, 0, 0 }, { 9, 7, 2, 20, 3, RF_MITCHELL, 1, 0 },
            { 40, 9, 4, 3, 9, RF_CATROM, 1, 1 },     { 1, 12, 3, 7, 2, RF_BOX, 0, 1 },
            { 6, 6, 1, 11, 5, RF_BILINEAR, 0, 0 },  { 17, 3, 4, 4, 8, RF_NEAREST, 1, 1 },
            { 31, 29, 2, 6, 5, RF_LANCZOS2, 0, 1 },
        };
        for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
            vkimg_image im = ref_random_image(cs[k].w, cs[k].h, cs[k].c, k % 2 ? VKIMG_U8 : VKIMG_F32, 300 + k);
            ref_img d = ref_from_image(&im);
            ref_resample rs = { (ref_filter)cs[k].f, cs[k].lin != 0, cs[k].fast != 0 };
            ref_img a = ref_resample_d(&d, cs[k].ow, cs[k].oh, &rs), b = resample_direct(&d, cs[k].ow, cs[k].oh, &rs);
            double mx = 0;
            for (size_t i = 0; i < ref_nsamples(a.w, a.h, a.c); i++)
                mx = fmax(mx, fabs(a.d[i] - b.d[i]));
            snprintf(m, sizeof m, "separable vs direct %s %dx%dx%d -> %dx%d", ref_filter_names[cs[k].f], cs[k].w, cs[k].h,
                     cs[k].c, cs[k].ow, cs[k].oh);
            ref_expect(m, mx, 0, 1e-12);
            ref_img_free(&a);
            ref_img_free(&b);
            ref_img_free(&d);
            ref_image_free(&im);
        }
    }

    /* geometry (ImageMagick) by hand */
    expect_size("100x100", 200, 50, 100, 25);
    expect_size("100x100^", 200, 50, 400, 100);
    expect_size("100x100!", 200, 50, 100, 100);
    expect_size("100x100>", 50, 80, 50, 80);
    expect_size("100x100>", 200, 50, 100, 25);
    expect_size("100x100<", 50, 80, 63, 100); /* 62.5 rounds up */
    expect_size("100x100<", 200, 50, 200, 50);
    expect_size("100", 50, 200, 100, 400);
    expect_size("100x", 50, 200, 100, 400);
    expect_size("x100", 200, 50, 400, 100);
    expect_size("100^", 200, 50, 400, 100);
    expect_size("x100^", 200, 50, 400, 100);
    expect_size("1x1", 1000, 10, 1, 1);
    expect_size("50%", 101, 51, 51, 26);
    expect_size("29%", 50, 10, 15, 3); /* 14.5 -> 15 */
    expect_size("150x50%", 10, 10, 15, 5);
    expect_size("10%", 3, 3, 1, 1);
    expect_size("12.5%", 8, 16, 1, 2);
    expect_size("200x100!", 7, 3, 200, 100);
    expect_size("7x3", 7, 3, 7, 3);
    /* vipsthumbnail --size by hand: rw rh ow oh x y */
    expect_thumb("256", false, 1024, 768, 256, 192, 256, 192, 0, 0);
    expect_thumb("256", false, 100, 50, 256, 128, 256, 128, 0, 0);
    expect_thumb("256>", false, 100, 50, 100, 50, 100, 50, 0, 0);
    expect_thumb("256<", false, 1024, 768, 1024, 768, 1024, 768, 0, 0);
    expect_thumb("200x100", false, 400, 400, 100, 100, 100, 100, 0, 0);
    expect_thumb("200x", false, 400, 100, 200, 50, 200, 50, 0, 0);
    expect_thumb("x50", false, 400, 100, 200, 50, 200, 50, 0, 0);
    expect_thumb("200x100!", false, 400, 400, 200, 100, 200, 100, 0, 0);
    expect_thumb("200x100", true, 400, 400, 200, 200, 200, 100, 0, 50);
    expect_thumb("300x300", true, 100, 50, 600, 300, 300, 300, 150, 0);
    expect_thumb("300x300>", true, 100, 50, 100, 50, 100, 50, 0, 0);
    expect_thumb("10", false, 1000, 1, 10, 1, 10, 1, 0, 0);
    expect_thumb("3", false, 1, 1000, 1, 3, 1, 3, 0, 0);
    {
        ref_thumb t;
        ref_expect("thumbnail crop needs both sides", ref_thumbnail_size("100x", true, 10, 10, &t), -1, 0);
        ref_expect("thumbnail tie: 3 of 2x1 -> 1.5", ref_thumbnail_size("3", false, 2, 1, &t), 0, 0);
        ref_expect("thumbnail tie flagged", t.tie_h && !t.tie_w, 1, 0);
        ref_expect("thumbnail tie rounds up", t.rh, 2, 0);
    }
    return ref_fail_count() - fails0;
}
