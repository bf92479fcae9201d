#version 460
// rotate: by any angle (clockwise, degrees) about the centre, onto a canvas that
// holds the whole image; bicubic (Catmull-Rom, 4 x 4 taps) on colour premultiplied
// by alpha; taps outside the image are the background. Output pixel (x, y) samples
// the input at
//   u = w/2 + dx cos(t) + dy sin(t),  v = h/2 - dx sin(t) + dy cos(t)
// (dx, dy: the output pixel's centre from the canvas centre), pixel centres at +0.5.
// Multiples of 90 degrees do not come here: they are exact moves (remap.comp).
//
// rotate_lines.spv (ROTATE_LINES_ONLY) is the CPU devices' shape: lavapipe turns
// each buffer access into a loop over the SIMD lanes, and the 16 taps' sample
// loads (48 for RGB) were most of a 1.2-1.8 s rotation of 5120x2880. There an
// invocation reads each of its 4 rows of taps as one window of 4 pixels in
// 64-bit words, the window moved inside the image at its edges: window pixel
// xs + p gets the weight of its distance from the sample point (0 past the
// taps), and the taps outside the image add the background with the rest of the
// weights, (sum of x weights)(sum of y weights) less the inside ones' product.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// vkimg-variant: lines ROTATE_LINES_ONLY cpu
#ifndef ROTATE_LINES_ONLY
#define ROTATE_LINES_ONLY 0
#endif
#include "common.glsl"
#if ROTATE_LINES_ONLY
#include "words.glsl"
#endif

layout(push_constant) uniform Push {
    uvec2 src, dst;
    uint in_w, in_h, out_w, out_h;
    float c, s;     // cos, sin of the angle
    vec4 bg;        // background, premultiplied, in the output's channels
} pc;

float cubic(float t) // Catmull-Rom (Keys, a = -0.5)
{
    t = abs(t);
    if (t < 1.0)
        return (1.5 * t - 2.5) * t * t + 1.0;
    if (t < 2.0)
        return ((-0.5 * t + 2.5) * t - 4.0) * t + 2.0;
    return 0.0;
}

// input pixel (x, y) premultiplied, in the output's channel layout (alpha last)
vec4 texel(int x, int y)
{
    if (x < 0 || y < 0 || x >= int(pc.in_w) || y >= int(pc.in_h))
        return pc.bg;
    vec4 v = load_px(pc.src, uint(y) * pc.in_w + uint(x));
    if (HAS_ALPHA) {
        for (int c = 0; c < COLOUR; c++)
            v[c] *= v[COLOUR];
    }
    if (OUT_C != IN_C) // the output gains an alpha channel (a transparent background)
        v[COLOUR] = 1.0;
    return v;
}

#if ROTATE_LINES_ONLY
layout(constant_id = 8) const int NB = 1; // outputs of a row an invocation (8-bit output: 8)

const int KW = IN_FMT == FMT_U8 ? 1 : IN_FMT == FMT_U16 ? 2 : 4; // bytes a sample (u8, u16, f32)
const int NWW = IN_C * KW;                                          // words of a window of 4 pixels

// Sample S of a window's words B, normalized as load_sample does.
#define WIN_SAMPLE(B, S)                                                                              \
    (KW == 1   ? u2f(bitfieldExtract(B[(S) >> 2], 8 * ((S) & 3), 8)) * (1.0 / 255.0)                 \
     : KW == 2 ? u2f(bitfieldExtract(B[(S) >> 1], 16 * ((S) & 1), 16)) * (1.0 / 65535.0)             \
               : uintBitsToFloat(B[S]))

// The Catmull-Rom weights of the taps -1 .. 2 from floor(t) at fraction f (cubic()
// as polynomials in f) moved to the window: window pixel p is tap p + d, weight 0
// where that is no tap or lies past n (the image's side, where it has fewer than 4).
void window_weights(float f, int d, int from, int n, out float w[4], out float sum_taps, out float sum_in)
{
    const float t[4] = { ((-0.5 * f + 1.0) * f - 0.5) * f, (1.5 * f - 2.5) * f * f + 1.0,
                         ((-1.5 * f + 2.0) * f + 0.5) * f, (0.5 * f - 0.5) * f * f };
    sum_taps = (t[0] + t[1]) + (t[2] + t[3]);
    sum_in = 0.0;
    [[unroll]] for (int p = 0; p < 4; p++) {
        float v = 0.0;
        [[unroll]] for (int k = 0; k < 4; k++)
            v = k - p == d ? t[k] : v;
        w[p] = from + p < n ? v : 0.0;
        sum_in += w[p];
    }
}

// Output pixel (x, y), premultiplied.
vec4 rotated(uint x, uint y)
{
    float dx = float(x) + 0.5 - 0.5 * float(pc.out_w), dy = float(y) + 0.5 - 0.5 * float(pc.out_h);
    float u = 0.5 * float(pc.in_w) + dx * pc.c + dy * pc.s - 0.5;
    float v = 0.5 * float(pc.in_h) - dx * pc.s + dy * pc.c - 0.5;
    const float fu = floor(u), fv = floor(v);
    const int x0 = int(fu), y0 = int(fv), iw = int(pc.in_w), ih = int(pc.in_h);
    // the windows: 4 pixels from xs in the rows from ys, inside the image where it has 4
    const int xs = clamp(x0 - 1, 0, max(iw - 4, 0)), ys = clamp(y0 - 1, 0, max(ih - 4, 0));
    float wx[4], wy[4], sx, sy, sxin, syin;
    window_weights(u - fu, xs - x0 + 1, xs, iw, wx, sx, sxin);
    window_weights(v - fv, ys - y0 + 1, ys, ih, wy, sy, syin);
    const uint last = (pc.in_w * pc.in_h * uint(IN_C * KW) - 1u) >> 3;
    vec4 sum = vec4(0.0);
    [[unroll]] for (int q = 0; q < 4; q++) {
        uint B[NWW];
        LOAD_WINDOW(pc.src, (uint(min(ys + q, ih - 1)) * pc.in_w + uint(xs)) * uint(IN_C * KW), last, NWW, B)
        vec4 row = vec4(0.0);
        [[unroll]] for (int p = 0; p < 4; p++) {
            vec4 t = vec4(0.0);
            [[unroll]] for (int c = 0; c < IN_C; c++)
                t[c] = WIN_SAMPLE(B, p * IN_C + c);
            if (HAS_ALPHA) {
                [[unroll]] for (int c = 0; c < COLOUR; c++)
                    t[c] *= t[COLOUR];
            }
            if (OUT_C != IN_C)
                t[COLOUR] = 1.0;
            row += wx[p] * t;
        }
        sum += wy[q] * row;
    }
    return sum + pc.bg * (sx * sy - sxin * syin); // the taps outside the image
}

vec4 unpremultiplied(vec4 sum);

void main()
{
    const uint id = group_linear() * (gl_WorkGroupSize.x * gl_WorkGroupSize.y) + gl_LocalInvocationIndex;
    const uint nr = (pc.out_w + uint(NB) - 1u) / uint(NB); // runs of NB a row, the last overlapping the one before
    if (id >= nr * pc.out_h)
        return;
    const uint y = id / nr, x0 = min((id % nr) * uint(NB), pc.out_w - uint(NB));
    if (NB == 1 || OUT_FMT != FMT_U8) {
        [[unroll]] for (int k = 0; k < NB; k++)
            store_px(pc.dst, y * pc.out_w + x0 + uint(k), unpremultiplied(rotated(x0 + uint(k), y)));
        return;
    }
    uint q[MAX_WORDS];
    [[unroll]] for (int i = 0; i < NB * OUT_C / 4; i++)
        q[i] = 0u;
    [[unroll]] for (int k = 0; k < NB; k++) {
        const vec4 o = unpremultiplied(rotated(x0 + uint(k), y));
        [[unroll]] for (int c = 0; c < OUT_C; c++) {
            const int j = k * OUT_C + c;
            q[j >> 2] |= quantize_u(o[c], 255.0) << (8 * (j & 3));
        }
    }
    store_words(pc.dst, (y * pc.out_w + x0) * uint(OUT_C), NB * OUT_C / 4, q);
}
#else
vec4 unpremultiplied(vec4 sum);

void main()
{
    uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
    if (x >= pc.out_w || y >= pc.out_h)
        return;
    float dx = float(x) + 0.5 - 0.5 * float(pc.out_w), dy = float(y) + 0.5 - 0.5 * float(pc.out_h);
    float u = 0.5 * float(pc.in_w) + dx * pc.c + dy * pc.s - 0.5;
    float v = 0.5 * float(pc.in_h) - dx * pc.s + dy * pc.c - 0.5;
    int x0 = int(floor(u)), y0 = int(floor(v));
    float wx[4], wy[4];
    for (int k = 0; k < 4; k++) {
        wx[k] = cubic(u - float(x0 - 1 + k));
        wy[k] = cubic(v - float(y0 - 1 + k));
    }
    vec4 sum = vec4(0.0);
    for (int j = 0; j < 4; j++) {
        vec4 row = vec4(0.0);
        for (int i = 0; i < 4; i++)
            row += wx[i] * texel(x0 - 1 + i, y0 - 1 + j);
        sum += wy[j] * row;
    }
    store_px(pc.dst, y * pc.out_w + x, unpremultiplied(sum));
}
#endif

// Colour divided by alpha (clamped to [0, 1]; 0 where it is 0).
vec4 unpremultiplied(vec4 sum)
{
    const int OC = OUT_C == 2 ? 1 : OUT_C == 4 ? 3 : OUT_C;
    if (OUT_C == 2 || OUT_C == 4) {
        float a = clamp(sum[OC], 0.0, 1.0);
        for (int c = 0; c < OC; c++)
            sum[c] = a > 0.0 ? sum[c] / a : 0.0;
        sum[OC] = a;
    }
    return sum;
}
