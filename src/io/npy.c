/* NumPy .npy writer (format 1.0). */
#include "io/io_priv.h"
#include "core/util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NPY_E ">"
#else
#define NPY_E "<"
#endif

const char *vki_npy_descr(vkimg_fmt f)
{
    switch (f) {
    case VKIMG_U8: return "|u1";
    case VKIMG_U16: return NPY_E "u2";
    case VKIMG_F16: return NPY_E "f2";
    case VKIMG_F32: return NPY_E "f4";
    case VKIMG_U32: return NPY_E "u4";
    case VKIMG_U64: return NPY_E "u8";
    }
    return NULL;
}

/* "<u8" -> 8; 0 if descr is not [<>|=][biufc]DIGITS with a size of 1..64. */
static size_t descr_itemsize(const char *d)
{
    if (!d || !strchr("<>|=", d[0]) || !d[0] || !d[1] || !strchr("biufc", d[1]))
        return 0;
    size_t n = 0, i = 2;
    for (; d[i]; i++) {
        if (d[i] < '0' || d[i] > '9' || i > 4)
            return 0;
        n = n * 10 + (size_t)(d[i] - '0');
    }
    return i > 2 && n >= 1 && n <= 64 ? n : 0;
}

int vki_npy_save(const char *path, const char *descr, int ndim, const size_t *shape, const void *data,
                 size_t nbytes, vkimg_err *e)
{
    if (!path)
        return vki_fail(e, VKIMG_E_RUNTIME, "npy: NULL path");
    size_t item = descr_itemsize(descr);
    if (!item)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: npy: invalid dtype '%s'", path, descr ? descr : "(null)");
    if (ndim < 0 || ndim > 32 || (ndim > 0 && !shape))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: npy: invalid number of dimensions %d (0..32)", path, ndim);

    /* header dict, as numpy writes it */
    char hdr[1536];
    size_t len = 10; /* magic 6, version 2, header length 2 */
    int n = snprintf(hdr + len, sizeof hdr - len, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    len += (size_t)n;
    size_t count = 1;
    int overflow = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] && count > SIZE_MAX / shape[i])
            overflow = 1;
        count *= shape[i];
        n = snprintf(hdr + len, sizeof hdr - len, i ? ", %zu" : "%zu", shape[i]);
        len += (size_t)n;
    }
    if (overflow || count > SIZE_MAX / item)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: npy: array size overflows", path);
    if (count * item != nbytes)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: npy: shape and dtype '%s' need %zu bytes, got %zu", path, descr,
                        count * item, nbytes);
    if (nbytes && !data)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: npy: NULL data", path);
    n = snprintf(hdr + len, sizeof hdr - len, "%s), }", ndim == 1 ? "," : "");
    len += (size_t)n;
    /* pad with spaces to a multiple of 64 bytes including the final '\n' */
    size_t total = (len + 1 + 63) / 64 * 64;
    memset(hdr + len, ' ', total - 1 - len);
    hdr[total - 1] = '\n';

    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    size_t hlen = total - 10;
    hdr[8] = (char)(hlen & 0xff);
    hdr[9] = (char)(hlen >> 8);

    vki_span parts[2] = { { hdr, total }, { data, nbytes } };
    return vki_write_atomic_v(path, parts, nbytes ? 2 : 1, e);
}
