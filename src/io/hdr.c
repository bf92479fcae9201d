/* Radiance HDR (RGBE) decoder.
 *
 * Takes what stb_image takes and gives, for valid files, exactly its result (F32,
 * 3 channels): the signature line "#?RADIANCE" or "#?RGBE", header lines up to an
 * empty line among which "FORMAT=32-bit_rle_rgbe" must be, the resolution line
 * "-Y H +X W" (rows top to bottom, columns left to right: other orientations are
 * errors), then the scanlines. A scanline is new-style RLE (02 02 and the width,
 * then the four components, each as runs and literal dumps) or flat RGBE pixels;
 * widths under 8 or over 32767 are always flat; once a flat scanline is met the
 * rest of the file is flat, as stb reads it. A pixel (r, g, b, e) is
 * r * 2^(e-136), ... or 0 when e is 0, computed in float as stb does.
 *
 * Strict where stb is lenient: every read is within the file (stb reads zeros past
 * its end and, on a zero-length RLE run there, loops forever); a zero-length run, a
 * run past the end of the scanline, or an RLE scanline of another width is an
 * error; the resolution line must be "-Y H +X W" (spaces before a number allowed, as
 * stb's strtol and vips's reader take them: vips writes "-Y      980 +X      141"). */
#include "io/io_priv.h"
#include "core/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define hdr_fail(e, name, ...) vki_dec_fail(e, name, "HDR", __VA_ARGS__)

/* The line at *pos (without its '\n'); *pos moves past the '\n'. 0 when the data
 * ends before a '\n'. */
static int get_line(const unsigned char *b, size_t len, size_t *pos, const char **line, size_t *n)
{
    const unsigned char *p = b + *pos, *nl = memchr(p, '\n', len - *pos);
    if (!nl)
        return 0;
    *line = (const char *)p;
    *n = (size_t)(nl - p);
    *pos += *n + 1;
    return 1;
}

static int line_is(const char *line, size_t n, const char *s) { return n == strlen(s) && !memcmp(line, s, n); }

/* Digits at line[*i] as a number (saturating at 1e9); 0 if none. */
static int get_dim(const char *line, size_t n, size_t *i, uint32_t *v)
{
    while (*i < n && line[*i] == ' ') /* padding before the number, as strtol skips it */
        ++*i;
    size_t i0 = *i;
    uint32_t x = 0;
    for (; *i < n && line[*i] >= '0' && line[*i] <= '9'; ++*i)
        x = x >= 100000000u ? 1000000000u : x * 10 + (uint32_t)(line[*i] - '0');
    *v = x;
    return *i > i0;
}

static void rgbe_to_float(float *o, const unsigned char *p)
{
    if (p[3]) {
        const float f = (float)ldexp(1.0f, p[3] - (int)(128 + 8));
        o[0] = p[0] * f;
        o[1] = p[1] * f;
        o[2] = p[2] * f;
    } else {
        o[0] = o[1] = o[2] = 0;
    }
}

int vki_hdr_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out)
        return hdr_fail(e, name, "no data");
    size_t pos = 0, n;
    const char *line;
    if (!get_line(b, len, &pos, &line, &n) || (!line_is(line, n, "#?RADIANCE") && !line_is(line, n, "#?RGBE")))
        return hdr_fail(e, name, "not a Radiance signature (#?RADIANCE or #?RGBE)");
    int format = 0;
    for (;;) {
        if (!get_line(b, len, &pos, &line, &n))
            return hdr_fail(e, name, "truncated in the header");
        if (!n)
            break;
        if (line_is(line, n, "FORMAT=32-bit_rle_rgbe"))
            format = 1;
        else if (n > 7 && !memcmp(line, "FORMAT=", 7))
            return hdr_fail(e, name, "unsupported %.*s", (int)(n < 64 ? n : 64), line);
    }
    if (!format)
        return hdr_fail(e, name, "no FORMAT=32-bit_rle_rgbe line in the header");
    if (!get_line(b, len, &pos, &line, &n))
        return hdr_fail(e, name, "truncated in the resolution line");
    uint32_t w = 0, h = 0;
    size_t i = 3;
    if (n < 3 || memcmp(line, "-Y ", 3) || !get_dim(line, n, &i, &h) || i >= n || line[i] != ' ')
        goto bad_resolution;
    while (i < n && line[i] == ' ')
        i++;
    if (n - i < 3 || memcmp(line + i, "+X ", 3))
        goto bad_resolution;
    i += 3;
    if (!get_dim(line, n, &i, &w))
        goto bad_resolution;
    while (i < n && (line[i] == ' ' || line[i] == '\r'))
        i++;
    if (i != n)
        goto bad_resolution;
    int rc = vki_check_dims(name, w, h, max_pixels, e);
    if (rc)
        return rc;
    /* the smallest possible scanline is 4 bytes of RLE header + 4 * 2 bytes per
     * 128 pixels: refuse data that cannot hold the image before allocating */
    if ((len - pos) / 4 < h || (w >= 8 && w < 32768 ? (len - pos) / (4 + 8 * ((w + 127) / 128)) < h
                                                    : (len - pos) / 4 / w < h))
        return hdr_fail(e, name, "truncated pixel data (%zu bytes for %ux%u pixels)", len - pos, (unsigned)w,
                        (unsigned)h);
    if ((rc = vki_decoded_alloc(out, w, h, 3, VKIMG_F32, name, e)))
        return rc;
    float *o = out->data;
    unsigned char *scan = NULL;
    const char *err = NULL;
    int flat = w < 8 || w >= 32768;
    for (size_t y = 0; y < h && !err; y++) {
        float *row = o + y * (size_t)w * 3;
        if (!flat) {
            if (len - pos < 4) {
                err = "truncated pixel data";
                break;
            }
            const unsigned char *p = b + pos;
            if (p[0] == 2 && p[1] == 2 && !(p[2] & 0x80)) { /* new-style RLE */
                const uint32_t sw = (uint32_t)p[2] << 8 | p[3];
                if (sw != w) {
                    err = "an RLE scanline of the wrong width";
                    break;
                }
                pos += 4;
                if (!scan && !(scan = malloc((size_t)w * 4))) {
                    err = "out of memory";
                    break;
                }
                for (int k = 0; k < 4 && !err; k++) {
                    size_t x = 0;
                    while (x < w) {
                        if (pos >= len) {
                            err = "truncated RLE data";
                            break;
                        }
                        unsigned cnt = b[pos++];
                        if (cnt > 128) { /* a run of cnt - 128 copies of the next byte */
                            cnt -= 128;
                            if (cnt > w - x) {
                                err = "an RLE run past the end of the scanline";
                                break;
                            }
                            if (pos >= len) {
                                err = "truncated RLE data";
                                break;
                            }
                            unsigned char v = b[pos++];
                            for (unsigned j = 0; j < cnt; j++)
                                scan[(x++) * 4 + (size_t)k] = v;
                        } else { /* cnt bytes as they are */
                            if (cnt == 0) {
                                err = "a zero-length RLE dump";
                                break;
                            }
                            if (cnt > w - x) {
                                err = "an RLE dump past the end of the scanline";
                                break;
                            }
                            if (len - pos < cnt) {
                                err = "truncated RLE data";
                                break;
                            }
                            for (unsigned j = 0; j < cnt; j++)
                                scan[(x++) * 4 + (size_t)k] = b[pos++];
                        }
                    }
                }
                if (err)
                    break;
                for (size_t x = 0; x < w; x++)
                    rgbe_to_float(row + 3 * x, scan + 4 * x);
                continue;
            }
            flat = 1; /* not RLE: this and the rest are flat pixels */
        }
        if (len - pos < (size_t)w * 4) {
            err = "truncated pixel data";
            break;
        }
        for (size_t x = 0; x < w; x++, pos += 4)
            rgbe_to_float(row + 3 * x, b + pos);
    }
    free(scan);
    if (err) {
        vkimg_image_free(out);
        return hdr_fail(e, name, "%s", err);
    }
    return 0;

bad_resolution:
    return hdr_fail(e, name, "resolution line '%.*s' is not \"-Y H +X W\" (other orientations are not supported)",
                    (int)(n < 64 ? n : 64), line);
}
