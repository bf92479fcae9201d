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

enum { O_FAIL, O_FAILPERCENT, O_HARDFAIL, O_WARN, O_WARNPERCENT, O_HARDWARN, O_SSIM, O_DIFF, O_DIFF_ON_FAIL, O_SCALE };

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
    { "--diff", NULL, CLI_STR, "PATH", "write |A-B| * K as an 8-bit image (per channel, clamped)", .id = O_DIFF },
    { "--diff-on-fail", NULL, CLI_FLAG, NULL, "write it only when the verdict is FAILURE", .id = O_DIFF_ON_FAIL },
    { "--scale", NULL, CLI_NUM, "K", "scale of the difference image (default 1)", .dlo = 0, .dhi = 1e30,
      .id = O_SCALE },
};

typedef struct args {
    const char *pa, *pb, *diff_path;
    bool diff_on_fail;
    vkimg_compare_opts o;
} args;

static int on_arg(void *user, int id, const cli_value *v)
{
    args *a = user;
    switch (id) {
    case O_FAIL: a->o.fail = v->d; break;
    case O_FAILPERCENT: a->o.failpercent = v->d; break;
    case O_HARDFAIL: a->o.hardfail = v->d; break;
    case O_WARN: a->o.warn = v->d; break;
    case O_WARNPERCENT: a->o.warnpercent = v->d; break;
    case O_HARDWARN: a->o.hardwarn = v->d; break;
    case O_SSIM: a->o.ssim = true; break;
    case O_DIFF: a->diff_path = v->str; break;
    case O_DIFF_ON_FAIL: a->diff_on_fail = true; break;
    case O_SCALE: a->o.diff_scale = v->d; break;
    case CLI_POSITIONAL:
        if (!a->pa)
            a->pa = v->str;
        else if (!a->pb)
            a->pb = v->str;
        else
            return cli_error(CLI_CMP_ERROR, "compare: two images only ('%s' is extra)", v->str);
        break;
    }
    return 0;
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

static int run(int argc, char **argv);

const cli_command cli_cmd_compare = {
    .name = "compare",
    .synopsis = "vkimg compare A B [options]",
    .summary = "Compares two images on the GPU (idiff-style): mean, RMS and peak SNR of the per-sample error on "
               "values normalized to [0,1], the largest error and where, pixels over the fail/warn thresholds, "
               "optional SSIM, and a verdict.",
    .opts = compare_opts,
    .nopts = (int)(sizeof compare_opts / sizeof compare_opts[0]),
    .common = true,
    .exit_text = "exit codes: 0 PASS, 1 WARNING, 2 FAILURE, 3 size/channel mismatch, 4 error (file, usage, device)",
    .run = run,
};

/* The arguments into *a and *common, checked as far as that needs no file: 0, -1
 * after --help, or the exit code of the error (reported). */
static int parse_args(int argc, char **argv, args *a, cli_common *common)
{
    int rc = cli_parse(&cli_cmd_compare, argc, argv, common, CLI_CMP_ERROR, on_arg, a);
    if (rc)
        return rc;
    if (!a->pb)
        return cli_error(CLI_CMP_ERROR, "compare: needs two images (see 'vkimg compare --help')");
    if (a->diff_on_fail && !a->diff_path)
        return cli_error(CLI_CMP_ERROR, "compare: --diff-on-fail needs --diff PATH");
    return 0;
}

int cli_compare_parse(int argc, char **argv)
{
    args a = { .o = VKIMG_COMPARE_DEFAULTS };
    cli_common common = { 0 };
    return parse_args(argc, argv, &a, &common);
}

static int run(int argc, char **argv)
{
    args args_ = { .o = VKIMG_COMPARE_DEFAULTS };
    cli_common common = { 0 };
    int prc = parse_args(argc, argv, &args_, &common);
    if (prc)
        return prc < 0 ? 0 : prc;
    const char *pa = args_.pa, *pb = args_.pb, *diff_path = args_.diff_path;
    const bool json = common.json, timing = common.timing, diff_on_fail = args_.diff_on_fail;
    vkimg_compare_opts o = args_.o;
    vkimg_err e = { 0 };
    if (diff_path && vkimg_check_output(diff_path, &e))
        return cli_error(CLI_CMP_ERROR, "compare: --diff: %s", e.msg);
    o.want_diff = diff_path != NULL;

    vkimg_image a = { 0 }, b = { 0 };
    vkimg_ctx *ctx = NULL;
    vkimg_compare_result r = { 0 };
    vkimg_timing tm = { 0 };
    int rc = CLI_CMP_ERROR;
    double t0 = cli_now_ms();
    if (vkimg_load(pa, NULL, &a, &e) || vkimg_load(pb, NULL, &b, &e)) {
        cli_error(CLI_CMP_ERROR, "%s", e.msg);
        goto done;
    }
    double decode_ms = cli_now_ms() - t0;
    if (a.w != b.w || a.h != b.h || a.c != b.c) {
        char msg[1024 + 64];
        snprintf(msg, sizeof msg,
                 "compare: the images differ in size or channels, not compared: %s is %dx%d with %d channel(s), %s is "
                 "%dx%d with %d channel(s)",
                 pa, a.w, a.h, a.c, pb, b.w, b.h, b.c);
        if (json) {
            printf("{\"version\": 1, \"a\": ");
            json_str(stdout, pa);
            printf(", \"b\": ");
            json_str(stdout, pb);
            printf(", \"verdict\": \"MISMATCH\", \"exit_code\": 3, \"size_a\": [%d, %d, %d], \"size_b\": [%d, %d, %d], "
                   "\"error\": ",
                   a.w, a.h, a.c, b.w, b.h, b.c);
            json_str(stdout, msg);
            printf("}\n");
        }
        rc = cli_error(CLI_CMP_MISMATCH, "%s", msg);
        goto done;
    }
    vkimg_ctx_opts co = cli_ctx_opts(&common);
    ctx = vkimg_ctx_create(&co, &e);
    if (!ctx) {
        cli_error(CLI_CMP_ERROR, "%s", e.msg);
        goto done;
    }
    if (vkimg_compare(ctx, &a, &b, &o, &r, &tm, &e)) {
        rc = cli_error(r.verdict == VKIMG_CMP_MISMATCH ? CLI_CMP_MISMATCH : CLI_CMP_ERROR, "%s", e.msg);
        goto done;
    }
    int verdict = r.verdict == VKIMG_CMP_FAIL ? CLI_CMP_FAIL : r.verdict == VKIMG_CMP_WARN ? CLI_CMP_WARN : CLI_CMP_PASS;
    const char *vword = verdict == CLI_CMP_FAIL ? "FAILURE" : verdict == CLI_CMP_WARN ? "WARNING" : "PASS";
    bool write_diff = diff_path && (!diff_on_fail || verdict == CLI_CMP_FAIL);
    double t1 = cli_now_ms();
    if (write_diff && save_diff(diff_path, &r.diff, &e)) {
        cli_error(CLI_CMP_ERROR, "compare: --diff: %s", e.msg);
        goto done;
    }
    tm.encode_ms = cli_now_ms() - t1;

    static const char *const cname4[] = { "R", "G", "B", "A" };
    char where[64];
    snprintf(where, sizeof where, "(%d, %d, %s)", r.max_x, r.max_y,
             a.c <= 2 ? (r.max_c == 0 ? "gray" : "alpha") : cname4[r.max_c]);
    if (json) {
        printf("{\"version\": 1, \"a\": ");
        json_str(stdout, pa);
        printf(", \"b\": ");
        json_str(stdout, pb);
        printf(", \"width\": %d, \"height\": %d, \"channels\": %d, \"format_a\": \"%s\", \"format_b\": \"%s\", "
               "\"pixels\": %llu, \"mae\": ",
               a.w, a.h, a.c, vkimg_fmt_name(a.fmt), vkimg_fmt_name(b.fmt), (unsigned long long)r.pixels);
        json_num(stdout, r.mae);
        printf(", \"rmse\": ");
        json_num(stdout, r.rmse);
        printf(", \"psnr\": ");
        json_num(stdout, r.psnr);
        printf(", \"max_error\": ");
        json_num(stdout, r.max_err);
        printf(", \"max_x\": %d, \"max_y\": %d, \"max_channel\": %d, \"fail\": ", r.max_x, r.max_y, r.max_c);
        json_num(stdout, o.fail);
        printf(", \"failpercent\": ");
        json_num(stdout, o.failpercent);
        printf(", \"hardfail\": ");
        json_num(stdout, o.hardfail);
        printf(", \"warn\": ");
        json_num(stdout, o.warn);
        printf(", \"warnpercent\": ");
        json_num(stdout, o.warnpercent);
        printf(", \"hardwarn\": ");
        json_num(stdout, o.hardwarn);
        printf(", \"nfail\": %llu, \"pct_fail\": ", (unsigned long long)r.nfail);
        json_num(stdout, r.pct_fail);
        printf(", \"nwarn\": %llu, \"pct_warn\": ", (unsigned long long)r.nwarn);
        json_num(stdout, r.pct_warn);
        printf(", \"ssim\": ");
        json_num(stdout, r.ssim);
        printf(", \"verdict\": \"%s\", \"exit_code\": %d, \"diff\": ", vword, verdict);
        if (write_diff)
            json_str(stdout, diff_path);
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
        char what[8300];
        snprintf(what, sizeof what, "compare %s %s", pa, pb);
        cli_print_timing(&tm, what);
    }

done:
    if (ctx && vkimg_ctx_validation_messages(ctx)) {
        cli_error(CLI_CMP_ERROR, "%d validation message(s) reported (see above)", vkimg_ctx_validation_messages(ctx));
        rc = CLI_CMP_ERROR;
    }
    vkimg_image_free(&r.diff);
    vkimg_ctx_destroy(ctx);
    vkimg_image_free(&a);
    vkimg_image_free(&b);
    return rc;
}
