// Workgroup reductions shared by stats (reduce.comp) and compare (compare.comp,
// ssim.comp). Include after common.glsl.
//
// A reduction value is one uint64 "slot" combined by one of four operators:
//   OP_ADD  uint64 sum (exact integer sums and counts)
//   OP_MIN  uint64 minimum, OP_MAX uint64 maximum (order-preserving keys)
//   OP_FF   float-float sum: an unevaluated pair hi + lo of fp32 (about 44
//           significant bits), packed as hi bits | lo bits << 32
// wg_reduce(): with SUBGROUP = 1 the subgroup operations reduce each subgroup
// first (uint64 sums as three 22-bit limbs of uint32 adds, so no 64-bit
// subgroup types are needed; min/max as two uint32 steps), then invocation 0
// combines the subgroups' results; with SUBGROUP = 0 (device without
// VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) and for OP_FF, a shared-memory tree.
// The workgroup size must be a power of two.
//
// Float-float arithmetic relies on correctly rounded fp32 add/mul (required by
// Vulkan) and on `precise` (NoContraction) so that compilers keep the error
// terms; denormal lo terms may flush to zero (harmless: 2^-126 absolute).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 8) const int SUBGROUP = 1; // 0: shared memory only

layout(buffer_reference, std430, buffer_reference_align = 8) buffer R64Buf { uint64_t v[]; };

#define OP_ADD 0
#define OP_MIN 1
#define OP_MAX 2
#define OP_FF 3

const uint WG_N = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
shared uint64_t red[WG_N];

// ---- float-float (Dekker / Knuth error-free transformations)

// (a.x + a.y) + (b.x + b.y), renormalized.
vec2 ff_add(vec2 a, vec2 b)
{
    precise float s = a.x + b.x;
    precise float v = s - a.x;
    precise float e = (a.x - (s - v)) + (b.x - v);
    precise float t = e + (a.y + b.y);
    precise float h = s + t;
    precise float l = t - (h - s);
    return vec2(h, l);
}

// x * x exactly, as hi + lo (Veltkamp split, no FMA needed).
vec2 ff_sq(float x)
{
    precise float p = x * x;
    precise float c = 4097.0 * x;
    precise float hi = c - (c - x);
    precise float lo = x - hi;
    precise float err = ((hi * hi - p) + 2.0 * hi * lo) + lo * lo;
    return vec2(p, err);
}

uint64_t ff_pack(vec2 v) { return uint64_t(floatBitsToUint(v.x)) | (uint64_t(floatBitsToUint(v.y)) << 32); }
vec2 ff_unpack(uint64_t k) { return vec2(uintBitsToFloat(uint(k)), uintBitsToFloat(uint(k >> 32))); }

// Total order of floats as unsigned integers (NaN sorts above +inf).
uint fkey(float f)
{
    uint u = floatBitsToUint(f);
    return (u & 0x80000000u) != 0u ? ~u : u | 0x80000000u;
}

// ---- slots

uint64_t red_identity(int op)
{
    return op == OP_MIN ? ~uint64_t(0) : uint64_t(0);
}

uint64_t red_combine(uint64_t a, uint64_t b, int op)
{
    if (op == OP_ADD) return a + b;
    if (op == OP_MIN) return a < b ? a : b;
    if (op == OP_MAX) return a > b ? a : b;
    return ff_pack(ff_add(ff_unpack(a), ff_unpack(b)));
}

// Subgroup reduction of OP_ADD / OP_MIN / OP_MAX (all invocations of the
// subgroup get the result).
uint64_t sg_reduce(uint64_t v, int op)
{
    if (op == OP_ADD) {
        // limbs of 22, 22 and 20 bits: a subgroup of up to 1024 lanes can't overflow them
        uint l0 = subgroupAdd(uint(v) & 0x3fffffu);
        uint l1 = subgroupAdd(uint(v >> 22) & 0x3fffffu);
        uint l2 = subgroupAdd(uint(v >> 44));
        return uint64_t(l0) + (uint64_t(l1) << 22) + (uint64_t(l2) << 44);
    }
    uint hi = uint(v >> 32), lo = uint(v);
    if (op == OP_MIN) {
        uint m = subgroupMin(hi);
        return (uint64_t(m) << 32) | uint64_t(subgroupMin(hi == m ? lo : ~0u));
    }
    uint m = subgroupMax(hi);
    return (uint64_t(m) << 32) | uint64_t(subgroupMax(hi == m ? lo : 0u));
}

// Reduces v over the workgroup; the result is valid in invocation 0 only.
// Every invocation must call it (it has barriers), with the same op.
uint64_t wg_reduce(uint64_t v, int op)
{
    uint t = gl_LocalInvocationIndex;
    if (SUBGROUP != 0 && op != OP_FF) {
        v = sg_reduce(v, op);
        if (subgroupElect())
            red[gl_SubgroupID] = v;
        barrier();
        if (t == 0u) {
            v = red[0];
            for (uint i = 1u; i < gl_NumSubgroups; i++)
                v = red_combine(v, red[i], op);
        }
        barrier();
        return v;
    }
    red[t] = v;
    barrier();
    for (uint s = WG_N / 2u; s > 0u; s >>= 1) {
        if (t < s)
            red[t] = red_combine(red[t], red[t + s], op);
        barrier();
    }
    v = red[0];
    barrier();
    return v;
}
