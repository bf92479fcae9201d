/* The Vulkan layer. See gpu.h. */
#include "gpu.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vki_vk_result_name(VkResult r)
{
    switch (r) {
#define R(x) case x: return #x;
    R(VK_SUCCESS) R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_EVENT_SET) R(VK_EVENT_RESET) R(VK_INCOMPLETE)
    R(VK_ERROR_OUT_OF_HOST_MEMORY) R(VK_ERROR_OUT_OF_DEVICE_MEMORY) R(VK_ERROR_INITIALIZATION_FAILED)
    R(VK_ERROR_DEVICE_LOST) R(VK_ERROR_MEMORY_MAP_FAILED) R(VK_ERROR_LAYER_NOT_PRESENT)
    R(VK_ERROR_EXTENSION_NOT_PRESENT) R(VK_ERROR_FEATURE_NOT_PRESENT) R(VK_ERROR_INCOMPATIBLE_DRIVER)
    R(VK_ERROR_TOO_MANY_OBJECTS) R(VK_ERROR_FORMAT_NOT_SUPPORTED) R(VK_ERROR_FRAGMENTED_POOL)
    R(VK_ERROR_UNKNOWN) R(VK_ERROR_OUT_OF_POOL_MEMORY) R(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    R(VK_ERROR_FRAGMENTATION) R(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) R(VK_PIPELINE_COMPILE_REQUIRED)
    R(VK_ERROR_VALIDATION_FAILED_EXT) R(VK_ERROR_INVALID_SHADER_NV)
#undef R
    default: return "VK_RESULT_UNKNOWN";
    }
}

int vki_fail_vk(vkimg_err *e, const char *call, VkResult r)
{
    /* "vkCreateDevice(g->phys, ...)" -> "vkCreateDevice" */
    size_t n = strcspn(call, "(");
    const char *hint = "";
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
        hint = " (out of memory: try a smaller image)";
    else if (r == VK_ERROR_DEVICE_LOST)
        hint = " (the device was lost: driver reset or a kernel fault)";
    return vki_fail(e, VKIMG_E_RUNTIME, "Vulkan: %.*s failed: %s%s", (int)n, call, vki_vk_result_name(r), hint);
}

void vki_gpu_log(vki_gpu *g, vkimg_log_level lvl, const char *fmt, ...)
{
    if (!g->log)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    g->log(g->log_user, lvl, buf);
}

static void buf_free(vki_gpu *g, vki_buf *b);
static void pool_init(vki_gpu *g);

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

static int create_instance(vki_gpu *g, bool validate, vkimg_err *e)
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

static void describe(const dev_info *d, char *buf, size_t n)
{
    char v[32];
    snprintf(buf, n, "%.120s (%s, %.60s %.60s, Vulkan %s)", d->props.deviceName, type_name(d->props.deviceType),
             d->driver.driverName[0] ? d->driver.driverName : "driver", d->driver.driverInfo, ver(d->props.apiVersion, v));
}

static int enumerate(VkInstance inst, dev_info **out, uint32_t *count, vkimg_err *e)
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

static int pick(const dev_info *d, uint32_t n, const char *sel, vkimg_err *e)
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

/* ------------------------------------------------------------ pipeline cache
 * $XDG_CACHE_HOME/vkimg (else ~/.cache/vkimg), one file per device UUID and
 * driver version; the header is checked before the data is handed to the
 * driver, a bad file is ignored, and writes are atomic (temp + rename). */

static void cache_path(vki_gpu *g, const vkimg_ctx_opts *o)
{
    g->cache_path[0] = 0;
    if ((o && o->no_cache) || vki_env_on("VKIMG_NO_CACHE"))
        return;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[900];
    if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/vkimg", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/vkimg", home);
    else
        return;
    char uuid[33];
    for (int i = 0; i < 16; i++)
        sprintf(uuid + 2 * i, "%02x", g->props.pipelineCacheUUID[i]);
    snprintf(g->cache_path, sizeof g->cache_path, "%.900s/pipelines-%s-%08x.bin", dir, uuid, g->props.driverVersion);
}

static void *cache_load(vki_gpu *g, size_t *n)
{
    *n = 0;
    if (!g->cache_path[0])
        return NULL;
    FILE *f = fopen(g->cache_path, "rb");
    if (!f)
        return NULL;
    void *buf = NULL;
    long len = 0;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 32 && len < (256l << 20) && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len)) && fread(buf, 1, (size_t)len, f) == (size_t)len) {
        uint32_t hdr[4];
        memcpy(hdr, buf, sizeof hdr);
        if (hdr[0] >= 32 && hdr[0] <= (uint32_t)len && hdr[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
            hdr[2] == g->props.vendorID && hdr[3] == g->props.deviceID &&
            !memcmp((char *)buf + 16, g->props.pipelineCacheUUID, VK_UUID_SIZE)) {
            fclose(f);
            *n = (size_t)len;
            return buf;
        }
        vki_gpu_log(g, VKIMG_LOG_WARN, "pipeline cache %s: not for this device/driver, ignored", g->cache_path);
    }
    free(buf);
    fclose(f);
    return NULL;
}

static void cache_save(vki_gpu *g)
{
    size_t n = 0;
    if (!g->cache_path[0] || !g->cache || vkGetPipelineCacheData(g->dev, g->cache, &n, NULL) != VK_SUCCESS || !n ||
        n == g->cache_loaded)
        return;
    void *buf = malloc(n);
    if (!buf || vkGetPipelineCacheData(g->dev, g->cache, &n, buf) != VK_SUCCESS) {
        free(buf);
        return;
    }
    /* mkdir -p of the directory */
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", g->cache_path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
        for (char *p = dir + 1; *p; p++)
            if (*p == '/') {
                *p = 0;
                mkdir(dir, 0755);
                *p = '/';
            }
        mkdir(dir, 0755);
    }
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", g->cache_path);
    int fd = mkstemp(tmp);
    bool ok = fd >= 0;
    if (ok) {
        ok = write(fd, buf, n) == (ssize_t)n;
        ok = close(fd) == 0 && ok;
        ok = ok && rename(tmp, g->cache_path) == 0;
        if (!ok)
            unlink(tmp);
    }
    if (!ok)
        vki_gpu_log(g, VKIMG_LOG_DEBUG, "pipeline cache %s not saved: %s", g->cache_path, strerror(errno));
    free(buf);
}

/* Where exec's uploads and readbacks go (gpu.h, xqueue). */
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
    if (create_instance(g, g->validate, e))
        goto fail;
    if (enumerate(g->instance, &devs, &ndev, e))
        goto fail;
    int idx = pick(devs, ndev, o ? o->device : NULL, e);
    if (idx < 0)
        goto fail;
    dev_info *d = &devs[idx];
    g->phys = d->phys;
    g->props = d->props;
    g->mem = d->mem;
    g->lim = d->lim;
    g->index = idx;
    g->qfam = (uint32_t)d->qfam;
    describe(d, g->desc, sizeof g->desc);

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
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f2,
        .queueCreateInfoCount = xm == X_FAMILY ? 2 : 1,
        .pQueueCreateInfos = qci,
    };
    VKI_VK(vkCreateDevice(g->phys, &dci, NULL, &g->dev));
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
    g->lock_init = true;
    pool_init(g);
    cache_path(g, o);
    size_t cache_n = 0;
    void *cache_data = cache_load(g, &cache_n);
    VkPipelineCacheCreateInfo cci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
        .initialDataSize = cache_n,
        .pInitialData = cache_data,
    };
    VkResult cr = vkCreatePipelineCache(g->dev, &cci, NULL, &g->cache);
    if (cr != VK_SUCCESS && cache_data) { /* a cache the driver refuses: start empty */
        cci.initialDataSize = 0;
        cci.pInitialData = NULL;
        cache_n = 0;
        cr = vkCreatePipelineCache(g->dev, &cci, NULL, &g->cache);
    }
    free(cache_data);
    g->cache_loaded = cache_n;
    VKI_VK(cr);
    vki_gpu_log(g, VKIMG_LOG_INFO, "device: %s", g->desc);
    log_queues(g, xm, d);
    free(devs);
    return 0;
fail:
    free(devs);
    vki_gpu_destroy(g);
    return e->code ? e->code : VKIMG_E_RUNTIME;
}

void vki_gpu_drop_kernels(vki_gpu *g)
{
    for (vki_kernel *k = g->kernels, *next; k; k = next) {
        next = k->next;
        vkDestroyPipeline(g->dev, k->pipe, NULL);
        vkDestroyPipelineLayout(g->dev, k->layout, NULL);
        vkDestroyShaderModule(g->dev, k->module, NULL);
        free(k);
    }
    g->kernels = NULL;
}

void vki_gpu_destroy(vki_gpu *g)
{
    if (!g)
        return;
    if (g->dev) {
        vkDeviceWaitIdle(g->dev);
        vki_gpu_drop_kernels(g);
        for (int i = 0; i < g->pool_n; i++)
            buf_free(g, &g->pool[i]);
        g->pool_n = 0;
        g->pool_bytes = 0;
        cache_save(g);
        vkDestroyPipelineCache(g->dev, g->cache, NULL);
        vkDestroyDevice(g->dev, NULL);
        g->dev = VK_NULL_HANDLE;
    }
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
    if (g->lock_init) {
        pthread_mutex_destroy(&g->lock);
        pthread_mutex_destroy(&g->xlock);
        pthread_mutex_destroy(&g->plock);
        g->lock_init = false;
    }
}

/* ------------------------------------------------------------------ devices */

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
    if (create_instance(&g, false, e))
        goto fail;
    if (enumerate(g.instance, &devs, &nd, e))
        goto fail;
    int best = pick(devs, nd, NULL, e);
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
        at = append(buf, n, at, "   compute queue: family %d (%u queue%s); ", d->qfam, d->qcount, d->qcount == 1 ? "" : "s");
        if (d->xfam >= 0)
            at = append(buf, n, at, "transfer queue: family %d (%u queue%s, timestamps %s)\n", d->xfam, d->xcount,
                        d->xcount == 1 ? "" : "s", d->xts_bits ? "yes" : "no");
        else
            at = append(buf, n, at, "transfer queue: none (copies run on the compute queue)\n");
    }
    free(devs);
    vki_gpu_destroy(&g);
    return 0;
fail:
    free(devs);
    vki_gpu_destroy(&g);
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
    if (create_instance(&g, false, e) || enumerate(g.instance, &devs, &nd, e))
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
    if (n == 0) /* pick() says why none is usable */
        n = pick(devs, nd, NULL, e) < 0 ? -1 : 0;
done:
    free(devs);
    vki_gpu_destroy(&g);
    return n;
}

/* ------------------------------------------------------------------ memory */

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

static int buf_create(vki_gpu *g, VkDeviceSize size, vki_mem kind, bool shared, const char *what, vki_buf *b,
                      vkimg_err *e);

int vki_buf_create(vki_gpu *g, VkDeviceSize size, vki_mem kind, const char *what, vki_buf *b, vkimg_err *e)
{
    return buf_create(g, size, kind, false, what, b, e);
}

int vki_buf_create_shared(vki_gpu *g, VkDeviceSize size, vki_mem kind, const char *what, vki_buf *b, vkimg_err *e)
{
    return buf_create(g, size, kind, true, what, b, e);
}

/* The idle buffer of the pool with this key, if any (the newest: its pages are
 * the likeliest to be warm). */
static bool pool_take(vki_gpu *g, VkDeviceSize size, vki_mem kind, bool shared, vki_buf *b)
{
    bool found = false;
    pthread_mutex_lock(&g->plock);
    for (int i = g->pool_n - 1; i >= 0; i--) {
        vki_buf *p = &g->pool[i];
        if (p->size == size && p->kind == kind && p->shared == shared) {
            *b = *p;
            memmove(p, p + 1, (size_t)(g->pool_n - i - 1) * sizeof *p);
            g->pool_n--;
            g->pool_bytes -= size;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&g->plock);
    return found;
}

static void pool_init(vki_gpu *g)
{
    VkDeviceSize cap = (VkDeviceSize)1 << 30;
    if (g->lim.device_heap && g->lim.device_heap / 8 < cap)
        cap = g->lim.device_heap / 8;
    long mb = vki_env_long("VKIMG_BUFFER_POOL_MB", -1, 0, 1L << 30);
    g->pool_cap = mb >= 0 ? (VkDeviceSize)mb << 20 : cap;
    g->pool_n = 0;
    g->pool_bytes = 0;
}

static int buf_create(vki_gpu *g, VkDeviceSize size, vki_mem kind, bool shared, const char *what, vki_buf *b,
                      vkimg_err *e)
{
    memset(b, 0, sizeof *b);
    if (size == 0)
        size = 4;
    if (g->lock_init && pool_take(g, size, kind, shared, b))
        return 0;
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
    case VKI_MEM_CONST:
        usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
        need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        address = true;
        break;
    }
    if (address)
        usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
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
    VkResult r = vkAllocateMemory(g->dev, &mai, NULL, &b->mem);
    if (r != VK_SUCCESS) {
        vki_fail(e, VKIMG_E_RUNTIME, "Vulkan: vkAllocateMemory failed: %s (%s, %.1f MiB)", vki_vk_result_name(r), what,
                 mib(req.size));
        goto fail;
    }
    atomic_fetch_add(&g->allocs, 1);
    VKI_VK(vkBindBufferMemory(g->dev, b->buf, b->mem, 0));
    VkMemoryPropertyFlags f = g->mem.memoryTypes[type].propertyFlags;
    b->coherent = f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    if (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT && kind != VKI_MEM_DEVICE)
        VKI_VK(vkMapMemory(g->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map));
    if (b->map && g->uma) /* ordinary host memory: fewer page faults on first touch */
        vki_advise_huge(b->map, (size_t)size);
    if (address) {
        VkBufferDeviceAddressInfo ai = { .sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = b->buf };
        b->addr = vkGetBufferDeviceAddress(g->dev, &ai);
    }
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
    vkDestroyBuffer(g->dev, b->buf, NULL);
    vkFreeMemory(g->dev, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

void vki_buf_destroy(vki_gpu *g, vki_buf *b)
{
    if (!b || !g->dev)
        return;
    if (!b->buf || !b->mem || !g->lock_init || b->size > g->pool_cap) {
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

/* ------------------------------------------------------------------ kernels */

void vki_spec_set(vki_spec *s, uint32_t id, uint32_t val)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->id[i] == id) {
            s->val[i] = val;
            return;
        }
    if (s->n < VKI_MAX_SPEC) {
        s->id[s->n] = id;
        s->val[s->n++] = val;
    }
}

void vki_spec_setf(vki_spec *s, uint32_t id, float val)
{
    uint32_t u;
    memcpy(&u, &val, sizeof u);
    vki_spec_set(s, id, u);
}

static bool spec_equal(const vki_spec *a, const vki_spec *b)
{
    return a->n == b->n && !memcmp(a->id, b->id, a->n * sizeof a->id[0]) && !memcmp(a->val, b->val, a->n * sizeof a->val[0]);
}

static int kernel_get_locked(vki_gpu *g, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                             uint32_t push_size, vki_kernel **out, vkimg_err *e);

int vki_kernel_get(vki_gpu *g, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                   uint32_t push_size, vki_kernel **out, vkimg_err *e)
{
    pthread_mutex_lock(&g->lock);
    int rc = kernel_get_locked(g, name, spv, spv_size, spec, push_size, out, e);
    pthread_mutex_unlock(&g->lock);
    return rc;
}

static int kernel_get_locked(vki_gpu *g, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                             uint32_t push_size, vki_kernel **out, vkimg_err *e)
{
    for (vki_kernel *k = g->kernels; k; k = k->next)
        if (k->spv == spv && k->push_size == push_size && spec_equal(&k->spec, spec)) {
            *out = k;
            return 0;
        }
    if (push_size > g->lim.max_push)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: %u bytes of push constants, over the device's %u", name, push_size,
                        g->lim.max_push);
    vki_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
    k->spv = spv;
    k->spv_size = spv_size;
    k->spec = *spec;
    k->push_size = push_size;
    snprintf(k->name, sizeof k->name, "%s", name);
    VkShaderModuleCreateInfo smci = { .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = spv_size, .pCode = spv };
    VKI_VK(vkCreateShaderModule(g->dev, &smci, NULL, &k->module));
    VkPushConstantRange pcr = { .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = (push_size + 3u) & ~3u };
    VkPipelineLayoutCreateInfo plci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .pushConstantRangeCount = push_size ? 1 : 0,
        .pPushConstantRanges = &pcr,
    };
    VKI_VK(vkCreatePipelineLayout(g->dev, &plci, NULL, &k->layout));
    VkSpecializationMapEntry map[VKI_MAX_SPEC];
    for (uint32_t i = 0; i < spec->n; i++)
        map[i] = (VkSpecializationMapEntry){ .constantID = spec->id[i], .offset = i * 4, .size = 4 };
    VkSpecializationInfo si = { .mapEntryCount = spec->n, .pMapEntries = map, .dataSize = spec->n * 4, .pData = k->spec.val };
    VkComputePipelineCreateInfo cpci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = VK_SHADER_STAGE_COMPUTE_BIT,
            .module = k->module,
            .pName = "main",
            .pSpecializationInfo = &si,
        },
        .layout = k->layout,
    };
    double t0 = vki_now_ms();
    VKI_VK(vkCreateComputePipelines(g->dev, g->cache, 1, &cpci, NULL, &k->pipe));
    vki_gpu_log(g, VKIMG_LOG_DEBUG, "pipeline %s created in %.2f ms", name, vki_now_ms() - t0);
    k->next = g->kernels;
    g->kernels = k;
    *out = k;
    return 0;
fail:
    if (k->pipe)
        vkDestroyPipeline(g->dev, k->pipe, NULL);
    if (k->layout)
        vkDestroyPipelineLayout(g->dev, k->layout, NULL);
    if (k->module)
        vkDestroyShaderModule(g->dev, k->module, NULL);
    free(k);
    return e->code;
}

/* ------------------------------------------------------------------ commands */

int vki_cmd_begin(vki_gpu *g, vki_cmd *c, vkimg_err *e)
{
    return vki_cmd_begin_fam(g, g->qfam, c, e);
}

int vki_cmd_begin_fam(vki_gpu *g, uint32_t fam, vki_cmd *c, vkimg_err *e)
{
    memset(c, 0, sizeof *c);
    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
        .queueFamilyIndex = fam,
    };
    VKI_VK(vkCreateCommandPool(g->dev, &pci, NULL, &c->pool));
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = c->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VKI_VK(vkAllocateCommandBuffers(g->dev, &ai, &c->cmd));
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VKI_VK(vkBeginCommandBuffer(c->cmd, &bi));
    return 0;
fail:
    vki_cmd_abort(g, c);
    return e->code;
}

int vki_cmd_begin_timed(vki_gpu *g, vki_cmd *c, bool want, uint32_t n, VkQueryPool *qp, vkimg_err *e)
{
    *qp = VK_NULL_HANDLE;
    memset(c, 0, sizeof *c);
    if (want && g->lim.timestamp_bits > 0) {
        VkQueryPoolCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                      .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = n };
        VKI_VK(vkCreateQueryPool(g->dev, &qci, NULL, qp));
    }
    int rc = vki_cmd_begin(g, c, e);
    if (rc)
        return rc;
    if (*qp) {
        vkCmdResetQueryPool(c->cmd, *qp, 0, n);
        vkCmdWriteTimestamp(c->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, *qp, 0);
    }
    return 0;
fail:
    return e->code;
}

void vki_cmd_abort(vki_gpu *g, vki_cmd *c)
{
    if (c->pool)
        vkDestroyCommandPool(g->dev, c->pool, NULL); /* frees its command buffers */
    memset(c, 0, sizeof *c);
}

int vki_cmd_submit(vki_gpu *g, VkQueue q, vki_cmd *c, VkSemaphore wait, VkPipelineStageFlags wait_stages,
                   VkSemaphore signal, VkFence fence, vkimg_err *e)
{
    VKI_VK(vkEndCommandBuffer(c->cmd));
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .waitSemaphoreCount = wait ? 1 : 0,
        .pWaitSemaphores = &wait,
        .pWaitDstStageMask = &wait_stages,
        .commandBufferCount = 1,
        .pCommandBuffers = &c->cmd,
        .signalSemaphoreCount = signal ? 1 : 0,
        .pSignalSemaphores = &signal,
    };
    /* A VkQueue must not be used by two threads at once; xqueue may be queue. */
    pthread_mutex_t *lock = q == g->queue ? &g->lock : &g->xlock;
    pthread_mutex_lock(lock);
    VkResult r = vkQueueSubmit(q, 1, &si, fence);
    pthread_mutex_unlock(lock);
    if (r != VK_SUCCESS)
        return vki_fail_vk(e, "vkQueueSubmit", r);
    return 0;
fail:
    return e->code;
}

int vki_cmd_submit_wait(vki_gpu *g, vki_cmd *c, vkimg_err *e)
{
    VkFence fence = VK_NULL_HANDLE;
    VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    VKI_VK(vkCreateFence(g->dev, &fci, NULL, &fence));
    if (vki_cmd_submit(g, g->queue, c, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, fence, e)) {
        vkDestroyFence(g->dev, fence, NULL); /* nothing was submitted */
        fence = VK_NULL_HANDLE;
        goto fail;
    }
    VKI_VK(vkWaitForFences(g->dev, 1, &fence, VK_TRUE, UINT64_MAX));
    vkDestroyFence(g->dev, fence, NULL);
    vki_cmd_abort(g, c);
    return 0;
fail:
    if (fence) {
        vkDeviceWaitIdle(g->dev);
        vkDestroyFence(g->dev, fence, NULL);
    }
    vki_cmd_abort(g, c);
    return e->code;
}
