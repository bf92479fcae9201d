#version 460
// yiq: pixelmatch's comparison (the npm package, version 7.2.0) on the device:
// the squared YIQ distance of two 8-bit RGBA pixels (blended with pixelmatch's
// checkerboard where either is not opaque), above max_delta = 35215 t^2 a pixel
// differs, unless AA and pixelmatch's anti-aliasing detector says one of the two
// is anti-aliased. Everything is computed in double precision with `precise`
// (no fused multiply-add) and pixelmatch's order of operations, so every
// comparison comes out as JavaScript's does and the counts are its counts.
// Inputs of any format and 1..4 channels become 8-bit RGBA first (gray -> R = G = B;
// no alpha -> 255; u16 and float rounded to 8 bits).
// YIQ_AA: the anti-aliasing detector compiled in (yiq_aa.spv, the variant below)
// or not (a specialization constant left the dead detector for the driver to
// remove: lavapipe spent 70 ms and 40 MB of memory on it).
// One partial record per workgroup: slot 0 differing pixels, slot 1 anti-aliased.
// IGNORE: a byte per pixel (nonzero = ignored: counts nowhere). DIFF: an RGBA8
// picture like pixelmatch's (its gray background with alpha 0.1, red differences,
// yellow anti-aliased pixels), ignored pixels in a darker, flat gray; DIFF = 2:
// the same picture as a byte a pixel, an index into the palette of
// vkimg_compare_palette (0 red, 1 yellow, g >= 2 the gray g: every gray here is
// 96..159 or 229..255); DIFF = 3: the index over the first byte of each of B's
// pixels (pc.diff = pc.b, 8-bit B, no detector: no invocation reads another's pixel).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require
#include "common.glsl"
#include "reduce.glsl"
// vkimg-variant: aa YIQ_AA
#ifndef YIQ_AA
#define YIQ_AA 0
#endif

layout(constant_id = 9) const int B_FMT = 0;
layout(constant_id = 10) const int DIFF = 0;
layout(constant_id = 11) const int IGNORE = 0;

layout(push_constant) uniform Push {
    uvec2 a, b, part, diff, ign;
    uvec2 max_delta; // the bits of a double
    uint w, h, ngroups;
} pc;

uint to8(uvec2 buf, int fmt, uint i)
{
    if (fmt == FMT_U8)
        return uint(U8Buf(buf).v[i]);
    if (fmt == FMT_U16)
        return (uint(U16Buf(buf).v[i]) * 255u + 32767u) / 65535u;
    return quantize_u(load_sample(buf, fmt, i), 255.0);
}

uvec4 rgba(uvec2 buf, int fmt, uint p)
{
    uint b0 = p * uint(IN_C);
    uint c0 = to8(buf, fmt, b0);
    if (IN_C == 1)
        return uvec4(c0, c0, c0, 255u);
    if (IN_C == 2)
        return uvec4(c0, c0, c0, to8(buf, fmt, b0 + 1u));
    uvec4 v = uvec4(c0, to8(buf, fmt, b0 + 1u), to8(buf, fmt, b0 + 2u), 255u);
    if (IN_C == 4)
        v.a = to8(buf, fmt, b0 + 3u);
    return v;
}

uvec4 px_a(uint x, uint y) { return rgba(pc.a, IN_FMT, y * pc.w + x); }
uvec4 px_b(uint x, uint y) { return rgba(pc.b, B_FMT, y * pc.w + x); }
uvec4 px(bool first, uint x, uint y) { return first ? px_a(x, y) : px_b(x, y); }

// pixelmatch's dr, dg, db: the plain differences, or blended with the
// checkerboard (which pixelmatch takes from the byte offset k) when not opaque
void deltas(uvec4 c1, uvec4 c2, uint k, out double dr, out double dg, out double db)
{
    if (c1.a < 255u || c2.a < 255u) {
        int rb = 48 + 159 * int(k % 2u);
        int gb = 48 + 159 * int(uint(double(k) / 1.618033988749895LF) % 2u);
        int bb = 48 + 159 * int(uint(double(k) / 2.618033988749895LF) % 2u);
        int da = int(c1.a) - int(c2.a);
        // the numerators are exact integers in JavaScript too; one rounding in the division
        dr = double(int(c1.r * c1.a) - int(c2.r * c2.a) - rb * da) / 255.0LF;
        dg = double(int(c1.g * c1.a) - int(c2.g * c2.a) - gb * da) / 255.0LF;
        db = double(int(c1.b * c1.a) - int(c2.b * c2.a) - bb * da) / 255.0LF;
    } else {
        dr = double(int(c1.r) - int(c2.r));
        dg = double(int(c1.g) - int(c2.g));
        db = double(int(c1.b) - int(c2.b));
    }
}

double brightness(double dr, double dg, double db)
{
    precise double y = dr * 0.29889531LF + dg * 0.58662247LF;
    precise double y2 = y + db * 0.11448223LF;
    return y2;
}

// colorDelta(): the squared YIQ distance, negative when the second pixel is brighter
double color_delta(uvec4 c1, uvec4 c2, uint k)
{
    double dr, dg, db;
    deltas(c1, c2, k, dr, dg, db);
    precise double y = brightness(dr, dg, db);
    precise double i1 = dr * 0.59597799LF - dg * 0.27417610LF;
    precise double i = i1 - db * 0.32180189LF;
    precise double q1 = dr * 0.21147017LF - dg * 0.52261711LF;
    precise double q = q1 + db * 0.31114694LF;
    precise double d1 = 0.5053LF * y * y + 0.299LF * i * i;
    precise double delta = d1 + 0.1957LF * q * q;
    return y > 0.0LF ? -delta : delta;
}

#if YIQ_AA
// hasManySiblings(): 3 or more of the 8 neighbours equal to the pixel (border
// pixels start with 1)
bool many_siblings(bool first, uint x1, uint y1)
{
    uint x0 = x1 > 0u ? x1 - 1u : 0u, y0 = y1 > 0u ? y1 - 1u : 0u;
    uint x2 = min(x1 + 1u, pc.w - 1u), y2 = min(y1 + 1u, pc.h - 1u);
    uvec4 v = px(first, x1, y1);
    uint zeroes = x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2 ? 1u : 0u;
    for (uint x = x0; x <= x2; x++)
        for (uint y = y0; y <= y2; y++) {
            if (x == x1 && y == y1)
                continue;
            zeroes += v == px(first, x, y) ? 1u : 0u;
            if (zeroes > 2u)
                return true;
        }
    return false;
}

// antialiased(): of image `first` at (x1, y1), against the other image
bool antialiased(bool first, uint x1, uint y1)
{
    uint x0 = x1 > 0u ? x1 - 1u : 0u, y0 = y1 > 0u ? y1 - 1u : 0u;
    uint x2 = min(x1 + 1u, pc.w - 1u), y2 = min(y1 + 1u, pc.h - 1u);
    uint k = (y1 * pc.w + x1) * 4u;
    uvec4 c = px(first, x1, y1);
    uint zeroes = x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2 ? 1u : 0u;
    double dmin = 0.0LF, dmax = 0.0LF;
    uint minx = 0u, miny = 0u, maxx = 0u, maxy = 0u;
    for (uint x = x0; x <= x2; x++)
        for (uint y = y0; y <= y2; y++) {
            if (x == x1 && y == y1)
                continue;
            uvec4 n = px(first, x, y);
            double delta = 0.0LF;
            if (c != n) {
                double dr, dg, db;
                deltas(c, n, k, dr, dg, db);
                delta = brightness(dr, dg, db);
            }
            if (delta == 0.0LF) {
                zeroes++;
                if (zeroes > 2u)
                    return false;
            } else if (delta < dmin) {
                dmin = delta;
                minx = x;
                miny = y;
            } else if (delta > dmax) {
                dmax = delta;
                maxx = x;
                maxy = y;
            }
        }
    if (dmin == 0.0LF || dmax == 0.0LF)
        return false;
    return (many_siblings(true, minx, miny) && many_siblings(false, minx, miny)) ||
           (many_siblings(true, maxx, maxy) && many_siblings(false, maxx, maxy));
}

#endif

uint ndiff = 0u, naa = 0u;

const uint IDX_RED = 0u, IDX_YELLOW = 1u;

// c: the RGBA colour; idx: its palette index
void put(uint p, uvec4 c, uint idx)
{
    if (DIFF == 1)
        U32Buf(pc.diff).v[p] = c.r | (c.g << 8) | (c.b << 16) | (c.a << 24);
    else if (DIFF == 2)
        U8Buf(pc.diff).v[p] = uint8_t(idx);
    else if (DIFF == 3) // over the first byte of B's own pixel (8-bit B, read above by this invocation only)
        U8Buf(pc.diff).v[p * uint(IN_C)] = uint8_t(idx);
}

void put_gray(uint p, uint g) { put(p, uvec4(g, g, g, 255u), g); }

// pixelmatch's drawGrayPixel (alpha 0.1; the byte truncated, as its Uint8Array does)
uint gray_of(uvec4 c, double alpha)
{
    precise double y = double(c.r) * 0.29889531LF + double(c.g) * 0.58662247LF;
    precise double y2 = y + double(c.b) * 0.11448223LF;
    precise double v = 255.0LF + (y2 - 255.0LF) * alpha * double(c.a) / 255.0LF;
    return uint(clamp(v, 0.0LF, 255.0LF));
}

void do_pixel(uint p)
{
    uvec4 ca = rgba(pc.a, IN_FMT, p); // x and y (a division) only where the detector needs them

    if (IGNORE != 0 && uint(U8Buf(pc.ign).v[p]) != 0u) {
        uint g = gray_of(ca, 1.0LF) / 4u + 96u; // visible, dimmed, and unlike every other colour here
        put_gray(p, g);
        return;
    }
    uvec4 cb = rgba(pc.b, B_FMT, p);
    double delta = ca == cb ? 0.0LF : color_delta(ca, cb, p * 4u);
    if (abs(delta) > packDouble2x32(pc.max_delta)) {
#if YIQ_AA
        uint x = p % pc.w, y = p / pc.w;
        if (antialiased(true, x, y) || antialiased(false, x, y)) {
            naa++;
            put(p, uvec4(255u, 255u, 0u, 255u), IDX_YELLOW);
        } else
#endif
        {
            ndiff++;
            put(p, uvec4(255u, 0u, 0u, 255u), IDX_RED);
        }
    } else {
        put_gray(p, gray_of(ca, 0.1LF));
    }
}

void main()
{
    const uint t = gl_LocalInvocationIndex, g = group_linear();
    if (g >= pc.ngroups)
        return;
    const uint npx = pc.w * pc.h, stride = WG_N * pc.ngroups;
    for (uint p = g * WG_N + t; p < npx;) {
        do_pixel(p);
        if (npx - p <= stride)
            break;
        p += stride;
    }
    uint64_t r0 = wg_reduce(uint64_t(ndiff), OP_ADD);
    uint64_t r1 = wg_reduce(uint64_t(naa), OP_ADD);
    if (t == 0u) {
        R64Buf part = R64Buf(pc.part);
        part.v[g * 2u] = r0;
        part.v[g * 2u + 1u] = r1;
    }
}
