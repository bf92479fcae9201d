/* KTX 2.0 (Khronos texture container) writer and strict reader for mip chains of
 * uncompressed images: one 2D texture, levelCount levels, no array layers, no cube
 * faces, no supercompression. Pure functions on bytes in memory (no file I/O, no
 * Vulkan); thread-safe. Errors name no file: the caller adds the path.
 *
 * Formats (vkFormat by sample format and channel count 1..4):
 *   U8:  VK_FORMAT_R8_UNORM, R8G8_UNORM, R8G8B8_UNORM, R8G8B8A8_UNORM (9, 16, 23, 37),
 *        or with opts.srgb R8_SRGB, R8G8B8_SRGB, R8G8B8A8_SRGB (15, 29, 43); the reader
 *        also takes R8G8_SRGB (22)
 *   U16: VK_FORMAT_R16_UNORM, R16G16_UNORM, R16G16B16_UNORM, R16G16B16A16_UNORM (70, 77, 84, 91)
 *   F32: VK_FORMAT_R32_SFLOAT, R32G32_SFLOAT, R32G32B32_SFLOAT, R32G32B32A32_SFLOAT (100, 103, 106, 109)
 *
 * What the writer puts in the file (KTX 2.0 specification, revision 4+):
 *  - typeSize = bytes of one component (1, 2, 4); pixelWidth/Height of level 0,
 *    pixelDepth 0, layerCount 0, faceCount 1, levelCount = number of levels,
 *    supercompressionScheme 0, no supercompression global data (offset and length 0);
 *  - the level index ordered from level 0 (the largest), byteLength =
 *    uncompressedByteLength = w_p * h_p * texel bytes, with w_p = max(1, w >> p),
 *    h_p = max(1, h >> p); the level data stored from the smallest level to the
 *    largest, each level aligned to lcm(texel size, 4) with zero mipPadding, the file
 *    ending with level 0; rows tightly packed, samples little-endian;
 *  - the Data Format Descriptor: dfdTotalSize and one basic descriptor block (vendor
 *    Khronos, type 0, version 2): colour model RGBSDA, primaries BT.709, transfer
 *    LINEAR (sRGB with opts.srgb), straight alpha, 1x1x1x1 texel block, bytesPlane0 =
 *    texel size, one sample per channel: channel ids R, G, B, A(15) in memory order,
 *    bitOffset = i * component bits, bitLength = component bits - 1, samplePosition 0,
 *    sampleLower/Upper 0/2^bits-1 for UNORM and -1.0f/1.0f (FLOAT|SIGNED qualifiers)
 *    for SFLOAT; with sRGB the alpha sample has the LINEAR qualifier;
 *  - key/value data, sorted by key: KTXorientation "rd" (first pixel top left, rows
 *    going down), KTXswizzle "rrr1" for 1 channel (gray) and "rrrg" for 2 (gray +
 *    alpha), the spec's mappings for luminance and luminance-alpha; KTXwriter
 *    "vkimg <VKIMG_VERSION>".
 *
 * Transfer function: linear by default, because vkimg computes on the stored values as
 * they are (its filters, and so the mip levels made from them, never decode sRGB):
 * declaring the data sRGB would make a GPU decode it before filtering, which is not how
 * the levels were made, and UNORM formats with an sRGB variant should not carry the
 * sRGB transfer (spec, DFD restrictions). opts.srgb is for levels that were filtered in
 * linear light and re-encoded: it selects the *_SRGB formats (U8 only: there are no
 * 16-bit or float sRGB formats; and not for gray + alpha, whose alpha R8G8_SRGB would
 * decode as sRGB). */
#ifndef VKI_KTX2_H
#define VKI_KTX2_H

#include "vkimg/vkimg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VKI_KTX2_MAX_LEVELS 32

typedef struct vki_ktx2_opts {
    bool srgb; /* U8 with 1, 3 or 4 channels: *_SRGB vkFormats, transfer function sRGB (not
                  for 2: R8G8_SRGB would decode vkimg's alpha channel as sRGB) */
} vki_ktx2_opts;

/* Writes the levels (level 0 = full size, level p = max(1, w >> p) x max(1, h >> p); all
 * of one sample format U8/U16/F32 and one channel count 1..4; at most
 * floor(log2(max(w, h))) + 1 of them) as an uncompressed KTX2 file in memory: *out is
 * malloc()ed. Errors: VKIMG_E_USAGE for levels that do not form such a chain or an
 * unsupported format, VKIMG_E_RUNTIME out of memory / too large. */
int vki_ktx2_encode(const vkimg_image *levels, int nlevels, unsigned char **out, size_t *outlen, vkimg_err *e);
/* The same with options (o may be NULL: the defaults). */
int vki_ktx2_encode_ex(const vkimg_image *levels, int nlevels, const vki_ktx2_opts *o, unsigned char **out,
                       size_t *outlen, vkimg_err *e);

/* What the reader found besides the pixels. */
typedef struct vki_ktx2_info {
    uint32_t vk_format;  /* the VkFormat value */
    int transfer;        /* DFD transferFunction: 1 linear, 2 sRGB, ... */
    int primaries;       /* DFD colorPrimaries: 1 BT.709, ... */
    bool premultiplied;  /* DFD flags: KHR_DF_FLAG_ALPHA_PREMULTIPLIED */
    char writer[256];    /* KTXwriter ("" if absent; cut to 255 bytes) */
} vki_ktx2_info;

/* Strict reader: validates the whole file against the KTX 2.0 specification (for the
 * kind of file above: 2D, 1D taken as height 1, levelCount 0 taken as 1 level) and
 * returns the levels in a malloc()ed array of *nlevels images (free with
 * vki_ktx2_free_levels). Checked: identifier; vkFormat one of the formats above and
 * typeSize to match; dimensions, levelCount <= floor(log2(max(w, h))) + 1; faceCount,
 * layerCount, pixelDepth, supercompression scheme and global data; the index: the DFD
 * right after the level index with dfdByteLength = dfdTotalSize = kvdByteOffset -
 * dfdByteOffset, kvdByteOffset 0 exactly when kvdByteLength is 0; the DFD: its blocks'
 * sizes, the basic block against the format (model, block size, bytesPlane, every
 * sample's offset, length, channel, qualifiers, position, lower and upper) and the
 * transfer function against the format (sRGB for the *_SRGB formats, not sRGB for the
 * 8-bit UNORM ones, which have an sRGB variant; free for 16-bit and float); the
 * key/value data: lengths, NUL-terminated UTF-8 keys, zero padding, sorted and unique
 * keys, reserved "KTX"/"ktx" keys only as the spec defines them, KTXorientation and
 * KTXswizzle values, KTXwriterScParams only with KTXwriter; every level's byteLength =
 * uncompressedByteLength = its size, offsets exactly as the layout requires (smallest
 * level first after the key/value data, each aligned to lcm(texel size, 4), zero
 * padding, the file ending with level 0). Anything else: VKIMG_E_RUNTIME with a
 * one-line reason. info may be NULL. */
int vki_ktx2_decode(const unsigned char *b, size_t len, vkimg_image **levels, int *nlevels, vki_ktx2_info *info,
                    vkimg_err *e);
/* Frees what vki_ktx2_decode returned (NULL is fine). */
void vki_ktx2_free_levels(vkimg_image *levels, int nlevels);

/* Writes the levels (a mip chain, level 0 the full size) as one KTX2 file, atomically. */
int vki_ktx2_save(const char *path, const vkimg_image *levels, int n, vkimg_err *e);

#endif
