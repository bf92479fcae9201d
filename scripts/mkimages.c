/* vkimg-mkimages: procedural, photo-like sample images, made deterministically (no
 * downloads) so that the samples in images/ can be regenerated bit for bit.
 *
 *   vkimg-mkimages OUTDIR                      the committed samples:
 *       landscape.png   640x400 RGB     sky gradient, value-noise clouds, sun, ridged
 *                                       mountains, textured hills, a house, a fence,
 *                                       a sign with text-like glyphs, a rippled lake
 *       portrait.jpg    400x600 RGB     dusk sky with stars, a striped lighthouse with a
 *                                       beam, rocks, sea, a caption band (JPEG)
 *       logo-rgba.png   256x256 RGBA    badge with a ring, a star, a soft shadow, a
 *                                       translucent band and cut-outs; fully transparent
 *                                       pixels carry magenta colour, so an op that
 *                                       ignores alpha (no premultiplication) shows it
 *       gray16.png      320x240 16-bit  smooth fields using all 16 bits, sharp shapes,
 *                                       1-pixel gratings, a full 0..65535 ramp
 *   vkimg-mkimages --photo W H OUT.png|.jpg [--seed N]
 *       a large photo-like landscape (with film grain) for benchmarks
 *   vkimg-mkimages --bomb OUT.png [W H]
 *       a tiny PNG whose IHDR claims W x H (default 100000x100000) 8-bit RGB, with
 *       valid CRCs: a decompression-bomb header for the pixel-limit tests
 *
 * Every pixel is a pure function of (x, y, size, seed), rendered on all cores; the
 * bytes do not depend on the thread count. */
#include "vkimg/vkimg.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- noise */

static inline uint32_t hash3(uint32_t x, uint32_t y, uint32_t z)
{
    uint32_t h = x * 0x8da6b343u ^ y * 0xd8163841u ^ z * 0xcb1ab31fu;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return h;
}

static inline float u01(uint32_t h) /* [0, 1) */
{
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}

/* Lattice values from a fixed permutation table (period 256 cells in each direction,
 * far more than any scene shows at one octave); the seed shifts the lattice. */
static uint8_t PERM[512];
static float VAL[256];

static void noise_init(void)
{
    for (int i = 0; i < 256; i++) {
        PERM[i] = (uint8_t)i;
        VAL[i] = u01(hash3((uint32_t)i, 7, 99));
    }
    for (int i = 255; i > 0; i--) { /* Fisher-Yates with a fixed hash */
        int j = (int)(hash3((uint32_t)i, 3, 5) % (uint32_t)(i + 1));
        uint8_t t = PERM[i];
        PERM[i] = PERM[j];
        PERM[j] = t;
    }
    for (int i = 0; i < 256; i++)
        PERM[256 + i] = PERM[i];
}

static inline float lattice(int x, int y, uint32_t seed)
{
    return VAL[PERM[PERM[(unsigned)(x + (int)seed) & 255u] + ((unsigned)(y + (int)(seed >> 8)) & 255u)]];
}

/* Value noise in [0, 1): smoothstep-interpolated random lattice values. */
static float vnoise(float x, float y, uint32_t seed)
{
    float fx = floorf(x), fy = floorf(y);
    int ix = (int)fx, iy = (int)fy;
    float tx = x - fx, ty = y - fy;
    tx = tx * tx * (3.0f - 2.0f * tx);
    ty = ty * ty * (3.0f - 2.0f * ty);
    float a = lattice(ix, iy, seed), b = lattice(ix + 1, iy, seed);
    float c = lattice(ix, iy + 1, seed), d = lattice(ix + 1, iy + 1, seed);
    float top = a + (b - a) * tx, bot = c + (d - c) * tx;
    return top + (bot - top) * ty;
}

/* Fractal sum of `oct` octaves, normalized to [0, 1). */
static float fbm(float x, float y, int oct, uint32_t seed)
{
    float s = 0, amp = 0.5f, norm = 0;
    for (int i = 0; i < oct; i++) {
        s += amp * vnoise(x, y, seed + (uint32_t)i * 101u);
        norm += amp;
        x = x * 2.03f + 17.17f;
        y = y * 2.03f + 3.71f;
        amp *= 0.5f;
    }
    return s / norm;
}

static inline float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static inline float smoothstep(float e0, float e1, float x)
{
    float t = clampf((x - e0) / (e1 - e0), 0.0f, 1.0f);
    return t * t * (3.0f - 2.0f * t);
}

typedef struct rgb {
    float r, g, b;
} rgb;

static inline rgb RGB(float r, float g, float b)
{
    rgb c = { r, g, b };
    return c;
}

static inline rgb mixc(rgb a, rgb b, float t)
{
    return RGB(a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t);
}

static inline rgb scalec(rgb a, float k)
{
    return RGB(a.r * k, a.g * k, a.b * k);
}

static inline rgb addc(rgb a, rgb b)
{
    return RGB(a.r + b.r, a.g + b.g, a.b + b.b);
}

/* ---------------------------------------------------------------- shapes */

/* Signed distances (negative inside). */
static inline float sd_box(float x, float y, float cx, float cy, float hx, float hy)
{
    float dx = fabsf(x - cx) - hx, dy = fabsf(y - cy) - hy;
    float ox = dx > 0 ? dx : 0, oy = dy > 0 ? dy : 0;
    float in = dx > dy ? dx : dy;
    return sqrtf(ox * ox + oy * oy) + (in < 0 ? in : 0);
}

static inline float sd_round_box(float x, float y, float cx, float cy, float hx, float hy, float r)
{
    return sd_box(x, y, cx, cy, hx - r, hy - r) - r;
}

static inline float sd_circle(float x, float y, float cx, float cy, float r)
{
    return sqrtf((x - cx) * (x - cx) + (y - cy) * (y - cy)) - r;
}

/* Convex polygon: the largest signed distance to its edges' lines (exact near the
 * edges, which is all anti-aliasing needs). pts: n (x, y) pairs, either winding. */
static float sd_convex(float x, float y, const float *pts, int n)
{
    float area = 0;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        area += pts[2 * i] * pts[2 * j + 1] - pts[2 * j] * pts[2 * i + 1];
    }
    float sgn = area > 0 ? 1.0f : -1.0f, d = -1e30f;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        float ex = pts[2 * j] - pts[2 * i], ey = pts[2 * j + 1] - pts[2 * i + 1];
        float len = sqrtf(ex * ex + ey * ey);
        /* outward normal of a counter-clockwise (area > 0, y down: clockwise on screen) edge */
        float nx = ey / len * sgn, ny = -ex / len * sgn;
        float di = (x - pts[2 * i]) * nx + (y - pts[2 * i + 1]) * ny;
        if (di > d)
            d = di;
    }
    return d;
}

/* Coverage of a pixel by a shape from its signed distance in pixels. */
static inline float cover(float d_px)
{
    return clampf(0.5f - d_px, 0.0f, 1.0f);
}

/* Even-odd point-in-polygon (for the non-convex star, supersampled). */
static int inside_poly(float x, float y, const float *pts, int n)
{
    int in = 0;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        float yi = pts[2 * i + 1], yj = pts[2 * j + 1];
        if ((yi > y) != (yj > y)) {
            float xc = pts[2 * i] + (y - yi) / (yj - yi) * (pts[2 * j] - pts[2 * i]);
            if (x < xc)
                in = !in;
        }
    }
    return in;
}

/* Text-like detail: rows of blocky pseudo-glyphs (4x6 ink cells in 5x8 cells, made of
 * random strokes) grouped into words. (gx, gy) in glyph pixels from the text origin.
 * Returns 1 for ink. */
static int text_ink(int gx, int gy, uint32_t seed)
{
    if (gx < 0 || gy < 0)
        return 0;
    int cell = gx / 5, cx = gx % 5, line = gy / 8, cy = gy % 8;
    if (cx == 4 || cy >= 6)
        return 0;
    uint32_t h = hash3((uint32_t)cell, (uint32_t)line, seed);
    if (h % 6 == 0 || cell == 0) /* spaces between words; each line starts with one */
        return 0;
    uint32_t bits = h >> 8;
    if (__builtin_popcount(bits & 0x7f) < 2)
        bits |= 0x0c;
    int on = 0;
    on |= (bits & 1) && cy == 0;                       /* top bar */
    on |= (bits & 2) && cy == 5;                       /* bottom bar */
    on |= (bits & 4) && cy == 2;                       /* middle bar */
    on |= (bits & 8) && cx == 0;                       /* left stem */
    on |= (bits & 16) && cx == 3;                      /* right stem */
    on |= (bits & 32) && cx == (cy * 4) / 6;           /* diagonal */
    on |= (bits & 64) && cx == 1 && cy >= 2;           /* short stem */
    on |= (bits & 128) && cy == 0 && cx == 1 && (h & 1); /* dot */
    return on;
}

/* ---------------------------------------------------------------- scenes */

typedef struct scene {
    int w, h;
    float inv;    /* scene units per pixel: the scene is 1 unit high */
    float aspect; /* w / h */
    int gs;       /* pixels per glyph pixel for pixel-scale detail */
    uint32_t seed;
    int grain;    /* film grain (large photos) */
    float *col;   /* per-column values of 1-D functions (NCOL per column), or NULL */
} scene;

enum { NCOL = 4 };

typedef void (*pixel_fn)(const scene *s, int x, int y, float out[4]);

static rgb sky_at(float t, rgb top, rgb hz)
{
    t = clampf(t, 0.0f, 1.0f);
    return mixc(top, hz, t * sqrtf(t));
}

/* The landscape's ridge lines depend on x only: computed once per column. */
static void landscape_cols(scene *s, float *col)
{
    const float P = (float)s->h;
    const uint32_t sd = s->seed * 7919u;
    const float ph = 6.2831853f * u01(hash3(sd, 1, 2));
    for (int x = 0; x < s->w; x++) {
        const float X = ((float)x + 0.5f) * s->inv;
        float *c = col + (size_t)x * NCOL;
        float r1 = 1.0f - fabsf(2.0f * fbm(X * 5.0f + 3.0f, 0.5f, 5, sd + 23) - 1.0f);
        c[0] = (0.47f - 0.08f * sinf(X * 4.0f + ph) - 0.04f * sinf(X * 9.3f + 2.0f * ph) - 0.07f * r1) * P;
        c[1] = (0.575f - 0.05f * fbm(X * 3.0f + 7.0f, 1.5f, 3, sd + 41)) * P;
        c[2] = (0.63f + 0.012f * sinf(X * 5.0f)) * P;
        c[3] = (0.775f + 0.01f * sinf(X * 3.0f + 1.0f)) * P;
    }
}

static const float L_HZ = 0.58f;
static const rgb L_TOP = { 0.16f, 0.30f, 0.62f }, L_HZC = { 0.96f, 0.74f, 0.52f };

static rgb l_sky(const scene *s, float X, float Y, uint32_t sd)
{
    const float A = s->aspect, P = (float)s->h;
    rgb c = sky_at(Y / L_HZ, L_TOP, L_HZC);
    float sx = 0.70f * A, sy = 0.34f;
    float ds = sqrtf((X - sx) * (X - sx) + (Y - sy) * (Y - sy));
    if (ds < 0.6f)
        c = addc(c, scalec(RGB(1.0f, 0.72f, 0.42f), 0.35f * expf(-ds * 9.0f)));
    c = mixc(c, RGB(1.0f, 0.96f, 0.84f), cover((ds - 0.035f) * P));
    if (Y < L_HZ) {
        float cl = fbm(X * 2.2f, Y * 6.5f, 5, sd + 11);
        float dens = smoothstep(0.50f, 0.74f, cl) * smoothstep(L_HZ, 0.25f, Y);
        rgb cc = mixc(RGB(1.0f, 0.97f, 0.93f), RGB(0.60f, 0.60f, 0.70f), smoothstep(0.55f, 0.85f, cl));
        c = mixc(c, cc, dens * 0.92f);
    }
    return c;
}

static rgb l_mountain(float X, float Y, float y1, uint32_t sd)
{
    float tex = 0.86f + 0.28f * fbm(X * 14.0f, Y * 14.0f, 3, sd + 31);
    rgb mc = scalec(mixc(RGB(0.40f, 0.47f, 0.62f), RGB(0.55f, 0.60f, 0.70f), smoothstep(y1, L_HZ, Y)), tex);
    float snow = smoothstep(0.42f, 0.36f, y1) * smoothstep(0.43f, 0.39f, Y);
    if (snow > 0)
        snow *= smoothstep(0.40f, 0.55f, fbm(X * 30.0f, Y * 30.0f, 2, sd + 37));
    return mixc(mc, RGB(0.93f, 0.94f, 0.98f), snow);
}

static rgb l_hills(float X, float Y, uint32_t sd)
{
    return scalec(RGB(0.17f, 0.31f, 0.15f), 0.70f + 0.60f * fbm(X * 45.0f, Y * 45.0f, 3, sd + 43));
}

static rgb l_meadow(float X, float Y, float y3, uint32_t sd)
{
    float tex = 0.85f + 0.30f * fbm(X * 25.0f, Y * 70.0f, 3, sd + 47);
    return scalec(mixc(RGB(0.52f, 0.62f, 0.25f), RGB(0.28f, 0.44f, 0.14f), smoothstep(y3, 0.80f, Y)), tex);
}

/* the sky mirrored, with horizontal ripples */
static rgb l_water(float X, float Y, float y4, float P, uint32_t sd)
{
    float rip = sinf(Y * P * 0.9f + 6.0f * fbm(X * 6.0f, Y * 30.0f, 2, sd + 53));
    float ry = L_HZ - 0.05f - (Y - y4) * 3.0f + 0.03f * rip;
    rgb wc = addc(scalec(sky_at(ry / L_HZ, L_TOP, L_HZC), 0.55f), RGB(0.02f, 0.07f, 0.13f));
    return scalec(wc, 0.92f + 0.08f * rip);
}

static void px_landscape(const scene *s, int x, int y, float o[4])
{
    const float A = s->aspect, P = (float)s->h; /* pixels per unit */
    const float X = ((float)x + 0.5f) * s->inv, Y = ((float)y + 0.5f) * s->inv;
    const uint32_t sd = s->seed * 7919u;
    const float *col = s->col + (size_t)x * NCOL;
    const float fy = (float)y + 0.5f;

    /* layers back to front: sky, mountains, hills, meadow, water; each covers the
     * pixel by (fy - edge + 0.5) clamped, and layers under a fully covering one are
     * not computed */
    float m[5];
    m[0] = 1.0f;
    for (int i = 0; i < 4; i++)
        m[i + 1] = clampf(fy - col[i] + 0.5f, 0.0f, 1.0f);
    int first = 4;
    while (m[first] < 1.0f)
        first--;
    rgb c = RGB(0, 0, 0);
    for (int i = first; i < 5; i++) {
        if (m[i] <= 0)
            continue;
        rgb l;
        switch (i) {
        case 0: l = l_sky(s, X, Y, sd); break;
        case 1: l = l_mountain(X, Y, col[0] / P, sd); break;
        case 2: l = l_hills(X, Y, sd); break;
        case 3: l = l_meadow(X, Y, col[2] / P, sd); break;
        default: l = l_water(X, Y, col[3] / P, P, sd); break;
        }
        c = i == first ? l : mixc(c, l, m[i]);
    }

    /* house: walls, roof, windows, door */
    const float hx = 0.20f * A, hy = 0.665f, hw = 0.07f, hh = 0.04f;
    if (fabsf(X - hx) < hw + 0.02f && Y > hy - hh - 0.07f && Y < hy + hh + 0.01f) {
        float roof[6] = { hx - hw - 0.012f, hy - hh, hx + hw + 0.012f, hy - hh, hx, hy - hh - 0.06f };
        float dw = sd_box(X, Y, hx, hy, hw, hh);
        c = mixc(c, RGB(0.86f, 0.80f, 0.68f), cover(dw * P));
        c = mixc(c, RGB(0.30f, 0.24f, 0.20f), cover((fabsf(dw) - 0.0015f) * P)); /* outline */
        c = mixc(c, RGB(0.62f, 0.16f, 0.10f), cover(sd_convex(X, Y, roof, 3) * P));
        for (int i = 0; i < 2; i++) {
            float wx = hx + (i ? 0.04f : -0.04f);
            float win = cover(sd_box(X, Y, wx, hy - 0.01f, 0.012f, 0.010f) * P);
            c = mixc(c, RGB(0.12f, 0.18f, 0.30f), win);
            c = mixc(c, RGB(0.95f, 0.95f, 0.90f), cover((fabsf(X - wx) - 0.0012f) * P) * win);
        }
        c = mixc(c, RGB(0.35f, 0.20f, 0.10f), cover(sd_box(X, Y, hx, hy + 0.02f, 0.011f, 0.02f) * P));
    }

    /* fence: posts and rails at pixel scale */
    if (X < 0.45f * A && Y > 0.705f && Y < 0.745f) {
        int px = x / s->gs;
        float post = (px % 6) < 2 ? 1.0f : 0.0f;
        float rail = (fabsf(Y - 0.715f) < 0.0025f || fabsf(Y - 0.732f) < 0.0025f) ? 1.0f : 0.0f;
        float f = post > rail ? post : rail;
        c = mixc(c, RGB(0.90f, 0.88f, 0.82f), f * smoothstep(0.45f * A, 0.44f * A, X));
    }

    /* sign with text */
    const float bx = 0.66f * A, by = 0.655f, bw = 0.12f * A < 0.21f ? 0.12f * A : 0.21f, bh = 0.045f;
    if (fabsf(X - bx) < bw + 0.01f && Y > by - bh - 0.01f && Y < by + 0.12f) {
        c = mixc(c, RGB(0.28f, 0.18f, 0.10f), cover(sd_box(X, Y, bx, by + 0.07f, 0.004f, 0.04f) * P));
        float db = sd_box(X, Y, bx, by, bw, bh);
        c = mixc(c, RGB(0.95f, 0.94f, 0.88f), cover(db * P));
        c = mixc(c, RGB(0.10f, 0.10f, 0.12f), cover((fabsf(db + 0.003f) - 0.002f) * P));
        float ox = (bx - bw + 0.012f) * P, oy = (by - bh + 0.014f) * P;
        if (X < bx + bw - 0.012f && Y < by + bh - 0.008f && (float)x >= ox && (float)y >= oy) {
            int gx = (int)(((float)x - ox) / (float)s->gs), gy = (int)(((float)y - oy) / (float)s->gs);
            if (text_ink(gx, gy, sd + 59))
                c = RGB(0.08f, 0.10f, 0.25f);
        }
    }

    /* vignette, grain */
    float vx = X / A - 0.5f, vy = Y - 0.5f;
    c = scalec(c, 1.0f - 0.35f * (vx * vx + vy * vy));
    if (s->grain) {
        float g = (u01(hash3((uint32_t)x, (uint32_t)y, sd + 97)) - 0.5f) * 0.03f;
        c = addc(c, RGB(g, g, g));
    }
    o[0] = c.r, o[1] = c.g, o[2] = c.b, o[3] = 1.0f;
}

static void px_portrait(const scene *s, int x, int y, float o[4])
{
    const float A = s->aspect, P = (float)s->h;
    const float X = ((float)x + 0.5f) * s->inv, Y = ((float)y + 0.5f) * s->inv;
    const uint32_t sd = s->seed * 104729u + 5;
    const float hz = 0.64f;

    /* dusk sky, stars, clouds */
    rgb c = mixc(RGB(0.08f, 0.07f, 0.22f), RGB(0.55f, 0.28f, 0.45f), smoothstep(0.0f, 0.45f, Y));
    c = mixc(c, RGB(0.98f, 0.62f, 0.38f), smoothstep(0.40f, hz, Y));
    uint32_t hs = hash3((uint32_t)x, (uint32_t)y, sd + 1);
    if (Y < 0.35f && hs % 211u == 0)
        c = mixc(c, RGB(1.0f, 1.0f, 0.95f), 0.5f + 0.5f * u01(hs >> 3));
    float cl = fbm(X * 3.0f, Y * 12.0f, 5, sd + 3);
    float dens = smoothstep(0.52f, 0.75f, cl) * smoothstep(0.15f, 0.35f, Y) * smoothstep(hz, 0.50f, Y);
    c = mixc(c, mixc(RGB(0.95f, 0.55f, 0.45f), RGB(0.35f, 0.20f, 0.35f), smoothstep(0.55f, 0.9f, cl)), dens);

    /* sea */
    if (Y > hz) {
        float wv = fbm(X * 10.0f, Y * 60.0f, 3, sd + 7);
        rgb sea = mixc(RGB(0.45f, 0.30f, 0.40f), RGB(0.05f, 0.12f, 0.25f), smoothstep(hz, 1.0f, Y));
        c = scalec(sea, 0.75f + 0.5f * wv);
        float sp = smoothstep(0.68f, 0.80f, wv) * smoothstep(0.30f, 0.0f, fabsf(X - 0.62f * A));
        c = mixc(c, RGB(1.0f, 0.75f, 0.5f), sp);
    }
    c = mixc(c, RGB(0.9f, 0.6f, 0.45f), cover((fabsf(Y - hz) - 0.001f) * P) * 0.6f);

    /* light beam from the lantern */
    float lx = 0.32f * A, ly = 0.255f;
    if (X > lx) {
        float ang = fabsf(atan2f(Y - ly, X - lx) + 0.12f);
        float beam = smoothstep(0.10f, 0.02f, ang) * expf(-(X - lx) * 1.2f);
        c = addc(c, scalec(RGB(1.0f, 0.92f, 0.6f), 0.55f * beam));
    }

    /* rocks */
    float yr = 0.76f - 0.10f * smoothstep(0.75f * A, 0.05f * A, X) - 0.05f * fbm(X * 6.0f, 0.3f, 4, sd + 11);
    float m = clampf((Y - yr) * P + 0.5f, 0.0f, 1.0f);
    if (m > 0) {
        float tex = fbm(X * 20.0f, Y * 20.0f, 4, sd + 13);
        rgb rc = scalec(mixc(RGB(0.32f, 0.26f, 0.24f), RGB(0.12f, 0.10f, 0.11f), smoothstep(yr, 1.0f, Y)),
                        0.6f + 0.8f * tex);
        c = mixc(c, rc, m);
    }

    /* lighthouse: tapered tower with red/white bands and cylinder shading */
    {
        float t0 = 0.30f, t1 = yr < 0.70f ? 0.70f : 0.70f, cx = 0.32f * A;
        float half = 0.035f + 0.025f * (Y - t0) / (t1 - t0);
        float tower[8] = { cx - 0.035f, t0, cx + 0.035f, t0, cx + 0.06f, t1, cx - 0.06f, t1 };
        float cov = cover(sd_convex(X, Y, tower, 4) * P);
        if (cov > 0) {
            float u = clampf((X - cx) / half, -1.0f, 1.0f);
            float shade = 0.45f + 0.55f * sqrtf(1.0f - u * u) * (0.8f + 0.2f * (-u));
            int band = (int)floorf((Y - t0) / 0.05f) & 1;
            rgb tc = band ? RGB(0.78f, 0.12f, 0.10f) : RGB(0.95f, 0.93f, 0.90f);
            c = mixc(c, scalec(tc, shade), cov);
        }
        /* gallery, lantern, cap */
        c = mixc(c, RGB(0.10f, 0.10f, 0.12f), cover(sd_box(X, Y, cx, t0 - 0.004f, 0.048f, 0.005f) * P));
        c = mixc(c, RGB(1.0f, 0.90f, 0.55f), cover(sd_box(X, Y, cx, t0 - 0.03f, 0.026f, 0.022f) * P));
        for (int i = -1; i <= 1; i++)
            c = mixc(c, RGB(0.1f, 0.1f, 0.12f), cover((fabsf(X - cx - (float)i * 0.013f) - 0.002f) * P) *
                                                    cover(sd_box(X, Y, cx, t0 - 0.03f, 0.026f, 0.022f) * P));
        float cap[6] = { cx - 0.035f, t0 - 0.052f, cx + 0.035f, t0 - 0.052f, cx, t0 - 0.085f };
        c = mixc(c, RGB(0.12f, 0.10f, 0.10f), cover(sd_convex(X, Y, cap, 3) * P));
        /* door */
        c = mixc(c, RGB(0.15f, 0.10f, 0.08f), cover(sd_round_box(X, Y, cx, t1 - 0.025f, 0.014f, 0.025f, 0.01f) * P));
    }

    /* caption band with light text */
    if (Y > 0.90f && Y < 0.975f) {
        c = mixc(c, RGB(0.05f, 0.05f, 0.07f), 0.7f);
        float ox = 0.04f * P, oy = 0.915f * P;
        if (X < 0.9f * A && (float)x >= ox && (float)y >= oy && (float)y < oy + (float)(22 * s->gs)) {
            int gx = (int)(((float)x - ox) / (float)s->gs), gy = (int)(((float)y - oy) / (float)s->gs);
            if (text_ink(gx, gy, sd + 17))
                c = RGB(0.95f, 0.92f, 0.80f);
        }
    }
    float vx = X / A - 0.5f, vy = Y - 0.5f;
    c = scalec(c, 1.0f - 0.4f * (vx * vx + vy * vy));
    o[0] = c.r, o[1] = c.g, o[2] = c.b, o[3] = 1.0f;
}

/* Premultiplied colour + alpha. */
typedef struct pm {
    float r, g, b, a;
} pm;

static inline pm over(pm dst, rgb c, float a)
{
    pm out = { c.r * a + dst.r * (1 - a), c.g * a + dst.g * (1 - a), c.b * a + dst.b * (1 - a), a + dst.a * (1 - a) };
    return out;
}

static void star_points(float cx, float cy, float r0, float r1, float *pts)
{
    for (int i = 0; i < 10; i++) {
        float ang = -1.5707963f + (float)i * 0.62831853f;
        float r = (i & 1) ? r1 : r0;
        pts[2 * i] = cx + r * cosf(ang);
        pts[2 * i + 1] = cy + r * sinf(ang);
    }
}

static void px_logo(const scene *s, int x, int y, float o[4])
{
    /* in pixels of a 256x256 design, scaled to the image */
    const float k = 256.0f / (float)s->h, K = 1.0f / k; /* design units per pixel, pixels per unit */
    const float X = ((float)x + 0.5f) * k, Y = ((float)y + 0.5f) * k;
    pm p = { 0, 0, 0, 0 };

    /* soft drop shadow */
    float dsh = sd_round_box(X, Y, 134, 136, 100, 100, 28);
    p = over(p, RGB(0, 0, 0), 0.45f * smoothstep(10.0f, -6.0f, dsh));

    /* badge with a vertical gradient and a lighter border, a hole in a corner */
    float db = sd_round_box(X, Y, 128, 128, 100, 100, 28);
    float hole = sd_circle(X, Y, 204, 52, 12);
    float bc = cover(db * K) * (1.0f - cover(hole * K));
    rgb fill = mixc(RGB(0.10f, 0.62f, 0.66f), RGB(0.12f, 0.22f, 0.55f), smoothstep(28, 228, Y));
    p = over(p, fill, bc);
    p = over(p, RGB(0.55f, 0.88f, 0.92f), cover((fabsf(db + 3.0f) - 2.0f) * K) * (1.0f - cover(hole * K)));
    /* shadow under the hole is cut out too: nothing shows through */
    if (hole < 1.0f) {
        float a = cover(hole * K);
        p.r *= 1 - a, p.g *= 1 - a, p.b *= 1 - a, p.a *= 1 - a;
    }

    /* ring */
    float dr = fabsf(sd_circle(X, Y, 128, 112, 62)) - 5.0f;
    p = over(p, RGB(0.97f, 0.97f, 0.95f), cover(dr * K));

    /* star: supersampled 4x4 */
    float st[20];
    star_points(128, 114, 50, 20, st);
    int n = 0;
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++)
            n += inside_poly(((float)x + ((float)i + 0.5f) / 4) * k, ((float)y + ((float)j + 0.5f) / 4) * k, st, 10);
    p = over(p, mixc(RGB(1.0f, 0.85f, 0.20f), RGB(0.95f, 0.55f, 0.10f), smoothstep(70, 160, Y)), (float)n / 16.0f);

    /* translucent band with text; a fully transparent slot cut through it */
    if (Y > 186 && Y < 214 && X > 36 && X < 220) {
        float bandc = cover(sd_box(X, Y, 128, 200, 90, 12) * K);
        p.r *= 1 - 0.55f * bandc, p.g *= 1 - 0.55f * bandc, p.b *= 1 - 0.55f * bandc, p.a *= 1 - 0.55f * bandc;
        p = over(p, RGB(1, 1, 1), 0.25f * bandc);
        int gx = (int)((X - 46) / 2.0f), gy = (int)((Y - 193) / 2.0f);
        if (X >= 46 && Y >= 193 && Y < 205 && X < 210 && text_ink(gx, gy, 4242))
            p = over(p, RGB(1.0f, 1.0f, 1.0f), 0.95f);
    }
    float slot = cover(sd_box(X, Y, 128, 236, 40, 3) * K);
    p.r *= 1 - slot, p.g *= 1 - slot, p.b *= 1 - slot, p.a *= 1 - slot;

    if (p.a <= 0.5f / 255.0f) {
        /* fully transparent: a loud colour that only an alpha-ignoring op would show */
        o[0] = 1.0f, o[1] = 0.0f, o[2] = 1.0f, o[3] = 0.0f;
    } else {
        o[0] = p.r / p.a, o[1] = p.g / p.a, o[2] = p.b / p.a, o[3] = p.a;
    }
}

static void px_gray16(const scene *s, int x, int y, float o[4])
{
    const float A = s->aspect, P = (float)s->h;
    const float X = ((float)x + 0.5f) * s->inv, Y = ((float)y + 0.5f) * s->inv;
    /* bottom strip: an exact ramp over all 65536 levels */
    if (y >= s->h - s->h / 12) {
        o[0] = (float)x / (float)(s->w - 1);
        return;
    }
    float r = sqrtf((X - 0.45f * A) * (X - 0.45f * A) + (Y - 0.45f) * (Y - 0.45f));
    float v = 0.85f - 0.7f * r;
    v = v * 0.6f + 0.4f * fbm(X * 3.0f, Y * 3.0f, 6, 777);
    /* sharp disc and square */
    v += 0.35f * cover(sd_circle(X, Y, 0.30f * A, 0.35f, 0.12f) * P);
    v = v + (0.06f - v) * cover(sd_box(X, Y, 0.72f * A, 0.30f, 0.10f, 0.08f) * P);
    /* 1-pixel gratings, horizontal and vertical */
    if (X > 0.60f * A && X < 0.92f * A && Y > 0.55f && Y < 0.72f)
        v = (x & 1) ? 0.92f : 0.10f;
    if (X > 0.60f * A && X < 0.92f * A && Y > 0.74f && Y < 0.88f)
        v = (y & 1) ? 0.80f : 0.20f;
    o[0] = clampf(v, 0.0f, 1.0f);
}

/* ---------------------------------------------------------------- rendering */

typedef struct render_job {
    const scene *s;
    pixel_fn fn;
    vkimg_image *im;
    int y0, y1;
} render_job;

static void *render_rows(void *arg)
{
    const render_job *j = arg;
    const vkimg_image *im = j->im;
    for (int y = j->y0; y < j->y1; y++)
        for (int x = 0; x < im->w; x++) {
            float v[4] = { 0, 0, 0, 1 };
            j->fn(j->s, x, y, v);
            size_t at = ((size_t)y * (size_t)im->w + (size_t)x) * (size_t)im->c;
            for (int c = 0; c < im->c; c++) {
                float t = clampf(v[c], 0.0f, 1.0f);
                if (im->fmt == VKIMG_U16)
                    ((uint16_t *)im->data)[at + (size_t)c] = (uint16_t)(t * 65535.0f + 0.5f);
                else
                    ((uint8_t *)im->data)[at + (size_t)c] = (uint8_t)(t * 255.0f + 0.5f);
            }
        }
    return NULL;
}

static int render(const scene *s, pixel_fn fn, vkimg_image *im)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = ncpu < 1 ? 1 : ncpu > 64 ? 64 : (int)ncpu;
    if (nt > im->h)
        nt = im->h;
    render_job jobs[64];
    pthread_t tid[64];
    int started = 0;
    /* interleaved bands of 16 rows would balance better; contiguous bands of
     * rows are simple and the scenes are roughly uniform in cost per row band */
    for (int i = 0; i < nt; i++) {
        jobs[i] = (render_job){ s, fn, im, (int)((long long)im->h * i / nt), (int)((long long)im->h * (i + 1) / nt) };
        if (i > 0) {
            if (pthread_create(&tid[i], NULL, render_rows, &jobs[i]))
                break;
            started = i;
        }
    }
    render_rows(&jobs[0]);
    for (int i = 1; i <= started; i++)
        pthread_join(tid[i], NULL);
    /* bands whose thread failed to start: render them here */
    for (int i = started + 1; i < nt; i++)
        render_rows(&jobs[i]);
    return 0;
}

typedef void (*prep_fn)(scene *s, float *col);

static int make(const char *path, pixel_fn fn, prep_fn prep, int w, int h, int c, vkimg_fmt fmt, uint32_t seed,
                int grain, const vkimg_save_opts *so)
{
    vkimg_err e = { 0 };
    vkimg_image im;
    if (vkimg_image_alloc(&im, w, h, c, fmt, &e)) {
        fprintf(stderr, "vkimg-mkimages: %s\n", e.msg);
        return 1;
    }
    scene s = { w, h, 1.0f / (float)h, (float)w / (float)h, h / 400 > 1 ? h / 400 : 1, seed, grain, NULL };
    if (prep) {
        if (!(s.col = malloc((size_t)w * NCOL * sizeof *s.col))) {
            vkimg_image_free(&im);
            fprintf(stderr, "vkimg-mkimages: out of memory\n");
            return 1;
        }
        prep(&s, s.col);
    }
    render(&s, fn, &im);
    free(s.col);
    int rc = vkimg_save(path, &im, so, &e);
    vkimg_image_free(&im);
    if (rc) {
        fprintf(stderr, "vkimg-mkimages: %s\n", e.msg);
        return 1;
    }
    printf("%s: %dx%d, %d channel%s, %s\n", path, w, h, c, c > 1 ? "s" : "", vkimg_fmt_name(fmt));
    return 0;
}

/* ---------------------------------------------------------------- bomb */

static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return c ^ 0xffffffffu;
}

static size_t put_chunk(unsigned char *out, const char *type, const unsigned char *data, uint32_t len)
{
    out[0] = (unsigned char)(len >> 24), out[1] = (unsigned char)(len >> 16);
    out[2] = (unsigned char)(len >> 8), out[3] = (unsigned char)len;
    memcpy(out + 4, type, 4);
    if (len)
        memcpy(out + 8, data, len);
    uint32_t c = crc32_of(out + 4, 4 + (size_t)len);
    out[8 + len] = (unsigned char)(c >> 24), out[9 + len] = (unsigned char)(c >> 16);
    out[10 + len] = (unsigned char)(c >> 8), out[11 + len] = (unsigned char)c;
    return 12 + (size_t)len;
}

static int write_bomb(const char *path, uint32_t w, uint32_t h)
{
    unsigned char buf[128];
    size_t n = 0;
    memcpy(buf, "\x89PNG\r\n\x1a\n", 8);
    n = 8;
    unsigned char ihdr[13] = { (unsigned char)(w >> 24), (unsigned char)(w >> 16), (unsigned char)(w >> 8),
                               (unsigned char)w,         (unsigned char)(h >> 24), (unsigned char)(h >> 16),
                               (unsigned char)(h >> 8),  (unsigned char)h,         8, 2, 0, 0, 0 };
    n += put_chunk(buf + n, "IHDR", ihdr, 13);
    /* a zlib stream holding one empty stored block: a decoder that got past the
     * size check would run out of data, not explode */
    static const unsigned char idat[] = { 0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01 };
    n += put_chunk(buf + n, "IDAT", idat, sizeof idat);
    n += put_chunk(buf + n, "IEND", NULL, 0);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f)) {
        perror(path);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- main */

static const char USAGE[] =
    "usage: vkimg-mkimages OUTDIR                 write the sample images into OUTDIR\n"
    "       vkimg-mkimages --photo W H OUT.png|.jpg [--seed N]\n"
    "                                             a large photo-like image (benchmarks)\n"
    "       vkimg-mkimages --bomb OUT.png [W H]   a PNG header claiming W x H pixels\n";

static int parse_dim(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) {
        fprintf(stderr, "vkimg-mkimages: '%s' is not an integer in %ld..%ld\n", s, lo, hi);
        return 1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    noise_init();
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--bomb")) {
        long w = 100000, h = 100000;
        if (argc != 3 && argc != 5) {
            fputs(USAGE, stderr);
            return 2;
        }
        if (argc == 5 && (parse_dim(argv[3], 1, 0x7fffffff, &w) || parse_dim(argv[4], 1, 0x7fffffff, &h)))
            return 2;
        return write_bomb(argv[2], (uint32_t)w, (uint32_t)h);
    }
    if (!strcmp(argv[1], "--photo")) {
        long w, h, seed = 1;
        if (argc != 5 && !(argc == 7 && !strcmp(argv[5], "--seed"))) {
            fputs(USAGE, stderr);
            return 2;
        }
        if (parse_dim(argv[2], 1, 65535, &w) || parse_dim(argv[3], 1, 65535, &h) ||
            (argc == 7 && parse_dim(argv[6], 0, 0x7fffffff, &seed)))
            return 2;
        vkimg_save_opts so = { .quality = 90, .png_level = 1 };
        return make(argv[4], px_landscape, landscape_cols, (int)w, (int)h, 3, VKIMG_U8, (uint32_t)seed, 1, &so);
    }
    if (argv[1][0] == '-' || argc != 2) {
        fputs(USAGE, stderr);
        return 2;
    }
    const char *dir = argv[1];
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "vkimg-mkimages: %s: not a directory\n", dir);
        return 1;
    }
    char path[4096];
    vkimg_save_opts png = { .quality = 90, .png_level = 12 }, jpg = { .quality = 85, .png_level = -1 };
    int rc = 0;
    snprintf(path, sizeof path, "%s/landscape.png", dir);
    rc |= make(path, px_landscape, landscape_cols, 640, 400, 3, VKIMG_U8, 1, 0, &png);
    snprintf(path, sizeof path, "%s/portrait.jpg", dir);
    rc |= make(path, px_portrait, NULL, 400, 600, 3, VKIMG_U8, 1, 0, &jpg);
    snprintf(path, sizeof path, "%s/logo-rgba.png", dir);
    rc |= make(path, px_logo, NULL, 256, 256, 4, VKIMG_U8, 1, 0, &png);
    snprintf(path, sizeof path, "%s/gray16.png", dir);
    rc |= make(path, px_gray16, NULL, 320, 240, 1, VKIMG_U16, 1, 0, &png);
    return rc;
}
