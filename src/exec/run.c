/* The run engine: every device program of the library (a pipeline on an image,
 * stats, compare, bench) goes to the device through here. See exec.h.
 *
 * Three ways, chosen by the device (gpu.h):
 *  - one queue (no transfer queue): uploads, kernels and readbacks in one command
 *    buffer, ordered by barriers.
 *  - a transfer queue (g->xqueue): uploads on it -> semaphore -> kernels on the
 *    compute queue -> semaphore -> readbacks on the transfer queue -> fence, so
 *    that one image's copies overlap another's kernels. A semaphore signal makes
 *    all earlier writes of its queue available and the wait makes them visible,
 *    so no barrier is needed between the queues; the inputs and outputs are
 *    CONCURRENT over the two families, so no ownership transfers either. The
 *    waits are at ALL_COMMANDS so that a command buffer's first timestamp is taken
 *    after its wait.
 *  - device memory is host memory (g->uma: lavapipe, integrated GPUs): inputs are
 *    written into the device buffers and outputs read from them, no copies.
 *
 * Timestamps of the kernels' command buffer: 0 at the top, 1 when the inputs are
 * in (one queue: after the upload copies and fills), 2 + i at the end of stage i
 * (vki_run_mark), and one at the end (one queue: after the readbacks). Copies on
 * a transfer queue are timed by its own timestamps, 4 queries reset from the host
 * (vkCmdResetQueryPool is not allowed on a transfer-only queue: hostQueryReset),
 * where the family has them (timestampValidBits), else on the host: submission
 * to the upload's fence, and the kernels' fence to the readback's (wake-up
 * latency included). Timestamps of different queues are never compared. */
#include "exec/exec.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_MAX_IN 8
#define RUN_MAX_OUT (VKI_MAX_OUTPUTS + 8)
#define Q_TOP 0
#define Q_IN 1
#define Q_MARK0 2
#define RUN_QUERIES (Q_MARK0 + VKIMG_MAX_STAGES + 1)

typedef struct run_in {
    vki_buf stage, dev; /* stage empty where g->uma */
    size_t bytes;
    void *host;         /* where the host writes it */
    bool borrowed;      /* stage (dev where g->uma) is the caller's: not destroyed here */
} run_in;

typedef struct run_out {
    vki_buf dev, rb; /* rb empty where g->uma or direct */
    size_t bytes;
    bool direct;     /* dev is host memory the kernels write (vki_run_output_host): no copy */
} run_out;

struct vki_run {
    vki_gpu *g;
    vkimg_err *e;
    bool timing, split, recording, failed;
    bool finished; /* submitted, and every submission waited for */
    vki_cmd up, ops, down; /* up/down: transfer queue only */
    VkQueryPool qp;        /* the kernels' timestamps (none when not timing or none on the queue) */
    VkQueryPool xqp;       /* the copies' on the transfer queue: 0, 1 around the upload, 2, 3 the readback */
    vki_buf qbuf;          /* qp's results, copied there by the kernels' queue (see record_query_copy) */
    int nin, nout;
    run_in in[RUN_MAX_IN];
    run_out out[RUN_MAX_OUT];
    vki_rec rec;
    int nmarks;
    char mark[VKIMG_MAX_STAGES][32];
    double host_in_ms;
    double up_ms, down_ms, gpu_total_ms, stage_ms[VKIMG_MAX_STAGES];
    /* on the host clock: submission, completion, the device's work */
    double t_submit, t_done, up_start, down_start, stage_start[VKIMG_MAX_STAGES];
    bool have_ts;
};

static VkDeviceSize round_up(VkDeviceSize v, VkDeviceSize m) { return (v + m - 1) / m * m; }

int vki_run_begin(vki_gpu *g, bool timing, vki_run **out, vkimg_err *e)
{
    *out = NULL;
    vki_run *r = calloc(1, sizeof *r);
    if (!r)
        return vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
    r->g = g;
    r->e = e;
    r->timing = timing;
    r->split = g->xqueue != NULL;
    r->rec = (vki_rec){ .gpu = g, .e = e };
    int rc = vki_cmd_begin_timed(g, &r->ops, timing, RUN_QUERIES, &r->qp, e);
    if (!rc && r->qp)
        rc = vki_buf_create(g, RUN_QUERIES * sizeof(uint64_t), VKI_MEM_READBACK, "timestamps", &r->qbuf, e);
    if (!rc && r->split)
        rc = vki_cmd_begin_fam(g, (uint32_t)g->xfam, &r->up, e);
    if (!rc && r->split)
        rc = vki_cmd_begin_fam(g, (uint32_t)g->xfam, &r->down, e);
    if (!rc && r->split && timing && g->xts_bits && g->host_query_reset && !(rc = vki_query_get(g, 4, &r->xqp, e))) {
        vkResetQueryPool(g->dev, r->xqp, 0, 4);
        vkCmdWriteTimestamp(r->up.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, r->xqp, 0);
    }
    if (rc) {
        vki_run_end(r);
        return rc;
    }
    r->rec.cmd = r->ops.cmd;
    *out = r;
    return 0;
}

static int declared_late(vki_run *r, const char *what)
{
    r->failed = true;
    return vki_fail(r->e, VKIMG_E_RUNTIME, "%s: declared after the kernels of its run (an internal error)", what);
}

/* An input of bytes at data imported as it is (gpu.h host_import_align): the
 * buffer is the padded input buffer rounded up to the alignment, and the device
 * may read all of it, so it must end within the page of the input's last byte
 * (memory the process has mapped; util.c's big allocations end on a page with
 * room for the padding). */
static VkDeviceSize import_size(const vki_gpu *g, size_t bytes)
{
    const VkDeviceSize a = g->host_import_align, n = vki_padded_size(vki_input_buffer_size(bytes));
    return (n + a - 1) / a * a;
}

static bool import_fits(const vki_gpu *g, const void *data, size_t bytes)
{
    const long page = sysconf(_SC_PAGESIZE);
    const uintptr_t p = (uintptr_t)data, a = (uintptr_t)g->host_import_align;
    if (!a || page <= 0 || a > (uintptr_t)page || p % a || bytes < (size_t)page)
        return false;
    const uintptr_t pg = (uintptr_t)page, end = p + (uintptr_t)import_size(g, bytes);
    return (end + pg - 1) / pg <= (p + bytes + pg - 1) / pg;
}

int vki_run_input(vki_run *r, const void *data, size_t bytes, const char *what, VkDeviceAddress *addr, void **host)
{
    vki_gpu *g = r->g;
    if (r->recording)
        return declared_late(r, what);
    if (r->nin == RUN_MAX_IN)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "%s: more than %d inputs in one run", what, RUN_MAX_IN);
    run_in *in = &r->in[r->nin];
    memset(in, 0, sizeof *in);
    in->bytes = bytes;
    int rc;
    if (g->uma && data && !host && import_fits(g, data, bytes) &&
        !vki_buf_import_host(g, data, import_size(g, bytes), what, &in->dev)) {
        r->nin++; /* the device reads it where it is */
        *addr = in->dev.addr;
        vki_gpu_log(g, VKIMG_LOG_DEBUG, "%s: imported from host memory (%zu bytes), not copied", what, bytes);
        return 0;
    }
    if (g->uma) {
        if ((rc = vki_buf_create(g, vki_input_buffer_size(bytes), VKI_MEM_MAPPED, what, &in->dev, r->e)))
            return rc;
        in->host = in->dev.map;
    } else {
        char name[96];
        snprintf(name, sizeof name, "%s (staging)", what);
        if ((rc = vki_buf_create(g, bytes, VKI_MEM_UPLOAD, name, &in->stage, r->e)))
            return rc;
        /* shared: written on the transfer queue, read on the compute queue */
        if ((rc = vki_buf_create_shared(g, vki_input_buffer_size(bytes), VKI_MEM_DEVICE, what, &in->dev, r->e))) {
            vki_buf_destroy(g, &in->stage);
            return rc;
        }
        in->host = in->stage.map;
        VkBufferCopy c = { .size = bytes };
        vkCmdCopyBuffer(r->split ? r->up.cmd : r->ops.cmd, in->stage.buf, in->dev.buf, 1, &c);
        if (!r->split)
            r->rec.transfer_pending = true;
    }
    r->nin++;
    if (data) {
        double t0 = vki_now_ms();
        memcpy(in->host, data, bytes);
        r->host_in_ms += vki_now_ms() - t0;
    }
    if (host)
        *host = in->host;
    *addr = in->dev.addr;
    return 0;
}

bool vki_run_input_in_place(const vki_run *r, int i)
{
    return i >= 0 && i < r->nin && r->g->uma && (r->in[i].borrowed || r->in[i].dev.imported);
}

int vki_run_input_buf(vki_run *r, const vki_buf *src, size_t bytes, const char *what, VkDeviceAddress *addr)
{
    vki_gpu *g = r->g;
    if (r->recording)
        return declared_late(r, what);
    if (r->nin == RUN_MAX_IN)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "%s: more than %d inputs in one run", what, RUN_MAX_IN);
    const bool kind_ok = g->uma ? src->kind == VKI_MEM_MAPPED : src->kind == VKI_MEM_UPLOAD || src->kind == VKI_MEM_HOST_IN;
    if (!kind_ok || src->size < (g->uma ? vki_input_buffer_size(bytes) : bytes))
        return vki_fail(r->e, VKIMG_E_RUNTIME, "%s: not an input buffer of this device (an internal error)", what);
    run_in *in = &r->in[r->nin];
    memset(in, 0, sizeof *in);
    in->bytes = bytes;
    in->borrowed = true;
    in->host = src->map;
    if (g->uma) {
        in->dev = *src;
    } else {
        in->stage = *src;
        int rc = vki_buf_create_shared(g, vki_input_buffer_size(bytes), VKI_MEM_DEVICE, what, &in->dev, r->e);
        if (rc)
            return rc;
        VkBufferCopy c = { .size = bytes };
        vkCmdCopyBuffer(r->split ? r->up.cmd : r->ops.cmd, in->stage.buf, in->dev.buf, 1, &c);
        if (!r->split)
            r->rec.transfer_pending = true;
    }
    r->nin++;
    *addr = in->dev.addr;
    return 0;
}

/* The next output's entry (bytes of it), or NULL with *rc set where it cannot be declared */
static run_out *new_output(vki_run *r, size_t bytes, const char *what, int *rc)
{
    *rc = 0;
    if (r->recording)
        *rc = declared_late(r, what);
    else if (r->nout == RUN_MAX_OUT)
        *rc = vki_fail(r->e, VKIMG_E_RUNTIME, "%s: more than %d outputs in one run", what, RUN_MAX_OUT);
    if (*rc)
        return NULL;
    run_out *o = &r->out[r->nout];
    memset(o, 0, sizeof *o);
    o->bytes = bytes;
    return o;
}

int vki_run_output(vki_run *r, size_t bytes, bool zero, const char *what, VkDeviceAddress *addr, int *slot)
{
    vki_gpu *g = r->g;
    int rc;
    run_out *o = new_output(r, bytes, what, &rc);
    if (!o)
        return rc;
    /* shared: written on the compute queue, read back on the transfer queue */
    rc = vki_buf_create_shared(g, round_up(bytes, 4), g->uma ? VKI_MEM_MAPPED : VKI_MEM_DEVICE, what, &o->dev, r->e);
    if (rc)
        return rc;
    if (!g->uma) {
        char name[96];
        snprintf(name, sizeof name, "%s (readback)", what);
        if ((rc = vki_buf_create(g, bytes, VKI_MEM_READBACK, name, &o->rb, r->e))) {
            vki_buf_destroy(g, &o->dev);
            return rc;
        }
    }
    if (zero) {
        vkCmdFillBuffer(r->ops.cmd, o->dev.buf, 0, VK_WHOLE_SIZE, 0);
        r->rec.transfer_pending = true;
    }
    *slot = r->nout++;
    *addr = o->dev.addr;
    return 0;
}

int vki_run_output_host(vki_run *r, size_t bytes, const char *what, VkDeviceAddress *addr, int *slot)
{
    vki_gpu *g = r->g;
    int rc;
    run_out *o = new_output(r, bytes, what, &rc);
    if (!o)
        return rc;
    o->direct = true;
    rc = vki_buf_create(g, round_up(bytes, 16), g->uma ? VKI_MEM_MAPPED : VKI_MEM_HOST_OUT, what, &o->dev, r->e);
    if (rc)
        return rc;
    *slot = r->nout++;
    *addr = o->dev.addr;
    return 0;
}

vki_rec *vki_run_rec(vki_run *r)
{
    if (!r->recording) {
        r->recording = true;
        if (r->qp)
            vkCmdWriteTimestamp(r->ops.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, r->qp, Q_IN);
    }
    return &r->rec;
}

void vki_run_mark(vki_run *r, const char *name)
{
    vki_run_rec(r);
    if (r->nmarks == VKIMG_MAX_STAGES)
        return;
    snprintf(r->mark[r->nmarks], sizeof r->mark[0], "%s", name);
    if (r->qp)
        vkCmdWriteTimestamp(r->ops.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, r->qp, Q_MARK0 + (uint32_t)r->nmarks);
    r->nmarks++;
}

/* Records the readbacks into cmd: the kernels' (and fills') writes, the copies,
 * then host visibility; where g->uma, only the last. */
/* How many outputs are copied (not written by the kernels into host memory) */
static int copied_outputs(const vki_run *r)
{
    int n = 0;
    for (int i = 0; i < r->nout; i++)
        n += !r->out[i].direct;
    return n;
}

static void record_readback(vki_run *r, VkCommandBuffer cmd, bool after_kernels)
{
    if (!r->nout)
        return;
    VkPipelineStageFlags kstages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkAccessFlags kwrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    if (r->g->uma) {
        vki_cmd_barrier(cmd, kstages, kwrites, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
        return;
    }
    if (!copied_outputs(r))
        return;
    if (after_kernels) /* one queue; on a transfer queue the semaphore orders them */
        vki_cmd_barrier(cmd, kstages, kwrites, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    for (int i = 0; i < r->nout; i++) {
        if (r->out[i].direct)
            continue;
        VkBufferCopy c = { .size = r->out[i].bytes };
        vkCmdCopyBuffer(cmd, r->out[i].dev.buf, r->out[i].rb.buf, 1, &c);
    }
    vki_cmd_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                    VK_ACCESS_HOST_READ_BIT);
}

/* The kernels' last timestamp, then their results into qbuf for the host to read
 * after the fence. Not vkGetQueryPoolResults: lavapipe's waits for the whole device
 * to be idle, so a batch's finished image waited for the other slot's kernels
 * (100-125 ms an image for blur=3 of 5120x2880, in every batch: runs are timed). */
static void record_query_copy(vki_run *r, uint32_t q_end)
{
    if (!r->qp)
        return;
    vkCmdWriteTimestamp(r->ops.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, r->qp, q_end);
    vkCmdCopyQueryPoolResults(r->ops.cmd, r->qp, 0, q_end + 1, r->qbuf.buf, 0, sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    vki_cmd_barrier(r->ops.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                    VK_ACCESS_HOST_READ_BIT);
}

static int flush_inputs(vki_run *r)
{
    for (int i = 0; i < r->nin; i++) {
        int rc = vki_buf_flush(r->g, r->g->uma ? &r->in[i].dev : &r->in[i].stage, r->e);
        if (rc)
            return rc;
    }
    return 0;
}

static int submit_one_queue(vki_run *r, uint32_t *q_end)
{
    vki_gpu *g = r->g;
    record_readback(r, r->ops.cmd, true);
    *q_end = Q_MARK0 + (uint32_t)r->nmarks;
    record_query_copy(r, *q_end);
    r->t_submit = vki_now_ms();
    int rc = vki_cmd_submit_wait(g, &r->ops, r->e);
    r->t_done = vki_now_ms();
    return rc;
}

/* The transfer-queue path. Every submission has a fence so that, if a later one
 * fails, the earlier ones can be waited for before their semaphores and buffers
 * are freed. */
static int submit_split(vki_run *r, uint32_t *q_end)
{
    vki_gpu *g = r->g;
    vkimg_err *e = r->e;
    VkSemaphore sem[2] = { VK_NULL_HANDLE, VK_NULL_HANDLE };
    VkFence fence[3] = { VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE };
    VkQueryPool xqp = r->xqp;
    bool fenced[3] = { false, false, false };
    bool has_up = r->nin > 0 && !g->uma, has_down = copied_outputs(r) > 0 && !g->uma;
    int rc = 0;

    for (int i = 0; i < 2; i++)
        if ((rc = vki_sem_get(g, &sem[i], e)))
            goto done;
    for (int i = 0; i < 3; i++)
        if ((rc = vki_fence_get(g, &fence[i], e)))
            goto done;
    /* the copies, each between two timestamps of the transfer queue (the upload's
     * were recorded as the inputs were declared, after query 0) */
    if (xqp) {
        vkCmdWriteTimestamp(r->up.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, xqp, 1);
        vkCmdWriteTimestamp(r->down.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, xqp, 2);
    }
    record_readback(r, r->down.cmd, false);
    if (xqp)
        vkCmdWriteTimestamp(r->down.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, xqp, 3);
    *q_end = Q_MARK0 + (uint32_t)r->nmarks;
    record_query_copy(r, *q_end);

    double t_submit = vki_now_ms(), t_done[3] = { t_submit, t_submit, t_submit };
    if (has_up) {
        if ((rc = vki_cmd_submit(g, g->xqueue, &r->up, VK_NULL_HANDLE, 0, sem[0], fence[0], e)))
            goto done;
        fenced[0] = true;
    }
    if ((rc = vki_cmd_submit(g, g->queue, &r->ops, has_up ? sem[0] : VK_NULL_HANDLE,
                             VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, has_down ? sem[1] : VK_NULL_HANDLE, fence[1], e)))
        goto done;
    fenced[1] = true;
    if (has_down) {
        if ((rc = vki_cmd_submit(g, g->xqueue, &r->down, sem[1], VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_NULL_HANDLE,
                                 fence[2], e)))
            goto done;
        fenced[2] = true;
    }
    for (int i = 0; i < 3; i++) {
        if (!fenced[i])
            continue;
        VKI_VK(vkWaitForFences(g->dev, 1, &fence[i], VK_TRUE, UINT64_MAX));
        fenced[i] = false;
        t_done[i] = vki_now_ms();
    }
    r->up_ms = has_up ? t_done[0] - t_submit : 0;
    r->down_ms = has_down ? t_done[2] - t_done[1] : 0;
    r->t_submit = t_submit;
    r->t_done = t_done[1]; /* the kernels' */
    if (xqp) {
        uint64_t x[4] = { 0 };
        if (has_up) {
            VKI_VK(vkGetQueryPoolResults(g->dev, xqp, 0, 2, 2 * sizeof x[0], x, sizeof x[0],
                                         VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
            r->up_ms = vki_ts_ms(g, x[0], x[1], g->xts_bits);
        }
        if (has_down) {
            VKI_VK(vkGetQueryPoolResults(g->dev, xqp, 2, 2, 2 * sizeof x[0], x + 2, sizeof x[0],
                                         VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
            r->down_ms = vki_ts_ms(g, x[2], x[3], g->xts_bits);
        }
    }
    r->up_start = has_up ? t_done[0] - r->up_ms : t_submit;
    r->down_start = has_down ? t_done[2] - r->down_ms : t_done[1];
    goto done;
fail:
    rc = e->code;
done:
    for (int i = 0; i < 3; i++) /* a later submission failed: let the earlier ones finish */
        if (fenced[i])
            vkWaitForFences(g->dev, 1, &fence[i], VK_TRUE, UINT64_MAX);
    /* for the next runs, where every submission finished as it should (else a
     * semaphore may be left signalled) */
    for (int i = 0; i < 2; i++)
        if (!rc)
            vki_sem_put(g, sem[i]);
        else if (sem[i])
            vkDestroySemaphore(g->dev, sem[i], NULL);
    for (int i = 0; i < 3; i++)
        if (!rc)
            vki_fence_put(g, fence[i]);
        else if (fence[i])
            vkDestroyFence(g->dev, fence[i], NULL);
    return rc;
}

int vki_run_submit(vki_run *r)
{
    vki_gpu *g = r->g;
    vkimg_err *e = r->e;
    if (r->failed)
        return e->code ? e->code : VKIMG_E_RUNTIME;
    vki_run_rec(r);
    if (!g->uma && copied_outputs(r) < r->nout) /* the kernels wrote host memory: the host reads it */
        vki_cmd_barrier(r->ops.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    uint32_t q_end = 0;
    int rc = flush_inputs(r);
    if (!rc)
        rc = r->split ? submit_split(r, &q_end) : submit_one_queue(r, &q_end);
    if (rc) {
        r->failed = true;
        return rc;
    }
    r->finished = true;
    for (int i = 0; i < r->nout; i++)
        if ((rc = vki_buf_invalidate(g, g->uma || r->out[i].direct ? &r->out[i].dev : &r->out[i].rb, e)))
            return rc;
    if (r->qp) {
        uint64_t q[RUN_QUERIES] = { 0 };
        if ((rc = vki_buf_invalidate(g, &r->qbuf, e)))
            return rc;
        memcpy(q, r->qbuf.map, (q_end + 1) * sizeof q[0]);
        uint32_t bits = g->lim.timestamp_bits;
        uint64_t last = q[Q_IN];
        /* the kernels' queue on the host clock: its last timestamp when its fence was seen */
        const double base = r->t_done - vki_ts_ms(g, q[Q_TOP], q[q_end], bits);
        for (int i = 0; i < r->nmarks; i++) {
            r->stage_start[i] = base + vki_ts_ms(g, q[Q_TOP], last, bits);
            r->stage_ms[i] = vki_ts_ms(g, last, q[Q_MARK0 + i], bits);
            last = q[Q_MARK0 + i];
        }
        if (r->split) {
            /* the queues' busy times, without the waits between them */
            r->gpu_total_ms = r->up_ms + vki_ts_ms(g, q[Q_TOP], q[q_end], bits) + r->down_ms;
        } else {
            r->up_ms = vki_ts_ms(g, q[Q_TOP], q[Q_IN], bits);
            r->down_ms = vki_ts_ms(g, last, q[q_end], bits);
            r->gpu_total_ms = vki_ts_ms(g, q[Q_TOP], q[q_end], bits);
            r->up_start = base;
            r->down_start = base + vki_ts_ms(g, q[Q_TOP], last, bits);
        }
        r->have_ts = true;
    }
    return 0;
}

int vki_run_take_output(vki_run *r, int slot, vki_buf *b)
{
    memset(b, 0, sizeof *b);
    if (slot < 0 || slot >= r->nout || r->failed)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "output %d of the run: none (an internal error)", slot);
    vki_buf *src = r->g->uma || r->out[slot].direct ? &r->out[slot].dev : &r->out[slot].rb;
    *b = *src;
    memset(src, 0, sizeof *src);
    return 0;
}

const void *vki_run_output_data(const vki_run *r, int slot)
{
    if (slot < 0 || slot >= r->nout)
        return NULL;
    return r->g->uma || r->out[slot].direct ? r->out[slot].dev.map : r->out[slot].rb.map;
}

void vki_run_copies(const vki_run *r, double *up_ms, double *down_ms)
{
    bool copies = !r->g->uma;
    *up_ms = copies && r->nin ? r->up_ms : 0;
    *down_ms = copies && r->nout ? r->down_ms : 0;
}

void vki_run_times(const vki_run *r, vkimg_timing *t)
{
    /* device memory is host memory: no copies, only the barriers between the timestamps */
    const bool copies = !r->g->uma;
    t->upload_ms = r->host_in_ms + (copies ? r->up_ms : 0);
    t->readback_ms = copies ? r->down_ms : 0;
    t->gpu_total_ms = r->have_ts ? r->gpu_total_ms : 0;
    t->nstages = r->have_ts ? r->nmarks : 0;
    for (int i = 0; i < t->nstages; i++) {
        snprintf(t->stage[i].name, sizeof t->stage[i].name, "%s", r->mark[i]);
        t->stage[i].gpu_ms = r->stage_ms[i];
        t->stage[i].start_ms = r->stage_start[i];
    }
    t->t_submit_ms = r->t_submit;
    t->t_done_ms = r->t_done;
    t->upload_start_ms = r->have_ts || r->split ? r->up_start : r->t_submit;
    t->readback_start_ms = r->have_ts || r->split ? r->down_start : r->t_done;
    t->up_host_ms = r->host_in_ms;
    t->down_host_ms = 0;
    t->up_bytes = t->down_bytes = 0;
    for (int i = 0; i < r->nin; i++)
        t->up_bytes += (double)r->in[i].bytes;
    for (int i = 0; i < r->nout; i++)
        t->down_bytes += (double)r->out[i].bytes;
}

void vki_run_end(vki_run *r)
{
    if (!r)
        return;
    vki_gpu *g = r->g;
    if (r->finished || !r->recording) { /* its work is done (or was never submitted): for the next runs */
        vki_cmd_recycle(g, &r->up);
        vki_cmd_recycle(g, &r->ops);
        vki_cmd_recycle(g, &r->down);
        vki_query_put(g, r->qp, RUN_QUERIES);
        vki_query_put(g, r->xqp, 4);
    } else {
        vki_cmd_abort(g, &r->up);
        vki_cmd_abort(g, &r->ops);
        vki_cmd_abort(g, &r->down);
        if (r->qp)
            vkDestroyQueryPool(g->dev, r->qp, NULL);
        if (r->xqp)
            vkDestroyQueryPool(g->dev, r->xqp, NULL);
    }
    vki_buf_destroy(g, &r->qbuf);
    vki_rec_release(&r->rec);
    for (int i = 0; i < r->nin; i++) {
        if (r->in[i].borrowed && g->uma)
            continue; /* dev is the caller's */
        if (!r->in[i].borrowed)
            vki_buf_destroy(g, &r->in[i].stage);
        vki_buf_destroy(g, &r->in[i].dev);
    }
    for (int i = 0; i < r->nout; i++) {
        vki_buf_destroy(g, &r->out[i].dev);
        vki_buf_destroy(g, &r->out[i].rb);
    }
    free(r);
}
