#version 460
// equalize: histogram equalization per colour channel (alpha kept), all on the
// device: PASS 0 histogram (levels.glsl), PASS 1 one workgroup turns it into a
// lookup table from the CDF, PASS 2 applies it.
//   out = round((cdf(b) - cdf_min) * 255 / (N - cdf_min)), integer arithmetic;
// a constant channel (N == cdf_min) is left unchanged. RUNS > 0: the CPU shape
// of the histogram and of the lookups (runs.glsl).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"
#include "runs.glsl"

layout(constant_id = 8) const int PASS = 2;
layout(constant_id = 9) const uint LEVELS = 255u;

layout(push_constant) uniform Push {
    uvec2 src, dst, hist; // hist: 4 x 256 counts, then 4 x 256 LUT entries (or ~0u = keep)
    uint w, h;
} pc;

#include "levels.glsl"

void lut()
{
    int c = int(gl_LocalInvocationIndex);
    if (c >= COLOUR) return;
    U32Buf h = U32Buf(pc.hist);
    uint64_t n = uint64_t(pc.w) * uint64_t(pc.h), cdf = 0UL, cmin = 0UL;
    for (int i = 0; i < 256; i++)
        if (h.v[c * 256 + i] != 0u) { cmin = uint64_t(h.v[c * 256 + i]); break; }
    for (int i = 0; i < 256; i++) {
        cdf += uint64_t(h.v[c * 256 + i]);
        uint v = ~0u;
        if (n != cmin && cdf >= cmin)
            v = uint((2UL * (cdf - cmin) * 255UL + (n - cmin)) / (2UL * (n - cmin)));
        h.v[1024 + c * 256 + i] = v;
    }
}

vec4 run_px(uvec4 b)
{
    vec4 o = run_norm(b);
    [[unroll]] for (int c = 0; c < COLOUR; c++) {
        uint v = U32Buf(pc.hist).v[1024 + c * 256 + int(bin(b[c]))];
        if (v != ~0u) o[c] = float(v) / 255.0;
    }
    return o;
}

void apply()
{
    if (RUNS > 0) {
        run_map(pc.src, pc.dst, pc.w * pc.h);
        return;
    }
    uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
    if (x >= pc.w || y >= pc.h) return;
    uint p = y * pc.w + x;
    for (int c = 0; c < IN_C; c++) {
        uint i = p * uint(IN_C) + uint(c);
        float o = load_sample(pc.src, IN_FMT, i);
        if (c < COLOUR) {
            uint v = U32Buf(pc.hist).v[1024 + c * 256 + int(bin(level(i)))];
            if (v != ~0u) o = float(v) / 255.0;
        }
        store_sample(pc.dst, OUT_FMT, p * uint(OUT_C) + uint(c), o);
    }
}

void main()
{
    if (PASS == 0) histogram_pass();
    else if (PASS == 1) lut();
    else apply();
}
