/* Internal helpers of the image I/O layer: the loader (load.c), one decoder per
 * format, the encoders, atomic writes. No Vulkan.
 *
 * Memory: every buffer these functions hand out is malloc()ed and freed with free();
 * image data (vkimg_image.data) is always malloc()ed (vki_malloc_big), so
 * vkimg_image_free() simply free()s it.
 *
 * Decoders: one per format, each a plain function of a memory buffer that returns 0
 * with *out filled, or VKIMG_E_RUNTIME with a one-line message naming `name` and
 * the reason ("NAME: BMP: truncated pixel data"); on failure *out is zeroed and
 * nothing is left allocated. Every one of them bounds-checks every read against
 * len, checks the size with vki_check_dims before allocating pixel memory, never
 * allocates in proportion to a length field the buffer cannot back, and makes
 * progress in every loop iteration. They are thread-safe (no global state). */
#ifndef VKI_IO_PRIV_H
#define VKI_IO_PRIV_H

#include "vkimg/vkimg.h"
#include "core/util.h" /* VKI_PRINTF */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A decoder's error: "NAME: FORMAT: reason" (VKIMG_E_RUNTIME). */
int vki_dec_fail(vkimg_err *e, const char *name, const char *format, const char *fmt, ...) VKI_PRINTF(4, 5);
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
/* Several outputs that appear together or not at all (a mip chain's {level}
 * files): between vki_txn_begin and vki_txn_commit the calling thread's atomic
 * writes go to temporaries beside their paths; commit renames them all into
 * place, abort removes them (nothing written, existing files untouched). */
typedef struct vki_txn vki_txn;
vki_txn *vki_txn_begin(void); /* NULL when out of memory (commit then fails) */
int vki_txn_commit(vki_txn *t, vkimg_err *e);
void vki_txn_abort(vki_txn *t);
/* The same with the file made of nparts pieces, written in order. */
int vki_write_atomic_v(const char *path, const vki_span *parts, int nparts, vkimg_err *e);

/* Encodes an U8 or U16 image (1-4 channels: gray, gray+alpha, RGB, RGBA) as an 8- or
 * 16-bit PNG (16-bit samples are written big-endian, as PNG requires) compressed
 * with libdeflate at level 0..12 (-1 = VKIMG_PNG_LEVEL_DEFAULT). Each row gets the filter (none, sub, up,
 * average, paeth) with the smallest sum of absolute signed bytes. *out is malloc()ed
 * (free() it). Errors name no file: the caller adds the path. Bad level: VKIMG_E_USAGE. */
int vki_png_encode(const vkimg_image *im, int level, unsigned char **out, size_t *outlen, vkimg_err *e);
/* As vki_png_encode, with IDAT chunks of at most idat_max bytes (>= 1; tests use a
 * small value to exercise the split; 0: the default) and flags: VKI_PNG_PALETTE
 * writes an 8-bit RGB or RGBA image of at most 256 colours as a palette image
 * (PLTE, and tRNS with every entry's alpha for RGBA: it reads back as the same
 * RGBA pixels), unfiltered; other images as they would be without it. */
#define VKI_PNG_PALETTE 1u
/* Images of two bands or more of rows (vki_png_band_min) are compressed in bands, each a deflate stream
 * of its own joined into one (the same file whatever the threads); this many
 * threads (1..255, the calling one among them) make the bands. */
#define VKI_PNG_THREADS(n) ((unsigned)(n) << 8)
extern size_t vki_png_band_min; /* a band's least filtered bytes: 4 MiB (tests set it lower) */
int vki_png_encode_ex(const vkimg_image *im, int level, size_t idat_max, unsigned flags, unsigned char **out,
                      size_t *outlen, vkimg_err *e);
/* An 8-bit image whose first channel is indices into pal (256 colours, r | g << 8 |
 * b << 16 | a << 24; other channels ignored) as a palette PNG: PLTE and tRNS of the entries used (in index order),
 * so that it reads back as RGBA; rows unfiltered. */
int vki_png_encode_indexed(const vkimg_image *im, const uint32_t pal[256], int level, size_t idat_max,
                           unsigned char **out, size_t *outlen, vkimg_err *e);

/* Makes a raw deflate stream of n bytes that ends with its final block (as
 * libdeflate writes them) go on: the block's BFINAL bit cleared and an empty
 * stored block appended, to the byte (s must have room for n + 5 bytes). The
 * stream is walked to find them; false (s unchanged) where it does not parse to
 * its last byte. *newlen: the stream's new size. */
bool vki_deflate_unfinal(unsigned char *s, size_t n, size_t *newlen);

/* ---- decoders (see the top of this file for what they share) */

/* PNG (png_dec.c): every colour type, bit depths 1/2/4/8/16, interlaced or not,
 * with stb_image's output conventions (palette -> RGB/RGBA, tRNS -> an alpha
 * channel, gray of 1/2/4 bits scaled to 8, 16-bit -> host-order U16). Strict:
 * critical chunk CRCs, exact zlib size, filter types, palette indices. */
int vki_png_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e);
/* vki_png_decode with the load options' allocator (o->alloc; o may be NULL); calls
 * o->input_done once b is read no more (and sets *released; released may be NULL). */
int vki_png_decode_opts(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels,
                        const vkimg_load_opts *o, vkimg_image *out, bool *released, vkimg_err *e);

/* JPEG through libjpeg-turbo's TurboJPEG API (jpeg.c): baseline, progressive or
 * arithmetic-coded; gray gives 1 channel, colour 3 (RGB), CMYK/YCCK are converted
 * to RGB. Warnings (corrupt or truncated data) are errors. */
int vki_jpeg_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                    vkimg_err *e);
/* vki_jpeg_decode with the load options' shrink-on-load (o->min_size; o may be NULL). */
int vki_jpeg_decode_opts(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels,
                         const vkimg_load_opts *o, vkimg_image *out, vkimg_err *e);
/* The scan of a JPEG whose headers libjpeg has read (d, from jpeg_mem_src(b,
 * len)) for the device to decode (vkimg_load_opts.jpeg_entropy, jpeg_entropy.c):
 * into *out (allocated as o says; 4 bytes by its words), cd's layout (filled
 * by the caller) marked entropy. -1 without touching *out where the device does
 * not take this scan (decode it on the host), else 0 or an error. */
struct jpeg_decompress_struct;
struct vkimg_coded;
int vki_jpeg_entropy_pack(struct jpeg_decompress_struct *d, const unsigned char *b, size_t len,
                          struct vkimg_coded *cd, const vkimg_load_opts *o, const char *name, vkimg_image *out,
                          vkimg_err *e);
/* A progressive JPEG without the AC scans (Ss > 0) of its full-resolution
 * components, every other segment as it is, into out (len + 4 bytes): what a
 * 1/8 decode reads (such a component's pixels are its blocks' DCs; subsampled
 * chroma is scaled by a larger IDCT, which reads its AC terms). Returns its
 * length, or 0 where b is not a progressive JPEG whose markers all parse up to
 * EOI (then decode b itself). */
size_t vki_jpeg_dc_scans(const unsigned char *b, size_t len, unsigned char *out);

/* GIF through giflib (gif.c): the first frame on a transparent canvas of the
 * logical screen size, RGBA. */
int vki_gif_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e);

/* BMP (bmp.c): 1/4/8-bit palette, 16/24/32-bit, BI_RGB and BI_BITFIELDS; RGB, or
 * RGBA when the file has an alpha mask. */
int vki_bmp_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e);

/* TGA (tga.c): colour-mapped, true-colour and gray, raw or RLE; 1-4 channels. TGA
 * has no signature: vki_tga_test says whether a header is one the decoder takes. */
int vki_tga_test(const unsigned char *b, size_t len);
int vki_tga_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e);

/* PNM (pnm.c): P1..P6 and PAM (P7); maxval up to 255 gives U8, up to 65535 U16. */
int vki_pnm_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e);

/* Radiance HDR (hdr.c): RGBE, flat or RLE scanlines, "-Y H +X W"; F32 RGB. */
int vki_hdr_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e);

/* Photoshop PSD (psd.c): the composite image, 8/16-bit, RGB(A) or gray, raw or RLE. */
int vki_psd_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e);

/* TIFF (tiff.c): the first image (IFD) of a classic TIFF or BigTIFF file, either byte
 * order: strips or tiles, chunky or planar; uncompressed, LZW, Deflate, PackBits or JPEG,
 * predictors 2 and 3; 1/2/4/8/16-bit unsigned or 32-bit float samples of gray
 * (MinIsBlack, MinIsWhite), RGB, palette or CMYK, with an alpha extra sample
 * (associated alpha un-premultiplied). 1, 2, 4 and 8-bit samples give U8, 16-bit
 * U16, floats F32. */
int vki_tiff_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                    vkimg_err *e);
/* vki_tiff_decode into the load options' allocator's memory (o may be NULL): gray or
 * RGB files of 8, 16-bit or float samples, chunky, decode their strips straight into it. */
int vki_tiff_decode_opts(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels,
                         const vkimg_load_opts *o, vkimg_image *out, vkimg_err *e);
/* Whether b[0..n) begins as a TIFF: classic ("II*\0", "MM\0*") or BigTIFF ("II+\0",
 * "MM\0+"), either byte order (load.c's detection, meta.c's, the fuzz checks'). */
static inline bool vki_tiff_signature(const unsigned char *b, size_t n)
{
    return n >= 4 && (!memcmp(b, "II*\0", 4) || !memcmp(b, "MM\0*", 4) || !memcmp(b, "II+\0", 4) ||
                      !memcmp(b, "MM\0+", 4));
}
/* Bytes a value of TIFF type t takes (BYTE .. IFD of TIFF 6.0, BigTIFF's LONG8, SLONG8
 * and IFD8); 0 for an unknown type. */
static inline unsigned vki_tiff_type_size(unsigned t)
{
    static const unsigned char size[19] = { 0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4, 0, 0, 8, 8, 8 };
    return t < 19 ? size[t] : 0;
}
/* The tags of a TIFF's first IFD that are metadata (meta.c reads them; tiff.c writes them) */
enum {
    VKI_TIFF_TAG_ORIENTATION = 274,
    VKI_TIFF_TAG_XMP = 700,
    VKI_TIFF_TAG_IPTC = 33723,
    VKI_TIFF_TAG_PHOTOSHOP = 34377,
    VKI_TIFF_TAG_ICC = 34675
};
/* A tag of a TIFF's first IFD (meta.c: the orientation and the metadata blocks): its
 * type, count and the offset of its values (inside the file), and the byte order. */
typedef struct vki_tiff_field {
    unsigned type;
    uint64_t count;
    size_t off;
    bool le;
} vki_tiff_field;
/* 1 with *f filled, 0 where IFD0 has no such tag, -1 where the file is not a TIFF
 * or the tag's values lie outside it. */
int vki_tiff_field_find(const unsigned char *b, size_t len, unsigned tag, vki_tiff_field *f);

/* ---- EXIF trees (exif.c): IFD0's descriptive tags and the Exif, GPS and Interop IFDs
 * of a classic TIFF structure (a TIFF file, or the EXIF block of the other formats) */
enum { VKI_XI_IFD0, VKI_XI_EXIF, VKI_XI_GPS, VKI_XI_INTEROP, VKI_XI_N, VKI_XI_MAX = 512 };
typedef struct vki_xentry {
    unsigned tag, type;
    uint32_t count;
    const unsigned char *val; /* its values' bytes in the source; NULL: a pointer (sub) or the SHORT v */
    size_t n;                 /* their count */
    int sub;                  /* the IFD a pointer tag points to, else -1 */
    unsigned v;               /* val NULL and sub < 0: the value of a SHORT set by the caller */
    uint32_t at;              /* vki_exif_write: where the values went (n > 4) */
} vki_xentry;
typedef struct vki_xtree {
    vki_xentry e[VKI_XI_N][VKI_XI_MAX];
    unsigned n[VKI_XI_N]; /* entries an IFD (0: none) */
    int le;               /* the source's byte order */
} vki_xtree;
/* The tree of b (its IFD0's EXIF tags: 270 271 272 282 283 296 305 306 315 33432, the
 * first of each; the IFDs its pointers reach; an entry whose values lie outside b
 * left out). 0, or -1 where b is not a classic TIFF structure. t is large (malloc it);
 * its entries point into b. */
int vki_exif_tree_read(const unsigned char *b, size_t len, vki_xtree *t);
/* IFD k's entry of this tag (NULL: none). */
const vki_xentry *vki_exif_tree_find(const vki_xtree *t, int k, unsigned tag);
/* Leaves out IFD k's entries of this tag. */
void vki_exif_tree_drop(vki_xtree *t, int k, unsigned tag);
/* IFD0's entry of this tag as one SHORT v, in tag order (the orientation). */
void vki_exif_tree_set_short(vki_xtree *t, unsigned tag, unsigned v);
/* Bytes vki_exif_write writes: the IFDs whose bit is set in ifds (and that have
 * entries), then the values over 4 bytes of every IFD's entries, each at an even
 * offset. */
size_t vki_exif_size(const vki_xtree *t, unsigned ifds);
/* Writes them at dst (zeroed), which is offset base (even) of the structure, in byte
 * order le: ifd_off[k] where IFD k went (0: not written), each value's place in its
 * entry's at. */
void vki_exif_write(vki_xtree *t, unsigned ifds, unsigned char *dst, size_t base, int le, uint32_t ifd_off[VKI_XI_N]);
/* An entry as 12 bytes in byte order le (after vki_exif_write placed its values). */
void vki_exif_entry_put(const vki_xtree *t, const vki_xentry *e, unsigned char q[12], int le,
                        const uint32_t ifd_off[VKI_XI_N]);

/* ---- Photoshop image resources (exif.c): the "8BIM" blocks of a JPEG's APP13 and a
 * TIFF's tag 34377 (each: "8BIM", a big-endian id, a Pascal name padded to an even
 * size, a big-endian size, the data padded to an even size). */
enum { VKI_IRB_IPTC = 0x0404 }; /* the IPTC-IIM record (a TIFF's tag 33723 holds it too) */
/* The data of irb's first resource of this id (*len: its size); NULL where there is
 * none, or where the blocks before it are not well formed. */
const unsigned char *vki_irb_find(const unsigned char *irb, size_t n, unsigned id, size_t *len);
/* Whether irb is whole: well-formed blocks up to its end (n > 0; the last one's
 * padding byte may be missing). */
bool vki_irb_whole(const unsigned char *irb, size_t n);

/* PackBits (PSD, TIFF): unpacks b[*pos..len) into n bytes at dst, every step
 * bytes; 0 (*pos past the data used), 1 when the data end first, 2 when a run
 * goes past the n bytes. */
int vki_unpack_bits(const unsigned char *b, size_t len, size_t *pos, unsigned char *dst, size_t n, size_t step);

/* ---- byte readers for the decoders (the caller has checked the bounds) */
static inline uint32_t vki_rd16le(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t vki_rd32le(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint32_t vki_rd16be(const unsigned char *p) { return (uint32_t)p[0] << 8 | (uint32_t)p[1]; }
static inline uint32_t vki_rd32be(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
/* the same in the byte order le says (TIFF and EXIF structures) */
static inline uint32_t vki_rd16(const unsigned char *p, int le) { return le ? vki_rd16le(p) : vki_rd16be(p); }
static inline uint32_t vki_rd32(const unsigned char *p, int le) { return le ? vki_rd32le(p) : vki_rd32be(p); }

/* Allocates the pixel memory of a decoded image (vki_malloc_big, not zeroed) after
 * the caller's vki_check_dims: 0, or VKIMG_E_RUNTIME "NAME: out of memory". */
int vki_decoded_alloc(vkimg_image *out, uint32_t w, uint32_t h, int c, vkimg_fmt fmt, const char *name,
                      vkimg_err *e);
/* Shrink-on-load (vkimg_load_opts.min_size; JPEG by DCT scaling, WebP by libwebp's
 * rescaler): o->min_size is called with the stored size and the file's orientation,
 * and the largest of 8, 4, 2 is returned whose reduction (sides rounded up) keeps
 * the caller's minimum; 1 where there is none or no min_size. */
int vki_shrink_denom(const vkimg_load_opts *o, int w, int h, int orientation);
/* vki_decoded_alloc through the load options' allocator where there is one (and
 * it does not decline): the memory the decoder writes the image into. Free the
 * result with vkimg_image_free. */
int vki_decoded_alloc_opts(const vkimg_load_opts *o, vkimg_image *out, uint32_t w, uint32_t h, int c, vkimg_fmt fmt,
                           const char *name, vkimg_err *e);

/* WebP through libwebp (webp.c): lossy or lossless, RGB, or RGBA where the file has
 * alpha; of an animation the first frame on its transparent canvas (RGBA). With the
 * load options' allocator (o may be NULL) libwebp decodes a still image straight
 * into it (an animation's frame is copied there). */
int vki_webp_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                    vkimg_err *e);
int vki_webp_decode_opts(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels,
                         const vkimg_load_opts *o, vkimg_image *out, vkimg_err *e);

/* ---- encoders */

/* Encodes a U8 image at quality 1..100: 1-2 channels as a grayscale JPEG (alpha
 * dropped), 3-4 as YCbCr (alpha dropped) with 4:2:0 chroma subsampling below
 * quality 90 and 4:4:4 from 90 up. At most 65535x65535. *out is malloc()ed. Errors
 * name no file: the caller adds the path. */
int vki_jpeg_encode(const vkimg_image *im, int quality, unsigned char **out, size_t *outlen, vkimg_err *e);
/* The same on up to `threads` threads: an image of two bands (vki_jpeg_band_min
 * bytes of pixels each) or more is encoded in bands of MCU rows joined by restart
 * markers; the same pixels as one stream, and the same file for any thread count. */
int vki_jpeg_encode_ex(const vkimg_image *im, int quality, int threads, unsigned char **out, size_t *outlen,
                       vkimg_err *e);
extern size_t vki_jpeg_band_min; /* 4 MiB (tests set it lower) */
/* Entropy-codes a coded image (im->coded from vki_jpeg_coded_layout, its
 * coefficients filled by the device) into a JPEG file in *out (malloc()ed). */
int vki_jpeg_encode_coded(const vkimg_image *im, unsigned char **out, size_t *outlen, vkimg_err *e);

/* stb_image_write's BMP, TGA (RLE) and HDR writers (stb_impl.c, compiled static so
 * that none of stb's symbols leave the library): 1 on success, as stb returns.
 * write is called with the output in pieces, as stbi_write_func. kind is
 * VKIMG_FILE_BMP, VKIMG_FILE_TGA or VKIMG_FILE_HDR (data F32). */
typedef void vki_write_fn(void *ctx, void *data, int size);
int vki_stbiw_write(vkimg_file_kind kind, vki_write_fn *write, void *ctx, int w, int h, int c, const void *data);

/* Writes a NumPy .npy file (format 1.0, C order, header padded so the data starts at
 * a multiple of 64 bytes) atomically, like vkimg_save. descr is a NumPy type string
 * such as "|u1", "<u2", "<f4", "<u8"; nbytes must equal prod(shape) * itemsize.
 * ndim 0..32 (0 = a scalar). */
int vki_npy_save(const char *path, const char *descr, int ndim, const size_t *shape, const void *data,
                 size_t nbytes, vkimg_err *e);
/* The NumPy type string of a sample format in host byte order ("|u1", "<u2", "<f2",
 * "<f4", "<u4", "<u8" on little-endian hosts), NULL for an unknown format. */
const char *vki_npy_descr(vkimg_fmt f);

/* Encodes a U8, U16 or F32 image of 1-4 channels as a little-endian TIFF (tiff.c):
 * strips of about 256 KiB, Deflate with predictor 2 (integers) or 3 (floats) (or, with
 * deflate false, uncompressed: vki_tiff_encode_ex), alpha
 * as an unassociated extra sample; of m (NULL: none) the ICC profile as tag 34675, an
 * orientation other than 1 as tag 274, and the EXIF block's tree (exif.c): its IFD0
 * tags in the IFD (its resolution where it has XResolution and YResolution as one
 * RATIONAL each, else the writer's 72 pixels an inch), its Exif, GPS and Interop IFDs
 * pointed to from there; the strips compressed on up to `threads` threads (the
 * same file for any count). *out is malloc()ed. Errors name no file: the caller adds
 * the path. */
int vki_tiff_encode_ex(const vkimg_image *im, const vkimg_meta *m, bool deflate, int threads, unsigned char **out,
                       size_t *outlen, vkimg_err *e);
int vki_tiff_encode(const vkimg_image *im, const vkimg_meta *m, unsigned char **out, size_t *outlen, vkimg_err *e);
/* The same written to path atomically (vki_write_atomic_v) without joining it first:
 * an uncompressed file's pixel data is written from im as it is. Errors name path. */
int vki_tiff_save(const char *path, const vkimg_image *im, const vkimg_meta *m, bool deflate, int threads,
                  vkimg_err *e);

/* Encodes a U8 image as WebP (webp.c): lossy at quality 1..100, or lossless (the same
 * pixels back, the colour under alpha 0 too; an alpha all 255 is not kept: libwebp
 * marks the file opaque, which reads back RGB); gray as RGB, gray + alpha as RGBA
 * (WebP has no gray); at most 16383 pixels a side; threads > 1 lets libwebp use a second
 * thread. *out is malloc()ed. Errors name no file: the caller adds the path. */
int vki_webp_encode(const vkimg_image *im, int quality, bool lossless, int threads, unsigned char **out,
                    size_t *outlen, vkimg_err *e);
/* The channels a WebP of a c-channel image holds: gray as RGB, gray + alpha as RGBA. */
static inline int vki_webp_channels(int c) { return c <= 2 ? c + 2 : c; }
/* (webp.c) An 8-bit gray (1 channel) or gray + alpha (2) image widened for writers that hold
 * colour only (WebP, BMP): RGB, or RGBA with the alpha kept; vki_webp_channels(c)
 * samples a pixel, in memory from vki_malloc_big (free()), or NULL. */
unsigned char *vki_gray_widen(const vkimg_image *im);

#endif
