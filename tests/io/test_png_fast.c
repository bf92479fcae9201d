/* The PNG decoder (vki_png_decode, the only one) against stb_image and the source
 * pixels, above all its fast path (non-interlaced 8/16-bit files, unfiltered in
 * place, SSE2): hand-made files of every colour type, depth, size and filter,
 * palettes and colour keys, chunk layouts, the encoder's own files; the files of
 * its other path (interlaced, 1/2/4-bit); the invalid files it refuses, each with
 * its reason; then truncation at every length (all refused) and random corruption
 * (an image, stb_image's whenever stb reads the file as the decoder does, or a
 * clean error; run under ASan by scripts/setup --asan). No device. */
#include "io/io_priv.h"
#include "core/util.h"
#include "io_util.h"
#include "png_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <stb_image.h>

static int g_decoded, g_refused, g_stb_lenient;

/* Decodes png (copied to a buffer of its exact size: ASan sees any overread) with
 * vki_png_decode, vkimg_load_memory and stb_image. want_error == NULL: a valid
 * file: the decoder and the loader decode it to stb's image, byte for byte. Else
 * an invalid one: both refuse it, VKIMG_E_RUNTIME, nothing allocated, the message
 * "NAME: PNG: " followed by want_error (the reason, or its beginning). Returns the
 * decoder's image (or a zeroed one). */
static vkimg_image check_png(int line, const unsigned char *png, size_t n, const char *what, const char *want_error)
{
    vkimg_err e, le;
    vkimg_image im, ref, via;
    unsigned char *b = malloc(n);
    memcpy(b, png, n);
    memset(&im, 0x5a, sizeof im);
    memset(&via, 0x5a, sizeof via);
    int rc = vki_png_decode(b, n, "dec.png", VKIMG_DEFAULT_MAX_PIXELS, &im, &e);
    int lrc = vkimg_load_memory(b, n, "via.png", NULL, &via, &le);
    int src = stb_decode(b, n, &ref);
    if (!want_error) {
        CHECK(rc == 0, "line %d %s: decoder rc %d: %s", line, what, rc, e.msg);
        CHECK(src == 0, "line %d %s: stb fails: %s", line, what, stbi_failure_reason());
        if (rc == 0 && src == 0)
            CHECK(same_image(&im, &ref), "line %d %s: decoded %dx%dx%d %s, stb %dx%dx%d %s, or pixels differ", line,
                  what, im.w, im.h, im.c, vkimg_fmt_name(im.fmt), ref.w, ref.h, ref.c, vkimg_fmt_name(ref.fmt));
        CHECK(lrc == 0 && rc == 0 && same_image(&via, &im),
              "line %d %s: vkimg_load_memory rc %d %s, not the decoder's image", line, what, lrc, lrc ? le.msg : "");
        g_decoded += rc == 0;
    } else {
        char want[256];
        snprintf(want, sizeof want, "dec.png: PNG: %s", want_error);
        CHECK(rc == VKIMG_E_RUNTIME && !im.data && !strncmp(e.msg, want, strlen(want)) && !strchr(e.msg, '\n'),
              "line %d %s: rc %d (%s), want the error '%s...'", line, what, rc, rc ? e.msg : "decoded", want);
        snprintf(want, sizeof want, "via.png: PNG: %s", want_error);
        CHECK(lrc == VKIMG_E_RUNTIME && !via.data && !strncmp(le.msg, want, strlen(want)),
              "line %d %s: vkimg_load_memory rc %d (%s), want the error '%s...'", line, what, lrc,
              lrc ? le.msg : "decoded", want);
        if (rc == 0)
            vkimg_image_free(&im);
        g_refused += rc == VKIMG_E_RUNTIME;
        g_stb_lenient += src == 0; /* stb_image would read it anyway */
    }
    if (lrc == 0)
        vkimg_image_free(&via);
    vkimg_image_free(&ref);
    free(b);
    return im;
}
#define CHECK_PNG(png, n, what, want_error) check_png(__LINE__, png, n, what, want_error)

/* The image a valid mk_png file stands for, from its source rows, with stb_image's
 * conventions: gray of 1/2/4 bits scaled to 8 bits, palette indices of any depth
 * looked up (RGB, or RGBA with a tRNS chunk, entries past it opaque), 16-bit
 * samples in host order. Not for colour keys (tRNS of gray or RGB). */
static vkimg_image expected(const png_spec *s)
{
    vkimg_image im;
    vkimg_err e;
    const int in_c = png_chans[s->ctype], pal = s->ctype == 3, c = pal ? (s->trns ? 4 : 3) : in_c;
    const size_t rb = ((size_t)s->w * in_c * s->depth + 7) / 8;
    const unsigned mask = (1u << (s->depth < 8 ? s->depth : 8)) - 1;
    CHECK(vkimg_image_alloc(&im, s->w, s->h, c, s->depth == 16 ? VKIMG_U16 : VKIMG_U8, &e) == 0, "alloc: %s", e.msg);
    for (int y = 0; y < s->h && im.data; y++)
        for (int x = 0; x < s->w; x++) {
            const unsigned char *row = s->raw + (size_t)y * rb;
            const size_t o = ((size_t)y * s->w + x) * c;
            if (s->depth == 16) {
                for (int k = 0; k < c; k++) {
                    const unsigned char *p = row + ((size_t)x * c + k) * 2;
                    ((uint16_t *)im.data)[o + k] = (uint16_t)(p[0] << 8 | p[1]);
                }
                continue;
            }
            uint8_t *d = (uint8_t *)im.data + o;
            if (!pal && s->depth == 8) {
                memcpy(d, row + (size_t)x * c, (size_t)c);
                continue;
            }
            const size_t bit = (size_t)x * s->depth;
            const unsigned v = (unsigned)(row[bit / 8] >> (8 - s->depth - bit % 8)) & mask;
            if (!pal) { /* gray below 8 bits */
                d[0] = (uint8_t)(v * 255 / mask);
                continue;
            }
            memcpy(d, s->plte + 3 * v, 3);
            if (c == 4)
                d[3] = (int)v < s->ntrns ? s->trns[v] : 255;
        }
    return im;
}

/* Sample data: 0 full-range noise, 1 values 0..3 (paeth ties, colour-key hits),
 * 2 gradient, 3 constant. */
static void fill(unsigned char *p, size_t n, int mode, unsigned long long *s)
{
    for (size_t i = 0; i < n; i++)
        p[i] = mode == 0 ? (unsigned char)t_rand(s) : mode == 1 ? (unsigned char)(t_rand(s) & 3)
               : mode == 2 ? (unsigned char)(i * 7 + i / 13) : 0x5a;
}

static void test_png_valid(void)
{
    unsigned long long seed = 12345;
    static const int sizes[][2] = { { 1, 1 }, { 1, 6 }, { 5, 1 }, { 2, 2 }, { 3, 7 }, { 7, 3 }, { 13, 5 }, { 31, 9 }, { 65, 4 } };
    static const int ctypes[5] = { 0, 2, 3, 4, 6 };
    char what[128];
    int n_cases = 0;

    /* the fast path: every colour type x 8/16 bits x size x filter (each alone, and
     * cycling with the first row taking each) x data: identical to stb and to the
     * source rows */
    for (int ci = 0; ci < 5; ci++)
        for (int depth = 8; depth <= 16; depth += 8)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                for (int f = 0; f < 10; f++)
                    for (int mode = 0; mode < 3; mode++) {
                        const int ct = ctypes[ci], w = sizes[si][0], h = sizes[si][1];
                        if (ct == 3 && depth == 16)
                            continue;
                        const int ch = png_chans[ct];
                        const size_t rb = (size_t)w * ch * (depth / 8), n = rb * h;
                        unsigned char *raw = malloc(n), pal[256 * 3];
                        fill(raw, n, mode, &seed);
                        png_spec s = { .w = w, .h = h, .depth = depth, .ctype = ct, .raw = raw,
                                       .filter = f < 5 ? f : 5, .fseed = f - 5 };
                        int npal = 0;
                        if (ct == 3) { /* indices below the palette's length */
                            npal = mode == 1 ? 4 : 1 + (int)(t_rand(&seed) % 256);
                            for (size_t i = 0; i < n; i++)
                                raw[i] = (unsigned char)(raw[i] % npal);
                            fill(pal, sizeof pal, 0, &seed);
                            s.plte = pal;
                            s.nplte = npal;
                        }
                        size_t len;
                        unsigned char *png = mk_png(&s, &len);
                        snprintf(what, sizeof what, "ctype %d depth %d %dx%d filter %d data %d", ct, depth, w, h, f,
                                 mode);
                        vkimg_image im = CHECK_PNG(png, len, what, NULL);
                        if (im.data && ct != 3) { /* and the source rows themselves (host order) */
                            int eq = 1;
                            for (size_t i = 0; i < n / (depth / 8); i++)
                                eq &= depth == 8 ? ((uint8_t *)im.data)[i] == raw[i]
                                                 : ((uint16_t *)im.data)[i] == (raw[2 * i] << 8 | raw[2 * i + 1]);
                            CHECK(eq, "%s: samples differ from the source", what);
                        }
                        vkimg_image_free(&im);
                        free(png);
                        free(raw);
                        n_cases++;
                    }

    /* palette + tRNS (none, empty, shorter than, as long as PLTE), gray/RGB + tRNS
     * colour keys (8-bit keys with a high byte, which stb ignores), 8 and 16 bits */
    for (int t = 0; t < 4; t++)
        for (int mode = 0; mode < 2; mode++) {
            const int w = 19, h = 7, npal = mode ? 5 : 200;
            unsigned char raw[19 * 7], pal[200 * 3], trns[200];
            fill(raw, sizeof raw, 0, &seed);
            for (size_t i = 0; i < sizeof raw; i++)
                raw[i] = (unsigned char)(raw[i] % npal);
            fill(pal, sizeof pal, 0, &seed);
            fill(trns, sizeof trns, 0, &seed);
            png_spec s = { .w = w, .h = h, .depth = 8, .ctype = 3, .raw = raw, .filter = 5, .plte = pal, .nplte = npal,
                           .trns = t ? trns : NULL, .ntrns = t == 1 ? 0 : t == 2 ? npal / 2 : npal };
            size_t len;
            unsigned char *png = mk_png(&s, &len);
            snprintf(what, sizeof what, "palette %d + tRNS variant %d", npal, t);
            vkimg_image im = CHECK_PNG(png, len, what, NULL);
            CHECK(im.c == (t ? 4 : 3), "%s: %d channels", what, im.c);
            if (im.data) {
                int eq = 1;
                for (int i = 0; i < w * h; i++)
                    for (int k = 0; k < im.c; k++) {
                        int want = k < 3 ? pal[raw[i] * 3 + k] : raw[i] < s.ntrns ? trns[raw[i]] : 255;
                        eq &= ((uint8_t *)im.data)[i * im.c + k] == want;
                    }
                CHECK(eq, "%s: palette expansion", what);
            }
            vkimg_image_free(&im);
            free(png);
        }
    for (int ct = 0; ct <= 2; ct += 2)
        for (int depth = 8; depth <= 16; depth += 8) {
            const int ch = png_chans[ct], w = 23, h = 6;
            const size_t n = (size_t)w * h * ch * (depth / 8);
            unsigned char raw[23 * 6 * 3 * 2], key[6];
            fill(raw, n, 1, &seed); /* values 0..3: partial matches */
            for (int k = 0; k < ch; k++) {
                key[2 * k] = depth == 8 ? (unsigned char)(k + 1) : 0x02; /* 8-bit: high byte ignored by stb */
                key[2 * k + 1] = (unsigned char)(k & 1 ? 3 : 1);
            }
            for (int i = 0; i < w * h; i += 5) /* every 5th pixel is the key colour */
                memcpy(raw + (size_t)i * ch * (depth / 8), depth == 8 ? (const unsigned char[]){ 1, 3, 1 } : key,
                       (size_t)ch * (depth / 8));
            png_spec s = { .w = w, .h = h, .depth = depth, .ctype = ct, .raw = raw, .filter = 5, .trns = key,
                           .ntrns = 2 * ch };
            size_t len;
            unsigned char *png = mk_png(&s, &len);
            snprintf(what, sizeof what, "ctype %d depth %d + tRNS key", ct, depth);
            vkimg_image im = CHECK_PNG(png, len, what, NULL);
            CHECK(im.c == ch + 1, "%s: %d channels", what, im.c);
            if (im.data && im.c == ch + 1) {
                int zeros = 0, eq = 1;
                for (int i = 0; i < w * h; i++) {
                    unsigned a = depth == 8 ? ((uint8_t *)im.data)[i * im.c + ch] : ((uint16_t *)im.data)[i * im.c + ch];
                    zeros += a == 0;
                    eq &= a == 0 || a == (depth == 8 ? 255u : 65535u);
                }
                CHECK(eq && zeros > 0 && zeros < w * h, "%s: alpha values (%d transparent)", what, zeros);
            }
            vkimg_image_free(&im);
            free(png);
        }

    /* stream layout: many IDATs (1 byte each, empty ones between), ancillary chunks
     * before and after the data (including an unknown one), a suggested PLTE in an RGB
     * image: decoded, identical */
    {
        const int w = 17, h = 9;
        unsigned char raw[17 * 9 * 4], pal[3 * 16];
        fill(raw, sizeof raw, 0, &seed);
        fill(pal, sizeof pal, 0, &seed);
        png_spec s = { .w = w, .h = h, .depth = 8, .ctype = 6, .raw = raw, .filter = 5, .idat_max = 1,
                       .empty_idats = 1, .before = "gAMA", .after = "quUx" };
        size_t len;
        unsigned char *png = mk_png(&s, &len);
        vkimg_image im = CHECK_PNG(png, len, "1-byte IDATs + ancillary chunks", NULL);
        vkimg_image_free(&im);
        free(png);
        s.empty_idats = 2; /* the decoder alone (stb would memcpy() to NULL, see png_util.h): the source rows */
        png = mk_png(&s, &len);
        vkimg_err e;
        CHECK(vki_png_decode(png, len, "e.png", 0, &im, &e) == 0 && im.c == 4 && !memcmp(im.data, raw, sizeof raw),
              "a leading empty IDAT: %s", e.msg);
        vkimg_image_free(&im);
        free(png);
        png_spec s2 = { .w = w, .h = h, .depth = 8, .ctype = 2, .raw = raw, .filter = 4, .plte = pal, .nplte = 16,
                        .idat_max = 50, .before = "tEXt", .after = "tIME" };
        png = mk_png(&s2, &len);
        im = CHECK_PNG(png, len, "RGB with a suggested PLTE", NULL);
        vkimg_image_free(&im);
        free(png);
    }


    /* the files of the decoder's other path, which the fast path once left to
     * stb_image: interlaced (Adam7), and gray and palette indices of 1, 2 and 4 bits
     * (the padding bits at the end of each row are random: ignored): identical to
     * stb and to the source pixels */
    {
        const int w = 13, h = 9;
        unsigned char raw[13 * 9 * 8], pal[3 * 256], trns[16];
        fill(raw, sizeof raw, 0, &seed);
        fill(pal, sizeof pal, 0, &seed);
        fill(trns, sizeof trns, 0, &seed);
        size_t len;
        unsigned char *png;
        vkimg_image im, want;
#define DECODES(...)                                                                            \
    do {                                                                                        \
        png_spec s_ = { .w = w, .h = h, .raw = raw, __VA_ARGS__ };                              \
        png = mk_png(&s_, &len);                                                                \
        im = CHECK_PNG(png, len, #__VA_ARGS__, NULL);                                           \
        want = expected(&s_);                                                                   \
        CHECK(im.data && same_image(&im, &want), "%s: not the source pixels", #__VA_ARGS__);    \
        vkimg_image_free(&want);                                                                \
        vkimg_image_free(&im);                                                                  \
        free(png);                                                                              \
    } while (0)
        DECODES(.depth = 8, .ctype = 2, .interlace = 1, .filter = 5);
        DECODES(.depth = 16, .ctype = 6, .interlace = 1, .filter = 5);
        DECODES(.depth = 8, .ctype = 3, .interlace = 1, .filter = 5, .plte = pal, .nplte = 256, .trns = trns, .ntrns = 9);
        DECODES(.depth = 1, .ctype = 0, .filter = 5);
        DECODES(.depth = 2, .ctype = 0, .filter = 5);
        DECODES(.depth = 4, .ctype = 0, .filter = 5);
        DECODES(.depth = 1, .ctype = 3, .filter = 5, .plte = pal, .nplte = 2);
        DECODES(.depth = 2, .ctype = 3, .filter = 5, .plte = pal, .nplte = 4, .trns = trns, .ntrns = 3);
        DECODES(.depth = 4, .ctype = 3, .filter = 5, .plte = pal, .nplte = 16);
#undef DECODES
    }

    /* the encoder's own files (adaptive filters, split IDATs, levels 0..12): all
     * decoded; across them every filter type occurs */
    {
        unsigned used = 0;
        for (int is16 = 0; is16 < 2; is16++)
            for (int c = 1; c <= 4; c++)
                for (int v = 0; v < 4; v++) {
                    vkimg_image im, ramp;
                    vkimg_err e;
                    const int w = 1 + 37 * v, h = 1 + 5 * v;
                    make_image(&im, w, h, c, is16 ? VKIMG_U16 : VKIMG_U8, v & 1, 300 + c + v);
                    if (v == 3) { /* gradients: sub and up */
                        vkimg_image_alloc(&ramp, w, h, c, im.fmt, &e);
                        for (size_t i = 0; i < (size_t)w * h * c; i++) {
                            unsigned val = (unsigned)((i / c) % w * 5 + (i / c / w) * (i % c));
                            if (is16)
                                ((uint16_t *)ramp.data)[i] = (uint16_t)(val * 300);
                            else
                                ((uint8_t *)ramp.data)[i] = (uint8_t)val;
                        }
                        vkimg_image_free(&im);
                        im = ramp;
                    }
                    unsigned char *png, filters[64];
                    size_t len;
                    int pw, ph, depth, ctype, nidat;
                    CHECK(vki_png_encode_ex(&im, v * 4, v == 2 ? 7 : 1u << 20, 0, &png, &len, &e) == 0, "encode: %s",
                          e.msg);
                    unsigned char *raw = png_parse(png, len, &pw, &ph, &depth, &ctype, filters, 64, &nidat);
                    if (raw)
                        for (int y = 0; y < ph; y++)
                            used |= 1u << filters[y];
                    free(raw);
                    snprintf(what, sizeof what, "encoder %d-bit c=%d variant %d", is16 ? 16 : 8, c, v);
                    vkimg_image back = CHECK_PNG(png, len, what, NULL);
                    CHECK(same_image(&back, &im), "%s: not the encoded image", what);
                    vkimg_image_free(&back);
                    vkimg_image_free(&im);
                    free(png);
                }
        CHECK(used == 0x1f, "the encoder corpus used only filters %#x", used);
    }
    fprintf(stderr, "note: PNG decoder: %d valid files decoded, identical to stb_image and the source (%d of every "
                    "colour type/depth/size/filter)\n", g_decoded, n_cases);
}

/* Invalid files, which the fast path once left to stb_image (and stb reads some of
 * them): refused by the decoder and the loader, each with its reason. */
static void test_png_invalid(void)
{
    unsigned long long seed = 4242;
    const int w = 13, h = 9;
    unsigned char raw[13 * 9 * 8], pal[3 * 16];
    fill(raw, sizeof raw, 0, &seed);
    fill(pal, sizeof pal, 0, &seed);
    size_t len;
    unsigned char *png;
    vkimg_image im;
#define REFUSED(reason, ...)                                        \
    do {                                                            \
        png_spec s_ = { .w = w, .h = h, .raw = raw, __VA_ARGS__ };  \
        png = mk_png(&s_, &len);                                    \
        im = CHECK_PNG(png, len, #__VA_ARGS__, reason);             \
        vkimg_image_free(&im);                                      \
        free(png);                                                  \
    } while (0)
    REFUSED("unknown critical chunk 'QUUX'", .depth = 8, .ctype = 2, .filter = 1, .before = "QUUX");
    REFUSED("unknown critical chunk 'CgBI' (Apple's CgBI PNG variant)", .depth = 8, .ctype = 2, .filter = 1,
            .after = "CgBI");
    REFUSED("too much image data (the zlib stream holds more than the 126 bytes of the image)", .depth = 8, .ctype = 0,
            .filter = 2, .extra_bytes = 14);
    REFUSED("corrupt or truncated zlib data in IDAT", .depth = 8, .ctype = 2, .filter = 3, .bad_adler = 1);
    REFUSED("invalid filter type 5 in row 4", .depth = 8, .ctype = 2, .filter = 5, .bad_filter_row = 5);
    REFUSED("tRNS in an image with an alpha channel", .depth = 8, .ctype = 6, .filter = 0, .trns = pal, .ntrns = 8);
    REFUSED("tRNS after IDAT", .depth = 8, .ctype = 0, .filter = 0, .trns = pal, .ntrns = 2, .trns_after_idat = 1);
    REFUSED("IDAT before PLTE in a palette image", .depth = 8, .ctype = 3, .filter = 0);
    REFUSED("truncated (no IEND chunk)", .depth = 16, .ctype = 2, .filter = 4, .no_iend = 1);
#undef REFUSED
    CHECK(g_refused == 9, "%d of 9 invalid files refused", g_refused);
    /* a palette index past the PLTE: opaque black (the PNG specification's third
     * edition); stb would read palette entries it never set */
    for (size_t i = 0; i < (size_t)w * h; i++)
        raw[i] &= 3;
    raw[w * h - 1] = 4;
    for (int t = 0; t < 2; t++) {
        const unsigned char trns[2] = { 0, 77 };
        png_spec s = { .w = w, .h = h, .raw = raw, .depth = 8, .ctype = 3, .filter = 5, .plte = pal, .nplte = 4,
                       .trns = t ? trns : NULL, .ntrns = t ? 2 : 0 };
        png = mk_png(&s, &len);
        vkimg_err e;
        const int rc = vki_png_decode(png, len, "pal.png", VKIMG_DEFAULT_MAX_PIXELS, &im, &e);
        CHECK(rc == 0 && im.c == 3 + t, "palette index past the PLTE%s: rc %d (%s), %d channels", t ? ", tRNS" : "",
              rc, rc ? e.msg : "", rc ? 0 : im.c);
        long bad = 0;
        for (size_t i = 0; !rc && i < (size_t)w * h; i++) {
            const unsigned char *px = (const unsigned char *)im.data + i * (size_t)(3 + t);
            for (int k = 0; k < 3 + t; k++) {
                const int want = k == 3 ? (raw[i] < 2 ? trns[raw[i]] : 255) : raw[i] < 4 ? pal[3 * raw[i] + k] : 0;
                bad += px[k] != want;
            }
        }
        CHECK(!rc && bad == 0, "palette index past the PLTE%s: %ld samples not the palette's (or opaque black)",
              t ? ", tRNS" : "", bad);
        if (!rc)
            vkimg_image_free(&im);
        free(png);
    }
    fprintf(stderr, "note: PNG decoder: %d invalid files refused with their reason (stb_image reads %d of them)\n",
            g_refused, g_stb_lenient);
}

/* The file as the decoder reads it: without its ancillary chunks whose CRC does not
 * match (ignored, as libpng does; stb_image checks no CRC and would use a damaged
 * tRNS). Whatever does not parse as a chunk is kept as it is. free() the result. */
static unsigned char *without_bad_ancillary(const unsigned char *b, size_t len, size_t *n)
{
    unsigned char *o = malloc(len);
    size_t pos = 8, k = 8;
    memcpy(o, b, 8);
    while (len - pos >= 12 && be32(b + pos) <= len - pos - 12) {
        const size_t cn = 12 + (size_t)be32(b + pos);
        const int ancillary = b[pos + 4] & 0x20;
        if (!ancillary || libdeflate_crc32(0, b + pos + 4, cn - 8) == be32(b + pos + cn - 4)) {
            memcpy(o + k, b + pos, cn);
            k += cn;
        }
        pos += cn;
    }
    memcpy(o + k, b + pos, len - pos);
    *n = k + len - pos;
    return o;
}

/* Sets the CRC of every chunk of b that parses as one (a mutation with its CRCs
 * fixed reaches the checks behind the CRC check). */
static void fix_crcs(unsigned char *b, size_t len)
{
    size_t pos = 8;
    while (len - pos >= 12 && be32(b + pos) <= len - pos - 12) {
        const size_t cn = 12 + (size_t)be32(b + pos);
        put32(b + pos + cn - 4, libdeflate_crc32(0, b + pos + 4, cn - 8));
        pos += cn;
    }
}

/* Truncation at every length: always refused, by the decoder and the loader alike.
 * Random corruption: the decoder never crashes or leaks; it decodes an image of the
 * file's size (stb_image's image whenever stb reads the file as the decoder does,
 * damaged ancillary chunks left out) or refuses it with a one-line error naming the
 * file. (Run under ASan by scripts/setup --asan.) */
static void test_png_damage(void)
{
    unsigned long long seed = 777;
    unsigned char raw[21 * 11 * 8], pal[3 * 40], key[6] = { 0, 1, 0, 2, 0, 3 };
    fill(raw, sizeof raw, 0, &seed);
    fill(pal, sizeof pal, 0, &seed);
    unsigned char praw[21 * 11];
    for (size_t i = 0; i < sizeof praw; i++)
        praw[i] = raw[i] % 40;
    const png_spec bases[] = {
        { .w = 21, .h = 11, .depth = 8, .ctype = 2, .raw = raw, .filter = 5, .idat_max = 100 },
        { .w = 21, .h = 11, .depth = 16, .ctype = 6, .raw = raw, .filter = 5 },
        { .w = 21, .h = 11, .depth = 8, .ctype = 3, .raw = praw, .filter = 5, .plte = pal, .nplte = 40, .trns = pal,
          .ntrns = 20 },
        { .w = 21, .h = 11, .depth = 16, .ctype = 2, .raw = raw, .filter = 5, .trns = key, .ntrns = 6 },
    };
    const vkimg_load_opts lo = { .max_pixels = 1 << 20 };
    int decoded = 0, refused = 0, stb_same = 0, stb_other = 0, cuts = 0;
    for (size_t bi = 0; bi < sizeof bases / sizeof bases[0]; bi++) {
        size_t len;
        unsigned char *png = mk_png(&bases[bi], &len);
        vkimg_err e, le;
        vkimg_image im, via, ref;

        /* every prefix: refused, nothing allocated, the loader's message the decoder's
         * (under 4 bytes there is no PNG signature to choose the decoder) */
        int bad = 0;
        for (size_t cut = 1; cut < len; cut++) {
            unsigned char *b = malloc(cut); /* exact size: ASan sees any overread */
            memcpy(b, png, cut);
            memset(&im, 0x5a, sizeof im);
            memset(&via, 0x5a, sizeof via);
            int rc = vki_png_decode(b, cut, "cut.png", 0, &im, &e);
            int lrc = vkimg_load_memory(b, cut, "cut.png", NULL, &via, &le);
            int ok = rc == VKIMG_E_RUNTIME && !im.data && !strncmp(e.msg, "cut.png: PNG: ", 14) && !strchr(e.msg, '\n') &&
                     lrc == VKIMG_E_RUNTIME && !via.data &&
                     !strcmp(le.msg, cut < 4 ? "cut.png: not a supported image (PNG, JPEG, WebP, TIFF, GIF, BMP, TGA, PSD, HDR, PNM)"
                                             : e.msg);
            if (!ok && !bad++)
                fprintf(stderr, "  base %zu cut %zu: decoder rc %d %s, loader rc %d %s\n", bi, cut, rc,
                        rc ? e.msg : "(decoded)", lrc, lrc ? le.msg : "(decoded)");
            if (rc == 0)
                vkimg_image_free(&im);
            if (lrc == 0)
                vkimg_image_free(&via);
            free(b);
            cuts++;
        }
        CHECK(bad == 0, "base %zu: %d of %zu truncated files not refused", bi, bad, len - 1);

        /* 1-3 random bytes changed after IHDR, or one of IHDR's depth/type/method
         * bytes, half of the time with the CRCs made to match: an image of the
         * file's size, or a clean error; the loader agrees */
        bad = 0;
        for (int it = 0; it < 400; it++) {
            unsigned char *b = malloc(len);
            memcpy(b, png, len);
            int nm = 1 + (int)(t_rand(&seed) % 3);
            for (int m = 0; m < nm; m++) {
                size_t at = it % 10 == 0 ? 24 + t_rand(&seed) % 5 : 33 + t_rand(&seed) % (len - 33);
                b[at] = (unsigned char)(it & 1 ? t_rand(&seed) : b[at] ^ (1u << (t_rand(&seed) % 8)));
            }
            if (it % 4 >= 2)
                fix_crcs(b, len);
            memset(&im, 0x5a, sizeof im);
            memset(&via, 0x5a, sizeof via);
            int rc = vki_png_decode(b, len, "bad.png", lo.max_pixels, &im, &e);
            int lrc = vkimg_load_memory(b, len, "bad.png", &lo, &via, &le);
            const char *why = lrc != rc || (rc ? via.data || strcmp(le.msg, e.msg) : !same_image(&via, &im))
                                  ? "the loader's result is not the decoder's" : NULL;
            if (rc == 0) {
                decoded++;
                if (!im.data || im.w != bases[bi].w || im.h != bases[bi].h || im.c < 1 || im.c > 4 ||
                    (im.fmt != VKIMG_U8 && im.fmt != VKIMG_U16))
                    why = "not an image of the file's size";
                size_t n2;
                unsigned char *b2 = without_bad_ancillary(b, len, &n2);
                if (stb_decode(b2, n2, &ref) == 0) {
                    if (same_image(&im, &ref))
                        stb_same++;
                    else
                        why = "stb_image decodes the file otherwise";
                } else if (!stb_other++) { /* none so far: a file stb refuses and the decoder takes */
                    fprintf(stderr, "  base %zu mutation %d: decoded, stb_image fails: %s\n", bi, it,
                            stbi_failure_reason());
                }
                vkimg_image_free(&ref);
                free(b2);
            } else {
                refused++;
                if (rc != VKIMG_E_RUNTIME || im.data || strncmp(e.msg, "bad.png: PNG: ", 14) || strchr(e.msg, '\n'))
                    why = "not a clean error";
            }
            if (why && !bad)
                fprintf(stderr, "  base %zu mutation %d: %s (decoder rc %d %s %dx%dx%d, loader rc %d)\n", bi, it, why,
                        rc, rc ? e.msg : "", im.w, im.h, im.c, lrc);
            bad += why != NULL;
            if (rc == 0)
                vkimg_image_free(&im);
            if (lrc == 0)
                vkimg_image_free(&via);
            free(b);
        }
        CHECK(bad == 0, "base %zu: %d corrupted files handled wrongly", bi, bad);
        free(png);
    }
    fprintf(stderr, "note: %d truncated PNGs refused; corrupted PNGs: %d decoded (%d identical to stb_image, %d that "
                    "stb cannot read), %d refused\n", cuts, decoded, stb_same, stb_other, refused);
    CHECK(decoded > 0 && refused > 0, "mutations exercised both outcomes");
}

/* vkimg_load_opts.alloc for the drop test: 1 declines (the decoder's own memory,
 * its rows copied out), 2 memory with a byte a row to spare (vki_image_owner.cap:
 * the rows unfiltered in place in it), 3 memory without (copied into it). */
typedef struct test_owner {
    vki_image_owner base;
    void *data;
} test_owner;

static void test_owner_release(vki_image_owner *o)
{
    free(((test_owner *)o)->data);
    free(o);
}

static int test_alloc(void *user, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    const int mode = *(const int *)user;
    if (mode == 1)
        return 1;
    *im = (vkimg_image){ .w = w, .h = h, .c = c, .fmt = fmt };
    const size_t cap = vkimg_image_bytes(im) + (mode == 2 ? (size_t)h : 0);
    test_owner *o = calloc(1, sizeof *o);
    if (!o || !(o->data = malloc(cap))) {
        free(o);
        return vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
    }
    o->base = (vki_image_owner){ .release = test_owner_release, .cap = cap };
    im->data = o->data;
    im->priv = o;
    return 0;
}

/* vkimg_load_opts.drop_opaque_alpha: an 8-bit RGBA or gray + alpha file (not
 * interlaced) whose alpha is all 255 comes with one channel fewer, the colour
 * samples of the file; one alpha of 254 anywhere (the first row, the last, the
 * middle: the rows packed before it are put back) gives the file's image as
 * without the option, as do 16-bit and interlaced files and VKIMG_DROP_ALPHA=0;
 * through each of the decoder's three ways to its result (test_alloc). */
static void test_png_drop_alpha(void)
{
    unsigned long long seed = 777;
    static const int sizes[][2] = { { 1, 1 }, { 5, 1 }, { 1, 6 }, { 3, 7 }, { 13, 5 }, { 65, 4 }, { 257, 33 } };
    char what[160];
    for (int ct = 4; ct <= 6; ct += 2)
        for (int depth = 8; depth <= 16; depth += 8)
            for (int il = 0; il < 2; il++)
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                    for (int spoil = 0; spoil < 4; spoil++)
                        for (int mode = 0; mode < 4; mode++) {
                            const int w = sizes[si][0], h = sizes[si][1], c = png_chans[ct], ss = depth / 8;
                            const size_t px = (size_t)w * h, n = px * c * ss;
                            unsigned char *raw = malloc(n);
                            fill(raw, n, 0, &seed);
                            for (size_t i = 0; i < px; i++)
                                memset(raw + (i * c + c - 1) * ss, 0xFF, (size_t)ss);
                            const size_t bad = spoil == 1 ? 0 : spoil == 2 ? px - 1 : px / 2;
                            if (spoil) /* the first byte of the alpha: 254 (8-bit), 0xFEFF (16-bit) */
                                raw[(bad * c + c - 1) * ss] = 0xFE;
                            png_spec sp = { .w = w, .h = h, .depth = depth, .ctype = ct, .interlace = il, .raw = raw,
                                            .filter = 5, .fseed = (int)si };
                            size_t len;
                            unsigned char *png = mk_png(&sp, &len);
                            const int off = mode == 0 && si % 2; /* VKIMG_DROP_ALPHA=0 */
                            snprintf(what, sizeof what, "drop: ctype %d depth %d%s %dx%d, %s, alloc mode %d%s", ct,
                                     depth, il ? " interlaced" : "", w, h,
                                     spoil ? (spoil == 1 ? "alpha 254 first" : spoil == 2 ? "alpha 254 last"
                                                                                         : "alpha 254 in the middle")
                                           : "opaque", mode, off ? ", VKIMG_DROP_ALPHA=0" : "");
                            vkimg_load_opts lo = { .drop_opaque_alpha = true, .alloc = mode ? test_alloc : NULL,
                                                   .user = &mode };
                            vkimg_image im = { 0 };
                            vkimg_err e;
                            if (off)
                                setenv("VKIMG_DROP_ALPHA", "0", 1);
                            const int rc = vkimg_load_memory(png, len, "drop.png", &lo, &im, &e);
                            unsetenv("VKIMG_DROP_ALPHA");
                            CHECK(rc == 0, "%s: %s", what, e.msg);
                            const bool drops = !spoil && depth == 8 && !il && !off;
                            CHECK(rc || im.c == (drops ? c - 1 : c), "%s: %d channels, want %d", what, im.c,
                                  drops ? c - 1 : c);
                            if (!rc && im.c == (drops ? c - 1 : c)) {
                                int eq = 1;
                                for (size_t i = 0; i < px; i++)
                                    for (int k = 0; k < im.c; k++) {
                                        const unsigned char *p = raw + (i * c + k) * ss;
                                        const unsigned want = ss == 1 ? p[0] : (unsigned)(p[0] << 8 | p[1]);
                                        const size_t o = i * im.c + k;
                                        eq &= (ss == 1 ? ((uint8_t *)im.data)[o] : ((uint16_t *)im.data)[o]) == want;
                                    }
                                CHECK(eq, "%s: samples differ from the file's", what);
                            }
                            vkimg_image_free(&im);
                            free(png);
                            free(raw);
                            g_decoded++;
                        }
}

int main(void)
{
    static void (*const tests[])(void) = { test_png_valid, test_png_invalid, test_png_damage, test_png_drop_alpha };
    return io_main("test_png_fast", tests, 4);
}
