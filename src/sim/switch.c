/* Switch: store-and-forward, per-port output queues per priority served in strict priority
 * (PFC frames first, then the highest PCP), the shared buffer (buffer.h), PFC (pfc.c) and
 * the egress queue disciplines (qdisc.h). A port's transmitter needs an event only when frames wait
 * behind the one on the wire, so an uncongested hop costs one event (the arrival). */
#include "sim/buffer.h"
#include "sim/qdisc.h"
#include "sim/sim_internal.h"

/* A port's transmitter is busy until the end of its frame; in ns-3 (--ns3-compat) until its
 * transmit-complete event has run, which comes after the frames arriving at that same
 * nanosecond that were sent before this frame started: they are admitted (and may pause their
 * senders) before the port takes the next frame out of the buffer. ns-3 schedules that event
 * when the frame starts. Here its key (its place in the order) is taken then, and the event is
 * pushed only when a frame waits for the transmitter (sim->ns3_lazy_txdone: keyed queue, no
 * lookahead): until then, it "has run" once the running event's key is past it. Most frames
 * find their port free, and their transmit-complete did nothing in ns-3: pushing it for every
 * frame would cost a large share of an ns-3 run's events, every result the same. */
static inline bool txdone_due(const struct fe_sim *sim, const struct sim_port *p)
{
    return p->txdone_pending || (p->txdone_reserved && p->txdone_key > sim->q.last_key);
}

static inline bool tx_busy(const struct fe_sim *sim, const struct sim_port *p)
{
    return p->busy_until > sim->now || (sim->ns3_frames && txdone_due(sim, p));
}

/* The transmit-complete whose key p took becomes an event, in its place in the order. */
static void push_taken_txdone(struct fe_sim *sim, struct sim_port *p)
{
    p->txdone_reserved = false;
    p->txdone_pending = true;
    if (fe_evq_push_key(&sim->q, p->txdone_key, (uint64_t)(uintptr_t)p | EV_TX_DONE)) sim_fail(sim);
}

/* Frames wait behind the one on the wire: the transmitter's end is an event (one at a time);
 * with ns-3 timing its key was taken when the frame started (after_send). */
static inline void arm_tx_done(struct fe_sim *sim, struct sim_port *p)
{
    if (p->txdone_pending || !(p->ctrl_pending || p->nonempty)) return;
    if (sim->ns3_frames && p->txdone_reserved) { /* (a cold line: ns-3 timing only) */
        push_taken_txdone(sim, p);
        return;
    }
    p->txdone_pending = true;
    sim_schedule(sim, p->busy_until, p, EV_TX_DONE);
}

void sim_set_lazy_txdone(struct fe_sim *sim)
{
    bool lazy = sim->ns3_frames && sim->q.kind != FE_SIM_EVQ_WHEEL && !sim->lookahead;
    if (!lazy && sim->ns3_lazy_txdone) /* every frame's end an event again: push those taken */
        for (uint32_t i = 0; i < sim->n_ports_total; i++) {
            struct sim_port *p = &sim->ports[i];
            if (p->txdone_reserved && p->txdone_key > sim->q.last_key) push_taken_txdone(sim, p);
            p->txdone_reserved = false;
        }
    sim->ns3_lazy_txdone = lazy;
}

/* p has just started a frame. In ns-3, every frame's end is an event (tx_busy): scheduled now,
 * or its key taken now and the event pushed if a frame comes to wait (arm_tx_done). */
static inline void after_send(struct fe_sim *sim, struct sim_port *p)
{
    if (sim->ns3_frames) {
        p->txdone_reserved = false; /* the last frame's: it has passed, the port was free */
        if (!(p->ctrl_pending || p->nonempty)) {
            if (!sim->ns3_lazy_txdone) {
                p->txdone_pending = true;
                sim_schedule(sim, p->busy_until, p, EV_TX_DONE);
            } else if (fe_evq_key(&sim->q, p->busy_until, &p->txdone_key))
                sim_fail(sim);
            else
                p->txdone_reserved = true;
            return;
        }
    }
    arm_tx_done(sim, p);
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
        sim_qdisc_dequeue(sim, p, pkt, p->tc[pkt->prio].q.bytes);
    }
    sim_link_send(sim, p, pkt);
    after_send(sim, p);
}

void sim_port_tx_done(struct fe_sim *sim, struct sim_port *p)
{
    p->txdone_pending = false;
    sim_wake_port_owner(sim, p);
}

/* The frame leaves at once on the idle port out, as enqueue + sim_port_kick would send it, without
 * the round trip through the queue (most ACK hops, many data hops). Its queue is empty, as all the
 * port's are (port_idle_for): nothing to mark on, and no need to read it; nothing waits behind
 * the frame, so the transmitter's end is no event (but with ns-3 timing: there every frame's). */
static void send_now(struct fe_sim *sim, struct sim_port *out, struct sim_pkt *pkt)
{
    if (pkt->frame_bytes > out->max_queue_bytes) out->max_queue_bytes = pkt->frame_bytes;
    sim_qdisc_pass(sim, out, pkt);
    sim_link_send(sim, out, pkt);
    if (sim->ns3_frames) after_send(sim, out);
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
    sim_qdisc_enqueue(sim, out, pkt);
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
