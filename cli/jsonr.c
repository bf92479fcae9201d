/* The bounded JSON reader (jsonr.h). Recursive descent, depth-capped; values
 * live in one array (at most max_values, at most one per input byte), decoded
 * strings in one buffer of the input's length + 1 (a decoded string is never
 * longer than its quoted text, which also holds room for its NUL). */
#include "jsonr.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    jr_doc *d;
    const unsigned char *s;
    size_t len, pos;
    int depth, max_depth;
} parser;

static int fail(parser *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int fail(parser *p, const char *fmt, ...)
{
    char m[120];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    snprintf(p->d->err, sizeof p->d->err, "%s at byte %zu", m, p->pos);
    return -1;
}

static void ws(parser *p)
{
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static jr_val *new_val(parser *p, jr_type t)
{
    jr_doc *d = p->d;
    if (d->nvals >= d->maxvals) {
        fail(p, "more than %d values", d->maxvals);
        return NULL;
    }
    jr_val *v = &d->vals[d->nvals++];
    memset(v, 0, sizeof *v);
    v->type = t;
    return v;
}

static int hex4(parser *p, unsigned *out)
{
    if (p->len - p->pos < 4)
        return fail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p->s[p->pos + (size_t)i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10u;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10u;
        else
            return fail(p, "bad \\u escape");
    }
    p->pos += 4;
    *out = v;
    return 0;
}

/* The length of the valid UTF-8 sequence at s[0..n) (0: invalid). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0], v, min;
    size_t k;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0)
        k = 2, min = 0x80, v = c & 0x1f;
    else if ((c & 0xf0) == 0xe0)
        k = 3, min = 0x800, v = c & 0x0f;
    else if ((c & 0xf8) == 0xf0)
        k = 4, min = 0x10000, v = c & 0x07;
    else
        return 0;
    if (n < k)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3fu);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    return k;
}

static void put_utf8(char *o, size_t *n, unsigned cp)
{
    if (cp < 0x80) {
        o[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        o[(*n)++] = (char)(0xc0 | cp >> 6);
        o[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        o[(*n)++] = (char)(0xe0 | cp >> 12);
        o[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        o[(*n)++] = (char)(0xf0 | cp >> 18);
        o[(*n)++] = (char)(0x80 | (cp >> 12 & 0x3f));
        o[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[(*n)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* A string at p->pos (the opening quote): decoded into the string buffer. */
static int string(parser *p, const char **out, size_t *outlen)
{
    jr_doc *d = p->d;
    p->pos++; /* " */
    char *o = d->strs + d->slen;
    size_t n = 0;
    for (;;) {
        if (p->pos >= p->len)
            return fail(p, "unterminated string");
        unsigned char c = p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20)
            return fail(p, "control character in a string");
        if (c != '\\') {
            size_t k = utf8_seq(p->s + p->pos, p->len - p->pos);
            if (!k)
                return fail(p, "invalid UTF-8 in a string");
            memcpy(o + n, p->s + p->pos, k);
            n += k;
            p->pos += k;
            continue;
        }
        if (++p->pos >= p->len)
            return fail(p, "unterminated escape");
        c = p->s[p->pos++];
        switch (c) {
        case '"': o[n++] = '"'; break;
        case '\\': o[n++] = '\\'; break;
        case '/': o[n++] = '/'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(p, &cp))
                return -1;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return fail(p, "lone low surrogate");
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                    return fail(p, "lone high surrogate");
                p->pos += 2;
                if (hex4(p, &lo))
                    return -1;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return fail(p, "bad surrogate pair");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            put_utf8(o, &n, cp); /* 6 (12) escaped bytes -> at most 3 (4) */
            break;
        }
        default: p->pos--; return fail(p, "bad escape '\\%c'", c >= 0x20 && c < 0x7f ? c : '?');
        }
    }
    o[n] = 0;
    d->slen += n + 1;
    *out = o;
    *outlen = n;
    return 0;
}

static int number(parser *p, jr_val *v)
{
    size_t start = p->pos;
    const unsigned char *s = p->s;
    bool integral = true;
    if (p->pos < p->len && s[p->pos] == '-')
        p->pos++;
    if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
        return fail(p, "bad number");
    if (s[p->pos] == '0')
        p->pos++;
    else
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
            p->pos++;
    if (p->pos < p->len && s[p->pos] == '.') {
        integral = false;
        p->pos++;
        if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
            return fail(p, "bad number: digits must follow '.'");
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
            p->pos++;
    }
    if (p->pos < p->len && (s[p->pos] == 'e' || s[p->pos] == 'E')) {
        integral = false;
        p->pos++;
        if (p->pos < p->len && (s[p->pos] == '+' || s[p->pos] == '-'))
            p->pos++;
        if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
            return fail(p, "bad number: digits must follow the exponent");
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
            p->pos++;
    }
    size_t n = p->pos - start;
    char buf[400];
    if (n >= sizeof buf)
        return fail(p, "number longer than %zu characters", sizeof buf - 1);
    memcpy(buf, s + start, n);
    buf[n] = 0;
    errno = 0;
    v->num = strtod(buf, NULL);
    if (errno == ERANGE && (v->num > 1 || v->num < -1))
        return fail(p, "number out of range");
    if (integral) {
        errno = 0;
        long long x = strtoll(buf, NULL, 10);
        if (!errno) {
            v->is_int = true;
            v->i = x;
        }
    }
    return 0;
}

static int literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n))
        return fail(p, "unexpected character");
    p->pos += n;
    return 0;
}

static int value(parser *p, jr_val **out);

static int container(parser *p, jr_val *v, bool obj)
{
    if (++p->depth > p->max_depth)
        return fail(p, "nested deeper than %d", p->max_depth);
    p->pos++; /* [ or { */
    ws(p);
    jr_val **tail = &v->child;
    unsigned char close = obj ? '}' : ']';
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        p->depth--;
        return 0;
    }
    for (;;) {
        const char *key = NULL;
        size_t klen = 0;
        if (obj) {
            ws(p);
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return fail(p, "expected a member name");
            if (string(p, &key, &klen))
                return -1;
            ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':')
                return fail(p, "expected ':'");
            p->pos++;
        }
        jr_val *e;
        if (value(p, &e))
            return -1;
        e->key = key;
        e->key_len = klen;
        *tail = e;
        tail = &e->next;
        if (v->n == INT_MAX)
            return fail(p, "too many elements");
        v->n++;
        ws(p);
        if (p->pos >= p->len)
            return fail(p, "unterminated %s", obj ? "object" : "array");
        unsigned char c = p->s[p->pos++];
        if (c == close)
            break;
        if (c != ',') {
            p->pos--;
            return fail(p, "expected ',' or '%c'", close);
        }
    }
    p->depth--;
    return 0;
}

static int value(parser *p, jr_val **out)
{
    ws(p);
    if (p->pos >= p->len)
        return fail(p, "expected a value");
    unsigned char c = p->s[p->pos];
    jr_val *v;
    switch (c) {
    case '{':
    case '[':
        if (!(v = new_val(p, c == '{' ? JR_OBJECT : JR_ARRAY)) || container(p, v, c == '{'))
            return -1;
        break;
    case '"':
        if (!(v = new_val(p, JR_STRING)) || string(p, &v->str, &v->len))
            return -1;
        break;
    case 't':
        if (!(v = new_val(p, JR_TRUE)) || literal(p, "true"))
            return -1;
        break;
    case 'f':
        if (!(v = new_val(p, JR_FALSE)) || literal(p, "false"))
            return -1;
        break;
    case 'n':
        if (!(v = new_val(p, JR_NULL)) || literal(p, "null"))
            return -1;
        break;
    default:
        if (c != '-' && (c < '0' || c > '9'))
            return fail(p, "unexpected character");
        if (!(v = new_val(p, JR_NUMBER)) || number(p, v))
            return -1;
    }
    *out = v;
    return 0;
}

int jr_parse(jr_doc *d, const char *text, size_t len, const jr_limits *lim)
{
    memset(d, 0, sizeof *d);
    int max_depth = lim && lim->max_depth > 0 ? lim->max_depth : 32;
    int max_values = lim && lim->max_values > 0 ? lim->max_values : 65536;
    /* a value takes at least one byte of input */
    d->maxvals = len < (size_t)max_values ? (int)len + 1 : max_values;
    if (len > ((size_t)-1) / 2 - 1 || !(d->vals = malloc((size_t)d->maxvals * sizeof *d->vals)) ||
        !(d->strs = malloc(len + 1))) {
        snprintf(d->err, sizeof d->err, "out of memory (%zu bytes of JSON)", len);
        return -1;
    }
    parser p = { .d = d, .s = (const unsigned char *)text, .len = len, .max_depth = max_depth };
    jr_val *root;
    if (value(&p, &root))
        return -1;
    ws(&p);
    if (p.pos != len)
        return fail(&p, "text after the value");
    d->root = root;
    return 0;
}

void jr_free(jr_doc *d)
{
    free(d->vals);
    free(d->strs);
    memset(d, 0, sizeof *d);
}

const jr_val *jr_get(const jr_val *obj, const char *key)
{
    const jr_val *found = NULL;
    if (!obj || obj->type != JR_OBJECT)
        return NULL;
    size_t kl = strlen(key);
    for (const jr_val *m = obj->child; m; m = m->next)
        if (m->key_len == kl && !memcmp(m->key, key, kl))
            found = m;
    return found;
}

const char *jr_type_name(jr_type t)
{
    static const char *const names[] = { "null", "boolean", "boolean", "number", "string", "array", "object" };
    return (unsigned)t < 7 ? names[t] : "?";
}
