#include "core/util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <ctype.h>

static int vfail(vkimg_err *e, int code, int pos, const char *fmt, va_list ap)
{
    if (e) {
        e->code = code;
        e->pos = pos;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        /* one line: fold any newline an underlying library put in */
        for (char *p = e->msg; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
    }
    return code;
}

int vki_fail(vkimg_err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(e, code, -1, fmt, ap);
    va_end(ap);
    return code;
}

int vki_fail_at(vkimg_err *e, int pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(e, VKIMG_E_USAGE, pos, fmt, ap);
    va_end(ap);
    return VKIMG_E_USAGE;
}

void vki_err_clear(vkimg_err *e)
{
    if (e) {
        e->code = 0;
        e->pos = -1;
        e->msg[0] = 0;
    }
}

double vki_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int vki_strncasecmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int ca = tolower((unsigned char)a[i]), cb = tolower((unsigned char)b[i]);
        if (ca != cb || !ca)
            return ca - cb;
    }
    return 0;
}

int vki_edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    if (na > 63 || nb > 63)
        return 1 << 20;
    int d[64][64];
    for (size_t i = 0; i <= na; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            int c = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            if (d[i - 1][j] + 1 < c)
                c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c)
                c = d[i][j - 1] + 1;
            d[i][j] = c;
        }
    return d[na][nb];
}

#define VKI_HUGE ((size_t)2 << 20)

void vki_advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + VKI_HUGE - 1) & ~(uintptr_t)(VKI_HUGE - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)(VKI_HUGE - 1);
    if (p && b > a)
        (void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* advice: ignored where unsupported */
#else
    (void)p;
    (void)n;
#endif
}

void *vki_malloc_big(size_t n)
{
    if (n < VKI_HUGE)
        return malloc(n ? n : 1);
    void *p = NULL;
    /* whole pages with room for the device's 16-byte padding: exec may hand
     * them to the device as they are (run.c import_fits) */
    if (posix_memalign(&p, VKI_HUGE, (n + 64 + 4095) / 4096 * 4096))
        return NULL;
    vki_advise_huge(p, n);
    return p;
}

int vki_run_threads(void *(*fn)(void *), void *arg, int threads)
{
    pthread_t tid[63];
    int started = 0;
    for (; started + 1 < threads && started < 63; started++)
        if (pthread_create(&tid[started], NULL, fn, arg))
            break;
    fn(arg);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    return started + 1;
}

void *vki_calloc_big(size_t n)
{
    if (n < VKI_HUGE)
        return calloc(1, n ? n : 1);
    void *p = vki_malloc_big(n);
    if (p)
        memset(p, 0, n);
    return p;
}

bool vki_env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

long vki_env_long(const char *name, long def, long lo, long hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    long n = strtol(v, &end, 10);
    return *end == '\0' && n >= lo && n <= hi ? n : def;
}

bool vki_fault_hit(const char *kind)
{
    static _Atomic long calls;
    const char *f = getenv("VKIMG_TEST_FAULT");
    size_t n = strlen(kind);
    if (!f || strncmp(f, kind, n) || f[n] != ':')
        return false;
    char *end;
    long k = strtol(f + n + 1, &end, 10);
    if (*end || k < 1)
        return false;
    return atomic_fetch_add(&calls, 1) + 1 >= k;
}
