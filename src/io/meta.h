/* Image metadata carried from input to output: the ICC colour profile, the EXIF block
 * and its orientation, the XMP packet, the Photoshop image resources (IPTC). Read from
 * JPEG (APP1 "Exif", APP1 XMP, APP2 "ICC_PROFILE", APP13 "Photoshop 3.0"), PNG (iCCP,
 * eXIf, iTXt "XML:com.adobe.xmp"), WebP (ICCP, EXIF, XMP) and TIFF (its tags);
 * inserted into encoded PNG, JPEG and WebP files. Pure functions on bytes in memory:
 * no file I/O, no Vulkan, no global state (thread-safe). Errors name no file: the
 * caller adds the path.
 *
 * Reading policy (vki_meta_read_*): metadata is best effort, the image decoders judge
 * the file. Malformed metadata is ignored and its field left empty: an ICC profile
 * whose JPEG segments are missing, duplicated or inconsistent, an iCCP whose zlib
 * stream or CRC is bad, an "Exif" APP1 or eXIf that does not hold a TIFF block, a
 * second EXIF block (the first one counts). VKIMG_E_RUNTIME only for: a buffer that
 * is not a JPEG / PNG at all, a metadata segment or chunk that runs past the end of
 * the buffer (the file is cut off where it matters), an iCCP profile that inflates
 * to more than VKI_ICC_MAX bytes, out of memory. After an error *m is empty
 * (vki_meta_free'd); a caller that wants metadata only when it is there may ignore
 * the error. Segments and chunks that run past the end but are not metadata end the
 * scan without an error.
 *
 * Byte identity: what is read is kept exactly (the ICC profile as embedded, the EXIF
 * TIFF block from its "II*\0" / "MM\0*" header on), and the writers embed it exactly,
 * so read(add_meta(file, m)) gives back m's bytes. */
#ifndef VKI_META_H
#define VKI_META_H

#include "vkimg/vkimg.h"

#include <stddef.h>

/* The largest ICC profile a PNG iCCP chunk may inflate to (its size is not stored). */
#define VKI_ICC_MAX ((size_t)64 << 20)
/* The largest EXIF block a JPEG can hold: one APP1 segment of 65535 - 2 bytes, less
 * the 6 of "Exif\0\0". */
#define VKI_JPEG_EXIF_MAX ((size_t)65527)
/* ICC profile bytes per JPEG APP2 segment: 65535 - 2 (length) - 14 ("ICC_PROFILE\0",
 * sequence number, count); at most 255 segments. */
#define VKI_JPEG_ICC_CHUNK ((size_t)65519)
#define VKI_JPEG_ICC_MAX (255 * VKI_JPEG_ICC_CHUNK)
/* The largest XMP packet a JPEG's one standard APP1 segment holds: 65535 - 2, less
 * the 29 bytes of "http://ns.adobe.com/xap/1.0/\0" (larger packets need XMP's
 * extended segments, which vkimg does not write). */
#define VKI_JPEG_XMP_MAX ((size_t)65504)
/* Photoshop resource bytes per JPEG APP13 segment: 65535 - 2, less the 14 of
 * "Photoshop 3.0\0". */
#define VKI_JPEG_IPTC_CHUNK ((size_t)65519)
/* The largest XMP packet a compressed PNG iTXt chunk may inflate to. */
#define VKI_XMP_MAX ((size_t)64 << 20)

/* The metadata record is the public vkimg_meta (include/vkimg/vkimg.h). */
typedef vkimg_meta vki_meta;

/* Frees the buffers and resets *m to empty (orientation 1). NULL is fine. */
void vki_meta_free(vki_meta *m);

/* Metadata of a JPEG: the markers from SOI up to SOS/EOI are walked (every length
 * bounds-checked). The first APP1 "Exif\0\0" whose payload is a TIFF block gives
 * exif; the first APP1 "http://ns.adobe.com/xap/1.0/\0" with a packet after it gives
 * xmp (XMP's extended segments are not read); the APP13 "Photoshop 3.0\0" segments'
 * payloads, joined in file order, give iptc where they are whole "8BIM" blocks; APP2 "ICC_PROFILE\0" segments (sequence
 * number 1..count, count the same in all, each number exactly once) are joined in
 * sequence order into icc. *m is
 * overwritten (not freed first). See the reading policy above. */
int vki_meta_read_jpeg(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e);
/* Metadata of a PNG: the chunks after the signature up to IEND (every length
 * bounds-checked, CRCs of iCCP and eXIf checked). iCCP before IDAT (name, NUL,
 * compression method 0, a zlib stream inflated with libdeflate up to VKI_ICC_MAX)
 * gives icc and icc_name; the first eXIf anywhere (PNG puts no order on it: writers
 * such as libpng may put it after IDAT) gives exif; the first iTXt "XML:com.adobe.xmp"
 * anywhere (CRC checked; its text as stored, or zlib-inflated where its compression
 * flag is 1, up to VKI_XMP_MAX) gives xmp. */
int vki_meta_read_png(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e);
/* One of the four (JPEG, PNG, WebP, TIFF) by the file's signature; any other file gives 0 and an empty *m. */
int vki_meta_read(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e);

/* (exif.c) Byte order of a TIFF header (an EXIF block): 1 little-endian ("II", 42), 0
 * big-endian ("MM", 42), -1 not a TIFF header (or under 8 bytes). */
int vki_exif_byte_order(const unsigned char *t, size_t n);
/* The orientation tag (0x0112, type SHORT, count 1) of IFD0 of a TIFF block (II or MM
 * byte order): 1..8; 1 when the block, IFD0 or the tag is absent or malformed, or the
 * value is outside 1..8. IFD0's entry count is bounded by the block's size (a count
 * claiming more entries than fit is cut to the entries that do). */
int vki_exif_orientation(const unsigned char *exif, size_t len);
/* Rewrites the orientation tag's value in place (same length, the block's byte
 * order): returns 1 when rewritten, 0 when there is no such tag (nothing to change:
 * absent means 1), -1 for a value outside 1..8 (nothing changed). */
int vki_exif_set_orientation(unsigned char *exif, size_t len, int value);

/* Whether an ICC profile may describe an image of c channels (colour and alpha): a
 * profile header (at least 128 bytes, 'acsp' at byte 36) whose data colour space
 * (bytes 16..19) is 'GRAY' for 1 or 2 channels, 'RGB ' for 3 or 4. PNG (iCCP) and
 * the ICC specification allow no other; a CMYK profile read from a CMYK JPEG that
 * was converted to RGB on load, or an RGB one after `gray`, does not fit. Bytes
 * that are not a profile header are not judged (1): they go out as they came in. */
int vki_icc_fits(const unsigned char *icc, size_t len, int c);

/* Flags for *dropped of the writers: metadata left out because the format cannot
 * hold it (the file is still written, without that item). */
#define VKI_META_DROPPED_EXIF 1u /* JPEG: EXIF block over VKI_JPEG_EXIF_MAX; PNG: over 2^31-1 */
#define VKI_META_DROPPED_ICC 2u  /* JPEG: ICC profile over VKI_JPEG_ICC_MAX; PNG: iCCP over 2^31-1 */
#define VKI_META_DROPPED_XMP 4u  /* JPEG: XMP packet over VKI_JPEG_XMP_MAX; PNG: iTXt over 2^31-1 */

/* The XMP packet's tiff:Orientation (the property as an attribute, tiff:Orientation="N"
 * or '...', or as an element, <tiff:Orientation>N</...>, N one digit 1..8, blanks
 * allowed around '=' and inside the element): the value of the first one written so
 * (a malformed one before it is passed over), 0 where there is none. vki_xmp_set_orientation rewrites
 * every such value in place (one byte each): the count rewritten, -1 for a value
 * outside 1..8 (nothing changed). */
int vki_xmp_orientation(const unsigned char *xmp, size_t len);
int vki_xmp_set_orientation(unsigned char *xmp, size_t len, int value);

/* Inserts m's ICC profile, EXIF block and XMP packet into an encoded PNG: a new
 * malloc()ed file in *out. iCCP (m->icc_name or "ICC Profile", compression method 0,
 * zlib by libdeflate) goes right after IHDR, eXIf after it, then the XMP as an
 * uncompressed iTXt "XML:com.adobe.xmp" (no language, no translated keyword), all
 * before PLTE and IDAT. The input's own iCCP and sRGB chunks are dropped when m has an
 * ICC profile (PNG allows not both), its eXIf chunks when m has an EXIF block, its
 * XMP iTXt chunks when m has XMP; every other chunk is copied as it is, up
 * to and including IEND. m's items of length 0 are absent. The EXIF block must begin
 * with a TIFF header ("II*\0" / "MM\0*", as PNG requires). dropped (may be NULL)
 * receives VKI_META_DROPPED_* flags. Errors: VKIMG_E_RUNTIME for a malformed input
 * PNG or out of memory, VKIMG_E_USAGE for an EXIF block without a TIFF header or a
 * bad icc_name. */
int vki_png_add_meta(const unsigned char *png, size_t len, const vki_meta *m, unsigned char **out, size_t *outlen,
                     unsigned *dropped, vkimg_err *e);
/* The same for a JPEG: after SOI, and after a JFIF APP0 (and JFXX APP0s) right behind
 * it, come APP1 "Exif\0\0" + EXIF block (dropped, with VKI_META_DROPPED_EXIF, when it
 * is over VKI_JPEG_EXIF_MAX bytes), APP1 "http://ns.adobe.com/xap/1.0/\0" + XMP packet
 * (dropped, with VKI_META_DROPPED_XMP, over VKI_JPEG_XMP_MAX), then the ICC profile as
 * APP2 "ICC_PROFILE\0" segments of at most VKI_JPEG_ICC_CHUNK bytes numbered 1..n
 * (dropped, with VKI_META_DROPPED_ICC, over VKI_JPEG_ICC_MAX), then the Photoshop
 * resources as APP13 "Photoshop 3.0\0" segments of at most VKI_JPEG_IPTC_CHUNK bytes.
 * The input's own "Exif" APP1 / XMP APP1 / ICC APP2 / Photoshop APP13 segments before
 * SOS are dropped when m has a replacement; everything else is copied as it is. */
int vki_jpeg_add_meta(const unsigned char *jpg, size_t len, const vki_meta *m, unsigned char **out, size_t *outlen,
                      unsigned *dropped, vkimg_err *e);

/* Metadata of a WebP: the RIFF chunks up to the RIFF size walked (every
 * length bounds-checked); the first ICCP chunk gives icc, the first EXIF chunk whose
 * payload is a TIFF block (after an "Exif\0\0" some writers put first) gives exif,
 * the first non-empty "XMP " chunk xmp.
 * Reading policy as above. */
int vki_meta_read_webp(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e);
/* Inserts m's ICC profile (ICCP), EXIF block (EXIF, the TIFF block as it is) and XMP
 * packet ("XMP ") into an encoded WebP through libwebpmux, which makes the extended
 * format's VP8X chunk (its flags and canvas size) and replaces the input's own ICCP /
 * EXIF / XMP. dropped (may be NULL) is set to 0: a WebP holds them up to 4 GiB. Errors as vki_png_add_meta's. */
int vki_webp_add_meta(const unsigned char *webp, size_t len, const vki_meta *m, unsigned char **out, size_t *outlen,
                      unsigned *dropped, vkimg_err *e);

/* Metadata of a TIFF (its first IFD, vki_tiff_field_find): the ICC profile (tag
 * 34675) and the orientation (tag 274, SHORT, 1..8; else 1). Where IFD0 of a classic
 * TIFF points to an Exif or GPS IFD, exif is the EXIF block made of them (meta.c
 * tiff_exif: IFD0's descriptive tags, its orientation entry as read, the Exif, GPS
 * and Interop IFDs' entries, in the file's byte order, at most VKI_JPEG_EXIF_MAX
 * bytes; else NULL). Tag 700 (XMLPacket, BYTE or UNDEFINED) gives xmp, tag 34377
 * (Photoshop, BYTE or UNDEFINED) iptc, or without it tag 33723 (IPTC-NAA: LONG, BYTE
 * or UNDEFINED) iptc as one "8BIM" 0x0404 resource of its bytes. A profile whose bytes lie outside the file is VKIMG_E_RUNTIME; a
 * file that is not a TIFF too. */
int vki_meta_read_tiff(const unsigned char *b, size_t len, vki_meta *m, vkimg_err *e);

#endif
