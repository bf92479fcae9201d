/* Loading and saving whatever the format: sample formats, images and file kinds;
 * load errors and decode limits; save errors with the atomic-write guarantees (no
 * output, no temporary file, an existing output untouched) after every failure;
 * vkimg_check_output; decoders and encoders on several threads. No device. */
#include "io/io_priv.h"
#include "io_util.h"
#include "png_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- basics */

static void test_basics(void)
{
    CHECK(vkimg_fmt_size(VKIMG_U8) == 1 && vkimg_fmt_size(VKIMG_U16) == 2 && vkimg_fmt_size(VKIMG_F16) == 2 &&
              vkimg_fmt_size(VKIMG_F32) == 4 && vkimg_fmt_size(VKIMG_U32) == 4 && vkimg_fmt_size(VKIMG_U64) == 8,
          "fmt sizes");
    CHECK(vkimg_fmt_size((vkimg_fmt)42) == 0, "unknown fmt size");
    CHECK(!strcmp(vkimg_fmt_name(VKIMG_U8), "u8") && !strcmp(vkimg_fmt_name(VKIMG_U16), "u16") &&
              !strcmp(vkimg_fmt_name(VKIMG_F32), "f32") && !strcmp(vkimg_fmt_name(VKIMG_U64), "u64"),
          "fmt names");

    vkimg_image im = { .w = 3, .h = 5, .c = 4, .fmt = VKIMG_U16 };
    CHECK(vkimg_image_bytes(&im) == 3 * 5 * 4 * 2, "bytes %zu", vkimg_image_bytes(&im));
    vkimg_image big = { .w = INT_MAX, .h = INT_MAX, .c = 4, .fmt = VKIMG_U64 };
    if (sizeof(size_t) == 8)
        CHECK(vkimg_image_bytes(&big) == 0, "overflow must give 0");
    vkimg_image bad = { .w = 3, .h = 5, .c = 5, .fmt = VKIMG_U8 };
    CHECK(vkimg_image_bytes(&bad) == 0, "c=5 must give 0");

    vkimg_err e;
    CHECK(vkimg_image_alloc(&im, 7, 3, 2, VKIMG_F32, &e) == 0, "alloc: %s", e.msg);
    CHECK(im.w == 7 && im.h == 3 && im.c == 2 && im.fmt == VKIMG_F32 && im.data, "alloc fields");
    int zero = 1;
    for (size_t i = 0; i < vkimg_image_bytes(&im); i++)
        zero &= ((unsigned char *)im.data)[i] == 0;
    CHECK(zero, "alloc must zero");
    vkimg_image_free(&im);
    CHECK(im.data == NULL && im.w == 0, "free clears");
    vkimg_image_free(&im); /* twice is fine */
    vkimg_image_free(NULL);
    CHECK(vkimg_image_alloc(&im, INT_MAX, INT_MAX, 4, VKIMG_U64, &e) == VKIMG_E_RUNTIME && !im.data,
          "overflowing alloc must fail");
    CHECK(vkimg_image_alloc(&im, 4, 4, 0, VKIMG_U8, &e) == VKIMG_E_RUNTIME, "c=0 must fail");
    CHECK(vkimg_image_alloc(&im, 0, 4, 1, VKIMG_U8, &e) == VKIMG_E_RUNTIME, "w=0 must fail");

    CHECK(vkimg_file_kind_of("a/b.png") == VKIMG_FILE_PNG, "png");
    CHECK(vkimg_file_kind_of("B.PNG") == VKIMG_FILE_PNG, "PNG");
    CHECK(vkimg_file_kind_of("x.jpg") == VKIMG_FILE_JPEG && vkimg_file_kind_of("x.JpEg") == VKIMG_FILE_JPEG, "jpeg");
    CHECK(vkimg_file_kind_of("x.bmp") == VKIMG_FILE_BMP && vkimg_file_kind_of("x.tga") == VKIMG_FILE_TGA, "bmp tga");
    CHECK(vkimg_file_kind_of("x.hdr") == VKIMG_FILE_HDR && vkimg_file_kind_of("x.NPY") == VKIMG_FILE_NPY, "hdr npy");
    CHECK(vkimg_file_kind_of("x.gif") == VKIMG_FILE_UNKNOWN, "gif is input only");
    CHECK(vkimg_file_kind_of("x.pngx") == VKIMG_FILE_UNKNOWN, "pngx");
    CHECK(vkimg_file_kind_of("noext") == VKIMG_FILE_UNKNOWN, "noext");
    CHECK(vkimg_file_kind_of("dir.png/file") == VKIMG_FILE_UNKNOWN, "extension of a directory");
    CHECK(vkimg_file_kind_of("out.png/") == VKIMG_FILE_UNKNOWN, "trailing slash");
    CHECK(vkimg_file_kind_of(NULL) == VKIMG_FILE_UNKNOWN, "NULL");

    CHECK(vkimg_file_fmt(VKIMG_FILE_PNG, VKIMG_U16) == VKIMG_U16, "png u16");
    CHECK(vkimg_file_fmt(VKIMG_FILE_PNG, VKIMG_U8) == VKIMG_U8, "png u8");
    CHECK(vkimg_file_fmt(VKIMG_FILE_PNG, VKIMG_F32) == VKIMG_U8, "png f32");
    CHECK(vkimg_file_fmt(VKIMG_FILE_PNG, VKIMG_F16) == VKIMG_U8, "png f16");
    CHECK(vkimg_file_fmt(VKIMG_FILE_JPEG, VKIMG_U16) == VKIMG_U8, "jpeg");
    CHECK(vkimg_file_fmt(VKIMG_FILE_BMP, VKIMG_F32) == VKIMG_U8, "bmp");
    CHECK(vkimg_file_fmt(VKIMG_FILE_TGA, VKIMG_U16) == VKIMG_U8, "tga");
    CHECK(vkimg_file_fmt(VKIMG_FILE_HDR, VKIMG_U8) == VKIMG_F32, "hdr");
    CHECK(vkimg_file_fmt(VKIMG_FILE_NPY, VKIMG_U64) == VKIMG_U64, "npy");
}

/* ---------------------------------------------------------------- load errors */

static void test_load_errors(void)
{
    vkimg_err e;
    vkimg_image im;
    int rc;

    rc = vkimg_load(P("missing.png"), NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("missing.png")) && strstr(e.msg, strerror(ENOENT)),
          "missing: %s", e.msg);
    CHECK(im.data == NULL, "no data on failure");

    write_file(P("empty.png"), "", 0);
    rc = vkimg_load(P("empty.png"), NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("empty.png")) && strstr(e.msg, "empty file"), "empty: %s", e.msg);

    /* no known signature (the .png name does not matter): the formats read are listed */
    const char *text = "this is not an image, just some text\n";
    write_file(P("text.png"), text, strlen(text));
    memset(&im, 0x5a, sizeof im);
    rc = vkimg_load(P("text.png"), NULL, &im, &e);
    char want[512];
    snprintf(want, sizeof want, "%s: not a supported image (PNG, JPEG, WebP, TIFF, GIF, BMP, TGA, PSD, HDR, PNM)", P("text.png"));
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want) && !im.data, "text: %s", e.msg);

    rc = vkimg_load(g_dir, NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, g_dir), "directory as input: %s", e.msg);

    /* truncated PNG: a valid file cut in the middle of its IDAT (the encoder writes
     * IHDR, then one IDAT: the chunk whose length runs past the end is named) */
    vkimg_image src;
    make_image(&src, 40, 30, 3, VKIMG_U8, 1, 11);
    unsigned char *png;
    size_t n;
    CHECK(vki_png_encode(&src, 6, &png, &n, &e) == 0, "encode: %s", e.msg);
    CHECK(n > 45 && !memcmp(png + 37, "IDAT", 4) && 45 + be32(png + 33) + 12 == n && n / 2 > 41 &&
              n / 2 < 41 + be32(png + 33),
          "the encoder's file is IHDR, one IDAT holding the middle byte, IEND");
    write_file(P("trunc.png"), png, n / 2);
    memset(&im, 0x5a, sizeof im);
    rc = vkimg_load(P("trunc.png"), NULL, &im, &e);
    snprintf(want, sizeof want, "%s: PNG: truncated (chunk 'IDAT' of %u bytes runs past the end of the file)",
             P("trunc.png"), (unsigned)be32(png + 33));
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want), "truncated: %s", e.msg);
    CHECK(im.data == NULL, "truncated: no data");
    write_file(P("trunc2.png"), png, 20); /* cut inside IHDR */
    memset(&im, 0x5a, sizeof im);
    rc = vkimg_load(P("trunc2.png"), NULL, &im, &e);
    snprintf(want, sizeof want, "%s: PNG: truncated (20 bytes, no complete IHDR chunk)", P("trunc2.png"));
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want) && !im.data, "truncated header: %s", e.msg);

    /* the pixel limit: exactly at the limit loads, one below it does not */
    vkimg_load_opts lo = { .max_pixels = 40 * 30 };
    CHECK(vkimg_load_memory(png, n, "mem", &lo, &im, &e) == 0 && same_image(&im, &src), "at the limit: %s", e.msg);
    vkimg_image_free(&im);
    lo.max_pixels = 40 * 30 - 1;
    rc = vkimg_load_memory(png, n, "mem.png", &lo, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME &&
              !strcmp(e.msg, "mem.png: image is 40x30 = 1200 pixels, over the limit of 1199 (--max-pixels)"),
          "limit: %s", e.msg);
    free(png);
    /* ... also for formats other than PNG (here the BMP decoder) */
    CHECK(vkimg_save(P("lim.bmp"), &src, NULL, &e) == 0, "save bmp: %s", e.msg);
    rc = vkimg_load(P("lim.bmp"), &lo, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("lim.bmp")) && strstr(e.msg, "over the limit of 1199 (--max-pixels)"),
          "bmp limit: %s", e.msg);
    vkimg_image_free(&src);

    /* a PNG header claiming 100000x100000: refused from the header, with the limit in
     * the message (the file has no pixel data at all, so decoding could not say this) */
    unsigned char hb[64];
    size_t hn = craft_png(hb, 100000, 100000, 2);
    write_file(P("huge.png"), hb, hn);
    rc = vkimg_load(P("huge.png"), NULL, &im, &e);
    snprintf(want, sizeof want, "%s: image is 100000x100000 = 10000000000 pixels, over the limit of 268435456 (--max-pixels)",
             P("huge.png"));
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, want), "huge: %s", e.msg);
    CHECK(im.data == NULL, "huge: no data");
    /* a side over 2^24 */
    hn = craft_png(hb, 1u << 25, 1, 0);
    lo.max_pixels = 1ull << 40;
    rc = vkimg_load_memory(hb, hn, "wide.png", &lo, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "wide.png: image is 33554432x1"), "wide: %s", e.msg);
    /* the same crafted header with a small size passes the checks and fails to decode:
     * it has no IDAT chunk */
    hn = craft_png(hb, 10, 10, 2);
    memset(&im, 0x5a, sizeof im);
    rc = vkimg_load_memory(hb, hn, "nodata.png", NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && !strcmp(e.msg, "nodata.png: PNG: no image data (IDAT)") && !im.data,
          "no IDAT: %s", e.msg);
    rc = vkimg_load_memory(hb, 0, NULL, NULL, &im, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "empty file"), "empty memory: %s", e.msg);
}

/* ---------------------------------------------------------------- save errors */

static void test_save_errors(void)
{
    vkimg_err e;
    vkimg_image im;
    int rc;
    make_image(&im, 32, 24, 3, VKIMG_U8, 1, 21);

    /* unknown extension: usage error, exact message */
    rc = vkimg_save(P("out.xyz"), &im, NULL, &e);
    FAILED(g_dir, P("out.xyz"), rc, VKIMG_E_USAGE, &e, "unknown output format '.xyz' (use .png .jpg .webp .tif .bmp .tga .hdr .npy .ktx2)",
           NULL, 0);
    char want[512];
    snprintf(want, sizeof want, "%s: unknown output format '.xyz' (use .png .jpg .webp .tif .bmp .tga .hdr .npy .ktx2)", P("out.xyz"));
    CHECK(!strcmp(e.msg, want), "message: %s", e.msg);
    rc = vkimg_save(P("noext"), &im, NULL, &e);
    FAILED(g_dir, P("noext"), rc, VKIMG_E_USAGE, &e, "unknown output format", NULL, 0);

    /* nonexistent directory */
    rc = vkimg_save(P("nodir/out.png"), &im, NULL, &e);
    FAILED(g_dir, P("nodir/out.png"), rc, VKIMG_E_RUNTIME, &e, "cannot write: ", NULL, 0);
    CHECK(!exists(P("nodir")), "nodir created");
    /* parent is a regular file */
    write_file(P("plain.txt"), "x", 1);
    rc = vkimg_save(P("plain.txt/out.png"), &im, NULL, &e);
    FAILED(g_dir, P("plain.txt/out.png"), rc, VKIMG_E_RUNTIME, &e, strerror(ENOTDIR), NULL, 0);
    /* output is a directory */
    mkdir(P("isdir.png"), 0755);
    rc = vkimg_save(P("isdir.png"), &im, NULL, &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("isdir.png")) && strstr(e.msg, "cannot write"), "dir output: %s",
          e.msg);
    struct stat st;
    CHECK(stat(P("isdir.png"), &st) == 0 && S_ISDIR(st.st_mode), "directory still there");
    CHECK(count_temps(g_dir) == 0, "temps after directory output");
    /* unwritable directory (root may write anywhere: only as a normal user) */
    mkdir(P("ro"), 0555);
    chmod(P("ro"), 0555);
    if (geteuid() != 0) {
        rc = vkimg_save(P("ro/out.png"), &im, NULL, &e);
        FAILED(P("ro"), P("ro/out.png"), rc, VKIMG_E_RUNTIME, &e, strerror(EACCES), NULL, 0);
        rc = vkimg_check_output(P("ro/out.png"), &e);
        CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "not writable"), "check_output ro: %s", e.msg);
    } else {
        fprintf(stderr, "note: running as root, read-only directory case skipped\n");
    }

    /* an existing output is left alone by every kind of failure */
    char out[4096];
    snprintf(out, sizeof out, "%s", P("keep.png"));
    CHECK(vkimg_save(out, &im, NULL, &e) == 0, "save keep: %s", e.msg);
    size_t keeplen;
    unsigned char *keep = read_all(out, &keeplen);
    CHECK(keep && keeplen > 100, "keep.png readable");

    vkimg_image w16;
    make_image(&w16, 32, 24, 3, VKIMG_U16, 1, 22);
    rc = vkimg_save(P("keep.jpg"), &w16, NULL, &e); /* u16 to JPEG */
    FAILED(g_dir, P("keep.jpg"), rc, VKIMG_E_RUNTIME, &e, "u16", NULL, 0);
    vkimg_image f32;
    make_image(&f32, 32, 24, 3, VKIMG_F32, 1, 23);
    rc = vkimg_save(out, &f32, NULL, &e); /* f32 to PNG */
    FAILED(g_dir, out, rc, VKIMG_E_RUNTIME, &e, "f32", keep, keeplen);
    rc = vkimg_save(P("keep.hdr"), &im, NULL, &e); /* u8 to HDR */
    FAILED(g_dir, P("keep.hdr"), rc, VKIMG_E_RUNTIME, &e, "f32", NULL, 0);
    vkimg_save_opts bad_q = { .quality = 101, .png_level = -1 }, bad_l = { .quality = 0, .png_level = 13 };
    rc = vkimg_save(P("q.jpg"), &im, &bad_q, &e);
    FAILED(g_dir, P("q.jpg"), rc, VKIMG_E_USAGE, &e, "101", NULL, 0);
    rc = vkimg_save(out, &im, &bad_l, &e);
    FAILED(g_dir, out, rc, VKIMG_E_USAGE, &e, "13", keep, keeplen);
    CHECK(vkimg_save(P("q2.jpg"), &im, &bad_l, &e) == 0, "PNG level does not apply to JPEG: %s", e.msg);
    vkimg_image wide;
    make_image(&wide, 70000, 1, 3, VKIMG_U8, 0, 1);
    rc = vkimg_save(P("wide.jpg"), &wide, NULL, &e);
    FAILED(g_dir, P("wide.jpg"), rc, VKIMG_E_RUNTIME, &e, "65535", NULL, 0);
    rc = vkimg_save(P("wide.tga"), &wide, NULL, &e);
    FAILED(g_dir, P("wide.tga"), rc, VKIMG_E_RUNTIME, &e, "65535", NULL, 0);
    CHECK(vkimg_save(P("wide.png"), &wide, NULL, &e) == 0, "wide PNG: %s", e.msg);
    vkimg_image_free(&wide);
    vkimg_image nodata = { .w = 4, .h = 4, .c = 3, .fmt = VKIMG_U8 };
    rc = vkimg_save(out, &nodata, NULL, &e);
    FAILED(g_dir, out, rc, VKIMG_E_RUNTIME, &e, "invalid image", keep, keeplen);

    /* a write that fails half-way (file size limit): the temporary is removed and the
     * existing output keeps its bytes */
    struct rlimit old;
    if (getrlimit(RLIMIT_FSIZE, &old) == 0) {
        void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = { 64, old.rlim_max };
        if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
            vkimg_err e2;
            rc = vkimg_save(out, &w16, NULL, &e);
            int rc2 = vkimg_save(P("new.npy"), &w16, NULL, &e2);
            setrlimit(RLIMIT_FSIZE, &old);
            FAILED(g_dir, out, rc, VKIMG_E_RUNTIME, &e, strerror(EFBIG), keep, keeplen);
            FAILED(g_dir, P("new.npy"), rc2, VKIMG_E_RUNTIME, &e2, strerror(EFBIG), NULL, 0);
        }
        signal(SIGXFSZ, prev);
    }
    free(keep);

    /* vkimg_check_output */
    CHECK(vkimg_check_output(P("fine.png"), &e) == 0, "check fine: %s", e.msg);
    CHECK(!exists(P("fine.png")), "check_output must not create the file");
    rc = vkimg_check_output(P("fine.xyz"), &e);
    CHECK(rc == VKIMG_E_USAGE && strstr(e.msg, "unknown output format '.xyz'"), "check xyz: %s", e.msg);
    rc = vkimg_check_output(P("nodir/x.png"), &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, P("nodir/x.png")) && strstr(e.msg, "does not exist"),
          "check nodir: %s", e.msg);
    rc = vkimg_check_output(P("plain.txt/x.png"), &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "not a directory"), "check file parent: %s", e.msg);
    rc = vkimg_check_output(P("isdir.png"), &e);
    CHECK(rc == VKIMG_E_RUNTIME && strstr(e.msg, "is a directory"), "check dir output: %s", e.msg);
    CHECK(vkimg_check_output("/x.png", &e) == (access("/", W_OK | X_OK) ? VKIMG_E_RUNTIME : 0), "check /x.png: %s",
          e.msg);

    vkimg_image_free(&im);
    vkimg_image_free(&w16);
    vkimg_image_free(&f32);
    CHECK(count_temps(g_dir) == 0, "no temporaries at the end");
}

/* ---------------------------------------------------------------- threads */

typedef struct io_job {
    const unsigned char *png, *jpg;
    size_t npng, njpg;
    const vkimg_image *png_ref, *jpg_ref, *src;
    const unsigned char *enc_ref;
    size_t nenc_ref;
    int bad;
} io_job;

static void *io_thread(void *arg)
{
    io_job *j = arg;
    vkimg_err e;
    for (int it = 0; it < 20; it++) {
        vkimg_image a, b;
        j->bad += vkimg_load_memory(j->png, j->npng, "t.png", NULL, &a, &e) || !same_image(&a, j->png_ref);
        j->bad += vkimg_load_memory(j->jpg, j->njpg, "t.jpg", NULL, &b, &e) || !same_image(&b, j->jpg_ref);
        vkimg_image_free(&a);
        vkimg_image_free(&b);
        unsigned char *out;
        size_t n;
        j->bad += vki_jpeg_encode(j->src, 80, &out, &n, &e) || n != j->nenc_ref || memcmp(out, j->enc_ref, n);
        free(out);
    }
    return NULL;
}

/* Decodes (our PNG decoder, TurboJPEG) and encodes on 4 threads at once: the same
 * results as on one (no shared state). */
static void test_io_threads(void)
{
    vkimg_err e;
    vkimg_image src, png_ref, jpg_ref;
    make_image(&src, 150, 90, 3, VKIMG_U8, 1, 31337);
    unsigned char *png, *jpg;
    size_t npng, njpg;
    CHECK(vki_png_encode(&src, 3, &png, &npng, &e) == 0, "png: %s", e.msg);
    CHECK(vki_jpeg_encode(&src, 80, &jpg, &njpg, &e) == 0, "jpg: %s", e.msg);
    CHECK(vkimg_load_memory(png, npng, "r.png", NULL, &png_ref, &e) == 0, "png ref: %s", e.msg);
    CHECK(vkimg_load_memory(jpg, njpg, "r.jpg", NULL, &jpg_ref, &e) == 0, "jpg ref: %s", e.msg);
    io_job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (io_job){ png, jpg, npng, njpg, &png_ref, &jpg_ref, &src, jpg, njpg, 0 };
        CHECK(pthread_create(&th[i], NULL, io_thread, &jobs[i]) == 0, "pthread_create");
    }
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        bad += jobs[i].bad;
    }
    CHECK(bad == 0, "%d wrong results on 4 threads", bad);
    free(png);
    free(jpg);
    vkimg_image_free(&src);
    vkimg_image_free(&png_ref);
    vkimg_image_free(&jpg_ref);
}

int main(void)
{
    static void (*const tests[])(void) = { test_basics, test_load_errors, test_save_errors, test_io_threads };
    return io_main("test_load_save", tests, 4);
}
