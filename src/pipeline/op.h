/* Op descriptors. One op = one descriptor (src/ops/NAME.c) + one shader
 * (shaders/ops/NAME.comp). The parser, `vkimg ops`, the README table and bench all
 * read the descriptor. This header includes no Vulkan headers. */
#ifndef VKI_OP_H
#define VKI_OP_H

#include <stdbool.h>
#include <stddef.h>

#define VKI_MAX_OPTS 8
#define VKI_MAX_OUTPUTS 32 /* images one pipeline writes (mipmap levels) */

typedef enum vki_opt_type {
    VKI_OPT_FLOAT,
    VKI_OPT_INT,
    VKI_OPT_ENUM, /* value = index into choices */
    VKI_OPT_BOOL, /* 0/1; accepts 0,1,true,false,yes,no,on,off */
    VKI_OPT_TEXT, /* a syntax of its own (geometry, colour): parse() fills x[k][] */
} vki_opt_type;

#define VKI_TEXT_VALUES 6 /* numbers a TEXT option's parse() may produce */

typedef struct vki_opt {
    const char *name;
    vki_opt_type type;
    double def;               /* default value (ENUM: index) */
    double min, max;          /* inclusive range for FLOAT/INT */
    bool min_exclusive;       /* e.g. sigma > 0 */
    const char *const *choices; /* ENUM: NULL-terminated names */
    const char *auto_default; /* if non-NULL, the default is computed and this text
                                 describes it ("ceil(3*sigma)"); set[] stays false */
    const char *help;
    /* TEXT: the syntax for help ("WxH[^!<>]"), the default text (parsed like a
     * given value; NULL: the option must be given, unless `optional`), and the
     * functions that read the text into x[] (0, or -1 with a reason in why) and
     * write x[] back as text that reads back the same. */
    const char *placeholder;
    const char *def_text;
    bool optional;
    int (*parse)(const char *t, size_t n, double x[VKI_TEXT_VALUES], char *why, size_t wn);
    void (*format)(const double x[VKI_TEXT_VALUES], char *buf, size_t n);
} vki_opt;

typedef struct vki_args {
    double v[VKI_MAX_OPTS]; /* TEXT: 1 if it has a value (given or its default) */
    bool set[VKI_MAX_OPTS]; /* given explicitly by the user */
    double x[VKI_MAX_OPTS][VKI_TEXT_VALUES]; /* TEXT: what parse() read */
} vki_args;

struct vki_rec;  /* exec's recording context (src/exec.h) */
struct vki_step; /* one op of a planned pipeline (src/exec.h) */
struct vki_gpu; /* a device (src/gpu/gpu.h) */

typedef struct vki_op_desc {
    const char *name;
    const char *help; /* one line */
    /* Ops that cannot run on their defaults alone (resize needs a size): what must
     * be given, in words, and an invocation that parses (both shown in the help;
     * the tests parse the example). NULL for ops that run with no options. */
    const char *needs;
    const char *example;
    const vki_opt *opts;
    int nopts;
    /* Output channels for in_c input channels (NULL: same as input). */
    int (*out_channels)(int in_c, const vki_args *a);
    /* Ops whose result is data, not a picture (integral): the sample format they
     * write. Such an op must be the last; its output goes to .npy. */
    bool data_output;
    int data_fmt; /* vkimg_fmt */
    /* Output size for an input of w x h (NULL: the same). Returns 0, or -1 with
     * a one-line reason in why (e.g. nothing left of the image after a crop). */
    int (*out_size)(int w, int h, const vki_args *a, int *out_w, int *out_h, char *why, size_t n);
    /* The output is exactly out_size of the geometry's input size, whatever size
     * the actual input has (resize, thumbnail): the decoder may have shrunk it. */
    bool exact_size;
    /* Shrink-on-load: the smallest input this op needs when the image is w x h
     * (the geometry's size) and a decoder could deliver it smaller (JPEG DCT
     * scaling); it is then resampled from what was decoded. NULL: all of it. */
    void (*min_input)(int w, int h, const vki_args *a, int *min_w, int *min_h);
    /* Ops that write several images (mipmaps): the sizes of the images for an
     * input of w x h (the first is out_size's), their count as the result (at most
     * VKI_MAX_OUTPUTS). Such an op must be the last. NULL: one image. */
    int (*outputs)(int w, int h, const vki_args *a, int *ws, int *hs);
    /* The first of those images is the input as it is (mipmaps' level 0): where the
     * op is the pipeline's only one and the output format is the input's, the run
     * takes it from the input (no device copy, no readback) and the op's record
     * sees outs[0] == in and leaves it alone. */
    bool first_output_is_input;
    /* For input in [0, 1] the output is in [0, 1]: each output sample is a
     * convex combination of input samples (gray, blur). */
    bool unit_out;
    /* Reads an image kept as u16 between two ops as well as a float one: its
     * result moves by at most the u16 step (1/65535) of its input (a smoothing
     * filter: blur), never across a threshold. On CPU devices an image between
     * ops whose chain so far is unit_out, from 8- or 16-bit input, is kept as
     * u16 for such an op (plan.c inter_fmt). */
    bool u16_in;
    /* The output's alpha is the input's, sample for sample (gray, copy, orient). */
    bool alpha_copied;
    /* With these options the op only moves pixels: every output sample is an
     * input sample of the same channel, bit for bit (copy, flips, transposes,
     * rotations by multiples of 90 degrees, crops, orient). NULL: never. On CPU
     * devices the image after a chain of such ops keeps the input's format
     * (plan.c inter_fmt), and alpha all at its maximum stays so (apply.c). Use
     * vki_op_moves. */
    bool (*moves)(const vki_args *a);
    /* Faster where the input's alpha is all at its maximum (vki_step.opaque_alpha:
     * blur then blurs the channels as they are, premultiplying by 1 being
     * nothing); the run looks at the input's alpha on CPU devices for such an op
     * (apply.c plan_for). Such an op's opaque path is its plain one on the
     * colour channels, and its output's alpha stays at the maximum
     * (vki_plan_may_drop_alpha). */
    bool opaque_fast;
    /* Composites the colour over a background by the alpha and drops the alpha
     * (flatten): where the alpha is all at its maximum it gives the colour as it
     * is, so a pipeline that ends in it may run an opaque input without its alpha
     * (vkimg_pipeline_keeps_opaque). */
    bool flattens;
    /* Cross-option validation after parsing (e.g. radius vs sigma); may fill
     * defaults. Returns 0, or -1 with a one-line reason in why and the index of
     * the offending option in *bad_opt (-1 = the op as a whole). */
    int (*check)(vki_args *a, char *why, size_t n, int *bad_opt);
    /* Records the op's dispatches (src/exec.h). Returns 0 or a VKIMG_E_* code
     * with the message set through the recording context. */
    int (*record)(struct vki_rec *r, const struct vki_step *s);
    /* Whether its record writes a right result where s->out == s->in (its output
     * over its input) on device g. The run does so where the caller lets it
     * overwrite the input (vkimg_run_opts.consume), the op is the only one
     * and the device's memory is the host's: the result then takes no memory of
     * its own, which on a CPU device is memory the first touch of costs (blur).
     * NULL: never. */
    bool (*in_place)(const struct vki_gpu *g, const struct vki_step *s);
} vki_op_desc;

/* Whether op d with options a only moves pixels (vki_op_desc.moves). */
static inline bool vki_op_moves(const vki_op_desc *d, const vki_args *a)
{
    return d->moves && d->moves(a);
}
/* vki_op_desc.moves of the ops that always move. */
bool vki_moves_always(const vki_args *a);

#endif
