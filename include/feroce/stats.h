/* Small statistics shared by every layer's reports: the simulator's, the socket tools'. */
#ifndef FEROCE_STATS_H
#define FEROCE_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Jain's fairness index of x[0..n): (sum x)^2 / (n sum x^2), 1 for equal shares, 1/n when one
 * value has everything. With no values (n = 0) or only zeros there is no unequal share, so it
 * is 1: the simulator's reports of an empty contention window print 1. A tool that wants a run
 * that carried nothing to read as unfair checks the total itself. */
double fe_jain_index(const double *x, size_t n);

#ifdef __cplusplus
}
#endif
#endif
