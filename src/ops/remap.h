/* Exact pixel moves shared by flip, flop, transpose, transverse, rotate (by
 * multiples of 90 degrees), crop, thumbnail's crop and the EXIF orientations
 * (remap.c, shaders/ops/remap.comp). */
#ifndef VKI_OPS_REMAP_H
#define VKI_OPS_REMAP_H

#include "exec/exec.h"

/* Output pixel (x, y) is input pixel (m[0] x + m[1] y + m[2], m[3] x + m[4] y + m[5]);
 * the map must send the output onto the input (s->w x s->h). */
typedef struct vki_remap {
    int m[6];
} vki_remap;

/* The moves of the 8 EXIF orientations (1: identity, 2: flop, 3: rotate 180,
 * 4: flip, 5: transpose, 6: rotate 90 clockwise, 7: transverse, 8: rotate 270)
 * for an input of w x h; *ow, *oh receive the output size. */
vki_remap vki_orientation_remap(int orientation, int w, int h, int *ow, int *oh);
/* A crop of the input at (x, y). */
vki_remap vki_crop_remap(int x, int y);

int vki_record_remap(vki_rec *r, const vki_step *s, const vki_remap *m);

/* Output size of an orientation: w x h, swapped for 5..8. */
int vki_orientation_size(int orientation, int w, int h, int *ow, int *oh, char *why, size_t n);

#endif
