/* See reduce.h. */
#include "analysis/reduce.h"
#include "core/util.h"
#include "spv/reduce.spv.h"

#include <string.h>

uint32_t vki_reduce_wg(const vki_gpu *g, uint32_t extra_shared)
{
    uint32_t wg = vki_wg_1d(g), p = 1;
    while (p * 2 <= wg)
        p *= 2;
    wg = p; /* power of two: tree reductions */
    while (wg > 1 && (uint64_t)wg * 8 + extra_shared > g->lim.max_shared)
        wg /= 2;
    return wg;
}

bool vki_reduce_subgroup(const vki_gpu *g)
{
    return (g->lim.subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0;
}

uint64_t vki_reduce_groups(uint64_t npx, uint32_t wg)
{
    return vki_stride_groups(npx, wg, VKI_RED_PX_PER_INVOCATION, (uint64_t)wg * VKI_RED_RECORDS_PER_INVOCATION);
}

int vki_reduce_final(vki_rec *r, VkDeviceAddress part, uint32_t nrec, uint32_t nslot, uint32_t ops,
                     VkDeviceAddress res, const char *name)
{
    uint32_t wg = vki_reduce_wg(r->gpu, 0);
    vki_spec spec = { 0 };
    vki_spec_set(&spec, VKI_SPEC_LX, wg);
    vki_spec_set(&spec, VKI_SPEC_LY, 1);
    vki_spec_set(&spec, VKI_SPEC_LZ, 1);
    vki_spec_named(&spec, "SUBGROUP", vki_reduce_subgroup(r->gpu));
    vki_spec_named(&spec, "PASS", 1);
    vki_spec_named(&spec, "NSLOT", nslot);
    vki_spec_named(&spec, "OPS", ops);
    struct {
        vki_addr src, part, res, hist;
        uint32_t n, ngroups;
    } pc = { .part = vki_addr_of(part), .res = vki_addr_of(res), .n = nrec, .ngroups = 1 };
    return vki_rec_dispatch(r, name, VKI_SPV(reduce), &spec, &pc, sizeof pc, 1, 1, 1);
}

double vki_ff_value(uint64_t v)
{
    uint32_t hi = (uint32_t)v, lo = (uint32_t)(v >> 32);
    float fh, fl;
    memcpy(&fh, &hi, sizeof fh);
    memcpy(&fl, &lo, sizeof fl);
    return (double)fh + (double)fl;
}
