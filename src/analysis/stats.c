/* stats: per-channel min, max, sum, sum of squares and 256-bin histograms on
 * the device (shaders/reduce.comp, shaders/reduce.glsl).
 *
 * One run (src/exec/run.c): upload, pass 0 (the image -> one partial record per
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
#include "analysis/reduce.h"
#include "core/util.h"
#include "spv/reduce.spv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    vki_addr src, part, res, hist;
    uint32_t n, ngroups;
} reduce_push;

static float unkey(uint32_t k)
{
    uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
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
    if (!im->data || im->coded || im->w < 1 || im->h < 1 || im->c < 1 || im->c > 4)
        return vki_fail(e, VKIMG_E_USAGE, "stats: invalid image %dx%dx%d%s", im->w, im->h, im->c,
                        im->coded ? " (a coded JPEG: vkimg_run decodes it)" : "");
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
    const uint64_t groups = vki_reduce_groups(npx, wg);
    const uint32_t nslot = 4u * (uint32_t)C;
    const size_t res_bytes = 16 * 8 + 4 * 256 * 4; /* 16 slots, then 4 x 256 bins */

    vki_run *run = NULL;
    VkDeviceAddress in, res, part;
    int rc, slot;
    char what[96];
    snprintf(what, sizeof what, "stats input %dx%dx%d %s", im->w, im->h, C, vkimg_fmt_name(im->fmt));
    if ((rc = vki_run_begin(g, timing != NULL, &run, e)) ||
        (rc = vki_run_input(run, im->data, (size_t)npx * (size_t)C * vkimg_fmt_size(im->fmt), what, &in, NULL)) ||
        (rc = vki_run_output(run, res_bytes, true, "stats result", &res, &slot))) /* histograms zeroed */
        goto done;
    vki_rec *rec = vki_run_rec(run);
    if ((rc = vki_rec_scratch(rec, groups * nslot * 8, "stats partial records", &part)))
        goto done;
    vki_spec spec = { 0 };
    vki_spec_set(&spec, VKI_SPEC_LX, wg);
    vki_spec_set(&spec, VKI_SPEC_LY, 1);
    vki_spec_set(&spec, VKI_SPEC_LZ, 1);
    vki_spec_set(&spec, VKI_SPEC_IN_FMT, im->fmt);
    vki_spec_set(&spec, VKI_SPEC_IN_C, (uint32_t)C);
    vki_spec_named(&spec, "SUBGROUP", vki_reduce_subgroup(g));
    vki_spec_named(&spec, "PASS", 0);
    vki_spec_named(&spec, "HIST", histogram);
    vki_spec_named(&spec, "HSIZE", hsize);
    reduce_push pc = { vki_addr_of(in), vki_addr_of(part), vki_addr_of(res), vki_addr_of(res + 16 * 8), (uint32_t)npx,
                       (uint32_t)groups };
    if ((rc = vki_rec_dispatch_1d(rec, "stats", VKI_SPV(reduce), &spec, &pc, sizeof pc, groups)))
        goto done;
    vki_run_mark(run, "stats (pass 1)");
    uint32_t ops = 0;
    for (int c = 0; c < C; c++) {
        uint32_t sum_op = isint ? VKI_RED_ADD : VKI_RED_FF;
        ops |= (sum_op | sum_op << 2 | (uint32_t)VKI_RED_MIN << 4 | (uint32_t)VKI_RED_MAX << 6) << (8 * c);
    }
    if ((rc = vki_reduce_final(rec, part, (uint32_t)groups, nslot, ops, res, "stats-final")))
        goto done;
    vki_run_mark(run, "stats (pass 2)");
    if ((rc = vki_run_submit(run)))
        goto done;

    const uint64_t *v = vki_run_output_data(run, slot);
    const uint32_t *hist = (const uint32_t *)(v + 16);
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
            double sum = vki_ff_value(v[4 * c]), sumsq = vki_ff_value(v[4 * c + 1]);
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
        vki_run_times(run, timing);
        timing->total_ms = vki_now_ms() - t_start;
    }
done:
    vki_run_end(run);
    return rc;
}
