/* Geometry and colour syntaxes (geometry.h). */
#include "pipeline/geometry.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number at t[*i]: digits with an optional fraction (frac) or digits only,
 * the nearest double to its decimal value (as strtod gives it: the digits as an
 * exact integer over an exact power of ten, one rounding; digits past 2^53 or
 * 10^22 are ignored). Returns -1 when there is none. */
static double number(const char *t, size_t n, size_t *i, bool frac)
{
    size_t j = *i;
    double m = 0, p10 = 1; /* the value is m / p10 */
    bool digits = false;
    while (j < n && t[j] >= '0' && t[j] <= '9') {
        m = m * 10 + (t[j++] - '0');
        digits = true;
        if (m > 1e12)
            return -1;
    }
    if (frac && j < n && t[j] == '.') {
        j++;
        while (j < n && t[j] >= '0' && t[j] <= '9') {
            if (m < 9007199254740992.0 / 10 && p10 < 1e22) {
                m = m * 10 + (t[j] - '0');
                p10 *= 10;
            }
            j++;
            digits = true;
        }
    }
    if (!digits)
        return -1;
    *i = j;
    return m / p10;
}

static int fail(char *why, size_t wn, const char *msg)
{
    snprintf(why, wn, "%s", msg);
    return -1;
}

int vki_geo_parse(const char *t, size_t n, double x[VKI_TEXT_VALUES], char *why, size_t wn)
{
    size_t i = 0;
    double w = number(t, n, &i, true), h = -1;
    int flags = VKI_GEO_NOX;
    if (i < n && (t[i] == 'x' || t[i] == 'X')) {
        i++;
        h = number(t, n, &i, true);
        flags = 0;
    }
    for (; i < n; i++) {
        int f = t[i] == '%' ? VKI_GEO_PERCENT : t[i] == '!' ? VKI_GEO_EXACT : t[i] == '^' ? VKI_GEO_FILL
              : t[i] == '>' ? VKI_GEO_SHRINK : t[i] == '<' ? VKI_GEO_ENLARGE : 0;
        if (!f)
            return fail(why, wn, "unexpected characters");
        if (flags & f)
            return fail(why, wn, "a flag given twice");
        flags |= f;
    }
    if (w < 0 && h < 0)
        return fail(why, wn, "no width or height");
    if ((flags & VKI_GEO_SHRINK) && (flags & VKI_GEO_ENLARGE))
        return fail(why, wn, "'>' (only shrink) and '<' (only enlarge) together");
    if (flags & VKI_GEO_PERCENT) { /* ImageMagick's ParseMetaGeometry: no width is 100%, no height the width's */
        if (w < 0)
            w = 100;
        if (h < 0)
            h = w;
        /* below 100 / 2^24 % every side is 1 pixel: 0.000001 loses nothing, and keeps
         * the canonical text (vki_geo_format) short and parseable */
        if (!(w >= 1e-6) || !(h >= 1e-6) || w > 1e6 || h > 1e6)
            return fail(why, wn, "percentages must be at least 0.000001 and at most 1000000");
    } else {
        if ((w >= 0 && (w != floor(w) || w < 1)) || (h >= 0 && (h != floor(h) || h < 1)))
            return fail(why, wn, "sizes are whole numbers of pixels, at least 1");
        if (w > VKI_MAX_SIDE || h > VKI_MAX_SIDE)
            return fail(why, wn, "a side over 16777216");
    }
    x[VKI_GEO_W] = w < 0 ? 0 : w;
    x[VKI_GEO_H] = h < 0 ? 0 : h;
    x[VKI_GEO_FLAGS] = flags;
    return 0;
}

/* v (> 0, at most 10 significant digits kept) as the parser reads it: digits and a
 * fraction, never an exponent (%g writes 1e-06 below 0.0001). */
static void geo_number(double v, char *buf, size_t n)
{
    snprintf(buf, n, "%.10g", v);
    char *e = strchr(buf, 'e');
    if (!e || v >= 1)
        return;
    char m[24];
    snprintf(m, sizeof m, "%.9e", v); /* d.ddddddddde-XX */
    const int zeros = -atoi(strchr(m, 'e') + 1) - 1;
    char digits[16];
    size_t k = 0;
    for (const char *c = m; *c && *c != 'e' && k < 10; c++)
        if (*c >= '0' && *c <= '9')
            digits[k++] = *c;
    while (k > 1 && digits[k - 1] == '0')
        k--;
    digits[k] = 0;
    snprintf(buf, n, "0.%.*s%.10s", zeros < 0 ? 0 : zeros > 30 ? 30 : zeros, "000000000000000000000000000000", digits);
}

void vki_geo_format(const double x[VKI_TEXT_VALUES], char *buf, size_t n)
{
    int flags = (int)x[VKI_GEO_FLAGS];
    char w[48] = "", h[48] = "";
    if (x[VKI_GEO_W] > 0)
        geo_number(x[VKI_GEO_W], w, sizeof w);
    if (x[VKI_GEO_H] > 0)
        geo_number(x[VKI_GEO_H], h, sizeof h);
    /* the texts, not the values: two values that print alike parse back as one */
    if ((flags & VKI_GEO_PERCENT) && !strcmp(w, h))
        h[0] = 0;
    snprintf(buf, n, "%s%s%s%s%s%s%s%s", w, ((flags & VKI_GEO_PERCENT) && !h[0]) || (flags & VKI_GEO_NOX) ? "" : "x", h,
             flags & VKI_GEO_PERCENT ? "%" : "", flags & VKI_GEO_EXACT ? "!" : "", flags & VKI_GEO_FILL ? "^" : "",
             flags & VKI_GEO_SHRINK ? ">" : "", flags & VKI_GEO_ENLARGE ? "<" : "");
}

static double side(double scale, int s)
{
    double v = floor(scale * s + 0.5);
    return v < 1 ? 1 : v;
}

/* A percentage of a side as ImageMagick computes it (ParseMetaGeometry):
 * floor(pct * side / 100 + 0.5), the product first (exact for whole
 * percentages), so that 29% of 50 is 14.5 -> 15 (pct / 100 * side is
 * 14.499999999999998 in double, which rounded down). */
static double pct_side(double pct, int s)
{
    double v = floor(pct * s / 100.0 + 0.5);
    return v < 1 ? 1 : v;
}

int vki_geo_resolve(const double x[VKI_TEXT_VALUES], int w, int h, int *ow, int *oh, char *why, size_t wn)
{
    int flags = (int)x[VKI_GEO_FLAGS];
    double gw = x[VKI_GEO_W], gh = x[VKI_GEO_H], rw, rh;
    if (flags & VKI_GEO_PERCENT) {
        rw = pct_side(gw, w);
        rh = pct_side(gh, h);
    } else {
        rw = gw > 0 ? gw : w;
        rh = gh > 0 ? gh : h;
        if (!(flags & VKI_GEO_EXACT) && (rw != w || rh != h)) {
            double scale;
            bool fill = flags & VKI_GEO_FILL;
            if (gw > 0 && gh > 0) {
                scale = gw / w;
                scale = fill ? fmax(scale, gh / h) : fmin(scale, gh / h);
            } else if (gw > 0) { /* ImageMagick: "W^" fills a W x W box */
                scale = fill ? fmax(gw / w, gw / h) : gw / w;
            } else {
                scale = fill ? fmax(gh / h, gh / w) : gh / h;
            }
            rw = side(scale, w);
            rh = side(scale, h);
        }
        if (flags & VKI_GEO_SHRINK) {
            rw = fmin(rw, w);
            rh = fmin(rh, h);
        }
        if (flags & VKI_GEO_ENLARGE) {
            rw = fmax(rw, w);
            rh = fmax(rh, h);
        }
    }
    if (rw > VKI_MAX_SIDE || rh > VKI_MAX_SIDE) {
        snprintf(why, wn, "the result would be %.0fx%.0f, a side over the limit of %d", rw, rh, VKI_MAX_SIDE);
        return -1;
    }
    *ow = (int)rw;
    *oh = (int)rh;
    return 0;
}

/* A signed integer with an explicit sign at t[*i]. */
static int offset(const char *t, size_t n, size_t *i, double *v)
{
    if (*i >= n || (t[*i] != '+' && t[*i] != '-'))
        return -1;
    double sign = t[*i] == '-' ? -1 : 1;
    (*i)++;
    double a = number(t, n, i, false);
    if (a < 0 || a > VKI_MAX_SIDE)
        return -1;
    *v = sign * a;
    return 0;
}

int vki_region_parse(const char *t, size_t n, double x[VKI_TEXT_VALUES], char *why, size_t wn)
{
    /* WxH in pixels, or percentages of the image's sides as ImageMagick's crop reads
     * them (ParseGravityGeometry): a '%' after either makes both percentages, and a
     * lone W% is both sides */
    size_t i = 0;
    bool pct = false;
    double w = number(t, n, &i, true), h = -1;
    if (w >= 0 && i < n && t[i] == '%')
        pct = true, i++;
    if (w >= 0 && i < n && (t[i] == 'x' || t[i] == 'X')) {
        i++;
        h = number(t, n, &i, true);
        if (h >= 0 && i < n && t[i] == '%')
            pct = true, i++;
        if (h < 0 && !pct)
            return fail(why, wn, "expected WxH or W%[xH%]");
    }
    if (w < 0 || (h < 0 && !pct))
        return fail(why, wn, "expected WxH or W%[xH%]");
    if (h < 0)
        h = w;
    if (pct) {
        if (!(w >= 1e-6) || !(h >= 1e-6) || w > 1e6 || h > 1e6)
            return fail(why, wn, "percentages must be at least 0.000001 and at most 1000000");
    } else if (w != floor(w) || h != floor(h) || w < 1 || h < 1 || w > VKI_MAX_SIDE || h > VKI_MAX_SIDE) {
        return fail(why, wn, "sizes are whole numbers of pixels from 1 to 16777216");
    }
    x[VKI_REG_W] = w;
    x[VKI_REG_H] = h;
    x[VKI_REG_PERCENT] = pct;
    if (i < n) {
        if (offset(t, n, &i, &x[VKI_REG_X]) || offset(t, n, &i, &x[VKI_REG_Y]) || i != n)
            return fail(why, wn, "expected the offsets as +X+Y (signs required, integers)");
        x[VKI_REG_HAS_OFFSET] = 1;
    }
    return 0;
}

void vki_region_format(const double x[VKI_TEXT_VALUES], char *buf, size_t n)
{
    char size[112];
    if (x[VKI_REG_PERCENT]) {
        char w[48], h[48];
        geo_number(x[VKI_REG_W], w, sizeof w);
        geo_number(x[VKI_REG_H], h, sizeof h);
        /* the texts, not the values: two values that print alike parse back as one */
        snprintf(size, sizeof size, "%s%s%s%%", w, strcmp(w, h) ? "x" : "", strcmp(w, h) ? h : "");
    } else {
        snprintf(size, sizeof size, "%.0fx%.0f", x[VKI_REG_W], x[VKI_REG_H]);
    }
    if (x[VKI_REG_HAS_OFFSET])
        snprintf(buf, n, "%s%+.0f%+.0f", size, x[VKI_REG_X], x[VKI_REG_Y]);
    else
        snprintf(buf, n, "%s", size);
}

/* A percentage may ask for more than an int holds (10^6 % of 2^24 pixels); past 2^26 the
 * region clipped to the image is the same whatever the size (sides and offsets are at
 * most 2^24), so it is capped there */
static long region_side(double v, bool pct, int side)
{
    if (pct)
        v = pct_side(v, side);
    return v > (double)(1L << 26) ? 1L << 26 : (long)v;
}

void vki_region_size(const double x[VKI_TEXT_VALUES], int W, int H, long *w, long *h)
{
    *w = region_side(x[VKI_REG_W], x[VKI_REG_PERCENT] != 0, W);
    *h = region_side(x[VKI_REG_H], x[VKI_REG_PERCENT] != 0, H);
}

static const struct {
    const char *name;
    unsigned rgba;
} colours[] = {
    { "black", 0x000000ffu },   { "white", 0xffffffffu },   { "red", 0xff0000ffu },   { "green", 0x008000ffu },
    { "lime", 0x00ff00ffu },    { "blue", 0x0000ffffu },    { "yellow", 0xffff00ffu }, { "cyan", 0x00ffffffu },
    { "magenta", 0xff00ffffu }, { "gray", 0x808080ffu },    { "grey", 0x808080ffu },   { "transparent", 0x00000000u },
    { "none", 0x00000000u },
};

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int vki_colour_parse(const char *t, size_t n, double x[VKI_TEXT_VALUES], char *why, size_t wn)
{
    if (n > 1 && t[0] == '#') /* CSS and ImageMagick write hex colours so */
        t++, n--;
    for (size_t k = 0; k < VKI_ARRAY_LEN(colours); k++)
        if (strlen(colours[k].name) == n && !vki_strncasecmp(t, colours[k].name, n)) {
            for (int c = 0; c < 4; c++)
                x[c] = ((colours[k].rgba >> (24 - 8 * c)) & 255) / 255.0;
            return 0;
        }
    if (n != 3 && n != 4 && n != 6 && n != 8)
        return fail(why, wn, "not a colour name or RGB, RGBA, RRGGBB, RRGGBBAA in hex");
    int per = n <= 4 ? 1 : 2;
    x[3] = 1;
    for (size_t c = 0; c < n / (size_t)per; c++) {
        int a = hexval(t[c * per]), b = per == 2 ? hexval(t[c * per + 1]) : a;
        if (a < 0 || b < 0)
            return fail(why, wn, "not a colour name or RGB, RGBA, RRGGBB, RRGGBBAA in hex");
        x[c] = (a * 16 + b) / 255.0;
    }
    return 0;
}

void vki_colour_format(const double x[VKI_TEXT_VALUES], char *buf, size_t n)
{
    int v[4];
    for (int c = 0; c < 4; c++)
        v[c] = (int)floor(x[c] * 255.0 + 0.5);
    if (v[3] == 255)
        snprintf(buf, n, "%02x%02x%02x", v[0], v[1], v[2]);
    else
        snprintf(buf, n, "%02x%02x%02x%02x", v[0], v[1], v[2], v[3]);
}

double vki_colour_luma(const double x[VKI_TEXT_VALUES])
{
    return 0.299 * x[0] + 0.587 * x[1] + 0.114 * x[2];
}

const char *const vki_gravity_names[] = { "centre", "north", "south", "east", "west",
                                          "northeast", "northwest", "southeast", "southwest", NULL };

void vki_gravity_place(vki_gravity g, int W, int H, int w, int h, int *x, int *y)
{
    /* ImageMagick's GravityAdjustGeometry: W/2 - w/2 (each halved first, so one
     * more than (W - w)/2 where W is even and w odd) */
    int cx = W / 2 - w / 2, cy = H / 2 - h / 2;
    switch (g) {
    case VKI_GRAV_CENTRE: *x = cx, *y = cy; break;
    case VKI_GRAV_NORTH: *x = cx, *y = 0; break;
    case VKI_GRAV_SOUTH: *x = cx, *y = H - h; break;
    case VKI_GRAV_EAST: *x = W - w, *y = cy; break;
    case VKI_GRAV_WEST: *x = 0, *y = cy; break;
    case VKI_GRAV_NORTHEAST: *x = W - w, *y = 0; break;
    case VKI_GRAV_NORTHWEST: *x = 0, *y = 0; break;
    case VKI_GRAV_SOUTHEAST: *x = W - w, *y = H - h; break;
    case VKI_GRAV_SOUTHWEST: *x = 0, *y = H - h; break;
    }
}
