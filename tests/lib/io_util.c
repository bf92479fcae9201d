/* Helpers of the I/O tests (see io_util.h). */
#include "io_util.h"
#include "t.h"

#include <dirent.h>
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stb_image.h>

char g_dir[256];

const char *P(const char *name)
{
    static char buf[4][4096];
    static int i;
    char *b = buf[i++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", g_dir, name);
    return b;
}

void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st))
        return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        if (d) {
            struct dirent *de;
            while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                    continue;
                char sub[4096];
                snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
                rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int count_temps(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (!fnmatch(".*.vkimg-*", de->d_name, 0))
            n++;
    closedir(d);
    return n;
}

unsigned char *read_all(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            unsigned char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, n, f);
    return (fclose(f) || w != n) ? -1 : 0;
}

int file_equals(const char *path, const void *data, size_t n)
{
    size_t len;
    unsigned char *b = read_all(path, &len);
    int eq = b && len == n && !memcmp(b, data, n);
    free(b);
    return eq;
}

void make_image(vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, int noise, unsigned long long seed)
{
    vkimg_err e;
    if (vkimg_image_alloc(im, w, h, c, fmt, &e)) {
        fprintf(stderr, "alloc: %s\n", e.msg);
        exit(1);
    }
    unsigned long long s = seed | 1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                double v = (k == 3 || (c == 2 && k == 1))
                               ? ((x + y) % 5) / 4.0
                               : 0.5 + 0.4 * sin(0.11 * x * (k + 1) + 0.07 * y) * cos(0.05 * y * (k + 1));
                if (noise)
                    v += ((double)(t_rand(&s) % 1000) / 1000.0 - 0.5) * 0.2;
                v = v < 0 ? 0 : v > 1 ? 1 : v;
                size_t i = ((size_t)y * w + x) * c + k;
                switch (fmt) {
                case VKIMG_U8: ((uint8_t *)im->data)[i] = (uint8_t)lround(v * 255); break;
                case VKIMG_U16: ((uint16_t *)im->data)[i] = (uint16_t)lround(v * 65535); break;
                case VKIMG_F32: ((float *)im->data)[i] = (float)v; break;
                case VKIMG_U32: ((uint32_t *)im->data)[i] = (uint32_t)(v * 4e9); break;
                case VKIMG_U64: ((uint64_t *)im->data)[i] = (uint64_t)(v * 1e18); break;
                default: break;
                }
            }
}

void fill_random_bytes(vkimg_image *im, unsigned long long seed)
{
    unsigned char *p = im->data;
    size_t n = vkimg_image_bytes(im);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(t_rand(&seed) >> 56);
}

int same_image(const vkimg_image *a, const vkimg_image *b)
{
    return a->w == b->w && a->h == b->h && a->c == b->c && a->fmt == b->fmt && a->data && b->data &&
           !memcmp(a->data, b->data, vkimg_image_bytes(a));
}

void check_failed(int line, const char *dir, const char *path, int rc, int want_code, const vkimg_err *e,
                  const char *want, const void *prev, size_t prevlen)
{
    if (rc != want_code || !strstr(e->msg, path) || (want && !strstr(e->msg, want)))
        fprintf(stderr, "  (line %d) rc=%d msg: %s\n", line, rc, e->msg);
    CHECK(rc == want_code, "line %d: rc %d, want %d", line, rc, want_code);
    CHECK(strstr(e->msg, path) != NULL, "line %d: message does not name %s: %s", line, path, e->msg);
    if (want)
        CHECK(strstr(e->msg, want) != NULL, "line %d: message lacks '%s': %s", line, want, e->msg);
    CHECK(!strchr(e->msg, '\n'), "line %d: message has a newline", line);
    CHECK(count_temps(dir) == 0, "line %d: temporary files left in %s", line, dir);
    if (prev)
        CHECK(file_equals(path, prev, prevlen), "line %d: existing %s was changed", line, path);
    else
        CHECK(!exists(path), "line %d: %s exists after a failed save", line, path);
}

double mean_abs_u8(const vkimg_image *a, const vkimg_image *b, int chans)
{
    /* compares the first `chans` channels of a (gray replicated if a has 1-2) with b */
    double s = 0;
    size_t np = (size_t)a->w * a->h;
    for (size_t i = 0; i < np; i++)
        for (int k = 0; k < chans; k++) {
            int ka = a->c <= 2 ? 0 : k;
            s += fabs((double)((uint8_t *)a->data)[i * a->c + ka] - ((uint8_t *)b->data)[i * b->c + k]);
        }
    return s / (double)(np * chans);
}

int stb_decode(const unsigned char *p, size_t n, vkimg_image *ref)
{
    memset(ref, 0, sizeof *ref);
    int w, h, c, is16 = stbi_is_16_bit_from_memory(p, (int)n);
    void *d = is16 ? (void *)stbi_load_16_from_memory(p, (int)n, &w, &h, &c, 0)
                   : (void *)stbi_load_from_memory(p, (int)n, &w, &h, &c, 0);
    if (!d)
        return -1;
    *ref = (vkimg_image){ .w = w, .h = h, .c = c, .fmt = is16 ? VKIMG_U16 : VKIMG_U8, .data = d };
    return 0;
}

int io_main(const char *name, void (*const tests[])(void), size_t ntests)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/vkimg-%s-XXXXXX", name);
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    for (size_t i = 0; i < ntests; i++)
        tests[i]();
    rm_rf(g_dir);
    return t_done(name);
}

void jpeg_image(vkimg_image *im, int w, int h, int c, int kind, unsigned long long seed)
{
    vkimg_err e;
    if (vkimg_image_alloc(im, w, h, c, VKIMG_U8, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        exit(1);
    }
    unsigned long long s = seed | 1;
    unsigned char *d = im->data;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                double v = 0.5 + 0.4 * sin(0.13 * x * (k + 1) + 0.05 * y) * cos(0.07 * y * (k + 2));
                if (kind == 1)
                    v += ((double)(t_rand(&s) % 1000) / 1000.0 - 0.5) * 0.3;
                if (kind == 2)
                    v = (double)(t_rand(&s) % 256) / 255.0;
                if (kind == 3)
                    v = ((x + y + k) & 1) ? 1.0 : 0.0;
                v = v < 0 ? 0 : v > 1 ? 1 : v;
                d[((size_t)y * w + x) * c + k] = (unsigned char)lround(v * 255);
            }
}
