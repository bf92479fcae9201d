/* Exact pixel moves (remap.h): one tiled kernel for every flip, transpose,
 * rotation by multiples of 90 degrees and crop. */
#include "ops/remap.h"
#include "core/util.h"
#include "spv/remap.spv.h"
#include "spv/remap_lines.spv.h"


vki_remap vki_orientation_remap(int orientation, int w, int h, int *ow, int *oh)
{
    /* the EXIF orientation says how the stored pixels must move to show upright */
    static const int base[9][6] = {
        [1] = { 1, 0, 0, 0, 1, 0 },  /* as stored */
        [2] = { -1, 0, 1, 0, 1, 0 }, /* flop: x -> w-1-x */
        [3] = { -1, 0, 1, 0, -1, 1 }, /* rotate 180 */
        [4] = { 1, 0, 0, 0, -1, 1 }, /* flip: y -> h-1-y */
        [5] = { 0, 1, 0, 1, 0, 0 },  /* transpose */
        [6] = { 0, 1, 0, -1, 0, 1 }, /* rotate 90 clockwise: out(x, y) = in(y, h-1-x) */
        [7] = { 0, -1, 1, -1, 0, 1 }, /* transverse: out(x, y) = in(w-1-y, h-1-x) */
        [8] = { 0, -1, 1, 1, 0, 0 }, /* rotate 270 clockwise: out(x, y) = in(w-1-y, x) */
    };
    if (orientation < 1 || orientation > 8)
        orientation = 1;
    const int *b = base[orientation];
    vki_remap m = { { b[0], b[1], b[2] * (w - 1), b[3], b[4], b[5] * (h - 1) } };
    bool swap = orientation >= 5;
    *ow = swap ? h : w;
    *oh = swap ? w : h;
    return m;
}

bool vki_moves_always(const vki_args *a)
{
    (void)a;
    return true;
}

vki_remap vki_crop_remap(int x, int y)
{
    vki_remap m = { { 1, 0, x, 0, 1, y } };
    return m;
}

int vki_orientation_size(int orientation, int w, int h, int *ow, int *oh, char *why, size_t n)
{
    (void)why;
    (void)n;
    vki_orientation_remap(orientation, w, h, ow, oh);
    return 0;
}

typedef struct remap_push {
    vki_addr src, dst;
    uint32_t in_w, in_h, out_w, out_h;
    int32_t m[6];
} remap_push;

/* The CPU devices' shape (remap.comp REMAP_LINES_ONLY): a move that keeps the
 * format and the channels moves bytes, a block of the output an invocation; the
 * pixels outside whole blocks one an invocation. VKIMG_REMAP_LINES=0 runs the
 * tiles instead (tests). */
static bool use_lines(const vki_rec *r, const vki_step *s)
{
    const uint64_t px = (uint64_t)s->in_c * vkimg_fmt_size(s->in_fmt), in = (uint64_t)s->w * (uint64_t)s->h,
                   out = (uint64_t)s->out_w * (uint64_t)s->out_h;
    return s->in_fmt == s->out_fmt && s->in_c == s->out_c &&
           vki_cpu_shape(r->gpu, "VKIMG_REMAP_LINES", (in > out ? in : out) * px);
}

static int record_lines(vki_rec *r, const vki_step *s, const remap_push *pc)
{
    const uint32_t pb = (uint32_t)s->in_c * (uint32_t)vkimg_fmt_size(s->in_fmt);
    const bool swap = pc->m[0] == 0; /* output rows are input columns */
    /* lines of about 128 bytes along the input rows (a multiple of 8 pixels: K pb
     * bytes are whole 64-bit words); with SWAP, blocks of 8 output columns (32
     * for 1 byte, 16 for 2) by K rows, about 256 bytes */
    uint32_t k, l;
    if (!swap) {
        k = 128 / pb / 8 * 8;
        k = k < 8 ? 8 : k > 64 ? 64 : k;
        l = 1;
    } else {
        l = pb == 1 ? 32 : pb == 2 ? 16 : 8;
        k = 256 / (l * pb) / 4 * 4;
        k = k < 4 ? 4 : k;
    }
    const uint32_t bw = swap ? l : k, bh = swap ? k : l, wg = 64;
    const uint64_t blocks = (uint64_t)(s->out_w / bw) * (uint64_t)(s->out_h / bh);
    const uint64_t edge = (uint64_t)s->out_w * (uint64_t)s->out_h - blocks * bw * bh;
    /* rows at multiples of 8 bytes: the row length and the buffer's start */
    const bool align8 = (uint64_t)s->out_w * pb % 8 == 0 && s->out % 8 == 0;
    vki_spec spec = { 0 };
    vki_step_spec(s, &spec, wg, 1, 1);
    vki_spec_named(&spec, "PB", pb);
    vki_spec_named(&spec, "K", k);
    vki_spec_named(&spec, "L", l);
    vki_spec_named(&spec, "SWAP", swap);
    vki_spec_named(&spec, "ALIGN8", align8);
    int rc = 0;
    if (blocks)
        rc = vki_rec_dispatch_1d(r, "remap-lines", VKI_SPV(remap_lines), &spec, pc, sizeof *pc, (blocks + wg - 1) / wg);
    if (!rc && edge) {
        vki_spec_named(&spec, "ALIGN8", 0);
        vki_spec_named(&spec, "EDGE", 1);
        rc = vki_rec_dispatch_1d(r, "remap-lines-edge", VKI_SPV(remap_lines), &spec, pc, sizeof *pc,
                                 (edge + wg - 1) / wg);
    }
    return rc;
}

int vki_record_remap(vki_rec *r, const vki_step *s, const vki_remap *m)
{
    remap_push pc = { vki_addr_of(s->in), vki_addr_of(s->out), (uint32_t)s->w, (uint32_t)s->h, (uint32_t)s->out_w,
                      (uint32_t)s->out_h, { m->m[0], m->m[1], m->m[2], m->m[3], m->m[4], m->m[5] } };
    if (use_lines(r, s))
        return record_lines(r, s, &pc);
    /* 32 x 8 (or as many rows as the device allows; a multiple of 32 x 1 at least) */
    uint32_t wy = r->gpu->lim.max_wg_invocations / 32;
    wy = wy >= 8 ? 8 : wy >= 4 ? 4 : wy >= 2 ? 2 : 1;
    if (r->gpu->lim.max_shared < 32 * 33 * 16)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "remap: the device has %u bytes of shared memory, %u needed",
                        r->gpu->lim.max_shared, 32 * 33 * 16);
    vki_spec spec = { 0 };
    vki_step_spec(s, &spec, 32, wy, 1);
    return vki_rec_dispatch(r, s->desc->name, VKI_SPV(remap), &spec, &pc, sizeof pc, ((uint32_t)s->out_w + 31) / 32,
                            ((uint32_t)s->out_h + 31) / 32, 1);
}
