/* Exact pixel moves (remap.h): one tiled kernel for every flip, transpose,
 * rotation by multiples of 90 degrees and crop. */
#include "ops/remap.h"
#include "core/util.h"
#include "spv/remap.spv.h"

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

int vki_record_remap(vki_rec *r, const vki_step *s, const vki_remap *m)
{
    struct {
        vki_addr src, dst;
        uint32_t in_w, in_h, out_w, out_h;
        int32_t m[6];
    } pc = { vki_addr_of(s->in), vki_addr_of(s->out), (uint32_t)s->w, (uint32_t)s->h, (uint32_t)s->out_w,
             (uint32_t)s->out_h, { m->m[0], m->m[1], m->m[2], m->m[3], m->m[4], m->m[5] } };
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
