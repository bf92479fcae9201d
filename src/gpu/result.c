/* VkResult names, Vulkan errors, the log callback. */
#include "gpu/gpu.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
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
