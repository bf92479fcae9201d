/* Image I/O: every output format round-tripped through vkimg_save + vkimg_load, the
 * PNG encoder's stream checked on its own (CRCs, filters, big-endian samples), .npy
 * headers, decode limits and error paths, and the atomic-write guarantees (no output,
 * no temporary file, an existing output untouched) after every failed save. The PNG
 * fast path against stb_image (hand-made files of every kind, truncation, corruption),
 * JPEG through TurboJPEG (round trips, subsampling, CMYK fallback, damage), and both
 * on several threads. No device. */
#include "io/io_priv.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdeflate.h>
#include <stb_image.h>
#include <turbojpeg.h>

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

    /* JPEG (TurboJPEG, see test_jpeg) quality 100 on a smooth image: mean abs error < 3
     * per sample; gray and gray+alpha come back as 1 channel (a grayscale JPEG), RGB
     * and RGBA as 3 (alpha dropped) */
    for (int c = 1; c <= 4; c++) {
        char name[32];
        snprintf(name, sizeof name, "rt_%d.jpg", c);
        make_image(&im, 64, 48, c, VKIMG_U8, 0, 60 + c);
        vkimg_save_opts so = { 100, -1 };
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

/* ---------------------------------------------------------------- PNG fast path */

/* A growable byte buffer. */
typedef struct bbuf {
    unsigned char *p;
    size_t n, cap;
} bbuf;

static void bb_put(bbuf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void bb_chunk(bbuf *b, const char *type, const void *d, size_t n)
{
    unsigned char h[8], c[4];
    put32(h, (uint32_t)n);
    memcpy(h + 4, type, 4);
    size_t at = b->n;
    bb_put(b, h, 8);
    bb_put(b, d, n);
    put32(c, libdeflate_crc32(0, b->p + at + 4, 4 + n));
    bb_put(b, c, 4);
}

/* What a hand-made PNG looks like (mk_png). */
typedef struct png_spec {
    int w, h, depth, ctype, interlace;
    const unsigned char *raw; /* the image's rows in PNG byte order, packed for depth < 8 */
    int filter;               /* 0..4: every row; 5: row k (counted over all passes) gets (k + fseed) % 5 */
    int fseed;
    int bad_filter_row;       /* > 0: row bad_filter_row - 1 has filter type 5 */
    const unsigned char *plte; /* nplte RGB entries, written when non-NULL */
    int nplte;
    const unsigned char *trns; /* ntrns bytes, written when non-NULL */
    int ntrns;
    int trns_after_idat;
    size_t idat_max;          /* split the zlib stream into IDATs of this size (0: one) */
    int empty_idats;          /* 1: empty IDAT chunks between and after the others; 2: also
                                 before the first (stb then memcpy()s to NULL, which UBSan
                                 stops at: not for the stb comparison) */
    int extra_bytes;          /* zero bytes appended to the uncompressed data */
    int bad_adler;            /* corrupt the zlib stream's Adler-32 */
    const char *before, *after; /* chunk types (5 data bytes) before the first / after the last IDAT */
    int no_iend;
} png_spec;

static const int png_chans[7] = { 1, 0, 3, 1, 2, 0, 4 };

/* Filters h rows of rb bytes (pixel size bpp for the filters) into z. */
static void filter_rows(bbuf *z, const unsigned char *rows, size_t rb, int h, size_t bpp, const png_spec *s, int *k)
{
    unsigned char *zero = calloc(1, rb + 1), *line = malloc(rb + 1);
    for (int y = 0; y < h; y++, ++*k) {
        const unsigned char *cur = rows + (size_t)y * rb, *prev = y ? cur - rb : zero;
        int f = s->filter <= 4 ? s->filter : (*k + s->fseed) % 5;
        if (s->bad_filter_row == *k + 1)
            f = 5;
        line[0] = (unsigned char)f;
        for (size_t i = 0; i < rb; i++) {
            int a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0, p;
            switch (f) {
            case 1: p = a; break;
            case 2: p = b; break;
            case 3: p = (a + b) / 2; break;
            case 4: p = (int)paeth_t(a, b, c); break;
            default: p = 0; break;
            }
            line[1 + i] = (unsigned char)(cur[i] - p);
        }
        bb_put(z, line, rb + 1);
    }
    free(zero);
    free(line);
}

/* Builds a PNG by hand (any filter, chunk order, defect); free() the result. */
static unsigned char *mk_png(const png_spec *s, size_t *len)
{
    const int bits = png_chans[s->ctype] * s->depth;
    const size_t rb = ((size_t)s->w * bits + 7) / 8, bpp = bits >= 8 ? (size_t)bits / 8 : 1;
    bbuf z = { 0 }, out = { 0 };
    int k = 0;
    if (!s->interlace) {
        filter_rows(&z, s->raw, rb, s->h, bpp, s, &k);
    } else { /* Adam7, whole bytes per pixel (depth >= 8) */
        static const int xo[7] = { 0, 4, 0, 2, 0, 1, 0 }, yo[7] = { 0, 0, 4, 0, 2, 0, 1 };
        static const int xs[7] = { 8, 8, 4, 4, 2, 2, 1 }, ys[7] = { 8, 8, 8, 4, 4, 2, 2 };
        for (int p = 0; p < 7; p++) {
            int pw = (s->w - xo[p] + xs[p] - 1) / xs[p], ph = (s->h - yo[p] + ys[p] - 1) / ys[p];
            if (pw <= 0 || ph <= 0)
                continue;
            unsigned char *sub = malloc((size_t)pw * ph * bpp);
            for (int y = 0; y < ph; y++)
                for (int x = 0; x < pw; x++)
                    memcpy(sub + ((size_t)y * pw + x) * bpp,
                           s->raw + (size_t)(yo[p] + y * ys[p]) * rb + (size_t)(xo[p] + x * xs[p]) * bpp, bpp);
            filter_rows(&z, sub, (size_t)pw * bpp, ph, bpp, s, &k);
            free(sub);
        }
    }
    for (int i = 0; i < s->extra_bytes; i++)
        bb_put(&z, "", 1);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
    size_t cap = libdeflate_zlib_compress_bound(c, z.n);
    unsigned char *zd = malloc(cap);
    size_t zn = libdeflate_zlib_compress(c, z.p, z.n, zd, cap);
    libdeflate_free_compressor(c);
    if (s->bad_adler)
        zd[zn - 1] ^= 0x5a;

    bb_put(&out, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ih[13];
    put32(ih, (uint32_t)s->w);
    put32(ih + 4, (uint32_t)s->h);
    ih[8] = (unsigned char)s->depth;
    ih[9] = (unsigned char)s->ctype;
    ih[10] = ih[11] = 0;
    ih[12] = (unsigned char)s->interlace;
    bb_chunk(&out, "IHDR", ih, 13);
    if (s->before)
        bb_chunk(&out, s->before, "hello", 5);
    if (s->plte)
        bb_chunk(&out, "PLTE", s->plte, (size_t)s->nplte * 3);
    if (s->trns && !s->trns_after_idat)
        bb_chunk(&out, "tRNS", s->trns, (size_t)s->ntrns);
    size_t step = s->idat_max ? s->idat_max : zn;
    for (size_t off = 0; off < zn; off += step) {
        if (s->empty_idats > (off == 0))
            bb_chunk(&out, "IDAT", "", 0);
        bb_chunk(&out, "IDAT", zd + off, zn - off < step ? zn - off : step);
    }
    if (s->empty_idats)
        bb_chunk(&out, "IDAT", "", 0);
    if (s->trns && s->trns_after_idat)
        bb_chunk(&out, "tRNS", s->trns, (size_t)s->ntrns);
    if (s->after)
        bb_chunk(&out, s->after, "world", 5);
    if (!s->no_iend)
        bb_chunk(&out, "IEND", "", 0);
    free(zd);
    free(z.p);
    *len = out.n;
    return out.p;
}

/* stb_image's own decode of a PNG, as vkimg_load calls it (U16 for 16-bit files):
 * the reference. 0 or -1. */
static int stb_decode(const unsigned char *p, size_t n, vkimg_image *ref)
{
    memset(ref, 0, sizeof *ref);
    int w, h, c, is16 = stbi_is_16_bit_from_memory(p, (int)n);
    void *d = is16 ? (void *)stbi_load_16_from_memory(p, (int)n, &w, &h, &c, 0)
                   : (void *)stbi_load_from_memory(p, (int)n, &w, &h, &c, 0);
    if (!d)
        return -1;
    *ref = (vkimg_image){ w, h, c, is16 ? VKIMG_U16 : VKIMG_U8, d };
    return 0;
}

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

/* ---------------------------------------------------------------- JPEG (TurboJPEG) */

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
                vkimg_save_opts so = { q, -1 };
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
    vkimg_load_opts lo = { 333 * 222 - 1 };
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

/* ---------------------------------------------------------------- threads */

typedef struct io_job {
    const unsigned char *png, *jpg;
    size_t npng, njpg;
    const vkimg_image *png_ref, *jpg_ref, *src;
    const unsigned char *enc_ref;
    size_t nenc_ref;
    int bad;
} io_job;

static void *io_thread(void *arg)
{
    io_job *j = arg;
    vkimg_err e;
    for (int it = 0; it < 20; it++) {
        vkimg_image a, b;
        j->bad += vkimg_load_memory(j->png, j->npng, "t.png", NULL, &a, &e) || !same_image(&a, j->png_ref);
        j->bad += vkimg_load_memory(j->jpg, j->njpg, "t.jpg", NULL, &b, &e) || !same_image(&b, j->jpg_ref);
        vkimg_image_free(&a);
        vkimg_image_free(&b);
        unsigned char *out;
        size_t n;
        j->bad += vki_jpeg_encode(j->src, 80, &out, &n, &e) || n != j->nenc_ref || memcmp(out, j->enc_ref, n);
        free(out);
    }
    return NULL;
}

/* Decodes (PNG fast path, TurboJPEG) and encodes on 4 threads at once: the same
 * results as on one (no shared state). */
static void test_io_threads(void)
{
    vkimg_err e;
    vkimg_image src, png_ref, jpg_ref;
    make_image(&src, 150, 90, 3, VKIMG_U8, 1, 31337);
    unsigned char *png, *jpg;
    size_t npng, njpg;
    CHECK(vki_png_encode(&src, 3, &png, &npng, &e) == 0, "png: %s", e.msg);
    CHECK(vki_jpeg_encode(&src, 80, &jpg, &njpg, &e) == 0, "jpg: %s", e.msg);
    CHECK(vkimg_load_memory(png, npng, "r.png", NULL, &png_ref, &e) == 0, "png ref: %s", e.msg);
    CHECK(vkimg_load_memory(jpg, njpg, "r.jpg", NULL, &jpg_ref, &e) == 0, "jpg ref: %s", e.msg);
    io_job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (io_job){ png, jpg, npng, njpg, &png_ref, &jpg_ref, &src, jpg, njpg, 0 };
        CHECK(pthread_create(&th[i], NULL, io_thread, &jobs[i]) == 0, "pthread_create");
    }
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        bad += jobs[i].bad;
    }
    CHECK(bad == 0, "%d wrong results on 4 threads", bad);
    free(png);
    free(jpg);
    vkimg_image_free(&src);
    vkimg_image_free(&png_ref);
    vkimg_image_free(&jpg_ref);
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
    test_png_fast();
    test_png_fast_damage();
    test_jpeg();
    test_io_threads();
    rm_rf(g_dir);
    return t_done("test_io");
}
