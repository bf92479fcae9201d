/* copy: identity (round-trip tests; also converts between sample formats). */
#include "exec/exec.h"
#include "spv/copy.spv.h"

static int record_copy(vki_rec *r, const vki_step *s)
{
    return vki_rec_pixels(r, s, "copy", VKI_SPV(copy), NULL, NULL, 0);
}

const vki_op_desc vki_op_copy = {
    .name = "copy",
    .help = "Identity: output = input (round-trip tests, format conversion).",
    .alpha_copied = true,
    .moves = vki_moves_always,
    .record = record_copy,
};
