/* Command buffers, submission, timestamps. */
#include "gpu/gpu.h"
#include "core/util.h"

#include <string.h>

int vki_cmd_begin(vki_gpu *g, vki_cmd *c, vkimg_err *e)
{
    return vki_cmd_begin_fam(g, g->qfam, c, e);
}

/* A spare command buffer of family fam, its pool reset: true, or false. */
static bool spare_cmd(vki_gpu *g, uint32_t fam, vki_cmd *c)
{
    bool found = false;
    pthread_mutex_lock(&g->plock);
    for (int i = g->spare.ncmds - 1; i >= 0 && !found; i--)
        if (g->spare.cmds[i].fam == fam) {
            *c = g->spare.cmds[i];
            g->spare.cmds[i] = g->spare.cmds[--g->spare.ncmds];
            found = true;
        }
    pthread_mutex_unlock(&g->plock);
    if (found && vkResetCommandPool(g->dev, c->pool, 0) != VK_SUCCESS) {
        vki_cmd_abort(g, c);
        found = false;
    }
    return found;
}

int vki_cmd_begin_fam(vki_gpu *g, uint32_t fam, vki_cmd *c, vkimg_err *e)
{
    memset(c, 0, sizeof *c);
    if (g->lock_init && spare_cmd(g, fam, c)) {
        VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
        VKI_VK(vkBeginCommandBuffer(c->cmd, &bi));
        return 0;
    }
    c->fam = fam;
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
    int rc;
    if (want && g->lim.timestamp_bits > 0 && (rc = vki_query_get(g, n, qp, e)))
        return rc;
    rc = vki_cmd_begin(g, c, e);
    if (rc)
        return rc;
    if (*qp) {
        vkCmdResetQueryPool(c->cmd, *qp, 0, n);
        vkCmdWriteTimestamp(c->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, *qp, 0);
    }
    return 0;
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
    if (vki_fence_get(g, &fence, e))
        goto fail;
    if (vki_cmd_submit(g, g->queue, c, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, fence, e)) {
        vkDestroyFence(g->dev, fence, NULL); /* nothing was submitted */
        fence = VK_NULL_HANDLE;
        goto fail;
    }
    VKI_VK(vkWaitForFences(g->dev, 1, &fence, VK_TRUE, UINT64_MAX));
    vki_fence_put(g, fence);
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

/* ---------------------------------------------------------------- spares */

void vki_cmd_recycle(vki_gpu *g, vki_cmd *c)
{
    if (!c->pool)
        return;
    bool kept = false;
    if (g->lock_init) {
        pthread_mutex_lock(&g->plock);
        if ((kept = g->spare.ncmds < VKI_SPARE_MAX))
            g->spare.cmds[g->spare.ncmds++] = *c;
        pthread_mutex_unlock(&g->plock);
    }
    if (kept)
        memset(c, 0, sizeof *c);
    else
        vki_cmd_abort(g, c);
}

/* A spare handle from list (n of them): true, or false */
static bool spare_take(vki_gpu *g, void *list, int *n, size_t size, void *out)
{
    bool found = false;
    if (!g->lock_init)
        return false;
    pthread_mutex_lock(&g->plock);
    if (*n > 0) {
        memcpy(out, (char *)list + (size_t)(--*n) * size, size);
        found = true;
    }
    pthread_mutex_unlock(&g->plock);
    return found;
}

/* Keeps a handle in list (n of them): false where it is full */
static bool spare_keep(vki_gpu *g, void *list, int *n, size_t size, const void *h)
{
    bool kept = false;
    if (!g->lock_init)
        return false;
    pthread_mutex_lock(&g->plock);
    if ((kept = *n < VKI_SPARE_MAX))
        memcpy((char *)list + (size_t)(*n)++ * size, h, size);
    pthread_mutex_unlock(&g->plock);
    return kept;
}

int vki_fence_get(vki_gpu *g, VkFence *f, vkimg_err *e)
{
    if (spare_take(g, g->spare.fences, &g->spare.nfences, sizeof *f, f)) {
        VkResult r = vkResetFences(g->dev, 1, f);
        if (r == VK_SUCCESS)
            return 0;
        vkDestroyFence(g->dev, *f, NULL);
    }
    VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    *f = VK_NULL_HANDLE;
    VKI_VK(vkCreateFence(g->dev, &fci, NULL, f));
    return 0;
fail:
    return e->code;
}

void vki_fence_put(vki_gpu *g, VkFence f)
{
    if (f && !spare_keep(g, g->spare.fences, &g->spare.nfences, sizeof f, &f))
        vkDestroyFence(g->dev, f, NULL);
}

int vki_sem_get(vki_gpu *g, VkSemaphore *s, vkimg_err *e)
{
    if (spare_take(g, g->spare.sems, &g->spare.nsems, sizeof *s, s))
        return 0;
    VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO };
    *s = VK_NULL_HANDLE;
    VKI_VK(vkCreateSemaphore(g->dev, &sci, NULL, s));
    return 0;
fail:
    return e->code;
}

void vki_sem_put(vki_gpu *g, VkSemaphore s)
{
    if (s && !spare_keep(g, g->spare.sems, &g->spare.nsems, sizeof s, &s))
        vkDestroySemaphore(g->dev, s, NULL);
}

int vki_query_get(vki_gpu *g, uint32_t n, VkQueryPool *qp, vkimg_err *e)
{
    *qp = VK_NULL_HANDLE;
    if (g->lock_init) {
        pthread_mutex_lock(&g->plock);
        for (int i = g->spare.nqps - 1; i >= 0; i--)
            if (g->spare.qn[i] == n) {
                *qp = g->spare.qps[i];
                g->spare.qps[i] = g->spare.qps[--g->spare.nqps];
                g->spare.qn[i] = g->spare.qn[g->spare.nqps];
                break;
            }
        pthread_mutex_unlock(&g->plock);
        if (*qp)
            return 0;
    }
    VkQueryPoolCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = n };
    VKI_VK(vkCreateQueryPool(g->dev, &qci, NULL, qp));
    return 0;
fail:
    return e->code;
}

void vki_query_put(vki_gpu *g, VkQueryPool qp, uint32_t n)
{
    if (!qp)
        return;
    bool kept = false;
    if (g->lock_init) {
        pthread_mutex_lock(&g->plock);
        if ((kept = g->spare.nqps < VKI_SPARE_MAX)) {
            g->spare.qps[g->spare.nqps] = qp;
            g->spare.qn[g->spare.nqps++] = n;
        }
        pthread_mutex_unlock(&g->plock);
    }
    if (!kept)
        vkDestroyQueryPool(g->dev, qp, NULL);
}

void vki_spare_destroy(vki_gpu *g)
{
    for (int i = 0; i < g->spare.ncmds; i++)
        vki_cmd_abort(g, &g->spare.cmds[i]);
    for (int i = 0; i < g->spare.nfences; i++)
        vkDestroyFence(g->dev, g->spare.fences[i], NULL);
    for (int i = 0; i < g->spare.nsems; i++)
        vkDestroySemaphore(g->dev, g->spare.sems[i], NULL);
    for (int i = 0; i < g->spare.nqps; i++)
        vkDestroyQueryPool(g->dev, g->spare.qps[i], NULL);
    memset(&g->spare, 0, sizeof g->spare);
}
