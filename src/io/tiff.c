/* TIFF: a decoder of our own (the first image of a file) and an encoder.
 *
 * Reading (vki_tiff_decode): classic TIFF and BigTIFF, either byte order; the first
 * IFD only (a multi-page file gives its first page, as GIF its first frame).
 *  - Layout: strips or tiles (edge tiles padded, as the format has them),
 *    PlanarConfiguration 1 (chunky) or 2 (one plane a sample).
 *  - Compression: none (1), LZW (5, the TIFF 6.0 kind: MSB first, early change),
 *    Deflate (8 and 32946, zlib streams, through libdeflate), PackBits (32773),
 *    JPEG (7: each strip or tile a JPEG stream, with the JPEGTables tag's tables, read
 *    by libjpeg as lj.h sets it up; 8-bit gray, RGB, YCbCr made RGB, or CMYK) and
 *    CCITT for 1-bit samples (ccitt.c: 2, modified Huffman; 3, T.4 1D or 2D as
 *    T4Options says; 4, T.6; black runs are 1 bits whatever the photometric, as in
 *    libtiff); Predictor 2 (horizontal differencing, 8/16/32-bit integers) and 3 (the
 *    floating point predictor). Others (old-style JPEG, LZMA, ZSTD, WebP ...) are
 *    refused by name, as is the LZW of writers before TIFF 6.0 (LSB first).
 *    FillOrder 2: each byte of a chunk's data is bit-reversed before it is
 *    decompressed, as libtiff does (but for JPEG data, which libtiff leaves).
 *  - Samples: 1, 2, 4 bits (scaled to 8: v * 255 / (2^b - 1)), 8 (U8), 16 (U16)
 *    unsigned integers, 32-bit IEEE floats (F32, as stored); signed integers, 12, 24,
 *    32-bit integers and 64-bit floats are refused.
 *  - Colour: MinIsWhite and MinIsBlack gray (MinIsWhite inverted: max - v),
 *    RGB, palette (1-8 bit indices to RGB; a colour map with every entry <= 255 is
 *    taken as 8-bit values, as old writers made them, else value >> 8), CMYK (InkSet
 *    1: R = round((max - C)(max - K) / max), G and B alike), YCbCr in JPEG-compressed
 *    files. Uncompressed YCbCr, Lab and the rest are refused.
 *  - Alpha: the first extra sample (ExtraSamples; a gray or RGB image with one more
 *    sample and no ExtraSamples tag as well): associated alpha (1) is un-premultiplied,
 *    c = min(max, round(c max / a)), 0 where a = 0 (floats c / a); unassociated (2)
 *    and unspecified (0) are taken as they are. Further extra samples are dropped.
 *  - The orientation tag is metadata (vki_tiff_field: meta.c reads it and the ICC
 *    profile), not applied here.
 *  - Hostile input: every offset and count is checked against the file; the size
 *    against max_pixels, and the chunks' byte counts against what their compression
 *    could make of them (CCITT: the fewest bits a row takes), before the pixels are
 *    allocated; a chunk must decode to its whole size.
 *
 * Writing (vki_tiff_encode): little-endian, one IFD, strips of about 256 KiB,
 * Deflate with predictor 2 (integers) or 3 (floats), or uncompressed; gray, gray + alpha, RGB, RGBA
 * of U8, U16 or F32; alpha as an unassociated extra sample; the ICC profile as tag
 * 34675. The strips are compressed on up to `threads` threads (the same file for any
 * count). */
#include "io/io_priv.h"
#include "io/ccitt.h"
#include "io/lj.h"
#include "core/util.h"

#include <libdeflate.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define tiff_fail(e, name, ...) vki_dec_fail(e, name, "TIFF", __VA_ARGS__)

enum {
    T_WIDTH = 256, T_HEIGHT = 257, T_BPS = 258, T_COMPRESSION = 259, T_PHOTOMETRIC = 262, T_FILLORDER = 266,
    T_STRIPOFFSETS = 273, T_SPP = 277, T_ROWSPERSTRIP = 278, T_STRIPBYTECOUNTS = 279,
    T_XRES = 282, T_YRES = 283, T_PLANAR = 284, T_RESUNIT = 296, T_PREDICTOR = 317, T_COLORMAP = 320,
    T_TILEWIDTH = 322, T_TILELENGTH = 323, T_TILEOFFSETS = 324, T_TILEBYTECOUNTS = 325, T_INKSET = 332,
    T_EXTRASAMPLES = 338, T_SAMPLEFORMAT = 339, T_ICC = VKI_TIFF_TAG_ICC,
};
enum { C_NONE = 1, C_CCITT_RLE = 2, C_FAX3 = 3, C_FAX4 = 4, C_LZW = 5, C_JPEG = 7, C_DEFLATE = 8,
       C_DEFLATE_OLD = 32946, C_PACKBITS = 32773 };
enum { T_T4OPTIONS = 292, T_T6OPTIONS = 293, T_JPEGTABLES = 347 };

/* ------------------------------------------------------------------ reading the IFD */

typedef struct tf {
    const unsigned char *b;
    size_t len;
    bool le, big; /* little-endian; BigTIFF */
    size_t ifd;   /* IFD0's entries (after the count) */
    uint64_t n;   /* and how many */
} tf;

static uint64_t rd(const tf *t, size_t off, int bytes) /* the caller has checked off + bytes <= len */
{
    const unsigned char *p = t->b + off;
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[t->le ? i : bytes - 1 - i] << (8 * i);
    return v;
}

/* The header and IFD0's place: NULL, or the reason the file is not one. */
static const char *tf_open(tf *t, const unsigned char *b, size_t len)
{
    memset(t, 0, sizeof *t);
    t->b = b;
    t->len = len;
    if (len < 8 || !((b[0] == 'I' && b[1] == 'I') || (b[0] == 'M' && b[1] == 'M')))
        return "not a TIFF header";
    t->le = b[0] == 'I';
    const uint64_t ver = rd(t, 2, 2);
    uint64_t ifd;
    if (ver == 42) {
        ifd = rd(t, 4, 4);
    } else if (ver == 43) {
        if (len < 16)
            return "truncated in the header";
        if (rd(t, 4, 2) != 8 || rd(t, 6, 2) != 0)
            return "a BigTIFF header with offsets of other than 8 bytes";
        t->big = true;
        ifd = rd(t, 8, 8);
    } else {
        return "not a TIFF header";
    }
    const int cb = t->big ? 8 : 2, eb = t->big ? 20 : 12;
    if (ifd < 8 || ifd > len || len - ifd < (uint64_t)cb)
        return "the first IFD lies outside the file";
    t->n = rd(t, (size_t)ifd, cb);
    t->ifd = (size_t)ifd + (size_t)cb;
    if (t->n == 0)
        return "the first IFD has no entries";
    if (t->n > (len - t->ifd) / (uint64_t)eb)
        return "the first IFD runs past the end of the file";
    return NULL;
}

/* Entry `tag` of IFD0: 1 with f filled (its values inside the file), 0 when absent,
 * -1 when its values lie outside the file or its type is unknown. */
static int tf_find(const tf *t, unsigned tag, vki_tiff_field *f)
{
    const size_t eb = t->big ? 20 : 12, vb = t->big ? 8 : 4;
    for (uint64_t i = 0; i < t->n; i++) {
        const size_t at = t->ifd + (size_t)i * eb;
        if (rd(t, at, 2) != tag)
            continue;
        f->type = (unsigned)rd(t, at + 2, 2);
        f->count = rd(t, at + 4, t->big ? 8 : 4);
        const int ts = (int)vki_tiff_type_size(f->type);
        if (!ts || f->count > (uint64_t)t->len / (uint64_t)ts)
            return -1;
        const uint64_t bytes = f->count * (uint64_t)ts;
        if (bytes <= vb) {
            f->off = at + 4 + vb; /* inline */
        } else {
            const uint64_t off = rd(t, at + 4 + vb, (int)vb);
            if (off > t->len || bytes > t->len - off)
                return -1;
            f->off = (size_t)off;
        }
        f->le = t->le;
        return 1;
    }
    return 0;
}

/* Value k of an integer field (BYTE, SHORT, LONG, LONG8; k < count). */
static uint64_t tf_val(const tf *t, const vki_tiff_field *f, uint64_t k)
{
    const int ts = (int)vki_tiff_type_size(f->type);
    return rd(t, f->off + (size_t)k * (size_t)ts, ts);
}

static bool int_type(unsigned type) { return type == 1 || type == 3 || type == 4 || type == 16; }

int vki_tiff_field_find(const unsigned char *b, size_t len, unsigned tag, vki_tiff_field *f)
{
    tf t;
    if (!b || tf_open(&t, b, len))
        return -1;
    return tf_find(&t, tag, f);
}

/* A scalar integer tag: *v (def where absent); NULL or the reason. */
static const char *tf_scalar(const tf *t, unsigned tag, uint64_t def, uint64_t *v)
{
    vki_tiff_field f;
    const int r = tf_find(t, tag, &f);
    *v = def;
    if (r < 0)
        return "a tag's values lie outside the file";
    if (r == 0)
        return NULL;
    if (!int_type(f.type) || f.count < 1)
        return "a tag of the wrong type";
    *v = tf_val(t, &f, 0);
    return NULL;
}

/* ------------------------------------------------------------------ codecs */

/* TIFF 6.0 LZW (MSB first, codes of 9..12 bits, widened one code early) of b[0..n)
 * into exactly cap bytes at dst: NULL or the reason. Codes past the table's 4096
 * entries are not added (the table stays full until a Clear), as libtiff reads them. */
static const char *lzw_decode(const unsigned char *b, size_t n, unsigned char *dst, size_t cap)
{
    enum { CLEAR = 256, EOI = 257, FIRST = 258, MAXC = 4096 };
    static const char *const trunc = "LZW data end before the chunk is whole";
    if (n >= 2 && b[0] == 0 && (b[1] & 1))
        return "LZW of the old kind (LSB first, before TIFF 6.0) is not supported";
    uint16_t prefix[MAXC];
    unsigned char suffix[MAXC], first[MAXC];
    uint16_t length[MAXC];
    for (unsigned i = 0; i < 256; i++) {
        prefix[i] = 0;
        suffix[i] = first[i] = (unsigned char)i;
        length[i] = 1;
    }
    size_t pos = 0, o = 0;
    uint64_t acc = 0;
    int nacc = 0, bits = 9;
    unsigned next = FIRST;
    int old = -1;
    while (o < cap) {
        while (nacc < bits) { /* whole bytes into the accumulator */
            if (pos >= n)
                return trunc;
            acc = acc << 8 | b[pos++];
            nacc += 8;
        }
        const unsigned code = (unsigned)(acc >> (nacc - bits)) & ((1u << bits) - 1);
        nacc -= bits;
        if (code == CLEAR) {
            next = FIRST;
            bits = 9;
            old = -1;
            continue;
        }
        if (code == EOI)
            return trunc;
        unsigned str; /* the code whose string goes out; for code == next, old's then first */
        if (old < 0) {
            if (code > 255)
                return "LZW data with a code before its entry";
            str = code;
        } else if (code < next) {
            str = code;
        } else if (code == next && next < MAXC) {
            str = (unsigned)old;
        } else {
            return "LZW data with a code before its entry";
        }
        /* the string, written from its end */
        const size_t sl = length[str], room = cap - o;
        if (old >= 0 && code == next) { /* old's string, then its first byte */
            const size_t tot = sl + 1;
            if (tot <= room)
                dst[o + sl] = first[old];
        }
        size_t k = sl;
        for (unsigned c = str;; c = prefix[c]) {
            k--;
            if (k < room)
                dst[o + k] = suffix[c];
            if (k == 0)
                break;
        }
        const size_t wrote = sl + (old >= 0 && code == next);
        if (old >= 0 && next < MAXC) { /* the new entry: old's string and the first byte of code's */
            prefix[next] = (uint16_t)old;
            suffix[next] = first[str];
            first[next] = first[old];
            length[next] = (uint16_t)(length[old] + 1);
            next++;
            if (next + 1 >= (1u << bits) && bits < 12)
                bits++;
        }
        old = (int)code;
        o += wrote < room ? wrote : room;
    }
    return NULL;
}

/* PackBits of b[0..n) into exactly cap bytes at dst: NULL or the reason. */
static const char *packbits_decode(const unsigned char *b, size_t n, unsigned char *dst, size_t cap)
{
    size_t pos = 0;
    const int r = vki_unpack_bits(b, n, &pos, dst, cap, 1);
    return r == 1 ? "PackBits data end before the chunk is whole" : r == 2 ? "a PackBits run past the end of its chunk"
                                                                            : NULL;
}

/* ------------------------------------------------------------------ decoding */

typedef struct tiff_img {
    uint32_t w, h;
    unsigned bps, spp, comp, photo, planar, pred, fmt; /* fmt: SampleFormat */
    unsigned ncolor, alpha_kind;                       /* colour samples; 0 none, else ExtraSamples[0] + 1 */
    bool tiled;
    bool reversed;                   /* FillOrder 2: each byte of a chunk's data stored bit-reversed */
    uint32_t fax_options;            /* CCITT: T4Options (compression 3) or T6Options (4) */
    uint32_t cw, ch;                 /* a chunk's width and height in pixels (strips: w x rows a strip) */
    uint64_t across, down, nchunks;  /* chunks a plane: across x down */
    vki_tiff_field offs, counts;
    size_t prow;                     /* bytes of a row of a plane in the raw image */
    size_t crow;                     /* bytes of a row of a chunk */
} tiff_img;

static size_t bits_bytes(uint64_t n, unsigned bps) { return (size_t)((n * bps + 7) / 8); }

static bool ccitt(unsigned comp) { return comp == C_CCITT_RLE || comp == C_FAX3 || comp == C_FAX4; }

/* Undoes the predictor on one chunk row of `px` pixels of `s` samples (host order
 * after swap for integers) */
static void unpredict_row(unsigned char *row, uint32_t px, unsigned s, unsigned bps, unsigned pred,
                          unsigned char *tmp)
{
    const size_t n = (size_t)px * s;
    if (pred == 2) {
        if (bps == 8) {
            for (size_t i = s; i < n; i++)
                row[i] = (unsigned char)(row[i] + row[i - s]);
        } else if (bps == 16) {
            uint16_t *r = (uint16_t *)(void *)row;
            for (size_t i = s; i < n; i++)
                r[i] = (uint16_t)(r[i] + r[i - s]);
        } else {
            uint32_t *r = (uint32_t *)(void *)row;
            for (size_t i = s; i < n; i++)
                r[i] = r[i] + r[i - s];
        }
    } else { /* 3: bytes differenced with a stride of s, then each value's bytes from planes MSB first */
        const size_t nb = n * (bps / 8);
        for (size_t i = s; i < nb; i++)
            row[i] = (unsigned char)(row[i] + row[i - s]);
        memcpy(tmp, row, nb);
        const unsigned bb = bps / 8;
        for (size_t i = 0; i < n; i++)
            for (unsigned k = 0; k < bb; k++) /* host little-endian: byte k of value i is plane bb - 1 - k */
                row[i * bb + k] = tmp[(bb - 1 - k) * n + i];
    }
}

static void swap_samples(unsigned char *p, size_t nsamples, unsigned bps)
{
    if (bps == 16) {
        for (size_t i = 0; i < nsamples; i++) {
            unsigned char t = p[2 * i];
            p[2 * i] = p[2 * i + 1];
            p[2 * i + 1] = t;
        }
    } else if (bps == 32) {
        for (size_t i = 0; i < nsamples; i++) {
            unsigned char *q = p + 4 * i, t0 = q[0], t1 = q[1];
            q[0] = q[3];
            q[1] = q[2];
            q[2] = t1;
            q[3] = t0;
        }
    }
}

static bool host_le(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* Sample s of pixel x of row y of the raw image (planes after each other), as an
 * integer (1..16 bits) */
static uint32_t raw_int(const tiff_img *ti, const unsigned char *raw, uint32_t x, uint32_t y, unsigned s)
{
    size_t idx;
    const unsigned char *row;
    if (ti->planar == 2) {
        row = raw + ((size_t)s * ti->h + y) * ti->prow;
        idx = x;
    } else {
        row = raw + (size_t)y * ti->prow;
        idx = (size_t)x * ti->spp + s;
    }
    switch (ti->bps) {
    case 8: return row[idx];
    case 16: {
        uint16_t v;
        memcpy(&v, row + 2 * idx, 2);
        return v;
    }
    default: { /* 1, 2, 4: MSB first */
        const size_t bit = idx * ti->bps;
        return (uint32_t)(row[bit / 8] >> (8 - ti->bps - bit % 8)) & ((1u << ti->bps) - 1);
    }
    }
}

static float raw_f32(const tiff_img *ti, const unsigned char *raw, uint32_t x, uint32_t y, unsigned s)
{
    const unsigned char *p = ti->planar == 2 ? raw + ((size_t)s * ti->h + y) * ti->prow + 4 * (size_t)x
                                             : raw + (size_t)y * ti->prow + 4 * ((size_t)x * ti->spp + s);
    float v;
    memcpy(&v, p, 4);
    return v;
}

static const char *comp_name(uint64_t c)
{
    switch (c) {
    case 2: return " (CCITT RLE)";
    case 3: return " (CCITT fax 3)";
    case 4: return " (CCITT fax 4)";
    case 6: return " (old-style JPEG)";
    case 7: return " (JPEG)";
    case 34676: case 34677: return " (SGI LogLuv)";
    case 34712: return " (JPEG 2000)";
    case 34887: return " (LERC)";
    case 34925: return " (LZMA)";
    case 50000: return " (ZSTD)";
    case 50001: return " (WebP)";
    case 50002: return " (JPEG XL)";
    }
    return "";
}

/* Reads the IFD into ti: NULL or the reason. */
static const char *tiff_header(const tf *t, tiff_img *ti, char why[256])
{
    memset(ti, 0, sizeof *ti);
    uint64_t w, h, spp, comp, photo, planar, pred, fillorder, v;
    const char *err;
    if ((err = tf_scalar(t, T_WIDTH, 0, &w)) || (err = tf_scalar(t, T_HEIGHT, 0, &h)) ||
        (err = tf_scalar(t, T_SPP, 1, &spp)) || (err = tf_scalar(t, T_COMPRESSION, 1, &comp)) ||
        (err = tf_scalar(t, T_PLANAR, 1, &planar)) || (err = tf_scalar(t, T_PREDICTOR, 1, &pred)) ||
        (err = tf_scalar(t, T_FILLORDER, 1, &fillorder)))
        return err;
    if (!w || !h)
        return "no ImageWidth or ImageLength";
    if (w > UINT32_MAX || h > UINT32_MAX)
        return "a size over 2^32";
    ti->w = (uint32_t)w;
    ti->h = (uint32_t)h;
    if (spp < 1 || spp > 8)
        return "SamplesPerPixel outside 1..8";
    ti->spp = (unsigned)spp;
    /* a compression it cannot read is named before what it would hold (a LogLuv,
     * ZSTD or WebP file's signed or odd-sized samples) */
    if (comp != C_NONE && comp != C_LZW && comp != C_DEFLATE && comp != C_DEFLATE_OLD && comp != C_PACKBITS &&
        comp != C_JPEG && !ccitt((unsigned)comp)) {
        snprintf(why, 256, "compression %llu%s is not supported (none, LZW, Deflate, PackBits, JPEG, CCITT are)",
                 (unsigned long long)comp, comp_name(comp));
        return why;
    }
    /* BitsPerSample: one value a sample, all the same */
    vki_tiff_field f;
    int r = tf_find(t, T_BPS, &f);
    if (r < 0 || (r && (!int_type(f.type) || f.count < 1)))
        return "a bad BitsPerSample";
    ti->bps = r ? (unsigned)tf_val(t, &f, 0) : 1;
    for (uint64_t k = 1; r && k < f.count && k < spp; k++)
        if (tf_val(t, &f, k) != ti->bps)
            return "samples of different sizes are not supported";
    ti->fmt = 1;
    if ((r = tf_find(t, T_SAMPLEFORMAT, &f)) < 0 || (r && (!int_type(f.type) || f.count < 1)))
        return "a bad SampleFormat";
    if (r) {
        ti->fmt = (unsigned)tf_val(t, &f, 0);
        for (uint64_t k = 1; k < f.count && k < spp; k++)
            if (tf_val(t, &f, k) != ti->fmt)
                return "samples of different formats are not supported";
    }
    if (ti->fmt == 4) /* undefined: taken as unsigned */
        ti->fmt = 1;
    if (ti->fmt == 2)
        return "sample format 2 (signed integers) is not supported";
    if (ti->fmt != 1 && ti->fmt != 3)
        return "an unknown sample format";
    if (ti->fmt == 3 && ti->bps != 32)
        return "floating-point samples of other than 32 bits are not supported";
    if (ti->fmt == 1 && ti->bps != 1 && ti->bps != 2 && ti->bps != 4 && ti->bps != 8 && ti->bps != 16)
        return ti->bps == 32 ? "32-bit integer samples are not supported (1, 2, 4, 8, 16-bit and 32-bit float are)"
                             : "this BitsPerSample is not supported (1, 2, 4, 8, 16 and 32-bit float are)";
    if (fillorder != 1 && fillorder != 2)
        return "an unknown FillOrder";
    ti->reversed = fillorder == 2 && comp != C_JPEG; /* (libjpeg's data is never reversed: libtiff's
                                                        JPEG codec ignores the tag too) */
    ti->comp = (unsigned)comp;
    if (ccitt(ti->comp)) {
        if (ti->bps != 1 || spp != 1)
            return "CCITT compression of other than one 1-bit sample a pixel";
        if ((err = tf_scalar(t, comp == C_FAX4 ? T_T6OPTIONS : T_T4OPTIONS, 0, &v)))
            return err;
        ti->fax_options = (uint32_t)v;
    }
    if (planar != 1 && planar != 2)
        return "an unknown PlanarConfiguration";
    ti->planar = spp == 1 ? 1 : (unsigned)planar;
    if (pred != 1 && pred != 2 && pred != 3)
        return "an unknown Predictor";
    if (pred == 2 && ti->bps < 8)
        return "Predictor 2 with samples under 8 bits";
    if (pred == 3 && ti->fmt != 3)
        return "Predictor 3 with integer samples";
    ti->pred = (unsigned)pred;

    /* colour */
    if ((err = tf_scalar(t, T_PHOTOMETRIC, spp >= 3 ? 2 : 1, &photo)))
        return err;
    ti->photo = (unsigned)photo;
    switch (photo) {
    case 0: case 1: ti->ncolor = 1; break;
    case 2: ti->ncolor = 3; break;
    case 3:
        ti->ncolor = 1;
        if (ti->fmt != 1 || ti->bps > 8)
            return "a palette image of other than 1..8-bit indices";
        break;
    case 5:
        if ((err = tf_scalar(t, T_INKSET, 1, &v)))
            return err;
        if (v != 1)
            return "separated (photometric 5) of other inks than CMYK";
        if (ti->fmt != 1 || ti->bps < 8)
            return "CMYK of other than 8 or 16-bit integers";
        ti->ncolor = 4;
        break;
    case 6:
        if (comp != C_JPEG)
            return "photometric 6 (YCbCr) without JPEG compression is not supported";
        ti->ncolor = 3;
        break;
    case 8: case 9: case 10: return "Lab (photometric 8, 9, 10) is not supported";
    default:
        snprintf(why, 256, "photometric %llu is not supported (gray, RGB, palette, CMYK are)",
                 (unsigned long long)photo);
        return why;
    }
    if (spp < ti->ncolor)
        return "fewer samples than the photometric interpretation needs";
    if (comp == C_JPEG) { /* libjpeg decodes gray, RGB, YCbCr (made RGB) or CMYK of 8-bit samples */
        if (ti->bps != 8 || ti->fmt != 1 || spp != ti->ncolor || (photo != 1 && photo != 2 && photo != 5 && photo != 6))
            return "JPEG compression of other than 8-bit gray, RGB, YCbCr or CMYK";
        if (ti->planar == 2)
            return "JPEG compression of separate planes is not supported";
        if (pred != 1)
            return "JPEG compression with a predictor";
    }
    if (spp > ti->ncolor) {
        ti->alpha_kind = 1; /* unspecified unless ExtraSamples says */
        if ((r = tf_find(t, T_EXTRASAMPLES, &f)) < 0)
            return "a tag's values lie outside the file";
        if (r && int_type(f.type) && f.count >= 1) {
            v = tf_val(t, &f, 0);
            ti->alpha_kind = v <= 2 ? (unsigned)v + 1 : 1;
        }
    }

    /* chunks */
    vki_tiff_field tw, tl;
    const int rtw = tf_find(t, T_TILEWIDTH, &tw), rtl = tf_find(t, T_TILELENGTH, &tl);
    if (rtw < 0 || rtl < 0)
        return "a tag's values lie outside the file";
    ti->tiled = rtw > 0 || rtl > 0;
    const unsigned sp = ti->planar == 2 ? 1 : ti->spp; /* samples a pixel in a plane */
    unsigned offtag, cnttag;
    if (ti->tiled) {
        if (!rtw || !rtl || !int_type(tw.type) || !int_type(tl.type) || !tw.count || !tl.count)
            return "TileWidth without TileLength";
        const uint64_t cw = tf_val(t, &tw, 0), ch = tf_val(t, &tl, 0);
        if (!cw || !ch || cw > 65536 || ch > 65536)
            return "a tile size of 0 or over 65536";
        if (cw * sp * ti->bps % 8)
            return "tiles whose rows are not whole bytes";
        if (cw * ch > 4 * w * h + (1u << 20)) /* (a 256 x 256 tile of a small image is fine) */
            return "tiles far larger than the image";
        ti->cw = (uint32_t)cw;
        ti->ch = (uint32_t)ch;
        offtag = T_TILEOFFSETS;
        cnttag = T_TILEBYTECOUNTS;
    } else {
        if ((err = tf_scalar(t, T_ROWSPERSTRIP, UINT32_MAX, &v)))
            return err;
        if (!v)
            return "RowsPerStrip 0";
        ti->cw = ti->w;
        ti->ch = v < h ? (uint32_t)v : ti->h;
        offtag = T_STRIPOFFSETS;
        cnttag = T_STRIPBYTECOUNTS;
    }
    ti->across = ((uint64_t)ti->w + ti->cw - 1) / ti->cw;
    ti->down = ((uint64_t)ti->h + ti->ch - 1) / ti->ch;
    ti->nchunks = ti->across * ti->down * (ti->planar == 2 ? ti->spp : 1);
    ti->crow = bits_bytes((uint64_t)ti->cw * sp, ti->bps);
    ti->prow = bits_bytes((uint64_t)ti->w * sp, ti->bps);
    int ro = tf_find(t, offtag, &ti->offs), rc = tf_find(t, cnttag, &ti->counts);
    /* libtiff reads StripOffsets and TileOffsets (and their byte counts) into the
     * same array, whichever the file holds: tiled files of its own picture archive
     * (quad-tile.tif, cramps-tile.tif) give their tiles' offsets as StripOffsets */
    if (!ro)
        ro = tf_find(t, ti->tiled ? T_STRIPOFFSETS : T_TILEOFFSETS, &ti->offs);
    if (!rc)
        rc = tf_find(t, ti->tiled ? T_STRIPBYTECOUNTS : T_TILEBYTECOUNTS, &ti->counts);
    if (ro < 0 || rc < 0)
        return "the strip or tile offsets lie outside the file";
    if (!ro)
        return ti->tiled ? "no TileOffsets" : "no StripOffsets";
    if (!rc)
        return ti->tiled ? "no TileByteCounts" : "no StripByteCounts";
    if (!int_type(ti->offs.type) || !int_type(ti->counts.type))
        return "strip or tile offsets of the wrong type";
    if (ti->offs.count < ti->nchunks || ti->counts.count < ti->nchunks)
        return ti->tiled ? "fewer tile offsets than tiles" : "fewer strip offsets than strips";
    return NULL;
}

/* The rows of chunk k (plane, row of chunks): in a strip image the last strip's
 * rows are those left; a tile is always whole. */
static uint32_t chunk_rows(const tiff_img *ti, uint64_t down_idx)
{
    if (ti->tiled)
        return ti->ch;
    const uint64_t y0 = down_idx * ti->ch;
    return (uint32_t)(ti->h - y0 < ti->ch ? ti->h - y0 : ti->ch);
}

/* A JPEG strip or tile (libjpeg, as lj.h sets it up: warnings are errors) of cw x
 * rows pixels into dst (crow bytes a row): its tables first from the JPEGTables tag
 * (an abbreviated stream) where the file has one; YCbCr made RGB, RGB, gray and CMYK as they
 * are. A stream of more rows than the chunk has (the last strip written whole) gives
 * its first rows. NULL, or the reason in why. */
static const char *jpeg_chunk(const tf *t, const tiff_img *ti, const unsigned char *src, size_t n,
                              unsigned char *dst, uint32_t rows, unsigned char *scratch, char why[256])
{
    struct jpeg_decompress_struct d;
    vki_lj_err de;
    struct jpeg_progress_mgr prog = { .progress_monitor = vki_lj_limit_scans };
    memset(&d, 0, sizeof d);
    d.err = vki_lj_errors(&de, true);
    if (setjmp(de.jump)) {
        jpeg_destroy_decompress(&d);
        snprintf(why, 256, "JPEG data: %s", de.msg[0] ? de.msg : "error");
        return why;
    }
    jpeg_create_decompress(&d);
    d.progress = &prog;
    vki_tiff_field f;
    if (tf_find(t, T_JPEGTABLES, &f) > 0 && f.count >= 4 && (f.type == 7 || f.type == 1)) {
        jpeg_mem_src(&d, t->b + f.off, (unsigned long)f.count);
        if (jpeg_read_header(&d, FALSE) != JPEG_HEADER_TABLES_ONLY) {
            jpeg_destroy_decompress(&d);
            return "JPEGTables that are not tables only";
        }
    }
    jpeg_mem_src(&d, src, (unsigned long)n);
    jpeg_read_header(&d, TRUE);
    const int nc = ti->photo == 1 ? 1 : ti->photo == 5 ? 4 : 3;
    if (d.image_width != ti->cw || d.image_height < rows || d.image_height > ti->ch) { /* before libjpeg allocates */
        snprintf(why, 256, "a JPEG strip or tile of %ux%u, not %ux%u", d.image_width, d.image_height, ti->cw, rows);
        jpeg_destroy_decompress(&d);
        return why;
    }
    if (d.num_components != nc) {
        jpeg_destroy_decompress(&d);
        return "a JPEG strip or tile of another number of components than the image";
    }
    if (ti->photo == 6) {
        d.jpeg_color_space = JCS_YCbCr;
        d.out_color_space = JCS_RGB;
    } else { /* the samples as coded (CMYK as TIFF has it, 0 no ink: not inverted as in
                Adobe's JPEG files; libtiff's JPEG codec takes them as they are too) */
        d.jpeg_color_space = nc == 1 ? JCS_GRAYSCALE : nc == 4 ? JCS_CMYK : JCS_RGB;
        d.out_color_space = d.jpeg_color_space;
    }
    d.dct_method = JDCT_ISLOW;
    d.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&d);
    if (d.output_width != ti->cw || d.output_height < rows || d.output_components != nc) { /* cannot happen */
        snprintf(why, 256, "a JPEG strip or tile of %ux%u, not %ux%u", d.output_width, d.output_height, ti->cw, rows);
        jpeg_destroy_decompress(&d);
        return why;
    }
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = d.output_scanline < rows ? dst + (size_t)d.output_scanline * ti->crow : scratch;
        jpeg_read_scanlines(&d, &row, 1);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    return NULL;
}

static unsigned char bit_reverse(unsigned char v)
{
    v = (unsigned char)((v & 0xf0u) >> 4 | (v & 0x0fu) << 4);
    v = (unsigned char)((v & 0xccu) >> 2 | (v & 0x33u) << 2);
    return (unsigned char)((v & 0xaau) >> 1 | (v & 0x55u) << 1);
}

/* Decodes every chunk into raw (the planes' rows, prow bytes each): NULL or the reason. */
static const char *read_chunks(const tf *t, const tiff_img *ti, unsigned char *raw, char why[256])
{
    /* a strip decodes in place (its rows are the plane's); a tile, or a Deflate strip
     * that holds more rows than are left, into chunk first */
    const size_t full = ti->crow * ti->ch;
    unsigned char *chunk = NULL, *tmp = NULL;
    if (ti->tiled && !(chunk = vki_malloc_big(full)))
        return "out of memory";
    if ((ti->pred == 3 || ti->comp == C_JPEG) && !(tmp = malloc(ti->crow ? ti->crow : 1))) {
        free(chunk);
        return "out of memory";
    }
    struct libdeflate_decompressor *dd = NULL;
    if ((ti->comp == C_DEFLATE || ti->comp == C_DEFLATE_OLD) && !(dd = libdeflate_alloc_decompressor())) {
        free(chunk);
        free(tmp);
        return "out of memory";
    }
    const char *err = NULL;
    unsigned char *rev = NULL; /* FillOrder 2: the chunk's data bit-reversed (rev_cap bytes, grown) */
    size_t rev_cap = 0;
    const unsigned sp = ti->planar == 2 ? 1 : ti->spp;
    const bool swap = t->le != host_le() && ti->bps >= 16 && ti->pred != 3;
    for (uint64_t k = 0; k < ti->nchunks && !err; k++) {
        const uint64_t plane = k / (ti->across * ti->down), rem = k % (ti->across * ti->down);
        const uint64_t cy = rem / ti->across, cx = rem % ti->across;
        const uint32_t rows = chunk_rows(ti, cy);
        const size_t need = ti->crow * rows;
        const uint64_t off = tf_val(t, &ti->offs, k), cnt = tf_val(t, &ti->counts, k);
        if (off > t->len || cnt > t->len - off) {
            err = ti->tiled ? "a tile lies outside the file" : "a strip lies outside the file";
            break;
        }
        const unsigned char *src = t->b + off;
        if (ti->reversed && cnt) { /* the chunk's bytes with their bits in the usual order, as
                                      libtiff reverses them before any decompression */
            if (cnt > rev_cap) {
                unsigned char *grown = realloc(rev, (size_t)cnt);
                if (!grown) {
                    err = "out of memory";
                    break;
                }
                rev = grown;
                rev_cap = (size_t)cnt;
            }
            for (size_t i = 0; i < (size_t)cnt; i++)
                rev[i] = bit_reverse(src[i]);
            src = rev;
        }
        const uint64_t x0 = cx * ti->cw, y0 = cy * ti->ch;
        unsigned char *dst = ti->tiled ? chunk : raw + ((size_t)plane * ti->h + (size_t)y0) * ti->prow;
        switch (ti->comp) {
        case C_NONE:
            if (cnt < need)
                err = ti->tiled ? "a tile shorter than its size" : "a strip shorter than its rows";
            else
                memcpy(dst, src, need);
            break;
        case C_LZW: err = lzw_decode(src, (size_t)cnt, dst, need); break;
        case C_PACKBITS: err = packbits_decode(src, (size_t)cnt, dst, need); break;
        case C_JPEG: err = jpeg_chunk(t, ti, src, (size_t)cnt, dst, rows, tmp, why); break;
        case C_CCITT_RLE: case C_FAX3: case C_FAX4: {
            char cw[256];
            if ((err = vki_ccitt_decode(src, (size_t)cnt, dst, ti->cw, rows, ti->crow, ti->comp, ti->fax_options, cw))) {
                snprintf(why, 256, "%s (%s %llu)", err, ti->tiled ? "tile" : "strip", (unsigned long long)k);
                err = why;
            }
            break;
        }
        default: {
            size_t got = 0;
            enum libdeflate_result res = libdeflate_zlib_decompress(dd, src, (size_t)cnt, dst, need, &got);
            if (res == LIBDEFLATE_INSUFFICIENT_SPACE && !ti->tiled && need < full) {
                /* the last strip written with all RowsPerStrip rows: decoded whole, its rows kept */
                unsigned char *whole = vki_malloc_big(full);
                res = whole ? libdeflate_zlib_decompress(dd, src, (size_t)cnt, whole, full, &got)
                            : LIBDEFLATE_BAD_DATA;
                if (!whole)
                    err = "out of memory";
                else if (res == LIBDEFLATE_SUCCESS || res == LIBDEFLATE_SHORT_OUTPUT)
                    memcpy(dst, whole, need < got ? need : got);
                free(whole);
            }
            if (err)
                break;
            if (res == LIBDEFLATE_INSUFFICIENT_SPACE)
                err = "a Deflate chunk holds more than its size";
            else if (res != LIBDEFLATE_SUCCESS && res != LIBDEFLATE_SHORT_OUTPUT)
                err = "bad Deflate data";
            else if (got < need)
                err = "Deflate data end before the chunk is whole";
            break;
        }
        }
        if (err)
            break;
        /* the rows: samples to host order, the predictor undone; a tile's rows into the
         * plane, cut at the image's right and bottom edges */
        const uint32_t px = (uint32_t)(ti->w - x0 < ti->cw ? ti->w - x0 : ti->cw);
        const size_t xoff = bits_bytes(x0 * sp, ti->bps), nbytes = bits_bytes((uint64_t)px * sp, ti->bps);
        for (uint32_t r = 0; r < rows && y0 + r < ti->h; r++) {
            unsigned char *row = dst + (size_t)r * ti->crow;
            if (swap)
                swap_samples(row, (size_t)ti->cw * sp, ti->bps);
            if (ti->pred > 1)
                unpredict_row(row, ti->cw, sp, ti->bps, ti->pred, tmp);
            if (ti->tiled)
                memcpy(raw + ((size_t)plane * ti->h + (size_t)(y0 + r)) * ti->prow + xoff, row, nbytes);
        }
    }
    free(rev);
    libdeflate_free_decompressor(dd);
    free(chunk);
    free(tmp);
    return err;
}

static uint32_t scale_to8(uint32_t v, unsigned bps)
{
    return bps == 8 ? v : bps == 4 ? v * 17 : bps == 2 ? v * 85 : v * 255;
}

/* raw (the file's samples, host order) into out, as the top of this file says */
static void convert(const tf *t, const tiff_img *ti, const unsigned char *raw, vkimg_image *out)
{
    const int c = out->c;
    const bool alpha = ti->alpha_kind != 0, assoc = ti->alpha_kind == 2;
    const unsigned as = ti->ncolor; /* the alpha sample */
    if (out->fmt == VKIMG_F32) {
        float *o = out->data;
        for (uint32_t y = 0; y < ti->h; y++)
            for (uint32_t x = 0; x < ti->w; x++) {
                float *p = o + ((size_t)y * ti->w + x) * (size_t)c;
                const float a = alpha ? raw_f32(ti, raw, x, y, as) : 1.0f;
                for (unsigned s = 0; s < ti->ncolor; s++) {
                    float v = raw_f32(ti, raw, x, y, s);
                    if (ti->photo == 0)
                        v = 1.0f - v;
                    p[s] = assoc ? (a != 0.0f ? v / a : 0.0f) : v;
                }
                if (alpha)
                    p[c - 1] = a;
            }
        return;
    }
    const bool wide = out->fmt == VKIMG_U16;
    const uint32_t max = wide ? 65535 : 255;
    /* the palette's colours, 8-bit */
    unsigned char pal[256][3];
    if (ti->photo == 3) {
        vki_tiff_field f;
        const unsigned n = 1u << ti->bps;
        tf_find(t, T_COLORMAP, &f); /* checked by the caller */
        bool eight = true;
        for (uint64_t k = 0; k < 3ull * n; k++)
            eight = eight && tf_val(t, &f, k) <= 255;
        for (unsigned i = 0; i < n; i++)
            for (unsigned ch = 0; ch < 3; ch++) {
                const uint64_t v = tf_val(t, &f, (uint64_t)ch * n + i);
                pal[i][ch] = (unsigned char)(eight ? v : v >> 8);
            }
    }
    unsigned char *o8 = out->data;
    uint16_t *o16 = out->data;
    for (uint32_t y = 0; y < ti->h; y++) {
        const size_t o0 = (size_t)y * ti->w * (size_t)c;
        for (uint32_t x = 0; x < ti->w; x++) {
            uint32_t v[5] = { 0 }, px[4] = { 0 };
            const unsigned nread = ti->ncolor + (alpha ? 1 : 0);
            for (unsigned s = 0; s < nread; s++) {
                v[s] = raw_int(ti, raw, x, y, s);
                if (ti->bps < 8 && ti->photo != 3)
                    v[s] = scale_to8(v[s], ti->bps);
            }
            const uint32_t a = alpha ? v[as] : max;
            switch (ti->photo) {
            case 0: px[0] = max - v[0]; break;
            case 1: px[0] = v[0]; break;
            case 2: px[0] = v[0], px[1] = v[1], px[2] = v[2]; break;
            case 3:
                px[0] = pal[v[0]][0], px[1] = pal[v[0]][1], px[2] = pal[v[0]][2];
                break;
            default: /* 5: CMYK */
                for (int k = 0; k < 3; k++)
                    px[k] = (uint32_t)(((uint64_t)(max - v[k]) * (max - v[3]) + max / 2) / max);
                break;
            }
            const int nc = alpha ? c - 1 : c;
            if (assoc)
                for (int k = 0; k < nc; k++) {
                    const uint64_t q = a ? ((uint64_t)2 * px[k] * max + a) / ((uint64_t)2 * a) : 0;
                    px[k] = q > max ? max : (uint32_t)q;
                }
            if (alpha)
                px[nc] = ti->photo == 3 && ti->bps < 8 ? scale_to8(a, ti->bps) : a;
            for (int k = 0; k < c; k++) {
                if (wide)
                    o16[o0 + (size_t)x * c + k] = (uint16_t)px[k];
                else
                    o8[o0 + (size_t)x * c + k] = (unsigned char)px[k];
            }
        }
    }
}

int vki_tiff_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                    vkimg_err *e)
{
    return vki_tiff_decode_opts(b, len, name, max_pixels, NULL, out, e);
}

int vki_tiff_decode_opts(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels,
                         const vkimg_load_opts *o, vkimg_image *out, vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!out)
        return tiff_fail(e, name, "NULL output");
    tf t;
    tiff_img ti;
    char why[256];
    const char *err = tf_open(&t, b, b ? len : 0);
    uint64_t w = 0, h = 0;
    if (err || (err = tf_scalar(&t, T_WIDTH, 0, &w)) || (err = tf_scalar(&t, T_HEIGHT, 0, &h)))
        return tiff_fail(e, name, "%s", err);
    if (!w || !h)
        return tiff_fail(e, name, "no ImageWidth or ImageLength");
    int rc = vki_check_dims(name, w, h, max_pixels, e); /* (below 2^24 a side: no overflow after it) */
    if (rc)
        return rc;
    if ((err = tiff_header(&t, &ti, why)))
        return tiff_fail(e, name, "%s", err);
    if (ti.photo == 3) {
        vki_tiff_field f;
        if (tf_find(&t, T_COLORMAP, &f) != 1 || !int_type(f.type) || f.count < 3ull << ti.bps)
            return tiff_fail(e, name, "a palette image without a whole ColorMap");
    }
    /* what the chunks' bytes can make: each whole, and their total at least what
     * their compression needs for the image (before the raw image is allocated) */
    const size_t raw_bytes = ti.prow * (size_t)ti.h * (ti.planar == 2 ? ti.spp : 1);
    uint64_t total = 0;
    for (uint64_t k = 0; k < ti.nchunks; k++) {
        const uint64_t off = tf_val(&t, &ti.offs, k), cnt = tf_val(&t, &ti.counts, k);
        if (off > len || cnt > len - off)
            return tiff_fail(e, name, ti.tiled ? "a tile lies outside the file" : "a strip lies outside the file");
        total += cnt;
    }
    /* the most a byte makes: Deflate 1032, LZW (a 12-bit code for a string of up to 4096) 2731, PackBits 64;
     * CCITT has no such ratio (a T.6 row like the one above is 1 bit, however wide), but
     * each row takes its fewest bits */
    const uint64_t ratio = ti.comp == C_NONE     ? 1
                         : ti.comp == C_PACKBITS ? 64
                         : ti.comp == C_LZW      ? 2731
                         : ti.comp == C_JPEG     ? 4096 /* (an 8 x 8 block of one colour: a few bits) */
                                                 : 1032;
    if (ccitt(ti.comp)) {
        const uint64_t rows = ti.tiled ? ti.nchunks * ti.ch : ti.h; /* (tiles: under 2^46 of under 2^8 bits) */
        if (total < (rows * vki_ccitt_min_row_bits(ti.cw, ti.comp, ti.fax_options) + 7) / 8)
            return tiff_fail(e, name, "truncated: %llu bytes of CCITT data for %llu rows of %u pixels",
                             (unsigned long long)total, (unsigned long long)rows, ti.cw);
    } else if (total < raw_bytes / ratio / (ti.tiled ? 2 : 1)) { /* (tiles: their padding) */
        return tiff_fail(e, name, "truncated: %llu bytes of image data for %zu bytes of pixels",
                         (unsigned long long)total, raw_bytes);
    }
    const int c = (ti.photo == 1 || ti.photo == 0 ? 1 : 3) + (ti.alpha_kind ? 1 : 0);
    const vkimg_fmt fmt = ti.fmt == 3 ? VKIMG_F32 : ti.bps == 16 ? VKIMG_U16 : VKIMG_U8;
    /* gray or RGB (YCbCr: libjpeg makes it RGB) of 8, 16 or 32-bit float samples,
     * chunky, with no extra sample but an unassociated alpha: the file's samples are
     * the image's, decoded in place (JPEG-compressed files always are) */
    const bool direct = ti.planar == 1 && ti.bps >= 8 && (ti.photo == 1 || ti.photo == 2 || ti.photo == 6) &&
                        ti.alpha_kind != 2 && ti.spp == (unsigned)c;
    if ((rc = vki_decoded_alloc_opts(o, out, ti.w, ti.h, c, fmt, name, e)))
        return rc;
    unsigned char *raw = direct ? out->data : vki_malloc_big(raw_bytes);
    if (!raw) {
        vkimg_image_free(out);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, raw_bytes);
    }
    if ((err = read_chunks(&t, &ti, raw, why))) {
        if (!direct)
            free(raw);
        vkimg_image_free(out);
        return tiff_fail(e, name, "%s", err);
    }
    if (!direct) {
        convert(&t, &ti, raw, out);
        free(raw);
    }
    return 0;
}

/* ------------------------------------------------------------------ writing */

typedef struct tiff_strips {
    const vkimg_image *im;
    uint32_t rows; /* a strip's */
    uint32_t n;
    unsigned char **z;
    size_t *zlen;
    atomic_int next, failed;
} tiff_strips;

static void put16le(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void put32le(unsigned char *p, uint32_t v)
{
    put16le(p, v & 0xffff);
    put16le(p + 2, v >> 16);
}

/* Strip k's rows, predicted (2 for integers, 3 for floats), samples little-endian */
static void predict_strip(const vkimg_image *im, uint32_t y0, uint32_t y1, unsigned char *dst, unsigned char *tmp)
{
    const size_t n = (size_t)im->w * (size_t)im->c, ss = vkimg_fmt_size(im->fmt), rb = n * ss;
    const unsigned s = (unsigned)im->c;
    for (uint32_t y = y0; y < y1; y++) {
        const unsigned char *src = (const unsigned char *)im->data + (size_t)y * rb;
        unsigned char *d = dst + (size_t)(y - y0) * rb;
        if (im->fmt == VKIMG_U8) {
            memcpy(d, src, s < n ? s : n);
            for (size_t i = s; i < n; i++)
                d[i] = (unsigned char)(src[i] - src[i - s]);
        } else if (im->fmt == VKIMG_U16) {
            const uint16_t *r = (const uint16_t *)(const void *)src;
            for (size_t i = 0; i < n; i++)
                put16le(d + 2 * i, (uint16_t)(i >= s ? r[i] - r[i - s] : r[i]));
        } else { /* floats: MSB planes, then bytes differenced with a stride of s */
            for (size_t i = 0; i < n; i++) {
                uint32_t v;
                memcpy(&v, src + 4 * i, 4);
                for (unsigned k = 0; k < 4; k++)
                    tmp[(3 - k) * n + i] = (unsigned char)(v >> (8 * k));
            }
            memcpy(d, tmp, s < 4 * n ? s : 4 * n);
            for (size_t i = s; i < 4 * n; i++)
                d[i] = (unsigned char)(tmp[i] - tmp[i - s]);
        }
    }
}

static void *strip_worker(void *arg)
{
    tiff_strips *ts = arg;
    const vkimg_image *im = ts->im;
    const size_t rb = (size_t)im->w * (size_t)im->c * vkimg_fmt_size(im->fmt);
    struct libdeflate_compressor *comp = libdeflate_alloc_compressor(6);
    unsigned char *buf = malloc(rb * ts->rows), *tmp = im->fmt == VKIMG_F32 ? malloc(rb) : NULL;
    if (!comp || !buf || (im->fmt == VKIMG_F32 && !tmp))
        atomic_store(&ts->failed, 1);
    for (int k; !atomic_load(&ts->failed) && (k = atomic_fetch_add(&ts->next, 1)) < (int)ts->n;) {
        const uint32_t y0 = (uint32_t)k * ts->rows;
        const uint32_t y1 = y0 + ts->rows < (uint32_t)im->h ? y0 + ts->rows : (uint32_t)im->h;
        predict_strip(im, y0, y1, buf, tmp);
        const size_t len = rb * (y1 - y0), cap = libdeflate_zlib_compress_bound(comp, len);
        unsigned char *z = malloc(cap);
        const size_t zl = z ? libdeflate_zlib_compress(comp, buf, len, z, cap) : 0;
        if (!zl) {
            free(z);
            atomic_store(&ts->failed, 1);
            break;
        }
        ts->z[k] = z;
        ts->zlen[k] = zl;
    }
    free(buf);
    free(tmp);
    libdeflate_free_compressor(comp);
    return NULL;
}

/* A TIFF being written: its pieces in file order (vki_span), the header, the strips'
 * data (Deflate: one piece a strip; uncompressed: the image's rows as they are where
 * the host is little-endian, else a copy), a pad byte where the data's length is odd,
 * and the tail (the IFD, the arrays it points to, the ICC profile, the EXIF's IFDs and values). */
typedef struct tiff_file {
    unsigned char head[8], pad;
    unsigned char *tail, *swapped; /* malloc()ed; swapped: the rows little-endian on a big-endian host */
    tiff_strips ts;
    vki_span *parts;
    int nparts;
    size_t total;
    vki_xtree *xt; /* the EXIF written (NULL: none) */
} tiff_file;

/* qsort's order of two IFD entries (little-endian): by tag. */
static int entry_tag_cmp(const void *a, const void *b)
{
    const uint32_t x = vki_rd16le(a), y = vki_rd16le(b);
    return x < y ? -1 : x > y;
}

static void tiff_file_free(tiff_file *fo)
{
    free(fo->xt);
    for (uint32_t k = 0; fo->ts.z && k < fo->ts.n; k++)
        free(fo->ts.z[k]);
    free(fo->ts.z);
    free(fo->ts.zlen);
    free(fo->tail);
    free(fo->swapped);
    free(fo->parts);
    memset(fo, 0, sizeof *fo);
}

static int tiff_file_make(const vkimg_image *im, const vkimg_meta *m, bool deflate, int threads, tiff_file *fo,
                          vkimg_err *e)
{
    memset(fo, 0, sizeof *fo);
    const unsigned char *icc = m && m->icc_len ? m->icc : NULL, *xmp = m && m->xmp_len ? m->xmp : NULL;
    const unsigned char *ps = m && m->iptc_len ? m->iptc : NULL;
    const size_t icc_len = icc ? m->icc_len : 0, xmp_len = xmp ? m->xmp_len : 0, ps_len = ps ? m->iptc_len : 0;
    /* the IPTC record of Photoshop's resources goes into tag 33723 as well, as LONGs (zeros after it) */
    size_t iim_len = 0;
    const unsigned char *iim = ps ? vki_irb_find(ps, ps_len, VKI_IRB_IPTC, &iim_len) : NULL;
    const size_t iim_longs = iim ? (iim_len + 3) / 4 : 0;
    if (!im || !im->data || im->w < 1 || im->h < 1 || im->c < 1 || im->c > 4)
        return vki_fail(e, VKIMG_E_RUNTIME, "TIFF: invalid image");
    if (im->fmt != VKIMG_U8 && im->fmt != VKIMG_U16 && im->fmt != VKIMG_F32)
        return vki_fail(e, VKIMG_E_USAGE, "TIFF: %s samples cannot be written (u8, u16 and f32 can)",
                        vkimg_fmt_name(im->fmt));
    const unsigned ss = (unsigned)vkimg_fmt_size(im->fmt), c = (unsigned)im->c;
    const size_t rb = (size_t)im->w * c * ss, want = (size_t)256 << 10;
    const uint32_t rows = rb >= want ? 1 : (uint32_t)(want / rb < (size_t)im->h ? want / rb : (size_t)im->h);
    tiff_strips *ts = &fo->ts;
    ts->im = im;
    ts->rows = rows;
    ts->n = (uint32_t)(((size_t)im->h + rows - 1) / rows);
    atomic_init(&ts->next, 0);
    atomic_init(&ts->failed, 0);
    ts->z = calloc(ts->n, sizeof *ts->z);
    ts->zlen = calloc(ts->n, sizeof *ts->zlen);
    fo->parts = malloc(((size_t)ts->n + 4) * sizeof *fo->parts);
    if (!ts->z || !ts->zlen || !fo->parts) {
        tiff_file_free(fo);
        return vki_fail(e, VKIMG_E_RUNTIME, "TIFF: out of memory");
    }
    const unsigned char *rows_le = im->data; /* uncompressed: the pixels as the file holds them */
    if (deflate) {
        vki_run_threads(strip_worker, ts, threads < 1 ? 1 : threads < (int)ts->n ? threads : (int)ts->n);
    } else {
        for (uint32_t k = 0; k < ts->n; k++)
            ts->zlen[k] = rb * ((size_t)(k + 1 < ts->n ? rows : (uint32_t)im->h - k * rows));
        if (ss > 1 && !host_le()) {
            const size_t n = rb * (size_t)im->h / ss;
            if (!(fo->swapped = vki_malloc_big(rb * (size_t)im->h)))
                atomic_store(&ts->failed, 1);
            for (size_t i = 0; fo->swapped && i < n; i++)
                for (size_t k = 0; k < ss; k++)
                    fo->swapped[i * ss + k] = rows_le[i * ss + ss - 1 - k];
            rows_le = fo->swapped;
        }
    }
    if (atomic_load(&ts->failed)) {
        tiff_file_free(fo);
        return vki_fail(e, VKIMG_E_RUNTIME, "TIFF: out of memory");
    }
    /* the header, the strips, the IFD and the arrays it points to */
    size_t data = 8;
    fo->parts[fo->nparts++] = (vki_span){ fo->head, 8 };
    if (deflate)
        for (uint32_t k = 0; k < ts->n; k++)
            fo->parts[fo->nparts++] = (vki_span){ ts->z[k], ts->zlen[k] };
    else
        fo->parts[fo->nparts++] = (vki_span){ rows_le, rb * (size_t)im->h };
    for (uint32_t k = 0; k < ts->n; k++)
        data += ts->zlen[k];
    if (data & 1)
        fo->parts[fo->nparts++] = (vki_span){ &fo->pad, 1 };
    const bool alpha = c == 2 || c == 4;
    /* the EXIF's tree (exif.c): its IFD0 tags go into the IFD (but the resolution, the
     * writer's own), its IFDs and every value after the ICC profile */
    const unsigned subs = 1u << VKI_XI_EXIF | 1u << VKI_XI_GPS | 1u << VKI_XI_INTEROP;
    const int orient = m && m->orientation > 1 && m->orientation <= 8 ? m->orientation : 0;
    bool exif_res = false; /* the resolution is the EXIF's */
    if (m && m->exif_len) {
        if (!(fo->xt = malloc(sizeof *fo->xt))) {
            tiff_file_free(fo);
            return vki_fail(e, VKIMG_E_RUNTIME, "TIFF: out of memory");
        }
        vki_exif_tree_read(m->exif, m->exif_len, fo->xt); /* (not a TIFF structure: an empty tree) */
        /* the picture's resolution where the EXIF gives both as one RATIONAL (the unit: inches where it
         * gives none, as TIFF's default), else the writer's own */
        const vki_xentry *xr = vki_exif_tree_find(fo->xt, VKI_XI_IFD0, T_XRES);
        const vki_xentry *yr = vki_exif_tree_find(fo->xt, VKI_XI_IFD0, T_YRES);
        const vki_xentry *ru = vki_exif_tree_find(fo->xt, VKI_XI_IFD0, T_RESUNIT);
        exif_res = xr && yr && xr->type == 5 && xr->count == 1 && yr->type == 5 && yr->count == 1;
        if (!exif_res || (ru && (ru->type != 3 || ru->count != 1)))
            vki_exif_tree_drop(fo->xt, VKI_XI_IFD0, T_RESUNIT);
        if (!exif_res)
            for (unsigned tag = T_XRES; tag <= T_YRES; tag++)
                vki_exif_tree_drop(fo->xt, VKI_XI_IFD0, tag);
    }
    const unsigned nx = fo->xt ? fo->xt->n[VKI_XI_IFD0] : 0;
    const unsigned nent = (exif_res ? 10 : 13) + (deflate ? 1 : 0) + (alpha ? 1 : 0) + (im->fmt == VKIMG_F32 ? 1 : 0) + (icc_len ? 1 : 0) +
                          (xmp_len ? 1 : 0) + (ps_len ? 1 : 0) + (iim_longs ? 1 : 0) + (orient ? 1 : 0) + nx;
    const size_t ifd = data + (data & 1), ifd_len = 2 + 12 * (size_t)nent + 4;
    const size_t bps_at = ifd_len, res_at = bps_at + 8, offs_at = res_at + 8, cnts_at = offs_at + 4 * (size_t)ts->n,
                 icc_at = cnts_at + 4 * (size_t)ts->n, xmp_at = icc_at + icc_len, ps_at = xmp_at + xmp_len,
                 iim_at = (ps_at + ps_len + 1) & ~(size_t)1, exif_at = iim_at + 4 * iim_longs,
                 tail_len = exif_at + (fo->xt ? vki_exif_size(fo->xt, subs) : 0); /* in the tail */
    fo->total = ifd + tail_len;
    if (fo->total > UINT32_MAX) {
        tiff_file_free(fo);
        return vki_fail(e, VKIMG_E_RUNTIME, "TIFF: over 4 GiB (BigTIFF is not written)");
    }
    if (!(fo->tail = calloc(1, tail_len))) {
        tiff_file_free(fo);
        return vki_fail(e, VKIMG_E_RUNTIME, "TIFF: out of memory");
    }
    uint32_t ifd_off[VKI_XI_N] = { 0 };
    if (fo->xt)
        vki_exif_write(fo->xt, subs, fo->tail + exif_at, ifd + exif_at, 1, ifd_off);
    fo->parts[fo->nparts++] = (vki_span){ fo->tail, tail_len };
    unsigned char *t = fo->tail;
    memcpy(fo->head, "II*\0", 4);
    put32le(fo->head + 4, (uint32_t)ifd);
    size_t p = 8;
    for (uint32_t k = 0; k < ts->n; k++) {
        put32le(t + offs_at + 4 * (size_t)k, (uint32_t)p);
        put32le(t + cnts_at + 4 * (size_t)k, (uint32_t)ts->zlen[k]);
        p += ts->zlen[k];
    }
    for (unsigned k = 0; k < 4; k++)
        put16le(t + bps_at + 2 * k, ss * 8);
    put32le(t + res_at, 72), put32le(t + res_at + 4, 1); /* 72 pixels an inch, XResolution and YResolution */
    if (icc_len)
        memcpy(t + icc_at, icc, icc_len);
    if (xmp_len)
        memcpy(t + xmp_at, xmp, xmp_len);
    if (ps_len)
        memcpy(t + ps_at, ps, ps_len);
    if (iim_len)
        memcpy(t + iim_at, iim, iim_len);
    unsigned char *d = t;
    put16le(d, nent);
    d += 2;
    /* entries in tag order: tag, type, count, value or offset (in the file: ifd + the tail's) */
#define ENT(tag, type, count, val)                                                                                     \
    do {                                                                                                               \
        put16le(d, tag), put16le(d + 2, type), put32le(d + 4, count);                                                  \
        if ((type) == 3 && (count) == 1)                                                                               \
            put16le(d + 8, val), put16le(d + 10, 0);                                                                   \
        else                                                                                                           \
            put32le(d + 8, val);                                                                                       \
        d += 12;                                                                                                       \
    } while (0)
    ENT(T_WIDTH, 4, 1, (uint32_t)im->w);
    ENT(T_HEIGHT, 4, 1, (uint32_t)im->h);
    if (c <= 2)
        ENT(T_BPS, 3, c, c == 1 ? ss * 8 : (ss * 8) | (ss * 8) << 16);
    else
        ENT(T_BPS, 3, c, (uint32_t)(ifd + bps_at));
    ENT(T_COMPRESSION, 3, 1, deflate ? C_DEFLATE : C_NONE);
    ENT(T_PHOTOMETRIC, 3, 1, c >= 3 ? 2 : 1);
    ENT(T_STRIPOFFSETS, 4, ts->n, ts->n == 1 ? 8 : (uint32_t)(ifd + offs_at));
    if (orient) /* the stored pixels' orientation (--no-auto-orient) */
        ENT(VKI_TIFF_TAG_ORIENTATION, 3, 1, (uint32_t)orient);
    ENT(T_SPP, 3, 1, c);
    ENT(T_ROWSPERSTRIP, 4, 1, rows);
    ENT(T_STRIPBYTECOUNTS, 4, ts->n, ts->n == 1 ? (uint32_t)ts->zlen[0] : (uint32_t)(ifd + cnts_at));
    if (!exif_res) {
        ENT(T_XRES, 5, 1, (uint32_t)(ifd + res_at));
        ENT(T_YRES, 5, 1, (uint32_t)(ifd + res_at));
    }
    ENT(T_PLANAR, 3, 1, 1);
    if (!exif_res)
        ENT(T_RESUNIT, 3, 1, 2);
    if (deflate)
        ENT(T_PREDICTOR, 3, 1, im->fmt == VKIMG_F32 ? 3 : 2);
    if (alpha)
        ENT(T_EXTRASAMPLES, 3, 1, 2);
    if (im->fmt == VKIMG_F32)
        ENT(T_SAMPLEFORMAT, 3, 1, 3);
    /* a tag of count values, the bytes of src: in the entry where they fit its 4 bytes, else at the tail's at */
#define BLOB(tag, type, count, bytes, src, at)                                                                         \
    do {                                                                                                               \
        ENT(tag, type, (uint32_t)(count), (bytes) <= 4 ? 0 : (uint32_t)(ifd + (at)));                                  \
        if ((bytes) <= 4)                                                                                              \
            memcpy(d - 4, src, bytes);                                                                                 \
    } while (0)
    if (xmp_len) /* XMLPacket, BYTE */
        BLOB(VKI_TIFF_TAG_XMP, 1, xmp_len, xmp_len, xmp, xmp_at);
    if (iim_longs) /* IPTC-NAA, LONG */
        BLOB(VKI_TIFF_TAG_IPTC, 4, iim_longs, iim_len, iim, iim_at);
    if (ps_len) /* Photoshop, BYTE */
        BLOB(VKI_TIFF_TAG_PHOTOSHOP, 1, ps_len, ps_len, ps, ps_at);
    if (icc_len) /* UNDEFINED */
        BLOB(T_ICC, 7, icc_len, icc_len, icc, icc_at);
#undef BLOB
#undef ENT
    /* the EXIF's IFD0 entries, then all of them in tag order, as TIFF wants */
    for (unsigned i = 0; i < nx; i++, d += 12)
        vki_exif_entry_put(fo->xt, &fo->xt->e[VKI_XI_IFD0][i], d, 1, ifd_off);
    if (nx)
        qsort(t + 2, nent, 12, entry_tag_cmp);
    put32le(d, 0); /* no next IFD */
    return 0;
}

int vki_tiff_encode_ex(const vkimg_image *im, const vkimg_meta *m, bool deflate, int threads, unsigned char **out,
                       size_t *outlen, vkimg_err *e)
{
    *out = NULL;
    *outlen = 0;
    tiff_file fo;
    int rc = tiff_file_make(im, m, deflate, threads, &fo, e);
    if (rc)
        return rc;
    unsigned char *f = vki_malloc_big(fo.total);
    if (!f) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "TIFF: out of memory (%zu bytes)", fo.total);
    } else {
        size_t p = 0;
        for (int i = 0; i < fo.nparts; i++) {
            memcpy(f + p, fo.parts[i].p, fo.parts[i].n);
            p += fo.parts[i].n;
        }
        *out = f;
        *outlen = fo.total;
    }
    tiff_file_free(&fo);
    return rc;
}

int vki_tiff_encode(const vkimg_image *im, const vkimg_meta *m, unsigned char **out, size_t *outlen, vkimg_err *e)
{
    return vki_tiff_encode_ex(im, m, true, 1, out, outlen, e);
}

int vki_tiff_save(const char *path, const vkimg_image *im, const vkimg_meta *m, bool deflate, int threads,
                  vkimg_err *e)
{
    tiff_file fo;
    vkimg_err te;
    int rc = tiff_file_make(im, m, deflate, threads, &fo, &te);
    if (rc)
        return vki_fail(e, rc, "%s: %s", path, te.msg);
    rc = vki_write_atomic_v(path, fo.parts, fo.nparts, e);
    tiff_file_free(&fo);
    return rc;
}
