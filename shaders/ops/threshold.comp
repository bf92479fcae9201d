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
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"
#include "runs.glsl"

layout(constant_id = 8) const int MODE = 0;
layout(constant_id = 9) const int PASS = 2;
layout(constant_id = 10) const int WIDE = 0;
layout(constant_id = 11) const uint LEVELS = 255u;

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

void main()
{
    if (MODE == 2 && PASS == 0) histogram_pass();
    else if (MODE == 2 && PASS == 1) otsu();
    else apply();
}
