/* What a parsed pipeline says of itself, and the op documentation generated
 * from the descriptors (`vkimg ops`, the README table). No Vulkan here. */
#include "pipeline/pipeline.h"
#include "pipeline/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vkimg_pipeline_free(vkimg_pipeline *p)
{
    if (!p)
        return;
    free(p->ops);
    free(p);
}

int vkimg_pipeline_length(const vkimg_pipeline *p)
{
    return p ? p->n : 0;
}

const char *vkimg_pipeline_op_name(const vkimg_pipeline *p, int i)
{
    if (!p || i < 0 || i >= p->n)
        return NULL;
    return p->ops[i].desc->name;
}

/* Whether option k, which the text did not give, can be spelled out beside the
 * options in *given (those of the text and those spelled out before it): the op's
 * check() accepts it given with the value it has. It cannot where it applies only
 * when left out (blur's radius with method=box, crop's w, h, x, y beside a
 * geometry): spelled out, the description would not parse. */
static bool can_spell(const vki_op_desc *d, vki_args *given, int k)
{
    if (given->set[k] || !d->check)
        return true;
    vki_args t = *given;
    t.set[k] = true;
    char why[512];
    int bad = -1;
    if (d->check(&t, why, sizeof why, &bad))
        return false;
    given->set[k] = true;
    return true;
}

int vkimg_pipeline_describe(const vkimg_pipeline *p, char *buf, size_t n)
{
    vki_sbuf b;
    vki_sb_init(&b, buf, n);
    for (int i = 0; p && i < p->n; i++) {
        const vki_op_desc *d = p->ops[i].desc;
        vki_args given = p->ops[i].args;
        vki_sb_printf(&b, "%s%s", i ? "," : "", d->name);
        for (int k = 0, first = 1; k < d->nopts && k < VKI_MAX_OPTS; k++) {
            if (d->opts[k].type == VKI_OPT_TEXT && !p->ops[i].args.v[k])
                continue; /* an optional text option left out */
            if (!can_spell(d, &given, k))
                continue; /* an option that applies only when left out */
            vki_sb_printf(&b, "%s%s=", first ? "=" : ":", d->opts[k].name);
            vki_sb_value(&b, &d->opts[k], p->ops[i].args.v[k], p->ops[i].args.x[k]);
            first = 0;
        }
    }
    return vki_sb_result(&b);
}

bool vkimg_pipeline_data_output(const vkimg_pipeline *p, vkimg_fmt *fmt)
{
    if (!p || p->n < 1 || !p->ops[p->n - 1].desc->data_output)
        return false;
    if (fmt)
        *fmt = (vkimg_fmt)p->ops[p->n - 1].desc->data_fmt;
    return true;
}

bool vkimg_pipeline_writes_levels(const vkimg_pipeline *p)
{
    return p && p->n >= 1 && p->ops[p->n - 1].desc->outputs != NULL;
}

bool vkimg_pipeline_keeps_opaque(const vkimg_pipeline *p)
{
    for (int i = 0; p && i < p->n; i++) {
        const vki_op_desc *d = p->ops[i].desc;
        if (d->data_output ||
            (!d->alpha_copied && !d->opaque_fast && !d->flattens && !vki_op_moves(d, &p->ops[i].args)))
            return false;
    }
    return p != NULL;
}

int vkimg_pipeline_out_channels(const vkimg_pipeline *p, int c)
{
    for (int i = 0; p && i < p->n; i++)
        if (p->ops[i].desc->out_channels)
            c = p->ops[i].desc->out_channels(c, &p->ops[i].args);
    return c;
}

/* "FLOAT", "INT", "bt601|bt709", "BOOL" */
static void vki_sb_placeholder(vki_sbuf *b, const vki_opt *o)
{
    switch (o->type) {
    case VKI_OPT_FLOAT:
        vki_sb_str(b, "FLOAT");
        break;
    case VKI_OPT_INT:
        vki_sb_str(b, "INT");
        break;
    case VKI_OPT_BOOL:
        vki_sb_str(b, "BOOL");
        break;
    case VKI_OPT_ENUM:
        for (int k = 0; o->choices && o->choices[k]; k++)
            vki_sb_printf(b, "%s%s", k ? "|" : "", o->choices[k]);
        break;
    case VKI_OPT_TEXT:
        vki_sb_str(b, o->placeholder ? o->placeholder : "TEXT");
        break;
    }
}

/* "float, > 0 and <= 1000" / "int, 0..4096" / "one of bt601, bt709" / "bool (0/1, ...)" */
static void vki_sb_kind(vki_sbuf *b, const vki_opt *o)
{
    switch (o->type) {
    case VKI_OPT_FLOAT:
    case VKI_OPT_INT:
        vki_sb_str(b, o->type == VKI_OPT_FLOAT ? "float" : "int");
        if (vki_opt_has_range(o)) {
            vki_sb_str(b, ", ");
            vki_sb_range(b, o);
        }
        break;
    case VKI_OPT_ENUM:
        vki_sb_str(b, "one of ");
        for (int k = 0; o->choices && o->choices[k]; k++)
            vki_sb_printf(b, "%s%s", k ? ", " : "", o->choices[k]);
        break;
    case VKI_OPT_BOOL:
        vki_sb_str(b, "bool (0/1, true/false, yes/no, on/off)");
        break;
    case VKI_OPT_TEXT:
        vki_sb_str(b, o->placeholder ? o->placeholder : "text");
        break;
    }
}

static void help_one(vki_sbuf *b, const vki_op_desc *d)
{
    vki_sb_printf(b, "%s: %s\n", d->name, d->help ? d->help : "");
    if (!d->nopts) {
        vki_sb_printf(b, "\nusage: %s (takes no options)\n", d->name);
        return;
    }
    vki_sb_printf(b, "\nusage: %s=", d->name);
    for (int k = 0; k < d->nopts; k++) {
        vki_sb_printf(b, "%s%s=", k ? ":" : "", d->opts[k].name);
        vki_sb_placeholder(b, &d->opts[k]);
    }
    if (d->needs)
        vki_sb_printf(b, "\n  every option may be left out but %s; values may be given without names, in this order\n",
                  d->needs);
    else
        vki_sb_str(b, "\n  every option may be left out; values may be given without names, in this order\n");
    if (d->example)
        vki_sb_printf(b, "  example: %s\n", d->example);
    vki_sb_str(b, "\noptions:\n");
    int w = 0;
    for (int k = 0; k < d->nopts; k++)
        if ((int)strlen(d->opts[k].name) > w)
            w = (int)strlen(d->opts[k].name);
    for (int k = 0; k < d->nopts; k++) {
        const vki_opt *o = &d->opts[k];
        vki_sb_printf(b, "  %-*s  ", w, o->name);
        vki_sb_kind(b, o);
        vki_sb_str(b, "; default ");
        vki_sb_default(b, o);
        vki_sb_printf(b, "\n  %-*s  %s\n", w, "", o->help ? o->help : "");
    }
}

static void help_all(vki_sbuf *b, const vki_op_desc *const *ops, int nops)
{
    int w = 0;
    for (int i = 0; i < nops; i++)
        if ((int)strlen(ops[i]->name) > w)
            w = (int)strlen(ops[i]->name);
    for (int i = 0; i < nops; i++) {
        const vki_op_desc *d = ops[i];
        vki_sb_printf(b, "%-*s  %s\n", w, d->name, d->help ? d->help : "");
        if (!d->nopts)
            continue;
        vki_sb_printf(b, "%-*s    ", w, "");
        for (int k = 0; k < d->nopts; k++) {
            const vki_opt *o = &d->opts[k];
            vki_sb_printf(b, "%s%s=", k ? ", " : "", o->name);
            vki_sb_placeholder(b, o);
            vki_sb_str(b, " (default ");
            vki_sb_default(b, o);
            vki_sb_str(b, ")");
        }
        vki_sb_str(b, "\n");
    }
    vki_sb_str(b, "\nPipelines: OP[=OPTIONS],...  e.g. gray,blur=sigma=2:radius=6 or gray,blur=2:6\n"
              "Run 'vkimg ops NAME' for an op's options.\n");
}

static void help_markdown(vki_sbuf *b, const vki_op_desc *const *ops, int nops)
{
    vki_sb_str(b, "| op | options (default, range) | description |\n|---|---|---|\n");
    for (int i = 0; i < nops; i++) {
        const vki_op_desc *d = ops[i];
        vki_sb_str(b, "| `");
        vki_sb_str(b, d->name);
        vki_sb_str(b, "` | ");
        if (!d->nopts)
            vki_sb_str(b, "(none)");
        for (int k = 0; k < d->nopts; k++) {
            const vki_opt *o = &d->opts[k];
            char tmp[512];
            vki_sbuf t;
            if (k)
                vki_sb_str(b, "<br>");
            vki_sb_printf(b, "`%s` (", o->name);
            vki_sb_init(&t, tmp, sizeof tmp);
            vki_sb_str(&t, o->type == VKI_OPT_FLOAT  ? "float"
                       : o->type == VKI_OPT_INT  ? "int"
                       : o->type == VKI_OPT_BOOL ? "bool"
                       : o->type == VKI_OPT_TEXT ? (o->placeholder ? o->placeholder : "text")
                                                 : "");
            if (t.len)
                vki_sb_str(&t, ", ");
            vki_sb_str(&t, "default ");
            vki_sb_default(&t, o);
            if (vki_opt_has_range(o)) {
                vki_sb_str(&t, ", ");
                vki_sb_range(&t, o);
            } else if (o->type == VKI_OPT_ENUM) {
                vki_sb_str(&t, ", one of ");
                for (int c = 0; o->choices && o->choices[c]; c++)
                    vki_sb_printf(&t, "%s%s", c ? ", " : "", o->choices[c]);
            }
            vki_sb_md(b, tmp);
            vki_sb_str(b, "): ");
            vki_sb_md(b, o->help ? o->help : "");
        }
        vki_sb_str(b, " | ");
        vki_sb_md(b, d->help ? d->help : "");
        vki_sb_str(b, " |\n");
    }
}

/* Text for roff: backslashes and hyphens escaped, no control line. */
static void vki_sb_roff(vki_sbuf *b, const char *s)
{
    if (*s == '.' || *s == '\'')
        vki_sb_str(b, "\\&");
    for (; *s; s++) {
        if (*s == '\\')
            vki_sb_str(b, "\\e");
        else if (*s == '-')
            vki_sb_str(b, "\\-");
        else if (*s == '|')
            vki_sb_str(b, "|\\:"); /* a place to break a long list of choices */
        else
            vki_sb_mem(b, s, 1);
    }
}

/* The OPS section of the man page: one tagged paragraph per op, its options
 * indented under it. */
static void help_man(vki_sbuf *b, const vki_op_desc *const *ops, int nops)
{
    vki_sb_str(b, ".ad l\n"); /* lists of choices are long words: no justification for them */
    for (int i = 0; i < nops; i++) {
        const vki_op_desc *d = ops[i];
        vki_sb_str(b, ".TP\n.B ");
        vki_sb_roff(b, d->name);
        vki_sb_str(b, "\n");
        vki_sb_roff(b, d->help ? d->help : "");
        vki_sb_str(b, "\n");
        if (d->needs) {
            vki_sb_str(b, "Needs ");
            vki_sb_roff(b, d->needs);
            vki_sb_str(b, "; example: \\fB");
            vki_sb_roff(b, d->example);
            vki_sb_str(b, "\\fR.\n");
        }
        if (!d->nopts)
            continue;
        vki_sb_str(b, ".RS\n");
        for (int k = 0; k < d->nopts; k++) {
            const vki_opt *o = &d->opts[k];
            char tmp[512];
            vki_sbuf t;
            vki_sb_init(&t, tmp, sizeof tmp);
            vki_sb_placeholder(&t, o);
            vki_sb_str(b, ".TP\n.BI ");
            vki_sb_roff(b, o->name);
            vki_sb_str(b, "= \"");
            vki_sb_roff(b, tmp);
            vki_sb_str(b, "\"\n");
            vki_sb_roff(b, o->help ? o->help : "");
            vki_sb_init(&t, tmp, sizeof tmp);
            vki_sb_str(&t, " (");
            vki_sb_kind(&t, o);
            vki_sb_str(&t, "; default ");
            vki_sb_default(&t, o);
            vki_sb_str(&t, ")");
            vki_sb_roff(b, tmp);
            vki_sb_str(b, "\n");
        }
        vki_sb_str(b, ".RE\n");
    }
}

int vki_ops_help(const vki_op_desc *const *ops, int nops, const char *name, vkimg_doc_format f, char *buf, size_t n)
{
    vki_sbuf b;
    vki_sb_init(&b, buf, n);
    if (name) {
        const vki_op_desc *d = NULL;
        for (int i = 0; i < nops; i++)
            if (!strcmp(ops[i]->name, name))
                d = ops[i];
        if (!d)
            return -1;
        help_one(&b, d);
        return vki_sb_result(&b);
    }
    if (f == VKIMG_DOC_MARKDOWN)
        help_markdown(&b, ops, nops);
    else if (f == VKIMG_DOC_MAN)
        help_man(&b, ops, nops);
    else
        help_all(&b, ops, nops);
    return vki_sb_result(&b);
}
