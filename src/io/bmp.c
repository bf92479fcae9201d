/* BMP decoder.
 *
 * Takes the BMPs stb_image takes and gives, for valid files, exactly its result:
 * headers of 12 (OS/2), 40, 56, 108 (V4) and 124 (V5) bytes (and, beyond stb, the
 * 52-byte V2 header, the OS/2 2.x header of 64 bytes and its 16-byte short form:
 * see below); 1/4/8-bit (and, beyond stb, Windows CE's 2-bit) palette
 * images (RGB out), 24-bit (RGB), 16 and 32-bit with BI_RGB's default masks (16-bit:
 * 5-5-5; 32-bit: BGRA, where an alpha channel that is 0 everywhere means opaque) or
 * BI_BITFIELDS masks of up to 8 bits each, widened as stb does; RGBA when the file
 * has an alpha mask. Bottom-up (positive height) and top-down (negative) rows. The
 * palette size comes from the pixel data offset, as stb takes it (the entries
 * between the headers and the data, at most 256); BI_BITFIELDS masks of a 40-byte
 * header follow it, those of the 56-byte (V3), V4 and V5 headers are inside them.
 * RLE8 and RLE4 (BI_RLE8/BI_RLE4, which stb refuses) as Windows defines them:
 * encoded runs, absolute runs (padded to 16 bits), end of line, delta and end of
 * bitmap; pixels the stream skips (by an end of line, a delta or an early end of
 * bitmap) are palette entry 0, as ImageMagick and Pillow leave them, and a run
 * past the end of its row is clipped there. The whole stream is parsed and
 * checked before the image is allocated; it must end with an end of bitmap or
 * the last row's end of line, and hold at least a byte a 1032 pixels (DEFLATE's
 * bound, as for PNG: a few bytes of skips do not make a huge image). Embedded
 * JPEG/PNG compression is refused.
 *
 * Strict where stb is lenient: every byte read is within the file (stb reads zeros
 * past its end), including the last row's padding; a palette index past the
 * palette is an error (stb reads uninitialized memory); the data offset must lie
 * where the pixel data can begin (stb skips backwards to the end of the file).
 * Where stb is wrong or strict: 16, 24 and 32-bit data may begin after a gap
 * (an unused palette, padding), which stb refuses and valid files have
 * (bmpsuite's rgb24pal and rgb16-565pal); an OS/2 header's palette starts after
 * its 12 bytes (stb counts 24, so 4 entries too few: indices past them refused
 * here, garbage in stb); a 56-byte header's masks are its own (stb reads three
 * from the pixel data, and refuses Photoshop's files when they are equal); a
 * palette of more than 256 entries has its first 256 read. Header sizes stb does
 * not take, as ImageMagick and Pillow read them: 52 bytes (V2: the 40-byte fields
 * and three colour masks, no alpha mask); OS/2 2.x, 64 bytes (the 40-byte fields,
 * then 24 of OS/2's own, unused here; 4-byte palette entries; its compression 3 and
 * 4, Huffman 1D and RLE24, are refused) and its first 16 bytes alone (width,
 * height, planes, bits: uncompressed). */
#include "io/io_priv.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define bmp_fail(e, name, ...) vki_dec_fail(e, name, "BMP", __VA_ARGS__)

static int high_bit(uint32_t z) /* 0..31, -1 for 0 */
{
    int n = -1;
    while (z) {
        n++;
        z >>= 1;
    }
    return n;
}

static int bit_count(uint32_t a)
{
    int n = 0;
    for (; a; a &= a - 1)
        n++;
    return n;
}

/* The value under a mask as 8 bits, widened by replicating its bits: stb_image's
 * stbi__shiftsigned (shift puts the mask's top bit at bit 7; bits <= 8). */
static unsigned widen(uint32_t v, int shift, int bits)
{
    static const unsigned mul[9] = { 0, 0xff, 0x55, 0x49, 0x11, 0x21, 0x41, 0x81, 0x01 };
    static const unsigned sh[9] = { 0, 0, 0, 1, 0, 2, 4, 6, 0 };
    v = shift < 0 ? v << -shift : v >> shift; /* < 256 */
    v >>= 8 - bits;
    return (v * mul[bits]) >> sh[bits];
}

/* An RLE8 (bpp 8) or RLE4 (bpp 4) stream of n bytes for w x ht pixels: with img
 * NULL it only checks the stream (returns 0, or a message); with img it writes
 * each pixel it codes as its palette colour into the image's 3-byte pixels (rows
 * top first; flip: the stream's first row is the bottom one), leaving the others.
 * *maxi gets the largest palette index used. */
static const char *bmp_rle(const unsigned char *d, size_t n, size_t w, size_t ht, unsigned bpp, int flip,
                           const unsigned char (*pal)[3], unsigned char *img, unsigned *maxi)
{
    size_t i = 0, x = 0, y = 0;
    unsigned mi = 0;
    while (y < ht) {
        if (n - i < 2)
            return "truncated RLE data (no end of bitmap)";
        const unsigned cnt = d[i], v = d[i + 1];
        i += 2;
        unsigned char *row = img ? img + (flip ? ht - 1 - y : y) * w * 3 : NULL;
        if (cnt) { /* an encoded run: cnt pixels of v (RLE4: its two nibbles in turn) */
            const unsigned a = bpp == 8 ? v : v >> 4, b = bpp == 8 ? v : v & 15;
            mi = mi > a ? mi : a;
            mi = cnt < 2 || mi > b ? mi : b;
            for (unsigned k = 0; k < cnt && x < w; k++, x++)
                if (row)
                    memcpy(row + 3 * x, pal[k & 1 ? b : a], 3);
            continue;
        }
        if (v == 0) { /* end of line */
            x = 0, y++;
        } else if (v == 1) { /* end of bitmap */
            break;
        } else if (v == 2) { /* delta: right and on to later rows */
            if (n - i < 2)
                return "truncated RLE data (in a delta)";
            x += d[i], y += d[i + 1];
            i += 2;
        } else { /* an absolute run of v pixels, padded to a 16-bit boundary */
            const size_t bytes = bpp == 8 ? v : (v + 1u) / 2u, padded = bytes + (bytes & 1);
            if (n - i < padded)
                return "truncated RLE data (in an absolute run)";
            for (unsigned k = 0; k < v; k++) {
                const unsigned p = bpp == 8 ? d[i + k] : (d[i + k / 2] >> (k & 1 ? 0 : 4)) & 15;
                mi = mi > p ? mi : p;
                if (x < w) {
                    if (row)
                        memcpy(row + 3 * x, pal[p], 3);
                    x++;
                }
            }
            i += padded;
        }
    }
    *maxi = mi;
    return NULL;
}

int vki_bmp_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out || len < 2 || b[0] != 'B' || b[1] != 'M')
        return bmp_fail(e, name, "not a BMP signature");
    if (len < 18)
        return bmp_fail(e, name, "truncated in the file header (%zu bytes)", len);
    const uint32_t offset = vki_rd32le(b + 10), hsz = vki_rd32le(b + 14);
    if (hsz != 12 && hsz != 16 && hsz != 40 && hsz != 52 && hsz != 56 && hsz != 64 && hsz != 108 && hsz != 124)
        return bmp_fail(e, name, "unsupported header size %u", (unsigned)hsz);
    if (len < 14 + (size_t)hsz)
        return bmp_fail(e, name, "truncated in the %u-byte header", (unsigned)hsz);
    if (offset > 0x7fffffffu)
        return bmp_fail(e, name, "invalid pixel data offset %u", (unsigned)offset);
    const unsigned char *h = b + 14;
    uint32_t w;
    int32_t sh;
    if (hsz == 12) {
        w = vki_rd16le(h + 4);
        sh = (int32_t)vki_rd16le(h + 6);
    } else {
        w = vki_rd32le(h + 4);
        sh = (int32_t)vki_rd32le(h + 8);
    }
    const unsigned char *q = h + (hsz == 12 ? 8 : 12);
    if (vki_rd16le(q) != 1)
        return bmp_fail(e, name, "%u planes (want 1)", (unsigned)vki_rd16le(q));
    const unsigned bpp = vki_rd16le(q + 2);
    size_t cur = 14 + hsz; /* where the header (and masks) end */
    uint32_t mr = 0, mg = 0, mb = 0, ma = 0, compress = 0;
    int all_a_check = 0; /* BI_RGB 32-bit: an alpha that is 0 everywhere means opaque */
    if (hsz != 12) {
        compress = hsz > 16 ? vki_rd32le(h + 16) : 0;
        if (hsz == 64 && (compress == 3 || compress == 4))
            return bmp_fail(e, name, "OS/2 %s compression is not supported", compress == 3 ? "Huffman 1D" : "RLE24");
        if ((compress == 1 && bpp != 8) || (compress == 2 && bpp != 4))
            return bmp_fail(e, name, "%s with %u bits a pixel", compress == 1 ? "RLE8" : "RLE4", bpp);
        if (compress >= 4)
            return bmp_fail(e, name, "compression %u (JPEG, PNG or other) is not supported", (unsigned)compress);
        if (compress == 3 && bpp != 16 && bpp != 32)
            return bmp_fail(e, name, "BI_BITFIELDS with %u bits a pixel", bpp);
        if (hsz == 16 || hsz == 40 || hsz == 64) {
            if (bpp == 16 || bpp == 32) {
                if (compress == 0) {
                    if (bpp == 16) {
                        mr = 31u << 10, mg = 31u << 5, mb = 31u;
                    } else {
                        mr = 0xffu << 16, mg = 0xffu << 8, mb = 0xffu, ma = 0xffu << 24;
                        all_a_check = 1;
                    }
                } else { /* BI_BITFIELDS: three masks after the header */
                    if (len < cur + 12)
                        return bmp_fail(e, name, "truncated in the colour masks");
                    mr = vki_rd32le(b + cur), mg = vki_rd32le(b + cur + 4), mb = vki_rd32le(b + cur + 8);
                    cur += 12;
                    if (mr == mg && mg == mb)
                        return bmp_fail(e, name, "invalid colour masks");
                }
            }
        } else { /* V2 (52 bytes: no alpha mask), V3 (Adobe's 56 bytes), V4, V5: the masks
                    are in the header; BI_RGB uses the defaults */
            mr = vki_rd32le(h + 40), mg = vki_rd32le(h + 44), mb = vki_rd32le(h + 48);
            ma = hsz > 52 ? vki_rd32le(h + 52) : 0;
            if (compress != 3) {
                if (bpp == 16) {
                    mr = 31u << 10, mg = 31u << 5, mb = 31u;
                } else if (bpp == 32) {
                    mr = 0xffu << 16, mg = 0xffu << 8, mb = 0xffu, ma = 0xffu << 24;
                    all_a_check = 1;
                } else {
                    mr = mg = mb = ma = 0;
                }
            }
        }
    }
    if (sh == INT32_MIN)
        return bmp_fail(e, name, "invalid height %d", (int)sh);
    const int flip = sh > 0; /* bottom-up rows */
    const uint32_t ht = (uint32_t)(sh < 0 ? -sh : sh);
    int rc = vki_check_dims(name, w, ht, max_pixels, e);
    if (rc)
        return rc;
    const int c = (bpp == 24 && ma == 0xff000000u) ? 3 : ma ? 4 : 3;

    /* ---- where the palette and the pixels are */
    unsigned char pal[256][3] = { { 0 } };
    long psize = 0;
    size_t rowbytes;
    if (bpp < 16) {
        if (bpp != 1 && bpp != 2 && bpp != 4 && bpp != 8)
            return bmp_fail(e, name, "%u bits a pixel is not supported", bpp);
        const long es = hsz == 12 ? 3 : 4; /* bytes a palette entry */
        /* the entries between the headers and the data, at most 256 (those past
         * it no index reaches) */
        psize = (long)offset > (long)cur ? ((long)offset - (long)cur) / es : 0;
        if (psize > 256)
            psize = 256;
        if (psize <= 0)
            return bmp_fail(e, name, "pixel data offset %u leaves no room for a palette", (unsigned)offset);
        if (len < cur + (size_t)(psize * es))
            return bmp_fail(e, name, "truncated in the palette");
        for (long i = 0; i < psize; i++) {
            const unsigned char *p = b + cur + (size_t)(i * es);
            pal[i][0] = p[2], pal[i][1] = p[1], pal[i][2] = p[0]; /* BGR(x) */
        }
        rowbytes = ((size_t)w * bpp + 7) / 8;
    } else {
        if (bpp != 16 && bpp != 24 && bpp != 32)
            return bmp_fail(e, name, "%u bits a pixel is not supported", bpp);
        /* the data may start after a gap (a palette, which these depths do not
         * use, or padding: valid BMPs that stb refuses, but Windows, browsers,
         * ImageMagick and Pillow read), not inside the headers */
        if (offset < cur)
            return bmp_fail(e, name, "pixel data offset %u inside the headers (%zu bytes)", (unsigned)offset, cur);
        rowbytes = (size_t)w * (bpp / 8);
    }
    if (compress == 1 || compress == 2) { /* RLE8, RLE4: checked whole, then decoded */
        if (offset > len)
            return bmp_fail(e, name, "pixel data offset %u past the end of the file (%zu bytes)", (unsigned)offset, len);
        if ((uint64_t)w * ht / 1032u > len - offset) /* a bomb: DEFLATE's bound, as for PNG */
            return bmp_fail(e, name, "%zu bytes of RLE data for %ux%u pixels (under a byte a 1032 pixels)", len - offset,
                            (unsigned)w, (unsigned)ht);
        unsigned maxi = 0;
        const char *why = bmp_rle(b + offset, len - offset, w, ht, bpp, flip, pal, NULL, &maxi);
        if (why)
            return bmp_fail(e, name, "%s", why);
        if (maxi >= (unsigned)psize)
            return bmp_fail(e, name, "palette index past the %ld entries of the palette", psize);
        if ((rc = vki_decoded_alloc(out, w, ht, 3, VKIMG_U8, name, e)))
            return rc;
        unsigned char *img = out->data;
        for (size_t i = 0; i < (size_t)w * ht; i++) /* what the stream skips: entry 0 */
            memcpy(img + 3 * i, pal[0], 3);
        bmp_rle(b + offset, len - offset, w, ht, bpp, flip, pal, img, &maxi);
        return 0;
    }
    const size_t pad = bpp == 32 ? 0 : (4 - rowbytes % 4) % 4;
    const size_t need = (rowbytes + pad) * ht; /* < 2^24 * 2^26 */
    if (offset > len || len - offset < need)
        return bmp_fail(e, name, "truncated pixel data (%zu bytes, want %zu from offset %u)",
                        len > offset ? len - offset : 0, need, (unsigned)offset);

    /* ---- masks (16 and 32-bit, other than plain BGRA) */
    const int easy = bpp == 24 || (bpp == 32 && mb == 0xffu && mg == 0xff00u && mr == 0xff0000u && ma == 0xff000000u);
    int rs = 0, gs = 0, bs = 0, as = 0, rn = 0, gn = 0, bn = 0, an = 0;
    if (bpp >= 16 && !easy) {
        if (!mr || !mg || !mb)
            return bmp_fail(e, name, "missing colour masks");
        rs = high_bit(mr) - 7, rn = bit_count(mr);
        gs = high_bit(mg) - 7, gn = bit_count(mg);
        bs = high_bit(mb) - 7, bn = bit_count(mb);
        as = high_bit(ma) - 7, an = bit_count(ma);
        if (rn > 8 || gn > 8 || bn > 8 || an > 8)
            return bmp_fail(e, name, "colour masks of more than 8 bits");
    }

    if ((rc = vki_decoded_alloc(out, w, ht, c, VKIMG_U8, name, e)))
        return rc;
    unsigned char *img = out->data;
    unsigned all_a = 0, bad = 0;
    for (size_t y = 0; y < ht; y++) {
        const unsigned char *s = b + offset + y * (rowbytes + pad);
        unsigned char *o = img + (flip ? ht - 1 - y : y) * (size_t)w * (size_t)c;
        if (bpp < 16) {
            for (size_t x = 0; x < w; x++) {
                /* (1, 2 and 4-bit indices: the leftmost pixel in the high bits) */
                unsigned i = bpp == 8 ? s[x] : (unsigned)(s[x * bpp / 8] >> (8 - bpp - x * bpp % 8)) & ((1u << bpp) - 1);
                bad |= i >= (unsigned)psize;
                i &= 255;
                o[0] = pal[i][0], o[1] = pal[i][1], o[2] = pal[i][2];
                if (c == 4)
                    o[3] = 255;
                o += c;
            }
        } else if (easy) {
            const size_t sp = bpp / 8;
            for (size_t x = 0; x < w; x++, s += sp, o += c) {
                o[0] = s[2], o[1] = s[1], o[2] = s[0];
                unsigned a = bpp == 32 ? s[3] : 255;
                all_a |= a;
                if (c == 4)
                    o[3] = (unsigned char)a;
            }
        } else {
            for (size_t x = 0; x < w; x++, o += c) {
                uint32_t v = bpp == 16 ? vki_rd16le(s + 2 * x) : vki_rd32le(s + 4 * x);
                o[0] = (unsigned char)widen(v & mr, rs, rn);
                o[1] = (unsigned char)widen(v & mg, gs, gn);
                o[2] = (unsigned char)widen(v & mb, bs, bn);
                unsigned a = ma ? widen(v & ma, as, an) : 255;
                all_a |= a;
                if (c == 4)
                    o[3] = (unsigned char)a;
            }
        }
    }
    if (bad) {
        vkimg_image_free(out);
        return bmp_fail(e, name, "palette index past the %ld entries of the palette", psize);
    }
    if (c == 4 && all_a_check && all_a == 0) /* BI_RGB 32-bit without alpha: opaque */
        for (size_t i = 0; i < (size_t)w * ht; i++)
            img[4 * i + 3] = 255;
    return 0;
}
