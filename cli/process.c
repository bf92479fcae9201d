/* vkimg -i IN... -o OUT -f PIPELINE: one file or a whole batch.
 *
 * Inputs: several -i, each a path, a quoted glob pattern (expanded here), a
 * directory (its images; --recursive descends), @LIST (one path per line) or
 * '-' (paths on stdin). Outputs: a file (one input), a directory (DIR/ or an
 * existing directory: DIR/{name}, or DIR/{stem}.png for a format vkimg does not
 * write: GIF, PSD, PNM), or a template with {dir} {name} {stem} {ext}
 * {index}; the output extension picks the format. Everything that can fail
 * without the GPU (arguments, pipeline, inputs, output paths, collisions) is
 * checked before any work starts; then the batch scheduler runs (batch.c). */
#include "batch.h"
#include "inputs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    O_INPUT, O_OUTPUT, O_FILTER, O_FILTER_FILE, O_QUALITY, O_PNG_LEVEL, O_MAX_PIXELS, O_RECURSIVE, O_THREADS,
    O_MAX_INFLIGHT, O_GPU_INFLIGHT, O_SKIP_EXISTING, O_FAIL_FAST, O_PROGRESS, O_NO_PROGRESS, O_SHARD, O_NO_AUTO_ORIENT, O_JPEG_STAGES,
    O_STRIP, O_TRACE, O_FILE_TIMEOUT, O_LOSSLESS, O_TIFF_COMPRESSION,
};

#define MAX_PIPELINE_FILE (1u << 20) /* bytes of a -F file */

static const cli_opt process_opts[] = {
    { "--input", "-i", CLI_STR, "IN",
      "input image (PNG, JPEG, WebP, TIFF, GIF, BMP, TGA, PSD, HDR, PNM), a quoted glob, a directory, @LIST or '-' "
      "(paths on stdin); may be given several times",
      .id = O_INPUT },
    { "--output", "-o", CLI_STR, "OUT",
      "output image (the extension picks the format: .png .jpg .webp .tif .bmp .tga .hdr .npy .ktx2; may equal the input), "
      "or for several inputs a directory DIR/ or a template such as 'out/{stem}_small.{ext}' "
      "({dir} {name} {stem} {ext} {index})",
      .id = O_OUTPUT },
    { "--filter", "-f", CLI_STR, "PIPELINE",
      "the pipeline: ops separated by ',', options op=key=value:... (none: copy, a format conversion)",
      .id = O_FILTER },
    { "--filter-file", "-F", CLI_STR, "FILE", "read the pipeline from a file ('#' starts a comment)",
      .id = O_FILTER_FILE },
    { "--quality", NULL, CLI_INT, "N", "JPEG and WebP quality 1..100 (default 90)", VKIMG_QUALITY_MIN,
      VKIMG_QUALITY_MAX, .id = O_QUALITY },
    { "--lossless", NULL, CLI_FLAG, NULL, "WebP: lossless (the same pixels back) instead of lossy at --quality",
      .id = O_LOSSLESS },
    { "--tiff-compression", NULL, CLI_STR, "METHOD",
      "TIFF outputs: deflate (default: Deflate with a predictor, lossless) or none (the samples as they are)",
      .id = O_TIFF_COMPRESSION },
    { "--png-level", NULL, CLI_INT, "N", "PNG compression level 0..12 (default 3)", VKIMG_PNG_LEVEL_MIN,
      VKIMG_PNG_LEVEL_MAX, .id = O_PNG_LEVEL },
    { "--max-pixels", NULL, CLI_INT, "N", "refuse inputs with more pixels (default 268435456)", 1, 1L << 40,
      .id = O_MAX_PIXELS },
    { "--recursive", "-r", CLI_FLAG, NULL, "descend into input directories", .id = O_RECURSIVE },
    { "--threads", NULL, CLI_INT, "N", "decode/encode threads (default: all cores)", 1, 1024, .id = O_THREADS },
    { "--max-inflight", NULL, CLI_INT, "N", "images in memory at once (default: threads)", 1, 1024,
      .id = O_MAX_INFLIGHT },
    { "--gpu-inflight", NULL, CLI_INT, "N", "images on a device at once (default 2)", 1, 64, .id = O_GPU_INFLIGHT },
    { "--skip-existing", NULL, CLI_FLAG, NULL, "leave outputs that exist alone", .id = O_SKIP_EXISTING },
    { "--fail-fast", NULL, CLI_FLAG, NULL, "stop at the first failed file", .id = O_FAIL_FAST },
    { "--progress", NULL, CLI_FLAG, NULL, "progress line on stderr (default: when it is a terminal)",
      .id = O_PROGRESS },
    { "--no-progress", NULL, CLI_FLAG, NULL, "no progress line", .id = O_NO_PROGRESS },
    { "--shard", NULL, CLI_STR, "K/N", "process the K-th of N stable shards of the inputs (FNV-1a of the path)",
      .id = O_SHARD },
    { "--no-auto-orient", NULL, CLI_FLAG, NULL,
      "keep the stored pixels: don't apply the EXIF orientation (by default it is applied on load and the written "
      "tag says 1)", .id = O_NO_AUTO_ORIENT },
    { "--strip", NULL, CLI_FLAG, NULL, "write no ICC profile, EXIF, XMP or IPTC (by default PNG, JPEG, WebP and TIFF outputs keep what they can hold of the input's)",
      .id = O_STRIP },
    { "--jpeg-stages", NULL, CLI_STR, "WHERE",
      "where JPEG's stages run: host (libjpeg-turbo does all), transforms (the device does IDCT, upsampling and "
      "colour conversion in, colour conversion, subsampling, DCT and quantization out; libjpeg-turbo "
      "entropy-codes), device (as transforms, and the device does the Huffman coding too: baseline inputs' and "
      "every output's) or auto (device on GPUs, host on CPU devices; default); the same pixels either way",
      .id = O_JPEG_STAGES },
    { "--trace", NULL, CLI_STR, "FILE",
      "write a timeline of the run (decode, waits, uploads, kernels, readbacks, encode per thread and device slot) "
      "as Chrome/Perfetto trace-event JSON (chrome://tracing, ui.perfetto.dev, scripts/trace-png)",
      .id = O_TRACE },
    { "--file-timeout", NULL, CLI_NUM, "SEC",
      "stop the run (exit 1, naming the file) when one file has taken longer than SEC seconds; the files done "
      "are kept, nothing partial is left (default 0: no limit)", .dlo = 0, .dhi = 1e9, .id = O_FILE_TIMEOUT },
};

typedef struct args {
    strvec in;
    const char *out, *ftext, *ffile, *trace;
    long quality, level, max_pixels, threads, inflight, gpu_inflight;
    double file_timeout;
    bool recursive, skip_existing, fail_fast, no_auto_orient, strip, lossless, tiff_none;
    int progress; /* -1 auto */
    int jpeg_stages;
    unsigned shard_k, shard_n;
} args;

static int on_arg(void *user, int id, const cli_value *v)
{
    args *a = user;
    switch (id) {
    case O_INPUT:
        return sv_push(&a->in, v->str) ? cli_error(CLI_EXIT_RUNTIME, "out of memory") : 0;
    case O_OUTPUT: a->out = v->str; break;
    case O_FILTER: a->ftext = v->str; break;
    case O_FILTER_FILE: a->ffile = v->str; break;
    case O_QUALITY: a->quality = v->i; break;
    case O_PNG_LEVEL: a->level = v->i; break;
    case O_MAX_PIXELS: a->max_pixels = v->i; break;
    case O_RECURSIVE: a->recursive = true; break;
    case O_THREADS: a->threads = v->i; break;
    case O_MAX_INFLIGHT: a->inflight = v->i; break;
    case O_GPU_INFLIGHT: a->gpu_inflight = v->i; break;
    case O_SKIP_EXISTING: a->skip_existing = true; break;
    case O_FAIL_FAST: a->fail_fast = true; break;
    case O_PROGRESS: a->progress = 1; break;
    case O_NO_PROGRESS: a->progress = 0; break;
    case O_NO_AUTO_ORIENT: a->no_auto_orient = true; break;
    case O_STRIP: a->strip = true; break;
    case O_LOSSLESS: a->lossless = true; break;
    case O_TIFF_COMPRESSION:
        if (!strcmp(v->str, "none") || !strcmp(v->str, "deflate"))
            a->tiff_none = !strcmp(v->str, "none");
        else
            return cli_error(CLI_EXIT_USAGE, "--tiff-compression '%s': expected deflate or none", v->str);
        break;
    case O_TRACE: a->trace = v->str; break;
    case O_JPEG_STAGES:
        if (!strcmp(v->str, "auto"))
            a->jpeg_stages = JPEG_STAGES_AUTO;
        else if (!strcmp(v->str, "device"))
            a->jpeg_stages = JPEG_STAGES_DEVICE;
        else if (!strcmp(v->str, "transforms"))
            a->jpeg_stages = JPEG_STAGES_TRANSFORMS;
        else if (!strcmp(v->str, "host"))
            a->jpeg_stages = JPEG_STAGES_HOST;
        else
            return cli_error(CLI_EXIT_USAGE, "--jpeg-stages '%s': expected auto, host, transforms or device", v->str);
        break;
    case O_FILE_TIMEOUT: a->file_timeout = v->d; break;
    case O_SHARD: {
        char tail;
        if (sscanf(v->str, "%u/%u%c", &a->shard_k, &a->shard_n, &tail) != 2 || a->shard_n < 1 || a->shard_k < 1 ||
            a->shard_k > a->shard_n)
            return cli_error(CLI_EXIT_USAGE, "--shard '%s': expected K/N with 1 <= K <= N", v->str);
        break;
    }
    case CLI_POSITIONAL:
        return cli_error(CLI_EXIT_USAGE, "unknown argument '%s' (see --help)", v->str);
    }
    return 0;
}

static int run(int argc, char **argv);

/* --trace FILE can be written: its directory exists and is writable, it is not a directory. */
static int check_trace_path(const char *path)
{
    struct stat st;
    const char *slash = strrchr(path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    if (!*path || (slash && !slash[1]) || (!stat(path, &st) && S_ISDIR(st.st_mode)))
        return cli_error(CLI_EXIT_USAGE, "--trace '%s': a file name is needed", path);
    if (stat(dir, &st) || !S_ISDIR(st.st_mode))
        return cli_error(CLI_EXIT_USAGE, "--trace '%s': directory '%s' does not exist", path, dir);
    if (access(dir, W_OK))
        return cli_error(CLI_EXIT_USAGE, "--trace '%s': directory '%s' is not writable", path, dir);
    return 0;
}

const cli_command cli_cmd_process = {
    .name = "",
    .synopsis = "vkimg -i IN -o OUT [-f PIPELINE | -F FILE] [options]",
    .summary = "Runs a filter pipeline on the GPU (Vulkan compute) over one image or a batch, e.g.\n"
               "  vkimg -i in.png -o out.png -f \"gray,blur=sigma=2\"\n"
               "Batches: several -i, globs, directories, @LIST, '-'; -o DIR/ or a template.",
    .opts = process_opts,
    .nopts = (int)(sizeof process_opts / sizeof process_opts[0]),
    .common = true,
    .exit_text = "exit codes: 0 success, 1 runtime error (I/O, decode, device, output; in a batch: any file "
                 "failed), 2 usage error (arguments or pipeline)",
    .run = run,
};

static int run(int argc, char **argv)
{
    args a = { .quality = VKIMG_QUALITY_DEFAULT, .level = VKIMG_PNG_LEVEL_DEFAULT,
               .max_pixels = (long)VKIMG_DEFAULT_MAX_PIXELS, .gpu_inflight = 2, .progress = -1 };
    cli_common common = { 0 };
    strvec ins = { 0 };
    char *text = NULL;
    vkimg_pipeline *p = NULL;
    job *jobs = NULL;
    int njobs = 0;
    int rc = cli_parse(&cli_cmd_process, argc, argv, &common, CLI_EXIT_USAGE, on_arg, &a);
    if (rc)
        goto done;
    if (!a.in.n) {
        rc = cli_error(CLI_EXIT_USAGE, "missing -i INPUT (see --help)");
        goto done;
    }
    if (!a.out) {
        rc = cli_error(CLI_EXIT_USAGE, "missing -o OUTPUT (see --help)");
        goto done;
    }
    if (!a.ftext && !a.ffile) /* a conversion: the format from -o, the orientation applied, metadata kept */
        a.ftext = "copy";
    if (a.ftext && a.ffile) {
        rc = cli_error(CLI_EXIT_USAGE, "give -f or -F, not both");
        goto done;
    }

    /* Everything that can fail without the GPU first: pipeline, inputs, outputs. */
    vkimg_err e = { 0 };
    if (a.ffile && !(text = cli_read_text(a.ffile, MAX_PIPELINE_FILE, &e))) {
        rc = cli_report(&e);
        goto done;
    }
    const char *ptext = a.ffile ? text : a.ftext;
    if (!(p = vkimg_pipeline_parse(ptext, &e))) {
        rc = cli_report_pipeline(ptext, &e);
        goto done;
    }
    for (int i = 0; i < a.in.n; i++)
        if ((rc = cli_expand_input(a.in.v[i], a.recursive, &ins)))
            goto done;
    if (!ins.n) {
        rc = cli_error(CLI_EXIT_USAGE, "no input files");
        goto done;
    }
    struct stat st;
    const char *out = a.out;
    bool is_dir = out[strlen(out) - 1] == '/' || (!stat(out, &st) && S_ISDIR(st.st_mode));
    bool is_tmpl = strchr(out, '{') != NULL;
    bool single = ins.n == 1 && a.in.n == 1 && cli_input_is_single(a.in.v[0]);
    if (!is_dir && !is_tmpl && !single) {
        rc = cli_error(CLI_EXIT_USAGE, "%d inputs need -o DIR/ or an output template such as 'out/{stem}.png'", ins.n);
        goto done;
    }
    jobs = calloc((size_t)ins.n, sizeof *jobs);
    char **outs = calloc((size_t)ins.n, sizeof *outs);
    if (!jobs || !outs) {
        free(outs);
        rc = cli_error(CLI_EXIT_RUNTIME, "out of memory");
        goto done;
    }
    for (int i = 0; i < ins.n; i++) {
        if (a.shard_n && cli_shard_of(ins.v[i], a.shard_n) != a.shard_k - 1)
            continue;
        char path[4096];
        if (is_dir && !is_tmpl) {
            const char *slash = strrchr(ins.v[i], '/');
            const char *base = slash ? slash + 1 : ins.v[i], *dot = strrchr(base, '.');
            /* a format vkimg does not write (GIF, PSD, PNM...): DIR/{stem}.png */
            const bool png = vkimg_file_kind_of(base) == VKIMG_FILE_UNKNOWN;
            const int keep = png && dot && dot != base ? (int)(dot - base) : (int)strlen(base);
            snprintf(path, sizeof path, "%s%s%.*s%s", out, out[strlen(out) - 1] == '/' ? "" : "/", keep, base,
                     png ? ".png" : "");
        } else if (is_tmpl) {
            int r = cli_expand_template(out, ins.v[i], i, path, sizeof path);
            if (r) {
                free(outs);
                rc = cli_error(CLI_EXIT_USAGE, "-o '%s': %s", out,
                               r == -1 ? "unknown {field} (use {dir} {name} {stem} {ext} {index} {level})"
                                       : "output path too long");
                goto done;
            }
        } else {
            snprintf(path, sizeof path, "%s", out);
        }
        job *j = &jobs[njobs];
        j->in = ins.v[i];
        j->index = i;
        if (!(j->out = strdup(path))) {
            free(outs);
            rc = cli_error(CLI_EXIT_RUNTIME, "out of memory");
            goto done;
        }
        outs[njobs++] = j->out;
    }
    int ca, cb;
    bool clash = cli_find_collision(outs, njobs, &ca, &cb);
    free(outs);
    if (clash) {
        rc = cli_error(CLI_EXIT_USAGE, "inputs '%s' and '%s' both map to output '%s'", jobs[ca].in, jobs[cb].in,
                       jobs[cb].out);
        goto done;
    }
    vkimg_fmt data_fmt;
    bool data = vkimg_pipeline_data_output(p, &data_fmt), levels = vkimg_pipeline_writes_levels(p);
    for (int i = 0; i < njobs; i++) {
        char *level0 = vkimg_level_path(jobs[i].out, 0);
        if (levels && !level0 && vkimg_file_kind_of(jobs[i].out) != VKIMG_FILE_KTX2) {
            rc = cli_error(CLI_EXIT_USAGE, "%s: the pipeline writes one image per mip level: write them to .ktx2, "
                           "or put {level} in the output name (e.g. 'out/{stem}_{level}.png')", jobs[i].out);
            goto done;
        }
        if (!levels && level0) {
            free(level0);
            rc = cli_error(CLI_EXIT_USAGE, "%s: {level} is for pipelines that end in mipmaps", jobs[i].out);
            goto done;
        }
        int bad = vkimg_check_output(level0 ? level0 : jobs[i].out, &e);
        free(level0);
        if (bad) {
            rc = cli_report(&e);
            goto done;
        }
        if (data && vkimg_file_kind_of(jobs[i].out) != VKIMG_FILE_NPY) {
            rc = cli_error(CLI_EXIT_USAGE, "%s: the pipeline ends in data, not a picture: write it to .npy", jobs[i].out);
            goto done;
        }
    }
    if (!njobs) {
        if (cli_verbose >= 0)
            fprintf(stderr, "vkimg: shard %u/%u has no inputs\n", a.shard_k, a.shard_n);
        goto done;
    }

    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = (int)(a.threads ? a.threads : ncpu > 0 ? ncpu : 1);
    if (a.inflight && threads > a.inflight)
        threads = (int)a.inflight;
    batch_cfg cfg = {
        .p = p,
        .lo = { .max_pixels = (uint64_t)a.max_pixels },
        .so = { .quality = (int)a.quality, .png_level = (int)a.level, .lossless = a.lossless,
                .tiff_uncompressed = a.tiff_none },
        .common = common,
        .skip_existing = a.skip_existing,
        .auto_orient = !a.no_auto_orient,
        .jpeg_stages = a.jpeg_stages,
        .keep_meta = !a.strip,
        .fail_fast = a.fail_fast,
        .progress = a.progress < 0 ? isatty(2) && njobs > 1 && cli_verbose >= 0 : a.progress,
        .threads = threads,
        .gpu_inflight = (int)a.gpu_inflight,
        .trace = a.trace,
        .file_timeout_s = a.file_timeout,
    };
    if (a.trace && (rc = check_trace_path(a.trace)))
        goto done;
    rc = cli_batch_run(&cfg, jobs, njobs);
done:
    if (jobs)
        for (int i = 0; i < njobs; i++)
            free(jobs[i].out);
    free(jobs);
    vkimg_pipeline_free(p);
    free(text);
    sv_free(&ins);
    sv_free(&a.in);
    return rc < 0 ? 0 : rc;
}
