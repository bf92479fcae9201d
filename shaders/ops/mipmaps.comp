#version 460
// mipmaps: up to LEVELS box-filtered mip levels in one dispatch, while every
// level halves exactly (even sizes): each level pixel is the mean of the 2 x 2
// pixels of the level before it -- the definition's box filter at a factor of
// exactly 2 -- taken from that level as written (quantized to the output format),
// premultiplied by alpha and in linear light where asked, like resize.comp.
// A workgroup takes a 64 x 64 square of the input (a 2^LEVELS multiple: enough work
// for its invocations however few levels halve), writes it as level 0 (in the
// output format; not where level 0 is the input itself) and makes level 1 from that, keeps each new level's values of
// its tile in shared memory for the next, and writes every level once: DRAM sees
// the input once, and each level once.
// The levels past these (odd sizes) are resize.comp's business (src/ops/mipmaps.c).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int LEVELS = 1;  // 1..6
layout(constant_id = 9) const int LINEAR = 0;
layout(constant_id = 10) const int WRITE0 = 1; // 0: level 0 is the input itself (nothing to write)


layout(push_constant) uniform Push {
    uvec2 src;   // the input (IN_FMT)
    uvec2 lv[7]; // the levels 0..LEVELS (OUT_FMT)
    uint w, h;   // the input's size (each level halves it exactly)
} pc;

// Level 1, and the odd levels after it (row pitch 32); the even levels after level
// 1 (row pitch 16). With 8-bit output the kept values are their bytes, packed
// (a quarter of the shared memory: more workgroups an SM), else floats.
const bool PACK8 = OUT_FMT == FMT_U8;
shared vec4 tile[PACK8 ? 1 : 32 * 32];
shared vec4 half_[PACK8 ? 1 : 16 * 16];
shared uint tile8[PACK8 ? 32 * 32 : 1];
shared uint half8[PACK8 ? 16 * 16 : 1];

// a quantized 8-bit pixel as its bytes, and back as load_px reads them
uint bytes_of(vec4 v)
{
    uvec4 b = uvec4(floor(clamp(v, 0.0, 1.0) * 255.0 + 0.5));
    return b.x | (b.y << 8) | (b.z << 16) | (b.w << 24);
}

vec4 from_bytes(uint p)
{
    return vec4(float(p & 0xffu), float((p >> 8) & 0xffu), float((p >> 16) & 0xffu), float(p >> 24)) * (1.0 / 255.0);
}
float to_linear(float v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

float to_srgb(float l)
{
    return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

// a pixel as stored (output format) -> premultiplied, linear
vec4 pre(vec4 v)
{
    if (LINEAR != 0)
        for (int c = 0; c < COLOUR; c++)
            v[c] = to_linear(clamp(v[c], 0.0, 1.0));
    if (HAS_ALPHA)
        for (int c = 0; c < COLOUR; c++)
            v[c] *= v[COLOUR];
    return v;
}

// v as store_px writes it in the output format, read back as load_px reads it
// (the same float: resize.comp reads the levels with load_px where this pass
// does not run)
vec4 quantized(vec4 v)
{
    if (OUT_FMT == FMT_U8)
        return floor(clamp(v, 0.0, 1.0) * 255.0 + 0.5) * (1.0 / 255.0);
    if (OUT_FMT == FMT_U16)
        return floor(clamp(v, 0.0, 1.0) * 65535.0 + 0.5) * (1.0 / 65535.0);
    return v;
}

// The mean of 2 x 2 pixels (a b / c d) as resize.comp sums them: each row's
// pair, then the rows, with weights 1/2 (exact), so the same bits.
vec4 mean4(vec4 a, vec4 b, vec4 c, vec4 d)
{
    precise vec4 top = a + b, bottom = c + d, s = 0.25 * (top + bottom);
    return s;
}

// level 0 pixel i: the input as written in the output format
vec4 level0(uint i)
{
    vec4 v = load_px(pc.src, i);
    if (WRITE0 != 0)
        store_px(pc.lv[0], i, v);
    return pre(quantized(v));
}

// the mean of 2 x 2 premultiplied pixels -> the stored value, quantized as
// store_px does (returned as the value the next level reads back)
vec4 finish(vec4 s)
{
    if (HAS_ALPHA) {
        float a = clamp(s[COLOUR], 0.0, 1.0);
        for (int c = 0; c < COLOUR; c++)
            s[c] = a > 0.0 ? s[c] / a : 0.0;
        s[COLOUR] = a;
    }
    if (LINEAR != 0)
        for (int c = 0; c < COLOUR; c++)
            s[c] = to_srgb(clamp(s[c], 0.0, 1.0));
    return quantized(s);
}

// pixel (x, y) of the level kept in shared memory: level l >= 1 of the tile
vec4 kept(int l, uint x, uint y)
{
    if (PACK8)
        return from_bytes(l % 2 == 1 ? tile8[y * 32u + x] : half8[y * 16u + x]);
    return l % 2 == 1 ? tile[y * 32u + x] : half_[y * 16u + x];
}

void keep(int l, uint x, uint y, vec4 v)
{
    if (PACK8) {
        if (l % 2 == 1)
            tile8[y * 32u + x] = bytes_of(v);
        else
            half8[y * 16u + x] = bytes_of(v);
    } else if (l % 2 == 1) {
        tile[y * 32u + x] = v;
    } else {
        half_[y * 16u + x] = v;
    }
}

void main()
{
    const uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y, t = gl_LocalInvocationIndex;
    uint side = 32u; // the tile of level 1, in its pixels (a 64 x 64 input tile, whatever LEVELS)
    uint w = pc.w / 2u, h = pc.h / 2u;
    uvec2 o = gl_WorkGroupID.xy * side; // the tile's corner in level 1
    // level 0 (each input pixel belongs to one level-1 pixel), and level 1 from it
    for (uint k = t; k < side * side; k += n) {
        uvec2 q = uvec2(k % side, k / side), p = o + q;
        if (p.x >= w || p.y >= h)
            continue;
        uint i = 2u * p.y * pc.w + 2u * p.x;
        vec4 v = finish(mean4(level0(i), level0(i + 1u), level0(i + pc.w), level0(i + pc.w + 1u)));
        keep(1, q.x, q.y, v);
        store_px(pc.lv[1], p.y * w + p.x, v);
    }
    // the levels after it, each from the one before in shared memory (the sizes
    // halve exactly, so a valid pixel's 2 x 2 are valid)
    for (int l = 2; l <= LEVELS; l++) {
        barrier();
        side /= 2u;
        o /= 2u;
        w /= 2u;
        h /= 2u;
        for (uint k = t; k < side * side; k += n) {
            uvec2 q = uvec2(k % side, k / side), p = o + q;
            if (p.x >= w || p.y >= h)
                continue;
            uint x = 2u * q.x, y = 2u * q.y;
            vec4 v = finish(mean4(pre(kept(l - 1, x, y)), pre(kept(l - 1, x + 1u, y)), pre(kept(l - 1, x, y + 1u)),
                                  pre(kept(l - 1, x + 1u, y + 1u))));
            keep(l, q.x, q.y, v);
            store_px(pc.lv[l], p.y * w + p.x, v);
        }
    }
}
