/* A growable byte buffer for building test files (PNG chunks, headers): the
 * writers exit on out of memory (tests only). */
#ifndef VKI_TEST_BBUF_H
#define VKI_TEST_BBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct bbuf {
    unsigned char *p;
    size_t n, cap;
} bbuf;

void bb_put(bbuf *b, const void *d, size_t n);
void bb_u8(bbuf *b, unsigned v);
void bb_le16(bbuf *b, unsigned v);
void bb_le32(bbuf *b, uint32_t v);
void bb_be16(bbuf *b, unsigned v);
void bb_be32(bbuf *b, uint32_t v);
void bb_str(bbuf *b, const char *s);
/* A RIFF chunk (WebP): its type, n bytes of data, padded to an even size. */
void bb_riff_chunk(bbuf *b, const char *type, const void *d, size_t n);

#endif
