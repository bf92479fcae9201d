/* The command line's shared parts: exit codes, messages, the option tables every
 * subcommand is parsed from (and its --help and the man page are written from),
 * the flags they all share, and small helpers. Nothing here is a subcommand. */
#ifndef VKIMG_CLI_H
#define VKIMG_CLI_H

#include "vkimg/vkimg.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit codes of vkimg and its subcommands (compare has idiff's, below). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_RUNTIME = 1, /* I/O, decode, device, output, validation messages */
    CLI_EXIT_USAGE = 2,   /* arguments or pipeline */
};
/* vkimg compare (OpenImageIO idiff's). */
enum {
    CLI_CMP_PASS = 0,
    CLI_CMP_WARN = 1,
    CLI_CMP_FAIL = 2,
    CLI_CMP_MISMATCH = 3, /* sizes or channel counts differ */
    CLI_CMP_ERROR = 4,    /* file, usage, device (usage is 4 here, as in idiff) */
};

/* The exit code of a library error class (VKIMG_E_*). */
int cli_exit_of(int vkimg_error_class);

/* -v, -vv: 1, 2; -q: -1 (print nothing but errors). */
extern int cli_verbose;

/* Prints "vkimg: MESSAGE" (one line, at most CLI_MAX_LINE bytes: longer ones are
 * cut with "...") on stderr and returns code. */
#define CLI_MAX_LINE 2048
int cli_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints e's message; returns the exit code of its class. */
int cli_report(const vkimg_err *e);
/* Prints a pipeline error with the offending line and a caret; returns 2. */
int cli_report_pipeline(const char *text, const vkimg_err *e);
/* The library's log callback: warnings always, info with -v, debug with -vv. */
void cli_log(void *user, vkimg_log_level lvl, const char *msg);
/* Reads a whole text file (NUL-terminated, at most max bytes, no NUL inside);
 * NULL + e on failure. */
char *cli_read_text(const char *path, size_t max, vkimg_err *e);
double cli_now_ms(void);

/* ---------------------------------------------------------------- options */

typedef enum cli_kind {
    CLI_FLAG,  /* no value */
    CLI_STR,   /* any text */
    CLI_INT,   /* an integer in lo..hi */
    CLI_NUM,   /* a number in dlo..dhi ("inf" if allow_inf) */
} cli_kind;

/* One option of a subcommand. The table it is in is the one description of the
 * option: parsing, --help and the man page read it. */
typedef struct cli_opt {
    const char *name;  /* "--quality" */
    const char *alias; /* "-q", or NULL */
    cli_kind kind;
    const char *arg;   /* the value's name in help ("N"), NULL for flags */
    const char *help;
    long lo, hi;                  /* CLI_INT */
    double dlo, dhi;              /* CLI_NUM */
    bool allow_inf;               /* CLI_NUM */
    int id;                       /* handed to the command's handler */
} cli_opt;

/* The flags every subcommand that uses a device takes; parsed by cli_parse into
 * cli_common before the command's own options are looked at. */
typedef struct cli_common {
    bool json, timing, validate, no_cache;
    const char *device;
} cli_common;
extern const cli_opt cli_common_opts[];
extern const int cli_ncommon_opts;
/* The context options they give (with the CLI's log callback). */
vkimg_ctx_opts cli_ctx_opts(const cli_common *c);

/* A value given to a handler. */
typedef struct cli_value {
    const char *str; /* the text (CLI_STR, CLI_INT, CLI_NUM, positionals) */
    long i;          /* CLI_INT */
    double d;        /* CLI_NUM */
} cli_value;
#define CLI_POSITIONAL (-1)

/* A subcommand: its tables and what runs it. */
typedef struct cli_command {
    const char *name;      /* "stats"; "" for the main command */
    const char *synopsis;  /* "vkimg stats IN [options]" */
    const char *summary;   /* one paragraph */
    const cli_opt *opts;   /* its own options */
    int nopts;
    bool common;           /* takes cli_common_opts too */
    const char *exit_text; /* the EXIT STATUS text */
    int (*run)(int argc, char **argv);
} cli_command;

/* Parses argv against the command's table (and the common flags into *common,
 * when the command takes them): each option or positional is handed to
 * fn(user, id, value), which returns 0 or an exit code. -h/--help prints the
 * command's help and returns -1 (the caller exits 0). Errors (unknown option,
 * missing or bad value) are reported in one line and return usage_exit. */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_common *common, int usage_exit,
              int (*fn)(void *user, int id, const cli_value *v), void *user);
/* The help text of a command, from its tables. */
void cli_print_help(const cli_command *cmd, FILE *f);
/* The man page section of a command, and the common options (roff). */
void cli_print_man_section(const cli_command *cmd, FILE *f);
void cli_print_common_man(FILE *f);

/* The subcommands (each in its own file) and the main command (process.c). */
extern const cli_command cli_cmd_process, cli_cmd_stats, cli_cmd_compare, cli_cmd_bench;
/* compare's arguments parsed and checked without reading a file or comparing
 * (tests/fuzz/fuzz_compare_opts.c): 0, -1 after --help, or the exit code of the
 * error (reported on stderr). */
int cli_compare_parse(int argc, char **argv);

/* ---------------------------------------------------------------- JSON */

/* JSON values on f: a string with escapes, a number (null when not finite). */
/* Writes a file by fn (into a memory stream) the way vkimg writes every output:
 * whole or not at all (vkimg_write_file). 0, or -1 with e filled. */
int cli_write_with(const char *path, int (*fn)(FILE *f, void *user), void *user, vkimg_err *e);

void json_str(FILE *f, const char *s);
void json_num(FILE *f, double v);
/* ", \"key\": " and the number (json_num): a field after the first of an object */
void json_field(FILE *f, const char *key, double v);

/* ---------------------------------------------------------------- timing */

/* The --timing report of one image (or image pair) on stderr. */
void cli_print_timing(const vkimg_timing *t, const char *what);

#endif
