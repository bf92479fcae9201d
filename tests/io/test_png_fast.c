/* The PNG fast path (vki_png_decode) against stb_image: hand-made files of every
 * colour type, depth, size and filter, palettes and colour keys, chunk layouts,
 * the files it must decline, the encoder's own files; then truncation at every
 * length and random corruption (run under ASan by scripts/setup --asan). No
 * device. */
#include "io/io_priv.h"
#include "io_util.h"
#include "png_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>

static int g_fast_ok, g_fast_declined;

/* Decodes png with the fast path and with stb. want_reason == NULL: the fast path
 * must take it and agree with stb byte for byte; else it must decline with that
 * reason. Either way vkimg_load_memory must give stb's result (or fail naming the
 * file when stb fails). Returns the fast path's image (or a zeroed one). */
static vkimg_image check_fast(int line, const unsigned char *png, size_t n, const char *what, const char *want_reason)
{
    vkimg_err e;
    vkimg_image fast, ref, via;
    int rc = vki_png_decode(png, n, "fast.png", VKIMG_DEFAULT_MAX_PIXELS, &fast, &e);
    int src = stb_decode(png, n, &ref);
    if (!want_reason) {
        CHECK(rc == 0, "line %d %s: fast path rc %d: %s", line, what, rc, e.msg);
        CHECK(src == 0, "line %d %s: stb fails: %s", line, what, stbi_failure_reason());
        if (rc == 0 && src == 0)
            CHECK(same_image(&fast, &ref), "line %d %s: fast %dx%dx%d %s, stb %dx%dx%d %s, or pixels differ", line,
                  what, fast.w, fast.h, fast.c, vkimg_fmt_name(fast.fmt), ref.w, ref.h, ref.c, vkimg_fmt_name(ref.fmt));
        g_fast_ok += rc == 0;
    } else {
        CHECK(rc == VKI_DECLINED && !fast.data && strstr(e.msg, want_reason), "line %d %s: rc %d (%s), want declined: %s",
              line, what, rc, e.msg, want_reason);
        g_fast_declined += rc == VKI_DECLINED;
    }
    int lrc = vkimg_load_memory(png, n, "via.png", NULL, &via, &e);
    if (src == 0)
        CHECK(lrc == 0 && same_image(&via, &ref), "line %d %s: vkimg_load_memory differs from stb (rc %d %s)", line,
              what, lrc, lrc ? e.msg : "");
    else
        CHECK(lrc == VKIMG_E_RUNTIME && !via.data && strstr(e.msg, "via.png: ") && strstr(e.msg, "stb_image: "),
              "line %d %s: rc %d: %s", line, what, lrc, e.msg);
    vkimg_image_free(&via);
    vkimg_image_free(&ref);
    return fast;
}
#define CHECK_FAST(png, n, what, reason) check_fast(__LINE__, png, n, what, reason)

/* Sample data: 0 full-range noise, 1 values 0..3 (paeth ties, colour-key hits),
 * 2 gradient, 3 constant. */
static void fill(unsigned char *p, size_t n, int mode, unsigned long long *s)
{
    for (size_t i = 0; i < n; i++)
        p[i] = mode == 0 ? (unsigned char)t_rand(s) : mode == 1 ? (unsigned char)(t_rand(s) & 3)
               : mode == 2 ? (unsigned char)(i * 7 + i / 13) : 0x5a;
}

static void test_png_fast(void)
{
    unsigned long long seed = 12345;
    static const int sizes[][2] = { { 1, 1 }, { 1, 6 }, { 5, 1 }, { 2, 2 }, { 3, 7 }, { 7, 3 }, { 13, 5 }, { 31, 9 }, { 65, 4 } };
    static const int ctypes[5] = { 0, 2, 3, 4, 6 };
    char what[128];
    int n_cases = 0;

    /* every colour type x 8/16 bits x size x filter (each alone, and cycling with
     * the first row taking each) x data: identical to stb and to the source rows */
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
                        vkimg_image im = CHECK_FAST(png, len, what, NULL);
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
            vkimg_image im = CHECK_FAST(png, len, what, NULL);
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
            vkimg_image im = CHECK_FAST(png, len, what, NULL);
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
     * image: taken, identical */
    {
        const int w = 17, h = 9;
        unsigned char raw[17 * 9 * 4], pal[3 * 16];
        fill(raw, sizeof raw, 0, &seed);
        fill(pal, sizeof pal, 0, &seed);
        png_spec s = { .w = w, .h = h, .depth = 8, .ctype = 6, .raw = raw, .filter = 5, .idat_max = 1,
                       .empty_idats = 1, .before = "gAMA", .after = "quUx" };
        size_t len;
        unsigned char *png = mk_png(&s, &len);
        vkimg_image im = CHECK_FAST(png, len, "1-byte IDATs + ancillary chunks", NULL);
        vkimg_image_free(&im);
        free(png);
        s.empty_idats = 2; /* the fast path alone: the source rows */
        png = mk_png(&s, &len);
        vkimg_err e;
        CHECK(vki_png_decode(png, len, "e.png", 0, &im, &e) == 0 && im.c == 4 && !memcmp(im.data, raw, sizeof raw),
              "a leading empty IDAT: %s", e.msg);
        vkimg_image_free(&im);
        free(png);
        png_spec s2 = { .w = w, .h = h, .depth = 8, .ctype = 2, .raw = raw, .filter = 4, .plte = pal, .nplte = 16,
                        .idat_max = 50, .before = "tEXt", .after = "tIME" };
        png = mk_png(&s2, &len);
        im = CHECK_FAST(png, len, "RGB with a suggested PLTE", NULL);
        vkimg_image_free(&im);
        free(png);
    }

    /* declined, and vkimg_load_memory gives exactly what stb gives (or its error) */
    {
        const int w = 13, h = 9;
        unsigned char raw[13 * 9 * 8], pal[3 * 16];
        fill(raw, sizeof raw, 0, &seed);
        fill(pal, sizeof pal, 0, &seed);
        size_t len;
        unsigned char *png;
        vkimg_image im;
#define DECLINED(reason, ...)                                       \
    do {                                                            \
        png_spec s_ = { .w = w, .h = h, .raw = raw, __VA_ARGS__ };  \
        png = mk_png(&s_, &len);                                    \
        im = CHECK_FAST(png, len, #__VA_ARGS__, reason);            \
        vkimg_image_free(&im);                                      \
        free(png);                                                  \
    } while (0)
        DECLINED("interlaced", .depth = 8, .ctype = 2, .interlace = 1, .filter = 5);
        DECLINED("interlaced", .depth = 16, .ctype = 6, .interlace = 1, .filter = 5);
        DECLINED("bit depth 1", .depth = 1, .ctype = 0, .filter = 5);
        DECLINED("bit depth 2", .depth = 2, .ctype = 0, .filter = 5);
        DECLINED("bit depth 4", .depth = 4, .ctype = 3, .filter = 5, .plte = pal, .nplte = 16);
        DECLINED("critical chunk 'QUUX'", .depth = 8, .ctype = 2, .filter = 1, .before = "QUUX");
        DECLINED("critical chunk 'CgBI'", .depth = 8, .ctype = 2, .filter = 1, .after = "CgBI");
        DECLINED("more pixel data", .depth = 8, .ctype = 0, .filter = 2, .extra_bytes = 14);
        DECLINED("zlib data libdeflate rejects", .depth = 8, .ctype = 2, .filter = 3, .bad_adler = 1);
        DECLINED("invalid filter type 5 in row 4", .depth = 8, .ctype = 2, .filter = 5, .bad_filter_row = 5);
        DECLINED("unusual tRNS", .depth = 8, .ctype = 6, .filter = 0, .trns = pal, .ntrns = 8);
        DECLINED("unusual tRNS", .depth = 8, .ctype = 0, .filter = 0, .trns = pal, .ntrns = 2, .trns_after_idat = 1);
        DECLINED("IDAT before PLTE", .depth = 8, .ctype = 3, .filter = 0);
        DECLINED("no IEND", .depth = 16, .ctype = 2, .filter = 4, .no_iend = 1);
#undef DECLINED
        /* a palette index past the PLTE: stb would read uninitialized palette entries */
        for (size_t i = 0; i < (size_t)w * h; i++)
            raw[i] &= 3;
        raw[w * h - 1] = 4;
        png_spec s = { .w = w, .h = h, .depth = 8, .ctype = 3, .raw = raw, .filter = 5, .plte = pal, .nplte = 4 };
        png = mk_png(&s, &len);
        vkimg_err e;
        int rc = vki_png_decode(png, len, "pal.png", 0, &im, &e);
        CHECK(rc == VKI_DECLINED && !im.data && strstr(e.msg, "palette index past the 4 entries"), "index past PLTE: %s",
              e.msg);
        free(png);
    }

    /* the encoder's own files (adaptive filters, split IDATs, levels 0..12): the fast
     * path takes them all; across them every filter type occurs */
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
                    CHECK(vki_png_encode_ex(&im, v * 4, v == 2 ? 7 : 1u << 20, &png, &len, &e) == 0, "encode: %s",
                          e.msg);
                    unsigned char *raw = png_parse(png, len, &pw, &ph, &depth, &ctype, filters, 64, &nidat);
                    if (raw)
                        for (int y = 0; y < ph; y++)
                            used |= 1u << filters[y];
                    free(raw);
                    snprintf(what, sizeof what, "encoder %d-bit c=%d variant %d", is16 ? 16 : 8, c, v);
                    vkimg_image back = CHECK_FAST(png, len, what, NULL);
                    CHECK(same_image(&back, &im), "%s: not the encoded image", what);
                    vkimg_image_free(&back);
                    vkimg_image_free(&im);
                    free(png);
                }
        CHECK(used == 0x1f, "the encoder corpus used only filters %#x", used);
    }
    fprintf(stderr, "note: PNG fast path: %d files taken and identical to stb (%d of every colour type/depth/size/filter), "
                    "%d declined as they should\n", g_fast_ok, n_cases, g_fast_declined);
}

/* Truncation at every length and random corruption: the fast path never crashes,
 * leaks or takes a file that stb decodes differently; the loader's errors name the
 * file. (Run under ASan by scripts/setup --asan.) */
static void test_png_fast_damage(void)
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
    int taken = 0, declined = 0, hard = 0;
    for (size_t bi = 0; bi < sizeof bases / sizeof bases[0]; bi++) {
        size_t len;
        unsigned char *png = mk_png(&bases[bi], &len);
        vkimg_err e;
        vkimg_image im, ref;

        /* every prefix: declined (no IEND), nothing allocated; the loader fails naming
         * the file or gives stb's pixels */
        int bad = 0;
        for (size_t cut = 1; cut < len; cut++) {
            unsigned char *b = malloc(cut); /* exact size: ASan sees any overread */
            memcpy(b, png, cut);
            int rc = vki_png_decode(b, cut, "cut.png", 0, &im, &e);
            if (rc != VKI_DECLINED || im.data) {
                if (!bad++)
                    fprintf(stderr, "  base %zu cut %zu: rc %d %s\n", bi, cut, rc, e.msg);
                vkimg_image_free(&im);
            }
            rc = vkimg_load_memory(b, cut, "cut.png", NULL, &im, &e);
            int src = stb_decode(b, cut, &ref);
            if (rc ? (src == 0 || !strstr(e.msg, "cut.png: ") || im.data) : (src != 0 || !same_image(&im, &ref))) {
                if (!bad++)
                    fprintf(stderr, "  base %zu cut %zu: load rc %d (%s), stb %d\n", bi, cut, rc, rc ? e.msg : "", src);
            }
            vkimg_image_free(&im);
            vkimg_image_free(&ref);
            free(b);
        }
        CHECK(bad == 0, "base %zu: %d truncated files handled wrongly", bi, bad);

        /* 1-3 random bytes changed after IHDR, or one of IHDR's depth/type/method
         * bytes: whenever the fast path decodes, stb decodes the same */
        bad = 0;
        for (int it = 0; it < 400; it++) {
            unsigned char *b = malloc(len);
            memcpy(b, png, len);
            int nm = 1 + (int)(t_rand(&seed) % 3);
            for (int m = 0; m < nm; m++) {
                size_t at = it % 10 == 0 ? 24 + t_rand(&seed) % 5 : 33 + t_rand(&seed) % (len - 33);
                b[at] = (unsigned char)(it & 1 ? t_rand(&seed) : b[at] ^ (1u << (t_rand(&seed) % 8)));
            }
            int rc = vki_png_decode(b, len, "bad.png", 1 << 20, &im, &e);
            if (rc == 0) {
                taken++;
                if (stb_decode(b, len, &ref) || !same_image(&im, &ref)) {
                    if (!bad++)
                        fprintf(stderr, "  base %zu mutation %d: taken, but stb differs\n", bi, it);
                }
                vkimg_image_free(&ref);
            } else if (rc == VKI_DECLINED) {
                declined++;
                bad += im.data != NULL;
            } else {
                hard++;
                bad += !strstr(e.msg, "bad.png: ") || im.data != NULL;
            }
            vkimg_image_free(&im);
            free(b);
        }
        CHECK(bad == 0, "base %zu: %d corrupted files handled wrongly", bi, bad);
        free(png);
    }
    fprintf(stderr, "note: corrupted PNGs: %d taken (all identical to stb), %d declined, %d refused\n", taken, declined,
            hard);
    CHECK(taken > 0 && declined > 0, "mutations exercised both outcomes");
}

int main(void)
{
    static void (*const tests[])(void) = { test_png_fast, test_png_fast_damage };
    return io_main("test_png_fast", tests, 2);
}
