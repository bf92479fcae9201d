/* flip, flop, transpose, transverse: the exact moves of the EXIF orientations
 * 4, 2, 5 and 7 (remap.h), each an op of its own. */
#include "ops/remap.h"

#define ORIENT_OP(NAME, ORIENTATION, HELP)                                                                 \
    static int NAME##_size(int w, int h, const vki_args *a, int *ow, int *oh, char *why, size_t n)         \
    {                                                                                                      \
        (void)a;                                                                                           \
        return vki_orientation_size(ORIENTATION, w, h, ow, oh, why, n);                                    \
    }                                                                                                      \
    static int record_##NAME(vki_rec *r, const vki_step *s)                                                \
    {                                                                                                      \
        int ow, oh;                                                                                        \
        vki_remap m = vki_orientation_remap(ORIENTATION, s->w, s->h, &ow, &oh);                            \
        return vki_record_remap(r, s, &m);                                                                 \
    }                                                                                                      \
    const vki_op_desc vki_op_##NAME = { .name = #NAME, .help = HELP, .out_size = NAME##_size,              \
                                        .moves = vki_moves_always, .record = record_##NAME }

ORIENT_OP(flip, 4, "Mirror top to bottom (exact).");
ORIENT_OP(flop, 2, "Mirror left to right (exact).");
ORIENT_OP(transpose, 5, "Mirror along the top-left to bottom-right diagonal (exact; width and height swap).");
ORIENT_OP(transverse, 7, "Mirror along the top-right to bottom-left diagonal (exact; width and height swap).");

/* orient=N: the move EXIF orientation N (1..8) asks for; what loading does by
 * itself (auto-orient), as an op for files whose tag was lost or is wrong. */
static const vki_opt orient_opts[] = {
    { .name = "orientation", .type = VKI_OPT_INT, .def = 1, .min = 1, .max = 8,
      .help = "EXIF orientation: 1 as stored, 2 flop, 3 rotate 180, 4 flip, 5 transpose, 6 rotate 90, "
              "7 transverse, 8 rotate 270" },
};

static int orient_size(int w, int h, const vki_args *a, int *ow, int *oh, char *why, size_t n)
{
    return vki_orientation_size((int)a->v[0], w, h, ow, oh, why, n);
}

static int record_orient(vki_rec *r, const vki_step *s)
{
    int ow, oh;
    vki_remap m = vki_orientation_remap((int)s->args->v[0], s->w, s->h, &ow, &oh);
    return vki_record_remap(r, s, &m);
}

const vki_op_desc vki_op_orient = {
    .name = "orient",
    .help = "Apply an EXIF orientation value (1..8) to the pixels, as loading does by itself.",
    .opts = orient_opts,
    .nopts = 1,
    .out_size = orient_size,
    .alpha_copied = true,
    .moves = vki_moves_always,
    .record = record_orient,
};
