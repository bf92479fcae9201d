/* Resampling shared by resize, thumbnail and mipmaps (resize.c, shaders/ops/resize.comp).
 *
 * Definition, per axis, n_in -> n_out: s = n_in / n_out, f = max(1, s); output
 * pixel i has centre c = (i + 0.5) s - 0.5; its taps are the integers j in
 * [c - a f, c + a f] with weights k((j - c) / f) normalized to sum 1 (a = the
 * filter's support); input indices are clamped to the image; `nearest` takes
 * j = floor((i + 0.5) s). Horizontal, then vertical, no rounding between. With
 * alpha, colour is resized premultiplied and divided by the resized alpha
 * (clamped to [0, 1]; colour 0 where it is 0); `linear` resizes in linear light
 * (the exact sRGB transfer functions). */
#ifndef VKI_OPS_RESAMPLE_H
#define VKI_OPS_RESAMPLE_H

#include "exec/exec.h"

typedef enum vki_filter {
    VKI_FILTER_LANCZOS3, VKI_FILTER_LANCZOS2, VKI_FILTER_MITCHELL, VKI_FILTER_CATROM,
    VKI_FILTER_BILINEAR, VKI_FILTER_BOX, VKI_FILTER_NEAREST,
} vki_filter;
/* The names, in that order (NULL-terminated, for ENUM options). */
extern const char *const vki_filter_names[];

typedef struct vki_resample {
    vki_filter filter;
    bool linear;
    bool fast; /* a box pre-shrink by an integer factor where an axis shrinks 4x or more */
    bool f32_between; /* f32 between the axes always (mipmaps: the same bytes as its fused box pass);
                         else f16 where the output is 8-bit */
} vki_resample;

/* Records the resampling of s->in (s->w x s->h, s->in_c channels, s->in_fmt) to
 * s->out (s->out_w x s->out_h, s->out_fmt). An output of the input's size is the
 * input as it is (README, Geometry: "WxH>" on a smaller image leaves it as it is;
 * ImageMagick and libvips copy it too), not filtered. */
int vki_record_resample(vki_rec *r, const vki_step *s, const vki_resample *rs);

/* The integer box pre-shrink factor of the fast path for an axis shrinking by s
 * (n_in / n_out): floor(s / 2) from s >= 4 (so that the filter still reduces by
 * 2x or more), else 1. */
int vki_preshrink_factor(double s);

/* The smallest decoded input for a resampling to out_w x out_h of a w x h image
 * (shrink-on-load): twice the output per axis, so that the filter still reduces
 * by 2x or more (as the box pre-shrink), never more than the image; the whole
 * image where the resampling is not fast or is in linear light (a decoder's
 * reduction averages the stored values). */
void vki_resample_min_input(const vki_resample *rs, int w, int h, int out_w, int out_h, int *min_w, int *min_h);

#endif
