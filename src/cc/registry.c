/* The list of congestion-control algorithms: adding one is one line here (or, outside the
 * library, one fe_cc_register call). */
#include <string.h>

#include "cc/cc_internal.h"
#include "feroce/err.h"

/* clang-format off */
static const struct fe_cc_algo *algos[FE_CC_MAX_ALGOS + 1] = {
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
    return (const struct fe_cc_algo *const *)algos;
}

int fe_cc_register(const struct fe_cc_algo *algo)
{
    if (!algo || !algo->name || !algo->init || algo->n_params > FE_CC_MAX_PARAMS) return FE_EINVAL;
    if (fe_cc_find(algo->name)) return FE_ESTATE;
    size_t n = 0;
    while (algos[n]) n++;
    if (n >= FE_CC_MAX_ALGOS) return FE_ENOSPC;
    algos[n] = algo; /* algos[n + 1] is still NULL: the array has one more slot */
    return 0;
}
