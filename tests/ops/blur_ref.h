/* The references of blur (Gaussian, and method=box), in double (tests/lib/ref.h). */
#ifndef VKI_BLUR_REF_H
#define VKI_BLUR_REF_H

#include "ref.h"

/* Gaussian blur: w_i = exp(-i^2 / (2 sigma^2)), i = -radius..radius, normalized
 * to sum 1; 2D separable, clamp-to-edge. With alpha (c = 2: channel 1, c = 4:
 * channel 3) colour is blurred premultiplied:
 *   out_colour = sum(w a c) / sum(w a)   (0 where sum(w a) == 0)
 *   out_alpha  = sum(w a)
 * (The 2D sums are over the product weights w_i w_j; the separable evaluation
 * of the premultiplied channels is the same sum.) */
ref_img ref_blur(const vkimg_image *in, double sigma, int radius);
ref_img ref_blur_d(const ref_img *in, double sigma, int radius);
/* blur=method=box: the image convolved (separable, clamp-to-edge, alpha-aware as
 * above) with three box filters per axis whose widths follow Kovesi (2010) for
 * sigma. ref_box_radii gives their radii and returns the composite radius. */
int ref_box_radii(double sigma, int rad[3]);
ref_img ref_box3_d(const ref_img *in, double sigma);
/* The same thing evaluated directly in 2D, O(w h (2r+1)^2): for self-checks of
 * ref_blur_d on small images only. */
ref_img ref_blur_direct_d(const ref_img *in, double sigma, int radius);

/* Chain steps. BLUR(sigma, radius): radius -1 is the op's auto default
 * ceil(3 sigma). BOX(sigma): blur=sigma=S:method=box, which is the exact
 * Gaussian (radius ceil(3 sigma)) below sigma 3 (blur.c) and ref_box3_d from 3. */
ref_img ref_blur_step(const ref_img *in, const ref_step *st);
ref_img ref_box_step(const ref_img *in, const ref_step *st);
#define BLUR(s, r) { .fn = ref_blur_step, .i = (r), .x = (s) }
#define BOX(s) { .fn = ref_box_step, .x = (s) }

/* Hand-computed cases and the separable evaluation against the direct one;
 * returns the number of failed checks (printed). */
int ref_blur_self_check(void);

#endif
