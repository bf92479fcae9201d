/* Memory types, buffers and the pool of idle buffers. */
#include "gpu/gpu_priv.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find_memory(const vki_gpu *g, uint32_t bits, VkMemoryPropertyFlags need, VkMemoryPropertyFlags want,
                       VkMemoryPropertyFlags avoid)
{
    int best = -1, best_score = -1;
    for (uint32_t i = 0; i < g->mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = g->mem.memoryTypes[i].propertyFlags;
        if (!(bits & (1u << i)) || (f & need) != need)
            continue;
        int score = 2 * __builtin_popcount(f & want) + !(f & avoid);
        if (score > best_score) {
            best = (int)i;
            best_score = score;
        }
    }
    return best;
}

static double mib(VkDeviceSize s) { return s / 1048576.0; }

/* The live list (gpu.h): shader-visible buffers are listed while they exist. */
static bool live_add(vki_gpu *g, const vki_buf *b)
{
    bool ok = true;
    pthread_mutex_lock(&g->plock);
    if (g->nlive == g->cap_live) {
        int cap = g->cap_live ? 2 * g->cap_live : 32;
        struct vki_live *nl = realloc(g->live, (size_t)cap * sizeof *nl);
        if (nl) {
            g->live = nl;
            g->cap_live = cap;
        } else
            ok = false;
    }
    if (ok)
        g->live[g->nlive++] = (struct vki_live){ .addr = b->addr, .size = vki_padded_size(b->size), .buf = b->buf };
    pthread_mutex_unlock(&g->plock);
    return ok;
}

static void live_remove(vki_gpu *g, VkBuffer buf)
{
    pthread_mutex_lock(&g->plock);
    for (int i = 0; i < g->nlive; i++)
        if (g->live[i].buf == buf) {
            g->live[i] = g->live[--g->nlive];
            break;
        }
    pthread_mutex_unlock(&g->plock);
}

bool vki_buf_find(vki_gpu *g, VkDeviceAddress a, VkBuffer *buf, VkDeviceSize *off, VkDeviceSize *bytes)
{
    bool found = false;
    pthread_mutex_lock(&g->plock);
    for (int i = 0; i < g->nlive && !found; i++) {
        const struct vki_live *l = &g->live[i];
        if (a >= l->addr && a - l->addr < l->size) {
            *buf = l->buf;
            *off = a - l->addr;
            *bytes = l->size - *off;
            found = true;
        }
    }
    pthread_mutex_unlock(&g->plock);
    return found;
}

static int buf_create(vki_gpu *g, VkDeviceSize size, vki_mem kind, bool shared, const char *what, vki_buf *b,
                      vkimg_err *e);
static void buf_free(vki_gpu *g, vki_buf *b);

int vki_buf_create(vki_gpu *g, VkDeviceSize size, vki_mem kind, const char *what, vki_buf *b, vkimg_err *e)
{
    return buf_create(g, size, kind, false, what, b, e);
}

int vki_buf_create_shared(vki_gpu *g, VkDeviceSize size, vki_mem kind, const char *what, vki_buf *b, vkimg_err *e)
{
    return buf_create(g, size, kind, true, what, b, e);
}

int vki_buf_import_host(vki_gpu *g, const void *p, VkDeviceSize n, const char *what, vki_buf *b)
{
    memset(b, 0, sizeof *b);
    const VkExternalMemoryHandleTypeFlagBits ht = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    const VkDeviceSize a = g->host_import_align;
    if (!a || !g->host_ptr_props || (uintptr_t)p % a || n % a)
        return -1;
    VkExternalMemoryBufferCreateInfo ext = { .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                             .handleTypes = (VkExternalMemoryHandleTypeFlags)ht };
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .pNext = &ext,
        .size = n,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT | (g->texel ? VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT : 0),
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkMemoryHostPointerPropertiesEXT hp = { .sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT };
    const char *call = "vkCreateBuffer";
    VkResult r = vkCreateBuffer(g->dev, &bci, NULL, &b->buf);
    if (r == VK_SUCCESS) {
        call = "vkGetMemoryHostPointerPropertiesEXT";
        r = g->host_ptr_props(g->dev, ht, p, &hp);
    }
    int type = -1;
    if (r == VK_SUCCESS) {
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(g->dev, b->buf, &req);
        type = find_memory(g, req.memoryTypeBits & hp.memoryTypeBits, 0, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0);
        call = "a memory type for host memory";
        r = type < 0 ? VK_ERROR_FORMAT_NOT_SUPPORTED : VK_SUCCESS;
    }
    if (r == VK_SUCCESS) {
        VkMemoryAllocateFlagsInfo flags = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                            .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT };
        VkImportMemoryHostPointerInfoEXT imp = { .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
                                                 .pNext = &flags,
                                                 .handleType = ht,
                                                 .pHostPointer = (void *)p };
        VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                     .pNext = &imp,
                                     .allocationSize = n,
                                     .memoryTypeIndex = (uint32_t)type };
        call = "vkAllocateMemory (host pointer)";
        r = vkAllocateMemory(g->dev, &mai, NULL, &b->mem);
    }
    if (r == VK_SUCCESS) {
        call = "vkBindBufferMemory";
        r = vkBindBufferMemory(g->dev, b->buf, b->mem, 0);
    }
    if (r != VK_SUCCESS) {
        vki_gpu_log(g, VKIMG_LOG_DEBUG, "%s: not imported from host memory (%s: %s): copied", what, call,
                    vki_vk_result_name(r));
        buf_free(g, b);
        return -1;
    }
    atomic_fetch_add(&g->imports, 1);
    VkBufferDeviceAddressInfo ai = { .sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = b->buf };
    b->addr = vkGetBufferDeviceAddress(g->dev, &ai);
    b->size = n;
    b->kind = VKI_MEM_DEVICE;
    b->coherent = true;
    b->imported = true;
    if (g->texel && !live_add(g, b)) {
        buf_free(g, b);
        return -1;
    }
    return 0;
}

/* An idle buffer of the pool of this kind that holds size bytes and no more
 * than twice that (or any small one, for a small size: POOL_SMALL): the
 * smallest, of those the newest (its pages are the likeliest to be warm). A batch's images differ in channels (RGB and RGBA
 * photographs) and so do their buffers: asking for equal sizes only, each new
 * size was a new allocation, whose every page the kernel zeroes on first touch
 * (on a CPU device 17.6% of a PNG batch's samples in `perf record`, 8% with
 * this). Its size stays the buffer's: b->size is at least what was asked. */
#define POOL_SMALL ((VkDeviceSize)1 << 20)
static bool pool_take(vki_gpu *g, VkDeviceSize size, vki_mem kind, bool shared, vki_buf *b)
{
    int best = -1;
    pthread_mutex_lock(&g->plock);
    for (int i = g->pool_n - 1; i >= 0; i--) {
        const vki_buf *p = &g->pool[i];
        if (p->kind == kind && p->shared == shared && p->size >= size && (p->size / 2 <= size || p->size <= POOL_SMALL) &&
            (best < 0 || p->size < g->pool[best].size))
            best = i;
    }
    if (best >= 0) {
        vki_buf *p = &g->pool[best];
        *b = *p;
        g->pool_bytes -= p->size;
        memmove(p, p + 1, (size_t)(g->pool_n - best - 1) * sizeof *p);
        g->pool_n--;
    }
    pthread_mutex_unlock(&g->plock);
    return best >= 0;
}

void vki_pool_init(vki_gpu *g)
{
    /* a batch keeps a few buffers per image in flight (staging, device input and
     * output, readback, scratch): 4 GiB holds those of 16 images of 5120x2880 on a
     * GPU; where device memory is host memory (the heap is the RAM) 1 GiB */
    VkDeviceSize cap = (VkDeviceSize)(g->uma ? 1 : 4) << 30;
    if (g->lim.device_heap && g->lim.device_heap / 8 < cap)
        cap = g->lim.device_heap / 8;
    long mb = vki_env_long("VKIMG_BUFFER_POOL_MB", -1, 0, 1L << 30);
    g->pool_cap = mb >= 0 ? (VkDeviceSize)mb << 20 : cap;
    g->poison = vki_env_on("VKIMG_POISON");
    g->pool_n = 0;
    g->pool_bytes = 0;
}

/* VKIMG_POISON=1 (tests; g->poison): every buffer a run takes, new or from
 * the pool, filled with 0xA5 bytes where the host can write it (all of them
 * where device memory is host memory, as on lavapipe), so that bytes a kernel
 * leaves unwritten show instead of a former run's values in a pooled buffer. */
static void poison(vki_gpu *g, const vki_buf *b)
{
    if (!g->poison || !b->visible || !b->coherent)
        return;
    void *p = b->map;
    if (!p && vkMapMemory(g->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &p) != VK_SUCCESS)
        return;
    memset(p, 0xA5, (size_t)b->size);
    if (!b->map)
        vkUnmapMemory(g->dev, b->mem);
}

static int buf_create(vki_gpu *g, VkDeviceSize size, vki_mem kind, bool shared, const char *what, vki_buf *b,
                      vkimg_err *e)
{
    memset(b, 0, sizeof *b);
    if (size == 0)
        size = 4;
    if (g->lock_init && pool_take(g, size, kind, shared, b)) {
        poison(g, b);
        return 0;
    }
    if (size > g->lim.max_buffer || size > g->lim.max_alloc)
        return vki_fail(e, VKIMG_E_RUNTIME,
                        "%s needs %.1f MiB, over the device's limit of %.1f MiB per buffer "
                        "(maxMemoryAllocationSize/maxBufferSize of %s)",
                        what, mib(size), mib(g->lim.max_alloc < g->lim.max_buffer ? g->lim.max_alloc : g->lim.max_buffer),
                        g->props.deviceName);
    VkBufferUsageFlags usage = 0;
    VkMemoryPropertyFlags need = 0, want = 0, avoid = 0;
    bool address = false;
    switch (kind) {
    case VKI_MEM_DEVICE:
        usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        address = true;
        break;
    case VKI_MEM_UPLOAD:
        usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
        need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        avoid = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT; /* keep scarce BAR memory free */
        break;
    case VKI_MEM_HOST_IN:
        usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
        need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        want = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        avoid = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        break;
    case VKI_MEM_READBACK:
        usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        want = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        break;
    case VKI_MEM_MAPPED:
        usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        need = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        want = VK_MEMORY_PROPERTY_HOST_CACHED_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        address = true;
        break;
    case VKI_MEM_HOST_OUT:
        usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        want = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        avoid = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        address = true;
        break;
    case VKI_MEM_CONST: /* (a copy's source too: resize's pass 8 weights go beside its intermediate) */
        usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
        need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        address = true;
        break;
    }
    if (address)
        usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT | (g->texel ? VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT : 0);
    /* the shaders' buffers are padded to whole 16-byte words (vki_padded_size) */
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = address ? vki_padded_size(size) : size,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    /* Two families: CONCURRENT, so that neither needs an ownership transfer
     * (a release/acquire barrier pair on both queues) for every image. One
     * family (VKIMG_SPLIT_QUEUES): EXCLUSIVE is right, CONCURRENT is invalid. */
    uint32_t fams[2] = { g->qfam, (uint32_t)g->xfam };
    if (shared && g->xqueue && g->xfam != (int)g->qfam) {
        bci.sharingMode = VK_SHARING_MODE_CONCURRENT;
        bci.queueFamilyIndexCount = 2;
        bci.pQueueFamilyIndices = fams;
    }
    VKI_VK(vkCreateBuffer(g->dev, &bci, NULL, &b->buf));
    b->size = size;
    b->kind = kind;
    b->shared = shared;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g->dev, b->buf, &req);
    int type = find_memory(g, req.memoryTypeBits, need, want, avoid);
    if (type < 0) {
        vki_fail(e, VKIMG_E_RUNTIME, "%s: no suitable memory type on %s", what, g->props.deviceName);
        goto fail;
    }
    VkMemoryAllocateFlagsInfo flags = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
        .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
    };
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .pNext = address ? &flags : NULL,
        .allocationSize = req.size,
        .memoryTypeIndex = (uint32_t)type,
    };
    VkResult r = vki_fault_hit("oom") ? VK_ERROR_OUT_OF_DEVICE_MEMORY : vkAllocateMemory(g->dev, &mai, NULL, &b->mem);
    if (r != VK_SUCCESS) {
        vki_fail(e, VKIMG_E_RUNTIME, "Vulkan: vkAllocateMemory failed: %s (%s, %.1f MiB)", vki_vk_result_name(r), what,
                 mib(req.size));
        goto fail;
    }
    atomic_fetch_add(&g->allocs, 1);
    vki_gpu_log(g, VKIMG_LOG_DEBUG, "memory allocated: %s, %.1f MiB", what, mib(req.size));
    VKI_VK(vkBindBufferMemory(g->dev, b->buf, b->mem, 0));
    VkMemoryPropertyFlags f = g->mem.memoryTypes[type].propertyFlags;
    b->coherent = f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    b->visible = f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    if (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT && kind != VKI_MEM_DEVICE)
        VKI_VK(vkMapMemory(g->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map));
    if (b->map && g->uma) /* ordinary host memory: fewer page faults on first touch */
        vki_advise_huge(b->map, (size_t)size);
    if (!b->map && g->uma && size >= ((VkDeviceSize)4 << 20) && f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        /* the same for the shaders' own buffers (scratch, outputs): the advice
         * stays with the pages once unmapped. 5120x2880 blur=3 on this CI's
         * lavapipe: 31.8k -> 10.8k page faults, wall 0.278 -> 0.263 s */
        void *p = NULL;
        if (vkMapMemory(g->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &p) == VK_SUCCESS) {
            vki_advise_huge(p, (size_t)size);
            vkUnmapMemory(g->dev, b->mem);
        }
    }
    if (address) {
        VkBufferDeviceAddressInfo ai = { .sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = b->buf };
        b->addr = vkGetBufferDeviceAddress(g->dev, &ai);
        if (g->texel && !live_add(g, b)) {
            vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
            goto fail;
        }
    }
    poison(g, b);
    return 0;
fail:
    buf_free(g, b);
    return e->code;
}

static void buf_free(vki_gpu *g, vki_buf *b)
{
    if (!b || !g->dev)
        return;
    if (b->map)
        vkUnmapMemory(g->dev, b->mem);
    if (b->addr && g->texel)
        live_remove(g, b->buf);
    vkDestroyBuffer(g->dev, b->buf, NULL);
    vkFreeMemory(g->dev, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

void vki_buf_destroy(vki_gpu *g, vki_buf *b)
{
    if (!b || !g->dev)
        return;
    if (!b->buf || !b->mem || !g->lock_init || b->size > g->pool_cap || b->imported) {
        buf_free(g, b);
        return;
    }
    vki_buf old[VKI_POOL_MAX];
    int nold = 0;
    pthread_mutex_lock(&g->plock);
    while (g->pool_n > 0 && (g->pool_n == VKI_POOL_MAX || g->pool_bytes + b->size > g->pool_cap)) {
        old[nold++] = g->pool[0]; /* the oldest goes */
        g->pool_bytes -= g->pool[0].size;
        memmove(g->pool, g->pool + 1, (size_t)(--g->pool_n) * sizeof g->pool[0]);
    }
    g->pool[g->pool_n++] = *b;
    g->pool_bytes += b->size;
    pthread_mutex_unlock(&g->plock);
    for (int i = 0; i < nold; i++)
        buf_free(g, &old[i]);
    memset(b, 0, sizeof *b);
}

int vki_buf_flush(vki_gpu *g, vki_buf *b, vkimg_err *e)
{
    if (b->coherent)
        return 0;
    VkMappedMemoryRange r = { .sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, .memory = b->mem, .size = VK_WHOLE_SIZE };
    VKI_VK(vkFlushMappedMemoryRanges(g->dev, 1, &r));
    return 0;
fail:
    return e->code;
}

int vki_buf_invalidate(vki_gpu *g, vki_buf *b, vkimg_err *e)
{
    if (b->coherent)
        return 0;
    VkMappedMemoryRange r = { .sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, .memory = b->mem, .size = VK_WHOLE_SIZE };
    VKI_VK(vkInvalidateMappedMemoryRanges(g->dev, 1, &r));
    return 0;
fail:
    return e->code;
}

void vki_pool_trim(vki_gpu *g)
{
    if (!g->dev || !g->lock_init)
        return;
    vki_buf old[VKI_POOL_MAX];
    pthread_mutex_lock(&g->plock);
    int n = g->pool_n;
    memcpy(old, g->pool, (size_t)n * sizeof old[0]);
    g->pool_n = 0;
    g->pool_bytes = 0;
    pthread_mutex_unlock(&g->plock);
    for (int i = 0; i < n; i++)
        buf_free(g, &old[i]);
}

