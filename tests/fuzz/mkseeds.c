/* Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/TARGET/): small
 * valid files of every format and variant the decoders take, made with vkimg's own
 * writers (PNG, JPEG through TurboJPEG, WebP through libwebp, TIFF, BMP/TGA/HDR through
 * stb_image_write, KTX2, the metadata writers), libwebpmux's animation encoder,
 * libtiff (TIFF layouts and compressions vkimg's writer does not make),
 * giflib's encoder, or by hand (low-bit, palette and interlaced PNG, palette,
 * bit-field and RLE BMP, colour-mapped and gray TGA, PNM and PAM, PSD, flat HDR); a
 * few pipelines, PNG round-trip headers and compare command lines.
 * Deterministic: the same files on every run. scripts/fuzz seeds runs it.
 *
 * usage: fuzz-mkseeds CORPUS-DIR */
#include "bbuf.h"
#include "lj_util.h"
#include "io/io_priv.h"
#include "io/ktx2.h"
#include "io/meta.h"
#include "vkimg/vkimg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gif_lib.h>
#include <webp/encode.h>
#include <webp/mux.h>
#include <libdeflate.h>
#include <tiffio.h>
#include <turbojpeg.h>
#include <unistd.h>

static const char *g_root;
static int g_files;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz-mkseeds: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void put(const char *target, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g_root, target);
    if (mkdir(path, 0777) && errno != EEXIST)
        die("%s: %s", path, strerror(errno));
    snprintf(path, sizeof path, "%s/%s/%s", g_root, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f))
        die("%s: cannot write", path);
    g_files++;
}

static void put_load(const char *name, const void *p, size_t n) { put("load", name, p, n); }

/* ---------------------------------------------------------------- byte buffers (tests/lib/bbuf.h) */

static void bb_printf(bbuf *b, const char *fmt, ...)
{
    char t[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    bb_str(b, t);
}

/* a sample pattern: smooth with a little structure, so that filters and RLE vary */
static unsigned pat(int x, int y, int k) { return (unsigned)(x * 37 + y * 11 + k * 71 + (x * y) % 7) & 0xff; }

static vkimg_image make_image(int w, int h, int c, vkimg_fmt fmt)
{
    vkimg_image im = { 0 };
    vkimg_err e;
    if (vkimg_image_alloc(&im, w, h, c, fmt, &e))
        die("%s", e.msg);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                size_t i = ((size_t)y * w + x) * c + k;
                unsigned v = pat(x, y, k);
                if (fmt == VKIMG_U8)
                    ((uint8_t *)im.data)[i] = (uint8_t)v;
                else if (fmt == VKIMG_U16)
                    ((uint16_t *)im.data)[i] = (uint16_t)(v * 257 + x);
                else
                    ((float *)im.data)[i] = (float)v / 64.0f;
            }
    return im;
}

/* ---------------------------------------------------------------- PNG */

static void png_chunk(bbuf *b, const char *type, const void *d, size_t n)
{
    bb_be32(b, (uint32_t)n);
    size_t at = b->n;
    bb_put(b, type, 4);
    bb_put(b, d, n);
    bb_be32(b, (uint32_t)libdeflate_crc32(0, b->p + at, n + 4));
}

/* A PNG by hand: colour type ct, bit depth bd, samples from pat (indices mod
 * npal) stored as they are under the filter types 0..4 in turn from row to row (so
 * the decoder unfilters with every filter), Adam7 when interlaced; a palette of
 * npal entries for ct 3, tRNS bytes if given. */
static void png_hand(const char *name, int w, int h, int ct, int bd, int interlaced, int npal, const void *trns,
                     size_t ntrns)
{
    static const int chans[] = { 1, 0, 3, 1, 2, 0, 4 };
    const int c = chans[ct], bits = c * bd;
    bbuf raw = { 0 }, b = { 0 };
    static const int x0[] = { 0, 4, 0, 2, 0, 1, 0 }, y0[] = { 0, 0, 4, 0, 2, 0, 1 };
    static const int dx[] = { 8, 8, 4, 4, 2, 2, 1 }, dy[] = { 8, 8, 8, 4, 4, 2, 2 };
    for (int pass = 0; pass < (interlaced ? 7 : 1); pass++) {
        int px0 = interlaced ? x0[pass] : 0, py0 = interlaced ? y0[pass] : 0;
        int pdx = interlaced ? dx[pass] : 1, pdy = interlaced ? dy[pass] : 1;
        int pw = w > px0 ? (w - px0 + pdx - 1) / pdx : 0, ph = h > py0 ? (h - py0 + pdy - 1) / pdy : 0;
        if (!pw || !ph)
            continue;
        size_t rowbytes = ((size_t)pw * bits + 7) / 8;
        unsigned char *row = calloc(rowbytes, 1);
        for (int ry = 0; ry < ph; ry++) {
            memset(row, 0, rowbytes);
            int y = py0 + ry * pdy;
            for (int rx = 0; rx < pw; rx++) {
                int x = px0 + rx * pdx;
                for (int k = 0; k < c; k++) {
                    unsigned v = pat(x, y, k);
                    if (ct == 3)
                        v %= (unsigned)npal;
                    size_t bit = ((size_t)rx * c + k) * bd;
                    if (bd == 16) {
                        row[bit / 8] = (unsigned char)v;
                        row[bit / 8 + 1] = (unsigned char)(v * 3);
                    } else if (bd == 8) {
                        row[bit / 8] = (unsigned char)v;
                    } else {
                        v &= (1u << bd) - 1;
                        row[bit / 8] |= (unsigned char)(v << (8 - bd - bit % 8));
                    }
                }
            }
            bb_u8(&raw, (unsigned)(ry + pass) % 5); /* every filter type (the data is any data) */
            bb_put(&raw, row, rowbytes);
        }
        free(row);
    }
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(9);
    size_t cap = libdeflate_zlib_compress_bound(z, raw.n);
    unsigned char *zd = malloc(cap);
    size_t zn = libdeflate_zlib_compress(z, raw.p, raw.n, zd, cap);
    libdeflate_free_compressor(z);
    bb_put(&b, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ihdr[13] = { 0 };
    ihdr[0] = (unsigned char)(w >> 24), ihdr[1] = (unsigned char)(w >> 16), ihdr[2] = (unsigned char)(w >> 8),
    ihdr[3] = (unsigned char)w;
    ihdr[4] = (unsigned char)(h >> 24), ihdr[5] = (unsigned char)(h >> 16), ihdr[6] = (unsigned char)(h >> 8),
    ihdr[7] = (unsigned char)h;
    ihdr[8] = (unsigned char)bd, ihdr[9] = (unsigned char)ct, ihdr[12] = (unsigned char)interlaced;
    png_chunk(&b, "IHDR", ihdr, 13);
    if (ct == 3) {
        unsigned char pal[768];
        for (int i = 0; i < npal; i++)
            pal[3 * i] = (unsigned char)(i * 40), pal[3 * i + 1] = (unsigned char)(255 - i * 20),
                    pal[3 * i + 2] = (unsigned char)(i * 90);
        png_chunk(&b, "PLTE", pal, (size_t)npal * 3);
    }
    if (trns)
        png_chunk(&b, "tRNS", trns, ntrns);
    /* two IDAT chunks, as large files have */
    png_chunk(&b, "IDAT", zd, zn / 2);
    png_chunk(&b, "IDAT", zd + zn / 2, zn - zn / 2);
    png_chunk(&b, "IEND", NULL, 0);
    put_load(name, b.p, b.n);
    free(zd);
    free(raw.p);
    free(b.p);
}

/* A load seed: the file, with m's ICC profile and EXIF added by its format's writer
 * where m is given. */
typedef int (*add_meta_fn)(const unsigned char *f, size_t n, const vkimg_meta *m, unsigned char **out, size_t *outn,
                           unsigned *dropped, vkimg_err *e);
static void put_load_meta(const char *name, const unsigned char *f, size_t n, const vkimg_meta *m, add_meta_fn add)
{
    if (!m) {
        put_load(name, f, n);
        return;
    }
    unsigned char *out;
    size_t outn;
    vkimg_err e;
    if (add(f, n, m, &out, &outn, NULL, &e))
        die("%s: %s", name, e.msg);
    put_load(name, out, outn);
    free(out);
}

static void png_ours(const char *name, int w, int h, int c, vkimg_fmt fmt, int level, const vkimg_meta *m)
{
    vkimg_image im = make_image(w, h, c, fmt);
    unsigned char *png;
    size_t n;
    vkimg_err e;
    if (vki_png_encode(&im, level, &png, &n, &e))
        die("%s: %s", name, e.msg);
    put_load_meta(name, png, n, m, vki_png_add_meta);
    free(png);
    vkimg_image_free(&im);
}

/* vkimg's PNG with an XMP packet in a zlib-compressed iTXt after IDAT, as libpng
 * can write it (vkimg writes it uncompressed, before IDAT). */
static void png_xmp_late(const char *name, const char *xmp)
{
    vkimg_image im = make_image(5, 3, 3, VKIMG_U8);
    unsigned char *png;
    size_t n;
    vkimg_err e;
    if (vki_png_encode(&im, 6, &png, &n, &e))
        die("%s: %s", name, e.msg);
    bbuf d = { 0 }, b = { 0 };
    bb_put(&d, "XML:com.adobe.xmp\0\1\0en\0\0", 24); /* compressed, language "en" */
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(9);
    size_t cap = libdeflate_zlib_compress_bound(z, strlen(xmp));
    unsigned char *zd = malloc(cap);
    size_t zn = libdeflate_zlib_compress(z, xmp, strlen(xmp), zd, cap);
    libdeflate_free_compressor(z);
    bb_put(&d, zd, zn);
    bb_put(&b, png, n - 12); /* up to IEND */
    png_chunk(&b, "iTXt", d.p, d.n);
    png_chunk(&b, "IEND", NULL, 0);
    put_load(name, b.p, b.n);
    free(zd);
    free(d.p);
    free(b.p);
    free(png);
    vkimg_image_free(&im);
}

/* An image through vkimg's WebP encoder (lossy or lossless), with metadata. */
static void webp_ours(const char *name, int w, int h, int c, int quality, bool lossless, const vkimg_meta *m)
{
    vkimg_image im = make_image(w, h, c, VKIMG_U8);
    unsigned char *wp;
    size_t n;
    vkimg_err e;
    if (vki_webp_encode(&im, quality, lossless, 1, &wp, &n, &e))
        die("%s: %s", name, e.msg);
    put_load_meta(name, wp, n, m, vki_webp_add_meta);
    free(wp);
    vkimg_image_free(&im);
}

/* A two-frame animation (libwebpmux's encoder), lossless or lossy: the first frame
 * with transparent pixels, the second opaque. */
static void webp_anim(const char *name, int w, int h, bool lossless)
{
    WebPAnimEncoderOptions ao;
    WebPConfig cfg;
    if (!WebPAnimEncoderOptionsInit(&ao) || !WebPConfigInit(&cfg))
        die("%s: libwebp version", name);
    cfg.lossless = lossless;
    WebPAnimEncoder *enc = WebPAnimEncoderNew(w, h, &ao);
    if (!enc)
        die("%s: WebPAnimEncoderNew", name);
    for (int f = 0; f < 2; f++) {
        vkimg_image im = make_image(w, h, 4, VKIMG_U8);
        unsigned char *px = im.data;
        for (int i = 0; i < w * h; i++)
            px[4 * i + 3] = f ? 255 : (unsigned char)(i % 3 ? 255 : 0);
        WebPPicture pic;
        if (!WebPPictureInit(&pic))
            die("%s: WebPPictureInit", name);
        pic.width = w;
        pic.height = h;
        pic.use_argb = 1;
        if (!WebPPictureImportRGBA(&pic, px, w * 4) || !WebPAnimEncoderAdd(enc, &pic, f * 100, &cfg))
            die("%s: frame %d", name, f);
        WebPPictureFree(&pic);
        vkimg_image_free(&im);
    }
    WebPData d = { NULL, 0 };
    if (!WebPAnimEncoderAdd(enc, NULL, 200, NULL) || !WebPAnimEncoderAssemble(enc, &d))
        die("%s: WebPAnimEncoderAssemble", name);
    put_load(name, d.bytes, d.size);
    WebPDataClear(&d);
    WebPAnimEncoderDelete(enc);
}

/* ---------------------------------------------------------------- metadata */

/* A little-endian TIFF block with IFD0 holding the orientation (and one more tag). */
static void make_exif(bbuf *b, int orientation, int big_endian)
{
    void (*u16)(bbuf *, unsigned) = big_endian ? bb_be16 : bb_le16;
    void (*u32)(bbuf *, uint32_t) = big_endian ? bb_be32 : bb_le32;
    bb_str(b, big_endian ? "MM" : "II");
    u16(b, 42);
    u32(b, 8);
    u16(b, 2);                /* entries */
    u16(b, 0x0112), u16(b, 3), u32(b, 1), u16(b, (unsigned)orientation), u16(b, 0); /* Orientation SHORT 1 */
    u16(b, 0x011a), u16(b, 5), u32(b, 1), u32(b, 8 + 2 + 24 + 4);                    /* XResolution RATIONAL */
    u32(b, 0);                                                                        /* no IFD1 */
    u32(b, 72), u32(b, 1);
}

static void make_icc(bbuf *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bb_u8(b, i < 4 ? (unsigned)(n >> (24 - 8 * i)) & 0xff : (unsigned)(i * 7) & 0xff);
    if (n >= 40)
        memcpy(b->p + 36, "acsp", 4);
}

/* ---------------------------------------------------------------- TIFF */

/* A TIFF written by libtiff (mode "w", "wb", "w8"; rows a strip, or tiles of tw x th
 * where rows is 0) of spp samples of bps bits (fmt's samples; 1/2/4-bit gray from
 * the 8-bit pattern's top bits), the photometric and compression given, predictor
 * pred, planar or chunky, extra sample kind ex (-1: none), orientation (0: none),
 * the ICC profile of m (NULL: none). libtiff writes no time stamp: the same bytes
 * every run. */
static void tiff_lt(const char *name, const char *mode, int w, int h, int spp, int bps, int photo, int comp, int pred,
                    int planar, int rows, int tw, int th, int ex, int orientation, const vkimg_meta *m)
{
    char path[] = "/tmp/fuzz-mkseeds-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        die("%s: mkstemp", name);
    close(fd);
    TIFF *t = TIFFOpen(path, mode);
    if (!t)
        die("%s: libtiff cannot open %s", name, path);
    const vkimg_fmt fmt = bps == 32 ? VKIMG_F32 : bps == 16 ? VKIMG_U16 : VKIMG_U8;
    vkimg_image im = make_image(w, h, spp, fmt);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)h);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)spp);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)bps);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, (uint16_t)(bps == 32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT));
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, (uint16_t)photo);
    TIFFSetField(t, TIFFTAG_COMPRESSION, (uint16_t)comp);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, (uint16_t)planar);
    if (pred > 1)
        TIFFSetField(t, TIFFTAG_PREDICTOR, (uint16_t)pred);
    if (ex >= 0) {
        uint16_t e16 = (uint16_t)ex;
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &e16);
    }
    if (orientation)
        TIFFSetField(t, TIFFTAG_ORIENTATION, (uint16_t)orientation);
    if (m && m->icc_len)
        TIFFSetField(t, TIFFTAG_ICCPROFILE, (uint32_t)m->icc_len, m->icc);
    uint16_t cmap[3 * 256];
    if (photo == PHOTOMETRIC_PALETTE) {
        for (int i = 0; i < 3 * 256; i++)
            cmap[i] = (uint16_t)(i * 331);
        const int n = 1 << bps;
        TIFFSetField(t, TIFFTAG_COLORMAP, cmap, cmap + n, cmap + 2 * n);
    }
    if (photo == PHOTOMETRIC_SEPARATED)
        TIFFSetField(t, TIFFTAG_INKSET, INKSET_CMYK);
    const int sp = planar == 2 ? 1 : spp, planes = planar == 2 ? spp : 1;
    const size_t ss = vkimg_fmt_size(fmt);
    /* a row of one plane (or all samples), packed to bps bits */
    unsigned char *row = calloc((size_t)(rows ? w : tw) * (size_t)sp * ss + 8, 1);
    #define SAMPLE(x, y, k) ((const unsigned char *)im.data + (((size_t)(y) * w + (size_t)(x)) * (size_t)spp + (size_t)(k)) * ss)
    int ok = 1;
    if (rows) {
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)rows);
        for (int p = 0; p < planes && ok; p++)
            for (int y = 0; y < h && ok; y++) {
                memset(row, 0, (size_t)w * (size_t)sp * ss + 8);
                for (int x = 0; x < w; x++)
                    for (int k = 0; k < sp; k++) {
                        const unsigned char *v = SAMPLE(x, y, planar == 2 ? p : k);
                        const size_t i = (size_t)x * (size_t)sp + (size_t)k;
                        if (bps < 8)
                            row[i * (size_t)bps / 8] |= (unsigned char)((v[0] >> (8 - bps)) << (8 - bps - i * (size_t)bps % 8));
                        else
                            memcpy(row + i * ss, v, ss);
                    }
                ok = TIFFWriteScanline(t, row, (uint32_t)y, (uint16_t)p) >= 0;
            }
    } else {
        TIFFSetField(t, TIFFTAG_TILEWIDTH, (uint32_t)tw);
        TIFFSetField(t, TIFFTAG_TILELENGTH, (uint32_t)th);
        unsigned char *tile = calloc((size_t)TIFFTileSize(t), 1);
        for (int p = 0; p < planes && ok; p++)
            for (int ty = 0; ty < h && ok; ty += th)
                for (int tx = 0; tx < w && ok; tx += tw) {
                    for (int y = 0; y < th; y++)
                        for (int x = 0; x < tw; x++)
                            for (int k = 0; k < sp; k++)
                                if (tx + x < w && ty + y < h)
                                    memcpy(tile + (((size_t)y * tw + (size_t)x) * (size_t)sp + (size_t)k) * ss,
                                           SAMPLE(tx + x, ty + y, planar == 2 ? p : k), ss);
                    ok = TIFFWriteTile(t, tile, (uint32_t)tx, (uint32_t)ty, 0, (uint16_t)p) >= 0;
                }
        free(tile);
    }
    #undef SAMPLE
    TIFFClose(t);
    free(row);
    vkimg_image_free(&im);
    if (!ok)
        die("%s: libtiff could not write it", name);
    FILE *f = fopen(path, "rb");
    bbuf b = { 0 };
    unsigned char buf[4096];
    for (size_t n; f && (n = fread(buf, 1, sizeof buf, f)) > 0;)
        bb_put(&b, buf, n);
    if (f)
        fclose(f);
    remove(path);
    put_load(name, b.p, b.n);
    free(b.p);
}

/* An image through vkimg's TIFF writer (Deflate or uncompressed), with m's ICC profile */
/* A 2 x 1 RGB TIFF (little-endian, uncompressed) built here entry by entry, whose IFD0
 * points to an Exif IFD (a RATIONAL, an ASCII and a MakerNote by offset, and a
 * pointer to an Interop IFD) and a GPS IFD (values inline): the IFDs vkimg makes a
 * TIFF's EXIF block of (meta.c tiff_exif), the Interop IFD libtiff does not write. */
static void tiff_exif_hand(const char *name)
{
    unsigned char f[326] = { 'I', 'I', 42, 0, 8, 0, 0, 0 };
    enum { IFD0 = 8, EXIF = 170, GPS = 224, INTEROP = 254, MAKE = 272, EXPO = 278, DATE = 286, MAKER = 306,
           PIX = 314, BPS = 320 };
    static const struct { unsigned at, tag, type; uint32_t count, val; } ents[] = {
        { IFD0, 256, 3, 1, 2 }, { IFD0, 257, 3, 1, 1 }, { IFD0, 258, 3, 3, BPS }, { IFD0, 259, 3, 1, 1 },
        { IFD0, 262, 3, 1, 2 }, { IFD0, 271, 2, 6, MAKE }, { IFD0, 273, 4, 1, PIX }, { IFD0, 274, 3, 1, 3 },
        { IFD0, 277, 3, 1, 3 }, { IFD0, 278, 3, 1, 1 }, { IFD0, 279, 4, 1, 6 }, { IFD0, 34665, 4, 1, EXIF },
        { IFD0, 34853, 4, 1, GPS }, { EXIF, 33434, 5, 1, EXPO }, { EXIF, 36867, 2, 20, DATE },
        { EXIF, 37500, 7, 8, MAKER }, { EXIF, 40965, 4, 1, INTEROP }, { GPS, 0, 1, 4, 0x00000302u },
        { GPS, 1, 2, 2, 'N' }, { INTEROP, 1, 2, 4, 'R' | '9' << 8 | '8' << 16 },
    };
    unsigned next[4] = { IFD0 + 2, EXIF + 2, GPS + 2, INTEROP + 2 }, counts[4] = { 0 };
    const unsigned starts[4] = { IFD0, EXIF, GPS, INTEROP };
    for (size_t i = 0; i < sizeof ents / sizeof ents[0]; i++) {
        int k = 0;
        while (starts[k] != ents[i].at)
            k++;
        unsigned char *q = f + next[k];
        const uint32_t v[3] = { ents[i].tag | ents[i].type << 16, ents[i].count, ents[i].val };
        for (int j = 0; j < 12; j++)
            q[j] = (unsigned char)(v[j / 4] >> (8 * (j % 4)));
        next[k] += 12;
        counts[k]++;
    }
    for (int k = 0; k < 4; k++) /* the entry counts (each IFD's next-IFD offset stays 0) */
        f[starts[k]] = (unsigned char)counts[k];
    memcpy(f + MAKE, "Maker", 6);
    memcpy(f + EXPO, "\1\0\0\0\175\0\0\0", 8); /* 1/125 */
    memcpy(f + DATE, "2024:01:02 03:04:05", 20);
    memcpy(f + MAKER, "MAKERNTE", 8);
    memcpy(f + PIX, "\377\0\0\0\377\0", 6);
    memcpy(f + BPS, "\10\0\10\0\10\0", 6);
    put_load(name, f, sizeof f);
}

static void tiff_ours(const char *name, int w, int h, int c, vkimg_fmt fmt, bool deflate, const vkimg_meta *m)
{
    vkimg_image im = make_image(w, h, c, fmt);
    unsigned char *f;
    size_t n;
    vkimg_err e;
    if (vki_tiff_encode_ex(&im, m, deflate, 1, &f, &n, &e))
        die("%s: %s", name, e.msg);
    put_load(name, f, n);
    free(f);
    vkimg_image_free(&im);
}

/* ---------------------------------------------------------------- JPEG */

static void jpeg_tj(const char *name, int w, int h, int pf, int subsamp, int quality, int flags, const vkimg_meta *m)
{
    int ps = tjPixelSize[pf];
    unsigned char *px = malloc((size_t)w * h * ps);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < ps; k++)
                px[((size_t)y * w + x) * ps + k] = (unsigned char)pat(x, y, k);
    tjhandle t = tjInitCompress();
    unsigned char *jpg = NULL;
    unsigned long n = 0;
    if (!t || tjCompress2(t, px, w, 0, h, pf, &jpg, &n, subsamp, quality, flags))
        die("%s: %s", name, tjGetErrorStr2(t));
    put_load_meta(name, jpg, n, m, vki_jpeg_add_meta);
    tjFree(jpg);
    tjDestroy(t);
    free(px);
}

/* a progressive JPEG with its metadata and junk before its DQT segment (the
 * loader's TurboJPEG-warning fallback to libjpeg, and the metadata reader's skip) */
static void jpeg_header_junk(const char *name, const vkimg_meta *m)
{
    unsigned char px[24 * 16 * 3];
    for (int i = 0; i < 24 * 16 * 3; i++)
        px[i] = (unsigned char)pat(i / 3 % 24, i / 72, i % 3);
    tjhandle t = tjInitCompress();
    unsigned char *jpg = NULL, *out;
    unsigned long n = 0;
    size_t outn;
    vkimg_err e;
    if (!t || tjCompress2(t, px, 24, 0, 16, TJPF_RGB, &jpg, &n, TJSAMP_420, 80, TJFLAG_PROGRESSIVE))
        die("%s: %s", name, tjGetErrorStr2(t));
    if (vki_jpeg_add_meta(jpg, n, m, &out, &outn, NULL, &e))
        die("%s: %s", name, e.msg);
    const size_t at = lj_marker(out, outn, 0xdb, 0);
    unsigned char *b = malloc(outn + 5);
    memcpy(b, out, at);
    memcpy(b + at, "\x00\x12\xff\x00\x34", 5);
    memcpy(b + at + 5, out + at, outn - at);
    put_load(name, b, outn + 5);
    free(b);
    free(out);
    tjFree(jpg);
    tjDestroy(t);
}

/* sampling factors TurboJPEG has no TJSAMP for (hv: Y, Cb, Cr as h * 16 + v),
 * through libjpeg's own API: the loader's libjpeg path (src/io/jpeg.c lj_decode) */
static void jpeg_lj(const char *name, int w, int h, const int hv[3], int progressive)
{
    vkimg_image im = { .w = w, .h = h, .c = 3, .fmt = VKIMG_U8, .data = malloc((size_t)w * h * 3) };
    if (!im.data)
        die("%s: out of memory", name);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < 3; k++)
                ((unsigned char *)im.data)[((size_t)y * w + x) * 3 + k] = (unsigned char)pat(x, y, k);
    size_t n;
    unsigned char *jpg = lj_encode(&im, 80, hv, progressive, &n);
    put_load(name, jpg, n);
    free(jpg);
    free(im.data);
}

/* ---------------------------------------------------------------- GIF */

static int gif_write(GifFileType *g, const GifByteType *d, int n)
{
    bb_put(g->UserData, d, (size_t)n);
    return n;
}

/* w x h screen; a frame fw x fh at (fx, fy) (interlaced or not, local colour table
 * or the global one, a transparent index or none), and a second frame if frames
 * is 2. */
static void gif_make(const char *name, int version89, int w, int h, int fx, int fy, int fw, int fh, int interlace,
                     int local, int transparent, int frames)
{
    bbuf b = { 0 };
    int err;
    GifFileType *g = EGifOpen(&b, gif_write, &err);
    if (!g)
        die("%s: EGifOpen %d", name, err);
    EGifSetGifVersion(g, version89);
    GifColorType cols[8];
    for (int i = 0; i < 8; i++)
        cols[i].Red = (GifByteType)(i * 36), cols[i].Green = (GifByteType)(255 - i * 30),
        cols[i].Blue = (GifByteType)(i * 17);
    ColorMapObject *cm = GifMakeMapObject(8, cols);
    if (EGifPutScreenDesc(g, w, h, 3, 0, local ? NULL : cm) == GIF_ERROR)
        die("%s: screen", name);
    for (int f = 0; f < frames; f++) {
        if (transparent >= 0) {
            unsigned char gce[4] = { 1, 10, 0, (unsigned char)transparent };
            EGifPutExtension(g, GRAPHICS_EXT_FUNC_CODE, 4, gce);
        }
        if (EGifPutImageDesc(g, fx, fy, fw, fh, interlace, local ? cm : NULL) == GIF_ERROR)
            die("%s: image", name);
        GifPixelType *row = malloc((size_t)fw);
        /* giflib takes interlaced rows in file order: the pattern does not care */
        for (int y = 0; y < fh; y++) {
            for (int x = 0; x < fw; x++)
                row[x] = (GifPixelType)(pat(x, y + f, 0) % 8);
            if (EGifPutLine(g, row, fw) == GIF_ERROR)
                die("%s: line", name);
        }
        free(row);
    }
    if (EGifCloseFile(g, &err) == GIF_ERROR)
        die("%s: close %d", name, err);
    GifFreeMapObject(cm);
    put_load(name, b.p, b.n);
    free(b.p);
}

/* ---------------------------------------------------------------- BMP, TGA, HDR */

static void stbiw_put(void *ctx, void *data, int size) { bb_put(ctx, data, (size_t)size); }

static void stbiw_make(const char *name, vkimg_file_kind k, int w, int h, int c)
{
    vkimg_image im = make_image(w, h, c, k == VKIMG_FILE_HDR ? VKIMG_F32 : VKIMG_U8);
    bbuf b = { 0 };
    if (!vki_stbiw_write(k, stbiw_put, &b, w, h, c, im.data))
        die("%s: stb_image_write failed", name);
    put_load(name, b.p, b.n);
    free(b.p);
    vkimg_image_free(&im);
}

/* BMP RLE8 (bpp 8) or RLE4 (bpp 4) by hand, 7x4: encoded runs, absolute runs
 * (odd lengths, padded), an end of line, a delta and an end of bitmap. */
static void bmp_rle_hand(const char *name, int bpp)
{
    static const unsigned char d8[] = { 3, 1, 0, 4, 2, 3, 4, 5, 0, 0, 0, 3, 6, 7, 8, 0, 4, 9, 0, 0,
                                        0, 2, 2, 1, 0, 5, 1, 2, 3, 4, 5, 0, 0, 1 };
    static const unsigned char d4[] = { 3, 0x12, 0, 4, 0x34, 0x56, 0, 0, 0, 3, 0x78, 0x90, 4, 0xab, 0, 0,
                                        0, 2, 2, 1, 0, 5, 0x12, 0x34, 0x50, 0, 0, 1 };
    const unsigned char *d = bpp == 8 ? d8 : d4;
    const size_t nd = bpp == 8 ? sizeof d8 : sizeof d4;
    const int w = 7, h = 4, npal = 16;
    bbuf b = { 0 };
    const size_t off = 14 + 40 + (size_t)npal * 4;
    bb_str(&b, "BM");
    bb_le32(&b, (uint32_t)(off + nd));
    bb_le32(&b, 0);
    bb_le32(&b, (uint32_t)off);
    bb_le32(&b, 40);
    bb_le32(&b, (uint32_t)w), bb_le32(&b, (uint32_t)h);
    bb_le16(&b, 1), bb_le16(&b, (unsigned)bpp);
    bb_le32(&b, bpp == 8 ? 1 : 2); /* BI_RLE8 : BI_RLE4 */
    bb_le32(&b, (uint32_t)nd);
    bb_le32(&b, 2835), bb_le32(&b, 2835);
    bb_le32(&b, (uint32_t)npal), bb_le32(&b, 0);
    for (int i = 0; i < npal; i++)
        bb_u8(&b, (unsigned)i * 15), bb_u8(&b, 255 - (unsigned)i * 15), bb_u8(&b, (unsigned)i * 50 & 0xff), bb_u8(&b, 0);
    bb_put(&b, d, nd);
    put_load(name, b.p, b.n);
    free(b.p);
}

/* BMP by hand: bpp 1/2/4/8 (a palette), 16 (masks 5-6-5 with BI_BITFIELDS) or 32
 * (BI_BITFIELDS with alpha); hdr 40, 52 (V2: masks in it), 64 (OS/2 2.x: no bit
 * fields) or 108 bytes; top-down when topdown. */
static void bmp_hand(const char *name, int w, int h, int bpp, int hdrsize, int topdown)
{
    bbuf px = { 0 }, b = { 0 };
    size_t stride = (((size_t)w * bpp + 31) / 32) * 4;
    unsigned char *row = malloc(stride);
    for (int y = 0; y < h; y++) {
        memset(row, 0, stride);
        for (int x = 0; x < w; x++) {
            unsigned v = pat(x, y, 0);
            if (bpp < 8) {
                v &= (1u << bpp) - 1;
                row[(size_t)x * bpp / 8] |= (unsigned char)(v << (8 - bpp - (x * bpp) % 8));
            } else if (bpp == 8) {
                row[x] = (unsigned char)(v % 16);
            } else if (bpp == 16) {
                unsigned p = (v >> 3) << 11 | (pat(x, y, 1) >> 2) << 5 | pat(x, y, 2) >> 3;
                row[2 * x] = (unsigned char)p, row[2 * x + 1] = (unsigned char)(p >> 8);
            } else {
                for (int k = 0; k < 4; k++)
                    row[4 * x + k] = (unsigned char)pat(x, y, k);
            }
        }
        bb_put(&px, row, stride);
    }
    free(row);
    int npal = bpp <= 8 ? (bpp == 8 ? 16 : 1 << bpp) : 0;
    int masks = (bpp == 16 || bpp == 32) && hdrsize == 40 ? 12 : 0;
    size_t off = 14 + (size_t)hdrsize + (size_t)masks + (size_t)npal * 4;
    bb_str(&b, "BM");
    bb_le32(&b, (uint32_t)(off + px.n));
    bb_le32(&b, 0);
    bb_le32(&b, (uint32_t)off);
    bb_le32(&b, (uint32_t)hdrsize);
    bb_le32(&b, (uint32_t)w);
    bb_le32(&b, (uint32_t)(topdown ? -h : h));
    bb_le16(&b, 1);
    bb_le16(&b, (unsigned)bpp);
    bb_le32(&b, (bpp == 16 || bpp == 32) && hdrsize != 64 ? 3 : 0); /* BI_BITFIELDS : BI_RGB */
    bb_le32(&b, (uint32_t)px.n);
    bb_le32(&b, 2835), bb_le32(&b, 2835);
    bb_le32(&b, (uint32_t)npal), bb_le32(&b, 0);
    uint32_t rm = bpp == 16 ? 0xf800 : 0x00ff0000, gm = bpp == 16 ? 0x07e0 : 0x0000ff00,
             bm = bpp == 16 ? 0x001f : 0x000000ff, am = bpp == 32 ? 0xff000000 : 0;
    if (hdrsize == 52) {
        bb_le32(&b, rm), bb_le32(&b, gm), bb_le32(&b, bm);
    } else if (hdrsize == 64) {
        for (int i = 0; i < 6; i++) /* OS/2's own fields */
            bb_le32(&b, 0);
    } else if (hdrsize == 108) {
        bb_le32(&b, rm), bb_le32(&b, gm), bb_le32(&b, bm), bb_le32(&b, am);
        bb_str(&b, "BGRs");
        for (int i = 0; i < 12; i++)
            bb_le32(&b, 0);
    } else if (masks) {
        bb_le32(&b, rm), bb_le32(&b, gm), bb_le32(&b, bm);
    }
    for (int i = 0; i < npal; i++)
        bb_u8(&b, (unsigned)i * 15), bb_u8(&b, 255 - (unsigned)i * 15), bb_u8(&b, (unsigned)i * 50 & 0xff), bb_u8(&b, 0);
    bb_put(&b, px.p, px.n);
    put_load(name, b.p, b.n);
    free(px.p);
    free(b.p);
}

/* TGA by hand: type 1 (colour-mapped, 24-bit map), 3 (gray), 11 (gray RLE), 2
 * (true colour, 16 or 32 bits); top-down or not. */
static void tga_hand(const char *name, int type, int bpp, int w, int h, int topdown)
{
    bbuf b = { 0 };
    int cmap = type == 1 || type == 9;
    bb_u8(&b, 0);
    bb_u8(&b, cmap ? 1 : 0);
    bb_u8(&b, (unsigned)type);
    bb_le16(&b, 0), bb_le16(&b, cmap ? 8 : 0), bb_u8(&b, cmap ? 24 : 0);
    bb_le16(&b, 0), bb_le16(&b, 0), bb_le16(&b, (unsigned)w), bb_le16(&b, (unsigned)h);
    bb_u8(&b, (unsigned)bpp);
    bb_u8(&b, (topdown ? 0x20 : 0) | (bpp == 32 ? 8 : 0));
    if (cmap)
        for (int i = 0; i < 8; i++)
            bb_u8(&b, (unsigned)i * 30), bb_u8(&b, 200 - (unsigned)i * 20), bb_u8(&b, (unsigned)i * 7);
    int bytes = bpp / 8;
    if (type >= 9) { /* RLE: a run packet then a raw packet per row */
        for (int y = 0; y < h; y++) {
            int run = w / 2, rawn = w - run;
            bb_u8(&b, 0x80 | (unsigned)(run - 1));
            for (int k = 0; k < bytes; k++)
                bb_u8(&b, cmap ? (unsigned)y % 8 : pat(0, y, k));
            bb_u8(&b, (unsigned)(rawn - 1));
            for (int x = 0; x < rawn; x++)
                for (int k = 0; k < bytes; k++)
                    bb_u8(&b, cmap ? (unsigned)x % 8 : pat(x, y, k));
        }
    } else {
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int k = 0; k < bytes; k++)
                    bb_u8(&b, cmap ? pat(x, y, 0) % 8 : pat(x, y, k));
    }
    put_load(name, b.p, b.n);
    free(b.p);
}

static void pnm_hand(const char *name, int kind, int w, int h, int maxval)
{
    bbuf b = { 0 };
    int c = kind == 3 || kind == 6 ? 3 : 1;
    bb_printf(&b, "P%d\n# vkimg fuzz seed\n%d %d\n", kind, w, h);
    if (kind != 1 && kind != 4)
        bb_printf(&b, "%d\n", maxval);
    if (kind == 4) {
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x += 8)
                bb_u8(&b, pat(x, y, 0) ^ 0x5a);
    } else {
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++)
                for (int k = 0; k < c; k++) {
                    unsigned v = kind == 1 ? pat(x, y, k) & 1 : pat(x, y, k) * (unsigned)maxval / 255;
                    if (kind <= 3)
                        bb_printf(&b, "%u ", v);
                    else if (maxval > 255)
                        bb_be16(&b, v);
                    else
                        bb_u8(&b, v);
                }
            if (kind <= 3)
                bb_str(&b, "\n");
        }
    }
    put_load(name, b.p, b.n);
    free(b.p);
}

/* PAM (P7) by hand: depth 1..4, 8 or 16-bit samples */
static void pam_hand(const char *name, int depth, int w, int h, int maxval)
{
    static const char *const tt[4] = { "GRAYSCALE", "GRAYSCALE_ALPHA", "RGB", "RGB_ALPHA" };
    bbuf b = { 0 };
    bb_printf(&b, "P7\n# vkimg fuzz seed\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL %d\nTUPLTYPE %s\nENDHDR\n", w, h, depth,
              maxval, tt[depth - 1]);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < depth; k++) {
                unsigned v = pat(x, y, k) * (unsigned)maxval / 255;
                if (maxval > 255)
                    bb_be16(&b, v);
                else
                    bb_u8(&b, v);
            }
    put_load(name, b.p, b.n);
    free(b.p);
}

/* Radiance HDR, flat scanlines (width < 8, or any width as flat RGBE) */
static void hdr_flat(const char *name, const char *sig, int w, int h)
{
    bbuf b = { 0 };
    bb_printf(&b, "%s\n# vkimg fuzz seed\nFORMAT=32-bit_rle_rgbe\nEXPOSURE=1.0\n\n-Y %d +X %d\n", sig, h, w);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            bb_u8(&b, pat(x, y, 0) | 0x80), bb_u8(&b, pat(x, y, 1) | 0x80), bb_u8(&b, pat(x, y, 2) | 0x80),
                bb_u8(&b, (x + y) % 3 ? 128 + (unsigned)x : 0);
    put_load(name, b.p, b.n);
    free(b.p);
}

/* PSD: mode 3 (RGB) or 1 (gray), depth 8/16, c channels, raw or PackBits */
static void psd_hand(const char *name, int mode, int depth, int c, int w, int h, int rle)
{
    bbuf b = { 0 };
    bb_str(&b, "8BPS");
    bb_be16(&b, 1);
    for (int i = 0; i < 6; i++)
        bb_u8(&b, 0);
    bb_be16(&b, (unsigned)c), bb_be32(&b, (uint32_t)h), bb_be32(&b, (uint32_t)w);
    bb_be16(&b, (unsigned)depth), bb_be16(&b, (unsigned)mode);
    bb_be32(&b, 0); /* colour mode data */
    bb_be32(&b, 0); /* image resources */
    bb_be32(&b, 0); /* layers */
    bb_be16(&b, rle ? 1 : 0);
    int bps = depth / 8;
    if (!rle) {
        for (int k = 0; k < c; k++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    unsigned v = k == 3 ? 255 - (unsigned)x * 9 : pat(x, y, k);
                    if (bps == 2)
                        bb_be16(&b, v * 257);
                    else
                        bb_u8(&b, v);
                }
    } else {
        /* per row: a run of w/2 copies, then the rest literal (bytes of the row) */
        size_t rowbytes = (size_t)w * bps;
        bbuf rows = { 0 };
        unsigned *counts = malloc(sizeof *counts * (size_t)c * h);
        for (int k = 0; k < c; k++)
            for (int y = 0; y < h; y++) {
                size_t at = rows.n;
                size_t run = rowbytes / 2, lit = rowbytes - run;
                bb_u8(&rows, (unsigned)(257 - run) & 0xff);
                bb_u8(&rows, pat(0, y, k));
                bb_u8(&rows, (unsigned)(lit - 1));
                for (size_t i = 0; i < lit; i++)
                    bb_u8(&rows, pat((int)i, y, k));
                counts[(size_t)k * h + y] = (unsigned)(rows.n - at);
            }
        for (int i = 0; i < c * h; i++)
            bb_be16(&b, counts[i]);
        bb_put(&b, rows.p, rows.n);
        free(counts);
        free(rows.p);
    }
    put_load(name, b.p, b.n);
    free(b.p);
}

/* ---------------------------------------------------------------- KTX2 */

static void ktx2_make(const char *name, int w, int h, int c, vkimg_fmt fmt, int nlevels, int srgb)
{
    vkimg_image lv[VKI_KTX2_MAX_LEVELS];
    for (int p = 0; p < nlevels; p++)
        lv[p] = make_image(w >> p > 1 ? w >> p : 1, h >> p > 1 ? h >> p : 1, c, fmt);
    vki_ktx2_opts o = { .srgb = srgb };
    unsigned char *out;
    size_t n;
    vkimg_err e;
    if (vki_ktx2_encode_ex(lv, nlevels, &o, &out, &n, &e))
        die("%s: %s", name, e.msg);
    put("ktx2", name, out, n);
    free(out);
    for (int p = 0; p < nlevels; p++)
        vkimg_image_free(&lv[p]);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: fuzz-mkseeds CORPUS-DIR");
    g_root = argv[1];
    if (mkdir(g_root, 0777) && errno != EEXIST)
        die("%s: %s", g_root, strerror(errno));

    /* metadata for the PNG and JPEG files that carry some */
    bbuf exif = { 0 }, exif_be = { 0 }, icc = { 0 };
    make_exif(&exif, 6, 0);
    make_exif(&exif_be, 8, 1);
    make_icc(&icc, 132);
    /* XMP packets with tiff:Orientation as an attribute and as an element */
    static char xmp[] = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-"
                        "syntax-ns#\"><rdf:Description rdf:about=\"\" xmlns:tiff=\"http://ns.adobe.com/tiff/1.0/\" "
                        "tiff:Orientation=\"6\"/></rdf:RDF></x:xmpmeta>";
    static char xmp_be[] = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-"
                           "rdf-syntax-ns#\"><rdf:Description rdf:about=\"\"><tiff:Orientation>8</tiff:Orientation>"
                           "</rdf:Description></rdf:RDF></x:xmpmeta>";
    /* Photoshop's resources: an IPTC record (version, a caption) and a resource with a name */
    static unsigned char irb[] = "8BIM\x04\x04\0\0\0\0\0\x10\x1c\x02\0\0\x02\0\x04\x1c\x02\x78\0\x04"
                                 "fuzz"
                                 "8BIM\x03\xed\x02hi\0\0\0\0\x03\x01\x02\x03";
    vkimg_meta m = { .icc = icc.p, .icc_len = icc.n, .exif = exif.p, .exif_len = exif.n, .orientation = 6,
                     .xmp = (unsigned char *)xmp, .xmp_len = sizeof xmp - 1, .iptc = irb, .iptc_len = sizeof irb - 1 };
    snprintf(m.icc_name, sizeof m.icc_name, "fuzz profile");
    vkimg_meta m_be = { .exif = exif_be.p, .exif_len = exif_be.n, .orientation = 8, .xmp = (unsigned char *)xmp_be,
                        .xmp_len = sizeof xmp_be - 1 };

    /* PNG: ours (8/16-bit, 1-4 channels, with metadata), by hand (palette, low
     * bit depths, tRNS, Adam7) */
    png_ours("png_rgb8.png", 9, 7, 3, VKIMG_U8, 6, NULL);
    png_ours("png_rgba8_meta.png", 6, 5, 4, VKIMG_U8, 1, &m);
    png_ours("png_gray16.png", 5, 4, 1, VKIMG_U16, 9, NULL);
    png_ours("png_ga8.png", 4, 4, 2, VKIMG_U8, 0, &m_be);
    png_ours("png_rgba16.png", 3, 3, 4, VKIMG_U16, 12, NULL);
    static const unsigned char trns_pal[] = { 0, 128, 255 }, trns_gray[] = { 0, 3 }, trns_rgb[] = { 0, 37, 0, 82, 0, 71 };
    static const unsigned char trns_gray16[] = { 0, 11 }, trns_rgb16[] = { 0, 0, 0, 71, 0, 142 };
    png_hand("png_pal1.png", 13, 3, 3, 1, 0, 2, NULL, 0);
    png_hand("png_pal2_adam7.png", 9, 9, 3, 2, 1, 4, trns_pal, sizeof trns_pal);
    png_hand("png_pal4_trns.png", 7, 5, 3, 4, 0, 16, trns_pal, sizeof trns_pal);
    png_hand("png_pal8.png", 5, 3, 3, 8, 0, 256, NULL, 0);
    png_hand("png_gray1.png", 17, 2, 0, 1, 0, 0, NULL, 0);
    png_hand("png_gray2_adam7.png", 10, 11, 0, 2, 1, 0, NULL, 0);
    png_hand("png_gray4_trns.png", 6, 3, 0, 4, 0, 0, trns_gray, sizeof trns_gray);
    png_hand("png_rgb8_trns.png", 4, 3, 2, 8, 0, 0, trns_rgb, sizeof trns_rgb);
    png_hand("png_rgb16_adam7.png", 9, 10, 2, 16, 1, 0, NULL, 0);
    png_hand("png_ga16.png", 3, 2, 4, 16, 0, 0, NULL, 0);
    png_hand("png_gray16_trns.png", 5, 3, 0, 16, 0, 0, trns_gray16, sizeof trns_gray16);
    png_hand("png_rgb16_trns_adam7.png", 6, 5, 2, 16, 1, 0, trns_rgb16, sizeof trns_rgb16);
    png_hand("png_rgba8_adam7.png", 8, 8, 6, 8, 1, 0, NULL, 0);
    png_xmp_late("png_rgb8_xmp_itxt_z.png", xmp_be);

    /* JPEG: TurboJPEG (gray, 4:2:0, 4:2:2, 4:4:4, progressive, CMYK), metadata */
    jpeg_tj("jpeg_gray.jpg", 16, 8, TJPF_GRAY, TJSAMP_GRAY, 75, 0, NULL);
    jpeg_tj("jpeg_420.jpg", 17, 9, TJPF_RGB, TJSAMP_420, 50, 0, NULL);
    jpeg_tj("jpeg_422_meta.jpg", 16, 16, TJPF_RGB, TJSAMP_422, 80, 0, &m);
    jpeg_tj("jpeg_444.jpg", 8, 8, TJPF_RGB, TJSAMP_444, 95, 0, &m_be);
    jpeg_tj("jpeg_progressive.jpg", 16, 16, TJPF_RGB, TJSAMP_420, 70, TJFLAG_PROGRESSIVE, NULL);
    jpeg_tj("jpeg_progressive_444.jpg", 24, 16, TJPF_RGB, TJSAMP_444, 85, TJFLAG_PROGRESSIVE, NULL);
    jpeg_tj("jpeg_cmyk.jpg", 8, 8, TJPF_CMYK, TJSAMP_444, 60, 0, NULL);
    jpeg_header_junk("jpeg_header_junk.jpg", &m);
    jpeg_lj("jpeg_410.jpg", 19, 9, (const int[]){ 0x42, 0x11, 0x11 }, 0);
    jpeg_lj("jpeg_mixed_progressive.jpg", 17, 16, (const int[]){ 0x22, 0x12, 0x11 }, 1);

    /* WebP: libwebp (lossy, lossless, alpha, metadata through libwebpmux, animations) */
    webp_ours("webp_lossy_rgb.webp", 9, 7, 3, 75, false, NULL);
    webp_ours("webp_lossy_rgba_meta.webp", 6, 5, 4, 50, false, &m);
    webp_ours("webp_lossless_rgb.webp", 17, 3, 3, 90, true, NULL);
    webp_ours("webp_lossless_rgba_meta_be.webp", 5, 4, 4, 90, true, &m_be);
    webp_anim("webp_anim_lossless.webp", 6, 4, true);
    webp_anim("webp_anim_lossy.webp", 5, 5, false);

    /* GIF: giflib */
    gif_make("gif_global.gif", 0, 8, 6, 0, 0, 8, 6, 0, 0, -1, 1);
    gif_make("gif_local_trns_offset.gif", 1, 10, 8, 2, 1, 5, 4, 0, 1, 3, 1);
    gif_make("gif_interlaced.gif", 1, 9, 9, 0, 0, 9, 9, 1, 0, -1, 1);
    gif_make("gif_two_frames.gif", 1, 6, 4, 0, 0, 6, 4, 0, 0, 2, 2);

    /* BMP: stb_image_write (24/32-bit), by hand (palettes, bit fields, V4, top-down) */
    stbiw_make("bmp_rgb24.bmp", VKIMG_FILE_BMP, 5, 3, 3);
    stbiw_make("bmp_rgba32.bmp", VKIMG_FILE_BMP, 3, 3, 4);
    bmp_hand("bmp_pal1.bmp", 11, 3, 1, 40, 0);
    bmp_hand("bmp_pal2.bmp", 7, 3, 2, 40, 0);
    bmp_hand("bmp_pal4_topdown.bmp", 5, 4, 4, 40, 1);
    bmp_hand("bmp_pal8.bmp", 6, 3, 8, 40, 0);
    bmp_hand("bmp_565.bmp", 4, 3, 16, 40, 0);
    bmp_hand("bmp_v4_rgba32.bmp", 3, 2, 32, 108, 1);
    bmp_hand("bmp_v2_565.bmp", 5, 3, 16, 52, 0);
    bmp_hand("bmp_os2v2_pal8.bmp", 6, 3, 8, 64, 1);
    bmp_rle_hand("bmp_rle8.bmp", 8);
    bmp_rle_hand("bmp_rle4.bmp", 4);

    /* TGA: stb_image_write (RLE true colour), by hand */
    stbiw_make("tga_rle_rgb.tga", VKIMG_FILE_TGA, 9, 4, 3);
    stbiw_make("tga_rle_rgba.tga", VKIMG_FILE_TGA, 4, 3, 4);
    stbiw_make("tga_rle_gray.tga", VKIMG_FILE_TGA, 6, 2, 1);
    tga_hand("tga_cmap.tga", 1, 8, 5, 3, 0);
    tga_hand("tga_cmap_rle.tga", 9, 8, 6, 2, 1);
    tga_hand("tga_gray.tga", 3, 8, 4, 3, 1);
    tga_hand("tga_gray_rle.tga", 11, 8, 6, 3, 0);
    tga_hand("tga_rgb16.tga", 2, 16, 3, 2, 0);
    tga_hand("tga_rgba32.tga", 2, 32, 3, 3, 1);

    /* PNM: every kind, 8 and 16-bit */
    pnm_hand("pnm_p1.pbm", 1, 5, 3, 1);
    pnm_hand("pnm_p2.pgm", 2, 4, 3, 15);
    pnm_hand("pnm_p3.ppm", 3, 3, 2, 255);
    pnm_hand("pnm_p4.pbm", 4, 12, 3, 1);
    pnm_hand("pnm_p5.pgm", 5, 5, 4, 255);
    pnm_hand("pnm_p5_16.pgm", 5, 3, 2, 65535);
    pnm_hand("pnm_p6.ppm", 6, 4, 3, 255);
    pnm_hand("pnm_p6_16.ppm", 6, 2, 2, 1000);
    pam_hand("pnm_p7_rgba.pam", 4, 3, 2, 255);
    pam_hand("pnm_p7_ga16.pam", 2, 2, 3, 65535);

    /* HDR: stb_image_write (RLE scanlines from width 8), flat by hand */
    stbiw_make("hdr_rle.hdr", VKIMG_FILE_HDR, 12, 3, 3);
    hdr_flat("hdr_flat.hdr", "#?RADIANCE", 5, 3);
    hdr_flat("hdr_flat_rgbe.hdr", "#?RGBE", 9, 2);

    /* PSD: RGB and gray, 8 and 16-bit, raw and PackBits, with and without alpha */
    psd_hand("psd_rgb8.psd", 3, 8, 3, 4, 3, 0);
    psd_hand("psd_rgba8_rle.psd", 3, 8, 4, 6, 3, 1);
    psd_hand("psd_rgb16_rle.psd", 3, 16, 3, 3, 2, 1);
    psd_hand("psd_gray8_rle.psd", 1, 8, 1, 5, 2, 1);
    psd_hand("psd_ga16.psd", 1, 16, 2, 3, 2, 0);

    /* TIFF: vkimg's writer; libtiff's strips and tiles, chunky and planar, both byte
     * orders and BigTIFF, every compression vkimg reads, 1-32 bits, palette, CMYK,
     * alpha of each kind, the orientation and an ICC profile */
    tiff_ours("tiff_ours_rgb8_icc.tif", 7, 5, 3, VKIMG_U8, true, &m);
    tiff_ours("tiff_ours_ga16_none.tif", 5, 3, 2, VKIMG_U16, false, NULL);
    tiff_ours("tiff_ours_rgbaf.tif", 4, 3, 4, VKIMG_F32, true, NULL);
    tiff_lt("tiff_lzw_pred_strips.tif", "w", 7, 5, 3, 8, PHOTOMETRIC_RGB, COMPRESSION_LZW, 2, 1, 2, 0, 0, -1, 6, &m);
    tiff_lt("tiff_deflate16_be.tif", "wb", 5, 3, 3, 16, PHOTOMETRIC_RGB, COMPRESSION_ADOBE_DEFLATE, 2, 1, 1, 0, 0, -1, 0,
            NULL);
    tiff_lt("tiff_packbits_gray.tif", "w", 9, 4, 1, 8, PHOTOMETRIC_MINISBLACK, COMPRESSION_PACKBITS, 1, 1, 3, 0, 0, -1,
            0, NULL);
    tiff_lt("tiff_tiles_planar.tif", "w", 17, 9, 3, 8, PHOTOMETRIC_RGB, COMPRESSION_ADOBE_DEFLATE, 1, 2, 0, 16, 16, -1,
            0, NULL);
    tiff_lt("tiff_big_be_lzw.tif", "wb8", 6, 4, 4, 8, PHOTOMETRIC_RGB, COMPRESSION_LZW, 1, 1, 2, 0, 0,
            EXTRASAMPLE_UNASSALPHA, 0, NULL);
    tiff_lt("tiff_mono_miniswhite.tif", "w", 13, 3, 1, 1, PHOTOMETRIC_MINISWHITE, COMPRESSION_NONE, 1, 1, 3, 0, 0, -1,
            0, NULL);
    tiff_lt("tiff_pal4.tif", "w", 7, 3, 1, 4, PHOTOMETRIC_PALETTE, COMPRESSION_PACKBITS, 1, 1, 3, 0, 0, -1, 0, NULL);
    tiff_lt("tiff_ccitt_rle.tif", "w", 13, 5, 1, 1, PHOTOMETRIC_MINISWHITE, COMPRESSION_CCITTRLE, 1, 1, 5, 0, 0, -1, 0,
            NULL);
    tiff_lt("tiff_ccitt_fax3.tif", "w", 13, 5, 1, 1, PHOTOMETRIC_MINISWHITE, COMPRESSION_CCITTFAX3, 1, 1, 2, 0, 0, -1,
            0, NULL);
    tiff_lt("tiff_ccitt_fax4.tif", "wb", 13, 5, 1, 1, PHOTOMETRIC_MINISBLACK, COMPRESSION_CCITTFAX4, 1, 1, 5, 0, 0, -1,
            0, NULL);
    tiff_lt("tiff_ga_assoc.tif", "w", 5, 4, 2, 8, PHOTOMETRIC_MINISBLACK, COMPRESSION_NONE, 1, 1, 4, 0, 0,
            EXTRASAMPLE_ASSOCALPHA, 0, NULL);
    tiff_lt("tiff_float_pred3.tif", "w", 5, 3, 3, 32, PHOTOMETRIC_RGB, COMPRESSION_ADOBE_DEFLATE, 3, 1, 3, 0, 0, -1, 0,
            NULL);
    tiff_lt("tiff_cmyk.tif", "w", 4, 3, 4, 8, PHOTOMETRIC_SEPARATED, COMPRESSION_NONE, 1, 1, 3, 0, 0, -1, 0, NULL);
    tiff_lt("tiff_jpeg_ycbcr.tif", "w", 17, 16, 3, 8, PHOTOMETRIC_RGB, COMPRESSION_JPEG, 1, 1, 16, 0, 0, -1, 0, NULL);
    tiff_lt("tiff_jpeg_cmyk.tif", "w", 17, 16, 4, 8, PHOTOMETRIC_SEPARATED, COMPRESSION_JPEG, 1, 1, 8, 0, 0, -1, 0, NULL);
    tiff_exif_hand("tiff_exif_gps_interop.tif");

    /* recognized and refused, and TGA's lookalike */
    put_load("pic_refused.pic", "\x53\x80\xf6\x34PICT\0\0\0\0", 12);

    /* KTX2: every sample format, 1-4 channels, mip chains, sRGB, a 1-row texture */
    ktx2_make("u8_gray.ktx2", 4, 3, 1, VKIMG_U8, 1, 0);
    ktx2_make("u8_rgba_srgb_3levels.ktx2", 8, 4, 4, VKIMG_U8, 3, 1);
    ktx2_make("u8_rgb_srgb.ktx2", 3, 3, 3, VKIMG_U8, 2, 1);
    ktx2_make("u16_ga_2levels.ktx2", 4, 4, 2, VKIMG_U16, 2, 0);
    ktx2_make("f32_rgb.ktx2", 2, 3, 3, VKIMG_F32, 1, 0);
    ktx2_make("u8_row_4levels.ktx2", 8, 1, 4, VKIMG_U8, 4, 0);

    /* pipelines: every op, positional and named options, comments, geometry */
    static const char *const pipes[] = {
        "gray,blur=sigma=2",
        "gray=bt709,blur=2.5:7,copy",
        "blur=5:method=box",
        "blur=0.3,boxblur=5,integral",
        "threshold=adaptive:0.1:33:7,normalize=yes,equalize",
        "threshold=mode=otsu",
        "levels=black=0.1:white=0.9:gamma=2.2",
        "resize=50%:filter=mitchell:linear=on",
        "resize=100x100^,crop=w=100:h=100:gravity=centre",
        "resize=x50:fast=false",
        "thumbnail=256x128>:crop=centre",
        "thumbnail=x50<:filter=catrom",
        "crop=10x10+3-4",
        "crop=w=5:h=6:gravity=southeast:x=-3:y=4",
        "rotate=33:background=white",
        "rotate=-1.5:background=ff000080",
        "flip,flop,transpose,transverse,orient=6",
        "mipmaps=levels=3:filter=lanczos3:linear=true",
        "# a comment\ngray # and another\n,\tblur = sigma = 1.5",
    };
    for (size_t i = 0; i < sizeof pipes / sizeof pipes[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "pipeline%02zu", i);
        put("parse", name, pipes[i], strlen(pipes[i]));
    }

    /* PNG round trip: header bytes (fuzz.h) + pixel bytes */
    static const unsigned char rt[][16] = {
        { 7, 0, 4, 0x02, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 },          /* 8x5 RGB u8 */
        { 2, 0, 2, 0x07, 5, 7, 0, 0, 255, 255, 0, 128, 1, 2, 3, 4 },    /* 3x3 RGBA u16, split IDAT */
        { 0, 1, 0, 0x08, 12, 0, 'I', 'C', 'C', 1, 'E', 'X', 'I', 'F', 0, 0 }, /* 257x1 gray, metadata */
        { 15, 0, 15, 0x11, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9 },        /* 16x16 GA u8, level 1 */
        { 0, 0, 0, 0x0c, 0, 1, 0xff, 0xfe, 0, 1, 0x80, 0x7f, 0, 0, 0, 0 }, /* 1x1 gray u16, metadata */
    };
    for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "header%02zu", i);
        put("png_roundtrip", name, rt[i], sizeof rt[i]);
    }

    /* compare command lines (arguments separated by NUL bytes) */
    static const struct {
        const char *name, *args;
        size_t n;
    } cmds[] = {
#define CMD(name, s) { name, s, sizeof s - 1 }
        CMD("two_images", "a.png\0b.png"),
        CMD("thresholds", "a.png\0b.png\0--fail\0" "0.01\0--failpercent\0" "1.5\0--hardfail\0inf\0--warn\0" "1e-320"),
        CMD("warn", "--warnpercent\0" "50\0--hardwarn\0" "0.5\0x.ppm\0y.ppm"),
        CMD("diff", "a\0b\0--ssim\0--diff\0d.png\0--diff-on-fail\0--scale\0" "4"),
        CMD("common", "--json\0--device\0gpu\0-v\0-q\0--timing\0--validate\0--no-cache\0a\0b"),
        CMD("help", "a\0--help"),
        CMD("extra", "a\0b\0c"),
        CMD("missing_value", "a\0b\0--fail"),
        CMD("bad_number", "a\0b\0--failpercent\0" "101"),
        CMD("diff_on_fail_alone", "a\0b\0--diff-on-fail"),
#undef CMD
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        put("compare_opts", cmds[i].name, cmds[i].args, cmds[i].n);

    free(exif.p);
    free(exif_be.p);
    free(icc.p);
    printf("fuzz-mkseeds: %d files in %s\n", g_files, g_root);
    return 0;
}
