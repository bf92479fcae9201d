#version 460
// bench helpers (not an op): MODE 0 fills a buffer with pseudo-random words
// (never all zeros: a hash of the index); MODE 1 copies 16-byte vectors between
// two buffers, the device-copy ceiling bench reports percentages against; MODE 2
// reads 16-byte vectors of a buffer (the time to read an image once), folding
// them into one word that is written only if it is the seed (never, in practice:
// but the compiler cannot drop the reads).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int MODE = 0;
layout(constant_id = 9) const int FLOATS = 0; // MODE 0: write floats in [0,1)

layout(buffer_reference, std430, buffer_reference_align = 16) buffer V4Buf { uvec4 v[]; };

layout(push_constant) uniform Push {
    uvec2 src, dst;
    uint n; // words (MODE 0) or vec4s (MODE 1, 2)
    uint seed;
} pc;

uint hash(uint x)
{
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void main()
{
    uint stride = gl_WorkGroupSize.x * gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    if (MODE == 2) {
        uvec4 acc = uvec4(0u);
        for (uint i = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < pc.n; i += stride)
            acc ^= V4Buf(pc.src).v[i];
        uint x = acc.x ^ acc.y ^ acc.z ^ acc.w;
        if (x == pc.seed)
            U32Buf(pc.dst).v[0] = x;
        return;
    }
    for (uint i = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x; i < pc.n; i += stride) {
        if (MODE == 0) {
            uint h = hash(i ^ pc.seed);
            U32Buf(pc.dst).v[i] = FLOATS != 0 ? floatBitsToUint(float(h >> 8) * (1.0 / 16777216.0)) : h;
        } else {
            V4Buf(pc.dst).v[i] = V4Buf(pc.src).v[i];
        }
    }
}
