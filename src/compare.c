/* compare: error metrics, idiff-style verdict, SSIM and a difference image of
 * two images on the device (shaders/compare.comp, shaders/ssim.comp, final
 * reductions in shaders/reduce.comp).
 *
 * One command buffer: upload a and b (formats may differ: u8 vs u16 compares
 * normalized values), the error pass (grid-stride, one partial record per
 * workgroup: sum e, sum e^2, max key, pixel counts over fail/warn; optionally
 * writes the diff image; two images of the same integer format are read 4
 * pixels at a time as 32-bit words), one-workgroup final reduction, optionally
 * the SSIM pass (one record per workgroup) and its final reduction, then
 * readback of the 128-byte result (and the diff image when asked). Workgroup
 * reductions: subgroup arithmetic where supported, else shared memory (see
 * stats.c, shaders/reduce.glsl).
 *
 * Definitions (e = |a - b| per sample, normalized values, N = w*h*c samples):
 *   MAE = sum e / N, RMSE = sqrt(sum e^2 / N), PSNR = 10 log10(1 / MSE) dB
 *   (+inf when MSE == 0); max_err with its location (smallest sample index on
 *   ties); nfail / nwarn = pixels with some channel's e > fail / > warn;
 *   pct = 100 * n / (w*h). Verdict (idiff): FAIL if pct_fail > failpercent or
 *   max_err > hardfail; else WARN if pct_warn > warnpercent or max_err >
 *   hardwarn; else OK.
 *
 * Precision: when both images are u8/u16, errors are exact integers d =
 * |qa - qb| in units of 1/L (L = 255 for two u8 images, else 65535, a u8 level
 * q being q * 257 there): sums of d and d^2 are exact uint64, so MAE / RMSE /
 * PSNR / max_err are correctly rounded doubles, and the thresholds are
 * compared exactly (d > floor(fail * L); a threshold within 1e-9 of a level
 * k/L counts as k/L). Otherwise (a float image) a and b are converted to fp32
 * and e = |a - b| is computed in fp32 (within ~1e-7 relative of the exact
 * value; fail/warn are compared in fp32), with float-float sums (~44 bits,
 * e^2 exact) on the device and double on the host: MAE/RMSE/PSNR within ~1e-7
 * relative of a double computation. Counts and the location are exact given e.
 *
 * SSIM (Wang et al. 2004): Gaussian 11x11 window, sigma 1.5, normalized;
 * C1 = 0.01^2, C2 = 0.03^2 (data range 1); the mean of the SSIM map over all
 * positions where the whole window fits in the image ("valid": x in 5..w-6,
 * y in 5..h-6, as skimage's mean over its cropped map) and over all channels
 * (alpha included). Along an axis shorter than 11 pixels every position is
 * used, with the window cut to the image and renormalized. The five Gaussian
 * maps (mu_a, mu_b, E[a^2], E[b^2], E[ab]) are made separably on the device
 * (horizontal 11-tap sums per row, vertical accumulation in registers: each
 * invocation walks one column of a 32-row strip, see shaders/ssim.comp) and
 * the SSIM map is summed on the device; no map is written to memory. fp32
 * (values shifted by one pixel of the strip before the moments, against
 * cancellation), float-float sum: within ~1e-6 of a double computation
 * (tests: <= 1e-7 seen).
 *
 * Different sizes or channel counts: VKIMG_E_USAGE, verdict
 * VKIMG_CMP_MISMATCH, nothing compared (the CLI exits 3).
 */
#include "api.h"
#include "exec.h"
#include "util.h"
#include "compare.spv.h"
#include "ssim.spv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From stats.c (declared there too). */
uint32_t vki_reduce_wg(const vki_gpu *g, uint32_t extra_shared);
bool vki_reduce_subgroup(const vki_gpu *g);
int vki_reduce_final(vki_rec *r, VkDeviceAddress part, uint32_t nrec, uint32_t nslot, uint32_t ops,
                     VkDeviceAddress res, const char *name);

enum { SPEC_SUBGROUP = VKI_SPEC_OP, SPEC_B_FMT, SPEC_DIFF, SPEC_INTMODE, SPEC_LEVELS };
enum { SPEC_STRIP = VKI_SPEC_OP + 2, SPEC_G0 = VKI_SPEC_OP + 4, SPEC_CUT = SPEC_G0 + 6 };
enum { OP_ADD = 0, OP_MIN = 1, OP_MAX = 2, OP_FF = 3 };

#define PX_PER_INVOCATION 16u
#define RECORDS_PER_INVOCATION 8u
#define SSIM_R 5      /* window radius: 11 x 11 */
#define SSIM_SIGMA 1.5
#define SSIM_STRIP 32u  /* output rows per invocation */
#define RES_SSIM_SLOT 8 /* result slots: 0..4 errors, 8 SSIM */

typedef struct {
    vki_addr a, b, part, diff;
    float fail, warn, scale;
    int32_t ifail, iwarn;
    uint32_t npx, ngroups;
} compare_push;

typedef struct {
    vki_addr a, b, part;
    int32_t w, h, ow, oh, offx, offy;
} ssim_push;

static double ff_value(uint64_t v)
{
    uint32_t hi = (uint32_t)v, lo = (uint32_t)(v >> 32);
    float fh, fl;
    memcpy(&fh, &hi, sizeof fh);
    memcpy(&fl, &lo, sizeof fl);
    return (double)fh + (double)fl;
}

/* Integer threshold for errors d in units of 1/L: e > t <=> d > result. A
 * threshold within 1e-9 of a level k/L is taken as that level (d = k does not
 * exceed it), so thresholds written as k/255 behave as meant. */
static int32_t int_threshold(double t, double L)
{
    double x = t * L, r = nearbyint(x);
    if (fabs(x - r) <= 1e-9 * fmax(1.0, fabs(x)))
        x = r;
    x = floor(x);
    return x < 0 ? -1 : x > 65536 ? 65536 : (int32_t)x;
}

static bool fmt_ok(vkimg_fmt f)
{
    return f == VKIMG_U8 || f == VKIMG_U16 || f == VKIMG_F16 || f == VKIMG_F32;
}

int vkimg_compare(vkimg_ctx *ctx, const vkimg_image *a, const vkimg_image *b, const vkimg_compare_opts *o,
                  vkimg_compare_result *r, vkimg_timing *timing, vkimg_err *e)
{
    vkimg_err local;
    if (!e)
        e = &local;
    vki_err_clear(e);
    if (!ctx || !a || !b || !r)
        return vki_fail(e, VKIMG_E_RUNTIME, "vkimg_compare: NULL argument");
    static const vkimg_compare_opts defaults = VKIMG_COMPARE_DEFAULTS;
    if (!o)
        o = &defaults;
    memset(r, 0, sizeof *r);
    r->verdict = VKIMG_CMP_ERROR;
    r->ssim = NAN;
    double t_start = vki_now_ms();
    vki_gpu *g = &ctx->gpu;
    if (!a->data || !b->data || a->w < 1 || a->h < 1 || a->c < 1 || a->c > 4 || b->w < 1 || b->h < 1 || b->c < 1 ||
        b->c > 4)
        return vki_fail(e, VKIMG_E_USAGE, "compare: invalid image (%dx%dx%d vs %dx%dx%d)", a->w, a->h, a->c, b->w,
                        b->h, b->c);
    if (!fmt_ok(a->fmt) || !fmt_ok(b->fmt))
        return vki_fail(e, VKIMG_E_USAGE, "compare: %s samples are not supported (u8, u16, f16 or f32)",
                        vkimg_fmt_name(fmt_ok(a->fmt) ? b->fmt : a->fmt));
    if (a->w != b->w || a->h != b->h || a->c != b->c) {
        r->verdict = VKIMG_CMP_MISMATCH;
        return vki_fail(e, VKIMG_E_USAGE,
                        "compare: images differ in size or channels: the first is %dx%d with %d channel(s), "
                        "the second %dx%d with %d channel(s)",
                        a->w, a->h, a->c, b->w, b->h, b->c);
    }
    if (isnan(o->fail) || isnan(o->warn) || isnan(o->hardfail) || isnan(o->hardwarn) || isnan(o->failpercent) ||
        isnan(o->warnpercent) || !(o->diff_scale >= 0) || isinf(o->diff_scale))
        return vki_fail(e, VKIMG_E_USAGE, "compare: thresholds must be numbers and the diff scale finite and >= 0");
    if (!g->lim.int64)
        return vki_fail(e, VKIMG_E_RUNTIME,
                        "compare: the device lacks shaderInt64, needed for the 64-bit reductions on the device");
    const int C = a->c, W = a->w, H = a->h;
    const uint64_t npx = (uint64_t)W * (uint64_t)H, ns = npx * (uint64_t)C;
    if (ns > UINT32_MAX)
        return vki_fail(e, VKIMG_E_RUNTIME, "compare: image %dx%d with %d channels is too large: more than 2^32 samples",
                        W, H, C);
    /* both integer: exact integer errors in units of 1/L */
    const bool intmode = (a->fmt == VKIMG_U8 || a->fmt == VKIMG_U16) && (b->fmt == VKIMG_U8 || b->fmt == VKIMG_U16);
    const double L = a->fmt == VKIMG_U8 && b->fmt == VKIMG_U8 ? 255.0 : 65535.0;
    const uint32_t wg = vki_reduce_wg(g, 0);
    uint64_t groups = (npx + (uint64_t)wg * PX_PER_INVOCATION - 1) / ((uint64_t)wg * PX_PER_INVOCATION);
    if (groups > (uint64_t)wg * RECORDS_PER_INVOCATION)
        groups = (uint64_t)wg * RECORDS_PER_INVOCATION;
    if (groups < 1)
        groups = 1;

    /* SSIM geometry */
    const int ow = W >= 2 * SSIM_R + 1 ? W - 2 * SSIM_R : W, oh = H >= 2 * SSIM_R + 1 ? H - 2 * SSIM_R : H;
    const uint32_t sgx = ((uint32_t)ow + wg - 1) / wg, sgy = ((uint32_t)oh + SSIM_STRIP - 1) / SSIM_STRIP;
    const uint32_t snrec = sgx * sgy * (uint32_t)C;

    vki_rec rec = { .gpu = g, .e = e };
    vki_buf sa = { 0 }, da = { 0 }, sb = { 0 }, db = { 0 }, part = { 0 }, spart = { 0 }, res = { 0 }, rb = { 0 };
    vki_buf diff = { 0 }, diffrb = { 0 };
    VkQueryPool qp = VK_NULL_HANDLE;
    vki_cmd cmd = { 0 };
    vkimg_image dimg = { 0 };
    int rc;
    const VkDeviceSize res_bytes = 16 * 8;
    char what[96];
    double t0 = vki_now_ms();
    snprintf(what, sizeof what, "compare input A %dx%dx%d %s", W, H, C, vkimg_fmt_name(a->fmt));
    if ((rc = vki_stage_create(g, a->data, (size_t)ns * vkimg_fmt_size(a->fmt), what, &sa, &da, e)))
        goto done;
    snprintf(what, sizeof what, "compare input B %dx%dx%d %s", W, H, C, vkimg_fmt_name(b->fmt));
    if ((rc = vki_stage_create(g, b->data, (size_t)ns * vkimg_fmt_size(b->fmt), what, &sb, &db, e)))
        goto done;
    double host_upload = vki_now_ms() - t0;
    if ((rc = vki_buf_create(g, groups * 5 * 8, VKI_MEM_DEVICE, "compare partial records", &part, e)) ||
        (rc = vki_buf_create(g, res_bytes, VKI_MEM_DEVICE, "compare result", &res, e)) ||
        (rc = vki_buf_create(g, res_bytes, VKI_MEM_READBACK, "compare readback", &rb, e)))
        goto done;
    if (o->ssim && (rc = vki_buf_create(g, (VkDeviceSize)snrec * 8, VKI_MEM_DEVICE, "SSIM partial records", &spart, e)))
        goto done;
    if (o->want_diff && ((rc = vki_buf_create(g, (ns + 3) & ~(uint64_t)3, VKI_MEM_DEVICE, "difference image", &diff, e)) ||
                         (rc = vki_buf_create(g, ns, VKI_MEM_READBACK, "difference image readback", &diffrb, e))))
        goto done;

    const uint32_t nts = 7;
    if ((rc = vki_cmd_begin_timed(g, &cmd, timing != NULL, nts, &qp, e)))
        goto done;
    bool ts = qp != VK_NULL_HANDLE;
    rec.cmd = cmd.cmd;
    /* every result slot is written by the final passes; zero them anyway (slots
     * 5..7, 9..15 are read back unused) -- the uploads' barrier covers this */
    vkCmdFillBuffer(cmd.cmd, res.buf, 0, VK_WHOLE_SIZE, 0);
    vki_stage_record(cmd.cmd, &sa, &da);
    vki_stage_record(cmd.cmd, &sb, &db);
    if (ts)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, qp, 1);

    vki_spec spec = { 0 };
    vki_spec_set(&spec, VKI_SPEC_LX, wg);
    vki_spec_set(&spec, VKI_SPEC_LY, 1);
    vki_spec_set(&spec, VKI_SPEC_LZ, 1);
    vki_spec_set(&spec, VKI_SPEC_IN_FMT, a->fmt);
    vki_spec_set(&spec, VKI_SPEC_IN_C, (uint32_t)C);
    vki_spec_set(&spec, SPEC_SUBGROUP, vki_reduce_subgroup(g));
    vki_spec_set(&spec, SPEC_B_FMT, b->fmt);
    vki_spec_set(&spec, SPEC_DIFF, o->want_diff);
    vki_spec_set(&spec, SPEC_INTMODE, intmode);
    vki_spec_set(&spec, SPEC_LEVELS, (uint32_t)L);
    compare_push pc = { vki_addr_of(da.addr), vki_addr_of(db.addr), vki_addr_of(part.addr), vki_addr_of(diff.addr),
                        (float)o->fail, (float)o->warn, (float)o->diff_scale, int_threshold(o->fail, L),
                        int_threshold(o->warn, L), (uint32_t)npx, (uint32_t)groups };
    if ((rc = vki_rec_dispatch_1d(&rec, "compare", compare_spv, sizeof compare_spv, &spec, &pc, sizeof pc, groups)))
        goto done;
    if (ts)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, 2);
    uint32_t sum_op = intmode ? OP_ADD : OP_FF;
    uint32_t ops = sum_op | sum_op << 2 | OP_MAX << 4 | OP_ADD << 6 | OP_ADD << 8;
    if ((rc = vki_reduce_final(&rec, part.addr, (uint32_t)groups, 5, ops, res.addr, "compare-final")))
        goto done;
    if (ts)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, 3);
    if (o->ssim) {
        double wd[SSIM_R + 1], sum = 0;
        for (int k = -SSIM_R; k <= SSIM_R; k++)
            sum += exp(-(double)k * k / (2 * SSIM_SIGMA * SSIM_SIGMA));
        for (int k = 0; k <= SSIM_R; k++)
            wd[k] = exp(-(double)k * k / (2 * SSIM_SIGMA * SSIM_SIGMA)) / sum;
        vki_spec ss = { 0 };
        vki_spec_set(&ss, VKI_SPEC_LX, wg);
        vki_spec_set(&ss, VKI_SPEC_LY, 1);
        vki_spec_set(&ss, VKI_SPEC_LZ, 1);
        vki_spec_set(&ss, VKI_SPEC_IN_FMT, a->fmt);
        vki_spec_set(&ss, VKI_SPEC_IN_C, (uint32_t)C);
        vki_spec_set(&ss, SPEC_SUBGROUP, vki_reduce_subgroup(g));
        vki_spec_set(&ss, SPEC_B_FMT, b->fmt);
        vki_spec_set(&ss, SPEC_STRIP, SSIM_STRIP);
        for (int k = 0; k <= SSIM_R; k++)
            vki_spec_setf(&ss, SPEC_G0 + (uint32_t)k, (float)wd[k]);
        vki_spec_set(&ss, SPEC_CUT, W < 2 * SSIM_R + 1 || H < 2 * SSIM_R + 1);
        ssim_push sp = { vki_addr_of(da.addr), vki_addr_of(db.addr), vki_addr_of(spart.addr), W, H, ow, oh,
                         W >= 2 * SSIM_R + 1 ? SSIM_R : 0, H >= 2 * SSIM_R + 1 ? SSIM_R : 0 };
        if ((rc = vki_rec_dispatch(&rec, "ssim", ssim_spv, sizeof ssim_spv, &ss, &sp, sizeof sp, sgx, sgy, (uint32_t)C)))
            goto done;
        if (ts)
            vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, 4);
        if ((rc = vki_reduce_final(&rec, spart.addr, snrec, 1, OP_FF, res.addr + RES_SSIM_SLOT * 8, "ssim-final")))
            goto done;
        if (ts)
            vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, 5);
    } else if (ts) {
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, 4);
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, qp, 5);
    }
    vki_readback_record(cmd.cmd, &res, &rb, res_bytes);
    if (o->want_diff)
        vki_readback_record(cmd.cmd, &diff, &diffrb, ns);
    if (ts)
        vkCmdWriteTimestamp(cmd.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, qp, 6);
    if ((rc = vki_cmd_submit_wait(g, &cmd, e)))
        goto done;
    if ((rc = vki_buf_invalidate(g, &rb, e)))
        goto done;
    if (o->want_diff) {
        if ((rc = vki_buf_invalidate(g, &diffrb, e)) || (rc = vkimg_image_alloc(&dimg, W, H, C, VKIMG_U8, e)))
            goto done;
    }
    double t_rb = vki_now_ms();
    if (o->want_diff)
        memcpy(dimg.data, diffrb.map, (size_t)ns);
    double host_readback = vki_now_ms() - t_rb;

    const uint64_t *v = rb.map;
    const double N = (double)ns;
    r->channels = C;
    r->pixels = npx;
    uint32_t mbits = (uint32_t)(v[2] >> 32), idx = ~(uint32_t)v[2];
    double mse;
    if (intmode) {
        /* exact integer sums of d and d^2 (units of 1/L) */
        r->mae = (double)v[0] / L / N;
        mse = (double)v[1] / (L * L) / N;
        r->max_err = mbits / L;
    } else {
        r->mae = ff_value(v[0]) / N;
        mse = ff_value(v[1]) / N;
        float mf;
        memcpy(&mf, &mbits, sizeof mf);
        r->max_err = mf;
    }
    r->rmse = sqrt(mse);
    r->psnr = mse > 0 ? 10.0 * log10(1.0 / mse) : INFINITY;
    r->max_c = (int)(idx % (uint32_t)C);
    r->max_x = (int)(idx / (uint32_t)C % (uint32_t)W);
    r->max_y = (int)(idx / (uint32_t)C / (uint32_t)W);
    r->nfail = v[3];
    r->nwarn = v[4];
    r->pct_fail = 100.0 * (double)r->nfail / (double)npx;
    r->pct_warn = 100.0 * (double)r->nwarn / (double)npx;
    if (o->ssim)
        r->ssim = ff_value(v[RES_SSIM_SLOT]) / ((double)ow * (double)oh * C);
    if (r->pct_fail > o->failpercent || r->max_err > o->hardfail)
        r->verdict = VKIMG_CMP_FAIL;
    else if (r->pct_warn > o->warnpercent || r->max_err > o->hardwarn)
        r->verdict = VKIMG_CMP_WARN;
    else
        r->verdict = VKIMG_CMP_OK;
    if (o->want_diff) {
        r->diff = dimg;
        dimg.data = NULL;
    }

    if (timing) {
        memset(timing, 0, sizeof *timing);
        timing->upload_ms = host_upload;
        timing->readback_ms = host_readback;
        if (ts) {
            uint64_t q[7];
            VKI_VK(vkGetQueryPoolResults(g->dev, qp, 0, nts, sizeof q, q, sizeof q[0],
                                         VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
            double per = g->lim.timestamp_period * 1e-6;
            timing->upload_ms += (double)(q[1] - q[0]) * per;
            timing->readback_ms += (double)(q[6] - q[5]) * per;
            timing->gpu_total_ms = (double)(q[6] - q[0]) * per;
            static const char *const names[] = { "compare (errors)", "compare (final)", "ssim", "ssim (final)" };
            int ns_ = o->ssim ? 4 : 2;
            for (int i = 0; i < ns_; i++) {
                snprintf(timing->stage[i].name, sizeof timing->stage[i].name, "%s", names[i]);
                timing->stage[i].gpu_ms = (double)(q[i + 2] - q[i + 1]) * per;
            }
            timing->nstages = ns_;
        }
        timing->total_ms = vki_now_ms() - t_start;
    }
    rc = 0;

done:
fail:
    if (!rc && e->code)
        rc = e->code;
    if (rc) {
        vkimg_image_free(&r->diff);
        r->verdict = VKIMG_CMP_ERROR;
    }
    vki_cmd_abort(g, &cmd);
    if (qp)
        vkDestroyQueryPool(g->dev, qp, NULL);
    vki_rec_release(&rec);
    vki_buf_destroy(g, &sa);
    vki_buf_destroy(g, &da);
    vki_buf_destroy(g, &sb);
    vki_buf_destroy(g, &db);
    vki_buf_destroy(g, &part);
    vki_buf_destroy(g, &spart);
    vki_buf_destroy(g, &res);
    vki_buf_destroy(g, &rb);
    vki_buf_destroy(g, &diff);
    vki_buf_destroy(g, &diffrb);
    vkimg_image_free(&dimg);
    return rc;
}
