/* Exact moves on the device against their tables (see remap_util.h). */
#include "remap_util.h"
#include "ref.h"
#include "t.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- maps */

rm_map rm_map_new(int in_w, int in_h, int w, int h)
{
    rm_map m = { in_w, in_h, w, h, NULL };
    size_t n = (size_t)w * (size_t)h;
    m.src = gh_calloc(n, sizeof *m.src);
    for (size_t p = 0; p < n; p++)
        m.src[p] = SIZE_MAX;
    return m;
}

void rm_map_free(rm_map *m)
{
    if (!m)
        return;
    free(m->src);
    m->src = NULL;
    m->w = m->h = 0;
}

rm_map rm_then(const rm_map *a, const rm_map *b)
{
    rm_map r = rm_map_new(a->in_w, a->in_h, b->w, b->h);
    if (b->in_w != a->w || b->in_h != a->h) {
        fprintf(stderr, "rm_then: %dx%d then a move of %dx%d\n", a->w, a->h, b->in_w, b->in_h);
        abort();
    }
    for (size_t p = 0; p < (size_t)b->w * b->h; p++)
        r.src[p] = b->src[p] == SIZE_MAX ? SIZE_MAX : a->src[b->src[p]];
    return r;
}

int rm_map_valid(const rm_map *m, int bijective)
{
    size_t nin = (size_t)m->in_w * m->in_h, n = (size_t)m->w * m->h;
    unsigned char *seen = gh_calloc(nin, 1);
    int ok = 1;
    for (size_t p = 0; p < n; p++) {
        if (m->src[p] >= nin) {
            ok = 0;
            break;
        }
        if (seen[m->src[p]]++)
            ok = 0;
    }
    if (ok && bijective && n != nin)
        ok = 0;
    free(seen);
    return ok;
}

int rm_map_equal(const rm_map *a, const rm_map *b)
{
    return a->in_w == b->in_w && a->in_h == b->in_h && a->w == b->w && a->h == b->h &&
           !memcmp(a->src, b->src, (size_t)a->w * a->h * sizeof *a->src);
}

static size_t sample_size(vkimg_fmt f) { return f == VKIMG_U8 ? 1 : f == VKIMG_U16 ? 2 : 4; }

vkimg_image rm_apply(const rm_map *m, const vkimg_image *in)
{
    vkimg_image r;
    memset(&r, 0, sizeof r);
    r.w = m->w;
    r.h = m->h;
    r.c = in->c;
    r.fmt = in->fmt;
    size_t px = (size_t)in->c * sample_size(in->fmt), n = (size_t)m->w * m->h;
    r.data = gh_calloc(n, px);
    for (size_t p = 0; p < n; p++)
        memcpy((unsigned char *)r.data + p * px, (const unsigned char *)in->data + m->src[p] * px, px);
    return r;
}

vkimg_image rm_image(int w, int h, int c, vkimg_fmt fmt, uint64_t seed)
{
    vkimg_image im = ref_random_image(w, h, c, fmt, seed);
    if (fmt == VKIMG_F32) {
        static const float special[] = { -0.0f, -1.5f, 2.75f, 1e30f, -1e30f, INFINITY, -INFINITY, 1e-40f, -3e-39f };
        float *d = im.data;
        size_t n = (size_t)w * h * c;
        unsigned long long s = seed;
        for (size_t k = 0; k < sizeof special / sizeof special[0] && k < n; k++)
            d[(size_t)(t_rand(&s) % n)] = special[k];
        for (size_t i = 0; i < n; i += 7)
            d[i] = special[(i / 7) % (sizeof special / sizeof special[0])];
    }
    return im;
}

/* ---------------------------------------------------------------- bookkeeping */

enum { NFMT = 3 };
static const vkimg_fmt fmts[NFMT] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };

static int fmt_slot(vkimg_fmt f) { return f == VKIMG_U8 ? 0 : f == VKIMG_U16 ? 1 : 2; }

typedef struct group_stats {
    const char *name;
    int runs[NFMT];
    double samples[NFMT], mismatch[NFMT];
} group_stats;

enum { MAX_GROUPS = 24 };
static group_stats stats[MAX_GROUPS];
static int ngroups;

static group_stats *stats_of(const char *name)
{
    for (int i = 0; i < ngroups; i++)
        if (!strcmp(stats[i].name, name))
            return &stats[i];
    if (ngroups == MAX_GROUPS) {
        fprintf(stderr, "remap_util: more than %d groups\n", MAX_GROUPS);
        abort();
    }
    memset(&stats[ngroups], 0, sizeof stats[ngroups]);
    stats[ngroups].name = name;
    return &stats[ngroups++];
}

void rm_print_stats(void)
{
    for (int g = 0; g < ngroups; g++) {
        printf("%s: exact:", stats[g].name);
        const char *sep = " ";
        for (int f = 0; f < NFMT; f++)
            if (stats[g].runs[f]) {
                printf("%s%.0f of %.0f samples differ (%s out, %d runs)", sep, stats[g].mismatch[f],
                       stats[g].samples[f], vkimg_fmt_name(fmts[f]), stats[g].runs[f]);
                sep = ", ";
            }
        printf("\n");
    }
    ngroups = 0;
}

/* ---------------------------------------------------------------- runs */

static int run(vkimg_ctx *ctx, const char *text, const vkimg_image *in, vkimg_fmt out_fmt, const vkimg_run_opts *o,
               vkimg_image *out, vkimg_err *e)
{
    vkimg_pipeline *p = vkimg_pipeline_parse(text, e);
    memset(out, 0, sizeof *out);
    if (!p)
        return -1;
    vkimg_run_opts ro;
    memset(&ro, 0, sizeof ro);
    if (o)
        ro = *o;
    ro.out_fmt = out_fmt;
    gh_runs++;
    int rc = vkimg_run(ctx, p, in, &ro, out, e);
    vkimg_pipeline_free(p);
    return rc;
}

static double sample_at(const vkimg_image *im, size_t i)
{
    switch (im->fmt) {
    case VKIMG_U8: return ((const uint8_t *)im->data)[i];
    case VKIMG_U16: return ((const uint16_t *)im->data)[i];
    default: return ((const float *)im->data)[i];
    }
}

void rm_check(vkimg_ctx *ctx, const char *group, const char *text, const rm_map *m, const vkimg_image *in,
              vkimg_fmt out_fmt, const vkimg_run_opts *o)
{
    group_stats *g = stats_of(group);
    int f = fmt_slot(out_fmt);
    snprintf(cur_case, sizeof cur_case, "%.120s %dx%d c=%d %s->%s orientation %d", text, in->w, in->h, in->c,
             vkimg_fmt_name(in->fmt), vkimg_fmt_name(out_fmt), o ? o->orientation : 0);
    CHECK(m->in_w == in->w && m->in_h == in->h, "%s: the reference map is for %dx%d", cur_case, m->in_w, m->in_h);
    vkimg_err e;
    memset(&e, 0, sizeof e);
    /* the values: the input's, or the device's copy of it in the output format */
    vkimg_image conv = *in, got;
    if (out_fmt != in->fmt) {
        int rc = run(ctx, "copy", in, out_fmt, NULL, &conv, &e);
        CHECK(rc == 0, "%s: copy to %s failed: %s", cur_case, vkimg_fmt_name(out_fmt), e.msg);
        if (rc)
            return;
    }
    int rc = run(ctx, text, in, out_fmt, o, &got, &e);
    CHECK(rc == 0, "%s: failed: %s", cur_case, e.msg);
    if (!rc) {
        vkimg_image exp = rm_apply(m, &conv);
        bool shape = got.w == exp.w && got.h == exp.h && got.c == exp.c && got.fmt == exp.fmt;
        CHECK(shape, "%s: got %dx%d c=%d %s, expected %dx%d c=%d %s", cur_case, got.w, got.h, got.c,
              vkimg_fmt_name(got.fmt), exp.w, exp.h, exp.c, vkimg_fmt_name(exp.fmt));
        if (shape) {
            size_t n = (size_t)exp.w * exp.h * exp.c, ss = sample_size(exp.fmt), bad = 0, first = 0;
            for (size_t i = 0; i < n; i++)
                if (memcmp((unsigned char *)got.data + i * ss, (unsigned char *)exp.data + i * ss, ss) && !bad++)
                    first = i;
            if (bad) {
                size_t px = first / (size_t)exp.c;
                CHECK(bad == 0,
                      "%s: %zu of %zu samples differ; first at output (x=%zu, y=%zu) channel %zu: got %.9g, "
                      "expected %.9g (input pixel %zu)",
                      cur_case, bad, n, px % (size_t)exp.w, px / (size_t)exp.w, first % (size_t)exp.c,
                      sample_at(&got, first), sample_at(&exp, first), m->src[px]);
            } else {
                t_pass++;
            }
            g->samples[f] += (double)n;
            g->mismatch[f] += (double)bad;
        }
        g->runs[f]++;
        ref_image_free(&exp);
    }
    vkimg_image_free(&got);
    if (conv.data != in->data)
        vkimg_image_free(&conv);
}

void rm_check_fails(vkimg_ctx *ctx, const char *text, const vkimg_image *in, const vkimg_run_opts *o, int code,
                    const char *msg)
{
    snprintf(cur_case, sizeof cur_case, "%.120s %dx%d c=%d orientation %d (must fail)", text, in->w, in->h, in->c,
             o ? o->orientation : 0);
    vkimg_err e;
    memset(&e, 0, sizeof e);
    vkimg_image out;
    int rc = run(ctx, text, in, in->fmt, o, &out, &e);
    CHECK(rc != 0, "%s: ran (%dx%d), expected the error \"%s\"", cur_case, out.w, out.h, msg);
    if (rc) {
        CHECK(e.code == code, "%s: code %d, expected %d (%s)", cur_case, e.code, code, e.msg);
        CHECK(!strcmp(e.msg, msg), "%s:\n   got  \"%s\"\n   want \"%s\"", cur_case, e.msg, msg);
    }
    vkimg_image_free(&out);
}
