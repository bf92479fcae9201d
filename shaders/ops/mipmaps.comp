#version 460
// mipmaps: up to LEVELS box-filtered mip levels in one dispatch, while every
// level halves exactly (even sizes): each level pixel is the mean of the 2 x 2
// pixels of the level before it -- the definition's box filter at a factor of
// exactly 2 -- taken from that level as written (quantized to the output format),
// premultiplied by alpha and in linear light where asked, like resize.comp.
// A workgroup takes a 64 x 64 square of the input (a 2^LEVELS multiple: enough work
// for its invocations however few levels halve), writes it as level 0 (in the
// output format; not where level 0 is the input itself) and makes level 1 from that, keeps each new level's values of
// its tile in shared memory for the next, and writes every level once: DRAM sees
// the input once, and each level once.
// The levels past these (odd sizes) are the tail dispatch's (below) for 8-bit
// output, else resize.comp's (src/ops/mipmaps.c).
// VEC8: 8-bit in and out with 8-byte aligned input rows: an invocation reads its
// 8 x 2 input pixels as 64-bit words and writes its 4 level-1 pixels as 32-bit
// words (bytes a lane apart cost the load unit a pass each).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int LEVELS = 1;  // 1..6
layout(constant_id = 9) const int LINEAR = 0;
layout(constant_id = 10) const int WRITE0 = 1; // 0: level 0 is the input itself (nothing to write)
layout(constant_id = 11) const int VEC8 = 0;
layout(constant_id = 12) const int TAILPX = 0; // > 0: the tail dispatch (below); pixels of its first level
layout(constant_id = 13) const int TAILN = 1;  // the tail dispatch: levels it makes (1..7)

// 8-bit in and out without alpha or linear light (VEC8 and not so): every
// level pixel is (a + b + c + d + 2) >> 2 of its 2 x 2 bytes, in integers.
// These are the float sums' bytes: u2f(x) / 255 per byte, the rows' pairs
// added, then the rows, times 1/4, quantized (mean4, quantized) give exactly
// that for every 2 x 2 of bytes (checked for all of them, the quantization's
// multiply-add fused or not: the sums of a pair take at most 3 values a total,
// and no total lands on the other side of a half). A fifth of the float
// path's instructions; the same bytes (test_mipmaps compares this pass with
// resize.comp's levels on every case).
// (a function of one test a line: glslang 11 leaves an operand of a chain of
// && or || over these spec constants undefined in its SPIR-V)
bool int8_path()
{
    if (VEC8 == 0)
        return false;
    if (HAS_ALPHA)
        return false;
    return LINEAR == 0;
}
#define INT8 int8_path()

// With alpha (8-bit in and out, not in linear light): the premultiplied mean in
// integers. Alpha is (A + 2) >> 2 of its four bytes (as above); a colour is
// C / A rounded to nearest, half up (C = the sum of colour x alpha, A the sum of
// alpha; 0 where A is 0), which the float path gives too except where C / A is
// k + 1/2 exactly: elsewhere C / A + 1/2 is at least 1 / (2A) >= 1/2040 from an
// integer, and the float path's roundings (the products, the sums, the division
// by the mean alpha, the quantization) move it by less than 2e-4. Where some
// colour is such a tie the float path makes the pixel (alpha_mean's tie).
bool int8a_path()
{
    if (VEC8 == 0)
        return false;
    if (!HAS_ALPHA)
        return false;
    return LINEAR == 0;
}
#define INT8A int8a_path()

layout(push_constant) uniform Push {
    uvec2 src;   // the input (IN_FMT)
    uvec2 lv[7]; // the levels 0..LEVELS (OUT_FMT)
    uint w, h;   // the input's size (each level halves it exactly)
} pc;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer U64Buf { uvec2 v[]; };

// Level 1, and the odd levels after it (row pitch 32); the even levels after level
// 1 (row pitch 16). With 8-bit output the kept values are their bytes, packed
// (a quarter of the shared memory: more workgroups an SM), else floats.
const bool PACK8 = OUT_FMT == FMT_U8;
const bool FUSED = TAILPX == 0;
shared vec4 tile[PACK8 || !FUSED ? 1 : 32 * 32];
shared vec4 half_[PACK8 || !FUSED ? 1 : 16 * 16];
shared uint tile8[PACK8 && FUSED ? 32 * 32 : 1];
shared uint half8[PACK8 && FUSED ? 16 * 16 : 1];
// the tail dispatch's levels, as bytes: its even levels, its odd ones
shared uint tail_a[FUSED ? 1 : TAILPX];
shared uint tail_b[FUSED ? 1 : TAILPX / 2 + 1];

// a quantized 8-bit pixel as its bytes, and back as load_px reads them
uint bytes_of(vec4 v)
{
    return quantize_u(v.x, 255.0) | (quantize_u(v.y, 255.0) << 8) | (quantize_u(v.z, 255.0) << 16) |
           (quantize_u(v.w, 255.0) << 24);
}

vec4 from_bytes(uint p)
{
    return vec4(u2f(p & 0xffu), u2f((p >> 8) & 0xffu), u2f((p >> 16) & 0xffu), u2f(p >> 24)) * (1.0 / 255.0);
}
float to_linear(float v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

float to_srgb(float l)
{
    return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

// a pixel as stored (output format) -> premultiplied, linear
vec4 pre(vec4 v)
{
    if (LINEAR != 0)
        for (int c = 0; c < COLOUR; c++)
            v[c] = to_linear(clamp(v[c], 0.0, 1.0));
    if (HAS_ALPHA)
        for (int c = 0; c < COLOUR; c++)
            v[c] *= v[COLOUR];
    return v;
}

// v as store_px writes it in the output format, read back as load_px reads it
// (the same float: resize.comp reads the levels with load_px where this pass
// does not run)
vec4 quantized(vec4 v)
{
    if (OUT_FMT == FMT_U8)
        return from_bytes(bytes_of(v));
    if (OUT_FMT == FMT_U16)
        return vec4(u2f(quantize_u(v.x, 65535.0)), u2f(quantize_u(v.y, 65535.0)), u2f(quantize_u(v.z, 65535.0)),
                    u2f(quantize_u(v.w, 65535.0))) * (1.0 / 65535.0);
    return v;
}

// The mean of 2 x 2 pixels (a b / c d) as resize.comp sums them: each row's
// pair, then the rows, with weights 1/2 (exact), so the same bits.
vec4 mean4(vec4 a, vec4 b, vec4 c, vec4 d)
{
    precise vec4 top = a + b, bottom = c + d, s = 0.25 * (top + bottom);
    return s;
}

// level 0 pixel i: the input as written in the output format
vec4 level0(uint i)
{
    vec4 v = load_px(pc.src, i);
    if (WRITE0 != 0)
        store_px(pc.lv[0], i, v);
    return pre(quantized(v));
}

// the colour divided by the resized alpha, sRGB again with LINEAR (as resize.comp)
vec4 unpre(vec4 s)
{
    if (HAS_ALPHA) {
        float a = clamp(s[COLOUR], 0.0, 1.0);
        for (int c = 0; c < COLOUR; c++)
            s[c] = a > 0.0 ? s[c] / a : 0.0;
        s[COLOUR] = a;
    }
    if (LINEAR != 0)
        for (int c = 0; c < COLOUR; c++)
            s[c] = to_srgb(clamp(s[c], 0.0, 1.0));
    return s;
}

// the mean of 2 x 2 premultiplied pixels -> the stored value, quantized as
// store_px does (returned as the value the next level reads back)
vec4 finish(vec4 s)
{
    return quantized(unpre(s));
}

// pixel (x, y) of the level kept in shared memory: level l >= 1 of the tile
vec4 kept(int l, uint x, uint y)
{
    if (PACK8)
        return from_bytes(l % 2 == 1 ? tile8[y * 32u + x] : half8[y * 16u + x]);
    return l % 2 == 1 ? tile[y * 32u + x] : half_[y * 16u + x];
}

void keep(int l, uint x, uint y, vec4 v)
{
    if (PACK8) {
        if (l % 2 == 1)
            tile8[y * 32u + x] = bytes_of(v);
        else
            half8[y * 16u + x] = bytes_of(v);
    } else if (l % 2 == 1) {
        tile[y * 32u + x] = v;
    } else {
        half_[y * 16u + x] = v;
    }
}

// INT8A: the mean of four pixels' bytes (packed as bytes_of packs them), and
// whether a colour fell on a half exactly (then the caller takes the float path)
uint alpha_mean(uint p0, uint p1, uint p2, uint p3, out bool tie)
{
    const int sh = 8 * COLOUR;
    const uint a0 = (p0 >> sh) & 0xffu, a1 = (p1 >> sh) & 0xffu, a2 = (p2 >> sh) & 0xffu, a3 = (p3 >> sh) & 0xffu;
    const uint A = a0 + a1 + a2 + a3;
    uint b = ((A + 2u) >> 2) << sh;
    tie = false;
    if (A == 0u)
        return b;
    const uint den = 2u * A;
    const float rden = 1.0 / float(den);
    for (int c = 0; c < COLOUR; c++) {
        const int k = 8 * c;
        const uint C = ((p0 >> k) & 0xffu) * a0 + ((p1 >> k) & 0xffu) * a1 + ((p2 >> k) & 0xffu) * a2 +
                       ((p3 >> k) & 0xffu) * a3;
        const uint num = 2u * C + A; // round(C / A) = floor(num / den); num < 2^20, exact as a float
        uint q = uint(float(num) * rden);
        if (q * den > num)
            q--;
        else if ((q + 1u) * den <= num)
            q++;
        tie = tie || q * den == num;
        b |= min(q, 255u) << k;
    }
    return b;
}

// level-1 pixel p (q in the tile) from its 2 x 2 level-0 pixels read one by one
void level1_px(uvec2 p, uvec2 q, uint w)
{
    uint i = 2u * p.y * pc.w + 2u * p.x;
    vec4 v = finish(mean4(level0(i), level0(i + 1u), level0(i + pc.w), level0(i + pc.w + 1u)));
    keep(1, q.x, q.y, v);
    store_px(pc.lv[1], p.y * w + p.x, v);
}

// byte j of a word array (j a constant once unrolled)
uint byte_at(uint wd, int j)
{
    return (wd >> (8 * (j & 3))) & 0xffu;
}

// VEC8: level-1 pixels (p.x .. p.x + 3, p.y), the 8 x 2 input pixels under them
// read as IN_C 64-bit words a row (u8 in and out, so level 0 as written is the
// input: its values as load_px reads them, no quantization to redo).
void level1_vec(uvec2 p, uvec2 q, uint w)
{
    const uint wpr = pc.w * uint(IN_C) / 8u; // 64-bit words an input row
    uint i0 = 2u * p.y * wpr + p.x * uint(IN_C) / 4u, i1 = i0 + wpr;
    uint r0[8], r1[8];
    for (int k = 0; k < IN_C; k++) {
        uvec2 a = U64Buf(pc.src).v[i0 + uint(k)], b = U64Buf(pc.src).v[i1 + uint(k)];
        r0[2 * k] = a.x;
        r0[2 * k + 1] = a.y;
        r1[2 * k] = b.x;
        r1[2 * k + 1] = b.y;
        if (WRITE0 != 0) {
            U64Buf(pc.lv[0]).v[i0 + uint(k)] = a;
            U64Buf(pc.lv[0]).v[i1 + uint(k)] = b;
        }
    }
    uint o[4] = uint[4](0u, 0u, 0u, 0u); // the 4 pixels' bytes, packed as the output row has them
    for (int i = 0; i < 4; i++) {
        if (INT8) {
            uint b = 0u;
            for (int c = 0; c < IN_C; c++) {
                int j0 = 2 * i * IN_C + c, j1 = j0 + IN_C;
                uint s = byte_at(r0[j0 >> 2], j0) + byte_at(r0[j1 >> 2], j1) + byte_at(r1[j0 >> 2], j0) +
                         byte_at(r1[j1 >> 2], j1) + 2u;
                b |= (s >> 2) << (8 * c);
                int j = i * IN_C + c;
                o[j >> 2] |= (s >> 2) << (8 * (j & 3));
            }
            tile8[q.y * 32u + q.x + uint(i)] = b;
            continue;
        }
        bool tie = true;
        uint b = 0u;
        if (INT8A) {
            uint pb[4];
            for (int e = 0; e < 4; e++) { // top-left, top-right, bottom-left, bottom-right
                pb[e] = 0u;
                for (int c = 0; c < IN_C; c++) {
                    int j = (2 * i + (e & 1)) * IN_C + c;
                    pb[e] |= byte_at(e < 2 ? r0[j >> 2] : r1[j >> 2], j) << (8 * c);
                }
            }
            b = alpha_mean(pb[0], pb[1], pb[2], pb[3], tie);
        }
        if (tie) {
            vec4 px[4];
            for (int e = 0; e < 4; e++) {
                vec4 v = vec4(0.0);
                for (int c = 0; c < IN_C; c++) {
                    int j = (2 * i + (e & 1)) * IN_C + c;
                    v[c] = u2f(byte_at(e < 2 ? r0[j >> 2] : r1[j >> 2], j)) * (1.0 / 255.0);
                }
                px[e] = pre(v);
            }
            b = bytes_of(unpre(mean4(px[0], px[1], px[2], px[3])));
        }
        tile8[q.y * 32u + q.x + uint(i)] = b; // keep(1, ...) of from_bytes(b)
        for (int c = 0; c < IN_C; c++) {
            int j = i * IN_C + c;
            o[j >> 2] |= ((b >> (8 * c)) & 0xffu) << (8 * (j & 3));
        }
    }
    uint oi = (p.y * w + p.x) * uint(IN_C) / 4u;
    for (int k = 0; k < IN_C; k++)
        U32Buf(pc.lv[1]).v[oi + uint(k)] = o[k];
}

// ---- The tail dispatch (8-bit output): the levels after the fused pass's (odd
// sizes: 135 -> 67 ...), TAILN of them in one workgroup, each the box resize of
// the one before exactly as resize.comp's passes make it (the same taps, weights
// and sums in the same order, so the same bytes); the first from the fused
// pass's last level (pc.src, pc.w x pc.h), the others from shared memory, where
// each level is kept as its bytes. One dispatch instead of one a level; a
// large first level (8K: 120 x 67) is a dispatch of its own over many
// workgroups (TAILN = 1), as one workgroup it took most of the tail's time.

// The box taps of output i of an axis n_in -> n_out as resize.c's axis_table
// makes them: the first, and their count (each of weight 1/n).
void box_taps(uint i, uint ni, uint no, out int j0, out int n)
{
    int k = int((2u * i + 1u) * ni) - int(no), half_w = int(max(ni, no)), two = 2 * int(no);
    j0 = -floor_div(half_w - k, two);
    int j1 = floor_div(k + half_w - 1, two);
    int t = (ni > no ? int((ni + no - 1u) / no) : 1) + 1; // axis_table's T = ceil(2 a) + 1
    n = min(j1 - j0 + 1, t);
}

// float(1.0 / n) as the host rounds it (in double, then to float)
float box_weight(int n)
{
    if (n == 3)
        return uintBitsToFloat(0x3EAAAAABu);
    return n == 1 ? 1.0 : n == 2 ? 0.5 : n == 4 ? 0.25 : 1.0 / float(n);
}

// pixel i of the tail's level l - 1 (l = 0: the fused pass's last level)
vec4 tail_in(int l, uint i)
{
    if (l == 0)
        return from_bytes(uint(U8Buf(pc.src).v[i * uint(OUT_C)]) |
                          (OUT_C > 1 ? uint(U8Buf(pc.src).v[i * uint(OUT_C) + 1u]) << 8 : 0u) |
                          (OUT_C > 2 ? uint(U8Buf(pc.src).v[i * uint(OUT_C) + 2u]) << 16 : 0u) |
                          (OUT_C > 3 ? uint(U8Buf(pc.src).v[i * uint(OUT_C) + 3u]) << 24 : 0u));
    return from_bytes(l % 2 == 1 ? tail_a[i] : tail_b[i]);
}

void tail_main()
{
    // (TAILN = 1: one level over every workgroup of the dispatch, kept nowhere)
    const uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_NumWorkGroups.x;
    const uint t = gl_WorkGroupID.x * gl_WorkGroupSize.x * gl_WorkGroupSize.y + gl_LocalInvocationIndex;
    uint wi = pc.w, hi = pc.h;
    for (int l = 0; l < TAILN; l++) {
        uint wo = max(wi / 2u, 1u), ho = max(hi / 2u, 1u);
        for (uint k = t; k < wo * ho; k += n) {
            int jx, nx, jy, ny;
            box_taps(k % wo, wi, wo, jx, nx);
            box_taps(k / wo, hi, ho, jy, ny);
            float kx = box_weight(nx), ky = box_weight(ny);
            vec4 s = vec4(0.0);
            for (int ty = 0; ty < ny; ty++) {
                uint row = uint(clamp(jy + ty, 0, int(hi) - 1)) * wi;
                vec4 h = vec4(0.0);
                for (int tx = 0; tx < nx; tx++)
                    h += kx * pre(tail_in(l, row + uint(clamp(jx + tx, 0, int(wi) - 1))));
                s += ky * h;
            }
            uint b = bytes_of(unpre(s));
            if (l + 1 == TAILN)
                ; // the last: read by no level after it here
            else if (l % 2 == 0)
                tail_a[k] = b;
            else
                tail_b[k] = b;
            for (int c = 0; c < OUT_C; c++)
                U8Buf(pc.lv[l]).v[k * uint(OUT_C) + uint(c)] = uint8_t((b >> (8 * c)) & 0xffu);
        }
        barrier();
        wi = wo;
        hi = ho;
    }
}

void main()
{
    if (!FUSED) {
        tail_main();
        return;
    }
    const uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y, t = gl_LocalInvocationIndex;
    uint side = 32u; // the tile of level 1, in its pixels (a 64 x 64 input tile, whatever LEVELS)
    uint w = pc.w / 2u, h = pc.h / 2u;
    uvec2 o = gl_WorkGroupID.xy * side; // the tile's corner in level 1
    // level 0 (each input pixel belongs to one level-1 pixel), and level 1 from it
    if (VEC8 != 0) {
        for (uint k = t; k < side * side / 4u; k += n) {
            uvec2 q = uvec2(k % (side / 4u) * 4u, k / (side / 4u)), p = o + q;
            if (p.y >= h || p.x >= w)
                continue;
            if (p.x + 3u < w) {
                level1_vec(p, q, w);
                continue;
            }
            for (uint i = 0u; p.x + i < w; i++) // the row's last pixels
                level1_px(p + uvec2(i, 0u), q + uvec2(i, 0u), w);
        }
    } else {
        for (uint k = t; k < side * side; k += n) {
            uvec2 q = uvec2(k % side, k / side), p = o + q;
            if (p.x < w && p.y < h)
                level1_px(p, q, w);
        }
    }
    // the levels after it, each from the one before in shared memory (the sizes
    // halve exactly, so a valid pixel's 2 x 2 are valid)
    for (int l = 2; l <= LEVELS; l++) {
        barrier();
        side /= 2u;
        o /= 2u;
        w /= 2u;
        h /= 2u;
        for (uint k = t; k < side * side; k += n) {
            uvec2 q = uvec2(k % side, k / side), p = o + q;
            if (p.x >= w || p.y >= h)
                continue;
            uint x = 2u * q.x, y = 2u * q.y;
            if (INT8) { // the four pixels' bytes summed in 16-bit lanes (at most 4 x 255 + 2 each)
                const uint m = 0x00ff00ffu;
                uint a = l % 2 == 0 ? tile8[y * 32u + x] : half8[y * 16u + x],
                     b = l % 2 == 0 ? tile8[y * 32u + x + 1u] : half8[y * 16u + x + 1u],
                     c = l % 2 == 0 ? tile8[(y + 1u) * 32u + x] : half8[(y + 1u) * 16u + x],
                     d = l % 2 == 0 ? tile8[(y + 1u) * 32u + x + 1u] : half8[(y + 1u) * 16u + x + 1u];
                uint lo = (a & m) + (b & m) + (c & m) + (d & m) + 0x00020002u;
                uint hi = ((a >> 8) & m) + ((b >> 8) & m) + ((c >> 8) & m) + ((d >> 8) & m) + 0x00020002u;
                uint v = ((lo >> 2) & m) | (((hi >> 2) & m) << 8);
                if (l % 2 == 1)
                    tile8[q.y * 32u + q.x] = v;
                else
                    half8[q.y * 16u + q.x] = v;
                uint i = (p.y * w + p.x) * uint(OUT_C);
                for (int ch = 0; ch < OUT_C; ch++)
                    U8Buf(pc.lv[l]).v[i + uint(ch)] = uint8_t((v >> (8 * ch)) & 0xffu);
                continue;
            }
            // (INT8A beside INT8, not one block for both with a tie that INT8 never has: so written,
            // the H100 took 0.079 ms for the 8K RGB chain instead of 0.077)
            if (INT8A) {
                const bool odd = l % 2 == 0; // level l - 1 in tile8
                bool tie;
                uint v = alpha_mean(odd ? tile8[y * 32u + x] : half8[y * 16u + x],
                                    odd ? tile8[y * 32u + x + 1u] : half8[y * 16u + x + 1u],
                                    odd ? tile8[(y + 1u) * 32u + x] : half8[(y + 1u) * 16u + x],
                                    odd ? tile8[(y + 1u) * 32u + x + 1u] : half8[(y + 1u) * 16u + x + 1u], tie);
                if (!tie) {
                    if (l % 2 == 1)
                        tile8[q.y * 32u + q.x] = v;
                    else
                        half8[q.y * 16u + q.x] = v;
                    uint i = (p.y * w + p.x) * uint(OUT_C);
                    for (int ch = 0; ch < OUT_C; ch++)
                        U8Buf(pc.lv[l]).v[i + uint(ch)] = uint8_t((v >> (8 * ch)) & 0xffu);
                    continue;
                }
            }
            vec4 v = finish(mean4(pre(kept(l - 1, x, y)), pre(kept(l - 1, x + 1u, y)), pre(kept(l - 1, x, y + 1u)),
                                  pre(kept(l - 1, x + 1u, y + 1u))));
            keep(l, q.x, q.y, v);
            store_px(pc.lv[l], p.y * w + p.x, v);
        }
    }
}
