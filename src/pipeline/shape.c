/* What a pipeline makes of an input: sizes and channels per stage (pipeline.h). */
#include "pipeline/pipeline.h"
#include "core/util.h"

#include <string.h>

int vki_pipeline_shape(const vkimg_pipeline *p, int w, int h, int c, int geo_w, int geo_h, vki_shape *s,
                       vkimg_err *e)
{
    memset(s, 0, sizeof *s);
    int rc = vki_pipeline_validate(p, e);
    if (rc)
        return rc;
    if (w < 1 || h < 1 || c < 1 || c > 4 || geo_w < 1 || geo_h < 1)
        return vki_fail(e, VKIMG_E_RUNTIME, "invalid input image %dx%dx%d", w, h, c);
    s->n = p->n;
    s->w[0] = w;
    s->h[0] = h;
    s->c[0] = c;
    s->geo_w[0] = geo_w;
    s->geo_h[0] = geo_h;
    for (int i = 0; i < p->n; i++) {
        const vki_pipe_op *op = &p->ops[i];
        const vki_op_desc *d = op->desc;
        s->c[i + 1] = d->out_channels ? d->out_channels(s->c[i], &op->args) : s->c[i];
        if (s->c[i + 1] < 1 || s->c[i + 1] > 4)
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: can't produce %d channels", d->name, s->c[i + 1]);
        int gw = s->geo_w[i], gh = s->geo_h[i], aw = s->w[i], ah = s->h[i];
        char why[512] = "invalid output size";
        if (d->out_size && (d->out_size(gw, gh, &op->args, &gw, &gh, why, sizeof why) ||
                            (!d->exact_size && (s->w[i] != s->geo_w[i] || s->h[i] != s->geo_h[i]) &&
                             d->out_size(aw, ah, &op->args, &aw, &ah, why, sizeof why))))
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: %s", d->name, why);
        bool synced = d->exact_size || (s->w[i] == s->geo_w[i] && s->h[i] == s->geo_h[i]);
        s->geo_w[i + 1] = gw;
        s->geo_h[i + 1] = gh;
        s->w[i + 1] = synced ? gw : aw;
        s->h[i + 1] = synced ? gh : ah;
    }
    int n = p->n;
    const vki_pipe_op *last = &p->ops[n - 1];
    s->nout = 1;
    s->out_w[0] = s->w[n];
    s->out_h[0] = s->h[n];
    if (last->desc->outputs) {
        s->nout = last->desc->outputs(s->w[n - 1], s->h[n - 1], &last->args, s->out_w, s->out_h);
        if (s->nout < 1 || s->nout > VKI_MAX_OUTPUTS)
            return vki_fail(e, VKIMG_E_RUNTIME, "%s: %d images (1..%d)", last->desc->name, s->nout, VKI_MAX_OUTPUTS);
        s->w[n] = s->out_w[0];
        s->h[n] = s->out_h[0];
    }
    return 0;
}
