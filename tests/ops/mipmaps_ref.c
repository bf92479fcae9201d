/* The reference of mipmaps (see mipmaps_ref.h). Written from the README only;
 * shares no code with src/ or shaders/. */
#include "mipmaps_ref.h"

#include <stdio.h>
#include <string.h>

int ref_mipmap_sizes(int w, int h, int levels, int *ws, int *hs, int max)
{
    int n = 0;
    for (;;) {
        if (n == max)
            return n;
        ws[n] = w;
        hs[n] = h;
        n++;
        if ((w == 1 && h == 1) || n == levels)
            return n;
        w = w / 2 < 1 ? 1 : w / 2;
        h = h / 2 < 1 ? 1 : h / 2;
    }
}

ref_img ref_mipmaps_step(const ref_img *in, const ref_step *st)
{
    (void)st;
    return ref_copy_d(in);
}

int ref_mipmaps_outputs(int w, int h, const ref_step *st, int *ws, int *hs, int max)
{
    const ref_mipmaps_args *a = st->arg;
    return ref_mipmap_sizes(w, h, a->levels, ws, hs, max);
}

ref_img ref_mipmaps_next(const ref_img *prev, int w, int h, const ref_step *st)
{
    const ref_mipmaps_args *a = st->arg;
    ref_resample rs = { a->filter, a->linear, false };
    return ref_resample_d(prev, w, h, &rs);
}

/* ---------------------------------------------------------------- self-check */

int ref_mipmaps_self_check(void)
{
    int fails0 = ref_fail_count();
    char m[160];
    /* sizes */
    {
        int ws[40], hs[40];
        static const struct { int w, h, levels, n, lw, lh; } cs[] = {
            { 5, 3, 0, 3, 1, 1 },    { 1, 1, 0, 1, 1, 1 },   { 1, 9, 0, 4, 1, 1 },   { 8, 8, 0, 4, 1, 1 },
            { 8, 8, 2, 2, 4, 4 },    { 13, 6, 0, 4, 1, 1 },  { 64, 1, 3, 3, 16, 1 }, { 4096, 4096, 0, 13, 1, 1 },
            { 7, 5, 1, 1, 7, 5 },
        };
        for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
            int n = ref_mipmap_sizes(cs[k].w, cs[k].h, cs[k].levels, ws, hs, 40);
            snprintf(m, sizeof m, "mipmap levels of %dx%d levels=%d", cs[k].w, cs[k].h, cs[k].levels);
            ref_expect(m, n, cs[k].n, 0);
            snprintf(m, sizeof m, "last mipmap level of %dx%d levels=%d", cs[k].w, cs[k].h, cs[k].levels);
            ref_expect(m, ws[n - 1] * 10000 + hs[n - 1], cs[k].lw * 10000 + cs[k].lh, 0);
        }
        ref_mipmap_sizes(5, 3, 0, ws, hs, 40);
        ref_expect("5x3 level 1 is 2x1", ws[1] * 10 + hs[1], 21, 0);
    }
    /* levels of a 4x2 gray u8 image: level 1 the 2x2 means, quantized; level
     * 2 from the quantized level 1 */
    {
        uint8_t px[8] = { 0, 1, 10, 20, 2, 2, 30, 41 };
        vkimg_image im = ref_wrap(4, 2, 1, VKIMG_U8, px);
        ref_mipmaps_args a = { 0, RF_BOX, false };
        ref_step st[] = { MIPMAPS(&a) };
        ref_img l[8];
        int n = ref_apply_levels(&im, st, 1, VKIMG_U8, l, 8);
        ref_expect("4x2: 3 levels", n, 3, 0);
        ref_expect("4x2 level 0 as it is", l[0].d[5] * 255.0, 2, 1e-12);
        ref_expect("4x2 level 1 (0,0)", l[1].d[0] * 255.0, 1.25, 1e-12);
        ref_expect("4x2 level 1 (1,0)", l[1].d[1] * 255.0, 25.25, 1e-12);
        /* written as 1 and 25: level 2 = 13 (not 13.25) */
        ref_expect("4x2 level 2 from the written level 1", l[2].d[0] * 255.0, 13, 1e-12);
        for (int k = 0; k < n; k++)
            ref_img_free(&l[k]);
        /* the same in f32: nothing is quantized */
        n = ref_apply_levels(&im, st, 1, VKIMG_F32, l, 8);
        ref_expect("4x2 f32 level 2", l[2].d[0] * 255.0, 13.25, 1e-5);
        for (int k = 0; k < n; k++)
            ref_img_free(&l[k]);
    }
    /* 5x1 -> 2x1 box: {0, 1} and {2, 3, 4}; with alpha the colour of a
     * transparent pixel does not count */
    {
        float px[10] = { 0.2f, 1, 0.4f, 1, 0.9f, 0, 0.3f, 1, 0.6f, 1 };
        vkimg_image im = ref_wrap(5, 1, 2, VKIMG_F32, px);
        ref_mipmaps_args a = { 2, RF_BOX, false };
        ref_step st[] = { MIPMAPS(&a) };
        ref_img l[4];
        int n = ref_apply_levels(&im, st, 1, VKIMG_F32, l, 4);
        ref_expect("5x1 levels=2", n, 2, 0);
        ref_expect("5x1 level 1 size", l[1].w * 10 + l[1].h, 21, 0);
        ref_expect("5x1 level 1 colour 0", l[1].d[0], (0.2 + 0.4) / 2, 1e-7);
        ref_expect("5x1 level 1 alpha 1", l[1].d[3], 2.0 / 3.0, 1e-7);
        ref_expect("5x1 level 1 colour 1 (transparent ignored)", l[1].d[2], (0.3 + 0.6) / 2, 1e-7);
        for (int k = 0; k < n; k++)
            ref_img_free(&l[k]);
    }
    return ref_fail_count() - fails0;
}
