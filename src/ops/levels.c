/* levels: ImageMagick's -level black,white,gamma on the colour channels. */
#include "exec/exec.h"
#include "core/util.h"
#include "spv/levels.spv.h"

#include <stdio.h>

enum { O_BLACK, O_WHITE, O_GAMMA };

static const vki_opt levels_opts[] = {
    [O_BLACK] = { .name = "black", .type = VKI_OPT_FLOAT, .def = 0, .min = 0, .max = 1,
                  .help = "input level that becomes 0 (0..1)" },
    [O_WHITE] = { .name = "white", .type = VKI_OPT_FLOAT, .def = 1, .min = 0, .max = 1,
                  .help = "input level that becomes 1 (0..1, above black)" },
    [O_GAMMA] = { .name = "gamma", .type = VKI_OPT_FLOAT, .def = 1, .min = 0.01, .max = 100,
                  .help = "midtone exponent: out = t^(1/gamma); > 1 brightens" },
};

static int levels_check(vki_args *a, char *why, size_t n, int *bad)
{
    if (a->v[O_WHITE] <= a->v[O_BLACK]) {
        snprintf(why, n, "white (%g) must be above black (%g)", a->v[O_WHITE], a->v[O_BLACK]);
        *bad = a->set[O_WHITE] ? O_WHITE : O_BLACK;
        return -1;
    }
    return 0;
}

static int record_levels(vki_rec *r, const vki_step *s)
{
    const double *v = s->args->v;
    /* in the input's units (the shader's x: the integer level of 8/16-bit samples),
     * black as a float plus the float of the rest: x - black is exact where x is at
     * black or near it (black 0.2 of 8-bit 51 gives 0, not 2.5e-8 that a gamma of 8
     * makes 28 of 255) */
    double m = s->in_fmt == VKIMG_U8 ? 255.0 : s->in_fmt == VKIMG_U16 ? 65535.0 : 1.0, b = v[O_BLACK] * m;
    float params[4] = { (float)b, (float)(b - (float)b), (float)(1.0 / ((v[O_WHITE] - v[O_BLACK]) * m)),
                        (float)(1.0 / v[O_GAMMA]) };
    return vki_rec_pixels(r, s, "levels", VKI_SPV(levels), NULL, params, sizeof params);
}

const vki_op_desc vki_op_levels = {
    .name = "levels",
    .help = "Levels: out = ((in - black) / (white - black))^(1/gamma) clamped, per colour channel (alpha kept).",
    .opts = levels_opts,
    .nopts = (int)VKI_ARRAY_LEN(levels_opts),
    .check = levels_check,
    .record = record_levels,
};
