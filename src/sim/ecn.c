/* Egress marking, the known queue disciplines (qdisc.h): RED/ECN from the instantaneous queue of
 * the frame's priority after it leaves (include/feroce/red.h, shared with the emulated switch),
 * INT records for HPCC, and the CNP monitor. */
#include <string.h>

#include "sim/qdisc.h"
#include "sim/sim_internal.h"

void sim_ecn_port_setup(const struct fe_sim *sim, struct sim_port *p)
{
    const struct fe_sim_switch_cfg *c = &sim->sc.sw;
    p->mark_above_bytes = UINT64_MAX;
    if (!c->ecn || c->n_red <= 0) return;
    /* exact speed, else the fastest entry not faster than the port, else the slowest entry */
    const struct fe_sim_red *best = NULL;
    for (int i = 0; i < c->n_red; i++) {
        const struct fe_sim_red *r = &c->red[i];
        if (r->rate_bps == p->rate_bps) {
            best = r;
            break;
        }
        if (r->rate_bps < p->rate_bps && (!best || r->rate_bps > best->rate_bps)) best = r;
    }
    if (!best) {
        best = &c->red[0];
        for (int i = 1; i < c->n_red; i++)
            if (c->red[i].rate_bps < best->rate_bps) best = &c->red[i];
    }
    p->red.kmin_bytes = best->kmin_bytes;
    p->red.kmax_bytes = best->kmax_bytes;
    p->red.pmax_ppm = best->pmax_ppm;
    p->mark_above_bytes = best->kmin_bytes;
}

void sim_ecn_red(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt, uint64_t queued_bytes)
{
    if (fe_red_mark(&p->red, queued_bytes, sim_rng32(sim_port_rng(sim, p)))) {
        pkt->pkt.ecn = FE_ECN_CE;
        p->ecn_marks++;
    }
}

void sim_int_stamp(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    struct fe_int *md = sim_pkt_int(sim, pkt);
    if (md->nhops >= FE_INT_MAX_HOPS) return;
    struct fe_int_hop *h = &md->hop[md->nhops++];
    h->ts_ns = sim->now;
    h->tx_bytes = p->tx_bytes;
    h->qlen_bytes = (uint32_t)(p->queue_bytes > UINT32_MAX ? UINT32_MAX : p->queue_bytes);
    h->rate_mbps = (uint32_t)(p->rate_bps / 1000000u);
    pkt->pkt.int_md = md;
}

void sim_cnp_monitor(struct fe_sim *sim, struct sim_port *p, const struct sim_pkt *pkt)
{
    if (pkt->kind != PKT_ROCE || pkt->flow >= sim->n_flows || !pkt->pkt.payload_len) return;
    if (p->peer->sw) return; /* only the last hop, toward the receiver */
    struct sim_flow *f = &sim->flows[pkt->flow];
    if (!f->mon_bytes && !f->mon_start_ns) f->mon_start_ns = sim->now;
    f->mon_bytes += pkt->pkt.payload_len;
    uint64_t win = sim->sc.sw.cnp_monitor_window_ns;
    if (sim->now - f->mon_start_ns < win) return;
    double bps = (double)f->mon_bytes * 8e9 / (double)(sim->now - f->mon_start_ns);
    f->mon_start_ns = sim->now;
    f->mon_bytes = 0;
    if (bps <= (double)sim->sc.sw.cnp_monitor_bps || !f->req || !f->req->qp) return;
    /* forge the CNP the notification point would send, toward the flow's sender */
    struct sim_pkt *c = sim_pkt_alloc(sim);
    if (!c) return;
    c->kind = PKT_ROCE;
    fe_cnp_build(&c->pkt, f->req->qpn, sim->sc.host.cnp_dscp, sim->sc.host.cnp_pcp);
    c->prio = sim->sc.host.cnp_pcp;
    c->flow = pkt->flow;
    c->owner = NULL;
    c->frame_bytes = sim_frame_bytes(sim, &c->pkt);
    /* the flow's reverse path (its ACKs') starts at this switch, the receiver's */
    c->dst = f->spec.src;
    c->hash = f->hash_rev;
    struct sim_port *out = sim_route(p->sw, c->dst, c->hash);
    if (!out) {
        sim_pkt_free(sim, c);
        return;
    }
    c->in_port = SIM_NO_INGRESS; /* not admitted to the buffer: nothing to release */
    sim->st.cnps++;
    sim_port_enqueue(sim, out, c);
    sim_port_kick(sim, out);
}

static bool red_setup(const struct fe_sim *sim, struct sim_port *p)
{
    sim_ecn_port_setup(sim, p);
    return p->mark_above_bytes != UINT64_MAX;
}

static bool int_setup(const struct fe_sim *sim, struct sim_port *p)
{
    (void)p;
    return sim->int_enable;
}

static bool cnp_monitor_setup(const struct fe_sim *sim, struct sim_port *p)
{
    (void)p;
    return sim->sc.sw.cnp_monitor_bps != 0;
}

/* Their hooks run inline in sim_qdisc_egress (qdisc.h); the pointers say what they do. */
static void red_dequeue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                        uint64_t queued_bytes)
{
    if (sim_pkt_ect(pkt) && queued_bytes > p->mark_above_bytes)
        sim_ecn_red(sim, p, pkt, queued_bytes);
}

static void int_dequeue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                        uint64_t queued_bytes)
{
    (void)queued_bytes;
    if (pkt->pkt.payload_len) sim_int_stamp(sim, p, pkt);
}

static void cnp_monitor_dequeue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                                uint64_t queued_bytes)
{
    (void)queued_bytes;
    sim_cnp_monitor(sim, p, pkt);
}

const struct sim_qdisc sim_qdisc_red = {
    .name = "red", .setup = red_setup, .on_dequeue = red_dequeue};
const struct sim_qdisc sim_qdisc_int = {
    .name = "int", .setup = int_setup, .on_dequeue = int_dequeue};
const struct sim_qdisc sim_qdisc_cnp_monitor = {
    .name = "cnp-monitor", .setup = cnp_monitor_setup, .on_dequeue = cnp_monitor_dequeue};
