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
#include <stdatomic.h>
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

/* How the filtered rows are made: by the band's thread from the image (filter_row
 * on each row), or before (rows != NULL in png_assemble's caller: palette images). */
typedef struct {
    const vkimg_image *im; /* NULL: the rows are filtered already */
    size_t rowbytes, bpp;
    bool is16;
    unsigned char *tmp; /* filter_rows's 3 * rowbytes, for the calling thread */
} png_filter;

/* Filters rows [y0, y1) into rows (row y at (y - y0) * (rowbytes + 1)); tmp holds
 * 3 * rowbytes bytes (16-bit rows made big-endian, a row of zeros). */
static void filter_rows(const png_filter *f, size_t y0, size_t y1, unsigned char *rows, unsigned char *tmp)
{
    const size_t rowbytes = f->rowbytes, stride = rowbytes + 1, n = rowbytes / (f->is16 ? 2 : 1);
    unsigned char *zero = tmp + 2 * rowbytes;
    memset(zero, 0, rowbytes);
    const unsigned char *prev = zero;
    for (size_t y = y0 == 0 ? 0 : y0 - 1; y < y1; y++) {
        const unsigned char *cur;
        if (f->is16) {
            const uint16_t *src = (const uint16_t *)f->im->data + y * n;
            unsigned char *dst = tmp + (y & 1) * rowbytes;
            for (size_t i = 0; i < n; i++) {
                dst[2 * i] = (unsigned char)(src[i] >> 8);
                dst[2 * i + 1] = (unsigned char)(src[i] & 0xff);
            }
            cur = dst;
        } else {
            cur = (const unsigned char *)f->im->data + y * rowbytes;
        }
        if (y >= y0) /* (row y0 - 1 is only the one above) */
            filter_row(cur, prev, rowbytes, f->bpp, rows + (y - y0) * stride);
        prev = cur;
    }
}

/* Large images are compressed in bands of rows, each a deflate stream of its own
 * (joined by vki_deflate_unfinal), so that several threads can make them. The
 * bands depend on the image alone, not on the threads: the same file whatever
 * the machine. A band has at least vki_png_band_min filtered bytes, and there are at
 * most PNG_BANDS_MAX. */
#define PNG_BANDS_MAX 16
size_t vki_png_band_min = (size_t)4 << 20;

typedef struct {
    const png_filter *f;
    unsigned char *filtered; /* the rows, filtered; NULL: each thread filters its bands (f->im) */
    size_t stride, h;
    int level, nbands;
    atomic_int next, failed;
    unsigned char **z; /* each band's deflate stream */
    size_t *zlen;
    uint32_t *adler;
} png_bands;

static void *band_worker(void *arg)
{
    png_bands *pb = arg;
    struct libdeflate_compressor *comp = libdeflate_alloc_compressor(pb->level);
    /* filtering here: the band's rows into a buffer of this thread's, used for each of its bands (a
     * whole filtered copy of the image was as large as the image, its pages each touched once) */
    const bool own = !pb->filtered;
    unsigned char *tmp = own ? malloc(3 * pb->f->rowbytes) : NULL;
    unsigned char *rows = own ? vki_malloc_big((pb->h / (size_t)pb->nbands + 1) * pb->stride) : NULL;
    if (!comp || (own && (!tmp || !rows)))
        atomic_store(&pb->failed, 1);
    for (int k; !atomic_load(&pb->failed) && (k = atomic_fetch_add(&pb->next, 1)) < pb->nbands;) {
        const size_t y0 = pb->h * (size_t)k / (size_t)pb->nbands, y1 = pb->h * (size_t)(k + 1) / (size_t)pb->nbands;
        if (own)
            filter_rows(pb->f, y0, y1, rows, tmp);
        const unsigned char *in = own ? rows : pb->filtered + y0 * pb->stride;
        const size_t len = (y1 - y0) * pb->stride, cap = libdeflate_deflate_compress_bound(comp, len) + 8;
        unsigned char *z = malloc(cap);
        size_t zl = z ? libdeflate_deflate_compress(comp, in, len, z, cap - 8) : 0;
        /* every band but the last goes on into the next */
        if (!zl || (k + 1 < pb->nbands && !vki_deflate_unfinal(z, zl, &zl))) {
            free(z);
            atomic_store(&pb->failed, 1);
            break;
        }
        pb->z[k] = z;
        pb->zlen[k] = zl;
        pb->adler[k] = libdeflate_adler32(1, in, len);
    }
    free(rows);
    free(tmp);
    libdeflate_free_compressor(comp);
    return NULL;
}

/* The Adler-32 of two pieces' data from theirs (a: the first's, b: the second's of
 * blen bytes). */
static uint32_t adler32_join(uint32_t a, uint32_t b, size_t blen)
{
    const uint64_t m = 65521;
    const uint64_t r = blen % m, a1 = a & 0xffff, a2 = a >> 16, b1 = b & 0xffff, b2 = b >> 16;
    const uint64_t s1 = (a1 + b1 + m - 1) % m;
    const uint64_t s2 = (a2 + b2 + r * a1 % m + m - r) % m;
    return (uint32_t)(s2 << 16 | s1);
}

/* The zlib stream of the filtered rows, in bands on up to `threads` threads
 * (the calling one among them); *z malloc()ed with `room` bytes free before
 * the stream and room after it for the IDAT chunks' headers (of at most
 * idat_max bytes) and IEND. 0 where the image is one band or something failed:
 * the caller compresses it whole. */
static size_t compress_bands(const png_filter *f, unsigned char *filtered, size_t stride, size_t h, int level,
                             int threads, size_t room, size_t idat_max, unsigned char **z)
{
    const size_t rawlen = stride * h;
    size_t nb = rawlen / (vki_png_band_min ? vki_png_band_min : 1);
    if (nb > PNG_BANDS_MAX)
        nb = PNG_BANDS_MAX;
    if (nb > h)
        nb = h;
    *z = NULL;
    if (nb < 2 || level == 0)
        return 0;
    png_bands pb = { .f = f, .filtered = filtered, .stride = stride, .h = h, .level = level, .nbands = (int)nb };
    atomic_init(&pb.next, 0);
    atomic_init(&pb.failed, 0);
    pb.z = calloc(nb, sizeof *pb.z);
    pb.zlen = calloc(nb, sizeof *pb.zlen);
    pb.adler = calloc(nb, sizeof *pb.adler);
    if (pb.z && pb.zlen && pb.adler)
        vki_run_threads(band_worker, &pb, threads < (int)nb ? threads : (int)nb);
    else
        atomic_store(&pb.failed, 1);
    size_t total = 0, n = 0;
    if (!atomic_load(&pb.failed)) {
        size_t zl = 2 + 4;
        for (size_t k = 0; k < nb; k++)
            zl += pb.zlen[k];
        total = room + zl + 12 * (zl / idat_max + 1) + 12;
        unsigned char *out = vki_malloc_big(total);
        if (out) {
            /* zlib header: deflate, 32K window, libdeflate's level hint */
            const unsigned hint = level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3;
            unsigned hdr = 0x7800u | hint << 6;
            hdr |= 31 - hdr % 31;
            out[room] = (unsigned char)(hdr >> 8);
            out[room + 1] = (unsigned char)hdr;
            n = room + 2;
            uint32_t adler = 1;
            for (size_t k = 0; k < nb; k++) {
                memcpy(out + n, pb.z[k], pb.zlen[k]);
                n += pb.zlen[k];
                const size_t y0 = h * k / nb, y1 = h * (k + 1) / nb;
                adler = k ? adler32_join(adler, pb.adler[k], (y1 - y0) * stride) : pb.adler[k];
            }
            put32be(out + n, adler);
            n += 4 - room;
            *z = out;
        }
    }
    for (size_t k = 0; pb.z && k < nb; k++)
        free(pb.z[k]);
    free(pb.z);
    free(pb.zlen);
    free(pb.adler);
    return *z ? n : 0;
}

/* Compresses the filtered rows (h rows of stride bytes: filtered here from f->im
 * where it is set, *filtered NULL; else *filtered, made by the caller), in bands
 * on up to `threads` threads where the image is large (compress_bands: each
 * thread filters its bands into a band's buffer), and writes the file: IHDR (w,
 * h, depth, ctype), PLTE (and tRNS with every entry's alpha where trns) for a
 * palette, IDAT chunks of at most idat_max bytes, IEND. *filtered (the caller's,
 * or the whole image's filtered here for one stream) is freed as soon as it is
 * compressed (set to NULL). */
static int png_assemble(unsigned char **filtered, const png_filter *f, int threads, size_t stride, int level,
                        size_t idat_max, uint32_t w, uint32_t h, int depth, int ctype, const uint32_t *pal, int npal,
                        bool trns, unsigned char **out, size_t *outlen, vkimg_err *e)
{
    int rc = 0;
    struct libdeflate_compressor *comp = NULL;
    unsigned char *buf = NULL, *zdata;
    const size_t rawlen = stride * h;
    /* signature 8 + IHDR 25 (+ PLTE, tRNS) + IDAT headers/CRCs + data + IEND 12 */
    const size_t head = 8 + 25 + (npal ? 12 + 3 * (size_t)npal : 0) + (trns ? 12 + (size_t)npal : 0);
    size_t zlen = compress_bands(f, *filtered, stride, h, level, threads, head + 8, idat_max, &buf);
    if (zlen) {
        zdata = buf + head + 8;
    } else {
        if (f->im) {
            if (!*filtered && !(*filtered = vki_malloc_big(rawlen))) {
                rc = vki_fail(e, VKIMG_E_RUNTIME, "png: out of memory (%zu bytes)", rawlen);
                goto done;
            }
            filter_rows(f, 0, h, *filtered, f->tmp);
        }
        comp = libdeflate_alloc_compressor(level);
        if (!comp) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "png: cannot create a compressor (level %d)", level);
            goto done;
        }
        const size_t bound = libdeflate_zlib_compress_bound(comp, rawlen);
        const size_t maxchunks = bound / idat_max + 1;
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
        zdata = buf + head + 8;
        zlen = libdeflate_zlib_compress(comp, *filtered, rawlen, zdata, cap - head - 8);
        if (!zlen) {
            rc = vki_fail(e, VKIMG_E_RUNTIME, "png: compression failed");
            goto done;
        }
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
    const png_filter f = { 0 }; /* the rows are made */
    rc = png_assemble(&filtered, &f, 1, w + 1, level, idat_max, (uint32_t)w, (uint32_t)h, 8, 3, pl, npal, true, out,
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
    png_filter f = { .im = npal ? NULL : im, .rowbytes = rowbytes, .bpp = bpp, .is16 = is16 };
    f.tmp = npal ? NULL : malloc(3 * rowbytes);
    if (npal ? !filtered : !f.tmp) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "png: out of memory (%zu bytes)", rawlen);
        goto done;
    }
    rc = png_assemble(&filtered, &f, (int)(flags >> 8 & 0xff), npal ? w + 1 : stride, level, idat_max,
                      (uint32_t)im->w, (uint32_t)im->h, is16 ? 16 : 8, npal ? 3 : ctype[im->c], pal, npal,
                      npal && im->c == 4, out, outlen, e);

done:
    free(filtered);
    free(f.tmp);
    return rc;
}
