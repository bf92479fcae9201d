/* Writing the several images of one result (mipmap levels): a {level} path
 * template, one file each, or one KTX2 file. */
#include "io/io_priv.h"
#include "io/ktx2.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEVEL_FIELD "{level}"

char *vkimg_level_path(const char *path, int k)
{
    const char *f = path ? strstr(path, LEVEL_FIELD) : NULL;
    if (!f)
        return NULL;
    size_t n = strlen(path) + 16;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s%d%s", (int)(f - path), path, k, f + strlen(LEVEL_FIELD));
    return out;
}

int vkimg_save_levels(const char *path, const vkimg_image *levels, int n, const vkimg_save_opts *o, vkimg_err *e)
{
    if (!path || !levels || n < 1)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_save_levels: NULL argument");
    if (vkimg_file_kind_of(path) == VKIMG_FILE_KTX2 && !strstr(path, LEVEL_FIELD))
        return vki_ktx2_save(path, levels, n, e);
    if (!strstr(path, LEVEL_FIELD))
        return vki_fail(e, VKIMG_E_USAGE, "%s: %d images to write: the output needs {level} in its name, or .ktx2",
                        path, n);
    /* all the levels or none: a failed level leaves the files that were there */
    vki_txn *t = vki_txn_begin();
    for (int k = 0; t && k < n; k++) {
        char *p = vkimg_level_path(path, k);
        int rc = p ? vkimg_save(p, &levels[k], o, e) : vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory", path);
        free(p);
        if (rc) {
            vki_txn_abort(t);
            return rc;
        }
    }
    return vki_txn_commit(t, e);
}
