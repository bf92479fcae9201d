/* The references of the exact moves (flip, flop, transpose, transverse, rotate by
 * 90/180/270, orient, crop) as maps (tests/lib/remap_util.h), written from their
 * definitions, never from the kernel: each move says where an input pixel lands
 * (the kernel gathers: it asks where an output pixel comes from), the EXIF
 * orientations are read off the tag's definition (EXIF 2.32, tag 0x0112: where
 * the stored 0th row and 0th column are seen), and crop places its region as the
 * README says (ImageMagick's geometry and gravity, offsets pointing inward). */
#ifndef VKI_REMAP_REF_H
#define VKI_REMAP_REF_H

#include "remap_util.h"

typedef enum mv_kind {
    MV_IDENTITY,
    MV_FLIP,       /* mirror top to bottom */
    MV_FLOP,       /* mirror left to right */
    MV_TRANSPOSE,  /* mirror along the top-left to bottom-right diagonal */
    MV_TRANSVERSE, /* mirror along the top-right to bottom-left diagonal */
    MV_ROT90,      /* rotate 90 degrees clockwise */
    MV_ROT180,
    MV_ROT270,     /* 270 clockwise: 90 counter-clockwise */
    MV_NKINDS
} mv_kind;
extern const char *const mv_names[MV_NKINDS]; /* the ops: "copy", "flip", ..., "rotate=270" */

/* The move k of a w x h image. */
rm_map mv_move(mv_kind k, int w, int h);
/* The move that shows a stored w x h image with EXIF orientation o (1..8)
 * upright. */
rm_map mv_orientation(int o, int w, int h);
/* The orientation whose move undoes o's. */
int mv_orientation_inverse(int o);

/* Gravities in the crop op's order. */
enum { MV_CENTRE, MV_NORTH, MV_SOUTH, MV_EAST, MV_WEST, MV_NORTHEAST, MV_NORTHWEST, MV_SOUTHEAST, MV_SOUTHWEST };
extern const char *const mv_gravity_names[9];
/* The column of a region of w in W that gravity centres: (W - w) / 2 truncated
 * towards zero, as vkimg documents it (src/pipeline/geometry.h) and vips places
 * its centre crops. ImageMagick's GravityAdjustGeometry uses W/2 - w/2, one more
 * where W is even and w odd (and floor for regions larger than the image). */
int mv_centre(int W, int w);
/* crop's region of a W x H image: rw x rh placed by gravity, x to the right and y
 * down from there (towards the image's inside: left from an east edge, up from a
 * south edge), clipped to the image. 0 with the rectangle, or -1 when nothing is
 * left. */
int mv_crop_region(int W, int H, int rw, int rh, int gravity, int x, int y, int *x0, int *y0, int *cw, int *ch);
/* The crop of the rectangle at (x0, y0), cw x ch, of a w x h image. */
rm_map mv_crop(int w, int h, int x0, int y0, int cw, int ch);

/* Hand-computed cases; returns the number of failed checks (printed). */
int mv_self_check(void);

#endif
