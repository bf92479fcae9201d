/* The checks of the fuzz targets (tests/fuzz/fuzz_*.c, libFuzzer) on one input,
 * shared with the regression test (tests/io/test_fuzz_regress.c), which runs them
 * on the seed corpora and on every input a campaign ever found (tests/fuzz/regress)
 * in the normal test suite, under ASan+UBSan in CI. No device anywhere.
 *
 * Each fuzz_one_* function takes arbitrary bytes and fails through FUZZ_FAIL
 * (abort: a finding) when a documented promise is broken; crashes, leaks, hangs
 * and undefined behaviour are found by the sanitizers and libFuzzer themselves.
 *
 *   fuzz_one_load   vkimg_load_memory (every format: magic bytes pick the one
 *                   decoder; again with shrink-on-load, and JPEGs coded for
 *                   the device: vkimg_load_opts.jpeg_coded, jpeg_entropy) and the metadata
 *                   readers (vki_meta_read: EXIF, ICC), the metadata writers
 *                   on what was read (read(add(file, m)) = m, the pixels
 *                   unchanged) and the EXIF orientation rewrite
 *   fuzz_one_ktx2   vki_ktx2_decode, and decode(encode(levels)) = levels
 *   fuzz_one_parse  vkimg_pipeline_parse; parse(describe(p)) describes as p; the
 *                   stage shapes (vki_pipeline_shape) of a few input sizes
 *   fuzz_one_png    an image made from the bytes, vki_png_encode_ex (8/16-bit,
 *                   in bands of rows or one stream,
 *                   1..4 channels, level 0..12, split IDAT, with or without
 *                   metadata), decoded again: the same pixels and metadata */
#ifndef VKIMG_FUZZ_H
#define VKIMG_FUZZ_H

#include "core/coded.h"
#include "io/io_priv.h"
#include "io/ktx2.h"
#include "io/meta.h"
#include "pipeline/pipeline.h"
#include "vkimg/vkimg.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_FAIL
#define FUZZ_FAIL(...)                                                                                       \
    do {                                                                                                     \
        fprintf(stderr, "fuzz: check failed at %s:%d: ", __FILE__, __LINE__);                                \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        abort();                                                                                             \
    } while (0)
#endif
#define FUZZ_CHECK(cond, ...)                                                                                \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "fuzz: not true: %s\n", #cond);                                                  \
            FUZZ_FAIL(__VA_ARGS__);                                                                          \
        }                                                                                                    \
    } while (0)

/* The pixel limit of the fuzzed loads: large enough for every seed, small enough
 * that an input declaring a huge image is refused before memory runs out. */
#define FUZZ_MAX_PIXELS ((uint64_t)1 << 20)
#define FUZZ_NAME "fuzz-input"

/* Reads every byte of the image (so that ASan sees a buffer shorter than the
 * image's size) and checks its shape. */
static inline void fuzz_check_image(const vkimg_image *im, uint64_t max_pixels, const char *what)
{
    FUZZ_CHECK(im->data != NULL, "%s: no data", what);
    FUZZ_CHECK(im->w >= 1 && im->h >= 1 && im->c >= 1 && im->c <= 4, "%s: %dx%d x%d", what, im->w, im->h, im->c);
    FUZZ_CHECK(im->fmt == VKIMG_U8 || im->fmt == VKIMG_U16 || im->fmt == VKIMG_F32, "%s: fmt %d", what, (int)im->fmt);
    FUZZ_CHECK((uint64_t)im->w * (uint64_t)im->h <= max_pixels, "%s: %dx%d over %llu pixels", what, im->w, im->h,
               (unsigned long long)max_pixels);
    const unsigned char *p = im->data;
    size_t n = vkimg_image_bytes(im);
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += p[i];
    volatile unsigned sink = sum;
    (void)sink;
}

/* A failed call: the error class, a one-line message that starts with the name. */
static inline void fuzz_check_error(int rc, const vkimg_err *e, int want, const char *name)
{
    FUZZ_CHECK(rc == want && e->code == want, "rc %d, code %d, want %d (%s)", rc, e->code, want, e->msg);
    size_t n = strnlen(e->msg, sizeof e->msg);
    FUZZ_CHECK(n > 0 && n < sizeof e->msg, "message of %zu bytes", n);
    FUZZ_CHECK(!memchr(e->msg, '\n', n), "message of more than one line: %s", e->msg);
    if (name)
        FUZZ_CHECK(!strncmp(e->msg, name, strlen(name)) && e->msg[strlen(name)] == ':', "message without the name: %s",
                   e->msg);
}

static inline bool fuzz_same_bytes(const void *a, size_t na, const void *b, size_t nb)
{
    return na == nb && (!na || !memcmp(a, b, na));
}

static inline bool fuzz_same_image(const vkimg_image *a, const vkimg_image *b)
{
    return a->w == b->w && a->h == b->h && a->c == b->c && a->fmt == b->fmt &&
           fuzz_same_bytes(a->data, vkimg_image_bytes(a), b->data, vkimg_image_bytes(b));
}

/* A flag of a WebP's VP8X chunk (FUZZ_WEBP_*): 1 set, 0 clear, -1 no VP8X chunk first. */
static inline int fuzz_webp_flag(const unsigned char *b, size_t len, unsigned flag)
{
    return len >= 21 && !memcmp(b + 12, "VP8X", 4) ? (b[20] & flag) != 0 : -1;
}
enum { FUZZ_WEBP_ANIM = 0x02, FUZZ_WEBP_ALPHA = 0x10 };

/* A metadata record as the readers promise it: both buffers present exactly when
 * their lengths are not 0, the EXIF block a TIFF block whose orientation is the
 * record's, the profile name a string. A TIFF's record (tiff) has the orientation of
 * its own first IFD, without an EXIF block where it has none (vki_meta_read_tiff makes
 * one from the file's Exif and GPS IFDs, in the file's byte order and no larger than a
 * JPEG's APP1 holds). */
static inline void fuzz_check_meta(const vkimg_meta *m, bool tiff)
{
    FUZZ_CHECK(!m->icc == !m->icc_len, "icc %p, %zu bytes", (void *)m->icc, m->icc_len);
    FUZZ_CHECK(!m->exif == !m->exif_len, "exif %p, %zu bytes", (void *)m->exif, m->exif_len);
    FUZZ_CHECK(!m->xmp == !m->xmp_len, "xmp %p, %zu bytes", (void *)m->xmp, m->xmp_len);
    FUZZ_CHECK(!m->iptc == !m->iptc_len, "iptc %p, %zu bytes", (void *)m->iptc, m->iptc_len);
    FUZZ_CHECK(tiff || !m->iptc || vki_irb_whole(m->iptc, m->iptc_len), "a JPEG's Photoshop resources not whole");
    FUZZ_CHECK(memchr(m->icc_name, 0, sizeof m->icc_name) != NULL, "icc_name not terminated");
    FUZZ_CHECK(m->orientation >= 1 && m->orientation <= 8, "orientation %d", m->orientation);
    if (m->exif) {
        FUZZ_CHECK(m->exif_len >= 4 && (!memcmp(m->exif, "II*\0", 4) || !memcmp(m->exif, "MM\0*", 4)),
                   "EXIF block without a TIFF header");
        FUZZ_CHECK(m->orientation == vki_exif_orientation(m->exif, m->exif_len), "orientation %d, the block's %d",
                   m->orientation, vki_exif_orientation(m->exif, m->exif_len));
    } else {
        FUZZ_CHECK(tiff || m->orientation == 1, "orientation %d without EXIF", m->orientation);
    }
    FUZZ_CHECK(!tiff || !m->exif || m->exif_len <= VKI_JPEG_EXIF_MAX, "a TIFF's EXIF block of %zu bytes", m->exif_len);
}

/* im (with m: NULL or the metadata) by vkimg's TIFF writer: the file (malloc'd, *n
 * bytes) once it encodes and decodes to the same image, else NULL (a failed check). */
static inline unsigned char *fuzz_tiff_back(const vkimg_image *im, const vkimg_meta *m, bool deflate, const char *what,
                                            size_t *n)
{
    unsigned char *out = NULL;
    vkimg_err e = { 0 };
    if (vki_tiff_encode_ex(im, m, deflate, 1, &out, n, &e)) {
        FUZZ_CHECK(false, "%s (%dx%dx%d %s) does not encode: %s", what, im->w, im->h, im->c, vkimg_fmt_name(im->fmt),
                   e.msg);
        return NULL;
    }
    vkimg_image back;
    const int rc = vkimg_load_memory(out, *n, FUZZ_NAME, NULL, &back, &e);
    FUZZ_CHECK(rc == 0, "vkimg's TIFF of %s does not decode: %s", what, e.msg);
    if (!rc) {
        FUZZ_CHECK(fuzz_same_image(im, &back), "vkimg's TIFF of %s decodes to other pixels", what);
        vkimg_image_free(&back);
    }
    return out;
}

/* A decoded TIFF written by vkimg's TIFF writer, Deflate and uncompressed, reads
 * back as the same image. */
static inline void fuzz_tiff_rewrite(const vkimg_image *im)
{
    for (int deflate = 0; deflate < 2; deflate++) {
        size_t n;
        free(fuzz_tiff_back(im, NULL, deflate, "a decoded TIFF", &n));
    }
}

/* Any input's metadata written into a TIFF (vkimg's writer: the ICC profile, the
 * orientation, the EXIF block's tree as the file's own IFDs) on a 3 x 2 image: the
 * file decodes to it, and its metadata reads back with that profile and orientation
 * and, where an EXIF block comes back, one as the readers promise. */
static inline void fuzz_tiff_meta(const vkimg_meta *m)
{
    if (!m->exif && !m->icc && !m->xmp && !m->iptc && m->orientation == 1)
        return;
    static unsigned char px[18] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 };
    const vkimg_image im = { .w = 3, .h = 2, .c = 3, .fmt = VKIMG_U8, .data = px };
    size_t n = 0;
    unsigned char *out = fuzz_tiff_back(&im, m, false, "a 3 x 2 image with the metadata", &n);
    if (!out)
        return;
    vkimg_err e = { 0 };
    vkimg_meta bm;
    const int rc = vki_meta_read(out, n, &bm, &e);
    FUZZ_CHECK(rc == 0, "the metadata of vkimg's TIFF does not read: %s", e.msg);
    if (!rc) {
        fuzz_check_meta(&bm, true);
        FUZZ_CHECK(bm.orientation == m->orientation, "orientation %d written, %d read", m->orientation, bm.orientation);
        FUZZ_CHECK(fuzz_same_bytes(m->icc, m->icc_len, bm.icc, bm.icc_len), "ICC profile of %zu bytes written, %zu read",
                   m->icc_len, bm.icc_len);
        FUZZ_CHECK(fuzz_same_bytes(m->xmp, m->xmp_len, bm.xmp, bm.xmp_len), "XMP of %zu bytes written, %zu read",
                   m->xmp_len, bm.xmp_len);
        FUZZ_CHECK(fuzz_same_bytes(m->iptc, m->iptc_len, bm.iptc, bm.iptc_len),
                   "Photoshop resources of %zu bytes written, %zu read", m->iptc_len, bm.iptc_len);
        vki_meta_free(&bm);
    }
    free(out);
}


/* The EXIF orientation rewrite on a copy: each value 1..8 reads back, where the
 * block has the tag. */
static inline void fuzz_exif_rewrite(const vkimg_meta *m)
{
    if (!m->exif)
        return;
    unsigned char *copy = malloc(m->exif_len);
    if (!copy)
        return;
    memcpy(copy, m->exif, m->exif_len);
    for (int v = 1; v <= 8; v++) {
        int rc = vki_exif_set_orientation(copy, m->exif_len, v);
        FUZZ_CHECK(rc == 0 || rc == 1, "vki_exif_set_orientation: %d", rc);
        if (rc == 1)
            FUZZ_CHECK(vki_exif_orientation(copy, m->exif_len) == v, "set %d, read %d", v,
                       vki_exif_orientation(copy, m->exif_len));
        else
            break; /* no tag: nothing to set */
    }
    FUZZ_CHECK(vki_exif_set_orientation(copy, m->exif_len, 9) == -1, "orientation 9 accepted");
    free(copy);
}

/* The XMP tiff:Orientation rewrite on a copy: each value 1..8 reads back where the
 * packet has one, and only those bytes change. */
static inline void fuzz_xmp_rewrite(const vkimg_meta *m)
{
    if (!m->xmp)
        return;
    unsigned char *copy = malloc(m->xmp_len);
    if (!copy)
        return;
    memcpy(copy, m->xmp, m->xmp_len);
    const int o = vki_xmp_orientation(copy, m->xmp_len);
    FUZZ_CHECK(o >= 0 && o <= 8, "vki_xmp_orientation: %d", o);
    for (int v = 1; v <= 8; v++) {
        const int rc = vki_xmp_set_orientation(copy, m->xmp_len, v);
        FUZZ_CHECK(rc >= 0 && (rc > 0) == (o > 0), "vki_xmp_set_orientation: %d (orientation %d)", rc, o);
        FUZZ_CHECK(vki_xmp_orientation(copy, m->xmp_len) == (o ? v : 0), "set %d, read %d", v,
                   vki_xmp_orientation(copy, m->xmp_len));
        size_t diff = 0;
        for (size_t i = 0; i < m->xmp_len; i++)
            diff += copy[i] != m->xmp[i] && !(m->xmp[i] >= '1' && m->xmp[i] <= '8' && copy[i] >= '1' && copy[i] <= '8');
        FUZZ_CHECK(diff == 0, "%zu bytes other than digits changed", diff);
    }
    FUZZ_CHECK(vki_xmp_set_orientation(copy, m->xmp_len, 9) == -1, "orientation 9 accepted");
    free(copy);
}

/* The metadata writer of the file's format on the file and m: when it writes,
 * the result reads back as m (what was not dropped) and decodes to the same
 * pixels as the file (im: the file's image, NULL when it did not decode). */
static inline void fuzz_meta_rewrite(const unsigned char *b, size_t len, const vkimg_meta *m, const vkimg_image *im)
{
    bool png = len >= 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8), jpeg = len >= 2 && b[0] == 0xff && b[1] == 0xd8;
    bool webp = len >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4);
    if (!png && !jpeg && !webp)
        return;
    unsigned char *out = NULL;
    size_t outlen = 0;
    unsigned dropped = 0;
    vkimg_err e = { 0 };
    int rc = png    ? vki_png_add_meta(b, len, m, &out, &outlen, &dropped, &e)
           : webp ? vki_webp_add_meta(b, len, m, &out, &outlen, &dropped, &e)
                  : vki_jpeg_add_meta(b, len, m, &out, &outlen, &dropped, &e);
    if (rc) {
        fuzz_check_error(rc, &e, rc == VKIMG_E_USAGE ? VKIMG_E_USAGE : VKIMG_E_RUNTIME, NULL);
        FUZZ_CHECK(out == NULL, "output left after an error");
        return;
    }
    FUZZ_CHECK(out && outlen, "no output");
    vkimg_meta back;
    vkimg_err me = { 0 };
    rc = vki_meta_read(out, outlen, &back, &me);
    if (rc == 0) {
        fuzz_check_meta(&back, false);
        if (!(dropped & VKI_META_DROPPED_EXIF))
            FUZZ_CHECK(fuzz_same_bytes(m->exif, m->exif_len, back.exif, back.exif_len),
                       "EXIF of %zu bytes written, %zu read back", m->exif_len, back.exif_len);
        if (!(dropped & VKI_META_DROPPED_XMP))
            FUZZ_CHECK(fuzz_same_bytes(m->xmp, m->xmp_len, back.xmp, back.xmp_len),
                       "XMP of %zu bytes written, %zu read back", m->xmp_len, back.xmp_len);
        if (jpeg) /* (PNG and WebP have no place for them) */
            FUZZ_CHECK(fuzz_same_bytes(m->iptc, m->iptc_len, back.iptc, back.iptc_len),
                       "Photoshop resources of %zu bytes written, %zu read back", m->iptc_len, back.iptc_len);
        if (!(dropped & VKI_META_DROPPED_ICC)) {
            FUZZ_CHECK(fuzz_same_bytes(m->icc, m->icc_len, back.icc, back.icc_len),
                       "ICC profile of %zu bytes written, %zu read back", m->icc_len, back.icc_len);
            if (png && m->icc && m->icc_name[0])
                FUZZ_CHECK(!strcmp(m->icc_name, back.icc_name), "profile name '%s' written, '%s' read back",
                           m->icc_name, back.icc_name);
        }
        vki_meta_free(&back);
    } else {
        /* the readers fail only on a file cut off where metadata is: the writer's
         * output is whole when the input was (it decoded) */
        FUZZ_CHECK(!im, "the file decodes, its rewrite's metadata does not: %s", me.msg);
    }
    if (im) {
        vkimg_load_opts o = { .max_pixels = FUZZ_MAX_PIXELS };
        vkimg_image im2;
        vkimg_err de = { 0 };
        const int drc = vkimg_load_memory(out, outlen, FUZZ_NAME, &o, &im2, &de);
        /* A WebP: libwebp 1.2.4 reads a lossless bitstream up to the end of the data, past
         * its chunk; a corrupt one may then decode differently, or not at all, once
         * libwebpmux has rewritten what follows it (its padding byte as 0, the metadata
         * chunks). A valid one ends inside its chunk. Where both decode: the same size. */
        if (!webp)
            FUZZ_CHECK(drc == 0, "the file decodes, its rewrite with metadata does not: %s", de.msg);
        if (drc == 0) {
            /* (the channels follow the VP8X alpha flag, WebPGetFeatures' has_alpha, which
             * libwebpmux sets anew from the frames' own alpha: an animation whose flag
             * claimed alpha its frames do not have comes back without it; and an animation
             * is RGBA, but libwebpmux writes one of a single frame at the canvas's corner
             * as a still image, RGB where that frame has no alpha) */
            if (webp)
                FUZZ_CHECK(im->w == im2.w && im->h == im2.h && im->fmt == im2.fmt &&
                               (im->c == im2.c ||
                                fuzz_webp_flag(b, len, FUZZ_WEBP_ALPHA) !=
                                    fuzz_webp_flag(out, outlen, FUZZ_WEBP_ALPHA) ||
                                fuzz_webp_flag(b, len, FUZZ_WEBP_ANIM) != fuzz_webp_flag(out, outlen, FUZZ_WEBP_ANIM)),
                           "the rewrite with metadata decodes to another size or format: %dx%dx%d %d, then %dx%dx%d %d",
                           im->w, im->h, im->c, (int)im->fmt, im2.w, im2.h, im2.c, (int)im2.fmt);
            else
                FUZZ_CHECK(fuzz_same_image(im, &im2), "the rewrite with metadata decodes to other pixels");
            vkimg_image_free(&im2);
        }
    }
    free(out);
}

/* Shrink-on-load: asks for at least 1/div of the stored size (div = 8, 4 or 2 from
 * the input's last byte), so that JPEGs are decoded by DCT scaling and progressive
 * ones at 1/8 through vki_jpeg_dc_scans (its own walk over the file's markers). */
static inline void fuzz_min_size(void *user, int w, int h, int orientation, int *min_w, int *min_h)
{
    const int div = *(const int *)user;
    FUZZ_CHECK(w >= 1 && h >= 1 && orientation >= 1 && orientation <= 8, "min_size(%d, %d, %d)", w, h, orientation);
    *min_w = (w + div - 1) / div;
    *min_h = (h + div - 1) / div;
}

/* The load with min_size: an image no larger than the stored one and at least the
 * asked size, or a clean error; where the whole file decoded, so does the shrunk one. */
static inline void fuzz_one_shrunk_load(const uint8_t *data, size_t size, const vkimg_image *full)
{
    int div = 8 >> (size ? data[size - 1] % 3 : 0);
    vkimg_load_opts o = { .max_pixels = FUZZ_MAX_PIXELS, .min_size = fuzz_min_size, .user = &div };
    vkimg_image im;
    vkimg_err e = { 0 };
    int rc = vkimg_load_memory(data, size, FUZZ_NAME, &o, &im, &e);
    if (rc == 0) {
        fuzz_check_image(&im, FUZZ_MAX_PIXELS, "vkimg_load_memory (min_size)");
        if (full)
            FUZZ_CHECK(im.w <= full->w && im.h <= full->h && im.w >= (full->w + div - 1) / div &&
                           im.h >= (full->h + div - 1) / div && im.c == full->c,
                       "shrunk to 1/%d: %dx%d x%d from %dx%d x%d", div, im.w, im.h, im.c, full->w, full->h, full->c);
        vkimg_image_free(&im);
    } else {
        FUZZ_CHECK(!full, "the file decodes whole, not shrunk to 1/%d: %s", div, e.msg);
        fuzz_check_error(rc, &e, VKIMG_E_RUNTIME, FUZZ_NAME);
    }
}

/* The load with drop_opaque_alpha: where the whole file decoded, the same image, or
 * (8-bit with alpha all at 255) its colour samples with one channel fewer. */
static inline void fuzz_one_dropped_load(const uint8_t *data, size_t size, const vkimg_image *full)
{
    vkimg_load_opts o = { .max_pixels = FUZZ_MAX_PIXELS, .drop_opaque_alpha = true };
    vkimg_image im;
    vkimg_err e = { 0 };
    int rc = vkimg_load_memory(data, size, FUZZ_NAME, &o, &im, &e);
    FUZZ_CHECK(!rc == !!full, "the file %s whole, %s with drop_opaque_alpha: %s", full ? "decodes" : "fails",
               rc ? "fails" : "decodes", e.msg);
    if (rc) {
        fuzz_check_error(rc, &e, VKIMG_E_RUNTIME, FUZZ_NAME);
        return;
    }
    fuzz_check_image(&im, FUZZ_MAX_PIXELS, "vkimg_load_memory (drop_opaque_alpha)");
    if (full && im.c == full->c) {
        FUZZ_CHECK(fuzz_same_image(full, &im), "drop_opaque_alpha kept the alpha but changed the pixels");
    } else if (full) {
        FUZZ_CHECK(im.c == full->c - 1 && (full->c == 2 || full->c == 4) && full->fmt == VKIMG_U8 &&
                       im.fmt == VKIMG_U8 && im.w == full->w && im.h == full->h,
                   "drop_opaque_alpha: %dx%d x%d %s from %dx%d x%d %s", im.w, im.h, im.c, vkimg_fmt_name(im.fmt),
                   full->w, full->h, full->c, vkimg_fmt_name(full->fmt));
        const unsigned char *a = full->data, *b = im.data;
        const size_t n = (size_t)full->w * (size_t)full->h;
        for (size_t i = 0; im.c == full->c - 1 && i < n; i++) {
            FUZZ_CHECK(a[i * full->c + im.c] == 0xFF && !memcmp(a + i * full->c, b + i * im.c, (size_t)im.c),
                       "drop_opaque_alpha: pixel %zu: alpha %u or colour differs", i, a[i * full->c + im.c]);
        }
    }
    vkimg_image_free(&im);
}

/* The load with jpeg_coded and jpeg_entropy (the JPEG scan copied for the device,
 * or libjpeg's coefficients): where it gives a coded image, the size of the plain
 * load's, and a scan blob whose every interval lies inside it (vki_shared.h
 * VKI_JH_*; its bytes all read), or coefficients of the layout's size. */
static inline void fuzz_one_coded_load(const uint8_t *data, size_t size, const vkimg_image *full)
{
    vkimg_load_opts o = { .max_pixels = FUZZ_MAX_PIXELS, .jpeg_coded = true, .jpeg_entropy = true };
    vkimg_image im;
    vkimg_err e = { 0 };
    int rc = vkimg_load_memory(data, size, FUZZ_NAME, &o, &im, &e);
    if (rc) {
        fuzz_check_error(rc, &e, VKIMG_E_RUNTIME, FUZZ_NAME);
        return;
    }
    if (!im.coded) {
        fuzz_check_image(&im, FUZZ_MAX_PIXELS, "vkimg_load_memory (jpeg_coded)");
        vkimg_image_free(&im);
        return;
    }
    const struct vkimg_coded *cd = im.coded;
    FUZZ_CHECK(im.fmt == VKIMG_U8 && im.c == (cd->ncomp == 1 ? 1 : 3) && im.w >= 1 && im.h >= 1,
               "coded: %dx%d x%d %s, %d components", im.w, im.h, im.c, vkimg_fmt_name(im.fmt), cd->ncomp);
    FUZZ_CHECK(!full || (full->w == im.w && full->h == im.h), "coded %dx%d, decoded %dx%d", im.w, im.h, full->w,
               full->h);
    const uint32_t *w = im.data;
    size_t bytes = cd->entropy ? cd->entropy_bytes : cd->ncoef * 2, words = bytes / 4;
    if (cd->entropy) {
        FUZZ_CHECK(bytes % 4 == 0 && words > VKI_JH_HEADER + 8 * VKI_JH_TABLE, "scan blob of %zu bytes", bytes);
        const uint32_t nint = w[VKI_JH_NINT], ivl = w[VKI_JH_IVL], d0 = w[VKI_JH_DATA];
        FUZZ_CHECK(nint >= 1 && w[VKI_JH_BPM] >= 1 && w[VKI_JH_BPM] <= VKI_JH_MAX_BPM && ivl == VKI_JH_HEADER + 8 * VKI_JH_TABLE &&
                       d0 == ivl + 2 * (size_t)nint && d0 <= words,
                   "scan blob header: %u intervals, %u blocks a MCU, tables to %u, data at %u of %zu words", nint,
                   w[VKI_JH_BPM], ivl, d0, words);
        uint64_t next = 0;
        for (uint32_t k = 0; k < nint; k++) {
            const uint64_t at = w[ivl + 2 * k], bits = w[ivl + 2 * k + 1];
            FUZZ_CHECK(at >= next && d0 + at + (bits + 31) / 32 + 1 <= words,
                       "interval %u: word %llu, %llu bits, past the blob (%zu words)", k, (unsigned long long)at,
                       (unsigned long long)bits, words);
            next = at + (bits + 31) / 32 + 1;
        }
    }
    unsigned sum = 0;
    const unsigned char *p = im.data;
    for (size_t i = 0; i < bytes; i++)
        sum += p[i];
    (void)sum;
    vkimg_image_free(&im);
}

static inline void fuzz_one_load(const uint8_t *data, size_t size)
{
    vkimg_load_opts o = { .max_pixels = FUZZ_MAX_PIXELS };
    vkimg_image im;
    vkimg_err e = { 0 };
    int rc = vkimg_load_memory(data, size, FUZZ_NAME, &o, &im, &e);
    if (rc == 0) {
        fuzz_check_image(&im, FUZZ_MAX_PIXELS, "vkimg_load_memory");
    } else {
        fuzz_check_error(rc, &e, VKIMG_E_RUNTIME, FUZZ_NAME);
        FUZZ_CHECK(!im.data && !im.w && !im.h && !im.c, "an image left after an error");
    }
    fuzz_one_shrunk_load(data, size, rc == 0 ? &im : NULL);
    fuzz_one_dropped_load(data, size, rc == 0 ? &im : NULL);
    fuzz_one_coded_load(data, size, rc == 0 ? &im : NULL);

    /* the metadata, as vkimg_load_meta reads it from the same bytes */
    vkimg_meta m;
    vkimg_err me = { 0 };
    int mrc = vki_meta_read(data, size, &m, &me);
    if (rc == 0 && vki_tiff_signature(data, size))
        fuzz_tiff_rewrite(&im);
    if (mrc == 0) {
        fuzz_check_meta(&m, vki_tiff_signature(data, size));
        fuzz_exif_rewrite(&m);
        fuzz_xmp_rewrite(&m);
        fuzz_meta_rewrite(data, size, &m, rc == 0 ? &im : NULL);
        fuzz_tiff_meta(&m);
    } else {
        fuzz_check_error(mrc, &me, VKIMG_E_RUNTIME, NULL);
        FUZZ_CHECK(!m.icc && !m.exif && !m.xmp && !m.iptc && m.orientation == 1, "metadata left after an error");
    }
    vki_meta_free(&m);
    vkimg_image_free(&im);
}

static inline void fuzz_one_ktx2(const uint8_t *data, size_t size)
{
    vkimg_image *lv = NULL;
    int n = -1;
    vki_ktx2_info info;
    vkimg_err e = { 0 };
    int rc = vki_ktx2_decode(data, size, &lv, &n, &info, &e);
    if (rc) {
        fuzz_check_error(rc, &e, VKIMG_E_RUNTIME, NULL);
        vki_ktx2_free_levels(lv, n);
        return;
    }
    FUZZ_CHECK(lv && n >= 1 && n <= VKI_KTX2_MAX_LEVELS, "%d levels", n);
    FUZZ_CHECK(memchr(info.writer, 0, sizeof info.writer) != NULL, "writer not terminated");
    for (int p = 0; p < n; p++) {
        int w = lv[0].w >> p > 1 ? lv[0].w >> p : 1, h = lv[0].h >> p > 1 ? lv[0].h >> p : 1;
        fuzz_check_image(&lv[p], UINT64_MAX, "vki_ktx2_decode");
        FUZZ_CHECK(lv[p].w == w && lv[p].h == h && lv[p].c == lv[0].c && lv[p].fmt == lv[0].fmt,
                   "level %d is %dx%d x%d, level 0 %dx%d x%d", p, lv[p].w, lv[p].h, lv[p].c, lv[0].w, lv[0].h, lv[0].c);
    }
    /* the writer takes what the reader gives, and the reader gives it back */
    vki_ktx2_opts ko = { .srgb = info.transfer == 2 && lv[0].fmt == VKIMG_U8 && lv[0].c != 2 };
    unsigned char *out = NULL;
    size_t outlen = 0;
    rc = vki_ktx2_encode_ex(lv, n, &ko, &out, &outlen, &e);
    FUZZ_CHECK(rc == 0, "vki_ktx2_encode_ex of what vki_ktx2_decode read: %s", e.msg);
    vkimg_image *lv2 = NULL;
    int n2 = -1;
    rc = vki_ktx2_decode(out, outlen, &lv2, &n2, NULL, &e);
    FUZZ_CHECK(rc == 0, "vki_ktx2_decode of vki_ktx2_encode_ex's file: %s", e.msg);
    FUZZ_CHECK(n2 == n, "%d levels written, %d read", n, n2);
    for (int p = 0; p < n; p++)
        FUZZ_CHECK(fuzz_same_image(&lv[p], &lv2[p]), "level %d differs after a write and a read", p);
    vki_ktx2_free_levels(lv2, n2);
    free(out);
    vki_ktx2_free_levels(lv, n);
}

/* The stage shapes of a parsed pipeline for an input of w x h x c: either an
 * error, or sizes and channels in range at every stage. */
static inline void fuzz_shape(const vkimg_pipeline *p, int w, int h, int c)
{
    vki_shape s;
    vkimg_err e = { 0 };
    int rc = vki_pipeline_shape(p, w, h, c, w, h, &s, &e);
    if (rc) {
        fuzz_check_error(rc, &e, VKIMG_E_RUNTIME, NULL);
        return;
    }
    FUZZ_CHECK(s.n == vkimg_pipeline_length(p), "%d stages", s.n);
    for (int i = 0; i <= s.n; i++)
        FUZZ_CHECK(s.w[i] >= 1 && s.h[i] >= 1 && s.c[i] >= 1 && s.c[i] <= 4, "stage %d: %dx%d x%d", i, s.w[i], s.h[i],
                   s.c[i]);
    FUZZ_CHECK(s.c[s.n] == vkimg_pipeline_out_channels(p, c), "channels %d, vkimg_pipeline_out_channels %d", s.c[s.n],
               vkimg_pipeline_out_channels(p, c));
    FUZZ_CHECK(s.nout >= 1 && s.nout <= VKI_MAX_OUTPUTS, "%d outputs", s.nout);
    FUZZ_CHECK(s.nout == 1 || vkimg_pipeline_writes_levels(p), "%d outputs from a pipeline that writes one", s.nout);
    for (int k = 0; k < s.nout; k++)
        FUZZ_CHECK(s.out_w[k] >= 1 && s.out_h[k] >= 1, "output %d: %dx%d", k, s.out_w[k], s.out_h[k]);
}

/* The pipeline text is the input up to its end (an input with a NUL byte is not
 * a pipeline text: the CLI refuses one in a file, argv has none): returns false
 * for those, which the fuzzer then leaves out of its corpus. */
static inline bool fuzz_one_parse(const uint8_t *data, size_t size)
{
    if (memchr(data, 0, size))
        return false;
    char *text = malloc(size + 1);
    if (!text)
        return false;
    memcpy(text, data, size);
    text[size] = 0;
    vkimg_err e = { 0 };
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    if (!p) {
        fuzz_check_error(VKIMG_E_USAGE, &e, VKIMG_E_USAGE, NULL);
        FUZZ_CHECK(e.pos >= 0 && (size_t)e.pos <= size, "error position %d in %zu bytes", e.pos, size);
        free(text);
        return true;
    }
    int n = vkimg_pipeline_length(p);
    FUZZ_CHECK(n >= 1 && n <= VKIMG_MAX_STAGES, "%d ops", n);
    for (int i = 0; i < n; i++)
        FUZZ_CHECK(vkimg_pipeline_op_name(p, i) != NULL, "op %d has no name", i);

    /* describe -> parse -> describe: the same text */
    int len = vkimg_pipeline_describe(p, NULL, 0);
    FUZZ_CHECK(len > 0, "describe: %d", len);
    char *d1 = malloc((size_t)len + 1), *d2 = malloc((size_t)len + 1);
    FUZZ_CHECK(d1 && d2, "out of memory");
    FUZZ_CHECK(vkimg_pipeline_describe(p, d1, (size_t)len + 1) == len && strlen(d1) == (size_t)len, "describe length");
    vkimg_pipeline *q = vkimg_pipeline_parse(d1, &e);
    FUZZ_CHECK(q != NULL, "the description of '%s' does not parse: '%s': %s", text, d1, e.msg);
    FUZZ_CHECK(vkimg_pipeline_describe(q, d2, (size_t)len + 1) == len && !strcmp(d1, d2),
               "'%s' describes as '%s', which describes as '%s'", text, d1, d2);
    vkimg_pipeline_free(q);
    free(d1);
    free(d2);

    /* what it makes of a few inputs: small, odd, tall, the largest sides */
    static const int sizes[][2] = { { 1, 1 }, { 7, 5 }, { 3, 1000 }, { 16384, 16384 }, { 16777216, 1 }, { 1, 16777216 } };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int c = 1; c <= 4; c++)
            fuzz_shape(p, sizes[i][0], sizes[i][1], c);
    vkimg_pipeline_free(p);
    free(text);
    return true;
}

/* The image of the PNG round trip, from the input's first 6 bytes:
 *   [0..1]  width - 1, modulo 256          [2]  height - 1, modulo 128 (the
 *           height halved until the image has at most 8192 pixels: small images
 *           reach every filter and chunk path, and keep the fuzzer fast)
 *   [3]     bits 0-1: channels - 1; bit 2: 16-bit; bit 3: with metadata (an ICC
 *           profile and an EXIF block cut from the rest); bits 4-7 + [4]: the
 *           compression level, modulo 13
 *   [5]     bits 0-6: the IDAT chunk size: 0 the default, else 1..127 bytes (the
 *           split); bit 7: VKI_PNG_PALETTE (8-bit RGB(A) of <= 256 colours: a
 *           palette image, which must read back as the same pixels)
 * and the pixels: the rest of the input, repeated (an empty rest: zeros). */
static inline bool fuzz_one_png(const uint8_t *data, size_t size)
{
    if (size < 6)
        return false;
    int w = 1 + (int)((data[0] | (unsigned)data[1] << 8) % 256), h = 1 + data[2] % 128;
    while (w * h > 8192)
        h = (h + 1) / 2;
    int c = 1 + (data[3] & 3);
    bool wide = data[3] & 4, with_meta = data[3] & 8;
    int level = (int)((data[3] >> 4) + data[4]) % 13;
    size_t idat_max = data[5] & 0x7f ? data[5] & 0x7fu : (size_t)1 << 20;
    bool palette = data[5] & 0x80;
    const uint8_t *rest = data + 6;
    size_t nrest = size - 6;

    vkimg_image im = { 0 };
    vkimg_err e = { 0 };
    FUZZ_CHECK(vkimg_image_alloc(&im, w, h, c, wide ? VKIMG_U16 : VKIMG_U8, &e) == 0, "%s", e.msg);
    unsigned char *px = im.data;
    size_t nb = vkimg_image_bytes(&im);
    for (size_t i = 0; nrest && i < nb; i++)
        px[i] = rest[i % nrest];

    unsigned char *png = NULL;
    size_t pnglen = 0;
    /* the bands of large images (deflate streams joined): bands of 64..4144
     * bytes, on 1 or 2 threads, where the pixels' first byte is odd */
    const size_t band_keep = vki_png_band_min;
    const bool bands = nrest && (rest[0] & 1);
    if (bands)
        vki_png_band_min = 64 + (size_t)data[4] * 16;
    int rc = vki_png_encode_ex(&im, level, idat_max,
                               (palette ? VKI_PNG_PALETTE : 0) | VKI_PNG_THREADS(bands ? 1 + (data[2] >> 7) : 1), &png,
                               &pnglen, &e);
    vki_png_band_min = band_keep;
    FUZZ_CHECK(rc == 0, "vki_png_encode_ex %dx%d x%d %s level %d%s%s: %s", w, h, c, wide ? "u16" : "u8", level,
               palette ? " palette" : "", bands ? " in bands" : "", e.msg);

    vkimg_meta m = { .orientation = 1 };
    if (with_meta && nrest >= 8) {
        /* a profile of the first half of the rest, an EXIF block "MM\0*" + the second
         * half, an XMP packet of all of it */
        size_t half = nrest / 2;
        m.icc = malloc(half);
        m.exif = malloc(4 + nrest - half);
        m.xmp = malloc(nrest);
        FUZZ_CHECK(m.icc && m.exif && m.xmp, "out of memory");
        memcpy(m.xmp, rest, nrest);
        m.xmp_len = nrest;
        memcpy(m.icc, rest, half);
        m.icc_len = half;
        memcpy(m.exif, "MM\0*", 4);
        memcpy(m.exif + 4, rest + half, nrest - half);
        m.exif_len = 4 + nrest - half;
        snprintf(m.icc_name, sizeof m.icc_name, "fuzz %d", level);
        m.orientation = vki_exif_orientation(m.exif, m.exif_len);
        unsigned char *out = NULL;
        size_t outlen = 0;
        unsigned dropped = 0;
        rc = vki_png_add_meta(png, pnglen, &m, &out, &outlen, &dropped, &e);
        FUZZ_CHECK(rc == 0 && !dropped, "vki_png_add_meta: %s (dropped %u)", rc ? e.msg : "", dropped);
        free(png);
        png = out;
        pnglen = outlen;
    }

    vkimg_image back;
    vkimg_load_opts o = { .max_pixels = FUZZ_MAX_PIXELS };
    rc = vkimg_load_memory(png, pnglen, FUZZ_NAME, &o, &back, &e);
    FUZZ_CHECK(rc == 0, "our PNG of %dx%d x%d %s does not decode: %s", w, h, c, wide ? "u16" : "u8", e.msg);
    FUZZ_CHECK(fuzz_same_image(&im, &back), "%dx%d x%d %s level %d: other pixels after the round trip", w, h, c,
               wide ? "u16" : "u8", level);
    vkimg_image_free(&back);

    vkimg_meta mb;
    rc = vki_meta_read(png, pnglen, &mb, &e);
    FUZZ_CHECK(rc == 0, "vki_meta_read of our PNG: %s", e.msg);
    FUZZ_CHECK(fuzz_same_bytes(m.icc, m.icc_len, mb.icc, mb.icc_len) &&
                   fuzz_same_bytes(m.exif, m.exif_len, mb.exif, mb.exif_len) &&
                   fuzz_same_bytes(m.xmp, m.xmp_len, mb.xmp, mb.xmp_len) && !strcmp(m.icc_name, mb.icc_name) &&
                   m.orientation == mb.orientation,
               "other metadata after the round trip");
    vki_meta_free(&mb);
    vki_meta_free(&m);
    free(png);
    vkimg_image_free(&im);
    return true;
}

#endif
