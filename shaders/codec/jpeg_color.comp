#version 460
// jpeg_color: a coded JPEG's component samples (jpeg_idct's planes) to packed
// 8-bit pixels, as libjpeg-turbo's decoder with TurboJPEG's settings: chroma
// upsampled smoothly ("fancy": jdsample.c's h2v1 and h2v2 triangle filters,
// edges replicated, box replication where a component is at most 2 samples
// wide) and YCbCr to RGB by jdcolor.c's fixed-point tables (SCALEBITS 16), or
// the Y samples as they are for grayscale. An invocation makes 4 consecutive
// pixels (12 or 4 bytes: whole words; the buffer is padded to them).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int NCOMP = 3; // 1: gray, 3: YCbCr (named: vki_spec_named)

layout(push_constant) uniform Push {
    uvec2 plane[3]; // Y, Cb, Cr samples: rows of pitch[k] bytes
    uvec2 dst;
    uint pitch[3];
    uint cw[3], ch[3]; // the components' sample sizes (libjpeg's downsampled_width/height)
    uint mode[3];      // hs | vs << 4: 1|1<<4 full size, 2|1<<4 h2v1, 2|2<<4 h2v2
    uint w, npx;
} pc;

uint smp(uint k, uint x, uint y)
{
    return uint(U8Buf(pc.plane[k]).v[y * pc.pitch[k] + x]);
}

// component k's sample for pixel (x, y), upsampled
uint chroma(uint k, uint x, uint y)
{
    const uint m = pc.mode[k], dw = pc.cw[k];
    if (m == 0x11u)
        return smp(k, x, y);
    const uint i = x >> 1;
    if (m == 0x12u) { // h2v1
        if (dw <= 2u)
            return smp(k, i, y);
        if ((x & 1u) == 0u)
            return (3u * smp(k, i, y) + smp(k, i > 0u ? i - 1u : 0u, y) + 1u) >> 2;
        return (3u * smp(k, i, y) + smp(k, min(i + 1u, dw - 1u), y) + 2u) >> 2;
    }
    // h2v2: the nearer row 3/4, the other (above for an even row, below for an odd one) 1/4
    const uint r = y >> 1;
    if (dw <= 2u)
        return smp(k, i, r);
    const uint r2 = (y & 1u) == 0u ? (r > 0u ? r - 1u : 0u) : min(r + 1u, pc.ch[k] - 1u);
    const uint j = (x & 1u) == 0u ? (i > 0u ? i - 1u : 0u) : min(i + 1u, dw - 1u);
    const uint sum_i = 3u * smp(k, i, r) + smp(k, i, r2);
    const uint sum_j = 3u * smp(k, j, r) + smp(k, j, r2);
    return (x & 1u) == 0u ? (3u * sum_i + sum_j + 8u) >> 4 : (3u * sum_i + sum_j + 7u) >> 4;
}

uvec3 rgb_of(uint p)
{
    const uint y = p / pc.w, x = p - y * pc.w;
    const int Y = int(smp(0u, x, y));
    if (NCOMP == 1)
        return uvec3(Y);
    const int cb = int(chroma(1u, x, y)) - 128, cr = int(chroma(2u, x, y)) - 128;
    const int r = Y + ((91881 * cr + 32768) >> 16);
    const int g = Y + ((-22554 * cb + 32768 - 46802 * cr) >> 16);
    const int b = Y + ((116130 * cb + 32768) >> 16);
    return uvec3(clamp(ivec3(r, g, b), 0, 255));
}

void main()
{
    const uint i = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    const uint p0 = i * 4u;
    if (p0 >= pc.npx)
        return;
    uvec3 c[4];
    for (uint j = 0u; j < 4u; j++)
        c[j] = rgb_of(min(p0 + j, pc.npx - 1u)); // past the end: the padding gets the last pixel
    U32Buf d = U32Buf(pc.dst);
    if (NCOMP == 1) {
        d.v[i] = c[0].x | c[1].x << 8 | c[2].x << 16 | c[3].x << 24;
        return;
    }
    d.v[3u * i] = c[0].x | c[0].y << 8 | c[0].z << 16 | c[1].x << 24;
    d.v[3u * i + 1u] = c[1].y | c[1].z << 8 | c[2].x << 16 | c[2].y << 24;
    d.v[3u * i + 2u] = c[2].z | c[3].x << 8 | c[3].y << 16 | c[3].z << 24;
}
