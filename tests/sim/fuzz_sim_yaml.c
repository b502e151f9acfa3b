/* libFuzzer: the native scenario parser (YAML) on arbitrary bytes; scenarios that parse are
 * built and run for a few simulated microseconds when small. */
#include <stdint.h>

#include "fuzz_sim_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fe_sim_scenario sc;
    char err[256];
    if (fe_sim_scenario_parse_yaml((const char *)data, size, "fuzz.yaml", &sc, err, sizeof(err)))
        return 0;
    fuzz_run_small(&sc);
    fe_sim_scenario_free(&sc);
    return 0;
}
