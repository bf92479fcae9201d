/* Internals of the gpu layer shared between its files (not used above it). */
#ifndef VKI_GPU_PRIV_H
#define VKI_GPU_PRIV_H

#include "gpu/gpu.h"

/* What one physical device offers, and why it can't be used (if so). */
typedef struct dev_info {
    VkPhysicalDevice phys;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceDriverProperties driver;
    VkPhysicalDeviceSubgroupProperties subgroup;
    VkPhysicalDeviceMemoryProperties mem;
    vki_limits lim;
    int qfam;
    uint32_t qcount;       /* queues in qfam */
    int xfam;              /* a transfer-only family, else -1 */
    uint32_t xcount, xts_bits;
    bool host_query_reset;
    const char *unusable; /* NULL if usable */
} dev_info;

/* discover.c: the instance (with validation and its messenger when asked), the
 * devices, the default choice and --device selection. vki_device_pick returns the
 * index, or -(error code) with e filled. */
int vki_instance_create(vki_gpu *g, bool validate, vkimg_err *e);
/* Destroys the messenger and the instance (after the device). */
void vki_instance_destroy(vki_gpu *g);
/* Whether the physical device offers the device extension name. */
bool vki_has_device_ext(VkPhysicalDevice pd, const char *name);
int vki_devices_enumerate(VkInstance inst, dev_info **out, uint32_t *count, vkimg_err *e);
int vki_device_pick(const dev_info *d, uint32_t n, const char *sel, vkimg_err *e);
void vki_device_describe(const dev_info *d, char *buf, size_t n);

/* cache.c: the on-disk pipeline cache, read into g->cache when the device is
 * created, written back (atomically, when it grew) when it is destroyed. */
int vki_cache_open(vki_gpu *g, const vkimg_ctx_opts *o, vkimg_err *e);
void vki_cache_close(vki_gpu *g);

/* memory.c: the pool of idle buffers (its capacity from the device heap or
 * VKIMG_BUFFER_POOL_MB); trimming frees every pooled buffer, under the pool's
 * lock (vkimg_ctx_trim, and vki_gpu_destroy). */
void vki_pool_init(vki_gpu *g);
void vki_pool_trim(vki_gpu *g);

#endif
