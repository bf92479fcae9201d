/* The summed-area table (shaders/integral.comp), shared by integral, boxblur and
 * threshold=mode=adaptive. */
#ifndef VKI_SAT_H
#define VKI_SAT_H

#include "exec/exec.h"

/* Records the passes that build the table of s->in (s->in_c channels, integer
 * levels s->levels) into `sat` (w*h*in_c entries of uint32, or uint64 if wide). */
int vki_record_sat(vki_rec *r, const vki_step *s, VkDeviceAddress sat, bool wide);

/* True if a box sum of this radius may not fit 32 bits (use a uint64 table). */
bool vki_box_needs_wide(const vki_step *s, int radius);

/* The CPU shape of the last pass of an op that reads box sums from the table
 * (shaders/lib/boxes.glsl): whether to take it (on CPU devices; the environment
 * variable env =0 takes the op's own shape, =1 this on any device), and its two
 * dispatches, NAME-lines (strips of whole windows) and NAME-lines-edge (the
 * pixels around them), of spv with spec (the op's constants set; this sets the
 * local size, NS and EDGE) and the op's push constants. */
bool vki_box_lines(const vki_rec *r, const vki_step *s, bool wide, const char *env);
int vki_record_box_lines(vki_rec *r, const vki_step *s, int radius, const char *name, const uint32_t *spv,
                         size_t spv_size, vki_spec *spec, const void *pc, uint32_t pc_size);

#endif
