/* Flows: each a connected pair of QPs, the requester on the source host (with the flow's CCA
 * and pacer inside fe_qp) and the responder on the destination host, whose memory region is a
 * sink (fe_mr.base NULL) and whose WRs carry virtual payload (fe_wr.data NULL). Their start,
 * their completions and end, and their counters. */
#include <stdlib.h>

#include "feroce/err.h"
#include "sim/eb.h"
#include "sim/flow.h"
#include "sim/phases.h"
#include "transport/qp_sim.h"

/* The requester's counters (its host's) into out. */
static void req_counters(const struct sim_flow *f, struct sim_flow_counts *out)
{
    if (f->req && f->req->qp) {
        const struct fe_qp_counters *c = fe_qp_counters(f->req->qp);
        out->tx_pkts = c->tx_pkts;
        out->retx_pkts = c->retx_pkts;
        out->timeouts = c->timeouts;
        out->cnps_rx = c->rx_cnps;
        out->rtt_samples = c->rtt_samples;
        out->rtt_sum = c->rtt_sum_ns;
        out->rtt_max = c->rtt_max_ns;
        out->acked_bytes = c->tx_bytes_completed; /* CQEs not yet drained included */
    }
}

void sim_flow_counters(const struct sim_flow *f, struct sim_flow_counts *out)
{
    *out = f->ctr;
    req_counters(f, out);
    if (f->resp && f->resp->qp) {
        const struct fe_qp_counters *c = fe_qp_counters(f->resp->qp);
        out->rx_pkts = c->rx_pkts;
        out->rx_bytes = c->rx_bytes;
        out->ce_rx = c->rx_ce_pkts;
    }
}

void sim_flow_sync_counters(struct sim_flow *f)
{
    struct sim_flow_counts n; /* not into f->ctr directly: it is also the source */
    sim_flow_counters(f, &n);
    f->ctr = n;
}

/* The flow completes now, at its source: the requester's counters are kept and its QP released
 * (its host's state). What reads or changes other nodes (the responder's QP, the counts of
 * flows done, the window's auto end, the phase mark, the stop when all are done) waits for the
 * end of the grid window (sim_flows_ended), as a parallel run can only do it there. */
static void flow_finish(struct fe_sim *sim, struct sim_flow *f)
{
    struct sim_flow_counts n = f->ctr;
    req_counters(f, &n);
    f->ctr = n;
    f->done = true;
    f->finish_ns = sim->now;
    struct sim_qp *req = f->req;
    f->req = NULL;
    if (req) sim_host_release_qp(req->host, req);
    sim->ended[sim->n_ended++] = (uint32_t)(f - sim->flows);
    if (sim->grid_due == FE_SIM_NO_TIME) {
        sim->grid_due = (sim->now / sim->grid_ns + 1) * sim->grid_ns;
        sim->halt |= SIM_HALT_GRID;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void sim_flows_ended(struct fe_sim *sim)
{
    if (!sim->n_ended) return;
    /* in flow order: the responders' slots return to their hosts' free lists in an order that
     * does not depend on which completion ran first */
    qsort(sim->ended, sim->n_ended, sizeof(*sim->ended), cmp_u32);
    for (uint32_t k = 0; k < sim->n_ended; k++) {
        struct sim_flow *f = &sim->flows[sim->ended[k]];
        sim_flow_sync_counters(f);
        struct sim_qp *resp = f->resp;
        f->resp = NULL;
        if (resp) sim_host_release_qp(resp->host, resp);
        sim->flows_done++;
        sim->flows_active--;
    }
    sim->n_ended = 0;
    if (sim->window_auto_end && !sim->window_closed && sim->window_opened) sim_window_close(sim);
    sim_phase_mark(sim);
    if (sim->flows_done == sim->n_flows) sim->halt |= SIM_HALT_ALL_DONE;
}

void sim_flow_end(struct fe_sim *sim, struct sim_flow *f)
{
    flow_finish(sim, f);
}

bool sim_flow_collect(struct fe_sim *sim, struct sim_qp *sq)
{
    if (sim->flows[sq->flow].eb) return sim_eb_req_collect(sim, sq);
    sq->completed_seen = fe_qp_counters(sq->qp)->tx_msgs_completed;
    struct sim_flow *f = &sim->flows[sq->flow];
    bool ok = sim_flow_drain_cq(f, sq);
    if (!ok || fe_qp_state(sq->qp) == FE_QPS_ERROR) {
        f->failed = true;
        flow_finish(sim, f);
        return false;
    }
    if (f->done_bytes >= f->spec.bytes) {
        flow_finish(sim, f);
        return false;
    }
    sim_flow_post_more(f, sq);
    return true;
}

/* The flow's two QPs in fresh slots of their hosts, with their packets' routes. */
static int new_qps(struct fe_sim *sim, uint32_t fi, struct sim_qp **a, struct sim_qp **b)
{
    struct sim_flow *f = &sim->flows[fi];
    struct sim_host *hs = sim->nodes[f->spec.src].host, *hd = sim->nodes[f->spec.dst].host;
    int rc;
    *a = sim_host_new_qp(hs, fi, true, &rc);
    if (!*a) return rc;
    *b = sim_host_new_qp(hd, fi, false, &rc);
    if (!*b) {
        sim_host_release_qp(hs, *a);
        return rc;
    }
    (*a)->route_dst = f->spec.dst;
    (*a)->route_hash = f->hash_fwd;
    (*b)->route_dst = f->spec.src;
    (*b)->route_hash = f->hash_rev;
    return 0;
}

/* Their fe_qps, and the responder's sink region. */
static int create_qps(struct fe_sim *sim, struct sim_flow *f, struct sim_qp *a, struct sim_qp *b,
                      uint64_t line_bps)
{
    struct fe_qp_config ca, cb;
    struct fe_qp_sim_config sa, sb;
    sim_flow_qp_configs(sim, f, a, b, line_bps, &ca, &cb, &sa, &sb);
    int err = 0;
    const char *why = NULL;
    a->qp = fe_qp_create_sim(&ca, &sa, sim->now, &err, &why);
    if (a->qp) b->qp = fe_qp_create_sim(&cb, &sb, sim->now, &err, &why);
    if (!a->qp || !b->qp) {
        sim->create_err = err ? err : FE_ENOMEM;
        sim->create_why = why;
        return sim->create_err;
    }
    struct fe_mr mr = {
        .rkey = SIM_FLOW_RKEY, .va = SIM_FLOW_VA, .len = f->spec.bytes, .base = NULL};
    return fe_qp_reg_mr(b->qp, &mr);
}

/* A flow whose algorithm needs the receiver's grants (FE_CC_CAP_RX_GRANTS) joins its
 * responder's host's grant scheduler (host.c schedule_grants), with RTTbytes as the sender
 * computes it. */
static int join_grants(struct fe_sim *sim, struct sim_flow *f, struct sim_qp *b, uint64_t line_bps)
{
    const struct fe_sim_cc *cc = &sim->sc.cc[f->spec.cc];
    if (!cc->algo || !(cc->algo->caps & FE_CC_CAP_RX_GRANTS)) return 0;
    b->grant.total_bytes = f->spec.bytes;
    b->grant.rtt_bytes = fe_homa_rtt_bytes(cc->algo, &cc->params, line_bps, f->base_rtt_ns);
    b->grant.user = b;
    if (fe_homa_grants_add(&b->host->grants, &b->grant)) return FE_ENOMEM;
    b->rx_grants = true;
    b->rx_hook = true;
    return 0;
}

/* The QPs take their slots, the requester its first WRs, and both hosts schedule them. */
static void go(struct fe_sim *sim, struct sim_flow *f, struct sim_qp *a, struct sim_qp *b)
{
    struct sim_host *hs = a->host, *hd = b->host;
    sim_host_install_qp(hs, a);
    sim_host_install_qp(hd, b);
    f->req = a;
    f->resp = b;
    f->req_qpn = a->qpn;
    f->started = true;
    sim->flows_started++;
    sim->flows_active++;
    sim_flow_post_more(f, a);
    /* over MPI a host of another process's part is not run here: its QPs exist (numbered as
     * there), idle (parallel.c sim_par_node_here) */
    bool src_here = sim_par_node_here(sim, hs->node_id),
         dst_here = sim_par_node_here(sim, hd->node_id);
    if (src_here) sim_host_schedule_qp(sim, hs, a);
    if (dst_here) sim_host_schedule_qp(sim, hd, b);
    if (src_here) sim_host_arm_wake(sim, hs);
    if (dst_here) sim_host_arm_wake(sim, hd);
    if (src_here) sim_host_kick(sim, hs);
}

/* Out of line: once per flow, and inlined into the run loop's dispatch (start_flows) it would
 * take the room of the per-frame functions the loop inlines. */
__attribute__((noinline)) int sim_flow_start(struct fe_sim *sim, uint32_t fi)
{
    struct sim_flow *f = &sim->flows[fi];
    struct sim_qp *a, *b;
    int rc = new_qps(sim, fi, &a, &b);
    if (rc) return rc;
    uint64_t line_bps = sim_flow_line_bps(sim, f);
    rc = create_qps(sim, f, a, b, line_bps);
    if (!rc) rc = join_grants(sim, f, b, line_bps);
    if (rc) {
        sim_host_release_qp(a->host, a);
        sim_host_release_qp(b->host, b);
        return rc;
    }
    go(sim, f, a, b);
    if (f->eb) sim_eb_flow_started(sim, fi);
    return 0;
}
