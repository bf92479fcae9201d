/* Sample formats and host images. Image data is always malloc()ed and free()d. */
#include "vkimg/vkimg.h"
#include "core/coded.h"
#include "core/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The public enum and constants carry the numbers of the shared header. */
_Static_assert(VKIMG_U8 == VKI_FMT_U8 && VKIMG_U16 == VKI_FMT_U16 && VKIMG_F16 == VKI_FMT_F16 &&
                   VKIMG_F32 == VKI_FMT_F32 && VKIMG_U32 == VKI_FMT_U32 && VKIMG_U64 == VKI_FMT_U64,
               "vkimg_fmt and vki_shared.h disagree");
_Static_assert(VKIMG_MAX_STAGES == VKI_MAX_STAGES, "VKIMG_MAX_STAGES and vki_shared.h disagree");

size_t vkimg_fmt_size(vkimg_fmt f)
{
    switch (f) {
    case VKIMG_U8: return 1;
    case VKIMG_U16: return 2;
    case VKIMG_F16: return 2;
    case VKIMG_F32: return 4;
    case VKIMG_U32: return 4;
    case VKIMG_U64: return 8;
    }
    return 0;
}

const char *vkimg_fmt_name(vkimg_fmt f)
{
    switch (f) {
    case VKIMG_U8: return "u8";
    case VKIMG_U16: return "u16";
    case VKIMG_F16: return "f16";
    case VKIMG_F32: return "f32";
    case VKIMG_U32: return "u32";
    case VKIMG_U64: return "u64";
    }
    return "unknown";
}

/* w*h*c*size, or 0 if the image is invalid (non-positive size, c outside 1..4,
 * unknown format) or the product does not fit in size_t. */
size_t vkimg_image_bytes(const vkimg_image *im)
{
    if (!im || im->w <= 0 || im->h <= 0 || im->c < 1 || im->c > 4)
        return 0;
    size_t s = vkimg_fmt_size(im->fmt);
    if (!s)
        return 0;
    size_t n = (size_t)im->w;
    if (n > SIZE_MAX / (size_t)im->h)
        return 0;
    n *= (size_t)im->h;
    if (n > SIZE_MAX / ((size_t)im->c * s))
        return 0;
    return n * (size_t)im->c * s;
}

int vkimg_image_alloc(vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    return vki_image_alloc(im, w, h, c, fmt, true, e);
}

int vkimg_image_expand_palette(const vkimg_image *idx, const uint32_t *palette, vkimg_image *rgba, vkimg_err *e)
{
    if (!idx || !idx->data || idx->fmt != VKIMG_U8 || !palette)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_image_expand_palette: not an 8-bit image of indices, or no palette");
    int rc = vki_image_alloc(rgba, idx->w, idx->h, 4, VKIMG_U8, false, e);
    if (rc)
        return rc;
    const unsigned char *s = idx->data;
    unsigned char *d = rgba->data;
    for (size_t i = 0; i < (size_t)idx->w * (size_t)idx->h; i++) {
        uint32_t v = palette[s[i * (size_t)idx->c]];
        d[4 * i] = (unsigned char)v;
        d[4 * i + 1] = (unsigned char)(v >> 8);
        d[4 * i + 2] = (unsigned char)(v >> 16);
        d[4 * i + 3] = (unsigned char)(v >> 24);
    }
    return 0;
}

int vki_image_alloc(vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, bool zero, vkimg_err *e)
{
    if (!im)
        return vki_fail(e, VKIMG_E_RUNTIME, "vkimg_image_alloc: NULL image");
    memset(im, 0, sizeof *im);
    vkimg_image t = { .w = w, .h = h, .c = c, .fmt = fmt };
    if (w <= 0 || h <= 0 || c < 1 || c > 4 || !vkimg_fmt_size(fmt))
        return vki_fail(e, VKIMG_E_RUNTIME, "cannot allocate a %dx%dx%d %s image: invalid size or format", w, h, c,
                        vkimg_fmt_name(fmt));
    size_t n = vkimg_image_bytes(&t);
    if (!n)
        return vki_fail(e, VKIMG_E_RUNTIME, "cannot allocate a %dx%dx%d %s image: size overflows", w, h, c,
                        vkimg_fmt_name(fmt));
    t.data = zero ? vki_calloc_big(n) : vki_malloc_big(n);
    if (!t.data)
        return vki_fail(e, VKIMG_E_RUNTIME, "out of memory allocating a %dx%dx%d %s image (%zu bytes)", w, h, c,
                        vkimg_fmt_name(fmt), n);
    *im = t;
    return 0;
}

void vkimg_image_free(vkimg_image *im)
{
    if (!im)
        return;
    if (im->priv) {
        vki_image_owner *o = im->priv;
        o->release(o);
    } else {
        free(im->data);
    }
    vki_coded_free(im->coded);
    memset(im, 0, sizeof *im);
}

bool vki_drop_alpha_on(void)
{
    const char *ev = getenv("VKIMG_DROP_ALPHA");
    return !(ev && !strcmp(ev, "0"));
}

bool vki_alpha_opaque(const void *data, size_t bytes, int c, size_t ss)
{
    const size_t n = bytes / 8;
    const uint64_t m = ss == 1 ? (c == 4 ? 0xFF000000FF000000ull : 0xFF00FF00FF00FF00ull)
                               : (c == 4 ? 0xFFFF000000000000ull : 0xFFFF0000FFFF0000ull);
    const unsigned char *d = data;
    uint64_t acc = m;
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, d + 8 * i, 8);
        acc &= v | ~m;
        if ((i & 4095) == 4095 && acc != m)
            return false;
    }
    if (acc != m)
        return false;
    const size_t px = (size_t)c * ss; /* the rest, pixel by pixel (words hold whole pixels) */
    for (size_t b = n * 8; b + px <= bytes; b += px)
        for (size_t k = 0; k < ss; k++)
            if (d[b + px - ss + k] != 0xFF)
                return false;
    return true;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define VKI_DROP_SSSE3 1
/* 8-bit RGBA without alpha: four pixels a shuffle, stored as 16 bytes of which the
 * last 4 are the next store's (so it stops four pixels before the end: the stores
 * stay inside dst, and in place they never reach bytes not yet read); the alpha
 * bytes ANDed on the way where `opaque`. Returns the pixels done. */
__attribute__((target("ssse3"))) static size_t drop_alpha_rgba_ssse3(unsigned char *d, const unsigned char *s,
                                                                      size_t n, bool *opaque)
{
    const __m128i m = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    __m128i acc = _mm_set1_epi8(-1);
    size_t i = 0;
    for (; i + 8 <= n; i += 4, s += 16, d += 12) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
        acc = _mm_and_si128(acc, v);
        _mm_storeu_si128((__m128i *)(void *)d, _mm_shuffle_epi8(v, m));
    }
    if (opaque)
        *opaque = (_mm_movemask_epi8(_mm_cmpeq_epi8(acc, _mm_set1_epi8(-1))) & 0x8888) == 0x8888;
    return i;
}

/* vki_alpha_back of 8-bit RGB: four pixels a shuffle from the end, each four read
 * as 16 bytes from their 12 (the 4 after them unused: the next pixels', or past the
 * packed ones inside the RGBA room); stores never reach a pixel not yet read.
 * Returns the pixels left at the start. */
__attribute__((target("ssse3"))) static size_t alpha_back_rgba_ssse3(unsigned char *p, size_t n)
{
    const __m128i m = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    const __m128i a = _mm_set1_epi32((int)0xFF000000u);
    size_t i = n;
    for (; i >= 4; i -= 4) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 3 * (i - 4)));
        _mm_storeu_si128((__m128i *)(void *)(p + 4 * (i - 4)), _mm_or_si128(_mm_shuffle_epi8(v, m), a));
    }
    return i;
}
#endif

void vki_drop_alpha(void *dst, const void *src, size_t n, int c, size_t ss)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    const size_t in_px = (size_t)c * ss, out_px = in_px - ss;
    size_t i = 0;
#ifdef VKI_DROP_SSSE3
    if (ss == 1 && c == 4 && __builtin_cpu_supports("ssse3")) {
        i = drop_alpha_rgba_ssse3(d, s, n, NULL);
        s += 4 * i;
        d += 3 * i;
    }
#endif
    for (; i < n; i++, s += in_px, d += out_px)
        memmove(d, s, out_px);
}

bool vki_drop_alpha_opaque(void *dst, const void *src, size_t n, int c)
{
    size_t i = 0;
#ifdef VKI_DROP_SSSE3
    if (c == 4 && __builtin_cpu_supports("ssse3")) {
        bool opaque;
        i = drop_alpha_rgba_ssse3(dst, src, n, &opaque);
        if (!opaque)
            return false;
    }
#endif
    const unsigned char *s = (const unsigned char *)src + i * (size_t)c;
    if (!vki_alpha_opaque(s, (n - i) * (size_t)c, c, 1))
        return false;
    vki_drop_alpha((unsigned char *)dst + i * (size_t)(c - 1), s, n - i, c, 1);
    return true;
}

void vki_alpha_back(void *data, size_t n, int c)
{
    unsigned char *p = data;
    const size_t k = (size_t)c - 1;
#ifdef VKI_DROP_SSSE3
    if (c == 4 && __builtin_cpu_supports("ssse3"))
        n = alpha_back_rgba_ssse3(p, n);
#endif
    for (size_t i = n; i-- > 0;) {
        memmove(p + i * (size_t)c, p + i * k, k);
        p[i * (size_t)c + k] = 0xFF;
    }
}
