/* Shared primitives of the independent CPU references, in double precision.
 *
 * Nothing here shares code with the library's kernels: the only thing taken
 * from the library is the public vkimg_image struct (and vkimg_fmt). Images
 * are converted to normalized doubles (u8 / 255, u16 / 65535, f32 as is), the
 * ops are computed from their specification (each op's reference lives beside
 * its test: tests/ops/NAME_ref.c), and results are quantized to the output
 * format only at the very end (the library keeps intermediates between ops in
 * float, so a chain is compared against the composition of the double
 * references, quantized once: ref_apply).
 */
#ifndef VKI_REF_H
#define VKI_REF_H

#include "vkimg/vkimg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A double image: w*h*c normalized samples, packed and interleaved. */
typedef struct ref_img {
    int w, h, c;
    double *d;
} ref_img;

/* All functions that produce a ref_img allocate it; free with ref_img_free
 * (accepts an empty / already freed image). Allocation failure aborts. */
void ref_img_free(ref_img *r);
/* A zeroed w x h x c image. */
ref_img ref_img_new(int w, int h, int c);
/* vkimg_image (U8, U16 or F32; c = 1..4) -> normalized doubles. */
ref_img ref_from_image(const vkimg_image *im);
/* A copy (also the reference of the identity). */
ref_img ref_copy_d(const ref_img *in);

/* malloc that aborts on failure (never returns NULL, also for n = 0). */
void *ref_xmalloc(size_t n);
size_t ref_nsamples(int w, int h, int c);
/* The alpha channel of a c-channel image: 1 for c = 2, 3 for c = 4, else -1. */
int ref_alpha_channel(int c);

/* ---------------------------------------------------------------- chains */

/* One op of a reference chain: fn computes the op on a double image with the
 * step's parameters, at any output size (an op that resizes or crops computes
 * its output size from its input's, as the op does). The ops' headers
 * (tests/ops/NAME_ref.h) give a macro per op that fills one in, e.g.
 * { GRAY(0), BLUR(2.0, -1) }, with designated initializers (the fields a step
 * leaves out are zero). */
typedef struct ref_step ref_step;
struct ref_step {
    ref_img (*fn)(const ref_img *in, const ref_step *st);
    int i;    /* an integer parameter (gray: weights; blur: radius) */
    double x; /* a real parameter (blur: sigma) */
    /* The op's parameters where an integer and a real are not enough (resize:
     * geometry, filter, linear, fast), in a struct of the op's reference
     * (tests/ops/NAME_ref.h); NULL for the others. */
    const void *arg;
    /* Ops that write several images (mipmaps; last in a chain): fn gives image 0
     * (from the chain's result), outputs the number of images and their sizes
     * for an input of w x h (at most max), and next image k (of w x h) from
     * image k - 1 as it was written (quantized to the output format). NULL for
     * ops that write one image. */
    int (*outputs)(int w, int h, const ref_step *st, int *ws, int *hs, int max);
    ref_img (*next)(const ref_img *prev, int w, int h, const ref_step *st);
};

/* The composition of st[0..n) on in, in double (quantized by the caller). The
 * sizes may change from step to step; a step with several images gives its
 * first (ref_apply_levels gives them all). */
ref_img ref_apply(const vkimg_image *in, const ref_step *st, int n);

/* Every image of a chain whose last step writes several (outputs/next): image
 * 0 is ref_apply's, image k is st[n-1].next of image k - 1 quantized to fmt as
 * the device writes it (ref_written): the reference's own chain. Fills
 * out[0 .. returned count) (at most max; free each with ref_img_free). A chain
 * whose last step writes one image gives that one. */
int ref_apply_levels(const vkimg_image *in, const ref_step *st, int n, vkimg_fmt fmt, ref_img *out, int max);

/* ---------------------------------------------------------------- formats */

/* One normalized value to the output format: u8 -> floor(clamp(x,0,1)*255+0.5)
 * (exact ties k + 0.5 round up even where the double evaluation of x is a few
 * ulps low),
 * u16 -> floor(clamp(x,0,1)*65535+0.5) (returned as the integer code value),
 * f32 -> (double)(float)x. */
double ref_quant(double x, vkimg_fmt f);
/* What a normalized value reads back as once written in format f: u8/u16 the
 * quantized level (ref_quant) / 255 or / 65535, f32 (float)x. */
double ref_written(double x, vkimg_fmt f);
/* A copy of im with every sample ref_written to f (an image as an op that
 * reads its own output back sees it). */
ref_img ref_written_img(const ref_img *im, vkimg_fmt f);
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
    size_t nundecided; /* samples left out: marked undecided on exp (ref_mark_undecided) */
    /* u8/u16: max |got - clamp(expected, 0, 1) * (2^bits - 1)| in LSBs, i.e. the
     * error before rounding: at most 0.5 for a correctly rounded result, plus
     * the kernel's float error (catches e.g. truncation, which a 1-LSB check
     * after rounding lets through). f32: same as max_err. */
    double max_raw_err;
    int raw_x, raw_y, raw_ch;
} ref_cmp;

/* Images with alpha (c = 2, 4), when set: the colour samples of U16 and F32
 * outputs are compared as what they add once composited. U16: the error times
 * the reference's alpha (clamped to [0, 1]); F32: the device's colour x its
 * alpha against the reference's colour x its alpha. For ops whose colour is a
 * ratio with no bound (resize: sums with negative weights divided by the
 * resized alpha, which can be small: the colour's float error grows as
 * 1 / alpha, past 0.6 LSB at 16 bits where alpha < 1%, and without bound in
 * f32, where the colour itself can be 1000 or -500), while the composited
 * colour keeps the sums' own error. U8 colour is compared as it is (there
 * float error / alpha stays under 0.03 LSB down to alpha 1e-3). Off by
 * default. */
extern bool ref_alpha_weighted;
/* Compares got (any of U8/U16/F32) with the reference exp, quantizing exp to
 * got->fmt, but for the samples marked undecided on exp (counted). Returns
 * max_err (or +inf when the shapes differ). */
double ref_compare(const vkimg_image *got, const ref_img *exp, ref_cmp *res);

/* Samples whose value the definition leaves to rounding: resize's colour where
 * the resized alpha is 0 to within float error (colour / alpha jumps from 0 to
 * the colour of whatever tap the rounding leaves in). A reference marks them
 * on its image (sample i of im->d); ref_compare leaves them out (counted);
 * the marks go with the data (ref_img_free drops them; copies have none). */
void ref_mark_undecided(const ref_img *im, size_t i);
bool ref_is_undecided(const ref_img *im, size_t i);

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

/* ---------------------------------------------------------------- self-checks */

/* Hand-computed cases for the references. ref_expect prints what fails to
 * stderr and counts it; ref_fail_count is the number of failures so far (a
 * self-check returns how much it grew). ref_wrap wraps caller-owned samples. */
void ref_expect(const char *what, double got, double want, double tol);
int ref_fail_count(void);
vkimg_image ref_wrap(int w, int h, int c, vkimg_fmt fmt, void *data);

/* The self-check of the primitives above (quantization, test images,
 * ref_compare); returns the number of failed checks. */
int ref_self_check(void);

#endif
