/* The device stages of the JPEG codec (shaders/codec): a coded image's
 * coefficients (core/coded.h) to packed 8-bit pixels, and pixels to the
 * coefficients of a JPEG to be entropy-coded on the host (io/jpeg.c). */
#include "exec/exec.h"
#include "core/coded.h"
#include "core/util.h"
#include "spv/jpeg_color.spv.h"
#include "spv/jpeg_fdct.spv.h"
#include "spv/jpeg_henc.spv.h"
#include "spv/jpeg_huff.spv.h"
#include "spv/jpeg_idct.spv.h"
#include "spv/jpeg_scan.spv.h"

#include <stdlib.h>
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

/* ---------------------------------------------------------------- Huffman decoding */

/* Bits a subsequence (VKIMG_JPEG_SYNC_BITS: tests make them few, so that small
 * images have many) and rounds of synchronization (VKIMG_JPEG_SYNC_ROUNDS). */
#define SYNC_BITS 1024
#define SYNC_ROUNDS 6
#define SCAN_PER 8 /* jpeg_scan: elements an invocation */

int vki_jpeg_sync_rounds(void)
{
    return (int)vki_env_long("VKIMG_JPEG_SYNC_ROUNDS", SYNC_ROUNDS, 2, 64);
}

/* jpeg_scan's push constants */
typedef struct scan_pc {
    vki_addr src, dst, aux;
    uint32_t n, chunks;
    uint32_t h, v, off, bw, mcux, ri; /* MODE 1 */
} scan_pc;

/* The three passes of jpeg_scan over pc->n elements (MODE 0: n + 1) */
static int rec_scan(vki_rec *r, int mode, uint32_t wg, VkDeviceAddress aux, scan_pc *pc)
{
    const uint64_t chunks = ((uint64_t)pc->n + (mode == 0) + (uint64_t)wg * SCAN_PER - 1) / ((uint64_t)wg * SCAN_PER);
    pc->aux = vki_addr_of(aux);
    pc->chunks = (uint32_t)chunks;
    for (int pass = 0; pass < 3; pass++) {
        vki_spec spec = spec_1d(wg);
        vki_spec_named(&spec, "MODE", (uint32_t)mode);
        vki_spec_named(&spec, "PASS", (uint32_t)pass);
        vki_spec_named(&spec, "PER", SCAN_PER);
        int rc = vki_rec_dispatch_1d(r, "jpeg_scan", VKI_SPV(jpeg_scan), &spec, pc, sizeof *pc, pass == 1 ? 1 : chunks);
        if (rc)
            return rc;
    }
    return 0;
}

int vki_jpeg_rec_entropy(vki_rec *r, const struct vkimg_coded *cd, VkDeviceAddress blob, VkDeviceAddress status,
                         VkDeviceAddress *coefs)
{
    const uint32_t *hdr = cd->scan;
    if (!cd->entropy || !cd->intervals || r->dry)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "JPEG: no scan to decode");
    const uint32_t sbits = (uint32_t)vki_env_long("VKIMG_JPEG_SYNC_BITS", SYNC_BITS, 8, 1 << 20);
    const int rounds = vki_jpeg_sync_rounds();
    const uint32_t nint = hdr[VKI_JH_NINT], *ivl = cd->intervals;
    /* each interval's first subsequence */
    uint32_t *first = malloc(((size_t)nint + 1) * sizeof *first);
    if (!first)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "out of memory");
    uint64_t nsub = 0;
    for (uint32_t k = 0; k < nint; k++) {
        first[k] = (uint32_t)nsub;
        const uint64_t bits = ivl[2 * k + 1];
        nsub += bits ? (bits + sbits - 1) / sbits : 1;
    }
    first[nint] = (uint32_t)nsub;
    VkDeviceAddress firsts, st[2], counts, prefix, aux;
    const uint32_t wg = vki_wg_1d(r->gpu);
    uint64_t most = nsub + 1; /* elements of the largest prefix sum */
    for (int k = 0; k < cd->ncomp; k++)
        if (hdr[VKI_JH_COMP + 8 * k + VKI_JH_C_N] > most)
            most = hdr[VKI_JH_COMP + 8 * k + VKI_JH_C_N];
    int rc = nsub > UINT32_MAX / 2 ? vki_fail(r->e, VKIMG_E_RUNTIME, "JPEG: too many subsequences (%llu)",
                                              (unsigned long long)nsub)
                                   : vki_rec_const(r, first, ((size_t)nint + 1) * sizeof *first,
                                                   "JPEG restart intervals' subsequences", &firsts);
    free(first);
    /* one scratch buffer: the decoders' states (two rounds'), the blocks begun in each
     * subsequence, their prefix sums, the chunks' sums of the prefix sums */
    const uint64_t part[5] = { nsub * 8, nsub * 8, (nsub + 1) * 4, (nsub + 1) * 4,
                               (most + (uint64_t)wg * SCAN_PER - 1) / ((uint64_t)wg * SCAN_PER) * 8 };
    uint64_t off[5], total = 0;
    for (int i = 0; i < 5; i++) {
        off[i] = total;
        total += (part[i] + 15) / 16 * 16;
    }
    VkDeviceAddress scratch = 0;
    if (rc || (rc = vki_rec_scratch(r, total, "JPEG decoding's state", &scratch)) ||
        (rc = vki_rec_scratch_init(r, cd->ncoef * sizeof(int16_t), NULL, "JPEG coefficients", coefs)))
        return rc;
    st[0] = scratch + off[0];
    st[1] = scratch + off[1];
    counts = scratch + off[2];
    prefix = scratch + off[3];
    aux = scratch + off[4];
    struct {
        vki_addr blob, first, st_in, st_out, counts, status, coefs;
        uint32_t nsub, nint, round;
    } pc = { vki_addr_of(blob), vki_addr_of(firsts), { 0, 0 }, { 0, 0 }, vki_addr_of(counts), vki_addr_of(status),
             vki_addr_of(*coefs), (uint32_t)nsub, nint, 0 };
    const uint64_t groups = (nsub + wg - 1) / wg;
    for (int round = 0; round <= rounds; round++) { /* the rounds, then the coefficients */
        vki_spec spec = spec_1d(wg);
        vki_spec_named(&spec, "PHASE", round == rounds);
        vki_spec_named(&spec, "SBITS", sbits);
        vki_spec_named(&spec, "ROUNDS", (uint32_t)rounds);
        pc.round = (uint32_t)round;
        pc.st_in = vki_addr_of(st[(round + 1) % 2]);
        pc.st_out = vki_addr_of(st[round % 2]);
        if (round == rounds) { /* the last round's states, the blocks' prefix sums */
            scan_pc sc = { .src = vki_addr_of(counts), .dst = vki_addr_of(prefix), .n = (uint32_t)nsub };
            if ((rc = rec_scan(r, 0, wg, aux, &sc)))
                return rc;
            pc.st_in = vki_addr_of(st[(rounds - 1) % 2]);
            pc.counts = vki_addr_of(prefix);
        }
        if ((rc = vki_rec_dispatch_1d(r, "jpeg_huff", VKI_SPV(jpeg_huff), &spec, &pc, sizeof pc, groups)))
            return rc;
    }
    /* each component's DCs from their differences */
    for (int k = 0; k < cd->ncomp; k++) {
        const uint32_t *c = hdr + VKI_JH_COMP + 8 * k;
        scan_pc sc = { .src = vki_addr_of(*coefs), .n = c[VKI_JH_C_N], .h = c[VKI_JH_C_H], .v = c[VKI_JH_C_V],
                       .off = c[VKI_JH_C_OFF], .bw = c[VKI_JH_C_BW], .mcux = hdr[VKI_JH_MCUX], .ri = hdr[VKI_JH_RI] };
        if ((rc = rec_scan(r, 1, wg, aux, &sc)))
            return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- Huffman coding */

#define ENC_BLOCK_BITS 1700 /* at most a block's codes: DC 16 + 11, 63 AC 16 + 10 (1665) */
#define ENC_CHUNK 64        /* jpeg_henc's phases 2 and 3: bytes an invocation */

bool vki_jpeg_huff_encode_fits(const struct vkimg_coded *cd)
{
    uint64_t blocks = 0;
    for (int k = 0; k < cd->ncomp; k++)
        blocks += (uint64_t)cd->comp[k].bw * cd->comp[k].bh;
    return cd->ncomp == 1 || cd->ncomp == 3 ? blocks * ENC_BLOCK_BITS < ((uint64_t)1 << 32) : false;
}

size_t vki_jpeg_huff_out_bytes(const struct vkimg_coded *cd)
{
    /* a quarter of the coefficients' bytes (4 bits a coefficient: a photograph at q90 is
     * 1-4; pinned memory is dear to allocate and to free), at least 64 KiB;
     * VKIMG_JPEG_CODED_MAX: fewer (tests: the segment that does not fit) */
    size_t n = cd->ncoef * sizeof(int16_t) / 4;
    n = n > 65536 ? n : 65536;
    return (size_t)vki_env_long("VKIMG_JPEG_CODED_MAX", (long)n, 1, (long)n) + 16;
}

int vki_jpeg_rec_huff_encode(vki_rec *r, const struct vkimg_coded *cd, VkDeviceAddress coefs, VkDeviceAddress out,
                             VkDeviceAddress status)
{
    uint32_t info[VKI_JE_WORDS];
    memset(info, 0, sizeof info);
    /* the scan: gray as its blocks row by row; colour interleaved, s x s luma blocks a MCU */
    const uint32_t s = cd->ncomp == 1 ? 1 : cd->comp[1].hs;
    uint32_t bpm = 0;
    for (int k = 0; k < cd->ncomp; k++) {
        const uint32_t f = cd->ncomp == 1 ? 1 : s / cd->comp[k].hs; /* its blocks across and down a MCU */
        uint32_t *cw = info + VKI_JE_COMP + 8 * k;
        cw[0] = cw[1] = f;
        cw[2] = cd->comp[k].bw;
        cw[3] = (uint32_t)(cd->comp[k].off / 64);
        cw[4] = (cd->comp[k].cw + 7) / 8; /* width_in_blocks */
        cw[5] = (cd->comp[k].ch + 7) / 8;
        const uint32_t tabs = k == 0 ? (VKI_JPEG_HUFF_DC0 << 12 | VKI_JPEG_HUFF_AC0 << 16)
                                     : (VKI_JPEG_HUFF_DC1 << 12 | VKI_JPEG_HUFF_AC1 << 16);
        for (uint32_t v = 0; v < f; v++)
            for (uint32_t h = 0; h < f; h++)
                info[VKI_JE_SLOT + bpm++] = (uint32_t)k | h << 4 | v << 8 | tabs;
    }
    const uint32_t mcux = cd->comp[0].bw / (cd->ncomp == 1 ? 1 : s), mcuy = cd->comp[0].bh / (cd->ncomp == 1 ? 1 : s);
    const uint64_t blocks = (uint64_t)mcux * mcuy * bpm;
    info[VKI_JE_BPM] = bpm;
    info[VKI_JE_MCUX] = mcux;
    info[VKI_JE_BLOCKS] = (uint32_t)blocks;
    for (int t = 0; t < 4; t++)
        vki_jpeg_huff_codes(t, info + VKI_JE_CODES + 256 * t);
    if (!vki_jpeg_huff_encode_fits(cd) || bpm > 6)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "JPEG: too many blocks to code on the device (%llu)",
                        (unsigned long long)blocks);
    /* the bits and the stuffed bytes in buffers of the host's (the segment fits it or is refused) */
    const uint64_t cap_out = vki_jpeg_huff_out_bytes(cd) - 16;
    const uint64_t cap_bits = blocks * ENC_BLOCK_BITS < cap_out * 8 ? blocks * ENC_BLOCK_BITS : cap_out * 8;
    const uint64_t cap_bytes = cap_bits / 8 + 16;
    const uint64_t chunks = (cap_bytes + ENC_CHUNK - 1) / ENC_CHUNK;
    const uint32_t wg = vki_wg_1d(r->gpu);
    const uint64_t most = (blocks > chunks ? blocks : chunks) + 1;
    /* one scratch buffer: the blocks' bits and their sums, the chunks' 0xFFs and theirs, the sums' chunk sums */
    const uint64_t part[3] = { (blocks + 1) * 4, (chunks + 1) * 4,
                               (most + (uint64_t)wg * SCAN_PER - 1) / ((uint64_t)wg * SCAN_PER) * 8 };
    uint64_t off[3], total = 0;
    for (int i = 0; i < 3; i++) {
        off[i] = total;
        total += (part[i] + 15) / 16 * 16;
    }
    VkDeviceAddress infoa, scratch, bits, stuffed;
    int rc;
    if ((rc = vki_rec_const(r, info, sizeof info, "JPEG scan and codes", &infoa)) ||
        (rc = vki_rec_scratch(r, total, "JPEG coder's sums", &scratch)) ||
        (rc = vki_rec_scratch_init(r, cap_bytes, NULL, "JPEG coded bits", &bits)) ||
        (rc = vki_rec_scratch(r, cap_out + 32, "JPEG entropy-coded data", &stuffed)))
        return rc;
    const VkDeviceAddress lens = scratch + off[0], ffs = scratch + off[1], aux = scratch + off[2];
    struct {
        vki_addr info, coefs, lens, bits, ffs, stuffed, dst, status;
        uint32_t cap_bits, cap_out, chunks;
    } pc = { vki_addr_of(infoa), vki_addr_of(coefs), vki_addr_of(lens), vki_addr_of(bits), vki_addr_of(ffs),
             vki_addr_of(stuffed), vki_addr_of(out), vki_addr_of(status), (uint32_t)cap_bits, (uint32_t)cap_out,
             (uint32_t)chunks };
    const uint64_t groups[5] = { (blocks + wg - 1) / wg, (blocks + wg - 1) / wg, (chunks + wg - 1) / wg,
                                 (chunks + wg - 1) / wg, (pc.cap_out / 16 + 1 + wg - 1) / wg };
    for (int phase = 0; phase < 5; phase++) {
        if (phase == 1 || phase == 3) { /* the prefix sums of the bits a block / of the 0xFFs a chunk */
            scan_pc sc = { .src = vki_addr_of(phase == 1 ? lens : ffs), .dst = vki_addr_of(phase == 1 ? lens : ffs),
                           .n = (uint32_t)(phase == 1 ? blocks : chunks) };
            if ((rc = rec_scan(r, 0, wg, aux, &sc)))
                return rc;
        }
        vki_spec spec = spec_1d(wg);
        vki_spec_named(&spec, "PHASE", (uint32_t)phase);
        vki_spec_named(&spec, "CHUNK", ENC_CHUNK);
        if ((rc = vki_rec_dispatch_1d(r, "jpeg_henc", VKI_SPV(jpeg_henc), &spec, &pc, sizeof pc, groups[phase])))
            return rc;
    }
    return 0;
}
