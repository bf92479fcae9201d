/* JPEG through TurboJPEG: round trips at assorted sizes and qualities (against
 * stb's decode too), the subsampling policy, alpha dropped, the pixel limit,
 * truncation and junk refused, junk between the header's segments skipped, CMYK
 * (YCCK) converted to RGB, encode errors. No device. */
#include "io/io_priv.h"
#include "io/meta.h"
#include "exif_util.h"
#include "io_util.h"
#include "lj_util.h"
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
                        ref = (vkimg_image){ .w = sw, .h = sh, .c = sc, .fmt = VKIMG_U8, .data = s };
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

    /* truncated: TurboJPEG stops at libjpeg's warning, and that is the error (there is
     * no other decoder to try), with the file name */
    write_file(P("cut.jpg"), jpg, n / 2);
    memset(&back, 0x5a, sizeof back);
    rc = vkimg_load(P("cut.jpg"), NULL, &back, &e);
    char want[512];
    snprintf(want, sizeof want, "%s: JPEG: TurboJPEG: Premature end of JPEG file", P("cut.jpg"));
    CHECK(rc == VKIMG_E_RUNTIME && !back.data && !strcmp(e.msg, want), "truncated JPEG: %s", e.msg);
    /* every header prefix, then a stride: every one refused by the decoder and by the
     * loader with the same one-line JPEG error, nothing allocated */
    int dbad = 0, ncut = 0;
    for (size_t cut = 2; cut < n; cut += cut < 700 ? 1 : 97) {
        vkimg_image via;
        vkimg_err ev;
        unsigned char *b = malloc(cut); /* exact size: ASan sees any overread */
        memcpy(b, jpg, cut);
        memset(&back, 0x5a, sizeof back);
        memset(&via, 0x5a, sizeof via);
        rc = vki_jpeg_decode(b, cut, "c.jpg", 0, &back, &e);
        int lrc = vkimg_load_memory(b, cut, "c.jpg", NULL, &via, &ev);
        int wrong = rc != VKIMG_E_RUNTIME || back.data || strncmp(e.msg, "c.jpg: JPEG: ", 13) || strchr(e.msg, '\n') ||
                    lrc != VKIMG_E_RUNTIME || via.data || strcmp(ev.msg, e.msg);
        if (wrong && !dbad)
            fprintf(stderr, "  JPEG cut at %zu: decoder rc %d %s, loader rc %d %s\n", cut, rc, rc ? e.msg : "(decoded)",
                    lrc, lrc ? ev.msg : "(decoded)");
        dbad += wrong;
        if (!rc)
            vkimg_image_free(&back);
        if (!lrc)
            vkimg_image_free(&via);
        free(b);
        ncut++;
    }
    CHECK(dbad == 0, "%d of %d truncated JPEGs not refused", dbad, ncut);
    /* not a JPEG after its SOI marker (32 bytes in all): a JPEG error, not "not a
     * supported image" (the SOI marker chose the decoder) */
    memcpy(jpg + 2, "garbage that is no JPEG marker", 30);
    memset(&back, 0x5a, sizeof back);
    rc = vkimg_load_memory(jpg, 32, "junk.jpg", NULL, &back, &e);
    CHECK(rc == VKIMG_E_RUNTIME && !back.data && !strncmp(e.msg, "junk.jpg: JPEG: ", 16) && !strchr(e.msg, '\n'),
          "junk JPEG: %s", e.msg);
    free(jpg);
    vkimg_image_free(&im);

    /* CMYK (here YCCK, as TurboJPEG writes it): decoded to RGB, from TurboJPEG's CMYK
     * decode as Adobe inverted CMYK, R = C*K/255 rounded to nearest (so G, B), exactly;
     * close to stb_image's decode (its own IDCT and YCCK conversion) and to the source */
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
        tjhandle td = tjInitDecompress();
        int jw = 0, jh = 0, ss = 0, cs = -1;
        CHECK(td && tjDecompressHeader3(td, cj, cn, &jw, &jh, &ss, &cs) == 0 && cs == TJCS_YCCK, "YCCK: colour space %d",
              cs);
        unsigned char dec[24 * 16 * 4] = { 0 };
        CHECK(tjDecompress2(td, cj, cn, dec, w, w * 4, h, TJPF_CMYK, 0) == 0, "CMYK decode: %s", tjGetErrorStr2(td));
        vkimg_image want_rgb, src_rgb;
        vkimg_image_alloc(&want_rgb, w, h, 3, VKIMG_U8, &e);
        vkimg_image_alloc(&src_rgb, w, h, 3, VKIMG_U8, &e);
        for (int i = 0; i < w * h; i++)
            for (int k = 0; k < 3; k++) {
                ((uint8_t *)want_rgb.data)[3 * i + k] = (uint8_t)((dec[4 * i + k] * dec[4 * i + 3] + 127) / 255);
                ((uint8_t *)src_rgb.data)[3 * i + k] = (uint8_t)((cmyk[4 * i + k] * cmyk[4 * i + 3] + 127) / 255);
            }
        rc = vki_jpeg_decode(cj, cn, "cmyk.jpg", 0, &back, &e);
        CHECK(rc == 0 && back.w == w && back.h == h && back.c == 3 && back.fmt == VKIMG_U8, "CMYK: rc %d %s %dx%dx%d",
              rc, rc ? e.msg : "", back.w, back.h, back.c);
        if (rc == 0) {
            CHECK(same_image(&back, &want_rgb), "CMYK: not C*K/255 rounded of TurboJPEG's CMYK decode");
            CHECK(mean_abs_u8(&back, &src_rgb, 3) < 2.0, "CMYK: %.3f from the source",
                  mean_abs_u8(&back, &src_rgb, 3));
            vkimg_image via;
            CHECK(vkimg_load_memory(cj, cn, "cmyk.jpg", NULL, &via, &e) == 0 && same_image(&via, &back),
                  "CMYK: vkimg_load_memory is not the decoder's result: %s", e.msg);
            vkimg_image_free(&via);
            CHECK(stb_decode(cj, cn, &ref) == 0 && ref.c == 3 && ref.w == w && ref.h == h, "CMYK: stb_image: %s",
                  stbi_failure_reason());
            if (ref.data && ref.c == 3)
                CHECK(mean_abs_u8(&back, &ref, 3) < 1.0, "CMYK: %.3f from stb_image's decode",
                      mean_abs_u8(&back, &ref, 3));
            vkimg_image_free(&ref);
        }
        vkimg_image_free(&back);
        vkimg_image_free(&want_rgb);
        vkimg_image_free(&src_rgb);
        tjFree(cj);
        if (td)
            tjDestroy(td);
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

/* Images in bands (the least band made small): the same file on 1, 2 and 3
 * threads, restart markers in it, and the same pixels as the file encoded at
 * once (TurboJPEG and stb_image decode both). */
static void test_bands(void)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 40 }, { 40, 1 }, { 37, 211 }, { 203, 64 }, { 5, 300 }, { 64, 33 } };
    const size_t keep = vki_jpeg_band_min;
    vkimg_err e;
    int nbanded = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int c = 1; c <= 4; c++)
            for (int q = 0; q < 2; q++) {
                const int W = sizes[si][0], H = sizes[si][1], quality = q ? 95 : 75; /* 4:4:4, 4:2:0 */
                vkimg_image im;
                make_image(&im, W, H, c, VKIMG_U8, (int)(si + c) % 2, 700 + si * 10 + (size_t)c);
                unsigned char *one = NULL, *j[3] = { NULL, NULL, NULL };
                size_t n1 = 0, n[3] = { 0, 0, 0 };
                vki_jpeg_band_min = (size_t)1 << 30;
                CHECK(vki_jpeg_encode_ex(&im, quality, 1, &one, &n1, &e) == 0, "one stream: %s", e.msg);
                vki_jpeg_band_min = 150 + (size_t)si * 53;
                for (int t = 0; t < 3; t++)
                    CHECK(vki_jpeg_encode_ex(&im, quality, t + 1, &j[t], &n[t], &e) == 0, "bands, %d threads: %s",
                          t + 1, e.msg);
                vki_jpeg_band_min = keep;
                CHECK(j[0] && j[1] && j[2] && n[0] == n[1] && n[0] == n[2] && !memcmp(j[0], j[1], n[0]) &&
                          !memcmp(j[0], j[2], n[0]),
                      "%dx%d c=%d q%d: 1, 2 and 3 threads wrote different files", W, H, c, quality);
                bool banded = n[0] != n1 || memcmp(j[0], one, n1);
                nbanded += banded;
                int dri = 0, rst = 0;
                for (size_t i = 0; j[0] && i + 1 < n[0]; i++) {
                    dri += j[0][i] == 0xff && j[0][i + 1] == 0xdd;
                    rst += j[0][i] == 0xff && j[0][i + 1] >= 0xd0 && j[0][i + 1] <= 0xd7;
                }
                CHECK(banded ? dri == 1 && rst >= 1 : dri == 0 && rst == 0, "%dx%d c=%d: %d DRI, %d RST (banded: %d)",
                      W, H, c, dri, rst, banded);
                vkimg_image a, b;
                int ra = vkimg_load_memory(one, n1, "one.jpg", NULL, &a, &e);
                int rb = j[0] ? vkimg_load_memory(j[0], n[0], "bands.jpg", NULL, &b, &e) : 1;
                CHECK(!ra && !rb && a.w == b.w && a.h == b.h && a.c == b.c &&
                          !memcmp(a.data, b.data, vkimg_image_bytes(&a)),
                      "%dx%d c=%d q%d: the bands decode to other pixels", W, H, c, quality);
                int sw, sh, sc, tw, th, tc;
                unsigned char *s1 = stbi_load_from_memory(one, (int)n1, &sw, &sh, &sc, 0);
                unsigned char *s2 = j[0] ? stbi_load_from_memory(j[0], (int)n[0], &tw, &th, &tc, 0) : NULL;
                CHECK(s1 && s2 && sw == tw && sh == th && sc == tc && !memcmp(s1, s2, (size_t)sw * sh * sc),
                      "%dx%d c=%d q%d: stb_image decodes the bands otherwise", W, H, c, quality);
                stbi_image_free(s1);
                stbi_image_free(s2);
                if (!ra)
                    vkimg_image_free(&a);
                if (!rb)
                    vkimg_image_free(&b);
                free(one);
                for (int t = 0; t < 3; t++)
                    free(j[t]);
                vkimg_image_free(&im);
            }
    CHECK(nbanded >= 20, "only %d images were written in bands", nbanded);
}

/* the smallest size a shrink-on-load decode may give (test_junk) */
static void min_8(void *user, int w, int h, int orientation, int *min_w, int *min_h)
{
    (void)user, (void)w, (void)h, (void)orientation;
    *min_w = *min_h = 8;
}

/* Junk between marker segments before the first scan (a metadata writer's wrong
 * segment length: libjpeg warns "N extraneous bytes before marker"), which holds
 * no image data, is skipped: the file decodes to the pixels of the file without
 * it, whole and shrunk on load, through TurboJPEG and through libjpeg (4:1:0),
 * baseline, progressive and CMYK, and its EXIF after the junk is read. The same
 * junk after the first scan is corruption, and an error. */
static void test_junk(void)
{
    static const unsigned char junks[][6] = { { 3, 0x00, 0x12, 0x34 },         /* plain bytes */
                                              { 5, 0x07, 0xff, 0x00, 0xff, 0x00 } }; /* 0xFF 0x00 pairs */
    static const int hv410[3] = { 0x42, 0x11, 0x11 };
    unsigned long long seed = 77;
    size_t exn;
    unsigned char *exif = t_exif_block(0, 6, 3, &seed, &exn);
    vkimg_image im;
    make_image(&im, 97, 61, 3, VKIMG_U8, 0, 4242);
    vkimg_image cm;
    make_image(&cm, 45, 33, 4, VKIMG_U8, 0, 4243);
    for (int kind = 0; kind < 4; kind++) { /* TurboJPEG baseline, progressive, 4:1:0 (libjpeg), CMYK */
        size_t n0;
        unsigned char *j0 = kind == 3 ? lj_encode(&cm, 90, NULL, 0, &n0)
                                      : lj_encode(&im, 90, kind == 2 ? hv410 : NULL, kind == 1, &n0);
        vki_meta m = { 0 };
        m.exif = exif;
        m.exif_len = exn;
        unsigned char *j;
        size_t n;
        vkimg_err e;
        CHECK(j0 && vki_jpeg_add_meta(j0, n0, &m, &j, &n, NULL, &e) == 0, "kind %d: add EXIF: %s", kind, e.msg);
        if (!j0 || !j)
            continue;
        vkimg_image clean, clean8;
        int rc = vki_jpeg_decode(j, n, "clean.jpg", 0, &clean, &e);
        CHECK(rc == 0, "kind %d: the clean file: %s", kind, e.msg);
        vkimg_load_opts so = { .min_size = min_8 };
        int rc8 = vki_jpeg_decode_opts(j, n, "clean.jpg", 0, &so, &clean8, &e);
        CHECK(rc8 == 0 && clean8.w < clean.w, "kind %d: the clean file at 1/8: %s", kind, rc8 ? e.msg : "whole");
        /* before the EXIF (right after SOI), before DQT, before SOS */
        const size_t sos = lj_marker(j, n, 0xda, 0);
        const size_t at[3] = { 2, lj_marker(j, n, 0xdb, 0), sos };
        for (int a = 0; a < 3 && !rc && !rc8; a++)
            for (size_t k = 0; k < sizeof junks / sizeof junks[0]; k++) {
                const size_t jn = junks[k][0], bn = n + jn;
                unsigned char *b = malloc(bn);
                memcpy(b, j, at[a]);
                memcpy(b + at[a], junks[k] + 1, jn);
                memcpy(b + at[a] + jn, j + at[a], n - at[a]);
                vkimg_image back, back8;
                vkimg_err e2;
                int r = vki_jpeg_decode(b, bn, "junk.jpg", 0, &back, &e2);
                CHECK(r == 0 && same_image(&back, &clean), "kind %d, junk %zu at %zu: %s", kind, k, at[a],
                      r ? e2.msg : "other pixels");
                if (!r)
                    vkimg_image_free(&back);
                r = vki_jpeg_decode_opts(b, bn, "junk.jpg", 0, &so, &back8, &e2);
                CHECK(r == 0 && same_image(&back8, &clean8), "kind %d, junk %zu at %zu, 1/8: %s", kind, k, at[a],
                      r ? e2.msg : "other pixels");
                if (!r)
                    vkimg_image_free(&back8);
                vki_meta mb;
                r = vki_meta_read_jpeg(b, bn, &mb, &e2);
                CHECK(r == 0 && mb.exif_len == exn && !memcmp(mb.exif, exif, exn) && mb.orientation == 6,
                      "kind %d, junk %zu at %zu: EXIF %s", kind, k, at[a], r ? e2.msg : "not read back");
                if (!r)
                    vki_meta_free(&mb);
                free(b);
            }
        /* the same junk after the first scan (before the progressive file's
         * second SOS): refused, with TurboJPEG's message */
        const size_t sos2 = kind == 1 ? lj_marker(j, n, 0xda, 1) : 0;
        if (sos2) {
            unsigned char *b = malloc(n + 3);
            memcpy(b, j, sos2);
            memcpy(b + sos2, "\x01\x02\x03", 3);
            memcpy(b + sos2 + 3, j + sos2, n - sos2);
            vkimg_image back;
            vkimg_err e2;
            memset(&back, 0x5a, sizeof back);
            int r = vki_jpeg_decode(b, n + 3, "bad.jpg", 0, &back, &e2);
            CHECK(r == VKIMG_E_RUNTIME && !back.data &&
                      !strcmp(e2.msg, "bad.jpg: JPEG: TurboJPEG: Corrupt JPEG data: 3 extraneous bytes before marker 0xda"),
                  "junk after the first scan: %s", r ? e2.msg : "decoded");
            if (!r)
                vkimg_image_free(&back);
            free(b);
        }
        CHECK(kind != 1 || sos2, "the progressive file has one scan");
        if (!rc)
            vkimg_image_free(&clean);
        if (!rc8)
            vkimg_image_free(&clean8);
        free(j);
        free(j0);
    }
    free(exif);
    vkimg_image_free(&im);
    vkimg_image_free(&cm);
}

int main(void)
{
    static void (*const tests[])(void) = { test_jpeg, test_bands, test_junk };
    return io_main("test_jpeg", tests, 3);
}
