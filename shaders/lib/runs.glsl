// The CPU shape of the point ops ("runs"; the host chooses it: vki_runs, on CPU
// devices by default). lavapipe runs a workgroup as SIMD lanes on one core and
// every buffer access as a loop over the lanes, so a per-pixel kernel that loads
// and stores a byte a sample spends its time in those loops. With RUNS > 0 an
// invocation takes RUNS consecutive chunks of 48 8-bit samples (chunk k: samples
// 48k .. 48k + 47, whole pixels for 1 to 4 channels, so a sample's channel is a
// compile-time constant in the unrolled loops), reads each chunk as six 64-bit
// words and writes its outputs as whole 64-bit words (32-bit ones where a chunk's
// outputs are an odd number of them: 8-bit RGBA in, RGB out, 36 bytes); the last,
// partial chunk sample by sample. Input 8-bit, output 8-bit, 16-bit or f32, both
// buffers 8-byte aligned (the host checks). Needs common.glsl; an op that maps
// pixels defines
//   vec4 run_px(uvec4 b)
// (b: the pixel's bytes in .xyzw, channels past IN_C 0; the result: the output
// channels as normalized values) and calls run_map; a reduction defines
//   void run_sample(uint b, int c)
// (b: a byte of colour channel c) and calls run_each.
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 7) const int RUNS = 0;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer RunBuf { uvec2 v[]; };

const int RUN_PX = 48 / IN_C;                                  // pixels a chunk
const int RUN_OUT = RUN_PX * OUT_C;                            // output samples a chunk
const int RUN_OW = OUT_FMT == FMT_U8 ? RUN_OUT / 4 : OUT_FMT == FMT_U16 ? RUN_OUT / 2 : RUN_OUT; // output words a chunk

// The first chunk of this invocation (a 1D dispatch, folded: group_linear()).
uint run_first()
{
    uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
    return (group_linear() * n + gl_LocalInvocationIndex) * uint(RUNS);
}

// Chunk k's 12 words.
void run_load(uvec2 src, uint k, out uint w[12])
{
    RunBuf b = RunBuf(src);
    [[unroll]] for (int i = 0; i < 6; i++) {
        uvec2 u = b.v[6u * k + uint(i)];
        w[2 * i] = u.x;
        w[2 * i + 1] = u.y;
    }
}

// Sample j (0..47) of a chunk's words.
uint run_byte(uint w[12], int j)
{
    return (w[j >> 2] >> (8 * (j & 3))) & 255u;
}

// Pixel p (0..RUN_PX-1) of a chunk: its bytes in .xyzw.
uvec4 run_pixel(uint w[12], int p)
{
    int j = p * IN_C;
    return uvec4(run_byte(w, j), IN_C > 1 ? run_byte(w, min(j + 1, 47)) : 0u,
                 IN_C > 2 ? run_byte(w, min(j + 2, 47)) : 0u, IN_C > 3 ? run_byte(w, min(j + 3, 47)) : 0u);
}

// Pixel p of the image as bytes (the partial chunk).
uvec4 run_pixel_at(uvec2 src, uint p)
{
    U8Buf b = U8Buf(src);
    uint i = p * uint(IN_C);
    return uvec4(uint(b.v[i]), IN_C > 1 ? uint(b.v[i + 1u]) : 0u, IN_C > 2 ? uint(b.v[i + 2u]) : 0u,
                 IN_C > 3 ? uint(b.v[i + 3u]) : 0u);
}

// Bytes as the normalized values load_sample gives (the same arithmetic).
vec4 run_norm(uvec4 b)
{
    return vec4(u2f(b.x), u2f(b.y), u2f(b.z), u2f(b.w)) * (1.0 / 255.0);
}

vec4 run_px(uvec4 b);
void run_sample(uint b, int c);

// Every colour sample (not alpha) of this invocation's chunks of an npx-pixel
// image to run_sample; false where the invocation has none.
bool run_each(uvec2 src, uint npx)
{
    uint total = npx * uint(IN_C), k0 = run_first();
    for (uint k = k0; k < k0 + uint(RUNS) && k * 48u < total; k++) {
        if (k * 48u + 48u > total) { // the partial chunk, sample by sample
            for (uint i = k * 48u; i < total; i++)
                if (int(i % uint(IN_C)) < COLOUR)
                    run_sample(uint(U8Buf(src).v[i]), int(i % uint(IN_C)));
            break;
        }
        uint w[12];
        run_load(src, k, w);
        [[unroll]] for (int j = 0; j < 48; j++)
            if (j % IN_C < COLOUR)
                run_sample(run_byte(w, j), j % IN_C);
    }
    return k0 * 48u < total;
}

// The point op over this invocation's chunks of an npx-pixel image.
void run_map(uvec2 src, uvec2 dst, uint npx)
{
    uint total = npx * uint(IN_C), k0 = run_first();
    for (uint k = k0; k < k0 + uint(RUNS); k++) {
        if (k * 48u >= total)
            return;
        if (k * 48u + 48u > total) { // the partial chunk, pixel by pixel
            for (uint p = k * uint(RUN_PX); p < npx; p++)
                store_px(dst, p, run_px(run_pixel_at(src, p)));
            return;
        }
        uint w[12];
        run_load(src, k, w);
        uint o[RUN_OW];
        [[unroll]] for (int i = 0; i < RUN_OW; i++)
            o[i] = 0u;
        [[unroll]] for (int p = 0; p < RUN_PX; p++) {
            vec4 v = run_px(run_pixel(w, p));
            [[unroll]] for (int c = 0; c < OUT_C; c++) {
                int j = p * OUT_C + c;
                if (OUT_FMT == FMT_U8)
                    o[j >> 2] |= quantize_u(v[c], 255.0) << (8 * (j & 3));
                else if (OUT_FMT == FMT_U16)
                    o[j >> 1] |= quantize_u(v[c], 65535.0) << (16 * (j & 1));
                else
                    o[j] = floatBitsToUint(v[c]);
            }
        }
        if (RUN_OW % 2 == 0) {
            RunBuf d = RunBuf(dst);
            [[unroll]] for (int i = 0; i < RUN_OW / 2; i++)
                d.v[uint(RUN_OW / 2) * k + uint(i)] = uvec2(o[2 * i], o[2 * i + 1]);
        } else { // an odd number of words a chunk (8-bit RGBA in, RGB out: 36 bytes): 32-bit stores
            U32Buf d = U32Buf(dst);
            [[unroll]] for (int i = 0; i < RUN_OW; i++)
                d.v[uint(RUN_OW) * k + uint(i)] = o[i];
        }
    }
}
