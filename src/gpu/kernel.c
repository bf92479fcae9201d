/* Compute kernels: one pipeline per (SPIR-V, specialization), created once. */
#include "gpu/gpu.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A constant past VKI_MAX_SPEC is a bug in an op's code (its kernel would keep
 * the shader's default): stop rather than run it. */
static void spec_room(const vki_spec *s)
{
    if (s->n >= VKI_MAX_SPEC) {
        fprintf(stderr, "vkimg: internal error: more than %d specialization constants for one kernel\n",
                VKI_MAX_SPEC);
        abort();
    }
}

void vki_spec_set(vki_spec *s, uint32_t id, uint32_t val)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (!s->name[i] && s->id[i] == id) {
            s->val[i] = val;
            return;
        }
    spec_room(s);
    s->id[s->n] = id;
    s->name[s->n] = NULL;
    s->val[s->n++] = val;
}

void vki_spec_setf(vki_spec *s, uint32_t id, float val)
{
    uint32_t u;
    memcpy(&u, &val, sizeof u);
    vki_spec_set(s, id, u);
}

void vki_spec_named(vki_spec *s, const char *name, uint32_t val)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->name[i] && !strcmp(s->name[i], name)) {
            s->val[i] = val;
            return;
        }
    spec_room(s);
    s->id[s->n] = UINT32_MAX;
    s->name[s->n] = name;
    s->val[s->n++] = val;
}

void vki_spec_namedf(vki_spec *s, const char *name, float val)
{
    uint32_t u;
    memcpy(&u, &val, sizeof u);
    vki_spec_named(s, name, u);
}

/* The ids of the named constants of spec, from the SPIR-V module: OpDecorate
 * SpecId gives the constant id of a result id, OpName the result id's name
 * (only decorated ones count: a variable may share a constant's name); both
 * come before the first function. 0, or -1 with e naming the missing constant. */
static int spec_resolve(const char *kernel, const uint32_t *spv, size_t spv_size, vki_spec *spec, vkimg_err *e)
{
    enum { OP_NAME = 5, OP_DECORATE = 71, OP_FUNCTION = 54, DEC_SPEC_ID = 1, MAX_DEC = 256 };
    bool named = false;
    for (uint32_t i = 0; i < spec->n; i++)
        named |= spec->name[i] != NULL;
    if (!named)
        return 0;
    uint32_t dec_target[MAX_DEC], dec_id[MAX_DEC];
    int ndec = 0;
    size_t nw = spv_size / 4;
    for (int pass = 0; pass < 2; pass++)
        for (size_t w = 5; w < nw;) { /* after the 5-word header */
            uint32_t len = spv[w] >> 16, op = spv[w] & 0xffff;
            if (len == 0 || w + len > nw || op == OP_FUNCTION)
                break;
            if (pass == 0 && op == OP_DECORATE && len >= 4 && spv[w + 2] == DEC_SPEC_ID && ndec < MAX_DEC) {
                dec_target[ndec] = spv[w + 1];
                dec_id[ndec++] = spv[w + 3];
            } else if (pass == 1 && op == OP_NAME && len >= 3) {
                const char *str = (const char *)&spv[w + 2];
                size_t max = (len - 2) * 4;
                for (uint32_t i = 0; i < spec->n; i++)
                    if (spec->name[i] && strnlen(str, max) < max && !strcmp(str, spec->name[i]))
                        for (int d = 0; d < ndec; d++)
                            if (dec_target[d] == spv[w + 1])
                                spec->id[i] = dec_id[d];
            }
            w += len;
        }
    for (uint32_t i = 0; i < spec->n; i++) {
        if (spec->name[i] && spec->id[i] == UINT32_MAX)
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: the shader has no specialization constant '%s'", kernel,
                            spec->name[i]);
        spec->name[i] = NULL;
    }
    return 0;
}

/* Whether the module declares a descriptor (OpDecorate DescriptorSet before the
 * first function): the texel source of vki_rec_texel_src, the only one. */
static bool spv_has_descriptor(const uint32_t *spv, size_t spv_size)
{
    enum { OP_DECORATE = 71, OP_FUNCTION = 54, DEC_DESCRIPTOR_SET = 34 };
    const size_t nw = spv_size / 4;
    for (size_t w = 5; w < nw;) {
        const uint32_t len = spv[w] >> 16, op = spv[w] & 0xffff;
        if (len == 0 || w + len > nw || op == OP_FUNCTION)
            break;
        if (op == OP_DECORATE && len >= 3 && spv[w + 2] == DEC_DESCRIPTOR_SET)
            return true;
        w += len;
    }
    return false;
}

static bool spec_equal(const vki_spec *a, const vki_spec *b)
{
    return a->n == b->n && !memcmp(a->id, b->id, a->n * sizeof a->id[0]) && !memcmp(a->val, b->val, a->n * sizeof a->val[0]);
}

/* VKIMG_PIPELINE_STATS: k's executables' statistics, a line each, to stderr. */
static void print_stats(vki_gpu *g, const vki_kernel *k)
{
    VkPipelineInfoKHR pi = { .sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = k->pipe };
    VkPipelineExecutablePropertiesKHR ep[4];
    uint32_t ne = 4;
    for (uint32_t i = 0; i < ne; i++)
        ep[i] = (VkPipelineExecutablePropertiesKHR){ .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR };
    VkResult r = g->exec_props(g->dev, &pi, &ne, ep);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        fprintf(stderr, "vkimg: %s: vkGetPipelineExecutablePropertiesKHR: %s\n", k->name, vki_vk_result_name(r));
        return;
    }
    for (uint32_t x = 0; x < ne; x++) {
        VkPipelineExecutableStatisticKHR st[32];
        uint32_t ns = 32;
        for (uint32_t i = 0; i < ns; i++)
            st[i] = (VkPipelineExecutableStatisticKHR){ .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR };
        VkPipelineExecutableInfoKHR ei = { .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                           .pipeline = k->pipe, .executableIndex = x };
        r = g->exec_stats(g->dev, &ei, &ns, st);
        if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
            fprintf(stderr, "vkimg: %s: vkGetPipelineExecutableStatisticsKHR: %s\n", k->name, vki_vk_result_name(r));
            return;
        }
        fprintf(stderr, "vkimg: pipeline stats %s [%s, subgroup %u]:", k->name, ep[x].name, ep[x].subgroupSize);
        for (uint32_t i = 0; i < ns; i++) {
            switch (st[i].format) {
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
                fprintf(stderr, " %s=%u;", st[i].name, (unsigned)st[i].value.b32);
                break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
                fprintf(stderr, " %s=%lld;", st[i].name, (long long)st[i].value.i64);
                break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
                fprintf(stderr, " %s=%llu;", st[i].name, (unsigned long long)st[i].value.u64);
                break;
            default:
                fprintf(stderr, " %s=%g;", st[i].name, st[i].value.f64);
            }
        }
        fputc('\n', stderr);
    }
}

/* Creates k's module, layout and pipeline (k's spv, spec and push_size set). */
static int kernel_create(vki_gpu *g, vki_kernel *k, vkimg_err *e)
{
    const vki_spec *spec = &k->spec;
    VkShaderModuleCreateInfo smci = { .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                      .codeSize = k->spv_size, .pCode = k->spv };
    VKI_VK(vkCreateShaderModule(g->dev, &smci, NULL, &k->module));
    VkPushConstantRange pcr = { .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = (k->push_size + 3u) & ~3u };
    k->texel = spv_has_descriptor(k->spv, k->spv_size);
    if (k->texel && !g->tex_layout) {
        vki_fail(e, VKIMG_E_RUNTIME, "%s: reads a texel buffer, which needs VK_KHR_push_descriptor (%s)", k->name,
                 g->props.deviceName);
        goto fail;
    }
    VkPipelineLayoutCreateInfo plci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = k->texel ? 1 : 0,
        .pSetLayouts = &g->tex_layout,
        .pushConstantRangeCount = k->push_size ? 1 : 0,
        .pPushConstantRanges = &pcr,
    };
    VKI_VK(vkCreatePipelineLayout(g->dev, &plci, NULL, &k->layout));
    VkSpecializationMapEntry map[VKI_MAX_SPEC];
    for (uint32_t i = 0; i < spec->n; i++)
        map[i] = (VkSpecializationMapEntry){ .constantID = spec->id[i], .offset = i * 4, .size = 4 };
    VkSpecializationInfo si = { .mapEntryCount = spec->n, .pMapEntries = map, .dataSize = spec->n * 4, .pData = spec->val };
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
    if (g->exec_props)
        cpci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    double t0 = vki_now_ms();
    VKI_VK(vkCreateComputePipelines(g->dev, g->cache, 1, &cpci, NULL, &k->pipe)); /* the cache is internally synchronized */
    vki_gpu_log(g, VKIMG_LOG_DEBUG, "pipeline %s created in %.2f ms", k->name, vki_now_ms() - t0);
    if (g->exec_props)
        print_stats(g, k);
    return 0;
fail:
    if (k->pipe)
        vkDestroyPipeline(g->dev, k->pipe, NULL);
    if (k->layout)
        vkDestroyPipelineLayout(g->dev, k->layout, NULL);
    if (k->module)
        vkDestroyShaderModule(g->dev, k->module, NULL);
    return e->code;
}

int vki_kernel_get(vki_gpu *g, const char *name, const uint32_t *spv, size_t spv_size, const vki_spec *spec,
                   uint32_t push_size, vki_kernel **out, vkimg_err *e)
{
    vki_spec resolved = *spec;
    if (spec_resolve(name, spv, spv_size, &resolved, e))
        return e ? e->code : VKIMG_E_RUNTIME;
    if (push_size > g->lim.max_push)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: %u bytes of push constants, over the device's %u", name, push_size,
                        g->lim.max_push);
    pthread_mutex_lock(&g->lock);
    for (vki_kernel *k = g->kernels; k;) {
        if (k->spv == spv && k->push_size == push_size && spec_equal(&k->spec, &resolved)) {
            if (k->ready) {
                pthread_mutex_unlock(&g->lock);
                *out = k;
                return 0;
            }
            /* another thread is creating it: wait, then look again (it may have failed) */
            pthread_cond_wait(&g->kernel_cv, &g->lock);
            k = g->kernels;
            continue;
        }
        k = k->next;
    }
    vki_kernel *k = calloc(1, sizeof *k);
    if (!k) {
        pthread_mutex_unlock(&g->lock);
        return vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
    }
    k->spv = spv;
    k->spv_size = spv_size;
    k->spec = resolved;
    k->push_size = push_size;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->next = g->kernels; /* listed as being created: a thread asking for it waits */
    g->kernels = k;
    pthread_mutex_unlock(&g->lock);

    int rc = kernel_create(g, k, e);

    pthread_mutex_lock(&g->lock);
    if (rc) {
        for (vki_kernel **pp = &g->kernels; *pp; pp = &(*pp)->next)
            if (*pp == k) {
                *pp = k->next;
                break;
            }
        free(k);
    } else {
        k->ready = true;
        *out = k;
    }
    pthread_cond_broadcast(&g->kernel_cv);
    pthread_mutex_unlock(&g->lock);
    return rc;
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
