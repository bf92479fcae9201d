/* Image decode: the file is read whole (size-checked), its header checked
 * against the limits, then decoded (png_dec.c, jpeg.c, stb_image for the rest).
 * No Vulkan. Thread-safe: no global state is changed.
 *
 * Ownership: vkimg_image.data is always malloc()ed (stb_image's buffers included,
 * see stb_impl.c) and released with vkimg_image_free(). */
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

#include <stb_image.h>


static const char *stb_reason(void)
{
    const char *r = stbi_failure_reason();
    return r && *r ? r : "unknown error";
}


static uint32_t get32be(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* stb_image refuses PNGs over 2^30 bytes of samples in its header scan already, with
 * a bare "too large": read the PNG size ourselves so that the limit is reported. */
static int png_peek(const unsigned char *b, size_t len, const char *name, uint64_t max_pixels, vkimg_err *e)
{
    if (len < 24 || memcmp(b, "\x89PNG\r\n\x1a\n", 8) || get32be(b + 8) != 13 || memcmp(b + 12, "IHDR", 4))
        return 0;
    return vki_check_dims(name, get32be(b + 16), get32be(b + 20), max_pixels, e);
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
    const int n = (int)len;

    int rc = png_peek(b, len, name, max_pixels, e);
    if (rc)
        return rc;
    /* the fast paths; what they decline goes to stb_image, as every file did before */
    char tj_msg[sizeof e->msg + 2] = ""; /* "TurboJPEG: ...; " when TurboJPEG declined */
    vkimg_err fe; /* the fast path's error, or why it declined */
    if (len >= 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8)) {
        if ((rc = vki_png_decode(b, len, name, max_pixels, out, &fe)) != VKI_DECLINED) {
            if (rc && e)
                *e = fe;
            return rc;
        }
    } else if (len >= 2 && b[0] == 0xff && b[1] == 0xd8) { /* SOI */
        if ((rc = vki_jpeg_decode(b, len, name, max_pixels, out, &fe)) != VKI_DECLINED) {
            if (rc && e)
                *e = fe;
            return rc;
        }
        snprintf(tj_msg, sizeof tj_msg, "%s; ", fe.msg);
    }

    int w = 0, h = 0, c = 0;
    if (!stbi_info_from_memory(b, n, &w, &h, &c))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: not a supported image (%sstb_image: %s)", name, tj_msg, stb_reason());
    if (w <= 0 || h <= 0)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image has no pixels (%dx%d)", name, w, h);
    if ((rc = vki_check_dims(name, (uint64_t)w, (uint64_t)h, max_pixels, e)))
        return rc;
    if (c < 1 || c > 4)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image has %d channels (1..4 supported)", name, c);

    void *data;
    vkimg_fmt fmt;
    int lw = 0, lh = 0, lc = 0;
    if (stbi_is_hdr_from_memory(b, n)) {
        fmt = VKIMG_F32;
        data = stbi_loadf_from_memory(b, n, &lw, &lh, &lc, 0);
    } else if (stbi_is_16_bit_from_memory(b, n)) {
        fmt = VKIMG_U16;
        data = stbi_load_16_from_memory(b, n, &lw, &lh, &lc, 0);
    } else {
        fmt = VKIMG_U8;
        data = stbi_load_from_memory(b, n, &lw, &lh, &lc, 0);
    }
    if (!data)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot decode (%sstb_image: %s)", name, tj_msg, stb_reason());
    if (lw <= 0 || lh <= 0 || lc < 1 || lc > 4 || (rc = vki_check_dims(name, (uint64_t)lw, (uint64_t)lh, max_pixels, e))) {
        free(data);
        return rc ? rc : vki_fail(e, VKIMG_E_RUNTIME, "%s: decoder returned %dx%dx%d", name, lw, lh, lc);
    }
    out->w = lw;
    out->h = lh;
    out->c = lc;
    out->fmt = fmt;
    out->data = data;
    return 0;
}

/* Reads a whole file into a malloc()ed buffer. */
static int read_file(const char *path, unsigned char **buf, size_t *len, vkimg_err *e)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        int err = errno;
        close(fd);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot read: %s", path, strerror(err));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot read: %s", path, strerror(EISDIR));
    }
    if (S_ISREG(st.st_mode) && st.st_size > INT_MAX) {
        close(fd);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: file too large (%lld bytes; at most %d)", path,
                        (long long)st.st_size, INT_MAX);
    }
    /* one byte more than the size, so that EOF is seen without growing; files that
     * report no size (pipes, /proc) grow as they are read */
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536, n = 0;
    unsigned char *b = malloc(cap);
    if (!b) {
        close(fd);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", path, cap);
    }
    for (;;) {
        if (n == cap) {
            if (cap > (size_t)INT_MAX) {
                free(b);
                close(fd);
                return vki_fail(e, VKIMG_E_RUNTIME, "%s: file too large (at most %d bytes)", path, INT_MAX);
            }
            unsigned char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                close(fd);
                return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory (%zu bytes)", path, cap * 2);
            }
            b = nb;
            cap *= 2;
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
    if (n > INT_MAX) {
        free(b);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: file too large (at most %d bytes)", path, INT_MAX);
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
    int rc = read_file(path, &buf, &len, e);
    if (rc)
        return rc;
    rc = vkimg_load_memory(buf, len, path, o, out, e);
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
