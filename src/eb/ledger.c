/* The ledger: one final state per triggered event, for tests, the simulator and the demo. */
#include <stdlib.h>
#include <string.h>

#include "feroce/eb.h"

struct entry {
    uint8_t state; /* enum fe_eb_final */
    uint16_t builder;
    uint32_t n_missing;
};

struct fe_eb_ledger {
    uint64_t first, n;
    struct entry *e;
    uint64_t twice, out_of_range;
};

const char *fe_eb_final_name(int state)
{
    static const char *const names[FE_EB_FINAL_MAX] = {
        [FE_EB_NONE] = "missing", [FE_EB_BUILT] = "built", [FE_EB_INCOMPLETE] = "incomplete",
        [FE_EB_LOST] = "lost",    [FE_EB_BUSY] = "busy",
    };
    return state >= 0 && state < FE_EB_FINAL_MAX ? names[state] : "unknown";
}

int fe_eb_ledger_create(struct fe_eb_ledger **out, uint64_t first_event, uint64_t n_events)
{
    *out = NULL;
    if (!n_events || n_events > SIZE_MAX / sizeof(struct entry)) return FE_EINVAL;
    struct fe_eb_ledger *l = calloc(1, sizeof *l);
    if (!l) return FE_ENOMEM;
    l->e = calloc((size_t)n_events, sizeof *l->e);
    if (!l->e) {
        free(l);
        return FE_ENOMEM;
    }
    l->first = first_event;
    l->n = n_events;
    *out = l;
    return 0;
}

void fe_eb_ledger_destroy(struct fe_eb_ledger *l)
{
    if (!l) return;
    free(l->e);
    free(l);
}

int fe_eb_ledger_record(struct fe_eb_ledger *l, uint64_t event, enum fe_eb_final state,
                        uint16_t builder, uint32_t n_missing)
{
    if (state <= FE_EB_NONE || state >= FE_EB_FINAL_MAX) return FE_EINVAL;
    if (event < l->first || event - l->first >= l->n) {
        l->out_of_range++;
        return FE_ERANGE;
    }
    struct entry *e = &l->e[event - l->first];
    if (e->state != FE_EB_NONE) {
        l->twice++;
        return FE_ESTATE;
    }
    *e = (struct entry){(uint8_t)state, builder, n_missing};
    return 0;
}

int fe_eb_ledger_state(const struct fe_eb_ledger *l, uint64_t event)
{
    if (event < l->first || event - l->first >= l->n) return FE_ERANGE;
    return l->e[event - l->first].state;
}

bool fe_eb_ledger_check(const struct fe_eb_ledger *l, struct fe_eb_ledger_report *r)
{
    memset(r, 0, sizeof *r);
    r->events = l->n;
    r->first_missing = UINT64_MAX;
    for (uint64_t i = 0; i < l->n; i++) {
        uint8_t s = l->e[i].state;
        r->count[s]++;
        if (s == FE_EB_NONE && r->first_missing == UINT64_MAX) r->first_missing = l->first + i;
    }
    r->twice = l->twice;
    r->out_of_range = l->out_of_range;
    return !r->count[FE_EB_NONE] && !r->twice && !r->out_of_range;
}
