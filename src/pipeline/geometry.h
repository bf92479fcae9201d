/* The text syntaxes of geometry and colour options (ImageMagick's geometry), as
 * parse/format pairs for VKI_OPT_TEXT options, and the sizes they resolve to for
 * an image. Pure functions: no Vulkan, no I/O. */
#ifndef VKI_PIPELINE_GEOMETRY_H
#define VKI_PIPELINE_GEOMETRY_H

#include "pipeline/op.h"

/* ---- resize geometry: WxH (fit inside, aspect kept), WxH^ (fill: cover the box),
 * WxH! (exactly), WxH> (only shrink), WxH< (only enlarge), W or Wx (width given),
 * xH (height given), N% or NxM% (percent of the size). x[]: */
enum { VKI_GEO_W, VKI_GEO_H, VKI_GEO_FLAGS };
enum {
    VKI_GEO_PERCENT = 1, /* W, H are percentages */
    VKI_GEO_EXACT = 2,   /* ! */
    VKI_GEO_FILL = 4,    /* ^ */
    VKI_GEO_SHRINK = 8,  /* > */
    VKI_GEO_ENLARGE = 16, /* < */
    VKI_GEO_NOX = 32      /* a bare number: no 'x' (a thumbnail's square box) */
};
#define VKI_GEO_SYNTAX "WxH[^!<>]|Wx|xH|N%"
int vki_geo_parse(const char *t, size_t n, double x[VKI_TEXT_VALUES], char *why, size_t wn);
void vki_geo_format(const double x[VKI_TEXT_VALUES], char *buf, size_t n);
/* The size a w x h image is resized to (every side at least 1; ImageMagick's
 * rounding: floor(scale * side + 0.5)). 0, or -1 with why when it is over the
 * side limit. */
int vki_geo_resolve(const double x[VKI_TEXT_VALUES], int w, int h, int *ow, int *oh, char *why, size_t wn);

/* ---- a region: WxH+X+Y (offsets may be negative: WxH-X-Y), or WxH (at 0,0); the
 * size in percentages of the image's sides (W%xH%, W% for both) as ImageMagick's
 * crop has it, the offsets in pixels */
enum { VKI_REG_W, VKI_REG_H, VKI_REG_X, VKI_REG_Y, VKI_REG_HAS_OFFSET, VKI_REG_PERCENT };
#define VKI_REG_SYNTAX "WxH[+X+Y]|W%[xH%][+X+Y]"
int vki_region_parse(const char *t, size_t n, double x[VKI_TEXT_VALUES], char *why, size_t wn);
void vki_region_format(const double x[VKI_TEXT_VALUES], char *buf, size_t n);
/* The region's size in pixels for a W x H image (percentages as ImageMagick rounds
 * them: floor(pct * side / 100 + 0.5), at least 1; capped at 2^26, past which the
 * clipped region is the same) */
void vki_region_size(const double x[VKI_TEXT_VALUES], int W, int H, long *w, long *h);

/* ---- a colour: a name (black, white, red, green, blue, yellow, cyan, magenta,
 * gray, transparent/none), or hex RRGGBB / RRGGBBAA / RGB / RGBA, after a '#' or
 * not. x[0..3] = R, G, B, A in 0..1 (sRGB values as stored). */
#define VKI_COLOUR_SYNTAX "NAME|[#]RRGGBB[AA]"
int vki_colour_parse(const char *t, size_t n, double x[VKI_TEXT_VALUES], char *why, size_t wn);
void vki_colour_format(const double x[VKI_TEXT_VALUES], char *buf, size_t n);
/* A colour's BT.601 luma, 0.299 R + 0.587 G + 0.114 B: the colour as a gray image's
 * (a background on gray: rotate, flatten) */
double vki_colour_luma(const double x[VKI_TEXT_VALUES]);

/* ---- gravity: where a region of w x h is placed in an image of W x H */
typedef enum vki_gravity {
    VKI_GRAV_CENTRE, VKI_GRAV_NORTH, VKI_GRAV_SOUTH, VKI_GRAV_EAST, VKI_GRAV_WEST,
    VKI_GRAV_NORTHEAST, VKI_GRAV_NORTHWEST, VKI_GRAV_SOUTHEAST, VKI_GRAV_SOUTHWEST,
} vki_gravity;
/* "centre", "north", ... in the order above (NULL-terminated, for ENUM options). */
extern const char *const vki_gravity_names[];
/* The top-left corner of a w x h region placed by gravity in W x H, as
 * ImageMagick's -gravity places a -crop: centred is W/2 - w/2 with both halves
 * rounded down (thumbnail's centre crop is vips's (W - w)/2 instead). */
void vki_gravity_place(vki_gravity g, int W, int H, int w, int h, int *x, int *y);

#endif
