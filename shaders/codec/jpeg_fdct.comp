#version 460
// jpeg_fdct: one component of an 8-bit image coded for a JPEG (core/coded.h),
// as libjpeg-turbo's encoder with TurboJPEG's settings: RGB to YCbCr by
// jccolor.c's fixed-point tables (SCALEBITS 16, Cb and Cr rounded by 0.5 -
// epsilon), 2x2 chroma averages with jcsample.c's alternating bias 1, 2 (4:2:0),
// edges padded as its prep controller pads them; TurboJPEG's forward DCT, the
// fast integer one (jfdctfst.c, jpeg_fdct_ifast) below quality 96 and the
// accurate one (jfdctint.c, jpeg_fdct_islow) from 96, and jcdctmgr.c's
// quantization (its reciprocals divide rounding to nearest, half up). A
// workgroup is 8 blocks of 8 invocations: one transforms a row (pass 1), then a
// column (pass 2), and stores a quarter of the block's coefficients.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "jpeg.glsl"

layout(push_constant) uniform Push {
    uvec2 src;    // the image: w x h, c channels of 8 bits, packed
    uvec2 coefs;  // the component's first block (int16, 64 a block, natural order)
    uvec2 quant;  // 64 uints: the quantization divisors of the DCT's outputs, natural order
    uint w, h, c;
    uint comp;    // 0: Y, 1: Cb, 2: Cr
    uint sub;     // 1: the component is the image's size, 2: half of it each way (4:2:0)
    uint ch;      // the component's rows (libjpeg's downsampled_height)
    uint bw, nblocks;
} pc;

shared int ws[8][64];

layout(constant_id = 8) const int ACCURATE = 0; // 1: jpeg_fdct_islow (TurboJPEG from quality 96), 0: jpeg_fdct_ifast

// jfdctfst.c's constants (CONST_BITS 8)
const int AAN_0_382683433 = 98, AAN_0_541196100 = 139, AAN_0_707106781 = 181, AAN_1_306562965 = 334;

// jfdctfst.c's MULTIPLY: CONST_BITS 8, truncated
int mul8(int x, int c)
{
    return (x * c) >> 8;
}

// the component's value at pixel (x, y), clamped into the image
int comp_at(uint x, uint y)
{
    x = min(x, pc.w - 1u);
    y = min(y, pc.h - 1u);
    U8Buf s = U8Buf(pc.src);
    const uint i = (y * pc.w + x) * pc.c;
    if (pc.c <= 2u)
        return int(s.v[i]);
    const int r = int(s.v[i]), g = int(s.v[i + 1u]), b = int(s.v[i + 2u]);
    if (pc.comp == 0u)
        return (19595 * r + 38470 * g + 7471 * b + 32768) >> 16;
    if (pc.comp == 1u)
        return (-11059 * r - 21709 * g + 32768 * b + (128 << 16) + 32767) >> 16;
    return (32768 * r - 27439 * g - 5329 * b + (128 << 16) + 32767) >> 16;
}

// the component's sample (x, y): rows past the component's repeat its last one
int sample_at(uint x, uint y)
{
    if (pc.sub == 1u)
        return comp_at(x, y);
    y = min(y, pc.ch - 1u);
    const int bias = (x & 1u) == 0u ? 1 : 2;
    return (comp_at(2u * x, 2u * y) + comp_at(2u * x + 1u, 2u * y) + comp_at(2u * x, 2u * y + 1u) +
            comp_at(2u * x + 1u, 2u * y + 1u) + bias) >> 2;
}

// One 8-point pass of jpeg_fdct_ifast (the AA&N DCT; its outputs are scaled by
// factors that the quantization divisors fold in).
void fdct8(int d0, int d1, int d2, int d3, int d4, int d5, int d6, int d7, out int o[8])
{
    int tmp0 = d0 + d7, tmp7 = d0 - d7, tmp1 = d1 + d6, tmp6 = d1 - d6;
    int tmp2 = d2 + d5, tmp5 = d2 - d5, tmp3 = d3 + d4, tmp4 = d3 - d4;
    int tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3, tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
    o[0] = tmp10 + tmp11;
    o[4] = tmp10 - tmp11;
    int z1 = mul8(tmp12 + tmp13, AAN_0_707106781);
    o[2] = tmp13 + z1;
    o[6] = tmp13 - z1;
    tmp10 = tmp4 + tmp5;
    tmp11 = tmp5 + tmp6;
    tmp12 = tmp6 + tmp7;
    int z5 = mul8(tmp10 - tmp12, AAN_0_382683433);
    int z2 = mul8(tmp10, AAN_0_541196100) + z5;
    int z4 = mul8(tmp12, AAN_1_306562965) + z5;
    int z3 = mul8(tmp11, AAN_0_707106781);
    int z11 = tmp7 + z3, z13 = tmp7 - z3;
    o[5] = z13 + z2;
    o[3] = z13 - z2;
    o[1] = z11 + z4;
    o[7] = z11 - z4;
}

// One 8-point pass of jpeg_fdct_islow (CONST_BITS 13, PASS1_BITS 2): pass 1
// (rows) scales up by 2^PASS1_BITS, pass 2 (columns) descales it again.
void fdct8_islow(bool pass1, int d0, int d1, int d2, int d3, int d4, int d5, int d6, int d7, out int o[8])
{
    int tmp0 = d0 + d7, tmp7 = d0 - d7, tmp1 = d1 + d6, tmp6 = d1 - d6;
    int tmp2 = d2 + d5, tmp5 = d2 - d5, tmp3 = d3 + d4, tmp4 = d3 - d4;
    int tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3, tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
    const int n = pass1 ? 13 - 2 : 13 + 2;
    o[0] = pass1 ? (tmp10 + tmp11) << 2 : descale(tmp10 + tmp11, 2);
    o[4] = pass1 ? (tmp10 - tmp11) << 2 : descale(tmp10 - tmp11, 2);
    int z1 = (tmp12 + tmp13) * FIX_0_541196100;
    o[2] = descale(z1 + tmp13 * FIX_0_765366865, n);
    o[6] = descale(z1 + tmp12 * -FIX_1_847759065, n);
    z1 = tmp4 + tmp7;
    int z2 = tmp5 + tmp6, z3 = tmp4 + tmp6, z4 = tmp5 + tmp7;
    int z5 = (z3 + z4) * FIX_1_175875602;
    tmp4 *= FIX_0_298631336;
    tmp5 *= FIX_2_053119869;
    tmp6 *= FIX_3_072711026;
    tmp7 *= FIX_1_501321110;
    z1 *= -FIX_0_899976223;
    z2 *= -FIX_2_562915447;
    z3 = z3 * -FIX_1_961570560 + z5;
    z4 = z4 * -FIX_0_390180644 + z5;
    o[7] = descale(tmp4 + z1 + z3, n);
    o[5] = descale(tmp5 + z2 + z4, n);
    o[3] = descale(tmp6 + z2 + z3, n);
    o[1] = descale(tmp7 + z1 + z4, n);
}

layout(buffer_reference, std430, buffer_reference_align = 16) buffer V4Buf { uvec4 v[]; };

void main()
{
    const uint blk = gl_LocalInvocationID.x >> 3, lane = gl_LocalInvocationID.x & 7u;
    const uint b = group_linear() * 8u + blk;
    const bool live = b < pc.nblocks;
    const uint bx = b % pc.bw, by = b / pc.bw;
    int o[8];
    if (live) { // pass 1: row `lane` of the block, level-shifted samples
        const uint x0 = bx * 8u, y = by * 8u + lane;
        int d[8];
        for (uint c = 0u; c < 8u; c++)
            d[c] = sample_at(x0 + c, y) - 128;
        if (ACCURATE != 0)
            fdct8_islow(true, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], o);
        else
            fdct8(d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], o);
        for (int c = 0; c < 8; c++)
            ws[blk][lane * 8u + c] = o[c];
    }
    barrier();
    int q[8];
    if (live) { // pass 2: column `lane`; quantized: divided by the divisors, rounded to nearest
        int d[8];
        for (int r = 0; r < 8; r++)
            d[r] = ws[blk][r * 8 + int(lane)];
        if (ACCURATE != 0)
            fdct8_islow(false, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], o);
        else
            fdct8(d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], o);
        U32Buf dv = U32Buf(pc.quant);
        for (int r = 0; r < 8; r++) {
            const int d = int(dv.v[r * 8 + int(lane)]);
            const int v = (abs(o[r]) + (d >> 1)) / d;
            q[r] = o[r] < 0 ? -v : v;
        }
    }
    barrier();
    if (live)
        for (int r = 0; r < 8; r++)
            ws[blk][r * 8 + int(lane)] = q[r];
    barrier();
    if (!live)
        return;
    const uint k = lane * 8u; // coefficients 8*lane .. 8*lane+7: 16 bytes
    uvec4 wv;
    wv.x = (uint(ws[blk][k]) & 0xffffu) | uint(ws[blk][k + 1]) << 16;
    wv.y = (uint(ws[blk][k + 2]) & 0xffffu) | uint(ws[blk][k + 3]) << 16;
    wv.z = (uint(ws[blk][k + 4]) & 0xffffu) | uint(ws[blk][k + 5]) << 16;
    wv.w = (uint(ws[blk][k + 6]) & 0xffffu) | uint(ws[blk][k + 7]) << 16;
    V4Buf(pc.coefs).v[b * 8u + lane] = wv;
}
