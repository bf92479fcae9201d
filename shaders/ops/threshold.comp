#version 460
// threshold: binary output (0 or 1) per colour channel; alpha is copied.
// Compares integer levels q (0..LEVELS), so results are exact.
//   MODE 0 value:    white iff q > t (t = floor(value * LEVELS), from the host)
//   MODE 1 adaptive: Bradley & Roth: white iff q * n * 100 > sum * (100 - offset),
//                    sum/n over the (2r+1)^2 window from the summed-area table
//   MODE 2 otsu:     PASS 0 builds a 256-bin histogram per channel (shared-memory
//                    atomics per workgroup, then one global add per bin), PASS 1
//                    (one workgroup) picks Otsu's threshold per channel in double,
//                    PASS 2 applies it on the device: no host round trip.
// RUNS > 0: the CPU shape (runs.glsl) of the histogram and of modes 0 and 2.
// threshold_adaptive.spv (ADAPTIVE_LINES_ONLY): the CPU shape of mode 1 for 8-
// and 16-bit input, strips of whole windows (boxes.glsl) and a dispatch for the
// pixels around them (EDGE).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// vkimg-variant: adaptive ADAPTIVE_LINES_ONLY
#ifndef ADAPTIVE_LINES_ONLY
#define ADAPTIVE_LINES_ONLY 0
#endif
#include "common.glsl"
#include "runs.glsl"
#if ADAPTIVE_LINES_ONLY
#include "words.glsl"
#endif

layout(constant_id = 8) const int MODE = 0;
layout(constant_id = 9) const int PASS = 2;
layout(constant_id = 10) const int WIDE = 0;
layout(constant_id = 11) const uint LEVELS = 255u;
layout(constant_id = 12) const int NS = 8;   // adaptive lines: samples a strip (8, or 24 for 3 channels)
layout(constant_id = 13) const int EDGE = 0; // adaptive lines: the pixels outside the strips, one an invocation

layout(push_constant) uniform Push {
    uvec2 src, dst, sat, hist; // hist: 256 * 4 uint counts, then 4 uint thresholds
    uint w, h;
    int r;
    uint t, offset;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer U64Buf { uint64_t v[]; };

#include "levels.glsl"

uint64_t S(int x, int y, int c)
{
    if (x < 0 || y < 0) return 0UL;
    uint i = (uint(y) * pc.w + uint(x)) * uint(IN_C) + uint(c);
    return WIDE != 0 ? U64Buf(pc.sat).v[i] : uint64_t(U32Buf(pc.sat).v[i]);
}

void otsu()
{
    int c = int(gl_LocalInvocationIndex);
    if (c >= COLOUR) return;
    U32Buf h = U32Buf(pc.hist);
    double total = 0.0, sumT = 0.0;
    for (int i = 0; i < 256; i++) {
        total += double(h.v[c * 256 + i]);
        sumT += double(i) * double(h.v[c * 256 + i]);
    }
    double w0 = 0.0, sum0 = 0.0, best = -1.0;
    uint thr = 255u;
    bool found = false;
    for (int i = 0; i < 256; i++) {
        w0 += double(h.v[c * 256 + i]);
        sum0 += double(i) * double(h.v[c * 256 + i]);
        double w1 = total - w0;
        if (w0 == 0.0 || w1 == 0.0) continue;
        double d = sum0 / w0 - (sumT - sum0) / w1;
        double v = w0 * w1 * d * d;
        if (v > best) { best = v; thr = uint(i); found = true; }
    }
    if (!found) // one value only: everything <= it, black
        for (int i = 0; i < 256; i++)
            if (h.v[c * 256 + i] != 0u) thr = uint(i);
    h.v[1024 + c] = thr;
}

uint run_t[4];

vec4 run_px(uvec4 b)
{
    vec4 o = run_norm(b);
    [[unroll]] for (int c = 0; c < COLOUR; c++)
        o[c] = (MODE == 0 ? b[c] > pc.t : bin(b[c]) > run_t[c]) ? 1.0 : 0.0;
    return o;
}

void apply_px(uint x, uint y);

void apply()
{
    if (RUNS > 0 && MODE != 1) {
        if (MODE == 2)
            [[unroll]] for (int c = 0; c < COLOUR; c++)
                run_t[c] = U32Buf(pc.hist).v[1024 + c];
        run_map(pc.src, pc.dst, pc.w * pc.h);
        return;
    }
    uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
    if (x >= pc.w || y >= pc.h) return;
    apply_px(x, y);
}

void apply_px(uint x, uint y)
{
    uint p = y * pc.w + x;
    int xa = max(int(x) - pc.r, 0) - 1, xb = min(int(x) + pc.r, int(pc.w) - 1);
    int ya = max(int(y) - pc.r, 0) - 1, yb = min(int(y) + pc.r, int(pc.h) - 1);
    uint64_t n = uint64_t(xb - xa) * uint64_t(yb - ya);
    for (int c = 0; c < IN_C; c++) {
        uint i = p * uint(IN_C) + uint(c);
        float o;
        if (c >= COLOUR) {
            o = load_sample(pc.src, IN_FMT, i); // alpha
        } else {
            uint q = level(i);
            bool white;
            if (MODE == 0) {
                white = q > pc.t;
            } else if (MODE == 1) {
                uint64_t sum = S(xb, yb, c) - S(xa, yb, c) - S(xb, ya, c) + S(xa, ya, c);
                if (WIDE == 0) sum &= 0xffffffffUL;
                white = uint64_t(q) * n * 100UL > sum * uint64_t(100u - pc.offset);
            } else {
                white = bin(q) > U32Buf(pc.hist).v[1024 + c];
            }
            o = white ? 1.0 : 0.0;
        }
        store_sample(pc.dst, OUT_FMT, p * uint(OUT_C) + uint(c), o);
    }
}

#if ADAPTIVE_LINES_ONLY
#include "boxes.glsl"

const int KW = IN_FMT == FMT_U8 ? 1 : 2; // bytes a sample

void main()
{
    const uint id = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
    if (EDGE != 0) {
        const ivec2 p = box_edge_pixel(id);
        if (p.x >= 0)
            apply_px(uint(p.x), uint(p.y));
        return;
    }
    const ivec2 st = box_strip(id);
    if (st.x < 0)
        return;
    const uint y = uint(st.x), s0 = uint(st.y), first = y * pc.w * uint(IN_C) + s0;
    uint64_t sums[NS];
    BOX_SUMS(y, s0, sums)
    uint b[NS * KW / 4];
    LOAD_WINDOW(pc.src, first * uint(KW), (pc.w * pc.h * uint(IN_C * KW) - 1u) >> 3, NS * KW / 4, b)
    const uint64_t n100 = uint64_t(2 * pc.r + 1) * uint64_t(2 * pc.r + 1) * 100UL, keep = uint64_t(100u - pc.offset);
    uint q[MAX_WORDS];
    [[unroll]] for (int j = 0; j < NS / 4; j++)
        q[j] = 0u;
    [[unroll]] for (int j = 0; j < NS; j++) {
        const uint lv = KW == 1 ? bitfieldExtract(b[j >> 2], 8 * (j & 3), 8)
                                : bitfieldExtract(b[j >> 1], 16 * (j & 1), 16);
        const bool white = uint64_t(lv) * n100 > sums[j] * keep;
        const bool alpha = j % IN_C >= COLOUR; // copied
        if (IN_FMT == FMT_U8 && OUT_FMT == FMT_U8)
            q[j >> 2] |= (alpha ? lv : white ? 255u : 0u) << (8 * (j & 3));
        else
            store_sample(pc.dst, OUT_FMT, first + uint(j),
                         alpha ? u2f(lv) * (KW == 1 ? 1.0 / 255.0 : 1.0 / 65535.0) : white ? 1.0 : 0.0);
    }
    if (IN_FMT == FMT_U8 && OUT_FMT == FMT_U8)
        store_words(pc.dst, first, NS / 4, q);
}
#else
void main()
{
    if (MODE == 2 && PASS == 0) histogram_pass();
    else if (MODE == 2 && PASS == 1) otsu();
    else apply();
}
#endif
