/* EXIF blocks and ICC profiles built by hand (exif_util.h). */
#include "exif_util.h"
#include "bbuf.h"
#include "t.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct tiff_w {
    bbuf b;
    int le;
} tiff_w;

static void t16(tiff_w *w, unsigned v) { (w->le ? bb_le16 : bb_be16)(&w->b, v); }
static void t32(tiff_w *w, uint32_t v) { (w->le ? bb_le32 : bb_be32)(&w->b, v); }

static void entry(tiff_w *w, unsigned tag, unsigned type, uint32_t count, uint32_t value)
{
    t16(w, tag);
    t16(w, type);
    t32(w, count);
    if (type == 3 && count == 1) { /* SHORT: left-justified in the value field */
        t16(w, value);
        t16(w, 0);
    } else {
        t32(w, value);
    }
}

unsigned char *t_exif_block(int le, int orient, unsigned orient_type, unsigned long long *seed, size_t *len)
{
    tiff_w w = { { 0 }, le };
    bb_put(&w.b, le ? "II" : "MM", 2);
    t16(&w, 42);
    t32(&w, 8);
    const int n0 = orient ? 5 : 4;
    /* layout: IFD0 at 8; then Make string (10), XRes rational (8), Exif IFD (18), IFD1
     * (2 + 3 * 12 + 4 = 42), thumbnail (32) */
    const uint32_t ifd0_end = 8 + 2 + 12 * (uint32_t)n0 + 4;
    const uint32_t make_off = ifd0_end, xres_off = make_off + 10, exif_ifd = xres_off + 8, ifd1 = exif_ifd + 18,
                   thumb = ifd1 + 42;
    t16(&w, (unsigned)n0);
    entry(&w, 0x010F, 2, 10, make_off);
    if (orient)
        entry(&w, 0x0112, orient_type, 1, (uint32_t)orient);
    entry(&w, 0x011A, 5, 1, xres_off);
    entry(&w, 0x0128, 3, 1, 2);
    entry(&w, 0x8769, 4, 1, exif_ifd);
    t32(&w, ifd1);
    bb_put(&w.b, "vkimgtest", 10);
    t32(&w, 72);
    t32(&w, 1);
    t16(&w, 1); /* Exif IFD: ExifVersion "0232" inline */
    t16(&w, 0x9000);
    t16(&w, 7);
    t32(&w, 4);
    bb_put(&w.b, "0232", 4);
    t32(&w, 0);
    t16(&w, 3); /* IFD1 */
    entry(&w, 0x0103, 3, 1, 6);
    entry(&w, 0x0201, 4, 1, thumb);
    entry(&w, 0x0202, 4, 1, 32);
    t32(&w, 0);
    unsigned char th[32] = { 0xff, 0xd8 };
    for (int i = 2; i < 30; i++)
        th[i] = (unsigned char)t_rand(seed);
    th[30] = 0xff;
    th[31] = 0xd9;
    bb_put(&w.b, th, 32);
    *len = w.b.n;
    return w.b.p;
}

unsigned char *t_icc_profile(size_t n, const char *cs, unsigned long long *seed)
{
    unsigned char *p = malloc(n ? n : 1);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (unsigned char)t_rand(seed);
    unsigned char h[128] = { 0 };
    h[0] = (unsigned char)(n >> 24), h[1] = (unsigned char)(n >> 16), h[2] = (unsigned char)(n >> 8),
    h[3] = (unsigned char)n;
    memcpy(h + 4, "vkim", 4);
    h[8] = 4, h[9] = 0x30;
    memcpy(h + 12, "mntr", 4);
    memcpy(h + 16, cs, 4);
    memcpy(h + 20, "XYZ ", 4);
    h[24] = 0x07, h[25] = 0xe9, h[27] = 1, h[29] = 1;
    memcpy(h + 36, "acsp", 4);
    memcpy(h + 40, "APPL", 4);
    h[68] = 0, h[69] = 0, h[70] = 0xf6, h[71] = 0xd6; /* D50 illuminant */
    h[72] = 0, h[73] = 1, h[74] = 0, h[75] = 0;
    h[76] = 0, h[77] = 0, h[78] = 0xd3, h[79] = 0x2d;
    if (p)
        memcpy(p, h, n < 128 ? n : 128);
    return p;
}
