/* mipmaps: every level of a mip chain (or the first `levels`), level k the resize
 * of level k-1 (as written) to floor(w/2) x floor(h/2), at least 1 x 1, all in one
 * submission. Must be last: it writes one image per level (a {level} output
 * template, or one KTX2 file). */
#include "ops/remap.h"
#include "ops/resample.h"
#include "core/util.h"
#include "spv/mipmaps.spv.h"

#include <stdlib.h>

enum { O_LEVELS, O_FILTER, O_LINEAR };

static const vki_opt mipmaps_opts[] = {
    [O_LEVELS] = { .name = "levels", .type = VKI_OPT_INT, .def = 0, .min = 0, .max = VKI_MAX_OUTPUTS,
                   .help = "levels to make, the full size included (0: every level down to 1x1)" },
    [O_FILTER] = { .name = "filter", .type = VKI_OPT_ENUM, .def = VKI_FILTER_BOX, .choices = vki_filter_names,
                   .help = "as resize's (box: the mean of 2x2 pixels for even sizes)" },
    [O_LINEAR] = { .name = "linear", .type = VKI_OPT_BOOL, .def = 0, .help = "as resize's" },
};

static int mipmaps_outputs(int w, int h, const vki_args *a, int *ws, int *hs)
{
    int max = a->v[O_LEVELS] > 0 ? (int)a->v[O_LEVELS] : VKI_MAX_OUTPUTS, n = 0;
    for (;;) {
        ws[n] = w;
        hs[n] = h;
        n++;
        if ((w == 1 && h == 1) || n == max)
            return n;
        w = w / 2 > 1 ? w / 2 : 1;
        h = h / 2 > 1 ? h / 2 : 1;
    }
}

#define FUSED_MAX 6 /* levels one dispatch of mipmaps.comp makes: a 64 x 64 input tile */

/* The levels the fused box pass makes (0: none): while every level halves
 * exactly, at most FUSED_MAX; on GPUs (VKIMG_MIPMAPS_FUSED=0/1 overrides). */
static int fused_levels(const vki_rec *r, const vki_step *s, vki_filter f)
{
    bool want = r->gpu->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    const char *ev = getenv("VKIMG_MIPMAPS_FUSED");
    if (ev && *ev)
        want = *ev != '0';
    int n = 0;
    while (want && f == VKI_FILTER_BOX && n < FUSED_MAX && n + 1 < s->nout && s->outs_w[n] % 2 == 0 &&
           s->outs_h[n] % 2 == 0 && s->outs_w[n + 1] == s->outs_w[n] / 2 && s->outs_h[n + 1] == s->outs_h[n] / 2)
        n++;
    if (n * 2 > 64 || r->gpu->lim.max_shared < (32 * 32 + 16 * 16) * 16)
        return 0;
    return n;
}

/* mipmaps.comp's push constants (both dispatches) */
typedef struct mip_push {
    vki_addr src, lv[7];
    uint32_t w, h;
} mip_push;

static int record_fused(vki_rec *r, const vki_step *s, int levels, bool linear)
{
    mip_push pc = { .src = vki_addr_of(s->in), .w = (uint32_t)s->w, .h = (uint32_t)s->h };
    for (int k = 0; k <= levels; k++)
        pc.lv[k] = vki_addr_of(s->outs[k]);
    /* 8-bit rows as 64-bit words (mipmaps.comp VEC8): the input's rows 8-byte
     * aligned (so level 1's are 4-byte aligned); VKIMG_MIPMAPS_VEC=0 reads bytes */
    const char *ev = getenv("VKIMG_MIPMAPS_VEC");
    bool write0 = s->outs[0] != s->in;
    bool vec8 = s->in_fmt == VKIMG_U8 && s->out_fmt == VKIMG_U8 && s->in_c == s->out_c &&
                (uint64_t)s->w * (uint64_t)s->in_c % 8 == 0 && s->in % 8 == 0 && s->outs[1] % 4 == 0 &&
                (!write0 || s->outs[0] % 8 == 0) && !(ev && *ev == '0');
    vki_spec spec = { 0 };
    uint32_t wg = vki_wg_1d(r->gpu), wx = wg >= 256 ? 16 : 8;
    vki_step_spec(s, &spec, wx, wg / wx, 1);
    vki_spec_named(&spec, "LEVELS", (uint32_t)levels);
    vki_spec_named(&spec, "LINEAR", linear);
    vki_spec_named(&spec, "WRITE0", write0);
    vki_spec_named(&spec, "VEC8", vec8);
    const uint32_t side = 64; /* input pixels per tile side (mipmaps.comp) */
    return vki_rec_dispatch(r, "mipmaps", VKI_SPV(mipmaps), &spec, &pc, sizeof pc, ((uint32_t)s->w + side - 1) / side,
                            ((uint32_t)s->h + side - 1) / side, 1);
}

#define TAIL_MAX ((int)VKI_ARRAY_LEN(((mip_push *)0)->lv)) /* levels one tail dispatch makes */
/* The tail's first level as a dispatch of its own over many workgroups where
 * it has more pixels than this (one workgroup then makes the rest from it):
 * VKIMG_MIPMAPS_TAIL_WIDE sets the threshold (0: never) */
#define TAIL_WIDE_PX 4096

static uint32_t tail_wg(const vki_rec *r)
{
    return r->gpu->lim.max_wg_invocations < 1024 ? r->gpu->lim.max_wg_invocations : 1024;
}

/* The levels after `from` the next tail dispatch makes (mipmaps.comp TAILPX:
 * 8-bit output, each level kept in shared memory as its bytes), and its
 * workgroups: the first level alone over many where it is large, else as many
 * as follow in one, at most TAIL_MAX; 0 where its first does not fit the
 * shared memory, or VKIMG_MIPMAPS_TAIL=0. */
static int tail_levels(const vki_rec *r, const vki_step *s, int from, uint32_t *groups)
{
    const char *ev = getenv("VKIMG_MIPMAPS_TAIL");
    if (s->out_fmt != VKIMG_U8 || from + 1 >= s->nout || (ev && *ev == '0'))
        return 0;
    const uint64_t px = (uint64_t)s->outs_w[from + 1] * (uint64_t)s->outs_h[from + 1];
    const long wide = vki_env_long("VKIMG_MIPMAPS_TAIL_WIDE", TAIL_WIDE_PX, 0, 1L << 30);
    *groups = 1;
    if (wide > 0 && px > (uint64_t)wide && px / tail_wg(r) < UINT32_MAX) {
        *groups = (uint32_t)((px + tail_wg(r) - 1) / tail_wg(r));
        return 1;
    }
    if ((px + px / 2 + 1) * 4 + 32 * 4 > r->gpu->lim.max_shared)
        return 0;
    int n = s->nout - 1 - from;
    return n < TAIL_MAX ? n : TAIL_MAX;
}

static int record_tail(vki_rec *r, const vki_step *s, int from, int n, uint32_t groups, bool linear)
{
    mip_push pc = { .src = vki_addr_of(s->outs[from]), .w = (uint32_t)s->outs_w[from], .h = (uint32_t)s->outs_h[from] };
    for (int k = 0; k < n; k++)
        pc.lv[k] = vki_addr_of(s->outs[from + 1 + k]);
    vki_spec spec = { 0 };
    vki_step_spec(s, &spec, tail_wg(r), 1, 1);
    vki_spec_named(&spec, "LINEAR", linear);
    /* its first level's pixels (n = 1 keeps none in shared memory) */
    vki_spec_named(&spec, "TAILPX", n == 1 ? 1 : (uint32_t)s->outs_w[from + 1] * (uint32_t)s->outs_h[from + 1]);
    vki_spec_named(&spec, "TAILN", (uint32_t)n);
    return vki_rec_dispatch(r, "mipmaps-tail", VKI_SPV(mipmaps), &spec, &pc, sizeof pc, groups, 1, 1);
}

static int record_mipmaps(vki_rec *r, const vki_step *s)
{
    const double *v = s->args->v;
    vki_resample rs = { .filter = (vki_filter)(int)v[O_FILTER],
                            .linear = v[O_LINEAR] != 0, .f32_between = true };
    int fused = fused_levels(r, s, rs.filter), rc = 0, first = 1;
    if (fused) { /* levels 0..fused in one pass, and what follows in the tail's */
        rc = record_fused(r, s, fused, rs.linear);
        first = fused + 1;
        uint32_t groups;
        for (int tail; !rc && (tail = tail_levels(r, s, first - 1, &groups)) > 0; first += tail)
            rc = record_tail(r, s, first - 1, tail, groups, rs.linear);
    } else if (s->outs[0] != s->in) { /* level 0: the input as it is, in the output's format (unless
                                          it is the input itself: first_output_is_input) */
        vki_remap id = vki_crop_remap(0, 0);
        rc = vki_record_remap(r, s, &id);
    }
    for (int k = first; k < s->nout && !rc; k++) {
        vki_step t = *s;
        t.in = s->outs[k - 1];
        t.w = t.geo_w = s->outs_w[k - 1];
        t.h = t.geo_h = s->outs_h[k - 1];
        t.in_c = s->out_c;
        t.in_fmt = s->out_fmt;
        t.in_packed_rgb8_words = false;
        t.out = s->outs[k];
        t.out_w = s->outs_w[k];
        t.out_h = s->outs_h[k];
        rc = vki_record_resample(r, &t, &rs);
    }
    return rc;
}

const vki_op_desc vki_op_mipmaps = {
    .name = "mipmaps",
    .help = "Every mip level down to 1x1 (or levels=N), each the resize of the one before (box by default); "
            "last in a pipeline: write with a {level} output template or to .ktx2.",
    .opts = mipmaps_opts,
    .nopts = (int)VKI_ARRAY_LEN(mipmaps_opts),
    .outputs = mipmaps_outputs,
    .first_output_is_input = true,
    .record = record_mipmaps,
};
