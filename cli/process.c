/* vkimg -i IN... -o OUT -f PIPELINE: one file or a whole batch.
 *
 * Inputs: several -i, each a path, a quoted glob pattern (expanded here), a
 * directory (its images; --recursive descends), @LIST (one path per line) or
 * '-' (paths on stdin). Outputs: a file (one input), a directory (DIR/ or an
 * existing directory: DIR/{name}), or a template with {dir} {name} {stem} {ext}
 * {index}; the output extension picks the format. Two inputs mapping to one
 * output is a usage error found before any work starts.
 *
 * Work: worker threads (all cores) each take the next file: decode, run on the
 * device (vkimg_run is thread-safe; at most --gpu-inflight images are on the
 * device at once, each with its own staging buffers), encode and write
 * atomically. Memory is bounded by the number of workers (--max-inflight).
 * --device all opens every GPU (vkimg_devices_all), each with its own
 * --gpu-inflight slots, and a worker runs its image on the device with the
 * most free slots. Results are the same bytes whatever the thread count or
 * the device (the same kernels).
 *
 * --json prints one JSON object per file, then {"summary": ...} (schema in
 * README). Exit: 0 all ok, 1 some file failed (or a device error), 2 usage. */
#define _GNU_SOURCE
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct job {
    char *in, *out;
    int index;                /* position in the full (unsharded) input list */
    int status;               /* 0 ok, 1 failed, -1 skipped (exists) */
    char err[sizeof(((vkimg_err *)0)->msg)];
    int w, h, c, oc;
    int device;               /* 'vkimg devices' index of the device that ran it, -1 none */
    bool no_device;           /* failed because no device could be opened (said once, at the end) */
    double decode_ms, gpu_ms, encode_ms, total_ms;
    long long bytes;
    vkimg_timing timing;
} job;

typedef struct strvec {
    char **v;
    int n, cap;
} strvec;

static int sv_push(strvec *s, const char *str)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        char **nv = realloc(s->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(str)))
        return -1;
    s->n++;
    return 0;
}

static void sv_free(strvec *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static const char *const IMAGE_EXTS[] = { "png", "jpg", "jpeg", "bmp", "tga", "psd", "gif", "hdr",
                                          "pic", "pnm", "ppm", "pgm", NULL };

static const char *ext_of(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot + 1 : "";
}

static bool is_image_name(const char *name)
{
    const char *x = ext_of(name);
    for (int i = 0; IMAGE_EXTS[i]; i++)
        if (!strcasecmp(x, IMAGE_EXTS[i]))
            return true;
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_dir(const char *dir, bool recursive, strvec *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_error(1, "%s: cannot open directory: %s", dir, strerror(errno));
    strvec names = { 0 };
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", de->d_name);
        struct stat st;
        if (stat(path, &st))
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (recursive && (rc = scan_dir(path, true, &names)))
                break;
        } else if (S_ISREG(st.st_mode) && is_image_name(de->d_name) && sv_push(&names, path)) {
            rc = cli_error(1, "out of memory");
            break;
        }
    }
    closedir(d);
    qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str);
    for (int i = 0; i < names.n && !rc; i++)
        if (sv_push(out, names.v[i]))
            rc = cli_error(1, "out of memory");
    sv_free(&names);
    return rc;
}

static int read_list(FILE *f, const char *what, strvec *out)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (!n || line[0] == '#')
            continue;
        if (sv_push(out, line)) {
            rc = cli_error(1, "out of memory");
            break;
        }
    }
    if (!rc && ferror(f))
        rc = cli_error(1, "%s: read error", what);
    free(line);
    return rc;
}

/* Expands one -i argument into paths. */
static int expand_input(const char *arg, bool recursive, strvec *out)
{
    if (!strcmp(arg, "-"))
        return read_list(stdin, "standard input", out);
    if (arg[0] == '@') {
        FILE *f = fopen(arg + 1, "r");
        if (!f)
            return cli_error(1, "%s: cannot read list: %s", arg + 1, strerror(errno));
        int rc = read_list(f, arg + 1, out);
        fclose(f);
        return rc;
    }
    struct stat st;
    if (!stat(arg, &st) && S_ISDIR(st.st_mode))
        return scan_dir(arg, recursive, out);
    if (strpbrk(arg, "*?[")) {
        glob_t g;
        int r = glob(arg, 0, NULL, &g);
        if (r == GLOB_NOMATCH)
            return cli_error(2, "-i '%s': no file matches", arg);
        if (r)
            return cli_error(1, "-i '%s': glob failed", arg);
        int rc = 0;
        for (size_t i = 0; i < g.gl_pathc && !rc; i++)
            if (sv_push(out, g.gl_pathv[i]))
                rc = cli_error(1, "out of memory");
        globfree(&g);
        return rc;
    }
    return sv_push(out, arg) ? cli_error(1, "out of memory") : 0;
}

/* Output path of input `in` (index idx) under template t. */
static int expand_template(const char *t, const char *in, int idx, char *buf, size_t n)
{
    char dir[4096], name[1024], stem[1024];
    const char *slash = strrchr(in, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - in), in);
    else
        snprintf(dir, sizeof dir, ".");
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : in);
    snprintf(stem, sizeof stem, "%s", name);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem)
        *dot = 0;
    const char *ext = ext_of(in);
    size_t at = 0;
    for (const char *p = t; *p; p++) {
        const char *rep = NULL;
        char num[32];
        size_t skip = 0;
        if (*p == '{') {
            if (!strncmp(p, "{dir}", 5))
                rep = dir, skip = 5;
            else if (!strncmp(p, "{name}", 6))
                rep = name, skip = 6;
            else if (!strncmp(p, "{stem}", 6))
                rep = stem, skip = 6;
            else if (!strncmp(p, "{ext}", 5))
                rep = ext, skip = 5;
            else if (!strncmp(p, "{index}", 7)) {
                snprintf(num, sizeof num, "%d", idx);
                rep = num, skip = 7;
            } else {
                return -1;
            }
        }
        if (rep) {
            size_t l = strlen(rep);
            if (at + l >= n)
                return -2;
            memcpy(buf + at, rep, l);
            at += l;
            p += skip - 1;
        } else {
            if (at + 1 >= n)
                return -2;
            buf[at++] = *p;
        }
    }
    buf[at] = 0;
    return 0;
}

/* Stable shard of a path: FNV-1a of its bytes, so a file's shard does not
 * depend on the order or the other files of the list. */
static unsigned shard_of(const char *path, unsigned nshards)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return (unsigned)(h % nshards);
}

/* ---------------------------------------------------------------- workers */

#define MAX_DEVICES 64

/* One device of the batch: its context and free --gpu-inflight slots. */
typedef struct batch_dev {
    vkimg_ctx *ctx;
    int index; /* in 'vkimg devices' */
    int free;
} batch_dev;

typedef struct batch {
    job *jobs;
    int njobs;
    atomic_int next;
    const vkimg_pipeline *p;
    vkimg_load_opts lo;
    vkimg_save_opts so;
    bool skip_existing, fail_fast, json, progress, timing;
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
 * has the lowest index), waiting while every slot is taken. */
static batch_dev *gpu_acquire(batch *b)
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
    pthread_mutex_unlock(&b->mu);
    return best;
}

static void gpu_release(batch *b, batch_dev *d)
{
    pthread_mutex_lock(&b->mu);
    d->free++;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static void run_job(batch *b, job *j)
{
    double t0 = vki_cli_now_ms();
    vkimg_err e = { 0 };
    vkimg_image src = { 0 }, dst = { 0 };
    struct stat st;
    if (b->skip_existing && !stat(j->out, &st)) {
        j->status = -1;
        return;
    }
    double t = vki_cli_now_ms();
    if (vkimg_load(j->in, &b->lo, &src, &e))
        goto fail;
    j->decode_ms = vki_cli_now_ms() - t;
    j->w = src.w;
    j->h = src.h;
    j->c = src.c;
    if (!wait_devices(b)) {
        j->no_device = true;
        snprintf(e.msg, sizeof e.msg, "%s", b->ctx_err);
        goto fail;
    }
    vkimg_run_opts ro = { .out_fmt = vkimg_file_fmt(vkimg_file_kind_of(j->out), src.fmt), .timing = &j->timing };
    t = vki_cli_now_ms();
    batch_dev *d = gpu_acquire(b);
    j->device = d->index;
    int rc = vkimg_run(d->ctx, b->p, &src, &ro, &dst, &e);
    gpu_release(b, d);
    j->gpu_ms = vki_cli_now_ms() - t;
    vkimg_image_free(&src);
    if (rc)
        goto fail;
    j->oc = dst.c;
    t = vki_cli_now_ms();
    if (vkimg_save(j->out, &dst, &b->so, &e))
        goto fail;
    j->encode_ms = vki_cli_now_ms() - t;
    vkimg_image_free(&dst);
    if (!stat(j->out, &st))
        j->bytes = (long long)st.st_size;
    j->total_ms = vki_cli_now_ms() - t0;
    j->timing.decode_ms = j->decode_ms;
    j->timing.encode_ms = j->encode_ms;
    j->timing.total_ms = j->total_ms;
    return;
fail:
    vkimg_image_free(&src);
    vkimg_image_free(&dst);
    j->status = 1;
    snprintf(j->err, sizeof j->err, "%s", e.msg);
    j->total_ms = vki_cli_now_ms() - t0;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static void progress_line(batch *b, bool final)
{
    int done = atomic_load(&b->done);
    double el = (vki_cli_now_ms() - b->t0) / 1e3;
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
    if (j->status == 1 && !j->no_device)
        fprintf(stderr, "vkimg: %s\n", j->err);
    if (b->json) {
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
        cli_error(0, "--device all: %d devices, using the first %d", n, MAX_DEVICES);
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
                cli_error(0, "--device all: device %d left out: %s", idx[i], e.msg);
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
    if (all && nd && cli_verbose) {
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

static void *worker(void *arg)
{
    batch *b = arg;
    for (;;) {
        if (b->fail_fast && atomic_load(&b->failed))
            break;
        int i = atomic_fetch_add(&b->next, 1);
        if (i >= b->njobs)
            break;
        job *j = &b->jobs[i];
        run_job(b, j);
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

static void print_timing(const vkimg_timing *t, const char *in, const char *out)
{
    fprintf(stderr, "timing (%s -> %s):\n", in, out);
    fprintf(stderr, "  %-22s %9.3f ms\n", "decode", t->decode_ms);
    fprintf(stderr, "  %-22s %9.3f ms\n", "upload", t->upload_ms);
    for (int i = 0; i < t->nstages; i++) {
        char label[48];
        snprintf(label, sizeof label, "op %d %s (GPU)", i + 1, t->stage[i].name);
        fprintf(stderr, "  %-22s %9.3f ms\n", label, t->stage[i].gpu_ms);
    }
    fprintf(stderr, "  %-22s %9.3f ms\n", "readback", t->readback_ms);
    fprintf(stderr, "  %-22s %9.3f ms\n", "encode", t->encode_ms);
    fprintf(stderr, "  %-22s %9.3f ms\n", "total", t->total_ms);
}

int cmd_process(int argc, char **argv)
{
    strvec ins = { 0 }, args_in = { 0 };
    const char *out = NULL, *ftext = NULL, *ffile = NULL, *device = NULL;
    bool timing = false, quiet = false, validate = false, recursive = false, json = false;
    bool skip_existing = false, fail_fast = false, no_cache = false;
    int progress = -1; /* auto: when stderr is a TTY */
    long quality = 90, level = 6, max_pixels = (long)VKIMG_DEFAULT_MAX_PIXELS, threads = 0, inflight = 0,
         gpu_inflight = 2;
    unsigned shard_k = 0, shard_n = 0;
    int rc = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VALUE()                                                                                    \
    do {                                                                                           \
        if (!v) {                                                                                  \
            rc = cli_error(2, "%s needs a value (see --help)", a);                                \
            goto done;                                                                             \
        }                                                                                          \
        i++;                                                                                       \
    } while (0)
#define INT_VALUE(lo, hi, dst)                                                                     \
    do {                                                                                           \
        VALUE();                                                                                   \
        if (cli_parse_int(a, v, lo, hi, &dst)) {                                                   \
            rc = 2;                                                                                \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)
        if (!strcmp(a, "-i") || !strcmp(a, "--input")) {
            VALUE();
            if (sv_push(&args_in, v)) {
                rc = cli_error(1, "out of memory");
                goto done;
            }
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            VALUE();
            out = v;
        } else if (!strcmp(a, "-f") || !strcmp(a, "--filter")) {
            VALUE();
            ftext = v;
        } else if (!strcmp(a, "-F") || !strcmp(a, "--filter-file")) {
            VALUE();
            ffile = v;
        } else if (!strcmp(a, "--device")) {
            VALUE();
            device = v;
        } else if (!strcmp(a, "--quality")) {
            INT_VALUE(1, 100, quality);
        } else if (!strcmp(a, "--png-level")) {
            INT_VALUE(0, 12, level);
        } else if (!strcmp(a, "--max-pixels")) {
            INT_VALUE(1, 1L << 40, max_pixels);
        } else if (!strcmp(a, "--threads")) {
            INT_VALUE(1, 1024, threads);
        } else if (!strcmp(a, "--max-inflight")) {
            INT_VALUE(1, 1024, inflight);
        } else if (!strcmp(a, "--gpu-inflight")) {
            INT_VALUE(1, 64, gpu_inflight);
        } else if (!strcmp(a, "--shard")) {
            VALUE();
            char tail;
            if (sscanf(v, "%u/%u%c", &shard_k, &shard_n, &tail) != 2 || shard_n < 1 || shard_k < 1 || shard_k > shard_n) {
                rc = cli_error(2, "--shard '%s': expected K/N with 1 <= K <= N", v);
                goto done;
            }
        } else if (!strcmp(a, "--timing")) {
            timing = true;
        } else if (!strcmp(a, "--validate")) {
            validate = true;
        } else if (!strcmp(a, "--recursive") || !strcmp(a, "-r")) {
            recursive = true;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--no-cache")) {
            no_cache = true;
        } else if (!strcmp(a, "--skip-existing")) {
            skip_existing = true;
        } else if (!strcmp(a, "--fail-fast")) {
            fail_fast = true;
        } else if (!strcmp(a, "--progress")) {
            progress = 1;
        } else if (!strcmp(a, "--no-progress")) {
            progress = 0;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            cli_verbose++;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else {
            rc = cli_error(2, "unknown argument '%s' (see --help)", a);
            goto done;
        }
#undef VALUE
#undef INT_VALUE
    }
    if (!args_in.n) {
        rc = cli_error(2, "missing -i INPUT (see --help)");
        goto done;
    }
    if (!out) {
        rc = cli_error(2, "missing -o OUTPUT (see --help)");
        goto done;
    }
    if (!ftext && !ffile) {
        rc = cli_error(2, "missing -f PIPELINE or -F FILE (see --help)");
        goto done;
    }
    if (ftext && ffile) {
        rc = cli_error(2, "give -f or -F, not both");
        goto done;
    }
    if (quiet)
        cli_verbose = 0;

    /* Everything that can fail without the GPU first: pipeline, inputs, outputs. */
    vkimg_err e = { 0 };
    char *text = NULL;
    vkimg_pipeline *p = NULL;
    job *jobs = NULL;
    int njobs = 0;
    batch b = { 0 };
    pthread_t *tids = NULL;
    int nthreads = 0;
    if (ffile && !(text = cli_read_text(ffile, &e))) {
        rc = cli_report(&e);
        goto done2;
    }
    const char *ptext = ffile ? text : ftext;
    if (!(p = vkimg_pipeline_parse(ptext, &e))) {
        rc = cli_report_pipeline(ptext, &e);
        goto done2;
    }
    for (int i = 0; i < args_in.n; i++)
        if ((rc = expand_input(args_in.v[i], recursive, &ins)))
            goto done2;
    if (!ins.n) {
        rc = cli_error(2, "no input files");
        goto done2;
    }
    /* output mapping */
    struct stat st;
    bool is_dir = out[strlen(out) - 1] == '/' || (!stat(out, &st) && S_ISDIR(st.st_mode));
    bool is_tmpl = strchr(out, '{') != NULL;
    bool single = ins.n == 1 && args_in.n == 1 && !strpbrk(args_in.v[0], "*?[") && args_in.v[0][0] != '@' &&
                  strcmp(args_in.v[0], "-") && !(!stat(args_in.v[0], &st) && S_ISDIR(st.st_mode));
    if (!is_dir && !is_tmpl && !single) {
        rc = cli_error(2, "%d inputs need -o DIR/ or an output template such as 'out/{stem}.png'", ins.n);
        goto done2;
    }
    jobs = calloc((size_t)ins.n, sizeof *jobs);
    if (!jobs) {
        rc = cli_error(1, "out of memory");
        goto done2;
    }
    for (int i = 0; i < ins.n; i++) {
        if (shard_n && shard_of(ins.v[i], shard_n) != shard_k - 1)
            continue;
        char path[4096];
        if (is_dir && !is_tmpl) {
            const char *slash = strrchr(ins.v[i], '/');
            snprintf(path, sizeof path, "%s%s%s", out, out[strlen(out) - 1] == '/' ? "" : "/", slash ? slash + 1 : ins.v[i]);
        } else if (is_tmpl) {
            int r = expand_template(out, ins.v[i], i, path, sizeof path);
            if (r) {
                rc = cli_error(2, "-o '%s': %s", out, r == -1 ? "unknown {field} (use {dir} {name} {stem} {ext} {index})"
                                                             : "output path too long");
                goto done2;
            }
        } else {
            snprintf(path, sizeof path, "%s", out);
        }
        job *j = &jobs[njobs++];
        j->in = ins.v[i];
        j->out = strdup(path);
        j->index = i;
        if (!j->out) {
            rc = cli_error(1, "out of memory");
            goto done2;
        }
    }
    /* collisions: sort a copy of the indices by output path */
    {
        int *ord = malloc((size_t)(njobs ? njobs : 1) * sizeof *ord);
        if (!ord) {
            rc = cli_error(1, "out of memory");
            goto done2;
        }
        for (int i = 0; i < njobs; i++)
            ord[i] = i;
        for (int i = 1; i < njobs; i++) { /* insertion sort on strings: fine for batches of thousands */
            int k = ord[i], m = i - 1;
            while (m >= 0 && strcmp(jobs[ord[m]].out, jobs[k].out) > 0) {
                ord[m + 1] = ord[m];
                m--;
            }
            ord[m + 1] = k;
        }
        for (int i = 1; i < njobs && !rc; i++)
            if (!strcmp(jobs[ord[i]].out, jobs[ord[i - 1]].out))
                rc = cli_error(2, "inputs '%s' and '%s' both map to output '%s'", jobs[ord[i - 1]].in, jobs[ord[i]].in,
                               jobs[ord[i]].out);
        free(ord);
        if (rc)
            goto done2;
    }
    vkimg_fmt data_fmt;
    bool data = vkimg_pipeline_data_output(p, &data_fmt);
    for (int i = 0; i < njobs; i++) {
        if (vkimg_check_output(jobs[i].out, &e)) {
            rc = cli_report(&e);
            goto done2;
        }
        if (data && vkimg_file_kind_of(jobs[i].out) != VKIMG_FILE_NPY) {
            rc = cli_error(2, "%s: the pipeline ends in data, not a picture: write it to .npy", jobs[i].out);
            goto done2;
        }
    }
    if (!njobs) {
        if (!quiet)
            fprintf(stderr, "vkimg: shard %u/%u has no inputs\n", shard_k, shard_n);
        goto done2;
    }

    /* workers */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    nthreads = (int)(threads ? threads : ncpu > 0 ? ncpu : 1);
    if (inflight && nthreads > inflight)
        nthreads = (int)inflight;
    if (nthreads > njobs)
        nthreads = njobs;
    b.jobs = jobs;
    b.njobs = njobs;
    b.p = p;
    b.lo.max_pixels = (uint64_t)max_pixels;
    b.so.quality = (int)quality;
    b.so.png_level = (int)level;
    b.skip_existing = skip_existing;
    b.fail_fast = fail_fast;
    b.json = json;
    b.progress = progress < 0 ? isatty(2) && njobs > 1 && !quiet : progress;
    for (int i = 0; i < njobs; i++)
        jobs[i].device = -1;
    b.t0 = vki_cli_now_ms();
#ifdef __GLIBC__
    /* Every image allocates the same large buffers (decoded pixels, zlib
     * output, the result, encoder rows). Above glibc's mmap threshold (at most
     * 32 MiB) each is a fresh mapping whose pages fault in one by one, and page
     * faults are costly (stb's PNG decode of a 5120x2880 photo took 210 ms
     * with fresh pages, 80 ms with reused ones, on the CI machine). Keep them
     * on the heaps for the batch; --max-inflight still bounds how many exist. */
    if (njobs > 1) {
        mallopt(M_MMAP_THRESHOLD, 1 << 30);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
#endif
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    tids = calloc((size_t)nthreads, sizeof *tids);
    if (!tids) {
        rc = cli_error(1, "out of memory");
        goto done2;
    }
    int started = 0;
    for (; started < nthreads; started++)
        if (pthread_create(&tids[started], NULL, worker, &b))
            break;
    /* the devices come up while the first images decode */
    vkimg_ctx_opts co = { .device = device, .validate = validate, .no_cache = no_cache, .log = cli_log };
    open_devices(&b, device, &co, (int)gpu_inflight);
    if (started == 0)
        worker(&b);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    if (b.progress)
        progress_line(&b, true);
    if (!b.ndevs) /* once, not for every file */
        cli_error(1, "%s", b.ctx_err);

    int nfailed = atomic_load(&b.failed), ndone = atomic_load(&b.done), nskipped = atomic_load(&b.skipped);
    double wall = (vki_cli_now_ms() - b.t0) / 1e3;
    if (timing && njobs == 1 && jobs[0].status == 0)
        print_timing(&jobs[0].timing, jobs[0].in, jobs[0].out);
    if (json)
        printf("{\"summary\": {\"version\": 1, \"files\": %d, \"ok\": %d, \"failed\": %d, \"skipped\": %d, "
               "\"not_run\": %d, \"wall_s\": %.3f, \"images_per_s\": %.3f, \"megapixels_per_s\": %.3f}}\n",
               njobs, ndone - nfailed - nskipped, nfailed, nskipped, njobs - ndone, wall,
               wall > 0 ? (ndone - nfailed - nskipped) / wall : 0,
               wall > 0 ? (double)atomic_load(&b.pixels_done) / 1e6 / wall : 0);
    else if (njobs > 1 && !quiet)
        fprintf(stderr, "vkimg: %d file(s): %d ok, %d failed, %d skipped%s in %.2f s (%.2f images/s)\n", njobs,
                ndone - nfailed - nskipped, nfailed, nskipped, njobs - ndone ? " (stopped early)" : "", wall,
                wall > 0 ? (ndone - nfailed - nskipped) / wall : 0);
    int nmsgs = 0;
    for (int i = 0; i < b.ndevs; i++)
        nmsgs += vkimg_ctx_validation_messages(b.devs[i].ctx);
    if (nmsgs) {
        cli_error(1, "%d validation message(s) reported (see above)", nmsgs);
        nfailed++;
    }
    rc = nfailed || !b.ndevs ? 1 : 0;
    for (int i = 0; i < b.ndevs; i++)
        vkimg_ctx_destroy(b.devs[i].ctx);
    pthread_mutex_destroy(&b.mu);
    pthread_cond_destroy(&b.cv);
done2:
    free(tids);
    if (jobs)
        for (int i = 0; i < njobs; i++)
            free(jobs[i].out);
    free(jobs);
    vkimg_pipeline_free(p);
    free(text);
done:
    sv_free(&ins);
    sv_free(&args_in);
    return rc;
}
