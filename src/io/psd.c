/* Photoshop PSD decoder: the composite ("merged") image at the end of the file;
 * layers are skipped.
 *
 * RGB files (colour mode 3) give what stb_image gives for valid files: always 4
 * channels (R, G, B from the first three channels, alpha from the fourth; missing
 * channels are 0, a missing alpha is opaque), U8 for 8-bit files and U16 for 16-bit
 * ones, raw or PackBits-RLE. When there is an alpha channel, Photoshop's composite
 * is matted with white, and that is undone as stb does it (in float:
 * c = c / a + max * (1 - 1 / a) for 0 < a < max, truncated), but clamped to
 * 0 .. max where stb's conversion wraps around. Grayscale files (colour mode 1,
 * which stb_image refuses) give 1 channel, or gray + alpha from the second
 * channel (un-matted the same way). 16-bit RLE files
 * are decoded as the format defines them (stb_image reads them as 8-bit data and
 * returns noise).
 *
 * Strict where stb is lenient: every read is within the file (stb reads zeros past
 * its end), including the data of the channels past the fourth, which are not used;
 * 1..56 channels; a PackBits run past the end of a channel is an error; PSB (version
 * 2), bitmap, 32-bit, indexed, CMYK, Lab, multichannel and duotone files are
 * refused; the section lengths must lie within the file. */
#include "io/io_priv.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define psd_fail(e, name, ...) vki_dec_fail(e, name, "PSD", __VA_ARGS__)

/* PackBits (vki_unpack_bits) with PSD's reasons */
static const char *unpack_bits(const unsigned char *b, size_t len, size_t *pos, unsigned char *dst, size_t n,
                               size_t step)
{
    const int r = vki_unpack_bits(b, len, pos, dst, n, step);
    return r == 1 ? "truncated RLE data" : r == 2 ? "an RLE packet runs past the end of its channel" : NULL;
}

int vki_unpack_bits(const unsigned char *b, size_t len, size_t *pos, unsigned char *dst, size_t n, size_t step)
{
    size_t p = *pos, i = 0;
    while (i < n) {
        if (p >= len)
            return 1;
        unsigned c = b[p++];
        if (c < 128) { /* c + 1 bytes as they are */
            size_t k = c + 1;
            if (k > n - i)
                return 2;
            if (len - p < k)
                return 1;
            for (size_t j = 0; j < k; j++, i++)
                dst[i * step] = b[p++];
        } else if (c > 128) { /* 257 - c copies of the next byte */
            size_t k = 257 - c;
            if (k > n - i)
                return 2;
            if (p >= len)
                return 1;
            unsigned char v = b[p++];
            for (size_t j = 0; j < k; j++, i++)
                dst[i * step] = v;
        } /* 128: no operation (one byte consumed) */
    }
    *pos = p;
    return 0;
}

/* The un-matted value, truncated as stb converts it, clamped to the sample's range
 * (stb's conversion wraps around there: a composite not matted with white, as
 * ImageMagick writes it, or the rounding of a matted one amplified by 1 / a at a
 * small alpha, gave colours from the other end of the range) */
static unsigned char f2u8(float v) { return v <= 0.0f ? 0 : v >= 255.0f ? 255 : (unsigned char)(int)v; }
static uint16_t f2u16(float v) { return v <= 0.0f ? 0 : v >= 65535.0f ? 65535 : (uint16_t)(int32_t)v; }

int vki_psd_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out || len < 4 || memcmp(b, "8BPS", 4))
        return psd_fail(e, name, "not a PSD signature");
    if (len < 26)
        return psd_fail(e, name, "truncated in the header");
    const unsigned version = vki_rd16be(b + 4);
    if (version == 2)
        return psd_fail(e, name, "PSB (the large document format) is not supported");
    if (version != 1)
        return psd_fail(e, name, "unknown version %u", version);
    const unsigned nch = vki_rd16be(b + 12), depth = vki_rd16be(b + 22), mode = vki_rd16be(b + 24);
    const uint32_t h = vki_rd32be(b + 14), w = vki_rd32be(b + 18);
    if (nch < 1 || nch > 56)
        return psd_fail(e, name, "%u channels (1..56)", nch);
    if (depth != 8 && depth != 16)
        return psd_fail(e, name, "%u bits a channel is not supported (8 and 16 are)", depth);
    if (mode != 3 && mode != 1)
        return psd_fail(e, name, "colour mode %u is not supported (RGB and grayscale are)", mode);
    int rc = vki_check_dims(name, w, h, max_pixels, e);
    if (rc)
        return rc;
    /* colour mode data, image resources, layer and mask information: skipped */
    size_t pos = 26;
    for (int s = 0; s < 3; s++) {
        if (len - pos < 4)
            return psd_fail(e, name, "truncated in the section lengths");
        uint32_t n = vki_rd32be(b + pos);
        pos += 4;
        if (n > len - pos)
            return psd_fail(e, name, "a section of %u bytes runs past the end of the file", (unsigned)n);
        pos += n;
    }
    if (len - pos < 2)
        return psd_fail(e, name, "truncated before the image data");
    const unsigned comp = vki_rd16be(b + pos);
    pos += 2;
    if (comp > 1)
        return psd_fail(e, name, "compression %u (ZIP) is not supported", comp);

    const int gray = mode == 1;
    const int c = gray ? (nch >= 2 ? 2 : 1) : 4;     /* channels of the result */
    const unsigned used = nch < (unsigned)c ? nch : (unsigned)c; /* channels read from the file */
    const size_t bps = depth / 8, np = (size_t)w * h, plane = np * bps;
    if (comp == 0) {
        if ((len - pos) / plane < nch)
            return psd_fail(e, name, "truncated image data (%zu bytes, want %zu)", len - pos, plane * nch);
    } else {
        /* the row byte counts (2 bytes each) of every row of every channel, then each
         * row packed: at least 2 bytes a 128 bytes of row */
        const size_t rows = (size_t)h * nch, minrow = 2 * ((w * bps + 127) / 128);
        if ((len - pos) / 2 < rows || (len - pos - 2 * rows) / minrow < rows)
            return psd_fail(e, name, "truncated RLE data");
    }
    if ((rc = vki_decoded_alloc(out, w, h, c, depth == 16 ? VKIMG_U16 : VKIMG_U8, name, e)))
        return rc;
    unsigned char *o8 = out->data;
    uint16_t *o16 = out->data;
    const char *err = NULL;

    if (comp == 0) {
        for (unsigned k = 0; k < used; k++) {
            const unsigned char *s = b + pos + k * plane;
            if (depth == 16)
                for (size_t i = 0; i < np; i++)
                    o16[i * (size_t)c + k] = (uint16_t)vki_rd16be(s + 2 * i);
            else
                for (size_t i = 0; i < np; i++)
                    o8[i * (size_t)c + k] = s[i];
        }
    } else {
        const size_t counts = pos;
        pos += 2 * (size_t)h * nch;
        unsigned char *buf = NULL;
        if (depth == 16 && !(buf = malloc(plane))) {
            vkimg_image_free(out);
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, plane);
        }
        for (unsigned k = 0; k < used && !err; k++) {
            if (depth == 8) {
                err = unpack_bits(b, len, &pos, o8 + k, np, (size_t)c);
            } else if (!(err = unpack_bits(b, len, &pos, buf, plane, 1))) {
                for (size_t i = 0; i < np; i++)
                    o16[i * (size_t)c + k] = (uint16_t)vki_rd16be(buf + 2 * i);
            }
        }
        free(buf);
        if (!err) { /* the channels not used must still be there, as their row counts say */
            size_t rest = 0;
            for (size_t r = (size_t)used * h; r < (size_t)nch * h; r++)
                rest += vki_rd16be(b + counts + 2 * r);
            if (len - pos < rest)
                err = "truncated RLE data";
        }
    }
    if (err) {
        vkimg_image_free(out);
        return psd_fail(e, name, "%s", err);
    }
    /* channels the file lacks: colour 0, alpha opaque */
    for (unsigned k = used; k < (unsigned)c; k++) {
        const int alpha = k == (unsigned)c - 1 && (gray || k == 3);
        for (size_t i = 0; i < np; i++) {
            if (depth == 16)
                o16[i * (size_t)c + k] = alpha ? 65535 : 0;
            else
                o8[i * (size_t)c + k] = alpha ? 255 : 0;
        }
    }
    /* un-matting, stb_image's arithmetic, clamped (f2u8) */
    if (nch >= (unsigned)c && (gray ? c == 2 : 1)) {
        const int a_at = c - 1;
        for (size_t i = 0; i < np; i++) {
            if (depth == 16) {
                uint16_t *p = o16 + i * (size_t)c;
                if (p[a_at] != 0 && p[a_at] != 65535) {
                    float a = p[a_at] / 65535.0f;
                    float ra = 1.0f / a;
                    float inv_a = 65535.0f * (1 - ra);
                    for (int k = 0; k < a_at; k++)
                        p[k] = f2u16(p[k] * ra + inv_a);
                }
            } else {
                unsigned char *p = o8 + i * (size_t)c;
                if (p[a_at] != 0 && p[a_at] != 255) {
                    float a = p[a_at] / 255.0f;
                    float ra = 1.0f / a;
                    float inv_a = 255.0f * (1 - ra);
                    for (int k = 0; k < a_at; k++)
                        p[k] = f2u8(p[k] * ra + inv_a);
                }
            }
        }
    }
    return 0;
}
