/* The reference of rotate by any angle (see rotate_ref.h). Written from the
 * definition only; shares no code with src/ or shaders/. */
#include "rotate_ref.h"

#include <math.h>
#include <stdio.h>

double ref_catmull_rom(double t)
{
    /* Keys' cubic convolution with a = -0.5 */
    const double a = -0.5;
    t = fabs(t);
    if (t <= 1)
        return (a + 2) * t * t * t - (a + 3) * t * t + 1;
    if (t < 2)
        return a * t * t * t - 5 * a * t * t + 8 * a * t - 4 * a;
    return 0;
}

static double rad(double deg) { return deg * (M_PI / 180.0); }

int ref_rotate_size(int w, int h, double deg, int *ow, int *oh)
{
    double c = fabs(cos(rad(deg))), s = fabs(sin(rad(deg)));
    double bw = w * c + h * s, bh = w * s + h * c;
    *ow = (int)ceil(bw);
    *oh = (int)ceil(bh);
    *ow = *ow < 1 ? 1 : *ow;
    *oh = *oh < 1 ? 1 : *oh;
    return fabs(bw - floor(bw + 0.5)) < 1e-6 || fabs(bh - floor(bh + 0.5)) < 1e-6 ? -1 : 0;
}

int ref_rotate_channels(int c, const double bg[4]) { return ref_alpha_channel(c) < 0 && bg[3] < 1 ? c + 1 : c; }

ref_img ref_rotate_d(const ref_img *in, double deg, const double bg[4])
{
    int W, H;
    ref_rotate_size(in->w, in->h, deg, &W, &H);
    int oc = ref_rotate_channels(in->c, bg), ia = ref_alpha_channel(in->c), oa = ref_alpha_channel(oc);
    int colour = oa >= 0 ? oc - 1 : oc;
    /* the background, premultiplied, in the output's channels */
    double pb[4] = { 0, 0, 0, 0 }, ba = oa >= 0 ? bg[3] : 1.0;
    if (colour == 1)
        pb[0] = (0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2]) * ba;
    else
        for (int k = 0; k < 3; k++)
            pb[k] = bg[k] * ba;
    if (oa >= 0)
        pb[oa] = ba;
    double c = cos(rad(deg)), s = sin(rad(deg));
    ref_img r = ref_img_new(W, H, oc);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double dx = x + 0.5 - W / 2.0, dy = y + 0.5 - H / 2.0;
            /* the point in the input, then in pixel-centre index units */
            double u = in->w / 2.0 + dx * c + dy * s - 0.5, v = in->h / 2.0 - dx * s + dy * c - 0.5;
            int x0 = (int)floor(u), y0 = (int)floor(v);
            double sum[4] = { 0, 0, 0, 0 };
            for (int j = y0 - 1; j <= y0 + 2; j++)
                for (int i = x0 - 1; i <= x0 + 2; i++) {
                    double wgt = ref_catmull_rom(u - i) * ref_catmull_rom(v - j);
                    if (wgt == 0)
                        continue;
                    double px[4];
                    if (i < 0 || j < 0 || i >= in->w || j >= in->h) {
                        for (int k = 0; k < oc; k++)
                            px[k] = pb[k];
                    } else {
                        const double *p = in->d + ((size_t)j * in->w + i) * in->c;
                        double a = ia >= 0 ? p[ia] : 1.0;
                        for (int k = 0; k < colour; k++)
                            px[k] = p[k] * (ia >= 0 ? a : 1.0);
                        if (oa >= 0)
                            px[oa] = a;
                    }
                    for (int k = 0; k < oc; k++)
                        sum[k] += wgt * px[k];
                }
            double *o = r.d + ((size_t)y * W + x) * oc;
            if (oa >= 0) {
                double a = sum[oa] < 0 ? 0 : sum[oa] > 1 ? 1 : sum[oa];
                for (int k = 0; k < colour; k++)
                    o[k] = a > 0 ? sum[k] / a : 0;
                o[oa] = a;
            } else {
                for (int k = 0; k < oc; k++)
                    o[k] = sum[k];
            }
        }
    return r;
}

/* ---------------------------------------------------------------- self-check */

int ref_rotate_self_check(void)
{
    int fails0 = ref_fail_count();
    /* Catmull-Rom: interpolating (1 at 0, 0 at the other integers), weights sum to 1,
     * -0.0625 at 1.5, 0.5625 at 0.5 */
    ref_expect("catrom(0)", ref_catmull_rom(0), 1, 0);
    ref_expect("catrom(1)", ref_catmull_rom(1), 0, 1e-15);
    ref_expect("catrom(2)", ref_catmull_rom(2), 0, 1e-15);
    ref_expect("catrom(0.5)", ref_catmull_rom(0.5), 0.5625, 1e-15);
    ref_expect("catrom(1.5)", ref_catmull_rom(-1.5), -0.0625, 1e-15);
    for (double f = 0; f < 1; f += 0.125)
        ref_expect("catrom partition of unity", ref_catmull_rom(f + 1) + ref_catmull_rom(f) + ref_catmull_rom(1 - f) +
                   ref_catmull_rom(2 - f), 1, 1e-15);
    /* canvas: 100 x 50 at 30 degrees: 100 cos + 50 sin = 111.60, 100 sin + 50 cos = 93.30 */
    int w, h;
    ref_expect("canvas 30 ok", ref_rotate_size(100, 50, 30, &w, &h), 0, 0);
    ref_expect("canvas 30 w", w, 112, 0);
    ref_expect("canvas 30 h", h, 94, 0);
    ref_rotate_size(100, 50, -30, &w, &h);
    ref_expect("canvas -30 same", w * 1000 + h, 112094, 0);
    ref_rotate_size(1, 1, 45, &w, &h);
    ref_expect("canvas 1x1 at 45: 2x2", w * 1000 + h, 2002, 0);
    ref_expect("canvas 60 of 2x2 is near-whole? no", ref_rotate_size(2, 2, 60, &w, &h), 0, 0); /* 2.732 */
    ref_expect("canvas 45 of 3x3 flagged? no", ref_rotate_size(3, 3, 45, &w, &h), 0, 0);     /* 4.243 */
    /* channels: only an image without alpha on a background that is not opaque gains one */
    const double black[4] = { 0, 0, 0, 1 }, clear[4] = { 0, 0, 0, 0 };
    ref_expect("channels 3 black", ref_rotate_channels(3, black), 3, 0);
    ref_expect("channels 3 clear", ref_rotate_channels(3, clear), 4, 0);
    ref_expect("channels 1 clear", ref_rotate_channels(1, clear), 2, 0);
    ref_expect("channels 2 clear", ref_rotate_channels(2, clear), 2, 0);
    /* a constant image stays constant inside (partition of unity), the far corners are
     * the background; 180.0001 degrees of a 4 x 4 ramp is close to the 180 move */
    {
        ref_img im = ref_img_new(9, 7, 1);
        for (size_t i = 0; i < 63; i++)
            im.d[i] = 0.25;
        const double white[4] = { 1, 1, 1, 1 };
        ref_img r = ref_rotate_d(&im, 45, white); /* 12 x 12 */
        ref_expect("rotate constant: size", r.w * 1000 + r.h, 12012, 0);
        ref_expect("rotate constant: centre", r.d[6 * 12 + 6], 0.25, 1e-12);
        ref_expect("rotate constant: corner is white", r.d[0], 1, 1e-12);
        ref_img_free(&r);
        for (int y = 0; y < 7; y++)
            for (int x = 0; x < 9; x++)
                im.d[y * 9 + x] = (x + 10 * y) / 100.0;
        r = ref_rotate_d(&im, 180.0001, black);
        ref_expect("rotate 180.0001 size", r.w * 1000 + r.h, 10008, 0); /* 9.0001 -> 10, 7.0002 -> 8 */
        ref_img_free(&r);
        r = ref_rotate_d(&im, 0.00001, black);
        ref_expect("rotate 0.00001 size", r.w * 1000 + r.h, 10008, 0);
        /* canvas 10 x 8 of 9 x 7: the image sits half a pixel in, so output (5, 4)
         * samples index (4.5, 3.5), between four pixels: Catmull-Rom is exact on the
         * ramp x + 10 y */
        ref_expect("rotate tiny angle: half a pixel in", r.d[4 * 10 + 5], (4.5 + 35) / 100.0, 1e-6);
        ref_img_free(&r);
        ref_img_free(&im);
    }
    /* alpha gained: an opaque pixel in the middle of a transparent canvas */
    {
        ref_img im = ref_img_new(1, 1, 3);
        im.d[0] = 1, im.d[1] = 0.5, im.d[2] = 0;
        ref_img r = ref_rotate_d(&im, 45, clear); /* 2 x 2: each pixel centre 0.707 from the pixel's */
        ref_expect("rotate 1x1 gains alpha", r.c, 4, 0);
        ref_expect("rotate 1x1 colour unpremultiplied", r.d[1], 0.5, 1e-12);
        ref_expect("rotate 1x1 alpha", r.d[3], ref_catmull_rom(sqrt(0.5)), 1e-12);
        ref_img_free(&r);
        ref_img_free(&im);
    }
    return ref_fail_count() - fails0;
}
