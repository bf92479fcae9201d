/* The reference of levels (see levels_ref.h). Written from the op's definition
 * only; shares no code with src/ or shaders/. */
#include "levels_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

ref_img ref_levels_d(const ref_img *in, double black, double white, double gamma)
{
    ref_img r = ref_copy_d(in);
    int a = ref_alpha_channel(in->c);
    size_t npx = (size_t)in->w * (size_t)in->h;
    for (size_t p = 0; p < npx; p++)
        for (int k = 0; k < in->c; k++) {
            if (k == a)
                continue;
            double *v = &r.d[p * (size_t)in->c + (size_t)k];
            double t = (*v - black) / (white - black);
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            *v = pow(t, 1.0 / gamma);
        }
    return r;
}

static struct { double black, white, gamma; } params[64];
static int nparams;

int ref_levels_params(double black, double white, double gamma)
{
    for (int k = 0; k < nparams; k++)
        if (params[k].black == black && params[k].white == white && params[k].gamma == gamma)
            return k;
    if (nparams == 64) {
        fprintf(stderr, "ref_levels_params: more than 64 sets\n");
        abort();
    }
    params[nparams].black = black;
    params[nparams].white = white;
    params[nparams].gamma = gamma;
    return nparams++;
}

ref_img ref_levels_step(const ref_img *in, const ref_step *st)
{
    return ref_levels_d(in, params[st->i].black, params[st->i].white, params[st->i].gamma);
}

/* ---------------------------------------------------------------- self-check */

int ref_levels_self_check(void)
{
    int fails0 = ref_fail_count();
    ref_img im = ref_img_new(5, 1, 2); /* gray + alpha */
    static const double v[5] = { 0.0, 0.25, 0.5, 0.75, 1.25 };
    for (int i = 0; i < 5; i++) {
        im.d[2 * i] = v[i];
        im.d[2 * i + 1] = 0.1 * i;
    }
    /* 0.25..0.75, gamma 2: t = 0, 0, 0.5, 1, 1 (clamped) -> sqrt */
    ref_img r = ref_levels_d(&im, 0.25, 0.75, 2.0);
    ref_expect("levels below black", r.d[0], 0, 0);
    ref_expect("levels at black", r.d[2], 0, 0);
    ref_expect("levels midpoint gamma 2", r.d[4], sqrt(0.5), 1e-15);
    ref_expect("levels at white", r.d[6], 1, 0);
    ref_expect("levels above 1 (HDR) clamped", r.d[8], 1, 0);
    ref_expect("levels alpha kept", r.d[7], 0.3, 1e-15);
    ref_img_free(&r);
    /* the identity: 0, 1, 1 */
    r = ref_levels_d(&im, 0, 1, 1);
    ref_expect("levels identity", r.d[2], 0.25, 0);
    ref_expect("levels identity clamps HDR", r.d[8], 1, 0);
    ref_img_free(&r);
    /* ImageMagick -level 10%,90%,0.5 of 50%: ((0.5 - 0.1) / 0.8)^2 = 0.25; of 30%: 0.0625 */
    r = ref_levels_d(&im, 0.1, 0.9, 0.5);
    ref_expect("levels gamma 0.5 at 0.5", r.d[4], 0.25, 1e-15);
    ref_expect("levels gamma 0.5 at 0.25", r.d[2], 0.0351562500, 1e-12); /* (0.15/0.8)^2 */
    ref_img_free(&r);
    /* u8 128 with black 0.2, white 0.8: (128/255 - 0.2) / 0.6 = 0.5032679.. -> 128.33 -> 128 */
    uint8_t px[4] = { 128, 51, 204, 255 };
    vkimg_image u8 = ref_wrap(2, 1, 2, VKIMG_U8, px);
    ref_img d = ref_from_image(&u8);
    r = ref_levels_d(&d, 0.2, 0.8, 1.0);
    ref_expect("levels u8 128", ref_quant(r.d[0], VKIMG_U8), 128, 0);
    ref_expect("levels u8 204 = white", ref_quant(r.d[2], VKIMG_U8), 255, 0);
    ref_expect("levels u8 alpha 51 kept", ref_quant(r.d[1], VKIMG_U8), 51, 0);
    ref_img_free(&r);
    ref_img_free(&d);
    ref_img_free(&im);
    return ref_fail_count() - fails0;
}
