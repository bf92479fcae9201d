/* Shrink-on-load: vkimg_pipeline_min_input (the smallest decode a pipeline can
 * use: twice a first resize's or thumbnail's resampled size, in the stored frame)
 * and the JPEG decoder's DCT scaling through vkimg_load_opts.min_size (the
 * largest of 1/8, 1/4, 1/2 that keeps the minimum; pixels equal to TurboJPEG's own
 * scaled decode; the callback sees the stored size and the EXIF orientation);
 * the WebP decoder's the same through libwebp's rescaler (sizes as JPEG's; pixels
 * equal to libwebp's own scaled decode and, where the factor divides the sides,
 * within 1 of the mean of each d x d block of the whole decode, computed here; the
 * callback sees the orientation of the EXIF chunk; RGBA keeps its alpha).
 * No device needed. */
#include "io/io_priv.h"
#include "io/meta.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/encode.h>

static void min_is_(int line, const char *text, int w, int h, int orientation, int want_w, int want_h)
{
    vkimg_err e;
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "line %d: parse %s: %s", line, text, e.msg);
    if (!p)
        return;
    int mw = -1, mh = -1;
    vkimg_pipeline_min_input(p, w, h, orientation, &mw, &mh);
    CHECK(mw == want_w && mh == want_h, "line %d: %s on %dx%d (orientation %d): min %dx%d, want %dx%d", line, text,
          w, h, orientation, mw, mh, want_w, want_h);
    vkimg_pipeline_free(p);
}
#define MIN_IS(text, w, h, o, ww, wh) min_is_(__LINE__, text, w, h, o, ww, wh)

static void test_min_input(void)
{
    /* twice the output per axis */
    MIN_IS("resize=25%", 1000, 800, 1, 500, 400);
    MIN_IS("resize=100x100", 5120, 2880, 1, 200, 112); /* 100x56 */
    MIN_IS("thumbnail=256", 5120, 2880, 1, 512, 288);  /* 256x144 */
    MIN_IS("thumbnail=256,gray", 5120, 2880, 0, 512, 288);
    /* crop=centre: the resampling's size, before the crop (256x455 for a 256 box) */
    MIN_IS("thumbnail=256:crop=centre", 2880, 5120, 1, 512, 910);
    /* an axis that shrinks less than 2x needs all of it */
    MIN_IS("resize=800x100!", 1000, 1000, 1, 1000, 200);
    MIN_IS("resize=200%", 100, 50, 1, 100, 50);
    MIN_IS("resize=50%", 101, 51, 1, 101, 51); /* 51x26 (rounded up): neither side is at most half */
    MIN_IS("resize=50%", 100, 50, 1, 100, 50);
    /* the exact definition, linear light, nearest, or another first op: all of it */
    MIN_IS("resize=25%:fast=false", 1000, 800, 1, 1000, 800);
    MIN_IS("thumbnail=100:linear=true", 1000, 800, 1, 1000, 800);
    MIN_IS("resize=25%:filter=nearest", 1000, 800, 1, 1000, 800);
    MIN_IS("gray,resize=25%", 1000, 800, 1, 1000, 800);
    MIN_IS("blur=2", 1000, 800, 1, 1000, 800);
    /* orientations 5..8 turn the image: the geometry applies to the upright one */
    MIN_IS("resize=200x100!", 1000, 800, 6, 200, 400); /* upright 800x1000 -> 200x100: min 400x200 */
    MIN_IS("resize=200x100!", 1000, 800, 3, 400, 200);
    MIN_IS("thumbnail=x100", 4000, 3000, 8, 200, 150); /* upright 3000x4000 -> 75x100: min 150x200 upright */
}

/* ---------------------------------------------------------------- JPEG decode */

typedef struct req {
    int min_w, min_h;
    int calls, w, h, orientation;
} req;

static void on_header(void *user, int w, int h, int orientation, int *min_w, int *min_h)
{
    req *r = user;
    r->calls++;
    r->w = w;
    r->h = h;
    r->orientation = orientation;
    *min_w = r->min_w;
    *min_h = r->min_h;
}

static int g_progressive; /* make_jpeg writes progressive files */

/* A smooth-and-noisy RGB test image, JPEG-encoded by TurboJPEG (4:2:0 or 4:4:4;
 * gray for TJSAMP_GRAY), progressive where g_progressive says. */
static unsigned char *make_jpeg(int w, int h, int subsamp, unsigned long *len)
{
    unsigned char *px = malloc((size_t)w * h * 3);
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(w * 31 + h);
    for (int i = 0; i < w * h * 3; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int x = i / 3 % w, y = i / 3 / w;
        px[i] = (unsigned char)((x * 255 / (w > 1 ? w - 1 : 1) + y * 3 + (int)(s >> 60) * 4 + i % 3 * 60) & 255);
    }
    tjhandle t = tjInitCompress();
    unsigned char *jpg = NULL;
    *len = 0;
    int rc = tjCompress2(t, px, w, w * 3, h, TJPF_RGB, &jpg, len, subsamp, 92,
                         TJFLAG_ACCURATEDCT | (g_progressive ? TJFLAG_PROGRESSIVE : 0));
    CHECK(rc == 0, "tjCompress2 %dx%d: %s", w, h, tjGetErrorStr2(t));
    tjDestroy(t);
    free(px);
    return rc ? NULL : jpg;
}

/* TurboJPEG's own decode of the whole file at w x h (an independent path to the
 * same pixels), c = 1 (gray) or 3 channels. */
static unsigned char *tj_decode_c(const unsigned char *jpg, unsigned long len, int w, int h, int c)
{
    tjhandle t = tjInitDecompress();
    unsigned char *px = malloc((size_t)w * h * (size_t)c);
    int rc = tjDecompress2(t, jpg, len, px, w, w * c, h, c == 1 ? TJPF_GRAY : TJPF_RGB, 0);
    CHECK(rc == 0, "tjDecompress2 at %dx%d: %s", w, h, tjGetErrorStr2(t));
    tjDestroy(t);
    return px;
}

static unsigned char *tj_decode(const unsigned char *jpg, unsigned long len, int w, int h)
{
    return tj_decode_c(jpg, len, w, h, 3);
}

/* Loads file (w x h stored, no orientation) asking for at least min_w x min_h: 0
 * with *im, the callback checked to have been called once with the stored size */
static int load_min(int line, const unsigned char *file, size_t len, const char *name, int w, int h, int min_w,
                    int min_h, vkimg_image *im)
{
    req r = { .min_w = min_w, .min_h = min_h };
    vkimg_load_opts lo = { .min_size = on_header, .user = &r };
    vkimg_err e;
    int rc = vkimg_load_memory(file, len, name, &lo, im, &e);
    CHECK(rc == 0, "line %d: load: %s", line, e.msg);
    if (rc)
        return rc;
    CHECK(r.calls == 1 && r.w == w && r.h == h && r.orientation == 1, "line %d: callback %d calls, %dx%d o%d", line,
          r.calls, r.w, r.h, r.orientation);
    return 0;
}

static void decode_case(int line, const unsigned char *jpg, unsigned long len, int w, int h, int min_w, int min_h,
                        int want_d)
{
    vkimg_image im;
    if (load_min(line, jpg, len, "t.jpg", w, h, min_w, min_h, &im))
        return;
    int ww = (w + want_d - 1) / want_d, wh = (h + want_d - 1) / want_d;
    CHECK(im.w == ww && im.h == wh && im.c == 3, "line %d: %dx%d min %dx%d: decoded %dx%dx%d, want 1/%d = %dx%d",
          line, w, h, min_w, min_h, im.w, im.h, im.c, want_d, ww, wh);
    CHECK(im.w >= (min_w < w ? min_w : w) && im.h >= (min_h < h ? min_h : h), "line %d: below the minimum", line);
    if (im.w == ww && im.h == wh) {
        unsigned char *ref = tj_decode(jpg, len, ww, wh);
        CHECK(!memcmp(ref, im.data, (size_t)ww * wh * 3), "line %d: pixels differ from TurboJPEG's 1/%d decode",
              line, want_d);
        free(ref);
    }
    vkimg_image_free(&im);
}
#define DECODE(jpg, len, w, h, mw, mh, d) decode_case(__LINE__, jpg, len, w, h, mw, mh, d)

/* The definition: the largest d of 8, 4, 2 whose sides ceil(w/d), ceil(h/d) keep
 * the minimum; else 1. */
static int expect_d(int w, int h, int mw, int mh)
{
    for (int d = 8; d > 1; d /= 2)
        if ((w + d - 1) / d >= mw && (h + d - 1) / d >= mh)
            return d;
    return 1;
}

static void test_decode(void)
{
    static const struct { int w, h, subsamp; } sizes[] = {
        { 203, 157, TJSAMP_420 }, { 640, 480, TJSAMP_444 }, { 1, 1, TJSAMP_420 }, { 17, 1, TJSAMP_422 },
        { 1, 33, TJSAMP_444 },
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int w = sizes[i].w, h = sizes[i].h;
        unsigned long len;
        unsigned char *jpg = make_jpeg(w, h, sizes[i].subsamp, &len);
        if (!jpg)
            continue;
        /* minimums at and around each reduced size */
        for (int d = 1; d <= 8; d *= 2)
            for (int dx = -1; dx <= 1; dx++)
                for (int dy = -1; dy <= 1; dy++) {
                    int mw = (w + d - 1) / d + dx, mh = (h + d - 1) / d + dy;
                    DECODE(jpg, len, w, h, mw, mh, expect_d(w, h, mw, mh));
                }
        DECODE(jpg, len, w, h, w * 4, h * 4, 1); /* more than the image: all of it */
        DECODE(jpg, len, w, h, 0, 0, 8);
        tjFree(jpg);
    }
}

/* Progressive files decoded at 1/8 from their DC scans only: the pixels of
 * TurboJPEG's decode of the whole file at 1/8, for every subsampling, gray, odd
 * sizes; the reduced stream keeps every scan with Ss = 0 and drops the others;
 * a baseline file, a damaged or truncated progressive one are not reduced. */
static void test_progressive(void)
{
    static const struct { int w, h, subsamp; } sizes[] = {
        { 203, 157, TJSAMP_420 }, { 640, 480, TJSAMP_444 }, { 1, 1, TJSAMP_420 }, { 17, 1, TJSAMP_422 },
        { 1, 33, TJSAMP_444 },    { 333, 77, TJSAMP_GRAY }, { 129, 65, TJSAMP_440 }, { 96, 96, TJSAMP_411 },
    };
    g_progressive = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int w = sizes[i].w, h = sizes[i].h, gray = sizes[i].subsamp == TJSAMP_GRAY, c = gray ? 1 : 3;
        unsigned long len;
        unsigned char *jpg = make_jpeg(w, h, sizes[i].subsamp, &len);
        if (!jpg)
            continue;
        unsigned char *red = malloc(len + 4);
        size_t rlen = vki_jpeg_dc_scans(jpg, len, red);
        CHECK(rlen > 0 && rlen < len, "%dx%d: reduced %zu of %lu bytes", w, h, rlen, len);
        req r = { .min_w = 1, .min_h = 1 };
        vkimg_load_opts lo = { .min_size = on_header, .user = &r };
        vkimg_image im;
        vkimg_err e;
        int rc = vkimg_load_memory(jpg, len, "p.jpg", &lo, &im, &e);
        int ww = (w + 7) / 8, wh = (h + 7) / 8;
        CHECK(rc == 0 && im.w == ww && im.h == wh && im.c == c, "%dx%d progressive at 1/8: %s", w, h, rc ? e.msg : "");
        if (!rc) {
            unsigned char *ref = tj_decode_c(jpg, len, ww, wh, c);
            CHECK(!memcmp(ref, im.data, (size_t)ww * wh * c), "%dx%d progressive: DC-only pixels differ from the whole "
                  "file's 1/8 decode", w, h);
            free(ref);
            vkimg_image_free(&im);
        }
        /* cut inside its scans: not reduced (no EOI), and the decoder refuses the file */
        CHECK(vki_jpeg_dc_scans(jpg, len - len / 3, red) == 0, "%dx%d: a truncated file was reduced", w, h);
        rc = vkimg_load_memory(jpg, len - len / 3, "cut.jpg", &lo, &im, &e);
        CHECK(rc == VKIMG_E_RUNTIME && !im.data && strstr(e.msg, "cut.jpg: JPEG"), "%dx%d cut: %s", w, h, e.msg);
        free(red);
        tjFree(jpg);
    }
    g_progressive = 0;
    unsigned long len;
    unsigned char *jpg = make_jpeg(64, 48, TJSAMP_420, &len), *red = malloc(len + 4);
    CHECK(jpg && vki_jpeg_dc_scans(jpg, len, red) == 0, "a baseline file is not reduced");
    free(red);
    tjFree(jpg);
}

/* A 96 x 64 file tagged `want`: the callback sees the stored size and that
 * orientation, and asking for 20 x 10 gives 1/4 of it. */
static void orientation_case(int line, const unsigned char *file, size_t n, const char *name, int want)
{
    req r = { .min_w = 20, .min_h = 10 };
    vkimg_load_opts lo = { .min_size = on_header, .user = &r };
    vkimg_image im;
    vkimg_err e;
    int rc = vkimg_load_memory(file, n, name, &lo, &im, &e);
    CHECK(rc == 0 && r.calls == 1 && r.orientation == want && r.w == 96 && r.h == 64,
          "line %d: %s: orientation seen %d (%s)", line, name, r.orientation, rc ? e.msg : "");
    CHECK(!rc && im.w == 24 && im.h == 16, "line %d: %s: 1/4 of 96x64: %dx%d", line, name, im.w, im.h);
    if (!rc)
        vkimg_image_free(&im);
}

/* The orientation the callback sees is the file's EXIF orientation. */
static void test_orientation_seen(void)
{
    unsigned long len;
    unsigned char *jpg = make_jpeg(96, 64, TJSAMP_420, &len);
    if (!jpg)
        return;
    /* a minimal little-endian TIFF block: IFD0 with the orientation tag only */
    static unsigned char exif[] = {
        'I', 'I', 42, 0, 8, 0, 0, 0, /* header, IFD0 at 8 */
        1, 0,                        /* one entry */
        0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, /* 0x0112 SHORT x1 = 6 */
        0, 0, 0, 0,                  /* no next IFD */
    };
    vkimg_meta m = { .exif = exif, .exif_len = sizeof exif, .orientation = 6 };
    unsigned char *out = NULL;
    size_t olen = 0;
    vkimg_err e;
    int rc = vki_jpeg_add_meta(jpg, len, &m, &out, &olen, NULL, &e);
    CHECK(rc == 0, "add EXIF: %s", e.msg);
    if (!rc)
        orientation_case(__LINE__, out, olen, "o6.jpg", 6);
    free(out);
    tjFree(jpg);
}

/* ---------------------------------------------------------------- WebP decode */

/* A smooth-and-noisy image of c (3 or 4) channels as WebP, lossless or lossy (q 90). */
static uint8_t *make_webp(int w, int h, int c, bool lossless, size_t *len)
{
    unsigned char *px = malloc((size_t)w * h * (size_t)c);
    uint64_t s = 0x2545f4914f6cdd1dull * (uint64_t)(w * 17 + h);
    for (int i = 0; i < w * h * c; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int x = i / c % w, y = i / c / w, k = i % c;
        px[i] = k == 3 ? (unsigned char)((x * 7 + y * 5) & 255)
                       : (unsigned char)((x * 255 / (w > 1 ? w - 1 : 1) + y * 3 + (int)(s >> 61) * 4 + k * 60) & 255);
    }
    uint8_t *out = NULL;
    *len = lossless ? (c == 4 ? WebPEncodeLosslessRGBA(px, w, h, w * c, &out) : WebPEncodeLosslessRGB(px, w, h, w * c, &out))
                    : (c == 4 ? WebPEncodeRGBA(px, w, h, w * c, 90, &out) : WebPEncodeRGB(px, w, h, w * c, 90, &out));
    CHECK(*len > 0, "WebP encode %dx%dx%d", w, h, c);
    free(px);
    return *len ? out : NULL;
}

static void webp_case(int line, const uint8_t *wp, size_t len, int w, int h, int c, int min_w, int min_h)
{
    const int d = expect_d(w, h, min_w, min_h), ww = (w + d - 1) / d, wh = (h + d - 1) / d;
    vkimg_image im;
    if (load_min(line, wp, len, "t.webp", w, h, min_w, min_h, &im))
        return;
    CHECK(im.w == ww && im.h == wh && im.c == c, "line %d: %dx%d min %dx%d: decoded %dx%dx%d, want 1/%d = %dx%dx%d",
          line, w, h, min_w, min_h, im.w, im.h, im.c, d, ww, wh, c);
    if (im.w == ww && im.h == wh && im.c == c) {
        /* libwebp's own scaled decode */
        WebPDecoderConfig cfg;
        WebPInitDecoderConfig(&cfg);
        cfg.options.use_scaling = d > 1;
        cfg.options.scaled_width = ww;
        cfg.options.scaled_height = wh;
        cfg.output.colorspace = c == 4 ? MODE_RGBA : MODE_RGB;
        CHECK(WebPDecode(wp, len, &cfg) == VP8_STATUS_OK, "line %d: libwebp's decode", line);
        CHECK(cfg.output.width == ww && cfg.output.height == wh &&
                  !memcmp(cfg.output.u.RGBA.rgba, im.data, (size_t)ww * wh * (size_t)c),
              "line %d: pixels differ from libwebp's 1/%d decode", line, d);
        WebPFreeDecBuffer(&cfg.output);
        if (d > 1 && w % d == 0 && h % d == 0 && c == 3) { /* the mean of each d x d block of the whole decode */
            int fw, fh;
            uint8_t *full = WebPDecodeRGB(wp, len, &fw, &fh);
            int worst = 0;
            for (int y = 0; full && y < wh; y++)
                for (int x = 0; x < ww; x++)
                    for (int k = 0; k < 3; k++) {
                        double sum = 0;
                        for (int j = 0; j < d; j++)
                            for (int i = 0; i < d; i++)
                                sum += full[((size_t)(y * d + j) * fw + (size_t)(x * d + i)) * 3 + (size_t)k];
                        const int diff = abs((int)((unsigned char *)im.data)[((size_t)y * ww + x) * 3 + k] -
                                             (int)(sum / (d * d) + 0.5));
                        worst = diff > worst ? diff : worst;
                    }
            CHECK(full && worst <= 1, "line %d: 1/%d decode of %dx%d: %d from the block means", line, d, w, h, worst);
            WebPFree(full);
        }
    }
    vkimg_image_free(&im);
}
#define WEBP_CASE(wp, len, w, h, c, mw, mh) webp_case(__LINE__, wp, len, w, h, c, mw, mh)

static void test_webp(void)
{
    static const struct { int w, h, c; bool lossless; } sizes[] = {
        { 203, 157, 3, false }, { 640, 480, 3, true }, { 1, 1, 3, true }, { 17, 1, 4, false },
        { 1, 33, 3, false }, { 96, 64, 4, true }, { 64, 48, 3, true },
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const int w = sizes[i].w, h = sizes[i].h, c = sizes[i].c;
        size_t len;
        uint8_t *wp = make_webp(w, h, c, sizes[i].lossless, &len);
        if (!wp)
            continue;
        /* each reduction at its boundary, and one past it */
        for (int d = 8; d >= 1; d /= 2) {
            const int mw = (w + d - 1) / d, mh = (h + d - 1) / d;
            WEBP_CASE(wp, len, w, h, c, mw, mh);
            WEBP_CASE(wp, len, w, h, c, mw + 1, 1);
            WEBP_CASE(wp, len, w, h, c, 1, mh + 1);
        }
        WEBP_CASE(wp, len, w, h, c, w, h);
        WEBP_CASE(wp, len, w, h, c, w * 2, h * 2);
        WebPFree(wp);
    }
    /* the orientation of the EXIF chunk reaches the callback */
    size_t len;
    uint8_t *wp = make_webp(96, 64, 3, false, &len);
    static unsigned char exif[] = {
        'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0,
    };
    vkimg_meta m = { .exif = exif, .exif_len = sizeof exif, .orientation = 8 };
    unsigned char *out = NULL;
    size_t olen = 0;
    vkimg_err e;
    int rc = wp ? vki_webp_add_meta(wp, len, &m, &out, &olen, NULL, &e) : -1;
    CHECK(rc == 0, "add EXIF to a WebP: %s", rc > 0 ? e.msg : "no file");
    if (!rc)
        orientation_case(__LINE__, out, olen, "o8.webp", 8);
    free(out);
    WebPFree(wp);
}

/* Formats without a reduced decode: the callback may be called, the image is whole. */
static void test_other_formats(void)
{
    char dir[] = "/tmp/vkimg-shrink-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "%s/t.png", dir);
    vkimg_image im = { .w = 40, .h = 30, .c = 3, .fmt = VKIMG_U8 };
    im.data = calloc(40 * 30, 3);
    vkimg_err e;
    CHECK(vkimg_save(path, &im, NULL, &e) == 0, "save: %s", e.msg);
    free(im.data);
    req r = { .min_w = 1, .min_h = 1 };
    vkimg_load_opts lo = { .min_size = on_header, .user = &r };
    vkimg_image back;
    CHECK(vkimg_load(path, &lo, &back, &e) == 0 && back.w == 40 && back.h == 30, "PNG decoded whole");
    vkimg_image_free(&back);
    remove(path);
    remove(dir);
}

int main(void)
{
    test_min_input();
    test_decode();
    test_orientation_seen();
    test_progressive();
    test_webp();
    test_other_formats();
    return t_done("test_shrink_on_load");
}
