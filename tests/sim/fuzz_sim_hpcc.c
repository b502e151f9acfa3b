/* libFuzzer: the HPCC ns-3 parsers (config.txt, topology.txt, flow.txt) on arbitrary bytes,
 * split into the three files at NUL bytes; inputs that parse are built and run briefly. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "feroce/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    const char *part[3] = {p, NULL, NULL};
    size_t len[3] = {size, 0, 0};
    for (int k = 1; k < 3; k++) {
        const char *z = memchr(part[k - 1], 0, len[k - 1]);
        if (!z) break;
        len[k - 1] = (size_t)(z - part[k - 1]);
        part[k] = z + 1;
        len[k] = (size_t)(end - part[k]);
    }
    struct fe_sim_scenario sc;
    struct fe_sim_hpcc_files files;
    char err[256];
    fe_sim_scenario_init(&sc);
    memset(&files, 0, sizeof(files));
    fe_sim_hpcc_parse_config(part[0], len[0], "config.txt", &sc, &files, err, sizeof(err));
    fe_sim_scenario_free(&sc);
    if (!part[1]) return 0;
    fe_sim_scenario_init(&sc);
    if (!fe_sim_hpcc_parse_topology(part[1], len[1], "topology.txt", &sc, err, sizeof(err)) &&
        part[2] && !fe_sim_hpcc_parse_flows(part[2], len[2], "flow.txt", &sc, err, sizeof(err)) &&
        !fe_sim_hpcc_apply(&sc, &files, err, sizeof(err)) && sc.n_nodes <= 64 && sc.n_flows <= 16) {
        int rc;
        struct fe_sim *sim = fe_sim_create(&sc, &rc, err, sizeof(err));
        if (sim) {
            fe_sim_run(sim, 20000);
            fe_sim_destroy(sim);
        }
    }
    fe_sim_scenario_free(&sc);
    return 0;
}
