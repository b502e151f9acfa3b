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

/* A batch's flow: its QPs as its parts' threads made them (sim_flow_batch_make), and what
 * create_qps would have returned. */
static int made_rc(struct fe_sim *sim, const struct sim_flow_made *m)
{
    for (int k = 0; k < 2; k++)
        if (!m[k].sq->qp) {
            sim->create_err = m[k].create_err;
            sim->create_why = m[k].create_why;
            return sim->create_err;
        }
    return m[1].create_err;
}

/* The flow's QPs from the batch (true), when it is the batch's next flow. */
static bool take_made(struct fe_sim *sim, uint32_t fi, struct sim_qp **a, struct sim_qp **b,
                      int *rc)
{
    struct sim_flow_batch *fb = sim->batch;
    if (!fb || fb->next == fb->n || sim->flow_order[fb->first + fb->next] != fi) return false;
    const struct sim_flow_made *m = &fb->made[2 * fb->next++];
    *a = m[0].sq;
    *b = m[1].sq;
    *rc = made_rc(sim, m);
    return true;
}

/* Out of line: once per flow, and inlined into the run loop's dispatch (start_flows) it would
 * take the room of the per-frame functions the loop inlines. */
__attribute__((noinline)) int sim_flow_start(struct fe_sim *sim, uint32_t fi)
{
    struct sim_flow *f = &sim->flows[fi];
    struct sim_qp *a, *b;
    uint64_t line_bps = sim_flow_line_bps(sim, f);
    int rc;
    if (!take_made(sim, fi, &a, &b, &rc)) {
        rc = new_qps(sim, fi, &a, &b);
        if (rc) return rc;
        rc = create_qps(sim, f, a, b, line_bps);
    }
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

/* ---- flows made ahead ---- */

struct sim_flow_batch *sim_flow_batch_new(struct fe_sim *sim, uint64_t now_ns)
{
    uint32_t first = sim->next_flow, n = 0;
    while (first + n < sim->n_flows &&
           sim->flows[sim->flow_order[first + n]].spec.start_ns <= now_ns)
        n++;
    if (!n) return NULL;
    struct sim_flow_batch *fb = malloc(sizeof(*fb));
    struct sim_flow_made *made = calloc(2 * (size_t)n, sizeof(*made));
    if (!fb || !made) {
        free(fb);
        free(made);
        return NULL;
    }
    *fb = (struct sim_flow_batch){.first = first, .now_ns = now_ns, .made = made};
    /* as sim_flow_start takes them: a flow whose slots fail ends the batch, and fails again
     * there */
    for (; fb->n < n; fb->n++) {
        struct sim_flow_made *m = &made[2 * fb->n];
        if (new_qps(sim, sim->flow_order[first + fb->n], &m[0].sq, &m[1].sq)) break;
    }
    if (!fb->n) {
        sim_flow_batch_free(fb);
        return NULL;
    }
    return fb;
}

static void *host_qp_mem(void *host, size_t bytes)
{
    return sim_host_qp_mem(host, bytes);
}

/* An fe_qp in its host's QP memory (sim_host_qp_mem), as fe_qp_create_sim makes it. */
static struct fe_qp *create_in_host(struct sim_host *h, const struct fe_qp_config *c,
                                    const struct fe_qp_sim_config *s, uint64_t now_ns, int *err,
                                    const char **why)
{
    return fe_qp_create_sim_alloc(host_qp_mem, h, c, s, now_ns, err, why);
}

/* The fe_qps of a batch's flow whose hosts are marked (req: the requester's, resp: the
 * responder's), as create_qps makes them; what failed in m (made_rc reads it). */
static void make_qps(const struct fe_sim *sim, const struct sim_flow *f, struct sim_flow_made *m,
                     const bool mine[2], uint64_t now_ns)
{
    struct fe_qp_config c[2];
    struct fe_qp_sim_config s[2];
    sim_flow_qp_configs(sim, f, m[0].sq, m[1].sq, sim_flow_line_bps(sim, f), &c[0], &c[1], &s[0],
                        &s[1]);
    for (int k = 0; k < 2; k++) {
        if (!mine[k]) continue;
        int err = 0;
        const char *why = NULL;
        m[k].sq->qp = create_in_host(m[k].sq->host, &c[k], &s[k], now_ns, &err, &why);
        if (!m[k].sq->qp) {
            m[k].create_err = err ? err : FE_ENOMEM;
            m[k].create_why = why;
        }
    }
    if (mine[1] && m[1].sq->qp) {
        struct fe_mr mr = {
            .rkey = SIM_FLOW_RKEY, .va = SIM_FLOW_VA, .len = f->spec.bytes, .base = NULL};
        m[1].create_err = fe_qp_reg_mr(m[1].sq->qp, &mr);
    }
}

/* How many of the batch's QPs each host of `part` will make (qp_mem_due): its QP memory then
 * comes in one block. */
static void count_due(struct sim_flow_batch *fb, const uint32_t *part_of, uint32_t part)
{
    for (uint32_t i = 0; i < 2 * fb->n; i++) {
        struct sim_host *h = fb->made[i].sq->host;
        if (part_of[h->node_id] == part) h->qp_mem_due++;
    }
}

void sim_flow_batch_make(const struct fe_sim *sim, struct sim_flow_batch *fb,
                         const uint32_t *part_of, uint32_t part)
{
    count_due(fb, part_of, part);
    for (uint32_t i = 0; i < fb->n; i++) {
        struct sim_flow_made *m = &fb->made[2 * i];
        bool mine[2] = {part_of[m[0].sq->host->node_id] == part,
                        part_of[m[1].sq->host->node_id] == part};
        if (mine[0] || mine[1])
            make_qps(sim, &sim->flows[sim->flow_order[fb->first + i]], m, mine, fb->now_ns);
    }
}

void sim_flow_batch_free(struct sim_flow_batch *fb)
{
    if (!fb) return;
    for (uint32_t i = fb->n; i-- > fb->next;) { /* the slots back as they were taken */
        struct sim_qp *a = fb->made[2 * i].sq, *b = fb->made[2 * i + 1].sq;
        sim_host_release_qp(b->host, b);
        sim_host_release_qp(a->host, a);
    }
    free(fb->made);
    free(fb);
}
