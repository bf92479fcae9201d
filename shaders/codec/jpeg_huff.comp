#version 460
// jpeg_huff: the Huffman decoding of a baseline JPEG scan (vki_shared.h VKI_JH_*:
// src/io/jpeg_entropy.c packs it) into its quantized coefficients, as libjpeg's
// decode_mcu (jdhuff.c) would, in parallel by self-synchronization (Weissenberger
// and Schmidt, "Massively Parallel Huffman Decoding on GPUs", ICPP 2018, and their
// JPEG decoder, 2021):
//
// Each restart interval's bits are cut into subsequences of SBITS, an invocation
// each. The decoder's state at a code's first bit is (p: the bit, b: the block of
// the MCU, z: the coefficient next: 0 for the DC code). An invocation decodes the
// codes that begin in its subsequence from an entry state to its exit state (the
// first code at or after its end); the entry of subsequence t is the exit of t - 1,
// and of an interval's first subsequence (0, 0, 0). Started from a wrong entry (a
// guess: its first bit, block 0, the DC), a Huffman decoder soon falls into step
// with the right one, and from a state both pass through they agree. So:
//  PHASE 0, a round: every subsequence decodes from the exit of the one before (as
//   the last round left it; round 0 guesses); within a workgroup the rounds are
//   repeated in shared memory until no entry changes. The status counts the exits
//   that changed; a round that changes none leaves every state decoded from its
//   true entry, and later rounds copy. Also the blocks begun in each subsequence.
//  (jpeg_scan: their prefix sums, the first block of each subsequence)
//  PHASE 1: every subsequence decodes again from its entry and writes its
//   coefficients (natural order, the DC as its difference; jpeg_scan sums those),
//   and checks what libjpeg checks: a code where one belongs, each interval's count
//   of blocks, nothing after an interval's last block (VKI_JH_ERR_*).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int PHASE = 0;
layout(constant_id = 9) const uint SBITS = 1024; // bits a subsequence
layout(constant_id = 10) const uint ROUNDS = 1;  // PHASE 1: the rounds of PHASE 0 run

layout(push_constant) uniform Push {
    uvec2 blob;   // the scan (VKI_JH_*)
    uvec2 first;  // nint + 1 uints: each interval's first subsequence (the last: nsub)
    uvec2 st_in;  // uvec2 a subsequence: the exits of the last round (PHASE 1: the final ones)
    uvec2 st_out; // PHASE 0: this round's
    uvec2 counts; // PHASE 0: blocks begun a subsequence; PHASE 1: their prefix sums (nsub + 1)
    uvec2 status; // uints: [0] VKI_JH_ERR_* bits, [1 + r] exits changed in round r
    uvec2 coefs;  // PHASE 1: the coefficients (core/coded.h), zeroed
    uint nsub, nint, round;
} pc;

const uint WG = gl_WorkGroupSize.x;

#define BLOB U32Buf(pc.blob).v
#define STATUS U32Buf(pc.status).v

// jpeg_natural_order: zigzag index -> natural (row-major) index
const uint ZZ[64] = uint[64](0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34,
                             27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44,
                             51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63);

shared uint slots[VKI_JH_MAX_BPM];
shared uvec2 ex[PHASE == 0 ? gl_WorkGroupSize.x : 1];
shared uint any_changed;

uint bswap(uint x)
{
    return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

// the 32 bits from bit p of the data at word wb (past the interval's end: 1-bits)
uint peek(uint wb, uint p)
{
    const uint i = wb + (p >> 5), s = p & 31u;
    const uint hi = bswap(BLOB[i]);
    return s == 0u ? hi : (hi << s) | (bswap(BLOB[i + 1u]) >> (32u - s));
}

// the code the bits begin in table t: length << 8 | symbol, 0 where none
uint huff(uint t, uint bits)
{
    const uint tb = VKI_JH_TABLES + t * VKI_JH_TABLE;
    const uint e = BLOB[tb + (bits >> (32 - VKI_JH_LOOK_BITS))];
    if (e != 0u)
        return e;
    for (uint l = VKI_JH_LOOK_BITS + 1; l <= 16u; l++) {
        const int code = int(bits >> (32u - l));
        if (code <= int(BLOB[tb + VKI_JH_MAXCODE + l])) {
            const uint i = uint(code + int(BLOB[tb + VKI_JH_VALOFF + l]));
            return l << 8 | ((BLOB[tb + VKI_JH_HUFFVAL + (i >> 2)] >> (8u * (i & 3u))) & 0xffu);
        }
    }
    return 0u;
}

// HUFF_EXTEND: the s-bit value v as a signed difference
int extend(uint v, uint s)
{
    return v < (1u << (s - 1u)) ? int(v) - int(1u << s) + 1 : int(v);
}

// The state as stored: p, then z | b << 7; NO_CODE (a decoder that met no code)
uvec2 pack_state(uint p, uint b, uint z)
{
    return uvec2(p, z | b << 7);
}
const uint NO_CODE = ~0u;

// The entry of the subsequence from bit lo after the exit `prev`: the guess
// where that decoder met no code (its own subsequence's first bit, block 0, the
// DC; an exit of no code passed on would stop every decoder after it, and they
// would not find step until the rounds brought the true states that far). At
// an interval's true end only padding follows: no code from any entry.
uvec2 entry_after(uvec2 prev, uint lo)
{
    return prev.y == NO_CODE ? pack_state(lo, 0u, 0u) : prev;
}

// The code at (p, b, z): false where there is none. Else the state after it, and
// what it gives: dc (a block begun; val its DC difference), or an AC coefficient
// (pos >= 0: its natural index, val its value).
bool step(uint wb, inout uint p, inout uint b, inout uint z, out bool dc, out int pos, out int val, out uint dcs)
{
    const uint bits = peek(wb, p), sl = slots[b];
    dc = z == 0u;
    pos = -1;
    val = 0;
    dcs = 0u;
    const uint e = huff(dc ? (sl >> 12) & 15u : sl >> 16, bits);
    if (e == 0u)
        return false;
    const uint l = e >> 8, sym = e & 0xffu;
    if (dc) {
        dcs = sym;
        if (sym != 0u)
            val = extend((bits << l) >> (32u - sym), sym);
        p += l + sym;
        z = 1u;
        return true;
    }
    const uint r = sym >> 4, s = sym & 15u;
    if (s == 0u) {
        z = r == 15u ? z + 16u : 64u; // ZRL, EOB
    } else {
        z += r;
        pos = int(z < 64u ? ZZ[z] : 63u); // (libjpeg's natural order has 16 more entries of 63)
        val = extend((bits << l) >> (32u - s), s);
        z += 1u;
    }
    p += l + s;
    if (z >= 64u) {
        z = 0u;
        b = b + 1u == BLOB[VKI_JH_BPM] ? 0u : b + 1u;
    }
    return true;
}

// The interval of subsequence t: the last k with first[k] <= t
uint interval_of(uint t)
{
    uint lo = 0u, hi = pc.nint; // first[lo] <= t < first[hi]
    while (hi - lo > 1u) {
        const uint mid = (lo + hi) >> 1;
        if (U32Buf(pc.first).v[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void main()
{
    const uint i = gl_LocalInvocationID.x, t = group_linear() * WG + i;
    const bool live = t < pc.nsub;
    if (i < VKI_JH_MAX_BPM)
        slots[i] = BLOB[VKI_JH_SLOT + i];
    if (PHASE == 0 && pc.round > 0u && STATUS[pc.round] == 0u) { // the last round changed nothing: copy
        if (live) {
            U32Buf(pc.st_out).v[2u * t] = U32Buf(pc.st_in).v[2u * t];
            U32Buf(pc.st_out).v[2u * t + 1u] = U32Buf(pc.st_in).v[2u * t + 1u];
        }
        return;
    }
    barrier();
    // the subsequence: interval k's bits [lo, hi), its data from word wb
    uint k = 0u, j = 0u, lo = 0u, hi = 0u, wb = 0u, end = 0u;
    if (live) {
        k = interval_of(t);
        j = t - U32Buf(pc.first).v[k];
        const uint iv = BLOB[VKI_JH_IVL] + 2u * k;
        wb = BLOB[VKI_JH_DATA] + BLOB[iv];
        end = BLOB[iv + 1u];
        lo = j * SBITS;
        hi = min(lo + SBITS, end);
    }
    if (PHASE == 0) {
        // the entry: exact at an interval's start, else the last round's exit of t - 1 (round 0: a guess)
        uvec2 entry = j == 0u ? uvec2(0u)
                      : pc.round == 0u ? pack_state(lo, 0u, 0u)
                                       : entry_after(uvec2(U32Buf(pc.st_in).v[2u * t - 2u], U32Buf(pc.st_in).v[2u * t - 1u]), lo);
        uvec2 exit_ = entry;
        uint blocks = 0u;
        bool need = live;
        for (;;) {
            if (need) {
                uint p = entry.x, z = entry.y & 127u, b = entry.y >> 7;
                blocks = 0u;
                while (p < hi) {
                    bool dc;
                    int pos, val;
                    uint dcs;
                    if (!step(wb, p, b, z, dc, pos, val, dcs))
                        break;
                    blocks += dc ? 1u : 0u;
                }
                exit_ = p < hi ? uvec2(p, NO_CODE) : pack_state(p, b, z);
            }
            ex[i] = exit_;
            if (i == 0u)
                any_changed = 0u;
            barrier();
            const uvec2 ne = (!live || j == 0u || i == 0u) ? entry : entry_after(ex[i - 1u], lo);
            need = ne != entry;
            entry = ne;
            if (need)
                any_changed = 1u;
            barrier();
            const bool again = any_changed != 0u;
            barrier();
            if (!again)
                break;
        }
        if (live) {
            U32Buf(pc.st_out).v[2u * t] = exit_.x;
            U32Buf(pc.st_out).v[2u * t + 1u] = exit_.y;
            U32Buf(pc.counts).v[t] = blocks;
            if (pc.round == 0u || exit_ != uvec2(U32Buf(pc.st_in).v[2u * t], U32Buf(pc.st_in).v[2u * t + 1u]))
                atomicAdd(STATUS[1u + pc.round], 1u);
        }
        return;
    }

    // PHASE 1: the coefficients
    if (!live)
        return;
    if (STATUS[ROUNDS] != 0u) { // not synchronized
        if (t == 0u)
            atomicOr(STATUS[0], VKI_JH_ERR_SYNC);
        return;
    }
    const uint bpm = BLOB[VKI_JH_BPM], mcux = BLOB[VKI_JH_MCUX], bpi = BLOB[VKI_JH_RI] * bpm;
    const uint kb = k * bpi, ek = min(bpi, BLOB[VKI_JH_BLOCKS] - kb); // the interval's first block, its blocks
    const uint first = U32Buf(pc.counts).v[t];
    if (j == 0u && (first != kb || U32Buf(pc.counts).v[U32Buf(pc.first).v[k + 1u]] - first != ek))
        atomicOr(STATUS[0], VKI_JH_ERR_COUNT);
    uvec2 entry = j == 0u ? uvec2(0u) : entry_after(uvec2(U32Buf(pc.st_in).v[2u * t - 2u], U32Buf(pc.st_in).v[2u * t - 1u]), lo);
    uint p = entry.x, z = entry.y & 127u, b = entry.y >> 7;
    uint cur = first - 1u; // the block in progress at the entry (where z > 0)
    uint base = 0u;
    if (z != 0u && cur >= kb && cur < kb + ek) { // its coefficients
        const uint m = cur / bpm, sl = slots[b], c = sl & 15u, cw = VKI_JH_COMP + 8u * c;
        const uint bx = (m % mcux) * BLOB[cw + VKI_JH_C_H] + ((sl >> 4) & 15u);
        const uint by = (m / mcux) * BLOB[cw + VKI_JH_C_V] + ((sl >> 8) & 15u);
        base = (BLOB[cw + VKI_JH_C_OFF] + by * BLOB[cw + VKI_JH_C_BW] + bx) * 64u;
    }
    uint err = 0u;
    while (p < hi) {
        bool dc;
        int pos, val;
        uint dcs;
        const uint b0 = b;
        if (!step(wb, p, b, z, dc, pos, val, dcs)) { // only past the interval's last block
            if (z != 0u || cur + 1u != kb + ek)
                err |= VKI_JH_ERR_CODE;
            break;
        }
        if (dc) {
            cur++;
            if (cur >= kb + ek) { // a block more than the interval has
                err |= VKI_JH_ERR_COUNT;
                break;
            }
            if (dcs > 11u)
                err |= VKI_JH_ERR_DC;
            const uint m = cur / bpm, sl = slots[b0], c = sl & 15u, cw = VKI_JH_COMP + 8u * c;
            const uint bx = (m % mcux) * BLOB[cw + VKI_JH_C_H] + ((sl >> 4) & 15u);
            const uint by = (m / mcux) * BLOB[cw + VKI_JH_C_V] + ((sl >> 8) & 15u);
            base = (BLOB[cw + VKI_JH_C_OFF] + by * BLOB[cw + VKI_JH_C_BW] + bx) * 64u;
            U16Buf(pc.coefs).v[base] = uint16_t(uint(val) & 0xffffu);
        } else if (pos >= 0) {
            U16Buf(pc.coefs).v[base + uint(pos)] = uint16_t(uint(val) & 0xffffu);
        }
        if (z == 0u && cur + 1u == kb + ek) { // the interval's last block ended: 0..7 bits of padding left
            if (end - p >= 8u)
                err |= VKI_JH_ERR_EXTRA;
            break;
        }
    }
    if (p >= hi && hi == end && (z != 0u || cur + 1u != kb + ek)) // the interval's data ran out
        err |= VKI_JH_ERR_CODE;
    if (err != 0u)
        atomicOr(STATUS[0], err);
}
