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

static const char STATS_USAGE[] =
    "usage: vkimg stats IN [--json] [--histogram] [--device D] [--timing] [--validate]\n"
    "Per-channel min, max, sum, mean and standard deviation (population) of an\n"
    "image, computed on the GPU. For 8/16-bit images min/max/sum are exact raw\n"
    "sample values and mean/stddev are given normalized to [0,1] and in raw units.\n"
    "  --json       one JSON object (schema version 1)\n"
    "  --histogram  also 256-bin histograms per channel\n"
    "  --device D   device index, name substring, 'gpu' or 'cpu'\n"
    "  --timing     print decode, upload, GPU and readback times on stderr\n"
    "  --validate   enable the Khronos validation layer\n";

static const char *chan_name(int c, int nc)
{
    if (nc <= 2)
        return c == 0 ? "gray" : "alpha";
    return c == 0 ? "R" : c == 1 ? "G" : c == 2 ? "B" : "A";
}

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

static void print_timing(const vkimg_timing *t, const char *in)
{
    fprintf(stderr, "timing (stats %s):\n", in);
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
    fprintf(stderr, "  %-24s %9.3f ms\n", "total", t->total_ms);
}

int cmd_stats(int argc, char **argv)
{
    const char *in = NULL, *device = NULL;
    bool json = false, hist = false, timing = false, validate = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(STATS_USAGE, stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--histogram")) {
            hist = true;
        } else if (!strcmp(a, "--timing")) {
            timing = true;
        } else if (!strcmp(a, "--validate")) {
            validate = true;
        } else if (!strcmp(a, "--device")) {
            if (i + 1 >= argc)
                return cli_error(2, "stats: --device needs a value");
            device = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            return cli_error(2, "stats: unknown option '%s' (see 'vkimg stats --help')", a);
        } else if (!in) {
            in = a;
        } else {
            return cli_error(2, "stats: one input only ('%s' is extra)", a);
        }
    }
    if (!in)
        return cli_error(2, "stats: missing input image (see 'vkimg stats --help')");

    vkimg_err e = { 0 };
    vkimg_image im = { 0 };
    double t0 = vki_cli_now_ms();
    if (vkimg_load(in, NULL, &im, &e))
        return cli_error(1, "%s", e.msg);
    double decode_ms = vki_cli_now_ms() - t0;
    vkimg_ctx *ctx = vkimg_ctx_create(&(vkimg_ctx_opts){ .device = device, .validate = validate, .log = cli_log }, &e);
    int rc = 0;
    if (!ctx) {
        rc = cli_error(1, "%s", e.msg);
        goto done;
    }
    vkimg_stats *st = calloc(1, sizeof *st);
    vkimg_timing tm;
    if (!st) {
        rc = cli_error(1, "out of memory");
        goto done;
    }
    if (vkimg_image_stats(ctx, &im, hist, st, &tm, &e)) {
        rc = cli_error(e.code == VKIMG_E_USAGE ? 2 : 1, "%s", e.msg);
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
        json_str(in);
        printf(", \"width\": %d, \"height\": %d, \"channels\": %d, \"format\": \"%s\", \"bit_depth\": %d, "
               "\"pixels\": %llu, \"channels_stats\": [",
               im.w, im.h, im.c, fmt, depth, npx);
        for (int c = 0; c < im.c; c++) {
            const vkimg_channel_stats *s = &st->ch[c];
            printf("%s{\"channel\": %d, \"name\": \"%s\", ", c ? ", " : "", c, chan_name(c, im.c));
            if (isint) {
                printf("\"min\": %.0f, \"max\": %.0f, \"sum\": %llu, \"sum_squares\": %llu, ", s->min * L, s->max * L,
                       (unsigned long long)s->isum, (unsigned long long)s->isumsq);
            } else {
                fputs("\"min\": ", stdout);
                json_num(s->min);
                fputs(", \"max\": ", stdout);
                json_num(s->max);
                fputs(", \"sum\": ", stdout);
                json_num(s->sum);
                fputs(", \"sum_squares\": ", stdout);
                double m2 = s->stddev * s->stddev + s->mean * s->mean;
                json_num(m2 * (double)npx);
                fputs(", ", stdout);
            }
            fputs("\"mean\": ", stdout);
            json_num(s->mean);
            fputs(", \"stddev\": ", stdout);
            json_num(s->stddev);
            fputs(", \"mean_raw\": ", stdout);
            json_num(s->mean * L);
            fputs(", \"stddev_raw\": ", stdout);
            json_num(s->stddev * L);
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
        print_timing(&tm, in);
    }

done:
    if (ctx && vkimg_ctx_validation_messages(ctx)) {
        cli_error(1, "%d validation message(s) reported (see above)", vkimg_ctx_validation_messages(ctx));
        if (!rc)
            rc = 1;
    }
    vkimg_ctx_destroy(ctx);
    vkimg_image_free(&im);
    return rc;
}
