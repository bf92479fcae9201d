/* Image encode: PNG (png_enc.c), JPEG (jpeg.c), WebP (webp.c), NPY (npy.c), BMP/TGA/HDR
 * through stb_image_write (stb_impl.c); written atomically (file.c). */
#include "io/io_priv.h"
#include "io/ktx2.h"
#include "io/meta.h"
#include "core/util.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct membuf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} membuf;

static void membuf_write(void *ctx, void *data, int size)
{
    membuf *m = ctx;
    if (m->oom || size <= 0)
        return;
    size_t s = (size_t)size;
    if (s > m->cap - m->n) {
        size_t cap = m->cap ? m->cap : 65536;
        while (cap - m->n < s) {
            if (cap > SIZE_MAX / 2) {
                m->oom = 1;
                return;
            }
            cap *= 2;
        }
        unsigned char *p = realloc(m->p, cap);
        if (!p) {
            m->oom = 1;
            return;
        }
        m->p = p;
        m->cap = cap;
    }
    memcpy(m->p + m->n, data, s);
    m->n += s;
}

/* Writes an encoded PNG, JPEG or WebP of c channels (and frees it), with the ICC
 * profile, EXIF and XMP of meta (and in a JPEG the Photoshop resources) inserted when
 * there are any; a profile of another
 * colour space than the image's is left out (vki_icc_fits). */
static int write_with_meta(const char *path, vkimg_file_kind k, unsigned char *buf, size_t n, int c,
                           const vkimg_meta *meta, vkimg_err *e)
{
    int rc;
    vkimg_meta fit;
    if (meta && meta->icc_len && !vki_icc_fits(meta->icc, meta->icc_len, c)) {
        fit = *meta;
        fit.icc = NULL;
        fit.icc_len = 0;
        meta = &fit;
    }
    if (meta && (meta->icc_len || meta->exif_len || meta->xmp_len || (meta->iptc_len && k == VKIMG_FILE_JPEG))) {
        unsigned char *out = NULL;
        size_t outlen = 0;
        vkimg_err me;
        rc = k == VKIMG_FILE_PNG    ? vki_png_add_meta(buf, n, meta, &out, &outlen, NULL, &me)
             : k == VKIMG_FILE_WEBP ? vki_webp_add_meta(buf, n, meta, &out, &outlen, NULL, &me)
                                    : vki_jpeg_add_meta(buf, n, meta, &out, &outlen, NULL, &me);
        free(buf);
        if (rc)
            return vki_fail(e, rc, "%s: metadata: %s", path, me.msg);
        buf = out;
        n = outlen;
    }
    rc = vki_write_atomic(path, buf, n, e);
    free(buf);
    return rc;
}

static unsigned png_flags(const vkimg_save_opts *o)
{
    if (!o)
        return 0;
    const int threads = o->threads < 1 ? 1 : o->threads > 255 ? 255 : o->threads;
    return (o->png_palette ? VKI_PNG_PALETTE : 0) | VKI_PNG_THREADS(threads);
}

int vkimg_save(const char *path, const vkimg_image *im, const vkimg_save_opts *o, vkimg_err *e)
{
    if (!path || !*path)
        return vki_fail(e, VKIMG_E_USAGE, "empty output path");
    vkimg_file_kind k;
    int rc = vki_output_kind(path, &k, e);
    if (rc)
        return rc;
    size_t bytes = vkimg_image_bytes(im);
    if (!im || !im->data || !bytes)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: invalid image (%dx%dx%d %s)", path, im ? im->w : 0, im ? im->h : 0,
                        im ? im->c : 0, im ? vkimg_fmt_name(im->fmt) : "-");
    if (im->coded) { /* coded on the device for a JPEG (vkimg_run_opts.jpeg_quality): the entropy coding */
        if (k != VKIMG_FILE_JPEG)
            return vki_fail(e, VKIMG_E_USAGE, "%s: the image was coded for a JPEG output, not %s", path,
                            vki_kind_name(k));
        unsigned char *jpg;
        size_t n;
        vkimg_err je;
        if ((rc = vki_jpeg_encode_coded(im, &jpg, &n, &je)))
            return vki_fail(e, rc, "%s: %s", path, je.msg);
        return write_with_meta(path, k, jpg, n, im->c, o ? o->meta : NULL, e);
    }
    if (o && o->palette && im->fmt == VKIMG_U8 && k != VKIMG_FILE_PNG) {
        /* indices: the other formats take the colours */
        vkimg_image rgba;
        if ((rc = vkimg_image_expand_palette(im, o->palette, &rgba, e)))
            return rc;
        vkimg_save_opts so = *o;
        so.palette = NULL;
        rc = vkimg_save(path, &rgba, &so, e);
        vkimg_image_free(&rgba);
        return rc;
    }
    vkimg_fmt want = vkimg_file_fmt(k, im->fmt);
    if (im->fmt != want)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: %s takes %s samples, the image has %s", path, vki_kind_name(k),
                        k == VKIMG_FILE_PNG ? "u8 or u16" : vkimg_fmt_name(want), vkimg_fmt_name(im->fmt));
    /* each option is checked where it applies */
    int quality = o ? o->quality : 0, level = o ? o->png_level : -1;
    if (quality == 0)
        quality = VKIMG_QUALITY_DEFAULT;
    if ((k == VKIMG_FILE_JPEG || k == VKIMG_FILE_WEBP) && (quality < VKIMG_QUALITY_MIN || quality > VKIMG_QUALITY_MAX))
        return vki_fail(e, VKIMG_E_USAGE, "%s: %s quality %d is outside %d..%d", path, vki_kind_name(k), quality,
                        VKIMG_QUALITY_MIN, VKIMG_QUALITY_MAX);
    if (level == -1)
        level = VKIMG_PNG_LEVEL_DEFAULT;
    if (k == VKIMG_FILE_PNG && (level < VKIMG_PNG_LEVEL_MIN || level > VKIMG_PNG_LEVEL_MAX))
        return vki_fail(e, VKIMG_E_USAGE, "%s: PNG level %d is outside %d..%d", path, level, VKIMG_PNG_LEVEL_MIN,
                        VKIMG_PNG_LEVEL_MAX);

    if (k == VKIMG_FILE_PNG) {
        unsigned char *png;
        size_t n;
        vkimg_err pe;
        const bool indexed = o && o->palette && im->fmt == VKIMG_U8; /* of colours: RGB(A) */
        if ((rc = indexed ? vki_png_encode_indexed(im, o->palette, level, 0, &png, &n, &pe)
                          : vki_png_encode_ex(im, level, 0, png_flags(o), &png, &n, &pe)))
            return vki_fail(e, rc, "%s: %s", path, pe.msg);
        return write_with_meta(path, k, png, n, indexed ? 3 : im->c, o ? o->meta : NULL, e);
    }
    if (k == VKIMG_FILE_NPY) {
        size_t shape[3] = { (size_t)im->h, (size_t)im->w, (size_t)im->c };
        return vki_npy_save(path, vki_npy_descr(im->fmt), im->c == 1 ? 2 : 3, shape, im->data, bytes, e);
    }
    if (k == VKIMG_FILE_KTX2) /* one level */
        return vki_ktx2_save(path, im, 1, e);

    if (k == VKIMG_FILE_WEBP) { /* libwebp (webp.c): gray as RGB, alpha kept */
        unsigned char *wp;
        size_t n;
        vkimg_err we;
        if ((rc = vki_webp_encode(im, quality, o && o->lossless, o ? o->threads : 1, &wp, &n, &we)))
            return vki_fail(e, rc, "%s: %s", path, we.msg);
        return write_with_meta(path, k, wp, n, vki_webp_channels(im->c), o ? o->meta : NULL, e);
    }
    if (k == VKIMG_FILE_TIFF) { /* ours (tiff.c): Deflate, 1-4 channels, u8/u16/f32; the ICC profile where it fits, the EXIF */
        vkimg_meta m = { .orientation = 1 };
        if (o && o->meta) {
            m = *o->meta;
            if (m.icc_len && !vki_icc_fits(m.icc, m.icc_len, im->c))
                m.icc = NULL, m.icc_len = 0;
        }
        return vki_tiff_save(path, im, &m, !(o && o->tiff_uncompressed), o ? o->threads : 1, e);
    }
    /* JPEG and TGA headers hold 16-bit sizes */
    const int64_t w = im->w, h = im->h;
    if ((k == VKIMG_FILE_JPEG || k == VKIMG_FILE_TGA) && (w > 65535 || h > 65535))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: %s is limited to 65535x65535 pixels, the image is %dx%d", path,
                        vki_kind_name(k), im->w, im->h);
    if (k == VKIMG_FILE_JPEG) { /* TurboJPEG (jpeg.c): gray stays gray, alpha is dropped */
        unsigned char *jpg;
        size_t n;
        vkimg_err je;
        if ((rc = vki_jpeg_encode_ex(im, quality, o ? o->threads : 1, &jpg, &n, &je)))
            return vki_fail(e, rc, "%s: %s", path, je.msg);
        return write_with_meta(path, k, jpg, n, im->c, o ? o->meta : NULL, e);
    }
    /* stb_image_write computes offsets and sizes in int */
    if ((w * 4 + 4) * h > INT_MAX - 4096) /* bytes of BMP/TGA, samples of HDR */
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image too large for the %s writer (%dx%d)", path, vki_kind_name(k),
                        im->w, im->h);
    membuf m = { NULL, 0, 0, 0 };
    int ok = 0;
    switch (k) {
    case VKIMG_FILE_BMP: /* 24-bit (gray expanded) or 32-bit RGBA (gray + alpha expanded: it keeps its alpha) */
        if (im->c == 2) {
            unsigned char *rgba = vki_gray_widen(im);
            if (!rgba)
                return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", path, (size_t)im->w * im->h * 4);
            ok = vki_stbiw_write(k, membuf_write, &m, im->w, im->h, 4, rgba);
            free(rgba);
            break;
        }
        ok = vki_stbiw_write(k, membuf_write, &m, im->w, im->h, im->c, im->data);
        break;
    case VKIMG_FILE_TGA: /* keeps 1-4 channels, RLE */
    case VKIMG_FILE_HDR: /* RGBE: gray expanded, alpha dropped */
        ok = vki_stbiw_write(k, membuf_write, &m, im->w, im->h, im->c, im->data);
        break;
    default:
        break;
    }
    if (!ok || m.oom || !m.n) {
        free(m.p);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: %s encoding failed%s", path, vki_kind_name(k),
                        m.oom ? ": out of memory" : "");
    }
    rc = vki_write_atomic(path, m.p, m.n, e);
    free(m.p);
    return rc;
}
