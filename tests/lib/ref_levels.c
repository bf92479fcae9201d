/* Shared primitives of the integer-level references (see ref_levels.h). Written
 * from the ops' specifications; shares no code with the library. Allocation
 * failure aborts. */
#include "ref_levels.h"
#include "ref.h" /* ref_xmalloc */

#include <stdlib.h>

int ref_colour(int c)
{
    return (c == 2 || c == 4) ? c - 1 : c;
}

uint32_t ref_bin(uint32_t q, uint32_t levels)
{
    return levels == 255 ? q : q >> 8;
}

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* ---------------------------------------------------------------- box sums */

uint64_t ref_box_count(int x, int y, int w, int h, int r)
{
    int64_t x0 = imax(x - r, 0), x1 = imin(x + r, w - 1);
    int64_t y0 = imax(y - r, 0), y1 = imin(y + r, h - 1);
    return (uint64_t)(x1 - x0 + 1) * (uint64_t)(y1 - y0 + 1);
}

void ref_box_sums(const uint32_t *q, int w, int h, int c, int r, uint64_t *sum)
{
    /* rows: sliding window [x-r, x+r] clipped, via the row's prefix sums */
    size_t m = (size_t)(w > h ? w : h) + 1;
    uint64_t *pre = ref_xmalloc(m * sizeof *pre);
    for (int y = 0; y < h; y++)
        for (int k = 0; k < c; k++) {
            pre[0] = 0;
            for (int x = 0; x < w; x++)
                pre[x + 1] = pre[x] + q[((size_t)y * w + x) * c + k];
            for (int x = 0; x < w; x++) {
                int a = imax(x - r, 0), b = imin(x + r, w - 1);
                sum[((size_t)y * w + x) * c + k] = pre[b + 1] - pre[a];
            }
        }
    /* columns: the same on the row sums */
    for (int x = 0; x < w; x++)
        for (int k = 0; k < c; k++) {
            pre[0] = 0;
            for (int y = 0; y < h; y++)
                pre[y + 1] = pre[y] + sum[((size_t)y * w + x) * c + k];
            for (int y = 0; y < h; y++) {
                int a = imax(y - r, 0), b = imin(y + r, h - 1);
                sum[((size_t)y * w + x) * c + k] = pre[b + 1] - pre[a];
            }
        }
    free(pre);
}

void ref_box_sums_brute(const uint32_t *q, int w, int h, int c, int r, uint64_t *sum)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                uint64_t s = 0;
                for (int j = imax(y - r, 0); j <= imin(y + r, h - 1); j++)
                    for (int i = imax(x - r, 0); i <= imin(x + r, w - 1); i++)
                        s += q[((size_t)j * w + i) * c + k];
                sum[((size_t)y * w + x) * c + k] = s;
            }
}
