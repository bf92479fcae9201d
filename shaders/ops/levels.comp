#version 460
// levels: out = ((in - black) / (white - black))^(1 / gamma), clamped to [0, 1],
// on the colour channels; alpha is kept.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(push_constant) uniform Push {
    PIXEL_PUSH
    float black, scale, inv_gamma; // scale = 1 / (white - black)
} pc;

void main()
{
    uint p = pixel_index();
    if (p >= pc.npx)
        return;
    vec4 v = load_px(pc.src, p);
    for (int c = 0; c < COLOUR; c++)
        v[c] = pow(clamp((v[c] - pc.black) * pc.scale, 0.0, 1.0), pc.inv_gamma);
    store_px(pc.dst, p, v);
}
