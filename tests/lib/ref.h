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
 * step's parameters. The ops' headers (tests/ops/NAME_ref.h) give a macro per
 * op that fills one in, e.g. { GRAY(0), BLUR(2.0, -1) }. */
typedef struct ref_step ref_step;
struct ref_step {
    ref_img (*fn)(const ref_img *in, const ref_step *st);
    int i;    /* an integer parameter (gray: weights; blur: radius) */
    double x; /* a real parameter (blur: sigma) */
};

/* The composition of st[0..n) on in, in double (quantized by the caller). */
ref_img ref_apply(const vkimg_image *in, const ref_step *st, int n);

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
