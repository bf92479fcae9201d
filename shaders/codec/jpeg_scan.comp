#version 460
// jpeg_scan: the prefix sums of the device's Huffman decoding (jpeg_huff.comp), in
// three passes over chunks of WG * PER elements (PER an invocation, in order):
//  PASS 0: each chunk's sum -> aux[chunk]
//  PASS 1: one workgroup: the chunks' exclusive prefix sums, in aux
//  PASS 2: each element's
// MODE 0: the blocks begun in each subsequence (n of them, and one more, 0) ->
//   their exclusive prefix sums: the first block of each, and the total.
// MODE 1: one component's DC differences, in its blocks' order in the scan (MCU
//   after MCU, H x V blocks in each), summed in place into the DCs, from 0 again
//   at each restart interval (segments: libjpeg's last_dc_val reset), as int16.
// A sum is the pair (s: a segment starts in it, v), combined in order:
// (s1, v1) (s2, v2) = (s1 | s2, s2 ? v2 : v1 + v2).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int MODE = 0;
layout(constant_id = 9) const int PASS = 0;
layout(constant_id = 10) const uint PER = 8;

layout(push_constant) uniform Push {
    uvec2 src; // MODE 0: the counts; MODE 1: the coefficients (core/coded.h)
    uvec2 dst; // MODE 0: the prefix sums
    uvec2 aux; // 2 uints a chunk
    uint n;    // elements
    uint chunks;
    // MODE 1: the component's H, V, first block, blocks in a coefficient row; MCUs in a row
    // and in a restart interval
    uint h, v, off, bw, mcux, ri;
} pc;

const uint WG = gl_WorkGroupSize.x;

shared uint sh_s[gl_WorkGroupSize.x];
shared int sh_v[gl_WorkGroupSize.x];

// MODE 1: element i's coefficient index (its block's DC)
uint dc_at(uint i)
{
    const uint hv = pc.h * pc.v, m = i / hv, r = i - m * hv;
    const uint bx = (m % pc.mcux) * pc.h + r % pc.h, by = (m / pc.mcux) * pc.v + r / pc.h;
    return (pc.off + by * pc.bw + bx) * 64u;
}

// element i as a pair
void element(uint i, out uint s, out int v)
{
    if (MODE == 0) {
        s = 0u;
        v = i < pc.n ? int(U32Buf(pc.src).v[i]) : 0;
    } else {
        const uint hv = pc.h * pc.v, m = i / hv;
        s = i - m * hv == 0u && m % pc.ri == 0u ? 1u : 0u;
        v = i < pc.n ? int(uint(U16Buf(pc.src).v[dc_at(i)]) << 16) >> 16 : 0;
    }
}

void combine(inout uint s, inout int v, uint s2, int v2)
{
    v = s2 != 0u ? v2 : v + v2;
    s |= s2;
}

// the workgroup's inclusive scan of (s, v), in order of the invocations
void wg_scan(inout uint s, inout int v)
{
    const uint i = gl_LocalInvocationID.x;
    sh_s[i] = s;
    sh_v[i] = v;
    barrier();
    for (uint d = 1u; d < WG; d <<= 1) {
        uint ps = 0u;
        int pv = 0;
        if (i >= d) {
            ps = sh_s[i - d];
            pv = sh_v[i - d];
        }
        barrier();
        if (i >= d) { // (ps, pv) before (s, v)
            v = s != 0u ? v : pv + v;
            s |= ps;
            sh_s[i] = s;
            sh_v[i] = v;
        }
        barrier();
    }
}

void main()
{
    const uint i = gl_LocalInvocationID.x;
    const uint total = MODE == 0 ? pc.n + 1u : pc.n;
    if (PASS == 1) { // one workgroup: the chunks' exclusive prefix sums
        uint cs = 0u;
        int cv = 0;
        for (uint base = 0u; base < pc.chunks; base += WG) {
            const uint c = base + i;
            uint s = 0u;
            int v = 0;
            if (c < pc.chunks) {
                s = U32Buf(pc.aux).v[2u * c];
                v = int(U32Buf(pc.aux).v[2u * c + 1u]);
            }
            const uint s0 = s;
            const int v0 = v;
            wg_scan(s, v);
            // exclusive: the carry, then the inclusive sum before this one
            uint es = cs;
            int ev = cv;
            if (i > 0u)
                combine(es, ev, sh_s[i - 1u], sh_v[i - 1u]);
            if (c < pc.chunks) {
                U32Buf(pc.aux).v[2u * c] = es;
                U32Buf(pc.aux).v[2u * c + 1u] = uint(ev);
            }
            uint ls = sh_s[WG - 1u];
            int lv = sh_v[WG - 1u];
            barrier();
            combine(cs, cv, ls, lv);
        }
        return;
    }
    const uint chunk = group_linear(), first = (chunk * WG + i) * PER;
    uint s = 0u;
    int v = 0;
    for (uint k = 0u; k < PER; k++) {
        uint es;
        int ev;
        element(first + k, es, ev);
        combine(s, v, es, ev);
    }
    wg_scan(s, v);
    if (PASS == 0) {
        if (i == WG - 1u) {
            U32Buf(pc.aux).v[2u * chunk] = s;
            U32Buf(pc.aux).v[2u * chunk + 1u] = uint(v);
        }
        return;
    }
    // PASS 2: the chunk's carry, the invocations' before this one, then its elements in turn
    uint ps = U32Buf(pc.aux).v[2u * chunk];
    int pv = int(U32Buf(pc.aux).v[2u * chunk + 1u]);
    if (i > 0u)
        combine(ps, pv, sh_s[i - 1u], sh_v[i - 1u]);
    for (uint k = 0u; k < PER; k++) {
        const uint e = first + k;
        if (e >= total)
            break;
        uint es;
        int ev;
        element(e, es, ev);
        if (MODE == 0) {
            U32Buf(pc.dst).v[e] = uint(pv); // exclusive
            combine(ps, pv, es, ev);
        } else {
            combine(ps, pv, es, ev); // inclusive
            U16Buf(pc.src).v[dc_at(e)] = uint16_t(uint(pv) & 0xffffu);
        }
    }
}
