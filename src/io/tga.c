/* TGA (Truevision Targa) decoder.
 *
 * Takes the TGAs stb_image takes and gives, for valid files, exactly its result:
 * image types 1/9 (colour-mapped, 8 or 16-bit indices into a map of 8, 15, 16, 24
 * or 32-bit entries), 2/10 (true colour, 8/15/16/24/32 bits) and 3/11 (gray, 8 bits,
 * or 16 bits as gray+alpha), raw or RLE. Channels: 1 (8 bits, or an 8-bit map), 2
 * (16-bit gray), 3 (24 bits, 15/16-bit colour widened as (v*255)/31, alpha bit
 * ignored), 4 (32 bits); BGR(A) is turned into RGB(A); rows bottom-up unless the
 * descriptor's top-down bit is set, and right to left where its right-to-left bit
 * is (as Pillow, GIMP and the TGA specification read it; stb ignores that bit).
 *
 * Strict where stb is lenient: every read is within the file (stb reads zeros past
 * its end); an RLE packet running past the last pixel, a colour-map index past the
 * map (stb uses entry 0) and an empty map are errors. Where stb is wrong: a map
 * whose first entry is not colour 0 has its colours from there (stb reads them
 * from the wrong place), and a map beside a true-colour or gray image (unused,
 * allowed) is skipped (stb refuses the file). Nothing is allocated before the
 * size is checked; the colour map is at most 131070 colours of 4 bytes. */
#include "io/io_priv.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define tga_fail(e, name, ...) vki_dec_fail(e, name, "TGA", __VA_ARGS__)

/* Channels for a pixel (or map entry) of `bits` bits, 0 if unsupported; *rgb16 is
 * set for 15/16-bit colour (stb_image's stbi__tga_get_comp). */
static int tga_comp(int bits, int gray, int *rgb16)
{
    *rgb16 = 0;
    switch (bits) {
    case 8: return 1;
    case 16:
        if (gray)
            return 2;
        /* fall through */
    case 15: *rgb16 = 1; return 3;
    case 24:
    case 32: return bits / 8;
    default: return 0;
    }
}

int vki_tga_test(const unsigned char *b, size_t len)
{
    if (!b || len < 18 || b[1] > 1)
        return 0;
    /* a colour map (b[1] 1) with an indexed image, or unused with a true-colour or
     * gray one; an indexed image needs one */
    if (b[1] == 1 && b[7] != 8 && b[7] != 15 && b[7] != 16 && b[7] != 24 && b[7] != 32)
        return 0;
    const int indexed = b[2] == 1 || b[2] == 9;
    if (indexed ? b[1] != 1 : b[2] != 2 && b[2] != 3 && b[2] != 10 && b[2] != 11)
        return 0;
    if (vki_rd16le(b + 12) < 1 || vki_rd16le(b + 14) < 1)
        return 0;
    const int bpp = b[16];
    if (indexed && bpp != 8 && bpp != 16)
        return 0;
    return bpp == 8 || bpp == 15 || bpp == 16 || bpp == 24 || bpp == 32;
}

/* 15/16-bit colour (x RRRRR GGGGG BBBBB, little-endian) to RGB */
static void rgb16(unsigned char *o, const unsigned char *s)
{
    unsigned v = vki_rd16le(s);
    o[0] = (unsigned char)(((v >> 10) & 31) * 255 / 31);
    o[1] = (unsigned char)(((v >> 5) & 31) * 255 / 31);
    o[2] = (unsigned char)((v & 31) * 255 / 31);
}

int vki_tga_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out || !vki_tga_test(b, len))
        return tga_fail(e, name, "not a TGA header this decoder supports");
    const int indexed = (b[2] & 7) == 1, rle = b[2] >= 8, type = b[2] & 7;
    const unsigned pal_start = vki_rd16le(b + 3), pal_len = vki_rd16le(b + 5), pal_bits = b[7];
    const uint32_t w = vki_rd16le(b + 12), h = vki_rd16le(b + 14);
    const int bpp = b[16], top_down = (b[17] >> 5) & 1, right_to_left = (b[17] >> 4) & 1;
    int is16, c = indexed ? tga_comp((int)pal_bits, 0, &is16) : tga_comp(bpp, type == 3, &is16);
    if (!c) /* vki_tga_test rules this out */
        return tga_fail(e, name, "unsupported pixel size");
    int rc = vki_check_dims(name, w, h, max_pixels, e);
    if (rc)
        return rc;
    size_t pos = 18 + (size_t)b[0]; /* after the image ID */
    if (pos > len)
        return tga_fail(e, name, "truncated in the image ID");

    /* ---- the colour map: entries of c bytes (BGR order for c >= 3); the file's
     * first entry is colour pal_start, and the colours below it are black (as
     * Pillow and image-rs read them). A true-colour or gray image's map is
     * skipped. */
    unsigned char *pal = NULL;
    const size_t ncolours = (size_t)pal_start + pal_len; /* <= 131070 */
    if (indexed) {
        if (!pal_len)
            return tga_fail(e, name, "empty colour map");
        const size_t es = is16 ? 2 : (size_t)c, n = (size_t)pal_len * es;
        if (len - pos < n)
            return tga_fail(e, name, "truncated in the colour map");
        pal = calloc(ncolours, (size_t)c);
        if (!pal)
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory", name);
        for (size_t i = 0; i < pal_len; i++) {
            unsigned char *o = pal + ((size_t)pal_start + i) * (size_t)c;
            if (is16)
                rgb16(o, b + pos + 2 * i);
            else
                memcpy(o, b + pos + i * (size_t)c, (size_t)c);
        }
        pos += n;
    } else if (b[1] == 1) {
        const size_t n = (size_t)pal_len * (((size_t)pal_bits + 7) / 8);
        if (len - pos < n)
            return tga_fail(e, name, "truncated in the colour map");
        pos += n;
    }
    const size_t np = (size_t)w * h, rowb = (size_t)w * (size_t)c;
    /* bytes a pixel takes in the data */
    const size_t ps = indexed ? (bpp == 8 ? 1 : 2) : is16 ? 2 : (size_t)c;
    /* the least data that can hold the image (an RLE packet: at most 128 pixels from
     * 1 + ps bytes): refuse before allocating */
    if ((len - pos) / (rle ? 1 + ps : ps) < (rle ? (np + 127) / 128 : np)) {
        free(pal);
        return tga_fail(e, name, "truncated pixel data (%zu bytes cannot hold %ux%u pixels)", len - pos, (unsigned)w,
                        (unsigned)h);
    }
    if ((rc = vki_decoded_alloc(out, w, h, c, VKIMG_U8, name, e))) {
        free(pal);
        return rc;
    }
    unsigned char *img = out->data;
    const char *err = NULL;
    unsigned bad_index = 0;

    if (!indexed && !rle && !is16) { /* raw rows */
        if (len - pos < np * ps) {
            err = "truncated pixel data";
        } else {
            for (size_t y = 0; y < h; y++)
                memcpy(img + (top_down ? y : h - 1 - y) * rowb, b + pos + y * rowb, rowb);
        }
    } else {
        unsigned char px[4] = { 0, 0, 0, 0 };
        size_t run = 0; /* pixels left in the current RLE packet */
        int repeat = 0;
        for (size_t i = 0; i < np && !err; i++) {
            int read = 1;
            if (rle) {
                if (run == 0) {
                    if (pos >= len) {
                        err = "truncated RLE data";
                        break;
                    }
                    unsigned cmd = b[pos++];
                    run = 1 + (cmd & 127);
                    repeat = cmd >> 7;
                    if (run > np - i) {
                        err = "an RLE packet runs past the end of the image";
                        break;
                    }
                } else {
                    read = !repeat;
                }
                run--;
            }
            if (read) {
                if (len - pos < ps) {
                    err = "truncated pixel data";
                    break;
                }
                const unsigned char *s = b + pos;
                pos += ps;
                if (indexed) {
                    unsigned idx = bpp == 8 ? s[0] : vki_rd16le(s);
                    if (idx >= ncolours) {
                        bad_index = bad_index > idx + 1 ? bad_index : idx + 1;
                        idx = 0;
                    }
                    memcpy(px, pal + (size_t)idx * (size_t)c, (size_t)c);
                } else if (is16) {
                    rgb16(px, s);
                } else {
                    memcpy(px, s, (size_t)c);
                }
            }
            const size_t y = i / w, x = i % w;
            memcpy(img + (top_down ? y : h - 1 - y) * rowb + x * (size_t)c, px, (size_t)c);
        }
    }
    free(pal);
    if (!err && bad_index)
        err = "a colour-map index past the end of the colour map";
    if (err) {
        vkimg_image_free(out);
        return tga_fail(e, name, "%s", err);
    }
    if (right_to_left) /* each row's pixels were stored from its right end */
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w / 2; x++) {
                unsigned char t[4], *l = img + y * rowb + x * (size_t)c, *r = img + y * rowb + (w - 1 - x) * (size_t)c;
                memcpy(t, l, (size_t)c);
                memcpy(l, r, (size_t)c);
                memcpy(r, t, (size_t)c);
            }
    if (c >= 3 && !is16) /* BGR(A) -> RGB(A) */
        for (size_t i = 0; i < np; i++) {
            unsigned char t = img[i * (size_t)c];
            img[i * (size_t)c] = img[i * (size_t)c + 2];
            img[i * (size_t)c + 2] = t;
        }
    return 0;
}
