/* threshold: binary image (0 or max) per colour channel, alpha kept: a fixed
 * value, Bradley's adaptive local mean (summed-area table), or Otsu (histogram
 * reduction + threshold choice on the device). Exact integer comparisons. */
#include "ops/hist.h"
#include "ops/sat.h"
#include "core/util.h"
#include "spv/threshold.spv.h"
#include "spv/threshold_adaptive.spv.h"

#include <math.h>

enum { O_MODE, O_VALUE, O_RADIUS, O_OFFSET };
enum { MODE_VALUE, MODE_ADAPTIVE, MODE_OTSU };

static const char *const modes[] = { "value", "adaptive", "otsu", NULL };

static const vki_opt threshold_opts[] = {
    [O_MODE] = { .name = "mode", .type = VKI_OPT_ENUM, .def = MODE_VALUE, .choices = modes,
                 .help = "value: fixed threshold; adaptive: local mean (Bradley); otsu: Otsu's method per channel" },
    [O_VALUE] = { .name = "value", .type = VKI_OPT_FLOAT, .def = 0.5, .min = 0, .max = 1,
                  .help = "mode=value: white where the sample is above value (0..1)" },
    [O_RADIUS] = { .name = "radius", .type = VKI_OPT_INT, .def = 15, .min = 1, .max = 1 << 20,
                   .help = "mode=adaptive: window radius in pixels" },
    [O_OFFSET] = { .name = "offset", .type = VKI_OPT_INT, .def = 15, .min = 0, .max = 100,
                   .help = "mode=adaptive: white where the sample is above (100-offset)% of the local mean" },
};

static int record_threshold(vki_rec *r, const vki_step *s)
{
    int mode = (int)s->args->v[O_MODE];
    int radius = (int)s->args->v[O_RADIUS];
    if (mode == MODE_OTSU && !r->gpu->lim.float64)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "threshold=mode=otsu: the device lacks shaderFloat64");
    bool wide = mode == MODE_ADAPTIVE && vki_box_needs_wide(s, radius);
    VkDeviceAddress sat = 0, hist = 0;
    int rc = 0;
    if (mode == MODE_ADAPTIVE) {
        rc = vki_rec_scratch(r, (VkDeviceSize)s->w * s->h * s->in_c * (wide ? 8 : 4), "summed-area table", &sat);
        if (!rc)
            rc = vki_record_sat(r, s, sat, wide);
    } else if (mode == MODE_OTSU) {
        rc = vki_rec_scratch_init(r, (1024 + 4) * sizeof(uint32_t), NULL, "threshold histogram", &hist);
    }
    if (rc)
        return rc;
    struct {
        vki_addr src, dst, sat, hist;
        uint32_t w, h;
        int32_t r;
        uint32_t t, offset;
    } pc = { vki_addr_of(s->in), vki_addr_of(s->out), vki_addr_of(sat), vki_addr_of(hist), (uint32_t)s->w, (uint32_t)s->h,
             radius, (uint32_t)floor(s->args->v[O_VALUE] * s->levels), (uint32_t)s->args->v[O_OFFSET] };
    vki_spec spec = { 0 };
    /* runs for the value and Otsu modes (adaptive reads its windows' sums): on
     * GPUs too for the comparisons (H100, 8K RGB8: 0.175 -> 0.151 ms), not for
     * Otsu's histogram (an invocation's own: 10x slower than shared atomics there) */
    const uint32_t runs = mode == MODE_ADAPTIVE ? 0 : vki_runs(r->gpu, s, 1);
    vki_step_spec(s, &spec, 16, 16, 1);
    vki_spec_named(&spec, "MODE", (uint32_t)mode);
    vki_spec_named(&spec, "WIDE", wide);
    vki_spec_named(&spec, "LEVELS", s->levels);
    uint32_t gx = ((uint32_t)s->w + 15) / 16, gy = ((uint32_t)s->h + 15) / 16;
    if (mode == MODE_OTSU) {
        vki_spec_named(&spec, "PASS", 0);
        if ((rc = vki_rec_histogram(r, s, vki_runs(r->gpu, s, 0), "threshold-hist", VKI_SPV(threshold), &spec, &pc,
                                    sizeof pc)))
            return rc;
        vki_spec_named(&spec, "PASS", 1);
        if ((rc = vki_rec_dispatch(r, "threshold-otsu", VKI_SPV(threshold), &spec, &pc, sizeof pc, 1, 1, 1)))
            return rc;
    }
    vki_spec_named(&spec, "PASS", 2);
    /* CPU devices, 8- and 16-bit input: threshold_adaptive.spv (VKIMG_ADAPTIVE_LINES=0
     * runs the per-pixel shape) */
    if (mode == MODE_ADAPTIVE && (s->in_fmt == VKIMG_U8 || s->in_fmt == VKIMG_U16) &&
        vki_box_lines(r, s, wide, "VKIMG_ADAPTIVE_LINES"))
        return vki_record_box_lines(r, s, radius, "threshold", VKI_SPV(threshold_adaptive), &spec, &pc, sizeof pc);
    if (runs) /* 16 x 16 invocations a workgroup */
        return vki_rec_dispatch_runs(r, s, runs, 256, "threshold", VKI_SPV(threshold), &spec, &pc, sizeof pc);
    return vki_rec_dispatch(r, "threshold", VKI_SPV(threshold), &spec, &pc, sizeof pc, gx, gy, 1);
}

const vki_op_desc vki_op_threshold = {
    .name = "threshold",
    .help = "Binary threshold per colour channel (alpha kept): fixed value, adaptive (Bradley, SAT) or Otsu.",
    .opts = threshold_opts,
    .nopts = (int)(sizeof threshold_opts / sizeof threshold_opts[0]),
    .record = record_threshold,
};
