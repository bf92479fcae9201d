/* A baseline JPEG's scan handed to the device still entropy-coded
 * (vkimg_load_opts.jpeg_entropy): the host reads the headers (libjpeg), turns
 * the Huffman tables into the device's lookup form and copies the entropy-coded
 * bytes as they were coded (FF 00 -> FF, each restart interval from a word
 * boundary) into the caller's memory; shaders/codec/jpeg_huff.comp decodes the
 * codes into coefficients, as libjpeg's jpeg_read_coefficients would. The blob's
 * layout is vki_shared.h's VKI_JH_*.
 *
 * What the device decodes exactly as libjpeg does, and so takes: one sequential
 * Huffman scan of every component (baseline: interleaved, or gray), tables that
 * libjpeg's jpeg_make_d_derived_tbl accepts, the RSTn markers in order and the
 * count its restart interval gives, EOI right after the scan, at most 2^20
 * blocks a component (its DC sums fit 32 bits). Anything else (fill bytes, DNL,
 * a table missing, a second scan) is the host's: -1, and the caller decodes as
 * before. Damage inside the entropy-coded data is found on the device
 * (VKI_JH_ERR_*): the run fails with VKIMG_E_AGAIN and the caller decodes the
 * file on the host, where libjpeg says what is wrong. */
#include "io/io_priv.h"
#include "io/lj.h"
#include "core/coded.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

#define JH_MAX_BLOCKS (1u << 20) /* a component's blocks: |DC| <= 2047 * 2^20 < 2^31 */

/* jpeg_make_d_derived_tbl's table (jdhuff.c) in the device's form (VKI_JH_TABLE
 * words); false where libjpeg would refuse it. */
static bool device_table(const JHUFF_TBL *t, bool dc, uint32_t *out)
{
    uint8_t size[257];
    uint32_t code[257];
    int p = 0;
    for (int l = 1; l <= 16; l++) {
        const int n = t->bits[l];
        if (n < 0 || p + n > 256)
            return false;
        for (int i = 0; i < n; i++)
            size[p++] = (uint8_t)l;
    }
    size[p] = 0;
    const int nsym = p;
    uint32_t c = 0;
    int si = size[0];
    p = 0;
    while (size[p]) {
        while (size[p] == si)
            code[p++] = c++;
        if (c >= 1u << si) /* more codes than the length holds */
            return false;
        c <<= 1;
        si++;
    }
    memset(out, 0, VKI_JH_TABLE * sizeof *out);
    int32_t *maxcode = (int32_t *)(out + VKI_JH_MAXCODE), *valoff = (int32_t *)(out + VKI_JH_VALOFF);
    p = 0;
    for (int l = 0; l <= 16; l++) {
        maxcode[l] = -1;
        if (l && t->bits[l]) {
            valoff[l] = p - (int32_t)code[p];
            p += t->bits[l];
            maxcode[l] = (int32_t)code[p - 1];
        }
    }
    p = 0;
    for (int l = 1; l <= 16; l++)
        for (int i = 0; i < t->bits[l]; i++, p++)
            if (l <= VKI_JH_LOOK_BITS) { /* every 9-bit prefix this code begins */
                const uint32_t first = code[p] << (VKI_JH_LOOK_BITS - l), n = 1u << (VKI_JH_LOOK_BITS - l);
                for (uint32_t k = 0; k < n; k++)
                    out[first + k] = (uint32_t)l << 8 | t->huffval[p];
            }
    for (int i = 0; i < nsym; i++) {
        if (dc && t->huffval[i] > 15) /* libjpeg's check */
            return false;
        out[VKI_JH_HUFFVAL + i / 4] |= (uint32_t)t->huffval[i] << (8 * (i % 4));
    }
    return true;
}

/* The entropy-coded data from b + at into dst (NULL: only counted): FF 00 as
 * FF; each interval from a word boundary, 1-bits after it to its word's end and
 * a word of them more; ivl[2k], ivl[2k + 1]: interval k's first word and its
 * bits. True where it is laid out as expected: nint intervals split by RST0..7
 * in turn, EOI after the last, nothing else. *words: the words written. */
static bool unstuff(const unsigned char *b, size_t len, size_t at, uint32_t nint, unsigned char *dst, uint32_t *ivl,
                    size_t *words)
{
    size_t o = 0, start = 0;
    uint32_t k = 0;
    for (;;) {
        const unsigned char *ff = memchr(b + at, 0xff, len - at);
        const size_t run = ff ? (size_t)(ff - (b + at)) : len - at;
        if (!ff || at + run + 1 >= len)
            return false; /* no EOI */
        if (dst)
            memcpy(dst + o, b + at, run);
        o += run;
        at += run;
        const unsigned m = b[at + 1];
        at += 2;
        if (m == 0) {
            if (dst)
                dst[o] = 0xff;
            o++;
            continue;
        }
        /* a marker: the end of interval k */
        if ((o - start) * 8 > UINT32_MAX)
            return false;
        if (dst) {
            ivl[2 * k] = (uint32_t)(start / 4);
            ivl[2 * k + 1] = (uint32_t)((o - start) * 8);
            memset(dst + o, 0xff, (4 - o % 4) % 4 + 4);
        }
        o += (4 - o % 4) % 4 + 4;
        start = o;
        k++;
        if (m == 0xd9) {
            *words = o / 4;
            return k == nint;
        }
        if (m < 0xd0 || m > 0xd7 || m - 0xd0 != ((k - 1) & 7) || k >= nint)
            return false; /* fill bytes, a marker out of turn, another marker */
    }
}

int vki_jpeg_entropy_pack(struct jpeg_decompress_struct *d, const unsigned char *b, size_t len,
                          struct vkimg_coded *cd, const vkimg_load_opts *o, const char *name, vkimg_image *out,
                          vkimg_err *e)
{
    if (d->progressive_mode || d->arith_code || d->data_precision != 8 || d->comps_in_scan != d->num_components ||
        d->Ss != 0 || d->Se != 63 || d->Ah != 0 || d->Al != 0 || d->unread_marker || !d->src ||
        d->src->next_input_byte < b || d->src->next_input_byte > b + len)
        return -1;
    uint32_t hdr[VKI_JH_HEADER] = { 0 };
    const bool inter = d->comps_in_scan > 1;
    uint32_t mcux, mcuy, bpm = 0;
    if (inter) {
        mcux = (uint32_t)((d->image_width + 8u * (unsigned)d->max_h_samp_factor - 1) / (8u * (unsigned)d->max_h_samp_factor));
        mcuy = (uint32_t)((d->image_height + 8u * (unsigned)d->max_v_samp_factor - 1) / (8u * (unsigned)d->max_v_samp_factor));
    } else {
        mcux = (uint32_t)d->cur_comp_info[0]->width_in_blocks;
        mcuy = (uint32_t)d->cur_comp_info[0]->height_in_blocks;
    }
    uint32_t tables[8] = { 0 }; /* the tables the scan uses (bits) */
    for (int i = 0; i < d->comps_in_scan; i++) {
        const jpeg_component_info *ci = d->cur_comp_info[i];
        const int k = ci->component_index;
        if (k < 0 || k >= cd->ncomp || ci->dc_tbl_no < 0 || ci->dc_tbl_no > 3 || ci->ac_tbl_no < 0 ||
            ci->ac_tbl_no > 3 || !d->dc_huff_tbl_ptrs[ci->dc_tbl_no] || !d->ac_huff_tbl_ptrs[ci->ac_tbl_no])
            return -1; /* a table libjpeg would default (Motion JPEG) or refuse */
        const vki_jpeg_comp *c = &cd->comp[k];
        const uint32_t H = inter ? (uint32_t)ci->h_samp_factor : 1, V = inter ? (uint32_t)ci->v_samp_factor : 1;
        const uint64_t n = (uint64_t)mcux * mcuy * H * V;
        /* the blocks of the scan are the coefficient arrays' (jdcoefct.c), whole MCUs */
        if (n > JH_MAX_BLOCKS || (inter ? mcux * H != c->bw || mcuy * V != c->bh : mcux > c->bw || mcuy > c->bh))
            return -1;
        uint32_t *cw = hdr + VKI_JH_COMP + 8 * k;
        cw[VKI_JH_C_H] = H;
        cw[VKI_JH_C_V] = V;
        cw[VKI_JH_C_BW] = c->bw;
        cw[VKI_JH_C_OFF] = (uint32_t)(c->off / 64);
        cw[VKI_JH_C_N] = (uint32_t)n;
        for (uint32_t v = 0; v < V; v++)
            for (uint32_t h = 0; h < H; h++) {
                if (bpm == VKI_JH_MAX_BPM)
                    return -1;
                hdr[VKI_JH_SLOT + bpm++] = (uint32_t)k | h << 4 | v << 8 | (uint32_t)ci->dc_tbl_no << 12 |
                                           (uint32_t)(4 + ci->ac_tbl_no) << 16;
            }
        tables[ci->dc_tbl_no] = 1;
        tables[4 + ci->ac_tbl_no] = 1;
    }
    const uint64_t mcus = (uint64_t)mcux * mcuy;
    const uint32_t ri = d->restart_interval ? d->restart_interval : (uint32_t)mcus;
    const uint64_t nint = (mcus + ri - 1) / ri;
    if (!mcus || mcus * bpm > UINT32_MAX || nint > UINT32_MAX / 4)
        return -1;
    const size_t at = (size_t)(d->src->next_input_byte - b);
    const size_t data_off = VKI_JH_HEADER + 8 * (size_t)VKI_JH_TABLE + 2 * (size_t)nint;
    size_t words = 0;
    if (!unstuff(b, len, at, (uint32_t)nint, NULL, NULL, &words) || data_off + words > UINT32_MAX)
        return -1;
    uint32_t tabs[8][VKI_JH_TABLE];
    for (int t = 0; t < 8; t++)
        if (tables[t] &&
            !device_table(t < 4 ? d->dc_huff_tbl_ptrs[t] : d->ac_huff_tbl_ptrs[t - 4], t < 4, tabs[t]))
            return -1;
    hdr[VKI_JH_NINT] = (uint32_t)nint;
    hdr[VKI_JH_BPM] = bpm;
    hdr[VKI_JH_MCUX] = mcux;
    hdr[VKI_JH_RI] = ri;
    hdr[VKI_JH_BLOCKS] = (uint32_t)(mcus * bpm);
    hdr[VKI_JH_NCOMP] = (uint32_t)cd->ncomp;
    hdr[VKI_JH_IVL] = VKI_JH_HEADER + 8 * VKI_JH_TABLE;
    hdr[VKI_JH_DATA] = (uint32_t)data_off;
    vkimg_image im;
    int rc = vki_decoded_alloc_opts(o, &im, 4, (uint32_t)(data_off + words), 1, VKIMG_U8, name, e);
    if (rc)
        return rc;
    uint32_t *w = im.data;
    memcpy(w, hdr, sizeof hdr);
    for (int t = 0; t < 8; t++) {
        uint32_t *dst = w + VKI_JH_TABLES + (size_t)t * VKI_JH_TABLE;
        if (tables[t])
            memcpy(dst, tabs[t], sizeof tabs[t]);
        else
            memset(dst, 0, sizeof tabs[t]);
    }
    unstuff(b, len, at, (uint32_t)nint, (unsigned char *)(w + data_off), w + hdr[VKI_JH_IVL], &words);
    if (!(cd->intervals = malloc((size_t)nint * 2 * sizeof *cd->intervals))) {
        vkimg_image_free(&im);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory", name);
    }
    memcpy(cd->intervals, w + hdr[VKI_JH_IVL], (size_t)nint * 2 * sizeof *cd->intervals);
    memcpy(cd->scan, hdr, sizeof cd->scan);
    cd->entropy = true;
    cd->entropy_bytes = (data_off + words) * 4;
    *out = im;
    return 0;
}
