/* The references of threshold (see threshold_ref.h). Written from the op's
 * specification; shares no code with the library. */
#include "threshold_ref.h"
#include "ref.h" /* ref_xmalloc */

#include <math.h>
#include <stdlib.h>

void ref_threshold_value(const uint32_t *q, int w, int h, int c, uint32_t levels, double value, uint32_t *out)
{
    uint32_t t = (uint32_t)floor(value * (double)levels);
    int cc = ref_colour(c);
    size_t np = (size_t)w * h;
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < c; k++) {
            size_t i = p * c + k;
            out[i] = k < cc ? (q[i] > t ? levels : 0) : q[i];
        }
}

void ref_threshold_adaptive(const uint32_t *q, int w, int h, int c, uint32_t levels, int r, int offset,
                            uint32_t *out)
{
    size_t ns = (size_t)w * h * c;
    uint64_t *sum = ref_xmalloc(ns * sizeof *sum);
    ref_box_sums(q, w, h, c, r, sum);
    int cc = ref_colour(c);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint64_t n = ref_box_count(x, y, w, h, r);
            for (int k = 0; k < c; k++) {
                size_t i = ((size_t)y * w + x) * c + k;
                if (k >= cc)
                    out[i] = q[i];
                else
                    out[i] = (uint64_t)q[i] * n * 100u > sum[i] * (uint64_t)(100 - offset) ? levels : 0;
            }
        }
    free(sum);
}

int ref_otsu_hist(const uint64_t hist[256])
{
    double total = 0, sum_all = 0;
    for (int i = 0; i < 256; i++) {
        total += (double)hist[i];
        sum_all += (double)i * (double)hist[i];
    }
    double w0 = 0, sum0 = 0, best = -1;
    int thr = -1;
    for (int t = 0; t < 256; t++) {
        w0 += (double)hist[t];
        sum0 += (double)t * (double)hist[t];
        double w1 = total - w0;
        if (w0 == 0 || w1 == 0)
            continue;
        double m0 = sum0 / w0, m1 = (sum_all - sum0) / w1;
        double between = w0 * w1 * (m0 - m1) * (m0 - m1);
        if (between > best) { /* strictly greater: the first maximum wins */
            best = between;
            thr = t;
        }
    }
    if (thr < 0) { /* a single value (or none): everything is <= it */
        thr = 255;
        for (int i = 0; i < 256; i++)
            if (hist[i])
                thr = i;
    }
    return thr;
}

void ref_otsu_thresholds(const uint32_t *q, int w, int h, int c, uint32_t levels, int thr[4])
{
    int cc = ref_colour(c);
    size_t np = (size_t)w * h;
    for (int k = 0; k < 4; k++)
        thr[k] = 0;
    for (int k = 0; k < cc; k++) {
        uint64_t hist[256] = { 0 };
        for (size_t p = 0; p < np; p++)
            hist[ref_bin(q[p * c + k], levels)]++;
        thr[k] = ref_otsu_hist(hist);
    }
}

void ref_threshold_apply_bins(const uint32_t *q, int w, int h, int c, uint32_t levels, const int thr[4],
                              uint32_t *out)
{
    int cc = ref_colour(c);
    size_t np = (size_t)w * h;
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < c; k++) {
            size_t i = p * c + k;
            out[i] = k < cc ? ((int)ref_bin(q[i], levels) > thr[k] ? levels : 0) : q[i];
        }
}
