/* The batch scheduler: worker threads on all cores decode, run on the device
 * (at most gpu_inflight images per device at once) and encode; devices open
 * while the first images decode; per-file reports, JSON lines and a summary. */
#ifndef VKIMG_CLI_BATCH_H
#define VKIMG_CLI_BATCH_H

#include "cli.h"

typedef struct job {
    char *in, *out;
    int index;                /* position in the full (unsharded) input list */
    int status;               /* 0 ok, 1 failed, -1 skipped (exists) */
    char err[sizeof(((vkimg_err *)0)->msg)];
    int w, h, c, oc;          /* the input file's size, channels; the output's channels */
    int dw, dh;               /* the size decoded (smaller with shrink-on-load) */
    int device;               /* 'vkimg devices' index of the device that ran it, -1 none */
    bool no_device;           /* failed because no device could be opened (said once, at the end) */
    double decode_ms, gpu_ms, encode_ms, total_ms;
    long long bytes;
    vkimg_timing timing;
} job;

typedef struct batch_cfg {
    const vkimg_pipeline *p;
    vkimg_load_opts lo;
    vkimg_save_opts so;
    cli_common common;
    bool skip_existing, fail_fast, progress;
    bool auto_orient; /* apply the EXIF orientation on load (the written tag then says 1) */
    bool keep_meta;   /* write the input's ICC profile and EXIF into PNG, JPEG and WebP outputs (TIFF: the profile) */
    int threads;      /* decode/encode workers */
    int gpu_inflight; /* images on a device at once */
    const char *trace; /* --trace FILE: a timeline of the batch (trace.h); NULL: none */
    double file_timeout_s; /* --file-timeout: the run stops when a file takes longer; 0: no limit */
    int jpeg_stages;  /* --jpeg-stages: JPEG_STAGES_* */
} batch_cfg;

/* Where JPEG's transform stages run (IDCT, upsampling and colour conversion of a
 * JPEG input; colour conversion, subsampling, DCT and quantization of a JPEG
 * output): on the host (libjpeg-turbo does all; the default), or on the device
 * (libjpeg-turbo does the entropy coding only). The same pixels and files either
 * way; on the H100 machine the device's stages take less of each worker's time
 * but hold a device slot longer (docs/performance.md), so the host stays the
 * default until that is the faster batch. */
enum { JPEG_STAGES_AUTO = 0, JPEG_STAGES_HOST, JPEG_STAGES_TRANSFORMS, JPEG_STAGES_DEVICE };

/* Runs the jobs; fills their results, prints per-file errors, JSON lines and
 * the summary (or the --timing of a single image). Returns the exit code. */
int cli_batch_run(const batch_cfg *cfg, job *jobs, int njobs);

#endif
