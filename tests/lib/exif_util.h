/* EXIF blocks and ICC profiles built by hand for the metadata tests (test_meta,
 * test_webp). */
#ifndef VKI_EXIF_UTIL_H
#define VKI_EXIF_UTIL_H

#include <stddef.h>

/* A TIFF block (little-endian when le, else big-endian): IFD0 (Make, Orientation
 * unless orient == 0, XResolution, ResolutionUnit, Exif IFD pointer) -> IFD1 (a JPEG
 * thumbnail by offset and length, its bytes from t_rand(seed)), an Exif sub-IFD, data
 * referenced by offset: every offset matters. orient_type 3 = SHORT (valid). malloc()ed
 * (free it); *len its size. */
unsigned char *t_exif_block(int le, int orient, unsigned orient_type, unsigned long long *seed, size_t *len);

/* n bytes from t_rand(seed) under a valid-looking ICC header (what fits of its 128
 * bytes) of data colour space cs ("RGB " or "GRAY"). malloc()ed (free it). */
unsigned char *t_icc_profile(size_t n, const char *cs, unsigned long long *seed);

#endif
