/* vkimg compare --server: odiff's server protocol (odiff-bin 4.5.0, its
 * src/server.zig and server.js), on one device context for the whole session.
 *
 * On start: {"ready":true}. Then one JSON request per line on stdin:
 *   {"requestId": 1, "base": "a.png", "compare": "b.png", "output": "diff.png",
 *    "options": {"threshold": 0.1, "antialiasing": false, "failOnLayoutDiff": false,
 *                "ignoreRegions": [{"x1": 0, "y1": 0, "x2": 9, "y2": 9}],
 *                "captureDiffLines": false, "captureDiffCols": false}}
 * or, as odiff's compareBuffers, "type": "buffer" with "baseLength",
 * "baseFormat", "compareLength", "compareFormat" instead of the paths, the two
 * files' bytes following the line on stdin (at most 100 MiB each, as odiff).
 * One answer line each:
 *   {"requestId":1,"match":true}
 *   {"requestId":1,"match":false,"reason":"pixel-diff","diffCount":12,"diffPercentage":0.05}
 *     (+ "diffLines":[...], "diffCols":[...] when asked)
 *   {"requestId":1,"match":false,"reason":"layout-diff"}   (sizes differ, failOnLayoutDiff)
 *   {"requestId":1,"error":"Could not load base image: a.png (...)"}
 *   {"error":"Invalid JSON (...)"}   (no request id could be read)
 * The metric is --metric yiq's with the request's threshold (default 0.1) and
 * antialiasing (odiff's: true = anti-aliased pixels are not counted); without
 * failOnLayoutDiff images of different sizes are compared over their overlap,
 * the rest counting as different (odiff's layout handling); the percentage is
 * of the larger extent's pixels, with two decimals. The difference image
 * (pixelmatch's picture) is written only when pixels differ, as odiff does.
 * diffColor, diffOverlay, outputDiffMask and reduceRamUsage are accepted and
 * ignored. The command line's --mask and --ignore regions apply to every
 * request (the request's regions are added).
 *
 * Bounded: a line longer than SERVER_MAX_LINE is answered with an error (and
 * skipped); JSON with more than 4096 values or deeper than 16 is an error. The
 * server exits 0 at the end of its input, 4 when no device can be opened or
 * when standard output fails. */
#define _GNU_SOURCE
#include "compare.h"
#include "jsonr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SERVER_MAX_LINE (1 << 20)
#define SERVER_MAX_BUFFER (100u << 20)

/* Reads one line (without its '\n', '\r\n') into buf (cap bytes, NUL-terminated):
 * its length, -1 at the end of input, -2 when it was longer than cap - 1
 * (the rest of it is read and dropped). */
static long read_line(FILE *in, char *buf, size_t cap)
{
    size_t n = 0;
    bool over = false;
    int c;
    while ((c = getc_unlocked(in)) != EOF && c != '\n') {
        if (n + 1 < cap)
            buf[n++] = (char)c;
        else
            over = true;
    }
    if (c == EOF && n == 0 && !over)
        return -1;
    if (n && buf[n - 1] == '\r')
        n--;
    buf[n] = 0;
    return over ? -2 : (long)n;
}

typedef struct answer {
    bool has_id;
    long long id;
} answer;

static void send_error(const answer *a, const char *msg)
{
    printf("{");
    if (a->has_id)
        printf("\"requestId\":%lld,", a->id);
    printf("\"error\":");
    json_str(stdout, msg);
    printf("}\n");
}

/* A string member of the request, or NULL after an error answer. */
static const char *need_str(const jr_val *obj, const char *key, const answer *an, const char *what)
{
    const jr_val *v = jr_get(obj, key);
    char m[160];
    if (!v) {
        snprintf(m, sizeof m, "Missing %s", what);
        send_error(an, m);
        return NULL;
    }
    if (v->type != JR_STRING || strlen(v->str) != v->len || !v->len) {
        snprintf(m, sizeof m, "%s must be a non-empty string", key);
        send_error(an, m);
        return NULL;
    }
    return v->str;
}

static bool opt_bool(const jr_val *opts, const char *key, bool def, const answer *an, bool *ok)
{
    const jr_val *v = jr_get(opts, key);
    if (!v || v->type == JR_NULL)
        return def;
    if (v->type == JR_TRUE || v->type == JR_FALSE)
        return v->type == JR_TRUE;
    char m[160];
    snprintf(m, sizeof m, "options.%s must be a boolean", key);
    send_error(an, m);
    *ok = false;
    return def;
}

/* Reads len bytes of a buffer request from in. */
static unsigned char *read_buffer(FILE *in, size_t len)
{
    unsigned char *b = malloc(len ? len : 1);
    if (b && fread(b, 1, len, in) != len) {
        free(b);
        return NULL;
    }
    return b;
}

static long long buffer_length(const jr_val *req, const char *key, const answer *an)
{
    const jr_val *v = jr_get(req, key);
    char m[160];
    if (!v) {
        snprintf(m, sizeof m, "Missing %s field", key);
        send_error(an, m);
        return -1;
    }
    if (v->type != JR_NUMBER || !v->is_int || v->i <= 0) {
        send_error(an, "Buffer length must be a positive integer");
        return -1;
    }
    if (v->i > (long long)SERVER_MAX_BUFFER) {
        snprintf(m, sizeof m, "Buffer length exceeds maximum (%u bytes)", SERVER_MAX_BUFFER);
        send_error(an, m);
        return -1;
    }
    return v->i;
}

typedef struct server_ctx {
    vkimg_ctx *ctx;
} server_ctx;

static vkimg_ctx *server_get_ctx(void *user, cmp_ctx_op op, vkimg_err *e)
{
    (void)e;
    return op == CMP_CTX_ACQUIRE || op == CMP_CTX_PEEK ? ((server_ctx *)user)->ctx : NULL;
}

/* diffLines / diffCols: the rows / columns holding a counted pixel (pixelmatch's
 * red in the YIQ picture), and those of the pixels outside the overlap. */
static void print_lines(const cmp_pair *p, bool cols)
{
    const vkimg_image *d = &p->r.diff;
    int W = p->r.width, H = p->r.height;
    int n = cols ? W : H;
    unsigned char *hit = calloc((size_t)n + 1, 1);
    if (!hit)
        return;
    /* indexed (vkimg_compare_opts.diff_indexed): red is the palette's entry 0 */
    const uint32_t red = vkimg_compare_palette()[0];
    if (d->data && (d->c == 1 || d->c == 4))
        for (int y = 0; y < d->h; y++)
            for (int x = 0; x < d->w; x++) {
                const unsigned char *px = (const unsigned char *)d->data + ((size_t)y * d->w + x) * d->c;
                if (d->c == 1 ? px[0] == 0
                              : (px[0] | px[1] << 8 | px[2] << 16 | (uint32_t)px[3] << 24) == red)
                    hit[cols ? x : y] = 1;
            }
    int ow = p->wa < p->wb ? p->wa : p->wb, oh = p->ha < p->hb ? p->ha : p->hb;
    if (p->r.outside)
        for (int i = cols ? ow : oh; i < n; i++)
            hit[i] = 1;
    if (p->r.outside && (cols ? oh < H : ow < W))
        for (int i = 0; i < n; i++)
            hit[i] = 1;
    printf(",\"%s\":[", cols ? "diffCols" : "diffLines");
    bool first = true;
    for (int i = 0; i < n; i++)
        if (hit[i]) {
            printf("%s%d", first ? "" : ",", i);
            first = false;
        }
    printf("]");
    free(hit);
}

/* One request line. */
static void handle(cmp_cfg *base, server_ctx *sc, FILE *in, const char *line, size_t len)
{
    answer an = { 0 };
    jr_doc doc;
    jr_limits lim = { .max_depth = 16, .max_values = 4096 };
    cmp_cfg cfg = *base;
    cmp_pair p = { 0 };
    unsigned char *mem_a = NULL, *mem_b = NULL;
    cfg.rects = NULL;
    cfg.nrects = cfg.caprects = 0;
    if (jr_parse(&doc, line, len, &lim)) {
        char m[220];
        snprintf(m, sizeof m, "Invalid JSON (%s)", doc.err);
        send_error(&an, m);
        goto out;
    }
    const jr_val *req = doc.root;
    if (req->type != JR_OBJECT) {
        send_error(&an, "Expected JSON object");
        goto out;
    }
    const jr_val *rid = jr_get(req, "requestId");
    if (!rid) {
        send_error(&an, "Missing requestId field");
        goto out;
    }
    if (rid->type != JR_NUMBER || !rid->is_int) {
        send_error(&an, "requestId must be an integer");
        goto out;
    }
    an.has_id = true;
    an.id = rid->i;
    const char *output = need_str(req, "output", &an, "output path");
    if (!output)
        goto out;
    const jr_val *opts = jr_get(req, "options");
    if (opts && opts->type != JR_OBJECT && opts->type != JR_NULL) {
        send_error(&an, "options must be an object");
        goto out;
    }
    /* odiff's options */
    bool ok = true;
    const jr_val *t = jr_get(opts, "threshold");
    cfg.o.metric = VKIMG_METRIC_YIQ;
    cfg.o.threshold = 0.1;
    cfg.o.max_diff_pixels = cfg.o.max_diff_ratio = -1; /* odiff: any differing pixel is a difference */
    if (t && t->type != JR_NULL) {
        if (t->type != JR_NUMBER || !(t->num >= 0 && t->num <= 1)) {
            send_error(&an, "options.threshold must be a number in 0..1");
            goto out;
        }
        cfg.o.threshold = t->num;
    }
    cfg.o.aa = opt_bool(opts, "antialiasing", false, &an, &ok);
    bool layout = ok ? opt_bool(opts, "failOnLayoutDiff", false, &an, &ok) : false;
    bool want_lines = ok ? opt_bool(opts, "captureDiffLines", false, &an, &ok) : false;
    bool want_cols = ok ? opt_bool(opts, "captureDiffCols", false, &an, &ok) : false;
    if (!ok)
        goto out;
    cfg.o.allow_size_mismatch = !layout;
    for (int i = 0; i < base->nrects; i++)
        if (cmp_add_rect(&cfg, base->rects[i])) {
            send_error(&an, "out of memory");
            goto out;
        }
    const jr_val *regs = jr_get(opts, "ignoreRegions");
    if (regs && regs->type != JR_NULL) {
        if (regs->type != JR_ARRAY) {
            send_error(&an, "ignoreRegions must be an array");
            goto out;
        }
        int i = 0;
        for (const jr_val *r = regs->child; r; r = r->next, i++) {
            char m[160];
            if (r->type != JR_OBJECT) {
                snprintf(m, sizeof m, "ignoreRegions[%d] must be an object", i);
                send_error(&an, m);
                goto out;
            }
            static const char *const names[4] = { "x1", "y1", "x2", "y2" };
            int v[4];
            for (int k = 0; k < 4; k++) {
                const jr_val *c = jr_get(r, names[k]);
                if (!c) {
                    snprintf(m, sizeof m, "ignoreRegions[%d]: missing required field '%s'", i, names[k]);
                    send_error(&an, m);
                    goto out;
                }
                if (c->type != JR_NUMBER || !c->is_int || c->i < 0 || c->i > 0x7fffffff) {
                    snprintf(m, sizeof m, "ignoreRegions[%d].%s must be a number", i, names[k]);
                    send_error(&an, m);
                    goto out;
                }
                v[k] = (int)c->i;
            }
            if (cmp_add_rect(&cfg, (vkimg_rect){ v[0], v[1], v[2], v[3] })) {
                send_error(&an, "out of memory");
                goto out;
            }
        }
    }
    cfg.o.ignore = cfg.rects;
    cfg.o.nignore = cfg.nrects;
    /* the images: paths, or the bytes after the line */
    const jr_val *type = jr_get(req, "type");
    bool buffers = false;
    if (type && type->type != JR_NULL) {
        if (type->type != JR_STRING || (strcmp(type->str, "buffer") && strcmp(type->str, "file"))) {
            send_error(&an, "Command type must be either 'buffer' or 'file'");
            goto out;
        }
        buffers = !strcmp(type->str, "buffer");
    }
    if (buffers) {
        long long la = buffer_length(req, "baseLength", &an);
        if (la < 0)
            goto out;
        long long lb = buffer_length(req, "compareLength", &an);
        if (lb < 0)
            goto out;
        if (!(mem_a = read_buffer(in, (size_t)la)) || !(mem_b = read_buffer(in, (size_t)lb))) {
            send_error(&an, "Could not read the image buffers from standard input");
            goto out;
        }
        p.a = strdup("base buffer");
        p.b = strdup("compare buffer");
        p.mem_a = mem_a, p.len_a = (size_t)la;
        p.mem_b = mem_b, p.len_b = (size_t)lb;
    } else {
        const char *pa = need_str(req, "base", &an, "base path");
        if (!pa)
            goto out;
        const char *pb = need_str(req, "compare", &an, "compare path");
        if (!pb)
            goto out;
        p.a = strdup(pa);
        p.b = strdup(pb);
    }
    vkimg_err e = { 0 };
    if (vkimg_check_output(output, &e)) {
        char m[1200];
        snprintf(m, sizeof m, "Failed to save diff output: %s", e.msg);
        send_error(&an, m);
        goto out;
    }
    p.diff_out = strdup(output);
    if (!p.a || !p.b || !p.diff_out) {
        send_error(&an, "out of memory");
        goto out;
    }
    cfg.diff_path = output;
    cfg.diff_on_fail = true; /* written only when pixels differ, as odiff */
    cfg.keep_diff = want_lines || want_cols;
    cmp_pair_run(&cfg, &p, server_get_ctx, sc, true);
    if (p.kind == CMP_ERROR) {
        char m[1300];
        if (p.err_side == 1)
            snprintf(m, sizeof m, "Could not load base image: %s (%s)", p.a, p.err);
        else if (p.err_side == 2)
            snprintf(m, sizeof m, "Could not load comparison image: %s (%s)", p.b, p.err);
        else
            snprintf(m, sizeof m, "Diff failed: %s", p.err);
        send_error(&an, m);
    } else if (p.kind == CMP_MISMATCH) {
        if (layout && p.ca == p.cb)
            printf("{\"requestId\":%lld,\"match\":false,\"reason\":\"layout-diff\"}\n", an.id);
        else {
            char m[1300];
            snprintf(m, sizeof m, "Diff failed: %s", p.err);
            send_error(&an, m);
        }
    } else if (p.r.ndiff == 0) {
        printf("{\"requestId\":%lld,\"match\":true}\n", an.id);
    } else {
        double pct = p.r.pixels ? 100.0 * (double)p.r.ndiff / (double)p.r.pixels : 0;
        printf("{\"requestId\":%lld,\"match\":false,\"reason\":\"pixel-diff\",\"diffCount\":%llu,"
               "\"diffPercentage\":%.2f",
               an.id, (unsigned long long)p.r.ndiff, pct);
        if (want_lines)
            print_lines(&p, false);
        if (want_cols)
            print_lines(&p, true);
        printf("}\n");
    }
out:
    fflush(stdout);
    cmp_pair_free(&p);
    free(mem_a);
    free(mem_b);
    free(cfg.rects);
    jr_free(&doc);
}

int cmp_run_server(cmp_cfg *cfg)
{
    vkimg_err e = { 0 };
    vkimg_ctx_opts co = cli_ctx_opts(&cfg->common);
    server_ctx sc = { vkimg_ctx_create(&co, &e) };
    if (!sc.ctx)
        return cli_error(CLI_CMP_ERROR, "compare --server: %s", e.msg);
    char *line = malloc(SERVER_MAX_LINE + 1);
    if (!line) {
        vkimg_ctx_destroy(sc.ctx);
        return cli_error(CLI_CMP_ERROR, "out of memory");
    }
    printf("{\"ready\":true}\n");
    fflush(stdout);
    int rc = CLI_CMP_PASS;
    for (;;) {
        long n = read_line(stdin, line, SERVER_MAX_LINE + 1);
        if (n == -1)
            break;
        if (n == -2) {
            answer an = { 0 };
            char m[120];
            snprintf(m, sizeof m, "Request line too long (more than %d bytes)", SERVER_MAX_LINE);
            send_error(&an, m);
            fflush(stdout);
        } else if (n > 0) {
            handle(cfg, &sc, stdin, line, (size_t)n);
        }
        if (ferror(stdout)) {
            rc = cli_error(CLI_CMP_ERROR, "compare --server: cannot write the answers to standard output");
            break;
        }
    }
    if (vkimg_ctx_validation_messages(sc.ctx)) {
        cli_error(CLI_CMP_ERROR, "%d validation message(s) reported (see above)", vkimg_ctx_validation_messages(sc.ctx));
        rc = CLI_CMP_ERROR;
    }
    free(line);
    vkimg_ctx_destroy(sc.ctx);
    return rc;
}
