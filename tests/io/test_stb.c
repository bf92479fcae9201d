/* Round trips through the other formats: TGA and BMP (written by stb_image_write,
 * read by vkimg's own decoders), JPEG at quality 100 and the default, HDR (RGBE precision). No
 * device. */
#include "io_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void test_roundtrip_stb(void)
{
    vkimg_err e;
    vkimg_image im, back;

    /* TGA keeps 1-4 channels exactly */
    for (int c = 1; c <= 4; c++) {
        char name[32];
        snprintf(name, sizeof name, "rt_%d.tga", c);
        make_image(&im, 37, 19, c, VKIMG_U8, 1, 40 + c);
        CHECK(vkimg_save(P(name), &im, NULL, &e) == 0, "save %s: %s", name, e.msg);
        CHECK(vkimg_load(P(name), NULL, &back, &e) == 0, "load %s: %s", name, e.msg);
        CHECK(back.c == c && back.fmt == VKIMG_U8 && same_image(&im, &back), "%s not exact (c back %d)", name, back.c);
        vkimg_image_free(&im);
        vkimg_image_free(&back);
    }

    /* BMP: RGB and RGBA exact; gray comes back as 3 equal channels (24-bit), gray+alpha
     * as 3 equal channels and its alpha (32-bit) */
    for (int c = 1; c <= 4; c++) {
        char name[32];
        snprintf(name, sizeof name, "rt_%d.bmp", c);
        make_image(&im, 35, 13, c, VKIMG_U8, 1, 50 + c); /* odd width: row padding */
        CHECK(vkimg_save(P(name), &im, NULL, &e) == 0, "save %s: %s", name, e.msg);
        CHECK(vkimg_load(P(name), NULL, &back, &e) == 0, "load %s: %s", name, e.msg);
        int want_c = c == 4 || c == 2 ? 4 : 3;
        CHECK(back.c == want_c && back.w == 35 && back.h == 13, "%s: %d channels back", name, back.c);
        if (c >= 3)
            CHECK(same_image(&im, &back), "%s not exact", name);
        else if (back.c == want_c) {
            const unsigned char *a = im.data, *b = back.data;
            long bad = 0;
            for (size_t i = 0; i < (size_t)35 * 13; i++)
                for (int k = 0; k < want_c; k++)
                    bad += b[i * want_c + k] != (k < 3 ? a[i * c] : a[i * c + 1]);
            CHECK(bad == 0, "%s: %ld samples not the gray (or its alpha)", name, bad);
        }
        vkimg_image_free(&im);
        vkimg_image_free(&back);
    }

    /* JPEG (TurboJPEG, see test_jpeg) quality 100 on a smooth image: mean abs error < 3
     * per sample; gray and gray+alpha come back as 1 channel (a grayscale JPEG), RGB
     * and RGBA as 3 (alpha dropped) */
    for (int c = 1; c <= 4; c++) {
        char name[32];
        snprintf(name, sizeof name, "rt_%d.jpg", c);
        make_image(&im, 64, 48, c, VKIMG_U8, 0, 60 + c);
        vkimg_save_opts so = { .quality = 100, .png_level = -1 };
        const int want_c = c <= 2 ? 1 : 3;
        CHECK(vkimg_save(P(name), &im, &so, &e) == 0, "save %s: %s", name, e.msg);
        CHECK(vkimg_load(P(name), NULL, &back, &e) == 0, "load %s: %s", name, e.msg);
        CHECK(back.c == want_c && back.fmt == VKIMG_U8 && back.w == 64 && back.h == 48, "%s: %dx%dx%d back", name,
              back.w, back.h, back.c);
        if (back.c == want_c) {
            double mae = mean_abs_u8(&im, &back, want_c);
            CHECK(mae < 3.0, "%s: mean abs error %.3f", name, mae);
        }
        vkimg_image_free(&back);
        /* default quality (0 -> 90) also works, and is smaller than quality 100 */
        size_t n100, n90;
        free(read_all(P(name), &n100));
        CHECK(vkimg_save(P(name), &im, NULL, &e) == 0, "save %s q90: %s", name, e.msg);
        free(read_all(P(name), &n90));
        CHECK(n90 < n100, "%s: q90 %zu bytes, q100 %zu", name, n90, n100);
        vkimg_image_free(&im);
    }

    /* HDR (RGBE): every component within one step of the 8-bit mantissa of the pixel's
     * largest component; gray and alpha behave as for JPEG */
    for (int c = 1; c <= 4; c++) {
        char name[32];
        snprintf(name, sizeof name, "rt_%d.hdr", c);
        vkimg_image_alloc(&im, 23, 11, c, VKIMG_F32, &e);
        unsigned long long s = 99 + c;
        float *f = im.data;
        for (size_t i = 0; i < (size_t)23 * 11 * c; i++)
            f[i] = (float)(exp((double)(t_rand(&s) % 20000) / 1000.0 - 7.0)); /* 1e-3 .. 2e5 */
        CHECK(vkimg_save(P(name), &im, NULL, &e) == 0, "save %s: %s", name, e.msg);
        CHECK(vkimg_load(P(name), NULL, &back, &e) == 0, "load %s: %s", name, e.msg);
        CHECK(back.c == 3 && back.fmt == VKIMG_F32 && back.w == 23 && back.h == 11, "%s: %dx%dx%d %s back", name,
              back.w, back.h, back.c, vkimg_fmt_name(back.fmt));
        if (back.c == 3 && back.fmt == VKIMG_F32) {
            int bad = 0;
            const float *g = back.data;
            for (size_t p = 0; p < (size_t)23 * 11; p++) {
                float in[3];
                for (int k = 0; k < 3; k++)
                    in[k] = f[p * c + (c <= 2 ? 0 : k)];
                float mx = fmaxf(in[0], fmaxf(in[1], in[2]));
                for (int k = 0; k < 3; k++)
                    if (fabsf(in[k] - g[p * 3 + k]) > mx / 128.0f + 1e-30f) {
                        if (!bad)
                            fprintf(stderr, "  %s pixel %zu ch %d: %g -> %g\n", name, p, k, in[k], g[p * 3 + k]);
                        bad++;
                    }
            }
            CHECK(bad == 0, "%s: %d components outside RGBE precision", name, bad);
        }
        vkimg_image_free(&im);
        vkimg_image_free(&back);
    }
}

int main(void)
{
    static void (*const tests[])(void) = { test_roundtrip_stb };
    return io_main("test_stb", tests, 1);
}
