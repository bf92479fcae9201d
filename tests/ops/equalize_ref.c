/* The reference of equalize (see equalize_ref.h). Written from the op's
 * specification; shares no code with the library. */
#include "equalize_ref.h"

#include <stddef.h>

void ref_equalize(const uint32_t *q, int w, int h, int c, uint32_t levels, uint32_t out_max, uint32_t *out)
{
    int cc = ref_colour(c);
    size_t np = (size_t)w * h;
    uint64_t n = np;
    for (int k = 0; k < c; k++) {
        int64_t lut[256];
        for (int b = 0; b < 256; b++)
            lut[b] = -1; /* keep */
        if (k < cc) {
            uint64_t hist[256] = { 0 };
            for (size_t p = 0; p < np; p++)
                hist[ref_bin(q[p * c + k], levels)]++;
            uint64_t cdf_min = 0;
            for (int b = 0; b < 256 && !cdf_min; b++)
                cdf_min = hist[b];
            uint64_t cdf = 0;
            for (int b = 0; b < 256; b++) {
                cdf += hist[b];
                if (n != cdf_min && hist[b])
                    lut[b] = (int64_t)((2 * (cdf - cdf_min) * 255 + (n - cdf_min)) / (2 * (n - cdf_min)));
            }
        }
        for (size_t p = 0; p < np; p++) {
            size_t i = p * c + k;
            int64_t v = lut[ref_bin(q[i], levels)];
            /* out_max / 255 and out_max / levels are exact (1 or 257) or the
             * product is divided exactly */
            out[i] = v >= 0 ? (uint32_t)((uint64_t)v * out_max / 255) : (uint32_t)((uint64_t)q[i] * out_max / levels);
        }
    }
}
