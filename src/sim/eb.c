/* Event building in the simulator: the pairs' flows and QPs, fragments from front-ends to
 * builders, the builders' assembly, consumer and receive buffers, and the accounting. The
 * decisions (which builder, which slot, complete or not, which position is skipped) are the
 * core's (src/eb); this file only moves what the core decides. */
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/eb.h"
#include "sim/flow.h"
#include "sim/sim_internal.h"
#include "transport/qp_sim.h"

/* ---- configuration ---- */

static int check_hosts(const struct fe_sim_scenario *sc, const uint32_t *nodes, uint32_t n,
                       const char *what, char *err, size_t cap)
{
    if (n == 0 || n > FE_SIM_EB_MAX_HOSTS) {
        sim_errf(err, cap, "eb.%s: 1..%u hosts", what, FE_SIM_EB_MAX_HOSTS);
        return FE_EINVAL;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (nodes[i] >= sc->n_nodes || sc->nodes[nodes[i]].is_switch) {
            sim_errf(err, cap, "eb.%s: entry %u is not a host", what, i);
            return FE_EINVAL;
        }
        for (uint32_t j = 0; j < i; j++)
            if (nodes[j] == nodes[i]) {
                sim_errf(err, cap, "eb.%s: host %s listed twice", what, sc->nodes[nodes[i]].name);
                return FE_EINVAL;
            }
    }
    return 0;
}

static int check_disjoint(const struct fe_sim_scenario *sc, char *err, size_t cap)
{
    const struct fe_sim_eb *e = &sc->eb;
    for (uint32_t i = 0; i < e->n_frontends; i++)
        for (uint32_t j = 0; j < e->n_builders; j++)
            if (e->frontends[i] == e->builders[j]) {
                sim_errf(err, cap, "eb: host %s is both a front-end and a builder",
                         sc->nodes[e->frontends[i]].name);
                return FE_EINVAL;
            }
    return 0;
}

static int check_sizes(const struct fe_sim_scenario *sc, char *err, size_t cap)
{
    const struct fe_sim_eb *e = &sc->eb;
    if (!e->frag_max_bytes || e->frag_max_bytes > (1u << 24) || !e->frag_bytes ||
        e->frag_bytes > e->frag_max_bytes) {
        sim_errf(err, cap, "eb: need 0 < frag_bytes <= frag_max_bytes <= 16 MiB");
        return FE_EINVAL;
    }
    if (e->dist == FE_SIM_EB_UNIFORM &&
        (!e->frag_min_bytes || e->frag_min_bytes > e->frag_max_bytes)) {
        sim_errf(err, cap, "eb: uniform sizes need 0 < frag_min_bytes <= frag_max_bytes");
        return FE_EINVAL;
    }
    if (e->slots < 2 || e->slots > 4096 || e->reserve_slots >= e->slots) {
        sim_errf(err, cap, "eb: slots 2..4096, reserve_slots < slots");
        return FE_EINVAL;
    }
    return 0;
}

static int check_rates(const struct fe_sim_scenario *sc, char *err, size_t cap)
{
    const struct fe_sim_eb *e = &sc->eb;
    if (!(e->rate_hz > 0 && e->rate_hz <= 1e9) || !e->events || e->events > 10000000) {
        sim_errf(err, cap, "eb: rate_hz in (0, 1e9], events 1..1e7");
        return FE_EINVAL;
    }
    if (!e->consumer_bps || !e->timeout_ns || !e->fe_queue || e->fe_queue > 4096 ||
        e->rnr_timer > 31 || e->cc >= sc->n_cc) {
        sim_errf(err, cap,
                 "eb: consumer rate, timeout, fe_queue (1..4096) must be set, "
                 "rnr_timer 0..31, cc a profile");
        return FE_EINVAL;
    }
    if (e->policy == FE_SIM_EB_AVAILABILITY &&
        (!e->ctrl_interval_ns || !e->lead_events || !e->run_events || e->run_events > 65535)) {
        sim_errf(err, cap, "eb: availability needs ctrl_interval, lead_events, run_events");
        return FE_EINVAL;
    }
    if ((e->slow_builder != FE_SIM_EB_NONE && e->slow_builder >= e->n_builders) ||
        (e->leave_builder != FE_SIM_EB_NONE && e->leave_builder >= e->n_builders)) {
        sim_errf(err, cap, "eb: slow_builder / leave_builder must index eb.builders");
        return FE_EINVAL;
    }
    return 0;
}

static int check_config(const struct fe_sim_scenario *sc, char *err, size_t cap)
{
    const struct fe_sim_eb *e = &sc->eb;
    int rc = check_hosts(sc, e->frontends, e->n_frontends, "frontends", err, cap);
    if (!rc) rc = check_hosts(sc, e->builders, e->n_builders, "builders", err, cap);
    if (!rc) rc = check_disjoint(sc, err, cap);
    if (!rc) rc = check_sizes(sc, err, cap);
    if (!rc) rc = check_rates(sc, err, cap);
    return rc;
}

/* ---- setup ---- */

/* One flow per front-end/builder pair: its size is the builder's ring, the memory region the
 * front-end writes into. */
static int add_pair_flows(struct fe_sim *sim, struct sim_eb *eb)
{
    const struct fe_sim_eb *e = &eb->cfg;
    eb->first_flow = sim->sc.n_flows;
    for (uint32_t s = 0; s < e->n_frontends; s++)
        for (uint32_t b = 0; b < e->n_builders; b++) {
            struct fe_sim_flow f = {.src = e->frontends[s],
                                    .dst = e->builders[b],
                                    .bytes = eb->slot_bytes * e->slots,
                                    .msg_bytes = e->frag_max_bytes,
                                    .prio = 0xff,
                                    .cc = e->cc};
            if (fe_sim_scenario_add_flow(&sim->sc, &f) < 0) return FE_ENOMEM;
        }
    return 0;
}

static int alloc_events(struct sim_eb *eb)
{
    uint64_t n = eb->n_events;
    eb->trigger_ns = calloc(n, sizeof(uint64_t));
    eb->complete_ns = calloc(n, sizeof(uint64_t));
    eb->ev_builder = malloc(n * sizeof(uint16_t));
    if (!eb->trigger_ns || !eb->complete_ns || !eb->ev_builder) return FE_ENOMEM;
    memset(eb->ev_builder, 0xFF, n * sizeof(uint16_t));
    return fe_eb_ledger_create(&eb->ledger, 0, n);
}

static int builder_init(struct sim_eb *eb, struct eb_builder *b, uint16_t bi)
{
    const struct fe_sim_eb *e = &eb->cfg;
    struct fe_eb_asm_config ac;
    fe_eb_asm_config_default(&ac);
    ac.n_sources = e->n_frontends;
    ac.n_slots = e->slots;
    ac.frag_max_bytes = e->frag_max_bytes;
    ac.timeout_ns = e->timeout_ns;
    ac.first_event = 0;
    ac.rr_builders = e->policy == FE_SIM_EB_ROUND_ROBIN ? e->n_builders : 0;
    int rc = fe_eb_asm_create(&b->as, &ac);
    if (rc) return rc;
    b->cq = calloc(e->slots, sizeof(*b->cq));
    if (!b->cq) return FE_ENOMEM;
    b->rate_bps = e->consumer_bps;
    b->asm_wake = FE_SIM_NO_TIME;
    b->tokens_free = e->tokens;
    b->token_q = calloc(e->n_frontends, sizeof(uint32_t));
    if (!b->token_q) return FE_ENOMEM;
    if (e->policy != FE_SIM_EB_AVAILABILITY) return 0;
    return fe_eb_positions_create(&b->pos, bi, (uint32_t)(e->lead_events + e->slots + 64), 0);
}

static int avail_init(struct sim_eb *eb)
{
    const struct fe_sim_eb *e = &eb->cfg;
    for (uint32_t s = 0; s < e->n_frontends; s++) {
        int rc =
            fe_eb_fe_table_create(&eb->fes[s].table, (uint32_t)(e->lead_events + 64), e->slots, 0);
        if (rc) return rc;
    }
    struct fe_eb_mgr_config mc;
    fe_eb_mgr_config_default(&mc);
    mc.id = 0;
    mc.epoch = 1;
    mc.n_builders = e->n_builders;
    mc.n_slots = e->slots;
    mc.reserve = e->reserve_slots;
    mc.run_events = e->run_events;
    mc.lead_events = e->lead_events;
    mc.first_event = 0;
    mc.builder_timeout_ns = e->builder_timeout_ns;
    int rc = fe_eb_mgr_init(&eb->mgr, &mc);
    if (rc) return rc;
    eb->mgr_on = true;
    eb->fe_progress = calloc(e->n_frontends, sizeof(uint64_t));
    return eb->fe_progress ? 0 : FE_ENOMEM;
}

static int alloc_state(struct sim_eb *eb)
{
    const struct fe_sim_eb *e = &eb->cfg;
    uint32_t n_pairs = e->n_frontends * e->n_builders;
    eb->pairs = calloc(n_pairs, sizeof(*eb->pairs));
    eb->fes = calloc(e->n_frontends, sizeof(*eb->fes));
    eb->bs = calloc(e->n_builders, sizeof(*eb->bs));
    if (!eb->pairs || !eb->fes || !eb->bs) return FE_ENOMEM;
    for (uint32_t i = 0; i < n_pairs; i++) {
        eb->pairs[i].flow = eb->first_flow + i;
        eb->pairs[i].fe = (uint16_t)(i / e->n_builders);
        eb->pairs[i].builder = (uint16_t)(i % e->n_builders);
    }
    for (uint32_t b = 0; b < e->n_builders; b++) {
        int rc = builder_init(eb, &eb->bs[b], (uint16_t)b);
        if (rc) return rc;
    }
    int rc = alloc_events(eb);
    if (!rc && e->policy == FE_SIM_EB_AVAILABILITY) rc = avail_init(eb);
    return rc;
}

int sim_eb_create(struct fe_sim *sim, char *err, size_t err_cap)
{
    if (!sim->sc.eb.n_frontends && !sim->sc.eb.n_builders) return 0;
    int rc = check_config(&sim->sc, err, err_cap);
    if (rc) return rc;
    struct sim_eb *eb = aligned_alloc(_Alignof(struct sim_eb), sizeof(*eb));
    if (!eb) return FE_ENOMEM;
    memset(eb, 0, sizeof(*eb));
    sim->eb = eb;
    eb->cfg = sim->sc.eb;
    eb->slot_bytes = (uint64_t)eb->cfg.n_frontends * eb->cfg.frag_max_bytes;
    eb->slot_bits = fe_eb_slot_bits(eb->cfg.slots);
    eb->n_events = eb->cfg.events;
    eb->wake_at = FE_SIM_NO_TIME;
    eb->rng = sim->sc.seed ^ 0x45564254ull; /* its own stream: the network's draws unchanged */
    rc = add_pair_flows(sim, eb);
    if (!rc) rc = alloc_state(eb);
    if (rc == FE_ENOMEM) sim_errf(err, err_cap, "out of memory");
    return rc;
}

int sim_eb_start(struct fe_sim *sim)
{
    struct sim_eb *eb = sim->eb;
    if (!eb) return 0;
    uint32_t n_pairs = eb->cfg.n_frontends * eb->cfg.n_builders;
    for (uint32_t i = 0; i < n_pairs; i++) {
        struct sim_flow *f = &sim->flows[eb->first_flow + i];
        f->eb = true;
        f->posted_bytes = f->spec.bytes; /* the flow's own WRs: none (eb_send_fragment posts) */
    }
    eb_first_timers(sim, eb);
    return sim_failed(sim) ? FE_ENOMEM : 0;
}

void sim_eb_destroy(struct fe_sim *sim)
{
    struct sim_eb *eb = sim->eb;
    if (!eb) return;
    const struct fe_sim_eb *e = &eb->cfg;
    if (eb->pairs)
        for (uint32_t i = 0; i < e->n_frontends * e->n_builders; i++) free(eb->pairs[i].q);
    if (eb->fes)
        for (uint32_t s = 0; s < e->n_frontends; s++) fe_eb_fe_table_destroy(eb->fes[s].table);
    if (eb->bs)
        for (uint32_t b = 0; b < e->n_builders; b++) {
            fe_eb_asm_destroy(eb->bs[b].as);
            fe_eb_positions_destroy(eb->bs[b].pos);
            free(eb->bs[b].cq);
            free(eb->bs[b].token_q);
        }
    if (eb->mgr_on) fe_eb_mgr_free(&eb->mgr);
    fe_eb_ledger_destroy(eb->ledger);
    free(eb->pairs);
    free(eb->fes);
    free(eb->bs);
    free(eb->fe_progress);
    free(eb->trigger_ns);
    free(eb->complete_ns);
    free(eb->ev_builder);
    free(eb->heap);
    free(eb);
    sim->eb = NULL;
}

void sim_eb_qp_configs(const struct fe_sim *sim, struct fe_qp_config *req,
                       struct fe_qp_config *resp)
{
    const struct fe_sim_eb *e = &sim->eb->cfg;
    req->sq_depth = e->fe_queue;
    req->cq_depth = e->fe_queue + 16;
    resp->rq_depth = e->slots;
    resp->cq_depth = e->slots + 16;
    resp->min_rnr_timer = e->rnr_timer;
}

static struct eb_pair *pair_of_flow(struct sim_eb *eb, uint32_t flow)
{
    return &eb->pairs[flow - eb->first_flow];
}

static struct eb_pair *pair_at(struct sim_eb *eb, uint32_t fe, uint16_t b)
{
    return &eb->pairs[fe * eb->cfg.n_builders + b];
}

/* ---- receive buffers: one per free slot on each front-end's QP ----
 * A real builder posts a receive per slot it can take; a WRITE with immediate that finds none is
 * answered with an RNR NAK, and the front-end waits and retries: the back-pressure of a full
 * ring. */
static void post_receives(struct fe_sim *sim, struct sim_eb *eb, uint16_t b, uint64_t n)
{
    for (uint32_t s = 0; s < eb->cfg.n_frontends; s++) {
        struct sim_flow *f = &sim->flows[pair_at(eb, s, b)->flow];
        if (!f->resp || !f->resp->qp) continue;
        for (uint64_t k = 0; k < n; k++)
            if (fe_qp_post_recv(f->resp->qp, 0, NULL, 0)) break;
    }
}

void sim_eb_flow_started(struct fe_sim *sim, uint32_t flow)
{
    struct sim_eb *eb = sim->eb;
    struct sim_flow *f = &sim->flows[flow];
    f->resp->rx_hook = true;
    f->resp->eb_rx = true;
    struct fe_qp *qp = f->resp->qp;
    for (uint32_t k = 0; k < eb->cfg.slots; k++)
        if (fe_qp_post_recv(qp, 0, NULL, 0)) break;
}

/* Round-robin: the builder tells its front-ends the new watermark over the control plane (the
 * wire's builders announce it to them), which lets them write the events of the freed slots. */
static void announce_released(struct fe_sim *sim, struct sim_eb *eb, uint16_t b, uint64_t w)
{
    if (eb->cfg.policy != FE_SIM_EB_ROUND_ROBIN) return;
    for (uint32_t s = 0; s < eb->cfg.n_frontends; s++)
        eb_timer_set(sim, eb, sim->now + eb->cfg.ctrl_delay_ns, T_RELEASED,
                     s * eb->cfg.n_builders + b, w, NULL);
}

/* The watermark moved: receives for the slots it freed, the positions it passed forgotten, the
 * front-ends told. */
static void refill_receives(struct fe_sim *sim, struct sim_eb *eb, uint16_t b)
{
    struct eb_builder *bd = &eb->bs[b];
    uint64_t w = fe_eb_asm_released(bd->as);
    if (w <= bd->posted_w) return;
    post_receives(sim, eb, b, w - bd->posted_w);
    bd->posted_w = w;
    if (bd->pos) fe_eb_positions_forget(bd->pos, w);
    announce_released(sim, eb, b, w);
}

/* ---- slot occupancy ---- */

static void track_used(struct fe_sim *sim, struct sim_eb *eb, struct eb_builder *bd)
{
    uint32_t used = 0;
    for (uint32_t j = 0; j < eb->cfg.slots; j++)
        used += fe_eb_asm_slot_state(bd->as, j) != FE_EB_SLOT_FREE;
    if (eb->triggered && sim->now > bd->used_t)
        bd->used_area += (uint64_t)bd->used * (sim->now - bd->used_t);
    bd->used_t = sim->now;
    bd->used = used;
    if (used > bd->max_used) bd->max_used = used;
}

/* ---- accounting ---- */

void eb_final(struct sim_eb *eb, uint64_t now, uint64_t event, enum fe_eb_final state, uint16_t b,
              uint32_t n_missing)
{
    if (fe_eb_ledger_record(eb->ledger, event, state, b, n_missing)) return; /* counted twice */
    eb->n_final++;
    eb->last_final_ns = now;
    if (b >= eb->cfg.n_builders) return;
    struct eb_builder *bd = &eb->bs[b];
    bd->last_final_ns = now;
    if (state == FE_EB_BUILT) bd->built++;
    if (state == FE_EB_INCOMPLETE) bd->incomplete++;
    if (state == FE_EB_LOST) bd->lost++;
}

/* ---- the consumer: declared events in order, each for bytes / rate ---- */

static void consume_next(struct fe_sim *sim, struct sim_eb *eb, uint16_t b)
{
    struct eb_builder *bd = &eb->bs[b];
    if (bd->consuming || !bd->cq_n || bd->left) return;
    const struct fe_eb_event *ev = &bd->cq[bd->cq_head];
    uint64_t ns = (ev->bytes * 8u * 1000000000u + bd->rate_bps - 1) / bd->rate_bps;
    bd->consuming = true;
    eb_timer_set(sim, eb, sim->now + (ns ? ns : 1), T_CONSUMED, b, 0, NULL);
}

static void declared(struct fe_sim *sim, struct sim_eb *eb, uint16_t b,
                     const struct fe_eb_event *ev)
{
    struct eb_builder *bd = &eb->bs[b];
    bd->cq[(bd->cq_head + bd->cq_n++) % eb->cfg.slots] = *ev; /* at most S declared */
    consume_next(sim, eb, b);
}

void eb_consumed(struct fe_sim *sim, struct sim_eb *eb, uint16_t b)
{
    struct eb_builder *bd = &eb->bs[b];
    bd->consuming = false;
    if (bd->left || !bd->cq_n) return;
    struct fe_eb_event ev = bd->cq[bd->cq_head];
    bd->cq_head = (bd->cq_head + 1) % eb->cfg.slots;
    bd->cq_n--;
    fe_eb_asm_release(bd->as, sim->now, ev.slot);
    bool built = ev.state == FE_EB_SLOT_COMPLETE;
    if (built) bd->built_bytes += ev.bytes;
    eb_final(eb, sim->now, ev.event, built ? FE_EB_BUILT : FE_EB_INCOMPLETE, b,
             ev.n_expected - ev.n_arrived);
    eb_after_asm(sim, eb, b);
    consume_next(sim, eb, b);
}

/* ---- assembly ---- */

static void arm_asm(struct fe_sim *sim, struct sim_eb *eb, uint16_t b)
{
    struct eb_builder *bd = &eb->bs[b];
    uint64_t d = fe_eb_asm_next_deadline(bd->as);
    if (d == UINT64_MAX || d >= bd->asm_wake) return;
    bd->asm_wake = d;
    eb_timer_set(sim, eb, d > sim->now ? d : sim->now, T_ASM, b, 0, NULL);
}

void eb_after_asm(struct fe_sim *sim, struct sim_eb *eb, uint16_t b)
{
    refill_receives(sim, eb, b);
    track_used(sim, eb, &eb->bs[b]);
    arm_asm(sim, eb, b);
}

/* A skipped position: no fragment reached it. Its event was busy everywhere (already declared
 * so by the front-ends) or every fragment of it was lost on the way: incomplete, all missing. */
static void skipped(struct fe_sim *sim, struct sim_eb *eb, uint16_t b, uint64_t seq)
{
    uint64_t event;
    struct eb_builder *bd = &eb->bs[b];
    if (bd->pos) {
        if (fe_eb_positions_event(bd->pos, seq, &event)) return;
    } else {
        event = b + seq * eb->cfg.n_builders;
    }
    if (event >= eb->n_events || fe_eb_ledger_state(eb->ledger, event) == FE_EB_BUSY) return;
    eb_final(eb, sim->now, event, FE_EB_INCOMPLETE, b, eb->cfg.n_frontends);
}

void eb_expire(struct fe_sim *sim, struct sim_eb *eb, uint16_t b)
{
    struct eb_builder *bd = &eb->bs[b];
    if (bd->asm_wake <= sim->now) bd->asm_wake = FE_SIM_NO_TIME;
    if (bd->left) return;
    struct fe_eb_event ev;
    while (fe_eb_asm_expire(bd->as, sim->now, &ev) == 1) {
        if (ev.state == FE_EB_SLOT_FREE)
            skipped(sim, eb, b, ev.seq);
        else
            declared(sim, eb, b, &ev);
    }
    eb_after_asm(sim, eb, b);
}

static void fragment_in(struct fe_sim *sim, struct sim_eb *eb, uint16_t b, uint32_t fe,
                        const struct fe_cqe *c)
{
    struct eb_builder *bd = &eb->bs[b];
    struct fe_eb_event ev;
    int v = fe_eb_asm_fragment(bd->as, sim->now, fe, c->imm, c->byte_len, &ev);
    if (v == FE_EB_F_COMPLETE) {
        if (ev.event < eb->n_events) eb->complete_ns[ev.event] = sim->now;
        declared(sim, eb, b, &ev);
    } else if (v != FE_EB_F_OK) {
        bd->refused++;
    }
}

void sim_eb_rx(struct fe_sim *sim, uint32_t flow)
{
    struct sim_eb *eb = sim->eb;
    struct eb_pair *p = pair_of_flow(eb, flow);
    struct sim_flow *f = &sim->flows[flow];
    if (!f->resp || !f->resp->qp || eb->bs[p->builder].left) return;
    struct fe_cqe cqe[16];
    int n, got = 0;
    do {
        n = fe_qp_poll_cq(f->resp->qp, cqe, 16);
        for (int i = 0; i < n; i++)
            if (cqe[i].status == FE_WC_SUCCESS && cqe[i].opcode == FE_WC_RECV_RDMA_WITH_IMM) {
                fragment_in(sim, eb, p->builder, p->fe, &cqe[i]);
                got++;
            }
    } while (n == 16);
    if (got) eb_after_asm(sim, eb, p->builder);
}

/* ---- front-ends ---- */

static int queue_push(struct eb_pair *p, const struct eb_frag *fr)
{
    if (p->q_n == p->q_cap) {
        uint32_t cap = p->q_cap ? p->q_cap * 2 : 16;
        struct eb_frag *q = malloc(cap * sizeof(*q));
        if (!q) return FE_ENOMEM;
        for (uint32_t i = 0; i < p->q_n; i++) q[i] = p->q[(p->q_head + i) % p->q_cap];
        free(p->q);
        p->q = q;
        p->q_head = 0;
        p->q_cap = cap;
    }
    p->q[(p->q_head + p->q_n++) % p->q_cap] = *fr;
    return 0;
}

/* Posts the waiting fragments the send queue has room for; the host then sends them. */
static void post_waiting(struct fe_sim *sim, struct sim_eb *eb, struct eb_pair *p)
{
    struct sim_flow *f = &sim->flows[p->flow];
    struct sim_qp *sq = f->req;
    if (!sq || !sq->qp || (eb->cfg.tokens && !p->token)) return;
    bool posted = false, rr = eb->cfg.policy == FE_SIM_EB_ROUND_ROBIN;
    while (p->q_n && fe_qp_sq_room(sq->qp)) {
        const struct eb_frag *fr = &p->q[p->q_head];
        if (rr && !fe_eb_rr_may_write(fr->event, eb->cfg.n_builders, p->released, eb->cfg.slots))
            break; /* its slot still holds an event the builder has not released */
        struct fe_wr wr = {.op = FE_WR_WRITE_IMM,
                           .cookie = fr->event,
                           .len = fr->len_bytes,
                           .remote_offset = fe_eb_frag_offset(fr->slot, eb->slot_bytes, p->fe,
                                                              eb->cfg.frag_max_bytes),
                           .imm = fe_eb_imm_make(eb->slot_bits, fr->slot, fr->event)};
        if (fe_qp_post_send(sq->qp, &wr)) break;
        p->q_head = (p->q_head + 1) % p->q_cap;
        p->q_n--;
        p->posted++;
        posted = true;
    }
    if (!posted) return;
    struct sim_host *h = sq->host;
    sim_host_schedule_qp(sim, h, sq);
    sim_host_arm_wake(sim, h);
    sim_host_kick(sim, h);
}

void eb_send_fragment(struct fe_sim *sim, struct sim_eb *eb, uint32_t fe, uint16_t builder,
                      const struct eb_frag *fr)
{
    struct eb_pair *p = pair_at(eb, fe, builder);
    if (p->dead) return;
    if (queue_push(p, fr)) {
        sim_fail(sim);
        return;
    }
    if (eb->cfg.tokens && !p->token && !p->token_asked) {
        p->token_asked = true;
        eb_timer_set(sim, eb, sim->now + eb->cfg.ctrl_delay_ns, T_TOKEN_ASK,
                     (uint32_t)(p - eb->pairs), 0, NULL);
    }
    post_waiting(sim, eb, p);
}

void eb_released(struct fe_sim *sim, struct sim_eb *eb, uint32_t pair, uint64_t released)
{
    struct eb_pair *p = &eb->pairs[pair];
    if (released <= p->released || p->dead) return;
    p->released = released;
    post_waiting(sim, eb, p);
}

/* ---- the token limit: a builder's token manager lets cfg.tokens front-ends send at once ----
 * A pair asks when it has fragments waiting and no token, and gives the token back when
 * everything it posted has completed and nothing waits. Messages on the control plane. */

static void token_grant(struct fe_sim *sim, struct sim_eb *eb, uint32_t pair)
{
    eb_timer_set(sim, eb, sim->now + eb->cfg.ctrl_delay_ns, T_TOKEN_GIVE, pair, 0, NULL);
}

void eb_token_ask(struct fe_sim *sim, struct sim_eb *eb, uint32_t pair)
{
    struct eb_builder *bd = &eb->bs[eb->pairs[pair].builder];
    if (bd->left) return; /* a builder that left grants nothing */
    if (bd->tokens_free) {
        bd->tokens_free--;
        token_grant(sim, eb, pair);
    } else {
        bd->token_q[(bd->token_head + bd->token_n++) % eb->cfg.n_frontends] = pair;
    }
}

void eb_token_back(struct fe_sim *sim, struct sim_eb *eb, uint32_t pair)
{
    struct eb_builder *bd = &eb->bs[eb->pairs[pair].builder];
    if (!bd->token_n) {
        bd->tokens_free++;
        return;
    }
    uint32_t next = bd->token_q[bd->token_head];
    bd->token_head = (bd->token_head + 1) % eb->cfg.n_frontends;
    bd->token_n--;
    token_grant(sim, eb, next);
}

/* Gives the token back once the pair is idle. */
static void token_maybe_back(struct fe_sim *sim, struct sim_eb *eb, struct eb_pair *p)
{
    if (!p->token || p->q_n || p->completed < p->posted) return;
    p->token = false;
    eb_timer_set(sim, eb, sim->now + eb->cfg.ctrl_delay_ns, T_TOKEN_BACK, (uint32_t)(p - eb->pairs),
                 0, NULL);
}

void eb_token_give(struct fe_sim *sim, struct sim_eb *eb, uint32_t pair)
{
    struct eb_pair *p = &eb->pairs[pair];
    p->token_asked = false;
    p->token = true;
    post_waiting(sim, eb, p);
    token_maybe_back(sim, eb, p);
}

/* The requester's QP failed (its builder left and never answered): it is released, and what
 * waits for it dropped. */
static void pair_failed(struct fe_sim *sim, struct eb_pair *p, struct sim_flow *f)
{
    p->dead = true;
    p->q_n = 0;
    f->failed = true;
    sim_flow_end(sim, f);
}

bool sim_eb_req_collect(struct fe_sim *sim, struct sim_qp *sq)
{
    struct sim_eb *eb = sim->eb;
    struct sim_flow *f = &sim->flows[sq->flow];
    struct eb_pair *p = pair_of_flow(eb, sq->flow);
    sq->completed_seen = fe_qp_counters(sq->qp)->tx_msgs_completed;
    p->completed = sq->completed_seen;
    bool ok = sim_flow_drain_cq(f, sq);
    if (!ok || fe_qp_state(sq->qp) == FE_QPS_ERROR) {
        pair_failed(sim, p, f);
        return false;
    }
    post_waiting(sim, eb, p);
    if (eb->cfg.tokens) token_maybe_back(sim, eb, p);
    return true;
}

/* ---- a builder leaves ---- */

/* Its QPs vanish (what arrives for them is dropped, as at a host that died), its consumer stops,
 * and every event assigned to it without a final state is lost. */
void eb_leave(struct fe_sim *sim, struct sim_eb *eb, uint16_t b)
{
    struct eb_builder *bd = &eb->bs[b];
    if (bd->left) return;
    bd->left = true;
    for (uint32_t s = 0; s < eb->cfg.n_frontends; s++) {
        struct sim_flow *f = &sim->flows[pair_at(eb, s, b)->flow];
        if (!f->resp) continue;
        sim_flow_sync_counters(f);
        if (f->resp->qp) eb->rnr_naks += fe_qp_counters(f->resp->qp)->tx_rnr_naks;
        sim_host_release_qp(f->resp->host, f->resp);
        f->resp = NULL;
    }
    track_used(sim, eb, bd);
    bd->used = 0; /* its memory is gone with it */
    for (uint64_t e = 0; e < eb->triggered; e++)
        if (eb->ev_builder[e] == b && fe_eb_ledger_state(eb->ledger, e) == FE_EB_NONE)
            eb_final(eb, sim->now, e, FE_EB_LOST, b, 0);
}
