/* Helpers of the I/O tests (tests/io): a temporary directory per test, files,
 * test images, the assertions about a failed save, and stb_image's own decode
 * as a reference. No device. A test's main is
 *
 *     static void (*const tests[])(void) = { test_png_stream, test_roundtrip_png };
 *     return io_main("test_png", tests, 2);
 */
#ifndef VKI_IO_UTIL_H
#define VKI_IO_UTIL_H

#include "vkimg/vkimg.h"

#include <stddef.h>

/* Makes the test's directory g_dir (/tmp/vkimg-test-NAME-XXXXXX), runs the tests
 * in turn, removes g_dir and everything in it, and returns t_done(name). */
int io_main(const char *name, void (*const tests[])(void), size_t ntests);
extern char g_dir[256];
/* The path of name in g_dir (four rotating buffers). */
const char *P(const char *name);

void rm_rf(const char *path);
int exists(const char *path);
/* Number of ".*.vkimg-*" temporary files in dir. */
int count_temps(const char *dir);
/* The whole file (malloc'ed; NULL if unreadable). */
unsigned char *read_all(const char *path, size_t *len);
int write_file(const char *path, const void *data, size_t n);
/* Whether the file holds exactly data[0..n). */
int file_equals(const char *path, const void *data, size_t n);

/* A test image: smooth gradients plus (if noise) random low bits; alpha channels get
 * their own pattern, including 0 and max. Any fmt; exits if it cannot allocate. */
void make_image(vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, int noise, unsigned long long seed);
/* A U8 image for the JPEG codec's tests: kind 0 smooth, 1 smooth + noise, 2 every
 * sample random, 3 a 0/255 checkerboard (exits if it cannot allocate). */
void jpeg_image(vkimg_image *im, int w, int h, int c, int kind, unsigned long long seed);
/* Every byte of im's pixels from t_rand(seed) (its top byte): noise for any fmt. */
void fill_random_bytes(vkimg_image *im, unsigned long long seed);
/* Same shape, format and bytes. */
int same_image(const vkimg_image *a, const vkimg_image *b);
/* Mean absolute difference of the first `chans` channels of a (gray replicated if a
 * has 1-2) and b, both U8. */
double mean_abs_u8(const vkimg_image *a, const vkimg_image *b, int chans);

/* stb_image's own decode of a file in memory, as vkimg_load calls it (U16 for 16-bit
 * files): the reference. 0 or -1. */
int stb_decode(const unsigned char *p, size_t n, vkimg_image *ref);

/* Asserts the state after a failed save: error code, message naming the path and
 * containing want; no temporary left in dir; the output is absent (prev == NULL) or
 * byte-for-byte prev. */
void check_failed(int line, const char *dir, const char *path, int rc, int want_code, const vkimg_err *e,
                  const char *want, const void *prev, size_t prevlen);
#define FAILED(dir, path, rc, code, e, want, prev, prevlen) \
    check_failed(__LINE__, dir, path, rc, code, e, want, prev, prevlen)

#endif
