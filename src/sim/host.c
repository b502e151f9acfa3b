/* Host: a NIC with one port that runs feroce's real fe_qp requesters and responders (a flow's
 * pair of QPs is made in flow.c), in slots by QPN, and the receiver's grant scheduler for the
 * flows whose CC needs one (FE_CC_CAP_RX_GRANTS, src/cc/homa_grant.c). The NIC's
 * scheduler serves ready QPs (fe_qp_next_deadline <= now) round robin, one frame per
 * transmitter slot; QPs waiting for a later deadline sit in a min-heap with one wake-up event
 * for the host. A frame of a priority paused by PFC waits in the port's queue (one per QP at
 * most: that QP is not polled again until it leaves). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/eb.h"
#include "sim/flow.h"
#include "sim/sim_internal.h"
#include "transport/qp_sim.h"

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

void sim_host_schedule_qp(struct fe_sim *sim, struct sim_host *h, struct sim_qp *sq)
{
    sched_update(sim, h, sq);
}

void sim_host_arm_wake(struct fe_sim *sim, struct sim_host *h)
{
    arm_wake(sim, h);
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

/* Back to its host's free list (the host's part's thread, or thread 0 while the others wait:
 * as every other change to the host). */
static void free_qp_struct(struct sim_qp *sq)
{
    struct sim_host *h = sq->host;
    sq->ready_next = h->free_qps;
    h->free_qps = sq;
}

/* A chunk of sim_qps onto h's free list: twice the last one's, up to QP_CHUNK_MAX. */
#define QP_CHUNK_MIN 8
#define QP_CHUNK_MAX 1024
static int grow_qp_structs(struct sim_host *h)
{
    uint32_t n = h->qp_chunk_slots ? h->qp_chunk_slots * 2 : QP_CHUNK_MIN;
    if (n > QP_CHUNK_MAX) n = QP_CHUNK_MAX;
    struct sim_qp **v = realloc(h->qp_chunks, (h->n_qp_chunks + 1) * sizeof(*v));
    if (!v) return FE_ENOMEM;
    h->qp_chunks = v;
    /* aligned: a QP's hot first half is one cache line */
    struct sim_qp *c = aligned_alloc(_Alignof(struct sim_qp), n * sizeof(*c));
    if (!c) return FE_ENOMEM;
    v[h->n_qp_chunks++] = c;
    h->qp_chunk_slots = n;
    for (uint32_t i = n; i-- > 0;) { /* the chunk's first comes out first */
        c[i].ready_next = h->free_qps;
        h->free_qps = &c[i];
    }
    return 0;
}

/* A block for the QPs of `bytes` still due (one at least) onto h's list. */
static int grow_qp_mem(struct sim_host *h, size_t bytes)
{
    size_t n = h->qp_mem_due ? h->qp_mem_due : 1;
    if (bytes > SIZE_MAX / n) return FE_ENOMEM;
    void **v = realloc(h->qp_mem_blocks, (h->n_qp_mem_blocks + 1) * sizeof(*v));
    if (!v) return FE_ENOMEM;
    h->qp_mem_blocks = v;
    char *b = aligned_alloc(64, n * bytes);
    if (!b) return FE_ENOMEM;
    v[h->n_qp_mem_blocks++] = b;
    h->qp_mem_next = b;
    h->qp_mem_end = b + n * bytes;
    return 0;
}

void *sim_host_qp_mem(struct sim_host *h, size_t bytes)
{
    bytes = (bytes + 63) & ~(size_t)63;
    if ((size_t)(h->qp_mem_end - h->qp_mem_next) < bytes && grow_qp_mem(h, bytes)) return NULL;
    void *mem = h->qp_mem_next;
    h->qp_mem_next += bytes;
    if (h->qp_mem_due) h->qp_mem_due--;
    return mem;
}

static struct sim_qp *alloc_qp_struct(struct sim_host *h)
{
    if (!h->free_qps && grow_qp_structs(h)) return NULL;
    struct sim_qp *sq = h->free_qps;
    h->free_qps = sq->ready_next;
    memset(sq, 0, sizeof(*sq));
    return sq;
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
    for (uint32_t c = 0; c < h->n_qp_mem_blocks; c++) free(h->qp_mem_blocks[c]);
    free(h->qp_mem_blocks);
    h->qp_mem_blocks = NULL;
    h->n_qp_mem_blocks = h->qp_mem_due = 0;
    h->qp_mem_next = h->qp_mem_end = NULL;
    for (uint32_t c = 0; c < h->n_qp_chunks; c++) free(h->qp_chunks[c]);
    free(h->qp_chunks);
    h->qp_chunks = NULL;
    h->free_qps = NULL;
    h->n_qp_chunks = h->qp_chunk_slots = 0;
    fe_homa_grants_free(&h->grants);
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

void sim_host_install_qp(struct sim_host *h, struct sim_qp *sq)
{
    h->qps[qp_slot(sq)] = sq;
}

void sim_host_release_qp(struct sim_host *h, struct sim_qp *sq)
{
    if (sq->rx_grants) {
        fe_homa_grants_remove(&h->grants, &sq->grant);
        sq->rx_grants = false;
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

/* After anything happened to a QP: collect completions (requester), then reschedule. */
static ALWAYS_INLINE void after_qp_event(struct fe_sim *sim, struct sim_host *h, struct sim_qp *sq)
{
    /* Completions are handled here once the flow's last WRs are posted (it ends at its last
     * completion: most ACKs complete nothing new), or when the QP failed (its WRs are flushed in
     * error); before that, sim_flow_top_up drains them. */
    if (sq->requester &&
        ((sq->all_posted && fe_qp_counters(sq->qp)->tx_msgs_completed != sq->completed_seen) ||
         fe_qp_state(sq->qp) == FE_QPS_ERROR)) {
        if (!sim_flow_collect(sim, sq)) return;
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
    /* ns-3 compatible notification: an ACK with the congestion flag is its CNP */
    if (fp->bth.opcode == FE_OP_CNP || (fp->bth.opcode == FE_OP_ACK && fp->bth.becn))
        sim->st.cnps++;
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
            if (sq->requester) sim_flow_top_up(sim, sq);
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

/* The receiver's grant scheduler after a packet: the messages whose grant grew carry it to
 * their senders on their next ACKs. */
static void schedule_grants(struct fe_sim *sim, struct sim_host *h)
{
    struct fe_homa_msg *grew[FE_HOMA_OVERCOMMIT];
    int n = fe_homa_grants_schedule(&h->grants, grew);
    for (int k = 0; k < n; k++) {
        struct sim_qp *g = grew[k]->user;
        fe_qp_set_grant(g->qp, grew[k]->granted);
        sched_update(sim, h, g);
    }
}

/* What a responder with rx_hook does after a packet: the grant scheduler's count, or the
 * builder's assembly of its completions (event building; receives it posts do not change the
 * QP's deadline). */
static COLD void rx_hook_before(struct fe_sim *sim, struct sim_qp *sq)
{
    if (sq->rx_grants) fe_homa_grants_rx(&sq->grant, fe_qp_counters(sq->qp)->rx_bytes);
    if (sq->eb_rx) sim_eb_rx(sim, sq->flow);
}

/* and once the QP is rescheduled (and perhaps released, with its flow): the grants (an empty
 * scheduler grants nothing) */
static COLD void rx_hook_after(struct fe_sim *sim, struct sim_host *h)
{
    if (h->grants.n) schedule_grants(sim, h);
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
    bool rx_hook = sq->rx_hook;
    if (rx_hook) rx_hook_before(sim, sq);
    after_qp_event(sim, h, sq);
    if (rx_hook) rx_hook_after(sim, h);
    /* An ACK can move a QP's deadline earlier while it stays under a timer (a window CC's
     * window reopens but the pacer holds the packet until later): re-arm the host's wake, or
     * the QP would sleep until its previous, later deadline (the retransmit timer). */
    arm_wake(sim, h);
    if (h->ready_head) kick(sim, h);
    prefetch_next_arrival(h);
}

struct sim_qp *sim_host_new_qp(struct sim_host *h, uint32_t flow, bool requester, int *rc)
{
    uint32_t slot;
    *rc = alloc_slot(h, &slot);
    if (*rc) return NULL;
    struct sim_qp *sq = alloc_qp_struct(h);
    if (!sq) {
        h->free_slots[h->n_free++] = slot;
        *rc = FE_ENOMEM;
        return NULL;
    }
    sq->host = h;
    sq->flow = flow;
    sq->requester = requester;
    h->gens[slot] = (uint8_t)(h->gens[slot] == 255 ? 1 : h->gens[slot] + 1);
    sq->qpn = (uint32_t)h->gens[slot] << SLOT_BITS | slot;
    sq->grant.index = UINT32_MAX;
    return sq;
}
