/* vkimg compare A B [--fail X] [--failpercent P] [--hardfail H] [--warn X]
 *                   [--warnpercent P] [--hardwarn H] [--ssim] [--diff PATH]
 *                   [--diff-on-fail] [--scale K] [--json] [--device D]
 *                   [--timing] [--validate]
 *
 * Compares two images on the device, like OpenImageIO's idiff (vkimg_compare).
 * Errors are per sample on values normalized to [0,1] (u8 / 255, u16 / 65535,
 * float as is), so a u8 and a u16 image of the same picture compare equal.
 * A pixel fails (warns) when some channel's error exceeds --fail (--warn).
 * Verdict: FAILURE if more than --failpercent % of the pixels fail or the
 * largest error exceeds --hardfail; else WARNING if more than --warnpercent %
 * warn or the largest error exceeds --hardwarn; else PASS. Defaults: fail and
 * warn 1e-6, percents 0, hard limits inf.
 *
 * Exit codes (idiff's): 0 PASS, 1 WARNING, 2 FAILURE, 3 the images differ in
 * size or channel count (nothing is compared, not even common channels),
 * 4 error: file, usage (note: usage errors are 4 here, not 2), device, or
 * validation messages with --validate.
 *
 * --diff PATH writes |A - B| * --scale (default 1) as an 8-bit image, per
 * channel (alpha included), clamped to 1 (255); the extension picks the format
 * (.hdr: float, the 8-bit values / 255). The file is written atomically, and
 * only after a successful comparison. --diff-on-fail writes it only when the
 * verdict is FAILURE (needs --diff).
 *
 * JSON schema (version 1), one object on stdout:
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
 * Other errors print nothing on stdout (message on stderr, exit 4). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_PASS = 0, EXIT_WARN = 1, EXIT_FAILURE_ = 2, EXIT_MISMATCH = 3, EXIT_ERROR = 4 };

static const char COMPARE_USAGE[] =
    "usage: vkimg compare A B [options]\n"
    "Compares two images on the GPU (idiff-style): mean, RMS and peak SNR of the\n"
    "per-sample error on values normalized to [0,1], the largest error and where,\n"
    "pixels over the fail/warn thresholds, optional SSIM, and a verdict.\n"
    "  --fail X          a pixel fails if some channel's error > X (default 1e-6)\n"
    "  --failpercent P   FAILURE if more than P% of the pixels fail (default 0)\n"
    "  --hardfail H      FAILURE if any error > H (default inf)\n"
    "  --warn X, --warnpercent P, --hardwarn H   the same for WARNING\n"
    "  --ssim            also the mean SSIM (Gaussian 11x11, sigma 1.5)\n"
    "  --diff PATH       write |A-B| * K as an 8-bit image (per channel, clamped)\n"
    "  --diff-on-fail    write it only when the verdict is FAILURE\n"
    "  --scale K         scale of the difference image (default 1)\n"
    "  --json            one JSON object (schema version 1)\n"
    "  --device D        device index, name substring, 'gpu' or 'cpu'\n"
    "  --timing          print decode, upload, GPU, readback, encode times on stderr\n"
    "  --validate        enable the Khronos validation layer\n"
    "exit codes: 0 PASS, 1 WARNING, 2 FAILURE, 3 size/channel mismatch,\n"
    "            4 error (file, usage, device)\n";

static void json_str(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void json_num(double v)
{
    if (isfinite(v))
        printf("%.17g", v);
    else
        fputs("null", stdout);
}

/* A number (or inf for the hard limits); percents in 0..100. */
static int parse_num(const char *opt, const char *v, bool allow_inf, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno == ERANGE || isnan(x) || (isinf(x) && !allow_inf) || x < lo || x > hi)
        return cli_error(EXIT_ERROR, "compare: %s: '%s' is not a number in %g..%g", opt, v, lo, hi);
    *out = x;
    return 0;
}

static void print_timing(const vkimg_timing *t, const char *a, const char *b)
{
    fprintf(stderr, "timing (compare %s %s):\n", a, b);
    fprintf(stderr, "  %-24s %9.3f ms\n", "decode", t->decode_ms);
    fprintf(stderr, "  %-24s %9.3f ms\n", "upload", t->upload_ms);
    for (int i = 0; i < t->nstages; i++) {
        char label[48];
        snprintf(label, sizeof label, "%s (GPU)", t->stage[i].name);
        fprintf(stderr, "  %-24s %9.3f ms\n", label, t->stage[i].gpu_ms);
    }
    fprintf(stderr, "  %-24s %9.3f ms\n", "readback", t->readback_ms);
    if (t->gpu_total_ms > 0)
        fprintf(stderr, "  %-24s %9.3f ms\n", "GPU total", t->gpu_total_ms);
    fprintf(stderr, "  %-24s %9.3f ms\n", "encode", t->encode_ms);
    fprintf(stderr, "  %-24s %9.3f ms\n", "total", t->total_ms);
}

/* Writes the U8 diff image in the format the path's extension takes. */
static int save_diff(const char *path, const vkimg_image *d, vkimg_err *e)
{
    vkimg_fmt want = vkimg_file_fmt(vkimg_file_kind_of(path), VKIMG_U8);
    if (want == VKIMG_U8)
        return vkimg_save(path, d, NULL, e);
    vkimg_image f = { 0 };
    int rc = vkimg_image_alloc(&f, d->w, d->h, d->c, want, e);
    if (rc)
        return rc;
    size_t n = (size_t)d->w * d->h * d->c;
    for (size_t i = 0; i < n; i++) {
        double v = ((const uint8_t *)d->data)[i];
        if (want == VKIMG_F32)
            ((float *)f.data)[i] = (float)(v / 255.0);
        else if (want == VKIMG_U16)
            ((uint16_t *)f.data)[i] = (uint16_t)(v * 257);
    }
    rc = vkimg_save(path, &f, NULL, e);
    vkimg_image_free(&f);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    const char *pa = NULL, *pb = NULL, *device = NULL, *diff_path = NULL;
    bool json = false, timing = false, validate = false, diff_on_fail = false;
    vkimg_compare_opts o = VKIMG_COMPARE_DEFAULTS;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(COMPARE_USAGE, stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--ssim")) {
            o.ssim = true;
        } else if (!strcmp(a, "--timing")) {
            timing = true;
        } else if (!strcmp(a, "--validate")) {
            validate = true;
        } else if (!strcmp(a, "--diff-on-fail")) {
            diff_on_fail = true;
        } else if (!strcmp(a, "--fail") || !strcmp(a, "--warn") || !strcmp(a, "--failpercent") ||
                   !strcmp(a, "--warnpercent") || !strcmp(a, "--hardfail") || !strcmp(a, "--hardwarn") ||
                   !strcmp(a, "--scale") || !strcmp(a, "--diff") || !strcmp(a, "--device")) {
            if (!v)
                return cli_error(EXIT_ERROR, "compare: %s needs a value (see 'vkimg compare --help')", a);
            i++;
            if (!strcmp(a, "--fail"))
                rc = parse_num(a, v, false, 0, INFINITY, &o.fail);
            else if (!strcmp(a, "--warn"))
                rc = parse_num(a, v, false, 0, INFINITY, &o.warn);
            else if (!strcmp(a, "--failpercent"))
                rc = parse_num(a, v, false, 0, 100, &o.failpercent);
            else if (!strcmp(a, "--warnpercent"))
                rc = parse_num(a, v, false, 0, 100, &o.warnpercent);
            else if (!strcmp(a, "--hardfail"))
                rc = parse_num(a, v, true, 0, INFINITY, &o.hardfail);
            else if (!strcmp(a, "--hardwarn"))
                rc = parse_num(a, v, true, 0, INFINITY, &o.hardwarn);
            else if (!strcmp(a, "--scale"))
                rc = parse_num(a, v, false, 0, 1e30, &o.diff_scale);
            else if (!strcmp(a, "--diff"))
                diff_path = v;
            else
                device = v;
            if (rc)
                return rc;
        } else if (a[0] == '-' && a[1]) {
            return cli_error(EXIT_ERROR, "compare: unknown option '%s' (see 'vkimg compare --help')", a);
        } else if (!pa) {
            pa = a;
        } else if (!pb) {
            pb = a;
        } else {
            return cli_error(EXIT_ERROR, "compare: two images only ('%s' is extra)", a);
        }
    }
    if (!pb)
        return cli_error(EXIT_ERROR, "compare: needs two images (see 'vkimg compare --help')");
    if (diff_on_fail && !diff_path)
        return cli_error(EXIT_ERROR, "compare: --diff-on-fail needs --diff PATH");
    vkimg_err e = { 0 };
    if (diff_path && vkimg_check_output(diff_path, &e))
        return cli_error(EXIT_ERROR, "compare: --diff: %s", e.msg);
    o.want_diff = diff_path != NULL;

    vkimg_image a = { 0 }, b = { 0 };
    vkimg_ctx *ctx = NULL;
    vkimg_compare_result r = { 0 };
    vkimg_timing tm = { 0 };
    int rc = EXIT_ERROR;
    double t0 = vki_cli_now_ms();
    if (vkimg_load(pa, NULL, &a, &e) || vkimg_load(pb, NULL, &b, &e)) {
        cli_error(EXIT_ERROR, "%s", e.msg);
        goto done;
    }
    double decode_ms = vki_cli_now_ms() - t0;
    if (a.w != b.w || a.h != b.h || a.c != b.c) {
        char msg[1024 + 64];
        snprintf(msg, sizeof msg,
                 "compare: the images differ in size or channels, not compared: %s is %dx%d with %d channel(s), %s is "
                 "%dx%d with %d channel(s)",
                 pa, a.w, a.h, a.c, pb, b.w, b.h, b.c);
        if (json) {
            printf("{\"version\": 1, \"a\": ");
            json_str(pa);
            printf(", \"b\": ");
            json_str(pb);
            printf(", \"verdict\": \"MISMATCH\", \"exit_code\": 3, \"size_a\": [%d, %d, %d], \"size_b\": [%d, %d, %d], "
                   "\"error\": ",
                   a.w, a.h, a.c, b.w, b.h, b.c);
            json_str(msg);
            printf("}\n");
        }
        rc = cli_error(EXIT_MISMATCH, "%s", msg);
        goto done;
    }
    ctx = vkimg_ctx_create(&(vkimg_ctx_opts){ .device = device, .validate = validate, .log = cli_log }, &e);
    if (!ctx) {
        cli_error(EXIT_ERROR, "%s", e.msg);
        goto done;
    }
    if (vkimg_compare(ctx, &a, &b, &o, &r, &tm, &e)) {
        rc = cli_error(r.verdict == VKIMG_CMP_MISMATCH ? EXIT_MISMATCH : EXIT_ERROR, "%s", e.msg);
        goto done;
    }
    int verdict = r.verdict == VKIMG_CMP_FAIL ? EXIT_FAILURE_ : r.verdict == VKIMG_CMP_WARN ? EXIT_WARN : EXIT_PASS;
    const char *vword = verdict == EXIT_FAILURE_ ? "FAILURE" : verdict == EXIT_WARN ? "WARNING" : "PASS";
    bool write_diff = diff_path && (!diff_on_fail || verdict == EXIT_FAILURE_);
    double t1 = vki_cli_now_ms();
    if (write_diff && save_diff(diff_path, &r.diff, &e)) {
        cli_error(EXIT_ERROR, "compare: --diff: %s", e.msg);
        goto done;
    }
    tm.encode_ms = vki_cli_now_ms() - t1;

    static const char *const cname4[] = { "R", "G", "B", "A" };
    char where[64];
    snprintf(where, sizeof where, "(%d, %d, %s)", r.max_x, r.max_y,
             a.c <= 2 ? (r.max_c == 0 ? "gray" : "alpha") : cname4[r.max_c]);
    if (json) {
        printf("{\"version\": 1, \"a\": ");
        json_str(pa);
        printf(", \"b\": ");
        json_str(pb);
        printf(", \"width\": %d, \"height\": %d, \"channels\": %d, \"format_a\": \"%s\", \"format_b\": \"%s\", "
               "\"pixels\": %llu, \"mae\": ",
               a.w, a.h, a.c, vkimg_fmt_name(a.fmt), vkimg_fmt_name(b.fmt), (unsigned long long)r.pixels);
        json_num(r.mae);
        printf(", \"rmse\": ");
        json_num(r.rmse);
        printf(", \"psnr\": ");
        json_num(r.psnr);
        printf(", \"max_error\": ");
        json_num(r.max_err);
        printf(", \"max_x\": %d, \"max_y\": %d, \"max_channel\": %d, \"fail\": ", r.max_x, r.max_y, r.max_c);
        json_num(o.fail);
        printf(", \"failpercent\": ");
        json_num(o.failpercent);
        printf(", \"hardfail\": ");
        json_num(o.hardfail);
        printf(", \"warn\": ");
        json_num(o.warn);
        printf(", \"warnpercent\": ");
        json_num(o.warnpercent);
        printf(", \"hardwarn\": ");
        json_num(o.hardwarn);
        printf(", \"nfail\": %llu, \"pct_fail\": ", (unsigned long long)r.nfail);
        json_num(r.pct_fail);
        printf(", \"nwarn\": %llu, \"pct_warn\": ", (unsigned long long)r.nwarn);
        json_num(r.pct_warn);
        printf(", \"ssim\": ");
        json_num(r.ssim);
        printf(", \"verdict\": \"%s\", \"exit_code\": %d, \"diff\": ", vword, verdict);
        if (write_diff)
            json_str(diff_path);
        else
            fputs("null", stdout);
        printf("}\n");
    } else {
        printf("Comparing \"%s\" and \"%s\"\n", pa, pb);
        printf("  %d x %d, %d channel%s (%s vs %s); errors on values normalized to [0,1]\n", a.w, a.h, a.c,
               a.c > 1 ? "s" : "", vkimg_fmt_name(a.fmt), vkimg_fmt_name(b.fmt));
        printf("  Mean error = %.6g\n", r.mae);
        printf("  RMS error = %.6g\n", r.rmse);
        if (isinf(r.psnr))
            printf("  Peak SNR = inf\n");
        else
            printf("  Peak SNR = %.6g dB\n", r.psnr);
        printf("  Max error  = %.6g @ %s\n", r.max_err, where);
        if (o.ssim)
            printf("  SSIM = %.8f\n", r.ssim);
        printf("  %llu pixels (%.4g%%) over %g (fail)\n", (unsigned long long)r.nfail, r.pct_fail, o.fail);
        printf("  %llu pixels (%.4g%%) over %g (warn)\n", (unsigned long long)r.nwarn, r.pct_warn, o.warn);
        if (write_diff)
            printf("  difference image (x%g) written to %s\n", o.diff_scale, diff_path);
        printf("%s\n", vword);
    }
    fflush(stdout);
    rc = verdict;
    if (timing) {
        tm.decode_ms = decode_ms;
        tm.total_ms += decode_ms + tm.encode_ms;
        print_timing(&tm, pa, pb);
    }

done:
    if (ctx && vkimg_ctx_validation_messages(ctx)) {
        cli_error(EXIT_ERROR, "%d validation message(s) reported (see above)", vkimg_ctx_validation_messages(ctx));
        rc = EXIT_ERROR;
    }
    vkimg_image_free(&r.diff);
    vkimg_ctx_destroy(ctx);
    vkimg_image_free(&a);
    vkimg_image_free(&b);
    return rc;
}
