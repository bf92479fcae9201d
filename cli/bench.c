/* vkimg bench -f PIPELINE [--size WxH] [--channels N] [--format u8|u16|f32]
 *             [--repeat K] [--device D] [--json] [--validate] [--no-cache]
 *
 * JSON schema (version 1):
 * { "version": 1, "device": str, "width": int, "height": int, "channels": int,
 *   "format": "u8"|"u16"|"f32", "repeat": int, "pipeline": str,
 *   "copy_ceiling_gbps": num, "copy_bytes": num, "read_input_ms": num,
 *   "ops": [ { "name": str, "median_ms": num, "min_ms": num, "bytes": num,
 *              "gbps": num, "pct_of_copy": num } ],
 *   "total_median_ms": num, "total_min_ms": num,
 *   "context_ms": num, "pipeline_create_ms": num, "pipeline_cached_ms": num,
 *   "staging_h2d_gbps": num | null, "staging_d2h_gbps": num | null,   null: no copies
 *   "upload_gbps": num, "readback_gbps": num } */
#include "cli.h"
#include "analysis/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_FILTER, O_SIZE, O_CHANNELS, O_FORMAT, O_REPEAT };

static const cli_opt bench_opts[] = {
    { "--filter", "-f", CLI_STR, "PIPELINE", "the pipeline to time", .id = O_FILTER },
    { "--size", NULL, CLI_STR, "WxH", "image size (default 7680x4320)", .id = O_SIZE },
    { "--channels", NULL, CLI_INT, "N", "channels 1..4 (default 3)", 1, 4, .id = O_CHANNELS },
    { "--format", NULL, CLI_STR, "u8|u16|f32", "sample format (default u8)", .id = O_FORMAT },
    { "--repeat", NULL, CLI_INT, "K", "timed repetitions after a warm-up (default 20)", 1, 100000, .id = O_REPEAT },
};

typedef struct args {
    const char *ftext;
    vki_bench_opts bo;
} args;

static int on_arg(void *user, int id, const cli_value *v)
{
    args *a = user;
    switch (id) {
    case O_FILTER: a->ftext = v->str; break;
    case O_SIZE: {
        int w, h;
        char tail;
        if (sscanf(v->str, "%dx%d%c", &w, &h, &tail) != 2 || w < 1 || h < 1 || w > (1 << 20) || h > (1 << 20))
            return cli_error(CLI_EXIT_USAGE, "bench: --size '%s' is not WIDTHxHEIGHT", v->str);
        a->bo.w = w;
        a->bo.h = h;
        break;
    }
    case O_CHANNELS: a->bo.c = (int)v->i; break;
    case O_REPEAT: a->bo.repeat = (int)v->i; break;
    case O_FORMAT:
        if (!strcmp(v->str, "u8"))
            a->bo.fmt = VKIMG_U8;
        else if (!strcmp(v->str, "u16"))
            a->bo.fmt = VKIMG_U16;
        else if (!strcmp(v->str, "f32"))
            a->bo.fmt = VKIMG_F32;
        else
            return cli_error(CLI_EXIT_USAGE, "bench: --format '%s' is not u8, u16 or f32", v->str);
        break;
    case CLI_POSITIONAL:
        return cli_error(CLI_EXIT_USAGE, "bench: unknown argument '%s' (see 'vkimg bench --help')", v->str);
    }
    return 0;
}

static int run(int argc, char **argv);

const cli_command cli_cmd_bench = {
    .name = "bench",
    .synopsis = "vkimg bench -f PIPELINE [options]",
    .summary = "Times each op of the pipeline on a random image made on the device (default 7680x4320, 3 "
               "channels, u8, 20 repetitions after a warm-up) with timestamp queries, against a compute-shader "
               "copy ceiling measured in the same run.",
    .opts = bench_opts,
    .nopts = (int)(sizeof bench_opts / sizeof bench_opts[0]),
    .common = true,
    .exit_text = "exit codes: 0 success, 1 runtime error (device, validation messages), 2 usage error",
    .run = run,
};

static int run(int argc, char **argv)
{
    args a = { .bo = { .w = 7680, .h = 4320, .c = 3, .fmt = VKIMG_U8, .repeat = 20 } };
    cli_common common = { 0 };
    int prc = cli_parse(&cli_cmd_bench, argc, argv, &common, CLI_EXIT_USAGE, on_arg, &a);
    if (prc)
        return prc < 0 ? 0 : prc;
    const char *ftext = a.ftext;
    const bool json = common.json;
    vki_bench_opts bo = a.bo;
    if (!ftext)
        return cli_error(CLI_EXIT_USAGE, "bench: missing -f PIPELINE");
    vkimg_err e = { 0 };
    vkimg_pipeline *p = vkimg_pipeline_parse(ftext, &e);
    if (!p)
        return cli_report_pipeline(ftext, &e);
    double t0 = cli_now_ms();
    vkimg_ctx_opts co = cli_ctx_opts(&common);
    vkimg_ctx *ctx = vkimg_ctx_create(&co, &e);
    double ctx_ms = cli_now_ms() - t0;
    int rc = 0;
    vki_bench_result r;
    if (!ctx) {
        rc = cli_report(&e);
        goto done;
    }
    if ((rc = vki_bench(ctx, p, &bo, &r, &e))) {
        rc = cli_report(&e);
        goto done;
    }
    char desc[4096];
    vkimg_pipeline_describe(p, desc, sizeof desc);
    const char *fmt = vkimg_fmt_name(bo.fmt);
    if (json) {
        printf("{\"version\": 1, \"device\": ");
        json_str(stdout, vkimg_ctx_device_desc(ctx));
        printf(", \"width\": %d, \"height\": %d, \"channels\": %d, \"format\": \"%s\", \"repeat\": %d, \"pipeline\": ",
               r.w, r.h, r.c, fmt, r.repeat);
        json_str(stdout, desc);
        printf(", \"copy_ceiling_gbps\": %.3f, \"copy_bytes\": %.0f, \"read_input_ms\": %.6f, \"ops\": [", r.copy_gbps,
               r.copy_bytes, r.read_input_ms);
        for (int i = 0; i < r.nstages; i++)
            printf("%s{\"name\": \"%s\", \"median_ms\": %.6f, \"min_ms\": %.6f, \"bytes\": %.0f, \"gbps\": %.3f, "
                   "\"pct_of_copy\": %.2f}",
                   i ? ", " : "", r.stage[i].name, r.stage[i].median_ms, r.stage[i].min_ms, r.stage[i].bytes,
                   r.stage[i].gbps, r.stage[i].pct_copy);
        printf("], \"total_median_ms\": %.6f, \"total_min_ms\": %.6f, \"context_ms\": %.3f, \"pipeline_create_ms\": %.3f, "
               "\"pipeline_cached_ms\": %.3f, \"staging_h2d_gbps\": ",
               r.total_median_ms, r.total_min_ms, ctx_ms, r.pipeline_create_ms, r.pipeline_cached_ms);
        /* null: no copies (device memory is host memory) */
        json_num(stdout, r.staging_h2d_gbps > 0 ? r.staging_h2d_gbps : NAN);
        printf(", \"staging_d2h_gbps\": ");
        json_num(stdout, r.staging_d2h_gbps > 0 ? r.staging_d2h_gbps : NAN);
        printf(", \"upload_gbps\": %.3f, \"readback_gbps\": %.3f}\n", r.upload_gbps, r.readback_gbps);
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
        printf("%-12s %12.4f %12.4f\n", "total", r.total_median_ms, r.total_min_ms);
        printf("reading the input once (read-only kernel): %.4f ms; the total is %.2fx that\n\n", r.read_input_ms,
               r.read_input_ms > 0 ? r.total_median_ms / r.read_input_ms : 0.0);
        printf("instance + device creation   %9.2f ms\n", ctx_ms);
        printf("pipeline creation (first)    %9.2f ms\n", r.pipeline_create_ms);
        printf("pipeline creation (cached)   %9.2f ms\n", r.pipeline_cached_ms);
        if (r.staging_h2d_gbps > 0) {
            printf("staging copy host->device    %9.2f GB/s (GPU time); upload end to end   %9.2f GB/s\n",
                   r.staging_h2d_gbps, r.upload_gbps);
            printf("staging copy device->host    %9.2f GB/s (GPU time); readback end to end %9.2f GB/s\n",
                   r.staging_d2h_gbps, r.readback_gbps);
        } else {
            printf("no staging copies (device memory is host memory): upload end to end %.2f GB/s, readback "
                   "end to end %.2f GB/s\n", r.upload_gbps, r.readback_gbps);
        }
    }
done:
    if (ctx && vkimg_ctx_validation_messages(ctx)) {
        cli_error(CLI_EXIT_RUNTIME, "%d validation message(s) reported (see above)", vkimg_ctx_validation_messages(ctx));
        if (!rc)
            rc = CLI_EXIT_RUNTIME;
    }
    vkimg_ctx_destroy(ctx);
    vkimg_pipeline_free(p);
    return rc;
}
