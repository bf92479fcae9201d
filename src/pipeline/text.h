/* Text building for the pipeline layer: an snprintf-style accumulator, and
 * option values, defaults and ranges written as the parser reads them back. */
#ifndef VKI_PIPELINE_TEXT_H
#define VKI_PIPELINE_TEXT_H

#include "pipeline/op.h"
#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>

/* snprintf-style accumulation: writes what fits (always NUL-terminated when
 * n > 0), counts everything. */
typedef struct vki_sbuf {
    char *buf;
    size_t n;
    size_t len;
} vki_sbuf;

void vki_sb_init(vki_sbuf *b, char *buf, size_t n);
void vki_sb_printf(vki_sbuf *b, const char *fmt, ...) VKI_PRINTF(2, 3);
void vki_sb_mem(vki_sbuf *b, const char *s, size_t k);
void vki_sb_str(vki_sbuf *b, const char *s);
/* The length of everything written, as snprintf returns it (INT_MAX at most). */
int vki_sb_result(const vki_sbuf *b);
/* Text for a Markdown table cell: escapes what Markdown would interpret. */
void vki_sb_md(vki_sbuf *b, const char *s);

/* Shortest text that reads back as v (buf: 40 bytes). */
const char *vki_fmt_num(double v, char buf[40]);
/* A FLOAT/INT option with a range declared (all zero: unbounded). */
bool vki_opt_has_range(const vki_opt *o);
/* "> 0 and <= 1000" or "0..4096" (nothing when unbounded). */
void vki_sb_range(vki_sbuf *b, const vki_opt *o);
/* The value of option o as the parser reads it back (TEXT: from x). */
void vki_sb_value(vki_sbuf *b, const vki_opt *o, double v, const double *x);
/* The default: the value, or the text of an auto default ("ceil(3*sigma)"). */
void vki_sb_default(vki_sbuf *b, const vki_opt *o);

#endif
