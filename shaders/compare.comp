#version 460
// compare: per-sample errors e = |a - b| of two images of the same size and
// channels, on normalized values (a in IN_FMT, b in B_FMT: u8 vs u16 works).
// One partial record per workgroup (grid-stride loop, then wg_reduce), reduced
// by reduce.comp PASS 1:
//   slot 0  sum of e, slot 1 sum of e^2
//   slot 2  max key = bits(e) << 32 | ~(sample index): the largest error, ties
//           to the smallest index (e >= 0, so its bits order like its value)
//   slot 3  pixels with some channel's e > fail
//   slot 4  pixels with some channel's e > warn
// INTMODE = 1 (both u8/u16): exact integer errors d = |qa - qb| in units of
// 1/LEVELS (255 if both are u8, else 65535: a u8 sample q is q * 257 there);
// slots 0/1 are uint64 sums of d and d^2, the key holds d, and the thresholds
// are integers (d > ifail). INTMODE = 0 (a float format): e in fp32,
// float-float sums (e^2 exact), key holds the fp32 bits of e.
// DIFF = 1 also writes the U8 difference image round(clamp(e * scale, 0, 1) * 255).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(constant_id = 9) const int B_FMT = 0;
layout(constant_id = 10) const int DIFF = 0;
layout(constant_id = 11) const int INTMODE = 0;
layout(constant_id = 12) const uint LEVELS = 255u;

layout(push_constant) uniform Push {
    uvec2 a, b, part, diff;
    float fail, warn, scale; // INTMODE 0
    int ifail, iwarn;        // INTMODE 1: thresholds in units of 1/LEVELS
    uint npx;
    uint ngroups;
} pc;

// integer level of sample i in units of 1/LEVELS
uint level(uvec2 buf, int fmt, uint i)
{
    if (fmt == FMT_U8) {
        uint v = uint(U8Buf(buf).v[i]);
        return LEVELS == 255u ? v : v * 257u;
    }
    return uint(U16Buf(buf).v[i]);
}

void main()
{
    const uint t = gl_LocalInvocationIndex, g = group_linear();
    if (g >= pc.ngroups)
        return;
    vec2 se = vec2(0.0), se2 = vec2(0.0);
    uint64_t si = 0UL, si2 = 0UL;
    uint64_t mk = 0UL;
    uint nf = 0u, nw = 0u;
    const uint stride = WG_N * pc.ngroups;
    for (uint p = g * WG_N + t; p < pc.npx;) {
        bool f = false, w = false;
        for (int c = 0; c < IN_C; c++) {
            uint i = p * uint(IN_C) + uint(c);
            float e;
            if (INTMODE != 0) {
                uint qa = level(pc.a, IN_FMT, i), qb = level(pc.b, B_FMT, i);
                uint d = qa > qb ? qa - qb : qb - qa;
                si += uint64_t(d);
                si2 += uint64_t(d * d); // < 2^32
                uint64_t k = (uint64_t(d) << 32) | uint64_t(~i);
                mk = k > mk ? k : mk;
                f = f || int(d) > pc.ifail;
                w = w || int(d) > pc.iwarn;
                e = float(d) * (1.0 / float(LEVELS));
            } else {
                e = abs(load_sample(pc.a, IN_FMT, i) - load_sample(pc.b, B_FMT, i));
                se = ff_add(se, vec2(e, 0.0));
                se2 = ff_add(se2, ff_sq(e));
                uint64_t k = (uint64_t(floatBitsToUint(e)) << 32) | uint64_t(~i);
                mk = k > mk ? k : mk;
                f = f || e > pc.fail;
                w = w || e > pc.warn;
            }
            if (DIFF != 0)
                U8Buf(pc.diff).v[i] = uint8_t(uint(floor(clamp(e * pc.scale, 0.0, 1.0) * 255.0 + 0.5)));
        }
        nf += f ? 1u : 0u;
        nw += w ? 1u : 0u;
        if (pc.npx - p <= stride)
            break;
        p += stride;
    }
    uint64_t r0 = INTMODE != 0 ? wg_reduce(si, OP_ADD) : wg_reduce(ff_pack(se), OP_FF);
    uint64_t r1 = INTMODE != 0 ? wg_reduce(si2, OP_ADD) : wg_reduce(ff_pack(se2), OP_FF);
    uint64_t r2 = wg_reduce(mk, OP_MAX);
    uint64_t r3 = wg_reduce(uint64_t(nf), OP_ADD);
    uint64_t r4 = wg_reduce(uint64_t(nw), OP_ADD);
    if (t == 0u) {
        R64Buf part = R64Buf(pc.part);
        part.v[g * 5u] = r0;
        part.v[g * 5u + 1u] = r1;
        part.v[g * 5u + 2u] = r2;
        part.v[g * 5u + 3u] = r3;
        part.v[g * 5u + 4u] = r4;
    }
}
