/* libFuzzer target: vkimg compare's option parser (cli_parse with compare's table,
 * its handler and its file-free checks: cli_compare_parse), on an argv made of the
 * input split at NUL bytes. Nothing is read or compared. The result must be one of
 * the documented ones: 0, -1 (--help) or exit code 4 (idiff's usage error). */
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* one NUL-terminated copy; each NUL ends an argument */
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (size_t i = 0; i < size && argc < MAX_ARGS; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    argv[argc] = NULL;
    cli_verbose = 0; /* -v and -q set it */
    int rc = cli_compare_parse(argc, argv);
    if (rc != 0 && rc != -1 && rc != CLI_CMP_ERROR) {
        fprintf(stderr, "fuzz: cli_compare_parse returned %d (0, -1 or %d)\n", rc, CLI_CMP_ERROR);
        abort();
    }
    free(buf);
    return 0;
}
