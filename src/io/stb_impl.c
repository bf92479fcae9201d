/* stb_image_write's implementation, compiled from Debian's libstb-dev header, for
 * the BMP, TGA and HDR writers (save.c calls them through vki_stbiw_write).
 * stb_image (the decoder) is not compiled into vkimg at all: every input format has
 * its own decoder (load.c). STB_IMAGE_WRITE_STATIC makes every stb symbol static
 * to this file, so none of them is exported by libvkimg or can clash with a
 * program's own copy of stb.
 *
 * stb_image_write allocates with malloc/free and keeps no state between calls
 * (vkimg never sets its global flip flag; stbi_write_tga_with_rle stays 1), so
 * concurrent writes on several threads are safe. Its JPEG writer's bit buffer
 * shifts a signed int past INT_MAX (stbiw__jpg_writeBits), which UBSan reports:
 * CMakeLists.txt compiles this one file with -fno-sanitize=shift-base. Should its
 * PNG writer ever be used, the zlib stream comes from libdeflate. */
#include "io/io_priv.h"

#include <limits.h>
#include <stdlib.h>

#include <libdeflate.h>

/* STBIW_ZLIB_COMPRESS: the result is freed with STBIW_FREE (free), so malloc it. */
static unsigned char *vki_stbiw_zlib_compress(unsigned char *data, int data_len, int *out_len, int quality)
{
    *out_len = 0;
    if (data_len < 0)
        return NULL;
    int level = quality < 0 ? 6 : quality > 12 ? 12 : quality;
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    if (!c)
        return NULL;
    size_t bound = libdeflate_zlib_compress_bound(c, (size_t)data_len);
    unsigned char *out = bound <= INT_MAX ? malloc(bound) : NULL;
    size_t n = out ? libdeflate_zlib_compress(c, data, (size_t)data_len, out, bound) : 0;
    libdeflate_free_compressor(c);
    if (!n || n > INT_MAX) {
        free(out);
        return NULL;
    }
    *out_len = (int)n;
    return out;
}

#define STBIW_MALLOC(sz) malloc(sz)
#define STBIW_REALLOC(p, newsz) realloc(p, newsz)
#define STBIW_FREE(p) free(p)
#define STBIW_ZLIB_COMPRESS vki_stbiw_zlib_compress
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

int vki_stbiw_write(vkimg_file_kind kind, vki_write_fn *write, void *ctx, int w, int h, int c, const void *data)
{
    switch (kind) {
    case VKIMG_FILE_BMP: return stbi_write_bmp_to_func(write, ctx, w, h, c, data);
    case VKIMG_FILE_TGA: return stbi_write_tga_to_func(write, ctx, w, h, c, data);
    case VKIMG_FILE_HDR: return stbi_write_hdr_to_func(write, ctx, w, h, c, data);
    default: return 0;
    }
}
