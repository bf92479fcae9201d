/* integral: exports the summed-area table as exact uint64 per channel (.npy). */
#include "ops/sat.h"
#include "core/util.h"
#include "spv/integral.spv.h"
#include "spv/integral_lines.spv.h"

#include <stdio.h>

enum { PASS_ROWS, PASS_ROWCARRY, PASS_COLS, PASS_COLCARRY, PASS_FIX, PASS_STRIPS, PASS_COLUMNS };

/* The CPU devices' shape (integral.comp SAT_LINES_ONLY): 8- and 16-bit input whose
 * passes loop at most 60000 times an invocation (lavapipe ends an invocation's
 * loops after 65535 iterations in all, silently). VKIMG_SAT_LINES=0 runs the
 * scans, =1 this on any device (tests). */
static bool use_lines(const vki_rec *r, const vki_step *s, uint32_t strip)
{
    return (s->in_fmt == VKIMG_U8 || s->in_fmt == VKIMG_U16) && s->h <= 60000 &&
           (uint64_t)s->w * (uint64_t)s->in_c / strip < 60000 &&
           vki_cpu_shape(r->gpu, "VKIMG_SAT_LINES",
                         (uint64_t)s->w * (uint64_t)s->h * (uint64_t)s->in_c * vkimg_fmt_size(s->in_fmt));
}

static int record_sat_lines(vki_rec *r, const vki_step *s, VkDeviceAddress sat, bool wide, uint32_t strip)
{
    const uint32_t w = (uint32_t)s->w, h = (uint32_t)s->h, c = (uint32_t)s->in_c, wg = 64;
    const uint32_t nseg = w * c / strip; /* whole strips a row */
    VkDeviceAddress carry;
    int rc = vki_rec_scratch(r, (VkDeviceSize)h * (nseg + 1) * c * 4, "integral row prefixes", &carry);
    if (rc)
        return rc;
    struct {
        vki_addr src, sat, rowcarry, colcarry;
        uint32_t w, h, nseg, seglen, band, nband;
    } pc = { vki_addr_of(s->in), vki_addr_of(sat), vki_addr_of(carry), vki_addr_of(0), w, h, nseg, strip, 0, 0 };
    vki_spec spec = { 0 };
    vki_step_spec(s, &spec, wg, 1, 1);
    vki_spec_named(&spec, "WIDE", wide);
    vki_spec_named(&spec, "S", strip);
    /* u32 entries two a word where every row's first is even */
    vki_spec_named(&spec, "PAIRS", !wide && (uint64_t)w * c % 2 == 0);
    vki_spec_named(&spec, "PASS", PASS_STRIPS);
    if ((rc = vki_rec_dispatch_1d(r, "integral-strips", VKI_SPV(integral_lines), &spec, &pc, sizeof pc,
                                  (h + wg - 1) / wg)))
        return rc;
    vki_spec_named(&spec, "PASS", PASS_COLUMNS);
    if (nseg && (rc = vki_rec_dispatch_1d(r, "integral-columns", VKI_SPV(integral_lines), &spec, &pc, sizeof pc,
                                          (nseg + wg - 1) / wg)))
        return rc;
    if (w * c % strip == 0)
        return 0;
    vki_spec_named(&spec, "TAIL", 1);
    vki_step_spec(s, &spec, 1, 1, 1);
    return vki_rec_dispatch_1d(r, "integral-columns-tail", VKI_SPV(integral_lines), &spec, &pc, sizeof pc, 1);
}

int vki_record_sat(vki_rec *r, const vki_step *s, VkDeviceAddress sat, bool wide)
{
    const uint32_t strip = s->in_c == 3 ? 24 : 8; /* whole 64-bit words of 8-bit samples, whole pixels */
    if (use_lines(r, s, strip))
        return record_sat_lines(r, s, sat, wide, strip);
    const vki_gpu *g = r->gpu;
    const uint32_t w = (uint32_t)s->w, h = (uint32_t)s->h, c = (uint32_t)s->in_c;
    const uint32_t n = vki_wg_1d(g), k = 4, seglen = n * k;
    const uint32_t nseg = (w + seglen - 1) / seglen;
    /* Column pass: one invocation per (column, band of rows); enough bands to
     * give the device ~64K invocations, bands of at least 32 rows. */
    uint32_t nband = (65536 + w - 1) / w;
    if (nband > (h + 31) / 32)
        nband = (h + 31) / 32;
    if (nband < 1)
        nband = 1;
    uint32_t band = (h + nband - 1) / nband;
    nband = (h + band - 1) / band;

    VkDeviceAddress rowcarry = 0, colcarry = 0;
    int rc;
    if (nseg > 1 && (rc = vki_rec_scratch(r, (VkDeviceSize)h * nseg * c * 8, "integral row carries", &rowcarry)))
        return rc;
    if (nband > 1 && (rc = vki_rec_scratch(r, (VkDeviceSize)w * nband * c * 8, "integral column carries", &colcarry)))
        return rc;
    struct {
        vki_addr src, sat, rowcarry, colcarry;
        uint32_t w, h, nseg, seglen, band, nband;
    } pc = { vki_addr_of(s->in), vki_addr_of(sat), vki_addr_of(rowcarry), vki_addr_of(colcarry),
             w, h, nseg, seglen, band, nband };
    vki_spec spec = { 0 };
    vki_step_spec(s, &spec, n, 1, 1);
    vki_spec_named(&spec, "K", k);
    vki_spec_named(&spec, "WIDE", wide);
    vki_spec_named(&spec, "LEVELS", s->levels);
#define PASS(p, ...)                                                                                       \
    do {                                                                                                   \
        vki_spec_named(&spec, "PASS", p);                                                                 \
        if ((rc = __VA_ARGS__))                                                                            \
            return rc;                                                                                     \
    } while (0)
    PASS(PASS_ROWS, vki_rec_dispatch(r, "integral-rows", VKI_SPV(integral), &spec, &pc, sizeof pc, nseg, h, 1));
    if (nseg > 1)
        PASS(PASS_ROWCARRY, vki_rec_dispatch_1d(r, "integral-rowcarry", VKI_SPV(integral), &spec, &pc,
                                                sizeof pc, (h + n - 1) / n));
    PASS(PASS_COLS, vki_rec_dispatch(r, "integral-cols", VKI_SPV(integral), &spec, &pc, sizeof pc,
                                     (w + n - 1) / n, nband, 1));
    if (nband > 1) {
        PASS(PASS_COLCARRY, vki_rec_dispatch_1d(r, "integral-colcarry", VKI_SPV(integral), &spec, &pc,
                                                sizeof pc, (w + n - 1) / n));
        vki_step_spec(s, &spec, 16, 16, 1);
        PASS(PASS_FIX, vki_rec_dispatch(r, "integral-fix", VKI_SPV(integral), &spec, &pc, sizeof pc,
                                        (w + 15) / 16, (h + 15) / 16, 1));
    }
#undef PASS
    return 0;
}

bool vki_box_lines(const vki_rec *r, const vki_step *s, bool wide, const char *env)
{
    return vki_cpu_shape(r->gpu, env, (uint64_t)s->w * (uint64_t)s->h * (uint64_t)s->in_c * (wide ? 8 : 4));
}

int vki_record_box_lines(vki_rec *r, const vki_step *s, int radius, const char *name, const uint32_t *spv,
                         size_t spv_size, vki_spec *spec, const void *pc, uint32_t pc_size)
{
    /* the strips of whole windows, as boxes.glsl box_interior and box_strip */
    const int64_t strip = s->in_c == 3 ? 24 : 8, nx = s->w - 2 * (int64_t)radius - 1,
                  ny = s->h - 2 * (int64_t)radius - 1;
    const bool inner = nx > 0 && ny > 0 && nx * s->in_c >= strip;
    const uint64_t strips = inner ? (uint64_t)((nx * s->in_c + strip - 1) / strip) * (uint64_t)ny : 0,
                   edge = (uint64_t)s->w * (uint64_t)s->h - (inner ? (uint64_t)nx * (uint64_t)ny : 0);
    const uint32_t wg = 64;
    char n1[64], n2[64];
    snprintf(n1, sizeof n1, "%s-lines", name);
    snprintf(n2, sizeof n2, "%s-lines-edge", name);
    vki_step_spec(s, spec, wg, 1, 1);
    vki_spec_named(spec, "NS", (uint32_t)strip);
    vki_spec_named(spec, "EDGE", 0);
    int rc = strips ? vki_rec_dispatch_1d(r, n1, spv, spv_size, spec, pc, pc_size, (strips + wg - 1) / wg) : 0;
    vki_spec_named(spec, "EDGE", 1);
    return !rc && edge ? vki_rec_dispatch_1d(r, n2, spv, spv_size, spec, pc, pc_size, (edge + wg - 1) / wg) : rc;
}

static int record_integral(vki_rec *r, const vki_step *s)
{
    return vki_record_sat(r, s, s->out, true);
}

const vki_op_desc vki_op_integral = {
    .name = "integral",
    .help = "Summed-area table per channel of the integer levels, exact uint64 (write it to .npy).",
    .data_output = true,
    .data_fmt = VKIMG_U64,
    .record = record_integral,
};
