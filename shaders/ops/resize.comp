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
// PASS 4  horizontal with the box pre-shrink folded in (GPUs): a workgroup makes
//         TW outputs of one pre-shrunk row (in -> tmp, out_w x ceil(in_h/ky));
//         the pre-shrunk pixels its taps reach are made once into shared memory
//         (each input pixel read once, coalesced), then each output from there.
//         With KX = KY = 1 it is pass 1 through shared memory. Pass 2 follows.
// TMP16   the intermediate of passes 1/4 -> 2 in 16 bits instead of f32 (8-bit
//         outputs): fixed point, v * 2^14 rounded, in [-2, 2) (the filters' lobes
//         overshoot [0, 1] by less than half), so within 1/128 of an 8-bit step.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int PASS = 1;
layout(constant_id = 9) const int LINEAR = 0; // resize in linear light (exact sRGB transfer)
layout(constant_id = 10) const int PRE = 0;   // PASS 1: the input is already premultiplied linear f32
layout(constant_id = 11) const int T = 1;     // taps per output (table row length); PASS 3: along x
layout(constant_id = 12) const int TY = 1;    // PASS 3: taps along y
layout(constant_id = 13) const int TW = 32;   // PASS 3: output tile
layout(constant_id = 14) const int TH = 16;
layout(constant_id = 15) const int SROWS = 1; // PASS 3: input rows a tile reaches (shared rows);
                                              // PASS 4: pre-shrunk pixels a tile's taps reach
layout(constant_id = 16) const int TMP16 = 0; // passes 1, 4 write and pass 2 reads the intermediate in 16 bits

layout(push_constant) uniform Push {
    uvec2 src, dst, wts, starts;
    uint in_w, in_h, out_w, out_h;
    uint kx, ky;          // PASS 0
    uvec2 wts_y, starts_y; // PASS 3: the vertical table (wts, starts: the horizontal one)
} pc;

shared float hrows[PASS == 3 || PASS == 4 ? SROWS * (PASS == 3 ? TW : 1) * IN_C : 1];

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

// The intermediate of passes 1/4 -> 2 (f32, or 16-bit fixed point with TMP16).
layout(buffer_reference, std430, buffer_reference_align = 2) buffer I16Buf { int16_t v[]; };
const float TMP16_SCALE = 16384.0;

vec4 load_tmp(uvec2 a, uint i)
{
    if (TMP16 == 0)
        return load_f32(a, i);
    vec4 r = vec4(0.0);
    uint b = i * uint(IN_C);
    for (int c = 0; c < IN_C; c++)
        r[c] = float(int(I16Buf(a).v[b + uint(c)])) * (1.0 / TMP16_SCALE);
    return r;
}

void store_tmp(uvec2 a, uint i, vec4 v)
{
    if (TMP16 == 0) {
        store_f32(a, i, v);
        return;
    }
    uint b = i * uint(IN_C);
    for (int c = 0; c < IN_C; c++)
        I16Buf(a).v[b + uint(c)] = int16_t(clamp(int(round(v[c] * TMP16_SCALE)), -32768, 32767));
}

// PASS 4: outputs x0 .. x0 + TW - 1 of pre-shrunk row y (the mean of the KX x KY
// block, a partial block at the right/bottom edge the mean of what is there, as
// pass 0), horizontally filtered from shared memory.
void rows_pass()
{
    const uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y, t = gl_LocalInvocationIndex;
    const uint x0 = gl_WorkGroupID.x * uint(TW), y = gl_WorkGroupID.y;
    const uint kx = pc.kx, ky = pc.ky;
    const uint pw = (pc.in_w + kx - 1u) / kx;
    F32Buf wx = F32Buf(pc.wts);
    IntBuf sx = IntBuf(pc.starts);
    const uint tw = min(uint(TW), pc.out_w - x0);
    const int p0 = sx.v[x0], np = sx.v[x0 + tw - 1u] + T - p0; // <= SROWS
    const uint by0 = y * ky, by1 = min(by0 + ky, pc.in_h);
    // 1: the pre-shrunk pixels p0 .. p0 + np - 1 (clamped to the row) of this row
    for (uint k = t; k < uint(np); k += n) {
        uint p = uint(clamp(p0 + int(k), 0, int(pw) - 1));
        uint bx0 = p * kx, bx1 = min(bx0 + kx, pc.in_w);
        vec4 s = vec4(0.0);
        for (uint yy = by0; yy < by1; yy++)
            for (uint xx = bx0; xx < bx1; xx++)
                s += load_pre(yy * pc.in_w + xx);
        s /= float((bx1 - bx0) * (by1 - by0));
        for (int c = 0; c < IN_C; c++)
            hrows[k * uint(IN_C) + uint(c)] = s[c];
    }
    barrier();
    // 2: each output of the tile from there
    for (uint ox = t; ox < tw; ox += n) {
        int base = sx.v[x0 + ox] - p0;
        vec4 s = vec4(0.0);
        for (int i = 0; i < T; i++) {
            float w = wx.v[(x0 + ox) * uint(T) + uint(i)];
            if (w != 0.0) {
                uint b = uint(base + i) * uint(IN_C);
                for (int c = 0; c < IN_C; c++)
                    s[c] += w * hrows[b + uint(c)];
            }
        }
        store_tmp(pc.dst, y * pc.out_w + x0 + ox, s);
    }
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
    if (PASS == 4) {
        rows_pass();
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
        store_tmp(pc.dst, y * pc.out_w + x, s);
        return;
    }
    int j0 = st.v[y], last = int(pc.in_h) - 1;
    for (int t = 0; t < T; t++) {
        float k = w.v[y * uint(T) + uint(t)];
        if (k != 0.0)
            s += k * load_tmp(pc.src, uint(clamp(j0 + t, 0, last)) * pc.out_w + x);
    }
    store_px(pc.dst, y * pc.out_w + x, finish(s));
}
