/* The op registry: every op descriptor (ops.def), and the public entry points
 * that look ops up by name. */
#include "ops/registry.h"
#include "pipeline/pipeline.h"
#include "core/util.h"

#include <string.h>

#define VKI_OP(name) extern const vki_op_desc vki_op_##name;
#include "ops/ops.def"
#undef VKI_OP

const vki_op_desc *const vki_ops[] = {
#define VKI_OP(name) &vki_op_##name,
#include "ops/ops.def"
#undef VKI_OP
};
const int vki_nops = (int)VKI_ARRAY_LEN(vki_ops);

const vki_op_desc *vki_op_find(const char *name, size_t len)
{
    for (int i = 0; i < vki_nops; i++)
        if (strlen(vki_ops[i]->name) == len && !memcmp(vki_ops[i]->name, name, len))
            return vki_ops[i];
    return NULL;
}

vkimg_pipeline *vkimg_pipeline_parse(const char *text, vkimg_err *e)
{
    return vki_pipeline_parse_ops(text, vki_ops, vki_nops, e);
}

int vkimg_op_count(void)
{
    return vki_nops;
}

const char *vkimg_op_name(int i)
{
    return i >= 0 && i < vki_nops ? vki_ops[i]->name : NULL;
}

int vkimg_ops_help(const char *name, vkimg_doc_format f, char *buf, size_t n)
{
    if (buf && n)
        buf[0] = 0;
    return vki_ops_help(vki_ops, vki_nops, name, f, buf, n);
}
