/* The op registry (ops.def) and the public functions that need it. */
#ifndef VKI_OPS_REGISTRY_H
#define VKI_OPS_REGISTRY_H

#include "pipeline/op.h"

extern const vki_op_desc *const vki_ops[];
extern const int vki_nops;
/* The descriptor named by the len bytes at name, or NULL. */
const vki_op_desc *vki_op_find(const char *name, size_t len);

#endif
