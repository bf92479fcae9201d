/* Instance creation (validation, synchronization validation), the devices
 * and their limits, which one to use, and the device list. */
#include "gpu/gpu_priv.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static VKAPI_ATTR VkBool32 VKAPI_CALL debug_cb(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                               VkDebugUtilsMessageTypeFlagsEXT type,
                                               const VkDebugUtilsMessengerCallbackDataEXT *d, void *user)
{
    vki_gpu *g = user;
    (void)type;
    if (sev >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        g->validation_msgs++;
        vki_gpu_log(g, sev >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? VKIMG_LOG_ERROR : VKIMG_LOG_WARN,
                    "validation: %s", d->pMessage);
    } else {
        vki_gpu_log(g, VKIMG_LOG_DEBUG, "validation: %s", d->pMessage);
    }
    return VK_FALSE;
}

static bool has_layer(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || !n)
        return false;
    VkLayerProperties *p = calloc(n, sizeof *p);
    bool found = false;
    if (p && vkEnumerateInstanceLayerProperties(&n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            if (!strcmp(p[i].layerName, name))
                found = true;
    free(p);
    return found;
}

static const char NO_DEVICE_HINT[] =
    "install a Vulkan driver: on Debian/Ubuntu 'apt-get install mesa-vulkan-drivers' gives the "
    "lavapipe CPU device";

int vki_instance_create(vki_gpu *g, bool validate, vkimg_err *e)
{
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "vkimg",
        .applicationVersion = VK_MAKE_API_VERSION(0, 0, 1, 0),
        .pEngineName = "vkimg",
        .apiVersion = VK_API_VERSION_1_2,
    };
    const char *layers[] = { "VK_LAYER_KHRONOS_validation" };
    const char *exts[] = { VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME };
    VkValidationFeatureEnableEXT enables[] = { VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT };
    VkValidationFeaturesEXT vf = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = enables,
    };
    VkDebugUtilsMessengerCreateInfoEXT mi = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .pNext = &vf,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = debug_cb,
        .pUserData = g,
    };
    /* Only warnings and errors reach the callback unless debugging. */
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    if (validate) {
        if (!has_layer(layers[0]))
            return vki_fail(e, VKIMG_E_RUNTIME,
                            "validation requested but VK_LAYER_KHRONOS_validation is not installed "
                            "(apt-get install vulkan-validationlayers)");
        ci.enabledLayerCount = 1;
        ci.ppEnabledLayerNames = layers;
        ci.enabledExtensionCount = 2;
        ci.ppEnabledExtensionNames = exts;
        ci.pNext = &mi; /* also covers vkCreateInstance/vkDestroyInstance */
    }
    VkResult r = vkCreateInstance(&ci, NULL, &g->instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
        return vki_fail(e, VKIMG_E_RUNTIME, "Vulkan: vkCreateInstance failed: %s: no Vulkan 1.2 driver found; %s",
                        vki_vk_result_name(r), NO_DEVICE_HINT);
    if (r != VK_SUCCESS)
        return vki_fail_vk(e, "vkCreateInstance", r);
    if (validate) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(g->instance, "vkCreateDebugUtilsMessengerEXT");
        if (!create)
            return vki_fail(e, VKIMG_E_RUNTIME, "Vulkan: vkCreateDebugUtilsMessengerEXT not available");
        mi.pNext = NULL;
        r = create(g->instance, &mi, NULL, &g->messenger);
        if (r != VK_SUCCESS)
            return vki_fail_vk(e, "vkCreateDebugUtilsMessengerEXT", r);
    }
    return 0;
}

void vki_instance_destroy(vki_gpu *g)
{
    if (g->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(g->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy)
            destroy(g->instance, g->messenger, NULL);
        g->messenger = VK_NULL_HANDLE;
    }
    if (g->instance) {
        vkDestroyInstance(g->instance, NULL);
        g->instance = VK_NULL_HANDLE;
    }
}

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
    }
}

static int type_rank(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
    }
}

/* Whether the physical device offers the device extension name. */
bool vki_has_device_ext(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || !n)
        return false;
    VkExtensionProperties *x = calloc(n, sizeof *x);
    bool found = false;
    if (x && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, x) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = !strcmp(x[i].extensionName, name);
    free(x);
    return found;
}

static void query_device(VkPhysicalDevice pd, dev_info *d)
{
    memset(d, 0, sizeof *d);
    d->phys = pd;
    vkGetPhysicalDeviceProperties(pd, &d->props);
    vkGetPhysicalDeviceMemoryProperties(pd, &d->mem);
    d->qfam = -1;
    if (d->props.apiVersion < VK_API_VERSION_1_2) {
        d->unusable = "Vulkan 1.2 required";
        return;
    }
    VkPhysicalDeviceMaintenance4Properties m4 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES };
    d->subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    d->driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    d->driver.pNext = &d->subgroup;
    if (d->props.apiVersion >= VK_API_VERSION_1_3)
        d->subgroup.pNext = &m4;
    VkPhysicalDeviceProperties2 p2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &d->driver };
    vkGetPhysicalDeviceProperties2(pd, &p2);

    const VkPhysicalDeviceLimits *l = &d->props.limits;
    vki_limits *lim = &d->lim;
    lim->max_shared = l->maxComputeSharedMemorySize;
    lim->max_wg_invocations = l->maxComputeWorkGroupInvocations;
    memcpy(lim->max_wg_size, l->maxComputeWorkGroupSize, sizeof lim->max_wg_size);
    memcpy(lim->max_wg_count, l->maxComputeWorkGroupCount, sizeof lim->max_wg_count);
    lim->max_push = l->maxPushConstantsSize;
    lim->max_image_2d = l->maxImageDimension2D;
    lim->subgroup_size = d->subgroup.subgroupSize;
    lim->subgroup_ops = (d->subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? d->subgroup.supportedOperations : 0;
    lim->timestamp_period = l->timestampPeriod;
    /* the multiprocessors (NVIDIA's SMs, AMD's CUs), where the driver tells them: the strip
     * pass (resize.c) makes its workgroups a multiple of them */
    if (vki_has_device_ext(pd, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
        VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV
        };
        VkPhysicalDeviceProperties2 q = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sm };
        vkGetPhysicalDeviceProperties2(pd, &q);
        lim->multiprocessors = sm.shaderSMCount;
    } else if (vki_has_device_ext(pd, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
        VkPhysicalDeviceShaderCorePropertiesAMD cp = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD
        };
        VkPhysicalDeviceProperties2 q = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &cp };
        vkGetPhysicalDeviceProperties2(pd, &q);
        lim->multiprocessors = cp.shaderEngineCount * cp.shaderArraysPerEngineCount * cp.computeUnitsPerShaderArray;
    }

    VkPhysicalDeviceMaintenance3Properties m3 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES };
    VkPhysicalDeviceProperties2 p3 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3 };
    vkGetPhysicalDeviceProperties2(pd, &p3);
    lim->max_alloc = m3.maxMemoryAllocationSize;
    lim->max_buffer = m4.maxBufferSize ? m4.maxBufferSize : m3.maxMemoryAllocationSize;
    for (uint32_t i = 0; i < d->mem.memoryHeapCount; i++)
        if ((d->mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && d->mem.memoryHeaps[i].size > lim->device_heap)
            lim->device_heap = d->mem.memoryHeaps[i].size;

    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
    VkQueueFamilyProperties qf[32];
    if (nq > 32)
        nq = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
    /* Prefer a compute queue of a family that also does graphics (the "universal"
     * queue: most capable timestamps); any compute family otherwise. */
    for (uint32_t i = 0; i < nq; i++) {
        if (!(qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT))
            continue;
        if (d->qfam < 0 || (qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
            d->qfam = (int)i;
            lim->timestamp_bits = qf[i].timestampValidBits;
            if (qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)
                break;
        }
    }
    if (d->qfam < 0) {
        d->unusable = "no compute queue";
        return;
    }
    d->qcount = qf[d->qfam].queueCount;
    /* A family that only copies (the DMA engines of a discrete GPU): exec's
     * uploads and readbacks go there, next to the kernels of other images.
     * One with timestamps is preferred, so copies can be timed on the device. */
    d->xfam = -1;
    for (uint32_t i = 0; i < nq; i++) {
        VkQueueFlags f = qf[i].queueFlags;
        if (!(f & VK_QUEUE_TRANSFER_BIT) || (f & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
            continue;
        if (d->xfam < 0 || (!d->xts_bits && qf[i].timestampValidBits)) {
            d->xfam = (int)i;
            d->xcount = qf[i].queueCount;
            d->xts_bits = qf[i].timestampValidBits;
        }
    }

    VkPhysicalDeviceVulkan11Features f11 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES };
    VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &f11 };
    VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12 };
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    lim->int64 = f2.features.shaderInt64;
    lim->float64 = f2.features.shaderFloat64;
    d->host_query_reset = f12.hostQueryReset;
    if (!f12.bufferDeviceAddress)
        d->unusable = "bufferDeviceAddress not supported";
    else if (!f12.storageBuffer8BitAccess)
        d->unusable = "storageBuffer8BitAccess not supported";
    else if (!f11.storageBuffer16BitAccess)
        d->unusable = "storageBuffer16BitAccess not supported";
    else if (!f2.features.shaderInt64)
        d->unusable = "shaderInt64 not supported";
}

static char *ver(uint32_t v, char *buf)
{
    sprintf(buf, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
    return buf;
}

void vki_device_describe(const dev_info *d, char *buf, size_t n)
{
    char v[32];
    snprintf(buf, n, "%.120s (%s, %.60s %.60s, Vulkan %s)", d->props.deviceName, type_name(d->props.deviceType),
             d->driver.driverName[0] ? d->driver.driverName : "driver", d->driver.driverInfo, ver(d->props.apiVersion, v));
}

int vki_devices_enumerate(VkInstance inst, dev_info **out, uint32_t *count, vkimg_err *e)
{
    uint32_t n = 0;
    VkPhysicalDevice *pds = NULL;
    VKI_VK(vkEnumeratePhysicalDevices(inst, &n, NULL));
    if (n == 0)
        return vki_fail(e, VKIMG_E_RUNTIME, "no Vulkan device found; %s", NO_DEVICE_HINT);
    pds = calloc(n, sizeof *pds);
    *out = calloc(n, sizeof **out);
    if (!pds || !*out) {
        vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
        goto fail;
    }
    VKI_VK(vkEnumeratePhysicalDevices(inst, &n, pds));
    for (uint32_t i = 0; i < n; i++)
        query_device(pds[i], &(*out)[i]);
    free(pds);
    *count = n;
    return 0;
fail:
    free(pds);
    free(*out);
    *out = NULL;
    return e->code;
}

int vki_device_pick(const dev_info *d, uint32_t n, const char *sel, vkimg_err *e)
{
    int best = -1;
    if (sel && !strcmp(sel, "all")) /* vkimg_devices_all() + one context per device: batches only */
        return -vki_fail(e, VKIMG_E_USAGE, "--device all: only a batch (vkimg -i ... -o ...) runs on several devices; "
                         "choose one here (see 'vkimg devices')");
    if (sel && *sel) {
        char *end;
        long idx = strtol(sel, &end, 10);
        if (*end == 0) {
            if (idx < 0 || (uint32_t)idx >= n)
                return -vki_fail(e, VKIMG_E_USAGE, "--device %s: no such device (there are %u; see 'vkimg devices')", sel, n);
            if (d[idx].unusable)
                return -vki_fail(e, VKIMG_E_RUNTIME, "--device %s: %s can't be used: %s", sel, d[idx].props.deviceName,
                                 d[idx].unusable);
            return (int)idx;
        }
        bool want_gpu = !strcmp(sel, "gpu"), want_cpu = !strcmp(sel, "cpu");
        for (uint32_t i = 0; i < n; i++) {
            bool cpu = d[i].props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
            bool match;
            if (want_gpu)
                match = !cpu;
            else if (want_cpu)
                match = cpu;
            else {
                match = false;
                size_t ls = strlen(sel);
                for (const char *p = d[i].props.deviceName; *p && !match; p++)
                    match = !vki_strncasecmp(p, sel, ls);
            }
            if (match && !d[i].unusable && (best < 0 || type_rank(d[i].props.deviceType) > type_rank(d[best].props.deviceType)))
                best = (int)i;
        }
        if (best < 0)
            return -vki_fail(e, VKIMG_E_RUNTIME, "--device %s: no usable device matches (see 'vkimg devices')", sel);
        return best;
    }
    for (uint32_t i = 0; i < n; i++)
        if (!d[i].unusable && (best < 0 || type_rank(d[i].props.deviceType) > type_rank(d[best].props.deviceType)))
            best = (int)i;
    if (best < 0)
        return -vki_fail(e, VKIMG_E_RUNTIME, "no usable Vulkan device: %s: %s; %s", d[0].props.deviceName, d[0].unusable,
                         NO_DEVICE_HINT);
    return best;
}

/* ---- the device list (vkimg devices) and --device all */

static size_t append(char *buf, size_t n, size_t at, const char *fmt, ...) VKI_PRINTF(4, 5);
static size_t append(char *buf, size_t n, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(at < n ? buf + at : NULL, at < n ? n - at : 0, fmt, ap);
    va_end(ap);
    return at + (k > 0 ? (size_t)k : 0);
}

int vkimg_list_devices(char *buf, size_t n, vkimg_err *e)
{
    vki_gpu g = { 0 };
    dev_info *devs = NULL;
    uint32_t nd = 0;
    if (n)
        buf[0] = 0;
    if (vki_instance_create(&g, false, e))
        goto fail;
    if (vki_devices_enumerate(g.instance, &devs, &nd, e))
        goto fail;
    int best = vki_device_pick(devs, nd, NULL, e);
    vki_err_clear(e);
    size_t at = 0;
    for (uint32_t i = 0; i < nd; i++) {
        const dev_info *d = &devs[i];
        char v[32];
        at = append(buf, n, at, "%u: %s%s\n", i, d->props.deviceName, (int)i == best ? "  [default]" : "");
        at = append(buf, n, at, "   type %s, driver %s %s, Vulkan %s\n", type_name(d->props.deviceType),
                    d->driver.driverName, d->driver.driverInfo, ver(d->props.apiVersion, v));
        if (d->unusable) {
            at = append(buf, n, at, "   not usable by vkimg: %s\n", d->unusable);
            continue;
        }
        at = append(buf, n, at, "   memory %.1f GiB device-local; max allocation %.1f GiB, max buffer %.1f GiB\n",
                    d->lim.device_heap / 1073741824.0, d->lim.max_alloc / 1073741824.0, d->lim.max_buffer / 1073741824.0);
        at = append(buf, n, at,
                    "   shared memory %u B, workgroup max %u invocations (%u x %u x %u), subgroup %u, "
                    "max 2D image %u, timestamps %s\n",
                    d->lim.max_shared, d->lim.max_wg_invocations, d->lim.max_wg_size[0], d->lim.max_wg_size[1],
                    d->lim.max_wg_size[2], d->lim.subgroup_size, d->lim.max_image_2d,
                    d->lim.timestamp_bits ? "yes" : "no");
        if (d->lim.multiprocessors)
            at = append(buf, n, at, "   multiprocessors %u\n", d->lim.multiprocessors);
        at = append(buf, n, at, "   compute queue: family %d (%u queue%s); ", d->qfam, d->qcount, d->qcount == 1 ? "" : "s");
        if (d->xfam >= 0)
            at = append(buf, n, at, "transfer queue: family %d (%u queue%s, timestamps %s)\n", d->xfam, d->xcount,
                        d->xcount == 1 ? "" : "s", d->xts_bits ? "yes" : "no");
        else
            at = append(buf, n, at, "transfer queue: none (copies run on the compute queue)\n");
    }
    free(devs);
    vki_instance_destroy(&g);
    return 0;
fail:
    free(devs);
    vki_instance_destroy(&g);
    return e->code;
}

static bool is_gpu(VkPhysicalDeviceType t)
{
    return t == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU || t == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
           t == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
}

int vkimg_devices_all(int *idx, int max, vkimg_err *e)
{
    vki_gpu g = { 0 };
    dev_info *devs = NULL;
    uint32_t nd = 0;
    int n = -1;
    vki_err_clear(e);
    if (vki_instance_create(&g, false, e) || vki_devices_enumerate(g.instance, &devs, &nd, e))
        goto done;
    /* A CPU device (lavapipe) only where there is no GPU: next to a GPU it would
     * take the cores that decode and encode, and be the slowest of the devices. */
    bool gpus = false;
    for (uint32_t i = 0; i < nd; i++)
        gpus |= !devs[i].unusable && is_gpu(devs[i].props.deviceType);
    n = 0;
    for (uint32_t i = 0; i < nd; i++)
        if (!devs[i].unusable && is_gpu(devs[i].props.deviceType) == gpus) {
            if (n < max)
                idx[n] = (int)i;
            n++;
        }
    if (n == 0) /* vki_device_pick() says why none is usable */
        n = vki_device_pick(devs, nd, NULL, e) < 0 ? -1 : 0;
done:
    free(devs);
    vki_instance_destroy(&g);
    return n;
}
