/* stats: per-channel min, max, sum, sum of squares and 256-bin histograms on
 * the device (shaders/reduce.comp, shaders/reduce.glsl).
 *
 * One command buffer: upload, pass 0 (the image -> one partial record per
 * workgroup, grid-stride loop of >= 16 pixels per invocation, at most 8 * WG
 * workgroups; u8/u16 read 4 pixels at a time as 32-bit words; histograms
 * counted with shared-memory atomics and merged into the global ones with one
 * atomicAdd per non-empty bin per workgroup), pass 1 (one workgroup reduces
 * the records, every slot in registers), readback of the 128-byte result and
 * the 4 KiB of histograms only. No host round trip between the passes.
 *
 * Reductions inside a workgroup use subgroup arithmetic when the device has
 * VK_SUBGROUP_FEATURE_ARITHMETIC_BIT in compute (spec constant SUBGROUP), else
 * shared-memory trees. The workgroup size is min(256, device limits) rounded
 * down to a power of two and shrunk until its shared memory fits
 * maxComputeSharedMemorySize.
 *
 * Precision:
 *  - u8/u16: min, max, sum and sum of squares are exact (uint64 in the shader;
 *    needs shaderInt64, which the device layer requires anyway). Mean and
 *    population standard deviation come from the integer sums on the host:
 *    mean = S / n, stddev = sqrt(n*Q - S^2) / n with n*Q - S^2 exact in
 *    unsigned __int128, so both are correctly rounded to about 1 ulp of double.
 *  - f16/f32: sums in float-float (fp32 pairs, ~44 significant bits; x^2 exact)
 *    per invocation, per workgroup and across workgroups, then double on the
 *    host; relative error of the sums ~1e-13 (no fp64 needed on the device).
 *    var = Q/n - mean^2 (clamped at 0): its absolute error is ~1e-13 * Q/n.
 *    min/max are exact. NaN samples make sum/mean/stddev NaN and max NaN.
 *  - histograms are exact counts.
 */
#include "api.h"
#include "exec.h"
#include "util.h"
#include "reduce.spv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Shared with compare.c (which declares them too). */
uint32_t vki_reduce_wg(const vki_gpu *g, uint32_t extra_shared);
bool vki_reduce_subgroup(const vki_gpu *g);
int vki_reduce_final(vki_rec *r, VkDeviceAddress part, uint32_t nrec, uint32_t nslot, uint32_t ops,
                     VkDeviceAddress res, const char *name);

enum { SPEC_SUBGROUP = VKI_SPEC_OP, SPEC_PASS, SPEC_HIST, SPEC_NSLOT, SPEC_OPS, SPEC_HSIZE };
enum { OP_ADD = 0, OP_MIN = 1, OP_MAX = 2, OP_FF = 3 };

#define PX_PER_INVOCATION 16u /* at least, before the workgroup count is capped */
#define RECORDS_PER_INVOCATION 8u /* cap on pass-0 workgroups: 8 * WG records for pass 1 */

typedef struct {
    vki_addr src, part, res, hist;
    uint32_t n, ngroups;
} reduce_push;

uint32_t vki_reduce_wg(const vki_gpu *g, uint32_t extra_shared)
{
    uint32_t wg = vki_wg_1d(g), p = 1;
    while (p * 2 <= wg)
        p *= 2;
    wg = p; /* power of two: tree reductions */
    while (wg > 1 && (uint64_t)wg * 8 + extra_shared > g->lim.max_shared)
        wg /= 2;
    return wg;
}

bool vki_reduce_subgroup(const vki_gpu *g)
{
    return (g->lim.subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0;
}

int vki_reduce_final(vki_rec *r, VkDeviceAddress part, uint32_t nrec, uint32_t nslot, uint32_t ops,
                     VkDeviceAddress res, const char *name)
{
    uint32_t wg = vki_reduce_wg(r->gpu, 0);
    vki_spec spec = { 0 };
    vki_spec_set(&spec, VKI_SPEC_LX, wg);
    vki_spec_set(&spec, VKI_SPEC_LY, 1);
    vki_spec_set(&spec, VKI_SPEC_LZ, 1);
    vki_spec_set(&spec, SPEC_SUBGROUP, vki_reduce_subgroup(r->gpu));
    vki_spec_set(&spec, SPEC_PASS, 1);
    vki_spec_set(&spec, SPEC_NSLOT, nslot);
    vki_spec_set(&spec, SPEC_OPS, ops);
    reduce_push pc = { .part = vki_addr_of(part), .res = vki_addr_of(res), .n = nrec, .ngroups = 1 };
    return vki_rec_dispatch(r, name, reduce_spv, sizeof reduce_spv, &spec, &pc, sizeof pc, 1, 1, 1);
}

static float unkey(uint32_t k)
{
    uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double ff_value(uint64_t v)
{
    uint32_t hi = (uint32_t)v, lo = (uint32_t)(v >> 32);
    float fh, fl;
    memcpy(&fh, &hi, sizeof fh);
    memcpy(&fl, &lo, sizeof fl);
    return (double)fh + (double)fl;
}

__extension__ typedef unsigned __int128 u128;

int vkimg_image_stats(vkimg_ctx *ctx, const vkimg_image *im, bool histogram, vkimg_stats *out, vkimg_timing *timing,
                      vkimg_err *e)
{
    vkimg_err local;
    if (!e)
        e = &local;
    vki_err_clear(e);
    if (!ctx || !im || !out)
        return vki_fail(e, VKIMG_E_RUNTIME, "vkimg_image_stats: NULL argument");
    memset(out, 0, sizeof *out);
    double t_start = vki_now_ms();
    vki_gpu *g = &ctx->gpu;
    if (!im->data || im->w < 1 || im->h < 1 || im->c < 1 || im->c > 4)
        return vki_fail(e, VKIMG_E_USAGE, "stats: invalid image %dx%dx%d", im->w, im->h, im->c);
    if (im->fmt != VKIMG_U8 && im->fmt != VKIMG_U16 && im->fmt != VKIMG_F16 && im->fmt != VKIMG_F32)
        return vki_fail(e, VKIMG_E_USAGE, "stats: %s samples are not supported (u8, u16, f16 or f32)",
                        vkimg_fmt_name(im->fmt));
    if (!g->lim.int64)
        return vki_fail(e, VKIMG_E_RUNTIME,
                        "stats: the device lacks shaderInt64, needed for exact 64-bit sums on the device");
    const int C = im->c;
    const uint64_t npx = (uint64_t)im->w * (uint64_t)im->h;
    if (npx * (uint64_t)C > UINT32_MAX)
        return vki_fail(e, VKIMG_E_RUNTIME, "stats: image %dx%d with %d channels is too large: more than 2^32 samples",
                        im->w, im->h, C);
    const bool isint = im->fmt == VKIMG_U8 || im->fmt == VKIMG_U16;
    const uint32_t hsize = histogram ? (uint32_t)C * 256u : 1u;
    const uint32_t wg = vki_reduce_wg(g, hsize * 4u);
    if ((uint64_t)wg * 8 + hsize * 4u > g->lim.max_shared)
        return vki_fail(e, VKIMG_E_RUNTIME, "stats: device shared memory (%u bytes) too small", g->lim.max_shared);
    uint64_t groups = (npx + (uint64_t)wg * PX_PER_INVOCATION - 1) / ((uint64_t)wg * PX_PER_INVOCATION);
    if (groups > (uint64_t)wg * RECORDS_PER_INVOCATION)
        groups = (uint64_t)wg * RECORDS_PER_INVOCATION;
    if (groups < 1)
        groups = 1;
    const uint32_t nslot = 4u * (uint32_t)C;
    const VkDeviceSize res_bytes = 16 * 8 + 4 * 256 * 4; /* 16 slots, then 4 x 256 bins */

    vki_rec rec = { .gpu = g, .e = e };
    vki_buf stage = { 0 }, inb = { 0 }, part = { 0 }, res = { 0 }, rb = { 0 };
    VkQueryPool qp = VK_NULL_HANDLE;
    vki_cmd cmd = { 0 };
    int rc;
    size_t in_bytes = (size_t)npx * (size_t)C * vkimg_fmt_size(im->fmt);
    char what[96];
    snprintf(what, sizeof what, "stats input %dx%dx%d %s", im->w, im->h, C, vkimg_fmt_name(im->fmt));
    double t0 = vki_now_ms();
    if ((rc = vki_stage_create(g, im->data, in_bytes, what, &stage, &inb, e)))
        goto done;
    double host_upload = vki_now_ms() - t0;
    if ((rc = vki_buf_create(g, groups * nslot * 8, VKI_MEM_DEVICE, "stats partial records", &part, e)) ||
        (rc = vki_buf_create(g, res_bytes, VKI_MEM_DEVICE, "stats result", &res, e)) ||
        (rc = vki_buf_create(g, res_bytes, VKI_MEM_READBACK, "stats readback", &rb, e)))
        goto done;

    const uint32_t nts = 5;
    if ((rc = vki_cmd_begin_timed(g, &cmd, timing != NULL, nts, &qp, e)))
        goto done;
    bool ts = qp != VK_NULL_HANDLE;
    rec.cmd = cmd.cmd;
    /* zero the histograms; the upload's transfer->compute barrier covers it */
    vkCmdFillBuffer(cmd.cmd, res.buf, 0, VK_WHOLE_SIZE, 0);
    vki_stage_record(cmd.cmd, &stage, &inb);
    if (ts)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, qp, 1);

    vki_spec spec = { 0 };
    vki_spec_set(&spec, VKI_SPEC_LX, wg);
    vki_spec_set(&spec, VKI_SPEC_LY, 1);
    vki_spec_set(&spec, VKI_SPEC_LZ, 1);
    vki_spec_set(&spec, VKI_SPEC_IN_FMT, im->fmt);
    vki_spec_set(&spec, VKI_SPEC_IN_C, (uint32_t)C);
    vki_spec_set(&spec, SPEC_SUBGROUP, vki_reduce_subgroup(g));
    vki_spec_set(&spec, SPEC_PASS, 0);
    vki_spec_set(&spec, SPEC_HIST, histogram);
    vki_spec_set(&spec, SPEC_HSIZE, hsize);
    reduce_push pc = { vki_addr_of(inb.addr), vki_addr_of(part.addr), vki_addr_of(res.addr),
                       vki_addr_of(res.addr + 16 * 8), (uint32_t)npx, (uint32_t)groups };
    if ((rc = vki_rec_dispatch_1d(&rec, "stats", reduce_spv, sizeof reduce_spv, &spec, &pc, sizeof pc, groups)))
        goto done;
    if (ts)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, 2);
    uint32_t ops = 0;
    for (int c = 0; c < C; c++) {
        uint32_t sum_op = isint ? OP_ADD : OP_FF;
        ops |= (sum_op | sum_op << 2 | (uint32_t)OP_MIN << 4 | (uint32_t)OP_MAX << 6) << (8 * c);
    }
    if ((rc = vki_reduce_final(&rec, part.addr, (uint32_t)groups, nslot, ops, res.addr, "stats-final")))
        goto done;
    if (ts)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, 3);
    vki_readback_record(cmd.cmd, &res, &rb, res_bytes);
    if (ts)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, qp, 4);
    if ((rc = vki_cmd_submit_wait(g, &cmd, e)))
        goto done;
    if ((rc = vki_buf_invalidate(g, &rb, e)))
        goto done;

    const uint64_t *v = rb.map;
    const uint32_t *hist = (const uint32_t *)((const char *)rb.map + 16 * 8);
    out->w = im->w;
    out->h = im->h;
    out->c = C;
    out->fmt = im->fmt;
    out->has_hist = histogram;
    const double n = (double)npx;
    for (int c = 0; c < C; c++) {
        vkimg_channel_stats *s = &out->ch[c];
        if (isint) {
            const double L = im->fmt == VKIMG_U8 ? 255.0 : 65535.0;
            s->isum = v[4 * c];
            s->isumsq = v[4 * c + 1];
            s->min = (double)v[4 * c + 2] / L;
            s->max = (double)v[4 * c + 3] / L;
            s->sum = (double)s->isum / L;
            s->mean = (double)s->isum / n / L;
            u128 num = (u128)npx * s->isumsq - (u128)s->isum * s->isum; /* >= 0 (Cauchy-Schwarz) */
            s->stddev = sqrt((double)num) / n / L;
        } else {
            double sum = ff_value(v[4 * c]), sumsq = ff_value(v[4 * c + 1]);
            s->min = unkey((uint32_t)v[4 * c + 2]);
            s->max = unkey((uint32_t)v[4 * c + 3]);
            s->sum = sum;
            s->mean = sum / n;
            double var = sumsq / n - s->mean * s->mean;
            s->stddev = var > 0 ? sqrt(var) : (isnan(var) ? var : 0.0);
        }
        if (histogram)
            for (int b = 0; b < 256; b++)
                s->hist[b] = hist[c * 256 + b];
    }

    if (timing) {
        memset(timing, 0, sizeof *timing);
        timing->upload_ms = host_upload;
        if (ts) {
            uint64_t q[5];
            VKI_VK(vkGetQueryPoolResults(g->dev, qp, 0, nts, sizeof q, q, sizeof q[0],
                                         VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
            double per = g->lim.timestamp_period * 1e-6; /* ticks -> ms */
            timing->upload_ms += (double)(q[1] - q[0]) * per;
            timing->readback_ms = (double)(q[4] - q[3]) * per;
            timing->gpu_total_ms = (double)(q[4] - q[0]) * per;
            snprintf(timing->stage[0].name, sizeof timing->stage[0].name, "stats (pass 1)");
            timing->stage[0].gpu_ms = (double)(q[2] - q[1]) * per;
            snprintf(timing->stage[1].name, sizeof timing->stage[1].name, "stats (pass 2)");
            timing->stage[1].gpu_ms = (double)(q[3] - q[2]) * per;
            timing->nstages = 2;
        }
        timing->total_ms = vki_now_ms() - t_start;
    }
    rc = 0;

done:
fail:
    if (!rc && e->code)
        rc = e->code;
    vki_cmd_abort(g, &cmd);
    if (qp)
        vkDestroyQueryPool(g->dev, qp, NULL);
    vki_rec_release(&rec);
    vki_buf_destroy(g, &stage);
    vki_buf_destroy(g, &inb);
    vki_buf_destroy(g, &part);
    vki_buf_destroy(g, &res);
    vki_buf_destroy(g, &rb);
    return rc;
}
