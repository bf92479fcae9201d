/* PNG files by hand for the I/O tests: a reader of the encoder's output (our own
 * inflate and unfilter), a builder of files of any kind and defect, and a
 * header-only file. */
#ifndef VKI_PNG_UTIL_H
#define VKI_PNG_UTIL_H

#include <stddef.h>
#include <stdint.h>

uint32_t be32(const unsigned char *p);
void put32(unsigned char *p, uint32_t v);
/* The Paeth predictor. */
unsigned paeth_t(int a, int b, int c);

/* Parses a PNG made by vki_png_encode: checks the chunk CRCs, IHDR, inflates the IDATs
 * and undoes the filters. Returns the raw rows (h * rowbytes, PNG byte order; palette
 * images: the indices) and the filter byte of each row; NULL on any defect. */
unsigned char *png_parse(const unsigned char *png, size_t len, int *w, int *h, int *depth, int *ctype,
                         unsigned char *filters, int max_rows, int *nidat);

/* What a hand-made PNG looks like (mk_png). */
typedef struct png_spec {
    int w, h, depth, ctype, interlace;
    const unsigned char *raw; /* the image's rows in PNG byte order, packed for depth < 8 */
    int filter;               /* 0..4: every row; 5: row k (counted over all passes) gets (k + fseed) % 5 */
    int fseed;
    int bad_filter_row;       /* > 0: row bad_filter_row - 1 has filter type 5 */
    const unsigned char *plte; /* nplte RGB entries, written when non-NULL */
    int nplte;
    const unsigned char *trns; /* ntrns bytes, written when non-NULL */
    int ntrns;
    int trns_after_idat;
    size_t idat_max;          /* split the zlib stream into IDATs of this size (0: one) */
    int empty_idats;          /* 1: empty IDAT chunks between and after the others; 2: also
                                 before the first (stb then memcpy()s to NULL, which UBSan
                                 stops at: not for the stb comparison) */
    int extra_bytes;          /* zero bytes appended to the uncompressed data */
    int bad_adler;            /* corrupt the zlib stream's Adler-32 */
    const char *before, *after; /* chunk types (5 data bytes) before the first / after the last IDAT */
    int no_iend;
} png_spec;

/* Channels of each PNG colour type (0 where there is none). */
extern const int png_chans[7];

/* Builds a PNG by hand (any filter, chunk order, defect); free() the result. */
unsigned char *mk_png(const png_spec *s, size_t *len);

/* A PNG made of signature + IHDR (correct CRC) + IEND, no pixel data; returns its
 * length (45 bytes). */
size_t craft_png(unsigned char *b, uint32_t w, uint32_t h, int color);

#endif
