/* The reference of normalize (see normalize_ref.h). Written from the op's
 * specification; shares no code with the library. */
#include "normalize_ref.h"
#include "ref_levels.h" /* ref_colour */

#include <math.h>
#include <stddef.h>

void ref_normalize(const double *v, int w, int h, int c, int link, double *out)
{
    int cc = ref_colour(c);
    size_t np = (size_t)w * h;
    double lo[4], hi[4];
    for (int k = 0; k < 4; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < cc; k++) {
            int d = link ? 0 : k;
            double x = v[p * c + k];
            if (x < lo[d])
                lo[d] = x;
            if (x > hi[d])
                hi[d] = x;
        }
    for (size_t p = 0; p < np; p++)
        for (int k = 0; k < c; k++) {
            size_t i = p * c + k;
            double x = v[i];
            if (k < cc) {
                int d = link ? 0 : k;
                if (hi[d] > lo[d])
                    x = (x - lo[d]) / (hi[d] - lo[d]);
            }
            out[i] = x;
        }
}
