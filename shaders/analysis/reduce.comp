#version 460
// reduce: per-channel statistics (vkimg_image_stats) in two passes, plus the
// generic final pass that compare/ssim use too.
//
// PASS 0  image -> one partial record per workgroup. Grid-stride loop: each
//         invocation takes pixels p, p + S, p + 2S, ... (S = invocations in the
//         dispatch) and keeps, per channel, min, max, sum and sum of squares:
//           u8/u16: raw integers, exact uint64 sums;
//           float:  float-float sums (x^2 exact, Veltkamp), min/max as fkey().
//         Optional 256-bin histograms per channel: shared-memory atomics, then
//         one global atomicAdd per non-empty bin of the workgroup (uint32 counts:
//         an image has fewer than 2^32 samples). Then wg_reduce() per slot.
//         Record: 4 slots per channel: sum, sumsq, min, max.
// PASS 1  one workgroup reduces pc.n records of NSLOT slots (operator of slot s
//         in bits 2s..2s+1 of OPS) into the result (NSLOT slots at pc.res).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

layout(constant_id = 9) const int PASS = 0;
layout(constant_id = 10) const int HIST = 0;
layout(constant_id = 11) const int NSLOT = 16; // PASS 1
layout(constant_id = 12) const uint OPS = 0u;  // PASS 1
layout(constant_id = 13) const int HSIZE = 1;  // shared histogram bins (IN_C * 256 with HIST)

layout(push_constant) uniform Push {
    uvec2 src, part, res, hist;
    uint n;       // PASS 0: pixels; PASS 1: records
    uint ngroups; // PASS 0: workgroups that take part
} pc;

shared uint lhist[HSIZE];

const bool ISINT = IN_FMT == FMT_U8 || IN_FMT == FMT_U16;

uint hbin(float x)
{
    if (isnan(x)) return 0u;
    return uint(clamp(floor(x * 256.0), 0.0, 255.0));
}

// per-invocation accumulators (private globals, so that helpers can update them;
// channel indices are constants after unrolling: registers)
uint64_t s[4], q[4];
vec2 fs[4], fq[4];
uint mn[4], mx[4];

void add_int(int c, uint v)
{
    s[c] += uint64_t(v);
    q[c] += uint64_t(v * v); // < 2^32 for 16-bit v
    mn[c] = min(mn[c], v);
    mx[c] = max(mx[c], v);
    if (HIST != 0)
        atomicAdd(lhist[c * 256 + int(IN_FMT == FMT_U8 ? v : v >> 8)], 1u);
}

void add_float(int c, float x)
{
    fs[c] = ff_add(fs[c], vec2(x, 0.0));
    fq[c] = ff_add(fq[c], ff_sq(x));
    uint k = fkey(x);
    mn[c] = min(mn[c], k);
    mx[c] = max(mx[c], k);
    if (HIST != 0)
        atomicAdd(lhist[c * 256 + int(hbin(x))], 1u);
}

void add_pixel(uint p)
{
    [[unroll]] for (int c = 0; c < IN_C; c++) {
        uint i = p * uint(IN_C) + uint(c);
        if (ISINT)
            add_int(c, IN_FMT == FMT_U8 ? uint(U8Buf(pc.src).v[i]) : uint(U16Buf(pc.src).v[i]));
        else
            add_float(c, load_sample(pc.src, IN_FMT, i));
    }
}

void stats()
{
    const uint t = gl_LocalInvocationIndex, g = group_linear();
    if (g >= pc.ngroups)
        return; // whole workgroups only
    if (HIST != 0) {
        for (uint i = t; i < uint(HSIZE); i += WG_N)
            lhist[i] = 0u;
        barrier();
    }
    [[unroll]] for (int c = 0; c < 4; c++) {
        s[c] = 0UL;
        q[c] = 0UL;
        fs[c] = vec2(0.0);
        fq[c] = vec2(0.0);
        mn[c] = ~0u;
        mx[c] = 0u;
    }
    const uint stride = WG_N * pc.ngroups, gid = g * WG_N + t;
    if (ISINT) {
        // 4 pixels at a time as 32-bit words (4*IN_C bytes or 8*IN_C bytes:
        // word aligned for any channel count); sample j of a group has channel
        // j % IN_C, a constant once unrolled. Then the < 4 pixels left.
        const uint nq = pc.n / 4u;
        for (uint u = gid; u < nq;) {
            if (IN_FMT == FMT_U8) {
                [[unroll]] for (int k = 0; k < IN_C; k++) {
                    uint wd = U32Buf(pc.src).v[u * uint(IN_C) + uint(k)];
                    [[unroll]] for (int b = 0; b < 4; b++)
                        add_int((4 * k + b) % IN_C, (wd >> (8 * b)) & 0xffu);
                }
            } else {
                [[unroll]] for (int k = 0; k < 2 * IN_C; k++) {
                    uint wd = U32Buf(pc.src).v[u * uint(2 * IN_C) + uint(k)];
                    add_int((2 * k) % IN_C, wd & 0xffffu);
                    add_int((2 * k + 1) % IN_C, wd >> 16);
                }
            }
            if (nq - u <= stride)
                break; // u + stride would pass nq (or wrap around)
            u += stride;
        }
        if (gid < pc.n - 4u * nq)
            add_pixel(4u * nq + gid);
    } else {
        for (uint p = gid; p < pc.n;) {
            add_pixel(p);
            if (pc.n - p <= stride)
                break;
            p += stride;
        }
    }
    if (HIST != 0) {
        barrier();
        for (uint i = t; i < uint(IN_C) * 256u; i += WG_N)
            if (lhist[i] != 0u)
                atomicAdd(U32Buf(pc.hist).v[i], lhist[i]);
    }
    R64Buf part = R64Buf(pc.part);
    const uint base = g * uint(4 * IN_C);
    // unrolled: a dynamic index would put the accumulator arrays in memory
    [[unroll]] for (int c = 0; c < IN_C; c++) {
        uint64_t r0 = wg_reduce(ISINT ? s[c] : ff_pack(fs[c]), ISINT ? OP_ADD : OP_FF);
        uint64_t r1 = wg_reduce(ISINT ? q[c] : ff_pack(fq[c]), ISINT ? OP_ADD : OP_FF);
        uint64_t r2 = wg_reduce(uint64_t(mn[c]), OP_MIN);
        uint64_t r3 = wg_reduce(uint64_t(mx[c]), OP_MAX);
        if (t == 0u) {
            part.v[base + uint(4 * c)] = r0;
            part.v[base + uint(4 * c + 1)] = r1;
            part.v[base + uint(4 * c + 2)] = r2;
            part.v[base + uint(4 * c + 3)] = r3;
        }
    }
}

int slot_op(int s) { return int((OPS >> uint(2 * s)) & 3u); }

// One pass over the records with every slot in registers (NSLOT <= 16, the
// loops unroll once NSLOT is specialized), then one workgroup reduction per slot.
void final_pass()
{
    const uint t = gl_LocalInvocationIndex;
    R64Buf part = R64Buf(pc.part);
    uint64_t acc[16];
    [[unroll]] for (int s = 0; s < NSLOT; s++)
        acc[s] = red_identity(slot_op(s));
    for (uint i = t; i < pc.n; i += WG_N)
        [[unroll]] for (int s = 0; s < NSLOT; s++)
            acc[s] = red_combine(acc[s], part.v[i * uint(NSLOT) + uint(s)], slot_op(s));
    [[unroll]] for (int s = 0; s < NSLOT; s++) {
        uint64_t r = wg_reduce(acc[s], slot_op(s));
        if (t == 0u)
            R64Buf(pc.res).v[s] = r;
    }
}

void main()
{
    if (PASS == 0)
        stats();
    else
        final_pass();
}
