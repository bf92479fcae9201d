/* copy: identity (round-trip tests; also the format converter exec uses). */
#include "exec/exec.h"
#include "core/util.h"
#include "spv/copy.spv.h"

static int record_copy(vki_rec *r, const vki_step *s)
{
    vki_spec spec = { 0 };
    uint32_t wg = vki_wg_1d(r->gpu);
    vki_step_spec(s, &spec, wg, 1, 1);
    struct {
        vki_addr src, dst;
        uint32_t npx;
    } pc = { vki_addr_of(s->in), vki_addr_of(s->out), (uint32_t)((uint64_t)s->w * s->h) };
    uint64_t groups = ((uint64_t)s->w * s->h + wg - 1) / wg;
    return vki_rec_dispatch_1d(r, "copy", VKI_SPV(copy), &spec, &pc, sizeof pc, groups);
}

const vki_op_desc vki_op_copy = {
    .name = "copy",
    .help = "Identity: output = input (round-trip tests, format conversion).",
    .record = record_copy,
};
