/* The reference of flatten, in double (tests/lib/ref.h). */
#ifndef VKI_FLATTEN_REF_H
#define VKI_FLATTEN_REF_H

#include "ref.h"

/* Each colour channel composited over the background by the alpha, which is
 * dropped: out = c a + bg (1 - a), a clamped to [0, 1], bg the background's R, G, B
 * (gray + alpha: its luma 0.299 R + 0.587 G + 0.114 B). c = 2 -> 1 channel, 4 -> 3;
 * 1 and 3 channels are returned unchanged. */
ref_img ref_flatten_d(const ref_img *in, double r, double g, double b);

/* A chain step: FLATTEN(k), k from ref_flatten_params (at most 64 backgrounds). */
int ref_flatten_params(double r, double g, double b);
ref_img ref_flatten_step(const ref_img *in, const ref_step *st);
#define FLATTEN(k) { .fn = ref_flatten_step, .i = (k) }

/* Hand-computed cases; returns the number of failed checks (printed). */
int ref_flatten_self_check(void);

#endif
