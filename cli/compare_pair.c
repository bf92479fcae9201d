/* vkimg compare's pairs (compare.h): running one pair (read, identical-bytes
 * check, decode, compare, difference image, the report's copies), its JSON and
 * text outputs, --ignore's regions, and the atomic file writes of the
 * command's outputs. The command itself (options, modes) is compare.c. */
#define _GNU_SOURCE
#define _GNU_SOURCE
#include "compare.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

int cmp_add_rect(cmp_cfg *cfg, vkimg_rect r)
{
    if (cfg->nrects == cfg->caprects) {
        if (cfg->caprects >= 1 << 20)
            return -1;
        int cap = cfg->caprects ? 2 * cfg->caprects : 8;
        vkimg_rect *n = realloc(cfg->rects, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        cfg->rects = n;
        cfg->caprects = cap;
    }
    cfg->rects[cfg->nrects++] = r;
    cfg->o.ignore = cfg->rects;
    cfg->o.nignore = cfg->nrects;
    return 0;
}

/* A decimal integer 0..INT_MAX at *p (advanced); -1 if none. */
static long region_num(const char **p)
{
    const char *s = *p;
    long v = 0;
    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > INT_MAX)
            return -1;
        s++;
    }
    *p = s;
    return v;
}

int cmp_parse_regions(cmp_cfg *cfg, const char *text, vkimg_err *e)
{
    const char *p = text;
    for (;;) {
        const char *start = p;
        long v[4];
        static const char sep[4] = { ':', '-', ':', 0 };
        for (int k = 0; k < 4; k++) {
            while (*p == ' ')
                p++;
            if ((v[k] = region_num(&p)) < 0 || (sep[k] && *p++ != sep[k])) {
                snprintf(e->msg, sizeof e->msg,
                         "--ignore '%s': '%.40s' is not x1:y1-x2:y2 (non-negative integers, inclusive corners)", text,
                         start);
                return -1;
            }
        }
        if (v[2] < v[0] || v[3] < v[1]) {
            snprintf(e->msg, sizeof e->msg, "--ignore '%s': in %ld:%ld-%ld:%ld the second corner is above or left of "
                     "the first", text, v[0], v[1], v[2], v[3]);
            return -1;
        }
        if (cmp_add_rect(cfg, (vkimg_rect){ (int)v[0], (int)v[1], (int)v[2], (int)v[3] })) {
            snprintf(e->msg, sizeof e->msg, "--ignore: too many regions (out of memory)");
            return -1;
        }
        while (*p == ' ')
            p++;
        if (!*p)
            return 0;
        if (*p++ != ',') {
            snprintf(e->msg, sizeof e->msg, "--ignore '%s': regions are separated by ','", text);
            return -1;
        }
    }
}

/* ---------------------------------------------------------------- files */

static void dir_of(const char *path, char *buf, size_t n)
{
    size_t l = strnlen(path, n - 1);
    memcpy(buf, path, l);
    buf[l] = 0;
    char *s = strrchr(buf, '/');
    if (!s)
        snprintf(buf, n, ".");
    else if (s == buf)
        buf[1] = 0;
    else
        *s = 0;
}

/* Reads a whole file (at most INT_MAX bytes, as the library's loader). */
static int read_all(const char *path, unsigned char **buf, size_t *len, char *err, size_t errn)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errn, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        int en = errno;
        snprintf(err, errn, "%s: cannot read: %s", path,
                 S_ISDIR(st.st_mode) ? strerror(EISDIR) : en ? strerror(en) : "not a regular file");
        close(fd);
        return -1;
    }
    if (st.st_size > INT_MAX) {
        snprintf(err, errn, "%s: file too large (%lld bytes; at most %d)", path, (long long)st.st_size, INT_MAX);
        close(fd);
        return -1;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    unsigned char *b = malloc(cap);
    if (!b) {
        snprintf(err, errn, "%s: out of memory (%zu bytes)", path, cap);
        close(fd);
        return -1;
    }
    for (;;) {
        if (n == cap) { /* it grew while read */
            snprintf(err, errn, "%s: the file changed while it was read", path);
            free(b);
            close(fd);
            return -1;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errn, "%s: cannot read: %s", path, strerror(errno));
            free(b);
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (!n) {
        snprintf(err, errn, "%s: empty file", path);
        free(b);
        return -1;
    }
    *buf = b;
    *len = n;
    return 0;
}

int cmp_copy_atomic(const char *from, const char *to, vkimg_err *e)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    char why[256];
    if (read_all(from, &buf, &len, why, sizeof why)) {
        snprintf(e->msg, sizeof e->msg, "%s", why);
        return -1;
    }
    int rc = vkimg_write_file(to, buf, len, e);
    free(buf);
    return rc ? -1 : 0;
}

int cmp_mkdirs_for(const char *path, vkimg_err *e)
{
    char dir[4096];
    dir_of(path, dir, sizeof dir);
    for (char *p = dir + 1;; p++) {
        bool end = !*p;
        if (*p == '/' || end) {
            char c = *p;
            *p = 0;
            if (mkdir(dir, 0755) && errno != EEXIST) {
                snprintf(e->msg, sizeof e->msg, "%.900s: cannot create directory: %s", dir, strerror(errno));
                return -1;
            }
            *p = c;
        }
        if (end)
            break;
    }
    return 0;
}


/* ---------------------------------------------------------------- one pair */


/* Width, height, channels and sample format from a PNG header (for files
 * that are not decoded); false when it is not a PNG or the channels depend on
 * chunks further on (palette). */
static bool png_header(const unsigned char *b, size_t n, int *w, int *h, int *c, vkimg_fmt *f)
{
    static const unsigned char sig[8] = { 137, 80, 78, 71, 13, 10, 26, 10 };
    if (n < 33 || memcmp(b, sig, 8) || memcmp(b + 12, "IHDR", 4))
        return false;
    uint32_t W = (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19];
    uint32_t H = (uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | (uint32_t)b[22] << 8 | b[23];
    int depth = b[24], ct = b[25];
    static const int chans[7] = { 1, 0, 3, 0, 2, 0, 4 };
    if (!W || !H || W > INT_MAX || H > INT_MAX || ct > 6 || !chans[ct])
        return false;
    *w = (int)W;
    *h = (int)H;
    *c = chans[ct];
    *f = depth == 16 ? VKIMG_U16 : VKIMG_U8;
    return true;
}

typedef struct decode_job {
    const unsigned char *buf;
    size_t len;
    const char *name;
    cmp_ctx_fn get_ctx; /* decode into the device's memory where its context is open */
    void *ctx_user;
    unsigned char *owned; /* buf, to free as soon as the decoder is done with it (or NULL) */
    vkimg_image im;
    vkimg_err e;
    int rc;
    double ms;
} decode_job;

/* Zero-copy: the pixels into memory the device reads in place, where the context
 * is open by the time the decoder allocates (else ordinary memory). */
static int decode_alloc(void *user, vkimg_image *im, int w, int h, int c, vkimg_fmt fmt, vkimg_err *e)
{
    const decode_job *j = user;
    vkimg_ctx *ctx = j->get_ctx ? j->get_ctx(j->ctx_user, CMP_CTX_PEEK, NULL) : NULL;
    return ctx ? vkimg_image_alloc_device(ctx, im, w, h, c, fmt, e) : 1;
}

/* The file's bytes are read no more (a PNG's are once inflated): freed while the
 * rest decodes, so that the files and the images are not all in memory at once. */
static void decode_input_done(void *user)
{
    decode_job *j = user;
    free(j->owned);
    j->owned = NULL;
}

static void *decode_thread(void *arg)
{
    decode_job *j = arg;
    double t = cli_now_ms();
    vkimg_load_opts lo = { .alloc = decode_alloc, .input_done = decode_input_done, .user = j };
    j->rc = vkimg_load_memory(j->buf, j->len, j->name, &lo, &j->im, &j->e);
    j->ms = cli_now_ms() - t;
    return NULL;
}

/* Opens the context while the images decode (two images: cmp_pair_run). */
typedef struct ctx_job {
    cmp_ctx_fn get_ctx;
    void *user;
    vkimg_err e;
} ctx_job;

static void *ctx_thread(void *arg)
{
    ctx_job *c = arg;
    c->get_ctx(c->user, CMP_CTX_ACQUIRE, &c->e);
    return NULL;
}

/* An image of 1..3 channels as RGBA (gray -> R = G = B; alpha: the maximum) in
 * place, for --metric yiq of images whose channel counts differ. */
static int to_rgba(vkimg_image *im, vkimg_err *e)
{
    if (im->c == 4)
        return 0;
    vkimg_image o = { 0 };
    int rc = vkimg_image_alloc(&o, im->w, im->h, 4, im->fmt, e);
    if (rc)
        return rc;
    size_t ss = vkimg_fmt_size(im->fmt), n = (size_t)im->w * im->h;
    unsigned char one[8] = { 0 };
    if (im->fmt == VKIMG_U8)
        one[0] = 255;
    else if (im->fmt == VKIMG_U16)
        one[0] = one[1] = 255;
    else {
        float f1 = 1.0f;
        memcpy(one, &f1, sizeof f1);
    }
    const unsigned char *s = im->data;
    unsigned char *d = o.data;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *sp = s + i * im->c * ss;
        unsigned char *dp = d + i * 4 * ss;
        if (im->c <= 2) {
            memcpy(dp, sp, ss);
            memcpy(dp + ss, sp, ss);
            memcpy(dp + 2 * ss, sp, ss);
            memcpy(dp + 3 * ss, im->c == 2 ? sp + ss : one, ss);
        } else {
            memcpy(dp, sp, 3 * ss);
            memcpy(dp + 3 * ss, one, ss);
        }
    }
    vkimg_image_free(im);
    *im = o;
    return 0;
}

/* Writes the U8 diff image in the format the path's extension takes (pal: the
 * colours of an indexed one, vkimg_compare_opts.diff_indexed; else NULL). */
static int save_diff(const char *path, const vkimg_image *d, const uint32_t *pal, vkimg_err *e)
{
    vkimg_fmt want = vkimg_file_fmt(vkimg_file_kind_of(path), VKIMG_U8);
    /* difference images are mostly flat: a fast deflate level compresses them
     * nearly as well as the default one, in a fraction of the time; and they have
     * few colours (a faded gray copy, the marks): a palette image (a quarter of the
     * data to filter and compress, the same pixels) */
    vkimg_save_opts so = { .png_level = 2, .png_palette = true, .palette = pal };
    if (want == VKIMG_U8)
        return vkimg_save(path, d, &so, e);
    vkimg_image f = { 0 }, rgba = { 0 };
    int rc = 0;
    if (pal) { /* the colours (of the indices in the first channel), then the samples the format takes */
        if ((rc = vkimg_image_expand_palette(d, pal, &rgba, e)))
            return rc;
        d = &rgba;
    }
    if ((rc = vkimg_image_alloc(&f, d->w, d->h, d->c, want, e))) {
        vkimg_image_free(&rgba);
        return rc;
    }
    size_t n = (size_t)d->w * d->h * d->c;
    for (size_t i = 0; i < n; i++) {
        double v = ((const uint8_t *)d->data)[i];
        if (want == VKIMG_F32)
            ((float *)f.data)[i] = (float)(v / 255.0);
        else if (want == VKIMG_U16)
            ((uint16_t *)f.data)[i] = (uint16_t)(v * 257);
    }
    so.palette = NULL;
    rc = vkimg_save(path, &f, &so, e);
    vkimg_image_free(&f);
    vkimg_image_free(&rgba);
    return rc;
}

static const char *ext_of(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot + 1 : "";
}

static bool browser_shows(const char *path)
{
    static const char *const ok[] = { "png", "jpg", "jpeg", "webp", "gif", "bmp", NULL };
    const char *x = ext_of(path);
    for (int i = 0; ok[i]; i++)
        if (!strcasecmp(x, ok[i]))
            return true;
    return false;
}

/* The report's copy of one image of the pair ("img/<index>-<what>.<ext>"): the
 * file as it is when a browser shows it, else the decoded image as PNG (8 and
 * 16-bit images; none for float ones). */
static char *report_image(const cmp_cfg *cfg, const cmp_pair *p, const char *what, const char *src,
                          const vkimg_image *decoded)
{
    if (!src)
        return NULL;
    char rel[64], path[4200];
    vkimg_err e = { 0 };
    bool as_is = browser_shows(src);
    if (!as_is && (!decoded || !decoded->data || (decoded->fmt != VKIMG_U8 && decoded->fmt != VKIMG_U16)))
        return NULL;
    char x[8];
    snprintf(x, sizeof x, "%s", as_is ? ext_of(src) : "png");
    for (char *q = x; *q; q++)
        *q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
    snprintf(rel, sizeof rel, "img/%d-%s.%s", p->index, what, x);
    snprintf(path, sizeof path, "%s/%s", cfg->report_dir, rel);
    int rc = as_is ? cmp_copy_atomic(src, path, &e) : vkimg_save(path, decoded, &(vkimg_save_opts){ .png_level = 2 }, &e);
    if (rc) {
        cli_error(CLI_CMP_ERROR, "--report: %s", e.msg);
        return NULL;
    }
    return strdup(rel);
}

void cmp_pair_free(cmp_pair *p)
{
    free(p->name);
    free(p->a);
    free(p->b);
    free(p->diff_out);
    free(p->rep_a);
    free(p->rep_b);
    free(p->rep_diff);
    vkimg_image_free(&p->r.diff);
    memset(p, 0, sizeof *p);
}

static void set_error(cmp_pair *p, int code, const char *msg)
{
    p->kind = code == CLI_CMP_MISMATCH ? CMP_MISMATCH : CMP_ERROR;
    p->code = code;
    snprintf(p->err, sizeof p->err, "%s", msg);
}

void cmp_pair_run(const cmp_cfg *cfg, cmp_pair *p, cmp_ctx_fn get_ctx, void *ctx_user, bool parallel)
{
    double t0 = cli_now_ms();
    unsigned char *ba = NULL, *bb = NULL;
    size_t la = 0, lb = 0;
    decode_job ja = { 0 }, jb = { 0 };
    bool acquired = false, ctx_early = false;
    char err[1100];
    const vkimg_compare_opts *o = &cfg->o;
    const bool yiq = o->metric == VKIMG_METRIC_YIQ;
    p->r.ssim = NAN;
    if (!p->a || !p->b) { /* directory mode: a file on one side only */
        p->kind = p->a ? CMP_MISSING : CMP_NEW;
        p->code = p->a || cfg->fail_on_new ? CLI_CMP_FAIL : CLI_CMP_PASS;
        if (cfg->report_dir) {
            p->rep_a = report_image(cfg, p, "expected", p->a, NULL);
            p->rep_b = report_image(cfg, p, "actual", p->b, NULL);
        }
        goto done;
    }
    if (p->mem_a) {
        ba = (unsigned char *)p->mem_a, la = p->len_a;
        bb = (unsigned char *)p->mem_b, lb = p->len_b;
    } else if (read_all(p->a, &ba, &la, err, sizeof err) || read_all(p->b, &bb, &lb, err, sizeof err)) {
        set_error(p, CLI_CMP_ERROR, err);
        p->err_side = ba ? 2 : 1;
        goto done;
    }
    p->bytes_a = (long long)la;
    p->bytes_b = (long long)lb;
    p->read_ms = cli_now_ms() - t0;
    const bool identical = la == lb && !memcmp(ba, bb, la);
    /* a difference image to write: an identical pair is decoded once */
    const bool need_diff = p->diff_out && !cfg->diff_on_fail && !cfg->diff_unless_pass;
    if (identical && !need_diff) {
        p->kind = CMP_IDENTICAL;
        p->code = CLI_CMP_PASS;
        if (png_header(ba, la, &p->wa, &p->ha, &p->ca, &p->fa)) {
            p->wb = p->wa, p->hb = p->ha, p->cb = p->ca, p->fb = p->fa;
            p->fmt_known = true;
            p->r.width = p->wa;
            p->r.height = p->ha;
            p->r.channels = yiq ? 4 : p->ca;
            p->r.pixels = p->r.compared = (uint64_t)p->wa * (uint64_t)p->ha;
        }
        p->r.psnr = INFINITY;
        p->r.ssim = o->ssim ? 1.0 : NAN;
        p->r.verdict = VKIMG_CMP_OK;
        if (cfg->report_dir)
            p->rep_b = report_image(cfg, p, "actual", p->b, NULL);
        goto done;
    }
    /* decode: B on a second thread (A on this one); two images: the context opens
     * meanwhile on a third, and they decode into its memory if it is open in time */
    double td = cli_now_ms();
    ja = (decode_job){ .buf = ba, .len = la, .name = p->a, .get_ctx = get_ctx, .ctx_user = ctx_user,
                       .owned = p->mem_a ? NULL : ba };
    jb = (decode_job){ .buf = bb, .len = lb, .name = p->b, .get_ctx = get_ctx, .ctx_user = ctx_user,
                       .owned = p->mem_a ? NULL : bb };
    ctx_job cj = { get_ctx, ctx_user, { 0 } };
    pthread_t tid, ctid;
    if (parallel) { /* the decoders wait for it from the start (PEEK) and decode into its memory */
        get_ctx(ctx_user, CMP_CTX_SOON, NULL);
        ctx_early = !pthread_create(&ctid, NULL, ctx_thread, &cj);
        if (!ctx_early) /* no thread: open it here, before the decoders wait for it */
            ctx_thread(&cj);
    }
    bool threaded = parallel && !identical && !pthread_create(&tid, NULL, decode_thread, &jb);
    decode_thread(&ja);
    if (threaded)
        pthread_join(tid, NULL);
    else if (!identical)
        decode_thread(&jb);
    if (ctx_early)
        pthread_join(ctid, NULL);
    p->decode_ms = cli_now_ms() - td;
    free(ja.owned); /* where the decoders have not freed them (B when the files are the same) */
    free(jb.owned);
    ja.owned = jb.owned = NULL;
    ba = bb = NULL;
    if (ja.rc || (!identical && jb.rc)) {
        set_error(p, CLI_CMP_ERROR, ja.rc ? ja.e.msg : jb.e.msg);
        p->err_side = ja.rc ? 1 : 2;
        goto done;
    }
    vkimg_image *A = &ja.im, *B = identical ? &ja.im : &jb.im;
    p->wa = A->w, p->ha = A->h, p->ca = A->c, p->fa = A->fmt;
    p->wb = B->w, p->hb = B->h, p->cb = B->c, p->fb = B->fmt;
    p->fmt_known = true;
    if (cfg->mask.data && (cfg->mask.w != A->w || cfg->mask.h != A->h)) {
        snprintf(err, sizeof err, "--mask %s is %dx%d, the images %dx%d: a mask must be the size of the first image",
                 cfg->mask_path, cfg->mask.w, cfg->mask.h, A->w, A->h);
        set_error(p, CLI_CMP_ERROR, err);
        goto done;
    }
    vkimg_err e = { 0 };
    if (yiq && A->c != B->c && (to_rgba(A, &e) || to_rgba(B, &e))) {
        set_error(p, CLI_CMP_ERROR, e.msg);
        goto done;
    }
    if (A->c != B->c || ((A->w != B->w || A->h != B->h) && !o->allow_size_mismatch)) {
        snprintf(err, sizeof err,
                 "compare: the images differ in size or channels, not compared: %s is %dx%d with %d channel(s), %s is "
                 "%dx%d with %d channel(s)",
                 p->a, p->wa, p->ha, p->ca, p->b, p->wb, p->hb, p->cb);
        set_error(p, CLI_CMP_MISMATCH, err);
        if (cfg->report_dir) {
            p->rep_a = report_image(cfg, p, "expected", p->a, A);
            p->rep_b = report_image(cfg, p, "actual", p->b, B);
        }
        goto done;
    }
    double tg = cli_now_ms();
    vkimg_ctx *ctx = get_ctx(ctx_user, CMP_CTX_ACQUIRE, &e);
    if (!ctx) {
        set_error(p, CLI_CMP_ERROR, e.msg);
        goto done;
    }
    acquired = true;
    vkimg_compare_opts oo = *o;
    oo.want_diff = p->diff_out || cfg->report_dir || cfg->keep_diff;
    /* the same pixels (other bytes: another encoder) pass: no picture unless it is
     * written for passing pairs too (vkimg_compare then has nothing to run) */
    oo.diff_unless_equal = !need_diff;
    /* two images: the difference image stays where the device wrote it (the context
     * then lives until the pair is done) */
    oo.device_diff = parallel && oo.want_diff && !cfg->report_dir && !cfg->keep_diff;
    /* YIQ: a byte a pixel, a quarter of the memory and of the bytes to write */
    oo.diff_indexed = o->metric == VKIMG_METRIC_YIQ;
    /* ... over B's pixels where it is in device memory that is the host's (no
     * memory for the picture; B then stays until the picture is written) */
    oo.diff_over_b = oo.device_diff;
    const uint32_t *diff_pal = oo.diff_indexed ? vkimg_compare_palette() : NULL;
    int crc = vkimg_compare(ctx, A, B, &oo, &p->r, cfg->common.timing ? &p->tm : NULL, &e);
    /* the picture may be a view of B's memory (diff_over_b) */
    const bool diff_in_b = !crc && oo.want_diff && p->r.diff.data == B->data;
    if (!cfg->report_dir) { /* the pixels are not needed any more: less memory while the diff is encoded */
        if (!diff_in_b)
            vkimg_image_free(&jb.im);
        if (!diff_in_b || B != &ja.im)
            vkimg_image_free(&ja.im);
        get_ctx(ctx_user, CMP_CTX_TRIM, NULL); /* their buffers too (one pair: no run reuses them) */
    }
    /* two images: the context goes now, with its buffers, unless the difference
     * image or the images kept for the report live in its memory */
    if (!(parallel && ((oo.device_diff && p->r.diff.data) || ja.im.priv || jb.im.priv))) {
        get_ctx(ctx_user, CMP_CTX_RELEASE, NULL);
        acquired = false;
    }
    if (crc) {
        set_error(p, p->r.verdict == VKIMG_CMP_MISMATCH ? CLI_CMP_MISMATCH : CLI_CMP_ERROR, e.msg);
        goto done;
    }
    p->gpu_ms = cli_now_ms() - tg;
    p->kind = identical ? CMP_IDENTICAL : CMP_COMPARED;
    p->code = p->r.verdict == VKIMG_CMP_FAIL ? CLI_CMP_FAIL : p->r.verdict == VKIMG_CMP_WARN ? CLI_CMP_WARN
                                                                                            : CLI_CMP_PASS;
    double te = cli_now_ms();
    bool write = p->diff_out && (cfg->diff_on_fail ? p->code == CLI_CMP_FAIL
                                                   : (!cfg->diff_unless_pass || p->code != CLI_CMP_PASS));
    if (write) {
        if ((p->name && cmp_mkdirs_for(p->diff_out, &e)) || save_diff(p->diff_out, &p->r.diff, diff_pal, &e)) {
            snprintf(err, sizeof err, "compare: --diff: %s", e.msg);
            set_error(p, CLI_CMP_ERROR, err);
            goto done;
        }
        p->diff_written = true;
    }
    if (cfg->report_dir) {
        if (p->code != CLI_CMP_PASS) {
            p->rep_a = report_image(cfg, p, "expected", p->a, A);
            char rel[64], path[4200];
            snprintf(rel, sizeof rel, "img/%d-diff.png", p->index);
            snprintf(path, sizeof path, "%s/%s", cfg->report_dir, rel);
            bool png = p->diff_written && !strcasecmp(ext_of(p->diff_out), "png");
            int rc = png ? cmp_copy_atomic(p->diff_out, path, &e)
                         : save_diff(path, &p->r.diff, diff_pal, &e);
            if (rc)
                cli_error(CLI_CMP_ERROR, "--report: %s", e.msg);
            else
                p->rep_diff = strdup(rel);
        }
        p->rep_b = report_image(cfg, p, "actual", p->b, B);
    }
    p->encode_ms = cli_now_ms() - te;
done:
    if (!cfg->keep_diff)
        vkimg_image_free(&p->r.diff);
    vkimg_image_free(&jb.im); /* empty when the files are identical (B is A) */
    vkimg_image_free(&ja.im);
    if (acquired || (ctx_early && parallel)) /* after what lives in its memory */
        get_ctx(ctx_user, CMP_CTX_RELEASE, NULL);
    if (!p->mem_a) {
        free(ba);
        free(bb);
    }
    p->total_ms = cli_now_ms() - t0;
}
