/* The reference of gray (see gray_ref.h). Written from the op's specification
 * only; shares no code with src/ or shaders/. */
#include "gray_ref.h"

#include <math.h>
#include <stdint.h>

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

ref_img ref_gray_step(const ref_img *in, const ref_step *st) { return ref_gray_d(in, st->i); }

/* ---------------------------------------------------------------- self-check */

int ref_gray_self_check(void)
{
    int fails0 = ref_fail_count();
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
    return ref_fail_count() - fails0;
}
