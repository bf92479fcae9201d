/* crop: a region given as ImageMagick geometry WxH+X+Y, or by w, h and gravity
 * (with x, y offsets from there), clipped to the image; exact (remap.h). */
#include "ops/remap.h"
#include "pipeline/geometry.h"
#include "core/util.h"

#include <stdio.h>

enum { O_GEOMETRY, O_W, O_H, O_GRAVITY, O_X, O_Y };

static const vki_opt crop_opts[] = {
    [O_GEOMETRY] = { .name = "geometry", .type = VKI_OPT_TEXT, .placeholder = VKI_REG_SYNTAX,
                     .parse = vki_region_parse, .format = vki_region_format, .optional = true,
                     .help = "ImageMagick geometry: the region WxH at +X+Y (offsets from the gravity's corner; "
                             "default the top-left); W%xH% or W% in percent of the image's sides" },
    [O_W] = { .name = "w", .type = VKI_OPT_INT, .def = 0, .min = 0, .max = 1 << 24,
              .help = "width of the region (0: the image's; with h, instead of geometry)" },
    [O_H] = { .name = "h", .type = VKI_OPT_INT, .def = 0, .min = 0, .max = 1 << 24,
              .help = "height of the region (0: the image's)" },
    [O_GRAVITY] = { .name = "gravity", .type = VKI_OPT_ENUM, .def = 6 /* northwest */, .choices = vki_gravity_names,
                    .help = "where the region sits before the offsets apply" },
    [O_X] = { .name = "x", .type = VKI_OPT_INT, .def = 0, .min = -(1 << 24), .max = 1 << 24,
              .help = "offset right from the gravity's position (with w, h)" },
    [O_Y] = { .name = "y", .type = VKI_OPT_INT, .def = 0, .min = -(1 << 24), .max = 1 << 24,
              .help = "offset down from the gravity's position (with w, h)" },
};

static int crop_check(vki_args *a, char *why, size_t n, int *bad)
{
    /* w, h, x, y at 0 (the image's size, no offset) say nothing beside a geometry,
     * and the canonical text (vkimg_pipeline_describe) spells them out: it reads back */
    static const int others[4] = { O_W, O_H, O_X, O_Y };
    for (int k = 0; k < 4 && a->v[O_GEOMETRY]; k++)
        if (a->set[others[k]] && a->v[others[k]] != 0) {
            snprintf(why, n, "give the region as geometry (WxH+X+Y) or as w, h, x, y, not both");
            *bad = others[k];
            return -1;
        }
    if (!a->v[O_GEOMETRY] && !a->set[O_W] && !a->set[O_H]) {
        snprintf(why, n, "missing the region: geometry WxH+X+Y, or w and/or h");
        *bad = -1;
        return -1;
    }
    return 0;
}

/* The region in image coordinates, clipped: 0, or -1 when nothing is left. */
static int region(const vki_args *a, int W, int H, int *x0, int *y0, int *w, int *h, char *why, size_t n)
{
    long rw, rh, rx, ry;
    int gx, gy;
    vki_gravity g = (vki_gravity)(int)a->v[O_GRAVITY];
    if (a->v[O_GEOMETRY]) {
        const double *x = a->x[O_GEOMETRY];
        vki_region_size(x, W, H, &rw, &rh);
        rx = (long)x[VKI_REG_X];
        ry = (long)x[VKI_REG_Y];
    } else {
        rw = a->v[O_W] > 0 ? (long)a->v[O_W] : W;
        rh = a->v[O_H] > 0 ? (long)a->v[O_H] : H;
        rx = (long)a->v[O_X];
        ry = (long)a->v[O_Y];
    }
    /* ImageMagick's gravity: the offsets point inward from the gravity's edge */
    vki_gravity_place(g, W, H, (int)rw, (int)rh, &gx, &gy);
    bool east = g == VKI_GRAV_EAST || g == VKI_GRAV_NORTHEAST || g == VKI_GRAV_SOUTHEAST;
    bool south = g == VKI_GRAV_SOUTH || g == VKI_GRAV_SOUTHEAST || g == VKI_GRAV_SOUTHWEST;
    rx = east ? -rx : rx;
    ry = south ? -ry : ry;
    long l = (long)gx + rx, t = (long)gy + ry, r = l + rw, b = t + rh;
    if (l < 0)
        l = 0;
    if (t < 0)
        t = 0;
    if (r > W)
        r = W;
    if (b > H)
        b = H;
    if (r <= l || b <= t) {
        snprintf(why, n, "nothing of the %dx%d image is left (the region is outside it)", W, H);
        return -1;
    }
    *x0 = (int)l;
    *y0 = (int)t;
    *w = (int)(r - l);
    *h = (int)(b - t);
    return 0;
}

static int crop_size(int w, int h, const vki_args *a, int *ow, int *oh, char *why, size_t n)
{
    int x, y;
    return region(a, w, h, &x, &y, ow, oh, why, n);
}

static int record_crop(vki_rec *r, const vki_step *s)
{
    int x, y, w, h;
    char why[256];
    if (region(s->args, s->w, s->h, &x, &y, &w, &h, why, sizeof why))
        return vki_fail(r->e, VKIMG_E_RUNTIME, "crop: %s", why);
    vki_remap m = vki_crop_remap(x, y);
    return vki_record_remap(r, s, &m);
}

const vki_op_desc vki_op_crop = {
    .name = "crop",
    .needs = "the region (a geometry, or w and/or h)",
    .example = "crop=640x480+10+20",
    .help = "Crop to a region (WxH+X+Y, or w, h, gravity, x, y), clipped to the image; exact.",
    .opts = crop_opts,
    .nopts = (int)VKI_ARRAY_LEN(crop_opts),
    .check = crop_check,
    .out_size = crop_size,
    .moves = vki_moves_always,
    .record = record_crop,
};
