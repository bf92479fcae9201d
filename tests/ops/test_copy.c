/* copy on the device against its reference (copy_ref.h): every awkward size,
 * channel count and format (tolerances: tests/lib/run_ref.h). */
#include "copy_ref.h"
#include "gpu_harness.h"
#include "run_ref.h"

#define G_COPY "copy"

static void test_copy(vkimg_ctx *ctx)
{
    const ref_step s[] = { COPY };
    for (int i = 0; i < OP_NSIZES; i++)
        for (int c = 1; c <= 4; c++)
            run_rand(ctx, G_COPY, "copy", s, 1, op_sizes[i].w, op_sizes[i].h, c, VKIMG_U8,
                     op_sizes[i].w * op_sizes[i].h > 100000 ? (c % 2 ? FMT_U8 : FMT_F32) : FMT_ALL, -1);
    for (int c = 1; c <= 4; c++) {
        run_rand(ctx, G_COPY, "copy", s, 1, 17, 13, c, VKIMG_U16, FMT_ALL, -1);
        run_rand(ctx, G_COPY, "copy", s, 1, 17, 13, c, VKIMG_F32, FMT_ALL, -1);
    }
    run_rand(ctx, G_COPY, "copy", s, 1, 131, 67, 3, VKIMG_U16, FMT_U16, -1);
    run_rand(ctx, G_COPY, "copy", s, 1, 257, 129, 4, VKIMG_F32, FMT_F32, -1);
    run_rand(ctx, G_COPY, "copy", s, 1, 1920, 1080, 3, VKIMG_U8, FMT_U8, -1);
    run_rand(ctx, G_COPY, "copy", s, 1, 1920, 1080, 1, VKIMG_F32, FMT_F32, -1);
}

/* the per-pixel shape and the CPU shape (runs) wherever the tests run: the
 * same cases again with each (gpu_harness.h gh_shapes) */
static void test_copy_shapes(vkimg_ctx *ctx)
{
    gh_shapes(ctx, test_copy, "copy-runs");
}

int main(void)
{
    static const gh_suite suites[] = { { "copy", test_copy }, { "shapes", test_copy_shapes } };
    return gh_main("test_copy", suites, 2);
}
