/* gray: luma Y = wr R + wg G + wb B on the stored values; alpha is kept. */
#include "exec/exec.h"
#include "core/util.h"
#include "spv/gray.spv.h"

static const char *const gray_weights[] = { "bt601", "bt709", NULL };

static const vki_opt gray_opts[] = {
    { .name = "weights", .type = VKI_OPT_ENUM, .def = 0, .choices = gray_weights,
      .help = "luma weights: bt601 (0.299, 0.587, 0.114) or bt709 (0.2126, 0.7152, 0.0722)" },
};

static int gray_out_channels(int in_c, const vki_args *a)
{
    (void)a;
    return VKI_HAS_ALPHA(in_c) ? 2 : 1; /* gray (+ alpha) */
}


static int record_gray(vki_rec *r, const vki_step *s)
{
    static const uint32_t w[2][3] = { { 2990, 5870, 1140 }, { 2126, 7152, 722 } }; /* x 1e-4 */
    int k = (int)s->args->v[0];
    uint64_t npx = (uint64_t)s->w * s->h;
    /* Packed RGB8: each invocation reads 3 words (4 pixels) and writes 4 values
     * (one word when the output is 8-bit gray). The other 8-bit inputs take the
     * runs shape on GPUs too (H100, 8K, ms: RGBA 0.118 -> 0.074, gray 0.097 ->
     * 0.059, gray + alpha 0.112 -> 0.106; RGB's packed path 0.049, runs 0.051). */
    bool packed = s->in_packed_rgb8_words;
    vki_spec spec = { 0 };
    uint32_t wg = vki_wg_1d(r->gpu), runs = vki_runs(r->gpu, s, s->in_c != 3);
    vki_step_spec(s, &spec, wg, 1, 1);
    vki_spec_named(&spec, "PACKED", packed);
    struct {
        vki_addr src, dst;
        float wr, wg, wb;
        uint32_t iwr, iwg, iwb;
        uint32_t npx;
    } pc = { vki_addr_of(s->in), vki_addr_of(s->out), w[k][0] * 1e-4f, w[k][1] * 1e-4f, w[k][2] * 1e-4f,
             w[k][0], w[k][1], w[k][2], (uint32_t)npx };
    uint64_t items = packed ? (npx + 3) / 4 : npx;
    if (runs)
        return vki_rec_dispatch_runs(r, s, runs, wg, "gray", VKI_SPV(gray), &spec, &pc, sizeof pc);
    return vki_rec_dispatch_1d(r, "gray", VKI_SPV(gray), &spec, &pc, sizeof pc, (items + wg - 1) / wg);
}

const vki_op_desc vki_op_gray = {
    .name = "gray",
    .help = "Convert to gray (luma) from the stored RGB values; alpha is kept.",
    .opts = gray_opts,
    .nopts = (int)(sizeof gray_opts / sizeof gray_opts[0]),
    .out_channels = gray_out_channels,
    .unit_out = true,
    .alpha_copied = true,
    .record = record_gray,
};
