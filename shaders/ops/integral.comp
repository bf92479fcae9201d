#version 460
// integral: summed-area table S(x,y) = sum of q(i,j) for i <= x, j <= y, per
// channel, of the integer sample levels q (0..255, or 0..65535 for 16-bit
// input). Built from parallel prefix scans in five passes (PASS):
//   0 ROWS      each workgroup scans a row segment of T = N*K texels: every
//               invocation scans its K texels serially, the workgroup scans the
//               invocation totals in shared memory (Hillis-Steele); the
//               segment's total goes to rowcarry.
//   1 ROWCARRY  one invocation per row: exclusive scan of its segment totals.
//   2 COLS      one invocation per (column, band of B rows): adds the row carry,
//               scans down its band serially (adjacent invocations = adjacent
//               columns: coalesced); the band's total goes to colcarry.
//   3 COLCARRY  one invocation per column: exclusive scan of its band totals.
//   4 FIX       adds each band's carry to its texels.
// Arithmetic is modular (uint32 or uint64 with WIDE): differences of table
// entries (box sums) are exact whenever the true box sum fits the width.
// Every pass is multi-pass-safe: no workgroup waits on another.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"

layout(constant_id = 8) const int PASS = 0;
layout(constant_id = 9) const int K = 4;      // texels per invocation (ROWS)
layout(constant_id = 10) const int WIDE = 0;  // 1: uint64 table
layout(constant_id = 11) const uint LEVELS = 255u;

layout(push_constant) uniform Push {
    uvec2 src, sat, rowcarry, colcarry;
    uint w, h, nseg, seglen, band, nband;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer U64Buf { uint64_t v[]; };

shared uint64_t scan[gl_WorkGroupSize.x];

uint64_t sat_get(uint i) { return WIDE != 0 ? U64Buf(pc.sat).v[i] : uint64_t(U32Buf(pc.sat).v[i]); }
void sat_put(uint i, uint64_t v)
{
    if (WIDE != 0) U64Buf(pc.sat).v[i] = v;
    else U32Buf(pc.sat).v[i] = uint(v);
}
uint64_t mask(uint64_t v) { return WIDE != 0 ? v : (v & 0xffffffffUL); }

uint level(uint i)
{
    if (IN_FMT == FMT_U8) return uint(U8Buf(pc.src).v[i]);
    if (IN_FMT == FMT_U16) return uint(U16Buf(pc.src).v[i]);
    return quantize_u(load_sample(pc.src, IN_FMT, i), float(LEVELS));
}

void rows()
{
    const uint N = gl_WorkGroupSize.x, t = gl_LocalInvocationID.x;
    const uint seg = gl_WorkGroupID.x, y = gl_WorkGroupID.y;
    const uint x0 = seg * N * uint(K) + t * uint(K);
    for (int c = 0; c < IN_C; c++) {
        uint64_t run = 0;
        uint64_t part[16];
        for (int k = 0; k < K; k++) {
            uint x = x0 + uint(k);
            if (x < pc.w)
                run += uint64_t(level((y * pc.w + x) * uint(IN_C) + uint(c)));
            part[k] = run;
        }
        scan[t] = run;
        barrier();
        for (uint off = 1u; off < N; off <<= 1) {
            uint64_t v = t >= off ? scan[t - off] : 0UL;
            barrier();
            scan[t] += v;
            barrier();
        }
        uint64_t before = scan[t] - run;
        for (int k = 0; k < K; k++) {
            uint x = x0 + uint(k);
            if (x < pc.w)
                sat_put((y * pc.w + x) * uint(IN_C) + uint(c), mask(before + part[k]));
        }
        if (t == N - 1u && pc.nseg > 1u)
            U64Buf(pc.rowcarry).v[(y * pc.nseg + seg) * uint(IN_C) + uint(c)] = scan[t];
        barrier();
    }
}

void rowcarry()
{
    uint y = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (y >= pc.h) return;
    for (int c = 0; c < IN_C; c++) {
        uint64_t run = 0;
        for (uint s = 0u; s < pc.nseg; s++) {
            uint i = (y * pc.nseg + s) * uint(IN_C) + uint(c);
            uint64_t v = U64Buf(pc.rowcarry).v[i];
            U64Buf(pc.rowcarry).v[i] = run;
            run += v;
        }
    }
}

void cols()
{
    uint x = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint b = gl_WorkGroupID.y;
    if (x >= pc.w) return;
    uint seg = x / pc.seglen;
    uint64_t run[4] = { 0UL, 0UL, 0UL, 0UL };
    uint y1 = min((b + 1u) * pc.band, pc.h);
    for (uint y = b * pc.band; y < y1; y++) {
        for (int c = 0; c < IN_C; c++) {
            uint i = (y * pc.w + x) * uint(IN_C) + uint(c);
            uint64_t v = sat_get(i);
            if (pc.nseg > 1u)
                v += U64Buf(pc.rowcarry).v[(y * pc.nseg + seg) * uint(IN_C) + uint(c)];
            run[c] += v;
            sat_put(i, mask(run[c]));
        }
    }
    if (pc.nband > 1u)
        for (int c = 0; c < IN_C; c++)
            U64Buf(pc.colcarry).v[(b * pc.w + x) * uint(IN_C) + uint(c)] = run[c];
}

void colcarry()
{
    uint x = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (x >= pc.w) return;
    for (int c = 0; c < IN_C; c++) {
        uint64_t run = 0;
        for (uint b = 0u; b < pc.nband; b++) {
            uint i = (b * pc.w + x) * uint(IN_C) + uint(c);
            uint64_t v = U64Buf(pc.colcarry).v[i];
            U64Buf(pc.colcarry).v[i] = run;
            run += v;
        }
    }
}

void fix()
{
    uint x = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint y = gl_WorkGroupID.y * gl_WorkGroupSize.y + gl_LocalInvocationID.y;
    if (x >= pc.w || y >= pc.h) return;
    uint b = y / pc.band;
    if (b == 0u) return;
    for (int c = 0; c < IN_C; c++) {
        uint i = (y * pc.w + x) * uint(IN_C) + uint(c);
        sat_put(i, mask(sat_get(i) + U64Buf(pc.colcarry).v[(b * pc.w + x) * uint(IN_C) + uint(c)]));
    }
}

void main()
{
    if (PASS == 0) rows();
    else if (PASS == 1) rowcarry();
    else if (PASS == 2) cols();
    else if (PASS == 3) colcarry();
    else fix();
}
