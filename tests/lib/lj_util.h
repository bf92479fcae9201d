/* JPEGs through libjpeg's own API for the tests, where TurboJPEG has no call:
 * files with any sampling factors, and libjpeg's own decode as a reference; and
 * where a JPEG's marker segments are, for the tests that cut or splice files. */
#ifndef VKI_LJ_UTIL_H
#define VKI_LJ_UTIL_H

#include "vkimg/vkimg.h"

#include <stddef.h>

/* A U8 image as a JPEG through libjpeg's own API: RGB (3 channels) or plain
 * Adobe CMYK (4: Adobe marker, transform 0), at this quality, with the sampling
 * factors of the first three components given (hv[k] = h * 16 + v: also those
 * TurboJPEG has no TJSAMP for; NULL: libjpeg's defaults), progressive or not
 * (malloc'ed; *n its size). */
unsigned char *lj_encode(const vkimg_image *im, int quality, const int hv[3], int progressive, size_t *n);
/* libjpeg's own decode of a JPEG to RGB at 1/denom, with its defaults (those
 * TurboJPEG keeps): 0, or -1 (out empty) where libjpeg fails. */
int lj_decode_rgb(const unsigned char *jpg, size_t n, int denom, vkimg_image *out);

/* The offset of the k-th (0: the first) marker m (0xFF m) of a JPEG, walked as a
 * decoder walks it: from after SOI segment by segment, each scan's entropy-coded
 * data skipped up to the next marker that is not RSTn. 0 where there is none before
 * EOI or the end, or where the walk meets a byte that is not a marker. */
size_t lj_marker(const unsigned char *jpg, size_t n, unsigned m, int k);
/* The offset of the first scan's entropy-coded data (after its SOS segment); 0
 * where there is none. */
size_t lj_scan_data(const unsigned char *jpg, size_t n);
#endif
