#include "bbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bb_put(bbuf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, d, n);
    b->n += n;
}

void bb_u8(bbuf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    bb_put(b, &c, 1);
}

void bb_le16(bbuf *b, unsigned v) { bb_u8(b, v), bb_u8(b, v >> 8); }
void bb_le32(bbuf *b, uint32_t v) { bb_le16(b, v & 0xffff), bb_le16(b, v >> 16); }
void bb_be16(bbuf *b, unsigned v) { bb_u8(b, v >> 8), bb_u8(b, v); }
void bb_be32(bbuf *b, uint32_t v) { bb_be16(b, v >> 16), bb_be16(b, v & 0xffff); }
void bb_str(bbuf *b, const char *s) { bb_put(b, s, strlen(s)); }

void bb_riff_chunk(bbuf *b, const char *type, const void *d, size_t n)
{
    bb_put(b, type, 4);
    bb_le32(b, (uint32_t)n);
    bb_put(b, d, n);
    if (n & 1)
        bb_u8(b, 0);
}
