/* Links: a rate, a one-way propagation delay and an optional random loss per frame, per
 * direction. A frame occupies the transmitter for its serialization time and reaches the far
 * end one delay after its last bit (store and forward), as a single event.
 *
 * Frames on a wire arrive in the order they were sent, so each port keeps the frames coming
 * toward it in a FIFO. With the heap queue only the first has an event; the others hold the
 * key (time and place in the order) their event gets when they reach the head: results are
 * those of one event per frame, with a heap of one entry per busy wire instead of one per frame
 * in flight. (The wheel cannot take events out of order: there every frame has its event.) */
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
    /* a host sends: the frame's ECN codepoint, kept where switches read (ecn.c) */
    if (p->host) pkt->ecn_capable = pkt->pkt.ecn == FE_ECN_ECT0 || pkt->pkt.ecn == FE_ECN_ECT1;
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
    struct sim_port *to = p->peer;
    uint64_t t = p->busy_until + p->delay_ns, key = 0;
    if (!sim->wire_heads_only)
        sim_schedule(sim, t, to, EV_ARRIVE);
    else if (fe_evq_key(&sim->q, t, &key))
        sim->error = 1;
    pkt->next = NULL;
    if (to->wire_tail) {
        pkt->wire_key = key;
        to->wire_tail->next = pkt;
        to->wire_tail = pkt;
    } else {
        to->wire_head = to->wire_tail = pkt;
        if (sim->wire_heads_only &&
            fe_evq_push_key(&sim->q, key, (uint64_t)(uintptr_t)to | EV_ARRIVE))
            sim->error = 1;
    }
}

struct sim_pkt *sim_link_arrive(struct fe_sim *sim, struct sim_port *to)
{
    struct sim_pkt *pkt = to->wire_head;
    to->wire_head = pkt->next;
    if (!to->wire_head)
        to->wire_tail = NULL;
    else if (sim->wire_heads_only &&
             fe_evq_push_key(&sim->q, to->wire_head->wire_key, (uint64_t)(uintptr_t)to | EV_ARRIVE))
        sim->error = 1;
    pkt->next = NULL;
    return pkt;
}

void sim_link_wire_keys(void *user, struct fe_evq *q)
{
    struct fe_sim *sim = user;
    for (uint32_t i = 0; i < sim->n_ports_total; i++)
        for (struct sim_pkt *k = sim->ports[i].wire_head; k; k = k->next)
            if (k != sim->ports[i].wire_head) fe_evq_renumber_key(q, &k->wire_key);
}
