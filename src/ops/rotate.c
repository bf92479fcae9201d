/* rotate: by 90, 180 or 270 degrees exactly (remap.h), or by any angle with
 * bicubic interpolation onto a canvas grown to hold the whole image
 * (shaders/ops/rotate.comp), the corners filled with a background colour. A
 * background that is not opaque gives an image without alpha an alpha channel. */
#include "ops/remap.h"
#include "pipeline/geometry.h"
#include "core/util.h"
#include "spv/rotate.spv.h"
#include "spv/rotate_lines.spv.h"

#include <math.h>
#include <stdio.h>

enum { O_ANGLE, O_BACKGROUND };

static const vki_opt rotate_opts[] = {
    [O_ANGLE] = { .name = "angle", .type = VKI_OPT_FLOAT, .def = 90, .min = -36000, .max = 36000,
                  .help = "degrees, clockwise; multiples of 90 are exact moves, others bicubic" },
    [O_BACKGROUND] = { .name = "background", .type = VKI_OPT_TEXT, .placeholder = VKI_COLOUR_SYNTAX,
                       .parse = vki_colour_parse, .format = vki_colour_format, .def_text = "black",
                       .help = "the colour of the corners a rotation by another angle uncovers (transparent too)" },
};

/* The angle in [0, 360), and its EXIF-style orientation when it is a multiple of
 * 90 degrees (1, 6, 3, 8), else 0. */
static double angle_of(const vki_args *a, int *orientation)
{
    double t = fmod(a->v[O_ANGLE], 360.0);
    if (t < 0)
        t += 360.0;
    if (t >= 360.0) /* a hair below 0 (-1e-14) rounds to 360.0 above */
        t = 0.0;
    static const int o[4] = { 1, 6, 3, 8 };
    *orientation = t == floor(t) && (int)t % 90 == 0 ? o[(int)t / 90] : 0;
    return t;
}

static bool gains_alpha(const vki_args *a, int in_c)
{
    int o;
    angle_of(a, &o);
    return !o && !VKI_HAS_ALPHA(in_c) && a->x[O_BACKGROUND][3] < 1.0;
}

/* by a multiple of 90 degrees: an exact move */
static bool rotate_moves(const vki_args *a)
{
    int o;
    angle_of(a, &o);
    return o != 0;
}

static int rotate_channels(int in_c, const vki_args *a)
{
    return gains_alpha(a, in_c) ? in_c + 1 : in_c;
}

static int rotate_size(int w, int h, const vki_args *a, int *ow, int *oh, char *why, size_t n)
{
    int o;
    double t = angle_of(a, &o) * M_PI / 180.0;
    if (o)
        return vki_orientation_size(o, w, h, ow, oh, why, n);
    double c = fabs(cos(t)), s = fabs(sin(t));
    double rw = fmax(1.0, ceil(w * c + h * s - 1e-6)), rh = fmax(1.0, ceil(w * s + h * c - 1e-6));
    if (rw > VKI_MAX_SIDE || rh > VKI_MAX_SIDE) {
        snprintf(why, n, "the result would be %.0fx%.0f, a side over the limit of %d", rw, rh, VKI_MAX_SIDE);
        return -1;
    }
    *ow = (int)rw;
    *oh = (int)rh;
    return 0;
}

static int record_rotate(vki_rec *r, const vki_step *s)
{
    int o;
    double t = angle_of(s->args, &o) * M_PI / 180.0;
    if (o) {
        int ow, oh;
        vki_remap m = vki_orientation_remap(o, s->w, s->h, &ow, &oh);
        return vki_record_remap(r, s, &m);
    }
    const double *bg = s->args->x[O_BACKGROUND];
    float pre[4] = { 0, 0, 0, 0 };
    /* the background in the output's channels (gray: BT.601 luma), premultiplied */
    int oc = s->out_c, colour = VKI_COLOUR_CHANNELS(oc);
    double a = VKI_HAS_ALPHA(oc) ? bg[3] : 1.0;
    if (colour == 1)
        pre[0] = (float)(vki_colour_luma(bg) * a);
    else
        for (int c = 0; c < 3; c++)
            pre[c] = (float)(bg[c] * a);
    if (VKI_HAS_ALPHA(oc))
        pre[colour] = (float)a;
    struct {
        vki_addr src, dst;
        uint32_t in_w, in_h, out_w, out_h;
        float c, s, pad[2];
        float bg[4];
    } pc = { vki_addr_of(s->in), vki_addr_of(s->out), (uint32_t)s->w, (uint32_t)s->h, (uint32_t)s->out_w,
             (uint32_t)s->out_h, (float)cos(t), (float)sin(t), { 0, 0 }, { pre[0], pre[1], pre[2], pre[3] } };
    vki_spec spec = { 0 };
    /* CPU devices: rotate_lines.spv (a window of 4 pixels a row of taps, read as
     * 64-bit words); VKIMG_ROTATE_LINES=0 runs the per-tap shape */
    if (s->in_fmt != VKIMG_F16 &&
        vki_cpu_shape(r->gpu, "VKIMG_ROTATE_LINES",
                      (uint64_t)s->w * (uint64_t)s->h * (uint64_t)s->in_c * vkimg_fmt_size(s->in_fmt))) {
        /* 8-bit output: 8 outputs of a row an invocation, written as whole words */
        const uint32_t wg = 64, nb = s->out_fmt == VKIMG_U8 && s->out_w >= 8 ? 8 : 1;
        vki_step_spec(s, &spec, wg, 1, 1);
        vki_spec_named(&spec, "NB", nb);
        const uint64_t items = ((uint64_t)s->out_w + nb - 1) / nb * (uint64_t)s->out_h;
        return vki_rec_dispatch_1d(r, "rotate-lines", VKI_SPV(rotate_lines), &spec, &pc, sizeof pc,
                                   (items + wg - 1) / wg);
    }
    uint32_t wy = r->gpu->lim.max_wg_invocations / 16 < 16 ? r->gpu->lim.max_wg_invocations / 16 : 16;
    vki_step_spec(s, &spec, 16, wy, 1);
    return vki_rec_dispatch(r, "rotate", VKI_SPV(rotate), &spec, &pc, sizeof pc, ((uint32_t)s->out_w + 15) / 16,
                            ((uint32_t)s->out_h + wy - 1) / wy, 1);
}

const vki_op_desc vki_op_rotate = {
    .name = "rotate",
    .help = "Rotate clockwise: 90/180/270 exactly, any other angle bicubic onto a canvas that holds the whole image.",
    .opts = rotate_opts,
    .nopts = (int)VKI_ARRAY_LEN(rotate_opts),
    .out_channels = rotate_channels,
    .out_size = rotate_size,
    .moves = rotate_moves,
    .record = record_rotate,
};
