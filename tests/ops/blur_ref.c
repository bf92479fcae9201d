/* The references of blur (see blur_ref.h). Written from the op's specification
 * only; shares no code with src/ or shaders/. */
#include "blur_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *ref_gauss(double sigma, int radius)
{
    double *w = ref_xmalloc((2 * (size_t)radius + 1) * sizeof(double));
    double sum = 0;
    for (int i = -radius; i <= radius; i++) {
        w[i + radius] = exp(-0.5 * (i / sigma) * (i / sigma));
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

ref_img ref_blur_step(const ref_img *in, const ref_step *st)
{
    int r = st->i >= 0 ? st->i : (int)ceil(3.0 * st->x);
    return ref_blur_d(in, st->x, r);
}

ref_img ref_box_step(const ref_img *in, const ref_step *st) /* blur.c: the exact Gaussian below sigma 3 */
{
    return st->x < 3.0 ? ref_blur_d(in, st->x, (int)ceil(3.0 * st->x)) : ref_box3_d(in, st->x);
}

/* ---------------------------------------------------------------- self-check */

int ref_blur_self_check(void)
{
    int fails0 = ref_fail_count();
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
    return ref_fail_count() - fails0;
}
