/* Host: a NIC with one port that runs feroce's real fe_qp requesters and responders.
 *
 * Each flow is a connected pair of QPs: the requester on the source host (with the flow's CCA
 * and pacer inside fe_qp) and the responder on the destination host, whose memory region is a
 * sink (fe_mr.base NULL) and whose WRs carry virtual payload (fe_wr.data NULL). The NIC's
 * scheduler serves ready QPs (fe_qp_next_deadline <= now) round robin, one frame per
 * transmitter slot; QPs waiting for a later deadline sit in a min-heap with one wake-up event
 * for the host. A frame of a priority paused by PFC waits in the port's queue (one per QP at
 * most: that QP is not polled again until it leaves). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"
#include "transport/qp_sim.h"

#define NOPOS         UINT32_MAX
#define COLD          __attribute__((cold, noinline))
#define ALWAYS_INLINE inline __attribute__((always_inline)) /* hot, a few callers */

static inline uint32_t qp_slot(const struct sim_qp *sq)
{
    return sq->qpn & MAX_SLOTS;
}

/* ---- deadline heap ----
 * A 4-ary min-heap of (deadline, QPN) keys held in the array itself, with each QP's position in
 * h->tpos (by slot, valid while sq->timed): sifting reads and writes the host's two arrays only,
 * never a QP (the fat-tree has 127 QPs per host under timers, scattered in memory). The order is
 * total (QPNs are unique on a host), so due QPs leave in the same order whatever the heap's
 * shape. */
#define HEAP_ARITY 4

static inline bool timer_before(const struct sim_timer *a, const struct sim_timer *b)
{
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->qpn < b->qpn);
}

static inline void timer_put(struct sim_host *h, uint32_t i, struct sim_timer t)
{
    h->timers[i] = t;
    h->tpos[t.qpn & MAX_SLOTS] = i;
}

/* Places t at position i or above it. */
static void timer_sift_up(struct sim_host *h, uint32_t i, struct sim_timer t)
{
    while (i > 0) {
        uint32_t parent = (i - 1) / HEAP_ARITY;
        if (!timer_before(&t, &h->timers[parent])) break;
        timer_put(h, i, h->timers[parent]);
        i = parent;
    }
    timer_put(h, i, t);
}

/* Places t at position i or below it. */
static void timer_sift_down(struct sim_host *h, uint32_t i, struct sim_timer t)
{
    uint32_t n = h->n_timers;
    for (;;) {
        uint32_t first = HEAP_ARITY * i + 1;
        if (first >= n) break;
        uint32_t end = n - first > HEAP_ARITY ? first + HEAP_ARITY : n;
        uint32_t best = first;
        for (uint32_t c = first + 1; c < end; c++)
            if (timer_before(&h->timers[c], &h->timers[best])) best = c;
        if (!timer_before(&h->timers[best], &t)) break;
        timer_put(h, i, h->timers[best]);
        i = best;
    }
    timer_put(h, i, t);
}

/* Puts t, whose key may have changed, at position i and restores the heap around it. */
static void timer_place(struct sim_host *h, uint32_t i, struct sim_timer t)
{
    if (i > 0 && timer_before(&t, &h->timers[(i - 1) / HEAP_ARITY]))
        timer_sift_up(h, i, t);
    else
        timer_sift_down(h, i, t);
}

static void timer_add(struct sim_host *h, struct sim_qp *sq, uint64_t deadline)
{
    /* timers has room for every slot: sized with qps */
    sq->timed = true;
    uint32_t i = h->n_timers++;
    timer_sift_up(h, i, (struct sim_timer){.deadline = deadline, .qpn = sq->qpn});
}

/* Takes out the entry at position i, whose QP has been marked untimed. */
static void timer_remove_at(struct sim_host *h, uint32_t i)
{
    struct sim_timer last = h->timers[--h->n_timers];
    if (i < h->n_timers) timer_place(h, i, last);
}

static void timer_remove(struct sim_host *h, struct sim_qp *sq)
{
    sq->timed = false;
    timer_remove_at(h, h->tpos[qp_slot(sq)]);
}

/* The QP with the earliest deadline (there must be one), taken out. */
static struct sim_qp *timer_pop(struct sim_host *h)
{
    struct sim_qp *sq = h->qps[h->timers[0].qpn & MAX_SLOTS];
    sq->timed = false;
    timer_remove_at(h, 0);
    return sq;
}

static void timer_move(struct sim_host *h, struct sim_qp *sq, uint64_t deadline)
{
    uint32_t i = h->tpos[qp_slot(sq)];
    struct sim_timer t = h->timers[i];
    t.deadline = deadline;
    timer_place(h, i, t);
}

/* ---- ready FIFO ---- */

static void ready_push(struct sim_host *h, struct sim_qp *sq)
{
    sq->in_ready = true;
    sq->ready_next = NULL;
    if (h->ready_tail) {
        h->ready_tail->ready_next = sq;
        h->ready_tail->ready_next_qp = sq->qp;
    } else
        h->ready_head = sq;
    h->ready_tail = sq;
}

static struct sim_qp *ready_pop(struct sim_host *h)
{
    struct sim_qp *sq = h->ready_head;
    if (!sq) return NULL;
    h->ready_head = sq->ready_next;
    if (!h->ready_head) {
        h->ready_tail = NULL;
    } else {
        /* what the next pop's QP sends from: with many QPs, not in cache */
        __builtin_prefetch(h->ready_head);
        if (sq->ready_next_qp) fe_qp_prefetch_tx(sq->ready_next_qp);
    }
    sq->in_ready = false;
    sq->ready_next = NULL;
    return sq;
}

/* ---- scheduling ---- */

static void arm_wake(struct fe_sim *sim, struct sim_host *h)
{
    if (!h->n_timers) return;
    uint64_t t = h->timers[0].deadline;
    if (t < sim->now) t = sim->now;
    if (t < h->wake_at) {
        h->wake_at = t;
        sim_schedule(sim, t, h, EV_HOST_WAKE);
    }
}

static void ensure_txdone(struct fe_sim *sim, struct sim_port *p)
{
    if (p->txdone_pending) return;
    p->txdone_pending = true;
    sim_schedule(sim, p->busy_until, p, EV_TX_DONE);
}

/* Re-reads the QP's deadline and files it as ready or under a timer. Never called for a dead
 * QP: those are in neither the heap nor h->qps, nor a frame's owner. */
static ALWAYS_INLINE void sched_update(struct fe_sim *sim, struct sim_host *h, struct sim_qp *sq)
{
    uint64_t d = fe_qp_next_deadline(sq->qp), filed = sq->deadline; /* its key when timed */
    sq->deadline = d;
    if (d <= sim->now) {
        if (sq->timed) timer_remove(h, sq);
        if (!sq->in_ready && !sq->held) ready_push(h, sq);
    } else if (d == FE_NO_DEADLINE) {
        if (sq->timed) timer_remove(h, sq);
    } else if (!sq->in_ready) {
        if (!sq->timed)
            timer_add(h, sq, d);
        else if (d != filed) /* most ACKs leave the pacer's release where it was */
            timer_move(h, sq, d);
    }
}

/* ---- QPs of a host ---- */

int sim_host_init(struct fe_sim *sim, struct sim_host *h)
{
    (void)sim;
    h->port = &h->node->ports[0];
    h->node_id = h->node->id;
    h->wake_at = FE_SIM_NO_TIME;
    h->next_sport = 10000;
    return 0;
}

static void free_qp_struct(struct sim_qp *sq)
{
    free(sq);
}

void sim_host_free(struct sim_host *h)
{
    for (uint32_t i = 0; i < h->n_qps; i++) {
        struct sim_qp *sq = h->qps[i];
        if (!sq) continue;
        if (sq->qp) fe_qp_destroy(sq->qp);
        if (!sq->in_ready) free_qp_struct(sq);
        h->qps[i] = NULL;
    }
    /* zombies still queued as ready */
    struct sim_qp *z;
    while ((z = ready_pop(h))) free_qp_struct(z);
    free(h->homa_in);
    h->homa_in = NULL;
    h->n_homa_in = h->cap_homa_in = 0;
    free(h->qps);
    free(h->timers);
    free(h->tpos);
    free(h->free_slots);
    free(h->gens);
    h->qps = NULL;
    h->timers = NULL;
    h->tpos = NULL;
    h->free_slots = NULL;
    h->gens = NULL;
    h->n_qps = h->cap_qps = h->n_free = 0;
}

static int alloc_slot(struct sim_host *h, uint32_t *slot)
{
    if (h->n_free) {
        *slot = h->free_slots[--h->n_free];
        return 0;
    }
    if (h->n_qps >= MAX_SLOTS) return FE_ENOSPC;
    if (h->n_qps == h->cap_qps) {
        uint32_t cap = h->cap_qps ? h->cap_qps * 2 : 8;
        if (cap > MAX_SLOTS) cap = MAX_SLOTS;
        struct sim_qp **q = realloc(h->qps, cap * sizeof(*q));
        if (!q) return FE_ENOMEM;
        h->qps = q;
        struct sim_timer *t = realloc(h->timers, cap * sizeof(*t));
        if (!t) return FE_ENOMEM;
        h->timers = t;
        uint32_t *tp = realloc(h->tpos, cap * sizeof(*tp));
        if (!tp) return FE_ENOMEM;
        h->tpos = tp;
        uint32_t *fs = realloc(h->free_slots, cap * sizeof(*fs));
        if (!fs) return FE_ENOMEM;
        h->free_slots = fs;
        uint8_t *g = realloc(h->gens, cap);
        if (!g) return FE_ENOMEM;
        h->gens = g;
        h->cap_qps = cap;
    }
    *slot = h->n_qps++;
    h->qps[*slot] = NULL;
    h->gens[*slot] = 0;
    return 0;
}

/* Takes the QP out of the host; packets still addressed to it are dropped as stale. */
static void release_qp(struct sim_host *h, struct sim_qp *sq)
{
    if (sq->homa_idx != NOPOS) {
        struct sim_qp *last = h->homa_in[--h->n_homa_in];
        h->homa_in[sq->homa_idx] = last;
        last->homa_idx = sq->homa_idx;
        sq->homa_idx = NOPOS;
        sq->homa = false;
    }
    if (sq->qp) fe_qp_destroy(sq->qp);
    sq->qp = NULL;
    sq->dead = true;
    if (sq->in_ready) /* (rare) the QP before it in the FIFO must not prefetch the freed one */
        for (struct sim_qp *k = h->ready_head; k; k = k->ready_next)
            if (k->ready_next == sq) k->ready_next_qp = NULL;
    if (sq->timed) timer_remove(h, sq);
    if (sq->held) {
        struct sim_port *p = h->port;
        for (int prio = 0; prio < FE_SIM_PRIOS; prio++)
            for (struct sim_pkt *k = p->tc[prio].q.head; k; k = k->next)
                if (k->owner == sq) k->owner = NULL;
    }
    h->qps[qp_slot(sq)] = NULL;
    h->free_slots[h->n_free++] = qp_slot(sq);
    if (!sq->in_ready) free_qp_struct(sq); /* else freed when the ready FIFO reaches it */
}

/* Takes the requester's completions out of its CQ: bytes done; false when one failed. */
static bool drain_cq(struct sim_flow *f, struct sim_qp *sq)
{
    enum { BATCH = 64 };
    struct fe_cqe cqe[BATCH];
    int n;
    bool ok = true;
    do { /* fewer than asked for: the CQ is empty */
        n = fe_qp_poll_cq(sq->qp, cqe, BATCH);
        for (int i = 0; i < n; i++) {
            if (cqe[i].status == FE_WC_SUCCESS)
                f->done_bytes += cqe[i].byte_len;
            else
                ok = false;
        }
    } while (n == BATCH);
    return ok;
}

void sim_flow_counters(const struct sim_flow *f, struct sim_flow_counts *out)
{
    *out = f->ctr;
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

static void flow_finish(struct fe_sim *sim, struct sim_flow *f)
{
    sim_flow_sync_counters(f);
    f->done = true;
    f->finish_ns = sim->now;
    if (++sim->flows_done == sim->n_flows) sim->halt |= SIM_HALT_ALL_DONE;
    sim->flows_active--;
    if (sim->window_auto_end && !sim->window_closed && sim->window_opened) sim_window_close(sim);
    struct sim_qp *req = f->req, *resp = f->resp;
    f->req = f->resp = NULL;
    if (req) release_qp(req->host, req);
    if (resp) release_qp(resp->host, resp);
    sim_phase_mark(sim);
}

/* How many unstarted WRs a requester's send queue holds: the QP starts at most one WR per
 * packet it sends, and the simulator tops the queue up after each one (top_up), so the QP never
 * finds it empty, nor the next WR missing when its pacer prices the packet after this one.
 * Keeping only a few posted (rather than the whole replay buffer's worth) keeps the send and
 * completion rings that the QP touches per packet in the cache. */
#define SQ_LOOKAHEAD    32
#define SQ_REFILL_BELOW 8

/* Posts message WRs until the requester holds SQ_LOOKAHEAD unstarted ones, as far as the flow
 * has bytes and the QP has room (asking fe_qp_post_send to be refused would cost more). */
static ALWAYS_INLINE void post_more(struct sim_flow *f, struct sim_qp *sq)
{
    uint64_t msg = f->spec.msg_bytes ? f->spec.msg_bytes : (1u << 30);
    uint32_t unstarted = fe_qp_sq_unstarted(sq->qp), room = fe_qp_sq_room(sq->qp);
    uint32_t want = unstarted < SQ_LOOKAHEAD ? SQ_LOOKAHEAD - unstarted : 0;
    for (uint32_t n = want < room ? want : room; n && f->posted_bytes < f->spec.bytes; n--) {
        uint64_t len = f->spec.bytes - f->posted_bytes;
        if (len > msg) len = msg;
        struct fe_wr wr = {.op = FE_WR_WRITE,
                           .cookie = len,
                           .data = NULL,
                           .len = (uint32_t)len,
                           .remote_offset = f->posted_bytes};
        if (fe_qp_post_send(sq->qp, &wr)) break;
        f->posted_bytes += len;
    }
    sq->all_posted = f->posted_bytes >= f->spec.bytes;
}

/* A requester's completions: bytes done, more WRs posted; the flow finishes when all are done
 * or the QP failed. Returns false when the QP was released. */
static bool collect_completions(struct fe_sim *sim, struct sim_qp *sq)
{
    sq->completed_seen = fe_qp_counters(sq->qp)->tx_msgs_completed;
    struct sim_flow *f = &sim->flows[sq->flow];
    bool ok = drain_cq(f, sq);
    if (!ok || fe_qp_state(sq->qp) == FE_QPS_ERROR) {
        f->failed = true;
        flow_finish(sim, f);
        return false;
    }
    if (f->done_bytes >= f->spec.bytes) {
        flow_finish(sim, f);
        return false;
    }
    post_more(f, sq);
    return true;
}

/* After a requester sent a packet: the send queue topped up when it runs low. The completions
 * are taken out of the CQ first, so that the CQ always has room for what is posted (the QP keeps
 * at most its send queue's depth of WRs posted and not yet drained). A failed WR leaves the QP
 * in error, which after_qp_event sees at its next event. */
static ALWAYS_INLINE void top_up(struct fe_sim *sim, struct sim_qp *sq)
{
    if (fe_qp_sq_unstarted(sq->qp) >= SQ_REFILL_BELOW || sq->all_posted) return;
    struct sim_flow *f = &sim->flows[sq->flow];
    sq->completed_seen = fe_qp_counters(sq->qp)->tx_msgs_completed;
    (void)drain_cq(f, sq);
    post_more(f, sq);
}

/* After anything happened to a QP: collect completions (requester), then reschedule. */
static ALWAYS_INLINE void after_qp_event(struct fe_sim *sim, struct sim_host *h, struct sim_qp *sq)
{
    /* Completions are handled here once the flow's last WRs are posted (it ends at its last
     * completion: most ACKs complete nothing new), or when the QP failed (its WRs are flushed in
     * error); before that, top_up drains them. */
    if (sq->requester &&
        ((sq->all_posted && fe_qp_counters(sq->qp)->tx_msgs_completed != sq->completed_seen) ||
         fe_qp_state(sq->qp) == FE_QPS_ERROR)) {
        if (!collect_completions(sim, sq)) return;
    }
    sched_update(sim, h, sq);
}

/* Completes a frame whose fe_pkt fe_qp_tx has just written (pkt->pkt): the simulator's fields,
 * and its INT records copied into the frame's own storage. */
static ALWAYS_INLINE void finish_pkt(struct fe_sim *sim, struct sim_qp *sq, struct sim_pkt *pkt)
{
    struct fe_pkt *fp = &pkt->pkt;
    const struct fe_int *md = fp->int_md; /* the QP's, valid until its next call */
    fp->payload = NULL;
    fp->int_md = NULL;
    struct fe_int *own = sim_pkt_int(sim, pkt);
    if (md && md->nhops && own) {
        *own = *md;
        if (own->nhops > FE_INT_MAX_HOPS) own->nhops = FE_INT_MAX_HOPS;
        fp->int_md = own;
    }
    pkt->kind = PKT_ROCE;
    pkt->flow = sq->flow;
    pkt->dst = sq->route_dst;
    pkt->hash = sq->route_hash;
    pkt->owner = NULL;
    uint8_t prio = fp->pcp & 7;
    if (fp->bth.opcode == FE_OP_ACK && sim->ack_pcp != sim->data_pcp) prio = sim->ack_pcp;
    if (fp->bth.opcode == FE_OP_CNP) sim->st.cnps++;
    pkt->prio = prio;
    pkt->frame_bytes = sim_frame_bytes(sim, fp);
}

/* The port's queue holds frames of QPs whose priority was paused: the first one allowed
 * leaves, and its QP may be served again. */
static COLD void send_queued(struct fe_sim *sim, struct sim_host *h, struct sim_port *p, uint8_t ok)
{
    struct sim_pkt *pkt = sim_port_dequeue(p, sim_top_prio(ok));
    struct sim_qp *owner = pkt->owner;
    pkt->owner = NULL;
    sim_link_send(sim, p, pkt);
    if (owner) {
        owner->held = false;
        sched_update(sim, h, owner);
        arm_wake(sim, h);
    }
}

/* A ready QP's frame whose priority is paused waits in the port's queue; the QP is not served
 * until it leaves. */
static COLD void hold_pkt(struct fe_sim *sim, struct sim_port *p, struct sim_qp *sq,
                          struct sim_pkt *pkt)
{
    pkt->owner = sq;
    sq->held = true;
    sim_port_enqueue(sim, p, pkt);
}

/* A ready QP had nothing to send. */
static COLD void sent_nothing(struct fe_sim *sim, struct sim_host *h, struct sim_qp *sq,
                              struct sim_pkt *pkt)
{
    sim_pkt_free(sim, pkt);
    uint64_t d = fe_qp_next_deadline(sq->qp);
    if (d <= sim->now) {
        /* The QP claims work but yields nothing: look again 1 ns later rather than spin
         * (counted; a correct QP never does this). */
        sim->st.qp_stalls++;
        sq->deadline = sim->now + 1;
        if (sq->timed)
            timer_move(h, sq, sq->deadline);
        else
            timer_add(h, sq, sq->deadline);
    } else {
        sched_update(sim, h, sq);
    }
}

static ALWAYS_INLINE void kick(struct fe_sim *sim, struct sim_host *h)
{
    struct sim_port *p = h->port;
    if (p->busy_until > sim->now) {
        if (p->nonempty || h->ready_head) ensure_txdone(sim, p);
        return;
    }
    uint8_t allowed = sim_pfc_allowed(sim, p);
    if (p->nonempty & allowed) {
        send_queued(sim, h, p, p->nonempty & allowed);
    } else {
        struct sim_qp *sq;
        bool sent = false;
        while (!sent && (sq = ready_pop(h))) {
            if (sq->dead) {
                free_qp_struct(sq);
                continue;
            }
            /* the QP writes its packet straight into a frame (returned if it has none) */
            struct sim_pkt *pkt = sim_pkt_alloc(sim);
            if (!pkt) return;
            int n = fe_qp_tx(sq->qp, sim->now, &pkt->pkt);
            if (n != 1 && sq->deadline <= sim->now) {
                /* a timer may be what is due: run it and ask again */
                fe_qp_handle_expiry(sq->qp, sim->now);
                n = fe_qp_tx(sq->qp, sim->now, &pkt->pkt);
            }
            if (n != 1) {
                sent_nothing(sim, h, sq, pkt);
                continue;
            }
            finish_pkt(sim, sq, pkt);
            if (sq->requester) top_up(sim, sq);
            if (allowed >> pkt->prio & 1) {
                sim_link_send(sim, p, pkt);
                sent = true;
            } else {
                hold_pkt(sim, p, sq, pkt);
            }
            sched_update(sim, h, sq);
        }
        arm_wake(sim, h);
        if (!sent) return;
    }
    if ((p->nonempty & sim_pfc_allowed(sim, p)) || h->ready_head) ensure_txdone(sim, p);
}

void sim_host_wake(struct fe_sim *sim, struct sim_host *h)
{
    if (h->wake_at <= sim->now) h->wake_at = FE_SIM_NO_TIME;
    while (h->n_timers && h->timers[0].deadline <= sim->now) {
        struct sim_qp *sq = timer_pop(h);
        fe_qp_handle_expiry(sq->qp, sim->now);
        after_qp_event(sim, h, sq);
    }
    arm_wake(sim, h);
    kick(sim, h);
}

void sim_host_kick(struct fe_sim *sim, struct sim_host *h)
{
    kick(sim, h);
}

/* Homa's receiver: grant one round trip of bytes beyond what arrived to the two incoming flows
 * with the fewest bytes left (SRPT with an overcommitment of 2); grants only grow. */
#define HOMA_OVERCOMMIT 2
static void homa_schedule(struct fe_sim *sim, struct sim_host *h)
{
    struct sim_qp *best[HOMA_OVERCOMMIT] = {NULL};
    uint64_t left[HOMA_OVERCOMMIT] = {UINT64_MAX, UINT64_MAX};
    for (uint32_t i = 0; i < h->n_homa_in; i++) {
        struct sim_qp *sq = h->homa_in[i];
        uint64_t bytes = sim->flows[sq->flow].spec.bytes, rx = fe_qp_counters(sq->qp)->rx_bytes;
        uint64_t l = bytes > rx ? bytes - rx : 0;
        if (!l) continue;
        for (int k = 0; k < HOMA_OVERCOMMIT; k++) {
            if (l < left[k]) {
                for (int m = HOMA_OVERCOMMIT - 1; m > k; m--) {
                    left[m] = left[m - 1];
                    best[m] = best[m - 1];
                }
                left[k] = l;
                best[k] = sq;
                break;
            }
        }
    }
    for (int k = 0; k < HOMA_OVERCOMMIT && best[k]; k++) {
        struct sim_qp *sq = best[k];
        uint64_t bytes = sim->flows[sq->flow].spec.bytes;
        uint64_t g = fe_qp_counters(sq->qp)->rx_bytes + sq->homa_rtt_bytes;
        if (g > bytes) g = bytes;
        if (g > sq->homa_grant) {
            sq->homa_grant = g;
            fe_qp_set_grant(sq->qp, g);
            sched_update(sim, h, sq);
        }
    }
}

/* A host with more QPs than this looks ahead at each arrival (prefetch_next_arrival); with
 * fewer, their state stays in cache and the lookahead would only cost instructions. */
#define LOOKAHEAD_MIN_QPS 32

/* Starts loading the record of the QP the next frame on the host's wire is for: in a fabric of
 * many QPs it is not in cache, and its first read (then its fe_qp's, on the same pages) was the
 * costliest line of the receive path. Called at the end of an arrival: the next frame, which
 * sim_link_arrive prefetched at its start, has arrived in the cache by then. */
static ALWAYS_INLINE void prefetch_next_arrival(const struct sim_host *h)
{
    if (h->n_qps < LOOKAHEAD_MIN_QPS) return;
    const struct sim_pkt *next = h->port->wire_head;
    if (!next || next->kind != PKT_ROCE) return;
    uint32_t slot = next->pkt.bth.dqpn & MAX_SLOTS;
    if (slot < h->n_qps) __builtin_prefetch(h->qps[slot]);
}

void sim_host_receive(struct fe_sim *sim, struct sim_host *h, struct sim_pkt *pkt)
{
    struct sim_port *port = h->port;
    if (pkt->kind == PKT_PFC) {
        sim_pfc_receive(sim, port, pkt);
        sim_pkt_free(sim, pkt);
        return;
    }
    if (pkt->kind == PKT_TEST) {
        if (sim->test_rx) sim->test_rx(sim->test_user, h->node_id, pkt, sim->now);
        sim_pkt_free(sim, pkt);
        return;
    }
    uint32_t qpn = pkt->pkt.bth.dqpn;
    uint32_t slot = qpn & MAX_SLOTS;
    struct sim_qp *sq = slot < h->n_qps ? h->qps[slot] : NULL;
    if (!sq || sq->qpn != qpn) {
        sim->st.drops[FE_SIM_DROP_NO_QP]++;
        sim_pkt_free(sim, pkt);
        return;
    }
    const struct fe_int *md = sim_pkt_int(sim, pkt);
    pkt->pkt.int_md = md && md->nhops ? md : NULL;
    /* (the data packets delivered are the responders' rx_pkts, summed by fe_sim_stats) */
    if (fe_qp_rx(sq->qp, sim->now, &pkt->pkt) < 0) sim->st.drops[FE_SIM_DROP_QP]++;
    sim_pkt_free(sim, pkt);
    bool homa = sq->homa;
    after_qp_event(sim, h, sq);
    if (homa) homa_schedule(sim, h);
    /* An ACK can move a QP's deadline earlier while it stays under a timer (a window CC's
     * window reopens but the pacer holds the packet until later): re-arm the host's wake, or
     * the QP would sleep until its previous, later deadline (the retransmit timer). */
    arm_wake(sim, h);
    if (h->ready_head) kick(sim, h);
    prefetch_next_arrival(h);
}

/* ---- flows ---- */

static inline uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t x =
        ((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ull ^ (uint64_t)c * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (uint32_t)x;
}

static uint64_t ser_ns(uint64_t bytes, uint64_t rate_bps)
{
    return (bytes * 8u * 1000000000u + rate_bps - 1) / rate_bps;
}

/* Follows the way the switches route from host src to host dst for an ECMP hash (sim_route):
 * its unloaded RTT, bottleneck rate and HPCC pair RTT; FE_EINVAL when it does not reach dst
 * (the routes are shortest paths: at most one hop per node). */
static int walk_path(struct fe_sim *sim, uint32_t src, uint32_t dst, uint32_t hash,
                     uint32_t payload, uint64_t *rtt_out, uint64_t *rate_out,
                     uint64_t *hpcc_rtt_out)
{
    uint32_t n = 0;
    uint64_t data_frame = sim->max_frame_bytes + sim->ifg;
    struct fe_pkt ack;
    memset(&ack, 0, sizeof(ack));
    ack.bth.opcode = FE_OP_ACK;
    uint64_t ack_frame = sim_frame_bytes(sim, &ack) + sim->ifg;
    struct sim_port *p = &sim->nodes[src].ports[0];
    uint64_t rtt = 0, rate = UINT64_MAX, hpcc_rtt = 0;
    for (;;) {
        rtt += 2 * p->delay_ns + ser_ns(data_frame, p->rate_bps) + ser_ns(ack_frame, p->rate_bps);
        /* HPCC's pairRtt: delays and the payload's serialization only, truncated per hop */
        hpcc_rtt += 2 * p->delay_ns + (uint64_t)payload * 8000000000u / p->rate_bps;
        if (p->rate_bps < rate) rate = p->rate_bps;
        struct sim_node *nd = p->peer->node;
        if (!nd->is_switch) break;
        p = sim_route(nd->sw, dst, hash);
        if (!p || ++n > sim->n_nodes) return FE_EINVAL;
    }
    if (p->peer->node->id != dst) return FE_EINVAL;
    if (rtt_out) *rtt_out = rtt;
    if (rate_out) *rate_out = rate;
    if (hpcc_rtt_out) *hpcc_rtt_out = hpcc_rtt;
    return 0;
}

int sim_flow_path_info(struct fe_sim *sim, struct sim_flow *f)
{
    struct sim_host *hs = sim->nodes[f->spec.src].host;
    if (!f->spec.sport) f->spec.sport = (uint16_t)(hs->next_sport++ & 0xFFFF);
    f->hash_fwd = hash3(f->spec.src, f->spec.dst, f->spec.sport);
    f->hash_rev = hash3(f->spec.dst, f->spec.src, f->spec.sport);
    uint64_t rtt = 0, rate = 0, hpcc_rtt = 0;
    /* payload per packet: the MTU, or the message size when messages are smaller */
    uint32_t pay = sim->sc.host.mtu_bytes;
    if (f->spec.msg_bytes && f->spec.msg_bytes < pay) pay = f->spec.msg_bytes;
    int rc = walk_path(sim, f->spec.src, f->spec.dst, f->hash_fwd, pay, &rtt, &rate, &hpcc_rtt);
    if (!rc) rc = walk_path(sim, f->spec.dst, f->spec.src, f->hash_rev, pay, NULL, NULL, NULL);
    if (rc) return rc;
    f->base_rtt_ns = rtt;
    f->path_rate_bps = rate;
    uint64_t pkts = (f->spec.bytes + pay - 1) / pay;
    if (sim->ns3_frames) {
        /* HPCC's own formula (third.cc qp_finish), so that fct / standalone compares: its pair
         * RTT plus the bytes with 48 header bytes per packet at the bottleneck rate */
        uint64_t wire = f->spec.bytes + pkts * 48u;
        f->standalone_fct_ns = (double)hpcc_rtt + floor((double)(wire * 8u) * 1e9 / (double)rate);
        return 0;
    }
    uint64_t per_pkt = sim->max_frame_bytes + sim->ifg - sim->sc.host.mtu_bytes;
    double wire = (double)f->spec.bytes + (double)pkts * (double)per_pkt;
    f->standalone_fct_ns = (double)rtt + wire * 8e9 / (double)rate;
    return 0;
}

static struct sim_qp *new_qp(struct fe_sim *sim, struct sim_host *h, uint32_t flow, bool requester,
                             int *rc)
{
    uint32_t slot;
    *rc = alloc_slot(h, &slot);
    if (*rc) return NULL;
    /* aligned: its hot first half is one cache line */
    struct sim_qp *sq = aligned_alloc(_Alignof(struct sim_qp), sizeof(*sq));
    if (sq) memset(sq, 0, sizeof(*sq));
    if (!sq) {
        h->free_slots[h->n_free++] = slot;
        *rc = FE_ENOMEM;
        return NULL;
    }
    (void)sim;
    sq->host = h;
    sq->flow = flow;
    sq->requester = requester;
    h->gens[slot] = (uint8_t)(h->gens[slot] == 255 ? 1 : h->gens[slot] + 1);
    sq->qpn = (uint32_t)h->gens[slot] << SLOT_BITS | slot;
    sq->homa_idx = NOPOS;
    return sq;
}

static void fill_path(struct fe_path *path, uint32_t src_node, uint32_t dst_node, uint16_t sport)
{
    memset(path, 0, sizeof(*path));
    path->ipver = 4;
    path->src_ip4 = 0x0B000001u + (src_node << 8); /* 11.0.x.1: HPCC's host id = (ip >> 8) */
    path->dst_ip4 = 0x0B000001u + (dst_node << 8);
    path->src_mac[0] = path->dst_mac[0] = 0x02;
    path->src_mac[5] = (uint8_t)src_node;
    path->dst_mac[5] = (uint8_t)dst_node;
    path->udp_sport = sport;
}

int sim_flow_start(struct fe_sim *sim, uint32_t fi)
{
    struct sim_flow *f = &sim->flows[fi];
    const struct fe_sim_scenario *sc = &sim->sc;
    const struct fe_sim_host_cfg *hc = &sc->host;
    struct sim_host *hs = sim->nodes[f->spec.src].host, *hd = sim->nodes[f->spec.dst].host;
    int rc;
    struct sim_qp *a = new_qp(sim, hs, fi, true, &rc);
    if (!a) return rc;
    struct sim_qp *b = new_qp(sim, hd, fi, false, &rc);
    if (!b) {
        hs->free_slots[hs->n_free++] = qp_slot(a);
        free(a);
        return rc;
    }
    a->route_dst = f->spec.dst;
    a->route_hash = f->hash_fwd;
    b->route_dst = f->spec.src;
    b->route_hash = f->hash_rev;

    const struct fe_sim_cc *cc = &sc->cc[f->spec.cc];
    bool per_packet_acks = sim->cc_acks_every_pkt[f->spec.cc];
    uint64_t line = hs->node->ports[0].rate_bps;
    if (sim->ns3_frames) {
        /* ns-3's NIC paces a QP's packets Seconds(size / rate) apart, cut to whole ns as its
         * links are (link.c): at line rate it sends back to back. The line rate of the QP (its
         * CC's ceiling, its pacer's rate there) is therefore the rate of those frames: 1048
         * bytes every 838 ns at 10 Gb/s, not 838.4, which would idle the link 0.4 ns a frame */
        uint32_t pay = sim->sc.host.mtu_bytes;
        if (f->spec.msg_bytes && f->spec.msg_bytes < pay) pay = f->spec.msg_bytes;
        uint32_t frame = pay + 48 + sim->ns3_int_bytes;
        uint64_t t = sim_link_ns3_ser_ns(line, frame);
        if (t) line = ((uint64_t)frame * 1000000000u + t - 1) / t * 8; /* whole bytes/s */
    }
    uint64_t replay = sim->window_bdp_bytes ? sim->window_bdp_bytes : hc->replay_bytes;
    struct fe_qp_config ca, cb;
    fe_qp_config_default(&ca);
    ca.local_qpn = a->qpn;
    ca.remote_qpn = b->qpn;
    ca.sq_psn = 0;
    ca.rq_psn = 0;
    ca.remote_va = 0x100000;
    ca.remote_rkey = 0x5151;
    ca.mtu_bytes = hc->mtu_bytes;
    fill_path(&ca.path, f->spec.src, f->spec.dst, f->spec.sport);
    ca.dscp = hc->data_dscp;
    ca.pcp = f->spec.prio;
    ca.data_ecn = sc->sw.ecn ? FE_ECN_ECT0 : FE_ECN_NOT_ECT;
    if (replay) ca.replay_bytes = replay; /* else the QP's default (2 MiB) */
    /* enough WRs to fill the replay buffer with messages, and room for their completions */
    uint64_t msg = f->spec.msg_bytes ? f->spec.msg_bytes : (1u << 30);
    uint64_t sq = (replay ? replay : ca.replay_bytes) / msg + 8;
    if (sq > 65536) sq = 65536;
    ca.sq_depth = (uint32_t)sq;
    ca.rq_depth = 1;
    ca.cq_depth = (uint32_t)sq + 16;
    ca.max_mr = 1;
    ca.ack_timeout_ns = hc->ack_timeout_ns;
    ca.retry_cnt = hc->retry_cnt;
    ca.rnr_retry = 7;
    /* HPCC and Homa: an ACK per packet, as their models have (see sim_create) */
    ca.ackreq_every = per_packet_acks ? 1 : hc->ackreq_every;
    ca.ack_every = per_packet_acks ? 1 : hc->ack_every;
    ca.np_enable = hc->np_enable;
    ca.cnp_interval_ns = hc->cnp_interval_ns;
    ca.cnp_dscp = hc->cnp_dscp;
    ca.cnp_pcp = hc->cnp_pcp;
    ca.cc_algo = cc->algo;
    ca.cc_params = cc->algo ? &cc->params : NULL;
    ca.line_rate_bps = line;
    ca.base_rtt_ns = f->base_rtt_ns;
    ca.pacer_burst_bytes = hc->pacer_burst_bytes;
    struct fe_qp_sim_config sa = {.np_ecn_echo_on_ack = hc->ecn_echo_on_ack}, sb;
    /* the pacer counts the frames as the links carry them (HPCC ns-3: payload + 48 + INT) */
    if (sim->ns3_frames) sa.frame_overhead_bytes = 48 + sim->ns3_int_bytes;
    sb = sa;
    cb = ca;
    cb.local_qpn = b->qpn;
    cb.remote_qpn = a->qpn;
    fill_path(&cb.path, f->spec.dst, f->spec.src, f->spec.sport);
    cb.cc_algo = NULL;
    cb.cc_params = NULL;
    cb.replay_bytes = 65536;
    cb.sq_depth = 1;
    cb.cq_depth = 16;
    cb.line_rate_bps = hd->node->ports[0].rate_bps;
    sb.int_echo = sim->int_enable; /* the responder echoes INT on its ACKs (HPCC) */
    int err = 0;
    const char *why = NULL;
    a->qp = fe_qp_create_sim(&ca, &sa, sim->now, &err, &why);
    if (a->qp) b->qp = fe_qp_create_sim(&cb, &sb, sim->now, &err, &why);
    if (!a->qp || !b->qp) {
        sim->create_err = err ? err : FE_ENOMEM;
        sim->create_why = why;
        release_qp(hs, a);
        release_qp(hd, b);
        return sim->create_err;
    }
    struct fe_mr mr = {.rkey = 0x5151, .va = 0x100000, .len = f->spec.bytes, .base = NULL};
    rc = fe_qp_reg_mr(b->qp, &mr);
    if (rc) {
        release_qp(hs, a);
        release_qp(hd, b);
        return rc;
    }
    if (cc->algo && !strcmp(cc->algo->name, "homa")) {
        /* the receiver grants this flow (homa_schedule): RTTbytes as the sender computes it */
        int k = fe_cc_param_index(cc->algo, "rtt_bytes");
        uint64_t rb = k >= 0 ? (uint64_t)cc->params.v[k] : 0;
        if (!rb) rb = (uint64_t)((double)line * (double)f->base_rtt_ns / 8e9);
        if (hd->n_homa_in == hd->cap_homa_in) {
            uint32_t cap = hd->cap_homa_in ? hd->cap_homa_in * 2 : 8;
            struct sim_qp **v = realloc(hd->homa_in, cap * sizeof(*v));
            if (!v) {
                release_qp(hs, a);
                release_qp(hd, b);
                return FE_ENOMEM;
            }
            hd->homa_in = v;
            hd->cap_homa_in = cap;
        }
        b->homa_rtt_bytes = rb ? rb : 1;
        b->homa_idx = hd->n_homa_in;
        b->homa = true;
        hd->homa_in[hd->n_homa_in++] = b;
    }
    hs->qps[qp_slot(a)] = a;
    hd->qps[qp_slot(b)] = b;
    f->req = a;
    f->resp = b;
    f->started = true;
    sim->flows_started++;
    sim->flows_active++;
    post_more(f, a);
    sched_update(sim, hs, a);
    sched_update(sim, hd, b);
    arm_wake(sim, hs);
    arm_wake(sim, hd);
    sim_host_kick(sim, hs);
    return 0;
}
