/* vkimg bench: per-op GPU times against a device-copy ceiling measured in the
 * same run. Internal (the CLI's), not part of the installed API. */
#ifndef VKI_ANALYSIS_BENCH_H
#define VKI_ANALYSIS_BENCH_H

#include "vkimg/vkimg.h"

typedef struct vki_bench_opts {
    int w, h, c;   /* default 7680x4320x3 (8K RGB) */
    vkimg_fmt fmt; /* input format, default U8 */
    int repeat;    /* timed repetitions after one warm-up, default 20 */
} vki_bench_opts;

typedef struct vki_bench_stage {
    char name[32];
    double median_ms, min_ms;
    double bytes;    /* the fewest bytes the op must move (its descriptor) */
    double gbps;     /* bytes / median time */
    double pct_copy; /* gbps / copy ceiling * 100 */
} vki_bench_stage;

typedef struct vki_bench_result {
    int w, h, c;
    vkimg_fmt fmt;
    int repeat;
    int nstages;
    vki_bench_stage stage[VKIMG_MAX_STAGES];
    double total_median_ms, total_min_ms;
    double copy_gbps, copy_bytes;   /* compute-shader copy, bytes read + written */
    double read_input_ms;           /* a read-only kernel over the input image: the time to read it once */
    double pipeline_create_ms;      /* first recording, kernels created */
    double pipeline_cached_ms;      /* the same kernels again, through the VkPipelineCache */
    /* the copies an image goes through (the run engine's upload and readback),
     * device time: 0 where there are none (device memory is host memory) */
    double staging_h2d_gbps, staging_d2h_gbps;
    double upload_gbps, readback_gbps; /* end to end: host writes/reads + copies + waits (host wall time) */
} vki_bench_result;

/* Makes a random image on the device (never zeros), runs the pipeline after a
 * warm-up `repeat` times and measures each op with timestamp queries, plus a
 * compute-shader copy ceiling, pipeline creation and transfer rates. */
int vki_bench(vkimg_ctx *ctx, const vkimg_pipeline *p, const vki_bench_opts *o, vki_bench_result *r, vkimg_err *e);

#endif
