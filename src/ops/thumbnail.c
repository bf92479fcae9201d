/* thumbnail: vipsthumbnail's --size: SIZE (a SIZE x SIZE box), WxH, Wx or xH,
 * with the flags > (only shrink), < (only enlarge), ! (exactly); the image is fit
 * inside the box (aspect kept, the fast path on), or with crop=centre it fills the
 * box and its middle is cut out. */
#include "ops/remap.h"
#include "ops/resample.h"
#include "pipeline/geometry.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>

enum { O_SIZE, O_CROP, O_FILTER, O_LINEAR, O_FAST };
enum { CROP_NONE, CROP_CENTRE };
static const char *const crops[] = { "none", "centre", NULL };

static const vki_opt thumbnail_opts[] = {
    [O_SIZE] = { .name = "size", .type = VKI_OPT_TEXT, .placeholder = "N|WxH|Wx|xH[<>!]", .parse = vki_geo_parse,
                 .format = vki_geo_format,
                 .help = "the box: N (N x N), WxH, Wx or xH; > only shrinks, < only enlarges, ! exactly that size" },
    [O_CROP] = { .name = "crop", .type = VKI_OPT_ENUM, .def = CROP_NONE, .choices = crops,
                 .help = "none: fit inside the box; centre: fill the box and cut out its middle" },
    [O_FILTER] = { .name = "filter", .type = VKI_OPT_ENUM, .def = VKI_FILTER_LANCZOS3, .choices = vki_filter_names,
                   .help = "as resize's" },
    [O_LINEAR] = { .name = "linear", .type = VKI_OPT_BOOL, .def = 0, .help = "as resize's" },
    [O_FAST] = { .name = "fast", .type = VKI_OPT_BOOL, .def = 1,
                 .help = "as resize's (on: box pre-shrink, and JPEG and WebP shrink-on-load)" },
};

static int thumbnail_check(vki_args *a, char *why, size_t n, int *bad)
{
    int flags = (int)a->x[O_SIZE][VKI_GEO_FLAGS];
    if (flags & (VKI_GEO_PERCENT | VKI_GEO_FILL)) {
        snprintf(why, n, "size: a box N, WxH, Wx or xH (for %% or ^ use resize)");
        *bad = O_SIZE;
        return -1;
    }
    /* as vipsthumbnail: an open side has no size to fill or to force */
    bool open_side = !(flags & VKI_GEO_NOX) && (a->x[O_SIZE][VKI_GEO_W] <= 0 || a->x[O_SIZE][VKI_GEO_H] <= 0);
    if (open_side && (flags & VKI_GEO_EXACT)) {
        snprintf(why, n, "size: '!' needs both sides of the box (WxH!)");
        *bad = O_SIZE;
        return -1;
    }
    if (open_side && a->v[O_CROP] == CROP_CENTRE) {
        snprintf(why, n, "crop=centre needs both sides of the box (N or WxH)");
        *bad = O_CROP;
        return -1;
    }
    return 0;
}

/* The box: a bare N is N x N; a missing side is unbounded. */
static void box(const vki_args *a, double *bw, double *bh)
{
    const double *x = a->x[O_SIZE];
    bool square = (int)x[VKI_GEO_FLAGS] & VKI_GEO_NOX;
    *bw = x[VKI_GEO_W] > 0 ? x[VKI_GEO_W] : 1e12;
    *bh = x[VKI_GEO_H] > 0 ? x[VKI_GEO_H] : square ? *bw : 1e12;
}

/* The resized size (before a crop) and the final size. */
static int sizes(const vki_args *a, int w, int h, int *rw, int *rh, int *ow, int *oh, char *why, size_t n)
{
    double bw, bh;
    box(a, &bw, &bh);
    int flags = (int)a->x[O_SIZE][VKI_GEO_FLAGS];
    bool crop = a->v[O_CROP] == CROP_CENTRE && bw < 1e12 && bh < 1e12;
    double scale = crop ? fmax(bw / w, bh / h) : fmin(bw / w, bh / h);
    if (flags & VKI_GEO_SHRINK)
        scale = fmin(scale, 1.0);
    if (flags & VKI_GEO_ENLARGE)
        scale = fmax(scale, 1.0);
    double dw = (flags & VKI_GEO_EXACT) && bw < 1e12 ? bw : floor(w * scale + 0.5);
    double dh = (flags & VKI_GEO_EXACT) && bh < 1e12 ? bh : floor(h * scale + 0.5);
    dw = fmax(dw, 1);
    dh = fmax(dh, 1);
    if (dw > (1 << 24) || dh > (1 << 24)) {
        snprintf(why, n, "the thumbnail would be %.0fx%.0f, a side over the limit of %d", dw, dh, 1 << 24);
        return -1;
    }
    *rw = (int)dw;
    *rh = (int)dh;
    *ow = crop && !(flags & VKI_GEO_EXACT) ? (int)fmin(dw, bw) : *rw;
    *oh = crop && !(flags & VKI_GEO_EXACT) ? (int)fmin(dh, bh) : *rh;
    return 0;
}

static int thumbnail_size(int w, int h, const vki_args *a, int *ow, int *oh, char *why, size_t n)
{
    int rw, rh;
    return sizes(a, w, h, &rw, &rh, ow, oh, why, n);
}

static void thumbnail_min_input(int w, int h, const vki_args *a, int *min_w, int *min_h)
{
    const double *v = a->v;
    const vki_resample rs = { .filter = (vki_filter)(int)v[O_FILTER],
                            .linear = v[O_LINEAR] != 0, .fast = v[O_FAST] != 0 };
    int rw, rh, ow, oh;
    char why[8];
    if (sizes(a, w, h, &rw, &rh, &ow, &oh, why, sizeof why)) {
        *min_w = w;
        *min_h = h;
        return;
    }
    vki_resample_min_input(&rs, w, h, rw, rh, min_w, min_h); /* the resampling's size, before a crop */
}

static int record_thumbnail(vki_rec *r, const vki_step *s)
{
    const double *v = s->args->v;
    vki_resample rs = { .filter = (vki_filter)(int)v[O_FILTER],
                            .linear = v[O_LINEAR] != 0, .fast = v[O_FAST] != 0 };
    int rw, rh, ow, oh;
    char why[256];
    /* the sizes out_size gave (from the geometry's input size); the resampling
     * starts from the actual input, which may be smaller (shrink-on-load) */
    if (sizes(s->args, s->geo_w, s->geo_h, &rw, &rh, &ow, &oh, why, sizeof why))
        return vki_fail(r->e, VKIMG_E_RUNTIME, "thumbnail: %s", why);
    if (rw == ow && rh == oh)
        return vki_record_resample(r, s, &rs);
    /* crop=centre: resample into a scratch image, then cut out its middle */
    vki_step t = *s;
    t.out_w = rw;
    t.out_h = rh;
    t.out_fmt = VKIMG_F32;
    int rc = vki_rec_scratch(r, (VkDeviceSize)rw * rh * s->out_c * 4, "thumbnail before its crop", &t.out);
    if (!rc)
        rc = vki_record_resample(r, &t, &rs);
    if (rc)
        return rc;
    vki_step c = *s;
    c.in = t.out;
    c.w = rw;
    c.h = rh;
    c.in_c = s->out_c;
    c.in_fmt = VKIMG_F32;
    c.in_packed_rgb8_words = false;
    /* vips's centre crop: the slack halved, rounded down */
    int x = (rw - s->out_w) / 2, y = (rh - s->out_h) / 2;
    vki_remap m = vki_crop_remap(x, y);
    return vki_record_remap(r, &c, &m);
}

const vki_op_desc vki_op_thumbnail = {
    .name = "thumbnail",
    .needs = "the size",
    .example = "thumbnail=256",
    .help = "vipsthumbnail's --size: fit inside a box (N, WxH, Wx, xH; > < !), or crop=centre to fill it; fast.",
    .opts = thumbnail_opts,
    .nopts = (int)VKI_ARRAY_LEN(thumbnail_opts),
    .check = thumbnail_check,
    .out_size = thumbnail_size,
    .exact_size = true,
    .min_input = thumbnail_min_input,
    .record = record_thumbnail,
};
