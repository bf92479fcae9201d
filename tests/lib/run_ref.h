/* Runs a pipeline on the device and compares it with the composition of the
 * independent double-precision references (ref.h, tests/ops/NAME_ref.h), once
 * per output format. The max error found per group (a name: "blur", "chain")
 * and output format is printed at the end of the test (gh_main).
 *
 * Tolerances (errors after quantizing the reference once, at the end):
 *   U8 output:  <= 1 LSB (8-bit), and <= 0.515 LSB against the unrounded reference
 *               (0.5 + float error + resize's 16-bit intermediate on GPUs: run_ref.c)
 *   U16 output: <= 1 LSB (16-bit), and <= 0.6 LSB against the unrounded reference
 *   F32 output: <= 1e-5 absolute
 *   or the tolerance a case gives (e.g. 0: exact). Samples a reference marks
 * undecided are left out (and counted in the table); with ref_alpha_weighted
 * the colour of u16/f32 outputs with alpha is compared as composited (ref.h).
 */
#ifndef VKI_RUN_REF_H
#define VKI_RUN_REF_H

#include "gpu_harness.h"
#include "ref.h"

#include <stdint.h>

/* Output formats to run, as a mask. */
enum { F_U8, F_U16, F_F32, NF };
#define FMT_U8 (1u << F_U8)
#define FMT_U16 (1u << F_U16)
#define FMT_F32 (1u << F_F32)
#define FMT_ALL (FMT_U8 | FMT_U16 | FMT_F32)

/* Runs `text` on `in` once per output format in fmts and compares with the
 * reference composition of st[0..n). tol < 0: the defaults. */
void run_case(vkimg_ctx *ctx, const char *group, const char *text, const ref_step *st, int n, const vkimg_image *in,
              unsigned fmts, double tol);

/* A fresh random image (ref_random_image, seed run_next_seed++) of w x h x c in
 * in_fmt, run through run_case. */
void run_rand(vkimg_ctx *ctx, const char *group, const char *text, const ref_step *st, int n, int w, int h, int c,
              vkimg_fmt in_fmt, unsigned fmts, double tol);
extern uint64_t run_next_seed;

/* Compares one device image with its reference (tolerances as above; tol < 0:
 * the defaults for got's format), counts it in group's line of the table and
 * returns the error; `what` names the case in failure messages. */
double run_check(const char *group, const char *what, const vkimg_image *got, const ref_img *exp, double tol);

/* Pipelines that write several images (mipmaps). run_levels parses and runs
 * text on in with vkimg_run_n (vkimg_pipeline_outputs images, at most max):
 * returns their number (out[0 .. n) to vkimg_image_free), or -1 after a failed
 * CHECK. run_check_levels checks them against the chain st[0..n) whose last
 * step writes several images: their number and sizes (its outputs), image 0
 * against the chain's result, and image k against its next of image k - 1 as
 * the device wrote it (each image checked on its own, its input exactly what
 * the device read; ref_apply_levels gives the reference's own chain). */
int run_levels(vkimg_ctx *ctx, const char *text, const vkimg_image *in, vkimg_fmt out_fmt, vkimg_image *out, int max);
void run_check_levels(const char *group, const char *text, const ref_step *st, int n, const vkimg_image *in,
                      const vkimg_image *levels, int nlev, double tol);

/* 1x1, 1xN, Nx1, 3x5, primes, 257x129, larger than one tile both ways */
extern const size2 op_sizes[8];
#define OP_NSIZES ((int)(sizeof op_sizes / sizeof op_sizes[0]))

/* The max-error table of every group run (gh_main calls it). */
void run_ref_print_stats(void);

#endif
