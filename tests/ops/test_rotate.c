/* rotate by angles that are not multiples of 90 degrees on the device against the
 * double-precision reference (rotate_ref.h): the canvas size, the channels (alpha
 * gained on a background that is not opaque), and every sample within 1 LSB on
 * 8-bit outputs (16-bit and f32 within the float error of the sample positions,
 * amplified by the slope of random images), on awkward sizes, 1-4 channels,
 * u8/u16/f32, angles from 0.001 to 333.3 degrees either way, and five
 * backgrounds. Multiples of 90: test_remap.c. */
#include "gpu_harness.h"
#include "ref.h"
#include "remap_ref.h"
#include "rotate_ref.h"
#include "t.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Tolerances. 8-bit: 1 LSB, as asked of every resampling op, on every sample
 * (colour under alpha where the reference's alpha is at least 1/255: colour is
 * sum / alpha, whose error grows as 1/alpha; below that it is all but invisible,
 * and at alpha 0 it is 0). 16-bit and f32: the sample positions are computed in
 * float (cos and sin rounded to float, u = w/2 + dx cos + dy sin - 0.5 in float:
 * ~1e-4 pixel on a 600-pixel canvas), which a random image's slope of up to about
 * one full range per pixel turns into ~1e-4 of the range: 16-bit LSBs, not 8-bit
 * ones. There colour is compared premultiplied (colour x alpha, what is
 * interpolated: with alpha 1e-5 the colour itself may be 1000 and its error 1%). */
#define TOL_U8 1.0
#define TOL_U16 8.0
#define TOL_F32 1.2e-4
#define ALPHA_MIN (1.0 / 255.0)

enum { NF = 3 };
static const vkimg_fmt fmts[NF] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
static const double tol[NF] = { TOL_U8, TOL_U16, TOL_F32 };

static struct {
    int runs[NF];
    double max_err[NF], max_werr[NF], max_raw[NF], samples[NF], mismatch[NF], hidden[NF]; /* werr: premultiplied */
    char worst[NF][200];
} st;

static uint64_t seed = 77;

/* Compares got with the reference e (normalized doubles): the max error (LSB for
 * u8/u16, absolute for f32) of the samples compared, and of colour weighted by
 * alpha; asserts the tolerance of the format (u8: unweighted). */
static void compare(const vkimg_image *got, const ref_img *e, int f, const char *what)
{
    int a = ref_alpha_channel(e->c);
    double m = f == 0 ? 255.0 : 65535.0, worst = 0, wworst = 0, raw = 0;
    size_t n = (size_t)e->w * e->h * e->c, bad = 0, hidden = 0, at = 0, wat = 0;
    for (size_t i = 0; i < n; i++) {
        size_t px = i / (size_t)e->c;
        int k = (int)(i % (size_t)e->c);
        bool colour = a >= 0 && k != a;
        double ea = colour ? e->d[px * (size_t)e->c + (size_t)a] : 1.0, w = ea;
        double ga = colour ? ref_sample_raw(got, px * (size_t)e->c + (size_t)a) / (f == 2 ? 1.0 : m) : 1.0;
        double x = e->d[i], g = ref_sample_raw(got, i), err, r, perr;
        if (f == 2) {
            err = r = fabs(g - x);
            perr = fabs(g * ga - x * ea);
        } else {
            double q = ref_quant(x, fmts[f]);
            err = fabs(g - q);
            r = fabs(g - (x < 0 ? 0 : x > 1 ? 1 : x) * m);
            perr = fabs(g * ga - (x < 0 ? 0 : x > 1 ? 1 : x) * m * ea);
        }
        err = err != err ? INFINITY : err;
        perr = perr != perr ? INFINITY : perr;
        if (!(perr <= wworst)) {
            wworst = perr;
            wat = i;
        }
        if (w < ALPHA_MIN) {
            hidden++;
            continue;
        }
        bad += f != 2 && err != 0;
        if (err > worst) {
            worst = err;
            at = i;
        }
        if (r > raw)
            raw = r;
    }
    size_t i = f == 0 ? at : wat, px = i / (size_t)e->c;
    double shown = f == 0 ? worst : wworst;
    CHECK(shown <= tol[f],
          "%s: max %serror %.6g %s (tolerance %g) at (x=%zu, y=%zu) channel %zu: expected %.9g, got %.9g", what,
          f == 0 ? "" : "premultiplied ", shown, f == 2 ? "abs" : "LSB", tol[f], px % (size_t)e->w,
          px / (size_t)e->w, i % (size_t)e->c, f == 2 ? e->d[i] : e->d[i] * m, ref_sample_raw(got, i));
    st.runs[f]++;
    st.samples[f] += (double)(n - hidden);
    st.mismatch[f] += (double)bad;
    st.hidden[f] += (double)hidden;
    if (raw > st.max_raw[f])
        st.max_raw[f] = raw;
    if (wworst > st.max_werr[f])
        st.max_werr[f] = wworst;
    if (shown > st.max_err[f] || !st.worst[f][0]) {
        st.max_err[f] = shown > st.max_err[f] ? shown : st.max_err[f];
        snprintf(st.worst[f], sizeof st.worst[f], "%.150s (%zu,%zu) ch %zu", what, px % (size_t)e->w,
                 px / (size_t)e->w, i % (size_t)e->c);
    }
}

/* Runs text (the rotation by deg onto bg, after the exact move pre when it is not
 * NULL) on in for each output format of mask and checks size, channels, samples. */
static void rot_case(vkimg_ctx *ctx, const char *text, double deg, const double bg[4], const rm_map *pre,
                     const vkimg_image *in, unsigned mask)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "parse '%s': %s (pos %d)", text, e.msg, e.pos);
    if (!p)
        return;
    ref_img d = ref_from_image(in);
    if (pre) { /* the move, on the doubles */
        ref_img t = ref_img_new(pre->w, pre->h, d.c);
        for (size_t q = 0; q < (size_t)pre->w * pre->h; q++)
            memcpy(t.d + q * d.c, d.d + pre->src[q] * d.c, (size_t)d.c * sizeof *d.d);
        ref_img_free(&d);
        d = t;
    }
    int W, H;
    CHECK(ref_rotate_size(d.w, d.h, deg, &W, &H) == 0, "'%s' %dx%d: the canvas is within 1e-6 of a whole size: pick "
          "another case", text, d.w, d.h);
    ref_img exp = ref_rotate_d(&d, deg, bg);
    CHECK(vkimg_pipeline_out_channels(p, in->c) == exp.c, "'%s' c=%d: out_channels %d, the reference has %d", text,
          in->c, vkimg_pipeline_out_channels(p, in->c), exp.c);
    for (int f = 0; f < NF; f++) {
        if (!(mask & (1u << f)))
            continue;
        vkimg_run_opts o;
        memset(&o, 0, sizeof o);
        o.out_fmt = fmts[f];
        vkimg_image out;
        char what[220];
        snprintf(what, sizeof what, "'%s' %dx%d c=%d %s->%s", text, in->w, in->h, in->c, vkimg_fmt_name(in->fmt),
                 vkimg_fmt_name(fmts[f]));
        snprintf(cur_case, sizeof cur_case, "%.190s", what);
        gh_runs++;
        int rc = vkimg_run(ctx, p, in, &o, &out, &e);
        CHECK(rc == 0, "%s: %s", what, e.msg);
        if (rc)
            continue;
        bool shape = out.w == exp.w && out.h == exp.h && out.c == exp.c;
        CHECK(shape, "%s: got %dx%d c=%d, the reference %dx%d c=%d", what, out.w, out.h, out.c, exp.w, exp.h, exp.c);
        if (shape)
            compare(&out, &exp, f, what);
        vkimg_image_free(&out);
    }
    ref_img_free(&exp);
    ref_img_free(&d);
    vkimg_pipeline_free(p);
}

static const struct {
    const char *name;
    double rgba[4];
} bgs[] = {
    { "black", { 0, 0, 0, 1 } },          { "white", { 1, 1, 1, 1 } },
    { "transparent", { 0, 0, 0, 0 } },    { "ff8000", { 1, 128 / 255.0, 0, 1 } },
    { "3366cc80", { 0x33 / 255.0, 0x66 / 255.0, 0xcc / 255.0, 0x80 / 255.0 } },
};
#define NBGS ((int)(sizeof bgs / sizeof bgs[0]))

static const double angles[] = { 30, -1.5, 45, 60, 89.9, 90.5, 135, 179.9, 200, 333.3, -45, 1, 0.001, -100.25 };
#define NANGLES ((int)(sizeof angles / sizeof angles[0]))

static void test_rotate(vkimg_ctx *ctx)
{
    int rf = ref_rotate_self_check();
    CHECK(rf == 0, "rotate reference self-check: %d failures", rf);
    static const size2 sizes[] = { { 1, 1 }, { 1, 7 }, { 7, 1 }, { 3, 5 }, { 17, 13 }, { 33, 31 }, { 131, 67 },
                                   { 257, 129 } };
    int v = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int c = 1; c <= 4; c++)
            for (int r = 0; r < (sizes[i].w * sizes[i].h > 5000 ? 1 : 3); r++, v++) {
                double deg = angles[v % NANGLES];
                int b = v % NBGS;
                vkimg_fmt in_fmt = v % 5 == 3 ? VKIMG_U16 : v % 5 == 4 ? VKIMG_F32 : VKIMG_U8;
                char t[96];
                if (b == 0 && v % 2)
                    snprintf(t, sizeof t, "rotate=%.10g", deg); /* black is the default */
                else
                    snprintf(t, sizeof t, v % 3 ? "rotate=angle=%.10g:background=%s" : "rotate=%.10g:%s", deg,
                             bgs[b].name);
                vkimg_image in = ref_random_image(sizes[i].w, sizes[i].h, c, in_fmt, seed++);
                rot_case(ctx, t, deg, bgs[b].rgba, NULL, &in, sizes[i].w * sizes[i].h > 5000 ? 1u | 4u : 7u);
                ref_image_free(&in);
            }
    /* every background on RGB and gray, without and with alpha */
    for (int b = 0; b < NBGS; b++)
        for (int c = 1; c <= 4; c++) {
            char t[96];
            snprintf(t, sizeof t, "rotate=%g:background=%s", angles[(b + c) % NANGLES], bgs[b].name);
            vkimg_image in = ref_random_image(29, 18, c, VKIMG_U8, seed++);
            rot_case(ctx, t, angles[(b + c) % NANGLES], bgs[b].rgba, NULL, &in, 7u);
            ref_image_free(&in);
        }
    /* after an exact move, and a canvas over 600 pixels wide */
    {
        vkimg_image in = ref_random_image(67, 45, 3, VKIMG_U8, seed++);
        rm_map m = mv_move(MV_TRANSPOSE, 67, 45);
        rot_case(ctx, "transpose,rotate=-30:white", -30, bgs[1].rgba, &m, &in, 7u);
        rm_map_free(&m);
        ref_image_free(&in);
        in = ref_random_image(480, 360, 4, VKIMG_U8, seed++);
        rot_case(ctx, "rotate=37.5:transparent", 37.5, bgs[2].rgba, NULL, &in, 7u);
        ref_image_free(&in);
    }
    /* a canvas past 2^32 samples (100000 x 1 at 45 degrees: 70711 x 70711 x 4) is
     * refused before anything is allocated */
    {
        vkimg_image in = ref_random_image(100000, 1, 4, VKIMG_U8, seed++);
        vkimg_pipeline *p = vkimg_pipeline_parse("rotate=45", NULL);
        vkimg_run_opts o;
        memset(&o, 0, sizeof o);
        o.out_fmt = VKIMG_U8;
        vkimg_image out;
        vkimg_err e;
        memset(&e, 0, sizeof e);
        snprintf(cur_case, sizeof cur_case, "rotate=45 100000x1 c=4 (too large)");
        int rc = p ? vkimg_run(ctx, p, &in, &o, &out, &e) : -1;
        CHECK(rc != 0 && e.code == VKIMG_E_RUNTIME &&
                  !strcmp(e.msg, "image 100000x1 with 4 channels is too large: a stage has more than 2^32 samples"),
              "rotate=45 of 100000x1x4: rc %d code %d \"%s\"", rc, e.code, e.msg);
        if (!rc)
            vkimg_image_free(&out);
        vkimg_pipeline_free(p);
        ref_image_free(&in);
    }
    printf("rotate: max error %.4g LSB (u8 out, %d runs), max premultiplied error %.4g LSB (u16 out, %d runs), "
           "%.3g (f32 out, %d runs)\n", st.max_err[0], st.runs[0], st.max_werr[1], st.runs[1], st.max_werr[2],
           st.runs[2]);
    for (int f = 0; f < NF; f++) {
        if (f < 2)
            printf("    %s: before rounding max %.4f LSB; %.0f of %.0f samples off the rounded reference; ",
                   vkimg_fmt_name(fmts[f]), st.max_raw[f], st.mismatch[f], st.samples[f]);
        else
            printf("    f32: %.0f samples; ", st.samples[f]);
        printf("%.0f colour samples under alpha < 1/255 (u8: not compared)\n", st.hidden[f]);
        printf("    worst %s: %s\n", vkimg_fmt_name(fmts[f]), st.worst[f]);
    }
}

/* The two shapes (rotate.c: rotate_lines.spv on CPU devices, a window of 4
 * pixels a row of taps; the per-tap shape of GPUs): the cases above again with
 * the other one forced on this device (VKIMG_ROTATE_LINES=0 on a CPU device, =1
 * elsewhere), and which dispatches ran, from the library's log. */
static void test_shapes(vkimg_ctx *ctx)
{
    const bool cpu = gh_cpu_device(ctx);
    for (int forced = 0; forced < 2; forced++) {
        if (forced)
            setenv("VKIMG_ROTATE_LINES", cpu ? "0" : "1", 1);
        memset(&st, 0, sizeof st);
        gh_dispatches_start();
        test_rotate(ctx);
        gh_dispatches_stop();
        const int ran_lines = gh_dispatched("rotate-lines"), ran_taps = gh_dispatched("rotate");
        const bool lines = cpu != (forced == 1);
        CHECK(lines ? ran_lines > 0 && ran_taps == 0 : ran_taps > 0 && ran_lines == 0,
              "%s shape: rotate-lines ran %d times, the per-tap shape %d", lines ? "the lines" : "the per-tap",
              ran_lines, ran_taps);
        unsetenv("VKIMG_ROTATE_LINES");
    }
}

int main(void)
{
    static const gh_suite suites[] = { { "shapes", test_shapes } };
    return gh_main("test_rotate", suites, 1);
}
