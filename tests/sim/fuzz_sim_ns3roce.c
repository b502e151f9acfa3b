/* libFuzzer: the ns3-roce JSON reader (config, topology, flows) on arbitrary bytes, split into
 * the three files at NUL bytes; inputs that parse are built and run briefly. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "feroce/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    const char *part[3] = {p, "", ""};
    size_t len[3] = {size, 0, 0};
    for (int k = 1; k < 3; k++) {
        const char *z = memchr(part[k - 1], 0, len[k - 1]);
        if (!z) break;
        len[k - 1] = (size_t)(z - part[k - 1]);
        part[k] = z + 1;
        len[k] = (size_t)(end - part[k]);
    }
    struct fe_sim_scenario sc;
    struct fe_sim_ns3roce_info info;
    struct fe_sim_ns3roce_opts opts = {.skip_unsupported = size % 2 == 1, .warn = NULL};
    char err[512];
    if (fe_sim_ns3roce_parse(part[0], len[0], "c.json", part[1], len[1], "t.json", part[2], len[2],
                             "f.json", &opts, &sc, &info, err, sizeof(err)))
        return 0;
    if (sc.n_nodes <= 64 && sc.n_flows <= 16) {
        int rc;
        struct fe_sim *sim = fe_sim_create(&sc, &rc, err, sizeof(err));
        if (sim) {
            fe_sim_run(sim, 20000);
            fe_sim_destroy(sim);
        }
    }
    fe_sim_scenario_free(&sc);
    fe_sim_ns3roce_info_free(&info);
    return 0;
}
