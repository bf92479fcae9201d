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
                                        .record = record_##NAME }

ORIENT_OP(flip, 4, "Mirror top to bottom (exact).");
ORIENT_OP(flop, 2, "Mirror left to right (exact).");
ORIENT_OP(transpose, 5, "Mirror along the top-left to bottom-right diagonal (exact; width and height swap).");
ORIENT_OP(transverse, 7, "Mirror along the top-right to bottom-left diagonal (exact; width and height swap).");
