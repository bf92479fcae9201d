/* vkimg_prepare: the kernels of a run created ahead of it (a dry recording of
 * the ops lists them; they are made on several threads), and kernels created by
 * several threads at once (vki_kernel_get creates outside the context lock; a
 * thread asking for one another is making waits for it). Under validation:
 *   ahead    after vkimg_prepare for an input's shape, the run of that input
 *            creates no kernel (read from the log), nor does the run of the
 *            same input with its alpha all opaque (CPU devices look, and blur
 *            has a path for it: the prepare makes both, or where the caller
 *            keeps no alpha, the kernels of the image without it), and gives the bytes of
 *            a run in a second context that prepared nothing; a prepare for
 *            another shape than the run's is only a head start (the run makes
 *            the rest, the same bytes)
 *   threads  four threads each prepare and run the same pipelines on their own
 *            inputs in one fresh context: every kernel is created once (the
 *            same count as one thread running them), every output equals the
 *            single-threaded run's */
#include "gpu_harness.h"
#include "io_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A second context without prepare, for the bytes to compare with; its kernels
 * are created by its runs, and it counts them. */
static atomic_int created_other;

static void other_log(void *user, vkimg_log_level lvl, const char *msg)
{
    (void)user;
    if (!strncmp(msg, "pipeline ", 9) && strstr(msg, " created in "))
        atomic_fetch_add(&created_other, 1);
    if (lvl >= VKIMG_LOG_WARN)
        fprintf(stderr, "[%s, second context] %s\n", cur_case, msg);
}

static vkimg_ctx *other_ctx(void)
{
    vkimg_err e = { 0 };
    vkimg_ctx_opts co = { .validate = true, .log = other_log };
    vkimg_ctx *c = vkimg_ctx_create(&co, &e);
    CHECK(c != NULL, "a second context: %s", e.msg);
    return c;
}

typedef struct pcase {
    const char *pipe;
    int w, h, c;
    vkimg_fmt fmt;
    int orientation;
    bool alpha_unused; /* vkimg_run_opts.alpha_unused: an opaque input's run leaves alpha behind (CPU devices) */
} pcase;

static const pcase cases[] = {
    { "blur=3", 613, 211, 3, VKIMG_U8, 1, false },     { "blur=1.5", 97, 61, 4, VKIMG_U8, 1, false },
    { "gray,blur=2", 1, 1, 3, VKIMG_U8, 1, false },   { "blur=2", 17, 1, 2, VKIMG_U8, 1, false },
    { "resize=37%", 331, 127, 3, VKIMG_U8, 1, false }, { "resize=19x7!", 300, 200, 1, VKIMG_U16, 1, false },
    { "thumbnail=20", 211, 97, 4, VKIMG_U8, 6, false }, { "rotate=30:background=red", 37, 23, 3, VKIMG_U8, 1, false },
    { "crop=10x10+3+2,flip", 41, 31, 2, VKIMG_U8, 8, false },
    { "levels=black=0.1:white=0.8,threshold=value=0.5", 67, 5, 1, VKIMG_F32, 1, false },
    { "normalize,equalize,threshold=mode=otsu", 129, 65, 4, VKIMG_U8, 1, false },
    { "boxblur=2,threshold=mode=adaptive:radius=3", 33, 257, 2, VKIMG_U8, 1, false },
    { "blur=1.5", 97, 61, 4, VKIMG_U8, 1, true },   { "gray,blur=2", 31, 17, 4, VKIMG_U8, 1, true },
    { "crop=10x10+3+2,blur=2", 41, 31, 2, VKIMG_U16, 6, true },
};

static void run_case(vkimg_ctx *ctx, vkimg_ctx *other, const pcase *k, const pcase *prep_shape)
{
    snprintf(cur_case, sizeof cur_case, "%s on %dx%dx%d %s (orientation %d), prepared for %dx%dx%d %s", k->pipe, k->w,
             k->h, k->c, vkimg_fmt_name(k->fmt), k->orientation, prep_shape->w, prep_shape->h, prep_shape->c,
             vkimg_fmt_name(prep_shape->fmt));
    vkimg_err e = { 0 };
    vkimg_pipeline *p = vkimg_pipeline_parse(k->pipe, &e);
    CHECK(p != NULL, "%s: parse: %s", cur_case, e.msg);
    if (!p)
        return;
    vkimg_image in = { 0 }, a = { 0 }, b = { 0 };
    CHECK(vkimg_image_alloc(&in, k->w, k->h, k->c, k->fmt, &e) == 0, "%s: alloc", cur_case);
    fill_random_bytes(&in, (unsigned long long)(k->w * 31 + k->h * 7 + k->c));
    if (k->fmt == VKIMG_F32) /* values in [0, 1] */
        for (size_t i = 0; i < (size_t)k->w * k->h * k->c; i++)
            ((float *)in.data)[i] = (float)(((unsigned char *)in.data)[i * 4] / 255.0);
    vkimg_run_opts ro = { .out_fmt = k->fmt, .orientation = prep_shape->orientation,
                          .alpha_unused = k->alpha_unused };
    vkimg_image shape = { .w = prep_shape->w, .h = prep_shape->h, .c = prep_shape->c, .fmt = prep_shape->fmt };
    int before = gh_pipelines;
    CHECK(vkimg_prepare(ctx, p, &shape, &ro, &e) == 0, "%s: prepare: %s", cur_case, e.msg);
    int made_ahead = gh_pipelines - before;
    ro.orientation = k->orientation;
    before = gh_pipelines;
    CHECK(vkimg_run(ctx, p, &in, &ro, &a, &e) == 0, "%s: run: %s", cur_case, e.msg);
    int made_by_run = gh_pipelines - before;
    if (prep_shape == k)
        CHECK(made_by_run == 0, "%s: the run created %d kernel(s) after the prepare (which created %d)", cur_case,
              made_by_run, made_ahead);
    int other_before = atomic_load(&created_other);
    CHECK(vkimg_run(other, p, &in, &ro, &b, &e) == 0, "%s: run in the second context: %s", cur_case, e.msg);
    CHECK(same_image(&a, &b), "%s: the prepared run's bytes differ from the second context's", cur_case);
    /* the same input with its alpha all at the maximum, in both contexts */
    if ((k->c == 2 || k->c == 4) && (k->fmt == VKIMG_U8 || k->fmt == VKIMG_U16)) {
        const size_t ss = k->fmt == VKIMG_U8 ? 1 : 2, px = (size_t)k->c * ss;
        for (size_t i = 0; i < (size_t)k->w * k->h; i++)
            memset((unsigned char *)in.data + i * px + px - ss, 0xFF, ss);
        vkimg_image oa = { 0 }, ob = { 0 };
        before = gh_pipelines;
        CHECK(vkimg_run(ctx, p, &in, &ro, &oa, &e) == 0, "%s, opaque: run: %s", cur_case, e.msg);
        if (prep_shape == k)
            CHECK(gh_pipelines == before, "%s, opaque: the run created %d kernel(s) after the prepare", cur_case,
                  gh_pipelines - before);
        CHECK(vkimg_run(other, p, &in, &ro, &ob, &e) == 0, "%s, opaque: run in the second context: %s", cur_case,
              e.msg);
        CHECK(same_image(&oa, &ob), "%s, opaque: the prepared run's bytes differ from the second context's", cur_case);
        vkimg_image_free(&oa);
        vkimg_image_free(&ob);
    }
    /* where the caller keeps no alpha, the prepare also made the kernels of the
     * input without it (a decoder leaves an opaque alpha out; on CPU devices the
     * run drops it from an opaque input, as above, GPUs never do): that input
     * too, in both contexts */
    if (k->alpha_unused && (k->c == 2 || k->c == 4)) {
        const size_t ss = vkimg_fmt_size(k->fmt), n = (size_t)k->w * k->h;
        vkimg_image in2 = { 0 }, oa = { 0 }, ob = { 0 };
        CHECK(vkimg_image_alloc(&in2, k->w, k->h, k->c - 1, k->fmt, &e) == 0, "%s: alloc", cur_case);
        for (size_t i = 0; in2.data && i < n; i++)
            memcpy((unsigned char *)in2.data + i * (size_t)(k->c - 1) * ss,
                   (const unsigned char *)in.data + i * (size_t)k->c * ss, (size_t)(k->c - 1) * ss);
        before = gh_pipelines;
        CHECK(in2.data && vkimg_run(ctx, p, &in2, &ro, &oa, &e) == 0, "%s, no alpha: run: %s", cur_case, e.msg);
        if (prep_shape == k)
            CHECK(gh_pipelines == before, "%s, no alpha: the run created %d kernel(s) after the prepare", cur_case,
                  gh_pipelines - before);
        CHECK(in2.data && vkimg_run(other, p, &in2, &ro, &ob, &e) == 0, "%s, no alpha: run in the second context: %s",
              cur_case, e.msg);
        CHECK(same_image(&oa, &ob), "%s, no alpha: the prepared run's bytes differ from the second context's", cur_case);
        vkimg_image_free(&oa);
        vkimg_image_free(&ob);
        vkimg_image_free(&in2);
    }
    /* the second context has run the same cases before this one (and this
     * context prepared exactly those runs): its runs create what the prepare made */
    CHECK(atomic_load(&created_other) - other_before == made_ahead || prep_shape != k,
          "%s: the prepare created %d kernel(s), the same run in the second context %d", cur_case, made_ahead,
          atomic_load(&created_other) - other_before);
    if (gh_verbose)
        printf("  %s: %d made ahead, %d by the run\n", cur_case, made_ahead, made_by_run);
    vkimg_image_free(&in);
    vkimg_image_free(&a);
    vkimg_image_free(&b);
    vkimg_pipeline_free(p);
}

static void test_ahead(vkimg_ctx *ctx)
{
    vkimg_ctx *other = other_ctx();
    if (!other)
        return;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(ctx, other, &cases[i], &cases[i]);
    /* prepared for another shape (channels, size, orientation): the run still right */
    static const pcase elsewhere[] = { { "blur=3", 5, 3, 1, VKIMG_U8, 1, false }, { "thumbnail=20", 97, 211, 3, VKIMG_U16, 1, false } };
    static const pcase runs[] = { { "blur=3", 301, 97, 4, VKIMG_U8, 1, false }, { "thumbnail=20", 211, 97, 4, VKIMG_U8, 6, false } };
    for (size_t i = 0; i < 2; i++)
        run_case(ctx, other, &runs[i], &elsewhere[i]);
    /* errors: the same as the run's */
    vkimg_err e = { 0 };
    vkimg_pipeline *p = vkimg_pipeline_parse("crop=10x10+50+50", &e);
    vkimg_image shape = { .w = 20, .h = 20, .c = 3, .fmt = VKIMG_U8 };
    snprintf(cur_case, sizeof cur_case, "prepare of a crop outside the image");
    CHECK(p && vkimg_prepare(ctx, p, &shape, NULL, &e) == VKIMG_E_RUNTIME && strstr(e.msg, "crop"),
          "%s: expected the crop's error, got '%s'", cur_case, e.msg);
    CHECK(vkimg_prepare(ctx, NULL, &shape, NULL, &e) == VKIMG_E_USAGE, "prepare of no pipeline");
    vkimg_pipeline_free(p);
    CHECK(vkimg_ctx_validation_messages(other) == 0, "second context: %d validation messages",
          vkimg_ctx_validation_messages(other));
    vkimg_ctx_destroy(other);
}

/* ---- threads */

static atomic_int created_mt;
static pthread_mutex_t names_mu = PTHREAD_MUTEX_INITIALIZER;

static void mt_log(void *user, vkimg_log_level lvl, const char *msg)
{
    (void)user;
    if (!strncmp(msg, "pipeline ", 9) && strstr(msg, " created in "))
        atomic_fetch_add(&created_mt, 1);
    if (lvl >= VKIMG_LOG_WARN) {
        pthread_mutex_lock(&names_mu);
        fprintf(stderr, "[threads] %s\n", msg);
        pthread_mutex_unlock(&names_mu);
    }
}

#define MT_THREADS 4
#define MT_PIPES 4
static const char *const mt_pipes[MT_PIPES] = { "blur=3", "gray,blur=1", "resize=41%", "rotate=17" };

typedef struct mt_arg {
    vkimg_ctx *ctx;
    vkimg_pipeline *p[MT_PIPES];
    const vkimg_image *in;
    vkimg_image out[MT_PIPES];
    int rc;
    int first; /* the pipeline this thread starts with */
} mt_arg;

static void *mt_thread(void *v)
{
    mt_arg *a = v;
    for (int j = 0; j < MT_PIPES; j++) {
        int k = (a->first + j) % MT_PIPES;
        vkimg_err e = { 0 };
        vkimg_run_opts ro = { .out_fmt = VKIMG_U8 };
        if (j % 2 == 0 && vkimg_prepare(a->ctx, a->p[k], a->in, &ro, &e))
            a->rc = 1;
        if (vkimg_run(a->ctx, a->p[k], a->in, &ro, &a->out[k], &e))
            a->rc = 2;
    }
    return NULL;
}

static void test_threads(vkimg_ctx *shared)
{
    (void)shared; /* a fresh context: every kernel is created in this test */
    snprintf(cur_case, sizeof cur_case, "threads");
    vkimg_err e = { 0 };
    vkimg_pipeline *p[MT_PIPES];
    for (int k = 0; k < MT_PIPES; k++) {
        p[k] = vkimg_pipeline_parse(mt_pipes[k], &e);
        CHECK(p[k] != NULL, "parse %s", mt_pipes[k]);
        if (!p[k])
            return;
    }
    vkimg_image in = { 0 };
    CHECK(vkimg_image_alloc(&in, 523, 301, 3, VKIMG_U8, &e) == 0, "alloc");
    fill_random_bytes(&in, 99);
    /* one thread: the reference bytes and the number of kernels */
    vkimg_ctx_opts co = { .validate = true, .log = mt_log };
    vkimg_ctx *one = vkimg_ctx_create(&co, &e);
    CHECK(one != NULL, "context: %s", e.msg);
    if (!one)
        return;
    vkimg_image ref[MT_PIPES];
    atomic_store(&created_mt, 0);
    for (int k = 0; k < MT_PIPES; k++)
        CHECK(vkimg_run(one, p[k], &in, &(vkimg_run_opts){ .out_fmt = VKIMG_U8 }, &ref[k], &e) == 0, "run %s: %s",
              mt_pipes[k], e.msg);
    int created_one = atomic_load(&created_mt);
    CHECK(vkimg_ctx_validation_messages(one) == 0, "one thread: %d validation messages",
          vkimg_ctx_validation_messages(one));
    vkimg_ctx_destroy(one);

    for (int round = 0; round < 2; round++) {
        vkimg_ctx *ctx = vkimg_ctx_create(&co, &e);
        CHECK(ctx != NULL, "context: %s", e.msg);
        if (!ctx)
            break;
        atomic_store(&created_mt, 0);
        mt_arg args[MT_THREADS];
        pthread_t tid[MT_THREADS];
        for (int t = 0; t < MT_THREADS; t++) {
            args[t] = (mt_arg){ .ctx = ctx, .in = &in, .first = round ? t % MT_PIPES : 0 };
            memcpy(args[t].p, p, sizeof p);
            memset(args[t].out, 0, sizeof args[t].out);
            CHECK(pthread_create(&tid[t], NULL, mt_thread, &args[t]) == 0, "pthread_create");
        }
        for (int t = 0; t < MT_THREADS; t++)
            pthread_join(tid[t], NULL);
        CHECK(atomic_load(&created_mt) == created_one,
              "round %d: %d threads created %d kernels, one thread %d (each must be made once)", round, MT_THREADS,
              atomic_load(&created_mt), created_one);
        for (int t = 0; t < MT_THREADS; t++) {
            CHECK(args[t].rc == 0, "round %d, thread %d: %s failed", round, t, args[t].rc == 1 ? "prepare" : "run");
            for (int k = 0; k < MT_PIPES; k++) {
                CHECK(same_image(&args[t].out[k], &ref[k]), "round %d, thread %d: %s differs from one thread's", round, t,
                      mt_pipes[k]);
                vkimg_image_free(&args[t].out[k]);
            }
        }
        CHECK(vkimg_ctx_validation_messages(ctx) == 0, "threads: %d validation messages",
              vkimg_ctx_validation_messages(ctx));
        vkimg_ctx_destroy(ctx);
    }
    for (int k = 0; k < MT_PIPES; k++) {
        vkimg_image_free(&ref[k]);
        vkimg_pipeline_free(p[k]);
    }
    vkimg_image_free(&in);
}

int main(void)
{
    static const gh_suite suites[] = { { "ahead", test_ahead }, { "threads", test_threads } };
    return gh_main("test_prepare", suites, 2);
}
