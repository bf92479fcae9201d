#version 460
// compare: per-sample errors e = |a - b| of two images of the same size and
// channels, on normalized values (a in IN_FMT, b in B_FMT: u8 vs u16 works).
// One partial record per workgroup (grid-stride loop, then wg_reduce), reduced
// by reduce.comp PASS 1:
//   slot 0  sum of e, slot 1 sum of e^2
//   slot 2  max key = bits(e) << 32 | ~(sample index): the largest error, ties
//           to the smallest index (e >= 0, so its bits order like its value)
//   slot 3  pixels with some channel's e > fail
//   slot 4  pixels with some channel's e > warn
// INTMODE = 1 (both u8/u16): exact integer errors d = |qa - qb| in units of
// 1/LEVELS (255 if both are u8, else 65535: a u8 sample q is q * 257 there);
// slots 0/1 are uint64 sums of d and d^2, the key holds d, and the thresholds
// are integers (d > ifail). INTMODE = 0 (a float format): e in fp32,
// float-float sums (e^2 exact), key holds the fp32 bits of e.
// DIFF = 1 also writes the U8 difference image round(clamp(e * scale, 0, 1) * 255).
// IGNORE = 1: a byte per pixel at pc.ign, nonzero = ignored: the pixel counts
// nowhere, and its difference pixels are a's, dimmed to a quarter.
// Grid-stride loop; two images of the same integer format are read 4 pixels
// at a time as 32-bit words (4*C or 8*C bytes: word aligned for any C).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(constant_id = 9) const int B_FMT = 0;
layout(constant_id = 10) const int DIFF = 0;
layout(constant_id = 11) const int INTMODE = 0;
layout(constant_id = 12) const uint LEVELS = 255u;
layout(constant_id = 13) const int IGNORE = 0;

layout(push_constant) uniform Push {
    uvec2 a, b, part, diff, ign;
    float fail, warn, scale; // INTMODE 0
    int ifail, iwarn;        // INTMODE 1: thresholds in units of 1/LEVELS
    uint npx;
    uint ngroups;
} pc;

// integer level of sample i in units of 1/LEVELS
uint level(uvec2 buf, int fmt, uint i)
{
    if (fmt == FMT_U8) {
        uint v = uint(U8Buf(buf).v[i]);
        return LEVELS == 255u ? v : v * 257u;
    }
    return uint(U16Buf(buf).v[i]);
}

// per-invocation accumulators
vec2 se = vec2(0.0), se2 = vec2(0.0);
uint64_t si = 0UL, si2 = 0UL, mk = 0UL;
uint nf = 0u, nw = 0u;

// Adds the error of sample i; returns it normalized (for the diff image).
float err_int(uint i, uint qa, uint qb, inout bool f, inout bool w)
{
    uint d = qa > qb ? qa - qb : qb - qa;
    si += uint64_t(d);
    si2 += uint64_t(d * d); // < 2^32
    uint64_t k = (uint64_t(d) << 32) | uint64_t(~i);
    mk = k > mk ? k : mk;
    f = f || int(d) > pc.ifail;
    w = w || int(d) > pc.iwarn;
    return float(d) * (1.0 / float(LEVELS));
}

float err_float(uint i, float a, float b, inout bool f, inout bool w)
{
    float e = abs(a - b);
    se = ff_add(se, vec2(e, 0.0));
    se2 = ff_add(se2, ff_sq(e));
    uint64_t k = (uint64_t(floatBitsToUint(e)) << 32) | uint64_t(~i);
    mk = k > mk ? k : mk;
    f = f || e > pc.fail;
    w = w || e > pc.warn;
    return e;
}

uint diff_byte(float e)
{
    return quantize_u(e * pc.scale, 255.0);
}

void do_pixel(uint p)
{
    bool f = false, w = false;
    if (IGNORE != 0 && uint(U8Buf(pc.ign).v[p]) != 0u) {
        if (DIFF != 0)
            [[unroll]] for (int c = 0; c < IN_C; c++) {
                uint i = p * uint(IN_C) + uint(c);
                U8Buf(pc.diff).v[i] = uint8_t(quantize_u(load_sample(pc.a, IN_FMT, i), 63.75));
            }
        return;
    }
    [[unroll]] for (int c = 0; c < IN_C; c++) {
        uint i = p * uint(IN_C) + uint(c);
        float e = INTMODE != 0 ? err_int(i, level(pc.a, IN_FMT, i), level(pc.b, B_FMT, i), f, w)
                               : err_float(i, load_sample(pc.a, IN_FMT, i), load_sample(pc.b, B_FMT, i), f, w);
        if (DIFF != 0)
            U8Buf(pc.diff).v[i] = uint8_t(diff_byte(e));
    }
    nf += f ? 1u : 0u;
    nw += w ? 1u : 0u;
}

// 4 pixels of two images of the same integer format as 32-bit words (like
// reduce.comp); the diff bytes of the 4 pixels are IN_C whole words.
void do_quad(uint u)
{
    bool f[4] = bool[4](false, false, false, false), w[4] = bool[4](false, false, false, false);
    uint dw[4] = uint[4](0u, 0u, 0u, 0u);
    const uint base = u * uint(4 * IN_C);
    if (IN_FMT == FMT_U8) {
        [[unroll]] for (int k = 0; k < IN_C; k++) {
            uint wa = U32Buf(pc.a).v[u * uint(IN_C) + uint(k)], wb = U32Buf(pc.b).v[u * uint(IN_C) + uint(k)];
            [[unroll]] for (int b = 0; b < 4; b++) {
                const int j = 4 * k + b;
                float e = err_int(base + uint(j), (wa >> (8 * b)) & 0xffu, (wb >> (8 * b)) & 0xffu, f[j / IN_C],
                                  w[j / IN_C]);
                if (DIFF != 0)
                    dw[k] |= diff_byte(e) << (8 * b);
            }
        }
    } else {
        [[unroll]] for (int k = 0; k < 2 * IN_C; k++) {
            uint wa = U32Buf(pc.a).v[u * uint(2 * IN_C) + uint(k)], wb = U32Buf(pc.b).v[u * uint(2 * IN_C) + uint(k)];
            [[unroll]] for (int h = 0; h < 2; h++) {
                const int j = 2 * k + h;
                float e = err_int(base + uint(j), (wa >> (16 * h)) & 0xffffu, (wb >> (16 * h)) & 0xffffu,
                                  f[j / IN_C], w[j / IN_C]);
                if (DIFF != 0)
                    dw[j / 4] |= diff_byte(e) << (8 * (j % 4));
            }
        }
    }
    if (DIFF != 0)
        [[unroll]] for (int k = 0; k < IN_C; k++)
            U32Buf(pc.diff).v[u * uint(IN_C) + uint(k)] = dw[k];
    [[unroll]] for (int px = 0; px < 4; px++) {
        nf += f[px] ? 1u : 0u;
        nw += w[px] ? 1u : 0u;
    }
}

void main()
{
    const uint t = gl_LocalInvocationIndex, g = group_linear();
    if (g >= pc.ngroups)
        return;
    const uint stride = WG_N * pc.ngroups, gid = g * WG_N + t;
    if (INTMODE != 0 && IN_FMT == B_FMT && IGNORE == 0) {
        const uint nq = pc.npx / 4u;
        for (uint u = gid; u < nq;) {
            do_quad(u);
            if (nq - u <= stride)
                break;
            u += stride;
        }
        if (gid < pc.npx - 4u * nq)
            do_pixel(4u * nq + gid);
    } else {
        for (uint p = gid; p < pc.npx;) {
            do_pixel(p);
            if (pc.npx - p <= stride)
                break;
            p += stride;
        }
    }
    uint64_t r0 = INTMODE != 0 ? wg_reduce(si, OP_ADD) : wg_reduce(ff_pack(se), OP_FF);
    uint64_t r1 = INTMODE != 0 ? wg_reduce(si2, OP_ADD) : wg_reduce(ff_pack(se2), OP_FF);
    uint64_t r2 = wg_reduce(mk, OP_MAX);
    uint64_t r3 = wg_reduce(uint64_t(nf), OP_ADD);
    uint64_t r4 = wg_reduce(uint64_t(nw), OP_ADD);
    if (t == 0u) {
        R64Buf part = R64Buf(pc.part);
        part.v[g * 5u] = r0;
        part.v[g * 5u + 1u] = r1;
        part.v[g * 5u + 2u] = r2;
        part.v[g * 5u + 3u] = r3;
        part.v[g * 5u + 4u] = r4;
    }
}
