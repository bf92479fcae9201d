/* vkimg compare A B [options]            two images
 * vkimg compare EXPECTED_DIR ACTUAL_DIR  two directories (compare_dir.c)
 * vkimg compare --server                 odiff's JSON-lines server (server.c)
 *
 * Compares two images on the device (vkimg_compare), like OpenImageIO's idiff
 * (--metric abs, the default) or like pixelmatch / odiff (--metric yiq).
 *
 * ABS: errors are per sample on values normalized to [0,1] (u8 / 255, u16 /
 * 65535, float as is), so a u8 and a u16 image of the same picture compare
 * equal. A pixel fails (warns) when some channel's error exceeds --fail
 * (--warn). Verdict: FAILURE if more than --failpercent % of the pixels fail
 * or the largest error exceeds --hardfail; else WARNING if more than
 * --warnpercent % warn or the largest error exceeds --hardwarn; else PASS.
 * Defaults: fail and warn 1e-6, percents 0, hard limits inf.
 *
 * YIQ: pixelmatch 7.2.0's squared YIQ colour delta of 8-bit RGBA (blended with
 * its checkerboard where not opaque) against 35215 * --threshold^2; with --aa,
 * pixels that its detector calls anti-aliased are not counted (pixelmatch's
 * includeAA=false, odiff's --antialiasing). Verdict: FAILURE if any pixel
 * differs, else PASS. Images of 1..3 channels are compared as RGBA (gray ->
 * R = G = B, alpha 255), so an RGB and an RGBA image of one size compare.
 *
 * Both metrics: --ignore x1:y1-x2:y2 (odiff's syntax, inclusive corners, may
 * repeat, comma-separated lists) and --mask PATH (nonzero first channel) leave
 * pixels out of every count; --max-diff-pixels N / --max-diff-ratio R
 * (Playwright's names) allow that many differing pixels (a budget replaces
 * --failpercent and --warnpercent); --allow-size-mismatch compares images of
 * different sizes over their top-left overlap, every other pixel of the larger
 * extent counting as different.
 *
 * Byte-identical files PASS without being decoded ("identical files"), unless
 * a difference image has to be written; otherwise the two images decode on two
 * threads while the device context opens.
 *
 * Exit codes (idiff's): 0 PASS, 1 WARNING, 2 FAILURE, 3 the images differ in
 * size (without --allow-size-mismatch) or channel count (ABS), 4 error: file,
 * usage (note: usage errors are 4 here, not 2), device, or validation messages
 * with --validate. Directories: the worst pair's code.
 *
 * --diff PATH writes the difference image (ABS: |A - B| * --scale (default 1)
 * as an 8-bit image, per channel, alpha included, clamped to 255; YIQ:
 * pixelmatch's RGBA picture); the extension picks the format (.hdr: float, the
 * 8-bit values / 255). The file is written atomically, and only after a
 * successful comparison. --diff-on-fail writes it only when the verdict is
 * FAILURE (needs --diff).
 *
 * JSON schema (version 1), one object on stdout (README: the fields added
 * since: identical, metric, threshold, aa, ndiff, naa, compared, ignored,
 * outside, diff_ratio, diff_percentage, max_diff_pixels, max_diff_ratio,
 * size_a, size_b, bytes_a, bytes_b; "name" in directory mode):
 * { "version": 1,
 *   "a": str, "b": str,                 the two paths
 *   "width": int, "height": int, "channels": int,
 *   "format_a": "u8"|"u16"|"f32", "format_b": "u8"|"u16"|"f32",
 *   "pixels": int,
 *   "mae": num, "rmse": num,
 *   "psnr": num | null,                 dB; null = infinite (no difference)
 *   "max_error": num, "max_x": int, "max_y": int, "max_channel": int,
 *   "fail": num, "failpercent": num, "hardfail": num | null,   null = inf
 *   "warn": num, "warnpercent": num, "hardwarn": num | null,
 *   "nfail": int, "pct_fail": num,      pixels over fail, % of pixels
 *   "nwarn": int, "pct_warn": num,
 *   "ssim": num | null,                 null unless --ssim
 *   "verdict": "PASS" | "WARNING" | "FAILURE",
 *   "exit_code": 0 | 1 | 2,
 *   "diff": str | null }                the difference image written, if any
 * When the sizes or channel counts differ (exit 3):
 * { "version": 1, "a": str, "b": str, "verdict": "MISMATCH", "exit_code": 3,
 *   "size_a": [w, h, c], "size_b": [w, h, c], "error": str }
 * Other errors print nothing on stdout for two images (message on stderr,
 * exit 4); in directory mode an object with "verdict": "ERROR". */
#define _GNU_SOURCE
#define _GNU_SOURCE
#include "compare.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    O_FAIL,
    O_FAILPERCENT,
    O_HARDFAIL,
    O_WARN,
    O_WARNPERCENT,
    O_HARDWARN,
    O_SSIM,
    O_DIFF,
    O_DIFF_ON_FAIL,
    O_SCALE,
    O_METRIC,
    O_THRESHOLD,
    O_AA,
    O_IGNORE,
    O_MASK,
    O_MAX_DIFF_PIXELS,
    O_MAX_DIFF_RATIO,
    O_ALLOW_SIZE_MISMATCH,
    O_FAIL_ON_NEW,
    O_JUNIT,
    O_REPORT,
    O_SERVER,
    O_THREADS,
};

static const cli_opt compare_opts[] = {
    { "--fail", NULL, CLI_NUM, "X", "a pixel fails if some channel's error > X (default 1e-6)", .dlo = 0,
      .dhi = 1e300, .id = O_FAIL },
    { "--failpercent", NULL, CLI_NUM, "P", "FAILURE if more than P% of the pixels fail (default 0)", .dlo = 0,
      .dhi = 100, .id = O_FAILPERCENT },
    { "--hardfail", NULL, CLI_NUM, "H", "FAILURE if any error > H (default inf)", .dlo = 0, .dhi = INFINITY,
      .allow_inf = true, .id = O_HARDFAIL },
    { "--warn", NULL, CLI_NUM, "X", "a pixel warns if some channel's error > X (default 1e-6)", .dlo = 0,
      .dhi = 1e300, .id = O_WARN },
    { "--warnpercent", NULL, CLI_NUM, "P", "WARNING if more than P% of the pixels warn (default 0)", .dlo = 0,
      .dhi = 100, .id = O_WARNPERCENT },
    { "--hardwarn", NULL, CLI_NUM, "H", "WARNING if any error > H (default inf)", .dlo = 0, .dhi = INFINITY,
      .allow_inf = true, .id = O_HARDWARN },
    { "--ssim", NULL, CLI_FLAG, NULL, "also the mean SSIM (Gaussian 11x11, sigma 1.5)", .id = O_SSIM },
    { "--metric", NULL, CLI_STR, "M",
      "abs (idiff: per-sample error, the default) or yiq (pixelmatch/odiff: YIQ colour delta of 8-bit RGBA)",
      .id = O_METRIC },
    { "--threshold", "-t", CLI_NUM, "T", "yiq: colour delta threshold 0..1 (default 0.1; pixelmatch's, odiff's)",
      .dlo = 0, .dhi = 1, .id = O_THRESHOLD },
    { "--aa", NULL, CLI_FLAG, NULL,
      "yiq: don't count anti-aliased pixels (pixelmatch includeAA=false, odiff --antialiasing)", .id = O_AA },
    { "--ignore", NULL, CLI_STR, "REGIONS",
      "leave out x1:y1-x2:y2[,...] (inclusive corners, odiff's syntax; may repeat)", .id = O_IGNORE },
    { "--mask", NULL, CLI_STR, "PATH", "leave out the pixels whose first channel is nonzero in this image (A's size)",
      .id = O_MASK },
    { "--max-diff-pixels", NULL, CLI_INT, "N", "FAILURE only if more than N pixels differ (Playwright's maxDiffPixels)",
      0, LONG_MAX, .id = O_MAX_DIFF_PIXELS },
    { "--max-diff-ratio", NULL, CLI_NUM, "R",
      "FAILURE only if more than R (0..1) of the pixels differ (Playwright's maxDiffPixelRatio)", .dlo = 0, .dhi = 1,
      .id = O_MAX_DIFF_RATIO },
    { "--allow-size-mismatch", NULL, CLI_FLAG, NULL,
      "compare images of different sizes over their overlap; the other pixels count as different",
      .id = O_ALLOW_SIZE_MISMATCH },
    { "--diff", NULL, CLI_STR, "PATH",
      "write the difference image (abs: |A-B| * K per channel; yiq: pixelmatch's picture); directories: a "
      "directory, one PNG per pair that is not PASS",
      .id = O_DIFF },
    { "--diff-on-fail", NULL, CLI_FLAG, NULL, "write it only when the verdict is FAILURE", .id = O_DIFF_ON_FAIL },
    { "--scale", NULL, CLI_NUM, "K", "abs: scale of the difference image (default 1)", .dlo = 0, .dhi = 1e30,
      .id = O_SCALE },
    { "--fail-on-new", NULL, CLI_FLAG, NULL,
      "directories: a file only in ACTUAL fails the run (a file only in EXPECTED always does)", .id = O_FAIL_ON_NEW },
    { "--junit", NULL, CLI_STR, "FILE", "also write JUnit XML (one testcase per pair)", .id = O_JUNIT },
    { "--report", NULL, CLI_STR, "DIR",
      "also write an HTML report into DIR (index.html, images; self-contained, no network)", .id = O_REPORT },
    { "--threads", NULL, CLI_INT, "N", "directories: pairs decoded at once (default: all cores)", 1, 1024,
      .id = O_THREADS },
    { "--server", NULL, CLI_FLAG, NULL,
      "read odiff's JSON requests on stdin, one per line; answer one JSON line each (README)", .id = O_SERVER },
};

typedef struct args {
    const char *pa, *pb;
    cmp_cfg *cfg;
    bool have_threshold;
} args;

static int on_arg(void *user, int id, const cli_value *v)
{
    args *a = user;
    cmp_cfg *c = a->cfg;
    vkimg_err e = { 0 };
    switch (id) {
    case O_FAIL: c->o.fail = v->d; break;
    case O_FAILPERCENT: c->o.failpercent = v->d; break;
    case O_HARDFAIL: c->o.hardfail = v->d; break;
    case O_WARN: c->o.warn = v->d; break;
    case O_WARNPERCENT: c->o.warnpercent = v->d; break;
    case O_HARDWARN: c->o.hardwarn = v->d; break;
    case O_SSIM: c->o.ssim = true; break;
    case O_DIFF: c->diff_path = v->str; break;
    case O_DIFF_ON_FAIL: c->diff_on_fail = true; break;
    case O_SCALE: c->o.diff_scale = v->d; break;
    case O_METRIC:
        if (!strcasecmp(v->str, "abs"))
            c->o.metric = VKIMG_METRIC_ABS;
        else if (!strcasecmp(v->str, "yiq"))
            c->o.metric = VKIMG_METRIC_YIQ;
        else
            return cli_error(CLI_CMP_ERROR, "compare: --metric '%s': abs or yiq", v->str);
        break;
    case O_THRESHOLD:
        c->o.threshold = v->d;
        a->have_threshold = true;
        break;
    case O_AA: c->o.aa = true; break;
    case O_IGNORE:
        if (cmp_parse_regions(c, v->str, &e))
            return cli_error(CLI_CMP_ERROR, "compare: %s", e.msg);
        break;
    case O_MASK: c->mask_path = v->str; break;
    case O_MAX_DIFF_PIXELS: c->o.max_diff_pixels = (double)v->i; break;
    case O_MAX_DIFF_RATIO: c->o.max_diff_ratio = v->d; break;
    case O_ALLOW_SIZE_MISMATCH: c->o.allow_size_mismatch = true; break;
    case O_FAIL_ON_NEW: c->fail_on_new = true; break;
    case O_JUNIT: c->junit_path = v->str; break;
    case O_REPORT: c->report_dir = v->str; break;
    case O_THREADS: c->threads = (int)v->i; break;
    case O_SERVER: c->server = true; break;
    case CLI_POSITIONAL:
        if (!a->pa)
            a->pa = v->str;
        else if (!a->pb)
            a->pb = v->str;
        else
            return cli_error(CLI_CMP_ERROR, "compare: two images or two directories only ('%s' is extra)", v->str);
        break;
    }
    return 0;
}

/* ---------------------------------------------------------------- the command */

static int run(int argc, char **argv);

const cli_command cli_cmd_compare = {
    .name = "compare",
    .synopsis = "vkimg compare A B | EXPECTED_DIR ACTUAL_DIR | --server [options]",
    .summary = "Compares two images on the GPU: idiff's metrics (--metric abs: mean, RMS and peak SNR of the "
               "per-sample error on values normalized to [0,1], the largest error and where, pixels over the "
               "fail/warn thresholds, optional SSIM) or pixelmatch's and odiff's (--metric yiq: pixels whose YIQ "
               "colour delta exceeds --threshold, optionally not counting anti-aliasing), with ignore regions, "
               "masks and pixel budgets, and a verdict. Byte-identical files pass without decoding. Two "
               "directories are compared file by file (relative paths; new and missing files reported), with "
               "optional JUnit XML and an HTML report; --server answers odiff's JSON requests.",
    .opts = compare_opts,
    .nopts = (int)(sizeof compare_opts / sizeof compare_opts[0]),
    .common = true,
    .exit_text = "exit codes: 0 PASS, 1 WARNING, 2 FAILURE, 3 size/channel mismatch, 4 error (file, usage, device); "
                 "directories: the worst pair's",
    .run = run,
};

typedef struct one_ctx {
    const cli_common *common;
    vkimg_ctx *ctx;
    int validation_messages;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool opening;  /* being opened, or about to be (PEEK waits for it: the decoders then write into its memory) */
    bool reserved; /* CMP_CTX_SOON: opening, but the next ACQUIRE does the work */
} one_ctx;

/* Two images: the context is opened while the images are decoded (they decode
 * into its memory where it is open in time) and destroyed when the pair is done,
 * or as soon as they are compared where nothing of it is left in use, so that its
 * buffers are gone while the difference image is encoded. */
static vkimg_ctx *one_get_ctx(void *user, cmp_ctx_op op, vkimg_err *e)
{
    one_ctx *c = user;
    pthread_mutex_lock(&c->mu);
    if (op == CMP_CTX_PEEK) {
        while (c->opening)
            pthread_cond_wait(&c->cv, &c->mu);
        vkimg_ctx *ctx = c->ctx;
        pthread_mutex_unlock(&c->mu);
        return ctx;
    }
    if (op == CMP_CTX_RELEASE) {
        if (c->ctx)
            c->validation_messages += vkimg_ctx_validation_messages(c->ctx);
        vkimg_ctx_destroy(c->ctx);
        c->ctx = NULL;
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    if (op == CMP_CTX_TRIM) {
        vkimg_ctx_trim(c->ctx);
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    if (op == CMP_CTX_SOON) {
        if (!c->ctx && !c->opening)
            c->opening = c->reserved = true;
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    if (!c->ctx && (!c->opening || c->reserved)) {
        c->opening = true;
        c->reserved = false;
        pthread_mutex_unlock(&c->mu);
        vkimg_ctx_opts co = cli_ctx_opts(c->common);
        vkimg_ctx *ctx = vkimg_ctx_create(&co, e);
        pthread_mutex_lock(&c->mu);
        c->ctx = ctx;
        c->opening = false;
        pthread_cond_broadcast(&c->cv);
    }
    while (c->opening)
        pthread_cond_wait(&c->cv, &c->mu);
    vkimg_ctx *ctx = c->ctx;
    pthread_mutex_unlock(&c->mu);
    return ctx;
}

static bool is_dir(const char *p)
{
    struct stat st;
    return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/* The arguments into *cfg and *a, and the checks between them that need no file:
 * 0, -1 after --help, or the exit code of the error (reported). */
static int parse_args(int argc, char **argv, cmp_cfg *cfg, args *a)
{
    int rc = cli_parse(&cli_cmd_compare, argc, argv, &cfg->common, CLI_CMP_ERROR, on_arg, a);
    if (rc)
        return rc;
    if (a->have_threshold && cfg->o.metric != VKIMG_METRIC_YIQ && !cfg->server)
        return cli_error(CLI_CMP_ERROR, "compare: --threshold is the YIQ threshold: it needs --metric yiq (abs: --fail)");
    if (cfg->o.aa && cfg->o.metric != VKIMG_METRIC_YIQ && !cfg->server)
        return cli_error(CLI_CMP_ERROR, "compare: --aa needs --metric yiq");
    if (cfg->server && (a->pa || cfg->diff_path || cfg->junit_path || cfg->report_dir))
        return cli_error(CLI_CMP_ERROR, "compare --server: takes no files, --diff, --junit or --report (each request "
                                        "names its files)");
    if (!cfg->server && !a->pb)
        return cli_error(CLI_CMP_ERROR, "compare: needs two images or two directories (see 'vkimg compare --help')");
    if (cfg->diff_on_fail && !cfg->diff_path)
        return cli_error(CLI_CMP_ERROR, "compare: --diff-on-fail needs --diff PATH");
    return 0;
}

int cli_compare_parse(int argc, char **argv)
{
    cmp_cfg cfg = { .o = VKIMG_COMPARE_DEFAULTS };
    args a = { .cfg = &cfg };
    int rc = parse_args(argc, argv, &cfg, &a);
    free(cfg.rects);
    return rc;
}

static int run(int argc, char **argv)
{
    cmp_cfg cfg = { .o = VKIMG_COMPARE_DEFAULTS };
    args a = { .cfg = &cfg };
    int rc = parse_args(argc, argv, &cfg, &a);
    if (rc) {
        free(cfg.rects);
        return rc < 0 ? 0 : rc;
    }
    vkimg_err e = { 0 };
    one_ctx oc = { .common = &cfg.common, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
    cmp_pair p = { 0 };
    bool dirs = a.pa && a.pb && is_dir(a.pa) && is_dir(a.pb);
    rc = CLI_CMP_ERROR;
    if (cfg.server) {
        /* checked by parse_args */
    } else if (!dirs && (is_dir(a.pa) || is_dir(a.pb))) {
        cli_error(CLI_CMP_ERROR, "compare: %s is a directory and %s is not: compare two images or two directories",
                  is_dir(a.pa) ? a.pa : a.pb, is_dir(a.pa) ? a.pb : a.pa);
        goto out;
    }
    if (!dirs && !cfg.server && (cfg.junit_path || cfg.report_dir || cfg.fail_on_new)) {
        cli_error(CLI_CMP_ERROR, "compare: --junit, --report and --fail-on-new are for two directories");
        goto out;
    }
    if (!dirs && cfg.diff_path && vkimg_check_output(cfg.diff_path, &e)) {
        cli_error(CLI_CMP_ERROR, "compare: --diff: %s", e.msg);
        goto out;
    }
    if (cfg.junit_path) {
        char probe[4200];
        snprintf(probe, sizeof probe, "%s.png", cfg.junit_path); /* the directory is writable */
        if (vkimg_check_output(probe, &e)) {
            cli_error(CLI_CMP_ERROR, "compare: --junit %s: %s", cfg.junit_path, e.msg);
            goto out;
        }
    }
    if (cfg.mask_path && vkimg_load(cfg.mask_path, NULL, &cfg.mask, &e)) {
        cli_error(CLI_CMP_ERROR, "compare: --mask: %s", e.msg);
        goto out;
    }
    if (cfg.mask.data)
        cfg.o.mask = &cfg.mask;
    if (cfg.server) {
        rc = cmp_run_server(&cfg);
        goto out;
    }
    if (dirs) {
        rc = cmp_run_dirs(&cfg, a.pa, a.pb);
        goto out;
    }

    /* two images */
    p.a = strdup(a.pa);
    p.b = strdup(a.pb);
    p.diff_out = cfg.diff_path ? strdup(cfg.diff_path) : NULL;
    if (!p.a || !p.b || (cfg.diff_path && !p.diff_out)) {
        cli_error(CLI_CMP_ERROR, "out of memory");
        goto out;
    }
    cmp_pair_run(&cfg, &p, one_get_ctx, &oc, true);
    rc = p.code;
    if (p.kind == CMP_ERROR) {
        cli_error(rc, "%s", p.err);
    } else if (p.kind == CMP_MISMATCH) {
        if (cfg.common.json)
            cmp_print_json(&cfg, &p, stdout);
        cli_error(rc, "%s", p.err);
    } else {
        if (cfg.common.json)
            cmp_print_json(&cfg, &p, stdout);
        else if (cli_verbose >= 0)
            cmp_print_text(&cfg, &p, true, stdout);
        fflush(stdout);
        if (cfg.common.timing) {
            p.tm.decode_ms = p.read_ms + p.decode_ms;
            p.tm.encode_ms = p.encode_ms;
            p.tm.total_ms = p.total_ms;
            char what[8300];
            snprintf(what, sizeof what, "compare %s %s", p.a, p.b);
            cli_print_timing(&p.tm, what);
        }
    }
out:
    if (oc.ctx)
        oc.validation_messages += vkimg_ctx_validation_messages(oc.ctx);
    if (oc.validation_messages) {
        cli_error(CLI_CMP_ERROR, "%d validation message(s) reported (see above)", oc.validation_messages);
        rc = CLI_CMP_ERROR;
    }
    vkimg_ctx_destroy(oc.ctx);
    cmp_pair_free(&p);
    vkimg_image_free(&cfg.mask);
    free(cfg.rects);
    return rc;
}

