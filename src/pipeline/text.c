/* See text.h. */
#include "pipeline/text.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vki_sb_init(vki_sbuf *b, char *buf, size_t n)
{
    b->buf = buf;
    b->n = buf ? n : 0;
    b->len = 0;
    if (b->n)
        b->buf[0] = 0;
}

void vki_sb_printf(vki_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = b->len < b->n ? b->buf + b->len : NULL;
    size_t room = b->len < b->n ? b->n - b->len : 0;
    int k = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->len += (size_t)k;
}

void vki_sb_mem(vki_sbuf *b, const char *s, size_t k)
{
    if (b->len < b->n) {
        size_t room = b->n - b->len - 1; /* keep the NUL */
        size_t c = k < room ? k : room;
        memcpy(b->buf + b->len, s, c);
        b->buf[b->len + c] = 0;
    }
    b->len += k;
}

void vki_sb_str(vki_sbuf *b, const char *s)
{
    vki_sb_mem(b, s, strlen(s));
}

int vki_sb_result(const vki_sbuf *b)
{
    return b->len > INT_MAX ? INT_MAX : (int)b->len;
}

/* Text for a Markdown table cell: escapes what Markdown would interpret. */
void vki_sb_md(vki_sbuf *b, const char *s)
{
    for (; *s; s++) {
        bool tag = *s == '<' && (s[1] == '/' || s[1] == '!' || s[1] == '?' || (s[1] >= 'a' && s[1] <= 'z') ||
                                 (s[1] >= 'A' && s[1] <= 'Z'));
        if (tag || strchr("\\`*_|", *s))
            vki_sb_mem(b, "\\", 1);
        vki_sb_mem(b, s, 1);
    }
}

/* ---------------------------------------------------------------- numbers */

/* Shortest text that reads back as v: integers exactly, others as %g when that
 * is exact, else with more digits. */
const char *vki_fmt_num(double v, char buf[40])
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, 40, "%.0f", v == 0 ? 0.0 : v); /* no "-0" */
        return buf;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, 40, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

bool vki_opt_has_range(const vki_opt *o)
{
    /* a FLOAT/INT option with no range declared (all zero) is unbounded */
    return (o->type == VKI_OPT_FLOAT || o->type == VKI_OPT_INT) && (o->min != 0 || o->max != 0 || o->min_exclusive);
}

/* "> 0 and <= 1000" or "0..4096" ("" when unbounded). */
void vki_sb_range(vki_sbuf *b, const vki_opt *o)
{
    char lo[40], hi[40];
    if (!vki_opt_has_range(o))
        return;
    vki_fmt_num(o->min, lo);
    vki_fmt_num(o->max, hi);
    if (o->min_exclusive)
        vki_sb_printf(b, "> %s and <= %s", lo, hi);
    else
        vki_sb_printf(b, "%s..%s", lo, hi);
}

static const char *bool_name(double v)
{
    return v != 0 ? "true" : "false";
}

/* The value of option o as the parser reads it back. */
void vki_sb_value(vki_sbuf *b, const vki_opt *o, double v, const double *x)
{
    char num[40];
    switch (o->type) {
    case VKI_OPT_TEXT: {
        char t[256] = "";
        if (x && o->format)
            o->format(x, t, sizeof t);
        vki_sb_str(b, t);
        break;
    }
    case VKI_OPT_ENUM: {
        int k = (int)v, i = 0;
        while (o->choices && o->choices[i] && i < k)
            i++;
        if (o->choices && o->choices[i] && i == k)
            vki_sb_str(b, o->choices[i]);
        else
            vki_sb_str(b, vki_fmt_num(v, num));
        break;
    }
    case VKI_OPT_BOOL:
        vki_sb_str(b, bool_name(v));
        break;
    case VKI_OPT_INT:
    case VKI_OPT_FLOAT:
    default:
        vki_sb_str(b, vki_fmt_num(v, num));
        break;
    }
}

void vki_sb_default(vki_sbuf *b, const vki_opt *o)
{
    if (o->auto_default)
        vki_sb_str(b, o->auto_default);
    else if (o->type == VKI_OPT_TEXT)
        vki_sb_str(b, o->def_text ? o->def_text : o->optional ? "none" : "(required)");
    else
        vki_sb_value(b, o, o->def, NULL);
}
