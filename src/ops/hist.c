/* The histogram pass of levels.glsl (see hist.h). */
#include "ops/hist.h"

#define HIST_COPIES 8      /* invocations (each its own histogram) a workgroup in the CPU shape */
#define HIST_RUNS_SCALE 16 /* chunks an invocation: the op's runs times this (fewer merges) */

int vki_rec_histogram(vki_rec *r, const vki_step *s, uint32_t runs, const char *name, const uint32_t *spv,
                      size_t spv_size, const vki_spec *spec, const void *push, uint32_t push_size)
{
    if (!runs) /* (HCOPIES: the shader's default, 1) */
        return vki_rec_dispatch_1d(r, name, spv, spv_size, spec, push, push_size,
                                   vki_stride_groups((uint64_t)s->w * s->h, 256, 16, 4096));
    uint32_t copies = HIST_COPIES;
    while (copies > 1 && (uint64_t)copies * 1024 * sizeof(uint32_t) > r->gpu->lim.max_shared)
        copies /= 2;
    vki_spec sp = *spec;
    vki_step_spec(s, &sp, copies, 1, 1);
    vki_spec_named(&sp, "HCOPIES", copies);
    return vki_rec_dispatch_runs(r, s, runs * HIST_RUNS_SCALE, copies, name, spv, spv_size, &sp, push, push_size);
}
