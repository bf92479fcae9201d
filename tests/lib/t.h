/* Minimal test harness: CHECK records a failure and continues; t_done() prints
 * the closing "N passed, N failed" line and returns the exit code. The counts
 * live in t.c, so the helpers of tests/lib count into the totals of the test
 * that calls them. */
#ifndef VKI_T_H
#define VKI_T_H

#include <stdio.h>
#include <stdlib.h>

extern int t_pass, t_fail;

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (cond) {                                                              \
            t_pass++;                                                            \
        } else {                                                                 \
            t_fail++;                                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, "\n");                                               \
        }                                                                        \
    } while (0)

static inline int t_done(const char *suite)
{
    printf("%s: %d passed, %d failed\n", suite, t_pass, t_fail);
    return t_fail ? 1 : 0;
}

/* Exit code for "no Vulkan device at all". In CI (VKIMG_REQUIRE_DEVICE=1) a
 * missing device is a failure, not a skip. */
static inline int t_skip_no_device(const char *why)
{
    const char *req = getenv("VKIMG_REQUIRE_DEVICE");
    fprintf(stderr, "no Vulkan device: %s\n", why);
    if (req && *req && *req != '0')
        return 1;
    return 77;
}

/* Deterministic PRNG for test images (xorshift64*). */
static inline unsigned long long t_rand(unsigned long long *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

#endif
