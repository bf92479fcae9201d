#version 460
// flatten: each pixel's colour composited over an opaque background colour by its
// alpha, out = colour * a + background * (1 - a) on the stored values (a the
// normalized alpha, clamped to [0, 1]; colour not premultiplied), and the alpha
// dropped: RGBA -> RGB, gray + alpha -> gray. An input without alpha is copied as
// it is. RUNS > 0: the CPU shape (runs.glsl).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "runs.glsl"

layout(push_constant) uniform Push {
    PIXEL_PUSH
    float bg0, bg1, bg2; // the background in the output's colour channels (gray: its luma), normalized
} pc;

vec4 flatten_px(vec4 v)
{
    if (!HAS_ALPHA)
        return v;
    const float a = clamp(v[IN_C - 1], 0.0, 1.0), b = 1.0 - a;
    return vec4(v.x * a + pc.bg0 * b, v.y * a + pc.bg1 * b, v.z * a + pc.bg2 * b, 0.0);
}

vec4 run_px(uvec4 b)
{
    return flatten_px(run_norm(b));
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
    store_px(pc.dst, p, flatten_px(load_px(pc.src, p)));
}
