/* vkimg compare EXPECTED_DIR ACTUAL_DIR (compare.h).
 *
 * Files are paired by their path relative to each directory (recursive; the
 * extensions the batch mode's directory scan takes). A file only in ACTUAL is
 * NEW (passes, unless --fail-on-new); a file only in EXPECTED is MISSING and
 * always fails: a golden image whose test stopped producing its picture is a
 * regression until the golden is removed on purpose.
 *
 * Worker threads (all cores, --threads) each take the next pair: read both
 * files, PASS at once when their bytes are the same, else decode, compare on
 * the one device context (opened by the first pair that needs it: vkimg_compare
 * is thread-safe; at most GPU_SLOTS comparisons on it at once) and write the
 * difference image, while the other workers read and decode. Results are
 * printed in the pairs' order (sorted by relative path) as soon as every pair
 * before them is done, then a summary; the exit code is the worst pair's.
 *
 * --diff DIR: a difference image for every pair that is not PASS (FAILURE only
 * with --diff-on-fail) at DIR/<relative path> (".png" appended when the file
 * is not a PNG): always PNG. */
#define _GNU_SOURCE
#include "compare.h"
#include "inputs.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define GPU_SLOTS 2

typedef struct dir_run {
    cmp_cfg *cfg;
    cmp_pair *pairs;
    int n;
    atomic_int next;
    bool *done;
    int next_print;
    pthread_mutex_t mu; /* ctx, slots, printing */
    pthread_cond_t cv;
    vkimg_ctx *ctx;
    bool ctx_tried;
    char ctx_err[sizeof(((vkimg_err *)0)->msg)];
    int free_slots;
} dir_run;

static vkimg_ctx *dir_get_ctx(void *user, cmp_ctx_op op, vkimg_err *e)
{
    dir_run *d = user;
    pthread_mutex_lock(&d->mu);
    if (op == CMP_CTX_PEEK || op == CMP_CTX_SOON || op == CMP_CTX_TRIM) {
        vkimg_ctx *c = op == CMP_CTX_PEEK ? d->ctx : NULL;
        pthread_mutex_unlock(&d->mu);
        return c;
    }
    if (op == CMP_CTX_RELEASE) {
        d->free_slots++;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
        return NULL;
    }
    if (!d->ctx_tried) {
        d->ctx_tried = true;
        vkimg_ctx_opts co = cli_ctx_opts(&d->cfg->common);
        vkimg_err ce = { 0 };
        d->ctx = vkimg_ctx_create(&co, &ce);
        if (!d->ctx)
            snprintf(d->ctx_err, sizeof d->ctx_err, "%s", ce.msg);
    }
    if (!d->ctx) {
        snprintf(e->msg, sizeof e->msg, "%s", d->ctx_err);
        pthread_mutex_unlock(&d->mu);
        return NULL;
    }
    while (d->free_slots == 0)
        pthread_cond_wait(&d->cv, &d->mu);
    d->free_slots--;
    vkimg_ctx *c = d->ctx;
    pthread_mutex_unlock(&d->mu);
    return c;
}

static void print_pair(dir_run *d, const cmp_pair *p)
{
    if (p->kind == CMP_ERROR)
        cli_error(CLI_CMP_ERROR, "%s", p->err);
    if (d->cfg->common.json)
        cmp_print_json(d->cfg, p, stdout);
    else if (cli_verbose >= 0)
        cmp_print_text(d->cfg, p, false, stdout);
}

static void *worker(void *arg)
{
    dir_run *d = arg;
    for (;;) {
        int i = atomic_fetch_add(&d->next, 1);
        if (i >= d->n)
            break;
        cmp_pair_run(d->cfg, &d->pairs[i], dir_get_ctx, d, false);
        pthread_mutex_lock(&d->mu);
        d->done[i] = true;
        while (d->next_print < d->n && d->done[d->next_print])
            print_pair(d, &d->pairs[d->next_print++]);
        fflush(stdout);
        pthread_mutex_unlock(&d->mu);
    }
    return NULL;
}

/* The paths under dir relative to it. */
static int scan(const char *dir, strvec *rel)
{
    strvec full = { 0 };
    int rc = cli_expand_input(dir, true, &full);
    size_t skip = strlen(dir);
    for (int i = 0; i < full.n && !rc; i++) {
        const char *r = full.v[i] + skip;
        while (*r == '/')
            r++;
        if (sv_push(rel, r))
            rc = cli_error(CLI_CMP_ERROR, "out of memory");
    }
    sv_free(&full);
    return rc ? CLI_CMP_ERROR : 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *rel, const char *suffix)
{
    size_t n = strlen(dir) + strlen(rel) + strlen(suffix) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", rel, suffix);
    return s;
}

int cmp_run_dirs(cmp_cfg *cfg, const char *expected, const char *actual)
{
    double t0 = cli_now_ms();
    strvec ea = { 0 }, aa = { 0 };
    cmp_pair *pairs = NULL;
    bool *done = NULL;
    int n = 0, rc = CLI_CMP_ERROR;
    dir_run d = { .cfg = cfg, .free_slots = GPU_SLOTS };
    cfg->diff_unless_pass = true;
    pthread_mutex_init(&d.mu, NULL);
    pthread_cond_init(&d.cv, NULL);
    if (scan(expected, &ea) || scan(actual, &aa))
        goto out;
    if (ea.n) /* qsort(NULL, 0) is undefined */
        qsort(ea.v, (size_t)ea.n, sizeof *ea.v, cmp_str);
    if (aa.n)
        qsort(aa.v, (size_t)aa.n, sizeof *aa.v, cmp_str);
    if (!ea.n && !aa.n) {
        cli_error(CLI_CMP_ERROR, "compare: no image files in %s or %s", expected, actual);
        goto out;
    }
    pairs = calloc((size_t)(ea.n + aa.n), sizeof *pairs);
    done = calloc((size_t)(ea.n + aa.n) + 1, sizeof *done);
    if (!pairs || !done) {
        cli_error(CLI_CMP_ERROR, "out of memory");
        goto out;
    }
    if (cfg->diff_path) {
        struct stat st;
        vkimg_err e = { 0 };
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/x", cfg->diff_path);
        if (!stat(cfg->diff_path, &st) && !S_ISDIR(st.st_mode)) {
            cli_error(CLI_CMP_ERROR, "compare: --diff %s: with two directories --diff names a directory",
                      cfg->diff_path);
            goto out;
        }
        if (cmp_mkdirs_for(probe, &e)) {
            cli_error(CLI_CMP_ERROR, "compare: --diff: %s", e.msg);
            goto out;
        }
    }
    if (cfg->report_dir && cmp_report_prepare(cfg->report_dir))
        goto out;
    /* merge the two sorted lists */
    for (int i = 0, k = 0; i < ea.n || k < aa.n;) {
        int c = i >= ea.n ? 1 : k >= aa.n ? -1 : strcmp(ea.v[i], aa.v[k]);
        const char *rel = c <= 0 ? ea.v[i] : aa.v[k];
        cmp_pair *p = &pairs[n];
        p->index = n;
        p->name = strdup(rel);
        if (c <= 0)
            p->a = join(expected, rel, "");
        if (c >= 0)
            p->b = join(actual, rel, "");
        if (cfg->diff_path && c == 0) {
            const char *x = strrchr(rel, '.');
            p->diff_out = join(cfg->diff_path, rel, x && !strcasecmp(x, ".png") ? "" : ".png");
            if (!p->diff_out) {
                cli_error(CLI_CMP_ERROR, "out of memory");
                goto out;
            }
        }
        n++;
        if (!p->name || (c <= 0 && !p->a) || (c >= 0 && !p->b)) {
            cli_error(CLI_CMP_ERROR, "out of memory");
            goto out;
        }
        i += c <= 0;
        k += c >= 0;
    }
    if (cfg->diff_path) {
        char **outs = malloc((size_t)n * sizeof *outs);
        int m = 0, x, y;
        for (int i = 0; outs && i < n; i++)
            if (pairs[i].diff_out)
                outs[m++] = pairs[i].diff_out;
        if (outs && cli_find_collision(outs, m, &x, &y)) {
            cli_error(CLI_CMP_ERROR, "compare: --diff: two pairs would write %s (rename one of them)", outs[x]);
            free(outs);
            goto out;
        }
        free(outs);
    }

    /* the workers */
    d.pairs = pairs;
    d.n = n;
    d.done = done;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = cfg->threads ? cfg->threads : ncpu > 0 ? (int)ncpu : 1;
    if (nthreads > n)
        nthreads = n;
#ifdef __GLIBC__
    /* as in batches (batch.c): the pairs' large buffers stay on the heaps */
    if (n > 1) {
        mallopt(M_MMAP_THRESHOLD, 1 << 30);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
#endif
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    int started = 0;
    for (; tids && started < nthreads; started++)
        if (pthread_create(&tids[started], NULL, worker, &d))
            break;
    if (started == 0)
        worker(&d);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);

    /* the summary */
    cmp_summary s = { .pairs = n };
    for (int i = 0; i < n; i++) {
        const cmp_pair *p = &pairs[i];
        switch (p->kind) {
        case CMP_NEW: s.added++; break;
        case CMP_MISSING: s.missing++; break;
        case CMP_ERROR: s.errors++; break;
        case CMP_MISMATCH: s.mismatched++; break;
        default:
            if (p->code == CLI_CMP_FAIL)
                s.failed++;
            else if (p->code == CLI_CMP_WARN)
                s.warned++;
            else
                s.passed++;
            s.identical += p->kind == CMP_IDENTICAL;
        }
        if (p->code > s.code)
            s.code = p->code;
    }
    int nmsgs = d.ctx ? vkimg_ctx_validation_messages(d.ctx) : 0;
    if (nmsgs) {
        cli_error(CLI_CMP_ERROR, "%d validation message(s) reported (see above)", nmsgs);
        s.code = CLI_CMP_ERROR;
    }
    if (cfg->report_dir &&
        cmp_write_report(cfg, pairs, n, &s, cfg->report_dir, expected, actual))
        s.code = CLI_CMP_ERROR;
    s.wall_s = (cli_now_ms() - t0) / 1e3;
    if (cfg->junit_path && cmp_write_junit(cfg, pairs, n, &s, cfg->junit_path))
        s.code = CLI_CMP_ERROR;
    const char *word = s.code == 0 ? "PASS" : s.code == 1 ? "WARNING" : s.code == 2 ? "FAILURE"
                                                                    : s.code == 3 ? "MISMATCH" : "ERROR";
    if (cfg->common.json) {
        printf("{\"summary\": {\"version\": 1, \"expected\": ");
        json_str(stdout, expected);
        printf(", \"actual\": ");
        json_str(stdout, actual);
        printf(", \"pairs\": %d, \"passed\": %d, \"identical\": %d, \"warnings\": %d, \"failed\": %d, "
               "\"mismatched\": %d, \"errors\": %d, \"new\": %d, \"missing\": %d, \"fail_on_new\": %s, "
               "\"verdict\": \"%s\", \"exit_code\": %d, \"wall_s\": %.3f}}\n",
               n, s.passed, s.identical, s.warned, s.failed, s.mismatched, s.errors, s.added, s.missing,
               cfg->fail_on_new ? "true" : "false", word, s.code, s.wall_s);
    } else if (cli_verbose >= 0) {
        printf("%s: %d pairs: %d passed (%d identical files), %d warnings, %d failed, %d size/channel mismatches, "
               "%d errors; %d new%s, %d missing; %.2f s\n",
               word, n, s.passed, s.identical, s.warned, s.failed, s.mismatched, s.errors, s.added,
               s.added && !cfg->fail_on_new ? " (not failing without --fail-on-new)" : "", s.missing, s.wall_s);
    }
    fflush(stdout);
    rc = s.code;
out:
    if (d.ctx)
        vkimg_ctx_destroy(d.ctx);
    for (int i = 0; i < n; i++)
        cmp_pair_free(&pairs[i]);
    free(pairs);
    free(done);
    sv_free(&ea);
    sv_free(&aa);
    pthread_mutex_destroy(&d.mu);
    pthread_cond_destroy(&d.cv);
    return rc;
}
