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
// vkimg-variant: lines BOXBLUR_LINES_ONLY
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
// The interior: pixels [r + 1, w - r) x [r + 1, h - r), or none where a row of it
// is narrower than a strip.
ivec4 interior()
{
    const int x0 = pc.r + 1, x1 = pc.w - pc.r, y0 = pc.r + 1, y1 = pc.h - pc.r;
    return x1 > x0 && y1 > y0 && (x1 - x0) * IN_C >= NS ? ivec4(x0, x1, y0, y1) : ivec4(0);
}

// Pixel p of those outside the interior: the rows above it, those below it, then
// its rows' parts left and right of it.
void edge(uint p)
{
    const ivec4 in_ = interior();
    const uint w = uint(pc.w), top = uint(in_.z), bot = uint(pc.h - in_.w), left = uint(in_.x),
               right = uint(pc.w - in_.y), side = left + right;
    const uint nt = top * w, nb = bot * w, nm = uint(in_.w - in_.z) * side;
    if (p >= nt + nb + nm)
        return;
    // divisors at least 1: lavapipe runs every side of the choice, masked
    const uint q = p < nt ? p : p < nt + nb ? p - nt : p - nt - nb, dv = p < nt + nb ? w : max(side, 1u);
    const uint a = q % dv, b = q / dv;
    const uvec2 o = p < nt ? uvec2(a, b) : p < nt + nb ? uvec2(a, uint(in_.w) + b)
                                                     : uvec2(a < left ? a : uint(in_.y) + a - left, uint(in_.z) + b);
    box_pixel(int(o.x), int(o.y));
}

// NS entries of the table from entry E (whole 64-bit words where they are 64-bit).
#define SAT_RUN(E, V)                                                                                        \
    {                                                                                                        \
        if (WIDE != 0) {                                                                                     \
            [[unroll]] for (int j_ = 0; j_ < NS; j_++)                                                        \
                V[j_] = L8Buf(pc.sat).v[(E) + uint(j_)];                                                     \
        } else {                                                                                             \
            uint u_[NS];                                                                                      \
            LOAD_WINDOW(pc.sat, (E) * 4u, last, NS, u_)                                                       \
            [[unroll]] for (int j_ = 0; j_ < NS; j_++)                                                        \
                V[j_] = uint64_t(u_[j_]);                                                                    \
        }                                                                                                    \
    }

void main()
{
    const uint id = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
    if (EDGE != 0) {
        edge(id);
        return;
    }
    const ivec4 in_ = interior();
    const uint ns = uint(in_.y - in_.x) * uint(IN_C), nr = (ns + uint(NS) - 1u) / uint(NS); // strips a row
    if (id >= nr * uint(in_.w - in_.z))
        return;
    const uint y = uint(in_.z) + id / nr, rowlen = uint(pc.w * IN_C);
    // the strip's first sample; the last strip of a row overlaps the one before
    const uint s0 = uint(in_.x * IN_C) + min((id % nr) * uint(NS), ns - uint(NS));
    const uint rc = uint(pc.r * IN_C), last = (uint(pc.w * pc.h * IN_C) * (WIDE != 0 ? 8u : 4u) - 1u) >> 3;
    const uint yb = (y + uint(pc.r)) * rowlen, ya = (y - uint(pc.r) - 1u) * rowlen;
    uint64_t bb[NS], ab[NS], ba[NS], aa[NS];
    SAT_RUN(yb + s0 + rc, bb)
    SAT_RUN(yb + s0 - rc - uint(IN_C), ab)
    SAT_RUN(ya + s0 + rc, ba)
    SAT_RUN(ya + s0 - rc - uint(IN_C), aa)
    const uint64_t n2 = 2UL * uint64_t(2 * pc.r + 1) * uint64_t(2 * pc.r + 1);
    const double inv = 1.0LF / double(n2);
    uint q[MAX_WORDS];
    [[unroll]] for (int j = 0; j < NS / 4; j++)
        q[j] = 0u;
    [[unroll]] for (int j = 0; j < NS; j++) {
        uint64_t sum = bb[j] - ab[j] - ba[j] + aa[j];
        if (WIDE == 0)
            sum &= 0xffffffffUL;
        const uint64_t num = 2UL * sum + (n2 >> 1);
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
