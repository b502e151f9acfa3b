/* What the simulator's file fuzzers share: one input split into up to three files, and a short
 * run of whatever scenario parsed (small ones only, so a run stays fast). */
#ifndef FEROCE_TESTS_FUZZ_SIM_UTIL_H
#define FEROCE_TESTS_FUZZ_SIM_UTIL_H

#include <stddef.h>
#include <string.h>

#include "feroce/sim.h"

/* Splits data at its first two NUL bytes; missing parts are `missing` with length 0. */
static inline void fuzz_split3(const char *data, size_t size, const char *missing,
                               const char *part[3], size_t len[3])
{
    const char *end = data + size;
    part[0] = data;
    len[0] = size;
    for (int k = 1; k < 3; k++) {
        part[k] = missing;
        len[k] = 0;
    }
    for (int k = 1; k < 3; k++) {
        const char *z = memchr(part[k - 1], 0, len[k - 1]);
        if (!z) break;
        len[k - 1] = (size_t)(z - part[k - 1]);
        part[k] = z + 1;
        len[k] = (size_t)(end - part[k]);
    }
}

/* Builds and runs a parsed scenario for 20 simulated microseconds when it is small, half of them
 * (by node count) with the run loop's lookahead, which large fabrics have by default: its loads
 * read ahead into every kind of event's state; and half of them (by flow count) with
 * --ns3-compat's modelling (ns-3 timing: transmit-completes kept as keys until a frame waits). */
static inline void fuzz_run_small(struct fe_sim_scenario *sc)
{
    if (sc->n_nodes > 64 || sc->n_flows > 16) return;
    if (sc->n_flows & 1) fe_sim_scenario_ns3_compat(sc);
    int rc;
    char err[256];
    struct fe_sim *sim = fe_sim_create(sc, &rc, err, sizeof(err));
    if (!sim) return;
    fe_sim_set_lookahead(sim, sc->n_nodes & 1);
    fe_sim_run(sim, 20000);
    fe_sim_destroy(sim);
}

#endif
