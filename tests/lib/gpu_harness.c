/* The harness of the op tests (see gpu_harness.h). */
#include "gpu_harness.h"
#include "levels.h"
#include "ref.h"
#include "run_ref.h"
#include "t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char cur_case[200] = "(context creation)";
int gh_runs;
int gh_verbose;
atomic_int gh_pipelines;
void (*gh_log_tap)(vkimg_log_level lvl, const char *msg);
static int nlogged;

double gh_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time of the whole process (all threads: lavapipe runs on several). */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void *gh_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "test: out of memory\n");
        abort();
    }
    return p;
}

bool gh_cpu_device(const vkimg_ctx *ctx)
{
    return strstr(vkimg_ctx_device_desc(ctx), "(CPU,") != NULL;
}

enum { GH_MAX_KERNELS = 64 };
static struct {
    char name[64];
    int n;
} gh_kernels[GH_MAX_KERNELS];
static int gh_nkernels, gh_dropped; /* dropped: dispatches of names past the table */
static void (*gh_dispatch_saved)(vkimg_log_level, const char *);

static void dispatch_tap(vkimg_log_level lvl, const char *msg)
{
    (void)lvl;
    if (strncmp(msg, "dispatch ", 9))
        return;
    const char *name = msg + 9, *end = strchr(name, ' ');
    size_t n = end ? (size_t)(end - name) : strlen(name);
    int i = 0;
    while (i < gh_nkernels && (strlen(gh_kernels[i].name) != n || strncmp(gh_kernels[i].name, name, n)))
        i++;
    if (i == gh_nkernels) {
        if (i == GH_MAX_KERNELS || n >= sizeof gh_kernels[0].name) {
            gh_dropped++;
            return;
        }
        memcpy(gh_kernels[i].name, name, n);
        gh_kernels[i].name[n] = '\0';
        gh_kernels[i].n = 0;
        gh_nkernels++;
    }
    gh_kernels[i].n++;
}

void gh_dispatches_start(void)
{
    gh_nkernels = gh_dropped = 0;
    if (gh_log_tap != dispatch_tap)
        gh_dispatch_saved = gh_log_tap;
    gh_log_tap = dispatch_tap;
}

int gh_dispatched(const char *kernel)
{
    for (int i = 0; i < gh_nkernels; i++)
        if (!strcmp(gh_kernels[i].name, kernel))
            return gh_kernels[i].n;
    return 0;
}

int gh_dispatched_ending(const char *suffix)
{
    const size_t k = strlen(suffix);
    int n = 0;
    for (int i = 0; i < gh_nkernels; i++) {
        const size_t m = strlen(gh_kernels[i].name);
        n += m >= k && !strcmp(gh_kernels[i].name + m - k, suffix) ? gh_kernels[i].n : 0;
    }
    return n;
}

void gh_dispatches_stop(void)
{
    gh_log_tap = gh_dispatch_saved;
    CHECK(gh_dropped == 0, "gh_dispatches: %d dispatch(es) of kernels past the table's %d names not counted",
          gh_dropped, GH_MAX_KERNELS);
}

void gh_shapes(vkimg_ctx *ctx, void (*fn)(vkimg_ctx *ctx), const char *runs_kernel)
{
    gh_dispatches_start();
    setenv("VKIMG_RUNS", "0", 1);
    fn(ctx);
    gh_dispatches_stop();
    CHECK(gh_dispatched_ending("-runs") == 0, "VKIMG_RUNS=0: %d dispatches of a *-runs kernel",
          gh_dispatched_ending("-runs"));
    gh_dispatches_start();
    setenv("VKIMG_RUNS", "1", 1);
    fn(ctx);
    gh_dispatches_stop();
    CHECK(gh_dispatched(runs_kernel) > 0, "VKIMG_RUNS=1: %s never ran", runs_kernel);
    setenv("VKIMG_RUNS", "gpu", 1); /* each op's choice of shape for GPUs, pass by pass */
    fn(ctx);
    unsetenv("VKIMG_RUNS");
}

/* The library's log: validation warnings and errors, with the case that was
 * running (the count is asserted at the end). */
static void log_cb(void *user, vkimg_log_level lvl, const char *msg)
{
    (void)user;
    if (gh_log_tap)
        gh_log_tap(lvl, msg);
    if (!strncmp(msg, "pipeline ", 9) && strstr(msg, " created in "))
        gh_pipelines++;
    if (lvl < VKIMG_LOG_WARN)
        return;
    if (nlogged++ < 20)
        fprintf(stderr, "[%s] %s\n", cur_case, msg);
}

int gh_main(const char *name, const gh_suite *suites, size_t nsuites)
{
    double t0 = gh_now();
    const char *ev = getenv("VKIMG_TEST_VERBOSE");
    gh_verbose = ev && *ev && *ev != '0';
    int rf = ref_self_check();
    CHECK(rf == 0, "reference self-check: %d failures", rf);

    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_ctx_opts co;
    memset(&co, 0, sizeof co);
    co.validate = true;
    co.log = log_cb;
    vkimg_ctx *ctx = vkimg_ctx_create(&co, &e);
    if (!ctx)
        return t_skip_no_device(e.msg);
    printf("device: %s\n", vkimg_ctx_device_desc(ctx));

    const char *only = getenv("VKIMG_TEST_SUITE"); /* run one suite (by hand; never in CI) */
    for (size_t i = 0; i < nsuites; i++) {
        if (only && *only && strcmp(only, suites[i].name))
            continue;
        double ts = gh_now(), cs = cpu_s();
        int r0 = gh_runs, k0 = gh_pipelines, vm0 = vkimg_ctx_validation_messages(ctx);
        suites[i].fn(ctx);
        printf("  %-9s %4d runs in %6.2f s (cpu %.2f s), %d kernels made\n", suites[i].name, gh_runs - r0,
               gh_now() - ts, cpu_s() - cs, gh_pipelines - k0);
        fflush(stdout);
        int vm1 = vkimg_ctx_validation_messages(ctx);
        CHECK(vm1 == vm0, "%s: %d validation messages", suites[i].name, vm1 - vm0);
    }

    run_ref_print_stats();
    lv_print_stats();

    int vm = vkimg_ctx_validation_messages(ctx);
    CHECK(vm == 0, "%d validation messages", vm);
    vkimg_ctx_destroy(ctx);
    printf("%s: %d runs, %.1f s (cpu %.1f s)\n", name, gh_runs, gh_now() - t0, cpu_s());
    return t_done(name);
}
