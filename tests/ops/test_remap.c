/* The exact moves of the remap kernel -- flip, flop, transpose, transverse,
 * rotate=90|180|270 (every spelling of those angles), orient=1..8 and the input's
 * EXIF orientation (vkimg_run_opts.orientation) -- and chains of them, on the
 * device against their references (remap_ref.h): byte-identical outputs on
 * 1x1, 1xN, Nx1, primes, sizes around and above the 32x32 tile, 1-4 channels,
 * u8/u16/f32 (F32 inputs with -0, infinities, subnormals and values outside
 * [0, 1]), and every output format. Crops: test_crop.c. */
#include "gpu_harness.h"
#include "remap_ref.h"
#include "ref.h"
#include "remap_util.h"
#include "t.h"

#include <stdio.h>
#include <string.h>

static const size2 sizes[] = {
    { 1, 1 },   { 1, 7 },    { 7, 1 },    { 1, 67 },   { 67, 1 },   { 2, 2 },    { 3, 5 },    { 17, 13 },
    { 31, 33 }, { 32, 32 },  { 33, 32 },  { 64, 31 },  { 131, 67 }, { 257, 129 }, { 600, 530 },
};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static uint64_t seed = 1;

/* Every channel count on the small sizes, one (rotating) on the large ones. */
static int chans(int i, int c) { return sizes[i].w * sizes[i].h <= 40000 || c == 1 + i % 4; }

/* The move k of `in`, run as `text`, in out_fmt. */
static void move_case(vkimg_ctx *ctx, const char *group, const char *text, mv_kind k, const vkimg_image *in,
                      vkimg_fmt out_fmt)
{
    rm_map m = mv_move(k, in->w, in->h);
    rm_check(ctx, group, text, &m, in, out_fmt, NULL);
    rm_map_free(&m);
}

static void test_moves(vkimg_ctx *ctx)
{
    int rf = mv_self_check();
    CHECK(rf == 0, "remap reference self-check: %d failures", rf);
    /* every move, size and channel count, u8 */
    for (int i = 0; i < NSIZES; i++)
        for (int c = 1; c <= 4; c++) {
            if (!chans(i, c))
                continue;
            vkimg_image in = rm_image(sizes[i].w, sizes[i].h, c, VKIMG_U8, seed++);
            for (int k = MV_FLIP; k < MV_NKINDS; k++)
                move_case(ctx, "moves", mv_names[k], (mv_kind)k, &in, VKIMG_U8);
            ref_image_free(&in);
        }
    /* u16 and f32 (special values) in and out */
    static const size2 fsizes[] = { { 1, 1 }, { 3, 5 }, { 17, 13 }, { 33, 32 }, { 131, 67 } };
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof fsizes / sizeof fsizes[0]; i++)
            for (int c = 1; c <= 4; c++) {
                vkimg_fmt fmt = f ? VKIMG_F32 : VKIMG_U16;
                vkimg_image in = rm_image(fsizes[i].w, fsizes[i].h, c, fmt, seed++);
                for (int k = MV_FLIP; k < MV_NKINDS; k++)
                    move_case(ctx, "moves", mv_names[k], (mv_kind)k, &in, fmt);
                ref_image_free(&in);
            }
    /* every conversion on the way: the values of `copy`, moved */
    static const vkimg_fmt all[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            if (a == b)
                continue;
            for (int c = 1; c <= 4; c++) {
                vkimg_image in = rm_image(c == 4 ? 67 : 17, c == 4 ? 35 : 13, c, all[a], seed++);
                move_case(ctx, "moves", mv_names[MV_ROT90], MV_ROT90, &in, all[b]);
                move_case(ctx, "moves", mv_names[MV_TRANSVERSE], MV_TRANSVERSE, &in, all[b]);
                move_case(ctx, "moves", mv_names[MV_FLIP], MV_FLIP, &in, all[b]);
                ref_image_free(&in);
            }
        }
    /* full HD, RGB and RGBA */
    for (int c = 3; c <= 4; c++) {
        vkimg_image in = rm_image(1920, 1080, c, VKIMG_U8, seed++);
        move_case(ctx, "moves", "transpose", MV_TRANSPOSE, &in, VKIMG_U8);
        move_case(ctx, "moves", "rotate=270", MV_ROT270, &in, VKIMG_U8);
        ref_image_free(&in);
    }
    rm_print_stats();
}

/* rotate by a multiple of 90 degrees, however it is spelled: an exact move, the
 * channels kept whatever the background */
static void test_rotate90(vkimg_ctx *ctx)
{
    static const struct { const char *text; mv_kind k; } rot[] = {
        { "rotate", MV_ROT90 },                 /* the default angle is 90 */
        { "rotate=90", MV_ROT90 },              { "rotate=angle=90", MV_ROT90 },
        { "rotate=-270", MV_ROT90 },            { "rotate=450", MV_ROT90 },
        { "rotate=90.0", MV_ROT90 },            { "rotate=9e1", MV_ROT90 },
        { "rotate=180", MV_ROT180 },            { "rotate=-180", MV_ROT180 },
        { "rotate=540", MV_ROT180 },            { "rotate=270", MV_ROT270 },
        { "rotate=-90", MV_ROT270 },            { "rotate=35910", MV_ROT270 }, /* 99 * 360 + 270 */
        { "rotate=0", MV_IDENTITY },            { "rotate=-0", MV_IDENTITY },
        { "rotate=360", MV_IDENTITY },          { "rotate=-360", MV_IDENTITY },
        { "rotate=36000", MV_IDENTITY },        { "rotate=-36000", MV_IDENTITY },
        { "rotate=90:background=transparent", MV_ROT90 },
        { "rotate=270:80ff0080", MV_ROT270 },   { "rotate=-180:background=none", MV_ROT180 },
        /* an angle a hair below 0 wraps to 360.0 in double: the identity too, not a
         * read past the table of the four quarter turns (UBSan: index 4) */
        { "rotate=-1e-14", MV_IDENTITY },       { "rotate=-1e-300:transparent", MV_IDENTITY },
    };
    static const size2 rs[] = { { 1, 1 }, { 3, 5 }, { 40, 33 } };
    for (size_t i = 0; i < sizeof rot / sizeof rot[0]; i++)
        for (size_t s = 0; s < sizeof rs / sizeof rs[0]; s++)
            for (int c = 1; c <= 4; c++) {
                vkimg_image in = rm_image(rs[s].w, rs[s].h, c, c == 2 ? VKIMG_F32 : VKIMG_U8, seed++);
                move_case(ctx, "rotate 90s", rot[i].text, rot[i].k, &in, in.fmt);
                ref_image_free(&in);
            }
    rm_print_stats();
}

/* orient=N against the EXIF definition; the same moves through the input's
 * orientation (what loading a tagged file does), alone and before a pipeline */
static void test_orient(vkimg_ctx *ctx)
{
    for (int i = 0; i < NSIZES; i++)
        for (int c = 1; c <= 4; c++) {
            if (!chans(i, c) || (sizes[i].w * sizes[i].h > 100000 && c != 1 + i % 4))
                continue;
            vkimg_image in = rm_image(sizes[i].w, sizes[i].h, c, i % 3 == 2 ? VKIMG_U16 : VKIMG_U8, seed++);
            for (int o = 1; o <= 8; o++) {
                char t[32];
                snprintf(t, sizeof t, o % 2 ? "orient=%d" : "orient=orientation=%d", o);
                rm_map m = mv_orientation(o, in.w, in.h);
                rm_check(ctx, "orient", t, &m, &in, in.fmt, NULL);
                rm_map_free(&m);
            }
            ref_image_free(&in);
        }
    /* the default is 1: as stored */
    {
        vkimg_image in = rm_image(33, 17, 3, VKIMG_F32, seed++);
        rm_map m = mv_orientation(1, 33, 17);
        rm_check(ctx, "orient", "orient", &m, &in, VKIMG_F32, NULL);
        rm_map_free(&m);
        ref_image_free(&in);
    }
    /* vkimg_run_opts.orientation: the move before the pipeline (0 is 1) */
    for (int o = 0; o <= 8; o++)
        for (int c = 1; c <= 4; c++) {
            vkimg_image in = rm_image(37, 70, c, c == 3 ? VKIMG_U16 : VKIMG_U8, seed++);
            vkimg_run_opts ro;
            memset(&ro, 0, sizeof ro);
            ro.orientation = o;
            rm_map m = mv_orientation(o ? o : 1, in.w, in.h);
            rm_check(ctx, "input orientation", "copy", &m, &in, in.fmt, &ro);
            /* the pipeline sees the upright image: a crop of its top-left 20x9 */
            rm_map cr = mv_crop(m.w, m.h, 0, 0, 20, 9), both = rm_then(&m, &cr);
            rm_check(ctx, "input orientation", "crop=20x9", &both, &in, in.fmt, &ro);
            rm_map_free(&cr);
            rm_map_free(&both);
            /* and orient=inverse after it gives the stored image back */
            char t[32];
            snprintf(t, sizeof t, "orient=%d", mv_orientation_inverse(o ? o : 1));
            rm_map id = mv_move(MV_IDENTITY, in.w, in.h);
            rm_check(ctx, "input orientation", t, &id, &in, VKIMG_F32, &ro);
            rm_map_free(&id);
            rm_map_free(&m);
            ref_image_free(&in);
        }
    /* orientations outside 1..8 are refused; 64 ops leave no room for the orient op */
    {
        vkimg_image in = rm_image(5, 3, 3, VKIMG_U8, seed++);
        vkimg_run_opts ro;
        memset(&ro, 0, sizeof ro);
        ro.orientation = 9;
        rm_check_fails(ctx, "copy", &in, &ro, VKIMG_E_USAGE,
                       "vkimg_run: orientation 9 is not an EXIF orientation (1..8)");
        ro.orientation = -1;
        rm_check_fails(ctx, "copy", &in, &ro, VKIMG_E_USAGE,
                       "vkimg_run: orientation -1 is not an EXIF orientation (1..8)");
        char many[64 * 5 + 1] = "";
        for (int i = 0; i < 64; i++)
            strcat(many, i ? ",flop" : "flop");
        ro.orientation = 6;
        rm_check_fails(ctx, many, &in, &ro, VKIMG_E_USAGE,
                       "the pipeline has 64 ops: the orientation of the input needs one more (at most 64)");
        ro.orientation = 1; /* nothing to add */
        rm_map m = mv_move(MV_IDENTITY, 5, 3);
        rm_check(ctx, "input orientation", many, &m, &in, VKIMG_U8, &ro);
        rm_map_free(&m);
        ref_image_free(&in);
    }
    rm_print_stats();
}

/* chains: each op's output is the next one's input (f32 in between) */
static void test_chains(vkimg_ctx *ctx)
{
    static const struct { const char *text; int n; mv_kind k[4]; } chains[] = {
        { "transpose,transpose", 2, { MV_TRANSPOSE, MV_TRANSPOSE } },
        { "transverse,transverse", 2, { MV_TRANSVERSE, MV_TRANSVERSE } },
        { "flip,flop", 2, { MV_FLIP, MV_FLOP } },
        { "transpose,flop", 2, { MV_TRANSPOSE, MV_FLOP } },
        { "rotate=90,rotate=90,rotate=90,rotate=90", 4, { MV_ROT90, MV_ROT90, MV_ROT90, MV_ROT90 } },
        { "rotate=270,transverse,flip", 3, { MV_ROT270, MV_TRANSVERSE, MV_FLIP } },
        { "copy,transpose,copy", 3, { MV_IDENTITY, MV_TRANSPOSE, MV_IDENTITY } },
        { "rotate=-90,orient=1,rotate=180", 3, { MV_ROT270, MV_IDENTITY, MV_ROT180 } },
    };
    static const size2 cs[] = { { 1, 1 }, { 1, 9 }, { 5, 3 }, { 33, 65 }, { 131, 67 } };
    for (size_t i = 0; i < sizeof chains / sizeof chains[0]; i++)
        for (size_t s = 0; s < sizeof cs / sizeof cs[0]; s++)
            for (int c = 1; c <= 4; c++) {
                static const vkimg_fmt f3[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
                vkimg_fmt fmt = f3[(i + s + (size_t)c) % 3];
                vkimg_image in = rm_image(cs[s].w, cs[s].h, c, fmt, seed++);
                rm_map m = mv_move(MV_IDENTITY, in.w, in.h);
                for (int k = 0; k < chains[i].n; k++) {
                    rm_map step = mv_move(chains[i].k[k], m.w, m.h), t = rm_then(&m, &step);
                    rm_map_free(&m);
                    rm_map_free(&step);
                    m = t;
                }
                rm_check(ctx, "chains", chains[i].text, &m, &in, fmt, NULL);
                rm_map_free(&m);
                ref_image_free(&in);
            }
    /* orient=k then its inverse is the identity; the identities are identities */
    for (int o = 1; o <= 8; o++) {
        vkimg_image in = rm_image(45, 38, 1 + o % 4, o % 2 ? VKIMG_U8 : VKIMG_F32, seed++);
        char t[48];
        snprintf(t, sizeof t, "orient=%d,orient=%d", o, mv_orientation_inverse(o));
        rm_map id = mv_move(MV_IDENTITY, in.w, in.h);
        rm_check(ctx, "chains", t, &id, &in, in.fmt, NULL);
        rm_map_free(&id);
        ref_image_free(&in);
    }
    /* 64 ops: 32 transposes and 32 flips, the identity */
    {
        char many[64 * 10 + 1] = "";
        for (int i = 0; i < 64; i++)
            strcat(many, i == 0 ? "transpose" : i % 2 ? ",flip" : ",transpose");
        vkimg_image in = rm_image(70, 41, 4, VKIMG_U16, seed++);
        rm_map m = mv_move(MV_IDENTITY, in.w, in.h);
        for (int i = 0; i < 64; i++) {
            rm_map step = mv_move(i % 2 ? MV_FLIP : MV_TRANSPOSE, m.w, m.h), t = rm_then(&m, &step);
            rm_map_free(&m);
            rm_map_free(&step);
            m = t;
        }
        rm_check(ctx, "chains", many, &m, &in, VKIMG_U16, NULL);
        rm_map_free(&m);
        ref_image_free(&in);
    }
    rm_print_stats();
}

/* The two shapes of the kernel (remap.c use_lines): the tiles (GPUs) and the
 * lines (CPU devices: a move that keeps format and channels moves bytes, a
 * block of the output an invocation, the rest one pixel an invocation), each
 * forced on this device (VKIMG_REMAP_LINES=0 / 1) on every move, 1-16 bytes a
 * pixel (u8, u16, f32 x 1-4 channels), sizes below, around and above the blocks
 * (8-64 pixels; rows of whole 64-bit words or not). Which dispatches ran is read
 * from the library's log. */
static void test_shapes(vkimg_ctx *ctx)
{
    static const size2 ss[] = { { 1, 1 },   { 5, 3 },   { 8, 8 },    { 9, 17 },
                                { 64, 64 }, { 65, 33 }, { 131, 67 }, { 256, 3 } };
    static const vkimg_fmt fmts[3] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
    for (int lines = 0; lines < 2; lines++) {
        setenv("VKIMG_REMAP_LINES", lines ? "1" : "0", 1);
        for (size_t i = 0; i < sizeof ss / sizeof ss[0]; i++)
            for (int f = 0; f < 3; f++)
                for (int c = 1; c <= 4; c++) {
                    vkimg_image in = rm_image(ss[i].w, ss[i].h, c, fmts[f], seed++);
                    for (int k = MV_FLIP; k < MV_NKINDS; k++) {
                        gh_dispatches_start();
                        move_case(ctx, "shapes", mv_names[k], (mv_kind)k, &in, fmts[f]);
                        gh_dispatches_stop();
                        char op[32]; /* the tiles' dispatch is named after the op */
                        snprintf(op, sizeof op, "%.*s", (int)strcspn(mv_names[k], "="), mv_names[k]);
                        const int shape_ran[3] = { gh_dispatched(op), gh_dispatched("remap-lines"),
                                                   gh_dispatched("remap-lines-edge") };
                        /* blocks are at most 64 x 8 output pixels, their sides multiples of 4 (of 8
                         * along the output's rows): 64 x 64 and larger have whole blocks inside, and
                         * sides that are both not multiples of 8 leave pixels outside them */
                        const bool block = ss[i].w >= 64 && ss[i].h >= 64, edge = ss[i].w % 8 && ss[i].h % 8;
                        CHECK(lines ? shape_ran[0] == 0 && (shape_ran[1] > 0 || !block) &&
                                          (shape_ran[2] > 0 || !edge) && shape_ran[1] + shape_ran[2] > 0
                                    : shape_ran[0] > 0 && shape_ran[1] + shape_ran[2] == 0,
                              "%s %dx%d c=%d %s, VKIMG_REMAP_LINES=%d: ran tiles %d, lines %d, their edges %d",
                              mv_names[k], ss[i].w, ss[i].h, c, vkimg_fmt_name(fmts[f]), lines, shape_ran[0],
                              shape_ran[1], shape_ran[2]);
                    }
                    ref_image_free(&in);
                }
        /* a move that changes the format takes the tiles whatever the setting */
        vkimg_image in = rm_image(65, 33, 3, VKIMG_U8, seed++);
        gh_dispatches_start();
        move_case(ctx, "shapes", "transpose", MV_TRANSPOSE, &in, VKIMG_F32);
        gh_dispatches_stop();
        CHECK(gh_dispatched("transpose") > 0 && gh_dispatched("remap-lines") + gh_dispatched("remap-lines-edge") == 0,
              "u8 -> f32 transpose: ran tiles %d, lines %d + %d", gh_dispatched("transpose"),
              gh_dispatched("remap-lines"), gh_dispatched("remap-lines-edge"));
        ref_image_free(&in);
    }
    unsetenv("VKIMG_REMAP_LINES");
    rm_print_stats();
}

int main(void)
{
    static const gh_suite suites[] = {
        { "moves", test_moves },
        { "shapes", test_shapes },
        { "rotate90", test_rotate90 },
        { "orient", test_orient },
        { "chains", test_chains },
    };
    return gh_main("test_remap", suites, sizeof suites / sizeof suites[0]);
}
