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
 * produces data (integral) or several images (mipmaps) only last.
 * VKIMG_E_USAGE at the offending op. */
int vki_pipeline_validate(const vkimg_pipeline *p, vkimg_err *e);

/* What a pipeline makes of a w x h x c input: the size and channels of every
 * stage's input (index i) and output (i + 1), and the images the last op writes.
 * geo_w x geo_h is the size stage 0's geometry is resolved against (the image's
 * size in its file when the decoder shrank it; else w x h): stage sizes follow
 * both the actual and the geometry's sizes until an exact_size op (resize,
 * thumbnail) lands on its target. */
typedef struct vki_shape {
    int n;
    int w[VKIMG_MAX_STAGES + 1], h[VKIMG_MAX_STAGES + 1], c[VKIMG_MAX_STAGES + 1];
    int geo_w[VKIMG_MAX_STAGES + 1], geo_h[VKIMG_MAX_STAGES + 1];
    int nout; /* images written: 1, or the last op's outputs */
    int out_w[VKI_MAX_OUTPUTS], out_h[VKI_MAX_OUTPUTS];
} vki_shape;
int vki_pipeline_shape(const vkimg_pipeline *p, int w, int h, int c, int geo_w, int geo_h, vki_shape *s,
                       vkimg_err *e);

/* The documentation of op `name` (NULL: of every op of the table: a list, a
 * Markdown table or man page paragraphs) written to buf like snprintf; -1 if
 * there is no such op. */
int vki_ops_help(const vki_op_desc *const *ops, int nops, const char *name, vkimg_doc_format f, char *buf, size_t n);

#endif
