/* --trace FILE (trace.h). Events are kept in memory (a few hundred bytes an
 * image) and written once at the end. */
#define _GNU_SOURCE
#include "trace.h"
#include "cli.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct event {
    int tid;
    char cat[12];
    char name[40];
    double start_ms, end_ms;
    char *file; /* NULL: none */
} event;

typedef struct lane {
    int tid;
    char name[48];
} lane;

struct cli_trace {
    pthread_mutex_t mu;
    double t0;
    event *ev;
    size_t n, cap;
    lane *lanes;
    size_t nlanes, lanecap;
    bool oom; /* an event was lost: said in the file */
};

cli_trace *cli_trace_new(double t0_ms)
{
    cli_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    pthread_mutex_init(&t->mu, NULL);
    t->t0 = t0_ms;
    return t;
}

void cli_trace_lane(cli_trace *t, int tid, const char *name)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->nlanes; i++)
        if (t->lanes[i].tid == tid)
            goto done;
    if (t->nlanes == t->lanecap) {
        size_t nc = t->lanecap ? 2 * t->lanecap : 16;
        lane *nl = realloc(t->lanes, nc * sizeof *nl);
        if (!nl) {
            t->oom = true;
            goto done;
        }
        t->lanes = nl;
        t->lanecap = nc;
    }
    t->lanes[t->nlanes].tid = tid;
    snprintf(t->lanes[t->nlanes].name, sizeof t->lanes[0].name, "%s", name);
    t->nlanes++;
done:
    pthread_mutex_unlock(&t->mu);
}

void cli_trace_span(cli_trace *t, int tid, const char *cat, const char *name, double start_ms, double end_ms,
                    const char *file)
{
    if (!t)
        return;
    char *f = file ? strdup(file) : NULL;
    pthread_mutex_lock(&t->mu);
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 256;
        event *ne = realloc(t->ev, nc * sizeof *ne);
        if (!ne) {
            t->oom = true;
            pthread_mutex_unlock(&t->mu);
            free(f);
            return;
        }
        t->ev = ne;
        t->cap = nc;
    }
    event *e = &t->ev[t->n++];
    e->tid = tid;
    snprintf(e->cat, sizeof e->cat, "%s", cat);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->start_ms = start_ms;
    e->end_ms = end_ms > start_ms ? end_ms : start_ms;
    e->file = f;
    pthread_mutex_unlock(&t->mu);
}

void cli_trace_run(cli_trace *t, int tid, const vkimg_timing *tm, const char *file)
{
    if (!t || tm->t_done_ms <= 0)
        return;
    double dev_up = tm->upload_ms - tm->up_host_ms, dev_down = tm->readback_ms - tm->down_host_ms;
    if (dev_up > 0)
        cli_trace_span(t, tid, "upload", "upload", tm->upload_start_ms, tm->upload_start_ms + dev_up, file);
    for (int i = 0; i < tm->nstages; i++)
        cli_trace_span(t, tid, "kernel", tm->stage[i].name, tm->stage[i].start_ms,
                       tm->stage[i].start_ms + tm->stage[i].gpu_ms, file);
    if (dev_down > 0)
        cli_trace_span(t, tid, "readback", "readback", tm->readback_start_ms, tm->readback_start_ms + dev_down, file);
}

static void write_events(const cli_trace *t, FILE *f)
{
    fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": \"vkimg " VKIMG_VERSION "\", "
          "\"clock\": \"CLOCK_MONOTONIC, microseconds from the start\", \"device_times\": \"device timestamps, the "
          "last of each run aligned with its fence\"",
          f);
    if (t->oom)
        fputs(", \"incomplete\": \"out of memory: events were left out\"", f);
    fputs("},\n\"traceEvents\": [\n", f);
    fputs("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"vkimg\"}}", f);
    for (size_t i = 0; i < t->nlanes; i++) {
        fprintf(f, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": %d, \"args\": {\"name\": ",
                t->lanes[i].tid);
        json_str(f, t->lanes[i].name);
        fprintf(f, "}},\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 1, \"tid\": %d, "
                   "\"args\": {\"sort_index\": %d}}",
                t->lanes[i].tid, t->lanes[i].tid);
    }
    for (size_t i = 0; i < t->n; i++) {
        const event *e = &t->ev[i];
        fputs(",\n{\"ph\": \"X\", \"pid\": 1, \"tid\": ", f);
        fprintf(f, "%d, \"cat\": ", e->tid);
        json_str(f, e->cat);
        fputs(", \"name\": ", f);
        json_str(f, e->name);
        fprintf(f, ", \"ts\": %.3f, \"dur\": %.3f", (e->start_ms - t->t0) * 1e3, (e->end_ms - e->start_ms) * 1e3);
        if (e->file) {
            fputs(", \"args\": {\"file\": ", f);
            json_str(f, e->file);
            fputc('}', f);
        }
        fputc('}', f);
    }
    fputs("\n]}\n", f);
}

static int trace_fn(FILE *f, void *user)
{
    cli_trace *t = user;
    pthread_mutex_lock(&t->mu);
    write_events(t, f);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

int cli_trace_write(cli_trace *t, const char *path, char *why, size_t n)
{
    vkimg_err e;
    if (cli_write_with(path, trace_fn, t, &e)) {
        snprintf(why, n, "%s", e.msg);
        return -1;
    }
    return 0;
}

void cli_trace_free(cli_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->ev[i].file);
    free(t->ev);
    free(t->lanes);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
