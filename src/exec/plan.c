/* A parsed pipeline on one image: plan its stages (sizes, channels, formats,
 * intermediates), record each op's kernels, and run it through the run engine. */
#include "exec/exec.h"
#include "core/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vki_step_spec(const vki_step *s, vki_spec *spec, uint32_t lx, uint32_t ly, uint32_t lz)
{
    vki_spec_set(spec, VKI_SPEC_LX, lx);
    vki_spec_set(spec, VKI_SPEC_LY, ly);
    vki_spec_set(spec, VKI_SPEC_LZ, lz);
    vki_spec_set(spec, VKI_SPEC_IN_FMT, s->in_fmt);
    vki_spec_set(spec, VKI_SPEC_OUT_FMT, s->out_fmt);
    vki_spec_set(spec, VKI_SPEC_IN_C, (uint32_t)s->in_c);
    vki_spec_set(spec, VKI_SPEC_OUT_C, (uint32_t)s->out_c);
}

int vki_rec_pixels(vki_rec *r, const vki_step *s, const char *name, const uint32_t *spv, size_t spv_size,
                   const vki_spec *spec, const void *params, uint32_t params_size)
{
    struct pixels_push {
        vki_addr src, dst;
        uint32_t npx;
        unsigned char params[64];
    } pc = { vki_addr_of(s->in), vki_addr_of(s->out), (uint32_t)((uint64_t)s->w * s->h), { 0 } };
    if (params_size > sizeof pc.params || params_size % 4)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "%s: %u bytes of parameters (4-byte scalars, at most %zu)", name,
                        params_size, sizeof pc.params);
    if (params_size)
        memcpy(pc.params, params, params_size);
    vki_spec sp = spec ? *spec : (vki_spec){ 0 };
    uint32_t wg = vki_wg_1d(r->gpu);
    vki_step_spec(s, &sp, wg, 1, 1);
    uint64_t groups = ((uint64_t)s->w * s->h + wg - 1) / wg;
    return vki_rec_dispatch_1d(r, name, spv, spv_size, &sp, &pc, (uint32_t)offsetof(struct pixels_push, params) + params_size,
                               groups);
}

int vki_plan_create(vki_gpu *g, const vkimg_pipeline *p, int w, int h, int c, vkimg_fmt in_fmt, vkimg_fmt out_fmt,
                    vki_plan *pl, vkimg_err *e)
{
    memset(pl, 0, sizeof *pl);
    int rc = vki_pipeline_validate(p, e);
    if (rc)
        return rc;
    if (w < 1 || h < 1 || c < 1 || c > 4)
        return vki_fail(e, VKIMG_E_RUNTIME, "invalid input image %dx%dx%d", w, h, c);
    int n = p->n;
    pl->p = p;
    pl->n = n;
    pl->w[0] = w;
    pl->h[0] = h;
    pl->geo_w = w;
    pl->geo_h = h;
    pl->chans[0] = c;
    uint64_t samples = (uint64_t)w * (uint64_t)h * (uint64_t)c, inter[2] = { 0, 0 };
    for (int i = 0; i < n; i++) {
        const vki_pipe_op *op = &p->ops[i];
        const vki_op_desc *d = op->desc;
        pl->chans[i + 1] = d->out_channels ? d->out_channels(pl->chans[i], &op->args) : pl->chans[i];
        if (pl->chans[i + 1] < 1 || pl->chans[i + 1] > 4)
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: can't produce %d channels", d->name, pl->chans[i + 1]);
        int gw = i ? pl->w[i] : pl->geo_w, gh = i ? pl->h[i] : pl->geo_h;
        pl->w[i + 1] = gw;
        pl->h[i + 1] = gh;
        if (d->out_size) {
            char why[512] = "invalid output size";
            if (d->out_size(gw, gh, &op->args, &pl->w[i + 1], &pl->h[i + 1], why, sizeof why))
                return vki_fail(e, VKIMG_E_RUNTIME, "%s: %s", d->name, why);
        }
        uint64_t s = (uint64_t)pl->w[i + 1] * (uint64_t)pl->h[i + 1] * (uint64_t)pl->chans[i + 1];
        if (s > samples)
            samples = s;
        if (i + 1 < n && s > inter[i % 2])
            inter[i % 2] = s;
    }
    if (samples > UINT32_MAX)
        return vki_fail(e, VKIMG_E_RUNTIME, "image %dx%d with %d channels is too large: a stage has more than 2^32 samples",
                        w, h, c);
    pl->in_fmt = in_fmt;
    pl->out_fmt = p->ops[n - 1].desc->data_output ? (vkimg_fmt)p->ops[n - 1].desc->data_fmt : out_fmt;
    pl->in_bytes = (size_t)w * (size_t)h * (size_t)c * vkimg_fmt_size(in_fmt);
    pl->out_bytes = (size_t)pl->w[n] * (size_t)pl->h[n] * (size_t)pl->chans[n] * vkimg_fmt_size(pl->out_fmt);
    for (int k = 0; k < 2; k++)
        if (inter[k] && (rc = vki_buf_create(g, inter[k] * sizeof(float), VKI_MEM_DEVICE, "intermediate image",
                                             &pl->inter[k], e))) {
            vki_plan_destroy(g, pl);
            return rc;
        }
    return 0;
}

void vki_plan_destroy(vki_gpu *g, vki_plan *pl)
{
    vki_buf_destroy(g, &pl->inter[0]);
    vki_buf_destroy(g, &pl->inter[1]);
}

int vki_plan_record(vki_plan *pl, vki_run *run)
{
    vki_rec *rec = vki_run_rec(run);
    int n = pl->n;
    for (int i = 0; i < n; i++) {
        const vki_pipe_op *op = &pl->p->ops[i];
        vki_step s = {
            .desc = op->desc,
            .args = &op->args,
            .index = i,
            .w = pl->w[i],
            .h = pl->h[i],
            .out_w = pl->w[i + 1],
            .out_h = pl->h[i + 1],
            .geo_w = i ? pl->w[i] : pl->geo_w,
            .geo_h = i ? pl->h[i] : pl->geo_h,
            .in_c = pl->chans[i],
            .out_c = pl->chans[i + 1],
            .in_fmt = i == 0 ? pl->in_fmt : VKIMG_F32,
            .out_fmt = i == n - 1 ? pl->out_fmt : VKIMG_F32,
            .in = i == 0 ? pl->in : pl->inter[(i - 1) % 2].addr,
            .out = i == n - 1 ? pl->out : pl->inter[i % 2].addr,
            .in_packed_rgb8_words = i == 0 && pl->in_fmt == VKIMG_U8 && pl->chans[0] == 3,
            .levels = pl->in_fmt == VKIMG_U16 ? 65535u : 255u,
        };
        int rc = op->desc->record(rec, &s);
        if (rc)
            return rc;
        vki_run_mark(run, op->desc->name);
    }
    return 0;
}

int vkimg_run(vkimg_ctx *ctx, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
              vkimg_image *out, vkimg_err *e)
{
    vkimg_err local;
    if (!e)
        e = &local;
    vki_err_clear(e);
    if (out)
        memset(out, 0, sizeof *out);
    if (!ctx || !p || !in || !out)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_run: NULL argument");
    if (!in->data)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_run: the input image has no data");
    vki_gpu *g = &ctx->gpu;
    double t_start = vki_now_ms();
    vki_plan pl;
    vki_run *run = NULL;
    vkimg_image res = { 0 };
    int rc, slot = -1;
    if ((rc = vki_plan_create(g, p, in->w, in->h, in->c, in->fmt, o ? o->out_fmt : in->fmt, &pl, e)))
        return rc;
    if ((rc = vki_run_begin(g, o && o->timing, &run, e)) ||
        (rc = vki_run_input(run, in->data, pl.in_bytes, "input image", &pl.in, NULL)) ||
        (rc = vki_run_output(run, pl.out_bytes, false, "output image", &pl.out, &slot)) ||
        (rc = vki_plan_record(&pl, run)) || (rc = vki_run_submit(run)))
        goto done;
    int n = pl.n;
    if ((rc = vki_image_alloc(&res, pl.w[n], pl.h[n], pl.chans[n], pl.out_fmt, false, e))) /* copied whole */
        goto done;
    double t0 = vki_now_ms();
    memcpy(res.data, vki_run_output_data(run, slot), pl.out_bytes);
    double host_readback = vki_now_ms() - t0;
    if (o && o->timing) {
        vkimg_timing *t = o->timing;
        vki_run_times(run, t);
        t->readback_ms += host_readback;
        t->total_ms = vki_now_ms() - t_start;
    }
    *out = res;
    res.data = NULL;
done:
    vki_run_end(run);
    vki_plan_destroy(g, &pl);
    vkimg_image_free(&res);
    return rc;
}
