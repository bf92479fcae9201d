/* The on-disk pipeline cache: written after a run, reused, and ignored safely
 * when corrupt, truncated or from another device. Runs with validation. */
#include "vkimg/vkimg.h"
#include "t.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256], file[1024];

static int find_cache_file(void)
{
    char sub[512];
    snprintf(sub, sizeof sub, "%s/vkimg", dir);
    DIR *d = opendir(sub);
    if (!d)
        return 0;
    struct dirent *de;
    int found = 0;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, "pipelines-", 10) && strstr(de->d_name, ".bin") && !strchr(de->d_name + 10, 'X')) {
            snprintf(file, sizeof file, "%s/%s", sub, de->d_name);
            found++;
        }
    closedir(d);
    return found;
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* Creates a context, runs blur on a small image, checks the result is sane. */
static int run_once(const char *label)
{
    vkimg_err e = { 0 };
    vkimg_ctx *ctx = vkimg_ctx_create(&(vkimg_ctx_opts){ .validate = true }, &e);
    if (!ctx)
        return -1;
    vkimg_pipeline *p = vkimg_pipeline_parse("blur=1.5", &e);
    CHECK(p != NULL, "%s: parse: %s", label, e.msg);
    vkimg_image in = { 0 }, out = { 0 };
    CHECK(vkimg_image_alloc(&in, 19, 7, 3, VKIMG_U8, &e) == 0, "%s: alloc", label);
    unsigned char *d = in.data;
    for (int i = 0; i < 19 * 7 * 3; i++)
        d[i] = (unsigned char)(i * 37 + 11);
    int rc = p ? vkimg_run(ctx, p, &in, &(vkimg_run_opts){ .out_fmt = VKIMG_U8 }, &out, &e) : -1;
    CHECK(rc == 0, "%s: run: %s", label, e.msg);
    CHECK(rc != 0 || (out.w == 19 && out.h == 7 && out.c == 3), "%s: output shape", label);
    CHECK(vkimg_ctx_validation_messages(ctx) == 0, "%s: %d validation messages", label, vkimg_ctx_validation_messages(ctx));
    vkimg_image_free(&in);
    vkimg_image_free(&out);
    vkimg_pipeline_free(p);
    vkimg_ctx_destroy(ctx);
    return 0;
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/vkimg-cache-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("XDG_CACHE_HOME", dir, 1);
    unsetenv("VKIMG_NO_CACHE");
    if (run_once("first") < 0) {
        vkimg_err e = { 0 };
        vkimg_ctx *c = vkimg_ctx_create(&(vkimg_ctx_opts){ .validate = true }, &e);
        vkimg_ctx_destroy(c);
        return t_skip_no_device(e.msg);
    }
    CHECK(find_cache_file() == 1, "one cache file written under %s/vkimg", dir);
    long n = file_size(file);
    /* at least the 32-byte VkPipelineCacheHeaderVersionOne (lavapipe keeps no
     * pipeline data there: it has its own shader cache; NVIDIA stores binaries) */
    CHECK(n >= 32, "cache file has a header (%ld bytes)", n);

    /* reused: a second run leaves the file as it is */
    run_once("second");
    CHECK(file_size(file) == n, "unchanged cache file not rewritten");

    /* garbage: ignored, run still correct, rewritten with a valid cache */
    FILE *f = fopen(file, "wb");
    for (int i = 0; i < 4096; i++)
        fputc((i * 131) & 255, f);
    fclose(f);
    run_once("garbage");
    CHECK(file_size(file) == n, "garbage cache replaced by a valid one (%ld bytes, want %ld)", file_size(file), n);

    /* truncated to a few header bytes */
    f = fopen(file, "wb");
    fputs("vk", f);
    fclose(f);
    run_once("truncated");
    CHECK(file_size(file) == n, "truncated cache replaced");

    /* off: VKIMG_NO_CACHE=1 writes nothing */
    unlink(file);
    setenv("VKIMG_NO_CACHE", "1", 1);
    run_once("no-cache");
    CHECK(find_cache_file() == 0, "no cache file with VKIMG_NO_CACHE=1");

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
    return t_done("test_cache");
}
