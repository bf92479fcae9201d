/* PNG files by hand for the I/O tests (see png_util.h). */
#include "png_util.h"
#include "bbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

const int png_chans[7] = { 1, 0, 3, 1, 2, 0, 4 };

uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

unsigned paeth_t(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return (unsigned)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

unsigned char *png_parse(const unsigned char *png, size_t len, int *w, int *h, int *depth, int *ctype,
                         unsigned char *filters, int max_rows, int *nidat)
{
    if (len < 8 || memcmp(png, "\x89PNG\r\n\x1a\n", 8))
        return NULL;
    size_t pos = 8, zn = 0;
    unsigned char *z = malloc(len);
    int seen_end = 0;
    *nidat = 0;
    while (z && pos + 12 <= len) {
        uint32_t n = be32(png + pos);
        if (pos + 12 + n > len)
            break;
        const unsigned char *type = png + pos + 4, *data = png + pos + 8;
        if (libdeflate_crc32(0, type, 4 + n) != be32(data + n)) {
            fprintf(stderr, "  bad CRC in %.4s\n", (const char *)type);
            free(z);
            return NULL;
        }
        if (!memcmp(type, "IHDR", 4) && n == 13) {
            *w = (int)be32(data);
            *h = (int)be32(data + 4);
            *depth = data[8];
            *ctype = data[9];
            if (data[10] || data[11] || data[12]) {
                free(z);
                return NULL;
            }
        } else if (!memcmp(type, "IDAT", 4)) {
            memcpy(z + zn, data, n);
            zn += n;
            ++*nidat;
        } else if (!memcmp(type, "IEND", 4)) {
            seen_end = pos + 12 == len;
        }
        pos += 12 + n;
    }
    const int *chans = png_chans; /* palette: one index a pixel */
    if (!z || !seen_end || *ctype > 6 || !chans[*ctype] || *h > max_rows) {
        free(z);
        return NULL;
    }
    size_t bpp = (size_t)chans[*ctype] * (*depth / 8), rowbytes = (size_t)*w * bpp;
    size_t rawlen = (rowbytes + 1) * (size_t)*h, got = 0;
    unsigned char *raw = malloc(rawlen), *img = malloc(rowbytes * (size_t)*h);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    int ok = raw && img && d && libdeflate_zlib_decompress(d, z, zn, raw, rawlen, &got) == LIBDEFLATE_SUCCESS &&
             got == rawlen;
    libdeflate_free_decompressor(d);
    free(z);
    for (int y = 0; ok && y < *h; y++) {
        const unsigned char *f = raw + (size_t)y * (rowbytes + 1);
        unsigned char *cur = img + (size_t)y * rowbytes, *prev = y ? cur - rowbytes : NULL;
        filters[y] = f[0];
        for (size_t i = 0; i < rowbytes; i++) {
            int a = i >= bpp ? cur[i - bpp] : 0, b = prev ? prev[i] : 0, c = prev && i >= bpp ? prev[i - bpp] : 0;
            int pr;
            switch (f[0]) {
            case 0: pr = 0; break;
            case 1: pr = a; break;
            case 2: pr = b; break;
            case 3: pr = (a + b) / 2; break;
            case 4: pr = (int)paeth_t(a, b, c); break;
            default: ok = 0; pr = 0; break;
            }
            cur[i] = (unsigned char)(f[1 + i] + pr);
        }
    }
    free(raw);
    if (!ok) {
        free(img);
        return NULL;
    }
    return img;
}

void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

size_t craft_png(unsigned char *b, uint32_t w, uint32_t h, int color)
{
    memcpy(b, "\x89PNG\r\n\x1a\n", 8);
    put32(b + 8, 13);
    memcpy(b + 12, "IHDR", 4);
    put32(b + 16, w);
    put32(b + 20, h);
    b[24] = 8;
    b[25] = (unsigned char)color;
    b[26] = b[27] = b[28] = 0;
    put32(b + 29, libdeflate_crc32(0, b + 12, 17));
    put32(b + 33, 0);
    memcpy(b + 37, "IEND", 4);
    put32(b + 41, libdeflate_crc32(0, b + 37, 4));
    return 45;
}

static void bb_chunk(bbuf *b, const char *type, const void *d, size_t n)
{
    unsigned char h[8], c[4];
    put32(h, (uint32_t)n);
    memcpy(h + 4, type, 4);
    size_t at = b->n;
    bb_put(b, h, 8);
    bb_put(b, d, n);
    put32(c, libdeflate_crc32(0, b->p + at + 4, 4 + n));
    bb_put(b, c, 4);
}

/* Filters h rows of rb bytes (pixel size bpp for the filters) into z. */
static void filter_rows(bbuf *z, const unsigned char *rows, size_t rb, int h, size_t bpp, const png_spec *s, int *k)
{
    unsigned char *zero = calloc(1, rb + 1), *line = malloc(rb + 1);
    for (int y = 0; y < h; y++, ++*k) {
        const unsigned char *cur = rows + (size_t)y * rb, *prev = y ? cur - rb : zero;
        int f = s->filter <= 4 ? s->filter : (*k + s->fseed) % 5;
        if (s->bad_filter_row == *k + 1)
            f = 5;
        line[0] = (unsigned char)f;
        for (size_t i = 0; i < rb; i++) {
            int a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0, p;
            switch (f) {
            case 1: p = a; break;
            case 2: p = b; break;
            case 3: p = (a + b) / 2; break;
            case 4: p = (int)paeth_t(a, b, c); break;
            default: p = 0; break;
            }
            line[1 + i] = (unsigned char)(cur[i] - p);
        }
        bb_put(z, line, rb + 1);
    }
    free(zero);
    free(line);
}

unsigned char *mk_png(const png_spec *s, size_t *len)
{
    const int bits = png_chans[s->ctype] * s->depth;
    const size_t rb = ((size_t)s->w * bits + 7) / 8, bpp = bits >= 8 ? (size_t)bits / 8 : 1;
    bbuf z = { 0 }, out = { 0 };
    int k = 0;
    if (!s->interlace) {
        filter_rows(&z, s->raw, rb, s->h, bpp, s, &k);
    } else { /* Adam7, whole bytes per pixel (depth >= 8) */
        static const int xo[7] = { 0, 4, 0, 2, 0, 1, 0 }, yo[7] = { 0, 0, 4, 0, 2, 0, 1 };
        static const int xs[7] = { 8, 8, 4, 4, 2, 2, 1 }, ys[7] = { 8, 8, 8, 4, 4, 2, 2 };
        for (int p = 0; p < 7; p++) {
            int pw = (s->w - xo[p] + xs[p] - 1) / xs[p], ph = (s->h - yo[p] + ys[p] - 1) / ys[p];
            if (pw <= 0 || ph <= 0)
                continue;
            unsigned char *sub = malloc((size_t)pw * ph * bpp);
            for (int y = 0; y < ph; y++)
                for (int x = 0; x < pw; x++)
                    memcpy(sub + ((size_t)y * pw + x) * bpp,
                           s->raw + (size_t)(yo[p] + y * ys[p]) * rb + (size_t)(xo[p] + x * xs[p]) * bpp, bpp);
            filter_rows(&z, sub, (size_t)pw * bpp, ph, bpp, s, &k);
            free(sub);
        }
    }
    for (int i = 0; i < s->extra_bytes; i++)
        bb_put(&z, "", 1);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
    size_t cap = libdeflate_zlib_compress_bound(c, z.n);
    unsigned char *zd = malloc(cap);
    size_t zn = libdeflate_zlib_compress(c, z.p, z.n, zd, cap);
    libdeflate_free_compressor(c);
    if (s->bad_adler)
        zd[zn - 1] ^= 0x5a;

    bb_put(&out, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ih[13];
    put32(ih, (uint32_t)s->w);
    put32(ih + 4, (uint32_t)s->h);
    ih[8] = (unsigned char)s->depth;
    ih[9] = (unsigned char)s->ctype;
    ih[10] = ih[11] = 0;
    ih[12] = (unsigned char)s->interlace;
    bb_chunk(&out, "IHDR", ih, 13);
    if (s->before)
        bb_chunk(&out, s->before, "hello", 5);
    if (s->plte)
        bb_chunk(&out, "PLTE", s->plte, (size_t)s->nplte * 3);
    if (s->trns && !s->trns_after_idat)
        bb_chunk(&out, "tRNS", s->trns, (size_t)s->ntrns);
    size_t step = s->idat_max ? s->idat_max : zn;
    for (size_t off = 0; off < zn; off += step) {
        if (s->empty_idats > (off == 0))
            bb_chunk(&out, "IDAT", "", 0);
        bb_chunk(&out, "IDAT", zd + off, zn - off < step ? zn - off : step);
    }
    if (s->empty_idats)
        bb_chunk(&out, "IDAT", "", 0);
    if (s->trns && s->trns_after_idat)
        bb_chunk(&out, "tRNS", s->trns, (size_t)s->ntrns);
    if (s->after)
        bb_chunk(&out, s->after, "world", 5);
    if (!s->no_iend)
        bb_chunk(&out, "IEND", "", 0);
    free(zd);
    free(z.p);
    *len = out.n;
    return out.p;
}
