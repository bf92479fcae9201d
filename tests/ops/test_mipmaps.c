/* mipmaps on the device against its reference (mipmaps_ref.h): level 0 the
 * input as it is, level k the resize of level k - 1 AS WRITTEN (quantized to
 * the output format) to floor(w/2) x floor(h/2), at least 1 x 1, down to 1 x 1
 * or levels=N; box by default (the mean of 2 x 2 pixels for even sizes), every
 * other filter and linear light too. Each level is checked against the
 * reference computed from the level before it as the device wrote it (the
 * definition; tolerances: tests/lib/run_ref.h), and the whole chain against
 * the reference's own chain of quantized levels (<= 3 LSB). Odd sizes (5x3 ->
 * 2x1 -> 1x1, 13x6, whose box has taps at exactly t = 0.5), 1xN, Nx1, primes,
 * 1x1, sizes that halve exactly for 6 levels and more (the fused pass), 1-4
 * channels, u8/u16/f32 in and out. Both paths (VKIMG_MIPMAPS_FUSED=0/1) give
 * the same bytes (the fused one makes the levels past its own in the tail
 * dispatches), and for 8-bit chains so do its word and byte reads and the
 * tail's shapes (VKIMG_MIPMAPS_TAIL_WIDE). Then the multi-output plumbing: vkimg_pipeline_outputs,
 * vkimg_run_n (and vkimg_run's refusal), vkimg_save_levels with a {level}
 * template (one file each, read back; a failed level leaves none) and to .ktx2
 * (read back by the strict reader, vki_ktx2_decode: the same levels). */
#include "gpu_harness.h"
#include "gray_ref.h"
#include "io/ktx2.h"
#include "io_util.h"
#include "mipmaps_ref.h"
#include "run_ref.h"
#include "t.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define G_BOX "mipmaps box"
#define G_FILTERS "mipmaps other filters"
#define G_LINEAR "mipmaps linear=true"
#define MAXL 40

static const vkimg_fmt fmt_of[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };

/* Kernels made while a test runs (the library logs "pipeline NAME created"). */
static int made_fused;
static void tap(vkimg_log_level lvl, const char *msg)
{
    (void)lvl;
    made_fused += !strncmp(msg, "pipeline mipmaps created", 24);
}

/* The reference's own chain (levels from its own quantized levels), besides
 * the definition's check: within 3 LSB (u8/u16; f32 1e-5) at every level. Not
 * 1: where a level's exact value is a rounding tie (the mean of 2 u16 levels
 * of odd sum), the device may round it either way (1 LSB, allowed), which
 * moves the next level's exact value by up to 1 LSB, whose rounding can add
 * one more (1024x1 reaches 2 after 5 levels); the largest is printed. */
static double own_max[3];
static char own_worst[3][200];

static void check_own_chain(const char *text, const ref_step *st, int n, const vkimg_image *in,
                            const vkimg_image *lv, int nlv)
{
    ref_img ref[MAXL];
    vkimg_fmt f = lv[0].fmt;
    int nr = ref_apply_levels(in, st, n, f, ref, MAXL);
    int slot = f == VKIMG_U8 ? 0 : f == VKIMG_U16 ? 1 : 2;
    for (int k = 0; k < nr && k < nlv; k++) {
        ref_cmp c;
        double err = ref_compare(&lv[k], &ref[k], &c);
        double tol = slot == 2 ? 1e-5 : 3.0;
        CHECK(err <= tol, "'%s' %dx%d c=%d %s->%s level %d: %g from the reference's own chain (tolerance %g) at "
              "(%d,%d) ch %d",
              text, in->w, in->h, in->c, vkimg_fmt_name(in->fmt), vkimg_fmt_name(f), k, err, tol, c.x, c.y, c.ch);
        if (err > own_max[slot] || !own_worst[slot][0]) {
            own_max[slot] = err > own_max[slot] ? err : own_max[slot];
            snprintf(own_worst[slot], sizeof own_worst[slot], "'%s' %dx%d c=%d %s level %d", text, in->w, in->h,
                     in->c, vkimg_fmt_name(in->fmt), k);
        }
    }
    for (int k = 0; k < nr; k++)
        ref_img_free(&ref[k]);
}

static void free_levels(vkimg_image *lv, int n)
{
    for (int k = 0; k < n; k++)
        vkimg_image_free(&lv[k]);
}

static int nfused_cases;

/* Whether two runs made the same levels, byte for byte. */
static bool same_levels(const vkimg_image *a, int na, const vkimg_image *b, int nb)
{
    bool same = na == nb && na > 0;
    for (int k = 0; same && k < na; k++)
        same = vkimg_image_bytes(&a[k]) == vkimg_image_bytes(&b[k]) &&
               !memcmp(a[k].data, b[k].data, vkimg_image_bytes(&a[k]));
    return same;
}

/* An 8-bit chain again through the fused pass with var=val: the same bytes as
 * the default's (l1). */
static void same_with(vkimg_ctx *ctx, const char *text, const vkimg_image *in, const char *var, const char *val,
                      const vkimg_image *l1, int n1)
{
    vkimg_image lb[MAXL];
    memset(lb, 0, sizeof lb);
    setenv("VKIMG_MIPMAPS_FUSED", "1", 1);
    setenv(var, val, 1);
    int nb = run_levels(ctx, text, in, VKIMG_U8, lb, MAXL);
    unsetenv(var);
    unsetenv("VKIMG_MIPMAPS_FUSED");
    CHECK(same_levels(lb, nb, l1, n1), "'%s' %dx%d c=%d u8->u8: %s=%s and the default differ", text, in->w, in->h,
          in->c, var, val);
    free_levels(lb, nb);
}

/* text on a random w x h x c image, every output format in fmts, both paths:
 * the same bytes, each level against the reference. */
static void mm(vkimg_ctx *ctx, const char *group, const char *text, const ref_step *st, int n, int w, int h, int c,
               vkimg_fmt in_fmt, unsigned fmts)
{
    vkimg_image in = ref_random_image(w, h, c, in_fmt, run_next_seed++);
    for (int f = 0; f < 3; f++) {
        if (!(fmts & (1u << f)))
            continue;
        vkimg_image l0[MAXL], l1[MAXL];
        memset(l0, 0, sizeof l0);
        memset(l1, 0, sizeof l1);
        setenv("VKIMG_MIPMAPS_FUSED", "0", 1);
        int n0 = run_levels(ctx, text, &in, fmt_of[f], l0, MAXL);
        setenv("VKIMG_MIPMAPS_FUSED", "1", 1);
        made_fused = 0;
        int n1 = run_levels(ctx, text, &in, fmt_of[f], l1, MAXL);
        nfused_cases += made_fused > 0;
        unsetenv("VKIMG_MIPMAPS_FUSED");
        bool same = same_levels(l0, n0, l1, n1);
        CHECK(same, "'%s' %dx%d c=%d %s->%s: VKIMG_MIPMAPS_FUSED=0 and =1 differ (%d and %d levels)", text, w, h, c,
              vkimg_fmt_name(in_fmt), vkimg_fmt_name(fmt_of[f]), n0, n1);
        if (in_fmt == VKIMG_U8 && fmt_of[f] == VKIMG_U8 && n1 > 0) {
            /* 8-bit chains: the fused pass reading bytes instead of 64-bit words
             * (VEC8, where rows allow), and every tail level a dispatch over many
             * workgroups of its own (TAIL_WIDE=1) or none (=0) */
            same_with(ctx, text, &in, "VKIMG_MIPMAPS_VEC", "0", l1, n1);
            same_with(ctx, text, &in, "VKIMG_MIPMAPS_TAIL_WIDE", "1", l1, n1);
            same_with(ctx, text, &in, "VKIMG_MIPMAPS_TAIL_WIDE", "0", l1, n1);
        }
        if (n0 > 0) {
            run_check_levels(group, text, st, n, &in, l0, n0, -1);
            check_own_chain(text, st, n, &in, l0, n0);
        }
        if (!same && n1 > 0)
            run_check_levels(group, text, st, n, &in, l1, n1, -1);
        free_levels(l0, n0);
        free_levels(l1, n1);
    }
    ref_image_free(&in);
}

static const size2 sizes[] = {
    { 1, 1 },   { 1, 9 },    { 9, 1 },    { 5, 3 },    { 7, 5 },     { 13, 6 },   { 64, 64 },
    { 128, 32 }, { 48, 80 },  { 131, 67 }, { 256, 256 }, { 600, 530 }, { 1024, 1 }, { 2, 300 },
    { 20, 12 },  { 72, 200 }, /* 8-bit rows in 64-bit words with a part-word group at the right; and 2 / 3 words */
    { 768, 432 }, /* 8K / 10: 4 fused levels (48 x 27) over 12 x 7 tiles, then the tail's 7 */
};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static unsigned fmts_for(int i, int k)
{
    if (sizes[i].w * sizes[i].h > 50000)
        return FMT_U8;
    return (i + k) % 3 == 0 ? FMT_ALL : (i + k) % 3 == 1 ? FMT_U8 | FMT_F32 : FMT_U8 | FMT_U16;
}

static void test_box(vkimg_ctx *ctx)
{
    int rf = ref_mipmaps_self_check();
    CHECK(rf == 0, "mipmaps reference self-check: %d failures", rf);
    gh_log_tap = tap;
    ref_mipmaps_args a = { 0, RF_BOX, false };
    ref_step s[] = { MIPMAPS(&a) };
    /* every channel count on 5x3, 13x6 and 64x64 (the fused pass's 6 levels),
     * two on the others */
    for (int i = 0; i < NSIZES; i++)
        for (int c = 1; c <= 4; c++) {
            bool all = (sizes[i].w == 5 && sizes[i].h == 3) || sizes[i].w == 13 || sizes[i].w == 64 ||
                       sizes[i].w == 20 || sizes[i].w == 72;
            if (!all && c != 1 + i % 4 && c != 1 + (i + 2) % 4)
                continue;
            mm(ctx, G_BOX, "mipmaps", s, 1, sizes[i].w, sizes[i].h, c, fmt_of[(i + c) % 3], fmts_for(i, c));
        }
    /* levels=N, and the filter spelled out */
    ref_mipmaps_args a3 = { 3, RF_BOX, false }, a1 = { 1, RF_BOX, false };
    ref_step s3[] = { MIPMAPS(&a3) }, s1[] = { MIPMAPS(&a1) };
    mm(ctx, G_BOX, "mipmaps=levels=3:filter=box", s3, 1, 64, 64, 4, VKIMG_U8, FMT_ALL);
    mm(ctx, G_BOX, "mipmaps=levels=3", s3, 1, 13, 6, 2, VKIMG_U16, FMT_U8 | FMT_U16);
    mm(ctx, G_BOX, "mipmaps=levels=1", s1, 1, 7, 5, 3, VKIMG_U8, FMT_U8);
    mm(ctx, G_BOX, "mipmaps=levels=3", s3, 1, 1, 1, 1, VKIMG_U8, FMT_U8); /* fewer than asked */
    /* the fused pass's 5 levels (8 x 3) and one tail level after them */
    ref_mipmaps_args a7 = { 7, RF_BOX, false };
    ref_step s7[] = { MIPMAPS(&a7) };
    mm(ctx, G_BOX, "mipmaps=levels=7", s7, 1, 256, 96, 3, VKIMG_U8, FMT_U8);
    /* after other ops: level 0 is the chain's result (gray of RGBA: gray + alpha) */
    ref_step sg[] = { GRAY(0), MIPMAPS(&a) };
    mm(ctx, G_BOX, "gray,mipmaps", sg, 2, 33, 17, 4, VKIMG_U8, FMT_U8 | FMT_F32);
    mm(ctx, G_BOX, "gray,mipmaps", sg, 2, 64, 64, 3, VKIMG_U16, FMT_U16);
    gh_log_tap = NULL;
    printf("  VKIMG_MIPMAPS_FUSED=1 made a fused kernel in %d runs\n", nfused_cases);
    CHECK(nfused_cases >= 5, "VKIMG_MIPMAPS_FUSED=1 made the fused kernel in %d runs only", nfused_cases);
}

static void test_filters(vkimg_ctx *ctx)
{
    static const int pick[] = { 3, 4, 5, 9, 1, 2 }; /* indices into sizes: odd ones, primes, 1xN, Nx1 */
    int k = 0;
    for (int f = 0; f < RF_COUNT; f++) {
        if (f == RF_BOX)
            continue;
        ref_mipmaps_args a = { 0, (ref_filter)f, false };
        ref_step s[] = { MIPMAPS(&a) };
        char text[64];
        snprintf(text, sizeof text, "mipmaps=filter=%s", ref_filter_names[f]);
        for (size_t i = (size_t)f % 2; i < sizeof pick / sizeof pick[0]; i += 2, k++) /* half of them each */
            mm(ctx, G_FILTERS, text, s, 1, sizes[pick[i]].w, sizes[pick[i]].h, 1 + k % 4, fmt_of[k % 3],
               k % 3 == 0 ? FMT_U8 | FMT_F32 : k % 3 == 1 ? FMT_U8 | FMT_U16 : FMT_U8);
    }
    /* linear light, box and others */
    for (int f = 0; f < RF_COUNT; f += 2) {
        ref_mipmaps_args a = { 0, (ref_filter)f, true };
        ref_step s[] = { MIPMAPS(&a) };
        char text[64];
        snprintf(text, sizeof text, "mipmaps=filter=%s:linear=true", ref_filter_names[f]);
        for (int c = 1 + (f / 2) % 2; c <= 4; c += 2, k++)
            mm(ctx, G_LINEAR, text, s, 1, c == 4 ? 64 : 13 + c, c == 4 ? 32 : 7 + 2 * c, c, fmt_of[k % 3],
               c % 2 ? FMT_U8 | FMT_F32 : FMT_U8 | FMT_U16);
    }
    ref_mipmaps_args ab = { 0, RF_BOX, true };
    ref_step sb[] = { MIPMAPS(&ab) };
    mm(ctx, G_LINEAR, "mipmaps=linear=true", sb, 1, 256, 128, 4, VKIMG_U8, FMT_U8);

    static const char *const names[3] = { "u8", "u16", "f32" };
    for (int f = 0; f < 3; f++)
        if (own_worst[f][0])
            printf("  against the reference's own chain of levels (%s out): max %g%s, worst %s\n", names[f],
                   own_max[f], f < 2 ? " LSB" : "", own_worst[f]);
}

/* ---------------------------------------------------------------- the plumbing */

static vkimg_pipeline *parse(const char *text)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "parse '%s': %s", text, e.msg);
    return p;
}

static void test_api(vkimg_ctx *ctx)
{
    vkimg_image in = ref_random_image(37, 20, 3, VKIMG_U8, run_next_seed++);
    vkimg_run_opts o;
    memset(&o, 0, sizeof o);
    o.out_fmt = VKIMG_U8;
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *pm = parse("mipmaps"), *pl = parse("mipmaps=levels=4"), *pb = parse("blur=1");
    if (!pm || !pl || !pb)
        goto done;
    /* 37x20 -> 18x10 -> 9x5 -> 4x2 -> 2x1 -> 1x1 */
    CHECK(vkimg_pipeline_outputs(pm, &in, &o, &e) == 6, "outputs of mipmaps on 37x20: %d",
          vkimg_pipeline_outputs(pm, &in, &o, &e));
    CHECK(vkimg_pipeline_outputs(pl, &in, &o, &e) == 4, "outputs of levels=4");
    CHECK(vkimg_pipeline_outputs(pb, &in, &o, &e) == 1, "outputs of blur");
    CHECK(vkimg_pipeline_writes_levels(pm) && !vkimg_pipeline_writes_levels(pb), "writes_levels");
    CHECK(vkimg_pipeline_outputs(NULL, &in, &o, &e) < 0 && e.code == VKIMG_E_USAGE, "outputs(NULL)");
    o.src_w = 370; /* a shrunk decode's file size: mipmaps has no geometry, its levels are the image's */
    o.src_h = 200;
    int nsrc = vkimg_pipeline_outputs(pm, &in, &o, &e);
    CHECK(nsrc == 6, "outputs with src_w/src_h: %d, want the image's 6", nsrc);
    o.src_w = o.src_h = 0;
    /* vkimg_run refuses a pipeline that writes several images; run_n with the
     * wrong count too, its outputs left empty */
    vkimg_image one;
    memset(&one, 0, sizeof one);
    gh_runs++;
    int rc = vkimg_run(ctx, pm, &in, &o, &one, &e);
    CHECK(rc != 0 && e.code == VKIMG_E_USAGE && one.data == NULL, "vkimg_run of mipmaps: rc %d code %d '%s'", rc,
          e.code, e.msg);
    vkimg_image lv[8];
    memset(lv, 0x5a, sizeof lv);
    gh_runs++;
    rc = vkimg_run_n(ctx, pm, &in, &o, lv, 5, &e);
    CHECK(rc != 0 && e.code == VKIMG_E_USAGE && lv[0].data == NULL && lv[4].data == NULL,
          "vkimg_run_n with 5 of 6: rc %d '%s'", rc, e.msg);
    gh_runs++;
    rc = vkimg_run_n(ctx, pm, &in, &o, lv, 7, &e);
    CHECK(rc != 0 && e.code == VKIMG_E_USAGE, "vkimg_run_n with 7 of 6: rc %d", rc);
    /* a single image through run_n: the same as vkimg_run */
    vkimg_image b1, b2;
    memset(&b1, 0, sizeof b1);
    memset(&b2, 0, sizeof b2);
    gh_runs += 2;
    CHECK(vkimg_run_n(ctx, pb, &in, &o, &b1, 1, &e) == 0 && vkimg_run(ctx, pb, &in, &o, &b2, &e) == 0 &&
              vkimg_image_bytes(&b1) == vkimg_image_bytes(&b2) && !memcmp(b1.data, b2.data, vkimg_image_bytes(&b1)),
          "vkimg_run_n(1) of blur differs from vkimg_run: %s", e.msg);
    vkimg_image_free(&b1);
    vkimg_image_free(&b2);
    /* all the levels, with their sizes */
    gh_runs++;
    rc = vkimg_run_n(ctx, pm, &in, &o, lv, 6, &e);
    CHECK(rc == 0, "vkimg_run_n: %s", e.msg);
    static const int ws[6] = { 37, 18, 9, 4, 2, 1 }, hs[6] = { 20, 10, 5, 2, 1, 1 };
    for (int k = 0; rc == 0 && k < 6; k++)
        CHECK(lv[k].w == ws[k] && lv[k].h == hs[k] && lv[k].c == 3 && lv[k].fmt == VKIMG_U8,
              "level %d: %dx%d c=%d, want %dx%d c=3", k, lv[k].w, lv[k].h, lv[k].c, ws[k], hs[k]);
    if (rc == 0)
        free_levels(lv, 6);
done:
    vkimg_pipeline_free(pm);
    vkimg_pipeline_free(pl);
    vkimg_pipeline_free(pb);
    ref_image_free(&in);
}

/* vkimg_save_levels: a {level} template, one file each (read back: the same
 * pixels); a level that can't be written leaves none of them; .ktx2 read back
 * by the strict reader. */
static void test_save(vkimg_ctx *ctx)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/vkimg-test-mipmaps-XXXXXX");
    if (!mkdtemp(g_dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    static const struct {
        int w, h, c;
        vkimg_fmt in, out;
        const char *text;
    } cs[] = {
        { 37, 20, 3, VKIMG_U8, VKIMG_U8, "mipmaps" },
        { 16, 16, 4, VKIMG_U8, VKIMG_U8, "mipmaps=levels=3" },
        { 9, 30, 1, VKIMG_U16, VKIMG_U16, "mipmaps=filter=lanczos3" },
        { 5, 3, 2, VKIMG_U8, VKIMG_U8, "mipmaps" },
        { 13, 6, 4, VKIMG_F32, VKIMG_F32, "mipmaps" },
        { 1, 1, 3, VKIMG_U16, VKIMG_U16, "mipmaps" },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        vkimg_image in = ref_random_image(cs[i].w, cs[i].h, cs[i].c, cs[i].in, run_next_seed++);
        vkimg_image lv[MAXL];
        int n = run_levels(ctx, cs[i].text, &in, cs[i].out, lv, MAXL);
        if (n < 1) {
            ref_image_free(&in);
            continue;
        }
        vkimg_err e;
        memset(&e, 0, sizeof e);
        char tmpl[320], ktx[320];
        /* PNG holds u8/u16 levels; f32 levels go to .npy */
        snprintf(tmpl, sizeof tmpl, "%s/c%zu_{level}.%s", g_dir, i, cs[i].out == VKIMG_F32 ? "npy" : "png");
        snprintf(ktx, sizeof ktx, "%s/c%zu.ktx2", g_dir, i);
        int rc = vkimg_save_levels(tmpl, lv, n, NULL, &e);
        CHECK(rc == 0, "save_levels %s: %s", tmpl, e.msg);
        for (int k = 0; rc == 0 && k <= n; k++) {
            char *p = vkimg_level_path(tmpl, k);
            CHECK(p && (k < n) == (exists(p) != 0), "%s: %s", p ? p : "(null)", k < n ? "missing" : "one level too many");
            if (p && k < n && cs[i].out != VKIMG_F32) {
                vkimg_image back;
                memset(&back, 0, sizeof back);
                CHECK(vkimg_load(p, NULL, &back, &e) == 0 && same_image(&back, &lv[k]), "%s read back differs: %s", p,
                      e.msg);
                vkimg_image_free(&back);
            }
            free(p);
        }
        CHECK(count_temps(g_dir) == 0, "temporary files left in %s", g_dir);
        /* .ktx2: every level, read back as written */
        rc = vkimg_save_levels(ktx, lv, n, NULL, &e);
        CHECK(rc == 0, "save_levels %s: %s", ktx, e.msg);
        size_t len = 0;
        unsigned char *b = rc == 0 ? read_all(ktx, &len) : NULL;
        vkimg_image *kl = NULL;
        int nk = 0;
        vki_ktx2_info info;
        memset(&info, 0, sizeof info);
        rc = b ? vki_ktx2_decode(b, len, &kl, &nk, &info, &e) : -1;
        CHECK(rc == 0 && nk == n, "%s: decoded %d levels of %d: %s", ktx, nk, n, e.msg);
        for (int k = 0; rc == 0 && k < n && k < nk; k++)
            CHECK(same_image(&kl[k], &lv[k]), "%s level %d differs from vkimg_run_n's", ktx, k);
        CHECK(rc != 0 || info.transfer == 1, "%s: transfer function %d, want 1 (linear)", ktx, info.transfer);
        if (rc == 0)
            vki_ktx2_free_levels(kl, nk);
        free(b);
        free_levels(lv, n);
        ref_image_free(&in);
    }

    /* failures: level 1's directory is missing (level 0's was written, then
     * removed); no {level} and not .ktx2; nothing is left */
    {
        vkimg_image in = ref_random_image(8, 8, 3, VKIMG_U8, run_next_seed++);
        vkimg_image lv[MAXL];
        int n = run_levels(ctx, "mipmaps", &in, VKIMG_U8, lv, MAXL);
        if (n == 4) {
            char d0[300], tmpl[320], plain[320];
            snprintf(d0, sizeof d0, "%s/0", g_dir);
            mkdir(d0, 0755);
            snprintf(tmpl, sizeof tmpl, "%s/{level}/t.png", g_dir);
            vkimg_err e;
            memset(&e, 0, sizeof e);
            int rc = vkimg_save_levels(tmpl, lv, n, NULL, &e);
            char *p0 = vkimg_level_path(tmpl, 0);
            CHECK(rc != 0 && e.msg[0], "save_levels into a missing level directory: rc %d", rc);
            CHECK(p0 && !exists(p0), "%s left behind after the failed save", p0 ? p0 : "(null)");
            CHECK(count_temps(d0) == 0, "temporary files left in %s", d0);
            free(p0);
            snprintf(plain, sizeof plain, "%s/plain.png", g_dir);
            memset(&e, 0, sizeof e);
            rc = vkimg_save_levels(plain, lv, n, NULL, &e);
            CHECK(rc != 0 && e.code == VKIMG_E_USAGE && !exists(plain), "save_levels without {level}: rc %d '%s'", rc,
                  e.msg);
            char *np = vkimg_level_path(plain, 0);
            CHECK(np == NULL, "vkimg_level_path of a path without {level}");
            free(np);
            free_levels(lv, n);
        } else {
            CHECK(0, "8x8 has 4 levels, got %d", n);
        }
        ref_image_free(&in);
    }
    rm_rf(g_dir);
}

/* mipmaps.comp's INT8 path makes each level pixel of 8-bit data without alpha
 * as (a + b + c + d + 2) >> 2 of its 2 x 2 bytes, in place of its float path:
 * x = float(byte) * float(1/255) each, the rows' pairs added, then the rows,
 * times 1/4, then floor(clamp(m) * 255 + 0.5) (the multiply-add fused or not).
 * Both must give the same byte for every 2 x 2 of bytes. The float sum of a
 * pair takes few values for a given a + b: each is tried with each of the
 * other pair's. (Host arithmetic in IEEE single precision, as the device's.) */
/* clamp(v, 0, 1), as the shaders' quantization and unpremultiplying clamp */
static float clamp01(float v)
{
    return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

static void test_int8_rounding(vkimg_ctx *ctx)
{
    (void)ctx;
    static float tops[511][8];
    static int ntop[511];
    const float k = (float)(1.0 / 255.0);
    for (int a = 0; a < 256; a++)
        for (int b = 0; b < 256; b++) {
            volatile float xa = (float)a * k, xb = (float)b * k;
            volatile float t = xa + xb;
            int s = a + b, seen = 0;
            for (int i = 0; i < ntop[s]; i++)
                seen |= tops[s][i] == t;
            if (!seen && ntop[s] < 8)
                tops[s][ntop[s]++] = t;
        }
    long checked = 0, wrong = 0;
    for (int s1 = 0; s1 < 511; s1++)
        for (int s2 = 0; s2 < 511; s2++)
            for (int i = 0; i < ntop[s1]; i++)
                for (int j = 0; j < ntop[s2]; j++) {
                    volatile float sum = tops[s1][i] + tops[s2][j];
                    volatile float m = 0.25f * sum;
                    const float c = clamp01(m);
                    volatile float p = c * 255.0f;
                    volatile float y = p + 0.5f;
                    const int want = (s1 + s2 + 2) >> 2;
                    wrong += (int)floorf(y) != want || (int)floorf(fmaf(c, 255.0f, 0.5f)) != want;
                    checked++;
                }
    int most = 0;
    for (int s = 0; s < 511; s++)
        most = ntop[s] > most ? ntop[s] : most;
    CHECK(most < 8, "a pair's float sum took %d values or more for one a + b", most);
    CHECK(wrong == 0, "(a + b + c + d + 2) >> 2 differs from the float path's byte in %ld of %ld cases", wrong, checked);
    printf("  (a + b + c + d + 2) >> 2 is the float path's byte: %ld sums of pairs' sums checked\n", checked);
}

/* mipmaps.comp's INT8A path (8-bit with alpha): alpha (A + 2) >> 2, colour
 * floor((2C + A) / 2A) (C = sum of colour x alpha, A = sum of alpha), and the
 * float path wherever some colour's C / A is k + 1/2 exactly. Away from those
 * ties the float path must give the same bytes: checked here on 4 million
 * random 2 x 2 blocks (half with alphas of 0..3, where A is small and C / A
 * comes nearest a half without being one), for the float path with and without
 * its multiplies fused into the adds that follow them. */
static int float_alpha_byte(const unsigned char px[4][2], bool fused, bool alpha)
{
    const float k = (float)(1.0 / 255.0);
    float c[4], a[4];
    for (int e = 0; e < 4; e++) {
        volatile float cv = (float)px[e][0] * k, av = (float)px[e][1] * k;
        c[e] = cv;
        a[e] = av;
    }
    volatile float top, bottom, sum, sc, sa;
    if (fused) { /* c0 a0 + c1 a1 as fma(c0, a0, c1 a1) */
        volatile float p1 = c[1] * a[1], p3 = c[3] * a[3];
        top = fmaf(c[0], a[0], p1);
        bottom = fmaf(c[2], a[2], p3);
    } else {
        volatile float p0 = c[0] * a[0], p1 = c[1] * a[1], p2 = c[2] * a[2], p3 = c[3] * a[3];
        top = p0 + p1;
        bottom = p2 + p3;
    }
    sum = top + bottom;
    sc = 0.25f * sum;
    volatile float ta = a[0] + a[1], ba = a[2] + a[3], suma = ta + ba;
    sa = 0.25f * suma;
    const float al = clamp01(sa);
    const float v = clamp01(alpha ? al : al > 0.0f ? sc / al : 0.0f);
    volatile float y = v * 255.0f, y2 = y + 0.5f;
    return (int)floorf(fused ? fmaf(v, 255.0f, 0.5f) : y2);
}

static void test_int8a_rounding(vkimg_ctx *ctx)
{
    (void)ctx;
    uint64_t st = 0x9e3779b97f4a7c15ull;
    long checked = 0, ties = 0, wrong = 0;
    for (long n = 0; n < 4000000; n++) {
        unsigned char px[4][2];
        unsigned A = 0, C = 0;
        for (int e = 0; e < 4; e++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            px[e][0] = (unsigned char)st;
            px[e][1] = (unsigned char)(n % 2 ? (st >> 8) & 3u : st >> 8);
            A += px[e][1];
            C += (unsigned)px[e][0] * px[e][1];
        }
        int want = 0, want_a = (int)((A + 2) >> 2);
        if (A) {
            const unsigned num = 2 * C + A, den = 2 * A, q = num / den;
            if (q * den == num) {
                ties++;
                continue;
            }
            want = (int)q;
        }
        for (int f = 0; f < 2; f++)
            wrong += float_alpha_byte(px, f, false) != want || float_alpha_byte(px, f, true) != want_a;
        checked++;
    }
    CHECK(wrong == 0, "the integer premultiplied mean differs from the float path's in %ld of %ld blocks", wrong,
          checked);
    CHECK(ties > 0, "no block fell on a half: the sample does not reach the ties");
    printf("  the premultiplied mean in integers is the float path's: %ld blocks (%ld ties left to the float path)\n",
           checked, ties);
}

int main(void)
{
    static const gh_suite suites[] = {
        { "box", test_box }, { "filters", test_filters }, { "api", test_api }, { "save", test_save },
        { "int8", test_int8_rounding }, { "int8a", test_int8a_rounding },
    };
    run_next_seed = 11001;
    ref_alpha_weighted = true; /* colour / alpha is unbounded (negative lobes): ref.h */
    return gh_main("test_mipmaps", suites, sizeof suites / sizeof suites[0]);
}
