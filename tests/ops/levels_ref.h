/* The reference of levels (ImageMagick's -level black,white,gamma), in double
 * (tests/lib/ref.h). */
#ifndef VKI_LEVELS_REF_H
#define VKI_LEVELS_REF_H

#include "ref.h"

/* Every colour channel: out = t^(1/gamma) with t = (in - black) / (white - black)
 * clamped to [0, 1] (values outside [0, 1], HDR ones too, clamped); alpha kept.
 * (ImageMagick computes pow before clamping and keeps negatives: the same once
 * quantized to integers, and its HDRI builds keep values above 1.) */
ref_img ref_levels_d(const ref_img *in, double black, double white, double gamma);

/* A chain step needs three numbers: ref_levels_params registers them and returns
 * k for LEVELS(k) (at most 64 sets). */
int ref_levels_params(double black, double white, double gamma);
ref_img ref_levels_step(const ref_img *in, const ref_step *st);
#define LEVELS(k) { .fn = ref_levels_step, .i = (k) }

/* Hand-computed cases; returns the number of failed checks (printed). */
int ref_levels_self_check(void);

#endif
