/* blur: separable Gaussian, w_i = exp(-i^2 / (2 sigma^2)), i = -r..r, normalized.
 * Horizontal pass then vertical pass (shaders/blur.comp); colour is blurred
 * premultiplied by alpha. */
#include "exec.h"
#include "util.h"
#include "blur.spv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { O_SIGMA, O_RADIUS };

#define BLUR_MAX_RADIUS 4096

static const vki_opt blur_opts[] = {
    [O_SIGMA] = { .name = "sigma", .type = VKI_OPT_FLOAT, .def = 1.0, .min = 0.0, .min_exclusive = true,
                  .max = 1000.0, .help = "standard deviation in pixels" },
    [O_RADIUS] = { .name = "radius", .type = VKI_OPT_INT, .min = 0, .max = BLUR_MAX_RADIUS,
                   .auto_default = "ceil(3*sigma)", .help = "kernel radius in pixels (taps: 2*radius+1)" },
};

static int blur_check(vki_args *a, char *why, size_t n, int *bad)
{
    if (!a->set[O_RADIUS]) {
        double r = ceil(3.0 * a->v[O_SIGMA]);
        if (r > BLUR_MAX_RADIUS) {
            snprintf(why, n, "sigma %g needs radius %g, over the maximum %d", a->v[O_SIGMA], r, BLUR_MAX_RADIUS);
            *bad = O_SIGMA;
            return -1;
        }
        a->v[O_RADIUS] = r;
    }
    return 0;
}

static double blur_bytes(int in_c, int in_size, int out_c, int out_size, const vki_args *a)
{
    /* a fused single pass would read the input once and write the output once */
    (void)a;
    return (double)in_c * in_size + (double)out_c * out_size;
}

enum { SPEC_DIR = VKI_SPEC_OP, SPEC_SPAN, SPEC_TILE, SPEC_PREMUL, SPEC_UNPREMUL, SPEC_FUSED };

/* Texels along the pass direction that one chunk keeps in shared memory. */
static uint32_t blur_span(const vki_gpu *g, uint32_t along, uint32_t across, int r)
{
    uint32_t fit = g->lim.max_shared / (uint32_t)(4 * sizeof(float)) / across;
    uint32_t want = along + 2u * (uint32_t)r;
    return want < fit ? want : fit;
}

static int blur_pass(vki_rec *r, const vki_step *s, int dir, VkDeviceAddress src, vkimg_fmt src_fmt,
                     VkDeviceAddress dst, vkimg_fmt dst_fmt, VkDeviceAddress wts, int rad)
{
    const vki_gpu *g = r->gpu;
    /* Along x: one line of up to 256 texels. Along y: 16 columns x 16 rows. */
    uint32_t lx, ly;
    if (dir == 0) {
        lx = vki_wg_1d(g);
        ly = 1;
    } else {
        lx = 16;
        ly = 16;
        while (lx * ly > g->lim.max_wg_invocations || ly > g->lim.max_wg_size[1])
            ly /= 2;
    }
    uint32_t along = dir == 0 ? lx : ly, across = dir == 0 ? ly : lx;
    uint32_t span = blur_span(g, along, across, rad);
    if (span < along)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "blur: device shared memory (%u bytes) too small for a %ux%u workgroup",
                        g->lim.max_shared, lx, ly);
    vki_step ps = *s;
    ps.in_fmt = src_fmt;
    ps.out_fmt = dst_fmt;
    ps.out_c = s->in_c;
    vki_spec spec = { 0 };
    vki_step_spec(&ps, &spec, lx, ly, 1);
    vki_spec_set(&spec, SPEC_DIR, (uint32_t)dir);
    vki_spec_set(&spec, SPEC_SPAN, span);
    vki_spec_set(&spec, SPEC_TILE, span * across);
    bool alpha = s->in_c == 2 || s->in_c == 4;
    vki_spec_set(&spec, SPEC_PREMUL, alpha && dir == 0);
    vki_spec_set(&spec, SPEC_UNPREMUL, alpha && dir == 1);
    struct {
        vki_addr src, dst, wts;
        int32_t w, h, r;
    } pc = { vki_addr_of(src), vki_addr_of(dst), vki_addr_of(wts), s->w, s->h, rad };
    return vki_rec_dispatch(r, dir == 0 ? "blur-h" : "blur-v", blur_spv, sizeof blur_spv, &spec, &pc, sizeof pc,
                            ((uint32_t)s->w + lx - 1) / lx, ((uint32_t)s->h + ly - 1) / ly, 1);
}

/* One dispatch for both passes when a tile and its halo fit shared memory:
 * 32x8 outputs (a warp's row stays coalesced), else 16x16. Returns -1 when
 * neither fits (then the separable passes run). */
static int blur_fused(vki_rec *r, const vki_step *s, VkDeviceAddress wts, int rad)
{
    const vki_gpu *g = r->gpu;
    static const uint32_t shapes[][2] = { { 32, 8 }, { 16, 16 } };
    if (getenv("VKIMG_BLUR_SEPARABLE")) /* to compare the two paths */
        return -1;
    for (size_t i = 0; i < VKI_ARRAY_LEN(shapes); i++) {
        uint32_t lx = shapes[i][0], ly = shapes[i][1];
        if (lx * ly > g->lim.max_wg_invocations || lx > g->lim.max_wg_size[0] || ly > g->lim.max_wg_size[1])
            continue;
        uint64_t tw = lx + 2ull * rad, th = ly + 2ull * rad;
        uint64_t bytes = (tw * th + th * lx) * 4 * sizeof(float);
        if (bytes > g->lim.max_shared)
            continue;
        bool alpha = s->in_c == 2 || s->in_c == 4;
        vki_spec spec = { 0 };
        vki_step_spec(s, &spec, lx, ly, 1);
        vki_spec_set(&spec, SPEC_FUSED, 1);
        vki_spec_set(&spec, SPEC_TILE, (uint32_t)(tw * th + th * lx));
        vki_spec_set(&spec, SPEC_PREMUL, alpha);
        vki_spec_set(&spec, SPEC_UNPREMUL, alpha);
        struct {
            vki_addr src, dst, wts;
            int32_t w, h, r;
        } pc = { vki_addr_of(s->in), vki_addr_of(s->out), vki_addr_of(wts), s->w, s->h, rad };
        return vki_rec_dispatch(r, "blur", blur_spv, sizeof blur_spv, &spec, &pc, sizeof pc,
                                ((uint32_t)s->w + lx - 1) / lx, ((uint32_t)s->h + ly - 1) / ly, 1);
    }
    return -1; /* doesn't fit: separable passes */
}

static int record_blur(vki_rec *r, const vki_step *s)
{
    double sigma = s->args->v[O_SIGMA];
    int rad = (int)s->args->v[O_RADIUS];
    size_t n = 2 * (size_t)rad + 1;
    float *w = malloc(n * sizeof *w);
    if (!w)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "blur: out of memory");
    double sum = 0;
    for (int i = -rad; i <= rad; i++)
        sum += exp(-(double)i * i / (2 * sigma * sigma));
    for (int i = -rad; i <= rad; i++)
        w[i + rad] = (float)(exp(-(double)i * i / (2 * sigma * sigma)) / sum);
    VkDeviceAddress wts, tmp;
    int rc = vki_rec_const(r, w, n * sizeof *w, "blur weights", &wts);
    free(w);
    if (rc)
        return rc;
    if ((rc = blur_fused(r, s, wts, rad)) >= 0)
        return rc;
    /* horizontal result, premultiplied, full float precision */
    rc = vki_rec_scratch(r, (VkDeviceSize)s->w * s->h * s->in_c * sizeof(float), "blur intermediate", &tmp);
    if (rc)
        return rc;
    rc = blur_pass(r, s, 0, s->in, s->in_fmt, tmp, VKIMG_F32, wts, rad);
    if (rc)
        return rc;
    return blur_pass(r, s, 1, tmp, VKIMG_F32, s->out, s->out_fmt, wts, rad);
}

const vki_op_desc vki_op_blur = {
    .name = "blur",
    .help = "Gaussian blur (separable, shared-memory tiles, clamp-to-edge; alpha-aware).",
    .opts = blur_opts,
    .nopts = (int)(sizeof blur_opts / sizeof blur_opts[0]),
    .check = blur_check,
    .min_bytes_per_px = blur_bytes,
    .record = record_blur,
};
