/* CCITT bilevel decoding for TIFF: compression 2 (modified Huffman, each row
 * byte-aligned, no EOLs), 3 (ITU-T T.4: an EOL before each row; T4Options bit 0
 * for 2D coding with a tag bit after each EOL) and 4 (ITU-T T.6: 2D rows, no EOLs).
 * Pure: bytes in, bits out; thread-safe. */
#ifndef VKI_CCITT_H
#define VKI_CCITT_H

#include <stddef.h>
#include <stdint.h>

/* Decodes `rows` rows of `width` pixels from src[0..n) (MSB first: FillOrder 2
 * data is bit-reversed by the caller) into dst, row_bytes (>= (width + 7) / 8) a
 * row: black runs 1 bits, white 0, MSB first, as libtiff gives them whatever the
 * photometric interpretation; the bits past the width 0. compression is the TIFF
 * tag's 2, 3 or 4, options T4Options (3) or T6Options (4). NULL, or the reason
 * (in why or a constant): a bad code, a run past the row's end, an EOL or EOFB
 * inside the rows, uncompressed mode, data ending before the last row, more runs
 * than libtiff keeps a row, a code making libtiff read past its reference row. Data after
 * the last row (RTC, EOFB, padding) is not read. */
const char *vki_ccitt_decode(const unsigned char *src, size_t n, unsigned char *dst, uint32_t width, uint32_t rows,
                             size_t row_bytes, unsigned compression, uint32_t options, char why[256]);

/* The fewest bits a row of `width` pixels takes in compression 2, 3 (with options)
 * or 4: a lower bound for sizing checks (T.6: 1 bit, a row like the one above). */
uint64_t vki_ccitt_min_row_bits(uint32_t width, unsigned compression, uint32_t options);

#endif
