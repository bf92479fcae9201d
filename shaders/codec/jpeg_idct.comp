#version 460
// jpeg_idct: one component of a coded JPEG (core/coded.h) to its samples:
// dequantization and libjpeg's accurate integer IDCT (jidctint.c,
// jpeg_idct_islow: CONST_BITS 13, PASS1_BITS 2, its rounding and its range
// limiting), so the samples are TurboJPEG's. A workgroup is 8 blocks of 8
// invocations: one loads a quarter of its block's coefficients, transforms a
// column (pass 1), then a row (pass 2), and stores the row's 8 samples as two
// words. Samples: a plane of bw*8 x bh*8 bytes, block (bx, by) at (8bx, 8by).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "jpeg.glsl"

layout(push_constant) uniform Push {
    uvec2 coefs; // the component's first block (int16, 64 a block, natural order)
    uvec2 plane; // its samples
    uvec2 quant; // 64 uints: the quantization table, natural order
    uint bw;     // blocks in a row
    uint nblocks;
} pc;

shared int cf[8][64]; // dequantized coefficients, then pass 1's output
shared int ws[8][64];

// libjpeg's post-IDCT range limit: the table indexed by (x & 1023), which is
// x + 128 clamped to 0..255 for |x| < 512 and wraps beyond
uint range_limit(int x)
{
    uint v = uint(x) & 1023u;
    return v < 128u ? v + 128u : v < 512u ? 255u : v < 896u ? 0u : v - 896u;
}

// One 8-point pass of jpeg_idct_islow on d[0..7]: even part, odd part; the
// results before descaling (o[0..7] in output order).
void idct8(int d0, int d1, int d2, int d3, int d4, int d5, int d6, int d7, out int o[8])
{
    int z2 = d2, z3 = d6;
    int z1 = (z2 + z3) * FIX_0_541196100;
    int tmp2 = z1 + z3 * -FIX_1_847759065;
    int tmp3 = z1 + z2 * FIX_0_765366865;
    int tmp0 = (d0 + d4) << 13;
    int tmp1 = (d0 - d4) << 13;
    int tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3, tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;

    tmp0 = d7;
    tmp1 = d5;
    tmp2 = d3;
    tmp3 = d1;
    z1 = tmp0 + tmp3;
    z2 = tmp1 + tmp2;
    z3 = tmp0 + tmp2;
    int z4 = tmp1 + tmp3;
    int z5 = (z3 + z4) * FIX_1_175875602;
    tmp0 *= FIX_0_298631336;
    tmp1 *= FIX_2_053119869;
    tmp2 *= FIX_3_072711026;
    tmp3 *= FIX_1_501321110;
    z1 *= -FIX_0_899976223;
    z2 *= -FIX_2_562915447;
    z3 = z3 * -FIX_1_961570560 + z5;
    z4 = z4 * -FIX_0_390180644 + z5;
    tmp0 += z1 + z3;
    tmp1 += z2 + z4;
    tmp2 += z2 + z3;
    tmp3 += z1 + z4;
    o[0] = tmp10 + tmp3;
    o[7] = tmp10 - tmp3;
    o[1] = tmp11 + tmp2;
    o[6] = tmp11 - tmp2;
    o[2] = tmp12 + tmp1;
    o[5] = tmp12 - tmp1;
    o[3] = tmp13 + tmp0;
    o[4] = tmp13 - tmp0;
}

layout(buffer_reference, std430, buffer_reference_align = 16) buffer V4Buf { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer V2Buf { uvec2 v[]; };

int lo16(uint w) { return int(w << 16) >> 16; }
int hi16(uint w) { return int(w) >> 16; }

void main()
{
    const uint blk = gl_LocalInvocationID.x >> 3, lane = gl_LocalInvocationID.x & 7u;
    const uint b = group_linear() * 8u + blk;
    const bool live = b < pc.nblocks;
    if (live) { // coefficients 8*lane .. 8*lane+7 of the block (16 of its 128 bytes), dequantized
        uvec4 w = V4Buf(pc.coefs).v[b * 8u + lane];
        U32Buf q = U32Buf(pc.quant);
        uint k = lane * 8u;
        cf[blk][k] = lo16(w.x) * int(q.v[k]);
        cf[blk][k + 1] = hi16(w.x) * int(q.v[k + 1]);
        cf[blk][k + 2] = lo16(w.y) * int(q.v[k + 2]);
        cf[blk][k + 3] = hi16(w.y) * int(q.v[k + 3]);
        cf[blk][k + 4] = lo16(w.z) * int(q.v[k + 4]);
        cf[blk][k + 5] = hi16(w.z) * int(q.v[k + 5]);
        cf[blk][k + 6] = lo16(w.w) * int(q.v[k + 6]);
        cf[blk][k + 7] = hi16(w.w) * int(q.v[k + 7]);
    }
    barrier();
    int o[8];
    if (live) { // pass 1: column `lane`, scaled by 2^PASS1_BITS
        idct8(cf[blk][lane], cf[blk][8 + lane], cf[blk][16 + lane], cf[blk][24 + lane], cf[blk][32 + lane],
              cf[blk][40 + lane], cf[blk][48 + lane], cf[blk][56 + lane], o);
        for (int r = 0; r < 8; r++)
            ws[blk][r * 8 + int(lane)] = descale(o[r], 13 - 2);
    }
    barrier();
    if (!live)
        return;
    // pass 2: row `lane`, descaled by 8 and 2^PASS1_BITS, range-limited
    const uint k = lane * 8u;
    idct8(ws[blk][k], ws[blk][k + 1], ws[blk][k + 2], ws[blk][k + 3], ws[blk][k + 4], ws[blk][k + 5], ws[blk][k + 6],
          ws[blk][k + 7], o);
    uint s[8];
    for (int c = 0; c < 8; c++)
        s[c] = range_limit(descale(o[c], 13 + 2 + 3));
    const uint bx = b % pc.bw, by = b / pc.bw;
    // the row's 8 bytes, at (8*by + lane) * pitch + 8*bx with pitch = 8*bw: uvec2 index
    V2Buf(pc.plane).v[(by * 8u + lane) * pc.bw + bx] =
        uvec2(s[0] | s[1] << 8 | s[2] << 16 | s[3] << 24, s[4] | s[5] << 8 | s[6] << 16 | s[7] << 24);
}
