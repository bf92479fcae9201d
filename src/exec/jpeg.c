/* The device stages of the JPEG codec (shaders/codec): a coded image's
 * coefficients (core/coded.h) to packed 8-bit pixels, and pixels to the
 * coefficients of a JPEG to be entropy-coded on the host (io/jpeg.c). */
#include "exec/exec.h"
#include "core/coded.h"
#include "core/util.h"
#include "spv/jpeg_color.spv.h"
#include "spv/jpeg_fdct.spv.h"
#include "spv/jpeg_idct.spv.h"

#include <string.h>

#define BLOCKS_PER_GROUP 8 /* the transform kernels: 8 blocks of 8 invocations */

size_t vki_jpeg_pixels_bytes(int w, int h, int c)
{
    /* jpeg_color writes 4 pixels (whole words) an invocation; kernels may read
     * packed RGB8 as words (12 bytes past) */
    return ((size_t)w * (size_t)h + 3) / 4 * 4 * (size_t)c + 12;
}

/* A kernel's spec: a 1D workgroup of lx invocations */
static vki_spec spec_1d(uint32_t lx)
{
    vki_spec spec = { 0 };
    vki_spec_set(&spec, VKI_SPEC_LX, lx);
    vki_spec_set(&spec, VKI_SPEC_LY, 1);
    vki_spec_set(&spec, VKI_SPEC_LZ, 1);
    return spec;
}

/* Component k's table is component k-1's (Cb and Cr share one): its buffer serves both */
static bool same_table(const struct vkimg_coded *cd, int k)
{
    return k > 0 && !memcmp(cd->comp[k].quant, cd->comp[k - 1].quant, sizeof cd->comp[k].quant);
}

static int quant_table(vki_rec *r, const uint16_t q[64], VkDeviceAddress *addr)
{
    uint32_t t[64];
    for (int i = 0; i < 64; i++)
        t[i] = q[i];
    return vki_rec_const(r, t, sizeof t, "JPEG quantization table", addr);
}

int vki_jpeg_rec_decode(vki_rec *r, const struct vkimg_coded *cd, VkDeviceAddress coefs, int w, int h,
                        VkDeviceAddress dst)
{
    VkDeviceAddress plane[VKI_JPEG_MAX_COMP] = { 0 }, q = 0;
    const vki_spec spec = spec_1d(8 * BLOCKS_PER_GROUP);
    for (int k = 0; k < cd->ncomp; k++) {
        const vki_jpeg_comp *c = &cd->comp[k];
        const uint64_t nblocks = (uint64_t)c->bw * c->bh;
        int rc = vki_rec_scratch(r, nblocks * 64, "JPEG component samples", &plane[k]);
        if (rc || (!same_table(cd, k) && (rc = quant_table(r, c->quant, &q))))
            return rc;
        struct {
            vki_addr coefs, plane, quant;
            uint32_t bw, nblocks;
        } pc = { vki_addr_of(coefs + 2 * (VkDeviceAddress)c->off), vki_addr_of(plane[k]), vki_addr_of(q), c->bw,
                 (uint32_t)nblocks };
        if ((rc = vki_rec_dispatch_1d(r, "jpeg_idct", VKI_SPV(jpeg_idct), &spec, &pc, sizeof pc,
                                      (nblocks + BLOCKS_PER_GROUP - 1) / BLOCKS_PER_GROUP)))
            return rc;
    }
    struct {
        vki_addr plane[3], dst;
        uint32_t pitch[3], cw[3], ch[3], mode[3];
        uint32_t w, npx;
    } pc;
    memset(&pc, 0, sizeof pc);
    for (int k = 0; k < cd->ncomp; k++) {
        const vki_jpeg_comp *c = &cd->comp[k];
        pc.plane[k] = vki_addr_of(plane[k]);
        pc.pitch[k] = c->bw * 8;
        pc.cw[k] = c->cw;
        pc.ch[k] = c->ch;
        pc.mode[k] = c->hs | c->vs << 4;
    }
    pc.dst = vki_addr_of(dst);
    pc.w = (uint32_t)w;
    pc.npx = (uint32_t)((uint64_t)w * (uint64_t)h);
    const uint32_t wg = vki_wg_1d(r->gpu);
    vki_spec cs = spec_1d(wg);
    vki_spec_named(&cs, "NCOMP", (uint32_t)cd->ncomp);
    const uint64_t inv = ((uint64_t)pc.npx + 3) / 4;
    return vki_rec_dispatch_1d(r, "jpeg_color", VKI_SPV(jpeg_color), &cs, &pc, sizeof pc, (inv + wg - 1) / wg);
}

/* TurboJPEG's forward DCT: the accurate integer one from quality 96, else the fast one */
#define TJ_ACCURATE_QUALITY 96

/* The quantization divisors of the DCT's outputs (jcdctmgr.c): JDCT_ISLOW's are
 * 8 times the table, JDCT_IFAST's the table scaled by the AA&N factors (14-bit,
 * rounded). */
static int fdct_divisors(vki_rec *r, const uint16_t q[64], bool accurate, VkDeviceAddress *addr)
{
    static const uint16_t aanscales[64] = {
        16384, 22725, 21407, 19266, 16384, 12873, 8867,  4520,  22725, 31521, 29692, 26722, 22725,
        17855, 12299, 6270,  21407, 29692, 27969, 25172, 21407, 16819, 11585, 5906,  19266, 26722,
        25172, 22654, 19266, 15137, 10426, 5315,  16384, 22725, 21407, 19266, 16384, 12873, 8867,
        4520,  12873, 17855, 16819, 15137, 12873, 10114, 6967,  3552,  8867,  12299, 11585, 10426,
        8867,  6967,  4799,  2446,  4520,  6270,  5906,  5315,  4520,  3552,  2446,  1247,
    };
    uint32_t t[64];
    for (int i = 0; i < 64; i++) {
        t[i] = accurate ? (uint32_t)q[i] << 3 : ((uint32_t)q[i] * aanscales[i] + (1u << 10)) >> 11;
        t[i] = t[i] ? t[i] : 1;
    }
    return vki_rec_const(r, t, sizeof t, "JPEG quantization divisors", addr);
}

int vki_jpeg_rec_encode(vki_rec *r, const struct vkimg_coded *cd, VkDeviceAddress src, int w, int h, int c,
                        VkDeviceAddress coefs)
{
    vki_spec spec = spec_1d(8 * BLOCKS_PER_GROUP);
    const bool accurate = cd->quality >= TJ_ACCURATE_QUALITY;
    vki_spec_named(&spec, "ACCURATE", accurate);
    VkDeviceAddress q = 0;
    for (int k = 0; k < cd->ncomp; k++) {
        const vki_jpeg_comp *cp = &cd->comp[k];
        const uint64_t nblocks = (uint64_t)cp->bw * cp->bh;
        int rc = 0;
        if (!same_table(cd, k) && (rc = fdct_divisors(r, cp->quant, accurate, &q)))
            return rc;
        struct {
            vki_addr src, coefs, quant;
            uint32_t w, h, c, comp, sub, ch, bw, nblocks;
        } pc = { vki_addr_of(src), vki_addr_of(coefs + 2 * (VkDeviceAddress)cp->off), vki_addr_of(q), (uint32_t)w,
                 (uint32_t)h, (uint32_t)c, (uint32_t)k, cp->hs, cp->ch, cp->bw, (uint32_t)nblocks };
        if ((rc = vki_rec_dispatch_1d(r, "jpeg_fdct", VKI_SPV(jpeg_fdct), &spec, &pc, sizeof pc,
                                      (nblocks + BLOCKS_PER_GROUP - 1) / BLOCKS_PER_GROUP)))
            return rc;
    }
    return 0;
}
