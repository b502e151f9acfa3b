/* libFuzzer: the parser of a user's partition (--partition FILE, src/sim/partition.c) on
 * arbitrary bytes, against a small fat-tree's node names; a partition that parses is reported
 * (its sums walk every node and port by the parts it gave). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "feroce/sim.h"
#include "sim/partition.h"

static struct fe_sim *fuzz_sim(void)
{
    static struct fe_sim *sim;
    if (sim) return sim;
    struct fe_sim_scenario sc;
    char err[256];
    if (fe_sim_builtin_load("incast3", &sc, err, sizeof(err))) return NULL;
    sim = fe_sim_create(&sc, NULL, err, sizeof(err));
    fe_sim_scenario_free(&sc);
    return sim;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fe_sim *sim = fuzz_sim();
    if (!sim) return 0;
    struct fe_sim_partition p;
    char err[256];
    if (fe_sim_partition_parse(sim, (const char *)data, size, "fuzz", &p, err, sizeof(err)))
        return 0;
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        fe_sim_partition_report(null, sim, &p);
        fclose(null);
    }
    fe_sim_partition_free(&p);
    return 0;
}
