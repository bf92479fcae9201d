/* Running a parsed pipeline on an image (the public vkimg_run, vkimg_run_n,
 * vkimg_pipeline_outputs): the orient op goes first when the input has an EXIF
 * orientation, then the plan (src/exec/plan.c) runs through the run engine. */
#include "ops/registry.h"
#include "exec/exec.h"
#include "core/coded.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const vki_op_desc vki_op_orient, vki_op_flatten;

/* The pipeline run for this input: p, after the orient op where the input has an
 * EXIF orientation, and the flatten op (on black) at its end where the caller keeps
 * no alpha (vkimg_run_opts.flatten) and an input of in_c channels would give some. */
typedef struct effective {
    vkimg_pipeline p;
    vki_pipe_op ops[VKI_MAX_STAGES + 2];
} effective;

/* Whether op gives the same colour after flatten as flatten gives after it (the
 * same colour over the same background): an op that moves pixels or copies them
 * (its alpha with them), gray (luma is linear, and flatten's gray background is the
 * colour's luma), and blur (a sum of the colour premultiplied by alpha, weights
 * adding up to 1: over a background bg, C A + bg (1 - A) = sum w (c a + bg (1 - a))).
 * Not resize or rotation by other angles (their negative lobes clamped), nor the
 * ops that map colour (levels, normalize, ...). */
static bool commutes_with_flatten(const vki_pipe_op *op)
{
    const vki_op_desc *d = op->desc;
    return d->alpha_copied || d->opaque_fast || vki_op_moves(d, &op->args);
}

static int effective_pipeline(const vkimg_pipeline *p, const vkimg_run_opts *o, int in_c, effective *ef,
                              vkimg_err *e)
{
    int orientation = o ? o->orientation : 0;
    if (orientation < 0 || orientation > 8)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_run: orientation %d is not an EXIF orientation (1..8)", orientation);
    const vki_op_desc *last = p->ops[p->n - 1].desc;
    const bool flatten = o && o->flatten && !last->data_output && VKI_HAS_ALPHA(vkimg_pipeline_out_channels(p, in_c));
    if (orientation <= 1 && !flatten) {
        ef->p = *p;
        return 0;
    }
    const int n = p->n + (orientation > 1) + flatten;
    if (n > VKI_MAX_STAGES)
        return vki_fail(e, VKIMG_E_USAGE, "the pipeline has %d ops: the %s needs one more (at most %d)", p->n,
                        orientation > 1 ? "orientation of the input" : "alpha the output has no place for",
                        VKI_MAX_STAGES);
    int k = 0;
    if (orientation > 1) {
        memset(&ef->ops[k], 0, sizeof ef->ops[k]);
        ef->ops[k].desc = &vki_op_orient;
        ef->ops[k].args.v[0] = orientation;
        ef->ops[k].args.set[0] = true;
        k++;
    }
    /* flatten goes before an op that writes several images (the levels of mipmaps),
     * and before the ops at the end that give the same result flattened before or
     * after (commutes_with_flatten): an RGBA photo with alpha blurred into a JPEG is
     * then blurred as RGB */
    int before = flatten && last->outputs ? p->n - 1 : p->n;
    while (flatten && before > 0 && commutes_with_flatten(&p->ops[before - 1]))
        before--;
    memcpy(&ef->ops[k], p->ops, (size_t)before * sizeof *p->ops);
    k += before;
    if (flatten) {
        memset(&ef->ops[k], 0, sizeof ef->ops[k]);
        ef->ops[k].desc = &vki_op_flatten;
        ef->ops[k].args.v[0] = 1; /* background: black, opaque (x[0][0..2] 0) */
        ef->ops[k].args.x[0][3] = 1.0;
        k++;
    }
    memcpy(&ef->ops[k], p->ops + before, (size_t)(p->n - before) * sizeof *p->ops);
    ef->p.n = n;
    ef->p.ops = ef->ops;
    return 0;
}

/* The size the pipeline's geometry is resolved against: the input's in its
 * file (vkimg_run_opts.src_w/h, where the decoder shrank it), else in's. */
static void geo_size(const vkimg_image *in, const vkimg_run_opts *o, int *gw, int *gh)
{
    *gw = o && o->src_w > 0 ? o->src_w : in->w;
    *gh = o && o->src_h > 0 ? o->src_h : in->h;
}

/* The plan of the run of p on in; *drop: it is planned for in without its alpha
 * (vki_drop_alpha fills the input). */
static int plan_for(vki_gpu *g, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
                    effective *ef, vki_plan *pl, bool *drop, vkimg_err *e)
{
    *drop = false;
    int rc = effective_pipeline(p, o, in->c, ef, e);
    if (rc)
        return rc;
    int gw, gh;
    geo_size(in, o, &gw, &gh);
    const vkimg_fmt out_fmt = o ? o->out_fmt : in->fmt;
    rc = vki_plan_create(g, &ef->p, in->w, in->h, in->c, gw, gh, in->fmt, out_fmt, pl, e);
    /* On CPU devices, where an op with a faster path for opaque input (blur) comes
     * before any op that does not copy alpha: look at the input's alpha (~6 ms for
     * 5120x2880 RGBA, against ~100 ms of blur=3). GPUs do not look: their bytes stay
     * the alpha-aware path's. VKIMG_OPAQUE=0 never looks. */
    if (!rc && in->data && !in->coded && vki_plan_looks_at_alpha(pl))
        pl->opaque = vki_alpha_opaque(in->data, vkimg_image_bytes(in), in->c, vkimg_fmt_size(in->fmt));
    /* Opaque, and the caller keeps no alpha: a quarter less to blur for RGBA,
     * half for gray + alpha (for ~10-25 ms of vki_drop_alpha on 5120x2880 RGBA) */
    if (!rc && pl->opaque && o && o->alpha_unused && vki_plan_may_drop_alpha(pl)) {
        vki_plan_destroy(g, pl);
        if (!(rc = effective_pipeline(p, o, in->c - 1, ef, e))) /* (no flatten then) */
            rc = vki_plan_create(g, &ef->p, in->w, in->h, in->c - 1, gw, gh, in->fmt, out_fmt, pl, e);
        *drop = !rc;
    }
    return rc;
}

void vkimg_pipeline_min_input(const vkimg_pipeline *p, int w, int h, int orientation, int *min_w, int *min_h)
{
    int mw = w, mh = h;
    bool swap = orientation >= 5 && orientation <= 8; /* the upright image is h x w */
    const vki_pipe_op *op = p && p->n > 0 ? &p->ops[0] : NULL;
    if (op && op->desc->min_input) {
        if (swap)
            op->desc->min_input(h, w, &op->args, &mh, &mw);
        else
            op->desc->min_input(w, h, &op->args, &mw, &mh);
    }
    if (min_w)
        *min_w = mw;
    if (min_h)
        *min_h = mh;
}

int vkimg_pipeline_outputs(const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o, vkimg_err *e)
{
    effective ef;
    vki_shape s;
    if (!p || !in)
        return -vki_fail(e, VKIMG_E_USAGE, "vkimg_pipeline_outputs: NULL argument");
    if (effective_pipeline(p, o, in->c, &ef, e))
        return -1;
    int gw, gh;
    geo_size(in, o, &gw, &gh);
    if (vki_pipeline_shape(&ef.p, in->w, in->h, in->c, gw, gh, &s, e))
        return -1;
    return s.nout;
}

int vkimg_prepare(vkimg_ctx *ctx, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
                  vkimg_err *e)
{
    vkimg_err local;
    if (!e)
        e = &local;
    vki_err_clear(e);
    if (!ctx || !p || !in)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_prepare: NULL argument");
    effective ef, without; /* (an input without its alpha: no flatten) */
    int rc = effective_pipeline(p, o, in->c, &ef, e);
    const bool alpha_unused = o && o->alpha_unused && VKI_HAS_ALPHA(in->c);
    if (!rc && alpha_unused) /* (vki_plan_prepare's plan of the input without its alpha) */
        rc = effective_pipeline(p, o, in->c - 1, &without, e);
    if (rc)
        return rc;
    int gw, gh;
    geo_size(in, o, &gw, &gh);
    return vki_plan_prepare(&ctx->gpu, &ef.p, alpha_unused ? &without.p : NULL, in->w, in->h, in->c, gw, gh, in->fmt,
                            o ? o->out_fmt : in->fmt, o && o->alpha_unused, e);
}

/* The device's Huffman decoding of a JPEG scan (vki_jpeg_rec_entropy) went
 * wrong: VKIMG_E_AGAIN, saying what it found (the caller decodes the file on the
 * host, where libjpeg names the damage, or decodes it). */
static int entropy_status(vki_gpu *g, const uint32_t *st, vkimg_err *e)
{
    const int rounds = vki_jpeg_sync_rounds();
    char changed[256];
    int at = 0;
    for (int r = 0; r < rounds && at < (int)sizeof changed - 12; r++)
        at += snprintf(changed + at, sizeof changed - (size_t)at, "%s%u", r ? " " : "", st[1 + r]);
    vki_gpu_log(g, VKIMG_LOG_DEBUG, "JPEG Huffman decoding: exits changed a round: %s; errors 0x%x", changed, st[0]);
    static const struct {
        uint32_t bit;
        const char *what;
    } why[] = { { VKI_JH_ERR_CODE, "no Huffman code where one belongs" },
                { VKI_JH_ERR_COUNT, "a restart interval with another number of blocks than its MCUs" },
                { VKI_JH_ERR_EXTRA, "data after a restart interval's last block" },
                { VKI_JH_ERR_DC, "a DC difference of more than 11 bits" },
                { VKI_JH_ERR_SYNC, "its subsequences did not synchronize" } };
    const uint32_t bits = st[0] | (st[rounds] ? VKI_JH_ERR_SYNC : 0);
    for (size_t i = 0; i < sizeof why / sizeof why[0]; i++)
        if (bits & why[i].bit)
            return vki_fail(e, VKIMG_E_AGAIN, "JPEG: the device did not decode the entropy-coded data (%s)",
                            why[i].what);
    return 0;
}

int vkimg_run_n(vkimg_ctx *ctx, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
                vkimg_image *out, int n, vkimg_err *e)
{
    vkimg_err local;
    if (!e)
        e = &local;
    vki_err_clear(e);
    if (out)
        memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof *out);
    if (!ctx || !p || !in || !out || n < 1)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_run: NULL argument");
    if (!in->data)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_run: the input image has no data");
    vki_gpu *g = &ctx->gpu;
    double t_start = vki_now_ms();
    effective ef;
    vki_plan pl;
    vki_run *run = NULL;
    struct vkimg_coded *cout = NULL; /* the layout of a JPEG output coded on the device */
    VkDeviceAddress coef_out = 0;
    int rc, slot[VKI_MAX_OUTPUTS], n_declared = 0;
    bool drop;
    double drop_ms = 0;
    if ((rc = plan_for(g, p, in, o, &ef, &pl, &drop, e)))
        return rc;
    const double t_planned = vki_now_ms();
    const vki_shape *s = &pl.s;
    if (s->nout != n) {
        rc = vki_fail(e, VKIMG_E_USAGE, "the pipeline writes %d image(s) for this input, %d asked for%s", s->nout, n,
                      s->nout > 1 ? " (vkimg_run_n with vkimg_pipeline_outputs)" : "");
        goto done;
    }
    /* a coded JPEG input: its coefficients go up, the device finishes the decode */
    const struct vkimg_coded *cin = in->coded;
    if (cin && (in->fmt != VKIMG_U8 || in->c != (cin->ncomp == 1 ? 1 : 3))) {
        rc = vki_fail(e, VKIMG_E_USAGE, "vkimg_run: a coded JPEG input of %d channels, %s", in->c,
                      vkimg_fmt_name(in->fmt));
        goto done;
    }
    /* a JPEG output coded on the device: the host only entropy-codes it */
    const vki_op_desc *last = pl.p->ops[pl.n - 1].desc;
    if (o && o->jpeg_quality && n == 1 && pl.out_fmt == VKIMG_U8 && !last->data_output &&
        (rc = vki_jpeg_coded_layout(s->out_w[0], s->out_h[0], s->c[s->n], o->jpeg_quality, &cout, e)))
        goto done;
    const size_t in_bytes = cin ? (cin->entropy ? cin->entropy_bytes : cin->ncoef * sizeof(int16_t)) : pl.in_bytes;
    const char *in_what = cin ? (cin->entropy ? "input JPEG scan" : "input JPEG coefficients") : "input image";
    VkDeviceAddress status_addr = 0; /* a JPEG scan the device decodes: how that went */
    int status_slot = -1;
    VkDeviceAddress in_addr;
    const vki_buf *inbuf = drop ? NULL : vki_devimg_buf(in, g); /* decoded into device-visible memory: no host copy */
    void *in_host = NULL;
    if ((rc = vki_run_begin(g, o && o->timing, &run, e)) ||
        (rc = inbuf ? vki_run_input_buf(run, inbuf, in_bytes, in_what, &in_addr)
              : drop ? vki_run_input(run, NULL, in_bytes, "input image without its alpha", &in_addr, &in_host)
                     : vki_run_input(run, in->data, in_bytes, in_what, &in_addr, NULL)))
        goto done;
    if (drop) {
        const double t = vki_now_ms();
        vki_drop_alpha(in_host, in->data, (size_t)in->w * (size_t)in->h, in->c, vkimg_fmt_size(in->fmt));
        drop_ms = vki_now_ms() - t;
        vki_gpu_log(g, VKIMG_LOG_DEBUG, "input image: its alpha is all at the maximum and left behind (%.2f ms)",
                    drop_ms);
    }
    pl.in = in_addr;
    /* an output that is the input as it is (mipmaps' level 0): copied from the input
     * on the host below, unless the caller wants it in device memory */
    const bool out0_in = pl.out0_is_input && !cin && !(o && o->device_output);
    /* the device Huffman-codes it too: the entropy-coded data straight into host memory */
    const bool huff_out = cout && o->jpeg_entropy && vki_jpeg_huff_encode_fits(cout);
    VkDeviceAddress enc_status = 0;
    int enc_slot = -1;
    if (cout) {
        if (huff_out ? (rc = vki_run_output_host(run, vki_jpeg_huff_out_bytes(cout), "output JPEG data", &coef_out,
                                                 &slot[0])) ||
                           (rc = vki_run_output(run, 2 * sizeof(uint32_t), true, "JPEG coding status", &enc_status,
                                                &enc_slot))
                     : (rc = vki_run_output(run, cout->ncoef * sizeof(int16_t), false, "output JPEG coefficients",
                                            &coef_out, &slot[0])))
            goto done;
        n_declared = 1;
    }
    /* the result over the input, where the caller lets it (vkimg_run_opts.consume) and the op can: no
     * memory of its own, which on a CPU device costs its first touch (docs/performance.md) */
    const bool over = o && o->consume == in && in && o->device_output && !cin && !cout && !drop && n == 1 &&
                      vki_run_input_in_place(run, 0) && vki_plan_in_place(&pl, g);
    if (over)
        vki_gpu_log(g, VKIMG_LOG_DEBUG, "%s: its output over its input", pl.p->ops[0].desc->name);
    for (int k = n_declared; k < n; k++) {
        if (k == 0 && (over || out0_in)) {
            pl.outs[0] = pl.in;
            slot[0] = -1;
            continue;
        }
        if ((rc = vki_run_output(run, pl.out_bytes[k], false, n > 1 ? "output level" : "output image", &pl.outs[k],
                                 &slot[k])))
            goto done;
    }
    if (cin && cin->entropy &&
        (rc = vki_run_output(run, sizeof(uint32_t) * (1 + (size_t)vki_jpeg_sync_rounds()), true,
                             "JPEG decode status", &status_addr, &status_slot)))
        goto done;
    const double t_buffers = vki_now_ms();
    vki_rec *rec = vki_run_rec(run);
    if (cin) {
        VkDeviceAddress coefs = in_addr;
        if (cin->entropy) { /* the Huffman codes first */
            if ((rc = vki_jpeg_rec_entropy(rec, cin, in_addr, status_addr, &coefs)))
                goto done;
            vki_run_mark(run, "jpeg huffman");
        }
        if ((rc = vki_rec_scratch(rec, vki_jpeg_pixels_bytes(in->w, in->h, in->c), "decoded JPEG", &pl.in)) ||
            (rc = vki_jpeg_rec_decode(rec, cin, coefs, in->w, in->h, pl.in)))
            goto done;
        vki_run_mark(run, "jpeg decode");
    }
    if (cout && (rc = vki_rec_scratch(rec, vki_jpeg_pixels_bytes(s->out_w[0], s->out_h[0], s->c[s->n]),
                                      "image to JPEG-code", &pl.outs[0])))
        goto done;
    if ((rc = vki_plan_record(&pl, run)))
        goto done;
    if (cout) {
        VkDeviceAddress coefs = coef_out;
        if ((huff_out && (rc = vki_rec_scratch(rec, cout->ncoef * sizeof(int16_t), "output JPEG coefficients",
                                               &coefs))) ||
            (rc = vki_jpeg_rec_encode(rec, cout, pl.outs[0], s->out_w[0], s->out_h[0], s->c[s->n], coefs)))
            goto done;
        vki_run_mark(run, "jpeg encode");
        if (huff_out) {
            if ((rc = vki_jpeg_rec_huff_encode(rec, cout, coefs, coef_out, enc_status)))
                goto done;
            vki_run_mark(run, "jpeg huffman coding");
        }
    }
    if ((rc = vki_run_submit(run)))
        goto done;
    if (status_slot >= 0 && (rc = entropy_status(g, vki_run_output_data(run, status_slot), e)))
        goto done;
    if (enc_slot >= 0) { /* the entropy-coded data's length, or that it did not fit */
        const uint32_t *st = vki_run_output_data(run, enc_slot);
        if (st[0] & (VKI_JE_ERR_FULL | VKI_JE_ERR_RANGE)) {
            rc = st[0] & VKI_JE_ERR_RANGE
                     ? vki_fail(e, VKIMG_E_AGAIN, "JPEG: a DCT coefficient the Huffman tables have no code for")
                     : vki_fail(e, VKIMG_E_AGAIN, "JPEG: the entropy-coded data is larger than the %zu bytes the "
                                "device writes it into", vki_jpeg_huff_out_bytes(cout) - 16);
            goto done;
        }
        cout->entropy = true;
        cout->entropy_bytes = st[1];
    }
    double t0 = vki_now_ms();
    for (int k = 0; k < n; k++) {
        if (over) { /* the input's memory: the input, emptied (its caller frees nothing), is the result now */
            out[0] = *o->consume;
            out[0].w = s->out_w[0];
            out[0].h = s->out_h[0];
            out[0].c = s->c[s->n];
            out[0].fmt = pl.out_fmt;
            memset(o->consume, 0, sizeof *o->consume);
            continue;
        }
        if (o && o->device_output) { /* the result stays where the device wrote it */
            vki_buf b;
            if ((rc = vki_run_take_output(run, slot[k], &b)) ||
                (rc = vki_devimg_adopt(g, &b, &out[k], s->out_w[k], s->out_h[k], s->c[s->n], pl.out_fmt, e)))
                goto done;
            if (cout) { /* the coefficients (or their entropy-coded data), with their layout */
                out[k].coded = cout;
                cout = NULL;
            }
            continue;
        }
        if (cout) {
            const size_t bytes = cout->entropy ? cout->entropy_bytes : cout->ncoef * sizeof(int16_t);
            out[k] = (vkimg_image){ .w = s->out_w[k], .h = s->out_h[k], .c = s->c[s->n], .fmt = VKIMG_U8,
                                    .data = vki_malloc_big(bytes) };
            if (!out[k].data) {
                rc = vki_fail(e, VKIMG_E_RUNTIME, "out of memory (%zu bytes)", bytes);
                goto done;
            }
            memcpy(out[k].data, vki_run_output_data(run, slot[k]), bytes);
            out[k].coded = cout;
            cout = NULL;
            continue;
        }
        if ((rc = vki_image_alloc(&out[k], s->out_w[k], s->out_h[k], s->c[s->n], pl.out_fmt, false, e)))
            goto done; /* copied whole below */
        memcpy(out[k].data, slot[k] < 0 ? in->data : vki_run_output_data(run, slot[k]), pl.out_bytes[k]);
    }
    double host_readback = vki_now_ms() - t0;
    if (o && o->timing) {
        vkimg_timing *t = o->timing;
        vki_run_times(run, t);
        t->upload_ms += drop_ms;
        t->up_host_ms += drop_ms;
        t->readback_ms += host_readback;
        t->down_host_ms = host_readback;
        t->t_begin_ms = t_start;
        t->t_planned_ms = t_planned;
        t->t_buffers_ms = t_buffers;
        t->t_end_ms = vki_now_ms();
        t->total_ms = t->t_end_ms - t_start;
    }
done:
    if (rc)
        for (int k = 0; k < n; k++)
            vkimg_image_free(&out[k]);
    free(cout);
    vki_run_end(run);
    vki_plan_destroy(g, &pl);
    return rc;
}

int vkimg_run(vkimg_ctx *ctx, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
              vkimg_image *out, vkimg_err *e)
{
    return vkimg_run_n(ctx, p, in, o, out, 1, e);
}
