/* The decoders (src/io, one per format; no stb_image in the library): for every
 * format, valid files of every supported variant (made here: stb_image_write for
 * PNG/BMP/TGA/HDR, giflib's encoder for GIF, TurboJPEG/libjpeg for JPEG, bytes by
 * hand for PNM/PSD, interlaced and low-bit PNGs, RLE variants) decoded and compared
 * with stb_image's result (compiled into this test: test_decoders_stb.c) and with
 * the source pixels; every truncation of the valid files (every byte offset for
 * small files, a sample for large ones) must give an error, never a crash or an
 * image; crafted hostile files; the loader's refusal of FIFOs, devices, sockets,
 * directories and oversized files. Run under ASan+UBSan by scripts/setup --asan.
 * No device. */
#include "io/io_priv.h"
#include "bbuf.h"
#include "lj_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <gif_lib.h>
#include <jpeglib.h>
#include <libdeflate.h>
#include <stb_image.h>
#include <stb_image_write.h>
#include <turbojpeg.h>

static unsigned long long g_seed = 20240601;
static char g_dir[256];

static unsigned rnd(unsigned n) { return n ? (unsigned)(t_rand(&g_seed) % n) : 0; }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- byte buffers */

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8),
    p[3] = (unsigned char)v;
}
static void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16),
    p[3] = (unsigned char)(v >> 24);
}

static void stbw_cb(void *ctx, void *data, int size) { bb_put(ctx, data, (size_t)size); }

static const char *P(const char *name) /* path in the test directory (rotating buffers) */
{
    static char buf[4][512];
    static int i;
    char *b = buf[i++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", g_dir, name);
    return b;
}

/* ---------------------------------------------------------------- images */

static vkimg_image img_new(int w, int h, int c, vkimg_fmt fmt)
{
    vkimg_image im;
    vkimg_err e;
    if (vkimg_image_alloc(&im, w, h, c, fmt, &e)) {
        fprintf(stderr, "alloc: %s\n", e.msg);
        exit(1);
    }
    return im;
}
static uint8_t *U8(const vkimg_image *im) { return im->data; }
static uint16_t *U16(const vkimg_image *im) { return im->data; }
static float *F32(const vkimg_image *im) { return im->data; }

/* A test image: smooth gradients plus noise in the low bits (seeded), values
 * 0..max; alpha-like channels get a pattern with 0 and max. */
static void fill_image(vkimg_image *im, unsigned max, int noisy)
{
    for (int y = 0; y < im->h; y++)
        for (int x = 0; x < im->w; x++)
            for (int k = 0; k < im->c; k++) {
                double v = 0.5 + 0.45 * sin(0.21 * x * (k + 1) + 0.13 * y) * cos(0.09 * y * (k + 2));
                if (noisy)
                    v += ((double)rnd(1000) / 1000.0 - 0.5) * 0.3;
                if ((im->c == 4 && k == 3) || (im->c == 2 && k == 1))
                    v = ((x + 2 * y) % 5) / 4.0;
                v = v < 0 ? 0 : v > 1 ? 1 : v;
                size_t i = ((size_t)y * im->w + x) * im->c + k;
                unsigned q = (unsigned)lround(v * max);
                if (im->fmt == VKIMG_U16)
                    U16(im)[i] = (uint16_t)q;
                else
                    U8(im)[i] = (uint8_t)q;
            }
}

static int same_image(const vkimg_image *a, const vkimg_image *b)
{
    return a->w == b->w && a->h == b->h && a->c == b->c && a->fmt == b->fmt && a->data && b->data &&
           !memcmp(a->data, b->data, vkimg_image_bytes(a));
}

static void describe(char *buf, size_t n, const vkimg_image *a, const vkimg_image *b)
{
    if (!a->data || !b->data) {
        snprintf(buf, n, "no data");
        return;
    }
    if (a->w != b->w || a->h != b->h || a->c != b->c || a->fmt != b->fmt) {
        snprintf(buf, n, "%dx%dx%d %s vs %dx%dx%d %s", a->w, a->h, a->c, vkimg_fmt_name(a->fmt), b->w, b->h, b->c,
                 vkimg_fmt_name(b->fmt));
        return;
    }
    size_t ns = (size_t)a->w * a->h * a->c;
    for (size_t i = 0; i < ns; i++) {
        double va = a->fmt == VKIMG_U8 ? U8(a)[i] : a->fmt == VKIMG_U16 ? U16(a)[i] : F32(a)[i];
        double vb = b->fmt == VKIMG_U8 ? U8(b)[i] : b->fmt == VKIMG_U16 ? U16(b)[i] : F32(b)[i];
        if (va != vb || (a->fmt == VKIMG_F32 && memcmp(F32(a) + i, F32(b) + i, 4))) {
            snprintf(buf, n, "first difference at pixel (%zu, %zu) channel %zu: %g vs %g", i / a->c % a->w,
                     i / a->c / a->w, i % a->c, va, vb);
            return;
        }
    }
    snprintf(buf, n, "identical");
}

/* stb_image's decode, as the old loader called it: F32 for HDR, U16 for 16-bit
 * files, U8 otherwise, channels as in the file. 0 or -1. */
static int oracle(const unsigned char *p, size_t n, vkimg_image *ref)
{
    memset(ref, 0, sizeof *ref);
    int w, h, c;
    void *d;
    vkimg_fmt fmt;
    if (stbi_is_hdr_from_memory(p, (int)n)) {
        d = stbi_loadf_from_memory(p, (int)n, &w, &h, &c, 0);
        fmt = VKIMG_F32;
    } else if (stbi_is_16_bit_from_memory(p, (int)n) || (n >= 24 && !memcmp(p, "8BPS", 4) && p[22] == 0 && p[23] == 16)) {
        /* stb's own 16-bit test misses PSDs (stbi__psd_is16 skips the size with
         * STBI_NOTUSED, a sizeof that reads nothing): stbi_load_16 decodes them */
        d = stbi_load_16_from_memory(p, (int)n, &w, &h, &c, 0);
        fmt = VKIMG_U16;
    } else {
        d = stbi_load_from_memory(p, (int)n, &w, &h, &c, 0);
        fmt = VKIMG_U8;
    }
    if (!d)
        return -1;
    *ref = (vkimg_image){ .w = w, .h = h, .c = c, .fmt = fmt, .data = d };
    return 0;
}

/* ---------------------------------------------------------------- checks */

static int g_valid, g_oracle, g_cut_files, g_cuts, g_hostile;

/* The valid files whose truncations were tried: test_mutations damages them. */
typedef struct base_file {
    unsigned char *p;
    size_t n;
    char what[160];
} base_file;
static base_file g_bases[256];
static int g_nbases;

/* f must decode; the result must equal want (if not NULL) and, with use_oracle,
 * stb_image's decode. Returns the decode (free it) when keep, else frees it. */
static vkimg_image check_ok_(int line, const char *what, const unsigned char *f, size_t n, const vkimg_image *want,
                             int use_oracle, int keep)
{
    vkimg_err e;
    vkimg_image im, ref;
    char d[256];
    unsigned char *copy = malloc(n); /* exact size: ASan sees any overread */
    memcpy(copy, f, n);
    int rc = vkimg_load_memory(copy, n, "valid.img", NULL, &im, &e);
    CHECK(rc == 0, "line %d %s: rc %d: %s", line, what, rc, e.msg);
    g_valid++;
    if (!rc && want) {
        describe(d, sizeof d, &im, want);
        CHECK(same_image(&im, want), "line %d %s: not the source pixels: %s", line, what, d);
    }
    if (use_oracle) {
        int src = oracle(copy, n, &ref);
        CHECK(src == 0, "line %d %s: stb_image fails: %s", line, what, stbi_failure_reason());
        if (!rc && !src && n >= 4 && !memcmp(copy, "GIF8", 4) && im.c == 3 && ref.c == 4) {
            /* an opaque GIF: RGB here, stb_image's RGBA with every alpha 255 */
            unsigned char *p = ref.data;
            size_t np = (size_t)ref.w * (size_t)ref.h, opaque = 0;
            for (size_t i = 0; i < np; i++) {
                opaque += p[4 * i + 3] == 255;
                memmove(p + 3 * i, p + 4 * i, 3);
            }
            CHECK(opaque == np, "line %d %s: RGB, but stb_image has %zu of %zu pixels not opaque", line, what,
                  np - opaque, np);
            ref.c = 3;
        }
        if (!rc && !src) {
            describe(d, sizeof d, &im, &ref);
            CHECK(same_image(&im, &ref), "line %d %s: not stb_image's result: %s", line, what, d);
            g_oracle++;
        }
        vkimg_image_free(&ref);
    }
    free(copy);
    if (!keep)
        vkimg_image_free(&im);
    return im;
}
#define CHECK_OK(what, f, n, want, use_oracle) check_ok_(__LINE__, what, f, n, want, use_oracle, 0)
#define DECODE_OK(what, f, n, want, use_oracle) check_ok_(__LINE__, what, f, n, want, use_oracle, 1)

/* f must fail with a one-line VKIMG_E_RUNTIME error naming the file and holding
 * want (if not NULL), and leave no image. */
static void check_bad_(int line, const char *what, const unsigned char *f, size_t n, const char *want)
{
    vkimg_err e;
    vkimg_image im;
    unsigned char *copy = malloc(n ? n : 1);
    memcpy(copy, f, n);
    memset(&im, 0x5a, sizeof im);
    int rc = vkimg_load_memory(copy, n, "bad.img", NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && !im.data && !strncmp(e.msg, "bad.img: ", 9) && !strchr(e.msg, '\n') &&
              (!want || strstr(e.msg, want)),
          "line %d %s: rc %d, message '%s'%s%s", line, what, rc, rc ? e.msg : "", want ? ", want " : "",
          want ? want : "");
    if (!rc)
        vkimg_image_free(&im);
    g_hostile++;
    free(copy);
}
#define CHECK_BAD(what, f, n, want) check_bad_(__LINE__, what, f, n, want)

/* Every truncation of f (every byte offset from 0 up to n - tail - 1; for files over
 * 6000 bytes, all of the first 2048, 2048 spread over the rest and the last 512)
 * must fail: an error naming the file, no image. tail: bytes at the end whose loss
 * does not damage the image (trailing whitespace of an ASCII PNM). */
static void check_cuts_(int line, const char *what, const unsigned char *f, size_t n, size_t tail)
{
    int bad = 0;
    size_t tried = 0, end = n - tail;
    size_t step = end > 6000 ? (end - 2560) / 2048 + 1 : 1;
    for (size_t cut = 0; cut < end;) {
        vkimg_err e;
        vkimg_image im;
        unsigned char *copy = malloc(cut ? cut : 1);
        memcpy(copy, f, cut);
        int rc = vkimg_load_memory(copy, cut, "cut.img", NULL, &im, &e);
        if (rc != VKIMG_E_RUNTIME || im.data || strncmp(e.msg, "cut.img: ", 9) || strchr(e.msg, '\n')) {
            if (!bad)
                fprintf(stderr, "  line %d %s: cut at %zu of %zu: rc %d %s\n", line, what, cut, n, rc,
                        rc ? e.msg : "(decoded)");
            bad++;
        }
        if (!rc)
            vkimg_image_free(&im);
        free(copy);
        tried++;
        cut += (cut < 2048 || cut + 512 >= end) ? 1 : step;
    }
    CHECK(bad == 0, "line %d %s: %d of %zu truncations did not fail", line, what, bad, tried);
    if (g_nbases < (int)(sizeof g_bases / sizeof g_bases[0])) {
        base_file *bf = &g_bases[g_nbases++];
        bf->p = malloc(n);
        memcpy(bf->p, f, n);
        bf->n = n;
        snprintf(bf->what, sizeof bf->what, "%s", what);
    }
    g_cut_files++;
    g_cuts += (int)tried;
}
#define CHECK_CUTS(what, f, n, tail) check_cuts_(__LINE__, what, f, n, tail)

/* ================================================================ PNG */

static uint32_t crc_chunk(const unsigned char *type_and_data, size_t n) { return libdeflate_crc32(0, type_and_data, n); }

static void bb_chunk(bbuf *b, const char *type, const void *d, size_t n, int bad_crc)
{
    size_t at = b->n;
    bb_be32(b, (uint32_t)n);
    bb_put(b, type, 4);
    bb_put(b, d, n);
    bb_be32(b, crc_chunk(b->p + at + 4, 4 + n) ^ (bad_crc ? 0x01020304u : 0));
}

/* A PNG made by hand from samples (one uint16 per sample, palette indices for
 * colour type 3), with optional defects. */
typedef struct pspec {
    int w, h, depth, ctype, interlace;
    const uint16_t *s;
    const unsigned char *plte;
    int nplte;
    const unsigned char *trns;
    int ntrns;
    int fseed;           /* row k (over all passes) gets filter (k + fseed) % 5 */
    size_t idat_max;     /* IDATs of at most this size (0: one) */
    int bad_filter_row;  /* > 0: that row (1-based) gets filter type 5 */
    int extra_bytes;     /* zeros appended to the uncompressed data */
    int short_bytes;     /* bytes dropped from the end of the uncompressed data */
    int zcut;            /* bytes cut from the end of the zlib stream */
    const char *bad_crc; /* the chunk type whose CRC is wrong */
    const char *before;  /* a chunk (5 bytes of data) after IHDR */
    const char *after;   /* a chunk after the last IDAT */
    int no_iend, trns_after_idat, plte_after_idat, two_plte, no_idat, two_ihdr;
} pspec;

static const int png_ch[7] = { 1, 0, 3, 1, 2, 0, 4 };
static const int a7_xo[7] = { 0, 4, 0, 2, 0, 1, 0 }, a7_yo[7] = { 0, 0, 4, 0, 2, 0, 1 };
static const int a7_xs[7] = { 8, 8, 4, 4, 2, 2, 1 }, a7_ys[7] = { 8, 8, 8, 4, 4, 2, 2 };

static unsigned paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return (unsigned)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

/* Packs and filters the rows of a (sub)image of pw x ph pixels whose pixel (x, y)
 * is sample block s[(y0 + y * sy) * w + x0 + x * sx]. */
static void png_rows(bbuf *z, const pspec *s, int x0, int y0, int sx, int sy, int pw, int ph, int *k)
{
    const int c = png_ch[s->ctype], bits = c * s->depth;
    const size_t rb = ((size_t)pw * bits + 7) / 8, bpp = bits >= 8 ? (size_t)bits / 8 : 1;
    unsigned char *prev = calloc(1, rb + 1), *cur = calloc(1, rb + 1), *line = malloc(rb + 1);
    for (int y = 0; y < ph; y++, ++*k) {
        memset(cur, 0, rb);
        for (int x = 0; x < pw; x++)
            for (int ch = 0; ch < c; ch++) {
                unsigned v = s->s[((size_t)(y0 + y * sy) * s->w + (size_t)(x0 + x * sx)) * c + ch];
                if (s->depth == 16) {
                    cur[(size_t)(x * c + ch) * 2] = (unsigned char)(v >> 8);
                    cur[(size_t)(x * c + ch) * 2 + 1] = (unsigned char)v;
                } else if (s->depth == 8) {
                    cur[(size_t)x * c + ch] = (unsigned char)v;
                } else {
                    size_t bit = (size_t)(x * c + ch) * s->depth;
                    cur[bit / 8] |= (unsigned char)(v << (8 - s->depth - bit % 8));
                }
            }
        int f = (*k + s->fseed) % 5;
        if (s->bad_filter_row == *k + 1)
            f = 5;
        line[0] = (unsigned char)f;
        for (size_t i = 0; i < rb; i++) {
            int a = i >= bpp ? cur[i - bpp] : 0, b = y ? prev[i] : 0, cc = (y && i >= bpp) ? prev[i - bpp] : 0, p;
            switch (f) {
            case 1: p = a; break;
            case 2: p = b; break;
            case 3: p = (a + b) / 2; break;
            case 4: p = (int)paeth(a, b, cc); break;
            default: p = 0; break;
            }
            line[1 + i] = (unsigned char)(cur[i] - p);
        }
        bb_put(z, line, rb + 1);
        unsigned char *t = prev;
        prev = cur;
        cur = t;
    }
    free(prev);
    free(cur);
    free(line);
}

static unsigned char *mk_png(const pspec *s, size_t *len)
{
    bbuf z = { 0 }, out = { 0 };
    int k = 0;
    if (!s->interlace) {
        png_rows(&z, s, 0, 0, 1, 1, s->w, s->h, &k);
    } else {
        for (int p = 0; p < 7; p++) {
            int pw = s->w > a7_xo[p] ? (s->w - a7_xo[p] + a7_xs[p] - 1) / a7_xs[p] : 0;
            int ph = s->h > a7_yo[p] ? (s->h - a7_yo[p] + a7_ys[p] - 1) / a7_ys[p] : 0;
            if (pw && ph)
                png_rows(&z, s, a7_xo[p], a7_yo[p], a7_xs[p], a7_ys[p], pw, ph, &k);
        }
    }
    for (int i = 0; i < s->extra_bytes; i++)
        bb_u8(&z, 0);
    if (s->short_bytes)
        z.n -= (size_t)s->short_bytes;
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
    size_t cap = libdeflate_zlib_compress_bound(c, z.n);
    unsigned char *zd = malloc(cap);
    size_t zn = libdeflate_zlib_compress(c, z.p, z.n, zd, cap);
    libdeflate_free_compressor(c);
    zn -= (size_t)s->zcut;

    bb_put(&out, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ih[13];
    put_be32(ih, (uint32_t)s->w);
    put_be32(ih + 4, (uint32_t)s->h);
    ih[8] = (unsigned char)s->depth;
    ih[9] = (unsigned char)s->ctype;
    ih[10] = ih[11] = 0;
    ih[12] = (unsigned char)s->interlace;
#define BAD(t) (s->bad_crc && !strcmp(s->bad_crc, t))
    bb_chunk(&out, "IHDR", ih, 13, BAD("IHDR"));
    if (s->two_ihdr)
        bb_chunk(&out, "IHDR", ih, 13, 0);
    if (s->before)
        bb_chunk(&out, s->before, "hello", 5, BAD(s->before));
    if (s->plte && !s->plte_after_idat)
        bb_chunk(&out, "PLTE", s->plte, (size_t)s->nplte * 3, BAD("PLTE"));
    if (s->two_plte)
        bb_chunk(&out, "PLTE", s->plte, (size_t)s->nplte * 3, 0);
    if (s->trns && !s->trns_after_idat)
        bb_chunk(&out, "tRNS", s->trns, (size_t)s->ntrns, BAD("tRNS"));
    size_t step = s->idat_max ? s->idat_max : zn;
    for (size_t off = 0; off < zn && !s->no_idat; off += step)
        bb_chunk(&out, "IDAT", zd + off, zn - off < step ? zn - off : step, BAD("IDAT"));
    if (s->plte && s->plte_after_idat)
        bb_chunk(&out, "PLTE", s->plte, (size_t)s->nplte * 3, 0);
    if (s->trns && s->trns_after_idat)
        bb_chunk(&out, "tRNS", s->trns, (size_t)s->ntrns, 0);
    if (s->after)
        bb_chunk(&out, s->after, "world", 5, BAD(s->after));
    if (!s->no_iend)
        bb_chunk(&out, "IEND", "", 0, BAD("IEND"));
#undef BAD
    free(zd);
    free(z.p);
    *len = out.n;
    return out.p;
}

/* What a hand-made PNG must decode to (stb_image's conventions). */
static vkimg_image png_expect(const pspec *s)
{
    static const unsigned scale[9] = { 0, 255, 85, 0, 17, 0, 0, 0, 1 };
    const int c = png_ch[s->ctype], trns = s->trns != NULL;
    const int oc = s->ctype == 3 ? (trns ? 4 : 3) : c + (trns ? 1 : 0);
    vkimg_image im = img_new(s->w, s->h, oc, s->depth == 16 ? VKIMG_U16 : VKIMG_U8);
    for (size_t i = 0; i < (size_t)s->w * s->h; i++) {
        const uint16_t *px = s->s + i * c;
        if (s->ctype == 3) { /* an index past the PLTE: opaque black (PNG 3rd edition) */
            for (int k = 0; k < 3; k++)
                U8(&im)[i * oc + k] = px[0] < s->nplte ? s->plte[px[0] * 3 + k] : 0;
            if (trns)
                U8(&im)[i * oc + 3] = px[0] < s->ntrns ? s->trns[px[0]] : 255;
            continue;
        }
        int match = 1;
        for (int k = 0; k < c; k++) {
            unsigned v = s->depth == 16 ? px[k] : px[k] * scale[s->depth];
            if (trns) {
                /* below 16 bits the low bits of the depth (libpng's reading of a
                 * value out of range; stb takes the low byte) */
                unsigned low = s->depth < 8 ? (1u << s->depth) - 1 : 255;
                unsigned key = s->depth == 16 ? (unsigned)(s->trns[2 * k] << 8 | s->trns[2 * k + 1])
                                              : (unsigned char)((s->trns[2 * k + 1] & low) * scale[s->depth]);
                match &= v == key;
            }
            if (s->depth == 16)
                U16(&im)[i * oc + k] = (uint16_t)v;
            else
                U8(&im)[i * oc + k] = (uint8_t)v;
        }
        if (trns) {
            if (s->depth == 16)
                U16(&im)[i * oc + c] = match ? 0 : 65535;
            else
                U8(&im)[i * oc + c] = match ? 0 : 255;
        }
    }
    return im;
}

static const unsigned char png_depths[7][6] = { { 1, 2, 4, 8, 16 }, { 0 }, { 8, 16 }, { 1, 2, 4, 8 }, { 8, 16 }, { 0 }, { 8, 16 } };

static void test_png(void)
{
    static const int sizes[][2] = { { 1, 1 }, { 3, 7 }, { 9, 5 }, { 33, 17 } };
    static const int ctypes[5] = { 0, 2, 3, 4, 6 };
    char what[160];
    int n_files = 0;
    unsigned char pal[256 * 3], trns[256];
    for (size_t i = 0; i < sizeof pal; i++)
        pal[i] = (unsigned char)rnd(256);
    for (size_t i = 0; i < sizeof trns; i++)
        trns[i] = (unsigned char)rnd(256);

    /* every colour type x bit depth x interlace x size x tRNS: stb's result and the
     * expected pixels; every truncation of the 9x5 ones */
    for (int ci = 0; ci < 5; ci++)
        for (int di = 0; png_depths[ctypes[ci]][di]; di++)
            for (int il = 0; il < 2; il++)
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                    for (int t = 0; t < 2; t++) {
                        const int ct = ctypes[ci], depth = png_depths[ct][di], w = sizes[si][0], h = sizes[si][1];
                        if (t && (ct & 4))
                            continue;
                        const int c = png_ch[ct];
                        const unsigned maxv = (1u << depth) - 1;
                        int npal = ct == 3 ? 1 + (int)rnd(maxv < 255 ? maxv + 1 : 256) : 0;
                        uint16_t *s = malloc(sizeof *s * (size_t)w * h * c);
                        int small = rnd(2); /* values 0..3: colour-key hits */
                        for (size_t i = 0; i < (size_t)w * h * c; i++)
                            s[i] = (uint16_t)(ct == 3 ? rnd((unsigned)npal) : small ? rnd(4) & maxv : rnd(maxv + 1));
                        unsigned char key[6];
                        for (int k = 0; k < 6; k++) /* below 16 bits the high byte is ignored (as stb) */
                            key[k] = (unsigned char)(k & 1 ? rnd(4) & maxv : depth == 16 ? 0 : rnd(256));
                        pspec sp = { .w = w, .h = h, .depth = depth, .ctype = ct, .interlace = il, .s = s,
                                     .fseed = (int)rnd(5) };
                        if (ct == 3) {
                            sp.plte = pal, sp.nplte = npal;
                            if (t)
                                sp.trns = trns, sp.ntrns = 1 + (int)rnd((unsigned)npal);
                        } else if (t) {
                            sp.trns = key, sp.ntrns = 2 * c;
                        }
                        size_t len;
                        unsigned char *png = mk_png(&sp, &len);
                        vkimg_image want = png_expect(&sp);
                        snprintf(what, sizeof what, "PNG ctype %d depth %d %s %dx%d%s", ct, depth,
                                 il ? "interlaced" : "", w, h, t ? " tRNS" : "");
                        CHECK_OK(what, png, len, &want, 1);
                        if (si == 2)
                            CHECK_CUTS(what, png, len, 0);
                        vkimg_image_free(&want);
                        free(png);
                        free(s);
                        n_files++;
                    }

    /* palette indices past the PLTE (invalid, but written: libpng's contrib/testpngs/badpal,
     * image-rs's invalid_palette_index.png): opaque black, as the PNG specification's third
     * edition requires (libpng, vips, Pillow and the browsers read them so); stb_image reads
     * palette memory it never set, so no oracle */
    for (int depth = 1; depth <= 8; depth *= 2)
        for (int il = 0; il < 2; il++)
            for (int t = 0; t < 2; t++) {
                const unsigned maxv = (1u << depth) - 1;
                const int w = 1 + (int)rnd(40), h = 1 + (int)rnd(12), npal = 1 + (int)rnd(maxv);
                uint16_t *s = malloc(sizeof *s * (size_t)w * h);
                for (size_t i = 0; i < (size_t)w * h; i++)
                    s[i] = (uint16_t)rnd(maxv + 1);
                s[rnd((unsigned)(w * h))] = (uint16_t)(npal + (int)rnd(maxv + 1 - (unsigned)npal)); /* one at least */
                pspec sp = { .w = w, .h = h, .depth = depth, .ctype = 3, .interlace = il, .s = s, .plte = pal,
                             .nplte = npal, .fseed = (int)rnd(5) };
                if (t)
                    sp.trns = trns, sp.ntrns = 1 + (int)rnd((unsigned)npal);
                size_t len;
                unsigned char *png = mk_png(&sp, &len);
                vkimg_image want = png_expect(&sp);
                snprintf(what, sizeof what, "PNG depth %d %s%dx%d, indices past a PLTE of %d%s", depth,
                         il ? "interlaced " : "", w, h, npal, t ? ", tRNS" : "");
                CHECK_OK(what, png, len, &want, 0);
                vkimg_image_free(&want);
                free(png);
                free(s);
            }

    /* a gray colour key out of a 1, 2 or 4-bit range (invalid, but written, e.g.
     * 0x00FF in a 1-bit file): its low bits, as libpng (so vips, browsers and
     * Pillow) read it, not stb's low byte; the 1-bit file's white is transparent */
    for (int depth = 1; depth <= 4; depth *= 2) {
        const unsigned maxv = (1u << depth) - 1;
        uint16_t s[13 * 7];
        for (size_t i = 0; i < 13 * 7; i++)
            s[i] = (uint16_t)rnd(maxv + 1);
        s[0] = (uint16_t)maxv; /* one pixel at least is keyed */
        unsigned char key[2] = { 0, (unsigned char)(0xf0 | maxv) };
        pspec sp = { .w = 13, .h = 7, .depth = depth, .ctype = 0, .s = s, .trns = key, .ntrns = 2 };
        size_t len;
        unsigned char *png = mk_png(&sp, &len);
        vkimg_image want = png_expect(&sp);
        CHECK(U8(&want)[0] == 255 && U8(&want)[1] == 0, "depth %d: the white pixel not keyed", depth);
        snprintf(what, sizeof what, "PNG gray depth %d, tRNS 0x%02x out of range", depth, key[1]);
        CHECK_OK(what, png, len, &want, 0);
        vkimg_image_free(&want);
        free(png);
    }

    /* stb_image_write's PNGs (its own zlib and filters), vkimg's encoder (8/16-bit,
     * split IDATs): the source pixels */
    for (int c = 1; c <= 4; c++) {
        vkimg_image im = img_new(37, 23, c, VKIMG_U8);
        fill_image(&im, 255, 1);
        bbuf b = { 0 };
        CHECK(stbi_write_png_to_func(stbw_cb, &b, im.w, im.h, c, im.data, im.w * c), "stbiw png");
        snprintf(what, sizeof what, "stb_image_write PNG c=%d", c);
        CHECK_OK(what, b.p, b.n, &im, 1);
        if (c == 3)
            CHECK_CUTS(what, b.p, b.n, 0);
        free(b.p);
        vkimg_image_free(&im);
        for (int is16 = 0; is16 < 2; is16++) {
            vkimg_image s = img_new(29, 31, c, is16 ? VKIMG_U16 : VKIMG_U8);
            fill_image(&s, is16 ? 65535 : 255, 1);
            unsigned char *png;
            size_t n;
            vkimg_err e;
            CHECK(vki_png_encode_ex(&s, 6, 100 + 50 * c, 0, &png, &n, &e) == 0, "encode: %s", e.msg);
            snprintf(what, sizeof what, "vkimg PNG %d-bit c=%d", is16 ? 16 : 8, c);
            CHECK_OK(what, png, n, &s, 1);
            free(png);
            vkimg_image_free(&s);
        }
    }

    /* layout variants: IDATs of one byte, ancillary chunks (also with a bad CRC:
     * ignored), a suggested PLTE in an RGB image; a tRNS with a bad CRC is ignored,
     * as libpng does (stb applies it) */
    {
        uint16_t s[17 * 9 * 4];
        for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
            s[i] = (uint16_t)rnd(256);
        pspec sp = { .w = 17, .h = 9, .depth = 8, .ctype = 6, .s = s, .idat_max = 1, .before = "gAMA",
                     .after = "tEXt", .fseed = 2 };
        size_t len;
        unsigned char *png = mk_png(&sp, &len);
        vkimg_image want = png_expect(&sp);
        CHECK_OK("PNG 1-byte IDATs + ancillary chunks", png, len, &want, 1);
        free(png);
        sp.bad_crc = "tEXt";
        png = mk_png(&sp, &len);
        CHECK_OK("PNG ancillary chunk with a bad CRC", png, len, &want, 1);
        free(png);
        vkimg_image_free(&want);
        pspec s2 = { .w = 17, .h = 9, .depth = 8, .ctype = 2, .s = s, .plte = pal, .nplte = 16, .idat_max = 50 };
        png = mk_png(&s2, &len);
        want = png_expect(&s2);
        CHECK_OK("PNG RGB with a suggested PLTE", png, len, &want, 1);
        free(png);
        vkimg_image_free(&want);
        for (size_t i = 0; i < 17 * 9; i++)
            s[i] = (uint16_t)rnd(16);
        pspec s3 = { .w = 17, .h = 9, .depth = 8, .ctype = 3, .s = s, .plte = pal, .nplte = 16, .trns = trns,
                     .ntrns = 16, .bad_crc = "tRNS" };
        png = mk_png(&s3, &len);
        s3.trns = NULL;
        want = png_expect(&s3);
        CHECK_OK("PNG tRNS with a bad CRC (ignored)", png, len, &want, 0);
        free(png);
        vkimg_image_free(&want);
    }

    /* strict: each defect is an error with its reason */
    {
        uint16_t s[13 * 9 * 4];
        for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
            s[i] = (uint16_t)rnd(4);
        size_t len;
        unsigned char *png;
#define BADPNG(reason, ct, dp, ...)                                                   \
    do {                                                                             \
        pspec s_ = { .w = 13, .h = 9, .ctype = ct, .depth = dp, .s = s, __VA_ARGS__ }; \
        png = mk_png(&s_, &len);                                                     \
        CHECK_BAD("PNG " #__VA_ARGS__, png, len, reason);                            \
        free(png);                                                                   \
    } while (0)
        BADPNG("PNG: CRC mismatch in chunk 'IDAT'", 2, 8, .bad_crc = "IDAT");
        BADPNG("PNG: CRC mismatch in chunk IHDR", 2, 8, .bad_crc = "IHDR");
        BADPNG("PNG: CRC mismatch in chunk 'IEND'", 2, 8, .bad_crc = "IEND");
        BADPNG("PNG: CRC mismatch in chunk 'PLTE'", 3, 8, .plte = pal, .nplte = 4, .bad_crc = "PLTE");
        BADPNG("PNG: unknown critical chunk 'QUUX'", 2, 8, .before = "QUUX");
        BADPNG("PNG: unknown critical chunk 'CgBI' (Apple's CgBI PNG variant)", 2, 8, .before = "CgBI");
        BADPNG("PNG: invalid filter type 5 in row 4", 2, 8, .bad_filter_row = 5);
        BADPNG("PNG: invalid filter type 5 in row 0 of interlace pass 2", 2, 8, .interlace = 1, .bad_filter_row = 3);
        BADPNG("PNG: too much image data", 2, 8, .extra_bytes = 1);
        BADPNG("PNG: too little image data", 2, 8, .short_bytes = 1);
        BADPNG("PNG: ", 2, 8, .zcut = 1); /* the deflate data lacks its last byte: anything */
        BADPNG("PNG: corrupt or truncated zlib data", 2, 8, .zcut = 4);
        BADPNG("PNG: ", 2, 8, .zcut = 7);
        BADPNG("PNG: no image data (IDAT)", 2, 8, .no_idat = 1);
        BADPNG("PNG: truncated (no IEND chunk)", 2, 8, .no_iend = 1);
        BADPNG("PNG: invalid IHDR: colour type 2 with bit depth 4", 2, 4, .fseed = 0);
        BADPNG("PNG: invalid IHDR: colour type 1 with bit depth 8", 1, 8, .fseed = 0);
        BADPNG("PNG: invalid IHDR: colour type 3 with bit depth 16", 3, 16, .plte = pal, .nplte = 4);
        BADPNG("PNG: more than one IHDR", 2, 8, .two_ihdr = 1);
        BADPNG("PNG: IDAT before PLTE", 3, 8, .fseed = 0);
        BADPNG("PNG: PLTE after IDAT", 2, 8, .plte = pal, .nplte = 4, .plte_after_idat = 1);
        BADPNG("PNG: more than one PLTE", 3, 8, .plte = pal, .nplte = 4, .two_plte = 1);
        BADPNG("PNG: invalid PLTE length 0", 3, 8, .plte = pal, .nplte = 0);
        BADPNG("PNG: tRNS after IDAT", 0, 8, .trns = trns, .ntrns = 2, .trns_after_idat = 1);
        BADPNG("PNG: tRNS of 3 bytes, want 6", 2, 8, .trns = trns, .ntrns = 3);
        BADPNG("PNG: tRNS in an image with an alpha channel", 6, 8, .trns = trns, .ntrns = 8);
        BADPNG("PNG: tRNS of 5 entries for a PLTE of 4", 3, 8, .plte = pal, .nplte = 4, .trns = trns, .ntrns = 5);
#undef BADPNG
    }

    /* hand-crafted headers: a chunk length of 2 GB (stb_image allocated that much),
     * 0xffffffff, an IHDR of 100000x100000 and 2^24+1 wide, a header that claims
     * more pixels than its data can possibly hold (refused before allocating) */
    {
        uint16_t s[4 * 4] = { 0 };
        pspec sp = { .w = 4, .h = 4, .depth = 8, .ctype = 0, .s = s };
        size_t len;
        unsigned char *png = mk_png(&sp, &len);
        unsigned char *m = malloc(len);
        memcpy(m, png, len);
        put_be32(m + 33, 0x7ffffff0u); /* IDAT's length */
        CHECK_BAD("PNG IDAT of 2 GB", m, len, "PNG: truncated (chunk 'IDAT' of 2147483632 bytes runs past the end");
        put_be32(m + 33, 0xffffffffu);
        CHECK_BAD("PNG chunk length 0xffffffff", m, len, "PNG: invalid length 4294967295 of chunk 'IDAT'");
        memcpy(m, png, len);
        put_be32(m + 16, 100000);
        put_be32(m + 20, 100000);
        put_be32(m + 29, crc_chunk(m + 12, 17));
        CHECK_BAD("PNG 100000x100000", m, len, "image is 100000x100000 = 10000000000 pixels, over the limit");
        put_be32(m + 16, (1u << 24) + 1);
        put_be32(m + 20, 1);
        put_be32(m + 29, crc_chunk(m + 12, 17));
        CHECK_BAD("PNG 2^24+1 wide", m, len, "image is 16777217x1, a side over the limit");
        put_be32(m + 16, 4);
        put_be32(m + 20, 4);
        m[24] = 3;
        put_be32(m + 29, crc_chunk(m + 12, 17));
        CHECK_BAD("PNG bit depth 3", m, len, "PNG: invalid IHDR: colour type 0 with bit depth 3");
        put_be32(m + 16, 16000);
        put_be32(m + 20, 16000);
        m[24] = 16, m[25] = 6;
        put_be32(m + 29, crc_chunk(m + 12, 17));
        CHECK_BAD("PNG 16000x16000 RGBA16 from 30 bytes", m, len, "PNG: too little image data (");
        free(m);
        free(png);
    }

    /* a zlib bomb: 32 MB of zeros in a few kB for a 1000x1000 gray image: the
     * inflate stops at the image's size */
    {
        const size_t big = 32u << 20;
        unsigned char *zeros = calloc(1, big);
        struct libdeflate_compressor *c = libdeflate_alloc_compressor(9);
        size_t cap = libdeflate_zlib_compress_bound(c, big);
        unsigned char *zd = malloc(cap);
        size_t zn = libdeflate_zlib_compress(c, zeros, big, zd, cap);
        libdeflate_free_compressor(c);
        bbuf b = { 0 };
        bb_put(&b, "\x89PNG\r\n\x1a\n", 8);
        unsigned char ih[13] = { 0, 0, 0x03, 0xe8, 0, 0, 0x03, 0xe8, 8, 0, 0, 0, 0 };
        bb_chunk(&b, "IHDR", ih, 13, 0);
        bb_chunk(&b, "IDAT", zd, zn, 0);
        bb_chunk(&b, "IEND", "", 0, 0);
        double t0 = now_s();
        CHECK_BAD("PNG zlib bomb", b.p, b.n, "PNG: too much image data");
        CHECK(now_s() - t0 < 5.0, "zlib bomb took %.1f s", now_s() - t0);
        fprintf(stderr, "note: zlib bomb: %zu bytes of PNG inflating to %zu, refused in %.1f ms\n", b.n, big,
                (now_s() - t0) * 1e3);
        free(b.p);
        free(zd);
        free(zeros);
    }
    fprintf(stderr, "note: PNG: %d hand-made files of every colour type, depth, interlace, size and tRNS\n", n_files);
}

/* ================================================================ JPEG */

static double mean_abs(const vkimg_image *a, const vkimg_image *b)
{
    double s = 0;
    size_t n = (size_t)a->w * a->h * a->c;
    for (size_t i = 0; i < n; i++)
        s += fabs((double)U8(a)[i] - U8(b)[i]);
    return s / (double)n;
}

static unsigned char *tj_encode(const vkimg_image *im, int pf, int subsamp, int q, int flags, size_t *n)
{
    tjhandle h = tjInitCompress();
    unsigned char *j = NULL;
    unsigned long jn = 0;
    int pitch = im->w * tjPixelSize[pf];
    if (!h || tjCompress2(h, im->data, im->w, pitch, im->h, pf, &j, &jn, subsamp, q, flags)) {
        fprintf(stderr, "tjCompress2: %s\n", tjGetErrorStr2(h));
        exit(1);
    }
    tjDestroy(h);
    unsigned char *r = malloc(jn);
    memcpy(r, j, jn);
    tjFree(j);
    *n = jn;
    return r;
}

/* TurboJPEG's own decode to pixel format pf (what vkimg's must equal). */
static vkimg_image tj_decode(const unsigned char *j, size_t n, int pf, int c)
{
    tjhandle h = tjInitDecompress();
    int w, ht, ss, cs;
    tjDecompressHeader3(h, j, (unsigned long)n, &w, &ht, &ss, &cs);
    vkimg_image im = img_new(w, ht, c, VKIMG_U8);
    if (tjDecompress2(h, j, (unsigned long)n, im.data, w, w * c, ht, pf, 0))
        fprintf(stderr, "tjDecompress2: %s\n", tjGetErrorStr2(h));
    tjDestroy(h);
    return im;
}

/* Adobe CMYK to RGB, the formula jpeg.c states: x*k/255 rounded to nearest */
static vkimg_image cmyk_to_rgb(const vkimg_image *cmyk)
{
    vkimg_image rgb = img_new(cmyk->w, cmyk->h, 3, VKIMG_U8);
    for (size_t i = 0; i < (size_t)cmyk->w * cmyk->h; i++)
        for (int k = 0; k < 3; k++)
            U8(&rgb)[i * 3 + k] = (uint8_t)lround(U8(cmyk)[i * 4 + k] * U8(cmyk)[i * 4 + 3] / 255.0);
    return rgb;
}

/* vkimg_load_opts.min_size: at least a quarter of each side (shrink-on-load 1/4) */
static void quarter_min(void *user, int w, int h, int orientation, int *min_w, int *min_h)
{
    (void)user;
    (void)orientation;
    *min_w = (w + 3) / 4;
    *min_h = (h + 3) / 4;
}

/* Sampling factors TurboJPEG has no TJSAMP for (its header call fails: "Could
 * not determine subsampling type"), which libjpeg, vips and ImageMagick decode:
 * 4:1:0 (Y 4x2), and chroma components subsampled unlike each other. vkimg
 * decodes them through libjpeg: exactly libjpeg's pixels, at full size and
 * shrunk on load, baseline and progressive. */
static void test_jpeg_sampling(void)
{
    static const int hvs[][3] = { { 0x42, 0x11, 0x11 }, { 0x21, 0x12, 0x11 }, { 0x22, 0x12, 0x11 }, { 0x41, 0x21, 0x11 } };
    static const int sz[][2] = { { 1, 1 }, { 17, 9 }, { 61, 35 }, { 250, 31 } };
    char what[128];
    for (size_t hi = 0; hi < sizeof hvs / sizeof hvs[0]; hi++)
        for (size_t si = 0; si < sizeof sz / sizeof sz[0]; si++)
            for (int prog = 0; prog < 2; prog++) {
                vkimg_image src = img_new(sz[si][0], sz[si][1], 3, VKIMG_U8);
                fill_image(&src, 255, (int)si % 2);
                size_t n;
                unsigned char *j = lj_encode(&src, 90, hvs[hi], prog, &n);
                snprintf(what, sizeof what, "JPEG sampling %x %x %x %dx%d%s", hvs[hi][0], hvs[hi][1], hvs[hi][2],
                         src.w, src.h, prog ? " progressive" : "");
                tjhandle th = tjInitDecompress();
                int w, h, ss, cs;
                /* 4:1:1 (Y 4x1, chroma 1x1) TurboJPEG names; the others it refuses */
                CHECK(tjDecompressHeader3(th, j, (unsigned long)n, &w, &h, &ss, &cs) != 0, "%s: TurboJPEG reads it", what);
                tjDestroy(th);
                vkimg_image want;
                CHECK(lj_decode_rgb(j, n, 1, &want) == 0, "%s: libjpeg's decode", what);
                vkimg_image im = DECODE_OK(what, j, n, &want, 0);
                if (im.data)
                    CHECK(mean_abs(&im, &src) < (si % 2 ? 40.0 : 20.0), "%s: %.3f from the source", what,
                          mean_abs(&im, &src));
                vkimg_image_free(&im);
                vkimg_image_free(&want);
                /* shrunk on load: 1/4 */
                vkimg_image q, got;
                CHECK(lj_decode_rgb(j, n, 4, &q) == 0, "%s: libjpeg's decode at 1/4", what);
                vkimg_err e;
                vkimg_load_opts lo = { .min_size = quarter_min };
                int rc = vkimg_load_memory(j, n, "s.jpg", &lo, &got, &e);
                CHECK(rc == 0 && got.w == q.w && got.h == q.h && got.c == 3 &&
                          !memcmp(got.data, q.data, vkimg_image_bytes(&q)),
                      "%s at 1/4: rc %d %s %dx%d, libjpeg %dx%d", what, rc, rc ? e.msg : "", rc ? 0 : got.w,
                      rc ? 0 : got.h, q.w, q.h);
                if (!rc)
                    vkimg_image_free(&got);
                vkimg_image_free(&q);
                if (hi == 0 && si == 2 && !prog)
                    CHECK_CUTS(what, j, n, 0);
                vkimg_image_free(&src);
                free(j);
            }
}

static void test_jpeg(void)
{
    char what[128];
    /* the CMYK formula: TurboJPEG's samples x*k/255 rounded, as stb_image computes it */
    int formula_ok = 1;
    for (unsigned x = 0; x < 256; x++)
        for (unsigned k = 0; k < 256; k++) {
            unsigned t = x * k + 128;
            formula_ok &= ((t + (t >> 8)) >> 8) == (unsigned)lround(x * k / 255.0);
        }
    CHECK(formula_ok, "stb's blinn_8x8 is x*k/255 rounded to nearest");

    /* gray and colour at every subsampling, baseline and progressive: TurboJPEG's own
     * decode exactly, close to the source and to stb_image's decode */
    static const int ss[] = { TJSAMP_GRAY, TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440, TJSAMP_411 };
    for (size_t si = 0; si < sizeof ss / sizeof ss[0]; si++)
        for (int prog = 0; prog < 2; prog++) {
            const int gray = ss[si] == TJSAMP_GRAY, c = gray ? 1 : 3;
            vkimg_image src = img_new(61, 35, c, VKIMG_U8);
            fill_image(&src, 255, 0);
            size_t n;
            unsigned char *j = tj_encode(&src, gray ? TJPF_GRAY : TJPF_RGB, ss[si], 95, prog ? TJFLAG_PROGRESSIVE : 0, &n);
            vkimg_image want = tj_decode(j, n, gray ? TJPF_GRAY : TJPF_RGB, c);
            snprintf(what, sizeof what, "JPEG subsampling %d%s", ss[si], prog ? " progressive" : "");
            vkimg_image im = DECODE_OK(what, j, n, &want, 0);
            if (im.data) {
                vkimg_image ref;
                CHECK(oracle(j, n, &ref) == 0 && ref.c == c, "%s: stb", what);
                if (ref.data) {
                    double d = mean_abs(&im, &ref);
                    CHECK(d < 1.0, "%s: TurboJPEG and stb_image differ by %.3f on average", what, d);
                }
                double ds = mean_abs(&im, &src); /* subsampled chroma loses the fine detail */
                CHECK(ds < (c == 1 || ss[si] == TJSAMP_444 ? 3.0 : 20.0), "%s: %.3f from the source", what, ds);
                vkimg_image_free(&ref);
            }
            if (si == 3)
                CHECK_CUTS(what, j, n, 0);
            vkimg_image_free(&im);
            vkimg_image_free(&want);
            vkimg_image_free(&src);
            free(j);
        }

    /* CMYK: YCCK as TurboJPEG writes it, and plain Adobe CMYK from libjpeg: the
     * formula on TurboJPEG's CMYK decode, close to stb_image */
    for (int plain = 0; plain < 2; plain++) {
        vkimg_image cmyk = img_new(40, 24, 4, VKIMG_U8);
        fill_image(&cmyk, 255, 0);
        for (size_t i = 0; i < 40 * 24; i++) /* K from 60 to 255 */
            U8(&cmyk)[i * 4 + 3] = (uint8_t)(60 + i % 196);
        size_t n;
        unsigned char *j = plain ? lj_encode(&cmyk, 95, NULL, 0, &n) : tj_encode(&cmyk, TJPF_CMYK, TJSAMP_444, 95, 0, &n);
        tjhandle th = tjInitDecompress();
        int w, h, s, cs;
        tjDecompressHeader3(th, j, (unsigned long)n, &w, &h, &s, &cs);
        tjDestroy(th);
        CHECK(cs == (plain ? TJCS_CMYK : TJCS_YCCK), "colour space %d", cs);
        vkimg_image tjc = tj_decode(j, n, TJPF_CMYK, 4), want = cmyk_to_rgb(&tjc);
        snprintf(what, sizeof what, "JPEG %s", plain ? "CMYK" : "YCCK");
        vkimg_image im = DECODE_OK(what, j, n, &want, 0);
        if (im.data) {
            vkimg_image ref, src = cmyk_to_rgb(&cmyk);
            CHECK(oracle(j, n, &ref) == 0 && ref.c == 3, "%s: stb", what);
            if (ref.data)
                CHECK(mean_abs(&im, &ref) < 1.0, "%s: %.3f from stb_image", what, mean_abs(&im, &ref));
            CHECK(mean_abs(&im, &src) < 3.0, "%s: %.3f from the source", what, mean_abs(&im, &src));
            vkimg_image_free(&ref);
            vkimg_image_free(&src);
        }
        vkimg_image_free(&im);
        vkimg_image_free(&want);
        vkimg_image_free(&tjc);
        vkimg_image_free(&cmyk);
        free(j);
    }
    /* one flat colour: C=255 M=0 Y=128 K=200 (Adobe: 255 = no ink) is RGB (200, 0, 100) */
    {
        vkimg_image cmyk = img_new(16, 16, 4, VKIMG_U8);
        for (int i = 0; i < 256; i++)
            memcpy(U8(&cmyk) + 4 * i, (const unsigned char[]){ 255, 0, 128, 200 }, 4);
        size_t n;
        unsigned char *j = lj_encode(&cmyk, 95, NULL, 0, &n);
        vkimg_image im = DECODE_OK("JPEG flat CMYK", j, n, NULL, 0);
        if (im.data)
            CHECK(abs(U8(&im)[0] - 200) <= 2 && U8(&im)[1] <= 2 && abs(U8(&im)[2] - 100) <= 2, "CMYK flat: %d %d %d",
                  U8(&im)[0], U8(&im)[1], U8(&im)[2]);
        vkimg_image_free(&im);
        vkimg_image_free(&cmyk);
        free(j);
    }

    /* hostile: a Huffman table TurboJPEG rejects (stb_image indexed past an array
     * on such a file), garbage after SOI, a progressive JPEG with 600 scans */
    {
        vkimg_image src = img_new(64, 48, 3, VKIMG_U8);
        fill_image(&src, 255, 1);
        size_t n;
        unsigned char *j = tj_encode(&src, TJPF_RGB, TJSAMP_420, 90, 0, &n);
        size_t dht = 2;
        while (dht + 4 < n && !(j[dht] == 0xff && j[dht + 1] == 0xc4))
            dht += 2 + ((size_t)j[dht + 2] << 8 | j[dht + 3]);
        CHECK(dht + 4 < n, "DHT found");
        unsigned char *m = malloc(n);
        memcpy(m, j, n);
        memset(m + dht + 5, 0xff, 16); /* 16 code counts of 255 each: more than 256 codes */
        CHECK_BAD("JPEG bogus Huffman table", m, n, "JPEG: TurboJPEG: ");
        memcpy(m, j, n);
        memcpy(m + 2, "not a marker, just text", 23);
        /* (skipped as junk before the first scan, after which libjpeg finds no
         * quantization table: its error, not TurboJPEG's) */
        CHECK_BAD("JPEG garbage after SOI", m, n, "JPEG: libjpeg: ");
        free(m);
        free(j);

        j = tj_encode(&src, TJPF_RGB, TJSAMP_420, 90, TJFLAG_PROGRESSIVE, &n);
        const size_t sos = lj_marker(j, n, 0xda, 0); /* the first scan: SOS header + entropy data up to the next marker */
        size_t end = sos + 2 + ((size_t)j[sos + 2] << 8 | j[sos + 3]);
        while (end + 1 < n && !(j[end] == 0xff && j[end + 1] != 0 && (j[end + 1] < 0xd0 || j[end + 1] > 0xd7)))
            end++;
        bbuf b = { 0 };
        bb_put(&b, j, n - 2); /* without EOI */
        for (int i = 0; i < 600; i++)
            bb_put(&b, j + sos, end - sos);
        bb_put(&b, "\xff\xd9", 2);
        double t0 = now_s();
        CHECK_BAD("JPEG 600 scans", b.p, b.n, "JPEG: TurboJPEG: ");
        CHECK(now_s() - t0 < 10, "600 scans took %.1f s", now_s() - t0);
        free(b.p);
        free(j);
        vkimg_image_free(&src);
    }
}

/* ================================================================ GIF */

static int gif_write_cb(GifFileType *g, const GifByteType *d, int n)
{
    bb_put(g->UserData, d, (size_t)n);
    return n;
}

typedef struct gframe {
    int x, y, w, h, interlace;
    int ncolors;              /* local colour table size (0: none) */
    const unsigned char *idx; /* w*h indices */
    int transparent;          /* GCE transparent index, -1: no GCE */
} gframe;

/* A GIF through giflib's encoder: canvas w x h with a global table of ngcolors
 * (0: none), background index bg, the frames in order. */
static unsigned char *mk_gif(int w, int h, int ngcolors, int bg, const unsigned char *colors, const gframe *fr,
                             int nfr, int gif89, size_t *n)
{
    bbuf b = { 0 };
    int err;
    GifFileType *g = EGifOpen(&b, gif_write_cb, &err);
    EGifSetGifVersion(g, gif89 != 0);
    ColorMapObject *gm = ngcolors ? GifMakeMapObject(ngcolors, (const GifColorType *)colors) : NULL;
    if (EGifPutScreenDesc(g, w, h, 8, bg, gm) == GIF_ERROR)
        fprintf(stderr, "EGifPutScreenDesc: %s\n", GifErrorString(g->Error));
    if (gif89)
        EGifPutComment(g, "made by test_decoders");
    for (int f = 0; f < nfr; f++) {
        const gframe *p = &fr[f];
        if (p->transparent >= 0) {
            GraphicsControlBlock gcb = { DISPOSAL_UNSPECIFIED, false, 10, p->transparent };
            GifByteType ext[4];
            size_t en = EGifGCBToExtension(&gcb, ext);
            EGifPutExtension(g, GRAPHICS_EXT_FUNC_CODE, (int)en, ext);
        }
        ColorMapObject *lm = p->ncolors ? GifMakeMapObject(p->ncolors, (const GifColorType *)(colors + 3 * 7)) : NULL;
        if (EGifPutImageDesc(g, p->x, p->y, p->w, p->h, p->interlace, lm) == GIF_ERROR)
            fprintf(stderr, "EGifPutImageDesc: %s\n", GifErrorString(g->Error));
        static const int ioff[4] = { 0, 4, 2, 1 }, istep[4] = { 8, 8, 4, 2 };
        unsigned char *line = malloc((size_t)p->w);
        for (int pass = 0; pass < (p->interlace ? 4 : 1); pass++)
            for (int y = p->interlace ? ioff[pass] : 0; y < p->h; y += p->interlace ? istep[pass] : 1) {
                memcpy(line, p->idx + (size_t)y * p->w, (size_t)p->w);
                if (EGifPutLine(g, line, p->w) == GIF_ERROR)
                    fprintf(stderr, "EGifPutLine: %s\n", GifErrorString(g->Error));
            }
        free(line);
        GifFreeMapObject(lm);
    }
    EGifCloseFile(g, &err);
    GifFreeMapObject(gm);
    *n = b.n;
    return b.p;
}

/* The first frame on a transparent canvas (clipped to it); RGB where nothing can be
 * transparent (no transparent index, the frame covers the canvas). */
static vkimg_image gif_expect(int w, int h, int ngcolors, const unsigned char *colors, const gframe *f)
{
    const int c = f->transparent < 0 && f->x == 0 && f->y == 0 && f->w >= w && f->h >= h ? 3 : 4;
    vkimg_image im = img_new(w, h, c, VKIMG_U8);
    const unsigned char *tab = f->ncolors ? colors + 3 * 7 : colors;
    (void)ngcolors;
    for (int y = 0; y < f->h; y++)
        for (int x = 0; x < f->w; x++) {
            int i = f->idx[(size_t)y * f->w + x], cx = f->x + x, cy = f->y + y;
            if (i == f->transparent || cx >= w || cy >= h)
                continue;
            unsigned char *o = U8(&im) + ((size_t)cy * w + cx) * c;
            memcpy(o, tab + 3 * i, 3);
            if (c == 4)
                o[3] = 255;
        }
    return im;
}

static void test_gif(void)
{
    unsigned char colors[3 * (256 + 7)];
    for (size_t i = 0; i < sizeof colors; i++)
        colors[i] = (unsigned char)rnd(256);
    char what[160];
    static const int ncols[] = { 2, 4, 16, 256 };
    /* global or local table, sizes, transparency, interlace, partial frame, an
     * animation (first frame only), GIF87a */
    for (size_t ni = 0; ni < 4; ni++)
        for (int variant = 0; variant < 6; variant++) {
            const int nc = ncols[ni], W = 23, H = 19;
            const int local = variant == 1 || variant == 4, partial = variant >= 3;
            gframe f = { partial ? 3 : 0, partial ? 2 : 0, partial ? 15 : W, partial ? 13 : H, variant == 2 || variant == 5,
                         local ? nc : 0, NULL, variant == 2 || variant == 4 ? (int)rnd((unsigned)nc) : -1 };
            unsigned char *idx = malloc((size_t)f.w * f.h);
            for (int i = 0; i < f.w * f.h; i++)
                idx[i] = (unsigned char)(i % 7 == 0 && f.transparent >= 0 ? (unsigned)f.transparent : rnd((unsigned)nc));
            f.idx = idx;
            gframe fr[2] = { f, f };
            fr[1].transparent = -1;
            fr[1].x = fr[1].y = 0, fr[1].w = 5, fr[1].h = 4;
            size_t n;
            unsigned char *gif = mk_gif(W, H, local ? 2 : nc, 0, colors, fr, variant == 5 ? 2 : 1, variant != 3, &n);
            vkimg_image want = gif_expect(W, H, nc, colors, &f);
            snprintf(what, sizeof what, "GIF %d colours variant %d", nc, variant);
            CHECK_OK(what, gif, n, &want, 1);
            if (ni == 1)
                CHECK_CUTS(what, gif, n, 0);
            vkimg_image_free(&want);
            free(gif);
            free(idx);
        }

    /* background index > 0 and a partial frame: transparent outside the frame
     * (stb_image paints the background colour there) */
    {
        unsigned char idx[6 * 5];
        for (int i = 0; i < 30; i++)
            idx[i] = (unsigned char)rnd(4);
        gframe f = { 2, 1, 6, 5, 0, 0, idx, -1 };
        size_t n;
        unsigned char *gif = mk_gif(10, 8, 4, 3, colors, &f, 1, 1, &n);
        vkimg_image want = gif_expect(10, 8, 4, colors, &f);
        CHECK_OK("GIF background index 3", gif, n, &want, 0);
        vkimg_image_free(&want);
        /* a frame larger than the canvas (the screen descriptor made smaller):
         * clipped (stb_image refuses the file) */
        gif[6] = 5, gif[7] = 0, gif[8] = 4, gif[9] = 0; /* canvas 5x4 */
        want = gif_expect(5, 4, 4, colors, &f);
        CHECK_OK("GIF frame past the canvas (clipped)", gif, n, &want, 0);
        vkimg_image_free(&want);
        free(gif);
    }

    /* hand-made: 1x1 frames with LZW code size 2 (clear 4, end 5): pixel 1 of a
     * 2-colour table is fine; pixel 3 is past it; a 2x2 frame with 1 pixel of data
     * ends early; no colour table; a frame of 65535x65535 on a 1x1 canvas */
    {
        unsigned char g[] = { 'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0, 10, 20, 30, 40, 50, 60,
                              0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4c, 0x01, 0, 0x3b };
        vkimg_image want = img_new(1, 1, 3, VKIMG_U8); /* opaque: RGB */
        memcpy(want.data, (const unsigned char[]){ 40, 50, 60 }, 3);
        CHECK_OK("GIF hand-made 1x1", g, sizeof g, &want, 1);
        CHECK_CUTS("GIF hand-made 1x1", g, sizeof g, 0);
        vkimg_image_free(&want);
        g[31] = 0x5c; /* pixel 3 */
        CHECK_BAD("GIF pixel index past the table", g, sizeof g, "GIF: pixel index 3 past the 2 colours");
        g[31] = 0x4c;
        g[24] = 2, g[26] = 2; /* 2x2 frame, canvas 1x1 */
        CHECK_BAD("GIF LZW data ends early", g, sizeof g, "in the first frame");
        unsigned char nt[] = { 'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0, 0, 0, 0x2c, 0, 0, 0, 0,
                               1, 0, 1, 0, 0, 2, 2, 0x4c, 0x01, 0, 0x3b };
        CHECK_BAD("GIF no colour table", nt, sizeof nt, "GIF: the first frame has no colour table");
        g[10] = 0; /* no global table: the 6 bytes of it are now garbage records */
        CHECK_BAD("GIF garbage record", g, sizeof g, "GIF: ");
        unsigned char h[] = { 'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0, 10, 20, 30, 40, 50, 60,
                              0x2c, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 2, 2, 0x4c, 0x01, 0, 0x3b };
        CHECK_BAD("GIF frame of 65535x65535", h, sizeof h, "image is 65535x65535 = 4294836225 pixels, over the limit");
        h[24] = 0, h[25] = 0;
        CHECK_BAD("GIF frame of 0x65535", h, sizeof h, "GIF: the first frame has no pixels");
        unsigned char big[] = { 'G', 'I', 'F', '8', '7', 'a', 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0x3b };
        CHECK_BAD("GIF canvas 65535x65535", big, sizeof big, "over the limit");
        unsigned char none[] = { 'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0, 0, 0, 0x3b };
        CHECK_BAD("GIF without an image", none, sizeof none, "GIF: no image in the file");
    }
}

/* ================================================================ BMP */

/* A BMP by hand: header size hsz (12, 16, 40, 52, 56, 64, 108, 124), bpp,
 * compression (0 or 3 with masks[4]; 16 bytes have no field for it), palette of
 * npal BGRX entries, pixel rows given as packed bytes per row (rowbytes each,
 * padded here), bottom-up unless top_down. */
typedef struct bspec {
    int hsz, w, h, bpp, compress, top_down, npal;
    uint32_t masks[4];
    const unsigned char *pal; /* npal * 4 bytes (BGRX) */
    const unsigned char *rows; /* h rows of rowbytes, top row first */
    int offset_delta;          /* added to the data offset */
    const unsigned char *data; /* RLE: the pixel data as it is (ndata bytes), instead of rows */
    size_t ndata;
} bspec;

static size_t bmp_rowbytes(const bspec *s) { return ((size_t)s->w * s->bpp + 7) / 8; }

/* Whether stb_image (the oracle) reads BMPs of this header size: not the V2 (52
 * bytes) nor OS/2 2.x's (64, or its 16-byte short form). */
static bool stb_bmp_header(int hsz) { return hsz != 16 && hsz != 52 && hsz != 64; }

static unsigned char *mk_bmp(const bspec *s, size_t *n)
{
    bbuf b = { 0 };
    const size_t rb = bmp_rowbytes(s), pad = (4 - rb % 4) % 4;
    const int es = s->hsz == 12 ? 3 : 4, masks_after = s->hsz == 40 && s->compress == 3;
    size_t off = 14 + (size_t)s->hsz + (masks_after ? 12 : 0) + (size_t)s->npal * es;
    off += (size_t)s->offset_delta;
    bb_str(&b, "BM");
    bb_le32(&b, (uint32_t)(off + (rb + pad) * s->h));
    bb_le32(&b, 0);
    bb_le32(&b, (uint32_t)off);
    bb_le32(&b, (uint32_t)s->hsz);
    if (s->hsz == 12) {
        bb_le16(&b, (unsigned)s->w), bb_le16(&b, (unsigned)s->h), bb_le16(&b, 1), bb_le16(&b, (unsigned)s->bpp);
    } else if (s->hsz == 16) { /* OS/2 2.x's short form */
        bb_le32(&b, (uint32_t)s->w), bb_le32(&b, (uint32_t)(s->top_down ? -s->h : s->h));
        bb_le16(&b, 1), bb_le16(&b, (unsigned)s->bpp);
    } else {
        bb_le32(&b, (uint32_t)s->w), bb_le32(&b, (uint32_t)(s->top_down ? -s->h : s->h));
        bb_le16(&b, 1), bb_le16(&b, (unsigned)s->bpp);
        bb_le32(&b, (uint32_t)s->compress);
        bb_le32(&b, (uint32_t)((rb + pad) * s->h));
        bb_le32(&b, 2835), bb_le32(&b, 2835), bb_le32(&b, (uint32_t)s->npal), bb_le32(&b, 0);
        if (s->hsz == 52 || s->hsz == 56)
            for (int i = 0; i < (s->hsz == 52 ? 3 : 4); i++)
                bb_le32(&b, s->masks[i]);
        if (s->hsz == 64) /* OS/2 2.x's own fields: units, recording, rendering, colour encoding ... */
            for (int i = 0; i < 6; i++)
                bb_le32(&b, 0);
        if (s->hsz >= 108) {
            for (int i = 0; i < 4; i++)
                bb_le32(&b, s->masks[i]);
            bb_str(&b, "BGRs");
            for (int i = 0; i < 12; i++)
                bb_le32(&b, 0);
            if (s->hsz == 124)
                for (int i = 0; i < 4; i++)
                    bb_le32(&b, 0);
        }
        if (masks_after)
            for (int i = 0; i < 3; i++)
                bb_le32(&b, s->masks[i]);
    }
    for (int i = 0; i < s->npal; i++)
        bb_put(&b, s->pal + 4 * i, (size_t)es);
    while (b.n < off)
        bb_u8(&b, 0);
    if (s->data) {
        bb_put(&b, s->data, s->ndata);
        put_le32(b.p + 2, (uint32_t)b.n);
        put_le32(b.p + 34, (uint32_t)s->ndata);
        *n = b.n;
        return b.p;
    }
    for (int y = 0; y < s->h; y++) {
        int sy = s->top_down ? y : s->h - 1 - y;
        bb_put(&b, s->rows + (size_t)sy * rb, rb);
        for (size_t i = 0; i < pad; i++)
            bb_u8(&b, 0);
    }
    *n = b.n;
    return b.p;
}

static unsigned widen_bits(unsigned v, int bits) /* bit replication to 8 bits */
{
    unsigned r = 0;
    for (int have = 0; have < 8; have += bits)
        r = (r << bits) | v;
    return (r >> (bits * ((8 + bits - 1) / bits) - 8)) & 255;
}

static void test_bmp(void)
{
    char what[160];
    /* stb_image_write: 24-bit (1-3 channels), 32-bit V4 BI_BITFIELDS (4) */
    for (int c = 1; c <= 4; c++) {
        vkimg_image im = img_new(35, 13, c, VKIMG_U8);
        fill_image(&im, 255, 1);
        bbuf b = { 0 };
        CHECK(stbi_write_bmp_to_func(stbw_cb, &b, im.w, im.h, c, im.data), "stbiw bmp");
        vkimg_image want = img_new(35, 13, c == 4 ? 4 : 3, VKIMG_U8);
        for (size_t i = 0; i < 35 * 13; i++)
            for (int k = 0; k < want.c; k++)
                U8(&want)[i * want.c + k] = U8(&im)[i * c + (c <= 2 ? 0 : k)];
        snprintf(what, sizeof what, "stb_image_write BMP c=%d", c);
        CHECK_OK(what, b.p, b.n, &want, 1);
        if (c >= 3)
            CHECK_CUTS(what, b.p, b.n, 0);
        vkimg_image_free(&want);
        vkimg_image_free(&im);
        free(b.p);
    }

    /* by hand: palettes of 1/2/4/8 bits with every header size, 16-bit 5-5-5 and 5-6-5,
     * 32-bit BI_RGB (with and without alpha), 32-bit bit fields of 4..8 bits,
     * top-down, widths that need padding */
    unsigned char pal[256 * 4];
    for (size_t i = 0; i < sizeof pal; i++)
        pal[i] = (unsigned char)rnd(256);
    static const int hszs[] = { 12, 16, 40, 56, 64, 108, 124 };
    for (size_t hi = 0; hi < VKI_ARRAY_LEN(hszs); hi++)
        for (int bpp = 1; bpp <= 8; bpp *= 2) {
            for (int w = 1; w <= 19; w += 9) {
                const int h = 6, npal = 1 + (int)rnd(1u << bpp);
                bspec s = { .hsz = hszs[hi], .w = w, .h = h, .bpp = bpp, .npal = npal, .pal = pal,
                            .top_down = hszs[hi] != 12 && w > 10 };
                const size_t rb = bmp_rowbytes(&s);
                unsigned char *rows = calloc(1, rb * h);
                vkimg_image want = img_new(w, h, 3, VKIMG_U8);
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++) {
                        unsigned i = rnd((unsigned)npal);
                        rows[(size_t)y * rb + (size_t)x * bpp / 8] |= (unsigned char)(i << (8 - bpp - (x * bpp) % 8));
                        unsigned char *o = U8(&want) + ((size_t)y * w + x) * 3;
                        o[0] = pal[4 * i + 2], o[1] = pal[4 * i + 1], o[2] = pal[4 * i];
                    }
                s.rows = rows;
                size_t n;
                unsigned char *bmp = mk_bmp(&s, &n);
                snprintf(what, sizeof what, "BMP header %d, %d-bit palette of %d, %dx%d%s", s.hsz, bpp, npal, w, h,
                         s.top_down ? " top-down" : "");
                /* (stb reads an OS/2 palette 4 entries short, and refuses OS/2 2.x
                 * headers and 2-bit palettes: no oracle there) */
                CHECK_OK(what, bmp, n, &want, s.hsz != 12 && stb_bmp_header(s.hsz) && bpp != 2);
                if (w == 10)
                    CHECK_CUTS(what, bmp, n, 0);
                if (bpp == 8 && npal < 256) { /* an index past the palette */
                    rows[0] = (unsigned char)npal;
                    free(bmp);
                    bmp = mk_bmp(&s, &n);
                    CHECK_BAD(what, bmp, n, "BMP: palette index past the");
                }
                free(bmp);
                free(rows);
                vkimg_image_free(&want);
            }
        }
    static const struct {
        int hsz, bpp, compress;
        uint32_t m[4];
        int c;
    } fields[] = {
        { 40, 16, 0, { 0 }, 3 },
        { 40, 16, 3, { 0xf800, 0x07e0, 0x001f, 0 }, 3 },
        { 108, 16, 3, { 0x0f00, 0x00f0, 0x000f, 0xf000 }, 4 },
        { 40, 32, 0, { 0 }, 4 },
        { 56, 32, 3, { 0xff0000, 0xff00, 0xff, 0 }, 3 },
        { 56, 16, 3, { 0xf800, 0x07e0, 0x001f, 0 }, 3 },      /* Photoshop's V3 5-6-5 */
        { 56, 16, 3, { 0x7c00, 0x03e0, 0x001f, 0x8000 }, 4 }, /* and 1-5-5-5 */
        { 108, 32, 3, { 0xff000000u, 0x00ff0000, 0x0000ff00, 0x000000ff }, 4 },
        { 124, 32, 3, { 0x3f, 0xfc0, 0x3f000, 0x1f00000 }, 4 },
        { 124, 32, 0, { 0 }, 4 },
        { 108, 24, 0, { 0 }, 3 },
        { 52, 32, 3, { 0xff0000, 0xff00, 0xff, 0 }, 3 }, /* V2: three masks in the header */
        { 52, 16, 3, { 0xf800, 0x07e0, 0x001f, 0 }, 3 },
        { 52, 32, 0, { 0 }, 4 },
        { 16, 24, 0, { 0 }, 3 }, /* OS/2 2.x */
        { 16, 32, 0, { 0 }, 4 },
        { 64, 16, 0, { 0 }, 3 },
        { 64, 24, 0, { 0 }, 3 },
    };
    for (size_t fi = 0; fi < sizeof fields / sizeof fields[0]; fi++)
        for (int zero_alpha = 0; zero_alpha < 2; zero_alpha++) {
            const int w = 11, h = 5, bpp = fields[fi].bpp;
            uint32_t m[4];
            memcpy(m, fields[fi].m, sizeof m);
            if (fields[fi].compress == 0)
                memcpy(m, bpp == 16 ? (const uint32_t[]){ 0x7c00, 0x3e0, 0x1f, 0 }
                                    : (const uint32_t[]){ 0xff0000, 0xff00, 0xff, 0xff000000u },
                       sizeof m);
            if (bpp == 24)
                memset(m, 0, sizeof m);
            bspec s = { .hsz = fields[fi].hsz, .w = w, .h = h, .bpp = bpp, .compress = fields[fi].compress,
                        .top_down = zero_alpha };
            memcpy(s.masks, fields[fi].m, sizeof m);
            const size_t rb = bmp_rowbytes(&s);
            unsigned char *rows = calloc(1, rb * h);
            const int c = fields[fi].c;
            vkimg_image want = img_new(w, h, c, VKIMG_U8);
            for (int i = 0; i < w * h; i++) {
                uint32_t v = (uint32_t)t_rand(&g_seed);
                if (zero_alpha)
                    v &= ~m[3];
                unsigned char *p = rows + (size_t)(i / w) * rb + (size_t)(i % w) * (bpp / 8);
                for (int k = 0; k < bpp / 8; k++)
                    p[k] = (unsigned char)(v >> (8 * k));
                if (bpp == 16)
                    v &= 0xffff;
                unsigned char *o = U8(&want) + (size_t)i * c;
                if (bpp == 24) {
                    o[0] = p[2], o[1] = p[1], o[2] = p[0];
                    continue;
                }
                for (int k = 0; k < c; k++) {
                    uint32_t mk = m[k];
                    int lo = 0, bits = 0;
                    while (!(mk >> lo & 1))
                        lo++;
                    while (lo + bits < 32 && (mk >> (lo + bits) & 1))
                        bits++;
                    o[k] = (unsigned char)widen_bits((v & mk) >> lo, bits);
                }
                if (c == 4 && zero_alpha && fields[fi].compress == 0)
                    o[3] = 255;
            }
            s.rows = rows;
            size_t n;
            unsigned char *bmp = mk_bmp(&s, &n);
            snprintf(what, sizeof what, "BMP header %d, %d-bit, compression %d, masks %x %x %x %x%s", s.hsz, bpp,
                     s.compress, m[0], m[1], m[2], m[3], zero_alpha ? ", alpha 0 (top-down)" : "");
            /* (a 56-byte header's masks are inside it: stb reads three from the
             * pixel data) */
            CHECK_OK(what, bmp, n, &want, !(s.hsz == 56 && s.compress == 3) && stb_bmp_header(s.hsz));
            if (fi == 1 || fi == 5 || !stb_bmp_header(s.hsz))
                CHECK_CUTS(what, bmp, n, 0);
            free(bmp);
            /* the data after a gap (an unused palette of 3 entries, then 6 bytes
             * of padding), which stb refuses: the same pixels */
            static const unsigned char unused_pal[12] = { 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0 };
            s.npal = 3;
            s.pal = unused_pal;
            s.offset_delta = 6;
            bmp = mk_bmp(&s, &n);
            strncat(what, ", data after a gap", sizeof what - strlen(what) - 1);
            CHECK_OK(what, bmp, n, &want, 0);
            free(bmp);
            free(rows);
            vkimg_image_free(&want);
        }

    /* hostile headers */
    {
        unsigned char rows[4 * 3 * 3] = { 0 };
        bspec s = { .hsz = 40, .w = 4, .h = 3, .bpp = 24, .rows = rows };
        size_t n;
        unsigned char *bmp = mk_bmp(&s, &n), *m = malloc(n);
        memcpy(m, bmp, n);
        CHECK_OK("BMP 4x3", m, n, NULL, 1);
        put_le32(m + 10, 0x7ffffff0u);
        CHECK_BAD("BMP offset far past the end", m, n, "BMP: truncated pixel data (0 bytes, want 36 from offset 2147483632)");
        put_le32(m + 10, 20);
        CHECK_BAD("BMP offset inside the header", m, n, "BMP: pixel data offset 20 inside the headers (54 bytes)");
        put_le32(m + 10, 0xffffffffu);
        CHECK_BAD("BMP offset -1", m, n, "BMP: invalid pixel data offset");
        memcpy(m, bmp, n);
        put_le32(m + 18, 0x7fffffffu);
        CHECK_BAD("BMP width 2^31-1", m, n, "a side over the limit");
        put_le32(m + 18, 0xfffffffcu);
        CHECK_BAD("BMP width -4", m, n, "a side over the limit");
        memcpy(m, bmp, n);
        put_le32(m + 22, 0x80000000u);
        CHECK_BAD("BMP height INT_MIN", m, n, "BMP: invalid height");
        put_le32(m + 22, (uint32_t)-100000);
        CHECK_BAD("BMP height -100000", m, n, "BMP: truncated pixel data");
        put_le32(m + 22, 0);
        CHECK_BAD("BMP height 0", m, n, "image has no pixels");
        put_le32(m + 22, (uint32_t)-3);
        CHECK_OK("BMP height -3 (top-down)", m, n, NULL, 1);
        memcpy(m, bmp, n);
        put_le32(m + 14, 20);
        CHECK_BAD("BMP header size 20", m, n, "BMP: unsupported header size 20");
        put_le32(m + 14, 64); /* (the data offset is then inside it) */
        CHECK_BAD("BMP header size 64", m, n, "BMP: pixel data offset 54 inside the headers (78 bytes)");
        {
            bspec o2 = { .hsz = 64, .w = 4, .h = 3, .bpp = 24, .rows = rows };
            size_t on;
            unsigned char *os2 = mk_bmp(&o2, &on);
            vkimg_image black = img_new(4, 3, 3, VKIMG_U8);
            memset(black.data, 0, 36);
            CHECK_OK("BMP OS/2 2.x 4x3", os2, on, &black, 0);
            vkimg_image_free(&black);
            put_le32(os2 + 30, 3);
            CHECK_BAD("BMP OS/2 Huffman", os2, on, "BMP: OS/2 Huffman 1D compression is not supported");
            put_le32(os2 + 30, 4);
            CHECK_BAD("BMP OS/2 RLE24", os2, on, "BMP: OS/2 RLE24 compression is not supported");
            free(os2);
        }
        memcpy(m, bmp, n);
        put_le32(m + 30, 1);
        CHECK_BAD("BMP RLE8 at 24 bits", m, n, "BMP: RLE8 with 24 bits a pixel");
        put_le32(m + 30, 4);
        CHECK_BAD("BMP JPEG", m, n, "is not supported");
        memcpy(m, bmp, n);
        m[28] = 3;
        CHECK_BAD("BMP 3-bit", m, n, "BMP: 3 bits a pixel is not supported");
        m[28] = 2; /* (and no room for a palette) */
        CHECK_BAD("BMP 2-bit", m, n, "BMP: pixel data offset 54 leaves no room for a palette");
        free(m);
        free(bmp);
        /* a palette of 300 entries, by the offset: its first 256 (no index reaches
         * further), as ImageMagick and Pillow read it */
        unsigned char prow[4 * 3] = { 0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 3, 3 };
        bspec p = { .hsz = 40, .w = 4, .h = 3, .bpp = 8, .npal = 4, .pal = pal, .rows = prow, .offset_delta = 296 * 4 };
        bmp = mk_bmp(&p, &n);
        vkimg_image want = img_new(4, 3, 3, VKIMG_U8);
        for (int i = 0; i < 12; i++) {
            const unsigned k = prow[i];
            U8(&want)[3 * i] = pal[4 * k + 2], U8(&want)[3 * i + 1] = pal[4 * k + 1], U8(&want)[3 * i + 2] = pal[4 * k];
        }
        CHECK_OK("BMP palette of 300", bmp, n, &want, 0);
        vkimg_image_free(&want);
        free(bmp);
    }
}

/* One row of palette indices as RLE8 (bpp 8) or RLE4 (bpp 4) codes: an encoded run
 * where the pixels from x follow its pattern (RLE8: equal; RLE4: alternating two
 * indices) for 3 or more pixels or fewer than 3 are left, else an absolute run of
 * 3..255 of them (sometimes over a run too); no end of line. */
static void rle_put_row(bbuf *b, const unsigned char *ix, int w, int bpp)
{
    for (int x = 0; x < w;) {
        int run = 1;
        while (x + run < w && run < 255 && ix[x + run] == ix[x + (bpp == 8 ? 0 : run % 2)])
            run++;
        if (w - x < 3 || (run >= 3 && rnd(4))) {
            bb_u8(b, (unsigned)run);
            bb_u8(b, bpp == 8 ? ix[x] : (unsigned)(ix[x] << 4 | (run > 1 ? ix[x + 1] : rnd(16))));
            x += run;
            continue;
        }
        int lit = 3 + (int)rnd((unsigned)(w - x < 255 ? w - x : 255) - 2);
        bb_u8(b, 0), bb_u8(b, (unsigned)lit);
        size_t bytes = bpp == 8 ? (size_t)lit : (size_t)(lit + 1) / 2;
        for (size_t k = 0; k < bytes; k++)
            bb_u8(b, bpp == 8 ? ix[x + (int)k]
                              : (unsigned)(ix[x + 2 * (int)k] << 4 | (2 * (int)k + 1 < lit ? ix[x + 2 * (int)k + 1] : 0)));
        if (bytes & 1)
            bb_u8(b, 0);
        x += lit;
    }
}

static void test_bmp_rle(void)
{
    char what[160];
    unsigned char pal[256 * 4];
    for (size_t i = 0; i < sizeof pal; i++)
        pal[i] = (unsigned char)rnd(256);
    static const int sizes[][2] = { { 1, 1 }, { 1, 7 }, { 7, 1 }, { 13, 5 }, { 300, 4 }, { 600, 3 }, { 2, 2 } };
    for (int bpp = 4; bpp <= 8; bpp += 4)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int form = 0; form < 3; form++) { /* 0: rows end with end of line, then end of bitmap;
                                                      1: the last row ends with end of bitmap; 2: top-down */
                const int w = sizes[si][0], h = sizes[si][1], npal = 1 + (int)rnd(1u << bpp);
                unsigned char *ix = malloc((size_t)w * h);
                for (int y = 0; y < h; y++) /* runs of one index or of two alternating (RLE4's pattern) */
                    for (int x = 0; x < w;) {
                        int len = 1 + (int)rnd(rnd(2) ? 40 : 3);
                        unsigned a = rnd((unsigned)npal), c = rnd(2) ? a : rnd((unsigned)npal);
                        for (int k = 0; k < len && x < w; k++, x++)
                            ix[(size_t)y * w + x] = (unsigned char)(k & 1 ? c : a);
                    }
                bbuf d = { 0 };
                for (int r = 0; r < h; r++) {
                    const int y = form == 2 ? r : h - 1 - r; /* the stream's rows: bottom first */
                    rle_put_row(&d, ix + (size_t)y * w, w, bpp);
                    if (r < h - 1 || form != 1)
                        bb_u8(&d, 0), bb_u8(&d, 0);
                }
                bb_u8(&d, 0), bb_u8(&d, 1);
                vkimg_image want = img_new(w, h, 3, VKIMG_U8);
                for (int i = 0; i < w * h; i++)
                    for (int k = 0; k < 3; k++)
                        U8(&want)[3 * i + k] = pal[4 * ix[i] + 2 - k];
                bspec s = { .hsz = si % 2 ? 124 : 40, .w = w, .h = h, .bpp = bpp, .compress = bpp == 8 ? 1 : 2,
                            .top_down = form == 2, .npal = npal, .pal = pal, .data = d.p, .ndata = d.n };
                size_t n;
                unsigned char *bmp = mk_bmp(&s, &n);
                snprintf(what, sizeof what, "BMP RLE%d %dx%d, palette of %d, form %d", bpp, w, h, npal, form);
                CHECK_OK(what, bmp, n, &want, 0);
                if (form == 0 && w < 20) /* the end of bitmap after the last row's end of line may go */
                    CHECK_CUTS(what, bmp, n, 2);
                if (npal < (1 << bpp)) { /* an index past the palette, in an absolute run or a run */
                    const unsigned bad = (unsigned)npal, k = rnd(3);
                    unsigned char lit8[8] = { 0, 3, 0, 0, 0, 0, 0, 1 }, lit4[6] = { 0, 3, 0, 0, 0, 1 },
                                  run[4] = { 3, (unsigned char)(bpp == 8 ? bad : bad << 4), 0, 1 };
                    lit8[2 + k] = (unsigned char)bad;
                    lit4[2 + k / 2] = (unsigned char)(k & 1 ? bad : bad << 4);
                    for (int v = 0; v < 2; v++) {
                        bspec sb = s;
                        sb.data = v ? run : bpp == 8 ? lit8 : lit4;
                        sb.ndata = v ? sizeof run : bpp == 8 ? sizeof lit8 : sizeof lit4;
                        free(bmp);
                        bmp = mk_bmp(&sb, &n);
                        snprintf(what, sizeof what, "BMP RLE%d %dx%d, index %d past the palette in %s", bpp, w, h,
                                 npal, v ? "a run" : "an absolute run");
                        CHECK_BAD(what, bmp, n, "BMP: palette index past the");
                    }
                }
                free(bmp);
                free(d.p);
                free(ix);
                vkimg_image_free(&want);
            }

    /* what the stream skips is entry 0; runs past a row's end are clipped there:
     * RLE8 4x3: bottom row 2 pixels of 1 then end of line; a delta of (1, 1) to
     * x 1 of the top row; a run of 5 of 2 there (3 fit); end of bitmap. */
    {
        const unsigned char d8[] = { 2, 1, 0, 0, 0, 2, 1, 1, 5, 2, 0, 1 };
        bspec s = { .hsz = 40, .w = 4, .h = 3, .bpp = 8, .compress = 1, .npal = 3, .pal = pal, .data = d8,
                    .ndata = sizeof d8 };
        const unsigned char ix[12] = { 0, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0, 0 };
        vkimg_image want = img_new(4, 3, 3, VKIMG_U8);
        for (int i = 0; i < 12; i++)
            for (int k = 0; k < 3; k++)
                U8(&want)[3 * i + k] = pal[4 * ix[i] + 2 - k];
        size_t n;
        unsigned char *bmp = mk_bmp(&s, &n);
        CHECK_OK("BMP RLE8 with a delta, a clipped run and an early end of bitmap", bmp, n, &want, 0);
        CHECK_CUTS("BMP RLE8 with a delta", bmp, n, 0);
        free(bmp);
        /* RLE4: an absolute run of 5 (3 bytes, padded to 4) past the row's end, odd encoded runs */
        const unsigned char d4[] = { 0, 5, 0x12, 0x01, 0x20, 0, 0, 0, 3, 0x21, 0, 1 };
        s.bpp = 4, s.compress = 2, s.data = d4, s.ndata = sizeof d4, s.h = 2;
        const unsigned char ix4[8] = { 2, 1, 2, 0, 1, 2, 0, 1 };
        vkimg_image want4 = img_new(4, 2, 3, VKIMG_U8);
        for (int i = 0; i < 8; i++)
            for (int k = 0; k < 3; k++)
                U8(&want4)[3 * i + k] = pal[4 * ix4[i] + 2 - k];
        bmp = mk_bmp(&s, &n);
        CHECK_OK("BMP RLE4 with a clipped absolute run", bmp, n, &want4, 0);
        free(bmp);
        vkimg_image_free(&want4);
        vkimg_image_free(&want);
        /* hostile: RLE8 at 4 bits a pixel; a stream of one end of bitmap for a huge
         * image (a bomb); a stream without an end */
        const unsigned char eob[] = { 0, 1 };
        s = (bspec){ .hsz = 40, .w = 5, .h = 2, .bpp = 4, .compress = 1, .npal = 2, .pal = pal, .data = eob, .ndata = 2 };
        bmp = mk_bmp(&s, &n);
        CHECK_BAD("BMP RLE8 at 4 bits a pixel", bmp, n, "BMP: RLE8 with 4 bits a pixel");
        free(bmp);
        s = (bspec){ .hsz = 40, .w = 43, .h = 72, .bpp = 8, .compress = 1, .npal = 2, .pal = pal, .data = eob, .ndata = 2 };
        bmp = mk_bmp(&s, &n);
        CHECK_BAD("BMP RLE8 bomb", bmp, n, "BMP: 2 bytes of RLE data for 43x72 pixels");
        free(bmp);
        s.h = 48; /* 2 bytes for 2064 pixels: at the bound */
        bmp = mk_bmp(&s, &n);
        CHECK_OK("BMP RLE8 of 2 bytes for 43x48 pixels", bmp, n, NULL, 0);
        free(bmp);
        const unsigned char noend[] = { 5, 1, 0, 0, 2, 1 };
        s = (bspec){ .hsz = 40, .w = 5, .h = 2, .bpp = 8, .compress = 1, .npal = 2, .pal = pal, .data = noend, .ndata = 6 };
        bmp = mk_bmp(&s, &n);
        CHECK_BAD("BMP RLE8 without an end", bmp, n, "BMP: truncated RLE data (no end of bitmap)");
        free(bmp);
    }
}

/* ================================================================ TGA */

/* A TGA by hand: type (1, 2, 3, + 8 for RLE), bits a pixel, an optional colour map
 * (map_bits, nmap entries of raw bytes), pixels as raw bytes (ps each, top row
 * first), an image ID, top-down flag. RLE: packets chosen from the data (runs of
 * equal pixels, literal packets otherwise, crossing rows). */
typedef struct tspec {
    int type, bpp, w, h, top_down, idlen, map_bits, nmap;
    const unsigned char *map;
    const unsigned char *px; /* w*h pixels of ps bytes */
    int run_past;            /* the last RLE packet claims more pixels than are left */
    int right_to_left;       /* each row stored from its right end (descriptor bit 4) */
} tspec;

static unsigned char *mk_tga(const tspec *s, size_t *n)
{
    bbuf b = { 0 };
    const int ps = s->bpp == 15 ? 2 : s->bpp / 8;
    const int me = s->map_bits == 15 ? 2 : s->map_bits / 8;
    bb_u8(&b, (unsigned)s->idlen);
    bb_u8(&b, s->nmap ? 1 : 0);
    bb_u8(&b, (unsigned)s->type);
    bb_le16(&b, 0), bb_le16(&b, (unsigned)s->nmap), bb_u8(&b, (unsigned)(s->nmap ? s->map_bits : 0));
    bb_le16(&b, 0), bb_le16(&b, 0), bb_le16(&b, (unsigned)s->w), bb_le16(&b, (unsigned)s->h);
    bb_u8(&b, (unsigned)s->bpp), bb_u8(&b, (s->top_down ? 0x20 : 0) | (s->right_to_left ? 0x10 : 0));
    for (int i = 0; i < s->idlen; i++)
        bb_u8(&b, 'A' + (unsigned)i);
    if (s->nmap)
        bb_put(&b, s->map, (size_t)s->nmap * me);
    const size_t np = (size_t)s->w * s->h;
    unsigned char *ord = malloc(np * ps); /* the pixels in file order */
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++)
            memcpy(ord + ((size_t)y * s->w + (size_t)x) * ps,
                   s->px + ((size_t)(s->top_down ? y : s->h - 1 - y) * s->w +
                            (size_t)(s->right_to_left ? s->w - 1 - x : x)) * ps,
                   (size_t)ps);
    if (s->type < 8) {
        bb_put(&b, ord, np * ps);
    } else {
        size_t i = 0;
        while (i < np) {
            size_t run = 1;
            while (i + run < np && run < 128 && !memcmp(ord + (i + run) * ps, ord + i * ps, (size_t)ps))
                run++;
            if (run >= 2) {
                bb_u8(&b, 0x80 | (unsigned)(run - 1 + (s->run_past && i + run == np && run < 128)));
                bb_put(&b, ord + i * ps, (size_t)ps);
            } else {
                size_t lit = 1;
                while (i + lit < np && lit < 128 &&
                       (i + lit + 1 >= np || memcmp(ord + (i + lit) * ps, ord + (i + lit + 1) * ps, (size_t)ps)))
                    lit++;
                const int past = s->run_past && i + lit == np && lit < 128;
                bb_u8(&b, (unsigned)(lit - 1 + past));
                bb_put(&b, ord + i * ps, lit * ps);
                if (past)
                    bb_put(&b, ord, (size_t)ps);
                run = lit;
            }
            i += run;
        }
    }
    free(ord);
    *n = b.n;
    return b.p;
}

static void test_tga(void)
{
    char what[160];
    /* stb_image_write, RLE (its default) and raw, 1-4 channels */
    for (int rle = 0; rle < 2; rle++)
        for (int c = 1; c <= 4; c++) {
            vkimg_image im = img_new(37, 19, c, VKIMG_U8);
            fill_image(&im, 255, 0);
            for (int i = 0; i < 37 * 5; i++) /* some runs */
                memset(U8(&im) + (size_t)i * c, 77, (size_t)c);
            stbi_write_tga_with_rle = rle;
            bbuf b = { 0 };
            CHECK(stbi_write_tga_to_func(stbw_cb, &b, im.w, im.h, c, im.data), "stbiw tga");
            snprintf(what, sizeof what, "stb_image_write TGA c=%d%s", c, rle ? " RLE" : "");
            CHECK_OK(what, b.p, b.n, &im, 1);
            if (c == 3 || c == 2)
                CHECK_CUTS(what, b.p, b.n, 0);
            vkimg_image_free(&im);
            free(b.p);
        }
    stbi_write_tga_with_rle = 1;

    /* by hand: colour maps of 8/15/16/24/32 bits with 8 and 16-bit indices, 15/16-bit
     * colour, 16-bit gray+alpha, 8-bit "colour", image IDs, top-down, raw and RLE */
    static const struct {
        int type, bpp, map_bits, c;
    } kinds[] = {
        { 1, 8, 24, 3 }, { 1, 8, 32, 4 }, { 1, 8, 8, 1 }, { 1, 16, 24, 3 }, { 1, 8, 15, 3 }, { 1, 8, 16, 3 },
        { 2, 15, 0, 3 }, { 2, 16, 0, 3 }, { 2, 24, 0, 3 }, { 2, 32, 0, 4 }, { 2, 8, 0, 1 }, { 3, 8, 0, 1 },
        { 3, 16, 0, 2 },
    };
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
        for (int rle = 0; rle < 2; rle++)
            for (int td = 0; td < 2; td++) {
                const int w = 13, h = 7, bpp = kinds[ki].bpp, mb = kinds[ki].map_bits, c = kinds[ki].c;
                const int ps = bpp == 15 ? 2 : bpp / 8, me = mb == 15 ? 2 : mb / 8;
                const int nmap = mb ? 1 + (int)rnd(bpp == 16 ? 300 : 256) : 0;
                unsigned char *map = malloc((size_t)(nmap ? nmap : 1) * 4), *px = malloc((size_t)w * h * ps);
                for (int i = 0; i < nmap * me; i++)
                    map[i] = (unsigned char)rnd(256);
                vkimg_image want = img_new(w, h, c, VKIMG_U8);
                for (int i = 0; i < w * h; i++) {
                    unsigned char *p = px + (size_t)i * ps, *o = U8(&want) + (size_t)i * c;
                    if (i % 5 && i > 0 && rnd(3)) { /* repeat the previous pixel: runs */
                        memcpy(p, p - ps, (size_t)ps);
                        memcpy(o, o - c, (size_t)c);
                        continue;
                    }
                    const unsigned char *src;
                    int bits;
                    if (mb) {
                        unsigned idx = rnd((unsigned)nmap);
                        p[0] = (unsigned char)idx;
                        if (ps == 2)
                            p[1] = (unsigned char)(idx >> 8);
                        src = map + (size_t)idx * me, bits = mb;
                    } else {
                        for (int k = 0; k < ps; k++)
                            p[k] = (unsigned char)rnd(256);
                        src = p, bits = bpp;
                    }
                    if (bits == 15 || (bits == 16 && kinds[ki].type != 3)) {
                        unsigned v = (unsigned)src[0] | (unsigned)src[1] << 8;
                        o[0] = (unsigned char)(((v >> 10) & 31) * 255 / 31);
                        o[1] = (unsigned char)(((v >> 5) & 31) * 255 / 31);
                        o[2] = (unsigned char)((v & 31) * 255 / 31);
                    } else if (c >= 3) {
                        o[0] = src[2], o[1] = src[1], o[2] = src[0];
                        if (c == 4)
                            o[3] = src[3];
                    } else {
                        memcpy(o, src, (size_t)c);
                    }
                }
                tspec s = { kinds[ki].type + 8 * rle, bpp, w, h, td, (int)ki % 3 * 5, mb, nmap, map, px, 0, 0 };
                size_t n;
                unsigned char *tga = mk_tga(&s, &n);
                snprintf(what, sizeof what, "TGA type %d, %d bits, map of %d %d-bit entries%s", s.type, bpp, nmap, mb,
                         td ? ", top-down" : "");
                CHECK_OK(what, tga, n, &want, 1);
                if (td)
                    CHECK_CUTS(what, tga, n, 0);
                if (w > 1) { /* rows stored right to left: the same pixels (stb ignores the bit) */
                    s.right_to_left = 1;
                    size_t n2;
                    unsigned char *tga2 = mk_tga(&s, &n2);
                    strncat(what, ", right to left", sizeof what - strlen(what) - 1);
                    CHECK_OK(what, tga2, n2, &want, 0);
                    free(tga2);
                    s.right_to_left = 0;
                }
                if (rle && ki == 8) { /* the last packet runs past the image */
                    s.run_past = 1;
                    free(tga);
                    tga = mk_tga(&s, &n);
                    CHECK_BAD("TGA RLE past the image", tga, n, "TGA: an RLE packet runs past the end of the image");
                }
                if (mb && bpp == 8 && nmap < 256) { /* an index past the map */
                    px[0] = (unsigned char)nmap;
                    free(tga);
                    tga = mk_tga(&s, &n);
                    CHECK_BAD("TGA index past the map", tga, n, "TGA: a colour-map index past the end");
                }
                free(tga);
                free(map);
                free(px);
                vkimg_image_free(&want);
            }

    /* hostile headers: a map of 0 entries, a map not at entry 0, huge size */
    {
        unsigned char map[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, px[4] = { 0, 1, 2, 3 };
        tspec s = { 1, 8, 2, 2, 0, 0, 24, 4, map, px, 0, 0 };
        size_t n;
        unsigned char *tga = mk_tga(&s, &n);
        CHECK_OK("TGA 2x2 mapped", tga, n, NULL, 1);
        tga[5] = tga[6] = 0;
        CHECK_BAD("TGA empty map", tga, n, "TGA: empty colour map");
        /* a map whose first entry is colour 1: colour 0 is black (as Pillow and
         * image-rs read it; stb reads the map from the wrong place) */
        tga[5] = 4;
        tga[3] = 1;
        vkimg_image want = img_new(2, 2, 3, VKIMG_U8);
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++)
                U8(&want)[3 * i + k] = px[i] ? map[3 * (px[i] - 1) + 2 - k] : 0;
        CHECK_OK("TGA map at entry 1", tga, n, &want, 0);
        vkimg_image_free(&want);
        free(tga);
        unsigned char px5[4] = { 0, 1, 5, 3 }; /* colour 5: past the 1 + 4 */
        s.px = px5;
        tga = mk_tga(&s, &n);
        tga[3] = 1;
        CHECK_BAD("TGA map at entry 1, index 5", tga, n, "TGA: a colour-map index past the end");
        free(tga);
        /* a true-colour image with a map it does not use (allowed; stb refuses it) */
        unsigned char rgb[2 * 3 * 3] = { 10, 20, 30, 40, 50, 60, 70, 80, 90, 15, 25, 35, 45, 55, 65, 75, 85, 95 };
        tspec t = { 2, 24, 3, 2, 0, 0, 24, 0, NULL, rgb, 0, 0 };
        tga = mk_tga(&t, &n);
        vkimg_image plain;
        vkimg_err pe;
        CHECK(vkimg_load_memory(tga, n, "plain.tga", NULL, &plain, &pe) == 0, "TGA 3x2 RGB: %s", pe.msg);
        free(tga);
        t.nmap = 4;
        t.map = map;
        tga = mk_tga(&t, &n);
        CHECK_OK("TGA 3x2 RGB with an unused map", tga, n, &plain, 0);
        vkimg_image_free(&plain);
        free(tga);
        unsigned char big[18] = { 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 32, 0 };
        CHECK_BAD("TGA 65535x65535 RLE of nothing", big, sizeof big, "over the limit");
        big[12] = big[14] = 0;
        big[13] = big[15] = 0x40; /* 16384x16384: at the limit, no data */
        CHECK_BAD("TGA 16384x16384 RLE of nothing", big, sizeof big, "TGA: truncated pixel data");
    }
}

/* ================================================================ PNM */

static void test_pnm(void)
{
    char what[160];
    static const unsigned maxvals[] = { 1, 15, 255, 256, 1000, 65535 };
    for (int kind = 1; kind <= 6; kind++)
        for (size_t mi = 0; mi < 6; mi++) {
            const int bitmap = kind == 1 || kind == 4, c = kind == 3 || kind == 6 ? 3 : 1;
            if (bitmap && mi)
                continue;
            const unsigned maxv = bitmap ? 1 : maxvals[mi];
            const int w = 11, h = 6, wide = maxv > 255;
            vkimg_image want = img_new(w, h, c, wide ? VKIMG_U16 : VKIMG_U8);
            bbuf b = { 0 };
            char hdr[128];
            if (bitmap)
                snprintf(hdr, sizeof hdr, "P%d\n# a comment\n%d %d\n", kind, w, h);
            else
                snprintf(hdr, sizeof hdr, "P%d # comment after the magic\n%d\t%d\n#another\n%u\n", kind, w, h, maxv);
            bb_str(&b, hdr);
            unsigned char bits[2 * 6] = { 0 };
            for (int i = 0; i < w * h * c; i++) {
                unsigned v = rnd(maxv + 1), full = wide ? 65535 : 255;
                unsigned out = bitmap ? (v ? 0 : 255) : (v * full + maxv / 2) / maxv;
                if (wide)
                    U16(&want)[i] = (uint16_t)out;
                else
                    U8(&want)[i] = (uint8_t)out;
                char t[16];
                if (kind == 1) {
                    snprintf(t, sizeof t, i % 3 ? "%u" : "%u ", v); /* digits may touch */
                    bb_str(&b, t);
                } else if (kind <= 3) {
                    snprintf(t, sizeof t, "%u%s", v, i % 7 == 6 ? "\n" : " ");
                    bb_str(&b, t);
                } else if (kind == 4) {
                    int x = i % w, y = i / w;
                    bits[y * 2 + x / 8] |= (unsigned char)(v << (7 - x % 8));
                } else if (wide) {
                    bb_be16(&b, v);
                } else {
                    bb_u8(&b, v);
                }
            }
            if (kind == 4)
                bb_put(&b, bits, sizeof bits);
            size_t tail = 0;
            if (kind <= 3) {
                bb_str(&b, "\n\n");
                tail = 2; /* whitespace after the last sample (a P2/P3 number must end at one) */
            }
            snprintf(what, sizeof what, "PNM P%d maxval %u", kind, maxv);
            CHECK_OK(what, b.p, b.n, &want, (kind == 5 || kind == 6) && maxv == 255);
            CHECK_CUTS(what, b.p, b.n, tail);
            vkimg_image_free(&want);
            free(b.p);
        }
    /* stb_image returns unscaled and (16-bit) byte-swapped samples: documented
     * differences, checked here so that a change is noticed */
    {
        const char p5[] = "P5 2 1 1000 \x03\xe8\x00\x01";
        vkimg_image im = DECODE_OK("PNM P5 16-bit", (const unsigned char *)p5, sizeof p5 - 1, NULL, 0), ref;
        CHECK(im.data && im.fmt == VKIMG_U16 && U16(&im)[0] == 65535 && U16(&im)[1] == 66, "P5 16-bit: %u %u",
              im.data ? U16(&im)[0] : 0, im.data ? U16(&im)[1] : 0);
        CHECK(oracle((const unsigned char *)p5, sizeof p5 - 1, &ref) == 0 && U16(&ref)[0] == 0xe803,
              "stb_image's 16-bit PNM is byte-swapped (%#x)", ref.data ? U16(&ref)[0] : 0);
        vkimg_image_free(&im);
        vkimg_image_free(&ref);
    }
    const char *bad[][2] = {
        { "P5 4 4 255\n", "PNM: truncated raster" },
        { "P6 4 4 70000\n", "PNM: maxval 70000 is not in 1..65535" },
        { "P6 4 4 0\n", "PNM: maxval 0 is not in 1..65535" },
        { "P2 2 1 10\n5 11\n", "PNM: sample 11 over maxval 10" },
        { "P2 2 1 10\n5 x\n", "PNM: invalid character in the raster" },
        { "P2 2 1 10\n5\n", "PNM: truncated raster" },
        { "P1 2 1\n1 2\n", "PNM: invalid character in the raster" },
        { "P5 4x4 255\n", "PNM: invalid height" },
        { "P54 4 255\n", "PNM: invalid width" },
        { "P5 100000 100000 255\n", "over the limit" },
        { "P5 99999999999999 1 255\n", "a side over the limit" },
        { "P5 0 4 255\n", "image has no pixels" },
        { "P3\n", "PNM: truncated in the header (no width)" },
        { "P5 1 1 255", "PNM: truncated after the header" },
        { "P5 1 1 255x\x01", "PNM: no whitespace after the header" },
        /* PAM (P7) */
        { "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 5\nMAXVAL 255\nENDHDR\n0123456789", "PNM: PAM: DEPTH is not 1..4" },
        { "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 0\nMAXVAL 255\nENDHDR\n", "PNM: PAM: DEPTH is not 1..4" },
        { "P7\nWIDTH 2\nHEIGHT 1\nMAXVAL 255\nENDHDR\n\x01\x02", "PNM: PAM: no DEPTH in the header" },
        { "P7\nWIDTH 2\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR\n\x01\x02", "PNM: PAM: invalid WIDTH" },
        { "P7\nWIDTH 2x\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR\n\x01\x02", "PNM: PAM: invalid WIDTH" },
        { "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 70000\nENDHDR\n\x01\x02", "PNM: maxval 70000 is not in 1..65535" },
        { "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 10\nENDHDR\n\x01\x0b", "PNM: sample 11 over maxval 10" },
        { "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nSIZE 3\nENDHDR\n\x01\x02", "PNM: PAM: unknown field" },
        { "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\n", "PNM: PAM: truncated in the header (no ENDHDR)" },
        { "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR x\n\x01\x02", "PNM: PAM: no newline after ENDHDR" },
        { "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR", "PNM: PAM: truncated after the header" },
        { "P7 WIDTH 2\n", "PNM: PAM: no newline after P7" },
        { "P7\nWIDTH 100000\nHEIGHT 100000\nDEPTH 1\nMAXVAL 255\nENDHDR\n", "over the limit" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_BAD(bad[i][0], (const unsigned char *)bad[i][0], strlen(bad[i][0]), bad[i][1]);

    /* PAM (P7): depth 1..4 (gray, gray + alpha, RGB, RGBA), 8 and 16-bit, fields in
     * any order, comments, CRLF before the raster; awkward sizes */
    static const int pam_sizes[][2] = { { 1, 1 }, { 1, 9 }, { 9, 1 }, { 13, 7 } };
    for (int depth = 1; depth <= 4; depth++)
        for (size_t mi = 0; mi < 6; mi++) {
            const int w = pam_sizes[(depth + (int)mi) % 4][0], h = pam_sizes[(depth + (int)mi) % 4][1];
            const unsigned maxv = maxvals[mi];
            const int wide = maxv > 255;
            vkimg_image want = img_new(w, h, depth, wide ? VKIMG_U16 : VKIMG_U8);
            bbuf b = { 0 };
            char hdr[200];
            static const char *const tt[4] = { "GRAYSCALE", "GRAYSCALE_ALPHA", "RGB", "RGB_ALPHA" };
            if (mi % 2)
                snprintf(hdr, sizeof hdr, "P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL %u\nTUPLTYPE %s\nENDHDR\n", w, h,
                         depth, maxv, tt[depth - 1]);
            else
                snprintf(hdr, sizeof hdr, "P7\n# made by hand\nTUPLTYPE %s\nMAXVAL %u\n\nDEPTH\t%d\nHEIGHT %d\nWIDTH %d\nENDHDR\r\n",
                         tt[depth - 1], maxv, depth, h, w);
            bb_str(&b, hdr);
            for (int i = 0; i < w * h * depth; i++) {
                const unsigned v = rnd(maxv + 1), full = wide ? 65535 : 255, o = (v * full + maxv / 2) / maxv;
                if (wide) {
                    U16(&want)[i] = (uint16_t)o;
                    bb_be16(&b, v);
                } else {
                    U8(&want)[i] = (uint8_t)o;
                    bb_u8(&b, v);
                }
            }
            snprintf(what, sizeof what, "PAM depth %d maxval %u %dx%d", depth, maxv, w, h);
            CHECK_OK(what, b.p, b.n, &want, 0);
            CHECK_CUTS(what, b.p, b.n, 0);
            vkimg_image_free(&want);
            free(b.p);
        }
}

/* ================================================================ HDR */

/* RGBE of a float triple as Radiance (and stb_image_write) computes it */
static void to_rgbe(unsigned char *o, const float *f)
{
    float m = fmaxf(f[0], fmaxf(f[1], f[2]));
    if (m < 1e-32f) {
        memset(o, 0, 4);
        return;
    }
    int ex;
    float s = frexpf(m, &ex) * 256.0f / m;
    for (int k = 0; k < 3; k++)
        o[k] = (unsigned char)(f[k] * s);
    o[3] = (unsigned char)(ex + 128);
}

static void rgbe_float(float *o, const unsigned char *p)
{
    if (p[3]) {
        float f = (float)ldexp(1.0f, p[3] - 136);
        for (int k = 0; k < 3; k++)
            o[k] = p[k] * f;
    } else {
        o[0] = o[1] = o[2] = 0;
    }
}

static void test_hdr(void)
{
    char what[160];
    /* stb_image_write: flat (width < 8) and RLE (runs and dumps) */
    static const int widths[] = { 5, 64, 300 };
    for (size_t wi = 0; wi < 3; wi++)
        for (int c = 1; c <= 4; c += 2) {
            const int w = widths[wi], h = 7;
            vkimg_image im = img_new(w, h, c, VKIMG_F32);
            for (int i = 0; i < w * h * c; i++)
                F32(&im)[i] = i % 40 < 15 ? 3.5f : (float)exp((double)rnd(20000) / 1000.0 - 8.0);
            bbuf b = { 0 };
            CHECK(stbi_write_hdr_to_func(stbw_cb, &b, w, h, c, im.data), "stbiw hdr");
            vkimg_image want = img_new(w, h, 3, VKIMG_F32);
            for (int i = 0; i < w * h; i++) {
                float px[3];
                unsigned char q[4];
                for (int k = 0; k < 3; k++)
                    px[k] = F32(&im)[i * c + (c == 1 ? 0 : k)];
                to_rgbe(q, px);
                rgbe_float(F32(&want) + 3 * i, q);
            }
            snprintf(what, sizeof what, "stb_image_write HDR %dx%d c=%d", w, h, c);
            CHECK_OK(what, b.p, b.n, &want, 1);
            if (wi < 2)
                CHECK_CUTS(what, b.p, b.n, 0);
            vkimg_image_free(&want);
            vkimg_image_free(&im);
            free(b.p);
        }
    /* by hand: #?RGBE, extra header lines, a flat file at an RLE width, zero exponents;
     * again with the numbers padded as vips writes them ("-Y      980 +X      141") */
    for (int padded = 0; padded < 2; padded++) {
        const int w = 9, h = 3;
        bbuf b = { 0 };
        bb_str(&b, padded ? "#?RGBE\nGAMMA=1.0\nFORMAT=32-bit_rle_rgbe\nEXPOSURE=2\n\n-Y      3 +X      9\n"
                          : "#?RGBE\nGAMMA=1.0\nFORMAT=32-bit_rle_rgbe\nEXPOSURE=2\n\n-Y 3 +X 9\n");
        vkimg_image want = img_new(w, h, 3, VKIMG_F32);
        for (int i = 0; i < w * h; i++) {
            unsigned char q[4] = { (unsigned char)rnd(256), (unsigned char)rnd(256), (unsigned char)rnd(256),
                                   (unsigned char)(i % 4 ? 100 + rnd(60) : 0) };
            if (i == 0)
                q[0] = 200; /* not an RLE marker */
            bb_put(&b, q, 4);
            rgbe_float(F32(&want) + 3 * i, q);
        }
        CHECK_OK("HDR flat at width 9", b.p, b.n, &want, 1);
        CHECK_CUTS("HDR flat at width 9", b.p, b.n, 0);
        vkimg_image_free(&want);
        free(b.p);
    }
    /* hostile: a truncated RLE run (stb_image never returned), a zero-length dump,
     * runs past the scanline, the wrong scanline width, other orientations, no
     * FORMAT, a huge size */
    {
        const char *head = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 8\n";
        static const unsigned char zeros[40];
        bbuf b = { 0 };
        bb_str(&b, head); /* runs of 8 for R and G, then a dump of 8 of which 3 bytes are there */
        bb_put(&b, "\x02\x02\x00\x08\x88\x01\x88\x02\x08\x01\x02\x03", 12);
        double t0 = now_s();
        CHECK_BAD("HDR truncated RLE dump", b.p, b.n, "HDR: truncated RLE data");
        CHECK(now_s() - t0 < 1.0, "truncated HDR took %.1f s", now_s() - t0);
        b.n = strlen(head);
        bb_put(&b, "\x02\x02\x00\x08\x88\x01\x88\x02\x88", 9); /* a run of 8 without its value */
        CHECK_BAD("HDR truncated RLE run", b.p, b.n, "HDR: truncated");
        static const char *const rle[][2] = {
            { "\x02\x02\x00\x08\x00", "HDR: a zero-length RLE dump" },
            { "\x02\x02\x00\x08\x89\x05", "HDR: an RLE run past the end of the scanline" },
            { "\x02\x02\x00\x08\x09", "HDR: an RLE dump past the end of the scanline" },
            { "\x02\x02\x00\x07\x87\x01", "HDR: an RLE scanline of the wrong width" },
        };
        for (size_t i = 0; i < sizeof rle / sizeof rle[0]; i++) {
            b.n = strlen(head);
            static const size_t rlen[4] = { 5, 6, 5, 6 };
            bb_put(&b, rle[i][0], rlen[i]);
            bb_put(&b, zeros, sizeof zeros);
            CHECK_BAD(rle[i][1], b.p, b.n, rle[i][1]);
        }
        free(b.p);
        static const char *const bad[][2] = {
            { "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n+Y 2 +X 8\n", "is not \"-Y H +X W\"" },
            { "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 -X 8\n", "is not \"-Y H +X W\"" },
            { "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n+X 8 -Y 2\n", "is not \"-Y H +X W\"" },
            { "#?RADIANCE\nFORMAT=32-bit_rle_xyze\n\n-Y 2 +X 8\n", "HDR: unsupported FORMAT=32-bit_rle_xyze" },
            { "#?RADIANCE\nEXPOSURE=1\n\n-Y 2 +X 8\n", "HDR: no FORMAT=32-bit_rle_rgbe line" },
            { "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n", "HDR: truncated in the header" },
            { "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 100000 +X 100000\n", "over the limit" },
            { "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 16000 +X 16000\n", "HDR: truncated pixel data" },
            { "#?ABC\n", "HDR: not a Radiance signature" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
            CHECK_BAD(bad[i][0], (const unsigned char *)bad[i][0], strlen(bad[i][0]), bad[i][1]);
    }
}

/* ================================================================ PSD */

/* PackBits of n bytes (runs of 3 or more, literals otherwise) */
static void packbits(bbuf *b, const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t run = 1;
        while (i + run < n && run < 128 && p[i + run] == p[i])
            run++;
        if (run >= 3) {
            bb_u8(b, (unsigned)(257 - run));
            bb_u8(b, p[i]);
            i += run;
            continue;
        }
        size_t lit = 0;
        while (i + lit < n && lit < 128 && !(i + lit + 2 < n && p[i + lit] == p[i + lit + 1] && p[i + lit] == p[i + lit + 2]))
            lit++;
        bb_u8(b, (unsigned)(lit - 1));
        bb_put(b, p + i, lit);
        i += lit;
    }
}

/* A PSD by hand: channel planes (nch of w*h samples, big-endian for 16 bits),
 * colour mode, raw or RLE (with a no-op byte in the first row), a layer section
 * of junk to skip. */
static unsigned char *mk_psd(int w, int h, int nch, int depth, int mode, int rle, const uint16_t *planes, size_t *n)
{
    bbuf b = { 0 };
    bb_str(&b, "8BPS");
    bb_be16(&b, 1);
    bb_put(&b, "\0\0\0\0\0\0", 6);
    bb_be16(&b, (unsigned)nch), bb_be32(&b, (uint32_t)h), bb_be32(&b, (uint32_t)w);
    bb_be16(&b, (unsigned)depth), bb_be16(&b, (unsigned)mode);
    bb_be32(&b, 0);                   /* colour mode data */
    bb_be32(&b, 6), bb_str(&b, "8BIMxx"); /* image resources */
    bb_be32(&b, 9), bb_str(&b, "layers..."); /* layer and mask information */
    bb_be16(&b, (unsigned)rle);
    const size_t bps = (size_t)depth / 8, rb = (size_t)w * bps;
    unsigned char *row = malloc(rb);
    if (!rle) {
        for (int k = 0; k < nch; k++)
            for (size_t i = 0; i < (size_t)w * h; i++)
                depth == 16 ? bb_be16(&b, planes[(size_t)k * w * h + i]) : bb_u8(&b, planes[(size_t)k * w * h + i]);
    } else {
        size_t counts = b.n;
        for (int r = 0; r < h * nch; r++)
            bb_be16(&b, 0);
        for (int k = 0; k < nch; k++)
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w; x++) {
                    unsigned v = planes[((size_t)k * h + y) * w + x];
                    if (depth == 16)
                        row[2 * x] = (unsigned char)(v >> 8), row[2 * x + 1] = (unsigned char)v;
                    else
                        row[x] = (unsigned char)v;
                }
                size_t at = b.n;
                if (k == 0 && y == 0)
                    bb_u8(&b, 128); /* no-op */
                packbits(&b, row, rb);
                size_t r = (size_t)k * h + y;
                b.p[counts + 2 * r] = (unsigned char)((b.n - at) >> 8);
                b.p[counts + 2 * r + 1] = (unsigned char)(b.n - at);
            }
    }
    free(row);
    *n = b.n;
    return b.p;
}

static void test_psd(void)
{
    char what[160];
    for (int mode = 1; mode <= 3; mode += 2)
        for (int depth = 8; depth <= 16; depth += 8)
            for (int rle = 0; rle < 2; rle++)
                for (int nch = 1; nch <= 5; nch++) {
                    if (mode == 1 && nch > 3)
                        continue;
                    const int w = 19, h = 6, c = mode == 1 ? (nch >= 2 ? 2 : 1) : 4;
                    const unsigned max = depth == 16 ? 65535 : 255;
                    uint16_t *pl = malloc(sizeof *pl * (size_t)w * h * nch);
                    for (int k = 0; k < nch; k++)
                        for (int i = 0; i < w * h; i++) {
                            unsigned v = i % 9 < 4 ? max / 3 : rnd(max + 1); /* runs for RLE */
                            if (k == c - 1 && c % 2 == 0) /* alpha: 0, max or in between */
                                v = i % 3 == 0 ? 0 : i % 3 == 1 ? max : 1 + rnd(max - 1);
                            pl[(size_t)k * w * h + i] = (uint16_t)v;
                        }
                    /* half of the colour values matted with white (as Photoshop stores them),
                     * the others not (as ImageMagick writes them: then the un-matting leaves
                     * the range, where stb's conversion wraps around and vkimg clamps) */
                    const int alpha = c % 2 == 0 && nch >= c;
                    if (alpha)
                        for (int i = 0; i < w * h; i += 2) {
                            double a = pl[(size_t)(c - 1) * w * h + i] / (double)max;
                            for (int k = 0; k < c - 1; k++) {
                                uint16_t *p = pl + (size_t)k * w * h + i;
                                *p = (uint16_t)lround(*p * a + max * (1 - a));
                            }
                        }
                    vkimg_image want = img_new(w, h, c, depth == 16 ? VKIMG_U16 : VKIMG_U8);
                    for (int i = 0; i < w * h; i++) {
                        float px[4];
                        for (int k = 0; k < c; k++)
                            px[k] = k < nch ? pl[(size_t)k * w * h + i] : (k == c - 1 && c % 2 == 0) ? (float)max : 0;
                        if (alpha && px[c - 1] != 0 && px[c - 1] != max) {
                            float a = px[c - 1] / (float)max, ra = 1.0f / a, inv = (float)max * (1 - ra);
                            for (int k = 0; k < c - 1; k++) {
                                float v = px[k] * ra + inv; /* clamped (stb wraps around) */
                                px[k] = v <= 0.0f ? 0.0f : v >= (float)max ? (float)max : (float)(int32_t)v;
                            }
                        }
                        for (int k = 0; k < c; k++)
                            depth == 16 ? (U16(&want)[i * c + k] = (uint16_t)px[k])
                                        : (U8(&want)[i * c + k] = (uint8_t)px[k]);
                    }
                    size_t n;
                    unsigned char *psd = mk_psd(w, h, nch, depth, mode, rle, pl, &n);
                    snprintf(what, sizeof what, "PSD %s %d-bit %s, %d channels", mode == 3 ? "RGB" : "gray", depth,
                             rle ? "RLE" : "raw", nch);
                    /* stb_image: RGB only, 16-bit RLE it reads as noise, and un-matted values
                     * out of range it wraps around */
                    CHECK_OK(what, psd, n, &want, mode == 3 && !(depth == 16 && rle) && !alpha);
                    if (nch == 5 || (mode == 1 && nch == 2))
                        CHECK_CUTS(what, psd, n, 0);
                    vkimg_image_free(&want);
                    free(psd);
                    free(pl);
                }
    /* hostile */
    {
        uint16_t pl[3 * 4] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
        size_t n;
        unsigned char *psd = mk_psd(2, 2, 3, 8, 3, 1, pl, &n), *m = malloc(n);
        memcpy(m, psd, n);
        m[12] = 0xff, m[13] = 0xff;
        CHECK_BAD("PSD 65535 channels", m, n, "PSD: 65535 channels (1..56)");
        m[12] = 0, m[13] = 0;
        CHECK_BAD("PSD 0 channels", m, n, "PSD: 0 channels (1..56)");
        m[12] = 0, m[13] = 56; /* 56 channels: the row counts and data are not there */
        CHECK_BAD("PSD 56 channels", m, n, "PSD: truncated RLE data");
        memcpy(m, psd, n);
        put_be32(m + 26, 0x7fffffff);
        CHECK_BAD("PSD huge section", m, n, "PSD: a section of 2147483647 bytes runs past the end");
        memcpy(m, psd, n);
        m[5] = 2;
        CHECK_BAD("PSB", m, n, "PSD: PSB (the large document format) is not supported");
        memcpy(m, psd, n);
        m[25] = 4;
        CHECK_BAD("PSD CMYK", m, n, "PSD: colour mode 4 is not supported");
        memcpy(m, psd, n);
        m[23] = 32;
        CHECK_BAD("PSD 32-bit", m, n, "PSD: 32 bits a channel is not supported");
        memcpy(m, psd, n);
        m[14] = 0x7f;
        CHECK_BAD("PSD huge height", m, n, "a side over the limit");
        memcpy(m, psd, n);
        size_t data = 26 + 4 + 10 + 13 + 2 + 2 * 2 * 3;
        m[data] = 0x80, m[data + 1] = 0x7f; /* no-op, then a literal of 128 bytes */
        CHECK_BAD("PSD RLE packet past the channel", m, n, "PSD: an RLE packet runs past the end of its channel");
        free(m);
        free(psd);
        psd = mk_psd(2, 2, 3, 8, 3, 0, pl, &n);
        psd[n - 12 - 1] = 2; /* the compression field of a raw file */
        CHECK_BAD("PSD ZIP", psd, n, "PSD: compression 2 (ZIP) is not supported");
        free(psd);
    }
}

/* ================================================================ damage */

/* Random damage to every file whose truncations were tried: 1-4 bytes set to random
 * values, bits flipped, or runs of bytes set to 0 or 0xff, 150 times a file. Whatever
 * the decoder makes of it, it must be an image within the limits (a damaged GIF
 * screen size can make a large canvas) or a one-line error naming the file with
 * nothing allocated; under ASan/UBSan nothing may be read or written out of bounds. */
static void test_mutations(void)
{
    int decoded = 0, refused = 0, bad = 0;
    for (int bi = 0; bi < g_nbases; bi++) {
        const base_file *bf = &g_bases[bi];
        for (int it = 0; it < 150; it++) {
            unsigned char *m = malloc(bf->n);
            memcpy(m, bf->p, bf->n);
            int kind = it % 3, nm = 1 + (int)rnd(4);
            for (int k = 0; k < nm; k++) {
                size_t at = rnd((unsigned)bf->n);
                if (kind == 0)
                    m[at] = (unsigned char)rnd(256);
                else if (kind == 1)
                    m[at] ^= (unsigned char)(1u << rnd(8));
                else
                    memset(m + at, it & 8 ? 0xff : 0, bf->n - at < 6 ? bf->n - at : 6);
            }
            vkimg_err e;
            vkimg_image im;
            int rc = vkimg_load_memory(m, bf->n, "damaged.img", NULL, &im, &e);
            if (rc == 0) {
                decoded++;
                if (!im.data || im.w <= 0 || im.h <= 0 || im.c < 1 || im.c > 4 || (uint64_t)im.w * (uint64_t)im.h > VKIMG_DEFAULT_MAX_PIXELS) {
                    if (!bad++)
                        fprintf(stderr, "  %s damage %d: %dx%dx%d\n", bf->what, it, im.w, im.h, im.c);
                }
                vkimg_image_free(&im);
            } else {
                refused++;
                if (rc != VKIMG_E_RUNTIME || im.data || strncmp(e.msg, "damaged.img: ", 13) || strchr(e.msg, '\n')) {
                    if (!bad++)
                        fprintf(stderr, "  %s damage %d: rc %d %s\n", bf->what, it, rc, e.msg);
                }
            }
            free(m);
        }
    }
    CHECK(bad == 0, "%d damaged files handled wrongly", bad);
    CHECK(decoded > 0 && refused > 0, "damage exercised both outcomes (%d decoded, %d refused)", decoded, refused);
    fprintf(stderr, "note: %d damaged files: %d decoded, %d refused\n", decoded + refused, decoded, refused);
    for (int bi = 0; bi < g_nbases; bi++)
        free(g_bases[bi].p);
}

/* ================================================================ loader */

static void test_loader(void)
{
    vkimg_err e;
    vkimg_image im;
    /* PIC, unknown data, empty */
    unsigned char pic[128] = { 0x53, 0x80, 0xf6, 0x34 };
    memcpy(pic + 88, "PICT", 4);
    CHECK_BAD("PIC", pic, sizeof pic, "bad.img: PIC (Softimage) files are not supported");
    const char *text = "this is not an image, just some text\n";
    CHECK_BAD("text", (const unsigned char *)text, strlen(text),
              "bad.img: not a supported image (PNG, JPEG, WebP, TIFF, GIF, BMP, TGA, PSD, HDR, PNM)");
    int rc = vkimg_load_memory("", 0, "empty.img", NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, "empty.img: empty file"), "empty: %s", e.msg);

    /* a valid file of every format through vkimg_load (the file path) */
    {
        vkimg_image src = img_new(9, 7, 3, VKIMG_U8);
        fill_image(&src, 255, 1);
        vkimg_save(P("ok.png"), &src, NULL, &e);
        vkimg_save(P("ok.bmp"), &src, NULL, &e);
        vkimg_save(P("ok.tga"), &src, NULL, &e);
        const char *names[] = { "ok.png", "ok.bmp", "ok.tga" };
        for (int i = 0; i < 3; i++) {
            rc = vkimg_load(P(names[i]), NULL, &im, &e);
            CHECK(rc == 0 && same_image(&im, &src), "%s: %s", names[i], rc ? e.msg : "differs");
            vkimg_image_free(&im);
        }
        vkimg_image_free(&src);
    }

    /* not regular files: refused at once, without reading (a FIFO with no writer
     * would block a plain open or read forever: the alarm turns a hang into a
     * failure) */
    struct itimerval it = { { 0, 0 }, { 10, 0 } };
    signal(SIGALRM, SIG_DFL);
    setitimer(ITIMER_REAL, &it, NULL);
    char want[700];
    CHECK(mkfifo(P("fifo.png"), 0600) == 0, "mkfifo: %s", strerror(errno));
    double t0 = now_s();
    rc = vkimg_load(P("fifo.png"), NULL, &im, &e);
    snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", P("fifo.png"));
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want) && !im.data, "FIFO: %s", e.msg);
    CHECK(now_s() - t0 < 1.0, "FIFO took %.2f s", now_s() - t0);

    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    rc = vkimg_load("/dev/zero", NULL, &im, &e);
    getrusage(RUSAGE_SELF, &ru1);
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, "/dev/zero: not a regular file (a character device)"), "/dev/zero: %s",
          e.msg);
    CHECK(ru1.ru_maxrss - ru0.ru_maxrss < 64 * 1024, "/dev/zero: max RSS grew by %ld kB", ru1.ru_maxrss - ru0.ru_maxrss);
    rc = vkimg_load(g_dir, NULL, &im, &e);
    snprintf(want, sizeof want, "%s: not a regular file (a directory)", g_dir);
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want), "directory: %s", e.msg);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", P("sock.png"));
    if (sfd >= 0 && strlen(P("sock.png")) < sizeof sa.sun_path && bind(sfd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        rc = vkimg_load(P("sock.png"), NULL, &im, &e);
        snprintf(want, sizeof want, "%s: not a regular file (a socket)", P("sock.png"));
        CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want), "socket: %s", e.msg);
    }
    if (sfd >= 0)
        close(sfd);
    rc = vkimg_load(P("missing.png"), NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "cannot open: ") && strstr(e.msg, strerror(ENOENT)), "missing: %s",
          e.msg);
    it.it_value.tv_sec = 0;
    setitimer(ITIMER_REAL, &it, NULL);

    /* sizes: a (sparse) file over INT_MAX, and one over what --max-pixels could need,
     * are refused from their size without being read */
    int fd = open(P("huge.png"), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 3ll << 30) == 0, "sparse file: %s", strerror(errno));
    if (fd >= 0)
        close(fd);
    t0 = now_s();
    rc = vkimg_load(P("huge.png"), NULL, &im, &e);
    snprintf(want, sizeof want, "%s: file too large (3221225472 bytes; at most 2147483647)", P("huge.png"));
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want), "3 GB: %s", e.msg);
    CHECK(now_s() - t0 < 1.0, "3 GB file: %.2f s", now_s() - t0);
    fd = open(P("huge.png"), O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && ftruncate(fd, 80ll << 20) == 0, "sparse file: %s", strerror(errno));
    if (fd >= 0)
        close(fd);
    vkimg_load_opts lo = { .max_pixels = 1000 };
    rc = vkimg_load(P("huge.png"), &lo, &im, &e);
    snprintf(want, sizeof want, "%s: file too large (83886080 bytes; at most 67172864 for --max-pixels 1000)",
             P("huge.png"));
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want), "80 MB for 1000 pixels: %s", e.msg);
    unlink(P("huge.png"));
    unlink(P("fifo.png"));
    unlink(P("sock.png"));
    unlink(P("ok.png"));
    unlink(P("ok.bmp"));
    unlink(P("ok.tga"));
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/vkimg-test-decoders-XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    double t0 = now_s();
    test_loader(); /* first: its /dev/zero check looks at the peak memory use */
    test_png();
    test_jpeg();
    test_jpeg_sampling();
    test_gif();
    test_bmp();
    test_bmp_rle();
    test_tga();
    test_pnm();
    test_hdr();
    test_psd();
    test_mutations();
    rmdir(g_dir);
    fprintf(stderr,
            "note: %d valid files decoded (%d identical to stb_image), %d truncated %d ways (all refused), %d hostile "
            "files refused, %.1f s\n",
            g_valid, g_oracle, g_cut_files, g_cuts, g_hostile, now_s() - t0);
    return t_done("test_decoders");
}
