/* Independent CPU references for test_ops_sat.c (see ref_sat.h). Written from
 * the ops' specifications; shares no code with the library. Allocation failure
 * aborts. */
#include "ref_sat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "ref_sat: out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

int rs_colour(int c)
{
    return (c == 2 || c == 4) ? c - 1 : c;
}

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* ---------------------------------------------------------------- integral */

void rs_sat_row(const uint32_t *q, int w, int c, uint64_t *acc)
{
    for (int k = 0; k < c; k++) {
        uint64_t run = 0; /* prefix of this row */
        for (int x = 0; x < w; x++) {
            run += q[(size_t)x * c + k];
            acc[(size_t)x * c + k] += run;
        }
    }
}

/* ---------------------------------------------------------------- box sums */

uint64_t rs_box_count(int x, int y, int w, int h, int r)
{
    int64_t x0 = imax(x - r, 0), x1 = imin(x + r, w - 1);
    int64_t y0 = imax(y - r, 0), y1 = imin(y + r, h - 1);
    return (uint64_t)(x1 - x0 + 1) * (uint64_t)(y1 - y0 + 1);
}

void rs_box_sums(const uint32_t *q, int w, int h, int c, int r, uint64_t *sum)
{
    /* rows: sliding window [x-r, x+r] clipped, via the row's prefix sums */
    size_t m = (size_t)(w > h ? w : h) + 1;
    uint64_t *pre = xmalloc(m * sizeof *pre);
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

void rs_box_sums_brute(const uint32_t *q, int w, int h, int c, int r, uint64_t *sum)
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

void rs_boxblur(const uint32_t *q, int w, int h, int c, int r, uint32_t *out)
{
    size_t ns = (size_t)w * h * c;
    uint64_t *sum = xmalloc(ns * sizeof *sum);
    rs_box_sums(q, w, h, c, r, sum);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint64_t n = rs_box_count(x, y, w, h, r);
            for (int k = 0; k < c; k++) {
                size_t i = ((size_t)y * w + x) * c + k;
                out[i] = (uint32_t)((2 * sum[i] + n) / (2 * n));
            }
        }
    free(sum);
}

/* ---------------------------------------------------------------- threshold */

void rs_threshold_value(const uint32_t *q, int w, int h, int c, uint32_t levels, double value, uint32_t *out)
{
    uint32_t t = (uint32_t)floor(value * (double)levels);
    int cc = rs_colour(c);
    size_t np = (size_t)w * h;
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < c; k++) {
            size_t i = p * c + k;
            out[i] = k < cc ? (q[i] > t ? levels : 0) : q[i];
        }
}

void rs_threshold_adaptive(const uint32_t *q, int w, int h, int c, uint32_t levels, int r, int offset,
                           uint32_t *out)
{
    size_t ns = (size_t)w * h * c;
    uint64_t *sum = xmalloc(ns * sizeof *sum);
    rs_box_sums(q, w, h, c, r, sum);
    int cc = rs_colour(c);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint64_t n = rs_box_count(x, y, w, h, r);
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

int rs_otsu_hist(const uint64_t hist[256])
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

static uint32_t bin_of(uint32_t q, uint32_t levels)
{
    return levels == 255 ? q : q >> 8;
}

void rs_otsu_thresholds(const uint32_t *q, int w, int h, int c, uint32_t levels, int thr[4])
{
    int cc = rs_colour(c);
    size_t np = (size_t)w * h;
    for (int k = 0; k < 4; k++)
        thr[k] = 0;
    for (int k = 0; k < cc; k++) {
        uint64_t hist[256] = { 0 };
        for (size_t p = 0; p < np; p++)
            hist[bin_of(q[p * c + k], levels)]++;
        thr[k] = rs_otsu_hist(hist);
    }
}

void rs_threshold_apply_bins(const uint32_t *q, int w, int h, int c, uint32_t levels, const int thr[4],
                             uint32_t *out)
{
    int cc = rs_colour(c);
    size_t np = (size_t)w * h;
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < c; k++) {
            size_t i = p * c + k;
            out[i] = k < cc ? ((int)bin_of(q[i], levels) > thr[k] ? levels : 0) : q[i];
        }
}

/* ---------------------------------------------------------------- equalize */

void rs_equalize(const uint32_t *q, int w, int h, int c, uint32_t levels, uint32_t out_max, uint32_t *out)
{
    int cc = rs_colour(c);
    size_t np = (size_t)w * h;
    uint64_t n = np;
    for (int k = 0; k < c; k++) {
        int64_t lut[256];
        for (int b = 0; b < 256; b++)
            lut[b] = -1; /* keep */
        if (k < cc) {
            uint64_t hist[256] = { 0 };
            for (size_t p = 0; p < np; p++)
                hist[bin_of(q[p * c + k], levels)]++;
            uint64_t cdf_min = 0;
            for (int b = 0; b < 256 && !cdf_min; b++)
                cdf_min = hist[b];
            uint64_t cdf = 0;
            for (int b = 0; b < 256; b++) {
                cdf += hist[b];
                if (n != cdf_min && hist[b])
                    lut[b] = (int64_t)((2 * (cdf - cdf_min) * 255 + (n - cdf_min)) / (2 * (n - cdf_min)));
            }
        }
        for (size_t p = 0; p < np; p++) {
            size_t i = p * c + k;
            int64_t v = lut[bin_of(q[i], levels)];
            /* out_max / 255 and out_max / levels are exact (1 or 257) or the
             * product is divided exactly */
            out[i] = v >= 0 ? (uint32_t)((uint64_t)v * out_max / 255) : (uint32_t)((uint64_t)q[i] * out_max / levels);
        }
    }
}

/* ---------------------------------------------------------------- float ops */

void rs_normalize(const double *v, int w, int h, int c, int link, double *out)
{
    int cc = rs_colour(c);
    size_t np = (size_t)w * h;
    double lo[4], hi[4];
    for (int k = 0; k < 4; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < cc; k++) {
            int d = link ? 0 : k;
            double x = v[p * c + k];
            if (x < lo[d])
                lo[d] = x;
            if (x > hi[d])
                hi[d] = x;
        }
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < c; k++) {
            size_t i = p * c + k;
            double x = v[i];
            if (k < cc) {
                int d = link ? 0 : k;
                if (hi[d] > lo[d])
                    x = (x - lo[d]) / (hi[d] - lo[d]);
            }
            out[i] = x;
        }
}

int rs_gray601(const double *v, int w, int h, int c, double *out)
{
    size_t np = (size_t)w * h;
    if (c <= 2) {
        memcpy(out, v, np * c * sizeof *out);
        return c;
    }
    int oc = c == 3 ? 1 : 2;
    for (size_t p = 0; p < np; p++) {
        const double *s = v + p * c;
        out[p * oc] = 0.299 * s[0] + 0.587 * s[1] + 0.114 * s[2];
        if (c == 4)
            out[p * oc + 1] = s[3];
    }
    return oc;
}

void rs_gauss(const double *v, int w, int h, int c, double sigma, int r, double *out)
{
    int n = 2 * r + 1;
    double *wt = xmalloc((size_t)n * sizeof *wt), tot = 0;
    for (int i = -r; i <= r; i++)
        tot += wt[i + r] = exp(-(double)i * i / (2.0 * sigma * sigma));
    for (int i = 0; i < n; i++)
        wt[i] /= tot;
    int alpha = (c == 2 || c == 4) ? c - 1 : -1;
    size_t ns = (size_t)w * h * c;
    double *pm = xmalloc(ns * sizeof *pm), *tmp = xmalloc(ns * sizeof *tmp);
    for (size_t p = 0; p < (size_t)w * h; p++)
        for (int k = 0; k < c; k++)
            pm[p * c + k] = (alpha >= 0 && k != alpha) ? v[p * c + k] * v[p * c + alpha] : v[p * c + k];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                double s = 0;
                for (int i = -r; i <= r; i++) {
                    int xx = imin(imax(x + i, 0), w - 1);
                    s += wt[i + r] * pm[((size_t)y * w + xx) * c + k];
                }
                tmp[((size_t)y * w + x) * c + k] = s;
            }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) {
                double s = 0;
                for (int i = -r; i <= r; i++) {
                    int yy = imin(imax(y + i, 0), h - 1);
                    s += wt[i + r] * tmp[((size_t)yy * w + x) * c + k];
                }
                out[((size_t)y * w + x) * c + k] = s;
            }
    if (alpha >= 0)
        for (size_t p = 0; p < (size_t)w * h; p++) {
            double a = out[p * c + alpha];
            for (int k = 0; k < c; k++)
                if (k != alpha)
                    out[p * c + k] = a > 0 ? out[p * c + k] / a : 0.0;
        }
    free(pm);
    free(tmp);
    free(wt);
}
