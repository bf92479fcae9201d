/* stb's implementations, compiled into the binary from Debian's libstb-dev headers.
 *
 * stb_image allocates with malloc (vki_malloc_big: large buffers 2 MiB-aligned and
 * marked for huge pages; spelled out here so that this holds whatever stb's defaults
 * are): the buffers it returns become vkimg_image.data and are released with free()
 * by vkimg_image_free().
 *
 * Nothing here changes stb's global state (no vertical flip, no unpremultiply), so
 * concurrent decodes/encodes on several threads are safe; stbi_failure_reason() is
 * thread-local (STBI_THREAD_LOCAL). PNG output normally goes through png.c; should
 * stb's own PNG writer be used, its zlib stream comes from libdeflate. JPEG goes
 * through jpeg.c (TurboJPEG) both ways, and most PNGs are decoded by png.c's fast
 * path: stb_image decodes the other formats and whatever those two decline, and
 * stb_image_write writes BMP, TGA and HDR. */
#include <limits.h>
#include <stdlib.h>

#include <libdeflate.h>

#include "core/util.h" /* vki_malloc_big: malloc()ed, huge pages from 2 MiB */

#define STBI_MALLOC(sz) vki_malloc_big(sz)
#define STBI_REALLOC(p, newsz) realloc(p, newsz)
#define STBI_FREE(p) free(p)
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

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

/* stb_image_write's JPEG bit writer (compiled in, though vkimg now writes JPEG with
 * TurboJPEG) shifts a signed int past INT_MAX
 * (stbiw__jpg_writeBits: bitBuf <<= 8; only its low 24 bits matter). GCC defines
 * that shift (its manual, "Integers implementation": it does not use C's latitude to
 * treat signed '<<' as undefined), but -fsanitize=undefined still aborts on it. As
 * this file is the only place that can change (the build flags are shared), the
 * writer's own functions are marked no_sanitize("shift-base") by having `static`
 * carry the attribute while the header is read; the standard headers it includes
 * are included first, so no standard header sees the macro. (A cleaner equivalent
 * in CMake: target_compile_options(vkimg_stb PRIVATE -fno-sanitize=shift-base).) */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#if defined(__GNUC__) || defined(__clang__)
#define static static __attribute__((no_sanitize("shift-base")))
#endif

#define STBIW_MALLOC(sz) malloc(sz)
#define STBIW_REALLOC(p, newsz) realloc(p, newsz)
#define STBIW_FREE(p) free(p)
#define STBIW_ZLIB_COMPRESS vki_stbiw_zlib_compress
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#undef static
