/* PNG decoder: libdeflate + unfiltering. */
#include "io/io_priv.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
/* SSE2 on x86-64 (where SSE2 is always there) */
#if defined(__SSE2__) && defined(__x86_64__)
#define VKI_PNG_SSE2 1
#include <emmintrin.h>
#else
#define VKI_PNG_SSE2 0
#endif
#if defined(__GNUC__) || defined(__clang__)
#define VKI_ALWAYS_INLINE __attribute__((always_inline))
#else
#define VKI_ALWAYS_INLINE
#endif

/* ================================================================ decoder
 *
 * The only PNG decoder of vkimg. The IDAT data is inflated in one call by libdeflate
 * (to exactly the size the header implies) and unfiltered here; the result is what
 * stb_image returns for the same valid file, byte for byte, including its
 * conventions:
 *  - a palette image gives RGB, or RGBA when it has a tRNS chunk (entries past the
 *    chunk's length opaque); an index past the PLTE's entries (an error in the file)
 *    is opaque black, as the PNG specification's third edition requires of decoders
 *    (and as libpng, so vips, Pillow and the browsers, read it; stb_image reads
 *    memory it never set);
 *  - gray or RGB with a tRNS chunk gains an alpha channel: 0 where the pixel equals
 *    the tRNS colour, else the maximum (8-bit and lower files compare with the low
 *    bits of the tRNS value, scaled as the samples are, as libpng does: stb takes
 *    the low byte, which differs for a value out of a 1, 2 or 4-bit range);
 *  - gray of 1, 2 or 4 bits is scaled to 8 bits (x 255, 85, 17); palette indices of
 *    1, 2 or 4 bits index the palette;
 *  - interlaced (Adam7) files give the same image as the non-interlaced file;
 *  - 16-bit samples are converted from PNG's big-endian to host order.
 * Non-interlaced 8/16-bit files (the ones that matter for speed) take the fast path:
 * rows unfiltered in place, with SSE2, and packed in the same buffer.
 *
 * Strict where stb_image is lenient or undefined, as libpng is by default: the CRC
 * of every critical chunk (IHDR, PLTE, IDAT, IEND) must match (an ancillary chunk
 * with a bad CRC is ignored: here that matters for tRNS only); IHDR must be valid
 * (colour type and bit depth combinations of the PNG specification); the zlib
 * stream must be complete, pass its Adler-32 and inflate to exactly the size of the
 * image (bytes after the end of the stream are ignored, as libpng does); filter
 * types 0..4; palette indices within PLTE; PLTE and tRNS at most once, before IDAT,
 * tRNS of the right length; IEND present; unknown critical chunks (Apple's CgBI
 * among them) are errors. Every error is VKIMG_E_RUNTIME "NAME: PNG: reason".
 *
 * Memory: nothing is allocated before the size is checked (vki_check_dims); the
 * inflate buffer is the size the header implies, and only if the compressed data
 * could possibly fill it (DEFLATE expands at most 1032:1); chunk lengths are
 * checked against the file before they are used. */

static uint32_t get32be(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#define PNG_TYPE(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

/* ---- unfiltering, in place: cur holds the filtered bytes of a row and receives the
 * raw ones; prior is the previous raw row (zeros above the first). The per-bpp
 * copies let the compiler keep the bpp interleaved dependency chains in registers;
 * for 3, 4, 6 and 8 bytes per pixel (8-bit RGB/RGBA, 16-bit gray+alpha/RGB/RGBA) on
 * x86-64, sub, average and paeth work on whole pixels in SSE2 registers (paeth in
 * 16-bit lanes): after inflating, that is where decoding spends its time (paeth
 * rows: about 2x faster than the scalar loop). All give the same bytes as the plain
 * definitions (the tests check every filter at every pixel size against stb). */

/* paeth(a, b, c) of PNG: p = a + b - c, the one of a, b, c nearest p, ties in that
 * order. |p - a| = |b - c|, |p - b| = |a - c|, |p - c| = |(b - c) + (a - c)|;
 * written without branches (photographs make them unpredictable). */
static inline unsigned char paeth_pred(int a, int b, int c)
{
    int p = b - c, q = a - c;
    int pa = abs(p), pb = abs(q), pc = abs(p + q);
    int r = pb <= pc ? b : c, m = pb <= pc ? pb : pc;
    return (unsigned char)(pa <= m ? a : r);
}

#define DEFINE_UNFILTER(BPP)                                                                              \
    static void unfilter_##BPP(int filter, unsigned char *restrict cur, const unsigned char *restrict prior, \
                               size_t n)                                                                  \
    {                                                                                                     \
        size_t i;                                                                                         \
        switch (filter) {                                                                                 \
        case 1:                                                                                           \
            for (i = BPP; i < n; i++)                                                                     \
                cur[i] = (unsigned char)(cur[i] + cur[i - BPP]);                                          \
            break;                                                                                        \
        case 2:                                                                                           \
            for (i = 0; i < n; i++)                                                                       \
                cur[i] = (unsigned char)(cur[i] + prior[i]);                                              \
            break;                                                                                        \
        case 3:                                                                                           \
            for (i = 0; i < BPP && i < n; i++)                                                            \
                cur[i] = (unsigned char)(cur[i] + (prior[i] >> 1));                                       \
            for (; i < n; i++)                                                                            \
                cur[i] = (unsigned char)(cur[i] + ((cur[i - BPP] + prior[i]) >> 1));                      \
            break;                                                                                        \
        case 4:                                                                                           \
            for (i = 0; i < BPP && i < n; i++)                                                            \
                cur[i] = (unsigned char)(cur[i] + prior[i]);                                              \
            for (; i < n; i++)                                                                            \
                cur[i] = (unsigned char)(cur[i] + paeth_pred(cur[i - BPP], prior[i], prior[i - BPP]));    \
            break;                                                                                        \
        default: /* 0: none */                                                                            \
            break;                                                                                        \
        }                                                                                                 \
    }
DEFINE_UNFILTER(1)
DEFINE_UNFILTER(2)
DEFINE_UNFILTER(3)
DEFINE_UNFILTER(4)
DEFINE_UNFILTER(6)
DEFINE_UNFILTER(8)
#undef DEFINE_UNFILTER

#if VKI_PNG_SSE2
/* One pixel of 3, 4, 6 or 8 bytes in the low lanes of an SSE2 register. Exactly bpp
 * bytes are read and written, through general registers (a memcpy of 3 or 6 bytes
 * would go through the stack and stall on store forwarding): the row is unfiltered
 * in place, so the byte after a pixel is still the next pixel's filtered value (or
 * the next row's filter type). */
static inline __m128i px_load(const unsigned char *p, size_t bpp)
{
    uint64_t v;
    if (bpp == 8) {
        memcpy(&v, p, 8);
    } else if (bpp == 4) {
        uint32_t x;
        memcpy(&x, p, 4);
        v = x;
    } else if (bpp == 6) {
        uint32_t x;
        uint16_t y;
        memcpy(&x, p, 4);
        memcpy(&y, p + 4, 2);
        v = x | (uint64_t)y << 32;
    } else {
        uint16_t x;
        memcpy(&x, p, 2);
        v = x | (uint64_t)p[2] << 16;
    }
    return _mm_cvtsi64_si128((long long)v);
}

static inline void px_store(unsigned char *p, __m128i r, size_t bpp)
{
    uint64_t v = (uint64_t)_mm_cvtsi128_si64(r);
    if (bpp == 8) {
        memcpy(p, &v, 8);
    } else if (bpp == 4) {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
    } else if (bpp == 6) {
        uint32_t x = (uint32_t)v;
        uint16_t y = (uint16_t)(v >> 32);
        memcpy(p, &x, 4);
        memcpy(p + 4, &y, 2);
    } else {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        p[2] = (unsigned char)(v >> 16);
    }
}

/* Sub, average and paeth a pixel at a time (the dependency on the left pixel is what
 * limits them); none and up are left to unfilter_N, which the compiler vectorizes. */
static inline VKI_ALWAYS_INLINE void unfilter_px_sse2(int filter, unsigned char *restrict cur,
                                                     const unsigned char *restrict prior, size_t n, size_t bpp)
{
    const __m128i z = _mm_setzero_si128();
    size_t i;
    switch (filter) {
    case 1: {
        __m128i a = z;
        for (i = 0; i + bpp <= n; i += bpp) {
            a = _mm_add_epi8(a, px_load(cur + i, bpp));
            px_store(cur + i, a, bpp);
        }
        break;
    }
    case 3: { /* floor((a + b) / 2) = avg_epu8 (which rounds up) - ((a ^ b) & 1) */
        const __m128i one = _mm_set1_epi8(1);
        __m128i a = z;
        for (i = 0; i + bpp <= n; i += bpp) {
            __m128i b = px_load(prior + i, bpp);
            __m128i avg = _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), one));
            a = _mm_add_epi8(px_load(cur + i, bpp), avg);
            px_store(cur + i, a, bpp);
        }
        break;
    }
    case 4: { /* 16-bit lanes; a = c = 0 for the first pixel gives paeth(0, b, 0) = b */
        const __m128i lo = _mm_set1_epi16(0xff);
        __m128i a = z, c = z;
        for (i = 0; i + bpp <= n; i += bpp) {
            __m128i b = _mm_unpacklo_epi8(px_load(prior + i, bpp), z);
            __m128i x = _mm_unpacklo_epi8(px_load(cur + i, bpp), z);
            __m128i p = _mm_sub_epi16(b, c), q = _mm_sub_epi16(a, c), pq = _mm_add_epi16(p, q);
            __m128i pa = _mm_max_epi16(p, _mm_sub_epi16(z, p));
            __m128i pb = _mm_max_epi16(q, _mm_sub_epi16(z, q));
            __m128i pc = _mm_max_epi16(pq, _mm_sub_epi16(z, pq));
            __m128i use_c = _mm_cmpgt_epi16(pb, pc); /* b unless pc < pb */
            __m128i r = _mm_or_si128(_mm_and_si128(use_c, c), _mm_andnot_si128(use_c, b));
            __m128i use_r = _mm_cmpgt_epi16(pa, _mm_min_epi16(pb, pc)); /* a unless something is nearer */
            __m128i pred = _mm_or_si128(_mm_and_si128(use_r, r), _mm_andnot_si128(use_r, a));
            a = _mm_and_si128(_mm_add_epi16(x, pred), lo);
            px_store(cur + i, _mm_packus_epi16(a, a), bpp);
            c = b;
        }
        break;
    }
    }
}

#define DEFINE_UNFILTER_SSE2(BPP)                                                                             \
    static void unfilter_##BPP##_sse2(int filter, unsigned char *restrict cur, const unsigned char *restrict prior, \
                                      size_t n)                                                               \
    {                                                                                                         \
        if (filter == 1 || filter == 3 || filter == 4)                                                        \
            unfilter_px_sse2(filter, cur, prior, n, BPP);                                                     \
        else                                                                                                  \
            unfilter_##BPP(filter, cur, prior, n);                                                            \
    }
DEFINE_UNFILTER_SSE2(3)
DEFINE_UNFILTER_SSE2(4)
DEFINE_UNFILTER_SSE2(6)
DEFINE_UNFILTER_SSE2(8)
#undef DEFINE_UNFILTER_SSE2
#endif

typedef void (*unfilter_fn)(int, unsigned char *restrict, const unsigned char *restrict, size_t);


/* ---- row output */

/* 16-bit row to host order; dst may overlap src when dst <= src (each block is read
 * whole before it is written). n is even. */
static void copy_be16(unsigned char *dst, const unsigned char *src, size_t n)
{
    size_t i = 0;
#if VKI_PNG_SSE2 /* little-endian: swap the bytes of each 16-bit lane */
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8)));
    }
#endif
    for (; i < n; i += 2) {
        unsigned char hi = src[i], lo = src[i + 1];
        uint16_t v = (uint16_t)(hi << 8 | lo);
        memcpy(dst + i, &v, 2);
    }
}

typedef struct png_dec {
    uint32_t w, h;
    int depth, ctype;
    int in_c;                   /* samples per pixel in the file (palette: 1) */
    int out_c;                  /* channels of the result */
    unsigned bits;              /* bits per pixel in the file */
    unsigned char pal[256 * 4]; /* RGBA; entries past pal_len opaque black */
    unsigned pal_len;
    int has_trns;               /* tRNS seen (palette: RGBA output; gray/RGB: colour key) */
    uint16_t key[3];            /* gray/RGB tRNS colour: 16-bit files the 16-bit value, others
                                   the low byte times the depth's scale, as stb compares */
} png_dec;

/* Writes n pixels of the unfiltered row src (PNG byte order, packed at the file's
 * depth) as n pixels of the result (out_c channels, host order). */
static void expand_row(const png_dec *d, unsigned char *dst, const unsigned char *src, size_t n)
{
    const unsigned depth = (unsigned)d->depth;
    if (d->ctype == 3) { /* palette: 1, 2, 4 or 8-bit indices */
        const unsigned mask = (1u << depth) - 1;
        for (size_t x = 0; x < n; x++) {
            unsigned i;
            if (depth == 8) {
                i = src[x];
            } else {
                size_t bit = x * depth;
                i = (unsigned)(src[bit >> 3] >> (8 - depth - (bit & 7))) & mask;
            }
            if (d->out_c == 4) {
                memcpy(dst + 4 * x, d->pal + 4 * i, 4);
            } else {
                dst[3 * x] = d->pal[4 * i];
                dst[3 * x + 1] = d->pal[4 * i + 1];
                dst[3 * x + 2] = d->pal[4 * i + 2];
            }
        }
        return;
    }
    const int c = d->in_c;
    if (depth < 8) { /* gray, scaled to 8 bits; a colour key adds alpha */
        static const unsigned char scale[5] = { 0, 0xff, 0x55, 0, 0x11 };
        const unsigned mask = (1u << depth) - 1, s = scale[depth];
        for (size_t x = 0; x < n; x++) {
            size_t bit = x * depth;
            unsigned char v = (unsigned char)(((unsigned)(src[bit >> 3] >> (8 - depth - (bit & 7))) & mask) * s);
            if (d->has_trns) {
                dst[2 * x] = v;
                dst[2 * x + 1] = v == d->key[0] ? 0 : 255;
            } else {
                dst[x] = v;
            }
        }
        return;
    }
    if (!d->has_trns) { /* the samples as they are */
        if (depth == 16)
            copy_be16(dst, src, n * (size_t)c * 2);
        else
            memcpy(dst, src, n * (size_t)c);
        return;
    }
    /* gray or RGB with a colour key: one more channel */
    if (depth == 8) {
        for (size_t x = 0; x < n; x++) {
            const unsigned char *s = src + x * (size_t)c;
            unsigned char *o = dst + x * (size_t)(c + 1);
            int match = s[0] == d->key[0];
            o[0] = s[0];
            if (c == 3) {
                match &= s[1] == d->key[1] && s[2] == d->key[2];
                o[1] = s[1];
                o[2] = s[2];
            }
            o[c] = match ? 0 : 255;
        }
    } else {
        for (size_t x = 0; x < n; x++) {
            const unsigned char *s = src + x * (size_t)c * 2;
            uint16_t o[4];
            int match = 1;
            for (int k = 0; k < c; k++) {
                o[k] = (uint16_t)(s[2 * k] << 8 | s[2 * k + 1]);
                match &= o[k] == d->key[k];
            }
            o[c] = match ? 0 : 65535;
            memcpy(dst + x * (size_t)(c + 1) * 2, o, (size_t)(c + 1) * 2);
        }
    }
}

#define png_fail(e, name, ...) vki_dec_fail(e, name, "PNG", __VA_ARGS__)

/* The unfiltered row src (w pixels of c = 2 or 4 8-bit channels) without its alpha
 * at to, where that alpha is all 255; else false with src intact. Packed rows go
 * behind the unfiltered ones; where they would reach src (the first rows of an
 * image unfiltered in place: `in_place`), the alpha is checked first, else in the
 * same pass (vki_drop_alpha_opaque). */
static bool pack_opaque_row(unsigned char *to, const unsigned char *src, size_t w, int c, bool in_place)
{
    const size_t n = w * (size_t)(c - 1);
    if (!in_place || to + n <= src)
        return vki_drop_alpha_opaque(to, src, w, c);
    if (!vki_alpha_opaque(src, w * (size_t)c, c, 1))
        return false;
    vki_drop_alpha(to, src, w, c, 1);
    return true;
}

static const char *chunk_name(uint32_t type, char buf[8])
{
    for (int i = 0; i < 4; i++) {
        unsigned char c = (unsigned char)(type >> (24 - 8 * i));
        buf[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    buf[4] = 0;
    return buf;
}

/* Adam7 passes: origin and spacing */
static const int a7_xo[7] = { 0, 4, 0, 2, 0, 1, 0 }, a7_yo[7] = { 0, 0, 4, 0, 2, 0, 1 };
static const int a7_xs[7] = { 8, 8, 4, 4, 2, 2, 1 }, a7_ys[7] = { 8, 8, 8, 4, 4, 2, 2 };

/* Pixels of pass p along a side of n pixels. */
static size_t a7_count(size_t n, int o, int s) { return n > (size_t)o ? (n - (size_t)o + (size_t)s - 1) / (size_t)s : 0; }

int vki_png_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e)
{
    return vki_png_decode_opts(b, len, name, max_pixels, NULL, out, NULL, e);
}

/* Tells the caller its buffer is read no more (vkimg_load_opts.input_done), once. */
static void release_input(const vkimg_load_opts *o, bool *released)
{
    if (o && o->input_done && released && !*released) {
        *released = true;
        o->input_done(o->user);
    }
}

int vki_png_decode_opts(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels,
                        const vkimg_load_opts *o, vkimg_image *out, bool *released, vkimg_err *e)
{
    if (released)
        *released = false;
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out)
        return png_fail(e, name, "no data");
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    if (memcmp(b, sig, len < 8 ? len : 8))
        return png_fail(e, name, "not a PNG signature");
    if (len < 8 + 25)
        return png_fail(e, name, "truncated (%zu bytes, no complete IHDR chunk)", len);
    if (get32be(b + 8) != 13 || get32be(b + 12) != PNG_TYPE('I', 'H', 'D', 'R'))
        return png_fail(e, name, "the first chunk is not a 13-byte IHDR");
    if (libdeflate_crc32(0, b + 12, 17) != get32be(b + 29))
        return png_fail(e, name, "CRC mismatch in chunk IHDR");

    png_dec *d = calloc(1, sizeof *d);
    if (!d)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory", name);
    for (unsigned i = 0; i < 256; i++) /* an index past the PLTE: opaque black (PNG 3rd edition) */
        d->pal[4 * i + 3] = 255;
    int rc = 0;
    unsigned char *zbuf = NULL, *raw = NULL, *img = NULL, *zero = NULL, *tmp = NULL;
    vkimg_image result = { 0 }; /* the result where it is not raw's rows packed in place */
    bool in_result = false;     /* raw is result's memory */
    struct libdeflate_decompressor *dec = NULL;
    char cn[8];

    /* ---- IHDR: the combinations of the PNG specification */
    const unsigned char *ih = b + 16;
    d->w = get32be(ih);
    d->h = get32be(ih + 4);
    d->depth = ih[8];
    d->ctype = ih[9];
    static const unsigned char depths_ok[7] = { /* bit depths allowed per colour type: 1 << depth bits */
        [0] = 1 | 2 | 4 | 8 | 16, [2] = 8 | 16, [3] = 1 | 2 | 4 | 8, [4] = 8 | 16, [6] = 8 | 16 };
    if (d->ctype > 6 || !(depths_ok[d->ctype] & d->depth) || (d->depth & (d->depth - 1))) {
        rc = png_fail(e, name, "invalid IHDR: colour type %d with bit depth %d", d->ctype, d->depth);
        goto done;
    }
    if (ih[10] || ih[11] || ih[12] > 1) {
        rc = png_fail(e, name, "invalid IHDR: compression method %d, filter method %d, interlace method %d", ih[10],
                      ih[11], ih[12]);
        goto done;
    }
    const int interlaced = ih[12];
    if (d->w > 0x7fffffffu || d->h > 0x7fffffffu) {
        rc = png_fail(e, name, "invalid IHDR: size %ux%u", (unsigned)d->w, (unsigned)d->h);
        goto done;
    }
    if ((rc = vki_check_dims(name, d->w, d->h, max_pixels, e)))
        goto done;
    static const int chans[7] = { 1, 0, 3, 1, 2, 0, 4 };
    d->in_c = chans[d->ctype];
    d->bits = (unsigned)(d->in_c * d->depth);
    const size_t bps = d->depth == 16 ? 2 : 1;           /* bytes per sample of the result */
    const size_t bpp = d->bits >= 8 ? d->bits / 8 : 1;  /* the filters' pixel size */
    const size_t rowbytes = ((size_t)d->w * d->bits + 7) / 8;

    /* ---- chunks, until IEND */
    size_t pos = 33, nidat = 0, zlen = 0, idat1 = 0;
    int plte = 0, idat = 0;
    for (;;) {
        if (len - pos < 12) {
            rc = png_fail(e, name, "truncated (no IEND chunk)");
            goto done;
        }
        const uint32_t n = get32be(b + pos), type = get32be(b + pos + 4);
        if (n > 0x7fffffffu) {
            rc = png_fail(e, name, "invalid length %u of chunk '%s'", (unsigned)n, chunk_name(type, cn));
            goto done;
        }
        if (n > len - pos - 12) {
            rc = png_fail(e, name, "truncated (chunk '%s' of %u bytes runs past the end of the file)",
                          chunk_name(type, cn), (unsigned)n);
            goto done;
        }
        for (int i = 0; i < 4; i++) {
            unsigned char c = b[pos + 4 + (size_t)i] | 0x20;
            if (c < 'a' || c > 'z') {
                rc = png_fail(e, name, "invalid chunk type '%s'", chunk_name(type, cn));
                goto done;
            }
        }
        const unsigned char *p = b + pos + 8;
        const int critical = !(type & (1u << 29));
        const uint32_t crc = get32be(p + n);
        pos += 12 + (size_t)n;
        if ((critical || type == PNG_TYPE('t', 'R', 'N', 'S')) && libdeflate_crc32(0, p - 4, 4 + (size_t)n) != crc) {
            if (critical) {
                rc = png_fail(e, name, "CRC mismatch in chunk '%s'", chunk_name(type, cn));
                goto done;
            }
            continue; /* an ancillary chunk with a bad CRC is ignored, as libpng does */
        }
        if (type == PNG_TYPE('I', 'E', 'N', 'D'))
            break;
        switch (type) {
        case PNG_TYPE('I', 'D', 'A', 'T'):
            if (d->ctype == 3 && !d->pal_len) {
                rc = png_fail(e, name, "IDAT before PLTE in a palette image");
                goto done;
            }
            idat = 1;
            if (n) {
                if (!nidat)
                    idat1 = (size_t)(p - b);
                nidat++;
                zlen += n; /* <= len */
            }
            break;
        case PNG_TYPE('P', 'L', 'T', 'E'):
            if (plte || idat) {
                rc = png_fail(e, name, "%s", plte ? "more than one PLTE" : "PLTE after IDAT");
                goto done;
            }
            if (n == 0 || n > 256 * 3 || n % 3) {
                rc = png_fail(e, name, "invalid PLTE length %u", (unsigned)n);
                goto done;
            }
            plte = 1;
            if (d->ctype == 3) { /* other colour types: a suggestion, ignored */
                d->pal_len = n / 3;
                for (unsigned i = 0; i < d->pal_len; i++) {
                    memcpy(d->pal + 4 * i, p + 3 * i, 3);
                    d->pal[4 * i + 3] = 255;
                }
            }
            break;
        case PNG_TYPE('t', 'R', 'N', 'S'):
            if (d->has_trns || idat) {
                rc = png_fail(e, name, "%s", d->has_trns ? "more than one tRNS" : "tRNS after IDAT");
                goto done;
            }
            if (d->ctype == 3) {
                if (!d->pal_len) {
                    rc = png_fail(e, name, "tRNS before PLTE");
                    goto done;
                }
                if (n > d->pal_len) {
                    rc = png_fail(e, name, "tRNS of %u entries for a PLTE of %u", (unsigned)n, d->pal_len);
                    goto done;
                }
                for (uint32_t i = 0; i < n; i++)
                    d->pal[4 * i + 3] = p[i];
            } else {
                if (d->ctype & 4) {
                    rc = png_fail(e, name, "tRNS in an image with an alpha channel");
                    goto done;
                }
                if (n != (uint32_t)d->in_c * 2) {
                    rc = png_fail(e, name, "tRNS of %u bytes, want %d", (unsigned)n, d->in_c * 2);
                    goto done;
                }
                static const unsigned char scale[17] = { [1] = 0xff, [2] = 0x55, [4] = 0x11, [8] = 1 };
                /* below 16 bits: the low bits of the depth, scaled as the samples
                 * are; a value out of the depth's range (invalid, but written)
                 * keeps its low bits, as libpng takes it (vips, browsers, Pillow) */
                const unsigned low = (1u << (d->depth < 8 ? d->depth : 8)) - 1;
                for (int k = 0; k < d->in_c; k++)
                    d->key[k] = d->depth == 16 ? (uint16_t)(p[2 * k] << 8 | p[2 * k + 1])
                                               : (unsigned char)((p[2 * k + 1] & low) * scale[d->depth]);
            }
            d->has_trns = 1;
            break;
        case PNG_TYPE('I', 'H', 'D', 'R'):
            rc = png_fail(e, name, "more than one IHDR");
            goto done;
        default:
            if (critical) {
                rc = png_fail(e, name, "unknown critical chunk '%s'%s", chunk_name(type, cn),
                              type == PNG_TYPE('C', 'g', 'B', 'I') ? " (Apple's CgBI PNG variant)" : "");
                goto done;
            }
            break;
        }
    }
    if (!zlen) {
        rc = png_fail(e, name, "no image data (IDAT)");
        goto done;
    }
    d->out_c = d->ctype == 3 ? (d->has_trns ? 4 : 3) : d->in_c + (d->has_trns ? 1 : 0);
    /* the result is the unfiltered rows, packed (the in-place fast path): in raw's
     * memory, or in the caller's (o->alloc) where it has room for the filtered rows
     * (vki_image_owner.cap: a device buffer's byte a row to spare); else the
     * finished rows are copied into the caller's memory while they are in the cache */
    const bool packs = d->out_c == d->in_c && d->depth >= 8 && !interlaced;
    bool direct = packs && !(o && o->alloc);

    /* ---- sizes (w, h <= 2^24, <= 64 bits a pixel: no overflow with a 64-bit size_t) */
    const size_t h = d->h, stride = rowbytes + 1;
    if (sizeof(size_t) < 8 && (rowbytes > SIZE_MAX / 16 || h > SIZE_MAX / 2 / stride)) {
        rc = png_fail(e, name, "image too large for this machine");
        goto done;
    }
    size_t rawlen = stride * h;
    if (interlaced) {
        rawlen = 0;
        for (int p = 0; p < 7; p++) {
            size_t pw = a7_count(d->w, a7_xo[p], a7_xs[p]), ph = a7_count(d->h, a7_yo[p], a7_ys[p]);
            if (pw && ph)
                rawlen += ((pw * d->bits + 7) / 8 + 1) * ph;
        }
    }
    const size_t outpx = (size_t)d->out_c * bps, outrow = (size_t)d->w * outpx;
    if (rawlen / 1032 > zlen + 4) { /* DEFLATE cannot expand zlen bytes that far */
        rc = png_fail(e, name, "too little image data (%zu compressed bytes cannot hold the %zu bytes of a %ux%u image)",
                      zlen, rawlen, (unsigned)d->w, (unsigned)d->h);
        goto done;
    }

    /* ---- the zlib stream: in place when it is one IDAT, else concatenated */
    const unsigned char *z = b + idat1;
    if (nidat > 1) {
        zbuf = malloc(zlen);
        if (!zbuf) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, zlen);
            goto done;
        }
        size_t q = 33, zn = 0;
        for (;;) { /* the chunks were all checked above */
            const uint32_t n = get32be(b + q), type = get32be(b + q + 4);
            if (type == PNG_TYPE('I', 'E', 'N', 'D'))
                break;
            if (type == PNG_TYPE('I', 'D', 'A', 'T')) {
                memcpy(zbuf + zn, b + q + 8, n);
                zn += n;
            }
            q += 12 + (size_t)n;
        }
        z = zbuf;
        release_input(o, released); /* the data is in zbuf now */
    }
    if (packs && o && o->alloc) {
        if ((rc = vki_decoded_alloc_opts(o, &result, d->w, d->h, d->out_c, d->depth == 16 ? VKIMG_U16 : VKIMG_U8, name,
                                         e)))
            goto done;
        img = result.data;
        const vki_image_owner *ow = result.priv;
        in_result = direct = ow && ow->cap >= rawlen;
    }
    raw = in_result ? img : vki_malloc_big(rawlen);
    zero = calloc(1, rowbytes + 16);
    dec = libdeflate_alloc_decompressor();
    if (!raw || !zero || !dec) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, rawlen);
        goto done;
    }
    enum libdeflate_result zr = libdeflate_zlib_decompress(dec, z, zlen, raw, rawlen, NULL);
    if (zr != LIBDEFLATE_SUCCESS) {
        if (zr == LIBDEFLATE_SHORT_OUTPUT)
            rc = png_fail(e, name, "too little image data (the zlib stream ends before the %zu bytes of the image)",
                          rawlen);
        else if (zr == LIBDEFLATE_INSUFFICIENT_SPACE)
            rc = png_fail(e, name, "too much image data (the zlib stream holds more than the %zu bytes of the image)",
                          rawlen);
        else
            rc = png_fail(e, name, "corrupt or truncated zlib data in IDAT");
        goto done;
    }
    libdeflate_free_decompressor(dec);
    dec = NULL;
    free(zbuf);
    zbuf = NULL;
    release_input(o, released); /* (one IDAT: inflated from the input itself) */

    unfilter_fn unf;
    switch (bpp) {
    case 1: unf = unfilter_1; break;
    case 2: unf = unfilter_2; break;
#if VKI_PNG_SSE2
    case 3: unf = unfilter_3_sse2; break;
    case 4: unf = unfilter_4_sse2; break;
    case 6: unf = unfilter_6_sse2; break;
    default: unf = unfilter_8_sse2; break;
#else
    case 3: unf = unfilter_3; break;
    case 4: unf = unfilter_4; break;
    case 6: unf = unfilter_6; break;
    default: unf = unfilter_8; break;
#endif
    }
    if (!direct && !result.data) {
        if ((rc = vki_decoded_alloc_opts(o, &result, d->w, d->h, d->out_c, d->depth == 16 ? VKIMG_U16 : VKIMG_U8, name,
                                         e)))
            goto done;
        img = result.data;
    }
    /* the caller keeps no alpha: while every row's alpha is at the maximum, rows are
     * packed without it (outrow less a byte a pixel) */
    bool dropping = o && o->drop_opaque_alpha && vki_drop_alpha_on() && packs && d->depth == 8 &&
                    (d->out_c == 2 || d->out_c == 4);
    const size_t droprow = outrow - d->w;
    unsigned char *const packed = direct ? raw : img; /* where the rows go */
    if (!interlaced) {
        /* ---- unfilter each row in place; the finished row y-1 (no longer needed once
         * row y is done) then goes to its place in the result: for a direct image the
         * same buffer, packed (row y-1 moves left by y bytes, behind row y's data) */
        for (size_t y = 0; y <= h; y++) {
            if (y < h) {
                unsigned char *row = raw + y * stride;
                if (row[0] > 4) {
                    rc = png_fail(e, name, "invalid filter type %d in row %zu", row[0], y);
                    goto done;
                }
                unf(row[0], row + 1, y ? row + 1 - stride : zero, rowbytes);
            }
            if (y > 0) {
                const unsigned char *src = raw + (y - 1) * stride + 1;
                if (dropping && !pack_opaque_row(packed + (y - 1) * droprow, src, d->w, d->out_c, direct)) {
                    /* rows 0..y-2 back to their places with alpha (each pixel's new place is
                     * at or after its packed one, before row y-1) */
                    vki_alpha_back(packed, (y - 1) * d->w, d->out_c);
                    dropping = false;
                }
                if (dropping)
                    continue; /* packed */
                if (!direct)
                    expand_row(d, img + (y - 1) * outrow, src, d->w);
                else if (d->depth == 16)
                    copy_be16(raw + (y - 1) * outrow, src, outrow);
                else
                    memmove(raw + (y - 1) * outrow, src, outrow);
            }
        }
    } else {
        /* ---- Adam7: each pass's rows unfiltered in place, expanded into tmp and
         * scattered to their pixels */
        tmp = malloc(outrow ? outrow : 1);
        if (!tmp) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, outrow);
            goto done;
        }
        unsigned char *row = raw;
        for (int p = 0; p < 7; p++) {
            const size_t pw = a7_count(d->w, a7_xo[p], a7_xs[p]), ph = a7_count(d->h, a7_yo[p], a7_ys[p]);
            if (!pw || !ph)
                continue;
            const size_t prb = (pw * d->bits + 7) / 8;
            for (size_t j = 0; j < ph; j++, row += prb + 1) {
                if (row[0] > 4) {
                    rc = png_fail(e, name, "invalid filter type %d in row %zu of interlace pass %d", row[0], j, p + 1);
                    goto done;
                }
                unf(row[0], row + 1, j ? row - prb : zero, prb);
                expand_row(d, tmp, row + 1, pw);
                unsigned char *dst = img + ((size_t)a7_yo[p] + j * (size_t)a7_ys[p]) * outrow + (size_t)a7_xo[p] * outpx;
                const size_t step = (size_t)a7_xs[p] * outpx;
                for (size_t i = 0; i < pw; i++)
                    memcpy(dst + i * step, tmp + i * outpx, outpx);
            }
        }
    }
    if (in_result) {
        raw = NULL; /* img, the result's memory */
    } else if (direct) {
        img = realloc(raw, (dropping ? droprow : outrow) * h); /* shrinking: h bytes (and the alpha) less */
        if (!img)
            img = raw;
        raw = NULL;
    }
    out->w = (int)d->w;
    out->h = (int)d->h;
    out->c = d->out_c - (dropping ? 1 : 0);
    out->fmt = d->depth == 16 ? VKIMG_U16 : VKIMG_U8;
    out->data = img;
    out->priv = result.priv;
    img = NULL;
    result.data = NULL;

done:
    libdeflate_free_decompressor(dec);
    free(zbuf);
    if (!in_result) /* else the result's memory, freed with it */
        free(raw);
    if (result.data)
        vkimg_image_free(&result); /* img is its data */
    else
        free(img);
    free(zero);
    free(tmp);
    free(d);
    return rc;
}
