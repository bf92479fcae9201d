/* The harness of the tests that run ops on the device (tests/ops): one context
 * with the validation layers on, whose messages are printed with the case that
 * was running and asserted to be none; the test's suites run in turn, timed,
 * and the max-error tables of what they compared (run_ref.h, levels.h) are
 * printed at the end. A test's main is
 *
 *     static const gh_suite suites[] = { { "gray", test_gray } };
 *     return gh_main("test_gray", suites, 1);
 */
#ifndef VKI_GPU_HARNESS_H
#define VKI_GPU_HARNESS_H

#include "vkimg/vkimg.h"

#include <stdatomic.h>
#include <stddef.h>

typedef struct gh_suite {
    const char *name;
    void (*fn)(vkimg_ctx *ctx);
} gh_suite;

/* Checks the shared reference primitives (ref_self_check), creates the context
 * (validation on; without a device: t_skip_no_device), runs the suites,
 * asserts that each and the whole run saw no validation message, prints the
 * tables and the timing, and returns t_done(name). */
int gh_main(const char *name, const gh_suite *suites, size_t nsuites);

/* The case that is running, for validation messages and failure reports. */
extern char cur_case[200];
/* Pipeline runs so far (run_ref.h and levels.h count them). */
extern int gh_runs;
/* VKIMG_TEST_VERBOSE=1: more detail (e.g. the time of every case). */
extern int gh_verbose;

/* Every message of the library's log (debug and info included) also goes to
 * this function when a test sets it (e.g. to see which kernels a run created:
 * "pipeline NAME created in ..."); NULL by default. */
extern void (*gh_log_tap)(vkimg_log_level lvl, const char *msg);
/* Kernels (compute pipelines) the context has created so far (atomic: vkimg_prepare
 * creates them on several threads, each logging). */
extern atomic_int gh_pipelines;
/* Whether ctx's device is a CPU (lavapipe), whose choices some paths follow. */
bool gh_cpu_device(const vkimg_ctx *ctx);

/* The two shapes of the point ops (vki_runs): runs fn again with the per-pixel
 * shape (VKIMG_RUNS=0), with the runs shape at one chunk an invocation
 * (VKIMG_RUNS=1; the default on CPU devices is more), and with the mix of both
 * that GPUs get (VKIMG_RUNS=gpu), and asserts from the "dispatch NAME" log lines
 * that a kernel named `runs_kernel` ran in the second and none named *-runs in
 * the first. */
void gh_shapes(vkimg_ctx *ctx, void (*fn)(vkimg_ctx *ctx), const char *runs_kernel);

/* Dispatches by kernel name, from the library's "dispatch NAME ..." log lines:
 * gh_dispatches_start sets gh_log_tap (saving the one before) and zeroes the
 * counts, gh_dispatched(NAME) is how many there were of NAME since,
 * gh_dispatches_stop puts the tap back (and fails the test where more kernel
 * names came than the counts hold). Not nested. */
void gh_dispatches_start(void);
int gh_dispatched(const char *kernel);
/* The dispatches of the kernels whose names end in suffix (e.g. "-runs"). */
int gh_dispatched_ending(const char *suffix);
void gh_dispatches_stop(void);

/* Monotonic seconds. */
double gh_now(void);
/* calloc that aborts on failure (never returns NULL, also for n = 0). */
void *gh_calloc(size_t n, size_t size);

/* Image sizes of the test lists. */
typedef struct size2 {
    int w, h;
} size2;

#endif
