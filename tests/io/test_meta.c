/* Metadata (src/io/meta.c): EXIF orientation in both byte orders; ICC profiles and EXIF
 * blocks added to real JPEG (TurboJPEG) and PNG (vki_png_encode) files and read back
 * byte-identical, the files still decoding to the same pixels; the segment and chunk
 * layout the writers produce; replacement of existing metadata; the limits; and
 * malformed input (truncations at every length, bad IFD offsets and counts, ICC
 * segments missing or duplicated, bad CRCs and zlib streams, an iCCP zlib bomb over
 * the cap). No device. */
#include "bbuf.h"
#include "exif_util.h"
#include "io/io_priv.h"
#include "io/meta.h"
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
    int want_o = m->exif ? vki_exif_orientation(m->exif, m->exif_len) : 1;
    CHECK(r.orientation == want_o, "%s: orientation %d, expected %d", what, r.orientation, want_o);
    CHECK((r.icc == NULL) == (r.icc_len == 0) && (r.exif == NULL) == (r.exif_len == 0), "%s: NULL iff empty", what);
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
        size_t sos = 2;
        while (!(jpg[sos] == 0xff && jpg[sos + 1] == 0xda))
            sos += 2 + ((size_t)jpg[sos + 2] << 8 | jpg[sos + 3]);
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
        bb_put(&f, "\xff\xd8", 2);
        app_seg(&f, 0xe1, "Exif\0\0", 6, ex, xn);
        bb_put(&f, "\xff\xe5\x40\x00junk", 8);
        CHECK(vki_meta_read_jpeg(f.p, f.n, &r, NULL) == 0 && same(r.exif, r.exif_len, ex, xn),
              "APP5 cut off after the EXIF: EXIF kept");
        vki_meta_free(&r);
        /* garbage where a marker should be */
        f.n = 0;
        bb_put(&f, "\xff\xd8", 2);
        app_seg(&f, 0xe1, "Exif\0\0", 6, ex, xn);
        bb_put(&f, "garbage", 7);
        icc_seg(&f, 1, 1, icc, 100);
        CHECK(vki_meta_read_jpeg(f.p, f.n, &r, NULL) == 0 && r.exif && !r.icc, "garbage ends the scan");
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
    return t_done("test_meta");
}
