/* The batch scheduler (batch.h).
 *
 * Worker threads (all cores) each take the next file: decode, run on the device
 * (vkimg_run is thread-safe; at most gpu_inflight images are on a device at once,
 * each with its own staging buffers), encode and write atomically. Memory is
 * bounded by the number of workers (--max-inflight). --device all opens every
 * GPU (vkimg_devices_all), each with its own slots, and a worker runs its image
 * on the device with the most free slots. Results are the same bytes whatever the
 * thread count or the device (the same kernels). */
#define _GNU_SOURCE
#include "batch.h"
#include "trace.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES 64

/* One device of the batch: its context and free --gpu-inflight slots. */
typedef struct batch_dev {
    vkimg_ctx *ctx;
    int index; /* in 'vkimg devices' */
    int free;
    unsigned long long busy; /* the slots taken (bit k: slot k; --gpu-inflight <= 64) */
} batch_dev;

typedef struct batch {
    job *jobs;
    int njobs;
    atomic_int next;
    atomic_int busy; /* workers in a job: the cores left to an image's PNG or JPEG encode are ncpu - busy + 1 */
    int ncpu;
    const batch_cfg *cfg;
    bool progress;
    /* devices: created by the main thread while workers decode */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    batch_dev devs[MAX_DEVICES];
    int ndevs;      /* opened so far (workers use them at once) */
    bool ctx_ready; /* all tried; ndevs 0: none could be opened (ctx_err) */
    char ctx_err[sizeof(((vkimg_err *)0)->msg)];
    atomic_int failed, done, skipped;
    atomic_llong pixels_done;
    double t0;
    cli_trace *trace; /* --trace, else NULL */
    int *order;       /* the jobs in the order to take them (job_order), else NULL: as given */
    /* --file-timeout: what each worker is on (job index + 1, 0 none) and since when */
    _Atomic int *on_job;
    _Atomic double *on_since;
    int nworkers;
    atomic_bool finished;
    /* the first image's shape, from its decoder (job_alloc), for the main thread
     * to create the run's kernels while it decodes (prepare_kernels); under mu */
    bool prep_posted;
    vkimg_image prep_in;
    vkimg_run_opts prep_ro;
} batch;

/* Waits for a device (0: none could be opened). */
static int wait_devices(batch *b)
{
    pthread_mutex_lock(&b->mu);
    while (!b->ctx_ready && !b->ndevs)
        pthread_cond_wait(&b->cv, &b->mu);
    int n = b->ndevs;
    pthread_mutex_unlock(&b->mu);
    return n;
}

/* Takes a slot of the device with the most free ones (ties: the first, which
 * has the lowest index), waiting while every slot is taken; *slot: which. */
static batch_dev *gpu_acquire(batch *b, int *slot)
{
    batch_dev *best = NULL;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        for (int i = 0; i < b->ndevs; i++)
            if (b->devs[i].free > 0 && (!best || b->devs[i].free > best->free))
                best = &b->devs[i];
        if (best)
            break;
        pthread_cond_wait(&b->cv, &b->mu);
    }
    best->free--;
    int k = 0;
    while (best->busy >> k & 1)
        k++;
    best->busy |= 1ull << k;
    *slot = k;
    pthread_mutex_unlock(&b->mu);
    return best;
}

static void gpu_release(batch *b, batch_dev *d, int slot)
{
    pthread_mutex_lock(&b->mu);
    d->free++;
    d->busy &= ~(1ull << slot);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Takes a slot of device d, waiting while all of its slots are taken. */
static void gpu_acquire_on(batch *b, batch_dev *d, int *slot)
{
    pthread_mutex_lock(&b->mu);
    while (d->free <= 0)
        pthread_cond_wait(&b->cv, &b->mu);
    d->free--;
    int k = 0;
    while (d->busy >> k & 1)
        k++;
    d->busy |= 1ull << k;
    *slot = k;
    pthread_mutex_unlock(&b->mu);
}

/* The device an image decoded now should go to (the one with the most free
 * slots), or NULL while none is open yet. */
static batch_dev *gpu_pick(batch *b)
{
    batch_dev *best = NULL;
    pthread_mutex_lock(&b->mu);
    for (int i = 0; i < b->ndevs; i++)
        if (!best || b->devs[i].free > best->free)
            best = &b->devs[i];
    pthread_mutex_unlock(&b->mu);
    return best;
}

/* What the loader asks of a job: shrink-on-load (the pipeline's minimum input,
 * and the stored size the decoder saw, which the geometry is resolved against)
 * and where the pixels go (zero-copy: memory the device reads in place). */
typedef struct load_req {
    batch *b;
    const job *j;
    int w, h, orientation;
    int c; /* the channels the decoder asked memory for (job_alloc) */
    batch_dev *dev; /* the device whose memory the image was decoded into, else NULL */
} load_req;

static void job_min_size(void *user, int w, int h, int orientation, int *min_w, int *min_h)
{
    load_req *r = user;
    const batch_cfg *cfg = r->b->cfg;
    r->w = w;
    r->h = h;
    r->orientation = orientation;
    vkimg_pipeline_min_input(cfg->p, w, h, cfg->auto_orient ? orientation : 1, min_w, min_h);
}

static bool zero_copy(void);

/* Job j's output has no alpha (JPEG and Radiance HDR files): an image with alpha is
 * flattened onto black on the device (vkimg_run_opts.flatten), as vips and sharp
 * write one. */
static bool no_alpha(const job *j)
{
    const vkimg_file_kind k = vkimg_file_kind_of(j->out);
    return k == VKIMG_FILE_JPEG || k == VKIMG_FILE_HDR;
}

/* Job j's output keeps no alpha and the pipeline would leave an opaque alpha at
 * the maximum: the input's, if it is opaque, need not be decoded or run. */
static bool alpha_unused(const batch *b, const job *j)
{
    return no_alpha(j) && vkimg_pipeline_keeps_opaque(b->cfg->p);
}

/* The run options of job j for an input of src_fmt: what run_job gives vkimg_run_n,
 * less what only the run needs (timing, JPEG quality). */
static vkimg_run_opts job_run_opts(const batch *b, const job *j, vkimg_fmt src_fmt, int orientation, int src_w,
                                   int src_h)
{
    return (vkimg_run_opts){ .out_fmt = vkimg_file_fmt(vkimg_file_kind_of(j->out), src_fmt),
                             .orientation = b->cfg->auto_orient ? orientation : 1,
                             .src_w = src_w, .src_h = src_h, .device_output = zero_copy(),
                             .alpha_unused = alpha_unused(b, j), .flatten = no_alpha(j) };
}

static int job_alloc(void *user, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    load_req *r = user;
    batch *b = r->b;
    r->c = c;
    pthread_mutex_lock(&b->mu);
    if (!b->prep_posted) {
        b->prep_posted = true;
        b->prep_in = (vkimg_image){ .w = w, .h = h, .c = c, .fmt = fmt };
        b->prep_ro = job_run_opts(b, r->j, fmt, r->orientation ? r->orientation : 1, r->w, r->h);
        pthread_cond_broadcast(&b->cv);
    }
    pthread_mutex_unlock(&b->mu);
    if (!zero_copy())
        return 1; /* ordinary memory, copied at upload */
    batch_dev *d = gpu_pick(b);
    if (!d)
        return 1; /* no device open yet: ordinary memory, copied at upload */
    int rc = vkimg_image_alloc_device(d->ctx, im, w, h, c, fmt, e);
    if (!rc)
        r->dev = d;
    return rc;
}

/* VKIMG_ZERO_COPY=0: decode into ordinary memory and copy at upload, copy results
 * out (to measure what zero-copy saves). */
static bool zero_copy(void)
{
    const char *v = getenv("VKIMG_ZERO_COPY");
    return !v || strcmp(v, "0");
}

/* Where JPEG's stages run for an image on device d (NULL: the first device open,
 * host where none is open yet): --jpeg-stages, auto taking device on GPUs and host
 * on CPU devices (lavapipe: libjpeg-turbo is the faster there) */
static int jpeg_stages(batch *b, const batch_dev *d)
{
    if (b->cfg->jpeg_stages != JPEG_STAGES_AUTO)
        return b->cfg->jpeg_stages;
    pthread_mutex_lock(&b->mu);
    const vkimg_ctx *ctx = d ? d->ctx : b->ndevs ? b->devs[0].ctx : NULL;
    pthread_mutex_unlock(&b->mu);
    return ctx && !vkimg_ctx_is_cpu(ctx) ? JPEG_STAGES_DEVICE : JPEG_STAGES_HOST;
}

static void run_job(batch *b, job *j, int worker)
{
    double t0 = cli_now_ms();
    vkimg_err e = { 0 };
    vkimg_image src = { 0 }, one = { 0 }, *levels = NULL;
    vkimg_meta meta = { .orientation = 1 };
    int nlevels = 0;
    struct stat st;
    char *level0 = vkimg_level_path(j->out, 0);
    bool exists = !stat(level0 ? level0 : j->out, &st);
    free(level0);
    if (b->cfg->skip_existing && exists) {
        j->status = -1;
        return;
    }
    /* --jpeg-stages device: the Huffman codes too (baseline inputs, JPEG outputs),
     * unless the device could not (VKIMG_E_AGAIN: the file is loaded and run again
     * without, libjpeg's) */
    bool no_entropy = false; /* (set by VKIMG_E_AGAIN) */
again:;
    const int stages_in = jpeg_stages(b, NULL);
    const bool entropy = stages_in == JPEG_STAGES_DEVICE && !no_entropy;
    double t = cli_now_ms();
    load_req sr = { .b = b, .j = j };
    vkimg_load_opts lo = b->cfg->lo;
    lo.min_size = job_min_size;
    lo.alloc = job_alloc;
    lo.user = &sr;
    lo.jpeg_coded = stages_in != JPEG_STAGES_HOST;
    lo.jpeg_entropy = entropy;
    lo.drop_opaque_alpha = alpha_unused(b, j);
    const int tid = worker + 1;
    int rc = vkimg_load_meta(j->in, &lo, &src, &meta, &e);
    cli_trace_span(b->trace, tid, "decode", "decode", t, cli_now_ms(), j->in);
    if (rc)
        goto fail;
    j->decode_ms = cli_now_ms() - t;
    j->w = sr.w ? sr.w : src.w; /* the file's size; the decoder may have shrunk it */
    j->h = sr.h ? sr.h : src.h;
    j->dw = src.w;
    j->dh = src.h;
    j->c = src.c;
    if (lo.drop_opaque_alpha && src.fmt == VKIMG_U8 && (sr.c == 2 || sr.c == 4) && src.c == sr.c - 1) {
        j->c = sr.c; /* the file's */
        char msg[600];
        snprintf(msg, sizeof msg, "%s: its alpha is all at the maximum: decoded without it (%s keeps none)", j->in,
                 j->out);
        cli_log(NULL, VKIMG_LOG_DEBUG, msg);
    }
    if (!wait_devices(b)) {
        j->no_device = true;
        snprintf(e.msg, sizeof e.msg, "%s", b->ctx_err);
        goto fail;
    }
    vkimg_run_opts ro = job_run_opts(b, j, src.fmt, meta.orientation, sr.w, sr.h);
    ro.timing = &j->timing;
    ro.consume = &src; /* freed after the run: the result may take its memory */
    if (b->cfg->auto_orient && meta.orientation != 1) /* the pixels are upright now: the written tags say so */
        vkimg_meta_set_orientation(&meta, 1); /* (an XMP orientation beside EXIF's 1 or none is not applied: kept) */
    vkimg_save_opts so = b->cfg->so;
    so.meta = b->cfg->keep_meta ? &meta : NULL;
    int n = vkimg_pipeline_outputs(b->cfg->p, &src, &ro, &e);
    if (n < 1)
        goto fail;
    if (n > 1 && !(levels = calloc((size_t)n, sizeof *levels))) {
        snprintf(e.msg, sizeof e.msg, "out of memory");
        goto fail;
    }
    nlevels = levels ? n : 0;
    vkimg_image *dst = n > 1 ? levels : &one;
    t = cli_now_ms();
    int slot;
    batch_dev *d = sr.dev;
    if (d) /* decoded into this device's memory */
        gpu_acquire_on(b, d, &slot);
    else
        d = gpu_acquire(b, &slot);
    double t_slot = cli_now_ms();
    j->device = d->index;
    const int stages_out = jpeg_stages(b, d);
    if (vkimg_file_kind_of(j->out) == VKIMG_FILE_JPEG && stages_out != JPEG_STAGES_HOST) {
        ro.jpeg_quality = so.quality ? so.quality : VKIMG_QUALITY_DEFAULT;
        ro.jpeg_entropy = stages_out == JPEG_STAGES_DEVICE && !no_entropy;
    }
    rc = vkimg_run_n(d->ctx, b->cfg->p, &src, &ro, dst, n, &e);
    gpu_release(b, d, slot);
    j->gpu_ms = cli_now_ms() - t;
    if (rc == VKIMG_E_AGAIN && !no_entropy) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s: %s: run again, the Huffman codes on the host", j->in, e.msg);
        cli_log(NULL, VKIMG_LOG_DEBUG, msg);
        vkimg_image_free(&src);
        free(levels);
        levels = NULL;
        vkimg_meta_free(&meta);
        meta = (vkimg_meta){ .orientation = 1 };
        no_entropy = true;
        goto again;
    }
    if (b->trace) {
        char lane[48];
        const int dtid = TRACE_TID_DEVICE((int)(d - b->devs), slot);
        snprintf(lane, sizeof lane, "device %d, slot %d", d->index, slot);
        cli_trace_lane(b->trace, dtid, lane);
        if (t_slot - t > 0.01)
            cli_trace_span(b->trace, tid, "wait", "wait for a device slot", t, t_slot, j->in);
        const vkimg_timing *tm = &j->timing;
        if (!rc && tm->t_begin_ms > 0) { /* the run's phases */
            cli_trace_span(b->trace, tid, "host", "plan", tm->t_begin_ms, tm->t_planned_ms, j->in);
            cli_trace_span(b->trace, tid, "host", "buffers", tm->t_planned_ms, tm->t_buffers_ms, j->in);
            cli_trace_span(b->trace, tid, "host", "record", tm->t_buffers_ms, tm->t_submit_ms, j->in);
            cli_trace_span(b->trace, tid, "device", "on the device", tm->t_submit_ms, tm->t_done_ms, j->in);
            cli_trace_span(b->trace, tid, "host", "results", tm->t_done_ms, tm->t_end_ms, j->in);
        } else {
            cli_trace_span(b->trace, tid, "host", "run on the device", t_slot, cli_now_ms(), j->in);
        }
        if (!rc)
            cli_trace_run(b->trace, dtid, &j->timing, j->in);
    }
    vkimg_image_free(&src);
    if (rc)
        goto fail;
    j->oc = dst[0].c;
    t = cli_now_ms();
    so.threads = b->ncpu - atomic_load(&b->busy) + 1; /* the cores no other image has */
    rc = vkimg_pipeline_writes_levels(b->cfg->p) ? vkimg_save_levels(j->out, dst, n, &so, &e)
                                                 : vkimg_save(j->out, dst, &so, &e);
    cli_trace_span(b->trace, tid, "encode", "encode and write", t, cli_now_ms(), j->out);
    if (rc)
        goto fail;
    j->encode_ms = cli_now_ms() - t;
    for (int k = 0; k < n; k++) {
        char *path = vkimg_level_path(j->out, k);
        if ((path || k == 0) && !stat(path ? path : j->out, &st))
            j->bytes += (long long)st.st_size;
        free(path);
        vkimg_image_free(&dst[k]);
    }
    free(levels);
    vkimg_meta_free(&meta);
    j->total_ms = cli_now_ms() - t0;
    j->timing.decode_ms = j->decode_ms;
    j->timing.encode_ms = j->encode_ms;
    j->timing.total_ms = j->total_ms;
    return;
fail:
    vkimg_image_free(&src);
    vkimg_image_free(&one);
    for (int k = 0; k < nlevels; k++)
        vkimg_image_free(&levels[k]);
    free(levels);
    vkimg_meta_free(&meta);
    j->status = 1;
    snprintf(j->err, sizeof j->err, "%s", e.msg);
    j->total_ms = cli_now_ms() - t0;
}

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static void progress_line(batch *b, bool final)
{
    int done = atomic_load(&b->done);
    double el = (cli_now_ms() - b->t0) / 1e3;
    double mp = (double)atomic_load(&b->pixels_done) / 1e6;
    double eta = done ? el / done * (b->njobs - done) : 0;
    fprintf(stderr, "\r[%d/%d] %.1f MP/s, %d failed, ETA %.0fs   %s", done, b->njobs, el > 0 ? mp / el : 0,
            atomic_load(&b->failed), eta, final ? "\n" : "");
}

static void report_job(batch *b, const job *j)
{
    pthread_mutex_lock(&out_mu);
    if (b->progress)
        fputs("\r\033[K", stderr);
    if (j->status == 1 && !j->no_device) { /* the message names the file, or is given it */
        if (strstr(j->err, j->in) || strstr(j->err, j->out))
            fprintf(stderr, "vkimg: %s\n", j->err);
        else
            fprintf(stderr, "vkimg: %s: %s\n", j->in, j->err);
    }
    if (b->cfg->common.json) {
        printf("{\"input\": ");
        json_str(stdout, j->in);
        printf(", \"output\": ");
        json_str(stdout, j->out);
        printf(", \"status\": \"%s\"", j->status == 0 ? "ok" : j->status < 0 ? "skipped" : "error");
        if (j->status == 1) {
            printf(", \"error\": ");
            json_str(stdout, j->err);
        }
        printf(", \"width\": %d, \"height\": %d, \"channels\": %d, \"out_channels\": %d, \"bytes\": %lld, ",
               j->w, j->h, j->c, j->oc, j->bytes);
        if (j->dw != j->w || j->dh != j->h) /* shrink-on-load */
            printf("\"decoded_width\": %d, \"decoded_height\": %d, ", j->dw, j->dh);
        if (j->device >= 0)
            printf("\"device\": %d, ", j->device);
        else
            printf("\"device\": null, ");
        printf("\"decode_ms\": %.3f, \"gpu_ms\": %.3f, \"encode_ms\": %.3f, \"total_ms\": %.3f}\n", j->decode_ms,
               j->gpu_ms, j->encode_ms, j->total_ms);
        fflush(stdout);
    }
    if (b->progress)
        progress_line(b, false);
    pthread_mutex_unlock(&out_mu);
}

/* Opens the batch's device, or with --device all one context per device of
 * vkimg_devices_all(), each with `slots` images in flight, and hands each to
 * the workers as soon as it is open. Of several devices, one that can't be
 * opened is reported and left out; the batch fails only if none can be
 * (ctx_err). */
static void open_devices(batch *b, const char *device, const vkimg_ctx_opts *base, int slots)
{
    vkimg_err e = { 0 };
    bool all = device && !strcmp(device, "all");
    int idx[MAX_DEVICES], n = 1;
    if (all && (n = vkimg_devices_all(idx, MAX_DEVICES, &e)) < 0)
        snprintf(b->ctx_err, sizeof b->ctx_err, "%s", e.msg);
    if (n > MAX_DEVICES) {
        cli_error(CLI_EXIT_OK, "--device all: %d devices, using the first %d", n, MAX_DEVICES);
        n = MAX_DEVICES;
    }
    for (int i = 0; i < n; i++) {
        vkimg_ctx_opts co = *base;
        char sel[16];
        if (all) {
            snprintf(sel, sizeof sel, "%d", idx[i]);
            co.device = sel;
        }
        vkimg_ctx *ctx = vkimg_ctx_create(&co, &e);
        if (!ctx) {
            if (!b->ctx_err[0])
                snprintf(b->ctx_err, sizeof b->ctx_err, "%s", e.msg);
            if (all) {
                pthread_mutex_lock(&out_mu);
                cli_error(CLI_EXIT_OK, "--device all: device %d left out: %s", idx[i], e.msg);
                pthread_mutex_unlock(&out_mu);
            }
            continue;
        }
        pthread_mutex_lock(&b->mu);
        b->devs[b->ndevs++] = (batch_dev){ .ctx = ctx, .index = vkimg_ctx_device_index(ctx), .free = slots };
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
    }
    int nd = b->ndevs; /* only this thread changes it */
    if (all && nd && cli_verbose > 0) {
        char list[MAX_DEVICES * 4 + 1] = "";
        for (int i = 0; i < nd; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", b->devs[i].index);
        pthread_mutex_lock(&out_mu);
        fprintf(stderr, "vkimg: --device all: %d device(s) (%s), %d image(s) in flight on each\n", nd, list, slots);
        pthread_mutex_unlock(&out_mu);
    }
    pthread_mutex_lock(&b->mu);
    b->ctx_ready = true;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* The main thread, once the devices are open: the kernels of the first image's
 * run, created on the host's cores while a worker still decodes it (a CPU device
 * compiles every pipeline in each process: about 90 ms of a single blur=3 run on
 * lavapipe, one pipeline after another). The run would create them itself;
 * VKIMG_PREPARE=0 leaves it to. */
static void prepare_kernels(batch *b)
{
    const char *ev = getenv("VKIMG_PREPARE");
    if (!b->ndevs || (ev && !strcmp(ev, "0")))
        return;
    pthread_mutex_lock(&b->mu);
    /* until the first decode is under way, or a job has ended without one (a file
     * that fails to decode; --fail-fast then stops the batch) */
    while (!b->prep_posted && atomic_load(&b->done) == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 5000000; /* jobs end without signalling cv: look again */
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&b->cv, &b->mu, &ts);
    }
    bool posted = b->prep_posted;
    vkimg_image in = b->prep_in;
    vkimg_run_opts ro = b->prep_ro;
    pthread_mutex_unlock(&b->mu);
    if (!posted)
        return;
    double t = cli_now_ms();
    for (int i = 0; i < b->ndevs; i++) {
        vkimg_err e = { 0 };
        /* a failure is the run's to report (it meets the same one) */
        if (vkimg_prepare(b->devs[i].ctx, b->cfg->p, &in, &ro, &e) && cli_verbose > 0) {
            pthread_mutex_lock(&out_mu);
            fprintf(stderr, "vkimg: creating the kernels ahead: %s\n", e.msg);
            pthread_mutex_unlock(&out_mu);
        }
    }
    cli_trace_span(b->trace, TRACE_TID_MAIN, "device", "create the kernels", t, cli_now_ms(), NULL);
}

typedef struct worker_arg {
    batch *b;
    int index;
} worker_arg;

/* The order the workers take the jobs in: by input size, the largest, the
 * smallest, the second largest, the second smallest, ...: the big files start
 * early, so that the batch does not end waiting for one that started last
 * (longest processing time first), and the small ones between them keep the
 * device busy while the big ones hold the cores. On a GPU the big files of a
 * JPEG batch are progressive ones, decoded on the cores (~330 ms each on the
 * H200 machine), the others' Huffman codes on the device (a few ms of the
 * device's slots): largest first, the workers decoded the 80 progressive files
 * of 480 while the device idled, then the device slots held the rest (blur=3
 * -> JPEG 176-180 img/s; interleaved 189-192; 192 files 143-149 -> 154-163).
 * On this CI's 2-core lavapipe the photo batches are the same either way.
 * Files whose size cannot be read count as the smallest. */
static int *job_order(const job *jobs, int njobs)
{
    int *ord = malloc((size_t)njobs * sizeof *ord);
    long long *sz = malloc((size_t)njobs * sizeof *sz);
    if (!ord || !sz) {
        free(ord);
        free(sz);
        return NULL;
    }
    for (int i = 0; i < njobs; i++) {
        struct stat st;
        ord[i] = i;
        sz[i] = stat(jobs[i].in, &st) ? -1 : (long long)st.st_size;
    }
    for (int w = 1; w < njobs; w *= 2) { /* bottom-up merge sort: O(n log n), stable */
        int *tmp = malloc((size_t)njobs * sizeof *tmp);
        if (!tmp)
            break;
        for (int lo = 0; lo < njobs; lo += 2 * w) {
            int mid = lo + w < njobs ? lo + w : njobs, hi = lo + 2 * w < njobs ? lo + 2 * w : njobs;
            int a = lo, c = mid, k = lo;
            while (a < mid && c < hi)
                tmp[k++] = sz[ord[c]] > sz[ord[a]] ? ord[c++] : ord[a++];
            while (a < mid)
                tmp[k++] = ord[a++];
            while (c < hi)
                tmp[k++] = ord[c++];
        }
        memcpy(ord, tmp, (size_t)njobs * sizeof *ord);
        free(tmp);
    }
    free(sz);
    int *il = malloc((size_t)njobs * sizeof *il); /* largest, smallest, ... */
    if (il) {
        for (int k = 0; k < njobs; k++)
            il[k] = k % 2 ? ord[njobs - 1 - k / 2] : ord[k / 2];
        free(ord);
        ord = il;
    }
    return ord;
}

static void *worker(void *arg)
{
    const worker_arg *wa = arg;
    batch *b = wa->b;
    if (b->trace) {
        char name[32];
        snprintf(name, sizeof name, "worker %d", wa->index + 1);
        cli_trace_lane(b->trace, wa->index + 1, name);
    }
    for (;;) {
        if (b->cfg->fail_fast && atomic_load(&b->failed))
            break;
        int i = atomic_fetch_add(&b->next, 1);
        if (i >= b->njobs)
            break;
        if (b->order)
            i = b->order[i];
        job *j = &b->jobs[i];
        if (b->on_job) {
            atomic_store(&b->on_since[wa->index], cli_now_ms());
            atomic_store(&b->on_job[wa->index], i + 1);
        }
        atomic_fetch_add(&b->busy, 1);
        run_job(b, j, wa->index);
        atomic_fetch_sub(&b->busy, 1);
        if (b->on_job)
            atomic_store(&b->on_job[wa->index], 0);
        if (j->status == 1)
            atomic_fetch_add(&b->failed, 1);
        else if (j->status < 0)
            atomic_fetch_add(&b->skipped, 1);
        else
            atomic_fetch_add(&b->pixels_done, (long long)j->w * j->h);
        atomic_fetch_add(&b->done, 1);
        report_job(b, j);
    }
    return NULL;
}

/* --file-timeout: a file that has run longer than the limit stops the process
 * (a decoder that loops, a device that hangs): the files done are kept, the
 * writes in progress leave nothing (vkimg_remove_temp_files), exit 1. */
static void *watchdog(void *arg)
{
    batch *b = arg;
    const double limit_ms = b->cfg->file_timeout_s * 1e3;
    while (!atomic_load(&b->finished)) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        double now = cli_now_ms();
        for (int w = 0; w < b->nworkers; w++) {
            int k = atomic_load(&b->on_job[w]);
            if (k && now - atomic_load(&b->on_since[w]) > limit_ms && atomic_load(&b->on_job[w]) == k) {
                pthread_mutex_lock(&out_mu);
                fprintf(stderr, "vkimg: %s: not done after %g s (--file-timeout): stopping the run (%d of %d "
                                "file(s) done)\n",
                        b->jobs[k - 1].in, b->cfg->file_timeout_s, atomic_load(&b->done), b->njobs);
                fflush(stderr);
                fflush(stdout);
                vkimg_remove_temp_files();
                _exit(CLI_EXIT_RUNTIME);
            }
        }
    }
    return NULL;
}

int cli_batch_run(const batch_cfg *cfg, job *jobs, int njobs)
{
    batch b = { .jobs = jobs, .njobs = njobs, .cfg = cfg };
    int nthreads = cfg->threads < njobs ? cfg->threads : njobs;
    if (nthreads < 1)
        nthreads = 1;
    b.progress = cfg->progress;
    for (int i = 0; i < njobs; i++)
        jobs[i].device = -1;
    b.t0 = cli_now_ms();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    b.ncpu = ncpu > 0 ? (int)ncpu : 1;
#ifdef __GLIBC__
    /* Every image allocates the same large buffers (decoded pixels, zlib
     * output, the result, encoder rows). Above glibc's mmap threshold (at most
     * 32 MiB) each is a fresh mapping whose pages fault in one by one, and page
     * faults are costly (stb's PNG decode of a 5120x2880 photo took 210 ms
     * with fresh pages, 80 ms with reused ones, on the CI machine). Keep them
     * on the heaps for the batch; --max-inflight still bounds how many exist.
     * One arena: a worker thread's own arena is made of heaps of at most 64
     * MiB, so larger blocks were mappings of their own again, and a heap
     * whose blocks are all free is unmapped whatever the trim threshold (6
     * PNG photos -> blur=3 -> PNG: page faults 141-192k -> 103-119k, system
     * time 0.44-1.38 -> 0.24-0.33 s, wall 2.15-2.73 -> 2.05-2.25 s). */
    if (njobs > 1) {
        mallopt(M_MMAP_THRESHOLD, 1 << 30);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
        mallopt(M_ARENA_MAX, 1);
    }
#endif
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    if (njobs > nthreads)
        b.order = job_order(jobs, njobs);
    if (cfg->trace && !(b.trace = cli_trace_new(b.t0))) {
        free(b.order);
        return cli_error(CLI_EXIT_RUNTIME, "--trace: out of memory");
    }
    cli_trace_lane(b.trace, TRACE_TID_MAIN, "main");
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    worker_arg *wargs = calloc((size_t)nthreads, sizeof *wargs);
    if (!tids || !wargs) {
        free(tids);
        free(wargs);
        free(b.order);
        cli_trace_free(b.trace);
        return cli_error(CLI_EXIT_RUNTIME, "out of memory");
    }
    pthread_t wd;
    bool have_wd = false;
    if (cfg->file_timeout_s > 0) {
        b.nworkers = nthreads;
        b.on_job = calloc((size_t)nthreads, sizeof *b.on_job);
        b.on_since = calloc((size_t)nthreads, sizeof *b.on_since);
        if (!b.on_job || !b.on_since || pthread_create(&wd, NULL, watchdog, &b)) {
            free(tids);
            free(wargs);
            free((void *)b.on_job);
            free((void *)b.on_since);
            free(b.order);
            cli_trace_free(b.trace);
            return cli_error(CLI_EXIT_RUNTIME, "--file-timeout: cannot start its watchdog");
        }
        have_wd = true;
    }
    int started = 0;
    for (; started < nthreads; started++) {
        wargs[started] = (worker_arg){ &b, started };
        if (pthread_create(&tids[started], NULL, worker, &wargs[started]))
            break;
    }
    /* the devices come up while the first images decode */
    vkimg_ctx_opts co = cli_ctx_opts(&cfg->common);
    double t_open = cli_now_ms();
    open_devices(&b, cfg->common.device, &co, cfg->gpu_inflight);
    cli_trace_span(b.trace, TRACE_TID_MAIN, "device", "open the device(s)", t_open, cli_now_ms(), NULL);
    if (started > 0) /* (else this thread is the worker, below) */
        prepare_kernels(&b);
    if (started == 0) {
        wargs[0] = (worker_arg){ &b, 0 };
        worker(&wargs[0]);
    }
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    free(wargs);
    if (have_wd) {
        atomic_store(&b.finished, true);
        pthread_join(wd, NULL);
        free((void *)b.on_job);
        free((void *)b.on_since);
    }
    if (b.progress)
        progress_line(&b, true);
    if (!b.ndevs) /* once, not for every file */
        cli_error(CLI_EXIT_RUNTIME, "%s", b.ctx_err);

    int nfailed = atomic_load(&b.failed), ndone = atomic_load(&b.done), nskipped = atomic_load(&b.skipped);
    double wall = (cli_now_ms() - b.t0) / 1e3;
    if (cfg->common.timing && njobs == 1 && jobs[0].status == 0) {
        char what[8300];
        snprintf(what, sizeof what, "%s -> %s", jobs[0].in, jobs[0].out);
        cli_print_timing(&jobs[0].timing, what);
    }
    if (cfg->common.json)
        printf("{\"summary\": {\"version\": 1, \"files\": %d, \"ok\": %d, \"failed\": %d, \"skipped\": %d, "
               "\"not_run\": %d, \"wall_s\": %.3f, \"images_per_s\": %.3f, \"megapixels_per_s\": %.3f}}\n",
               njobs, ndone - nfailed - nskipped, nfailed, nskipped, njobs - ndone, wall,
               wall > 0 ? (ndone - nfailed - nskipped) / wall : 0,
               wall > 0 ? (double)atomic_load(&b.pixels_done) / 1e6 / wall : 0);
    else if (njobs > 1 && cli_verbose >= 0)
        fprintf(stderr, "vkimg: %d file(s): %d ok, %d failed, %d skipped%s in %.2f s (%.2f images/s)\n", njobs,
                ndone - nfailed - nskipped, nfailed, nskipped, njobs - ndone ? " (stopped early)" : "", wall,
                wall > 0 ? (ndone - nfailed - nskipped) / wall : 0);
    int nmsgs = 0;
    for (int i = 0; i < b.ndevs; i++)
        nmsgs += vkimg_ctx_validation_messages(b.devs[i].ctx);
    if (nmsgs) {
        cli_error(CLI_EXIT_RUNTIME, "%d validation message(s) reported (see above)", nmsgs);
        nfailed++;
    }
    double t_close = cli_now_ms();
    for (int i = 0; i < b.ndevs; i++)
        vkimg_ctx_destroy(b.devs[i].ctx);
    cli_trace_span(b.trace, TRACE_TID_MAIN, "device", "close the device(s)", t_close, cli_now_ms(), NULL);
    if (b.trace) {
        char why[1100];
        if (cli_trace_write(b.trace, cfg->trace, why, sizeof why)) {
            cli_error(CLI_EXIT_RUNTIME, "--trace: %s", why);
            nfailed++;
        }
        cli_trace_free(b.trace);
    }
    free(b.order);
    pthread_mutex_destroy(&b.mu);
    pthread_cond_destroy(&b.cv);
    return nfailed || !b.ndevs ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
}
