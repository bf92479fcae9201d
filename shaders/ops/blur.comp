#version 460
// blur: Gaussian, out(x) = sum_{t=-r..r} w_|t| in(x + t) along x, then along y;
// clamp-to-edge. src/ops/blur.c picks one of two ways:
//
// FUSED = 1 (r <= RMAX), one dispatch: a workgroup loads the (TY+2r) x (TX+2r)
// input texels of its TX x TY outputs into shared memory once, packed as they
// are in memory (one word per 8-bit texel), convolves the rows into a
// (TY+2r) x TX float array in shared memory, then the columns straight to the
// output. DRAM sees one read of the input and one write of the output (the halo
// re-reads hit the cache).
//
// FUSED = 0: one pass along DIR (0 = x, 1 = y) of two, through a scratch image
// (f32, or u16 where blur.c finds that exact enough). A workgroup covers LINES
// lines x ALONG outputs: it loads the inputs of its lines into shared memory, at
// most CHUNK positions per line at a time (with more, the loop runs once per
// chunk: any radius works), barrier, then convolves. Pass x convolves one row
// per invocation and stages its results in shared memory, so that its global
// stores are coalesced like all the other global accesses (consecutive
// invocations, consecutive addresses).
//
// FUSED = 2, 3: a box filter pass and a transpose (method=box, below).
//
// FUSED = 4: one pass of two as FUSED = 0, shaped for CPU devices (lavapipe runs
// a workgroup as a loop over SIMD groups of invocations on one core, and every
// shared-memory access and barrier as a loop over the lanes): no shared memory,
// no barrier. An invocation makes NB consecutive outputs of one line, reading the
// NB + 2R texels of its window straight from the input once each (R >= 0:
// unrolled) into the same sums as FUSED = 0 (the same bits). Consecutive
// invocations take consecutive lines: along y adjacent columns, so the lanes of a
// SIMD group read adjacent texels.
//
// Register blocking: an invocation computes N consecutive outputs along the
// pass (N = NB; NBH for the fused rows), so each texel it reads from shared
// memory feeds up to N outputs: N + 2r reads per N outputs instead of 2r + 1
// per output.
// - R >= 0 (r <= RMAX, a spec constant): the loops are unrolled; window texel j
//   is read once and added to the outputs it reaches with the weights w_0..w_r
//   from push constants (constant operands on NVIDIA: no weight loads; the tap
//   count is exact).
// - R < 0 (larger radii): taps in blocks of NB. Two halves of the window (NB
//   texels each) stay in registers and are used alternately (no moves); per
//   block, NB texel reads and NB weight reads (2r+1 taps zero-padded to a
//   multiple of NB, from a buffer) for NB*NB multiply-adds per channel.
//
// Shared memory: a texel of W words is one element of s1/s2/s4 (below). Banks:
// lines along x have an odd pitch (one row per invocation), lines along y are
// adjacent words (one column per invocation), and the arrays written by rows
// and read by columns (fused row results, staged outputs) are XOR-swizzled.
//
// Values stay raw (u8 0..255, u16 0..65535, f16/f32 as stored) until the end
// of a pass, which scales once; integers become floats and back without
// conversion instructions (ufloat, unorm: those run at 1/8 rate on NVIDIA).
// Alpha: the pass that reads the input multiplies colour by alpha on load
// (PREMUL; exact for u8), the pass that writes the output divides it back on
// store (UNPREMUL): colour is blurred premultiplied.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// vkimg-variant: lines BLUR_LINES_ONLY cpu
// (blur_lines.spv: FUSED = 4 alone, what CPU devices run; see CMakeLists.txt)
#ifndef BLUR_LINES_ONLY
#define BLUR_LINES_ONLY 0
#endif
// vkimg-variant: vec BLUR_VEC_ONLY cpu
// (blur_vec.spv: FUSED = 5 alone, the vec pass along x that CPU devices run)
#ifndef BLUR_VEC_ONLY
#define BLUR_VEC_ONLY 0
#endif
// vkimg-variant: ring BLUR_RING_ONLY cpu
// (blur_ring.spv: FUSED = 7 and 8 alone, the sliding passes; lavapipe turns
// every function of a module into NIR before the specialization drops them)
// (they read their input through the texel source: words.glsl SRC_WORD, so
// blur.c runs them where the device has one)
#ifndef BLUR_RING_ONLY
#define BLUR_RING_ONLY 0
#endif
#define TEXEL_SRC BLUR_RING_ONLY
// vkimg-variant: vecy BLUR_VECY_ONLY cpu
// (blur_vecy.spv: FUSED = 6 alone; blur_vec.spv then holds FUSED = 5)
#ifndef BLUR_VECY_ONLY
#define BLUR_VECY_ONLY 0
#endif
#define BLUR_CPU_ONLY (BLUR_VEC_ONLY || BLUR_RING_ONLY || BLUR_VECY_ONLY)
#include "common.glsl"
#if BLUR_CPU_ONLY
#include "words.glsl"
#endif

layout(constant_id = 8) const int DIR = 0;
layout(constant_id = 9) const int CHUNK = 64;  // separable: positions per line held in shared memory
layout(constant_id = 10) const int T1 = 1;     // elements of s1, s2, s4
layout(constant_id = 11) const int PREMUL = 0;
layout(constant_id = 12) const int UNPREMUL = 0;
layout(constant_id = 13) const int FUSED = 0;
layout(constant_id = 14) const int NB = 8;     // outputs per invocation (register block)
layout(constant_id = 15) const int LINES = 32; // separable: lines per workgroup; fused: TX (multiple of 32, NBH)
layout(constant_id = 16) const int ALONG = 64; // separable: outputs per line; fused: TY (multiple of NB)
layout(constant_id = 17) const int PITCH = 1;  // texels between lines along x (odd)
layout(constant_id = 18) const int R = -1;     // radius when unrolled, else -1 (pc.r)
layout(constant_id = 19) const int SWZ = 0;    // separable x: swizzle mask of the staged outputs
layout(constant_id = 20) const int T2 = 1;
layout(constant_id = 21) const int T4 = 1;
layout(constant_id = 22) const int NBH = 16;   // fused: outputs per invocation of the row pass
layout(constant_id = 23) const int PACKED = 0; // u8 RGB input, 4-byte aligned and padded: read words
layout(constant_id = 24) const int PAD16 = 0;  // lines: the u16 RGB intermediate as 4 u16 a texel (read: 1, written: 2)
layout(constant_id = 25) const int EDGE = 0;   // vec passes: 0 the interior (whole words), 1 the rest (texel by texel)
layout(constant_id = 26) const int VW = 4;     // vec pass along y: 64-bit words of a row an invocation reads
layout(constant_id = 27) const int RING_M = 4; // sliding passes: an invocation's outputs, in periods of the ring
layout(constant_id = 28) const int RINGX = 0;  // x pass EDGE = 1: the edges of the sliding pass along x (h_ring)
layout(constant_id = 29) const int TEXEL = 0;  // with TEXEL_SRC: the input is read through the texel source (words.glsl)

#define RMAX VKI_BLUR_RMAX // the push block is 128 bytes
layout(push_constant) uniform Push {
    uvec2 src, dst, wts; // wts: R < 0 only
    int w, h, r;
    float wk[RMAX + 1]; // R >= 0: w_0..w_R (w_-t = w_t)
} pc;

// A texel of W words is one element of s1 (W = 1), s2 (2), s4 (4), or of s2
// and s1 (3): one access per texel (lavapipe turns each access into a loop
// over the lanes; GPUs do 64/128-bit accesses). Separable x passes use s1
// only, one plane per word, as they stage their results there too.
shared uint s1[T1];
shared uvec2 s2[T2];
shared uvec4 s4[T4];

layout(buffer_reference, std430, buffer_reference_align = 8) buffer U64Buf { uvec2 v[]; };

// Words per texel of this pass's input in shared memory.
const int WPT = IN_FMT == FMT_U8 ? 1 : (IN_FMT == FMT_F32 ? IN_C : (IN_C + 1) / 2);
const int WG = int(gl_WorkGroupSize.x);

// Texel p of the pass input, raw, packed into WPT words (one load where the
// texel is a whole aligned word or two).
uvec4 fetch(uint p)
{
    uvec4 u = uvec4(0u);
    uint b = p * uint(IN_C);
    if (IN_FMT == FMT_U8) {
        if (IN_C == 4) {
            u.x = U32Buf(pc.src).v[p];
        } else if (IN_C == 2) {
            u.x = uint(U16Buf(pc.src).v[p]);
        } else if (IN_C == 3 && PACKED != 0) { // the two words holding bytes b..b+2
            U32Buf s = U32Buf(pc.src);
            uint sh = (b & 3u) * 8u, last = (uint(pc.w) * uint(pc.h) * 3u - 1u) >> 2;
            uint w0 = s.v[b >> 2], w1 = s.v[min((b >> 2) + 1u, last)];
            u.x = ((w0 >> sh) | ((w1 << 1) << (31u - sh))) & 0xFFFFFFu;
        } else {
            U8Buf s = U8Buf(pc.src);
            u.x = uint(s.v[b]);
            if (IN_C > 2) u.x |= (uint(s.v[b + 1u]) << 8) | (uint(s.v[b + 2u]) << 16);
        }
    } else if (IN_FMT == FMT_F32) {
        U32Buf s = U32Buf(pc.src);
        u.x = s.v[b];
        if (IN_C > 1) u.y = s.v[b + 1u];
        if (IN_C > 2) u.z = s.v[b + 2u];
        if (IN_C > 3) u.w = s.v[b + 3u];
    } else if (PAD16 == 1 && IN_FMT == FMT_U16 && IN_C == 3) { // 8 bytes a texel: one 64-bit load
        u.xy = U64Buf(pc.src).v[p];
    } else if (HAS_ALPHA) { // u16, f16: the bits
        U32Buf s = U32Buf(pc.src);
        u.x = s.v[b >> 1];
        if (IN_C == 4) u.y = s.v[(b >> 1) + 1u];
    } else {
        U16Buf s = U16Buf(pc.src);
        u.x = uint(s.v[b]);
        if (IN_C > 2) u.x |= uint(s.v[b + 1u]) << 16;
        if (IN_C > 2) u.y = uint(s.v[b + 2u]);
    }
    return u;
}

// Raw channel values of packed words, premultiplied when PREMUL (exact for u8).
vec4 unpack(uvec4 u)
{
    vec4 v = vec4(0.0);
    if (IN_FMT == FMT_U8) {
        v.x = u2f(u.x & 255u);
        if (IN_C > 1) v.y = u2f((u.x >> 8) & 255u);
        if (IN_C > 2) v.z = u2f((u.x >> 16) & 255u);
        if (IN_C > 3) v.w = u2f(u.x >> 24);
    } else if (IN_FMT == FMT_U16) {
        v.x = u2f(u.x & 65535u);
        if (IN_C > 1) v.y = u2f(u.x >> 16);
        if (IN_C > 2) v.z = u2f(u.y & 65535u);
        if (IN_C > 3) v.w = u2f(u.y >> 16);
    } else if (IN_FMT == FMT_F16) {
        v.xy = unpackHalf2x16(u.x);
        if (IN_C > 2) v.zw = unpackHalf2x16(u.y);
    } else {
        v = uintBitsToFloat(u);
    }
    if (PREMUL != 0 && IN_C == 4) v.rgb *= v.a;
    if (PREMUL != 0 && IN_C == 2) v.x *= v.y;
    return v;
}

bool in_s1(int w) { return w == 1 || w == 3; }
bool in_s2(int w) { return w == 2 || w == 3; }

// Texel t (W words) of a region starting at texel o1, o2, o4 of s1, s2, s4.
void tput(int W, ivec3 o, int t, uvec4 u)
{
    if (W == 1) s1[o.x + t] = u.x;
    if (W == 2 || W == 3) s2[o.y + t] = u.xy;
    if (W == 3) s1[o.x + t] = u.z;
    if (W == 4) s4[o.z + t] = u;
}

uvec4 tget(int W, ivec3 o, int t)
{
    uvec4 u = uvec4(0u);
    if (W == 1) u.x = s1[o.x + t];
    if (W == 2 || W == 3) u.xy = s2[o.y + t];
    if (W == 3) u.z = s1[o.x + t];
    if (W == 4) u = s4[o.z + t];
    return u;
}

// Separable x: word k of texel b at s1[b + k*ps].
void pput(int b, int ps, uvec4 u)
{
    s1[b] = u.x;
    if (WPT > 1) s1[b + ps] = u.y;
    if (WPT > 2) s1[b + 2 * ps] = u.z;
    if (WPT > 3) s1[b + 3 * ps] = u.w;
}

uvec4 pget(int b, int ps)
{
    uvec4 u = uvec4(0u);
    u.x = s1[b];
    if (WPT > 1) u.y = s1[b + ps];
    if (WPT > 2) u.z = s1[b + 2 * ps];
    if (WPT > 3) u.w = s1[b + 3 * ps];
    return u;
}

void mac(inout vec4 acc, float wt, vec4 x)
{
    acc.x += wt * x.x;
    if (IN_C > 1) acc.y += wt * x.y;
    if (IN_C > 2) acc.z += wt * x.z;
    if (IN_C > 3) acc.w += wt * x.w;
}

vec4 unpremul(vec4 v)
{
    float a = IN_C == 4 ? v.a : v.y;
    float k = a > 0.0 ? 1.0 / a : 0.0;
    if (IN_C == 4) return vec4(v.rgb * k, a);
    if (IN_C == 2) return vec4(v.x * k, a, 0.0, 0.0);
    return v;
}

// Raw sums -> normalized values (-> straight alpha when UNPREMUL).
vec4 finish(vec4 acc)
{
    float s = IN_FMT == FMT_U8 ? 1.0 / 255.0 : (IN_FMT == FMT_U16 ? 1.0 / 65535.0 : 1.0);
    vec4 k = vec4(s);
    if (PREMUL != 0 && IN_C == 4) k.rgb *= s;
    if (PREMUL != 0 && IN_C == 2) k.x *= s;
    acc *= k;
    return UNPREMUL != 0 ? unpremul(acc) : acc;
}

// Normalized value -> u8/u16 code, rounded to nearest: 2^23 + x*max rounds x*max
// to an integer in the low bits (no conversion instruction; store_sample
// rounds ties up, this to even: both are within half a step).
uint unorm(float x, float m)
{
    return floatBitsToUint(fma(clamp(x, 0.0, 1.0), m, 8388608.0)) & 0xFFFFu;
}

// Sample i (of OUT_FMT) of the pass output.
void store_out(uint i, float x)
{
    if (OUT_FMT == FMT_U8)
        U8Buf(pc.dst).v[i] = uint8_t(unorm(x, 255.0));
    else if (OUT_FMT == FMT_U16)
        U16Buf(pc.dst).v[i] = uint16_t(unorm(x, 65535.0));
    else
        store_sample(pc.dst, OUT_FMT, i, x);
}

// Pixel p of the pass output (IN_C channels): one store where the pixel is a
// whole aligned word or two.
void store_pix(uint p, vec4 v)
{
    uint b = p * uint(IN_C);
    if (OUT_FMT == FMT_U8 && IN_C == 4) {
        U32Buf(pc.dst).v[p] = unorm(v.x, 255.0) | (unorm(v.y, 255.0) << 8) | (unorm(v.z, 255.0) << 16) |
                              (unorm(v.w, 255.0) << 24);
    } else if (OUT_FMT == FMT_U8 && IN_C == 2) {
        U16Buf(pc.dst).v[p] = uint16_t(unorm(v.x, 255.0) | (unorm(v.y, 255.0) << 8));
    } else if (PAD16 == 2 && OUT_FMT == FMT_U16 && IN_C == 3) { // 8 bytes a texel
        U64Buf(pc.dst).v[p] = uvec2(unorm(v.x, 65535.0) | (unorm(v.y, 65535.0) << 16), unorm(v.z, 65535.0));
    } else if (OUT_FMT == FMT_U16 && (HAS_ALPHA)) {
        U32Buf(pc.dst).v[b >> 1] = unorm(v.x, 65535.0) | (unorm(v.y, 65535.0) << 16);
        if (IN_C == 4) U32Buf(pc.dst).v[(b >> 1) + 1u] = unorm(v.z, 65535.0) | (unorm(v.w, 65535.0) << 16);
    } else {
        store_out(b, v.x);
        if (IN_C > 1) store_out(b + 1u, v.y);
        if (IN_C > 2) store_out(b + 2u, v.z);
        if (IN_C > 3) store_out(b + 3u, v.w);
    }
}

// acc[i] += sum_t w_|t| x(i + t + R), t = -R..R, for the N outputs of an
// invocation; LOAD(j) is window texel j (j = 0 .. N + 2R - 1), read once.
#define CONV_UNROLLED(N, LOAD)                                                  \
    [[unroll]] for (int j_ = 0; j_ < N + 2 * R; j_++) {                         \
        vec4 x_ = LOAD(j_);                                                     \
        [[unroll]] for (int i_ = 0; i_ < N; i_++)                               \
            if (j_ - i_ >= 0 && j_ - i_ <= 2 * R)                               \
                mac(acc[i_], pc.wk[abs(j_ - i_ - R)], x_);                      \
    }

// Taps b*NB .. b*NB + NB - 1 (weight buffer order), window halves A then B.
#define CONV_BLOCK(A, B, b)                                                     \
    [[unroll]] for (int s_ = 0; s_ < NB; s_++) {                                \
        float wt_ = wts.v[(b) * NB + s_];                                       \
        [[unroll]] for (int i_ = 0; i_ < NB; i_++)                              \
            mac(acc[i_], wt_, i_ + s_ < NB ? A[min(i_ + s_, NB - 1)] : B[max(i_ + s_ - NB, 0)]); \
    }

#if !BLUR_LINES_ONLY && !BLUR_CPU_ONLY // (the GPU shapes and method=box)
void fused()
{
    const int TX = LINES, TY = ALONG, TH = TY + 2 * R, TW = TX + 2 * R;
    // input texel (row y, column x): y*PITCH + x; row result (y, x), IN_C
    // floats: y*TX + (x ^ (y & 31)), after the input texels in s1/s2/s4
    const ivec3 IN = ivec3(0), HR = ivec3(in_s1(WPT) ? TH * PITCH : 0, in_s2(WPT) ? TH * PITCH : 0,
                                           WPT == 4 ? TH * PITCH : 0);
    const int x0 = int(gl_WorkGroupID.x) * TX - R, y0 = int(gl_WorkGroupID.y) * TY - R;
    const int li = int(gl_LocalInvocationIndex);
    for (int i = li; i < TH * TW; i += WG) {
        int y = i / TW, x = i % TW;
        uvec4 u = fetch(uint(clamp(y0 + y, 0, pc.h - 1)) * uint(pc.w) + uint(clamp(x0 + x, 0, pc.w - 1)));
        tput(WPT, IN, y * PITCH + x, u);
    }
    barrier();
    // rows: item = (row y, NBH columns), consecutive invocations on consecutive rows
    for (int it = li; it < TH * (TX / NBH); it += WG) {
        int y = it % TH, x = (it / TH) * NBH, b = y * PITCH + x;
        vec4 acc[NBH];
        [[unroll]] for (int i = 0; i < NBH; i++)
            acc[i] = vec4(0.0);
#define LOAD_ROW(j) unpack(tget(WPT, IN, b + (j)))
        CONV_UNROLLED(NBH, LOAD_ROW)
        [[unroll]] for (int i = 0; i < NBH; i++)
            tput(IN_C, HR, y * TX + ((x + i) ^ (y & 31)), floatBitsToUint(acc[i]));
    }
    barrier();
    // columns: item = (column x, NB rows), consecutive invocations on consecutive columns
    for (int it = li; it < TX * (TY / NB); it += WG) {
        int x = it % TX, y = (it / TX) * NB;
        vec4 acc[NB];
        [[unroll]] for (int i = 0; i < NB; i++)
            acc[i] = vec4(0.0);
#define LOAD_COL(j) uintBitsToFloat(tget(IN_C, HR, (y + (j)) * TX + (x ^ ((y + (j)) & 31))))
        CONV_UNROLLED(NB, LOAD_COL)
        int gx = x0 + R + x;
        [[unroll]] for (int i = 0; i < NB; i++) {
            int gy = y0 + R + y + i;
            if (gx < pc.w && gy < pc.h)
                store_pix(uint(gy) * uint(pc.w) + uint(gx), finish(acc[i]));
        }
    }
}

void separable()
{
    const bool X = DIR == 0;
    const int li = int(gl_LocalInvocationIndex);
    const int line = li % LINES, seg = li / LINES; // this invocation's item
    const bool busy = seg < ALONG / NB;
    const int n_along = X ? pc.w : pc.h, n_lines = X ? pc.h : pc.w;
    const int l0 = int(X ? gl_WorkGroupID.y : gl_WorkGroupID.x) * LINES;  // first line
    const int a0 = int(X ? gl_WorkGroupID.x : gl_WorkGroupID.y) * ALONG;  // first output along DIR
    const int r = R >= 0 ? R : pc.r;
    const int nblk = (2 * r + NB) / NB;                                    // R < 0: tap blocks
    const int np = R >= 0 ? ALONG + 2 * R : (ALONG / NB + nblk) * NB;     // positions per line
    const int nreal = ALONG + 2 * r; // positions past it (R < 0 padding) hold 0
    // texel of position j (in the chunk) of line l: x: l*PITCH + j in planes of
    // PS words of s1; y: j*LINES + l (s1/s2/s4)
    const int PS = LINES * PITCH;
    const int STEP = X ? 1 : LINES;
    const int lb = X ? line * PITCH : line;
    F32Buf wts = F32Buf(pc.wts);

    vec4 acc[NB], A[NB], B[NB];
    [[unroll]] for (int i = 0; i < NB; i++) {
        acc[i] = vec4(0.0);
        A[i] = vec4(0.0);
        B[i] = vec4(0.0);
    }
    int hn = seg; // R < 0: next half (NB positions) of the window to read
    for (int c0 = 0; c0 < np; c0 += CHUNK) {
        const int cnt = min(CHUNK, np - c0);
        if (c0 > 0)
            barrier();
        for (int i = li; i < LINES * CHUNK; i += WG) {
            int l = X ? i / CHUNK : i % LINES, j = X ? i % CHUNK : i / LINES;
            if (j >= cnt)
                continue;
            uvec4 u = uvec4(0u);
            if (c0 + j < nreal) {
                uint q = uint(clamp(a0 - r + c0 + j, 0, n_along - 1)), ln = uint(min(l0 + l, n_lines - 1));
                u = fetch(X ? ln * uint(pc.w) + q : q * uint(pc.w) + ln);
            }
            if (X)
                pput(l * PITCH + j, PS, u);
            else
                tput(WPT, ivec3(0), j * LINES + l, u);
        }
        barrier();
        if (!busy)
            continue;
        if (R >= 0) { // one chunk (blur.c)
            const int b = lb + seg * NB * STEP;
#define LOAD_LINE(j) unpack(X ? pget(b + (j) * STEP, PS) : tget(WPT, ivec3(0), b + (j) * STEP))
            CONV_UNROLLED(NB, LOAD_LINE)
        } else {
            const int hend = min((c0 + cnt) / NB, seg + nblk + 1);
            const int b = lb - c0 * STEP; // word of position p of the line: b + p*STEP
            while (hn < hend) {
                [[unroll]] for (int m = 0; m < NB; m++)
                    B[m] = unpack(X ? pget(b + (hn * NB + m) * STEP, PS) : tget(WPT, ivec3(0), b + (hn * NB + m) * STEP));
                if (hn > seg) {
                    CONV_BLOCK(A, B, hn - seg - 1)
                }
                hn++;
                if (hn >= hend) {
                    [[unroll]] for (int m = 0; m < NB; m++)
                        A[m] = B[m];
                    break;
                }
                [[unroll]] for (int m = 0; m < NB; m++)
                    A[m] = unpack(X ? pget(b + (hn * NB + m) * STEP, PS) : tget(WPT, ivec3(0), b + (hn * NB + m) * STEP));
                CONV_BLOCK(B, A, hn - seg - 1)
                hn++;
            }
        }
    }
    if (!X) { // consecutive invocations store consecutive columns
        const int ln = l0 + line;
        [[unroll]] for (int i = 0; i < NB; i++) {
            int o = a0 + seg * NB + i;
            if (busy && ln < n_lines && o < n_along)
                store_pix(uint(o) * uint(pc.w) + uint(ln), finish(acc[i]));
        }
        return;
    }
    // along x: stage the LINES x ALONG results (row l, sample e at
    // l*ALONG*C + (e ^ (l & SWZ))), then store them row by row
    const int RS = ALONG * IN_C;
    barrier();
    if (busy) {
        [[unroll]] for (int i = 0; i < NB; i++) {
            vec4 v = finish(acc[i]);
            int e = (seg * NB + i) * IN_C;
            s1[line * RS + (e ^ (line & SWZ))] = floatBitsToUint(v.x);
            if (IN_C > 1) s1[line * RS + ((e + 1) ^ (line & SWZ))] = floatBitsToUint(v.y);
            if (IN_C > 2) s1[line * RS + ((e + 2) ^ (line & SWZ))] = floatBitsToUint(v.z);
            if (IN_C > 3) s1[line * RS + ((e + 3) ^ (line & SWZ))] = floatBitsToUint(v.w);
        }
    }
    barrier();
    for (int i = li; i < LINES * RS; i += WG) {
        int l = i / RS, e = i % RS;
        int x = a0 + e / IN_C, y = l0 + l;
        if (x < pc.w && y < pc.h)
            store_out((uint(y) * uint(pc.w) + uint(a0)) * uint(IN_C) + uint(e), uintBitsToFloat(s1[l * RS + (e ^ (l & SWZ))]));
    }
}

// method=box (blur.c): FUSED = 3 transposes, FUSED = 2 runs one box pass
// along y. The passes along x run along y of the transposed image, so every
// pass reads and writes whole rows (coalesced; walking along x, a warp's
// threads would each stream a different row):
//   transpose (premultiply, normalize) -> 3 box passes -> transpose back ->
//   3 box passes (the last one unpremultiplies and writes the output).
//
// FUSED = 2: the mean of the 2r+1 texels around each output (r = pc.r) along
// y of a pc.w-wide image. Passes after the first read the previous one over an
// extended domain (blur.c), so only the first clamps to the image: the cascade
// is exactly the convolution of the clamped image with the composite kernel.
// Rows, as int bits in pc.wk[0..3]: input [in_lo, in_lo + in_n), output
// [out_lo, out_lo + out_n). Invocation = (column, chunk of CHUNK outputs),
// consecutive invocations on consecutive columns; a running sum over the
// window: after the first window (2r+1 reads; CHUNK >= r keeps that <= 2 per
// output) each output costs one texel in and one out, whatever the radius.
//
// The passes read f32 (the transposes normalize and premultiply). The sums are
// int64 fixed point with BOX_FIX fraction bits (values clamped to
// +-2^31/(2r+1) so no sum overflows; they are in [0, 1]): adding and removing
// are exact, so a window of zeros sums to exactly 0 and a small sum
// keeps its relative precision (a float running sum keeps an absolute error
// the size of what it held before: colour / alpha goes wrong where alpha is
// small).
const int BOX_FIX = 32;

// Each value is two such numbers, hi in units of 2^-BOX_FIX and lo (the rest,
// exact: c - round(c) is) in units of 2^-2*BOX_FIX, summed apart: a sum keeps the
// relative precision of a float however small it is (with hi alone, a blurred
// alpha of 1e-5 was known to 2^-32 / 1e-5 = 2e-5 and the colour divided by it
// as badly: 1 LSB of u16).
struct fix2 {
    i64vec4 hi, lo;
};

fix2 box_fix(vec4 v, float lim)
{
    vec4 c = clamp(v, -lim, lim) * exp2(float(BOX_FIX)), h = round(c);
    return fix2(i64vec4(h), i64vec4(round((c - h) * exp2(float(BOX_FIX)))));
}

fix2 fix_add(fix2 a, fix2 b) { return fix2(a.hi + b.hi, a.lo + b.lo); }
fix2 fix_sub(fix2 a, fix2 b) { return fix2(a.hi - b.hi, a.lo - b.lo); }

// the sum as a float in units of 2^-BOX_FIX: hi rounded to a float, plus what
// that rounding dropped and lo (both exact in int64 before they become floats)
vec4 fix_value(fix2 s)
{
    vec4 h = vec4(s.hi);
    return h + (vec4(s.hi - i64vec4(h)) + vec4(s.lo) * exp2(-float(BOX_FIX)));
}

void box()
{
    const int in_lo = floatBitsToInt(pc.wk[0]), in_n = floatBitsToInt(pc.wk[1]);
    const int out_lo = floatBitsToInt(pc.wk[2]), out_n = floatBitsToInt(pc.wk[3]);
    const int r = pc.r;
    const uint id = group_linear() * uint(WG) + gl_LocalInvocationIndex;
    const int x = int(id % uint(pc.w)), c0 = int(id / uint(pc.w)) * CHUNK;
    if (c0 >= out_n)
        return;
#define BOX_LOAD(a) box_fix(unpack(fetch(uint(clamp(a, in_lo, in_lo + in_n - 1) - in_lo) * uint(pc.w) + uint(x))), lim)
    const int a0 = out_lo + c0, a1 = out_lo + min(c0 + CHUNK, out_n);
    const float lim = 2147483648.0 / float(2 * r + 1);
    fix2 sum = fix2(i64vec4(0), i64vec4(0));
    for (int t = a0 - r; t <= a0 + r; t++)
        sum = fix_add(sum, BOX_LOAD(t));
    const float k = exp2(-float(BOX_FIX)) / float(2 * r + 1);
    for (int a = a0; a < a1; a++) {
        store_pix(uint(a - out_lo) * uint(pc.w) + uint(x), finish(fix_value(sum) * k));
        sum = fix_add(sum, fix_sub(BOX_LOAD(a + r + 1), BOX_LOAD(a - r)));
    }
}

// FUSED = 3: out (pc.h x pc.w texels, f32) = the transpose of in (pc.w x pc.h,
// IN_FMT), normalized and premultiplied (finish(unpack(...))), through a
// 32 x 32 tile of shared memory (s4, padded rows) so that both sides are read
// and written along rows.
void transpose()
{
    const int TT = 32, x0 = int(gl_WorkGroupID.x) * TT, y0 = int(gl_WorkGroupID.y) * TT;
    const int li = int(gl_LocalInvocationIndex);
    for (int i = li; i < TT * TT; i += WG) {
        int ty = i / TT, tx = i % TT, x = x0 + tx, y = y0 + ty;
        vec4 v = vec4(0.0);
        if (x < pc.w && y < pc.h)
            v = finish(unpack(fetch(uint(y) * uint(pc.w) + uint(x))));
        s4[ty * (TT + 1) + tx] = floatBitsToUint(v);
    }
    barrier();
    for (int i = li; i < TT * TT; i += WG) {
        int ty = i / TT, tx = i % TT, ox = y0 + tx, oy = x0 + ty; // output row oy = input column
        if (ox < pc.h && oy < pc.w)
            store_pix(uint(oy) * uint(pc.h) + uint(ox), uintBitsToFloat(s4[tx * (TT + 1) + ty]));
    }
}

#endif // !BLUR_LINES_ONLY

#if !BLUR_CPU_ONLY
void lines()
{
    const bool X = DIR == 0;
    const int n_along = X ? pc.w : pc.h, n_lines = X ? pc.h : pc.w;
    const uint id = group_linear() * uint(WG) + gl_LocalInvocationIndex;
    const uint ln = id % uint(n_lines), seg = id / uint(n_lines);
    const int o0 = int(seg) * NB;
    if (o0 >= n_along)
        return;
    // texel of window position j: along the line from o0 - R, clamped to the image
#define LINE_AT(q) (X ? ln * uint(pc.w) + uint(q) : uint(q) * uint(pc.w) + ln)
#define LOAD_DIRECT(j) unpack(fetch(LINE_AT(clamp(o0 - R + (j), 0, n_along - 1))))
    vec4 acc[NB];
    [[unroll]] for (int i = 0; i < NB; i++)
        acc[i] = vec4(0.0);
    CONV_UNROLLED(NB, LOAD_DIRECT)
    [[unroll]] for (int i = 0; i < NB; i++)
        if (o0 + i < n_along)
            store_pix(LINE_AT(o0 + i), finish(acc[i]));
#undef LOAD_DIRECT
#undef LINE_AT
}
#endif

#if BLUR_CPU_ONLY
// FUSED = 5 and 6, the vec passes: blur of 8-bit images on CPU devices, along
// x (8-bit input -> the intermediate) then along y (-> 8-bit output), with the
// lavapipe facts of words.glsl. An invocation of the x pass makes NB outputs of
// one row from its window read as 64-bit words (the bytes moved into place with
// selects and shifts) and writes them as whole 64-bit words; one of the y pass
// makes NB rows of a run of S = VW * (samples a word) samples, every window row
// read as VW 64-bit words, the taps the same for every sample (the y pass does
// not care which channel a sample is, but for alpha), and writes each row's run
// as whole 32-bit words (store_words). No branches for the edges: EDGE = 0
// dispatches only the blocks whose windows lie inside the image (x) and the
// runs of whole words (y); EDGE = 1, a second dispatch, the rest texel by texel
// (x: the blocks within R of the left and right edges; y: the samples past a
// row's last whole run, or pixels with alpha). The same sums as the line
// passes; the intermediate is u16 (normalized) or, with alpha, premultiplied
// f32, in rows of vec_pitch() texels (whole 64-bit words).

uint vec_pitch() { return (uint(pc.w) + 3u) & ~3u; }

#if BLUR_VEC_ONLY
const int HWB = ((NB + 2 * R) * IN_C + 3) / 4; // x pass: 32-bit words of a window

// Texel j of an x window (its bytes from b[0]), raw, premultiplied with PREMUL (as unpack).
vec4 texel_w(uint b[HWB], int j)
{
    vec4 v = vec4(0.0);
    [[unroll]] for (int c = 0; c < IN_C; c++) {
        const int i = j * IN_C + c;
        v[c] = u2f(bitfieldExtract(b[i >> 2], (i & 3) * 8, 8));
    }
    if (PREMUL != 0 && IN_C == 4) v.rgb *= v.a;
    if (PREMUL != 0 && IN_C == 2) v.x *= v.y;
    return v;
}

#endif

// The sliding pass along x (FUSED = 8) on rows of whole steps of 8 samples
// (w C a multiple of 8; a step is KW 64-bit words: 8-bit, 16-bit or float
// input): D steps of halo each side; output step b (samples 8b .. 8b + 7) is
// inside where steps b - D .. b + D are in its row.
const int XD = (R * IN_C + 7) / 8, XP = 2 * XD + 1, KW = IN_FMT == FMT_U8 ? 1 : IN_FMT == FMT_U16 ? 2 : 4;

// Pixels the sliding pass along x does not make: [0, x) and [y, w).
ivec2 ring_edges()
{
    const int nw = pc.w * IN_C / 8;
    return ivec2((8 * XD + IN_C - 1) / IN_C, nw > 2 * XD ? 8 * (nw - XD) / IN_C : 0);
}

#if BLUR_RING_ONLY
// FUSED = 8: row y, output steps b0 .. b0 + RING_M XP - 1 of it. An output
// sample s is w_0 times sample s plus, for k = 1 .. R, w_k times the sum of the
// samples s - k C and s + k C (the taps folded: R + 1 multiplications, not
// 2R + 1; not the order of h_vec's sums, so a last bit may differ from it); the
// last XP input steps are a ring of floats (premultiplied with alpha: a step
// holds whole pixels) whose slots are compile-time constants. Each input word
// is read once, as a texel (SRC_WORD); h_vec reads (NB + 2R) C / 8 words for
// NB C / 8 (RGB, NB 8: 10 for 3).
void h_ring()
{
    const uint id = group_linear() * uint(WG) + gl_LocalInvocationIndex;
    const int nw = pc.w * IN_C / 8, ni = nw - 2 * XD, RW = RING_M * XP;
    const int nr = ni > 0 ? (ni + RW - 1) / RW : 0;
    if (id >= uint(nr) * uint(pc.h))
        return;
    const uint y = id / uint(nr);
    const int b0 = min(XD + int(id % uint(nr)) * RW, max(XD, nw - XD - RW)); // the last run overlaps the one before
    const uint row = y * uint(nw * KW), last = (uint(pc.w) * uint(pc.h) * uint(IN_C * KW) - 1u) >> 3;
    float xr[XP * 8];
#define RINGX_LOAD(B, SLOT)                                                                                        \
    {                                                                                                              \
        [[unroll]] for (int k_ = 0; k_ < KW; k_++) {                                                               \
            const uvec2 u_ = SRC_WORD(pc.src, min(row + uint((B) * KW + k_), last));                             \
            const int q_ = (SLOT) * 8 + k_ * (8 / KW);                                                             \
            if (IN_FMT == FMT_U8) {                                                                                \
                [[unroll]] for (int e_ = 0; e_ < 8; e_++)                                                          \
                    xr[q_ + e_] = u2f(bitfieldExtract(e_ < 4 ? u_.x : u_.y, (e_ & 3) * 8, 8));                     \
            } else if (IN_FMT == FMT_U16) {                                                                        \
                [[unroll]] for (int e_ = 0; e_ < 4; e_++)                                                          \
                    xr[q_ + e_] = u2f(bitfieldExtract(e_ < 2 ? u_.x : u_.y, (e_ & 1) * 16, 16));                   \
            } else {                                                                                               \
                xr[q_] = uintBitsToFloat(u_.x);                                                                    \
                xr[q_ + 1] = uintBitsToFloat(u_.y);                                                                \
            }                                                                                                      \
        }                                                                                                          \
        if (PREMUL != 0)                                                                                           \
            [[unroll]] for (int e_ = 0; e_ < 8; e_++)                                                              \
                if (e_ % IN_C != IN_C - 1)                                                                         \
                    xr[(SLOT) * 8 + e_] *= xr[(SLOT) * 8 + e_ - e_ % IN_C + IN_C - 1];                             \
    }
    [[unroll]] for (int j = 0; j < 2 * XD; j++) // steps b0 - XD .. b0 + XD - 1: slots 0 .. 2 XD - 1
        RINGX_LOAD(b0 - XD + j, j)
    for (int m = 0; m < RING_M; m++) {
        [[unroll]] for (int t = 0; t < XP; t++) {
            const int b = b0 + m * XP + t; // its steps b - XD .. b + XD: b + XD is new, in slot (t + 2 XD) mod XP
            RINGX_LOAD(b + XD, (t + 2 * XD) % XP)
            float f[8];
            [[unroll]] for (int e = 0; e < 8; e++) {
                const int oc = 8 * XD + e; // the centre sample, from step b - XD's first
                float acc = pc.wk[0] * xr[((t + oc / 8) % XP) * 8 + oc % 8];
                [[unroll]] for (int k = 1; k <= R; k++) {
                    const int ol = oc - k * IN_C, oh = oc + k * IN_C;
                    acc += pc.wk[k] * (xr[((t + ol / 8) % XP) * 8 + ol % 8] + xr[((t + oh / 8) % XP) * 8 + oh % 8]);
                }
                const int c = e % IN_C;
                const float k = IN_FMT == FMT_U8 ? 1.0 / 255.0 : IN_FMT == FMT_U16 ? 1.0 / 65535.0 : 1.0;
                f[e] = acc * (PREMUL != 0 && c != IN_C - 1 ? k * k : k);
            }
            if (b < nw - XD) {
                const uint e0 = y * vec_pitch() * uint(IN_C) + uint(8 * b); // first sample: a multiple of 8
                if (OUT_FMT == FMT_U16) {
                    [[unroll]] for (int k = 0; k < 2; k++)
                        S8Buf(pc.dst).v[e0 / 4u + uint(k)] =
                            packUint2x32(uvec2(unorm(f[4 * k], 65535.0) | (unorm(f[4 * k + 1], 65535.0) << 16),
                                               unorm(f[4 * k + 2], 65535.0) | (unorm(f[4 * k + 3], 65535.0) << 16)));
                } else {
                    [[unroll]] for (int k = 0; k < 4; k++)
                        S8Buf(pc.dst).v[e0 / 2u + uint(k)] = packUint2x32(floatBitsToUint(vec2(f[2 * k], f[2 * k + 1])));
                }
            }
        }
    }
#undef RINGX_LOAD
}

#endif

#if BLUR_VEC_ONLY
// FUSED = 5: row y, outputs x0 .. x0 + NB - 1 (NB a multiple of 4). Blocks
// b0 .. b0 + nin - 1 (x0 = b NB) have their windows inside the row.
void h_vec()
{
    const uint id = group_linear() * uint(WG) + gl_LocalInvocationIndex;
    const int nbt = (pc.w + NB - 1) / NB;
    int b0 = (R + NB - 1) / NB, nin = max((pc.w >= R ? (pc.w - R) / NB : 0) - b0, 0);
    if (RINGX != 0) { // blocks of pixels h_ring leaves: before pixel xl, from pixel xr on (ring_edges)
        const ivec2 xe = ring_edges();
        b0 = (xe.x + NB - 1) / NB;
        nin = max(xe.y / NB - b0, 0);
    }
    const int per = EDGE != 0 ? nbt - nin : nin;
    if (per <= 0 || id >= uint(per) * uint(pc.h))
        return;
    const uint y = id / uint(per);
    const int j = int(id % uint(per)), x0 = (EDGE == 0 ? b0 + j : (j < b0 ? j : j + nin)) * NB;
    vec4 acc[NB];
    [[unroll]] for (int i = 0; i < NB; i++)
        acc[i] = vec4(0.0);
    if (EDGE == 0) {
        uint b[HWB];
        LOAD_WINDOW(pc.src, (y * uint(pc.w) + uint(x0 - R)) * uint(IN_C), (uint(pc.w) * uint(pc.h) * uint(IN_C) - 1u) >> 3,
                    HWB, b)
#define LOAD_WORDS(j) texel_w(b, j)
        CONV_UNROLLED(NB, LOAD_WORDS)
#undef LOAD_WORDS
        float f[NB * IN_C];
        [[unroll]] for (int i = 0; i < NB; i++) {
            const vec4 v = finish(acc[i]);
            [[unroll]] for (int c = 0; c < IN_C; c++)
                f[i * IN_C + c] = v[c];
        }
        const uint e = (y * vec_pitch() + uint(x0)) * uint(IN_C); // first sample: a multiple of 4
        if (OUT_FMT == FMT_U16) {
            [[unroll]] for (int k = 0; k < NB * IN_C / 4; k++)
                S8Buf(pc.dst).v[e / 4u + uint(k)] =
                    packUint2x32(uvec2(unorm(f[4 * k], 65535.0) | (unorm(f[4 * k + 1], 65535.0) << 16),
                                       unorm(f[4 * k + 2], 65535.0) | (unorm(f[4 * k + 3], 65535.0) << 16)));
        } else {
            [[unroll]] for (int k = 0; k < NB * IN_C / 2; k++)
                S8Buf(pc.dst).v[e / 2u + uint(k)] = packUint2x32(floatBitsToUint(vec2(f[2 * k], f[2 * k + 1])));
        }
    } else {
        // a few pixels a row: loops, not unrolled (lavapipe compiles the unrolled NB x (2R + 1) taps in
        // 30-70 ms a process); each output's taps in the order of CONV_UNROLLED
        for (int i = 0; i < NB; i++) {
            vec4 a = vec4(0.0);
            for (int d = 0; d <= 2 * R; d++)
                mac(a, pc.wk[abs(d - R)], unpack(fetch(y * uint(pc.w) + uint(clamp(x0 + i - R + d, 0, pc.w - 1)))));
            if (x0 + i < pc.w)
                store_pix(y * vec_pitch() + uint(x0 + i), finish(a));
        }
    }
}

#endif

#if BLUR_VECY_ONLY
// Sample i of the intermediate (the y pass's input), raw.
float isample(uint i)
{
    return IN_FMT == FMT_U16 ? u2f(uint(U16Buf(pc.src).v[i])) : uintBitsToFloat(U32Buf(pc.src).v[i]);
}

// The samples of a unit of the y pass's EDGE = 1 (below) from sample i.
vec4 unit_at(uint i)
{
    vec4 v = vec4(0.0);
    [[unroll]] for (int c = 0; c < (HAS_ALPHA ? IN_C : 1); c++)
        v[c] = isample(i + uint(c));
    return v;
}

// FUSED = 6: rows y0 .. y0 + NB - 1 of samples k S .. k S + S - 1 of a row
// (EDGE = 0), or of one unit past a row's last whole run (EDGE = 1: a sample,
// a pixel with alpha, whose colour is divided by its alpha at the end). In
// bands as v_ring (below): pc.h output rows, output row y centred on the
// intermediate's row y + pc.wts.x, of pc.wts.y rows.
void v_vec()
{
    const uint id = group_linear() * uint(WG) + gl_LocalInvocationIndex;
    const int PER = IN_FMT == FMT_U16 ? 4 : 2, S = VW * PER, UC = HAS_ALPHA ? IN_C : 1;
    const int nrun = pc.w * IN_C / S, nyb = (pc.h + NB - 1) / NB;
    const int per = EDGE != 0 ? (pc.w * IN_C - nrun * S) / UC : nrun;
    if (per <= 0 || id >= uint(per) * uint(nyb))
        return;
    const int y0 = int(id / uint(per)) * NB, k = int(id % uint(per));
    const uint pitch = vec_pitch() * uint(IN_C), orow = uint(pc.w * IN_C); // samples a row
    const int o = int(pc.wts.x), m_rows = int(pc.wts.y); // a band's, as v_ring's
    if (EDGE == 0) {
        vec4 acc[NB * VW];
        [[unroll]] for (int i = 0; i < NB * VW; i++)
            acc[i] = vec4(0.0);
        [[unroll]] for (int j = 0; j < NB + 2 * R; j++) {
            const uint wv = (uint(clamp(y0 - R + j + o, 0, m_rows - 1)) * pitch + uint(k * S)) / uint(PER);
            vec4 x[VW];
            [[unroll]] for (int v = 0; v < VW; v++) {
                const uvec2 u = unpackUint2x32(L8Buf(pc.src).v[wv + uint(v)]);
                x[v] = IN_FMT == FMT_U16 ? vec4(u2f(u.x & 65535u), u2f(u.x >> 16), u2f(u.y & 65535u), u2f(u.y >> 16))
                                         : vec4(uintBitsToFloat(u), 0.0, 0.0);
            }
            [[unroll]] for (int i = 0; i < NB; i++)
                if (j - i >= 0 && j - i <= 2 * R) {
                    const float wt = pc.wk[abs(j - i - R)];
                    [[unroll]] for (int v = 0; v < VW; v++)
                        acc[i * VW + v] += wt * x[v];
                }
        }
        [[unroll]] for (int i = 0; i < NB; i++) {
            uint q[MAX_WORDS];
            [[unroll]] for (int w = 0; w < MAX_WORDS; w++)
                q[w] = 0u;
            [[unroll]] for (int p = 0; p < S / UC; p++) {
                vec4 a = vec4(0.0);
                [[unroll]] for (int c = 0; c < UC; c++) {
                    const int e = p * UC + c;
                    a[c] = acc[i * VW + e / PER][e % PER];
                }
                const vec4 f = finish(a);
                [[unroll]] for (int c = 0; c < UC; c++) {
                    const int e = p * UC + c;
                    q[e >> 2] |= unorm(f[c], 255.0) << ((e & 3) * 8);
                }
            }
            if (y0 + i < pc.h)
                store_words(pc.dst, uint(y0 + i) * orow + uint(k * S), S / 4, q);
        }
    } else {
        const uint u0 = uint(nrun * S + k * UC); // first sample of the unit in its row
        for (int i = 0; i < NB; i++) { // loops, as h_vec's edges
            vec4 a = vec4(0.0);
            for (int d = 0; d <= 2 * R; d++)
                mac(a, pc.wk[abs(d - R)], unit_at(uint(clamp(y0 + i - R + d + o, 0, m_rows - 1)) * pitch + u0));
            if (y0 + i < pc.h) {
                const vec4 f = finish(a);
                [[unroll]] for (int c = 0; c < UC; c++)
                    U8Buf(pc.dst).v[uint(y0 + i) * orow + u0 + uint(c)] = uint8_t(unorm(f[c], 255.0));
            }
        }
    }
}

#endif

#if BLUR_RING_ONLY
// FUSED = 7, the sliding pass along y (what CPU devices run where 8-bit output
// rows are whole 32-bit words and there is no alpha: blur.c use_ring): an
// invocation owns run k (S = VW * (samples a word) samples; VW = 2 where the
// rows are whole runs of 8 samples, else 1) of output rows y0 .. y0 + RB - 1 (RB = RING_M periods of
// P = 2R + 1 rows) and reads each of its input rows y0 - R .. y0 + RB + R - 1
// once (v_vec reads (NB + 2R) / NB rows an output row: 3.25 at NB = 8; this
// pass (RB + 2R) / RB: 1.24 at RB = 76). The last P rows read are kept in a
// ring xr whose slots are compile-time constants (row j in slot j mod P: the
// loop over rows is unrolled by P), and output row i is summed from its 2R + 1
// rows folded as h_ring's (its centre row times w_0, then w_k times the sum of
// rows i + R - k and i + R + k), its input words read as texels. The edge
// dispatch (samples past a row's last whole run) is v_vec's EDGE = 1 with the
// same VW. In bands (blur.c record_vec) the output and the intermediate are a
// band's: pc.h output rows, whose row y is the intermediate's y + pc.wts.x, and
// pc.wts.y intermediate rows, clamped to those (a band's first and last rows
// are the image's where it touches its edges; elsewhere they are not reached).
void v_ring()
{
    const uint id = group_linear() * uint(WG) + gl_LocalInvocationIndex;
    const int PER = IN_FMT == FMT_U16 ? 4 : 2, S = VW * PER, UC = HAS_ALPHA ? IN_C : 1, P = 2 * R + 1, RB = RING_M * P;
    const int nrun = pc.w * IN_C / S, nyb = (pc.h + RB - 1) / RB;
    if (nrun <= 0 || id >= uint(nrun) * uint(nyb))
        return;
    const int y0 = int(id / uint(nrun)) * RB, k = int(id % uint(nrun));
    const uint pitch = vec_pitch() * uint(IN_C), orow = uint(pc.w * IN_C); // samples a row
    const int o = int(pc.wts.x), m_rows = int(pc.wts.y); // the band's (above)
    vec4 xr[P * VW];
#define RING_LOAD(J, SLOT)                                                                                     \
    {                                                                                                          \
        const uint wv_ = (uint(clamp(y0 - R + (J) + o, 0, m_rows - 1)) * pitch + uint(k * S)) / uint(PER);     \
        [[unroll]] for (int v_ = 0; v_ < VW; v_++) {                                                           \
            const uvec2 u_ = SRC_WORD(pc.src, wv_ + uint(v_));                                                 \
            xr[(SLOT) * VW + v_] = IN_FMT == FMT_U16                                                           \
                                       ? vec4(u2f(u_.x & 65535u), u2f(u_.x >> 16), u2f(u_.y & 65535u), u2f(u_.y >> 16)) \
                                       : vec4(uintBitsToFloat(u_), 0.0, 0.0);                                  \
        }                                                                                                      \
    }
    [[unroll]] for (int j = 0; j < 2 * R; j++) // rows y0 - R .. y0 + R - 1: slots 0 .. 2R - 1
        RING_LOAD(j, j)
    for (int m = 0; m < RING_M; m++) {
        [[unroll]] for (int t = 0; t < P; t++) {
            const int i = m * P + t;   // output row y0 + i: its last input row is j = i + 2R, in slot (t + 2R) mod P
            RING_LOAD(i + 2 * R, (t + 2 * R) % P)
            vec4 acc[VW];
            [[unroll]] for (int v = 0; v < VW; v++)
                acc[v] = vec4(0.0);
            [[unroll]] for (int v = 0; v < VW; v++) // input row i + d in slot (t + d) mod P; the centre d = R
                acc[v] = pc.wk[0] * xr[((t + R) % P) * VW + v];
            [[unroll]] for (int k = 1; k <= R; k++) {
                const float wt = pc.wk[k];
                [[unroll]] for (int v = 0; v < VW; v++)
                    acc[v] += wt * (xr[((t + R - k) % P) * VW + v] + xr[((t + R + k) % P) * VW + v]);
            }
            uint q[MAX_WORDS];
            [[unroll]] for (int w = 0; w < S / 4; w++)
                q[w] = 0u;
            [[unroll]] for (int p = 0; p < S / UC; p++) {
                vec4 a = vec4(0.0);
                [[unroll]] for (int c = 0; c < UC; c++) {
                    const int e = p * UC + c;
                    a[c] = acc[e / PER][e % PER];
                }
                const vec4 f = finish(a);
                [[unroll]] for (int c = 0; c < UC; c++) {
                    const int e = p * UC + c;
                    q[e >> 2] |= unorm(f[c], 255.0) << ((e & 3) * 8);
                }
            }
            if (y0 + i < pc.h) {
                const uint a = (uint(y0 + i) * orow + uint(k * S)) >> 2; // whole words: orow and S multiples of 4
                if (S % 8 == 0) // 64-bit stores (orow a multiple of S: blur.c); each a loop over the lanes
                    [[unroll]] for (int w = 0; w < S / 8; w++)
                        S8Buf(pc.dst).v[(a >> 1) + uint(w)] = packUint2x32(uvec2(q[2 * w], q[2 * w + 1]));
                else
                    [[unroll]] for (int w = 0; w < S / 4; w++)
                        U32Buf(pc.dst).v[a + uint(w)] = q[w];
            }
        }
    }
#undef RING_LOAD
}
#endif

#endif // BLUR_CPU_ONLY

void main()
{
#if BLUR_LINES_ONLY
    lines();
#elif BLUR_VEC_ONLY
    h_vec();
#elif BLUR_VECY_ONLY
    v_vec();
#elif BLUR_RING_ONLY
    if (FUSED == 8)
        h_ring();
    else
        v_ring();
#else
    if (FUSED == 4)
        lines();
    else if (FUSED == 1)
        fused();
    else if (FUSED == 2)
        box();
    else if (FUSED == 3)
        transpose();
    else
        separable();
#endif
}
