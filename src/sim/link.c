/* Links: a rate, a one-way propagation delay and an optional random loss per frame, per
 * direction. A frame occupies the transmitter for its serialization time and reaches the far
 * end one delay after its last bit (store and forward), as a single event.
 *
 * Frames on a wire arrive in the order they were sent, so each port keeps the frames coming
 * toward it in a FIFO. With the heap queue only the first has an event; the others hold the
 * key (time and place in the order) their event gets when they reach the head: results are
 * those of one event per frame, with a heap of one entry per busy wire instead of one per frame
 * in flight. (The wheel cannot take events out of order: there every frame has its event.)
 *
 * Sending is inline (sim_internal.h: sim_link_send) for links without loss, with the heap or
 * calendar queue; here is the general case. */
#include "sim/sim_internal.h"

/* HPCC's ns-3 (--ns3-compat) times every frame on its own: Seconds(bytes * 8.0 / rate), a
 * double turned into its 64.64 fixed-point Time and cut to whole nanoseconds. That is up to
 * 1 ns short per frame (838 ns for 1048 bytes at 10 Gb/s, 47 for 60 bytes: an exact 48.0 lands
 * just under), and identical ports stay in step to the nanosecond, which its PFC cycles depend
 * on. Computed as ns-3 does: the double, its fraction cut to 64 bits, times 1e9, truncated. */
uint64_t sim_link_ns3_ser_ns(uint64_t rate_bps, uint32_t wire_bytes)
{
    double s = (double)wire_bytes * 8 / (double)rate_bps;
    uint64_t whole = (uint64_t)s;
    uint64_t frac = (uint64_t)((s - (double)whole) * 18446744073709551616.0); /* x 2^64 */
    uint64_t lo = ((frac & 0xFFFFFFFFu) * 1000000000u) >> 32;
    return whole * 1000000000u + (((frac >> 32) * 1000000000u + lo) >> 32);
}

uint64_t sim_link_ns3_ser_new(struct sim_port *p, uint32_t wire_bytes)
{
    p->ns3_ser_bytes = wire_bytes;
    return p->ns3_ser_ns = sim_link_ns3_ser_ns(p->rate_bps, wire_bytes);
}

/* sim_link_wire_file, inline in the sending of every frame on the wheel (a call there saves and
 * restores the registers the queue's filing needs) */
static inline __attribute__((always_inline)) void wire_file(struct fe_sim *sim, struct sim_port *to,
                                                            uint64_t t, struct sim_pkt *pkt)
{
    if (sim->wire_heads_only) {
        uint64_t key;
        if (sim_arrival_key(sim, to, t, &key)) sim_fail(sim);
        sim_link_wire_put(sim, to, pkt, key);
        return;
    }
    /* the wheel: every frame has its event */
    if (fe_evq_push_arrival(&sim->q, t, sim_port_gid(sim, to), sim_arrive_event(to))) sim_fail(sim);
    pkt->next = NULL;
    if (to->wire_tail)
        to->wire_tail->next = pkt;
    else
        to->wire_head = pkt;
    to->wire_tail = pkt;
}

void sim_link_send_general(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    uint32_t wire = sim_wire_bytes(sim, pkt);
    sim_link_start(sim, p, pkt,
                   sim->ns3_frames ? sim_link_ns3_ser_port(p, wire) : sim_link_ser_ns(p, wire));
    /* PFC frames are exempt: losing one would model a different failure (and deadlock the
     * XOFF/XON mode, which has no timer). */
    if (p->loss32 && pkt->kind != PKT_PFC &&
        (sim_rng_next(sim_port_rng(sim, p)) >> 32) < p->loss32) {
        sim->st.drops[FE_SIM_DROP_LINK]++;
        p->drops++;
        sim_pkt_free(sim, pkt);
        return;
    }
    struct sim_port *to = p->peer;
    uint64_t t = p->busy_until + p->delay_ns;
    if (p->link_mode == SIM_LINK_CUT) {
        sim_par_send(sim, to, t, pkt);
        return;
    }
    wire_file(sim, to, t, pkt);
}

void sim_link_wire_file(struct fe_sim *sim, struct sim_port *to, uint64_t t, struct sim_pkt *pkt)
{
    wire_file(sim, to, t, pkt);
}

void sim_link_wire_keys(void *user, struct fe_evq *q)
{
    struct fe_sim *sim = user;
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        struct sim_port *p = &sim->ports[i];
        for (struct sim_pkt *k = p->wire_head; k; k = k->next)
            if (k != p->wire_head) fe_evq_renumber_key(q, &k->wire_key);
        /* compared with the queue's last_key, renumbered with it (switch.c) */
        if (p->txdone_reserved) fe_evq_renumber_key(q, &p->txdone_key);
    }
}

void sim_link_set_mode(struct fe_sim *sim)
{
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        struct sim_port *p = &sim->ports[i];
        if (p->loss32 || !sim->wire_heads_only)
            p->link_mode = SIM_LINK_GENERAL;
        else
            p->link_mode = sim->ns3_frames ? SIM_LINK_NS3 : SIM_LINK_FAST;
        /* ns-3 timing keeps its last frame's size and time where the fixed point would be: 0
         * bytes -> 0 ns to start with */
        if (sim->ns3_frames) p->ns3_ser_bytes = p->ns3_ser_ns = 0;
    }
}
