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
// PASS 5  both axes and the box pre-shrink in one dispatch from 8-bit input read as
//         words (GPUs): a workgroup makes a TW x TH tile of the output; for RB
//         pre-shrunk rows at a time it copies the KY input rows of each (the span
//         of input columns the tile's taps reach) into shared memory as 32-bit
//         words, makes the pre-shrunk pixels of those rows there (means of KX x KY
//         blocks, premultiplied, linear where asked: pass 0's values), and filters
//         them horizontally into hrows; then each output vertically from hrows
//         (as pass 3). DRAM sees the input once, in coalesced words, and the
//         output once; no intermediate image.
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
layout(constant_id = 17) const int RB = 1;    // PASS 5: pre-shrunk rows per batch
layout(constant_id = 18) const int KX = 1;    // PASS 5: the box pre-shrink factors (1: none)
layout(constant_id = 19) const int KY = 1;
layout(constant_id = 20) const int SCOLS = 1; // PASS 5: pre-shrunk columns a tile reaches (SROWS: rows)
layout(constant_id = 21) const int RAWW = 1;  // PASS 5: words one input row's span takes

layout(push_constant) uniform Push {
    uvec2 src, dst, wts, starts;
    uint in_w, in_h, out_w, out_h;
    uint kx, ky;          // PASS 0
    uvec2 wts_y, starts_y; // PASS 3: the vertical table (wts, starts: the horizontal one)
} pc;

shared float hrows[PASS == 3 || PASS == 4 || PASS == 5 ? SROWS * (PASS == 4 ? 1 : TW) * IN_C : 1];
shared uint raw5[PASS == 5 ? RB * KY * RAWW : 1];       // PASS 5: input rows as words
shared float stage5[PASS == 5 ? RB * SCOLS * IN_C : 1]; // PASS 5: pre-shrunk pixels of RB rows
shared float wsx[PASS == 5 ? TW * T : 1];               // PASS 5: the tile's weights
shared float wsy[PASS == 5 ? TH * TY : 1];

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer IntBuf { int v[]; };

float to_linear(float v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

float to_srgb(float l)
{
    return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

// A pixel as premultiplied (linear) values.
vec4 pre_px(vec4 v)
{
    if (LINEAR != 0)
        for (int c = 0; c < COLOUR; c++)
            v[c] = to_linear(clamp(v[c], 0.0, 1.0));
    if (HAS_ALPHA)
        for (int c = 0; c < COLOUR; c++)
            v[c] *= v[COLOUR];
    return v;
}

// Pixel i of the input as premultiplied (linear) values.
vec4 load_pre(uint i)
{
    return pre_px(load_px(pc.src, i));
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

// PASS 5: byte b of the input words in shared memory
float raw_sample(uint b)
{
    return float((raw5[b >> 2u] >> ((b & 3u) * 8u)) & 0xffu) * (1.0 / 255.0);
}

void tile_pass()
{
    const uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y, t = gl_LocalInvocationIndex;
    const uint x0 = gl_WorkGroupID.x * uint(TW), y0 = gl_WorkGroupID.y * uint(TH);
    const uint tw = min(uint(TW), pc.out_w - x0), th = min(uint(TH), pc.out_h - y0);
    F32Buf wx = F32Buf(pc.wts), wy = F32Buf(pc.wts_y);
    IntBuf sx = IntBuf(pc.starts), sy = IntBuf(pc.starts_y);
    U32Buf src = U32Buf(pc.src);
    const int pw = int((pc.in_w + uint(KX) - 1u) / uint(KX)), ph = int((pc.in_h + uint(KY) - 1u) / uint(KY));
    const int p0 = sx.v[x0], np = sx.v[x0 + tw - 1u] + T - p0; // pre-shrunk columns (<= SCOLS)
    const int r0 = sy.v[y0], nr = sy.v[y0 + th - 1u] + TY - r0; // pre-shrunk rows (<= SROWS)
    // the weights of the tile's columns and rows (zero past its edge)
    for (uint k = t; k < uint(TW * T); k += n)
        wsx[k] = k / uint(T) < tw ? wx.v[x0 * uint(T) + k] : 0.0;
    for (uint k = t; k < uint(TH * TY); k += n)
        wsy[k] = k / uint(TY) < th ? wy.v[y0 * uint(TY) + k] : 0.0;
    // the input columns [cx0, cx1) the pre-shrunk columns p0 .. p0 + np - 1 (clamped) cover
    const int q0 = clamp(p0, 0, pw - 1), q1 = clamp(p0 + np - 1, 0, pw - 1);
    const uint cx0 = uint(q0 * KX), cx1 = min(uint((q1 + 1) * KX), pc.in_w);
    for (int rb0 = 0; rb0 < nr; rb0 += RB) {
        const uint nrb = uint(min(RB, nr - rb0));
        // 1: the input rows of these pre-shrunk rows (clamped to the image), as words
        for (uint k = t; k < nrb * uint(KY * RAWW); k += n) {
            uint rr = k / uint(RAWW), wi = k % uint(RAWW);
            int pr = clamp(r0 + rb0 + int(rr) / KY, 0, ph - 1);
            uint y = min(uint(pr * KY + int(rr) % KY), pc.in_h - 1u);
            uint b0 = (y * pc.in_w + cx0) * uint(IN_C);
            if (wi < ((b0 & 3u) + (cx1 - cx0) * uint(IN_C) + 3u) >> 2u)
                raw5[k] = src.v[(b0 >> 2u) + wi];
        }
        barrier();
        // 2: the pre-shrunk pixels: means of their blocks (partial at the right and
        //    bottom edges: the mean of what is there)
        for (uint k = t; k < nrb * uint(np); k += n) {
            uint rr = k / uint(np), col = k % uint(np);
            int pr = clamp(r0 + rb0 + int(rr), 0, ph - 1), q = clamp(p0 + int(col), 0, pw - 1);
            uint bx0 = uint(q * KX), bx1 = min(bx0 + uint(KX), pc.in_w);
            uint by0 = uint(pr * KY), by1 = min(by0 + uint(KY), pc.in_h);
            vec4 s = vec4(0.0);
            for (uint yy = by0; yy < by1; yy++) {
                uint b = (rr * uint(KY) + yy - by0) * uint(RAWW) * 4u + (((yy * pc.in_w + cx0) * uint(IN_C)) & 3u) +
                         (bx0 - cx0) * uint(IN_C);
                for (uint xx = bx0; xx < bx1; xx++, b += uint(IN_C)) {
                    vec4 v = vec4(0.0);
                    for (int c = 0; c < IN_C; c++)
                        v[c] = raw_sample(b + uint(c));
                    s += pre_px(v);
                }
            }
            if (KX * KY > 1)
                s /= float((bx1 - bx0) * (by1 - by0));
            for (int c = 0; c < IN_C; c++)
                stage5[k * uint(IN_C) + uint(c)] = s[c];
        }
        barrier();
        // 3: horizontally, into hrows (stage5's rows have np pixels)
        for (uint k = t; k < nrb * uint(TW); k += n) {
            uint rr = k / uint(TW), ox = k % uint(TW);
            if (ox >= tw)
                continue;
            uint b = (rr * uint(np) + uint(sx.v[x0 + ox] - p0)) * uint(IN_C);
            vec4 s = vec4(0.0);
            for (int i = 0; i < T; i++, b += uint(IN_C)) {
                float w = wsx[ox * uint(T) + uint(i)];
                for (int c = 0; c < IN_C; c++)
                    s[c] += w * stage5[b + uint(c)];
            }
            for (int c = 0; c < IN_C; c++)
                hrows[((uint(rb0) + rr) * uint(TW) + ox) * uint(IN_C) + uint(c)] = s[c];
        }
        // (the next batch's step 1 writes raw5, which step 2 is done with; its
        // barrier orders this step's reads of stage5 before the next step 2)
    }
    barrier();
    // 4: each output from hrows, vertically
    for (uint k = t; k < uint(TW * TH); k += n) {
        uint ox = k % uint(TW), oy = k / uint(TW);
        if (ox >= tw || oy >= th)
            continue;
        uint b = (uint(sy.v[y0 + oy] - r0) * uint(TW) + ox) * uint(IN_C);
        vec4 s = vec4(0.0);
        for (int i = 0; i < TY; i++, b += uint(TW * IN_C)) {
            float w = wsy[oy * uint(TY) + uint(i)];
            for (int c = 0; c < IN_C; c++)
                s[c] += w * hrows[b + uint(c)];
        }
        store_px(pc.dst, (y0 + oy) * pc.out_w + x0 + ox, finish(s));
    }
}

void main()
{
    if (PASS == 5) {
        tile_pass();
        return;
    }
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
