/* The event manager: builders' released-slot counts in, assignment chunks out.
 * See include/feroce/eb.h and docs/event-building.md. */
#include <stdlib.h>
#include <string.h>

#include "feroce/eb.h"

void fe_eb_mgr_config_default(struct fe_eb_mgr_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->n_builders = 1;
    cfg->n_slots = 64;
    cfg->reserve = 4;
    cfg->run_events = 1;
    cfg->lead_events = 256;
    cfg->builder_timeout_ns = 100000000; /* 100 ms */
}

static bool config_ok(const struct fe_eb_mgr_config *c)
{
    return c->n_builders >= 1 && c->n_builders <= FE_EB_MAX_BUILDERS && c->n_slots >= 1 &&
           c->n_slots <= FE_EB_MAX_SLOTS && c->reserve < c->n_slots && c->run_events >= 1 &&
           c->lead_events >= 1;
}

int fe_eb_mgr_init(struct fe_eb_mgr *m, const struct fe_eb_mgr_config *cfg)
{
    memset(m, 0, sizeof *m);
    if (!config_ok(cfg)) return FE_EINVAL;
    m->b = calloc(cfg->n_builders, sizeof *m->b);
    if (!m->b) return FE_ENOMEM;
    m->cfg = *cfg;
    m->next_event = m->progress = m->issued_end = cfg->first_event;
    return 0;
}

void fe_eb_mgr_free(struct fe_eb_mgr *m)
{
    free(m->b);
    m->b = NULL;
}

int fe_eb_mgr_announce(struct fe_eb_mgr *m, uint64_t now_ns, uint16_t builder, uint64_t released)
{
    if (builder >= m->cfg.n_builders || released > m->b[builder].assigned) {
        m->stats.announces_bad++;
        return FE_EINVAL;
    }
    struct fe_eb_mgr_builder *b = &m->b[builder];
    if (b->up && released < b->released) {
        /* Reordered behind a newer one: it says nothing new, not even that the builder lives. */
        m->stats.announces_stale++;
        return 0;
    }
    if (released > b->released) b->released = released;
    b->up = true;
    b->last_heard_ns = now_ns;
    m->stats.announces++;
    return 0;
}

void fe_eb_mgr_progress(struct fe_eb_mgr *m, uint64_t next_event)
{
    if (next_event > m->progress) m->progress = next_event;
}

void fe_eb_mgr_builder_down(struct fe_eb_mgr *m, uint16_t builder)
{
    if (builder < m->cfg.n_builders) m->b[builder].up = false;
}

uint32_t fe_eb_mgr_credits(const struct fe_eb_mgr *m, uint16_t builder)
{
    if (builder >= m->cfg.n_builders || !m->b[builder].up) return 0;
    const struct fe_eb_mgr_builder *b = &m->b[builder];
    uint64_t in_use = b->assigned - b->released;
    uint64_t usable = m->cfg.n_slots - m->cfg.reserve;
    return in_use >= usable ? 0 : (uint32_t)(usable - in_use);
}

static void check_timeouts(struct fe_eb_mgr *m, uint64_t now_ns)
{
    if (!m->cfg.builder_timeout_ns) return;
    for (uint32_t i = 0; i < m->cfg.n_builders; i++) {
        struct fe_eb_mgr_builder *b = &m->b[i];
        if (b->up && now_ns - b->last_heard_ns >= m->cfg.builder_timeout_ns) {
            b->up = false;
            m->stats.timeouts++;
        }
    }
}

/* The builder with the most credits (ALICE: ready, with the most free memory); ties go to the
 * first one after the previous pick, so equal builders take turns. -1 when none has credit. */
static int pick_builder(const struct fe_eb_mgr *m, uint32_t *credits)
{
    int best = -1;
    uint32_t best_c = 0, n = m->cfg.n_builders;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (m->rr_next + k) % n;
        uint32_t c = fe_eb_mgr_credits(m, (uint16_t)i);
        if (c > best_c) {
            best = (int)i;
            best_c = c;
        }
    }
    *credits = best_c;
    return best;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Appends count events for builder to the chunk: merged into the last run when it continues it. */
static void add_run(struct fe_eb_mgr *m, struct fe_eb_table *out, uint16_t builder, uint32_t count)
{
    struct fe_eb_mgr_builder *b = &m->b[builder];
    uint16_t slot = (uint16_t)(b->assigned % m->cfg.n_slots);
    struct fe_eb_run *last = out->n_runs ? &out->run[out->n_runs - 1] : NULL;
    if (last && last->builder == builder && last->count + count <= UINT16_MAX &&
        (last->first_slot + last->count) % m->cfg.n_slots == slot)
        last->count = (uint16_t)(last->count + count);
    else
        out->run[out->n_runs++] = (struct fe_eb_run){builder, slot, (uint16_t)count};
    b->assigned += count;
    m->next_event += count;
    m->stats.events += count;
}

/* Refill when half the lead is used, not at every event: a few larger chunks rather than one per
 * trigger, so fewer messages and fewer chances for one to overtake another. */
static bool refill_due(struct fe_eb_mgr *m, uint64_t target)
{
    if (m->next_event >= target) {
        m->refilling = false;
        return false;
    }
    if (!m->refilling && m->next_event >= m->progress + (m->cfg.lead_events + 1) / 2) return false;
    m->refilling = true;
    return true;
}

int fe_eb_mgr_poll(struct fe_eb_mgr *m, uint64_t now_ns, struct fe_eb_table *out)
{
    check_timeouts(m, now_ns);
    /* Events a front-end has passed with no table were busy there; assigning them now would
     * only hold slots until the builders skip them. */
    if (m->progress > m->next_event) m->next_event = m->progress;
    uint64_t target = m->progress + m->cfg.lead_events;
    if (!refill_due(m, target)) return 0;
    memset(out, 0, sizeof *out);
    out->manager = m->cfg.id;
    out->epoch = m->cfg.epoch;
    out->first_event = m->next_event;
    out->skipped = (uint32_t)min_u64(m->next_event - m->issued_end, UINT32_MAX);
    while (m->next_event < target) {
        uint32_t credits;
        int b = pick_builder(m, &credits);
        if (b < 0) {
            if (!out->n_runs) m->stats.starved++;
            break;
        }
        bool merges = out->n_runs && out->run[out->n_runs - 1].builder == b;
        if (out->n_runs == FE_EB_TABLE_RUNS && !merges) break;
        uint64_t n = min_u64(min_u64(m->cfg.run_events, credits), target - m->next_event);
        n = min_u64(n, UINT16_MAX - (merges ? out->run[out->n_runs - 1].count : 0));
        if (!n) break;
        add_run(m, out, (uint16_t)b, (uint32_t)n);
        m->rr_next = ((uint32_t)b + 1) % m->cfg.n_builders;
    }
    if (!out->n_runs) return 0;
    m->issued_end = m->next_event;
    m->stats.chunks++;
    return 1;
}

uint64_t fe_eb_mgr_next_deadline(const struct fe_eb_mgr *m)
{
    uint64_t t = UINT64_MAX;
    if (!m->cfg.builder_timeout_ns) return t;
    for (uint32_t i = 0; i < m->cfg.n_builders; i++)
        if (m->b[i].up && m->b[i].last_heard_ns + m->cfg.builder_timeout_ns < t)
            t = m->b[i].last_heard_ns + m->cfg.builder_timeout_ns;
    return t;
}
