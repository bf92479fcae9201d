/* The fuzz targets' inputs in the normal test suite (and under ASan+UBSan in CI):
 * every file of the seed corpora (tests/fuzz/corpus/TARGET) and every input a
 * fuzzing campaign ever found (tests/fuzz/regress/TARGET: crashes, hangs, slow
 * inputs, broken promises) goes through the checks of its target (tests/fuzz/fuzz.h):
 * the image loader gives an image within the limits or one clean error line, never
 * a crash; the metadata readers and writers, the KTX2 reader, the pipeline parser
 * and the PNG round trip keep their promises. The loader's files are also loaded
 * from a file (vkimg_load_meta), which must agree with the memory loader. Each
 * seed of the loader must decode (they are valid files), but pic_refused.pic.
 * compare's option parser (fuzz_compare_opts) is CLI code that this test does not
 * link: scripts/fuzz ci replays its files. No device. */
#include "t.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *g_input = "";
#define FUZZ_FAIL(...)                                                                                       \
    do {                                                                                                     \
        fprintf(stderr, "FAIL %s (%s:%d): ", g_input, __FILE__, __LINE__);                                   \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        abort();                                                                                             \
    } while (0)
#include "../fuzz/fuzz.h"

static char g_tmp[256];

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The files of dir (not its dot files), sorted; *n of them (0 when the directory
 * does not exist). */
static char **list_dir(const char *dir, int *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **v = NULL;
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            v = realloc(v, sizeof *v * (size_t)cap);
            if (!v)
                abort();
        }
        v[(*n)++] = strdup(de->d_name);
    }
    closedir(d);
    if (*n)
        qsort(v, (size_t)*n, sizeof *v, cmp_names);
    return v;
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    size_t n = 0, cap = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            unsigned char *nb = realloc(b, cap);
            if (!nb)
                break;
            b = nb;
        }
        size_t k = fread(b + n, 1, cap - n, f);
        if (!k)
            break;
        n += k;
    }
    fclose(f);
    *len = n;
    return b;
}

/* The loader's file once more, from a file: the same result as from memory (an
 * empty input excepted: no file of 0 bytes is ever an image). */
static void load_from_file(const unsigned char *b, size_t len)
{
    FILE *f = fopen(g_tmp, "wb");
    CHECK(f && fwrite(b, 1, len, f) == len && !fclose(f), "%s: cannot write %s", g_input, g_tmp);
    vkimg_load_opts o = { .max_pixels = FUZZ_MAX_PIXELS };
    vkimg_image a, m;
    vkimg_meta meta, mm;
    vkimg_err ea = { 0 }, em = { 0 }, e2 = { 0 };
    int ra = vkimg_load_meta(g_tmp, &o, &a, &meta, &ea);
    int rm = vkimg_load_memory(b, len, g_tmp, &o, &m, &em);
    CHECK(ra == rm, "%s: from a file %d (%s), from memory %d (%s)", g_input, ra, ea.msg, rm, em.msg);
    if (!ra && !rm) {
        CHECK(fuzz_same_image(&a, &m), "%s: another image from a file", g_input);
        /* vkimg_load_meta's metadata is vki_meta_read's, or none where that fails */
        if (vki_meta_read(b, len, &mm, &e2) == 0) {
            CHECK(fuzz_same_bytes(meta.icc, meta.icc_len, mm.icc, mm.icc_len) &&
                      fuzz_same_bytes(meta.exif, meta.exif_len, mm.exif, mm.exif_len) &&
                      meta.orientation == mm.orientation,
                  "%s: vkimg_load_meta's metadata is not vki_meta_read's", g_input);
            vki_meta_free(&mm);
        } else {
            CHECK(!meta.icc && !meta.exif && meta.orientation == 1, "%s: metadata where the reader fails", g_input);
        }
    } else if (ra && rm) {
        CHECK(!strcmp(ea.msg, em.msg), "%s: '%s' from a file, '%s' from memory", g_input, ea.msg, em.msg);
    }
    vkimg_meta_free(&meta);
    vkimg_image_free(&a);
    vkimg_image_free(&m);
    unlink(g_tmp);
}

/* Runs target's checks on every file of tests/fuzz/KIND/target; returns how many. */
static int run_dir(const char *root, const char *kind, const char *target)
{
    char dir[4096], path[8192];
    snprintf(dir, sizeof dir, "%s/fuzz/%s/%s", root, kind, target);
    int n;
    char **names = list_dir(dir, &n);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        g_input = path;
        size_t len = 0;
        unsigned char *b = read_all(path, &len);
        CHECK(b || !len, "%s: cannot read", path);
        static const unsigned char none[1];
        const unsigned char *data = b ? b : none;
        if (!strcmp(target, "load")) {
            fuzz_one_load(data, len);
            if (len)
                load_from_file(data, len);
            if (!strcmp(kind, "corpus") && strcmp(names[i], "pic_refused.pic")) {
                vkimg_image im;
                vkimg_err e = { 0 };
                CHECK(vkimg_load_memory(data, len, names[i], NULL, &im, &e) == 0, "seed %s: %s", names[i], e.msg);
                vkimg_image_free(&im);
            }
        } else if (!strcmp(target, "ktx2")) {
            fuzz_one_ktx2(data, len);
        } else if (!strcmp(target, "parse")) {
            fuzz_one_parse(data, len);
        } else if (!strcmp(target, "png_roundtrip")) {
            fuzz_one_png(data, len);
        }
        t_pass++; /* it came through its checks */
        free(b);
        free(names[i]);
    }
    free(names);
    return n;
}

int main(void)
{
    const char *root = getenv("VKIMG_TEST_DATA");
    if (!root) {
        fprintf(stderr, "VKIMG_TEST_DATA (the tests/ directory) is not set: run through ctest\n");
        return 1;
    }
    snprintf(g_tmp, sizeof g_tmp, "%s/vkimg-fuzz-regress-%d.bin", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    static const char *const targets[] = { "load", "ktx2", "parse", "png_roundtrip" };
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        int seeds = run_dir(root, "corpus", targets[t]);
        int found = run_dir(root, "regress", targets[t]);
        printf("%-14s %3d seeds, %3d regression inputs\n", targets[t], seeds, found);
        CHECK(seeds > 0, "no seeds for %s in %s/fuzz/corpus", targets[t], root);
    }
    return t_done("test_fuzz_regress");
}
