/* Trace and plot internals (trace.c, plot.c); the API is in feroce/sim.h. */
#ifndef FE_SIM_TRACE_H
#define FE_SIM_TRACE_H

#include <stdio.h>

#include "feroce/sim.h"

struct fe_sim_trace {
    struct fe_sim *sim;
    FILE *csv;
    uint64_t interval_ns, next_ns, last_ns;
    uint32_t n_flows;
    uint64_t *last_rx;
    int *n_vars;
    uint32_t n_ports;
    uint32_t port_node[256], port_idx[256];
    /* samples: per row time_us, then per flow (throughput, rate) in Gb/s */
    double *samples;
    size_t n_samples, cap_samples;
};

#endif
