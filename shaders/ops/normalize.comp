#version 460
// normalize: stretch each colour channel's min..max to 0..1 (alpha kept), with
// the extremes found on the device: PASS 0 reduces min and max per workgroup
// (subgroup operations, then shared memory) and merges them with one global
// atomic per workgroup on order-preserving integer keys; PASS 1 applies
// (x - min) / (max - min). LINK uses one min/max over all colour channels.
// A constant channel (max == min) is left unchanged. RUNS > 0: the CPU shape of
// both passes (runs.glsl; the extremes of 8-bit chunks as bytes).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
#include "runs.glsl"

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

// RUNS > 0: the extremes of this invocation's chunks as bytes (run_each; vectors,
// not arrays: an index known only at run time keeps them in registers)
uvec4 blo = uvec4(255u), bhi = uvec4(0u);

void run_sample(uint b, int c)
{
    blo[c] = min(blo[c], b);
    bhi[c] = max(bhi[c], b);
}

void extremes()
{
    uint t = gl_LocalInvocationID.x, n = gl_WorkGroupSize.x;
    uint lo[4] = { ~0u, ~0u, ~0u, ~0u }, hi[4] = { 0u, 0u, 0u, 0u };
    if (RUNS > 0) {
        // the extremes as bytes, made keys at the end
        if (run_each(pc.src, pc.npx))
            [[unroll]] for (int c = 0; c < COLOUR; c++) {
                lo[c] = key(u2f(blo[c]) * (1.0 / 255.0));
                hi[c] = key(u2f(bhi[c]) * (1.0 / 255.0));
            }
    } else {
        // grid-stride: several pixels per invocation
        for (uint p = group_linear() * n + t; p < pc.npx; p += n * gl_NumWorkGroups.x * gl_NumWorkGroups.y) {
            for (int c = 0; c < COLOUR; c++) {
                uint k = key(load_sample(pc.src, IN_FMT, p * uint(IN_C) + uint(c)));
                lo[c] = min(lo[c], k);
                hi[c] = max(hi[c], k);
            }
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

// The extremes of colour channel c as values.
vec2 range(int c)
{
    int dc = LINK != 0 ? 0 : c;
    return vec2(unkey(U32Buf(pc.ext).v[dc]), unkey(U32Buf(pc.ext).v[4 + dc]));
}

vec2 run_r[4];

vec4 run_px(uvec4 b)
{
    vec4 v = run_norm(b);
    [[unroll]] for (int c = 0; c < COLOUR; c++)
        if (run_r[c].y > run_r[c].x) v[c] = (v[c] - run_r[c].x) / (run_r[c].y - run_r[c].x);
    return v;
}

void apply()
{
    if (RUNS > 0) {
        [[unroll]] for (int c = 0; c < COLOUR; c++)
            run_r[c] = range(c);
        run_map(pc.src, pc.dst, pc.npx);
        return;
    }
    uint p = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (p >= pc.npx) return;
    for (int c = 0; c < IN_C; c++) {
        uint i = p * uint(IN_C) + uint(c);
        float v = load_sample(pc.src, IN_FMT, i);
        if (c < COLOUR) {
            vec2 r = range(c);
            if (r.y > r.x) v = (v - r.x) / (r.y - r.x);
        }
        store_sample(pc.dst, OUT_FMT, p * uint(OUT_C) + uint(c), v);
    }
}

void main()
{
    if (PASS == 0) extremes();
    else apply();
}
