/* The size limits every decoder checks before allocating pixel memory, and the
 * allocation of the decoded image. */
#include "io/io_priv.h"
#include "core/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int vki_check_dims(const char *name, uint64_t w, uint64_t h, uint64_t max_pixels, vkimg_err *e)
{
    if (!max_pixels)
        max_pixels = VKIMG_DEFAULT_MAX_PIXELS;
    if (w == 0 || h == 0)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image has no pixels (%llux%llu)", name, (unsigned long long)w,
                        (unsigned long long)h);
    if (w > VKI_MAX_SIDE || h > VKI_MAX_SIDE)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image is %llux%llu, a side over the limit of %d", name,
                        (unsigned long long)w, (unsigned long long)h, VKI_MAX_SIDE);
    if (w * h > max_pixels) /* both <= 2^24: no overflow */
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image is %llux%llu = %llu pixels, over the limit of %llu (--max-pixels)",
                        name, (unsigned long long)w, (unsigned long long)h, (unsigned long long)(w * h),
                        (unsigned long long)max_pixels);
    return 0;
}

int vki_decoded_alloc(vkimg_image *out, uint32_t w, uint32_t h, int c, vkimg_fmt fmt, const char *name,
                      vkimg_err *e)
{
    memset(out, 0, sizeof *out);
    /* w, h <= 2^24 (vki_check_dims), c <= 4, 4 bytes a sample: < 2^53 */
    const size_t n = (size_t)w * h * (size_t)c * vkimg_fmt_size(fmt);
    void *p = vki_malloc_big(n);
    if (!p)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, n);
    out->w = (int)w;
    out->h = (int)h;
    out->c = c;
    out->fmt = fmt;
    out->data = p;
    return 0;
}

int vki_decoded_alloc_opts(const vkimg_load_opts *o, vkimg_image *out, uint32_t w, uint32_t h, int c, vkimg_fmt fmt,
                           const char *name, vkimg_err *e)
{
    if (o && o->alloc) {
        memset(out, 0, sizeof *out);
        int rc = o->alloc(o->user, out, (int)w, (int)h, c, fmt, e);
        if (rc == 0) {
            if (!out->data || out->w != (int)w || out->h != (int)h || out->c != c || out->fmt != fmt) {
                vkimg_image_free(out);
                return vki_fail(e, VKIMG_E_RUNTIME, "%s: the load options' allocator gave no %ux%ux%d image", name,
                                w, h, c);
            }
            return 0;
        }
        if (rc != 1) {
            memset(out, 0, sizeof *out);
            return rc;
        }
    }
    return vki_decoded_alloc(out, w, h, c, fmt, name, e);
}

int vki_shrink_denom(const vkimg_load_opts *o, int w, int h, int orientation)
{
    if (!o || !o->min_size)
        return 1;
    int min_w = w, min_h = h;
    o->min_size(o->user, w, h, orientation, &min_w, &min_h);
    for (int d = 8; d > 1; d /= 2)
        if ((w + d - 1) / d >= min_w && (h + d - 1) / d >= min_h)
            return d;
    return 1;
}

int vki_dec_fail(vkimg_err *e, const char *name, const char *format, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vki_fail(e, VKIMG_E_RUNTIME, "%s: %s: %s", name, format, msg);
}
