/* libFuzzer: the ns3-roce JSON reader (config, topology, flows) on arbitrary bytes, split into
 * the three files at NUL bytes; inputs that parse are built and run briefly. */
#include <stdint.h>

#include "fuzz_sim_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *part[3];
    size_t len[3];
    fuzz_split3((const char *)data, size, "", part, len);
    struct fe_sim_scenario sc;
    struct fe_sim_ns3roce_info info;
    struct fe_sim_ns3roce_opts opts = {.skip_unsupported = size % 2 == 1, .warn = NULL};
    char err[512];
    if (fe_sim_ns3roce_parse(part[0], len[0], "c.json", part[1], len[1], "t.json", part[2], len[2],
                             "f.json", &opts, &sc, &info, err, sizeof(err)))
        return 0;
    fuzz_run_small(&sc);
    fe_sim_scenario_free(&sc);
    fe_sim_ns3roce_info_free(&info);
    return 0;
}
