// Shared by every vkimg shader. Data is in plain buffers reached through buffer
// device addresses (passed in push constants as uvec2), packed and interleaved:
// sample (y*w + x)*C + k. Formats (shared.h): u8, u16 (unsigned normalized),
// f16, f32. Values are normalized floats inside the kernels.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

#include "vki_shared.h"

layout(local_size_x_id = VKI_SPEC_LX, local_size_y_id = VKI_SPEC_LY, local_size_z_id = VKI_SPEC_LZ) in;

layout(constant_id = VKI_SPEC_IN_FMT) const int IN_FMT = VKI_FMT_F32;
layout(constant_id = VKI_SPEC_OUT_FMT) const int OUT_FMT = VKI_FMT_F32;
layout(constant_id = VKI_SPEC_IN_C) const int IN_C = 4;
layout(constant_id = VKI_SPEC_OUT_C) const int OUT_C = 4;

#define FMT_U8 VKI_FMT_U8
#define FMT_U16 VKI_FMT_U16
#define FMT_F16 VKI_FMT_F16
#define FMT_F32 VKI_FMT_F32
#define HAS_ALPHA VKI_HAS_ALPHA(IN_C)
const int COLOUR = VKI_COLOUR_CHANNELS(IN_C); // input channels that are not alpha

layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8Buf { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer U16Buf { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer F16Buf { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32Buf { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32Buf { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer U32x4Buf { uvec4 v[]; };

// Exact conversions between integers 0 <= n < 2^22 and floats without the GPU's
// conversion instructions (I2F, F2I, FRND: on NVIDIA a quarter of the FMA rate
// or less, the limit of 8-bit kernels that move a few bytes a sample): the
// integer as the low mantissa bits of 2^23. The same values as float(n) and
// uint(floor(y)); `precise` keeps a compiler from folding the +- 2^23.
float u2f(uint n)
{
    precise float r = uintBitsToFloat(0x4B000000u | n) - 8388608.0;
    return r;
}

// floor(y) for 0 <= y < 2^22: y + 2^23 rounds y to the nearest integer (its
// low mantissa bits), one less where that rounded up.
uint floor_u(float y)
{
    precise float z = y + 8388608.0;
    precise float r = z - 8388608.0;
    uint n = floatBitsToUint(z) - 0x4B000000u;
    return r > y ? n - 1u : n;
}

// floor(a / b) for b > 0, in unsigned arithmetic: the signed division and
// modulus of a negative number (OpSDiv, OpSMod) came out wrong on NVIDIA's
// driver (the mip tail's floor(-968 / 44) as -23: a box tap at exactly
// t = -0.5 lost, 52 LSB on a real photograph's level) where lavapipe's were right.
int floor_div(int a, int b)
{
    return a >= 0 ? int(uint(a) / uint(b)) : -int((uint(-a) + uint(b) - 1u) / uint(b));
}

// floor(clamp(v, 0, 1) * scale + 0.5): a normalized value as its integer
// (scale 255, 65535, ...), rounded half up.
uint quantize_u(float v, float scale)
{
    return floor_u(clamp(v, 0.0, 1.0) * scale + 0.5);
}

float load_sample(uvec2 a, int fmt, uint i)
{
    if (fmt == FMT_U8)
        return u2f(uint(U8Buf(a).v[i])) * (1.0 / 255.0);
    if (fmt == FMT_U16)
        return u2f(uint(U16Buf(a).v[i])) * (1.0 / 65535.0);
    if (fmt == FMT_F16)
        return float(F16Buf(a).v[i]);
    return F32Buf(a).v[i];
}

void store_sample(uvec2 a, int fmt, uint i, float x)
{
    if (fmt == FMT_U8)
        U8Buf(a).v[i] = uint8_t(quantize_u(x, 255.0));
    else if (fmt == FMT_U16)
        U16Buf(a).v[i] = uint16_t(quantize_u(x, 65535.0));
    else if (fmt == FMT_F16)
        F16Buf(a).v[i] = float16_t(x);
    else
        F32Buf(a).v[i] = x;
}

// Pixel p (linear index) of the input: channels in .xyzw order, missing = 0.
vec4 load_px(uvec2 a, uint p)
{
    vec4 r = vec4(0.0);
    uint b = p * uint(IN_C);
    r.x = load_sample(a, IN_FMT, b);
    if (IN_C > 1) r.y = load_sample(a, IN_FMT, b + 1u);
    if (IN_C > 2) r.z = load_sample(a, IN_FMT, b + 2u);
    if (IN_C > 3) r.w = load_sample(a, IN_FMT, b + 3u);
    return r;
}

void store_px(uvec2 a, uint p, vec4 v)
{
    uint b = p * uint(OUT_C);
    store_sample(a, OUT_FMT, b, v.x);
    if (OUT_C > 1) store_sample(a, OUT_FMT, b + 1u, v.y);
    if (OUT_C > 2) store_sample(a, OUT_FMT, b + 2u, v.z);
    if (OUT_C > 3) store_sample(a, OUT_FMT, b + 3u, v.w);
}

// The push constants of a per-pixel op (vki_rec_pixels): declare them as
//   layout(push_constant) uniform Push { PIXEL_PUSH  float my_param; ... } pc;
// and find pixel pixel_index() (stop when it is >= pc.npx).
#define PIXEL_PUSH uvec2 src, dst; uint npx;

// Linear workgroup index of a 1D dispatch folded into x and y (exec.c).
uint group_linear()
{
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

// The pixel of this invocation in a per-pixel op (one invocation per pixel).
uint pixel_index()
{
    return group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
}
