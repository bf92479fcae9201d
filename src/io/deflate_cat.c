/* Joining raw deflate streams (RFC 1951) into one: a stream made alone ends with
 * a final block somewhere inside its last byte. To continue it with another
 * stream, that block's BFINAL bit is cleared and an empty stored block after its
 * end brings the stream to a byte boundary (what zlib's Z_SYNC_FLUSH writes).
 * libdeflate reports neither position, so the stream is walked: every block's
 * header and Huffman codes are read and its symbols decoded (nothing is
 * written), to find where its last block starts and ends. */
#include "io/io_priv.h"

#include <stdint.h>
#include <string.h>

#define MAXBITS 15
#define TBITS 10 /* codes up to this length are found in one table look-up */

typedef struct {
    const unsigned char *p;
    size_t n, pos; /* the next byte to load into buf */
    uint64_t buf;
    unsigned cnt;
    size_t over; /* bytes read past the end (as zeros) */
} bits;

static inline void refill(bits *b)
{
    if (b->pos + 8 <= b->n) { /* a whole word (little-endian: the bytes in order) */
        uint64_t v;
        memcpy(&v, b->p + b->pos, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        b->buf |= v << b->cnt;
        b->pos += (63 - b->cnt) / 8;
        b->cnt |= 56;
        return;
    }
    while (b->cnt <= 56) {
        uint64_t v = 0;
        if (b->pos < b->n)
            v = b->p[b->pos];
        else
            b->over++;
        b->pos++;
        b->buf |= v << b->cnt;
        b->cnt += 8;
    }
}

static inline unsigned take(bits *b, unsigned k) /* k <= 32, after a refill */
{
    unsigned v = (unsigned)(b->buf & ((1ull << k) - 1));
    b->buf >>= k;
    b->cnt -= k;
    return v;
}

static inline size_t bitpos(const bits *b)
{
    return b->pos * 8 - b->cnt;
}

typedef struct {
    uint16_t fast[1 << TBITS]; /* sym << 4 | len; 0: no code, 0xffff: longer than TBITS */
    uint16_t count[MAXBITS + 1];
    uint16_t sym[320]; /* symbols ordered by code */
} huff;

/* Builds the decoding tables of n code lengths; false for an over-subscribed set. */
static bool huff_build(huff *h, const unsigned char *len, unsigned n)
{
    uint16_t offs[MAXBITS + 2];
    memset(h->count, 0, sizeof h->count);
    for (unsigned s = 0; s < n; s++)
        h->count[len[s]]++;
    h->count[0] = 0;
    int left = 1;
    for (int l = 1; l <= MAXBITS; l++) {
        left = 2 * left - h->count[l];
        if (left < 0)
            return false;
    }
    offs[1] = 0;
    for (int l = 1; l <= MAXBITS; l++)
        offs[l + 1] = (uint16_t)(offs[l] + h->count[l]);
    for (unsigned s = 0; s < n; s++)
        if (len[s])
            h->sym[offs[len[s]]++] = (uint16_t)s;
    memset(h->fast, 0, sizeof h->fast);
    unsigned code = 0, k = 0;
    for (int l = 1; l <= MAXBITS; l++) {
        for (unsigned i = 0; i < h->count[l]; i++, k++, code++) {
            unsigned rev = 0;
            for (int j = 0; j < l; j++)
                rev |= ((code >> j) & 1u) << (l - 1 - j);
            if (l <= TBITS) {
                for (unsigned r = rev; r < (1u << TBITS); r += 1u << l)
                    h->fast[r] = (uint16_t)(h->sym[k] << 4 | (unsigned)l);
            } else {
                h->fast[rev & ((1u << TBITS) - 1)] = 0xffff;
            }
        }
        code <<= 1;
    }
    return true;
}

/* The next symbol (after a refill); -1 where the bits are no code. */
static inline int decode(bits *b, const huff *h)
{
    unsigned e = h->fast[b->buf & ((1u << TBITS) - 1)];
    if (e && e != 0xffff) {
        take(b, e & 15);
        return (int)(e >> 4);
    }
    if (!e)
        return -1;
    /* canonical decoding a bit at a time (as zlib's puff.c) */
    int code = 0, first = 0, index = 0;
    for (int l = 1; l <= MAXBITS; l++) {
        code |= (int)((b->buf >> (l - 1)) & 1u);
        int count = h->count[l];
        if (code - count < first) {
            take(b, (unsigned)l);
            return h->sym[index + (code - first)];
        }
        index += count;
        first = (first + count) << 1;
        code <<= 1;
    }
    return -1;
}

static const uint8_t len_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint8_t dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                        6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

/* Reads a Huffman-coded block's symbols up to its end-of-block code. */
static bool walk_codes(bits *b, const huff *lit, const huff *dist)
{
    for (;;) {
        if (b->cnt < 48) /* a length and distance take at most 48 bits */
            refill(b);
        int s = decode(b, lit);
        if (s < 256) {
            if (s < 0 || b->over > 8) /* (zeros past the end may read as literals) */
                return false;
            continue;
        }
        if (s == 256)
            return true;
        s -= 257;
        if (s >= 29)
            return false;
        take(b, len_extra[s]);
        int d = decode(b, dist);
        if (d < 0 || d >= 30)
            return false;
        take(b, dist_extra[d]);
        if (b->over > 8)
            return false;
    }
}

static bool dynamic_tables(bits *b, huff *lit, huff *dist)
{
    static const uint8_t order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };
    unsigned char len[320];
    refill(b);
    unsigned nlen = take(b, 5) + 257, ndist = take(b, 5) + 1, ncode = take(b, 4) + 4;
    if (nlen > 286 || ndist > 30)
        return false;
    memset(len, 0, 19);
    for (unsigned i = 0; i < ncode; i++) {
        refill(b);
        len[order[i]] = (unsigned char)take(b, 3);
    }
    huff *lc = lit; /* the code-length code, in lit's place until the lengths are read */
    if (!huff_build(lc, len, 19))
        return false;
    unsigned char lens[320];
    for (unsigned i = 0; i < nlen + ndist;) {
        refill(b);
        int s = decode(b, lc);
        if (s < 0)
            return false;
        if (s < 16) {
            lens[i++] = (unsigned char)s;
            continue;
        }
        unsigned rep, v = 0;
        if (s == 16) {
            if (i == 0)
                return false;
            v = lens[i - 1];
            rep = 3 + take(b, 2);
        } else if (s == 17) {
            rep = 3 + take(b, 3);
        } else {
            rep = 11 + take(b, 7);
        }
        if (i + rep > nlen + ndist)
            return false;
        while (rep--)
            lens[i++] = (unsigned char)v;
    }
    if (!lens[256])
        return false; /* no end-of-block code */
    return huff_build(lit, lens, nlen) && huff_build(dist, lens + nlen, ndist);
}

bool vki_deflate_unfinal(unsigned char *s, size_t n, size_t *newlen)
{
    huff lit, dist;
    bits b = { .p = s, .n = n };
    size_t hdr = 0, end = 0;
    for (;;) {
        refill(&b);
        hdr = bitpos(&b);
        unsigned last = take(&b, 1), type = take(&b, 2);
        if (type == 0) {
            size_t at = (bitpos(&b) + 7) / 8;
            if (at + 4 > n)
                return false;
            unsigned len = s[at] | (unsigned)s[at + 1] << 8, nlen = s[at + 2] | (unsigned)s[at + 3] << 8;
            if ((len ^ 0xffffu) != nlen || at + 4 + len > n)
                return false;
            b.pos = at + 4 + len;
            b.buf = 0;
            b.cnt = 0;
        } else if (type == 1) {
            unsigned char l[320];
            memset(l, 8, 144);
            memset(l + 144, 9, 112);
            memset(l + 256, 7, 24);
            memset(l + 280, 8, 8);
            memset(l + 288, 5, 30);
            if (!huff_build(&lit, l, 288) || !huff_build(&dist, l + 288, 30) || !walk_codes(&b, &lit, &dist))
                return false;
        } else if (type == 2) {
            if (!dynamic_tables(&b, &lit, &dist) || !walk_codes(&b, &lit, &dist))
                return false;
        } else {
            return false;
        }
        if (b.over > 8)
            return false;
        if (last) {
            end = bitpos(&b);
            break;
        }
        if (bitpos(&b) >= 8 * n)
            return false; /* the stream ended without a final block */
    }
    if ((end + 7) / 8 != n)
        return false; /* the walk does not end where the stream does */
    s[hdr / 8] &= (unsigned char)~(1u << (hdr % 8));
    if (end % 8)
        s[end / 8] &= (unsigned char)((1u << (end % 8)) - 1); /* the bits after the end: zero */
    /* an empty stored block: 3 header bits (not final, type 0), to the byte, 0000 ffff */
    size_t at = (end + 3 + 7) / 8;
    for (size_t i = n; i < at; i++)
        s[i] = 0;
    s[at] = 0;
    s[at + 1] = 0;
    s[at + 2] = 0xff;
    s[at + 3] = 0xff;
    *newlen = at + 4;
    return true;
}
