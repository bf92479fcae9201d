#version 460
// normalize: stretch each colour channel's min..max to 0..1 (alpha kept), with
// the extremes found on the device: PASS 0 reduces min and max per workgroup
// (subgroup operations, then shared memory) and merges them with one global
// atomic per workgroup on order-preserving integer keys; PASS 1 applies
// (x - min) / (max - min). LINK uses one min/max over all colour channels.
// A constant channel (max == min) is left unchanged.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"

layout(constant_id = 8) const int PASS = 1;
layout(constant_id = 9) const int LINK = 0;
layout(constant_id = 10) const int SUBGROUP = 1; // 0: shared memory only

layout(push_constant) uniform Push {
    uvec2 src, dst, ext; // ext: 4 min keys, 4 max keys (min keys start at ~0u, max at 0u)
    uint npx;
} pc;


// Total order of floats as unsigned integers.
uint key(float f) { uint u = floatBitsToUint(f); return (u & 0x80000000u) != 0u ? ~u : u | 0x80000000u; }
float unkey(uint k) { return uintBitsToFloat((k & 0x80000000u) != 0u ? k & 0x7fffffffu : ~k); }

shared uint smin[4 * gl_WorkGroupSize.x], smax[4 * gl_WorkGroupSize.x];

void extremes()
{
    uint t = gl_LocalInvocationID.x, n = gl_WorkGroupSize.x;
    uint lo[4] = { ~0u, ~0u, ~0u, ~0u }, hi[4] = { 0u, 0u, 0u, 0u };
    // grid-stride: several pixels per invocation
    for (uint p = group_linear() * n + t; p < pc.npx; p += n * gl_NumWorkGroups.x * gl_NumWorkGroups.y) {
        for (int c = 0; c < COLOUR; c++) {
            uint k = key(load_sample(pc.src, IN_FMT, p * uint(IN_C) + uint(c)));
            lo[c] = min(lo[c], k);
            hi[c] = max(hi[c], k);
        }
    }
    for (int c = 0; c < COLOUR; c++) {
        uint l = lo[c], h = hi[c];
        if (SUBGROUP != 0) {
            l = subgroupMin(l);
            h = subgroupMax(h);
        }
        smin[c * int(n) + int(t)] = l;
        smax[c * int(n) + int(t)] = h;
    }
    barrier();
    for (uint s = n / 2u; s > 0u; s >>= 1) {
        if (t < s)
            for (int c = 0; c < COLOUR; c++) {
                smin[c * int(n) + int(t)] = min(smin[c * int(n) + int(t)], smin[c * int(n) + int(t + s)]);
                smax[c * int(n) + int(t)] = max(smax[c * int(n) + int(t)], smax[c * int(n) + int(t + s)]);
            }
        barrier();
    }
    if (t == 0u)
        for (int c = 0; c < COLOUR; c++) {
            int dc = LINK != 0 ? 0 : c;
            atomicMin(U32Buf(pc.ext).v[dc], smin[c * int(n)]);
            atomicMax(U32Buf(pc.ext).v[4 + dc], smax[c * int(n)]);
        }
}

void apply()
{
    uint p = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (p >= pc.npx) return;
    for (int c = 0; c < IN_C; c++) {
        uint i = p * uint(IN_C) + uint(c);
        float v = load_sample(pc.src, IN_FMT, i);
        if (c < COLOUR) {
            int dc = LINK != 0 ? 0 : c;
            float lo = unkey(U32Buf(pc.ext).v[dc]), hi = unkey(U32Buf(pc.ext).v[4 + dc]);
            if (hi > lo) v = (v - lo) / (hi - lo);
        }
        store_sample(pc.dst, OUT_FMT, p * uint(OUT_C) + uint(c), v);
    }
}

void main()
{
    if (PASS == 0) extremes();
    else apply();
}
