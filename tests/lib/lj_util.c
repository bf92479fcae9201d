#include "lj_util.h"

#include <setjmp.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

unsigned char *lj_encode(const vkimg_image *im, int quality, const int hv[3], int progressive, size_t *n)
{
    struct jpeg_compress_struct ci;
    struct jpeg_error_mgr err;
    ci.err = jpeg_std_error(&err); /* (an error here exits: the test's own input) */
    jpeg_create_compress(&ci);
    unsigned char *buf = NULL;
    unsigned long len = 0;
    jpeg_mem_dest(&ci, &buf, &len);
    const int cmyk = im->c == 4;
    ci.image_width = (JDIMENSION)im->w;
    ci.image_height = (JDIMENSION)im->h;
    ci.input_components = cmyk ? 4 : 3;
    ci.in_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_set_defaults(&ci);
    if (cmyk)
        jpeg_set_colorspace(&ci, JCS_CMYK);
    jpeg_set_quality(&ci, quality, TRUE);
    for (int k = 0; hv && k < 3; k++) {
        ci.comp_info[k].h_samp_factor = hv[k] >> 4;
        ci.comp_info[k].v_samp_factor = hv[k] & 15;
    }
    if (progressive)
        jpeg_simple_progression(&ci);
    jpeg_start_compress(&ci, TRUE);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = (unsigned char *)im->data + (size_t)ci.next_scanline * (size_t)im->w * (size_t)im->c;
        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    unsigned char *r = malloc(len);
    if (!r) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(r, buf, len);
    free(buf);
    *n = len;
    return r;
}

typedef struct lj_jump {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
} lj_jump;

static void lj_jump_exit(j_common_ptr c)
{
    longjmp(((lj_jump *)c->err)->jump, 1);
}

int lj_decode_rgb(const unsigned char *jpg, size_t n, int denom, vkimg_image *out)
{
    struct jpeg_decompress_struct d;
    lj_jump err;
    memset(out, 0, sizeof *out);
    d.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = lj_jump_exit;
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&d);
        vkimg_image_free(out);
        return -1;
    }
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, jpg, (unsigned long)n);
    jpeg_read_header(&d, TRUE);
    d.out_color_space = JCS_RGB;
    d.scale_num = 1;
    d.scale_denom = (unsigned)denom;
    jpeg_start_decompress(&d);
    vkimg_err e;
    if (vkimg_image_alloc(out, (int)d.output_width, (int)d.output_height, 3, VKIMG_U8, &e)) {
        jpeg_destroy_decompress(&d);
        return -1;
    }
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = (unsigned char *)out->data + (size_t)d.output_scanline * (size_t)out->w * 3;
        jpeg_read_scanlines(&d, &row, 1);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    return 0;
}

size_t lj_marker(const unsigned char *jpg, size_t n, unsigned m, int k)
{
    size_t p = 2;
    while (p + 1 < n && jpg[p] == 0xff) {
        const unsigned mk = jpg[p + 1];
        if (mk == 0xff) { /* a fill byte */
            p++;
            continue;
        }
        if (mk == m && k-- == 0)
            return p;
        if (mk == 0xd9)
            return 0;
        if (mk == 0x01 || (mk >= 0xd0 && mk <= 0xd7)) { /* no length */
            p += 2;
            continue;
        }
        if (p + 4 > n)
            return 0;
        p += 2 + ((size_t)jpg[p + 2] << 8 | jpg[p + 3]);
        if (mk == 0xda) /* the entropy-coded data: 0xFF only as 0xFF 0x00 or RSTn */
            while (p + 1 < n && !(jpg[p] == 0xff && jpg[p + 1] != 0 && (jpg[p + 1] < 0xd0 || jpg[p + 1] > 0xd7)))
                p++;
    }
    return 0;
}

size_t lj_scan_data(const unsigned char *jpg, size_t n)
{
    const size_t sos = lj_marker(jpg, n, 0xda, 0);
    return sos && sos + 4 <= n ? sos + 2 + ((size_t)jpg[sos + 2] << 8 | jpg[sos + 3]) : 0;
}
