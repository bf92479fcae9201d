/* Parsed pipelines (no Vulkan). */
#ifndef VKI_PIPELINE_H
#define VKI_PIPELINE_H

#include "vkimg.h"
#include "op.h"

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

#endif
