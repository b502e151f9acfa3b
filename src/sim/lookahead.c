/* The run loop's lookahead (large fabrics). There, what an event reads (its port, the frame, the
 * host, the QP's records, the switch's route) has left the caches since the last event there, and
 * each is found through the one before: a chain of misses, one after the other. But a nanosecond
 * holds several events (on a fat-tree most events share their time with the one before), so the run
 * loop takes up to SIM_LOOKAHEAD of them out of the queue ahead of their turn and loads each one's
 * chain a link per event that runs before it: the object when it is taken out, then one link at
 * each of the four events before its turn. The order does not change: the queue holds nothing
 * earlier, and whatever they schedule for the same nanosecond comes after them. Each step starts
 * again from the event's object and reads only what is live now (a QP released meanwhile has left
 * host->qps, a frame taken has left its wire): it loads, it decides nothing. */
#include "sim/state.h"
#include "transport/qp_sim.h"

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

#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE void load_arrive_host(const struct sim_port *to, int s)
{
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
}

static ALWAYS_INLINE void load_arrive(const struct sim_port *to, int s)
{
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
}

static ALWAYS_INLINE void load_tx_done(const struct sim_port *p, int s)
{
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
}

static ALWAYS_INLINE void load_host_wake(const struct sim_host *h, int s)
{
    if (s == 1) {
        PF(h->timers);
        PF(h->ready_head);
        return;
    }
    if (h->n_timers) load_qp(h, h->timers[0].qpn & MAX_SLOTS, s, false);
}

/* Step s (1..4: four events before its turn, down to one) of loading what event ev will read. */
static ALWAYS_INLINE void load_ahead(uint64_t ev, int s)
{
    const void *obj = (const void *)(uintptr_t)(ev & ~EV_KIND_MASK);
    switch ((enum ev_kind)(ev & EV_KIND_MASK)) {
    case EV_ARRIVE_HOST:
        load_arrive_host(obj, s);
        return;
    case EV_ARRIVE:
        load_arrive(obj, s);
        return;
    case EV_TX_DONE:
        load_tx_done(obj, s);
        return;
    case EV_HOST_WAKE:
        load_host_wake(obj, s);
        return;
    default:
        return;
    }
}

/* The next event with the lookahead (0 when none is left up to limit: an event's word holds an
 * object's address): the same events in the same order as the queue's pops. Out of line, and
 * its result in a register: the run loop keeps one dispatch, inlined with what it calls (a
 * second copy would cost the runs without lookahead more instructions) and its event word out
 * of memory. */
__attribute__((noinline)) uint64_t sim_next_lookahead(struct fe_sim *sim, uint64_t limit)
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
     * its step (a loop over them costs more instructions per event than the prefetches save) */
    if (n > 0) load_ahead(sim->la[h], 4);
    if (n > 1) load_ahead(sim->la[(h + 1) % SIM_LOOKAHEAD], 3);
    if (n > 2) load_ahead(sim->la[(h + 2) % SIM_LOOKAHEAD], 2);
    if (n > 3) load_ahead(sim->la[(h + 3) % SIM_LOOKAHEAD], 1);
    return data;
}
