/* Egress marking: RED/ECN from the instantaneous queue of the frame's priority after it leaves
 * (include/feroce/red.h, shared with the emulated switch), and INT records for HPCC. */
#include "sim/sim_internal.h"

void sim_ecn_port_setup(const struct fe_sim *sim, struct sim_port *p)
{
    const struct fe_sim_switch_cfg *c = &sim->sc.sw;
    p->red_on = false;
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
    p->red_on = true;
}

void sim_ecn_on_dequeue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    if (pkt->kind != PKT_ROCE && pkt->kind != PKT_TEST) return;
    if (p->red_on && (pkt->pkt.ecn == FE_ECN_ECT0 || pkt->pkt.ecn == FE_ECN_ECT1)) {
        uint64_t q = p->q[pkt->prio].bytes;
        if (q > p->red.kmin_bytes && fe_red_mark(&p->red, q, sim_rng32(sim))) {
            pkt->pkt.ecn = FE_ECN_CE;
            p->ecn_marks++;
            sim->st.ecn_marks++;
        }
    }
    if (pkt->int_md && pkt->pkt.payload_len && pkt->int_md->nhops < FE_INT_MAX_HOPS) {
        struct fe_int_hop *h = &pkt->int_md->hop[pkt->int_md->nhops++];
        h->ts_ns = sim->now;
        h->tx_bytes = p->int_tx_bytes;
        h->qlen_bytes = (uint32_t)(p->queue_bytes > UINT32_MAX ? UINT32_MAX : p->queue_bytes);
        h->rate_mbps = (uint32_t)(p->rate_bps / 1000000u);
        pkt->pkt.int_md = pkt->int_md;
    }
}
