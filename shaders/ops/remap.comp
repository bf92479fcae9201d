#version 460
// remap: exact integer pixel moves -- flips, transposes, rotations by multiples
// of 90 degrees, crops (and EXIF orientations): output pixel (x, y) is input pixel
//   (ix, iy) = (M0 x + M1 y + M2, M3 x + M4 y + M5)
// with M0..M5 integers (src/ops/remap.c). Every input pixel a 32 x 32 tile of the
// output reads lies in one 32 x 32 block of the input; a workgroup of 32 x 8 loads
// that block with rows along x (coalesced), keeps it in shared memory, and writes
// the tile with rows along x: transposing moves are no slower than copies.
//
// remap_lines.spv (REMAP_LINES_ONLY) is the CPU devices' shape, for moves that
// keep the format and the channels: lavapipe runs a workgroup as SIMD lanes and
// turns each buffer access into a loop over the lanes, so the tile's byte loads
// and shared memory cost 200-300 ms for 5120x2880 RGB where a copy takes 40.
// There an invocation owns a block of the output and moves bytes: it reads L
// lines of K pixels of the input (a line lies along an input row: the input
// pixels of an output row, or with SWAP of an output column) as 64-bit words,
// puts each output row's bytes together in registers (every index a
// compile-time constant; reversed lines chosen with selects) and writes the row
// as whole words. The pixels outside whole blocks go one an invocation (EDGE).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// vkimg-variant: lines REMAP_LINES_ONLY cpu
#ifndef REMAP_LINES_ONLY
#define REMAP_LINES_ONLY 0
#endif
#include "common.glsl"
#if REMAP_LINES_ONLY
#include "words.glsl"
#endif

layout(push_constant) uniform Push {
    uvec2 src, dst;
    uint in_w, in_h, out_w, out_h;
    int m0, m1, m2, m3, m4, m5;
} pc;

// The input pixel of output pixel o.
ivec2 map(ivec2 o)
{
    return ivec2(pc.m0 * o.x + pc.m1 * o.y + pc.m2, pc.m3 * o.x + pc.m4 * o.y + pc.m5);
}

#if REMAP_LINES_ONLY
layout(constant_id = 8) const int PB = 3;      // bytes a pixel (the format's times the channels)
layout(constant_id = 9) const int K = 8;       // pixels a line (K PB a multiple of 4)
layout(constant_id = 10) const int L = 1;      // lines an invocation
layout(constant_id = 11) const int SWAP = 0;   // lines are output columns (transposing moves)
layout(constant_id = 12) const int EDGE = 0;   // the pixels outside whole blocks, one an invocation
layout(constant_id = 13) const int ALIGN8 = 0; // every output row starts at a multiple of 8 bytes

const int U = PB % 4 == 0 ? 4 : PB % 2 == 0 ? 2 : 1; // bytes moved as one unit
const int NWL = K * PB / 4;                          // words a line
const int BW = SWAP != 0 ? L : K, BH = SWAP != 0 ? K : L; // the block, in output pixels
const int RW = BW * PB / 4;                          // words an output row of the block

// The U bytes at byte O of the lines.
#define UNIT_AT(O) (U == 4 ? lw[(O) >> 2] : bitfieldExtract(lw[(O) >> 2], 8 * ((O) & 3), 8 * U))

void edge_pixel(uint p)
{
    const uint xw = pc.out_w / uint(BW) * uint(BW), yh = pc.out_h / uint(BH) * uint(BH);
    const uint rw = pc.out_w - xw, n1 = rw * pc.out_h, n2 = xw * (pc.out_h - yh);
    if (p >= n1 + n2)
        return;
    // divisors at least 1: lavapipe runs both sides of the choice, masked
    const uint q = p < n1 ? p : p - n1, dv = p < n1 ? max(rw, 1u) : max(xw, 1u);
    const uvec2 o = p < n1 ? uvec2(xw + q % dv, q / dv) : uvec2(q % dv, yh + q / dv);
    const ivec2 i = map(ivec2(o));
    const uint s = (uint(i.y) * pc.in_w + uint(i.x)) * uint(PB), d = (o.y * pc.out_w + o.x) * uint(PB);
    for (uint b = 0u; b < uint(PB); b++)
        U8Buf(pc.dst).v[d + b] = U8Buf(pc.src).v[s + b];
}

void main()
{
    const uint id = group_linear() * (gl_WorkGroupSize.x * gl_WorkGroupSize.y) + gl_LocalInvocationIndex;
    if (EDGE != 0) {
        edge_pixel(id);
        return;
    }
    const uint nbx = pc.out_w / uint(BW);
    if (id >= nbx * (pc.out_h / uint(BH)))
        return;
    const ivec2 o0 = ivec2(int(id % nbx) * BW, int(id / nbx) * BH);
    const uint last = (pc.in_w * pc.in_h * uint(PB) - 1u) >> 3;
    // along a line the input x goes down where m0 (m1 with SWAP) is negative
    const bool rev = (SWAP != 0 ? pc.m1 : pc.m0) < 0;
    uint lw[L * NWL];
    [[unroll]] for (int l = 0; l < L; l++) {
        const ivec2 a = map(o0 + (SWAP != 0 ? ivec2(l, 0) : ivec2(0, l)));
        const ivec2 b = map(o0 + (SWAP != 0 ? ivec2(l, K - 1) : ivec2(K - 1, l)));
        uint w[NWL];
        LOAD_WINDOW(pc.src, (uint(a.y) * pc.in_w + uint(min(a.x, b.x))) * uint(PB), last, NWL, w)
        [[unroll]] for (int k = 0; k < NWL; k++)
            lw[l * NWL + k] = w[k];
    }
    [[unroll]] for (int r = 0; r < BH; r++) {
        uint q[MAX_WORDS];
        [[unroll]] for (int k = 0; k < RW; k++)
            q[k] = 0u;
        [[unroll]] for (int j = 0; j < RW * 4; j += U) {
            // byte j of the row: byte j % PB of pixel j / PB, which is pixel p of line n
            const int n = SWAP != 0 ? j / PB : r, p = SWAP != 0 ? r : j / PB;
            const int f = n * NWL * 4 + p * PB + j % PB, g = n * NWL * 4 + (K - 1 - p) * PB + j % PB;
            const uint v = rev ? UNIT_AT(g) : UNIT_AT(f);
            q[j >> 2] |= U == 4 ? v : v << (8 * (j & 3));
        }
        const uint d = (uint(o0.y + r) * pc.out_w + uint(o0.x)) * uint(PB);
        if (ALIGN8 != 0) {
            [[unroll]] for (int k = 0; k < RW / 2; k++)
                S8Buf(pc.dst).v[(d >> 3) + uint(k)] = packUint2x32(uvec2(q[2 * k], q[2 * k + 1]));
        } else {
            store_words(pc.dst, d, RW, q);
        }
    }
}
#else
shared vec4 tile[32][33];

void main()
{
    uvec2 t = gl_LocalInvocationID.xy;
    ivec2 o0 = ivec2(gl_WorkGroupID.xy) * 32; // the output tile's corner
    // the input block: the image of the tile's two opposite corners
    ivec2 c0 = map(o0), c1 = map(o0 + ivec2(31));
    ivec2 b0 = min(c0, c1);
    for (uint k = 0u; k < 32u; k += gl_WorkGroupSize.y) {
        ivec2 i = b0 + ivec2(t.x, t.y + k);
        if (i.x >= 0 && i.y >= 0 && i.x < int(pc.in_w) && i.y < int(pc.in_h))
            tile[t.y + k][t.x] = load_px(pc.src, uint(i.y) * pc.in_w + uint(i.x));
    }
    barrier();
    for (uint k = 0u; k < 32u; k += gl_WorkGroupSize.y) {
        ivec2 o = o0 + ivec2(t.x, t.y + k);
        if (o.x >= int(pc.out_w) || o.y >= int(pc.out_h))
            continue;
        ivec2 i = map(o) - b0;
        store_px(pc.dst, uint(o.y) * pc.out_w + uint(o.x), tile[i.y][i.x]);
    }
}
#endif
