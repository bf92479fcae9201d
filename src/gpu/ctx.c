/* The public device context (vkimg_ctx): a vki_gpu. */
#include "gpu/gpu.h"
#include "gpu/gpu_priv.h"
#include "core/util.h"

#include <stdlib.h>

vkimg_ctx *vkimg_ctx_create(const vkimg_ctx_opts *o, vkimg_err *e)
{
    vki_err_clear(e);
    vkimg_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
        return NULL;
    }
    if (vki_gpu_create(&ctx->gpu, o, e)) {
        free(ctx);
        return NULL;
    }
    return ctx;
}

void vkimg_ctx_destroy(vkimg_ctx *ctx)
{
    if (!ctx)
        return;
    vki_gpu_destroy(&ctx->gpu);
    free(ctx);
}

void vkimg_ctx_trim(vkimg_ctx *ctx)
{
    if (ctx)
        vki_pool_trim(&ctx->gpu);
}

int vkimg_ctx_validation_messages(const vkimg_ctx *ctx)
{
    return ctx ? ctx->gpu.validation_msgs : 0;
}

const char *vkimg_ctx_device_desc(const vkimg_ctx *ctx)
{
    return ctx ? ctx->gpu.desc : "";
}

bool vkimg_ctx_is_cpu(const vkimg_ctx *ctx)
{
    return ctx && ctx->gpu.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

int vkimg_ctx_device_index(const vkimg_ctx *ctx)
{
    return ctx ? ctx->gpu.index : -1;
}
