/* The geometry ops' options: crop (WxH+X+Y, or w, h, gravity, x, y), rotate
 * (angle, background colour), orient, flip/flop/transpose/transverse (no
 * options), levels (black < white, gamma) and the geometry strings of resize and
 * thumbnail. Every error asserts the exact message and caret offset; the
 * canonical text (describe) reads back the same; and the sizes and channels
 * these ops give an input, with crop's error when nothing is left, as the
 * pipeline's shape says them before anything runs. No GPU needed. */
#include "vkimg/vkimg.h"
#include "pipeline/pipeline.h"
#include "../ops/remap_ref.h"
#include "../ops/rotate_ref.h"
#include "t.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static void err_(int line, const char *text, int pos, const char *msg)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    e.pos = -99;
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p == NULL, "line %d: '%s' parsed but should fail with \"%s\"", line, text, msg);
    vkimg_pipeline_free(p);
    if (p)
        return;
    CHECK(e.code == VKIMG_E_USAGE, "line %d: '%s': code %d", line, text, e.code);
    CHECK(!strcmp(e.msg, msg), "line %d: '%s':\n   got  \"%s\"\n   want \"%s\"", line, text, e.msg, msg);
    CHECK(e.pos == pos, "line %d: '%s' (\"%s\"): pos %d, want %d", line, text, e.msg, e.pos, pos);
    CHECK(!strchr(e.msg, '\n'), "line %d: message has a newline", line);
}
#define ERR(text, pos, msg) err_(__LINE__, text, pos, msg)

static vkimg_pipeline *ok_(int line, const char *text)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "line %d: parse '%s' failed: %s (pos %d)", line, text, e.msg, e.pos);
    return p;
}
#define OK(text) ok_(__LINE__, text)

/* describe(text) is want, and parsing it gives the same options and text again */
static void describe_(int line, const char *text, const char *want)
{
    vkimg_pipeline *p = ok_(line, text);
    if (!p)
        return;
    char d1[1024], d2[1024];
    vkimg_pipeline_describe(p, d1, sizeof d1);
    if (want)
        CHECK(!strcmp(d1, want), "line %d: describe '%s' = \"%s\", want \"%s\"", line, text, d1, want);
    vkimg_pipeline *q = ok_(line, d1);
    if (q) {
        vkimg_pipeline_describe(q, d2, sizeof d2);
        CHECK(!strcmp(d1, d2), "line %d: round trip of '%s': '%s' -> '%s'", line, text, d1, d2);
        CHECK(q->n == p->n, "line %d: round trip length", line);
        for (int o = 0; o < p->n && o < q->n; o++)
            for (int k = 0; k < p->ops[o].desc->nopts; k++)
                CHECK(p->ops[o].args.v[k] == q->ops[o].args.v[k], "line %d: '%s' op %d option %d: %.17g, read back "
                      "%.17g", line, text, o, k, p->ops[o].args.v[k], q->ops[o].args.v[k]);
        vkimg_pipeline_free(q);
    }
    vkimg_pipeline_free(p);
}
#define DESCRIBE(text, want) describe_(__LINE__, text, want)

/* The shape of text for a w x h x c input: its output size and channels. */
static void shape_(int line, const char *text, int w, int h, int c, int ow, int oh, int oc)
{
    vkimg_pipeline *p = ok_(line, text);
    if (!p)
        return;
    vki_shape s;
    vkimg_err e;
    memset(&e, 0, sizeof e);
    int rc = vki_pipeline_shape(p, w, h, c, w, h, &s, &e);
    CHECK(rc == 0, "line %d: '%s' on %dx%dx%d: %s", line, text, w, h, c, e.msg);
    if (!rc)
        CHECK(s.w[s.n] == ow && s.h[s.n] == oh && s.c[s.n] == oc && s.nout == 1 && s.out_w[0] == ow &&
                  s.out_h[0] == oh,
              "line %d: '%s' on %dx%dx%d gives %dx%dx%d, want %dx%dx%d", line, text, w, h, c, s.w[s.n], s.h[s.n],
              s.c[s.n], ow, oh, oc);
    CHECK(vkimg_pipeline_out_channels(p, c) == oc, "line %d: '%s': out_channels(%d) = %d, want %d", line, text, c,
          vkimg_pipeline_out_channels(p, c), oc);
    vkimg_pipeline_free(p);
}
#define SHAPE(text, w, h, c, ow, oh, oc) shape_(__LINE__, text, w, h, c, ow, oh, oc)

/* text parses but has no shape for a w x h x c input: msg, through the shape and
 * through the public vkimg_pipeline_outputs (no device needed). */
static void shape_err_(int line, const char *text, int w, int h, int c, const char *msg)
{
    vkimg_pipeline *p = ok_(line, text);
    if (!p)
        return;
    vki_shape s;
    vkimg_err e;
    memset(&e, 0, sizeof e);
    int rc = vki_pipeline_shape(p, w, h, c, w, h, &s, &e);
    CHECK(rc != 0, "line %d: '%s' on %dx%dx%d has a shape (%dx%d), want \"%s\"", line, text, w, h, c, s.w[s.n],
          s.h[s.n], msg);
    if (rc) {
        CHECK(e.code == VKIMG_E_RUNTIME, "line %d: '%s': code %d", line, text, e.code);
        CHECK(!strcmp(e.msg, msg), "line %d: '%s':\n   got  \"%s\"\n   want \"%s\"", line, text, e.msg, msg);
    }
    vkimg_image im;
    memset(&im, 0, sizeof im);
    im.w = w, im.h = h, im.c = c, im.fmt = VKIMG_U8;
    memset(&e, 0, sizeof e);
    CHECK(vkimg_pipeline_outputs(p, &im, NULL, &e) == -1 && !strcmp(e.msg, msg),
          "line %d: '%s': vkimg_pipeline_outputs: \"%s\", want \"%s\"", line, text, e.msg, msg);
    vkimg_pipeline_free(p);
}
#define SHAPE_ERR(text, w, h, c, msg) shape_err_(__LINE__, text, w, h, c, msg)

/* ---------------------------------------------------------------- crop */

#define REG_SYNTAX " (syntax: WxH[+X+Y]|W%[xH%][+X+Y])"
#define NOT_BOTH "crop: give the region as geometry (WxH+X+Y) or as w, h, x, y, not both"
#define GRAVITIES "centre, north, south, east, west, northeast, northwest, southeast, southwest"

static void test_crop(void)
{
    /* the region is required */
    ERR("crop", 0, "crop: missing the region: geometry WxH+X+Y, or w and/or h");
    ERR("gray, crop", 6, "crop: missing the region: geometry WxH+X+Y, or w and/or h");
    ERR("crop=x=3:y=4", 0, "crop: missing the region: geometry WxH+X+Y, or w and/or h");
    ERR("crop=gravity=centre", 0, "crop: missing the region: geometry WxH+X+Y, or w and/or h");
    /* the geometry's syntax */
    ERR("crop=10", 5, "crop: geometry: '10': expected WxH or W%[xH%]" REG_SYNTAX);
    ERR("crop=10x", 5, "crop: geometry: '10x': expected WxH or W%[xH%]" REG_SYNTAX);
    ERR("crop=x10", 5, "crop: geometry: 'x10': expected WxH or W%[xH%]" REG_SYNTAX);
    ERR("crop=-10x10", 5, "crop: geometry: '-10x10': expected WxH or W%[xH%]" REG_SYNTAX);
    ERR("crop=10.5x10", 5, "crop: geometry: '10.5x10': sizes are whole numbers of pixels from 1 to 16777216"
        REG_SYNTAX);
    /* percentages (ImageMagick's: a '%' after either side makes both percentages) */
    ERR("crop=x10%", 5, "crop: geometry: 'x10%': expected WxH or W%[xH%]" REG_SYNTAX);
    ERR("crop=%", 5, "crop: geometry: '%': expected WxH or W%[xH%]" REG_SYNTAX);
    ERR("crop=10%%", 5, "crop: geometry: '10%%': expected the offsets as +X+Y (signs required, integers)"
        REG_SYNTAX);
    ERR("crop=10%x%", 5, "crop: geometry: '10%x%': expected the offsets as +X+Y (signs required, integers)"
        REG_SYNTAX);
    ERR("crop=0%", 5, "crop: geometry: '0%': percentages must be at least 0.000001 and at most 1000000" REG_SYNTAX);
    ERR("crop=50%x1000001%", 5, "crop: geometry: '50%x1000001%': percentages must be at least 0.000001 and at "
        "most 1000000" REG_SYNTAX);
    ERR("crop=50%+1.5+0", 5, "crop: geometry: '50%+1.5+0': expected the offsets as +X+Y (signs required, "
        "integers)" REG_SYNTAX);
    ERR("crop=0x10", 5, "crop: geometry: '0x10': sizes are whole numbers of pixels from 1 to 16777216" REG_SYNTAX);
    ERR("crop=10x0+1+1", 5, "crop: geometry: '10x0+1+1': sizes are whole numbers of pixels from 1 to 16777216"
        REG_SYNTAX);
    ERR("crop=16777217x1", 5, "crop: geometry: '16777217x1': sizes are whole numbers of pixels from 1 to 16777216"
        REG_SYNTAX);
    ERR("crop=10x10+5", 5, "crop: geometry: '10x10+5': expected the offsets as +X+Y (signs required, integers)"
        REG_SYNTAX);
    ERR("crop=10x10+5+5+5", 5, "crop: geometry: '10x10+5+5+5': expected the offsets as +X+Y (signs required, "
        "integers)" REG_SYNTAX);
    ERR("crop=10x10+1.5+2", 5, "crop: geometry: '10x10+1.5+2': expected the offsets as +X+Y (signs required, "
        "integers)" REG_SYNTAX);
    ERR("crop=10x10++1+1", 5, "crop: geometry: '10x10++1+1': expected the offsets as +X+Y (signs required, "
        "integers)" REG_SYNTAX);
    ERR("crop=10x10+-1+2", 5, "crop: geometry: '10x10+-1+2': expected the offsets as +X+Y (signs required, "
        "integers)" REG_SYNTAX);
    ERR("crop=10x10+16777217+0", 5, "crop: geometry: '10x10+16777217+0': expected the offsets as +X+Y (signs "
        "required, integers)" REG_SYNTAX);
    ERR("crop = geometry = 4x4+0-16777217", 18, "crop: geometry: '4x4+0-16777217': expected the offsets as +X+Y "
        "(signs required, integers)" REG_SYNTAX);
    /* spaces split the geometry: the caret at the second word */
    ERR("crop=10x10 +1+2", 11, "crop: unexpected '+1+2' after '10x10' (options are separated by ':', ops by ',')");
    ERR("crop= 10x10 + 1 + 2", 12, "crop: unexpected '+' after '10x10' (options are separated by ':', ops by ',')");
    /* geometry and w, h, x, y: one or the other; the caret at the first of the others */
    ERR("crop=10x10:w=5", 11, NOT_BOTH);
    ERR("crop=10x10:h=5", 11, NOT_BOTH);
    ERR("crop=10x10:x=5", 11, NOT_BOTH);
    ERR("crop=10x10:y=-5", 11, NOT_BOTH);
    ERR("crop=10x10:gravity=centre:x=1", 26, NOT_BOTH);
    ERR("crop=y=1:geometry=10x10", 5, NOT_BOTH);
    ERR("crop=x=1:w=2:geometry=10x10", 9, NOT_BOTH); /* w before x among the options */
    ERR("crop=10x10:x=0:y=5", 15, NOT_BOTH);           /* 0 says nothing: y is the first that does */
    /* the options' own rules */
    ERR("crop=w=-1", 7, "crop: w must be between 0 and 16777216 (got -1)");
    ERR("crop=h=16777217", 7, "crop: h must be between 0 and 16777216 (got 16777217)");
    ERR("crop=w=5:x=16777217", 11, "crop: x must be between -16777216 and 16777216 (got 16777217)");
    ERR("crop=w=5:y=-16777217", 11, "crop: y must be between -16777216 and 16777216 (got -16777217)");
    ERR("crop=w=1.5", 7, "crop: w: '1.5' is not an integer");
    ERR("crop=w=5:x=+", 11, "crop: x: '+' is not an integer");
    ERR("crop=w=5:gravity=middle", 17, "crop: gravity: 'middle' is not one of " GRAVITIES);
    DESCRIBE("crop=w=5:gravity=center", "crop=w=5:h=0:gravity=centre:x=0:y=0"); /* ImageMagick's spelling too */
    ERR("crop=w=5:gravity=North", 17, "crop: gravity: 'North' is not one of " GRAVITIES);
    ERR("crop=geometry=10x10:geometry=5x5", 20, "crop: option 'geometry' given twice");
    ERR("crop=10x10:geometry=5x5", 11, "crop: option 'geometry' given twice");
    /* positional values fill geometry, w, h, gravity, x, y in turn */
    ERR("crop=10x10:southwest", 11, "crop: w: 'southwest' is not an integer");
    ERR("crop=10x10:0:0:centre:0:0:1", 26, "crop: too many values (takes geometry, w, h, gravity, x, y)");
    ERR("crop=gravity=east:7", 0, "crop: missing the region: geometry WxH+X+Y, or w and/or h"); /* 7 is x */

    /* the canonical text reads back the same (w, h, x, y at 0 beside a geometry say
     * nothing: they are spelled out) */
    DESCRIBE("crop=10x10-3+4", "crop=geometry=10x10-3+4:w=0:h=0:gravity=northwest:x=0:y=0");
    DESCRIBE("crop=10X10:gravity=southeast", "crop=geometry=10x10:w=0:h=0:gravity=southeast:x=0:y=0");
    DESCRIBE("crop=16777216x1+16777216-16777216:w=0:x=0",
             "crop=geometry=16777216x1+16777216-16777216:w=0:h=0:gravity=northwest:x=0:y=0");
    /* '#' starts a comment: the offsets are gone, the rest is a crop at 0,0 */
    DESCRIBE("crop=50%", "crop=geometry=50%:w=0:h=0:gravity=northwest:x=0:y=0");
    DESCRIBE("crop=50%x50", "crop=geometry=50%:w=0:h=0:gravity=northwest:x=0:y=0");
    DESCRIBE("crop=33.3x10%+1-2", "crop=geometry=33.3x10%+1-2:w=0:h=0:gravity=northwest:x=0:y=0");
    DESCRIBE("crop=12.5%x:gravity=center", "crop=geometry=12.5%:w=0:h=0:gravity=centre:x=0:y=0");
    DESCRIBE("crop=0.000001%x1000000%", "crop=geometry=0.000001x1000000%:w=0:h=0:gravity=northwest:x=0:y=0");
    DESCRIBE("crop=10x10#+1+2", "crop=geometry=10x10:w=0:h=0:gravity=northwest:x=0:y=0");
    DESCRIBE("crop=w=5", "crop=w=5:h=0:gravity=northwest:x=0:y=0");
    DESCRIBE("crop=h=0", "crop=w=0:h=0:gravity=northwest:x=0:y=0");
    DESCRIBE("crop=w=20:h=10:x=-3:y=2:gravity=east", "crop=w=20:h=10:gravity=east:x=-3:y=2");
    DESCRIBE("crop=w=16777216:h=1:x=-16777216:y=16777216",
             "crop=w=16777216:h=1:gravity=northwest:x=-16777216:y=16777216");
}

/* ---------------------------------------------------------------- rotate, orient, the mirrors */

#define COLOUR_SYNTAX " (syntax: NAME|[#]RRGGBB[AA])"
#define NOT_COLOUR "not a colour name or RGB, RGBA, RRGGBB, RRGGBBAA in hex"

static void test_rotate_orient(void)
{
    ERR("rotate=abc", 7, "rotate: angle: 'abc' is not a number");
    ERR("rotate=90deg", 7, "rotate: angle: '90deg' is not a number");
    ERR("rotate=36001", 7, "rotate: angle must be between -36000 and 36000 (got 36001)");
    ERR("rotate=-36000.5", 7, "rotate: angle must be between -36000 and 36000 (got -36000.5)");
    ERR("rotate=inf", 7, "rotate: angle: 'inf' is not a finite number");
    ERR("rotate=nan", 7, "rotate: angle: 'nan' is not a number");
    ERR("rotate=angle=45:angle=3", 16, "rotate: option 'angle' given twice");
    ERR("rotate=45:background=purple", 21, "rotate: background: 'purple': " NOT_COLOUR COLOUR_SYNTAX);
    ERR("rotate=45:fff0f", 10, "rotate: background: 'fff0f': " NOT_COLOUR COLOUR_SYNTAX);
    ERR("rotate=45:gggggg", 10, "rotate: background: 'gggggg': " NOT_COLOUR COLOUR_SYNTAX);
    ERR("rotate=45:1", 10, "rotate: background: '1': " NOT_COLOUR COLOUR_SYNTAX);
    ERR("rotate=45:ff00ff0", 10, "rotate: background: 'ff00ff0': " NOT_COLOUR COLOUR_SYNTAX);
    ERR("rotate=45:background=", 21, "rotate: missing value for 'background'");
    ERR("rotate=45:black:1", 16, "rotate: too many values (takes angle, background)");
    ERR("rotat=90", 0, "unknown op 'rotat' (did you mean 'rotate'?)");
    /* '#' right after '=' or ':' and before a hex digit begins a value (a colour as
     * CSS and ImageMagick write it); elsewhere it starts a comment */
    DESCRIBE("rotate=45:#ff0000", "rotate=angle=45:background=ff0000");
    DESCRIBE("rotate=45:background=#ff000080\n,gray", "rotate=angle=45:background=ff000080,gray=weights=bt601");
    DESCRIBE("rotate=45:background=#F80", "rotate=angle=45:background=ff8800");
    ERR("rotate=45:background=#gg0000", 28, "rotate: missing value for 'background'");
    ERR("rotate=45:background=#", 22, "rotate: missing value for 'background'");
    ERR("rotate=45:background= #ff0000", 29, "rotate: missing value for 'background'");
    ERR("rotate=45:# ff0000", 18, "rotate: missing value for 'background'");
    ERR("rotate=45:background=#ff00000", 21, "rotate: background: '#ff00000': " NOT_COLOUR COLOUR_SYNTAX);
    ERR("rotate=45:background=##ff0000", 29, "rotate: missing value for 'background'");
    /* colours: names in any case, RGB, RGBA, RRGGBB, RRGGBBAA */
    DESCRIBE("rotate", "rotate=angle=90:background=000000");
    DESCRIBE("rotate=45", "rotate=angle=45:background=000000");
    DESCRIBE("rotate=-1.5:White", "rotate=angle=-1.5:background=ffffff");
    DESCRIBE("rotate=45:Transparent", "rotate=angle=45:background=00000000");
    DESCRIBE("rotate=45:NONE", "rotate=angle=45:background=00000000");
    DESCRIBE("rotate=45:grey", "rotate=angle=45:background=808080");
    DESCRIBE("rotate=45:f80", "rotate=angle=45:background=ff8800");
    DESCRIBE("rotate=45:f808", "rotate=angle=45:background=ff880088");
    DESCRIBE("rotate=45:FF00FF", "rotate=angle=45:background=ff00ff");
    DESCRIBE("rotate=0.123456789:3366cc80", "rotate=angle=0.123456789:background=3366cc80");
    DESCRIBE("rotate=36000:ff0000ff", "rotate=angle=36000:background=ff0000");

    ERR("orient=9", 7, "orient: orientation must be between 1 and 8 (got 9)");
    ERR("orient=0", 7, "orient: orientation must be between 1 and 8 (got 0)");
    ERR("orient=-6", 7, "orient: orientation must be between 1 and 8 (got -6)");
    ERR("orient=6.0", 7, "orient: orientation: '6.0' is not an integer");
    ERR("orient=right", 7, "orient: orientation: 'right' is not an integer");
    ERR("orient=1:2", 9, "orient: too many values (takes orientation)");
    ERR("orient=rotation=6", 7,
        "orient: unknown option 'rotation' (did you mean 'orientation'?; options: orientation)");
    DESCRIBE("orient", "orient=orientation=1");
    DESCRIBE("orient=+6", "orient=orientation=6");

    /* the mirrors take no options */
    ERR("flip=1", 5, "flip: takes no options");
    ERR("flop=x", 5, "flop: takes no options");
    ERR("transpose=", 10, "transpose: takes no options");
    ERR("transverse = x", 13, "transverse: takes no options");
    ERR("flop:1", 4, "unexpected character ':' (options follow '=', as in 'flop=...')");
    ERR("flip flop", 5, "unexpected 'flop' after 'flip' (ops are separated by ',')");
    ERR("flipp", 0, "unknown op 'flipp' (did you mean 'flip'?)");
    ERR("transpos", 0, "unknown op 'transpos' (did you mean 'transpose'?)");
    ERR("mirror", 0, "unknown op 'mirror' (run 'vkimg ops' for the list)");
    DESCRIBE("flip , flop,transpose ,transverse", "flip,flop,transpose,transverse");
}

/* ---------------------------------------------------------------- levels */

static void test_levels(void)
{
    ERR("levels=0.5:0.3", 11, "levels: white (0.3) must be above black (0.5)");
    ERR("levels=0.3:0.3", 11, "levels: white (0.3) must be above black (0.3)");
    ERR("levels=white=0.2:black=0.5", 7, "levels: white (0.2) must be above black (0.5)");
    ERR("levels=black=0.5:white=0.2", 17, "levels: white (0.2) must be above black (0.5)");
    /* white left at its default: the caret at black */
    ERR("levels=black=1", 7, "levels: white (1) must be above black (1)");
    ERR("levels=gamma=2:black=1", 15, "levels: white (1) must be above black (1)");
    ERR("levels=white=0", 7, "levels: white (0) must be above black (0)");
    ERR("levels=1.5", 7, "levels: black must be between 0 and 1 (got 1.5)");
    ERR("levels=0:-0.1", 9, "levels: white must be between 0 and 1 (got -0.1)");
    ERR("levels=0:1:0", 11, "levels: gamma must be between 0.01 and 100 (got 0)");
    ERR("levels=gamma=0.009", 13, "levels: gamma must be between 0.01 and 100 (got 0.009)");
    ERR("levels=gamma=101", 13, "levels: gamma must be between 0.01 and 100 (got 101)");
    ERR("levels=0:1:1:1", 13, "levels: too many values (takes black, white, gamma)");
    /* ImageMagick's spellings are not vkimg's: percentages, and ',' separates ops */
    ERR("levels=10%", 7, "levels: black: '10%' is not a number");
    ERR("levels=0.1,0.9", 11, "unknown op '0' (',' separates ops; an op's values are separated by ':', e.g. levels=0.1:0.9)");
    ERR("level=0.1", 0, "unknown op 'level' (did you mean 'levels'?)");
    DESCRIBE("levels", "levels=black=0:white=1:gamma=1");
    DESCRIBE("levels=0.1:0.9:2.2", "levels=black=0.1:white=0.9:gamma=2.2");
    DESCRIBE("levels=gamma=0.01:white=1e-3", "levels=black=0:white=0.001:gamma=0.01");
}

/* ---------------------------------------------------------------- resize and thumbnail geometry */

#define GEO_SYNTAX " (syntax: WxH[^!<>]|Wx|xH|N%)"
#define BOX_SYNTAX " (syntax: N|WxH|Wx|xH[<>!])"

static void test_resize_geometry(void)
{
    ERR("resize", 0, "resize: missing size (WxH[^!<>]|Wx|xH|N%)");
    ERR("gray,resize=filter=box", 5, "resize: missing size (WxH[^!<>]|Wx|xH|N%)");
    ERR("resize=", 7, "resize: missing value for 'size'");
    ERR("resize=abc", 7, "resize: size: 'abc': unexpected characters" GEO_SYNTAX);
    ERR("resize=-5x5", 7, "resize: size: '-5x5': unexpected characters" GEO_SYNTAX);
    ERR("resize=1e3x10", 7, "resize: size: '1e3x10': unexpected characters" GEO_SYNTAX);
    ERR("resize=2x3x4", 7, "resize: size: '2x3x4': unexpected characters" GEO_SYNTAX);
    ERR("resize=50%x", 7, "resize: size: '50%x': unexpected characters" GEO_SYNTAX);
    ERR("resize=x", 7, "resize: size: 'x': no width or height" GEO_SYNTAX);
    ERR("resize=%", 7, "resize: size: '%': no width or height" GEO_SYNTAX);
    ERR("resize=!", 7, "resize: size: '!': no width or height" GEO_SYNTAX);
    ERR("resize=100x100!!", 7, "resize: size: '100x100!!': a flag given twice" GEO_SYNTAX);
    ERR("resize=100x100^^", 7, "resize: size: '100x100^^': a flag given twice" GEO_SYNTAX);
    ERR("resize=100x100<>", 7, "resize: size: '100x100<>': '>' (only shrink) and '<' (only enlarge) together"
        GEO_SYNTAX);
    ERR("resize=0x100", 7, "resize: size: '0x100': sizes are whole numbers of pixels, at least 1" GEO_SYNTAX);
    ERR("resize=100.5x100", 7, "resize: size: '100.5x100': sizes are whole numbers of pixels, at least 1"
        GEO_SYNTAX);
    ERR("resize=0.5", 7, "resize: size: '0.5': sizes are whole numbers of pixels, at least 1" GEO_SYNTAX);
    ERR("resize=0%", 7, "resize: size: '0%': percentages must be at least 0.000001 and at most 1000000" GEO_SYNTAX);
    ERR("resize=1000001%", 7, "resize: size: '1000001%': percentages must be at least 0.000001 and at most 1000000"
        GEO_SYNTAX);
    ERR("resize=16777217x1", 7, "resize: size: '16777217x1': a side over 16777216" GEO_SYNTAX);
    ERR("resize=5x5 !", 11, "resize: unexpected '!' after '5x5' (options are separated by ':', ops by ',')");
    ERR("resize=size=5:size=6", 14, "resize: option 'size' given twice");
    ERR("resize=100x100:lanczos", 15, "resize: filter: 'lanczos' is not one of lanczos3, lanczos2, mitchell, "
        "catrom, bilinear, box, nearest");
    ERR("resize=100x100>:fast=maybe", 21, "resize: fast: 'maybe' is not a boolean (0, 1, true, false, yes, no, on, "
        "off)");
    DESCRIBE("resize=50%", "resize=size=50%:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=50x25%", "resize=size=50x25%:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=1.5x1.5%", "resize=size=1.5%:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=.5%", "resize=size=0.5%:filter=lanczos3:linear=false:fast=true");
    /* below 0.0001 %g would write an exponent the geometry syntax has not (found by fuzz_parse) */
    DESCRIBE("resize=.000001%", "resize=size=0.000001%:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=0.0000342879414%", "resize=size=0.0000342879414%:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=0.00001x0.0000123456789012%",
             "resize=size=0.00001x0.0000123456789%:filter=lanczos3:linear=false:fast=true");
    ERR("resize=.000000000000000342879414%", 7,
        "resize: size: '.000000000000000342879414%': percentages must be at least 0.000001 and at most 1000000"
        GEO_SYNTAX);
    DESCRIBE("resize=100x50^:catrom", "resize=size=100x50^:filter=catrom:linear=false:fast=true");
    DESCRIBE("resize=100X50!", "resize=size=100x50!:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=x100", "resize=size=x100:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=100x", "resize=size=100x:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=100", "resize=size=100:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=100x100<", "resize=size=100x100<:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("resize=64x48>:box:yes:no", "resize=size=64x48>:filter=box:linear=true:fast=false");

    ERR("thumbnail", 0, "thumbnail: missing size (N|WxH|Wx|xH[<>!])");
    ERR("thumbnail=50%", 10, "thumbnail: size: a box N, WxH, Wx or xH (for % or ^ use resize)");
    ERR("thumbnail=100x100^", 10, "thumbnail: size: a box N, WxH, Wx or xH (for % or ^ use resize)");
    ERR("thumbnail=crop=centre:size=100^", 22, "thumbnail: size: a box N, WxH, Wx or xH (for % or ^ use resize)");
    ERR("thumbnail=abc", 10, "thumbnail: size: 'abc': unexpected characters" BOX_SYNTAX);
    ERR("thumbnail=100%x", 10, "thumbnail: size: '100%x': unexpected characters" BOX_SYNTAX);
    ERR("thumbnail=x", 10, "thumbnail: size: 'x': no width or height" BOX_SYNTAX);
    ERR("thumbnail=0", 10, "thumbnail: size: '0': sizes are whole numbers of pixels, at least 1" BOX_SYNTAX);
    ERR("thumbnail=100x0", 10, "thumbnail: size: '100x0': sizes are whole numbers of pixels, at least 1" BOX_SYNTAX);
    ERR("thumbnail=16777217", 10, "thumbnail: size: '16777217': a side over 16777216" BOX_SYNTAX);
    ERR("thumbnail=100:crop=middle", 19, "thumbnail: crop: 'middle' is not one of none, centre");
    DESCRIBE("thumbnail=100:crop=center", "thumbnail=size=100:crop=centre:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("thumbnail=100", "thumbnail=size=100:crop=none:filter=lanczos3:linear=false:fast=true");
    DESCRIBE("thumbnail=100x50>:centre", "thumbnail=size=100x50>:crop=centre:filter=lanczos3:linear=false:fast=true");
    /* as vipsthumbnail: an open side can be neither forced nor filled */
    ERR("thumbnail=x50!", 10, "thumbnail: size: '!' needs both sides of the box (WxH!)");
    ERR("thumbnail=100x:crop=centre", 15, "thumbnail: crop=centre needs both sides of the box (N or WxH)");
    DESCRIBE("thumbnail=50x50!", "thumbnail=size=50x50!:crop=none:filter=lanczos3:linear=false:fast=true");
}

/* ---------------------------------------------------------------- shapes */

static void test_shapes(void)
{
    /* the mirrors and quarter turns keep or swap the sides, never the channels */
    SHAPE("flip", 7, 3, 4, 7, 3, 4);
    SHAPE("flop", 1, 9, 1, 1, 9, 1);
    SHAPE("transpose", 7, 3, 2, 3, 7, 2);
    SHAPE("transverse", 1, 9, 3, 9, 1, 3);
    SHAPE("rotate=90", 7, 3, 3, 3, 7, 3);
    SHAPE("rotate=-90:transparent", 7, 3, 3, 3, 7, 3); /* exact: no alpha gained */
    SHAPE("rotate=180:transparent", 7, 3, 1, 7, 3, 1);
    SHAPE("rotate=720", 7, 3, 1, 7, 3, 1);
    for (int o = 1; o <= 8; o++) {
        char t[16];
        snprintf(t, sizeof t, "orient=%d", o);
        rm_map m = mv_orientation(o, 640, 480);
        shape_(__LINE__, t, 640, 480, 3, m.w, m.h, 3);
        rm_map_free(&m);
    }
    SHAPE("orient=6,crop=100x50,rotate=270,flop", 640, 480, 4, 50, 100, 4);
    /* other angles: the canvas that holds the rotated image; alpha gained on a
     * background that is not opaque */
    SHAPE("rotate=45", 100, 50, 3, 107, 107, 3);
    SHAPE("rotate=30:white", 100, 50, 1, 112, 94, 1);
    SHAPE("rotate=-30:transparent", 100, 50, 3, 112, 94, 4);
    SHAPE("rotate=30:00000080", 100, 50, 1, 112, 94, 2);
    SHAPE("rotate=30:transparent", 100, 50, 2, 112, 94, 2);
    SHAPE("rotate=30:transparent", 100, 50, 4, 112, 94, 4);
    SHAPE("rotate=45", 1, 1, 1, 2, 2, 1);
    SHAPE("rotate=0.001", 1, 1, 1, 2, 2, 1);
    static const double angles[] = { 1, 10, 29.5, 44.9, 60, 89.9, 90.1, 120, 179.99, 185, 271, -33.3, 1000.5 };
    static const size2 sizes[] = { { 1, 1 }, { 1, 1000 }, { 640, 480 }, { 4000, 3 }, { 16777216, 1 } };
    for (size_t a = 0; a < sizeof angles / sizeof angles[0]; a++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int ow, oh;
            if (ref_rotate_size(sizes[s].w, sizes[s].h, angles[a], &ow, &oh))
                continue; /* within 1e-6 of a whole size */
            char t[48];
            snprintf(t, sizeof t, "rotate=%g", angles[a]);
            shape_(__LINE__, t, sizes[s].w, sizes[s].h, 3, ow, oh, 3);
        }
    /* crop: clipped to the image; the error when nothing is left */
    SHAPE("crop=10x10", 5, 20, 3, 5, 10, 3);
    /* percentages: floor(pct * side / 100 + 0.5), at least 1; then clipped as pixels are */
    SHAPE("crop=50%", 5, 20, 3, 3, 10, 3);      /* 2.5 -> 3 */
    SHAPE("crop=29%x50", 50, 7, 1, 15, 4, 1);   /* 14.5 -> 15 (29 * 50 / 100, not 0.29 * 50), 3.5 -> 4 */
    SHAPE("crop=33.3x10%", 400, 600, 3, 133, 60, 3);
    SHAPE("crop=0.000001%", 9, 9, 2, 1, 1, 2);
    SHAPE("crop=150%+1+1", 9, 4, 4, 8, 3, 4);
    SHAPE("crop=50%+0+0:gravity=southeast", 7, 3, 3, 4, 2, 3);
    SHAPE("rotate=90,crop=50%x100%", 8, 2, 1, 1, 8, 1); /* of the rotated image */
    /* 10^6 % of 2^24 pixels is past an int: the whole image, wherever the gravity puts it */
    SHAPE("crop=1000000%:gravity=centre", 16777216, 1, 1, 16777216, 1, 1);
    SHAPE("crop=25600.00003%:gravity=centre", 16777216, 1, 1, 16777216, 1, 1); /* 2^32 + 5 pixels wide */
    SHAPE("crop=1000000%-16777216+0:gravity=east", 16777216, 1, 1, 16777216, 1, 1);
    SHAPE("crop=1000000%+16777215+0", 16777216, 1, 1, 1, 1, 1);
    SHAPE("crop=10x10-3-4", 5, 20, 3, 5, 6, 3);
    SHAPE("crop=w=3", 5, 20, 1, 3, 20, 1);
    SHAPE("crop=10x10+3+3:gravity=southeast", 5, 20, 4, 2, 10, 4);
    SHAPE("crop=16777216x16777216-16777215-16777215", 5, 20, 4, 1, 1, 4);
    SHAPE("transpose,crop=15x3+2+0", 5, 20, 2, 15, 3, 2);
    SHAPE_ERR("crop=10x10+5+0", 5, 20, 3, "crop: nothing of the 5x20 image is left (the region is outside it)");
    SHAPE_ERR("crop=10x10-10+0", 5, 20, 3, "crop: nothing of the 5x20 image is left (the region is outside it)");
    SHAPE_ERR("crop=1x1+5+0:gravity=southeast", 5, 20, 3, "crop: nothing of the 5x20 image is left (the region is "
              "outside it)");
    SHAPE_ERR("transpose,crop=5x5+0+5", 5, 20, 3, "crop: nothing of the 20x5 image is left (the region is outside it)");
    SHAPE_ERR("crop=w=1:h=1:x=-16777216:y=16777216:gravity=centre", 16777216, 1, 1,
              "crop: nothing of the 16777216x1 image is left (the region is outside it)");
    /* resize past the side limit: an error before anything runs */
    SHAPE_ERR("resize=1000000%", 1678, 1, 3, "resize: the result would be 16780000x10000, a side over the limit of "
              "16777216");
    SHAPE("resize=1000000%", 1677, 1, 3, 16770000, 10000, 3);
}

int main(void)
{
    int rf = mv_self_check() + ref_rotate_self_check();
    CHECK(rf == 0, "reference self-checks: %d failures", rf);
    test_crop();
    test_rotate_orient();
    test_levels();
    test_resize_geometry();
    test_shapes();
    return t_done("test_geometry");
}
