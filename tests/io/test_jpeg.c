/* JPEG through TurboJPEG: round trips at assorted sizes and qualities (against
 * stb's decode too), the subsampling policy, alpha dropped, the pixel limit,
 * truncation and junk, the CMYK fallback to stb, encode errors. No device. */
#include "io/io_priv.h"
#include "io_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>
#include <turbojpeg.h>

static unsigned char *load_file(const char *path, size_t *n)
{
    unsigned char *b = read_all(path, n);
    CHECK(b && *n > 0, "%s: unreadable", path);
    return b;
}

static void test_jpeg(void)
{
    vkimg_err e;
    vkimg_image im, back, ref;
    char name[64];

    /* round trips at assorted sizes (1x1, odd, not multiples of the 8/16 blocks) and
     * qualities: the right size and channels, close to the source; TurboJPEG's decode
     * and stb's decode of the same file agree closely (each has its own IDCT) */
    static const int sz[][2] = { { 1, 1 }, { 3, 5 }, { 17, 9 }, { 64, 48 }, { 250, 31 } };
    static const int quals[] = { 1, 50, 89, 90, 100 };
    for (size_t si = 0; si < sizeof sz / sizeof sz[0]; si++)
        for (int c = 1; c <= 4; c++)
            for (size_t qi = 0; qi < sizeof quals / sizeof quals[0]; qi++) {
                const int w = sz[si][0], h = sz[si][1], q = quals[qi], want_c = c <= 2 ? 1 : 3;
                snprintf(name, sizeof name, "t%zu_%d_q%d.jpg", si, c, q);
                make_image(&im, w, h, c, VKIMG_U8, 0, 900 + c + si);
                vkimg_save_opts so = { .quality = q, .png_level = -1 };
                CHECK(vkimg_save(P(name), &im, &so, &e) == 0, "save %s: %s", name, e.msg);
                size_t n;
                unsigned char *jpg = load_file(P(name), &n);
                int rc = vki_jpeg_decode(jpg, n, name, 0, &back, &e);
                CHECK(rc == 0 && back.w == w && back.h == h && back.c == want_c && back.fmt == VKIMG_U8,
                      "%s: rc %d %s %dx%dx%d", name, rc, rc ? e.msg : "", back.w, back.h, back.c);
                if (rc == 0 && back.c == want_c) {
                    double mae = mean_abs_u8(&im, &back, want_c);
                    CHECK(mae < (q == 100 ? 3.0 : q >= 50 ? 6.0 : 40.0), "%s: mean abs error %.3f", name, mae);
                    int sw, sh, sc;
                    unsigned char *s = stbi_load_from_memory(jpg, (int)n, &sw, &sh, &sc, 0);
                    CHECK(s && sw == w && sh == h && sc == want_c, "%s: stb reads %dx%dx%d", name, sw, sh, sc);
                    if (s && sc == want_c) {
                        ref = (vkimg_image){ sw, sh, sc, VKIMG_U8, s };
                        double d = mean_abs_u8(&back, &ref, want_c);
                        CHECK(d < 1.0, "%s: TurboJPEG and stb decodes differ by %.3f on average", name, d);
                    }
                    free(s);
                    vkimg_image via;
                    CHECK(vkimg_load_memory(jpg, n, name, NULL, &via, &e) == 0 && same_image(&via, &back),
                          "%s: vkimg_load_memory is not TurboJPEG's decode", name);
                    vkimg_image_free(&via);
                }
                /* the subsampling policy: gray, 4:2:0 below quality 90, 4:4:4 from 90 */
                tjhandle th = tjInitDecompress();
                int jw, jh, ss = -1, cs = -1;
                CHECK(th && tjDecompressHeader3(th, jpg, (unsigned long)n, &jw, &jh, &ss, &cs) == 0, "%s: header",
                      name);
                int want_ss = c <= 2 ? TJSAMP_GRAY : q < 90 ? TJSAMP_420 : TJSAMP_444;
                CHECK(ss == want_ss, "%s: subsampling %d, want %d", name, ss, want_ss);
                if (th)
                    tjDestroy(th);
                free(jpg);
                vkimg_image_free(&back);
                vkimg_image_free(&im);
            }

    /* alpha is dropped: RGBA writes the very bytes of its RGB, gray+alpha of its gray */
    for (int c = 2; c <= 4; c += 2) {
        vkimg_image with, without;
        make_image(&with, 40, 30, c, VKIMG_U8, 1, 5);
        vkimg_image_alloc(&without, 40, 30, c - 1, VKIMG_U8, &e);
        for (int i = 0; i < 40 * 30; i++)
            memcpy((uint8_t *)without.data + i * (c - 1), (uint8_t *)with.data + i * c, (size_t)c - 1);
        unsigned char *j1, *j2;
        size_t n1, n2;
        CHECK(vki_jpeg_encode(&with, 75, &j1, &n1, &e) == 0, "encode c=%d: %s", c, e.msg);
        CHECK(vki_jpeg_encode(&without, 75, &j2, &n2, &e) == 0, "encode c=%d: %s", c - 1, e.msg);
        CHECK(n1 == n2 && !memcmp(j1, j2, n1), "c=%d: not the JPEG of its first %d channels", c, c - 1);
        free(j1);
        free(j2);
        vkimg_image_free(&with);
        vkimg_image_free(&without);
    }
    /* a larger photo-like image: quality 90 default round trip */
    make_image(&im, 333, 222, 3, VKIMG_U8, 1, 4242);
    CHECK(vkimg_save(P("big.jpg"), &im, NULL, &e) == 0, "save big.jpg: %s", e.msg);
    CHECK(vkimg_load(P("big.jpg"), NULL, &back, &e) == 0 && back.c == 3, "load big.jpg: %s", e.msg);
    if (back.c == 3)
        CHECK(mean_abs_u8(&im, &back, 3) < 8.0, "big.jpg: mean abs error %.3f", mean_abs_u8(&im, &back, 3));
    vkimg_image_free(&back);

    /* the pixel limit is checked from the header, before any pixel memory */
    size_t n;
    unsigned char *jpg = load_file(P("big.jpg"), &n);
    vkimg_load_opts lo = { .max_pixels = 333 * 222 - 1 };
    int rc = vkimg_load_memory(jpg, n, "lim.jpg", &lo, &back, &e);
    CHECK(rc == VKIMG_E_RUNTIME && !back.data &&
              !strcmp(e.msg, "lim.jpg: image is 333x222 = 73926 pixels, over the limit of 73925 (--max-pixels)"),
          "JPEG limit: %s", e.msg);
    lo.max_pixels = 333 * 222;
    CHECK(vkimg_load_memory(jpg, n, "lim.jpg", &lo, &back, &e) == 0, "JPEG at the limit: %s", e.msg);
    vkimg_image_free(&back);

    /* truncated: TurboJPEG stops at its warning and declines; stb also fails, and the
     * message has both reasons and the file name */
    write_file(P("cut.jpg"), jpg, n / 2);
    rc = vkimg_load(P("cut.jpg"), NULL, &back, &e);
    CHECK(rc == VKIMG_E_RUNTIME && !back.data && strstr(e.msg, P("cut.jpg")) &&
              strstr(e.msg, "TurboJPEG: Premature end of JPEG file; stb_image: "),
          "truncated JPEG: %s", e.msg);
    int dbad = 0;
    for (size_t cut = 2; cut < n; cut += cut < 700 ? 1 : 97) { /* every header prefix, then a stride */
        vkimg_image via;
        unsigned char *b = malloc(cut);
        memcpy(b, jpg, cut);
        rc = vki_jpeg_decode(b, cut, "c.jpg", 0, &back, &e);
        dbad += rc != VKI_DECLINED || back.data || strncmp(e.msg, "TurboJPEG: ", 11);
        vkimg_image_free(&back);
        int src = stb_decode(b, cut, &ref);
        rc = vkimg_load_memory(b, cut, "c.jpg", NULL, &via, &e);
        int wrong = rc ? src == 0 || !strstr(e.msg, "c.jpg: ") || !strstr(e.msg, "TurboJPEG: ") : src || !same_image(&via, &ref);
        if (wrong && !dbad)
            fprintf(stderr, "  JPEG cut at %zu: rc %d %s, stb %d\n", cut, rc, rc ? e.msg : "", src);
        dbad += wrong;
        vkimg_image_free(&via);
        vkimg_image_free(&ref);
        free(b);
    }
    CHECK(dbad == 0, "%d truncated JPEGs handled wrongly", dbad);
    /* not a JPEG after its SOI marker: both decoders' reasons */
    memcpy(jpg + 2, "garbage that is no JPEG marker", 30);
    rc = vkimg_load_memory(jpg, 32, "junk.jpg", NULL, &back, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "junk.jpg: not a supported image (TurboJPEG: ") &&
              strstr(e.msg, "; stb_image: "),
          "junk JPEG: %s", e.msg);
    free(jpg);
    vkimg_image_free(&im);

    /* CMYK (here YCCK, as TurboJPEG writes it): declined, so stb converts it to RGB
     * exactly as before */
    {
        const int w = 24, h = 16;
        unsigned char cmyk[24 * 16 * 4];
        unsigned long long s = 99;
        for (int i = 0; i < w * h * 4; i++)
            cmyk[i] = (unsigned char)(i % 4 == 3 ? 40 + (int)(t_rand(&s) % 200) : (i / 4 % w) * 10 + (i % 4) * 30);
        tjhandle th = tjInitCompress();
        unsigned char *cj = NULL;
        unsigned long cn = 0;
        CHECK(th && tjCompress2(th, cmyk, w, w * 4, h, TJPF_CMYK, &cj, &cn, TJSAMP_444, 95, 0) == 0, "CMYK encode: %s",
              tjGetErrorStr2(th));
        rc = vki_jpeg_decode(cj, cn, "cmyk.jpg", 0, &back, &e);
        CHECK(rc == VKI_DECLINED && !back.data && strstr(e.msg, "CMYK"), "CMYK: rc %d %s", rc, e.msg);
        CHECK(vkimg_load_memory(cj, cn, "cmyk.jpg", NULL, &back, &e) == 0, "CMYK load: %s", e.msg);
        int sw, sh, sc;
        unsigned char *sp = stbi_load_from_memory(cj, (int)cn, &sw, &sh, &sc, 0);
        ref = (vkimg_image){ sw, sh, sc, VKIMG_U8, sp };
        CHECK(sp && back.c == 3 && same_image(&back, &ref), "CMYK: not stb's decode (c=%d)", back.c);
        free(sp);
        vkimg_image_free(&back);
        tjFree(cj);
        if (th)
            tjDestroy(th);
    }

    /* encode errors: quality and size checked, the message from vkimg_save names the file */
    make_image(&im, 8, 8, 3, VKIMG_U8, 0, 1);
    unsigned char *o = (unsigned char *)&n;
    CHECK(vki_jpeg_encode(&im, 0, &o, &n, &e) == VKIMG_E_USAGE && o == NULL, "quality 0");
    CHECK(vki_jpeg_encode(&im, 101, &o, &n, &e) == VKIMG_E_USAGE, "quality 101");
    im.fmt = VKIMG_U16;
    CHECK(vki_jpeg_encode(&im, 90, &o, &n, &e) == VKIMG_E_RUNTIME, "u16");
    im.fmt = VKIMG_U8;
    vkimg_image_free(&im);
}

int main(void)
{
    static void (*const tests[])(void) = { test_jpeg };
    return io_main("test_jpeg", tests, 1);
}
