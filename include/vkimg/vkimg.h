/* vkimg — image filter pipelines on Vulkan compute devices: the library's public API.
 *
 * Example (error handling shortened; build with `pkg-config --cflags --libs vkimg`):
 *
 *     #include <vkimg/vkimg.h>
 *
 *     vkimg_err e;
 *     vkimg_image in = { 0 }, out = { 0 };
 *     vkimg_pipeline *p = vkimg_pipeline_parse("gray,blur=sigma=2", &e);
 *     vkimg_ctx *ctx = vkimg_ctx_create(NULL, &e);          // the best device
 *     if (!p || !ctx || vkimg_load("in.png", NULL, &in, &e) ||
 *         vkimg_run(ctx, p, &in, &(vkimg_run_opts){ .out_fmt = VKIMG_U8 }, &out, &e) ||
 *         vkimg_save("out.png", &out, NULL, &e))
 *         fprintf(stderr, "%s\n", e.msg);                   // one line, names the file or op
 *     vkimg_image_free(&in);
 *     vkimg_image_free(&out);
 *     vkimg_ctx_destroy(ctx);
 *     vkimg_pipeline_free(p);
 *
 * Conventions:
 *  - Functions return 0 on success or an error class VKIMG_E_*; on failure they fill
 *    the caller's vkimg_err (may be NULL) with a one-line message. The library never
 *    prints, never exits, and keeps no global state that callers must set up.
 *  - Objects are made by _create/_parse and freed by _destroy/_free, which accept
 *    NULL. Structs are zero-initialized by the caller where options are optional.
 *
 * Thread safety, per handle:
 *  - vkimg_ctx: vkimg_run, vkimg_image_stats and vkimg_compare may be called on one
 *    context from several threads at once (submissions are serialized inside);
 *    vkimg_ctx_destroy must not race with any other use of that context.
 *  - vkimg_pipeline: immutable once parsed; any number of threads may use one.
 *  - vkimg_image, vkimg_err, result structs: plain data, owned by the caller and not
 *    synchronized: one thread at a time per object.
 *  - vkimg_load*, vkimg_save, vkimg_check_output, vkimg_pipeline_parse, the op
 *    documentation and the device list: thread-safe (no shared state). */
#ifndef VKIMG_VKIMG_H
#define VKIMG_VKIMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(VKIMG_BUILDING_SHARED) && defined(__GNUC__)
#define VKIMG_API __attribute__((visibility("default")))
#else
#define VKIMG_API
#endif

#define VKIMG_VERSION "0.2.0"

/* Error classes. */
enum {
    VKIMG_OK = 0,
    VKIMG_E_RUNTIME = 1, /* the operation failed: I/O, a bad or hostile file, the device, a limit */
    VKIMG_E_USAGE = 2,   /* the request is invalid: an argument, an option value, a pipeline */
    VKIMG_E_AGAIN = 3,   /* vkimg_run could not do on the device what vkimg_load_opts.jpeg_entropy or
                            vkimg_run_opts.jpeg_entropy asked of it (see there): load the input
                            again without jpeg_entropy, run again without */
};

typedef struct vkimg_err {
    int code;       /* VKIMG_E_* */
    int pos;        /* pipeline errors: byte offset of the offending place, else -1 */
    char msg[1024]; /* one line, no trailing newline */
} vkimg_err;

/* Sample formats. U8/U16 are unsigned normalized (0..255 / 0..65535 map to 0..1),
 * F16/F32 are float (HDR may exceed 1). F16 is only used on the device. */
typedef enum vkimg_fmt {
    VKIMG_U8 = 0,
    VKIMG_U16 = 1,
    VKIMG_F16 = 2,
    VKIMG_F32 = 3,
    VKIMG_U32 = 4, /* data outputs (integral, .npy): plain integers */
    VKIMG_U64 = 5,
} vkimg_fmt;

VKIMG_API size_t vkimg_fmt_size(vkimg_fmt f);
VKIMG_API const char *vkimg_fmt_name(vkimg_fmt f);

/* A packed, interleaved image in host memory: row-major, no padding,
 * w*h*c samples of fmt. */
typedef struct vkimg_image {
    int w, h, c;   /* c = 1..4: gray, gray+alpha, RGB, RGBA */
    vkimg_fmt fmt;
    void *data;    /* malloc()ed, or device-visible memory (priv); free with vkimg_image_free */
    void *priv;    /* NULL, or the owner of device-visible data (vkimg_image_alloc_device) */
    /* NULL, or the image is a JPEG half-way through its codec: data holds its quantized
     * DCT coefficients, this their layout and tables, and w, h, c, fmt are the pixels'
     * (U8). Made by vkimg_load with vkimg_load_opts.jpeg_coded (vkimg_run finishes the
     * decode on the device) and by vkimg_run with vkimg_run_opts.jpeg_quality (vkimg_save
     * finishes the encode: entropy coding only); nothing else reads such an image.
     * Freed by vkimg_image_free. */
    struct vkimg_coded *coded;
} vkimg_image;

VKIMG_API size_t vkimg_image_bytes(const vkimg_image *im);
/* Allocates data for w*h*c samples of fmt (zeroed). */
VKIMG_API int vkimg_image_alloc(vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e);
/* Frees data, whichever memory it is in (device-visible memory goes back to its
 * context, which must still exist). */
VKIMG_API void vkimg_image_free(vkimg_image *im);
/* The colours of an image of palette indices (8-bit; the index in the first
 * channel, e.g. a diff_indexed compare picture) into a new RGBA u8 image: each
 * pixel palette[index] as r | g << 8 | b << 16 | a << 24. */
VKIMG_API int vkimg_image_expand_palette(const vkimg_image *idx, const uint32_t *palette, vkimg_image *rgba,
                                         vkimg_err *e);

/* ---------------------------------------------------------------- image I/O */

#define VKIMG_DEFAULT_MAX_PIXELS (268435456ull) /* 256 Mpx: 16384x16384 */

/* The metadata vkimg carries from an input file to its output: the ICC colour
 * profile, the EXIF block, the XMP packet and the Photoshop image resources (IPTC),
 * byte for byte, and the EXIF orientation. Read from JPEG (APP1 Exif, APP1 XMP, APP2
 * ICC_PROFILE, APP13 Photoshop 3.0), PNG (iCCP, eXIf, iTXt XML:com.adobe.xmp), WebP
 * (ICCP, EXIF, XMP) and TIFF (tags 34675, 274, the Exif/GPS IFDs, 700, 34377);
 * written into PNG, JPEG, WebP and TIFF outputs (the Photoshop resources into JPEG
 * and TIFF ones: PNG and WebP have no place for them). */
typedef struct vkimg_meta {
    unsigned char *icc;  /* the ICC profile as embedded (NULL: none); malloc()ed */
    size_t icc_len;
    char icc_name[80];   /* PNG iCCP profile name ("" otherwise) */
    unsigned char *exif; /* the EXIF block from its TIFF header on (NULL: none); malloc()ed */
    size_t exif_len;
    int orientation;     /* EXIF orientation 1..8 (1: none) */
    unsigned char *xmp;  /* the XMP packet, its UTF-8 bytes as stored (NULL: none); malloc()ed */
    size_t xmp_len;
    unsigned char *iptc; /* Photoshop image resources (8BIM blocks; the IPTC-IIM record is one of them)
                            as stored (NULL: none); malloc()ed */
    size_t iptc_len;
} vkimg_meta;
VKIMG_API void vkimg_meta_free(vkimg_meta *m);
/* Sets the orientation, and rewrites the EXIF block's tag (and the XMP packet's
 * tiff:Orientation) to it where they have one. */
VKIMG_API void vkimg_meta_set_orientation(vkimg_meta *m, int orientation);

typedef struct vkimg_load_opts {
    uint64_t max_pixels; /* 0 = VKIMG_DEFAULT_MAX_PIXELS */
    /* Shrink-on-load (optional). Called once the header is read, with the stored
     * size and the file's EXIF orientation (1 when it has none), it sets the
     * smallest size the caller needs (*min_w x *min_h, in the stored frame;
     * vkimg_pipeline_min_input gives a pipeline's). A JPEG is then decoded at 1/2,
     * 1/4 or 1/8 of its size (libjpeg-turbo's DCT scaling: sides rounded up) where
     * that keeps both sides at least that big, a still WebP likewise by libwebp's
     * rescaler; other formats decode whole.
     * out->w/h are what was decoded: give the stored size to vkimg_run_opts.src_w/h. */
    void (*min_size)(void *user, int w, int h, int orientation, int *min_w, int *min_h);
    /* Where the pixels go (optional; e.g. vkimg_image_alloc_device, so that they are
     * decoded straight into memory the device reads). Called once with the
     * decoded size; PNG, JPEG, WebP (but an animation's frame) and TIFF decode into it,
     * other formats are decoded and copied into it. Return 0, or VKIMG_E_* with e filled (the load fails), or
     * 1 to decline (an ordinary allocation is made instead). */
    int (*alloc)(void *user, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e);
    /* The input is read (optional; vkimg_load_memory): called once, as soon as the
     * decoder reads the caller's buffer no more, so that the caller can free it
     * while the rest is decoded (a PNG: once its compressed data is gathered or
     * inflated, before the rows are unfiltered; other formats: when decoded, or
     * when the load fails). Less memory at once where files are large. */
    void (*input_done)(void *user);
    void *user; /* for min_size, alloc and input_done */
    /* A JPEG is delivered coded (vkimg_image.coded): libjpeg-turbo decodes only its
     * entropy-coded data, and vkimg_run does the rest on the device (dequantization,
     * IDCT, chroma upsampling, colour conversion: the same samples as TurboJPEG's
     * accurate IDCT and smooth upsampling). For 8-bit grayscale and YCbCr files of
     * 4:4:4, 4:2:2 or 4:2:0 sampling decoded at full size; others decode as without. */
    bool jpeg_coded;
    /* With jpeg_coded: a baseline file's scan goes to the device still entropy-coded,
     * and vkimg_run decodes its Huffman codes there too (the host copies the bytes);
     * the same coefficients as libjpeg's. Damage in the entropy-coded data, or data
     * the device cannot synchronize on, fails that run with VKIMG_E_AGAIN: load the
     * file again without jpeg_entropy (libjpeg then decodes it, or says what is
     * wrong). Other files are coded as with jpeg_coded alone. */
    bool jpeg_entropy;
    /* The caller keeps no alpha (vkimg_pipeline_keeps_opaque and a JPEG output): an
     * 8-bit PNG (not interlaced) whose alpha is all at its maximum comes without it,
     * one channel fewer (checked and packed row by row as it is unfiltered; a row with
     * alpha below the maximum puts the rows before back as they were) */
    bool drop_opaque_alpha;
} vkimg_load_opts;

/* Loads an image file: PNG, JPEG, WebP (first frame), TIFF (first page), GIF (first frame), BMP, TGA, PSD (composite),
 * HDR, PNM (the README lists them and which code decodes each). The format is
 * found from the file's first bytes and exactly one decoder reads it: a file that
 * decoder refuses (corrupt, truncated, unsupported variant) is an error, never
 * half an image. 8-bit files give U8, 16-bit PNG/PNM/PSD give U16, HDR gives F32.
 * The header is read first and checked against max_pixels before any pixel
 * memory is allocated. vkimg_load reads regular files only (a FIFO, device,
 * socket or directory is refused at once, without reading from it) and refuses a
 * file larger than INT_MAX bytes or than an image of max_pixels could plausibly
 * need (64 bytes a pixel + 64 MiB) before reading it. Errors: VKIMG_E_RUNTIME, the
 * message names the file (or `name`) and the reason. */
VKIMG_API int vkimg_load(const char *path, const vkimg_load_opts *o, vkimg_image *out, vkimg_err *e);
VKIMG_API int vkimg_load_memory(const void *buf, size_t len, const char *name, const vkimg_load_opts *o,
                                vkimg_image *out, vkimg_err *e);
/* vkimg_load, with the file's metadata in *meta (free it with vkimg_meta_free):
 * ICC profile, EXIF block, orientation, XMP packet and Photoshop resources of JPEG,
 * PNG, WebP and TIFF files; empty for other
 * formats, and where the metadata is malformed (the image still loads). The
 * pixels are as stored: apply meta->orientation with vkimg_run_opts.orientation. */
VKIMG_API int vkimg_load_meta(const char *path, const vkimg_load_opts *o, vkimg_image *out, vkimg_meta *meta,
                              vkimg_err *e);

/* Encoder settings: their ranges and defaults. */
#define VKIMG_QUALITY_MIN 1
#define VKIMG_QUALITY_MAX 100
#define VKIMG_QUALITY_DEFAULT 90
#define VKIMG_PNG_LEVEL_MIN 0
#define VKIMG_PNG_LEVEL_MAX 12
/* libdeflate's level 3: on the 5120x2880 photographs of Debian's wallpapers
 * 1.9x (gray) and 1.4x (blur=3 RGBA) faster to write than level 6, the files
 * 3-10% larger and 0.64-1.08x the size of vips's (zlib level 6). */
#define VKIMG_PNG_LEVEL_DEFAULT 3

typedef struct vkimg_save_opts {
    int quality;   /* JPEG and WebP (lossy) VKIMG_QUALITY_MIN..MAX, 0 = VKIMG_QUALITY_DEFAULT */
    int png_level; /* VKIMG_PNG_LEVEL_MIN..MAX (libdeflate), -1 = VKIMG_PNG_LEVEL_DEFAULT */
    const vkimg_meta *meta; /* optional: ICC profile, EXIF and XMP written into PNG, JPEG, WebP
                               and TIFF outputs, the Photoshop resources into JPEG and TIFF
                               ones (other formats can't hold them: left out) */
    bool png_palette; /* an 8-bit RGB or RGBA image of at most 256 colours is written as a palette
                         PNG (lossless: it reads back as the same pixels and channels; a quarter
                         of the data to compress); vkimg compare's difference images */
    const uint32_t *palette; /* an 8-bit image's first channel is indices into these 256 colours
                                (each r | g << 8 | b << 16 | a << 24; e.g. vkimg_compare_palette();
                                any other channels are ignored): PNG writes a palette image that
                                reads back as RGBA, the other formats the RGBA pixels */
    int threads; /* PNG, TIFF: threads that may compress a large image (its bands of rows are
                    fixed by its size, so the file is the same for any count);
                    0 or 1: the calling thread only */
    bool lossless; /* WebP: lossless (the same pixels back) instead of lossy at `quality` */
    bool tiff_uncompressed; /* TIFF: the samples as they are, instead of Deflate with a predictor */
} vkimg_save_opts;

typedef enum vkimg_file_kind {
    VKIMG_FILE_UNKNOWN = 0,
    VKIMG_FILE_PNG, VKIMG_FILE_JPEG, VKIMG_FILE_BMP, VKIMG_FILE_TGA, VKIMG_FILE_HDR,
    VKIMG_FILE_NPY,
    VKIMG_FILE_KTX2, /* written only: a texture with its mip levels (vkimg_save_levels) */
    VKIMG_FILE_WEBP,
    VKIMG_FILE_TIFF,
} vkimg_file_kind;

/* Output kind from the path's extension (case-insensitive). */
VKIMG_API vkimg_file_kind vkimg_file_kind_of(const char *path);
/* The sample format a file of this kind is written in, given the data's format:
 * PNG keeps U16 (16-bit PNG), HDR is F32, NPY keeps the format, KTX2 keeps U8,
 * U16 and F32 (other formats: F32), the rest are U8. */
VKIMG_API vkimg_fmt vkimg_file_fmt(vkimg_file_kind k, vkimg_fmt data_fmt);

/* Writes atomically: a temporary file in the output directory, then rename.
 * On failure nothing is left behind and an existing file is untouched.
 * The image's fmt must be what vkimg_file_fmt() says for the path (NPY: any). */
VKIMG_API int vkimg_save(const char *path, const vkimg_image *im, const vkimg_save_opts *o, vkimg_err *e);

/* Writes the n images of a pipeline that writes several (mipmaps): to one file when
 * path ends in .ktx2 (all levels, KTX 2.0), else one file per image at path with
 * "{level}" replaced by its index (0 = full size). Each file is written atomically;
 * on failure the ones already written are removed. */
VKIMG_API int vkimg_save_levels(const char *path, const vkimg_image *levels, int n, const vkimg_save_opts *o,
                                vkimg_err *e);
/* The path of level k of a {level} template (NULL when path has no "{level}":
 * then it must end in .ktx2). Returns a malloc()ed string. */
VKIMG_API char *vkimg_level_path(const char *path, int k);

/* Writes a whole file the way every vkimg output is written: into a temporary
 * file beside it, then renamed into place, so that the path holds either its old
 * contents or all of the new ones, never part of them (reports, traces). */
VKIMG_API int vkimg_write_file(const char *path, const void *data, size_t n, vkimg_err *e);
/* Removes the temporary files of writes in progress that have a name (the file
 * system has no O_TMPFILE, or the moment between naming a whole file and renaming
 * it into place). Async-signal-safe: for SIGINT/SIGTERM handlers, so that an
 * interrupted program leaves no temporary file; the vkimg CLI installs such. */
VKIMG_API void vkimg_remove_temp_files(void);
/* Checks, without writing, that an output path can be written (directory exists
 * and is writable, extension known). */
VKIMG_API int vkimg_check_output(const char *path, vkimg_err *e);

/* ---------------------------------------------------------------- pipelines */

#define VKIMG_MAX_STAGES 64 /* ops in one pipeline */

typedef struct vkimg_pipeline vkimg_pipeline;

/* Parses "gray,blur=sigma=2:radius=6". On error: code VKIMG_E_USAGE, pos = offset
 * into text of the offending place, msg = one line. */
VKIMG_API vkimg_pipeline *vkimg_pipeline_parse(const char *text, vkimg_err *e);
VKIMG_API void vkimg_pipeline_free(vkimg_pipeline *p);
VKIMG_API int vkimg_pipeline_length(const vkimg_pipeline *p);
VKIMG_API const char *vkimg_pipeline_op_name(const vkimg_pipeline *p, int i);
/* Canonical text of the pipeline with every option spelled out that applies (not
 * blur's radius with method=box, nor crop's w, h, x, y beside a geometry): it
 * parses back to a pipeline that describes the same (snprintf-like). */
VKIMG_API int vkimg_pipeline_describe(const vkimg_pipeline *p, char *buf, size_t n);
/* True if every op of p keeps an alpha channel that is all at its maximum so and
 * makes the colour it would make without it (copies or moves alpha, or is a filter
 * whose opaque path is its plain one: blur; or drops it: flatten), and none makes data: an opaque input
 * may then be run without its alpha where the results' alpha is not kept (a JPEG
 * output): vkimg_load_opts.drop_opaque_alpha, vkimg_run_opts.alpha_unused. */
VKIMG_API bool vkimg_pipeline_keeps_opaque(const vkimg_pipeline *p);
/* Output channels of the whole pipeline for an input of c channels. */
VKIMG_API int vkimg_pipeline_out_channels(const vkimg_pipeline *p, int c);
/* True if the pipeline's last op produces data rather than a picture (integral:
 * exact uint64 sums); *fmt receives its sample format. Such output must go to
 * .npy. Only the last op may produce data. */
VKIMG_API bool vkimg_pipeline_data_output(const vkimg_pipeline *p, vkimg_fmt *fmt);

/* True if the pipeline's last op writes several images (mipmaps): its output is
 * a {level} template or a .ktx2 file (vkimg_save_levels). */
VKIMG_API bool vkimg_pipeline_writes_levels(const vkimg_pipeline *p);

/* Op documentation, generated from the op descriptors. */
typedef enum vkimg_doc_format {
    VKIMG_DOC_TEXT,     /* plain text: the list, or one op's options */
    VKIMG_DOC_MARKDOWN, /* a Markdown table of every op */
    VKIMG_DOC_MAN,      /* roff (man page) paragraphs of every op */
} vkimg_doc_format;
VKIMG_API int vkimg_op_count(void);
VKIMG_API const char *vkimg_op_name(int i);
/* Writes the documentation of op `name` (or of all ops if name is NULL) to buf like
 * snprintf and returns its length; -1 if there is no such op. */
VKIMG_API int vkimg_ops_help(const char *name, vkimg_doc_format f, char *buf, size_t n);

/* ---------------------------------------------------------------- devices */

typedef enum vkimg_log_level { VKIMG_LOG_DEBUG, VKIMG_LOG_INFO, VKIMG_LOG_WARN, VKIMG_LOG_ERROR } vkimg_log_level;
typedef void (*vkimg_log_fn)(void *user, vkimg_log_level lvl, const char *msg);

typedef struct vkimg_ctx_opts {
    const char *device;   /* NULL/"" = best; INDEX, NAME-SUBSTRING, "gpu" or "cpu" ("all": see vkimg_devices_all) */
    bool validate;        /* Khronos validation + synchronization validation */
    bool no_cache;        /* don't read or write the on-disk pipeline cache (also VKIMG_NO_CACHE=1) */
    vkimg_log_fn log;     /* optional; called from any thread that uses the context */
    void *log_user;
} vkimg_ctx_opts;

typedef struct vkimg_ctx vkimg_ctx;

/* Creates the Vulkan instance and device. Also honours VKIMG_VALIDATE=1 in the
 * environment. */
VKIMG_API vkimg_ctx *vkimg_ctx_create(const vkimg_ctx_opts *o, vkimg_err *e);
VKIMG_API void vkimg_ctx_destroy(vkimg_ctx *ctx);
/* Number of validation messages (warnings and errors) seen so far. */
VKIMG_API int vkimg_ctx_validation_messages(const vkimg_ctx *ctx);
/* Frees the memory the context keeps for reuse: the buffers of finished runs and
 * freed device images (a pool, so that the next run of the same sizes allocates
 * nothing). For a long-lived context between jobs, or before a step that needs
 * memory more than the context does. Thread-safe; buffers in use stay. */
VKIMG_API void vkimg_ctx_trim(vkimg_ctx *ctx);
/* "NVIDIA H100 80GB HBM3 (discrete GPU, NVIDIA 580.159.4, Vulkan 1.3.289)" */
VKIMG_API const char *vkimg_ctx_device_desc(const vkimg_ctx *ctx);
/* Whether ctx's device is a CPU (lavapipe): where the host's own code is the
 * faster way to do what a GPU would (vkimg's CLI: --jpeg-stages auto). */
VKIMG_API bool vkimg_ctx_is_cpu(const vkimg_ctx *ctx);
/* Index of the ctx's device in the list of vkimg_list_devices. */
VKIMG_API int vkimg_ctx_device_index(const vkimg_ctx *ctx);

/* Writes a human-readable list of devices to buf. Needs no ctx. */
VKIMG_API int vkimg_list_devices(char *buf, size_t n, vkimg_err *e);
/* The devices worth spreading work over: every usable GPU (discrete, integrated or
 * virtual), or, only where there is none, the other usable devices (lavapipe's CPU
 * device). Fills idx with up to max indices (for vkimg_ctx_opts.device as decimal
 * text) and returns how many there are, or -1 with e filled. Needs no ctx. */
VKIMG_API int vkimg_devices_all(int *idx, int max, vkimg_err *e);

/* ---------------------------------------------------------------- running */

typedef struct vkimg_timing {
    double decode_ms, upload_ms, readback_ms, encode_ms, total_ms; /* host side; decode/encode filled by caller */
    double gpu_total_ms;
    int nstages;
    struct {
        char name[32];
        double gpu_ms;
        double start_ms; /* on the host clock, as the t_* below */
    } stage[VKIMG_MAX_STAGES];
    /* The run on the host's CLOCK_MONOTONIC in milliseconds (for timelines such as
     * --trace): submitted, seen complete, and the device's copies as [start,
     * start + ms). Device timestamps are placed on the host clock by aligning the
     * run's last timestamp with the moment its fence was seen signalled (so they
     * are late by the wake-up latency at most). 0 where the run was not timed. */
    /* the run's phases: begun, planned, buffers made, recorded and submitted, done, results ready */
    double t_begin_ms, t_planned_ms, t_buffers_ms, t_submit_ms, t_done_ms, t_end_ms;
    double upload_start_ms, readback_start_ms;
    /* upload_ms and readback_ms split: the host's copies between the images and
     * device-visible memory (none where the caller decoded into it or reads the
     * result in place), and the bytes moved */
    double up_host_ms, down_host_ms;
    double up_bytes, down_bytes;
} vkimg_timing;

typedef struct vkimg_run_opts {
    vkimg_fmt out_fmt;    /* sample format of the result (see vkimg_file_fmt) */
    vkimg_timing *timing; /* optional */
    int orientation;      /* the input's EXIF orientation (1..8; 0 = 1: as stored): applied on the
                             device before the pipeline (the orient op) */
    int src_w, src_h;     /* the input's size in its file when the decoder shrank it
                             (vkimg_load_opts.min_size): geometry is resolved against it. 0: in's */
    bool device_output;   /* the results stay in the device-visible memory the device wrote them to
                             (vkimg_image.priv set; no copy on the host): read them, then
                             vkimg_image_free them before the context is destroyed */
    int jpeg_quality;     /* 1..100: the result is to be written as a JPEG of this quality, and the
                             device does that encoder's colour conversion, chroma subsampling,
                             forward DCT and quantization (libjpeg-turbo's, the choices of
                             vkimg_save: 4:4:4 from quality 90, 4:2:0 below, gray for 1-2
                             channels): out->coded is set, vkimg_save only entropy-codes it.
                             For one U8 result (else ignored). 0: pixels */
    bool jpeg_entropy;    /* with jpeg_quality: the device does the Huffman coding too: out->coded holds
                             the entropy-coded data (vkimg_save writes the file's headers around it;
                             the same file). Where that data would not fit the buffer the device
                             writes it into (more bytes than the coefficients'), the run fails with
                             VKIMG_E_AGAIN: run again without */
    bool alpha_unused;    /* the caller keeps no alpha of the results (a JPEG file drops it): where
                             the input's alpha is all at its maximum and every op keeps it so, the
                             run may leave it behind on upload (CPU devices, which look at alpha
                             for blur), and the results then have one channel fewer (the same
                             colour: premultiplying by 1 is nothing) */
    vkimg_image *consume; /* the input again (the very image `in` points to), which the caller has no
                             more use for: with device_output, where the device's memory is the host's
                             (lavapipe), the device reads the input where it lies (an image from
                             vkimg_image_alloc_device, or page-aligned memory it imports) and the
                             pipeline is one op that can (blur), the result is written over the input
                             and takes its memory: *consume is then emptied (freeing it does nothing).
                             Else, and when NULL, the input is left as it is */
    bool flatten;         /* the caller keeps no alpha of the results (a JPEG file has none): where
                             the results would have alpha, the run composites them over black on
                             the device and drops it (the flatten op last, or before the last op
                             where that writes several images: mipmaps), as vips and sharp write an
                             image with alpha into JPEG; the results have one channel fewer */
} vkimg_run_opts;

/* Shrink-on-load for p: the smallest size a decoder may deliver for an image
 * stored as w x h with EXIF orientation `orientation` (as vkimg_run_opts's: 1..8,
 * 0 = 1), in the stored frame. Twice the resampled size per axis when p starts
 * with resize or thumbnail with fast=true (linear=false, a filter but nearest), so
 * that the filter still reduces by 2x or more; else w x h. */
VKIMG_API void vkimg_pipeline_min_input(const vkimg_pipeline *p, int w, int h, int orientation, int *min_w,
                                        int *min_h);

/* Zero-copy images: w*h*c samples of fmt in host memory that ctx's device reads
 * in place (its upload staging memory, or its own memory where device memory is
 * host memory: lavapipe, integrated GPUs). Decode into it (vkimg_load_opts.alloc)
 * and vkimg_run takes it without a copy on the host. Not zeroed. Release it with
 * vkimg_image_free before ctx is destroyed. Thread-safe. */
VKIMG_API int vkimg_image_alloc_device(vkimg_ctx *ctx, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt,
                                       vkimg_err *e);

/* Runs pipeline p on `in` on the device: one upload, all ops on the device,
 * one readback. `out` receives a newly allocated image. A pipeline that writes
 * several images (mipmaps) needs vkimg_run_n. */
VKIMG_API int vkimg_run(vkimg_ctx *ctx, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
                        vkimg_image *out, vkimg_err *e);
/* The number of images p writes for this input and these options (mipmaps: one
 * per level; else 1), or -1 with e filled (the pipeline does not fit the input). */
VKIMG_API int vkimg_pipeline_outputs(const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
                                     vkimg_err *e);
/* vkimg_run for every image p writes: out[0 .. n) receive them (level 0 first);
 * n must be vkimg_pipeline_outputs(p, in, o). */
VKIMG_API int vkimg_run_n(vkimg_ctx *ctx, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
                          vkimg_image *out, int n, vkimg_err *e);

/* Creates, ahead of the run, the compute pipelines vkimg_run of p would record for
 * an input of in's size, channels and format with these options (in->data is not
 * read: it may be NULL, e.g. while the image is still being decoded), several at
 * once on the host's cores. vkimg_run then finds them made. Optional: a run
 * creates what it lacks itself. Worth it where pipelines compile slowly (CPU
 * devices compile every one in each process) and while the input decodes.
 * Thread-safe. */
VKIMG_API int vkimg_prepare(vkimg_ctx *ctx, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
                            vkimg_err *e);

/* ---------------------------------------------------------------- statistics */

/* Per-channel statistics, computed on the device by parallel reductions.
 * Values are normalized (u8 /255, u16 /65535, float as is). For integer
 * formats, isum/isumsq are the exact sums of the raw integer samples and mean /
 * stddev are derived from them exactly (population standard deviation). */
typedef struct vkimg_channel_stats {
    double min, max, sum, mean, stddev;
    uint64_t isum;        /* exact sum of raw integer samples (u8/u16), else 0 */
    uint64_t isumsq;      /* exact sum of squares of raw integer samples, else 0 */
    uint64_t hist[256];   /* u8 value v -> bin v; u16 -> v >> 8; float -> clamp(floor(x*256), 0, 255) */
} vkimg_channel_stats;

typedef struct vkimg_stats {
    int w, h, c;
    vkimg_fmt fmt;
    bool has_hist;
    vkimg_channel_stats ch[4];
} vkimg_stats;

VKIMG_API int vkimg_image_stats(vkimg_ctx *ctx, const vkimg_image *im, bool histogram, vkimg_stats *out,
                                vkimg_timing *timing, vkimg_err *e);

/* ---------------------------------------------------------------- compare */

/* A rectangle of pixels with inclusive corners (odiff's --ignore x1:y1-x2:y2). */
typedef struct vkimg_rect {
    int x1, y1, x2, y2;
} vkimg_rect;

typedef enum vkimg_metric {
    VKIMG_METRIC_ABS = 0, /* idiff: per-sample |a - b| on values scaled to [0,1], fail/warn thresholds */
    VKIMG_METRIC_YIQ = 1, /* pixelmatch and odiff: the YIQ colour delta of 8-bit RGBA with `threshold` */
} vkimg_metric;

/* Thresholds follow OpenImageIO's idiff (ABS) or pixelmatch (YIQ). */
typedef struct vkimg_compare_opts {
    double fail;        /* ABS: per-sample error above which a pixel fails (default 1e-6) */
    double failpercent; /* ABS: allowed % of failing pixels (default 0) */
    double hardfail;    /* ABS: any error above this fails (default inf) */
    double warn, warnpercent, hardwarn; /* ABS: the same for warnings (defaults 1e-6, 0, inf) */
    bool ssim;          /* also compute SSIM (Gaussian 11x11, sigma 1.5) */
    double diff_scale;  /* ABS: scale of the difference image (default 1) */
    bool want_diff;     /* fill result->diff */
    bool diff_unless_equal; /* ... unless a and b hold the same samples (size, format and bytes):
                               the picture of a pair that cannot fail */
    bool device_diff;   /* ... in the device-visible memory the device wrote it to (no host copy; free it
                           before the context), as vkimg_run_opts.device_output */
    bool diff_indexed;  /* YIQ: result->diff is one byte a pixel, each an index into
                           vkimg_compare_palette() (a quarter of the memory of RGBA; written as a
                           palette PNG through vkimg_save_opts.palette) */
    bool diff_over_b;   /* ... and written over b, which the caller needs no more: where b is an
                           8-bit image in device memory (vkimg_image_alloc_device) of a device whose
                           memory is the host's, and without aa (else ignored), each index goes
                           over the first byte of b's pixel and result->diff is a view of b's
                           memory (b's channels, the index in the first): no memory for the
                           picture; free the diff before b, whose pixels are gone */
    vkimg_metric metric;
    double threshold;   /* YIQ: 0..1, pixelmatch's (default 0.1): 35215 * threshold^2 is the largest
                           squared YIQ distance that still matches */
    bool aa;            /* YIQ: anti-aliased pixels (pixelmatch's detection) are not counted */
    const vkimg_rect *ignore; /* regions whose pixels count nowhere (they stay, dimmed, in the diff) */
    int nignore;
    const vkimg_image *mask;  /* optional, the size of the images: nonzero first channel = ignored */
    double max_diff_pixels;   /* budget: FAILURE only when more pixels differ (< 0: no budget) */
    double max_diff_ratio;    /* budget: ... when a larger fraction (0..1) of the compared pixels
                                 differ (< 0: no budget). A budget replaces failpercent. */
    bool allow_size_mismatch; /* compare the overlap (top-left aligned); every other pixel of the
                                 larger extent counts as different (else VKIMG_CMP_MISMATCH) */
} vkimg_compare_opts;
#define VKIMG_COMPARE_DEFAULTS                                                                               \
    { .fail = 1e-6, .failpercent = 0.0, .hardfail = 1.0 / 0.0, .warn = 1e-6, .warnpercent = 0.0,           \
      .hardwarn = 1.0 / 0.0, .diff_scale = 1.0, .metric = VKIMG_METRIC_ABS, .threshold = 0.1,              \
      .max_diff_pixels = -1, .max_diff_ratio = -1 }

/* Verdicts (idiff's order: a worse verdict is a larger number). */
enum { VKIMG_CMP_OK = 0, VKIMG_CMP_WARN = 1, VKIMG_CMP_FAIL = 2, VKIMG_CMP_MISMATCH = 3, VKIMG_CMP_ERROR = 4 };

typedef struct vkimg_compare_result {
    int verdict;            /* VKIMG_CMP_OK / WARN / FAIL */
    int channels;           /* channels compared */
    int width, height;      /* the comparison's extent (the larger one with allow_size_mismatch) */
    uint64_t pixels;        /* width * height */
    uint64_t compared;      /* pixels compared: not ignored, inside both images */
    uint64_t ignored;       /* pixels in an ignore region or the mask */
    uint64_t outside;       /* pixels of one image only (allow_size_mismatch): counted as different */
    double mae, rmse, psnr; /* ABS, over the compared samples; psnr = +inf when identical */
    double max_err;
    int max_x, max_y, max_c;
    uint64_t nfail, nwarn;  /* ABS: pixels with some channel's error > fail / > warn (outside included) */
    double pct_fail, pct_warn; /* % of the compared + outside pixels */
    uint64_t ndiff;         /* pixels that differ: ABS nfail, YIQ over the threshold (outside included) */
    uint64_t naa;           /* YIQ with aa: anti-aliased pixels over the threshold, not counted */
    double diff_ratio;      /* ndiff / (compared + outside) */
    double ssim;            /* NAN unless opts.ssim */
    vkimg_image diff;       /* if opts.want_diff: ABS: U8 |a-b| * diff_scale per channel; YIQ: RGBA,
                               pixelmatch's picture (gray background, red differences, yellow
                               anti-aliasing); ignored pixels dimmed (free it); YIQ with
                               diff_indexed: 1 channel of indices into vkimg_compare_palette() */
} vkimg_compare_result;

/* The 256 colours of an indexed YIQ difference image (opts.diff_indexed), each
 * r | g << 8 | b << 16 | a << 24: 0 red (a differing pixel), 1 yellow (an
 * anti-aliased one), k >= 2 the opaque gray k (the faded picture and ignored pixels). */
VKIMG_API const uint32_t *vkimg_compare_palette(void);

/* a and b must have the same size (unless allow_size_mismatch) and channel count
 * (else VKIMG_E_USAGE with result->verdict = VKIMG_CMP_MISMATCH). */
VKIMG_API int vkimg_compare(vkimg_ctx *ctx, const vkimg_image *a, const vkimg_image *b, const vkimg_compare_opts *o,
                            vkimg_compare_result *r, vkimg_timing *timing, vkimg_err *e);

#ifdef __cplusplus
}
#endif
#endif
