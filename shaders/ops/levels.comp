#version 460
// levels: out = ((in - black) / (white - black))^(1 / gamma), clamped to [0, 1],
// on the colour channels; alpha is kept.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "runs.glsl"

// In the input's units: x is the integer level of 8/16-bit samples (exact), else the
// value; black = black_hi + black_lo in those units, scale = 1 / (white - black) in them.
layout(push_constant) uniform Push {
    PIXEL_PUSH
    float black_hi, black_lo, scale, inv_gamma;
} pc;

const float M = IN_FMT == FMT_U8 ? 255.0 : IN_FMT == FMT_U16 ? 65535.0 : 1.0;

float level_map(float x)
{
    return pow(clamp((x - pc.black_hi - pc.black_lo) * pc.scale, 0.0, 1.0), pc.inv_gamma);
}

// 8-bit input: x is the byte itself (round(v * 255) of the per-pixel shape)
vec4 run_px(uvec4 b)
{
    vec4 v = run_norm(b);
    [[unroll]] for (int c = 0; c < COLOUR; c++)
        v[c] = level_map(u2f(b[c]));
    return v;
}

void main()
{
    if (RUNS > 0) {
        run_map(pc.src, pc.dst, pc.npx);
        return;
    }
    uint p = pixel_index();
    if (p >= pc.npx)
        return;
    vec4 v = load_px(pc.src, p);
    for (int c = 0; c < COLOUR; c++)
        v[c] = level_map(M == 1.0 ? v[c] : round(v[c] * M));
    store_px(pc.dst, p, v);
}
