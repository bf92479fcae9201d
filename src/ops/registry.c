/* The op registry: every op descriptor, in the order `vkimg ops` lists them. */
#include "op.h"
#include "util.h"

#include <string.h>

extern const vki_op_desc vki_op_copy, vki_op_gray, vki_op_blur, vki_op_integral, vki_op_boxblur, vki_op_threshold, vki_op_normalize, vki_op_equalize;

const vki_op_desc *const vki_ops[] = {
    &vki_op_copy,
    &vki_op_gray,
    &vki_op_blur,
    &vki_op_integral,
    &vki_op_boxblur,
    &vki_op_threshold,
    &vki_op_normalize,
    &vki_op_equalize,
};
const int vki_nops = (int)VKI_ARRAY_LEN(vki_ops);

const vki_op_desc *vki_op_find(const char *name, size_t len)
{
    for (int i = 0; i < vki_nops; i++)
        if (strlen(vki_ops[i]->name) == len && !memcmp(vki_ops[i]->name, name, len))
            return vki_ops[i];
    return NULL;
}

#include "pipeline.h"

bool vkimg_pipeline_data_output(const vkimg_pipeline *p, vkimg_fmt *fmt)
{
    if (!p || p->n < 1 || !p->ops[p->n - 1].desc->data_output)
        return false;
    if (fmt)
        *fmt = (vkimg_fmt)p->ops[p->n - 1].desc->data_fmt;
    return true;
}
