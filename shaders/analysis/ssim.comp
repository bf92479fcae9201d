#version 460
// ssim: mean SSIM (Wang et al. 2004) of a and b, Gaussian 11x11 window
// (sigma 1.5, normalized), C1 = 0.01^2, C2 = 0.03^2, on normalized values.
//
// Outputs: along an axis of n >= 11 pixels, the positions where the whole
// window fits (5 .. n-6, "valid", like skimage's cropped mean); along a shorter
// axis (CUT = 1), every position, with the window cut to the image and its
// weights renormalized (offx/offy = 5 or 0; ow x oh outputs per channel).
//
// The five Gaussian-filtered maps mu_a, mu_b, E[a^2], E[b^2], E[ab] are made
// separably, without shared memory: each invocation owns one output column x
// of a strip of STRIP output rows of one channel (workgroup z). It walks down
// the input rows y of the strip and its halo; for each row it makes the
// horizontal 11-tap sums of a, b, a^2, b^2, ab at (x, y) (reads from global
// memory: neighbouring invocations read neighbouring pixels) and adds them,
// times the vertical weight, into the 11 pending outputs y-5 .. y+5 it
// contributes to (a shift register of 11 x 6 accumulators held in registers;
// fully unrolled, so no dynamic indexing). After row y the output y-5 is
// complete: its SSIM value is computed and summed (float-float). Values are
// shifted by the pixel (x, first row) of a and b before the moments (the
// variances are shift-invariant; this keeps E[x^2] - E[x]^2 from cancelling in
// flat regions). One partial record per workgroup (slot 0: float-float sum);
// reduce.comp PASS 1 sums the records.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "reduce.glsl"

layout(constant_id = 9) const int B_FMT = 0;
layout(constant_id = 10) const int STRIP = 32; // output rows per invocation
layout(constant_id = 12) const float G0 = 1.0;
layout(constant_id = 13) const float G1 = 0.0;
layout(constant_id = 14) const float G2 = 0.0;
layout(constant_id = 15) const float G3 = 0.0;
layout(constant_id = 16) const float G4 = 0.0;
layout(constant_id = 17) const float G5 = 0.0;
layout(constant_id = 18) const int CUT = 1; // 1: an axis is shorter than 11 pixels

layout(push_constant) uniform Push {
    uvec2 a, b, part;
    int w, h, ow, oh, offx, offy;
} pc;

const int R = 5;
const float C1 = 0.0001, C2 = 0.0009;

float gw(int k)
{
    k = abs(k);
    return k == 0 ? G0 : k == 1 ? G1 : k == 2 ? G2 : k == 3 ? G3 : k == 4 ? G4 : G5;
}

float ssim_of(vec4 m, vec2 q, float Ka, float Kb)
{
    // precise (no contracted multiply-adds): for equal windows the numerator and
    // the denominator are then the same operations on the same values, so the
    // value is exactly 1 (contracted, identical images gave 0.99999997 and
    // 1.00000001); at most 1: the exact value is, as each factor is
    // (2 mua mub <= mua^2 + mub^2, 2 cov <= va + vb)
    precise float inv = 1.0 / q.y; // the weights that fell inside the image (1 unless CUT)
    precise float ma = m.x * inv, mb = m.y * inv;
    precise float va = m.z * inv - ma * ma, vb = m.w * inv - mb * mb, cov = q.x * inv - ma * mb;
    precise float mua = ma + Ka, mub = mb + Kb;
    precise float num = (2.0 * mua * mub + C1) * (2.0 * cov + C2);
    precise float den = (mua * mua + mub * mub + C1) * (va + vb + C2);
    // not num / den for num >= den: Vulkan's division is within 2.5 ULP (NVIDIA's
    // is a reciprocal times num), and x / x gave 0.99999994 on the H100
    return num >= den ? 1.0 : num / den;
}

void main()
{
    const int ox = int(gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x);
    const int c = int(gl_WorkGroupID.z);
    const int oy0 = int(gl_WorkGroupID.y) * STRIP;
    vec2 acc = vec2(0.0);
    if (ox < pc.ow) { // no barrier inside
        const int x = ox + pc.offx;
        const int y0 = oy0 + pc.offy, y1 = min(oy0 + STRIP, pc.oh) - 1 + pc.offy; // pixel rows of the outputs
        const int ya = max(y0 - R, 0), yh = min(y1 + R, pc.h - 1);
        const uint kidx = (uint(y0) * uint(pc.w) + uint(x)) * uint(IN_C) + uint(c);
        const float Ka = load_sample(pc.a, IN_FMT, kidx), Kb = load_sample(pc.b, B_FMT, kidx);
        float wx = 1.0;
        if (CUT != 0) {
            wx = 0.0;
            for (int k = -R; k <= R; k++)
                if (x + k >= 0 && x + k < pc.w)
                    wx += gw(k);
        }
        const float iwx = 1.0 / wx;
        // pending outputs: slot s holds output row y - R + s while row y is added.
        // precise, as ssim_of: for equal windows the sums of a^2, b^2 and ab are
        // then the same operations on the same values (NVIDIA's compiler contracted
        // them differently: identical images gave SSIM 0.9999999923 on the H100)
        precise vec4 P[2 * R + 1]; // sums of g * (a, b, a^2, b^2)
        precise vec2 Q[2 * R + 1]; // sums of g * ab, and of g
        [[unroll]] for (int s = 0; s <= 2 * R; s++) {
            P[s] = vec4(0.0);
            Q[s] = vec2(0.0);
        }
        for (int y = ya; y <= y1 + R; y++) {
            if (y <= yh) {
                precise vec4 hs = vec4(0.0);
                precise float hab = 0.0;
                const uint row = uint(y) * uint(pc.w);
                [[unroll]] for (int k = -R; k <= R; k++) {
                    if (CUT != 0 && (x + k < 0 || x + k >= pc.w))
                        continue;
                    uint i = (row + uint(x + k)) * uint(IN_C) + uint(c);
                    float va = load_sample(pc.a, IN_FMT, i) - Ka, vb = load_sample(pc.b, B_FMT, i) - Kb;
                    float g = gw(k);
                    float ga = g * va, gb = g * vb;
                    hs += vec4(ga, gb, ga * va, gb * vb);
                    hab += ga * vb;
                }
                hs *= iwx;
                hab *= iwx;
                [[unroll]] for (int s = 0; s <= 2 * R; s++) {
                    float g = gw(R - s);
                    P[s] += g * hs;
                    Q[s] += g * vec2(hab, 1.0);
                }
            }
            if (y - R >= y0) // slot 0 is complete
                acc = ff_add(acc, vec2(ssim_of(P[0], Q[0], Ka, Kb), 0.0));
            [[unroll]] for (int s = 0; s < 2 * R; s++) {
                P[s] = P[s + 1];
                Q[s] = Q[s + 1];
            }
            P[2 * R] = vec4(0.0);
            Q[2 * R] = vec2(0.0);
        }
    }
    uint64_t r0 = wg_reduce(ff_pack(acc), OP_FF);
    if (gl_LocalInvocationIndex == 0u)
        R64Buf(pc.part).v[(gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x +
                          gl_WorkGroupID.x] = r0;
}
