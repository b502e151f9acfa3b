/* The simulator object: builds a scenario into nodes, ports and flows, runs the event loop, and
 * answers the statistics calls. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/eb.h"
#include "sim/flow.h"
#include "sim/grid.h"
#include "sim/sim_internal.h"
#include "sim/ns3_frame.h"
#include "transport/qp_sim.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void sim_rng_seed_ports(struct fe_sim *sim, uint64_t seed)
{
    /* splitmix64 of the seed expands into the shared state; of that and the port's index,
     * into each port's */
    uint64_t s0 = seed;
    for (int k = 0; k < 4; k++) sim->rng[k] = splitmix64(&s0);
    s0 = seed;
    uint64_t base = splitmix64(&s0);
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        uint64_t x = base ^ ((uint64_t)i * 0xD1B54A32D192ED03ull);
        for (int k = 0; k < 4; k++) sim->ports[i].rng[k] = splitmix64(&x);
    }
}

static int copy_scenario(struct fe_sim_scenario *dst, const struct fe_sim_scenario *src)
{
    *dst = *src;
    dst->nodes = NULL;
    dst->links = NULL;
    dst->flows = NULL;
    dst->nodes = malloc((src->n_nodes ? src->n_nodes : 1) * sizeof(*dst->nodes));
    dst->links = malloc((src->n_links ? src->n_links : 1) * sizeof(*dst->links));
    dst->flows = malloc((src->n_flows ? src->n_flows : 1) * sizeof(*dst->flows));
    if (!dst->nodes || !dst->links || !dst->flows) return FE_ENOMEM;
    if (src->n_nodes) memcpy(dst->nodes, src->nodes, src->n_nodes * sizeof(*dst->nodes));
    if (src->n_links) memcpy(dst->links, src->links, src->n_links * sizeof(*dst->links));
    if (src->n_flows) memcpy(dst->flows, src->flows, src->n_flows * sizeof(*dst->flows));
    dst->cap_nodes = src->n_nodes;
    dst->cap_links = src->n_links;
    dst->cap_flows = src->n_flows;
    return 0;
}

#define SIM_WHEEL_PORTS 256

static const struct sim_flow *g_sort_flows; /* qsort context (creation is single-threaded) */
static int cmp_start(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t sx = g_sort_flows[x].spec.start_ns, sy = g_sort_flows[y].spec.start_ns;
    if (sx != sy) return sx < sy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Frame sizes: the wire overheads, the INT and timestamp headers the algorithms need, the
 * per-opcode table, the buffer settings sized from the largest frame. */
static void derive_frames(struct fe_sim *sim)
{
    struct fe_sim_scenario *sc = &sim->sc;
    sim->ifg = sc->host.count_ifg ? IFG_BYTES : 0;
    {
        struct fe_path path;
        memset(&path, 0, sizeof(path));
        path.ipver = 4;
        sim->wire_extra = (uint32_t)fe_path_overhead_bytes(&path);
    }
    sim->int_enable = sc->sw.int_enable;
    bool timestamp = false;
    for (uint32_t i = 0; i < sc->n_cc; i++) {
        unsigned caps = sc->cc[i].algo ? sc->cc[i].algo->caps : 0;
        if (caps & FE_CC_CAP_INT) sim->int_enable = true;
        if (caps & FE_CC_CAP_TIMESTAMP) timestamp = true;
    }
    /* frame sizes: BTH + RETH + ImmDt + ICRC (36) around the payload, plus Ethernet/IP/UDP/FCS;
     * or HPCC ns-3's: PPP (14 there)/IPv4/UDP/SeqTs (48) plus its INT header (HPCC: 5 hops of
     * 8 bytes and a hop count; TIMELY's: a timestamp) on data and ACKs alike */
    sim->ns3_frames = sc->host.frames == FE_SIM_FRAMES_HPCC_NS3;
    sim->ns3_int_bytes = sim->int_enable ? 42u : timestamp ? 8u : 0u;
    sim->pfc_frame_bytes = sim->ns3_frames ? 43u : PFC_FRAME_BYTES; /* ns-3: PPP + IPv4 + 9 */
    sim->max_frame_bytes =
        sim->ns3_frames ? sc->host.mtu_bytes + SIM_NS3_DATA_HDR_BYTES + sim->ns3_int_bytes
                        : sc->host.mtu_bytes + (uint32_t)fe_pkt_hdr_len(FE_OP_WRITE_ONLY_IMM) +
                              FE_ICRC_LEN + sim->wire_extra;
    for (int op = 0; op < 256; op++) {
        unsigned f = fe_opcode_flags((uint8_t)op);
        size_t fixed = fe_pkt_hdr_len((uint8_t)op) + FE_ICRC_LEN + sim->wire_extra;
        if (f & FE_OPF_CNP) fixed += FE_CNP_PAD_LEN;
        sim->op_frame[op].fixed_bytes = (uint8_t)fixed; /* <= 110 */
        sim->op_frame[op].payload = !(f & FE_OPF_CNP) && (f & FE_OPF_PAYLOAD);
    }
    uint32_t max_frame = sim->max_frame_bytes;
    if (sc->sw.reserve_bytes == FE_SIM_AUTO) sc->sw.reserve_bytes = max_frame;
    if (sc->sw.xon_offset_bytes == FE_SIM_AUTO) sc->sw.xon_offset_bytes = 2u * max_frame;
}

/* Copies of the scenario's settings next to the hot fields, and the run's starting state. */
static void copy_hot_settings(struct fe_sim *sim)
{
    struct fe_sim_scenario *sc = &sim->sc;
    sim->dt_alpha_q16 = (uint64_t)(sc->sw.dt_alpha * 65536.0 + 0.5);
    /* the per-frame settings, next to the other hot fields */
    sim->reserve_bytes = sc->sw.reserve_bytes;
    sim->lossless_prios = sc->sw.pfc ? sc->sw.lossless_mask : 0;
    sim->min_frame_bytes = sc->host.min_frame_bytes;
    sim->data_pcp = sc->host.data_pcp;
    sim->ack_pcp = sc->host.ack_pcp;
    /* An ACK per data packet where the algorithm's own model has one (FE_CC_CAP_ACK_EVERY_PKT:
     * HPCC reads INT from every ACK, Homa's receiver answers every scheduled data packet with a
     * GRANT). Every other algorithm gets the hosts' coalescing: the requester asks for an ACK
     * before its window or credit blocks it. */
    for (uint32_t i = 0; i < sc->n_cc; i++) {
        const struct fe_cc_algo *a = sc->cc[i].algo;
        sim->cc_acks_every_pkt[i] = a && (a->caps & FE_CC_CAP_ACK_EVERY_PKT);
    }
    sim->stop_ns = sc->stop_ns;
    sim->ckpt_next = FE_SIM_NO_TIME;
}

/* Ranks reserved for arrivals in the event queue (see docs/sim.md, "Order of events"). */
static uint64_t sim_arrival_ranks(const struct fe_sim *sim)
{
    return sim->ns3_frames ? 0 : sim->n_ports_total;
}

/* The event queue and the network. */
static int build_network(struct fe_sim *sim, char *err, size_t err_cap)
{
    /* the calendar queue: push and pop inline, constant cost (fewer instructions than the
     * 4-ary heap's, feroce bench sim), one event per busy wire */
    int rc = fe_evq_init(&sim->q, FE_SIM_EVQ_CALENDAR);
    if (rc) return rc;
    fe_evq_set_keys_fn(&sim->q, sim_link_wire_keys, sim);
    sim->wire_heads_only = true;
    rc = sim_topology_build(sim, err, err_cap);
    if (rc) return rc;
    /* arrivals are ordered by the receiving port's index (link.h sim_arrival_key); with ns-3
     * timing, FIFO with every other event, as ns-3's scheduler orders them */
    if (fe_evq_set_ranks(&sim->q, sim_arrival_ranks(sim))) {
        sim_errf(err, err_cap, "%u ports: at most %llu", sim->n_ports_total,
                 (unsigned long long)FE_EVQ_RANKS_MAX);
        return FE_EINVAL;
    }
    sim_rng_seed_ports(sim, sim->sc.seed);
    sim_link_set_mode(sim);
    /* A large fabric has many events at the same nanosecond: from SIM_WHEEL_PORTS ports the
     * wheel, with one event per frame (each file at its slot's tail, no key), costs fewer
     * instructions than the calendar or the heap. The order of events,
     * hence every result, is the same on all three. */
    if (sim->n_ports_total >= SIM_WHEEL_PORTS) {
        rc = fe_sim_set_queue(sim, FE_SIM_EVQ_WHEEL);
        if (rc) return rc;
        sim->lookahead = true; /* see lookahead.c */
    }
    sim_set_lazy_txdone(sim);
    return 0;
}

/* The flows in start order, with their paths (and the HPCC window from them). */
static int init_flows(struct fe_sim *sim, char *err, size_t err_cap)
{
    struct fe_sim_scenario *sc = &sim->sc;
    sim->n_flows = sc->n_flows;
    size_t flows_size = (sim->n_flows ? sim->n_flows : 1) * sizeof(*sim->flows);
    sim->flows = aligned_alloc(_Alignof(struct sim_flow), flows_size);
    if (sim->flows) memset(sim->flows, 0, flows_size);
    sim->flow_order = malloc((sim->n_flows ? sim->n_flows : 1) * sizeof(uint32_t));
    sim->ended = malloc((sim->n_flows ? sim->n_flows : 1) * sizeof(uint32_t));
    if (!sim->flows || !sim->flow_order || !sim->ended) return FE_ENOMEM;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        sim->flows[i].spec = sc->flows[i];
        if (sim->flows[i].spec.prio == 0xff) sim->flows[i].spec.prio = sc->host.data_pcp;
        sim->flows[i].finish_ns = FE_SIM_NO_TIME;
        sim->flow_order[i] = i;
    }
    g_sort_flows = sim->flows;
    qsort(sim->flow_order, sim->n_flows, sizeof(uint32_t), cmp_start);
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        if (sim_flow_path_info(sim, &sim->flows[i])) {
            sim_errf(err, err_cap, "flow %u: no path from its source to its destination", i);
            return FE_ENOMEM;
        }
    }
    if (sc->host.window_bdp) {
        /* HPCC's HAS_WIN: one window, the largest bandwidth-delay product of any flow's path */
        uint64_t bdp = 0;
        for (uint32_t i = 0; i < sim->n_flows; i++) {
            uint64_t b = (uint64_t)((double)sim->flows[i].path_rate_bps *
                                    (double)sim->flows[i].base_rtt_ns / 8e9);
            if (b > bdp) bdp = b;
        }
        sim->window_bdp_bytes = bdp > sc->host.mtu_bytes ? bdp : sc->host.mtu_bytes;
    }
    return 0;
}

/* The grid's period: the shortest propagation delay of any link (a frame sent in one window
 * arrives in a later one), at least 1 ns. */
static uint64_t grid_period_ns(const struct fe_sim *sim)
{
    uint64_t g = UINT64_MAX;
    for (uint32_t i = 0; i < sim->n_ports_total; i++)
        if (sim->ports[i].delay_ns < g) g = sim->ports[i].delay_ns;
    return g == UINT64_MAX || g == 0 ? 1 : g;
}

uint64_t sim_grid_ns(const struct fe_sim *sim)
{
    return sim->grid_ns;
}

/* The contention window and the global actions' state. */
static void schedule_start(struct fe_sim *sim)
{
    struct fe_sim_scenario *sc = &sim->sc;
    /* contention window: from the last start unless set */
    uint64_t last_start = 0;
    for (uint32_t i = 0; i < sc->n_flows; i++)
        if (sc->flows[i].start_ns > last_start) last_start = sc->flows[i].start_ns;
    sim->window_start = sc->window_start_ns != FE_SIM_NO_TIME ? sc->window_start_ns : last_start;
    sim->window_end = sc->window_end_ns;
    sim->window_auto_end = sc->window_end_ns == FE_SIM_NO_TIME;
    sim->grid_ns = grid_period_ns(sim);
    sim->grid_due = FE_SIM_NO_TIME;
    sim->ran_to_ns = 0;
}

struct fe_sim *fe_sim_create(const struct fe_sim_scenario *scin, int *err_out, char *err,
                             size_t err_cap)
{
    int rc = FE_ENOMEM;
    struct fe_sim *sim = aligned_alloc(_Alignof(struct fe_sim), sizeof(*sim));
    if (!sim) goto fail_nosim;
    memset(sim, 0, sizeof(*sim));
    if (copy_scenario(&sim->sc, scin)) {
        sim_errf(err, err_cap, "out of memory");
        goto fail;
    }
    rc = sim_validate(sim, err, err_cap);
    if (rc) goto fail;
    derive_frames(sim);
    copy_hot_settings(sim);
    rc = build_network(sim, err, err_cap);
    if (rc) goto fail;
    rc = FE_ENOMEM;
    for (uint32_t h = 0; h < sim->n_hosts; h++)
        if (sim_host_init(sim, &sim->hosts[h])) goto fail;
    rc = sim_eb_create(sim, err, err_cap);
    if (rc) goto fail;
    rc = init_flows(sim, err, err_cap);
    if (rc) goto fail;
    schedule_start(sim);
    rc = sim_eb_start(sim);
    if (rc) goto fail;
    if (sim_failed(sim)) goto fail;
    if (err_out) *err_out = 0;
    return sim;
fail:
    if (rc == FE_ENOMEM && err && !*err) sim_errf(err, err_cap, "out of memory");
    fe_sim_destroy(sim);
fail_nosim:
    if (err_out) *err_out = rc;
    return NULL;
}

void fe_sim_destroy(struct fe_sim *sim)
{
    if (!sim) return;
    sim_par_destroy(sim);
    if (sim->hosts)
        for (uint32_t h = 0; h < sim->n_hosts; h++) sim_host_free(&sim->hosts[h]);
    sim_eb_destroy(sim);
    free(sim->flows);
    free(sim->flow_order);
    free(sim->ended);
    free(sim->phase_t);
    free(sim->phase_rx);
    free(sim->phase_active);
    free(sim->phase_mid_t);
    free(sim->phase_mid_rx);
    free(sim->ckpt_t);
    free(sim->ckpt_rx);
    sim_topology_free(sim);
    sim_pool_destroy(sim);
    fe_evq_free(&sim->q);
    fe_sim_scenario_free(&sim->sc);
    free(sim);
}

int fe_sim_set_lookahead(struct fe_sim *sim, bool on)
{
    if (sim->la_n) return FE_ESTATE;
    sim->lookahead = on;
    sim_set_lazy_txdone(sim);
    return 0;
}

int fe_sim_set_queue(struct fe_sim *sim, enum fe_sim_queue_kind kind)
{
    if (sim->q.kind == kind) return 0;
    for (uint32_t i = 0; i < sim->n_ports_total; i++)
        if (sim->ports[i].tx_pkts)
            return FE_ESTATE; /* frames on the wires hold this queue's keys */
    struct fe_evq nq;
    int rc = fe_evq_init(&nq, kind);
    if (rc) return rc;
    fe_evq_set_keys_fn(&nq, sim_link_wire_keys, sim);
    rc = fe_evq_set_ranks(&nq, sim->q.fifo_base); /* without them arrivals lose their order */
    if (rc) {
        fe_evq_free(&nq);
        return rc;
    }
    nq.now = sim->q.now;
    uint64_t t, d;
    while (fe_evq_pop(&sim->q, &t, &d)) {
        rc = fe_evq_push(&nq, t, d);
        if (rc) {
            fe_evq_free(&nq);
            return rc;
        }
    }
    fe_evq_free(&sim->q);
    sim->q = nq;
    sim->wire_heads_only = kind != FE_SIM_EVQ_WHEEL;
    sim_link_set_mode(sim);
    sim_set_lazy_txdone(sim);
    return 0;
}

/* The flows whose start is now: started, in start order, then a phase mark. */
static void start_flows(struct fe_sim *sim)
{
    bool any = false;
    while (sim->next_flow < sim->n_flows &&
           sim->flows[sim->flow_order[sim->next_flow]].spec.start_ns <= sim->now) {
        uint32_t i = sim->flow_order[sim->next_flow++];
        if (sim_flow_start(sim, i)) sim_fail(sim);
        any = true;
    }
    if (any) sim_phase_mark(sim);
}

/* The time the set window edge (open, or a set close) is due, FE_SIM_NO_TIME when none is. */
static uint64_t window_next_ns(const struct fe_sim *sim)
{
    if (!sim->n_flows || sim->window_closed) return FE_SIM_NO_TIME;
    if (!sim->window_opened) return sim->window_start;
    if (!sim->window_auto_end && sim->window_end > sim->window_start) return sim->window_end;
    return FE_SIM_NO_TIME;
}

static inline uint64_t min_ns(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

uint64_t sim_next_action_ns(const struct fe_sim *sim)
{
    uint64_t t = min_ns(sim->grid_due, min_ns(sim->ckpt_next, window_next_ns(sim)));
    if (sim->next_flow < sim->n_flows)
        t = min_ns(t, sim->flows[sim->flow_order[sim->next_flow]].spec.start_ns);
    return t;
}

void sim_do_actions(struct fe_sim *sim, uint64_t t)
{
    if (t > sim->now) sim->now = t;
    if (sim->grid_due <= t) {
        sim->grid_due = FE_SIM_NO_TIME;
        sim_flows_ended(sim);
    }
    if (sim->ckpt_next <= t) sim_phase_checkpoint(sim);
    start_flows(sim);
    if (window_next_ns(sim) <= t) {
        if (!sim->window_opened)
            sim_window_open(sim);
        else
            sim_window_close(sim);
    }
}

static inline __attribute__((always_inline)) void dispatch(struct fe_sim *sim, uint64_t data)
{
    void *obj = (void *)(uintptr_t)(data & ~EV_KIND_MASK);
    switch ((enum ev_kind)(data & EV_KIND_MASK)) {
    case EV_ARRIVE: {
        struct sim_port *to = obj;
        sim_switch_receive(sim, to, sim_link_arrive(sim, to, data));
        break;
    }
    case EV_ARRIVE_HOST: {
        struct sim_port *to = obj;
        sim_host_receive(sim, to->host, sim_link_arrive(sim, to, data));
        break;
    }
    case EV_TX_DONE:
        sim_port_tx_done(sim, obj);
        break;
    case EV_PAUSE_END:
        sim_pfc_pause_end(sim, obj);
        break;
    case EV_PFC_REFRESH:
        sim_pfc_refresh(sim, obj);
        break;
    case EV_HOST_WAKE:
        sim_host_wake(sim, obj);
        break;
    case EV_EB:
        sim_eb_event(sim, obj);
        break;
    }
}

/* The next event and its key in the queue's last_key (0 when none is left up to limit), for
 * ns-3 timing's transmit-completes (switch.c: ns3_lazy_txdone). Out of line for the same reason
 * as next_lookahead, so that the usual pop does not store the key. */
static __attribute__((noinline)) uint64_t next_tracked(struct fe_sim *sim, uint64_t limit)
{
    uint64_t t, data;
    if (!fe_evq_pop_until_track(&sim->q, limit, &t, &data, true)) return 0;
    sim->now = t;
    return data;
}

#define RUN_REPLAN 2 /* run_to stopped after an event that ended a flow */

/* Runs the events up to limit (inclusive): 0 (none left up to it), RUN_REPLAN (a flow ended: a
 * grid boundary is now due, maybe before limit), or < 0. Out of line: inlined into fe_sim_run's
 * loop it costs more instructions. */
static __attribute__((noinline)) int run_to(struct fe_sim *sim, uint64_t limit)
{
    uint64_t t, data;
    bool lookahead = sim->lookahead, outline = lookahead || sim->ns3_lazy_txdone;
    for (;;) {
        if (outline) {
            if (!(data = lookahead ? sim_next_lookahead(sim, limit) : next_tracked(sim, limit)))
                break;
        } else {
            if (!fe_evq_pop_until(&sim->q, limit, &t, &data)) break;
            sim->now = t;
        }
        sim->ev_kind_count[data & EV_KIND_MASK]++; /* their sum is st.events (fe_sim_stats) */
        dispatch(sim, data);
        if (__builtin_expect(sim->halt, 0)) {
            if (sim_failed(sim)) return FE_ENOMEM;
            sim->halt &= (uint8_t)~SIM_HALT_GRID;
            return RUN_REPLAN;
        }
    }
    if (fe_evq_failed(&sim->q)) {
        sim_fail(sim);
        return FE_ENOMEM;
    }
    return 0;
}

int sim_run_events(struct fe_sim *sim, uint64_t limit)
{
    return run_to(sim, limit);
}

int sim_run_before(struct fe_sim *sim, uint64_t end_ns)
{
    while (end_ns > sim->ran_to_ns) {
        int rc = run_to(sim, end_ns - 1);
        if (rc < 0) return rc;
        if (rc == 0) {
            sim->ran_to_ns = end_ns;
            if (end_ns - 1 > sim->now) sim->now = end_ns - 1;
        }
    }
    return 0;
}

/* Whether anything can still happen: an event, a flow to start or to account, a set window
 * edge (checkpoints alone do not keep the run going). */
static bool work_left(struct fe_sim *sim)
{
    return fe_evq_size(&sim->q) || sim->next_flow < sim->n_flows ||
           sim->grid_due != FE_SIM_NO_TIME || window_next_ns(sim) != FE_SIM_NO_TIME;
}

/* The run ends now: the window closes if still open. */
static int finish(struct fe_sim *sim)
{
    sim->finished = true;
    if (!sim->window_closed) sim_window_close(sim);
    return 1;
}

/* Every event up to limit and the global actions due up to it, each at its time: the actions
 * of time T after every event before T, before any at T (grid.h). */
int fe_sim_run(struct fe_sim *sim, uint64_t until_ns)
{
    if (sim->finished) return 1;
    if (sim->par) return sim_par_run(sim, until_ns);
    if (sim_failed(sim)) return FE_ENOMEM;
    uint64_t limit = until_ns < sim->stop_ns ? until_ns : sim->stop_ns;
    for (;;) {
        uint64_t next = sim_next_action_ns(sim);
        if (next != FE_SIM_NO_TIME && next <= sim->ran_to_ns) {
            sim_do_actions(sim, next);
            if (sim_failed(sim)) {
                sim->finished = true;
                return FE_ENOMEM;
            }
            if (sim->halt & SIM_HALT_ALL_DONE) return finish(sim);
            continue;
        }
        if (!work_left(sim)) return finish(sim);
        uint64_t to = next != FE_SIM_NO_TIME && next - 1 < limit ? next - 1 : limit;
        int rc = run_to(sim, to);
        if (rc < 0) {
            sim->finished = true;
            return rc;
        }
        if (rc == RUN_REPLAN) continue;
        if (to == FE_SIM_NO_TIME) continue; /* the queue is empty: no action is left either */
        sim->ran_to_ns = to + 1;
        if (to > sim->now) sim->now = to;
        if (to == limit) return limit == sim->stop_ns ? finish(sim) : 0;
    }
}

void fe_sim_set_pfc_log(struct fe_sim *sim, fe_sim_pfc_cb cb, void *user)
{
    sim->pfc_cb = cb;
    sim->pfc_user = user;
}

/* ---- test injection ---- */
struct sim_pkt *sim_test_inject(struct fe_sim *sim, uint32_t src_node, uint32_t dst_node,
                                uint8_t prio, uint32_t frame_bytes, bool ect, uint32_t flow_hash,
                                uint64_t tag)
{
    if (src_node >= sim->n_nodes || !sim->nodes[src_node].host || dst_node >= sim->n_nodes)
        return NULL;
    struct sim_pkt *pkt = sim_pkt_alloc(sim);
    if (!pkt) return NULL;
    memset(&pkt->pkt, 0, sizeof(pkt->pkt));
    pkt->kind = PKT_TEST;
    pkt->dst = dst_node;
    pkt->prio = prio & 7;
    pkt->frame_bytes = frame_bytes;
    pkt->hash = flow_hash;
    pkt->tag = tag;
    pkt->pkt.ecn = ect ? FE_ECN_ECT0 : FE_ECN_NOT_ECT;
    pkt->pkt.payload_len = frame_bytes;
    pkt->owner = NULL;
    struct sim_host *h = sim->nodes[src_node].host;
    sim_port_enqueue(sim, &h->node->ports[0], pkt);
    sim_host_kick(sim, h);
    return pkt;
}
