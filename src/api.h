/* Internal glue between the public API (api.c) and exec. */
#ifndef VKI_API_H
#define VKI_API_H

#include "gpu.h"

struct vkimg_ctx {
    vki_gpu gpu;
};

int vki_exec_run(vki_gpu *g, const vkimg_pipeline *p, const vkimg_image *in, const vkimg_run_opts *o,
                 vkimg_image *out, vkimg_err *e);

#endif
