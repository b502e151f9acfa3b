/* libFuzzer: the campaign parser (YAML) on arbitrary bytes; campaigns that parse, on a
 * built-in base and with few points, are built (base loaded, every value validated, points
 * expanded). */
#include <stdint.h>
#include <string.h>

#include "sweep/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool small_builtin(const struct sw_spec *s)
{
    size_t n;
    const struct fe_sim_builtin *b = fe_sim_builtins(&n);
    bool builtin = false;
    for (size_t i = 0; s->scenario && i < n; i++) builtin |= !strcmp(b[i].name, s->scenario);
    if (!builtin || s->hpcc) return false;
    uint64_t points = s->n_seeds ? s->n_seeds : 1;
    for (uint32_t i = 0; i < s->n_params && points <= 512; i++)
        points *= s->params[i].sampled ? (s->n_samples ? s->n_samples : 1) : s->params[i].n_values;
    return points <= 512;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sw_campaign c;
    char err[SW_ERR_LEN];
    memset(&c, 0, sizeof(c));
    if (sw_spec_parse((const char *)data, size, "fuzz.yaml", "", &c.spec, err, sizeof(err)))
        return 0;
    if (small_builtin(&c.spec)) {
        fe_sim_scenario_init(&c.base);
        sw_campaign_build(&c, err, sizeof(err));
    }
    sw_campaign_free(&c);
    return 0;
}
