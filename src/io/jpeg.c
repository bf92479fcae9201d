/* JPEG decode and encode through libjpeg-turbo's TurboJPEG API (linked statically
 * where the static library is installed). stb_image stays the decoder for what
 * TurboJPEG declines (see io_priv.h and vkimg_load_memory in io.c).
 *
 * Thread-safety: every call makes and destroys its own TurboJPEG handle, and the
 * error text is read from that handle (tjGetErrorStr2), so calls on several threads
 * share nothing. (A handle costs a few microseconds and about 10 KB, nothing next to
 * a decode.)
 *
 * Decode policy:
 *  - grayscale JPEGs give 1 channel (TJPF_GRAY), everything else 3 (TJPF_RGB), as
 *    stb_image does;
 *  - CMYK/YCCK JPEGs are declined: stb_image converts them to RGB its own way, and
 *    keeping that conversion keeps their pixels as they were;
 *  - TJFLAG_STOPONWARNING: a JPEG that libjpeg only warns about (corrupt or truncated
 *    data, which it would patch up silently) is declined, so that such files get the
 *    same pixels or error from stb_image as before;
 *  - TJFLAG_LIMITSCANS: progressive JPEGs with an absurd number of scans (a known
 *    CPU-exhaustion pattern) are declined rather than ground through twice;
 *  - the accurate integer IDCT and smooth ("fancy") chroma upsampling: TurboJPEG's
 *    defaults, close to stb_image's output (not identical: each has its own IDCT).
 * Encode policy: quality as given; grayscale input (1 or 2 channels) is written as a
 * grayscale JPEG; colour with 4:2:0 chroma subsampling below quality 90 and 4:4:4
 * from quality 90 (the usual convention, e.g. ImageMagick's; stb_image_write
 * subsampled up to and including 90); the accurate integer DCT; baseline Huffman
 * tables (no optimization pass). Alpha is dropped. */
#include "io/io_priv.h"
#include "core/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <turbojpeg.h>

#define JPEG_444_QUALITY 90 /* from this quality up, colour is not subsampled */

/* TurboJPEG's message for handle h (never NULL or empty). */
static const char *tj_reason(tjhandle h)
{
    const char *r = tjGetErrorStr2(h);
    return r && *r ? r : "unknown error";
}

int vki_jpeg_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                    vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !out || len < 2 || b[0] != 0xff || b[1] != 0xd8)
        return vki_fail(e, VKI_DECLINED, "TurboJPEG: not a JPEG");
    if (len > ULONG_MAX)
        return vki_fail(e, VKI_DECLINED, "TurboJPEG: file too large");
    tjhandle h = tjInitDecompress();
    if (!h)
        return vki_fail(e, VKI_DECLINED, "TurboJPEG: %s", tj_reason(NULL));

    int rc, w = 0, ht = 0, subsamp = 0, cs = 0;
    unsigned char *data = NULL;
    if (tjDecompressHeader3(h, b, (unsigned long)len, &w, &ht, &subsamp, &cs)) {
        rc = vki_fail(e, VKI_DECLINED, "TurboJPEG: %s", tj_reason(h));
        goto done;
    }
    if (w <= 0 || ht <= 0) { /* libjpeg met the end of the data before a frame header */
        rc = vki_fail(e, VKI_DECLINED, "TurboJPEG: no frame header (%dx%d)", w, ht);
        goto done;
    }
    if (cs == TJCS_CMYK || cs == TJCS_YCCK) {
        rc = vki_fail(e, VKI_DECLINED, "TurboJPEG: CMYK JPEG (left to stb_image)");
        goto done;
    }
    if ((rc = vki_check_dims(name, (uint64_t)w, (uint64_t)ht, max_pixels, e)))
        goto done;
    const int gray = cs == TJCS_GRAY || subsamp == TJSAMP_GRAY;
    const int c = gray ? 1 : 3;
    const size_t pitch = (size_t)w * (size_t)c, bytes = pitch * (size_t)ht; /* <= 2^24 * 3 * 2^24 */
    if (pitch > INT_MAX) {
        rc = vki_fail(e, VKI_DECLINED, "TurboJPEG: rows too long (%dx%d)", w, ht);
        goto done;
    }
    data = vki_malloc_big(bytes);
    if (!data) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", name, bytes);
        goto done;
    }
    if (tjDecompress2(h, b, (unsigned long)len, data, w, (int)pitch, ht, gray ? TJPF_GRAY : TJPF_RGB,
                      TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS)) {
        rc = vki_fail(e, VKI_DECLINED, "TurboJPEG: %s", tj_reason(h));
        goto done;
    }
    out->w = w;
    out->h = ht;
    out->c = c;
    out->fmt = VKIMG_U8;
    out->data = data;
    data = NULL;
    rc = 0;

done:
    free(data);
    tjDestroy(h);
    return rc;
}

int vki_jpeg_encode(const vkimg_image *im, int quality, unsigned char **out, size_t *outlen, vkimg_err *e)
{
    if (!out || !outlen)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg: NULL output");
    *out = NULL;
    *outlen = 0;
    if (!im || !im->data || im->w <= 0 || im->h <= 0 || im->c < 1 || im->c > 4 || im->fmt != VKIMG_U8)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg: invalid image (u8, 1-4 channels)");
    if (quality < VKIMG_QUALITY_MIN || quality > VKIMG_QUALITY_MAX)
        return vki_fail(e, VKIMG_E_USAGE, "JPEG quality %d is outside %d..%d", quality, VKIMG_QUALITY_MIN,
                        VKIMG_QUALITY_MAX);
    if (im->w > 65535 || im->h > 65535)
        return vki_fail(e, VKIMG_E_RUNTIME, "JPEG is limited to 65535x65535 pixels, the image is %dx%d", im->w, im->h);

    static const int pf[5] = { 0, TJPF_GRAY, TJPF_GRAY, TJPF_RGB, TJPF_RGBX };
    const int gray = im->c <= 2;
    const int subsamp = gray ? TJSAMP_GRAY : quality < JPEG_444_QUALITY ? TJSAMP_420 : TJSAMP_444;
    const size_t np = (size_t)im->w * (size_t)im->h;
    const unsigned char *src = im->data;
    unsigned char *tmp = NULL, *buf = NULL;
    int rc = 0;
    tjhandle h = NULL;

    if (im->c == 2) { /* gray + alpha: TurboJPEG has no such format; keep the gray */
        tmp = malloc(np);
        if (!tmp)
            return vki_fail(e, VKIMG_E_RUNTIME, "jpeg: out of memory (%zu bytes)", np);
        for (size_t i = 0; i < np; i++)
            tmp[i] = src[2 * i];
        src = tmp;
    }
    const int pitch = im->w * (im->c == 2 ? 1 : im->c); /* <= 65535 * 4 */
    const unsigned long cap = tjBufSize(im->w, im->h, subsamp);
    if (cap == (unsigned long)-1) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "jpeg: image too large (%dx%d)", im->w, im->h);
        goto done;
    }
    buf = vki_malloc_big((size_t)cap);
    if (!buf) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "jpeg: out of memory (%lu bytes)", cap);
        goto done;
    }
    h = tjInitCompress();
    if (!h) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "JPEG encoding failed (TurboJPEG: %s)", tj_reason(NULL));
        goto done;
    }
    unsigned char *jb = buf;
    unsigned long jn = cap;
    if (tjCompress2(h, src, im->w, pitch, im->h, pf[im->c], &jb, &jn, subsamp, quality, TJFLAG_NOREALLOC)) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "JPEG encoding failed (TurboJPEG: %s)", tj_reason(h));
        goto done;
    }
    if (jb != buf || jn == 0 || jn > cap) { /* cannot happen with TJFLAG_NOREALLOC */
        rc = vki_fail(e, VKIMG_E_RUNTIME, "JPEG encoding failed (TurboJPEG: unexpected output buffer)");
        goto done;
    }
    *out = buf;
    *outlen = (size_t)jn;
    buf = NULL;

done:
    if (h)
        tjDestroy(h);
    free(buf);
    free(tmp);
    return rc;
}
