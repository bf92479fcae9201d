#version 460
// rotate: by any angle (clockwise, degrees) about the centre, onto a canvas that
// holds the whole image; bicubic (Catmull-Rom, 4 x 4 taps) on colour premultiplied
// by alpha; taps outside the image are the background. Output pixel (x, y) samples
// the input at
//   u = w/2 + dx cos(t) + dy sin(t),  v = h/2 - dx sin(t) + dy cos(t)
// (dx, dy: the output pixel's centre from the canvas centre), pixel centres at +0.5.
// Multiples of 90 degrees do not come here: they are exact moves (remap.comp).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

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
    const int OC = OUT_C == 2 ? 1 : OUT_C == 4 ? 3 : OUT_C;
    if (OUT_C == 2 || OUT_C == 4) {
        float a = clamp(sum[OC], 0.0, 1.0);
        for (int c = 0; c < OC; c++)
            sum[c] = a > 0.0 ? sum[c] / a : 0.0;
        sum[OC] = a;
    }
    store_px(pc.dst, y * pc.out_w + x, sum);
}
