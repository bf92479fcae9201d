/* WebP through libwebp (linked statically into the binary, shared into libvkimg.so):
 * decode, encode, and the ICC profile and EXIF block of the extended format.
 *
 * Decoding: lossy (VP8, with or without an ALPH chunk) and lossless (VP8L) files
 * give RGB, or RGBA where the file says it has alpha (straight, not premultiplied),
 * written by libwebp straight into the caller's memory (vkimg_load_opts.alloc). Of
 * an animation the first frame is given, on a transparent canvas (as GIF's is):
 * RGBA of the canvas's size.
 *
 * Hardening: the size (the canvas's for an animation) is read from the headers and
 * checked with vki_check_dims before libwebp allocates or decodes anything; libwebp
 * bounds-checks the bitstream (Debian 12's 1.2.4-0.2+deb12u1 carries the fix for
 * CVE-2023-4863, the lossless Huffman tables' overflow) and reports truncated data,
 * which is an error here.
 *
 * Encoding: 8-bit images, lossy at a quality of 1..100 (libwebp's defaults
 * otherwise: method 4, no sharp YUV) or lossless (libwebp's default effort, and the
 * colour under alpha 0 kept: the file reads back as the same pixels). WebP holds RGB
 * or RGBA only: gray is written as RGB, gray + alpha as RGBA. At most 16383 pixels a
 * side (the format's limit).
 *
 * Metadata: libwebpmux writes the ICC profile, the EXIF block and the XMP into an encoded
 * file (VP8X, its flags and canvas size, made by the library); meta.c reads them. */
#include "io/io_priv.h"
#include "io/meta.h"
#include "core/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <webp/mux.h>

#define webp_fail(e, name, ...) vki_dec_fail(e, name, "WebP", __VA_ARGS__)

static const char *status_name(VP8StatusCode s)
{
    switch (s) {
    case VP8_STATUS_OK: return "ok";
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "corrupt data (bitstream error)";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "truncated data";
    }
    return "unknown error";
}

/* The first frame of an animation, composed on a transparent w x h canvas. */
static int decode_anim(const unsigned char *b, size_t len, const char *name, const vkimg_load_opts *o, int w, int h,
                       vkimg_image *out, vkimg_err *e)
{
    WebPAnimDecoderOptions ao;
    if (!WebPAnimDecoderOptionsInit(&ao))
        return webp_fail(e, name, "libwebp's animation decoder is not the version built against");
    ao.color_mode = MODE_RGBA;
    ao.use_threads = 0;
    const WebPData data = { b, len };
    WebPAnimDecoder *dec = WebPAnimDecoderNew(&data, &ao);
    if (!dec)
        return webp_fail(e, name, "corrupt or truncated animation");
    WebPAnimInfo info;
    uint8_t *canvas = NULL;
    int ts = 0, rc;
    if (!WebPAnimDecoderGetInfo(dec, &info) || info.canvas_width != (uint32_t)w || info.canvas_height != (uint32_t)h) {
        rc = webp_fail(e, name, "the animation's canvas is not the size its header says");
    } else if (!WebPAnimDecoderGetNext(dec, &canvas, &ts) || !canvas) {
        rc = webp_fail(e, name, "the animation's first frame does not decode (corrupt or truncated data)");
    } else if (!(rc = vki_decoded_alloc_opts(o, out, (uint32_t)w, (uint32_t)h, 4, VKIMG_U8, name, e))) {
        memcpy(out->data, canvas, (size_t)w * (size_t)h * 4);
    }
    WebPAnimDecoderDelete(dec);
    return rc;
}

/* A still image's chunks, walked before anything is allocated: 0 with *alpha set
 * where its bitstream chunk (VP8 or VP8L) lies whole inside the data, -1 where the
 * data ends first or holds none (truncated: libwebp would say so only after the
 * caller's memory is taken). *alpha is decided as libwebpmux decides its VP8X flag
 * when it writes a file (vki_webp_add_meta): an ALPH chunk before a lossy
 * bitstream, or a lossless bitstream's alpha_is_used bit. The VP8X flag itself is
 * not taken: a file flagged but without an ALPH chunk is opaque, and would come back
 * RGB once its metadata is rewritten. */
static int still_chunks(const unsigned char *b, size_t len, bool *alpha)
{
    if ((uint64_t)vki_rd32le(b + 4) + 8 > len) /* the RIFF runs past the data */
        return -1;
    bool alph = false;
    for (size_t pos = 12; len - pos >= 8;) {
        const unsigned char *t = b + pos;
        const size_t n = vki_rd32le(b + pos + 4);
        if (n > len - pos - 8)
            return -1;
        if (!memcmp(t, "VP8 ", 4)) {
            *alpha = alph;
            return 0;
        }
        if (!memcmp(t, "VP8L", 4)) {
            *alpha = n >= 5 && (vki_rd32le(b + pos + 9) >> 28 & 1);
            return 0;
        }
        if (!memcmp(t, "ALPH", 4))
            alph = true;
        pos += 8 + n + (n & 1); /* chunks are padded to an even size */
        if (pos > len)
            return -1;
    }
    return -1;
}

int vki_webp_decode_opts(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels,
                         const vkimg_load_opts *o, vkimg_image *out, vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (!out)
        return webp_fail(e, name, "NULL output");
    memset(out, 0, sizeof *out);
    if (!b || len < 12 || memcmp(b, "RIFF", 4) || memcmp(b + 8, "WEBP", 4))
        return webp_fail(e, name, "not a WebP file (no RIFF/WEBP header)");
    WebPBitstreamFeatures f;
    VP8StatusCode st = WebPGetFeatures(b, len, &f);
    if (st != VP8_STATUS_OK)
        return webp_fail(e, name, "%s in the headers", status_name(st));
    int rc = vki_check_dims(name, (uint64_t)(f.width > 0 ? f.width : 0), (uint64_t)(f.height > 0 ? f.height : 0),
                            max_pixels, e);
    if (rc)
        return rc;
    if (f.has_animation)
        return decode_anim(b, len, name, o, f.width, f.height, out, e);
    bool alpha;
    if (still_chunks(b, len, &alpha))
        return webp_fail(e, name, "truncated data (the image's chunk is not whole)");
    const int c = alpha ? 4 : 3;
    /* shrink-on-load: libwebp's rescaler (an area average) to 1/2, 1/4 or 1/8, as vips's
     * webpload shrink */
    int orientation = 1;
    if (o && o->min_size) {
        vki_meta m;
        vkimg_err me;
        if (!vki_meta_read_webp(b, len, &m, &me)) { /* metadata it cannot read: as stored */
            orientation = m.orientation;
            vki_meta_free(&m);
        }
    }
    const int d = vki_shrink_denom(o, f.width, f.height, orientation);
    const int w = (f.width + d - 1) / d, h = (f.height + d - 1) / d;
    vkimg_image im;
    if ((rc = vki_decoded_alloc_opts(o, &im, (uint32_t)w, (uint32_t)h, c, VKIMG_U8, name, e)))
        return rc;
    WebPDecoderConfig cfg;
    if (!WebPInitDecoderConfig(&cfg)) {
        vkimg_image_free(&im);
        return webp_fail(e, name, "libwebp is not the version built against");
    }
    cfg.options.use_threads = 1;
    if (d > 1) {
        cfg.options.use_scaling = 1;
        cfg.options.scaled_width = w;
        cfg.options.scaled_height = h;
    }
    cfg.output.colorspace = c == 4 ? MODE_RGBA : MODE_RGB;
    cfg.output.is_external_memory = 1;
    cfg.output.u.RGBA.rgba = im.data;
    cfg.output.u.RGBA.stride = w * c; /* <= 2^24 * 4: vki_check_dims bounds a side */
    cfg.output.u.RGBA.size = (size_t)w * (size_t)h * (size_t)c;
    st = WebPDecode(b, len, &cfg);
    WebPFreeDecBuffer(&cfg.output); /* the caller's memory stays; this frees libwebp's state only */
    if (st != VP8_STATUS_OK) {
        vkimg_image_free(&im);
        return webp_fail(e, name, "%s", status_name(st));
    }
    *out = im;
    return 0;
}

int vki_webp_decode(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                    vkimg_err *e)
{
    return vki_webp_decode_opts(b, len, name, max_pixels, NULL, out, e);
}

static const char *enc_error(WebPEncodingError err)
{
    switch (err) {
    case VP8_ENC_ERROR_OUT_OF_MEMORY:
    case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY: return "out of memory";
    case VP8_ENC_ERROR_BAD_DIMENSION: return "bad dimensions";
    case VP8_ENC_ERROR_PARTITION0_OVERFLOW: return "partition 0 overflow (over 512 KiB of headers)";
    case VP8_ENC_ERROR_PARTITION_OVERFLOW: return "partition overflow (over 16 MiB)";
    case VP8_ENC_ERROR_FILE_TOO_BIG: return "file too big (over 4 GiB)";
    default: return "libwebp could not encode it";
    }
}

unsigned char *vki_gray_widen(const vkimg_image *im)
{
    const int c = vki_webp_channels(im->c);
    const size_t np = (size_t)im->w * (size_t)im->h;
    const unsigned char *src = im->data;
    unsigned char *wide = vki_malloc_big(np * (size_t)c);
    for (size_t i = 0; wide && i < np; i++) {
        unsigned char *d = wide + i * (size_t)c;
        d[0] = d[1] = d[2] = src[i * (size_t)im->c];
        if (c == 4)
            d[3] = src[i * 2 + 1];
    }
    return wide;
}

int vki_webp_encode(const vkimg_image *im, int quality, bool lossless, int threads, unsigned char **out,
                    size_t *outlen, vkimg_err *e)
{
    if (!out || !outlen)
        return vki_fail(e, VKIMG_E_RUNTIME, "webp: NULL output");
    *out = NULL;
    *outlen = 0;
    if (!im || !im->data || im->w <= 0 || im->h <= 0 || im->c < 1 || im->c > 4 || im->fmt != VKIMG_U8)
        return vki_fail(e, VKIMG_E_RUNTIME, "webp: invalid image (u8, 1-4 channels)");
    if (quality < VKIMG_QUALITY_MIN || quality > VKIMG_QUALITY_MAX)
        return vki_fail(e, VKIMG_E_USAGE, "WebP quality %d is outside %d..%d", quality, VKIMG_QUALITY_MIN,
                        VKIMG_QUALITY_MAX);
    if (im->w > WEBP_MAX_DIMENSION || im->h > WEBP_MAX_DIMENSION)
        return vki_fail(e, VKIMG_E_RUNTIME, "WebP is limited to %dx%d pixels, the image is %dx%d", WEBP_MAX_DIMENSION,
                        WEBP_MAX_DIMENSION, im->w, im->h);
    WebPConfig cfg;
    if (!WebPConfigInit(&cfg) || (lossless && !WebPConfigLosslessPreset(&cfg, 6)))
        return vki_fail(e, VKIMG_E_RUNTIME, "webp: libwebp is not the version built against");
    if (lossless) {
        cfg.exact = 1; /* keep the colour where alpha is 0: the same pixels back */
    } else {
        cfg.quality = (float)quality;
    }
    cfg.thread_level = threads > 1;
    if (!WebPValidateConfig(&cfg))
        return vki_fail(e, VKIMG_E_RUNTIME, "webp: invalid encoder settings");

    /* gray as RGB, gray + alpha as RGBA (WebP holds no gray) */
    const int c = vki_webp_channels(im->c);
    const size_t np = (size_t)im->w * (size_t)im->h;
    const unsigned char *src = im->data;
    unsigned char *wide = NULL;
    if (im->c <= 2) {
        if (!(wide = vki_gray_widen(im)))
            return vki_fail(e, VKIMG_E_RUNTIME, "webp: out of memory (%zu bytes)", np * (size_t)c);
        src = wide;
    }
    WebPPicture pic;
    WebPMemoryWriter wr;
    WebPMemoryWriterInit(&wr);
    int rc = 0;
    if (!WebPPictureInit(&pic)) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "webp: libwebp is not the version built against");
        goto done;
    }
    pic.width = im->w;
    pic.height = im->h;
    pic.use_argb = lossless;
    const int stride = im->w * c; /* <= 16383 * 4 */
    if (!(c == 4 ? WebPPictureImportRGBA(&pic, src, stride) : WebPPictureImportRGB(&pic, src, stride))) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "webp: out of memory (importing %dx%d pixels)", im->w, im->h);
        goto done;
    }
    pic.writer = WebPMemoryWrite;
    pic.custom_ptr = &wr;
    if (!WebPEncode(&cfg, &pic)) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "WebP encoding failed (%s)", enc_error(pic.error_code));
        goto done;
    }
    /* the caller frees with free(): a copy of libwebp's buffer */
    if (!wr.size || !(*out = malloc(wr.size))) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "webp: out of memory (%zu bytes)", wr.size);
        goto done;
    }
    memcpy(*out, wr.mem, wr.size);
    *outlen = wr.size;

done:
    WebPPictureFree(&pic);
    WebPMemoryWriterClear(&wr);
    free(wide);
    return rc;
}

/* ---------------------------------------------------------------- metadata */

int vki_webp_add_meta(const unsigned char *webp, size_t len, const vki_meta *m, unsigned char **out,
                      size_t *outlen, unsigned *dropped, vkimg_err *e)
{
    *out = NULL;
    *outlen = 0;
    if (dropped)
        *dropped = 0;
    if (m && m->exif_len && vki_exif_byte_order(m->exif, m->exif_len) < 0)
        return vki_fail(e, VKIMG_E_USAGE, "WebP metadata: the EXIF block does not begin with a TIFF header");
    const WebPData in = { webp, len };
    WebPMux *mux = WebPMuxCreate(&in, 0);
    if (!mux)
        return vki_fail(e, VKIMG_E_RUNTIME, "WebP metadata: the encoded file does not parse");
    /* libwebpmux 1.2.4 takes an animation with an image outside the ANMF chunks, then
     * WebPMuxAssemble reads that image's missing frame header (a NULL dereference; fixed
     * upstream in 2026, c95ed445): refused here, as WebPDemux refuses it when decoding */
    int n_img = 0, n_anmf = 0;
    if (WebPMuxNumChunks(mux, WEBP_CHUNK_IMAGE, &n_img) != WEBP_MUX_OK ||
        WebPMuxNumChunks(mux, WEBP_CHUNK_ANMF, &n_anmf) != WEBP_MUX_OK || (n_img > 1 && n_anmf != n_img)) {
        WebPMuxDelete(mux);
        return vki_fail(e, VKIMG_E_RUNTIME, "WebP metadata: the encoded file has %d images, %d of them in ANMF frames",
                        n_img, n_anmf);
    }
    WebPMuxError err = WEBP_MUX_OK;
    if (m && m->icc_len) {
        const WebPData d = { m->icc, m->icc_len };
        err = WebPMuxSetChunk(mux, "ICCP", &d, 0);
    }
    if (err == WEBP_MUX_OK && m && m->exif_len) {
        const WebPData d = { m->exif, m->exif_len };
        err = WebPMuxSetChunk(mux, "EXIF", &d, 0);
    }
    if (err == WEBP_MUX_OK && m && m->xmp_len) {
        const WebPData d = { m->xmp, m->xmp_len };
        err = WebPMuxSetChunk(mux, "XMP ", &d, 0);
    }
    WebPData a = { NULL, 0 };
    if (err == WEBP_MUX_OK)
        err = WebPMuxAssemble(mux, &a);
    WebPMuxDelete(mux);
    if (err != WEBP_MUX_OK || !a.size) {
        WebPDataClear(&a);
        return vki_fail(e, VKIMG_E_RUNTIME, "WebP metadata: libwebpmux could not add it (error %d)", (int)err);
    }
    int rc = 0;
    if ((*out = malloc(a.size))) {
        memcpy(*out, a.bytes, a.size);
        *outlen = a.size;
    } else {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "WebP metadata: out of memory (%zu bytes)", a.size);
    }
    WebPDataClear(&a);
    return rc;
}
