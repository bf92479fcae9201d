/* The two ways exec submits an image (src/gpu.h, xqueue): on one queue, or the
 * upload and the readback on a transfer queue chained to the kernels on the
 * compute queue by semaphores. Every pipeline and image below runs on a
 * context of each and must give the same bytes, from one thread and from
 * several at once; --timing's figures must be filled on both, also when the
 * transfer queue has no timestamps (the copies are then timed on the host);
 * and no validation message may appear (ctest runs this with the validation
 * layer and synchronization validation).
 *
 * Where the device has no transfer-only family (lavapipe: one family of one
 * queue) the second context is made with VKIMG_SPLIT_QUEUES=1: the same three
 * submissions and semaphores, on a second queue of the compute family or, with
 * only one queue, on that queue. What that can't show: copies really running
 * beside kernels, and CONCURRENT buffers over two families (one family here). */
#include "t.h"
#include "vkimg/vkimg.h"
#include "gpu/gpu.h" /* the contexts' queues; to take the transfer queue's timestamps away */

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const PIPES[] = {
    "copy",
    "gray",
    "gray,blur=2",
    "blur=1.5,threshold=mode=otsu",
    "threshold=mode=adaptive:radius=5:offset=3",
    "normalize,equalize",
    "boxblur=3",
    "integral",
    "gray,blur=sigma=1:method=box,normalize=link=true",
};
enum { NPIPES = sizeof PIPES / sizeof PIPES[0] };

static const struct { int w, h, c; vkimg_fmt fmt; } IMAGES[] = {
    { 97, 61, 3, VKIMG_U8 },   /* packed RGB8 word path, odd sizes */
    { 64, 33, 4, VKIMG_U16 },
    { 50, 50, 1, VKIMG_F32 },
    { 128, 77, 2, VKIMG_U8 },
};
enum { NIMAGES = sizeof IMAGES / sizeof IMAGES[0], NCASES = NPIPES * NIMAGES };

static vkimg_pipeline *pipes[NPIPES];
static vkimg_image inputs[NIMAGES];
static vkimg_image refs[NCASES]; /* results on the one-queue context */

static void make_image(int i)
{
    vkimg_err e = { 0 };
    vkimg_image *im = &inputs[i];
    if (vkimg_image_alloc(im, IMAGES[i].w, IMAGES[i].h, IMAGES[i].c, IMAGES[i].fmt, &e)) {
        CHECK(0, "alloc: %s", e.msg);
        return;
    }
    unsigned long long s = 0x9e3779b97f4a7c15ull + (unsigned long long)i;
    size_t n = (size_t)im->w * im->h * im->c;
    for (size_t k = 0; k < n; k++) {
        unsigned long long r = t_rand(&s);
        if (im->fmt == VKIMG_U8)
            ((uint8_t *)im->data)[k] = (uint8_t)(r >> 56);
        else if (im->fmt == VKIMG_U16)
            ((uint16_t *)im->data)[k] = (uint16_t)(r >> 48);
        else
            ((float *)im->data)[k] = (float)(r >> 40) / (float)(1u << 24);
    }
}

static int run_case(vkimg_ctx *ctx, int k, vkimg_timing *t, vkimg_image *out, vkimg_err *e)
{
    const vkimg_image *in = &inputs[k % NIMAGES];
    vkimg_run_opts o = { .out_fmt = in->fmt, .timing = t };
    return vkimg_run(ctx, pipes[k / NIMAGES], in, &o, out, e);
}

static bool same_image(const vkimg_image *a, const vkimg_image *b)
{
    return a->w == b->w && a->h == b->h && a->c == b->c && a->fmt == b->fmt &&
           !memcmp(a->data, b->data, vkimg_image_bytes(a));
}

/* Runs case k on ctx and compares it with refs[k]. */
static void check_case(vkimg_ctx *ctx, const char *what, int k)
{
    vkimg_err e = { 0 };
    vkimg_image out = { 0 };
    int rc = run_case(ctx, k, NULL, &out, &e);
    CHECK(rc == 0, "%s: '%s' on image %d: %s", what, PIPES[k / NIMAGES], k % NIMAGES, e.msg);
    if (!rc)
        CHECK(same_image(&out, &refs[k]), "%s: '%s' on image %d: not the bytes of the one-queue path", what,
              PIPES[k / NIMAGES], k % NIMAGES);
    vkimg_image_free(&out);
}

/* ---------------------------------------------------------------- contexts */

static vkimg_ctx *open_ctx_pool(const char *no_transfer, const char *split, const char *pool_mb, vkimg_err *e)
{
    if (pool_mb)
        setenv("VKIMG_BUFFER_POOL_MB", pool_mb, 1);
    else
        unsetenv("VKIMG_BUFFER_POOL_MB");
    if (no_transfer)
        setenv("VKIMG_NO_TRANSFER_QUEUE", no_transfer, 1);
    else
        unsetenv("VKIMG_NO_TRANSFER_QUEUE");
    if (split)
        setenv("VKIMG_SPLIT_QUEUES", split, 1);
    else
        unsetenv("VKIMG_SPLIT_QUEUES");
    vkimg_ctx_opts co = { .validate = true };
    vkimg_ctx *ctx = vkimg_ctx_create(&co, e);
    unsetenv("VKIMG_NO_TRANSFER_QUEUE");
    unsetenv("VKIMG_SPLIT_QUEUES");
    unsetenv("VKIMG_BUFFER_POOL_MB");
    return ctx;
}

static vkimg_ctx *open_ctx(const char *no_transfer, const char *split, vkimg_err *e)
{
    return open_ctx_pool(no_transfer, split, NULL, e);
}

static void describe_queues(const char *name, const vkimg_ctx *ctx)
{
    const vki_gpu *g = &ctx->gpu;
    if (!g->xqueue)
        printf("  %-8s one queue: family %u\n", name, g->qfam);
    else
        printf("  %-8s compute family %u, transfer family %d%s, transfer timestamps %s\n", name, g->qfam, g->xfam,
               g->xqueue == g->queue ? " (the same queue)" : "",
               g->xts_bits && g->host_query_reset ? "yes" : "no");
}

/* ---------------------------------------------------------------- timing */

static void check_timing(vkimg_ctx *ctx, const char *what)
{
    const int k = 2 * NIMAGES; /* "gray,blur=2" on image 0 */
    vkimg_timing t;
    memset(&t, 0, sizeof t);
    vkimg_err e = { 0 };
    vkimg_image out = { 0 };
    int rc = run_case(ctx, k, &t, &out, &e);
    CHECK(rc == 0, "%s: timed run: %s", what, e.msg);
    if (rc)
        return;
    CHECK(same_image(&out, &refs[k]), "%s: timed run: other bytes", what);
    vkimg_image_free(&out);
    CHECK(t.upload_ms > 0 && t.readback_ms > 0, "%s: upload %.4f ms, readback %.4f ms", what, t.upload_ms,
          t.readback_ms);
    CHECK(t.total_ms >= t.upload_ms, "%s: total %.3f ms < upload %.3f ms", what, t.total_ms, t.upload_ms);
    if (!ctx->gpu.lim.timestamp_bits) {
        CHECK(t.nstages == 0, "%s: %d stages timed without timestamps", what, t.nstages);
        return;
    }
    CHECK(t.nstages == 2, "%s: %d stages timed, want 2", what, t.nstages);
    if (t.nstages != 2)
        return;
    CHECK(!strcmp(t.stage[0].name, "gray") && !strcmp(t.stage[1].name, "blur"), "%s: stages '%s', '%s'", what,
          t.stage[0].name, t.stage[1].name);
    double sum = t.stage[0].gpu_ms + t.stage[1].gpu_ms;
    CHECK(t.stage[0].gpu_ms > 0 && t.stage[1].gpu_ms > 0, "%s: stage times %.4f, %.4f ms", what, t.stage[0].gpu_ms,
          t.stage[1].gpu_ms);
    CHECK(t.gpu_total_ms >= sum * 0.999, "%s: GPU total %.4f ms < the stages' %.4f ms", what, t.gpu_total_ms, sum);
}

/* ---------------------------------------------------------------- buffer pool */

/* The references come from a context without the pool (fresh buffers every
 * run); every other context reuses buffers that hold the previous image's
 * data, so equal bytes above also show that no kernel reads what it did not
 * write. Here: a second run of the same case allocates nothing, what is idle
 * stays under the cap, and the context without the pool keeps nothing. */
static void check_pool(vkimg_ctx *ctx, vkimg_ctx *nopool)
{
    const vki_gpu *g = &ctx->gpu;
    for (int k = 0; k < NCASES; k++) {
        check_case(ctx, "pool", k); /* its buffers are in the pool afterwards */
        unsigned before = atomic_load(&g->allocs);
        check_case(ctx, "pool, again", k);
        unsigned after = atomic_load(&g->allocs);
        CHECK(after == before, "pool: '%s' on image %d again allocated %u buffer(s)", PIPES[k / NIMAGES], k % NIMAGES,
              after - before);
    }
    CHECK(g->pool_n > 0 && g->pool_bytes <= g->pool_cap, "pool: %d idle buffer(s), %llu bytes, cap %llu", g->pool_n,
          (unsigned long long)g->pool_bytes, (unsigned long long)g->pool_cap);
    CHECK(nopool->gpu.pool_cap == 0 && nopool->gpu.pool_n == 0, "VKIMG_BUFFER_POOL_MB=0: %d idle buffer(s), cap %llu",
          nopool->gpu.pool_n, (unsigned long long)nopool->gpu.pool_cap);
    unsigned before = atomic_load(&nopool->gpu.allocs);
    check_case(nopool, "no pool", 0);
    CHECK(atomic_load(&nopool->gpu.allocs) > before, "VKIMG_BUFFER_POOL_MB=0: a run allocated nothing");

    /* an idle buffer serves a smaller request down to half its size (a batch's RGB
     * after its RGBA images), not below: sizes far from the cases' above */
    static const struct { int side; bool alloc; } seq[] = {
        { 700, true }, { 650, false }, { 520, false }, { 300, true },
    };
    vkimg_err e = { 0 };
    vkimg_pipeline *p = vkimg_pipeline_parse("gray,blur=2", &e);
    CHECK(p != NULL, "parse: %s", e.msg);
    for (size_t i = 0; p && i < sizeof seq / sizeof seq[0]; i++) {
        vkimg_image in = { 0 }, out = { 0 };
        const int s = seq[i].side;
        if (vkimg_image_alloc(&in, s, s, 4, VKIMG_U8, &e)) {
            CHECK(0, "alloc: %s", e.msg);
            break;
        }
        for (size_t k = 0; k < (size_t)s * (size_t)s * 4; k++)
            ((unsigned char *)in.data)[k] = (unsigned char)(k * 2654435761u >> 24);
        vkimg_run_opts o;
        memset(&o, 0, sizeof o);
        o.out_fmt = VKIMG_U8;
        unsigned a0 = atomic_load(&g->allocs);
        int rc = vkimg_run(ctx, p, &in, &o, &out, &e);
        unsigned a1 = atomic_load(&g->allocs);
        CHECK(rc == 0, "pool: gray,blur=2 on %dx%d RGBA: %s", s, s, e.msg);
        CHECK((a1 > a0) == seq[i].alloc, "pool: gray,blur=2 on %dx%d RGBA after %dx%d allocated %u buffer(s), want %s",
              s, s, i ? seq[i - 1].side : 0, i ? seq[i - 1].side : 0, a1 - a0, seq[i].alloc ? "some" : "none");
        vkimg_image_free(&out);
        vkimg_image_free(&in);
    }
    vkimg_pipeline_free(p);
}

/* ---------------------------------------------------------------- threads */

typedef struct pool {
    vkimg_ctx *ctx;
    atomic_int next;
    int rounds;
} pool;

static void *thread_main(void *arg)
{
    pool *p = arg;
    for (int k; (k = atomic_fetch_add(&p->next, 1)) < p->rounds * NCASES;)
        check_case(p->ctx, "threads", k % NCASES);
    return NULL;
}

static void check_threads(vkimg_ctx *ctx)
{
    pool p = { .ctx = ctx, .rounds = 2 };
    atomic_init(&p.next, 0);
    pthread_t tid[4];
    int n = 0;
    for (; n < 4; n++)
        if (pthread_create(&tid[n], NULL, thread_main, &p))
            break;
    CHECK(n > 0, "no thread could be started");
    for (int i = 0; i < n; i++)
        pthread_join(tid[i], NULL);
}

int main(void)
{
    vkimg_err e = { 0 };
    vkimg_ctx *one = open_ctx_pool("1", NULL, "0", &e); /* the references: fresh buffers for every run */
    if (!one)
        return t_skip_no_device(e.msg);
    vkimg_ctx *dflt = open_ctx(NULL, NULL, &e);
    CHECK(dflt != NULL, "default context: %s", e.msg);
    vkimg_ctx *split = open_ctx(NULL, "1", &e);
    CHECK(split != NULL, "VKIMG_SPLIT_QUEUES=1 context: %s", e.msg);
    vkimg_ctx *forced = open_ctx("1", "1", &e);
    CHECK(forced != NULL, "VKIMG_NO_TRANSFER_QUEUE=1 VKIMG_SPLIT_QUEUES=1 context: %s", e.msg);
    setenv("VKIMG_NO_UMA", "1", 1);
    vkimg_ctx *staged = open_ctx("1", NULL, &e);
    unsetenv("VKIMG_NO_UMA");
    CHECK(staged != NULL, "VKIMG_NO_TRANSFER_QUEUE=1 VKIMG_NO_UMA=1 context: %s", e.msg);
    if (!dflt || !split || !forced || !staged)
        goto done;
    printf("device: %s\n", vkimg_ctx_device_desc(one));
    describe_queues("one", one);
    describe_queues("default", dflt);
    describe_queues("split", split);

    /* which path each context takes */
    CHECK(one->gpu.xqueue == NULL, "VKIMG_NO_TRANSFER_QUEUE=1 still has a transfer queue");
    CHECK(forced->gpu.xqueue == NULL, "VKIMG_NO_TRANSFER_QUEUE=1 loses to VKIMG_SPLIT_QUEUES=1");
    CHECK(split->gpu.xqueue != NULL, "VKIMG_SPLIT_QUEUES=1 has no transfer queue");
    CHECK(!staged->gpu.uma && !split->gpu.uma, "VKIMG_NO_UMA=1 or a transfer queue: still no staging copies");
    CHECK(!one->gpu.uma || one->gpu.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
          "a discrete GPU without staging copies");
    /* a CPU device (lavapipe, CI) maps its device memory cached: the path without staging copies is taken */
    CHECK(one->gpu.uma || one->gpu.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU, "a CPU device with staging copies");
    printf("  one queue: %s\n", one->gpu.uma ? "no staging copies (device memory mapped by the host)" : "staging copies");
    CHECK(!dflt->gpu.xqueue || dflt->gpu.xfam != (int)dflt->gpu.qfam,
          "by default a transfer queue is only a transfer-only family's (family %d)", dflt->gpu.xfam);

    for (int i = 0; i < NPIPES; i++) {
        pipes[i] = vkimg_pipeline_parse(PIPES[i], &e);
        CHECK(pipes[i] != NULL, "parse '%s': %s", PIPES[i], e.msg);
        if (!pipes[i])
            goto done;
    }
    for (int i = 0; i < NIMAGES; i++)
        make_image(i);
    for (int k = 0; k < NCASES; k++) {
        int rc = run_case(one, k, NULL, &refs[k], &e);
        CHECK(rc == 0, "one queue: '%s' on image %d: %s", PIPES[k / NIMAGES], k % NIMAGES, e.msg);
    }

    /* same bytes on every path, one thread */
    vkimg_ctx *const others[] = { split, dflt, forced, staged };
    const char *const names[] = { "split", "default", "forced", "staged" };
    for (int c = 0; c < 4; c++) {
        if (c == 1 && !dflt->gpu.xqueue)
            continue; /* the default is the one-queue path: done above */
        for (int k = 0; k < NCASES; k++)
            check_case(others[c], names[c], k);
    }

    /* several images in flight at once on the transfer-queue path */
    check_threads(split);
    check_pool(dflt, one);

    /* timing on both paths, and the copies timed on the host when the transfer
     * queue has no timestamps (some transfer families report 0 valid bits) */
    check_timing(one, "one queue");
    check_timing(staged, "one queue, staging copies");
    check_timing(split, "split");
    uint32_t bits = split->gpu.xts_bits;
    split->gpu.xts_bits = 0;
    check_timing(split, "split, host-timed copies");
    split->gpu.xts_bits = bits;

    vkimg_ctx *const all[] = { one, dflt, split, forced, staged };
    for (int c = 0; c < 5; c++) {
        int vm = vkimg_ctx_validation_messages(all[c]);
        CHECK(vm == 0, "context %d: %d validation messages", c, vm);
    }
done:
    for (int k = 0; k < NCASES; k++)
        vkimg_image_free(&refs[k]);
    for (int i = 0; i < NIMAGES; i++)
        vkimg_image_free(&inputs[i]);
    for (int i = 0; i < NPIPES; i++)
        vkimg_pipeline_free(pipes[i]);
    vkimg_ctx_destroy(staged);
    vkimg_ctx_destroy(forced);
    vkimg_ctx_destroy(split);
    vkimg_ctx_destroy(dflt);
    vkimg_ctx_destroy(one);
    return t_done("test_queues");
}
