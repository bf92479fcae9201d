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
 * The fast path for the PNGs that matter for speed: non-interlaced, 8 or 16 bits,
 * any colour type (gray, gray+alpha, RGB, RGBA, palette). The IDAT data is inflated
 * in one call by libdeflate (to exactly the size the header implies) and unfiltered
 * here; the result is what stb_image returns for the same file, byte for byte,
 * including its conventions:
 *  - a palette image gives RGB, or RGBA when it has a tRNS chunk (entries past the
 *    chunk's length opaque);
 *  - gray or RGB with a tRNS chunk gains an alpha channel: 0 where the pixel equals
 *    the tRNS colour, else the maximum (8-bit files compare with the low byte of the
 *    tRNS value, as stb does);
 *  - 16-bit samples are converted from PNG's big-endian to host order.
 * Everything else is declined (VKI_DECLINED, with the reason in e) so that the
 * caller hands the file to stb_image, which then decodes it or reports the error
 * exactly as before: interlaced, bit depths 1/2/4, Apple's CgBI, unknown critical
 * chunks, anything stb would reject (bad IHDR fields, PLTE/tRNS oddities, no IDAT,
 * no IEND, a chunk running past the end of the file, an invalid filter type), and
 * anything where stb is more lenient or undefined: a zlib stream that libdeflate
 * rejects (stb does not check the Adler-32, accepts extra data after the pixels),
 * palette indices past the palette (stb reads uninitialized memory), repeated
 * PLTE/tRNS chunks, PLTE after IDAT.
 * CRCs are not checked, as stb does not check them either: a file stb accepts must
 * decode the same here, so a CRC mismatch could only send the file to stb, which
 * would decode the very same bytes; the pixel data is covered by the zlib stream's
 * Adler-32, which libdeflate verifies. (Checking all chunk CRCs would cost about
 * 1.5 ms on a 17 MB file.) */

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
    size_t rowbytes;            /* bytes of one unfiltered row */
    unsigned char pal[256 * 4]; /* RGBA */
    unsigned pal_len;
    int has_trns;               /* tRNS seen (palette: RGBA output; gray/RGB: colour key) */
    uint16_t key[3];            /* gray/RGB tRNS colour, compared at the file's depth */
    int bad_index;              /* a palette index >= pal_len was seen */
} png_dec;

/* Writes row src (unfiltered, PNG byte order) as a row of the result. */
static void emit_row(png_dec *d, unsigned char *dst, const unsigned char *src)
{
    const size_t w = d->w;
    if (d->ctype == 3) {
        unsigned mx = 0;
        if (d->out_c == 4) {
            for (size_t x = 0; x < w; x++) {
                unsigned i = src[x];
                mx = i > mx ? i : mx;
                memcpy(dst + 4 * x, d->pal + 4 * i, 4);
            }
        } else {
            for (size_t x = 0; x < w; x++) {
                unsigned i = src[x];
                mx = i > mx ? i : mx;
                dst[3 * x] = d->pal[4 * i];
                dst[3 * x + 1] = d->pal[4 * i + 1];
                dst[3 * x + 2] = d->pal[4 * i + 2];
            }
        }
        if (mx >= d->pal_len)
            d->bad_index = 1;
        return;
    }
    /* gray or RGB with a colour key: one more channel */
    const int c = d->in_c;
    if (d->depth == 8) {
        for (size_t x = 0; x < w; x++) {
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
        uint16_t *o16 = (uint16_t *)(void *)dst;
        for (size_t x = 0; x < w; x++) {
            const unsigned char *s = src + x * (size_t)c * 2;
            uint16_t *o = o16 + x * (size_t)(c + 1);
            int match = 1;
            for (int k = 0; k < c; k++) {
                uint16_t v = (uint16_t)(s[2 * k] << 8 | s[2 * k + 1]);
                o[k] = v;
                match &= v == d->key[k];
            }
            o[c] = match ? 0 : 65535;
        }
    }
}

static int decline(vkimg_err *e, const char *fmt, ...) VKI_PRINTF(2, 3);
static int decline(vkimg_err *e, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vki_fail(e, VKI_DECLINED, "%s", msg);
}

int vki_png_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out || len < 8 || memcmp(b, "\x89PNG\r\n\x1a\n", 8))
        return decline(e, "not a PNG");
    if (len < 33 || get32be(b + 8) != 13 || get32be(b + 12) != PNG_TYPE('I', 'H', 'D', 'R'))
        return decline(e, "the first chunk is not a complete IHDR");

    png_dec *d = calloc(1, sizeof *d);
    if (!d)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory", name);
    int rc = 0;
    unsigned char *zbuf = NULL, *raw = NULL, *img = NULL, *zero = NULL;
    struct libdeflate_decompressor *dec = NULL;

    /* ---- IHDR: what stb rejects, and what this path does not do, is declined */
    const unsigned char *ih = b + 16;
    d->w = get32be(ih);
    d->h = get32be(ih + 4);
    d->depth = ih[8];
    d->ctype = ih[9];
    if (ih[10] || ih[11] || ih[12] > 1 || d->ctype > 6 || ((d->ctype & 1) && d->ctype != 3) ||
        (d->depth != 1 && d->depth != 2 && d->depth != 4 && d->depth != 8 && d->depth != 16) ||
        (d->ctype == 3 && d->depth == 16)) {
        rc = decline(e, "invalid IHDR");
        goto done;
    }
    if (ih[12]) {
        rc = decline(e, "interlaced");
        goto done;
    }
    if (d->depth < 8) {
        rc = decline(e, "bit depth %d", d->depth);
        goto done;
    }
    if (!d->w || !d->h || d->w > (1u << 24) || d->h > (1u << 24)) {
        rc = decline(e, "image is %ux%u", (unsigned)d->w, (unsigned)d->h);
        goto done;
    }
    if ((rc = vki_check_dims(name, d->w, d->h, max_pixels, e)))
        goto done;
    static const int chans[7] = { 1, 0, 3, 1, 2, 0, 4 };
    d->in_c = chans[d->ctype];
    const size_t bps = (size_t)d->depth / 8; /* bytes per sample */
    const size_t bpp = (size_t)d->in_c * bps;
    d->rowbytes = (size_t)d->w * bpp;

    /* ---- chunks, until IEND (the CRCs are not checked: see above) */
    size_t pos = 33, nidat = 0, zlen = 0, idat1 = 0;
    int plte = 0, idat = 0;
    for (;;) {
        if (len - pos < 12) {
            rc = decline(e, "no IEND");
            goto done;
        }
        const uint32_t n = get32be(b + pos), type = get32be(b + pos + 4);
        if (n > len - pos - 12) {
            rc = decline(e, "chunk past the end of the file");
            goto done;
        }
        const unsigned char *p = b + pos + 8;
        pos += 12 + (size_t)n;
        if (type == PNG_TYPE('I', 'E', 'N', 'D'))
            break;
        switch (type) {
        case PNG_TYPE('I', 'D', 'A', 'T'):
            if (d->ctype == 3 && !d->pal_len) {
                rc = decline(e, "IDAT before PLTE");
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
            if (plte || idat || n > 256 * 3 || n % 3) {
                rc = decline(e, "unusual PLTE");
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
                rc = decline(e, "unusual tRNS");
                goto done;
            }
            if (d->ctype == 3) {
                if (!d->pal_len || n > d->pal_len) {
                    rc = decline(e, "unusual tRNS");
                    goto done;
                }
                for (uint32_t i = 0; i < n; i++)
                    d->pal[4 * i + 3] = p[i];
            } else {
                if (d->ctype & 4 || n != (uint32_t)d->in_c * 2) {
                    rc = decline(e, "unusual tRNS");
                    goto done;
                }
                for (int k = 0; k < d->in_c; k++) /* 8-bit: stb keeps the low byte */
                    d->key[k] = d->depth == 16 ? (uint16_t)(p[2 * k] << 8 | p[2 * k + 1]) : p[2 * k + 1];
            }
            d->has_trns = 1;
            break;
        case PNG_TYPE('I', 'H', 'D', 'R'):
            rc = decline(e, "more than one IHDR");
            goto done;
        default:
            if (!(type & (1u << 29))) { /* critical: CgBI, or not known to stb */
                rc = decline(e, "critical chunk '%c%c%c%c'", (char)(type >> 24), (char)(type >> 16),
                             (char)(type >> 8), (char)type);
                goto done;
            }
            break;
        }
    }
    if (!zlen) {
        rc = decline(e, "no IDAT data");
        goto done;
    }
    d->out_c = d->ctype == 3 ? (d->has_trns ? 4 : 3) : d->in_c + (d->has_trns ? 1 : 0);
    const int direct = d->out_c == d->in_c; /* the result is the unfiltered rows, packed */

    /* ---- sizes (w, h <= 2^24, bpp <= 8: no overflow with a 64-bit size_t) */
    const size_t h = d->h, stride = d->rowbytes + 1;
    if (d->rowbytes / bpp != d->w || h > SIZE_MAX / stride) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: image too large", name);
        goto done;
    }
    const size_t rawlen = stride * h;
    const size_t outrow = (size_t)d->w * (size_t)d->out_c * bps;
    if (outrow / d->out_c / bps != d->w || h > SIZE_MAX / outrow) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: image too large", name);
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
        for (;;) {
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
    }
    raw = vki_malloc_big(rawlen);
    zero = calloc(1, d->rowbytes);
    dec = libdeflate_alloc_decompressor();
    if (!raw || !zero || !dec) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, rawlen);
        goto done;
    }
    enum libdeflate_result zr = libdeflate_zlib_decompress(dec, z, zlen, raw, rawlen, NULL);
    if (zr != LIBDEFLATE_SUCCESS) {
        rc = decline(e, "%s", zr == LIBDEFLATE_BAD_DATA             ? "zlib data libdeflate rejects"
                              : zr == LIBDEFLATE_SHORT_OUTPUT       ? "too little pixel data"
                              : zr == LIBDEFLATE_INSUFFICIENT_SPACE ? "more pixel data than the image holds"
                                                                    : "zlib error");
        goto done;
    }
    libdeflate_free_decompressor(dec);
    dec = NULL;
    free(zbuf);
    zbuf = NULL;

    /* ---- unfilter each row in place; the finished row y-1 (no longer needed once
     * row y is done) then goes to its place in the result: for a direct image the
     * same buffer, packed (row y-1 moves left by y bytes, behind row y's data) */
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
    if (!direct) {
        img = vki_malloc_big(outrow * h);
        if (!img) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, outrow * h);
            goto done;
        }
    }
    for (size_t y = 0; y <= h; y++) {
        if (y < h) {
            unsigned char *row = raw + y * stride;
            if (row[0] > 4) {
                rc = decline(e, "invalid filter type %d in row %zu", row[0], y);
                goto done;
            }
            unf(row[0], row + 1, y ? row + 1 - stride : zero, d->rowbytes);
        }
        if (y > 0) {
            const unsigned char *src = raw + (y - 1) * stride + 1;
            if (!direct)
                emit_row(d, img + (y - 1) * outrow, src);
            else if (d->depth == 16)
                copy_be16(raw + (y - 1) * outrow, src, outrow);
            else
                memmove(raw + (y - 1) * outrow, src, outrow);
        }
    }
    if (d->bad_index) {
        rc = decline(e, "palette index past the %u entries of PLTE", d->pal_len);
        goto done;
    }
    if (direct) {
        img = realloc(raw, outrow * h); /* shrinking: h bytes less */
        if (!img)
            img = raw;
        raw = NULL;
    }
    out->w = (int)d->w;
    out->h = (int)d->h;
    out->c = d->out_c;
    out->fmt = d->depth == 16 ? VKIMG_U16 : VKIMG_U8;
    out->data = img;
    img = NULL;

done:
    libdeflate_free_decompressor(dec);
    free(zbuf);
    free(raw);
    free(img);
    free(zero);
    free(d);
    return rc;
}
