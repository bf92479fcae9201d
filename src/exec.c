/* exec: runs a parsed pipeline on one image. See exec.h and
 * docs in README ("Design"). */
#include "exec.h"
#include "pipeline.h"
#include "util.h"
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t vki_wg_1d(const vki_gpu *g)
{
    uint32_t wg = 256;
    if (wg > g->lim.max_wg_invocations)
        wg = g->lim.max_wg_invocations;
    if (wg > g->lim.max_wg_size[0])
        wg = g->lim.max_wg_size[0];
    return wg;
}

uint64_t vki_stride_groups(uint64_t items, uint32_t wg, uint32_t per_inv, uint64_t cap)
{
    uint64_t per_group = (uint64_t)wg * per_inv;
    uint64_t g = (items + per_group - 1) / per_group;
    return g < 1 ? 1 : g > cap ? cap : g;
}

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

static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                    VkAccessFlags dst_access)
{
    VkMemoryBarrier mb = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access, .dstAccessMask = dst_access };
    vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

int vki_rec_dispatch(vki_rec *r, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                     const void *push, uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz)
{
    const vki_limits *l = &r->gpu->lim;
    uint32_t g[3] = { gx, gy, gz };
    for (int i = 0; i < 3; i++)
        if (g[i] > l->max_wg_count[i])
            return vki_fail(r->e, VKIMG_E_RUNTIME,
                            "%s: image too large for this device: needs %u workgroups in dimension %d, over "
                            "maxComputeWorkGroupCount[%d] = %u",
                            name, g[i], i, i, l->max_wg_count[i]);
    if (!gx || !gy || !gz)
        return 0;
    vki_kernel *k;
    int rc = vki_kernel_get(r->gpu, name, spv, spv_size, spec, push_size, &k, r->e);
    if (rc)
        return rc;
    /* Every dispatch depends on the one before it: make its writes visible. */
    if (r->ndispatch > 0)
        barrier(r->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    vkCmdBindPipeline(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipe);
    if (push_size)
        vkCmdPushConstants(r->cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
    vkCmdDispatch(r->cmd, gx, gy, gz);
    r->ndispatch++;
    return 0;
}

int vki_rec_dispatch_1d(vki_rec *r, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                        const void *push, uint32_t push_size, uint64_t groups)
{
    uint64_t maxx = r->gpu->lim.max_wg_count[0];
    uint64_t gx = groups < maxx ? groups : maxx;
    uint64_t gy = gx ? (groups + gx - 1) / gx : 0;
    if (gy > UINT32_MAX)
        gy = UINT32_MAX;
    return vki_rec_dispatch(r, name, spv, spv_size, spec, push, push_size, (uint32_t)gx, (uint32_t)gy, 1);
}

static vki_buf *new_scratch(vki_rec *r)
{
    if (r->nscratch == r->cap_scratch) {
        int cap = r->cap_scratch ? 2 * r->cap_scratch : 8;
        vki_buf *nb = realloc(r->scratch, (size_t)cap * sizeof *nb);
        if (!nb)
            return NULL;
        r->scratch = nb;
        r->cap_scratch = cap;
    }
    vki_buf *b = &r->scratch[r->nscratch];
    memset(b, 0, sizeof *b);
    return b;
}

int vki_rec_scratch(vki_rec *r, VkDeviceSize size, const char *what, VkDeviceAddress *addr)
{
    vki_buf *b = new_scratch(r);
    if (!b)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "out of memory");
    int rc = vki_buf_create(r->gpu, size, VKI_MEM_DEVICE, what, b, r->e);
    if (rc)
        return rc;
    r->nscratch++;
    *addr = b->addr;
    return 0;
}

int vki_rec_scratch_init(vki_rec *r, VkDeviceSize size, const void *init, const char *what, VkDeviceAddress *addr)
{
    size = (size + 3) & ~(VkDeviceSize)3;
    if (init && size > 65536)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "%s: initial data over 64 KiB", what);
    int rc = vki_rec_scratch(r, size, what, addr);
    if (rc)
        return rc;
    VkBuffer b = r->scratch[r->nscratch - 1].buf;
    if (init)
        vkCmdUpdateBuffer(r->cmd, b, 0, size, init);
    else
        vkCmdFillBuffer(r->cmd, b, 0, VK_WHOLE_SIZE, 0);
    barrier(r->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    return 0;
}

int vki_rec_const(vki_rec *r, const void *data, size_t size, const char *what, VkDeviceAddress *addr)
{
    vki_buf *b = new_scratch(r);
    if (!b)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "out of memory");
    int rc = vki_buf_create(r->gpu, size, VKI_MEM_CONST, what, b, r->e);
    if (rc)
        return rc;
    r->nscratch++;
    memcpy(b->map, data, size);
    *addr = b->addr;
    return vki_buf_flush(r->gpu, b, r->e);
}

static VkDeviceSize round_up(VkDeviceSize v, VkDeviceSize m) { return (v + m - 1) / m * m; }

int vki_stage_create(vki_gpu *g, const void *data, size_t bytes, const char *what, vki_buf *stage, vki_buf *dev,
                     vkimg_err *e)
{
    if (g->uma) {
        memset(stage, 0, sizeof *stage);
        int rc = vki_buf_create(g, round_up(bytes, 12), VKI_MEM_MAPPED, what, dev, e);
        if (!rc) {
            memcpy(dev->map, data, bytes);
            rc = vki_buf_flush(g, dev, e);
        }
        if (rc)
            vki_buf_destroy(g, dev);
        return rc;
    }
    char name[96];
    snprintf(name, sizeof name, "%s (staging)", what);
    int rc = vki_buf_create(g, bytes, VKI_MEM_UPLOAD, name, stage, e);
    /* padded to 12 bytes: kernels may read packed RGB8 as whole words; shared:
     * exec writes it on the transfer queue and reads it on the compute queue */
    if (!rc)
        rc = vki_buf_create_shared(g, round_up(bytes, 12), VKI_MEM_DEVICE, what, dev, e);
    if (!rc) {
        memcpy(stage->map, data, bytes);
        rc = vki_buf_flush(g, stage, e);
    }
    if (rc) {
        vki_buf_destroy(g, stage);
        vki_buf_destroy(g, dev);
    }
    return rc;
}

void vki_stage_record(VkCommandBuffer cmd, const vki_buf *stage, const vki_buf *dev)
{
    if (stage->buf) { /* else (uma) the host wrote dev before the submission */
        VkBufferCopy up = { .size = stage->size };
        vkCmdCopyBuffer(cmd, stage->buf, dev->buf, 1, &up);
    }
    /* also orders transfer writes recorded before it (the fills of stats' and
     * compare's result buffers, which their kernels then update) */
    barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

void vki_readback_record(VkCommandBuffer cmd, const vki_buf *dev, const vki_buf *rb, VkDeviceSize bytes)
{
    barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy down = { .size = bytes };
    vkCmdCopyBuffer(cmd, dev->buf, rb->buf, 1, &down);
    barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
}

int vki_plan_create(vki_gpu *g, const vkimg_pipeline *p, int w, int h, int c, vkimg_fmt in_fmt, vkimg_fmt out_fmt,
                    bool alloc_input, vki_plan *pl, vkimg_err *e)
{
    memset(pl, 0, sizeof *pl);
    int n = p->n;
    if (n < 1 || n > VKIMG_MAX_STAGES)
        return vki_fail(e, VKIMG_E_USAGE, "pipeline must have 1 to %d ops", VKIMG_MAX_STAGES);
    if (w < 1 || h < 1 || c < 1 || c > 4)
        return vki_fail(e, VKIMG_E_RUNTIME, "invalid input image %dx%dx%d", w, h, c);
    pl->p = p;
    pl->n = n;
    pl->w = w;
    pl->h = h;
    pl->chans[0] = c;
    int maxc = c;
    for (int i = 0; i < n; i++) {
        const vki_pipe_op *op = &p->ops[i];
        if (op->desc->data_output && i + 1 < n)
            return vki_fail(e, VKIMG_E_USAGE, "%s: produces data, not a picture: it must be the last op", op->desc->name);
        pl->chans[i + 1] = op->desc->out_channels ? op->desc->out_channels(pl->chans[i], &op->args) : pl->chans[i];
        if (pl->chans[i + 1] < 1 || pl->chans[i + 1] > 4)
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: can't produce %d channels", op->desc->name, pl->chans[i + 1]);
        if (pl->chans[i + 1] > maxc)
            maxc = pl->chans[i + 1];
    }
    uint64_t npx = (uint64_t)w * (uint64_t)h;
    if (npx * (uint64_t)maxc > UINT32_MAX)
        return vki_fail(e, VKIMG_E_RUNTIME, "image %dx%d with %d channels is too large: more than 2^32 samples", w, h, maxc);
    pl->in_fmt = in_fmt;
    pl->out_fmt = p->ops[n - 1].desc->data_output ? (vkimg_fmt)p->ops[n - 1].desc->data_fmt : out_fmt;
    pl->in_bytes = npx * (size_t)c * vkimg_fmt_size(in_fmt);
    pl->out_bytes = npx * (size_t)pl->chans[n] * vkimg_fmt_size(pl->out_fmt);
    int rc;
    /* input and output: shared by the compute and the transfer queue */
    if (alloc_input &&
        (rc = vki_buf_create_shared(g, round_up(pl->in_bytes, 12), VKI_MEM_DEVICE, "input image", &pl->inb, e)))
        goto fail;
    if ((rc = vki_buf_create_shared(g, round_up(pl->out_bytes, 4), g->uma ? VKI_MEM_MAPPED : VKI_MEM_DEVICE,
                                    "output image", &pl->outb, e)))
        goto fail;
    for (int i = 0; i + 1 < n && i < 2; i++) {
        int cc = 0;
        for (int k = i; k + 1 < n; k += 2)
            if (pl->chans[k + 1] > cc)
                cc = pl->chans[k + 1];
        if ((rc = vki_buf_create(g, npx * (uint64_t)cc * sizeof(float), VKI_MEM_DEVICE, "intermediate image", &pl->inter[i], e)))
            goto fail;
    }
    return 0;
fail:
    vki_plan_destroy(g, pl);
    return rc;
}

void vki_plan_destroy(vki_gpu *g, vki_plan *pl)
{
    vki_buf_destroy(g, &pl->inb);
    vki_buf_destroy(g, &pl->outb);
    vki_buf_destroy(g, &pl->inter[0]);
    vki_buf_destroy(g, &pl->inter[1]);
}

int vki_plan_record(vki_plan *pl, vki_rec *rec, VkQueryPool qp, uint32_t ts0)
{
    int n = pl->n;
    for (int i = 0; i < n; i++) {
        const vki_pipe_op *op = &pl->p->ops[i];
        vki_step s = {
            .desc = op->desc,
            .args = &op->args,
            .index = i,
            .w = pl->w,
            .h = pl->h,
            .in_c = pl->chans[i],
            .out_c = pl->chans[i + 1],
            .in_fmt = i == 0 ? pl->in_fmt : VKIMG_F32,
            .out_fmt = i == n - 1 ? pl->out_fmt : VKIMG_F32,
            .in = i == 0 ? pl->inb.addr : pl->inter[(i - 1) % 2].addr,
            .out = i == n - 1 ? pl->outb.addr : pl->inter[i % 2].addr,
            .in_packed_rgb8_words = i == 0 && pl->in_fmt == VKIMG_U8 && pl->chans[0] == 3,
            .levels = pl->in_fmt == VKIMG_U16 ? 65535u : 255u,
        };
        int rc = op->desc->record(rec, &s);
        if (rc)
            return rc;
        if (qp)
            vkCmdWriteTimestamp(rec->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, ts0 + (uint32_t)i + 1);
    }
    return 0;
}

void vki_rec_release(vki_rec *r)
{
    for (int i = 0; i < r->nscratch; i++)
        vki_buf_destroy(r->gpu, &r->scratch[i]);
    free(r->scratch);
    r->scratch = NULL;
    r->nscratch = r->cap_scratch = 0;
}

/* One run of vki_exec_run: its buffers and, after the submission, the device
 * times (ms) of the copies and the ops. */
typedef struct run {
    vki_plan pl;
    vki_rec rec;
    vki_buf stage, rb;
    bool want_timing;
    double up_ms, down_ms;        /* the copies: device (or host-measured) time */
    double gpu_total_ms;          /* 0 when the ops had no timestamps */
    int nstages;                  /* ops timed (0 or pl.n) */
    double stage_ms[VKIMG_MAX_STAGES];
} run;

/* Milliseconds between two timestamps of a queue with `bits` valid bits. */
static double ts_ms(const vki_gpu *g, uint64_t a, uint64_t b, uint32_t bits)
{
    uint64_t d = b - a;
    if (bits < 64)
        d &= (UINT64_C(1) << bits) - 1;
    return (double)d * g->lim.timestamp_period * 1e-6;
}

/* Ops timestamps v[0] (before the first op) .. v[n] (after the last). */
static void time_ops(const vki_gpu *g, run *r, const uint64_t *v)
{
    for (int i = 0; i < r->pl.n; i++)
        r->stage_ms[i] = ts_ms(g, v[i], v[i + 1], g->lim.timestamp_bits);
    r->nstages = r->pl.n;
}

/* No transfer queue: upload, dispatches and readback in one command buffer,
 * ordered by barriers. Timestamps: 0 top, 1 after the upload, i + 2 after op i,
 * n + 2 after the readback. */
static int submit_one_queue(vki_gpu *g, run *r, vkimg_err *e)
{
    int n = r->pl.n;
    uint32_t nts = (uint32_t)n + 3;
    vki_cmd cmd = { 0 };
    VkQueryPool qp = VK_NULL_HANDLE;
    int rc = vki_cmd_begin_timed(g, &cmd, r->want_timing, nts, &qp, e);
    if (rc)
        goto done;
    r->rec.cmd = cmd.cmd;
    vki_stage_record(cmd.cmd, &r->stage, &r->pl.inb);
    if (qp)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, qp, 1);
    if ((rc = vki_plan_record(&r->pl, &r->rec, qp, 1)))
        goto done;
    if (r->rb.buf)
        vki_readback_record(cmd.cmd, &r->pl.outb, &r->rb, r->pl.out_bytes);
    else /* the host reads pl.outb */
        barrier(cmd.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                VK_ACCESS_HOST_READ_BIT);
    if (qp)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, qp, nts - 1);
    if ((rc = vki_cmd_submit_wait(g, &cmd, e)))
        goto done;
    if (qp) {
        uint64_t v[VKIMG_MAX_STAGES + 3] = { 0 };
        VKI_VK(vkGetQueryPoolResults(g->dev, qp, 0, nts, sizeof v, v, sizeof v[0],
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        uint32_t bits = g->lim.timestamp_bits;
        r->up_ms = ts_ms(g, v[0], v[1], bits);
        r->down_ms = ts_ms(g, v[nts - 2], v[nts - 1], bits);
        r->gpu_total_ms = ts_ms(g, v[0], v[nts - 1], bits);
        time_ops(g, r, v + 1);
    }
    goto done;
fail:
    rc = e->code;
done:
    vki_cmd_abort(g, &cmd);
    if (qp)
        vkDestroyQueryPool(g->dev, qp, NULL);
    return rc;
}

/* Records a buffer copy with a timestamp before and after it (query q0, q0 + 1
 * of xqp, if any). */
static void record_copy(VkCommandBuffer cmd, const vki_buf *src, const vki_buf *dst, VkDeviceSize bytes,
                        VkQueryPool xqp, uint32_t q0)
{
    if (xqp)
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, xqp, q0);
    VkBufferCopy c = { .size = bytes };
    vkCmdCopyBuffer(cmd, src->buf, dst->buf, 1, &c);
    if (xqp)
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, xqp, q0 + 1);
}

/* Transfer queue: upload on xqueue -> semaphore -> dispatches on queue ->
 * semaphore -> readback on xqueue -> fence. A semaphore signal makes all earlier
 * writes of its queue available and the wait makes them visible, so no barrier
 * is needed between the queues; the shared buffers are CONCURRENT over the two
 * families, so no ownership transfers either. The waits are at ALL_COMMANDS so
 * that a command buffer's first timestamp is taken after its wait.
 *
 * Timing: timestamps of different queues can't be compared, so each queue's
 * own are differenced: the ops on queue as in the one-queue path, the copies on
 * xqueue, whose family may have none (timestampValidBits 0), and whose queries
 * can only be reset from the host (vkCmdResetQueryPool is not allowed on a
 * transfer-only queue: hostQueryReset). Without them the copies are timed on
 * the host: submission to the upload's fence, and the ops' fence to the
 * readback's (wake-up latency included). Every submission has a fence so that,
 * if a later one fails, the earlier ones can be waited for before their
 * semaphores and buffers are freed. */
static int submit_split(vki_gpu *g, run *r, vkimg_err *e)
{
    int n = r->pl.n;
    vki_cmd up = { 0 }, ops = { 0 }, down = { 0 };
    VkSemaphore sem[2] = { VK_NULL_HANDLE, VK_NULL_HANDLE };
    VkFence fence[3] = { VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE };
    VkQueryPool qp = VK_NULL_HANDLE, xqp = VK_NULL_HANDLE;
    int submitted = 0, rc = 0;

    VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO };
    VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    for (int i = 0; i < 2; i++)
        VKI_VK(vkCreateSemaphore(g->dev, &sci, NULL, &sem[i]));
    for (int i = 0; i < 3; i++)
        VKI_VK(vkCreateFence(g->dev, &fci, NULL, &fence[i]));
    if (r->want_timing && g->xts_bits && g->host_query_reset) {
        VkQueryPoolCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                      .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 4 };
        VKI_VK(vkCreateQueryPool(g->dev, &qci, NULL, &xqp));
        vkResetQueryPool(g->dev, xqp, 0, 4);
    }

    if ((rc = vki_cmd_begin_fam(g, (uint32_t)g->xfam, &up, e)))
        goto done;
    record_copy(up.cmd, &r->stage, &r->pl.inb, r->stage.size, xqp, 0);
    /* ops: timestamp 0 at the top, i + 1 after op i */
    if ((rc = vki_cmd_begin_timed(g, &ops, r->want_timing, (uint32_t)n + 1, &qp, e)))
        goto done;
    r->rec.cmd = ops.cmd;
    if ((rc = vki_plan_record(&r->pl, &r->rec, qp, 0)))
        goto done;
    if ((rc = vki_cmd_begin_fam(g, (uint32_t)g->xfam, &down, e)))
        goto done;
    record_copy(down.cmd, &r->pl.outb, &r->rb, r->pl.out_bytes, xqp, 2);
    VkMemoryBarrier host = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_HOST_READ_BIT };
    vkCmdPipelineBarrier(down.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host, 0, NULL, 0,
                         NULL);

    double t_submit = vki_now_ms(), t_done[3];
    if ((rc = vki_cmd_submit(g, g->xqueue, &up, VK_NULL_HANDLE, 0, sem[0], fence[0], e)))
        goto done;
    submitted = 1;
    if ((rc = vki_cmd_submit(g, g->queue, &ops, sem[0], VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, sem[1], fence[1], e)))
        goto done;
    submitted = 2;
    if ((rc = vki_cmd_submit(g, g->xqueue, &down, sem[1], VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_NULL_HANDLE,
                             fence[2], e)))
        goto done;
    submitted = 3;
    for (int i = 0; i < 3; i++) {
        VKI_VK(vkWaitForFences(g->dev, 1, &fence[i], VK_TRUE, UINT64_MAX));
        t_done[i] = vki_now_ms();
    }
    submitted = 0;

    if (xqp) {
        uint64_t x[4] = { 0 };
        VKI_VK(vkGetQueryPoolResults(g->dev, xqp, 0, 4, sizeof x, x, sizeof x[0],
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        r->up_ms = ts_ms(g, x[0], x[1], g->xts_bits);
        r->down_ms = ts_ms(g, x[2], x[3], g->xts_bits);
    } else {
        r->up_ms = t_done[0] - t_submit;
        r->down_ms = t_done[2] - t_done[1];
    }
    if (qp) {
        uint64_t v[VKIMG_MAX_STAGES + 1] = { 0 };
        VKI_VK(vkGetQueryPoolResults(g->dev, qp, 0, (uint32_t)n + 1, sizeof v, v, sizeof v[0],
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        time_ops(g, r, v);
        /* the queues' busy times, without the waits between them */
        r->gpu_total_ms = r->up_ms + ts_ms(g, v[0], v[n], g->lim.timestamp_bits) + r->down_ms;
    }
    goto done;
fail:
    rc = e->code;
done:
    for (int i = 0; i < submitted; i++) /* a later submission failed: let the earlier ones finish */
        vkWaitForFences(g->dev, 1, &fence[i], VK_TRUE, UINT64_MAX);
    vki_cmd_abort(g, &up);
    vki_cmd_abort(g, &ops);
    vki_cmd_abort(g, &down);
    for (int i = 0; i < 2; i++)
        if (sem[i])
            vkDestroySemaphore(g->dev, sem[i], NULL);
    for (int i = 0; i < 3; i++)
        if (fence[i])
            vkDestroyFence(g->dev, fence[i], NULL);
    if (qp)
        vkDestroyQueryPool(g->dev, qp, NULL);
    if (xqp)
        vkDestroyQueryPool(g->dev, xqp, NULL);
    return rc;
}

int vki_exec_run(vki_gpu *g, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
                 vkimg_image *out, vkimg_err *e)
{
    double t_start = vki_now_ms();
    run r = { .rec = { .gpu = g, .e = e }, .want_timing = o && o->timing };
    vkimg_image res = { 0 };
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (!in->data)
        return vki_fail(e, VKIMG_E_RUNTIME, "input image has no data");
    if ((rc = vki_plan_create(g, p, in->w, in->h, in->c, in->fmt, o ? o->out_fmt : in->fmt, false, &r.pl, e)))
        return rc;
    int n = r.pl.n;

    /* Resources: staging + device input, readback (the plan holds the rest);
     * where the device's memory is the host's (g->uma), the input is written
     * into the device buffer and the output read from it. */
    double t0 = vki_now_ms();
    if ((rc = vki_stage_create(g, in->data, r.pl.in_bytes, "input image", &r.stage, &r.pl.inb, e)))
        goto done;
    double host_upload = vki_now_ms() - t0;
    if (!g->uma && (rc = vki_buf_create(g, r.pl.out_bytes, VKI_MEM_READBACK, "readback buffer", &r.rb, e)))
        goto done;
    if ((rc = g->xqueue ? submit_split(g, &r, e) : submit_one_queue(g, &r, e)))
        goto done;
    vki_buf *from = g->uma ? &r.pl.outb : &r.rb;
    if ((rc = vki_buf_invalidate(g, from, e)))
        goto done;
    if ((rc = vki_image_alloc(&res, in->w, in->h, r.pl.chans[n], r.pl.out_fmt, false, e))) /* memcpy'd whole */
        goto done;
    t0 = vki_now_ms();
    memcpy(res.data, from->map, r.pl.out_bytes);
    double host_readback = vki_now_ms() - t0;

    if (o && o->timing) {
        vkimg_timing *t = o->timing;
        t->upload_ms = host_upload + r.up_ms;
        t->readback_ms = host_readback + r.down_ms;
        t->gpu_total_ms = r.gpu_total_ms;
        t->nstages = r.nstages;
        for (int i = 0; i < r.nstages; i++) {
            snprintf(t->stage[i].name, sizeof t->stage[i].name, "%s", p->ops[i].desc->name);
            t->stage[i].gpu_ms = r.stage_ms[i];
        }
        t->total_ms = vki_now_ms() - t_start;
    }
    *out = res;
    res.data = NULL;

done:
    vki_rec_release(&r.rec);
    vki_plan_destroy(g, &r.pl);
    vki_buf_destroy(g, &r.stage);
    vki_buf_destroy(g, &r.rb);
    vkimg_image_free(&res);
    return rc;
}
