/* Pipeline parser, canonical description, channel folding and op documentation.
 * No GPU needed. Every error case asserts the exact message and caret offset. */
#include "vkimg/vkimg.h"
#include "pipeline/op.h"
#include "pipeline/pipeline.h"
#include "ops/registry.h"
#include "t.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* src/pipeline.c: the parser with an explicit op table (test descriptors). */
vkimg_pipeline *vki_pipeline_parse_ops(const char *text, const vki_op_desc *const *ops, int nops, vkimg_err *e);

/* ---------------------------------------------------------------- helpers */

static vkimg_pipeline *ok_(int line, const char *text)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, &e);
    CHECK(p != NULL, "line %d: parse '%s' failed: %s (pos %d)", line, text, e.msg, e.pos);
    return p;
}
#define OK(text) ok_(__LINE__, text)

static void err_ops(int line, const vki_op_desc *const *ops, int nops, const char *text, int pos, const char *msg)
{
    vkimg_err e;
    memset(&e, 0, sizeof e);
    e.pos = -99;
    vkimg_pipeline *p = ops ? vki_pipeline_parse_ops(text, ops, nops, &e) : vkimg_pipeline_parse(text, &e);
    CHECK(p == NULL, "line %d: '%s' parsed but should fail with \"%s\"", line, text ? text : "(null)", msg);
    vkimg_pipeline_free(p);
    if (p)
        return;
    CHECK(e.code == VKIMG_E_USAGE, "line %d: '%s': code %d", line, text ? text : "(null)", e.code);
    CHECK(!strcmp(e.msg, msg), "line %d: '%s':\n   got  \"%s\"\n   want \"%s\"", line, text ? text : "(null)", e.msg, msg);
    CHECK(e.pos == pos, "line %d: '%s' (\"%s\"): pos %d, want %d", line, text ? text : "(null)", e.msg, e.pos, pos);
    CHECK(!strchr(e.msg, '\n'), "line %d: message has a newline", line);
}
#define ERR(text, pos, msg) err_ops(__LINE__, NULL, 0, text, pos, msg)

static void describe_is_(int line, const char *text, const char *want)
{
    vkimg_pipeline *p = ok_(line, text);
    if (!p)
        return;
    char buf[1024];
    int n = vkimg_pipeline_describe(p, buf, sizeof buf);
    CHECK(!strcmp(buf, want), "line %d: describe '%s' = \"%s\", want \"%s\"", line, text, buf, want);
    CHECK(n == (int)strlen(want), "line %d: describe returned %d, want %d", line, n, (int)strlen(want));
    vkimg_pipeline_free(p);
    /* the canonical text reads back to itself */
    vkimg_err e;
    vkimg_pipeline *q = vkimg_pipeline_parse(buf, &e);
    CHECK(q != NULL, "line %d: describe '%s' = '%s' does not parse back: %s", line, text, buf, e.msg);
    if (q) {
        char again[1024];
        vkimg_pipeline_describe(q, again, sizeof again);
        CHECK(!strcmp(again, buf), "line %d: '%s' reads back as '%s'", line, buf, again);
        vkimg_pipeline_free(q);
    }
}
#define DESCRIBE_IS(text, want) describe_is_(__LINE__, text, want)

static double arg(const vkimg_pipeline *p, int op, int k)
{
    return p->ops[op].args.v[k];
}

static bool is_set(const vkimg_pipeline *p, int op, int k)
{
    return p->ops[op].args.set[k];
}

/* ---------------------------------------------------------------- valid forms */

static void test_valid(void)
{
    vkimg_pipeline *p;

    /* names only, defaults filled */
    if ((p = OK("gray"))) {
        CHECK(vkimg_pipeline_length(p) == 1, "length %d", vkimg_pipeline_length(p));
        CHECK(!strcmp(vkimg_pipeline_op_name(p, 0), "gray"), "name %s", vkimg_pipeline_op_name(p, 0));
        CHECK(vkimg_pipeline_op_name(p, 1) == NULL, "op_name past the end");
        CHECK(vkimg_pipeline_op_name(p, -1) == NULL, "op_name(-1)");
        CHECK(arg(p, 0, 0) == 0 && !is_set(p, 0, 0), "gray weights default bt601 (0), got %g", arg(p, 0, 0));
        CHECK(p->ops[0].pos == 0, "op pos %d", p->ops[0].pos);
        vkimg_pipeline_free(p);
    }
    if ((p = OK("copy,gray,blur,copy"))) {
        CHECK(vkimg_pipeline_length(p) == 4, "length %d", vkimg_pipeline_length(p));
        const char *want[] = { "copy", "gray", "blur", "copy" };
        const int wpos[] = { 0, 5, 10, 15 };
        for (int i = 0; i < 4; i++) {
            CHECK(!strcmp(vkimg_pipeline_op_name(p, i), want[i]), "op %d is %s", i, vkimg_pipeline_op_name(p, i));
            CHECK(p->ops[i].pos == wpos[i], "op %d pos %d, want %d", i, p->ops[i].pos, wpos[i]);
        }
        CHECK(arg(p, 2, 0) == 1.0 && arg(p, 2, 1) == 3, "blur defaults sigma=1 radius=ceil(3)=3, got %g %g",
              arg(p, 2, 0), arg(p, 2, 1));
        CHECK(!is_set(p, 2, 0) && !is_set(p, 2, 1), "defaults are not 'set'");
        vkimg_pipeline_free(p);
    }

    /* key=value */
    if ((p = OK("blur=sigma=2:radius=6"))) {
        CHECK(arg(p, 0, 0) == 2 && arg(p, 0, 1) == 6, "got %g %g", arg(p, 0, 0), arg(p, 0, 1));
        CHECK(is_set(p, 0, 0) && is_set(p, 0, 1), "both set");
        vkimg_pipeline_free(p);
    }
    /* keys in any order */
    if ((p = OK("blur=radius=6:sigma=2"))) {
        CHECK(arg(p, 0, 0) == 2 && arg(p, 0, 1) == 6, "got %g %g", arg(p, 0, 0), arg(p, 0, 1));
        vkimg_pipeline_free(p);
    }
    /* positional */
    if ((p = OK("blur=2.5:6"))) {
        CHECK(arg(p, 0, 0) == 2.5 && arg(p, 0, 1) == 6, "got %g %g", arg(p, 0, 0), arg(p, 0, 1));
        vkimg_pipeline_free(p);
    }
    /* mixed */
    if ((p = OK("blur=2.5:radius=6"))) {
        CHECK(arg(p, 0, 0) == 2.5 && arg(p, 0, 1) == 6, "got %g %g", arg(p, 0, 0), arg(p, 0, 1));
        vkimg_pipeline_free(p);
    }
    if ((p = OK("blur=sigma=0.5:4"))) {
        CHECK(arg(p, 0, 0) == 0.5 && arg(p, 0, 1) == 4, "got %g %g", arg(p, 0, 0), arg(p, 0, 1));
        vkimg_pipeline_free(p);
    }
    /* positional continues after the last option set, wherever it is */
    if ((p = OK("threshold=radius=7:5"))) {
        CHECK(arg(p, 0, 2) == 7 && arg(p, 0, 3) == 5, "radius %g offset %g", arg(p, 0, 2), arg(p, 0, 3));
        CHECK(arg(p, 0, 0) == 0 && arg(p, 0, 1) == 0.5, "mode %g value %g defaults", arg(p, 0, 0), arg(p, 0, 1));
        CHECK(!is_set(p, 0, 0) && !is_set(p, 0, 1) && is_set(p, 0, 2) && is_set(p, 0, 3), "set flags");
        vkimg_pipeline_free(p);
    }
    if ((p = OK("threshold=adaptive:radius=9:20"))) {
        CHECK(arg(p, 0, 0) == 1 && arg(p, 0, 1) == 0.5 && arg(p, 0, 2) == 9 && arg(p, 0, 3) == 20,
              "got %g %g %g %g", arg(p, 0, 0), arg(p, 0, 1), arg(p, 0, 2), arg(p, 0, 3));
        vkimg_pipeline_free(p);
    }
    if ((p = OK("threshold=otsu:0.25:3:0"))) {
        CHECK(arg(p, 0, 0) == 2 && arg(p, 0, 1) == 0.25 && arg(p, 0, 2) == 3 && arg(p, 0, 3) == 0,
              "got %g %g %g %g", arg(p, 0, 0), arg(p, 0, 1), arg(p, 0, 2), arg(p, 0, 3));
        vkimg_pipeline_free(p);
    }

    /* auto default: radius = ceil(3*sigma) unless given */
    static const struct { const char *text; double sigma, radius; } autos[] = {
        { "blur", 1, 3 },         { "blur=2", 2, 6 },      { "blur=2.5", 2.5, 8 },
        { "blur=0.1", 0.1, 1 },   { "blur=0.01", 0.01, 1 }, { "blur=1000", 1000, 3000 },
        { "blur=1.0001", 1.0001, 4 }, { "blur=2.5:0", 2.5, 0 }, { "blur=radius=2", 1, 2 },
    };
    for (size_t i = 0; i < sizeof autos / sizeof autos[0]; i++)
        if ((p = OK(autos[i].text))) {
            CHECK(arg(p, 0, 0) == autos[i].sigma && arg(p, 0, 1) == autos[i].radius, "'%s': sigma %g radius %g, want %g %g",
                  autos[i].text, arg(p, 0, 0), arg(p, 0, 1), autos[i].sigma, autos[i].radius);
            vkimg_pipeline_free(p);
        }

    /* numbers */
    static const struct { const char *text; double sigma; } nums[] = {
        { "blur=.5", 0.5 }, { "blur=5.", 5 }, { "blur=1e1", 10 }, { "blur=+3", 3 }, { "blur=2.5E-1", 0.25 },
        { "blur=1000", 1000 }, { "blur=1e-300", 1e-300 },
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if ((p = OK(nums[i].text))) {
            CHECK(arg(p, 0, 0) == nums[i].sigma, "'%s': sigma %g", nums[i].text, arg(p, 0, 0));
            vkimg_pipeline_free(p);
        }
    if ((p = OK("boxblur=+12,boxblur=0,boxblur=1048576,threshold=offset=-0"))) {
        CHECK(arg(p, 0, 0) == 12 && arg(p, 1, 0) == 0 && arg(p, 2, 0) == 1048576 && arg(p, 3, 3) == 0, "ints");
        vkimg_pipeline_free(p);
    }

    /* enum, by name and by position */
    static const struct { const char *text; double v; } enums[] = {
        { "gray=bt709", 1 }, { "gray=weights=bt709", 1 }, { "gray=bt601", 0 }, { "gray=weights=bt601", 0 },
        { "threshold=mode=otsu", 2 }, { "threshold=adaptive", 1 }, { "threshold=value", 0 },
    };
    for (size_t i = 0; i < sizeof enums / sizeof enums[0]; i++)
        if ((p = OK(enums[i].text))) {
            CHECK(arg(p, 0, 0) == enums[i].v && is_set(p, 0, 0), "'%s': %g", enums[i].text, arg(p, 0, 0));
            vkimg_pipeline_free(p);
        }

    /* bool */
    static const struct { const char *word; double v; } bools[] = {
        { "0", 0 }, { "1", 1 }, { "true", 1 }, { "false", 0 }, { "yes", 1 }, { "no", 0 }, { "on", 1 }, { "off", 0 },
    };
    for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++) {
        char text[64];
        for (int positional = 0; positional < 2; positional++) {
            snprintf(text, sizeof text, "normalize=%s%s", positional ? "" : "link=", bools[i].word);
            if ((p = OK(text))) {
                CHECK(arg(p, 0, 0) == bools[i].v, "'%s': %g", text, arg(p, 0, 0));
                vkimg_pipeline_free(p);
            }
        }
    }
    if ((p = OK("normalize"))) {
        CHECK(arg(p, 0, 0) == 0, "link default false");
        vkimg_pipeline_free(p);
    }

    /* whitespace everywhere between tokens: spaces, tabs, newlines, CR */
    const char *ws = " \t gray \n = \t weights\r\n=\nbt709 \t,\n\n  blur =\t2.5 : \n radius \t= 6 \n\t";
    if ((p = OK(ws))) {
        CHECK(vkimg_pipeline_length(p) == 2, "length %d", vkimg_pipeline_length(p));
        CHECK(arg(p, 0, 0) == 1, "weights %g", arg(p, 0, 0));
        CHECK(arg(p, 1, 0) == 2.5 && arg(p, 1, 1) == 6, "blur %g %g", arg(p, 1, 0), arg(p, 1, 1));
        CHECK(p->ops[0].pos == 3, "gray pos %d", p->ops[0].pos);
        CHECK(p->ops[1].pos == (int)(strstr(ws, "blur") - ws), "blur pos %d", p->ops[1].pos);
        vkimg_pipeline_free(p);
    }

    /* comments: '#' to the end of the line, anywhere (a file given with -F) */
    const char *file = "# a pipeline file\n"
                       "gray=bt709   # luma\n"
                       "# whole-line comment, with , : = # inside\n"
                       ",blur=2#sigma, no space before the comment\n"
                       "  :radius=5 # ,gray\n"
                       "#";
    if ((p = OK(file))) {
        CHECK(vkimg_pipeline_length(p) == 2, "length %d", vkimg_pipeline_length(p));
        CHECK(arg(p, 0, 0) == 1, "weights %g", arg(p, 0, 0));
        CHECK(arg(p, 1, 0) == 2 && arg(p, 1, 1) == 5, "blur %g %g", arg(p, 1, 0), arg(p, 1, 1));
        CHECK(p->ops[0].pos == 18, "gray pos %d", p->ops[0].pos);
        vkimg_pipeline_free(p);
    }
    if ((p = OK("gray # no newline at the end"))) {
        CHECK(vkimg_pipeline_length(p) == 1, "length %d", vkimg_pipeline_length(p));
        vkimg_pipeline_free(p);
    }
    /* the input is not modified (comments are blanked in a copy) */
    char mutable_text[] = "gray # c";
    if ((p = OK(mutable_text)))
        vkimg_pipeline_free(p);
    CHECK(!strcmp(mutable_text, "gray # c"), "input text modified: '%s'", mutable_text);

    /* the same op several times; 64 ops is the limit */
    char many[64 * 5 + 1] = "";
    for (int i = 0; i < 64; i++)
        strcat(many, i ? ",copy" : "copy");
    if ((p = OK(many))) {
        CHECK(vkimg_pipeline_length(p) == 64, "length %d", vkimg_pipeline_length(p));
        CHECK(p->ops[63].pos == 63 * 5, "pos %d", p->ops[63].pos);
        vkimg_pipeline_free(p);
    }
    /* a data op last is fine */
    if ((p = OK("gray,integral"))) {
        vkimg_fmt f = VKIMG_U8;
        CHECK(vkimg_pipeline_data_output(p, &f) && f == VKIMG_U64, "integral is data output");
        vkimg_pipeline_free(p);
    }
    /* error argument may be NULL */
    p = vkimg_pipeline_parse("gray", NULL);
    CHECK(p != NULL, "parse with e = NULL");
    vkimg_pipeline_free(p);
    CHECK(vkimg_pipeline_parse("blr", NULL) == NULL, "failing parse with e = NULL");
    vkimg_pipeline_free(NULL);
    CHECK(vkimg_pipeline_length(NULL) == 0, "length(NULL)");
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void)
{
    /* empty pipeline */
    ERR("", 0, "empty pipeline");
    ERR(NULL, 0, "empty pipeline");
    ERR(" \t\n\r\n ", 0, "empty pipeline");
    ERR("# only a comment", 0, "empty pipeline");
    ERR("  # comment\n\n  # another, with ops: gray,blur\n", 0, "empty pipeline");

    /* empty op */
    ERR(",gray", 0, "empty op before ','");
    ERR("  ,gray", 2, "empty op before ','");
    ERR("gray,,blur", 5, "empty op before ','");
    ERR("levels=0.1,0.9", 11, "unknown op '0' (',' separates ops; an op's values are separated by ':', e.g. levels=0.1:0.9)");
    ERR("gray, ,blur", 6, "empty op before ','");
    ERR("gray,", 4, "empty op after ','");
    ERR("gray , \n", 5, "empty op after ','");
    ERR("gray,# blur\n", 4, "empty op after ','");

    /* unknown op, with and without a suggestion */
    ERR("gray,blr=2", 5, "unknown op 'blr' (did you mean 'blur'?)");
    ERR("blr", 0, "unknown op 'blr' (did you mean 'blur'?)");
    ERR("grey", 0, "unknown op 'grey' (did you mean 'gray'?)");
    ERR("Blur", 0, "unknown op 'Blur' (did you mean 'blur'?)");
    ERR("thresh", 0, "unknown op 'thresh' (did you mean 'threshold'?)");
    ERR("equalise", 0, "unknown op 'equalise' (did you mean 'equalize'?)");
    ERR("box_blur=3", 0, "unknown op 'box_blur' (did you mean 'boxblur'?)");
    ERR("gxxy", 0, "unknown op 'gxxy' (did you mean 'gray'?)");           /* distance 2 <= max(2, 2) */
    ERR("gxxx", 0, "unknown op 'gxxx' (run 'vkimg ops' for the list)");  /* distance 3 */
    ERR("sharpen", 0, "unknown op 'sharpen' (run 'vkimg ops' for the list)");
    ERR("x", 0, "unknown op 'x' (run 'vkimg ops' for the list)");
    ERR("gray , # c\n  xyzzy=1", 13, "unknown op 'xyzzy' (run 'vkimg ops' for the list)");

    /* unknown option */
    ERR("blur=5:method=box:radius=3", 18,
        "blur: radius applies to method=exact (method=box derives its box widths from sigma)");
    ERR("blur=5:method=boxes", 14, "blur: method: 'boxes' is not one of exact, box");
    ERR("blur=sigmaa=2", 5, "blur: unknown option 'sigmaa' (did you mean 'sigma'?; options: sigma, radius, method)");
    ERR("blur=2:radus=3", 7, "blur: unknown option 'radus' (did you mean 'radius'?; options: sigma, radius, method)");
    ERR("blur=2:rad=3", 7, "blur: unknown option 'rad' (options: sigma, radius, method)"); /* distance 3 > max(2, 3/2) */
    ERR("blur=size=3", 5, "blur: unknown option 'size' (options: sigma, radius, method)");
    ERR("blur = Sigma = 3", 7, "blur: unknown option 'Sigma' (did you mean 'sigma'?; options: sigma, radius, method)");
    ERR("gray=weight=bt709", 5, "gray: unknown option 'weight' (did you mean 'weights'?; options: weights)");
    ERR("threshold=modes=otsu", 10,
        "threshold: unknown option 'modes' (did you mean 'mode'?; options: mode, value, radius, offset)");
    ERR("copy=1", 5, "copy: takes no options");
    ERR("copy = x=1", 7, "copy: takes no options");
    ERR("gray,equalize=", 14, "equalize: takes no options");

    /* too many positional values */
    ERR("blur=1:2:3", 9, "blur: method: '3' is not one of exact, box");
    ERR("blur=1:2:exact:3", 15, "blur: too many values (takes sigma, radius, method)");
    ERR("blur=radius=4:2", 14, "blur: method: '2' is not one of exact, box");
    ERR("blur=method=box:2", 16, "blur: too many values (takes sigma, radius, method)");
    ERR("gray=bt601:bt709", 11, "gray: too many values (takes weights)");
    ERR("threshold=offset=3:0.4", 19, "threshold: too many values (takes mode, value, radius, offset)");

    /* missing values */
    ERR("blur=", 5, "blur: missing value for 'sigma'");
    ERR("blur=,gray", 5, "blur: missing value for 'sigma'");
    ERR("blur=sigma=", 11, "blur: missing value for 'sigma'");
    ERR("blur=sigma= ,gray", 12, "blur: missing value for 'sigma'");
    ERR("blur=radius=:2", 12, "blur: missing value for 'radius'");
    ERR("blur=2:", 7, "blur: missing value for 'radius'");
    ERR("blur=2::3", 7, "blur: missing value for 'radius'");
    ERR("blur=:3", 5, "blur: missing value for 'sigma'");
    ERR("blur=2:6:", 9, "blur: missing value for 'method'");
    ERR("blur=2:6:box:", 13, "blur: missing value after ':'");
    ERR("blur==2", 5, "blur: missing option name before '='");
    ERR("blur=2:=3", 7, "blur: missing option name before '='");
    ERR("=2", 0, "missing op name before '='");
    ERR("gray, =2", 6, "missing op name before '='");

    /* not a number / not an integer */
    ERR("blur=sigma", 5, "blur: sigma: 'sigma' is not a number");
    ERR("blur=abc", 5, "blur: sigma: 'abc' is not a number");
    ERR("blur=sigma=2x", 11, "blur: sigma: '2x' is not a number");
    ERR("blur=1,5", 7, "unknown op '5' (',' separates ops; an op's values are separated by ':', e.g. levels=0.1:0.9)");
    ERR("blur=nan", 5, "blur: sigma: 'nan' is not a number");
    ERR("blur=inf", 5, "blur: sigma: 'inf' is not a finite number");
    ERR("blur=1e999", 5, "blur: sigma: '1e999' is not a finite number");
    ERR("blur=2:6.5", 7, "blur: radius: '6.5' is not an integer");
    ERR("blur=radius=6.0", 12, "blur: radius: '6.0' is not an integer");
    ERR("blur=radius=1e3", 12, "blur: radius: '1e3' is not an integer");
    ERR("blur=radius=six", 12, "blur: radius: 'six' is not an integer");
    ERR("blur=radius=-", 12, "blur: radius: '-' is not an integer");
    ERR("blur=radius=0x10", 12, "blur: radius: '0x10' is not an integer");

    /* out of range */
    ERR("blur=0", 5, "blur: sigma must be > 0 (got 0)");
    ERR("blur=sigma=-0.5", 11, "blur: sigma must be > 0 (got -0.5)");
    ERR("blur=1e-400", 5, "blur: sigma must be > 0 (got 1e-400)");
    ERR("blur=1000.5", 5, "blur: sigma must be at most 1000 (got 1000.5)");
    ERR("blur=1:5000", 7, "blur: radius must be between 0 and 4096 (got 5000)");
    ERR("blur=1:-1", 7, "blur: radius must be between 0 and 4096 (got -1)");
    ERR("blur=1:99999999999999999999", 7, "blur: radius must be between 0 and 4096 (got 99999999999999999999)");
    ERR("boxblur=1048577", 8, "boxblur: radius must be between 0 and 1048576 (got 1048577)");
    ERR("threshold=value=1.5", 16, "threshold: value must be between 0 and 1 (got 1.5)");
    ERR("threshold=adaptive:0.5:0", 23, "threshold: radius must be between 1 and 1048576 (got 0)");

    /* enum / bool */
    ERR("gray=bt2020", 5, "gray: weights: 'bt2020' is not one of bt601, bt709");
    ERR("gray=weights=BT709", 13, "gray: weights: 'BT709' is not one of bt601, bt709");
    ERR("gray=weights=1", 13, "gray: weights: '1' is not one of bt601, bt709");
    ERR("threshold=mode=mean", 15, "threshold: mode: 'mean' is not one of value, adaptive, otsu");
    ERR("normalize=link=maybe", 15,
        "normalize: link: 'maybe' is not a boolean (0, 1, true, false, yes, no, on, off)");
    ERR("normalize=TRUE", 10, "normalize: link: 'TRUE' is not a boolean (0, 1, true, false, yes, no, on, off)");
    ERR("normalize=2", 10, "normalize: link: '2' is not a boolean (0, 1, true, false, yes, no, on, off)");

    /* given twice */
    ERR("blur=sigma=1:sigma=2", 13, "blur: option 'sigma' given twice");
    ERR("blur=2:sigma=3", 7, "blur: option 'sigma' given twice");
    ERR("blur=radius=2:sigma=1:radius=3", 22, "blur: option 'radius' given twice");
    ERR("threshold=value=0.4:mode=otsu:0.5", 30, "threshold: option 'value' given twice");

    /* bad characters and stray tokens */
    ERR("gray;blur", 4, "unexpected character ';'");
    ERR("gray.blur", 4, "unexpected character '.'");
    ERR("gray  ;", 6, "unexpected character ';'");
    ERR(";gray", 0, "unexpected character ';'");
    ERR("gray\x01", 4, "unexpected character '\\x01'");
    ERR("gray\xc3\xa9", 4, "unexpected character '\\xc3'");
    ERR("gray blur", 5, "unexpected 'blur' after 'gray' (ops are separated by ',')");
    ERR("gray\n\nblur=2", 6, "unexpected 'blur' after 'gray' (ops are separated by ',')");
    ERR("gray:bt709", 4, "unexpected character ':' (options follow '=', as in 'gray=...')");
    ERR("blur=2 3", 7, "blur: unexpected '3' after '2' (options are separated by ':', ops by ',')");
    ERR("blur=sigma=2=3", 12, "blur: unexpected '=' after '2' (options are separated by ':', ops by ',')");
    ERR("blur=2 gray", 7, "blur: unexpected 'gray' after '2' (options are separated by ':', ops by ',')");

    /* positions count comments and newlines (caret under the right byte of a file) */
    ERR("# header, with blr\ngray\n,blr # here\n", 25, "unknown op 'blr' (did you mean 'blur'?)");
    ERR("blur=2 # sigma\n  :radius = x # r\n", 27, "blur: radius: 'x' is not an integer");
    ERR("gray # c\n,,", 10, "empty op before ','");

    /* structural limits the executor also enforces */
    ERR("integral,gray", 0, "integral: produces data, not a picture: it must be the last op");
    ERR("gray , integral , copy", 7, "integral: produces data, not a picture: it must be the last op");
    char many[65 * 5 + 1] = "";
    for (int i = 0; i < 65; i++)
        strcat(many, i ? ",copy" : "copy");
    ERR(many, 64 * 5, "too many ops (at most 64)");

    /* the first error from the left wins */
    ERR("blr,gray=bt2020", 0, "unknown op 'blr' (did you mean 'blur'?)");
    ERR("blur=0:9999,x", 5, "blur: sigma must be > 0 (got 0)");

    /* long garbage is quoted shortened, the message stays one line */
    char longname[200];
    memset(longname, 'q', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    {
        vkimg_err e;
        memset(&e, 0, sizeof e);
        CHECK(vkimg_pipeline_parse(longname, &e) == NULL, "long name parsed");
        CHECK(e.pos == 0 && strlen(e.msg) < 200 && strstr(e.msg, "unknown op 'qqqq") && strstr(e.msg, "...'"),
              "long name message: %s", e.msg);
    }
}

/* ---------------------------------------------------------------- check() hook (test descriptors) */

enum { F_ALPHA, F_BETA, F_FREE, F_AUTO };

static const vki_opt fake_opts[] = {
    [F_ALPHA] = { .name = "alpha", .type = VKI_OPT_FLOAT, .def = 1, .min = 0, .max = 10, .help = "a" },
    [F_BETA] = { .name = "beta", .type = VKI_OPT_INT, .def = 2, .min = -5, .max = 5, .help = "b" },
    [F_FREE] = { .name = "free", .type = VKI_OPT_FLOAT, .def = 0, .help = "unbounded (no range declared)" },
    [F_AUTO] = { .name = "auto", .type = VKI_OPT_INT, .min = 0, .max = 100, .auto_default = "2*beta", .help = "c" },
};

static int fake_check(vki_args *a, char *why, size_t n, int *bad)
{
    if (a->v[F_ALPHA] == 7) {
        snprintf(why, n, "alpha may not be 7");
        *bad = F_ALPHA;
        return -1;
    }
    if (a->v[F_BETA] == 3) {
        snprintf(why, n, "beta 3 clashes");
        *bad = F_BETA;
        return -1;
    }
    if (a->v[F_ALPHA] == 8) {
        snprintf(why, n, "alpha 8 needs beta set");
        *bad = F_BETA; /* beta left at its default: caret at the op */
        return -1;
    }
    if (a->v[F_ALPHA] == 9) {
        snprintf(why, n, "the whole op is wrong");
        *bad = -1;
        return -1;
    }
    if (!a->set[F_AUTO])
        a->v[F_AUTO] = 2 * a->v[F_BETA];
    return 0;
}

static const vki_op_desc fake_op = {
    .name = "fake", .help = "test op", .opts = fake_opts, .nopts = 4, .check = fake_check,
};
static const vki_op_desc plain_op = { .name = "plain", .help = "no options" };
static const vki_op_desc *const fake_ops[] = { &fake_op, &plain_op };

static void test_check_hook(void)
{
#define FERR(text, pos, msg) err_ops(__LINE__, fake_ops, 2, text, pos, msg)
    FERR("fake=alpha=7", 5, "fake: alpha may not be 7");
    FERR("fake=beta=1:alpha=7", 12, "fake: alpha may not be 7");
    FERR("plain, fake = 1 : 3", 18, "fake: beta 3 clashes");
    FERR("plain,fake=8", 6, "fake: alpha 8 needs beta set");
    FERR("fake=9", 0, "fake: the whole op is wrong");
    FERR("fake=auto=101", 10, "fake: auto must be between 0 and 100 (got 101)");
    FERR("fake=beta=6", 10, "fake: beta must be between -5 and 5 (got 6)");
    FERR("blur", 0, "unknown op 'blur' (run 'vkimg ops' for the list)"); /* only the given table */
    FERR("fak", 0, "unknown op 'fak' (did you mean 'fake'?)");
#undef FERR
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_pipeline *p = vki_pipeline_parse_ops("fake=free=-1e300:7,fake=beta=-4,plain", fake_ops, 2, &e);
    CHECK(p != NULL, "fake parse: %s (pos %d)", e.msg, e.pos);
    if (p) {
        CHECK(arg(p, 0, F_FREE) == -1e300, "unbounded float %g", arg(p, 0, F_FREE));
        CHECK(arg(p, 0, F_AUTO) == 7 && is_set(p, 0, F_AUTO), "auto given explicitly: %g", arg(p, 0, F_AUTO));
        CHECK(arg(p, 1, F_AUTO) == -8 && !is_set(p, 1, F_AUTO), "auto default from check: %g", arg(p, 1, F_AUTO));
        CHECK(arg(p, 1, F_ALPHA) == 1 && arg(p, 1, F_FREE) == 0, "defaults");
        vkimg_pipeline_free(p);
    }
}

/* ---------------------------------------------------------------- describe */

static void test_describe(void)
{
    DESCRIBE_IS("gray,blur=2.5", "gray=weights=bt601,blur=sigma=2.5:radius=8:method=exact");
    DESCRIBE_IS("copy", "copy");
    DESCRIBE_IS("  copy , equalize ", "copy,equalize");
    DESCRIBE_IS("gray=bt709", "gray=weights=bt709");
    DESCRIBE_IS("blur", "blur=sigma=1:radius=3:method=exact");
    DESCRIBE_IS("blur=radius=2:sigma=0.5", "blur=sigma=0.5:radius=2:method=exact");
    DESCRIBE_IS("blur=0.1", "blur=sigma=0.1:radius=1:method=exact");
    DESCRIBE_IS("blur=1e-3", "blur=sigma=0.001:radius=1:method=exact");
    DESCRIBE_IS("blur=1000", "blur=sigma=1000:radius=3000:method=exact");
    DESCRIBE_IS("blur=0.123456789", "blur=sigma=0.123456789:radius=1:method=exact"); /* exact, not %g's 6 digits */
    /* every canonical text reads back: blur's radius is derived from sigma (box blurs refuse one) */
    DESCRIBE_IS("blur=5:method=box", "blur=sigma=5:method=box");
    DESCRIBE_IS("blur=sigma=5:method=box", "blur=sigma=5:method=box");
    DESCRIBE_IS("blur=1e-7", "blur=sigma=1e-07:radius=1:method=exact");
    DESCRIBE_IS("threshold", "threshold=mode=value:value=0.5:radius=15:offset=15");
    DESCRIBE_IS("threshold=otsu:0.25", "threshold=mode=otsu:value=0.25:radius=15:offset=15");
    DESCRIBE_IS("normalize=on", "normalize=link=true");
    DESCRIBE_IS("normalize", "normalize=link=false");
    DESCRIBE_IS("boxblur=1048576,integral", "boxblur=radius=1048576,integral");
    DESCRIBE_IS("threshold=offset=-0", "threshold=mode=value:value=0.5:radius=15:offset=0");
    DESCRIBE_IS("# c\ngray # d\n", "gray=weights=bt601");
    /* options that apply only when left out are not spelled out (the text would not parse) */
    DESCRIBE_IS("blur=5:method=box", "blur=sigma=5:method=box");
    DESCRIBE_IS("crop=10x10+3-4", "crop=geometry=10x10+3-4:w=0:h=0:gravity=northwest:x=0:y=0");
    DESCRIBE_IS("crop=w=5", "crop=w=5:h=0:gravity=northwest:x=0:y=0");

    /* round trip: parse(describe(p)) describes identically */
    static const char *const rt[] = {
        "copy",
        "gray=bt709,blur=2.5:7,copy",
        "blur=0.3",
        "blur=0.123456789012345",
        "blur=999.999999999",
        "threshold=adaptive:0.1:33:7,normalize=yes,equalize",
        "boxblur=5,gray,integral",
        "gray\n# comment\n,blur=sigma=3.75",
        "blur=5:method=box",
        "crop=10x10+3-4:gravity=centre",
        "crop=h=7:x=-2",
    };
    for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++) {
        vkimg_pipeline *p = OK(rt[i]);
        if (!p)
            continue;
        char d1[1024], d2[1024];
        vkimg_pipeline_describe(p, d1, sizeof d1);
        vkimg_pipeline *q = OK(d1);
        if (q) {
            vkimg_pipeline_describe(q, d2, sizeof d2);
            CHECK(!strcmp(d1, d2), "round trip of '%s': '%s' -> '%s'", rt[i], d1, d2);
            CHECK(q->n == p->n, "round trip length");
            for (int o = 0; o < p->n && o < q->n; o++) {
                CHECK(p->ops[o].desc == q->ops[o].desc, "round trip op %d", o);
                for (int k = 0; k < p->ops[o].desc->nopts; k++)
                    CHECK(p->ops[o].args.v[k] == q->ops[o].args.v[k], "'%s' op %d opt %d: %.17g vs %.17g", rt[i], o, k,
                          p->ops[o].args.v[k], q->ops[o].args.v[k]);
            }
            vkimg_pipeline_free(q);
        }
        vkimg_pipeline_free(p);
    }

    /* snprintf semantics: full length returned, truncated text NUL-terminated, no overflow */
    vkimg_pipeline *p = OK("gray,blur=2.5");
    if (p) {
        const char *full = "gray=weights=bt601,blur=sigma=2.5:radius=8:method=exact";
        int want = (int)strlen(full);
        CHECK(vkimg_pipeline_describe(p, NULL, 0) == want, "describe(NULL, 0)");
        char small[16];
        memset(small, 'Z', sizeof small);
        CHECK(vkimg_pipeline_describe(p, small, 10) == want, "describe into 10 bytes returns the full length");
        CHECK(!memcmp(small, full, 9) && small[9] == 0, "truncated: '%.10s'", small);
        CHECK(small[10] == 'Z' && small[15] == 'Z', "describe wrote past n");
        char one[2] = { 'Z', 'Z' };
        CHECK(vkimg_pipeline_describe(p, one, 1) == want && one[0] == 0 && one[1] == 'Z', "describe into 1 byte");
        vkimg_pipeline_free(p);
    }
    char b[4] = "xyz";
    CHECK(vkimg_pipeline_describe(NULL, b, sizeof b) == 0 && b[0] == 0, "describe(NULL pipeline)");
}

/* ---------------------------------------------------------------- channels */

static void out_ch_(int line, const char *text, int in, int want)
{
    vkimg_pipeline *p = ok_(line, text);
    if (!p)
        return;
    int got = vkimg_pipeline_out_channels(p, in);
    CHECK(got == want, "line %d: '%s' of %d channels gives %d, want %d", line, text, in, got, want);
    vkimg_pipeline_free(p);
}
#define OUT_CH(text, in, want) out_ch_(__LINE__, text, in, want)

static void test_channels(void)
{
    OUT_CH("gray", 3, 1);
    OUT_CH("gray", 4, 2);
    OUT_CH("gray", 1, 1);
    OUT_CH("gray", 2, 2);
    OUT_CH("blur", 3, 3);
    OUT_CH("blur", 4, 4);
    OUT_CH("copy", 2, 2);
    OUT_CH("blur,gray", 4, 2);
    OUT_CH("gray,blur", 3, 1);
    OUT_CH("gray,gray,blur", 4, 2);
    OUT_CH("threshold,normalize,equalize", 3, 3);
    CHECK(vkimg_pipeline_out_channels(NULL, 3) == 3, "NULL pipeline keeps channels");
}

/* ---------------------------------------------------------------- ops help */

static char *help(const char *name, bool md, int *len)
{
    int n = vkimg_ops_help(name, md ? VKIMG_DOC_MARKDOWN : VKIMG_DOC_TEXT, NULL, 0);
    *len = n;
    if (n < 0)
        return NULL;
    char *buf = malloc((size_t)n + 1);
    if (!buf)
        return NULL;
    int n2 = vkimg_ops_help(name, md ? VKIMG_DOC_MARKDOWN : VKIMG_DOC_TEXT, buf, (size_t)n + 1);
    CHECK(n2 == n && (int)strlen(buf) == n, "ops_help(%s) length %d then %d (strlen %d)", name ? name : "NULL", n, n2,
          (int)strlen(buf));
    return buf;
}

static int count_lines_starting(const char *s, const char *prefix)
{
    int k = 0;
    size_t pl = strlen(prefix);
    for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, prefix, pl))
            k++;
    return k;
}

static void test_help(void)
{
    CHECK(vkimg_op_count() == vki_nops && vki_nops >= 3, "op count %d", vkimg_op_count());
    CHECK(vkimg_op_name(-1) == NULL && vkimg_op_name(vkimg_op_count()) == NULL, "op_name out of range");
    for (int i = 0; i < vkimg_op_count(); i++) {
        const char *name = vkimg_op_name(i);
        CHECK(name && !strcmp(name, vki_ops[i]->name), "op_name(%d)", i);
        if (!name)
            continue;
        /* every op is reachable from the parser by its name, and by its example;
         * an op that needs options says so when they are missing */
        const vki_op_desc *dd = vki_ops[i];
        CHECK(!dd->needs == !dd->example, "%s: needs and example go together", name);
        if (dd->needs) {
            vkimg_err me = { 0 };
            vkimg_pipeline *bare = vkimg_pipeline_parse(name, &me);
            CHECK(!bare && me.code == VKIMG_E_USAGE && strstr(me.msg, "missing"), "%s alone: %s", name, me.msg);
            vkimg_pipeline_free(bare);
            CHECK(!strncmp(dd->example, name, strlen(name)) && dd->example[strlen(name)] == '=', "%s example %s",
                  name, dd->example);
        }
        vkimg_pipeline *p = OK(dd->example ? dd->example : name);
        if (p) {
            CHECK(!strcmp(vkimg_pipeline_op_name(p, 0), name), "parsed %s", name);
            vkimg_pipeline_free(p);
        }
        int n;
        char *h = help(name, false, &n);
        CHECK(h && n > 0, "ops_help(%s) = %d", name, n);
        if (!h)
            continue;
        const vki_op_desc *d = vki_ops[i];
        CHECK(!strncmp(h, name, strlen(name)) && h[strlen(name)] == ':', "%s help starts with its name: %.40s", name, h);
        CHECK(strstr(h, d->help) != NULL, "%s help has its help line", name);
        for (int k = 0; k < d->nopts; k++) {
            const vki_opt *o = &d->opts[k];
            char key[64];
            snprintf(key, sizeof key, "\n  %s ", o->name);
            CHECK(strstr(h, key) != NULL, "%s help lists option %s", name, o->name);
            CHECK(o->help && strstr(h, o->help) != NULL, "%s help has %s's help", name, o->name);
            if (o->auto_default)
                CHECK(strstr(h, o->auto_default) != NULL, "%s help shows %s's auto default", name, o->name);
            for (int c = 0; o->choices && o->choices[c]; c++)
                CHECK(strstr(h, o->choices[c]) != NULL, "%s help lists choice %s", name, o->choices[c]);
        }
        if (!d->nopts)
            CHECK(strstr(h, "takes no options") != NULL, "%s help says it takes no options", name);
        free(h);
    }

    /* specific content */
    int n;
    char *h = help("blur", false, &n);
    if (h) {
        CHECK(strstr(h, "  sigma   float, > 0 and <= 1000; default 1\n") != NULL, "blur sigma line:\n%s", h);
        CHECK(strstr(h, "  radius  int, 0..4096; default ceil(3*sigma)\n") != NULL, "blur radius line:\n%s", h);
        CHECK(strstr(h, "usage: blur=sigma=FLOAT:radius=INT:method=exact|box\n") != NULL, "blur usage line:\n%s", h);
        free(h);
    }
    if ((h = help("gray", false, &n))) {
        CHECK(strstr(h, "weights  one of bt601, bt709; default bt601\n") != NULL, "gray weights line:\n%s", h);
        free(h);
    }
    if ((h = help("normalize", false, &n))) {
        CHECK(strstr(h, "default false\n") != NULL, "normalize default:\n%s", h);
        free(h);
    }

    /* unknown op */
    char buf[64] = "unchanged";
    CHECK(vkimg_ops_help("blr", VKIMG_DOC_TEXT, buf, sizeof buf) == -1, "unknown op help");
    CHECK(vkimg_ops_help("", VKIMG_DOC_TEXT, NULL, 0) == -1, "empty name help");
    CHECK(vkimg_ops_help("BLUR", VKIMG_DOC_MARKDOWN, NULL, 0) == -1, "names are exact");
    CHECK(buf[0] == 0, "buffer of a failed ops_help is an empty string");

    /* all ops, plain: one line per op starting with its name, then the option summary */
    if ((h = help(NULL, false, &n))) {
        for (int i = 0; i < vki_nops; i++) {
            char key[64];
            snprintf(key, sizeof key, "%s ", vki_ops[i]->name);
            CHECK(count_lines_starting(h, key) == 1, "all-ops list has one line for %s", vki_ops[i]->name);
            CHECK(strstr(h, vki_ops[i]->help) != NULL, "all-ops list has %s's help", vki_ops[i]->name);
            for (int k = 0; k < vki_ops[i]->nopts; k++) {
                snprintf(key, sizeof key, "%s=", vki_ops[i]->opts[k].name);
                CHECK(strstr(h, key) != NULL, "all-ops list has %s's option %s", vki_ops[i]->name, key);
            }
        }
        CHECK(strstr(h, "sigma=FLOAT (default 1), radius=INT (default ceil(3*sigma))") != NULL, "blur summary:\n%s", h);
        CHECK(strstr(h, "weights=bt601|bt709 (default bt601)") != NULL, "gray summary:\n%s", h);
        free(h);
    }

    /* Markdown table: header, separator, one row per op with 3 cells (no stray '|') */
    if ((h = help(NULL, true, &n))) {
        const char *hdr = "| op | options (default, range) | description |\n|---|---|---|\n";
        CHECK(!strncmp(h, hdr, strlen(hdr)), "markdown header:\n%s", h);
        CHECK(count_lines_starting(h, "| `") == vki_nops, "markdown rows %d, ops %d", count_lines_starting(h, "| `"),
              vki_nops);
        CHECK(count_lines_starting(h, "|") == vki_nops + 2, "markdown table lines");
        CHECK(n > 0 && h[n - 1] == '\n', "markdown ends with a newline");
        for (int i = 0; i < vki_nops; i++) {
            char key[64];
            snprintf(key, sizeof key, "| `%s` | ", vki_ops[i]->name);
            CHECK(count_lines_starting(h, key) == 1, "markdown row for %s", vki_ops[i]->name);
            const char *row = strstr(h, key);
            if (!row)
                continue;
            int bars = 0;
            for (const char *c = row; *c && *c != '\n'; c++)
                if (*c == '|' && (c == row || c[-1] != '\\'))
                    bars++;
            CHECK(bars == 4, "row of %s has %d unescaped '|'", vki_ops[i]->name, bars);
            for (int k = 0; k < vki_ops[i]->nopts; k++) {
                snprintf(key, sizeof key, "`%s` (", vki_ops[i]->opts[k].name);
                const char *nl = strchr(row, '\n');
                const char *f = strstr(row, key);
                CHECK(f && f < nl, "markdown row of %s lists %s", vki_ops[i]->name, vki_ops[i]->opts[k].name);
            }
        }
        CHECK(strstr(h, "`radius` (int, default ceil(3\\*sigma), 0..4096): kernel radius in pixels (taps: 2\\*radius+1)"),
              "markdown escapes '*':\n%s", h);
        CHECK(strstr(h, "`sigma` (float, default 1, > 0 and <= 1000): standard deviation in pixels<br>"),
              "markdown blur sigma:\n%s", h);
        CHECK(strstr(h, "`weights` (default bt601, one of bt601, bt709): "), "markdown enum:\n%s", h);
        free(h);
    }

    /* snprintf semantics */
    int full = vkimg_ops_help(NULL, true, NULL, 0);
    char small[32];
    memset(small, 'Z', sizeof small);
    CHECK(vkimg_ops_help(NULL, true, small, 20) == full, "truncated help returns the full length");
    CHECK(small[19] == 0 && small[20] == 'Z' && strlen(small) == 19, "help truncation");
    memset(small, 'Z', sizeof small);
    CHECK(vkimg_ops_help("threshold", false, small, 20) == vkimg_ops_help("threshold", false, NULL, 0) &&
              small[19] == 0 && small[20] == 'Z',
          "single-op help truncation");
}

int main(void)
{
    test_valid();
    test_errors();
    test_check_hook();
    test_describe();
    test_channels();
    test_help();
    return t_done("test_pipeline");
}
