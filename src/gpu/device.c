/* Creating and destroying a device context: queues, locks, pool, cache. */
#include "gpu/gpu_priv.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

typedef enum xmode {
    X_NONE,         /* on the compute queue, in its command buffer */
    X_FAMILY,       /* a queue of the transfer-only family */
    X_SECOND_QUEUE, /* VKIMG_SPLIT_QUEUES=1: queue 1 of the compute family */
    X_SAME_QUEUE,   /* VKIMG_SPLIT_QUEUES=1 with one queue: the compute queue, separate submissions */
} xmode;

static xmode transfer_mode(const dev_info *d)
{
    if (vki_env_on("VKIMG_NO_TRANSFER_QUEUE"))
        return X_NONE;
    if (d->xfam >= 0)
        return X_FAMILY;
    if (vki_env_on("VKIMG_SPLIT_QUEUES"))
        return d->qcount >= 2 ? X_SECOND_QUEUE : X_SAME_QUEUE;
    return X_NONE;
}

static void log_queues(vki_gpu *g, xmode m, const dev_info *d)
{
    switch (m) {
    case X_NONE:
        if (d->xfam >= 0)
            vki_gpu_log(g, VKIMG_LOG_INFO, "queues: kernels and copies on family %u (VKIMG_NO_TRANSFER_QUEUE: "
                        "transfer family %d not used)", g->qfam, d->xfam);
        else
            vki_gpu_log(g, VKIMG_LOG_INFO, "queues: kernels and copies on family %u (no transfer-only family)", g->qfam);
        break;
    case X_FAMILY:
        vki_gpu_log(g, VKIMG_LOG_INFO, "queues: kernels on family %u, uploads and readbacks on transfer family %d (%s)",
                    g->qfam, g->xfam,
                    g->xts_bits && g->host_query_reset ? "timed on the device" : "no timestamps there: copies timed on the host");
        break;
    case X_SECOND_QUEUE:
        vki_gpu_log(g, VKIMG_LOG_INFO, "queues: kernels on queue 0, uploads and readbacks on queue 1 of family %u "
                    "(VKIMG_SPLIT_QUEUES)", g->qfam);
        break;
    case X_SAME_QUEUE:
        vki_gpu_log(g, VKIMG_LOG_INFO, "queues: family %u has one queue: uploads, kernels and readbacks submitted "
                    "to it separately, chained by semaphores (VKIMG_SPLIT_QUEUES)", g->qfam);
        break;
    }
}

int vki_gpu_create(vki_gpu *g, const vkimg_ctx_opts *o, vkimg_err *e)
{
    dev_info *devs = NULL;
    uint32_t ndev = 0;
    memset(g, 0, sizeof *g);
    g->log = o ? o->log : NULL;
    g->log_user = o ? o->log_user : NULL;
    g->validate = (o && o->validate) || vki_env_on("VKIMG_VALIDATE");
    g->xfam = -1;
    if (vki_instance_create(g, g->validate, e))
        goto fail;
    if (vki_devices_enumerate(g->instance, &devs, &ndev, e))
        goto fail;
    int idx = vki_device_pick(devs, ndev, o ? o->device : NULL, e);
    if (idx < 0)
        goto fail;
    dev_info *d = &devs[idx];
    g->phys = d->phys;
    g->props = d->props;
    g->mem = d->mem;
    g->lim = d->lim;
    g->index = idx;
    g->qfam = (uint32_t)d->qfam;
    vki_device_describe(d, g->desc, sizeof g->desc);

    xmode xm = transfer_mode(d);
    if (xm != X_NONE) {
        g->xfam = xm == X_FAMILY ? d->xfam : (int)g->qfam;
        g->xts_bits = xm == X_FAMILY ? d->xts_bits : g->lim.timestamp_bits;
        g->host_query_reset = d->host_query_reset;
    }
    g->uma = xm == X_NONE && g->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU &&
             !vki_env_on("VKIMG_NO_UMA");
    if (g->uma) {
        const VkMemoryPropertyFlags f = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                        VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        bool found = false;
        for (uint32_t i = 0; i < g->mem.memoryTypeCount; i++)
            found |= (g->mem.memoryTypes[i].propertyFlags & f) == f;
        g->uma = found;
    }
    const float prio[2] = { 1.0f, 1.0f };
    VkDeviceQueueCreateInfo qci[2] = {
        {
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .queueFamilyIndex = g->qfam,
            .queueCount = xm == X_SECOND_QUEUE ? 2 : 1,
            .pQueuePriorities = prio,
        },
        {
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .queueFamilyIndex = (uint32_t)g->xfam,
            .queueCount = 1,
            .pQueuePriorities = prio,
        },
    };
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .storageBuffer16BitAccess = VK_TRUE,
    };
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = &f11,
        .bufferDeviceAddress = VK_TRUE,
        .storageBuffer8BitAccess = VK_TRUE,
        .hostQueryReset = g->host_query_reset, /* timestamps on a transfer queue: reset from the host */
    };
    VkPhysicalDeviceFeatures2 f2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &f12,
        .features = { .shaderInt64 = g->lim.int64, .shaderFloat64 = g->lim.float64 },
    };
    /* device memory is host memory: take inputs in ordinary memory as they are
     * (gpu.h host_import_align) */
    const char *dexts[4];
    uint32_t ndext = 0;
    {
        const char *ev = getenv("VKIMG_TEXEL");
        const bool want = ev && (*ev == '0' || *ev == '1') ? *ev == '1'
                                                             : g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
        VkFormatProperties fp;
        vkGetPhysicalDeviceFormatProperties(g->phys, VK_FORMAT_R32G32_UINT, &fp);
        g->texel = want && (fp.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) &&
                   vki_has_device_ext(g->phys, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
        if (g->texel)
            dexts[ndext++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
        g->tex_align = g->props.limits.minTexelBufferOffsetAlignment < 8 ? 8 : g->props.limits.minTexelBufferOffsetAlignment;
        g->tex_max = g->props.limits.maxTexelBufferElements;
    }
    if (g->uma && !vki_env_on("VKIMG_NO_HOST_IMPORT") && vki_has_device_ext(g->phys, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
        VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT
        };
        VkPhysicalDeviceProperties2 p2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &hp };
        vkGetPhysicalDeviceProperties2(g->phys, &p2);
        g->host_import_align = hp.minImportedHostPointerAlignment;
        dexts[ndext++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
    }
    /* 4 x 8-bit dot products (resize.comp's block sums), where the device offers them */
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR fdot = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR,
    };
    if (vki_has_device_ext(g->phys, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) {
        VkPhysicalDeviceFeatures2 q = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &fdot };
        vkGetPhysicalDeviceFeatures2(g->phys, &q);
        fdot.pNext = NULL;
        if (fdot.shaderIntegerDotProduct) {
            VkPhysicalDeviceShaderIntegerDotProductPropertiesKHR pdot = {
                .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES_KHR,
            };
            VkPhysicalDeviceProperties2 p2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &pdot };
            vkGetPhysicalDeviceProperties2(g->phys, &p2);
            g->dot4 = true;
            g->dot4_fast = pdot.integerDotProduct4x8BitPackedUnsignedAccelerated;
            dexts[ndext++] = VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME;
            fdot.pNext = f2.pNext;
            f2.pNext = &fdot;
        }
    }
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR fpe = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
        .pipelineExecutableInfo = VK_TRUE,
    };
    const bool stats = vki_env_on("VKIMG_PIPELINE_STATS") &&
                       vki_has_device_ext(g->phys, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    if (stats) {
        dexts[ndext++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        fpe.pNext = f2.pNext;
        f2.pNext = &fpe;
    }
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f2,
        .queueCreateInfoCount = xm == X_FAMILY ? 2 : 1,
        .pQueueCreateInfos = qci,
        .enabledExtensionCount = ndext,
        .ppEnabledExtensionNames = dexts,
    };
    VKI_VK(vkCreateDevice(g->phys, &dci, NULL, &g->dev));
    if (stats) {
        g->exec_props = (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(
            g->dev, "vkGetPipelineExecutablePropertiesKHR");
        g->exec_stats = (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
            g->dev, "vkGetPipelineExecutableStatisticsKHR");
        if (!g->exec_props || !g->exec_stats)
            g->exec_props = NULL;
    }
    if (g->host_import_align) {
        g->host_ptr_props = (PFN_vkGetMemoryHostPointerPropertiesEXT)vkGetDeviceProcAddr(
            g->dev, "vkGetMemoryHostPointerPropertiesEXT");
        if (!g->host_ptr_props)
            g->host_import_align = 0;
    }
    if (g->texel) {
        g->push_desc = (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(g->dev, "vkCmdPushDescriptorSetKHR");
        VkDescriptorSetLayoutBinding lb = { .binding = 0,
                                            .descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
                                            .descriptorCount = 1,
                                            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT };
        VkDescriptorSetLayoutCreateInfo lci = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                                .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
                                                .bindingCount = 1,
                                                .pBindings = &lb };
        if (g->push_desc)
            VKI_VK(vkCreateDescriptorSetLayout(g->dev, &lci, NULL, &g->tex_layout));
        g->texel = g->push_desc != NULL;
    }
    vkGetDeviceQueue(g->dev, g->qfam, 0, &g->queue);
    if (xm == X_FAMILY)
        vkGetDeviceQueue(g->dev, (uint32_t)g->xfam, 0, &g->xqueue);
    else if (xm == X_SECOND_QUEUE)
        vkGetDeviceQueue(g->dev, g->qfam, 1, &g->xqueue);
    else if (xm == X_SAME_QUEUE)
        g->xqueue = g->queue;
    if (pthread_mutex_init(&g->lock, NULL)) {
        vki_fail(e, VKIMG_E_RUNTIME, "pthread_mutex_init failed");
        goto fail;
    }
    if (pthread_mutex_init(&g->xlock, NULL)) {
        pthread_mutex_destroy(&g->lock);
        vki_fail(e, VKIMG_E_RUNTIME, "pthread_mutex_init failed");
        goto fail;
    }
    if (pthread_mutex_init(&g->plock, NULL)) {
        pthread_mutex_destroy(&g->lock);
        pthread_mutex_destroy(&g->xlock);
        vki_fail(e, VKIMG_E_RUNTIME, "pthread_mutex_init failed");
        goto fail;
    }
    if (pthread_cond_init(&g->kernel_cv, NULL)) {
        pthread_mutex_destroy(&g->lock);
        pthread_mutex_destroy(&g->xlock);
        pthread_mutex_destroy(&g->plock);
        vki_fail(e, VKIMG_E_RUNTIME, "pthread_cond_init failed");
        goto fail;
    }
    g->lock_init = true;
    vki_pool_init(g);
    if (vki_cache_open(g, o, e))
        goto fail;
    vki_gpu_log(g, VKIMG_LOG_INFO, "device: %s", g->desc);
    log_queues(g, xm, d);
    free(devs);
    return 0;
fail:
    free(devs);
    vki_gpu_destroy(g);
    return e->code ? e->code : VKIMG_E_RUNTIME;
}

void vki_gpu_destroy(vki_gpu *g)
{
    if (!g)
        return;
    if (g->dev) {
        vkDeviceWaitIdle(g->dev);
        vki_gpu_drop_kernels(g);
        vki_pool_trim(g);
        vki_spare_destroy(g);
        vki_cache_close(g);
        if (g->tex_layout)
            vkDestroyDescriptorSetLayout(g->dev, g->tex_layout, NULL);
        vkDestroyDevice(g->dev, NULL);
        g->dev = VK_NULL_HANDLE;
    }
    vki_instance_destroy(g);
    if (g->lock_init) {
        pthread_mutex_destroy(&g->lock);
        pthread_mutex_destroy(&g->xlock);
        pthread_mutex_destroy(&g->plock);
        pthread_cond_destroy(&g->kernel_cv);
        g->lock_init = false;
    }
    free(g->live);
    g->live = NULL;
    g->nlive = g->cap_live = 0;
}
