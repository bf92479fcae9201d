/* WebP (src/io/webp.c: libwebp, libwebpdemux, libwebpmux). No device.
 *
 *  - Lossless round trips, exact: seeded images (smooth, smooth + noise, every
 *    sample random) of 1x1, 1xN, Nx1, 2x2, prime sizes and one over 1024 wide, of
 *    1-4 channels: RGB and RGBA back byte for byte (the colour under alpha 0 too,
 *    a fully transparent image as well), gray as RGB with R = G = B, gray + alpha as
 *    RGBA; an opaque RGBA image comes back RGB (the file says it has no alpha); the
 *    quality does not change a lossless file; a second encoder thread changes no
 *    pixel.
 *  - Lossy: the pixels are libwebp's own WebPDecodeRGB / WebPDecodeRGBA of the same
 *    bytes (strides, channel order), the PSNR against the source is sane, quality 10
 *    makes a smaller and worse file than 90, RGBA keeps its alpha plane exactly
 *    (VP8X + ALPH + VP8), qualities outside 1..100 are usage errors.
 *  - vkimg_load_opts.alloc: the pixels are decoded into the caller's memory (still
 *    images and an animation), a declining allocator, a failing one, every
 *    allocation released when the decode fails after it; input_done once.
 *  - Animations: the first frame of a two-frame WebPAnimEncoder file (its colour
 *    compared where alpha is not 0), and of a file muxed by hand whose first frame
 *    is a sub-rectangle at an offset, on a transparent canvas whatever the ANIM
 *    background colour.
 *  - Hostile input: every truncation (a stride through large files) of still,
 *    tagged and animated files refused with the output zeroed and nothing left
 *    allocated; byte damage in the bitstreams refused cleanly or decoded to the
 *    right size; canvases over max_pixels (a 20000x20000 VP8X, still and animated;
 *    the max_pixels option at its boundary) refused before the allocator is
 *    called; a RIFF of another form type is not a supported image.
 *  - Metadata: ICC profiles (1, 129, 70000 and 70001 bytes: odd sizes padded) and
 *    EXIF blocks (both byte orders, every orientation) through vki_webp_add_meta into
 *    lossless and lossy, RGB and RGBA, still and animated files, read back through
 *    vki_meta_read_webp and vki_meta_read byte-identical, the RIFF layout checked
 *    (RIFF size, padding, VP8X flags and canvas, chunk order) and the pixels
 *    unchanged; an "Exif\0\0"-prefixed EXIF chunk made by hand; an EXIF block
 *    without a TIFF header refused (VKIMG_E_USAGE); replacement; truncated ICCP and
 *    EXIF chunks (VKIMG_E_RUNTIME, *m empty), every cut of a tagged file.
 *  - vkimg_save / vkimg_load_meta through a file: lossless with metadata (a gray
 *    image's GRAY profile left out: the file is RGB), the default quality, bad
 *    qualities, 16383 pixels a side and 16384 refused, u16 images refused. */
#include "bbuf.h"
#include "exif_util.h"
#include "core/util.h"
#include "io/io_priv.h"
#include "io/meta.h"
#include "io_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>

static unsigned long long g_seed = 0x3c6ef372fe94f82bull;

static unsigned rnd(unsigned n) { return n ? (unsigned)(t_rand(&g_seed) >> 32) % n : 0; }

/* ------------------------------------------------------------------ images */

static vkimg_image img_new(int w, int h, int c)
{
    vkimg_image im;
    vkimg_err e;
    if (vkimg_image_alloc(&im, w, h, c, VKIMG_U8, &e)) {
        fprintf(stderr, "alloc: %s\n", e.msg);
        exit(1);
    }
    return im;
}

static unsigned char *U8(const vkimg_image *im) { return im->data; }

static int alpha_ch(int c) { return c == 2 || c == 4 ? c - 1 : -1; }

/* content 0: smooth gradients, 1: smooth + noise, 2: every sample random. Alpha (c =
 * 2 or 4): 0 at (0, 0) and every ninth pixel, 255 at a third of them, values
 * between elsewhere; the colour under alpha 0 random whatever the content. */
static void fill(vkimg_image *im, int content)
{
    unsigned char *d = U8(im);
    const int ac = alpha_ch(im->c);
    for (int y = 0; y < im->h; y++)
        for (int x = 0; x < im->w; x++) {
            unsigned char *p = d + ((size_t)y * (size_t)im->w + (size_t)x) * (size_t)im->c;
            for (int k = 0; k < im->c; k++) {
                if (k == ac) {
                    const unsigned v = (unsigned)(x * 7 + y * 3) % 9;
                    p[k] = v == 0 ? 0 : v >= 6 ? 255 : (unsigned char)(v * 40 + rnd(30));
                    continue;
                }
                double v = 0.5 + 0.45 * sin(0.07 * x * (k + 1) + 0.05 * y) * cos(0.04 * y * (k + 2) + 0.01 * x);
                if (content == 1)
                    v += ((double)rnd(1000) / 1000.0 - 0.5) * 0.25;
                v = v < 0 ? 0 : v > 1 ? 1 : v;
                p[k] = content == 2 ? (unsigned char)rnd(256) : (unsigned char)lround(v * 255);
            }
            if (ac >= 0 && p[ac] == 0)
                for (int k = 0; k < ac; k++)
                    p[k] = (unsigned char)rnd(256);
        }
}

static void set_alpha(vkimg_image *im, int v)
{
    for (size_t i = 0; i < (size_t)im->w * (size_t)im->h; i++)
        U8(im)[i * (size_t)im->c + (size_t)im->c - 1] = (unsigned char)v;
}

/* What a lossless file of im reads back as: gray widened to RGB, gray + alpha to
 * RGBA (WebP holds no gray); RGB and RGBA as they are. */
static vkimg_image widened(const vkimg_image *im)
{
    const int c = im->c <= 2 ? im->c + 2 : im->c;
    vkimg_image o = img_new(im->w, im->h, c);
    for (size_t i = 0; i < (size_t)im->w * (size_t)im->h; i++) {
        const unsigned char *s = U8(im) + i * (size_t)im->c;
        unsigned char *d = U8(&o) + i * (size_t)c;
        if (im->c <= 2) {
            d[0] = d[1] = d[2] = s[0];
            if (c == 4)
                d[3] = s[1];
        } else {
            memcpy(d, s, (size_t)c);
        }
    }
    return o;
}

/* The colour channels of im (alpha dropped), or of gray widened. */
static vkimg_image rgb_of(const vkimg_image *im)
{
    vkimg_image w = widened(im), o = img_new(im->w, im->h, 3);
    for (size_t i = 0; i < (size_t)im->w * (size_t)im->h; i++)
        memcpy(U8(&o) + i * 3, U8(&w) + i * (size_t)w.c, 3);
    vkimg_image_free(&w);
    return o;
}

/* "identical", or where two images first differ. */
static const char *describe(const vkimg_image *a, const vkimg_image *b)
{
    static char buf[256];
    if (!a->data || !b->data) {
        snprintf(buf, sizeof buf, "no data");
    } else if (a->w != b->w || a->h != b->h || a->c != b->c || a->fmt != b->fmt) {
        snprintf(buf, sizeof buf, "%dx%dx%d %s vs %dx%dx%d %s", a->w, a->h, a->c, vkimg_fmt_name(a->fmt), b->w, b->h,
                 b->c, vkimg_fmt_name(b->fmt));
    } else {
        snprintf(buf, sizeof buf, "identical");
        for (size_t i = 0; i < vkimg_image_bytes(a); i++)
            if (U8(a)[i] != U8(b)[i]) {
                snprintf(buf, sizeof buf, "first difference at (%zu, %zu) channel %zu: %u vs %u",
                         i / (size_t)a->c % (size_t)a->w, i / (size_t)a->c / (size_t)a->w, i % (size_t)a->c, U8(a)[i],
                         U8(b)[i]);
                break;
            }
    }
    return buf;
}

/* PSNR of the colour of got (RGB or RGBA) against src's colour (gray widened), over
 * the pixels whose source alpha is 255 (all of them without alpha). */
static double psnr(const vkimg_image *got, const vkimg_image *src)
{
    const int ac = alpha_ch(src->c);
    double se = 0;
    size_t n = 0;
    for (size_t i = 0; i < (size_t)src->w * (size_t)src->h; i++) {
        const unsigned char *s = U8(src) + i * (size_t)src->c, *g = U8(got) + i * (size_t)got->c;
        if (ac >= 0 && s[ac] != 255)
            continue;
        for (int k = 0; k < 3; k++) {
            const double d = (double)g[k] - (double)s[src->c <= 2 ? 0 : k];
            se += d * d;
            n++;
        }
    }
    return n == 0 ? 0 : se == 0 ? 99 : 10 * log10(255.0 * 255.0 / (se / (double)n));
}

/* ------------------------------------------------------------------ files */

static uint32_t rle32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint32_t rle24(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16; }

static void bb_le24(bbuf *b, uint32_t v)
{
    bb_u8(b, v & 0xff);
    bb_u8(b, (v >> 8) & 0xff);
    bb_u8(b, (v >> 16) & 0xff);
}


/* VP8X flags (the extended format's header) */
enum { FL_ANIM = 0x02, FL_XMP = 0x04, FL_EXIF = 0x08, FL_ALPHA = 0x10, FL_ICC = 0x20 };

static void put_vp8x(bbuf *b, unsigned flags, uint32_t w, uint32_t h)
{
    bb_put(b, "VP8X", 4);
    bb_le32(b, 10);
    bb_u8(b, flags);
    bb_u8(b, 0);
    bb_u8(b, 0);
    bb_u8(b, 0);
    bb_le24(b, w - 1);
    bb_le24(b, h - 1);
}

/* "RIFF" size "WEBP" and the chunks in body (freed). */
static unsigned char *riff(bbuf *body, size_t *n)
{
    bbuf o = { 0 };
    bb_put(&o, "RIFF", 4);
    bb_le32(&o, (uint32_t)(4 + body->n));
    bb_put(&o, "WEBP", 4);
    bb_put(&o, body->p, body->n);
    free(body->p);
    *body = (bbuf){ 0 };
    *n = o.n;
    return o.p;
}

typedef struct chunk {
    char type[5];
    size_t off, size; /* the chunk header's offset; the data's size */
} chunk;

/* The chunks of a WebP file into c: their count, or -1 where the RIFF size is not the
 * file's, a chunk runs past the end, or a pad byte is missing or not 0. */
static int chunks(const unsigned char *p, size_t n, chunk *c, int max)
{
    if (n < 12 || memcmp(p, "RIFF", 4) || memcmp(p + 8, "WEBP", 4) || rle32(p + 4) != n - 8)
        return -1;
    int k = 0;
    for (size_t at = 12; at < n;) {
        if (n - at < 8 || k == max)
            return -1;
        const size_t sz = rle32(p + at + 4);
        if (sz + (sz & 1) > n - at - 8 || ((sz & 1) && p[at + 8 + sz] != 0))
            return -1;
        memcpy(c[k].type, p + at, 4);
        c[k].type[4] = 0;
        c[k].off = at;
        c[k].size = sz;
        k++;
        at += 8 + sz + (sz & 1);
    }
    return k;
}

static int find_chunk(const chunk *c, int n, const char *type)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(c[i].type, type))
            return i;
    return -1;
}

static int count_chunks(const chunk *c, int n, const char *type)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += !strcmp(c[i].type, type);
    return k;
}

static unsigned char *dup(const void *p, size_t n)
{
    unsigned char *d = malloc(n ? n : 1);
    if (!d)
        exit(1);
    memcpy(d, p, n);
    return d;
}

static int same(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    return an == bn && (an == 0 || (a && b && memcmp(a, b, an) == 0));
}

static int all_zero(const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i])
            return 0;
    return 1;
}

static unsigned char *encode(const vkimg_image *im, int q, bool lossless, size_t *n)
{
    unsigned char *p = (unsigned char *)1;
    vkimg_err e;
    int rc = vki_webp_encode(im, q, lossless, 1, &p, n, &e);
    CHECK(rc == 0 && p && *n > 12, "encode %dx%dx%d q%d%s: rc %d %s", im->w, im->h, im->c, q,
          lossless ? " lossless" : "", rc, rc ? e.msg : "");
    return rc ? NULL : p;
}

/* vkimg_load_memory of an exact-size copy (ASan sees any overread). */
static int load(const unsigned char *f, size_t n, const vkimg_load_opts *o, vkimg_image *im, vkimg_err *e)
{
    unsigned char *copy = dup(f, n);
    memset(im, 0x5a, sizeof *im);
    int rc = vkimg_load_memory(copy, n, "t.webp", o, im, e);
    free(copy);
    return rc;
}

/* ------------------------------------------------------------------ the caller's memory */

/* vkimg_load_opts.alloc: mode 0 gives memory of its own (an owner, as device memory
 * is given: filled with 0xa5 so that unwritten pixels show), 1 declines, 2 fails
 * (with VKIMG_E_USAGE: VKIMG_E_RUNTIME is 1, which the loader takes for declining). */
typedef struct alloc_log {
    int mode, calls, live, released;
    int w, h, c;
    vkimg_fmt fmt;
    void *last, *last_owner;
    int done; /* input_done calls */
} alloc_log;

typedef struct t_owner {
    vki_image_owner base;
    void *data;
    alloc_log *log;
} t_owner;

static void t_release(vki_image_owner *o)
{
    t_owner *t = (t_owner *)o;
    t->log->live--;
    t->log->released++;
    free(t->data);
    free(t);
}

static int t_alloc(void *user, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    alloc_log *l = user;
    l->calls++;
    l->w = w, l->h = h, l->c = c, l->fmt = fmt;
    if (l->mode == 1)
        return 1;
    if (l->mode == 2)
        return vki_fail(e, VKIMG_E_USAGE, "test allocator refuses %dx%dx%d", w, h, c);
    *im = (vkimg_image){ .w = w, .h = h, .c = c, .fmt = fmt };
    const size_t n = vkimg_image_bytes(im);
    t_owner *o = calloc(1, sizeof *o);
    if (!o || !(o->data = malloc(n)))
        exit(1);
    memset(o->data, 0xa5, n);
    o->base = (vki_image_owner){ .release = t_release, .cap = n };
    o->log = l;
    im->data = o->data;
    im->priv = o;
    l->live++;
    l->last = o->data;
    l->last_owner = o;
    return 0;
}

static void t_done_cb(void *user) { ((alloc_log *)user)->done++; }

/* ------------------------------------------------------------------ EXIF and ICC (as test_meta.c's) */

/* test_meta's EXIF blocks (tests/lib/exif_util.c): the orientation tag a SHORT */
static unsigned char *make_exif(int le, int orient, size_t *len)
{
    return t_exif_block(le, orient, 3, &g_seed, len);
}

/* Random bytes with a valid-looking ICC header (what fits of its 128 bytes) of
 * colour space cs ("RGB " or "GRAY"). */
static unsigned char *make_icc(size_t n, const char *cs)
{
    return t_icc_profile(n, cs, &g_seed);
}

/* ------------------------------------------------------------------ animations */

/* Two full-canvas frames through WebPAnimEncoder, lossless (malloc()ed; NULL on failure). */
static unsigned char *anim_encode(const vkimg_image *f1, const vkimg_image *f2, size_t *n)
{
    WebPAnimEncoderOptions ao;
    if (!WebPAnimEncoderOptionsInit(&ao))
        return NULL;
    ao.anim_params.bgcolor = 0xff00ffffu; /* opaque: the decode ignores it */
    WebPAnimEncoder *enc = WebPAnimEncoderNew(f1->w, f1->h, &ao);
    WebPConfig cfg;
    if (!enc || !WebPConfigInit(&cfg))
        return NULL;
    cfg.lossless = 1;
    const vkimg_image *fr[2] = { f1, f2 };
    int ok = 1;
    for (int i = 0; i < 2 && ok; i++) {
        WebPPicture pic;
        ok = WebPPictureInit(&pic);
        pic.width = fr[i]->w;
        pic.height = fr[i]->h;
        pic.use_argb = 1;
        ok = ok && WebPPictureImportRGBA(&pic, U8(fr[i]), fr[i]->w * 4) && WebPAnimEncoderAdd(enc, &pic, i * 100, &cfg);
        WebPPictureFree(&pic);
    }
    WebPData d;
    WebPDataInit(&d);
    ok = ok && WebPAnimEncoderAdd(enc, NULL, 200, NULL) && WebPAnimEncoderAssemble(enc, &d);
    WebPAnimEncoderDelete(enc);
    unsigned char *p = ok ? dup(d.bytes, d.size) : NULL;
    *n = ok ? d.size : 0;
    WebPDataClear(&d);
    return p;
}

/* An animation muxed by hand: frame i (a lossless still of frames[i], exact) at
 * (xs[i], ys[i]) (even) of a cw x ch canvas, no blending, no disposal. */
static unsigned char *anim_mux(const vkimg_image *frames, const int *xs, const int *ys, int nf, int cw, int ch,
                               uint32_t bgcolor, size_t *n)
{
    WebPMux *mux = WebPMuxNew();
    unsigned char *bs[8] = { 0 };
    int ok = mux != NULL;
    for (int i = 0; i < nf && ok; i++) {
        size_t bn;
        bs[i] = encode(&frames[i], 90, true, &bn);
        WebPMuxFrameInfo fi;
        memset(&fi, 0, sizeof fi);
        fi.bitstream = (WebPData){ bs[i], bn };
        fi.x_offset = xs[i];
        fi.y_offset = ys[i];
        fi.duration = 100;
        fi.id = WEBP_CHUNK_ANMF;
        fi.dispose_method = WEBP_MUX_DISPOSE_NONE;
        fi.blend_method = WEBP_MUX_NO_BLEND;
        ok = bs[i] && WebPMuxPushFrame(mux, &fi, 1) == WEBP_MUX_OK;
    }
    const WebPMuxAnimParams ap = { bgcolor, 0 };
    WebPData d;
    WebPDataInit(&d);
    ok = ok && WebPMuxSetAnimationParams(mux, &ap) == WEBP_MUX_OK && WebPMuxSetCanvasSize(mux, cw, ch) == WEBP_MUX_OK &&
         WebPMuxAssemble(mux, &d) == WEBP_MUX_OK;
    WebPMuxDelete(mux);
    for (int i = 0; i < nf; i++)
        free(bs[i]);
    unsigned char *p = ok ? dup(d.bytes, d.size) : NULL;
    *n = ok ? d.size : 0;
    WebPDataClear(&d);
    CHECK(p != NULL, "WebPMux could not make the animation");
    return p;
}

/* The hand-muxed test animation: canvas 48x36, frame 1 20x14 RGBA at (8, 6) (alpha 0
 * with random colours among its pixels), frame 2 opaque random over the canvas.
 * *first: what its first frame decodes to (the canvas transparent black outside). */
static unsigned char *test_anim(size_t *n, vkimg_image *first)
{
    vkimg_image fr[2] = { img_new(20, 14, 4), img_new(48, 36, 4) };
    fill(&fr[0], 1);
    fill(&fr[1], 2);
    set_alpha(&fr[1], 255);
    const int xs[2] = { 8, 0 }, ys[2] = { 6, 0 };
    unsigned char *p = anim_mux(fr, xs, ys, 2, 48, 36, 0xff2040c0u, n);
    *first = img_new(48, 36, 4); /* zeroed */
    for (int y = 0; y < 14; y++)
        memcpy(U8(first) + ((size_t)(y + 6) * 48 + 8) * 4, U8(&fr[0]) + (size_t)y * 20 * 4, 20 * 4);
    vkimg_image_free(&fr[0]);
    vkimg_image_free(&fr[1]);
    return p;
}

/* ------------------------------------------------------------------ tests */

static void test_lossless(void)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 29 }, { 31, 1 }, { 2, 2 }, { 37, 53 }, { 613, 7 }, { 1283, 19 } };
    int files = 0;
    for (size_t si = 0; si < VKI_ARRAY_LEN(sizes); si++)
        for (int c = 1; c <= 4; c++)
            for (int content = 0; content < 3; content++) {
                const int w = sizes[si][0], h = sizes[si][1];
                vkimg_image src = img_new(w, h, c);
                fill(&src, content);
                size_t n;
                unsigned char *f = encode(&src, 90, true, &n);
                if (!f) {
                    vkimg_image_free(&src);
                    continue;
                }
                chunk ck[8];
                const int nc = chunks(f, n, ck, 8);
                CHECK(nc == 1 && !strcmp(ck[0].type, "VP8L"), "%dx%dx%d content %d: lossless is one VP8L chunk (%d)",
                      w, h, c, content, nc);
                vkimg_image got, want = widened(&src);
                vkimg_err e;
                int rc = load(f, n, NULL, &got, &e);
                CHECK(rc == 0 && got.fmt == VKIMG_U8 && !got.priv && !strcmp(describe(&got, &want), "identical"),
                      "lossless %dx%dx%d content %d: %s", w, h, c, content, rc ? e.msg : describe(&got, &want));
                if (!rc)
                    vkimg_image_free(&got);
                /* the quality plays no part in a lossless file; a second thread changes no pixel */
                if (si == 4 && content == 1) {
                    size_t n1, n100;
                    unsigned char *f1 = encode(&src, 1, true, &n1), *f100 = encode(&src, 100, true, &n100);
                    CHECK(f1 && f100 && same(f1, n1, f, n) && same(f100, n100, f, n),
                          "%dx%dx%d: lossless at quality 1 / 100 not the file of quality 90 (%zu, %zu, %zu bytes)", w,
                          h, c, n1, n100, n);
                    free(f1);
                    free(f100);
                    unsigned char *ft = NULL;
                    size_t nt = 0;
                    rc = vki_webp_encode(&src, 90, true, 2, &ft, &nt, &e);
                    CHECK(rc == 0, "threads 2: %s", e.msg);
                    if (!rc && !(rc = load(ft, nt, NULL, &got, &e))) {
                        CHECK(!strcmp(describe(&got, &want), "identical"), "lossless, 2 threads, %dx%dx%d: %s", w, h,
                              c, describe(&got, &want));
                        vkimg_image_free(&got);
                    }
                    free(ft);
                }
                vkimg_image_free(&want);
                vkimg_image_free(&src);
                free(f);
                files++;
            }

    /* fully transparent, colours random: the colours come back (cfg.exact) */
    vkimg_image src = img_new(29, 23, 4);
    fill(&src, 2);
    set_alpha(&src, 0);
    size_t n;
    unsigned char *f = encode(&src, 90, true, &n);
    vkimg_image got;
    vkimg_err e;
    int rc = f ? load(f, n, NULL, &got, &e) : -1;
    CHECK(rc == 0 && !strcmp(describe(&got, &src), "identical"), "fully transparent: %s",
          rc ? e.msg : describe(&got, &src));
    if (!rc)
        vkimg_image_free(&got);
    free(f);

    /* opaque RGBA and gray + alpha: the file has no alpha, they come back RGB */
    for (int c = 2; c <= 4; c += 2) {
        vkimg_image op = img_new(37, 53, c);
        fill(&op, 1);
        set_alpha(&op, 255);
        f = encode(&op, 90, true, &n);
        rc = f ? load(f, n, NULL, &got, &e) : -1;
        vkimg_image want = rgb_of(&op);
        CHECK(rc == 0 && !strcmp(describe(&got, &want), "identical"), "opaque %d channels: %s", c,
              rc ? e.msg : describe(&got, &want));
        if (!rc)
            vkimg_image_free(&got);
        vkimg_image_free(&want);
        vkimg_image_free(&op);
        free(f);
    }
    vkimg_image_free(&src);

    /* what the encoder refuses */
    vkimg_image bad = img_new(4, 4, 3);
    unsigned char *p = (unsigned char *)1;
    size_t pn = 7;
    bad.fmt = VKIMG_U16;
    rc = vki_webp_encode(&bad, 90, true, 1, &p, &pn, &e);
    CHECK(rc == VKIMG_E_RUNTIME && !p && !pn, "u16 image encoded: rc %d", rc);
    bad.fmt = VKIMG_U8;
    vkimg_image_free(&bad);
    vkimg_image wide = img_new(16384, 1, 3);
    p = (unsigned char *)1;
    rc = vki_webp_encode(&wide, 90, false, 1, &p, &pn, &e);
    CHECK(rc != 0 && !p && !pn && strstr(e.msg, "16383"), "16384 wide: rc %d %s", rc, e.msg);
    vkimg_image_free(&wide);
    fprintf(stderr, "note: %d lossless files read back exactly\n", files);
}

static void test_lossy(void)
{
    static const int sizes[][2] = { { 97, 61 }, { 1, 1 }, { 1, 29 }, { 31, 1 }, { 613, 7 } };
    for (size_t si = 0; si < VKI_ARRAY_LEN(sizes); si++)
        for (int c = 1; c <= 4; c++) {
            const int w = sizes[si][0], h = sizes[si][1];
            vkimg_image src = img_new(w, h, c);
            fill(&src, 0);
            size_t n;
            unsigned char *f = encode(&src, 90, false, &n);
            if (!f) {
                vkimg_image_free(&src);
                continue;
            }
            const bool alpha = c == 2 || c == 4; /* the pattern has alpha below 255 */
            chunk ck[8];
            const int nc = chunks(f, n, ck, 8);
            const int i8 = find_chunk(ck, nc, "VP8 "), ia = find_chunk(ck, nc, "ALPH");
            CHECK(nc > 0 && i8 >= 0 && find_chunk(ck, nc, "VP8L") < 0 && (ia >= 0) == alpha &&
                      (!alpha || (!strcmp(ck[0].type, "VP8X") && ia < i8)),
                  "lossy %dx%dx%d: chunks (%d): VP8 %d, ALPH %d", w, h, c, nc, i8, ia);
            vkimg_image got;
            vkimg_err e;
            int rc = load(f, n, NULL, &got, &e);
            CHECK(rc == 0 && got.w == w && got.h == h && got.c == (alpha ? 4 : 3) && got.fmt == VKIMG_U8,
                  "lossy %dx%dx%d: %s %dx%dx%d", w, h, c, rc ? e.msg : "", got.w, got.h, got.c);
            if (rc)
                got.data = NULL;
            /* libwebp's own decode of the same bytes */
            int ow = 0, oh = 0;
            uint8_t *ref = alpha ? WebPDecodeRGBA(f, n, &ow, &oh) : WebPDecodeRGB(f, n, &ow, &oh);
            CHECK(ref && ow == w && oh == h && got.data &&
                      !memcmp(got.data, ref, (size_t)w * (size_t)h * (alpha ? 4u : 3u)),
                  "lossy %dx%dx%d: not WebPDecodeRGB%s's pixels", w, h, c, alpha ? "A" : "");
            WebPFree(ref);
            if (got.data && alpha) {
                size_t bad = 0;
                for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
                    bad += U8(&got)[i * 4 + 3] != U8(&src)[i * (size_t)c + (size_t)c - 1];
                CHECK(bad == 0, "lossy %dx%dx%d: %zu alpha samples changed", w, h, c, bad);
            }
            if (got.data && si == 0) { /* the smooth 97x61: sane quality, and less of it at quality 10 */
                const double p90 = psnr(&got, &src);
                CHECK(p90 > 30, "lossy %dx%dx%d quality 90: PSNR %.2f dB", w, h, c, p90);
                size_t n10;
                unsigned char *f10 = encode(&src, 10, false, &n10);
                vkimg_image g10;
                if (f10 && !(rc = load(f10, n10, NULL, &g10, &e))) {
                    const double p10 = psnr(&g10, &src);
                    CHECK(n10 < n && p10 < p90 && p10 > 20,
                          "lossy %dx%dx%d: quality 10 is %zu bytes, %.2f dB; quality 90 %zu bytes, %.2f dB", w, h, c,
                          n10, p10, n, p90);
                    vkimg_image_free(&g10);
                } else {
                    CHECK(0, "quality 10 %dx%dx%d: %s", w, h, c, e.msg);
                }
                free(f10);
            }
            if (got.data)
                vkimg_image_free(&got);
            vkimg_image_free(&src);
            free(f);
        }

    /* alpha as the chunks say, not the VP8X flag: a flagged file without ALPH is RGB
     * (as libwebpmux would flag it once its metadata is rewritten), an ALPH chunk
     * makes RGBA without the flag; an odd-sized chunk before them (padded) */
    vkimg_image s3 = img_new(45, 27, 3), s4 = img_new(45, 27, 4);
    fill(&s3, 0);
    fill(&s4, 0);
    size_t n3, n4;
    unsigned char *f3 = encode(&s3, 80, false, &n3), *f4 = encode(&s4, 80, false, &n4);
    chunk c3[4], c4[8];
    const int k3 = f3 ? chunks(f3, n3, c3, 4) : -1, k4 = f4 ? chunks(f4, n4, c4, 8) : -1;
    const int v3 = find_chunk(c3, k3, "VP8 "), a4 = find_chunk(c4, k4, "ALPH"), v4 = find_chunk(c4, k4, "VP8 ");
    CHECK(v3 >= 0 && a4 >= 0 && v4 >= 0, "lossy RGB / RGBA files: VP8 %d, ALPH %d, VP8 %d", v3, a4, v4);
    if (v3 >= 0 && a4 >= 0 && v4 >= 0) {
        unsigned char odd[129];
        for (size_t i = 0; i < sizeof odd; i++)
            odd[i] = (unsigned char)rnd(256);
        for (int k = 0; k < 4; k++) {
            const bool flagged = k & 1, alph = k & 2;
            bbuf b = { 0 };
            put_vp8x(&b, (flagged ? FL_ALPHA : 0) | FL_ICC, 45, 27);
            bb_riff_chunk(&b, "ICCP", odd, sizeof odd);
            if (alph)
                bb_put(&b, f4 + c4[a4].off, 8 + c4[a4].size + (c4[a4].size & 1));
            const unsigned char *v = alph ? f4 + c4[v4].off : f3 + c3[v3].off;
            const size_t vs = alph ? c4[v4].size : c3[v3].size;
            bb_put(&b, v, 8 + vs + (vs & 1));
            size_t n;
            unsigned char *f = riff(&b, &n);
            vkimg_image got;
            vkimg_err e;
            int rc = load(f, n, NULL, &got, &e);
            int ow = 0, oh = 0;
            uint8_t *ref = alph ? WebPDecodeRGBA(f, n, &ow, &oh) : WebPDecodeRGB(f, n, &ow, &oh);
            CHECK(rc == 0 && got.c == (alph ? 4 : 3) && ref && ow == 45 && oh == 27 &&
                      !memcmp(got.data, ref, vkimg_image_bytes(&got)),
                  "VP8X %s the alpha flag, %s ALPH: %s, %d channels", flagged ? "with" : "without",
                  alph ? "with" : "without", rc ? e.msg : "", got.c);
            WebPFree(ref);
            if (!rc)
                vkimg_image_free(&got);
            free(f);
        }
    }
    free(f3);
    free(f4);
    vkimg_image_free(&s3);
    vkimg_image_free(&s4);

    /* qualities outside 1..100 */
    vkimg_image src = img_new(8, 8, 3);
    fill(&src, 0);
    static const int bad_q[] = { 0, 101, -1, 1000 };
    for (size_t i = 0; i < VKI_ARRAY_LEN(bad_q); i++) {
        unsigned char *p = (unsigned char *)1;
        size_t pn = 7;
        vkimg_err e;
        int rc = vki_webp_encode(&src, bad_q[i], false, 1, &p, &pn, &e);
        CHECK(rc == VKIMG_E_USAGE && !p && !pn && strstr(e.msg, "1..100"), "quality %d: rc %d %s", bad_q[i], rc,
              e.msg);
    }
    vkimg_image_free(&src);
}

/* A copy of libwebp's WebPDecodeRGBA of f as an image (the lossy oracle). */
static vkimg_image oracle_rgba(const unsigned char *f, size_t n)
{
    int w = 0, h = 0;
    uint8_t *p = WebPDecodeRGBA(f, n, &w, &h);
    vkimg_image o = { 0 };
    CHECK(p != NULL, "WebPDecodeRGBA fails");
    if (p) {
        o = img_new(w, h, 4);
        memcpy(o.data, p, vkimg_image_bytes(&o));
        WebPFree(p);
    }
    return o;
}

static void test_alloc(void)
{
    vkimg_image s3 = img_new(37, 53, 3), s4 = img_new(41, 29, 4);
    fill(&s3, 1);
    fill(&s4, 0);
    struct {
        const char *what;
        unsigned char *f;
        size_t n;
        vkimg_image want;
    } cs[3];
    cs[0].what = "lossless RGB";
    cs[0].f = encode(&s3, 90, true, &cs[0].n);
    cs[0].want = s3;
    cs[1].what = "lossy RGBA";
    cs[1].f = encode(&s4, 75, false, &cs[1].n);
    cs[1].want = cs[1].f ? oracle_rgba(cs[1].f, cs[1].n) : (vkimg_image){ 0 };
    cs[2].what = "animation";
    cs[2].f = test_anim(&cs[2].n, &cs[2].want);
    for (int k = 0; k < 3; k++) {
        if (!cs[k].f || !cs[k].want.data)
            continue;
        const vkimg_image *want = &cs[k].want;
        for (int mode = 0; mode < 3; mode++) {
            alloc_log l = { .mode = mode };
            const vkimg_load_opts o = { .alloc = t_alloc, .input_done = t_done_cb, .user = &l };
            vkimg_image got;
            vkimg_err e;
            int rc = load(cs[k].f, cs[k].n, &o, &got, &e);
            CHECK(l.calls == 1 && l.w == want->w && l.h == want->h && l.c == want->c && l.fmt == VKIMG_U8,
                  "%s, allocator mode %d: %d calls, last %dx%dx%d", cs[k].what, mode, l.calls, l.w, l.h, l.c);
            CHECK(l.done == 1, "%s, mode %d: input_done called %d times", cs[k].what, mode, l.done);
            if (mode == 2) {
                CHECK(rc == VKIMG_E_USAGE && strstr(e.msg, "test allocator refuses") && all_zero(&got, sizeof got),
                      "%s: a failing allocator: rc %d %s", cs[k].what, rc, rc ? e.msg : "(decoded)");
                if (!rc)
                    vkimg_image_free(&got);
                continue;
            }
            CHECK(rc == 0 && !strcmp(describe(&got, want), "identical"), "%s, allocator mode %d: %s", cs[k].what,
                  mode, rc ? e.msg : describe(&got, want));
            if (rc)
                continue;
            if (mode == 0)
                CHECK(got.data == l.last && got.priv == l.last_owner, "%s: the pixels are not in the caller's memory",
                      cs[k].what);
            else
                CHECK(!got.priv, "%s: a declining allocator, yet an owner", cs[k].what);
            vkimg_image_free(&got);
            CHECK(l.live == 0 && l.released == (mode == 0), "%s, mode %d: %d allocations live, %d released",
                  cs[k].what, mode, l.live, l.released);
        }
        /* input_done alone takes the options' path too */
        alloc_log l = { 0 };
        const vkimg_load_opts od = { .input_done = t_done_cb, .user = &l };
        vkimg_image got;
        vkimg_err e;
        int rc = load(cs[k].f, cs[k].n, &od, &got, &e);
        CHECK(rc == 0 && l.done == 1 && !strcmp(describe(&got, want), "identical"), "%s, input_done only: %s",
              cs[k].what, rc ? e.msg : describe(&got, want));
        if (!rc)
            vkimg_image_free(&got);
        /* a decode that fails after the allocation (the last byte cut) leaves nothing */
        l = (alloc_log){ 0 };
        const vkimg_load_opts oa = { .alloc = t_alloc, .input_done = t_done_cb, .user = &l };
        rc = load(cs[k].f, cs[k].n - 1, &oa, &got, &e);
        CHECK(rc == VKIMG_E_RUNTIME && all_zero(&got, sizeof got) && l.live == 0 && l.calls == l.released &&
                  l.done == 1,
              "%s cut by a byte, with the allocator: rc %d, %d calls, %d live, %d released", cs[k].what, rc, l.calls,
              l.live, l.released);
    }
    for (int k = 0; k < 3; k++) {
        free(cs[k].f);
        if (k)
            vkimg_image_free(&cs[k].want);
    }
    vkimg_image_free(&s3);
    vkimg_image_free(&s4);
}

static void test_animation(void)
{
    /* WebPAnimEncoder, two full-canvas frames: the first has a transparent black
     * border (the encoder may cut it off: a first frame smaller than the canvas),
     * alpha 0 inside with colours it may change, partial and full alpha */
    vkimg_image f1 = img_new(48, 36, 4), f2 = img_new(48, 36, 4);
    fill(&f1, 1);
    for (int y = 0; y < 36; y++)
        for (int x = 0; x < 48; x++)
            if (x < 6 || y < 6 || x >= 42 || y >= 30)
                memset(U8(&f1) + ((size_t)y * 48 + (size_t)x) * 4, 0, 4);
    fill(&f2, 2);
    set_alpha(&f2, 255);
    size_t n;
    unsigned char *f = anim_encode(&f1, &f2, &n);
    CHECK(f != NULL, "WebPAnimEncoder failed");
    if (f) {
        chunk ck[16];
        const int nc = chunks(f, n, ck, 16);
        const int ia = find_chunk(ck, nc, "ANMF");
        CHECK(nc > 0 && !strcmp(ck[0].type, "VP8X") && (f[20] & FL_ANIM) && find_chunk(ck, nc, "ANIM") >= 0 &&
                  count_chunks(ck, nc, "ANMF") == 2,
              "WebPAnimEncoder's file: %d chunks, not VP8X + ANIM + 2 ANMF", nc);
        if (ia >= 0 && ck[ia].size >= 16) {
            const unsigned char *a = f + ck[ia].off + 8;
            fprintf(stderr, "note: WebPAnimEncoder's first frame: %ux%u at (%u, %u) of the 48x36 canvas\n",
                    rle24(a + 6) + 1, rle24(a + 9) + 1, 2 * rle24(a), 2 * rle24(a + 3));
        }
        vkimg_image got;
        vkimg_err e;
        int rc = load(f, n, NULL, &got, &e);
        CHECK(rc == 0 && got.w == 48 && got.h == 36 && got.c == 4, "animation: %s %dx%dx%d", rc ? e.msg : "", got.w,
              got.h, got.c);
        if (!rc && got.w == 48 && got.h == 36 && got.c == 4) {
            size_t bad_a = 0, bad_c = 0;
            for (size_t i = 0; i < 48 * 36; i++) {
                const unsigned char *g = U8(&got) + 4 * i, *s = U8(&f1) + 4 * i;
                bad_a += g[3] != s[3];
                bad_c += s[3] && memcmp(g, s, 3);
            }
            CHECK(bad_a == 0 && bad_c == 0, "animation: %zu alpha and %zu colour samples not the first frame's", bad_a,
                  bad_c);
        }
        if (!rc)
            vkimg_image_free(&got);
        free(f);
    }
    vkimg_image_free(&f1);
    vkimg_image_free(&f2);

    /* muxed by hand: a 20x14 first frame at (8, 6), the rest of the canvas transparent
     * black though ANIM's background is opaque */
    vkimg_image want;
    f = test_anim(&n, &want);
    if (f) {
        chunk ck[16];
        const int nc = chunks(f, n, ck, 16);
        const int ia = find_chunk(ck, nc, "ANMF");
        const unsigned char *a = ia >= 0 ? f + ck[ia].off + 8 : NULL;
        CHECK(a && rle24(a) == 4 && rle24(a + 3) == 3 && rle24(a + 6) == 19 && rle24(a + 9) == 13 &&
                  count_chunks(ck, nc, "ANMF") == 2,
              "the hand-muxed file's first frame is not 20x14 at (8, 6)");
        vkimg_image got;
        vkimg_err e;
        int rc = load(f, n, NULL, &got, &e);
        CHECK(rc == 0 && !strcmp(describe(&got, &want), "identical"), "muxed animation: %s",
              rc ? e.msg : describe(&got, &want));
        if (!rc)
            vkimg_image_free(&got);
        rc = vki_webp_decode(f, n, "a.webp", 0, &got, &e);
        CHECK(rc == 0 && !strcmp(describe(&got, &want), "identical"), "vki_webp_decode of the animation: %s",
              rc ? e.msg : describe(&got, &want));
        if (!rc)
            vkimg_image_free(&got);
        free(f);
    }
    vkimg_image_free(&want);
}

/* f must be refused: VKIMG_E_RUNTIME, a one-line message "t.webp: ..." holding want
 * (if not NULL), *out zeroed, the allocator never called (when check_alloc). */
static void check_bad_(int line, const char *what, const unsigned char *f, size_t n, uint64_t max_pixels,
                       const char *want, int check_alloc)
{
    alloc_log l = { 0 };
    const vkimg_load_opts o = { .max_pixels = max_pixels, .alloc = t_alloc, .user = &l };
    vkimg_image im;
    vkimg_err e;
    int rc = load(f, n, &o, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && all_zero(&im, sizeof im) && !strncmp(e.msg, "t.webp: ", 8) &&
              !strchr(e.msg, '\n') && (!want || strstr(e.msg, want)) && (!check_alloc || l.calls == 0) && l.live == 0,
          "line %d %s: rc %d '%s' (want '%s'), allocator called %d times", line, what, rc, rc ? e.msg : "(decoded)",
          want ? want : "", l.calls);
    if (!rc)
        vkimg_image_free(&im);
}
#define CHECK_BAD(what, f, n, max_pixels, want, check_alloc) \
    check_bad_(__LINE__, what, f, n, max_pixels, want, check_alloc)

/* Every truncation of f (every length up to 4096, then a stride, and the last 512)
 * refused: VKIMG_E_RUNTIME naming the file, *out zeroed, no allocation left (through
 * the allocator, and vki_webp_decode itself too). */
static void check_cuts(const char *what, const unsigned char *f, size_t n)
{
    int bad = 0;
    size_t tried = 0;
    const size_t step = n > 6000 ? (n - 4608) / 1500 + 1 : 1;
    for (size_t cut = 0; cut < n; cut += (cut < 4096 || cut + 512 >= n) ? 1 : step) {
        unsigned char *copy = dup(f, cut);
        for (int way = 0; way < 3; way++) {
            alloc_log l = { 0 };
            const vkimg_load_opts o = { .alloc = t_alloc, .user = &l };
            vkimg_image im;
            vkimg_err e;
            memset(&im, 0x5a, sizeof im);
            int rc = way == 2 ? vki_webp_decode(copy, cut, "cut.webp", 0, &im, &e)
                              : vkimg_load_memory(copy, cut, "cut.webp", way ? &o : NULL, &im, &e);
            if (rc != VKIMG_E_RUNTIME || !all_zero(&im, sizeof im) || strncmp(e.msg, "cut.webp: ", 10) ||
                strchr(e.msg, '\n') || l.live) {
                if (!bad++)
                    fprintf(stderr, "  %s: cut at %zu of %zu (way %d): rc %d %s, %d allocations live\n", what, cut, n,
                            way, rc, rc ? e.msg : "(decoded)", l.live);
                if (!rc)
                    vkimg_image_free(&im);
            }
        }
        free(copy);
        tried++;
    }
    CHECK(bad == 0, "%s: %d of %zu truncations not refused cleanly", what, bad, tried);
}

/* Damage to f: 150 times 1-4 bytes overwritten, bits flipped or runs set to 0 / 0xff
 * in the bitstreams (the image chunk after its header, ALPH: the size is not
 * touched) must decode to the size and channels of f or be refused cleanly; then
 * anywhere, a sane image or a clean refusal. */
static void damage(const char *what, const unsigned char *f, size_t n, int *decoded, int *refused)
{
    chunk ck[16];
    const int nc = chunks(f, n, ck, 16);
    size_t lo[4], len[4];
    int nr = 0;
    for (int i = 0; i < nc; i++) {
        const size_t hdr = !strcmp(ck[i].type, "VP8 ") ? 10 : !strcmp(ck[i].type, "VP8L") ? 5
                         : !strcmp(ck[i].type, "ALPH") ? 0 : (size_t)-1;
        if (hdr != (size_t)-1 && ck[i].size > hdr && nr < 4) {
            lo[nr] = ck[i].off + 8 + hdr;
            len[nr++] = ck[i].size - hdr;
        }
    }
    vkimg_image ref;
    vkimg_err e;
    if (nr == 0 || load(f, n, NULL, &ref, &e)) {
        CHECK(0, "%s: no bitstream to damage, or it does not decode", what);
        return;
    }
    int bad = 0;
    for (int it = 0; it < 300; it++) {
        const int anywhere = it >= 150;
        unsigned char *m = dup(f, n);
        const int kind = it % 3, nm = 1 + (int)rnd(4);
        for (int k = 0; k < nm; k++) {
            const int r = (int)rnd((unsigned)nr);
            const size_t from = anywhere ? 0 : lo[r], span = anywhere ? n : len[r];
            const size_t at = from + rnd((unsigned)span), room = from + span - at;
            if (kind == 0)
                m[at] = (unsigned char)rnd(256);
            else if (kind == 1)
                m[at] ^= (unsigned char)(1u << rnd(8));
            else
                memset(m + at, it & 8 ? 0xff : 0, room < 4 ? room : 4);
        }
        /* anywhere, a header may say 16384x16384: the limit keeps the memory small */
        alloc_log l = { 0 };
        const vkimg_load_opts o = { .max_pixels = anywhere ? 1u << 20 : 0, .alloc = it & 1 ? t_alloc : NULL,
                                    .user = &l };
        vkimg_image im;
        int rc = load(m, n, &o, &im, &e);
        if (rc == 0) {
            ++*decoded;
            const int ok = anywhere ? im.w > 0 && im.h > 0 && (im.c == 3 || im.c == 4) &&
                                          (uint64_t)im.w * (uint64_t)im.h <= 1u << 20
                                    : im.w == ref.w && im.h == ref.h && im.c == ref.c;
            if (!ok && !bad++)
                fprintf(stderr, "  %s damage %d: %dx%dx%d, not %dx%dx%d\n", what, it, im.w, im.h, im.c, ref.w, ref.h,
                        ref.c);
            vkimg_image_free(&im);
        } else {
            ++*refused;
            if ((rc != VKIMG_E_RUNTIME || !all_zero(&im, sizeof im) || strncmp(e.msg, "t.webp: ", 8) ||
                 strchr(e.msg, '\n')) &&
                !bad++)
                fprintf(stderr, "  %s damage %d: rc %d %s\n", what, it, rc, e.msg);
        }
        if (l.live && !bad++)
            fprintf(stderr, "  %s damage %d: %d allocations left\n", what, it, l.live);
        free(m);
    }
    CHECK(bad == 0, "%s: %d damaged files handled wrongly", what, bad);
    vkimg_image_free(&ref);
}

/* f with its VP8X canvas set to w x h. */
static unsigned char *with_canvas(const unsigned char *f, size_t n, uint32_t w, uint32_t h)
{
    unsigned char *m = dup(f, n);
    if (n >= 30 && !memcmp(m + 12, "VP8X", 4)) {
        m[24] = (unsigned char)(w - 1), m[25] = (unsigned char)((w - 1) >> 8), m[26] = (unsigned char)((w - 1) >> 16);
        m[27] = (unsigned char)(h - 1), m[28] = (unsigned char)((h - 1) >> 8), m[29] = (unsigned char)((h - 1) >> 16);
    } else {
        CHECK(0, "with_canvas: no VP8X");
    }
    return m;
}

static void test_hostile(void)
{
    vkimg_image s3 = img_new(37, 53, 3), s4 = img_new(41, 29, 4), big = img_new(211, 97, 3);
    fill(&s3, 1);
    fill(&s4, 0);
    fill(&big, 0);
    size_t n3, n4, nl, nb, na, nm;
    unsigned char *f3 = encode(&s3, 90, true, &n3), *f4 = encode(&s4, 75, false, &n4),
                  *fl = encode(&s3, 90, false, &nl), *fb = encode(&big, 90, true, &nb);
    vkimg_image first;
    unsigned char *fa = test_anim(&na, &first);
    vkimg_image_free(&first);
    /* a tagged file: VP8X, ICCP, VP8L, EXIF */
    vki_meta m = { 0 };
    m.icc = make_icc(129, "RGB ");
    m.icc_len = 129;
    m.exif = make_exif(1, 6, &m.exif_len);
    unsigned char *fm = NULL;
    vkimg_err e;
    CHECK(f3 && vki_webp_add_meta(f3, n3, &m, &fm, &nm, NULL, &e) == 0, "add_meta: %s", e.msg);
    vki_meta_free(&m);
    if (!f3 || !f4 || !fl || !fb || !fa || !fm)
        goto out;

    check_cuts("lossless RGB", f3, n3);
    check_cuts("lossy RGBA", f4, n4);
    check_cuts("lossy RGB", fl, nl);
    check_cuts("lossless 211x97", fb, nb);
    check_cuts("animation", fa, na);
    check_cuts("tagged", fm, nm);

    int decoded = 0, refused = 0;
    damage("lossless RGB", f3, n3, &decoded, &refused);
    damage("lossy RGBA", f4, n4, &decoded, &refused);
    damage("lossy RGB", fl, nl, &decoded, &refused);
    damage("tagged", fm, nm, &decoded, &refused);
    CHECK(decoded > 0 && refused > 0, "damage exercised both outcomes (%d decoded, %d refused)", decoded, refused);
    fprintf(stderr, "note: %d damaged files: %d decoded, %d refused\n", decoded + refused, decoded, refused);

    /* canvases over the limit: refused from the header, before the allocator is called */
    bbuf b = { 0 };
    size_t n;
    put_vp8x(&b, 0, 20000, 20000);
    unsigned char *f = riff(&b, &n);
    CHECK_BAD("VP8X 20000x20000, nothing else", f, n, 0, "20000x20000", 1);
    free(f);
    put_vp8x(&b, FL_ANIM | FL_ALPHA, 20000, 20000);
    const unsigned char anim[6] = { 0, 0, 0, 0, 0, 0 };
    bb_riff_chunk(&b, "ANIM", anim, 6);
    f = riff(&b, &n);
    CHECK_BAD("animated VP8X 20000x20000", f, n, 0, "20000x20000", 1);
    free(f);
    f = with_canvas(fa, na, 20000, 20000);
    CHECK_BAD("the animation on a 20000x20000 canvas", f, na, 0, "20000x20000", 1);
    free(f);
    f = with_canvas(fm, nm, 20000, 20000); /* the VP8L says 37x53 */
    CHECK_BAD("a still VP8X of 20000x20000 with a 37x53 bitstream", f, nm, 0, NULL, 1);
    free(f);
    f = with_canvas(fm, nm, 38, 53);
    CHECK_BAD("a still VP8X of 38x53 with a 37x53 bitstream", f, nm, 0, NULL, 1);
    free(f);
    put_vp8x(&b, 0, 300, 200);
    f = riff(&b, &n);
    CHECK_BAD("VP8X 300x200 over max_pixels 50000", f, n, 50000, "300x200", 1);
    free(f);
    /* max_pixels at the boundary */
    CHECK_BAD("37x53 over max_pixels", f3, n3, 37 * 53 - 1, "37x53", 1);
    CHECK_BAD("animation over max_pixels", fa, na, 48 * 36 - 1, "48x36", 1);
    for (int k = 0; k < 2; k++) {
        const vkimg_load_opts o = { .max_pixels = k ? 48 * 36 : 37 * 53 };
        vkimg_image im;
        int rc = load(k ? fa : f3, k ? na : n3, &o, &im, &e);
        CHECK(rc == 0, "max_pixels exactly the %s's size: %s", k ? "animation" : "image", e.msg);
        if (!rc)
            vkimg_image_free(&im);
    }

    /* RIFF of another form; WebP headers alone; chunks of nothing */
    bbuf w = { 0 };
    bb_put(&w, "RIFF", 4);
    bb_le32(&w, 28);
    bb_put(&w, "WAVEfmt ", 8);
    bb_le32(&w, 16);
    for (int i = 0; i < 16; i++)
        bb_u8(&w, (unsigned)i);
    CHECK_BAD("RIFF WAVE", w.p, w.n, 0, "not a supported image", 1);
    memcpy(w.p + 8, "WEBX", 4);
    CHECK_BAD("RIFF WEBX", w.p, w.n, 0, "not a supported image", 1);
    free(w.p);
    static const unsigned char hdr_only[12] = { 'R', 'I', 'F', 'F', 4, 0, 0, 0, 'W', 'E', 'B', 'P' };
    CHECK_BAD("RIFF WEBP and no chunk", hdr_only, 12, 0, "WebP", 1);
    bb_riff_chunk(&b, "VP8L", NULL, 0);
    f = riff(&b, &n);
    CHECK_BAD("an empty VP8L chunk", f, n, 0, "WebP", 1);
    free(f);
    bb_riff_chunk(&b, "ABCD", "xyzw", 4);
    f = riff(&b, &n);
    CHECK_BAD("an unknown chunk only", f, n, 0, "WebP", 1);
    free(f);
    /* the RIFF size saying more than there is: truncated; data after the RIFF: ignored */
    f = dup(f3, n3);
    const uint32_t rs = rle32(f + 4) + 2;
    f[4] = (unsigned char)rs, f[5] = (unsigned char)(rs >> 8), f[6] = (unsigned char)(rs >> 16),
    f[7] = (unsigned char)(rs >> 24);
    CHECK_BAD("RIFF size 2 over the data", f, n3, 0, NULL, 0);
    free(f);
    f = malloc(n3 + 9);
    memcpy(f, f3, n3);
    memcpy(f + n3, "trailing!", 9);
    vkimg_image im;
    int rc = load(f, n3 + 9, NULL, &im, &e);
    CHECK(rc == 0 && !strcmp(describe(&im, &s3), "identical"), "bytes after the RIFF: %s",
          rc ? e.msg : describe(&im, &s3));
    if (!rc)
        vkimg_image_free(&im);
    free(f);

    /* a header that promises a canvas the bytes do not hold: refused before the
     * caller's memory is taken (no allocation a length field the data cannot back) */
    put_vp8x(&b, 0, 16384, 16384);
    f = riff(&b, &n);
    alloc_log l = { .mode = 1 };
    const vkimg_load_opts o = { .alloc = t_alloc, .user = &l };
    rc = load(f, n, &o, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "truncated") && l.calls == 0,
          "a %zu-byte VP8X-only file of 16384x16384: rc %d (%s), allocator called %d times", n, rc,
          rc ? e.msg : "decoded", l.calls);
    if (!rc)
        vkimg_image_free(&im);
    free(f);
out:
    free(f3);
    free(f4);
    free(fl);
    free(fb);
    free(fa);
    free(fm);
    vkimg_image_free(&s3);
    vkimg_image_free(&s4);
    vkimg_image_free(&big);
}

/* vki_meta_read_webp and vki_meta_read of f (exact-size copies) must give these. */
static void expect_meta_(int line, const char *what, const unsigned char *f, size_t n, const unsigned char *icc,
                         size_t icc_len, const unsigned char *exif, size_t exif_len, int orientation)
{
    for (int way = 0; way < 2; way++) {
        vki_meta r;
        vkimg_err e;
        unsigned char *copy = dup(f, n);
        memset(&r, 0x5a, sizeof r);
        int rc = way ? vki_meta_read(copy, n, &r, &e) : vki_meta_read_webp(copy, n, &r, &e);
        free(copy);
        CHECK(rc == 0, "line %d %s (%s): %s", line, what, way ? "vki_meta_read" : "vki_meta_read_webp", e.msg);
        if (rc)
            continue;
        CHECK(same(r.icc, r.icc_len, icc, icc_len), "line %d %s: ICC %zu bytes back, %zu put in", line, what,
              r.icc_len, icc_len);
        CHECK(same(r.exif, r.exif_len, exif, exif_len), "line %d %s: EXIF %zu bytes back, %zu put in", line, what,
              r.exif_len, exif_len);
        CHECK(r.orientation == orientation, "line %d %s: orientation %d, want %d", line, what, r.orientation,
              orientation);
        CHECK((r.icc == NULL) == (r.icc_len == 0) && (r.exif == NULL) == (r.exif_len == 0) && !r.icc_name[0],
              "line %d %s: NULL iff empty, no ICC name", line, what);
        vki_meta_free(&r);
    }
}
#define EXPECT_META(what, f, n, icc, icc_len, exif, exif_len, orientation) \
    expect_meta_(__LINE__, what, f, n, icc, icc_len, exif, exif_len, orientation)

/* vki_meta_read_webp of f must fail: VKIMG_E_RUNTIME, *m empty. */
static void expect_meta_error_(int line, const char *what, const unsigned char *f, size_t n, const char *want)
{
    vki_meta r;
    vkimg_err e;
    unsigned char *copy = dup(f, n);
    memset(&r, 0x5a, sizeof r);
    int rc = vki_meta_read_webp(copy, n, &r, &e);
    free(copy);
    CHECK(rc == VKIMG_E_RUNTIME && !r.icc && !r.icc_len && !r.exif && !r.exif_len && r.orientation == 1 &&
              (!want || strstr(e.msg, want)),
          "line %d %s: rc %d '%s', ICC %zu, EXIF %zu, orientation %d", line, what, rc, rc ? e.msg : "", r.icc_len,
          r.exif_len, r.orientation);
    if (!rc)
        vki_meta_free(&r);
}
#define EXPECT_META_ERROR(what, f, n, want) expect_meta_error_(__LINE__, what, f, n, want)

/* m added to base (which decodes to ref) by vki_webp_add_meta: the metadata back
 * byte for byte, the layout (RIFF size and padding; VP8X first with its flags and
 * canvas; ICCP right after it, EXIF after the image; one of each), the same pixels.
 * Returns the new file (or NULL). */
static unsigned char *meta_roundtrip(const char *what, const unsigned char *base, size_t bn, const vkimg_image *ref,
                                     const vki_meta *m, int orientation, size_t *on)
{
    unsigned char *o = (unsigned char *)1;
    unsigned dropped = 99;
    vkimg_err e;
    int rc = vki_webp_add_meta(base, bn, m, &o, on, &dropped, &e);
    CHECK(rc == 0 && o && dropped == 0, "%s: add: rc %d %s (dropped %u)", what, rc, rc ? e.msg : "", dropped);
    if (rc)
        return NULL;
    EXPECT_META(what, o, *on, m->icc, m->icc_len, m->exif, m->exif_len, m->exif_len ? orientation : 1);
    vki_meta back;
    if (vki_meta_read_webp(o, *on, &back, &e) == 0) {
        CHECK(same(back.xmp, back.xmp_len, m->xmp, m->xmp_len), "%s: XMP %zu bytes back, %zu put in", what,
              back.xmp_len, m->xmp_len);
        vki_meta_free(&back);
    }
    chunk ck[32];
    const int nc = chunks(o, *on, ck, 32);
    CHECK(nc > 0, "%s: not a well-formed RIFF (RIFF size, chunk sizes, padding)", what);
    if (nc > 0) {
        const int ii = find_chunk(ck, nc, "ICCP"), ie = find_chunk(ck, nc, "EXIF");
        int img = -1;
        for (int i = 0; i < nc; i++)
            if (!strcmp(ck[i].type, "VP8 ") || !strcmp(ck[i].type, "VP8L") || !strcmp(ck[i].type, "ANMF"))
                img = i;
        CHECK(count_chunks(ck, nc, "ICCP") == (m->icc_len > 0) && count_chunks(ck, nc, "EXIF") == (m->exif_len > 0) &&
                  count_chunks(ck, nc, "XMP ") == (m->xmp_len > 0),
              "%s: %d ICCP, %d EXIF and %d XMP chunks", what, count_chunks(ck, nc, "ICCP"),
              count_chunks(ck, nc, "EXIF"), count_chunks(ck, nc, "XMP "));
        const bool anim = find_chunk(ck, nc, "ANMF") >= 0;
        if (m->icc_len || m->exif_len || m->xmp_len || anim) {
            const unsigned fl = ck[0].size == 10 ? o[20] : 0;
            CHECK(!strcmp(ck[0].type, "VP8X") && ck[0].size == 10 && !!(fl & FL_ICC) == (m->icc_len > 0) &&
                      !!(fl & FL_EXIF) == (m->exif_len > 0) && !!(fl & FL_XMP) == (m->xmp_len > 0) &&
                      !!(fl & FL_ANIM) == anim &&
                      (anim || !!(fl & FL_ALPHA) == (ref->c == 4)),
                  "%s: VP8X %s of %zu bytes, flags 0x%02x", what, ck[0].type, ck[0].size, fl);
            CHECK(rle24(o + 24) + 1 == (uint32_t)ref->w && rle24(o + 27) + 1 == (uint32_t)ref->h,
                  "%s: VP8X canvas %ux%u", what, rle24(o + 24) + 1, rle24(o + 27) + 1);
        }
        if (m->icc_len)
            CHECK(ii == 1 && same(o + ck[ii].off + 8, ck[ii].size, m->icc, m->icc_len), "%s: ICCP chunk %d", what,
                  ii);
        if (m->exif_len)
            CHECK(ie > img && same(o + ck[ie].off + 8, ck[ie].size, m->exif, m->exif_len), "%s: EXIF chunk %d", what,
                  ie);
        const int ix = find_chunk(ck, nc, "XMP ");
        if (m->xmp_len)
            CHECK(ix > img && ix > ie && same(o + ck[ix].off + 8, ck[ix].size, m->xmp, m->xmp_len),
                  "%s: XMP chunk %d", what, ix);
    }
    vkimg_image got;
    rc = load(o, *on, NULL, &got, &e);
    CHECK(rc == 0 && !strcmp(describe(&got, ref), "identical"), "%s: pixels: %s", what,
          rc ? e.msg : describe(&got, ref));
    if (!rc)
        vkimg_image_free(&got);
    return o;
}

static void test_meta(void)
{
    vkimg_image s3 = img_new(37, 53, 3), s4 = img_new(37, 53, 4);
    fill(&s3, 1);
    fill(&s4, 0);
    struct {
        const char *what;
        unsigned char *f;
        size_t n;
        vkimg_image ref;
    } bs[5] = { { "lossless RGB", NULL, 0, { 0 } },
                { "lossless RGBA", NULL, 0, { 0 } },
                { "lossy RGB", NULL, 0, { 0 } },
                { "lossy RGBA", NULL, 0, { 0 } },
                { "animation", NULL, 0, { 0 } } };
    bs[0].f = encode(&s3, 90, true, &bs[0].n);
    bs[1].f = encode(&s4, 90, true, &bs[1].n);
    bs[2].f = encode(&s3, 80, false, &bs[2].n);
    bs[3].f = encode(&s4, 80, false, &bs[3].n);
    vkimg_image first;
    bs[4].f = test_anim(&bs[4].n, &first);
    vkimg_image_free(&first);
    vkimg_err e;
    for (int b = 0; b < 5; b++) {
        int rc = bs[b].f ? load(bs[b].f, bs[b].n, NULL, &bs[b].ref, &e) : -1;
        CHECK(rc == 0, "%s: %s", bs[b].what, rc == -1 ? "not made" : e.msg);
        if (rc) {
            for (int k = 0; k < 5; k++)
                free(bs[k].f);
            vkimg_image_free(&s3);
            vkimg_image_free(&s4);
            return;
        }
        EXPECT_META(bs[b].what, bs[b].f, bs[b].n, NULL, 0, NULL, 0, 1);
    }
    /* the lossy RGBA file (VP8X + ALPH + VP8) has the source's alpha */
    size_t abad = 0;
    for (size_t i = 0; i < 37 * 53; i++)
        abad += U8(&bs[3].ref)[4 * i + 3] != U8(&s4)[4 * i + 3];
    CHECK(bs[3].ref.c == 4 && abad == 0, "lossy RGBA: %zu alpha samples changed", abad);

    static const size_t icc_sizes[] = { 0, 1, 129, 70000, 70001 };
    int combos = 0;
    for (int b = 0; b < 5; b++)
        for (size_t si = 0; si < VKI_ARRAY_LEN(icc_sizes); si++)
            for (int variant = 0; variant < 3; variant++) { /* no EXIF, II, MM */
                const int orient = 1 + combos % 8;
                char what[128];
                snprintf(what, sizeof what, "%s + ICC %zu + EXIF %s o%d", bs[b].what, icc_sizes[si],
                         variant == 0 ? "none" : variant == 1 ? "II" : "MM", orient);
                vki_meta m = { 0 };
                m.icc_len = icc_sizes[si];
                m.icc = m.icc_len ? make_icc(m.icc_len, "RGB ") : NULL;
                if (variant)
                    m.exif = make_exif(variant == 1, orient, &m.exif_len);
                if (combos % 3 != 1) { /* an XMP packet of odd or even size */
                    m.xmp_len = 1 + (size_t)combos * 37 % 300;
                    m.xmp = malloc(m.xmp_len);
                    for (size_t i = 0; m.xmp && i < m.xmp_len; i++)
                        m.xmp[i] = (unsigned char)('a' + (i + (size_t)combos) % 26);
                }
                size_t on;
                unsigned char *o = meta_roundtrip(what, bs[b].f, bs[b].n, &bs[b].ref, &m, orient, &on);
                if (o && b == 3 && si == 2 && variant == 2) { /* replaced on top: the second metadata only */
                    vki_meta m2 = { 0 };
                    m2.icc = make_icc(300, "RGB ");
                    m2.icc_len = 300;
                    m2.exif = make_exif(variant != 1, 8, &m2.exif_len);
                    m2.xmp = malloc(5);
                    memcpy(m2.xmp, "<x/>\n", 5);
                    m2.xmp_len = 5; /* in place of the first XMP where there is one */
                    size_t on2, on3, on4;
                    snprintf(what + strlen(what), sizeof what - strlen(what), " replaced");
                    unsigned char *o2 = meta_roundtrip(what, o, on, &bs[b].ref, &m2, 8, &on2);
                    /* an ICC profile alone replaces the profile, the EXIF block stays */
                    vki_meta m3 = { .icc = make_icc(77, "RGB "), .icc_len = 77 };
                    unsigned char *o3 = NULL, *o4 = NULL;
                    int rc = o2 ? vki_webp_add_meta(o2, on2, &m3, &o3, &on3, NULL, &e) : -1;
                    CHECK(rc == 0, "%s, ICC only: %s", what, e.msg);
                    if (!rc)
                        EXPECT_META("ICC replaced, EXIF kept", o3, on3, m3.icc, 77, m2.exif, m2.exif_len, 8);
                    vki_meta m4 = { 0 };
                    m4.exif = make_exif(1, 2, &m4.exif_len);
                    rc = o3 ? vki_webp_add_meta(o3, on3, &m4, &o4, &on4, NULL, &e) : -1;
                    CHECK(rc == 0, "%s, EXIF only: %s", what, e.msg);
                    if (!rc) {
                        EXPECT_META("EXIF replaced, ICC kept", o4, on4, m3.icc, 77, m4.exif, m4.exif_len, 2);
                        chunk ck[16];
                        const int nc = chunks(o4, on4, ck, 16);
                        CHECK(nc > 0 && count_chunks(ck, nc, "ICCP") == 1 && count_chunks(ck, nc, "EXIF") == 1 &&
                                  count_chunks(ck, nc, "ALPH") == 1 && count_chunks(ck, nc, "VP8X") == 1,
                              "three times replaced: %d chunks", nc);
                        vkimg_image got;
                        rc = load(o4, on4, NULL, &got, &e);
                        CHECK(rc == 0 && !strcmp(describe(&got, &bs[b].ref), "identical"), "replaced: pixels: %s",
                              rc ? e.msg : describe(&got, &bs[b].ref));
                        if (!rc)
                            vkimg_image_free(&got);
                    }
                    free(o2);
                    free(o3);
                    free(o4);
                    vki_meta_free(&m2);
                    vki_meta_free(&m3);
                    vki_meta_free(&m4);
                }
                free(o);
                vki_meta_free(&m);
                combos++;
            }

    /* made by hand: an EXIF chunk as some writers put it, "Exif\0\0" + the TIFF block;
     * one whose payload is no TIFF block (the next one counts); two of each */
    const unsigned char *vp8l = bs[0].f + 12; /* the simple lossless file's VP8L chunk */
    const size_t vp8l_n = bs[0].n - 12;
    size_t xl, yl, n;
    unsigned char *x = make_exif(0, 5, &xl), *y = make_exif(1, 7, &yl);
    bbuf pay = { 0 };
    bb_put(&pay, "Exif\0\0", 6);
    bb_put(&pay, x, xl);
    bbuf b = { 0 };
    put_vp8x(&b, FL_EXIF, 37, 53);
    bb_put(&b, vp8l, vp8l_n);
    bb_riff_chunk(&b, "EXIF", pay.p, pay.n);
    unsigned char *f = riff(&b, &n);
    EXPECT_META("EXIF with an Exif\\0\\0 prefix", f, n, NULL, 0, x, xl, 5);
    vkimg_image got;
    int rc = load(f, n, NULL, &got, &e);
    CHECK(rc == 0 && !strcmp(describe(&got, &bs[0].ref), "identical"), "Exif prefix: pixels: %s",
          rc ? e.msg : describe(&got, &bs[0].ref));
    if (!rc)
        vkimg_image_free(&got);
    free(f);
    put_vp8x(&b, FL_EXIF | FL_ICC, 37, 53);
    unsigned char *icc1 = make_icc(131, "RGB "), *icc2 = make_icc(64, "RGB ");
    bb_riff_chunk(&b, "ICCP", icc1, 131);
    bb_riff_chunk(&b, "ICCP", icc2, 64);
    bb_put(&b, vp8l, vp8l_n);
    bb_riff_chunk(&b, "EXIF", "Exif\0\0MM\0+junk", 14);
    bb_riff_chunk(&b, "EXIF", y, yl);
    bb_riff_chunk(&b, "EXIF", x, xl);
    f = riff(&b, &n);
    EXPECT_META("two ICCP, EXIF of no TIFF block then two EXIF", f, n, icc1, 131, y, yl, 7);
    free(f);
    put_vp8x(&b, FL_EXIF, 37, 53);
    bb_put(&b, vp8l, vp8l_n);
    bb_riff_chunk(&b, "EXIF", "Exif\0\0", 6);
    f = riff(&b, &n);
    EXPECT_META("EXIF of only Exif\\0\\0", f, n, NULL, 0, NULL, 0, 1);
    free(f);
    /* an ICCP after the RIFF's end is not the file's */
    put_vp8x(&b, FL_ICC, 37, 53);
    bb_put(&b, vp8l, vp8l_n);
    f = riff(&b, &n);
    bbuf after = { 0 };
    bb_put(&after, f, n);
    bb_riff_chunk(&after, "ICCP", icc1, 131);
    EXPECT_META("an ICCP after the RIFF", after.p, after.n, NULL, 0, NULL, 0, 1);
    free(after.p);
    free(f);

    /* truncated metadata chunks: VKIMG_E_RUNTIME, nothing kept */
    put_vp8x(&b, FL_ICC, 37, 53);
    bb_put(&b, "ICCP", 4);
    bb_le32(&b, 1000);
    bb_put(&b, icc1, 50);
    f = riff(&b, &n);
    EXPECT_META_ERROR("an ICCP of 1000 bytes in 50", f, n, "ICCP");
    free(f);
    put_vp8x(&b, FL_ICC | FL_EXIF, 37, 53);
    bb_riff_chunk(&b, "EXIF", x, xl);
    bb_put(&b, "ICCP", 4);
    bb_le32(&b, 132);
    bb_put(&b, icc1, 131);
    f = riff(&b, &n);
    EXPECT_META_ERROR("an EXIF, then an ICCP a byte short", f, n, "ICCP");
    free(f);
    put_vp8x(&b, FL_ICC | FL_EXIF, 37, 53);
    bb_riff_chunk(&b, "ICCP", icc1, 131);
    bb_put(&b, vp8l, vp8l_n);
    bb_put(&b, "EXIF", 4);
    bb_le32(&b, 10000);
    bb_put(&b, x, xl);
    f = riff(&b, &n);
    EXPECT_META_ERROR("an ICCP, then a truncated EXIF", f, n, "EXIF");
    free(f);
    /* the RIFF ends inside the ICCP, the buffer holds it all */
    put_vp8x(&b, FL_ICC, 37, 53);
    bb_riff_chunk(&b, "ICCP", icc1, 131);
    bb_put(&b, vp8l, vp8l_n);
    f = riff(&b, &n);
    f[4] = 4 + 18 + 8 + 100, f[5] = f[6] = f[7] = 0;
    EXPECT_META_ERROR("the RIFF size ending inside the ICCP", f, n, "ICCP");
    free(f);
    /* a truncated chunk that is no metadata ends the scan without an error */
    put_vp8x(&b, FL_ICC, 37, 53);
    bb_riff_chunk(&b, "ICCP", icc1, 131);
    bb_put(&b, "ZZZZ", 4);
    bb_le32(&b, 5000);
    bb_put(&b, "<x:xmpmeta>", 11);
    f = riff(&b, &n);
    EXPECT_META("an ICCP, then a truncated unknown chunk", f, n, icc1, 131, NULL, 0, 1);
    free(f);
    /* an XMP chunk is metadata */
    put_vp8x(&b, FL_ICC | FL_XMP, 37, 53);
    bb_riff_chunk(&b, "ICCP", icc1, 131);
    bb_put(&b, "XMP ", 4);
    bb_le32(&b, 5000);
    bb_put(&b, "<x:xmpmeta>", 11);
    f = riff(&b, &n);
    EXPECT_META_ERROR("an ICCP, then a truncated XMP chunk", f, n, "XMP");
    free(f);
    vki_meta r;
    CHECK(vki_meta_read_webp(vp8l, vp8l_n, &r, &e) == VKIMG_E_RUNTIME && !r.icc && !r.exif,
          "not a WebP: vki_meta_read_webp gives %s", e.msg);
    CHECK(vki_meta_read(vp8l, vp8l_n, &r, &e) == 0 && !r.icc && !r.exif && r.orientation == 1,
          "not a WebP: vki_meta_read gives metadata");

    /* every cut of a tagged file (VP8X, ICCP of 129 bytes, VP8L, EXIF): metadata whole
     * or absent; an error (nothing kept) where the cut falls inside ICCP or EXIF data */
    vki_meta m = { 0 };
    m.icc = make_icc(129, "RGB ");
    m.icc_len = 129;
    m.exif = make_exif(0, 3, &m.exif_len);
    unsigned char *fm = NULL;
    size_t nm = 0;
    rc = vki_webp_add_meta(bs[0].f, bs[0].n, &m, &fm, &nm, NULL, &e);
    chunk ck[8];
    const int nc = rc ? -1 : chunks(fm, nm, ck, 8);
    const int ii = find_chunk(ck, nc, "ICCP"), ie = find_chunk(ck, nc, "EXIF");
    CHECK(nc > 0 && ii >= 0 && ie >= 0, "tagged file: %s", rc ? e.msg : "chunks");
    if (nc > 0 && ii >= 0 && ie >= 0) {
        const size_t i0 = ck[ii].off + 8, i1 = i0 + ck[ii].size, e0 = ck[ie].off + 8, e1 = e0 + ck[ie].size;
        int bad = 0;
        for (size_t cut = 0; cut <= nm; cut++) {
            unsigned char *c = dup(fm, cut);
            memset(&r, 0x5a, sizeof r);
            rc = vki_meta_read_webp(c, cut, &r, &e);
            free(c);
            const int err = cut < 12 || (cut >= i0 && cut < i1) || (cut >= e0 && cut < e1);
            const int has_icc = cut >= i1, has_exif = cut >= e1;
            const int ok = err ? rc == VKIMG_E_RUNTIME && !r.icc && !r.exif && !r.icc_len && !r.exif_len &&
                                     r.orientation == 1
                               : rc == 0 && same(r.icc, r.icc_len, has_icc ? m.icc : NULL, has_icc ? 129 : 0) &&
                                     same(r.exif, r.exif_len, has_exif ? m.exif : NULL, has_exif ? m.exif_len : 0) &&
                                     r.orientation == (has_exif ? 3 : 1);
            if (!ok && !bad++)
                fprintf(stderr, "  tagged file cut at %zu of %zu: rc %d, ICC %zu, EXIF %zu, orientation %d\n", cut,
                        nm, rc, rc ? 0 : r.icc_len, rc ? 0 : r.exif_len, rc ? 0 : r.orientation);
            if (!rc)
                vki_meta_free(&r);
        }
        CHECK(bad == 0, "%d cuts of the tagged file read wrongly", bad);
    }
    free(fm);

    /* what vki_webp_add_meta refuses */
    static const struct {
        const char *what;
        const char *bytes;
        size_t n;
    } not_tiff[] = { { "an Exif\\0\\0 prefix", "Exif\0\0II*\0\010\0\0\0\0\0", 16 },
                     { "MM\\0+", "MM\0+\0\0\0\010\0\0", 10 },
                     { "7 bytes of II*\\0", "II*\0\010\0\0", 7 },
                     { "random bytes", "\x93\x11\xfe\x02\x44\x10\x00\x7f\x80", 9 } };
    for (size_t i = 0; i < VKI_ARRAY_LEN(not_tiff); i++) {
        vki_meta bad = { .exif = (unsigned char *)not_tiff[i].bytes, .exif_len = not_tiff[i].n };
        unsigned char *o = (unsigned char *)1;
        size_t on = 7;
        rc = vki_webp_add_meta(bs[0].f, bs[0].n, &bad, &o, &on, NULL, &e);
        CHECK(rc == VKIMG_E_USAGE && !o && !on, "EXIF of %s: rc %d", not_tiff[i].what, rc);
    }
    {
        vki_meta ok = { .icc = icc2, .icc_len = 64 };
        unsigned char *o = (unsigned char *)1;
        size_t on = 7;
        rc = vki_webp_add_meta(vp8l, vp8l_n, &ok, &o, &on, NULL, &e);
        CHECK(rc == VKIMG_E_RUNTIME && !o && !on, "add_meta to no WebP: rc %d", rc);
        o = (unsigned char *)1;
        rc = vki_webp_add_meta(bs[0].f, bs[0].n - 9, &ok, &o, &on, NULL, &e);
        CHECK(rc == VKIMG_E_RUNTIME && !o && !on, "add_meta to a truncated WebP: rc %d", rc);
        /* the animation with a still's image chunk after its frames, outside any ANMF
         * (libwebpmux 1.2.4 takes it and WebPMuxAssemble dereferences the missing frame
         * header; the fuzzer's find) */
        bbuf body = { 0 };
        bb_put(&body, bs[4].f + 12, bs[4].n - 12);
        bb_put(&body, bs[0].f + 12, bs[0].n - 12);
        size_t bn;
        unsigned char *bare = riff(&body, &bn);
        o = (unsigned char *)1;
        on = 7;
        rc = vki_webp_add_meta(bare, bn, &ok, &o, &on, NULL, &e);
        CHECK(rc == VKIMG_E_RUNTIME && !o && !on && strstr(e.msg, "ANMF"), "add_meta to an animation with a bare image: rc %d %s",
              rc, rc ? e.msg : "");
        vkimg_image im;
        rc = load(bare, bn, NULL, &im, &e);
        CHECK(rc == VKIMG_E_RUNTIME, "an animation with a bare image decodes: rc %d", rc);
        if (!rc)
            vkimg_image_free(&im);
        free(bare);
    }
    vki_meta_free(&m);
    free(pay.p);
    free(x);
    free(y);
    free(icc1);
    free(icc2);
    for (int k = 0; k < 5; k++) {
        free(bs[k].f);
        vkimg_image_free(&bs[k].ref);
    }
    vkimg_image_free(&s3);
    vkimg_image_free(&s4);
    fprintf(stderr, "note: %d metadata combinations added and read back\n", combos);
}

static void test_save(void)
{
    vkimg_err e;
    vkimg_image got;
    vkimg_meta r;
    CHECK(vkimg_file_kind_of("a.webp") == VKIMG_FILE_WEBP && vkimg_file_kind_of("B.WebP") == VKIMG_FILE_WEBP &&
              vkimg_file_fmt(VKIMG_FILE_WEBP, VKIMG_U16) == VKIMG_U8,
          "the .webp kind");

    /* lossless with metadata */
    vkimg_image src = img_new(37, 53, 4);
    fill(&src, 1);
    vki_meta m = { 0 };
    m.icc = make_icc(3001, "RGB ");
    m.icc_len = 3001;
    m.exif = make_exif(1, 6, &m.exif_len);
    vkimg_save_opts so = { .lossless = true, .meta = &m };
    const char *path = P("meta.webp");
    int rc = vkimg_save(path, &src, &so, &e);
    CHECK(rc == 0, "save %s: %s", path, e.msg);
    rc = vkimg_load_meta(path, NULL, &got, &r, &e);
    CHECK(rc == 0 && !strcmp(describe(&got, &src), "identical"), "load_meta: %s", rc ? e.msg : describe(&got, &src));
    CHECK(rc == 0 && same(r.icc, r.icc_len, m.icc, m.icc_len) && same(r.exif, r.exif_len, m.exif, m.exif_len) &&
              r.orientation == 6,
          "load_meta: ICC %zu, EXIF %zu bytes, orientation %d", r.icc_len, r.exif_len, r.orientation);
    if (!rc) {
        vkimg_image_free(&got);
        vkimg_meta_free(&r);
    }
    rc = vkimg_load(path, NULL, &got, &e);
    CHECK(rc == 0 && !strcmp(describe(&got, &src), "identical"), "load: %s", rc ? e.msg : describe(&got, &src));
    if (!rc)
        vkimg_image_free(&got);
    vki_meta_free(&m);

    /* gray: written RGB, so a GRAY profile is left out and an RGB one kept */
    vkimg_image gray = img_new(23, 19, 1);
    fill(&gray, 2);
    vkimg_image wide = widened(&gray);
    for (int k = 0; k < 2; k++) {
        m.icc = make_icc(600, k ? "RGB " : "GRAY");
        m.icc_len = 600;
        m.exif = make_exif(0, 4, &m.exif_len);
        path = P(k ? "gray-rgb.webp" : "gray-gray.webp");
        rc = vkimg_save(path, &gray, &so, &e);
        CHECK(rc == 0, "save %s: %s", path, e.msg);
        rc = vkimg_load_meta(path, NULL, &got, &r, &e);
        CHECK(rc == 0 && !strcmp(describe(&got, &wide), "identical"), "%s: %s", path,
              rc ? e.msg : describe(&got, &wide));
        CHECK(rc == 0 && same(r.icc, r.icc_len, k ? m.icc : NULL, k ? 600 : 0) &&
                  same(r.exif, r.exif_len, m.exif, m.exif_len) && r.orientation == 4,
              "%s: ICC %zu bytes, EXIF %zu, orientation %d", path, r.icc_len, r.exif_len, r.orientation);
        if (!rc) {
            vkimg_image_free(&got);
            vkimg_meta_free(&r);
        }
        vki_meta_free(&m);
    }

    /* the default quality is 90: the same file */
    vkimg_image rgb = img_new(61, 43, 3);
    fill(&rgb, 1);
    vkimg_save_opts q0 = { 0 }, q90 = { .quality = 90 };
    rc = vkimg_save(P("q0.webp"), &rgb, &q0, &e);
    rc |= vkimg_save(P("q90.webp"), &rgb, &q90, &e);
    rc |= vkimg_save(P("null.webp"), &rgb, NULL, &e);
    size_t n0 = 0, n90 = 0, nn = 0, ne = 0;
    unsigned char *b0 = read_all(P("q0.webp"), &n0), *b90 = read_all(P("q90.webp"), &n90),
                  *bn = read_all(P("null.webp"), &nn), *be = encode(&rgb, 90, false, &ne);
    chunk ck[4];
    CHECK(rc == 0 && b0 && same(b0, n0, b90, n90) && same(bn, nn, b90, n90) && same(be, ne, b90, n90) &&
              chunks(b0, n0, ck, 4) == 1 && !strcmp(ck[0].type, "VP8 "),
          "quality 0 / none / 90: %zu, %zu, %zu bytes, encoder %zu: %s", n0, nn, n90, ne, rc ? e.msg : "");
    free(b0);
    free(b90);
    free(bn);
    free(be);

    /* refused */
    path = P("bad.webp");
    static const int bad_q[] = { 101, -1 };
    for (size_t i = 0; i < VKI_ARRAY_LEN(bad_q); i++) {
        vkimg_save_opts bq = { .quality = bad_q[i] };
        char want[16];
        snprintf(want, sizeof want, "%d", bad_q[i]);
        rc = vkimg_save(path, &rgb, &bq, &e);
        FAILED(g_dir, path, rc, VKIMG_E_USAGE, &e, want, NULL, 0);
    }
    for (int k = 0; k < 4; k++) {
        vkimg_image big = k & 1 ? img_new(1, 16384, 3) : img_new(16384, 1, 3);
        vkimg_save_opts bo = { .lossless = k >= 2 };
        rc = vkimg_save(path, &big, &bo, &e);
        FAILED(g_dir, path, rc, VKIMG_E_RUNTIME, &e, "16383", NULL, 0);
        vkimg_image_free(&big);
    }
    vkimg_image u16;
    CHECK(vkimg_image_alloc(&u16, 5, 5, 3, VKIMG_U16, &e) == 0, "alloc");
    rc = vkimg_save(path, &u16, NULL, &e);
    FAILED(g_dir, path, rc, VKIMG_E_RUNTIME, &e, "u8", NULL, 0);
    vkimg_image_free(&u16);

    /* 16383 a side, the format's limit: written, and read back exactly */
    for (int k = 0; k < 2; k++) {
        vkimg_image lim = k ? img_new(2, 16383, 4) : img_new(16383, 2, 3);
        fill(&lim, 1);
        path = P("limit.WEBP");
        vkimg_save_opts lo = { .lossless = true };
        rc = vkimg_save(path, &lim, &lo, &e);
        CHECK(rc == 0, "%dx%d: %s", lim.w, lim.h, e.msg);
        rc = rc ? rc : vkimg_load(path, NULL, &got, &e);
        CHECK(rc == 0 && !strcmp(describe(&got, &lim), "identical"), "%dx%dx%d: %s", lim.w, lim.h, lim.c,
              rc ? e.msg : describe(&got, &lim));
        if (!rc)
            vkimg_image_free(&got);
        vkimg_image_free(&lim);
    }
    vkimg_image_free(&rgb);
    vkimg_image_free(&gray);
    vkimg_image_free(&wide);
    vkimg_image_free(&src);
}

int main(void)
{
    static void (*const tests[])(void) = { test_lossless, test_lossy, test_alloc, test_animation,
                                           test_hostile,  test_meta,  test_save };
    return io_main("test_webp", tests, VKI_ARRAY_LEN(tests));
}
