#version 460
// boxblur: mean over the (2r+1)^2 window clipped to the image, from the
// summed-area table (integral.comp): four table reads per sample whatever r.
// The sum is exact (modular arithmetic, table wide enough for the box), the
// mean is rounded to nearest in integers: (2 sum + n) / (2 n).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"

layout(constant_id = 8) const int WIDE = 0;
layout(constant_id = 9) const uint LEVELS = 255u;

layout(push_constant) uniform Push {
    uvec2 sat, dst;
    int w, h, r;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer U64Buf { uint64_t v[]; };

uint64_t S(int x, int y, int c)
{
    if (x < 0 || y < 0) return 0UL;
    uint i = (uint(y) * uint(pc.w) + uint(x)) * uint(IN_C) + uint(c);
    return WIDE != 0 ? U64Buf(pc.sat).v[i] : uint64_t(U32Buf(pc.sat).v[i]);
}

void main()
{
    int x = int(gl_GlobalInvocationID.x), y = int(gl_GlobalInvocationID.y);
    if (x >= pc.w || y >= pc.h) return;
    int x0 = max(x - pc.r, 0) - 1, x1 = min(x + pc.r, pc.w - 1);
    int y0 = max(y - pc.r, 0) - 1, y1 = min(y + pc.r, pc.h - 1);
    uint64_t n = uint64_t(x1 - x0) * uint64_t(y1 - y0);
    for (int c = 0; c < IN_C; c++) {
        uint64_t sum = S(x1, y1, c) - S(x0, y1, c) - S(x1, y0, c) + S(x0, y0, c);
        if (WIDE == 0) sum &= 0xffffffffUL;
        uint64_t q = (2UL * sum + n) / (2UL * n);
        store_sample(pc.dst, OUT_FMT, (uint(y) * uint(pc.w) + uint(x)) * uint(OUT_C) + uint(c), float(q) / float(LEVELS));
    }
}
