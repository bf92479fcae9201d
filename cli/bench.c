/* vkimg bench -f PIPELINE [--size WxH] [--channels N] [--format u8|u16|f32]
 *             [--repeat K] [--device D] [--json] [--validate] [--no-cache]
 *
 * JSON schema (version 1):
 * { "version": 1, "device": str, "width": int, "height": int, "channels": int,
 *   "format": "u8"|"u16"|"f32", "repeat": int, "pipeline": str,
 *   "copy_ceiling_gbps": num, "copy_bytes": num,
 *   "ops": [ { "name": str, "median_ms": num, "min_ms": num, "bytes": num,
 *              "gbps": num, "pct_of_copy": num } ],
 *   "total_median_ms": num, "total_min_ms": num,
 *   "context_ms": num, "pipeline_create_ms": num, "pipeline_cached_ms": num,
 *   "staging_h2d_gbps": num, "staging_d2h_gbps": num,
 *   "upload_gbps": num, "readback_gbps": num } */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char BENCH_USAGE[] =
    "usage: vkimg bench -f PIPELINE [--size WxH] [--channels N] [--format u8|u16|f32]\n"
    "                   [--repeat K] [--device D] [--json] [--validate]\n"
    "Times each op of the pipeline on a random image made on the device (default\n"
    "7680x4320, 3 channels, u8, 20 repetitions after a warm-up) with timestamp queries,\n"
    "against a compute-shader copy ceiling measured in the same run.\n";

int cmd_bench(int argc, char **argv)
{
    const char *ftext = NULL, *device = NULL;
    bool json = false, validate = false, no_cache = false;
    vkimg_bench_opts bo = { .w = 7680, .h = 4320, .c = 3, .fmt = VKIMG_U8, .repeat = 20 };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(BENCH_USAGE, stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--validate")) {
            validate = true;
        } else if (!strcmp(a, "--no-cache")) {
            no_cache = true;
        } else if (!v) {
            return cli_error(2, "bench: %s needs a value (see 'vkimg bench --help')", a);
        } else if (!strcmp(a, "-f") || !strcmp(a, "--filter")) {
            ftext = argv[++i];
        } else if (!strcmp(a, "--device")) {
            device = argv[++i];
        } else if (!strcmp(a, "--size")) {
            int w, h;
            char tail;
            if (sscanf(v, "%dx%d%c", &w, &h, &tail) != 2 || w < 1 || h < 1 || w > (1 << 20) || h > (1 << 20))
                return cli_error(2, "bench: --size '%s' is not WIDTHxHEIGHT", v);
            bo.w = w;
            bo.h = h;
            i++;
        } else if (!strcmp(a, "--channels")) {
            if (cli_parse_int(a, argv[++i], 1, 4, &x))
                return 2;
            bo.c = (int)x;
        } else if (!strcmp(a, "--repeat")) {
            if (cli_parse_int(a, argv[++i], 1, 100000, &x))
                return 2;
            bo.repeat = (int)x;
        } else if (!strcmp(a, "--format")) {
            i++;
            if (!strcmp(v, "u8"))
                bo.fmt = VKIMG_U8;
            else if (!strcmp(v, "u16"))
                bo.fmt = VKIMG_U16;
            else if (!strcmp(v, "f32"))
                bo.fmt = VKIMG_F32;
            else
                return cli_error(2, "bench: --format '%s' is not u8, u16 or f32", v);
        } else {
            return cli_error(2, "bench: unknown argument '%s' (see 'vkimg bench --help')", a);
        }
    }
    if (!ftext)
        return cli_error(2, "bench: missing -f PIPELINE");
    vkimg_err e = { 0 };
    vkimg_pipeline *p = vkimg_pipeline_parse(ftext, &e);
    if (!p)
        return cli_report_pipeline(ftext, &e);
    double t0 = vki_cli_now_ms();
    vkimg_ctx_opts co = { .device = device, .validate = validate, .no_cache = no_cache, .log = cli_log };
    vkimg_ctx *ctx = vkimg_ctx_create(&co, &e);
    double ctx_ms = vki_cli_now_ms() - t0;
    int rc = 0;
    vkimg_bench_result r;
    if (!ctx) {
        rc = cli_report(&e);
        goto done;
    }
    if ((rc = vkimg_bench(ctx, p, &bo, &r, &e))) {
        rc = cli_report(&e);
        goto done;
    }
    char desc[4096];
    vkimg_pipeline_describe(p, desc, sizeof desc);
    const char *fmt = vkimg_fmt_name(bo.fmt);
    if (json) {
        printf("{\"version\": 1, \"device\": \"%s\", \"width\": %d, \"height\": %d, \"channels\": %d, \"format\": \"%s\", "
               "\"repeat\": %d, \"pipeline\": \"%s\", \"copy_ceiling_gbps\": %.3f, \"copy_bytes\": %.0f, \"ops\": [",
               vkimg_ctx_device_desc(ctx), r.w, r.h, r.c, fmt, r.repeat, desc, r.copy_gbps, r.copy_bytes);
        for (int i = 0; i < r.nstages; i++)
            printf("%s{\"name\": \"%s\", \"median_ms\": %.6f, \"min_ms\": %.6f, \"bytes\": %.0f, \"gbps\": %.3f, "
                   "\"pct_of_copy\": %.2f}",
                   i ? ", " : "", r.stage[i].name, r.stage[i].median_ms, r.stage[i].min_ms, r.stage[i].bytes,
                   r.stage[i].gbps, r.stage[i].pct_copy);
        printf("], \"total_median_ms\": %.6f, \"total_min_ms\": %.6f, \"context_ms\": %.3f, \"pipeline_create_ms\": %.3f, "
               "\"pipeline_cached_ms\": %.3f, \"staging_h2d_gbps\": %.3f, \"staging_d2h_gbps\": %.3f, "
               "\"upload_gbps\": %.3f, \"readback_gbps\": %.3f}\n",
               r.total_median_ms, r.total_min_ms, ctx_ms, r.pipeline_create_ms, r.pipeline_cached_ms, r.staging_h2d_gbps,
               r.staging_d2h_gbps, r.upload_gbps, r.readback_gbps);
    } else {
        printf("device   %s\n", vkimg_ctx_device_desc(ctx));
        printf("image    %dx%d, %d channel(s), %s (random, made on the device); %d repetitions after a warm-up\n", r.w,
               r.h, r.c, fmt, r.repeat);
        printf("pipeline %s\n", desc);
        printf("copy ceiling (compute-shader copy, %.0f MiB read + written): %.1f GB/s\n\n", r.copy_bytes / 1048576.0,
               r.copy_gbps);
        printf("%-12s %12s %12s %12s %10s %10s\n", "op", "median ms", "min ms", "min bytes", "GB/s", "% of copy");
        for (int i = 0; i < r.nstages; i++)
            printf("%-12s %12.4f %12.4f %12.0f %10.1f %9.1f%%\n", r.stage[i].name, r.stage[i].median_ms,
                   r.stage[i].min_ms, r.stage[i].bytes, r.stage[i].gbps, r.stage[i].pct_copy);
        printf("%-12s %12.4f %12.4f\n\n", "total", r.total_median_ms, r.total_min_ms);
        printf("instance + device creation   %9.2f ms\n", ctx_ms);
        printf("pipeline creation (first)    %9.2f ms\n", r.pipeline_create_ms);
        printf("pipeline creation (cached)   %9.2f ms\n", r.pipeline_cached_ms);
        printf("staging copy host->device    %9.2f GB/s (GPU time); upload end to end   %9.2f GB/s\n", r.staging_h2d_gbps,
               r.upload_gbps);
        printf("staging copy device->host    %9.2f GB/s (GPU time); readback end to end %9.2f GB/s\n", r.staging_d2h_gbps,
               r.readback_gbps);
    }
done:
    if (ctx && vkimg_ctx_validation_messages(ctx)) {
        cli_error(1, "%d validation message(s) reported (see above)", vkimg_ctx_validation_messages(ctx));
        if (!rc)
            rc = 1;
    }
    vkimg_ctx_destroy(ctx);
    vkimg_pipeline_free(p);
    return rc;
}
