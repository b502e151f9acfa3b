/* feroce bench NAME: runs a benchmark (bench/bench_NAME.c); each prints figures and ratios
 * against a baseline measured in the same run. */
#include "tools/cli.h"

#include <string.h>

static int run(int argc, char **argv)
{
    if (argc < 2) {
        fputs("usage: feroce bench NAME [ARGS...]   (feroce bench --help lists them)\n", stderr);
        return 2;
    }
    int all = !strcmp(argv[1], "all");
    for (const struct fe_bench *const *b = fe_benches; *b; b++) {
        if (all) {
            char *av[] = {(char *)(*b)->name, NULL};
            printf("== bench %s\n", (*b)->name);
            int rc = (*b)->run(1, av);
            if (rc) return rc;
        } else if (!strcmp((*b)->name, argv[1])) {
            return (*b)->run(argc - 1, argv + 1);
        }
    }
    if (all) return 0;
    fprintf(stderr, "feroce bench: unknown benchmark '%s'\n", argv[1]);
    return 2;
}

static int run_usage(int argc, char **argv);
const struct fe_cmd fe_cmd_bench = {"bench",
                                    "run a benchmark (icrc, qp, cc, sim, loopback, eb, all)",
                                    "usage: feroce bench NAME [ARGS...]\n"
                                    "Runs benchmark NAME, or every one with 'all'; 'feroce bench "
                                    "list' lists them. Each prints figures and ratios against a\n"
                                    "baseline measured in the same run (see bench/).\n",
                                    run_usage};

static int run_usage(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--list") || !strcmp(argv[1], "list"))) {
        for (const struct fe_bench *const *b = fe_benches; *b; b++)
            printf("  %-10s %s\n", (*b)->name, (*b)->summary);
        return 0;
    }
    return run(argc, argv);
}
