#version 460
// resize: separable resampling with per-axis weight tables made on the host
// (src/ops/resize.c: for output i, taps j = start[i] .. start[i] + T - 1 with
// weights w[i*T + t], input index clamped to the image).
//
// PASS 0  box pre-shrink (the fast path for large factors): the mean of each
//         KX x KY block (partial blocks at the right/bottom edge: the mean of
//         what is there), premultiplied (and linearized) f32 out.
// PASS 1  horizontal: in (w x h) -> tmp (out_w x h), f32; from the input format
//         (premultiplied by alpha and linearized here, unless PRE: the input is
//         already pass 0's).
// PASS 2  vertical: tmp (out_w x h) -> out (out_w x out_h): the colour divided by
//         the resized alpha (clamped to [0,1]; colour 0 where it is 0), sRGB encoded
//         again with LINEAR, clamped and rounded by store_px.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(constant_id = 8) const int PASS = 1;
layout(constant_id = 9) const int LINEAR = 0; // resize in linear light (exact sRGB transfer)
layout(constant_id = 10) const int PRE = 0;   // PASS 1: the input is already premultiplied linear f32
layout(constant_id = 11) const int T = 1;     // taps per output (table row length)

layout(push_constant) uniform Push {
    uvec2 src, dst, wts, starts;
    uint in_w, in_h, out_w, out_h;
    uint kx, ky; // PASS 0
} pc;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer IntBuf { int v[]; };

float to_linear(float v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

float to_srgb(float l)
{
    return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

// Pixel i of the input as premultiplied (linear) values.
vec4 load_pre(uint i)
{
    vec4 v = load_px(pc.src, i);
    if (LINEAR != 0)
        for (int c = 0; c < COLOUR; c++)
            v[c] = to_linear(clamp(v[c], 0.0, 1.0));
    if (HAS_ALPHA)
        for (int c = 0; c < COLOUR; c++)
            v[c] *= v[COLOUR];
    return v;
}

vec4 load_f32(uvec2 a, uint i)
{
    vec4 r = vec4(0.0);
    uint b = i * uint(IN_C);
    for (int c = 0; c < IN_C; c++)
        r[c] = F32Buf(a).v[b + uint(c)];
    return r;
}

void store_f32(uvec2 a, uint i, vec4 v)
{
    uint b = i * uint(IN_C);
    for (int c = 0; c < IN_C; c++)
        F32Buf(a).v[b + uint(c)] = v[c];
}

void main()
{
    uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
    if (PASS == 0) {
        uint ow = (pc.in_w + pc.kx - 1u) / pc.kx, oh = (pc.in_h + pc.ky - 1u) / pc.ky;
        if (x >= ow || y >= oh)
            return;
        uint x0 = x * pc.kx, y0 = y * pc.ky, x1 = min(x0 + pc.kx, pc.in_w), y1 = min(y0 + pc.ky, pc.in_h);
        vec4 s = vec4(0.0);
        for (uint yy = y0; yy < y1; yy++)
            for (uint xx = x0; xx < x1; xx++)
                s += load_pre(yy * pc.in_w + xx);
        store_f32(pc.dst, y * ow + x, s / float((x1 - x0) * (y1 - y0)));
        return;
    }
    if (x >= pc.out_w || y >= (PASS == 1 ? pc.in_h : pc.out_h))
        return;
    F32Buf w = F32Buf(pc.wts);
    IntBuf st = IntBuf(pc.starts);
    vec4 s = vec4(0.0);
    if (PASS == 1) {
        int j0 = st.v[x], last = int(pc.in_w) - 1;
        uint row = y * pc.in_w;
        for (int t = 0; t < T; t++) {
            float k = w.v[x * uint(T) + uint(t)];
            if (k != 0.0) {
                uint j = uint(clamp(j0 + t, 0, last));
                s += k * (PRE != 0 ? load_f32(pc.src, row + j) : load_pre(row + j));
            }
        }
        store_f32(pc.dst, y * pc.out_w + x, s);
        return;
    }
    int j0 = st.v[y], last = int(pc.in_h) - 1;
    for (int t = 0; t < T; t++) {
        float k = w.v[y * uint(T) + uint(t)];
        if (k != 0.0)
            s += k * load_f32(pc.src, uint(clamp(j0 + t, 0, last)) * pc.out_w + x);
    }
    if (HAS_ALPHA) {
        float a = clamp(s[COLOUR], 0.0, 1.0);
        for (int c = 0; c < COLOUR; c++)
            s[c] = a > 0.0 ? s[c] / a : 0.0;
        s[COLOUR] = a;
    }
    if (LINEAR != 0)
        for (int c = 0; c < COLOUR; c++)
            s[c] = to_srgb(clamp(s[c], 0.0, 1.0));
    store_px(pc.dst, y * pc.out_w + x, s);
}
