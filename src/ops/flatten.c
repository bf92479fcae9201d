/* flatten: the colour composited over an opaque background by its alpha, and the
 * alpha dropped (vips' flatten, sharp's flatten(), ImageMagick's -background C
 * -alpha remove). The run adds it by itself where the caller keeps no alpha
 * (vkimg_run_opts.flatten: JPEG files), with a black background as vips and
 * sharp write such files. */
#include "exec/exec.h"
#include "pipeline/geometry.h"
#include "core/util.h"
#include "spv/flatten.spv.h"

#include <stdio.h>

enum { O_BACKGROUND };

static const vki_opt flatten_opts[] = {
    [O_BACKGROUND] = { .name = "background", .type = VKI_OPT_TEXT, .placeholder = VKI_COLOUR_SYNTAX,
                       .parse = vki_colour_parse, .format = vki_colour_format, .def_text = "black",
                       .help = "the colour under the image, opaque (gray images: its BT.601 luma)" },
};

static int flatten_check(vki_args *a, char *why, size_t n, int *bad)
{
    if (a->x[O_BACKGROUND][3] < 1.0) {
        snprintf(why, n, "the background must be opaque (the result has no alpha)");
        *bad = O_BACKGROUND;
        return -1;
    }
    return 0;
}

static int flatten_channels(int in_c, const vki_args *a)
{
    (void)a;
    return VKI_COLOUR_CHANNELS(in_c);
}

static int record_flatten(vki_rec *r, const vki_step *s)
{
    const double *bg = s->args->x[O_BACKGROUND];
    float params[3];
    if (VKI_COLOUR_CHANNELS(s->in_c) == 1) /* its luma, as rotate's background on gray */
        params[0] = params[1] = params[2] = (float)vki_colour_luma(bg);
    else
        for (int c = 0; c < 3; c++)
            params[c] = (float)bg[c];
    return vki_rec_pixels(r, s, "flatten", VKI_SPV(flatten), NULL, params, sizeof params);
}

const vki_op_desc vki_op_flatten = {
    .name = "flatten",
    .help = "Composite the colour over a background by its alpha and drop the alpha (RGBA -> RGB, gray+alpha -> gray).",
    .opts = flatten_opts,
    .nopts = (int)VKI_ARRAY_LEN(flatten_opts),
    .out_channels = flatten_channels,
    .unit_out = true,
    .flattens = true,
    .check = flatten_check,
    .record = record_flatten,
};
