/* PNM (Netpbm) decoder: P1 (ASCII bitmap), P2 (ASCII gray), P3 (ASCII RGB), P4
 * (binary bitmap), P5 (binary gray), P6 (binary RGB) and PAM (P7: WIDTH, HEIGHT,
 * DEPTH 1..4 -- gray, gray + alpha, RGB, RGBA -- and MAXVAL lines up to ENDHDR,
 * then binary samples as P5/P6 have them; TUPLTYPE is not needed to read them and
 * is not checked, so BLACKANDWHITE's 0 is black as its maxval 1 makes it).
 *
 * Results: P1/P4 give 1 channel U8, 0 for black (a 1 bit) and 255 for white; P2/P5
 * give 1 channel and P3/P6 3, U8 when maxval <= 255 and U16 (host order) when it is
 * 256..65535. Samples are scaled from 0..maxval to the full range of the result,
 * round(v * 255 / maxval) or round(v * 65535 / maxval), so 255 and 65535 keep their
 * values: for the common binary files (P5/P6 with maxval 255) this is exactly what
 * stb_image returns. stb_image differs elsewhere: it reads only P5/P6, returns
 * samples unscaled for other maxvals, and returns 16-bit samples byte-swapped on
 * little-endian machines (it does not convert Netpbm's big-endian order).
 *
 * The header is tokens separated by whitespace, with '#' comments to the end of the
 * line; one whitespace byte ends it before binary data. Strict: numbers must be
 * decimal and in range (width, height 1.., maxval 1..65535), a sample over maxval
 * is an error, and the raster must be complete (bytes after it are ignored: a PNM
 * file may hold several images; the first is read); in P2/P3 the last sample must
 * be followed by whitespace, as Netpbm writes it, so that a file cut inside its last
 * number is not taken for a smaller value. */
#include "io/io_priv.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define pnm_fail(e, name, ...) vki_dec_fail(e, name, "PNM", __VA_ARGS__)

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* Skips whitespace (and, in the header, comments). Returns the number of bytes
 * skipped. */
static size_t skip_space(const unsigned char *b, size_t len, size_t *pos, int comments)
{
    size_t p0 = *pos, p = *pos;
    while (p < len) {
        if (is_space(b[p])) {
            p++;
        } else if (comments && b[p] == '#') {
            while (p < len && b[p] != '\n' && b[p] != '\r')
                p++;
        } else {
            break;
        }
    }
    *pos = p;
    return p - p0;
}

/* A decimal number at *pos (at most 9 digits counted, larger values saturate to
 * 1e9). 0 if there is no digit there. */
static int get_number(const unsigned char *b, size_t len, size_t *pos, uint32_t *v)
{
    size_t p = *pos;
    uint32_t n = 0;
    while (p < len && b[p] >= '0' && b[p] <= '9') {
        n = n >= 100000000u ? 1000000000u : n * 10 + (uint32_t)(b[p] - '0');
        p++;
    }
    if (p == *pos)
        return 0;
    *pos = p;
    *v = n;
    return 1;
}

/* A PAM header (P7) from b[2]: its fields into v (width, height, maxval) and *depth;
 * *pos past the ENDHDR line. NULL or a message. */
static const char *pam_header(const unsigned char *b, size_t len, size_t *pos, uint32_t v[3], uint32_t *depth)
{
    static const char *const key[4] = { "WIDTH", "HEIGHT", "MAXVAL", "DEPTH" };
    uint32_t got[4] = { 0, 0, 0, 0 }, val[4] = { 0, 0, 0, 0 };
    size_t p = 2;
    if (p >= len || (b[p] != '\n' && b[p] != '\r'))
        return "no newline after P7";
    for (;;) {
        skip_space(b, len, &p, 1); /* blank lines and comments */
        if (p >= len)
            return "truncated in the header (no ENDHDR)";
        size_t k0 = p;
        while (p < len && !is_space(b[p]))
            p++;
        const size_t kn = p - k0;
        if (kn == 6 && !memcmp(b + k0, "ENDHDR", 6)) {
            while (p < len && (b[p] == ' ' || b[p] == '\t'))
                p++;
            if (p < len && b[p] == '\r')
                p++;
            if (p >= len)
                return "truncated after the header";
            if (b[p] != '\n')
                return "no newline after ENDHDR";
            p++;
            break;
        }
        if (kn == 8 && !memcmp(b + k0, "TUPLTYPE", 8)) { /* the rest of the line */
            while (p < len && b[p] != '\n')
                p++;
            continue;
        }
        int f = -1;
        for (int i = 0; i < 4; i++)
            if (kn == strlen(key[i]) && !memcmp(b + k0, key[i], kn))
                f = i;
        if (f < 0)
            return "unknown field in the header";
        while (p < len && (b[p] == ' ' || b[p] == '\t'))
            p++;
        if (got[f]++ || !get_number(b, len, &p, &val[f]) || (p < len && !is_space(b[p])))
            return f == 0 ? "invalid WIDTH in the header" : f == 1 ? "invalid HEIGHT in the header"
                   : f == 2 ? "invalid MAXVAL in the header" : "invalid DEPTH in the header";
    }
    for (int i = 0; i < 4; i++)
        if (!got[i])
            return i == 0 ? "no WIDTH in the header" : i == 1 ? "no HEIGHT in the header"
                   : i == 2 ? "no MAXVAL in the header" : "no DEPTH in the header";
    if (val[3] < 1 || val[3] > 4)
        return "DEPTH is not 1..4 (gray, gray + alpha, RGB, RGBA)";
    v[0] = val[0], v[1] = val[1], v[2] = val[2];
    *depth = val[3];
    *pos = p;
    return NULL;
}

int vki_pnm_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out || len < 2 || b[0] != 'P' || b[1] < '1' || b[1] > '7')
        return pnm_fail(e, name, "not a PNM signature (P1..P7)");
    const int kind = b[1] - '0', ascii = kind <= 3, bitmap = kind == 1 || kind == 4;
    int c = kind == 3 || kind == 6 ? 3 : 1;

    /* ---- header: width, height[, maxval] */
    static const char *const field[3] = { "width", "height", "maxval" };
    uint32_t v[3] = { 0, 0, 1 };
    size_t pos = 2;
    if (kind == 7) { /* PAM: pos past its ENDHDR line */
        uint32_t depth;
        const char *why = pam_header(b, len, &pos, v, &depth);
        if (why)
            return pnm_fail(e, name, "PAM: %s", why);
        c = (int)depth;
    } else {
        for (int i = 0; i < (bitmap ? 2 : 3); i++) {
            size_t skipped = skip_space(b, len, &pos, 1);
            if (pos >= len)
                return pnm_fail(e, name, "truncated in the header (no %s)", field[i]);
            if (!skipped || !get_number(b, len, &pos, &v[i]))
                return pnm_fail(e, name, "invalid %s in the header", field[i]);
        }
    }
    if (!bitmap && (v[2] < 1 || v[2] > 65535))
        return pnm_fail(e, name, "maxval %u is not in 1..65535", (unsigned)v[2]);
    if (kind != 7) {
        if (pos >= len)
            return pnm_fail(e, name, "truncated after the header");
        if (!is_space(b[pos]))
            return pnm_fail(e, name, "no whitespace after the header");
        pos++; /* the one whitespace byte before the raster */
    }
    const uint32_t w = v[0], h = v[1], maxval = v[2];
    int rc = vki_check_dims(name, w, h, max_pixels, e);
    if (rc)
        return rc;
    const int wide = maxval > 255;
    const vkimg_fmt fmt = wide ? VKIMG_U16 : VKIMG_U8;
    const uint32_t full = wide ? 65535 : 255;
    const size_t ns = (size_t)w * h * (size_t)c;

    /* ---- raster, checked for size before the image is allocated where it can be */
    if (!ascii) {
        const size_t need = kind == 4 ? ((size_t)w + 7) / 8 * h : ns * (wide ? 2 : 1);
        if (len - pos < need)
            return pnm_fail(e, name, "truncated raster (%zu bytes, want %zu)", len - pos, need);
    } else if (len - pos < (kind == 1 ? ns : 2 * ns - 1)) { /* a digit per sample, space between (P2/P3) */
        return pnm_fail(e, name, "truncated raster (%zu bytes for %zu samples)", len - pos, ns);
    }
    if ((rc = vki_decoded_alloc(out, w, h, c, fmt, name, e)))
        return rc;
    unsigned char *o8 = out->data;
    uint16_t *o16 = out->data;
    const unsigned char *s = b + pos;
    const char *err = NULL;
    uint32_t over = 0;

    if (kind == 4) {
        const size_t rb = ((size_t)w + 7) / 8;
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                o8[y * w + x] = (s[y * rb + x / 8] >> (7 - (x & 7))) & 1 ? 0 : 255;
    } else if (kind == 1) {
        for (size_t i = 0; i < ns; i++) {
            skip_space(b, len, &pos, 0);
            if (pos >= len || (b[pos] != '0' && b[pos] != '1')) {
                err = pos >= len ? "truncated raster" : "invalid character in the raster";
                break;
            }
            o8[i] = b[pos++] == '1' ? 0 : 255;
        }
    } else {
        for (size_t i = 0; i < ns; i++) {
            uint32_t x;
            if (ascii) {
                if (!skip_space(b, len, &pos, 0) && i > 0) { /* samples are separated by whitespace */
                    err = pos >= len ? "truncated raster" : "invalid character in the raster";
                    break;
                }
                if (pos >= len) {
                    err = "truncated raster";
                    break;
                }
                if (!get_number(b, len, &pos, &x)) {
                    err = "invalid character in the raster";
                    break;
                }
                if (pos >= len) { /* a number must end at whitespace: "25" may be a cut "255" */
                    err = "truncated raster (the last sample is not followed by whitespace)";
                    break;
                }
            } else {
                x = wide ? vki_rd16be(s + 2 * i) : s[i];
            }
            if (x > maxval) {
                over = x;
                break;
            }
            if (maxval != full) /* round(x * full / maxval) */
                x = (uint32_t)(((uint64_t)x * full + maxval / 2) / maxval);
            if (wide)
                o16[i] = (uint16_t)x;
            else
                o8[i] = (unsigned char)x;
        }
    }
    if (err || over) {
        vkimg_image_free(out);
        return over ? pnm_fail(e, name, "sample %u over maxval %u", (unsigned)over, (unsigned)maxval)
                    : pnm_fail(e, name, "%s", err);
    }
    return 0;
}
