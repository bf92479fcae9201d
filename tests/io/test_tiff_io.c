/* TIFF (src/io/tiff.c), against libtiff as the independent implementation. No device.
 *
 *  - Decoding: files written by libtiff in every layout vkimg reads (strips of 1,
 *    3 and all rows, tiles of 16 x 16 and 32 x 48 with partial edge tiles; chunky
 *    and planar; little-endian, big-endian and BigTIFF; uncompressed, LZW, Deflate
 *    with and without predictor 2, PackBits) of 8 and 16-bit samples and 32-bit
 *    floats (predictor 3 with Deflate), 1-4 channels, sizes 1x1, 1xN, Nx1, primes
 *    and one over 1024 wide: the pixels exactly as written (integers) or bit for bit
 *    (floats). MinIsWhite of 1, 4, 8 and 16 bits, palettes of 2, 4 and 8 bits (a
 *    16-bit colour map and one of 8-bit values), CMYK, associated alpha (un-
 *    premultiplied: the reference computed here in double precision) and a second
 *    extra sample (dropped): each against its conversion computed here. JPEG
 *    strips and tiles (gray, RGB, YCbCr): exactly libtiff's own RGB decode. CCITT
 *    (compression 2, 3 1D and 2D with and without fill bits, 4) of widths 1 to 5000,
 *    one row or many, strips and tiles, MinIsWhite and MinIsBlack, FillOrder 2, of
 *    random pixels, runs at the codes' edges (63/64, 1728/1792, 2560/2624 and more),
 *    all white, all black, alternating pixels and rows made from the one above (the
 *    2D modes): exactly libtiff's own decode (TIFFReadScanline, TIFFReadTile); streams
 *    written here code by code for what libtiff skips (bits before an EOL) or misreads
 *    (a compression 2 strip's last row) and what vkimg refuses (runs past a row, EOLs
 *    and EOFB inside the rows, a pass at the row's end, uncompressed mode, bad codes,
 *    data ending early, fewer bytes than the rows' fewest bits).
 *  - Writing: vki_tiff_encode(_ex) of u8, u16 and f32 images of 1-4 channels and
 *    awkward sizes, Deflate and uncompressed, read back by libtiff: the pixels, the
 *    tags (compression, predictor, extra samples, sample format, photometric) and the
 *    ICC profile byte for byte; vki_meta_read gives the profile back, and the
 *    orientation of files libtiff tags with each of 1..8 in both byte orders.
 *  - Hostile input: every cut of small files of each layout, and a thousand
 *    seeded byte changes of each, refused cleanly or decoded to the header's size
 *    (CCITT files: to libtiff's pixels, where libtiff reads the changed file);
 *    a header claiming 100000 x 100000 in 200 bytes refused by --max-pixels before
 *    anything is allocated; the limit at its boundary; unsupported compressions and
 *    sample formats refused by name.
 *  - Through files: vkimg_save to .tif / .tiff and vkimg_load_meta. */
#include "exif_util.h"
#include "io_util.h"
#include "io/io_priv.h"
#include "io/meta.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tiffio.h>

static unsigned long long g_seed = 0x7f4a7c159e3779b9ull;

static unsigned rnd(unsigned n) { return n ? (unsigned)(t_rand(&g_seed) >> 32) % n : 0; }

static char g_tdir[] = "/tmp/vkimg-test-tiff-XXXXXX";

static char g_tiff_msg[256]; /* libtiff's last message, for the failures' text */

static int g_tiff_warnings; /* libtiff's warnings so far */

static void quiet(const char *m, const char *f, va_list ap)
{
    (void)m;
    vsnprintf(g_tiff_msg, sizeof g_tiff_msg, f, ap);
}

static void warned(const char *m, const char *f, va_list ap)
{
    g_tiff_warnings++;
    quiet(m, f, ap);
}

static int g_tiff_errors; /* libtiff's errors so far */

static void counted(const char *m, const char *f, va_list ap)
{
    g_tiff_errors++;
    quiet(m, f, ap);
}

/* ------------------------------------------------------------ a file by libtiff */

typedef struct spec {
    int w, h, spp, bps; /* samples a pixel (colour + extra), bits a sample */
    int fmt;            /* SAMPLEFORMAT_UINT or _IEEEFP */
    int photo;          /* PHOTOMETRIC_* */
    int comp, pred;     /* COMPRESSION_*, PREDICTOR_* (1: none) */
    int planar;         /* 1 chunky, 2 planar */
    int rows;           /* rows a strip (0: tiles) */
    int tw, th;         /* tile size */
    const char *mode;   /* "w", "wb", "w8", "wb8" */
    int extra[2], nextra;
    int orientation;    /* 0: no tag */
    const unsigned char *icc;
    size_t icc_len;
    const uint16_t *cmap; /* 3 << bps entries */
    int jpeg_ycbcr;     /* PHOTOMETRIC_YCBCR written from RGB (JPEGCOLORMODE_RGB) */
    int fillorder;      /* 0: no tag; FILLORDER_LSB2MSB: libtiff writes each byte bit-reversed */
    int faxopts;        /* CCITT fax 3: Group3Options (T4Options) */
    int yres;           /* 0: no tag (CCITT fax 3 2D: libtiff codes 1 row in 2 1D, in 4 above 150 dpi) */
    int retag;          /* the chunks' offsets and byte counts under the other layout's tags (retag_chunks) */
} spec;

/* Bytes a sample in memory (1-bit to 8-bit: one byte each, packed by pack_row) */
static size_t bytes_of(const spec *s) { return s->bps <= 8 ? 1 : (size_t)s->bps / 8; }

/* A row of n samples of s->bps bits from one byte (or word) a sample, MSB first */
static void pack_row(const spec *s, const unsigned char *src, size_t n, unsigned char *dst)
{
    if (s->bps >= 8) {
        memcpy(dst, src, n * bytes_of(s));
        return;
    }
    memset(dst, 0, (n * (size_t)s->bps + 7) / 8);
    for (size_t i = 0; i < n; i++) {
        const size_t bit = i * (size_t)s->bps;
        dst[bit / 8] |= (unsigned char)(src[i] << (8 - s->bps - bit % 8));
    }
}

/* Writes img (w x h x spp samples, bytes_of each, host order) as s says: 0 or -1 */
static int write_tiff(const char *path, const spec *s, const void *img)
{
    TIFF *t = TIFFOpen(path, s->mode);
    if (!t)
        return -1;
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)s->w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)s->h);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)s->spp);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)s->bps);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, (uint16_t)s->fmt);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, (uint16_t)(s->jpeg_ycbcr ? PHOTOMETRIC_YCBCR : s->photo));
    TIFFSetField(t, TIFFTAG_COMPRESSION, (uint16_t)s->comp);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, (uint16_t)s->planar);
    if (s->comp == COMPRESSION_JPEG) {
        TIFFSetField(t, TIFFTAG_JPEGQUALITY, 90);
        if (s->jpeg_ycbcr)
            TIFFSetField(t, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    }
    if (s->pred > 1)
        TIFFSetField(t, TIFFTAG_PREDICTOR, (uint16_t)s->pred);
    if (s->nextra) {
        uint16_t ex[2] = { (uint16_t)s->extra[0], (uint16_t)s->extra[1] };
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, (uint16_t)s->nextra, ex);
    }
    if (s->orientation)
        TIFFSetField(t, TIFFTAG_ORIENTATION, (uint16_t)s->orientation);
    if (s->fillorder)
        TIFFSetField(t, TIFFTAG_FILLORDER, (uint16_t)s->fillorder);
    if (s->comp == COMPRESSION_CCITTFAX3)
        TIFFSetField(t, TIFFTAG_GROUP3OPTIONS, (uint32_t)s->faxopts);
    if (s->yres)
        TIFFSetField(t, TIFFTAG_YRESOLUTION, (float)s->yres);
    if (s->icc_len)
        TIFFSetField(t, TIFFTAG_ICCPROFILE, (uint32_t)s->icc_len, s->icc);
    if (s->cmap) {
        const size_t n = (size_t)1 << s->bps;
        TIFFSetField(t, TIFFTAG_COLORMAP, s->cmap, s->cmap + n, s->cmap + 2 * n);
    }
    if (s->photo == PHOTOMETRIC_SEPARATED)
        TIFFSetField(t, TIFFTAG_INKSET, INKSET_CMYK);
    const size_t bs = bytes_of(s);
    const int sp = s->planar == 2 ? 1 : s->spp, planes = s->planar == 2 ? s->spp : 1;
    int ok = 1;
    if (s->rows) {
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)s->rows);
        const size_t rowb = ((size_t)s->w * (size_t)sp * (size_t)s->bps + 7) / 8;
        unsigned char *row = malloc(rowb + 16), *tmp = malloc((size_t)s->w * (size_t)sp * bs + 16);
        for (int p = 0; p < planes && ok; p++)
            for (int y = 0; y < s->h && ok; y++) {
                for (int x = 0; x < s->w; x++)
                    for (int k = 0; k < sp; k++) {
                        const size_t src = ((size_t)y * s->w + x) * (size_t)s->spp + (size_t)(s->planar == 2 ? p : k);
                        memcpy(tmp + ((size_t)x * sp + k) * bs, (const unsigned char *)img + src * bs, bs);
                    }
                pack_row(s, tmp, (size_t)s->w * (size_t)sp, row);
                ok = TIFFWriteScanline(t, row, (uint32_t)y, (uint16_t)p) >= 0;
            }
        free(row);
        free(tmp);
    } else {
        TIFFSetField(t, TIFFTAG_TILEWIDTH, (uint32_t)s->tw);
        TIFFSetField(t, TIFFTAG_TILELENGTH, (uint32_t)s->th);
        const size_t tb = (size_t)TIFFTileSize(t);
        unsigned char *tile = calloc(1, tb + 16), *tmp = calloc((size_t)s->tw * (size_t)sp * bs + 16, 1);
        const size_t rowb = ((size_t)s->tw * (size_t)sp * (size_t)s->bps + 7) / 8;
        for (int p = 0; p < planes && ok; p++)
            for (int ty = 0; ty < s->h && ok; ty += s->th)
                for (int tx = 0; tx < s->w && ok; tx += s->tw) {
                    memset(tile, 0, tb);
                    for (int y = 0; y < s->th; y++) {
                        memset(tmp, 0, (size_t)s->tw * (size_t)sp * bs);
                        for (int x = 0; x < s->tw; x++)
                            for (int k = 0; k < sp; k++) {
                                if (tx + x >= s->w || ty + y >= s->h)
                                    continue;
                                const size_t src = ((size_t)(ty + y) * s->w + (size_t)(tx + x)) * (size_t)s->spp +
                                                   (size_t)(s->planar == 2 ? p : k);
                                memcpy(tmp + ((size_t)x * sp + k) * bs, (const unsigned char *)img + src * bs, bs);
                            }
                        pack_row(s, tmp, (size_t)s->tw * (size_t)sp, tile + (size_t)y * rowb);
                    }
                    ok = TIFFWriteTile(t, tile, (uint32_t)tx, (uint32_t)ty, 0, (uint16_t)p) >= 0;
                }
        free(tile);
        free(tmp);
    }
    TIFFClose(t);
    return ok ? 0 : -1;
}

/* Random samples (a third of the images smooth, so that they compress): w x h x
 * spp, bytes_of each, host order; floats in [-0.5, 1.5) */
static void *make_samples(const spec *s)
{
    const size_t n = (size_t)s->w * (size_t)s->h * (size_t)s->spp, bs = bytes_of(s);
    unsigned char *p = malloc(n * bs + 1);
    const int smooth = rnd(3) == 0;
    const unsigned max = s->fmt == SAMPLEFORMAT_IEEEFP ? 0 : s->bps >= 16 ? 65535 : (1u << s->bps) - 1;
    for (size_t i = 0; i < n; i++) {
        const size_t px = i / (size_t)s->spp;
        const unsigned v = smooth ? (unsigned)(px * 7 + i % (size_t)s->spp * 50) : (unsigned)(t_rand(&g_seed) >> 16);
        if (s->fmt == SAMPLEFORMAT_IEEEFP) {
            const float f = (float)((double)(v & 0xffff) / 32768.0 - 0.5);
            memcpy(p + i * 4, &f, 4);
        } else if (bs == 2) {
            const uint16_t u = (uint16_t)(v % (max + 1));
            memcpy(p + i * 2, &u, 2);
        } else {
            p[i] = (unsigned char)(v % (max + 1));
        }
    }
    return p;
}

/* The image vkimg should give, computed here: c channels of fmt */
static int want_channels(const spec *s)
{
    const int colour = s->photo == PHOTOMETRIC_MINISBLACK || s->photo == PHOTOMETRIC_MINISWHITE ? 1 : 3;
    const int ncolour = s->photo == PHOTOMETRIC_SEPARATED ? 4 : s->photo == PHOTOMETRIC_PALETTE ? 1 : colour;
    return colour + (s->spp > ncolour ? 1 : 0);
}

static double sample_at(const spec *s, const void *img, size_t i)
{
    const size_t bs = bytes_of(s);
    const unsigned char *p = (const unsigned char *)img + i * bs;
    if (s->fmt == SAMPLEFORMAT_IEEEFP) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    if (bs == 2) {
        uint16_t u;
        memcpy(&u, p, 2);
        return u;
    }
    return *p;
}

/* Compares vkimg's image with the conversion of img: the count of samples apart */
static long compare(const spec *s, const void *img, const vkimg_image *im)
{
    const int c = want_channels(s);
    const bool fl = s->fmt == SAMPLEFORMAT_IEEEFP;
    const double max = fl ? 1.0 : s->bps == 16 ? 65535.0 : 255.0, inmax = fl ? 1.0 : (double)((1u << (s->bps > 16 ? 16 : s->bps)) - 1);
    const int ncolour = s->photo == PHOTOMETRIC_SEPARATED ? 4 : s->photo == PHOTOMETRIC_PALETTE ? 1 : c == 2 || c == 4 ? c - 1 : c;
    const bool alpha = s->spp > ncolour, assoc = alpha && s->nextra && s->extra[0] == EXTRASAMPLE_ASSOCALPHA;
    long bad = 0;
    for (size_t px = 0; px < (size_t)s->w * (size_t)s->h; px++) {
        double v[5] = { 0 }, out[4] = { 0 };
        for (int k = 0; k < s->spp && k < 5; k++)
            v[k] = sample_at(s, img, px * (size_t)s->spp + (size_t)k);
        /* to the output's range */
        const double scale = s->photo == PHOTOMETRIC_PALETTE ? 1.0 : max / inmax;
        double a = alpha ? v[ncolour] * (s->photo == PHOTOMETRIC_PALETTE ? 255.0 / inmax : scale) : max;
        switch (s->photo) {
        case PHOTOMETRIC_MINISWHITE: out[0] = max - v[0] * scale; break;
        case PHOTOMETRIC_MINISBLACK: out[0] = v[0] * scale; break;
        case PHOTOMETRIC_RGB: out[0] = v[0] * scale, out[1] = v[1] * scale, out[2] = v[2] * scale; break;
        case PHOTOMETRIC_PALETTE: {
            const size_t n = (size_t)1 << s->bps;
            bool eight = true;
            for (size_t k = 0; k < 3 * n; k++)
                eight = eight && s->cmap[k] <= 255;
            for (int k = 0; k < 3; k++) {
                const unsigned e = s->cmap[(size_t)k * n + (size_t)v[0]];
                out[k] = eight ? e : e >> 8;
            }
            break;
        }
        default: /* CMYK */
            for (int k = 0; k < 3; k++)
                out[k] = floor((max - v[k]) * (max - v[3]) / max + 0.5);
        }
        if (assoc)
            for (int k = 0; k < (alpha ? c - 1 : c); k++)
                out[k] = fl ? (a != 0 ? out[k] / a : 0) : a != 0 ? fmin(max, floor(out[k] * max / a + 0.5)) : 0;
        if (alpha)
            out[c - 1] = a;
        for (int k = 0; k < c; k++) {
            const size_t at = px * (size_t)c + (size_t)k;
            double got;
            if (im->fmt == VKIMG_F32) {
                float f = ((const float *)im->data)[at];
                got = f;
                if (!assoc && s->photo != PHOTOMETRIC_MINISWHITE) { /* bit for bit */
                    float w = (float)out[k];
                    bad += memcmp(&f, &w, 4) != 0;
                    continue;
                }
                bad += fabs(got - out[k]) > 1e-6 * fmax(1.0, fabs(out[k]));
                continue;
            }
            got = im->fmt == VKIMG_U16 ? ((const uint16_t *)im->data)[at] : ((const unsigned char *)im->data)[at];
            bad += got != out[k];
        }
    }
    return bad;
}

static int g_cases;

/* vki_tiff_decode of the file at path (its bytes read, then freed), named name in messages */
static int decode_file(const char *path, const char *name, vkimg_image *im, vkimg_err *e)
{
    size_t n;
    unsigned char *b = read_all(path, &n);
    const int rc = vki_tiff_decode(b, n, name, 0, im, e);
    free(b);
    return rc;
}

/* A TIFF file's 16 and 32-bit values (le: little-endian) */
static unsigned xrd16(const unsigned char *p, int le) { return le ? p[0] | p[1] << 8 : p[0] << 8 | p[1]; }
static uint32_t xrd32(const unsigned char *p, int le)
{
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
              : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Renames IFD0's StripOffsets and StripByteCounts to TileOffsets and TileByteCounts
 * and the other way round, as in libtiff's tiled quad-tile.tif and cramps-tile.tif,
 * which give their tiles' offsets as StripOffsets (libtiff reads both tags into one
 * array). The entries stay where they are (out of order: libtiff only warns). */
static int retag_chunks(const char *path)
{
    size_t n;
    unsigned char *b = read_all(path, &n);
    int rc = -1;
    if (b && n >= 16) {
        const int le = b[0] == 'I', big = xrd16(b + 2, le) == 43; /* BigTIFF: 8-byte offsets and counts */
        /* the first IFD's offset, at 4 (a 64-bit one at 8 in BigTIFF: its low half, as these files are small) */
        const uint64_t off = big ? xrd32(b + (le ? 8 : 12), le) : xrd32(b + 4, le);
        const size_t hd = big ? 8 : 2, es = big ? 20 : 12; /* the entry count's bytes, an entry's */
        const unsigned cnt = off + hd <= n ? xrd16(b + off + (le ? 0 : hd - 2), le) : 0;
        int swapped = 0;
        for (unsigned i = 0; i < cnt && off + hd + es * (i + 1) <= n; i++) {
            unsigned char *en = b + off + hd + es * i;
            const unsigned tag = xrd16(en, le);
            const unsigned to = tag == 273 ? 324 : tag == 324 ? 273 : tag == 279 ? 325 : tag == 325 ? 279 : 0;
            if (to) {
                en[le ? 0 : 1] = (unsigned char)(to & 255);
                en[le ? 1 : 0] = (unsigned char)(to >> 8);
                swapped++;
            }
        }
        FILE *f = swapped == 2 ? fopen(path, "wb") : NULL;
        rc = f && fwrite(b, 1, n, f) == n ? 0 : -1;
        if (f && fclose(f))
            rc = -1;
    }
    free(b);
    return rc;
}

/* Writes s with libtiff, decodes with vkimg, compares */
static void decode_case(int line, spec s)
{
    char path[96];
    snprintf(path, sizeof path, "%s/d%d.tif", g_tdir, g_cases++);
    void *img = make_samples(&s);
    if (write_tiff(path, &s, img) || (s.retag && retag_chunks(path))) {
        CHECK(0, "line %d: libtiff could not write %dx%d spp %d bps %d comp %d", line, s.w, s.h, s.spp, s.bps, s.comp);
        free(img);
        return;
    }
    vkimg_image im;
    vkimg_err e;
    const int rc = decode_file(path, "t.tif", &im, &e);
    const int c = want_channels(&s);
    const vkimg_fmt fmt = s.fmt == SAMPLEFORMAT_IEEEFP ? VKIMG_F32 : s.bps == 16 ? VKIMG_U16 : VKIMG_U8;
    CHECK(rc == 0, "line %d (%s %dx%d spp %d bps %d comp %d pred %d planar %d rows %d tile %dx%d photo %d): %s", line,
          s.mode, s.w, s.h, s.spp, s.bps, s.comp, s.pred, s.planar, s.rows, s.tw, s.th, s.photo, e.msg);
    if (!rc) {
        CHECK(im.w == s.w && im.h == s.h && im.c == c && im.fmt == fmt, "line %d: %dx%dx%d %d, want %dx%dx%d %d", line,
              im.w, im.h, im.c, im.fmt, s.w, s.h, c, fmt);
        if (im.w == s.w && im.h == s.h && im.c == c && im.fmt == fmt) {
            const long bad = compare(&s, img, &im);
            CHECK(bad == 0, "line %d (%s %dx%d spp %d bps %d comp %d pred %d planar %d rows %d tile %dx%d photo %d): %ld "
                  "samples differ", line, s.mode, s.w, s.h, s.spp, s.bps, s.comp, s.pred, s.planar, s.rows, s.tw, s.th,
                  s.photo, bad);
        }
        vkimg_image_free(&im);
    }
    free(img);
    remove(path);
}
#define DECODE(...) decode_case(__LINE__, (spec){ __VA_ARGS__ })

static void test_layouts(void)
{
    static const struct { int w, h; } sizes[] = { { 1, 1 }, { 1, 29 }, { 31, 1 }, { 37, 23 }, { 101, 7 }, { 1031, 3 } };
    static const int comps[] = { COMPRESSION_NONE, COMPRESSION_LZW, COMPRESSION_ADOBE_DEFLATE, COMPRESSION_DEFLATE,
                                 COMPRESSION_PACKBITS };
    static const char *const modes[] = { "w", "wb", "w8", "wb8" };
    for (int it = 0; it < 360; it++) {
        spec s = { .w = sizes[it % 6].w, .h = sizes[it / 6 % 6].h, .comp = comps[it % 5], .mode = modes[it / 5 % 4] };
        const int kind = it / 20 % 3; /* 8-bit, 16-bit, float */
        s.fmt = kind == 2 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT;
        s.bps = kind == 0 ? 8 : kind == 1 ? 16 : 32;
        s.spp = 1 + it / 3 % 4;
        s.photo = s.spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
        if (s.spp == 2 || s.spp == 4) {
            s.nextra = 1;
            s.extra[0] = it % 2 ? EXTRASAMPLE_UNASSALPHA : EXTRASAMPLE_UNSPECIFIED;
        }
        s.planar = it / 7 % 2 ? 2 : 1;
        s.pred = 1;
        if (s.comp == COMPRESSION_LZW || s.comp == COMPRESSION_ADOBE_DEFLATE || s.comp == COMPRESSION_DEFLATE)
            s.pred = it / 11 % 2 ? (kind == 2 ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL) : 1;
        /* libtiff 4.5 swaps a big-endian file's floats before its floating-point predictor
         * when writing, and reads them back through the predictor unswapped, so that its
         * own reader does not give back what it wrote (vkimg reads such files as libtiff
         * does): little-endian ones only */
        if (s.pred == PREDICTOR_FLOATINGPOINT && s.mode[1] == 'b')
            s.mode = s.mode[2] ? "w8" : "w";
        const int lay = it / 13 % 4;
        if (lay == 0)
            s.rows = 1;
        else if (lay == 1)
            s.rows = 3;
        else if (lay == 2)
            s.rows = s.h;
        else
            s.tw = it % 2 ? 16 : 32, s.th = it % 2 ? 16 : 48;
        decode_case(__LINE__, s);
        if (it % 4 == 1) { /* FillOrder 2 (libtiff reverses the bits of each byte it writes) */
            s.fillorder = FILLORDER_LSB2MSB;
            decode_case(__LINE__, s);
            s.fillorder = 0;
        }
        if (it % 3 == 2) { /* tiles located by StripOffsets, strips by TileOffsets */
            s.retag = 1;
            decode_case(__LINE__, s);
        }
    }
}

static void test_photometric(void)
{
    static uint16_t cmap16[3 * 256], cmap8[3 * 256];
    for (int i = 0; i < 3 * 256; i++) {
        cmap16[i] = (uint16_t)(t_rand(&g_seed) >> 48);
        cmap8[i] = (uint16_t)(t_rand(&g_seed) >> 56);
    }
    for (int bps = 1; bps <= 16; bps *= 2) { /* MinIsWhite and MinIsBlack of 1..16 bits */
        if (bps == 2 || bps == 4 || bps == 1 || bps == 8 || bps == 16) {
            DECODE(37, 5, 1, bps, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISWHITE, COMPRESSION_NONE, 1, 1, 2, .mode = "w");
            DECODE(9, 11, 1, bps, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_LZW, 1, 1, 4, .mode = "wb");
            DECODE(33, 17, 1, bps, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_PACKBITS, 1, 1, 0, 32, 16,
                   .mode = "w");
            /* FillOrder 2: the pixels of a byte in the other order (Pillow's 2 and 4-bit files) */
            DECODE(37, 5, 1, bps, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_NONE, 1, 1, 2, .mode = "w",
                   .fillorder = FILLORDER_LSB2MSB);
            DECODE(9, 11, 1, bps, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISWHITE, COMPRESSION_LZW, 1, 1, 4, .mode = "wb",
                   .fillorder = FILLORDER_LSB2MSB);
        }
    }
    for (int bps = 1; bps <= 8; bps *= 2) /* palettes of 1..8-bit indices, 16-bit and 8-bit maps */
        for (int m = 0; m < 2; m++) {
            spec s = { 23, 13, 1, bps, SAMPLEFORMAT_UINT, PHOTOMETRIC_PALETTE, COMPRESSION_LZW, 1, 1, 5, .mode = "w" };
            static uint16_t map[3 * 256];
            const size_t n = (size_t)1 << bps;
            for (int k = 0; k < 3; k++)
                memcpy(map + (size_t)k * n, (m ? cmap8 : cmap16) + k * 256, n * 2);
            s.cmap = map;
            decode_case(__LINE__, s);
        }
    /* CMYK 8 and 16-bit, with an alpha */
    DECODE(19, 7, 4, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_SEPARATED, COMPRESSION_NONE, 1, 1, 3, .mode = "w");
    DECODE(19, 7, 4, 16, SAMPLEFORMAT_UINT, PHOTOMETRIC_SEPARATED, COMPRESSION_ADOBE_DEFLATE, 2, 1, 7, .mode = "wb");
    DECODE(19, 7, 5, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_SEPARATED, COMPRESSION_LZW, 1, 2, 2, .mode = "w",
           .extra = { EXTRASAMPLE_UNASSALPHA }, .nextra = 1);
    /* associated alpha, 8/16-bit and float; a second extra sample dropped */
    DECODE(41, 9, 4, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, COMPRESSION_NONE, 1, 1, 9, .mode = "w",
           .extra = { EXTRASAMPLE_ASSOCALPHA }, .nextra = 1);
    DECODE(41, 9, 2, 16, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_LZW, 2, 2, 9, .mode = "wb",
           .extra = { EXTRASAMPLE_ASSOCALPHA }, .nextra = 1);
    DECODE(41, 9, 4, 32, SAMPLEFORMAT_IEEEFP, PHOTOMETRIC_RGB, COMPRESSION_ADOBE_DEFLATE, 3, 1, 9, .mode = "w",
           .extra = { EXTRASAMPLE_ASSOCALPHA }, .nextra = 1);
    DECODE(13, 6, 5, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, COMPRESSION_PACKBITS, 1, 1, 6, .mode = "w",
           .extra = { EXTRASAMPLE_UNASSALPHA, EXTRASAMPLE_UNSPECIFIED }, .nextra = 2);
    DECODE(13, 6, 5, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, COMPRESSION_PACKBITS, 1, 2, 6, .mode = "w",
           .extra = { EXTRASAMPLE_UNASSALPHA, EXTRASAMPLE_UNSPECIFIED }, .nextra = 2);
}

/* JPEG strips and tiles: exactly what libtiff itself decodes to RGB (or gray) */
static void jpeg_case(int line, spec s)
{
    char path[96];
    snprintf(path, sizeof path, "%s/j%d.tif", g_tdir, g_cases++);
    s.bps = 8;
    s.fmt = SAMPLEFORMAT_UINT;
    s.comp = COMPRESSION_JPEG;
    s.planar = 1;
    s.pred = 1;
    unsigned char *img = make_samples(&s);
    /* smooth, so that JPEG keeps most of it (not needed for the comparison) */
    if (write_tiff(path, &s, img)) {
        CHECK(0, "line %d: libtiff could not write a JPEG TIFF: %s", line, g_tiff_msg);
        free(img);
        return;
    }
    const int c = s.spp;
    unsigned char *ref = malloc((size_t)s.w * s.h * (size_t)c);
    TIFF *t = TIFFOpen(path, "r");
    bool ok = t != NULL;
    if (ok && s.jpeg_ycbcr)
        TIFFSetField(t, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    const size_t rowb = (size_t)s.w * (size_t)c;
    if (ok && s.rows) {
        for (int y = 0; y < s.h && ok; y++)
            ok = TIFFReadScanline(t, ref + (size_t)y * rowb, (uint32_t)y, 0) >= 0;
    } else if (ok) {
        unsigned char *tile = malloc((size_t)TIFFTileSize(t));
        for (int ty = 0; ty < s.h && ok; ty += s.th)
            for (int tx = 0; tx < s.w && ok; tx += s.tw) {
                ok = TIFFReadTile(t, tile, (uint32_t)tx, (uint32_t)ty, 0, 0) >= 0;
                for (int y = 0; ok && y < s.th && ty + y < s.h; y++)
                    for (int x = 0; x < s.tw && tx + x < s.w; x++)
                        memcpy(ref + (size_t)(ty + y) * rowb + (size_t)(tx + x) * c,
                               tile + ((size_t)y * s.tw + x) * (size_t)c, (size_t)c);
            }
        free(tile);
    }
    if (t)
        TIFFClose(t);
    CHECK(ok, "line %d: libtiff could not read its JPEG TIFF", line);
    vkimg_image im;
    vkimg_err e;
    const int rc = decode_file(path, "j.tif", &im, &e);
    CHECK(rc == 0, "line %d: JPEG TIFF: %s", line, e.msg);
    if (!rc) {
        /* CMYK: libtiff's samples as they are, made RGB here as for uncompressed CMYK */
        const bool cmyk = s.photo == PHOTOMETRIC_SEPARATED;
        CHECK(im.w == s.w && im.h == s.h && im.c == (cmyk ? 3 : c) && im.fmt == VKIMG_U8 && ok &&
                  (cmyk ? compare(&s, ref, &im) == 0 : !memcmp(im.data, ref, (size_t)s.w * s.h * (size_t)c)),
              "line %d: JPEG TIFF %dx%dx%d (%s): not libtiff's pixels", line, s.w, s.h, c,
              s.rows ? "strips" : "tiles");
        vkimg_image_free(&im);
    }
    free(ref);
    free(img);
    remove(path);
}
#define JPEG(...) jpeg_case(__LINE__, (spec){ __VA_ARGS__ })

static void test_jpeg(void)
{
    JPEG(.w = 37, .h = 23, .spp = 3, .photo = PHOTOMETRIC_RGB, .rows = 8, .mode = "w");
    JPEG(.w = 37, .h = 23, .spp = 3, .photo = PHOTOMETRIC_RGB, .rows = 16, .mode = "w", .jpeg_ycbcr = 1);
    JPEG(.w = 70, .h = 50, .spp = 3, .photo = PHOTOMETRIC_RGB, .tw = 32, .th = 32, .mode = "wb", .jpeg_ycbcr = 1);
    JPEG(.w = 70, .h = 50, .spp = 1, .photo = PHOTOMETRIC_MINISBLACK, .tw = 16, .th = 16, .mode = "w");
    JPEG(.w = 1, .h = 1, .spp = 1, .photo = PHOTOMETRIC_MINISBLACK, .rows = 16, .mode = "w8");
    JPEG(.w = 131, .h = 17, .spp = 3, .photo = PHOTOMETRIC_RGB, .rows = 16, .mode = "w", .jpeg_ycbcr = 1);
    /* CMYK (as libvips writes it: InkSet 1, the inks as TIFF has them, not inverted) */
    JPEG(.w = 37, .h = 23, .spp = 4, .photo = PHOTOMETRIC_SEPARATED, .rows = 8, .mode = "w");
    JPEG(.w = 70, .h = 50, .spp = 4, .photo = PHOTOMETRIC_SEPARATED, .tw = 32, .th = 32, .mode = "wb");
    /* FillOrder 2 beside JPEG: libtiff writes and reads the JPEG data as it is */
    JPEG(.w = 37, .h = 23, .spp = 3, .photo = PHOTOMETRIC_RGB, .rows = 8, .mode = "w", .fillorder = FILLORDER_LSB2MSB);
}

/* ------------------------------------------------------------ CCITT */

/* libtiff's own decode of a file of one 1-bit sample a pixel (strips through
 * TIFFReadScanline, tiles through TIFFReadTile): one byte a pixel, the bit libtiff
 * gives (1 for a black run, whatever the photometric), with the size and photometric;
 * NULL where libtiff cannot read it whole, or reports an error reading it (its CCITT
 * decoder logs bad data and goes on, and TIFFReadTile takes its -1 for success) */
static unsigned char *libtiff_bits(const char *path, uint32_t *w, uint32_t *h, uint16_t *photo)
{
    const int errors = g_tiff_errors;
    TIFF *t = TIFFOpen(path, "r");
    if (!t)
        return NULL;
    uint16_t bps = 0, spp = 0;
    uint32_t tw = 0, th = 0;
    bool ok = TIFFGetField(t, TIFFTAG_IMAGEWIDTH, w) && TIFFGetField(t, TIFFTAG_IMAGELENGTH, h) &&
              TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bps) &&
              TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &spp) && TIFFGetField(t, TIFFTAG_PHOTOMETRIC, photo) &&
              bps == 1 && spp == 1 && *w && *h && (uint64_t)*w * *h <= (1u << 24);
    const bool tiled = ok && TIFFIsTiled(t);
    if (tiled)
        ok = TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw) && TIFFGetField(t, TIFFTAG_TILELENGTH, &th) && tw && th &&
             (uint64_t)tw * th <= (1u << 24);
    const tmsize_t bsize = ok ? (tiled ? TIFFTileSize(t) : TIFFScanlineSize(t)) : 0;
    unsigned char *px = ok && bsize > 0 ? malloc((size_t)*w * *h) : NULL, *buf = px ? malloc((size_t)bsize) : NULL;
    ok = ok && buf;
    for (uint32_t y = 0; ok && !tiled && y < *h; y++) {
        ok = TIFFReadScanline(t, buf, y, 0) >= 0;
        for (uint32_t x = 0; ok && x < *w; x++)
            px[(size_t)y * *w + x] = buf[x >> 3] >> (7 - (x & 7)) & 1;
    }
    const size_t trow = ok && tiled ? (size_t)TIFFTileRowSize(t) : 0;
    for (uint32_t ty = 0; ok && tiled && ty < *h; ty += th)
        for (uint32_t tx = 0; ok && tx < *w; tx += tw) {
            ok = TIFFReadTile(t, buf, tx, ty, 0, 0) >= 0;
            for (uint32_t y = 0; ok && y < th && ty + y < *h; y++)
                for (uint32_t x = 0; x < tw && tx + x < *w; x++)
                    px[(size_t)(ty + y) * *w + tx + x] = buf[y * trow + (x >> 3)] >> (7 - (x & 7)) & 1;
        }
    free(buf);
    TIFFClose(t);
    if (!ok || g_tiff_errors != errors) {
        free(px);
        return NULL;
    }
    return px;
}

/* Pixels of vkimg's gray image other than libtiff's bits make them: MinIsWhite 1 black, MinIsBlack 1 white */
static long ccitt_differ(const unsigned char *bits, uint16_t photo, const vkimg_image *im)
{
    long bad = 0;
    for (size_t i = 0; i < (size_t)im->w * (size_t)im->h; i++)
        bad += ((const unsigned char *)im->data)[i] != ((bits[i] ^ (photo == PHOTOMETRIC_MINISWHITE)) ? 255 : 0);
    return bad;
}

enum { P_RANDOM, P_RUNS, P_WHITE, P_BLACK, P_CHECKER, P_BOUNDARY, P_SHIFTED, P_COUNT };

/* Row y of pattern p (one byte a pixel, 0 or 1; up: the row above) */
static void bilevel_row(unsigned char *r, const unsigned char *up, int w, int y, int p)
{
    /* run lengths at the codes' edges: terminating 63, make-up 64..1728, extended make-up 1792..2560, repeated 2560 */
    static const int edges[] = { 1,    2,    63,   64,   65,   127,  128,  1663, 1664, 1665, 1727, 1728,
                                 1729, 1791, 1792, 1793, 2559, 2560, 2561, 2623, 2624, 2625, 5120, 5121 };
    const int ne = (int)(sizeof edges / sizeof edges[0]);
    if (p == P_SHIFTED && (!up || rnd(8) == 0))
        p = P_RUNS;
    switch (p) {
    case P_RANDOM:
        for (int x = 0; x < w; x++)
            r[x] = (unsigned char)rnd(2);
        break;
    case P_WHITE: case P_BLACK: memset(r, p == P_BLACK, (size_t)w); break;
    case P_CHECKER:
        for (int x = 0; x < w; x++)
            r[x] = (unsigned char)((x + y) & 1);
        break;
    case P_RUNS: case P_BOUNDARY: {
        unsigned char c = (unsigned char)rnd(2);
        for (int x = 0, k = y; x < w; c ^= 1) {
            const int len = p == P_BOUNDARY ? edges[k++ % ne] : rnd(4) ? 1 + (int)rnd(8) : 1 + (int)rnd(3000);
            const int n = len < w - x ? len : w - x;
            memset(r + x, c, (size_t)n);
            x += n;
        }
        break;
    }
    default: { /* the row above with each change moved by -4..4: vertical, pass and horizontal modes */
        int pos = 0;
        unsigned char c = 0;
        for (int x = 0; x < w; x++) {
            if (up[x] == (x ? up[x - 1] : 0))
                continue;
            int nx = x + (int)rnd(9) - 4;
            nx = nx < pos ? pos : nx > w ? w : nx;
            memset(r + pos, c, (size_t)(nx - pos));
            pos = nx;
            c ^= 1;
        }
        memset(r + pos, c, (size_t)(w - pos));
    }
    }
}

/* Writes pattern p as s says (1 bit, CCITT) with libtiff and decodes it with vkimg:
 * exactly libtiff's own decode of the file (which is the image written) */
static void ccitt_case(int line, spec s, int p)
{
    char path[96], desc[160];
    snprintf(path, sizeof path, "%s/c%d.tif", g_tdir, g_cases++);
    snprintf(desc, sizeof desc, "line %d (%dx%d comp %d options %d rows %d tile %dx%d photo %d fill %d pattern %d)", line,
             s.w, s.h, s.comp, s.faxopts, s.rows, s.tw, s.th, s.photo, s.fillorder, p);
    s.spp = 1, s.bps = 1, s.fmt = SAMPLEFORMAT_UINT, s.pred = 1, s.planar = 1;
    unsigned char *img = malloc((size_t)s.w * (size_t)s.h);
    for (int y = 0; y < s.h; y++)
        bilevel_row(img + (size_t)y * s.w, y ? img + (size_t)(y - 1) * s.w : NULL, s.w, y, p);
    if (write_tiff(path, &s, img)) {
        CHECK(0, "%s: libtiff could not write it: %s", desc, g_tiff_msg);
        free(img);
        return;
    }
    uint32_t lw = 0, lh = 0;
    uint16_t photo = (uint16_t)s.photo;
    unsigned char *bits = libtiff_bits(path, &lw, &lh, &photo);
    if (!bits) {
        /* libtiff 4.5.0 keeps room for roundup(width, 32) runs a row (twice that in
         * 2D; 4.5.1 has one more) and refuses a row of more: one of alternating pixels
         * from its first black one (a white run of 0 before them). vkimg decodes the
         * file libtiff wrote: the image written */
        CHECK(p == P_CHECKER, "%s: libtiff cannot read back what it wrote: %s", desc, g_tiff_msg);
        bits = img;
        img = NULL;
    }
    CHECK(!img || (lw == (uint32_t)s.w && lh == (uint32_t)s.h && !memcmp(bits, img, (size_t)s.w * s.h)),
          "%s: libtiff does not read back what it wrote", desc);
    vkimg_image im;
    vkimg_err e;
    const int rc = decode_file(path, "c.tif", &im, &e);
    CHECK(rc == 0, "%s: %s", desc, e.msg);
    if (!rc) {
        CHECK(im.w == s.w && im.h == s.h && im.c == 1 && im.fmt == VKIMG_U8 && bits && ccitt_differ(bits, photo, &im) == 0,
              "%s: not libtiff's pixels", desc);
        vkimg_image_free(&im);
    }
    free(bits);
    free(img);
    remove(path);
}

/* A one-strip file of n bytes of raw CCITT data: 0 or -1 */
static int raw_file(const char *path, int comp, int opts, int w, int h, const unsigned char *data, size_t n)
{
    TIFF *t = TIFFOpen(path, "w");
    if (!t)
        return -1;
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)h);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)1);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)1);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, (uint16_t)PHOTOMETRIC_MINISWHITE);
    TIFFSetField(t, TIFFTAG_COMPRESSION, (uint16_t)comp);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)h);
    if (comp == COMPRESSION_CCITTFAX3)
        TIFFSetField(t, TIFFTAG_GROUP3OPTIONS, (uint32_t)opts);
    if (comp == COMPRESSION_CCITTFAX4)
        TIFFSetField(t, TIFFTAG_GROUP4OPTIONS, (uint32_t)opts);
    const int ok = TIFFWriteRawStrip(t, 0, (void *)data, (tmsize_t)n) >= 0;
    TIFFClose(t);
    return ok ? 0 : -1;
}

/* Raw CCITT bits ('0' and '1' as the standard writes the codes, spaces ignored;
 * padded with 0s to a byte) into data (cap bytes): the bytes, or 0 where too many */
static size_t pack_bits(const char *bits, unsigned char *data, size_t cap)
{
    size_t nb = 0;
    memset(data, 0, cap);
    for (const char *c = bits; *c; c++)
        if (*c == '0' || *c == '1') {
            if (nb / 8 >= cap)
                return 0;
            data[nb / 8] |= (unsigned char)((*c == '1') << (7 - nb % 8));
            nb++;
        }
    return (nb + 7) / 8;
}

/* What vkimg and libtiff make of a one-strip file of raw CCITT data (bits as
 * pack_bits takes them): vkimg's result (*rc, *im, *e) and libtiff's pixels (NULL
 * where it reports an error) with its warnings and errors reading them. libtiff
 * decodes the strip with two 0 bytes after it: it reads a code ahead, and where that
 * runs past the strip's end it counts the 0s it makes up as data, which in
 * compression 2 moves the next row's byte alignment (libtiff 4.5 reads the second row
 * of the file it writes for rows 000001 001111 as white); the bytes after a strip's
 * rows are never read by either. */
static unsigned char *ccitt_both(int line, int comp, int opts, int w, int h, const char *bits, int *rc, vkimg_image *im,
                                 vkimg_err *e, int *complaints)
{
    char path[96], padded[96];
    snprintf(path, sizeof path, "%s/raw%d.tif", g_tdir, g_cases);
    snprintf(padded, sizeof padded, "%s/raw%d_padded.tif", g_tdir, g_cases++);
    unsigned char data[512];
    const size_t nd = pack_bits(bits, data, sizeof data - 2);
    CHECK(nd && !raw_file(path, comp, opts, w, h, data, nd) && !raw_file(padded, comp, opts, w, h, data, nd + 2),
          "line %d: libtiff could not write the raw strip", line);
    *rc = decode_file(path, "raw.tif", im, e);
    const int before = g_tiff_errors + g_tiff_warnings;
    uint32_t lw = 0, lh = 0;
    uint16_t photo = 0;
    unsigned char *lt = libtiff_bits(padded, &lw, &lh, &photo);
    *complaints = g_tiff_errors + g_tiff_warnings - before;
    remove(path);
    remove(padded);
    return lt; /* (MinIsWhite: libtiff's 1 bits are black, vkimg's 0) */
}

/* A one-strip file of raw CCITT data: vkimg refuses it with a message holding want,
 * or (want NULL) decodes it to libtiff's pixels */
static void ccitt_raw(int line, int comp, int opts, int w, int h, const char *bits, const char *want)
{
    int rc, complaints;
    vkimg_image im;
    vkimg_err e;
    unsigned char *lt = ccitt_both(line, comp, opts, w, h, bits, &rc, &im, &e, &complaints);
    if (want)
        CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, want), "line %d: want '%s': %s", line, want, rc ? e.msg : "decoded");
    else
        CHECK(rc == 0 && lt && !complaints && ccitt_differ(lt, PHOTOMETRIC_MINISWHITE, &im) == 0,
              "line %d: not libtiff's pixels (%s)", line,
              rc ? e.msg : !lt ? "libtiff cannot read it" : complaints ? g_tiff_msg : "differ");
    if (!rc)
        vkimg_image_free(&im);
    free(lt);
}

/* ---- random CCITT streams against libtiff, zero-length runs among them */

/* T.4 table 2: the codes of white runs 0..9 and black runs 0..8 */
static const char *const g_wcode[10] = { "00110101", "000111", "0111", "1000", "1011",
                                         "1100",     "1110",   "1111", "10011", "10100" };
static const char *const g_bcode[9] = { "0000110111", "010", "11", "10", "011", "0011", "0010", "00011", "000101" };

typedef struct gen {
    char bits[4096];
    size_t nb;
    uint32_t ref[256], cur[256]; /* runs, as libtiff keeps them (the reference row with its imaginary 0) */
    int nref, ncur, w;
    int zeros;   /* zero-length runs written */
    bool broken; /* a code out of place written: no more rows */
} gen;

static void put_bits(gen *g, const char *s)
{
    for (; *s && g->nb + 1 < sizeof g->bits; s++)
        g->bits[g->nb++] = *s;
    g->bits[g->nb] = 0;
}

/* A run of r (0..8 black, 0..9 white) */
static void put_run(gen *g, bool black, int r)
{
    put_bits(g, black ? g_bcode[r] : g_wcode[r]);
    g->zeros += r == 0;
}

static int pick_run(int room, bool black)
{
    const int most = black ? 8 : 9, m = room < most ? room : most;
    return rnd(4) == 0 ? 0 : (int)rnd((unsigned)m + 1);
}

/* One 1D row: runs alternately white and black, often of 0 (a white and a black run
 * of 0 one after the other: libtiff drops the pair) */
static void gen_row_1d(gen *g)
{
    int a0 = 0;
    g->ncur = 0;
    for (bool black = false; a0 < g->w && g->ncur < 250; black = !black) {
        int r = pick_run(g->w - a0, black);
        if (g->ncur > 60) /* (finish) */
            r = (black ? 8 : 9) < g->w - a0 ? (black ? 8 : 9) : g->w - a0;
        put_run(g, black, r);
        g->cur[g->ncur++] = (uint32_t)r;
        a0 += r;
        if (a0 < g->w && black && g->ncur >= 2 && !g->cur[g->ncur - 1] && !g->cur[g->ncur - 2])
            g->ncur -= 2;
    }
}

/* One 2D row against g->ref, mostly what libtiff reads cleanly (its EXPAND2D: b1 the
 * end of a reference run, stepped as it steps it); now and then a code out of place */
static void gen_row_2d(gen *g)
{
    const int w = g->w;
    int a0 = 0, run = 0, pb = 0, b1 = (int)g->ref[pb++];
#define REFRUN(i) ((i) < g->nref ? (int)g->ref[i] : w) /* (past it: stop) */
    g->ncur = 0;
    while (a0 < w && !g->broken) {
        if (g->ncur > 200)
            g->broken = true;
        if (g->ncur)
            while (b1 <= a0 && b1 < w) {
                b1 += REFRUN(pb) + REFRUN(pb + 1);
                pb += 2;
            }
        const unsigned pick = rnd(20);
        if (pick == 0 && rnd(8) == 0) { /* out of place: a vertical code past the row's end, a stray EOL */
            put_bits(g, rnd(2) ? "0000011" : "000000000001");
            g->broken = true;
            return;
        }
        if (pick < 6 || g->ncur > 100) { /* horizontal: a0's colour first */
            const bool black = g->ncur & 1;
            const int r1 = g->ncur > 100 ? ((black ? 8 : 9) < w - a0 ? (black ? 8 : 9) : w - a0) : pick_run(w - a0, black);
            const int r2 = pick_run(w - a0 - r1, !black);
            put_bits(g, "001");
            put_run(g, black, r1);
            put_run(g, !black, r2);
            g->cur[g->ncur++] = (uint32_t)(run + r1);
            g->cur[g->ncur++] = (uint32_t)r2;
            a0 += r1 + r2;
            run = 0;
            continue;
        }
        if (pick < 9 && pb + 1 < g->nref) { /* pass: a0 to b2, the run goes on */
            const int b2 = b1 + (int)g->ref[pb++];
            put_bits(g, "0001");
            run += b2 - a0;
            a0 = b2;
            b1 = b2 + REFRUN(pb);
            pb++;
            continue;
        }
        static const char *const vc[7] = { "0000010", "000010", "010", "1", "011", "000011", "0000011" };
        int d = (int)rnd(7) - 3;
        if (rnd(2))
            d = d < -1 ? -1 : d > 1 ? 1 : d;
        if (b1 + d < a0 || b1 + d > w)
            d = 0;
        if (b1 < a0 || b1 > w) { /* (no vertical code fits: horizontal next time) */
            put_bits(g, "001");
            const bool black = g->ncur & 1;
            const int r1 = (black ? 8 : 9) < w - a0 ? (black ? 8 : 9) : w - a0;
            put_run(g, black, r1);
            put_run(g, !black, 0);
            g->cur[g->ncur++] = (uint32_t)(run + r1);
            g->cur[g->ncur++] = 0;
            a0 += r1;
            run = 0;
            continue;
        }
        put_bits(g, vc[d + 3]);
        g->zeros += b1 + d == a0;
        g->cur[g->ncur++] = (uint32_t)(run + b1 + d - a0);
        a0 = b1 + d;
        run = 0;
        if (d < 0)
            b1 -= REFRUN(pb - 1), pb--;
        else
            b1 += REFRUN(pb), pb++;
    }
    if (run)
        g->cur[g->ncur++] = (uint32_t)run;
#undef REFRUN
}

/* The row just made becomes the reference, with libtiff's imaginary run of 0 */
static void gen_next(gen *g)
{
    memcpy(g->ref, g->cur, (size_t)g->ncur * sizeof g->cur[0]);
    g->nref = g->ncur;
    g->ref[g->nref++] = 0;
}

/* Random streams of compressions 2, 3 (1D and 2D) and 4, rows of 1..24 pixels with
 * zero-length runs in them: where libtiff reads a stream without an error or a
 * warning, vkimg reads it to the same pixels (or refuses it where libtiff's next code
 * would read past its reference row, whose memory holds an older row's runs there);
 * where libtiff complains, vkimg refuses it */
static void test_ccitt_random(void)
{
    int decoded = 0, with_zeros = 0, cases = 0, past = 0;
    for (int it = 0; it < 2400; it++) {
        static const struct { int comp, opts; } kinds[] = {
            { COMPRESSION_CCITTRLE, 0 },
            { COMPRESSION_CCITTFAX3, 0 },
            { COMPRESSION_CCITTFAX3, GROUP3OPT_2DENCODING },
            { COMPRESSION_CCITTFAX4, 0 },
        };
        const int k = it % 4, comp = kinds[k].comp, opts = kinds[k].opts;
        gen g = { .w = 1 + (int)rnd(24), .nref = 2, .ref = { 0, 0 } };
        g.ref[0] = (uint32_t)g.w; /* the white row above the first */
        const int h = 1 + (int)rnd(5);
        for (int y = 0; y < h && !g.broken; y++) {
            if (comp == COMPRESSION_CCITTFAX3)
                put_bits(&g, "000000000001");
            const bool one_d = comp != COMPRESSION_CCITTFAX4 && (opts != GROUP3OPT_2DENCODING || rnd(3) == 0);
            if (opts == GROUP3OPT_2DENCODING)
                put_bits(&g, one_d ? "1" : "0");
            if (one_d)
                gen_row_1d(&g);
            else
                gen_row_2d(&g);
            gen_next(&g);
            while (comp == COMPRESSION_CCITTRLE && g.nb % 8)
                put_bits(&g, "0");
        }
        int rc, complaints;
        vkimg_image im;
        vkimg_err e;
        unsigned char *lt = ccitt_both(__LINE__, comp, opts, g.w, h, g.bits, &rc, &im, &e, &complaints);
        const bool clean = lt && !complaints;
        cases++;
        if (!rc) {
            CHECK(clean && ccitt_differ(lt, PHOTOMETRIC_MINISWHITE, &im) == 0,
                  "random stream %d (comp %d opts %d, %dx%d, %s): vkimg decodes it, libtiff %s", it, comp, opts, g.w, h,
                  g.bits, !lt ? "refuses it" : complaints ? g_tiff_msg : "makes other pixels");
            decoded++;
            with_zeros += g.zeros > 0;
            vkimg_image_free(&im);
        } else {
            const bool stale = strstr(e.msg, "past the reference row") != NULL;
            past += stale;
            CHECK(!clean || stale, "random stream %d (comp %d opts %d, %dx%d, %s): libtiff reads it cleanly, vkimg: %s",
                  it, comp, opts, g.w, h, g.bits, e.msg);
        }
        free(lt);
    }
    /* the streams are mostly ones libtiff reads: a test that decodes few would prove little */
    CHECK(decoded > cases / 2 && with_zeros > cases / 5, "random CCITT streams: %d of %d decoded, %d with zero-length runs",
          decoded, cases, with_zeros);
    printf("random CCITT streams: %d of %d decoded as libtiff does, %d of them with zero-length runs; %d refused where "
           "libtiff reads past its reference row\n",
           decoded, cases, with_zeros, past);
}

#define EOL "000000000001 "
static void test_ccitt(void)
{
    /* every compression and option, width, pattern; one row or many, strips of 1, 3
     * and all rows, tiles; MinIsWhite and MinIsBlack; FillOrder 2 */
    static const int widths[] = { 1, 7, 8, 9, 1237, 1728, 5000 };
    static const struct { int comp, opts; } kinds[] = {
        { COMPRESSION_CCITTRLE, 0 },
        { COMPRESSION_CCITTFAX3, 0 },
        { COMPRESSION_CCITTFAX3, GROUP3OPT_FILLBITS },
        { COMPRESSION_CCITTFAX3, GROUP3OPT_2DENCODING },
        { COMPRESSION_CCITTFAX3, GROUP3OPT_2DENCODING | GROUP3OPT_FILLBITS },
        { COMPRESSION_CCITTFAX4, 0 },
    };
    for (int it = 0; it < 7 * 6 * P_COUNT; it++) {
        const int w = widths[it % 7], k = it / 7 % 6;
        spec s = { .w = w, .h = it % 3 == 0 ? 1 : w > 2000 ? 9 : 37, .comp = kinds[k].comp, .faxopts = kinds[k].opts,
                   .photo = it % 2 ? PHOTOMETRIC_MINISWHITE : PHOTOMETRIC_MINISBLACK, .mode = it % 4 == 3 ? "wb" : "w",
                   .fillorder = it % 5 == 2 ? FILLORDER_LSB2MSB : 0, .yres = it % 3 == 1 ? 300 : 0 };
        const int lay = it / 5 % 4;
        if (lay == 3)
            s.tw = w > 200 ? 256 : 16, s.th = 16;
        else
            s.rows = lay == 0 ? 1 : lay == 1 ? 3 : s.h;
        ccitt_case(__LINE__, s, it / 42);
    }
    /* many rows */
    ccitt_case(__LINE__, (spec){ .w = 1728, .h = 300, .comp = COMPRESSION_CCITTFAX4, .photo = PHOTOMETRIC_MINISWHITE,
                                 .rows = 300, .mode = "w" }, P_SHIFTED);
    ccitt_case(__LINE__, (spec){ .w = 1728, .h = 300, .comp = COMPRESSION_CCITTFAX3, .faxopts = GROUP3OPT_2DENCODING,
                                 .photo = PHOTOMETRIC_MINISWHITE, .rows = 64, .mode = "w", .yres = 300 }, P_SHIFTED);
    ccitt_case(__LINE__, (spec){ .w = 2464, .h = 200, .comp = COMPRESSION_CCITTFAX3, .faxopts = GROUP3OPT_FILLBITS,
                                 .photo = PHOTOMETRIC_MINISWHITE, .rows = 200, .mode = "w",
                                 .fillorder = FILLORDER_LSB2MSB }, P_RUNS);
    ccitt_case(__LINE__, (spec){ .w = 1237, .h = 100, .comp = COMPRESSION_CCITTRLE, .photo = PHOTOMETRIC_MINISBLACK,
                                 .tw = 64, .th = 32, .mode = "wb" }, P_RANDOM);

    /* streams written here, code by code (T.4: white 8 10011, 0 00110101, 3 1000, 5 1100,
     * 9 10100; black 8 000101, 0 0000110111; 2D: V0 1) */
    const int g3 = COMPRESSION_CCITTFAX3, g4 = COMPRESSION_CCITTFAX4, mh = COMPRESSION_CCITTRLE;
    ccitt_raw(__LINE__, g3, 0, 8, 2, EOL "10011 " EOL "00110101 000101", NULL);
    /* bits before an EOL are skipped, as libtiff syncs to it; fill bits; uncompressed
     * mode allowed but not used */
    ccitt_raw(__LINE__, g3, 0, 8, 2, EOL "10011 1 0101 " EOL "00110101 000101", NULL);
    ccitt_raw(__LINE__, g3, GROUP3OPT_FILLBITS | GROUP3OPT_UNCOMPRESSED, 8, 2,
              "0000" EOL "10011 0000000" EOL "00110101 000101", NULL);
    /* 2D: a 1D row of black, then a 2D one (V0 V0: black again); T.6 rows of V0 under
     * the white row above the first, the EOFB after the last (not read), T6Options
     * allowing uncompressed mode */
    ccitt_raw(__LINE__, g3, GROUP3OPT_2DENCODING, 8, 2, EOL "1 00110101 000101 " EOL "0 1 1", NULL);
    ccitt_raw(__LINE__, g4, GROUP4OPT_UNCOMPRESSED, 8, 3, "1 1 1 " EOL EOL, NULL);
    /* modified Huffman: each row from a byte */
    ccitt_raw(__LINE__, mh, 0, 8, 2, "10011 000 00110101 000101", NULL);
    ccitt_raw(__LINE__, mh, 0, 6, 2, "1100 010 0 0111 011 0", NULL); /* (libtiff 4.5: 000001 000000) */
    /* zero-length runs, as libtiff reads them: a white and a black one dropped as a
     * pair; a black one between white runs; a row starting black */
    ccitt_raw(__LINE__, mh, 0, 9, 2, "10100 000 00110101 0000110111 1011 11 1000", NULL);
    ccitt_raw(__LINE__, g3, 0, 8, 1, EOL "1000 0000110111 1100", NULL);
    ccitt_raw(__LINE__, g3, 0, 8, 1, EOL "00110101 000101", NULL);
    /* what libtiff only warns about or patches up (or decodes into a stream's next row) */
    ccitt_raw(__LINE__, g3, 0, 8, 1, EOL "10100", "a run past the end of row 0");
    ccitt_raw(__LINE__, g3, 0, 8, 2, EOL "1000 " EOL, "an EOL inside row 0");
    ccitt_raw(__LINE__, g3, 0, 8, 2, EOL "10011 000000000000000", "the data end before row 1");
    ccitt_raw(__LINE__, g3, GROUP3OPT_2DENCODING, 8, 2, EOL "1 10011 " EOL "0 011", "vertical mode code out of place");
    ccitt_raw(__LINE__, g4, 0, 8, 3, "1 " EOL EOL, "EOL or EOFB inside row 1");
    /* pass mode to the row's end from the start (b2 the imaginary change libtiff adds
     * to the reference row); where b2 would lie past it, libtiff reads an older row's
     * runs from its memory: refused (row 0 white 3 black 5; row 1 white 3 black 1, then
     * b1 is the reference row's end and b2 past it) */
    ccitt_raw(__LINE__, g4, 0, 8, 2, "1 0001", NULL);
    ccitt_raw(__LINE__, g4, 0, 8, 2, "001 1000 0011 001 1000 010 0001", "reaching past the reference row in row 1");
    /* 2D zero-length runs (T.6 from ImageGear has them): horizontal mode with a run
     * of 0 either side; a left vertical code back to a0 */
    ccitt_raw(__LINE__, g4, 0, 8, 2, "001 1000 0011 001 1000 0000110111 1 001 00110101 0011", NULL);
    ccitt_raw(__LINE__, g4, 0, 8, 2, "001 1000 11 1 011 010 1", NULL);
    ccitt_raw(__LINE__, g4, 0, 8, 3, "1 1", "the data end in row 2");
    /* bad codes, uncompressed mode */
    ccitt_raw(__LINE__, g3, 0, 8, 1, EOL "000000001000 1111", "a bad code in row 0");
    ccitt_raw(__LINE__, g3, GROUP3OPT_UNCOMPRESSED, 8, 1, EOL "000000001111 1", "uncompressed mode");
    ccitt_raw(__LINE__, g4, GROUP4OPT_UNCOMPRESSED, 8, 1, "0000001111 1", "uncompressed mode");
    ccitt_raw(__LINE__, g4, 0, 8, 1, "0000001000 1", "a bad code in row 0");
    /* T.6 rows like the one above take a bit each, however wide; fewer bytes than the
     * rows' fewest bits are refused before anything is allocated */
    ccitt_raw(__LINE__, g4, 0, 2000, 8, "11111111", NULL);
    ccitt_raw(__LINE__, g4, 0, 2000, 9, "11111111", "truncated: 1 bytes of CCITT data for 9 rows");
    ccitt_raw(__LINE__, g4, 0, 16384, 16384, "1111", "truncated: 1 bytes of CCITT data for 16384 rows");
    ccitt_raw(__LINE__, g3, 0, 8, 3, EOL "10011 " EOL, "truncated: 4 bytes of CCITT data for 3 rows");
    /* other than one 1-bit sample a pixel: an 8-bit file made CCITT */
    char path[96];
    snprintf(path, sizeof path, "%s/c8.tif", g_tdir);
    const spec s8 = { 8, 4, 1, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_NONE, 1, 1, 4, .mode = "w" };
    unsigned char *img = make_samples(&s8);
    CHECK(!write_tiff(path, &s8, img), "write c8.tif");
    size_t n;
    unsigned char *b = read_all(path, &n);
    const uint32_t ifd = b && n > 8 ? (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24 : 0;
    const unsigned nent = ifd && ifd + 2 <= n ? b[ifd] | b[ifd + 1] << 8 : 0;
    for (unsigned i = 0; i < nent && ifd + 2 + 12 * (i + 1) <= n; i++) {
        unsigned char *ent = b + ifd + 2 + 12 * i;
        if (ent[0] == 3 && ent[1] == 1) /* Compression (259): CCITT fax 4 */
            ent[8] = 4;
    }
    vkimg_image im;
    vkimg_err e;
    CHECK(b && vki_tiff_decode(b, n, "c8.tif", 0, &im, &e) == VKIMG_E_RUNTIME && strstr(e.msg, "one 1-bit sample"),
          "an 8-bit CCITT file: %s", e.msg);
    free(b);
    free(img);
    remove(path);
}
#undef EOL

/* ------------------------------------------------------------ writing */

/* An IPTC record (ApplicationRecordVersion 4, a caption) of n bytes (n >= 13) */
static void make_iim(unsigned char *p, size_t n)
{
    memcpy(p, "\x1c\x02\x00\x00\x02\x00\x04\x1c\x02\x78", 10);
    p[10] = (unsigned char)((n - 13) >> 8), p[11] = (unsigned char)(n - 13);
    for (size_t i = 12; i < n; i++)
        p[i] = (unsigned char)('a' + i % 26);
}

static void encode_case(int line, int w, int h, int c, vkimg_fmt fmt, bool deflate, const unsigned char *icc,
                        size_t icc_len)
{
    vkimg_image im;
    vkimg_err e;
    if (vkimg_image_alloc(&im, w, h, c, fmt, &e)) {
        CHECK(0, "alloc: %s", e.msg);
        return;
    }
    const size_t n = (size_t)w * h * (size_t)c;
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = t_rand(&g_seed);
        if (fmt == VKIMG_U8)
            ((unsigned char *)im.data)[i] = (unsigned char)(i % 3 ? r >> 56 : i / 7);
        else if (fmt == VKIMG_U16)
            ((uint16_t *)im.data)[i] = (uint16_t)(i % 3 ? r >> 48 : i * 5);
        else
            ((float *)im.data)[i] = (float)((double)(r >> 40) / (double)(1u << 24) - 0.25);
    }
    unsigned char *f = NULL;
    size_t flen = 0;
    /* an XMP packet beside the profile: up to 4 bytes inline in its entry, else in the tail */
    char xmp[600];
    const size_t xmp_len = !icc_len ? 0 : icc_len <= 4 ? icc_len - 1 : 5 + icc_len % 500;
    for (size_t i = 0; i < xmp_len; i++)
        xmp[i] = (char)('A' + (i * 7 + icc_len) % 26);
    /* and Photoshop's resources: an IPTC record of odd size (33723 pads it to LONGs) and another resource */
    unsigned char irb[12 + 21 + 1 + 12 + 3 + 1] = "8BIM\4\4\0\0\0\0\0\x15";
    make_iim(irb + 12, 21);
    memcpy(irb + 34, "8BIM\x03\xed\0\0\0\0\0\3xyz", 15);
    const size_t irb_len = icc_len > 4 ? sizeof irb : 0;
    const vkimg_meta meta = { .icc = (unsigned char *)icc, .icc_len = icc_len, .orientation = 1,
                              .xmp = xmp_len ? (unsigned char *)xmp : NULL, .xmp_len = xmp_len,
                              .iptc = irb_len ? irb : NULL, .iptc_len = irb_len };
    int rc = vki_tiff_encode_ex(&im, &meta, deflate, 2, &f, &flen, &e);
    CHECK(rc == 0, "line %d: encode %dx%dx%d: %s", line, w, h, c, e.msg);
    if (rc) {
        vkimg_image_free(&im);
        return;
    }
    char path[96];
    snprintf(path, sizeof path, "%s/e%d.tif", g_tdir, g_cases++);
    FILE *fp = fopen(path, "wb");
    CHECK(fp && fwrite(f, 1, flen, fp) == flen, "write %s", path);
    if (fp)
        fclose(fp);
    TIFF *t = TIFFOpen(path, "r");
    CHECK(t != NULL, "line %d: libtiff cannot open vkimg's TIFF", line);
    if (t) {
        uint32_t tw = 0, th = 0;
        uint16_t spp = 0, bps = 0, comp = 0, photo = 0, sf = SAMPLEFORMAT_UINT, pred = 1, nex = 0, *ex = NULL;
        uint32_t icn = 0;
        void *icp = NULL;
        TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &tw);
        TIFFGetField(t, TIFFTAG_IMAGELENGTH, &th);
        TIFFGetField(t, TIFFTAG_SAMPLESPERPIXEL, &spp);
        TIFFGetField(t, TIFFTAG_BITSPERSAMPLE, &bps);
        TIFFGetField(t, TIFFTAG_COMPRESSION, &comp);
        TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photo);
        TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &sf);
        TIFFGetFieldDefaulted(t, TIFFTAG_PREDICTOR, &pred);
        TIFFGetFieldDefaulted(t, TIFFTAG_EXTRASAMPLES, &nex, &ex);
        const int have_icc = TIFFGetField(t, TIFFTAG_ICCPROFILE, &icn, &icp);
        uint32_t xn = 0;
        void *xp = NULL;
        const int have_xmp = TIFFGetField(t, TIFFTAG_XMLPACKET, &xn, &xp);
        CHECK(xmp_len ? have_xmp && xn == xmp_len && !memcmp(xp, xmp, xmp_len) : !have_xmp,
              "line %d: XMP of %zu bytes, libtiff reads %u", line, xmp_len, have_xmp ? xn : 0);
        uint32_t pn = 0, in = 0;
        void *pp = NULL, *ip = NULL;
        const int have_ps = TIFFGetField(t, TIFFTAG_PHOTOSHOP, &pn, &pp);
        const int have_iim = TIFFGetField(t, TIFFTAG_RICHTIFFIPTC, &in, &ip);
        static const unsigned char zeros[3];
        CHECK(irb_len ? have_ps && pn == irb_len && !memcmp(pp, irb, irb_len) && have_iim && in == 24 &&
                            !memcmp(ip, irb + 12, 21) && !memcmp((unsigned char *)ip + 21, zeros, 3)
                      : !have_ps && !have_iim,
              "line %d: Photoshop resources of %zu bytes, libtiff reads %u (IPTC: %u bytes)", line, irb_len,
              have_ps ? pn : 0, have_iim ? in : 0);
        CHECK(tw == (uint32_t)w && th == (uint32_t)h && spp == c && bps == vkimg_fmt_size(fmt) * 8,
              "line %d: tags %ux%u spp %u bps %u", line, tw, th, spp, bps);
        CHECK(comp == (deflate ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_NONE) &&
                  (deflate ? pred == (fmt == VKIMG_F32 ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL)
                           : pred <= 1) && /* (libtiff has no default predictor without compression) */
                  sf == (fmt == VKIMG_F32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT) &&
                  photo == (c >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK),
              "line %d: compression %u predictor %u format %u photometric %u", line, comp, pred, sf, photo);
        CHECK((c == 2 || c == 4) ? nex == 1 && ex && ex[0] == EXTRASAMPLE_UNASSALPHA : nex == 0,
              "line %d: extra samples %u", line, nex);
        CHECK(icc_len ? have_icc && icn == icc_len && !memcmp(icp, icc, icc_len) : !have_icc,
              "line %d: ICC profile of %zu bytes, libtiff reads %u", line, icc_len, have_icc ? icn : 0);
        const size_t rowb = (size_t)w * (size_t)c * vkimg_fmt_size(fmt);
        unsigned char *row = malloc((size_t)TIFFScanlineSize(t) + 1);
        long bad = 0;
        for (int y = 0; y < h; y++) {
            if (TIFFReadScanline(t, row, (uint32_t)y, 0) < 0) {
                bad++;
                break;
            }
            bad += memcmp(row, (unsigned char *)im.data + (size_t)y * rowb, rowb) != 0;
        }
        CHECK(bad == 0, "line %d: %dx%dx%d %s %s: %ld rows differ as libtiff reads them", line, w, h, c,
              vkimg_fmt_name(fmt), deflate ? "deflate" : "none", bad);
        free(row);
        TIFFClose(t);
    }
    /* and vkimg's own reader, and the metadata reader */
    vkimg_image back;
    rc = vki_tiff_decode(f, flen, "e.tif", 0, &back, &e);
    CHECK(rc == 0 && back.w == w && back.h == h && back.c == c && back.fmt == fmt &&
              !memcmp(back.data, im.data, vkimg_image_bytes(&im)),
          "line %d: vkimg reads its own TIFF back otherwise (%s)", line, rc ? e.msg : "pixels");
    if (!rc)
        vkimg_image_free(&back);
    vkimg_meta m;
    rc = vki_meta_read(f, flen, &m, &e);
    CHECK(rc == 0 && m.icc_len == icc_len && (!icc_len || !memcmp(m.icc, icc, icc_len)) && !m.exif &&
              m.orientation == 1 && m.xmp_len == xmp_len && (!xmp_len || !memcmp(m.xmp, xmp, xmp_len)) &&
              m.iptc_len == irb_len && (!irb_len || !memcmp(m.iptc, irb, irb_len)),
          "line %d: vki_meta_read: %s, ICC %zu bytes", line, rc ? e.msg : "", rc ? 0 : m.icc_len);
    if (!rc)
        vki_meta_free(&m);
    free(f);
    remove(path);
    vkimg_image_free(&im);
}

static void test_encode(void)
{
    static const struct { int w, h; } sizes[] = { { 1, 1 }, { 1, 17 }, { 23, 1 }, { 37, 29 }, { 1031, 5 }, { 300, 700 } };
    static const vkimg_fmt fmts[] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
    const size_t big_len = 70001, small_len = 129;
    unsigned char *big = t_icc_profile(big_len, "RGB ", &g_seed), *small = t_icc_profile(small_len, "GRAY", &g_seed);
    for (int f = 0; f < 3; f++)
        for (int c = 1; c <= 4; c++)
            for (int i = 0; i < 6; i++) {
                if (i == 5 && (c != 3 || f == 0)) /* the tall one (several strips): RGB u16 and f32 */
                    continue;
                const unsigned char *icc = i == 3 ? (c >= 3 ? big : small) : NULL;
                const size_t il = i == 3 ? (c >= 3 ? big_len : small_len) : 0;
                encode_case(__LINE__, sizes[i].w, sizes[i].h, c, fmts[f], (i + c) % 3 != 0, icc, il);
            }
    encode_case(__LINE__, 300, 700, 3, VKIMG_U8, true, NULL, 0);
    encode_case(__LINE__, 300, 700, 4, VKIMG_U8, false, small, 4); /* a profile of 4 bytes: inline in its entry */
    free(big);
    free(small);
    /* the other formats are refused */
    vkimg_image im;
    vkimg_err e;
    unsigned char *out = NULL;
    size_t n;
    if (!vkimg_image_alloc(&im, 3, 2, 1, VKIMG_U32, &e)) {
        CHECK(vki_tiff_encode(&im, NULL, &out, &n, &e) == VKIMG_E_USAGE && !out && strstr(e.msg, "u32"),
              "u32 refused: %s", e.msg);
        vkimg_image_free(&im);
    }
}

/* the orientation tag of IFD0, both byte orders */
static void test_orientation(void)
{
    for (int o = 1; o <= 8; o++) {
        spec s = { 5, 3, 3, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, COMPRESSION_NONE, 1, 1, 3, .mode = o % 2 ? "w" : "wb",
                   .orientation = o };
        char path[96];
        snprintf(path, sizeof path, "%s/o%d.tif", g_tdir, o);
        void *img = make_samples(&s);
        CHECK(!write_tiff(path, &s, img), "write o%d", o);
        size_t n;
        unsigned char *b = read_all(path, &n);
        vkimg_meta m;
        vkimg_err e;
        int rc = vki_meta_read(b, n, &m, &e);
        CHECK(rc == 0 && m.orientation == o && !m.exif && !m.icc, "orientation %d read as %d (%s)", o,
              rc ? 0 : m.orientation, rc ? e.msg : "");
        if (!rc)
            vki_meta_free(&m);
        /* through vkimg_load_meta */
        vkimg_image im;
        rc = vkimg_load_meta(path, NULL, &im, &m, &e);
        CHECK(rc == 0 && m.orientation == o && im.w == 5 && im.h == 3, "vkimg_load_meta o%d: %s", o, rc ? e.msg : "");
        if (!rc) {
            vkimg_image_free(&im);
            vkimg_meta_free(&m);
        }
        free(b);
        free(img);
        remove(path);
    }
}

/* ------------------------------------------------------------ EXIF */

/* One IFD entry of a classic TIFF block, its value's bytes wherever they are. */
typedef struct xent {
    unsigned tag, type;
    uint32_t count;
    const unsigned char *val;
    size_t n;
} xent;


/* The entries of the IFD at off (at most max; -1 where it or a value lies outside b):
 * this test's own walk of the TIFF structure, not meta.c's. */
static int walk_ifd(const unsigned char *b, size_t len, int le, uint32_t off, xent *x, int max)
{
    static const unsigned size[14] = { 0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4 };
    if (off < 8 || (size_t)off + 2 > len)
        return -1;
    const int n = (int)xrd16(b + off, le);
    if (n > max || (size_t)off + 2 + 12 * (size_t)n + 4 > len)
        return -1;
    for (int i = 0; i < n; i++) {
        const unsigned char *en = b + off + 2 + 12 * i;
        x[i].tag = xrd16(en, le);
        x[i].type = xrd16(en + 2, le);
        x[i].count = xrd32(en + 4, le);
        if (x[i].type >= 14 || !size[x[i].type])
            return -1;
        x[i].n = (size_t)x[i].count * size[x[i].type];
        x[i].val = en + 8;
        if (x[i].n > 4) {
            const uint32_t vo = xrd32(en + 8, le);
            if ((size_t)vo + x[i].n > len)
                return -1;
            x[i].val = b + vo;
        }
    }
    return n;
}

static const xent *find_ent(const xent *x, int n, unsigned tag)
{
    for (int i = 0; i < n; i++)
        if (x[i].tag == tag)
            return &x[i];
    return NULL;
}

/* The entries of the IFD that IFD0's pointer tag ptr points to (0 entries: none). */
static int walk_sub(const unsigned char *b, size_t len, int le, unsigned ptr, xent *x, int max)
{
    xent i0[64];
    const int n0 = walk_ifd(b, len, le, xrd32(b + 4, le), i0, 64);
    const xent *p = n0 > 0 ? find_ent(i0, n0, ptr) : NULL;
    return p ? walk_ifd(b, len, le, xrd32(p->val, le), x, max) : 0;
}

static bool same_ent(const xent *a, const xent *b)
{
    return a->tag == b->tag && a->type == b->type && a->count == b->count && a->n == b->n &&
           !memcmp(a->val, b->val, a->n);
}

/* A 4 x 3 RGB TIFF by libtiff with IFD0's Make and Software (and Orientation o unless
 * 0), an Exif IFD (unless !exif: DateTimeOriginal, ISOSpeedRatings, UserComment,
 * ExposureTime, and a MakerNote of maker bytes unless 0) and a GPS IFD (VersionID,
 * LatitudeRef). 0 when written. */
/* The XMP packet write_exif_tiff puts in tag 700 (XMLPacket) */
static const char exif_tiff_xmp[] = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/"
                                    "22-rdf-syntax-ns#\"><rdf:Description dc:format=\"image/tiff\"/></rdf:RDF>"
                                    "</x:xmpmeta>";

static int write_exif_tiff(const char *path, int le, int o, bool exif, size_t maker, int dpi)
{
    TIFF *t = TIFFOpen(path, le ? "wl" : "wb");
    if (!t)
        return -1;
    unsigned char row[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 4);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 3);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 3);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 3);
    TIFFSetField(t, TIFFTAG_MAKE, "vkimg test camera");
    TIFFSetField(t, TIFFTAG_SOFTWARE, "libtiff");
    TIFFSetField(t, TIFFTAG_XMLPACKET, (uint32_t)(sizeof exif_tiff_xmp - 1), exif_tiff_xmp);
    uint32_t iim[8]; /* an IPTC record alone (tag 33723, LONGs), as exiftool writes one */
    make_iim((unsigned char *)iim, sizeof iim);
    TIFFSetField(t, TIFFTAG_RICHTIFFIPTC, (uint32_t)sizeof iim, iim); /* (libtiff 4.5 counts its bytes) */
    if (o)
        TIFFSetField(t, TIFFTAG_ORIENTATION, (uint16_t)o);
    if (dpi) {
        TIFFSetField(t, TIFFTAG_XRESOLUTION, (float)dpi);
        TIFFSetField(t, TIFFTAG_YRESOLUTION, (float)dpi);
        TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, (uint16_t)RESUNIT_INCH);
    }
    for (uint32_t y = 0; y < 3; y++)
        TIFFWriteScanline(t, row, y, 0);
    int bad = !TIFFWriteDirectory(t);
    uint64_t ex = 0, gp = 0;
    unsigned char *mk = maker ? malloc(maker) : NULL;
    if (exif && !bad) {
        TIFFCreateEXIFDirectory(t);
        uint16_t iso[2] = { 400, 800 };
        TIFFSetField(t, EXIFTAG_DATETIMEORIGINAL, "2024:05:06 07:08:09");
        TIFFSetField(t, EXIFTAG_ISOSPEEDRATINGS, 2, iso);
        TIFFSetField(t, EXIFTAG_USERCOMMENT, 20, "ASCII\0\0\0hello world!");
        TIFFSetField(t, EXIFTAG_EXPOSURETIME, 0.008);
        if (mk) {
            for (size_t i = 0; i < maker; i++)
                mk[i] = (unsigned char)rnd(256);
            TIFFSetField(t, EXIFTAG_MAKERNOTE, (uint32_t)maker, mk);
        }
        bad = !TIFFWriteCustomDirectory(t, &ex);
        TIFFFreeDirectory(t); /* (else libtiff 4.5 loses the Exif values when the GPS IFD is made) */
    }
    if (!bad) {
        TIFFCreateGPSDirectory(t);
        uint8_t ver[4] = { 2, 3, 0, 0 };
        TIFFSetField(t, GPSTAG_VERSIONID, ver);
        TIFFSetField(t, GPSTAG_LATITUDEREF, "N");
        bad = !TIFFWriteCustomDirectory(t, &gp);
    }
    if (!bad) {
        TIFFSetDirectory(t, 0);
        if (exif)
            TIFFSetField(t, TIFFTAG_EXIFIFD, ex);
        TIFFSetField(t, TIFFTAG_GPSIFD, gp);
        bad = !TIFFRewriteDirectory(t);
    }
    TIFFClose(t);
    free(mk);
    return bad ? -1 : 0;
}

/* The bytes of write_exif_tiff's file (*n: their count), NULL (and a failed check)
 * where libtiff did not write it. */
static unsigned char *exif_tiff_bytes(int le, int o, bool exif, size_t maker, int dpi, size_t *n)
{
    char path[96];
    snprintf(path, sizeof path, "%s/exif.tif", g_tdir);
    unsigned char *b = write_exif_tiff(path, le, o, exif, maker, dpi) ? NULL : read_all(path, n);
    CHECK(b != NULL, "libtiff wrote no EXIF TIFF (%d, o%d: %s)", le, o, g_tiff_msg);
    remove(path);
    return b;
}

/* A TIFF's own EXIF (IFD0's descriptive tags, the Exif and GPS IFDs) as the EXIF block
 * the other formats carry: every Exif and GPS entry the file's (tag, type, count and
 * value bytes), IFD0's Make and Software kept and its image tags not, the orientation
 * entry the record's, the file's byte order; a MakerNote that would pass a JPEG's
 * APP1 left out, the rest kept; a TIFF without Exif or GPS IFD has no EXIF block
 * (test_orientation). */
static void test_exif(void)
{
    const struct {
        int o;
        bool exif;
        size_t maker;
    } cases[] = { { 6, true, 0 }, { 0, true, 0 }, { 3, false, 0 }, { 8, true, 300 }, { 1, true, 70000 } };
    for (int le = 0; le < 2; le++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            size_t n;
            unsigned char *b = exif_tiff_bytes(le, cases[k].o, cases[k].exif, cases[k].maker, 0, &n);
            if (!b)
                continue;
            vkimg_meta m;
            vkimg_err e;
            const int rc = vki_meta_read(b, n, &m, &e);
            CHECK(rc == 0 && m.exif && m.exif_len <= VKI_JPEG_EXIF_MAX, "case %d/%zu: %s, EXIF %zu bytes", le, k,
                  rc ? e.msg : "", rc ? 0 : m.exif_len);
            if (rc || !m.exif) {
                free(b);
                continue;
            }
            CHECK(vki_exif_byte_order(m.exif, m.exif_len) == le, "case %d/%zu: byte order", le, k);
            CHECK(m.xmp_len == sizeof exif_tiff_xmp - 1 && !memcmp(m.xmp, exif_tiff_xmp, m.xmp_len),
                  "case %d/%zu: XMP of %zu bytes, libtiff wrote %zu", le, k, m.xmp_len, sizeof exif_tiff_xmp - 1);
            unsigned char iim[32], irb[44] = "8BIM\4\4\0\0\0\0\0\x20"; /* tag 33723 as one 8BIM resource */
            make_iim(iim, sizeof iim);
            memcpy(irb + 12, iim, sizeof iim);
            CHECK(m.iptc_len == sizeof irb && !memcmp(m.iptc, irb, sizeof irb),
                  "case %d/%zu: tag 33723 as Photoshop resources: %zu bytes", le, k, m.iptc_len);
            const int want_o = cases[k].o ? cases[k].o : 1;
            CHECK(m.orientation == want_o && vki_exif_orientation(m.exif, m.exif_len) == want_o,
                  "case %d/%zu: orientation %d, block's %d, want %d", le, k, m.orientation,
                  vki_exif_orientation(m.exif, m.exif_len), want_o);
            xent f0[64], x0[64], fs[64], xs[64];
            const int nf0 = walk_ifd(b, n, le, xrd32(b + 4, le), f0, 64);
            const int nx0 = walk_ifd(m.exif, m.exif_len, le, xrd32(m.exif + 4, le), x0, 64);
            CHECK(nf0 > 0 && nx0 > 0, "case %d/%zu: IFD0s %d, %d entries", le, k, nf0, nx0);
            if (nf0 > 0 && nx0 > 0) {
                for (unsigned tag = 271; tag <= 305; tag += 305 - 271) { /* Make, Software */
                    const xent *a = find_ent(f0, nf0, tag), *c = find_ent(x0, nx0, tag);
                    CHECK(a && c && same_ent(a, c), "case %d/%zu: IFD0 tag %u kept", le, k, tag);
                }
                for (unsigned tag = 256; tag <= 279; tag++) /* no image tags: sizes, strips, ... */
                    CHECK(tag == 271 || tag == 272 || tag == 274 || tag == 270 || !find_ent(x0, nx0, tag),
                          "case %d/%zu: IFD0 tag %u left in", le, k, tag);
                CHECK(!cases[k].o == !find_ent(x0, nx0, 274), "case %d/%zu: orientation entry", le, k);
                for (int i = 1; i < nx0; i++)
                    CHECK(x0[i - 1].tag < x0[i].tag, "case %d/%zu: IFD0 not in ascending order", le, k);
            }
            for (unsigned ptr = 34665; ptr <= 34853; ptr += 34853 - 34665) {
                const int nf = walk_sub(b, n, le, ptr, fs, 64), nx = walk_sub(m.exif, m.exif_len, le, ptr, xs, 64);
                const bool present = ptr == 34853 || cases[k].exif;
                CHECK(present ? nf > 0 : nf == 0, "case %d/%zu: the file's IFD %u has %d entries", le, k, ptr, nf);
                const bool drop_maker = ptr == 34665 && cases[k].maker > VKI_JPEG_EXIF_MAX;
                CHECK(nx == nf - (drop_maker ? 1 : 0), "case %d/%zu: IFD %u: %d entries, the file's %d", le, k, ptr, nx,
                      nf);
                int j = 0;
                for (int i = 0; i < nf && j < nx; i++) {
                    if (drop_maker && fs[i].tag == 37500)
                        continue;
                    CHECK(same_ent(&fs[i], &xs[j]), "case %d/%zu: IFD %u entry %d (tag %u) differs", le, k, ptr, i,
                          fs[i].tag);
                    j++;
                }
                if (ptr == 34665 && cases[k].maker && !drop_maker)
                    CHECK(find_ent(xs, nx, 37500) && find_ent(xs, nx, 37500)->n == cases[k].maker,
                          "case %d/%zu: the MakerNote kept", le, k);
            }
            vki_meta_free(&m);
            free(b);
        }
    /* a JPEG made from it keeps the block, the orientation written as 1 */
    char path[96], out[96];
    snprintf(path, sizeof path, "%s/exif_j.tif", g_tdir);
    snprintf(out, sizeof out, "%s/exif_j.jpg", g_tdir);
    CHECK(!write_exif_tiff(path, 0, 6, true, 0, 0), "write exif_j.tif");
    vkimg_image im;
    vkimg_meta m, jm;
    vkimg_err e;
    int rc = vkimg_load_meta(path, NULL, &im, &m, &e);
    CHECK(rc == 0 && im.w == 4 && im.h == 3 && m.orientation == 6 && m.exif, "load exif_j.tif: %s", rc ? e.msg : "");
    if (!rc) {
        vkimg_save_opts so = { .meta = &m, .quality = 90 };
        vkimg_meta_set_orientation(&m, 1);
        rc = vkimg_save(out, &im, &so, &e);
        CHECK(rc == 0, "save exif_j.jpg: %s", rc ? e.msg : "");
        vkimg_image back;
        if (!rc && !(rc = vkimg_load_meta(out, NULL, &back, &jm, &e))) {
            CHECK(jm.exif_len == m.exif_len && !memcmp(jm.exif, m.exif, m.exif_len) && jm.orientation == 1,
                  "the JPEG's EXIF block is the TIFF's (%zu bytes, %zu)", jm.exif_len, m.exif_len);
            vkimg_image_free(&back);
            vkimg_meta_free(&jm);
        }
        vkimg_image_free(&im);
        vkimg_meta_free(&m);
    }
    remove(path);
    remove(out);
}

/* TIFF outputs carry the EXIF: the EXIF block (here the one made of a libtiff-written
 * TIFF of test_exif's kind, in either byte order) written as the output's own IFDs,
 * read back by libtiff (IFD0's Make and Software, the Exif IFD's DateTimeOriginal and
 * ISOSpeedRatings, the GPS IFD's LatitudeRef), by vkimg's reader (each Exif and GPS
 * entry the block's where the byte orders agree), with the orientation as tag 274
 * where it is not 1, and the block's resolution (300 dpi) where it has one, else the
 * writer's 72. */
static void test_exif_write(void)
{
    for (int le = 0; le < 2; le++)
        for (int o = 1; o <= 6; o += 5) {
            char out[96];
            snprintf(out, sizeof out, "%s/xw%d_out.tif", g_tdir, le);
            size_t n;
            unsigned char *b = exif_tiff_bytes(le, 3, true, 0, o == 6 ? 300 : 0, &n);
            if (!b)
                continue;
            vkimg_meta m;
            vkimg_err e;
            if (vki_meta_read(b, n, &m, &e) || !m.exif) {
                CHECK(false, "no EXIF read from a libtiff file (%d)", le);
                free(b);
                continue;
            }
            vkimg_meta_set_orientation(&m, o);
            vkimg_image im = { 0 };
            unsigned char *f = NULL;
            size_t flen = 0;
            int rc = vkimg_image_alloc(&im, 5, 3, 3, VKIMG_U8, &e);
            if (!rc) {
                memset(im.data, 77, 45);
                rc = vki_tiff_encode_ex(&im, &m, le == 1, 1, &f, &flen, &e);
            }
            CHECK(rc == 0, "encode with EXIF (%d, o%d): %s", le, o, rc ? e.msg : "");
            FILE *fp = rc ? NULL : fopen(out, "wb");
            if (fp) {
                fwrite(f, 1, flen, fp);
                fclose(fp);
            }
            TIFF *t = fp ? TIFFOpen(out, "r") : NULL;
            CHECK(t != NULL, "libtiff opens the TIFF with EXIF (%d, o%d): %s", le, o, g_tiff_msg);
            if (t) {
                char *str = NULL;
                uint16_t ori = 0, cnt = 0, *iso = NULL;
                uint64_t off = 0;
                CHECK(TIFFGetField(t, TIFFTAG_MAKE, &str) && !strcmp(str, "vkimg test camera"), "Make");
                CHECK(TIFFGetField(t, TIFFTAG_SOFTWARE, &str) && !strcmp(str, "libtiff"), "Software");
                CHECK(o == 1 ? !TIFFGetField(t, TIFFTAG_ORIENTATION, &ori)
                             : TIFFGetField(t, TIFFTAG_ORIENTATION, &ori) && ori == o,
                      "orientation %d written as %u", o, ori);
                float xres = 0, yres = 0;
                uint16_t unit = 0;
                const float want_res = o == 6 ? 300.0f : 72.0f; /* the EXIF's, else the writer's */
                CHECK(TIFFGetField(t, TIFFTAG_XRESOLUTION, &xres) && TIFFGetField(t, TIFFTAG_YRESOLUTION, &yres) &&
                          xres == want_res && yres == want_res &&
                          TIFFGetFieldDefaulted(t, TIFFTAG_RESOLUTIONUNIT, &unit) && unit == RESUNIT_INCH,
                      "resolution %g x %g (unit %u), want %g", xres, yres, unit, want_res);
                CHECK(TIFFGetField(t, TIFFTAG_EXIFIFD, &off) && TIFFReadEXIFDirectory(t, off), "the Exif IFD (%d)", le);
                CHECK(TIFFGetField(t, EXIFTAG_DATETIMEORIGINAL, &str) && !strcmp(str, "2024:05:06 07:08:09"),
                      "DateTimeOriginal");
                CHECK(TIFFGetField(t, EXIFTAG_ISOSPEEDRATINGS, &cnt, &iso) && cnt == 2 && iso[0] == 400 &&
                          iso[1] == 800,
                      "ISOSpeedRatings (%d)", le);
                CHECK(TIFFSetDirectory(t, 0) && TIFFGetField(t, TIFFTAG_GPSIFD, &off) && TIFFReadGPSDirectory(t, off),
                      "the GPS IFD (%d)", le);
                CHECK(TIFFGetField(t, GPSTAG_LATITUDEREF, &str) && !strcmp(str, "N"), "GPSLatitudeRef");
                TIFFClose(t);
            }
            /* vkimg's reader: the same entries where the byte order is the file's (little-endian) */
            vkimg_meta back;
            if (!rc && !vki_meta_read(f, flen, &back, &e)) {
                CHECK(back.exif && back.orientation == o, "EXIF read back (o%d: %d)", o, back.orientation);
                for (unsigned ptr = 34665; le && back.exif && ptr <= 34853; ptr += 34853 - 34665) {
                    xent a[64], c[64];
                    const int na = walk_sub(m.exif, m.exif_len, 1, ptr, a, 64);
                    const int nc = walk_sub(back.exif, back.exif_len, 1, ptr, c, 64);
                    bool same = na > 0 && na == nc;
                    for (int i = 0; same && i < na; i++)
                        same = same_ent(&a[i], &c[i]);
                    CHECK(same, "IFD %u read back: %d entries, %d written", ptr, nc, na);
                }
                vki_meta_free(&back);
            }
            free(f);
            if (im.data)
                vkimg_image_free(&im);
            vki_meta_free(&m);
            free(b);
            remove(out);
        }
}

/* ------------------------------------------------------------ hostile input */

static void expect_clean(const char *what, const unsigned char *b, size_t n, uint64_t max_pixels, bool must_fail)
{
    vkimg_image im;
    vkimg_err e;
    memset(&im, 0x5a, sizeof im);
    int rc = vki_tiff_decode(b, n, "h.tif", max_pixels, &im, &e);
    if (rc) {
        CHECK(rc == VKIMG_E_RUNTIME && !im.data && !strncmp(e.msg, "h.tif: ", 7), "%s: rc %d data %p msg %s", what, rc,
              im.data, e.msg);
    } else {
        CHECK(!must_fail, "%s: decoded", what);
        CHECK(im.data && im.w > 0 && im.h > 0 && im.c >= 1 && im.c <= 4, "%s: a broken image", what);
        vkimg_image_free(&im);
    }
}

/* A changed CCITT file that vkimg decodes must decode to libtiff's pixels: 1 when it
 * does, -1 when libtiff cannot read it (vkimg's checks are not libtiff's: a tag
 * libtiff refuses), 0 when vkimg refuses it. (A compression 2 strip whose last row
 * libtiff misaligns, as ccitt_raw tells, would differ: these files have none.) */
static int ccitt_agrees(const char *what, const unsigned char *b, size_t n)
{
    vkimg_image im;
    vkimg_err e;
    if (vki_tiff_decode(b, n, "h.tif", 1u << 20, &im, &e))
        return 0;
    char path[96];
    snprintf(path, sizeof path, "%s/agree.tif", g_tdir);
    uint32_t w = 0, h = 0;
    uint16_t photo = 0;
    unsigned char *bits = write_file(path, b, n) ? NULL : libtiff_bits(path, &w, &h, &photo);
    const int read = bits ? 1 : -1;
    if (bits)
        CHECK(w == (uint32_t)im.w && h == (uint32_t)im.h && photo <= 1 && im.c == 1 && !ccitt_differ(bits, photo, &im),
              "%s: decoded, but not to libtiff's pixels", what);
    free(bits);
    vkimg_image_free(&im);
    remove(path);
    return read;
}

static void test_hostile(void)
{
    spec specs[] = {
        { 17, 9, 3, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, COMPRESSION_LZW, 2, 1, 2, .mode = "w" },
        { 17, 9, 3, 16, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, COMPRESSION_ADOBE_DEFLATE, 2, 2, 0, 16, 16, .mode = "wb" },
        { 17, 9, 1, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_PACKBITS, 1, 1, 4, .mode = "wb8" },
        { 17, 9, 4, 32, SAMPLEFORMAT_IEEEFP, PHOTOMETRIC_RGB, COMPRESSION_ADOBE_DEFLATE, 3, 1, 9, .mode = "w",
          .extra = { EXTRASAMPLE_ASSOCALPHA }, .nextra = 1 },
        { 21, 40, 3, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB, COMPRESSION_JPEG, 1, 1, 16, .mode = "w", .jpeg_ycbcr = 1 },
        /* CCITT: each decode of a changed file must be libtiff's (ccitt_agrees) */
        { 37, 9, 1, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISWHITE, COMPRESSION_CCITTRLE, 1, 1, 3, .mode = "w" },
        { 37, 9, 1, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISWHITE, COMPRESSION_CCITTFAX3, 1, 1, 9, .mode = "w",
          .faxopts = GROUP3OPT_FILLBITS, .fillorder = FILLORDER_LSB2MSB },
        { 37, 9, 1, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_CCITTFAX3, 1, 1, 4, .mode = "wb",
          .faxopts = GROUP3OPT_2DENCODING, .yres = 300 },
        { 37, 9, 1, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISWHITE, COMPRESSION_CCITTFAX4, 1, 1, 9, .mode = "w" },
        { 37, 9, 1, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISWHITE, COMPRESSION_CCITTFAX4, 1, 1, 0, 16, 16, .mode = "w" },
    };
    int agreed = 0, unread = 0;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        char path[96];
        snprintf(path, sizeof path, "%s/h%zu.tif", g_tdir, k);
        void *img = make_samples(&specs[k]);
        CHECK(!write_tiff(path, &specs[k], img), "write h%zu: %s", k, g_tiff_msg);
        size_t n;
        unsigned char *b = read_all(path, &n);
        char what[64];
        for (size_t cut = 0; cut < n; cut += n > 2000 ? 7 : 1) { /* every cut (a stride in large files) */
            snprintf(what, sizeof what, "file %zu cut at %zu of %zu", k, cut, n);
            unsigned char *c = malloc(cut + 1);
            memcpy(c, b, cut);
            expect_clean(what, c, cut, 0, false);
            free(c);
        }
        unsigned char *d = malloc(n);
        for (int i = 0; i < 1000; i++) { /* one to four bytes changed */
            memcpy(d, b, n);
            const int nb = 1 + (int)rnd(4);
            for (int j = 0; j < nb; j++)
                d[rnd((unsigned)n)] = (unsigned char)rnd(256);
            snprintf(what, sizeof what, "file %zu change %d", k, i);
            expect_clean(what, d, n, 1u << 20, false);
            if (specs[k].bps == 1) {
                const int a = ccitt_agrees(what, d, n);
                agreed += a > 0, unread += a < 0;
            }
        }
        free(d);
        free(b);
        free(img);
        remove(path);
    }
    printf("CCITT files changed: %d decoded to libtiff's pixels, %d that libtiff cannot read\n", agreed, unread);
    /* a header claiming 100000 x 100000 in a few bytes: refused by the limit */
    unsigned char h[200] = { 'I', 'I', 42, 0, 8, 0, 0, 0, 3, 0 };
    const unsigned char ent[3][12] = {
        { 0, 1, 4, 0, 1, 0, 0, 0, 0xa0, 0x86, 0x01, 0 }, /* width 100000 */
        { 1, 1, 4, 0, 1, 0, 0, 0, 0xa0, 0x86, 0x01, 0 }, /* height 100000 */
        { 0x11, 1, 4, 0, 1, 0, 0, 0, 100, 0, 0, 0 },     /* StripOffsets 100 */
    };
    for (int i = 0; i < 3; i++)
        memcpy(h + 10 + 12 * i, ent[i], 12);
    vkimg_image im;
    vkimg_err e;
    int rc = vki_tiff_decode(h, sizeof h, "h.tif", 0, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && !im.data && strstr(e.msg, "100000x100000") && strstr(e.msg, "max-pixels"),
          "100000x100000: %s", e.msg);
    /* the limit at its boundary: 10 x 10 */
    spec s = { 10, 10, 1, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_NONE, 1, 1, 10, .mode = "w" };
    char path[96];
    snprintf(path, sizeof path, "%s/lim.tif", g_tdir);
    void *img = make_samples(&s);
    CHECK(!write_tiff(path, &s, img), "write lim");
    size_t n;
    unsigned char *b = read_all(path, &n);
    CHECK(vki_tiff_decode(b, n, "h.tif", 100, &im, &e) == 0, "10x10 at max_pixels 100: %s", e.msg);
    vkimg_image_free(&im);
    CHECK(vki_tiff_decode(b, n, "h.tif", 99, &im, &e) == VKIMG_E_RUNTIME && !im.data, "10x10 at max_pixels 99");
    free(b);
    free(img);
    remove(path);
    /* refused by name */
    static const struct { spec s; const char *msg; } refused[] = {
        { { 8, 8, 1, 8, SAMPLEFORMAT_INT, PHOTOMETRIC_MINISBLACK, COMPRESSION_NONE, 1, 1, 8, .mode = "w" }, "sample format 2" },
        { { 8, 8, 1, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_LZMA, 1, 1, 8, .mode = "w" },
          "compression 34925 (LZMA)" },
        { { 8, 8, 3, 8, SAMPLEFORMAT_UINT, PHOTOMETRIC_CIELAB, COMPRESSION_NONE, 1, 1, 8, .mode = "w" }, "Lab" },
        { { 8, 8, 1, 32, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_NONE, 1, 1, 8, .mode = "w" },
          "32-bit integer" },
        /* the compression is named before the signed samples it holds (as libtiff's
         * LogLuv and ZSTD test files) */
        { { 8, 8, 1, 16, SAMPLEFORMAT_INT, PHOTOMETRIC_MINISBLACK, COMPRESSION_LZMA, 1, 1, 8, .mode = "w" },
          "compression 34925 (LZMA)" },
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        snprintf(path, sizeof path, "%s/r%zu.tif", g_tdir, k);
        img = make_samples(&refused[k].s);
        if (write_tiff(path, &refused[k].s, img)) {
            CHECK(0, "libtiff could not write refused case %zu", k);
            free(img);
            continue;
        }
        b = read_all(path, &n);
        rc = vki_tiff_decode(b, n, "r.tif", 0, &im, &e);
        CHECK(rc == VKIMG_E_RUNTIME && !im.data && strstr(e.msg, refused[k].msg), "case %zu: want '%s': %s", k,
              refused[k].msg, e.msg);
        free(b);
        free(img);
        remove(path);
    }
}

/* ------------------------------------------------------------ through files */

static void test_files(void)
{
    vkimg_image im;
    vkimg_err e;
    CHECK(vkimg_file_kind_of("a/x.tif") == VKIMG_FILE_TIFF && vkimg_file_kind_of("x.TIFF") == VKIMG_FILE_TIFF,
          "the TIFF extensions");
    CHECK(vkimg_file_fmt(VKIMG_FILE_TIFF, VKIMG_U16) == VKIMG_U16 && vkimg_file_fmt(VKIMG_FILE_TIFF, VKIMG_F32) ==
              VKIMG_F32 && vkimg_file_fmt(VKIMG_FILE_TIFF, VKIMG_U8) == VKIMG_U8, "TIFF keeps u8, u16, f32");
    if (vkimg_image_alloc(&im, 29, 13, 3, VKIMG_U16, &e))
        return;
    for (size_t i = 0; i < 29 * 13 * 3; i++)
        ((uint16_t *)im.data)[i] = (uint16_t)(t_rand(&g_seed) >> 48);
    unsigned char *icc = t_icc_profile(3001, "RGB ", &g_seed), *gray = t_icc_profile(300, "GRAY", &g_seed);
    vkimg_meta m = { .icc = icc, .icc_len = 3001, .orientation = 1 };
    for (int k = 0; k < 3; k++) {
        char path[96];
        snprintf(path, sizeof path, "%s/f%d.%s", g_tdir, k, k == 1 ? "tiff" : "tif");
        if (k == 2) /* a profile of another colour space is left out */
            m.icc = gray, m.icc_len = 300;
        vkimg_save_opts so = { .meta = &m, .tiff_uncompressed = k == 1 };
        CHECK(vkimg_save(path, &im, &so, &e) == 0, "save %s: %s", path, e.msg);
        vkimg_image back;
        vkimg_meta bm;
        int rc = vkimg_load_meta(path, NULL, &back, &bm, &e);
        CHECK(rc == 0 && back.fmt == VKIMG_U16 && !memcmp(back.data, im.data, vkimg_image_bytes(&im)),
              "%s read back: %s", path, rc ? e.msg : "pixels");
        CHECK(rc == 0 && (k == 2 ? bm.icc_len == 0 : bm.icc_len == 3001 && !memcmp(bm.icc, icc, 3001)),
              "%s: the ICC profile", path);
        if (!rc) {
            vkimg_image_free(&back);
            vkimg_meta_free(&bm);
        }
        remove(path);
    }
    free(icc);
    free(gray);
    vkimg_image_free(&im);
}

int main(void)
{
    TIFFSetWarningHandler(warned);
    TIFFSetErrorHandler(counted);
    if (!mkdtemp(g_tdir)) {
        fprintf(stderr, "mkdtemp failed\n");
        return 1;
    }
    test_layouts();
    test_photometric();
    test_jpeg();
    test_ccitt();
    test_ccitt_random();
    test_encode();
    test_orientation();
    test_exif();
    test_exif_write();
    test_hostile();
    test_files();
    rmdir(g_tdir);
    return t_done("test_tiff_io");
}
