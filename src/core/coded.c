/* The layout and tables of an image coded for a JPEG (core/coded.h). */
#include "core/coded.h"
#include "core/util.h"

#include <stdlib.h>

/* ITU-T T.81 Annex K.1's example tables, natural order (libjpeg's jcparam.c) */
static const uint8_t std_luminance[64] = {
    16, 11, 10, 16, 24,  40,  51,  61,  12, 12, 14, 19, 26,  58,  60,  55,  14, 13, 16, 24, 40,  57,
    69, 56, 14, 17, 22,  29,  51,  87,  80, 62, 18, 22, 37,  56,  68,  109, 103, 77, 24, 35, 55, 64,
    81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
};
static const uint8_t std_chrominance[64] = {
    17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99,
    99, 99, 47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
};

/* jpeg_set_quality(quality, force_baseline = TRUE) on one table */
static void scaled_table(const uint8_t basic[64], int quality, uint16_t out[64])
{
    const long scale = quality < 50 ? 5000 / quality : 200 - quality * 2;
    for (int i = 0; i < 64; i++) {
        long t = (basic[i] * scale + 50) / 100;
        out[i] = (uint16_t)(t < 1 ? 1 : t > 255 ? 255 : t);
    }
}

void vki_coded_free(struct vkimg_coded *cd)
{
    if (cd)
        free(cd->intervals);
    free(cd);
}

static uint32_t div_up(uint64_t a, uint64_t b)
{
    return (uint32_t)((a + b - 1) / b);
}

int vki_jpeg_coded_layout(int w, int h, int c, int quality, struct vkimg_coded **out, vkimg_err *e)
{
    *out = NULL;
    if (w <= 0 || h <= 0 || c < 1 || c > 4)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg: invalid image (%dx%d, %d channels)", w, h, c);
    if (quality < VKIMG_QUALITY_MIN || quality > VKIMG_QUALITY_MAX)
        return vki_fail(e, VKIMG_E_USAGE, "JPEG quality %d is outside %d..%d", quality, VKIMG_QUALITY_MIN,
                        VKIMG_QUALITY_MAX);
    if (w > 65535 || h > 65535)
        return vki_fail(e, VKIMG_E_RUNTIME, "JPEG is limited to 65535x65535 pixels, the image is %dx%d", w, h);
    struct vkimg_coded *cd = calloc(1, sizeof *cd);
    if (!cd)
        return vki_fail(e, VKIMG_E_RUNTIME, "jpeg: out of memory");
    cd->ncomp = c <= 2 ? 1 : 3;
    cd->quality = quality;
    const uint32_t s = cd->ncomp == 3 && quality < VKI_JPEG_444_QUALITY ? 2 : 1; /* the luma's sampling factors */
    size_t blocks = 0;
    for (int k = 0; k < cd->ncomp; k++) {
        vki_jpeg_comp *cp = &cd->comp[k];
        const uint32_t f = k == 0 ? s : 1; /* the component's sampling factors */
        cp->hs = cp->vs = s / f;
        cp->cw = div_up((uint64_t)w * f, s); /* libjpeg's downsampled_width */
        cp->ch = div_up((uint64_t)h * f, s);
        cp->bw = div_up(div_up(cp->cw, 8), f) * f; /* width_in_blocks, whole MCUs */
        cp->bh = div_up(div_up(cp->ch, 8), f) * f;
        cp->off = blocks * 64;
        scaled_table(k == 0 ? std_luminance : std_chrominance, quality, cp->quant);
        blocks += (size_t)cp->bw * cp->bh;
    }
    cd->ncoef = blocks * 64;
    *out = cd;
    return 0;
}
