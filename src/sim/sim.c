/* The simulator object: builds a scenario into nodes, ports and flows, runs the event loop, and
 * answers the statistics calls. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"
#include "transport/qp_sim.h"

void sim_errf(char *err, size_t cap, const char *fmt, ...)
{
    if (!err || !cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

void sim_rng_seed(struct fe_sim *sim, uint64_t seed)
{
    /* splitmix64 expands the seed into the generator state */
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        sim->rng[i] = z ^ (z >> 31);
    }
}

const char *fe_sim_drop_name(int reason)
{
    static const char *const names[FE_SIM_DROP_MAX] = {
        "buffer", "headroom", "link", "no-route", "no-qp", "qp",
    };
    return reason >= 0 && reason < FE_SIM_DROP_MAX ? names[reason] : "unknown";
}

double fe_sim_jain(const double *x, size_t n)
{
    if (!n) return 1.0;
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) {
        s += x[i];
        s2 += x[i] * x[i];
    }
    return s2 > 0 ? s * s / ((double)n * s2) : 1.0;
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

static int validate(struct fe_sim *sim, char *err, size_t cap)
{
    struct fe_sim_scenario *sc = &sim->sc;
    const struct fe_sim_host_cfg *h = &sc->host;
    if (h->mtu_bytes != 256 && h->mtu_bytes != 512 && h->mtu_bytes != 1024 &&
        h->mtu_bytes != 2048 && h->mtu_bytes != 4096) {
        sim_errf(err, cap, "MTU %u: must be 256, 512, 1024, 2048 or 4096", h->mtu_bytes);
        return FE_EINVAL;
    }
    if (h->data_pcp > 7 || h->ack_pcp > 7 || h->cnp_pcp > 7) {
        sim_errf(err, cap, "priorities must be 0..7");
        return FE_EINVAL;
    }
    if (!(sc->sw.dt_alpha > 0 && sc->sw.dt_alpha <= 64)) {
        sim_errf(err, cap, "dynamic threshold alpha %g out of range (0, 64]", sc->sw.dt_alpha);
        return FE_EINVAL;
    }
    if (sc->sw.pfc && sc->sw.pfc_mode == FE_SIM_PFC_QUANTA && !sc->sw.pause_quanta) {
        sim_errf(err, cap, "pause quanta must be > 0");
        return FE_EINVAL;
    }
    for (int i = 0; i < sc->sw.n_red; i++) {
        const struct fe_sim_red *r = &sc->sw.red[i];
        if (r->kmax_bytes < r->kmin_bytes || r->pmax_ppm > 1000000) {
            sim_errf(err, cap, "RED entry %d: need kmin <= kmax and pmax <= 1", i);
            return FE_EINVAL;
        }
    }
    if (sc->sw.ecn && sc->sw.n_red == 0) {
        sim_errf(err, cap, "ECN enabled but no RED thresholds (kmin/kmax/pmax) given");
        return FE_EINVAL;
    }
    for (uint32_t i = 0; i < sc->n_flows; i++) {
        const struct fe_sim_flow *f = &sc->flows[i];
        if (f->src >= sc->n_nodes || f->dst >= sc->n_nodes || sc->nodes[f->src].is_switch ||
            sc->nodes[f->dst].is_switch || f->src == f->dst) {
            sim_errf(err, cap, "flow %u: source and destination must be two different hosts", i);
            return FE_EINVAL;
        }
        if (f->cc >= sc->n_cc) {
            sim_errf(err, cap, "flow %u: no congestion-control profile %u", i, f->cc);
            return FE_EINVAL;
        }
        if (f->prio != 0xff && f->prio > 7) {
            sim_errf(err, cap, "flow %u: priority %u out of 0..7", i, f->prio);
            return FE_EINVAL;
        }
        if (!f->bytes) {
            sim_errf(err, cap, "flow %u: size 0", i);
            return FE_EINVAL;
        }
    }
    return 0;
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
    rc = validate(sim, err, err_cap);
    if (rc) goto fail;
    struct fe_sim_scenario *sc = &sim->sc;
    sim->ifg = sc->host.count_ifg ? IFG_BYTES : 0;
    {
        struct fe_path path;
        memset(&path, 0, sizeof(path));
        path.ipver = 4;
        sim->wire_extra = (uint32_t)fe_path_overhead_bytes(&path);
    }
    sim->int_enable = sc->sw.int_enable;
    bool timely = false;
    for (uint32_t i = 0; i < sc->n_cc; i++) {
        if (sc->cc[i].algo && !strncmp(sc->cc[i].algo->name, "hpcc", 4)) sim->int_enable = true;
        if (sc->cc[i].algo && !strcmp(sc->cc[i].algo->name, "timely")) timely = true;
    }
    /* frame sizes: BTH + RETH + ImmDt + ICRC (36) around the payload, plus Ethernet/IP/UDP/FCS;
     * or HPCC ns-3's: PPP (14 there)/IPv4/UDP/SeqTs (48) plus its INT header (HPCC: 5 hops of
     * 8 bytes and a hop count; TIMELY: a timestamp) on data and ACKs alike */
    sim->ns3_frames = sc->host.frames == FE_SIM_FRAMES_HPCC_NS3;
    sim->ns3_int_bytes = sim->int_enable ? 42u : timely ? 8u : 0u;
    sim->pfc_frame_bytes = sim->ns3_frames ? 43u : PFC_FRAME_BYTES; /* ns-3: PPP + IPv4 + 9 */
    sim->max_frame_bytes = sim->ns3_frames ? sc->host.mtu_bytes + 48 + sim->ns3_int_bytes
                                           : sc->host.mtu_bytes +
                                                 (uint32_t)fe_pkt_hdr_len(FE_OP_WRITE_ONLY_IMM) +
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
    sim->dt_alpha_q16 = (uint64_t)(sc->sw.dt_alpha * 65536.0 + 0.5);
    /* the per-frame settings, next to the other hot fields */
    sim->reserve_bytes = sc->sw.reserve_bytes;
    sim->lossless_prios = sc->sw.pfc ? sc->sw.lossless_mask : 0;
    sim->cnp_monitor_bps = sc->sw.cnp_monitor_bps;
    sim->min_frame_bytes = sc->host.min_frame_bytes;
    sim->data_pcp = sc->host.data_pcp;
    sim->ack_pcp = sc->host.ack_pcp;
    /* An ACK per data packet where the algorithm's own model has one: HPCC reads INT from every
     * ACK (paper and the ns-3 code, ACK interval 1), Homa's receiver answers every scheduled
     * data packet with a GRANT. Every other algorithm (Swift too) gets the hosts' coalescing:
     * the requester asks for an ACK before its window or credit blocks it. */
    for (uint32_t i = 0; i < sc->n_cc; i++) {
        const struct fe_cc_algo *a = sc->cc[i].algo;
        sim->cc_acks_every_pkt[i] = a && (!strncmp(a->name, "hpcc", 4) || !strcmp(a->name, "homa"));
    }
    sim->stop_ns = sc->stop_ns;
    sim->ckpt_next = FE_SIM_NO_TIME;
    sim_rng_seed(sim, sc->seed);
    /* the calendar queue: push and pop inline, constant cost (fewer instructions than the
     * 4-ary heap's, feroce bench sim), one event per busy wire */
    rc = fe_evq_init(&sim->q, FE_SIM_EVQ_CALENDAR);
    if (rc) goto fail;
    fe_evq_set_keys_fn(&sim->q, sim_link_wire_keys, sim);
    sim->wire_heads_only = true;
    rc = sim_topology_build(sim, err, err_cap);
    if (rc) goto fail;
    sim_link_set_mode(sim);
    /* A large fabric has many events at the same nanosecond: from SIM_WHEEL_PORTS ports the
     * wheel, with one event per frame (each file at its slot's tail, no key), costs fewer
     * instructions (the 512-port fat-tree: calendar +7 %, heap +8 %). The order of events,
     * hence every result, is the same on all three. */
    if (sim->n_ports_total >= SIM_WHEEL_PORTS) {
        rc = fe_sim_set_queue(sim, FE_SIM_EVQ_WHEEL);
        if (rc) goto fail;
        sim->lookahead = true; /* see next_lookahead */
    }
    sim_set_lazy_txdone(sim);
    rc = FE_ENOMEM;
    for (uint32_t h = 0; h < sim->n_hosts; h++)
        if (sim_host_init(sim, &sim->hosts[h])) goto fail;
    sim->n_flows = sc->n_flows;
    size_t flows_size = (sim->n_flows ? sim->n_flows : 1) * sizeof(*sim->flows);
    sim->flows = aligned_alloc(_Alignof(struct sim_flow), flows_size);
    if (sim->flows) memset(sim->flows, 0, flows_size);
    sim->flow_order = malloc((sim->n_flows ? sim->n_flows : 1) * sizeof(uint32_t));
    if (!sim->flows || !sim->flow_order) goto fail;
    uint64_t last_start = 0;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        sim->flows[i].spec = sc->flows[i];
        if (sim->flows[i].spec.prio == 0xff) sim->flows[i].spec.prio = sc->host.data_pcp;
        sim->flows[i].finish_ns = FE_SIM_NO_TIME;
        sim->flow_order[i] = i;
        if (sc->flows[i].start_ns > last_start) last_start = sc->flows[i].start_ns;
    }
    g_sort_flows = sim->flows;
    qsort(sim->flow_order, sim->n_flows, sizeof(uint32_t), cmp_start);
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        if (sim_flow_path_info(sim, &sim->flows[i])) {
            sim_errf(err, err_cap, "flow %u: no path from its source to its destination", i);
            goto fail;
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
    /* contention window */
    sim->window_start = sc->window_start_ns != FE_SIM_NO_TIME ? sc->window_start_ns : last_start;
    sim->window_end = sc->window_end_ns;
    sim->window_auto_end = sc->window_end_ns == FE_SIM_NO_TIME;
    if (sim->n_flows) {
        sim_schedule(sim, sim->flows[sim->flow_order[0]].spec.start_ns, sim, EV_FLOW_START);
        sim_schedule(sim, sim->window_start, sim, EV_WINDOW);
        if (!sim->window_auto_end && sim->window_end > sim->window_start)
            sim_schedule(sim, sim->window_end, sim, EV_WINDOW);
    }
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
    if (sim->hosts)
        for (uint32_t h = 0; h < sim->n_hosts; h++) sim_host_free(&sim->hosts[h]);
    free(sim->flows);
    free(sim->flow_order);
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

static void window_open(struct fe_sim *sim)
{
    sim->window_opened = true;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        sim_flow_sync_counters(&sim->flows[i]);
        sim->flows[i].window_rx0 = sim->flows[i].ctr.rx_bytes;
    }
}

void sim_window_close(struct fe_sim *sim)
{
    if (sim->window_closed) return;
    if (!sim->window_opened) window_open(sim);
    sim->window_closed = true;
    sim->window_end = sim->now;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        struct sim_flow *f = &sim->flows[i];
        sim_flow_sync_counters(f);
        f->window_bytes = f->ctr.rx_bytes - f->window_rx0;
    }
}

/* The checkpoint of the open phase nearest its middle if it ended at t1 (-1: none). */
static int ckpt_nearest(const struct fe_sim *sim, uint64_t t0, uint64_t t1)
{
    uint64_t mid = t0 + (t1 - t0) / 2, best_d = UINT64_MAX;
    int best = -1;
    for (uint32_t c = 0; c < sim->n_ckpt && sim->ckpt_t[c] <= t1; c++) {
        uint64_t d = sim->ckpt_t[c] > mid ? sim->ckpt_t[c] - mid : mid - sim->ckpt_t[c];
        if (d < best_d) {
            best_d = d;
            best = (int)c;
        }
    }
    return best;
}

uint64_t sim_phase_middle(const struct fe_sim *sim, uint32_t k, const uint64_t **rx)
{
    size_t n = sim->n_flows;
    if (k + 1 < sim->n_phase_pts) { /* ended: kept at its end */
        *rx = &sim->phase_mid_rx[k * n];
        return sim->phase_mid_t[k];
    }
    int c = sim->ckpt_t ? ckpt_nearest(sim, sim->phase_t[k], sim->now) : -1;
    if (c < 0) {
        *rx = &sim->phase_rx[k * n];
        return sim->phase_t[k];
    }
    *rx = &sim->ckpt_rx[(size_t)c * n];
    return sim->ckpt_t[(size_t)c];
}

/* Every flow's rx_bytes now into row[0 .. n_flows). */
static void flows_rx_now(struct fe_sim *sim, uint64_t *row)
{
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        struct sim_flow *f = &sim->flows[i];
        sim_flow_sync_counters(f);
        row[i] = f->ctr.rx_bytes;
    }
}

/* A checkpoint of the open phase now (fe_sim_run stopped here for it). */
static void phase_checkpoint(struct fe_sim *sim)
{
    size_t n = sim->n_flows;
    uint32_t c = sim->n_ckpt++;
    sim->ckpt_t[c] = sim->now;
    flows_rx_now(sim, &sim->ckpt_rx[c * n]);
    if (sim->n_ckpt == SIM_CKPTS) { /* keep the 2nd, 4th, ...: twice the spacing from the start */
        for (uint32_t a = 1, b = 0; a < SIM_CKPTS; a += 2, b++) {
            sim->ckpt_t[b] = sim->ckpt_t[a];
            memcpy(&sim->ckpt_rx[b * n], &sim->ckpt_rx[a * n], n * sizeof(uint64_t));
        }
        sim->n_ckpt = SIM_CKPTS / 2;
        sim->ckpt_dt_ns *= 2;
    }
    sim->ckpt_next = sim->now + sim->ckpt_dt_ns;
}

void sim_phase_mark(struct fe_sim *sim)
{
    if (!sim->n_flows || sim->n_flows > FE_SIM_MAX_PHASE_FLOWS) return;
    size_t n = sim->n_flows;
    uint32_t k = sim->n_phase_pts;
    if (k && sim->phase_t[k - 1] == sim->now) {
        k--; /* same instant: update that boundary */
    } else {
        if (k == sim->cap_phase_pts) {
            uint32_t cap = sim->cap_phase_pts ? sim->cap_phase_pts * 2 : 16;
            uint64_t *t = realloc(sim->phase_t, cap * sizeof(*t));
            if (t) sim->phase_t = t;
            uint64_t *rx = realloc(sim->phase_rx, (size_t)cap * n * sizeof(*rx));
            if (rx) sim->phase_rx = rx;
            uint8_t *ac = realloc(sim->phase_active, (size_t)cap * n);
            if (ac) sim->phase_active = ac;
            uint64_t *mt = realloc(sim->phase_mid_t, cap * sizeof(*mt));
            if (mt) sim->phase_mid_t = mt;
            uint64_t *mrx = realloc(sim->phase_mid_rx, (size_t)cap * n * sizeof(*mrx));
            if (mrx) sim->phase_mid_rx = mrx;
            if (!sim->ckpt_t) sim->ckpt_t = malloc(SIM_CKPTS * sizeof(uint64_t));
            if (!sim->ckpt_rx) sim->ckpt_rx = malloc(SIM_CKPTS * n * sizeof(uint64_t));
            /* phases are a report, not the model: skip */
            if (!t || !rx || !ac || !mt || !mrx || !sim->ckpt_t || !sim->ckpt_rx) return;
            sim->cap_phase_pts = cap;
        }
        if (k) { /* the phase that ends now: keep its middle */
            const uint64_t *mrx;
            sim->phase_mid_t[k - 1] = sim_phase_middle(sim, k - 1, &mrx);
            memmove(&sim->phase_mid_rx[(k - 1) * n], mrx, n * sizeof(uint64_t));
        }
        sim->n_phase_pts++;
    }
    sim->phase_t[k] = sim->now;
    flows_rx_now(sim, &sim->phase_rx[(size_t)k * n]);
    bool any = false;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        const struct sim_flow *f = &sim->flows[i];
        sim->phase_active[(size_t)k * n + i] = f->started && !f->done;
        any |= f->started && !f->done;
    }
    /* the new phase's checkpoints: none while no flow is active */
    sim->n_ckpt = 0;
    sim->ckpt_dt_ns = SIM_CKPT_DT0_NS;
    sim->ckpt_next = any ? sim->now + SIM_CKPT_DT0_NS : FE_SIM_NO_TIME;
    sim->halt |= SIM_HALT_CKPT;
}

static void start_flows(struct fe_sim *sim)
{
    while (sim->next_flow < sim->n_flows) {
        uint32_t i = sim->flow_order[sim->next_flow];
        if (sim->flows[i].spec.start_ns > sim->now) {
            sim_schedule(sim, sim->flows[i].spec.start_ns, sim, EV_FLOW_START);
            return;
        }
        sim->next_flow++;
        if (sim_flow_start(sim, i)) sim_fail(sim);
        if (sim->next_flow == sim->n_flows ||
            sim->flows[sim->flow_order[sim->next_flow]].spec.start_ns > sim->now)
            sim_phase_mark(sim);
    }
}

static void dispatch(struct fe_sim *sim, uint64_t data)
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
    case EV_FLOW_START:
        start_flows(sim);
        break;
    case EV_WINDOW:
        if (!sim->window_opened)
            window_open(sim);
        else
            sim_window_close(sim);
        break;
    }
}

/* ---- lookahead (large fabrics) ----
 * There, what an event reads (its port, the frame, the host, the QP's records, the switch's route)
 * has left the caches since the last event there, and each is found through the one before: a
 * chain of misses, one after the other. But a nanosecond holds several events (on the 128-host
 * fat-tree 86 % of the events share their time with the one before), so the run loop takes up to
 * SIM_LOOKAHEAD of them out of the queue ahead of their turn and loads each one's chain a link
 * per event that runs before it: the object when it is taken out, then one link at each of the
 * four events before its turn. The order does not change: the queue holds nothing earlier, and
 * whatever they schedule for the same nanosecond comes after them. Each step starts again from
 * the event's object and reads only what is live now (a QP released meanwhile has left
 * host->qps, a frame taken has left its wire): it loads, it decides nothing. */
#define PF(p) __builtin_prefetch(p)

/* A frame's two lines. */
static inline void load_frame(const struct sim_pkt *pkt)
{
    PF(pkt);
    PF((const char *)pkt + 64);
}

/* Steps 2-4 toward the QP in a host's slot: the slot, the QP's record, its fe_qp (what a packet
 * received or sent reads). */
static inline void load_qp(const struct sim_host *h, uint32_t slot, int s, bool rx)
{
    if (s == 2) {
        PF(&h->qps[slot]);
        return;
    }
    const struct sim_qp *sq = h->qps[slot];
    if (!sq) return;
    if (s == 3)
        PF(sq);
    else if (sq->qp && rx)
        fe_qp_prefetch_rx(sq->qp);
    else if (sq->qp)
        fe_qp_prefetch_tx(sq->qp);
}

/* Step s (1..4: four events before its turn, down to one) of loading what event ev will read. */
static inline __attribute__((always_inline)) void load_ahead(uint64_t ev, int s)
{
    const void *obj = (const void *)(uintptr_t)(ev & ~EV_KIND_MASK);
    switch ((enum ev_kind)(ev & EV_KIND_MASK)) {
    case EV_ARRIVE_HOST: {
        const struct sim_port *to = obj;
        const struct sim_pkt *pkt = to->wire_head;
        const struct sim_host *h = to->host;
        if (!pkt) return;
        if (s == 1) {
            load_frame(pkt);
            PF(h);
            return;
        }
        if (pkt->kind != PKT_ROCE) return;
        uint32_t slot = pkt->pkt.bth.dqpn & MAX_SLOTS;
        if (slot < h->n_qps) load_qp(h, slot, s, true);
        return;
    }
    case EV_ARRIVE: {
        const struct sim_port *to = obj;
        const struct sim_pkt *pkt = to->wire_head;
        if (!pkt) return;
        if (s == 1) {
            load_frame(pkt);
        } else if (pkt->kind == PKT_PFC) { /* no route: it stops at this port */
            return;
        } else if (s == 2) {
            PF(&to->sw->route[pkt->dst]);
        } else if (s == 3) {
            const struct sim_port *out = sim_route(to->sw, pkt->dst, pkt->hash);
            if (!out) return; /* no route: dropped */
            PF(out);
            PF(&out->wire_head);
        }
        return;
    }
    case EV_TX_DONE: {
        const struct sim_port *p = obj;
        if (p->host) {
            const struct sim_host *h = p->host;
            if (s == 1)
                PF(h);
            else if (s == 2)
                PF(h->ready_head);
            else if (s == 3 && h->ready_head && h->ready_head->qp)
                fe_qp_prefetch_tx(h->ready_head->qp);
            return;
        }
        if (!p->nonempty) return;
        const struct sim_queue *q = &p->tc[sim_top_prio(p->nonempty)].q; /* served first */
        if (s == 1) {
            PF(q);
            PF(&p->peer->wire_tail);
        } else if (s == 2 && q->head) {
            load_frame(q->head);
        }
        return;
    }
    case EV_HOST_WAKE: {
        const struct sim_host *h = obj;
        if (s == 1) {
            PF(h->timers);
            PF(h->ready_head);
            return;
        }
        if (h->n_timers) load_qp(h, h->timers[0].qpn & MAX_SLOTS, s, false);
        return;
    }
    default:
        return;
    }
}

/* The next event with the lookahead (0 when none is left up to limit: an event's word holds an
 * object's address): the same events in the same order as the queue's pops. Out of line, and
 * its result in a register: the run loop keeps one dispatch, inlined with what it calls (two
 * copies cost advcam, which runs without, 3-6 % more instructions) and its event word out of
 * memory. */
static __attribute__((noinline)) uint64_t next_lookahead(struct fe_sim *sim, uint64_t limit)
{
    uint64_t t, data;
    uint32_t n = sim->la_n, h = sim->la_head;
    /* refill: the events of the current nanosecond (any time up to limit when none is held) */
    if (n < SIM_LOOKAHEAD) {
        uint64_t up_to = n ? sim->now : limit;
        while (n < SIM_LOOKAHEAD && fe_evq_pop_until(&sim->q, up_to, &t, &data)) {
            sim->now = up_to = t;
            const char *obj = (const char *)(uintptr_t)(data & ~EV_KIND_MASK);
            PF(obj); /* its first two lines: every object an event names has them */
            PF(obj + 64);
            sim->la[(h + n++) % SIM_LOOKAHEAD] = data;
        }
        if (!n) return 0;
    }
    data = sim->la[h];
    h = (h + 1) % SIM_LOOKAHEAD;
    n--;
    sim->la_head = h;
    sim->la_n = n;
    /* one step for each of the next four, written out so that each copy of load_ahead knows
     * its step (a loop over them cost 34 more instructions per event on the fat-tree) */
    if (n > 0) load_ahead(sim->la[h], 4);
    if (n > 1) load_ahead(sim->la[(h + 1) % SIM_LOOKAHEAD], 3);
    if (n > 2) load_ahead(sim->la[(h + 2) % SIM_LOOKAHEAD], 2);
    if (n > 3) load_ahead(sim->la[(h + 3) % SIM_LOOKAHEAD], 1);
    return data;
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

#define RUN_REPLAN 2 /* run_to stopped after an event that began a phase */

/* fe_sim_run up to limit, which no checkpoint precedes: 0, 1 (finished), RUN_REPLAN, or < 0.
 * Out of line: inlined into fe_sim_run's loop it cost advcam 0.2 % more instructions. */
static __attribute__((noinline)) int run_to(struct fe_sim *sim, uint64_t limit)
{
    uint64_t t, data;
    bool all_done = false, lookahead = sim->lookahead, outline = lookahead || sim->ns3_lazy_txdone;
    for (;;) {
        if (outline) {
            if (!(data = lookahead ? next_lookahead(sim, limit) : next_tracked(sim, limit))) break;
        } else {
            if (!fe_evq_pop_until(&sim->q, limit, &t, &data)) break;
            sim->now = t;
        }
        sim->ev_kind_count[data & EV_KIND_MASK]++; /* their sum is st.events (fe_sim_stats) */
        dispatch(sim, data);
        if (__builtin_expect(sim->halt, 0)) {
            if (sim_failed(sim)) {
                sim->finished = true;
                return FE_ENOMEM;
            }
            if (!(sim->halt & SIM_HALT_ALL_DONE)) { /* SIM_HALT_CKPT alone */
                sim->halt = 0;
                return RUN_REPLAN;
            }
            all_done = true;
            break;
        }
    }
    if (fe_evq_failed(&sim->q)) {
        sim_fail(sim);
        sim->finished = true;
        return FE_ENOMEM;
    }
    if (all_done || (!fe_evq_size(&sim->q) && sim->next_flow >= sim->n_flows)) {
        sim->finished = true;
    } else {
        if (limit != FE_SIM_NO_TIME && limit > sim->now) sim->now = limit;
        if (limit == sim->stop_ns) sim->finished = true;
    }
    if (sim->finished && !sim->window_closed) sim_window_close(sim);
    return sim->finished ? 1 : 0;
}

int fe_sim_run(struct fe_sim *sim, uint64_t until_ns)
{
    if (sim->finished) return 1;
    uint64_t limit = until_ns < sim->stop_ns ? until_ns : sim->stop_ns;
    /* the open phase's checkpoints: run to each, take it, go on (where a run is cut changes
     * nothing; events held by the lookahead wait in its ring) */
    for (;;) {
        uint64_t to = sim->ckpt_next < limit ? sim->ckpt_next : limit;
        int rc = run_to(sim, to);
        if (rc == RUN_REPLAN) continue;
        if (rc || to == limit) return rc;
        phase_checkpoint(sim);
    }
}

uint64_t fe_sim_now(const struct fe_sim *sim)
{
    return sim->now;
}
bool fe_sim_finished(const struct fe_sim *sim)
{
    return sim->finished;
}
const struct fe_sim_scenario *fe_sim_scenario_of(const struct fe_sim *sim)
{
    return &sim->sc;
}
uint32_t fe_sim_n_flows(const struct fe_sim *sim)
{
    return sim->n_flows;
}
uint32_t fe_sim_n_nodes(const struct fe_sim *sim)
{
    return sim->n_nodes;
}

uint32_t fe_sim_node_ports(const struct fe_sim *sim, uint32_t node)
{
    return node < sim->n_nodes ? sim->nodes[node].n_ports : 0;
}

void fe_sim_set_pfc_log(struct fe_sim *sim, fe_sim_pfc_cb cb, void *user)
{
    sim->pfc_cb = cb;
    sim->pfc_user = user;
}

void fe_sim_window(const struct fe_sim *sim, uint64_t *start_ns, uint64_t *end_ns)
{
    *start_ns = sim->window_start;
    *end_ns = sim->window_closed ? sim->window_end : sim->now;
}

void fe_sim_stats(const struct fe_sim *sim, struct fe_sim_stats *out)
{
    *out = sim->st;
    out->pkts_sent = out->ecn_marks = 0; /* per port, counted once per frame */
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        out->pkts_sent += sim->ports[i].tx_pkts;
        out->ecn_marks += sim->ports[i].ecn_marks;
    }
    out->events = 0;
    for (size_t k = 0; k < sizeof(sim->ev_kind_count) / sizeof(sim->ev_kind_count[0]); k++)
        out->events += sim->ev_kind_count[k];
    out->now_ns = sim->now;
    out->drops_total = 0;
    for (int i = 0; i < FE_SIM_DROP_MAX; i++)
        if (i != FE_SIM_DROP_NO_QP && i != FE_SIM_DROP_QP) out->drops_total += sim->st.drops[i];
    out->max_buffer_bytes = 0;
    for (uint32_t i = 0; i < sim->n_nodes; i++)
        if (sim->nodes[i].sw && sim->nodes[i].sw->max_used > out->max_buffer_bytes)
            out->max_buffer_bytes = sim->nodes[i].sw->max_used;
    out->pool_pkts = sim->pool_pkts;
    out->flows_done = sim->flows_done;
    out->flows_started = sim->flows_started;
    /* live QP counters */
    out->retx_pkts = 0;
    out->timeouts = 0;
    out->data_pkts_delivered = 0;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        struct sim_flow_counts n;
        sim_flow_counters(&sim->flows[i], &n);
        out->retx_pkts += n.retx_pkts;
        out->timeouts += n.timeouts;
        out->data_pkts_delivered += n.rx_pkts;
    }
}

int fe_sim_port_stats(const struct fe_sim *sim, uint32_t node, uint32_t port,
                      struct fe_sim_port_stats *out)
{
    if (node >= sim->n_nodes || port >= sim->nodes[node].n_ports) return FE_EINVAL;
    const struct sim_port *p = &sim->nodes[node].ports[port];
    memset(out, 0, sizeof(*out));
    out->peer_node = p->peer->node->id;
    out->peer_port = p->peer->index;
    out->rate_bps = p->rate_bps;
    out->delay_ns = p->delay_ns;
    out->tx_pkts = p->tx_pkts;
    out->tx_bytes = p->tx_bytes;
    out->queue_bytes = p->queue_bytes;
    out->max_queue_bytes = p->max_queue_bytes;
    out->pause_tx = p->pause_tx;
    out->resume_tx = p->resume_tx;
    out->pause_rx = p->pause_rx;
    out->paused_ns = p->paused_ns + (p->paused ? sim->now - p->paused_since : 0);
    out->ecn_marks = p->ecn_marks;
    out->drops = p->drops;
    out->headroom_bytes = sim->nodes[node].is_switch ? p->headroom_bytes : 0;
    return 0;
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

int fe_sim_flow_stats(const struct fe_sim *sim, uint32_t flow, struct fe_sim_flow_stats *out)
{
    if (flow >= sim->n_flows) return FE_EINVAL;
    const struct sim_flow *f = &sim->flows[flow];
    struct sim_flow_counts n;
    sim_flow_counters(f, &n);
    memset(out, 0, sizeof(*out));
    out->src = f->spec.src;
    out->dst = f->spec.dst;
    out->bytes = f->spec.bytes;
    out->start_ns = f->spec.start_ns;
    out->finish_ns = f->finish_ns;
    out->rx_bytes = n.rx_bytes;
    out->acked_bytes = n.acked_bytes;
    out->window_bytes = sim->window_closed ? f->window_bytes
                                           : (sim->window_opened ? n.rx_bytes - f->window_rx0 : 0);
    out->tx_pkts = n.tx_pkts;
    out->retx_pkts = n.retx_pkts;
    out->timeouts = n.timeouts;
    out->cnps_rx = n.cnps_rx;
    out->ecn_marked = n.ce_rx;
    out->rtt_avg_ns = n.rtt_samples ? n.rtt_sum / n.rtt_samples : 0;
    out->rtt_max_ns = n.rtt_max;
    out->standalone_fct_ns = f->standalone_fct_ns;
    out->started = f->started;
    out->done = f->done;
    out->failed = f->failed;
    return 0;
}

int fe_sim_flow_cc_trace(const struct fe_sim *sim, uint32_t flow, struct fe_cc_trace *vals, int max)
{
    if (flow >= sim->n_flows) return 0;
    const struct sim_flow *f = &sim->flows[flow];
    if (!f->req || !f->req->qp) return 0;
    return fe_cc_trace(fe_qp_cc(f->req->qp), vals, max);
}

uint64_t fe_sim_flow_rate_Bps(const struct fe_sim *sim, uint32_t flow)
{
    if (flow >= sim->n_flows) return 0;
    const struct sim_flow *f = &sim->flows[flow];
    if (!f->req || !f->req->qp) return 0;
    return fe_qp_cc(f->req->qp)->out.rate_Bps;
}
