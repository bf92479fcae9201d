/* Small shared helpers: error filling, clocks. */
#ifndef VKI_UTIL_H
#define VKI_UTIL_H

#include "vkimg/vkimg.h"
#include "vki_shared.h"
#include <stdarg.h>

#define VKI_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The largest side an image may have: what a decoder accepts and an op may produce. */
#define VKI_MAX_SIDE (1 << 24)

#if defined(__GNUC__)
#define VKI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define VKI_PRINTF(a, b)
#endif

/* Fills e (may be NULL) with code, pos = -1 and the formatted one-line message;
 * returns code. */
int vki_fail(vkimg_err *e, int code, const char *fmt, ...) VKI_PRINTF(3, 4);
/* Usage error (VKIMG_E_USAGE) at byte offset pos of a pipeline text. */
int vki_fail_at(vkimg_err *e, int pos, const char *fmt, ...) VKI_PRINTF(3, 4);
void vki_err_clear(vkimg_err *e);

/* Large buffers (decoded and encoded images): from 2 MiB up, 2 MiB-aligned and
 * marked for transparent huge pages, so that first touching them takes one page
 * fault per 2 MiB instead of per 4 KiB (in VMs each fault is dear: a 5120x2880
 * PNG decode 305 -> ~180 ms, measured on the CI machine). Freed with free();
 * realloc() works (the alignment may then be lost). */
void *vki_malloc_big(size_t n);
/* Runs fn(arg) on the calling thread and on up to threads - 1 (at most 63) more,
 * started for it and joined before returning: for work that fn's calls share
 * out among themselves (an atomic counter in arg). Threads that cannot be
 * started are left out. Returns how many threads ran fn (at least 1). */
int vki_run_threads(void *(*fn)(void *), void *arg, int threads);
void *vki_calloc_big(size_t n); /* zeroed */
/* vkimg_image_alloc, with the data left unset unless zero (for results that
 * are written whole at once). */
int vki_image_alloc(vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, bool zero, vkimg_err *e);
/* What vkimg_image.priv points to when the data is not malloc()ed: the first
 * member of the owner's own struct (gpu/devimg.c), released by vkimg_image_free. */
typedef struct vki_image_owner {
    void (*release)(struct vki_image_owner *o);
    size_t cap; /* bytes usable at the image's data (>= vkimg_image_bytes): room for a
                   decoder's filtered rows (vki_image_alloc_device's a byte a row more) */
} vki_image_owner;
/* Whether an opaque alpha the caller keeps no use for may be left out (by the PNG
 * decoder, by a run on a CPU device): unless VKIMG_DROP_ALPHA=0. */
bool vki_drop_alpha_on(void);
/* Whether every alpha sample (the last of each pixel of c = 2 or 4 samples of ss =
 * 1 or 2 bytes) in the bytes at data is at its maximum: 64-bit words, whole pixels
 * each, then the rest pixel by pixel. */
bool vki_alpha_opaque(const void *data, size_t bytes, int c, size_t ss);
/* The colour of n pixels of c = 2 or 4 samples of ss bytes at src, without their
 * alpha, into dst (n * (c - 1) samples); dst may be src or before it (in place,
 * memory read before it is written; 8-bit RGBA goes four pixels at a time). */
void vki_drop_alpha(void *dst, const void *src, size_t n, int c, size_t ss);
/* vki_drop_alpha of n 8-bit pixels of c = 2 or 4 channels where their alpha is all
 * 255 (checked in the same pass for RGBA): true; else false, and dst holds garbage
 * (src is intact only where dst does not overlap it). */
bool vki_drop_alpha_opaque(void *dst, const void *src, size_t n, int c);
/* The other way, in place: n 8-bit pixels of c - 1 channels packed at data spread
 * to c channels with alpha 255 (data has room for n * c bytes), from the last. */
void vki_alpha_back(void *data, size_t n, int c);
/* Asks for transparent huge pages on the whole 2 MiB pages inside [p, p + n). */
void vki_advise_huge(void *p, size_t n);

/* Environment switches: set, non-empty and not "0". */
bool vki_env_on(const char *name);
/* Test-only faults (VKIMG_TEST_FAULT=KIND:K, tests/cli/test_faults.sh): true for
 * the K-th call with this kind and every later one, e.g. "device-lost" (queue
 * submissions) and "oom" (device memory allocations); false when unset. */
bool vki_fault_hit(const char *kind);
/* An environment variable's integer value when it is one in [lo, hi], else def. */
long vki_env_long(const char *name, long def, long lo, long hi);

/* Monotonic clock in milliseconds. */
double vki_now_ms(void);

/* Case-insensitive ASCII compare of n bytes / whole strings. */
int vki_strncasecmp(const char *a, const char *b, size_t n);
/* Levenshtein distance (for "did you mean"). */
int vki_edit_distance(const char *a, size_t na, const char *b, size_t nb);

#endif
