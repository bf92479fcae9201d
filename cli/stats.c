/* vkimg stats IN [--json] [--histogram] [--device D] [--timing] [--validate]
 *
 * Per-channel statistics computed on the device (vkimg_image_stats).
 *
 * Units (text and JSON):
 *  - u8/u16 images: min, max, sum and sum_squares are in raw sample units
 *    (0..255 or 0..65535) and exact integers; mean and stddev are normalized to
 *    [0,1] (raw / 255 or raw / 65535); mean_raw and stddev_raw are the same in
 *    raw units.
 *  - f32 images: every value is the float sample value as is (HDR may exceed
 *    1); mean_raw/stddev_raw equal mean/stddev.
 *  - stddev is the population standard deviation (divided by n, not n - 1).
 *  - histogram: 256 bins; u8 value v -> bin v, u16 -> v >> 8, float ->
 *    clamp(floor(x * 256), 0, 255).
 *
 * JSON schema (version 1), one object on stdout:
 * { "version": 1,
 *   "file": str,
 *   "width": int, "height": int, "channels": int,
 *   "format": "u8" | "u16" | "f32",
 *   "bit_depth": 8 | 16 | 32,
 *   "pixels": int,
 *   "channels_stats": [            one per channel, in file order
 *     { "channel": int,            0-based
 *       "name": str,               "gray", "alpha", "R", "G", "B" or "A"
 *       "min": num, "max": num,    raw units (integers for u8/u16)
 *       "sum": num,                exact integer for u8/u16
 *       "sum_squares": num,        exact integer for u8/u16; f32: n * (stddev^2 + mean^2)
 *       "mean": num, "stddev": num,          normalized [0,1]
 *       "mean_raw": num, "stddev_raw": num,  raw units
 *       "histogram": [256 ints]    only with --histogram
 *     } ] }
 * Non-finite values (NaN samples in float images) are written as null.
 *
 * Exit codes: 0 success, 1 runtime error (file, device, validation messages
 * with --validate), 2 usage error. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_HISTOGRAM };

static const cli_opt stats_opts[] = {
    { "--histogram", NULL, CLI_FLAG, NULL, "also 256-bin histograms per channel", .id = O_HISTOGRAM },
};

typedef struct args {
    const char *in;
    bool hist;
} args;

static int on_arg(void *user, int id, const cli_value *v)
{
    args *a = user;
    if (id == O_HISTOGRAM)
        a->hist = true;
    else if (!a->in)
        a->in = v->str;
    else
        return cli_error(CLI_EXIT_USAGE, "stats: one input only ('%s' is extra)", v->str);
    return 0;
}

static const char *chan_name(int c, int nc)
{
    if (nc <= 2)
        return c == 0 ? "gray" : "alpha";
    return c == 0 ? "R" : c == 1 ? "G" : c == 2 ? "B" : "A";
}

static int run(int argc, char **argv);

const cli_command cli_cmd_stats = {
    .name = "stats",
    .synopsis = "vkimg stats IN [options]",
    .summary = "Per-channel min, max, sum, mean and standard deviation (population) of an image, computed on the "
               "GPU. For 8/16-bit images min/max/sum are exact raw sample values and mean/stddev are given "
               "normalized to [0,1] and in raw units.",
    .opts = stats_opts,
    .nopts = (int)(sizeof stats_opts / sizeof stats_opts[0]),
    .common = true,
    .exit_text = "exit codes: 0 success, 1 runtime error (file, device, validation messages with --validate), "
                 "2 usage error",
    .run = run,
};

static int run(int argc, char **argv)
{
    args a = { 0 };
    cli_common common = { 0 };
    int prc = cli_parse(&cli_cmd_stats, argc, argv, &common, CLI_EXIT_USAGE, on_arg, &a);
    if (prc)
        return prc < 0 ? 0 : prc;
    if (!a.in)
        return cli_error(CLI_EXIT_USAGE, "stats: missing input image (see 'vkimg stats --help')");
    const char *in = a.in;
    const bool json = common.json, hist = a.hist, timing = common.timing;

    vkimg_err e = { 0 };
    vkimg_image im = { 0 };
    double t0 = cli_now_ms();
    if (vkimg_load(in, NULL, &im, &e))
        return cli_report(&e);
    double decode_ms = cli_now_ms() - t0;
    vkimg_ctx_opts co = cli_ctx_opts(&common);
    vkimg_ctx *ctx = vkimg_ctx_create(&co, &e);
    int rc = 0;
    if (!ctx) {
        rc = cli_report(&e);
        goto done;
    }
    vkimg_stats *st = calloc(1, sizeof *st);
    vkimg_timing tm;
    if (!st) {
        rc = cli_error(CLI_EXIT_RUNTIME, "out of memory");
        goto done;
    }
    if (vkimg_image_stats(ctx, &im, hist, st, &tm, &e)) {
        rc = cli_report(&e);
        free(st);
        goto done;
    }
    const bool isint = im.fmt == VKIMG_U8 || im.fmt == VKIMG_U16;
    const double L = im.fmt == VKIMG_U8 ? 255.0 : im.fmt == VKIMG_U16 ? 65535.0 : 1.0;
    const int depth = im.fmt == VKIMG_U8 ? 8 : im.fmt == VKIMG_U16 ? 16 : 32;
    const char *fmt = vkimg_fmt_name(im.fmt);
    const unsigned long long npx = (unsigned long long)im.w * (unsigned long long)im.h;
    if (json) {
        printf("{\"version\": 1, \"file\": ");
        json_str(stdout, in);
        printf(", \"width\": %d, \"height\": %d, \"channels\": %d, \"format\": \"%s\", \"bit_depth\": %d, "
               "\"pixels\": %llu, \"channels_stats\": [",
               im.w, im.h, im.c, fmt, depth, npx);
        for (int c = 0; c < im.c; c++) {
            const vkimg_channel_stats *s = &st->ch[c];
            printf("%s{\"channel\": %d, \"name\": \"%s\"", c ? ", " : "", c, chan_name(c, im.c));
            if (isint) {
                printf(", \"min\": %.0f, \"max\": %.0f, \"sum\": %llu, \"sum_squares\": %llu", s->min * L, s->max * L,
                       (unsigned long long)s->isum, (unsigned long long)s->isumsq);
            } else {
                json_field(stdout, "min", s->min);
                json_field(stdout, "max", s->max);
                json_field(stdout, "sum", s->sum);
                double m2 = s->stddev * s->stddev + s->mean * s->mean;
                json_field(stdout, "sum_squares", m2 * (double)npx);
            }
            json_field(stdout, "mean", s->mean);
            json_field(stdout, "stddev", s->stddev);
            json_field(stdout, "mean_raw", s->mean * L);
            json_field(stdout, "stddev_raw", s->stddev * L);
            if (hist) {
                fputs(", \"histogram\": [", stdout);
                for (int b = 0; b < 256; b++)
                    printf("%s%llu", b ? ", " : "", (unsigned long long)s->hist[b]);
                putchar(']');
            }
            putchar('}');
        }
        printf("]}\n");
    } else {
        printf("file      %s\n", in);
        printf("size      %d x %d, %d channel%s, %d-bit%s (%s), %llu pixels\n", im.w, im.h, im.c, im.c > 1 ? "s" : "",
               depth, isint ? "" : " float", fmt, npx);
        if (isint) {
            printf("units     min, max, sum: raw %d-bit sample values (0..%.0f), exact; mean, stddev: normalized to\n"
                   "          [0,1] (raw / %.0f) and in raw units; stddev: population standard deviation\n",
                   depth, L, L);
            printf("%-8s %7s %7s %22s %12s %12s %14s %14s\n", "channel", "min", "max", "sum (raw)", "mean", "stddev",
                   "mean (raw)", "stddev (raw)");
            for (int c = 0; c < im.c; c++) {
                const vkimg_channel_stats *s = &st->ch[c];
                printf("%-8s %7.0f %7.0f %22llu %12.8f %12.8f %14.6f %14.6f\n", chan_name(c, im.c), s->min * L,
                       s->max * L, (unsigned long long)s->isum, s->mean, s->stddev, s->mean * L, s->stddev * L);
            }
        } else {
            printf("units     sample values as stored (float); stddev: population standard deviation\n");
            printf("%-8s %14s %14s %18s %14s %14s\n", "channel", "min", "max", "sum", "mean", "stddev");
            for (int c = 0; c < im.c; c++) {
                const vkimg_channel_stats *s = &st->ch[c];
                printf("%-8s %14.8g %14.8g %18.10g %14.8g %14.8g\n", chan_name(c, im.c), s->min, s->max, s->sum,
                       s->mean, s->stddev);
            }
        }
        if (hist) {
            printf("histogram 256 bins per channel (%s), 16 per line, first bin of the line in [ ]\n",
                   im.fmt == VKIMG_U8 ? "value v -> bin v" : im.fmt == VKIMG_U16 ? "value v -> bin v >> 8"
                                                                                 : "x -> clamp(floor(x * 256), 0, 255)");
            for (int c = 0; c < im.c; c++) {
                printf("%s:\n", chan_name(c, im.c));
                for (int b = 0; b < 256; b += 16) {
                    printf("  [%3d]", b);
                    for (int k = 0; k < 16; k++)
                        printf(" %llu", (unsigned long long)st->ch[c].hist[b + k]);
                    putchar('\n');
                }
            }
        }
    }
    fflush(stdout);
    free(st);
    if (timing) {
        tm.decode_ms = decode_ms;
        tm.total_ms += decode_ms;
        char what[4200];
        snprintf(what, sizeof what, "stats %s", in);
        cli_print_timing(&tm, what);
    }

done:
    if (ctx && vkimg_ctx_validation_messages(ctx)) {
        cli_error(CLI_EXIT_RUNTIME, "%d validation message(s) reported (see above)", vkimg_ctx_validation_messages(ctx));
        if (!rc)
            rc = CLI_EXIT_RUNTIME;
    }
    vkimg_ctx_destroy(ctx);
    vkimg_image_free(&im);
    return rc;
}
