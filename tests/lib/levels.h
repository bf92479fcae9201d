/* The ops that work on integer sample levels (integral, boxblur, threshold,
 * equalize) and normalize, on the device against the references of
 * tests/ops/NAME_ref.c (tests/lib/ref_levels.h): test images with chosen value
 * distributions, their levels, runs, and comparisons that are exact or allow an
 * interval where float error can decide a level either way. The max error per
 * group (a name: "boxblur", "threshold=otsu") is printed at the end of the test
 * (gh_main).
 */
#ifndef VKI_LEVELS_H
#define VKI_LEVELS_H

#include "gpu_harness.h"

#include <stdbool.h>
#include <stdint.h>

/* ---------------------------------------------------------------- images */

/* The state of the generator of the test images (t_rand). */
extern unsigned long long lv_seed;

/* Value distributions of the test images. */
typedef enum { D_UNIFORM, D_BIMODAL, D_NEAR_TOP } dist_kind;

/* A random w x h x c image of fmt (U8 or U16); channel k uniform in
 * [lo[k], hi[k]] (D_UNIFORM), or two clusters (D_BIMODAL). With force_ends and
 * at least 2 pixels, pixel 0 holds lo and pixel 1 hi in every channel (so the
 * channel's extremes are exactly lo and hi). */
vkimg_image lv_image(int w, int h, int c, vkimg_fmt fmt, dist_kind d, const uint32_t lo[4], const uint32_t hi[4],
                     bool force_ends);
/* The same over the format's whole range. */
vkimg_image lv_full(int w, int h, int c, vkimg_fmt fmt, dist_kind d);

/* The largest level of fmt: 65535 for U16, else 255. */
uint32_t lv_max(vkimg_fmt f);
/* Sample i of an integer image (U8, U16, U32, U64; 0 for float formats). */
uint64_t lv_sample(const vkimg_image *im, size_t i);
size_t lv_nsamples(const vkimg_image *im);
/* The integer levels of a U8/U16 image. */
uint32_t *lv_levels(const vkimg_image *im);
/* Normalized doubles of a U8/U16 image. */
double *lv_normalized(const vkimg_image *im);
double *lv_to_double(const uint32_t *q, size_t n);

/* The level a device quantizes x (normalized) to, floor(clamp(x) * m + 0.5),
 * and the interval of levels float error can give: lo < hi where x * m is
 * within win of a tie. */
uint32_t lv_quantize(double x, double m, double win, uint32_t *lo, uint32_t *hi);

/* ---------------------------------------------------------------- sizes */

/* 1x1, 1xN, Nx1, 3x5, primes, and larger than one scan segment (1024 texels on
 * lavapipe: 256 invocations x 4) and one column band (32 rows) both ways */
extern const size2 lv_sizes[9];
#define LV_NSIZES ((int)(sizeof lv_sizes / sizeof lv_sizes[0]))

/* Channel counts to run at size i for variant v: all four on small sizes, one
 * (rotating with v) on the large ones. */
int lv_chans(int i, int v, int out[4]);

/* ---------------------------------------------------------------- running */

/* Parses and runs text on in; 0 on success (failures are CHECKed). Sets
 * cur_case. */
int lv_run(vkimg_ctx *ctx, const char *text, const vkimg_image *in, vkimg_fmt out_fmt, vkimg_image *out);

/* Compares got (fmt, w x h x c) with the expected values ex (output units; the
 * nominal result is floor(ex + 0.5)). Without lo/hi a sample passes if it is
 * within tol of the nominal result. With lo/hi (tol unused) the sample must lie
 * in [lo, hi] (lo == hi: exact); samples with hi - lo > 1 (a binary result
 * whose input level was undecided) are counted as undecidable and left out of
 * the error. */
void lv_check(const char *group, const vkimg_image *got, int w, int h, int c, vkimg_fmt fmt, const double *ex,
              const uint32_t *lo, const uint32_t *hi, double tol);
/* Integer expected values (levels of the output format). */
void lv_check_exact(const char *group, const vkimg_image *got, int w, int h, int c, vkimg_fmt fmt,
                    const uint32_t *ex);

/* ---------------------------------------------------------------- the table */

/* A group's line of the table, for checks of their own (test_integral.c). */
typedef struct lv_stat {
    double max_err;
    int cases;
    double samples, nonzero, undecided;
    char worst[320];
} lv_stat;
lv_stat *lv_stats(const char *group);

/* The table of every group checked (gh_main calls it). */
void lv_print_stats(void);

#endif
