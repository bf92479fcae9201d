#version 460
// boxblur: mean over the (2r+1)^2 window clipped to the image, from the
// summed-area table (integral.comp): four table reads per sample whatever r.
// The sum is exact (modular arithmetic, table wide enough for the box), the
// mean is rounded to nearest in integers: (2 sum + n) / (2 n).
//
// boxblur_lines.spv (BOXBLUR_LINES_ONLY) is the CPU devices' shape: where every
// window is whole (x and y in [r + 1, side - 1 - r]), n is (2r + 1)^2 and the
// table entries of S consecutive samples of a row are 4 runs of S entries,
// read as 64-bit words; the quotient comes from a double and is corrected by
// one in integers (exact); 8-bit outputs go as whole words. The pixels outside
// those strips are a dispatch of their own (EDGE), the code below a pixel each.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// vkimg-variant: lines BOXBLUR_LINES_ONLY cpu
#ifndef BOXBLUR_LINES_ONLY
#define BOXBLUR_LINES_ONLY 0
#endif
#include "common.glsl"
#if BOXBLUR_LINES_ONLY
#include "words.glsl"
#endif

layout(constant_id = 8) const int WIDE = 0;
layout(constant_id = 9) const uint LEVELS = 255u;
layout(constant_id = 10) const int NS = 8;   // lines: samples a strip (8, or 24 for 3 channels)
layout(constant_id = 11) const int EDGE = 0; // lines: the pixels outside the strips, one an invocation

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

void box_pixel(int x, int y)
{
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

#if BOXBLUR_LINES_ONLY
#include "boxes.glsl"

void main()
{
    const uint id = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
    if (EDGE != 0) {
        const ivec2 p = box_edge_pixel(id);
        if (p.x >= 0)
            box_pixel(p.x, p.y);
        return;
    }
    const ivec2 st = box_strip(id);
    if (st.x < 0)
        return;
    const uint y = uint(st.x), s0 = uint(st.y), rowlen = uint(pc.w * IN_C);
    uint64_t sums[NS];
    BOX_SUMS(y, s0, sums)
    const uint64_t n2 = 2UL * uint64_t(2 * pc.r + 1) * uint64_t(2 * pc.r + 1);
    const double inv = 1.0LF / double(n2);
    uint q[MAX_WORDS];
    [[unroll]] for (int j = 0; j < NS / 4; j++)
        q[j] = 0u;
    [[unroll]] for (int j = 0; j < NS; j++) {
        const uint64_t num = 2UL * sums[j] + (n2 >> 1);
        // floor(num / n2): num is odd and n2 even, so the quotient is at least 1 / n2 from
        // an integer, more than the double's error while the window fits the image; the
        // correction by one in integers keeps it exact whatever the sizes
        uint64_t m = uint64_t(double(num) * inv);
        m = m * n2 > num ? m - 1UL : (m + 1UL) * n2 <= num ? m + 1UL : m;
        if (OUT_FMT == FMT_U8 && LEVELS == 255u)
            q[j >> 2] |= uint(m) << (8 * (j & 3));
        else
            store_sample(pc.dst, OUT_FMT, y * rowlen + s0 + uint(j), float(m) / float(LEVELS));
    }
    if (OUT_FMT == FMT_U8 && LEVELS == 255u)
        store_words(pc.dst, y * rowlen + s0, NS / 4, q);
}
#else
void main()
{
    int x = int(gl_GlobalInvocationID.x), y = int(gl_GlobalInvocationID.y);
    if (x >= pc.w || y >= pc.h) return;
    box_pixel(x, y);
}
#endif
