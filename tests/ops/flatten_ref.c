/* The reference of flatten (see flatten_ref.h). Written from the op's definition
 * only; shares no code with src/ or shaders/. */
#include "flatten_ref.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

ref_img ref_flatten_d(const ref_img *in, double r, double g, double b)
{
    if (in->c != 2 && in->c != 4)
        return ref_copy_d(in);
    const int oc = in->c - 1;
    const double bg[3] = { oc == 1 ? 0.299 * r + 0.587 * g + 0.114 * b : r, g, b };
    ref_img o = ref_img_new(in->w, in->h, oc);
    const size_t npx = (size_t)in->w * (size_t)in->h;
    for (size_t p = 0; p < npx; p++) {
        const double *s = in->d + p * (size_t)in->c;
        double a = s[oc];
        a = a < 0 ? 0 : a > 1 ? 1 : a;
        for (int k = 0; k < oc; k++)
            o.d[p * (size_t)oc + (size_t)k] = s[k] * a + bg[k] * (1.0 - a);
    }
    return o;
}

static double params[64][3];
static int nparams;

int ref_flatten_params(double r, double g, double b)
{
    for (int k = 0; k < nparams; k++)
        if (params[k][0] == r && params[k][1] == g && params[k][2] == b)
            return k;
    if (nparams == 64) {
        fprintf(stderr, "ref_flatten_params: more than 64 backgrounds\n");
        abort();
    }
    params[nparams][0] = r;
    params[nparams][1] = g;
    params[nparams][2] = b;
    return nparams++;
}

ref_img ref_flatten_step(const ref_img *in, const ref_step *st)
{
    return ref_flatten_d(in, params[st->i][0], params[st->i][1], params[st->i][2]);
}

/* ---------------------------------------------------------------- self-check */

int ref_flatten_self_check(void)
{
    int fails0 = ref_fail_count();
    /* RGBA over white: (200, 100, 0) at alpha 51 (0.2): 200 * 0.2 + 255 * 0.8 = 244,
     * 100 * 0.2 + 204 = 224, 0 + 204 = 204; opaque and transparent pixels */
    uint8_t px[12] = { 200, 100, 0, 51, 10, 20, 30, 255, 99, 99, 99, 0 };
    vkimg_image im = ref_wrap(3, 1, 4, VKIMG_U8, px);
    ref_img d = ref_from_image(&im);
    ref_img r = ref_flatten_d(&d, 1, 1, 1);
    ref_expect("flatten rgba channels", r.c, 3, 0);
    ref_expect("flatten over white r", r.d[0] * 255, 244, 1e-9);
    ref_expect("flatten over white g", r.d[1] * 255, 224, 1e-9);
    ref_expect("flatten over white b", r.d[2] * 255, 204, 1e-9);
    ref_expect("flatten opaque kept", r.d[4] * 255, 20, 1e-9);
    ref_expect("flatten transparent is the background", r.d[8] * 255, 255, 1e-9);
    ref_img_free(&r);
    /* over black: the colour times alpha, 200 * 51 / 255 = 40 */
    r = ref_flatten_d(&d, 0, 0, 0);
    ref_expect("flatten over black", r.d[0] * 255, 40, 1e-9);
    ref_expect("flatten transparent over black", r.d[8], 0, 0);
    ref_img_free(&r);
    ref_img_free(&d);
    /* gray + alpha over red: luma 0.299; 100 at alpha 0.5 (127.5 of 255) */
    ref_img ga = ref_img_new(1, 1, 2);
    ga.d[0] = 100 / 255.0;
    ga.d[1] = 0.5;
    r = ref_flatten_d(&ga, 1, 0, 0);
    ref_expect("flatten gray channels", r.c, 1, 0);
    ref_expect("flatten gray over red's luma", r.d[0], 50 / 255.0 + 0.299 * 0.5, 1e-12);
    ref_img_free(&r);
    /* alpha past [0, 1] (float images) clamped */
    ga.d[1] = 1.5;
    r = ref_flatten_d(&ga, 1, 1, 1);
    ref_expect("flatten alpha above 1", r.d[0], 100 / 255.0, 1e-12);
    ref_img_free(&r);
    ref_img_free(&ga);
    /* no alpha: unchanged */
    ref_img rgb = ref_img_new(1, 1, 3);
    rgb.d[0] = 0.25;
    r = ref_flatten_d(&rgb, 1, 1, 1);
    ref_expect("flatten rgb unchanged", r.c == 3 && r.d[0] == 0.25, 1, 0);
    ref_img_free(&r);
    ref_img_free(&rgb);
    return ref_fail_count() - fails0;
}
