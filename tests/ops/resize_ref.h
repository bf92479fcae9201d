/* The references of resize and thumbnail, in double (tests/lib/ref.h), written
 * from the README ("Resize, thumbnails, mipmaps, crops and rotations"): the
 * resampling definition, the fast path, ImageMagick's geometry and
 * vipsthumbnail's --size.
 *
 * Resampling, per axis, n_in -> n_out: s = n_in / n_out, f = max(1, s); output
 * i has centre c = (i + 0.5) s - 0.5 and taps j in [c - a f, c + a f] weighted
 * k((j - c) / f), normalized to sum 1, input indices clamped to the image;
 * nearest takes j = floor((i + 0.5) s). Box membership (k = 1 on [-0.5, 0.5))
 * and nearest's j are decided in exact integer arithmetic. Horizontal, then
 * vertical. Colour premultiplied by alpha (c = 2, 4), divided by the resized
 * alpha clamped to [0, 1] (colour 0 where it is 0); linear: colour through the
 * exact sRGB decoding (IEC 61966-2-1) of the value clamped to [0, 1] before,
 * and the encoding of the result clamped to [0, 1] after.
 *
 * Fast path: an axis with n_in >= 4 n_out (any filter but nearest) is first
 * box-averaged by k = floor(n_in / (2 n_out)): ceil(n_in / k) blocks, the last
 * one the mean of the pixels it has, in the premultiplied (linear) values the
 * filter works on; the filter then goes from there to n_out. */
#ifndef VKI_RESIZE_REF_H
#define VKI_RESIZE_REF_H

#include "ref.h"

#include <stdbool.h>

typedef enum ref_filter {
    RF_LANCZOS3, RF_LANCZOS2, RF_MITCHELL, RF_CATROM, RF_BILINEAR, RF_BOX, RF_NEAREST, RF_COUNT
} ref_filter;
/* "lanczos3", ..., "nearest": the op's option values. */
extern const char *const ref_filter_names[RF_COUNT];

typedef struct ref_resample {
    ref_filter filter;
    bool linear;
    bool fast;
} ref_resample;

/* The kernel k(t) of a filter (not nearest) and its support a. */
double ref_filter_kernel(ref_filter f, double t);
double ref_filter_support(ref_filter f);

/* One axis, n_in -> n_out: output i reads count[i] taps from start[i] (indices
 * before clamping) with weights w[i * maxtaps + t], summing to 1; inside[same]
 * says the tap is in [c - a f, c + a f] (closed: its weight is 0 or not by
 * rounding alone at the ends). */
typedef struct ref_axis {
    int n_out, maxtaps;
    int *start, *count;
    double *w;
    unsigned char *inside;
} ref_axis;
ref_axis ref_axis_weights(int n_in, int n_out, ref_filter f);
void ref_axis_free(ref_axis *a);

/* The fast path's box factor for an axis: floor(n_in / (2 n_out)) when
 * n_in >= 4 n_out (not for nearest), else 1. */
int ref_preshrink_factor(int n_in, int n_out, ref_filter f);

/* in resampled to ow x oh. */
ref_img ref_resample_d(const ref_img *in, int ow, int oh, const ref_resample *rs);

/* ---------------------------------------------------------------- sizes */

/* ImageMagick's geometry (ParseMetaGeometry, README "Geometry"): the size a
 * w x h image is resized to by g = WxH (fit inside), WxH^ (cover), WxH!
 * (exactly), WxH> (only shrink), WxH< (only enlarge), W, Wx, xH (one side;
 * W^ covers a W x W box), N% or NxM% (percentages, fractions allowed).
 * Evaluated as ImageMagick does, in double: the scale W / w (or H / h, the
 * smaller for fit, the larger for ^), each side floor(scale * side + 0.5);
 * percentages floor(N * side / 100 + 0.5); every side at least 1; > and <
 * clamp each side to the input's. 0, or -1 for text this parser refuses. */
int ref_geometry_size(const char *g, int w, int h, int *ow, int *oh);

/* vipsthumbnail's --size (libvips vips_thumbnail_calculate_shrink):
 * N (an N x N box), WxH, Wx, xH (a missing side unbounded), then > (only
 * shrink), < (only enlarge) or ! (force: each axis to its side of the box).
 * The shrink of the axis that fits (crop: that fills) is used for both, each
 * side round(side / shrink), at least 1; with crop the result is cut to
 * min(box, side) in the middle ((resized - cut) / 2). Evaluated exactly
 * (rationals): tie_w/tie_h say a side was exactly k + 0.5, where libvips's
 * double arithmetic may go either way (either is accepted). */
typedef struct ref_thumb {
    int rw, rh;  /* resized */
    int ow, oh;  /* the result (after the crop) */
    int x, y;    /* the crop's corner in the resized image */
    bool tie_w, tie_h;
} ref_thumb;
int ref_thumbnail_size(const char *size, bool crop, int w, int h, ref_thumb *t);

/* ---------------------------------------------------------------- steps */

/* resize=GEOMETRY:filter=..:linear=..:fast=..; a result of the input's size
 * is the input as it is (README, Geometry: "the image is left as it is"), as
 * for thumbnail's resized image. */
typedef struct ref_resize_args {
    const char *geometry;
    ref_resample rs;
} ref_resize_args;
ref_img ref_resize_step(const ref_img *in, const ref_step *st);
#define RESIZE(a) { .fn = ref_resize_step, .arg = (a) }

/* thumbnail=SIZE:crop=..:filter=..:linear=..:fast=..; geo_w x geo_h (0: the
 * input's) is the size the box is resolved against (the file's size when the
 * decoder shrank the image: vkimg_run_opts.src_w/src_h), the resampling going
 * from the actual input to that result. */
typedef struct ref_thumbnail_args {
    const char *size;
    bool crop;
    ref_resample rs;
    int geo_w, geo_h;
} ref_thumbnail_args;
ref_img ref_thumbnail_step(const ref_img *in, const ref_step *st);
#define THUMBNAIL(a) { .fn = ref_thumbnail_step, .arg = (a) }

/* Hand-computed cases, the separable evaluation against the direct 2D sum,
 * kernel identities and sizes; returns the number of failed checks (printed). */
int ref_resize_self_check(void);

#endif
