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

int cmp_write_atomic(const char *path, int (*fn)(FILE *f, void *user), void *user, vkimg_err *e)
{
    char dir[4096], tmp[4200];
    dir_of(path, dir, sizeof dir);
    snprintf(tmp, sizeof tmp, "%s/.vkimg-XXXXXX.tmp", dir);
    int fd = mkstemps(tmp, 4);
    if (fd < 0) {
        snprintf(e->msg, sizeof e->msg, "%.900s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        snprintf(e->msg, sizeof e->msg, "%.900s: cannot write: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    int rc = fn(f, user);
    bool bad = rc || ferror(f);
    int en = errno;
    if (fclose(f))
        bad = true, en = errno;
    if (bad || rename(tmp, path)) {
        if (!bad)
            en = errno;
        snprintf(e->msg, sizeof e->msg, "%.900s: cannot write: %s", path, en ? strerror(en) : "write error");
        unlink(tmp);
        return -1;
    }
    return 0;
}

typedef struct copy_src {
    int fd;
} copy_src;

static int copy_fn(FILE *f, void *user)
{
    copy_src *c = user;
    char buf[1 << 16];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if (fwrite(buf, 1, (size_t)n, f) != (size_t)n)
            return -1;
    }
}

int cmp_copy_atomic(const char *from, const char *to, vkimg_err *e)
{
    copy_src c = { open(from, O_RDONLY | O_CLOEXEC) };
    if (c.fd < 0) {
        snprintf(e->msg, sizeof e->msg, "%s: cannot read: %s", from, strerror(errno));
        return -1;
    }
    int rc = cmp_write_atomic(to, copy_fn, &c, e);
    close(c.fd);
    return rc;
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
    vkimg_image im;
    vkimg_err e;
    int rc;
    double ms;
} decode_job;

static void *decode_thread(void *arg)
{
    decode_job *j = arg;
    double t = cli_now_ms();
    j->rc = vkimg_load_memory(j->buf, j->len, j->name, NULL, &j->im, &j->e);
    j->ms = cli_now_ms() - t;
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

/* Writes the U8 diff image in the format the path's extension takes. */
static int save_diff(const char *path, const vkimg_image *d, vkimg_err *e)
{
    vkimg_fmt want = vkimg_file_fmt(vkimg_file_kind_of(path), VKIMG_U8);
    /* difference images are mostly flat: a fast deflate level compresses them
     * nearly as well as the default one, in a fraction of the time */
    vkimg_save_opts so = { .png_level = 2 };
    if (want == VKIMG_U8)
        return vkimg_save(path, d, &so, e);
    vkimg_image f = { 0 };
    int rc = vkimg_image_alloc(&f, d->w, d->h, d->c, want, e);
    if (rc)
        return rc;
    size_t n = (size_t)d->w * d->h * d->c;
    for (size_t i = 0; i < n; i++) {
        double v = ((const uint8_t *)d->data)[i];
        if (want == VKIMG_F32)
            ((float *)f.data)[i] = (float)(v / 255.0);
        else if (want == VKIMG_U16)
            ((uint16_t *)f.data)[i] = (uint16_t)(v * 257);
    }
    rc = vkimg_save(path, &f, &so, e);
    vkimg_image_free(&f);
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
    static const char *const ok[] = { "png", "jpg", "jpeg", "gif", "bmp", NULL };
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
    /* decode: B on a second thread (A on this one) */
    double td = cli_now_ms();
    ja = (decode_job){ .buf = ba, .len = la, .name = p->a };
    jb = (decode_job){ .buf = bb, .len = lb, .name = p->b };
    pthread_t tid;
    bool threaded = parallel && !identical && !pthread_create(&tid, NULL, decode_thread, &jb);
    decode_thread(&ja);
    if (threaded)
        pthread_join(tid, NULL);
    else if (!identical)
        decode_thread(&jb);
    p->decode_ms = cli_now_ms() - td;
    if (!p->mem_a) {
        free(ba);
        free(bb);
    }
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
    vkimg_ctx *ctx = get_ctx(ctx_user, true, &e);
    if (!ctx) {
        set_error(p, CLI_CMP_ERROR, e.msg);
        goto done;
    }
    vkimg_compare_opts oo = *o;
    oo.want_diff = p->diff_out || cfg->report_dir || cfg->keep_diff;
    int crc = vkimg_compare(ctx, A, B, &oo, &p->r, cfg->common.timing ? &p->tm : NULL, &e);
    get_ctx(ctx_user, false, NULL); /* two images: the context goes now, with its buffers */
    if (!cfg->report_dir) { /* the pixels are not needed any more: less memory while the diff is encoded */
        vkimg_image_free(&jb.im);
        vkimg_image_free(&ja.im);
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
        if ((p->name && cmp_mkdirs_for(p->diff_out, &e)) || save_diff(p->diff_out, &p->r.diff, &e)) {
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
                         : vkimg_save(path, &p->r.diff, &(vkimg_save_opts){ .png_level = 2 }, &e);
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
    if (!p->mem_a) {
        free(ba);
        free(bb);
    }
    p->total_ms = cli_now_ms() - t0;
}

/* ---------------------------------------------------------------- outputs */

const char *cmp_verdict_word(const cmp_pair *p)
{
    switch (p->kind) {
    case CMP_MISMATCH: return "MISMATCH";
    case CMP_ERROR: return "ERROR";
    case CMP_NEW: return "NEW";
    case CMP_MISSING: return "MISSING";
    default: return p->code == CLI_CMP_FAIL ? "FAILURE" : p->code == CLI_CMP_WARN ? "WARNING" : "PASS";
    }
}

static void json_path(FILE *f, const char *s)
{
    if (s)
        json_str(f, s);
    else
        fputs("null", f);
}

static void json_u64(FILE *f, uint64_t v)
{
    fprintf(f, "%llu", (unsigned long long)v);
}

/* a number, or null for "none" (a budget < 0) */
static void json_budget(FILE *f, double v)
{
    if (v < 0)
        fputs("null", f);
    else
        json_num(f, v);
}

void cmp_print_json(const cmp_cfg *cfg, const cmp_pair *p, FILE *f)
{
    const vkimg_compare_opts *o = &cfg->o;
    const vkimg_compare_result *r = &p->r;
    const bool yiq = o->metric == VKIMG_METRIC_YIQ;
    fputs("{\"version\": 1", f);
    if (p->name) {
        fputs(", \"name\": ", f);
        json_str(f, p->name);
    }
    fputs(", \"a\": ", f);
    json_path(f, p->a);
    fputs(", \"b\": ", f);
    json_path(f, p->b);
    if (p->kind == CMP_NEW || p->kind == CMP_MISSING || p->kind == CMP_ERROR) {
        fprintf(f, ", \"verdict\": \"%s\", \"exit_code\": %d", cmp_verdict_word(p), p->code);
        if (p->kind == CMP_ERROR) {
            fputs(", \"error\": ", f);
            json_str(f, p->err);
        }
        fputs("}\n", f);
        return;
    }
    if (p->kind == CMP_MISMATCH) {
        fprintf(f, ", \"verdict\": \"MISMATCH\", \"exit_code\": 3, \"size_a\": [%d, %d, %d], \"size_b\": [%d, %d, %d], "
                   "\"error\": ",
                p->wa, p->ha, p->ca, p->wb, p->hb, p->cb);
        json_str(f, p->err);
        fputs("}\n", f);
        return;
    }
    const bool ident = p->kind == CMP_IDENTICAL;
    const bool known = r->width > 0;
    if (known)
        fprintf(f, ", \"width\": %d, \"height\": %d, \"channels\": %d", r->width, r->height, r->channels);
    else
        fputs(", \"width\": null, \"height\": null, \"channels\": null", f);
    if (p->fmt_known)
        fprintf(f, ", \"format_a\": \"%s\", \"format_b\": \"%s\"", vkimg_fmt_name(p->fa), vkimg_fmt_name(p->fb));
    else
        fputs(", \"format_a\": null, \"format_b\": null", f);
    fputs(", \"pixels\": ", f);
    if (known)
        json_u64(f, r->pixels);
    else
        fputs("null", f);
    /* ABS's error figures: null under --metric yiq (not computed there) */
    if (yiq && !ident) {
        fputs(", \"mae\": null, \"rmse\": null, \"psnr\": null, \"max_error\": null, \"max_x\": null, \"max_y\": null, "
              "\"max_channel\": null",
              f);
    } else {
        fputs(", \"mae\": ", f);
        json_num(f, r->mae);
        fputs(", \"rmse\": ", f);
        json_num(f, r->rmse);
        fputs(", \"psnr\": ", f);
        json_num(f, r->psnr);
        fputs(", \"max_error\": ", f);
        json_num(f, r->max_err);
        fprintf(f, ", \"max_x\": %d, \"max_y\": %d, \"max_channel\": %d", r->max_x, r->max_y, r->max_c);
    }
    fputs(", \"fail\": ", f);
    json_num(f, o->fail);
    fputs(", \"failpercent\": ", f);
    json_num(f, o->failpercent);
    fputs(", \"hardfail\": ", f);
    json_num(f, o->hardfail);
    fputs(", \"warn\": ", f);
    json_num(f, o->warn);
    fputs(", \"warnpercent\": ", f);
    json_num(f, o->warnpercent);
    fputs(", \"hardwarn\": ", f);
    json_num(f, o->hardwarn);
    uint64_t total = r->compared + r->outside;
    uint64_t nfail = yiq ? r->ndiff : r->nfail, nwarn = yiq ? r->ndiff : r->nwarn;
    fputs(", \"nfail\": ", f);
    json_u64(f, nfail);
    fputs(", \"pct_fail\": ", f);
    json_num(f, yiq ? (total ? 100.0 * (double)nfail / (double)total : 0) : r->pct_fail);
    fputs(", \"nwarn\": ", f);
    json_u64(f, nwarn);
    fputs(", \"pct_warn\": ", f);
    json_num(f, yiq ? (total ? 100.0 * (double)nwarn / (double)total : 0) : r->pct_warn);
    fputs(", \"ssim\": ", f);
    json_num(f, o->ssim ? r->ssim : NAN);
    fprintf(f, ", \"verdict\": \"%s\", \"exit_code\": %d, \"diff\": ", cmp_verdict_word(p), p->code);
    json_path(f, p->diff_written ? p->diff_out : NULL);
    fprintf(f, ", \"identical\": %s, \"metric\": \"%s\", \"threshold\": ", ident ? "true" : "false",
            yiq ? "yiq" : "abs");
    if (yiq)
        json_num(f, o->threshold);
    else
        fputs("null", f);
    fprintf(f, ", \"aa\": %s, \"ndiff\": ", yiq && o->aa ? "true" : "false");
    json_u64(f, r->ndiff);
    fputs(", \"naa\": ", f);
    json_u64(f, r->naa);
    fputs(", \"compared\": ", f);
    if (known)
        json_u64(f, r->compared);
    else
        fputs("null", f);
    fputs(", \"ignored\": ", f);
    json_u64(f, r->ignored);
    fputs(", \"outside\": ", f);
    json_u64(f, r->outside);
    fputs(", \"diff_ratio\": ", f);
    json_num(f, r->diff_ratio);
    fputs(", \"diff_percentage\": ", f);
    json_num(f, r->pixels ? 100.0 * (double)r->ndiff / (double)r->pixels : 0);
    fputs(", \"max_diff_pixels\": ", f);
    json_budget(f, o->max_diff_pixels);
    fputs(", \"max_diff_ratio\": ", f);
    json_budget(f, o->max_diff_ratio);
    if (p->wa)
        fprintf(f, ", \"size_a\": [%d, %d, %d], \"size_b\": [%d, %d, %d]", p->wa, p->ha, p->ca, p->wb, p->hb, p->cb);
    else
        fputs(", \"size_a\": null, \"size_b\": null", f);
    fprintf(f, ", \"bytes_a\": %lld, \"bytes_b\": %lld}\n", p->bytes_a, p->bytes_b);
}

/* "12 pixels differ (0.5%)", the figures of a compared pair on one line */
static void short_figures(const cmp_cfg *cfg, const cmp_pair *p, char *buf, size_t n)
{
    const vkimg_compare_result *r = &p->r;
    size_t at = 0;
    if (p->kind == CMP_IDENTICAL) {
        snprintf(buf, n, "identical files");
        return;
    }
    if (cfg->o.metric == VKIMG_METRIC_YIQ) {
        at += (size_t)snprintf(buf + at, n - at, "%llu pixels differ (%.4g%%)", (unsigned long long)r->ndiff,
                               100.0 * r->diff_ratio);
        if (cfg->o.aa && at < n)
            at += (size_t)snprintf(buf + at, n - at, ", %llu anti-aliased", (unsigned long long)r->naa);
    } else {
        at += (size_t)snprintf(buf + at, n - at, "%llu pixels over %g (%.4g%%), max error %.6g",
                               (unsigned long long)r->nfail, cfg->o.fail, r->pct_fail, r->max_err);
    }
    if (r->outside && at < n)
        snprintf(buf + at, n - at, ", %llu outside the overlap", (unsigned long long)r->outside);
}

void cmp_print_text(const cmp_cfg *cfg, const cmp_pair *p, bool long_form, FILE *f)
{
    const vkimg_compare_opts *o = &cfg->o;
    const vkimg_compare_result *r = &p->r;
    const bool yiq = o->metric == VKIMG_METRIC_YIQ;
    if (!long_form) {
        char fig[1200] = "";
        switch (p->kind) {
        case CMP_NEW: snprintf(fig, sizeof fig, "only in ACTUAL%s", cfg->fail_on_new ? " (--fail-on-new)" : ""); break;
        case CMP_MISSING: snprintf(fig, sizeof fig, "only in EXPECTED"); break;
        case CMP_MISMATCH:
            snprintf(fig, sizeof fig, "%dx%dx%d vs %dx%dx%d", p->wa, p->ha, p->ca, p->wb, p->hb, p->cb);
            break;
        case CMP_ERROR: snprintf(fig, sizeof fig, "%s", p->err); break;
        default: short_figures(cfg, p, fig, sizeof fig);
        }
        fprintf(f, "%-8s %s: %s%s%s\n", cmp_verdict_word(p), p->name ? p->name : p->b, fig,
                p->diff_written ? "; difference image " : "", p->diff_written ? p->diff_out : "");
        return;
    }
    fprintf(f, "Comparing \"%s\" and \"%s\"\n", p->a, p->b);
    if (p->kind == CMP_IDENTICAL && !r->diff.data && p->decode_ms == 0) {
        if (r->width)
            fprintf(f, "  %d x %d, %d channel%s (%s); identical files (%lld bytes), not decoded\n", r->width,
                    r->height, p->ca, p->ca > 1 ? "s" : "", vkimg_fmt_name(p->fa), p->bytes_a);
        else
            fprintf(f, "  identical files (%lld bytes), not decoded\n", p->bytes_a);
    } else {
        fprintf(f, "  %d x %d, %d channel%s (%s vs %s)%s", r->width, r->height, p->ca, p->ca > 1 ? "s" : "",
                vkimg_fmt_name(p->fa), vkimg_fmt_name(p->fb), p->kind == CMP_IDENTICAL ? "; identical files" : "");
        if (yiq)
            fprintf(f, "; YIQ colour delta (pixelmatch), threshold %g, anti-aliased pixels %s\n", o->threshold,
                    o->aa ? "not counted" : "counted");
        else
            fprintf(f, "; errors on values normalized to [0,1]\n");
        if (p->wa != p->wb || p->ha != p->hb)
            fprintf(f, "  sizes differ (%dx%d vs %dx%d): compared over the %dx%d overlap, %llu pixels outside it count "
                       "as different\n",
                    p->wa, p->ha, p->wb, p->hb, p->wa < p->wb ? p->wa : p->wb, p->ha < p->hb ? p->ha : p->hb,
                    (unsigned long long)r->outside);
        if (r->ignored)
            fprintf(f, "  %llu pixels ignored (--ignore / --mask)\n", (unsigned long long)r->ignored);
    }
    if (yiq) {
        fprintf(f, "  %llu pixels differ (%.4g%% of %llu)\n", (unsigned long long)r->ndiff, 100.0 * r->diff_ratio,
                (unsigned long long)(r->compared + r->outside));
        if (o->aa)
            fprintf(f, "  %llu anti-aliased pixels not counted\n", (unsigned long long)r->naa);
    } else {
        static const char *const cname4[] = { "R", "G", "B", "A" };
        char where[64];
        int nc = p->ca ? p->ca : 1;
        snprintf(where, sizeof where, "(%d, %d, %s)", r->max_x, r->max_y,
                 nc <= 2 ? (r->max_c == 0 ? "gray" : "alpha") : cname4[r->max_c & 3]);
        fprintf(f, "  Mean error = %.6g\n", r->mae);
        fprintf(f, "  RMS error = %.6g\n", r->rmse);
        if (isinf(r->psnr))
            fprintf(f, "  Peak SNR = inf\n");
        else
            fprintf(f, "  Peak SNR = %.6g dB\n", r->psnr);
        fprintf(f, "  Max error  = %.6g @ %s\n", r->max_err, where);
        fprintf(f, "  %llu pixels (%.4g%%) over %g (fail)\n", (unsigned long long)r->nfail, r->pct_fail, o->fail);
        fprintf(f, "  %llu pixels (%.4g%%) over %g (warn)\n", (unsigned long long)r->nwarn, r->pct_warn, o->warn);
    }
    if (o->ssim)
        fprintf(f, "  SSIM = %.8f\n", r->ssim);
    if (o->max_diff_pixels >= 0)
        fprintf(f, "  budget: at most %.0f differing pixels\n", o->max_diff_pixels);
    if (o->max_diff_ratio >= 0)
        fprintf(f, "  budget: at most %g of the pixels differing\n", o->max_diff_ratio);
    if (p->diff_written) {
        if (yiq)
            fprintf(f, "  difference image written to %s\n", p->diff_out);
        else
            fprintf(f, "  difference image (x%g) written to %s\n", o->diff_scale, p->diff_out);
    }
    fprintf(f, "%s\n", cmp_verdict_word(p));
}

