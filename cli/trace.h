/* --trace FILE: a timeline of a run in the Chrome / Perfetto trace-event JSON
 * format (chrome://tracing, ui.perfetto.dev; scripts/trace-png draws it as a
 * PNG): one lane per host thread and per device slot, one complete event ("X")
 * per decode, wait, upload, kernel, readback and encode. Times are the host's
 * CLOCK_MONOTONIC (cli_now_ms), written in microseconds from the trace's start;
 * device work is placed on it by vkimg_timing (its last timestamp aligned with
 * the moment its fence was seen). Thread-safe: workers add events concurrently. */
#ifndef VKIMG_CLI_TRACE_H
#define VKIMG_CLI_TRACE_H

#include "vkimg/vkimg.h"

typedef struct cli_trace cli_trace;

/* Lanes: the main thread, the workers (1..), the device slots. */
#define TRACE_TID_MAIN 0
#define TRACE_TID_DEVICE(dev, slot) (1000 + (dev) * 100 + (slot))

/* A trace starting now (t0_ms on cli_now_ms's clock); NULL when out of memory. */
cli_trace *cli_trace_new(double t0_ms);
/* Names a lane (shown in the viewer, sorted by tid). */
void cli_trace_lane(cli_trace *t, int tid, const char *name);
/* A complete event on lane tid from start_ms to end_ms (cli_now_ms's clock);
 * file (may be NULL) goes into its args. */
void cli_trace_span(cli_trace *t, int tid, const char *cat, const char *name, double start_ms, double end_ms,
                    const char *file);
/* The device's part of a run (timing filled by vkimg_run_n): the upload, each
 * kernel stage and the readback on lane tid. Nothing when the run was not timed. */
void cli_trace_run(cli_trace *t, int tid, const vkimg_timing *tm, const char *file);
/* Writes the trace to path atomically (a temporary file renamed into place);
 * 0, or a message in why. */
int cli_trace_write(cli_trace *t, const char *path, char *why, size_t n);
void cli_trace_free(cli_trace *t);

#endif
