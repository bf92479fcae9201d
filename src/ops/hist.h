/* The histogram pass of shaders/lib/levels.glsl, shared by equalize and
 * threshold=mode=otsu. */
#ifndef VKI_HIST_H
#define VKI_HIST_H

#include "exec/exec.h"

/* Records the pass that counts s->in's colour samples into the 4 x 256 bins at
 * the shader's pc.hist (zeroed): a grid-stride over the pixels into a shared
 * histogram a workgroup with atomics, or with `runs` (vki_runs: CPU devices)
 * each invocation's chunks into a histogram of its own, without atomics
 * (vki_rec_dispatch_runs: named NAME-runs). spec holds the step's and the op's
 * constants (PASS set). */
int vki_rec_histogram(vki_rec *r, const vki_step *s, uint32_t runs, const char *name, const uint32_t *spv,
                      size_t spv_size, const vki_spec *spec, const void *push, uint32_t push_size);

#endif
