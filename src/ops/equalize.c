/* equalize: histogram equalization per colour channel, histogram and lookup
 * table built on the device (no host round trip). */
#include "ops/hist.h"
#include "core/util.h"
#include "spv/equalize.spv.h"


static int record_equalize(vki_rec *r, const vki_step *s)
{
    VkDeviceAddress hist;
    int rc = vki_rec_scratch_init(r, 2048 * sizeof(uint32_t), NULL, "equalize histogram", &hist);
    if (rc)
        return rc;
    struct {
        vki_addr src, dst, hist;
        uint32_t w, h;
    } pc = { vki_addr_of(s->in), vki_addr_of(s->out), vki_addr_of(hist), (uint32_t)s->w, (uint32_t)s->h };
    vki_spec spec = { 0 };
    /* (on GPUs: the histogram of an invocation is 10x slower than shared atomics) */
    const uint32_t runs = vki_runs(r->gpu, s, 0);
    vki_step_spec(s, &spec, 16, 16, 1);
    vki_spec_named(&spec, "LEVELS", s->levels);
    uint32_t gx = ((uint32_t)s->w + 15) / 16, gy = ((uint32_t)s->h + 15) / 16;
    static const char *const names[] = { "equalize-hist", "equalize-lut", "equalize" };
    for (uint32_t pass = 0; pass < 3; pass++) {
        vki_spec_named(&spec, "PASS", pass);
        const char *name = names[pass];
        if (pass == 0)
            rc = vki_rec_histogram(r, s, runs, name, VKI_SPV(equalize), &spec, &pc, sizeof pc);
        else if (pass == 1)
            rc = vki_rec_dispatch(r, name, VKI_SPV(equalize), &spec, &pc, sizeof pc, 1, 1, 1);
        else if (runs) /* 16 x 16 invocations a workgroup */
            rc = vki_rec_dispatch_runs(r, s, runs, 256, name, VKI_SPV(equalize), &spec, &pc, sizeof pc);
        else
            rc = vki_rec_dispatch(r, name, VKI_SPV(equalize), &spec, &pc, sizeof pc, gx, gy, 1);
        if (rc)
            return rc;
    }
    return 0;
}

const vki_op_desc vki_op_equalize = {
    .name = "equalize",
    .help = "Histogram equalization per colour channel (alpha kept), on the device.",
    .record = record_equalize,
};
