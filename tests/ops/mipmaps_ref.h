/* The reference of mipmaps, in double (tests/lib/ref.h), from the README
 * ("Mipmaps"): level 0 is the input as it is; level k is the resize of level
 * k - 1 as it was written (quantized to the output format) to floor(w/2) x
 * floor(h/2), each side at least 1, by the resampling definition
 * (resize_ref.h: filter box by default, linear as asked, never the fast
 * path), down to 1 x 1 or `levels` levels. */
#ifndef VKI_MIPMAPS_REF_H
#define VKI_MIPMAPS_REF_H

#include "ref.h"
#include "resize_ref.h"

/* The level sizes of a w x h image: levels = 0 every level down to 1 x 1, else
 * at most that many; fills ws/hs (at most max) and returns the count. */
int ref_mipmap_sizes(int w, int h, int levels, int *ws, int *hs, int max);

/* mipmaps=levels=..:filter=..:linear=.. */
typedef struct ref_mipmaps_args {
    int levels;
    ref_filter filter;
    bool linear;
} ref_mipmaps_args;

/* Level 0 (the identity), the sizes, and level k from level k - 1 as written
 * (ref_step's outputs/next; ref_apply_levels and run_check_levels use them). */
ref_img ref_mipmaps_step(const ref_img *in, const ref_step *st);
int ref_mipmaps_outputs(int w, int h, const ref_step *st, int *ws, int *hs, int max);
ref_img ref_mipmaps_next(const ref_img *prev, int w, int h, const ref_step *st);
#define MIPMAPS(a) { .fn = ref_mipmaps_step, .arg = (a), .outputs = ref_mipmaps_outputs, .next = ref_mipmaps_next }

/* Hand-computed levels (box means, odd sizes, alpha, quantization between
 * levels); returns the number of failed checks (printed). */
int ref_mipmaps_self_check(void);

#endif
