/* The subcommands that need no device work: ops, devices, and the man page
 * (vkimg help --man), all written from the option tables and op descriptors. */
#include "cli.h"
#include "info.h"

#include <stdlib.h>
#include <string.h>

int cli_cmd_ops(int argc, char **argv)
{
    const char *name = NULL;
    vkimg_doc_format f = VKIMG_DOC_TEXT;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--markdown"))
            f = VKIMG_DOC_MARKDOWN;
        else if (argv[i][0] == '-')
            return cli_error(CLI_EXIT_USAGE, "ops: unknown option '%s'", argv[i]);
        else if (!name)
            name = argv[i];
        else
            return cli_error(CLI_EXIT_USAGE, "ops: too many arguments");
    }
    int n = vkimg_ops_help(name, f, NULL, 0);
    if (n < 0)
        return cli_error(CLI_EXIT_USAGE, "ops: unknown op '%s' (run 'vkimg ops' for the list)", name);
    char *buf = malloc((size_t)n + 1);
    if (!buf)
        return cli_error(CLI_EXIT_RUNTIME, "out of memory");
    vkimg_ops_help(name, f, buf, (size_t)n + 1);
    fputs(buf, stdout);
    free(buf);
    return CLI_EXIT_OK;
}

int cli_cmd_devices(int argc, char **argv)
{
    (void)argv;
    if (argc)
        return cli_error(CLI_EXIT_USAGE, "devices: takes no arguments");
    vkimg_err e = { 0 };
    char buf[16384];
    if (vkimg_list_devices(buf, sizeof buf, &e))
        return cli_report(&e);
    fputs(buf, stdout);
    return CLI_EXIT_OK;
}

static void man_page(FILE *f, const cli_command *const *cmds, int ncmds)
{
    fprintf(f, ".\\\" vkimg(1), written by 'vkimg help --man' from its option tables and op descriptors\n"
               ".TH VKIMG 1 \"\" \"vkimg %s\" \"User Commands\"\n"
               ".SH NAME\nvkimg \\- image filter pipelines on Vulkan compute devices\n.SH SYNOPSIS\n",
            VKIMG_VERSION);
    for (int i = 0; i < ncmds; i++)
        fprintf(f, ".B %s\n.br\n", cmds[i]->synopsis);
    fputs(".B vkimg ops\n.RI [ NAME ]\n.br\n.B vkimg devices\n.br\n.B vkimg help\n.RB [ \\-\\-man ]\n"
          ".SH DESCRIPTION\n"
          "vkimg decodes an image, uploads it to a Vulkan device once, runs the whole pipeline of ops as compute "
          "kernels with every intermediate on the device, reads the result back once and writes it atomically. "
          "A pipeline is ops separated by commas, each op\n.IR name = options\n"
          "with options\n.IR key = value\nseparated by colons, or positional values in the declared order "
          "(blur=2.5:6 is blur=sigma=2.5:radius=6); '#' starts a comment.\n"
          ".SH COMMANDS\n",
          f);
    for (int i = 0; i < ncmds; i++)
        cli_print_man_section(cmds[i], f);
    fputs(".SS \"vkimg ops [NAME] [--markdown]\"\nLists the ops, or one op's options.\n"
          ".SS \"vkimg devices\"\nLists the Vulkan devices, their limits, and which is the default.\n"
          ".SH COMMON OPTIONS\nThe commands that use a device take:\n",
          f);
    cli_print_common_man(f);
    fputs(".SH OPS\n", f);
    int n = vkimg_ops_help(NULL, VKIMG_DOC_MAN, NULL, 0);
    char *buf = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (buf) {
        vkimg_ops_help(NULL, VKIMG_DOC_MAN, buf, (size_t)n + 1);
        fputs(buf, f);
        free(buf);
    }
    fputs(".SH EXIT STATUS\n"
          "0 success, 1 runtime error (I/O, decode, device, output; in a batch: any file failed; validation "
          "messages with \\-\\-validate), 2 usage error (arguments or pipeline). vkimg compare has idiff's: "
          "0 PASS, 1 WARNING, 2 FAILURE, 3 the images differ in size or channels, 4 error.\n"
          ".SH ENVIRONMENT\n"
          ".TP\n.B VKIMG_VALIDATE=1\nKhronos validation and synchronization validation (as \\-\\-validate).\n"
          ".TP\n.B VKIMG_NO_CACHE=1\nno on-disk pipeline cache (as \\-\\-no\\-cache).\n"
          ".TP\n.B VKIMG_BUFFER_POOL_MB\nthe device buffers a context keeps for reuse (default min(1024, heap/8)).\n"
          ".TP\n.B VKIMG_NO_TRANSFER_QUEUE=1, VKIMG_SPLIT_QUEUES=1, VKIMG_NO_UMA=1, VKIMG_NO_HOST_IMPORT=1\n"
          "choose how copies are made (see the README).\n"
          ".TP\n.B VKIMG_PREPARE=0\nthe first image's kernels are created by its run, not ahead of it (by default "
          "they are made on the host's cores while it decodes).\n"
          ".TP\n.B VKIMG_INTER_U16=0\nimages between two ops stay 32-bit float on CPU devices too (by default they are "
          "16-bit where the output is 8-bit and the next op is a smoothing filter, as in gray,blur).\n"
          ".TP\n.B VKIMG_INTER_MOVES=0\nimages after ops that only move pixels (auto-orient, flip, rotate=90, crop) are "
          "32-bit float on CPU devices too (by default they keep the input's format).\n"
          ".TP\n.B VKIMG_OPAQUE=0\nCPU devices do not look whether the input's alpha is all opaque (by default they do "
          "where a blur comes first, and blur it without premultiplying).\n"
          ".TP\n.B VKIMG_DROP_ALPHA=0\nan input whose alpha is all at the maximum keeps it where the output has none "
          "(JPEG, HDR) and the pipeline keeps it opaque (by default the PNG decoder, or on CPU devices the run, leaves "
          "it out: the same colour, fewer samples to process).\n"
          ".TP\n.B XDG_CACHE_HOME\nthe pipeline cache lives in $XDG_CACHE_HOME/vkimg (else ~/.cache/vkimg).\n"
          ".SH SEE ALSO\nThe README of the source tree: formats, the metadata policy, benchmarks.\n",
          f);
}

int cli_cmd_help(int argc, char **argv, const cli_command *const *cmds, int ncmds)
{
    if (argc == 1 && !strcmp(argv[0], "--man")) {
        man_page(stdout, cmds, ncmds);
        return CLI_EXIT_OK;
    }
    if (argc == 1)
        for (int i = 0; i < ncmds; i++)
            if (!strcmp(argv[0], cmds[i]->name)) {
                cli_print_help(cmds[i], stdout);
                return CLI_EXIT_OK;
            }
    if (argc)
        return cli_error(CLI_EXIT_USAGE, "help: unknown topic '%s' (help [COMMAND | --man])", argv[0]);
    cli_print_help(cmds[0], stdout);
    return CLI_EXIT_OK;
}
