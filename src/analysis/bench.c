/* vki_bench: per-op GPU times against a device-copy ceiling measured in the
 * same run (bench.h). Every measurement is a run of the run engine: the
 * pipeline's kernels, the copy kernel, and the upload and readback an image
 * goes through. */
#include "analysis/bench.h"
#include "exec/exec.h"
#include "core/util.h"
#include "spv/bench.spv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_push {
    vki_addr src, dst;
    uint32_t n, seed;
} bench_push;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int bench_dispatch(vki_rec *r, int mode, int floats, VkDeviceAddress src, VkDeviceAddress dst, uint32_t n,
                          uint32_t seed)
{
    vki_spec spec = { 0 };
    uint32_t wg = vki_wg_1d(r->gpu);
    vki_spec_set(&spec, VKI_SPEC_LX, wg);
    vki_spec_set(&spec, VKI_SPEC_LY, 1);
    vki_spec_set(&spec, VKI_SPEC_LZ, 1);
    vki_spec_named(&spec, "MODE", (uint32_t)mode);
    vki_spec_named(&spec, "FLOATS", (uint32_t)floats);
    bench_push pc = { vki_addr_of(src), vki_addr_of(dst), n, seed };
    /* a few elements per invocation, grid-stride */
    uint64_t groups = ((uint64_t)n + wg * 4ull - 1) / (wg * 4ull);
    static const char *const names[] = { "bench-fill", "bench-copy", "bench-read" };
    return vki_rec_dispatch_1d(r, names[mode], VKI_SPV(bench), &spec, &pc, sizeof pc,
                               groups ? groups : 1);
}

/* One run of one stage of kernels: its GPU time. */
typedef struct kernels {
    int mode, floats; /* bench.comp: 0 fill, 1 copy, 2 read */
    VkDeviceAddress src, dst;
    uint32_t n, seed;
} kernels;

static int run_kernels(vki_gpu *g, const kernels *k, double *ms, vkimg_err *e)
{
    vki_run *run = NULL;
    vkimg_timing t = { 0 };
    int rc = vki_run_begin(g, true, &run, e);
    if (!rc)
        rc = bench_dispatch(vki_run_rec(run), k->mode, k->floats, k->src, k->dst, k->n, k->seed);
    vki_run_mark(run, "kernels");
    if (!rc)
        rc = vki_run_submit(run);
    if (!rc) {
        vki_run_times(run, &t);
        *ms = t.nstages ? t.stage[0].gpu_ms : 0;
    }
    vki_run_end(run);
    return rc;
}

/* The upload (dir 0) or readback (dir 1) of `bytes` as an image goes through:
 * host wall time of the whole run and the device time of its copies. */
static int run_transfer(vki_gpu *g, int dir, void *host, size_t bytes, double *wall_ms, double *copy_ms, vkimg_err *e)
{
    vki_run *run = NULL;
    VkDeviceAddress addr;
    int slot = -1;
    double t0 = vki_now_ms();
    int rc = vki_run_begin(g, true, &run, e);
    if (!rc)
        rc = dir == 0 ? vki_run_input(run, host, bytes, "bench upload", &addr, NULL)
                      : vki_run_output(run, bytes, false, "bench readback", &addr, &slot);
    if (!rc)
        rc = vki_run_submit(run);
    if (!rc && dir == 1)
        memcpy(host, vki_run_output_data(run, slot), bytes);
    *wall_ms = vki_now_ms() - t0;
    if (!rc) {
        double up, down;
        vki_run_copies(run, &up, &down);
        *copy_ms = dir == 0 ? up : down;
    }
    vki_run_end(run);
    return rc;
}

int vki_bench(vkimg_ctx *ctx, const vkimg_pipeline *p, const vki_bench_opts *o, vki_bench_result *r, vkimg_err *e)
{
    vki_err_clear(e);
    vki_gpu *g = &ctx->gpu;
    vki_bench_opts opt = o ? *o : (vki_bench_opts){ 0 };
    if (!opt.w || !opt.h) {
        opt.w = 7680;
        opt.h = 4320;
    }
    if (!opt.c)
        opt.c = 3;
    if (opt.repeat < 1)
        opt.repeat = 20;
    memset(r, 0, sizeof *r);
    r->w = opt.w;
    r->h = opt.h;
    r->c = opt.c;
    r->fmt = opt.fmt;
    r->repeat = opt.repeat;
    if (!g->lim.timestamp_bits)
        return vki_fail(e, VKIMG_E_RUNTIME, "bench: the device's queue has no timestamps");

    vki_plan pl;
    vki_buf inb = { 0 }, outb[VKI_MAX_OUTPUTS] = { { 0 } }, ca = { 0 }, cb = { 0 };
    double *times = NULL;
    void *host = NULL;
    int rc;
    int n = p->n;
    if ((rc = vki_plan_create(g, p, opt.w, opt.h, opt.c, opt.w, opt.h, opt.fmt, opt.fmt, &pl, e)))
        return rc;
    times = calloc((size_t)(n + 1) * (size_t)opt.repeat, sizeof *times);
    if (!times) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
        goto done;
    }
    /* the input and output stay on the device for every repetition */
    if ((rc = vki_buf_create(g, (pl.in_bytes + 11) / 12 * 12, VKI_MEM_DEVICE, "bench input", &inb, e)))
        goto done;
    pl.in = inb.addr;
    for (int k = 0; k < pl.s.nout; k++) {
        if (k == 0 && pl.out0_is_input) { /* the input as it is: nothing to write */
            pl.outs[0] = inb.addr;
            continue;
        }
        if ((rc = vki_buf_create(g, (pl.out_bytes[k] + 3) / 4 * 4, VKI_MEM_DEVICE, "bench output", &outb[k], e)))
            goto done;
        pl.outs[k] = outb[k].addr;
    }

    /* 1. random input on the device */
    double ms;
    kernels fill = { 0, opt.fmt == VKIMG_F32, 0, inb.addr, (uint32_t)((pl.in_bytes + 3) / 4), 12345 };
    if ((rc = run_kernels(g, &fill, &ms, e)))
        goto done;

    /* 2. the pipeline: first recording creates the kernels; then again from the
     *    pipeline cache; then warm-up + timed repetitions */
    for (int it = -2; it < opt.repeat; it++) {
        vki_run *run = NULL;
        if (it == -1)
            vki_gpu_drop_kernels(g); /* recreate them through the VkPipelineCache */
        if ((rc = vki_run_begin(g, true, &run, e)))
            goto done;
        double t0 = vki_now_ms();
        rc = vki_plan_record(&pl, run);
        double rec_ms = vki_now_ms() - t0;
        if (it == -2)
            r->pipeline_create_ms = rec_ms;
        else if (it == -1)
            r->pipeline_cached_ms = rec_ms;
        if (!rc)
            rc = vki_run_submit(run);
        vkimg_timing t;
        if (!rc)
            vki_run_times(run, &t);
        vki_run_end(run);
        if (rc)
            goto done;
        if (it < 0)
            continue;
        for (int i = 0; i < n; i++)
            times[(size_t)i * opt.repeat + it] = i < t.nstages ? t.stage[i].gpu_ms : 0;
        times[(size_t)n * opt.repeat + it] = t.gpu_total_ms;
    }

    /* 3. copy ceiling: compute-shader copy of 256 MiB (beyond any L2), median of 5 */
    {
        VkDeviceSize cbytes = 256ull << 20;
        if (cbytes > g->lim.max_alloc / 2)
            cbytes = g->lim.max_alloc / 2 & ~(VkDeviceSize)15;
        if ((rc = vki_buf_create(g, cbytes, VKI_MEM_DEVICE, "bench copy source", &ca, e)) ||
            (rc = vki_buf_create(g, cbytes, VKI_MEM_DEVICE, "bench copy destination", &cb, e)))
            goto done;
        kernels copy = { 1, 0, ca.addr, cb.addr, (uint32_t)(cbytes / 16), 0 };
        double t[6];
        for (int i = 0; i < 6; i++)
            if ((rc = run_kernels(g, &copy, &t[i], e)))
                goto done;
        double m = median(t + 1, 5);
        r->copy_bytes = 2.0 * (double)cbytes;
        r->copy_gbps = r->copy_bytes / (m * 1e-3) / 1e9;
    }

    /* 3b. the input read once (a read-only kernel over its 16-byte vectors), median of 5 */
    {
        kernels rd = { 2, 0, inb.addr, cb.addr, (uint32_t)(pl.in_bytes / 16), 0x9e3779b9u };
        double t[6];
        for (int i = 0; i < 6; i++)
            if ((rc = run_kernels(g, &rd, &t[i], e)))
                goto done;
        r->read_input_ms = median(t + 1, 5);
    }

    /* 4. the upload of the input and the readback of the output, as an image
     *    goes through them (median of 5) */
    {
        size_t ob = pl.out_bytes[0], hb = pl.in_bytes > ob ? pl.in_bytes : ob;
        if (!(host = malloc(hb))) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
            goto done;
        }
        memset(host, 0x33, hb);
        double hu[5], tu[5], hd[5], td[5];
        for (int i = 0; i < 5; i++)
            if ((rc = run_transfer(g, 0, host, pl.in_bytes, &hu[i], &tu[i], e)) ||
                (rc = run_transfer(g, 1, host, ob, &hd[i], &td[i], e)))
                goto done;
        double mu = median(tu, 5), md = median(td, 5);
        r->staging_h2d_gbps = mu > 0 ? pl.in_bytes / (mu * 1e-3) / 1e9 : 0;
        r->staging_d2h_gbps = md > 0 ? ob / (md * 1e-3) / 1e9 : 0;
        r->upload_gbps = pl.in_bytes / (median(hu, 5) * 1e-3) / 1e9;
        r->readback_gbps = ob / (median(hd, 5) * 1e-3) / 1e9;
    }

    /* 5. per-op figures */
    {
        r->nstages = n;
        for (int i = 0; i < n; i++) {
            vki_bench_stage *st = &r->stage[i];
            const vki_op_desc *d = p->ops[i].desc;
            snprintf(st->name, sizeof st->name, "%s", d->name);
            double *t = times + (size_t)i * opt.repeat;
            st->median_ms = median(t, opt.repeat);
            st->min_ms = t[0];
            int in_size = (int)vkimg_fmt_size(i == 0 ? pl.in_fmt : vki_plan_inter_fmt(&pl, i - 1));
            int out_size = (int)vkimg_fmt_size(i == n - 1 ? pl.out_fmt : vki_plan_inter_fmt(&pl, i));
            /* the fewest bytes: read the input once, write the output(s) once */
            const vki_shape *sh = &pl.s;
            st->bytes = (double)sh->w[i] * sh->h[i] * sh->c[i] * in_size;
            int nout = i == n - 1 ? sh->nout : 1;
            for (int k = i == n - 1 && pl.out0_is_input ? 1 : 0; k < nout; k++)
                st->bytes += (double)(nout > 1 ? sh->out_w[k] : sh->w[i + 1]) * (nout > 1 ? sh->out_h[k] : sh->h[i + 1]) *
                             sh->c[i + 1] * out_size;
            st->gbps = st->median_ms > 0 ? st->bytes / (st->median_ms * 1e-3) / 1e9 : 0;
            st->pct_copy = r->copy_gbps > 0 ? 100.0 * st->gbps / r->copy_gbps : 0;
        }
        double *t = times + (size_t)n * opt.repeat;
        r->total_median_ms = median(t, opt.repeat);
        r->total_min_ms = t[0];
    }
    rc = 0;

done:
    free(times);
    free(host);
    vki_buf_destroy(g, &ca);
    vki_buf_destroy(g, &cb);
    vki_buf_destroy(g, &inb);
    for (int k = 0; k < VKI_MAX_OUTPUTS; k++)
        vki_buf_destroy(g, &outb[k]);
    vki_plan_destroy(g, &pl);
    return rc;
}
