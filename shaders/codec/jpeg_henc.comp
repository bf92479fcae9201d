#version 460
// jpeg_henc: the Huffman coding of a JPEG's quantized coefficients (core/coded.h,
// made by jpeg_fdct) into its entropy-coded segment, bit for bit what libjpeg's
// encode_one_block (jchuff.c) writes with the standard tables and no restart
// intervals: each block's DC difference from the block before it of its
// component, then the AC coefficients in zigzag order as runs of zeros (ZRL for
// 16), EOB after the last nonzero one. In passes (jpeg_scan gives the prefix sums
// between them):
//  PHASE 0: each block's bits -> lens[block] (blocks in the scan's order: MCU
//           after MCU, the MCU's blocks in turn)
//  PHASE 1: each block's codes written at the sum of the lengths before it, into
//           a zeroed bit buffer (words whose bytes are in the stream's order;
//           the words a block shares with its neighbours by atomicOr)
//  PHASE 2: the last byte padded with 1-bits (as libjpeg flushes); the 0xFF
//           bytes of each chunk of CHUNK bytes counted
//  PHASE 3: the bytes with a 0x00 stuffed after each 0xFF, each chunk at its
//           bytes plus the 0xFFs before it; status[1] = the segment's length
//  PHASE 4: the segment copied to the host's buffer in 16-byte words (where it
//           fits: else VKI_JE_ERR_FULL, and the caller codes on the host)
// The bit buffer and the segment are as large as the host's buffer (cap_out):
// where the bits alone pass it (cap_bits), nothing is written, VKI_JE_ERR_FULL.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"

layout(constant_id = 8) const int PHASE = 0;
layout(constant_id = 9) const uint CHUNK = 64; // PHASE 2, 3: bytes an invocation

layout(push_constant) uniform Push {
    uvec2 info;    // VKI_JE_*: the scan's layout and the code tables
    uvec2 coefs;   // the coefficients (int16, natural order, 64 a block)
    uvec2 lens;    // PHASE 0: bits a block; then their prefix sums (blocks + 1)
    uvec2 bits;    // the bit buffer (cap_bits of it)
    uvec2 ffs;     // PHASE 2: 0xFFs a chunk; then their prefix sums (chunks + 1)
    uvec2 stuffed; // PHASE 3: the segment
    uvec2 dst;     // PHASE 4: the host's copy (cap_out bytes)
    uvec2 status;  // [0] VKI_JE_ERR_*, [1] the segment's length
    uint cap_bits, cap_out, chunks;
} pc;

#define INFO U32Buf(pc.info).v

const uint ZZ[64] = uint[64](0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34,
                             27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44,
                             51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63);

uint bswap(uint x)
{
    return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

// coefficient i of the buffer, signed
int coef(uint i)
{
    return int(uint(U16Buf(pc.coefs).v[i]) << 16) >> 16;
}

// block j (0..bpm-1) of MCU m: its first coefficient; dummy: past the blocks that
// hold the image (jctrans.c compress_output codes such a block as AC 0 and the DC
// of the block before it in the MCU: the component's last real block's)
uint block_base(uint m, uint j, out bool dummy)
{
    const uint sl = INFO[VKI_JE_SLOT + j], c = sl & 15u, cw = VKI_JE_COMP + 8u * c;
    const uint mcux = INFO[VKI_JE_MCUX];
    const uint bx = (m % mcux) * INFO[cw] + ((sl >> 4) & 15u), by = (m / mcux) * INFO[cw + 1u] + ((sl >> 8) & 15u);
    dummy = bx >= INFO[cw + 4u] || by >= INFO[cw + 5u];
    return (INFO[cw + 3u] + by * INFO[cw + 2u] + bx) * 64u;
}

// the DC of the last real block before block j of MCU m in its component's order
// (0 for none: the component's first block, always real, starts from 0)
int dc_before(uint m, uint j)
{
    const uint c = INFO[VKI_JE_SLOT + j] & 15u, bpm = INFO[VKI_JE_BPM];
    for (uint mm = m + 1u, i = j; mm-- > 0u && mm + 2u >= m; i = bpm) // this MCU, the two before
        while (i-- > 0u)
            if ((INFO[VKI_JE_SLOT + i] & 15u) == c) {
                bool dummy;
                const uint b = block_base(mm, i, dummy);
                if (!dummy)
                    return coef(b);
            }
    return 0;
}

// table t's code of symbol s: code | length << 16
uint code_of(uint t, uint s)
{
    return INFO[VKI_JE_CODES + 256u * t + s];
}

uint nbits(uint v)
{
    return v == 0u ? 0u : uint(findMSB(v)) + 1u;
}

// PHASE 1's writer: acc holds n bits not yet written (the last n), wi the word they begin
uint64_t acc;
uint n, wi;
bool first;

void put(uint code, uint len) // len <= 32
{
    acc = (acc << len) | uint64_t(code);
    n += len;
    if (n >= 32u) {
        const uint w = bswap(uint(acc >> (n - 32u)));
        if (first)
            atomicOr(U32Buf(pc.bits).v[wi], w);
        else
            U32Buf(pc.bits).v[wi] = w;
        first = false;
        wi++;
        n -= 32u;
        acc &= (uint64_t(1) << n) - 1ul;
    }
}

// a symbol the table has no code for: a coefficient libjpeg would refuse
bool no_code;

// A block's codes: its bits (count), or written (PHASE 1)
uint code_block(uint m, uint j, bool write)
{
    const uint sl = INFO[VKI_JE_SLOT + j], dct = (sl >> 12) & 15u, act = sl >> 16;
    bool dummy;
    const uint base = block_base(m, j, dummy);
    uint total = 0u;
    if (dummy) { // the DC of the block before (a difference of 0), EOB
        const uint e0 = code_of(dct, 0u), e1 = code_of(act, 0u);
        if (write) {
            put(e0 & 0xffffu, e0 >> 16);
            put(e1 & 0xffffu, e1 >> 16);
        }
        return (e0 >> 16) + (e1 >> 16);
    }
    int d = coef(base) - dc_before(m, j);
    uint t = uint(abs(d)), nb = nbits(t), e = code_of(dct, nb);
    no_code = no_code || e == 0u;
    total += (e >> 16) + nb;
    if (write) {
        put(e & 0xffffu, e >> 16);
        if (nb > 0u)
            put(uint(d < 0 ? d - 1 : d) & ((1u << nb) - 1u), nb);
    }
    uint r = 0u;
    const uint zrl = code_of(act, 0xf0u);
    for (uint k = 1u; k < 64u; k++) {
        const int v = coef(base + ZZ[k]);
        if (v == 0) {
            r++;
            continue;
        }
        for (; r > 15u; r -= 16u) {
            total += zrl >> 16;
            if (write)
                put(zrl & 0xffffu, zrl >> 16);
        }
        t = uint(abs(v));
        nb = nbits(t);
        e = code_of(act, nb < 16u ? (r << 4) + nb : 0u);
        no_code = no_code || e == 0u || nb >= 16u;
        total += (e >> 16) + nb;
        if (write) // code and value in one: at most 16 + 15 bits
            put(((e & 0xffffu) << nb) | (uint(v < 0 ? v - 1 : v) & ((1u << nb) - 1u)), (e >> 16) + nb);
        r = 0u;
    }
    if (r > 0u) {
        e = code_of(act, 0u);
        total += e >> 16;
        if (write)
            put(e & 0xffffu, e >> 16);
    }
    return total;
}

void main()
{
    const uint id = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    const uint blocks = INFO[VKI_JE_BLOCKS], bpm = INFO[VKI_JE_BPM];
    if (PHASE == 0 || PHASE == 1) {
        if (id >= blocks)
            return;
        const uint m = id / bpm, j = id - m * bpm;
        if (PHASE == 0) {
            no_code = false;
            U32Buf(pc.lens).v[id] = code_block(m, j, false);
            if (no_code)
                atomicOr(U32Buf(pc.status).v[0], VKI_JE_ERR_RANGE);
            return;
        }
        const uint off = U32Buf(pc.lens).v[id], end = U32Buf(pc.lens).v[id + 1u];
        if (U32Buf(pc.lens).v[blocks] > pc.cap_bits) { // (the sums are below 2^32: blocks * 1700 bits)
            if (id == 0u)
                atomicOr(U32Buf(pc.status).v[0], VKI_JE_ERR_FULL);
            return;
        }
        if (end == off)
            return;
        acc = 0ul;
        n = off & 31u; // the bits before ours in the first word: zeros, or-ed
        wi = off >> 5;
        first = true;
        code_block(m, j, true);
        if (n > 0u) // the last word, shared with the next block
            atomicOr(U32Buf(pc.bits).v[wi], bswap(uint(acc << (32u - n))));
        return;
    }
    const uint total_bits = U32Buf(pc.lens).v[blocks];
    const uint nbytes = (total_bits + 7u) / 8u;
    if (PHASE == 2 || PHASE == 3) {
        if (id >= pc.chunks || total_bits > pc.cap_bits)
            return;
        const uint b0 = id * CHUNK, b1 = min(b0 + CHUNK, nbytes);
        if (PHASE == 2 && b0 < nbytes && b1 == nbytes && (total_bits & 7u) != 0u) { // pad the last byte with 1-bits
            const uint pad = 8u - (total_bits & 7u), byte = nbytes - 1u;
            U32Buf(pc.bits).v[byte >> 2] |= ((1u << pad) - 1u) << (8u * (byte & 3u));
        }
        uint ff = 0u, o = id < pc.chunks && PHASE == 3 ? b0 + U32Buf(pc.ffs).v[id] : 0u;
        for (uint b = b0; b < b1; b++) {
            const uint v = (U32Buf(pc.bits).v[b >> 2] >> (8u * (b & 3u))) & 0xffu;
            if (PHASE == 3) { // (bytes past cap_out: VKI_JE_ERR_FULL in PHASE 4)
                if (o < pc.cap_out)
                    U8Buf(pc.stuffed).v[o] = uint8_t(v);
                o++;
                if (v == 0xffu) {
                    if (o < pc.cap_out)
                        U8Buf(pc.stuffed).v[o] = uint8_t(0);
                    o++;
                }
            }
            ff += v == 0xffu ? 1u : 0u;
        }
        if (PHASE == 2)
            U32Buf(pc.ffs).v[id] = ff;
        else if (id == 0u)
            U32Buf(pc.status).v[1] = nbytes + U32Buf(pc.ffs).v[pc.chunks];
        return;
    }
    // PHASE 4: 16 bytes an invocation
    const uint len = U32Buf(pc.status).v[1];
    if (len > pc.cap_out || total_bits > pc.cap_bits) {
        if (id == 0u)
            atomicOr(U32Buf(pc.status).v[0], VKI_JE_ERR_FULL);
        return;
    }
    if (16u * id < len)
        U32x4Buf(pc.dst).v[id] = U32x4Buf(pc.stuffed).v[id];
}
