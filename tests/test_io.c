/* Image I/O: every output format round-tripped through vkimg_save + vkimg_load, the
 * PNG encoder's stream checked on its own (CRCs, filters, big-endian samples), .npy
 * headers, decode limits and error paths, and the atomic-write guarantees (no output,
 * no temporary file, an existing output untouched) after every failed save. No device. */
#include "io_priv.h"
#include "t.h"
#include "vkimg.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdeflate.h>

static char g_dir[256];

static const char *P(const char *name) /* path in the test directory (rotating buffers) */
{
    static char buf[4][4096];
    static int i;
    char *b = buf[i++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", g_dir, name);
    return b;
}

static void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st))
        return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        if (d) {
            struct dirent *de;
            while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                    continue;
                char sub[4096];
                snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
                rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Number of ".*.vkimg-*" temporary files in dir. */
static int count_temps(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (!fnmatch(".*.vkimg-*", de->d_name, 0))
            n++;
    closedir(d);
    return n;
}

static unsigned char *read_all(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            unsigned char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, n, f);
    return (fclose(f) || w != n) ? -1 : 0;
}

static int file_equals(const char *path, const void *data, size_t n)
{
    size_t len;
    unsigned char *b = read_all(path, &len);
    int eq = b && len == n && !memcmp(b, data, n);
    free(b);
    return eq;
}

/* A test image: smooth gradients plus (if noise) random low bits; alpha channels get
 * their own pattern, including 0 and max. */
static void make_image(vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, int noise, unsigned long long seed)
{
    vkimg_err e;
    if (vkimg_image_alloc(im, w, h, c, fmt, &e)) {
        fprintf(stderr, "alloc: %s\n", e.msg);
        exit(1);
    }
    unsigned long long s = seed | 1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                double v = (k == 3 || (c == 2 && k == 1))
                               ? ((x + y) % 5) / 4.0
                               : 0.5 + 0.4 * sin(0.11 * x * (k + 1) + 0.07 * y) * cos(0.05 * y * (k + 1));
                if (noise)
                    v += ((double)(t_rand(&s) % 1000) / 1000.0 - 0.5) * 0.2;
                v = v < 0 ? 0 : v > 1 ? 1 : v;
                size_t i = ((size_t)y * w + x) * c + k;
                switch (fmt) {
                case VKIMG_U8: ((uint8_t *)im->data)[i] = (uint8_t)lround(v * 255); break;
                case VKIMG_U16: ((uint16_t *)im->data)[i] = (uint16_t)lround(v * 65535); break;
                case VKIMG_F32: ((float *)im->data)[i] = (float)v; break;
                case VKIMG_U32: ((uint32_t *)im->data)[i] = (uint32_t)(v * 4e9); break;
                case VKIMG_U64: ((uint64_t *)im->data)[i] = (uint64_t)(v * 1e18); break;
                default: break;
                }
            }
}

static int same_image(const vkimg_image *a, const vkimg_image *b)
{
    return a->w == b->w && a->h == b->h && a->c == b->c && a->fmt == b->fmt && a->data && b->data &&
           !memcmp(a->data, b->data, vkimg_image_bytes(a));
}

/* Asserts the state after a failed save: error code, message naming the path and
 * containing want; no temporary left in dir; the output is absent (prev == NULL) or
 * byte-for-byte prev. */
static void check_failed(int line, const char *dir, const char *path, int rc, int want_code, const vkimg_err *e,
                         const char *want, const void *prev, size_t prevlen)
{
    if (rc != want_code || !strstr(e->msg, path) || (want && !strstr(e->msg, want)))
        fprintf(stderr, "  (line %d) rc=%d msg: %s\n", line, rc, e->msg);
    CHECK(rc == want_code, "line %d: rc %d, want %d", line, rc, want_code);
    CHECK(strstr(e->msg, path) != NULL, "line %d: message does not name %s: %s", line, path, e->msg);
    if (want)
        CHECK(strstr(e->msg, want) != NULL, "line %d: message lacks '%s': %s", line, want, e->msg);
    CHECK(!strchr(e->msg, '\n'), "line %d: message has a newline", line);
    CHECK(count_temps(dir) == 0, "line %d: temporary files left in %s", line, dir);
    if (prev)
        CHECK(file_equals(path, prev, prevlen), "line %d: existing %s was changed", line, path);
    else
        CHECK(!exists(path), "line %d: %s exists after a failed save", line, path);
}
#define FAILED(dir, path, rc, code, e, want, prev, prevlen) \
    check_failed(__LINE__, dir, path, rc, code, e, want, prev, prevlen)

/* ---------------------------------------------------------------- basics */

static void test_basics(void)
{
    CHECK(vkimg_fmt_size(VKIMG_U8) == 1 && vkimg_fmt_size(VKIMG_U16) == 2 && vkimg_fmt_size(VKIMG_F16) == 2 &&
              vkimg_fmt_size(VKIMG_F32) == 4 && vkimg_fmt_size(VKIMG_U32) == 4 && vkimg_fmt_size(VKIMG_U64) == 8,
          "fmt sizes");
    CHECK(vkimg_fmt_size((vkimg_fmt)42) == 0, "unknown fmt size");
    CHECK(!strcmp(vkimg_fmt_name(VKIMG_U8), "u8") && !strcmp(vkimg_fmt_name(VKIMG_U16), "u16") &&
              !strcmp(vkimg_fmt_name(VKIMG_F32), "f32") && !strcmp(vkimg_fmt_name(VKIMG_U64), "u64"),
          "fmt names");

    vkimg_image im = { 3, 5, 4, VKIMG_U16, NULL };
    CHECK(vkimg_image_bytes(&im) == 3 * 5 * 4 * 2, "bytes %zu", vkimg_image_bytes(&im));
    vkimg_image big = { INT_MAX, INT_MAX, 4, VKIMG_U64, NULL };
    if (sizeof(size_t) == 8)
        CHECK(vkimg_image_bytes(&big) == 0, "overflow must give 0");
    vkimg_image bad = { 3, 5, 5, VKIMG_U8, NULL };
    CHECK(vkimg_image_bytes(&bad) == 0, "c=5 must give 0");

    vkimg_err e;
    CHECK(vkimg_image_alloc(&im, 7, 3, 2, VKIMG_F32, &e) == 0, "alloc: %s", e.msg);
    CHECK(im.w == 7 && im.h == 3 && im.c == 2 && im.fmt == VKIMG_F32 && im.data, "alloc fields");
    int zero = 1;
    for (size_t i = 0; i < vkimg_image_bytes(&im); i++)
        zero &= ((unsigned char *)im.data)[i] == 0;
    CHECK(zero, "alloc must zero");
    vkimg_image_free(&im);
    CHECK(im.data == NULL && im.w == 0, "free clears");
    vkimg_image_free(&im); /* twice is fine */
    vkimg_image_free(NULL);
    CHECK(vkimg_image_alloc(&im, INT_MAX, INT_MAX, 4, VKIMG_U64, &e) == VKIMG_E_RUNTIME && !im.data,
          "overflowing alloc must fail");
    CHECK(vkimg_image_alloc(&im, 4, 4, 0, VKIMG_U8, &e) == VKIMG_E_RUNTIME, "c=0 must fail");
    CHECK(vkimg_image_alloc(&im, 0, 4, 1, VKIMG_U8, &e) == VKIMG_E_RUNTIME, "w=0 must fail");

    CHECK(vkimg_file_kind_of("a/b.png") == VKIMG_FILE_PNG, "png");
    CHECK(vkimg_file_kind_of("B.PNG") == VKIMG_FILE_PNG, "PNG");
    CHECK(vkimg_file_kind_of("x.jpg") == VKIMG_FILE_JPEG && vkimg_file_kind_of("x.JpEg") == VKIMG_FILE_JPEG, "jpeg");
    CHECK(vkimg_file_kind_of("x.bmp") == VKIMG_FILE_BMP && vkimg_file_kind_of("x.tga") == VKIMG_FILE_TGA, "bmp tga");
    CHECK(vkimg_file_kind_of("x.hdr") == VKIMG_FILE_HDR && vkimg_file_kind_of("x.NPY") == VKIMG_FILE_NPY, "hdr npy");
    CHECK(vkimg_file_kind_of("x.gif") == VKIMG_FILE_UNKNOWN, "gif is input only");
    CHECK(vkimg_file_kind_of("x.pngx") == VKIMG_FILE_UNKNOWN, "pngx");
    CHECK(vkimg_file_kind_of("noext") == VKIMG_FILE_UNKNOWN, "noext");
    CHECK(vkimg_file_kind_of("dir.png/file") == VKIMG_FILE_UNKNOWN, "extension of a directory");
    CHECK(vkimg_file_kind_of("out.png/") == VKIMG_FILE_UNKNOWN, "trailing slash");
    CHECK(vkimg_file_kind_of(NULL) == VKIMG_FILE_UNKNOWN, "NULL");

    CHECK(vkimg_file_fmt(VKIMG_FILE_PNG, VKIMG_U16) == VKIMG_U16, "png u16");
    CHECK(vkimg_file_fmt(VKIMG_FILE_PNG, VKIMG_U8) == VKIMG_U8, "png u8");
    CHECK(vkimg_file_fmt(VKIMG_FILE_PNG, VKIMG_F32) == VKIMG_U8, "png f32");
    CHECK(vkimg_file_fmt(VKIMG_FILE_PNG, VKIMG_F16) == VKIMG_U8, "png f16");
    CHECK(vkimg_file_fmt(VKIMG_FILE_JPEG, VKIMG_U16) == VKIMG_U8, "jpeg");
    CHECK(vkimg_file_fmt(VKIMG_FILE_BMP, VKIMG_F32) == VKIMG_U8, "bmp");
    CHECK(vkimg_file_fmt(VKIMG_FILE_TGA, VKIMG_U16) == VKIMG_U8, "tga");
    CHECK(vkimg_file_fmt(VKIMG_FILE_HDR, VKIMG_U8) == VKIMG_F32, "hdr");
    CHECK(vkimg_file_fmt(VKIMG_FILE_NPY, VKIMG_U64) == VKIMG_U64, "npy");
}

/* ---------------------------------------------------------------- PNG */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned paeth_t(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return (unsigned)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

/* Parses a PNG made by vki_png_encode: checks the chunk CRCs, IHDR, inflates the IDATs
 * and undoes the filters. Returns the raw rows (h * rowbytes, PNG byte order) and the
 * filter byte of each row; NULL on any defect. */
static unsigned char *png_parse(const unsigned char *png, size_t len, int *w, int *h, int *depth, int *ctype,
                                unsigned char *filters, int max_rows, int *nidat)
{
    if (len < 8 || memcmp(png, "\x89PNG\r\n\x1a\n", 8))
        return NULL;
    size_t pos = 8, zn = 0;
    unsigned char *z = malloc(len);
    int seen_end = 0;
    *nidat = 0;
    while (z && pos + 12 <= len) {
        uint32_t n = be32(png + pos);
        if (pos + 12 + n > len)
            break;
        const unsigned char *type = png + pos + 4, *data = png + pos + 8;
        if (libdeflate_crc32(0, type, 4 + n) != be32(data + n)) {
            fprintf(stderr, "  bad CRC in %.4s\n", (const char *)type);
            free(z);
            return NULL;
        }
        if (!memcmp(type, "IHDR", 4) && n == 13) {
            *w = (int)be32(data);
            *h = (int)be32(data + 4);
            *depth = data[8];
            *ctype = data[9];
            if (data[10] || data[11] || data[12]) {
                free(z);
                return NULL;
            }
        } else if (!memcmp(type, "IDAT", 4)) {
            memcpy(z + zn, data, n);
            zn += n;
            ++*nidat;
        } else if (!memcmp(type, "IEND", 4)) {
            seen_end = pos + 12 == len;
        }
        pos += 12 + n;
    }
    static const int chans[7] = { 1, 0, 3, 0, 2, 0, 4 };
    if (!z || !seen_end || *ctype > 6 || !chans[*ctype] || *h > max_rows) {
        free(z);
        return NULL;
    }
    size_t bpp = (size_t)chans[*ctype] * (*depth / 8), rowbytes = (size_t)*w * bpp;
    size_t rawlen = (rowbytes + 1) * (size_t)*h, got = 0;
    unsigned char *raw = malloc(rawlen), *img = malloc(rowbytes * (size_t)*h);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    int ok = raw && img && d && libdeflate_zlib_decompress(d, z, zn, raw, rawlen, &got) == LIBDEFLATE_SUCCESS &&
             got == rawlen;
    libdeflate_free_decompressor(d);
    free(z);
    for (int y = 0; ok && y < *h; y++) {
        const unsigned char *f = raw + (size_t)y * (rowbytes + 1);
        unsigned char *cur = img + (size_t)y * rowbytes, *prev = y ? cur - rowbytes : NULL;
        filters[y] = f[0];
        for (size_t i = 0; i < rowbytes; i++) {
            int a = i >= bpp ? cur[i - bpp] : 0, b = prev ? prev[i] : 0, c = prev && i >= bpp ? prev[i - bpp] : 0;
            int pr;
            switch (f[0]) {
            case 0: pr = 0; break;
            case 1: pr = a; break;
            case 2: pr = b; break;
            case 3: pr = (a + b) / 2; break;
            case 4: pr = (int)paeth_t(a, b, c); break;
            default: ok = 0; pr = 0; break;
            }
            cur[i] = (unsigned char)(f[1 + i] + pr);
        }
    }
    free(raw);
    if (!ok) {
        free(img);
        return NULL;
    }
    return img;
}

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
    for (int is16 = 0; is16 < 2; is16++)
        for (int c = 1; c <= 4; c++) {
            vkimg_image im;
            make_image(&im, 29, 17, c, is16 ? VKIMG_U16 : VKIMG_U8, 1, 77 + c);
            int rc = vki_png_encode(&im, -1, &png, &n, &e);
            CHECK(rc == 0, "encode %d-bit c=%d: %s", is16 ? 16 : 8, c, e.msg);
            unsigned char *raw = rc ? NULL : png_parse(png, n, &w, &h, &depth, &ctype, filters, 256, &nidat);
            CHECK(raw != NULL, "parse %d-bit c=%d", is16 ? 16 : 8, c);
            if (raw) {
                static const int ct[5] = { 0, 0, 4, 2, 6 };
                CHECK(w == 29 && h == 17 && depth == (is16 ? 16 : 8) && ctype == ct[c], "IHDR %dx%d d%d t%d", w, h,
                      depth, ctype);
                int eq = 1;
                size_t ns = (size_t)29 * 17 * c;
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
    CHECK(vki_png_encode_ex(&im, 1, 97, &png, &n, &e) == 0, "split: %s", e.msg);
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
            vkimg_save_opts so = { 0, c - 1 + 2 * is16 }; /* assorted levels */
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

static double mean_abs_u8(const vkimg_image *a, const vkimg_image *b, int chans)
{
    /* compares the first `chans` channels of a (gray replicated if a has 1-2) with b */
    double s = 0;
    size_t np = (size_t)a->w * a->h;
    for (size_t i = 0; i < np; i++)
        for (int k = 0; k < chans; k++) {
            int ka = a->c <= 2 ? 0 : k;
            s += fabs((double)((uint8_t *)a->data)[i * a->c + ka] - ((uint8_t *)b->data)[i * b->c + k]);
        }
    return s / (double)(np * chans);
}

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

    /* BMP: RGB and RGBA exact; gray comes back as 3 equal channels, gray+alpha too
     * (24-bit: alpha dropped) */
    for (int c = 1; c <= 4; c++) {
        char name[32];
        snprintf(name, sizeof name, "rt_%d.bmp", c);
        make_image(&im, 35, 13, c, VKIMG_U8, 1, 50 + c); /* odd width: row padding */
        CHECK(vkimg_save(P(name), &im, NULL, &e) == 0, "save %s: %s", name, e.msg);
        CHECK(vkimg_load(P(name), NULL, &back, &e) == 0, "load %s: %s", name, e.msg);
        int want_c = c == 4 ? 4 : 3;
        CHECK(back.c == want_c && back.w == 35 && back.h == 13, "%s: %d channels back", name, back.c);
        if (c >= 3)
            CHECK(same_image(&im, &back), "%s not exact", name);
        else if (back.c == 3)
            CHECK(mean_abs_u8(&im, &back, 3) == 0, "%s: gray not kept exactly", name);
        vkimg_image_free(&im);
        vkimg_image_free(&back);
    }

    /* JPEG quality 100 on a smooth image: mean abs error < 3 per sample; stb writes
     * YCbCr, so everything comes back as 3 channels (gray replicated, alpha dropped) */
    for (int c = 1; c <= 4; c++) {
        char name[32];
        snprintf(name, sizeof name, "rt_%d.jpg", c);
        make_image(&im, 64, 48, c, VKIMG_U8, 0, 60 + c);
        vkimg_save_opts so = { 100, -1 };
        CHECK(vkimg_save(P(name), &im, &so, &e) == 0, "save %s: %s", name, e.msg);
        CHECK(vkimg_load(P(name), NULL, &back, &e) == 0, "load %s: %s", name, e.msg);
        CHECK(back.c == 3 && back.fmt == VKIMG_U8 && back.w == 64 && back.h == 48, "%s: %dx%dx%d back", name, back.w,
              back.h, back.c);
        if (back.c == 3) {
            double mae = mean_abs_u8(&im, &back, 3);
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

/* ---------------------------------------------------------------- npy */

/* Checks a .npy file: magic, version 1.0, header text (dict + spaces + '\n'), 64-byte
 * alignment and payload. */
static void check_npy(const char *path, const char *want_dict, const void *data, size_t nbytes)
{
    size_t len;
    unsigned char *b = read_all(path, &len);
    CHECK(b && len >= 10, "%s: unreadable", path);
    if (!b || len < 10) {
        free(b);
        return;
    }
    CHECK(!memcmp(b, "\x93NUMPY", 6), "%s: magic", path);
    CHECK(b[6] == 1 && b[7] == 0, "%s: version %d.%d", path, b[6], b[7]);
    size_t hl = b[8] | (size_t)b[9] << 8;
    CHECK((10 + hl) % 64 == 0, "%s: data offset %zu not 64-aligned", path, 10 + hl);
    CHECK(len == 10 + hl + nbytes, "%s: size %zu, want %zu", path, len, 10 + hl + nbytes);
    if (len == 10 + hl + nbytes) {
        size_t dl = strlen(want_dict);
        CHECK(hl > dl && !memcmp(b + 10, want_dict, dl), "%s: header '%.*s', want '%s'", path, (int)(hl < 200 ? hl : 200),
              (const char *)b + 10, want_dict);
        int pad = 1;
        for (size_t i = 10 + dl; i < 10 + hl - 1; i++)
            pad &= b[i] == ' ';
        CHECK(pad && b[10 + hl - 1] == '\n', "%s: header padding", path);
        CHECK(!nbytes || !memcmp(b + 10 + hl, data, nbytes), "%s: payload differs", path);
    }
    free(b);
}

static void test_npy(void)
{
    vkimg_err e;
    vkimg_image im;
    char dict[256];
    static const struct {
        vkimg_fmt fmt;
        int c;
        const char *descr;
    } cases[] = {
        { VKIMG_U8, 1, "|u1" },  { VKIMG_U16, 3, "<u2" }, { VKIMG_F32, 4, "<f4" },
        { VKIMG_U32, 2, "<u4" }, { VKIMG_U64, 1, "<u8" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        make_image(&im, 13, 7, cases[i].c, cases[i].fmt, 1, 7 + i);
        char name[32];
        snprintf(name, sizeof name, "a%zu.npy", i);
        CHECK(vkimg_save(P(name), &im, NULL, &e) == 0, "save %s: %s", name, e.msg);
        if (cases[i].c == 1)
            snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (7, 13), }", cases[i].descr);
        else
            snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (7, 13, %d), }",
                     cases[i].descr, cases[i].c);
        check_npy(P(name), dict, im.data, vkimg_image_bytes(&im));
        CHECK(!strcmp(vki_npy_descr(cases[i].fmt), cases[i].descr), "descr of %s", vkimg_fmt_name(cases[i].fmt));
        vkimg_image_free(&im);
    }

    /* vki_npy_save directly: 1-d (trailing comma), 0-d, big shapes */
    uint64_t v[5] = { 1, 2, 3, 4, 0xffffffffffffffffull };
    size_t shape[4] = { 5 };
    CHECK(vki_npy_save(P("v.npy"), "<u8", 1, shape, v, sizeof v, &e) == 0, "1-d: %s", e.msg);
    check_npy(P("v.npy"), "{'descr': '<u8', 'fortran_order': False, 'shape': (5,), }", v, sizeof v);
    CHECK(vki_npy_save(P("s.npy"), "<u8", 0, NULL, v, 8, &e) == 0, "0-d: %s", e.msg);
    check_npy(P("s.npy"), "{'descr': '<u8', 'fortran_order': False, 'shape': (), }", v, 8);
    size_t sh4[4] = { 1, 1, 5, 1 };
    CHECK(vki_npy_save(P("d4.npy"), "<f8", 4, sh4, v, sizeof v, &e) == 0, "4-d: %s", e.msg);
    check_npy(P("d4.npy"), "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 5, 1), }", v, sizeof v);

    /* errors: size mismatch, overflowing shape, bad dtype: nothing written */
    shape[0] = 4;
    int rc = vki_npy_save(P("bad.npy"), "<u8", 1, shape, v, sizeof v, &e);
    FAILED(g_dir, P("bad.npy"), rc, VKIMG_E_RUNTIME, &e, "32 bytes, got 40", NULL, 0);
    size_t huge[2] = { SIZE_MAX / 2, 4 };
    rc = vki_npy_save(P("bad.npy"), "|u1", 2, huge, v, sizeof v, &e);
    FAILED(g_dir, P("bad.npy"), rc, VKIMG_E_RUNTIME, &e, "overflow", NULL, 0);
    rc = vki_npy_save(P("bad.npy"), "u8", 1, shape, v, 32, &e);
    FAILED(g_dir, P("bad.npy"), rc, VKIMG_E_RUNTIME, &e, "dtype", NULL, 0);
    rc = vki_npy_save(P("bad.npy"), "<u8", 1, shape, v, 32, &e);
    CHECK(rc == 0, "4 x u8: %s", e.msg);
}

/* ---------------------------------------------------------------- load errors */

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* A PNG made of signature + IHDR (correct CRC) + IEND, no pixel data. */
static size_t craft_png(unsigned char *b, uint32_t w, uint32_t h, int color)
{
    memcpy(b, "\x89PNG\r\n\x1a\n", 8);
    put32(b + 8, 13);
    memcpy(b + 12, "IHDR", 4);
    put32(b + 16, w);
    put32(b + 20, h);
    b[24] = 8;
    b[25] = (unsigned char)color;
    b[26] = b[27] = b[28] = 0;
    put32(b + 29, libdeflate_crc32(0, b + 12, 17));
    put32(b + 33, 0);
    memcpy(b + 37, "IEND", 4);
    put32(b + 41, libdeflate_crc32(0, b + 37, 4));
    return 45;
}

static void test_load_errors(void)
{
    vkimg_err e;
    vkimg_image im;
    int rc;

    rc = vkimg_load(P("missing.png"), NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("missing.png")) && strstr(e.msg, strerror(ENOENT)),
          "missing: %s", e.msg);
    CHECK(im.data == NULL, "no data on failure");

    write_file(P("empty.png"), "", 0);
    rc = vkimg_load(P("empty.png"), NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("empty.png")) && strstr(e.msg, "empty file"), "empty: %s", e.msg);

    const char *text = "this is not an image, just some text\n";
    write_file(P("text.png"), text, strlen(text));
    rc = vkimg_load(P("text.png"), NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("text.png")) && strstr(e.msg, "not a supported image (stb_image: "),
          "text: %s", e.msg);

    rc = vkimg_load(g_dir, NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, g_dir), "directory as input: %s", e.msg);

    /* truncated PNG: a valid file cut in the middle of its IDAT */
    vkimg_image src;
    make_image(&src, 40, 30, 3, VKIMG_U8, 1, 11);
    unsigned char *png;
    size_t n;
    CHECK(vki_png_encode(&src, 6, &png, &n, &e) == 0, "encode: %s", e.msg);
    write_file(P("trunc.png"), png, n / 2);
    rc = vkimg_load(P("trunc.png"), NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("trunc.png")) && strstr(e.msg, "stb_image"), "truncated: %s",
          e.msg);
    CHECK(im.data == NULL, "truncated: no data");
    write_file(P("trunc2.png"), png, 20); /* cut inside IHDR */
    rc = vkimg_load(P("trunc2.png"), NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("trunc2.png")), "truncated header: %s", e.msg);

    /* the pixel limit: exactly at the limit loads, one below it does not */
    vkimg_load_opts lo = { 40 * 30 };
    CHECK(vkimg_load_memory(png, n, "mem", &lo, &im, &e) == 0 && same_image(&im, &src), "at the limit: %s", e.msg);
    vkimg_image_free(&im);
    lo.max_pixels = 40 * 30 - 1;
    rc = vkimg_load_memory(png, n, "mem.png", &lo, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME &&
              !strcmp(e.msg, "mem.png: image is 40x30 = 1200 pixels, over the limit of 1199 (--max-pixels)"),
          "limit: %s", e.msg);
    free(png);
    /* ... also for formats other than PNG (stbi_info path) */
    CHECK(vkimg_save(P("lim.bmp"), &src, NULL, &e) == 0, "save bmp: %s", e.msg);
    rc = vkimg_load(P("lim.bmp"), &lo, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("lim.bmp")) && strstr(e.msg, "over the limit of 1199 (--max-pixels)"),
          "bmp limit: %s", e.msg);
    vkimg_image_free(&src);

    /* a PNG header claiming 100000x100000: refused from the header, with the limit in
     * the message (the file has no pixel data at all, so decoding could not say this) */
    unsigned char hb[64];
    size_t hn = craft_png(hb, 100000, 100000, 2);
    write_file(P("huge.png"), hb, hn);
    rc = vkimg_load(P("huge.png"), NULL, &im, &e);
    char want[512];
    snprintf(want, sizeof want, "%s: image is 100000x100000 = 10000000000 pixels, over the limit of 268435456 (--max-pixels)",
             P("huge.png"));
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want), "huge: %s", e.msg);
    CHECK(im.data == NULL, "huge: no data");
    /* a side over 2^24 */
    hn = craft_png(hb, 1u << 25, 1, 0);
    lo.max_pixels = 1ull << 40;
    rc = vkimg_load_memory(hb, hn, "wide.png", &lo, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "wide.png: image is 33554432x1"), "wide: %s", e.msg);
    /* the same crafted header with a small size passes the checks and fails to decode */
    hn = craft_png(hb, 10, 10, 2);
    rc = vkimg_load_memory(hb, hn, "nodata.png", NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "nodata.png: cannot decode (stb_image: "), "no IDAT: %s", e.msg);
    rc = vkimg_load_memory(hb, 0, NULL, NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "empty file"), "empty memory: %s", e.msg);
}

/* ---------------------------------------------------------------- save errors */

static void test_save_errors(void)
{
    vkimg_err e;
    vkimg_image im;
    int rc;
    make_image(&im, 32, 24, 3, VKIMG_U8, 1, 21);

    /* unknown extension: usage error, exact message */
    rc = vkimg_save(P("out.xyz"), &im, NULL, &e);
    FAILED(g_dir, P("out.xyz"), rc, VKIMG_E_USAGE, &e, "unknown output format '.xyz' (use .png .jpg .bmp .tga .hdr .npy)",
           NULL, 0);
    char want[512];
    snprintf(want, sizeof want, "%s: unknown output format '.xyz' (use .png .jpg .bmp .tga .hdr .npy)", P("out.xyz"));
    CHECK(!strcmp(e.msg, want), "message: %s", e.msg);
    rc = vkimg_save(P("noext"), &im, NULL, &e);
    FAILED(g_dir, P("noext"), rc, VKIMG_E_USAGE, &e, "unknown output format", NULL, 0);

    /* nonexistent directory */
    rc = vkimg_save(P("nodir/out.png"), &im, NULL, &e);
    FAILED(g_dir, P("nodir/out.png"), rc, VKIMG_E_RUNTIME, &e, "cannot write: ", NULL, 0);
    CHECK(!exists(P("nodir")), "nodir created");
    /* parent is a regular file */
    write_file(P("plain.txt"), "x", 1);
    rc = vkimg_save(P("plain.txt/out.png"), &im, NULL, &e);
    FAILED(g_dir, P("plain.txt/out.png"), rc, VKIMG_E_RUNTIME, &e, strerror(ENOTDIR), NULL, 0);
    /* output is a directory */
    mkdir(P("isdir.png"), 0755);
    rc = vkimg_save(P("isdir.png"), &im, NULL, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("isdir.png")) && strstr(e.msg, "cannot write"), "dir output: %s",
          e.msg);
    struct stat st;
    CHECK(stat(P("isdir.png"), &st) == 0 && S_ISDIR(st.st_mode), "directory still there");
    CHECK(count_temps(g_dir) == 0, "temps after directory output");
    /* unwritable directory (root may write anywhere: only as a normal user) */
    mkdir(P("ro"), 0555);
    chmod(P("ro"), 0555);
    if (geteuid() != 0) {
        rc = vkimg_save(P("ro/out.png"), &im, NULL, &e);
        FAILED(P("ro"), P("ro/out.png"), rc, VKIMG_E_RUNTIME, &e, strerror(EACCES), NULL, 0);
        rc = vkimg_check_output(P("ro/out.png"), &e);
        CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "not writable"), "check_output ro: %s", e.msg);
    } else {
        fprintf(stderr, "note: running as root, read-only directory case skipped\n");
    }

    /* an existing output is left alone by every kind of failure */
    char out[4096];
    snprintf(out, sizeof out, "%s", P("keep.png"));
    CHECK(vkimg_save(out, &im, NULL, &e) == 0, "save keep: %s", e.msg);
    size_t keeplen;
    unsigned char *keep = read_all(out, &keeplen);
    CHECK(keep && keeplen > 100, "keep.png readable");

    vkimg_image w16;
    make_image(&w16, 32, 24, 3, VKIMG_U16, 1, 22);
    rc = vkimg_save(P("keep.jpg"), &w16, NULL, &e); /* u16 to JPEG */
    FAILED(g_dir, P("keep.jpg"), rc, VKIMG_E_RUNTIME, &e, "u16", NULL, 0);
    vkimg_image f32;
    make_image(&f32, 32, 24, 3, VKIMG_F32, 1, 23);
    rc = vkimg_save(out, &f32, NULL, &e); /* f32 to PNG */
    FAILED(g_dir, out, rc, VKIMG_E_RUNTIME, &e, "f32", keep, keeplen);
    rc = vkimg_save(P("keep.hdr"), &im, NULL, &e); /* u8 to HDR */
    FAILED(g_dir, P("keep.hdr"), rc, VKIMG_E_RUNTIME, &e, "f32", NULL, 0);
    vkimg_save_opts bad_q = { 101, -1 }, bad_l = { 0, 13 };
    rc = vkimg_save(P("q.jpg"), &im, &bad_q, &e);
    FAILED(g_dir, P("q.jpg"), rc, VKIMG_E_USAGE, &e, "101", NULL, 0);
    rc = vkimg_save(out, &im, &bad_l, &e);
    FAILED(g_dir, out, rc, VKIMG_E_USAGE, &e, "13", keep, keeplen);
    CHECK(vkimg_save(P("q2.jpg"), &im, &bad_l, &e) == 0, "PNG level does not apply to JPEG: %s", e.msg);
    vkimg_image wide;
    make_image(&wide, 70000, 1, 3, VKIMG_U8, 0, 1);
    rc = vkimg_save(P("wide.jpg"), &wide, NULL, &e);
    FAILED(g_dir, P("wide.jpg"), rc, VKIMG_E_RUNTIME, &e, "65535", NULL, 0);
    rc = vkimg_save(P("wide.tga"), &wide, NULL, &e);
    FAILED(g_dir, P("wide.tga"), rc, VKIMG_E_RUNTIME, &e, "65535", NULL, 0);
    CHECK(vkimg_save(P("wide.png"), &wide, NULL, &e) == 0, "wide PNG: %s", e.msg);
    vkimg_image_free(&wide);
    vkimg_image nodata = { 4, 4, 3, VKIMG_U8, NULL };
    rc = vkimg_save(out, &nodata, NULL, &e);
    FAILED(g_dir, out, rc, VKIMG_E_RUNTIME, &e, "invalid image", keep, keeplen);

    /* a write that fails half-way (file size limit): the temporary is removed and the
     * existing output keeps its bytes */
    struct rlimit old;
    if (getrlimit(RLIMIT_FSIZE, &old) == 0) {
        void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = { 64, old.rlim_max };
        if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
            vkimg_err e2;
            rc = vkimg_save(out, &w16, NULL, &e);
            int rc2 = vkimg_save(P("new.npy"), &w16, NULL, &e2);
            setrlimit(RLIMIT_FSIZE, &old);
            FAILED(g_dir, out, rc, VKIMG_E_RUNTIME, &e, strerror(EFBIG), keep, keeplen);
            FAILED(g_dir, P("new.npy"), rc2, VKIMG_E_RUNTIME, &e2, strerror(EFBIG), NULL, 0);
        }
        signal(SIGXFSZ, prev);
    }
    free(keep);

    /* vkimg_check_output */
    CHECK(vkimg_check_output(P("fine.png"), &e) == 0, "check fine: %s", e.msg);
    CHECK(!exists(P("fine.png")), "check_output must not create the file");
    rc = vkimg_check_output(P("fine.xyz"), &e);
    CHECK(rc == VKIMG_E_USAGE && strstr(e.msg, "unknown output format '.xyz'"), "check xyz: %s", e.msg);
    rc = vkimg_check_output(P("nodir/x.png"), &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("nodir/x.png")) && strstr(e.msg, "does not exist"),
          "check nodir: %s", e.msg);
    rc = vkimg_check_output(P("plain.txt/x.png"), &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "not a directory"), "check file parent: %s", e.msg);
    rc = vkimg_check_output(P("isdir.png"), &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "is a directory"), "check dir output: %s", e.msg);
    CHECK(vkimg_check_output("/x.png", &e) == (access("/", W_OK | X_OK) ? VKIMG_E_RUNTIME : 0), "check /x.png: %s",
          e.msg);

    vkimg_image_free(&im);
    vkimg_image_free(&w16);
    vkimg_image_free(&f32);
    CHECK(count_temps(g_dir) == 0, "no temporaries at the end");
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/vkimg-test-io-XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_basics();
    test_png_stream();
    test_roundtrip_png();
    test_roundtrip_stb();
    test_npy();
    test_load_errors();
    test_save_errors();
    rm_rf(g_dir);
    return t_done("test_io");
}
