/* The command line's shared parts (cli.h): messages, exit codes, the option
 * parser and the help and man text written from the option tables. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cli_verbose = 0;

int cli_exit_of(int vkimg_error_class)
{
    switch (vkimg_error_class) {
    case VKIMG_OK: return CLI_EXIT_OK;
    case VKIMG_E_USAGE: return CLI_EXIT_USAGE;
    default: return CLI_EXIT_RUNTIME;
    }
}

double cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Writes "vkimg: " + the message as one line: control bytes as '?', at most
 * CLI_MAX_LINE bytes (a 30 MB pipeline is not echoed whole). */
static void print_line(const char *msg)
{
    char line[CLI_MAX_LINE + 8];
    size_t n = 0;
    for (const char *p = msg; *p && n < CLI_MAX_LINE; p++)
        line[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
    if (msg[n] && n == CLI_MAX_LINE) {
        memcpy(line + n - 3, "...", 3);
    }
    line[n] = 0;
    fprintf(stderr, "vkimg: %s\n", line);
}

int cli_error(int code, const char *fmt, ...)
{
    char buf[CLI_MAX_LINE + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    print_line(buf);
    return code;
}

int cli_report(const vkimg_err *e)
{
    return cli_error(cli_exit_of(e->code ? e->code : VKIMG_E_RUNTIME), "%s", e->msg);
}

/* Prints a pipeline error: the message, the line of the pipeline holding the
 * offending place (at most 200 bytes around it), and a caret under it. */
int cli_report_pipeline(const char *text, const vkimg_err *e)
{
    cli_error(CLI_EXIT_USAGE, "pipeline: %s", e->msg);
    int pos = e->pos;
    size_t len = strlen(text);
    if (pos < 0 || (size_t)pos > len)
        return CLI_EXIT_USAGE;
    size_t ls = (size_t)pos, le = (size_t)pos;
    while (ls > 0 && text[ls - 1] != '\n' && (size_t)pos - ls < 100)
        ls--;
    while (le < len && text[le] != '\n' && le - (size_t)pos < 100)
        le++;
    fputs("  ", stderr);
    for (size_t i = ls; i < le; i++)
        fputc((unsigned char)text[i] < 0x20 && text[i] != '\t' ? '?' : text[i], stderr);
    fputs("\n  ", stderr);
    for (size_t i = ls; i < (size_t)pos; i++)
        fputc(text[i] == '\t' ? '\t' : ' ', stderr);
    fputs("^\n", stderr);
    return CLI_EXIT_USAGE;
}

void cli_log(void *user, vkimg_log_level lvl, const char *msg)
{
    (void)user;
    if (lvl >= VKIMG_LOG_WARN || (lvl == VKIMG_LOG_INFO && cli_verbose >= 1) || cli_verbose >= 2)
        print_line(msg);
}

char *cli_read_text(const char *path, size_t max, vkimg_err *e)
{
    e->pos = -1;
    e->code = VKIMG_E_RUNTIME;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(e->msg, sizeof e->msg, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        snprintf(e->msg, sizeof e->msg, "%s: cannot read: %s", path,
                 S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
        close(fd);
        return NULL;
    }
    if ((uint64_t)st.st_size > max) {
        snprintf(e->msg, sizeof e->msg, "%s: too large (%lld bytes; at most %zu)", path, (long long)st.st_size, max);
        close(fd);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t n = 0;
    while (buf && n < (size_t)st.st_size) {
        ssize_t k = read(fd, buf + n, (size_t)st.st_size - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    if (!buf || n != (size_t)st.st_size) {
        snprintf(e->msg, sizeof e->msg, "%s: cannot read: %s", path, !buf ? "out of memory" : "short read");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (memchr(buf, 0, n)) {
        snprintf(e->msg, sizeof e->msg, "%s: contains a NUL byte (at %zu): not a text file", path,
                 (size_t)((char *)memchr(buf, 0, n) - buf));
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---------------------------------------------------------------- options */

enum { COMMON_JSON = -100, COMMON_TIMING, COMMON_VALIDATE, COMMON_NO_CACHE, COMMON_DEVICE, COMMON_VERBOSE, COMMON_QUIET };

const cli_opt cli_common_opts[] = {
    { "--device", NULL, CLI_STR, "D", "device index, name substring, 'gpu' or 'cpu' (see 'vkimg devices')",
      .id = COMMON_DEVICE },
    { "--json", NULL, CLI_FLAG, NULL, "print the results as JSON on stdout (schemas in the README)", .id = COMMON_JSON },
    { "--timing", NULL, CLI_FLAG, NULL, "print decode, upload, per-stage GPU, readback and encode times on stderr",
      .id = COMMON_TIMING },
    { "--validate", NULL, CLI_FLAG, NULL,
      "Khronos validation + synchronization validation; any message fails the run (also VKIMG_VALIDATE=1)",
      .id = COMMON_VALIDATE },
    { "--no-cache", NULL, CLI_FLAG, NULL, "don't read or write the pipeline cache (also VKIMG_NO_CACHE=1)",
      .id = COMMON_NO_CACHE },
    { "--verbose", "-v", CLI_FLAG, NULL, "say which device and queues are used (-vv: more)", .id = COMMON_VERBOSE },
    { "--quiet", "-q", CLI_FLAG, NULL, "print nothing but errors", .id = COMMON_QUIET },
};
const int cli_ncommon_opts = (int)(sizeof cli_common_opts / sizeof cli_common_opts[0]);

vkimg_ctx_opts cli_ctx_opts(const cli_common *c)
{
    vkimg_ctx_opts o = { .device = c->device, .validate = c->validate, .no_cache = c->no_cache, .log = cli_log };
    return o;
}

static const cli_opt *find_opt(const cli_opt *t, int n, const char *a)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(a, t[i].name) || (t[i].alias && !strcmp(a, t[i].alias)))
            return &t[i];
    return NULL;
}

static int parse_value(const cli_command *cmd, const cli_opt *o, const char *v, int usage_exit, cli_value *out)
{
    const char *who = cmd->name[0] ? cmd->name : NULL;
    char *end;
    out->str = v;
    switch (o->kind) {
    case CLI_FLAG:
    case CLI_STR:
        return 0;
    case CLI_INT:
        errno = 0;
        out->i = strtol(v, &end, 10);
        if (!*v || *end || errno || out->i < o->lo || out->i > o->hi)
            return cli_error(usage_exit, "%s%s%s: '%s' is not an integer in %ld..%ld", who ? who : "", who ? ": " : "",
                             o->name, v, o->lo, o->hi);
        return 0;
    case CLI_NUM:
        errno = 0;
        out->d = strtod(v, &end);
        /* ERANGE on underflow is a tiny number, not an error (1e-320) */
        if (!*v || *end || (errno == ERANGE && fabs(out->d) > 1) || isnan(out->d) || (isinf(out->d) && !o->allow_inf) ||
            out->d < o->dlo || out->d > o->dhi)
            return cli_error(usage_exit, "%s%s%s: '%s' is not a number in %g..%g", who ? who : "", who ? ": " : "",
                             o->name, v, o->dlo, o->dhi);
        return 0;
    }
    return 0;
}

static int common_set(cli_common *c, int id, const cli_value *v)
{
    switch (id) {
    case COMMON_JSON: c->json = true; break;
    case COMMON_TIMING: c->timing = true; break;
    case COMMON_VALIDATE: c->validate = true; break;
    case COMMON_NO_CACHE: c->no_cache = true; break;
    case COMMON_DEVICE: c->device = v->str; break;
    case COMMON_VERBOSE: cli_verbose++; break;
    case COMMON_QUIET: cli_verbose = -1; break;
    }
    return 0;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_common *common, int usage_exit,
              int (*fn)(void *user, int id, const cli_value *v), void *user)
{
    const char *who = cmd->name[0] ? cmd->name : NULL;
    char see[64];
    snprintf(see, sizeof see, "see 'vkimg%s%s --help'", who ? " " : "", who ? who : "");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_print_help(cmd, stdout);
            return -1;
        }
        cli_value v = { .str = a };
        int rc;
        if (a[0] != '-' || !a[1]) { /* "-" alone is a positional (stdin) */
            if ((rc = fn(user, CLI_POSITIONAL, &v)))
                return rc;
            continue;
        }
        /* a short flag given more than once in one word ("-vv": -v -v) */
        int times = 1;
        char one[3] = { '-', a[1], 0 };
        if (a[1] != '-' && a[2] && strspn(a + 1, one + 1) == strlen(a + 1)) {
            times = (int)strlen(a + 1);
            a = one;
        }
        bool is_common = false;
        const cli_opt *o = find_opt(cmd->opts, cmd->nopts, a);
        if (!o && cmd->common && (o = find_opt(cli_common_opts, cli_ncommon_opts, a)))
            is_common = true;
        if (!o || (times > 1 && o->kind != CLI_FLAG))
            return cli_error(usage_exit, "%s%sunknown option '%s' (%s)", who ? who : "", who ? ": " : "", argv[i], see);
        if (o->kind != CLI_FLAG) {
            if (i + 1 >= argc)
                return cli_error(usage_exit, "%s%s%s needs a value (%s)", who ? who : "", who ? ": " : "", a, see);
            if ((rc = parse_value(cmd, o, argv[++i], usage_exit, &v)))
                return rc;
        }
        for (int t = 0; t < times; t++)
            if ((rc = is_common ? common_set(common, o->id, &v) : fn(user, o->id, &v)))
                return rc;
    }
    return 0;
}

/* "--quality N" / "-v, --verbose" */
static void opt_label(const cli_opt *o, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name, o->arg ? " " : "",
             o->arg ? o->arg : "");
}

static void help_table(const cli_opt *t, int n, FILE *f)
{
    for (int i = 0; i < n; i++) {
        char label[64];
        opt_label(&t[i], label, sizeof label);
        if (strlen(label) <= 22)
            fprintf(f, "  %-22s %s\n", label, t[i].help);
        else
            fprintf(f, "  %s\n  %-22s %s\n", label, "", t[i].help);
    }
}

void cli_print_help(const cli_command *cmd, FILE *f)
{
    fprintf(f, "usage: %s\n\n%s\n\noptions:\n", cmd->synopsis, cmd->summary);
    help_table(cmd->opts, cmd->nopts, f);
    if (cmd->common)
        help_table(cli_common_opts, cli_ncommon_opts, f);
    fprintf(f, "  %-22s %s\n\n%s\n", "-h, --help", "this help", cmd->exit_text);
}

/* roff text: backslashes and hyphens escaped, no control line */
static void roff(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else if (*s == '\n')
            fputs("\n.br\n", f);
        else
            fputc(*s, f);
    }
}

static void man_table(const cli_opt *t, int n, FILE *f)
{
    for (int i = 0; i < n; i++) {
        fputs(t[i].arg ? ".TP\n.BI \"" : ".TP\n.B \"", f);
        if (t[i].alias) {
            roff(f, t[i].alias);
            fputs(", ", f);
        }
        roff(f, t[i].name);
        fputc('"', f);
        if (t[i].arg) {
            fputs(" \" ", f);
            roff(f, t[i].arg);
            fputc('"', f);
        }
        fputc('\n', f);
        roff(f, t[i].help);
        fputc('\n', f);
    }
}

void cli_print_man_section(const cli_command *cmd, FILE *f)
{
    fputs(".SS \"", f);
    roff(f, cmd->synopsis);
    fputs("\"\n", f);
    roff(f, cmd->summary);
    fputc('\n', f);
    man_table(cmd->opts, cmd->nopts, f);
    if (cmd->common)
        fputs(".PP\nand the common options.\n", f);
    fputs(".PP\n", f);
    roff(f, cmd->exit_text);
    fputc('\n', f);
}

void cli_print_common_man(FILE *f)
{
    man_table(cli_common_opts, cli_ncommon_opts, f);
}

/* ---------------------------------------------------------------- timing */

/* "  (host copy 2.1 ms, 21.0 GB/s; device copy 1.1 ms, 40.2 GB/s)" for a copy of
 * `bytes` in two steps; a step that took no time is left out. */
static void copy_split(double host_ms, double dev_ms, double bytes)
{
    const char *sep = "  (";
    if (bytes > 0 && host_ms > 0.0005) {
        fprintf(stderr, "%shost copy %.3f ms, %.1f GB/s", sep, host_ms, bytes / (host_ms * 1e6));
        sep = "; ";
    }
    if (bytes > 0 && dev_ms > 0.0005) {
        fprintf(stderr, "%sdevice copy %.3f ms, %.1f GB/s", sep, dev_ms, bytes / (dev_ms * 1e6));
        sep = "; ";
    }
    fputs(*sep == ';' ? ")\n" : "\n", stderr);
}

void cli_print_timing(const vkimg_timing *t, const char *what)
{
    fprintf(stderr, "timing (%s):\n", what);
    fprintf(stderr, "  %-24s %9.3f ms\n", "decode", t->decode_ms);
    fprintf(stderr, "  %-24s %9.3f ms", "upload", t->upload_ms);
    copy_split(t->up_host_ms, t->upload_ms - t->up_host_ms, t->up_bytes);
    for (int i = 0; i < t->nstages; i++) {
        char label[48];
        snprintf(label, sizeof label, "%s (GPU)", t->stage[i].name);
        fprintf(stderr, "  %-24s %9.3f ms\n", label, t->stage[i].gpu_ms);
    }
    fprintf(stderr, "  %-24s %9.3f ms", "readback", t->readback_ms);
    copy_split(t->down_host_ms, t->readback_ms - t->down_host_ms, t->down_bytes);
    if (t->gpu_total_ms > 0)
        fprintf(stderr, "  %-24s %9.3f ms\n", "GPU total", t->gpu_total_ms);
    fprintf(stderr, "  %-24s %9.3f ms\n", "encode", t->encode_ms);
    fprintf(stderr, "  %-24s %9.3f ms\n", "total", t->total_ms);
}

int cli_write_with(const char *path, int (*fn)(FILE *f, void *user), void *user, vkimg_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        snprintf(e->msg, sizeof e->msg, "%.900s: cannot write: out of memory", path);
        return -1;
    }
    int rc = fn(f, user), bad = ferror(f);
    if (fclose(f) || bad || rc) {
        free(buf);
        snprintf(e->msg, sizeof e->msg, "%.900s: cannot write: %s", path, rc ? "the writer failed" : "out of memory");
        return -1;
    }
    rc = vkimg_write_file(path, buf, len, e);
    free(buf);
    return rc ? -1 : 0;
}
