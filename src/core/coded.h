/* A JPEG half-way through its codec (vkimg_image.coded): the layout of its
 * quantized DCT coefficients and its quantization tables, shared by the I/O side
 * (src/io/jpeg.c: libjpeg-turbo's entropy decoder fills the coefficients, its
 * entropy coder writes them) and the device side (src/exec/jpeg.c, shaders/codec:
 * dequantization, IDCT, upsampling and colour conversion, and their inverses).
 *
 * Coefficients are int16, natural (row-major) order within a block, 64 a block;
 * a component's blocks are row after row of bw blocks, bh rows, from `off`. */
#ifndef VKI_CODED_H
#define VKI_CODED_H

#include "vkimg/vkimg.h"
#include "vki_shared.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VKI_JPEG_MAX_COMP 3
/* vkimg's JPEG outputs: colour is 4:4:4 from this quality up, 4:2:0 below */
#define VKI_JPEG_444_QUALITY 90

typedef struct vki_jpeg_comp {
    uint32_t bw, bh;    /* blocks in a row, rows of blocks */
    uint32_t cw, ch;    /* the component's samples: libjpeg's downsampled_width/height */
    uint32_t hs, vs;    /* the image is hs times the component's width, vs its height (1 or 2) */
    size_t off;         /* its first coefficient, counted in coefficients from the data's start */
    uint16_t quant[64]; /* its quantization table, natural order */
} vki_jpeg_comp;

struct vkimg_coded {
    int ncomp;   /* 1: grayscale (Y), 3: YCbCr */
    /* the image's data is the scan still entropy-coded (vkimg_load_opts.jpeg_entropy):
     * entropy_bytes of the layout vki_shared.h's VKI_JH_* give, the device decodes
     * its Huffman codes into coefficients of the layout below (else the data is
     * those coefficients) */
    bool entropy;
    size_t entropy_bytes;
    uint32_t scan[VKI_JH_HEADER]; /* entropy: the blob's header, and its interval table */
    uint32_t *intervals;          /* (malloc()ed; for the host, which reads no device-visible memory) */
    int quality; /* made for encoding: the quality of the tables (else 0) */
    vki_jpeg_comp comp[VKI_JPEG_MAX_COMP];
    size_t ncoef; /* coefficients in the image's data */
};

/* The standard Huffman tables vkimg's JPEGs are coded with (libjpeg's defaults,
 * no optimization pass): VKI_JPEG_HUFF_* index them. vki_jpeg_huff_codes: table
 * t's code of each symbol as code | length << 16 (length 0: no code). */
enum { VKI_JPEG_HUFF_DC0, VKI_JPEG_HUFF_AC0, VKI_JPEG_HUFF_DC1, VKI_JPEG_HUFF_AC1 };
extern const uint8_t vki_jpeg_std_bits[4][17];
extern const uint8_t vki_jpeg_std_vals[4][162];
void vki_jpeg_huff_codes(int t, uint32_t codes[256]);

/* Frees a coded image's layout (vkimg_image_free). */
void vki_coded_free(struct vkimg_coded *cd);

/* The layout and tables of a w x h image of c channels (1-4) coded for a JPEG of
 * this quality as vkimg writes one (io/jpeg.c): gray for 1-2 channels, else
 * YCbCr, 4:2:0 below VKI_JPEG_444_QUALITY; libjpeg's jpeg_set_quality tables
 * (the example tables of ITU-T T.81 Annex K scaled, baseline); each
 * component's blocks rounded up to whole MCUs (what jpeg_write_coefficients
 * reads). *out is malloc()ed. */
int vki_jpeg_coded_layout(int w, int h, int c, int quality, struct vkimg_coded **out, vkimg_err *e);

#endif
