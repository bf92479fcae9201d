/* PNG encoder: 8/16-bit, 1-4 channels, per-row adaptive filtering, libdeflate;
 * optionally a palette image where an 8-bit RGB(A) image has at most 256 colours. */
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

#define PNG_IDAT_MAX ((size_t)1 << 30) /* well under the format's 2^31-1 */

static void put32be(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Fills in the length, type and CRC of a chunk whose data is already at p + 8;
 * returns the chunk's total size. */
static size_t finish_chunk(unsigned char *p, const char type[4], size_t len)
{
    put32be(p, (uint32_t)len);
    memcpy(p + 4, type, 4);
    put32be(p + 8 + len, libdeflate_crc32(0, p + 4, 4 + len));
    return 12 + len;
}

static inline unsigned absbyte(unsigned v) /* |(int8_t)v| for v in 0..255 */
{
    v &= 0xff;
    return v < 128 ? v : 256 - v;
}

static inline unsigned paeth(unsigned a, unsigned b, unsigned c)
{
    int pa = abs((int)b - (int)c), pb = abs((int)a - (int)c), pc = abs((int)a + (int)b - 2 * (int)c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

#if VKI_PNG_SSE2
/* Sum of |signed byte| of the 16 bytes of v, in two 64-bit lanes. */
static inline __m128i sad_signed(__m128i v)
{
    const __m128i z = _mm_setzero_si128();
    return _mm_sad_epu8(_mm_min_epu8(v, _mm_sub_epi8(z, v)), z); /* |v| = min(v, 256 - v) */
}

/* The Paeth predictor of 8 pixels' bytes held in 16-bit lanes. */
static inline __m128i paeth8(__m128i a, __m128i b, __m128i c)
{
    const __m128i z = _mm_setzero_si128();
    __m128i bc = _mm_sub_epi16(b, c), ac = _mm_sub_epi16(a, c), abc = _mm_add_epi16(bc, ac);
    __m128i pa = _mm_max_epi16(bc, _mm_sub_epi16(z, bc)), pb = _mm_max_epi16(ac, _mm_sub_epi16(z, ac)),
            pc = _mm_max_epi16(abc, _mm_sub_epi16(z, abc));
    /* a where pa <= pb and pa <= pc; else b where pb <= pc; else c */
    __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
    __m128i not_b = _mm_cmpgt_epi16(pb, pc);
    __m128i bc_pick = _mm_or_si128(_mm_and_si128(not_b, c), _mm_andnot_si128(not_b, b));
    return _mm_or_si128(_mm_and_si128(not_a, bc_pick), _mm_andnot_si128(not_a, a));
}

/* The Paeth predictors of 16 bytes. */
static inline __m128i paeth16(__m128i a, __m128i b, __m128i c)
{
    const __m128i z = _mm_setzero_si128();
    __m128i lo = paeth8(_mm_unpacklo_epi8(a, z), _mm_unpacklo_epi8(b, z), _mm_unpacklo_epi8(c, z));
    __m128i hi = paeth8(_mm_unpackhi_epi8(a, z), _mm_unpackhi_epi8(b, z), _mm_unpackhi_epi8(c, z));
    return _mm_packus_epi16(lo, hi);
}

/* Adds the five filters' sums of filter_row over bytes [i, i + 16k) (i >= bpp) to
 * s and returns the first byte not done: the scalar loop's sums, 16 bytes at a
 * time. */
static size_t score_sse2(const unsigned char *cur, const unsigned char *prev, size_t i, size_t n, size_t bpp,
                         uint64_t s[5])
{
    __m128i acc[5];
    for (int f = 0; f < 5; f++)
        acc[f] = _mm_setzero_si128();
    const __m128i one = _mm_set1_epi8(1);
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(cur + i)), a = _mm_loadu_si128((const __m128i *)(cur + i - bpp)),
                b = _mm_loadu_si128((const __m128i *)(prev + i)),
                c = _mm_loadu_si128((const __m128i *)(prev + i - bpp));
        /* floor((a + b) / 2) = rounded-up average - ((a ^ b) & 1) */
        __m128i avg = _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), one));
        acc[0] = _mm_add_epi64(acc[0], sad_signed(x));
        acc[1] = _mm_add_epi64(acc[1], sad_signed(_mm_sub_epi8(x, a)));
        acc[2] = _mm_add_epi64(acc[2], sad_signed(_mm_sub_epi8(x, b)));
        acc[3] = _mm_add_epi64(acc[3], sad_signed(_mm_sub_epi8(x, avg)));
        acc[4] = _mm_add_epi64(acc[4], sad_signed(_mm_sub_epi8(x, paeth16(a, b, c))));
    }
    for (int f = 0; f < 5; f++) {
        uint64_t v[2];
        _mm_storeu_si128((__m128i *)v, acc[f]);
        s[f] += v[0] + v[1];
    }
    return i;
}
#endif

/* Chooses the filter of one row (minimum sum of absolute signed filtered bytes, ties
 * to the lower filter number) and writes filter byte + filtered row to out. prev is
 * the previous raw row (zeros for the first). The first pixel (bpp bytes) has no left
 * neighbour: a = c = 0 there. */
static void filter_row(const unsigned char *cur, const unsigned char *prev, size_t n, size_t bpp, unsigned char *out)
{
    uint64_t s[5] = { 0, 0, 0, 0, 0 };
    size_t i = 0;
    for (; i < bpp && i < n; i++) {
        unsigned x = cur[i], b = prev[i];
        s[0] += absbyte(x);
        s[1] += absbyte(x);
        s[2] += absbyte(x - b);
        s[3] += absbyte(x - (b >> 1));
        s[4] += absbyte(x - b); /* paeth(0, b, 0) = b */
    }
#if VKI_PNG_SSE2
    i = score_sse2(cur, prev, i, n, bpp, s);
#endif
    for (; i < n; i++) {
        unsigned x = cur[i], a = cur[i - bpp], b = prev[i], c = prev[i - bpp];
        s[0] += absbyte(x);
        s[1] += absbyte(x - a);
        s[2] += absbyte(x - b);
        s[3] += absbyte(x - ((a + b) >> 1));
        s[4] += absbyte(x - paeth(a, b, c));
    }
    int best = 0;
    for (int f = 1; f < 5; f++)
        if (s[f] < s[best])
            best = f;
    out[0] = (unsigned char)best;
    unsigned char *o = out + 1;
    size_t k = bpp < n ? bpp : n;
    switch (best) {
    case 0:
        memcpy(o, cur, n);
        break;
    case 1:
        memcpy(o, cur, k);
        for (i = k; i < n; i++)
            o[i] = (unsigned char)(cur[i] - cur[i - bpp]);
        break;
    case 2:
        for (i = 0; i < n; i++)
            o[i] = (unsigned char)(cur[i] - prev[i]);
        break;
    case 3:
        for (i = 0; i < k; i++)
            o[i] = (unsigned char)(cur[i] - (prev[i] >> 1));
        for (; i < n; i++)
            o[i] = (unsigned char)(cur[i] - ((cur[i - bpp] + prev[i]) >> 1));
        break;
    default:
        for (i = 0; i < k; i++)
            o[i] = (unsigned char)(cur[i] - prev[i]);
#if VKI_PNG_SSE2
        for (; i + 16 <= n; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(cur + i)),
                    a = _mm_loadu_si128((const __m128i *)(cur + i - bpp)),
                    b = _mm_loadu_si128((const __m128i *)(prev + i)),
                    c = _mm_loadu_si128((const __m128i *)(prev + i - bpp));
            _mm_storeu_si128((__m128i *)(o + i), _mm_sub_epi8(x, paeth16(a, b, c)));
        }
#endif
        for (; i < n; i++)
            o[i] = (unsigned char)(cur[i] - paeth(cur[i - bpp], prev[i], prev[i - bpp]));
        break;
    }
}

/* The pixels of an 8-bit RGB or RGBA image as palette indices, one row of w after
 * each filter byte (0: none, as libpng does for palette images) of `rows`; the
 * colours (RGBA packed little-endian: r | g << 8 | b << 16 | a << 24) in order of
 * first appearance in pal. false where the image has more than 256. Gray opaque
 * pixels (most of a difference image) find their index in a table, the others in
 * a small open-addressing hash. */
static bool palette_rows(const vkimg_image *im, unsigned char *rows, uint32_t pal[256], int *npal)
{
    const size_t w = (size_t)im->w, h = (size_t)im->h, c = (size_t)im->c;
    int16_t gray[256];
    enum { HBITS = 10, HSIZE = 1 << HBITS };
    uint32_t hkey[HSIZE];
    int16_t hidx[HSIZE];
    memset(gray, 0xff, sizeof gray);
    memset(hidx, 0xff, sizeof hidx);
    int n = 0;
    const unsigned char *src = im->data;
    for (size_t y = 0; y < h; y++) {
        unsigned char *o = rows + y * (w + 1);
        *o++ = 0;
        const unsigned char *p = src + y * w * c;
        for (size_t x = 0; x < w; x++, p += c) {
            unsigned r = p[0], g = p[1], b = p[2], a = c == 4 ? p[3] : 255;
            int k;
            if (r == g && g == b && a == 255 && gray[r] >= 0) {
                k = gray[r];
            } else {
                uint32_t key = r | g << 8 | b << 16 | (uint32_t)a << 24;
                uint32_t hpos = (key * 2654435761u) >> (32 - HBITS);
                while (hidx[hpos] >= 0 && hkey[hpos] != key)
                    hpos = (hpos + 1) & (HSIZE - 1);
                if (hidx[hpos] < 0) {
                    if (n == 256)
                        return false;
                    hkey[hpos] = key;
                    hidx[hpos] = (int16_t)n;
                    pal[n++] = key;
                    if (r == g && g == b && a == 255)
                        gray[r] = hidx[hpos];
                }
                k = hidx[hpos];
            }
            o[x] = (unsigned char)k;
        }
    }
    *npal = n;
    return true;
}

/* Compresses the filtered rows (freed as soon as they are compressed, *filtered
 * set to NULL) and writes the file: IHDR (w, h, depth, ctype), PLTE (and tRNS
 * with every entry's alpha where trns) for a palette, IDAT chunks of at most
 * idat_max bytes, IEND. */
static int png_assemble(unsigned char **filtered, size_t rawlen, int level, size_t idat_max, uint32_t w, uint32_t h,
                        int depth, int ctype, const uint32_t *pal, int npal, bool trns, unsigned char **out,
                        size_t *outlen, vkimg_err *e)
{
    int rc = 0;
    struct libdeflate_compressor *comp = NULL;
    unsigned char *buf = NULL;
    comp = libdeflate_alloc_compressor(level);
    if (!comp) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "png: cannot create a compressor (level %d)", level);
        goto done;
    }
    const size_t bound = libdeflate_zlib_compress_bound(comp, rawlen);
    const size_t maxchunks = bound / idat_max + 1;
    /* signature 8 + IHDR 25 (+ PLTE, tRNS) + IDAT headers/CRCs + data + IEND 12 */
    const size_t head = 8 + 25 + (npal ? 12 + 3 * (size_t)npal : 0) + (trns ? 12 + (size_t)npal : 0);
    if (maxchunks > (SIZE_MAX - head - 12 - bound) / 12) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "png: image too large");
        goto done;
    }
    const size_t cap = head + 12 * maxchunks + bound + 12;
    buf = vki_malloc_big(cap);
    if (!buf) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "png: out of memory (%zu bytes)", cap);
        goto done;
    }
    /* compress straight into the place of the first IDAT's data */
    unsigned char *zdata = buf + head + 8;
    size_t zlen = libdeflate_zlib_compress(comp, *filtered, rawlen, zdata, cap - head - 8);
    if (!zlen) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "png: compression failed");
        goto done;
    }
    free(*filtered);
    *filtered = NULL;

    memcpy(buf, "\x89PNG\r\n\x1a\n", 8);
    unsigned char *ih = buf + 8 + 8;
    put32be(ih, w);
    put32be(ih + 4, h);
    ih[8] = (unsigned char)depth;
    ih[9] = (unsigned char)ctype;
    ih[10] = ih[11] = ih[12] = 0; /* deflate, adaptive filtering, no interlace */
    size_t at = 8 + finish_chunk(buf + 8, "IHDR", 13);
    if (npal) {
        unsigned char *pl = buf + at + 8;
        for (int k = 0; k < npal; k++) {
            pl[3 * k] = (unsigned char)(pal[k] & 0xff);
            pl[3 * k + 1] = (unsigned char)(pal[k] >> 8 & 0xff);
            pl[3 * k + 2] = (unsigned char)(pal[k] >> 16 & 0xff);
        }
        at += finish_chunk(buf + at, "PLTE", 3 * (size_t)npal);
        if (trns) { /* every entry's alpha: the file reads back as RGBA */
            for (int k = 0; k < npal; k++)
                buf[at + 8 + (size_t)k] = (unsigned char)(pal[k] >> 24);
            at += finish_chunk(buf + at, "tRNS", (size_t)npal);
        }
    }

    /* split into IDAT chunks: chunk k's data moves right by 12*k (last first) */
    const size_t nchunks = (zlen + idat_max - 1) / idat_max;
    for (size_t k = nchunks; k-- > 1;) {
        size_t off = k * idat_max, len = zlen - off < idat_max ? zlen - off : idat_max;
        memmove(zdata + off + 12 * k, zdata + off, len);
    }
    size_t pos = head;
    for (size_t k = 0; k < nchunks; k++) {
        size_t off = k * idat_max, len = zlen - off < idat_max ? zlen - off : idat_max;
        pos += finish_chunk(buf + pos, "IDAT", len);
    }
    pos += finish_chunk(buf + pos, "IEND", 0);
    *out = buf;
    *outlen = pos;
    buf = NULL;

done:
    libdeflate_free_compressor(comp);
    free(buf);
    return rc;
}

/* The encoders' level (-1: the default) and IDAT size (out of range: the largest). */
static int png_settings(int *level, size_t *idat_max, vkimg_err *e)
{
    if (*level == -1)
        *level = VKIMG_PNG_LEVEL_DEFAULT;
    if (*level < VKIMG_PNG_LEVEL_MIN || *level > VKIMG_PNG_LEVEL_MAX)
        return vki_fail(e, VKIMG_E_USAGE, "png: compression level %d is outside %d..%d", *level, VKIMG_PNG_LEVEL_MIN,
                        VKIMG_PNG_LEVEL_MAX);
    if (*idat_max < 1 || *idat_max > PNG_IDAT_MAX)
        *idat_max = PNG_IDAT_MAX;
    return 0;
}

int vki_png_encode_indexed(const vkimg_image *im, const uint32_t pal[256], int level, size_t idat_max,
                           unsigned char **out, size_t *outlen, vkimg_err *e)
{
    if (!out || !outlen)
        return vki_fail(e, VKIMG_E_RUNTIME, "png: NULL output");
    *out = NULL;
    *outlen = 0;
    if (!im || !im->data || im->w <= 0 || im->h <= 0 || im->c < 1 || im->c > 4 || im->fmt != VKIMG_U8 || !pal)
        return vki_fail(e, VKIMG_E_RUNTIME, "png: a palette image needs 8-bit indices and a palette");
    int rc = png_settings(&level, &idat_max, e);
    if (rc)
        return rc;
    const size_t w = (size_t)im->w, h = (size_t)im->h, c = (size_t)im->c;
    if (w >= SIZE_MAX / h / c - 1)
        return vki_fail(e, VKIMG_E_RUNTIME, "png: image too large");
    /* only the entries used, in index order: a shorter PLTE and tRNS */
    const unsigned char *src = im->data;
    unsigned char used[256] = { 0 }, remap[256];
    for (size_t i = 0; i < w * h; i++)
        used[src[i * c]] = 1;
    uint32_t pl[256];
    int npal = 0;
    for (int k = 0; k < 256; k++)
        if (used[k]) {
            remap[k] = (unsigned char)npal;
            pl[npal++] = pal[k];
        }
    const size_t rawlen = (w + 1) * h;
    unsigned char *filtered = vki_malloc_big(rawlen);
    if (!filtered)
        return vki_fail(e, VKIMG_E_RUNTIME, "png: out of memory (%zu bytes)", rawlen);
    for (size_t y = 0; y < h; y++) { /* filter 0 (none), as for palette_rows' images */
        unsigned char *o = filtered + y * (w + 1);
        const unsigned char *r = src + y * w * c;
        o[0] = 0;
        for (size_t x = 0; x < w; x++)
            o[1 + x] = remap[r[x * c]];
    }
    rc = png_assemble(&filtered, rawlen, level, idat_max, (uint32_t)w, (uint32_t)h, 8, 3, pl, npal, true, out,
                      outlen, e);
    free(filtered);
    return rc;
}

int vki_png_encode(const vkimg_image *im, int level, unsigned char **out, size_t *outlen, vkimg_err *e)
{
    return vki_png_encode_ex(im, level, PNG_IDAT_MAX, 0, out, outlen, e);
}

int vki_png_encode_ex(const vkimg_image *im, int level, size_t idat_max, unsigned flags, unsigned char **out,
                      size_t *outlen, vkimg_err *e)
{
    if (!out || !outlen)
        return vki_fail(e, VKIMG_E_RUNTIME, "png: NULL output");
    *out = NULL;
    *outlen = 0;
    if (!im || !im->data || im->w <= 0 || im->h <= 0 || im->c < 1 || im->c > 4)
        return vki_fail(e, VKIMG_E_RUNTIME, "png: invalid image");
    if (im->fmt != VKIMG_U8 && im->fmt != VKIMG_U16)
        return vki_fail(e, VKIMG_E_RUNTIME, "png: cannot encode %s samples (u8 or u16 only)", vkimg_fmt_name(im->fmt));
    int rc = png_settings(&level, &idat_max, e);
    if (rc)
        return rc;

    const int is16 = im->fmt == VKIMG_U16;
    const size_t bpp = (size_t)im->c * (is16 ? 2 : 1); /* bytes per pixel */
    const size_t w = (size_t)im->w, h = (size_t)im->h;
    if (w > (SIZE_MAX - 1) / bpp)
        return vki_fail(e, VKIMG_E_RUNTIME, "png: image too large");
    static const unsigned char ctype[5] = { 0, 0, 4, 2, 6 };
    const size_t rowbytes = w * bpp, stride = rowbytes + 1;
    if (h > SIZE_MAX / stride)
        return vki_fail(e, VKIMG_E_RUNTIME, "png: image too large");
    size_t rawlen = stride * h;

    rc = 0;
    unsigned char *filtered = NULL;
    uint32_t pal[256];
    int npal = 0;
    /* a palette image where the pixels allow it (indices: w + 1 bytes a row) */
    if ((flags & VKI_PNG_PALETTE) && !is16 && (im->c == 3 || im->c == 4)) {
        if (!(filtered = vki_malloc_big((w + 1) * h)))
            return vki_fail(e, VKIMG_E_RUNTIME, "png: out of memory (%zu bytes)", (w + 1) * h);
        if (palette_rows(im, filtered, pal, &npal)) {
            rawlen = (w + 1) * h;
        } else {
            npal = 0;
            free(filtered);
            filtered = NULL;
        }
    }
    if (!npal)
        filtered = vki_malloc_big(rawlen);
    unsigned char *zero = calloc(1, rowbytes);
    unsigned char *row16[2] = { NULL, NULL };
    if (is16) {
        row16[0] = malloc(rowbytes);
        row16[1] = malloc(rowbytes);
    }
    if (!filtered || !zero || (is16 && (!row16[0] || !row16[1]))) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "png: out of memory (%zu bytes)", rawlen);
        goto done;
    }

    const unsigned char *prev = zero;
    for (size_t y = 0; y < h && !npal; y++) {
        const unsigned char *cur;
        if (is16) {
            const uint16_t *src = (const uint16_t *)im->data + y * w * (size_t)im->c;
            unsigned char *dst = row16[y & 1];
            for (size_t i = 0; i < w * (size_t)im->c; i++) {
                dst[2 * i] = (unsigned char)(src[i] >> 8);
                dst[2 * i + 1] = (unsigned char)(src[i] & 0xff);
            }
            cur = dst;
        } else {
            cur = (const unsigned char *)im->data + y * rowbytes;
        }
        filter_row(cur, prev, rowbytes, bpp, filtered + y * stride);
        prev = cur;
    }

    rc = png_assemble(&filtered, rawlen, level, idat_max, (uint32_t)im->w, (uint32_t)im->h, is16 ? 16 : 8,
                      npal ? 3 : ctype[im->c], pal, npal, npal && im->c == 4, out, outlen, e);

done:
    free(filtered);
    free(zero);
    free(row16[0]);
    free(row16[1]);
    return rc;
}
