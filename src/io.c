/* Image decode (png.c's fast path, TurboJPEG in jpeg.c, stb_image for the rest and as
 * the fallback), encode (png.c, jpeg.c, stb_image_write, npy.c), header checks and
 * atomic writes. No Vulkan. Thread-safe: no global state is changed.
 *
 * Ownership: vkimg_image.data is always malloc()ed (stb_image's buffers included, see
 * stb_impl.c) and released with vkimg_image_free(). */
#include "io_priv.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <stb_image.h>
#include <stb_image_write.h>

#define EXT_HINT "(use .png .jpg .bmp .tga .hdr .npy)"
#define MAX_SIDE (1 << 24)

static const char *stb_reason(void)
{
    const char *r = stbi_failure_reason();
    return r && *r ? r : "unknown error";
}

/* ---------------------------------------------------------------- kinds */

/* The extension (without the dot) of path's last component, or NULL. */
static const char *path_ext(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot ? dot + 1 : NULL;
}

vkimg_file_kind vkimg_file_kind_of(const char *path)
{
    if (!path)
        return VKIMG_FILE_UNKNOWN;
    const char *x = path_ext(path);
    if (!x)
        return VKIMG_FILE_UNKNOWN;
    static const struct {
        const char *ext;
        vkimg_file_kind k;
    } kinds[] = {
        { "png", VKIMG_FILE_PNG }, { "jpg", VKIMG_FILE_JPEG }, { "jpeg", VKIMG_FILE_JPEG }, { "bmp", VKIMG_FILE_BMP },
        { "tga", VKIMG_FILE_TGA }, { "hdr", VKIMG_FILE_HDR },  { "npy", VKIMG_FILE_NPY },
    };
    for (size_t i = 0; i < VKI_ARRAY_LEN(kinds); i++)
        if (strlen(x) == strlen(kinds[i].ext) && !vki_strncasecmp(x, kinds[i].ext, strlen(x)))
            return kinds[i].k;
    return VKIMG_FILE_UNKNOWN;
}

vkimg_fmt vkimg_file_fmt(vkimg_file_kind k, vkimg_fmt data_fmt)
{
    switch (k) {
    case VKIMG_FILE_PNG: return data_fmt == VKIMG_U16 ? VKIMG_U16 : VKIMG_U8;
    case VKIMG_FILE_JPEG:
    case VKIMG_FILE_BMP:
    case VKIMG_FILE_TGA: return VKIMG_U8;
    case VKIMG_FILE_HDR: return VKIMG_F32;
    case VKIMG_FILE_NPY:
    case VKIMG_FILE_UNKNOWN: break;
    }
    return data_fmt;
}

static const char *kind_name(vkimg_file_kind k)
{
    switch (k) {
    case VKIMG_FILE_PNG: return "PNG";
    case VKIMG_FILE_JPEG: return "JPEG";
    case VKIMG_FILE_BMP: return "BMP";
    case VKIMG_FILE_TGA: return "TGA";
    case VKIMG_FILE_HDR: return "HDR";
    case VKIMG_FILE_NPY: return "NPY";
    case VKIMG_FILE_UNKNOWN: break;
    }
    return "unknown";
}

/* The output kind of path, or a usage error. */
static int output_kind(const char *path, vkimg_file_kind *k, vkimg_err *e)
{
    *k = vkimg_file_kind_of(path);
    if (*k != VKIMG_FILE_UNKNOWN)
        return 0;
    const char *x = path_ext(path);
    if (!x)
        return vki_fail(e, VKIMG_E_USAGE, "%s: unknown output format (no extension) " EXT_HINT, path);
    return vki_fail(e, VKIMG_E_USAGE, "%s: unknown output format '.%s' " EXT_HINT, path, x);
}

/* ---------------------------------------------------------------- loading */

int vki_check_dims(const char *name, uint64_t w, uint64_t h, uint64_t max_pixels, vkimg_err *e)
{
    if (!max_pixels)
        max_pixels = VKIMG_DEFAULT_MAX_PIXELS;
    if (w == 0 || h == 0)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image has no pixels (%llux%llu)", name, (unsigned long long)w,
                        (unsigned long long)h);
    if (w > MAX_SIDE || h > MAX_SIDE)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image is %llux%llu, a side over the limit of %d", name,
                        (unsigned long long)w, (unsigned long long)h, MAX_SIDE);
    if (w * h > max_pixels) /* both <= 2^24: no overflow */
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image is %llux%llu = %llu pixels, over the limit of %llu (--max-pixels)",
                        name, (unsigned long long)w, (unsigned long long)h, (unsigned long long)(w * h),
                        (unsigned long long)max_pixels);
    return 0;
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

int vkimg_load(const char *path, const vkimg_load_opts *o, vkimg_image *out, vkimg_err *e)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!path || !out)
        return vki_fail(e, VKIMG_E_RUNTIME, "vkimg_load: NULL argument");
    unsigned char *buf;
    size_t len;
    int rc = read_file(path, &buf, &len, e);
    if (rc)
        return rc;
    rc = vkimg_load_memory(buf, len, path, o, out, e);
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------- atomic writes */

static mode_t g_umask;
static pthread_once_t g_umask_once = PTHREAD_ONCE_INIT;

/* The process umask, read without changing it (/proc/self/status) where possible:
 * umask(2) can only be read by setting it, which would race with other threads
 * creating files. Read once. */
static void read_umask(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            unsigned m;
            if (sscanf(line, "Umask: %o", &m) == 1) {
                g_umask = (mode_t)(m & 0777);
                fclose(f);
                return;
            }
        }
        fclose(f);
    }
    mode_t m = umask(022);
    umask(m);
    g_umask = m & 0777;
}

static int write_all(int fd, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n) {
        size_t chunk = n < ((size_t)1 << 30) ? n : (size_t)1 << 30;
        ssize_t r = write(fd, p, chunk);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0) {
            errno = EIO;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int vki_write_atomic_v(const char *path, const vki_span *parts, int nparts, vkimg_err *e)
{
    if (!path || !*path)
        return vki_fail(e, VKIMG_E_RUNTIME, "(empty path): cannot write: %s", strerror(ENOENT));
    if (nparts < 0 || (nparts > 0 && !parts))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(EINVAL));
    size_t plen = strlen(path);
    struct stat st;
    if (path[plen - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(EISDIR));

    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0; /* with the slash */
    const char *base = slash ? slash + 1 : path;
    size_t baselen = strlen(base);
    if (baselen > 200) /* keep the temporary name under NAME_MAX */
        baselen = 200;
    static const char suffix[] = ".vkimg-XXXXXX";
    char *tmp = malloc(dirlen + 1 + baselen + sizeof suffix);
    if (!tmp)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(ENOMEM));
    memcpy(tmp, path, dirlen);
    tmp[dirlen] = '.';
    memcpy(tmp + dirlen + 1, base, baselen);
    memcpy(tmp + dirlen + 1 + baselen, suffix, sizeof suffix);

    int fd = mkstemp(tmp); /* 0600, O_EXCL */
    if (fd < 0) {
        int err = errno;
        free(tmp);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(err));
    }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    pthread_once(&g_umask_once, read_umask);
    int err = 0;
    if (fchmod(fd, 0666 & ~g_umask))
        err = errno;
    for (int i = 0; !err && i < nparts; i++)
        if (parts[i].n && write_all(fd, parts[i].p, parts[i].n))
            err = errno;
    if (close(fd) && !err)
        err = errno;
    if (!err && rename(tmp, path))
        err = errno;
    if (err) {
        unlink(tmp);
        free(tmp);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(err ? err : EIO));
    }
    free(tmp);
    return 0;
}

int vki_write_atomic(const char *path, const void *data, size_t n, vkimg_err *e)
{
    vki_span s = { data, n };
    return vki_write_atomic_v(path, &s, 1, e);
}

int vkimg_check_output(const char *path, vkimg_err *e)
{
    if (!path || !*path)
        return vki_fail(e, VKIMG_E_USAGE, "empty output path");
    vkimg_file_kind k;
    int rc = output_kind(path, &k, e);
    if (rc)
        return rc;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: is a directory", path);

    const char *slash = strrchr(path, '/');
    char *dir;
    if (!slash) {
        dir = strdup(".");
    } else {
        size_t dl = slash == path ? 1 : (size_t)(slash - path);
        dir = malloc(dl + 1);
        if (dir) {
            memcpy(dir, path, dl);
            dir[dl] = 0;
        }
    }
    if (!dir)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory", path);
    if (stat(dir, &st)) {
        int err = errno;
        rc = err == ENOENT ? vki_fail(e, VKIMG_E_RUNTIME, "%s: directory '%s' does not exist", path, dir)
                           : vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot use directory '%s': %s", path, dir, strerror(err));
    } else if (!S_ISDIR(st.st_mode)) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: '%s' is not a directory", path, dir);
    } else if (access(dir, W_OK | X_OK)) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: directory '%s' is not writable: %s", path, dir, strerror(errno));
    }
    free(dir);
    return rc;
}

/* ---------------------------------------------------------------- saving */

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

int vkimg_save(const char *path, const vkimg_image *im, const vkimg_save_opts *o, vkimg_err *e)
{
    if (!path || !*path)
        return vki_fail(e, VKIMG_E_USAGE, "empty output path");
    vkimg_file_kind k;
    int rc = output_kind(path, &k, e);
    if (rc)
        return rc;
    size_t bytes = vkimg_image_bytes(im);
    if (!im || !im->data || !bytes)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: invalid image (%dx%dx%d %s)", path, im ? im->w : 0, im ? im->h : 0,
                        im ? im->c : 0, im ? vkimg_fmt_name(im->fmt) : "-");
    vkimg_fmt want = vkimg_file_fmt(k, im->fmt);
    if (im->fmt != want)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: %s takes %s samples, the image has %s", path, kind_name(k),
                        k == VKIMG_FILE_PNG ? "u8 or u16" : vkimg_fmt_name(want), vkimg_fmt_name(im->fmt));
    /* each option is checked where it applies */
    int quality = o ? o->quality : 0, level = o ? o->png_level : -1;
    if (quality == 0)
        quality = 90;
    if (k == VKIMG_FILE_JPEG && (quality < 1 || quality > 100))
        return vki_fail(e, VKIMG_E_USAGE, "%s: JPEG quality %d is outside 1..100", path, quality);
    if (level == -1)
        level = 6;
    if (k == VKIMG_FILE_PNG && (level < 0 || level > 12))
        return vki_fail(e, VKIMG_E_USAGE, "%s: PNG level %d is outside 0..12", path, level);

    if (k == VKIMG_FILE_PNG) {
        unsigned char *png;
        size_t n;
        vkimg_err pe;
        if ((rc = vki_png_encode(im, level, &png, &n, &pe)))
            return vki_fail(e, rc, "%s: %s", path, pe.msg);
        rc = vki_write_atomic(path, png, n, e);
        free(png);
        return rc;
    }
    if (k == VKIMG_FILE_NPY) {
        size_t shape[3] = { (size_t)im->h, (size_t)im->w, (size_t)im->c };
        return vki_npy_save(path, vki_npy_descr(im->fmt), im->c == 1 ? 2 : 3, shape, im->data, bytes, e);
    }

    /* JPEG and TGA headers hold 16-bit sizes */
    const int64_t w = im->w, h = im->h;
    if ((k == VKIMG_FILE_JPEG || k == VKIMG_FILE_TGA) && (w > 65535 || h > 65535))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: %s is limited to 65535x65535 pixels, the image is %dx%d", path,
                        kind_name(k), im->w, im->h);
    if (k == VKIMG_FILE_JPEG) { /* TurboJPEG (jpeg.c): gray stays gray, alpha is dropped */
        unsigned char *jpg;
        size_t n;
        vkimg_err je;
        if ((rc = vki_jpeg_encode(im, quality, &jpg, &n, &je)))
            return vki_fail(e, rc, "%s: %s", path, je.msg);
        rc = vki_write_atomic(path, jpg, n, e);
        free(jpg);
        return rc;
    }
    /* stb_image_write computes offsets and sizes in int */
    if ((w * 4 + 4) * h > INT_MAX - 4096) /* bytes of BMP/TGA, samples of HDR */
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: image too large for the %s writer (%dx%d)", path, kind_name(k),
                        im->w, im->h);
    membuf m = { NULL, 0, 0, 0 };
    int ok = 0;
    switch (k) {
    case VKIMG_FILE_BMP: /* 24-bit (gray expanded, gray+alpha loses alpha) or 32-bit RGBA */
        ok = stbi_write_bmp_to_func(membuf_write, &m, im->w, im->h, im->c, im->data);
        break;
    case VKIMG_FILE_TGA: /* keeps 1-4 channels, RLE */
        ok = stbi_write_tga_to_func(membuf_write, &m, im->w, im->h, im->c, im->data);
        break;
    case VKIMG_FILE_HDR: /* RGBE: gray expanded, alpha dropped */
        ok = stbi_write_hdr_to_func(membuf_write, &m, im->w, im->h, im->c, im->data);
        break;
    default:
        break;
    }
    if (!ok || m.oom || !m.n) {
        free(m.p);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: %s encoding failed%s", path, kind_name(k),
                        m.oom ? ": out of memory" : "");
    }
    rc = vki_write_atomic(path, m.p, m.n, e);
    free(m.p);
    return rc;
}
