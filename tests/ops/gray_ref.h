/* The reference of gray, in double (tests/lib/ref.h). */
#ifndef VKI_GRAY_REF_H
#define VKI_GRAY_REF_H

#include "ref.h"

/* Luma. weights: 0 = BT.601 (0.299, 0.587, 0.114), 1 = BT.709 (0.2126, 0.7152,
 * 0.0722). c = 3 -> 1 channel; c = 4 -> 2 channels (Y, alpha); c = 1, 2 are
 * returned unchanged. */
ref_img ref_gray(const vkimg_image *in, int weights);
ref_img ref_gray_d(const ref_img *in, int weights);

/* A chain step: GRAY(weights). */
ref_img ref_gray_step(const ref_img *in, const ref_step *st);
#define GRAY(wt) { .fn = ref_gray_step, .i = (wt) }

/* Hand-computed cases; returns the number of failed checks (printed). */
int ref_gray_self_check(void);

#endif
