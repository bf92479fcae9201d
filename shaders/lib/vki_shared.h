/* Facts shared by the C code and the shaders: this header is included by both
 * (C and GLSL alike through #include "vki_shared.h"), so
 * it holds #defines only. One place for each of these numbers. */
#ifndef VKI_SHARED_H
#define VKI_SHARED_H

/* Sample format codes: vkimg_fmt in include/vkimg/vkimg.h has these values
 * (checked at compile time in src/core/image.c). */
#define VKI_FMT_U8 0  /* unsigned normalized: 0..255 -> 0..1 */
#define VKI_FMT_U16 1 /* unsigned normalized: 0..65535 -> 0..1 */
#define VKI_FMT_F16 2
#define VKI_FMT_F32 3
#define VKI_FMT_U32 4 /* plain integers (data outputs) */
#define VKI_FMT_U64 5

/* Specialization constants every kernel has (shaders/lib/common.glsl); an
 * op's own constants are found by their names in its SPIR-V (src/gpu/kernel.c). */
#define VKI_SPEC_LX 0 /* workgroup size */
#define VKI_SPEC_LY 1
#define VKI_SPEC_LZ 2
#define VKI_SPEC_IN_FMT 3 /* sample formats of the input and the output */
#define VKI_SPEC_OUT_FMT 4
#define VKI_SPEC_IN_C 5 /* channels of the input and the output */
#define VKI_SPEC_OUT_C 6

/* The alpha rule: 2 channels are gray + alpha, 4 are RGBA; alpha is the last
 * channel, and the others are colour. */
#define VKI_HAS_ALPHA(c) ((c) == 2 || (c) == 4)
#define VKI_COLOUR_CHANNELS(c) (VKI_HAS_ALPHA(c) ? (c) - 1 : (c))

/* Limits. */
#define VKI_MAX_STAGES 64        /* ops in a pipeline */
#define VKI_BLUR_MAX_RADIUS 4096 /* blur's radius option */
#define VKI_BLUR_RMAX 22         /* blur: largest radius with unrolled loops (weights in the 128-byte push block) */

/* A baseline JPEG scan as the device decodes its Huffman codes (vkimg_load_opts.
 * jpeg_entropy: src/io/jpeg_entropy.c writes it, shaders/codec/jpeg_huff.comp
 * reads it): 32-bit words, a header of VKI_JH_HEADER words, the Huffman tables,
 * the restart intervals, then the entropy-coded bytes as coded (FF 00 -> FF, the
 * RSTn markers out), each interval from a word boundary and followed by 1-bits to
 * the end of its word and one word of 1-bits more (no code is all 1-bits). */
#define VKI_JH_HEADER 64
#define VKI_JH_NINT 0   /* restart intervals (1 where the file has none) */
#define VKI_JH_BPM 1    /* blocks a MCU (1..VKI_JH_MAX_BPM) */
#define VKI_JH_MCUX 2   /* MCUs in a row */
#define VKI_JH_RI 3     /* MCUs in a restart interval (all of them where the file has none) */
#define VKI_JH_BLOCKS 4 /* blocks in the scan */
#define VKI_JH_NCOMP 5
#define VKI_JH_IVL 6    /* word offset of the interval table: 2 words an interval (its first word, its bits) */
#define VKI_JH_DATA 7   /* word offset of the entropy-coded data */
#define VKI_JH_SLOT 16  /* VKI_JH_MAX_BPM words: block j of a MCU: component | h << 4 | v << 8 | its DC
                           table << 12 | its AC table << 16 (tables 0..7: DC 0..3, AC 0..3) */
#define VKI_JH_COMP 32  /* 8 words a component: VKI_JH_C_* */
#define VKI_JH_C_H 0    /* its blocks in a MCU: H across, V down */
#define VKI_JH_C_V 1
#define VKI_JH_C_BW 2   /* blocks in a row of its coefficients (core/coded.h) */
#define VKI_JH_C_OFF 3  /* its first block, counted in blocks */
#define VKI_JH_C_N 4    /* its blocks in the scan */
#define VKI_JH_MAX_BPM 10
#define VKI_JH_TABLES 64   /* 8 tables of VKI_JH_TABLE words: */
#define VKI_JH_TABLE 640
#define VKI_JH_LOOK_BITS 9 /* look[512]: length << 8 | symbol of the code the next 9 bits begin, 0: longer or none */
#define VKI_JH_MAXCODE 512 /* maxcode[17] (int, -1: no code of that length) */
#define VKI_JH_VALOFF 529  /* valoff[17]: a code of length l is symbol huffval[code + valoff[l]] */
#define VKI_JH_HUFFVAL 546 /* huffval: 256 bytes, 4 a word (64 words) */
/* status words the device writes (VKI_JH_ERR_* bits in word 0) */
#define VKI_JH_ERR_SYNC 1u  /* the subsequences did not synchronize in the rounds given */
#define VKI_JH_ERR_CODE 2u  /* no Huffman code where one belongs */
#define VKI_JH_ERR_COUNT 4u /* an interval has another number of blocks than its MCUs have */
#define VKI_JH_ERR_EXTRA 8u /* a byte or more after an interval's last block (libjpeg warns) */
#define VKI_JH_ERR_DC 16u   /* a DC difference of more than 11 bits */

/* The layout of a JPEG's scan and its code tables as the device's Huffman coder
 * reads them (shaders/codec/jpeg_henc.comp; src/exec/jpeg.c writes them): 32-bit
 * words. */
#define VKI_JE_BPM 0     /* blocks a MCU */
#define VKI_JE_MCUX 1    /* MCUs in a row */
#define VKI_JE_BLOCKS 2  /* blocks in the scan */
#define VKI_JE_SLOT 8    /* 6 words: block j of a MCU: component | h << 4 | v << 8 | DC table << 12 | AC table << 16 */
#define VKI_JE_COMP 16   /* 8 words a component: H, V (its blocks in a MCU), blocks in a row, first block,
                            blocks across and down that hold the image (the others are libjpeg's dummy
                            blocks: AC 0, the DC of the block before) */
#define VKI_JE_CODES 48  /* 4 tables (core/coded.h VKI_JPEG_HUFF_*) of 256 codes: code | length << 16 */
#define VKI_JE_WORDS (VKI_JE_CODES + 4 * 256)
#define VKI_JE_ERR_FULL 1u  /* the segment does not fit the host's buffer */
#define VKI_JE_ERR_RANGE 2u /* a coefficient with no code (libjpeg: "DCT coefficient out of range") */

#endif
