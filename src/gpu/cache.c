#include "gpu/gpu_priv.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The on-disk pipeline cache: $XDG_CACHE_HOME/vkimg (else ~/.cache/vkimg), one file per device UUID and
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

int vki_cache_open(vki_gpu *g, const vkimg_ctx_opts *o, vkimg_err *e)
{
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
    if (cr != VK_SUCCESS)
        return vki_fail_vk(e, "vkCreatePipelineCache", cr);
    return 0;
}

void vki_cache_close(vki_gpu *g)
{
    if (!g->cache)
        return;
    cache_save(g);
    vkDestroyPipelineCache(g->dev, g->cache, NULL);
    g->cache = VK_NULL_HANDLE;
}
