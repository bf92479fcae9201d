/* Chains of ops on the device against the composition of their references.
 *
 * Float chains (copy, gray, blur): intermediates are f32 on the device, so the
 * result is compared with the double references composed and quantized once
 * (tolerances: tests/lib/run_ref.h; copies are exact).
 *
 * Chains into ops on integer levels: an op that works on integer levels
 * quantizes its f32 input (floor(x * 255 + 0.5)). Where the exact value of an
 * intermediate lies within float error of a rounding tie the level may be
 * either neighbour; the references compute the set of possible levels (an
 * interval) and the result must lie in what that set allows:
 *   gray,boxblur=3:     the luma is a multiple of 1e-4 level, ambiguous only
 *                       within 3e-4 of a tie; result in [mean(lo), mean(hi)]
 *                       and <= 1 LSB from the nominal mean.
 *   normalize,equalize: channel spans (max - min) are odd, so no exact ties:
 *                       the levels are decided (checked) and equalize exact.
 *   blur=2,threshold=otsu: levels within 2e-3 of a tie are ambiguous; Otsu's
 *                       thresholds must be the same whichever way they go
 *                       (checked), decided samples exact, the undecidable
 *                       ones (level straddles the threshold) counted. */
#include "blur_ref.h"
#include "boxblur_ref.h"
#include "copy_ref.h"
#include "equalize_ref.h"
#include "gpu_harness.h"
#include "gray_ref.h"
#include "levels.h"
#include "normalize_ref.h"
#include "run_ref.h"
#include "t.h"
#include "threshold_ref.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define G_CHAIN "chain"
#define S_CH_GRAYBOX "chain gray,boxblur=3"
#define S_CH_NORMEQ "chain normalize,equalize"
#define S_CH_BLUROTSU "chain blur=2,threshold=otsu"

/* ---------------------------------------------------------------- float chains */

static void test_chains_float(vkimg_ctx *ctx)
{
    /* copy,copy,copy: exact in the input's format */
    {
        ref_step s[] = { COPY, COPY, COPY };
        static const vkimg_fmt fm[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
        for (int f = 0; f < 3; f++)
            for (int c = 1; c <= 4; c++) {
                run_rand(ctx, G_CHAIN, "copy,copy,copy", s, 3, 17, 13, c, fm[f], 1u << f, 0.0);
                run_rand(ctx, G_CHAIN, "copy,copy,copy", s, 3, 131, 67, c, fm[f], 1u << f, 0.0);
            }
        run_rand(ctx, G_CHAIN, "copy,copy,copy", s, 3, 1, 1, 4, VKIMG_U8, FMT_U8, 0.0);
    }
    /* blur=2,copy,blur=1: composition of the references, quantized once */
    {
        ref_step s[] = { BLUR(2.0, -1), COPY, BLUR(1.0, -1) };
        const char *t = "blur=2,copy,blur=1";
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_CHAIN, t, s, 3, 131, 67, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 1, 1, 4, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 7, 1, 2, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 1, 7, 3, VKIMG_U16, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 257, 129, 4, VKIMG_U8, FMT_U8, -1);
        run_rand(ctx, G_CHAIN, t, s, 3, 600, 530, 2, VKIMG_U8, FMT_U8, -1);
    }
    /* blur=2,blur=1: alpha blurred twice (the random images have transparent
     * blocks: the first blur leaves small alphas at their edges, which weigh the
     * second blur's colour; on CPU devices kept in u16 they were wrong by up to
     * 210 LSB there: plan.c inter_fmt) */
    {
        ref_step s[] = { BLUR(2.0, -1), BLUR(1.0, -1) };
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_CHAIN, "blur=2,blur=1", s, 2, 131, 67, c, VKIMG_U8, FMT_U8, -1);
        run_rand(ctx, G_CHAIN, "blur=2,blur=1", s, 2, 257, 129, 4, VKIMG_U8, FMT_U8, -1);
        run_rand(ctx, G_CHAIN, "blur=2,blur=1", s, 2, 97, 61, 2, VKIMG_U16, FMT_U8, -1);
    }
    /* gray,blur=2 (gray of RGBA gives gray+alpha: the blur is alpha-aware) */
    {
        ref_step s[] = { GRAY(0), BLUR(2.0, -1) };
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 131, 67, c, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 1, 1, 3, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 5, 1, 3, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 7, 3, 3, VKIMG_U8, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 17, 13, 4, VKIMG_F32, FMT_ALL, -1);
        run_rand(ctx, G_CHAIN, "gray,blur=2", s, 2, 600, 530, 3, VKIMG_U8, FMT_U8, -1);
        ref_step s2[] = { GRAY(1), BLUR(1.0, 2), COPY };
        run_rand(ctx, G_CHAIN, "gray=weights=bt709,blur=sigma=1:radius=2,copy", s2, 3, 17, 13, 4, VKIMG_U16, FMT_ALL, -1);
        ref_step s3[] = { BLUR(1.0, -1), GRAY(0) };
        run_rand(ctx, G_CHAIN, "blur=1,gray", s3, 2, 131, 67, 4, VKIMG_U8, FMT_U8 | FMT_F32, -1);
        run_rand(ctx, G_CHAIN, "blur=1,gray", s3, 2, 131, 67, 3, VKIMG_U8, FMT_U8 | FMT_F32, -1);
    }
}

/* ---------------------------------------------------------------- chains on integer levels */

/* gray,boxblur=3 on U8: the luma level is round-half-up((2990 R + 5870 G +
 * 1140 B) / 10000) in exact arithmetic; the device's float luma can round
 * either way within 3e-4 level of a tie. */
static void chain_gray_box(vkimg_ctx *ctx, const vkimg_image *in)
{
    const int r = 3;
    vkimg_image out;
    if (lv_run(ctx, "gray,boxblur=3", in, VKIMG_U8, &out)) {
        vkimg_image_free(&out);
        return;
    }
    int w = in->w, h = in->h, c = in->c, oc = c == 3 ? 1 : c == 4 ? 2 : c;
    size_t np = (size_t)w * h, n = np * oc;
    uint32_t *nom = gh_calloc(n, sizeof *nom), *lo = gh_calloc(n, sizeof *lo), *hi = gh_calloc(n, sizeof *hi);
    /* the double reference of the luma, for the ambiguity test */
    ref_img v = ref_from_image(in), g = ref_gray_d(&v, 0);
    size_t ref_disagree = 0;
    for (size_t p = 0; p < np; p++) {
        const uint8_t *s = (const uint8_t *)in->data + p * c;
        for (int k = 0; k < oc; k++) {
            size_t i = p * oc + k;
            if (c >= 3 && k == 0) {
                uint32_t num = 2990u * s[0] + 5870u * s[1] + 1140u * s[2];
                nom[i] = (num + 5000) / 10000;
                uint32_t rem = num % 10000;
                lo[i] = hi[i] = nom[i];
                if (rem >= 4997 && rem <= 5003) {
                    lo[i] = num / 10000;
                    hi[i] = lo[i] + 1;
                }
                uint32_t ql, qh;
                if (lv_quantize(g.d[i], 255.0, 1e-9, &ql, &qh) != nom[i] && lo[i] == hi[i])
                    ref_disagree++;
            } else {
                nom[i] = lo[i] = hi[i] = s[c >= 3 ? 3 : k];
            }
        }
    }
    CHECK(ref_disagree == 0, "[%s] reference self-check: integer and double luma levels differ in %zu pixels",
          cur_case, ref_disagree);
    uint32_t *mn = gh_calloc(n, sizeof *mn), *ml = gh_calloc(n, sizeof *ml), *mh = gh_calloc(n, sizeof *mh);
    ref_boxblur(nom, w, h, oc, r, mn);
    ref_boxblur(lo, w, h, oc, r, ml);
    ref_boxblur(hi, w, h, oc, r, mh);
    double *ex = lv_to_double(mn, n);
    lv_check(S_CH_GRAYBOX, &out, w, h, oc, VKIMG_U8, ex, ml, mh, 1.0);
    free(ex);
    free(nom);
    free(lo);
    free(hi);
    free(mn);
    free(ml);
    free(mh);
    ref_img_free(&v);
    ref_img_free(&g);
    vkimg_image_free(&out);
}

/* normalize,equalize: the normalized value is exact in double; equalize
 * quantizes it to 255 levels, decided when no value is within 1e-3 level of a
 * tie (odd spans: the nearest is 1/(2 span) away). */
static void chain_norm_eq(vkimg_ctx *ctx, const vkimg_image *in)
{
    vkimg_image out;
    if (lv_run(ctx, "normalize,equalize", in, VKIMG_U8, &out)) {
        vkimg_image_free(&out);
        return;
    }
    int w = in->w, h = in->h, c = in->c;
    size_t n = lv_nsamples(in);
    double *v = lv_normalized(in), *nv = gh_calloc(n, sizeof *nv);
    ref_normalize(v, w, h, c, 0, nv);
    uint32_t *q = gh_calloc(n, sizeof *q), *ex = gh_calloc(n, sizeof *ex);
    size_t amb = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t l, hh;
        q[i] = lv_quantize(nv[i], 255.0, 1e-3, &l, &hh);
        amb += l != hh;
    }
    CHECK(amb == 0, "[%s] test data: %zu normalized levels within 1e-3 of a tie (the chain is then not decided)",
          cur_case, amb);
    ref_equalize(q, w, h, c, 255, 255, ex);
    lv_check_exact(S_CH_NORMEQ, &out, w, h, c, VKIMG_U8, ex);
    free(v);
    free(nv);
    free(q);
    free(ex);
    vkimg_image_free(&out);
}

/* blur=2,threshold=otsu: the blurred value in double; its level is ambiguous
 * within 2e-3 of a tie (the device's float error is ~1e-4 level). */
static void chain_blur_otsu(vkimg_ctx *ctx, const vkimg_image *in)
{
    vkimg_image out;
    if (lv_run(ctx, "blur=2,threshold=otsu", in, VKIMG_U8, &out)) {
        vkimg_image_free(&out);
        return;
    }
    const double win = 2e-3;
    int w = in->w, h = in->h, c = in->c, cc = ref_colour(c);
    size_t np = (size_t)w * h, n = np * c;
    ref_img v = ref_from_image(in), b = ref_blur_d(&v, 2.0, 6); /* radius ceil(3 sigma) */
    uint32_t *nom = gh_calloc(n, sizeof *nom), *lo = gh_calloc(n, sizeof *lo), *hi = gh_calloc(n, sizeof *hi);
    for (size_t i = 0; i < n; i++)
        nom[i] = lv_quantize(b.d[i], 255.0, win, &lo[i], &hi[i]);
    int tn[4], tl[4], th[4];
    ref_otsu_thresholds(nom, w, h, c, 255, tn);
    ref_otsu_thresholds(lo, w, h, c, 255, tl);
    ref_otsu_thresholds(hi, w, h, c, 255, th);
    for (int k = 0; k < cc; k++)
        CHECK(tn[k] == tl[k] && tn[k] == th[k],
              "[%s] test data: Otsu threshold of channel %d depends on undecided levels (%d / %d / %d)", cur_case, k,
              tl[k], tn[k], th[k]);
    double *ex = gh_calloc(n, sizeof *ex);
    uint32_t *al = gh_calloc(n, sizeof *al), *ah = gh_calloc(n, sizeof *ah);
    for (size_t i = 0; i < n; i++) {
        int k = (int)(i % (size_t)c);
        if (k >= cc) { /* alpha: the blurred alpha, quantized */
            ex[i] = nom[i];
            al[i] = lo[i];
            ah[i] = hi[i];
        } else {
            ex[i] = (int)nom[i] > tn[k] ? 255 : 0;
            al[i] = (int)lo[i] > tn[k] ? 255 : 0;
            ah[i] = (int)hi[i] > tn[k] ? 255 : 0;
        }
    }
    lv_check(S_CH_BLUROTSU, &out, w, h, c, VKIMG_U8, ex, al, ah, 0.0);
    ref_img_free(&v);
    ref_img_free(&b);
    free(nom);
    free(lo);
    free(hi);
    free(ex);
    free(al);
    free(ah);
    vkimg_image_free(&out);
}

static void test_chains_levels(vkimg_ctx *ctx)
{
    static const size2 cs[] = { { 1, 1 }, { 3, 5 }, { 131, 67 }, { 257, 129 }, { 1, 300 }, { 300, 1 } };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int c = 1; c <= 4; c++) {
            int w = cs[i].w, h = cs[i].h;
            vkimg_image in = lv_full(w, h, c, VKIMG_U8, D_UNIFORM);
            chain_gray_box(ctx, &in);
            vkimg_image_free(&in);
            /* odd spans per channel (139, 159, 89), extremes present */
            const uint32_t lo[4] = { 41, 60, 10, 0 }, hi[4] = { 180, 219, 99, 255 };
            uint32_t l2[4] = { 60, 0 }, h2[4] = { 219, 255 };
            in = lv_image(w, h, c, VKIMG_U8, (i + c) % 2 ? D_BIMODAL : D_UNIFORM, c == 2 ? l2 : lo,
                            c == 2 ? h2 : hi, true);
            chain_norm_eq(ctx, &in);
            vkimg_image_free(&in);
            in = lv_full(w, h, c, VKIMG_U8, D_BIMODAL);
            chain_blur_otsu(ctx, &in);
            vkimg_image_free(&in);
        }
    {
        vkimg_image in = lv_full(1100, 1030, 3, VKIMG_U8, D_UNIFORM);
        chain_gray_box(ctx, &in);
        vkimg_image_free(&in);
        in = lv_full(1100, 1030, 4, VKIMG_U8, D_UNIFORM);
        chain_gray_box(ctx, &in);
        vkimg_image_free(&in);
        const uint32_t lo[4] = { 41, 60, 77, 0 }, hi[4] = { 180, 219, 77, 255 }; /* channel 2 constant */
        in = lv_image(1100, 1030, 3, VKIMG_U8, D_BIMODAL, lo, hi, true);
        chain_norm_eq(ctx, &in);
        vkimg_image_free(&in);
        in = lv_full(600, 530, 1, VKIMG_U8, D_BIMODAL);
        chain_blur_otsu(ctx, &in);
        vkimg_image_free(&in);
    }
}

/* ---------------------------------------------------------------- the u16 intermediate */

/* On CPU devices an image between two ops is kept as u16 where the chain so far
 * keeps [0, 1] (gray, blur), the next op reads u16 (blur), the input is 8- or
 * 16-bit and the output 8-bit (exec.h vki_plan_inter_fmt); f32 otherwise and on
 * GPUs. Which it was is read from the library's log; every case is checked
 * against the references as the float chains above. */
static int inter_u16, inter_u8;

static void inter_tap(vkimg_log_level lvl, const char *msg)
{
    (void)lvl;
    inter_u16 += !strncmp(msg, "image between ", 14) && strstr(msg, ": u16") != NULL;
    inter_u8 += !strncmp(msg, "image between ", 14) && strstr(msg, ": u8") != NULL;
}

static void test_chains_inter(vkimg_ctx *ctx)
{
    const bool cpu = gh_cpu_device(ctx);
    void (*saved)(vkimg_log_level, const char *) = gh_log_tap;
    gh_log_tap = inter_tap;
    ref_step gb[] = { GRAY(0), BLUR(2.0, -1) }, bb[] = { BLUR(2.0, -1), BLUR(1.0, -1) },
             bg[] = { BLUR(1.0, -1), GRAY(0) }, gbg[] = { GRAY(0), BLUR(3.0, -1), GRAY(0) };
    static const struct { const char *t; int n, w, h, c; vkimg_fmt in; unsigned out; int want; } cs[] = {
        { "gray,blur=2", 2, 131, 67, 3, VKIMG_U8, FMT_U8, 1 },
        { "gray,blur=2", 2, 64, 9, 4, VKIMG_U8, FMT_U8, 1 },   /* gray + alpha: the blur's f32 intermediate */
        { "gray,blur=2", 2, 1, 1, 1, VKIMG_U8, FMT_U8, 1 },
        { "gray,blur=2", 2, 600, 530, 3, VKIMG_U16, FMT_U8, 1 },
        { "gray,blur=2", 2, 131, 67, 3, VKIMG_U8, FMT_U16, 0 }, /* 16-bit output: f32 */
        { "gray,blur=2", 2, 131, 67, 3, VKIMG_F32, FMT_U8, 0 }, /* float input: f32 */
        { "blur=2,blur=1", 2, 257, 129, 3, VKIMG_U8, FMT_U8, 1 },
        { "blur=1,gray", 2, 131, 67, 3, VKIMG_U8, FMT_U8, 0 },  /* gray does not read u16 */
        { "gray,blur=3,gray", 3, 131, 67, 4, VKIMG_U8, FMT_U8, 1 },
        { "blur=2,blur=1", 2, 131, 67, 4, VKIMG_U8, FMT_U8, 0 }, /* a blurred alpha: f32 */
        { "blur=2,blur=1", 2, 131, 67, 2, VKIMG_U16, FMT_U8, 0 },
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++)
        for (int off = 0; off < 2; off++) {
            const ref_step *st = !strcmp(cs[k].t, "gray,blur=2")     ? gb
                                 : !strcmp(cs[k].t, "blur=2,blur=1") ? bb
                                 : !strcmp(cs[k].t, "blur=1,gray")   ? bg
                                                                     : gbg;
            if (off)
                setenv("VKIMG_INTER_U16", "0", 1);
            inter_u16 = 0;
            run_rand(ctx, G_CHAIN, cs[k].t, st, cs[k].n, cs[k].w, cs[k].h, cs[k].c, cs[k].in, cs[k].out, -1);
            const bool want = cs[k].want && cpu && !off;
            CHECK((inter_u16 > 0) == want, "%s %dx%d c=%d%s: the image between ops %s u16", cs[k].t, cs[k].w, cs[k].h,
                  cs[k].c, off ? " (VKIMG_INTER_U16=0)" : "", inter_u16 ? "was" : "was not");
            unsetenv("VKIMG_INTER_U16");
        }
    /* Moves (flips, quarter turns, orient, crop: vki_op_desc.moves) keep the
     * input's format on CPU devices: each chain below moves the image and back
     * (the reference sees the filters alone); u8 / u16: the images between ops
     * kept so, counted from the log (the input's format, or the u16 rule's);
     * off16: as u16 with VKIMG_INTER_MOVES=0 (the moves' images f32, the u16
     * rule's as before: moves keep [0, 1] and alpha) */
    ref_step b2[] = { BLUR(2.0, -1) }, b2b1[] = { BLUR(2.0, -1), BLUR(1.0, -1) };
    static const struct { const char *t; int n, w, h, c; vkimg_fmt in; int u8, u16, off16; } ms[] = {
        { "flip,flip,blur=2", 1, 131, 67, 3, VKIMG_U8, 2, 0, 1 },
        { "rotate=90,rotate=270,gray,blur=2", 2, 67, 131, 4, VKIMG_U8, 2, 1, 1 },
        { "orient=6,orient=8,blur=2,blur=1", 2, 131, 67, 4, VKIMG_U8, 2, 0, 1 }, /* a blurred alpha: f32 */
        { "orient=6,orient=8,blur=2,blur=1", 2, 131, 67, 3, VKIMG_U8, 2, 1, 2 },
        { "transpose,transpose,blur=2", 1, 33, 257, 2, VKIMG_U16, 0, 2, 1 },    /* 16-bit input: u16 */
        { "crop=1000x1000,blur=2", 1, 97, 61, 1, VKIMG_U8, 1, 0, 1 },           /* the whole image */
        { "transverse,transverse,blur=2", 1, 64, 40, 4, VKIMG_F32, 0, 0, 0 },   /* float input: f32 */
    };
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
        for (int off = 0; off < 2; off++) {
            const ref_step *st = ms[k].n == 1 ? b2 : strstr(ms[k].t, "gray") ? gb : b2b1;
            if (off)
                setenv("VKIMG_INTER_MOVES", "0", 1);
            inter_u8 = inter_u16 = 0;
            run_rand(ctx, G_CHAIN, ms[k].t, st, ms[k].n, ms[k].w, ms[k].h, ms[k].c, ms[k].in, FMT_U8, -1);
            const int want8 = cpu && !off ? ms[k].u8 : 0, want16 = !cpu ? 0 : off ? ms[k].off16 : ms[k].u16;
            CHECK(inter_u8 == want8 && inter_u16 == want16,
                  "%s %dx%d c=%d %s%s: images between ops kept as u8 %d times (want %d), as u16 %d (want %d)",
                  ms[k].t, ms[k].w, ms[k].h, ms[k].c, vkimg_fmt_name(ms[k].in), off ? " (VKIMG_INTER_MOVES=0)" : "",
                  inter_u8, want8, inter_u16, want16);
            unsetenv("VKIMG_INTER_MOVES");
        }
    gh_log_tap = saved;
}

int main(void)
{
    static const gh_suite suites[] = { { "chains", test_chains_float }, { "chains-lv", test_chains_levels },
                                       { "inter", test_chains_inter } };
    /* any seeds; these give the images of the former test_ops.c and test_ops_sat.c */
    run_next_seed = 456;
    lv_seed = 0x8e444c361a954036ull;
    return gh_main("test_chains", suites, 3);
}
