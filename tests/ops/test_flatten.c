/* flatten (the colour over a background by its alpha, the alpha dropped) on the
 * device against its double-precision reference (flatten_ref.h): every awkward
 * size, channel count and format in and out, backgrounds by name and in hex, in a
 * chain; and the run's own flatten where the caller keeps no alpha
 * (vkimg_run_opts.flatten: JPEG files) before mipmaps, after an orientation, not
 * for data or images without alpha (tolerances: tests/lib/run_ref.h). */
#include "blur_ref.h"
#include "flatten_ref.h"
#include "gpu_harness.h"
#include "gray_ref.h"
#include "levels_ref.h"
#include "run_ref.h"
#include "t.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define G_FLATTEN "flatten"

static const struct {
    const char *text;
    double r, g, b; /* the background, 0..255 */
} sets[] = {
    { "flatten", 0, 0, 0 },
    { "flatten=white", 255, 255, 255 },
    { "flatten=background=#336699", 0x33, 0x66, 0x99 },
    { "flatten=f80", 0xff, 0x88, 0x00 },
    { "flatten = background = Magenta", 255, 0, 255 },
    { "flatten=808080ff", 128, 128, 128 },
};
#define NSETS ((int)(sizeof sets / sizeof sets[0]))

static int set_step(int k)
{
    return ref_flatten_params(sets[k].r / 255.0, sets[k].g / 255.0, sets[k].b / 255.0);
}

static void test_flatten(vkimg_ctx *ctx)
{
    int rf = ref_flatten_self_check();
    CHECK(rf == 0, "flatten reference self-check: %d failures", rf);
    /* every size and channel count, u8 in; the backgrounds in turn */
    int v = 0;
    for (int i = 0; i < OP_NSIZES; i++)
        for (int c = 1; c <= 4; c++, v++) {
            const ref_step st[1] = { FLATTEN(set_step(v % NSETS)) };
            run_rand(ctx, G_FLATTEN, sets[v % NSETS].text, st, 1, op_sizes[i].w, op_sizes[i].h, c, VKIMG_U8,
                     op_sizes[i].w * op_sizes[i].h > 100000 ? (c % 2 ? FMT_U8 : FMT_U16) : FMT_ALL, -1);
        }
    /* every background on u8, u16 and f32 in, every format out */
    static const vkimg_fmt in_fmts[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
    for (int k = 0; k < NSETS; k++)
        for (int f = 0; f < 3; f++) {
            const ref_step st[1] = { FLATTEN(set_step(k)) };
            run_rand(ctx, G_FLATTEN, sets[k].text, st, 1, 19 + 2 * k, 11, 2 + 2 * ((k + f) % 2), in_fmts[f], FMT_ALL,
                     -1);
        }
    /* after an op that keeps alpha (an f32 image between them) */
    const ref_step chain[2] = { LEVELS(ref_levels_params(0.1, 0.9, 2.2)), FLATTEN(set_step(2)) };
    run_rand(ctx, G_FLATTEN, "levels=0.1:0.9:2.2,flatten=336699", chain, 2, 131, 67, 4, VKIMG_U8, FMT_ALL, -1);
    run_rand(ctx, G_FLATTEN, "levels=0.1:0.9:2.2,flatten=336699", chain, 2, 67, 131, 2, VKIMG_U16, FMT_ALL, -1);
    /* every alpha level of 8 bits under every colour level of a channel, over gray */
    {
        static uint8_t px[256 * 256 * 2];
        for (int a = 0; a < 256; a++)
            for (int g = 0; g < 256; g++) {
                px[2 * (a * 256 + g)] = (uint8_t)g;
                px[2 * (a * 256 + g) + 1] = (uint8_t)a;
            }
        const vkimg_image all = ref_wrap(256, 256, 2, VKIMG_U8, px);
        const ref_step st[1] = { FLATTEN(set_step(5)) };
        run_case(ctx, G_FLATTEN, sets[5].text, st, 1, &all, FMT_ALL, -1);
    }
    /* full HD */
    const ref_step st[1] = { FLATTEN(set_step(1)) };
    run_rand(ctx, G_FLATTEN, sets[1].text, st, 1, 1920, 1080, 4, VKIMG_U8, FMT_U8, -1);
}

/* A background with alpha is refused: the result has none */
static void test_flatten_options(vkimg_ctx *ctx)
{
    (void)ctx;
    vkimg_err e;
    vkimg_pipeline *p = vkimg_pipeline_parse("flatten=#ff000080", &e);
    CHECK(!p && e.code == VKIMG_E_USAGE && strstr(e.msg, "must be opaque"), "flatten=#ff000080: %s",
          p ? "parsed" : e.msg);
    vkimg_pipeline_free(p);
    p = vkimg_pipeline_parse("flatten=transparent", &e);
    CHECK(!p && strstr(e.msg, "must be opaque"), "flatten=transparent: %s", p ? "parsed" : e.msg);
    vkimg_pipeline_free(p);
    p = vkimg_pipeline_parse("flatten=white", &e);
    CHECK(p && vkimg_pipeline_out_channels(p, 4) == 3 && vkimg_pipeline_out_channels(p, 2) == 1 &&
              vkimg_pipeline_out_channels(p, 3) == 3 && vkimg_pipeline_keeps_opaque(p),
          "flatten=white: channels or keeps_opaque");
    vkimg_pipeline_free(p);
}

/* Runs text on in with o; the result (or one of zero size on failure) */
static vkimg_image run_opts(vkimg_ctx *ctx, const char *text, const vkimg_image *in, const vkimg_run_opts *o)
{
    vkimg_err e;
    vkimg_image out;
    memset(&out, 0, sizeof out);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    gh_runs++;
    CHECK(p && vkimg_run(ctx, p, in, o, &out, &e) == 0, "%s with run options: %s", text, e.msg);
    vkimg_pipeline_free(p);
    return out;
}

/* vkimg_run_opts.flatten: the run flattens on black where the result would have alpha */
static void test_run_flatten(vkimg_ctx *ctx)
{
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = ref_random_image(37, 23, c, VKIMG_U8, 900 + (uint64_t)c);
        ref_img d = ref_from_image(&in);
        vkimg_run_opts o = { .out_fmt = VKIMG_U8, .flatten = true };
        snprintf(cur_case, sizeof cur_case, "copy with flatten, %d channels", c);
        vkimg_image out = run_opts(ctx, "copy", &in, &o);
        ref_img want = ref_flatten_d(&d, 0, 0, 0);
        CHECK(out.c == (c == 2 || c == 4 ? c - 1 : c), "flatten of %d channels gave %d", c, out.c);
        if (out.data)
            run_check(G_FLATTEN, cur_case, &out, &want, -1);
        vkimg_image_free(&out);
        ref_img_free(&want);
        /* the EXIF orientation first (6: the image turned 90 degrees clockwise), then flatten */
        o.orientation = 6;
        snprintf(cur_case, sizeof cur_case, "orientation 6 then flatten, %d channels", c);
        out = run_opts(ctx, "copy", &in, &o);
        CHECK(out.w == in.h && out.h == in.w && out.c == (c == 2 || c == 4 ? c - 1 : c),
              "orientation 6 + flatten: %dx%dx%d", out.w, out.h, out.c);
        if (out.data && out.w == in.h) { /* pixel (x, y) of the result is (y, h - 1 - x) of the input */
            ref_img f = ref_flatten_d(&d, 0, 0, 0), t = ref_img_new(in.h, in.w, f.c);
            for (int y = 0; y < in.w; y++)
                for (int x = 0; x < in.h; x++)
                    for (int k = 0; k < f.c; k++)
                        t.d[((size_t)y * (size_t)in.h + (size_t)x) * (size_t)f.c + (size_t)k] =
                            f.d[((size_t)(in.h - 1 - x) * (size_t)in.w + (size_t)y) * (size_t)f.c + (size_t)k];
            run_check(G_FLATTEN, cur_case, &out, &t, -1);
            ref_img_free(&f);
            ref_img_free(&t);
        }
        vkimg_image_free(&out);
        o.orientation = 0;
        /* a pipeline that drops alpha itself: nothing more (gray of RGBA keeps alpha: flattened) */
        snprintf(cur_case, sizeof cur_case, "flatten=white with flatten, %d channels", c);
        out = run_opts(ctx, "flatten=white", &in, &o);
        want = ref_flatten_d(&d, 1, 1, 1);
        if (out.data)
            run_check(G_FLATTEN, cur_case, &out, &want, -1);
        vkimg_image_free(&out);
        ref_img_free(&want);
        /* data: the sums of every channel, alpha too */
        snprintf(cur_case, sizeof cur_case, "integral with flatten, %d channels", c);
        out = run_opts(ctx, "integral", &in, &o);
        CHECK(out.c == c, "integral with flatten: %d channels of %d", out.c, c);
        vkimg_image_free(&out);
        /* mipmaps: flatten before them, every level without alpha, level 1 the box of level 0 */
        if (c == 4) {
            vkimg_err e;
            vkimg_pipeline *p = vkimg_pipeline_parse("mipmaps=levels=3", &e);
            vkimg_image lv[3];
            memset(lv, 0, sizeof lv);
            CHECK(p && vkimg_pipeline_outputs(p, &in, &o, &e) == 3, "mipmaps with flatten: outputs");
            gh_runs++;
            CHECK(p && vkimg_run_n(ctx, p, &in, &o, lv, 3, &e) == 0, "mipmaps with flatten: %s", e.msg);
            CHECK(lv[0].c == 3 && lv[1].c == 3 && lv[2].c == 3 && lv[1].w == 18 && lv[2].h == 5,
                  "mipmaps with flatten: levels %dx%dx%d, %dx%dx%d", lv[1].w, lv[1].h, lv[1].c, lv[2].w, lv[2].h,
                  lv[2].c);
            want = ref_flatten_d(&d, 0, 0, 0);
            snprintf(cur_case, sizeof cur_case, "mipmaps level 0 with flatten");
            if (lv[0].data)
                run_check(G_FLATTEN, cur_case, &lv[0], &want, -1);
            ref_img_free(&want);
            for (int k = 0; k < 3; k++)
                vkimg_image_free(&lv[k]);
            vkimg_pipeline_free(p);
        }
        /* blur, gray, crop: flatten goes first (the same colour flattened before or
         * after; an RGBA image is then blurred as RGB), within 1 LSB of the op then
         * flatten (the image between them rounded to 8 bits on CPU devices) */
        static const char *const first[3] = { "blur=sigma=1.5:radius=5", "gray", "crop=20x10+3+4" };
        for (int k = 0; k < 3; k++) {
            vkimg_image_free(&in);
            ref_img_free(&d);
            in = ref_random_image(61, 37, c, VKIMG_U8, 950 + (uint64_t)(10 * c + k));
            d = ref_from_image(&in);
            snprintf(cur_case, sizeof cur_case, "%s with flatten, %d channels", first[k], c);
            gh_dispatches_start();
            out = run_opts(ctx, first[k], &in, &o);
            const int nf = gh_dispatched_ending("flatten") + gh_dispatched_ending("flatten-runs");
            gh_dispatches_stop();
            CHECK(nf == (c == 2 || c == 4), "%s: %d flatten dispatches", cur_case, nf);
            ref_img op = k == 0 ? ref_blur_d(&d, 1.5, 5) : ref_img_new(1, 1, 1);
            if (k == 1) {
                ref_img_free(&op);
                op = ref_gray_d(&d, 0);
            } else if (k == 2) {
                ref_img_free(&op);
                op = ref_img_new(20, 10, c);
                for (int y = 0; y < 10; y++)
                    for (int x = 0; x < 20; x++)
                        for (int ch = 0; ch < c; ch++)
                            op.d[((size_t)y * 20 + (size_t)x) * (size_t)c + (size_t)ch] =
                                d.d[((size_t)(y + 4) * 61 + (size_t)(x + 3)) * (size_t)c + (size_t)ch];
            }
            want = ref_flatten_d(&op, 0, 0, 0);
            ref_cmp rc;
            const double err = out.data ? ref_compare(&out, &want, &rc) : 1e9;
            CHECK(err <= 1.0, "%s: %.3g LSB from the op then flatten", cur_case, err);
            ref_img_free(&op);
            ref_img_free(&want);
            vkimg_image_free(&out);
        }
        ref_img_free(&d);
        vkimg_image_free(&in);
    }
}

/* the per-pixel shape and the CPU shape (runs) wherever the tests run */
static void test_flatten_shapes(vkimg_ctx *ctx)
{
    gh_shapes(ctx, test_flatten, "flatten-runs");
}

int main(void)
{
    static const gh_suite suites[] = { { "flatten", test_flatten },
                                       { "options", test_flatten_options },
                                       { "run", test_run_flatten },
                                       { "shapes", test_flatten_shapes } };
    return gh_main("test_flatten", suites, 4);
}
