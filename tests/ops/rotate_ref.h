/* The reference of rotate by an angle that is not a multiple of 90 degrees, in
 * double (tests/lib/ref.h), from the README ("bicubic (Catmull-Rom) about the
 * centre onto a canvas that holds the whole image; the uncovered corners are
 * background; a colour that is not opaque gives an image without alpha an alpha
 * channel") and, where the README is silent, what src/ops/rotate.c documents:
 *
 *   canvas  W = ceil(w |cos t| + h |sin t|), H = ceil(w |sin t| + h |cos t|) (at
 *           least 1): the smallest that holds the rotated rectangle;
 *   centre  the image's centre (w/2, h/2) on the canvas's (W/2, H/2); pixel (x, y)
 *           covers [x, x+1) x [y, y+1), its centre at +0.5; clockwise with y down,
 *           so output point d from the canvas centre samples the input at
 *           (w/2, h/2) + (d.x cos t + d.y sin t, -d.x sin t + d.y cos t);
 *   taps    Catmull-Rom (Keys, a = -0.5) over the 4 x 4 pixel centres around the
 *           point, pixels outside the image being the background;
 *   alpha   colour premultiplied by alpha (an input without alpha that gains one:
 *           alpha 1), then divided by the result's alpha clamped to [0, 1]
 *           (colour 0 where it is 0); without alpha the colour as summed;
 *   background in the output's channels: gray is BT.601 luma of the colour.
 */
#ifndef VKI_ROTATE_REF_H
#define VKI_ROTATE_REF_H

#include "ref.h"

/* The canvas for w x h rotated by deg degrees; 0, or -1 when its size is within
 * 1e-6 of a whole number (where a float evaluation could round either way). */
int ref_rotate_size(int w, int h, double deg, int *ow, int *oh);
/* Whether the result has an alpha channel: the input's, or gained. */
int ref_rotate_channels(int c, const double bg[4]);
/* in rotated by deg degrees clockwise onto bg (R, G, B, A in 0..1). */
ref_img ref_rotate_d(const ref_img *in, double deg, const double bg[4]);
/* Catmull-Rom's weight at distance t. */
double ref_catmull_rom(double t);

/* Hand-computed cases; returns the number of failed checks (printed). */
int ref_rotate_self_check(void);

#endif
