/* Metadata (src/io/meta.c): EXIF orientation in both byte orders; ICC profiles, EXIF
 * blocks and XMP packets added to real JPEG (TurboJPEG) and PNG (vki_png_encode) files
 * and read back byte-identical, the files still decoding to the same pixels; the
 * segment and chunk layout the writers produce; replacement of existing metadata; the
 * limits (JPEG's one XMP APP1 of 65504 bytes); and malformed input (truncations at
 * every length, bad IFD offsets and counts, ICC segments missing or duplicated, bad
 * CRCs and zlib streams, iCCP and XMP iTXt zlib bombs over the cap). XMP: the APP1
 * "http://ns.adobe.com/xap/1.0/" (extended XMP segments not read), PNG iTXt
 * "XML:com.adobe.xmp" plain and compressed, WebP "XMP " chunks and TIFF tag 700
 * (hand-built files); tiff:Orientation in the packet (attribute and element forms,
 * malformed values, every truncation) and vkimg_meta_set_orientation rewriting EXIF
 * and XMP. No device. */
#include "bbuf.h"
#include "exif_util.h"
#include "io/io_priv.h"
#include "io/meta.h"
#include "lj_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <stb_image.h>
#include <turbojpeg.h>

#define VKI_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static unsigned long long g_seed = 0x9e3779b97f4a7c15ull;

/* ------------------------------------------------------------------ builders */

/* test_meta's EXIF blocks (tests/lib/exif_util.c), their thumbnails from g_seed */
static unsigned char *make_exif(int le, int orient, unsigned orient_type, size_t *len)
{
    return t_exif_block(le, orient, orient_type, &g_seed, len);
}

/* Random bytes with a valid-looking ICC header (what fits of its 128 bytes). */
static unsigned char *make_icc(size_t n)
{
    return t_icc_profile(n, "RGB ", &g_seed);
}

static void fill_random(vkimg_image *im)
{
    unsigned char *d = im->data;
    for (size_t i = 0; i < vkimg_image_bytes(im); i++)
        d[i] = (unsigned char)t_rand(&g_seed);
}

static unsigned char *make_jpeg(int c, size_t *len)
{
    vkimg_image im = { 0 };
    vkimg_image_alloc(&im, 23, 17, c, VKIMG_U8, NULL);
    fill_random(&im);
    tjhandle h = tjInitCompress();
    unsigned char *jb = NULL;
    unsigned long jn = 0;
    if (tjCompress2(h, im.data, im.w, im.w * c, im.h, c == 1 ? TJPF_GRAY : TJPF_RGB, &jb, &jn,
                    c == 1 ? TJSAMP_GRAY : TJSAMP_420, 85, 0)) {
        fprintf(stderr, "tjCompress2: %s\n", tjGetErrorStr2(h));
        exit(1);
    }
    tjDestroy(h);
    vkimg_image_free(&im);
    unsigned char *p = malloc(jn);
    memcpy(p, jb, jn);
    tjFree(jb);
    *len = jn;
    return p;
}

static unsigned char *make_png(int c, size_t *len)
{
    vkimg_image im = { 0 };
    vkimg_image_alloc(&im, 19, 11, c, VKIMG_U8, NULL);
    fill_random(&im);
    unsigned char *p = NULL;
    vkimg_err e;
    if (vki_png_encode(&im, 6, &p, len, &e)) {
        fprintf(stderr, "vki_png_encode: %s\n", e.msg);
        exit(1);
    }
    vkimg_image_free(&im);
    return p;
}

/* Decoded pixels (TurboJPEG), malloc()ed; NULL on failure. */
static unsigned char *tj_pixels(const unsigned char *j, size_t n, int *w, int *h)
{
    tjhandle t = tjInitDecompress();
    int ss, cs;
    unsigned char *px = NULL;
    if (!tjDecompressHeader3(t, j, (unsigned long)n, w, h, &ss, &cs)) {
        px = malloc((size_t)*w * (size_t)*h * 3);
        if (tjDecompress2(t, j, (unsigned long)n, px, *w, 0, *h, TJPF_RGB, TJFLAG_STOPONWARNING)) {
            free(px);
            px = NULL;
        }
    }
    tjDestroy(t);
    return px;
}

static uint32_t rbe32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A PNG chunk with a correct CRC (or a broken one). */
static void png_chunk(bbuf *b, const char *type, const void *data, size_t n, int bad_crc)
{
    unsigned char h[8] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8),
                           (unsigned char)n };
    memcpy(h + 4, type, 4);
    bb_put(b, h, 8);
    bb_put(b, data, n);
    uint32_t crc = libdeflate_crc32(libdeflate_crc32(0, type, 4), data, n) ^ (bad_crc ? 1u : 0u);
    unsigned char cb[4] = { (unsigned char)(crc >> 24), (unsigned char)(crc >> 16), (unsigned char)(crc >> 8),
                            (unsigned char)crc };
    bb_put(b, cb, 4);
}

/* png with the chunks in extra inserted after IHDR (or before IEND when at_end). */
static unsigned char *png_insert(const unsigned char *png, size_t n, const bbuf *extra, int at_end, size_t *outn)
{
    bbuf o = { 0 };
    size_t at = at_end ? n - 12 : 33;
    bb_put(&o, png, at);
    bb_put(&o, extra->p, extra->n);
    bb_put(&o, png + at, n - at);
    *outn = o.n;
    return o.p;
}

/* jpg with the bytes of extra inserted after SOI + JFIF APP0. */
static unsigned char *jpeg_insert(const unsigned char *j, size_t n, const bbuf *extra, size_t *outn)
{
    size_t at = 2;
    if (j[2] == 0xff && j[3] == 0xe0)
        at = 4 + ((size_t)j[4] << 8 | j[5]);
    bbuf o = { 0 };
    bb_put(&o, j, at);
    bb_put(&o, extra->p, extra->n);
    bb_put(&o, j + at, n - at);
    *outn = o.n;
    return o.p;
}

static void app_seg(bbuf *b, int marker, const void *id, size_t idn, const void *data, size_t n)
{
    bb_u8(b, 0xff);
    bb_u8(b, (unsigned)marker);
    bb_u8(b, (unsigned)((2 + idn + n) >> 8));
    bb_u8(b, (unsigned)((2 + idn + n) & 0xff));
    bb_put(b, id, idn);
    bb_put(b, data, n);
}

/* b made again: SOI, an EXIF APP1 of ex, then the n bytes of tail as they are */
static void soi_exif_then(bbuf *b, const unsigned char *ex, size_t xn, const char *tail, size_t n)
{
    b->n = 0;
    bb_put(b, "\xff\xd8", 2);
    app_seg(b, 0xe1, "Exif\0\0", 6, ex, xn);
    bb_put(b, tail, n);
}

static void icc_seg(bbuf *b, int seq, int count, const unsigned char *data, size_t n)
{
    unsigned char id[14];
    memcpy(id, "ICC_PROFILE", 12);
    id[12] = (unsigned char)seq;
    id[13] = (unsigned char)count;
    app_seg(b, 0xe2, id, 14, data, n);
}

/* ------------------------------------------------------------------ layout checks */

/* Walks a JPEG's header: the markers in order (up to SOS) into mk, the ICC sequence
 * numbers into seq. Returns the number of markers. */
static int jpeg_markers(const unsigned char *j, size_t n, int *mk, int maxmk, int *seq, int *nseq, int *count)
{
    size_t p = 2;
    int k = 0;
    *nseq = 0;
    while (p + 4 <= n && j[p] == 0xff && j[p + 1] != 0xda && k < maxmk) {
        size_t l = (size_t)j[p + 2] << 8 | j[p + 3];
        mk[k++] = j[p + 1];
        if (j[p + 1] == 0xe2 && l >= 16 && memcmp(j + p + 4, "ICC_PROFILE", 12) == 0) {
            seq[(*nseq)++] = j[p + 16];
            *count = j[p + 17];
        }
        p += 2 + l;
    }
    return k;
}

/* Walks a PNG's chunks: types into types (4 chars each), checking every CRC. Returns the
 * number of chunks, -1 on a bad CRC or structure. */
static int png_chunks(const unsigned char *p, size_t n, char types[][5], int max)
{
    size_t at = 8;
    int k = 0;
    while (at + 12 <= n && k < max) {
        uint32_t l = rbe32(p + at);
        if (l > n - at - 12)
            return -1;
        if (libdeflate_crc32(0, p + at + 4, 4 + (size_t)l) != rbe32(p + at + 8 + l))
            return -1;
        memcpy(types[k], p + at + 4, 4);
        types[k++][4] = 0;
        at += 12 + l;
    }
    return at == n ? k : -1;
}

static int count_type(char types[][5], int n, const char *t)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += strcmp(types[i], t) == 0;
    return c;
}

static int index_of(char types[][5], int n, const char *t)
{
    for (int i = 0; i < n; i++)
        if (strcmp(types[i], t) == 0)
            return i;
    return -1;
}

static int same(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    return an == bn && (an == 0 || (a && b && memcmp(a, b, an) == 0));
}

/* ------------------------------------------------------------------ tests */

static void test_orientation(void)
{
    for (int le = 0; le <= 1; le++) {
        for (int o = 1; o <= 8; o++) {
            size_t n;
            unsigned char *x = make_exif(le, o, 3, &n);
            CHECK(vki_exif_orientation(x, n) == o, "le %d orientation %d: got %d", le, o, vki_exif_orientation(x, n));
            unsigned char *y = malloc(n);
            memcpy(y, x, n);
            CHECK(vki_exif_set_orientation(y, n, 1) == 1, "set le %d", le);
            CHECK(vki_exif_orientation(y, n) == 1, "after set le %d o %d", le, o);
            size_t ndiff = 0;
            for (size_t i = 0; i < n; i++)
                ndiff += x[i] != y[i];
            CHECK(ndiff == (o == 1 ? 0u : 1u), "set rewrote %zu bytes (le %d, o %d)", ndiff, le, o);
            CHECK(vki_exif_set_orientation(y, n, o) == 1 && memcmp(x, y, n) == 0, "set back le %d o %d", le, o);
            CHECK(vki_exif_set_orientation(y, n, 0) == -1 && vki_exif_set_orientation(y, n, 9) == -1 &&
                      memcmp(x, y, n) == 0,
                  "out-of-range values change nothing");
            /* every truncation: no overread (exact-size copies), a valid answer */
            for (size_t k = 0; k < n; k++) {
                unsigned char *t = malloc(k ? k : 1);
                memcpy(t, x, k);
                int v = vki_exif_orientation(t, k);
                int ok = v >= 1 && v <= 8;
                /* orientation entry: IFD0 at 8, count 2 bytes, it is entry 1 */
                if (k < 8 + 2 + 12 * 2)
                    ok = ok && v == 1;
                else
                    ok = ok && v == o;
                CHECK(ok, "truncated to %zu of %zu (le %d, o %d): %d", k, n, le, o, v);
                free(t);
            }
            free(x);
            free(y);
        }
        size_t n;
        unsigned char *x = make_exif(le, 0, 3, &n); /* no orientation tag */
        CHECK(vki_exif_orientation(x, n) == 1, "no tag");
        CHECK(vki_exif_set_orientation(x, n, 1) == 0, "no tag: nothing to change");
        free(x);
        x = make_exif(le, 6, 4, &n); /* LONG instead of SHORT */
        CHECK(vki_exif_orientation(x, n) == 1, "orientation as LONG is invalid");
        CHECK(vki_exif_set_orientation(x, n, 1) == 0, "invalid tag: not rewritten");
        free(x);
        static const int bad[] = { 0, 9, 255, 0xffff };
        for (size_t i = 0; i < VKI_ARRAY_LEN(bad); i++) {
            x = make_exif(le, bad[i], 3, &n);
            if (bad[i]) /* make_exif(orient 0) leaves the tag out: build value 0 below */
                CHECK(vki_exif_orientation(x, n) == 1, "value %d -> 1", bad[i]);
            free(x);
        }
        x = make_exif(le, 3, 3, &n);
        unsigned char *val = x + 8 + 2 + 12 + 8; /* entry 1's value */
        val[0] = val[1] = 0;
        CHECK(vki_exif_orientation(x, n) == 1, "value 0 -> 1");
        CHECK(vki_exif_set_orientation(x, n, 5) == 1 && vki_exif_orientation(x, n) == 5, "value 0 rewritten");
        free(x);

        /* IFD0 offset outside the block, inside the header, or leaving no room */
        static const uint32_t offs[] = { 0xfffffff0u, 0x80000000u, 4, 0, 7 };
        for (size_t i = 0; i < VKI_ARRAY_LEN(offs); i++) {
            x = make_exif(le, 6, 3, &n);
            bbuf b = { 0 };
            (le ? bb_le32 : bb_be32)(&b, offs[i]);
            memcpy(x + 4, b.p, 4);
            free(b.p);
            CHECK(vki_exif_orientation(x, n) == 1, "IFD0 offset 0x%x -> 1", offs[i]);
            CHECK(vki_exif_set_orientation(x, n, 1) == 0, "IFD0 offset 0x%x: no rewrite", offs[i]);
            x[4] = x[5] = x[6] = x[7] = 0;
            if (le)
                x[4] = (unsigned char)(n - 1);
            else
                x[7] = (unsigned char)(n - 1), x[6] = (unsigned char)((n - 1) >> 8);
            CHECK(vki_exif_orientation(x, n) == 1, "IFD0 at the last byte -> 1");
            free(x);
        }
        /* entry count larger than the block: the entries that fit are read */
        x = make_exif(le, 7, 3, &n);
        x[8] = x[9] = 0xff;
        CHECK(vki_exif_orientation(x, n) == 7, "count 65535, orientation in the block: %d",
              vki_exif_orientation(x, n));
        unsigned char *t = malloc(8 + 2 + 12 + 11); /* cut inside the orientation entry */
        memcpy(t, x, 8 + 2 + 12 + 11);
        CHECK(vki_exif_orientation(t, 8 + 2 + 12 + 11) == 1, "count 65535, orientation entry cut off");
        CHECK(vki_exif_set_orientation(t, 8 + 2 + 12 + 11, 1) == 0, "cut entry: no rewrite");
        free(t);
        free(x);
        /* not TIFF */
        x = make_exif(le, 6, 3, &n);
        x[2] = 43;
        CHECK(vki_exif_orientation(x, n) == 1, "TIFF magic 43 -> 1");
        x[0] = 'I', x[1] = 'M';
        CHECK(vki_exif_orientation(x, n) == 1, "byte order IM -> 1");
        free(x);
    }
    CHECK(vki_exif_orientation(NULL, 0) == 1 && vki_exif_set_orientation(NULL, 0, 1) == 0, "NULL");
}

static const size_t icc_sizes[] = { 0, 100, 65519, 65520, 200000 };

typedef int (*add_fn)(const unsigned char *, size_t, const vki_meta *, unsigned char **, size_t *, unsigned *,
                      vkimg_err *);
typedef int (*read_fn)(const unsigned char *, size_t, vki_meta *, vkimg_err *);

/* Adds m to file, reads it back, checks identity; returns the new file (or NULL). */
static unsigned char *roundtrip(const char *what, add_fn add, read_fn rd, const unsigned char *file, size_t n,
                                const vki_meta *m, size_t *outn)
{
    unsigned char *o = NULL;
    unsigned dropped = 99;
    vkimg_err e = { 0 };
    int rc = add(file, n, m, &o, outn, &dropped, &e);
    CHECK(rc == 0 && o && dropped == 0, "%s: add: %d %s (dropped %u)", what, rc, e.msg, dropped);
    if (rc)
        return NULL;
    vki_meta r;
    rc = rd(o, *outn, &r, &e);
    CHECK(rc == 0, "%s: read back: %s", what, e.msg);
    CHECK(same(r.icc, r.icc_len, m->icc, m->icc ? m->icc_len : 0), "%s: ICC %zu bytes back, %zu put in", what,
          r.icc_len, m->icc_len);
    CHECK(same(r.exif, r.exif_len, m->exif, m->exif ? m->exif_len : 0), "%s: EXIF %zu bytes back, %zu put in", what,
          r.exif_len, m->exif_len);
    CHECK(same(r.xmp, r.xmp_len, m->xmp, m->xmp ? m->xmp_len : 0), "%s: XMP %zu bytes back, %zu put in", what,
          r.xmp_len, m->xmp_len);
    const bool ps = rd == vki_meta_read_jpeg; /* (PNG has no place for Photoshop's resources) */
    CHECK(same(r.iptc, r.iptc_len, ps ? m->iptc : NULL, ps && m->iptc ? m->iptc_len : 0),
          "%s: Photoshop resources %zu bytes back, %zu put in", what, r.iptc_len, m->iptc_len);
    int want_o = m->exif ? vki_exif_orientation(m->exif, m->exif_len) : 1; /* the EXIF's, never the XMP's */
    CHECK(r.orientation == want_o, "%s: orientation %d, expected %d", what, r.orientation, want_o);
    CHECK((r.icc == NULL) == (r.icc_len == 0) && (r.exif == NULL) == (r.exif_len == 0) &&
              (r.xmp == NULL) == (r.xmp_len == 0),
          "%s: NULL iff empty", what);
    vki_meta_free(&r);
    return o;
}

static void test_jpeg(void)
{
    for (int c = 1; c <= 3; c += 2) {
        size_t jn;
        unsigned char *jpg = make_jpeg(c, &jn);
        int w0, h0;
        unsigned char *px0 = tj_pixels(jpg, jn, &w0, &h0);
        CHECK(px0 != NULL, "reference decode");
        vki_meta none;
        CHECK(vki_meta_read_jpeg(jpg, jn, &none, NULL) == 0 && !none.icc && !none.exif && none.orientation == 1,
              "TurboJPEG output has no metadata");
        for (size_t si = 0; si < VKI_ARRAY_LEN(icc_sizes); si++) {
            for (int variant = 0; variant < 3; variant++) { /* no EXIF, II, MM */
                for (int o = 1; o <= 8; o++) {
                    if (o > 1 && !(si == 1 && variant))
                        continue; /* every orientation with the small profile, 1 elsewhere */
                    char what[96];
                    snprintf(what, sizeof what, "jpeg c%d icc %zu exif %s o%d", c, icc_sizes[si],
                             variant == 0 ? "none" : variant == 1 ? "II" : "MM", o);
                    vki_meta m = { 0 };
                    m.icc_len = icc_sizes[si];
                    m.icc = icc_sizes[si] ? make_icc(icc_sizes[si]) : NULL;
                    if (variant)
                        m.exif = make_exif(variant == 1, o == 1 && si != 1 ? (int)si + 1 : o, 3, &m.exif_len);
                    size_t on;
                    unsigned char *out = roundtrip(what, vki_jpeg_add_meta, vki_meta_read_jpeg, jpg, jn, &m, &on);
                    if (out) {
                        int w, h;
                        unsigned char *px = tj_pixels(out, on, &w, &h);
                        CHECK(px && w == w0 && h == h0 && memcmp(px, px0, (size_t)w * (size_t)h * 3) == 0,
                              "%s: same pixels from TurboJPEG", what);
                        free(px);
                        int sw, sh, sc;
                        unsigned char *sp = stbi_load_from_memory(out, (int)on, &sw, &sh, &sc, 0);
                        CHECK(sp && sw == w0 && sh == h0, "%s: stb_image decodes it", what);
                        stbi_image_free(sp);
                        int mk[300], seq[300], nseq, count = 0;
                        int k = jpeg_markers(out, on, mk, 300, seq, &nseq, &count);
                        size_t want_n = (icc_sizes[si] + 65518) / 65519;
                        int pos = 1;
                        CHECK(k >= 2 && mk[0] == 0xe0, "%s: JFIF APP0 stays first", what);
                        if (variant) {
                            CHECK(mk[pos] == 0xe1, "%s: APP1 right after APP0", what);
                            pos++;
                        }
                        CHECK((size_t)nseq == want_n && (want_n == 0 || (size_t)count == want_n),
                              "%s: %d ICC segments (count %d), expected %zu", what, nseq, count, want_n);
                        for (int i = 0; i < nseq; i++)
                            CHECK(seq[i] == i + 1 && mk[pos + i] == 0xe2, "%s: ICC segment %d in order", what, i);
                        CHECK(on == jn + (variant ? 10 + m.exif_len : 0) + want_n * 18 + icc_sizes[si],
                              "%s: %zu bytes, nothing else added or lost", what, on);

                        /* replacing: different metadata on top of the output */
                        vki_meta m2 = { 0 };
                        m2.icc = make_icc(300);
                        m2.icc_len = 300;
                        m2.exif = make_exif(1, 8, 3, &m2.exif_len);
                        size_t on2;
                        snprintf(what + strlen(what), sizeof what - strlen(what), " replaced");
                        unsigned char *out2 =
                            roundtrip(what, vki_jpeg_add_meta, vki_meta_read_jpeg, out, on, &m2, &on2);
                        if (out2) {
                            k = jpeg_markers(out2, on2, mk, 300, seq, &nseq, &count);
                            int napp1 = 0;
                            for (int i = 0; i < k; i++)
                                napp1 += mk[i] == 0xe1;
                            CHECK(napp1 == 1 && nseq == 1, "%s: one APP1 (%d), one ICC segment (%d)", what, napp1,
                                  nseq);
                        }
                        /* only EXIF replaced: the ICC segments stay */
                        vki_meta m3 = { 0 };
                        m3.exif = m2.exif;
                        m3.exif_len = m2.exif_len;
                        unsigned char *out3 = NULL;
                        size_t on3;
                        vki_meta r;
                        if (!vki_jpeg_add_meta(out, on, &m3, &out3, &on3, NULL, NULL) &&
                            !vki_meta_read_jpeg(out3, on3, &r, NULL)) {
                            CHECK(same(r.icc, r.icc_len, m.icc, m.icc_len) &&
                                      same(r.exif, r.exif_len, m2.exif, m2.exif_len),
                                  "%s: EXIF replaced, ICC kept", what);
                            vki_meta_free(&r);
                        } else {
                            CHECK(0, "%s: EXIF-only replacement failed", what);
                        }
                        free(out3);
                        free(out2);
                        vki_meta_free(&m2);
                    }
                    free(out);
                    vki_meta_free(&m);
                }
            }
        }
        free(px0);
        free(jpg);
    }
}

static void test_jpeg_limits(void)
{
    size_t jn;
    unsigned char *jpg = make_jpeg(3, &jn);
    for (int over = 0; over <= 1; over++) {
        vki_meta m = { 0 };
        size_t xn;
        unsigned char *x = make_exif(0, 6, 3, &xn);
        m.exif_len = VKI_JPEG_EXIF_MAX + (size_t)over;
        m.exif = calloc(1, m.exif_len);
        memcpy(m.exif, x, xn); /* a valid block followed by padding */
        free(x);
        unsigned char *o = NULL;
        size_t on;
        unsigned dropped = 0;
        CHECK(vki_jpeg_add_meta(jpg, jn, &m, &o, &on, &dropped, NULL) == 0, "EXIF of %zu bytes", m.exif_len);
        CHECK(dropped == (over ? VKI_META_DROPPED_EXIF : 0u), "EXIF of %zu: dropped %u", m.exif_len, dropped);
        vki_meta r;
        CHECK(vki_meta_read_jpeg(o, on, &r, NULL) == 0, "read");
        if (over)
            CHECK(!r.exif && on == jn, "EXIF over the limit left out");
        else
            CHECK(same(r.exif, r.exif_len, m.exif, m.exif_len) && r.orientation == 6, "EXIF of exactly 65527 bytes");
        vki_meta_free(&r);
        free(o);
        vki_meta_free(&m);
    }
    /* an ICC profile needing 256 segments is left out */
    vki_meta m = { 0 };
    m.icc_len = VKI_JPEG_ICC_MAX + 1;
    m.icc = calloc(1, m.icc_len);
    unsigned char *o = NULL;
    size_t on;
    unsigned dropped = 0;
    CHECK(vki_jpeg_add_meta(jpg, jn, &m, &o, &on, &dropped, NULL) == 0 && dropped == VKI_META_DROPPED_ICC &&
              on == jn,
          "ICC over 255 segments dropped (%u)", dropped);
    free(o);
    m.icc_len = VKI_JPEG_ICC_MAX; /* exactly 255 segments */
    CHECK(vki_jpeg_add_meta(jpg, jn, &m, &o, &on, &dropped, NULL) == 0 && dropped == 0, "ICC of 255 segments");
    vki_meta r;
    CHECK(o && vki_meta_read_jpeg(o, on, &r, NULL) == 0 && same(r.icc, r.icc_len, m.icc, m.icc_len),
          "255 segments read back");
    vki_meta_free(&r);
    free(o);
    vki_meta_free(&m);
    /* not a JPEG */
    vkimg_err e;
    CHECK(vki_jpeg_add_meta((const unsigned char *)"\x89PNG", 4, &m, &o, &on, NULL, &e) == VKIMG_E_RUNTIME && !o,
          "add to a non-JPEG");
    CHECK(vki_meta_read_jpeg((const unsigned char *)"GIF89a", 6, &r, &e) == VKIMG_E_RUNTIME && !r.icc && !r.exif,
          "read a non-JPEG");
    free(jpg);
}

/* Reads a JPEG made of jpg + extra segments; returns rc, fills r. */
static int read_spliced_jpeg(const unsigned char *jpg, size_t jn, bbuf *extra, vki_meta *r)
{
    size_t n;
    unsigned char *f = jpeg_insert(jpg, jn, extra, &n);
    vkimg_err e = { 0 };
    int rc = vki_meta_read_jpeg(f, n, r, &e);
    free(f);
    free(extra->p);
    memset(extra, 0, sizeof *extra);
    return rc;
}

static void test_jpeg_malformed(void)
{
    size_t jn;
    unsigned char *jpg = make_jpeg(3, &jn);
    unsigned char *icc = make_icc(3000);
    const unsigned char *p1 = icc, *p2 = icc + 1000, *p3 = icc + 2000;
    vki_meta r;
    bbuf x = { 0 };

    /* complete, out of order: joined in sequence order */
    icc_seg(&x, 3, 3, p3, 1000);
    icc_seg(&x, 1, 3, p1, 1000);
    icc_seg(&x, 2, 3, p2, 1000);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && same(r.icc, r.icc_len, icc, 3000), "ICC segments 3,1,2");
    vki_meta_free(&r);
    /* segments elsewhere in the header (after DQT etc.) still count */
    {
        size_t n;
        bbuf seg = { 0 };
        icc_seg(&seg, 1, 1, icc, 3000);
        /* put it right before SOS */
        const size_t sos = lj_marker(jpg, jn, 0xda, 0);
        bbuf f = { 0 };
        bb_put(&f, jpg, sos);
        bb_put(&f, seg.p, seg.n);
        bb_put(&f, jpg + sos, jn - sos);
        n = f.n;
        CHECK(vki_meta_read_jpeg(f.p, n, &r, NULL) == 0 && same(r.icc, r.icc_len, icc, 3000), "ICC before SOS");
        vki_meta_free(&r);
        /* after SOS: not looked at */
        f.n = 0;
        bb_put(&f, jpg, jn - 2);
        bb_put(&f, seg.p, seg.n);
        bb_put(&f, jpg + jn - 2, 2);
        CHECK(vki_meta_read_jpeg(f.p, f.n, &r, NULL) == 0 && !r.icc, "ICC after SOS is not metadata");
        vki_meta_free(&r);
        free(f.p);
        free(seg.p);
    }
    /* missing one */
    icc_seg(&x, 1, 3, p1, 1000);
    icc_seg(&x, 3, 3, p3, 1000);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.icc && r.icc_len == 0, "ICC segment 2 of 3 missing");
    vki_meta_free(&r);
    /* duplicated */
    icc_seg(&x, 1, 2, p1, 1000);
    icc_seg(&x, 1, 2, p1, 1000);
    icc_seg(&x, 2, 2, p2, 1000);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.icc, "ICC segment 1 twice");
    vki_meta_free(&r);
    icc_seg(&x, 1, 2, p1, 1000);
    icc_seg(&x, 2, 2, p2, 1000);
    icc_seg(&x, 2, 2, p2, 1000);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.icc, "ICC segment 2 twice after a complete set");
    vki_meta_free(&r);
    /* counts disagree */
    icc_seg(&x, 1, 2, p1, 1000);
    icc_seg(&x, 2, 3, p2, 1000);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.icc, "ICC counts 2 and 3");
    vki_meta_free(&r);
    /* sequence 0, over the count, count 0 */
    icc_seg(&x, 0, 1, p1, 1000);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.icc, "ICC sequence 0");
    vki_meta_free(&r);
    icc_seg(&x, 2, 1, p1, 1000);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.icc, "ICC sequence over the count");
    vki_meta_free(&r);
    icc_seg(&x, 0, 0, p1, 1000);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.icc, "ICC count 0");
    vki_meta_free(&r);
    /* an EXIF block that is not TIFF is ignored; the first valid one counts */
    size_t xn;
    unsigned char *ex = make_exif(1, 5, 3, &xn), *ex2 = make_exif(0, 2, 3, &xn);
    app_seg(&x, 0xe1, "Exif\0\0", 6, "NOTTIFF!", 8);
    app_seg(&x, 0xe1, "http://ns.adobe.com/xap/1.0/\0", 29, "<x/>", 4);
    app_seg(&x, 0xe1, "Exif\0\0", 6, ex, xn);
    app_seg(&x, 0xe1, "Exif\0\0", 6, ex2, xn);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && same(r.exif, r.exif_len, ex, xn) && r.orientation == 5,
          "first valid EXIF APP1 counts (orientation %d)", r.orientation);
    vki_meta_free(&r);
    /* EXIF with a bad IFD offset: kept as is, orientation 1 */
    memcpy(ex2 + 4, "\xff\xff\xff\x00", 4);
    app_seg(&x, 0xe1, "Exif\0\0", 6, ex2, xn);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && same(r.exif, r.exif_len, ex2, xn) && r.orientation == 1,
          "EXIF with IFD0 outside: kept, orientation 1");
    vki_meta_free(&r);

    /* truncated APP1: the length runs past the end */
    {
        bbuf f = { 0 };
        bb_put(&f, "\xff\xd8", 2);
        app_seg(&f, 0xe1, "Exif\0\0", 6, ex, xn);
        for (size_t cut = 3; cut < f.n; cut++) {
            unsigned char *t = malloc(cut);
            memcpy(t, f.p, cut);
            vkimg_err e = { 0 };
            int rc = vki_meta_read_jpeg(t, cut, &r, &e);
            CHECK((rc == VKIMG_E_RUNTIME && strstr(e.msg, "APP1") && !r.exif && !r.icc) || (rc == 0 && cut < 4),
                  "APP1 cut at %zu of %zu: rc %d %s", cut, f.n, rc, e.msg);
            vki_meta_free(&r);
            free(t);
        }
        free(f.p);
    }
    /* a whole file with metadata, cut at every length: no crash; complete metadata
     * once the cut is past the metadata segments */
    {
        vki_meta m = { 0 };
        m.icc = make_icc(70000);
        m.icc_len = 70000;
        m.exif = make_exif(0, 8, 3, &m.exif_len);
        unsigned char *o = NULL;
        size_t on;
        CHECK(vki_jpeg_add_meta(jpg, jn, &m, &o, &on, NULL, NULL) == 0, "add");
        size_t meta_end = 2 + 18 + 10 + m.exif_len + 2 * 18 + 70000;
        for (size_t cut = 0; o && cut <= on;
             cut += cut < 300 || (cut + 300 > meta_end && cut < meta_end + 64) ? 1 : 331) {
            unsigned char *t = malloc(cut ? cut : 1);
            memcpy(t, o, cut);
            int rc = vki_meta_read_jpeg(t, cut, &r, NULL);
            if (cut >= meta_end)
                CHECK(rc == 0 && same(r.icc, r.icc_len, m.icc, m.icc_len) && same(r.exif, r.exif_len, m.exif, m.exif_len),
                      "cut at %zu (metadata ends at %zu)", cut, meta_end);
            else
                CHECK(rc == 0 || rc == VKIMG_E_RUNTIME, "cut at %zu", cut);
            if (rc)
                CHECK(!r.icc && !r.exif && r.orientation == 1, "cut at %zu: empty after an error", cut);
            vki_meta_free(&r);
            free(t);
        }
        free(o);
        vki_meta_free(&m);
    }
    /* a non-metadata segment running past the end stops the scan quietly */
    {
        bbuf f = { 0 };
        soi_exif_then(&f, ex, xn, "\xff\xe5\x40\x00junk", 8);
        CHECK(vki_meta_read_jpeg(f.p, f.n, &r, NULL) == 0 && same(r.exif, r.exif_len, ex, xn),
              "APP5 cut off after the EXIF: EXIF kept");
        vki_meta_free(&r);
        /* garbage where a marker should be (0xFF 0x00 pairs too): skipped to the
         * next marker, as libjpeg skips it (the loader decodes such a file) */
        soi_exif_then(&f, ex, xn, "garbage\xff\x00\xff\xff\x00", 12);
        icc_seg(&f, 1, 1, icc, 100);
        CHECK(vki_meta_read_jpeg(f.p, f.n, &r, NULL) == 0 && r.exif && same(r.icc, r.icc_len, icc, 100),
              "garbage between segments skipped");
        vki_meta_free(&r);
        /* garbage to the end: the segments before it */
        soi_exif_then(&f, ex, xn, "garbage\xff\x00\xff", 10);
        CHECK(vki_meta_read_jpeg(f.p, f.n, &r, NULL) == 0 && same(r.exif, r.exif_len, ex, xn) && !r.icc,
              "garbage to the end");
        vki_meta_free(&r);
        /* fill bytes and a length below 2 */
        f.n = 0;
        bb_put(&f, "\xff\xd8\xff\xff\xff", 5);
        app_seg(&f, 0xe1, "Exif\0\0", 6, ex, xn);
        bb_put(&f, "\xff\xe3\x00\x01", 4);
        CHECK(vki_meta_read_jpeg(f.p, f.n, &r, NULL) == 0 && same(r.exif, r.exif_len, ex, xn),
              "fill bytes; a bad length stops the scan");
        vki_meta_free(&r);
        free(f.p);
    }
    free(ex);
    free(ex2);
    free(icc);
    free(jpg);
}

static void test_png(void)
{
    for (int c = 1; c <= 4; c += 3) {
        size_t pn;
        unsigned char *png = make_png(c, &pn);
        vki_meta none;
        CHECK(vki_meta_read_png(png, pn, &none, NULL) == 0 && !none.icc && !none.exif && none.orientation == 1,
              "vki_png_encode output has no metadata");
        vkimg_image ref = { 0 };
        vkimg_err e;
        CHECK(vki_png_decode(png, pn, "ref", 0, &ref, &e) == 0, "reference decode: %s", e.msg);
        for (size_t si = 0; si < VKI_ARRAY_LEN(icc_sizes); si++) {
            for (int variant = 0; variant < 3; variant++) {
                for (int o = 1; o <= 8; o++) {
                    if (o > 1 && !(si == 1 && variant))
                        continue;
                    char what[96];
                    snprintf(what, sizeof what, "png c%d icc %zu exif %s o%d", c, icc_sizes[si],
                             variant == 0 ? "none" : variant == 1 ? "II" : "MM", o);
                    vki_meta m = { 0 };
                    m.icc_len = icc_sizes[si];
                    m.icc = icc_sizes[si] ? make_icc(icc_sizes[si]) : NULL;
                    if (variant)
                        m.exif = make_exif(variant == 1, o == 1 && si != 1 ? (int)si + 1 : o, 3, &m.exif_len);
                    size_t on;
                    unsigned char *out = roundtrip(what, vki_png_add_meta, vki_meta_read_png, png, pn, &m, &on);
                    if (!out) {
                        vki_meta_free(&m);
                        continue;
                    }
                    vkimg_image im = { 0 };
                    CHECK(vki_png_decode(out, on, "x", 0, &im, &e) == 0 && im.w == ref.w && im.h == ref.h &&
                              im.c == ref.c && memcmp(im.data, ref.data, vkimg_image_bytes(&ref)) == 0,
                          "%s: same pixels from vki_png_decode", what);
                    vkimg_image_free(&im);
                    int sw, sh, sc;
                    unsigned char *sp = stbi_load_from_memory(out, (int)on, &sw, &sh, &sc, 0);
                    CHECK(sp && sw == ref.w && sh == ref.h && sc == c &&
                              memcmp(sp, ref.data, vkimg_image_bytes(&ref)) == 0,
                          "%s: same pixels from stb_image", what);
                    stbi_image_free(sp);
                    char types[64][5];
                    int k = png_chunks(out, on, types, 64);
                    CHECK(k >= 3, "%s: chunk structure and CRCs", what);
                    if (k >= 3) {
                        int i = 1;
                        CHECK(strcmp(types[0], "IHDR") == 0, "%s: IHDR first", what);
                        if (m.icc)
                            CHECK(strcmp(types[i++], "iCCP") == 0, "%s: iCCP right after IHDR", what);
                        if (m.exif)
                            CHECK(strcmp(types[i++], "eXIf") == 0, "%s: eXIf next", what);
                        CHECK(index_of(types, k, "IDAT") == i && strcmp(types[k - 1], "IEND") == 0,
                              "%s: IDAT, IEND follow", what);
                        if (m.icc) {
                            const unsigned char *d = out + 33 + 8;
                            CHECK(memcmp(d, "ICC Profile\0\0", 13) == 0, "%s: default profile name, method 0", what);
                        }
                    }
                    /* replacing */
                    vki_meta m2 = { 0 };
                    m2.icc = make_icc(500);
                    m2.icc_len = 500;
                    strcpy(m2.icc_name, "Display P3");
                    m2.exif = make_exif(0, 4, 3, &m2.exif_len);
                    size_t on2;
                    snprintf(what + strlen(what), sizeof what - strlen(what), " replaced");
                    unsigned char *out2 = roundtrip(what, vki_png_add_meta, vki_meta_read_png, out, on, &m2, &on2);
                    if (out2) {
                        k = png_chunks(out2, on2, types, 64);
                        CHECK(count_type(types, k, "iCCP") == 1 && count_type(types, k, "eXIf") == 1,
                              "%s: one iCCP, one eXIf", what);
                        vki_meta r;
                        CHECK(vki_meta_read_png(out2, on2, &r, NULL) == 0 && strcmp(r.icc_name, "Display P3") == 0,
                              "%s: profile name kept (%s)", what, r.icc_name);
                        vki_meta_free(&r);
                    }
                    free(out2);
                    vki_meta_free(&m2);
                    free(out);
                    vki_meta_free(&m);
                }
            }
        }
        vkimg_image_free(&ref);
        free(png);
    }
}

static void test_png_chunks(void)
{
    size_t pn;
    unsigned char *png = make_png(3, &pn);
    /* sRGB, gAMA, cHRM present: an added iCCP drops sRGB only */
    bbuf x = { 0 };
    png_chunk(&x, "sRGB", "\0", 1, 0);
    png_chunk(&x, "gAMA", "\0\0\xb1\x8f", 4, 0);
    png_chunk(&x, "cHRM", "\0\0z&\0\0\x80\x84\0\0\xfa\0\0\0\x80\xe8\0\0u0\0\0\xea`\0\0:\x98\0\0\x17o", 32, 0);
    png_chunk(&x, "tEXt", "Comment\0hello", 13, 0);
    size_t sn;
    unsigned char *srgb = png_insert(png, pn, &x, 0, &sn);
    free(x.p);
    memset(&x, 0, sizeof x);
    vki_meta m = { 0 };
    m.icc = make_icc(1000);
    m.icc_len = 1000;
    unsigned char *o = NULL;
    size_t on;
    char types[64][5];
    CHECK(vki_png_add_meta(srgb, sn, &m, &o, &on, NULL, NULL) == 0, "add to a PNG with sRGB");
    int k = png_chunks(o, on, types, 64);
    CHECK(k > 0 && count_type(types, k, "sRGB") == 0 && count_type(types, k, "gAMA") == 1 &&
              count_type(types, k, "cHRM") == 1 && count_type(types, k, "tEXt") == 1 &&
              index_of(types, k, "iCCP") == 1,
          "iCCP added: sRGB dropped, gAMA, cHRM, tEXt kept");
    free(o);
    vki_meta_free(&m);
    vki_meta mx = { 0 };
    mx.exif = make_exif(1, 3, 3, &mx.exif_len);
    CHECK(vki_png_add_meta(srgb, sn, &mx, &o, &on, NULL, NULL) == 0, "add EXIF only");
    k = png_chunks(o, on, types, 64);
    CHECK(k > 0 && count_type(types, k, "sRGB") == 1 && index_of(types, k, "eXIf") == 1, "EXIF only: sRGB kept");
    free(o);
    free(srgb);

    /* eXIf after IDAT (PNG puts no order on it) is found; a second one is ignored */
    size_t xn;
    unsigned char *ex = make_exif(0, 7, 3, &xn), *ex2 = make_exif(1, 2, 3, &xn);
    vki_meta r;
    png_chunk(&x, "eXIf", ex, xn, 0);
    png_chunk(&x, "eXIf", ex2, xn, 0);
    unsigned char *f = png_insert(png, pn, &x, 1, &sn);
    free(x.p);
    memset(&x, 0, sizeof x);
    CHECK(vki_meta_read_png(f, sn, &r, NULL) == 0 && same(r.exif, r.exif_len, ex, xn) && r.orientation == 7,
          "eXIf after IDAT");
    vki_meta_free(&r);
    /* replacing drops it there too */
    CHECK(vki_png_add_meta(f, sn, &mx, &o, &on, NULL, NULL) == 0, "replace eXIf after IDAT");
    k = png_chunks(o, on, types, 64);
    CHECK(k > 0 && count_type(types, k, "eXIf") == 1 && index_of(types, k, "eXIf") == 1, "one eXIf, before IDAT");
    free(o);
    free(f);
    /* bad CRC, not TIFF: ignored, the next good one counts */
    png_chunk(&x, "eXIf", ex, xn, 1);
    png_chunk(&x, "eXIf", "not a tiff block", 16, 0);
    png_chunk(&x, "eXIf", ex2, xn, 0);
    f = png_insert(png, pn, &x, 0, &sn);
    free(x.p);
    memset(&x, 0, sizeof x);
    CHECK(vki_meta_read_png(f, sn, &r, NULL) == 0 && same(r.exif, r.exif_len, ex2, xn) && r.orientation == 2,
          "eXIf with a bad CRC, then not TIFF, then good");
    vki_meta_free(&r);
    free(f);

    /* iCCP variants */
    unsigned char *icc = make_icc(5000);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
    unsigned char z[8192];
    size_t zn = libdeflate_zlib_compress(c, icc, 5000, z, sizeof z);
    struct {
        const char *what;
        const char *name;
        size_t name_len;
        int method, bad_crc, corrupt, after_idat, want;
    } cases[] = {
        { "plain", "sRGB IEC61966-2.1", 17, 0, 0, 0, 0, 1 },
        { "bad CRC", "x", 1, 0, 1, 0, 0, 0 },
        { "method 1", "x", 1, 1, 0, 0, 0, 0 },
        { "bad zlib", "x", 1, 0, 0, 1, 0, 0 },
        { "empty name", "", 0, 0, 0, 0, 0, 0 },
        { "name of 79", "0123456789012345678901234567890123456789012345678901234567890123456789012345678", 79, 0, 0,
          0, 0, 1 },
        { "name of 80", "01234567890123456789012345678901234567890123456789012345678901234567890123456789", 80, 0, 0,
          0, 0, 0 },
        { "after IDAT", "x", 1, 0, 0, 0, 1, 0 },
        { "odd name", " lead", 5, 0, 0, 0, 0, 1 },
    };
    for (size_t i = 0; i < VKI_ARRAY_LEN(cases); i++) {
        bbuf d = { 0 };
        bb_put(&d, cases[i].name, cases[i].name_len);
        bb_u8(&d, 0);
        bb_u8(&d, (unsigned)cases[i].method);
        bb_put(&d, z, zn);
        if (cases[i].corrupt)
            d.p[d.n - 10] ^= 0x55, d.p[d.n - 200] ^= 0xaa;
        png_chunk(&x, "iCCP", d.p, d.n, cases[i].bad_crc);
        free(d.p);
        f = png_insert(png, pn, &x, cases[i].after_idat, &sn);
        free(x.p);
        memset(&x, 0, sizeof x);
        vkimg_err e = { 0 };
        int rc = vki_meta_read_png(f, sn, &r, &e);
        CHECK(rc == 0, "iCCP %s: %s", cases[i].what, e.msg);
        CHECK(cases[i].want ? same(r.icc, r.icc_len, icc, 5000) : !r.icc, "iCCP %s: profile %s", cases[i].what,
              cases[i].want ? "read" : "ignored");
        if (i == 0)
            CHECK(strcmp(r.icc_name, "sRGB IEC61966-2.1") == 0, "iCCP name kept");
        if (i == 5)
            CHECK(strlen(r.icc_name) == 79, "iCCP name of 79 kept");
        if (i == 8) /* read, but the name is not a valid keyword: not kept */
            CHECK(r.icc_name[0] == 0, "invalid keyword not kept");
        /* the writer round trip of what was read */
        if (r.icc) {
            unsigned char *o2 = NULL;
            size_t on2;
            vki_meta r2;
            CHECK(vki_png_add_meta(png, pn, &r, &o2, &on2, NULL, NULL) == 0 && vki_meta_read_png(o2, on2, &r2, NULL) == 0 &&
                      same(r2.icc, r2.icc_len, icc, 5000) &&
                      strcmp(r2.icc_name, r.icc_name[0] ? r.icc_name : "ICC Profile") == 0,
                  "iCCP %s: written back", cases[i].what);
            vki_meta_free(&r2);
            free(o2);
        }
        vki_meta_free(&r);
        free(f);
    }
    /* a bad icc_name given to the writer */
    vki_meta bn = { 0 };
    bn.icc = icc;
    bn.icc_len = 5000;
    strcpy(bn.icc_name, "two  spaces");
    vkimg_err e = { 0 };
    CHECK(vki_png_add_meta(png, pn, &bn, &o, &on, NULL, &e) == VKIMG_E_USAGE && !o, "bad profile name refused");
    /* an EXIF block without a TIFF header */
    vki_meta bx = { 0 };
    bx.exif = (unsigned char *)"nope, not TIFF";
    bx.exif_len = 14;
    CHECK(vki_png_add_meta(png, pn, &bx, &o, &on, NULL, &e) == VKIMG_E_USAGE && !o, "non-TIFF EXIF refused");

    /* the zlib bomb: inflating over the cap is refused; exactly the cap is read */
    size_t big = VKI_ICC_MAX + 1;
    unsigned char *zeros = calloc(1, big);
    size_t zcap = libdeflate_zlib_compress_bound(c, big);
    unsigned char *zb = malloc(zcap);
    for (int over = 1; over >= 0; over--) {
        size_t n = VKI_ICC_MAX + (size_t)over;
        size_t bn2 = libdeflate_zlib_compress(c, zeros, n, zb, zcap);
        bbuf d = { 0 };
        bb_put(&d, "bomb\0\0", 6);
        bb_put(&d, zb, bn2);
        png_chunk(&x, "iCCP", d.p, d.n, 0);
        free(d.p);
        f = png_insert(png, pn, &x, 0, &sn);
        free(x.p);
        memset(&x, 0, sizeof x);
        int rc = vki_meta_read_png(f, sn, &r, &e);
        if (over)
            CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "64 MiB") && !r.icc,
                  "iCCP of %zu compressed bytes inflating to 64 MiB + 1 refused: %d %s", bn2, rc, e.msg);
        else
            CHECK(rc == 0 && r.icc_len == VKI_ICC_MAX, "iCCP of exactly 64 MiB read (%zu)", r.icc_len);
        vki_meta_free(&r);
        free(f);
    }
    free(zb);
    free(zeros);

    /* truncation at every length of a PNG with metadata */
    vki_meta m2 = { 0 };
    m2.icc = make_icc(3000);
    m2.icc_len = 3000;
    m2.exif = make_exif(1, 6, 3, &m2.exif_len);
    CHECK(vki_png_add_meta(png, pn, &m2, &o, &on, NULL, NULL) == 0, "add");
    const size_t iccp_end = 33 + 12 + rbe32(o + 33), meta_end = iccp_end + 12 + rbe32(o + iccp_end);
    for (size_t cut = 0; cut <= on; cut++) {
        unsigned char *t = malloc(cut ? cut : 1);
        memcpy(t, o, cut);
        int rc = vki_meta_read_png(t, cut, &r, &e);
        if (cut >= meta_end)
            CHECK(rc == 0 && same(r.icc, r.icc_len, m2.icc, m2.icc_len) && same(r.exif, r.exif_len, m2.exif, m2.exif_len),
                  "PNG cut at %zu: all metadata", cut);
        else if (cut < 8)
            CHECK(rc == VKIMG_E_RUNTIME, "PNG cut at %zu: not a PNG", cut);
        else if ((cut >= 33 + 8 && cut < iccp_end) || (cut >= iccp_end + 8 && cut < meta_end))
            CHECK(rc == VKIMG_E_RUNTIME && !r.icc && !r.exif, "PNG cut at %zu inside the metadata: %s", cut, e.msg);
        else if (cut >= iccp_end)
            CHECK(rc == 0 && same(r.icc, r.icc_len, m2.icc, m2.icc_len) && !r.exif, "PNG cut at %zu: the ICC profile",
                  cut);
        else
            CHECK(rc == 0 && !r.icc && !r.exif, "PNG cut at %zu", cut);
        vki_meta_free(&r);
        free(t);
    }
    free(o);
    vki_meta_free(&m2);
    /* a chunk length over 2^31-1 on a non-metadata chunk stops the scan quietly */
    {
        bbuf ff = { 0 };
        bb_put(&ff, png, 33);
        png_chunk(&ff, "eXIf", ex, xn, 0);
        bb_put(&ff, "\xff\xff\xff\xfftEXt", 8);
        CHECK(vki_meta_read_png(ff.p, ff.n, &r, NULL) == 0 && same(r.exif, r.exif_len, ex, xn), "huge tEXt length");
        vki_meta_free(&r);
        /* malformed input to the writer */
        unsigned char *oo = NULL;
        CHECK(vki_png_add_meta(ff.p, ff.n, &mx, &oo, &on, NULL, &e) == VKIMG_E_RUNTIME && !oo, "writer: bad input");
        CHECK(vki_png_add_meta(png, pn - 12, &mx, &oo, &on, NULL, &e) == VKIMG_E_RUNTIME && !oo, "writer: no IEND");
        free(ff.p);
    }
    /* dispatch */
    CHECK(vki_meta_read((const unsigned char *)"BM\0\0\0\0", 6, &r, NULL) == 0 && !r.icc && !r.exif &&
              r.orientation == 1,
          "other formats: no metadata");
    vki_meta_free(&mx);
    libdeflate_free_compressor(c);
    free(icc);
    free(ex);
    free(ex2);
    free(png);
}

/* The flow the loader and encoders will follow: metadata read from a JPEG, the
 * orientation applied (rewritten to 1), written into a PNG, read from it, written into
 * a JPEG again: the same bytes all the way, but for the two orientation bytes. */
static void test_across_formats(void)
{
    size_t jn, pn;
    unsigned char *jpg = make_jpeg(3, &jn), *png = make_png(3, &pn);
    for (int le = 0; le <= 1; le++) {
        vki_meta m = { 0 };
        m.icc = make_icc(150000);
        m.icc_len = 150000;
        m.exif = make_exif(le, 6, 3, &m.exif_len);
        unsigned char *j1 = NULL, *p1 = NULL, *j2 = NULL;
        size_t j1n, p1n, j2n;
        vki_meta r1 = { 0 }, r2 = { 0 }, r3 = { 0 };
        int ok = vki_jpeg_add_meta(jpg, jn, &m, &j1, &j1n, NULL, NULL) == 0 && vki_meta_read(j1, j1n, &r1, NULL) == 0;
        CHECK(ok && r1.orientation == 6, "JPEG source: orientation 6");
        CHECK(ok && vki_exif_set_orientation(r1.exif, r1.exif_len, 1) == 1, "rewrite to 1");
        ok = ok && vki_png_add_meta(png, pn, &r1, &p1, &p1n, NULL, NULL) == 0 && vki_meta_read(p1, p1n, &r2, NULL) == 0;
        CHECK(ok && r2.orientation == 1 && same(r2.icc, r2.icc_len, m.icc, m.icc_len) &&
                  same(r2.exif, r2.exif_len, r1.exif, r1.exif_len),
              "JPEG -> PNG (le %d)", le);
        ok = ok && vki_jpeg_add_meta(jpg, jn, &r2, &j2, &j2n, NULL, NULL) == 0 && vki_meta_read(j2, j2n, &r3, NULL) == 0;
        CHECK(ok && r3.orientation == 1 && same(r3.icc, r3.icc_len, m.icc, m.icc_len) &&
                  same(r3.exif, r3.exif_len, r1.exif, r1.exif_len),
              "PNG -> JPEG (le %d)", le);
        size_t ndiff = 0;
        for (size_t i = 0; ok && i < m.exif_len; i++)
            ndiff += m.exif[i] != r3.exif[i];
        CHECK(ok && ndiff == 1, "only the orientation value changed (%zu bytes)", ndiff);
        vki_meta_free(&r3);
        vki_meta_free(&r2);
        vki_meta_free(&r1);
        free(j1);
        free(p1);
        free(j2);
        vki_meta_free(&m);
    }
    free(jpg);
    free(png);
}

/* vki_icc_fits: a profile header's colour space against the image's channels; bytes
 * that are not a profile header are not judged. */
static void test_icc_fits(void)
{
    unsigned char *p = make_icc(300);
    static const struct {
        const char *cs;
        int fits[4]; /* c = 1..4 */
    } cases[] = {
        { "RGB ", { 0, 0, 1, 1 } }, { "GRAY", { 1, 1, 0, 0 } }, { "CMYK", { 0, 0, 0, 0 } },
        { "Lab ", { 0, 0, 0, 0 } }, { "rgb ", { 0, 0, 0, 0 } },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memcpy(p + 16, cases[k].cs, 4);
        for (int c = 1; c <= 4; c++)
            CHECK(vki_icc_fits(p, 300, c) == cases[k].fits[c - 1], "icc_fits: '%s' profile, %d channel(s): %d",
                  cases[k].cs, c, cases[k].fits[c - 1]);
        CHECK(vki_icc_fits(p, 127, 1) == 1 && vki_icc_fits(p, 127, 3) == 1,
              "icc_fits: '%s' in 127 bytes (no whole header): not judged", cases[k].cs);
    }
    memcpy(p + 16, "CMYK", 4);
    p[36] = 'x';
    CHECK(vki_icc_fits(p, 300, 3) == 1, "icc_fits: no 'acsp' (not a profile header): not judged");
    CHECK(vki_icc_fits(NULL, 0, 3) == 1, "icc_fits: no profile");
    free(p);
}

/* ------------------------------------------------------------------ XMP */

/* The standard XMP APP1's identifier, the extended segments' one and the PNG iTXt
 * keyword, each with its NUL: 29, 35 and 18 bytes. */
static const char xmp_sig[] = "http://ns.adobe.com/xap/1.0/";
static const char xmp_ext_sig[] = "http://ns.adobe.com/xmp/extension/";
static const char xmp_keyword[] = "XML:com.adobe.xmp";
#define XMP_SIG_LEN sizeof xmp_sig
#define XMP_EXT_SIG_LEN sizeof xmp_ext_sig
#define XMP_KW_LEN sizeof xmp_keyword

/* An XMP packet as writers lay it out: the xpacket wrapper around an rdf:Description
 * with tiff:Orientation="orient" (none for 0) and a UTF-8 dc:title ending in tag,
 * blank padding before the trailer up to n bytes in all (none where n is below the
 * packet's own size). malloc()ed, no NUL added; its length in *len. */
static unsigned char *make_xmp(int orient, const char *tag, size_t n, size_t *len)
{
    bbuf b = { 0 };
    bb_str(&b, "<?xpacket begin=\"\xef\xbb\xbf\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
               "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\n"
               " <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
               "  <rdf:Description rdf:about=\"\" xmlns:tiff=\"http://ns.adobe.com/tiff/1.0/\"\n"
               "    xmlns:dc=\"http://purl.org/dc/elements/1.1/\"");
    if (orient) {
        char o[40];
        snprintf(o, sizeof o, "\n    tiff:Orientation=\"%d\"", orient);
        bb_str(&b, o);
    }
    bb_str(&b, ">\n   <dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">caf\xc3\xa9 ");
    bb_str(&b, tag);
    bb_str(&b, "</rdf:li></rdf:Alt></dc:title>\n  </rdf:Description>\n </rdf:RDF>\n</x:xmpmeta>\n");
    static const char trailer[] = "<?xpacket end=\"w\"?>";
    const size_t tn = sizeof trailer - 1;
    for (size_t col = 0; b.n + tn < n; col++)
        bb_u8(&b, col % 100 == 99 ? '\n' : ' ');
    bb_put(&b, trailer, tn);
    *len = b.n;
    return b.p;
}

/* The first place of the string t in the n bytes at x (which need no NUL); NULL: none. */
static const unsigned char *find_bytes(const unsigned char *x, size_t n, const char *t)
{
    const size_t tn = strlen(t);
    for (size_t i = 0; tn <= n && i <= n - tn; i++)
        if (!memcmp(x + i, t, tn))
            return x + i;
    return NULL;
}

/* n bytes of p in a buffer of exactly that size (1 byte for 0), so that ASan sees any
 * read past the end. */
static unsigned char *exact_copy(const void *p, size_t n)
{
    unsigned char *t = malloc(n ? n : 1);
    if (n)
        memcpy(t, p, n);
    return t;
}

static unsigned char *zlib_of(const void *d, size_t n, size_t *zn)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(9);
    size_t cap = libdeflate_zlib_compress_bound(c, n);
    unsigned char *z = malloc(cap);
    *zn = libdeflate_zlib_compress(c, d, n, z, cap);
    libdeflate_free_compressor(c);
    if (!*zn) {
        fprintf(stderr, "libdeflate_zlib_compress failed\n");
        exit(1);
    }
    return z;
}

/* The header segments of a JPEG up to SOS, one letter each into kinds (NUL-terminated):
 * J JFIF APP0, E "Exif" APP1, X standard XMP APP1, x extended XMP APP1, I ICC APP2, '.'
 * anything else; where each begins (its 0xFF) into off, where it ends into end.
 * Returns the count. */
static int jpeg_layout(const unsigned char *j, size_t n, char *kinds, size_t *off, size_t *end, int max)
{
    size_t p = 2;
    int k = 0;
    while (p + 4 <= n && j[p] == 0xff && j[p + 1] != 0xda && k < max) {
        const size_t l = (size_t)j[p + 2] << 8 | j[p + 3];
        const unsigned char *d = j + p + 4;
        size_t dn = l >= 2 ? l - 2 : 0;
        if (dn > n - p - 4)
            dn = n - p - 4;
        char c = '.';
        if (j[p + 1] == 0xe0 && dn >= 5 && memcmp(d, "JFIF", 5) == 0)
            c = 'J';
        else if (j[p + 1] == 0xe1 && dn >= 6 && memcmp(d, "Exif\0", 6) == 0)
            c = 'E';
        else if (j[p + 1] == 0xe1 && dn >= XMP_SIG_LEN && memcmp(d, xmp_sig, XMP_SIG_LEN) == 0)
            c = 'X';
        else if (j[p + 1] == 0xe1 && dn >= XMP_EXT_SIG_LEN && memcmp(d, xmp_ext_sig, XMP_EXT_SIG_LEN) == 0)
            c = 'x';
        else if (j[p + 1] == 0xe2 && dn >= 12 && memcmp(d, "ICC_PROFILE", 12) == 0)
            c = 'I';
        if (off)
            off[k] = p;
        if (end)
            end[k] = p + 2 + l;
        kinds[k++] = c;
        p += 2 + l;
    }
    kinds[k] = 0;
    return k;
}

static int count_char(const char *s, char ch)
{
    int c = 0;
    for (; *s; s++)
        c += *s == ch;
    return c;
}

/* The data of chunk number i (0: IHDR) of a PNG png_chunks has checked, its length in
 * *dn; NULL past the end. Where it begins (its length field) in *at when at is not NULL. */
static const unsigned char *png_chunk_data(const unsigned char *p, size_t n, int i, size_t *dn, size_t *at)
{
    for (size_t pos = 8; pos + 12 <= n; i--) {
        const uint32_t l = rbe32(p + pos);
        if (!i) {
            *dn = l;
            if (at)
                *at = pos;
            return p + pos + 8;
        }
        pos += 12 + (size_t)l;
    }
    return NULL;
}

/* An iTXt chunk: keyword, NUL, compression flag and method, language tag, NUL,
 * translated keyword, NUL, text (n bytes as given: compress them first for flag 1). */
static void itxt_chunk(bbuf *b, const char *kw, int flag, int method, const char *lang, const char *tkw,
                       const void *text, size_t n, int bad_crc)
{
    bbuf d = { 0 };
    bb_put(&d, kw, strlen(kw) + 1);
    bb_u8(&d, (unsigned)flag);
    bb_u8(&d, (unsigned)method);
    bb_put(&d, lang, strlen(lang) + 1);
    bb_put(&d, tkw, strlen(tkw) + 1);
    bb_put(&d, text, n);
    png_chunk(b, "iTXt", d.p, d.n, bad_crc);
    free(d.p);
}

/* vki_xmp_orientation and vki_xmp_set_orientation on packets written by hand. */
static void test_xmp_orientation(void)
{
    static const struct {
        const char *x;
        int want, count; /* the first value (0: none), how many set rewrites */
    } cases[] = {
        { "<rdf:Description tiff:Orientation=\"6\"/>", 6, 1 },
        { "<rdf:Description tiff:Orientation='3'/>", 3, 1 },
        { "<rdf:Description tiff:Orientation = \"8\"/>", 8, 1 },
        { "<rdf:Description\n\ttiff:Orientation\t=\r\n'2' tiff:Make=\"x\"/>", 2, 1 },
        { "<tiff:Orientation>6</tiff:Orientation>", 6, 1 },
        { "<rdf:Description><tiff:Orientation> 5\n\t</tiff:Orientation></rdf:Description>", 5, 1 },
        { "<tiff:Orientation>\r\n7 </tiff:Orientation>", 7, 1 },
        /* the first one counts; set rewrites all */
        { "<a tiff:Orientation=\"3\"/><tiff:Orientation>7</tiff:Orientation>", 3, 2 },
        { "<tiff:Orientation>4</tiff:Orientation><a tiff:Orientation='1'/><b tiff:Orientation=\"2\"/>", 4, 3 },
        /* at the very end of the buffer */
        { "<rdf:Description tiff:Orientation=\"8\"", 8, 1 },
        { "x tiff:Orientation='1'", 1, 1 },
        { "<tiff:Orientation>2</tiff:Orientation>", 2, 1 },
        /* absent */
        { "", 0, 0 },
        { "<rdf:Description tiff:Make=\"Orientation\"/>", 0, 0 },
        { "<rdf:Description exif:Orientation=\"6\"/>", 0, 0 },
        { "<a tiff:OrientationX=\"6\"/>", 0, 0 },
        { "<a mytiff:Orientation=\"6\"/>", 0, 0 },
        { "<tiff:OrientationX>6</tiff:OrientationX>", 0, 0 },
        /* malformed values */
        { "<a tiff:Orientation=\"9\"/>", 0, 0 },
        { "<a tiff:Orientation=\"0\"/>", 0, 0 },
        { "<a tiff:Orientation=\"66\"/>", 0, 0 },
        { "<a tiff:Orientation=\"16\"/>", 0, 0 },
        { "<a tiff:Orientation=\"x\"/>", 0, 0 },
        { "<a tiff:Orientation=\"\"/>", 0, 0 },
        { "<a tiff:Orientation=\"-6\"/>", 0, 0 },
        { "<a tiff:Orientation=\"6'/>", 0, 0 },
        { "<a tiff:Orientation=6/>", 0, 0 },
        { "<a tiff:Orientation:\"6\"/>", 0, 0 },
        { "<a tiff:Orientation=\"6", 0, 0 },
        { "<a tiff:Orientation='", 0, 0 },
        { "<a tiff:Orientation=", 0, 0 },
        { "<a tiff:Orientation", 0, 0 },
        { "<tiff:Orientation>9</tiff:Orientation>", 0, 0 },
        { "<tiff:Orientation>66</tiff:Orientation>", 0, 0 },
        { "<tiff:Orientation>x</tiff:Orientation>", 0, 0 },
        { "<tiff:Orientation>6 6</tiff:Orientation>", 0, 0 },
        { "<tiff:Orientation></tiff:Orientation>", 0, 0 },
        { "<tiff:Orientation>6", 0, 0 },
        { "<tiff:Orientation> ", 0, 0 },
        { "<tiff:Orientation>", 0, 0 },
        { "<tiff:Orientation/>", 0, 0 },
    };
    for (size_t i = 0; i < VKI_ARRAY_LEN(cases); i++) {
        const size_t n = strlen(cases[i].x);
        unsigned char *x = exact_copy(cases[i].x, n);
        int v = vki_xmp_orientation(x, n);
        CHECK(v == cases[i].want, "xmp orientation of '%s': %d, expected %d", cases[i].x, v, cases[i].want);
        const int nv = cases[i].want % 8 + 1; /* not the first value, nor any other in the table */
        int rc = vki_xmp_set_orientation(x, n, nv);
        CHECK(rc == cases[i].count, "xmp set %d on '%s': %d rewritten, expected %d", nv, cases[i].x, rc,
              cases[i].count);
        size_t ndiff = 0, nbad = 0;
        for (size_t k = 0; k < n; k++)
            if (x[k] != (unsigned char)cases[i].x[k]) {
                ndiff++;
                nbad += x[k] != '0' + nv || cases[i].x[k] < '1' || cases[i].x[k] > '8';
            }
        CHECK(ndiff == (size_t)cases[i].count && nbad == 0, "xmp set %d on '%s': %zu bytes changed (%zu wrongly)", nv,
              cases[i].x, ndiff, nbad);
        CHECK(vki_xmp_orientation(x, n) == (cases[i].want ? nv : 0), "xmp set %d on '%s': reads %d", nv, cases[i].x,
              vki_xmp_orientation(x, n));
        /* values outside 1..8 change nothing */
        memcpy(x, cases[i].x, n);
        CHECK(vki_xmp_set_orientation(x, n, 0) == -1 && vki_xmp_set_orientation(x, n, 9) == -1 &&
                  vki_xmp_set_orientation(x, n, -1) == -1 && memcmp(x, cases[i].x, n) == 0,
              "xmp set 0 / 9 / -1 on '%s': -1, unchanged", cases[i].x);
        free(x);
    }
    CHECK(vki_xmp_orientation(NULL, 0) == 0 && vki_xmp_set_orientation(NULL, 0, 3) == 0, "xmp orientation: NULL");

    /* every value, every form, inside a packet and at its very end */
    static const char *const forms[] = {
        "<a tiff:Orientation=\"%d\"", "<a tiff:Orientation='%d'", "<a tiff:Orientation =\t\"%d\"",
        "<a\ntiff:Orientation= '%d'", "<tiff:Orientation>%d</tiff:Orientation>",
        "<tiff:Orientation>\n %d\n</tiff:Orientation>",
    };
    for (size_t f = 0; f < VKI_ARRAY_LEN(forms); f++) {
        for (int v = 1; v <= 8; v++) {
            for (int at_end = 0; at_end <= 1; at_end++) {
                char s[160], form[96];
                snprintf(form, sizeof form, "%s%s", forms[f], at_end ? "" : " exif:Orientation=\"4\" xmlns:b=\"6\">");
                snprintf(s, sizeof s, form, v);
                const size_t n = strlen(s);
                unsigned char *x = exact_copy(s, n);
                CHECK(vki_xmp_orientation(x, n) == v, "xmp orientation %d in '%s': %d", v, s,
                      vki_xmp_orientation(x, n));
                for (int w = 1; w <= 8; w++) {
                    CHECK(vki_xmp_set_orientation(x, n, w) == 1 && vki_xmp_orientation(x, n) == w,
                          "xmp set %d in '%s'", w, s);
                }
                free(x);
            }
        }
    }

    /* every truncation of a packet (exact-size copies): no read past the end, the value
     * once the property is whole, none before its digit */
    static const char elem[] = "<?xpacket begin=\"\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF><rdf:Description>"
                               "<tiff:Orientation> 7 </tiff:Orientation></rdf:Description></rdf:RDF></x:xmpmeta>";
    static const char multi[] = "<rdf:Description tiff:Orientation = '3'/><rdf:Description>"
                                "<tiff:Orientation>5</tiff:Orientation></rdf:Description>";
    size_t an;
    unsigned char *attr = make_xmp(6, "truncated", 700, &an);
    const struct {
        const unsigned char *x;
        size_t n;
        int want;
    } packets[] = {
        { attr, an, 6 },
        { (const unsigned char *)elem, sizeof elem - 1, 7 },
        { (const unsigned char *)multi, sizeof multi - 1, 3 },
    };
    for (size_t p = 0; p < VKI_ARRAY_LEN(packets); p++) {
        const unsigned char *x = packets[p].x;
        const size_t n = packets[p].n;
        /* the first digit, the end of its property (after the quote or the end tag) */
        const unsigned char *s = find_bytes(x, n, "tiff:Orientation"); /* (attr has no NUL: not strstr) */
        size_t digit = 0, whole = 0, second_whole = n + 1;
        for (size_t k = (size_t)(s - x); k < n; k++)
            if (x[k] >= '1' && x[k] <= '8') {
                digit = k;
                break;
            }
        whole = x[digit + 1] == '"' || x[digit + 1] == '\'' ? digit + 2
                : (size_t)(find_bytes(x + digit, n - digit, "</tiff:Orientation>") - x) + 19;
        if (p == 2)
            second_whole = n - strlen("</rdf:Description>");
        CHECK(vki_xmp_orientation(x, n) == packets[p].want, "packet %zu: orientation %d", p, packets[p].want);
        for (size_t k = 0; k <= n; k++) {
            unsigned char *t = exact_copy(x, k);
            const int v = vki_xmp_orientation(t, k);
            CHECK(v == 0 || v == packets[p].want, "packet %zu cut at %zu: %d", p, k, v);
            if (k >= whole)
                CHECK(v == packets[p].want, "packet %zu cut at %zu (property whole at %zu): %d", p, k, whole, v);
            if (k <= digit)
                CHECK(v == 0, "packet %zu cut at %zu (digit at %zu): %d", p, k, digit, v);
            const int nv = packets[p].want == 8 ? 1 : 8;
            const int rc = vki_xmp_set_orientation(t, k, nv);
            CHECK(v ? rc >= 1 && rc <= 2 : rc == 0, "packet %zu cut at %zu: set rewrote %d (read %d)", p, k, rc, v);
            if (k >= second_whole)
                CHECK(rc == 2, "packet %zu cut at %zu: both rewritten (%d)", p, k, rc);
            CHECK(vki_xmp_orientation(t, k) == (v ? nv : 0), "packet %zu cut at %zu: reads %d after set", p, k,
                  vki_xmp_orientation(t, k));
            free(t);
        }
    }
    free(attr);
}

/* vkimg_meta_set_orientation rewrites the EXIF tag and every tiff:Orientation of the
 * XMP, and nothing else; the result survives a JPEG round trip. */
static void test_xmp_meta_set_orientation(void)
{
    static const char pk[] = "<x:xmpmeta><rdf:RDF><rdf:Description rdf:about=\"\" tiff:Orientation=\"6\" dc:n=\"6\"/>"
                             "<rdf:Description><tiff:Orientation>6</tiff:Orientation><dc:title>6</dc:title>"
                             "</rdf:Description></rdf:RDF></x:xmpmeta>";
    const size_t pn = sizeof pk - 1;
    const size_t d1 = (size_t)(strstr(pk, "Orientation=\"6") - pk) + 13,
                 d2 = (size_t)(strstr(pk, "<tiff:Orientation>6") - pk) + 18;
    size_t jn;
    unsigned char *jpg = make_jpeg(3, &jn);
    for (int le = 0; le <= 1; le++) {
        vkimg_meta m = { 0 };
        m.exif = make_exif(le, 6, 3, &m.exif_len);
        m.orientation = 6;
        m.xmp = exact_copy(pk, pn);
        m.xmp_len = pn;
        for (int v = 1; v <= 8; v++) {
            vkimg_meta_set_orientation(&m, v);
            char want[sizeof pk];
            memcpy(want, pk, sizeof pk);
            want[d1] = want[d2] = (char)('0' + v);
            CHECK(m.orientation == v && vki_exif_orientation(m.exif, m.exif_len) == v && m.xmp_len == pn &&
                      memcmp(m.xmp, want, pn) == 0 && vki_xmp_orientation(m.xmp, m.xmp_len) == v,
                  "set orientation %d (le %d): EXIF %d, XMP '%.*s'", v, le, vki_exif_orientation(m.exif, m.exif_len),
                  (int)pn, (const char *)m.xmp);
        }
        vkimg_meta_set_orientation(&m, 1);
        unsigned char *o = NULL;
        size_t on;
        vki_meta r;
        CHECK(vki_jpeg_add_meta(jpg, jn, &m, &o, &on, NULL, NULL) == 0 && vki_meta_read_jpeg(o, on, &r, NULL) == 0 &&
                  r.orientation == 1 && vki_xmp_orientation(r.xmp, r.xmp_len) == 1 &&
                  same(r.xmp, r.xmp_len, m.xmp, m.xmp_len),
              "orientation 1 in EXIF and XMP through a JPEG (le %d)", le);
        vki_meta_free(&r);
        free(o);
        vkimg_meta_free(&m);
        CHECK(!m.xmp && m.xmp_len == 0 && !m.exif && m.orientation == 1, "vkimg_meta_free empties the XMP");
    }
    /* XMP without EXIF */
    vkimg_meta m = { 0 };
    m.orientation = 1;
    m.xmp = exact_copy(pk, pn);
    m.xmp_len = pn;
    vkimg_meta_set_orientation(&m, 3);
    CHECK(m.orientation == 3 && !m.exif && vki_xmp_orientation(m.xmp, m.xmp_len) == 3 &&
              vki_xmp_set_orientation(m.xmp, m.xmp_len, 3) == 2,
          "set orientation 3 on XMP alone");
    vkimg_meta_free(&m);
    /* an XMP without tiff:Orientation is left as it is */
    size_t xn;
    unsigned char *x = make_xmp(0, "no orientation", 0, &xn);
    m.exif = make_exif(1, 8, 3, &m.exif_len);
    m.orientation = 8;
    m.xmp = exact_copy(x, xn);
    m.xmp_len = xn;
    vkimg_meta_set_orientation(&m, 2);
    CHECK(m.orientation == 2 && vki_exif_orientation(m.exif, m.exif_len) == 2 && same(m.xmp, m.xmp_len, x, xn),
          "set orientation 2: XMP without the property unchanged");
    vkimg_meta_free(&m);
    free(x);
    free(jpg);
}

/* One case of the XMP round trips: the packet's size (make_xmp, orient and tag), an ICC
 * profile's (0: none) and the EXIF block (0 none, 1 II, 2 MM; orientation orient). */
typedef struct {
    size_t xmp, icc;
    int exif;
} xmp_var;

static vki_meta xmp_var_meta(const xmp_var *v, int orient, const char *tag)
{
    vki_meta m = { 0 };
    m.xmp = make_xmp(orient, tag, v->xmp, &m.xmp_len);
    if (v->icc) {
        m.icc = make_icc(v->icc);
        m.icc_len = v->icc;
    }
    if (v->exif)
        m.exif = make_exif(v->exif == 1, orient, 3, &m.exif_len);
    return m;
}

/* XMP alone and beside EXIF and ICC in real JPEGs (gray and RGB): read back
 * byte-identical, the same pixels, the writer's segment order, replacement. */
static void test_xmp_jpeg(void)
{
    static const xmp_var vars[] = {
        { 0, 0, 0 },     /* the bare packet */
        { 40000, 0, 0 }, /* padded */
        { 3000, 1000, 1 },
        { 65504, 70000, 2 }, /* the largest packet, two ICC segments */
    };
    for (int c = 1; c <= 3; c += 2) {
        size_t jn;
        unsigned char *jpg = make_jpeg(c, &jn);
        int w0, h0;
        unsigned char *px0 = tj_pixels(jpg, jn, &w0, &h0);
        CHECK(px0 != NULL, "xmp jpeg c%d: reference decode", c);
        vki_meta none;
        CHECK(vki_meta_read_jpeg(jpg, jn, &none, NULL) == 0 && !none.xmp && none.xmp_len == 0,
              "TurboJPEG output has no XMP");
        for (size_t vi = 0; vi < VKI_ARRAY_LEN(vars); vi++) {
            char what[96];
            snprintf(what, sizeof what, "xmp jpeg c%d xmp %zu icc %zu exif %d", c, vars[vi].xmp, vars[vi].icc,
                     vars[vi].exif);
            vki_meta m = xmp_var_meta(&vars[vi], 6, "first");
            size_t on;
            unsigned char *out = roundtrip(what, vki_jpeg_add_meta, vki_meta_read_jpeg, jpg, jn, &m, &on);
            if (!out) {
                vki_meta_free(&m);
                continue;
            }
            int w, h;
            unsigned char *px = tj_pixels(out, on, &w, &h);
            CHECK(px && w == w0 && h == h0 && memcmp(px, px0, (size_t)w * (size_t)h * 3) == 0,
                  "%s: same pixels from TurboJPEG", what);
            free(px);
            int sw, sh, sc;
            unsigned char *sp = stbi_load_from_memory(out, (int)on, &sw, &sh, &sc, 0);
            CHECK(sp && sw == w0 && sh == h0, "%s: stb_image decodes it", what);
            stbi_image_free(sp);

            /* SOI, JFIF APP0, Exif APP1, XMP APP1, ICC APP2s, then the encoder's segments */
            char kinds[64], want[16];
            size_t off[63], end[63];
            const int k = jpeg_layout(out, on, kinds, off, end, 63);
            const size_t nicc = (m.icc_len + VKI_JPEG_ICC_CHUNK - 1) / VKI_JPEG_ICC_CHUNK;
            snprintf(want, sizeof want, "J%sX%.*s", m.exif ? "E" : "", (int)nicc, "IIII");
            const size_t wl = strlen(want);
            CHECK(k > (int)wl && strncmp(kinds, want, wl) == 0 && !strpbrk(kinds + wl, "JEXxI"),
                  "%s: segments %s, expected %s and then none of these", what, kinds, want);
            const int xi = m.exif ? 2 : 1;
            if (k > xi && kinds[xi] == 'X')
                CHECK(end[xi] - off[xi] == 4 + XMP_SIG_LEN + m.xmp_len &&
                          memcmp(out + off[xi] + 4 + XMP_SIG_LEN, m.xmp, m.xmp_len) == 0,
                      "%s: the XMP APP1 is its identifier and the packet", what);
            CHECK(on == jn + (m.exif ? 10 + m.exif_len : 0) + 4 + XMP_SIG_LEN + m.xmp_len + nicc * 18 + m.icc_len,
                  "%s: %zu bytes, nothing else added or lost", what, on);

            /* XMP alone replaced: one XMP APP1, the new packet; EXIF and ICC kept */
            vki_meta m2 = { 0 }, r;
            m2.xmp = make_xmp(5, "second, \xe2\x82\xac", 0, &m2.xmp_len);
            unsigned char *o2 = NULL;
            size_t on2 = 0;
            unsigned dropped = 99;
            int rc = vki_jpeg_add_meta(out, on, &m2, &o2, &on2, &dropped, NULL);
            CHECK(rc == 0 && dropped == 0, "%s: add XMP on top", what);
            if (!rc) {
                CHECK(vki_meta_read_jpeg(o2, on2, &r, NULL) == 0 && same(r.xmp, r.xmp_len, m2.xmp, m2.xmp_len) &&
                          same(r.icc, r.icc_len, m.icc, m.icc_len) && same(r.exif, r.exif_len, m.exif, m.exif_len) &&
                          r.orientation == (m.exif ? 6 : 1),
                      "%s: XMP replaced, EXIF and ICC kept, the EXIF's orientation (%d)", what, r.orientation);
                vki_meta_free(&r);
                jpeg_layout(o2, on2, kinds, NULL, NULL, 63);
                CHECK(count_char(kinds, 'X') == 1 && on2 == on - m.xmp_len + m2.xmp_len,
                      "%s: one XMP APP1 after replacing (%s)", what, kinds);
                px = tj_pixels(o2, on2, &w, &h);
                CHECK(px && w == w0 && h == h0 && memcmp(px, px0, (size_t)w * (size_t)h * 3) == 0,
                      "%s: same pixels after replacing the XMP", what);
                free(px);
            }
            free(o2);
            /* EXIF alone replaced: the input's XMP stays */
            vki_meta m3 = { 0 };
            m3.exif = make_exif(1, 2, 3, &m3.exif_len);
            o2 = NULL;
            rc = vki_jpeg_add_meta(out, on, &m3, &o2, &on2, NULL, NULL);
            CHECK(rc == 0 && vki_meta_read_jpeg(o2, on2, &r, NULL) == 0 && same(r.xmp, r.xmp_len, m.xmp, m.xmp_len) &&
                      same(r.exif, r.exif_len, m3.exif, m3.exif_len) && r.orientation == 2,
                  "%s: EXIF replaced, XMP kept", what);
            if (!rc) {
                vki_meta_free(&r);
                jpeg_layout(o2, on2, kinds, NULL, NULL, 63);
                CHECK(count_char(kinds, 'X') == 1 && count_char(kinds, 'E') == 1, "%s: %s after the EXIF alone",
                      what, kinds);
            }
            free(o2);
            /* everything replaced */
            m3.xmp = make_xmp(0, "third", 100, &m3.xmp_len);
            m3.icc = make_icc(200);
            m3.icc_len = 200;
            char what2[112];
            snprintf(what2, sizeof what2, "%s, all replaced", what);
            o2 = roundtrip(what2, vki_jpeg_add_meta, vki_meta_read_jpeg, out, on, &m3, &on2);
            if (o2) {
                jpeg_layout(o2, on2, kinds, NULL, NULL, 63);
                CHECK(strncmp(kinds, "JEXI", 4) == 0 && !strpbrk(kinds + 4, "JEXxI"), "%s: %s", what2, kinds);
            }
            free(o2);
            vki_meta_free(&m3);
            vki_meta_free(&m2);
            free(out);
            vki_meta_free(&m);
        }
        free(px0);
        free(jpg);
    }
}

/* Which APP1 is the XMP: extended segments, empty packets, look-alike identifiers,
 * the place in the header; a cut-off XMP APP1. */
static void test_xmp_jpeg_read(void)
{
    size_t jn, pn, p2n, xn;
    unsigned char *jpg = make_jpeg(3, &jn);
    unsigned char *pk = make_xmp(6, "standard", 0, &pn), *pk2 = make_xmp(2, "other", 0, &p2n);
    unsigned char *ex = make_exif(1, 4, 3, &xn);
    vki_meta r;
    bbuf x = { 0 }, ext = { 0 };
    /* an extended XMP segment: identifier, GUID, full length, offset, a part of the packet */
    bb_put(&ext, xmp_ext_sig, XMP_EXT_SIG_LEN);
    bb_str(&ext, "0123456789ABCDEF0123456789ABCDEF");
    bb_be32(&ext, (uint32_t)p2n);
    bb_be32(&ext, 0);
    bb_put(&ext, pk2, p2n);

    app_seg(&x, 0xe1, ext.p, ext.n, NULL, 0);
    app_seg(&x, 0xe1, xmp_sig, XMP_SIG_LEN, pk, pn);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && same(r.xmp, r.xmp_len, pk, pn),
          "extended XMP before the standard one: the standard one read");
    vki_meta_free(&r);
    app_seg(&x, 0xe1, ext.p, ext.n, NULL, 0);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.xmp && r.xmp_len == 0, "extended XMP alone: not read");
    vki_meta_free(&r);
    app_seg(&x, 0xe1, xmp_sig, XMP_SIG_LEN, NULL, 0);
    app_seg(&x, 0xe1, xmp_sig, XMP_SIG_LEN, pk, pn);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && same(r.xmp, r.xmp_len, pk, pn),
          "an empty XMP APP1, then the packet: the packet read");
    vki_meta_free(&r);
    app_seg(&x, 0xe1, xmp_sig, XMP_SIG_LEN, NULL, 0);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.xmp, "an empty XMP APP1 alone: no XMP");
    vki_meta_free(&r);
    app_seg(&x, 0xe1, xmp_sig, XMP_SIG_LEN, "x", 1);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && same(r.xmp, r.xmp_len, (const unsigned char *)"x", 1),
          "a packet of one byte");
    vki_meta_free(&r);
    app_seg(&x, 0xe1, xmp_sig, XMP_SIG_LEN, pk, pn);
    app_seg(&x, 0xe1, xmp_sig, XMP_SIG_LEN, pk2, p2n);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && same(r.xmp, r.xmp_len, pk, pn), "two XMP APP1s: the first");
    vki_meta_free(&r);
    app_seg(&x, 0xe1, xmp_sig, XMP_SIG_LEN, pk, pn);
    app_seg(&x, 0xe1, "Exif\0\0", 6, ex, xn);
    CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && same(r.xmp, r.xmp_len, pk, pn) &&
              same(r.exif, r.exif_len, ex, xn) && r.orientation == 4,
          "XMP APP1 before the Exif APP1: both, the EXIF's orientation (%d)", r.orientation);
    vki_meta_free(&r);
    /* look-alikes that are not the standard identifier */
    {
        static const struct {
            int marker;
            const char *id;
            size_t idn;
        } nots[] = {
            { 0xe1, "http://ns.adobe.com/xap/1.0/x", 29 },      /* no NUL */
            { 0xe1, "http://ns.adobe.com/xap/1.0\0", 28 },      /* one '/' short */
            { 0xe1, "HTTP://NS.ADOBE.COM/XAP/1.0/\0", 29 },     /* case */
            { 0xe1, "http://ns.adobe.com/xap/1.1/\0", 29 },     /* version */
            { 0xe2, "http://ns.adobe.com/xap/1.0/\0", 29 },     /* APP2 */
            { 0xed, "http://ns.adobe.com/xap/1.0/\0", 29 },     /* APP13 */
            { 0xe1, " http://ns.adobe.com/xap/1.0/\0", 30 },    /* a blank first */
        };
        for (size_t i = 0; i < VKI_ARRAY_LEN(nots); i++) {
            app_seg(&x, nots[i].marker, nots[i].id, nots[i].idn, pk, pn);
            CHECK(read_spliced_jpeg(jpg, jn, &x, &r) == 0 && !r.xmp, "APP%d '%.*s': not XMP", nots[i].marker - 0xe0,
                  (int)nots[i].idn, nots[i].id);
            vki_meta_free(&r);
        }
    }
    /* before SOS (after the tables): read; after SOS: not metadata */
    {
        bbuf seg = { 0 }, f = { 0 };
        app_seg(&seg, 0xe1, xmp_sig, XMP_SIG_LEN, pk, pn);
        const size_t sos = lj_marker(jpg, jn, 0xda, 0);
        bb_put(&f, jpg, sos);
        bb_put(&f, seg.p, seg.n);
        bb_put(&f, jpg + sos, jn - sos);
        CHECK(vki_meta_read_jpeg(f.p, f.n, &r, NULL) == 0 && same(r.xmp, r.xmp_len, pk, pn), "XMP right before SOS");
        vki_meta_free(&r);
        f.n = 0;
        bb_put(&f, jpg, jn - 2);
        bb_put(&f, seg.p, seg.n);
        bb_put(&f, jpg + jn - 2, 2);
        CHECK(vki_meta_read_jpeg(f.p, f.n, &r, NULL) == 0 && !r.xmp, "XMP after SOS is not metadata");
        vki_meta_free(&r);
        free(f.p);
        free(seg.p);
    }
    /* the writer keeps the input's XMP segments, extended ones too, when m has no XMP */
    {
        app_seg(&x, 0xe1, xmp_sig, XMP_SIG_LEN, pk, pn);
        app_seg(&x, 0xe1, ext.p, ext.n, NULL, 0);
        size_t fn, on;
        unsigned char *f = jpeg_insert(jpg, jn, &x, &fn), *o = NULL;
        free(x.p);
        memset(&x, 0, sizeof x);
        vki_meta m = { 0 };
        m.exif = ex;
        m.exif_len = xn;
        m.icc = make_icc(300);
        m.icc_len = 300;
        CHECK(vki_jpeg_add_meta(f, fn, &m, &o, &on, NULL, NULL) == 0 && vki_meta_read_jpeg(o, on, &r, NULL) == 0 &&
                  same(r.xmp, r.xmp_len, pk, pn) && same(r.exif, r.exif_len, ex, xn),
              "EXIF and ICC added: the input's XMP kept");
        vki_meta_free(&r);
        char kinds[64];
        if (o) {
            jpeg_layout(o, on, kinds, NULL, NULL, 63);
            CHECK(count_char(kinds, 'X') == 1 && count_char(kinds, 'x') == 1 && on == fn + 10 + xn + 18 + 300,
                  "EXIF and ICC added: both XMP segments kept (%s)", kinds);
        }
        free(o);
        free(m.icc);
        /* with a new packet: one standard XMP APP1, the new one */
        vki_meta m2 = { 0 };
        m2.xmp = pk2;
        m2.xmp_len = p2n;
        o = NULL;
        CHECK(vki_jpeg_add_meta(f, fn, &m2, &o, &on, NULL, NULL) == 0 && vki_meta_read_jpeg(o, on, &r, NULL) == 0 &&
                  same(r.xmp, r.xmp_len, pk2, p2n),
              "XMP added to a file with XMP: the new packet");
        vki_meta_free(&r);
        if (o) {
            jpeg_layout(o, on, kinds, NULL, NULL, 63);
            CHECK(count_char(kinds, 'X') == 1, "XMP replaced: one standard XMP APP1 (%s)", kinds);
        }
        free(o);
        free(f);
    }

    /* a cut-off XMP APP1 (its length runs past the end): an error, *m emptied */
    {
        bbuf f = { 0 };
        bb_put(&f, "\xff\xd8", 2);
        app_seg(&f, 0xe1, "Exif\0\0", 6, ex, xn);
        const size_t xs = f.n;
        app_seg(&f, 0xe1, xmp_sig, XMP_SIG_LEN, pk, pn);
        for (size_t cut = xs; cut <= f.n; cut++) {
            unsigned char *t = exact_copy(f.p, cut);
            vkimg_err e = { 0 };
            int rc = vki_meta_read_jpeg(t, cut, &r, &e);
            const int empty = !r.exif && !r.icc && !r.xmp && r.xmp_len == 0 && r.exif_len == 0 && r.orientation == 1;
            const int exif_only = rc == 0 && same(r.exif, r.exif_len, ex, xn) && !r.xmp;
            if (cut == f.n)
                CHECK(rc == 0 && same(r.exif, r.exif_len, ex, xn) && same(r.xmp, r.xmp_len, pk, pn),
                      "XMP APP1 whole: read");
            else if (cut >= xs + 4)
                CHECK(rc == VKIMG_E_RUNTIME && empty, "XMP APP1 cut at %zu of %zu: rc %d (%s)", cut, f.n, rc, e.msg);
            else if (cut <= xs + 1)
                CHECK(exif_only, "cut at %zu, before the XMP APP1's marker is whole: EXIF only", cut);
            else
                CHECK(exif_only || (rc == VKIMG_E_RUNTIME && empty), "cut at %zu, in the XMP APP1's length", cut);
            vki_meta_free(&r);
            free(t);
        }
        /* a cut-off extended segment is not metadata: the scan ends quietly */
        f.n = xs;
        app_seg(&f, 0xe1, ext.p, ext.n, NULL, 0);
        for (size_t cut = xs + 4 + XMP_SIG_LEN; cut < f.n; cut += 7) {
            unsigned char *t = exact_copy(f.p, cut);
            CHECK(vki_meta_read_jpeg(t, cut, &r, NULL) == 0 && same(r.exif, r.exif_len, ex, xn) && !r.xmp,
                  "extended XMP APP1 cut at %zu: EXIF kept, no error", cut);
            vki_meta_free(&r);
            free(t);
        }
        free(f.p);
    }
    free(ext.p);
    free(ex);
    free(pk);
    free(pk2);
    free(jpg);
}

/* The one XMP APP1's limit: 65504 bytes written (a segment length of 65535), 65505
 * left out with VKI_META_DROPPED_XMP, the file still valid. */
static void test_xmp_jpeg_limits(void)
{
    CHECK(VKI_JPEG_XMP_MAX == 65504, "VKI_JPEG_XMP_MAX %zu", VKI_JPEG_XMP_MAX);
    size_t jn;
    unsigned char *jpg = make_jpeg(1, &jn);
    int w0, h0;
    unsigned char *px0 = tj_pixels(jpg, jn, &w0, &h0);
    for (int over = 0; over <= 1; over++) {
        for (int others = 0; others <= 1; others++) {
            char what[64];
            snprintf(what, sizeof what, "XMP of %zu bytes%s", VKI_JPEG_XMP_MAX + (size_t)over,
                     others ? " with EXIF and ICC" : "");
            vki_meta m = { 0 }, r;
            m.xmp = make_xmp(8, "limit", VKI_JPEG_XMP_MAX + (size_t)over, &m.xmp_len);
            CHECK(m.xmp_len == VKI_JPEG_XMP_MAX + (size_t)over, "%s: made %zu", what, m.xmp_len);
            if (others) {
                m.exif = make_exif(0, 5, 3, &m.exif_len);
                m.icc = make_icc(700);
                m.icc_len = 700;
            }
            unsigned char *o = NULL;
            size_t on = 0;
            unsigned dropped = 0;
            int rc = vki_jpeg_add_meta(jpg, jn, &m, &o, &on, &dropped, NULL);
            CHECK(rc == 0 && o, "%s: written", what);
            CHECK(dropped == (over ? VKI_META_DROPPED_XMP : 0u), "%s: dropped %u", what, dropped);
            if (rc) {
                vki_meta_free(&m);
                continue;
            }
            CHECK(vki_meta_read_jpeg(o, on, &r, NULL) == 0, "%s: read", what);
            if (over)
                CHECK(!r.xmp && r.xmp_len == 0, "%s: left out", what);
            else
                CHECK(same(r.xmp, r.xmp_len, m.xmp, m.xmp_len), "%s: read back", what);
            CHECK(same(r.exif, r.exif_len, m.exif, m.exif_len) && same(r.icc, r.icc_len, m.icc, m.icc_len),
                  "%s: EXIF and ICC as given", what);
            vki_meta_free(&r);
            CHECK(on == jn + (others ? 10 + m.exif_len + 18 + 700 : 0) + (over ? 0 : 4 + XMP_SIG_LEN + m.xmp_len),
                  "%s: %zu bytes", what, on);
            char kinds[64];
            size_t off[63], end[63];
            const int k = jpeg_layout(o, on, kinds, off, end, 63);
            const char *xp = strchr(kinds, 'X');
            CHECK(over ? !xp : xp && count_char(kinds, 'X') == 1, "%s: segments %s", what, kinds);
            if (!over && xp && xp - kinds < k) {
                const size_t at = off[xp - kinds];
                CHECK(o[at + 2] == 0xff && o[at + 3] == 0xff, "%s: segment length 65535", what);
            }
            int w, h;
            unsigned char *px = tj_pixels(o, on, &w, &h);
            CHECK(px && w == w0 && h == h0 && memcmp(px, px0, (size_t)w * (size_t)h * 3) == 0, "%s: same pixels",
                  what);
            free(px);
            free(o);
            /* dropped may be NULL */
            o = NULL;
            CHECK(vki_jpeg_add_meta(jpg, jn, &m, &o, &on, NULL, NULL) == 0 && o, "%s: dropped NULL", what);
            free(o);
            vki_meta_free(&m);
        }
    }
    free(px0);
    free(jpg);
}

/* A JPEG with EXIF, XMP and ICC cut at every length (exact-size copies): success or
 * VKIMG_E_RUNTIME with *m empty; the XMP exactly when its segment is whole. */
static void test_xmp_jpeg_truncated(void)
{
    size_t jn;
    unsigned char *jpg = make_jpeg(3, &jn);
    vki_meta m = { 0 }, r;
    m.exif = make_exif(1, 6, 3, &m.exif_len);
    m.xmp = make_xmp(6, "cut", 900, &m.xmp_len);
    m.icc = make_icc(1000);
    m.icc_len = 1000;
    unsigned char *o = NULL;
    size_t on = 0;
    CHECK(vki_jpeg_add_meta(jpg, jn, &m, &o, &on, NULL, NULL) == 0, "add");
    char kinds[64];
    size_t off[63], end[63];
    const int k = o ? jpeg_layout(o, on, kinds, off, end, 63) : 0;
    CHECK(k >= 4 && strncmp(kinds, "JEXI", 4) == 0, "layout %s", k ? kinds : "");
    for (size_t cut = 0; k >= 4 && cut <= on; cut++) {
        unsigned char *t = exact_copy(o, cut);
        vkimg_err e = { 0 };
        int rc = vki_meta_read_jpeg(t, cut, &r, &e);
        CHECK(rc == 0 || rc == VKIMG_E_RUNTIME, "cut at %zu: rc %d", cut, rc);
        if (rc)
            CHECK(!r.icc && !r.exif && !r.xmp && r.icc_len == 0 && r.exif_len == 0 && r.xmp_len == 0 &&
                      r.orientation == 1,
                  "cut at %zu: empty after an error", cut);
        else
            CHECK(r.xmp ? cut >= end[2] && same(r.xmp, r.xmp_len, m.xmp, m.xmp_len) : cut < end[2],
                  "cut at %zu (XMP APP1 %zu..%zu): XMP %zu bytes", cut, off[2], end[2], r.xmp_len);
        if (cut >= end[3])
            CHECK(rc == 0 && same(r.icc, r.icc_len, m.icc, m.icc_len) && same(r.exif, r.exif_len, m.exif, m.exif_len) &&
                      same(r.xmp, r.xmp_len, m.xmp, m.xmp_len) && r.orientation == 6,
                  "cut at %zu (metadata ends at %zu): all of it", cut, end[3]);
        else if (cut >= off[2] + 4 && cut < end[2])
            CHECK(rc == VKIMG_E_RUNTIME, "cut at %zu inside the XMP APP1: %d", cut, rc);
        else if (cut == end[2])
            CHECK(rc == 0 && same(r.exif, r.exif_len, m.exif, m.exif_len) && same(r.xmp, r.xmp_len, m.xmp, m.xmp_len) &&
                      !r.icc,
                  "cut at %zu, after the XMP APP1: EXIF and XMP", cut);
        else if (cut == off[2])
            CHECK(rc == 0 && same(r.exif, r.exif_len, m.exif, m.exif_len) && !r.xmp && !r.icc,
                  "cut at %zu, before the XMP APP1: EXIF", cut);
        vki_meta_free(&r);
        free(t);
    }
    free(o);
    vki_meta_free(&m);
    free(jpg);
}

/* XMP alone and beside ICC and EXIF in real PNGs (gray and RGB): read back
 * byte-identical, the same pixels, the chunk order and the iTXt's exact layout. */
static void test_xmp_png(void)
{
    static const xmp_var vars[] = {
        { 0, 0, 0 },
        { 100000, 0, 0 }, /* no JPEG-like limit */
        { 2000, 3000, 1 },
        { 70000, 500, 2 },
    };
    for (int c = 1; c <= 3; c += 2) {
        size_t pn;
        unsigned char *png = make_png(c, &pn);
        vki_meta none;
        CHECK(vki_meta_read_png(png, pn, &none, NULL) == 0 && !none.xmp && none.xmp_len == 0,
              "vki_png_encode output has no XMP");
        vkimg_image ref = { 0 };
        vkimg_err e;
        CHECK(vki_png_decode(png, pn, "ref", 0, &ref, &e) == 0, "reference decode: %s", e.msg);
        for (size_t vi = 0; vi < VKI_ARRAY_LEN(vars); vi++) {
            char what[96];
            snprintf(what, sizeof what, "xmp png c%d xmp %zu icc %zu exif %d", c, vars[vi].xmp, vars[vi].icc,
                     vars[vi].exif);
            vki_meta m = xmp_var_meta(&vars[vi], 3, "png");
            size_t on;
            unsigned char *out = roundtrip(what, vki_png_add_meta, vki_meta_read_png, png, pn, &m, &on);
            if (!out) {
                vki_meta_free(&m);
                continue;
            }
            vkimg_image im = { 0 };
            CHECK(vki_png_decode(out, on, "x", 0, &im, &e) == 0 && im.w == ref.w && im.h == ref.h && im.c == ref.c &&
                      memcmp(im.data, ref.data, vkimg_image_bytes(&ref)) == 0,
                  "%s: same pixels from vki_png_decode", what);
            vkimg_image_free(&im);
            int sw, sh, sc;
            unsigned char *sp = stbi_load_from_memory(out, (int)on, &sw, &sh, &sc, 0);
            CHECK(sp && sw == ref.w && sh == ref.h && sc == c && memcmp(sp, ref.data, vkimg_image_bytes(&ref)) == 0,
                  "%s: same pixels from stb_image", what);
            stbi_image_free(sp);
            char types[64][5];
            const int k = png_chunks(out, on, types, 64);
            CHECK(k >= 4, "%s: chunk structure and CRCs", what);
            if (k >= 4) {
                int i = 1;
                CHECK(strcmp(types[0], "IHDR") == 0, "%s: IHDR first", what);
                if (m.icc)
                    CHECK(strcmp(types[i++], "iCCP") == 0, "%s: iCCP right after IHDR", what);
                if (m.exif)
                    CHECK(strcmp(types[i++], "eXIf") == 0, "%s: eXIf next", what);
                CHECK(strcmp(types[i], "iTXt") == 0 && count_type(types, k, "iTXt") == 1, "%s: one iTXt, at %d",
                      what, i);
                CHECK(index_of(types, k, "IDAT") == i + 1 && strcmp(types[k - 1], "IEND") == 0,
                      "%s: IDAT, IEND follow", what);
                size_t dn = 0;
                const unsigned char *d = png_chunk_data(out, on, i, &dn, NULL);
                CHECK(d && dn == XMP_KW_LEN + 4 + m.xmp_len && memcmp(d, "XML:com.adobe.xmp\0\0\0\0\0", 22) == 0 &&
                          memcmp(d + 22, m.xmp, m.xmp_len) == 0,
                      "%s: iTXt keyword, flag 0, method 0, no language or translated keyword, the packet", what);
            }
            if (!m.icc)
                CHECK(on == pn + (m.exif ? 12 + m.exif_len : 0) + 12 + XMP_KW_LEN + 4 + m.xmp_len,
                      "%s: %zu bytes, nothing else added or lost", what, on);
            free(out);
            vki_meta_free(&m);
        }
        vkimg_image_free(&ref);
        free(png);
    }
}

/* An input's XMP iTXt chunks (before and after IDAT) are replaced by m's XMP, other
 * iTXt and tEXt chunks kept; without XMP in m they stay. */
static void test_xmp_png_replace(void)
{
    size_t pn, on_, n1, n2, n3, zn, bn0, bn;
    unsigned char *png = make_png(3, &pn);
    unsigned char *old = make_xmp(6, "old", 0, &n1), *old2 = make_xmp(2, "old two", 0, &n2);
    unsigned char *nw = make_xmp(4, "new", 0, &n3), *z = zlib_of(old2, n2, &zn);
    bbuf x = { 0 }, desc = { 0 };
    png_chunk(&x, "PLTE", "\0\0\0\xff\xff\xff", 6, 0); /* a suggested palette: the metadata goes before it */
    png_chunk(&x, "tEXt", "Comment\0hello", 13, 0);
    itxt_chunk(&desc, "Description", 0, 0, "en", "Beschreibung", "a description", 13, 0);
    bb_put(&x, desc.p, desc.n);
    itxt_chunk(&x, xmp_keyword, 0, 0, "", "", old, n1, 0);
    unsigned char *base0 = png_insert(png, pn, &x, 0, &bn0);
    x.n = 0;
    itxt_chunk(&x, xmp_keyword, 1, 0, "", "", z, zn, 0);
    unsigned char *base = png_insert(base0, bn0, &x, 1, &bn);
    free(x.p);
    vki_meta r;
    CHECK(vki_meta_read_png(base, bn, &r, NULL) == 0 && same(r.xmp, r.xmp_len, old, n1),
          "two XMP iTXt (before and after IDAT): the first");
    vki_meta_free(&r);
    vkimg_image ref = { 0 };
    vkimg_err e;
    CHECK(vki_png_decode(png, pn, "ref", 0, &ref, &e) == 0, "reference decode");

    vki_meta m = { 0 };
    m.xmp = nw;
    m.xmp_len = n3;
    unsigned char *o = NULL;
    char types[64][5];
    CHECK(vki_png_add_meta(base, bn, &m, &o, &on_, NULL, NULL) == 0 && vki_meta_read_png(o, on_, &r, NULL) == 0 &&
              same(r.xmp, r.xmp_len, nw, n3),
          "XMP replaced: the new packet read");
    vki_meta_free(&r);
    if (o) {
        const int k = png_chunks(o, on_, types, 64);
        CHECK(k > 0 && count_type(types, k, "iTXt") == 2 && index_of(types, k, "iTXt") == 1 &&
                  index_of(types, k, "PLTE") == 2 && count_type(types, k, "tEXt") == 1,
              "XMP replaced: the new iTXt after IHDR, before PLTE; the Description iTXt and tEXt kept");
        int ndesc = 0, after_idat = 0;
        const int idat = index_of(types, k, "IDAT");
        for (int i = 0; i < k; i++) {
            size_t dn = 0;
            const unsigned char *d = png_chunk_data(o, on_, i, &dn, NULL);
            if (strcmp(types[i], "iTXt") == 0) {
                ndesc += d && dn == desc.n - 12 && memcmp(d, desc.p + 8, dn) == 0;
                after_idat += i > idat;
            }
        }
        CHECK(ndesc == 1 && after_idat == 0,
              "XMP replaced: Description iTXt byte-identical (%d), no XMP after IDAT (%d)", ndesc, after_idat);
        vkimg_image im = { 0 };
        CHECK(vki_png_decode(o, on_, "x", 0, &im, &e) == 0 && memcmp(im.data, ref.data, vkimg_image_bytes(&ref)) == 0,
              "XMP replaced: same pixels");
        vkimg_image_free(&im);
        CHECK(on_ == bn - (12 + XMP_KW_LEN + 4 + n1) - (12 + XMP_KW_LEN + 4 + zn) + 12 + XMP_KW_LEN + 4 + n3,
              "XMP replaced: both old XMP chunks out, the new one in (%zu bytes)", on_);
    }
    free(o);
    /* EXIF and ICC only: the XMP chunks stay */
    vki_meta m2 = { 0 };
    m2.exif = make_exif(0, 5, 3, &m2.exif_len);
    m2.icc = make_icc(400);
    m2.icc_len = 400;
    o = NULL;
    CHECK(vki_png_add_meta(base, bn, &m2, &o, &on_, NULL, NULL) == 0 && vki_meta_read_png(o, on_, &r, NULL) == 0 &&
              same(r.xmp, r.xmp_len, old, n1) && same(r.exif, r.exif_len, m2.exif, m2.exif_len) && r.orientation == 5,
          "EXIF and ICC added: the input's XMP kept");
    vki_meta_free(&r);
    if (o) {
        const int k = png_chunks(o, on_, types, 64);
        CHECK(k > 0 && count_type(types, k, "iTXt") == 3 && index_of(types, k, "iCCP") == 1 &&
                  index_of(types, k, "eXIf") == 2 && index_of(types, k, "PLTE") == 3,
              "EXIF and ICC added: iCCP, eXIf before PLTE, all three iTXt kept");
    }
    free(o);
    vki_meta_free(&m2);
    vkimg_image_free(&ref);
    free(desc.p);
    free(base);
    free(base0);
    free(z);
    free(nw);
    free(old);
    free(old2);
    free(png);
}

/* The reader's iTXt cases: plain and compressed, language tags, after IDAT, bad CRCs,
 * broken and empty streams, missing NULs, other keywords, one running past the end,
 * the zlib bomb. */
static void test_xmp_png_read(void)
{
    size_t pn, xn, p2n, en;
    unsigned char *png = make_png(3, &pn);
    unsigned char *pk = make_xmp(1, "itxt \xe6\x97\xa5\xe6\x9c\xac", 1500, &xn), *pk2 = make_xmp(8, "second", 0, &p2n);
    unsigned char *ex = make_exif(0, 7, 3, &en);
    size_t zn, zen;
    unsigned char *z = zlib_of(pk, xn, &zn), *zempty = zlib_of("", 0, &zen);
    unsigned char *zbad = exact_copy(z, zn);
    zbad[zn / 2] ^= 0x5a;
    zbad[zn - 1] ^= 0x01; /* the Adler-32 too */
    static const struct {
        const char *what, *kw;
        int flag, method;
        const char *lang, *tkw;
        int text; /* 0 the packet, 1 its zlib, 2 broken zlib, 3 nothing, 4 zlib of nothing */
        int bad_crc, at_end, want;
    } cases[] = {
        { "plain", "XML:com.adobe.xmp", 0, 0, "", "", 0, 0, 0, 1 },
        { "plain, language and translated keyword", "XML:com.adobe.xmp", 0, 0, "en-US", "XMP-Daten \xc3\xbc", 0, 0, 0,
          1 },
        { "plain after IDAT", "XML:com.adobe.xmp", 0, 0, "", "", 0, 0, 1, 1 },
        { "compressed", "XML:com.adobe.xmp", 1, 0, "", "", 1, 0, 0, 1 },
        { "compressed, language, after IDAT", "XML:com.adobe.xmp", 1, 0, "de", "XMP", 1, 0, 1, 1 },
        { "bad CRC", "XML:com.adobe.xmp", 0, 0, "", "", 0, 1, 0, 0 },
        { "compressed, bad CRC", "XML:com.adobe.xmp", 1, 0, "", "", 1, 1, 0, 0 },
        { "compression method 1", "XML:com.adobe.xmp", 1, 1, "", "", 1, 0, 0, 0 },
        { "broken zlib", "XML:com.adobe.xmp", 1, 0, "", "", 2, 0, 0, 0 },
        { "plain, empty text", "XML:com.adobe.xmp", 0, 0, "", "", 3, 0, 0, 0 },
        { "compressed, empty text", "XML:com.adobe.xmp", 1, 0, "", "", 4, 0, 0, 0 },
        { "keyword XML:com.adobe.xmpX", "XML:com.adobe.xmpX", 0, 0, "", "", 0, 0, 0, 0 },
        { "keyword XML:com.adobe.xm", "XML:com.adobe.xm", 0, 0, "", "", 0, 0, 0, 0 },
        { "keyword xml:com.adobe.xmp", "xml:com.adobe.xmp", 0, 0, "", "", 0, 0, 0, 0 },
        { "keyword Description", "Description", 0, 0, "", "", 0, 0, 0, 0 },
    };
    vki_meta r;
    for (size_t i = 0; i < VKI_ARRAY_LEN(cases); i++) {
        bbuf x = { 0 };
        const void *text = cases[i].text == 0 ? (const void *)pk : cases[i].text == 1 ? (const void *)z
                           : cases[i].text == 2 ? (const void *)zbad : cases[i].text == 3 ? (const void *)""
                                                                                           : (const void *)zempty;
        const size_t tn = cases[i].text == 0 ? xn : cases[i].text <= 2 ? zn : cases[i].text == 3 ? 0 : zen;
        itxt_chunk(&x, cases[i].kw, cases[i].flag, cases[i].method, cases[i].lang, cases[i].tkw, text, tn,
                   cases[i].bad_crc);
        size_t fn;
        unsigned char *f = png_insert(png, pn, &x, cases[i].at_end, &fn);
        free(x.p);
        vkimg_err e = { 0 };
        int rc = vki_meta_read_png(f, fn, &r, &e);
        CHECK(rc == 0, "iTXt %s: %s", cases[i].what, e.msg);
        CHECK(cases[i].want ? same(r.xmp, r.xmp_len, pk, xn) : !r.xmp && r.xmp_len == 0, "iTXt %s: XMP %s (%zu bytes)",
              cases[i].what, cases[i].want ? "read" : "ignored", r.xmp_len);
        CHECK(r.orientation == 1, "iTXt %s: the XMP's tiff:Orientation is not the EXIF orientation", cases[i].what);
        vki_meta_free(&r);
        free(f);
    }
    /* missing NULs, chunks too short for the layout: ignored */
    {
        static const struct {
            const char *d;
            size_t n;
        } raw[] = {
            { "XML:com.adobe.xmp\0", 18 },
            { "XML:com.adobe.xmp\0\0", 19 },
            { "XML:com.adobe.xmp\0\0\0", 20 },
            { "XML:com.adobe.xmp\0\0\0en", 22 },
            { "XML:com.adobe.xmp\0\0\0en\0<x:xmpmeta/>", 36 },
            { "XML:com.adobe.xmp", 17 },
        };
        for (size_t i = 0; i < VKI_ARRAY_LEN(raw); i++) {
            bbuf x = { 0 };
            png_chunk(&x, "iTXt", raw[i].d, raw[i].n, 0);
            size_t fn;
            unsigned char *f = png_insert(png, pn, &x, 0, &fn);
            free(x.p);
            CHECK(vki_meta_read_png(f, fn, &r, NULL) == 0 && !r.xmp, "iTXt of %zu bytes without its NULs: ignored",
                  raw[i].n);
            vki_meta_free(&r);
            free(f);
        }
    }
    /* two of them */
    {
        static const struct {
            const char *what;
            int first_bad, second_at_end;
            int want; /* 1 pk, 2 pk2 */
        } two[] = {
            { "bad CRC, then good", 1, 0, 2 },
            { "two good", 0, 0, 1 },
            { "before and after IDAT", 0, 1, 1 },
        };
        for (size_t i = 0; i < VKI_ARRAY_LEN(two); i++) {
            bbuf x = { 0 }, y = { 0 };
            unsigned char *z2 = zlib_of(pk2, p2n, &zn);
            itxt_chunk(&x, xmp_keyword, 0, 0, "", "", pk, xn, two[i].first_bad);
            itxt_chunk(two[i].second_at_end ? &y : &x, xmp_keyword, 1, 0, "", "", z2, zn, 0);
            free(z2);
            size_t f1n, fn;
            unsigned char *f1 = png_insert(png, pn, &x, 0, &f1n), *f = f1;
            fn = f1n;
            if (y.n) {
                f = png_insert(f1, f1n, &y, 1, &fn);
                free(f1);
            }
            free(x.p);
            free(y.p);
            CHECK(vki_meta_read_png(f, fn, &r, NULL) == 0 &&
                      (two[i].want == 1 ? same(r.xmp, r.xmp_len, pk, xn) : same(r.xmp, r.xmp_len, pk2, p2n)),
                  "iTXt %s: the %s", two[i].what, two[i].want == 1 ? "first" : "second");
            vki_meta_free(&r);
            free(f);
        }
    }
    /* the XMP in a tEXt or zTXt: not iTXt, not read */
    {
        bbuf x = { 0 }, d = { 0 };
        bb_put(&d, xmp_keyword, XMP_KW_LEN);
        bb_put(&d, pk, xn);
        png_chunk(&x, "tEXt", d.p, d.n, 0);
        size_t fn;
        unsigned char *f = png_insert(png, pn, &x, 0, &fn);
        CHECK(vki_meta_read_png(f, fn, &r, NULL) == 0 && !r.xmp, "tEXt XML:com.adobe.xmp: not read");
        vki_meta_free(&r);
        free(f);
        free(x.p);
        free(d.p);
    }
    /* an XMP iTXt whose length runs past the end of the data */
    {
        bbuf f = { 0 };
        bb_put(&f, png, 33);
        png_chunk(&f, "eXIf", ex, en, 0);
        bb_be32(&f, 1000);
        bb_str(&f, "iTXt");
        bb_put(&f, "XML:com.adobe.xmp\0\0\0\0\0", 22);
        bb_put(&f, pk, 100);
        vkimg_err e = { 0 };
        int rc = vki_meta_read_png(f.p, f.n, &r, &e);
        CHECK(rc == VKIMG_E_RUNTIME && !r.xmp && !r.exif && r.orientation == 1,
              "XMP iTXt running past the end: %d %s", rc, e.msg);
        vki_meta_free(&r);
        free(f.p);
    }
    /* the zlib bomb: inflating over VKI_XMP_MAX is refused; exactly the cap is read */
    {
        unsigned char *zeros = calloc(1, VKI_XMP_MAX + 1);
        for (int over = 1; over >= 0; over--) {
            size_t bzn;
            unsigned char *bz = zlib_of(zeros, VKI_XMP_MAX + (size_t)over, &bzn);
            bbuf x = { 0 };
            itxt_chunk(&x, xmp_keyword, 1, 0, "", "", bz, bzn, 0);
            size_t fn;
            unsigned char *f = png_insert(png, pn, &x, 0, &fn);
            free(x.p);
            free(bz);
            vkimg_err e = { 0 };
            int rc = vki_meta_read_png(f, fn, &r, &e);
            if (over)
                CHECK(rc == VKIMG_E_RUNTIME && !r.xmp && r.xmp_len == 0,
                      "XMP iTXt of %zu compressed bytes inflating to 64 MiB + 1 refused: %d %s", bzn, rc, e.msg);
            else
                CHECK(rc == 0 && r.xmp_len == VKI_XMP_MAX && memcmp(r.xmp, zeros, VKI_XMP_MAX) == 0,
                      "XMP iTXt of exactly 64 MiB read (%zu)", r.xmp_len);
            vki_meta_free(&r);
            free(f);
        }
        free(zeros);
    }
    free(zbad);
    free(zempty);
    free(z);
    free(ex);
    free(pk);
    free(pk2);
    free(png);
}

/* PNGs with XMP cut at every length (exact-size copies): the writer's (iCCP, eXIf,
 * iTXt after IHDR) and one with a compressed iTXt after IDAT. */
static void test_xmp_png_truncated(void)
{
    size_t pn;
    unsigned char *png = make_png(1, &pn);
    vki_meta m = { 0 }, r;
    m.icc = make_icc(800);
    m.icc_len = 800;
    m.exif = make_exif(0, 2, 3, &m.exif_len);
    m.xmp = make_xmp(2, "cut png", 600, &m.xmp_len);
    unsigned char *files[2] = { NULL, NULL };
    size_t fns[2] = { 0, 0 };
    CHECK(vki_png_add_meta(png, pn, &m, &files[0], &fns[0], NULL, NULL) == 0, "add");
    {
        size_t zn;
        unsigned char *z = zlib_of(m.xmp, m.xmp_len, &zn);
        bbuf x = { 0 };
        itxt_chunk(&x, xmp_keyword, 1, 0, "fr", "XMP", z, zn, 0);
        files[1] = png_insert(png, pn, &x, 1, &fns[1]);
        free(x.p);
        free(z);
    }
    for (int fi = 0; fi < 2; fi++) {
        const unsigned char *o = files[fi];
        const size_t on = fns[fi];
        char types[64][5];
        const int k = o ? png_chunks(o, on, types, 64) : -1;
        int ix = -1;
        for (int i = 0; i < k; i++)
            if (strcmp(types[i], "iTXt") == 0)
                ix = i;
        size_t xs = 0, dn = 0;
        CHECK(ix > 0 && png_chunk_data(o, on, ix, &dn, &xs), "file %d: the iTXt", fi);
        if (ix <= 0)
            continue;
        const size_t xe = xs + 12 + dn;
        for (size_t cut = 0; cut <= on; cut++) {
            unsigned char *t = exact_copy(o, cut);
            vkimg_err e = { 0 };
            int rc = vki_meta_read_png(t, cut, &r, &e);
            if (cut < 8)
                CHECK(rc == VKIMG_E_RUNTIME, "file %d cut at %zu: not a PNG", fi, cut);
            CHECK(rc == 0 || rc == VKIMG_E_RUNTIME, "file %d cut at %zu: rc %d", fi, cut, rc);
            if (rc)
                CHECK(!r.icc && !r.exif && !r.xmp && r.xmp_len == 0 && r.orientation == 1,
                      "file %d cut at %zu: empty after an error", fi, cut);
            if (cut >= xe)
                CHECK(rc == 0 && same(r.xmp, r.xmp_len, m.xmp, m.xmp_len), "file %d cut at %zu: the XMP", fi, cut);
            else if (cut >= xs + 8)
                CHECK(rc == VKIMG_E_RUNTIME, "file %d cut at %zu inside the iTXt (%zu..%zu): %d", fi, cut, xs, xe, rc);
            else
                CHECK(!r.xmp, "file %d cut at %zu, before the iTXt: no XMP", fi, cut);
            if (fi == 0 && cut >= xs && cut < xs + 8)
                CHECK(rc == 0 && same(r.icc, r.icc_len, m.icc, m.icc_len) &&
                          same(r.exif, r.exif_len, m.exif, m.exif_len),
                      "file 0 cut at %zu, before the iTXt's data: ICC and EXIF", cut);
            if (fi == 1 && cut >= 8 && cut < xs + 8)
                CHECK(rc == 0, "file 1 cut at %zu, before the iTXt's data: %d %s", cut, rc, e.msg);
            vki_meta_free(&r);
            free(t);
        }
    }
    free(files[0]);
    free(files[1]);
    vki_meta_free(&m);
    free(png);
}

/* A TIFF (one 1x1 IFD) whose tag 700 has the type and count given, its values the
 * bytes of data (inline when they fit in 4 bytes). */
static unsigned char *tiff_with_xmp(int le, unsigned type, uint32_t count, const unsigned char *data, size_t *len)
{
    void (*u16)(bbuf *, unsigned) = le ? bb_le16 : bb_be16;
    void (*u32)(bbuf *, uint32_t) = le ? bb_le32 : bb_be32;
    const size_t sz = (size_t)count * (type == 3 ? 2 : 1);
    bbuf b = { 0 };
    bb_put(&b, le ? "II*\0" : "MM\0*", 4);
    u32(&b, 8);
    u16(&b, 3);
    u16(&b, 256), u16(&b, 3), u32(&b, 1), u16(&b, 1), u16(&b, 0);
    u16(&b, 257), u16(&b, 3), u32(&b, 1), u16(&b, 1), u16(&b, 0);
    u16(&b, 700), u16(&b, type), u32(&b, count);
    if (sz <= 4) {
        bb_put(&b, data, sz);
        bb_put(&b, "\0\0\0\0", 4 - sz);
    } else {
        u32(&b, 8 + 2 + 3 * 12 + 4);
    }
    u32(&b, 0);
    if (sz > 4)
        bb_put(&b, data, sz);
    *len = b.n;
    return b.p;
}

/* WebP "XMP " chunks and TIFF tag 700, in files built by hand. */
static void test_xmp_webp_tiff(void)
{
    size_t pn, p2n;
    unsigned char *pk = make_xmp(5, "webp", 1001, &pn), *pk2 = make_xmp(3, "webp two", 0, &p2n);
    vki_meta r;
    /* WebP: an empty XMP chunk, then an odd-sized one (padded), then another */
    {
        bbuf w = { 0 };
        bb_put(&w, "RIFF\0\0\0\0WEBP", 12);
        bb_riff_chunk(&w, "VP8X", "\x04\0\0\0\0\0\0\0\0\0", 10);
        bb_riff_chunk(&w, "XMP ", NULL, 0);
        const size_t xo = w.n;
        bb_riff_chunk(&w, "XMP ", pk, pn);
        bb_riff_chunk(&w, "XMP ", pk2, p2n);
        const uint32_t rs = (uint32_t)(w.n - 8);
        memcpy(w.p + 4, (unsigned char[4]){ (unsigned char)rs, (unsigned char)(rs >> 8), (unsigned char)(rs >> 16),
                                            (unsigned char)(rs >> 24) },
               4);
        CHECK(pn % 2 == 1, "an odd-sized packet (%zu)", pn);
        CHECK(vki_meta_read_webp(w.p, w.n, &r, NULL) == 0 && same(r.xmp, r.xmp_len, pk, pn) && r.orientation == 1,
              "WebP: the first non-empty XMP chunk");
        vki_meta_free(&r);
        CHECK(vki_meta_read(w.p, w.n, &r, NULL) == 0 && same(r.xmp, r.xmp_len, pk, pn), "WebP through vki_meta_read");
        vki_meta_free(&r);
        CHECK(vki_meta_read_webp(w.p, xo, &r, NULL) == 0 && !r.xmp, "WebP with an empty XMP chunk only: no XMP");
        vki_meta_free(&r);
        for (size_t cut = xo; cut <= w.n; cut++) {
            unsigned char *t = exact_copy(w.p, cut);
            int rc = vki_meta_read_webp(t, cut, &r, NULL);
            if (cut > xo + 8 + pn)
                CHECK(rc == 0 && same(r.xmp, r.xmp_len, pk, pn), "WebP cut at %zu: the XMP", cut);
            else if (cut >= xo + 8 && cut < xo + 8 + pn)
                CHECK(rc == VKIMG_E_RUNTIME && !r.xmp && r.xmp_len == 0, "WebP cut at %zu inside the XMP chunk: %d",
                      cut, rc);
            else if (cut < xo + 8)
                CHECK(rc == 0 && !r.xmp, "WebP cut at %zu, before the XMP chunk's data", cut);
            vki_meta_free(&r);
            free(t);
        }
        free(w.p);
    }
    /* TIFF tag 700: BYTE or UNDEFINED with count > 0 */
    for (int le = 0; le <= 1; le++) {
        static const struct {
            unsigned type;
            uint32_t count;
            int want;
        } tc[] = {
            { 1, 0, 1 },  /* BYTE, the packet (count set below) */
            { 7, 0, 1 },  /* UNDEFINED, the packet */
            { 7, 3, 1 },  /* UNDEFINED, 3 bytes inline */
            { 1, 4, 1 },  /* BYTE, 4 bytes inline */
            { 2, 0, 0 },  /* ASCII */
            { 3, 8, 0 },  /* SHORT */
            { 1, ~0u, 0 }, /* BYTE, count 0 */
        };
        for (size_t i = 0; i < VKI_ARRAY_LEN(tc); i++) {
            const uint32_t count = tc[i].count == ~0u ? 0 : tc[i].count ? tc[i].count : (uint32_t)pn;
            size_t tn;
            unsigned char *t = tiff_with_xmp(le, tc[i].type, count, pk, &tn);
            vkimg_err e = { 0 };
            int rc = vki_meta_read_tiff(t, tn, &r, &e);
            CHECK(rc == 0, "TIFF tag 700 type %u count %u (le %d): %s", tc[i].type, count, le, e.msg);
            CHECK(tc[i].want ? same(r.xmp, r.xmp_len, pk, count) : !r.xmp && r.xmp_len == 0,
                  "TIFF tag 700 type %u count %u (le %d): XMP %zu bytes", tc[i].type, count, le, r.xmp_len);
            vki_meta_free(&r);
            if (tc[i].want) {
                CHECK(vki_meta_read(t, tn, &r, NULL) == 0 && same(r.xmp, r.xmp_len, pk, count),
                      "TIFF through vki_meta_read");
                vki_meta_free(&r);
            }
            free(t);
        }
    }
    free(pk);
    free(pk2);
}

/* ------------------------------------------------------------------ Photoshop resources */

/* Photoshop's image resources: an IPTC record of iim bytes, then (big) a resource of
 * 70001 bytes with a name of 3 bytes; every size odd, so each is padded. */
static unsigned char *make_irb(size_t iim, bool big, size_t *len)
{
    bbuf b = { 0 };
    bb_put(&b, "8BIM\x04\x04\x00\x00", 8);
    bb_be32(&b, (uint32_t)iim);
    for (size_t i = 0; i < iim; i++)
        bb_u8(&b, (unsigned)(i ? 'a' + i % 26 : 0x1c));
    if (iim & 1)
        bb_u8(&b, 0);
    if (big) {
        bb_put(&b, "8BIM\x0f\xa0\x03" "abc", 10);
        bb_be32(&b, 70001);
        for (size_t i = 0; i < 70001; i++)
            bb_u8(&b, (unsigned)t_rand(&g_seed) & 255);
        bb_u8(&b, 0);
    }
    *len = b.n;
    return b.p;
}

/* vki_irb_find and vki_irb_whole on blocks whole, cut and malformed */
static void test_irb(void)
{
    size_t n, len = 0;
    unsigned char *r = make_irb(37, true, &n);
    const unsigned char *d = vki_irb_find(r, n, VKI_IRB_IPTC, &len);
    CHECK(d == r + 12 && len == 37, "the IPTC record found at %td, %zu bytes", d ? d - r : -1, len);
    d = vki_irb_find(r, n, 0x0fa0, &len);
    CHECK(d == r + 12 + 38 + 14 && len == 70001, "the second resource at %td, %zu bytes", d ? d - r : -1, len);
    CHECK(!vki_irb_find(r, n, 0x0405, &len), "no resource 0x0405");
    CHECK(vki_irb_whole(r, n) && vki_irb_whole(r, n - 1), "whole (the last padding byte may be missing)");
    size_t bad = 0;
    for (size_t k = 0; k < n - 1; k++) { /* every cut: not whole; what is found lies inside the cut */
        unsigned char *c = exact_copy(r, k);
        bad += vki_irb_whole(c, k) != (k == 49 || k == 50); /* (the first resource alone is whole) */
        const unsigned char *f = vki_irb_find(c, k, 0x0fa0, &len);
        bad += f != NULL;
        f = vki_irb_find(c, k, VKI_IRB_IPTC, &len);
        bad += f ? (size_t)(f - c) + len > k : k >= 49;
        free(c);
    }
    CHECK(bad == 0, "%zu cuts judged wrongly", bad);
    r[50 + 10] = 0xff; /* the second resource's size past the end */
    CHECK(!vki_irb_whole(r, n) && !vki_irb_find(r, n, 0x0fa0, &len), "a size past the end");
    r[0] = 'X';
    CHECK(!vki_irb_whole(r, n) && !vki_irb_find(r, n, VKI_IRB_IPTC, &len), "not 8BIM");
    CHECK(!vki_irb_whole(NULL, 0) && !vki_irb_whole(r, 0), "empty");
    free(r);
}

/* Photoshop's resources in real JPEGs: written as APP13 "Photoshop 3.0" segments of at
 * most 65519 bytes after the ICC profile, read back joined, byte for byte; an input's
 * own replaced; segments that do not join into whole resources, or one cut off, give
 * none (the cut an error). */
static void test_irb_jpeg(void)
{
    size_t jn;
    unsigned char *jpg = make_jpeg(3, &jn);
    int w0, h0;
    unsigned char *px0 = tj_pixels(jpg, jn, &w0, &h0);
    for (int big = 0; big < 2; big++) {
        char what[64];
        snprintf(what, sizeof what, "Photoshop resources, big %d", big);
        vki_meta m = { 0 };
        m.iptc = make_irb(21, big, &m.iptc_len);
        m.icc = make_icc(300);
        m.icc_len = 300;
        size_t on;
        unsigned char *o = roundtrip(what, vki_jpeg_add_meta, vki_meta_read_jpeg, jpg, jn, &m, &on);
        if (!o) {
            vki_meta_free(&m);
            continue;
        }
        int mk[64], seq[8], nseq, count;
        const int k = jpeg_markers(o, on, mk, 64, seq, &nseq, &count);
        int n13 = 0, after_icc = 1;
        for (int i = 0; i < k; i++) {
            n13 += mk[i] == 0xed;
            if (mk[i] == 0xe2 && n13)
                after_icc = 0;
        }
        CHECK(n13 == (big ? 2 : 1) && after_icc, "%s: %d APP13 segments, after the ICC profile %d", what, n13,
              after_icc);
        int w, h;
        unsigned char *px = tj_pixels(o, on, &w, &h);
        CHECK(px && px0 && w == w0 && h == h0 && !memcmp(px, px0, (size_t)w * (size_t)h * 3), "%s: same pixels", what);
        free(px);
        /* replaced by other resources; kept when the metadata has none */
        vki_meta m2 = { 0 }, r;
        m2.iptc = make_irb(13, false, &m2.iptc_len);
        size_t on2 = 0;
        unsigned char *o2 = NULL;
        CHECK(vki_jpeg_add_meta(o, on, &m2, &o2, &on2, NULL, NULL) == 0 && vki_meta_read_jpeg(o2, on2, &r, NULL) == 0 &&
                  same(r.iptc, r.iptc_len, m2.iptc, m2.iptc_len) && same(r.icc, r.icc_len, m.icc, m.icc_len),
              "%s: replaced (the profile kept)", what);
        vki_meta_free(&r);
        vki_meta m3 = { 0 };
        m3.xmp = (unsigned char *)strdup("<x/>");
        m3.xmp_len = 4;
        unsigned char *o3 = NULL;
        size_t on3 = 0;
        CHECK(o2 && vki_jpeg_add_meta(o2, on2, &m3, &o3, &on3, NULL, NULL) == 0 &&
                  vki_meta_read_jpeg(o3, on3, &r, NULL) == 0 && same(r.iptc, r.iptc_len, m2.iptc, m2.iptc_len),
              "%s: kept beside new XMP", what);
        vki_meta_free(&r);
        /* every cut: the resources whole or absent, none after an error; a cut inside an APP13 an error */
        size_t bad = 0, app13 = 0;
        for (size_t cut = 2; cut < on; cut++) {
            unsigned char *c = exact_copy(o, cut);
            vkimg_err e;
            const int rc = vki_meta_read_jpeg(c, cut, &r, &e);
            bad += rc ? r.iptc != NULL : r.iptc && !same(r.iptc, r.iptc_len, m.iptc, m.iptc_len);
            app13 += rc && strstr(e.msg, "APP13") != NULL;
            if (!rc)
                vki_meta_free(&r);
            free(c);
        }
        CHECK(bad == 0 && app13 >= m.iptc_len, "%s: %zu cuts read wrongly, %zu APP13 errors", what, bad, app13);
        free(o);
        free(o2);
        free(o3);
        vki_meta_free(&m);
        vki_meta_free(&m2);
        vki_meta_free(&m3);
    }
    /* APP13 segments that are not whole resources (one of two missing, or not 8BIM): none */
    size_t n;
    unsigned char *irb = make_irb(21, true, &n);
    bbuf extra = { 0 }, junk = { 0 };
    app_seg(&extra, 0xed, "Photoshop 3.0", 14, irb, 65519); /* the first of two segments only */
    app_seg(&junk, 0xed, "Photoshop 3.0", 14, "not resources", 13);
    size_t fn, gn;
    unsigned char *f = jpeg_insert(jpg, jn, &extra, &fn), *g = jpeg_insert(jpg, jn, &junk, &gn);
    vki_meta r;
    CHECK(vki_meta_read_jpeg(f, fn, &r, NULL) == 0 && !r.iptc, "a segment missing: no resources");
    vki_meta_free(&r);
    CHECK(vki_meta_read_jpeg(g, gn, &r, NULL) == 0 && !r.iptc, "not 8BIM blocks: no resources");
    vki_meta_free(&r);
    free(f), free(g), free(extra.p), free(junk.p), free(irb), free(px0), free(jpg);
}

int main(void)
{
    test_orientation();
    test_jpeg();
    test_jpeg_limits();
    test_jpeg_malformed();
    test_png();
    test_png_chunks();
    test_across_formats();
    test_icc_fits();
    test_xmp_orientation();
    test_xmp_meta_set_orientation();
    test_xmp_jpeg();
    test_xmp_jpeg_read();
    test_xmp_jpeg_limits();
    test_xmp_jpeg_truncated();
    test_xmp_png();
    test_xmp_png_replace();
    test_xmp_png_read();
    test_xmp_png_truncated();
    test_xmp_webp_tiff();
    test_irb();
    test_irb_jpeg();
    return t_done("test_meta");
}
