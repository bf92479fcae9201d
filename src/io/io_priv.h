/* Internal helpers of the image I/O layer (io.c, png.c, jpeg.c, npy.c). No Vulkan.
 *
 * Memory: every buffer these functions hand out is malloc()ed and freed with free();
 * image data (vkimg_image.data) is always malloc()ed, including the buffers that
 * stb_image returns (stb_impl.c defines STBI_MALLOC as malloc), so
 * vkimg_image_free() simply free()s it. */
#ifndef VKI_IO_PRIV_H
#define VKI_IO_PRIV_H

#include "vkimg/vkimg.h"

#include <stddef.h>
#include <stdint.h>

/* Returned by the fast-path decoders (vki_png_decode, vki_jpeg_decode) for a file
 * they leave to stb_image: e->msg says why (no file name), nothing is allocated and
 * the caller goes on with stb. Not a VKIMG_E_* code. */
#define VKI_DECLINED (-1)

/* The size checks every decoder makes before allocating pixel memory: no side 0 or
 * over 2^24, at most max_pixels (0: VKIMG_DEFAULT_MAX_PIXELS) pixels.
 * VKIMG_E_RUNTIME "NAME: image is WxH ..." otherwise. */
int vki_check_dims(const char *name, uint64_t w, uint64_t h, uint64_t max_pixels, vkimg_err *e);

/* kind.c: the name of a file kind ("PNG"), and the output kind of a path or a
 * usage error naming the known extensions. */
const char *vki_kind_name(vkimg_file_kind k);
int vki_output_kind(const char *path, vkimg_file_kind *k, vkimg_err *e);

/* One piece of a file written by vki_write_atomic_v. */
typedef struct vki_span {
    const void *p;
    size_t n;
} vki_span;

/* Writes data to path atomically: a temporary ".NAME.vkimg-XXXXXX" created with
 * mkstemp in path's directory, mode 0666 & ~umask, then rename() over path. On any
 * failure the temporary file is removed, an existing file at path is untouched and
 * the error is VKIMG_E_RUNTIME "PATH: cannot write: <strerror>". */
int vki_write_atomic(const char *path, const void *data, size_t n, vkimg_err *e);
/* The same with the file made of nparts pieces, written in order. */
int vki_write_atomic_v(const char *path, const vki_span *parts, int nparts, vkimg_err *e);

/* Encodes an U8 or U16 image (1-4 channels: gray, gray+alpha, RGB, RGBA) as an 8- or
 * 16-bit PNG (16-bit samples are written big-endian, as PNG requires) compressed
 * with libdeflate at level 0..12 (-1 = 6). Each row gets the filter (none, sub, up,
 * average, paeth) with the smallest sum of absolute signed bytes. *out is malloc()ed
 * (free() it). Errors name no file: the caller adds the path. Bad level: VKIMG_E_USAGE. */
int vki_png_encode(const vkimg_image *im, int level, unsigned char **out, size_t *outlen, vkimg_err *e);
/* As vki_png_encode, with IDAT chunks of at most idat_max bytes (>= 1; tests use a
 * small value to exercise the split). */
int vki_png_encode_ex(const vkimg_image *im, int level, size_t idat_max, unsigned char **out, size_t *outlen,
                      vkimg_err *e);

/* The fast PNG decoder (png.c): non-interlaced 8/16-bit PNGs of every colour type,
 * inflated by libdeflate and unfiltered here, giving exactly what stb_image gives
 * (palette -> RGB/RGBA, tRNS colour key -> an alpha channel, 16-bit -> host order
 * U16). Returns 0 with *out filled (data malloc()ed), VKI_DECLINED for a file to
 * hand to stb_image (interlaced, bit depth < 8, unknown critical chunks, anything
 * malformed: see png.c), or VKIMG_E_RUNTIME naming `name` (over the limits, out of
 * memory). Thread-safe. */
int vki_png_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e);

/* JPEG through libjpeg-turbo's TurboJPEG API (jpeg.c). Decode: 8-bit baseline,
 * progressive or arithmetic-coded JPEGs; grayscale gives 1 channel, colour 3 (RGB).
 * The header is read and checked against max_pixels before allocating. Returns 0,
 * VKI_DECLINED (CMYK/YCCK, anything TurboJPEG refuses or warns about: e->msg holds
 * "TurboJPEG: <its message>" for the caller's report), or VKIMG_E_RUNTIME naming
 * `name` (limits, out of memory). Thread-safe (one TurboJPEG handle per call). */
int vki_jpeg_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                    vkimg_err *e);
/* Encodes a U8 image at quality 1..100: 1-2 channels as a grayscale JPEG (alpha
 * dropped), 3-4 as YCbCr (alpha dropped) with 4:2:0 chroma subsampling below
 * quality 90 and 4:4:4 from 90 up. At most 65535x65535. *out is malloc()ed. Errors
 * name no file: the caller adds the path. */
int vki_jpeg_encode(const vkimg_image *im, int quality, unsigned char **out, size_t *outlen, vkimg_err *e);

/* Writes a NumPy .npy file (format 1.0, C order, header padded so the data starts at
 * a multiple of 64 bytes) atomically, like vkimg_save. descr is a NumPy type string
 * such as "|u1", "<u2", "<f4", "<u8"; nbytes must equal prod(shape) * itemsize.
 * ndim 0..32 (0 = a scalar). */
int vki_npy_save(const char *path, const char *descr, int ndim, const size_t *shape, const void *data,
                 size_t nbytes, vkimg_err *e);
/* The NumPy type string of a sample format in host byte order ("|u1", "<u2", "<f2",
 * "<f4", "<u4", "<u8" on little-endian hosts), NULL for an unknown format. */
const char *vki_npy_descr(vkimg_fmt f);

#endif
