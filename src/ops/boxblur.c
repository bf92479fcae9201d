/* boxblur: mean over the (2R+1)^2 window clipped to the image, O(1) per pixel
 * from the summed-area table; bit-exact (integer arithmetic on the levels). */
#include "ops/sat.h"
#include "core/util.h"
#include "spv/boxblur.spv.h"
#include "spv/boxblur_lines.spv.h"


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
    /* CPU devices: boxblur_lines.spv (VKIMG_BOXBLUR_LINES=0 runs the per-pixel shape) */
    if (vki_box_lines(r, s, wide, "VKIMG_BOXBLUR_LINES"))
        return vki_record_box_lines(r, s, radius, "boxblur", VKI_SPV(boxblur_lines), &spec, &pc, sizeof pc);
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
