/* libFuzzer: the HPCC ns-3 parsers (config.txt, topology.txt, flow.txt) on arbitrary bytes,
 * split into the three files at NUL bytes; inputs that parse are built and run briefly. */
#include <stdint.h>
#include <string.h>

#include "fuzz_sim_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *part[3];
    size_t len[3];
    fuzz_split3((const char *)data, size, NULL, part, len);
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
        !fe_sim_hpcc_apply(&sc, &files, err, sizeof(err)))
        fuzz_run_small(&sc);
    fe_sim_scenario_free(&sc);
    return 0;
}
