#version 460
// copy: identity. Also converts between sample formats (exec uses it to load
// and store when a pipeline's first/last op can't do so itself).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(push_constant) uniform Push {
    uvec2 src, dst;
    uint npx; // pixels
} pc;

void main()
{
    uint p = group_linear() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (p >= pc.npx)
        return;
    store_px(pc.dst, p, load_px(pc.src, p));
}
