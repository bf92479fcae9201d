/* resize: to a size given by ImageMagick's geometry, with one of seven filters
 * (resample.h has the definition); the resampling that thumbnail and mipmaps use
 * too. Weight tables are made here in double precision, one row of T taps per
 * output position and axis, and read by shaders/ops/resize.comp. */
#include "ops/remap.h"
#include "ops/resample.h"
#include "pipeline/geometry.h"
#include "core/util.h"
#include "spv/resize.spv.h"

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

int vki_preshrink_factor(double s)
{
    return s >= 4 ? (int)floor(s / 2) : 1;
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

/* The weight table of one axis, n_in -> n_out: starts[i] and T weights per
 * output (zeros past its taps), as floats, normalized in double. *reach: the
 * most input positions a run of `tile` consecutive outputs reaches. Where the
 * definition has exact boundaries (nearest's floor((i + 0.5) s), box's
 * [-0.5, 0.5)) they are decided in integers: 2 n_out (j - c) = 2 j n_out -
 * (2 i + 1) n_in + n_out exactly, where the double c and s can land on either
 * side (box 257 -> 18 has a tap at exactly t = 0.5, nearest 30 -> 11 a j of
 * exactly 15). */
static int axis_table(vki_rec *r, vki_filter f, int n_in, int n_out, int tile, VkDeviceAddress *wts,
                      VkDeviceAddress *starts, uint32_t *taps, int *reach)
{
    double s = (double)n_in / n_out, fs = s > 1 ? s : 1, a = support(f) * fs;
    int T = f == VKI_FILTER_NEAREST ? 1 : (int)ceil(2 * a) + 1;
    size_t nw = (size_t)n_out * (size_t)T;
    float *w = calloc(nw, sizeof *w);
    int32_t *st = malloc((size_t)n_out * sizeof *st);
    double *d = malloc((size_t)T * sizeof *d);
    int rc = 0;
    if (!w || !st || !d) {
        rc = vki_fail(r->e, VKIMG_E_RUNTIME, "resize: out of memory for the weights (%d taps x %d)", T, n_out);
        goto done;
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
    *taps = (uint32_t)T;
    *reach = 0;
    for (int i = 0; i < n_out; i += tile) {
        int last = i + tile - 1 < n_out ? i + tile - 1 : n_out - 1;
        if (st[last] + T - st[i] > *reach)
            *reach = st[last] + T - st[i];
    }
    if ((rc = vki_rec_const(r, w, nw * sizeof *w, "resize weights", wts)))
        goto done;
    rc = vki_rec_const(r, st, (size_t)n_out * sizeof *st, "resize positions", starts);
done:
    free(w);
    free(st);
    free(d);
    return rc;
}

typedef struct resize_push {
    vki_addr src, dst, wts, starts;
    uint32_t in_w, in_h, out_w, out_h;
    uint32_t kx, ky;
    vki_addr wts_y, starts_y;
} resize_push;

#define FUSED_TW 32 /* the fused pass's output tile */
#define FUSED_TH 16
#define ROWS_TW 64  /* the rows pass's outputs per workgroup */
#define SMALL_OUT_PX (256 * 256) /* outputs this small take the fused path on GPUs */

/* How the resampling is recorded:
 *   ROWS    pass 4 (the pre-shrink folded into the horizontal pass, through shared
 *           memory) then pass 2: GPUs (on the H100 8K -> 1/4 Lanczos3 took 0.24 ms
 *           as passes 0-1-2 with f32 between them, 0.32 ms fused)
 *   PASSES  pass 0 (pre-shrink), 1, 2: CPU devices (lavapipe)
 *   FUSED   pass 0, then 3 (both axes in one dispatch): small outputs on GPUs
 * VKIMG_RESIZE_PATH=rows|passes|fused overrides (tests, comparisons); a path whose
 * shared memory does not fit falls back to PASSES. */
typedef enum { PATH_PASSES, PATH_FUSED, PATH_ROWS } resize_path;

static resize_path pick_path(const vki_gpu *g)
{
    const char *ev = getenv("VKIMG_RESIZE_PATH");
    if (ev && !strcmp(ev, "rows"))
        return PATH_ROWS;
    if (ev && !strcmp(ev, "passes"))
        return PATH_PASSES;
    if (ev && !strcmp(ev, "fused"))
        return PATH_FUSED;
    ev = getenv("VKIMG_RESIZE_FUSED"); /* the older switch: 1 fused, 0 passes */
    if (ev && *ev)
        return *ev != '0' ? PATH_FUSED : PATH_PASSES;
    return g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? PATH_PASSES : PATH_ROWS;
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

int vki_record_resample(vki_rec *r, const vki_step *s, const vki_resample *rs)
{
    int w = s->w, h = s->h, ow = s->out_w, oh = s->out_h, c = s->in_c, rc;
    if (w == ow && h == oh) { /* the image as it is (a filter would blur it: mitchell's k(0) is 8/9) */
        vki_remap id = vki_crop_remap(0, 0);
        return vki_record_remap(r, s, &id);
    }
    VkDeviceAddress src = s->in, pre = 0, tmp, wx, sx, wy, sy;
    bool shrunk = false;
    uint32_t tx = 0, ty = 0;
    int kx = rs->fast && rs->filter != VKI_FILTER_NEAREST ? vki_preshrink_factor((double)w / ow) : 1;
    int ky = rs->fast && rs->filter != VKI_FILTER_NEAREST ? vki_preshrink_factor((double)h / oh) : 1;
    int pw = (w + kx - 1) / kx, ph = (h + ky - 1) / ky; /* the pre-shrunk size (w x h without one) */
    /* the intermediate between the axes: 16-bit fixed point for 8-bit outputs (1/128
     * of their step: still correctly rounded within the tests' 0.51 LSB); not in
     * linear light or premultiplied (small values, whose error the sRGB encoding or
     * the division by alpha would magnify). VKIMG_RESIZE_TMP=f32 keeps f32. */
    const char *tev = getenv("VKIMG_RESIZE_TMP");
    const bool tmp16 = s->out_fmt == VKIMG_U8 && !rs->linear && (c == 1 || c == 3) && !rs->f32_between &&
                       !(tev && !strcmp(tev, "f32"));
    const size_t tmp_sample = tmp16 ? 2 : 4;
    resize_path path = pick_path(r->gpu);
    int reach_x = 0, reach_y = 0, reach_rows = 0;
    /* the tables are over the pre-shrunk grid */
    if ((rc = axis_table(r, rs->filter, pw, ow, FUSED_TW, &wx, &sx, &tx, &reach_x)) ||
        (rc = axis_table(r, rs->filter, ph, oh, FUSED_TH, &wy, &sy, &ty, &reach_y)))
        return rc;
    if (path == PATH_ROWS) {
        /* the reach of ROWS_TW outputs (axis_table's is for FUSED_TW) */
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
                           (uint32_t)h, (uint32_t)ow, (uint32_t)oh, (uint32_t)kx, (uint32_t)ky, { 0, 0 }, { 0, 0 } };
        if ((rc = pass(r, s, rs, 4, false, tx, 1, (uint32_t)reach_rows, tmp16, &p4, (uint32_t)ow, (uint32_t)ph)))
            return rc;
        resize_push pv = { vki_addr_of(tmp), vki_addr_of(s->out), vki_addr_of(wy), vki_addr_of(sy), (uint32_t)pw,
                           (uint32_t)ph, (uint32_t)ow, (uint32_t)oh, 1, 1, { 0, 0 }, { 0, 0 } };
        return pass(r, s, rs, 2, false, ty, 1, 1, tmp16, &pv, (uint32_t)ow, (uint32_t)oh);
    }
    if (kx > 1 || ky > 1) {
        if ((rc = vki_rec_scratch(r, (VkDeviceSize)pw * ph * c * 4, "resize pre-shrunk image", &pre)))
            return rc;
        resize_push pc = { vki_addr_of(src), vki_addr_of(pre), { 0, 0 }, { 0, 0 }, (uint32_t)w, (uint32_t)h, 0, 0,
                           (uint32_t)kx, (uint32_t)ky, { 0, 0 }, { 0, 0 } };
        if ((rc = pass(r, s, rs, 0, false, 1, 1, 1, false, &pc, (uint32_t)pw, (uint32_t)ph)))
            return rc;
        src = pre;
        w = pw;
        h = ph;
        shrunk = true;
    }
    if (path == PATH_FUSED) {
        resize_push pf = { vki_addr_of(src), vki_addr_of(s->out), vki_addr_of(wx), vki_addr_of(sx), (uint32_t)w,
                           (uint32_t)h, (uint32_t)ow, (uint32_t)oh, 1, 1, vki_addr_of(wy), vki_addr_of(sy) };
        return pass(r, s, rs, 3, shrunk, tx, ty, (uint32_t)reach_y, false, &pf, (uint32_t)ow, (uint32_t)oh);
    }
    if ((rc = vki_rec_scratch(r, (VkDeviceSize)ow * h * c * tmp_sample, "resize intermediate", &tmp)))
        return rc;
    resize_push ph1 = { vki_addr_of(src), vki_addr_of(tmp), vki_addr_of(wx), vki_addr_of(sx), (uint32_t)w, (uint32_t)h,
                        (uint32_t)ow, (uint32_t)oh, 1, 1, { 0, 0 }, { 0, 0 } };
    if ((rc = pass(r, s, rs, 1, shrunk, tx, 1, 1, tmp16, &ph1, (uint32_t)ow, (uint32_t)h)))
        return rc;
    resize_push pv = { vki_addr_of(tmp), vki_addr_of(s->out), vki_addr_of(wy), vki_addr_of(sy), (uint32_t)w, (uint32_t)h,
                       (uint32_t)ow, (uint32_t)oh, 1, 1, { 0, 0 }, { 0, 0 } };
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
