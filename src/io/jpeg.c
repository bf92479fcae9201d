/* JPEG decode and encode through libjpeg-turbo's TurboJPEG API (linked statically
 * where the static library is installed). TurboJPEG is the JPEG decoder, but for
 * files whose sampling factors it has no TJSAMP for (4:1:0, chroma components
 * subsampled unlike each other: its header call fails), which libjpeg's own API
 * decodes with the same settings (lj_decode), and files it stops on with a
 * warning, which lj_decode decodes where the warning is only bytes skipped before
 * the first scan (lj.h); any other file it refuses is an error.
 *
 * Thread-safety: every call makes and destroys its own TurboJPEG handle, and the
 * error text is read from that handle (tjGetErrorStr2), so calls on several threads
 * share nothing. (A handle costs a few microseconds and about 10 KB, nothing next to
 * a decode.)
 *
 * Decode policy:
 *  - grayscale JPEGs give 1 channel (TJPF_GRAY), everything else 3 (TJPF_RGB), as
 *    stb_image does;
 *  - CMYK and YCCK JPEGs are decoded to CMYK by TurboJPEG (libjpeg turns YCCK into
 *    CMYK) and converted to RGB here, taking the samples as Adobe writes them:
 *    inverted, 255 = no ink (Photoshop, and so every CMYK JPEG in practice; stb_image
 *    and the browsers read them so). With C, M, Y, K the decoded samples:
 *        R = C*K/255, G = M*K/255, B = Y*K/255, rounded to nearest
 *    computed exactly as stb_image does (t = x*k + 128, (t + (t >> 8)) >> 8);
 *  - TJFLAG_STOPONWARNING: a JPEG that libjpeg only warns about (corrupt or truncated
 *    data, which it would patch up silently) is an error; but for junk between
 *    marker segments before the first scan (a metadata writer's wrong segment
 *    length: "N extraneous bytes before marker 0xe1"), which holds no image data:
 *    such a file decodes to the pixels of the file without the junk;
 *  - TJFLAG_LIMITSCANS: progressive JPEGs with an absurd number of scans (a known
 *    CPU-exhaustion pattern) are errors;
 *  - the header is read and checked against max_pixels before any pixel memory;
 *  - shrink-on-load (vkimg_load_opts.min_size): decoded at 1/8, 1/4 or 1/2 by the
 *    DCT scaling of libjpeg (the largest that keeps the caller's minimum size;
 *    sides rounded up as TJSCALED does), as libvips and sharp do for thumbnails;
 *    at 1/8 a full-resolution component's pixel is its block's DC coefficient
 *    alone, so a progressive file is decoded without those components' AC scans
 *    (vki_jpeg_dc_scans: the same pixels; damage inside the scans left out then
 *    goes unseen, the file's markers are still all checked up to EOI);
 *  - the accurate integer IDCT and smooth ("fancy") chroma upsampling: TurboJPEG's
 *    defaults, close to stb_image's output (not identical: each has its own IDCT).
 * Encode policy: quality as given; grayscale input (1 or 2 channels) is written as a
 * grayscale JPEG; colour with 4:2:0 chroma subsampling below quality 90 and 4:4:4
 * from quality 90 (the usual convention, e.g. ImageMagick's; stb_image_write
 * subsampled up to and including 90); TurboJPEG's forward DCT (the fast integer
 * one below quality 96, the accurate one from 96); baseline Huffman tables (no
 * optimization pass). Alpha is dropped.
 * Coded (vkimg_image.coded, core/coded.h): a JPEG decoded only as far as its
 * coefficients (jpeg_read_coefficients), and one encoded from its coefficients
 * (jpeg_write_coefficients), the transform stages between being the device's
 * (src/exec/jpeg.c); the same pixels and files as the TurboJPEG calls above. */
#include "io/io_priv.h"
#include "io/lj.h"
#include "io/meta.h"
#include "core/coded.h"
#include "core/util.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdio.h> /* jpeglib.h needs FILE */

#include <jpeglib.h>
#include <turbojpeg.h>


/* TurboJPEG's message for handle h (never NULL or empty). */
static const char *tj_reason(tjhandle h)
{
    const char *r = tjGetErrorStr2(h);
    return r && *r ? r : "unknown error";
}

/* x*k/255 rounded to nearest, exactly as stb_image's stbi__blinn_8x8 */
static inline unsigned char mul255(unsigned x, unsigned k)
{
    unsigned t = x * k + 128;
    return (unsigned char)((t + (t >> 8)) >> 8);
}

/* Shrink-on-load: the largest of the reductions 1/8, 1/4, 1/2 that keeps the
 * decoded size at least the caller's minimum (o->min_size), else 1. */
static int pick_scale(const unsigned char *b, size_t len, int w, int h, const vkimg_load_opts *o)
{
    if (!o || !o->min_size)
        return 1;
    vki_meta m;
    vkimg_err me;
    int orientation = 1;
    if (!vki_meta_read_jpeg(b, len, &m, &me)) { /* metadata it cannot read: as stored */
        orientation = m.orientation;
        vki_meta_free(&m);
    }
    return vki_shrink_denom(o, w, h, orientation);
}

/* A decode by libjpeg's own API at 1/denom into out (w x h, jcs's samples a
 * pixel: JCS_GRAYSCALE, JCS_RGB or JCS_CMYK), with TurboJPEG's settings (the
 * accurate integer IDCT, smooth upsampling) and its TJFLAG_STOPONWARNING and
 * TJFLAG_LIMITSCANS. Two callers:
 *  - the DC-only decode at 1/8 (smooth false: no block smoothing; libjpeg
 *    estimates a progressive file's missing AC coefficients, and since
 *    libjpeg-turbo 2.1 adjusts DC, from the neighbours' DCs while scans are
 *    missing, which a whole file never has);
 *  - files TurboJPEG's header call refuses although libjpeg decodes them
 *    (smooth true, libjpeg's default, as TurboJPEG leaves it): sampling factors
 *    it has no TJSAMP for, e.g. 4:1:0 (4x2) or chroma subsampled unlike each
 *    other ("Could not determine subsampling type"); vips and ImageMagick,
 *    through libjpeg, open them. */
static int lj_decode(const unsigned char *b, size_t len, const char *name, int denom, J_COLOR_SPACE jcs, bool smooth,
                     unsigned char *out, int w, int h, vkimg_err *e)
{
    struct jpeg_decompress_struct d;
    struct jpeg_progress_mgr prog = { .progress_monitor = vki_lj_limit_scans };
    vki_lj_err de;
    memset(&d, 0, sizeof d);
    d.err = vki_lj_errors(&de, true);
    if (setjmp(de.jump)) {
        jpeg_destroy_decompress(&d);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: libjpeg: %s", name, de.msg[0] ? de.msg : "error");
    }
    jpeg_create_decompress(&d);
    d.progress = &prog;
    jpeg_mem_src(&d, b, (unsigned long)len);
    jpeg_read_header(&d, TRUE);
    d.scale_num = 1;
    d.scale_denom = (unsigned)denom;
    d.out_color_space = jcs;
    d.dct_method = JDCT_ISLOW;
    d.do_fancy_upsampling = TRUE;
    if (!smooth)
        d.do_block_smoothing = FALSE;
    const int nc = jcs == JCS_GRAYSCALE ? 1 : jcs == JCS_CMYK ? 4 : 3;
    jpeg_start_decompress(&d);
    if ((int)d.output_width != w || (int)d.output_height != h || d.output_components != nc) {
        jpeg_destroy_decompress(&d);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: 1/%d decode gave %ux%u, not %dx%d", name, denom, d.output_width,
                        d.output_height, w, h);
    }
    const size_t pitch = (size_t)w * (size_t)nc;
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = out + (size_t)d.output_scanline * pitch;
        jpeg_read_scanlines(&d, &row, 1);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    return 0;
}

/* The size and TurboJPEG colour space (TJCS_*) of a file, read by libjpeg (for
 * lj_decode's second case): 0, or -1 where libjpeg cannot read its header. */
static int lj_header(const unsigned char *b, size_t len, int *w, int *h, int *cs)
{
    struct jpeg_decompress_struct d;
    vki_lj_err de;
    memset(&d, 0, sizeof d);
    d.err = vki_lj_errors(&de, true);
    if (setjmp(de.jump)) {
        jpeg_destroy_decompress(&d);
        return -1;
    }
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, b, (unsigned long)len);
    jpeg_read_header(&d, TRUE);
    *w = (int)d.image_width;
    *h = (int)d.image_height;
    switch (d.jpeg_color_space) {
    case JCS_GRAYSCALE: *cs = TJCS_GRAY; break;
    case JCS_CMYK: *cs = TJCS_CMYK; break;
    case JCS_YCCK: *cs = TJCS_YCCK; break;
    case JCS_RGB: *cs = TJCS_RGB; break;
    default: *cs = TJCS_YCbCr; break;
    }
    jpeg_destroy_decompress(&d);
    return 0;
}

size_t vki_jpeg_dc_scans(const unsigned char *b, size_t len, unsigned char *out)
{
    if (len < 4 || b[0] != 0xff || b[1] != 0xd8)
        return 0;
    size_t i = 2, n = 0;
    bool progressive = false;
    int ncomp = 0, ids[4], full[4]; /* the frame's components, and which are at full resolution */
    out[n++] = 0xff;
    out[n++] = 0xd8;
    for (;;) {
        if (i + 2 > len || b[i] != 0xff)
            return 0;
        while (i + 1 < len && b[i + 1] == 0xff) /* fill bytes */
            i++;
        if (i + 2 > len)
            return 0;
        const unsigned m = b[i + 1];
        if (m == 0xd9) { /* EOI: the whole file was walked */
            out[n++] = 0xff;
            out[n++] = 0xd9;
            return progressive ? n : 0;
        }
        if (m == 0x00 || m == 0x01 || (m >= 0xd0 && m <= 0xd8) || i + 4 > len)
            return 0;
        const size_t seg = 2 + ((size_t)b[i + 2] << 8 | b[i + 3]);
        if (seg < 4 || i + seg > len)
            return 0;
        if (m == 0xc2) { /* SOF2: the components and their sampling factors */
            if (progressive || seg < 8 + 3 * (size_t)b[i + 9] || b[i + 9] < 1 || b[i + 9] > 4)
                return 0;
            progressive = true;
            ncomp = b[i + 9];
            int hmax = 0, vmax = 0;
            for (int k = 0; k < ncomp; k++) {
                unsigned hv = b[i + 11 + 3 * k];
                hmax = (int)(hv >> 4) > hmax ? (int)(hv >> 4) : hmax;
                vmax = (int)(hv & 15) > vmax ? (int)(hv & 15) : vmax;
            }
            for (int k = 0; k < ncomp; k++) {
                unsigned hv = b[i + 11 + 3 * k];
                ids[k] = b[i + 10 + 3 * k];
                full[k] = (int)(hv >> 4) == hmax && (int)(hv & 15) == vmax;
            }
        } else if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
            return 0; /* another kind of frame: not ours to rewrite */
        }
        size_t end = i + seg;
        bool keep = true;
        if (m == 0xda) { /* a scan: its entropy-coded data runs to the next marker but RSTn */
            const unsigned ns = b[i + 4];
            const size_t ss_at = i + 5 + 2 * (size_t)ns; /* Ss, after the component selectors */
            if (!progressive || ns < 1 || ss_at >= end)
                return 0;
            /* an AC scan (Ss > 0, one component) of a full-resolution component goes:
             * at 1/8 such a component is its blocks' DC (a 1x1 IDCT); libjpeg scales a
             * subsampled one by a larger IDCT (2x2 for 4:2:0), which reads AC terms */
            if (b[ss_at] > 0) {
                int k = 0;
                while (k < ncomp && ids[k] != b[i + 5])
                    k++;
                if (ns != 1 || k == ncomp)
                    return 0;
                keep = !full[k];
            }
            while (end + 1 < len && !(b[end] == 0xff && b[end + 1] != 0 && !(b[end + 1] >= 0xd0 && b[end + 1] <= 0xd7)))
                end++;
            if (end + 1 >= len)
                return 0;
        }
        if (keep) {
            memcpy(out + n, b + i, end - i);
            n += end - i;
        }
        i = end;
    }
}

/* The factor (1 or 2) by which component k's samples are upsampled along an
 * axis (max/f), or 0 where the device stages do not handle it. */
static uint32_t coded_factor(int max, int f)
{
    return f > 0 && max % f == 0 && (max / f == 1 || max / f == 2) ? (uint32_t)(max / f) : 0;
}

/* Coefficients straight in the caller's memory: libjpeg keeps a JPEG's
 * coefficients in "virtual block arrays" it allocates itself (jmemmgr.c), a
 * block row at a time through row pointers. barray_adopt points a realized
 * array's rows at `base` (rows of bw blocks), so that its entropy decoder
 * writes, or its entropy coder reads, the caller's memory with no copy. The
 * array's control struct is private to jmemmgr.c; its first member has been the
 * row-pointer table since IJG libjpeg 6b, and that is checked first (the table
 * access_virt_barray returns for row 0 must be it): where the check fails,
 * nothing is changed and the caller copies instead. Row 0 is made defined by
 * the check (zeroed in libjpeg's memory, where the array is pre-zeroed: the
 * caller zeroes its own row 0); libjpeg zeroes the later rows, now the
 * caller's, as it reaches them. */
static bool barray_adopt(j_common_ptr c, jvirt_barray_ptr a, JDIMENSION rows, JDIMENSION bw, JBLOCK *base)
{
    JBLOCKARRAY table = *(JBLOCKARRAY *)a; /* jvirt_barray_control.mem_buffer */
    JBLOCKARRAY r0 = c->mem->access_virt_barray(c, a, 0, 1, TRUE);
    if (!table || r0 != table)
        return false;
    for (JDIMENSION r = 0; r < rows; r++)
        table[r] = base + (size_t)r * bw;
    return true;
}

/* jpeg_read_coefficients with the arrays in the caller's memory: hooks on the
 * decompressor's memory manager see the arrays requested (one a component, in
 * order) and adopt them once realized, before any scan is decoded */
typedef struct coded_hooks {
    jvirt_barray_ptr (*request)(j_common_ptr, int, boolean, JDIMENSION, JDIMENSION, JDIMENSION);
    void (*realize)(j_common_ptr);
    jvirt_barray_ptr arrays[VKI_JPEG_MAX_COMP];
    int narrays;
    struct vkimg_coded *cd;
    vkimg_image im; /* the caller's memory for the coefficients */
    bool adopted;
} coded_hooks;

static jvirt_barray_ptr hook_request(j_common_ptr c, int pool, boolean pre_zero, JDIMENSION bw, JDIMENSION rows,
                                     JDIMENSION maxaccess)
{
    coded_hooks *hk = c->client_data;
    jvirt_barray_ptr a = hk->request(c, pool, pre_zero, bw, rows, maxaccess);
    if (hk->narrays < VKI_JPEG_MAX_COMP)
        hk->arrays[hk->narrays] = a;
    hk->narrays++;
    return a;
}

static void hook_realize(j_common_ptr c)
{
    coded_hooks *hk = c->client_data;
    hk->realize(c);
    const struct vkimg_coded *cd = hk->cd;
    if (hk->narrays != cd->ncomp)
        return;
    JBLOCK *base = hk->im.data;
    for (int k = 0; k < cd->ncomp; k++)
        if (!barray_adopt(c, hk->arrays[k], cd->comp[k].bh, cd->comp[k].bw, base + cd->comp[k].off / DCTSIZE2))
            return; /* (the components before it stay adopted; coded_decode copies the others) */
    for (int k = 0; k < cd->ncomp; k++) /* row 0: defined by the check, in libjpeg's memory */
        memset(base + cd->comp[k].off / DCTSIZE2, 0, cd->comp[k].bw * sizeof(JBLOCK));
    hk->adopted = true;
}

/* The coded decode (vkimg_load_opts.jpeg_coded): libjpeg-turbo's entropy
 * decoding only (jpeg_read_coefficients), into the caller's memory, with the
 * layout (core/coded.h): each component's blocks as libjpeg keeps them, rows
 * rounded up to whole MCUs. Returns -1 without touching *out for a file the
 * device stages do not handle (another colour space or precision, 4:4:0 or
 * 4:1:1 sampling, more than 3 components). */
static int coded_decode(const unsigned char *b, size_t len, const char *name, const vkimg_load_opts *o,
                        vkimg_image *out, vkimg_err *e)
{
    struct jpeg_decompress_struct d;
    struct jpeg_progress_mgr prog = { .progress_monitor = vki_lj_limit_scans };
    vki_lj_err de;
    coded_hooks hk;
    memset(&hk, 0, sizeof hk);
    memset(&d, 0, sizeof d);
    d.err = vki_lj_errors(&de, true);
    if (setjmp(de.jump)) {
        jpeg_destroy_decompress(&d);
        vkimg_image_free(&hk.im);
        free(hk.cd);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: libjpeg: %s", name, de.msg[0] ? de.msg : "error");
    }
    jpeg_create_decompress(&d);
    d.progress = &prog;
    jpeg_mem_src(&d, b, (unsigned long)len);
    jpeg_read_header(&d, TRUE);
    const int nc = d.num_components;
    bool ok = d.data_precision == 8 && ((nc == 1 && d.jpeg_color_space == JCS_GRAYSCALE) ||
                                        (nc == 3 && d.jpeg_color_space == JCS_YCbCr));
    for (int k = 0; ok && k < nc; k++) {
        const jpeg_component_info *ci = &d.comp_info[k];
        const uint32_t hs = coded_factor(d.max_h_samp_factor, ci->h_samp_factor);
        const uint32_t vs = coded_factor(d.max_v_samp_factor, ci->v_samp_factor);
        /* full size, h2v1 (4:2:2) or h2v2 (4:2:0); the first component full size */
        ok = hs && vs && !(hs == 1 && vs == 2) && (k > 0 || (hs == 1 && vs == 1));
    }
    if (!ok) {
        jpeg_destroy_decompress(&d);
        return -1;
    }
    /* the layout: libjpeg's arrays (jdcoefct.c: blocks rounded up to the sampling factors) */
    if (!(hk.cd = calloc(1, sizeof *hk.cd))) {
        jpeg_destroy_decompress(&d);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory", name);
    }
    struct vkimg_coded *cd = hk.cd;
    cd->ncomp = nc;
    size_t blocks = 0;
    for (int k = 0; k < nc; k++) {
        const jpeg_component_info *ci = &d.comp_info[k];
        vki_jpeg_comp *c = &cd->comp[k];
        c->bw = (ci->width_in_blocks + (JDIMENSION)ci->h_samp_factor - 1) / (JDIMENSION)ci->h_samp_factor * (JDIMENSION)ci->h_samp_factor;
        c->bh = (ci->height_in_blocks + (JDIMENSION)ci->v_samp_factor - 1) / (JDIMENSION)ci->v_samp_factor * (JDIMENSION)ci->v_samp_factor;
        c->cw = ci->downsampled_width;
        c->ch = ci->downsampled_height;
        c->hs = coded_factor(d.max_h_samp_factor, ci->h_samp_factor);
        c->vs = coded_factor(d.max_v_samp_factor, ci->v_samp_factor);
        c->off = blocks * DCTSIZE2;
        blocks += (size_t)c->bw * c->bh;
    }
    cd->ncoef = blocks * DCTSIZE2;
    /* the scan itself to the device, where it takes it (with the quantization tables
     * jpeg_read_coefficients would latch) */
    bool tables = true;
    for (int k = 0; k < nc; k++) {
        const int t = d.comp_info[k].quant_tbl_no;
        const JQUANT_TBL *q = t >= 0 && t < NUM_QUANT_TBLS ? d.quant_tbl_ptrs[t] : NULL;
        tables = tables && q;
        for (int i = 0; q && i < DCTSIZE2; i++)
            cd->comp[k].quant[i] = q->quantval[i];
    }
    int rc = o->jpeg_entropy && tables ? vki_jpeg_entropy_pack(&d, b, len, cd, o, name, &hk.im, e) : -1;
    if (rc >= 0) {
        if (!rc) {
            hk.im.w = (int)d.image_width;
            hk.im.h = (int)d.image_height;
            hk.im.c = nc == 1 ? 1 : 3;
            hk.im.fmt = VKIMG_U8;
            hk.im.coded = cd;
            *out = hk.im;
        } else {
            vki_coded_free(cd);
        }
        jpeg_destroy_decompress(&d);
        return rc;
    }
    /* the caller's memory, asked for as 64 16-bit samples a block */
    rc = blocks > UINT32_MAX ? vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: too many blocks (%zu)", name, blocks)
                                 : vki_decoded_alloc_opts(o, &hk.im, DCTSIZE2, (uint32_t)blocks, 1, VKIMG_U16, name, e);
    if (rc) {
        jpeg_destroy_decompress(&d);
        free(hk.cd);
        return rc;
    }
    d.client_data = &hk;
    hk.request = d.mem->request_virt_barray;
    hk.realize = d.mem->realize_virt_arrays;
    d.mem->request_virt_barray = hook_request;
    d.mem->realize_virt_arrays = hook_realize;
    jvirt_barray_ptr *arrays = jpeg_read_coefficients(&d);
    _Static_assert(sizeof(JCOEF) == sizeof(int16_t), "JCOEF is not 16-bit");
    for (int k = 0; k < nc; k++) {
        const jpeg_component_info *ci = &d.comp_info[k];
        vki_jpeg_comp *c = &cd->comp[k];
        if (!ci->quant_table) /* a component no scan carried: libjpeg has refused it already */
            longjmp(de.jump, 1);
        for (int i = 0; i < DCTSIZE2; i++)
            c->quant[i] = ci->quant_table->quantval[i];
        if (hk.adopted)
            continue;
        int16_t *dst = hk.im.data; /* not adopted: copied */
        for (uint32_t r = 0; r < c->bh; r++) {
            JBLOCKARRAY row = d.mem->access_virt_barray((j_common_ptr)&d, arrays[k], r, 1, FALSE);
            int16_t *to = dst + c->off + (size_t)r * c->bw * DCTSIZE2;
            if ((void *)row[0] != (void *)to) /* (a component adopted before the check failed on another) */
                memcpy(to, row[0], (size_t)c->bw * sizeof(JBLOCK));
        }
    }
    jpeg_finish_decompress(&d);
    hk.im.w = (int)d.image_width;
    hk.im.h = (int)d.image_height;
    hk.im.c = nc == 1 ? 1 : 3;
    hk.im.fmt = VKIMG_U8;
    hk.im.coded = cd;
    jpeg_destroy_decompress(&d);
    *out = hk.im;
    return 0;
}

int vki_jpeg_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                    vkimg_err *e)
{
    return vki_jpeg_decode_opts(b, len, name, max_pixels, NULL, out, e);
}

int vki_jpeg_decode_opts(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels,
                         const vkimg_load_opts *o, vkimg_image *out, vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out || len < 2 || b[0] != 0xff || b[1] != 0xd8)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: not a JPEG (no SOI marker)", name);
    if (len > ULONG_MAX)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: file too large", name);
    tjhandle h = tjInitDecompress();
    if (!h)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: TurboJPEG: %s", name, tj_reason(NULL));

    int rc, w = 0, ht = 0, subsamp = 0, cs = 0;
    unsigned char *data = NULL;  /* the CMYK decode */
    unsigned char *dcbuf = NULL; /* a progressive file's DC scans (1/8) */
    vkimg_image im = { 0 };
    bool tj = true; /* TurboJPEG decodes it, else libjpeg (lj_decode) */
    if (tjDecompressHeader3(h, b, (unsigned long)len, &w, &ht, &subsamp, &cs)) {
        if (lj_header(b, len, &w, &ht, &cs)) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: TurboJPEG: %s", name, tj_reason(h));
            goto done;
        }
        tj = false;
        subsamp = -1;
    }
    if (w <= 0 || ht <= 0) { /* libjpeg met the end of the data before a frame header */
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: no frame header (%dx%d)", name, w, ht);
        goto done;
    }
    if ((rc = vki_check_dims(name, (uint64_t)w, (uint64_t)ht, max_pixels, e)))
        goto done;
    const int d = pick_scale(b, len, w, ht, o); /* TurboJPEG's scaled sizes: TJSCALED, rounded up */
    w = (w + d - 1) / d;
    ht = (ht + d - 1) / d;
    const int cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK;
    const int gray = !cmyk && (cs == TJCS_GRAY || subsamp == TJSAMP_GRAY);
    const int c = gray ? 1 : 3, dc = cmyk ? 4 : c; /* channels of the result, of the decode */
    const size_t pitch = (size_t)w * (size_t)dc, bytes = pitch * (size_t)ht; /* <= 2^24 * 4 * 2^24 */
    if (pitch > INT_MAX) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: rows too long for TurboJPEG (%dx%d)", name, w, ht);
        goto done;
    }
    /* coded: the entropy decoding here, the rest on the device (vkimg_run) */
    if (o && o->jpeg_coded && d == 1 && !cmyk && (rc = coded_decode(b, len, name, o, out, e)) >= 0)
        goto done;
    /* the result: where the caller wants it (o->alloc); CMYK is decoded beside it first */
    if ((rc = vki_decoded_alloc_opts(o, &im, (uint32_t)w, (uint32_t)ht, c, VKIMG_U8, name, e)))
        goto done;
    if (cmyk && !(data = vki_malloc_big(bytes))) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, bytes);
        goto done;
    }
    /* at 1/8 the decode keeps only each block's DC coefficient: of a progressive
     * file only its DC scans are decoded (the same pixels, a fraction of the work) */
    size_t dclen;
    if (d == 8 && !cmyk && (dcbuf = malloc(len + 4)) && (dclen = vki_jpeg_dc_scans(b, len, dcbuf)) > 0) {
        if ((rc = lj_decode(dcbuf, dclen, name, 8, gray ? JCS_GRAYSCALE : JCS_RGB, false, im.data, w, ht, e)))
            goto done;
    } else if (!tj) {
        if ((rc = lj_decode(b, len, name, d, cmyk ? JCS_CMYK : gray ? JCS_GRAYSCALE : JCS_RGB, true,
                            cmyk ? data : im.data, w, ht, e)))
            goto done;
    } else if (tjDecompress2(h, b, (unsigned long)len, cmyk ? data : im.data, w, (int)pitch, ht,
                             cmyk ? TJPF_CMYK : gray ? TJPF_GRAY : TJPF_RGB, TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS)) {
        /* a warning: libjpeg's own API decides (lj.h), which lets bytes skipped
         * before the first scan pass (TurboJPEG stops on every warning); where
         * it refuses the file too, TurboJPEG's message is the error */
        if (tjGetErrorCode(h) != TJERR_WARNING ||
            lj_decode(b, len, name, d, cmyk ? JCS_CMYK : gray ? JCS_GRAYSCALE : JCS_RGB, true, cmyk ? data : im.data,
                      w, ht, NULL)) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: JPEG: TurboJPEG: %s", name, tj_reason(h));
            goto done;
        }
    }
    if (cmyk) { /* Adobe (inverted) CMYK to RGB, see the top of this file */
        const size_t np = (size_t)w * (size_t)ht;
        unsigned char *rgb = im.data;
        for (size_t i = 0; i < np; i++) {
            const unsigned char *s = data + 4 * i;
            unsigned k = s[3];
            rgb[3 * i] = mul255(s[0], k);
            rgb[3 * i + 1] = mul255(s[1], k);
            rgb[3 * i + 2] = mul255(s[2], k);
        }
    }
    *out = im;
    memset(&im, 0, sizeof im);
    rc = 0;

done:
    free(data);
    free(dcbuf);
    vkimg_image_free(&im);
    tjDestroy(h);
    return rc;
}

/* ---------------------------------------------------------------- bands */

/* Large images are encoded in bands of MCU rows, each by TurboJPEG as a JPEG
 * of its own, on several threads, and joined into one file: band k's
 * entropy-coded data is restart interval k (a DRI segment says how many MCUs a
 * band has; an RSTn marker between bands resets the DC predictions and byte-
 * aligns, as a decoder expects). The coefficients are those of the whole image
 * encoded at once (the bands are whole MCU rows; the chroma of a 4:2:0 MCU lies
 * inside it), so the file decodes to the same pixels. The bands depend on the
 * image alone: the same file for any thread count. */
size_t vki_jpeg_band_min = (size_t)4 << 20;
#define JPEG_BANDS_MAX 16

typedef struct {
    const unsigned char *src;
    int w, h, pitch, pf, subsamp, quality;
    int band_rows, nbands; /* pixel rows a band (a multiple of the MCU's) */
    atomic_int next, failed;
    unsigned char **jb;
    unsigned long *jn;
} jpeg_bands;

static void *jpeg_band_worker(void *arg)
{
    jpeg_bands *jb = arg;
    tjhandle h = tjInitCompress();
    if (!h)
        atomic_store(&jb->failed, 1);
    for (int k; !atomic_load(&jb->failed) && (k = atomic_fetch_add(&jb->next, 1)) < jb->nbands;) {
        const int y0 = k * jb->band_rows, rows = jb->h - y0 < jb->band_rows ? jb->h - y0 : jb->band_rows;
        unsigned long cap = tjBufSize(jb->w, rows, jb->subsamp), n = cap;
        unsigned char *buf = cap == (unsigned long)-1 ? NULL : malloc(cap), *b = buf;
        if (!buf || tjCompress2(h, jb->src + (size_t)y0 * (size_t)jb->pitch, jb->w, jb->pitch, rows, jb->pf, &b, &n,
                                jb->subsamp, jb->quality, TJFLAG_NOREALLOC) ||
            b != buf) {
            free(buf);
            atomic_store(&jb->failed, 1);
            break;
        }
        jb->jb[k] = buf;
        jb->jn[k] = n;
    }
    if (h)
        tjDestroy(h);
    return NULL;
}

/* Where a TurboJPEG file's entropy-coded data begins (after its SOS segment),
 * and its SOF0 segment's offset; 0 where it is not laid out as expected. */
static size_t scan_start(const unsigned char *j, size_t n, size_t *sof)
{
    size_t at = 2;
    *sof = 0;
    if (n < 4 || j[0] != 0xff || j[1] != 0xd8)
        return 0;
    while (at + 4 <= n && j[at] == 0xff) {
        const unsigned m = j[at + 1], len = (unsigned)j[at + 2] << 8 | j[at + 3];
        if (len < 2 || at + 2 + len > n)
            return 0;
        if (m == 0xc0)
            *sof = at;
        if (m == 0xda)
            return *sof && len >= 8 ? at + 2 + len : 0;
        if (m == 0xdd || (m >= 0xc1 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc))
            return 0; /* restarts or another kind of frame: not what the join expects */
        at += 2 + len;
    }
    return 0;
}

/* The bands joined (see above); 0 where they are not as expected. */
static size_t join_bands(const jpeg_bands *jb, int mcus_a_band, unsigned char **out)
{
    size_t sof = 0, sos = 0, total = 6 + 2;
    const size_t data0 = scan_start(jb->jb[0], jb->jn[0], &sof);
    if (!data0)
        return 0;
    for (size_t i = data0; i-- > 0;)
        if (jb->jb[0][i] == 0xff && jb->jb[0][i + 1] == 0xda) {
            sos = i;
            break;
        }
    for (int k = 0; k < jb->nbands; k++) {
        const unsigned char *j = jb->jb[k];
        const size_t n = jb->jn[k];
        size_t sk = 0;
        /* the same headers but the SOF's height (sof + 5); the data ends with EOI */
        if (scan_start(j, n, &sk) != data0 || sk != sof || memcmp(j, jb->jb[0], sof + 5) ||
            memcmp(j + sof + 7, jb->jb[0] + sof + 7, data0 - sof - 7) || n < data0 + 2 || j[n - 2] != 0xff ||
            j[n - 1] != 0xd9)
            return 0;
        total += n - data0 - 2 + 2;
    }
    total += data0;
    unsigned char *o = vki_malloc_big(total);
    if (!o)
        return 0;
    size_t at = sos;
    memcpy(o, jb->jb[0], sos);
    o[sof + 5] = (unsigned char)(jb->h >> 8);
    o[sof + 6] = (unsigned char)jb->h;
    const unsigned char dri[6] = { 0xff, 0xdd, 0, 4, (unsigned char)(mcus_a_band >> 8), (unsigned char)mcus_a_band };
    memcpy(o + at, dri, 6);
    at += 6;
    memcpy(o + at, jb->jb[0] + sos, data0 - sos);
    at += data0 - sos;
    for (int k = 0; k < jb->nbands; k++) {
        const size_t len = jb->jn[k] - data0 - 2;
        memcpy(o + at, jb->jb[k] + data0, len);
        at += len;
        o[at++] = 0xff;
        o[at++] = (unsigned char)(k + 1 < jb->nbands ? 0xd0 + (k & 7) : 0xd9);
    }
    *out = o;
    return at;
}

/* The image in bands on up to `threads` threads (the calling one among them):
 * 0 where it is one band or the bands could not be made (the caller encodes it
 * whole). */
static size_t encode_bands(const unsigned char *src, int w, int h, int pitch, int pf, int subsamp, int quality,
                           int threads, unsigned char **out)
{
    const int mcu = subsamp == TJSAMP_420 ? 16 : 8, mcus_row = (w + mcu - 1) / mcu, mcu_rows = (h + mcu - 1) / mcu;
    const size_t bytes = (size_t)pitch * (size_t)h;
    size_t nb = bytes / (vki_jpeg_band_min ? vki_jpeg_band_min : 1);
    if (nb > JPEG_BANDS_MAX)
        nb = JPEG_BANDS_MAX;
    *out = NULL;
    if (nb < 2 || mcu_rows < 2)
        return 0;
    int rows = (int)((mcu_rows + nb - 1) / nb); /* MCU rows a band */
    if (rows * mcus_row > 65535) /* DRI's interval is 16-bit */
        rows = 65535 / mcus_row;
    jpeg_bands jb = { .src = src, .w = w, .h = h, .pitch = pitch, .pf = pf, .subsamp = subsamp, .quality = quality,
                      .band_rows = rows * mcu, .nbands = (mcu_rows + rows - 1) / rows };
    if (jb.nbands < 2)
        return 0;
    atomic_init(&jb.next, 0);
    atomic_init(&jb.failed, 0);
    jb.jb = calloc((size_t)jb.nbands, sizeof *jb.jb);
    jb.jn = calloc((size_t)jb.nbands, sizeof *jb.jn);
    if (jb.jb && jb.jn)
        vki_run_threads(jpeg_band_worker, &jb, threads < jb.nbands ? threads : jb.nbands);
    else
        atomic_store(&jb.failed, 1);
    size_t n = atomic_load(&jb.failed) ? 0 : join_bands(&jb, rows * mcus_row, out);
    for (int k = 0; jb.jb && k < jb.nbands; k++)
        free(jb.jb[k]);
    free(jb.jb);
    free(jb.jn);
    return n;
}

int vki_jpeg_encode(const vkimg_image *im, int quality, unsigned char **out, size_t *outlen, vkimg_err *e)
{
    return vki_jpeg_encode_ex(im, quality, 1, out, outlen, e);
}

int vki_jpeg_encode_ex(const vkimg_image *im, int quality, int threads, unsigned char **out, size_t *outlen,
                       vkimg_err *e)
{
    if (!out || !outlen)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg: NULL output");
    *out = NULL;
    *outlen = 0;
    if (!im || !im->data || im->w <= 0 || im->h <= 0 || im->c < 1 || im->c > 4 || im->fmt != VKIMG_U8)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg: invalid image (u8, 1-4 channels)");
    if (quality < VKIMG_QUALITY_MIN || quality > VKIMG_QUALITY_MAX)
        return vki_fail(e, VKIMG_E_USAGE, "JPEG quality %d is outside %d..%d", quality, VKIMG_QUALITY_MIN,
                        VKIMG_QUALITY_MAX);
    if (im->w > 65535 || im->h > 65535)
        return vki_fail(e, VKIMG_E_RUNTIME, "JPEG is limited to 65535x65535 pixels, the image is %dx%d", im->w, im->h);

    static const int pf[5] = { 0, TJPF_GRAY, TJPF_GRAY, TJPF_RGB, TJPF_RGBX };
    const int gray = im->c <= 2;
    const int subsamp = gray ? TJSAMP_GRAY : quality < VKI_JPEG_444_QUALITY ? TJSAMP_420 : TJSAMP_444;
    const size_t np = (size_t)im->w * (size_t)im->h;
    const unsigned char *src = im->data;
    unsigned char *tmp = NULL, *buf = NULL;
    int rc = 0;
    tjhandle h = NULL;

    if (im->c == 2) { /* gray + alpha: TurboJPEG has no such format; keep the gray */
        tmp = malloc(np);
        if (!tmp)
            return vki_fail(e, VKIMG_E_RUNTIME, "jpeg: out of memory (%zu bytes)", np);
        for (size_t i = 0; i < np; i++)
            tmp[i] = src[2 * i];
        src = tmp;
    }
    const int pitch = im->w * (im->c == 2 ? 1 : im->c); /* <= 65535 * 4 */
    size_t nbanded = encode_bands(src, im->w, im->h, pitch, pf[im->c], subsamp, quality, threads, &buf);
    if (nbanded) {
        *out = buf;
        *outlen = nbanded;
        buf = NULL;
        goto done;
    }
    const unsigned long cap = tjBufSize(im->w, im->h, subsamp);
    if (cap == (unsigned long)-1) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "jpeg: image too large (%dx%d)", im->w, im->h);
        goto done;
    }
    buf = vki_malloc_big((size_t)cap);
    if (!buf) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "jpeg: out of memory (%lu bytes)", cap);
        goto done;
    }
    h = tjInitCompress();
    if (!h) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "JPEG encoding failed (TurboJPEG: %s)", tj_reason(NULL));
        goto done;
    }
    unsigned char *jb = buf;
    unsigned long jn = cap;
    if (tjCompress2(h, src, im->w, pitch, im->h, pf[im->c], &jb, &jn, subsamp, quality, TJFLAG_NOREALLOC)) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "JPEG encoding failed (TurboJPEG: %s)", tj_reason(h));
        goto done;
    }
    if (jb != buf || jn == 0 || jn > cap) { /* cannot happen with TJFLAG_NOREALLOC */
        rc = vki_fail(e, VKIMG_E_RUNTIME, "JPEG encoding failed (TurboJPEG: unexpected output buffer)");
        goto done;
    }
    *out = buf;
    *outlen = (size_t)jn;
    buf = NULL;

done:
    if (h)
        tjDestroy(h);
    free(buf);
    free(tmp);
    return rc;
}

/* ---------------------------------------------------------------- coded encode */

/* A compressor set up as vki_jpeg_encode's TurboJPEG one is: w x h, gray or
 * YCbCr, the quality's tables (baseline), 4:2:0 below VKI_JPEG_444_QUALITY, the
 * accurate integer DCT. */
static void coded_setup(j_compress_ptr cj, int w, int h, bool gray, int quality)
{
    cj->image_width = (JDIMENSION)w;
    cj->image_height = (JDIMENSION)h;
    cj->input_components = gray ? 1 : 3;
    cj->in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(cj);
    jpeg_set_quality(cj, quality, TRUE);
    const int s = !gray && quality < VKI_JPEG_444_QUALITY ? 2 : 1;
    cj->comp_info[0].h_samp_factor = cj->comp_info[0].v_samp_factor = s;
    for (int k = 1; k < cj->num_components; k++)
        cj->comp_info[k].h_samp_factor = cj->comp_info[k].v_samp_factor = 1;
    cj->dct_method = JDCT_ISLOW;
}

/* A coded image whose data is its entropy-coded segment (the device's Huffman
 * coding): the headers jpeg_write_coefficients writes for its layout and tables
 * (those of a MCU of zeros coded so, its frame's size set), the segment, EOI. */
static int encode_entropy(const vkimg_image *im, unsigned char **out, size_t *outlen, vkimg_err *e)
{
    const struct vkimg_coded *cd = im->coded;
    const int mcu = cd->ncomp == 3 ? 8 * (int)cd->comp[1].hs : 8;
    struct vkimg_coded *zcd = NULL;
    int rc = vki_jpeg_coded_layout(mcu, mcu, im->c, cd->quality, &zcd, e);
    if (rc)
        return rc;
    for (int k = 0; k < cd->ncomp; k++)
        memcpy(zcd->comp[k].quant, cd->comp[k].quant, sizeof zcd->comp[k].quant);
    vkimg_image z = { .w = mcu, .h = mcu, .c = im->c, .fmt = VKIMG_U8, .data = calloc(zcd->ncoef, sizeof(int16_t)),
                      .coded = zcd };
    unsigned char *hj = NULL;
    size_t hn = 0, sof = 0, data0 = 0;
    if (!z.data)
        rc = vki_fail(e, VKIMG_E_RUNTIME, "jpeg: out of memory");
    else if (!(rc = vki_jpeg_encode_coded(&z, &hj, &hn, e)) && !(data0 = scan_start(hj, hn, &sof)))
        rc = vki_fail(e, VKIMG_E_RUNTIME, "jpeg: the headers libjpeg wrote are not as expected");
    vkimg_image_free(&z);
    unsigned char *o = rc ? NULL : vki_malloc_big(data0 + cd->entropy_bytes + 2);
    if (!rc && !o)
        rc = vki_fail(e, VKIMG_E_RUNTIME, "jpeg: out of memory (%zu bytes)", data0 + cd->entropy_bytes + 2);
    if (!rc) {
        memcpy(o, hj, data0);
        o[sof + 5] = (unsigned char)(im->h >> 8);
        o[sof + 6] = (unsigned char)im->h;
        o[sof + 7] = (unsigned char)(im->w >> 8);
        o[sof + 8] = (unsigned char)im->w;
        memcpy(o + data0, im->data, cd->entropy_bytes);
        o[data0 + cd->entropy_bytes] = 0xff;
        o[data0 + cd->entropy_bytes + 1] = 0xd9;
        *out = o;
        *outlen = data0 + cd->entropy_bytes + 2;
    }
    free(hj);
    return rc;
}

int vki_jpeg_encode_coded(const vkimg_image *im, unsigned char **out, size_t *outlen, vkimg_err *e)
{
    *out = NULL;
    *outlen = 0;
    const struct vkimg_coded *cd = im ? im->coded : NULL;
    if (!cd || !im->data || !cd->quality || cd->ncomp != (im->c <= 2 ? 1 : 3))
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg: not an image coded for JPEG output");
    if (cd->entropy)
        return encode_entropy(im, out, outlen, e);
    struct jpeg_compress_struct cj;
    vki_lj_err de;
    unsigned char *mem = NULL;
    unsigned long memlen = 0;
    memset(&cj, 0, sizeof cj);
    cj.err = vki_lj_errors(&de, false);
    if (setjmp(de.jump)) {
        jpeg_destroy_compress(&cj);
        free(mem);
        return vki_fail(e, VKIMG_E_RUNTIME, "JPEG encoding failed (libjpeg: %s)", de.msg[0] ? de.msg : "error");
    }
    jpeg_create_compress(&cj);
    jpeg_mem_dest(&cj, &mem, &memlen);
    coded_setup(&cj, im->w, im->h, cd->ncomp == 1, cd->quality);
    /* the tables the device quantized with (the same as jpeg_set_quality's) */
    for (int k = 0; k < cd->ncomp; k++) {
        JQUANT_TBL *q = cj.quant_tbl_ptrs[cj.comp_info[k].quant_tbl_no];
        for (int i = 0; i < DCTSIZE2; i++)
            q->quantval[i] = cd->comp[k].quant[i];
    }
    jvirt_barray_ptr arrays[VKI_JPEG_MAX_COMP];
    for (int k = 0; k < cd->ncomp; k++)
        arrays[k] = cj.mem->request_virt_barray((j_common_ptr)&cj, JPOOL_IMAGE, FALSE, cd->comp[k].bw, cd->comp[k].bh,
                                                (JDIMENSION)cj.comp_info[k].v_samp_factor);
    cj.mem->realize_virt_arrays((j_common_ptr)&cj); /* jpeg_write_coefficients leaves realized arrays be */
    /* the rows point at the coefficients (else they are copied); every row written, for the coder to read */
    JBLOCK *src = im->data;
    for (int k = 0; k < cd->ncomp; k++) {
        const vki_jpeg_comp *c = &cd->comp[k];
        JBLOCK *base = src + c->off / DCTSIZE2;
        const bool adopted = barray_adopt((j_common_ptr)&cj, arrays[k], c->bh, c->bw, base);
        for (uint32_t r = adopted ? 1 : 0; r < c->bh; r++) {
            JBLOCKARRAY row = cj.mem->access_virt_barray((j_common_ptr)&cj, arrays[k], r, 1, TRUE);
            if (row[0] != base + (size_t)r * c->bw)
                memcpy(row[0], base + (size_t)r * c->bw, (size_t)c->bw * sizeof(JBLOCK));
        }
    }
    jpeg_write_coefficients(&cj, arrays);
    jpeg_finish_compress(&cj);
    jpeg_destroy_compress(&cj);
    *out = mem;
    *outlen = (size_t)memlen;
    return 0;
}
