/* compare: error metrics, idiff-style verdict, SSIM and a difference image of
 * two images on the device (shaders/compare.comp, shaders/ssim.comp, final
 * reductions in shaders/reduce.comp).
 *
 * One run (src/exec/run.c): upload a and b (formats may differ: u8 vs u16 compares
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
 * Ignore regions and masks: a byte per pixel made on the host (nonzero =
 * ignored) goes up with the images; ignored pixels count in no sum, count and
 * maximum (SSIM is over the whole image), and show dimmed in the diff image.
 *
 * YIQ (shaders/analysis/yiq.comp; its variant yiq_aa with the detector): pixelmatch 7.2.0's metric and anti-aliasing
 * detector in double precision, one record per workgroup (differing, anti-aliased
 * pixels) and the final reduction.
 *
 * Different sizes: with allow_size_mismatch the top-left overlap is compared and
 * every pixel of the larger extent outside it counts as different; else (and for
 * different channel counts) VKIMG_E_USAGE, verdict VKIMG_CMP_MISMATCH, nothing
 * compared (the CLI exits 3).
 *
 * Verdict: ABS: FAIL if pct_fail > failpercent (with a budget instead: more
 * differing pixels than max_diff_pixels, or a larger ratio than max_diff_ratio) or
 * max_err > hardfail; else WARN if pct_warn > warnpercent (not with a budget) or
 * max_err > hardwarn; else OK. YIQ: FAIL if any pixel differs (with a budget: over
 * it), else OK.
 */
#include "analysis/reduce.h"
#include "core/util.h"
#include "spv/compare.spv.h"
#include "spv/ssim.spv.h"
#include "spv/yiq.spv.h"
#include "spv/yiq_aa.spv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SSIM_R 5      /* window radius: 11 x 11 */
#define SSIM_SIGMA 1.5
static const char *const gauss_names[SSIM_R + 1] = { "G0", "G1", "G2", "G3", "G4", "G5" };
#define SSIM_STRIP 32u  /* output rows per invocation */
#define RES_SSIM_SLOT 8 /* result slots: 0..4 errors, 8 SSIM */

typedef struct {
    vki_addr a, b, part, diff, ign;
    float fail, warn, scale;
    int32_t ifail, iwarn;
    uint32_t npx, ngroups;
} compare_push;

typedef struct {
    vki_addr a, b, part;
    int32_t w, h, ow, oh, offx, offy;
} ssim_push;

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

typedef struct {
    vki_addr a, b, part, diff, ign;
    uint32_t max_delta[2];
    uint32_t w, h, ngroups;
} yiq_push;

/* A view of b's memory (diff_over_b): its owner frees nothing but itself. */
static void view_release(vki_image_owner *o)
{
    free(o);
}

static int view_of(const vkimg_image *b, vkimg_image *out, vkimg_err *e)
{
    vki_image_owner *o = calloc(1, sizeof *o);
    if (!o)
        return vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
    o->release = view_release;
    o->cap = vkimg_image_bytes(b);
    *out = (vkimg_image){ .w = b->w, .h = b->h, .c = b->c, .fmt = VKIMG_U8, .data = b->data, .priv = o };
    return 0;
}

/* One comparison of two images of one size: the ABS metrics (and SSIM) or YIQ
 * counts, with an optional ignore mask (a byte per pixel). Fills r's metrics
 * (not the verdict). */
static int compare_core(vki_gpu *g, const vkimg_image *a, const vkimg_image *b, const vkimg_compare_opts *o,
                        const uint8_t *ign, uint64_t nignored, vkimg_compare_result *r, vkimg_timing *timing,
                        vkimg_err *e)
{
    const int C = a->c, W = a->w, H = a->h;
    const uint64_t npx = (uint64_t)W * (uint64_t)H, ns = npx * (uint64_t)C;
    const bool yiq = o->metric == VKIMG_METRIC_YIQ;
    if (ns > UINT32_MAX || npx * 4 > INT32_MAX)
        return vki_fail(e, VKIMG_E_RUNTIME, "compare: image %dx%d with %d channels is too large: more than 2^32 samples",
                        W, H, C);
    if (yiq && !g->lim.float64)
        return vki_fail(e, VKIMG_E_RUNTIME, "compare --metric yiq: the device lacks shaderFloat64 (pixelmatch's "
                        "arithmetic is in double precision)");
    /* both integer: exact integer errors in units of 1/L */
    const bool intmode = (a->fmt == VKIMG_U8 || a->fmt == VKIMG_U16) && (b->fmt == VKIMG_U8 || b->fmt == VKIMG_U16);
    const double L = a->fmt == VKIMG_U8 && b->fmt == VKIMG_U8 ? 255.0 : 65535.0;
    const uint32_t wg = vki_reduce_wg(g, 0);
    const uint64_t groups = vki_reduce_groups(npx, wg);
    const uint32_t nslot = yiq ? 2 : 5;

    /* SSIM geometry */
    const int ow = W >= 2 * SSIM_R + 1 ? W - 2 * SSIM_R : W, oh = H >= 2 * SSIM_R + 1 ? H - 2 * SSIM_R : H;
    const uint32_t sgx = ((uint32_t)ow + wg - 1) / wg, sgy = ((uint32_t)oh + SSIM_STRIP - 1) / SSIM_STRIP;
    const uint32_t snrec = sgx * sgy * (uint32_t)C;

    vki_run *run = NULL;
    vkimg_image dimg = { 0 };
    VkDeviceAddress da, db, res, diff = 0, part, spart = 0, ia = 0;
    int rc, res_slot, diff_slot = -1;
    const bool indexed = yiq && o->diff_indexed; /* a byte a pixel: an index into vkimg_compare_palette */
    const int dc = yiq ? (indexed ? 1 : 4) : C; /* channels of the diff image */
    const size_t dbytes = (size_t)npx * (size_t)dc;
    char wa[96], wb[96];
    snprintf(wa, sizeof wa, "compare input A %dx%dx%d %s", W, H, C, vkimg_fmt_name(a->fmt));
    snprintf(wb, sizeof wb, "compare input B %dx%dx%d %s", W, H, C, vkimg_fmt_name(b->fmt));
    /* every result slot is written by the final passes; zeroed anyway (unused ones are read back) */
    /* images in this device's memory (vkimg_image_alloc_device) are read in place */
    const vki_buf *ba = vki_devimg_buf(a, g), *bb = vki_devimg_buf(b, g);
    /* the indices over b's own pixels (read in place: device memory is host memory) */
    const bool over_b = indexed && o->want_diff && o->diff_over_b && !o->aa && g->uma && bb && b->fmt == VKIMG_U8;
    const size_t na = (size_t)ns * vkimg_fmt_size(a->fmt), nb = (size_t)ns * vkimg_fmt_size(b->fmt);
    if ((rc = vki_run_begin(g, timing != NULL, &run, e)) ||
        (rc = ba ? vki_run_input_buf(run, ba, na, wa, &da) : vki_run_input(run, a->data, na, wa, &da, NULL)) ||
        (rc = bb ? vki_run_input_buf(run, bb, nb, wb, &db) : vki_run_input(run, b->data, nb, wb, &db, NULL)) ||
        (ign && (rc = vki_run_input(run, ign, (size_t)npx, "compare ignore mask", &ia, NULL))) ||
        (rc = vki_run_output(run, 16 * 8, true, "compare result", &res, &res_slot)) ||
        (o->want_diff && !over_b &&
         (rc = vki_run_output(run, dbytes, false, "difference image", &diff, &diff_slot))))
        goto done;
    if (over_b)
        diff = db;
    vki_rec *rec = vki_run_rec(run);
    if ((rc = vki_rec_scratch(rec, groups * nslot * 8, "compare partial records", &part)) ||
        (o->ssim && (rc = vki_rec_scratch(rec, (VkDeviceSize)snrec * 8, "SSIM partial records", &spart))))
        goto done;

    vki_spec spec = { 0 };
    vki_spec_set(&spec, VKI_SPEC_LX, wg);
    vki_spec_set(&spec, VKI_SPEC_LY, 1);
    vki_spec_set(&spec, VKI_SPEC_LZ, 1);
    vki_spec_set(&spec, VKI_SPEC_IN_FMT, a->fmt);
    vki_spec_set(&spec, VKI_SPEC_IN_C, (uint32_t)C);
    vki_spec_named(&spec, "SUBGROUP", vki_reduce_subgroup(g));
    vki_spec_named(&spec, "B_FMT", b->fmt);
    vki_spec_named(&spec, "DIFF", o->want_diff ? (over_b ? 3 : indexed ? 2 : 1) : 0);
    vki_spec_named(&spec, "IGNORE", ign != NULL);
    if (yiq) {
        /* pixelmatch: maxDelta = 35215 * threshold * threshold, in this order */
        double md = 35215.0 * o->threshold * o->threshold;
        uint64_t bits;
        memcpy(&bits, &md, sizeof bits);
        yiq_push pc = { vki_addr_of(da), vki_addr_of(db), vki_addr_of(part), vki_addr_of(diff), vki_addr_of(ia),
                        { (uint32_t)bits, (uint32_t)(bits >> 32) }, (uint32_t)W, (uint32_t)H, (uint32_t)groups };
        /* the detector is a shader of its own: compiled only where it is asked for */
        if ((rc = o->aa ? vki_rec_dispatch_1d(rec, "yiq-aa", VKI_SPV(yiq_aa), &spec, &pc, sizeof pc, groups)
                        : vki_rec_dispatch_1d(rec, "yiq", VKI_SPV(yiq), &spec, &pc, sizeof pc, groups)))
            goto done;
        vki_run_mark(run, "compare (yiq)");
        if ((rc = vki_reduce_final(rec, part, (uint32_t)groups, 2, VKI_RED_ADD | VKI_RED_ADD << 2, res,
                                   "compare-final")))
            goto done;
    } else {
        vki_spec_named(&spec, "INTMODE", intmode);
        vki_spec_named(&spec, "LEVELS", (uint32_t)L);
        compare_push pc = { vki_addr_of(da), vki_addr_of(db), vki_addr_of(part), vki_addr_of(diff), vki_addr_of(ia),
                            (float)o->fail, (float)o->warn, (float)o->diff_scale, int_threshold(o->fail, L),
                            int_threshold(o->warn, L), (uint32_t)npx, (uint32_t)groups };
        if ((rc = vki_rec_dispatch_1d(rec, "compare", VKI_SPV(compare), &spec, &pc, sizeof pc, groups)))
            goto done;
        vki_run_mark(run, "compare (errors)");
        uint32_t sum_op = intmode ? VKI_RED_ADD : VKI_RED_FF;
        uint32_t ops = sum_op | sum_op << 2 | VKI_RED_MAX << 4 | VKI_RED_ADD << 6 | VKI_RED_ADD << 8;
        if ((rc = vki_reduce_final(rec, part, (uint32_t)groups, 5, ops, res, "compare-final")))
            goto done;
    }
    vki_run_mark(run, "compare (final)");
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
        vki_spec_named(&ss, "SUBGROUP", vki_reduce_subgroup(g));
        vki_spec_named(&ss, "B_FMT", b->fmt);
        vki_spec_named(&ss, "STRIP", SSIM_STRIP);
        for (int k = 0; k <= SSIM_R; k++)
            vki_spec_namedf(&ss, gauss_names[k], (float)wd[k]);
        vki_spec_named(&ss, "CUT", W < 2 * SSIM_R + 1 || H < 2 * SSIM_R + 1);
        ssim_push sp = { vki_addr_of(da), vki_addr_of(db), vki_addr_of(spart), W, H, ow, oh,
                         W >= 2 * SSIM_R + 1 ? SSIM_R : 0, H >= 2 * SSIM_R + 1 ? SSIM_R : 0 };
        if ((rc = vki_rec_dispatch(rec, "ssim", VKI_SPV(ssim), &ss, &sp, sizeof sp, sgx, sgy, (uint32_t)C)))
            goto done;
        vki_run_mark(run, "ssim");
        if ((rc = vki_reduce_final(rec, spart, snrec, 1, VKI_RED_FF, res + RES_SSIM_SLOT * 8, "ssim-final")))
            goto done;
        vki_run_mark(run, "ssim (final)");
    }
    if ((rc = vki_run_submit(run)))
        goto done;
    double t_rb = vki_now_ms();
    if (over_b) { /* a view of b's memory, which the device wrote */
        if ((rc = vki_buf_invalidate(g, (vki_buf *)bb, e)) || (rc = view_of(b, &dimg, e)))
            goto done;
    } else if (o->want_diff && o->device_diff) { /* where the device wrote it (vkimg_image.priv) */
        vki_buf db_;
        if ((rc = vki_run_take_output(run, diff_slot, &db_)) ||
            (rc = vki_devimg_adopt(g, &db_, &dimg, W, H, dc, VKIMG_U8, e)))
            goto done;
    } else if (o->want_diff) {
        if ((rc = vki_image_alloc(&dimg, W, H, dc, VKIMG_U8, false, e)))
            goto done;
        memcpy(dimg.data, vki_run_output_data(run, diff_slot), dbytes);
    }
    double host_readback = vki_now_ms() - t_rb;

    const uint64_t *v = vki_run_output_data(run, res_slot);
    const uint64_t compared = npx - nignored;
    r->channels = C;
    r->compared = compared;
    r->ignored = nignored;
    if (yiq) {
        r->ndiff = v[0];
        r->naa = v[1];
    } else {
        const double N = (double)compared * C;
        uint32_t mbits = (uint32_t)(v[2] >> 32), idx = ~(uint32_t)v[2];
        double mse = 0;
        if (!compared) {
            r->mae = 0;
        } else if (intmode) {
            /* exact integer sums of d and d^2 (units of 1/L) */
            r->mae = (double)v[0] / L / N;
            mse = (double)v[1] / (L * L) / N;
            r->max_err = mbits / L;
        } else {
            r->mae = vki_ff_value(v[0]) / N;
            mse = vki_ff_value(v[1]) / N;
            float mf;
            memcpy(&mf, &mbits, sizeof mf);
            r->max_err = mf;
        }
        r->rmse = sqrt(mse);
        r->psnr = mse > 0 ? 10.0 * log10(1.0 / mse) : INFINITY;
        if (compared && v[2]) {
            r->max_c = (int)(idx % (uint32_t)C);
            r->max_x = (int)(idx / (uint32_t)C % (uint32_t)W);
            r->max_y = (int)(idx / (uint32_t)C / (uint32_t)W);
        }
        r->nfail = v[3];
        r->nwarn = v[4];
        r->ndiff = r->nfail;
    }
    if (o->ssim)
        r->ssim = vki_ff_value(v[RES_SSIM_SLOT]) / ((double)ow * (double)oh * C);
    if (o->want_diff) {
        r->diff = dimg;
        memset(&dimg, 0, sizeof dimg); /* r->diff owns it (and its priv) now */
    }
    if (timing) {
        memset(timing, 0, sizeof *timing);
        vki_run_times(run, timing);
        timing->readback_ms += host_readback;
        timing->down_host_ms = host_readback;
    }
done:
    vki_run_end(run);
    vkimg_image_free(&dimg);
    return rc;
}

/* shaders/analysis/yiq.comp's indices: 0 red, 1 yellow, k >= 2 the gray k */
#define PAL_G(k) ((uint32_t)(k) * 0x010101u | 0xff000000u)
#define PAL_G4(k) PAL_G(k), PAL_G((k) + 1), PAL_G((k) + 2), PAL_G((k) + 3)
#define PAL_G16(k) PAL_G4(k), PAL_G4((k) + 4), PAL_G4((k) + 8), PAL_G4((k) + 12)
static const uint32_t cmp_palette[256] = {
    0xff0000ffu, 0xff00ffffu, PAL_G(2),     PAL_G(3),     PAL_G4(4),    PAL_G4(8),    PAL_G4(12),
    PAL_G16(16), PAL_G16(32), PAL_G16(48),  PAL_G16(64),  PAL_G16(80),  PAL_G16(96),  PAL_G16(112),
    PAL_G16(128), PAL_G16(144), PAL_G16(160), PAL_G16(176), PAL_G16(192), PAL_G16(208), PAL_G16(224),
    PAL_G16(240),
};

const uint32_t *vkimg_compare_palette(void)
{
    return cmp_palette;
}

/* The top-left w x h of im, copied (a view would need a row pitch). */
static int crop_copy(const vkimg_image *im, int w, int h, vkimg_image *out, vkimg_err *e)
{
    int rc = vki_image_alloc(out, w, h, im->c, im->fmt, false, e);
    if (rc)
        return rc;
    size_t px = (size_t)im->c * vkimg_fmt_size(im->fmt);
    for (int y = 0; y < h; y++)
        memcpy((char *)out->data + (size_t)y * w * px, (const char *)im->data + (size_t)y * im->w * px, (size_t)w * px);
    return 0;
}

/* The ignore mask of the compared w x h (a byte per pixel, 1 = ignored), or
 * NULL when nothing is ignored; *n: the ignored pixels. */
static int ignore_mask(const vkimg_compare_opts *o, int w, int h, uint8_t **out, uint64_t *n, vkimg_err *e)
{
    *out = NULL;
    *n = 0;
    if (!o->nignore && !o->mask)
        return 0;
    if (o->nignore < 0 || (o->nignore && !o->ignore))
        return vki_fail(e, VKIMG_E_USAGE, "compare: bad ignore regions");
    const vkimg_image *m = o->mask;
    if (m && (!m->data || m->w < w || m->h < h))
        return vki_fail(e, VKIMG_E_USAGE, "compare: the mask is %dx%d, smaller than the compared %dx%d", m ? m->w : 0,
                        m ? m->h : 0, w, h);
    uint8_t *mk = calloc((size_t)w * (size_t)h, 1);
    if (!mk)
        return vki_fail(e, VKIMG_E_RUNTIME, "out of memory for the ignore mask");
    for (int k = 0; k < o->nignore; k++) {
        const vkimg_rect *r = &o->ignore[k];
        int x1 = r->x1 < 0 ? 0 : r->x1, y1 = r->y1 < 0 ? 0 : r->y1;
        int x2 = r->x2 >= w ? w - 1 : r->x2, y2 = r->y2 >= h ? h - 1 : r->y2;
        for (int y = y1; y <= y2; y++)
            if (x2 >= x1)
                memset(mk + (size_t)y * w + x1, 1, (size_t)(x2 - x1 + 1));
    }
    if (m) {
        size_t ss = vkimg_fmt_size(m->fmt);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const unsigned char *s = (const unsigned char *)m->data + ((size_t)y * m->w + x) * m->c * ss;
                bool set = false;
                for (size_t b = 0; b < ss; b++)
                    set |= s[b] != 0;
                if (set)
                    mk[(size_t)y * w + x] = 1;
            }
    }
    for (size_t i = 0; i < (size_t)w * h; i++)
        *n += mk[i];
    *out = mk;
    return 0;
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
    if (a->coded || b->coded)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_compare: a coded JPEG is not pixels (vkimg_run decodes it)");
    static const vkimg_compare_opts defaults = VKIMG_COMPARE_DEFAULTS;
    if (!o)
        o = &defaults;
    memset(r, 0, sizeof *r);
    r->verdict = VKIMG_CMP_ERROR;
    r->ssim = NAN;
    double t_start = vki_now_ms();
    if (!a->data || !b->data || a->w < 1 || a->h < 1 || a->c < 1 || a->c > 4 || b->w < 1 || b->h < 1 || b->c < 1 ||
        b->c > 4)
        return vki_fail(e, VKIMG_E_USAGE, "compare: invalid image (%dx%dx%d vs %dx%dx%d)", a->w, a->h, a->c, b->w,
                        b->h, b->c);
    if (!fmt_ok(a->fmt) || !fmt_ok(b->fmt))
        return vki_fail(e, VKIMG_E_USAGE, "compare: %s samples are not supported (u8, u16, f16 or f32)",
                        vkimg_fmt_name(fmt_ok(a->fmt) ? b->fmt : a->fmt));
    if (a->c != b->c || ((a->w != b->w || a->h != b->h) && !o->allow_size_mismatch)) {
        r->verdict = VKIMG_CMP_MISMATCH;
        return vki_fail(e, VKIMG_E_USAGE,
                        "compare: images differ in size or channels: the first is %dx%d with %d channel(s), "
                        "the second %dx%d with %d channel(s)",
                        a->w, a->h, a->c, b->w, b->h, b->c);
    }
    if (isnan(o->fail) || isnan(o->warn) || isnan(o->hardfail) || isnan(o->hardwarn) || isnan(o->failpercent) ||
        isnan(o->warnpercent) || !(o->diff_scale >= 0) || isinf(o->diff_scale) || !(o->threshold >= 0) ||
        o->threshold > 1 || isnan(o->max_diff_pixels) || isnan(o->max_diff_ratio))
        return vki_fail(e, VKIMG_E_USAGE, "compare: thresholds must be numbers, the YIQ threshold in 0..1 and the "
                        "diff scale finite and >= 0");
    if (!ctx->gpu.lim.int64)
        return vki_fail(e, VKIMG_E_RUNTIME,
                        "compare: the device lacks shaderInt64, needed for the 64-bit reductions on the device");
    /* the overlap; the rest of the larger extent counts as different */
    const int W = a->w > b->w ? a->w : b->w, H = a->h > b->h ? a->h : b->h;
    const int ow = a->w < b->w ? a->w : b->w, oh = a->h < b->h ? a->h : b->h;
    vkimg_image ca = { 0 }, cb = { 0 };
    uint8_t *ign = NULL;
    uint64_t nignored = 0;
    int rc = 0;
    if ((a->w != ow || a->h != oh) && (rc = crop_copy(a, ow, oh, &ca, e)))
        goto done;
    if ((b->w != ow || b->h != oh) && (rc = crop_copy(b, ow, oh, &cb, e)))
        goto done;
    if ((rc = ignore_mask(o, ow, oh, &ign, &nignored, e)))
        goto done;
    /* the same samples (compared once): every error is 0, and no picture with
     * diff_unless_equal */
    const bool same_shape = a->w == b->w && a->h == b->h && a->fmt == b->fmt;
    const bool integer = a->fmt == VKIMG_U8 || a->fmt == VKIMG_U16;
    const bool same = same_shape && (o->want_diff ? o->diff_unless_equal : !o->ssim && integer) &&
                      !memcmp(a->data, b->data, vkimg_image_bytes(a));
    vkimg_compare_opts oo = *o;
    if (same)
        oo.want_diff = false;
    o = &oo;
    const bool equal = same && !o->ssim && integer;
    if (equal) { /* the same samples: every error is 0, nothing to run */
        r->channels = a->c;
        r->ignored = nignored;
        r->compared = (uint64_t)ow * (uint64_t)oh - nignored;
        if (o->metric == VKIMG_METRIC_ABS)
            r->psnr = INFINITY;
        if (timing)
            memset(timing, 0, sizeof *timing);
    } else if ((rc = compare_core(&ctx->gpu, ca.data ? &ca : a, cb.data ? &cb : b, o, ign, nignored, r, timing, e))) {
        goto done;
    }
    r->width = W;
    r->height = H;
    r->pixels = (uint64_t)W * (uint64_t)H;
    r->outside = r->pixels - (uint64_t)ow * (uint64_t)oh;
    r->ndiff += r->outside;
    if (o->metric == VKIMG_METRIC_ABS) {
        r->nfail += r->outside;
        r->nwarn += r->outside;
    }
    uint64_t total = r->compared + r->outside;
    r->pct_fail = total ? 100.0 * (double)r->nfail / (double)total : 0;
    r->pct_warn = total ? 100.0 * (double)r->nwarn / (double)total : 0;
    r->diff_ratio = total ? (double)r->ndiff / (double)total : 0;
    bool budget = o->max_diff_pixels >= 0 || o->max_diff_ratio >= 0;
    bool over = (o->max_diff_pixels >= 0 && (double)r->ndiff > o->max_diff_pixels) ||
                (o->max_diff_ratio >= 0 && r->diff_ratio > o->max_diff_ratio);
    if (o->metric == VKIMG_METRIC_YIQ)
        r->verdict = (budget ? over : r->ndiff > 0) ? VKIMG_CMP_FAIL : VKIMG_CMP_OK;
    else if ((budget ? over : r->pct_fail > o->failpercent) || r->max_err > o->hardfail)
        r->verdict = VKIMG_CMP_FAIL;
    else if ((!budget && r->pct_warn > o->warnpercent) || r->max_err > o->hardwarn)
        r->verdict = VKIMG_CMP_WARN;
    else
        r->verdict = VKIMG_CMP_OK;
    if (timing)
        timing->total_ms = vki_now_ms() - t_start;
done:
    if (rc) {
        vkimg_image_free(&r->diff);
        r->verdict = r->verdict == VKIMG_CMP_MISMATCH ? VKIMG_CMP_MISMATCH : VKIMG_CMP_ERROR;
    }
    free(ign);
    vkimg_image_free(&ca);
    vkimg_image_free(&cb);
    return rc;
}
