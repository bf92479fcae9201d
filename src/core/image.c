/* Sample formats and host images. Image data is always malloc()ed and free()d. */
#include "vkimg/vkimg.h"
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
    free(im->coded);
    memset(im, 0, sizeof *im);
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

void vki_drop_alpha(void *dst, const void *src, size_t n, int c, size_t ss)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    const size_t in_px = (size_t)c * ss, out_px = in_px - ss;
    size_t i = 0;
    if (ss == 1 && c == 4)
        for (; i + 4 <= n; i += 4, s += 16, d += 12) {
            uint64_t a, b;
            memcpy(&a, s, 8);
            memcpy(&b, s + 8, 8);
            const uint64_t lo = (a & 0xFFFFFFull) | ((a >> 8) & 0xFFFFFF000000ull) | (b << 48);
            const uint32_t hi = (uint32_t)((b >> 16) & 0xFFu) | (uint32_t)((b >> 24) & 0xFFFFFF00u);
            memcpy(d, &lo, 8);
            memcpy(d + 8, &hi, 4);
        }
    for (; i < n; i++, s += in_px, d += out_px)
        memmove(d, s, out_px);
}
