/* vkimg command line: argument parsing, subcommands, printing, exit codes.
 *
 * Exit codes: 0 success, 1 runtime error (I/O, decode, device, output),
 * 2 usage error (arguments or pipeline). `compare` has its own (see README). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: vkimg -i IN -o OUT (-f PIPELINE | -F FILE) [options]\n"
    "       vkimg ops [NAME] [--markdown]\n"
    "       vkimg devices\n"
    "       vkimg bench -f PIPELINE [--size WxH] [--channels N] [--repeat K] [--json]\n"
    "       vkimg stats IN [--json] [--histogram] [--timing]\n"
    "       vkimg compare A B [--fail X] [--warn X] [--ssim] [--diff PATH] [--json]  (exit 0..4, see README)\n"
    "\n"
    "Runs a filter pipeline on the GPU (Vulkan compute), e.g.\n"
    "  vkimg -i in.png -o out.png -f \"gray,blur=sigma=2\"\n"
    "\n"
    "options:\n"
    "  -i, --input PATH      input image (PNG, JPEG, BMP, TGA, PSD, GIF, HDR, PIC, PNM)\n"
    "  -o, --output PATH     output image; the extension picks the format\n"
    "                        (.png .jpg .bmp .tga .hdr .npy); may equal the input\n"
    "  -f, --filter TEXT     pipeline: ops separated by ',', options name=key=value:...\n"
    "  -F, --filter-file F   read the pipeline from a file ('#' starts a comment)\n"
    "  --device D            device index, name substring, 'gpu' or 'cpu';\n"
    "                        batches: 'all' spreads the images over every GPU\n"
    "  --timing              print decode, upload, per-op GPU, readback, encode times\n"
    "  --quality N           JPEG quality 1..100 (default 90)\n"
    "  --png-level N         PNG compression level 0..12 (default 6)\n"
    "  --max-pixels N        refuse inputs with more pixels (default 268435456)\n"
    "  --validate            enable the Khronos validation layer (also VKIMG_VALIDATE=1)\n"
    "  --no-cache            don't read or write the pipeline cache (also VKIMG_NO_CACHE=1)\n"
    "  -v, --verbose         say which device is used\n"
    "  -q, --quiet           print nothing but errors\n"
    "  --version, -h/--help\n"
    "\n"
    "batches (several -i, globs, directories, @LIST, '-' for paths on stdin):\n"
    "  -o DIR/ or -o 'out/{stem}_small.{ext}'  output directory or template\n"
    "                        ({dir} {name} {stem} {ext} {index}); the extension\n"
    "                        picks the format\n"
    "  -r, --recursive       descend into input directories\n"
    "  --threads N           decode/encode threads (default: all cores)\n"
    "  --max-inflight N      images in memory at once (default: threads)\n"
    "  --gpu-inflight N      images on the device at once (default 2)\n"
    "  --skip-existing       leave outputs that exist alone\n"
    "  --fail-fast           stop at the first failed file\n"
    "  --json                one JSON object per file, then a summary\n"
    "  --progress/--no-progress  progress on stderr (default: when it is a TTY)\n"
    "  --shard K/N           process the K-th of N stable shards of the inputs\n"
    "\n"
    "exit codes: 0 success, 1 runtime error (I/O, decode, device, output), 2 usage error\n";

int cli_verbose = 0;

void cli_log(void *user, vkimg_log_level lvl, const char *msg)
{
    (void)user;
    if (lvl >= VKIMG_LOG_WARN || (lvl == VKIMG_LOG_INFO && cli_verbose >= 1) || cli_verbose >= 2)
        fprintf(stderr, "vkimg: %s\n", msg);
}

int cli_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("vkimg: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

int cli_report(const vkimg_err *e)
{
    return cli_error(e->code ? e->code : 1, "%s", e->msg);
}

/* Prints a pipeline error: the message, the line of the pipeline holding the
 * offending place, and a caret under it. */
int cli_report_pipeline(const char *text, const vkimg_err *e)
{
    fprintf(stderr, "vkimg: pipeline: %s\n", e->msg);
    int pos = e->pos;
    int len = (int)strlen(text);
    if (pos < 0 || pos > len)
        return 2;
    int ls = pos, le = pos;
    while (ls > 0 && text[ls - 1] != '\n')
        ls--;
    while (le < len && text[le] != '\n')
        le++;
    fprintf(stderr, "  %.*s\n  ", le - ls, text + ls);
    for (int i = ls; i < pos; i++)
        fputc(text[i] == '\t' ? '\t' : ' ', stderr);
    fputs("^\n", stderr);
    return 2;
}

int cli_parse_int(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi)
        return cli_error(2, "%s: '%s' is not an integer in %ld..%ld", opt, v, lo, hi);
    *out = x;
    return 0;
}

char *cli_read_text(const char *path, vkimg_err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(e->msg, sizeof e->msg, "%s: cannot read: %s", path, strerror(errno));
        e->code = 1;
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0)
            break;
        if (n + 1 == cap) {
            if (cap > (1u << 24)) {
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (!buf || err) {
        free(buf);
        snprintf(e->msg, sizeof e->msg, "%s: cannot read: %s", path, !buf ? "file too large" : "read error");
        e->code = 1;
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static int cmd_ops(int argc, char **argv)
{
    const char *name = NULL;
    bool md = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--markdown"))
            md = true;
        else if (argv[i][0] == '-')
            return cli_error(2, "ops: unknown option '%s'", argv[i]);
        else if (!name)
            name = argv[i];
        else
            return cli_error(2, "ops: too many arguments");
    }
    int n = vkimg_ops_help(name, md, NULL, 0);
    if (n < 0)
        return cli_error(2, "ops: unknown op '%s' (run 'vkimg ops' for the list)", name);
    char *buf = malloc((size_t)n + 1);
    if (!buf)
        return cli_error(1, "out of memory");
    vkimg_ops_help(name, md, buf, (size_t)n + 1);
    fputs(buf, stdout);
    free(buf);
    return 0;
}

static int cmd_devices(int argc, char **argv)
{
    (void)argv;
    if (argc)
        return cli_error(2, "devices: takes no arguments");
    vkimg_err e = { 0 };
    char buf[16384];
    if (vkimg_list_devices(buf, sizeof buf, &e))
        return cli_report(&e);
    fputs(buf, stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(USAGE, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("vkimg %s\n", VKIMG_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "ops"))
        return cmd_ops(argc - 2, argv + 2);
    if (!strcmp(cmd, "devices"))
        return cmd_devices(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(cmd, "stats"))
        return cmd_stats(argc - 2, argv + 2);
    if (!strcmp(cmd, "compare"))
        return cmd_compare(argc - 2, argv + 2);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(USAGE, stdout);
            return 0;
        }
    if (cmd[0] != '-')
        return cli_error(2, "unknown command '%s' (see --help)", cmd);
    return cmd_process(argc - 1, argv + 1);
}
