/* Shared primitives of the independent double-precision CPU references (see
 * ref.h). Written from the ops' specification only; shares no code with src/ or
 * shaders/. */
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

void *ref_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "ref: out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

ref_img ref_img_new(int w, int h, int c)
{
    ref_img r = { w, h, c, NULL };
    r.d = ref_xmalloc((size_t)w * (size_t)h * (size_t)c * sizeof(double));
    memset(r.d, 0, (size_t)w * (size_t)h * (size_t)c * sizeof(double));
    return r;
}

/* ---------------------------------------------------------------- undecided samples */

/* The marks of every image, (data, index) pairs: few (a handful per image). */
typedef struct undecided_mark {
    const double *d;
    size_t i;
} undecided_mark;
static undecided_mark *marks;
static size_t nmarks, capmarks;

void ref_mark_undecided(const ref_img *im, size_t i)
{
    if (nmarks == capmarks) {
        capmarks = capmarks ? 2 * capmarks : 64;
        undecided_mark *m = realloc(marks, capmarks * sizeof *m);
        if (!m) {
            fprintf(stderr, "ref: out of memory\n");
            abort();
        }
        marks = m;
    }
    marks[nmarks].d = im->d;
    marks[nmarks].i = i;
    nmarks++;
}

bool ref_is_undecided(const ref_img *im, size_t i)
{
    for (size_t k = 0; k < nmarks; k++)
        if (marks[k].d == im->d && marks[k].i == i)
            return true;
    return false;
}

static void drop_marks(const double *d)
{
    size_t o = 0;
    for (size_t k = 0; k < nmarks; k++)
        if (marks[k].d != d)
            marks[o++] = marks[k];
    nmarks = o;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The sorted indices marked on d (malloc'ed; NULL when none). */
static size_t *marks_of(const double *d, size_t *n)
{
    *n = 0;
    for (size_t k = 0; k < nmarks; k++)
        *n += marks[k].d == d;
    if (!*n)
        return NULL;
    size_t *v = ref_xmalloc(*n * sizeof *v), j = 0;
    for (size_t k = 0; k < nmarks; k++)
        if (marks[k].d == d)
            v[j++] = marks[k].i;
    qsort(v, *n, sizeof *v, cmp_size);
    return v;
}

void ref_img_free(ref_img *r)
{
    if (!r)
        return;
    if (r->d && nmarks)
        drop_marks(r->d);
    free(r->d);
    r->d = NULL;
    r->w = r->h = r->c = 0;
}

size_t ref_nsamples(int w, int h, int c) { return (size_t)w * (size_t)h * (size_t)c; }

int ref_alpha_channel(int c) { return c == 2 ? 1 : c == 4 ? 3 : -1; }

double ref_sample_raw(const vkimg_image *im, size_t i)
{
    switch (im->fmt) {
    case VKIMG_U8:
        return (double)((const uint8_t *)im->data)[i];
    case VKIMG_U16:
        return (double)((const uint16_t *)im->data)[i];
    case VKIMG_F32:
        return (double)((const float *)im->data)[i];
    default:
        fprintf(stderr, "ref: unsupported sample format %d\n", (int)im->fmt);
        abort();
    }
}

ref_img ref_from_image(const vkimg_image *im)
{
    ref_img r = ref_img_new(im->w, im->h, im->c);
    size_t n = ref_nsamples(im->w, im->h, im->c);
    double scale = im->fmt == VKIMG_U8 ? 255.0 : im->fmt == VKIMG_U16 ? 65535.0 : 1.0;
    for (size_t i = 0; i < n; i++)
        r.d[i] = ref_sample_raw(im, i) / scale;
    return r;
}

ref_img ref_copy_d(const ref_img *in)
{
    ref_img r = ref_img_new(in->w, in->h, in->c);
    memcpy(r.d, in->d, ref_nsamples(in->w, in->h, in->c) * sizeof(double));
    return r;
}

/* ---------------------------------------------------------------- chains */

ref_img ref_apply(const vkimg_image *in, const ref_step *st, int n)
{
    ref_img cur = ref_from_image(in);
    for (int i = 0; i < n; i++) {
        ref_img nx = st[i].fn(&cur, &st[i]);
        ref_img_free(&cur);
        cur = nx;
    }
    return cur;
}

int ref_apply_levels(const vkimg_image *in, const ref_step *st, int n, vkimg_fmt fmt, ref_img *out, int max)
{
    if (max < 1)
        return 0;
    out[0] = ref_apply(in, st, n);
    const ref_step *last = n > 0 ? &st[n - 1] : NULL;
    if (!last || !last->outputs || !last->next)
        return 1;
    enum { MAXL = 64 };
    int ws[MAXL], hs[MAXL];
    int cnt = last->outputs(out[0].w, out[0].h, last, ws, hs, max < MAXL ? max : MAXL);
    for (int k = 1; k < cnt; k++) {
        ref_img prev = ref_written_img(&out[k - 1], fmt);
        out[k] = last->next(&prev, ws[k], hs[k], last);
        ref_img_free(&prev);
    }
    return cnt;
}

/* ---------------------------------------------------------------- formats */

double ref_quant(double x, vkimg_fmt f)
{
    if (f == VKIMG_U8 || f == VKIMG_U16) {
        double m = f == VKIMG_U8 ? 255.0 : 65535.0;
        if (!(x > 0.0)) /* also NaN -> 0 */
            x = 0.0;
        if (x > 1.0)
            x = 1.0;
        /* An exact tie (the true value is k + 0.5, e.g. gray of u8 pixels with
         * 299 r + 587 g + 114 b = 1000 k + 500) rounds up; the double evaluation
         * can land a few ulps below it, so allow 1e-9 LSB (far above double
         * error, far below any real difference). */
        return floor(x * m + 0.5 + 1e-9);
    }
    return (double)(float)x;
}

double ref_written(double x, vkimg_fmt f)
{
    if (f == VKIMG_U8)
        return ref_quant(x, f) / 255.0;
    if (f == VKIMG_U16)
        return ref_quant(x, f) / 65535.0;
    return (double)(float)x;
}

ref_img ref_written_img(const ref_img *im, vkimg_fmt f)
{
    ref_img r = ref_copy_d(im);
    size_t n = ref_nsamples(im->w, im->h, im->c);
    for (size_t i = 0; i < n; i++)
        r.d[i] = ref_written(r.d[i], f);
    return r;
}

bool ref_alpha_weighted;

double ref_compare(const vkimg_image *got, const ref_img *exp, ref_cmp *res)
{
    ref_cmp r;
    memset(&r, 0, sizeof r);
    r.x = r.y = r.ch = -1;
    r.raw_x = r.raw_y = r.raw_ch = -1;
    r.shape_ok = got && exp && got->data && exp->d && got->w == exp->w && got->h == exp->h && got->c == exp->c &&
                 (got->fmt == VKIMG_U8 || got->fmt == VKIMG_U16 || got->fmt == VKIMG_F32);
    if (!r.shape_ok) {
        r.max_err = INFINITY;
        if (res)
            *res = r;
        return r.max_err;
    }
    size_t n = ref_nsamples(got->w, got->h, got->c);
    size_t nund = 0, ku = 0, *und = marks_of(exp->d, &nund);
    r.nsamples = n;
    for (size_t i = 0; i < n; i++) {
        if (ku < nund && und[ku] == i) {
            while (ku < nund && und[ku] == i)
                ku++;
            r.nundecided++;
            continue;
        }
        double e = exp->d[i];
        double q = ref_quant(e, got->fmt);
        double g = ref_sample_raw(got, i);
        double err = got->fmt == VKIMG_F32 ? fabs(g - e) : fabs(g - q);
        int ai = ref_alpha_channel(got->c), ch = (int)(i % (size_t)got->c);
        bool weighted = ref_alpha_weighted && ai >= 0 && ch != ai && got->fmt != VKIMG_U8;
        double ae = 1.0;
        if (weighted) {
            size_t ia = i - (size_t)ch + (size_t)ai;
            double ag = ref_sample_raw(got, ia) / (got->fmt == VKIMG_U16 ? 65535.0 : 1.0);
            ae = exp->d[ia];
            ae = ae > 0.0 ? (ae < 1.0 ? ae : 1.0) : 0.0;
            ag = ag > 0.0 ? (ag < 1.0 ? ag : 1.0) : 0.0;
            if (got->fmt == VKIMG_F32)
                err = fabs(g * ag - e * ae);
            else
                err *= ae;
        }
        if (err != err)
            err = INFINITY; /* NaN from the device */
        double raw = err;
        if (got->fmt != VKIMG_F32) {
            double m = got->fmt == VKIMG_U8 ? 255.0 : 65535.0;
            double xc = e > 0.0 ? (e < 1.0 ? e : 1.0) : 0.0;
            raw = fabs(g - xc * m) * ae;
            if (g != q)
                r.nmismatch++;
        } else if (g != q) {
            r.nmismatch++;
        }
        if (raw > r.max_raw_err || (r.raw_x < 0 && i == 0)) {
            size_t px = i / (size_t)got->c;
            r.max_raw_err = raw;
            r.raw_x = (int)(px % (size_t)got->w);
            r.raw_y = (int)(px / (size_t)got->w);
            r.raw_ch = (int)(i % (size_t)got->c);
        }
        if (err > r.max_err || (r.x < 0 && i == 0)) {
            size_t px = i / (size_t)got->c;
            r.max_err = err;
            r.x = (int)(px % (size_t)got->w);
            r.y = (int)(px / (size_t)got->w);
            r.ch = (int)(i % (size_t)got->c);
            r.expected = e;
            r.expected_q = q;
            r.got = g;
        }
    }
    free(und);
    if (res)
        *res = r;
    return r.max_err;
}

/* ---------------------------------------------------------------- test images */

static uint64_t ref_rng(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double ref_rng_unit(uint64_t *s) { return (double)(ref_rng(s) >> 11) * (1.0 / 9007199254740992.0); }

/* Class of the alpha block (bx, by): 0 transparent, 1 opaque, 2 random. */
static int ref_block_class(uint64_t seed, int bx, int by)
{
    uint64_t s = seed ^ ((uint64_t)(uint32_t)bx * 0x9e3779b1ull) ^ ((uint64_t)(uint32_t)by << 32);
    uint64_t v = ref_rng(&s) % 100;
    return v < 35 ? 0 : v < 65 ? 1 : 2;
}

vkimg_image ref_random_image(int w, int h, int c, vkimg_fmt fmt, uint64_t seed)
{
    vkimg_image im;
    memset(&im, 0, sizeof im);
    if (w < 1 || h < 1 || c < 1 || c > 4 || (fmt != VKIMG_U8 && fmt != VKIMG_U16 && fmt != VKIMG_F32)) {
        fprintf(stderr, "ref_random_image: bad arguments %dx%dx%d fmt %d\n", w, h, c, (int)fmt);
        abort();
    }
    size_t n = ref_nsamples(w, h, c);
    size_t ss = fmt == VKIMG_U8 ? 1 : fmt == VKIMG_U16 ? 2 : 4;
    im.w = w;
    im.h = h;
    im.c = c;
    im.fmt = fmt;
    im.data = ref_xmalloc(n * ss);
    uint64_t s = seed * 0x2545f4914f6cdd1dull + 0x1234567ull;
    int ai = ref_alpha_channel(c);
    int bs = 1 + (int)(ref_rng(&s) % 16); /* alpha block size 1..16 */
    if (w * (size_t)h > 64 && bs < 6)
        bs += 8; /* larger images: make sure some regions outlast small kernels */
    uint64_t bseed = ref_rng(&s);
    int nonzero = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                size_t i = ((size_t)y * w + x) * c + k;
                double u = ref_rng_unit(&s); /* [0, 1) */
                if (k == ai) {
                    int cls = ref_block_class(bseed, x / bs, y / bs);
                    u = cls == 0 ? 0.0 : cls == 1 ? 1.0 : u;
                }
                switch (fmt) {
                case VKIMG_U8: {
                    uint8_t v = k == ai && u == 1.0 ? 255 : (uint8_t)(u * 256.0);
                    ((uint8_t *)im.data)[i] = v;
                    nonzero |= v != 0;
                    break;
                }
                case VKIMG_U16: {
                    uint16_t v = k == ai && u == 1.0 ? 65535 : (uint16_t)(u * 65536.0);
                    ((uint16_t *)im.data)[i] = v;
                    nonzero |= v != 0;
                    break;
                }
                default: {
                    float v = (float)(k == ai ? u : u * 1.25);
                    ((float *)im.data)[i] = v;
                    nonzero |= v != 0.0f;
                    break;
                }
                }
            }
    if (!nonzero) {
        if (fmt == VKIMG_U8)
            ((uint8_t *)im.data)[0] = 255;
        else if (fmt == VKIMG_U16)
            ((uint16_t *)im.data)[0] = 65535;
        else
            ((float *)im.data)[0] = 1.0f;
    }
    return im;
}

void ref_image_free(vkimg_image *im)
{
    if (!im)
        return;
    free(im->data);
    im->data = NULL;
}

/* ---------------------------------------------------------------- self-check */

static int ref_fails;

void ref_expect(const char *what, double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) {
        fprintf(stderr, "ref self-check FAIL: %s: got %.12g, want %.12g\n", what, got, want);
        ref_fails++;
    }
}

int ref_fail_count(void) { return ref_fails; }

vkimg_image ref_wrap(int w, int h, int c, vkimg_fmt fmt, void *data)
{
    vkimg_image im;
    memset(&im, 0, sizeof im);
    im.w = w;
    im.h = h;
    im.c = c;
    im.fmt = fmt;
    im.data = data;
    return im;
}

int ref_self_check(void)
{
    int fails0 = ref_fails;
    /* quantization */
    ref_expect("quant u8 0.5", ref_quant(0.5, VKIMG_U8), 128, 0);
    ref_expect("quant u8 1.2", ref_quant(1.2, VKIMG_U8), 255, 0);
    ref_expect("quant u8 -0.1", ref_quant(-0.1, VKIMG_U8), 0, 0);
    ref_expect("quant u8 100/255", ref_quant(100.0 / 255.0, VKIMG_U8), 100, 0);
    ref_expect("quant u16 1", ref_quant(1.0, VKIMG_U16), 65535, 0);
    ref_expect("quant u16 0.5", ref_quant(0.5, VKIMG_U16), 32768, 0);
    ref_expect("quant f32 1.5", ref_quant(1.5, VKIMG_F32), 1.5, 0);
    /* exact tie computed in double: 0.299*1 + 0.587*1 + 0.114*... -> k + 0.5 */
    {
        int ties = 0, wrong = 0;
        for (int r = 0; r < 256; r += 1)
            for (int g = 0; g < 256; g += 3)
                for (int b = 0; b < 256; b += 5) {
                    unsigned num = 2990u * r + 5870u * g + 1140u * b;
                    double y = 0.299 * (r / 255.0) + 0.587 * (g / 255.0) + 0.114 * (b / 255.0);
                    ties += num % 10000u == 5000u;
                    wrong += ref_quant(y, VKIMG_U8) != (double)((num + 5000u) / 10000u);
                }
        ref_expect("quant ties round up (gray of u8 rgb)", wrong, 0, 0);
        ref_expect("quant ties exist", ties > 0, 1, 0);
    }

    ref_expect("written u8 0.5", ref_written(0.5, VKIMG_U8), 128.0 / 255.0, 0);
    ref_expect("written u16 -1", ref_written(-1.0, VKIMG_U16), 0, 0);
    ref_expect("written f32 1/3", ref_written(1.0 / 3.0, VKIMG_F32), (double)(1.0f / 3.0f), 0);
    ref_expect("written f32 keeps 1.5", ref_written(1.5, VKIMG_F32), 1.5, 0);

    /* random images: deterministic, never all zeros, alpha has 0 and max */
    {
        vkimg_image a = ref_random_image(64, 64, 4, VKIMG_U8, 7), b = ref_random_image(64, 64, 4, VKIMG_U8, 7);
        ref_expect("random deterministic", memcmp(a.data, b.data, 64 * 64 * 4) == 0, 1, 0);
        int n0 = 0, n255 = 0;
        for (int i = 3; i < 64 * 64 * 4; i += 4) {
            n0 += ((uint8_t *)a.data)[i] == 0;
            n255 += ((uint8_t *)a.data)[i] == 255;
        }
        ref_expect("random alpha has transparent", n0 > 0, 1, 0);
        ref_expect("random alpha has opaque", n255 > 0, 1, 0);
        ref_image_free(&a);
        ref_image_free(&b);
        for (uint64_t s = 0; s < 64; s++) {
            vkimg_image t = ref_random_image(1, 1, 1 + (int)(s % 4), (vkimg_fmt)(s % 2 ? VKIMG_U8 : VKIMG_U16), s);
            int nz = 0;
            for (int i = 0; i < t.c; i++)
                nz |= ref_sample_raw(&t, (size_t)i) != 0;
            ref_expect("random never all zero", nz, 1, 0);
            ref_image_free(&t);
        }
    }

    /* compare */
    {
        uint8_t g[3] = { 10, 21, 30 };
        vkimg_image im = ref_wrap(3, 1, 1, VKIMG_U8, g);
        ref_img e = ref_img_new(3, 1, 1);
        e.d[0] = 10 / 255.0;
        e.d[1] = 19 / 255.0;
        e.d[2] = 30.4 / 255.0;
        ref_cmp c;
        ref_expect("compare max", ref_compare(&im, &e, &c), 2, 0);
        ref_expect("compare x", c.x, 1, 0);
        ref_expect("compare got", c.got, 21, 0);
        ref_expect("compare exp", c.expected_q, 19, 0);
        e.c = 2;
        ref_expect("compare shape", isinf(ref_compare(&im, &e, &c)), 1, 0);
        ref_img_free(&e);
    }
    /* undecided samples are left out (and counted); the marks go with the data */
    {
        uint8_t g[3] = { 10, 99, 30 };
        vkimg_image im = ref_wrap(3, 1, 1, VKIMG_U8, g);
        ref_img e = ref_img_new(3, 1, 1);
        e.d[0] = 10 / 255.0;
        e.d[1] = 0.0;
        e.d[2] = 30 / 255.0;
        ref_mark_undecided(&e, 1);
        ref_cmp c;
        ref_expect("compare undecided left out", ref_compare(&im, &e, &c), 0, 0);
        ref_expect("compare undecided counted", (double)c.nundecided, 1, 0);
        ref_expect("undecided mark", ref_is_undecided(&e, 1) && !ref_is_undecided(&e, 0), 1, 0);
        ref_img f = ref_copy_d(&e);
        ref_expect("a copy has no marks", ref_is_undecided(&f, 1), 0, 0);
        ref_expect("compare a copy", ref_compare(&im, &f, &c), 99, 0);
        ref_img_free(&f);
        ref_img_free(&e);
        e = ref_img_new(3, 1, 1);
        ref_expect("marks go with the freed data", (double)c.nundecided + ref_is_undecided(&e, 1), 0, 0);
        ref_img_free(&e);
    }
    /* alpha images: straight, and weighted by alpha (ref_alpha_weighted) */
    {
        float g[4] = { 1000.0f, 0.0001f, 0.25f, 1.5f };
        vkimg_image im = ref_wrap(2, 1, 2, VKIMG_F32, g);
        ref_img e = ref_img_new(2, 1, 2);
        e.d[0] = 1001.0;
        e.d[1] = (double)0.0001f;
        e.d[2] = 0.5;
        e.d[3] = 1.5; /* alpha over 1: clamped to 1 in the premultiplied error */
        ref_cmp c;
        bool pm = ref_alpha_weighted;
        ref_alpha_weighted = false;
        ref_expect("compare f32 straight", ref_compare(&im, &e, &c), 1, 1e-9);
        ref_alpha_weighted = true;
        ref_expect("compare f32 premultiplied", ref_compare(&im, &e, &c), 0.25, 1e-9);
        ref_expect("compare f32 premultiplied x", c.x, 1, 0);
        /* u16: the colour error times the reference's alpha; u8 as it is */
        uint16_t g16[4] = { 1000, 16384, 5000, 65535 };
        vkimg_image i16 = ref_wrap(2, 1, 2, VKIMG_U16, g16);
        e.d[0] = 1003 / 65535.0; /* 3 LSB off */
        e.d[1] = 0.25;           /* the reference's alpha: 0.75 LSB once weighted */
        e.d[2] = 5000 / 65535.0;
        e.d[3] = 1.0;
        ref_expect("compare u16 alpha-weighted", ref_compare(&i16, &e, &c), 0.75, 1e-9);
        ref_expect("compare u16 alpha-weighted raw", c.max_raw_err, 0.75, 1e-9);
        ref_alpha_weighted = false;
        ref_expect("compare u16 straight", ref_compare(&i16, &e, &c), 3, 1e-9);
        ref_alpha_weighted = pm;
        ref_img_free(&e);
    }
    return ref_fails - fails0;
}
