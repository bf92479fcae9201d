/* Images in device-visible memory (vkimg_image_alloc_device; results kept where
 * the device wrote them, vkimg_run_opts.device_output): the image's data is a
 * mapped buffer of the context, its priv the owner below, which vkimg_image_free
 * gives back to the context's buffer pool. */
#include "gpu/gpu.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct devimg {
    vki_image_owner base; /* first: vkimg_image.priv points here */
    vki_gpu *g;
    vki_buf buf;
} devimg;

static void devimg_release(vki_image_owner *o)
{
    devimg *d = (devimg *)o;
    vki_buf_destroy(d->g, &d->buf);
    free(d);
}

int vki_devimg_adopt(vki_gpu *g, vki_buf *b, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    memset(im, 0, sizeof *im);
    devimg *d = calloc(1, sizeof *d);
    if (!d) {
        vki_buf_destroy(g, b);
        return vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
    }
    d->base.release = devimg_release;
    d->base.cap = (size_t)b->size;
    d->g = g;
    d->buf = *b;
    memset(b, 0, sizeof *b);
    *im = (vkimg_image){ .w = w, .h = h, .c = c, .fmt = fmt, .data = d->buf.map, .priv = d };
    return 0;
}

int vki_devimg_alloc(vki_gpu *g, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    vkimg_image t = { .w = w, .h = h, .c = c, .fmt = fmt };
    memset(im, 0, sizeof *im);
    size_t n = vkimg_image_bytes(&t);
    if (w <= 0 || h <= 0 || c < 1 || c > 4 || !n)
        return vki_fail(e, VKIMG_E_USAGE, "cannot allocate a %dx%dx%d %s image: invalid size or format", w, h, c,
                        vkimg_fmt_name(fmt));
    vki_buf b;
    /* what the run engine takes as an input (exec/run.c): where device memory is
     * host memory the device's own buffer, else cached staging memory; a byte a
     * row more, for a decoder to inflate a PNG's filtered rows in place */
    const size_t room = n + (size_t)h;
    int rc = g->uma ? vki_buf_create(g, vki_input_buffer_size(room), VKI_MEM_MAPPED, "input image", &b, e)
                    : vki_buf_create(g, room, VKI_MEM_HOST_IN, "input image (staging)", &b, e);
    if (rc)
        return rc;
    return vki_devimg_adopt(g, &b, im, w, h, c, fmt, e);
}

const vki_buf *vki_devimg_buf(const vkimg_image *im, const vki_gpu *g)
{
    const devimg *d = im ? im->priv : NULL;
    if (!d || d->base.release != devimg_release || d->g != g)
        return NULL;
    return &d->buf;
}

int vkimg_image_alloc_device(vkimg_ctx *ctx, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    if (!im)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_image_alloc_device: NULL image");
    memset(im, 0, sizeof *im);
    if (!ctx)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_image_alloc_device: NULL context");
    return vki_devimg_alloc(&ctx->gpu, im, w, h, c, fmt, e);
}
