/* mipmaps: every level of a mip chain (or the first `levels`), level k the resize
 * of level k-1 (as written) to floor(w/2) x floor(h/2), at least 1 x 1, all in one
 * submission. Must be last: it writes one image per level (a {level} output
 * template, or one KTX2 file). */
#include "ops/remap.h"
#include "ops/resample.h"
#include "core/util.h"

enum { O_LEVELS, O_FILTER, O_LINEAR };

static const vki_opt mipmaps_opts[] = {
    [O_LEVELS] = { .name = "levels", .type = VKI_OPT_INT, .def = 0, .min = 0, .max = VKI_MAX_OUTPUTS,
                   .help = "levels to make, the full size included (0: every level down to 1x1)" },
    [O_FILTER] = { .name = "filter", .type = VKI_OPT_ENUM, .def = VKI_FILTER_BOX, .choices = vki_filter_names,
                   .help = "as resize's (box: the mean of 2x2 pixels for even sizes)" },
    [O_LINEAR] = { .name = "linear", .type = VKI_OPT_BOOL, .def = 0, .help = "as resize's" },
};

static int mipmaps_outputs(int w, int h, const vki_args *a, int *ws, int *hs)
{
    int max = a->v[O_LEVELS] > 0 ? (int)a->v[O_LEVELS] : VKI_MAX_OUTPUTS, n = 0;
    for (;;) {
        ws[n] = w;
        hs[n] = h;
        n++;
        if ((w == 1 && h == 1) || n == max)
            return n;
        w = w / 2 > 1 ? w / 2 : 1;
        h = h / 2 > 1 ? h / 2 : 1;
    }
}

static int record_mipmaps(vki_rec *r, const vki_step *s)
{
    const double *v = s->args->v;
    vki_resample rs = { (vki_filter)(int)v[O_FILTER], v[O_LINEAR] != 0, false };
    /* level 0: the input as it is, in the output's format */
    vki_remap id = vki_crop_remap(0, 0);
    int rc = vki_record_remap(r, s, &id);
    for (int k = 1; k < s->nout && !rc; k++) {
        vki_step t = *s;
        t.in = s->outs[k - 1];
        t.w = t.geo_w = s->outs_w[k - 1];
        t.h = t.geo_h = s->outs_h[k - 1];
        t.in_c = s->out_c;
        t.in_fmt = s->out_fmt;
        t.in_packed_rgb8_words = false;
        t.out = s->outs[k];
        t.out_w = s->outs_w[k];
        t.out_h = s->outs_h[k];
        rc = vki_record_resample(r, &t, &rs);
    }
    return rc;
}

const vki_op_desc vki_op_mipmaps = {
    .name = "mipmaps",
    .help = "Every mip level down to 1x1 (or levels=N), each the resize of the one before (box by default); "
            "last in a pipeline: write with a {level} output template or to .ktx2.",
    .opts = mipmaps_opts,
    .nopts = (int)VKI_ARRAY_LEN(mipmaps_opts),
    .outputs = mipmaps_outputs,
    .record = record_mipmaps,
};
