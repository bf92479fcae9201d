/* How fast this machine's memory is touched the first time (a benchmark, not a
 * test): MIB MiB of fresh huge-page-advised memory written in 256 MiB steps,
 * each step's time and rate. On a VM whose host backs guest memory lazily the
 * first steps show the host's faults (docs/performance.md, thirty-seventh
 * session: 0.45-0.51 GB/s cold, 6-8 GB/s for memory another process freed a
 * moment ago).
 *
 *   cc -O2 -o /tmp/first-touch scripts/first-touch.c && /tmp/first-touch 4096
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    const long mib = argc > 1 ? atol(argv[1]) : 1024;
    if (mib <= 0) {
        fprintf(stderr, "usage: first-touch [MiB]\n");
        return 2;
    }
    const size_t n = (size_t)mib << 20, step = (size_t)256 << 20;
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, n)) {
        fprintf(stderr, "first-touch: cannot allocate %ld MiB\n", mib);
        return 1;
    }
    (void)madvise(p, n, MADV_HUGEPAGE);
    for (size_t off = 0; off < n; off += step) {
        const size_t m = n - off < step ? n - off : step;
        const double t0 = now_ms();
        memset((char *)p + off, 1, m);
        const double ms = now_ms() - t0;
        printf("%5zu MiB at %5zu MiB: %7.1f ms, %.2f GB/s\n", m >> 20, off >> 20, ms, (double)m / 1e6 / ms);
    }
    free(p);
    return 0;
}
