/* boxblur: mean over the (2R+1)^2 window clipped to the image, O(1) per pixel
 * from the summed-area table; bit-exact (integer arithmetic on the levels). */
#include "ops/sat.h"
#include "core/util.h"
#include "spv/boxblur.spv.h"
#include "spv/boxblur_lines.spv.h"

#include <stdlib.h>


static const vki_opt boxblur_opts[] = {
    { .name = "radius", .type = VKI_OPT_INT, .def = 1, .min = 0, .max = 1 << 20,
      .help = "window radius in pixels (window: 2*radius+1 square, clipped to the image)" },
};

/* True if a box sum may not fit 32 bits (then the table is uint64). */
bool vki_box_needs_wide(const vki_step *s, int radius)
{
    uint64_t side = 2 * (uint64_t)radius + 1;
    uint64_t bw = side < (uint64_t)s->w ? side : (uint64_t)s->w;
    uint64_t bh = side < (uint64_t)s->h ? side : (uint64_t)s->h;
    return bw * bh * s->levels > UINT32_MAX;
}

static int record_boxblur(vki_rec *r, const vki_step *s)
{
    int radius = (int)s->args->v[0];
    bool wide = vki_box_needs_wide(s, radius);
    VkDeviceAddress sat;
    int rc = vki_rec_scratch(r, (VkDeviceSize)s->w * s->h * s->in_c * (wide ? 8 : 4), "summed-area table", &sat);
    if (!rc)
        rc = vki_record_sat(r, s, sat, wide);
    if (rc)
        return rc;
    vki_spec spec = { 0 };
    vki_spec_named(&spec, "WIDE", wide);
    vki_spec_named(&spec, "LEVELS", s->levels);
    struct {
        vki_addr sat, dst;
        int32_t w, h, r;
    } pc = { vki_addr_of(sat), vki_addr_of(s->out), s->w, s->h, radius };
    /* CPU devices: boxblur_lines.spv, strips of whole windows (VKIMG_BOXBLUR_LINES=0
     * runs the per-pixel shape, =1 the strips on any device); byte offsets of the
     * table in 32 bits */
    const char *ev = getenv("VKIMG_BOXBLUR_LINES");
    const bool cpu = r->gpu->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    const uint64_t n = (uint64_t)s->w * (uint64_t)s->h * (uint64_t)s->in_c;
    if ((ev && (*ev == '0' || *ev == '1') ? *ev == '1' : cpu) && n * (wide ? 8 : 4) < UINT32_MAX - 64) {
        const int64_t strip = s->in_c == 3 ? 24 : 8, nx = s->w - 2 * (int64_t)radius - 1,
                      ny = s->h - 2 * (int64_t)radius - 1;
        const bool inner = nx > 0 && ny > 0 && nx * s->in_c >= strip; /* as boxblur.comp interior() */
        const uint64_t strips = inner ? (uint64_t)((nx * s->in_c + strip - 1) / strip) * (uint64_t)ny : 0,
                       edge = (uint64_t)s->w * (uint64_t)s->h - (inner ? (uint64_t)nx * (uint64_t)ny : 0);
        const uint32_t wg = 64;
        vki_step_spec(s, &spec, wg, 1, 1);
        vki_spec_named(&spec, "NS", (uint32_t)strip);
        if (strips && (rc = vki_rec_dispatch_1d(r, "boxblur-lines", VKI_SPV(boxblur_lines), &spec, &pc, sizeof pc,
                                                (strips + wg - 1) / wg)))
            return rc;
        vki_spec_named(&spec, "EDGE", 1);
        return edge ? vki_rec_dispatch_1d(r, "boxblur-lines-edge", VKI_SPV(boxblur_lines), &spec, &pc, sizeof pc,
                                          (edge + wg - 1) / wg)
                    : 0;
    }
    vki_step_spec(s, &spec, 16, 16, 1);
    return vki_rec_dispatch(r, "boxblur", VKI_SPV(boxblur), &spec, &pc, sizeof pc,
                            ((uint32_t)s->w + 15) / 16, ((uint32_t)s->h + 15) / 16, 1);
}

const vki_op_desc vki_op_boxblur = {
    .name = "boxblur",
    .help = "Box blur of any radius in O(1) per pixel from the summed-area table (exact, all channels).",
    .opts = boxblur_opts,
    .nopts = 1,
    .record = record_boxblur,
};
