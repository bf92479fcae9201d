/* resize: to a size given by ImageMagick's geometry, with one of seven filters
 * (resample.h has the definition); the resampling that thumbnail and mipmaps use
 * too. Weight tables are made here in double precision, one row of T taps per
 * output position and axis, and read by shaders/ops/resize.comp. */
#include "ops/remap.h"
#include "ops/resample.h"
#include "pipeline/geometry.h"
#include "core/util.h"
#include "spv/resize.spv.h"
#include "spv/resize_strip.spv.h"
#include "spv/resize_strip_dp4.spv.h"
#include "spv/resize_lines.spv.h"
#include "spv/resize_vec.spv.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const vki_filter_names[] = { "lanczos3", "lanczos2", "mitchell", "catrom", "bilinear", "box", "nearest",
                                         NULL };

enum { O_SIZE, O_FILTER, O_LINEAR, O_FAST };

static const vki_opt resize_opts[] = {
    [O_SIZE] = { .name = "size", .type = VKI_OPT_TEXT, .placeholder = VKI_GEO_SYNTAX, .parse = vki_geo_parse,
                 .format = vki_geo_format,
                 .help = "ImageMagick geometry: WxH fits inside (aspect kept), WxH^ fills the box, WxH! exactly, "
                         "WxH> only shrinks, WxH< only enlarges, Wx or xH one side, N% a percentage" },
    [O_FILTER] = { .name = "filter", .type = VKI_OPT_ENUM, .def = VKI_FILTER_LANCZOS3, .choices = vki_filter_names,
                   .help = "lanczos3, lanczos2, mitchell (B = C = 1/3), catrom (B = 0, C = 1/2), bilinear, box, "
                           "nearest" },
    [O_LINEAR] = { .name = "linear", .type = VKI_OPT_BOOL, .def = 0,
                   .help = "resize in linear light (exact sRGB transfer functions); off as in vips, sharp and "
                           "ImageMagick" },
    [O_FAST] = { .name = "fast", .type = VKI_OPT_BOOL, .def = 1,
                 .help = "for reductions of 4x or more: a box pre-shrink by an integer factor first, so the cost "
                         "follows the output (false: the exact definition)" },
};

static int resize_size(int w, int h, const vki_args *a, int *ow, int *oh, char *why, size_t n)
{
    return vki_geo_resolve(a->x[O_SIZE], w, h, ow, oh, why, n);
}

/* ---- filters */

static double sinc(double x)
{
    if (fabs(x) < 1e-12)
        return 1.0;
    x *= M_PI;
    return sin(x) / x;
}

/* Mitchell-Netravali BC-splines. */
static double bc_spline(double t, double B, double C)
{
    t = fabs(t);
    if (t < 1)
        return ((12 - 9 * B - 6 * C) * t * t * t + (-18 + 12 * B + 6 * C) * t * t + (6 - 2 * B)) / 6;
    if (t < 2)
        return ((-B - 6 * C) * t * t * t + (6 * B + 30 * C) * t * t + (-12 * B - 48 * C) * t + (8 * B + 24 * C)) / 6;
    return 0;
}

static double support(vki_filter f)
{
    static const double a[] = { 3, 2, 2, 2, 1, 0.5, 0.5 };
    return a[f];
}

static double kernel(vki_filter f, double t)
{
    switch (f) {
    case VKI_FILTER_LANCZOS3: return fabs(t) < 3 ? sinc(t) * sinc(t / 3) : 0;
    case VKI_FILTER_LANCZOS2: return fabs(t) < 2 ? sinc(t) * sinc(t / 2) : 0;
    case VKI_FILTER_MITCHELL: return bc_spline(t, 1.0 / 3, 1.0 / 3);
    case VKI_FILTER_CATROM: return bc_spline(t, 0, 0.5);
    case VKI_FILTER_BILINEAR: return fabs(t) < 1 ? 1 - fabs(t) : 0;
    case VKI_FILTER_BOX:
    case VKI_FILTER_NEAREST: break;
    }
    return t >= -0.5 && t < 0.5 ? 1 : 0;
}

/* floor(s / 2) for factors of 4 and more, at most PRESHRINK_MAX: pass 0 loops
 * over a block's rows and columns in an invocation, and lavapipe ends all the
 * loops of an invocation after 65535 iterations in all (LP_MAX_TGSI_LOOP_ITERATIONS;
 * 5120x2880 -> thumbnail=8, blocks of 320 x 288, came out 30% dark); the passes
 * after it take the rest of the factor */
#define PRESHRINK_MAX 128

int vki_preshrink_factor(double s)
{
    const int k = s >= 4 ? (int)floor(s / 2) : 1;
    return k < PRESHRINK_MAX ? k : PRESHRINK_MAX;
}

void vki_resample_min_input(const vki_resample *rs, int w, int h, int out_w, int out_h, int *min_w, int *min_h)
{
    bool shrink_ok = rs->fast && !rs->linear && rs->filter != VKI_FILTER_NEAREST;
    *min_w = shrink_ok && out_w <= w / 2 ? 2 * out_w : w;
    *min_h = shrink_ok && out_h <= h / 2 ? 2 * out_h : h;
}

static void resize_min_input(int w, int h, const vki_args *a, int *min_w, int *min_h)
{
    int ow, oh;
    char why[8];
    const vki_resample rs = { .filter = (vki_filter)(int)a->v[O_FILTER],
                            .linear = a->v[O_LINEAR] != 0, .fast = a->v[O_FAST] != 0 };
    if (resize_size(w, h, a, &ow, &oh, why, sizeof why)) {
        *min_w = w;
        *min_h = h;
        return;
    }
    vki_resample_min_input(&rs, w, h, ow, oh, min_w, min_h);
}

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return a % b != 0 && a < 0 ? q - 1 : q;
}

#define STRIP_MAX_TAPS 24 /* the strip pass's weights (specialization constants WX0.., WY0..) */

/* A uniform table (integer factors): every output has the same weights and
 * its first tap `step` after the one before; taps, start: the nonzero weights
 * w[0 .. taps - 1] and where output 0's first one is. */
typedef struct axis_uniform {
    bool ok;
    int step, taps, start;
    float w[STRIP_MAX_TAPS];
} axis_uniform;

static void find_uniform(const float *w, const int32_t *st, int n_out, int T, axis_uniform *u)
{
    memset(u, 0, sizeof *u);
    if (n_out < 2 || st[1] <= st[0])
        return;
    const int step = st[1] - st[0];
    for (int i = 1; i < n_out; i++)
        if (st[i] != st[0] + (int64_t)i * step || memcmp(w + (size_t)i * T, w, (size_t)T * sizeof *w))
            return;
    int lo = 0, hi = T - 1;
    while (lo < hi && w[lo] == 0)
        lo++;
    while (hi > lo && w[hi] == 0)
        hi--;
    if (hi - lo + 1 > STRIP_MAX_TAPS)
        return;
    *u = (axis_uniform){ .ok = true, .step = step, .taps = hi - lo + 1, .start = st[0] + lo };
    memcpy(u->w, w + lo, (size_t)u->taps * sizeof *w);
}

/* An axis's table on the host (axis_build), then on the device (axis_upload)
 * where a path reads it: the strip pass takes its weights as constants. */
typedef struct axis_tab {
    float *w;    /* n_out x T */
    int32_t *st; /* n_out */
    int n_out, T, reach;
    axis_uniform u;
} axis_tab;

static void axis_free(axis_tab *t)
{
    free(t->w);
    free(t->st);
    t->w = NULL;
    t->st = NULL;
}

/* The weight table of one axis, n_in -> n_out, into tab: st[i] and T weights
 * per output (zeros past its taps), as floats, normalized in double; reach: the
 * most input positions a run of `tile` consecutive outputs reaches; u: the table
 * as one uniform row where it is one (integer factors). Where the
 * definition has exact boundaries (nearest's floor((i + 0.5) s), box's
 * [-0.5, 0.5)) they are decided in integers: 2 n_out (j - c) = 2 j n_out -
 * (2 i + 1) n_in + n_out exactly, where the double c and s can land on either
 * side (box 257 -> 18 has a tap at exactly t = 0.5, nearest 30 -> 11 a j of
 * exactly 15). */
static int axis_build(vki_rec *r, vki_filter f, int n_in, int n_out, int tile, axis_tab *tab)
{
    double s = (double)n_in / n_out, fs = s > 1 ? s : 1, a = support(f) * fs;
    int T = f == VKI_FILTER_NEAREST ? 1 : (int)ceil(2 * a) + 1;
    size_t nw = (size_t)n_out * (size_t)T;
    float *w = calloc(nw, sizeof *w);
    int32_t *st = malloc((size_t)n_out * sizeof *st);
    double *d = malloc((size_t)T * sizeof *d);
    *tab = (axis_tab){ .w = w, .st = st, .n_out = n_out, .T = T };
    if (!w || !st || !d) {
        free(d);
        axis_free(tab);
        return vki_fail(r->e, VKIMG_E_RUNTIME, "resize: out of memory for the weights (%d taps x %d)", T, n_out);
    }
    const int64_t ni = n_in, no = n_out;
    for (int i = 0; i < n_out; i++) {
        int64_t k = (2 * (int64_t)i + 1) * ni - no; /* 2 n_out c */
        if (f == VKI_FILTER_NEAREST) {
            st[i] = (int32_t)floor_div(k + no, 2 * no);
            w[i] = 1;
            continue;
        }
        if (f == VKI_FILTER_BOX) { /* -1/2 <= (j - c) / fs < 1/2: 2 n_out (j - c) in [-h, h) */
            int64_t half = ni > no ? ni : no;
            int64_t j0 = -floor_div(half - k, 2 * no), j1 = floor_div(k + half - 1, 2 * no);
            int n = (int)(j1 - j0 + 1) < T ? (int)(j1 - j0 + 1) : T;
            st[i] = (int32_t)j0;
            for (int t = 0; t < n; t++)
                w[(size_t)i * T + t] = (float)(1.0 / n);
            continue;
        }
        double c = (i + 0.5) * s - 0.5;
        int j0 = (int)ceil(c - a), j1 = (int)floor(c + a), n = 0;
        double sum = 0;
        for (int j = j0; j <= j1 && n < T; j++, n++)
            sum += d[n] = kernel(f, (j - c) / fs);
        st[i] = j0;
        for (int t = 0; t < n; t++)
            w[(size_t)i * T + t] = (float)(d[t] / sum);
    }
    for (int i = 0; i < n_out; i += tile) {
        int last = i + tile - 1 < n_out ? i + tile - 1 : n_out - 1;
        if (st[last] + T - st[i] > tab->reach)
            tab->reach = st[last] + T - st[i];
    }
    find_uniform(w, st, n_out, T, &tab->u);
    free(d);
    return 0;
}

static int axis_upload(vki_rec *r, const axis_tab *t, VkDeviceAddress *wts, VkDeviceAddress *starts)
{
    int rc = vki_rec_const(r, t->w, (size_t)t->n_out * (size_t)t->T * sizeof *t->w, "resize weights", wts);
    return rc ? rc : vki_rec_const(r, t->st, (size_t)t->n_out * sizeof *t->st, "resize positions", starts);
}

typedef struct resize_push {
    vki_addr src, dst, wts, starts;
    uint32_t in_w, in_h, out_w, out_h;
    uint32_t kx, ky;
    vki_addr wts_y, starts_y;
    uint32_t pitch;
} resize_push;

#define FUSED_TW 32 /* the fused pass's output tile */
#define FUSED_TH 16
#define ROWS_TW 64  /* the rows pass's outputs per workgroup */
#define SMALL_OUT_PX (256 * 256) /* outputs this small take the fused path on GPUs */

/* How the resampling is recorded:
 *   STRIP   the strip pass (both axes and the pre-shrink in one dispatch, below)
 *           where it fits: GPUs, 8-bit input, integer factors
 *   LINES   its CPU devices' shape (below) where it fits: CPU devices, the same cases
 *   ROWS    pass 4 (the pre-shrink folded into the horizontal pass, through shared
 *           memory) then pass 2: GPUs otherwise (on the H100 8K -> 1/4 Lanczos3 took
 *           0.24 ms as passes 0-1-2 with f32 between them, 0.32 ms fused)
 *   VEC     passes 5 and 6, the CPU devices' shapes of 1 and 2 (wide loads, below):
 *           CPU devices otherwise, for 8-bit input without a pre-shrink
 *   PASSES  pass 0 (pre-shrink), 1, 2: CPU devices (lavapipe) otherwise
 *   FUSED   pass 0, then 3 (both axes in one dispatch): small outputs on GPUs
 * VKIMG_RESIZE_PATH=strip|lines|vec|rows|passes|fused overrides (tests, comparisons); a path
 * whose shared memory does not fit falls back to PASSES (strip: to the device's
 * default). */
typedef enum { PATH_PASSES, PATH_FUSED, PATH_ROWS, PATH_STRIP, PATH_LINES, PATH_VEC } resize_path;

static resize_path pick_path(const vki_gpu *g, bool strip_fits, bool lines_fits)
{
    const bool cpu = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    const char *ev = getenv("VKIMG_RESIZE_PATH"), *fev = getenv("VKIMG_RESIZE_FUSED");
    resize_path p = cpu ? PATH_LINES : PATH_STRIP;
    if (ev && !strcmp(ev, "strip"))
        p = PATH_STRIP;
    else if (ev && !strcmp(ev, "lines"))
        p = PATH_LINES;
    else if (ev && !strcmp(ev, "vec"))
        p = PATH_VEC;
    else if (ev && !strcmp(ev, "rows"))
        p = PATH_ROWS;
    else if (ev && !strcmp(ev, "passes"))
        p = PATH_PASSES;
    else if (ev && !strcmp(ev, "fused"))
        p = PATH_FUSED;
    else if (fev && *fev) /* the older switch: 1 fused, 0 passes */
        p = *fev != '0' ? PATH_FUSED : PATH_PASSES;
    if ((p == PATH_STRIP && !strip_fits) || (p == PATH_LINES && !lines_fits))
        p = cpu ? PATH_VEC : PATH_ROWS;
    return p;
}

static bool fits_shared(const vki_gpu *g, uint64_t floats)
{
    return floats * 4 <= g->lim.max_shared;
}

static int pass(vki_rec *r, const vki_step *s, const vki_resample *rs, int p, bool pre, uint32_t taps, uint32_t ty,
                uint32_t srows, bool tmp16, const resize_push *pc, uint32_t nx, uint32_t ny)
{
    vki_spec spec = { 0 };
    uint32_t wy = r->gpu->lim.max_wg_invocations / 16 < 16 ? r->gpu->lim.max_wg_invocations / 16 : 16;
    vki_step_spec(s, &spec, p == 4 ? ROWS_TW : 16, p == 4 ? 1 : wy, 1);
    vki_spec_named(&spec, "PASS", (uint32_t)p);
    vki_spec_named(&spec, "LINEAR", rs->linear);
    vki_spec_named(&spec, "PRE", pre);
    vki_spec_named(&spec, "T", taps);
    vki_spec_named(&spec, "TMP16", tmp16);
    static const char *const names[] = { "resize-preshrink", "resize-h", "resize-v", "resize", "resize-h" };
    if (p == 4) {
        vki_spec_named(&spec, "TW", ROWS_TW);
        vki_spec_named(&spec, "SROWS", srows);
        return vki_rec_dispatch(r, names[p], VKI_SPV(resize), &spec, pc, sizeof *pc, (nx + ROWS_TW - 1) / ROWS_TW,
                                ny, 1);
    }
    if (p == 3) {
        vki_spec_named(&spec, "TY", ty);
        vki_spec_named(&spec, "TW", FUSED_TW);
        vki_spec_named(&spec, "TH", FUSED_TH);
        vki_spec_named(&spec, "SROWS", srows);
        return vki_rec_dispatch(r, names[p], VKI_SPV(resize), &spec, pc, sizeof *pc, (nx + FUSED_TW - 1) / FUSED_TW,
                                (ny + FUSED_TH - 1) / FUSED_TH, 1);
    }
    return vki_rec_dispatch(r, names[p], VKI_SPV(resize), &spec, pc, sizeof *pc, (nx + 15) / 16, (ny + wy - 1) / wy, 1);
}

/* ---- passes 5 and 6 (the VEC path): CPU devices' shapes of passes 1 and 2 */

#define VEC_MAX_TAPS 32 /* horizontal taps (pass 5 unrolls them) */
#define VEC_WG 64       /* invocations a workgroup */
#define VEC_HR 16       /* pass 5: input rows an invocation (its weights read once) */

/* Whether passes 5 and 6 can make this resampling: 8-bit input, 16-byte
 * aligned, no pre-shrink, at most VEC_MAX_TAPS horizontal taps and no more
 * than the input's width (pass 5's windows lie inside its rows), at least 8
 * output columns (pass 6's runs). */
static bool vec_fits(const vki_step *s, int kx, int ky, int tx)
{
    return s->in_fmt == VKIMG_U8 && s->in % 16 == 0 && kx == 1 && ky == 1 && tx <= VEC_MAX_TAPS && tx <= s->w &&
           s->out_w >= 8;
}

/* A table as passes 5 and 6 read it: its rows padded to TP = T rounded up to 4
 * taps (zero weights). Vertical: a row an output. Horizontal (`h`): a row a
 * column of the intermediate (n, a multiple of 8), in runs of 8 the row's last
 * run the last 8 outputs (pass 6 reads a run and writes 8 outputs), and the
 * taps of an output that leave the input's n_in positions added to its edge
 * one (the same sum as clamping them, in double), its start moved into
 * 0 .. n_in - T (pass 5 does not clamp). */
static int vec_upload(vki_rec *r, const axis_tab *t, int n, int n_in, bool h, VkDeviceAddress *wts,
                      VkDeviceAddress *starts)
{
    const int tp = (t->T + 3) / 4 * 4;
    float *w = calloc((size_t)n * (size_t)tp, sizeof *w);
    int32_t *st = malloc((size_t)n * sizeof *st);
    double *d = calloc((size_t)tp, sizeof *d);
    int rc = 0;
    if (!w || !st || !d)
        rc = vki_fail(r->e, VKIMG_E_RUNTIME, "resize: out of memory for the weights (%d taps x %d)", tp, n);
    for (int i = 0; !rc && i < n; i++) {
        int k = i; /* the output of row i */
        if (h)
            k = (i / 8 * 8 < t->n_out - 8 ? i / 8 * 8 : t->n_out - 8) + i % 8;
        const float *src = t->w + (size_t)k * t->T;
        int s0 = t->st[k];
        if (h && (s0 < 0 || s0 + t->T > n_in)) {
            const int s1 = s0 < 0 ? 0 : n_in - t->T;
            memset(d, 0, (size_t)tp * sizeof *d);
            for (int j = 0; j < t->T; j++) {
                const int x = s0 + j < 0 ? 0 : s0 + j >= n_in ? n_in - 1 : s0 + j;
                d[x - s1] += src[j];
            }
            for (int j = 0; j < t->T; j++)
                w[(size_t)i * tp + j] = (float)d[j];
            s0 = s1;
        } else {
            memcpy(w + (size_t)i * tp, src, (size_t)t->T * sizeof *w);
        }
        st[i] = s0;
    }
    free(d);
    rc = rc ? rc : vki_rec_const(r, w, (size_t)n * (size_t)tp * sizeof *w, "resize weights", wts);
    rc = rc ? rc : vki_rec_const(r, st, (size_t)n * sizeof *st, "resize positions", starts);
    free(w);
    free(st);
    return rc;
}

/* Pass 8 makes VSLIDE_M output rows an invocation (a column's last block its
 * last VSLIDE_M), reading the rows their taps reach once: *ru rows from each
 * block's first tap (the most any block needs), with a dense table of
 * weights, VSLIDE_M a row (0 where the row is not one of that output's taps;
 * 16 bytes a row: one texel of the intermediate's texel source, whose buffer
 * it follows). Nothing in it depends on the factor but the table, so a batch
 * of photos of many sizes creates one pipeline. Where blocks need fewer rows
 * than their outputs' taps together, and VKIMG_RESIZE_SLIDE is not 0 (*ru 0:
 * pass 6). */
#define VSLIDE_M 4
static bool slide_off(void)
{
    const char *ev = getenv("VKIMG_RESIZE_SLIDE");
    return ev && *ev == '0';
}

/* Block b's first output row: b VSLIDE_M, the last block's the last VSLIDE_M rows of n. */
static int vslide_row0(int b, int n)
{
    return b * VSLIDE_M < n - VSLIDE_M ? b * VSLIDE_M : n - VSLIDE_M;
}

static int vslide_upload(vki_rec *r, const axis_tab *ay, int *ru, VkDeviceAddress *wts, VkDeviceAddress *starts)
{
    const int n = ay->n_out, blocks = (n + VSLIDE_M - 1) / VSLIDE_M, T = ay->T;
    *ru = 0;
    if (slide_off() || n < VSLIDE_M)
        return 0;
    for (int b = 0; b < blocks; b++) {
        const int y0 = vslide_row0(b, n);
        for (int m = 1; m < VSLIDE_M; m++)
            if (ay->st[y0 + m] < ay->st[y0 + m - 1])
                return 0;
        const int need = ay->st[y0 + VSLIDE_M - 1] + T - ay->st[y0];
        *ru = need > *ru ? need : *ru;
    }
    if (*ru >= VSLIDE_M * T) {
        *ru = 0;
        return 0;
    }
    float *w = calloc((size_t)blocks * (size_t)*ru * VSLIDE_M, sizeof *w);
    int32_t *st = malloc((size_t)blocks * sizeof *st);
    int rc = 0;
    if (!w || !st)
        rc = vki_fail(r->e, VKIMG_E_RUNTIME, "resize: out of memory for the weights (%d rows x %d)", *ru, blocks);
    for (int b = 0; !rc && b < blocks; b++) {
        const int y0 = vslide_row0(b, n);
        st[b] = ay->st[y0];
        for (int m = 0; m < VSLIDE_M; m++)
            for (int t = 0; t < T; t++)
                w[((size_t)b * (size_t)*ru + (size_t)(ay->st[y0 + m] - st[b] + t)) * VSLIDE_M + (size_t)m] =
                    ay->w[(size_t)(y0 + m) * (size_t)T + (size_t)t];
    }
    rc = rc ? rc : vki_rec_const(r, w, (size_t)blocks * (size_t)*ru * VSLIDE_M * sizeof *w, "resize weights", wts);
    rc = rc ? rc : vki_rec_const(r, st, (size_t)blocks * sizeof *st, "resize positions", starts);
    free(w);
    free(st);
    return rc;
}

static int record_vec(vki_rec *r, const vki_step *s, const vki_resample *rs, const axis_tab *ax, const axis_tab *ay,
                      bool tmp16)
{
    const int c = s->in_c, ow = s->out_w, oh = s->out_h, pitch = (ow + 7) / 8 * 8;
    VkDeviceAddress tmp, wx, sx, wy = 0, sy = 0, wd = 0, sd = 0;
    int ru = 0; /* pass 8's rows a block (0: pass 6) */
    int rc = vec_upload(r, ax, pitch, s->w, true, &wx, &sx);
    rc = rc ? rc : vslide_upload(r, ay, &ru, &wd, &sd);
    rc = rc || ru ? rc : vec_upload(r, ay, oh, s->h, false, &wy, &sy);
    /* pass 8's weights after the intermediate, in its buffer: read through the same texel source */
    const VkDeviceSize tmp_bytes = (VkDeviceSize)pitch * (VkDeviceSize)s->h * (VkDeviceSize)c * (tmp16 ? 2 : 4),
                       wd_bytes = ru ? (VkDeviceSize)((oh + VSLIDE_M - 1) / VSLIDE_M) * (VkDeviceSize)ru * VSLIDE_M * 4 : 0;
    rc = rc ? rc : vki_rec_scratch(r, tmp_bytes + wd_bytes, "resize intermediate", &tmp);
    rc = rc ? rc : vki_rec_copy(r, wd, tmp + tmp_bytes, wd_bytes, "resize weights");
    if (rc)
        return rc;
    for (int k = 0; k < 2; k++) { /* horizontal: pass 5; vertical: 6 or 8 */
        const bool h = k == 0;
        const int p = h ? 5 : ru ? 8 : 6;
        vki_spec spec = { 0 };
        vki_step_spec(s, &spec, VEC_WG, 1, 1);
        vki_spec_named(&spec, "PASS", (uint32_t)p);
        vki_spec_named(&spec, "LINEAR", rs->linear);
        vki_spec_named(&spec, "T", (uint32_t)(h ? ax->T : p == 6 ? ay->T : 1));
        vki_spec_named(&spec, "TMP16", tmp16);
        vki_spec_named(&spec, "HR", VEC_HR);
        if (p == 8)
            vki_spec_named(&spec, "VM", VSLIDE_M);
        resize_push pc = { vki_addr_of(h ? s->in : tmp), vki_addr_of(h ? tmp : s->out),
                           vki_addr_of(h ? wx : p == 6 ? wy : 0), vki_addr_of(h ? sx : p == 6 ? sy : sd),
                           (uint32_t)s->w, (uint32_t)s->h, (uint32_t)ow, (uint32_t)oh, (uint32_t)ru,
                           (uint32_t)(tmp_bytes / 16), { 0, 0 }, { 0, 0 }, (uint32_t)pitch };
        const uint64_t items = h ? (uint64_t)(pitch / 4) * (uint64_t)((s->h + VEC_HR - 1) / VEC_HR)
                                 : (uint64_t)(pitch / 8) * (uint64_t)(ru ? (oh + VSLIDE_M - 1) / VSLIDE_M : oh);
        vki_spec_named(&spec, "TEXEL", h ? vki_rec_texel_src(r, s->in) : vki_rec_texel_src_n(r, tmp, 16));
        if ((rc = vki_rec_dispatch_1d(r, p == 5 ? "resize-h-vec" : p == 6 ? "resize-v-vec" : "resize-v-slide",
                                      VKI_SPV(resize_vec), &spec, &pc, sizeof pc,
                                      (items + VEC_WG - 1) / VEC_WG)))
            return rc;
    }
    return 0;
}

/* ---- the strip pass (resize_strip.spv: shaders/ops/resize.comp, STRIP) */

#define STRIP_NT 128        /* invocations a workgroup */
#define STRIP_WGS 512       /* workgroups the automatic strip height aims at */
/* accumulators (U x G x channels) and words in flight an invocation, at most: RGB at 2:1 with 12
 * taps (Lanczos3, no pre-shrink: 72 + 6) fits; more spills (8K RGB8 -> 50% on the H100: 0.499 ms
 * by the rows path, 0.194 ms by this pass; 8K -> 25% exact, 24 taps, at 100: 0.92 ms against 0.46) */
#define STRIP_MAX_REGS 80
#define STRIP_SHARED_256 10752 /* shared memory a workgroup of 256 invocations (bytes, strip_fits) */

typedef struct strip_plan {
    int kx, ky, g, words, ty, u, q4, ow, rows, nt, ny;
    bool pref; /* the next step's words loaded ahead */
    bool hw;   /* RGB whose blocks are 2 mod 4 bytes wide: a column an invocation, from a word or half a word in */
    int cspad; /* words between one channel's planes in shared memory and the next's */
    int qoff;  /* every workgroup's first tap column mod q4 where they all have the same, else -1 */
    int rwc;   /* input words a row as a constant (the inner strips' loads at constant offsets), else 0 */
    bool dp4;  /* HW: block sums by 4x8-bit dot products */
    axis_uniform x, y;
} strip_plan;

typedef struct strip_push {
    vki_addr src, dst;
    uint32_t in_w, in_h, out_w, out_h, pw, ph;
    int32_t qx, qy;
} strip_push;

/* The cases of the strip and lines passes: 8-bit input whose rows are whole
 * 32-bit words, uniform tables on both axes (integer factors) over whole
 * blocks, not in linear light. */
static bool uniform_fits(const vki_step *s, const vki_resample *rs, int kx, int ky, const axis_uniform *ux,
                         const axis_uniform *uy)
{
    return s->in_fmt == VKIMG_U8 && !rs->linear && ((int64_t)s->w * s->in_c) % 4 == 0 && ux->ok && uy->ok &&
           s->w % kx == 0 && s->h % ky == 0;
}

/* The vertical taps padded to a multiple of the step (TY of both passes). */
static int padded_taps(const axis_uniform *uy)
{
    return (uy->taps + uy->step - 1) / uy->step * uy->step;
}

/* Whether the strip pass can make this resampling (uniform_fits), and its shape. VKIMG_RESIZE_STRIP=NTxR sets
 * the workgroup's invocations and output rows, VKIMG_RESIZE_STRIP_PREF=0 turns
 * the loads a step ahead off (benchmarks). */
static bool strip_fits(const vki_gpu *gpu, const vki_step *s, const vki_resample *rs, int kx, int ky,
                       const axis_uniform *ux, const axis_uniform *uy, strip_plan *p)
{
    const int c = s->in_c;
    if (!uniform_fits(s, rs, kx, ky, ux, uy))
        return false;
    /* RGBA: 256 invocations (on the H100, 8K -> 25%: 0.080 ms against 0.085 with
     * 128; RGB, gray and gray + alpha were as fast or faster with 128). RGB whose
     * blocks are 2 mod 4 bytes wide (KX 2): one column an invocation (HW) and 256
     * invocations instead of two columns (a word and a half) and 128: half the
     * registers (8K RGB8 -> 25%: 0.082 -> 0.075 ms). VKIMG_RESIZE_STRIP_HW=0: the
     * two columns (benchmarks; the same sums, the same bytes). */
    const bool hw = c == 3 && (kx * c) % 4 == 2 && vki_env_long("VKIMG_RESIZE_STRIP_HW", 1, 0, 1);
    *p = (strip_plan){ .kx = kx, .ky = ky, .x = *ux, .y = *uy, .nt = c == 4 || hw ? 2 * STRIP_NT : STRIP_NT, .hw = hw };
    p->ty = padded_taps(uy);
    p->u = p->ty / uy->step;
    /* the columns whose input starts on a word: multiples of q4 */
    p->q4 = (kx * c) % 4 == 0 ? 1 : (kx * c) % 2 == 0 ? 2 : 4;
    if (hw) { /* (2 + kx * c bytes: whole words) */
        p->g = 1;
        p->words = (2 + kx * c) / 4;
    } else {
        p->g = p->q4;
        while ((p->g + p->q4) * c <= 6)
            p->g += p->q4;
        p->words = p->g * kx * c / 4;
    }
    const int nw = uy->step * ky * p->words; /* words a step */
    const long max_regs = vki_env_long("VKIMG_RESIZE_STRIP_MAX_REGS", STRIP_MAX_REGS, 8, 256); /* (benchmarks) */
    p->pref = 2 * nw + p->u * p->g * c <= max_regs && vki_env_long("VKIMG_RESIZE_STRIP_PREF", 1, 0, 1);
    if (p->ty > STRIP_MAX_TAPS || nw + p->u * p->g * c > max_regs)
        return false;
    const uint32_t max_nt = gpu->lim.max_wg_invocations < gpu->lim.max_wg_size[0] ? gpu->lim.max_wg_invocations
                                                                                 : gpu->lim.max_wg_size[0];
    unsigned nt = 0, rows = 0;
    const char *ev = getenv("VKIMG_RESIZE_STRIP");
    const bool shaped = ev && sscanf(ev, "%ux%u", &nt, &rows) == 2 && nt >= 32 && nt <= max_nt;
    if (shaped)
        p->nt = (int)nt;
    else
        rows = 0;
    if ((uint32_t)p->nt > max_nt)
        p->nt = (int)max_nt;
    p->ow = (p->nt * p->g - (p->q4 - 1) - ux->taps) / ux->step + 1;
    /* resize.comp's hb: two buffers of IN_C channels of SX planes of PL floats and cspad more */
    const uint64_t pl = ((uint64_t)p->nt * (uint64_t)p->g + (uint64_t)ux->step - 1) / (uint64_t)ux->step;
    const uint64_t planes = (uint64_t)ux->step * ((pl + 31) / 32 * 32 + 16);
    /* Workgroups of 256 (RGB with HW, RGBA): hb padded to STRIP_SHARED_256 bytes. On the H100
     * the pass's speed follows the shared memory a workgroup declares, used or not (presumably
     * the driver's split of each SM's memory between shared memory and the L1 cache, of which
     * Vulkan has no other say): 8K -> 25%, median ms of two rounds over the words added between
     * channels (VKIMG_RESIZE_STRIP_CSPAD), took RGB 0.0755 with none (6.75 KiB a workgroup),
     * 0.0729 at 7 KiB, 0.0714-0.0722 from 9.6 to 11.4 KiB, 0.094 from 12 KiB; RGBA 0.0805 with
     * none (9 KiB), 0.0785-0.079 from 9.6 to 11.5 KiB, 0.108 from 12.7 KiB. Workgroups of 128
     * were no faster padded (RGB at 2:1: slower), so they are not. The same sums, the same bytes. */
    if (p->nt == 2 * STRIP_NT) {
        const uint64_t want = STRIP_SHARED_256 / 4 / (2 * (uint64_t)c);
        p->cspad = want > planes ? (int)(want - planes) : 0;
    }
    p->cspad = (int)vki_env_long("VKIMG_RESIZE_STRIP_CSPAD", p->cspad, 0, 8192); /* (benchmarks) */
    const uint64_t word_bytes = 2ull * (uint64_t)c * 4; /* hb's bytes a word of a channel's planes */
    if (word_bytes * (planes + (uint64_t)p->cspad) > gpu->lim.max_shared)
        p->cspad = 0; /* (no padding where the device has less) */
    if (p->ow < 1 || word_bytes * planes > gpu->lim.max_shared)
        return false;
    /* RGB: every workgroup's first tap column (qx + x * OW * SX) the same mod Q4 where OW * SX is
     * a multiple of it: that offset as a constant, and with it each horizontal tap's place in
     * shared memory (H100, 8K -> 25%: 0.0722 -> 0.0677 ms; gray was 3% slower with it, RGBA's
     * Q4 is 1: known anyway). VKIMG_RESIZE_STRIP_QOFF=0: found per workgroup, =2: also gray's. */
    const long qenv = vki_env_long("VKIMG_RESIZE_STRIP_QOFF", 1, 0, 2);
    const bool known = (p->ow * ux->step) % p->q4 == 0 && (qenv == 2 || (qenv == 1 && c == 3));
    p->qoff = known ? ((ux->start % p->q4) + p->q4) % p->q4 : -1;
    /* RGB: the input's words a row as a constant (a pipeline an input width, as the weights are
     * one a scale): the strips whose rows are all inside the image load each word at a constant
     * offset from one address a step, not from a clamped row times the push constant's width
     * (H100, 8K -> 25%: 0.0675-0.0679 -> 0.0665-0.0669 ms; RGBA was 1-3% slower with it, gray
     * and gray + alpha the same within the runs' spread). VKIMG_RESIZE_STRIP_RWC=0: off, =2: every
     * channel count (benchmarks). */
    const int64_t rw = (int64_t)s->w * c / 4;
    const long renv = vki_env_long("VKIMG_RESIZE_STRIP_RWC", 1, 0, 2);
    p->rwc = (renv == 2 || (renv == 1 && c == 3)) && rw * uy->step * ky <= INT32_MAX ? (int)rw : 0; /* (offsets: int) */
    const int64_t cols = (s->out_w + p->ow - 1) / p->ow; /* workgroups across */
    if (!rows) /* about STRIP_WGS workgroups: rows two strips share are read twice */
        rows = (unsigned)((s->out_h * cols + STRIP_WGS - 1) / STRIP_WGS);
    /* HW: a channel's block sums as dot products of the input words with byte masks (the device's
     * packed 4 x 8-bit dot product: resize_strip_dp4.spv; H100, 8K RGB8 -> 25%: 0.0663-0.0667 ->
     * 0.0648-0.0652 ms, the same bytes) where the driver calls it accelerated; the saturating form
     * (OpUDotAccSat) was slower: 0.090 ms. VKIMG_RESIZE_STRIP_DP4=0: the 16-bit lanes' sums, =2:
     * dot products wherever the extension is on (tests). */
    const long denv = vki_env_long("VKIMG_RESIZE_STRIP_DP4", 1, 0, 2);
    p->dp4 = hw && gpu->dot4 && (denv == 2 || (denv == 1 && gpu->dot4_fast));
    p->rows = ((int)rows + p->u - 1) / p->u * p->u;
    if (p->rows < p->u)
        p->rows = p->u;
    if (p->rows > 6 * p->u && !shaped)
        p->rows = 6 * p->u;
    /* Where the device tells its multiprocessors (S): about STRIP_WGS workgroups, rounded to a
     * multiple of S, and the rows shared out evenly among the strips (NYS) rather than R rows a
     * strip. The strips' chains of steps, not the SMs' throughput, set the time: on the H100
     * (132 SMs), 8K RGB8 -> 25% in 480 workgroups of 36 rows put 4 on 84 SMs and 3 on 48, which
     * finished about 9% sooner (the workgroups' clocks, read in a diagnostic build); 528 of
     * 32-33 rows: 0.0655 -> 0.0620 ms. VKIMG_RESIZE_STRIP_NY=N: N strips, 0: R rows a strip
     * (benchmarks). */
    const uint32_t sms = gpu->lim.multiprocessors;
    long ny = 0;
    if (sms && !shaped) {
        int64_t k = (STRIP_WGS + sms / 2) / sms; /* workgroups an SM */
        if (k < 1)
            k = 1;
        const int64_t n0 = cols * ((s->out_h + p->rows - 1) / p->rows);
        if (n0 <= k * sms) /* (not where R rows a strip make more: RGB -> 50% 0.193 -> 0.225 ms) */
            ny = (long)(k * sms / cols);
    }
    ny = vki_env_long("VKIMG_RESIZE_STRIP_NY", ny, 0, s->out_h);
    if (ny > s->out_h / p->u) /* (strips of at least U rows) */
        ny = s->out_h / p->u;
    p->ny = (int)ny;
    /* (the loads at constant offsets, RWC above, gained only with R rows a strip: with the rows
     * shared out they took 0.0619-0.0622 ms against 0.0611-0.0616 without, H100, 8K RGB8 -> 25%) */
    if (p->ny && renv == 1)
        p->rwc = 0;
    return true;
}

/* The specialization constants resize.comp's strip and lines variants share:
 * the pre-shrink, the uniform tables (steps, taps, the weights as WX0.. and
 * WY0..; ty: the vertical taps padded, padded_taps) and the output rows an
 * invocation or workgroup. */
static void spec_uniform(vki_spec *spec, int kx, int ky, const axis_uniform *x, const axis_uniform *y, int ty,
                         int rows)
{
    static const char *const wx[STRIP_MAX_TAPS] = {
        "WX0", "WX1", "WX2", "WX3", "WX4", "WX5", "WX6", "WX7", "WX8", "WX9", "WX10", "WX11",
        "WX12", "WX13", "WX14", "WX15", "WX16", "WX17", "WX18", "WX19", "WX20", "WX21", "WX22", "WX23",
    };
    static const char *const wy[STRIP_MAX_TAPS] = {
        "WY0", "WY1", "WY2", "WY3", "WY4", "WY5", "WY6", "WY7", "WY8", "WY9", "WY10", "WY11",
        "WY12", "WY13", "WY14", "WY15", "WY16", "WY17", "WY18", "WY19", "WY20", "WY21", "WY22", "WY23",
    };
    vki_spec_named(spec, "KX", (uint32_t)kx);
    vki_spec_named(spec, "KY", (uint32_t)ky);
    vki_spec_named(spec, "SX", (uint32_t)x->step);
    vki_spec_named(spec, "SY", (uint32_t)y->step);
    vki_spec_named(spec, "TX", (uint32_t)x->taps);
    vki_spec_named(spec, "TY", (uint32_t)ty);
    vki_spec_named(spec, "R", (uint32_t)rows);
    for (int i = 0; i < x->taps; i++)
        vki_spec_namedf(spec, wx[i], x->w[i]);
    for (int i = 0; i < y->taps; i++)
        vki_spec_namedf(spec, wy[i], y->w[i]);
}

static int record_strip(vki_rec *r, const vki_step *s, const strip_plan *p, int pw, int ph)
{
    vki_spec spec = { 0 };
    vki_step_spec(s, &spec, (uint32_t)p->nt, 1, 1);
    spec_uniform(&spec, p->kx, p->ky, &p->x, &p->y, p->ty, p->rows);
    vki_spec_named(&spec, "G", (uint32_t)p->g);
    vki_spec_named(&spec, "WORDS", (uint32_t)p->words);
    vki_spec_named(&spec, "OW", (uint32_t)p->ow);
    vki_spec_named(&spec, "Q4", (uint32_t)p->q4);
    vki_spec_named(&spec, "PREF", p->pref);
    vki_spec_named(&spec, "HW", p->hw);
    vki_spec_named(&spec, "CSPAD", (uint32_t)p->cspad);
    vki_spec_named(&spec, "QOFF", (uint32_t)p->qoff); /* (-1: found per workgroup) */
    vki_spec_named(&spec, "RWC", (uint32_t)p->rwc);
    vki_spec_named(&spec, "NYS", (uint32_t)p->ny);
    if (p->dp4 && !r->dry)
        vki_gpu_log(r->gpu, VKIMG_LOG_DEBUG, "resize-strip: block sums by 4x8-bit dot products");
    strip_push pc = { vki_addr_of(s->in), vki_addr_of(s->out), (uint32_t)s->w, (uint32_t)s->h, (uint32_t)s->out_w,
                      (uint32_t)s->out_h, (uint32_t)pw, (uint32_t)ph, p->x.start, p->y.start };
    return vki_rec_dispatch(r, "resize-strip", p->dp4 ? vki_spv_resize_strip_dp4 : vki_spv_resize_strip,
                            p->dp4 ? sizeof vki_spv_resize_strip_dp4 : sizeof vki_spv_resize_strip, &spec, &pc, sizeof pc,
                            (uint32_t)((s->out_w + p->ow - 1) / p->ow), p->ny ? (uint32_t)p->ny : (uint32_t)((s->out_h + p->rows - 1) / p->rows),
                            1);
}

/* ---- the lines pass (resize_lines.spv: shaders/ops/resize.comp, LINES), CPU devices */

#define LINES_NB 8          /* outputs an invocation along x */
#define LINES_ROWS 64       /* output rows an invocation, at least */
#define LINES_MAX_BYTES 256 /* bytes of an invocation's window row (its unrolled code grows with them) */
#define LINES_MAX_LOOP 60000 /* loop iterations an invocation (lavapipe's limit: 65535) */

typedef struct lines_plan {
    int kx, ky, nb, sb, ty, rows, nblk, wg;
    axis_uniform x, y;
} lines_plan;

typedef struct lines_push {
    vki_addr src, dst;
    uint32_t in_w, in_h, out_w, out_h, pw, ph;
    int32_t qx, qy;
    uint32_t nblk, b0, b1;
} lines_push;

/* Whether the lines pass can make this resampling (the strip pass's cases: 8-bit
 * input whose rows are whole words, uniform tables over whole blocks, not in
 * linear light; the input 16-byte aligned, the output 4-byte aligned; a window
 * row of at most LINES_MAX_BYTES, with fewer outputs an invocation where
 * needed), and its shape. VKIMG_RESIZE_LINES_NB and
 * VKIMG_RESIZE_LINES_WG set the outputs an invocation along x and the workgroup
 * size (benchmarks). */
static bool lines_fits(const vki_gpu *gpu, const vki_step *s, const vki_resample *rs, int kx, int ky,
                       const axis_uniform *ux, const axis_uniform *uy, lines_plan *p)
{
    const int c = s->in_c;
    if (!uniform_fits(s, rs, kx, ky, ux, uy) || s->in % 16 || s->out % 4)
        return false;
    *p = (lines_plan){ .kx = kx, .ky = ky, .x = *ux, .y = *uy };
    p->nb = (int)vki_env_long("VKIMG_RESIZE_LINES_NB", LINES_NB, 4, 32) / 4 * 4;
    p->wg = (int)vki_env_long("VKIMG_RESIZE_LINES_WG", 64, 1, vki_wg_1d(gpu));
    p->ty = padded_taps(uy);
    const int u = p->ty / uy->step;
    /* the window's columns (fewer outputs an invocation where its row would be too wide) */
    int64_t wl = (p->nb - 1) * ux->step + ux->taps;
    for (; p->nb > 4 && wl * kx * c > LINES_MAX_BYTES; wl -= 4 * ux->step)
        p->nb -= 4;
    if (p->ty > STRIP_MAX_TAPS || wl * kx * c > LINES_MAX_BYTES)
        return false;
    p->sb = (int)((((int64_t)ux->start * kx * c) % 4 + 4) % 4);
    const int lr = (int)vki_env_long("VKIMG_RESIZE_LINES_ROWS", LINES_ROWS, 1, 1 << 20);
    int rows = s->out_h < lr ? s->out_h : lr;
    /* lavapipe ends all the loops of an invocation after 65535 iterations in
     * all (llvmpipe's LP_MAX_TGSI_LOOP_ITERATIONS, shared by every loop of a
     * shader): the loops of a step (pre-shrunk rows, input rows, the edges'
     * columns; the row's end bytes and partial outputs) times the steps stay below */
    /* (a loop of n iterations costs n + 1: its exit counts) */
    const int64_t per_step = 1 + (uy->step + 1) + uy->step * ((ky + 1) + ky * (wl + 1)) + 5 + (p->nb + 1);
    const int64_t max_rows = LINES_MAX_LOOP / per_step - (u - 1);
    if (max_rows < u)
        return false;
    if (rows > max_rows)
        rows = (int)max_rows;
    p->rows = (rows + u - 1) / u * u;
    if (p->rows > max_rows)
        p->rows -= u;
    p->nblk = (s->out_w + p->nb - 1) / p->nb;
    return true;
}

/* Two dispatches: the blocks of NB outputs whose windows lie inside the image
 * and whose outputs are all inside it (b0 .. b1 - 1, EDGE 0: read as vectors),
 * then the others (EDGE 1: byte by byte, clamped). */
static int record_lines(vki_rec *r, const vki_step *s, const lines_plan *p, int pw, int ph)
{
    const int64_t step = (int64_t)p->nb * p->x.step, wl = (int64_t)(p->nb - 1) * p->x.step + p->x.taps;
    const int64_t room = pw - wl - p->x.start; /* block b is inside where b * step <= room and q >= 0 */
    int64_t b1 = room < 0 ? 0 : floor_div(room, step) + 1, b0 = p->x.start >= 0 ? 0 : (-p->x.start + step - 1) / step;
    if (b1 > s->out_w / p->nb)
        b1 = s->out_w / p->nb;
    if (b0 > b1)
        b0 = b1;
    const uint64_t strips = (uint64_t)((s->out_h + p->rows - 1) / p->rows);
    for (int edge = 0; edge <= 1; edge++) {
        const uint32_t n = edge ? (uint32_t)(p->nblk - (b1 - b0)) : (uint32_t)(b1 - b0);
        if (n == 0)
            continue;
        vki_spec spec = { 0 };
        vki_step_spec(s, &spec, (uint32_t)p->wg, 1, 1);
        spec_uniform(&spec, p->kx, p->ky, &p->x, &p->y, p->ty, p->rows);
        vki_spec_named(&spec, "NB", (uint32_t)p->nb);
        vki_spec_named(&spec, "SB", (uint32_t)p->sb);
        vki_spec_named(&spec, "EDGE", (uint32_t)edge);
        lines_push pc = { vki_addr_of(s->in),   vki_addr_of(s->out), (uint32_t)s->w,  (uint32_t)s->h,
                          (uint32_t)s->out_w,   (uint32_t)s->out_h,  (uint32_t)pw,    (uint32_t)ph,
                          p->x.start,           p->y.start,          n,               (uint32_t)b0,
                          (uint32_t)b1 };
        const uint64_t items = (uint64_t)n * strips;
        int rc = vki_rec_dispatch_1d(r, edge ? "resize-lines-edge" : "resize-lines", VKI_SPV(resize_lines), &spec,
                                     &pc, sizeof pc, (items + (uint64_t)p->wg - 1) / (uint64_t)p->wg);
        if (rc)
            return rc;
    }
    return 0;
}

int vki_record_resample(vki_rec *r, const vki_step *s, const vki_resample *rs)
{
    int w = s->w, h = s->h, ow = s->out_w, oh = s->out_h, c = s->in_c, rc;
    if (w == ow && h == oh) { /* the image as it is (a filter would blur it: mitchell's k(0) is 8/9) */
        vki_remap id = vki_crop_remap(0, 0);
        return vki_record_remap(r, s, &id);
    }
    VkDeviceAddress src = s->in, pre = 0, tmp, wx, sx, wy, sy;
    bool shrunk = false;
    int kx = rs->fast && rs->filter != VKI_FILTER_NEAREST ? vki_preshrink_factor((double)w / ow) : 1;
    int ky = rs->fast && rs->filter != VKI_FILTER_NEAREST ? vki_preshrink_factor((double)h / oh) : 1;
    int pw = (w + kx - 1) / kx, ph = (h + ky - 1) / ky; /* the pre-shrunk size (w x h without one) */
    /* the intermediate between the axes: 16-bit fixed point for 8-bit outputs (within
     * 1/128 of their step, times the vertical filter's sum of |weights| (<= 1.543 for
     * Lanczos3): correctly rounded but for 0.012 LSB, the tests' 0.515); not in
     * linear light or premultiplied (small values, whose error the sRGB encoding or
     * the division by alpha would magnify). VKIMG_RESIZE_TMP=f32 keeps f32. */
    const char *tev = getenv("VKIMG_RESIZE_TMP");
    const bool tmp16 = s->out_fmt == VKIMG_U8 && !rs->linear && (c == 1 || c == 3) && !rs->f32_between &&
                       !(tev && !strcmp(tev, "f32"));
    const size_t tmp_sample = tmp16 ? 2 : 4;
    resize_path path = PATH_PASSES;
    int reach_rows = 0;
    /* the tables are over the pre-shrunk grid; on the device only where a path
     * reads them (not the strip pass) */
    axis_tab ax = { 0 }, ay = { 0 };
    if ((rc = axis_build(r, rs->filter, pw, ow, FUSED_TW, &ax)) ||
        (rc = axis_build(r, rs->filter, ph, oh, FUSED_TH, &ay)))
        goto tables;
    /* the strip pass: not for mipmaps' levels (f32_between: the same bytes as its
     * fused pass, which sums horizontally first) */
    strip_plan sp = { 0 };
    lines_plan lp = { 0 };
    const bool sfit = !rs->f32_between && strip_fits(r->gpu, s, rs, kx, ky, &ax.u, &ay.u, &sp);
    const bool lfit = !rs->f32_between && lines_fits(r->gpu, s, rs, kx, ky, &ax.u, &ay.u, &lp);
    path = pick_path(r->gpu, sfit, lfit);
    /* (resize_vec.spv reads through texel buffers: devices that take them, gpu.h texel) */
    if (path == PATH_VEC && (!vec_fits(s, kx, ky, ax.T) || !r->gpu->texel))
        path = PATH_PASSES;
    if (path == PATH_VEC) {
        rc = record_vec(r, s, rs, &ax, &ay, tmp16);
        goto tables;
    }
    if (path == PATH_STRIP || path == PATH_LINES) {
        rc = path == PATH_STRIP ? record_strip(r, s, &sp, pw, ph) : record_lines(r, s, &lp, pw, ph);
        goto tables;
    }
    rc = axis_upload(r, &ax, &wx, &sx);
    rc = rc ? rc : axis_upload(r, &ay, &wy, &sy);
tables:
    axis_free(&ax);
    axis_free(&ay);
    if (rc || path == PATH_STRIP || path == PATH_LINES || path == PATH_VEC) /* (recorded) */
        return rc;
    const uint32_t tx = (uint32_t)ax.T, ty = (uint32_t)ay.T;
    const int reach_y = ay.reach;
    if (path == PATH_ROWS) {
        /* the reach of ROWS_TW outputs (axis_build's is for FUSED_TW) */
        double sc = (double)pw / ow;
        reach_rows = (int)ceil(ROWS_TW * sc) + (int)tx + 2;
        if (!fits_shared(r->gpu, (uint64_t)reach_rows * (uint64_t)c))
            path = PATH_PASSES;
        /* without a pre-shrink to fold in, passes 1-2 (taps through the L1) were the
         * faster on the H100 (8K -> 1/4 exact: 0.42 ms, rows 0.60): rows only when asked */
        if (kx == 1 && ky == 1 && !getenv("VKIMG_RESIZE_PATH"))
            path = PATH_PASSES;
    }
    /* small outputs on GPUs: one dispatch (mip levels past the fused ones: a dispatch
     * and a barrier cost more than their work) */
    if (path != PATH_FUSED && r->gpu->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU && !getenv("VKIMG_RESIZE_PATH") &&
        !getenv("VKIMG_RESIZE_FUSED") && (uint64_t)ow * (uint64_t)oh <= SMALL_OUT_PX && kx == 1 && ky == 1)
        path = PATH_FUSED;
    if (path == PATH_FUSED && !fits_shared(r->gpu, (uint64_t)reach_y * FUSED_TW * (uint64_t)c))
        path = PATH_PASSES;
    if (path == PATH_ROWS) {
        if ((rc = vki_rec_scratch(r, (VkDeviceSize)ow * ph * c * tmp_sample, "resize intermediate", &tmp)))
            return rc;
        resize_push p4 = { vki_addr_of(src), vki_addr_of(tmp), vki_addr_of(wx), vki_addr_of(sx), (uint32_t)w,
                           (uint32_t)h, (uint32_t)ow, (uint32_t)oh, (uint32_t)kx, (uint32_t)ky, { 0, 0 }, { 0, 0 }, 0 };
        if ((rc = pass(r, s, rs, 4, false, tx, 1, (uint32_t)reach_rows, tmp16, &p4, (uint32_t)ow, (uint32_t)ph)))
            return rc;
        resize_push pv = { vki_addr_of(tmp), vki_addr_of(s->out), vki_addr_of(wy), vki_addr_of(sy), (uint32_t)pw,
                           (uint32_t)ph, (uint32_t)ow, (uint32_t)oh, 1, 1, { 0, 0 }, { 0, 0 }, 0 };
        return pass(r, s, rs, 2, false, ty, 1, 1, tmp16, &pv, (uint32_t)ow, (uint32_t)oh);
    }
    if (kx > 1 || ky > 1) {
        if ((rc = vki_rec_scratch(r, (VkDeviceSize)pw * ph * c * 4, "resize pre-shrunk image", &pre)))
            return rc;
        resize_push pc = { vki_addr_of(src), vki_addr_of(pre), { 0, 0 }, { 0, 0 }, (uint32_t)w, (uint32_t)h, 0, 0,
                           (uint32_t)kx, (uint32_t)ky, { 0, 0 }, { 0, 0 }, 0 };
        if ((rc = pass(r, s, rs, 0, false, 1, 1, 1, false, &pc, (uint32_t)pw, (uint32_t)ph)))
            return rc;
        src = pre;
        w = pw;
        h = ph;
        shrunk = true;
    }
    if (path == PATH_FUSED) {
        resize_push pf = { vki_addr_of(src), vki_addr_of(s->out), vki_addr_of(wx), vki_addr_of(sx), (uint32_t)w,
                           (uint32_t)h, (uint32_t)ow, (uint32_t)oh, 1, 1, vki_addr_of(wy), vki_addr_of(sy), 0 };
        return pass(r, s, rs, 3, shrunk, tx, ty, (uint32_t)reach_y, false, &pf, (uint32_t)ow, (uint32_t)oh);
    }
    if ((rc = vki_rec_scratch(r, (VkDeviceSize)ow * h * c * tmp_sample, "resize intermediate", &tmp)))
        return rc;
    resize_push ph1 = { vki_addr_of(src), vki_addr_of(tmp), vki_addr_of(wx), vki_addr_of(sx), (uint32_t)w, (uint32_t)h,
                        (uint32_t)ow, (uint32_t)oh, 1, 1, { 0, 0 }, { 0, 0 }, 0 };
    if ((rc = pass(r, s, rs, 1, shrunk, tx, 1, 1, tmp16, &ph1, (uint32_t)ow, (uint32_t)h)))
        return rc;
    resize_push pv = { vki_addr_of(tmp), vki_addr_of(s->out), vki_addr_of(wy), vki_addr_of(sy), (uint32_t)w, (uint32_t)h,
                       (uint32_t)ow, (uint32_t)oh, 1, 1, { 0, 0 }, { 0, 0 }, 0 };
    return pass(r, s, rs, 2, false, ty, 1, 1, tmp16, &pv, (uint32_t)ow, (uint32_t)oh);
}

static int record_resize(vki_rec *r, const vki_step *s)
{
    const double *v = s->args->v;
    vki_resample rs = { .filter = (vki_filter)(int)v[O_FILTER],
                            .linear = v[O_LINEAR] != 0, .fast = v[O_FAST] != 0 };
    return vki_record_resample(r, s, &rs);
}

const vki_op_desc vki_op_resize = {
    .name = "resize",
    .needs = "the size (geometry)",
    .example = "resize=50%",
    .help = "Resize to an ImageMagick geometry (lanczos3, lanczos2, mitchell, catrom, bilinear, box, nearest; "
            "alpha-aware, optionally in linear light).",
    .opts = resize_opts,
    .nopts = (int)VKI_ARRAY_LEN(resize_opts),
    .out_size = resize_size,
    .exact_size = true,
    .min_input = resize_min_input,
    .record = record_resize,
};
