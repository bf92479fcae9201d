/* The PNG encoder: its stream checked on its own (CRCs, IHDR, our own inflate and
 * unfilter, big-endian samples, the filter heuristic, levels, split IDATs), and
 * round trips through files of every depth and channel count (alpha, the file
 * mode, overwriting, relative paths, long names). No device. */
#include "io/io_priv.h"
#include "io_util.h"
#include "png_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the stream */

static unsigned sab(int v) /* |signed byte| of a filtered byte */
{
    v &= 0xff;
    return (unsigned)(v < 128 ? v : 256 - v);
}

/* The filter the heuristic must pick for each row of raw (unfiltered, PNG byte order):
 * the minimum sum of absolute signed filtered bytes, ties to the lower number. Returns
 * the number of rows whose chosen filter differs; ORs the filters used into *used. */
static int check_filters(const unsigned char *raw, int w, int h, int bpp, const unsigned char *filters, unsigned *used)
{
    int wrong = 0;
    size_t rb = (size_t)w * bpp;
    for (int y = 0; y < h; y++) {
        const unsigned char *cur = raw + y * rb, *prev = y ? cur - rb : NULL;
        unsigned long s[5] = { 0, 0, 0, 0, 0 };
        for (size_t i = 0; i < rb; i++) {
            int x = cur[i], a = i >= (size_t)bpp ? cur[i - bpp] : 0, b = prev ? prev[i] : 0,
                c = prev && i >= (size_t)bpp ? prev[i - bpp] : 0;
            s[0] += sab(x);
            s[1] += sab(x - a);
            s[2] += sab(x - b);
            s[3] += sab(x - (a + b) / 2);
            s[4] += sab(x - (int)paeth_t(a, b, c));
        }
        int best = 0;
        for (int f = 1; f < 5; f++)
            if (s[f] < s[best])
                best = f;
        wrong += filters[y] != best;
        *used |= 1u << filters[y];
    }
    return wrong;
}

static void test_png_stream(void)
{
    vkimg_err e;
    unsigned char *png = NULL;
    size_t n = 0;
    unsigned char filters[256];
    int w, h, depth, ctype, nidat;
    unsigned used = 0;

    /* U8 and U16, every channel count: the stream decodes (our own inflate + unfilter)
     * to exactly the samples, big-endian for 16 bits */
    for (int wide = 0; wide < 2; wide++) /* 29 and 203 columns: rows shorter and longer than the SIMD blocks */
    for (int is16 = 0; is16 < 2; is16++)
        for (int c = 1; c <= 4; c++) {
            const int W = wide ? 203 : 29;
            vkimg_image im;
            make_image(&im, W, 17, c, is16 ? VKIMG_U16 : VKIMG_U8, 1, 77 + c + 10 * wide);
            int rc = vki_png_encode(&im, -1, &png, &n, &e);
            CHECK(rc == 0, "encode %d-bit c=%d: %s", is16 ? 16 : 8, c, e.msg);
            unsigned char *raw = rc ? NULL : png_parse(png, n, &w, &h, &depth, &ctype, filters, 256, &nidat);
            CHECK(raw != NULL, "parse %d-bit c=%d", is16 ? 16 : 8, c);
            if (raw) {
                static const int ct[5] = { 0, 0, 4, 2, 6 };
                CHECK(w == W && h == 17 && depth == (is16 ? 16 : 8) && ctype == ct[c], "IHDR %dx%d d%d t%d", w, h,
                      depth, ctype);
                int eq = 1;
                size_t ns = (size_t)W * 17 * c;
                for (size_t i = 0; i < ns; i++) {
                    if (is16) {
                        uint16_t v = ((uint16_t *)im.data)[i];
                        eq &= raw[2 * i] == (v >> 8) && raw[2 * i + 1] == (v & 0xff);
                    } else {
                        eq &= raw[i] == ((uint8_t *)im.data)[i];
                    }
                }
                CHECK(eq, "PNG samples differ (%d-bit, c=%d)", is16 ? 16 : 8, c);
                int wrong = check_filters(raw, w, h, c * (is16 ? 2 : 1), filters, &used);
                CHECK(wrong == 0, "%d rows with a filter other than the heuristic's (%d-bit, c=%d)", wrong,
                      is16 ? 16 : 8, c);
                CHECK(nidat == 1, "one IDAT, got %d", nidat);
            }
            free(raw);
            free(png);
            png = NULL;
            vkimg_image_free(&im);
        }

    CHECK((used & (used - 1)) && (used & ~1u), "the test images exercised only filters %#x", used);

    /* the filter heuristic: a horizontal ramp repeated on every row -> row 0 "sub",
     * the others "up" (0 residuals; ties go to the lower filter) */
    vkimg_image ramp;
    vkimg_image_alloc(&ramp, 64, 8, 1, VKIMG_U8, &e);
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 64; x++)
            ((uint8_t *)ramp.data)[y * 64 + x] = (uint8_t)(x * 3);
    CHECK(vki_png_encode(&ramp, 6, &png, &n, &e) == 0, "encode ramp: %s", e.msg);
    unsigned char *raw = png_parse(png, n, &w, &h, &depth, &ctype, filters, 256, &nidat);
    CHECK(raw && !memcmp(raw, ramp.data, 64 * 8), "ramp decodes");
    if (raw) {
        CHECK(filters[0] == 1, "row 0 filter %d, want 1 (sub)", filters[0]);
        int up = 1;
        for (int y = 1; y < 8; y++)
            up &= filters[y] == 2;
        CHECK(up, "rows 1.. filter %d, want 2 (up)", filters[1]);
    }
    free(raw);
    free(png);
    /* a constant zero image: "none" everywhere */
    memset(ramp.data, 0, 64 * 8);
    CHECK(vki_png_encode(&ramp, 6, &png, &n, &e) == 0, "encode zeros: %s", e.msg);
    raw = png_parse(png, n, &w, &h, &depth, &ctype, filters, 256, &nidat);
    CHECK(raw != NULL, "zeros decode");
    if (raw) {
        int none = 1;
        for (int y = 0; y < 8; y++)
            none &= filters[y] == 0;
        CHECK(none, "zero rows must use filter 0");
    }
    free(raw);
    free(png);
    /* levels 0 and 12 are valid and decode the same; 0 stores, so it is larger */
    vkimg_image im;
    make_image(&im, 50, 40, 3, VKIMG_U8, 0, 5);
    unsigned char *p0 = NULL, *p12 = NULL;
    size_t n0 = 0, n12 = 0;
    CHECK(vki_png_encode(&im, 0, &p0, &n0, &e) == 0, "level 0: %s", e.msg);
    CHECK(vki_png_encode(&im, 12, &p12, &n12, &e) == 0, "level 12: %s", e.msg);
    CHECK(n0 > 50 * 40 * 3 && n12 < n0, "level 0 stores (%zu), 12 compresses (%zu)", n0, n12);
    vkimg_image a = { 0 }, b = { 0 };
    CHECK(p0 && vkimg_load_memory(p0, n0, "l0", NULL, &a, &e) == 0 && same_image(&a, &im), "level 0 decodes");
    CHECK(p12 && vkimg_load_memory(p12, n12, "l12", NULL, &b, &e) == 0 && same_image(&b, &im), "level 12 decodes");
    vkimg_image_free(&a);
    vkimg_image_free(&b);
    free(p0);
    free(p12);

    /* IDAT split into many chunks still decodes (stb and our parser) */
    CHECK(vki_png_encode_ex(&im, 1, 97, 0, &png, &n, &e) == 0, "split: %s", e.msg);
    raw = png_parse(png, n, &w, &h, &depth, &ctype, filters, 256, &nidat);
    CHECK(raw && !memcmp(raw, im.data, 50 * 40 * 3), "split stream decodes");
    CHECK(nidat > 5, "several IDAT chunks, got %d", nidat);
    CHECK(vkimg_load_memory(png, n, "split", NULL, &a, &e) == 0 && same_image(&a, &im), "stb reads split IDATs: %s",
          e.msg);
    vkimg_image_free(&a);
    free(raw);
    free(png);

    /* bad arguments */
    png = (unsigned char *)&n;
    CHECK(vki_png_encode(&im, 13, &png, &n, &e) == VKIMG_E_USAGE && png == NULL, "level 13");
    CHECK(vki_png_encode(&im, -2, &png, &n, &e) == VKIMG_E_USAGE, "level -2");
    vkimg_image f;
    make_image(&f, 4, 4, 3, VKIMG_F32, 0, 1);
    CHECK(vki_png_encode(&f, 6, &png, &n, &e) == VKIMG_E_RUNTIME && strstr(e.msg, "f32"), "f32 png: %s", e.msg);
    vkimg_image_free(&f);
    vkimg_image_free(&im);
    vkimg_image_free(&ramp);
}

/* ---------------------------------------------------------------- round trips */

static void test_roundtrip_png(void)
{
    vkimg_err e;
    for (int is16 = 0; is16 < 2; is16++)
        for (int c = 1; c <= 4; c++) {
            vkimg_fmt fmt = is16 ? VKIMG_U16 : VKIMG_U8;
            vkimg_image im, back;
            make_image(&im, 33 + c, 21, c, fmt, 1, 1000 + c + 10 * is16);
            char name[64];
            snprintf(name, sizeof name, "rt%d_%d.png", is16 ? 16 : 8, c);
            const char *path = P(name);
            vkimg_save_opts so = { .quality = 0, .png_level = c - 1 + 2 * is16 }; /* assorted levels */
            CHECK(vkimg_save(path, &im, &so, &e) == 0, "save %s: %s", name, e.msg);
            CHECK(vkimg_load(path, NULL, &back, &e) == 0, "load %s: %s", name, e.msg);
            CHECK(back.fmt == fmt, "%s: loaded as %s", name, vkimg_fmt_name(back.fmt));
            CHECK(back.c == c, "%s: %d channels back", name, back.c);
            CHECK(same_image(&im, &back), "%s: round trip not exact", name);
            vkimg_image_free(&im);
            vkimg_image_free(&back);
        }

    /* alpha kept, including fully transparent pixels with colour under them */
    vkimg_image im, back;
    vkimg_image_alloc(&im, 4, 2, 4, VKIMG_U8, &e);
    static const uint8_t px[32] = { 255, 0, 0, 0,   0, 255, 0, 1,   0, 0, 255, 128, 9, 8, 7, 255,
                                    1,   2, 3, 0,   200, 100, 50, 2, 4, 5, 6, 254,  0, 0, 0, 0 };
    memcpy(im.data, px, sizeof px);
    CHECK(vkimg_save(P("alpha.png"), &im, NULL, &e) == 0, "save alpha: %s", e.msg);
    CHECK(vkimg_load(P("alpha.png"), NULL, &back, &e) == 0, "load alpha: %s", e.msg);
    CHECK(back.c == 4 && same_image(&im, &back), "alpha lost");
    vkimg_image_free(&back);
    vkimg_image_free(&im);

    /* the written file's mode is 0666 & ~umask (mkstemp makes 0600) */
    mode_t um = umask(022);
    umask(um);
    struct stat st;
    CHECK(stat(P("alpha.png"), &st) == 0 && (st.st_mode & 0777) == (0666 & ~um), "mode %o, umask %o",
          (unsigned)(st.st_mode & 0777), (unsigned)um);
    CHECK(count_temps(g_dir) == 0, "temporaries left after successful saves");

    /* overwriting an existing file; a relative path (temp in the working directory);
     * a name long enough that the temporary name must be shortened */
    make_image(&im, 8, 8, 3, VKIMG_U8, 1, 3);
    CHECK(vkimg_save(P("alpha.png"), &im, NULL, &e) == 0, "overwrite: %s", e.msg);
    CHECK(vkimg_load(P("alpha.png"), NULL, &back, &e) == 0 && same_image(&im, &back), "overwritten content");
    vkimg_image_free(&back);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) && chdir(g_dir) == 0) {
        CHECK(vkimg_save("rel.png", &im, NULL, &e) == 0, "relative save: %s", e.msg);
        CHECK(vkimg_check_output("rel2.png", &e) == 0, "relative check_output: %s", e.msg);
        CHECK(chdir(cwd) == 0, "chdir back");
        CHECK(exists(P("rel.png")) && count_temps(g_dir) == 0, "relative save result");
    }
    char longname[300];
    memset(longname, 'n', 250);
    strcpy(longname + 250, ".png");
    CHECK(vkimg_save(P(longname), &im, NULL, &e) == 0, "long name: %s", e.msg);
    CHECK(exists(P(longname)) && count_temps(g_dir) == 0, "long name result");
    vkimg_image_free(&im);
}

/* ---------------------------------------------------------------- palette */

/* VKI_PNG_PALETTE: 8-bit RGB and RGBA images of 1, 2, 200 and 256 colours (gray
 * opaque ones, which take the encoder's table, and others, which take its hash;
 * alpha from 0 to 255) become palette images (IHDR colour type 3, PLTE, tRNS for
 * RGBA, one index a pixel, rows unfiltered) that read back as the same pixels and
 * channels; 257 colours, 16-bit and gray images are written as without the flag. */
static void test_palette(void)
{
    static const struct {
        int w, h;
    } sizes[] = { { 1, 1 }, { 1, 17 }, { 13, 1 }, { 37, 29 }, { 300, 7 } };
    static const int ncolours[] = { 1, 2, 200, 256, 257 };
    vkimg_err e;
    int npal_files = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int c = 3; c <= 4; c++)
            for (size_t ki = 0; ki < sizeof ncolours / sizeof ncolours[0]; ki++) {
                int w = sizes[si].w, h = sizes[si].h, k = ncolours[ki];
                if (k > w * h)
                    continue;
                vkimg_image im;
                CHECK(vkimg_image_alloc(&im, w, h, c, VKIMG_U8, &e) == 0, "alloc: %s", e.msg);
                unsigned char *px = im.data;
                /* pixel i: colour (i * 7919) % k, so every colour appears (k <= w h),
                 * scattered; colour j: even j gray opaque (j / 2), odd j coloured
                 * with alpha j % 256 */
                for (int i = 0; i < w * h; i++) {
                    int j = i < k ? i : (int)(((long)i * 7919) % k);
                    unsigned char *q = px + (size_t)i * c;
                    if (j % 2 == 0) {
                        q[0] = q[1] = q[2] = (unsigned char)(j / 2);
                        if (c == 4)
                            q[3] = 255;
                    } else {
                        q[0] = (unsigned char)(255 - j / 2);
                        q[1] = (unsigned char)(j * 37);
                        q[2] = (unsigned char)(j / 2);
                        if (c == 4)
                            q[3] = (unsigned char)(j % 256);
                    }
                }
                unsigned char *png = NULL;
                size_t n = 0;
                CHECK(vki_png_encode_ex(&im, 6, 0, VKI_PNG_PALETTE, &png, &n, &e) == 0, "encode: %s", e.msg);
                int pw, ph, depth, ctype, nidat;
                unsigned char filters[64];
                unsigned char *raw = png_parse(png, n, &pw, &ph, &depth, &ctype, filters, 64, &nidat);
                CHECK(raw != NULL, "%dx%d c=%d %d colours: the stream parses", w, h, c, k);
                int want = k <= 256 ? 3 : c == 4 ? 6 : 2;
                CHECK(ctype == want && depth == 8, "%dx%d c=%d %d colours: colour type %d depth %d, want %d and 8", w,
                      h, c, k, ctype, depth, want);
                if (raw && ctype == 3) {
                    npal_files++;
                    int nonzero = 0;
                    for (int y = 0; y < ph && y < 64; y++)
                        nonzero += filters[y] != 0;
                    CHECK(nonzero == 0, "%dx%d c=%d: palette rows unfiltered", w, h, c);
                    /* the palette: k entries, tRNS for RGBA only */
                    bool plte = false, trns = false;
                    for (size_t at = 8; at + 12 <= n;) {
                        uint32_t len = be32(png + at);
                        if (!memcmp(png + at + 4, "PLTE", 4))
                            plte = len == 3u * (uint32_t)k;
                        if (!memcmp(png + at + 4, "tRNS", 4))
                            trns = len == (uint32_t)k;
                        at += 12 + len;
                    }
                    CHECK(plte, "%dx%d c=%d: PLTE of %d entries", w, h, c, k);
                    CHECK(trns == (c == 4), "%dx%d c=%d: tRNS %s", w, h, c, c == 4 ? "with every alpha" : "absent");
                }
                vkimg_image back = { 0 };
                CHECK(vkimg_load_memory(png, n, "palette", NULL, &back, &e) == 0, "load: %s", e.msg);
                CHECK(same_image(&back, &im), "%dx%d c=%d %d colours: the same pixels and channels back (c=%d)", w, h,
                      c, k, back.c);
                vkimg_image_free(&back);
                free(raw);
                free(png);
                vkimg_image_free(&im);
            }
    CHECK(npal_files >= 20, "only %d palette files made", npal_files);
    /* 16-bit and gray: as without the flag (the same bytes) */
    for (int c = 1; c <= 4; c++) {
        vkimg_image im;
        make_image(&im, 31, 9, c, c == 3 ? VKIMG_U16 : VKIMG_U8, 0, 3);
        unsigned char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        CHECK(vki_png_encode_ex(&im, 6, 0, VKI_PNG_PALETTE, &a, &na, &e) == 0 &&
                  vki_png_encode_ex(&im, 6, 0, 0, &b, &nb, &e) == 0,
              "encode: %s", e.msg);
        bool same = a && b && na == nb && !memcmp(a, b, na);
        /* make_image's 8-bit RGBA of 279 pixels may have <= 256 colours: then a palette */
        CHECK(same || c == 4, "c=%d %s: the flag changed the file", c, c == 3 ? "u16" : "u8");
        free(a);
        free(b);
        vkimg_image_free(&im);
    }
}

/* vkimg_save_opts.palette: a 1-channel 8-bit image of indices into 256 colours
 * (compare's difference images). PNG: a palette image of the entries used, in
 * index order (PLTE and tRNS of that many, rows unfiltered), that reads back as
 * the RGBA colours; BMP and TGA: the RGBA colours written directly; the same
 * pixels either way. 1x1, 1xN, Nx1 and larger, 1 to 256 entries used. */
static void test_indexed(void)
{
    static const struct {
        int w, h, used;
    } cs[] = { { 1, 1, 1 }, { 1, 17, 3 }, { 13, 1, 13 }, { 37, 29, 100 }, { 300, 7, 256 }, { 64, 64, 2 } };
    uint32_t pal[256];
    for (int k = 0; k < 256; k++) /* every channel and alpha differ between entries */
        pal[k] = (uint32_t)(k * 7 & 255) | (uint32_t)(255 - k) << 8 | (uint32_t)(k * 13 & 255) << 16 |
                 (uint32_t)((k * 3 + 40) & 255) << 24;
    char dir[] = "/tmp/vkimg-idx-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    vkimg_err e;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const int w = cs[i].w, h = cs[i].h;
        vkimg_image idx, want;
        CHECK(vkimg_image_alloc(&idx, w, h, 1, VKIMG_U8, &e) == 0 && vkimg_image_alloc(&want, w, h, 4, VKIMG_U8, &e) == 0,
              "alloc: %s", e.msg);
        unsigned char *ix = idx.data, *q = want.data;
        /* the used entries spread over 0..255: index (j * 251 + 5) % 256 for j < used */
        for (int p = 0; p < w * h; p++) {
            int j = p < cs[i].used ? p : (int)(((long)p * 7919) % cs[i].used);
            ix[p] = (unsigned char)((j * 251 + 5) % 256);
            for (int k = 0; k < 4; k++)
                q[4 * p + k] = (unsigned char)(pal[ix[p]] >> (8 * k));
        }
        unsigned char *png = NULL;
        size_t n = 0;
        CHECK(vki_png_encode_indexed(&idx, pal, 2, 0, &png, &n, &e) == 0, "%dx%d: encode: %s", w, h, e.msg);
        int pw, ph, depth, ctype, nidat;
        unsigned char filters[64];
        unsigned char *raw = png ? png_parse(png, n, &pw, &ph, &depth, &ctype, filters, 64, &nidat) : NULL;
        CHECK(raw && ctype == 3 && depth == 8 && pw == w && ph == h, "%dx%d: a palette PNG", w, h);
        int nonzero = 0;
        for (int y = 0; raw && y < h && y < 64; y++)
            nonzero += filters[y] != 0;
        CHECK(nonzero == 0, "%dx%d: rows unfiltered", w, h);
        bool plte = false, trns = false;
        for (size_t at = 8; png && at + 12 <= n;) {
            uint32_t len = be32(png + at);
            if (!memcmp(png + at + 4, "PLTE", 4))
                plte = len == 3u * (uint32_t)cs[i].used;
            if (!memcmp(png + at + 4, "tRNS", 4))
                trns = len == (uint32_t)cs[i].used;
            at += 12 + len;
        }
        CHECK(plte && trns, "%dx%d: PLTE and tRNS of the %d entries used", w, h, cs[i].used);
        vkimg_image back = { 0 };
        CHECK(png && vkimg_load_memory(png, n, "indexed", NULL, &back, &e) == 0, "load: %s", e.msg);
        CHECK(same_image(&back, &want), "%dx%d: the colours back as RGBA (c=%d)", w, h, back.c);
        vkimg_image_free(&back);
        /* through vkimg_save: PNG and the formats that take the colours */
        static const char *const exts[] = { "png", "bmp", "tga" };
        for (size_t x = 0; x < 3; x++) {
            char path[128];
            snprintf(path, sizeof path, "%s/i.%s", dir, exts[x]);
            vkimg_save_opts so = { .png_level = 2, .palette = pal };
            CHECK(vkimg_save(path, &idx, &so, &e) == 0, "%dx%d: save %s: %s", w, h, exts[x], e.msg);
            vkimg_image f = { 0 };
            CHECK(vkimg_load(path, NULL, &f, &e) == 0 && same_image(&f, &want), "%dx%d: %s: the RGBA colours back", w,
                  h, exts[x]);
            vkimg_image_free(&f);
            remove(path);
        }
        /* the indices in the first of 2, 3 or 4 channels (the others anything): the same file */
        for (int c = 2; c <= 4; c++) {
            vkimg_image wide;
            make_image(&wide, w, h, c, VKIMG_U8, 1, (unsigned long long)c);
            for (int p = 0; p < w * h; p++)
                ((unsigned char *)wide.data)[(size_t)p * c] = ix[p];
            unsigned char *png2 = NULL;
            size_t n2 = 0;
            CHECK(vki_png_encode_indexed(&wide, pal, 2, 0, &png2, &n2, &e) == 0 && png && n2 == n &&
                      !memcmp(png, png2, n),
                  "%dx%d: indices in the first of %d channels: another file", w, h, c);
            free(png2);
            vkimg_image_free(&wide);
        }
        free(raw);
        free(png);
        vkimg_image_free(&idx);
        vkimg_image_free(&want);
    }
    /* not indices: refused */
    vkimg_image im;
    make_image(&im, 5, 5, 3, VKIMG_U16, 0, 1);
    unsigned char *png = NULL;
    size_t n = 0;
    CHECK(vki_png_encode_indexed(&im, pal, 2, 0, &png, &n, &e) != 0 && !png, "16-bit refused");
    CHECK(vki_png_encode_indexed(&im, NULL, 2, 0, &png, &n, &e) != 0 && !png, "no palette refused");
    vkimg_image_free(&im);
    remove(dir);
}

/* ---------------------------------------------------------------- bands */

/* vki_deflate_unfinal on libdeflate's streams of every level and kind of data
 * (stored, fixed and dynamic blocks): the pieces joined decompress to the data
 * joined; streams cut short or changed are refused and left as they were. */
static void test_deflate_join(void)
{
    enum { N = 3, LEN = 70000 };
    unsigned char *data = malloc((size_t)N * LEN), *z = malloc((size_t)N * (LEN + 1000)),
                  *back = malloc((size_t)N * LEN), *piece = malloc(LEN + 1000);
    unsigned long long r = 12345;
    for (int kind = 0; kind < 4; kind++)
        for (int level = 0; level <= 12; level++) {
            const size_t len[N] = { kind == 3 ? 1 : 5000 + 777 * (size_t)kind, LEN, 300 };
            size_t at = 0, zn = 0;
            for (int k = 0; k < N; k++) {
                unsigned char *d = data + at;
                for (size_t i = 0; i < len[k]; i++) {
                    r = r * 6364136223846793005ull + 1442695040888963407ull;
                    /* random bytes (stored blocks), text-like, runs, a single byte */
                    d[i] = kind == 0 ? (unsigned char)(r >> 56)
                         : kind == 1 ? (unsigned char)('a' + (r >> 60))
                                     : (unsigned char)(i / 97 % 5 + (kind == 3 ? (r >> 63) : 0));
                }
                struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
                size_t n = libdeflate_deflate_compress(c, d, len[k], piece, LEN + 995);
                libdeflate_free_compressor(c);
                CHECK(n > 0, "compress kind %d level %d", kind, level);
                size_t nn = n;
                if (k + 1 < N) {
                    unsigned char keep[16];
                    /* cut short: refused, unchanged */
                    memcpy(keep, piece, sizeof keep);
                    size_t dummy = 0;
                    CHECK(n < 2 || !vki_deflate_unfinal(piece, n - 1, &dummy), "a stream cut short was joined (kind %d level %d)", kind, level);
                    CHECK(!memcmp(keep, piece, sizeof keep), "a refused stream was changed");
                    CHECK(vki_deflate_unfinal(piece, n, &nn), "walk kind %d level %d (%zu bytes)", kind, level, n);
                    CHECK(nn >= n + 4 && nn <= n + 5, "joined size %zu from %zu", nn, n);
                }
                memcpy(z + zn, piece, nn);
                zn += nn;
                at += len[k];
            }
            struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
            size_t got = 0;
            int ok = libdeflate_deflate_decompress(d, z, zn, back, (size_t)N * LEN, &got) == LIBDEFLATE_SUCCESS;
            libdeflate_free_decompressor(d);
            CHECK(ok && got == at && !memcmp(back, data, at), "joined streams decode (kind %d level %d: %zu of %zu)",
                  kind, level, got, at);
        }
    /* not deflate at all */
    unsigned char junk[64];
    memset(junk, 0xff, sizeof junk);
    size_t dummy = 0;
    CHECK(!vki_deflate_unfinal(junk, sizeof junk, &dummy), "0xff bytes taken for a stream");
    free(data);
    free(z);
    free(back);
    free(piece);
}

/* Images in bands (the least band made small): the same file whatever the
 * threads, the samples and the heuristic's filters as in one stream. */
static void test_bands(void)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 40 }, { 40, 1 }, { 37, 211 }, { 203, 64 }, { 5, 300 } };
    const size_t keep = vki_png_band_min;
    vkimg_err e;
    unsigned char filters[512];
    int nbanded = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int is16 = 0; is16 < 2; is16++)
            for (int c = 1; c <= 4; c++)
                for (int li = 0; li < 3; li++) {
                    static const int levels[3] = { 1, 3, 12 };
                    const int W = sizes[si][0], H = sizes[si][1], level = levels[li];
                    vkimg_image im;
                    make_image(&im, W, H, c, is16 ? VKIMG_U16 : VKIMG_U8, (int)(si + c) % 2, 900 + si * 10 + (size_t)c);
                    unsigned char *one = NULL, *png[3] = { NULL, NULL, NULL };
                    size_t n1 = 0, n[3] = { 0, 0, 0 };
                    vki_png_band_min = (size_t)1 << 30;
                    CHECK(vki_png_encode_ex(&im, level, 0, 0, &one, &n1, &e) == 0, "one stream: %s", e.msg);
                    vki_png_band_min = 97 + (size_t)si * 31;
                    for (int t = 0; t < 3; t++)
                        CHECK(vki_png_encode_ex(&im, level, t == 2 ? 40 : 0, VKI_PNG_THREADS(t + 1), &png[t], &n[t], &e) == 0,
                              "bands, %d threads: %s", t + 1, e.msg);
                    CHECK(n[0] == n[1] && png[0] && png[1] && !memcmp(png[0], png[1], n[0]),
                          "%dx%d c=%d %d-bit level %d: 1 and 2 threads wrote different files", W, H, c, is16 ? 16 : 8, level);
                    nbanded += n[0] != n1 || memcmp(png[0], one, n1);
                    int w1, h1, d1, t1, i1, w2, h2, d2, t2, i2;
                    unsigned char f1[512];
                    unsigned char *r1 = png_parse(one, n1, &w1, &h1, &d1, &t1, f1, 512, &i1);
                    for (int t = 0; t < 3; t += 2) {
                        unsigned char *r2 = png[t] ? png_parse(png[t], n[t], &w2, &h2, &d2, &t2, filters, 512, &i2) : NULL;
                        const size_t bytes = (size_t)W * H * c * (is16 ? 2 : 1);
                        CHECK(r1 && r2 && w2 == W && h2 == H && !memcmp(r1, r2, bytes) && !memcmp(f1, filters, (size_t)H),
                              "%dx%d c=%d %d-bit level %d (%d threads): the bands decode differently", W, H, c,
                              is16 ? 16 : 8, level, t + 1);
                        free(r2);
                    }
                    free(r1);
                    free(one);
                    for (int t = 0; t < 3; t++)
                        free(png[t]);
                    vkimg_image_free(&im);
                }
    vki_png_band_min = keep;
    CHECK(nbanded > 50, "only %d images were written in bands", nbanded);
}

int main(void)
{
    static void (*const tests[])(void) = { test_png_stream, test_roundtrip_png, test_palette, test_indexed,
                                           test_deflate_join, test_bands };
    return io_main("test_png", tests, 6);
}
