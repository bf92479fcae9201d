#version 460
// remap: exact integer pixel moves -- flips, transposes, rotations by multiples
// of 90 degrees, crops (and EXIF orientations): output pixel (x, y) is input pixel
//   (ix, iy) = (M0 x + M1 y + M2, M3 x + M4 y + M5)
// with M0..M5 integers (src/ops/remap.c). Every input pixel a 32 x 32 tile of the
// output reads lies in one 32 x 32 block of the input; a workgroup of 32 x 8 loads
// that block with rows along x (coalesced), keeps it in shared memory, and writes
// the tile with rows along x: transposing moves are no slower than copies.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(push_constant) uniform Push {
    uvec2 src, dst;
    uint in_w, in_h, out_w, out_h;
    int m0, m1, m2, m3, m4, m5;
} pc;

shared vec4 tile[32][33];

void main()
{
    uvec2 t = gl_LocalInvocationID.xy;
    ivec2 o0 = ivec2(gl_WorkGroupID.xy) * 32; // the output tile's corner
    // the input block: the image of the tile's two opposite corners
    ivec2 c0 = ivec2(pc.m0 * o0.x + pc.m1 * o0.y + pc.m2, pc.m3 * o0.x + pc.m4 * o0.y + pc.m5);
    ivec2 c1 = ivec2(pc.m0 * (o0.x + 31) + pc.m1 * (o0.y + 31) + pc.m2, pc.m3 * (o0.x + 31) + pc.m4 * (o0.y + 31) + pc.m5);
    ivec2 b0 = min(c0, c1);
    for (uint k = 0u; k < 32u; k += gl_WorkGroupSize.y) {
        ivec2 i = b0 + ivec2(t.x, t.y + k);
        if (i.x >= 0 && i.y >= 0 && i.x < int(pc.in_w) && i.y < int(pc.in_h))
            tile[t.y + k][t.x] = load_px(pc.src, uint(i.y) * pc.in_w + uint(i.x));
    }
    barrier();
    for (uint k = 0u; k < 32u; k += gl_WorkGroupSize.y) {
        ivec2 o = o0 + ivec2(t.x, t.y + k);
        if (o.x >= int(pc.out_w) || o.y >= int(pc.out_h))
            continue;
        ivec2 i = ivec2(pc.m0 * o.x + pc.m1 * o.y + pc.m2, pc.m3 * o.x + pc.m4 * o.y + pc.m5) - b0;
        store_px(pc.dst, uint(o.y) * pc.out_w + uint(o.x), tile[i.y][i.x]);
    }
}
