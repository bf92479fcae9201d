/* The Vulkan layer: instance/device choice, limits, memory, buffers, kernels
 * (compute pipelines + cache), command submission. No files, no CLI.
 *
 * Data lives in plain buffers reached from shaders through buffer device
 * addresses (push constants carry the addresses), so no descriptor sets and no
 * maxStorageBufferRange limit (128 MiB on lavapipe): the largest image is bound
 * by maxMemoryAllocationSize / maxBufferSize / heap sizes, which are queried. */
#ifndef VKI_GPU_H
#define VKI_GPU_H

#include "vkimg/vkimg.h"
#include <pthread.h>
#include <stdatomic.h>
#include <vulkan/vulkan.h>

const char *vki_vk_result_name(VkResult r);

/* Checks a VkResult; on failure fills e ("vkFoo: VK_ERROR_… (what)") and jumps
 * to `fail`. Needs `vkimg_err *e` in scope. */
#define VKI_VK(call)                                                                   \
    do {                                                                               \
        VkResult vki_r_ = (call);                                                      \
        if (vki_r_ != VK_SUCCESS) {                                                    \
            vki_fail_vk(e, #call, vki_r_);                                             \
            goto fail;                                                                 \
        }                                                                              \
    } while (0)
int vki_fail_vk(vkimg_err *e, const char *call, VkResult r);

typedef struct vki_limits {
    uint32_t max_shared;          /* maxComputeSharedMemorySize (bytes) */
    uint32_t max_wg_invocations;  /* maxComputeWorkGroupInvocations */
    uint32_t max_wg_size[3];
    uint32_t max_wg_count[3];
    uint32_t max_push;            /* maxPushConstantsSize */
    uint32_t subgroup_size;
    uint32_t max_image_2d;        /* maxImageDimension2D (reported only) */
    VkDeviceSize max_alloc;       /* maxMemoryAllocationSize */
    VkDeviceSize max_buffer;      /* maxBufferSize (1.3) or max_alloc */
    VkDeviceSize device_heap;     /* size of the largest device-local heap */
    float timestamp_period;       /* ns per tick */
    uint32_t timestamp_bits;      /* 0 = no timestamps on the queue */
    uint32_t subgroup_ops;        /* VkSubgroupFeatureFlags in compute */
    uint32_t multiprocessors;     /* SMs (VK_NV_shader_sm_builtins) or CUs (VK_AMD_shader_core_properties); 0: unknown */
    bool int64;                   /* shaderInt64 (enabled when present) */
    bool float64;                 /* shaderFloat64 (enabled when present) */
} vki_limits;

typedef enum vki_mem {
    VKI_MEM_DEVICE,   /* device-local, shader read/write, transfer src/dst */
    VKI_MEM_UPLOAD,   /* host-visible, sequential writes, transfer src */
    VKI_MEM_READBACK, /* host-visible (cached if possible), transfer dst */
    VKI_MEM_CONST,    /* host-visible, shader-readable small data */
    VKI_MEM_MAPPED,   /* as DEVICE, and mapped: only where vki_gpu.uma */
    VKI_MEM_HOST_IN,  /* host-visible, cached if possible, transfer src: images the host decodes into
                         (write-combined memory would make a decoder's unaligned stores slow) */
    VKI_MEM_HOST_OUT, /* host memory (cached if possible, not the device's BAR) that shaders write through its
                         address: a small result the host reads, whose size only the device knows */
} vki_mem;

typedef struct vki_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    VkDeviceAddress addr; /* 0 unless shader-visible */
    void *map;            /* host-visible kinds */
    bool coherent;
    bool visible;         /* host-visible memory (mapped or not) */
    vki_mem kind;         /* with shared and size: the key of the buffer pool */
    bool shared;
    bool imported;        /* host memory of the caller's (vki_buf_import_host): freed, never pooled */
} vki_buf;

typedef struct vki_kernel vki_kernel;

#define VKI_POOL_MAX 256
#define VKI_SPARE_MAX 32

/* A one-shot command buffer with its own pool (see vki_cmd_begin below). */
typedef struct vki_cmd {
    VkCommandPool pool;
    VkCommandBuffer cmd;
    uint32_t fam; /* its queue family */
} vki_cmd;

typedef struct vki_gpu {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkDevice dev;
    int index;                  /* in vkEnumeratePhysicalDevices order ('vkimg devices') */
    VkQueue queue;              /* compute (and, without xqueue, everything) */
    uint32_t qfam;
    /* Transfer queue for the uploads and readbacks of vki_exec_run, so that one
     * image's copies overlap another's kernels: a queue of a transfer-only family
     * (xfam != qfam; NVIDIA has one), or with VKIMG_SPLIT_QUEUES=1 on a device
     * without one, a second queue of qfam (the same VkQueue when qfam has only one:
     * lavapipe), which runs the same semaphore path for tests. NULL / -1 when
     * absent or VKIMG_NO_TRANSFER_QUEUE=1. */
    VkQueue xqueue;
    int xfam;
    uint32_t xts_bits;          /* timestampValidBits of xfam */
    bool host_query_reset;      /* hostQueryReset enabled (transfer queues can't vkCmdResetQueryPool) */
    /* Device-local memory that the host maps cached (a CPU device such as
     * lavapipe, or an integrated GPU) and no transfer queue: exec writes the
     * input into the device buffer and reads the output from it, with no
     * staging copies (which there are plain memcpys through memory touched for
     * the first time). Off with VKIMG_NO_UMA=1 (tests: the staging path). */
    bool uma;
    /* Where g->uma and the device has VK_EXT_external_memory_host (lavapipe):
     * minImportedHostPointerAlignment, and exec takes an input already in
     * ordinary memory as it is (vki_buf_import_host) instead of copying it into
     * a device buffer (a copy into memory touched for the first time: 59 ms for
     * a 5120x2880 RGB image on this CI's lavapipe). 0: not so, or
     * VKIMG_NO_HOST_IMPORT=1. */
    VkDeviceSize host_import_align;
    PFN_vkGetMemoryHostPointerPropertiesEXT host_ptr_props;
    /* Texel sources: lavapipe turns every load through a buffer address or a
     * storage buffer into a loop over the SIMD lanes (a branch, a spill and a
     * scalar load per lane), but a texel buffer's fetch into one load per lane
     * and shuffles. So kernels shaped for CPU devices read their input through
     * a uniform texel buffer (R32G32_UINT: one 64-bit word a texel) bound as a
     * push descriptor (vki_rec_texel_src). On: the device has
     * VK_KHR_push_descriptor and is a CPU (VKIMG_TEXEL=0/1 overrides). */
    bool texel;
    PFN_vkCmdPushDescriptorSetKHR push_desc;
    VkDescriptorSetLayout tex_layout; /* set 0: binding 0, one uniform texel buffer (push descriptors) */
    VkDeviceSize tex_align;           /* minTexelBufferOffsetAlignment, at least 8 */
    uint32_t tex_max;                 /* maxTexelBufferElements */
    /* Dot products of packed 4 x 8-bit vectors in shaders (VK_KHR_shader_integer_dot_product,
     * enabled where offered): dot4 on; dot4_fast where the driver calls the unsigned packed form
     * accelerated (integerDotProduct4x8BitPackedUnsignedAccelerated). */
    bool dot4, dot4_fast;
    /* VKIMG_PIPELINE_STATS=1 on a device with VK_KHR_pipeline_executable_properties:
     * every pipeline is made with its statistics captured, and kernel.c prints
     * them (registers, spills: what the driver reports) to stderr as it makes it. */
    PFN_vkGetPipelineExecutablePropertiesKHR exec_props;
    PFN_vkGetPipelineExecutableStatisticsKHR exec_stats;
    /* the buffers alive (pooled ones too) that shaders see, to find the buffer of
     * an address (under plock) */
    struct vki_live {
        VkDeviceAddress addr;
        VkDeviceSize size;
        VkBuffer buf;
    } *live;
    int nlive, cap_live;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem;
    vki_limits lim;
    pthread_mutex_t lock;       /* kernel cache and submission to queue */
    pthread_mutex_t xlock;      /* submission to xqueue when it is not queue */
    bool lock_init;
    VkPipelineCache cache;
    char cache_path[1024]; /* on-disk pipeline cache ("" = off) */
    size_t cache_loaded;   /* bytes loaded from it */
    bool validate;
    atomic_int validation_msgs;
    vkimg_log_fn log;
    void *log_user;
    char desc[320];
    vki_kernel *kernels; /* created once per process, reused; the list under lock */
    pthread_cond_t kernel_cv; /* a kernel another thread was creating is ready (or failed) */
    /* idle buffers for reuse (see vki_buf_create), oldest first, under plock;
     * pool_cap: VKIMG_BUFFER_POOL_MB, default min(1 GiB, device heap / 8) */
    pthread_mutex_t plock;
    vki_buf pool[VKI_POOL_MAX];
    /* the Vulkan objects of finished runs, for the next ones (vki_cmd_recycle), under plock */
    struct vki_spare {
        vki_cmd cmds[VKI_SPARE_MAX];
        int ncmds;
        VkFence fences[VKI_SPARE_MAX];
        int nfences;
        VkSemaphore sems[VKI_SPARE_MAX];
        int nsems;
        VkQueryPool qps[VKI_SPARE_MAX];
        uint32_t qn[VKI_SPARE_MAX];
        int nqps;
    } spare;
    int pool_n;
    VkDeviceSize pool_bytes, pool_cap;
    bool poison; /* VKIMG_POISON (tests): buffers filled with 0xA5 as a run takes them (memory.c) */
    atomic_uint allocs;  /* vkAllocateMemory calls for buffers of our own (tests: reuse) */
    atomic_uint imports; /* host memory imported as buffers (vki_buf_import_host): the
                          * caller's memory, never pooled, so not in allocs (whether an
                          * input qualifies depends on where malloc put it) */
} vki_gpu;

/* The public context is a vki_gpu (ctx.c). */
struct vkimg_ctx {
    vki_gpu gpu;
};

int vki_gpu_create(vki_gpu *g, const vkimg_ctx_opts *o, vkimg_err *e);
/* Destroys every cached kernel (bench: to time pipeline creation again). */
void vki_gpu_drop_kernels(vki_gpu *g);
void vki_gpu_destroy(vki_gpu *g);
void vki_gpu_log(vki_gpu *g, vkimg_log_level lvl, const char *fmt, ...);

/* ---- buffers */

/* `what` names the buffer in errors ("working image 5120x2880x3 f32").
 * Buffers come from and go back to the context's pool of idle buffers
 * (vki_gpu.pool): a batch of same-sized images allocates, maps and pins its
 * buffers once, not per image. A pooled buffer holds what its last user left:
 * kernels must write what they read (they do; vki_rec_scratch_init clears).
 * vki_buf_destroy puts the buffer in the pool (at most pool_cap bytes, the
 * oldest freed first); only vki_gpu_destroy frees the pool. */
int vki_buf_create(vki_gpu *g, VkDeviceSize size, vki_mem kind, const char *what, vki_buf *b, vkimg_err *e);
void vki_buf_destroy(vki_gpu *g, vki_buf *b);
/* The buffer that holds address a (a live shader-visible buffer of ours): its
 * handle, the offset of a in it and the bytes from there. False if none. */
bool vki_buf_find(vki_gpu *g, VkDeviceAddress a, VkBuffer *buf, VkDeviceSize *off, VkDeviceSize *bytes);
/* Like vki_buf_create for a buffer that both queue and xqueue use (exec's
 * input and output images): VK_SHARING_MODE_CONCURRENT over the two families
 * when they differ, so no queue family ownership transfers are needed. */
int vki_buf_create_shared(vki_gpu *g, VkDeviceSize size, vki_mem kind, const char *what, vki_buf *b, vkimg_err *e);
/* The bytes p .. p + n - 1 of ordinary host memory as a shader-visible device
 * buffer of n bytes, no copy (g->host_import_align set, p and n multiples of
 * it; the memory must stay until the buffer is destroyed). Nonzero when the
 * driver refuses it (logged; e is left alone): the caller copies instead. */
int vki_buf_import_host(vki_gpu *g, const void *p, VkDeviceSize n, const char *what, vki_buf *b);
/* Makes host writes visible / device writes readable for non-coherent memory. */
int vki_buf_flush(vki_gpu *g, vki_buf *b, vkimg_err *e);
int vki_buf_invalidate(vki_gpu *g, vki_buf *b, vkimg_err *e);

/* The size of a buffer that a kernel reads an input of n bytes from (the
 * kernels read whole 4-byte words, packed RGB8 three of them at a time). */
static inline VkDeviceSize vki_input_buffer_size(size_t n) { return ((VkDeviceSize)n + 11) / 12 * 12; }
/* A shader-visible buffer's size: whole 16-byte words (a kernel may read the
 * word that holds its last byte whole: resize.comp's and blur.comp's wide loads). */
static inline VkDeviceSize vki_padded_size(VkDeviceSize n) { return (n + 15) / 16 * 16; }

/* ---- images in device-visible memory (devimg.c; vkimg_image_alloc_device) */

/* A vkimg_image in a new buffer of g that the run engine takes as an input
 * without a host copy: mapped device memory where g->uma, else upload staging. */
int vki_devimg_alloc(vki_gpu *g, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e);
/* Makes buffer b (mapped) the data of image im, which owns it from now on (*b
 * is cleared; on failure b is destroyed). */
int vki_devimg_adopt(vki_gpu *g, vki_buf *b, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e);
/* The buffer of im when its data is device-visible memory of g, else NULL. */
const vki_buf *vki_devimg_buf(const vkimg_image *im, const vki_gpu *g);

/* ---- kernels: one compute pipeline per (SPIR-V, specialization) */
/* Specialization constants: the ones every kernel has by their ids
 * (VKI_SPEC_* in vki_shared.h), a kernel's own by the names they have in its
 * shader: vki_kernel_get finds their ids in the SPIR-V (OpName + SpecId), so the
 * shader is the one place that numbers them, and a name it lacks is an error. */
#define VKI_MAX_SPEC 96 /* (resize's strip pass: 70 at most) */
typedef struct vki_spec {
    uint32_t n;
    uint32_t id[VKI_MAX_SPEC];
    uint32_t val[VKI_MAX_SPEC];       /* ints; floats as their bit pattern */
    const char *name[VKI_MAX_SPEC];   /* named constants (id unset until resolved) */
} vki_spec;
void vki_spec_set(vki_spec *s, uint32_t id, uint32_t val);
void vki_spec_setf(vki_spec *s, uint32_t id, float val);
void vki_spec_named(vki_spec *s, const char *name, uint32_t val);
void vki_spec_namedf(vki_spec *s, const char *name, float val);

struct vki_kernel {
    struct vki_kernel *next;
    const uint32_t *spv;
    size_t spv_size;
    vki_spec spec;
    uint32_t push_size;
    VkShaderModule module;
    VkPipelineLayout layout;
    VkPipeline pipe;
    bool texel; /* the shader reads a texel buffer at set 0, binding 0 (its layout has tex_layout) */
    bool ready; /* false while a thread creates it (outside the lock; others wait on kernel_cv) */
    char name[32];
};

/* Returns the cached kernel or builds it. push_size = bytes of push constants.
 * Thread-safe; different kernels are created at the same time by the threads
 * that ask for them (the context lock is not held while a pipeline compiles),
 * a thread asking for one being created waits for it. */
int vki_kernel_get(vki_gpu *g, const char *name, const uint32_t *spv, size_t spv_size,
                   const vki_spec *spec, uint32_t push_size, vki_kernel **out, vkimg_err *e);

/* ---- one-shot command buffers, each with its own pool so that several
 * threads can record at once (vkimg_run is thread-safe); submission is
 * serialized on the queue lock. */
int vki_cmd_begin(vki_gpu *g, vki_cmd *c, vkimg_err *e);
/* vki_cmd_begin for a queue of family fam (g->qfam or g->xfam). */
int vki_cmd_begin_fam(vki_gpu *g, uint32_t fam, vki_cmd *c, vkimg_err *e);
/* Ends, submits, waits (fence); frees c where that fails (else the caller
 * recycles or frees it). */
int vki_cmd_submit_wait(vki_gpu *g, vki_cmd *c, vkimg_err *e);
/* Ends c and submits it to q (g->queue or g->xqueue) under that queue's lock:
 * waits for `wait` (if any) before the stages in wait_stages, then signals
 * `signal` and `fence` (each optional). The caller waits and frees. */
int vki_cmd_submit(vki_gpu *g, VkQueue q, vki_cmd *c, VkSemaphore wait, VkPipelineStageFlags wait_stages,
                   VkSemaphore signal, VkFence fence, vkimg_err *e);
/* vki_cmd_begin with timestamps: when `want` and the queue has timestamps,
 * creates a query pool of n queries (*qp, else VK_NULL_HANDLE), resets it and
 * writes query 0 at the top of the pipe. The caller destroys *qp. */
int vki_cmd_begin_timed(vki_gpu *g, vki_cmd *c, bool want, uint32_t n, VkQueryPool *qp, vkimg_err *e);
/* Frees a command buffer that won't be submitted (accepts an empty one). */
void vki_cmd_abort(vki_gpu *g, vki_cmd *c);

/* The Vulkan objects of a run, kept for the next runs once it has finished
 * (vki_gpu.spare): NVIDIA's driver took 1.6 ms an image on the H200 machine to
 * create and destroy a run's command pools, query pools, fences and
 * semaphores. vki_cmd_recycle takes a command buffer whose work has finished
 * (or that was never submitted); the puts take objects no pending work uses
 * (fences are reset when taken again). Each frees what the spares cannot hold. */
void vki_cmd_recycle(vki_gpu *g, vki_cmd *c);
int vki_fence_get(vki_gpu *g, VkFence *f, vkimg_err *e);
void vki_fence_put(vki_gpu *g, VkFence f);
int vki_sem_get(vki_gpu *g, VkSemaphore *s, vkimg_err *e);
void vki_sem_put(vki_gpu *g, VkSemaphore s);
/* A timestamp query pool of n queries (not reset). */
int vki_query_get(vki_gpu *g, uint32_t n, VkQueryPool *qp, vkimg_err *e);
void vki_query_put(vki_gpu *g, VkQueryPool qp, uint32_t n);
/* Destroys the spares (vki_gpu_destroy). */
void vki_spare_destroy(vki_gpu *g);

/* Records a global memory barrier. */
void vki_cmd_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                     VkAccessFlags dst_access);

/* Milliseconds between two timestamps a, b of a queue whose family has `bits`
 * valid bits (the difference is taken modulo 2^bits): the one conversion of
 * timestamps to time. */
double vki_ts_ms(const vki_gpu *g, uint64_t a, uint64_t b, uint32_t bits);

#endif
