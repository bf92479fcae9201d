/* exec: plans device resources for a pipeline, records one command buffer per
 * image (upload copy, dispatches with barriers, timestamps, readback copy). */
#ifndef VKI_EXEC_H
#define VKI_EXEC_H

#include "gpu.h"
#include "op.h"

/* One op of a planned pipeline, as its record function sees it. Data is packed
 * and interleaved: sample (y*w + x)*c + k, of fmt. */
typedef struct vki_step {
    const vki_op_desc *desc;
    const vki_args *args;
    int index;           /* position in the pipeline */
    int w, h;
    int in_c, out_c;
    vkimg_fmt in_fmt, out_fmt;
    VkDeviceAddress in, out;
    bool in_packed_rgb8_words; /* in is 4-byte aligned and padded to 12 bytes */
    uint32_t levels;     /* integer levels of the pipeline's input: 255, or 65535 for 16-bit
                            (ops with exact integer arithmetic quantize to these) */
} vki_step;

/* Spec-constant ids shared by every shader (shaders/common.glsl). */
enum {
    VKI_SPEC_LX = 0, VKI_SPEC_LY = 1, VKI_SPEC_LZ = 2,
    VKI_SPEC_IN_FMT = 3, VKI_SPEC_OUT_FMT = 4, VKI_SPEC_IN_C = 5, VKI_SPEC_OUT_C = 6,
    VKI_SPEC_OP = 8, /* first id free for an op's own constants */
};

typedef struct vki_rec {
    vki_gpu *gpu;
    VkCommandBuffer cmd;
    vkimg_err *e;
    int ndispatch;
    /* scratch buffers owned by the run, freed after it */
    vki_buf *scratch;
    int nscratch, cap_scratch;
} vki_rec;

/* Fills the common spec constants (local size, formats, channels) of a step. */
void vki_step_spec(const vki_step *s, vki_spec *spec, uint32_t lx, uint32_t ly, uint32_t lz);

/* Gets the kernel and records a dispatch with push constants. Before every
 * dispatch but the first of a run it records a compute->compute memory barrier,
 * so dependent dispatches are always ordered. */
int vki_rec_dispatch(vki_rec *r, const char *name, const uint32_t *spv, size_t spv_size,
                     const vki_spec *spec, const void *push, uint32_t push_size,
                     uint32_t gx, uint32_t gy, uint32_t gz);
/* Like vki_rec_dispatch for `groups` workgroups in one dimension: folds the
 * count into x and y within maxComputeWorkGroupCount; the shader recovers the
 * linear index with vki_group_linear() (common.glsl). */
int vki_rec_dispatch_1d(vki_rec *r, const char *name, const uint32_t *spv, size_t spv_size,
                        const vki_spec *spec, const void *push, uint32_t push_size, uint64_t groups);
/* Device-local scratch memory that lives until the run ends. */
int vki_rec_scratch(vki_rec *r, VkDeviceSize size, const char *what, VkDeviceAddress *addr);
/* Like vki_rec_scratch, initialized on the device before the next dispatch
 * (recorded update/fill + barrier): with `init` (at most 64 KiB), or zeros. */
int vki_rec_scratch_init(vki_rec *r, VkDeviceSize size, const void *init, const char *what, VkDeviceAddress *addr);
/* Small host-written constant data (weights) the shaders can read. */
int vki_rec_const(vki_rec *r, const void *data, size_t size, const char *what, VkDeviceAddress *addr);

/* Upload: creates a host staging buffer holding a copy of data and a device
 * buffer (padded to a multiple of 12 bytes) to receive it; where device memory
 * is host memory (vki_gpu.uma) the data goes straight into the device buffer
 * and stage is left empty. */
int vki_stage_create(vki_gpu *g, const void *data, size_t bytes, const char *what, vki_buf *stage, vki_buf *dev,
                     vkimg_err *e);
/* Records the staging copy (none for an empty stage: the host wrote dev before
 * the submission) and a transfer->compute barrier, which also orders transfer
 * writes recorded before it. */
void vki_stage_record(VkCommandBuffer cmd, const vki_buf *stage, const vki_buf *dev);
/* Records compute->transfer barrier, the copy into rb, transfer->host barrier. */
void vki_readback_record(VkCommandBuffer cmd, const vki_buf *dev, const vki_buf *rb, VkDeviceSize bytes);

/* Workgroups for a grid-stride kernel over `items` with wg invocations each
 * doing about per_inv items, at most `cap` workgroups (enough to fill a GPU;
 * fewer means less per-workgroup merge work). */
uint64_t vki_stride_groups(uint64_t items, uint32_t wg, uint32_t per_inv, uint64_t cap);

/* Workgroup size for 1D kernels: min(256, device limits). */
uint32_t vki_wg_1d(const vki_gpu *g);

/* A pipeline planned for one image size: channels per stage, formats, and the
 * device buffers (input, ping-pong intermediates in f32, output). */
typedef struct vki_plan {
    const struct vkimg_pipeline *p;
    int n, w, h;
    int chans[VKIMG_MAX_STAGES + 1];
    vkimg_fmt in_fmt, out_fmt;
    size_t in_bytes, out_bytes;
    vki_buf inb, outb, inter[2];
} vki_plan;

/* Validates the pipeline for a w x h x c image and creates its buffers (the
 * input buffer only if alloc_input; else the caller fills pl->inb). */
int vki_plan_create(vki_gpu *g, const struct vkimg_pipeline *p, int w, int h, int c, vkimg_fmt in_fmt,
                    vkimg_fmt out_fmt, bool alloc_input, vki_plan *pl, vkimg_err *e);
void vki_plan_destroy(vki_gpu *g, vki_plan *pl);
/* Records every op; with qp, writes timestamp ts0 + i + 1 after op i. */
int vki_plan_record(vki_plan *pl, vki_rec *rec, VkQueryPool qp, uint32_t ts0);
/* Frees the scratch buffers of a recording (after its submission finished). */
void vki_rec_release(vki_rec *r);

/* Push-constant address type shared with GLSL (uvec2 lo, hi). */
typedef struct vki_addr { uint32_t lo, hi; } vki_addr;
static inline vki_addr vki_addr_of(VkDeviceAddress a) { vki_addr r = { (uint32_t)a, (uint32_t)(a >> 32) }; return r; }

#endif
