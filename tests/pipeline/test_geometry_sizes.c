/* Output sizes of resize, thumbnail and mipmaps, no device: the pipeline's
 * shape (vki_pipeline_shape, what vkimg_run allocates) against the references
 * of tests/ops/resize_ref.h and mipmaps_ref.h, written from the README and the
 * documented rules of ImageMagick (geometry: floor(scale * side + 0.5) as
 * ParseMetaGeometry evaluates it, percentages floor(N * side / 100 + 0.5), every
 * side at least 1) and vipsthumbnail (--size: N, WxH, Wx, xH, > < !, crop).
 * Every form on sweeps of sizes (1 to 300 and a few large), percentages 1% to
 * 400% and fractional ones, sizes given against the file's size when the
 * decoder shrank the image (vkimg_run_opts.src_w), chains, and the texts the
 * parser refuses. */
#include "../ops/mipmaps_ref.h" /* the references live beside their op tests */
#include "pipeline/pipeline.h"
#include "../ops/resize_ref.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <stdio.h>
#include <string.h>

/* The shape of text on a w x h image whose geometry is resolved against
 * gw x gh; 0 or -1 (message in e). */
static int shape(const char *text, int w, int h, int gw, int gh, vki_shape *s, vkimg_err *e)
{
    memset(e, 0, sizeof *e);
    vkimg_pipeline *p = vkimg_pipeline_parse(text, e);
    if (!p)
        return -1;
    int rc = vki_pipeline_shape(p, w, h, 3, gw, gh, s, e);
    vkimg_pipeline_free(p);
    return rc;
}

static int nfail_shown;

/* The size resize=g makes of w x h against ImageMagick's. */
static void check_resize(const char *g, int w, int h)
{
    char text[96];
    snprintf(text, sizeof text, "resize=%s", g);
    vki_shape s;
    vkimg_err e;
    int ew, eh;
    int rr = ref_geometry_size(g, w, h, &ew, &eh);
    int rc = shape(text, w, h, w, h, &s, &e);
    bool ok = rr == 0 && rc == 0 && s.w[1] == ew && s.h[1] == eh;
    if (!ok && nfail_shown++ < 40)
        CHECK(ok, "'%s' of %dx%d: %s%dx%d, ImageMagick's %dx%d", text, w, h, rc ? e.msg : "", s.w[1], s.h[1], ew, eh);
    else
        CHECK(ok, "(more)");
}

/* The size thumbnail=size[:crop=centre] makes of w x h against vipsthumbnail's
 * (either neighbour where a side is exactly k + 0.5). */
static int nties;
static void check_thumb(const char *size, bool crop, int w, int h)
{
    char text[96];
    snprintf(text, sizeof text, "thumbnail=%s%s", size, crop ? ":crop=centre" : "");
    ref_thumb t;
    vki_shape s;
    vkimg_err e;
    int rr = ref_thumbnail_size(size, crop, w, h, &t);
    int rc = shape(text, w, h, w, h, &s, &e);
    /* the reference rounds a tie up; libvips's double arithmetic (and the
     * op's) may land below it */
    bool okw = s.w[1] == t.ow || (t.tie_w && s.w[1] == t.ow - 1);
    bool okh = s.h[1] == t.oh || (t.tie_h && s.h[1] == t.oh - 1);
    nties += t.tie_w || t.tie_h;
    bool ok = rr == 0 && rc == 0 && okw && okh;
    if (!ok && nfail_shown++ < 40)
        CHECK(ok, "'%s' of %dx%d: %s%dx%d, vipsthumbnail's %dx%d (resized %dx%d%s)", text, w, h, rc ? e.msg : "",
              s.w[1], s.h[1], t.ow, t.oh, t.rw, t.rh, t.tie_w || t.tie_h ? ", a tie" : "");
    else
        CHECK(ok, "(more)");
}

static void test_resize_sizes(void)
{
    /* every form on a sweep of sizes */
    static const char *const geo[] = {
        "64x64",  "64x64^", "64x64!", "64x64>", "64x64<", "64",    "64x",    "x64",   "64^",   "x64^",
        "1x1",    "1x1^",   "7x300",  "300x7^", "300x7>", "7x300<", "128x96", "96x128!", "13x1", "1x13^",
        "50%",    "29%",    "35%",    "150%",   "200x50%", "1%",    "0.5%",   "12.5%", "33.3%", "2.9%",
        "1600%",  "100%",   "99x101%", "7x13",  "5^",     "x3",
    };
    for (size_t g = 0; g < sizeof geo / sizeof geo[0]; g++)
        for (int w = 1; w <= 130; w += (w < 20 ? 1 : 7))
            for (int h = 1; h <= 130; h += (h < 20 ? 1 : 9))
                check_resize(geo[g], w, h);
    static const struct {
        int w, h;
    } big[] = { { 4000, 3000 }, { 1, 20000 }, { 20000, 1 }, { 7919, 7907 }, { 1920, 1080 } };
    for (size_t g = 0; g < sizeof geo / sizeof geo[0]; g++)
        for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
            check_resize(geo[g], big[i].w, big[i].h);
    /* whole percentages on every side up to 300: floor(N * side / 100 + 0.5),
     * the exact ties (29% of 50 = 14.5) rounding up */
    for (int n = 1; n <= 400; n += (n < 100 ? 1 : 7)) {
        char g[16];
        snprintf(g, sizeof g, "%d%%", n);
        for (int w = 1; w <= 300; w++)
            check_resize(g, w, 301 - w);
    }
    /* hand-checked ones (the README's examples and ImageMagick's documented results) */
    static const struct {
        const char *g;
        int w, h, ow, oh;
    } hand[] = {
        { "1920x1080^", 4000, 3000, 1920, 1440 }, { "1920x1080", 4000, 3000, 1440, 1080 },
        { "29%", 50, 50, 15, 15 },                { "35%", 90, 90, 32, 32 },
        { "50%", 3, 1, 2, 1 },                    { "10%", 3, 3, 1, 1 },
        { "100x100>", 50, 80, 50, 80 },           { "100x100<", 50, 80, 63, 100 },
        { "x100", 200, 50, 400, 100 },            { "100", 50, 200, 100, 400 },
        /* ImageMagick: a percentage without a width is 100% of it, without a height the width's */
        { "x50%", 200, 100, 200, 50 },            { "50x%", 200, 100, 100, 50 },
    };
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        int ow, oh;
        CHECK(ref_geometry_size(hand[i].g, hand[i].w, hand[i].h, &ow, &oh) == 0 && ow == hand[i].ow &&
                  oh == hand[i].oh,
              "reference: '%s' of %dx%d: %dx%d, want %dx%d", hand[i].g, hand[i].w, hand[i].h, ow, oh, hand[i].ow,
              hand[i].oh);
        check_resize(hand[i].g, hand[i].w, hand[i].h);
    }
}

static void test_thumbnail_sizes(void)
{
    static const char *const sz[] = { "64", "64>", "64<", "64x32", "32x64", "64x", "x64", "64x32!", "64x32>",
                                       "64x32<", "1", "1x1!", "7x300", "300x7", "3", "100x" };
    for (size_t k = 0; k < sizeof sz / sizeof sz[0]; k++)
        for (int crop = 0; crop < 2; crop++) {
            bool open = strchr(sz[k], 'x') && (sz[k][strlen(sz[k]) - 1] == 'x' || sz[k][0] == 'x');
            if (crop && (open || strchr(sz[k], '!')))
                continue; /* vipsthumbnail refuses crop without a whole box */
            for (int w = 1; w <= 160; w += (w < 24 ? 1 : 11))
                for (int h = 1; h <= 160; h += (h < 24 ? 1 : 13))
                    check_thumb(sz[k], crop != 0, w, h);
            check_thumb(sz[k], crop != 0, 4000, 3000);
            check_thumb(sz[k], crop != 0, 1, 5000);
            check_thumb(sz[k], crop != 0, 5000, 1);
        }
    printf("  thumbnail sizes: %d cases had a side of exactly k + 0.5 (either neighbour accepted)\n", nties);
    /* vipsthumbnail's documented examples */
    static const struct {
        const char *s;
        int crop, w, h, ow, oh;
    } hand[] = {
        { "128", 0, 1024, 768, 128, 96 },   { "200x100", 0, 400, 400, 100, 100 }, { "200x100", 1, 400, 400, 200, 100 },
        { "200x", 0, 400, 100, 200, 50 },   { "x50", 0, 400, 100, 200, 50 },      { "256>", 0, 100, 50, 100, 50 },
        { "256<", 0, 1024, 768, 1024, 768 }, { "256", 0, 100, 50, 256, 128 },     { "200x100!", 0, 400, 400, 200, 100 },
        { "300x300", 1, 100, 50, 300, 300 },
    };
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        vki_shape s;
        vkimg_err e;
        char text[64];
        snprintf(text, sizeof text, "thumbnail=%s%s", hand[i].s, hand[i].crop ? ":crop=centre" : "");
        int rc = shape(text, hand[i].w, hand[i].h, hand[i].w, hand[i].h, &s, &e);
        CHECK(rc == 0 && s.w[1] == hand[i].ow && s.h[1] == hand[i].oh, "'%s' of %dx%d: %dx%d, want %dx%d", text,
              hand[i].w, hand[i].h, s.w[1], s.h[1], hand[i].ow, hand[i].oh);
    }
}

/* Sizes given against the file's size (shrink-on-load: a JPEG decoded at 1/8):
 * resize and thumbnail land on the size the file's would give, whatever the
 * decoded one. */
static void test_geo_size(void)
{
    static const struct {
        const char *text;
        int w, h, gw, gh, ow, oh;
    } cs[] = {
        { "thumbnail=256", 500, 375, 4000, 3000, 256, 192 },
        { "thumbnail=100x100:crop=centre", 250, 188, 2000, 1500, 100, 100 },
        { "resize=10%", 1000, 750, 4000, 3000, 400, 300 },
        { "resize=640x480", 1000, 750, 4000, 3000, 640, 480 },
        { "resize=50%,resize=50%", 1000, 750, 4000, 3000, 1000, 750 },
        { "thumbnail=64,resize=200%", 63, 47, 501, 375, 128, 96 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        vki_shape s;
        vkimg_err e;
        int rc = shape(cs[i].text, cs[i].w, cs[i].h, cs[i].gw, cs[i].gh, &s, &e);
        int n = s.n;
        CHECK(rc == 0 && s.w[n] == cs[i].ow && s.h[n] == cs[i].oh, "'%s' of %dx%d (file %dx%d): %s%dx%d, want %dx%d",
              cs[i].text, cs[i].w, cs[i].h, cs[i].gw, cs[i].gh, rc ? e.msg : "", s.w[n], s.h[n], cs[i].ow, cs[i].oh);
    }
    /* chains: each op's size from the one before */
    for (int w = 1; w <= 60; w += 3)
        for (int h = 1; h <= 60; h += 5) {
            vki_shape s;
            vkimg_err e;
            int a, b, c2, d;
            ref_geometry_size("37%", w, h, &a, &b);
            ref_geometry_size("20x20^", a, b, &c2, &d);
            int rc = shape("resize=37%,blur=1,resize=20x20^", w, h, w, h, &s, &e);
            CHECK(rc == 0 && s.w[3] == c2 && s.h[3] == d, "chain of %dx%d: %dx%d, want %dx%d", w, h, s.w[3], s.h[3], c2,
                  d);
        }
}

static void test_mipmap_sizes(void)
{
    for (int w = 1; w <= 70; w++)
        for (int h = 1; h <= 70; h += (w % 7) + 1)
            for (int levels = 0; levels <= 9; levels += 3) {
                char text[64];
                if (levels)
                    snprintf(text, sizeof text, "mipmaps=levels=%d", levels);
                else
                    snprintf(text, sizeof text, "mipmaps");
                int ws[64], hs[64];
                int n = ref_mipmap_sizes(w, h, levels, ws, hs, 64);
                vki_shape s;
                vkimg_err e;
                int rc = shape(text, w, h, w, h, &s, &e);
                bool ok = rc == 0 && s.nout == n;
                for (int k = 0; ok && k < n; k++)
                    ok = s.out_w[k] == ws[k] && s.out_h[k] == hs[k];
                if (!ok && nfail_shown++ < 40)
                    CHECK(ok, "'%s' of %dx%d: %d levels (%dx%d, %dx%d, ...), the reference %d (%dx%d, %dx%d, ...)", text,
                          w, h, s.nout, s.out_w[0], s.out_h[0], s.out_w[1], s.out_h[1], n, ws[0], hs[0], ws[1], hs[1]);
                else
                    CHECK(ok, "(more)");
            }
    /* by hand: 5x3 -> 2x1 -> 1x1; 1x1 is one level; 4096x1 has 13 */
    int ws[64], hs[64];
    int n = ref_mipmap_sizes(5, 3, 0, ws, hs, 64);
    CHECK(n == 3 && ws[1] == 2 && hs[1] == 1 && ws[2] == 1 && hs[2] == 1, "reference: 5x3: %d levels", n);
    CHECK(ref_mipmap_sizes(1, 1, 0, ws, hs, 64) == 1, "reference: 1x1: one level");
    CHECK(ref_mipmap_sizes(4096, 1, 0, ws, hs, 64) == 13 && ws[12] == 1, "reference: 4096x1: 13 levels");
    CHECK(ref_mipmap_sizes(4096, 1, 5, ws, hs, 64) == 5 && ws[4] == 256, "reference: 4096x1 levels=5");
}

/* Texts the parser refuses (VKIMG_E_USAGE, no pipeline). */
static void test_refused(void)
{
    static const char *const bad[] = {
        "resize",           "resize=",          "resize=0x10",     "resize=10x0",      "resize=x",
        "resize=abc",       "resize=10x10><",   "resize=10x10>>",  "resize=10.5x10",   "resize=0%",
        "resize=-5%",       "resize=10x10@",    "resize=50%:filter=cubic",            "thumbnail=50%",
        "thumbnail=10x10^", "thumbnail",        "thumbnail=10:crop=middle",           "mipmaps=levels=-1",
        "mipmaps,gray",     "mipmaps=filter=sinc",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vkimg_err e;
        memset(&e, 0, sizeof e);
        vkimg_pipeline *p = vkimg_pipeline_parse(bad[i], &e);
        CHECK(p == NULL && e.code == VKIMG_E_USAGE && e.msg[0], "'%s' parsed (or failed without a usage error: %d '%s')",
              bad[i], e.code, e.msg);
        vkimg_pipeline_free(p);
    }
}

int main(void)
{
    int rf = ref_resize_self_check();
    CHECK(rf == 0, "resize reference self-check: %d failures", rf);
    rf = ref_mipmaps_self_check();
    CHECK(rf == 0, "mipmaps reference self-check: %d failures", rf);
    test_resize_sizes();
    test_thumbnail_sizes();
    test_geo_size();
    test_mipmap_sizes();
    test_refused();
    return t_done("test_geometry_sizes");
}
