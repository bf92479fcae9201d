/* Image decode: the file is read whole (only a regular file, size-checked before it
 * is read), its format found from its first bytes, and the one decoder of that
 * format decodes it:
 *
 *   PNG   png_dec.c  (libdeflate + our unfiltering)
 *   JPEG  jpeg.c     (TurboJPEG)
 *   GIF   gif.c      (giflib)
 *   WebP  webp.c     (libwebp)
 *   TIFF  tiff.c     (ours; libdeflate for Deflate)
 *   BMP   bmp.c      TGA  tga.c      PNM  pnm.c      HDR  hdr.c      PSD  psd.c
 *
 * There is no second decoder to fall back to: a file its decoder refuses is an
 * error. Softimage PIC files are recognized and refused. No Vulkan. Thread-safe:
 * no global state is changed.
 *
 * Ownership: vkimg_image.data is always malloc()ed and released with
 * vkimg_image_free(). */
#include "io/io_priv.h"
#include "io/meta.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#define FORMAT_LIST "PNG, JPEG, WebP, TIFF, GIF, BMP, TGA, PSD, HDR, PNM"

typedef int (*decode_fn)(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_image *out,
                         vkimg_err *e);

/* The decoder for the file's first bytes; NULL with *what set for a file that is
 * not one of ours (*what: NULL) or one we know and refuse. */
static decode_fn detect(const unsigned char *b, size_t n, const char **what)
{
    *what = NULL;
    if (n >= 4 && !memcmp(b, "\x89PNG", 4))
        return vki_png_decode;
    if (n >= 2 && b[0] == 0xff && b[1] == 0xd8) /* SOI */
        return vki_jpeg_decode;
    if (n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4))
        return vki_webp_decode;
    if (vki_tiff_signature(b, n))
        return vki_tiff_decode;
    if (n >= 4 && !memcmp(b, "GIF8", 4))
        return vki_gif_decode;
    if (n >= 2 && b[0] == 'B' && b[1] == 'M')
        return vki_bmp_decode;
    if (n >= 4 && !memcmp(b, "8BPS", 4))
        return vki_psd_decode;
    if (n >= 2 && b[0] == '#' && b[1] == '?') /* "#?RADIANCE", "#?RGBE" */
        return vki_hdr_decode;
    if (n >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7')
        return vki_pnm_decode;
    if (n >= 4 && !memcmp(b, "\x53\x80\xf6\x34", 4)) {
        *what = "PIC (Softimage) files are not supported";
        return NULL;
    }
    /* TGA has no signature; none of the signatures above can begin a TGA header
     * that vki_tga_test accepts (its second byte is 0 or 1) */
    if (vki_tga_test(b, n))
        return vki_tga_decode;
    return NULL;
}

int vkimg_load_memory(const void *buf, size_t len, const char *name, const vkimg_load_opts *o, vkimg_image *out,
                      vkimg_err *e)
{
    if (!name)
        name = "<memory>";
    if (!out)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: vkimg_load_memory: NULL output", name);
    memset(out, 0, sizeof *out);
    if (!buf || !len)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: empty file", name);
    if (len > INT_MAX)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: file too large (%zu bytes; at most %d)", name, len, INT_MAX);
    const uint64_t max_pixels = o && o->max_pixels ? o->max_pixels : VKIMG_DEFAULT_MAX_PIXELS;
    const unsigned char *b = buf;

    const char *what;
    decode_fn dec = detect(b, len, &what);
    if (!dec)
        return what ? vki_fail(e, VKIMG_E_RUNTIME, "%s: %s", name, what)
                    : vki_fail(e, VKIMG_E_RUNTIME, "%s: not a supported image (" FORMAT_LIST ")", name);
    /* PNG and JPEG take the options (shrink-on-load, the caller's memory, alpha left
     * out), WebP and TIFF the caller's memory */
    const bool opts = o && (o->min_size || o->alloc || o->input_done || o->jpeg_coded || o->drop_opaque_alpha);
    bool released = false; /* o->input_done called (PNG: before the rows are unfiltered) */
    int rc = opts && dec == vki_jpeg_decode  ? vki_jpeg_decode_opts(b, len, name, max_pixels, o, out, e)
           : opts && dec == vki_png_decode ? vki_png_decode_opts(b, len, name, max_pixels, o, out, &released, e)
           : opts && dec == vki_webp_decode ? vki_webp_decode_opts(b, len, name, max_pixels, o, out, e)
           : opts && dec == vki_tiff_decode ? vki_tiff_decode_opts(b, len, name, max_pixels, o, out, e)
                                             : dec(b, len, name, max_pixels, out, e);
    if (o && o->input_done && !released) /* b is read no more (nor below) */
        o->input_done(o->user);
    if (rc) {
        vkimg_image_free(out); /* decoders leave nothing behind; this only makes sure */
        return rc;
    }
    if (!out->data || out->w <= 0 || out->h <= 0 || out->c < 1 || out->c > 4) { /* cannot happen */
        vkimg_image_free(out);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: decoder returned an invalid image", name);
    }
    if (o && o->alloc && !out->priv && dec != vki_jpeg_decode && dec != vki_png_decode && dec != vki_webp_decode &&
        dec != vki_tiff_decode) {
        /* the other decoders write in their own order (planes, bottom-up rows,
         * scattered frames): decoded, then copied into the caller's memory */
        vkimg_image dst;
        if ((rc = vki_decoded_alloc_opts(o, &dst, (uint32_t)out->w, (uint32_t)out->h, out->c, out->fmt, name, e))) {
            vkimg_image_free(out);
            return rc;
        }
        memcpy(dst.data, out->data, vkimg_image_bytes(out));
        vkimg_image_free(out);
        *out = dst;
    }
    return 0;
}

/* The largest file worth reading for an image of at most max_pixels: 64 bytes a
 * pixel (an uncompressed 16-bit RGBA PNG is 8, an ASCII PNM with 16-bit samples
 * about 18, a PSD also holds its layers besides the composite) plus 64 MiB of
 * metadata, never more than INT_MAX. With the default limit this is INT_MAX. */
static uint64_t max_file_bytes(uint64_t max_pixels)
{
    if (!max_pixels)
        max_pixels = VKIMG_DEFAULT_MAX_PIXELS;
    const uint64_t slack = 64ull << 20;
    if (max_pixels > ((uint64_t)INT_MAX - slack) / 64)
        return INT_MAX;
    return max_pixels * 64 + slack;
}

static const char *file_type(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : S_ISLNK(m) ? "a symbolic link"
         : "not a plain file";
}

static int too_large(const char *path, uint64_t size, uint64_t limit, uint64_t max_pixels, vkimg_err *e)
{
    if (limit >= INT_MAX)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: file too large (%llu bytes; at most %d)", path,
                        (unsigned long long)size, INT_MAX);
    return vki_fail(e, VKIMG_E_RUNTIME, "%s: file too large (%llu bytes; at most %llu for --max-pixels %llu)", path,
                    (unsigned long long)size, (unsigned long long)limit, (unsigned long long)max_pixels);
}

/* Reads a whole regular file into a malloc()ed buffer. Anything else (FIFO,
 * device, socket, directory) is refused without reading or blocking: the file is
 * opened non-blocking and checked with fstat before any read. A file over
 * max_file_bytes is refused from its size, before it is read; one that grows while
 * it is read (or reports no size, as /proc files do) is read up to that limit. */
static int read_file(const char *path, uint64_t max_pixels, unsigned char **buf, size_t *len, vkimg_err *e)
{
    *buf = NULL;
    *len = 0;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) /* a socket: open() says ENXIO */
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: not a regular file (%s)", path, file_type(st.st_mode));
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot open: %s", path, strerror(err));
    }
    if (fstat(fd, &st)) {
        int err = errno;
        close(fd);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot read: %s", path, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: not a regular file (%s)", path, file_type(st.st_mode));
    }
    const uint64_t limit = max_file_bytes(max_pixels);
    if (st.st_size > 0 && (uint64_t)st.st_size > limit) {
        close(fd);
        return too_large(path, (uint64_t)st.st_size, limit, max_pixels, e);
    }
    /* one byte more than the size, so that EOF is seen without growing */
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 65536, n = 0;
    unsigned char *b = malloc(cap);
    if (!b) {
        close(fd);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", path, cap);
    }
    for (;;) {
        if (n == cap) {
            if (n > limit) {
                free(b);
                close(fd);
                return too_large(path, n, limit, max_pixels, e);
            }
            size_t ncap = cap * 2 > limit + 1 ? (size_t)limit + 1 : cap * 2;
            unsigned char *nb = realloc(b, ncap);
            if (!nb) {
                free(b);
                close(fd);
                return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", path, ncap);
            }
            b = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            free(b);
            close(fd);
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot read: %s", path, strerror(err));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n == 0) {
        free(b);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: empty file", path);
    }
    if (n > limit) {
        free(b);
        return too_large(path, n, limit, max_pixels, e);
    }
    *buf = b;
    *len = n;
    return 0;
}

int vkimg_load_meta(const char *path, const vkimg_load_opts *o, vkimg_image *out, vkimg_meta *meta, vkimg_err *e)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (meta) { /* overwritten, not freed: the caller's may be uninitialized */
        memset(meta, 0, sizeof *meta);
        meta->orientation = 1;
    }
    if (!path || !out)
        return vki_fail(e, VKIMG_E_RUNTIME, "vkimg_load: NULL argument");
    unsigned char *buf;
    size_t len;
    int rc = read_file(path, o ? o->max_pixels : 0, &buf, &len, e);
    if (rc)
        return rc;
    vkimg_load_opts lo = o ? *o : (vkimg_load_opts){ 0 };
    lo.input_done = NULL; /* for the caller's buffer, and buf is this function's */
    rc = vkimg_load_memory(buf, len, path, &lo, out, e);
    if (!rc && meta) { /* best effort: metadata the image decoded without is left out */
        vkimg_err me;
        if (vki_meta_read(buf, len, meta, &me))
            vki_meta_free(meta);
    }
    free(buf);
    return rc;
}

int vkimg_load(const char *path, const vkimg_load_opts *o, vkimg_image *out, vkimg_err *e)
{
    return vkimg_load_meta(path, o, out, NULL, e);
}
