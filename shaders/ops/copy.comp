#version 460
// copy: identity; also converts between sample formats.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(push_constant) uniform Push {
    PIXEL_PUSH
} pc;

void main()
{
    uint p = pixel_index();
    if (p >= pc.npx)
        return;
    store_px(pc.dst, p, load_px(pc.src, p));
}
