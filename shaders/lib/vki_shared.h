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

#endif
