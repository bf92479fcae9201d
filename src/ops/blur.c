/* blur: separable Gaussian, w_i = exp(-i^2 / (2 sigma^2)), i = -r..r, normalized
 * (computed in double, uploaded as floats); colour is blurred premultiplied by
 * alpha, borders clamp to the edge. shaders/blur.comp documents the kernels:
 *
 * - fused (r <= BLUR_RMAX and the tile fits shared memory): one dispatch, rows
 *   then columns of a BLUR_TX x TY tile in shared memory; DRAM traffic is one
 *   read of the input and one write of the output.
 * - separable: a pass along x into a scratch image, then a pass along y. The
 *   scratch image is u16 (unsigned normalized) when the input is 8- or 16-bit
 *   without alpha and the output is u8: its rounding (<= 0.5/65535) stays under
 *   0.002 of an 8-bit step, and it halves the scratch traffic of f32. Otherwise
 *   f32 (16-bit and float outputs need the precision; with alpha, the colour is
 *   divided by a blurred alpha that may be tiny).
 *
 * Up to BLUR_RMAX the kernels are specialized for the radius (unrolled loops,
 * weights in push constants); past it, loops over blocks of taps read the
 * weights from a buffer. Every invocation computes several outputs (blur_nb).
 * The default is the path with the lower estimated cost (blur_pick_fused);
 * VKIMG_BLUR_SEPARABLE=1 forces the separable passes, VKIMG_BLUR_FUSED=1 the
 * fused kernel where it fits (to compare them), VKIMG_BLUR_NB=8|16 the block
 * size of the loops. */
#include "exec/exec.h"
#include "core/util.h"
#include "spv/blur.spv.h"
#include "spv/blur_lines.spv.h"
#include "spv/blur_ring.spv.h"
#include "spv/blur_vec.spv.h"
#include "spv/blur_vecy.spv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_SIGMA, O_RADIUS, O_METHOD };
enum { METHOD_EXACT, METHOD_BOX };
static const char *const methods[] = { "exact", "box", NULL };

#define BLUR_MAX_RADIUS VKI_BLUR_MAX_RADIUS
#define BLUR_RMAX VKI_BLUR_RMAX /* largest radius with unrolled loops (weights in push constants) */
#define BLUR_NB 8    /* outputs per invocation (see blur_nb) */
#define BLUR_NBH 16  /* ... in the fused row pass */
#define BLUR_TX 32   /* fused tile width (the shader's swizzle needs a multiple of 32) */

static const vki_opt blur_opts[] = {
    [O_SIGMA] = { .name = "sigma", .type = VKI_OPT_FLOAT, .def = 1.0, .min = 0.0, .min_exclusive = true,
                  .max = 1000.0, .help = "standard deviation in pixels" },
    [O_RADIUS] = { .name = "radius", .type = VKI_OPT_INT, .min = 0, .max = BLUR_MAX_RADIUS,
                   .auto_default = "ceil(3*sigma)", .help = "kernel radius in pixels (taps: 2*radius+1); method=exact" },
    [O_METHOD] = { .name = "method", .type = VKI_OPT_ENUM, .def = METHOD_EXACT, .choices = methods,
                   .help = "exact: the Gaussian, cost grows with the radius; box (sigma >= 3): 3 box filters per "
                           "axis of about the same variance, cost independent of sigma, within 1% of the Gaussian" },
};

static int blur_check(vki_args *a, char *why, size_t n, int *bad)
{
    if (a->v[O_METHOD] == METHOD_BOX && a->set[O_RADIUS]) {
        snprintf(why, n, "radius applies to method=exact (method=box derives its box widths from sigma)");
        *bad = O_RADIUS;
        return -1;
    }
    if (!a->set[O_RADIUS]) {
        double r = ceil(3.0 * a->v[O_SIGMA]);
        if (r > BLUR_MAX_RADIUS) {
            snprintf(why, n, "sigma %g needs radius %g, over the maximum %d", a->v[O_SIGMA], r, BLUR_MAX_RADIUS);
            *bad = O_SIGMA;
            return -1;
        }
        a->v[O_RADIUS] = r;
    }
    return 0;
}

/* The push constants of blur.comp (128 bytes: the minimum every device has). */
typedef struct blur_push {
    vki_addr src, dst, wts;
    int32_t w, h, r;
    float wk[BLUR_RMAX + 1];
} blur_push;

/* Alpha to premultiply by: none where the input has none, or has it all at its
 * maximum (vki_step.opaque_alpha: CPU devices look; the sums are then the plain
 * blur's, and the blurred alpha the maximum again). method=box keeps its alpha
 * path. */
static bool blur_alpha(const vki_step *s)
{
    return VKI_HAS_ALPHA(s->in_c) && !s->opaque_alpha;
}

static uint32_t fmt_bytes(vkimg_fmt f)
{
    return f == VKIMG_U8 ? 1 : f == VKIMG_F32 ? 4 : 2;
}

/* 32-bit words per texel in shared memory, as blur.comp packs them. */
static uint32_t words_per_texel(vkimg_fmt f, int c)
{
    return f == VKIMG_U8 ? 1u : f == VKIMG_F32 ? (uint32_t)c : (uint32_t)(c + 1) / 2;
}

static uint32_t odd(uint32_t n) { return n | 1u; }

/* Shared memory of blur.comp: a texel of W words is one element of s1 (uint,
 * W = 1), s2 (uvec2, W = 2), s4 (uvec4, W = 4) or of s2 and s1 (W = 3). */
typedef struct blur_shared { uint32_t t1, t2, t4; } blur_shared;

static void shared_add(blur_shared *m, uint32_t w, uint64_t texels)
{
    if (w == 1 || w == 3)
        m->t1 += (uint32_t)texels;
    if (w == 2 || w == 3)
        m->t2 += (uint32_t)texels;
    if (w == 4)
        m->t4 += (uint32_t)texels;
}

/* Usable 32-bit words: the unused arrays keep one element, and alignment. */
static uint32_t shared_words(const vki_gpu *g)
{
    return g->lim.max_shared > 64 ? (g->lim.max_shared - 64) / 4 : 0;
}

static void shared_spec(vki_spec *spec, blur_shared m)
{
    vki_spec_named(spec, "T1", m.t1 ? m.t1 : 1);
    vki_spec_named(spec, "T2", m.t2 ? m.t2 : 1);
    vki_spec_named(spec, "T4", m.t4 ? m.t4 : 1);
}

/* Outputs per invocation of the separable loops for radii over BLUR_RMAX:
 * BLUR_NB on GPUs (the two window halves and the sums take 3*NB*C registers);
 * 16 on CPU devices (lavapipe), where every shared-memory access is a loop over
 * the lanes and costs far more than spilling registers (measured: -28% time
 * at sigma 20). VKIMG_BLUR_NB=8 or 16 overrides it (=8: the GPU configuration
 * on lavapipe, for tests). */
static uint32_t blur_nb(const vki_gpu *g)
{
    const char *v = getenv("VKIMG_BLUR_NB");
    if (v && (!strcmp(v, "8") || !strcmp(v, "16")))
        return (uint32_t)atoi(v);
    return g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 16u : BLUR_NB;
}

/* ---- separable pass: LINES lines x ALONG outputs per workgroup, NB outputs
 * per invocation, the inputs of a line in chunks of CHUNK positions. */
typedef struct blur_pass_plan {
    uint32_t nb, lines, along, chunk, pitch, swz, wg;
    blur_shared mem;
    bool unrolled;
} blur_pass_plan;

static int plan_pass(const vki_gpu *g, int dir, vkimg_fmt in_fmt, int c, int rad, blur_pass_plan *pp)
{
    const uint32_t words = shared_words(g);
    const uint32_t wg = vki_wg_1d(g), wpt = words_per_texel(in_fmt, c);
    /* 32 lines: a warp reads 32 rows (x) or writes 32 adjacent columns (y) */
    const uint32_t lines = wg < 32 ? wg : 32;
    for (int unrolled = rad <= BLUR_RMAX; unrolled >= 0; unrolled--) {
        const uint32_t nb = unrolled ? BLUR_NB : blur_nb(g), nblk = (2u * (uint32_t)rad + nb) / nb;
        for (uint32_t segs = wg / lines; segs >= 1; segs /= 2) {
            uint32_t along = segs * nb;
            uint32_t np = unrolled ? along + 2u * (uint32_t)rad : (segs + nblk) * nb; /* positions per line */
            uint32_t chunk = np, pitch = dir == 0 ? odd(np) : 0, in_words;
            if (dir == 0) {
                in_words = wpt * lines * pitch;
                if (in_words > words) {
                    uint32_t fit = words / (wpt * lines);
                    chunk = fit < 1 ? 0 : (fit - 1) / nb * nb; /* pitch odd(chunk) <= fit */
                    pitch = odd(chunk);
                    in_words = wpt * lines * pitch;
                }
            } else {
                in_words = wpt * lines * np;
                if (in_words > words) {
                    chunk = words / (wpt * lines) / nb * nb;
                    in_words = wpt * lines * chunk;
                }
            }
            if (chunk < nb || (unrolled && chunk < np))
                continue; /* unrolled: one chunk only */
            /* along x the results are staged in shared memory */
            uint32_t stage = dir == 0 ? lines * along * (uint32_t)c : 0;
            if (stage > words)
                continue;
            uint32_t rs = along * (uint32_t)c, swz = 0;
            if (lines > 1)
                for (swz = 31; swz && rs % (swz + 1); swz >>= 1) /* e ^ (l & swz) stays in the row */
                    ;
            /* along x: planar in s1, staging aliased; along y: texels */
            blur_shared mem = { 0 };
            if (dir == 0)
                mem.t1 = in_words > stage ? in_words : stage;
            else
                shared_add(&mem, wpt, (uint64_t)lines * chunk);
            *pp = (blur_pass_plan){ .nb = nb, .lines = lines, .along = along, .chunk = chunk, .pitch = pitch ? pitch : 1,
                                    .swz = swz, .wg = lines * segs, .mem = mem, .unrolled = unrolled };
            return 0;
        }
    }
    return -1;
}

static int blur_pass(vki_rec *r, const vki_step *s, int dir, const blur_pass_plan *plan, VkDeviceAddress src,
                     vkimg_fmt src_fmt, VkDeviceAddress dst, vkimg_fmt dst_fmt, const blur_push *w, int rad)
{
    const blur_pass_plan pp = *plan;
    vki_step ps = *s;
    ps.in_fmt = src_fmt;
    ps.out_fmt = dst_fmt;
    ps.out_c = s->in_c;
    vki_spec spec = { 0 };
    vki_step_spec(&ps, &spec, pp.wg, 1, 1);
    vki_spec_named(&spec, "DIR", (uint32_t)dir);
    vki_spec_named(&spec, "CHUNK", pp.chunk);
    shared_spec(&spec, pp.mem);
    bool alpha = blur_alpha(s);
    vki_spec_named(&spec, "PREMUL", alpha && dir == 0);
    vki_spec_named(&spec, "UNPREMUL", alpha && dir == 1);
    vki_spec_named(&spec, "NB", pp.nb);
    vki_spec_named(&spec, "LINES", pp.lines);
    vki_spec_named(&spec, "ALONG", pp.along);
    vki_spec_named(&spec, "PITCH", pp.pitch);
    vki_spec_named(&spec, "R", pp.unrolled ? (uint32_t)rad : (uint32_t)-1);
    vki_spec_named(&spec, "SWZ", pp.swz);
    vki_spec_named(&spec, "PACKED", dir == 0 && s->in_packed_rgb8_words);
    blur_push pc = *w;
    pc.src = vki_addr_of(src);
    pc.dst = vki_addr_of(dst);
    uint32_t gx = dir == 0 ? pp.along : pp.lines, gy = dir == 0 ? pp.lines : pp.along;
    return vki_rec_dispatch(r, dir == 0 ? "blur-h" : "blur-v", VKI_SPV(blur), &spec, &pc, sizeof pc,
                            ((uint32_t)s->w + gx - 1) / gx, ((uint32_t)s->h + gy - 1) / gy, 1);
}

/* ---- CPU devices (lavapipe): both passes as blur.comp FUSED = 4 (lines: no
 * shared memory, no barriers; the same sums as the separable passes), where
 * the radius is unrolled (r <= BLUR_RMAX). 5120x2880 u8 on this CI's lavapipe,
 * sigma 3 (vkimg bench): RGB 325 -> 244 ms, RGBA 427 -> 329, gray 140 -> 66
 * (against the fused tile kernel). VKIMG_BLUR_LINES=0/1 overrides the choice
 * by device type, as do VKIMG_BLUR_FUSED and VKIMG_BLUR_SEPARABLE (the GPU
 * shapes): the tests run both shapes on lavapipe. */
static bool use_lines(const vki_gpu *g, int rad)
{
    if (rad > BLUR_RMAX || vki_env_on("VKIMG_BLUR_FUSED") || vki_env_on("VKIMG_BLUR_SEPARABLE"))
        return false;
    const char *ev = getenv("VKIMG_BLUR_LINES");
    if (ev && *ev)
        return *ev != '0';
    return g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

static vkimg_fmt blur_inter_fmt(const vki_step *s);

/* The line passes' u16 RGB intermediate is padded to 8 bytes a texel: one
 * 64-bit load and store each instead of three 16-bit ones (lavapipe makes
 * every access a loop over the lanes): 5120x2880 RGB sigma 3 256-265 -> 191-212
 * ms, sigma 1 150-155 -> 130 ms. */
static bool lines_pad16(const vki_step *s)
{
    return s->in_c == 3 && blur_inter_fmt(s) == VKIMG_U16;
}

/* The specialization the CPU shapes' passes share (blur.comp FUSED = 4, 5, 6):
 * pass dir of two, from src_fmt to dst_fmt, nb outputs an invocation; the pass
 * that reads the input premultiplies alpha, the one that writes the output
 * divides it back. */
static void cpu_pass_spec(const vki_step *s, int dir, uint32_t fused, vkimg_fmt src_fmt, vkimg_fmt dst_fmt, uint32_t wg,
                          uint32_t nb, int rad, vki_spec *spec)
{
    vki_step ps = *s;
    ps.in_fmt = src_fmt;
    ps.out_fmt = dst_fmt;
    ps.out_c = s->in_c;
    memset(spec, 0, sizeof *spec);
    vki_step_spec(&ps, spec, wg, 1, 1);
    const bool alpha = blur_alpha(s);
    vki_spec_named(spec, "FUSED", fused);
    vki_spec_named(spec, "PREMUL", alpha && dir == 0);
    vki_spec_named(spec, "UNPREMUL", alpha && dir == 1);
    vki_spec_named(spec, "NB", nb);
    vki_spec_named(spec, "R", (uint32_t)rad);
}

static int lines_pass(vki_rec *r, const vki_step *s, int dir, VkDeviceAddress src, vkimg_fmt src_fmt,
                      VkDeviceAddress dst, vkimg_fmt dst_fmt, const blur_push *w, int rad)
{
    /* outputs per invocation: 8 for RGB, 16 otherwise (measured as above; the
     * sums of an invocation are its registers, spilled on x86) */
    const uint32_t nb = (uint32_t)vki_env_long("VKIMG_BLUR_LINES_NB", s->in_c == 3 ? 8 : 16, 1, 32);
    const uint32_t wg = (uint32_t)vki_env_long("VKIMG_BLUR_LINES_WG", 64, 8, vki_wg_1d(r->gpu));
    vki_spec spec;
    cpu_pass_spec(s, dir, 4, src_fmt, dst_fmt, wg, nb, rad, &spec);
    vki_spec_named(&spec, "DIR", (uint32_t)dir);
    vki_spec_named(&spec, "PACKED", dir == 0 && s->in_packed_rgb8_words);
    /* the u16 RGB intermediate padded to 8 bytes a texel: one load, one store */
    if (lines_pad16(s))
        vki_spec_named(&spec, "PAD16", dir == 0 ? 2 : 1);
    blur_push pc = *w;
    pc.src = vki_addr_of(src);
    pc.dst = vki_addr_of(dst);
    const uint64_t along = (uint64_t)(dir == 0 ? s->w : s->h), nlines = (uint64_t)(dir == 0 ? s->h : s->w);
    const uint64_t items = nlines * ((along + nb - 1) / nb);
    /* blur_lines.spv: blur.comp built with the line passes alone (its
     * vkimg-variant line): lavapipe creates it in a third of the time */
    return vki_rec_dispatch_1d(r, dir == 0 ? "blur-h" : "blur-v", VKI_SPV(blur_lines), &spec, &pc, sizeof pc,
                               (items + wg - 1) / wg);
}

/* ---- CPU devices, 8-bit input and output: the vec passes (blur.comp FUSED =
 * 5 along x, 6 along y; blur_vec.spv), the same sums as the line passes (the
 * same bytes). They read and write whole 64-bit words
 * (lavapipe runs every buffer access as a loop over the lanes, one per
 * component: the line passes above made 60 such accesses per 8 RGB outputs
 * along x, where these make 17) and leave the edges to a second dispatch of
 * each (EDGE = 1: lavapipe runs both sides of an if, masked). The intermediate
 * is blur_inter_fmt's, in rows of a multiple of 4 texels. VKIMG_BLUR_VEC=0
 * runs the line passes instead; VKIMG_BLUR_VEC_NB (x: outputs an invocation,
 * a multiple of 4), VKIMG_BLUR_VEC_NBV (y: rows) and VKIMG_BLUR_VEC_VW (y:
 * 64-bit words of a row, even) set the shapes (none of them mattered by more
 * than 10% on this CI's lavapipe). 5120x2880, sigma 3, line passes -> vec:
 * gray 64 -> 43 ms, gray+alpha 110 -> 106, RGB 188 -> 110, RGBA 320 -> 215
 * (the f32 intermediate of alpha costs them most of the gain). */
static bool use_ring(const vki_gpu *g, const vki_step *s, int dir);

static bool use_vec(const vki_gpu *g, const vki_step *s)
{
    const char *ev = getenv("VKIMG_BLUR_VEC");
    if (s->out_fmt != VKIMG_U8 || (ev && *ev == '0'))
        return false;
    /* 16-bit and float input (a float image between two ops, as after gray) where the sliding pass takes x */
    return s->in_fmt == VKIMG_U8 || ((s->in_fmt == VKIMG_U16 || s->in_fmt == VKIMG_F32) && use_ring(g, s, 0));
}

/* The sliding passes (blur.comp FUSED = 7 along y, 8 along x): where the
 * intermediate is u16 and the output's rows are whole 32-bit words (y), where
 * the input's rows are whole steps of 8 samples (x), and where the device
 * reads texel sources (they read their input so: exec.h vki_rec_texel_src;
 * 5120x2880 RGB sigma 3 on this CI's lavapipe, with their taps folded too, 97-104
 * -> 86-96 ms, gray 32-33.5 -> 28.4-29.4). VKIMG_BLUR_RING=0 runs h_vec and
 * v_vec instead (8-bit input; the line passes for other input).
 * Along y on an f32 intermediate (alpha, or float input; 2 words a run) the
 * sliding pass was slower than v_vec on lavapipe, 5120x2880 sigma 3: gray +
 * alpha 115 -> 150 ms, RGBA 245 -> 300, gray,blur=2's blur 53 -> 72. */
static bool use_ring(const vki_gpu *g, const vki_step *s, int dir)
{
    const char *ev = getenv("VKIMG_BLUR_RING");
    if (!g->texel || (ev && *ev == '0') || (dir == 1 && blur_inter_fmt(s) != VKIMG_U16))
        return false;
    return (uint64_t)s->w * (uint64_t)s->in_c % (dir == 0 ? 8 : 4) == 0;
}

/* The vec passes' dispatches: kind 0 the interior (h_vec, v_vec), 1 their
 * edges, 2 the sliding pass (nb = RING_M), 3 (x) the sliding pass's edges
 * (h_vec's EDGE = 1 with RINGX). */
static int vec_dispatch(vki_rec *r, const vki_step *s, int dir, int kind, uint32_t nb, uint32_t vw, VkDeviceAddress src,
                        vkimg_fmt src_fmt, VkDeviceAddress dst, vkimg_fmt dst_fmt, const blur_push *w, int rad,
                        uint64_t items)
{
    static const char *const names[2][4] = { { "blur-h-vec", "blur-h-vec-edge", "blur-h-ring", "blur-h-ring-edge" },
                                             { "blur-v-vec", "blur-v-vec-edge", "blur-v-ring", "" } };
    if (!items)
        return 0;
    const uint32_t wg = 64;
    const uint32_t fused = kind == 2 ? (dir == 0 ? 8u : 7u) : dir == 0 ? 5u : 6u;
    vki_spec spec;
    cpu_pass_spec(s, dir, fused, src_fmt, dst_fmt, wg, kind == 2 ? 8 : nb, rad, &spec);
    vki_spec_named(&spec, "EDGE", kind == 1 || kind == 3);
    vki_spec_named(&spec, "RINGX", kind == 3);
    if (kind == 2)
        vki_spec_named(&spec, "RING_M", nb);
    if (dir == 1)
        vki_spec_named(&spec, "VW", vw);
    blur_push pc = *w;
    pc.src = vki_addr_of(src);
    pc.dst = vki_addr_of(dst);
    /* modules of their own: the sliding passes, h_vec, v_vec (lavapipe makes NIR of a module's every
     * function before the specialization drops the unused ones) */
    const uint64_t groups = (items + wg - 1) / wg;
    if (kind == 2) { /* the input through the texel source (exec.h) */
        vki_spec_named(&spec, "TEXEL", vki_rec_texel_src(r, src));
        return vki_rec_dispatch_1d(r, names[dir][kind], VKI_SPV(blur_ring), &spec, &pc, sizeof pc, groups);
    }
    if (dir == 1)
        return vki_rec_dispatch_1d(r, names[dir][kind], VKI_SPV(blur_vecy), &spec, &pc, sizeof pc, groups);
    return vki_rec_dispatch_1d(r, names[dir][kind], VKI_SPV(blur_vec), &spec, &pc, sizeof pc, groups);
}

/* The pass along x on s's rows into tmp: where the rows are whole steps of 8 samples the sliding pass on
 * the output words whose windows lie inside a row (as h_ring), then blocks of nb pixels h_ring leaves
 * (as h_vec with RINGX); else h_vec on blocks of nb outputs, those whose windows lie inside a row
 * (b0 .. b0 + nin - 1), then the rest. */
static int vec_x(vki_rec *r, const vki_step *s, const blur_push *w, int rad, VkDeviceAddress tmp, uint32_t m,
                 uint32_t nb)
{
    const vkimg_fmt inter = blur_inter_fmt(s);
    const uint64_t c = (uint64_t)s->in_c, wd = (uint64_t)s->w, ht = (uint64_t)s->h, nbt = (wd + nb - 1) / nb;
    if (!use_ring(r->gpu, s, 0)) {
        const uint64_t b0 = ((uint64_t)rad + nb - 1) / nb;
        const uint64_t b1 = wd >= (uint64_t)rad ? (wd - (uint64_t)rad) / nb : 0, nin = b1 > b0 ? b1 - b0 : 0;
        int rc = 0;
        for (int edge = 0; edge < 2 && !rc; edge++)
            rc = vec_dispatch(r, s, 0, edge, nb, 0, s->in, s->in_fmt, tmp, inter, w, rad, ht * (edge ? nbt - nin : nin));
        return rc;
    }
    const uint64_t xd = ((uint64_t)rad * c + 7) / 8, rw = m * (2 * xd + 1), nw = wd * c / 8;
    const uint64_t ni = nw > 2 * xd ? nw - 2 * xd : 0, xl = (8 * xd + c - 1) / c, xr = ni ? 8 * (nw - xd) / c : 0;
    const uint64_t eb0 = (xl + nb - 1) / nb, enin = xr / nb > eb0 ? xr / nb - eb0 : 0;
    int rc = vec_dispatch(r, s, 0, 2, m, 0, s->in, s->in_fmt, tmp, inter, w, rad, ht * ((ni + rw - 1) / rw));
    if (!rc)
        rc = vec_dispatch(r, s, 0, 3, nb, 0, s->in, s->in_fmt, tmp, inter, w, rad, ht * (nbt - enin));
    return rc;
}

/* The pass along y from tmp, which holds rows ya .. yb - 1 of the x pass, to output rows y0 .. y1 - 1
 * (the push block's wts, unused with R >= 0, carries y0 - ya and yb - ya to v_ring and v_vec).
 * Where the output's rows are whole 32-bit words and the intermediate u16 (no alpha), the sliding pass
 * (runs of rvw 64-bit words of the intermediate, 4 rvw samples; output rows of whole runs, so no edge).
 * Two words where the rows allow: half the invocations, each storing its 8 output bytes at once
 * (lavapipe makes every store a loop over the lanes): 5120x2880 RGB sigma 3 86-90 -> 77-84 ms (the least
 * of 30, alternating); gray alike; 4 words 96-128 ms. VKIMG_BLUR_RING_VW=1 keeps one. Else v_vec: runs
 * of vw whole words of nbv rows, then the samples (pixels with alpha) past a row's last one. */
static int vec_y(vki_rec *r, const vki_step *s, const blur_push *w, int rad, VkDeviceAddress tmp, int ya, int yb,
                 int y0, int y1, uint32_t m, uint32_t nbv, uint32_t vw)
{
    const vkimg_fmt inter = blur_inter_fmt(s);
    const uint64_t c = (uint64_t)s->in_c, wd = (uint64_t)s->w, oh = (uint64_t)(y1 - y0);
    blur_push pc = *w;
    pc.h = y1 - y0;
    pc.wts.lo = (uint32_t)(y0 - ya);
    pc.wts.hi = (uint32_t)(yb - ya);
    const VkDeviceAddress out = s->out + (VkDeviceAddress)y0 * wd * c * fmt_bytes(s->out_fmt);
    if (use_ring(r->gpu, s, 1)) {
        uint32_t rvw = (uint32_t)vki_env_long("VKIMG_BLUR_RING_VW", 2, 1, 4);
        if (wd * c % (4u * rvw))
            rvw = wd * c % 8 ? 1 : 2;
        const uint64_t rb = (uint64_t)m * (2u * (uint64_t)rad + 1u), nrun = wd * c / (4u * rvw);
        return vec_dispatch(r, s, 1, 2, m, rvw, tmp, inter, out, s->out_fmt, &pc, rad, nrun * ((oh + rb - 1) / rb));
    }
    const uint64_t run = (uint64_t)vw * (inter == VKIMG_U16 ? 4 : 2), nrun = wd * c / run;
    const uint64_t nyb = (oh + nbv - 1) / nbv, uc = VKI_HAS_ALPHA(s->in_c) ? c : 1;
    int rc = 0;
    for (int edge = 0; edge < 2 && !rc; edge++)
        rc = vec_dispatch(r, s, 1, edge, nbv, vw, tmp, inter, out, s->out_fmt, &pc, rad,
                          nyb * (edge ? (wd * c - nrun * run) / uc : nrun));
    return rc;
}

/* Rows of output a band of the vec passes (record_vec), 0 for one band: a multiple of the y pass's rows
 * an invocation (unit) whose intermediate rows stay near want bytes, where every band's input and output
 * start at offsets the passes take (the texel source's alignment, at least 8 bytes). On this CPU (VM)
 * memory is dear to touch the first time (its pages zeroed: clear_page_erms, 0.4-7 GB/s): a band's
 * intermediate is touched once and reused, where the whole image's was touched all (5120x2880 RGB: 84
 * MiB of u16; RGBA with alpha: 225 MiB of f32). */
static int vec_band_rows(const vki_gpu *g, const vki_step *s, int rad, uint64_t unit, uint64_t inter_row)
{
    const long def = 16l << 20, want = vki_env_long("VKIMG_BLUR_BAND_BYTES", def, 0, 1l << 40);
    if (!want)
        return 0;
    uint64_t band = (uint64_t)want / inter_row;
    band = band > 2u * (uint64_t)rad + unit ? (band - 2u * (uint64_t)rad) / unit * unit : unit;
    if (band + band / 2 >= (uint64_t)s->h)
        return 0;
    const uint64_t row = (uint64_t)s->w * s->in_c * fmt_bytes(s->in_fmt);
    const uint64_t orow = (uint64_t)s->w * s->in_c * fmt_bytes(s->out_fmt);
    /* the sliding pass along x reads texels; h_vec 64-bit words */
    const VkDeviceSize align = use_ring(g, s, 0) && g->tex_align > 8 ? g->tex_align : 8;
    for (uint64_t y0 = band; y0 < (uint64_t)s->h; y0 += band) {
        /* over its input (blur_in_place), the x pass starts after the rows the band before made */
        const uint64_t xa = y0 + (uint64_t)rad < (uint64_t)s->h ? y0 + (uint64_t)rad : (uint64_t)s->h;
        if ((s->in + (y0 - (uint64_t)rad) * row) % align || (s->out == s->in && (s->in + xa * row) % align) ||
            (s->out + y0 * orow) % 8)
            return 0;
    }
    return (int)band;
}

/* The vec passes' settings (record_vec): their environment overrides read once */
typedef struct vec_cfg {
    uint32_t nb, nbv, vw, m;
    uint64_t irow; /* bytes of an intermediate row */
    int band;      /* output rows a band (vec_band_rows), 0: one band */
} vec_cfg;

static vec_cfg vec_plan(const vki_gpu *g, const vki_step *s, int rad)
{
    vec_cfg v = { .nb = (uint32_t)vki_env_long("VKIMG_BLUR_VEC_NB", 8, 4, 32) / 4 * 4,
                  .nbv = (uint32_t)vki_env_long("VKIMG_BLUR_VEC_NBV", 8, 1, 32),
                  .vw = (uint32_t)vki_env_long("VKIMG_BLUR_VEC_VW", 4, 2, 16) / 2 * 2,
                  .m = (uint32_t)vki_env_long("VKIMG_BLUR_RING_M", 8, 1, 64) };
    v.irow = ((uint64_t)s->w + 3) / 4 * 4 * (uint64_t)s->in_c * fmt_bytes(blur_inter_fmt(s));
    const uint64_t unit = use_ring(g, s, 1) ? (uint64_t)v.m * (2u * (uint64_t)rad + 1u) : v.nbv;
    v.band = vec_band_rows(g, s, rad, unit, v.irow);
    return v;
}

/* In bands of rows: x over a band's rows and the rad rows each side of it into the intermediate, then y
 * from there into the band's rows of the output. Written over its input (s->out == s->in: blur_in_place),
 * a band's first input rows are the last band's output by then: its intermediate rows from there on to
 * the last band's last (2 rad rows) are copied from the end of the intermediate to its start instead,
 * and the x pass reads the input from the row after them on. */
static int record_vec(vki_rec *r, const vki_step *s, const blur_push *w, int rad)
{
    const vec_cfg v = vec_plan(r->gpu, s, rad);
    const uint64_t c = (uint64_t)s->in_c, wd = (uint64_t)s->w, ht = (uint64_t)s->h;
    const uint64_t th = v.band ? (uint64_t)v.band + 2u * (uint64_t)rad : ht;
    const bool over = s->out == s->in;
    VkDeviceAddress tmp;
    int rc = vki_rec_scratch(r, v.irow * (th < ht ? th : ht), "blur intermediate", &tmp);
    int pya = 0, pyb = 0; /* the last band's intermediate rows */
    for (int y0 = 0; !rc && y0 < s->h; y0 += v.band ? v.band : s->h) {
        const int y1 = v.band && y0 + v.band < s->h ? y0 + v.band : s->h;
        const int ya = y0 > rad ? y0 - rad : 0, yb = y1 < s->h - rad ? y1 + rad : s->h;
        int xa = ya; /* the first row the x pass makes */
        if (over && y0 > 0) {
            rc = vki_rec_copy(r, tmp + (VkDeviceAddress)(ya - pya) * v.irow, tmp, (VkDeviceSize)(pyb - ya) * v.irow,
                              "blur intermediate rows");
            xa = pyb;
        }
        if (!rc && yb > xa) {
            vki_step bs = *s;
            bs.h = yb - xa;
            bs.in = s->in + (VkDeviceAddress)xa * wd * c * fmt_bytes(s->in_fmt);
            blur_push pc = *w;
            pc.h = bs.h;
            rc = vec_x(r, &bs, &pc, rad, tmp + (VkDeviceAddress)(xa - ya) * v.irow, v.m, v.nb);
        }
        if (!rc)
            rc = vec_y(r, s, w, rad, tmp, ya, yb, y0, y1, v.m, v.nbv, v.vw);
        pya = ya;
        pyb = yb;
    }
    return rc;
}

/* ---- fused: a TX x TY output tile; the shared memory holds the input tile
 * ((TY+2r) rows of odd pitch >= TX+2r, packed words) and the row results
 * ((TY+2r) x TX floats per channel). Default: TX = BLUR_TX, row items of
 * BLUR_NBH outputs, column items of BLUR_NB, the largest TY <= 128 that
 * fits, and a workgroup of vki_wg_1d invocations (TX on CPU devices). For
 * experiments on a device (docs/performance.md), environment variables
 * override them: VKIMG_BLUR_TX (32|64), VKIMG_BLUR_TY (the largest TY
 * tried), VKIMG_BLUR_NBH, VKIMG_BLUR_NBV (1..32, TX and TY multiples of them)
 * and VKIMG_BLUR_WG (workgroup size). */
typedef struct fused_plan {
    uint32_t tx, ty, nbh, nbv, wg;
    blur_shared mem;
} fused_plan;

static uint32_t env_u32(const char *name, uint32_t def, uint32_t lo, uint32_t hi)
{
    return (uint32_t)vki_env_long(name, def, lo, hi);
}

static bool plan_fused(const vki_gpu *g, const vki_step *s, int rad, fused_plan *fp)
{
    const uint32_t words = shared_words(g), c = (uint32_t)s->in_c, wpt = words_per_texel(s->in_fmt, s->in_c);
    const uint32_t tx = env_u32("VKIMG_BLUR_TX", BLUR_TX, 32, 64) == 64 ? 64 : 32;
    const uint32_t nbh = env_u32("VKIMG_BLUR_NBH", BLUR_NBH, 1, 32), nbv = env_u32("VKIMG_BLUR_NBV", BLUR_NB, 1, 32);
    /* CPU devices (lavapipe) run a workgroup as a loop on one core, switching
     * between all its SIMD groups at every barrier: the smallest workgroup the
     * tile allows is fastest there (5120x2880 RGB8 sigma 3: 551 ms with 256
     * invocations, 378 with 32). GPUs: vki_wg_1d. */
    const uint32_t wg_def = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? tx : vki_wg_1d(g);
    const uint32_t wg = env_u32("VKIMG_BLUR_WG", wg_def, 32, vki_wg_1d(g));
    if (rad > BLUR_RMAX || wg < tx || tx % nbh)
        return false;
    for (uint32_t ty = env_u32("VKIMG_BLUR_TY", 128, 8, 128); ty >= nbv && ty >= 8; ty /= 2) {
        uint64_t th = ty + 2ull * rad, pitch = odd(tx + 2u * (uint32_t)rad);
        if (ty % nbv == 0 && wpt * th * pitch + c * th * tx <= words) {
            *fp = (fused_plan){ .tx = tx, .ty = ty, .nbh = nbh, .nbv = nbv, .wg = wg };
            shared_add(&fp->mem, wpt, th * pitch);
            shared_add(&fp->mem, c, th * tx);
            return true;
        }
    }
    return false;
}

static int blur_fused(vki_rec *r, const vki_step *s, const blur_push *w, int rad, const fused_plan *fp)
{
    bool alpha = blur_alpha(s);
    vki_spec spec = { 0 };
    vki_step_spec(s, &spec, fp->wg, 1, 1);
    vki_spec_named(&spec, "FUSED", 1);
    shared_spec(&spec, fp->mem);
    vki_spec_named(&spec, "PREMUL", alpha);
    vki_spec_named(&spec, "UNPREMUL", alpha);
    vki_spec_named(&spec, "NB", fp->nbv);
    vki_spec_named(&spec, "NBH", fp->nbh);
    vki_spec_named(&spec, "LINES", fp->tx);
    vki_spec_named(&spec, "ALONG", fp->ty);
    vki_spec_named(&spec, "PITCH", odd(fp->tx + 2u * (uint32_t)rad));
    vki_spec_named(&spec, "R", (uint32_t)rad);
    vki_spec_named(&spec, "PACKED", s->in_packed_rgb8_words);
    blur_push pc = *w;
    pc.src = vki_addr_of(s->in);
    pc.dst = vki_addr_of(s->out);
    return vki_rec_dispatch(r, "blur", VKI_SPV(blur), &spec, &pc, sizeof pc,
                            ((uint32_t)s->w + fp->tx - 1) / fp->tx, ((uint32_t)s->h + fp->ty - 1) / fp->ty, 1);
}

/* Scratch format of the separable passes (see the top of the file). */
static vkimg_fmt blur_inter_fmt(const vki_step *s)
{
    bool alpha = blur_alpha(s);
    bool unit = s->in_fmt == VKIMG_U8 || s->in_fmt == VKIMG_U16; /* input in [0, 1] */
    return !alpha && unit && s->out_fmt == VKIMG_U8 ? VKIMG_U16 : VKIMG_F32;
}

/* Fused or separable (both unrolled: r <= BLUR_RMAX), by a rough cost per
 * output pixel in multiply-adds of one channel: the taps computed (fused: the
 * rows of the tile's halo too) against the DRAM bytes, a byte counted as 16
 * multiply-adds (an H100 does ~33e12 FMA lanes/s and copies ~2.9e12 B/s, and
 * kernels reach ~70% of that); each path is bound by the larger. */
static bool blur_pick_fused(const vki_step *s, int rad, uint32_t ty)
{
    const double k = 16.0, c = s->in_c, taps = 2.0 * rad + 1;
    double in = c * fmt_bytes(s->in_fmt), out = c * fmt_bytes(s->out_fmt);
    double fused = fmax(c * taps * (1.0 + (ty + 2.0 * rad) / ty), k * (in + out));
    double sep = fmax(c * taps * 2.0, k * (in + out + 2.0 * c * fmt_bytes(blur_inter_fmt(s))));
    return fused <= sep;
}

/* ---- method=box: BOX_N box filters per axis whose variances add up to
 * sigma^2 as closely as odd widths allow (Kovesi, "Fast almost-Gaussian
 * filtering", 2010): m boxes of width wl, then BOX_N - m of wl + 2. Each is one
 * running-sum pass (blur.comp, FUSED = 2) through f32 scratch images. */
#define BOX_N 3
/* Below it method=box runs the exact kernel: radius <= 9 costs little, and
 * three boxes of radius 0..2 are far from a Gaussian (step response off by 15
 * of 255 at sigma 1, 2.5 at sigma 3: tests/ops/test_blur.c). */
#define BOX_MIN_SIGMA 3.0

static void box_radii(double sigma, int rad[BOX_N])
{
    double v = 12.0 * sigma * sigma, wi = sqrt(v / BOX_N + 1.0);
    int wl = (int)floor(wi);
    if (wl % 2 == 0)
        wl--;
    long m = lround((v - BOX_N * (double)wl * wl - 4.0 * BOX_N * wl - 3.0 * BOX_N) / (-4.0 * wl - 4.0));
    m = m < 0 ? 0 : m > BOX_N ? BOX_N : m;
    for (int i = 0; i < BOX_N; i++)
        rad[i] = ((i < m ? wl : wl + 2) - 1) / 2;
}

static float int_bits(int32_t v)
{
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}

/* One box pass along y of a w-wide f32 image (blur.comp, FUSED = 2): rows
 * [in_lo, in_lo + in_n) of src to rows [out_lo, out_lo + out_n) of dst. */
static int box_pass(vki_rec *r, const vki_step *s, const blur_push *w, VkDeviceAddress src, VkDeviceAddress dst,
                    vkimg_fmt dst_fmt, int width, int rad, const int dom[4], bool last)
{
    const uint32_t wg = vki_wg_1d(r->gpu);
    const bool alpha = VKI_HAS_ALPHA(s->in_c);
    vki_step ps = *s;
    ps.in_fmt = VKIMG_F32;
    ps.out_fmt = dst_fmt;
    ps.out_c = s->in_c;
    /* a chunk of >= r outputs per invocation: the first window costs <= 2
     * reads per output; powers of two keep the pipeline variants few */
    uint32_t chunk = 64;
    while (chunk < (uint32_t)rad)
        chunk *= 2;
    vki_spec spec = { 0 };
    vki_step_spec(&ps, &spec, wg, 1, 1);
    vki_spec_named(&spec, "FUSED", 2);
    vki_spec_named(&spec, "CHUNK", chunk);
    vki_spec_named(&spec, "UNPREMUL", alpha && last);
    blur_push pc = *w;
    pc.src = vki_addr_of(src);
    pc.dst = vki_addr_of(dst);
    pc.w = width;
    pc.h = 0; /* unused */
    pc.r = rad;
    for (int k = 0; k < 4; k++)
        pc.wk[k] = int_bits(dom[k]);
    uint64_t items = (uint64_t)width * (((uint64_t)dom[3] + chunk - 1) / chunk);
    return vki_rec_dispatch_1d(r, "blur-box", VKI_SPV(blur), &spec, &pc, sizeof pc, (items + wg - 1) / wg);
}

/* dst (h x w, f32) = the transpose of src (w x h), normalized, premultiplied
 * when premul (blur.comp, FUSED = 3). */
static int box_transpose(vki_rec *r, const vki_step *s, const blur_push *w, VkDeviceAddress src, vkimg_fmt src_fmt,
                         bool packed, VkDeviceAddress dst, int width, int height, bool premul)
{
    vki_step ps = *s;
    ps.in_fmt = src_fmt;
    ps.out_fmt = VKIMG_F32;
    ps.out_c = s->in_c;
    vki_spec spec = { 0 };
    vki_step_spec(&ps, &spec, vki_wg_1d(r->gpu), 1, 1);
    vki_spec_named(&spec, "FUSED", 3);
    vki_spec_named(&spec, "PREMUL", premul);
    vki_spec_named(&spec, "PACKED", packed);
    vki_spec_named(&spec, "T4", 32 * 33);
    blur_push pc = *w;
    pc.src = vki_addr_of(src);
    pc.dst = vki_addr_of(dst);
    pc.w = width;
    pc.h = height;
    return vki_rec_dispatch(r, "blur-transpose", VKI_SPV(blur), &spec, &pc, sizeof pc,
                            ((uint32_t)width + 31) / 32, ((uint32_t)height + 31) / 32, 1);
}

/* BOX_N passes per axis, each along y (blur.comp explains why): transpose,
 * the passes along x, transpose back, the passes along y. A pass's output
 * covers the image extended by the radii of the passes after it on the same
 * axis (their windows reach that far), so only the first pass of an axis
 * clamps: the result is the clamped image convolved with the composite kernel. */
static int record_box(vki_rec *r, const vki_step *s, const blur_push *w)
{
    int rad[BOX_N];
    box_radii(s->args->v[O_SIGMA], rad);
    int ext[BOX_N]; /* ext[k]: radii of the passes after pass k */
    for (int k = BOX_N - 1, e = 0; k >= 0; e += rad[k--])
        ext[k] = e;
    const uint64_t c = (uint64_t)s->in_c, wx = (uint64_t)s->w + 2u * (uint64_t)ext[0],
                   hy = (uint64_t)s->h + 2u * (uint64_t)ext[0];
    const uint64_t npx = wx * (uint64_t)s->h > hy * (uint64_t)s->w ? wx * (uint64_t)s->h : hy * (uint64_t)s->w;
    const bool alpha = VKI_HAS_ALPHA(s->in_c);
    VkDeviceAddress t[2];
    int rc = vki_rec_scratch(r, npx * c * sizeof(float), "blur intermediate", &t[0]);
    if (!rc)
        rc = vki_rec_scratch(r, npx * c * sizeof(float), "blur intermediate", &t[1]);
    if (!rc)
        rc = box_transpose(r, s, w, s->in, s->in_fmt, s->in_packed_rgb8_words, t[0], s->w, s->h, alpha);
    int cur = 0; /* t[cur] holds the latest result */
    for (int axis = 0; axis < 2 && !rc; axis++) {
        const int n = axis == 0 ? s->w : s->h, width = axis == 0 ? s->h : s->w;
        int dom[4] = { 0, n, 0, 0 };
        for (int k = 0; k < BOX_N && !rc; k++) {
            const bool last = axis == 1 && k == BOX_N - 1;
            dom[2] = -ext[k];
            dom[3] = n + 2 * ext[k];
            rc = box_pass(r, s, w, t[cur], last ? s->out : t[1 - cur], last ? s->out_fmt : VKIMG_F32,
                          width, rad[k], dom, last);
            cur = 1 - cur;
            dom[0] = dom[2];
            dom[1] = dom[3];
        }
        if (axis == 0 && !rc) { /* back to w x h */
            rc = box_transpose(r, s, w, t[cur], VKIMG_F32, false, t[1 - cur], s->h, s->w, false);
            cur = 1 - cur;
        }
    }
    return rc;
}

/* Whether blur may write its output over its input on g (vki_op_desc.in_place): where it takes the vec
 * passes (CPU devices, 8-bit output) in bands of at least 3 rad rows (the rows record_vec copies within
 * the intermediate do not overlap) whose x passes start at offsets the texel source takes, the input
 * and output of one format. VKIMG_BLUR_IN_PLACE=0: never. */
static bool blur_in_place(const vki_gpu *g, const vki_step *s)
{
    const char *ev = getenv("VKIMG_BLUR_IN_PLACE");
    const int rad = (int)s->args->v[O_RADIUS];
    if ((ev && *ev == '0') || (s->args->v[O_METHOD] == METHOD_BOX && s->args->v[O_SIGMA] >= BOX_MIN_SIGMA) ||
        !use_lines(g, rad) || !use_vec(g, s) || s->in_fmt != s->out_fmt || s->in_c != s->out_c || s->out != s->in)
        return false;
    const vec_cfg v = vec_plan(g, s, rad); /* (its bands' starts checked for s->out == s->in) */
    return v.band && v.band >= 3 * rad;
}

static int record_blur(vki_rec *r, const vki_step *s)
{
    const vki_gpu *g = r->gpu;
    double sigma = s->args->v[O_SIGMA];
    int rad = (int)s->args->v[O_RADIUS];
    blur_push pc;
    memset(&pc, 0, sizeof pc);
    pc.w = s->w;
    pc.h = s->h;
    pc.r = rad;
    double *w = malloc((2 * (size_t)rad + 1) * sizeof *w);
    if (!w)
        return vki_fail(r->e, VKIMG_E_RUNTIME, "blur: out of memory");
    double sum = 0;
    for (int i = -rad; i <= rad; i++)
        sum += w[i + rad] = exp(-0.5 * (i / sigma) * (i / sigma)) /* no 0/0 for a tiny sigma: the limit, a copy */;
    for (int i = 0; i <= rad && i <= BLUR_RMAX; i++) /* unrolled kernels: w_0..w_r in push constants */
        pc.wk[i] = (float)(w[rad + i] / sum);
    if (s->args->v[O_METHOD] == METHOD_BOX && sigma >= BOX_MIN_SIGMA) {
        free(w);
        return record_box(r, s, &pc);
    }

    if (use_lines(g, rad)) {
        free(w);
        if (use_vec(g, s))
            return record_vec(r, s, &pc, rad);
        VkDeviceAddress tmp;
        vkimg_fmt inter = blur_inter_fmt(s);
        const VkDeviceSize texel = lines_pad16(s) ? 8 : (VkDeviceSize)s->in_c * fmt_bytes(inter);
        int lrc = vki_rec_scratch(r, (VkDeviceSize)s->w * s->h * texel, "blur intermediate", &tmp);
        if (!lrc)
            lrc = lines_pass(r, s, 0, s->in, s->in_fmt, tmp, inter, &pc, rad);
        if (!lrc)
            lrc = lines_pass(r, s, 1, tmp, inter, s->out, s->out_fmt, &pc, rad);
        return lrc;
    }
    fused_plan fp;
    bool fits = !vki_env_on("VKIMG_BLUR_SEPARABLE") && plan_fused(g, s, rad, &fp);
    int rc = 0;
    if (fits && (vki_env_on("VKIMG_BLUR_FUSED") || blur_pick_fused(s, rad, fp.ty))) {
        free(w);
        return blur_fused(r, s, &pc, rad, &fp);
    }
    vkimg_fmt inter = blur_inter_fmt(s);
    blur_pass_plan ph, pv;
    if (plan_pass(g, 0, s->in_fmt, s->in_c, rad, &ph) || plan_pass(g, 1, inter, s->in_c, rad, &pv))
        rc = vki_fail(r->e, VKIMG_E_RUNTIME, "blur: device shared memory (%u bytes) too small", g->lim.max_shared);
    if (!rc && (!ph.unrolled || !pv.unrolled)) {
        /* the loop kernels read the 2r+1 taps from a buffer, zero-padded to a
         * multiple of NB (the same for both passes: it depends on the device) */
        size_t nb = !ph.unrolled ? ph.nb : pv.nb, n = (2 * (size_t)rad + nb) / nb * nb;
        float *wf = calloc(n, sizeof *wf);
        if (!wf)
            rc = vki_fail(r->e, VKIMG_E_RUNTIME, "blur: out of memory");
        for (int i = 0; !rc && i <= 2 * rad; i++)
            wf[i] = (float)(w[i] / sum);
        VkDeviceAddress wts = 0;
        if (!rc)
            rc = vki_rec_const(r, wf, n * sizeof *wf, "blur weights", &wts);
        free(wf);
        pc.wts = vki_addr_of(wts);
    }
    free(w);
    VkDeviceAddress tmp;
    if (!rc)
        rc = vki_rec_scratch(r, (VkDeviceSize)s->w * s->h * s->in_c * fmt_bytes(inter), "blur intermediate", &tmp);
    if (!rc)
        rc = blur_pass(r, s, 0, &ph, s->in, s->in_fmt, tmp, inter, &pc, rad);
    if (!rc)
        rc = blur_pass(r, s, 1, &pv, tmp, inter, s->out, s->out_fmt, &pc, rad);
    return rc;
}

const vki_op_desc vki_op_blur = {
    .name = "blur",
    .help = "Gaussian blur (separable, shared-memory tiles, clamp-to-edge; alpha-aware).",
    .opts = blur_opts,
    .nopts = (int)(sizeof blur_opts / sizeof blur_opts[0]),
    .check = blur_check,
    .in_place = blur_in_place,
    .unit_out = true,
    .u16_in = true,
    .opaque_fast = true,
    .record = record_blur,
};
