/* Switch: store-and-forward, per-port output queues per priority served in strict priority
 * (PFC frames first, then the highest PCP), the shared buffer (buffer.c), PFC (pfc.c) and
 * egress marking (ecn.c). A port's transmitter needs an event only when frames wait behind the
 * one on the wire, so an uncongested hop costs one event (the arrival). */
#include "sim/buffer.h"
#include "sim/sim_internal.h"

/* A port's transmitter is busy until the end of its frame; in ns-3 (--ns3-compat) until its
 * transmit-complete event has run, which comes after the frames arriving at that same
 * nanosecond that were sent before this frame started: they are admitted (and may pause their
 * senders) before the port takes the next frame out of the buffer. That event is always
 * scheduled there, so its being pending is the test. */
static inline bool tx_busy(const struct fe_sim *sim, const struct sim_port *p)
{
    return p->busy_until > sim->now || (sim->ns3_frames && p->txdone_pending);
}

/* Frames wait behind the one on the wire: the transmitter's end is an event (one at a time);
 * in ns-3 (--ns3-compat) every frame has it (tx_busy). */
static inline void arm_tx_done(struct fe_sim *sim, struct sim_port *p)
{
    if (!p->txdone_pending && (p->ctrl_pending || p->nonempty || sim->ns3_frames)) {
        p->txdone_pending = true;
        sim_schedule(sim, p->busy_until, p, EV_TX_DONE);
    }
}

void sim_port_kick(struct fe_sim *sim, struct sim_port *p)
{
    if (tx_busy(sim, p)) {
        arm_tx_done(sim, p);
        return;
    }
    struct sim_pkt *pkt;
    if (p->ctrl_pending) {
        pkt = p->ctrl.head;
        p->ctrl.head = pkt->next;
        if (!p->ctrl.head) {
            p->ctrl.tail = NULL;
            p->ctrl_pending = false;
        }
        pkt->next = NULL;
    } else {
        if (!p->nonempty) return;
        uint8_t ok = p->nonempty & sim_pfc_allowed(sim, p);
        if (!ok) return; /* paused: the pause end or a RESUME kicks us again */
        pkt = sim_port_dequeue(p, sim_top_prio(ok));
        struct sim_switch *sw = p->sw;
        if (pkt->in_port != SIM_NO_INGRESS) {
            struct sim_port *in = &sw->ports[pkt->in_port];
            sim_buffer_release(sim, sw, in, pkt->prio, pkt->frame_bytes);
            sim_pfc_check_xon(sim, sw, in, pkt->prio);
        }
        sim_ecn_on_dequeue(sim, p, pkt, p->tc[pkt->prio].q.bytes);
        if (sim->cnp_monitor_bps) sim_cnp_monitor(sim, p, pkt);
    }
    sim_link_send(sim, p, pkt);
    arm_tx_done(sim, p);
}

void sim_port_tx_done(struct fe_sim *sim, struct sim_port *p)
{
    p->txdone_pending = false;
    if (p->sw)
        sim_port_kick(sim, p);
    else
        sim_host_kick(sim, p->host);
}

/* The frame leaves at once on the idle port out, as enqueue + sim_port_kick would send it, without
 * the round trip through the queue (most ACK hops, many data hops). Its queue is empty, as all the
 * port's are (port_idle_for): nothing to mark on, and no need to read it; nothing waits behind
 * the frame, so the transmitter's end is no event (but with ns-3 timing: there every frame's). */
static void send_now(struct fe_sim *sim, struct sim_port *out, struct sim_pkt *pkt)
{
    if (pkt->frame_bytes > out->max_queue_bytes) out->max_queue_bytes = pkt->frame_bytes;
    sim_ecn_on_dequeue(sim, out, pkt, 0);
    if (sim->cnp_monitor_bps) sim_cnp_monitor(sim, out, pkt);
    sim_link_send(sim, out, pkt);
    if (sim->ns3_frames) arm_tx_done(sim, out);
}

static inline bool port_idle_for(struct fe_sim *sim, struct sim_port *out, uint8_t prio)
{
    return !tx_busy(sim, out) && !out->ctrl_pending && !out->nonempty &&
           (sim_pfc_allowed(sim, out) >> prio & 1);
}

/* A frame that does not pass through: admitted to the buffer (or dropped), then sent at once if
 * its port is idle after all, else queued. Out of line: the usual frame passes through, and
 * sim_switch_receive stays small enough to be inlined in the run loop's dispatch. */
static __attribute__((noinline)) void receive_buffered(struct fe_sim *sim, struct sim_switch *sw,
                                                       struct sim_port *in, struct sim_port *out,
                                                       struct sim_pkt *pkt)
{
    int reason = FE_SIM_DROP_NO_ROUTE;
    if (!out || !sim_buffer_admit(sim, sw, in, pkt->prio, pkt->frame_bytes, &reason)) {
        sim->st.drops[reason]++;
        (out ? out : in)->drops++;
        sim_pkt_free(sim, pkt);
        return;
    }
    sim_pfc_check_xoff(sim, sw, in, pkt->prio);
    if (port_idle_for(sim, out, pkt->prio)) {
        sim_buffer_release(sim, sw, in, pkt->prio, pkt->frame_bytes);
        sim_pfc_check_xon(sim, sw, in, pkt->prio);
        send_now(sim, out, pkt);
        return;
    }
    pkt->in_port = (uint16_t)in->index; /* the buffer to release it from at dequeue */
    sim_port_enqueue(sim, out, pkt);
    if (tx_busy(sim, out))
        arm_tx_done(sim, out); /* sim_port_kick's first step, without the call */
    else
        sim_port_kick(sim, out);
}

void sim_switch_receive(struct fe_sim *sim, struct sim_port *in, struct sim_pkt *pkt)
{
    if (pkt->kind == PKT_PFC) {
        sim_pfc_receive(sim, in, pkt);
        sim_pkt_free(sim, pkt);
        return;
    }
    struct sim_switch *sw = in->sw;
    struct sim_port *out = sim_route(sw, pkt->dst, pkt->hash);
    if (out && sim_buffer_pass_through(sim, sw, in, pkt->prio, pkt->frame_bytes) &&
        port_idle_for(sim, out, pkt->prio)) {
        /* admitted and released at once, nothing else to account (buffer.h) */
        if (sw->used_bytes + pkt->frame_bytes > sw->max_used)
            sw->max_used = sw->used_bytes + pkt->frame_bytes;
        send_now(sim, out, pkt);
        return;
    }
    receive_buffered(sim, sw, in, out, pkt);
}
