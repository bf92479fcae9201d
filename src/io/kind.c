/* File kinds: from the output path's extension, and the sample format each takes. */
#include "io/io_priv.h"
#include "core/util.h"

#include <string.h>

#define EXT_HINT "(use .png .jpg .webp .tif .bmp .tga .hdr .npy .ktx2)"


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
        { "tga", VKIMG_FILE_TGA }, { "hdr", VKIMG_FILE_HDR },  { "npy", VKIMG_FILE_NPY }, { "ktx2", VKIMG_FILE_KTX2 },
        { "webp", VKIMG_FILE_WEBP }, { "tif", VKIMG_FILE_TIFF }, { "tiff", VKIMG_FILE_TIFF },
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
    case VKIMG_FILE_WEBP:
    case VKIMG_FILE_BMP:
    case VKIMG_FILE_TGA: return VKIMG_U8;
    case VKIMG_FILE_HDR: return VKIMG_F32;
    case VKIMG_FILE_TIFF: return data_fmt == VKIMG_U8 || data_fmt == VKIMG_U16 ? data_fmt : VKIMG_F32;
    case VKIMG_FILE_KTX2: return data_fmt == VKIMG_U8 || data_fmt == VKIMG_U16 ? data_fmt : VKIMG_F32;
    case VKIMG_FILE_NPY:
    case VKIMG_FILE_UNKNOWN: break;
    }
    return data_fmt;
}

const char *vki_kind_name(vkimg_file_kind k)
{
    switch (k) {
    case VKIMG_FILE_PNG: return "PNG";
    case VKIMG_FILE_JPEG: return "JPEG";
    case VKIMG_FILE_BMP: return "BMP";
    case VKIMG_FILE_TGA: return "TGA";
    case VKIMG_FILE_HDR: return "HDR";
    case VKIMG_FILE_NPY: return "NPY";
    case VKIMG_FILE_KTX2: return "KTX2";
    case VKIMG_FILE_WEBP: return "WebP";
    case VKIMG_FILE_TIFF: return "TIFF";
    case VKIMG_FILE_UNKNOWN: break;
    }
    return "unknown";
}

/* The output kind of path, or a usage error. */
int vki_output_kind(const char *path, vkimg_file_kind *k, vkimg_err *e)
{
    *k = vkimg_file_kind_of(path);
    if (*k != VKIMG_FILE_UNKNOWN)
        return 0;
    const char *x = path_ext(path);
    if (!x)
        return vki_fail(e, VKIMG_E_USAGE, "%s: unknown output format (no extension) " EXT_HINT, path);
    return vki_fail(e, VKIMG_E_USAGE, "%s: unknown output format '.%s' " EXT_HINT, path, x);
}
