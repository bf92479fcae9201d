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
// PASS 5  pass 1 for CPU devices (8-bit input, no pre-shrink), PASS 6 pass 2
//         after it, PASS 8 pass 6 four output rows at a time: below, at h_cpu,
//         v_cpu and v_slide (resize_vec.spv).
// TMP16   the intermediate of passes 1/4 -> 2 in 16 bits instead of f32 (8-bit
//         outputs): fixed point, v * 2^14 rounded, in [-2, 2) (the filters' lobes
//         overshoot [0, 1] by less than half), so within 1/128 of an 8-bit step.
// STRIP   (resize_strip.spv, below) both axes and the box pre-shrink in one
//         dispatch, for 8-bit input whose tables are uniform (every output the
//         same weights, starts an integer step apart: integer factors).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// vkimg-variant: strip RESIZE_STRIP
// vkimg-variant: strip_dp4 RESIZE_STRIP_DP4
// vkimg-variant: lines RESIZE_LINES cpu
// vkimg-variant: vec RESIZE_VEC cpu
// (resize_strip_dp4.spv: the strip pass with the block sums of RGB's 6-byte
// blocks as packed 4 x 8-bit dot products, a module of its own: it declares
// SPV_KHR_integer_dot_product, which only devices with the feature may load)
#ifndef RESIZE_STRIP_DP4
#define RESIZE_STRIP_DP4 0
#endif
#if RESIZE_STRIP_DP4
#define RESIZE_STRIP 1
#endif
#ifndef RESIZE_STRIP
#define RESIZE_STRIP 0
#endif
#ifndef RESIZE_LINES
#define RESIZE_LINES 0
#endif
// resize_vec.spv: passes 5, 6 and 8 alone (CPU devices), their input read
// through the texel source (words.glsl SRC_WORD)
#ifndef RESIZE_VEC
#define RESIZE_VEC 0
#endif
#define TEXEL_SRC RESIZE_VEC
#include "common.glsl"
#include "words.glsl"

layout(constant_id = 9) const int LINEAR = 0; // resize in linear light (exact sRGB transfer)

float to_linear(float v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

float to_srgb(float l)
{
    return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
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

#if !RESIZE_STRIP && !RESIZE_LINES
layout(constant_id = 8) const int PASS = 1;
layout(constant_id = 10) const int PRE = 0;   // PASS 1: the input is already premultiplied linear f32
layout(constant_id = 11) const int T = 1;     // taps per output (table row length); PASS 3: along x
layout(constant_id = 12) const int TY = 1;    // PASS 3: taps along y
layout(constant_id = 13) const int TW = 32;   // PASS 3: output tile
layout(constant_id = 14) const int TH = 16;
layout(constant_id = 15) const int SROWS = 1; // PASS 3: input rows a tile reaches (shared rows);
                                              // PASS 4: pre-shrunk pixels a tile's taps reach
layout(constant_id = 16) const int TMP16 = 0; // passes 1, 4 write and pass 2 reads the intermediate in 16 bits
layout(constant_id = 47) const int TEXEL = 0; // passes 5, 6, 8: the input through the texel source

layout(push_constant) uniform Push {
    uvec2 src, dst, wts, starts;
    uint in_w, in_h, out_w, out_h;
    uint kx, ky;          // PASS 0
    uvec2 wts_y, starts_y; // PASS 3: the vertical table (wts, starts: the horizontal one)
    uint pitch;            // PASS 5, 6: pixels a row of the intermediate (a multiple of 8)
} pc;

shared float hrows[PASS == 3 || PASS == 4 ? SROWS * (PASS == 3 ? TW : 1) * IN_C : 1];

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer IntBuf { int v[]; };

// A pixel's values premultiplied (and linearized).
vec4 pre_of(vec4 v)
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
    return pre_of(load_px(pc.src, i));
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

#if !RESIZE_VEC
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

#endif // !RESIZE_VEC

#if RESIZE_VEC
// PASS 5 and 6: the CPU devices' shapes of passes 1 and 2 for 8-bit input
// (lavapipe makes every buffer access a loop over the SIMD lanes, one for each
// component of a vector: these make few accesses of 64-bit components, and
// every index into the registers is a compile-time constant). The tables have
// TP = T rounded up to 4 taps a row (zero weights past T); the intermediate's
// rows are pc.pitch pixels (a multiple of 8: whole 16-byte vectors), in runs
// of 8 (the last run of a row: its last 8 outputs).
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer S4Buf { ivec4 v[]; };
const int TP = (T + 3) / 4 * 4;
const int HB = T * IN_C;            // PASS 5: bytes of an output's taps
const int HWD = (HB + 3) / 4;       // their words, from the one holding the first byte
const int HNB = 4;                  // PASS 5: outputs an invocation
layout(constant_id = 17) const int HR = 16; // PASS 5: rows an invocation
const int VNB = 8;                  // PASS 6: outputs an invocation

// The 8-bit sample at value index (compile-time) i of words w, as pass 1's load_px does.
float u8_at(uint w[HWD], int i)
{
    return u2f(bitfieldExtract(w[i >> 2], (i & 3) * 8, 8)) * (1.0 / 255.0);
}

// PASS 5: outputs x0 .. x0 + HNB - 1 of input rows y0 .. y0 + HR - 1 into the
// intermediate. The weights are read once; each output's T taps of a row as
// 64-bit words moved into place with selects and shifts (words.glsl
// LOAD_WINDOW: their start is a per-lane value). No branches: lavapipe runs both sides of
// an if and the first pass of a loop with the lanes masked, so the host has
// folded the taps that leave the image into its edge pixels (every start in
// 0 .. in_w - T), and the words past the input's last one (past every window)
// are read as that one (buffers are padded to 16 bytes: memory.c).
void h_cpu()
{
    const uint id = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationIndex, nbx = pc.pitch / uint(HNB);
    const uint x0 = (id % nbx) * uint(HNB), y0 = (id / nbx) * uint(HR);
    if (y0 >= pc.in_h)
        return;
    const ivec4 st = S4Buf(pc.starts).v[x0 / 4u];
    const uint last = (pc.in_w * pc.in_h * uint(IN_C) - 1u) >> 3; // the 64-bit word of the input's last byte
    float wt[HNB][TP];
    [[unroll]] for (int o = 0; o < HNB; o++)
        [[unroll]] for (int k = 0; k < TP / 2; k++) {
            const uvec2 u = unpackUint2x32(L8Buf(pc.wts).v[(x0 + uint(o)) * uint(TP / 2) + uint(k)]);
            wt[o][2 * k] = uintBitsToFloat(u.x);
            wt[o][2 * k + 1] = uintBitsToFloat(u.y);
        }
    const uint y1 = min(y0 + uint(HR), pc.in_h);
    for (uint y = y0; y < y1; y++) {
        const uint row = y * pc.in_w;
        float h[HNB * IN_C];
        [[unroll]] for (int o = 0; o < HNB; o++) {
            const int j0 = st[o];
            const uint a = (row + uint(j0)) * uint(IN_C);
            vec4 s = vec4(0.0);
            uint b[HWD];
            LOAD_WINDOW_SRC(pc.src, a, last, HWD, b)
            [[unroll]] for (int t = 0; t < T; t++) {
                vec4 p = vec4(0.0);
                [[unroll]] for (int c = 0; c < IN_C; c++)
                    p[c] = u8_at(b, t * IN_C + c);
                s += wt[o][t] * pre_of(p);
            }
            [[unroll]] for (int c = 0; c < IN_C; c++)
                h[o * IN_C + c] = s[c];
        }
        // HNB * IN_C values: 16-bit as IN_C 64-bit words, f32 as 2 IN_C
        const uint e = (y * pc.pitch + x0) * uint(IN_C);
        if (TMP16 != 0) {
            [[unroll]] for (int v = 0; v < IN_C; v++) {
                uint q[2];
                [[unroll]] for (int k = 0; k < 2; k++) {
                    const int l = clamp(int(round(h[4 * v + 2 * k] * TMP16_SCALE)), -32768, 32767);
                    const int u = clamp(int(round(h[4 * v + 2 * k + 1] * TMP16_SCALE)), -32768, 32767);
                    q[k] = (uint(l) & 0xFFFFu) | (uint(u) << 16);
                }
                S8Buf(pc.dst).v[e / 4u + uint(v)] = packUint2x32(uvec2(q[0], q[1]));
            }
        } else {
            [[unroll]] for (int v = 0; v < 2 * IN_C; v++)
                S8Buf(pc.dst).v[e / 2u + uint(v)] = packUint2x32(floatBitsToUint(vec2(h[2 * v], h[2 * v + 1])));
        }
    }
}

// Value e of a 16-byte word x of the intermediate (16-bit fixed point: 8 values; f32: 4).
float tmp_value(uvec4 x, int e)
{
    return TMP16 != 0 ? float(bitfieldExtract(int(x[e / 2]), 16 * (e % 2), 16)) : uintBitsToFloat(x[e]);
}

// Output row y's pixels x0 .. x0 + VNB - 1 from their sums acc (pass 6 and 8).
void v_store(uint y, uint x0, float acc[VNB * 4])
{
    const float scale = TMP16 != 0 ? 1.0 / TMP16_SCALE : 1.0;
    vec4 px[VNB];
    [[unroll]] for (int i = 0; i < VNB; i++) {
        px[i] = vec4(0.0);
        [[unroll]] for (int c = 0; c < IN_C; c++)
            px[i][c] = acc[i * IN_C + c] * scale;
        px[i] = finish(px[i]);
    }
    uint q[MAX_WORDS];
    [[unroll]] for (int i = 0; i < MAX_WORDS; i++)
        q[i] = 0u;
    if (OUT_FMT == FMT_U8) {
        [[unroll]] for (int i = 0; i < VNB; i++)
            [[unroll]] for (int c = 0; c < OUT_C; c++) {
                const int b = i * OUT_C + c;
                q[b >> 2] |= quantize_u(px[i][c], 255.0) << ((b & 3) * 8);
            }
        store_words(pc.dst, (y * pc.out_w + x0) * uint(OUT_C), VNB * OUT_C / 4, q);
    } else {
        [[unroll]] for (int i = 0; i < VNB; i++)
            store_px(pc.dst, y * pc.out_w + x0 + uint(i), px[i]);
    }
}

// PASS 6: outputs x0 .. x0 + VNB - 1 of output row y from the intermediate:
// every tap a row's VNB pixels as 64-bit words (2 IN_C of them 16-bit, 4 IN_C
// f32), the weights the same for the invocations of a row. A row's last
// run of the intermediate holds its last VNB outputs (out_w >= VNB: the host
// checks), some of them also the run before's: no partial runs (lavapipe
// would run their code in every invocation, masked).
void v_cpu()
{
    const uint id = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationIndex, nbx = pc.pitch / uint(VNB);
    const uint k0 = (id % nbx) * uint(VNB), x0 = min(k0, pc.out_w - uint(VNB)), y = id / nbx;
    if (y >= pc.out_h)
        return;
    const int NV = TMP16 != 0 ? IN_C : 2 * IN_C, PER = TMP16 != 0 ? 8 : 4; // vectors a tap, values a vector
    const int j0 = IntBuf(pc.starts).v[y];
    const uint rowv = pc.pitch * uint(IN_C * (TMP16 != 0 ? 2 : 4)) / 16u, xv = k0 * uint(IN_C * (TMP16 != 0 ? 2 : 4)) / 16u;
    float acc[VNB * 4]; // (v_store's argument: the first VNB * IN_C; an array sized by IN_C, a
                        // specialization constant, as an argument is a copy spirv-val refuses)
    [[unroll]] for (int i = 0; i < VNB * IN_C; i++)
        acc[i] = 0.0;
    for (int t2 = 0; t2 < (T + 1) / 2; t2++) { // taps in pairs (the last one's second weight 0 where T is odd)
        const vec2 wq = uintBitsToFloat(unpackUint2x32(L8Buf(pc.wts).v[y * uint(TP / 2) + uint(t2)]));
        [[unroll]] for (int k = 0; k < 2; k++) {
            const uint base = uint(clamp(j0 + 2 * t2 + k, 0, int(pc.in_h) - 1)) * rowv + xv;
            [[unroll]] for (int v = 0; v < NV; v++) {
                const uvec4 x = SRC_WORD4(pc.src, base + uint(v));
                [[unroll]] for (int e = 0; e < PER; e++)
                    acc[v * PER + e] += wq[k] * tmp_value(x, e);
            }
        }
    }
    v_store(y, x0, acc);
}

// PASS 8 (resize-v-slide): pass 6 for VM output rows an invocation, y0 ..
// y0 + VM - 1 (a column's last block: its last VM rows), every row of the
// intermediate their taps reach read once: pc.kx rows from the block's first
// tap (pc.starts), and for each the VM rows' weights (the block's dense table,
// 0 where a row is not one of an output's taps: a 16-byte word of the
// intermediate's buffer from word pc.ky on). The same sums in the same order as
// pass 6 (a row past an output's taps adds 0).
layout(constant_id = 48) const int VM = 4; // (4: the weights of a row are one 16-byte word)
void v_slide()
{
    const uint id = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationIndex, nbx = pc.pitch / uint(VNB);
    const uint k0 = (id % nbx) * uint(VNB), x0 = min(k0, pc.out_w - uint(VNB)), b = id / nbx;
    if (b >= (pc.out_h + uint(VM) - 1u) / uint(VM))
        return;
    const uint y0 = min(b * uint(VM), pc.out_h - uint(VM)), ru = pc.kx;
    const int j0 = IntBuf(pc.starts).v[b]; // the block's first tap row
    const int NV = TMP16 != 0 ? IN_C : 2 * IN_C, PER = TMP16 != 0 ? 8 : 4; // vectors a row, values a vector
    const uint rowv = pc.pitch * uint(IN_C * (TMP16 != 0 ? 2 : 4)) / 16u, xv = k0 * uint(IN_C * (TMP16 != 0 ? 2 : 4)) / 16u;
    float acc[VM][VNB * 4]; // (rows of v_store's argument: the first VNB * IN_C)
    [[unroll]] for (int m = 0; m < VM; m++)
        [[unroll]] for (int i = 0; i < VNB * IN_C; i++)
            acc[m][i] = 0.0;
    for (uint r = 0u; r < ru; r++) {
        const uint base = uint(clamp(j0 + int(r), 0, int(pc.in_h) - 1)) * rowv + xv;
        float f[VNB * IN_C];
        [[unroll]] for (int v = 0; v < NV; v++) {
            const uvec4 x = SRC_WORD4(pc.src, base + uint(v));
            [[unroll]] for (int e = 0; e < PER; e++)
                f[v * PER + e] = tmp_value(x, e);
        }
        const vec4 w = uintBitsToFloat(SRC_WORD4(pc.src, pc.ky + b * ru + r));
        [[unroll]] for (int m = 0; m < VM; m++)
            [[unroll]] for (int i = 0; i < VNB * IN_C; i++)
                acc[m][i] += w[m] * f[i];
    }
    [[unroll]] for (int m = 0; m < VM; m++)
        v_store(y0 + uint(m), x0, acc[m]);
}

#endif // RESIZE_VEC

void main()
{
#if RESIZE_VEC
    if (PASS == 5)
        h_cpu();
    else if (PASS == 6)
        v_cpu();
    else if (PASS == 8)
        v_slide();
#else
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
#endif
}
#endif // !RESIZE_STRIP && !RESIZE_LINES

#if RESIZE_STRIP || RESIZE_LINES
// STRIP: a workgroup makes OW consecutive outputs of R consecutive output rows
// (with NYS, the rows shared out evenly among NYS strips: 32 or 33 rows each).
// Each invocation owns G adjacent pre-shrunk columns and walks down the rows,
// SY pre-shrunk rows (a step) an output row: it makes each pre-shrunk row of
// its columns from the 8-bit input (integer sums of the KX x KY blocks, read
// as 32-bit words, WORDS a row, every row word-aligned; without alpha two rows'
// bytes are added in 16-bit lanes; with alpha colour times alpha, per pixel;
// HW: RGB whose blocks are 2 mod 4 bytes wide, one column an invocation, half
// of them starting half a word in: the lanes are moved down after the sums),
// scatters it into the vertical sums of the U = TY / SY output rows it
// reaches (register accumulators: the rows an integer step apart and the same
// TY weights for every output, so every index is known at compile time), and
// when an output row is complete puts its columns into shared memory; the
// workgroup then makes that row's outputs horizontally from there (TX weights,
// step SX) and scales the sums to [0, 1] once. One barrier an output row (two
// buffers); with PREF the next step's words are loaded before this step's
// work. The loop over the steps is unrolled U times only (the compile time of
// this kernel grows with the unrolled code: 1.6 s on NVIDIA with all of it).
// Every block is whole (the host checks: w and h are multiples of KX and KY);
// invocations whose columns leave the image (the edges: taps clamped) read
// their blocks byte by byte. DRAM sees the input once (the rows two
// workgroups share come from the L2) and the output once. With RWC (the words
// a row, a constant) the strips whose rows are all inside the image load from
// one 64-bit address a step (load_step_c), the others clamp each row.
layout(constant_id = 8) const int KX = 1;     // the box pre-shrink factors (1: none)
layout(constant_id = 10) const int KY = 1;
layout(constant_id = 11) const int G = 1;     // pre-shrunk columns an invocation owns
layout(constant_id = 12) const int WORDS = 1; // G * KX * IN_C / 4: input words a row an invocation reads
layout(constant_id = 13) const int SX = 1;    // steps between consecutive outputs' first taps
layout(constant_id = 14) const int SY = 1;
layout(constant_id = 15) const int TX = 1;    // taps (<= 24; TY a multiple of SY)
layout(constant_id = 16) const int TY = 1;
layout(constant_id = 17) const int R = 1;     // output rows a workgroup (a multiple of TY / SY)
layout(constant_id = 18) const int OW = 1;    // outputs a workgroup along x
layout(constant_id = 19) const int Q4 = 1;    // columns whose input starts on a word boundary: multiples of Q4
layout(constant_id = 68) const int PREF = 1;  // load a step's rows one step ahead (registers permitting)
layout(constant_id = 69) const int HW = 0;    // columns may start half a word in (RGB, KX * 3 = 2 mod 4: G = 1)
layout(constant_id = 73) const int CSPAD = 0; // words between one channel's planes in shared memory and the next's
layout(constant_id = 74) const int QOFF = -1; // qa mod Q4 where every workgroup has the same (else -1)
layout(constant_id = 75) const int RWC = 0;   // input words a row where the host makes it a constant (else 0)
layout(constant_id = 76) const int NYS = 0;   // strips with the rows shared out evenly among them (else R rows a strip)
layout(constant_id = 20) const float WX0 = 0.0;
layout(constant_id = 21) const float WX1 = 0.0;
layout(constant_id = 22) const float WX2 = 0.0;
layout(constant_id = 23) const float WX3 = 0.0;
layout(constant_id = 24) const float WX4 = 0.0;
layout(constant_id = 25) const float WX5 = 0.0;
layout(constant_id = 26) const float WX6 = 0.0;
layout(constant_id = 27) const float WX7 = 0.0;
layout(constant_id = 28) const float WX8 = 0.0;
layout(constant_id = 29) const float WX9 = 0.0;
layout(constant_id = 30) const float WX10 = 0.0;
layout(constant_id = 31) const float WX11 = 0.0;
layout(constant_id = 32) const float WX12 = 0.0;
layout(constant_id = 33) const float WX13 = 0.0;
layout(constant_id = 34) const float WX14 = 0.0;
layout(constant_id = 35) const float WX15 = 0.0;
layout(constant_id = 36) const float WX16 = 0.0;
layout(constant_id = 37) const float WX17 = 0.0;
layout(constant_id = 38) const float WX18 = 0.0;
layout(constant_id = 39) const float WX19 = 0.0;
layout(constant_id = 40) const float WX20 = 0.0;
layout(constant_id = 41) const float WX21 = 0.0;
layout(constant_id = 42) const float WX22 = 0.0;
layout(constant_id = 43) const float WX23 = 0.0;
layout(constant_id = 44) const float WY0 = 0.0;
layout(constant_id = 45) const float WY1 = 0.0;
layout(constant_id = 46) const float WY2 = 0.0;
layout(constant_id = 47) const float WY3 = 0.0;
layout(constant_id = 48) const float WY4 = 0.0;
layout(constant_id = 49) const float WY5 = 0.0;
layout(constant_id = 50) const float WY6 = 0.0;
layout(constant_id = 51) const float WY7 = 0.0;
layout(constant_id = 52) const float WY8 = 0.0;
layout(constant_id = 53) const float WY9 = 0.0;
layout(constant_id = 54) const float WY10 = 0.0;
layout(constant_id = 55) const float WY11 = 0.0;
layout(constant_id = 56) const float WY12 = 0.0;
layout(constant_id = 57) const float WY13 = 0.0;
layout(constant_id = 58) const float WY14 = 0.0;
layout(constant_id = 59) const float WY15 = 0.0;
layout(constant_id = 60) const float WY16 = 0.0;
layout(constant_id = 61) const float WY17 = 0.0;
layout(constant_id = 62) const float WY18 = 0.0;
layout(constant_id = 63) const float WY19 = 0.0;
layout(constant_id = 64) const float WY20 = 0.0;
layout(constant_id = 65) const float WY21 = 0.0;
layout(constant_id = 66) const float WY22 = 0.0;
layout(constant_id = 67) const float WY23 = 0.0;
// weight i of the horizontal taps (i is known at compile time where it is used)
float wxs(int i)
{
    switch (i) {
    case 0: return WX0;
    case 1: return WX1;
    case 2: return WX2;
    case 3: return WX3;
    case 4: return WX4;
    case 5: return WX5;
    case 6: return WX6;
    case 7: return WX7;
    case 8: return WX8;
    case 9: return WX9;
    case 10: return WX10;
    case 11: return WX11;
    case 12: return WX12;
    case 13: return WX13;
    case 14: return WX14;
    case 15: return WX15;
    case 16: return WX16;
    case 17: return WX17;
    case 18: return WX18;
    case 19: return WX19;
    case 20: return WX20;
    case 21: return WX21;
    case 22: return WX22;
    case 23: return WX23;
    }
    return 0.0;
}
// weight i of the vertical taps (i is known at compile time where it is used)
float wys(int i)
{
    switch (i) {
    case 0: return WY0;
    case 1: return WY1;
    case 2: return WY2;
    case 3: return WY3;
    case 4: return WY4;
    case 5: return WY5;
    case 6: return WY6;
    case 7: return WY7;
    case 8: return WY8;
    case 9: return WY9;
    case 10: return WY10;
    case 11: return WY11;
    case 12: return WY12;
    case 13: return WY13;
    case 14: return WY14;
    case 15: return WY15;
    case 16: return WY16;
    case 17: return WY17;
    case 18: return WY18;
    case 19: return WY19;
    case 20: return WY20;
    case 21: return WY21;
    case 22: return WY22;
    case 23: return WY23;
    }
    return 0.0;
}
#endif // RESIZE_STRIP || RESIZE_LINES

#if RESIZE_STRIP
#if RESIZE_STRIP_DP4
#extension GL_EXT_spirv_intrinsics : require
// OpUDot (SPV_KHR_integer_dot_product) of two packed 4 x 8-bit vectors: the
// sum of a's bytes times b's (OpUDotAccSat, which adds and saturates, made the
// pass slower on the H100: 8K RGB8 -> 25% 0.090 ms against 0.065)
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4451)
uint udot4x8(uint a, uint b, spirv_literal int packed_format);
#endif

layout(push_constant) uniform Push {
    uvec2 src, dst;
    uint in_w, in_h, out_w, out_h;
    uint pw, ph;  // the pre-shrunk size
    int qx, qy;   // output 0's first tap on the pre-shrunk grid, per axis
} pc;

const int VPT = G * IN_C;      // values an invocation makes a pre-shrunk row
const int U = TY / SY;         // output rows one pre-shrunk row reaches
const int NW = SY * KY * WORDS; // words an invocation reads a step
// The columns of a completed output row in shared memory (two buffers), one
// float a value, split by channel and by column modulo SX (planes of PL): the
// horizontal taps of consecutive outputs (SX columns apart) are then
// consecutive words in every lane, and so are an invocation's stores (PL is
// 16 words past a multiple of 32 so that the planes' stores meet other banks).
const int PL = ((int(gl_WorkGroupSize.x) * G + SX - 1) / SX + 31) / 32 * 32 + 16;
// A channel: its SX planes and CSPAD words more (strip_fits pads the
// workgroups of 256 to a size chosen on the H100).
const int CS = SX * PL + CSPAD;
shared float hb[2 * IN_C * CS];

// The input words of pre-shrunk rows p .. p + SY - 1 (clamped) of this
// invocation's columns (from word w0 of a row): wd[(k * KY + yy) * WORDS + i].
void load_step(int p, uint w0, out uint wd[NW])
{
    const uint rw = pc.in_w * uint(IN_C) / 4u; // words a row
    [[unroll]] for (int k = 0; k < SY; k++) {
        const uint y0 = uint(clamp(p + k, 0, int(pc.ph) - 1) * KY);
        [[unroll]] for (int yy = 0; yy < KY; yy++)
            [[unroll]] for (int i = 0; i < WORDS; i++)
                wd[(k * KY + yy) * WORDS + i] = U32Buf(pc.src).v[(y0 + uint(yy)) * rw + w0 + uint(i)];
    }
}

// The same words where every row the strip reads is inside the image and RWC is
// the words a row: from byte address a of the step's first word, each load a
// constant offset from it (no clamp, no multiply: the driver folds the offsets
// into the loads).
void load_step_c(uint64_t a, out uint wd[NW])
{
    [[unroll]] for (int r = 0; r < SY * KY; r++)
        [[unroll]] for (int i = 0; i < WORDS; i++)
            wd[r * WORDS + i] = U32Buf(a + uint64_t(r * RWC + i) * 4ul).v[0];
}

// The block sums of pre-shrunk row k of a step from its words, as exact
// integers in floats: v[g * IN_C + c] (colour times alpha where there is alpha).
// With HW the columns' first byte is byte 2 of the first word where mid is
// true (no alpha there).
#if RESIZE_STRIP_DP4
// a 1 in each byte of word i that holds channel c of this invocation's column's
// block row: dm[i IN_C + c] (made once in main: the driver does not hoist it
// out of the unrolled steps, 8K RGB8 -> 25% 0.069 ms made in sums_of)
uint dm[WORDS * IN_C];
#endif
void sums_of(uint wd[NW], int k, bool mid, out float v[VPT])
{
#if RESIZE_STRIP_DP4
    if (!HAS_ALPHA && HW != 0) {
        // channel c of the column's block: in word i of each of its KY rows, the
        // bytes dm[i IN_C + c] marks (WORDS x IN_C dot products a row instead of
        // the lanes' masks, shifts, selects and extractions below: H100, 8K RGB8
        // -> 25%, 0.0667 -> 0.0652 ms; the same sums)
        uint n[IN_C];
        [[unroll]] for (int c = 0; c < IN_C; c++)
            n[c] = 0u;
        [[unroll]] for (int yy = 0; yy < KY; yy++)
            [[unroll]] for (int i = 0; i < WORDS; i++)
                [[unroll]] for (int c = 0; c < IN_C; c++)
                    n[c] += udot4x8(wd[(k * KY + yy) * WORDS + i], dm[i * IN_C + c], 0);
        [[unroll]] for (int c = 0; c < IN_C; c++)
            v[c] = u2f(n[c]);
        return;
    }
#endif
    if (!HAS_ALPHA) {
        // the KY rows added in 16-bit lanes: lo holds bytes 0 and 2 of each word, hi 1 and 3
        uint lo[WORDS], hi[WORDS];
        [[unroll]] for (int i = 0; i < WORDS; i++) {
            lo[i] = 0u;
            hi[i] = 0u;
            [[unroll]] for (int yy = 0; yy < KY; yy++) {
                const uint w = wd[(k * KY + yy) * WORDS + i];
                lo[i] += w & 0x00ff00ffu;
                hi[i] += (w >> 8) & 0x00ff00ffu;
            }
        }
        // starting half a word in: the lanes moved down by one (byte b + 2 is
        // in the same lane parity, in the other half)
        if (HW != 0)
            [[unroll]] for (int i = 0; i < WORDS; i++) {
                const uint nl = i + 1 < WORDS ? lo[i + 1] : 0u, nh = i + 1 < WORDS ? hi[i + 1] : 0u;
                lo[i] = mid ? (lo[i] >> 16) | (nl << 16) : lo[i];
                hi[i] = mid ? (hi[i] >> 16) | (nh << 16) : hi[i];
            }
        [[unroll]] for (int g = 0; g < G; g++)
            [[unroll]] for (int c = 0; c < IN_C; c++) {
                uint n = 0u;
                [[unroll]] for (int xx = 0; xx < KX; xx++) {
                    const int b = (g * KX + xx) * IN_C + c, i = b >> 2, l = b & 3;
                    const uint lane = (l & 1) == 0 ? lo[i] : hi[i];
                    n += l < 2 ? lane & 0xffffu : lane >> 16;
                }
                v[g * IN_C + c] = u2f(n);
            }
    } else {
        uint n[VPT];
        [[unroll]] for (int i = 0; i < VPT; i++)
            n[i] = 0u;
        [[unroll]] for (int yy = 0; yy < KY; yy++)
            [[unroll]] for (int g = 0; g < G; g++)
                [[unroll]] for (int xx = 0; xx < KX; xx++) {
                    const int b = (g * KX + xx) * IN_C, r = (k * KY + yy) * WORDS;
                    const uint a = bitfieldExtract(wd[r + ((b + COLOUR) >> 2)], ((b + COLOUR) & 3) * 8, 8);
                    [[unroll]] for (int c = 0; c < IN_C; c++) {
                        const uint x = bitfieldExtract(wd[r + ((b + c) >> 2)], ((b + c) & 3) * 8, 8);
                        n[g * IN_C + c] += c < COLOUR ? x * a : x;
                    }
                }
        // (u2f is exact below 2^22: KX * KY * 255 * 255 is, up to 64 pixels a block)
        [[unroll]] for (int i = 0; i < VPT; i++)
            v[i] = KX * KY <= 64 ? u2f(n[i]) : float(n[i]);
    }
}

// The same sums byte by byte, for columns q .. q + G - 1 clamped to the image
// (the invocations at the edges).
void sums_edge(int p, int q, out float v[VPT])
{
    const uint y0 = uint(clamp(p, 0, int(pc.ph) - 1) * KY);
    [[unroll]] for (int g = 0; g < G; g++) {
        const uint x0 = uint(clamp(q + g, 0, int(pc.pw) - 1) * KX);
        uint n[IN_C];
        [[unroll]] for (int c = 0; c < IN_C; c++)
            n[c] = 0u;
        for (uint y = y0; y < y0 + uint(KY); y++)
            for (uint x = x0; x < x0 + uint(KX); x++) {
                const uint b = (y * pc.in_w + x) * uint(IN_C);
                const uint a = HAS_ALPHA ? uint(U8Buf(pc.src).v[b + uint(COLOUR)]) : 1u;
                [[unroll]] for (int c = 0; c < IN_C; c++) {
                    const uint sv = uint(U8Buf(pc.src).v[b + uint(c)]);
                    n[c] += HAS_ALPHA && c < COLOUR ? sv * a : sv;
                }
            }
        [[unroll]] for (int c = 0; c < IN_C; c++)
            v[g * IN_C + c] = float(n[c]);
    }
}

void main()
{
    const int t = int(gl_LocalInvocationID.x), nt = int(gl_WorkGroupSize.x);
    const int x0 = int(gl_WorkGroupID.x) * OW;
    const int y0 = NYS > 0 ? int((gl_WorkGroupID.y * pc.out_h) / uint(NYS)) : int(gl_WorkGroupID.y) * R;
    const int rr = NYS > 0 ? int(((gl_WorkGroupID.y + 1u) * pc.out_h) / uint(NYS)) - y0 : R;
    const int tw = min(OW, int(pc.out_w) - x0);
    const int qa = pc.qx + x0 * SX;              // this workgroup's first tap column
    // .. down to a word boundary (Q4: 1, 2 or 4). This form, not qa & ~(Q4 - 1)
    // nor floor_div: with either of those NVIDIA's compiler made the pass 17%
    // slower (8K RGB8 -> 25%: 0.082 -> 0.096 ms), the same bytes
    // (QOFF: the same offset in every workgroup, known to the compiler: each
    // horizontal tap's place in shared memory is then a constant offset)
    const int qr = QOFF >= 0 ? QOFF : ((qa % Q4) + Q4) % Q4, ql = qa - qr;
    const int q = ql + t * G;                    // this invocation's first column
    const bool busy = t * G < qr + SX * (tw - 1) + TX;
    const bool fast = busy && q >= 0 && q + G <= int(pc.pw);
    const uint b0 = uint(max(q, 0) * KX * IN_C), w0 = b0 / 4u;
    const bool mid = HW != 0 && (b0 & 3u) != 0u; // (then byte 2: KX * IN_C is even)
    const int p0 = pc.qy + y0 * SY;              // pre-shrunk row of this strip's first tap
#if RESIZE_STRIP_DP4
    [[unroll]] for (int i = 0; i < WORDS; i++)
        [[unroll]] for (int c = 0; c < IN_C; c++) {
            uint m = 0u;
            [[unroll]] for (int xx = 0; xx < KX; xx++) {
                const int b = (mid ? 2 : 0) + xx * IN_C + c;
                m |= (b >> 2) == i ? 1u << ((b & 3) * 8) : 0u;
            }
            dm[i * IN_C + c] = m;
        }
#endif
    // the sums' units: colour times alpha in 255^2, the rest in 255, KX * KY pixels
    const float unit = 1.0 / (255.0 * float(KX * KY)), unit_pre = unit / 255.0;
    float acc[U][VPT];
    float v[VPT];
    uint wd[NW], nx[NW];
    // the weights once (each use below has a constant index: they stay constants)
    float wy[TY], wx[TX];
    [[unroll]] for (int i = 0; i < TY; i++)
        wy[i] = wys(i);
    [[unroll]] for (int i = 0; i < TX; i++)
        wx[i] = wxs(i);
    [[unroll]] for (int d = 0; d < U; d++)
        [[unroll]] for (int k = 0; k < VPT; k++)
            acc[d][k] = 0.0;
    [[unroll]] for (int k = 0; k < VPT; k++)
        v[k] = 0.0;
    // Step s adds pre-shrunk rows s * SY .. s * SY + SY - 1 of the strip to
    // outputs s - U + 1 .. s (row k of it has weight (U - 1 - d) * SY + k in
    // output s - U + 1 + d, whose sums are acc[(s + 1 + d) % U]) and completes
    // output s - U + 1; steps before U - 1 complete none (the first rows of the
    // first outputs). Steps in blocks of U, so that every index is a constant.
    const int steps = rr + U - 1;
    // every row this workgroup loads inside the image (the steps and, with PREF, one more)
    const bool inner = RWC > 0 && p0 >= 0 && p0 + (steps + PREF) * SY <= int(pc.ph);
    const uint64_t sw = uint64_t(SY * KY) * uint64_t(RWC) * 4ul; // bytes a step
    const uint64_t a0 = packUint2x32(pc.src) + (uint64_t(max(p0, 0) * KY) * uint64_t(RWC) + uint64_t(w0)) * 4ul;
    if (PREF != 0 && fast) {
        if (inner)
            load_step_c(a0, wd);
        else
            load_step(p0, w0, wd);
    }
    [[dont_unroll]] for (int sb = 0; sb < steps; sb += U) {
        const uint64_t ab = a0 + uint64_t(sb) * sw; // step sb's first word
        [[unroll]] for (int u = 0; u < U; u++) {
            const int st = sb + u, oy = st - (U - 1);
            if (st >= steps)
                break;
            if (fast) {
                if (inner && PREF != 0)
                    load_step_c(ab + uint64_t(u + 1) * sw, nx);
                else if (inner)
                    load_step_c(ab + uint64_t(u) * sw, wd);
                else if (PREF != 0)
                    load_step(p0 + (st + 1) * SY, w0, nx); // the next step's, while this one's are summed
                else
                    load_step(p0 + st * SY, w0, wd);
            }
            [[unroll]] for (int k = 0; k < SY; k++) {
                if (fast)
                    sums_of(wd, k, mid, v);
                else if (busy)
                    sums_edge(p0 + st * SY + k, q, v);
                [[unroll]] for (int d = 0; d < U; d++)
                    [[unroll]] for (int i = 0; i < VPT; i++)
                        acc[(u + 1 + d) % U][i] += wy[(U - 1 - d) * SY + k] * v[i];
            }
            if (PREF != 0 && fast)
                [[unroll]] for (int i = 0; i < NW; i++)
                    wd[i] = nx[i];
            const int done = (u + 1) % U; // output oy's sums
            if (oy >= 0) {
                const int buf = (oy & 1) * IN_C * CS;
                [[unroll]] for (int g = 0; g < G; g++) {
                    const int j = t * G + g, o = buf + (j % SX) * PL + j / SX;
                    [[unroll]] for (int c = 0; c < IN_C; c++)
                        hb[o + c * CS] = acc[done][g * IN_C + c];
                }
                barrier();
                if (y0 + oy < int(pc.out_h))
                    for (int ox = t; ox < tw; ox += nt) {
                        vec4 s = vec4(0.0);
                        [[unroll]] for (int i = 0; i < TX; i++) {
                            const int j = qr + i, o = buf + (j % SX) * PL + j / SX + ox; // column j + ox * SX
                            [[unroll]] for (int c = 0; c < IN_C; c++)
                                s[c] += wx[i] * hb[o + c * CS];
                        }
                        [[unroll]] for (int c = 0; c < 4; c++)
                            s[c] *= HAS_ALPHA && c < COLOUR ? unit_pre : unit;
                        store_px(pc.dst, uint(y0 + oy) * pc.out_w + uint(x0 + ox), finish(s));
                    }
            }
            [[unroll]] for (int k = 0; k < VPT; k++)
                acc[done][k] = 0.0;
        }
    }
}
#endif // RESIZE_STRIP

#if RESIZE_LINES
// LINES (resize_lines.spv), the CPU devices' shape of the strip pass (uniform
// tables, 8-bit input with rows of whole words, whole KX x KY blocks): no
// shared memory, no barrier, few and wide buffer accesses (lavapipe makes each
// one a loop over the SIMD lanes). An invocation makes NB consecutive outputs
// (a multiple of 4) of R consecutive output rows, walking down SY pre-shrunk
// rows a step: it reads the window of input its outputs' horizontal taps reach
// as 16-byte vectors, KY rows a pre-shrunk row, adds the blocks as integers
// (colour times alpha where there is alpha), filters them horizontally (TX
// weights, step SX: the reference's order, horizontal first), scatters the NB
// results into the vertical sums of the U = TY / SY output rows they reach and
// writes the completed row (8-bit: whole words, bytes at its two ends where a
// row does not start on a word). Every index into the window is a compile-time
// constant: the window's first byte is SB bytes into a word in every row of
// every invocation, and which word of its first vector is moved by selects.
// The invocations whose window leaves the image (taps clamped) or whose
// outputs pass its right edge are a dispatch of their own (EDGE 1) that reads
// the window byte by byte: lavapipe runs both sides of an if with the lanes
// masked, so the interior's dispatch (EDGE 0) has none of that code.
layout(constant_id = 70) const int NB = 8; // outputs an invocation along x (a multiple of 4)
layout(constant_id = 71) const int SB = 0; // the window's first byte in its word: (qx * KX * IN_C) mod 4
layout(constant_id = 72) const int EDGE = 0; // this dispatch's blocks: 0 those inside the image, 1 the others

layout(push_constant) uniform Push {
    uvec2 src, dst;
    uint in_w, in_h, out_w, out_h;
    uint pw, ph;   // the pre-shrunk size
    int qx, qy;    // output 0's first tap on the pre-shrunk grid, per axis
    uint nblk;     // this dispatch's invocations along a row
    uint b0, b1;   // the blocks of NB outputs inside the image: b0 .. b1 - 1 (EDGE 0), the others (EDGE 1)
} pc;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer V4Buf { uvec4 v[]; };

const int U = TY / SY;                        // output rows one pre-shrunk row reaches
const int WL = (NB - 1) * SX + TX;            // pre-shrunk columns of the window
const int WB = WL * KX * IN_C;                // its bytes a row
const int NWW = (SB + WB + 3) / 4;            // its words (from the one holding its first byte)
const int NV = (NWW + 3 + 3) / 4;             // 16-byte vectors that hold them wherever they start
const int NH = NB * IN_C;                     // values an invocation makes a pre-shrunk row
const int NN = WL * IN_C;                     // block sums of the window a pre-shrunk row

// The KY input rows of pre-shrunk row p (clamped) over window columns
// q .. q + WL - 1, as block sums: n[j * IN_C + c]. The bytes of a row as
// words s (the window's byte i is byte SB + i): from 16-byte vectors, or where
// the window leaves the image or the input byte by byte (a block's loads in a
// loop: lavapipe's code for a buffer access is long).
void window_sums(int p, int q, bool fast, out uint n[NN])
{
    [[unroll]] for (int i = 0; i < NN; i++)
        n[i] = 0u;
    const uint rb = pc.in_w * uint(IN_C);     // bytes a row
    const uint y0 = uint(clamp(p, 0, int(pc.ph) - 1) * KY);
    for (int yy = 0; yy < KY; yy++) {
        const uint row = (y0 + uint(yy)) * rb;
        uint s[NWW];
        if (fast) {
            // the window's first byte: row + q * KX * IN_C (SB mod 4)
            // (the vectors past the input's last one hold none of the window: read as
            // that one, buffers are padded to 16 bytes: memory.c)
            const uint a = row + uint(q * KX * IN_C), wa = a >> 2, vw = wa & ~3u, sh = wa - vw;
            const uint lastv = (pc.in_h * rb - 1u) >> 4;
            uint w[4 * NV];
            [[unroll]] for (int v = 0; v < NV; v++) {
                const uvec4 x = V4Buf(pc.src).v[min((vw >> 2) + uint(v), lastv)];
                w[4 * v] = x.x;
                w[4 * v + 1] = x.y;
                w[4 * v + 2] = x.z;
                w[4 * v + 3] = x.w;
            }
            [[unroll]] for (int i = 0; i < NWW; i++)
                s[i] = sh == 0u ? w[i] : sh == 1u ? w[i + 1] : sh == 2u ? w[i + 2] : w[i + 3];
        } else {
            uint e[NWW];
            [[unroll]] for (int i = 0; i < NWW; i++)
                e[i] = 0u;
            // (a loop over the columns, not the bytes: lavapipe ends every loop of
            // an invocation after 65535 iterations in all, lines_fits counts them)
            for (int j = 0; j < WL; j++) {
                const uint b0 = row + uint(clamp(q + j, 0, int(pc.pw) - 1) * KX * IN_C);
                [[unroll]] for (int r = 0; r < KX * IN_C; r++) {
                    const int i = SB + j * KX * IN_C + r;
                    e[i >> 2] |= uint(U8Buf(pc.src).v[b0 + uint(r)]) << ((i & 3) * 8);
                }
            }
            [[unroll]] for (int i = 0; i < NWW; i++)
                s[i] = e[i];
        }
        [[unroll]] for (int j = 0; j < WL; j++)
            [[unroll]] for (int xx = 0; xx < KX; xx++) {
                const int b = SB + (j * KX + xx) * IN_C;
                const uint al = HAS_ALPHA ? bitfieldExtract(s[(b + COLOUR) >> 2], ((b + COLOUR) & 3) * 8, 8) : 1u;
                [[unroll]] for (int c = 0; c < IN_C; c++) {
                    const uint x = bitfieldExtract(s[(b + c) >> 2], ((b + c) & 3) * 8, 8);
                    n[j * IN_C + c] += HAS_ALPHA && c < COLOUR ? x * al : x;
                }
            }
    }
}

// Output row y's NB outputs from x0 (o of them inside the image), scaled sums.
void store_row(uint y, uint x0, int o, float h[NH])
{
    const float unit = 1.0 / (255.0 * float(KX * KY)), unit_pre = unit / 255.0;
    vec4 px[NB];
    [[unroll]] for (int i = 0; i < NB; i++) {
        px[i] = vec4(0.0);
        [[unroll]] for (int c = 0; c < IN_C; c++)
            px[i][c] = h[i * IN_C + c] * (HAS_ALPHA && c < COLOUR ? unit_pre : unit);
        px[i] = finish(px[i]);
    }
    const uint p0 = y * pc.out_w + x0;
    if (OUT_FMT == FMT_U8 && o == NB) {
        // the NB * OUT_C bytes as words q, then as the words of the row from the
        // one holding the first byte (sh bits into it): whole words 1 .. NOW - 1,
        // word 0 whole where sh is 0, the ends byte by byte otherwise
        const int NOW = NB * OUT_C / 4;
        uint q[MAX_WORDS];
        [[unroll]] for (int i = 0; i < MAX_WORDS; i++)
            q[i] = 0u;
        [[unroll]] for (int i = 0; i < NB; i++)
            [[unroll]] for (int c = 0; c < OUT_C; c++) {
                const int b = i * OUT_C + c;
                q[b >> 2] |= quantize_u(px[i][c], 255.0) << ((b & 3) * 8);
            }
        store_words(pc.dst, p0 * uint(OUT_C), NOW, q);
    } else {
        for (int i = 0; i < o; i++)
            store_px(pc.dst, p0 + uint(i), px[i]);
    }
}

void main()
{
    const uint id = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
    const uint bd = id % pc.nblk, strip = id / pc.nblk;
    const uint blk = EDGE == 0 ? pc.b0 + bd : bd < pc.b0 ? bd : bd - pc.b0 + pc.b1;
    const int x0 = int(blk) * NB, y0 = int(strip) * R;
    if (y0 >= int(pc.out_h))
        return;
    // outputs inside the image (EDGE 0: all NB; a branch for fewer would cost
    // lavapipe its code in every invocation, masked)
    const int o = EDGE == 0 ? NB : min(NB, int(pc.out_w) - x0);
    const int q = pc.qx + x0 * SX;               // the window's first column
    // EDGE 0: the window inside the image (the host chose the blocks), read as
    // vectors; EDGE 1: byte by byte, its columns clamped
    const bool fast = EDGE == 0;
    const int p0 = pc.qy + y0 * SY;              // pre-shrunk row of this strip's first tap
    float acc[U][NH];
    [[unroll]] for (int d = 0; d < U; d++)
        [[unroll]] for (int i = 0; i < NH; i++)
            acc[d][i] = 0.0;
    // Step st adds pre-shrunk rows p0 + st * SY + k to outputs y0 + st - U + 1 + d
    // (weight (U - 1 - d) * SY + k; their sums acc[d]), completes acc[0]
    // (output y0 + st - U + 1) and moves the others down.
    const int steps = min(R, int(pc.out_h) - y0) + U - 1;
    for (int st = 0; st < steps; st++) {
        for (int k = 0; k < SY; k++) {
            uint n[NN];
            window_sums(p0 + st * SY + k, q, fast, n);
            float h[NH];
            [[unroll]] for (int i = 0; i < NB; i++)
                [[unroll]] for (int c = 0; c < IN_C; c++) {
                    float v = 0.0;
                    [[unroll]] for (int t = 0; t < TX; t++)
                        v += wxs(t) * float(n[(i * SX + t) * IN_C + c]);
                    h[i * IN_C + c] = v;
                }
            [[unroll]] for (int d = 0; d < U; d++) {
                float wk = 0.0;
                [[unroll]] for (int kk = 0; kk < SY; kk++)
                    if (kk == k)
                        wk = wys((U - 1 - d) * SY + kk);
                [[unroll]] for (int i = 0; i < NH; i++)
                    acc[d][i] += wk * h[i];
            }
        }
        const int oy = st - (U - 1);
        if (oy >= 0)
            store_row(uint(y0 + oy), uint(x0), o, acc[0]);
        [[unroll]] for (int d = 0; d + 1 < U; d++)
            [[unroll]] for (int i = 0; i < NH; i++)
                acc[d][i] = acc[d + 1][i];
        [[unroll]] for (int i = 0; i < NH; i++)
            acc[U - 1][i] = 0.0;
    }
}
#endif // RESIZE_LINES
