/* exec: device programs. One run engine (run.c) takes every program of the library
 * to the device -- a pipeline on an image (plan.c), stats, compare, bench -- and is
 * the one place that knows how: one queue, a split transfer queue, or no copies
 * where device memory is host memory; timestamps and their conversion to time.
 * Kernels are recorded through a vki_rec (record.c), which orders every dispatch
 * after the one before it. */
#ifndef VKI_EXEC_H
#define VKI_EXEC_H

#include "gpu/gpu.h"
#include "pipeline/pipeline.h"

/* ---------------------------------------------------------------- recording */

typedef struct vki_rec {
    vki_gpu *gpu;
    VkCommandBuffer cmd;
    vkimg_err *e;
    int ndispatch;
    bool transfer_pending; /* transfer writes (uploads, fills) the next dispatch must see */
    /* scratch buffers owned by the run, freed after it */
    vki_buf *scratch;
    int nscratch, cap_scratch;
    /* a dry recording (vki_plan_prepare): no command buffer, no buffers (their
     * addresses are 0); the dispatches are only listed, to create their kernels */
    bool dry;
    struct vki_kernel_req *req;
    int nreq, cap_req;
    /* the texel source of the next dispatch (vki_rec_texel_src), 0 if none,
     * whether the kernel reads it, and the buffer views made for them,
     * destroyed with the scratch buffers */
    VkDeviceAddress tex_src;
    bool tex_used;
    uint32_t tex_bytes; /* a texel's bytes: 8 (R32G32_UINT) or 16 (R32G32B32A32_UINT) */
    VkBufferView *views;
    int nviews, cap_views;
} vki_rec;

/* A kernel a dry recording asked for (the arguments vki_kernel_get takes). */
typedef struct vki_kernel_req {
    char name[64]; /* a copy: dispatchers may name a kernel from a buffer of their own */
    const uint32_t *spv;
    size_t spv_size;
    vki_spec spec;
    uint32_t push_size;
} vki_kernel_req;

/* The SPIR-V of shader NAME (shaders/ops/NAME.comp, shaders/analysis/NAME.comp),
 * embedded at build time, as the two arguments the dispatch functions take. */
#define VKI_SPV(name) vki_spv_##name, sizeof vki_spv_##name

/* Gets the kernel and records a dispatch with push constants. Before every
 * dispatch but the first of a run it records a compute->compute memory barrier,
 * so dependent dispatches are always ordered (and a transfer->compute barrier
 * after uploads and fills). */
int vki_rec_dispatch(vki_rec *r, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                     const void *push, uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz);
/* Like vki_rec_dispatch for `groups` workgroups in one dimension: folds the
 * count into x and y within maxComputeWorkGroupCount; the shader recovers the
 * linear index with group_linear() (common.glsl). */
int vki_rec_dispatch_1d(vki_rec *r, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                        const void *push, uint32_t push_size, uint64_t groups);
/* Texel sources (gpu.h texel): a kernel that declares the texel buffer (set 0,
 * binding 0: a usamplerBuffer of 64-bit words) gets it from vki_rec_texel_src
 * before its dispatch, for the bytes from address a. True: the view starts at
 * a (a live buffer holds a at an offset minTexelBufferOffsetAlignment allows),
 * and the kernel reads through it (its TEXEL constant 1); false: the view is
 * of a's buffer from its start, and the kernel must read through the address
 * (TEXEL 0; also with VKIMG_TEXEL_SRC=0, for tests). In a dry recording:
 * whether the device reads texel buffers. */
bool vki_rec_texel_src(vki_rec *r, VkDeviceAddress a);
/* The same with texels of `bytes` bytes (8 or 16: R32G32B32A32_UINT, 128-bit words). */
bool vki_rec_texel_src_n(vki_rec *r, VkDeviceAddress a, uint32_t bytes);
/* Device-local scratch memory that lives until the run ends. */
int vki_rec_scratch(vki_rec *r, VkDeviceSize size, const char *what, VkDeviceAddress *addr);
/* Like vki_rec_scratch, initialized on the device before the next dispatch:
 * with `init` (at most 64 KiB), or zeros. */
int vki_rec_scratch_init(vki_rec *r, VkDeviceSize size, const void *init, const char *what, VkDeviceAddress *addr);
/* Copies bytes from src to dst (device addresses of live buffers; not overlapping)
 * after the dispatches recorded so far, made visible before the next. */
int vki_rec_copy(vki_rec *r, VkDeviceAddress src, VkDeviceAddress dst, VkDeviceSize bytes, const char *what);
/* Small host-written constant data (weights) the shaders can read. */
int vki_rec_const(vki_rec *r, const void *data, size_t size, const char *what, VkDeviceAddress *addr);
/* Frees the scratch buffers of a recording (after its submission finished). */
void vki_rec_release(vki_rec *r);

/* Workgroup size for 1D kernels: min(256, device limits). */
uint32_t vki_wg_1d(const vki_gpu *g);
/* Workgroups for a grid-stride kernel over `items` with wg invocations each
 * doing about per_inv items, at most `cap` workgroups. */
uint64_t vki_stride_groups(uint64_t items, uint32_t wg, uint32_t per_inv, uint64_t cap);

/* The runs shape of a point op (shaders/lib/runs.glsl): chunks of 48 8-bit samples
 * an invocation, or 0 for the per-pixel shape. On CPU devices (lavapipe) 16; on
 * GPUs `on_gpu`, the op's measured choice (0 where the per-pixel shape is as
 * fast), for 8-bit outputs only.
 * VKIMG_RUNS=N (0..64) overrides (tests, benchmarks; =gpu: the GPUs' choices on
 * any device). Needs 8-bit input, 8-bit or
 * f32 output and 8-byte aligned buffers: 0 otherwise. */
uint32_t vki_runs(const vki_gpu *g, const struct vki_step *s, uint32_t on_gpu);
/* Whether to take an op's CPU shape (its *_lines.spv): on CPU devices, where the
 * environment variable env is not set to 0, and on any device where it is 1
 * (tests); never where the `bytes` the shape addresses pass its 32-bit byte
 * offsets. */
bool vki_cpu_shape(const vki_gpu *g, const char *env, uint64_t bytes);
/* Records a dispatch of the runs shape (runs > 0, from vki_runs): spec (whose
 * local size has wg invocations) with RUNS = runs, enough workgroups for the
 * step's input at `runs` chunks an invocation, named NAME-runs. The other shape
 * leaves RUNS at the shaders' default, 0. */
int vki_rec_dispatch_runs(vki_rec *r, const struct vki_step *s, uint32_t runs, uint32_t wg, const char *name,
                          const uint32_t *spv, size_t spv_size, const vki_spec *spec, const void *push,
                          uint32_t push_size);

/* Push-constant address type shared with GLSL (uvec2 lo, hi). */
typedef struct vki_addr { uint32_t lo, hi; } vki_addr;
static inline vki_addr vki_addr_of(VkDeviceAddress a) { vki_addr r = { (uint32_t)a, (uint32_t)(a >> 32) }; return r; }

/* ---------------------------------------------------------------- the run engine */

typedef struct vki_run vki_run;

/* Starts a device program. Declare its inputs and outputs first, then record its
 * kernels through vki_run_rec(), marking the end of each stage, then submit. With
 * `timing`, stage times come from timestamps (where the queue has them). */
int vki_run_begin(vki_gpu *g, bool timing, vki_run **out, vkimg_err *e);
/* An input of `bytes` copied from `data` (NULL: the caller writes it: *host then
 * points to `bytes` of host memory to fill before vki_run_submit). Where device
 * memory is host memory it goes straight into the device buffer, else through a
 * staging buffer (copied on the transfer queue where there is one). The device
 * buffer is padded to 12 bytes (kernels may read packed RGB8 as words). */
int vki_run_input(vki_run *r, const void *data, size_t bytes, const char *what, VkDeviceAddress *addr, void **host);
/* An input the caller wrote into a buffer of its own (vki_devimg_alloc: mapped
 * device memory where g->uma, else upload staging): no host copy; the buffer
 * stays the caller's and must live until the run ends. */
int vki_run_input_buf(vki_run *r, const vki_buf *src, size_t bytes, const char *what, VkDeviceAddress *addr);
/* Whether the device reads input i in the caller's memory (where device memory is
 * the host's: vki_run_input_buf's buffer, or vki_run_input's data imported) */
bool vki_run_input_in_place(const vki_run *r, int i);
/* An output of `bytes` that the kernels write at *addr and the host reads after
 * vki_run_submit through vki_run_output_data(r, *slot); `zero`: cleared on the
 * device before the kernels. */
int vki_run_output(vki_run *r, size_t bytes, bool zero, const char *what, VkDeviceAddress *addr, int *slot);
/* An output the kernels write straight into host memory through *addr (bytes,
 * not cleared; no copy: for a small result whose size only the device knows, in
 * a buffer sized for the most it may be). Read it as vki_run_output's. */
int vki_run_output_host(vki_run *r, size_t bytes, const char *what, VkDeviceAddress *addr, int *slot);
/* The recording context of the kernels; the first call ends the declarations. */
vki_rec *vki_run_rec(vki_run *r);
/* Ends a stage (the kernels recorded since the last mark): with timing, its GPU
 * time is reported under `name`. At most VKIMG_MAX_STAGES marks. */
void vki_run_mark(vki_run *r, const char *name);
/* Submits, waits, and makes the outputs readable by the host. */
int vki_run_submit(vki_run *r);
/* After vki_run_submit: moves output slot's host-visible buffer (the readback
 * buffer, or the device buffer where g->uma) to *b, for the caller to own
 * (vki_devimg_adopt); vki_run_output_data gives NULL for it afterwards. */
int vki_run_take_output(vki_run *r, int slot, vki_buf *b);
/* After vki_run_submit: the host memory holding output `slot` (valid until vki_run_end). */
const void *vki_run_output_data(const vki_run *r, int slot);
/* After vki_run_submit: the device time of the copies of the inputs and of the
 * outputs (host-measured on a transfer queue without timestamps; 0 where there
 * are none: no timing, or device memory is host memory). */
void vki_run_copies(const vki_run *r, double *up_ms, double *down_ms);
/* After vki_run_submit: upload, readback (device or host-measured copies, plus
 * the host writes of inputs copied from data), each stage's GPU time, GPU total.
 * decode, encode and total are left to the caller. */
void vki_run_times(const vki_run *r, vkimg_timing *t);
/* Frees everything of the run (accepts NULL). */
void vki_run_end(vki_run *r);

/* ---------------------------------------------------------------- JPEG stages (jpeg.c) */

struct vkimg_coded;
/* Bytes of the device buffer the decode writes a w x h x c image into. */
size_t vki_jpeg_pixels_bytes(int w, int h, int c);
/* Records the decode of a coded image (coefficients at `coefs`) into packed
 * 8-bit pixels at dst (vki_jpeg_pixels_bytes; 1 channel for grayscale, else 3). */
int vki_jpeg_rec_decode(vki_rec *r, const struct vkimg_coded *cd, VkDeviceAddress coefs, int w, int h,
                        VkDeviceAddress dst);
/* Records the Huffman decoding of a coded image's scan (cd->entropy: the blob
 * vki_shared.h's VKI_JH_* describe, at `blob`) into its coefficients, *coefs
 * (scratch), and writes its status at `status` (vki_jpeg_sync_rounds() + 1
 * uints, zeroed): word 0 VKI_JH_ERR_* bits, word vki_jpeg_sync_rounds() nonzero
 * where the subsequences did not synchronize. */
int vki_jpeg_rec_entropy(vki_rec *r, const struct vkimg_coded *cd, VkDeviceAddress blob, VkDeviceAddress status,
                         VkDeviceAddress *coefs);
/* Rounds of the decoding's synchronization (6; VKIMG_JPEG_SYNC_ROUNDS 2..64). */
int vki_jpeg_sync_rounds(void);
/* Records the encode of w x h x c 8-bit pixels at src into the coefficients of
 * cd's layout at `coefs` (cd from vki_jpeg_coded_layout). */
int vki_jpeg_rec_encode(vki_rec *r, const struct vkimg_coded *cd, VkDeviceAddress src, int w, int h, int c,
                        VkDeviceAddress coefs);

/* Whether the device can Huffman-code an image of cd's layout (vki_jpeg_coded_layout):
 * the sums of its blocks' bits fit 32 bits. */
bool vki_jpeg_huff_encode_fits(const struct vkimg_coded *cd);
/* The bytes of the host buffer the device writes the entropy-coded data into
 * (vki_run_output_host) and 16: as many as the coefficients' (a JPEG's data is a
 * fraction of them; where it is not, VKI_JE_ERR_FULL; VKIMG_JPEG_CODED_MAX=N
 * sets fewer). */
size_t vki_jpeg_huff_out_bytes(const struct vkimg_coded *cd);
/* Records the Huffman coding of the coefficients at `coefs` (cd's layout, from
 * vki_jpeg_rec_encode) into the entropy-coded segment libjpeg's
 * jpeg_write_coefficients would write for them (standard tables, no restart
 * intervals, 0xFF bytes stuffed, the last byte padded with 1-bits), written into
 * host memory at `out` (vki_jpeg_huff_out_bytes); status (2 uints, zeroed): [0]
 * VKI_JE_ERR_* bits, [1] the segment's length. */
int vki_jpeg_rec_huff_encode(vki_rec *r, const struct vkimg_coded *cd, VkDeviceAddress coefs, VkDeviceAddress out,
                             VkDeviceAddress status);

/* ---------------------------------------------------------------- pipelines */

/* One op of a planned pipeline, as its record function sees it. Data is packed
 * and interleaved: sample (y*w + x)*c + k, of fmt. */
typedef struct vki_step {
    const vki_op_desc *desc;
    const vki_args *args;
    int index;           /* position in the pipeline */
    int w, h;            /* input size */
    int out_w, out_h;    /* output size (the input's unless the op's out_size says otherwise) */
    int geo_w, geo_h;    /* the input size the op's geometry was resolved against: w x h, or,
                            before an exact_size op, the size in the file the decoder shrank */
    int in_c, out_c;
    vkimg_fmt in_fmt, out_fmt;
    VkDeviceAddress in, out;
    /* the last op of a pipeline that writes several images (mipmaps): nout images,
     * outs[0] == out, outs_w/h[k] their sizes; else 1 */
    int nout;
    const VkDeviceAddress *outs;
    const int *outs_w, *outs_h;
    bool in_packed_rgb8_words; /* in is 4-byte aligned and padded to 12 bytes */
    bool opaque_alpha;         /* the input has alpha and it is all at its maximum (vki_plan.opaque) */
    uint32_t levels;     /* integer levels of the pipeline's input: 255, or 65535 for 16-bit
                            (ops with exact integer arithmetic quantize to these) */
} vki_step;

/* Fills the common spec constants (local size, formats, channels) of a step. */
void vki_step_spec(const vki_step *s, vki_spec *spec, uint32_t lx, uint32_t ly, uint32_t lz);

/* Records a per-pixel op: one invocation per pixel of a 1D dispatch, with the
 * push constants the shader declares as `PIXEL_PUSH` (common.glsl: src, dst,
 * npx) followed by `params` (params_size bytes of 4-byte scalars, at most 64).
 * spec may carry the op's own named constants (NULL: none). The shader includes
 * runs.glsl and maps pixels with run_map where RUNS > 0 (vki_runs: CPU devices;
 * on GPUs for 1-2 channels; vki_rec_dispatch_runs). */
int vki_rec_pixels(vki_rec *r, const vki_step *s, const char *name, const uint32_t *spv, size_t spv_size,
                   const vki_spec *spec, const void *params, uint32_t params_size);

/* A pipeline planned for one input: its shape (sizes, channels), formats, and
 * the intermediate buffers (ping-pong, f32). The input and the outputs live in
 * the run: the caller sets `in` and `outs` before vki_plan_record. */
typedef struct vki_plan {
    const struct vkimg_pipeline *p;
    int n;
    vki_shape s;
    vkimg_fmt in_fmt, out_fmt;
    size_t in_bytes, out_bytes[VKI_MAX_OUTPUTS];
    VkDeviceAddress in, outs[VKI_MAX_OUTPUTS];
    vki_buf inter[2];
    /* output 0 is the input as it is (vki_op_desc.first_output_is_input, one op,
     * the same format): the caller may set outs[0] = in instead of an output */
    bool out0_is_input;
    bool cpu; /* the device is a CPU (lavapipe): see vki_plan_inter_fmt */
    /* The input's alpha is all at its maximum (the caller looked: apply.c plan_for):
     * the steps of the ops from the first up to one that does not copy alpha
     * (vki_op_desc.alpha_copied) say so (vki_step.opaque_alpha). */
    bool opaque;
} vki_plan;

/* Whether the plan's only op may write its output over its input (vki_op_desc.in_place)
 * with pl->in as the address of both; the caller then sets outs[0] = in. */
bool vki_plan_in_place(const vki_plan *pl, const vki_gpu *g);

/* The format of the image between op i and op i + 1: f32, or on CPU devices
 * - the input's format where ops 0..i only move pixels (vki_op_desc.moves: an
 *   auto-orient or a crop before a filter; VKIMG_INTER_MOVES=0 keeps f32);
 * - u16 where the pipeline's input is 8- or 16-bit and its output 8-bit, ops
 *   0..i keep [0, 1] in [0, 1] (vki_op_desc.unit_out, or moves), an alpha
 *   channel is still the input's (alpha_copied, or moves: a blurred alpha's
 *   small values would lose their digits) and op i + 1 reads u16 as well
 *   (u16_in): half the bytes to write, touch and read, and the CPU shapes of
 *   blur take 8- and 16-bit input. The u16 step is 1/257 of an 8-bit one (a
 *   16-bit output would be off by up to 0.8 of its step before rounding:
 *   test_chains). VKIMG_INTER_U16=0 keeps f32. */
vkimg_fmt vki_plan_inter_fmt(const vki_plan *pl, int i);

/* Whether a run of the plan looks at the input's alpha (vki_plan.opaque: on CPU
 * devices, 8- and 16-bit input with alpha, where an op with a faster path for
 * opaque input comes before any op that neither copies nor moves alpha;
 * VKIMG_OPAQUE=0 never looks). */
bool vki_plan_looks_at_alpha(const vki_plan *pl);

/* Whether a run that knows the input's alpha is all at its maximum (vki_plan.opaque)
 * may leave it behind where the caller keeps no alpha (vkimg_run_opts.alpha_unused):
 * the plan looks at alpha (vki_plan_looks_at_alpha) and vkimg_pipeline_keeps_opaque
 * (every op copies or moves alpha or has an opaque path that is its plain one:
 * alpha_copied, moves, opaque_fast; none makes data). The colour of the result is
 * then that of the image without its alpha, run with one channel fewer.
 * VKIMG_DROP_ALPHA=0 never leaves it. */
bool vki_plan_may_drop_alpha(const vki_plan *pl);

/* Validates the pipeline for a w x h x c image (geo_w x geo_h: see vki_shape) and
 * creates its intermediates. */
int vki_plan_create(vki_gpu *g, const struct vkimg_pipeline *p, int w, int h, int c, int geo_w, int geo_h,
                    vkimg_fmt in_fmt, vkimg_fmt out_fmt, vki_plan *pl, vkimg_err *e);
void vki_plan_destroy(vki_gpu *g, vki_plan *pl);
/* Records every op into the run, one stage (mark) per op. */
int vki_plan_record(vki_plan *pl, vki_run *run);
/* Creates the kernels a run of p on a w x h x c image would record (a dry
 * recording of its ops lists them), several at once on as many threads as the
 * host has cores, so that the run's own recording finds them made (where the run
 * will look at the input's alpha, those of an opaque input as well; where
 * alpha_unused and vkimg_pipeline_keeps_opaque, those of the image without its
 * alpha first, as p_without runs it (NULL: p): pixels are not known here).
 * Creates no buffer and records nothing; the kernels stay in g's cache. */
int vki_plan_prepare(vki_gpu *g, const struct vkimg_pipeline *p, const struct vkimg_pipeline *p_without, int w, int h,
                     int c, int geo_w, int geo_h, vkimg_fmt in_fmt, vkimg_fmt out_fmt, bool alpha_unused,
                     vkimg_err *e);

#endif
