/* feroce cc: lists the congestion-control algorithms and their parameters (names, units,
 * defaults, ranges), and checks a parameter list. */
#include <string.h>

#include "feroce/cc.h"
#include "tools/cli.h"

static void show(const struct fe_cc_algo *a, const struct fe_cc_params *p)
{
    printf("%s: %s\n", a->name, a->summary);
    if (!a->n_params) puts("  (no parameters)");
    for (size_t i = 0; i < a->n_params; i++) {
        const struct fe_cc_param *d = &a->params[i];
        char range[80];
        snprintf(range, sizeof range, "[%.15g, %.15g]%s", d->min, d->max,
                 d->integer ? "" : " real");
        printf("  %-30s %-14.15g %-8s %-28s %s\n", d->name, p ? p->v[i] : d->def, d->unit, range,
               d->help);
    }
}

static int run(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "list")) {
        for (const struct fe_cc_algo *const *a = fe_cc_list(); *a; a++)
            printf("  %-16s %s\n", (*a)->name, (*a)->summary);
        return 0;
    }
    const struct fe_cc_algo *a = fe_cc_find(argv[1]);
    if (!a) {
        fprintf(stderr, "feroce cc: unknown algorithm '%s' ('feroce cc list')\n", argv[1]);
        return 2;
    }
    struct fe_cc_params p;
    fe_cc_params_default(&p, a);
    for (int i = 2; i < argc; i++) {
        char err[600];
        if (fe_cc_params_parse(&p, argv[i], err, sizeof err)) {
            fprintf(stderr, "feroce cc: %s\n", err);
            return 2;
        }
    }
    show(a, &p);
    return 0;
}

const struct fe_cmd fe_cmd_cc = {
    "cc", "list congestion-control algorithms and their parameters",
    "usage: feroce cc [list]                      the algorithms\n"
    "       feroce cc NAME [A=V[,B=W...]]...      NAME's parameters: value, unit, range, meaning\n"
    "                                             (after the assignments, which are validated)\n"
    "Parameters are set by name wherever an algorithm is chosen (e.g. feroce dcqcn --param,\n"
    "simulator and tool options); a value outside its range is refused with the range and unit.\n",
    run};
