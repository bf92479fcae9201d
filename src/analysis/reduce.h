/* Reductions shared by stats and compare (shaders/analysis/reduce.comp,
 * shaders/lib/reduce.glsl): workgroup size, subgroup use, the one-workgroup
 * final pass over the partial records, and the float-float values they hold. */
#ifndef VKI_ANALYSIS_REDUCE_H
#define VKI_ANALYSIS_REDUCE_H

#include "exec/exec.h"

/* Slot operators of the final pass (reduce.glsl). */
enum { VKI_RED_ADD = 0, VKI_RED_MIN = 1, VKI_RED_MAX = 2, VKI_RED_FF = 3 };

/* Pixels per invocation (at least, before the workgroup count is capped) and the
 * cap on first-pass workgroups: RECORDS_PER_INVOCATION * WG records for the final pass. */
#define VKI_RED_PX_PER_INVOCATION 16u
#define VKI_RED_RECORDS_PER_INVOCATION 8u

/* Workgroup size of the reductions: min(256, limits) rounded down to a power of
 * two, shrunk until 8 bytes per invocation + extra_shared fit shared memory. */
uint32_t vki_reduce_wg(const vki_gpu *g, uint32_t extra_shared);
/* Subgroup arithmetic in compute (else shared-memory trees). */
bool vki_reduce_subgroup(const vki_gpu *g);
/* First-pass workgroups for npx pixels at workgroup size wg. */
uint64_t vki_reduce_groups(uint64_t npx, uint32_t wg);
/* Records the final pass: nrec records of nslot uint64 slots at part, combined
 * slot by slot with the 2-bit operators of ops, into res. */
int vki_reduce_final(vki_rec *r, VkDeviceAddress part, uint32_t nrec, uint32_t nslot, uint32_t ops,
                     VkDeviceAddress res, const char *name);
/* The value of a float-float slot (hi bits | lo bits << 32). */
double vki_ff_value(uint64_t v);

#endif
