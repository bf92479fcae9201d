// The CPU shapes of the ops that read box sums from the summed-area table
// (boxblur_lines.spv, threshold_adaptive.spv). Where every window is whole
// (pixels x, y in [r + 1, side - 1 - r]) a window has (2r + 1)^2 pixels and the
// table entries of NS consecutive samples of a row are 4 runs of NS entries,
// read as 64-bit words; an invocation takes such a strip (NS: 8 samples, 24 for
// 3 channels, so that each sample's channel is a compile-time constant), the
// last strip of a row overlapping the one before. The pixels around them are a
// dispatch of their own, a pixel an invocation (box_edge_pixel). Needs
// words.glsl, pc.w, pc.h, pc.r, pc.sat and the spec constants WIDE and NS.

// The pixels of whole windows: [x0, x1) x [y0, y1) in .xyzw, or none where a
// row of them is narrower than a strip (as the host's vki_box_strips).
ivec4 box_interior()
{
    const int x0 = int(pc.r) + 1, x1 = int(pc.w) - int(pc.r), y0 = int(pc.r) + 1, y1 = int(pc.h) - int(pc.r);
    return x1 > x0 && y1 > y0 && (x1 - x0) * IN_C >= NS ? ivec4(x0, x1, y0, y1) : ivec4(0);
}

// Pixel p of those outside the interior (the rows above it, those below it,
// then its rows' parts left and right of it); x -1 past the last.
ivec2 box_edge_pixel(uint p)
{
    const ivec4 in_ = box_interior();
    const uint w = uint(pc.w), top = uint(in_.z), bot = uint(pc.h) - uint(in_.w), left = uint(in_.x),
               right = uint(pc.w) - uint(in_.y), side = left + right;
    const uint nt = top * w, nb = bot * w, nm = uint(in_.w - in_.z) * side;
    // divisors at least 1: lavapipe runs every side of a choice, masked
    const uint q = p < nt ? p : p < nt + nb ? p - nt : p - nt - nb, dv = p < nt + nb ? w : max(side, 1u);
    const uint a = q % dv, b = q / dv;
    const uvec2 o = p < nt ? uvec2(a, b) : p < nt + nb ? uvec2(a, uint(in_.w) + b)
                                                     : uvec2(a < left ? a : uint(in_.y) + a - left, uint(in_.z) + b);
    return p < nt + nb + nm ? ivec2(o) : ivec2(-1);
}

// Invocation id's strip of whole windows: its row in .x and first sample in .y;
// .x -1 past the last.
ivec2 box_strip(uint id)
{
    const ivec4 in_ = box_interior();
    const uint ns = uint(in_.y - in_.x) * uint(IN_C), nr = (ns + uint(NS) - 1u) / uint(NS); // strips a row
    if (id >= nr * uint(in_.w - in_.z))
        return ivec2(-1);
    return ivec2(in_.z + int(id / nr), in_.x * IN_C + int(min((id % nr) * uint(NS), ns - uint(NS))));
}

// The box sums of samples s0 .. s0 + NS - 1 of row y (a strip of box_strip) into V.
#define BOX_SUMS(Y, S0, V)                                                                                    \
    {                                                                                                         \
        const uint rl_ = uint(pc.w) * uint(IN_C), rc_ = uint(pc.r) * uint(IN_C);                              \
        const uint last_ = (uint(pc.w) * uint(pc.h) * uint(IN_C) * (WIDE != 0 ? 8u : 4u) - 1u) >> 3;          \
        const uint e_[4] = { (uint(Y) + uint(pc.r)) * rl_ + uint(S0) + rc_,                                   \
                             (uint(Y) + uint(pc.r)) * rl_ + uint(S0) - rc_ - uint(IN_C),                      \
                             (uint(Y) - uint(pc.r) - 1u) * rl_ + uint(S0) + rc_,                              \
                             (uint(Y) - uint(pc.r) - 1u) * rl_ + uint(S0) - rc_ - uint(IN_C) };               \
        [[unroll]] for (int j_ = 0; j_ < NS; j_++)                                                            \
            V[j_] = 0UL;                                                                                      \
        [[unroll]] for (int k_ = 0; k_ < 4; k_++) {                                                           \
            uint64_t t_[NS];                                                                                  \
            if (WIDE != 0) {                                                                                  \
                [[unroll]] for (int j_ = 0; j_ < NS; j_++)                                                    \
                    t_[j_] = L8Buf(pc.sat).v[e_[k_] + uint(j_)];                                              \
            } else {                                                                                          \
                uint u_[NS];                                                                                  \
                LOAD_WINDOW(pc.sat, e_[k_] * 4u, last_, NS, u_)                                               \
                [[unroll]] for (int j_ = 0; j_ < NS; j_++)                                                    \
                    t_[j_] = uint64_t(u_[j_]);                                                                \
            }                                                                                                 \
            [[unroll]] for (int j_ = 0; j_ < NS; j_++)                                                        \
                V[j_] = k_ == 0 || k_ == 3 ? V[j_] + t_[j_] : V[j_] - t_[j_];                                 \
        }                                                                                                     \
        if (WIDE == 0)                                                                                        \
            [[unroll]] for (int j_ = 0; j_ < NS; j_++)                                                        \
                V[j_] &= 0xffffffffUL;                                                                        \
    }
