/* Links: a rate, a one-way propagation delay and an optional random loss per frame, per
 * direction. A frame occupies the transmitter for its serialization time and reaches the far
 * end one delay after its last bit (store and forward), as a single event. */
#include "sim/sim_internal.h"

uint64_t sim_link_ser_ns(struct sim_port *p, uint32_t wire_bytes)
{
    /* Fixed point (2^-24 ns per byte) with the fraction carried to the next frame, so that
     * back-to-back frames run at the link rate whatever the rounding of one frame (relative
     * error < 1e-6 at 400 Gb/s), without a division per frame. */
    uint64_t fp = (uint64_t)wire_bytes * p->ser_fp_per_byte + p->ser_frac;
    p->ser_frac = fp & ((1u << 24) - 1);
    return fp >> 24;
}

void sim_link_send(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    uint64_t ser = sim_link_ser_ns(p, sim_wire_bytes(sim, pkt));
    p->busy_until = sim->now + ser;
    p->tx_pkts++;
    p->tx_bytes += pkt->frame_bytes;
    p->int_tx_bytes += pkt->frame_bytes;
    sim->st.pkts_sent++;
    /* PFC frames are exempt: losing one would model a different failure (and deadlock the
     * XOFF/XON mode, which has no timer). */
    if (p->loss32 && pkt->kind != PKT_PFC && (sim_rng_next(sim) >> 32) < p->loss32) {
        sim->st.drops[FE_SIM_DROP_LINK]++;
        p->drops++;
        sim_pkt_free(sim, pkt);
        return;
    }
    pkt->to = p->peer;
    sim_schedule(sim, p->busy_until + p->delay_ns, pkt, EV_ARRIVE);
}
