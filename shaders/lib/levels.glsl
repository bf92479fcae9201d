// Integer levels and per-channel 256-bin histograms (threshold, equalize).
// Needs: pc.src, pc.w, pc.h, pc.hist (uvec2), LEVELS (spec constant) and
// runs.glsl (RUNS > 0: the histogram of this invocation's 8-bit chunks).


// Integer level of sample i: raw u8/u16, else the float quantized to LEVELS.
uint level(uint i)
{
    if (IN_FMT == FMT_U8) return uint(U8Buf(pc.src).v[i]);
    if (IN_FMT == FMT_U16) return uint(U16Buf(pc.src).v[i]);
    return quantize_u(load_sample(pc.src, IN_FMT, i), float(LEVELS));
}

uint bin(uint q) { return LEVELS == 255u ? q : q >> 8; }

// Histograms in shared memory: one (atomics), or with RUNS one for each
// invocation (HCOPIES, the workgroup's size) counted with plain increments: on a
// CPU device every shared atomic is a locked instruction a lane.
layout(constant_id = 16) const int HCOPIES = 1;
shared uint lhist[1024 * HCOPIES];

// RUNS > 0: sample b of colour channel c into this invocation's histogram
// (gl_LocalInvocationIndex < HCOPIES)
void run_sample(uint b, int c)
{
    lhist[gl_LocalInvocationIndex * 1024u + uint(c * 256) + bin(b)] += 1u;
}

// Grid-stride over all pixels (1D dispatch, folded: group_linear()): each
// workgroup counts many pixels into shared memory, then adds its non-empty bins
// to the global histogram with one atomic each. pc.hist must be zeroed.
void histogram_pass()
{
    uint t = gl_LocalInvocationIndex, n = gl_WorkGroupSize.x * gl_WorkGroupSize.y;
    for (uint i = t; i < 1024u * uint(HCOPIES); i += n) lhist[i] = 0u;
    barrier();
    uint npx = pc.w * pc.h, stride = n * gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    if (RUNS > 0) { // this invocation's chunks into its own histogram (run_sample)
        run_each(pc.src, npx);
        barrier();
        for (uint i = t; i < uint(COLOUR) * 256u; i += n) {
            uint sum = 0u;
            for (int h = 0; h < HCOPIES; h++)
                sum += lhist[uint(h) * 1024u + i];
            if (sum != 0u) atomicAdd(U32Buf(pc.hist).v[i], sum);
        }
        return;
    }
    for (uint p = group_linear() * n + t; p < npx; p += stride)
        for (int c = 0; c < COLOUR; c++)
            atomicAdd(lhist[c * 256 + int(bin(level(p * uint(IN_C) + uint(c))))], 1u);
    barrier();
    for (uint i = t; i < uint(COLOUR) * 256u; i += n)
        if (lhist[i] != 0u) atomicAdd(U32Buf(pc.hist).v[i], lhist[i]);
}
