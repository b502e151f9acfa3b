/* Shared between the CC files: the algorithm descriptors the registry lists. */
#ifndef FE_CC_INTERNAL_H
#define FE_CC_INTERNAL_H

#include "feroce/cc.h"

extern const struct fe_cc_algo fe_cc_none;
extern const struct fe_cc_algo fe_cc_dcqcn, fe_cc_dcqcn_surf, fe_cc_dcqcn_ns3;
extern const struct fe_cc_algo fe_cc_dcqcn_surf_rtl;
extern const struct fe_cc_algo fe_cc_timely, fe_cc_hpcc, fe_cc_swift, fe_cc_homa;

#endif
