/* gray (BT.601, BT.709; the packed RGB8 path) on the device against its
 * double-precision reference (gray_ref.h; tolerances: tests/lib/run_ref.h). */
#include "gpu_harness.h"
#include "gray_ref.h"
#include "run_ref.h"
#include "t.h"

#define G_GRAY "gray"

static void test_gray(vkimg_ctx *ctx)
{
    int rf = ref_gray_self_check();
    CHECK(rf == 0, "gray reference self-check: %d failures", rf);
    static const char *const txt[2] = { "gray=weights=bt601", "gray=weights=bt709" };
    const ref_step s[2][1] = { { GRAY(0) }, { GRAY(1) } };
    /* the default is bt601 */
    run_rand(ctx, G_GRAY, "gray", s[0], 1, 17, 13, 3, VKIMG_U8, FMT_U8 | FMT_F32, -1);
    for (int i = 0; i < OP_NSIZES; i++)
        for (int c = 1; c <= 4; c++)
            for (int k = 0; k < 2; k++)
                run_rand(ctx, G_GRAY, txt[k], s[k], 1, op_sizes[i].w, op_sizes[i].h, c, VKIMG_U8,
                         op_sizes[i].w * op_sizes[i].h > 100000 ? FMT_U8 : (k ? FMT_U8 | FMT_F32 : FMT_ALL), -1);
    /* packed RGB8 path (U8, c = 3): widths not a multiple of 4, totals not a
     * multiple of 4 (and some that are); U8 output is the word-store path, F32
     * and U16 the float path */
    static const size2 packed[] = {
        { 1, 1 }, { 2, 1 }, { 3, 1 }, { 5, 1 }, { 1, 5 }, { 6, 1 }, { 7, 3 }, { 3, 3 },
        { 13, 1 }, { 9, 7 }, { 4, 1 }, { 8, 2 }, { 5, 4 }, { 255, 3 }, { 1023, 1 },
    };
    for (size_t i = 0; i < sizeof packed / sizeof packed[0]; i++)
        for (int k = 0; k < 2; k++)
            run_rand(ctx, G_GRAY, txt[k], s[k], 1, packed[i].w, packed[i].h, 3, VKIMG_U8, FMT_ALL, -1);
    /* U16 and F32 input */
    for (int c = 1; c <= 4; c++) {
        run_rand(ctx, G_GRAY, txt[c % 2], s[c % 2], 1, 17, 13, c, VKIMG_U16, FMT_ALL, -1);
        run_rand(ctx, G_GRAY, txt[c / 2 % 2], s[c / 2 % 2], 1, 17, 13, c, VKIMG_F32, FMT_ALL, -1);
    }
    run_rand(ctx, G_GRAY, txt[0], s[0], 1, 1, 1, 3, VKIMG_U16, FMT_ALL, -1);
    run_rand(ctx, G_GRAY, txt[1], s[1], 1, 131, 67, 3, VKIMG_F32, FMT_ALL, -1);
    /* full HD */
    run_rand(ctx, G_GRAY, txt[0], s[0], 1, 1920, 1080, 3, VKIMG_U8, FMT_U8, -1);
    run_rand(ctx, G_GRAY, txt[1], s[1], 1, 1920, 1080, 3, VKIMG_U8, FMT_F32, -1);
    run_rand(ctx, G_GRAY, txt[1], s[1], 1, 1920, 1080, 4, VKIMG_U8, FMT_U8, -1);
}

/* the per-pixel shape and the CPU shape (runs) wherever the tests run: the
 * same cases again with each (gpu_harness.h gh_shapes) */
static void test_gray_shapes(vkimg_ctx *ctx)
{
    gh_shapes(ctx, test_gray, "gray-runs");
}

int main(void)
{
    static const gh_suite suites[] = { { "gray", test_gray }, { "shapes", test_gray_shapes } };
    run_next_seed = 45; /* any seed; this one gives the images of the former test_ops.c */
    return gh_main("test_gray", suites, 2);
}
