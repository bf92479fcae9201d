/* integral (the summed-area table, a uint64 data output) on the device against
 * its reference, built row by row: bit-exact, up to an 8192 x 8192 table whose
 * total exceeds 2^32. */
#include "gpu_harness.h"
#include "levels.h"
#include "t.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_INTEGRAL "integral"

/* ---------------------------------------------------------------- reference */

/* One row of the summed-area table, computed in place: on entry acc[x*c + k]
 * holds S(x, y-1, k) (all zeros for y = 0), q points at row y's levels; on
 * return acc holds S(x, y, k) = sum of q(i, j, k) over i <= x, j <= y. Exact
 * uint64. Memory: one row, whatever the height. */
static void ref_integral_row(const uint32_t *q, int w, int c, uint64_t *acc)
{
    for (int k = 0; k < c; k++) {
        uint64_t run = 0; /* prefix of this row */
        for (int x = 0; x < w; x++) {
            run += q[(size_t)x * c + k];
            acc[(size_t)x * c + k] += run;
        }
    }
}

/* ---------------------------------------------------------------- integral */

/* Compares the device's table with the reference built row by row (one row of
 * uint64 in memory). Returns the total of channel 0, S(w-1, h-1, 0). */
static uint64_t check_integral(const vkimg_image *in, const vkimg_image *got)
{
    int w = in->w, h = in->h, c = in->c;
    lv_stat *st = lv_stats(S_INTEGRAL);
    st->cases++;
    bool shape = got->data && got->w == w && got->h == h && got->c == c && got->fmt == VKIMG_U64;
    CHECK(shape, "[%s] integral: got %dx%d c=%d %s, expected %dx%d c=%d u64", cur_case, got->w, got->h, got->c,
          vkimg_fmt_name(got->fmt), w, h, c);
    if (!shape)
        return 0;
    size_t rs = (size_t)w * c;
    uint64_t *acc = gh_calloc(rs, sizeof *acc);
    uint32_t *q = gh_calloc(rs, sizeof *q);
    const uint64_t *g = got->data;
    size_t nbad = 0, nnz = 0;
    double maxe = 0;
    for (int y = 0; y < h; y++) {
        for (size_t i = 0; i < rs; i++)
            q[i] = (uint32_t)lv_sample(in, (size_t)y * rs + i);
        ref_integral_row(q, w, c, acc);
        const uint64_t *gr = g + (size_t)y * rs;
        for (size_t i = 0; i < rs; i++) {
            if (gr[i] == acc[i])
                continue;
            nnz++;
            double err = gr[i] > acc[i] ? (double)(gr[i] - acc[i]) : (double)(acc[i] - gr[i]);
            if (err > maxe)
                maxe = err;
            if (++nbad <= 8)
                fprintf(stderr, "  MISMATCH [%s] integral: pixel (x=%zu, y=%d) channel %zu: expected %llu, got %llu\n",
                        cur_case, i / (size_t)c, y, i % (size_t)c, (unsigned long long)acc[i],
                        (unsigned long long)gr[i]);
        }
    }
    CHECK(nbad == 0, "[%s] integral: %zu of %zu entries wrong (max abs error %g)", cur_case, nbad, rs * (size_t)h,
          maxe);
    uint64_t total = acc[(size_t)(w - 1) * c];
    st->samples += (double)rs * h;
    st->nonzero += (double)nnz;
    if (maxe > st->max_err)
        st->max_err = maxe;
    free(acc);
    free(q);
    return total;
}

static void integral_case(vkimg_ctx *ctx, const vkimg_image *in, vkimg_fmt ask)
{
    vkimg_image out;
    char t[64];
    if (!lv_run(ctx, "integral", in, ask, &out)) {
        snprintf(t, sizeof t, " (out_fmt %s asked)", vkimg_fmt_name(ask));
        strncat(cur_case, t, sizeof cur_case - strlen(cur_case) - 1);
        check_integral(in, &out);
    }
    vkimg_image_free(&out);
}

static void test_integral(vkimg_ctx *ctx)
{
    /* data output: uint64 whatever out_fmt says, only as the last op */
    {
        vkimg_err e;
        memset(&e, 0, sizeof e);
        vkimg_pipeline *p = vkimg_pipeline_parse("integral", &e);
        CHECK(p != NULL, "parse 'integral': %s", e.msg);
        vkimg_fmt f = VKIMG_U8;
        CHECK(p && vkimg_pipeline_data_output(p, &f) && f == VKIMG_U64, "integral: data output u64 (got %s)",
              vkimg_fmt_name(f));
        vkimg_pipeline_free(p);
        p = vkimg_pipeline_parse("boxblur=2", &e);
        CHECK(p && !vkimg_pipeline_data_output(p, &f), "boxblur is not a data output");
        vkimg_pipeline_free(p);

        static const char *const bad[] = { "integral,blur", "integral,integral", "integral,boxblur=1" };
        vkimg_image in = lv_full(5, 3, 1, VKIMG_U8, D_UNIFORM);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            memset(&e, 0, sizeof e);
            snprintf(cur_case, sizeof cur_case, "%s (must fail)", bad[i]);
            p = vkimg_pipeline_parse(bad[i], &e);
            if (!p) {
                CHECK(e.code == VKIMG_E_USAGE, "'%s': parse failed with code %d, expected VKIMG_E_USAGE (%s)", bad[i],
                      e.code, e.msg);
                continue;
            }
            vkimg_image out;
            memset(&out, 0, sizeof out);
            vkimg_run_opts o;
            memset(&o, 0, sizeof o);
            o.out_fmt = VKIMG_U8;
            int rc = vkimg_run(ctx, p, &in, &o, &out, &e);
            CHECK(rc == VKIMG_E_USAGE && e.code == VKIMG_E_USAGE, "'%s': vkimg_run gave %d (%s), expected VKIMG_E_USAGE",
                  bad[i], rc, e.msg);
            CHECK(out.data == NULL, "'%s': failed run left output data", bad[i]);
            vkimg_image_free(&out);
            vkimg_pipeline_free(p);
        }
        vkimg_image_free(&in);
    }

    static const vkimg_fmt ask[] = { VKIMG_U8, VKIMG_F32, VKIMG_U16, VKIMG_U64 };
    int v = 0;
    for (int i = 0; i < LV_NSIZES; i++) {
        int cs[4], nc = lv_chans(i, 0, cs);
        for (int j = 0; j < nc; j++, v++) {
            vkimg_image in = lv_full(lv_sizes[i].w, lv_sizes[i].h, cs[j], VKIMG_U8, D_UNIFORM);
            integral_case(ctx, &in, ask[v % 4]);
            vkimg_image_free(&in);
        }
    }
    /* 16-bit levels: totals far beyond 2^32 */
    for (int c = 1; c <= 4; c++) {
        vkimg_image in = lv_full(131, 67, c, VKIMG_U16, D_UNIFORM);
        integral_case(ctx, &in, VKIMG_U16);
        vkimg_image_free(&in);
    }
    {
        vkimg_image in = lv_full(1100, 1030, 2, VKIMG_U16, D_UNIFORM);
        integral_case(ctx, &in, VKIMG_U16);
        vkimg_image_free(&in);
        in = lv_full(3000, 40, 3, VKIMG_U16, D_UNIFORM);
        integral_case(ctx, &in, VKIMG_F32);
        vkimg_image_free(&in);
    }
    /* 8192 x 8192 gray near 255: the total exceeds 2^32 (512 MiB of output;
     * the reference keeps one row) */
    {
        const uint32_t lo[4] = { 250 }, hi[4] = { 255 };
        vkimg_image in = lv_image(8192, 8192, 1, VKIMG_U8, D_UNIFORM, lo, hi, false);
        vkimg_image out;
        double t0 = gh_now();
        if (!lv_run(ctx, "integral", &in, VKIMG_U8, &out)) {
            double t1 = gh_now();
            uint64_t total = check_integral(&in, &out);
            printf("    integral 8192x8192: device %.2f s, reference + compare %.2f s, total %llu\n", t1 - t0,
                   gh_now() - t1, (unsigned long long)total);
            CHECK(total > (1ull << 32), "8192x8192 integral: total %llu does not exceed 2^32",
                  (unsigned long long)total);
        }
        vkimg_image_free(&out);
        vkimg_image_free(&in);
    }
}

/* The table's two shapes (integral.c: the strips and columns of CPU devices, the
 * scans of GPUs), each forced on this device (VKIMG_SAT_LINES=0 / 1) on every
 * size and channel count, 8- and 16-bit (strips of 8 or 24 samples: rows of
 * whole strips and of a partial one), which ran read from the library's log. */
static void test_shapes(vkimg_ctx *ctx)
{
    static const size2 extra[] = { { 8, 5 }, { 16, 3 }, { 24, 7 }, { 27, 9 } }; /* whole strips, and not */
    for (int lines = 0; lines < 2; lines++) {
        setenv("VKIMG_SAT_LINES", lines ? "1" : "0", 1);
        for (int i = 0; i < LV_NSIZES + 4; i++) {
            const size2 sz = i < LV_NSIZES ? lv_sizes[i] : extra[i - LV_NSIZES];
            if ((size_t)sz.w * sz.h > 300000)
                continue;
            for (int c = 1; c <= 4; c++) {
                vkimg_image in = lv_full(sz.w, sz.h, c, (i + c) % 2 ? VKIMG_U16 : VKIMG_U8, D_UNIFORM);
                gh_dispatches_start();
                integral_case(ctx, &in, VKIMG_U8);
                gh_dispatches_stop();
                const int ran_lines = gh_dispatched("integral-strips"), ran_scans = gh_dispatched("integral-rows");
                CHECK(lines ? ran_lines == 1 && ran_scans == 0 : ran_scans == 1 && ran_lines == 0,
                      "integral %dx%d c=%d, VKIMG_SAT_LINES=%d: the strips ran %d times, the scans %d", sz.w, sz.h, c,
                      lines, ran_lines, ran_scans);
                vkimg_image_free(&in);
            }
        }
    }
    unsetenv("VKIMG_SAT_LINES");
}

int main(void)
{
    static const gh_suite suites[] = { { "integral", test_integral }, { "shapes", test_shapes } };
    return gh_main("test_integral", suites, 2);
}
