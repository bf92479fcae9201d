#version 460
// copy: identity; also converts between sample formats.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "runs.glsl"

layout(push_constant) uniform Push {
    PIXEL_PUSH
} pc;

vec4 run_px(uvec4 b) { return run_norm(b); }

void main()
{
    if (RUNS > 0) {
        run_map(pc.src, pc.dst, pc.npx);
        return;
    }
    uint p = pixel_index();
    if (p >= pc.npx)
        return;
    store_px(pc.dst, p, load_px(pc.src, p));
}
