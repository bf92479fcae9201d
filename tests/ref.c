/* Independent double-precision CPU references for the ops (see ref.h). Written
 * from the ops' specification only; shares no code with src/ or shaders/. */
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static void *ref_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "ref: out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

static ref_img ref_img_new(int w, int h, int c)
{
    ref_img r = { w, h, c, NULL };
    r.d = ref_xmalloc((size_t)w * (size_t)h * (size_t)c * sizeof(double));
    memset(r.d, 0, (size_t)w * (size_t)h * (size_t)c * sizeof(double));
    return r;
}

void ref_img_free(ref_img *r)
{
    if (!r)
        return;
    free(r->d);
    r->d = NULL;
    r->w = r->h = r->c = 0;
}

static size_t ref_nsamples(int w, int h, int c) { return (size_t)w * (size_t)h * (size_t)c; }

static int ref_alpha_channel(int c) { return c == 2 ? 1 : c == 4 ? 3 : -1; }

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

/* ---------------------------------------------------------------- copy */

ref_img ref_copy_d(const ref_img *in)
{
    ref_img r = ref_img_new(in->w, in->h, in->c);
    memcpy(r.d, in->d, ref_nsamples(in->w, in->h, in->c) * sizeof(double));
    return r;
}

ref_img ref_copy(const vkimg_image *in) { return ref_from_image(in); }

/* ---------------------------------------------------------------- gray */

ref_img ref_gray_d(const ref_img *in, int weights)
{
    static const double W[2][3] = { { 0.299, 0.587, 0.114 }, { 0.2126, 0.7152, 0.0722 } };
    const double *k = W[weights ? 1 : 0];
    if (in->c < 3)
        return ref_copy_d(in);
    int oc = in->c == 3 ? 1 : 2;
    ref_img r = ref_img_new(in->w, in->h, oc);
    size_t npx = (size_t)in->w * (size_t)in->h;
    for (size_t p = 0; p < npx; p++) {
        const double *s = in->d + p * (size_t)in->c;
        double *o = r.d + p * (size_t)oc;
        o[0] = k[0] * s[0] + k[1] * s[1] + k[2] * s[2];
        if (oc == 2)
            o[1] = s[3];
    }
    return r;
}

ref_img ref_gray(const vkimg_image *in, int weights)
{
    ref_img d = ref_from_image(in);
    ref_img r = ref_gray_d(&d, weights);
    ref_img_free(&d);
    return r;
}

/* ---------------------------------------------------------------- blur */

static double *ref_gauss(double sigma, int radius)
{
    double *w = ref_xmalloc((2 * (size_t)radius + 1) * sizeof(double));
    double sum = 0;
    for (int i = -radius; i <= radius; i++) {
        w[i + radius] = exp(-((double)i * i) / (2.0 * sigma * sigma));
        sum += w[i + radius];
    }
    for (int i = 0; i <= 2 * radius; i++)
        w[i] /= sum;
    return w;
}

static int ref_clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Colour * alpha for alpha images (a copy in any case). */
static ref_img ref_premul(const ref_img *in)
{
    ref_img p = ref_copy_d(in);
    int ai = ref_alpha_channel(in->c);
    if (ai < 0)
        return p;
    size_t npx = (size_t)in->w * (size_t)in->h;
    for (size_t q = 0; q < npx; q++) {
        double *s = p.d + q * (size_t)in->c;
        for (int k = 0; k < in->c; k++)
            if (k != ai)
                s[k] *= s[ai];
    }
    return p;
}

/* In place: colour / alpha where alpha != 0, else 0. */
static void ref_unpremul(ref_img *im)
{
    int ai = ref_alpha_channel(im->c);
    if (ai < 0)
        return;
    size_t npx = (size_t)im->w * (size_t)im->h;
    for (size_t q = 0; q < npx; q++) {
        double *s = im->d + q * (size_t)im->c;
        double a = s[ai];
        for (int k = 0; k < im->c; k++)
            if (k != ai)
                s[k] = a != 0.0 ? s[k] / a : 0.0;
    }
}

/* Separable convolution with the normalized kernel wt[0..2 radius], clamp-to-
 * edge, alpha-aware (ref.h). */
static ref_img ref_conv_sep_d(const ref_img *in, const double *wt, int radius)
{
    int w = in->w, h = in->h, c = in->c;
    ref_img p = ref_premul(in);
    ref_img t = ref_img_new(w, h, c); /* horizontal pass */
    for (int y = 0; y < h; y++) {
        const double *row = p.d + (size_t)y * w * c;
        double *orow = t.d + (size_t)y * w * c;
        for (int x = 0; x < w; x++) {
            double acc[4] = { 0, 0, 0, 0 };
            for (int i = -radius; i <= radius; i++) {
                const double *s = row + (size_t)ref_clampi(x + i, 0, w - 1) * c;
                for (int k = 0; k < c; k++)
                    acc[k] += wt[i + radius] * s[k];
            }
            for (int k = 0; k < c; k++)
                orow[(size_t)x * c + k] = acc[k];
        }
    }
    ref_img o = ref_img_new(w, h, c); /* vertical pass, row by row */
    size_t rowlen = (size_t)w * c;
    for (int y = 0; y < h; y++) {
        double *orow = o.d + (size_t)y * rowlen;
        for (int j = -radius; j <= radius; j++) {
            const double *srow = t.d + (size_t)ref_clampi(y + j, 0, h - 1) * rowlen;
            double wj = wt[j + radius];
            for (size_t i = 0; i < rowlen; i++)
                orow[i] += wj * srow[i];
        }
    }
    ref_unpremul(&o);
    ref_img_free(&p);
    ref_img_free(&t);
    return o;
}

ref_img ref_blur_d(const ref_img *in, double sigma, int radius)
{
    double *wt = ref_gauss(sigma, radius);
    ref_img o = ref_conv_sep_d(in, wt, radius);
    free(wt);
    return o;
}

/* Box widths from Kovesi, "Fast almost-Gaussian filtering" (2010), eq. for n
 * boxes: w_ideal = sqrt(12 sigma^2 / n + 1); wl = the odd integer at or below
 * it, wu = wl + 2; m = round((12 sigma^2 - n wl^2 - 4 n wl - 3 n) / (-4 wl - 4))
 * boxes of wl, the rest wu. The composite kernel is the boxes convolved. */
int ref_box_radii(double sigma, int rad[3])
{
    const int n = 3;
    double wi = sqrt(12.0 * sigma * sigma / n + 1.0);
    int wl = (int)floor(wi);
    if (wl % 2 == 0)
        wl--;
    int m = (int)lround((12.0 * sigma * sigma - n * wl * wl - 4.0 * n * wl - 3.0 * n) / (-4.0 * wl - 4.0));
    if (m < 0)
        m = 0;
    if (m > n)
        m = n;
    int total = 0;
    for (int i = 0; i < n; i++)
        total += rad[i] = ((i < m ? wl : wl + 2) - 1) / 2;
    return total;
}

ref_img ref_box3_d(const ref_img *in, double sigma)
{
    int rad[3], radius = ref_box_radii(sigma, rad);
    size_t n = 2 * (size_t)radius + 1;
    double *k = ref_xmalloc(n * sizeof *k), *t = ref_xmalloc(n * sizeof *t);
    for (size_t i = 0; i < n; i++)
        k[i] = i == (size_t)radius; /* delta */
    for (int b = 0; b < 3; b++) { /* k = k * box(rad[b]) */
        double inv = 1.0 / (2.0 * rad[b] + 1.0);
        for (size_t i = 0; i < n; i++) {
            double acc = 0;
            for (int j = -rad[b]; j <= rad[b]; j++)
                if ((long)i + j >= 0 && (size_t)((long)i + j) < n)
                    acc += k[(long)i + j] * inv;
            t[i] = acc;
        }
        memcpy(k, t, n * sizeof *k);
    }
    ref_img o = ref_conv_sep_d(in, k, radius);
    free(k);
    free(t);
    return o;
}

ref_img ref_blur_direct_d(const ref_img *in, double sigma, int radius)
{
    int w = in->w, h = in->h, c = in->c, ai = ref_alpha_channel(c);
    double *wt = ref_gauss(sigma, radius);
    ref_img o = ref_img_new(w, h, c);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double acc[4] = { 0, 0, 0, 0 }, wa = 0;
            for (int j = -radius; j <= radius; j++)
                for (int i = -radius; i <= radius; i++) {
                    const double *s = in->d + ((size_t)ref_clampi(y + j, 0, h - 1) * w + ref_clampi(x + i, 0, w - 1)) * c;
                    double ww = wt[i + radius] * wt[j + radius];
                    double a = ai >= 0 ? s[ai] : 1.0;
                    for (int k = 0; k < c; k++)
                        acc[k] += k == ai ? ww * a : ww * a * s[k];
                    wa += ww * a;
                }
            double *d = o.d + ((size_t)y * w + x) * c;
            for (int k = 0; k < c; k++) {
                if (ai < 0 || k == ai)
                    d[k] = acc[k];
                else
                    d[k] = wa != 0.0 ? acc[k] / wa : 0.0;
            }
        }
    free(wt);
    return o;
}

ref_img ref_blur(const vkimg_image *in, double sigma, int radius)
{
    ref_img d = ref_from_image(in);
    ref_img r = ref_blur_d(&d, sigma, radius);
    ref_img_free(&d);
    return r;
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
    r.nsamples = n;
    for (size_t i = 0; i < n; i++) {
        double e = exp->d[i];
        double q = ref_quant(e, got->fmt);
        double g = ref_sample_raw(got, i);
        double err = got->fmt == VKIMG_F32 ? fabs(g - e) : fabs(g - q);
        if (err != err)
            err = INFINITY; /* NaN from the device */
        double raw = err;
        if (got->fmt != VKIMG_F32) {
            double m = got->fmt == VKIMG_U8 ? 255.0 : 65535.0;
            double xc = e > 0.0 ? (e < 1.0 ? e : 1.0) : 0.0;
            raw = fabs(g - xc * m);
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

static void ref_expect(const char *what, double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) {
        fprintf(stderr, "ref self-check FAIL: %s: got %.12g, want %.12g\n", what, got, want);
        ref_fails++;
    }
}

static vkimg_image ref_wrap(int w, int h, int c, vkimg_fmt fmt, void *data)
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
    ref_fails = 0;
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

    /* gray of known pixels: (10, 20, 30) */
    {
        uint8_t px[4] = { 10, 20, 30, 77 };
        vkimg_image im = ref_wrap(1, 1, 3, VKIMG_U8, px);
        ref_img g = ref_gray(&im, 0);
        ref_expect("gray bt601 c", g.c, 1, 0);
        ref_expect("gray bt601 (10,20,30)", g.d[0] * 255.0, 18.15, 1e-9);
        ref_expect("gray bt601 (10,20,30) u8", ref_quant(g.d[0], VKIMG_U8), 18, 0);
        ref_img_free(&g);
        g = ref_gray(&im, 1);
        ref_expect("gray bt709 (10,20,30)", g.d[0] * 255.0, 18.596, 1e-9);
        ref_expect("gray bt709 (10,20,30) u8", ref_quant(g.d[0], VKIMG_U8), 19, 0);
        ref_img_free(&g);
        im.c = 4;
        g = ref_gray(&im, 0);
        ref_expect("gray rgba c", g.c, 2, 0);
        ref_expect("gray rgba alpha", g.d[1] * 255.0, 77, 1e-9);
        ref_img_free(&g);
        uint16_t red[3] = { 65535, 0, 0 };
        vkimg_image r16 = ref_wrap(1, 1, 3, VKIMG_U16, red);
        g = ref_gray(&r16, 0);
        ref_expect("gray bt601 red u16", ref_quant(g.d[0], VKIMG_U16), floor(0.299 * 65535 + 0.5), 0);
        ref_img_free(&g);
        im.c = 2;
        g = ref_gray(&im, 1);
        ref_expect("gray c=2 unchanged", g.c * 1000 + g.d[0] * 255 + g.d[1] * 255 * 1000, 2000 + 10 + 20000, 1e-9);
        ref_img_free(&g);
    }

    /* 3x1 blur by hand: sigma 1, radius 1: w1 = e^-0.5 / (1 + 2 e^-0.5), w0 = 1 / (1 + 2 e^-0.5) */
    {
        double e = exp(-0.5), w0 = 1.0 / (1.0 + 2.0 * e), w1 = e / (1.0 + 2.0 * e);
        float px[3] = { 0.0f, 1.0f, 0.0f };
        vkimg_image im = ref_wrap(3, 1, 1, VKIMG_F32, px);
        ref_img b = ref_blur(&im, 1.0, 1);
        ref_expect("blur 3x1 [0]", b.d[0], w1, 1e-12); /* x=-1 clamps to x=0 (value 0) */
        ref_expect("blur 3x1 [1]", b.d[1], w0, 1e-12);
        ref_expect("blur 3x1 [2]", b.d[2], w1, 1e-12);
        ref_expect("w1 numeric", w1, 0.274068619061197, 1e-12);
        ref_img_free(&b);
        /* the same as a column (vertical pass) */
        im = ref_wrap(1, 3, 1, VKIMG_F32, px);
        b = ref_blur(&im, 1.0, 1);
        ref_expect("blur 1x3 [0]", b.d[0], w1, 1e-12);
        ref_expect("blur 1x3 [1]", b.d[1], w0, 1e-12);
        ref_img_free(&b);
        /* clamp-to-edge: edge value gets w0 + w1 */
        float edge[3] = { 1.0f, 0.0f, 0.0f };
        im = ref_wrap(3, 1, 1, VKIMG_F32, edge);
        b = ref_blur(&im, 1.0, 1);
        ref_expect("blur edge [0]", b.d[0], w0 + w1, 1e-12);
        ref_expect("blur edge [1]", b.d[1], w1, 1e-12);
        ref_expect("blur edge [2]", b.d[2], 0, 1e-12);
        ref_img_free(&b);

        /* alpha (c = 2): pixels (colour, alpha) = (1, 1), (0.5, 0), (0, 0.5) */
        float ga[6] = { 1.0f, 1.0f, 0.5f, 0.0f, 0.0f, 0.5f };
        im = ref_wrap(3, 1, 2, VKIMG_F32, ga);
        b = ref_blur(&im, 1.0, 1);
        /* x=0: window (1,1) (1,1) (0.5,0): sum wa = w1 + w0, colour 1 */
        ref_expect("blur alpha [0] colour", b.d[0], 1.0, 1e-12);
        ref_expect("blur alpha [0] alpha", b.d[1], w0 + w1, 1e-12);
        /* x=1: (1,1) (0.5,0) (0,0.5): colour (1*1 + 0)/(1 + 0.5) = 2/3, alpha 1.5 w1 */
        ref_expect("blur alpha [1] colour", b.d[2], 2.0 / 3.0, 1e-12);
        ref_expect("blur alpha [1] alpha", b.d[3], 1.5 * w1, 1e-12);
        /* x=2: (0.5,0) (0,0.5) (0,0.5): colour 0, alpha (w0 + w1) 0.5 */
        ref_expect("blur alpha [2] colour", b.d[4], 0.0, 1e-12);
        ref_expect("blur alpha [2] alpha", b.d[5], 0.5 * (w0 + w1), 1e-12);
        ref_img_free(&b);

        /* fully transparent window -> colour 0, alpha 0 (colour under it ignored) */
        uint8_t tr[12] = { 200, 0, 100, 0, 50, 60, 70, 0, 1, 2, 3, 0 };
        vkimg_image t4 = ref_wrap(3, 1, 4, VKIMG_U8, tr);
        b = ref_blur(&t4, 0.7, 1);
        for (int i = 0; i < 12; i++)
            ref_expect("blur transparent -> 0", b.d[i], 0.0, 0);
        ref_img_free(&b);
    }

    /* radius 0 is the identity (alpha images: colour where alpha = 0 becomes 0) */
    {
        vkimg_image im = ref_random_image(9, 7, 3, VKIMG_U8, 5);
        ref_img a = ref_from_image(&im);
        ref_img b = ref_blur(&im, 2.0, 0);
        double m = 0;
        for (size_t i = 0; i < ref_nsamples(9, 7, 3); i++)
            m = fmax(m, fabs(a.d[i] - b.d[i]));
        ref_expect("blur radius 0 identity", m, 0, 1e-15);
        ref_img_free(&a);
        ref_img_free(&b);
        ref_image_free(&im);
    }

    /* separable == direct 2D, with alpha, radius larger than the image */
    {
        static const struct { int w, h, c, r; double s; } cs[] = {
            { 13, 11, 4, 3, 1.0 }, { 13, 11, 2, 5, 2.5 }, { 5, 3, 4, 9, 3.0 }, { 1, 1, 2, 7, 2.0 },
            { 7, 1, 3, 4, 1.5 }, { 1, 6, 1, 4, 1.5 }, { 16, 16, 4, 2, 0.5 },
        };
        for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
            vkimg_image im = ref_random_image(cs[k].w, cs[k].h, cs[k].c, k % 2 ? VKIMG_U8 : VKIMG_F32, 100 + k);
            ref_img d = ref_from_image(&im);
            ref_img a = ref_blur_d(&d, cs[k].s, cs[k].r);
            ref_img b = ref_blur_direct_d(&d, cs[k].s, cs[k].r);
            double m = 0;
            for (size_t i = 0; i < ref_nsamples(cs[k].w, cs[k].h, cs[k].c); i++)
                m = fmax(m, fabs(a.d[i] - b.d[i]));
            char what[96];
            snprintf(what, sizeof what, "separable vs direct blur %dx%dx%d r=%d", cs[k].w, cs[k].h, cs[k].c, cs[k].r);
            ref_expect(what, m, 0, 1e-12);
            ref_img_free(&a);
            ref_img_free(&b);
            ref_img_free(&d);
            ref_image_free(&im);
        }
    }

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
    return ref_fails;
}
