/* Image metadata: ICC profiles, EXIF blocks and XMP packets read from JPEG, PNG, WebP
 * and TIFF and written back into PNG and JPEG files byte for byte; the EXIF (and XMP)
 * orientation. See meta.h for the policy. Every length read from a file is checked
 * against the bytes that are there before it is used; nothing is allocated beyond what
 * the file backs, except the inflated iCCP profile and compressed XMP iTXt (PNG does
 * not store their sizes), capped at VKI_ICC_MAX and VKI_XMP_MAX. */
#include "io/io_priv.h"
#include "io/meta.h"
#include "core/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

static const unsigned char png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
static const char exif_id[6] = { 'E', 'x', 'i', 'f', 0, 0 };
static const char icc_id[12] = { 'I', 'C', 'C', '_', 'P', 'R', 'O', 'F', 'I', 'L', 'E', 0 };
static const char xmp_id[] = "http://ns.adobe.com/xap/1.0/"; /* and its NUL: 29 bytes */
#define XMP_ID_LEN sizeof xmp_id
static const char xmp_key[] = "XML:com.adobe.xmp"; /* the PNG iTXt keyword, and its NUL: 18 bytes */
#define XMP_KEY_LEN sizeof xmp_key
static const char ps_id[14] = "Photoshop 3.0"; /* and its NUL */
#define PNG_CHUNK_MAX 0x7fffffffu /* PNG: chunk lengths are at most 2^31 - 1 */
#define ICC_DEFAULT_NAME "ICC Profile"

static void put32be(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static void put16be(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

int vki_icc_fits(const unsigned char *icc, size_t len, int c)
{
    if (!icc || len < 128 || memcmp(icc + 36, "acsp", 4) != 0)
        return 1;
    return memcmp(icc + 16, c <= 2 ? "GRAY" : "RGB ", 4) == 0;
}

void vki_meta_free(vki_meta *m)
{
    if (!m)
        return;
    free(m->icc);
    free(m->exif);
    free(m->xmp);
    free(m->iptc);
    memset(m, 0, sizeof *m);
    m->orientation = 1;
}

static void meta_init(vki_meta *m)
{
    memset(m, 0, sizeof *m);
    m->orientation = 1;
}

static unsigned char *dup_bytes(const unsigned char *p, size_t n)
{
    unsigned char *d = malloc(n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

/* ------------------------------------------------------------------ EXIF (TIFF) */

/* The offset in t of the value field of IFD0's orientation entry (tag 0x0112, SHORT,
 * count 1), or 0 when there is none or it is malformed. *le receives the byte order. */
static size_t orientation_at(const unsigned char *t, size_t n, int *le)
{
    int o = vki_exif_byte_order(t, n);
    if (o < 0)
        return 0;
    *le = o;
    uint32_t ifd = vki_rd32(t + 4, o);
    if (ifd < 8 || ifd > n || n - ifd < 2)
        return 0;
    size_t count = vki_rd16(t + ifd, o), fit = (n - ifd - 2) / 12;
    if (count > fit)
        count = fit; /* a count larger than the block: the entries that are there */
    for (size_t i = 0; i < count; i++) {
        const unsigned char *en = t + ifd + 2 + 12 * i;
        if (vki_rd16(en, o) != 0x0112)
            continue;
        if (vki_rd16(en + 2, o) != 3 || vki_rd32(en + 4, o) != 1)
            return 0; /* not SHORT x 1: invalid */
        return (size_t)(en + 8 - t);
    }
    return 0;
}

int vki_exif_orientation(const unsigned char *exif, size_t len)
{
    int le = 1;
    size_t at = orientation_at(exif, len, &le);
    if (!at)
        return 1;
    unsigned v = vki_rd16(exif + at, le);
    return v >= 1 && v <= 8 ? (int)v : 1;
}

int vki_exif_set_orientation(unsigned char *exif, size_t len, int value)
{
    if (value < 1 || value > 8)
        return -1;
    int le = 1;
    size_t at = orientation_at(exif, len, &le);
    if (!at)
        return 0;
    if (le) {
        exif[at] = (unsigned char)value;
        exif[at + 1] = 0;
    } else {
        exif[at] = 0;
        exif[at + 1] = (unsigned char)value;
    }
    return 1;
}

/* ------------------------------------------------------------------ XMP */

static const char xmp_orient[] = "tiff:Orientation";
#define XMP_ORIENT_LEN (sizeof xmp_orient - 1)

static int xml_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The offset of the digit of a tiff:Orientation value 1..8 whose name begins at x[i]:
 * an attribute (a blank before the name, then = and the digit in quotes) or an element
 * (< before the name, then > and the digit before the next <); 0 when it is neither. */
static size_t xmp_digit_at(const unsigned char *x, size_t n, size_t i)
{
    size_t p = i + XMP_ORIENT_LEN, d;
    if (i == 0)
        return 0;
    if (x[i - 1] == '<') { /* <tiff:Orientation>N</tiff:Orientation> */
        if (p >= n || x[p] != '>')
            return 0;
        for (p++; p < n && xml_blank(x[p]); p++)
            ;
        d = p;
        for (p++; p < n && xml_blank(x[p]); p++)
            ;
        return p < n && x[d] >= '1' && x[d] <= '8' && x[p] == '<' ? d : 0;
    }
    if (!xml_blank(x[i - 1])) /* tiff:Orientation="N" */
        return 0;
    for (; p < n && xml_blank(x[p]); p++)
        ;
    if (p >= n || x[p] != '=')
        return 0;
    for (p++; p < n && xml_blank(x[p]); p++)
        ;
    if (n - p < 3 || (x[p] != '"' && x[p] != '\''))
        return 0;
    d = p + 1;
    return x[d] >= '1' && x[d] <= '8' && x[d + 1] == x[p] ? d : 0;
}

/* The digit of the first tiff:Orientation value at or after *from (0: none); *from
 * moves past it. */
static size_t xmp_next_orientation(const unsigned char *x, size_t n, size_t *from)
{
    for (size_t i = *from; n >= XMP_ORIENT_LEN && i <= n - XMP_ORIENT_LEN; i++) {
        if (x[i] != 't' || memcmp(x + i, xmp_orient, XMP_ORIENT_LEN) != 0)
            continue;
        size_t d = xmp_digit_at(x, n, i);
        if (d) {
            *from = d + 1;
            return d;
        }
    }
    *from = n;
    return 0;
}

int vki_xmp_orientation(const unsigned char *xmp, size_t len)
{
    size_t from = 0, d = xmp ? xmp_next_orientation(xmp, len, &from) : 0;
    return d ? xmp[d] - '0' : 0;
}

int vki_xmp_set_orientation(unsigned char *xmp, size_t len, int value)
{
    if (value < 1 || value > 8)
        return -1;
    int count = 0;
    size_t from = 0, d;
    while (xmp && (d = xmp_next_orientation(xmp, len, &from)) != 0) {
        xmp[d] = (unsigned char)('0' + value);
        count++;
    }
    return count;
}

/* ------------------------------------------------------------------ JPEG */

/* One marker segment in a JPEG's header. */
typedef struct jseg {
    size_t begin;  /* the first 0xFF (fill bytes included) */
    size_t pay;    /* payload: after the marker and its 2-byte length */
    size_t paylen; /* payload bytes; for a segment running past the end: the bytes there */
    size_t end;    /* the byte after the segment */
    int marker;
} jseg;

enum { JSEG_OK = 1, JSEG_END = 0, JSEG_BAD = -1, JSEG_PAST = -2 };

/* The segment at *pos: JSEG_OK (and *pos moves past it), JSEG_END at SOS or EOI (*pos
 * stays on it), JSEG_BAD when no marker is there, JSEG_PAST for a segment whose length
 * runs past the end of the data (s filled with what is there). */
static int jpeg_next(const unsigned char *b, size_t len, size_t *pos, jseg *s)
{
    size_t p = *pos;
    s->begin = p;
    if (p >= len || b[p] != 0xff)
        return p >= len ? JSEG_END : JSEG_BAD;
    while (p < len && b[p] == 0xff) /* fill bytes */
        p++;
    if (p >= len)
        return JSEG_END;
    int mk = b[p++];
    s->marker = mk;
    if (mk == 0xd9 || mk == 0xda) { /* EOI, SOS */
        *pos = s->begin;
        return JSEG_END;
    }
    if (mk == 0x00 || mk == 0xd8)
        return JSEG_BAD;
    if (mk == 0x01 || (mk >= 0xd0 && mk <= 0xd7)) { /* TEM, RSTn: no length */
        s->pay = s->end = p;
        s->paylen = 0;
        *pos = p;
        return JSEG_OK;
    }
    if (len - p < 2) {
        s->pay = s->end = len;
        s->paylen = 0;
        return JSEG_PAST;
    }
    size_t l = (size_t)b[p] << 8 | b[p + 1];
    if (l < 2)
        return JSEG_BAD;
    s->pay = p + 2;
    if (l - 2 > len - s->pay) {
        s->paylen = len - s->pay;
        s->end = len;
        return JSEG_PAST;
    }
    s->paylen = l - 2;
    s->end = s->pay + s->paylen;
    *pos = s->end;
    return JSEG_OK;
}

/* Past junk between marker segments at pos, as libjpeg's next_marker skips it
 * ("N extraneous bytes before marker"; lj.h lets it pass before the first
 * scan): to the first 0xFF of the next run of them whose marker byte is not 0
 * (a 0xFF 0x00 pair is junk too), or to len. pos itself where a marker is
 * there (no junk). */
static size_t skip_junk(const unsigned char *b, size_t len, size_t pos)
{
    while (pos < len) {
        while (pos < len && b[pos] != 0xff)
            pos++;
        size_t ff = pos;
        while (pos < len && b[pos] == 0xff)
            pos++;
        if (pos >= len || b[pos] != 0x00)
            return pos >= len ? len : ff;
        pos++;
    }
    return len;
}

/* Whether n bytes at p could begin with id (compares what is there of it). */
static int starts_like(const unsigned char *p, size_t n, const char *id, size_t idlen)
{
    return memcmp(p, id, n < idlen ? n : idlen) == 0;
}

static int is_exif_app1(const unsigned char *b, const jseg *s)
{
    return s->marker == 0xe1 && s->paylen >= 6 && memcmp(b + s->pay, exif_id, 6) == 0;
}

/* The standard XMP packet's APP1 (not XMP's extended segments) */
static int is_xmp_app1(const unsigned char *b, const jseg *s)
{
    return s->marker == 0xe1 && s->paylen >= XMP_ID_LEN && memcmp(b + s->pay, xmp_id, XMP_ID_LEN) == 0;
}

static int is_ps_app13(const unsigned char *b, const jseg *s)
{
    return s->marker == 0xed && s->paylen >= sizeof ps_id && memcmp(b + s->pay, ps_id, sizeof ps_id) == 0;
}

static int is_icc_app2(const unsigned char *b, const jseg *s)
{
    return s->marker == 0xe2 && s->paylen >= 14 && memcmp(b + s->pay, icc_id, 12) == 0;
}

int vki_meta_read_jpeg(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e)
{
    if (!m)
        return vki_fail(e, VKIMG_E_USAGE, "jpeg metadata: NULL output");
    meta_init(m);
    if (!b || len < 2 || b[0] != 0xff || b[1] != 0xd8)
        return vki_fail(e, VKIMG_E_RUNTIME, "JPEG metadata: not a JPEG");

    struct { size_t off, n; } seg[256];
    unsigned char have[256] = { 0 };
    int count = 0, nseen = 0, icc_bad = 0;
    size_t pos = 2;
    jseg s;
    for (;;) {
        int r = jpeg_next(b, len, &pos, &s);
        size_t past;
        if (r == JSEG_BAD && (past = skip_junk(b, len, pos)) != pos) {
            pos = past; /* bytes libjpeg skips (not a marker), rather than a marker where
                           none may be (SOI, a length under 2) */
            continue;
        }
        if (r == JSEG_END || r == JSEG_BAD)
            break;
        if (r == JSEG_PAST) {
            /* cut off: an error only where it is metadata we would read */
            const unsigned char *p = b + s.pay;
            if ((s.marker == 0xe1 && !m->exif && starts_like(p, s.paylen, exif_id, 6)) ||
                (s.marker == 0xe1 && !m->xmp && starts_like(p, s.paylen, xmp_id, XMP_ID_LEN)) ||
                (s.marker == 0xed && starts_like(p, s.paylen, ps_id, sizeof ps_id)) ||
                (s.marker == 0xe2 && starts_like(p, s.paylen, icc_id, 12))) {
                vki_meta_free(m);
                return vki_fail(e, VKIMG_E_RUNTIME, "JPEG metadata: APP%d segment runs past the end of the data",
                                s.marker - 0xe0);
            }
            break;
        }
        if (is_exif_app1(b, &s) && !m->exif) {
            const unsigned char *t = b + s.pay + 6;
            size_t n = s.paylen - 6;
            if (vki_exif_byte_order(t, n) >= 0) {
                if (!(m->exif = dup_bytes(t, n))) {
                    vki_meta_free(m);
                    return vki_fail(e, VKIMG_E_RUNTIME, "JPEG metadata: out of memory (%zu bytes)", n);
                }
                m->exif_len = n;
            }
        } else if (is_xmp_app1(b, &s) && !m->xmp && s.paylen > XMP_ID_LEN) {
            const size_t n = s.paylen - XMP_ID_LEN;
            if (!(m->xmp = dup_bytes(b + s.pay + XMP_ID_LEN, n))) {
                vki_meta_free(m);
                return vki_fail(e, VKIMG_E_RUNTIME, "JPEG metadata: out of memory (%zu bytes)", n);
            }
            m->xmp_len = n;
        } else if (is_ps_app13(b, &s) && s.paylen > sizeof ps_id) { /* joined: large resources span segments */
            const size_t n = s.paylen - sizeof ps_id;
            unsigned char *j = realloc(m->iptc, m->iptc_len + n); /* (<= len: they are in the data) */
            if (!j) {
                vki_meta_free(m);
                return vki_fail(e, VKIMG_E_RUNTIME, "JPEG metadata: out of memory (%zu bytes)", m->iptc_len + n);
            }
            memcpy(j + m->iptc_len, b + s.pay + sizeof ps_id, n);
            m->iptc = j;
            m->iptc_len += n;
        } else if (is_icc_app2(b, &s) && !icc_bad) {
            int seq = b[s.pay + 12], cnt = b[s.pay + 13];
            if (cnt == 0 || seq == 0 || seq > cnt || (count && cnt != count) || have[seq]) {
                icc_bad = 1; /* inconsistent: no profile, the image is still fine */
            } else {
                count = cnt;
                have[seq] = 1;
                seg[seq].off = s.pay + 14;
                seg[seq].n = s.paylen - 14;
                nseen++;
            }
        }
    }

    if (!icc_bad && count && nseen == count) {
        size_t total = 0;
        for (int i = 1; i <= count; i++)
            total += seg[i].n; /* <= len: the segments are in the data */
        if (total) {
            if (!(m->icc = malloc(total))) {
                vki_meta_free(m);
                return vki_fail(e, VKIMG_E_RUNTIME, "JPEG metadata: out of memory (%zu bytes)", total);
            }
            size_t at = 0;
            for (int i = 1; i <= count; i++) {
                memcpy(m->icc + at, b + seg[i].off, seg[i].n);
                at += seg[i].n;
            }
            m->icc_len = total;
        }
    }
    if (m->iptc && !vki_irb_whole(m->iptc, m->iptc_len)) { /* not Photoshop's resources, or a segment missing */
        free(m->iptc);
        m->iptc = NULL;
        m->iptc_len = 0;
    }
    m->orientation = m->exif ? vki_exif_orientation(m->exif, m->exif_len) : 1;
    return 0;
}

/* A marker segment at o: the marker, its length, the idn bytes of id, the n bytes of d;
 * returns its size. */
static size_t put_segment(unsigned char *o, int marker, const void *id, size_t idn, const unsigned char *d, size_t n)
{
    o[0] = 0xff;
    o[1] = (unsigned char)marker;
    put16be(o + 2, (unsigned)(2 + idn + n));
    memcpy(o + 4, id, idn);
    memcpy(o + 4 + idn, d, n);
    return 4 + idn + n;
}

int vki_jpeg_add_meta(const unsigned char *jpg, size_t len, const vki_meta *m, unsigned char **out, size_t *outlen,
                      unsigned *dropped, vkimg_err *e)
{
    if (!out || !outlen || !m)
        return vki_fail(e, VKIMG_E_USAGE, "jpeg metadata: NULL argument");
    *out = NULL;
    *outlen = 0;
    if (dropped)
        *dropped = 0;
    if (!jpg || len < 2 || jpg[0] != 0xff || jpg[1] != 0xd8)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg metadata: the input is not a JPEG");

    size_t exif_len = m->exif ? m->exif_len : 0, icc_len = m->icc ? m->icc_len : 0, xmp_len = m->xmp ? m->xmp_len : 0;
    const size_t ps_len = m->iptc ? m->iptc_len : 0, nps = (ps_len + VKI_JPEG_IPTC_CHUNK - 1) / VKI_JPEG_IPTC_CHUNK;
    if (exif_len > VKI_JPEG_EXIF_MAX) {
        exif_len = 0;
        if (dropped)
            *dropped |= VKI_META_DROPPED_EXIF;
    }
    if (xmp_len > VKI_JPEG_XMP_MAX) {
        xmp_len = 0;
        if (dropped)
            *dropped |= VKI_META_DROPPED_XMP;
    }
    if (icc_len > VKI_JPEG_ICC_MAX) {
        icc_len = 0;
        if (dropped)
            *dropped |= VKI_META_DROPPED_ICC;
    }
    const size_t nicc = (icc_len + VKI_JPEG_ICC_CHUNK - 1) / VKI_JPEG_ICC_CHUNK; /* <= 255 */
    if (ps_len > SIZE_MAX / 2)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg metadata: file too large");
    const size_t add = (exif_len ? 4 + 6 + exif_len : 0) + (xmp_len ? 4 + XMP_ID_LEN + xmp_len : 0) +
                       nicc * (4 + 14) + icc_len + nps * (4 + sizeof ps_id) + ps_len;
    if (len > SIZE_MAX - add)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg metadata: file too large");
    unsigned char *o = malloc(len + add);
    if (!o)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg metadata: out of memory (%zu bytes)", len + add);

    size_t op = 0, pos = 2;
    o[op++] = 0xff;
    o[op++] = 0xd8;
    int inserted = 0;
    jseg s;
    for (;;) {
        size_t at = pos;
        int r = jpeg_next(jpg, len, &pos, &s);
        if (r == JSEG_BAD || r == JSEG_PAST) {
            free(o);
            return vki_fail(e, VKIMG_E_RUNTIME, "jpeg metadata: malformed input JPEG (%s at byte %zu)",
                            r == JSEG_PAST ? "a segment runs past the end" : "no marker", at);
        }
        /* JFIF APP0 (and its JFXX extensions) stay in front of the inserted segments */
        int jfif = r == JSEG_OK && s.marker == 0xe0 && s.paylen >= 5 &&
                   (memcmp(jpg + s.pay, "JFIF", 5) == 0 || memcmp(jpg + s.pay, "JFXX", 5) == 0);
        if (!inserted && !jfif) {
            if (exif_len)
                op += put_segment(o + op, 0xe1, exif_id, 6, m->exif, exif_len);
            if (xmp_len)
                op += put_segment(o + op, 0xe1, xmp_id, XMP_ID_LEN, m->xmp, xmp_len);
            for (size_t i = 0; i < nicc; i++) {
                size_t off = i * VKI_JPEG_ICC_CHUNK, n = icc_len - off < VKI_JPEG_ICC_CHUNK ? icc_len - off : VKI_JPEG_ICC_CHUNK;
                unsigned char id[14];
                memcpy(id, icc_id, 12);
                id[12] = (unsigned char)(i + 1); /* sequence number, count */
                id[13] = (unsigned char)nicc;
                op += put_segment(o + op, 0xe2, id, 14, m->icc + off, n);
            }
            for (size_t off = 0; off < ps_len; off += VKI_JPEG_IPTC_CHUNK)
                op += put_segment(o + op, 0xed, ps_id, sizeof ps_id, m->iptc + off,
                                  ps_len - off < VKI_JPEG_IPTC_CHUNK ? ps_len - off : VKI_JPEG_IPTC_CHUNK);
            inserted = 1;
        }
        if (r == JSEG_END) {
            memcpy(o + op, jpg + at, len - at); /* SOS (or EOI) and all that follows */
            op += len - at;
            break;
        }
        if ((exif_len && is_exif_app1(jpg, &s)) || (xmp_len && is_xmp_app1(jpg, &s)) ||
            (icc_len && is_icc_app2(jpg, &s)) || (ps_len && is_ps_app13(jpg, &s)))
            continue; /* replaced */
        memcpy(o + op, jpg + s.begin, s.end - s.begin);
        op += s.end - s.begin;
    }
    *out = o;
    *outlen = op;
    return 0;
}

/* ------------------------------------------------------------------ PNG */

/* A PNG keyword: 1..79 bytes of printable Latin-1 (32..126, 161..255), no leading,
 * trailing or consecutive spaces. */
static int png_keyword_ok(const unsigned char *k, size_t n)
{
    if (n < 1 || n > 79 || k[0] == ' ' || k[n - 1] == ' ')
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!((k[i] >= 32 && k[i] <= 126) || k[i] >= 161))
            return 0;
        if (k[i] == ' ' && k[i + 1] == ' ')
            return 0;
    }
    return 1;
}

/* Inflates the zlib stream of a PNG chunk (what: its name): 0 with *out (NULL for an
 * empty or broken stream: ignored), or VKIMG_E_RUNTIME (over max bytes, out of memory). */
static int inflate_capped(const unsigned char *z, size_t zn, size_t max, const char *what, unsigned char **out,
                          size_t *outn, vkimg_err *e)
{
    *out = NULL;
    *outn = 0;
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (!d)
        return vki_fail(e, VKIMG_E_RUNTIME, "PNG metadata: out of memory");
    size_t cap = zn < max / 4 ? zn * 4 : max;
    if (cap < 4096)
        cap = 4096;
    unsigned char *buf = NULL;
    int rc = 0;
    for (;;) {
        unsigned char *nb = realloc(buf, cap);
        if (!nb) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "PNG metadata: out of memory (%zu bytes)", cap);
            break;
        }
        buf = nb;
        size_t got = 0;
        enum libdeflate_result r = libdeflate_zlib_decompress(d, z, zn, buf, cap, &got);
        if (r == LIBDEFLATE_SUCCESS) {
            if (got) {
                *out = buf;
                *outn = got;
                buf = NULL;
            }
            break;
        }
        if (r != LIBDEFLATE_INSUFFICIENT_SPACE)
            break; /* bad data: no profile */
        if (cap >= max) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "PNG metadata: the %s inflates to more than %zu MiB", what, max >> 20);
            break;
        }
        cap = cap > max / 2 ? max : cap * 2;
    }
    free(buf);
    libdeflate_free_decompressor(d);
    return rc;
}

int vki_meta_read_png(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e)
{
    if (!m)
        return vki_fail(e, VKIMG_E_USAGE, "png metadata: NULL output");
    meta_init(m);
    if (!b || len < 8 || memcmp(b, png_sig, 8) != 0)
        return vki_fail(e, VKIMG_E_RUNTIME, "PNG metadata: not a PNG");
    size_t pos = 8;
    int seen_idat = 0, seen_iccp = 0;
    while (len - pos >= 8) {
        uint32_t n = vki_rd32be(b + pos);
        const unsigned char *type = b + pos + 4;
        const int is_iccp = memcmp(type, "iCCP", 4) == 0 && !seen_idat && !seen_iccp;
        const int is_exif = memcmp(type, "eXIf", 4) == 0 && !m->exif;
        const int is_itxt = memcmp(type, "iTXt", 4) == 0 && !m->xmp;
        if (n > PNG_CHUNK_MAX || n > len - pos - 8 || len - pos - 8 - n < 4) {
            const size_t there = n < len - pos - 8 ? n : len - pos - 8;
            if (is_iccp || is_exif || (is_itxt && starts_like(b + pos + 8, there, xmp_key, XMP_KEY_LEN))) {
                vki_meta_free(m);
                return vki_fail(e, VKIMG_E_RUNTIME, "PNG metadata: the %.4s chunk runs past the end of the data",
                                (const char *)type);
            }
            break;
        }
        const unsigned char *d = b + pos + 8;
        const int is_xmp = is_itxt && n >= XMP_KEY_LEN && memcmp(d, xmp_key, XMP_KEY_LEN) == 0;
        const int crc_ok =
            (is_iccp || is_exif || is_xmp) && libdeflate_crc32(0, type, 4 + (size_t)n) == vki_rd32be(d + n);
        pos += 12 + (size_t)n;
        if (memcmp(type, "IEND", 4) == 0)
            break;
        if (memcmp(type, "IDAT", 4) == 0)
            seen_idat = 1;
        if (is_iccp) {
            seen_iccp = 1; /* only one iCCP: a later one is not looked at */
            size_t k = 0;
            while (k < n && k < 80 && d[k])
                k++;
            if (!crc_ok || k == 0 || k >= n || k > 79 || n - k < 2 || d[k + 1] != 0)
                continue; /* name not 1..79 bytes, no method byte, method not deflate: ignored */
            unsigned char *icc;
            size_t icc_n;
            if (inflate_capped(d + k + 2, n - k - 2, VKI_ICC_MAX, "iCCP profile", &icc, &icc_n, e)) {
                vki_meta_free(m);
                return VKIMG_E_RUNTIME;
            }
            if (icc) {
                m->icc = icc;
                m->icc_len = icc_n;
                if (png_keyword_ok(d, k)) {
                    memcpy(m->icc_name, d, k);
                    m->icc_name[k] = 0;
                }
            }
        } else if (is_exif && crc_ok && vki_exif_byte_order(d, n) >= 0) {
            if (!(m->exif = dup_bytes(d, n))) {
                vki_meta_free(m);
                return vki_fail(e, VKIMG_E_RUNTIME, "PNG metadata: out of memory (%u bytes)", (unsigned)n);
            }
            m->exif_len = n;
        } else if (is_xmp && crc_ok && n >= XMP_KEY_LEN + 4) {
            /* keyword, compression flag and method, language tag, translated keyword, text */
            const unsigned char *end = d + n, *lang = d + XMP_KEY_LEN + 2;
            const unsigned char *z1 = memchr(lang, 0, (size_t)(end - lang));
            const unsigned char *z2 = z1 ? memchr(z1 + 1, 0, (size_t)(end - z1 - 1)) : NULL;
            const int flag = d[XMP_KEY_LEN], method = d[XMP_KEY_LEN + 1];
            if (!z2 || !(flag == 0 || (flag == 1 && method == 0)))
                continue; /* malformed, or compressed some other way: ignored */
            const unsigned char *text = z2 + 1;
            const size_t tn = (size_t)(end - text);
            if (flag == 1) {
                if (inflate_capped(text, tn, VKI_XMP_MAX, "XMP iTXt", &m->xmp, &m->xmp_len, e)) {
                    vki_meta_free(m);
                    return VKIMG_E_RUNTIME;
                }
            } else if (tn) {
                if (!(m->xmp = dup_bytes(text, tn))) {
                    vki_meta_free(m);
                    return vki_fail(e, VKIMG_E_RUNTIME, "PNG metadata: out of memory (%zu bytes)", tn);
                }
                m->xmp_len = tn;
            }
        }
    }
    m->orientation = m->exif ? vki_exif_orientation(m->exif, m->exif_len) : 1;
    return 0;
}

/* ------------------------------------------------------------------ WebP */

int vki_meta_read_webp(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e)
{
    if (!m)
        return vki_fail(e, VKIMG_E_USAGE, "webp metadata: NULL output");
    meta_init(m);
    if (!b || len < 12 || memcmp(b, "RIFF", 4) || memcmp(b + 8, "WEBP", 4))
        return vki_fail(e, VKIMG_E_RUNTIME, "WebP metadata: not a WebP file");
    /* the chunks inside the RIFF size (or the buffer, where it says more) */
    size_t end = (size_t)vki_rd32le(b + 4) + 8 < len ? (size_t)vki_rd32le(b + 4) + 8 : len, pos = 12;
    while (end >= pos && end - pos >= 8) { /* a RIFF size under 4 ends before the first chunk */
        const unsigned char *type = b + pos;
        const size_t n = vki_rd32le(b + pos + 4);
        const bool icc = !memcmp(type, "ICCP", 4) && !m->icc, exif = !memcmp(type, "EXIF", 4) && !m->exif,
                   xmp = !memcmp(type, "XMP ", 4) && !m->xmp;
        if (n > end - pos - 8) {
            if (icc || exif || xmp) {
                vki_meta_free(m);
                return vki_fail(e, VKIMG_E_RUNTIME, "WebP metadata: the %.4s chunk runs past the end of the data",
                                (const char *)type);
            }
            break;
        }
        const unsigned char *d = b + pos + 8;
        pos += 8 + n + (n & 1); /* chunks are padded to an even size */
        /* some writers put "Exif\0\0" before the TIFF block, as in a JPEG's APP1 */
        const size_t skip = exif && n >= 6 && !memcmp(d, "Exif\0\0", 6) ? 6 : 0;
        if (icc && n) {
            if (!(m->icc = dup_bytes(d, n)))
                goto oom;
            m->icc_len = n;
        } else if (exif && vki_exif_byte_order(d + skip, n - skip) >= 0) {
            if (!(m->exif = dup_bytes(d + skip, n - skip)))
                goto oom;
            m->exif_len = n - skip;
        } else if (xmp && n) {
            if (!(m->xmp = dup_bytes(d, n)))
                goto oom;
            m->xmp_len = n;
        }
        if (pos > end)
            break;
    }
    m->orientation = m->exif ? vki_exif_orientation(m->exif, m->exif_len) : 1;
    return 0;
oom:
    vki_meta_free(m);
    return vki_fail(e, VKIMG_E_RUNTIME, "WebP metadata: out of memory");
}

/* ------------------------------------------------------------------ TIFF */

/* ------------------------------------------------------------------ TIFF's EXIF */

/* The EXIF block of a classic TIFF (in *out, malloc'd; its length in *outlen): the
 * file's EXIF tree (exif.c) in the file's byte order, with the orientation entry
 * orient (0: none); NULL where there is no Exif or GPS IFD, the block would pass
 * VKI_JPEG_EXIF_MAX even without the MakerNote (37500), or memory runs out. */
static void tiff_exif(const unsigned char *b, size_t len, int orient, unsigned char **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    vki_xtree *t = malloc(sizeof *t);
    if (!t || vki_exif_tree_read(b, len, t) || (!t->n[VKI_XI_EXIF] && !t->n[VKI_XI_GPS])) {
        free(t);
        return;
    }
    if (orient)
        vki_exif_tree_set_short(t, VKI_TIFF_TAG_ORIENTATION, (unsigned)orient);
    const unsigned all = (1u << VKI_XI_N) - 1;
    size_t total = 8 + vki_exif_size(t, all);
    if (total > VKI_JPEG_EXIF_MAX) {
        vki_exif_tree_drop(t, VKI_XI_EXIF, 37500);
        total = 8 + vki_exif_size(t, all);
    }
    unsigned char *x = total <= VKI_JPEG_EXIF_MAX ? calloc(1, total) : NULL;
    if (x) {
        uint32_t ifd_off[VKI_XI_N];
        memcpy(x, t->le ? "II*\0\10\0\0\0" : "MM\0*\0\0\0\10", 8); /* IFD0 at 8 */
        vki_exif_write(t, all, x + 8, 8, t->le, ifd_off);
        *out = x;
        *outlen = total;
    }
    free(t);
}

/* A BYTE or UNDEFINED tag of IFD0 whose bytes are in the file, copied into *out (NULL
 * where there is none); -1 when memory runs out. */
static int tiff_blob(const unsigned char *b, size_t len, unsigned tag, unsigned char **out, size_t *n)
{
    vki_tiff_field f;
    if (vki_tiff_field_find(b, len, tag, &f) <= 0 || (f.type != 1 && f.type != 7) || f.count == 0)
        return 0;
    if (!(*out = dup_bytes(b + f.off, (size_t)f.count)))
        return -1;
    *n = (size_t)f.count;
    return 0;
}

int vki_meta_read_tiff(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e)
{
    if (!m)
        return vki_fail(e, VKIMG_E_USAGE, "tiff metadata: NULL output");
    meta_init(m);
    vki_tiff_field f;
    if (!b || len < 8 || !vki_tiff_signature(b, len))
        return vki_fail(e, VKIMG_E_RUNTIME, "TIFF metadata: not a TIFF file");
    const int icc = vki_tiff_field_find(b, len, VKI_TIFF_TAG_ICC, &f); /* UNDEFINED or BYTE */
    if (icc < 0)
        return vki_fail(e, VKIMG_E_RUNTIME,
                        "TIFF metadata: the first IFD or the ICC profile runs past the end of the data");
    if (icc > 0 && (f.type == 7 || f.type == 1) && f.count > 0) {
        if (!(m->icc = dup_bytes(b + f.off, (size_t)f.count))) {
            vki_meta_free(m);
            return vki_fail(e, VKIMG_E_RUNTIME, "TIFF metadata: out of memory");
        }
        m->icc_len = (size_t)f.count;
    }
    int orient = 0; /* the orientation entry of the EXIF block (0: none) */
    if (vki_tiff_field_find(b, len, VKI_TIFF_TAG_ORIENTATION, &f) > 0 && f.type == 3 && f.count == 1) { /* SHORT */
        const unsigned v = vki_rd16(b + f.off, f.le);
        m->orientation = v >= 1 && v <= 8 ? (int)v : 1;
        orient = m->orientation;
    }
    tiff_exif(b, len, orient, &m->exif, &m->exif_len);
    /* the XMP packet and the Photoshop resources (BYTE or UNDEFINED), where their bytes are in the file */
    if (tiff_blob(b, len, VKI_TIFF_TAG_XMP, &m->xmp, &m->xmp_len) ||
        tiff_blob(b, len, VKI_TIFF_TAG_PHOTOSHOP, &m->iptc, &m->iptc_len))
        goto oom;
    /* without Photoshop's resources, the IPTC record of tag 33723 (LONG, BYTE or UNDEFINED: its
     * bytes as the file has them) as their one resource */
    if (!m->iptc && vki_tiff_field_find(b, len, VKI_TIFF_TAG_IPTC, &f) > 0 &&
        (f.type == 4 || f.type == 1 || f.type == 7) && f.count > 0 && f.count <= UINT32_MAX / 4) {
        const size_t n = (size_t)f.count * vki_tiff_type_size(f.type);
        if (!(m->iptc = malloc(12 + n + 1)))
            goto oom;
        memcpy(m->iptc, "8BIM\4\4\0\0", 8); /* IPTC-NAA, no name */
        put32be(m->iptc + 8, (uint32_t)n);
        memcpy(m->iptc + 12, b + f.off, n);
        m->iptc[12 + n] = 0;
        m->iptc_len = 12 + n + (n & 1);
    }
    return 0;
oom:
    vki_meta_free(m);
    return vki_fail(e, VKIMG_E_RUNTIME, "TIFF metadata: out of memory");
}

int vki_meta_read(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e)
{
    if (!m)
        return vki_fail(e, VKIMG_E_USAGE, "metadata: NULL output");
    if (b && len >= 8 && memcmp(b, png_sig, 8) == 0)
        return vki_meta_read_png(b, len, m, e);
    if (b && len >= 2 && b[0] == 0xff && b[1] == 0xd8)
        return vki_meta_read_jpeg(b, len, m, e);
    if (b && len >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0)
        return vki_meta_read_webp(b, len, m, e);
    if (b && len >= 8 && vki_tiff_signature(b, len))
        return vki_meta_read_tiff(b, len, m, e);
    meta_init(m);
    return 0;
}

/* Fills in the length, type and CRC of a chunk whose data is already at p + 8;
 * returns the chunk's total size. */
static size_t finish_chunk(unsigned char *p, const char type[4], size_t n)
{
    put32be(p, (uint32_t)n);
    memcpy(p + 4, type, 4);
    put32be(p + 8 + n, libdeflate_crc32(0, p + 4, 4 + n));
    return 12 + n;
}

int vki_png_add_meta(const unsigned char *png, size_t len, const vki_meta *m, unsigned char **out, size_t *outlen,
                     unsigned *dropped, vkimg_err *e)
{
    if (!out || !outlen || !m)
        return vki_fail(e, VKIMG_E_USAGE, "png metadata: NULL argument");
    *out = NULL;
    *outlen = 0;
    if (dropped)
        *dropped = 0;
    if (!png || len < 8 + 25 || memcmp(png, png_sig, 8) != 0 || vki_rd32be(png + 8) != 13 ||
        memcmp(png + 12, "IHDR", 4) != 0)
        return vki_fail(e, VKIMG_E_RUNTIME, "png metadata: the input is not a PNG");

    size_t exif_len = m->exif ? m->exif_len : 0, icc_len = m->icc ? m->icc_len : 0;
    if (exif_len && vki_exif_byte_order(m->exif, exif_len) < 0)
        return vki_fail(e, VKIMG_E_USAGE, "png metadata: the EXIF block does not begin with a TIFF header");
    const char *name = m->icc_name[0] ? m->icc_name : ICC_DEFAULT_NAME;
    const size_t name_len = strnlen(name, sizeof m->icc_name);
    if (icc_len && !png_keyword_ok((const unsigned char *)name, name_len))
        return vki_fail(e, VKIMG_E_USAGE, "png metadata: invalid ICC profile name");
    if (exif_len > PNG_CHUNK_MAX) {
        exif_len = 0;
        if (dropped)
            *dropped |= VKI_META_DROPPED_EXIF;
    }
    /* the XMP iTXt: keyword, flag 0, method 0, no language tag, no translated keyword */
    size_t xmp_len = m->xmp ? m->xmp_len : 0;
    if (xmp_len > PNG_CHUNK_MAX - (XMP_KEY_LEN + 4)) {
        xmp_len = 0;
        if (dropped)
            *dropped |= VKI_META_DROPPED_XMP;
    }

    int rc = 0;
    unsigned char *iccp = NULL, *o = NULL; /* iccp: the iCCP chunk, whole */
    size_t iccp_len = 0;
    struct libdeflate_compressor *c = NULL;
    if (icc_len) {
        if (!(c = libdeflate_alloc_compressor(9))) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "png metadata: out of memory");
            goto done;
        }
        const size_t bound = libdeflate_zlib_compress_bound(c, icc_len);
        if (bound > SIZE_MAX - 8 - 80 - 4 || !(iccp = malloc(8 + name_len + 2 + bound + 4))) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "png metadata: out of memory (ICC profile of %zu bytes)", icc_len);
            goto done;
        }
        memcpy(iccp + 8, name, name_len);
        iccp[8 + name_len] = 0;
        iccp[8 + name_len + 1] = 0; /* compression method: deflate */
        size_t z = libdeflate_zlib_compress(c, m->icc, icc_len, iccp + 8 + name_len + 2, bound);
        if (!z) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "png metadata: ICC profile compression failed");
            goto done;
        }
        if (name_len + 2 + z > PNG_CHUNK_MAX) {
            icc_len = 0;
            if (dropped)
                *dropped |= VKI_META_DROPPED_ICC;
        } else {
            iccp_len = finish_chunk(iccp, "iCCP", name_len + 2 + z);
        }
    }
    const size_t add = iccp_len + (exif_len ? 12 + exif_len : 0) + (xmp_len ? 12 + XMP_KEY_LEN + 4 + xmp_len : 0);
    if (len > SIZE_MAX - add || !(o = malloc(len + add))) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "png metadata: out of memory (%zu bytes)", len);
        goto done;
    }
    memcpy(o, png, 8 + 25); /* signature, IHDR */
    size_t op = 8 + 25;
    if (iccp_len) {
        memcpy(o + op, iccp, iccp_len);
        op += iccp_len;
    }
    if (exif_len) {
        memcpy(o + op + 8, m->exif, exif_len);
        op += finish_chunk(o + op, "eXIf", exif_len);
    }
    if (xmp_len) {
        memcpy(o + op + 8, xmp_key, XMP_KEY_LEN);
        memset(o + op + 8 + XMP_KEY_LEN, 0, 4);
        memcpy(o + op + 8 + XMP_KEY_LEN + 4, m->xmp, xmp_len);
        op += finish_chunk(o + op, "iTXt", XMP_KEY_LEN + 4 + xmp_len);
    }
    size_t pos = 8 + 25;
    int ended = 0;
    while (!ended) {
        if (len - pos < 12) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "png metadata: malformed input PNG (no IEND chunk)");
            goto done;
        }
        uint32_t n = vki_rd32be(png + pos);
        if (n > PNG_CHUNK_MAX || n > len - pos - 12) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "png metadata: malformed input PNG (a chunk runs past the end)");
            goto done;
        }
        const unsigned char *type = png + pos + 4;
        const size_t whole = 12 + (size_t)n;
        ended = memcmp(type, "IEND", 4) == 0;
        const int drop = (iccp_len && (memcmp(type, "iCCP", 4) == 0 || memcmp(type, "sRGB", 4) == 0)) ||
                         (exif_len && memcmp(type, "eXIf", 4) == 0) ||
                         (xmp_len && memcmp(type, "iTXt", 4) == 0 && n >= XMP_KEY_LEN &&
                          memcmp(type + 4, xmp_key, XMP_KEY_LEN) == 0);
        if (!drop) {
            memcpy(o + op, png + pos, whole);
            op += whole;
        }
        pos += whole;
    }
    *out = o;
    *outlen = op;
    o = NULL;
done:
    libdeflate_free_compressor(c);
    free(iccp);
    free(o);
    return rc;
}

void vkimg_meta_free(vkimg_meta *m)
{
    vki_meta_free(m);
}

void vkimg_meta_set_orientation(vkimg_meta *m, int orientation)
{
    if (!m || orientation < 1 || orientation > 8)
        return;
    m->orientation = orientation;
    if (m->exif)
        vki_exif_set_orientation(m->exif, m->exif_len, orientation);
    if (m->xmp)
        vki_xmp_set_orientation(m->xmp, m->xmp_len, orientation);
}
