/* ops, devices, help (info.c). */
#ifndef VKIMG_CLI_INFO_H
#define VKIMG_CLI_INFO_H

#include "cli.h"

int cli_cmd_ops(int argc, char **argv);
int cli_cmd_devices(int argc, char **argv);
/* help [COMMAND | --man]: cmds[0] is the main command. */
int cli_cmd_help(int argc, char **argv, const cli_command *const *cmds, int ncmds);

#endif
