/* libFuzzer: the native scenario parser (YAML) on arbitrary bytes; scenarios that parse are
 * built and run for a few simulated microseconds when small. */
#include <stddef.h>
#include <stdint.h>

#include "feroce/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fe_sim_scenario sc;
    char err[256];
    if (fe_sim_scenario_parse_yaml((const char *)data, size, "fuzz.yaml", &sc, err, sizeof(err)))
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
    return 0;
}
