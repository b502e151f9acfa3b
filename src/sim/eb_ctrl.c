/* Event building in the simulator: its timers (one heap behind the EV_EB event), the trigger and
 * the fragment sizes, the event manager and its control plane, the faults, and the end of the
 * run. The control plane is the side channel on a separate management network: every message
 * (announcement, progress, chunk, forwarded progress) arrives ctrl_delay_ns after it is sent,
 * in the order sent, and is never lost; it does not load the data network. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/eb.h"
#include "sim/flow.h"
#include "sim/sim_internal.h"

/* ---- timers: a binary min-heap by (t, seq) ---- */

static bool timer_before(const struct eb_timer *a, const struct eb_timer *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int heap_grow(struct sim_eb *eb)
{
    if (eb->n_heap < eb->cap_heap) return 0;
    uint32_t cap = eb->cap_heap ? eb->cap_heap * 2 : 64;
    struct eb_timer *h = realloc(eb->heap, cap * sizeof(*h));
    if (!h) return FE_ENOMEM;
    eb->heap = h;
    eb->cap_heap = cap;
    return 0;
}

static void heap_push(struct sim_eb *eb, const struct eb_timer *t)
{
    uint32_t i = eb->n_heap++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!timer_before(t, &eb->heap[parent])) break;
        eb->heap[i] = eb->heap[parent];
        i = parent;
    }
    eb->heap[i] = *t;
}

static void heap_pop(struct sim_eb *eb, struct eb_timer *out)
{
    *out = eb->heap[0];
    struct eb_timer last = eb->heap[--eb->n_heap];
    uint32_t i = 0, n = eb->n_heap;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && timer_before(&eb->heap[c + 1], &eb->heap[c])) c++;
        if (!timer_before(&eb->heap[c], &last)) break;
        eb->heap[i] = eb->heap[c];
        i = c;
    }
    if (n) eb->heap[i] = last;
}

/* The simulation's event at the earliest timer, unless one is pending before it. */
static void arm_event(struct fe_sim *sim, struct sim_eb *eb)
{
    if (!eb->n_heap) return;
    uint64_t t = eb->heap[0].t;
    if (t >= eb->wake_at) return;
    eb->wake_at = t;
    sim_schedule(sim, t, eb, EV_EB);
}

void eb_timer_set(struct fe_sim *sim, struct sim_eb *eb, uint64_t t, uint8_t kind, uint32_t idx,
                  uint64_t val, const struct fe_eb_table *chunk)
{
    if (eb->done || t > FE_SIM_MAX_TIME) return; /* beyond any run: never due */
    if (heap_grow(eb)) {
        sim_fail(sim);
        return;
    }
    struct eb_timer tm = {.t = t, .seq = eb->seq++, .val = val, .idx = idx, .kind = kind};
    if (chunk) tm.chunk = *chunk;
    heap_push(eb, &tm);
    arm_event(sim, eb);
}

/* ---- random draws (splitmix64): trigger gaps and fragment sizes ---- */

static uint64_t rng_next(struct sim_eb *eb)
{
    uint64_t z = (eb->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in (0, 1] */
static double rng_unit(struct sim_eb *eb)
{
    return ((double)(rng_next(eb) >> 11) + 1.0) / 9007199254740992.0;
}

static uint32_t clip_size(const struct fe_sim_eb *e, double v)
{
    if (!(v >= 1)) return 1;
    if (v >= e->frag_max_bytes) return e->frag_max_bytes;
    return (uint32_t)v;
}

static uint32_t frag_size(struct sim_eb *eb)
{
    const struct fe_sim_eb *e = &eb->cfg;
    switch (e->dist) {
    case FE_SIM_EB_UNIFORM:
        return e->frag_min_bytes +
               (uint32_t)(rng_next(eb) % ((uint64_t)e->frag_max_bytes - e->frag_min_bytes + 1));
    case FE_SIM_EB_EXPONENTIAL:
        return clip_size(e, -log(rng_unit(eb)) * e->frag_bytes);
    case FE_SIM_EB_NORMAL: {
        double z = sqrt(-2.0 * log(rng_unit(eb))) * cos(6.283185307179586 * rng_unit(eb));
        return clip_size(e, e->frag_bytes + z * e->frag_sd_bytes);
    }
    default:
        return e->frag_bytes;
    }
}

/* The next trigger's time; past FE_SIM_MAX_TIME, never (eb_timer_set drops it). */
static uint64_t next_trigger_time(struct sim_eb *eb, uint64_t now)
{
    const struct fe_sim_eb *e = &eb->cfg;
    double t = e->trigger == FE_SIM_EB_POISSON
                   ? (double)now - log(rng_unit(eb)) / e->rate_hz * 1e9
                   : (double)e->start_ns + (double)eb->triggered * 1e9 / e->rate_hz;
    return t < (double)FE_SIM_MAX_TIME ? (uint64_t)t : UINT64_MAX;
}

/* ---- the trigger ---- */

/* Where front-end s sends event E: false when it is busy (no table covers it). */
static bool fe_target(struct sim_eb *eb, uint32_t s, uint64_t event, struct fe_eb_target *t)
{
    const struct fe_sim_eb *e = &eb->cfg;
    if (e->policy == FE_SIM_EB_ROUND_ROBIN) {
        *t = fe_eb_rr_assign(event, e->n_builders, e->slots);
        return true;
    }
    struct eb_fe *fe = &eb->fes[s];
    int rc = fe_eb_fe_table_lookup(fe->table, event, t);
    fe_eb_fe_table_forget(fe->table, event + 1);
    if (rc) fe->busy++;
    return rc == 0;
}

static void first_trigger(struct fe_sim *sim, struct sim_eb *eb)
{
    eb->first_trigger_ns = sim->now;
    for (uint32_t b = 0; b < eb->cfg.n_builders; b++) eb->bs[b].used_t = sim->now;
}

static void trigger(struct fe_sim *sim, struct sim_eb *eb)
{
    const struct fe_sim_eb *e = &eb->cfg;
    uint64_t event = eb->triggered;
    if (!event) first_trigger(sim, eb);
    eb->triggered++;
    eb->trigger_ns[event] = sim->now;
    uint32_t sent = 0;
    for (uint32_t s = 0; s < e->n_frontends; s++) {
        struct fe_eb_target t;
        eb->fes[s].next_event = event + 1;
        if (!fe_target(eb, s, event, &t)) continue;
        if (e->policy == FE_SIM_EB_ROUND_ROBIN) eb->ev_builder[event] = t.builder;
        struct eb_frag fr = {.event = event, .slot = t.slot, .len_bytes = frag_size(eb)};
        eb_send_fragment(sim, eb, s, t.builder, &fr);
        sent++;
    }
    uint16_t b = eb->ev_builder[event];
    if (!sent)
        eb_final(eb, sim->now, event, FE_EB_BUSY, FE_SIM_EB_NONE, e->n_frontends);
    else if (b < e->n_builders && eb->bs[b].left)
        eb_final(eb, sim->now, event, FE_EB_LOST, b, 0);
    if (eb->triggered < eb->n_events)
        eb_timer_set(sim, eb, next_trigger_time(eb, sim->now), T_TRIGGER, 0, 0, NULL);
}

/* ---- the event manager (availability) ---- */

/* A chunk's events in the observer's record (which builder each event went to), for the
 * accounting of a builder that leaves. */
static void note_chunk(struct sim_eb *eb, const struct fe_eb_table *c)
{
    uint64_t ev = c->first_event;
    for (uint8_t r = 0; r < c->n_runs; r++)
        for (uint16_t k = 0; k < c->run[r].count; k++, ev++)
            if (ev < eb->n_events) eb->ev_builder[ev] = c->run[r].builder;
}

/* Issues what the manager has due, to every front-end and builder. */
static void mgr_pump(struct fe_sim *sim, struct sim_eb *eb)
{
    const struct fe_sim_eb *e = &eb->cfg;
    struct fe_eb_table c;
    uint64_t at = sim->now + e->ctrl_delay_ns;
    while (fe_eb_mgr_poll(&eb->mgr, sim->now, &c) == 1) {
        note_chunk(eb, &c);
        for (uint32_t s = 0; s < e->n_frontends; s++)
            eb_timer_set(sim, eb, at, T_CHUNK_FE, s, 0, &c);
        for (uint32_t b = 0; b < e->n_builders; b++) eb_timer_set(sim, eb, at, T_CHUNK_B, b, 0, &c);
    }
}

/* A front-end's progress at the manager: the furthest goes to the manager, the least (every
 * front-end passed the events below it) on to the builders. */
static void mgr_progress(struct fe_sim *sim, struct sim_eb *eb, uint32_t s, uint64_t next)
{
    const struct fe_sim_eb *e = &eb->cfg;
    fe_eb_mgr_progress(&eb->mgr, next);
    if (next > eb->fe_progress[s]) eb->fe_progress[s] = next;
    uint64_t least = UINT64_MAX;
    for (uint32_t k = 0; k < e->n_frontends; k++)
        if (eb->fe_progress[k] < least) least = eb->fe_progress[k];
    if (least > eb->min_progress) {
        eb->min_progress = least;
        for (uint32_t b = 0; b < e->n_builders; b++)
            eb_timer_set(sim, eb, sim->now + e->ctrl_delay_ns, T_PASSED, b, least, NULL);
    }
    mgr_pump(sim, eb);
}

static void builder_chunk(struct fe_sim *sim, struct sim_eb *eb, uint16_t b,
                          const struct fe_eb_table *c)
{
    (void)sim;
    if (!eb->bs[b].left) fe_eb_positions_add(eb->bs[b].pos, c);
}

static void builder_passed(struct fe_sim *sim, struct sim_eb *eb, uint16_t b, uint64_t event_end)
{
    struct eb_builder *bd = &eb->bs[b];
    if (bd->left) return;
    fe_eb_asm_passed(bd->as, sim->now, fe_eb_positions_below(bd->pos, event_end), event_end);
    eb_after_asm(sim, eb, b);
}

/* Every ctrl_interval_ns: builders announce their watermark, front-ends report progress. */
static void tick(struct fe_sim *sim, struct sim_eb *eb)
{
    const struct fe_sim_eb *e = &eb->cfg;
    uint64_t at = sim->now + e->ctrl_delay_ns;
    for (uint32_t b = 0; b < e->n_builders; b++)
        if (!eb->bs[b].left)
            eb_timer_set(sim, eb, at, T_ANNOUNCE, b, fe_eb_asm_released(eb->bs[b].as), NULL);
    for (uint32_t s = 0; s < e->n_frontends; s++) {
        struct eb_fe *fe = &eb->fes[s];
        if (fe->next_event == fe->reported) continue;
        fe->reported = fe->next_event;
        eb_timer_set(sim, eb, at, T_PROGRESS, s, fe->next_event, NULL);
    }
    mgr_pump(sim, eb); /* where silent builders are marked down */
    eb_timer_set(sim, eb, sim->now + e->ctrl_interval_ns, T_TICK, 0, 0, NULL);
}

/* ---- the end ---- */

/* Every event has its final state: the pairs' flows end, and with them the run unless other
 * flows go on. */
static void finish(struct fe_sim *sim, struct sim_eb *eb)
{
    eb->done = true;
    eb->n_heap = 0;
    const struct fe_sim_eb *e = &eb->cfg;
    for (uint32_t i = 0; i < e->n_frontends * e->n_builders; i++) {
        struct sim_flow *f = &sim->flows[eb->first_flow + i];
        if (f->done) continue;
        if (f->resp && f->resp->qp) eb->rnr_naks += fe_qp_counters(f->resp->qp)->tx_rnr_naks;
        sim_flow_end(sim, f);
    }
}

static void run_timer(struct fe_sim *sim, struct sim_eb *eb, const struct eb_timer *t)
{
    uint16_t b = (uint16_t)t->idx;
    switch (t->kind) {
    case T_TRIGGER:
        trigger(sim, eb);
        break;
    case T_CONSUMED:
        eb_consumed(sim, eb, b);
        break;
    case T_ASM:
        eb_expire(sim, eb, b);
        break;
    case T_TICK:
        tick(sim, eb);
        break;
    case T_ANNOUNCE:
        fe_eb_mgr_announce(&eb->mgr, sim->now, b, t->val);
        mgr_pump(sim, eb);
        break;
    case T_PROGRESS:
        mgr_progress(sim, eb, t->idx, t->val);
        break;
    case T_CHUNK_FE:
        fe_eb_fe_table_add(eb->fes[t->idx].table, &t->chunk);
        break;
    case T_CHUNK_B:
        builder_chunk(sim, eb, b, &t->chunk);
        break;
    case T_PASSED:
        builder_passed(sim, eb, b, t->val);
        break;
    case T_SLOW:
        eb->bs[b].rate_bps = eb->cfg.slow_bps ? eb->cfg.slow_bps : 1;
        break;
    case T_TOKEN_ASK:
        eb_token_ask(sim, eb, t->idx);
        break;
    case T_TOKEN_GIVE:
        eb_token_give(sim, eb, t->idx);
        break;
    case T_TOKEN_BACK:
        eb_token_back(sim, eb, t->idx);
        break;
    case T_LEAVE:
        eb_leave(sim, eb, b);
        break;
    case T_RELEASED:
        eb_released(sim, eb, t->idx, t->val);
        break;
    }
}

__attribute__((noinline)) void sim_eb_event(struct fe_sim *sim, struct sim_eb *eb)
{
    if (eb->wake_at <= sim->now) eb->wake_at = FE_SIM_NO_TIME;
    struct eb_timer t;
    while (!eb->done && eb->n_heap && eb->heap[0].t <= sim->now) {
        heap_pop(eb, &t);
        run_timer(sim, eb, &t);
        if (eb->n_final == eb->n_events) finish(sim, eb);
    }
    if (!eb->done) arm_event(sim, eb);
}

void eb_first_timers(struct fe_sim *sim, struct sim_eb *eb)
{
    const struct fe_sim_eb *e = &eb->cfg;
    eb_timer_set(sim, eb, e->start_ns, T_TRIGGER, 0, 0, NULL);
    if (e->slow_builder != FE_SIM_EB_NONE)
        eb_timer_set(sim, eb, e->slow_at_ns, T_SLOW, e->slow_builder, 0, NULL);
    if (e->leave_builder != FE_SIM_EB_NONE)
        eb_timer_set(sim, eb, e->leave_at_ns, T_LEAVE, e->leave_builder, 0, NULL);
    if (e->policy == FE_SIM_EB_AVAILABILITY) eb_timer_set(sim, eb, 0, T_TICK, 0, 0, NULL);
}
