/* Shared by the CLI's subcommands. */
#ifndef VKIMG_CLI_H
#define VKIMG_CLI_H

#include "vkimg.h"

#include <stdarg.h>
#include <time.h>

extern int cli_verbose;

/* Prints "vkimg: MESSAGE" on stderr and returns code. */
int cli_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints e's message; returns its code (1 if unset). */
int cli_report(const vkimg_err *e);
/* Prints a pipeline error with the offending line and a caret; returns 2. */
int cli_report_pipeline(const char *text, const vkimg_err *e);
int cmd_bench(int argc, char **argv);
int cmd_process(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_compare(int argc, char **argv);
void cli_log(void *user, vkimg_log_level lvl, const char *msg);
int cli_parse_int(const char *opt, const char *v, long lo, long hi, long *out);
/* Reads a whole text file (NUL-terminated); NULL + e on failure. */
char *cli_read_text(const char *path, vkimg_err *e);

static inline double vki_cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
