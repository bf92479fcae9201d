/* Command buffers, submission, timestamps. */
#include "gpu/gpu.h"
#include "core/util.h"

#include <string.h>

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
    VkResult r = vki_fault_hit("device-lost") ? VK_ERROR_DEVICE_LOST : vkQueueSubmit(q, 1, &si, fence);
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

double vki_ts_ms(const vki_gpu *g, uint64_t a, uint64_t b, uint32_t bits)
{
    uint64_t d = b - a;
    if (bits < 64)
        d &= (UINT64_C(1) << bits) - 1;
    return (double)d * g->lim.timestamp_period * 1e-6;
}

void vki_cmd_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                     VkAccessFlags dst_access)
{
    VkMemoryBarrier mb = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access, .dstAccessMask = dst_access };
    vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}
