/* Device runs against the double-precision references (see run_ref.h). */
#include "run_ref.h"
#include "t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vkimg_fmt slot_fmt[NF] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
static const char *fname(vkimg_fmt f) { return vkimg_fmt_name(f); }

static const double tol_default[NF] = { 1.0, 1.0, 1e-5 };
/* U8/U16: the device's value against the unrounded reference, in LSBs. A
 * correctly rounded result is within 0.5 plus the kernel's float error (seen on
 * lavapipe: <= 0.0001 LSB at 8 bits, <= 0.03 LSB at 16 bits), plus at 8 bits
 * resize's 16-bit intermediate on GPUs (TMP16, src/ops/resize.c: 2^-15 of full
 * scale, 0.0078 LSB, times the vertical filter's sum of |weights|, at most
 * 1.543 for Lanczos3: 0.0120 LSB; the H100 met 0.5100 on a 150% upscale); this
 * catches a biased rounding (truncation: up to 1.0; floor(x + 0.4): up to 0.6)
 * that the 1-LSB check after rounding lets through. */
static const double raw_tol[NF] = { 0.515, 0.6, 0 };

const size2 op_sizes[8] = {
    { 1, 1 }, { 1, 7 }, { 7, 1 }, { 3, 5 }, { 17, 13 }, { 131, 67 }, { 257, 129 }, { 600, 530 },
};

uint64_t run_next_seed = 1;

/* ---------------------------------------------------------------- bookkeeping */

typedef struct group_stats {
    const char *name;
    double max_err[NF];
    double max_raw[NF]; /* u8/u16: error before rounding, in LSBs */
    double samples[NF], mismatch[NF], undecided[NF];
    int runs[NF];
    char worst[NF][200];
} group_stats;

enum { MAX_GROUPS = 32 };
static group_stats stats[MAX_GROUPS];
static int ngroups;

/* The group's record, made on first use (the table lists them in that order). */
static group_stats *stats_of(const char *name)
{
    for (int i = 0; i < ngroups; i++)
        if (!strcmp(stats[i].name, name))
            return &stats[i];
    if (ngroups == MAX_GROUPS) {
        fprintf(stderr, "run_ref: more than %d groups\n", MAX_GROUPS);
        abort();
    }
    stats[ngroups].name = name;
    return &stats[ngroups++];
}

/* ---------------------------------------------------------------- one image */

static int slot_of(vkimg_fmt f) { return f == VKIMG_U8 ? F_U8 : f == VKIMG_U16 ? F_U16 : F_F32; }

double run_check(const char *group, const char *what, const vkimg_image *got, const ref_img *exp, double tol)
{
    group_stats *g = stats_of(group);
    int f = slot_of(got->fmt);
    ref_cmp c;
    double err = ref_compare(got, exp, &c);
    double t = tol >= 0 ? tol : tol_default[f];
    CHECK(c.shape_ok, "%s %s: got %dx%d c=%d %s, reference %dx%d c=%d", group, what, got->w, got->h, got->c,
          fname(got->fmt), exp->w, exp->h, exp->c);
    if (!c.shape_ok) {
        g->runs[f]++;
        g->max_err[f] = err;
        snprintf(g->worst[f], sizeof g->worst[f], "%s (shape)", what);
        return err;
    }
    CHECK(err <= t,
          "%s %s: max abs error %.6g %s (tolerance %g) at pixel (x=%d, y=%d) channel %d: "
          "expected %.9g (quantized %.9g), got %.9g",
          group, what, err, f == F_F32 ? "abs" : "LSB", t, c.x, c.y, c.ch, c.expected, c.expected_q, c.got);
    if (f != F_F32)
        CHECK(c.max_raw_err <= raw_tol[f],
              "%s %s: against the unrounded reference the error is %.4f LSB (limit %g: correct rounding gives 0.5 + "
              "float error) at pixel (x=%d, y=%d) channel %d",
              group, what, c.max_raw_err, raw_tol[f], c.raw_x, c.raw_y, c.raw_ch);
    g->runs[f]++;
    if (err > g->max_err[f] || !g->worst[f][0])
        snprintf(g->worst[f], sizeof g->worst[f], "%s (%d,%d) ch %d", what, c.x, c.y, c.ch);
    if (err > g->max_err[f])
        g->max_err[f] = err;
    if (c.max_raw_err > g->max_raw[f])
        g->max_raw[f] = c.max_raw_err;
    g->samples[f] += (double)c.nsamples;
    g->mismatch[f] += (double)c.nmismatch;
    g->undecided[f] += (double)c.nundecided;
    return err;
}

/* ---------------------------------------------------------------- one case */

void run_case(vkimg_ctx *ctx, const char *group, const char *text, const ref_step *st, int n, const vkimg_image *in,
              unsigned fmts, double tol)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "parse '%s': %s (pos %d)", text, e.msg, e.pos);
    if (!p)
        return;
    double t_ref = gh_now();
    ref_img exp = ref_apply(in, st, n);
    t_ref = gh_now() - t_ref;
    double t_dev = gh_now();
    CHECK(vkimg_pipeline_out_channels(p, in->c) == exp.c, "'%s' c=%d: out_channels %d, reference has %d", text, in->c,
          vkimg_pipeline_out_channels(p, in->c), exp.c);
    for (int f = 0; f < NF; f++) {
        if (!(fmts & (1u << f)))
            continue;
        vkimg_run_opts o;
        memset(&o, 0, sizeof o);
        o.out_fmt = slot_fmt[f];
        vkimg_image out;
        memset(&out, 0, sizeof out);
        gh_runs++;
        snprintf(cur_case, sizeof cur_case, "%s %dx%d c=%d %s->%s", text, in->w, in->h, in->c, fname(in->fmt),
                 fname(slot_fmt[f]));
        int rc = vkimg_run(ctx, p, in, &o, &out, &e);
        CHECK(rc == 0, "%s '%s' %dx%d c=%d %s->%s: vkimg_run failed: %s", group, text, in->w, in->h, in->c,
              fname(in->fmt), fname(slot_fmt[f]), e.msg);
        if (rc == 0) {
            char what[200];
            snprintf(what, sizeof what, "'%s' %dx%d c=%d %s->%s", text, in->w, in->h, in->c, fname(in->fmt),
                     fname(slot_fmt[f]));
            run_check(group, what, &out, &exp, tol);
        }
        vkimg_image_free(&out);
    }
    t_dev = gh_now() - t_dev;
    if (gh_verbose)
        printf("    %-44s %4dx%-4d c=%d %s: reference %.3f s, device %.3f s\n", text, in->w, in->h, in->c,
               fname(in->fmt), t_ref, t_dev);
    ref_img_free(&exp);
    vkimg_pipeline_free(p);
}

void run_rand(vkimg_ctx *ctx, const char *group, const char *text, const ref_step *st, int n, int w, int h, int c,
              vkimg_fmt in_fmt, unsigned fmts, double tol)
{
    vkimg_image in = ref_random_image(w, h, c, in_fmt, run_next_seed++);
    run_case(ctx, group, text, st, n, &in, fmts, tol);
    ref_image_free(&in);
}

/* ---------------------------------------------------------------- several images */

int run_levels(vkimg_ctx *ctx, const char *text, const vkimg_image *in, vkimg_fmt out_fmt, vkimg_image *out, int max)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "parse '%s': %s (pos %d)", text, e.msg, e.pos);
    if (!p)
        return -1;
    vkimg_run_opts o;
    memset(&o, 0, sizeof o);
    o.out_fmt = out_fmt;
    int n = vkimg_pipeline_outputs(p, in, &o, &e);
    CHECK(n >= 1 && n <= max, "'%s' %dx%d: vkimg_pipeline_outputs %d (max %d): %s", text, in->w, in->h, n, max,
          n < 0 ? e.msg : "");
    if (n >= 1 && n <= max) {
        gh_runs++;
        snprintf(cur_case, sizeof cur_case, "%s %dx%d c=%d %s->%s", text, in->w, in->h, in->c, fname(in->fmt),
                 fname(out_fmt));
        int rc = vkimg_run_n(ctx, p, in, &o, out, n, &e);
        CHECK(rc == 0, "'%s' %dx%d c=%d %s->%s: vkimg_run_n failed: %s", text, in->w, in->h, in->c, fname(in->fmt),
              fname(out_fmt), e.msg);
        if (rc)
            n = -1;
    } else {
        n = -1;
    }
    vkimg_pipeline_free(p);
    return n;
}

void run_check_levels(const char *group, const char *text, const ref_step *st, int n, const vkimg_image *in,
                      const vkimg_image *levels, int nlev, double tol)
{
    const ref_step *last = &st[n - 1];
    ref_img l0 = ref_apply(in, st, n);
    enum { MAXL = 64 };
    int ws[MAXL], hs[MAXL], want = 1;
    ws[0] = l0.w;
    hs[0] = l0.h;
    if (last->outputs)
        want = last->outputs(l0.w, l0.h, last, ws, hs, MAXL);
    char what[240];
    snprintf(what, sizeof what, "'%s' %dx%d c=%d %s->%s", text, in->w, in->h, in->c, fname(in->fmt),
             nlev > 0 ? fname(levels[0].fmt) : "?");
    CHECK(nlev == want, "%s %s: %d images, the reference has %d", group, what, nlev, want);
    for (int k = 0; k < nlev && k < want; k++) {
        CHECK(levels[k].w == ws[k] && levels[k].h == hs[k], "%s %s: image %d is %dx%d, the reference's %dx%d", group,
              what, k, levels[k].w, levels[k].h, ws[k], hs[k]);
        char wk[280];
        snprintf(wk, sizeof wk, "%s level %d (%dx%d)", what, k, ws[k], hs[k]);
        if (k == 0) {
            run_check(group, wk, &levels[0], &l0, tol);
            continue;
        }
        ref_img prev = ref_from_image(&levels[k - 1]); /* as the device wrote it */
        ref_img exp = last->next(&prev, ws[k], hs[k], last);
        run_check(group, wk, &levels[k], &exp, tol);
        ref_img_free(&exp);
        ref_img_free(&prev);
    }
    ref_img_free(&l0);
}

/* ---------------------------------------------------------------- the table */

void run_ref_print_stats(void)
{
    for (int g = 0; g < ngroups; g++) {
        int total = 0;
        for (int f = 0; f < NF; f++)
            total += stats[g].runs[f];
        printf("%s: max abs error", stats[g].name);
        const char *sep = " ";
        for (int f = 0; f < NF; f++) {
            if (!stats[g].runs[f])
                continue;
            if (f == F_F32)
                printf("%s%.3g (f32 out, %d runs)", sep, stats[g].max_err[f], stats[g].runs[f]);
            else
                printf("%s%g LSB (%s out, %d runs)", sep, stats[g].max_err[f], fname(slot_fmt[f]), stats[g].runs[f]);
            sep = ", ";
        }
        printf(" over %d cases\n", total);
        for (int f = 0; f < NF; f++)
            if (stats[g].runs[f] && f != F_F32)
                printf("    %s: before rounding max %.4f LSB; %.0f of %.0f samples (%.4f%%) off by 1 LSB\n", fname(slot_fmt[f]),
                       stats[g].max_raw[f], stats[g].mismatch[f], stats[g].samples[f],
                       100.0 * stats[g].mismatch[f] / (stats[g].samples[f] > 0 ? stats[g].samples[f] : 1));
        for (int f = 0; f < NF; f++)
            if (stats[g].undecided[f] > 0)
                printf("    %s: %.0f samples left out where the reference leaves them undecided (ref.h)\n",
                       fname(slot_fmt[f]), stats[g].undecided[f]);
        for (int f = 0; f < NF; f++)
            if (stats[g].runs[f] && stats[g].max_err[f] > 0)
                printf("    worst %s: %s\n", fname(slot_fmt[f]), stats[g].worst[f]);
    }
}
