// Whole-word access for the CPU shapes (resize.comp passes 5 and 6, blur.comp's
// vec passes). lavapipe turns a buffer access into a loop over the SIMD lanes
// for each component of its vector, so a 64-bit component carries the most
// bytes a pass of that loop; and it runs both sides of an if with the lanes
// masked, so these choose with selects, not branches. Device buffers are padded
// to 16 bytes (memory.c): the word holding a buffer's last byte can be read whole.
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer L8Buf { uint64_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer S8Buf { uint64_t v[]; };

// 64-bit word I of the pass input at address BUF, as two 32-bit words. With
// TEXEL_SRC defined to 1 (a variant of its own: the module declares the
// binding) and the shader's spec constant TEXEL 1, through the texel source the
// host binds (exec.h vki_rec_texel_src: R32G32_UINT texels from BUF): lavapipe
// fetches a texel with one load a lane, where a load through an address is a
// loop over the lanes with a branch, a spill and a scalar load in each.
#ifndef TEXEL_SRC
#define TEXEL_SRC 0
#endif
#if TEXEL_SRC
// a texel buffer without a sampler (OpImageFetch on the image itself): a
// usamplerBuffer's OpTypeSampledImage of Dim Buffer is what SPIR-V 1.6 forbids,
// and the validation layer under a Vulkan 1.4 driver (lavapipe 25) warns of it
#extension GL_EXT_samplerless_texture_functions : require
layout(set = 0, binding = 0) uniform utextureBuffer src_words;
#define SRC_WORD(BUF, I) (TEXEL != 0 ? texelFetch(src_words, int(I)).xy : unpackUint2x32(L8Buf(BUF).v[I]))
// 128-bit word I (where the host made the texels R32G32B32A32_UINT: exec.h vki_rec_texel_src_n)
#define SRC_WORD4(BUF, I) (TEXEL != 0 ? texelFetch(src_words, int(I)) : L8_WORD4(BUF, I))
#else
#define SRC_WORD(BUF, I) unpackUint2x32(L8Buf(BUF).v[I])
#define SRC_WORD4(BUF, I) L8_WORD4(BUF, I)
#endif
#define L8_WORD4(BUF, I) uvec4(unpackUint2x32(L8Buf(BUF).v[2u * (I)]), unpackUint2x32(L8Buf(BUF).v[2u * (I) + 1u]))

// uint B[NW] = bytes A .. A + 4 NW - 1 of the buffer at BUF (A any alignment),
// read as 64-bit words no further than word LAST (the one of the buffer's last
// byte) and moved into place with selects and shifts.
#define LOAD_WINDOW(BUF, A, LAST, NW, B) LOAD_WINDOW_BY(L8_WORD, BUF, A, LAST, NW, B)
// The same from the pass input at BUF, through the texel source where there is one (SRC_WORD).
#define LOAD_WINDOW_SRC(BUF, A, LAST, NW, B) LOAD_WINDOW_BY(SRC_WORD, BUF, A, LAST, NW, B)
#define L8_WORD(BUF, I) unpackUint2x32(L8Buf(BUF).v[I])
#define LOAD_WINDOW_BY(WORD, BUF, A, LAST, NW, B)                                             \
    {                                                                                         \
        const uint a_ = (A), bs_ = (a_ & 3u) * 8u;                                            \
        uint w_[2 * ((NW + 3) / 2)];                                                          \
        [[unroll]] for (int v_ = 0; v_ < (NW + 3) / 2; v_++) {                                \
            const uvec2 x_ = WORD(BUF, min((a_ >> 3) + uint(v_), (LAST)));                   \
            w_[2 * v_] = x_.x;                                                                \
            w_[2 * v_ + 1] = x_.y;                                                            \
        }                                                                                     \
        [[unroll]] for (int i_ = 0; i_ < NW; i_++) {                                          \
            const uint m0_ = (a_ & 4u) == 0u ? w_[i_] : w_[i_ + 1];                           \
            const uint m1_ = (a_ & 4u) == 0u ? w_[i_ + 1] : w_[i_ + 2];                       \
            B[i_] = bs_ == 0u ? m0_ : (m0_ >> bs_) | (m1_ << (32u - bs_));                    \
        }                                                                                     \
    }

// Bytes 0 .. 4 n - 1 of words q to the 8-bit buffer dst from byte a (any
// alignment; n known at compile time where it is called): words 1 .. n - 1
// whole (shifted where a is not a word's first byte) and 4 bytes: those of
// word 0 that start at a, and those of word n that end there (none: then the
// 4 bytes are word 0). No branch, no loop: lavapipe ran the byte loop this had
// in every invocation, masked, and in a shader that stores several runs an
// invocation it made the stores most of the time (blur's vec pass along y:
// 500 -> 65 ms).
const int MAX_WORDS = 32;
void store_words(uvec2 dst, uint a, const int n, uint q[MAX_WORDS])
{
    const uint sh = (a & 3u) * 8u, wa = a >> 2, hb = sh / 8u;
    [[unroll]] for (int i = 1; i < n; i++)
        U32Buf(dst).v[wa + uint(i)] = sh == 0u ? q[i] : (q[i - 1] >> (32u - sh)) | (q[i] << sh);
    [[unroll]] for (uint b = 0u; b < 4u; b++) {
        const bool head = b >= hb; // byte b - hb of q[0], else byte 4 - hb + b of q[n - 1]
        const uint v = head ? q[0] >> (8u * (b - hb)) : q[n - 1] >> (32u - sh + 8u * b);
        U8Buf(dst).v[(wa + (head ? 0u : uint(n))) * 4u + b] = uint8_t(v);
    }
}
