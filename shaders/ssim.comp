#version 460
// ssim: mean SSIM (Wang et al. 2004) of a and b, Gaussian 11x11 window
// (sigma 1.5, normalized), C1 = 0.01^2, C2 = 0.03^2, on normalized values.
//
// Outputs: along an axis of n >= 11 pixels, the positions where the whole
// window fits (5 .. n-6, "valid", like skimage's cropped mean); along a shorter
// axis, every position, with the window cut to the image and its weights
// renormalized (OFFX/OFFY = 5 or 0; ow x oh outputs).
//
// One workgroup per LX x LY output tile, one channel after another: the tile
// and its 5-pixel halo of a and b go to shared memory, shifted by the values
// Ka, Kb of one pixel of the tile (variances are shift-invariant; the shift
// keeps E[x^2] - E[x]^2 from cancelling in flat regions); a horizontal pass
// makes the 5 row-filtered maps (a, b, a^2, b^2, ab) of the LY + 10 rows in
// shared memory, a vertical pass the 5 maps mu_a, mu_b, E[a^2], E[b^2], E[ab]
// at each output, from which the SSIM map value follows. Nothing but one
// partial record per workgroup (float-float sum of its SSIM values, slot 0)
// leaves the chip; reduce.comp PASS 1 sums the records.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(constant_id = 9) const int B_FMT = 0;
layout(constant_id = 10) const int TIN = 1; // (LX + 10) * (LY + 10)
layout(constant_id = 11) const int THS = 1; // (LY + 10) * LX
layout(constant_id = 12) const float G0 = 1.0;
layout(constant_id = 13) const float G1 = 0.0;
layout(constant_id = 14) const float G2 = 0.0;
layout(constant_id = 15) const float G3 = 0.0;
layout(constant_id = 16) const float G4 = 0.0;
layout(constant_id = 17) const float G5 = 0.0;
layout(constant_id = 18) const int CUT = 1; // 1: an axis is shorter than 11 (window cut at the edges)

layout(push_constant) uniform Push {
    uvec2 a, b, part;
    int w, h, ow, oh, offx, offy;
} pc;

const int R = 5;
const float C1 = 0.0001, C2 = 0.0009;

shared float ta[TIN], tb[TIN];
shared float hs[5 * THS];

float gw(int k)
{
    k = abs(k);
    return k == 0 ? G0 : k == 1 ? G1 : k == 2 ? G2 : k == 3 ? G3 : k == 4 ? G4 : G5;
}

void main()
{
    const int LX = int(gl_WorkGroupSize.x), LY = int(gl_WorkGroupSize.y);
    const int TW = LX + 2 * R, TH = LY + 2 * R;
    const int t = int(gl_LocalInvocationIndex), n = LX * LY;
    const int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);
    const int ox0 = int(gl_WorkGroupID.x) * LX, oy0 = int(gl_WorkGroupID.y) * LY;
    const int px0 = ox0 + pc.offx, py0 = oy0 + pc.offy; // pixel of the tile's first output
    const int ix0 = px0 - R, iy0 = py0 - R;             // pixel of the tile's first input
    const int kx = clamp(px0 + LX / 2, 0, pc.w - 1), ky = clamp(py0 + LY / 2, 0, pc.h - 1);
    vec2 acc = vec2(0.0);
    for (int c = 0; c < IN_C; c++) {
        const uint kidx = (uint(ky) * uint(pc.w) + uint(kx)) * uint(IN_C) + uint(c);
        const float Ka = load_sample(pc.a, IN_FMT, kidx), Kb = load_sample(pc.b, B_FMT, kidx);
        for (int i = t; i < TW * TH; i += n) {
            int x = ix0 + i % TW, y = iy0 + i / TW;
            float va = 0.0, vb = 0.0;
            if (x >= 0 && x < pc.w && y >= 0 && y < pc.h) {
                uint s = (uint(y) * uint(pc.w) + uint(x)) * uint(IN_C) + uint(c);
                va = load_sample(pc.a, IN_FMT, s) - Ka;
                vb = load_sample(pc.b, B_FMT, s) - Kb;
            }
            ta[i] = va;
            tb[i] = vb;
        }
        barrier();
        // horizontal: rows r of the tile (pixel row iy0 + r), output columns j
        for (int i = t; i < TH * LX; i += n) {
            int j = i % LX, r = i / LX;
            int x = px0 + j;
            float sa = 0.0, sb = 0.0, saa = 0.0, sbb = 0.0, sab = 0.0, ws = 0.0;
            for (int k = -R; k <= R; k++) {
                // without CUT every tap of a kept output is inside the image
                if (CUT != 0 && (x + k < 0 || x + k >= pc.w))
                    continue;
                float g = gw(k);
                float va = ta[r * TW + j + R + k], vb = tb[r * TW + j + R + k];
                float ga = g * va, gb = g * vb;
                sa += ga;
                sb += gb;
                saa += ga * va;
                sbb += gb * vb;
                sab += ga * vb;
                ws += g;
            }
            float inv = CUT == 0 ? 1.0 : ws > 0.0 ? 1.0 / ws : 0.0;
            hs[i] = sa * inv;
            hs[THS + i] = sb * inv;
            hs[2 * THS + i] = saa * inv;
            hs[3 * THS + i] = sbb * inv;
            hs[4 * THS + i] = sab * inv;
        }
        barrier();
        // vertical, then the SSIM value of this invocation's output
        int ox = ox0 + lx, oy = oy0 + ly;
        if (ox < pc.ow && oy < pc.oh) {
            int y = py0 + ly;
            float ma = 0.0, mb = 0.0, eaa = 0.0, ebb = 0.0, eab = 0.0, ws = 0.0;
            for (int k = -R; k <= R; k++) {
                if (CUT != 0 && (y + k < 0 || y + k >= pc.h))
                    continue;
                float g = gw(k);
                int i = (ly + R + k) * LX + lx;
                ma += g * hs[i];
                mb += g * hs[THS + i];
                eaa += g * hs[2 * THS + i];
                ebb += g * hs[3 * THS + i];
                eab += g * hs[4 * THS + i];
                ws += g;
            }
            float inv = CUT == 0 ? 1.0 : 1.0 / ws;
            ma *= inv;
            mb *= inv;
            float va = eaa * inv - ma * ma, vb = ebb * inv - mb * mb, cov = eab * inv - ma * mb;
            float mua = ma + Ka, mub = mb + Kb;
            float ssim = ((2.0 * mua * mub + C1) * (2.0 * cov + C2)) /
                         ((mua * mua + mub * mub + C1) * (va + vb + C2));
            acc = ff_add(acc, vec2(ssim, 0.0));
        }
        // no barrier needed here: the next channel's load writes ta/tb (read
        // before the last barrier) and its horizontal pass writes hs only after
        // the barrier that follows that load
    }
    uint64_t r0 = wg_reduce(ff_pack(acc), OP_FF);
    if (t == 0)
        R64Buf(pc.part).v[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = r0;
}
