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

/* The fused pass where the device is a GPU (VKIMG_RESIZE_FUSED=0/1 overrides,
 * for tests and comparisons) and its rows fit shared memory. */
static bool use_fused(const vki_gpu *g, int rows, int c)
{
    bool want = g->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    const char *ev = getenv("VKIMG_RESIZE_FUSED");
    if (ev && *ev)
        want = *ev != '0';
    return want && (uint64_t)rows * FUSED_TW * c * 4 <= g->lim.max_shared;
}

static int pass(vki_rec *r, const vki_step *s, const vki_resample *rs, int p, bool pre, uint32_t taps, uint32_t ty,
                uint32_t srows, const resize_push *pc, uint32_t nx, uint32_t ny)
{
    vki_spec spec = { 0 };
    uint32_t wy = r->gpu->lim.max_wg_invocations / 16 < 16 ? r->gpu->lim.max_wg_invocations / 16 : 16;
    vki_step_spec(s, &spec, 16, wy, 1);
    vki_spec_named(&spec, "PASS", (uint32_t)p);
    vki_spec_named(&spec, "LINEAR", rs->linear);
    vki_spec_named(&spec, "PRE", pre);
    vki_spec_named(&spec, "T", taps);
    static const char *const names[] = { "resize-preshrink", "resize-h", "resize-v", "resize" };
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
    uint32_t tx, ty;
    int kx = rs->fast && rs->filter != VKI_FILTER_NEAREST ? vki_preshrink_factor((double)w / ow) : 1;
    int ky = rs->fast && rs->filter != VKI_FILTER_NEAREST ? vki_preshrink_factor((double)h / oh) : 1;
    if (kx > 1 || ky > 1) {
        int pw = (w + kx - 1) / kx, ph = (h + ky - 1) / ky;
        if ((rc = vki_rec_scratch(r, (VkDeviceSize)pw * ph * c * 4, "resize pre-shrunk image", &pre)))
            return rc;
        resize_push pc = { vki_addr_of(src), vki_addr_of(pre), { 0, 0 }, { 0, 0 }, (uint32_t)w, (uint32_t)h, 0, 0,
                           (uint32_t)kx, (uint32_t)ky, { 0, 0 }, { 0, 0 } };
        if ((rc = pass(r, s, rs, 0, false, 1, 1, 1, &pc, (uint32_t)pw, (uint32_t)ph)))
            return rc;
        src = pre;
        w = pw;
        h = ph;
        shrunk = true;
    }
    int reach_x, reach_y;
    if ((rc = axis_table(r, rs->filter, w, ow, FUSED_TW, &wx, &sx, &tx, &reach_x)) ||
        (rc = axis_table(r, rs->filter, h, oh, FUSED_TH, &wy, &sy, &ty, &reach_y)))
        return rc;
    if (use_fused(r->gpu, reach_y, c)) {
        resize_push pf = { vki_addr_of(src), vki_addr_of(s->out), vki_addr_of(wx), vki_addr_of(sx), (uint32_t)w,
                           (uint32_t)h, (uint32_t)ow, (uint32_t)oh, 1, 1, vki_addr_of(wy), vki_addr_of(sy) };
        return pass(r, s, rs, 3, shrunk, tx, ty, (uint32_t)reach_y, &pf, (uint32_t)ow, (uint32_t)oh);
    }
    if ((rc = vki_rec_scratch(r, (VkDeviceSize)ow * h * c * 4, "resize intermediate", &tmp)))
        return rc;
    resize_push ph = { vki_addr_of(src), vki_addr_of(tmp), vki_addr_of(wx), vki_addr_of(sx), (uint32_t)w, (uint32_t)h,
                       (uint32_t)ow, (uint32_t)oh, 1, 1, { 0, 0 }, { 0, 0 } };
    if ((rc = pass(r, s, rs, 1, shrunk, tx, 1, 1, &ph, (uint32_t)ow, (uint32_t)h)))
        return rc;
    resize_push pv = { vki_addr_of(tmp), vki_addr_of(s->out), vki_addr_of(wy), vki_addr_of(sy), (uint32_t)w, (uint32_t)h,
                       (uint32_t)ow, (uint32_t)oh, 1, 1, { 0, 0 }, { 0, 0 } };
    return pass(r, s, rs, 2, false, ty, 1, 1, &pv, (uint32_t)ow, (uint32_t)oh);
}

static int record_resize(vki_rec *r, const vki_step *s)
{
    const double *v = s->args->v;
    vki_resample rs = { (vki_filter)(int)v[O_FILTER], v[O_LINEAR] != 0, v[O_FAST] != 0 };
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
    .record = record_resize,
};
