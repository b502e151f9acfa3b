/* feroce: one CLI, many subcommands (registry generated from src/tools/cmd_*.c). */
#include "tools/cli.h"

#include <errno.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("feroce - Front-End RDMA over Converged Ethernet toolkit\n\n"
          "usage: feroce COMMAND [ARGS...]     (feroce COMMAND --help for details)\n\n"
          "commands:\n",
          f);
    for (const struct fe_cmd *const *c = fe_cmds; *c; c++)
        fprintf(f, "  %-12s %s\n", (*c)->name, (*c)->summary);
    fprintf(f, "  %-12s %s\n", "help", "list the commands");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "-h")) {
        if (argc >= 3) {
            for (const struct fe_cmd *const *c = fe_cmds; *c; c++)
                if (!strcmp((*c)->name, argv[2])) {
                    fputs((*c)->usage, stdout);
                    return 0;
                }
        }
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (const struct fe_cmd *const *c = fe_cmds; *c; c++) {
        if (!strcmp((*c)->name, argv[1])) {
            if (fe_cli_wants_help(*c, argc - 1, argv + 1)) return 0;
            int rc = (*c)->run(argc - 1, argv + 1);
            /* A report, a JSON or a table that did not reach its file (a full disk, a closed
             * pipe) is a failed run: scripts read the exit status, not the file's length. */
            if (ferror(stdout) | fflush(stdout)) {
                fprintf(stderr, "feroce %s: writing the output failed: %s\n", argv[1],
                        strerror(errno));
                if (!rc) rc = 1;
            }
            return rc;
        }
    }
    fprintf(stderr, "feroce: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
