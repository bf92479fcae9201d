/* thumbnail on the device: the size semantics of vipsthumbnail's --size (N is
 * an N x N box, WxH, Wx, xH, > only shrinks, < only enlarges, ! forces,
 * crop=centre fills the box and cuts out its middle: resize_ref.h's
 * ref_thumbnail_size, written from libvips's rules) and the pixels against the
 * resize reference with the same parameters (filter, linear, the fast path on
 * by default), the crop's offsets included; sizes resolved against the file's
 * size when the decoder shrank the image (vkimg_run_opts.src_w/src_h: the
 * resampling goes from the decoded image to the file's thumbnail size).
 * Tolerances: tests/lib/run_ref.h. */
#include "gpu_harness.h"
#include "resize_ref.h"
#include "run_ref.h"
#include "t.h"

#include <stdio.h>
#include <string.h>

#define G_SIZE "thumbnail"
#define G_CROP "thumbnail crop=centre"
#define G_OPTS "thumbnail filter/linear/fast"
#define G_SRC "thumbnail from a shrunk decode"

static const vkimg_fmt in_fmts[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
static unsigned fmts_of(int k) { return k % 3 == 0 ? FMT_ALL : k % 3 == 1 ? FMT_U8 | FMT_F32 : FMT_U8 | FMT_U16; }

/* thumbnail=SIZE[:crop=centre][opts] on a random w x h x c image; the sizes
 * must not be a rounding tie (where libvips may go either way). */
static void th(vkimg_ctx *ctx, const char *group, int w, int h, int c, vkimg_fmt in_fmt, unsigned fmts,
               const char *size, bool crop, ref_resample rs, const char *opts)
{
    ref_thumb t;
    CHECK(ref_thumbnail_size(size, crop, w, h, &t) == 0 && !t.tie_w && !t.tie_h,
          "test case thumbnail=%s of %dx%d: not a valid case without ties", size, w, h);
    char text[160];
    snprintf(text, sizeof text, "thumbnail=%s%s%s", size, crop ? ":crop=centre" : "", opts);
    ref_thumbnail_args a = { size, crop, rs, 0, 0 };
    ref_step s[] = { THUMBNAIL(&a) };
    run_rand(ctx, group, text, s, 1, w, h, c, in_fmt, fmts, -1);
}

static const ref_resample dflt = { RF_LANCZOS3, false, true }; /* the op's defaults */

static void test_sizes(vkimg_ctx *ctx)
{
    static const struct {
        int w, h;
        const char *size;
    } cs[] = {
        { 640, 400, "64" },    /* N: an N x N box: 64x40 (10x: fast, k = 5) */
        { 400, 640, "64" },    /* 40x64 */
        { 41, 23, "64" },      /* enlarged to fit: 64x36 */
        { 41, 23, "64>" },     /* only shrink: unchanged */
        { 400, 300, "64<" },   /* only enlarge: unchanged */
        { 33, 17, "64<" },     /* 64x33 */
        { 300, 200, "120x40" }, /* the height decides: 60x40 */
        { 300, 200, "90x" },   /* the width given: 90x60 */
        { 300, 200, "x50" },   /* the height given: 75x50 */
        { 300, 200, "50x25!" }, /* forced */
        { 1, 1, "7" },         /* 7x7 */
        { 1, 300, "10" },      /* 1 x N: 1x10 (the width stays at least 1) */
        { 300, 1, "10" },
        { 131, 67, "17" },     /* primes: 17x9 */
        { 257, 129, "200x" },  /* 200x100 */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        int c = 1 + (int)(i % 4);
        th(ctx, G_SIZE, cs[i].w, cs[i].h, c, in_fmts[i % 3], cs[i].w * cs[i].h > 50000 ? FMT_U8 : fmts_of((int)i),
           cs[i].size, false, dflt, "");
    }
    /* crop=centre: fill the box, cut out the middle (odd slack: (W - w) / 2) */
    static const struct {
        int w, h;
        const char *size;
    } cc[] = {
        { 300, 200, "64" },     /* 96x64 -> 64x64 at (16, 0) */
        { 201, 300, "64x32" },  /* 64x96 (300 x 64 / 201 = 95.52) -> at (0, 32) */
        { 37, 23, "50x50" },    /* enlarged: 80x50 -> at (15, 0) */
        { 37, 23, "50x50>" },   /* only shrink: 37x23, cut to 37x23 */
        { 1, 1, "3x5" },        /* 5x5 -> 3x5 at (1, 0) */
        { 1, 40, "7x7" },       /* 7x280 -> 7x7 at (0, 136) */
        { 131, 67, "40x40" },
        { 600, 530, "97x61" },
    };
    for (size_t i = 0; i < sizeof cc / sizeof cc[0]; i++)
        for (int c = 1 + (int)(i % 2); c <= 4; c += 2) { /* 1 and 3, or 2 and 4 */
            ref_resample rs = { (ref_filter)((i + (size_t)c) % RF_COUNT), false, true };
            char opts[48];
            snprintf(opts, sizeof opts, ":filter=%s", ref_filter_names[rs.filter]);
            th(ctx, G_CROP, cc[i].w, cc[i].h, c, in_fmts[(i + (size_t)c) % 3],
               cc[i].w * cc[i].h > 50000 ? FMT_U8 : fmts_of((int)i + c), cc[i].size, true, rs, opts);
        }
}

/* The options as resize's: every filter, linear, fast=false at large factors. */
static void test_options(vkimg_ctx *ctx)
{
    for (int f = 0; f < RF_COUNT; f++) {
        char opts[64];
        ref_resample rs = { (ref_filter)f, f % 2 == 1, f % 3 != 0 };
        snprintf(opts, sizeof opts, ":filter=%s:linear=%s:fast=%s", ref_filter_names[f], rs.linear ? "true" : "false",
                 rs.fast ? "true" : "false");
        th(ctx, G_OPTS, 257, 129, 1 + f % 4, in_fmts[f % 3], fmts_of(f), "24", false, rs, opts);
        th(ctx, G_OPTS, 19, 13, 4 - f % 4, in_fmts[(f + 1) % 3], fmts_of(f + 1), "40x40", true, rs, opts);
    }
}

/* Shrink-on-load: a file of gw x gh decoded at w x h (1/2, 1/4, 1/8). The
 * output size is the file's thumbnail, the pixels the resampling of what was
 * decoded. */
static void test_src_size(vkimg_ctx *ctx)
{
    static const struct {
        int w, h, gw, gh;
        const char *text, *size;
        bool crop;
    } cs[] = {
        { 100, 75, 800, 600, "thumbnail=64", "64", false },          /* 1/8: 64x48 from 100x75 */
        { 150, 100, 600, 400, "thumbnail=50x50:crop=centre", "50x50", true },
        { 163, 97, 325, 193, "thumbnail=x40", "x40", false },        /* 1/2, odd file sides */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int c = 1; c <= 4; c++) {
            ref_thumbnail_args a = { cs[i].size, cs[i].crop, dflt, cs[i].gw, cs[i].gh };
            ref_step s[] = { THUMBNAIL(&a) };
            vkimg_image in = ref_random_image(cs[i].w, cs[i].h, c, VKIMG_U8, run_next_seed++);
            ref_img exp = ref_apply(&in, s, 1);
            vkimg_err e;
            memset(&e, 0, sizeof e);
            vkimg_pipeline *p = vkimg_pipeline_parse(cs[i].text, &e);
            CHECK(p != NULL, "parse '%s': %s", cs[i].text, e.msg);
            vkimg_run_opts o;
            memset(&o, 0, sizeof o);
            o.out_fmt = VKIMG_U8;
            o.src_w = cs[i].gw;
            o.src_h = cs[i].gh;
            vkimg_image out;
            memset(&out, 0, sizeof out);
            gh_runs++;
            snprintf(cur_case, sizeof cur_case, "%s %dx%d (file %dx%d) c=%d", cs[i].text, cs[i].w, cs[i].h, cs[i].gw,
                     cs[i].gh, c);
            int rc = p ? vkimg_run(ctx, p, &in, &o, &out, &e) : -1;
            CHECK(rc == 0, "%s: vkimg_run failed: %s", cur_case, e.msg);
            if (rc == 0)
                run_check(G_SRC, cur_case, &out, &exp, -1);
            vkimg_image_free(&out);
            vkimg_pipeline_free(p);
            ref_img_free(&exp);
            ref_image_free(&in);
        }
}

int main(void)
{
    static const gh_suite suites[] = { { "sizes", test_sizes }, { "options", test_options }, { "src_size", test_src_size } };
    run_next_seed = 9001;
    ref_alpha_weighted = true; /* colour / alpha is unbounded (negative lobes): ref.h */
    return gh_main("test_thumbnail", suites, sizeof suites / sizeof suites[0]);
}
