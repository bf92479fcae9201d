/* Zero-copy images: vkimg_image_alloc_device, inputs the run engine takes in
 * place (vki_run_input_buf), results kept where the device wrote them
 * (vkimg_run_opts.device_output), and the loader decoding into them
 * (vkimg_load_opts.alloc): every way gives the bytes of the ordinary path, under
 * the validation layers, for pipelines of one and several outputs. */
#include "gpu_harness.h"
#include "io_util.h"
#include "png_util.h"
#include "t.h"
#include "vkimg/vkimg.h"
#include "gpu/gpu.h" /* the buffer pool, to see vkimg_ctx_trim empty it */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The pipeline on a malloc()ed copy and on a device image, with and without
 * device outputs: the same bytes. */
static void run_both(vkimg_ctx *ctx, const char *text, int w, int h, int c, vkimg_fmt fmt)
{
    snprintf(cur_case, sizeof cur_case, "%s on %dx%dx%d %s", text, w, h, c, vkimg_fmt_name(fmt));
    vkimg_err e;
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "%s: %s", cur_case, e.msg);
    if (!p)
        return;
    vkimg_image dev, host;
    int rc = vkimg_image_alloc_device(ctx, &dev, w, h, c, fmt, &e);
    CHECK(rc == 0 && dev.data && dev.priv && dev.w == w && dev.h == h && dev.c == c && dev.fmt == fmt,
          "%s: alloc_device: %s", cur_case, rc ? e.msg : "fields");
    if (rc) {
        vkimg_pipeline_free(p);
        return;
    }
    fill_random_bytes(&dev, (unsigned long long)(w * 131 + h * 7 + c));
    CHECK(vkimg_image_alloc(&host, w, h, c, fmt, &e) == 0 && host.priv == NULL, "%s: alloc", cur_case);
    memcpy(host.data, dev.data, vkimg_image_bytes(&dev));

    vkimg_run_opts ro = { .out_fmt = fmt };
    int n = vkimg_pipeline_outputs(p, &host, &ro, &e);
    CHECK(n >= 1, "%s: outputs: %s", cur_case, e.msg);
    if (n < 1)
        n = 1;
    vkimg_image *ref = gh_calloc((size_t)n, sizeof *ref), *a = gh_calloc((size_t)n, sizeof *a),
                *b = gh_calloc((size_t)n, sizeof *b), *hb = gh_calloc((size_t)n, sizeof *hb);
    rc = vkimg_run_n(ctx, p, &host, &ro, ref, n, &e);
    CHECK(rc == 0, "%s: host in, host out: %s", cur_case, e.msg);
    int rca = vkimg_run_n(ctx, p, &dev, &ro, a, n, &e);
    CHECK(rca == 0, "%s: device in, host out: %s", cur_case, e.msg);
    vkimg_run_opts rd = ro;
    rd.device_output = true;
    int rcb = vkimg_run_n(ctx, p, &dev, &rd, b, n, &e);
    CHECK(rcb == 0, "%s: device in, device out: %s", cur_case, e.msg);
    int rcc = vkimg_run_n(ctx, p, &host, &rd, hb, n, &e);
    CHECK(rcc == 0, "%s: host in, device out: %s", cur_case, e.msg);
    for (int k = 0; k < n && !rc; k++) {
        CHECK(!rca && same_image(&ref[k], &a[k]) && !a[k].priv, "%s: output %d, device input differs", cur_case, k);
        CHECK(!rcb && same_image(&ref[k], &b[k]) && b[k].priv, "%s: output %d, device in and out differs", cur_case, k);
        CHECK(!rcc && same_image(&ref[k], &hb[k]) && hb[k].priv, "%s: output %d, device output differs", cur_case, k);
    }
    /* the input is left as it was */
    CHECK(!memcmp(host.data, dev.data, vkimg_image_bytes(&dev)), "%s: the device input was changed", cur_case);
    for (int k = 0; k < n; k++) {
        vkimg_image_free(&ref[k]);
        vkimg_image_free(&a[k]);
        vkimg_image_free(&b[k]);
        if (!rcc)
            vkimg_image_free(&hb[k]);
        CHECK(b[k].data == NULL && b[k].priv == NULL, "%s: freed image cleared", cur_case);
    }
    free(ref);
    free(a);
    free(b);
    free(hb);
    vkimg_image_free(&dev);
    vkimg_image_free(&host);
    vkimg_pipeline_free(p);
}

static void test_runs(vkimg_ctx *ctx)
{
    static const struct { int w, h; } sz[] = { { 1, 1 }, { 1, 37 }, { 53, 1 }, { 67, 45 }, { 300, 211 } };
    static const char *const pipes[] = { "copy", "gray", "blur=1.5", "gray,blur=2", "resize=50%", "mipmaps",
                                         "thumbnail=16:crop=centre", "flip,levels=0.05:0.9" };
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
        for (int c = 1; c <= 4; c++)
            for (size_t k = 0; k < sizeof pipes / sizeof pipes[0]; k++)
                if (c == 3 || k % 2 == (size_t)(c & 1) || sz[i].w * sz[i].h < 100)
                    run_both(ctx, pipes[k], sz[i].w, sz[i].h, c, VKIMG_U8);
    run_both(ctx, "gray,blur=1", 129, 65, 4, VKIMG_U16);
    run_both(ctx, "blur=1", 33, 17, 3, VKIMG_F32);
    /* a device image of another context is an ordinary input (copied) */
    vkimg_err e;
    vkimg_ctx_opts co = { 0 };
    vkimg_ctx *other = vkimg_ctx_create(&co, &e);
    CHECK(other != NULL, "second context: %s", e.msg);
    if (other) {
        vkimg_image im, out1 = { 0 }, out2 = { 0 };
        CHECK(vkimg_image_alloc_device(other, &im, 40, 30, 3, VKIMG_U8, &e) == 0, "alloc on the other: %s", e.msg);
        fill_random_bytes(&im, 5);
        vkimg_pipeline *p = vkimg_pipeline_parse("gray", &e);
        vkimg_run_opts ro = { .out_fmt = VKIMG_U8 };
        CHECK(vkimg_run(ctx, p, &im, &ro, &out1, &e) == 0, "run on ctx: %s", e.msg);
        CHECK(vkimg_run(other, p, &im, &ro, &out2, &e) == 0, "run on other: %s", e.msg);
        CHECK(out1.data && out2.data && same_image(&out1, &out2), "the same result from either context");
        vkimg_image_free(&out1);
        vkimg_image_free(&out2);
        vkimg_image_free(&im);
        vkimg_pipeline_free(p);
        vkimg_ctx_destroy(other);
    }
    /* bad arguments */
    vkimg_image im;
    CHECK(vkimg_image_alloc_device(NULL, &im, 4, 4, 3, VKIMG_U8, &e) == VKIMG_E_USAGE && !im.data, "NULL ctx");
    CHECK(vkimg_image_alloc_device(ctx, &im, 0, 4, 3, VKIMG_U8, &e) == VKIMG_E_USAGE && !im.data, "w 0");
    CHECK(vkimg_image_alloc_device(ctx, &im, 4, 4, 5, VKIMG_U8, &e) == VKIMG_E_USAGE && !im.data, "c 5");
}

/* ---------------------------------------------------------------- the loader */

typedef struct alloc_req {
    vkimg_ctx *ctx;
    int calls, decline;
} alloc_req;

static int on_alloc(void *user, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    alloc_req *r = user;
    r->calls++;
    if (r->decline)
        return 1;
    return vkimg_image_alloc_device(r->ctx, im, w, h, c, fmt, e);
}

static void test_load(vkimg_ctx *ctx)
{
    char dir[] = "/tmp/vkimg-zc-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    static const char *const exts[] = { "png", "jpg", "bmp", "tga", "hdr" };
    for (int c = 1; c <= 4; c++)
        for (size_t x = 0; x < sizeof exts / sizeof exts[0]; x++) {
            vkimg_fmt fmt = !strcmp(exts[x], "hdr") ? VKIMG_F32 : VKIMG_U8;
            if ((fmt == VKIMG_F32 && c != 3) || (!strcmp(exts[x], "jpg") && (c == 2 || c == 4)))
                continue;
            char path[128];
            snprintf(path, sizeof path, "%s/t%d.%s", dir, c, exts[x]);
            snprintf(cur_case, sizeof cur_case, "load %s", path);
            vkimg_image im;
            make_image(&im, 61, 37, c, fmt, 1, (unsigned long long)c * 11 + x);
            vkimg_err e;
            CHECK(vkimg_save(path, &im, NULL, &e) == 0, "%s: save: %s", cur_case, e.msg);
            vkimg_image_free(&im);
            vkimg_image plain, dev, declined;
            CHECK(vkimg_load(path, NULL, &plain, &e) == 0, "%s: load: %s", cur_case, e.msg);
            alloc_req r = { .ctx = ctx };
            vkimg_load_opts lo = { .alloc = on_alloc, .user = &r };
            int rc = vkimg_load(path, &lo, &dev, &e);
            CHECK(rc == 0 && r.calls == 1 && dev.priv != NULL && plain.data && same_image(&plain, &dev),
                  "%s: into device memory: rc %d, %d calls, priv %p", cur_case, rc, r.calls, dev.priv);
            alloc_req rd = { .ctx = ctx, .decline = 1 };
            lo.user = &rd;
            rc = vkimg_load(path, &lo, &declined, &e);
            CHECK(rc == 0 && rd.calls >= 1 && declined.priv == NULL && same_image(&plain, &declined),
                  "%s: allocator declined: rc %d priv %p", cur_case, rc, declined.priv);
            /* the device image runs like the plain one */
            if (!rc && plain.data && dev.data) {
                vkimg_pipeline *p = vkimg_pipeline_parse("blur=1", &e);
                vkimg_run_opts ro = { .out_fmt = plain.fmt };
                vkimg_image o1, o2;
                CHECK(vkimg_run(ctx, p, &plain, &ro, &o1, &e) == 0 && vkimg_run(ctx, p, &dev, &ro, &o2, &e) == 0 &&
                          same_image(&o1, &o2),
                      "%s: runs differ", cur_case);
                vkimg_image_free(&o1);
                vkimg_image_free(&o2);
                vkimg_pipeline_free(p);
            }
            vkimg_image_free(&plain);
            vkimg_image_free(&dev);
            vkimg_image_free(&declined);
            remove(path);
        }
    /* an allocator that fails fails the load, with its message, and leaves nothing */
    char path[128];
    snprintf(path, sizeof path, "%s/f.png", dir);
    vkimg_image im;
    make_image(&im, 9, 9, 3, VKIMG_U8, 0, 1);
    vkimg_err e;
    vkimg_save(path, &im, NULL, &e);
    vkimg_image_free(&im);
    alloc_req r = { .ctx = NULL }; /* vkimg_image_alloc_device(NULL): a usage error */
    vkimg_load_opts lo = { .alloc = on_alloc, .user = &r };
    int rc = vkimg_load(path, &lo, &im, &e);
    CHECK(rc == VKIMG_E_USAGE && !im.data && strstr(e.msg, "NULL context"), "failing allocator: rc %d %s", rc, e.msg);
    remove(path);
    remove(dir);
}

/* PNG rows inflated into the device image's own memory (it has a byte a row to
 * spare: vki_image_owner.cap), unfiltered and packed there: hand-made files with
 * every filter type (a different one each row), 8 and 16 bits, 1-4 channels and
 * awkward sizes give the ordinary decoder's pixels; a bad filter type in the last
 * row (found after the others were unfiltered in place), a bad Adler-32 and a
 * truncated file fail with the file's name and leave nothing behind (the
 * sanitizer build checks the memory). */
static void test_load_png_in_place(vkimg_ctx *ctx)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 29 }, { 31, 1 }, { 2, 2 }, { 61, 37 }, { 257, 131 } };
    static const int ctypes[] = { 0, 4, 2, 6 }; /* gray, gray+alpha, RGB, RGBA */
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int c = 1; c <= 4; c++)
            for (int depth = 8; depth <= 16; depth += 8) {
                const int w = sizes[s][0], h = sizes[s][1];
                snprintf(cur_case, sizeof cur_case, "png in place %dx%dx%d %d-bit", w, h, c, depth);
                const size_t rawn = (size_t)w * h * c * (size_t)(depth / 8);
                unsigned char *raw = malloc(rawn);
                unsigned long long seed = s * 16 + (size_t)c * 2 + (size_t)depth;
                for (size_t k = 0; k < rawn; k++) /* smooth with noise: every predictor matters */
                    raw[k] = (unsigned char)((k / 3) + (t_rand(&seed) >> 61));
                png_spec ps = { .w = w, .h = h, .depth = depth, .ctype = ctypes[c - 1], .raw = raw, .filter = 5,
                                .fseed = (int)s + c };
                size_t len = 0;
                unsigned char *png = mk_png(&ps, &len);
                vkimg_image plain, dev;
                vkimg_err e;
                CHECK(png && vkimg_load_memory(png, len, "p.png", NULL, &plain, &e) == 0, "%s: load: %s", cur_case,
                      e.msg);
                alloc_req r = { .ctx = ctx };
                vkimg_load_opts lo = { .alloc = on_alloc, .user = &r };
                int rc = png ? vkimg_load_memory(png, len, "p.png", &lo, &dev, &e) : -1;
                CHECK(rc == 0 && r.calls == 1 && dev.priv && plain.data && same_image(&plain, &dev),
                      "%s: rc %d (%s), %d calls, pixels differ", cur_case, rc, rc ? e.msg : "", r.calls);
                if (!rc)
                    vkimg_image_free(&dev);
                vkimg_image_free(&plain);
                /* the defects, in the largest RGB 8-bit file */
                if (w == 257 && c == 3 && depth == 8) {
                    for (int k = 0; k < 3; k++) {
                        png_spec bad = ps;
                        bad.bad_filter_row = k == 0 ? h : 0;
                        bad.bad_adler = k == 1;
                        size_t blen = 0;
                        unsigned char *b = mk_png(&bad, &blen);
                        if (k == 2)
                            blen /= 2;
                        alloc_req rb = { .ctx = ctx };
                        lo.user = &rb;
                        vkimg_image out = { 0 };
                        int brc = b ? vkimg_load_memory(b, blen, "bad.png", &lo, &out, &e) : -1;
                        CHECK(b && brc != 0 && !out.data && strstr(e.msg, "bad.png") &&
                                  (k != 0 || strstr(e.msg, "filter type")),
                              "%s: defect %d: rc %d, %s", cur_case, k, brc, e.msg);
                        free(b);
                    }
                }
                free(png);
                free(raw);
            }
}

/* vkimg_load_opts.input_done: called exactly once, after which the decoder reads
 * the caller's buffer no more: the callback frees it (the sanitizer build would
 * see a later read) and the pixels are still the ordinary load's. PNG with one
 * IDAT and with many (gathered, then freed before inflating), 8 and 16 bits, into
 * device memory and not; JPEG, BMP and TGA; a corrupt PNG (called on failure too).
 * And vkimg_ctx_trim frees the pool of idle buffers while images in use stay. */
typedef struct done_req {
    alloc_req a;
    unsigned char *buf; /* freed by on_done */
    int done_calls;
} done_req;

static int on_alloc_done(void *user, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    done_req *d = user;
    return on_alloc(&d->a, im, w, h, c, fmt, e);
}

static void on_done(void *user)
{
    done_req *d = user;
    d->done_calls++;
    free(d->buf);
    d->buf = NULL;
}

static void test_input_done(vkimg_ctx *ctx)
{
    char dir[] = "/tmp/vkimg-done-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    for (int k = 0; k < 8; k++) {
        /* 0-3: PNG one IDAT / many IDATs, 8 / 16-bit; 4 JPEG, 5 BMP, 6 TGA; 7 corrupt PNG */
        static const char *const exts[] = { "png", "png", "png", "png", "jpg", "bmp", "tga", "png" };
        const int c = k == 4 ? 3 : 4 - (k & 1);
        const vkimg_fmt fmt = (k == 2 || k == 3) ? VKIMG_U16 : VKIMG_U8;
        snprintf(cur_case, sizeof cur_case, "input_done case %d (%s)", k, exts[k]);
        unsigned char *file = NULL;
        size_t len = 0;
        vkimg_err e;
        if (k <= 3 || k == 7) {
            const int w = 97, h = 41;
            const size_t rawn = (size_t)w * h * c * (fmt == VKIMG_U16 ? 2 : 1);
            unsigned char *raw = malloc(rawn);
            unsigned long long seed = (unsigned long long)k + 1;
            for (size_t i = 0; i < rawn; i++)
                raw[i] = (unsigned char)(i / 5 + (t_rand(&seed) >> 60));
            png_spec ps = { .w = w, .h = h, .depth = fmt == VKIMG_U16 ? 16 : 8, .ctype = c == 4 ? 6 : 2, .raw = raw,
                            .filter = 5, .idat_max = (k & 1) ? 300 : 0, .bad_filter_row = k == 7 ? 20 : 0 };
            file = mk_png(&ps, &len);
            free(raw);
        } else {
            char path[128];
            snprintf(path, sizeof path, "%s/f.%s", dir, exts[k]);
            vkimg_image im;
            make_image(&im, 53, 29, c, VKIMG_U8, 1, (unsigned long long)k);
            CHECK(vkimg_save(path, &im, NULL, &e) == 0, "%s: save: %s", cur_case, e.msg);
            vkimg_image_free(&im);
            FILE *f = fopen(path, "rb");
            if (f) {
                file = malloc(1 << 20);
                len = file ? fread(file, 1, 1 << 20, f) : 0;
                fclose(f);
            }
            remove(path);
        }
        CHECK(file && len > 0, "%s: file made", cur_case);
        if (!file)
            continue;
        vkimg_image plain = { 0 };
        int prc = vkimg_load_memory(file, len, "f", NULL, &plain, &e);
        CHECK((prc == 0) == (k != 7), "%s: plain load rc %d", cur_case, prc);
        for (int dev = 0; dev <= 1; dev++) {
            done_req d = { .a = { .ctx = ctx, .decline = !dev }, .buf = malloc(len) };
            memcpy(d.buf, file, len);
            vkimg_load_opts lo = { .alloc = on_alloc_done, .input_done = on_done, .user = &d };
            vkimg_image out = { 0 };
            const unsigned char *bytes = d.buf; /* freed by the callback */
            int rc = vkimg_load_memory(bytes, len, "f", &lo, &out, &e);
            CHECK(d.done_calls == 1 && d.buf == NULL, "%s (device %d): input_done called %d times", cur_case, dev,
                  d.done_calls);
            free(d.buf);
            if (k == 7)
                CHECK(rc != 0 && !out.data && strstr(e.msg, "filter type"), "%s: corrupt: rc %d %s", cur_case, rc,
                      e.msg);
            else
                CHECK(rc == 0 && same_image(&plain, &out) && (out.priv != NULL) == (dev != 0),
                      "%s (device %d): rc %d, pixels or memory differ", cur_case, dev, rc);
            vkimg_image_free(&out);
        }
        vkimg_image_free(&plain);
        free(file);
    }
    remove(dir);

    /* vkimg_ctx_trim: the idle buffers go; an image in use stays and runs */
    vkimg_image keep, gone;
    vkimg_err e;
    CHECK(vkimg_image_alloc_device(ctx, &keep, 64, 64, 3, VKIMG_U8, &e) == 0 &&
              vkimg_image_alloc_device(ctx, &gone, 64, 64, 3, VKIMG_U8, &e) == 0,
          "trim: alloc: %s", e.msg);
    fill_random_bytes(&keep, 9);
    vkimg_image host;
    CHECK(vkimg_image_alloc(&host, 64, 64, 3, VKIMG_U8, &e) == 0, "trim: alloc host");
    memcpy(host.data, keep.data, vkimg_image_bytes(&keep));
    vkimg_image_free(&gone); /* into the pool */
    CHECK(ctx->gpu.pool_n > 0, "trim: a freed image's buffer is pooled");
    vkimg_ctx_trim(ctx);
    CHECK(ctx->gpu.pool_n == 0 && ctx->gpu.pool_bytes == 0, "trim: the pool is empty (%d buffers)", ctx->gpu.pool_n);
    vkimg_pipeline *p = vkimg_pipeline_parse("gray", &e);
    vkimg_run_opts ro = { .out_fmt = VKIMG_U8 };
    vkimg_image o1 = { 0 }, o2 = { 0 };
    CHECK(p && vkimg_run(ctx, p, &keep, &ro, &o1, &e) == 0 && vkimg_run(ctx, p, &host, &ro, &o2, &e) == 0 &&
              same_image(&o1, &o2),
          "trim: the image in use still runs: %s", e.msg);
    vkimg_image_free(&o1);
    vkimg_image_free(&o2);
    vkimg_pipeline_free(p);
    vkimg_image_free(&keep);
    vkimg_image_free(&host);
    vkimg_ctx_trim(NULL); /* nothing */
}

/* ---------------------------------------------------------------- compare */

/* vkimg_compare reads device images in place and keeps the difference image where
 * the device wrote it (device_diff): the same figures and bytes as from host images. */
static void test_compare(vkimg_ctx *ctx)
{
    static const struct { int w, h, c; vkimg_metric m; } cs[] = {
        { 67, 45, 4, VKIMG_METRIC_YIQ }, { 1, 1, 4, VKIMG_METRIC_YIQ }, { 131, 7, 3, VKIMG_METRIC_ABS },
        { 5, 300, 1, VKIMG_METRIC_ABS },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        snprintf(cur_case, sizeof cur_case, "compare %dx%dx%d metric %d", cs[i].w, cs[i].h, cs[i].c, (int)cs[i].m);
        vkimg_err e;
        vkimg_image ha, hb, da, db;
        CHECK(vkimg_image_alloc(&ha, cs[i].w, cs[i].h, cs[i].c, VKIMG_U8, &e) == 0 &&
                  vkimg_image_alloc(&hb, cs[i].w, cs[i].h, cs[i].c, VKIMG_U8, &e) == 0 &&
                  vkimg_image_alloc_device(ctx, &da, cs[i].w, cs[i].h, cs[i].c, VKIMG_U8, &e) == 0 &&
                  vkimg_image_alloc_device(ctx, &db, cs[i].w, cs[i].h, cs[i].c, VKIMG_U8, &e) == 0,
              "%s: alloc", cur_case);
        fill_random_bytes(&ha, 11 + i);
        memcpy(hb.data, ha.data, vkimg_image_bytes(&ha));
        unsigned char *pb = hb.data;
        for (size_t k = 0; k < vkimg_image_bytes(&hb); k += 3)
            pb[k] ^= 0x61; /* differences in every pixel */
        memcpy(da.data, ha.data, vkimg_image_bytes(&ha));
        memcpy(db.data, hb.data, vkimg_image_bytes(&hb));
        vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
        o.metric = cs[i].m;
        o.threshold = 0.01; /* yiq: the small differences count */
        o.want_diff = true;
        vkimg_compare_result r1, r2;
        memset(&r1, 0, sizeof r1);
        memset(&r2, 0, sizeof r2);
        int rc1 = vkimg_compare(ctx, &ha, &hb, &o, &r1, NULL, &e);
        CHECK(rc1 == 0, "%s: host: %s", cur_case, e.msg);
        o.device_diff = true;
        int rc2 = vkimg_compare(ctx, &da, &db, &o, &r2, NULL, &e);
        CHECK(rc2 == 0, "%s: device: %s", cur_case, e.msg);
        if (!rc1 && !rc2) {
            CHECK(r1.ndiff == r2.ndiff && r1.ndiff > 0 && r1.naa == r2.naa && r1.verdict == r2.verdict &&
                      !memcmp(&r1.mae, &r2.mae, sizeof r1.mae),
                  "%s: %llu vs %llu differing", cur_case, (unsigned long long)r1.ndiff, (unsigned long long)r2.ndiff);
            CHECK(r2.diff.priv && !r1.diff.priv && same_image(&r1.diff, &r2.diff), "%s: the difference images differ",
                  cur_case);
        }
        vkimg_image_free(&r1.diff);
        vkimg_image_free(&r2.diff);
        vkimg_image_free(&ha);
        vkimg_image_free(&hb);
        vkimg_image_free(&da);
        vkimg_image_free(&db);
    }
}

/* YIQ difference images as palette indices (diff_indexed): through
 * vkimg_compare_palette, the RGBA picture exactly, pixel for pixel: gray
 * background, red differences, yellow anti-aliased pixels (--aa), dimmed ignored
 * ones; 1-4 channels, awkward sizes, host and device images. */
static void test_compare_indexed(vkimg_ctx *ctx)
{
    static const struct { int w, h, c, aa, ign; } cs[] = {
        { 1, 1, 4, 0, 0 }, { 1, 23, 1, 0, 1 }, { 29, 1, 2, 1, 0 }, { 67, 45, 3, 1, 1 }, { 131, 7, 4, 0, 1 },
        { 300, 257, 3, 0, 0 },
    };
    const uint32_t *pal = vkimg_compare_palette();
    CHECK(pal && pal[0] == 0xff0000ffu && pal[1] == 0xff00ffffu && pal[2] == 0xff020202u && pal[255] == 0xffffffffu,
          "vkimg_compare_palette: red, yellow, grays");
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const int w = cs[i].w, h = cs[i].h, c = cs[i].c;
        snprintf(cur_case, sizeof cur_case, "indexed diff %dx%dx%d aa %d ignore %d", w, h, c, cs[i].aa, cs[i].ign);
        vkimg_err e;
        vkimg_image a, b;
        CHECK(vkimg_image_alloc(&a, w, h, c, VKIMG_U8, &e) == 0 && vkimg_image_alloc(&b, w, h, c, VKIMG_U8, &e) == 0,
              "%s: alloc", cur_case);
        fill_random_bytes(&a, 3 + i);
        memcpy(b.data, a.data, vkimg_image_bytes(&a));
        /* a block of changes, and a smooth edge for the detector to find */
        unsigned char *pb = b.data;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if ((x + y) % 5 == 0 || (x < w / 3 && y < h / 2))
                    for (int k = 0; k < c; k++)
                        pb[((size_t)y * w + x) * c + k] ^= (unsigned char)(0x10 << (k & 3));
        vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
        o.metric = VKIMG_METRIC_YIQ;
        o.threshold = 0.05;
        o.aa = cs[i].aa;
        vkimg_rect rect = { w / 2, h / 2, w - 1, h - 1 };
        if (cs[i].ign) {
            o.ignore = &rect;
            o.nignore = 1;
        }
        o.want_diff = true;
        vkimg_compare_result rgba, idx, didx;
        memset(&rgba, 0, sizeof rgba);
        memset(&idx, 0, sizeof idx);
        memset(&didx, 0, sizeof didx);
        int rc1 = vkimg_compare(ctx, &a, &b, &o, &rgba, NULL, &e);
        CHECK(rc1 == 0 && rgba.diff.c == 4, "%s: rgba: %s", cur_case, e.msg);
        o.diff_indexed = true;
        int rc2 = vkimg_compare(ctx, &a, &b, &o, &idx, NULL, &e);
        CHECK(rc2 == 0 && idx.diff.c == 1 && idx.diff.fmt == VKIMG_U8 && idx.diff.w == w && idx.diff.h == h,
              "%s: indexed: %s", cur_case, e.msg);
        o.device_diff = true;
        int rc3 = vkimg_compare(ctx, &a, &b, &o, &didx, NULL, &e);
        CHECK(rc3 == 0 && didx.diff.priv && same_image(&idx.diff, &didx.diff), "%s: device indexed differs: %s", cur_case,
              e.msg);
        if (!rc1 && !rc2) {
            CHECK(rgba.ndiff == idx.ndiff && rgba.naa == idx.naa, "%s: counts differ", cur_case);
            size_t bad = 0, red = 0;
            const unsigned char *q = rgba.diff.data, *ix = idx.diff.data;
            for (size_t p = 0; p < (size_t)w * h; p++) {
                uint32_t v = q[4 * p] | q[4 * p + 1] << 8 | q[4 * p + 2] << 16 | (uint32_t)q[4 * p + 3] << 24;
                bad += pal[ix[p]] != v;
                red += ix[p] == 0;
            }
            CHECK(bad == 0, "%s: %zu pixels' palette colours differ from the RGBA picture", cur_case, bad);
            CHECK(red == idx.ndiff, "%s: %zu red pixels, %llu differ", cur_case, red, (unsigned long long)idx.ndiff);
        }
        /* diff_over_b: over a device copy of b where the device's memory is the
         * host's (lavapipe): a view of it, the index in each pixel's first byte;
         * with --aa (whose detector reads the neighbours), or on a device of its
         * own memory (a discrete GPU), a picture of its own */
        vkimg_image db;
        CHECK(vkimg_image_alloc_device(ctx, &db, w, h, c, VKIMG_U8, &e) == 0, "%s: alloc device b", cur_case);
        memcpy(db.data, b.data, vkimg_image_bytes(&b));
        o.device_diff = true;
        o.diff_over_b = true;
        vkimg_compare_result over;
        memset(&over, 0, sizeof over);
        int rc4 = vkimg_compare(ctx, &a, &db, &o, &over, NULL, &e);
        CHECK(rc4 == 0 && over.ndiff == rgba.ndiff && over.naa == rgba.naa, "%s: over b: %s", cur_case, e.msg);
        if (!rc4 && !rc1) {
            const bool in_b = !cs[i].aa && ctx->gpu.uma;
            CHECK((over.diff.data == db.data) == in_b && over.diff.c == (in_b ? c : 1) && over.diff.w == w &&
                      over.diff.h == h,
                  "%s: over b: the picture %s b's memory (c %d)", cur_case, in_b ? "in" : "not in", over.diff.c);
            size_t bad = 0;
            const unsigned char *q = rgba.diff.data, *ix = over.diff.data;
            for (size_t p = 0; p < (size_t)w * h; p++) {
                uint32_t v = q[4 * p] | q[4 * p + 1] << 8 | q[4 * p + 2] << 16 | (uint32_t)q[4 * p + 3] << 24;
                bad += pal[ix[p * (size_t)over.diff.c]] != v;
            }
            CHECK(bad == 0, "%s: over b: %zu pixels' colours differ from the RGBA picture", cur_case, bad);
            /* written as a palette PNG: the RGBA picture back */
            vkimg_image back = { 0 };
            char path[64];
            snprintf(path, sizeof path, "/tmp/vkimg-zc-over-%d.png", (int)getpid());
            CHECK(vkimg_save(path, &over.diff, &(vkimg_save_opts){ .png_level = 2, .palette = pal }, &e) == 0 &&
                      vkimg_load(path, NULL, &back, &e) == 0 && same_image(&back, &rgba.diff),
                  "%s: over b: the PNG reads back as another picture", cur_case);
            remove(path);
            vkimg_image_free(&back);
        }
        vkimg_image_free(&over.diff); /* before b */
        vkimg_image_free(&db);
        vkimg_image_free(&rgba.diff);
        vkimg_image_free(&idx.diff);
        vkimg_image_free(&didx.diff);
        vkimg_image_free(&a);
        vkimg_image_free(&b);
    }
}

/* ---------------------------------------------------------------- host import */

/* Inputs in ordinary memory imported as they are (gpu.h host_import_align,
 * run.c import_fits): a big image from vkimg_image_alloc (page-aligned) is
 * imported, the same pixels at an address off the alignment are copied, and
 * both give the same bytes. Which way each went is read from the log. */
static int imported;

static void import_tap(vkimg_log_level lvl, const char *msg)
{
    (void)lvl;
    imported += strstr(msg, "imported from host memory") != NULL;
}

static void test_host_import(vkimg_ctx *ctx)
{
    const vki_gpu *g = &ctx->gpu;
    if (!g->host_import_align) {
        printf("  (%s: no VK_EXT_external_memory_host on a device whose memory is host memory: inputs are copied)\n",
               g->props.deviceName);
        CHECK(!g->uma || g->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU,
              "a CPU device without host import (lavapipe has had it since Mesa 21)");
        return;
    }
    static const struct { int w, h, c; } sz[] = { { 1024, 700, 3 }, { 1031, 1009, 4 }, { 4099, 600, 1 } };
    static const char *const pipes[] = { "gray", "blur=1.5", "resize=37%" };
    gh_log_tap = import_tap;
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
        for (size_t k = 0; k < sizeof pipes / sizeof pipes[0]; k++) {
            snprintf(cur_case, sizeof cur_case, "%s on %dx%dx%d", pipes[k], sz[i].w, sz[i].h, sz[i].c);
            vkimg_err e;
            vkimg_pipeline *p = vkimg_pipeline_parse(pipes[k], &e);
            vkimg_image a, b = { .w = sz[i].w, .h = sz[i].h, .c = sz[i].c, .fmt = VKIMG_U8 }, oa = { 0 }, ob = { 0 };
            CHECK(p && vkimg_image_alloc(&a, sz[i].w, sz[i].h, sz[i].c, VKIMG_U8, &e) == 0, "%s: alloc", cur_case);
            const size_t n = vkimg_image_bytes(&a);
            fill_random_bytes(&a, (unsigned long long)(i * 7 + k));
            unsigned char *raw = gh_calloc(n + 64, 1);
            b.data = raw + 8; /* off every import alignment: copied */
            memcpy(b.data, a.data, n);
            vkimg_run_opts ro = { .out_fmt = VKIMG_U8 };
            imported = 0;
            CHECK(vkimg_run(ctx, p, &a, &ro, &oa, &e) == 0, "%s: page-aligned input: %s", cur_case, e.msg);
            CHECK(imported == 1, "%s: a page-aligned input of %zu bytes was imported %d times", cur_case, n, imported);
            imported = 0;
            CHECK(vkimg_run(ctx, p, &b, &ro, &ob, &e) == 0, "%s: unaligned input: %s", cur_case, e.msg);
            CHECK(imported == 0, "%s: an input off the alignment was imported", cur_case);
            CHECK(oa.data && ob.data && same_image(&oa, &ob), "%s: imported and copied inputs differ", cur_case);
            CHECK(!memcmp(a.data, b.data, n), "%s: the imported input was changed", cur_case);
            vkimg_image_free(&oa);
            vkimg_image_free(&ob);
            vkimg_image_free(&a);
            free(raw);
            vkimg_pipeline_free(p);
        }
    gh_log_tap = NULL;
}

/* vkimg_run_opts.consume: the result written over the input where the device's memory
 * is the host's and the op can (blur's vec passes, in bands: record_vec copies a band's
 * first intermediate rows from the last band's instead of reading input rows it has
 * overwritten). Every case gives the bytes of the ordinary run; where it went over the
 * input (read from the log) the result holds the input's memory and the input is
 * emptied, else the input is as it was. Small bands (VKIMG_BLUR_BAND_BYTES) and short
 * rings (VKIMG_BLUR_RING_M) make many bands of few rows. */
static int overs;

static void over_tap(vkimg_log_level lvl, const char *msg)
{
    (void)lvl;
    overs += strstr(msg, "its output over its input") != NULL;
}

static void test_consume(vkimg_ctx *ctx)
{
    /* must: the band settings (bit bi) under which a CPU device writes blur=3 (rad 9) over a device
     * or page-aligned input (vkimg_image_alloc's, from 2 MiB): rows of whole 64-byte steps (the bands'
     * starts aligned) and bands of at least 27 rows (u16 intermediates without alpha; f32 ones with) */
    static const struct { int w, h, c; vkimg_fmt fmt; unsigned must; } sz[] = {
        { 1, 1, 3, VKIMG_U8, 0 },       { 997, 1, 4, VKIMG_U8, 0 },       { 1, 997, 1, VKIMG_U8, 0 },
        { 613, 457, 3, VKIMG_U8, 0 },   { 1024, 701, 3, VKIMG_U8, 6 },    { 1040, 613, 4, VKIMG_U8, 4 },
        { 2048, 1200, 1, VKIMG_U8, 6 },  { 333, 500, 3, VKIMG_U16, 0 },
    };
    static const char *const pipes[] = { "blur=3", "blur=sigma=7", "blur=3:method=box", "blur=2,gray" };
    static const char *const bands[][2] = { { NULL, NULL }, { "65536", "2" }, { "1048576", NULL } };
    gh_log_tap = over_tap;
    int n_over = 0, n_cases = 0;
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
        for (size_t k = 0; k < sizeof pipes / sizeof pipes[0]; k++)
            for (size_t bi = 0; bi < sizeof bands / sizeof bands[0]; bi++)
                for (int kind = 0; kind < 3; kind++) { /* device image, page-aligned (imported), off the alignment */
                    if (bi && (k > 1 || kind == 2 || sz[i].h < 300))
                        continue;
                    snprintf(cur_case, sizeof cur_case, "%s on %dx%dx%d %s, %s input, bands of %s bytes, ring %s",
                             pipes[k], sz[i].w, sz[i].h, sz[i].c, vkimg_fmt_name(sz[i].fmt),
                             kind == 0 ? "device" : kind == 1 ? "aligned host" : "unaligned host",
                             bands[bi][0] ? bands[bi][0] : "default", bands[bi][1] ? bands[bi][1] : "default");
                    if (bands[bi][0])
                        setenv("VKIMG_BLUR_BAND_BYTES", bands[bi][0], 1);
                    if (bands[bi][1])
                        setenv("VKIMG_BLUR_RING_M", bands[bi][1], 1);
                    vkimg_err e;
                    vkimg_pipeline *p = vkimg_pipeline_parse(pipes[k], &e);
                    vkimg_image ref_in, in = { 0 }, ref = { 0 }, out = { 0 };
                    unsigned char *raw = NULL;
                    int rc = p ? vkimg_image_alloc(&ref_in, sz[i].w, sz[i].h, sz[i].c, sz[i].fmt, &e) : -1;
                    CHECK(rc == 0, "%s: alloc: %s", cur_case, e.msg);
                    if (rc) {
                        vkimg_pipeline_free(p);
                        continue;
                    }
                    const size_t n = vkimg_image_bytes(&ref_in);
                    fill_random_bytes(&ref_in, (unsigned long long)(i * 31 + k * 7 + bi));
                    if (kind == 0)
                        rc = vkimg_image_alloc_device(ctx, &in, sz[i].w, sz[i].h, sz[i].c, sz[i].fmt, &e);
                    else if (kind == 1)
                        rc = vkimg_image_alloc(&in, sz[i].w, sz[i].h, sz[i].c, sz[i].fmt, &e);
                    else {
                        raw = gh_calloc(n + 64, 1);
                        in = (vkimg_image){ .w = sz[i].w, .h = sz[i].h, .c = sz[i].c, .fmt = sz[i].fmt, .data = raw + 8 };
                    }
                    CHECK(rc == 0, "%s: input: %s", cur_case, e.msg);
                    if (!rc) {
                        memcpy(in.data, ref_in.data, n);
                        vkimg_run_opts ro = { .out_fmt = sz[i].fmt };
                        rc = vkimg_run(ctx, p, &ref_in, &ro, &ref, &e);
                        CHECK(rc == 0, "%s: the ordinary run: %s", cur_case, e.msg);
                        void *data = in.data;
                        ro.device_output = true;
                        ro.consume = &in;
                        overs = 0;
                        int rc2 = vkimg_run(ctx, p, &in, &ro, &out, &e);
                        CHECK(rc2 == 0, "%s: consuming: %s", cur_case, e.msg);
                        CHECK(!rc && !rc2 && same_image(&ref, &out), "%s: not the ordinary run's bytes", cur_case);
                        if (overs) {
                            n_over++;
                            CHECK(out.data == data && !in.data && !in.priv, "%s: over its input, but the result "
                                  "does not hold the input's memory (or the input was not emptied)", cur_case);
                        } else {
                            CHECK(in.data == data && !memcmp(in.data, ref_in.data, n), "%s: not over its input, "
                                  "but the input changed", cur_case);
                        }
                        const bool must = vkimg_ctx_is_cpu(ctx) && kind < 2 && k == 0 && (sz[i].must >> bi & 1);
                        CHECK(overs == (must ? 1 : overs), "%s: %d runs over the input, want 1", cur_case, overs);
                        CHECK(k < 2 || !overs, "%s: over its input", cur_case);
                        n_cases++;
                    }
                    vkimg_image_free(&out);
                    vkimg_image_free(&ref);
                    if (kind < 2)
                        vkimg_image_free(&in);
                    vkimg_image_free(&ref_in);
                    free(raw);
                    vkimg_pipeline_free(p);
                    unsetenv("VKIMG_BLUR_BAND_BYTES");
                    unsetenv("VKIMG_BLUR_RING_M");
                }
    gh_log_tap = NULL;
    printf("  %d runs consuming their input, %d of them written over it\n", n_cases, n_over);
    CHECK(!vkimg_ctx_is_cpu(ctx) || n_over > 0, "no run went over its input on a CPU device");
}

int main(void)
{
    static const gh_suite suites[] = { { "runs", test_runs },
                                       { "load", test_load },
                                       { "load-png-in-place", test_load_png_in_place },
                                       { "input-done-trim", test_input_done },
                                       { "compare", test_compare },
                                       { "compare-indexed", test_compare_indexed },
                                       { "host-import", test_host_import },
                                       { "consume", test_consume } };
    return gh_main("test_zero_copy", suites, 8);
}
