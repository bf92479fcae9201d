/* Parsed pipelines (no Vulkan). */
#ifndef VKI_PIPELINE_H
#define VKI_PIPELINE_H

#include "vkimg/vkimg.h"
#include "pipeline/op.h"

typedef struct vki_pipe_op {
    const vki_op_desc *desc;
    vki_args args; /* every option has a value after parsing (defaults filled;
                      auto defaults are filled by desc->check) */
    int pos;       /* byte offset of the op's name in the text */
} vki_pipe_op;

struct vkimg_pipeline {
    int n;
    vki_pipe_op *ops;
};

/* Parses against an op table (the registry for vkimg_pipeline_parse, src/ops;
 * tests pass their own descriptors to reach paths no registered op has). */
vkimg_pipeline *vki_pipeline_parse_ops(const char *text, const vki_op_desc *const *ops, int nops, vkimg_err *e);

/* The rules of a whole pipeline: 1 to VKI_MAX_STAGES ops, and an op that
 * produces data (integral) only last. VKIMG_E_USAGE at the offending op. */
int vki_pipeline_validate(const vkimg_pipeline *p, vkimg_err *e);

/* The documentation of op `name` (NULL: of every op of the table: a list, a
 * Markdown table or man page paragraphs) written to buf like snprintf; -1 if
 * there is no such op. */
int vki_ops_help(const vki_op_desc *const *ops, int nops, const char *name, vkimg_doc_format f, char *buf, size_t n);

#endif
