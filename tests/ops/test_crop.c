/* crop on the device against its reference (remap_ref.h: the README's geometry
 * WxH+X+Y with negative offsets, or w, h, gravity, x, y with offsets pointing
 * inward from the gravity's edges, clipped to the image): byte-identical
 * outputs for every form and gravity, regions inside, across and outside the
 * image and the 32x32 tiles, the error when nothing is left, and crops in
 * chains with the other moves. The parser's errors: test_geometry.c. */
#include "gpu_harness.h"
#include "ref.h"
#include "remap_ref.h"
#include "remap_util.h"
#include "t.h"

#include <stdio.h>
#include <string.h>

static uint64_t seed = 1000;
static int ncases, nnothing; /* crop_case calls, and those that leave nothing */

/* Crops `in` with text and checks it against the region (rw x rh by gravity, x, y),
 * or the error when nothing is left. */
static void crop_case(vkimg_ctx *ctx, const char *group, const char *text, const vkimg_image *in, int rw, int rh,
                      int gravity, int x, int y, vkimg_fmt out_fmt)
{
    int x0, y0, cw, ch;
    ncases++;
    if (mv_crop_region(in->w, in->h, rw, rh, gravity, x, y, &x0, &y0, &cw, &ch)) {
        nnothing++;
        char msg[160];
        snprintf(msg, sizeof msg, "crop: nothing of the %dx%d image is left (the region is outside it)", in->w,
                 in->h);
        rm_check_fails(ctx, text, in, NULL, VKIMG_E_RUNTIME, msg);
        return;
    }
    rm_map m = mv_crop(in->w, in->h, x0, y0, cw, ch);
    rm_check(ctx, group, text, &m, in, out_fmt, NULL);
    rm_map_free(&m);
}

/* The forms, by hand. */
static void test_forms(vkimg_ctx *ctx)
{
    int rf = mv_self_check();
    CHECK(rf == 0, "remap reference self-check: %d failures", rf);
    static const struct { const char *text; int rw, rh, g, x, y; } f[] = {
        /* geometry: at the top-left, offsets either sign, 'X' too */
        { "crop=20x10", 20, 10, MV_NORTHWEST, 0, 0 },
        { "crop=20x10+3+4", 20, 10, MV_NORTHWEST, 3, 4 },
        { "crop=geometry=20x10+3+4", 20, 10, MV_NORTHWEST, 3, 4 },
        { "crop=20X10+3+4", 20, 10, MV_NORTHWEST, 3, 4 },
        { "crop=20x10-3-4", 20, 10, MV_NORTHWEST, -3, -4 },
        { "crop=20x10+30-9", 20, 10, MV_NORTHWEST, 30, -9 },
        { "crop=20x10-0+0", 20, 10, MV_NORTHWEST, 0, 0 },
        { "crop=1x1+36+22", 1, 1, MV_NORTHWEST, 36, 22 }, /* the last pixel of 37 x 23 */
        { "crop=1x1", 1, 1, MV_NORTHWEST, 0, 0 },
        { "crop=37x23", 37, 23, MV_NORTHWEST, 0, 0 },     /* all of it */
        { "crop=100x100-20-20", 100, 100, MV_NORTHWEST, -20, -20 },
        { "crop=16777216x16777216", 16777216, 16777216, MV_NORTHWEST, 0, 0 },
        { "crop=16777216x16777216-16777215-16777215", 16777216, 16777216, MV_NORTHWEST, -16777215, -16777215 },
        /* geometry with a gravity: the offsets point inward */
        { "crop=20x10+3+4:gravity=southeast", 20, 10, MV_SOUTHEAST, 3, 4 },
        { "crop=20x10+3+4:gravity=southwest", 20, 10, MV_SOUTHWEST, 3, 4 },
        { "crop=geometry=20x10-3+4:gravity=northeast", 20, 10, MV_NORTHEAST, -3, 4 },
        { "crop=20x10:gravity=centre", 20, 10, MV_CENTRE, 0, 0 },
        { "crop=20x10+2-2:gravity=centre", 20, 10, MV_CENTRE, 2, -2 },
        { "crop=20x10+2+2:gravity=north", 20, 10, MV_NORTH, 2, 2 },
        { "crop=20x10+2+2:gravity=south", 20, 10, MV_SOUTH, 2, 2 },
        { "crop=20x10+2+2:gravity=east", 20, 10, MV_EAST, 2, 2 },
        { "crop=20x10+2+2:gravity=west", 20, 10, MV_WEST, 2, 2 },
        /* w, h (0 or missing: the image's), gravity, x, y */
        /* percentages of 37 x 23: floor(pct * side / 100 + 0.5) */
        { "crop=50%", 19, 12, MV_NORTHWEST, 0, 0 },
        { "crop=29%x50%+1+2:gravity=southeast", 11, 12, MV_SOUTHEAST, 1, 2 },
        { "crop=10x50%:gravity=centre", 4, 12, MV_CENTRE, 0, 0 },
        { "crop=200%-5-5", 74, 46, MV_NORTHWEST, -5, -5 },
        { "crop=w=20:h=10", 20, 10, MV_NORTHWEST, 0, 0 },
        { "crop=w=20", 20, 23, MV_NORTHWEST, 0, 0 },
        { "crop=h=10", 37, 10, MV_NORTHWEST, 0, 0 },
        { "crop=w=0:h=0", 37, 23, MV_NORTHWEST, 0, 0 },
        { "crop=w=20:h=0:x=5", 20, 23, MV_NORTHWEST, 5, 0 },
        { "crop=w=20:h=10:x=-3:y=2:gravity=east", 20, 10, MV_EAST, -3, 2 },
        { "crop=h=10:w=20:gravity=southwest:y=1:x=1", 20, 10, MV_SOUTHWEST, 1, 1 },
        { "crop=w=36:gravity=centre", 36, 23, MV_CENTRE, 0, 0 },
        { "crop=w=20:h=10:gravity=centre:x=100", 20, 10, MV_CENTRE, 100, 0 },
        /* nothing left: the error */
        { "crop=20x10+37+0", 20, 10, MV_NORTHWEST, 37, 0 },
        { "crop=20x10-20+0", 20, 10, MV_NORTHWEST, -20, 0 },
        { "crop=20x10+0+23", 20, 10, MV_NORTHWEST, 0, 23 },
        { "crop=20x10+0-10", 20, 10, MV_NORTHWEST, 0, -10 },
        { "crop=20x10+37+0:gravity=east", 20, 10, MV_EAST, 37, 0 },
        { "crop=w=5:h=5:x=-16777216:y=16777216", 5, 5, MV_NORTHWEST, -16777216, 16777216 },
        { "crop=1x1+16777216+16777216:gravity=southeast", 1, 1, MV_SOUTHEAST, 16777216, 16777216 },
        { "crop=16777216x16777216-16777216-16777216", 16777216, 16777216, MV_NORTHWEST, -16777216, -16777216 },
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        for (int c = 1; c <= 4; c++) {
            vkimg_image in = rm_image(37, 23, c, c == 2 ? VKIMG_U16 : c == 3 ? VKIMG_F32 : VKIMG_U8, seed++);
            crop_case(ctx, "crop forms", f[i].text, &in, f[i].rw, f[i].rh, f[i].g, f[i].x, f[i].y, in.fmt);
            ref_image_free(&in);
        }
    /* centre: ImageMagick's W/2 - w/2, one more than (W - w)/2 (vips's) where W is
     * even and w odd: 10 and 3 -> 4; 8 and 3 -> 3 */
    {
        vkimg_image in = rm_image(10, 8, 1, VKIMG_U8, seed++);
        rm_map m = mv_crop(10, 8, 4, 3, 3, 3);
        rm_check(ctx, "crop forms", "crop=3x3:gravity=centre", &m, &in, VKIMG_U8, NULL);
        rm_map_free(&m);
        m = mv_crop(10, 8, 0, 0, 9, 8); /* 13 wide: 10/2 - 13/2 = -1, then -3: [-4, 9) */
        rm_check(ctx, "crop forms", "crop=13x8-3+0:gravity=centre", &m, &in, VKIMG_U8, NULL);
        rm_map_free(&m);
        ref_image_free(&in);
    }
    /* every output format */
    static const vkimg_fmt all[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            vkimg_image in = rm_image(70, 45, 1 + (a + b) % 4, all[a], seed++);
            crop_case(ctx, "crop forms", "crop=40x33+17-5", &in, 40, 33, MV_NORTHWEST, 17, -5, all[b]);
            ref_image_free(&in);
        }
    rm_print_stats();
}

/* Random regions of every form and gravity on awkward sizes, inside, across and
 * outside the image (about a quarter leave nothing). */
static void test_random(vkimg_ctx *ctx)
{
    ncases = nnothing = 0;
    static const size2 sizes[] = { { 1, 1 }, { 1, 9 }, { 9, 1 }, { 5, 3 }, { 31, 33 }, { 64, 64 }, { 131, 67 },
                                   { 257, 129 }, { 600, 530 } };
    unsigned long long s = 0x5eed5eedull;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int W = sizes[i].w, H = sizes[i].h, runs = W * H > 100000 ? 6 : 40;
        for (int r = 0; r < runs; r++) {
            int c = 1 + (int)(t_rand(&s) % 4);
            vkimg_fmt fmt = r % 5 == 4 ? VKIMG_F32 : r % 5 == 3 ? VKIMG_U16 : VKIMG_U8;
            vkimg_image in = rm_image(W, H, c, fmt, seed++);
            int rw = 1 + (int)(t_rand(&s) % (unsigned)(W + W / 2 + 2));
            int rh = 1 + (int)(t_rand(&s) % (unsigned)(H + H / 2 + 2));
            int x = (int)(t_rand(&s) % (unsigned)(W + W / 2 + 1)) - W / 2;
            int y = (int)(t_rand(&s) % (unsigned)(H + H / 2 + 1)) - H / 2;
            int g = (int)(t_rand(&s) % 9);
            char t[160];
            switch (t_rand(&s) % 3) {
            case 0:
                snprintf(t, sizeof t, "crop=%dx%d%+d%+d:gravity=%s", rw, rh, x, y, mv_gravity_names[g]);
                break;
            case 1:
                snprintf(t, sizeof t, "crop=w=%d:h=%d:x=%d:y=%d:gravity=%s", rw, rh, x, y, mv_gravity_names[g]);
                break;
            default: /* positional geometry, gravity named, sides 0 for the image's */
                if (rw >= W)
                    rw = W;
                snprintf(t, sizeof t, "crop = h = %d : gravity = %s : w = %d : x = %d : y = %d", rh,
                         mv_gravity_names[g], rw == W ? 0 : rw, x, y);
                break;
            }
            crop_case(ctx, "crop random", t, &in, rw, rh, g, x, y, fmt);
            ref_image_free(&in);
        }
    }
    printf("crop random: %d regions, %d leave nothing\n", ncases, nnothing);
    rm_print_stats();
}

/* Crops in chains: the region resolves against the size the op before made. */
static void test_chains(vkimg_ctx *ctx)
{
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = rm_image(97, 60, c, c % 2 ? VKIMG_U8 : VKIMG_U16, seed++);
        /* rotate=90 (60 x 97), then the bottom-right 50x40 less 1+2 */
        rm_map a = mv_move(MV_ROT90, 97, 60), b = mv_crop(60, 97, 60 - 50 - 1, 97 - 40 - 2, 50, 40);
        rm_map ab = rm_then(&a, &b);
        rm_check(ctx, "crop chains", "rotate=90,crop=50x40+1+2:gravity=southeast", &ab, &in, in.fmt, NULL);
        /* then transverse and a centred crop of that */
        rm_map t = mv_move(MV_TRANSVERSE, 50, 40), abt = rm_then(&ab, &t);
        rm_map cc = mv_crop(40, 50, mv_centre(40, 33), mv_centre(50, 21), 33, 21), all = rm_then(&abt, &cc);
        rm_check(ctx, "crop chains", "rotate=90,crop=50x40+1+2:gravity=southeast,transverse,crop=33x21:gravity=centre",
                 &all, &in, in.fmt, NULL);
        /* crop, crop, crop: each inside the one before (and clipped to it) */
        rm_map c1 = mv_crop(97, 60, 10, 5, 80, 50), c2 = mv_crop(80, 50, 0, 20, 35, 30);
        rm_map c3 = mv_crop(35, 30, 30, 0, 5, 9);
        rm_map c12 = rm_then(&c1, &c2), c123 = rm_then(&c12, &c3);
        rm_check(ctx, "crop chains", "crop=80x50+10+5,crop=35x100+0+20,crop=w=10:h=9:x=30", &c123, &in, in.fmt, NULL);
        /* the input's orientation first: the crop sees the upright image */
        vkimg_run_opts ro;
        memset(&ro, 0, sizeof ro);
        ro.orientation = 8;
        rm_map o = mv_orientation(8, 97, 60), oc = mv_crop(60, 97, 0, 97 - 10, 7, 10), ooc = rm_then(&o, &oc);
        rm_check(ctx, "crop chains", "crop=7x10:gravity=southwest", &ooc, &in, in.fmt, &ro);
        /* nothing left after a move that swapped the sides */
        rm_check_fails(ctx, "transpose,crop=5x5+60+0", &in, NULL, VKIMG_E_RUNTIME,
                       "crop: nothing of the 60x97 image is left (the region is outside it)");
        rm_map *maps[] = { &a, &b, &ab, &t, &abt, &cc, &all, &c1, &c2, &c3, &c12, &c123, &o, &oc, &ooc };
        for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++)
            rm_map_free(maps[k]);
        ref_image_free(&in);
    }
    rm_print_stats();
}

int main(void)
{
    static const gh_suite suites[] = {
        { "forms", test_forms },
        { "random", test_random },
        { "chains", test_chains },
    };
    return gh_main("test_crop", suites, sizeof suites / sizeof suites[0]);
}
