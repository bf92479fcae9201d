/* The reference of boxblur (see boxblur_ref.h). Written from the op's
 * specification; shares no code with the library. */
#include "boxblur_ref.h"
#include "ref.h" /* ref_xmalloc */

#include <stdlib.h>

void ref_boxblur(const uint32_t *q, int w, int h, int c, int r, uint32_t *out)
{
    size_t ns = (size_t)w * h * c;
    uint64_t *sum = ref_xmalloc(ns * sizeof *sum);
    ref_box_sums(q, w, h, c, r, sum);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint64_t n = ref_box_count(x, y, w, h, r);
            for (int k = 0; k < c; k++) {
                size_t i = ((size_t)y * w + x) * c + k;
                out[i] = (uint32_t)((2 * sum[i] + n) / (2 * n));
            }
        }
    free(sum);
}
