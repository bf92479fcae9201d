#version 460
// gray: Y = wr R + wg G + wb B on the stored values; alpha is kept.
//
// PACKED = 1 is the coalesced path for packed RGB8 input: invocation q reads the
// three 32-bit words holding pixels 4q..4q+3 (no byte loads) and, for 8-bit gray
// output, writes one word with the four gray bytes. exec pads the input buffer
// to a multiple of 12 bytes and the output to a multiple of 4.
//
// RUNS > 0 is the runs shape (runs.glsl): 8-bit output from the same exact
// integer luma as the packed path, f32 output with the arithmetic of the path
// the channel count takes otherwise.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "runs.glsl"

layout(constant_id = 8) const int PACKED = 0;

layout(push_constant) uniform Push {
    uvec2 src, dst;
    float wr, wg, wb;
    uint iwr, iwg, iwb; // the weights * 10000, exact
    uint npx;
} pc;

// Exact: round-half-up of the weighted sum, in integers.
uint gray8(uint r, uint g, uint b)
{
    return (pc.iwr * r + pc.iwg * g + pc.iwb * b + 5000u) / 10000u;
}

vec4 run_px(uvec4 b)
{
    vec4 v = run_norm(b);
    if (IN_C < 3)
        return v; // already gray (+ alpha)
    if (OUT_FMT == FMT_U8)
        return vec4(u2f(gray8(b.x, b.y, b.z)) * (1.0 / 255.0), v.w, 0.0, 0.0);
    if (IN_C == 3) // the packed path's float arithmetic (the same bits)
        return vec4((pc.wr * float(b.x) + pc.wg * float(b.y) + pc.wb * float(b.z)) * (1.0 / 255.0), 0.0, 0.0, 0.0);
    return vec4(pc.wr * v.x + pc.wg * v.y + pc.wb * v.z, v.w, 0.0, 0.0);
}

void main()
{
    if (RUNS > 0) {
        run_map(pc.src, pc.dst, pc.npx);
        return;
    }
    uint q = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (PACKED != 0) {
        if (q * 4u >= pc.npx)
            return;
        U32Buf s = U32Buf(pc.src);
        uint w0 = s.v[3u * q], w1 = s.v[3u * q + 1u], w2 = s.v[3u * q + 2u];
        uint y0 = gray8(w0 & 255u, (w0 >> 8) & 255u, (w0 >> 16) & 255u);
        uint y1 = gray8(w0 >> 24, w1 & 255u, (w1 >> 8) & 255u);
        uint y2 = gray8((w1 >> 16) & 255u, w1 >> 24, w2 & 255u);
        uint y3 = gray8((w2 >> 8) & 255u, (w2 >> 16) & 255u, w2 >> 24);
        if (OUT_FMT == FMT_U8 && OUT_C == 1) {
            U32Buf(pc.dst).v[q] = y0 | (y1 << 8) | (y2 << 16) | (y3 << 24);
        } else {
            // Not on the fast path: full-precision Y for a following op.
            for (uint k = 0u; k < 4u; k++) {
                uint p = 4u * q + k;
                if (p >= pc.npx)
                    break;
                uint w = k == 0u ? w0 : k == 1u ? w0 >> 24 | w1 << 8 : k == 2u ? w1 >> 16 | w2 << 16 : w2 >> 8;
                float y = pc.wr * float(w & 255u) + pc.wg * float((w >> 8) & 255u) + pc.wb * float((w >> 16) & 255u);
                store_sample(pc.dst, OUT_FMT, p, y * (1.0 / 255.0));
            }
        }
        return;
    }
    if (q >= pc.npx)
        return;
    vec4 v = load_px(pc.src, q);
    vec4 o;
    if (IN_C >= 3)
        o = vec4(pc.wr * v.x + pc.wg * v.y + pc.wb * v.z, v.w, 0.0, 0.0);
    else
        o = v; // already gray (+ alpha)
    store_px(pc.dst, q, o);
}
