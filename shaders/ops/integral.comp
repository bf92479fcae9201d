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
//
// integral_lines.spv (SAT_LINES_ONLY) is the CPU devices' shape, for 8- and
// 16-bit input: lavapipe runs a workgroup as SIMD lanes, turns each buffer
// access into a loop over the lanes and each barrier into a switch of every
// invocation, so the scans above took 1.5 s for 5120x2880 RGB. A row's samples
// go in strips of S (8, or 24 for 3 channels: whole 64-bit words, each sample's
// channel a compile-time constant):
//   5 STRIPS   one invocation a row: the row's sums before each strip, per
//              channel (rowcarry, u32: a row's sum fits).
//   6 COLUMNS  one invocation a strip (TAIL: the row's last, partial strip):
//              walks down the rows, each strip's row prefixes from its words and
//              rowcarry, added to the strip's running column sums, written as
//              whole words. Every table entry is written once.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// vkimg-variant: lines SAT_LINES_ONLY cpu
#ifndef SAT_LINES_ONLY
#define SAT_LINES_ONLY 0
#endif
#include "common.glsl"
#if SAT_LINES_ONLY
#include "words.glsl"
#endif

layout(constant_id = 8) const int PASS = 0;
layout(constant_id = 9) const int K = 4;      // texels per invocation (ROWS)
layout(constant_id = 10) const int WIDE = 0;  // 1: uint64 table
layout(constant_id = 11) const uint LEVELS = 255u;
layout(constant_id = 12) const int S = 8;     // lines: samples a strip
layout(constant_id = 13) const int TAIL = 0;  // lines: the partial strip at the end of the rows
layout(constant_id = 14) const int PAIRS = 0; // lines: u32 entries written two a 64-bit word

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

#if SAT_LINES_ONLY
const int KW = IN_FMT == FMT_U8 ? 1 : 2; // bytes a sample
const int NWS = S * KW / 4;              // words a strip

// Sample J of a strip's words W.
#define STRIP_SAMPLE(W, J) \
    (KW == 1 ? bitfieldExtract(W[(J) >> 2], 8 * ((J) & 3), 8) : bitfieldExtract(W[(J) >> 1], 16 * ((J) & 1), 16))

// nseg: whole strips a row; rowcarry: (nseg + 1) x IN_C u32 a row
void strips()
{
    const uint y = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
    if (y >= pc.h)
        return;
    const uint row = y * pc.w * uint(IN_C * KW), last = (pc.w * pc.h * uint(IN_C * KW) - 1u) >> 3;
    const uint base = y * (pc.nseg + 1u) * uint(IN_C);
    uint carry[4] = { 0u, 0u, 0u, 0u };
    for (uint k = 0u; k <= pc.nseg; k++) {
        [[unroll]] for (int c = 0; c < IN_C; c++)
            U32Buf(pc.rowcarry).v[base + k * uint(IN_C) + uint(c)] = carry[c];
        uint w[NWS];
        LOAD_WINDOW(pc.src, row + k * uint(S * KW), last, NWS, w)
        [[unroll]] for (int j = 0; j < S; j++)
            carry[j % IN_C] += STRIP_SAMPLE(w, j);
    }
}

void columns()
{
    const uint k = TAIL != 0 ? pc.nseg : group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
    if (TAIL != 0 ? k != pc.nseg || gl_LocalInvocationIndex != 0u || group_linear() != 0u : k >= pc.nseg)
        return;
    const uint n = pc.w * uint(IN_C), t = n - k * uint(S); // samples a row, and in this strip
    const uint last = (pc.w * pc.h * uint(IN_C * KW) - 1u) >> 3;
    uint64_t acc[S];
    [[unroll]] for (int j = 0; j < S; j++)
        acc[j] = 0UL;
    for (uint y = 0u; y < pc.h; y++) {
        const uint e = y * n + k * uint(S); // the strip's first entry (and sample) of row y
        uint w[NWS];
        LOAD_WINDOW(pc.src, e * uint(KW), last, NWS, w)
        uint run[4];
        [[unroll]] for (int c = 0; c < IN_C; c++)
            run[c] = U32Buf(pc.rowcarry).v[(y * (pc.nseg + 1u) + k) * uint(IN_C) + uint(c)];
        // (in the tail, samples past t, the next row's, reach only entries past t: not written)
        [[unroll]] for (int j = 0; j < S; j++) {
            run[j % IN_C] += STRIP_SAMPLE(w, j);
            acc[j] = mask(acc[j] + uint64_t(run[j % IN_C]));
        }
        if (TAIL != 0) {
            [[unroll]] for (int j = 0; j < S; j++)
                if (uint(j) < t)
                    sat_put(e + uint(j), acc[j]);
        } else if (WIDE != 0) {
            [[unroll]] for (int j = 0; j < S; j++)
                U64Buf(pc.sat).v[e + uint(j)] = acc[j];
        } else if (PAIRS != 0) {
            [[unroll]] for (int j = 0; j < S; j += 2)
                U64Buf(pc.sat).v[(e >> 1) + uint(j / 2)] = acc[j] | (acc[j + 1] << 32);
        } else {
            [[unroll]] for (int j = 0; j < S; j++)
                U32Buf(pc.sat).v[e + uint(j)] = uint(acc[j]);
        }
    }
}
#endif

void main()
{
#if SAT_LINES_ONLY
    if (PASS == 5) strips();
    else columns();
    return;
#endif
    if (PASS == 0) rows();
    else if (PASS == 1) rowcarry();
    else if (PASS == 2) cols();
    else if (PASS == 3) colcarry();
    else fix();
}
