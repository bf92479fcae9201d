#version 460
// blur: one pass of a separable Gaussian, along x (DIR = 0) or y (DIR = 1).
//
// A workgroup covers L outputs along DIR times A lines across it. Its L outputs
// need the L + 2r inputs [base - r, base + L - 1 + r] of each line. They are
// loaded into shared memory (each invocation loads every L-th texel of its
// line), barrier, then each invocation convolves from shared memory. Borders
// clamp to the edge. When L + 2r texels do not fit the device's shared memory,
// the span is processed in chunks of SPAN texels (same loop, more iterations),
// so any radius works.
//
// Alpha: the first pass multiplies colour by alpha on load (PREMUL), the second
// divides it back on store (UNPREMUL), so colour is blurred premultiplied.
//
// FUSED = 1 does both passes in one dispatch when the tile fits shared memory:
// a workgroup loads its (LY+2r) x (LX+2r) input texels once, convolves the rows
// into a (LY+2r) x LX shared array, then the columns straight to the output.
// The intermediate never leaves the chip: the input is read once from DRAM
// (halo re-reads hit the cache) and the output written once.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int DIR = 0;
layout(constant_id = 9) const int SPAN = 256;  // texels along DIR per chunk
layout(constant_id = 10) const int TILE = 256; // SPAN * A
layout(constant_id = 11) const int PREMUL = 0;
layout(constant_id = 12) const int UNPREMUL = 0;
layout(constant_id = 13) const int FUSED = 0; // TILE = (LX+2r)(LY+2r) + (LY+2r) LX

layout(push_constant) uniform Push {
    uvec2 src, dst, wts; // wts: 2r+1 floats, normalized
    int w, h, r;
} pc;

shared vec4 tile[TILE];

vec4 premul(vec4 v)
{
    if (IN_C == 4) return vec4(v.rgb * v.a, v.a);
    if (IN_C == 2) return vec4(v.x * v.y, v.y, 0.0, 0.0);
    return v;
}

vec4 unpremul(vec4 v)
{
    float a = IN_C == 4 ? v.a : v.y;
    float k = a > 0.0 ? 1.0 / a : 0.0;
    if (IN_C == 4) return vec4(v.rgb * k, a);
    if (IN_C == 2) return vec4(v.x * k, a, 0.0, 0.0);
    return v;
}

void fused()
{
    const int LX = int(gl_WorkGroupSize.x), LY = int(gl_WorkGroupSize.y);
    const int r = pc.r, TW = LX + 2 * r, TH = LY + 2 * r;
    const int x0 = int(gl_WorkGroupID.x) * LX - r, y0 = int(gl_WorkGroupID.y) * LY - r;
    const int li = int(gl_LocalInvocationIndex), n = LX * LY;
    F32Buf wts = F32Buf(pc.wts);
    for (int i = li; i < TW * TH; i += n) {
        int tx = i % TW, ty = i / TW;
        int x = clamp(x0 + tx, 0, pc.w - 1), y = clamp(y0 + ty, 0, pc.h - 1);
        tile[i] = premul(load_px(pc.src, uint(y) * uint(pc.w) + uint(x)));
    }
    barrier();
    for (int i = li; i < TH * LX; i += n) {
        int tx = i % LX, ty = i / LX;
        vec4 acc = vec4(0.0);
        for (int k = 0; k <= 2 * r; k++)
            acc += wts.v[k] * tile[ty * TW + tx + k];
        tile[TW * TH + i] = acc; // the row results follow the input tile
    }
    barrier();
    int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);
    int x = x0 + r + lx, y = y0 + r + ly;
    if (x >= pc.w || y >= pc.h)
        return;
    vec4 acc = vec4(0.0);
    for (int k = 0; k <= 2 * r; k++)
        acc += wts.v[k] * tile[TW * TH + (ly + k) * LX + lx];
    store_px(pc.dst, uint(y) * uint(pc.w) + uint(x), unpremul(acc));
}

void main()
{
    if (FUSED != 0) {
        fused();
        return;
    }
    const int L = DIR == 0 ? int(gl_WorkGroupSize.x) : int(gl_WorkGroupSize.y);
    const int la = DIR == 0 ? int(gl_LocalInvocationID.x) : int(gl_LocalInvocationID.y);
    const int lc = DIR == 0 ? int(gl_LocalInvocationID.y) : int(gl_LocalInvocationID.x);
    const int base = DIR == 0 ? int(gl_WorkGroupID.x * gl_WorkGroupSize.x) : int(gl_WorkGroupID.y * gl_WorkGroupSize.y);
    const int line = (DIR == 0 ? int(gl_WorkGroupID.y * gl_WorkGroupSize.y) : int(gl_WorkGroupID.x * gl_WorkGroupSize.x)) + lc;
    const int n_along = DIR == 0 ? pc.w : pc.h;
    const int n_lines = DIR == 0 ? pc.h : pc.w;
    const int r = pc.r;
    const int o = base + la;
    const int span = L + 2 * r;
    const int cl = min(line, n_lines - 1); // out-of-range lines still load (barriers)
    F32Buf wts = F32Buf(pc.wts);

    vec4 acc = vec4(0.0);
    for (int c0 = 0; c0 < span; c0 += SPAN) {
        const int cs = base - r + c0; // input coordinate of this chunk's first texel
        const int cnt = min(SPAN, span - c0);
        for (int j = la; j < cnt; j += L) {
            int q = clamp(cs + j, 0, n_along - 1);
            uint p = DIR == 0 ? uint(cl) * uint(pc.w) + uint(q) : uint(q) * uint(pc.w) + uint(cl);
            vec4 v = load_px(pc.src, p);
            tile[lc * SPAN + j] = PREMUL != 0 ? premul(v) : v;
        }
        barrier();
        const int j0 = max(o - r - cs, 0);
        const int j1 = min(o + r - cs, cnt - 1);
        for (int j = j0; j <= j1; j++)
            acc += wts.v[cs + j - o + r] * tile[lc * SPAN + j];
        barrier();
    }
    if (o >= n_along || line >= n_lines)
        return;
    uint p = DIR == 0 ? uint(line) * uint(pc.w) + uint(o) : uint(o) * uint(pc.w) + uint(line);
    store_px(pc.dst, p, UNPREMUL != 0 ? unpremul(acc) : acc);
}
