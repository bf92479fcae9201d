/* The references of the exact moves (see remap_ref.h). Written from the
 * definitions only; shares no code with src/ or shaders/. */
#include "remap_ref.h"
#include "ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mv_names[MV_NKINDS] = { "copy", "flip", "flop", "transpose", "transverse",
                                          "rotate=90", "rotate=180", "rotate=270" };
const char *const mv_gravity_names[9] = { "centre", "north", "south", "east", "west",
                                          "northeast", "northwest", "southeast", "southwest" };

/* Input pixel (x, y) of a w x h image lands at *ox, *oy of the result. */
static void land(mv_kind k, int w, int h, int x, int y, int *ox, int *oy)
{
    switch (k) {
    case MV_IDENTITY: *ox = x, *oy = y; break;
    case MV_FLIP: *ox = x, *oy = h - 1 - y; break;              /* rows swap top and bottom */
    case MV_FLOP: *ox = w - 1 - x, *oy = y; break;              /* columns swap left and right */
    case MV_TRANSPOSE: *ox = y, *oy = x; break;                 /* row y becomes column y */
    case MV_TRANSVERSE: *ox = h - 1 - y, *oy = w - 1 - x; break; /* the top-right and bottom-left corners stay */
    case MV_ROT90: *ox = h - 1 - y, *oy = x; break;             /* the top row becomes the right column */
    case MV_ROT180: *ox = w - 1 - x, *oy = h - 1 - y; break;
    case MV_ROT270: *ox = y, *oy = w - 1 - x; break;            /* the top row becomes the left column */
    default: abort();
    }
}

static int swaps(mv_kind k) { return k == MV_TRANSPOSE || k == MV_TRANSVERSE || k == MV_ROT90 || k == MV_ROT270; }

rm_map mv_move(mv_kind k, int w, int h)
{
    rm_map m = rm_map_new(w, h, swaps(k) ? h : w, swaps(k) ? w : h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int ox, oy;
            land(k, w, h, x, y, &ox, &oy);
            m.src[(size_t)oy * m.w + ox] = (size_t)y * w + x;
        }
    return m;
}

/* EXIF 2.32, Orientation (tag 274): where the stored image's 0th row and 0th column
 * are seen. 1: row top, column left; 2: top, right; 3: bottom, right; 4: bottom,
 * left; 5: row left, column top; 6: right, top; 7: right, bottom; 8: left, bottom.
 * Rows and columns count away from the side they are seen on. */
enum { TOP, BOTTOM, LEFT, RIGHT };
static const int exif_row[9] = { 0, TOP, TOP, BOTTOM, BOTTOM, LEFT, RIGHT, RIGHT, LEFT };
static const int exif_col[9] = { 0, LEFT, RIGHT, RIGHT, LEFT, TOP, TOP, BOTTOM, BOTTOM };

rm_map mv_orientation(int o, int w, int h)
{
    if (o < 1 || o > 8)
        abort();
    /* stored rows seen as rows (row at the top or bottom) or as columns */
    int rows_across = exif_row[o] == TOP || exif_row[o] == BOTTOM;
    int W = rows_across ? w : h, H = rows_across ? h : w;
    rm_map m = rm_map_new(w, h, W, H);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int ox, oy;
            if (rows_across) {
                oy = exif_row[o] == TOP ? y : H - 1 - y;
                ox = exif_col[o] == LEFT ? x : W - 1 - x;
            } else {
                ox = exif_row[o] == LEFT ? y : W - 1 - y;
                oy = exif_col[o] == TOP ? x : H - 1 - x;
            }
            m.src[(size_t)oy * W + ox] = (size_t)y * w + x;
        }
    return m;
}

int mv_orientation_inverse(int o)
{
    /* 6 (rotate 90 clockwise) and 8 (270) undo each other; the mirrors and 3 undo
     * themselves */
    return o == 6 ? 8 : o == 8 ? 6 : o;
}

/* ImageMagick's centring (GravityAdjustGeometry): W/2 - w/2, each half rounded down */
int mv_centre(int W, int w) { return W / 2 - w / 2; }

int mv_crop_region(int W, int H, int rw, int rh, int gravity, int x, int y, int *x0, int *y0, int *cw, int *ch)
{
    int west = gravity == MV_WEST || gravity == MV_NORTHWEST || gravity == MV_SOUTHWEST;
    int east = gravity == MV_EAST || gravity == MV_NORTHEAST || gravity == MV_SOUTHEAST;
    int north = gravity == MV_NORTH || gravity == MV_NORTHWEST || gravity == MV_NORTHEAST;
    int south = gravity == MV_SOUTH || gravity == MV_SOUTHWEST || gravity == MV_SOUTHEAST;
    /* the region's edges before clipping, in 64 bits (sides up to 2^24, offsets +-2^24) */
    long long l = west ? x : east ? (long long)W - rw - x : (long long)mv_centre(W, rw) + x;
    long long t = north ? y : south ? (long long)H - rh - y : (long long)mv_centre(H, rh) + y;
    long long r = l + rw, b = t + rh;
    l = l < 0 ? 0 : l;
    t = t < 0 ? 0 : t;
    r = r > W ? W : r;
    b = b > H ? H : b;
    if (r <= l || b <= t)
        return -1;
    *x0 = (int)l;
    *y0 = (int)t;
    *cw = (int)(r - l);
    *ch = (int)(b - t);
    return 0;
}

rm_map mv_crop(int w, int h, int x0, int y0, int cw, int ch)
{
    rm_map m = rm_map_new(w, h, cw, ch);
    for (int y = y0; y < y0 + ch; y++)
        for (int x = x0; x < x0 + cw; x++)
            m.src[(size_t)(y - y0) * cw + (x - x0)] = (size_t)y * w + x;
    return m;
}

/* ---------------------------------------------------------------- self-check */

/* m applied to the 3 x 2 image 0 1 2 / 3 4 5 reads as want (row by row). */
static void expect_map(const char *what, const rm_map *m, int w, int h, const char *want)
{
    char got[64] = "";
    size_t k = 0;
    for (int p = 0; p < m->w * m->h && k + 3 < sizeof got; p++) {
        if (p && p % m->w == 0)
            got[k++] = '/';
        got[k++] = m->src[p] == SIZE_MAX ? '?' : (char)('0' + (int)m->src[p]);
    }
    got[k] = 0;
    int ok = m->w == w && m->h == h && !strcmp(got, want);
    if (!ok)
        fprintf(stderr, "remap reference self-check FAIL: %s: %dx%d \"%s\", want %dx%d \"%s\"\n", what, m->w, m->h,
                got, w, h, want);
    ref_expect(what, ok, 1, 0);
}

int mv_self_check(void)
{
    int fails0 = ref_fail_count();
    /* the 3 x 2 image 0 1 2 / 3 4 5, moved by hand */
    static const struct { mv_kind k; int w, h; const char *want; } hand[] = {
        { MV_IDENTITY, 3, 2, "012/345" },  { MV_FLIP, 3, 2, "345/012" },     { MV_FLOP, 3, 2, "210/543" },
        { MV_TRANSPOSE, 2, 3, "03/14/25" }, { MV_TRANSVERSE, 2, 3, "52/41/30" }, { MV_ROT90, 2, 3, "30/41/52" },
        { MV_ROT180, 3, 2, "543/210" },    { MV_ROT270, 2, 3, "25/14/03" },
    };
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        rm_map m = mv_move(hand[i].k, 3, 2);
        expect_map(mv_names[hand[i].k], &m, hand[i].w, hand[i].h, hand[i].want);
        ref_expect("move is a bijection", rm_map_valid(&m, 1), 1, 0);
        rm_map_free(&m);
    }
    /* Adam M. Costello's letter F: the stored image of each orientation, shown
     * upright, is the same F (a 3 x 5 F: 3 columns, 5 rows) */
    {
        static const char *const F = "XXX/X../XX./X../X..";
        static const char *const stored[9] = {
            NULL,
            "XXX/X../XX./X../X..", "XXX/..X/.XX/..X/..X", "..X/..X/.XX/..X/XXX", "X../X../XX./X../XXX",
            "XXXXX/X.X../X....", "X..../X.X../XXXXX", "....X/..X.X/XXXXX", "XXXXX/..X.X/....X",
        };
        for (int o = 1; o <= 8; o++) {
            const char *s = stored[o];
            int w = (int)(strchr(s, '/') - s), h = (int)(strlen(s) + 1) / (w + 1);
            rm_map m = mv_orientation(o, w, h);
            char got[32] = "";
            size_t k = 0;
            for (int p = 0; p < m.w * m.h; p++) {
                if (p && p % m.w == 0)
                    got[k++] = '/';
                size_t q = m.src[p];
                got[k++] = q == SIZE_MAX ? '?' : s[q / (size_t)w * (size_t)(w + 1) + q % (size_t)w];
            }
            got[k] = 0;
            if (strcmp(got, F))
                fprintf(stderr, "remap reference self-check FAIL: orientation %d shows \"%s\", want \"%s\"\n", o, got,
                        F);
            ref_expect("orientation shows F upright", !strcmp(got, F), 1, 0);
            rm_map_free(&m);
        }
    }
    /* the orientations are the named moves: 1 as stored, 2 flop, 3 rotate 180, 4 flip,
     * 5 transpose, 6 rotate 90, 7 transverse, 8 rotate 270 (on a non-square size) */
    {
        static const mv_kind named[9] = { MV_IDENTITY, MV_IDENTITY, MV_FLOP, MV_ROT180, MV_FLIP,
                                          MV_TRANSPOSE, MV_ROT90, MV_TRANSVERSE, MV_ROT270 };
        for (int o = 1; o <= 8; o++) {
            rm_map a = mv_orientation(o, 5, 3), b = mv_move(named[o], 5, 3);
            ref_expect("orientation is its named move", rm_map_equal(&a, &b), 1, 0);
            rm_map c = mv_orientation(mv_orientation_inverse(o), a.w, a.h), d = rm_then(&a, &c);
            rm_map e = mv_move(MV_IDENTITY, 5, 3);
            ref_expect("orientation then its inverse", rm_map_equal(&d, &e), 1, 0);
            rm_map_free(&a);
            rm_map_free(&b);
            rm_map_free(&c);
            rm_map_free(&d);
            rm_map_free(&e);
        }
    }
    /* crop regions by hand: 10 x 8 image */
    {
        static const struct { int rw, rh, g, x, y, ok, x0, y0, cw, ch; } c[] = {
            { 4, 3, MV_NORTHWEST, 2, 1, 0, 2, 1, 4, 3 },   /* 4x3+2+1 */
            { 4, 3, MV_NORTHWEST, -2, -1, 0, 0, 0, 2, 2 }, /* 4x3-2-1: clipped at the top-left */
            { 4, 3, MV_NORTHWEST, 8, 6, 0, 8, 6, 2, 2 },   /* clipped at the bottom-right */
            { 4, 3, MV_NORTHWEST, 10, 0, -1, 0, 0, 0, 0 }, /* starts at the right edge: nothing */
            { 4, 3, MV_NORTHWEST, -4, 0, -1, 0, 0, 0, 0 }, /* ends at the left edge: nothing */
            { 4, 3, MV_SOUTHEAST, 1, 2, 0, 5, 3, 4, 3 },   /* offsets inward from the bottom-right */
            { 4, 3, MV_EAST, 0, 0, 0, 6, 3, 4, 3 },        /* 8/2 - 3/2 = 3 */
            { 3, 3, MV_CENTRE, 0, 0, 0, 4, 3, 3, 3 },      /* 10/2 - 3/2 = 4 (not (10 - 3)/2 = 3) */
            { 3, 3, MV_CENTRE, 1, -1, 0, 5, 2, 3, 3 },
            { 4, 4, MV_SOUTH, 0, 1, 0, 3, 3, 4, 4 },
            { 20, 20, MV_CENTRE, 0, 0, 0, 0, 0, 10, 8 },   /* larger than the image: all of it */
            { 13, 8, MV_CENTRE, -3, 0, 0, 0, 0, 9, 8 },    /* 10/2 - 13/2 = -1, - 3: [-4, 9) */
        };
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            int x0 = 0, y0 = 0, cw = 0, ch = 0;
            int rc = mv_crop_region(10, 8, c[i].rw, c[i].rh, c[i].g, c[i].x, c[i].y, &x0, &y0, &cw, &ch);
            char what[80];
            snprintf(what, sizeof what, "crop region case %zu", i);
            ref_expect(what, rc, c[i].ok, 0);
            if (!rc)
                ref_expect(what, x0 * 1000000 + y0 * 10000 + cw * 100 + ch,
                           c[i].x0 * 1000000 + c[i].y0 * 10000 + c[i].cw * 100 + c[i].ch, 0);
        }
        rm_map m = mv_crop(3, 2, 1, 0, 2, 2);
        expect_map("crop 2x2+1+0 of 3x2", &m, 2, 2, "12/45");
        rm_map_free(&m);
    }
    return ref_fail_count() - fails0;
}
