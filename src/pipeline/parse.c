/* Pipeline text -> vkimg_pipeline (no Vulkan here).
 *
 * Grammar (ffmpeg-filtergraph-like; whitespace allowed between all tokens,
 * '#' starts a comment that runs to the end of the line, but where it comes
 * right after '=' or ':' and before a hex digit: a value, as in a colour's
 * background=#ff000080):
 *
 *   pipeline := op (',' op)*
 *   op       := NAME ['=' item (':' item)*]        NAME = [A-Za-z0-9_-]+
 *   item     := KEY '=' VALUE | VALUE               KEY, VALUE = runs of bytes other
 *                                                   than whitespace and , : = #
 *
 * A positional VALUE fills the option after the last one set (the first one at
 * the start), so blur=2.5:6 is blur=sigma=2.5:radius=6 and threshold=radius=5:3
 * sets offset=3. After the items, unset options get their defaults, then the
 * descriptor's check() runs (it fills auto defaults such as blur's radius).
 *
 * Every error is VKIMG_E_USAGE with e->pos = the byte offset of the offending
 * place in the original text (comments are blanked in a copy, so offsets are
 * unchanged), and a one-line message. */
#include "pipeline/pipeline.h"
#include "pipeline/text.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *s; /* the text with comments blanked */
    int len;
    int i;
    const vki_op_desc *const *ops;
    int nops;
    vkimg_err *e;
} parser;

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static bool is_word_char(char c)
{
    return c && !is_ws(c) && c != ',' && c != ':' && c != '=';
}

static void skip_ws(parser *p)
{
    while (p->i < p->len && is_ws(p->s[p->i]))
        p->i++;
}

static char peek(const parser *p)
{
    return p->i < p->len ? p->s[p->i] : 0;
}

/* A token quoted in a message: at most 64 bytes, control bytes as '?'. */
typedef struct quoted {
    char s[72];
} quoted;

static quoted quote(const char *t, int n)
{
    quoted q;
    int k = 0;
    for (int j = 0; j < n && k < 64; j++) {
        unsigned char c = (unsigned char)t[j];
        q.s[k++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (n > 64) {
        memcpy(q.s + k, "...", 3);
        k += 3;
    }
    q.s[k] = 0;
    return q;
}

/* One character in a message: 'x', or '\xNN' for control and non-ASCII bytes. */
static quoted quote_char(char ch)
{
    quoted q;
    unsigned char c = (unsigned char)ch;
    if (c < 0x20 || c >= 0x7f)
        snprintf(q.s, sizeof q.s, "\\x%02x", c);
    else
        snprintf(q.s, sizeof q.s, "%c", c);
    return q;
}

/* Length of the word (see grammar) at offset i. */
static int word_len(const parser *p, int i)
{
    int j = i;
    while (j < p->len && is_word_char(p->s[j]))
        j++;
    return j - i;
}

/* Nearest of n names to t by edit distance, if close enough to suggest. */
static const char *nearest(const char *t, int tn, const char *const *names, int n)
{
    int lim = tn / 2 > 2 ? tn / 2 : 2;
    int best = INT_MAX;
    const char *res = NULL;
    for (int i = 0; i < n; i++) {
        int d = vki_edit_distance(t, (size_t)tn, names[i], strlen(names[i]));
        if (d < best) {
            best = d;
            res = names[i];
        }
    }
    return best <= lim ? res : NULL;
}

/* "sigma, radius" */
static void vki_sb_opt_names(vki_sbuf *b, const vki_op_desc *d)
{
    for (int k = 0; k < d->nopts; k++)
        vki_sb_printf(b, "%s%s", k ? ", " : "", d->opts[k].name);
}

static int fail_unknown_op(parser *p, int pos, int n)
{
    const char *names[64];
    int k = 0;
    for (int j = 0; j < p->nops && k < 64; j++)
        names[k++] = p->ops[j]->name;
    const char *s = nearest(p->s + pos, n, names, k);
    quoted q = quote(p->s + pos, n);
    const char c0 = p->s[pos];
    if (pos > 0 && p->s[pos - 1] == ',' && ((c0 >= '0' && c0 <= '9') || c0 == '.' || c0 == '-' || c0 == '+'))
        return vki_fail_at(p->e, pos, "unknown op '%s' (',' separates ops; an op's values are separated by ':', "
                           "e.g. levels=0.1:0.9)", q.s);
    if (s)
        return vki_fail_at(p->e, pos, "unknown op '%s' (did you mean '%s'?)", q.s, s);
    return vki_fail_at(p->e, pos, "unknown op '%s' (run 'vkimg ops' for the list)", q.s);
}

static int fail_unknown_opt(parser *p, const vki_op_desc *d, int pos, int n)
{
    const char *names[VKI_MAX_OPTS];
    int k = 0;
    for (int j = 0; j < d->nopts && k < VKI_MAX_OPTS; j++)
        names[k++] = d->opts[j].name;
    const char *s = nearest(p->s + pos, n, names, k);
    char list[512];
    vki_sbuf b;
    vki_sb_init(&b, list, sizeof list);
    vki_sb_opt_names(&b, d);
    quoted q = quote(p->s + pos, n);
    if (s)
        return vki_fail_at(p->e, pos, "%s: unknown option '%s' (did you mean '%s'?; options: %s)", d->name, q.s, s, list);
    return vki_fail_at(p->e, pos, "%s: unknown option '%s' (options: %s)", d->name, q.s, list);
}

static int fail_range(parser *p, const vki_op_desc *d, const vki_opt *o, int pos, const char *tok, int n, double v)
{
    char lo[40], hi[40];
    quoted q = quote(tok, n);
    vki_fmt_num(o->min, lo);
    vki_fmt_num(o->max, hi);
    if (o->min_exclusive && v <= o->min)
        return vki_fail_at(p->e, pos, "%s: %s must be > %s (got %s)", d->name, o->name, lo, q.s);
    if (o->min_exclusive)
        return vki_fail_at(p->e, pos, "%s: %s must be at most %s (got %s)", d->name, o->name, hi, q.s);
    return vki_fail_at(p->e, pos, "%s: %s must be between %s and %s (got %s)", d->name, o->name, lo, hi, q.s);
}

/* A TEXT option's value: parse() reads it into x. */
static int parse_text(vkimg_err *e, const vki_op_desc *d, const vki_opt *o, const char *t, int n, int pos,
                      double x[VKI_TEXT_VALUES])
{
    char why[256] = "invalid value";
    memset(x, 0, VKI_TEXT_VALUES * sizeof *x);
    if (o->parse(t, (size_t)n, x, why, sizeof why) == 0)
        return 0;
    quoted q = quote(t, n);
    return vki_fail_at(e, pos, "%s: %s: '%s': %s (syntax: %s)", d->name, o->name, q.s, why,
                       o->placeholder ? o->placeholder : "see 'vkimg ops'");
}

/* Reads the value token [pos, pos+n) for option k of d into a. */
static int parse_value(parser *p, const vki_op_desc *d, int which, int pos, int n, vki_args *a)
{
    const vki_opt *o = &d->opts[which];
    double *out = &a->v[which];
    const char *t = p->s + pos;
    quoted q = quote(t, n);
    switch (o->type) {
    case VKI_OPT_TEXT:
        *out = 1;
        return parse_text(p->e, d, o, t, n, pos, a->x[which]);
    case VKI_OPT_ENUM: {
        /* ImageMagick's and libvips's spelling of a choice: "center" for "centre" */
        if (n == 6 && !memcmp(t, "center", 6)) {
            t = "centre";
        }
        for (int k = 0; o->choices && o->choices[k]; k++)
            if ((int)strlen(o->choices[k]) == n && !memcmp(o->choices[k], t, (size_t)n)) {
                *out = k;
                return 0;
            }
        char list[512];
        vki_sbuf b;
        vki_sb_init(&b, list, sizeof list);
        for (int k = 0; o->choices && o->choices[k]; k++)
            vki_sb_printf(&b, "%s%s", k ? ", " : "", o->choices[k]);
        return vki_fail_at(p->e, pos, "%s: %s: '%s' is not one of %s", d->name, o->name, q.s, list);
    }
    case VKI_OPT_BOOL: {
        static const char *const names[] = { "0", "1", "false", "true", "no", "yes", "off", "on" };
        for (int k = 0; k < (int)VKI_ARRAY_LEN(names); k++)
            if ((int)strlen(names[k]) == n && !memcmp(names[k], t, (size_t)n)) {
                *out = k & 1;
                return 0;
            }
        return vki_fail_at(p->e, pos, "%s: %s: '%s' is not a boolean (0, 1, true, false, yes, no, on, off)", d->name,
                           o->name, q.s);
    }
    case VKI_OPT_INT:
    case VKI_OPT_FLOAT:
    default:
        break;
    }
    if (o->type == VKI_OPT_INT) {
        int j = (t[0] == '+' || t[0] == '-') ? 1 : 0;
        if (j == n)
            return vki_fail_at(p->e, pos, "%s: %s: '%s' is not an integer", d->name, o->name, q.s);
        for (; j < n; j++)
            if (t[j] < '0' || t[j] > '9')
                return vki_fail_at(p->e, pos, "%s: %s: '%s' is not an integer", d->name, o->name, q.s);
    }
    char *tmp = malloc((size_t)n + 1);
    if (!tmp)
        return vki_fail_at(p->e, pos, "out of memory");
    memcpy(tmp, t, (size_t)n);
    tmp[n] = 0;
    char *end;
    double v = strtod(tmp, &end);
    bool whole = end == tmp + n;
    free(tmp);
    if (!whole || isnan(v))
        return vki_fail_at(p->e, pos, "%s: %s: '%s' is not a number", d->name, o->name, q.s);
    if (o->type == VKI_OPT_FLOAT && isinf(v))
        return vki_fail_at(p->e, pos, "%s: %s: '%s' is not a finite number", d->name, o->name, q.s);
    if (vki_opt_has_range(o) && ((o->min_exclusive ? v <= o->min : v < o->min) || v > o->max))
        return fail_range(p, d, o, pos, t, n, v);
    *out = v;
    return 0;
}

/* Parses the items after "name=" up to ',' or the end. pos[k] receives where
 * option k was given (-1 if not). */
static int parse_items(parser *p, const vki_op_desc *d, vki_args *a, int pos[VKI_MAX_OPTS])
{
    skip_ws(p);
    if (d->nopts == 0)
        return vki_fail_at(p->e, p->i, "%s: takes no options", d->name);
    int next = 0; /* option a positional value fills */
    for (;;) {
        skip_ws(p);
        int item = p->i;
        int n1 = word_len(p, item);
        p->i += n1;
        skip_ws(p);
        int k, vpos, vn;
        if (peek(p) == '=') {
            if (!n1)
                return vki_fail_at(p->e, p->i, "%s: missing option name before '='", d->name);
            for (k = 0; k < d->nopts; k++)
                if ((int)strlen(d->opts[k].name) == n1 && !memcmp(d->opts[k].name, p->s + item, (size_t)n1))
                    break;
            if (k == d->nopts)
                return fail_unknown_opt(p, d, item, n1);
            if (a->set[k])
                return vki_fail_at(p->e, item, "%s: option '%s' given twice", d->name, d->opts[k].name);
            p->i++;
            skip_ws(p);
            vpos = p->i;
            vn = word_len(p, vpos);
            if (!vn)
                return vki_fail_at(p->e, vpos, "%s: missing value for '%s'", d->name, d->opts[k].name);
            p->i += vn;
            skip_ws(p);
        } else if (!n1) {
            /* nothing between '=' or ':' and the next ':' / ',' / end */
            if (next < d->nopts)
                return vki_fail_at(p->e, item, "%s: missing value for '%s'", d->name, d->opts[next].name);
            return vki_fail_at(p->e, item, "%s: missing value after ':'", d->name);
        } else {
            if (next >= d->nopts) {
                char list[512];
                vki_sbuf b;
                vki_sb_init(&b, list, sizeof list);
                vki_sb_opt_names(&b, d);
                return vki_fail_at(p->e, item, "%s: too many values (takes %s)", d->name, list);
            }
            k = next;
            if (a->set[k])
                return vki_fail_at(p->e, item, "%s: option '%s' given twice", d->name, d->opts[k].name);
            vpos = item;
            vn = n1;
        }
        int rc = parse_value(p, d, k, vpos, vn, a);
        if (rc)
            return rc;
        a->set[k] = true;
        pos[k] = item;
        next = k + 1;
        char c = peek(p);
        if (!c || c == ',')
            return 0;
        if (c == ':') {
            p->i++;
            continue;
        }
        int wn = word_len(p, p->i);
        quoted w = wn ? quote(p->s + p->i, wn) : quote_char(c);
        quoted prev = quote(p->s + vpos, vn);
        return vki_fail_at(p->e, p->i, "%s: unexpected '%s' after '%s' (options are separated by ':', ops by ',')",
                           d->name, w.s, prev.s);
    }
}

/* One op at p->i (whitespace skipped, not at ',' or the end). */
static int parse_op(parser *p, vki_pipe_op *op)
{
    int start = p->i;
    while (p->i < p->len && is_name_char(p->s[p->i]))
        p->i++;
    int n = p->i - start;
    if (!n) {
        if (p->s[start] == '=')
            return vki_fail_at(p->e, start, "missing op name before '='");
        return vki_fail_at(p->e, start, "unexpected character '%s'", quote_char(p->s[start]).s);
    }
    const vki_op_desc *d = NULL;
    for (int k = 0; k < p->nops; k++)
        if ((int)strlen(p->ops[k]->name) == n && !memcmp(p->ops[k]->name, p->s + start, (size_t)n))
            d = p->ops[k];
    if (!d)
        return fail_unknown_op(p, start, n);
    memset(op, 0, sizeof *op);
    op->desc = d;
    op->pos = start;
    int pos[VKI_MAX_OPTS];
    for (int k = 0; k < VKI_MAX_OPTS; k++)
        pos[k] = -1;
    bool spaced = p->i < p->len && is_ws(p->s[p->i]);
    skip_ws(p);
    char c = peek(p);
    if (c == '=') {
        p->i++;
        int rc = parse_items(p, d, &op->args, pos);
        if (rc)
            return rc;
    } else if (c && c != ',') {
        if (spaced && is_name_char(c)) {
            quoted w = quote(p->s + p->i, word_len(p, p->i));
            return vki_fail_at(p->e, p->i, "unexpected '%s' after '%s' (ops are separated by ',')", w.s, d->name);
        }
        if (c == ':')
            return vki_fail_at(p->e, p->i, "unexpected character ':' (options follow '=', as in '%s=...')", d->name);
        return vki_fail_at(p->e, p->i, "unexpected character '%s'", quote_char(c).s);
    }
    /* defaults, then the descriptor's own validation (auto defaults) */
    for (int k = 0; k < d->nopts && k < VKI_MAX_OPTS; k++) {
        const vki_opt *o = &d->opts[k];
        if (op->args.set[k])
            continue;
        if (o->type != VKI_OPT_TEXT) {
            op->args.v[k] = o->def;
        } else if (o->def_text) {
            int rc = parse_text(p->e, d, o, o->def_text, (int)strlen(o->def_text), start, op->args.x[k]);
            if (rc)
                return rc;
            op->args.v[k] = 1;
        } else if (!o->optional) {
            return vki_fail_at(p->e, start, "%s: missing %s (%s)", d->name, o->name,
                               o->placeholder ? o->placeholder : "see 'vkimg ops'");
        }
    }
    if (d->check) {
        char why[512] = "invalid options";
        int bad = -1;
        if (d->check(&op->args, why, sizeof why, &bad)) {
            int at = bad >= 0 && bad < d->nopts && bad < VKI_MAX_OPTS && pos[bad] >= 0 ? pos[bad] : start;
            return vki_fail_at(p->e, at, "%s: %s", d->name, why);
        }
    }
    return 0;
}

vkimg_pipeline *vki_pipeline_parse_ops(const char *text, const vki_op_desc *const *ops, int nops, vkimg_err *e)
{
    if (!text)
        text = "";
    size_t tl = strlen(text);
    if (tl > INT_MAX / 2) {
        vki_fail_at(e, 0, "pipeline text too long");
        return NULL;
    }
    char *s = malloc(tl + 1);
    vkimg_pipeline *pl = calloc(1, sizeof *pl);
    if (!s || !pl) {
        free(s);
        free(pl);
        vki_fail_at(e, 0, "out of memory");
        return NULL;
    }
    memcpy(s, text, tl + 1);
    for (size_t j = 0; j < tl; j++)
        if (s[j] == '#' && !(j > 0 && (s[j - 1] == '=' || s[j - 1] == ':') && isxdigit((unsigned char)s[j + 1])))
            for (; j < tl && s[j] != '\n'; j++)
                s[j] = ' ';
    parser p = { .s = s, .len = (int)tl, .i = 0, .ops = ops, .nops = nops, .e = e };
    int cap = 0, comma = -1, rc = 0;
    skip_ws(&p);
    if (p.i == p.len) {
        rc = vki_fail_at(e, 0, "empty pipeline");
        goto fail;
    }
    for (;;) {
        skip_ws(&p);
        if (p.i == p.len) {
            rc = vki_fail_at(e, comma, "empty op after ','");
            goto fail;
        }
        if (p.s[p.i] == ',') {
            rc = vki_fail_at(e, p.i, "empty op before ','");
            goto fail;
        }
        if (pl->n == cap) {
            int nc = cap ? 2 * cap : 8;
            vki_pipe_op *no = realloc(pl->ops, (size_t)nc * sizeof *no);
            if (!no) {
                rc = vki_fail_at(e, p.i, "out of memory");
                goto fail;
            }
            pl->ops = no;
            cap = nc;
        }
        vki_pipe_op *op = &pl->ops[pl->n];
        if ((rc = parse_op(&p, op)))
            goto fail;
        pl->n++;
        if ((rc = vki_pipeline_validate(pl, e)))
            goto fail;
        /* parse_op stops at ',' or the end */
        if (p.i >= p.len)
            break;
        comma = p.i++;
    }
    free(s);
    return pl;
fail:
    (void)rc;
    free(s);
    vkimg_pipeline_free(pl);
    return NULL;
}

int vki_pipeline_validate(const vkimg_pipeline *p, vkimg_err *e)
{
    if (!p || p->n < 1)
        return vki_fail_at(e, 0, "empty pipeline");
    if (p->n > VKI_MAX_STAGES)
        return vki_fail_at(e, p->ops[VKI_MAX_STAGES].pos, "too many ops (at most %d)", VKI_MAX_STAGES);
    for (int i = 0; i + 1 < p->n; i++) {
        if (p->ops[i].desc->data_output)
            return vki_fail_at(e, p->ops[i].pos, "%s: produces data, not a picture: it must be the last op",
                               p->ops[i].desc->name);
        if (p->ops[i].desc->outputs)
            return vki_fail_at(e, p->ops[i].pos, "%s: writes several images: it must be the last op",
                               p->ops[i].desc->name);
    }
    return 0;
}
