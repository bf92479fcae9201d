/* GIF decoder: giflib (linked statically into the binary, shared into libvkimg.so),
 * read record by record from memory, first frame only.
 *
 * The result is what stb_image gives for a GIF: the logical screen (canvas) as RGBA,
 * transparent black (0, 0, 0, 0) where the first frame does not paint, the frame's
 * pixels from its local colour table or else the global one, pixels of the
 * transparent index (the Graphic Control Extension before the frame) left
 * transparent. Two differences: stb paints the canvas outside the frame with the
 * background colour when the background index is not 0 (with its red and blue
 * swapped); here, as in browsers, it stays transparent. And where nothing can be
 * transparent (no transparent index, the frame covers the canvas) the result is
 * RGB, as libvips gives it: an opaque GIF made a PNG with an alpha channel of 255s
 * and a run with a channel more on the device.
 *
 * Hardening:
 *  - the canvas size is checked with vki_check_dims before anything is allocated;
 *    the frame size too (it bounds the decoding work), and the frame is clipped to
 *    the canvas: only one row of the frame is held at a time, so a frame larger than
 *    the canvas costs no memory;
 *  - giflib reads through a callback that never reads past the buffer; it checks the
 *    LZW stream (codes, stack depth) and reports a stream that ends before the
 *    frame's last pixel (D_GIF_ERR_EOF_TOO_SOON) or a truncated file;
 *  - a pixel index past the colour table (other than the transparent index) is an
 *    error, as is a frame without a colour table;
 *  - after the first frame the rest of the file is walked (extensions and later
 *    frames' LZW blocks skipped, not decoded) up to the trailer, so that a truncated
 *    or corrupt file is an error even when its first frame is complete. */
#include "io/io_priv.h"
#include "core/util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

typedef struct gif_src {
    const unsigned char *b;
    size_t len, pos;
} gif_src;

static int gif_read(GifFileType *g, GifByteType *dst, int n)
{
    gif_src *s = g->UserData;
    if (n <= 0)
        return 0;
    size_t k = s->len - s->pos < (size_t)n ? s->len - s->pos : (size_t)n;
    memcpy(dst, s->b + s->pos, k);
    s->pos += k;
    return (int)k;
}

#define gif_fail(e, name, ...) vki_dec_fail(e, name, "GIF", __VA_ARGS__)

/* giflib's reason for the last failure on g (or err when g is NULL). */
static const char *gif_reason(const GifFileType *g, int err)
{
    int code = g ? g->Error : err;
    const char *r = code ? GifErrorString(code) : NULL;
    if (code == D_GIF_ERR_READ_FAILED)
        return "truncated (the data ends early)";
    return r ? r : "corrupt data";
}

/* Skips the sub-blocks of an extension whose first block has been read. */
static int skip_extension(GifFileType *g, GifByteType *blk)
{
    while (blk)
        if (DGifGetExtensionNext(g, &blk) == GIF_ERROR)
            return GIF_ERROR;
    return GIF_OK;
}

int vki_gif_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                   vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out || len < 6 || (memcmp(b, "GIF87a", 6) && memcmp(b, "GIF89a", 6)))
        return gif_fail(e, name, "not a GIF signature (GIF87a or GIF89a)");
    if (len > INT_MAX)
        return gif_fail(e, name, "file too large");

    gif_src src = { b, len, 0 };
    int err = 0, rc = 0;
    GifFileType *g = DGifOpen(&src, gif_read, &err); /* reads the screen descriptor + global colour table */
    if (!g)
        return gif_fail(e, name, "%s", gif_reason(NULL, err));
    unsigned char *line = NULL;
    vkimg_image im = { 0 };

    if ((rc = vki_check_dims(name, (uint64_t)g->SWidth, (uint64_t)g->SHeight, max_pixels, e)))
        goto done;
    const size_t cw = (size_t)g->SWidth, ch = (size_t)g->SHeight;

    /* ---- records up to the first frame: extensions (the last Graphic Control
     * Extension gives the transparent index) */
    int transparent = -1, frame = 0;
    while (!frame) {
        GifRecordType t;
        if (DGifGetRecordType(g, &t) == GIF_ERROR) {
            rc = gif_fail(e, name, "%s", gif_reason(g, 0));
            goto done;
        }
        switch (t) {
        case EXTENSION_RECORD_TYPE: {
            int code;
            GifByteType *blk;
            if (DGifGetExtension(g, &code, &blk) == GIF_ERROR) {
                rc = gif_fail(e, name, "%s", gif_reason(g, 0));
                goto done;
            }
            if (code == GRAPHICS_EXT_FUNC_CODE && blk && blk[0] == 4) /* flags, delay (2), index */
                transparent = blk[1] & 1 ? blk[4] : -1;
            if (skip_extension(g, blk) == GIF_ERROR) {
                rc = gif_fail(e, name, "%s", gif_reason(g, 0));
                goto done;
            }
            break;
        }
        case IMAGE_DESC_RECORD_TYPE:
            frame = 1;
            break;
        case TERMINATE_RECORD_TYPE:
            rc = gif_fail(e, name, "no image in the file");
            goto done;
        default:
            rc = gif_fail(e, name, "unknown record");
            goto done;
        }
    }

    /* ---- the first frame */
    if (DGifGetImageDesc(g) == GIF_ERROR) {
        rc = gif_fail(e, name, "%s", gif_reason(g, 0));
        goto done;
    }
    const GifImageDesc *fd = &g->Image;
    const ColorMapObject *cmap = fd->ColorMap ? fd->ColorMap : g->SColorMap;
    if (!cmap) {
        rc = gif_fail(e, name, "the first frame has no colour table");
        goto done;
    }
    if (fd->Width <= 0 || fd->Height <= 0) {
        rc = gif_fail(e, name, "the first frame has no pixels (%dx%d)", fd->Width, fd->Height);
        goto done;
    }
    if ((rc = vki_check_dims(name, (uint64_t)fd->Width, (uint64_t)fd->Height, max_pixels, e)))
        goto done;
    /* the part of the frame on the canvas (Left, Top, Width, Height are 0..65535) */
    const size_t fx = (size_t)fd->Left, fy = (size_t)fd->Top, fw = (size_t)fd->Width, fh = (size_t)fd->Height;
    /* channels: RGB where every pixel is painted opaque (an index past the table is an error) */
    const size_t oc = transparent < 0 && fx == 0 && fy == 0 && fw >= cw && fh >= ch ? 3 : 4;
    if ((rc = vki_decoded_alloc(&im, (uint32_t)cw, (uint32_t)ch, (int)oc, VKIMG_U8, name, e)))
        goto done;
    memset(im.data, 0, cw * ch * oc);
    line = malloc((size_t)fd->Width);
    if (!line) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory", name);
        goto done;
    }
    const size_t x1 = fx + fw < cw ? fx + fw : cw; /* columns fx..x1-1 are painted */
    static const int ioff[4] = { 0, 4, 2, 1 }, istep[4] = { 8, 8, 4, 2 };
    const int npass = fd->Interlace ? 4 : 1;
    int bad_index = -1;
    for (int p = 0; p < npass; p++) {
        const size_t y0 = fd->Interlace ? (size_t)ioff[p] : 0, dy = fd->Interlace ? (size_t)istep[p] : 1;
        for (size_t y = y0; y < fh; y += dy) {
            if (DGifGetLine(g, line, fd->Width) == GIF_ERROR) {
                rc = gif_fail(e, name, "%s in the first frame", gif_reason(g, 0));
                goto done;
            }
            if (fy + y >= ch)
                continue;
            unsigned char *o = (unsigned char *)im.data + ((fy + y) * cw) * oc;
            for (size_t x = fx; x < x1; x++) {
                const int i = line[x - fx];
                if (i == transparent)
                    continue;
                if (i >= cmap->ColorCount) {
                    bad_index = i;
                    continue;
                }
                const GifColorType *c = &cmap->Colors[i];
                o[oc * x] = c->Red;
                o[oc * x + 1] = c->Green;
                o[oc * x + 2] = c->Blue;
                if (oc == 4)
                    o[oc * x + 3] = 255;
            }
        }
    }
    if (bad_index >= 0) {
        rc = gif_fail(e, name, "pixel index %d past the %d colours of the colour table", bad_index, cmap->ColorCount);
        goto done;
    }

    /* ---- the rest of the file, up to the trailer, without decoding */
    for (;;) {
        GifRecordType t;
        if (DGifGetRecordType(g, &t) == GIF_ERROR)
            break;
        if (t == TERMINATE_RECORD_TYPE) {
            rc = 1;
            break;
        }
        GifByteType *blk;
        int code;
        if (t == EXTENSION_RECORD_TYPE) {
            if (DGifGetExtension(g, &code, &blk) == GIF_ERROR || skip_extension(g, blk) == GIF_ERROR)
                break;
        } else if (t == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(g) == GIF_ERROR || DGifGetCode(g, &code, &blk) == GIF_ERROR)
                break;
            while (blk)
                if (DGifGetCodeNext(g, &blk) == GIF_ERROR)
                    goto after_frames;
        } else {
            break;
        }
    }
after_frames:
    if (rc != 1) {
        rc = gif_fail(e, name, "%s after the first frame", gif_reason(g, 0));
        goto done;
    }
    rc = 0;
    *out = im;
    im.data = NULL;

done:
    free(line);
    free(im.data);
    DGifCloseFile(g, &err);
    return rc;
}
