/* Small helpers for tools that report what the core measured: latency percentiles from a QP's
 * histogram, a congestion-control instance's rate and alpha in common units (Jain's index is
 * in feroce/stats.h). */
#ifndef FEROCE_REPORT_H
#define FEROCE_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/cc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The q-quantile (0..1) of the samples in `now` minus `before` (power-of-two buckets: bucket i
 * holds [2^i, 2^(i+1)) ns; before may be NULL), as the bucket's geometric middle; 0 when empty. */
uint64_t fe_hist_quantile_ns(const uint64_t *now, const uint64_t *before, int nbuckets, double q);

/* Rc, Rt (bit/s) and alpha (0..1) of a CC instance, from its trace, whatever its units. */
struct fe_cc_view {
    bool has_rc, has_rt, has_alpha;
    double rc_bps, rt_bps, alpha;
};
void fe_cc_view_of(const struct fe_cc *cc, struct fe_cc_view *v);
/* The same from traced variables already read (a simulated flow's, a trace file's). */
void fe_cc_view_from(const struct fe_cc_trace *t, int n, struct fe_cc_view *v);

#ifdef __cplusplus
}
#endif
#endif
