/* Independent CPU references for the ops, in double precision.
 *
 * Nothing here shares code with the library's kernels: the only thing taken
 * from the library is the public vkimg_image struct (and vkimg_fmt). Images
 * are converted to normalized doubles (u8 / 255, u16 / 65535, f32 as is), the
 * ops are computed from their specification, and results are quantized to the
 * output format only at the very end (the library keeps intermediates between
 * ops in float, so a chain is compared against the composition of the double
 * references, quantized once).
 */
#ifndef VKI_REF_H
#define VKI_REF_H

#include "vkimg/vkimg.h"

#include <stdint.h>

/* A double image: w*h*c normalized samples, packed and interleaved. */
typedef struct ref_img {
    int w, h, c;
    double *d;
} ref_img;

/* All functions that produce a ref_img allocate it; free with ref_img_free
 * (accepts an empty / already freed image). Allocation failure aborts. */
void ref_img_free(ref_img *r);
/* vkimg_image (U8, U16 or F32; c = 1..4) -> normalized doubles. */
ref_img ref_from_image(const vkimg_image *im);

/* ---------------------------------------------------------------- ops */

/* Identity. */
ref_img ref_copy(const vkimg_image *in);
ref_img ref_copy_d(const ref_img *in);

/* Luma. weights: 0 = BT.601 (0.299, 0.587, 0.114), 1 = BT.709 (0.2126, 0.7152,
 * 0.0722). c = 3 -> 1 channel; c = 4 -> 2 channels (Y, alpha); c = 1, 2 are
 * returned unchanged. */
ref_img ref_gray(const vkimg_image *in, int weights);
ref_img ref_gray_d(const ref_img *in, int weights);

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

/* ---------------------------------------------------------------- formats */

/* One normalized value to the output format: u8 -> floor(clamp(x,0,1)*255+0.5)
 * (exact ties k + 0.5 round up even where the double evaluation of x is a few
 * ulps low),
 * u16 -> floor(clamp(x,0,1)*65535+0.5) (returned as the integer code value),
 * f32 -> (double)(float)x. */
double ref_quant(double x, vkimg_fmt f);
/* A stored sample of im as its code value (u8/u16: the integer; f32: the float). */
double ref_sample_raw(const vkimg_image *im, size_t i);

/* Result of comparing a device image against a reference. */
typedef struct ref_cmp {
    int shape_ok;     /* w, h, c equal and fmt is U8/U16/F32 */
    double max_err;   /* u8/u16: max |got - quant(expected)| in output LSBs;
                         f32: max |got - expected| (absolute) */
    int x, y, ch;     /* where max_err is (first such sample); -1 if none */
    double expected;  /* at the worst sample: the reference (normalized) ... */
    double expected_q;/* ... quantized to the output format (code value) */
    double got;       /* ... and the device's code value */
    size_t nsamples;
    size_t nmismatch; /* samples with got != quant(expected) (u8/u16) or got != (float)expected (f32) */
    /* u8/u16: max |got - clamp(expected, 0, 1) * (2^bits - 1)| in LSBs, i.e. the
     * error before rounding: at most 0.5 for a correctly rounded result, plus
     * the kernel's float error (catches e.g. truncation, which a 1-LSB check
     * after rounding lets through). f32: same as max_err. */
    double max_raw_err;
    int raw_x, raw_y, raw_ch;
} ref_cmp;

/* Compares got (any of U8/U16/F32) with the reference exp, quantizing exp to
 * got->fmt. Returns max_err (or +inf when the shapes differ). */
double ref_compare(const vkimg_image *got, const ref_img *exp, ref_cmp *res);

/* ---------------------------------------------------------------- test images */

/* A deterministic random image (malloc'ed data; free with ref_image_free) of any
 * w, h, c (1..4) and fmt (U8, U16, F32). Never all zeros. Colour samples are
 * uniform over the format's range (F32: [0, 1.25], i.e. some HDR values over 1).
 * Alpha channels (c = 2, 4) are laid out in blocks of 1..16 pixels that are
 * fully transparent, fully opaque or random, so there are transparent regions
 * larger than small kernels (sum(w a) == 0) and edges between them; random
 * colour is kept under transparent pixels (it must not leak into the result). */
vkimg_image ref_random_image(int w, int h, int c, vkimg_fmt fmt, uint64_t seed);
void ref_image_free(vkimg_image *im);

/* Hand-computed cases for the references above. Prints what fails to stderr and
 * returns the number of failed checks. */
int ref_self_check(void);

#endif
