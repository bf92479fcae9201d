/* vkimg: dispatch to the subcommands. Exit codes: cli.h. */
#include "cli.h"
#include "info.h"

#include <signal.h>
#include <string.h>

static const cli_command *const commands[] = { &cli_cmd_process, &cli_cmd_stats, &cli_cmd_compare, &cli_cmd_bench };
static const int ncommands = (int)(sizeof commands / sizeof commands[0]);

/* SIGINT, SIGTERM, SIGHUP: the temporary files of writes in progress are removed
 * (outputs are never partial: a file is either its old self or whole), then the
 * signal ends the process as it would have. */
static void on_signal(int sig)
{
    vkimg_remove_temp_files();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signal_handlers(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa = { .sa_handler = on_signal };
        sigemptyset(&sa.sa_mask);
        struct sigaction old;
        /* a signal the caller ignores (nohup) stays ignored */
        if (!sigaction(sigs[i], NULL, &old) && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

int main(int argc, char **argv)
{
    install_signal_handlers();
    if (argc < 2) {
        cli_print_help(&cli_cmd_process, stderr);
        return cli_error(CLI_EXIT_USAGE, "no arguments (see the usage above)");
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
        return cli_cmd_help(0, NULL, commands, ncommands);
    if (!strcmp(cmd, "help"))
        return cli_cmd_help(argc - 2, argv + 2, commands, ncommands);
    if (!strcmp(cmd, "--version")) {
        printf("vkimg %s\n", VKIMG_VERSION);
        return CLI_EXIT_OK;
    }
    if (!strcmp(cmd, "ops"))
        return cli_cmd_ops(argc - 2, argv + 2);
    if (!strcmp(cmd, "devices"))
        return cli_cmd_devices(argc - 2, argv + 2);
    for (int i = 1; i < ncommands; i++)
        if (!strcmp(cmd, commands[i]->name))
            return commands[i]->run(argc - 2, argv + 2);
    if (cmd[0] != '-')
        return cli_error(CLI_EXIT_USAGE, "unknown command '%s' (see --help)", cmd);
    return cli_cmd_process.run(argc - 1, argv + 1);
}
