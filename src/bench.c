/* vkimg_bench: per-op GPU times against a device-copy ceiling measured in the
 * same run. See vkimg.h. */
#include "api.h"
#include "exec.h"
#include "pipeline.h"
#include "util.h"
#include "bench.spv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SPEC_MODE = VKI_SPEC_OP, SPEC_FLOATS };

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
    vki_spec_set(&spec, SPEC_MODE, (uint32_t)mode);
    vki_spec_set(&spec, SPEC_FLOATS, (uint32_t)floats);
    bench_push pc = { vki_addr_of(src), vki_addr_of(dst), n, seed };
    /* a few elements per invocation, grid-stride */
    uint64_t groups = ((uint64_t)n + wg * 4ull - 1) / (wg * 4ull);
    return vki_rec_dispatch_1d(r, mode ? "bench-copy" : "bench-fill", bench_spv, sizeof bench_spv, &spec, &pc, sizeof pc,
                               groups ? groups : 1);
}

/* Records `body` between two timestamps, submits, waits; returns GPU ms. */
typedef int (*record_fn)(vki_rec *r, void *user);

static int timed(vki_gpu *g, VkQueryPool qp, record_fn fn, void *user, double *ms, vkimg_err *e)
{
    vki_rec rec = { .gpu = g, .e = e };
    vki_cmd cmd;
    int rc = vki_cmd_begin(g, &cmd, e);
    if (rc)
        return rc;
    rec.cmd = cmd.cmd;
    vkCmdResetQueryPool(cmd.cmd, qp, 0, 2);
    vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
    rc = fn(&rec, user);
    vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
    if (rc) {
        vki_cmd_abort(g, &cmd);
        vki_rec_release(&rec);
        return rc;
    }
    rc = vki_cmd_submit_wait(g, &cmd, e);
    vki_rec_release(&rec);
    if (rc)
        return rc;
    uint64_t v[2];
    VKI_VK(vkGetQueryPoolResults(g->dev, qp, 0, 2, sizeof v, v, sizeof v[0], VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    *ms = (double)(v[1] - v[0]) * g->lim.timestamp_period * 1e-6;
    return 0;
fail:
    return e->code;
}

struct copy_job {
    const vki_buf *src, *dst;
    int mode; /* 0: compute copy, 1: vkCmdCopyBuffer */
    VkDeviceSize bytes;
};

static int rec_copy(vki_rec *r, void *user)
{
    struct copy_job *j = user;
    if (j->mode == 1) {
        VkBufferCopy c = { .size = j->bytes };
        vkCmdCopyBuffer(r->cmd, j->src->buf, j->dst->buf, 1, &c);
        return 0;
    }
    return bench_dispatch(r, 1, 0, j->src->addr, j->dst->addr, (uint32_t)(j->bytes / 16), 0);
}

int vkimg_bench(vkimg_ctx *ctx, const vkimg_pipeline *p, const vkimg_bench_opts *o, vkimg_bench_result *r, vkimg_err *e)
{
    vki_err_clear(e);
    vki_gpu *g = &ctx->gpu;
    vkimg_bench_opts opt = o ? *o : (vkimg_bench_opts){ 0 };
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

    vki_plan pl = { 0 };
    vki_buf ca = { 0 }, cb = { 0 }, up = { 0 }, down = { 0 };
    VkQueryPool qp = VK_NULL_HANDLE, qp2 = VK_NULL_HANDLE;
    double *times = NULL;
    int rc;
    int n = p->n;
    if ((rc = vki_plan_create(g, p, opt.w, opt.h, opt.c, opt.fmt, opt.fmt, true, &pl, e)))
        return rc;
    uint32_t nts = (uint32_t)n + 1;
    VkQueryPoolCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = nts };
    VKI_VK(vkCreateQueryPool(g->dev, &qci, NULL, &qp));
    qci.queryCount = 2;
    VKI_VK(vkCreateQueryPool(g->dev, &qci, NULL, &qp2));
    times = calloc((size_t)(n + 1) * (size_t)opt.repeat, sizeof *times);
    if (!times) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
        goto done;
    }

    /* 1. random input on the device */
    {
        vki_rec rec = { .gpu = g, .e = e };
        vki_cmd cmd;
        if ((rc = vki_cmd_begin(g, &cmd, e)))
            goto done;
        rec.cmd = cmd.cmd;
        rc = bench_dispatch(&rec, 0, opt.fmt == VKIMG_F32, 0, pl.inb.addr, (uint32_t)((pl.in_bytes + 3) / 4), 12345);
        if (!rc)
            rc = vki_cmd_submit_wait(g, &cmd, e);
        else
            vki_cmd_abort(g, &cmd);
        if (rc)
            goto done;
    }

    /* 2. the pipeline: first recording creates the kernels; then again from the
     *    pipeline cache; then warm-up + timed repetitions */
    for (int it = -2; it < opt.repeat; it++) {
        vki_rec rec = { .gpu = g, .e = e };
        vki_cmd cmd;
        if (it == -1)
            vki_gpu_drop_kernels(g); /* recreate them through the VkPipelineCache */
        if ((rc = vki_cmd_begin(g, &cmd, e)))
            goto done;
        rec.cmd = cmd.cmd;
        vkCmdResetQueryPool(cmd.cmd, qp, 0, nts);
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
        double t0 = vki_now_ms();
        rc = vki_plan_record(&pl, &rec, qp, 0);
        double rec_ms = vki_now_ms() - t0;
        if (it == -2)
            r->pipeline_create_ms = rec_ms;
        else if (it == -1)
            r->pipeline_cached_ms = rec_ms;
        if (!rc)
            rc = vki_cmd_submit_wait(g, &cmd, e);
        else
            vki_cmd_abort(g, &cmd);
        vki_rec_release(&rec);
        if (rc)
            goto done;
        if (it < 0)
            continue;
        uint64_t v[VKIMG_MAX_STAGES + 1];
        VKI_VK(vkGetQueryPoolResults(g->dev, qp, 0, nts, sizeof v, v, sizeof v[0],
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        double per = g->lim.timestamp_period * 1e-6;
        for (int i = 0; i < n; i++)
            times[(size_t)i * opt.repeat + it] = (double)(v[i + 1] - v[i]) * per;
        times[(size_t)n * opt.repeat + it] = (double)(v[n] - v[0]) * per;
    }

    /* 3. copy ceiling: compute-shader copy of 256 MiB (beyond any L2), median of 5 */
    {
        VkDeviceSize cbytes = 256ull << 20;
        if (cbytes > g->lim.max_alloc / 2)
            cbytes = g->lim.max_alloc / 2 & ~(VkDeviceSize)15;
        if ((rc = vki_buf_create(g, cbytes, VKI_MEM_DEVICE, "bench copy source", &ca, e)) ||
            (rc = vki_buf_create(g, cbytes, VKI_MEM_DEVICE, "bench copy destination", &cb, e)))
            goto done;
        struct copy_job j = { &ca, &cb, 0, cbytes };
        double t[6];
        for (int i = 0; i < 6; i++)
            if ((rc = timed(g, qp2, rec_copy, &j, &t[i], e)))
                goto done;
        double m = median(t + 1, 5);
        r->copy_bytes = 2.0 * (double)cbytes;
        r->copy_gbps = r->copy_bytes / (m * 1e-3) / 1e9;
    }

    /* 4. staging transfers of the input and output sizes */
    {
        if ((rc = vki_buf_create(g, pl.in_bytes, VKI_MEM_UPLOAD, "bench upload", &up, e)) ||
            (rc = vki_buf_create(g, pl.out_bytes, VKI_MEM_READBACK, "bench readback", &down, e)))
            goto done;
        memset(up.map, 0x5a, pl.in_bytes);
        struct copy_job ju = { &up, &pl.inb, 1, pl.in_bytes }, jd = { &pl.outb, &down, 1, pl.out_bytes };
        double tu[5], td[5], hu[5], hd[5];
        void *host = malloc(pl.in_bytes > pl.out_bytes ? pl.in_bytes : pl.out_bytes);
        if (!host) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
            goto done;
        }
        memset(host, 0x33, pl.in_bytes > pl.out_bytes ? pl.in_bytes : pl.out_bytes);
        for (int i = 0; i < 5 && !rc; i++) {
            double t0 = vki_now_ms();
            memcpy(up.map, host, pl.in_bytes);
            rc = timed(g, qp2, rec_copy, &ju, &tu[i], e);
            hu[i] = vki_now_ms() - t0;
            if (rc)
                break;
            t0 = vki_now_ms();
            rc = timed(g, qp2, rec_copy, &jd, &td[i], e);
            if (!rc)
                rc = vki_buf_invalidate(g, &down, e);
            memcpy(host, down.map, pl.out_bytes);
            hd[i] = vki_now_ms() - t0;
        }
        free(host);
        if (rc)
            goto done;
        r->staging_h2d_gbps = pl.in_bytes / (median(tu, 5) * 1e-3) / 1e9;
        r->staging_d2h_gbps = pl.out_bytes / (median(td, 5) * 1e-3) / 1e9;
        r->upload_gbps = pl.in_bytes / (median(hu, 5) * 1e-3) / 1e9;
        r->readback_gbps = pl.out_bytes / (median(hd, 5) * 1e-3) / 1e9;
    }

    /* 5. per-op figures */
    {
        double npx = (double)opt.w * opt.h;
        r->nstages = n;
        for (int i = 0; i < n; i++) {
            vkimg_bench_stage *st = &r->stage[i];
            const vki_op_desc *d = p->ops[i].desc;
            snprintf(st->name, sizeof st->name, "%s", d->name);
            double *t = times + (size_t)i * opt.repeat;
            st->median_ms = median(t, opt.repeat);
            st->min_ms = t[0];
            int in_size = (int)vkimg_fmt_size(i == 0 ? pl.in_fmt : VKIMG_F32);
            int out_size = (int)vkimg_fmt_size(i == n - 1 ? pl.out_fmt : VKIMG_F32);
            double bpp = d->min_bytes_per_px ? d->min_bytes_per_px(pl.chans[i], in_size, pl.chans[i + 1], out_size, &p->ops[i].args)
                                             : (double)pl.chans[i] * in_size + (double)pl.chans[i + 1] * out_size;
            st->bytes = bpp * npx;
            st->gbps = st->median_ms > 0 ? st->bytes / (st->median_ms * 1e-3) / 1e9 : 0;
            st->pct_copy = r->copy_gbps > 0 ? 100.0 * st->gbps / r->copy_gbps : 0;
        }
        double *t = times + (size_t)n * opt.repeat;
        r->total_median_ms = median(t, opt.repeat);
        r->total_min_ms = t[0];
    }
    rc = 0;

done:
fail:
    if (!rc && e->code)
        rc = e->code;
    free(times);
    if (qp)
        vkDestroyQueryPool(g->dev, qp, NULL);
    if (qp2)
        vkDestroyQueryPool(g->dev, qp2, NULL);
    vki_buf_destroy(g, &ca);
    vki_buf_destroy(g, &cb);
    vki_buf_destroy(g, &up);
    vki_buf_destroy(g, &down);
    vki_plan_destroy(g, &pl);
    return rc;
}
