/* Recording kernels: dispatches ordered by barriers, scratch and constant
 * buffers that live as long as the run. */
#include "exec/exec.h"
#include "core/util.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

uint32_t vki_wg_1d(const vki_gpu *g)
{
    uint32_t wg = 256;
    if (wg > g->lim.max_wg_invocations)
        wg = g->lim.max_wg_invocations;
    if (wg > g->lim.max_wg_size[0])
        wg = g->lim.max_wg_size[0];
    return wg;
}

uint64_t vki_stride_groups(uint64_t items, uint32_t wg, uint32_t per_inv, uint64_t cap)
{
    uint64_t per_group = (uint64_t)wg * per_inv;
    uint64_t g = (items + per_group - 1) / per_group;
    return g < 1 ? 1 : g > cap ? cap : g;
}

#define VKI_RUNS_CPU 16 /* chunks an invocation on CPU devices */

uint32_t vki_runs(const vki_gpu *g, const vki_step *s, uint32_t on_gpu)
{
    if (s->in_fmt != VKIMG_U8 || s->in % 8 || s->out % 8)
        return 0;
    /* 16-bit output (an image kept as u16 between two ops: plan.c) where a chunk's outputs are whole 64-bit words */
    if (s->out_fmt != VKIMG_U8 && s->out_fmt != VKIMG_F32 && (s->out_fmt != VKIMG_U16 || 48 / s->in_c * s->out_c % 4))
        return 0;
    /* GPUs: 8-bit outputs only (an invocation's 192 bytes of f32 outputs a chunk
     * are 4-5x slower on the H100 than the per-pixel stores: gray 8K RGBA to f32
     * 0.143 -> 0.575 ms) */
    if (s->out_fmt != VKIMG_U8)
        on_gpu = 0;
    const char *ev = getenv("VKIMG_RUNS");
    if (ev && !strcmp(ev, "gpu")) /* the GPUs' choices on any device (tests) */
        return on_gpu;
    long def = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? VKI_RUNS_CPU : (long)on_gpu;
    return (uint32_t)vki_env_long("VKIMG_RUNS", def, 0, 64);
}

bool vki_cpu_shape(const vki_gpu *g, const char *env, uint64_t bytes)
{
    const char *ev = getenv(env);
    const bool want = ev && (*ev == '0' || *ev == '1') ? *ev == '1'
                                                         : g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    return want && bytes < UINT32_MAX - 64;
}

int vki_rec_dispatch_runs(vki_rec *r, const vki_step *s, uint32_t runs, uint32_t wg, const char *name,
                          const uint32_t *spv, size_t spv_size, const vki_spec *spec, const void *push,
                          uint32_t push_size)
{
    vki_spec sp = *spec;
    vki_spec_named(&sp, "RUNS", runs);
    char runs_name[64];
    snprintf(runs_name, sizeof runs_name, "%s-runs", name);
    const uint64_t chunks = ((uint64_t)s->w * (uint64_t)s->h * (uint64_t)s->in_c + 47) / 48;
    const uint64_t per_group = (uint64_t)runs * wg;
    return vki_rec_dispatch_1d(r, runs_name, spv, spv_size, &sp, push, push_size,
                               (chunks + per_group - 1) / per_group);
}

bool vki_rec_texel_src_n(vki_rec *r, VkDeviceAddress a, uint32_t texel)
{
    const vki_gpu *g = r->gpu;
    const char *ev = getenv("VKIMG_TEXEL_SRC");
    const bool allowed = g->texel && !(ev && *ev == '0');
    VkBuffer buf;
    VkDeviceSize off, bytes;
    r->tex_src = a;
    r->tex_bytes = texel;
    /* the view holds all the bytes from a (maxTexelBufferElements: lavapipe's 2^27 texels are 1 GiB of
     * 8-byte ones, less than a 268-megapixel 16-bit RGBA image), else the kernel reads through the address */
    r->tex_used = allowed && (r->dry || (vki_buf_find(r->gpu, a, &buf, &off, &bytes) && off % g->tex_align == 0 &&
                                         off % texel == 0 && bytes >= texel && bytes / texel <= g->tex_max));
    return r->tex_used;
}

bool vki_rec_texel_src(vki_rec *r, VkDeviceAddress a)
{
    return vki_rec_texel_src_n(r, a, 8);
}

/* Pushes the descriptor of texel source src (vki_rec_texel_src) for kernel k. */
static int push_texel_src(vki_rec *r, const vki_kernel *k, const char *name, VkDeviceAddress src, bool used,
                          uint32_t texel)
{
    vki_gpu *g = r->gpu;
    vkimg_err *e = r->e;
    VkBuffer buf;
    VkDeviceSize off, bytes;
    if (!src || !vki_buf_find(g, src, &buf, &off, &bytes))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: no buffer holds its texel source", name);
    if (!used) { /* the kernel reads through the address: any valid view */
        bytes += off;
        off = 0;
    }
    VkDeviceSize range = bytes / texel * texel, max = (VkDeviceSize)g->tex_max * texel;
    if (range > max)
        range = max;
    if (r->nviews == r->cap_views) {
        int cap = r->cap_views ? 2 * r->cap_views : 8;
        VkBufferView *nv = realloc(r->views, (size_t)cap * sizeof *nv);
        if (!nv)
            return vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
        r->views = nv;
        r->cap_views = cap;
    }
    VkBufferViewCreateInfo vci = { .sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
                                   .buffer = buf,
                                   .format = texel == 16 ? VK_FORMAT_R32G32B32A32_UINT : VK_FORMAT_R32G32_UINT,
                                   .offset = off,
                                   .range = range };
    VkBufferView view;
    VKI_VK(vkCreateBufferView(g->dev, &vci, NULL, &view));
    r->views[r->nviews++] = view;
    if (used)
        vki_gpu_log(g, VKIMG_LOG_DEBUG, "%s reads its input as texels (%llu words from offset %llu)", name,
                    (unsigned long long)(range / texel), (unsigned long long)off);
    else
        vki_gpu_log(g, VKIMG_LOG_DEBUG, "%s reads its input through its address", name);
    VkWriteDescriptorSet w = { .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                               .dstBinding = 0,
                               .descriptorCount = 1,
                               .descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
                               .pTexelBufferView = &view };
    g->push_desc(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &w);
    return 0;
fail:
    return e->code;
}

static int dry_request(vki_rec *r, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                       uint32_t push_size)
{
    if (r->nreq == r->cap_req) {
        int cap = r->cap_req ? 2 * r->cap_req : 8;
        vki_kernel_req *nr = realloc(r->req, (size_t)cap * sizeof *nr);
        if (!nr)
            return vki_fail(r->e, VKIMG_E_RUNTIME, "out of memory");
        r->req = nr;
        r->cap_req = cap;
    }
    vki_kernel_req *q = &r->req[r->nreq++];
    snprintf(q->name, sizeof q->name, "%s", name);
    q->spv = spv;
    q->spv_size = spv_size;
    q->spec = *spec;
    q->push_size = push_size;
    return 0;
}

int vki_rec_dispatch(vki_rec *r, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                     const void *push, uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz)
{
    const vki_limits *l = &r->gpu->lim;
    uint32_t g[3] = { gx, gy, gz };
    for (int i = 0; i < 3; i++)
        if (g[i] > l->max_wg_count[i])
            return vki_fail(r->e, VKIMG_E_RUNTIME,
                            "%s: image too large for this device: needs %u workgroups in dimension %d, over "
                            "maxComputeWorkGroupCount[%d] = %u",
                            name, g[i], i, i, l->max_wg_count[i]);
    const VkDeviceAddress tex = r->tex_src; /* for this dispatch only */
    const bool tex_used = r->tex_used;
    const uint32_t tex_bytes = r->tex_bytes ? r->tex_bytes : 8;
    r->tex_src = 0;
    r->tex_used = false;
    r->tex_bytes = 8;
    if (!gx || !gy || !gz)
        return 0;
    if (r->dry)
        return dry_request(r, name, spv, spv_size, spec, push_size);
    vki_kernel *k;
    int rc = vki_kernel_get(r->gpu, name, spv, spv_size, spec, push_size, &k, r->e);
    if (rc)
        return rc;
    vki_gpu_log(r->gpu, VKIMG_LOG_DEBUG, "dispatch %s %ux%ux%u", name, gx, gy, gz);
    /* Uploads and fills before the first kernel that reads them; every dispatch
     * after the first depends on the ones before it: make their writes visible. */
    VkPipelineStageFlags src = 0;
    VkAccessFlags src_access = 0;
    if (r->transfer_pending) {
        src |= VK_PIPELINE_STAGE_TRANSFER_BIT;
        src_access |= VK_ACCESS_TRANSFER_WRITE_BIT;
    }
    if (r->ndispatch > 0) {
        src |= VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
        src_access |= VK_ACCESS_SHADER_WRITE_BIT;
    }
    if (src)
        vki_cmd_barrier(r->cmd, src, src_access, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    r->transfer_pending = false;
    vkCmdBindPipeline(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipe);
    if (push_size)
        vkCmdPushConstants(r->cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
    if (k->texel && (rc = push_texel_src(r, k, name, tex, tex_used, tex_bytes)))
        return rc;
    vkCmdDispatch(r->cmd, gx, gy, gz);
    r->ndispatch++;
    return 0;
}

int vki_rec_dispatch_1d(vki_rec *r, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                        const void *push, uint32_t push_size, uint64_t groups)
{
    uint64_t maxx = r->gpu->lim.max_wg_count[0];
    uint64_t gx = groups < maxx ? groups : maxx;
    uint64_t gy = gx ? (groups + gx - 1) / gx : 0;
    if (gy > UINT32_MAX)
        gy = UINT32_MAX;
    return vki_rec_dispatch(r, name, spv, spv_size, spec, push, push_size, (uint32_t)gx, (uint32_t)gy, 1);
}

static vki_buf *new_scratch(vki_rec *r)
{
    if (r->nscratch == r->cap_scratch) {
        int cap = r->cap_scratch ? 2 * r->cap_scratch : 8;
        vki_buf *nb = realloc(r->scratch, (size_t)cap * sizeof *nb);
        if (!nb)
            return NULL;
        r->scratch = nb;
        r->cap_scratch = cap;
    }
    vki_buf *b = &r->scratch[r->nscratch];
    memset(b, 0, sizeof *b);
    return b;
}

int vki_rec_scratch(vki_rec *r, VkDeviceSize size, const char *what, VkDeviceAddress *addr)
{
    if (r->dry) {
        *addr = 0;
        return 0;
    }
    vki_buf *b = new_scratch(r);
    if (!b)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "out of memory");
    int rc = vki_buf_create(r->gpu, size, VKI_MEM_DEVICE, what, b, r->e);
    if (rc)
        return rc;
    r->nscratch++;
    *addr = b->addr;
    return 0;
}

int vki_rec_scratch_init(vki_rec *r, VkDeviceSize size, const void *init, const char *what, VkDeviceAddress *addr)
{
    size = (size + 3) & ~(VkDeviceSize)3;
    if (init && size > 65536)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "%s: initial data over 64 KiB", what);
    int rc = vki_rec_scratch(r, size, what, addr);
    if (rc || r->dry)
        return rc;
    VkBuffer b = r->scratch[r->nscratch - 1].buf;
    if (init)
        vkCmdUpdateBuffer(r->cmd, b, 0, size, init);
    else
        vkCmdFillBuffer(r->cmd, b, 0, VK_WHOLE_SIZE, 0);
    r->transfer_pending = true; /* made visible before the next dispatch */
    return 0;
}

int vki_rec_copy(vki_rec *r, VkDeviceAddress src, VkDeviceAddress dst, VkDeviceSize bytes, const char *what)
{
    if (r->dry || !bytes)
        return 0;
    VkBuffer sb, db;
    VkDeviceSize so, dso, sn, dn;
    if (!vki_buf_find(r->gpu, src, &sb, &so, &sn) || !vki_buf_find(r->gpu, dst, &db, &dso, &dn) || sn < bytes ||
        dn < bytes || (sb == db && so < dso + bytes && dso < so + bytes))
        return vki_fail(r->e, VKIMG_E_RUNTIME, "%s: a copy of %llu bytes outside its buffers or onto itself (an "
                        "internal error)", what, (unsigned long long)bytes);
    /* after the kernels that wrote or read these bytes (ndispatch > 0) */
    if (r->ndispatch > 0)
        vki_cmd_barrier(r->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy c = { .srcOffset = so, .dstOffset = dso, .size = bytes };
    vkCmdCopyBuffer(r->cmd, sb, db, 1, &c);
    r->transfer_pending = true; /* made visible before the next dispatch */
    return 0;
}

int vki_rec_const(vki_rec *r, const void *data, size_t size, const char *what, VkDeviceAddress *addr)
{
    if (r->dry) {
        *addr = 0;
        return 0;
    }
    vki_buf *b = new_scratch(r);
    if (!b)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "out of memory");
    int rc = vki_buf_create(r->gpu, size, VKI_MEM_CONST, what, b, r->e);
    if (rc)
        return rc;
    r->nscratch++;
    memcpy(b->map, data, size);
    *addr = b->addr;
    return vki_buf_flush(r->gpu, b, r->e);
}

void vki_rec_release(vki_rec *r)
{
    for (int i = 0; i < r->nscratch; i++)
        vki_buf_destroy(r->gpu, &r->scratch[i]);
    free(r->scratch);
    r->scratch = NULL;
    r->nscratch = r->cap_scratch = 0;
    for (int i = 0; i < r->nviews; i++)
        vkDestroyBufferView(r->gpu->dev, r->views[i], NULL);
    free(r->views);
    r->views = NULL;
    r->nviews = r->cap_views = 0;
    free(r->req);
    r->req = NULL;
    r->nreq = r->cap_req = 0;
}
