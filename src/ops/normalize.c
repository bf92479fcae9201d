/* normalize: stretch each colour channel's min..max to the full range, the
 * extremes reduced on the device and used by the next dispatch (no host round
 * trip). */
#include "exec/exec.h"
#include "core/util.h"
#include "spv/normalize.spv.h"


static const vki_opt normalize_opts[] = {
    { .name = "link", .type = VKI_OPT_BOOL, .def = 0,
      .help = "use one min/max over all colour channels (keeps colour balance)" },
};

static int record_normalize(vki_rec *r, const vki_step *s)
{
    const vki_gpu *g = r->gpu;
    uint32_t init[8] = { ~0u, ~0u, ~0u, ~0u, 0, 0, 0, 0 };
    VkDeviceAddress ext;
    int rc = vki_rec_scratch_init(r, sizeof init, init, "normalize extremes", &ext);
    if (rc)
        return rc;
    uint64_t npx = (uint64_t)s->w * s->h;
    uint32_t wg = vki_wg_1d(g);
    while (wg * 4 * 2 * sizeof(uint32_t) > g->lim.max_shared)
        wg /= 2;
    struct {
        vki_addr src, dst, ext;
        uint32_t npx;
    } pc = { vki_addr_of(s->in), vki_addr_of(s->out), vki_addr_of(ext), (uint32_t)npx };
    vki_spec spec = { 0 };
    /* runs on GPUs too (H100, 8K RGB8: 0.306 -> 0.155 ms; RGBA8 0.340 -> 0.255) */
    const uint32_t runs = vki_runs(g, s, 1);
    vki_step_spec(s, &spec, wg, 1, 1);
    vki_spec_named(&spec, "LINK", s->args->v[0] != 0);
    vki_spec_named(&spec, "SUBGROUP", (g->lim.subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0);
    /* pass 0: ~8 pixels per invocation, grid-stride (or the runs) */
    vki_spec_named(&spec, "PASS", 0);
    if (runs)
        rc = vki_rec_dispatch_runs(r, s, runs, wg, "normalize-minmax", VKI_SPV(normalize), &spec, &pc, sizeof pc);
    else
        rc = vki_rec_dispatch_1d(r, "normalize-minmax", VKI_SPV(normalize), &spec, &pc, sizeof pc,
                                 (npx + (uint64_t)wg * 8 - 1) / ((uint64_t)wg * 8));
    if (rc)
        return rc;
    vki_spec_named(&spec, "PASS", 1);
    if (runs)
        return vki_rec_dispatch_runs(r, s, runs, wg, "normalize", VKI_SPV(normalize), &spec, &pc, sizeof pc);
    return vki_rec_dispatch_1d(r, "normalize", VKI_SPV(normalize), &spec, &pc, sizeof pc, (npx + wg - 1) / wg);
}

const vki_op_desc vki_op_normalize = {
    .name = "normalize",
    .help = "Stretch each colour channel's min..max to the full range (alpha kept); extremes reduced on the device.",
    .opts = normalize_opts,
    .nopts = 1,
    .record = record_normalize,
};
