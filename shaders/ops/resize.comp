#version 460
// resize: separable resampling with per-axis weight tables made on the host
// (src/ops/resize.c: for output i, taps j = start[i] .. start[i] + T - 1 with
// weights w[i*T + t], input index clamped to the image).
//
// PASS 0  box pre-shrink (the fast path for large factors): the mean of each
//         KX x KY block (partial blocks at the right/bottom edge: the mean of
//         what is there), premultiplied (and linearized) f32 out.
// PASS 1  horizontal: in (w x h) -> tmp (out_w x h), f32; from the input format
//         (premultiplied by alpha and linearized here, unless PRE: the input is
//         already pass 0's).
// PASS 2  vertical: tmp (out_w x h) -> out (out_w x out_h): the colour divided by
//         the resized alpha (clamped to [0,1]; colour 0 where it is 0), sRGB encoded
//         again with LINEAR, clamped and rounded by store_px.
// PASS 3  both in one dispatch (GPUs): a workgroup makes a TW x TH tile of the
//         output; it filters the input rows the tile's vertical taps reach
//         horizontally into shared memory (the same sums as pass 1, from pass 0's
//         f32 with PRE), then each output vertically from there (as pass 2). DRAM
//         sees the input once (the rows two tiles share come from the L2) and the
//         output once.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int PASS = 1;
layout(constant_id = 9) const int LINEAR = 0; // resize in linear light (exact sRGB transfer)
layout(constant_id = 10) const int PRE = 0;   // PASS 1: the input is already premultiplied linear f32
layout(constant_id = 11) const int T = 1;     // taps per output (table row length); PASS 3: along x
layout(constant_id = 12) const int TY = 1;    // PASS 3: taps along y
layout(constant_id = 13) const int TW = 32;   // PASS 3: output tile
layout(constant_id = 14) const int TH = 16;
layout(constant_id = 15) const int SROWS = 1; // PASS 3: input rows a tile reaches (shared rows)

layout(push_constant) uniform Push {
    uvec2 src, dst, wts, starts;
    uint in_w, in_h, out_w, out_h;
    uint kx, ky;          // PASS 0
    uvec2 wts_y, starts_y; // PASS 3: the vertical table (wts, starts: the horizontal one)
} pc;

shared float hrows[PASS == 3 ? SROWS * TW * IN_C : 1];

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer IntBuf { int v[]; };

float to_linear(float v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

float to_srgb(float l)
{
    return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

// Pixel i of the input as premultiplied (linear) values.
vec4 load_pre(uint i)
{
    vec4 v = load_px(pc.src, i);
    if (LINEAR != 0)
        for (int c = 0; c < COLOUR; c++)
            v[c] = to_linear(clamp(v[c], 0.0, 1.0));
    if (HAS_ALPHA)
        for (int c = 0; c < COLOUR; c++)
            v[c] *= v[COLOUR];
    return v;
}

vec4 load_f32(uvec2 a, uint i)
{
    vec4 r = vec4(0.0);
    uint b = i * uint(IN_C);
    for (int c = 0; c < IN_C; c++)
        r[c] = F32Buf(a).v[b + uint(c)];
    return r;
}

void store_f32(uvec2 a, uint i, vec4 v)
{
    uint b = i * uint(IN_C);
    for (int c = 0; c < IN_C; c++)
        F32Buf(a).v[b + uint(c)] = v[c];
}

// The colour divided by the resized alpha, sRGB again with LINEAR (the end of
// pass 2 and 3).
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
    return s;
}

void fused()
{
    const uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y, t = gl_LocalInvocationIndex;
    const uint x0 = gl_WorkGroupID.x * uint(TW), y0 = gl_WorkGroupID.y * uint(TH);
    F32Buf wx = F32Buf(pc.wts), wy = F32Buf(pc.wts_y);
    IntBuf sx = IntBuf(pc.starts), sy = IntBuf(pc.starts_y);
    const int r0 = sy.v[y0], lastx = int(pc.in_w) - 1, lasty = int(pc.in_h) - 1;
    const uint tw = min(uint(TW), pc.out_w - x0), th = min(uint(TH), pc.out_h - y0);
    const int rows = sy.v[y0 + th - 1u] + TY - r0; // <= SROWS
    // 1: the rows the tile reaches, filtered horizontally for its columns
    for (uint k = t; k < uint(rows) * uint(TW); k += n) {
        uint r = k / uint(TW), ox = k % uint(TW);
        if (ox >= tw)
            continue;
        uint row = uint(clamp(r0 + int(r), 0, lasty)) * pc.in_w;
        int j0 = sx.v[x0 + ox];
        vec4 s = vec4(0.0);
        for (int i = 0; i < T; i++) {
            float w = wx.v[(x0 + ox) * uint(T) + uint(i)];
            if (w != 0.0) {
                uint j = row + uint(clamp(j0 + i, 0, lastx));
                s += w * (PRE != 0 ? load_f32(pc.src, j) : load_pre(j));
            }
        }
        for (int c = 0; c < IN_C; c++)
            hrows[(r * uint(TW) + ox) * uint(IN_C) + uint(c)] = s[c];
    }
    barrier();
    // 2: each output from there, vertically
    for (uint k = t; k < uint(TW * TH); k += n) {
        uint ox = k % uint(TW), oy = k / uint(TW);
        if (ox >= tw || oy >= th)
            continue;
        int base = sy.v[y0 + oy] - r0;
        vec4 s = vec4(0.0);
        for (int i = 0; i < TY; i++) {
            float w = wy.v[(y0 + oy) * uint(TY) + uint(i)];
            if (w != 0.0) {
                uint b = (uint(base + i) * uint(TW) + ox) * uint(IN_C);
                for (int c = 0; c < IN_C; c++)
                    s[c] += w * hrows[b + uint(c)];
            }
        }
        store_px(pc.dst, (y0 + oy) * pc.out_w + x0 + ox, finish(s));
    }
}

void main()
{
    if (PASS == 3) {
        fused();
        return;
    }
    uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
    if (PASS == 0) {
        uint ow = (pc.in_w + pc.kx - 1u) / pc.kx, oh = (pc.in_h + pc.ky - 1u) / pc.ky;
        if (x >= ow || y >= oh)
            return;
        uint x0 = x * pc.kx, y0 = y * pc.ky, x1 = min(x0 + pc.kx, pc.in_w), y1 = min(y0 + pc.ky, pc.in_h);
        vec4 s = vec4(0.0);
        for (uint yy = y0; yy < y1; yy++)
            for (uint xx = x0; xx < x1; xx++)
                s += load_pre(yy * pc.in_w + xx);
        store_f32(pc.dst, y * ow + x, s / float((x1 - x0) * (y1 - y0)));
        return;
    }
    if (x >= pc.out_w || y >= (PASS == 1 ? pc.in_h : pc.out_h))
        return;
    F32Buf w = F32Buf(pc.wts);
    IntBuf st = IntBuf(pc.starts);
    vec4 s = vec4(0.0);
    if (PASS == 1) {
        int j0 = st.v[x], last = int(pc.in_w) - 1;
        uint row = y * pc.in_w;
        for (int t = 0; t < T; t++) {
            float k = w.v[x * uint(T) + uint(t)];
            if (k != 0.0) {
                uint j = uint(clamp(j0 + t, 0, last));
                s += k * (PRE != 0 ? load_f32(pc.src, row + j) : load_pre(row + j));
            }
        }
        store_f32(pc.dst, y * pc.out_w + x, s);
        return;
    }
    int j0 = st.v[y], last = int(pc.in_h) - 1;
    for (int t = 0; t < T; t++) {
        float k = w.v[y * uint(T) + uint(t)];
        if (k != 0.0)
            s += k * load_f32(pc.src, uint(clamp(j0 + t, 0, last)) * pc.out_w + x);
    }
    store_px(pc.dst, y * pc.out_w + x, finish(s));
}
