/* The list of congestion-control algorithms: adding one is one line here. */
#include <string.h>

#include "cc/cc_internal.h"

/* clang-format off */
static const struct fe_cc_algo *const algos[] = {
    &fe_cc_none,
    &fe_cc_dcqcn,
    &fe_cc_dcqcn_surf,
    &fe_cc_dcqcn_ns3,
    &fe_cc_dcqcn_surf_rtl,
    &fe_cc_timely,
    &fe_cc_hpcc,
    &fe_cc_swift,
    &fe_cc_homa,
    NULL,
};
/* clang-format on */

const struct fe_cc_algo *fe_cc_find(const char *name)
{
    if (!name) return NULL;
    for (const struct fe_cc_algo *const *a = algos; *a; a++)
        if (!strcmp((*a)->name, name)) return *a;
    return NULL;
}

const struct fe_cc_algo *const *fe_cc_list(void)
{
    return algos;
}
