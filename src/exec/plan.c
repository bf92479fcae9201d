/* A parsed pipeline on one image: plan its stages (sizes, channels, formats,
 * intermediates), record each op's kernels, and run it through the run engine. */
#include "exec/exec.h"
#include "core/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    /* runs on GPUs for 1-2 channels (H100, 8K, ms: copy 0.097 -> 0.059 and 0.112 ->
     * 0.106, levels 0.099 -> 0.054 and 0.112 -> 0.103; for RGB and RGBA slower) */
    uint32_t wg = vki_wg_1d(r->gpu), runs = vki_runs(r->gpu, s, s->in_c <= 2);
    vki_step_spec(s, &sp, wg, 1, 1);
    const uint32_t push_size = (uint32_t)offsetof(struct pixels_push, params) + params_size;
    if (runs)
        return vki_rec_dispatch_runs(r, s, runs, wg, name, spv, spv_size, &sp, &pc, push_size);
    return vki_rec_dispatch_1d(r, name, spv, spv_size, &sp, &pc, push_size, ((uint64_t)s->w * s->h + wg - 1) / wg);
}

vkimg_fmt vki_plan_inter_fmt(const vki_plan *pl, int i)
{
    if (!pl->cpu)
        return VKIMG_F32;
    /* alpha_kept: the alpha is still the input's samples (8- or 16-bit levels, exact
     * in u16); after a blur of alpha its small values lose most of their digits in
     * u16, and the colour the next alpha-aware op weighs by them went wrong by up to
     * 210 LSB where transparent regions begin (test_chains, blur=2,blur=1) */
    bool moved = true, unit = true, alpha_kept = true, moved_before = true;
    for (int k = 0; k <= i; k++) {
        const vki_op_desc *d = pl->p->ops[k].desc;
        const bool mv = vki_op_moves(d, &pl->p->ops[k].args);
        moved_before = moved;
        moved = moved && mv;
        unit = unit && (mv || d->unit_out);
        alpha_kept = alpha_kept && (mv || d->alpha_copied);
    }
    const char *ev = getenv("VKIMG_INTER_MOVES");
    if (moved && !(ev && !strcmp(ev, "0")))
        return pl->in_fmt;
    /* flatten of the input's 8 or 16-bit samples: rounded to them, as a flattened
     * file would hold it (the run puts it first where the output keeps no alpha:
     * apply.c; the blur after it then reads 8-bit RGB, its fastest input, as from
     * an RGB file: 5120x2880 blur=3 on lavapipe 108 ms, from u16 290-560 ms) */
    ev = getenv("VKIMG_INTER_FLATTEN");
    if (moved_before && pl->p->ops[i].desc->flattens && (pl->in_fmt == VKIMG_U8 || pl->in_fmt == VKIMG_U16) &&
        !(ev && !strcmp(ev, "0")))
        return pl->in_fmt;
    if (!unit || (VKI_HAS_ALPHA(pl->s.c[i + 1]) && !alpha_kept) ||
        (pl->in_fmt != VKIMG_U8 && pl->in_fmt != VKIMG_U16) || pl->out_fmt != VKIMG_U8 || i + 1 >= pl->n ||
        !pl->p->ops[i + 1].desc->u16_in)
        return VKIMG_F32;
    ev = getenv("VKIMG_INTER_U16");
    if (ev && !strcmp(ev, "0"))
        return VKIMG_F32;
    return VKIMG_U16;
}

/* The plan; its intermediates created where `buffers`. */
static int plan_init(vki_gpu *g, const vkimg_pipeline *p, int w, int h, int c, int geo_w, int geo_h, vkimg_fmt in_fmt,
                     vkimg_fmt out_fmt, bool buffers, vki_plan *pl, vkimg_err *e)
{
    memset(pl, 0, sizeof *pl);
    int rc = vki_pipeline_shape(p, w, h, c, geo_w, geo_h, &pl->s, e);
    if (rc)
        return rc;
    const vki_shape *s = &pl->s;
    int n = p->n;
    pl->p = p;
    pl->n = n;
    uint64_t samples = 0, inter[2] = { 0, 0 };
    for (int i = 0; i <= n; i++) {
        uint64_t k = (uint64_t)s->w[i] * (uint64_t)s->h[i] * (uint64_t)s->c[i];
        samples = k > samples ? k : samples;
    }
    if (samples > UINT32_MAX)
        return vki_fail(e, VKIMG_E_RUNTIME, "image %dx%d with %d channels is too large: a stage has more than 2^32 samples",
                        w, h, c);
    const vki_op_desc *last = p->ops[n - 1].desc;
    pl->in_fmt = in_fmt;
    pl->cpu = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    pl->out_fmt = last->data_output ? (vkimg_fmt)last->data_fmt : out_fmt;
    pl->in_bytes = (size_t)w * (size_t)h * (size_t)c * vkimg_fmt_size(in_fmt);
    pl->out0_is_input = n == 1 && last->first_output_is_input && pl->out_fmt == in_fmt && s->c[n] == c &&
                        s->nout > 1 && s->out_w[0] == w && s->out_h[0] == h;
    for (int k = 0; k < s->nout; k++)
        pl->out_bytes[k] = (size_t)s->out_w[k] * (size_t)s->out_h[k] * (size_t)s->c[n] * vkimg_fmt_size(pl->out_fmt);
    /* the images between ops, in their formats (vki_plan_inter_fmt: f32, or u16 or
     * the input's on CPU devices), alternating between two buffers */
    for (int i = 1; i < n; i++) {
        uint64_t k = (uint64_t)s->w[i] * (uint64_t)s->h[i] * (uint64_t)s->c[i] *
                     (uint64_t)vkimg_fmt_size(vki_plan_inter_fmt(pl, i - 1));
        if (k > inter[(i - 1) % 2])
            inter[(i - 1) % 2] = k;
    }
    for (int k = 0; k < 2; k++)
        if (buffers && inter[k] && (rc = vki_buf_create(g, inter[k], VKI_MEM_DEVICE, "intermediate image",
                                             &pl->inter[k], e))) {
            vki_plan_destroy(g, pl);
            return rc;
        }
    return 0;
}

int vki_plan_create(vki_gpu *g, const vkimg_pipeline *p, int w, int h, int c, int geo_w, int geo_h,
                    vkimg_fmt in_fmt, vkimg_fmt out_fmt, vki_plan *pl, vkimg_err *e)
{
    return plan_init(g, p, w, h, c, geo_w, geo_h, in_fmt, out_fmt, true, pl, e);
}

void vki_plan_destroy(vki_gpu *g, vki_plan *pl)
{
    vki_buf_destroy(g, &pl->inter[0]);
    vki_buf_destroy(g, &pl->inter[1]);
}

/* Op i's step of the plan (opaque: the input's alpha is still known to be all at its maximum). */
static vki_step plan_step(const vki_plan *pl, int i, bool opaque)
{
    const vki_pipe_op *op = &pl->p->ops[i];
    const vki_shape *sh = &pl->s;
    const bool last = i == pl->n - 1;
    return (vki_step){
        .desc = op->desc,
        .args = &op->args,
        .index = i,
        .w = sh->w[i],
        .h = sh->h[i],
        .out_w = sh->w[i + 1],
        .out_h = sh->h[i + 1],
        .geo_w = sh->geo_w[i],
        .geo_h = sh->geo_h[i],
        .in_c = sh->c[i],
        .out_c = sh->c[i + 1],
        .in_fmt = i == 0 ? pl->in_fmt : vki_plan_inter_fmt(pl, i - 1),
        .out_fmt = last ? pl->out_fmt : vki_plan_inter_fmt(pl, i),
        .in = i == 0 ? pl->in : pl->inter[(i - 1) % 2].addr,
        .out = last ? pl->outs[0] : pl->inter[i % 2].addr,
        .nout = last ? sh->nout : 1,
        .outs = last ? pl->outs : NULL,
        .outs_w = last ? sh->out_w : NULL,
        .outs_h = last ? sh->out_h : NULL,
        .in_packed_rgb8_words = i == 0 && pl->in_fmt == VKIMG_U8 && sh->c[0] == 3,
        .opaque_alpha = opaque && VKI_HAS_ALPHA(sh->c[i]),
        .levels = pl->in_fmt == VKIMG_U16 ? 65535u : 255u,
    };
}

bool vki_plan_in_place(const vki_plan *pl, const vki_gpu *g)
{
    if (pl->n != 1 || pl->s.nout != 1 || !pl->p->ops[0].desc->in_place)
        return false;
    vki_step s = plan_step(pl, 0, pl->opaque);
    s.out = s.in; /* as the run would record it */
    s.outs = &s.out;
    return s.w == s.out_w && s.h == s.out_h && s.in_c == s.out_c && s.in_fmt == s.out_fmt &&
           s.desc->in_place(g, &s);
}

/* Records the ops into rec, a stage of run (if any) each. */
static int record_ops(vki_plan *pl, vki_rec *rec, vki_run *run)
{
    int n = pl->n;
    bool opaque = pl->opaque;
    for (int i = 0; i < n; i++) {
        const vki_pipe_op *op = &pl->p->ops[i];
        const bool last = i == n - 1;
        vki_step s = plan_step(pl, i, opaque);
        if (!last && s.out_fmt != VKIMG_F32 && !rec->dry)
            vki_gpu_log(rec->gpu, VKIMG_LOG_DEBUG, "image between %s and %s: %s", op->desc->name,
                        pl->p->ops[i + 1].desc->name, vkimg_fmt_name(s.out_fmt));
        int rc = op->desc->record(rec, &s);
        if (rc)
            return rc;
        /* the next op's input: still known where alpha was copied or moved */
        opaque = opaque && (op->desc->alpha_copied || vki_op_moves(op->desc, &op->args));
        if (run)
            vki_run_mark(run, op->desc->name);
    }
    return 0;
}

int vki_plan_record(vki_plan *pl, vki_run *run)
{
    return record_ops(pl, vki_run_rec(run), run);
}

/* vki_plan_prepare's threads: each takes the next request until none is left. */
typedef struct prepare_job {
    vki_gpu *g;
    const vki_rec *rec;
    atomic_int next;
    atomic_int rc;
    vkimg_err err; /* the first failure's */
} prepare_job;

static void *prepare_thread(void *arg)
{
    prepare_job *j = arg;
    for (int i; (i = atomic_fetch_add(&j->next, 1)) < j->rec->nreq;) {
        const vki_kernel_req *q = &j->rec->req[i];
        vki_kernel *k;
        vkimg_err e = { 0 };
        int rc = vki_kernel_get(j->g, q->name, q->spv, q->spv_size, &q->spec, q->push_size, &k, &e);
        int zero = 0;
        if (rc && atomic_compare_exchange_strong(&j->rc, &zero, rc))
            j->err = e;
    }
    return NULL;
}

bool vki_plan_looks_at_alpha(const vki_plan *pl)
{
    const char *ev = getenv("VKIMG_OPAQUE");
    if (!pl->cpu || !VKI_HAS_ALPHA(pl->s.c[0]) || (pl->in_fmt != VKIMG_U8 && pl->in_fmt != VKIMG_U16) ||
        (ev && !strcmp(ev, "0")))
        return false;
    for (int i = 0; i < pl->n; i++) {
        const vki_op_desc *d = pl->p->ops[i].desc;
        if (d->opaque_fast)
            return true;
        if (!d->alpha_copied && !vki_op_moves(d, &pl->p->ops[i].args))
            return false;
    }
    return false;
}

bool vki_plan_may_drop_alpha(const vki_plan *pl)
{
    return vki_drop_alpha_on() && vki_plan_looks_at_alpha(pl) && vkimg_pipeline_keeps_opaque(pl->p);
}

int vki_plan_prepare(vki_gpu *g, const vkimg_pipeline *p, const vkimg_pipeline *p_without, int w, int h, int c,
                     int geo_w, int geo_h, vkimg_fmt in_fmt, vkimg_fmt out_fmt, bool alpha_unused, vkimg_err *e)
{
    vki_plan pl;
    int rc = plan_init(g, p, w, h, c, geo_w, geo_h, in_fmt, out_fmt, false, &pl, e);
    if (rc)
        return rc;
    vki_rec rec = { .gpu = g, .e = e, .dry = true };
    /* Pixels are not known here. Where the caller keeps no alpha and the pipeline
     * keeps it opaque, the image may come without it (the PNG decoder leaves an
     * opaque alpha out; on CPU devices the run does: vki_plan_may_drop_alpha):
     * those kernels first (made first, so a run that wants them waits least), then
     * the input's. Else, where the run will look at the input's alpha (CPU
     * devices), the kernels of an opaque input too (an opaque RGBA photograph's
     * run made them itself after decoding, about 60 ms of blur=3's). */
    const bool without = alpha_unused && VKI_HAS_ALPHA(c) && vki_drop_alpha_on() && vkimg_pipeline_keeps_opaque(p);
    if (without) {
        vki_plan rgb;
        const vkimg_pipeline *pw = p_without ? p_without : p;
        if (!(rc = plan_init(g, pw, w, h, c - 1, geo_w, geo_h, in_fmt, out_fmt, false, &rgb, e)))
            rc = record_ops(&rgb, &rec, NULL);
    }
    if (!rc)
        rc = record_ops(&pl, &rec, NULL);
    if (!rc && !without && vki_plan_looks_at_alpha(&pl)) {
        pl.opaque = true;
        rc = record_ops(&pl, &rec, NULL);
    }
    if (rc) {
        vki_rec_release(&rec);
        return rc;
    }
    prepare_job j = { .g = g, .rec = &rec };
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = (int)(ncpu < 1 ? 1 : ncpu > 16 ? 16 : ncpu);
    if (nthreads > rec.nreq)
        nthreads = rec.nreq;
    double t0 = vki_now_ms();
    const int ran = vki_run_threads(prepare_thread, &j, nthreads);
    vki_gpu_log(g, VKIMG_LOG_DEBUG, "prepare: %d dispatch(es) of %d op(s), their kernels made on %d thread(s) in %.2f ms",
                rec.nreq, pl.n, ran, vki_now_ms() - t0);
    vki_rec_release(&rec);
    if ((rc = atomic_load(&j.rc)) && e)
        *e = j.err;
    return rc;
}
