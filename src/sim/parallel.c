/* Parallel simulation: the network cut into parts (partition.c), each part simulated by its own
 * thread on its own shallow copy of the simulator, synchronised in windows of simulated time.
 *
 * A copy shares what is read-only or owned by one part (the scenario, nodes, ports, switches,
 * hosts, flows: each node and its ports are touched only by its part's thread) and has its own
 * event queue, packet pool, counters and clock, so that the hot functions, which take `sim`, run
 * unchanged. A frame sent on a cut link (its port's link mode SIM_LINK_CUT) goes into the
 * sender's outbox for the peer's part: (arrival time, port, frame). At the barrier that ends a
 * window each part files the frames addressed to it onto its wires; a frame sent in a window
 * arrives at least one lookahead (the smallest delay of a cut link) after it was sent, so never
 * inside the window it was sent in. The outboxes are the only exchange between parts: over MPI
 * (parallel_mpi.c, one process per part) the same windows drain them as bytes at the barrier and
 * file what arrives the same way.
 *
 * Windows end on the grid: the multiples of G, the smallest delay of any link (it does not
 * depend on the cut). Actions on the whole simulation happen between windows, on one thread
 * while the others wait: those due at a known time T (flow starts, the contention window, a
 * phase's checkpoints) before the events of T, those an event triggers (a flow's completion:
 * the phase marks, the automatic end of the contention window, the stop when every flow is
 * done) at the end of the window in which it happened. An empty stretch of time is skipped: the
 * next window starts at the earliest pending event of any part. The PFC log's lines (--pfc), kept
 * by each part, are merged into the sequential run's order when thread 0 runs between windows
 * and at the end of a run.
 *
 * Outboxes are double-buffered by the window's parity: the frames sent in window w are read by
 * their receivers after the barrier that ends w, before they run w + 1; the sender writes that
 * buffer again in w + 2, after the barrier that ends w + 1. One barrier per window then, one
 * more when a global action runs (thread 0 files every part's inbox, then does it).
 *
 * Windows cannot be longer than the grid: the grid is the smallest delay of any link, and a cut
 * link's delay is the lookahead, at least G: a frame sent in a longer window could arrive
 * inside it. The parts run on the queue and with the lookahead the simulator chose for the
 * whole network. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "feroce/err.h"
#include "sim/grid.h"
#include "sim/parallel_int.h"
#include "sim/partition.h"
#include "sim/sim_internal.h"

/* How long a thread spins in the barrier before it sleeps: the parts of a balanced cut end their
 * windows within microseconds of each other, about what a futex sleep and wake-up cost; a
 * longer wait means the other thread is not running (a loaded machine), and spinning on would
 * take the core it needs. */
#define BARRIER_SPIN_NS 30000

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- barrier: spin, then sleep on a futex ---- */

static void futex_wait(atomic_uint *addr, unsigned val)
{
    syscall(SYS_futex, (unsigned *)addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}
static void futex_wake_all(atomic_uint *addr)
{
    syscall(SYS_futex, (unsigned *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Waits for every part's thread: pp's time waiting counted. */
static void barrier_wait(struct sim_par *par, struct sim_par_part *pp)
{
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    unsigned g = atomic_load_explicit(&par->gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&par->arrived, 1, memory_order_acq_rel) + 1 == par->k) {
        atomic_store_explicit(&par->arrived, 0, memory_order_relaxed);
        par->barriers++;
        /* seq_cst with the sleepers' count: either it sees a sleeper, or the sleeper's futex
         * sees the new generation (no system call when every thread is spinning) */
        atomic_store(&par->gen, g + 1);
        if (atomic_load(&par->sleepers)) futex_wake_all(&par->gen);
        pp->wait_ns += clock_ns(CLOCK_MONOTONIC) - t0;
        return;
    }
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&par->gen, memory_order_acquire) != g) {
            pp->wait_ns += clock_ns(CLOCK_MONOTONIC) - t0;
            return;
        }
        __builtin_ia32_pause();
        if (!(i & 63) && clock_ns(CLOCK_MONOTONIC) - t0 > BARRIER_SPIN_NS) break;
    }
    pp->sleeps++;
    atomic_fetch_add(&par->sleepers, 1);
    while (atomic_load(&par->gen) == g) futex_wait(&par->gen, g);
    atomic_fetch_sub(&par->sleepers, 1);
    pp->wait_ns += clock_ns(CLOCK_MONOTONIC) - t0;
}

/* ---- outboxes ---- */

void sim_par_send(struct fe_sim *sim, struct sim_port *to, uint64_t t, struct sim_pkt *pkt)
{
    struct sim_par_part *pp = sim->part;
    if (!pp && sim->par->only_part >= 0) {
        sim_mpi_action_send(sim->par, to, t, pkt);
        return;
    }
    if (!pp) { /* a global action (all parts stopped): onto the wire, handed over after it */
        sim_link_wire_file(sim, to, t, pkt);
        return;
    }
    struct outbox *ob = &pp->out[pp->parity][pp->par->part_of[to->node->id]];
    if (ob->n == ob->cap) {
        size_t cap = ob->cap ? ob->cap * 2 : 256;
        struct xframe *v = realloc(ob->v, cap * sizeof(*v));
        if (!v) {
            sim_fail(sim);
            sim_pkt_free(sim, pkt);
            return;
        }
        ob->v = v;
        ob->cap = cap;
    }
    if (t < ob->min_t) ob->min_t = t;
    ob->v[ob->n++] = (struct xframe){t, to, pkt};
    pp->frames_out++;
}

/* The frames the other parts sent to pp in the window that just ended, onto its wires: in the
 * order each sender sent them (a cut link's frames come from one part), with keys of pp's
 * queue. An arrival's key is its time and port (sim_arrival_key): the order in which the inbox
 * is filed changes nothing. */
static void file_inbox(struct sim_par_part *pp, uint32_t parity)
{
    struct sim_par *par = pp->par;
    struct fe_sim *sim = pp->sim;
    for (uint32_t j = 0; j < par->k; j++) {
        struct outbox *ob = &par->parts[j].out[parity][pp->id];
        for (size_t i = 0; i < ob->n; i++)
            sim_link_wire_file(sim, ob->v[i].to, ob->v[i].t, ob->v[i].pkt);
    }
}

static void clear_outboxes(struct sim_par_part *pp, uint32_t parity)
{
    for (uint32_t j = 0; j < pp->par->k; j++) {
        pp->out[parity][j].n = 0;
        pp->out[parity][j].min_t = FE_SIM_NO_TIME;
    }
}

/* The earliest arrival pp sent in the window (parity), FE_SIM_NO_TIME when none. */
static uint64_t outbox_min(const struct sim_par_part *pp, uint32_t parity)
{
    uint64_t m = FE_SIM_NO_TIME;
    for (uint32_t j = 0; j < pp->par->k; j++)
        if (pp->out[parity][j].min_t < m) m = pp->out[parity][j].min_t;
    return m;
}

/* fe_evq_keys_fn of a copy: the keys of the frames on its ports' wires. */
static void part_wire_keys(void *user, struct fe_evq *q)
{
    struct sim_par_part *pp = user;
    for (uint32_t i = 0; i < pp->n_ports; i++) {
        struct sim_port *p = pp->ports[i];
        for (struct sim_pkt *k = p->wire_head; k; k = k->next)
            if (k != p->wire_head) fe_evq_renumber_key(q, &k->wire_key);
    }
}

/* ---- the PFC log ---- */

static bool pfc_push(struct pfc_log *l, struct pfc_rec r)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct pfc_rec *v = realloc(l->v, cap * sizeof(*v));
        if (!v) return false;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = r;
    return true;
}

void sim_par_log_pfc(struct fe_sim *sim, const struct sim_port *p, uint8_t prio, bool pause)
{
    if (!pfc_push(&sim->part->pfc, (struct pfc_rec){sim->now, p, prio, pause})) sim_fail(sim);
}

/* Over MPI, a record as words: its time, its port's global index, its priority and kind. */
enum { PFC_W_T, PFC_W_PORT, PFC_W_PRIO_PAUSE, PFC_WORDS };

size_t sim_par_pfc_words(const struct sim_par_part *pp)
{
    return (pp->pfc.n - pp->pfc.head) * PFC_WORDS;
}

void sim_par_pack_pfc(const struct fe_sim *sim, const struct sim_par_part *pp, uint64_t *w)
{
    for (size_t i = pp->pfc.head; i < pp->pfc.n; i++, w += PFC_WORDS) {
        const struct pfc_rec *r = &pp->pfc.v[i];
        w[PFC_W_T] = r->t;
        w[PFC_W_PORT] = (uint64_t)(r->port - sim->ports);
        w[PFC_W_PRIO_PAUSE] = r->prio | (uint64_t)r->pause << 8;
    }
}

int sim_par_unpack_pfc(const struct fe_sim *sim, struct sim_par_part *pp, const uint64_t *w,
                       size_t n_words)
{
    if (n_words % PFC_WORDS) return FE_EINVAL;
    for (size_t i = 0; i < n_words; i += PFC_WORDS, w += PFC_WORDS) {
        uint64_t port = w[PFC_W_PORT], pp_w = w[PFC_W_PRIO_PAUSE];
        if (port >= sim->n_ports_total || (pp_w & 0xff) >= FE_SIM_PRIOS || pp_w >> 9)
            return FE_EINVAL;
        struct pfc_rec r = {w[PFC_W_T], &sim->ports[port], (uint8_t)(pp_w & 0xff),
                            (pp_w >> 8) != 0};
        if (!pfc_push(&pp->pfc, r)) return FE_ENOMEM;
    }
    return 0;
}

/* A record is written when its frame arrives, and the arrivals of one nanosecond run in the
 * order of their ports' global indices (docs/sim.md, "Order of events and determinism"): the
 * sequential run's log is in (time, port) order, and so is each part's. A port's records all
 * come from its part, in their order. */
static bool pfc_before(const struct pfc_rec *a, const struct pfc_rec *b)
{
    return a->t != b->t ? a->t < b->t : a->port < b->port;
}

/* The parts' PFC records (all before the window's end: every thread stopped) to the log, merged
 * into the order the sequential run writes. */
static void merge_pfc_logs(struct sim_par *par)
{
    struct fe_sim *sim = par->main;
    if (!sim->pfc_cb) return;
    for (;;) {
        struct pfc_log *best = NULL;
        for (uint32_t j = 0; j < par->k; j++) {
            struct pfc_log *l = &par->parts[j].pfc;
            if (l->head < l->n && (!best || pfc_before(&l->v[l->head], &best->v[best->head])))
                best = l;
        }
        if (!best) break;
        const struct pfc_rec *r = &best->v[best->head++];
        const struct sim_port *p = r->port;
        sim->pfc_cb(sim->pfc_user, r->t, p->node->id, p->node->is_switch, p->index, r->prio,
                    r->pause);
    }
    for (uint32_t j = 0; j < par->k; j++) par->parts[j].pfc.n = par->parts[j].pfc.head = 0;
}

/* Whether a link has no delay: its frames can arrive in the nanosecond they were sent, at a
 * FIFO rank among every node's events, which a part's log cannot place. */
static bool zero_delay_link(const struct fe_sim *sim)
{
    for (uint32_t i = 0; i < sim->n_ports_total; i++)
        if (!sim->ports[i].delay_ns) return true;
    return false;
}

/* ---- global actions (one thread, the others wait) ---- */

/* The next time a global action is due (grid.h), as the main simulator knows it. */
static uint64_t next_known(const struct sim_par *par)
{
    return sim_next_action_ns(par->main);
}

/* The part an event's object belongs to. */
static uint32_t event_part(const struct sim_par *par, uint64_t data)
{
    const void *obj = (const void *)(uintptr_t)(data & ~EV_KIND_MASK);
    switch ((enum ev_kind)(data & EV_KIND_MASK)) {
    case EV_HOST_WAKE:
        return par->part_of[((const struct sim_host *)obj)->node->id];
    default:
        return par->part_of[((const struct sim_port *)obj)->node->id];
    }
}

/* An event of the main simulator's queue to the part of its object; an arrival with its key.
 * Over MPI, an event of another process's part is dropped: that process has it. */
static void move_event(struct sim_par *par, uint64_t t, uint64_t data)
{
    struct fe_sim *ps = par->parts[event_part(par, data)].sim;
    enum ev_kind kind = (enum ev_kind)(data & EV_KIND_MASK);
    int rc;
    if (!ps) return;
    if (kind == EV_ARRIVE || kind == EV_ARRIVE_HOST) {
        const struct sim_port *to = (const struct sim_port *)(uintptr_t)(data & ~EV_KIND_MASK);
        rc = fe_evq_push_arrival(&ps->q, t, sim_port_gid(ps, to), data);
    } else {
        rc = fe_evq_push(&ps->q, t, data);
    }
    if (rc) sim_fail(ps);
}

/* Over MPI: the frames an action put on the wire of a port of another process's part come
 * off it (that process has them). */
static void drop_new_frames(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *tail)
{
    struct sim_pkt *k = tail ? tail->next : p->wire_head;
    if (tail)
        tail->next = NULL;
    else
        p->wire_head = NULL;
    p->wire_tail = tail;
    while (k) {
        struct sim_pkt *nx = k->next;
        sim_pkt_free(sim, k);
        k = nx;
    }
}

/* What an action did on the main simulator's queue goes to the parts: its events to the part
 * of their object, and the frames it put on wires behind others (holding keys of the main
 * queue) get keys of their part's queue, in order. tails: each port's last frame on its wire
 * before the action. */
static void hand_over(struct sim_par *par, struct sim_pkt **tails)
{
    struct fe_sim *sim = par->main;
    uint64_t t, data;
    while (fe_evq_pop(&sim->q, &t, &data)) move_event(par, t, data);
    if (!tails) return;
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        struct sim_port *p = &sim->ports[i];
        if (p->wire_tail == tails[i]) continue;
        struct fe_sim *ps = par->parts[par->part_of[p->node->id]].sim;
        if (!ps) {
            drop_new_frames(sim, p, tails[i]);
            continue;
        }
        if (!sim->wire_heads_only) continue; /* the wheel: every frame's event moved above */
        struct sim_pkt *k = tails[i] ? tails[i]->next : p->wire_head->next;
        for (; k; k = k->next)
            if (sim_arrival_key(ps, p, k->wire_key >> FE_EVQ_SEQ_BITS, &k->wire_key)) sim_fail(ps);
    }
}

/* The flows the parts saw end go to the main simulator's list, accounted at the grid point
 * after them (sim_flows_ended sorts them: the parts' order does not matter). */
static void collect_ended(struct sim_par *par, uint64_t end)
{
    struct fe_sim *sim = par->main;
    bool any = false;
    for (uint32_t j = 0; j < par->k; j++) {
        struct fe_sim *ps = par->parts[j].sim;
        if (!ps) continue; /* over MPI: its flows came with this part's (parallel_mpi.c) */
        for (uint32_t i = 0; i < ps->n_ended; i++) sim->ended[sim->n_ended++] = ps->ended[i];
        any |= ps->n_ended != 0;
        ps->n_ended = 0;
        ps->grid_due = FE_SIM_NO_TIME;
    }
    uint64_t due = end ? ((end - 1) / par->grid_ns + 1) * par->grid_ns : 0;
    if (any && due < sim->grid_due) sim->grid_due = due;
}

/* The actions due at `end` (every event before it has run, none at it), when `act`: on the
 * main simulator, what they schedule handed over to the parts. */
static void global_actions(struct sim_par *par, uint64_t end, bool act)
{
    struct fe_sim *sim = par->main;
    collect_ended(par, end);
    if (!act || next_known(par) > end) return;
    struct sim_pkt **tails = NULL;
    if (sim->wire_heads_only || par->only_part >= 0) {
        tails = malloc((sim->n_ports_total ? sim->n_ports_total : 1) * sizeof(*tails));
        if (!tails) {
            sim_fail(sim);
            return;
        }
        for (uint32_t i = 0; i < sim->n_ports_total; i++) tails[i] = sim->ports[i].wire_tail;
    }
    if (sim->q.now < end) sim->q.now = end;
    sim_do_actions(sim, end);
    hand_over(par, tails);
    free(tails);
}

/* ---- the windows ---- */

void sim_par_defer_phase(struct fe_sim *sim)
{
    sim->part->phase_flag = true;
}

/* Events of the part's queue up to `last`. */
static void run_events(struct sim_par_part *pp, uint64_t last)
{
    struct fe_sim *sim = pp->sim;
    const size_t kinds = sizeof(sim->ev_kind_count) / sizeof(sim->ev_kind_count[0]);
    uint64_t before = 0, after = 0;
    for (size_t k = 0; k < kinds; k++) before += sim->ev_kind_count[k];
    /* the stop and checkpoints are the run's, at the window's end: a halt only pauses */
    while (sim_run_events(sim, last) > 0) sim->halt = 0;
    for (size_t k = 0; k < kinds; k++) after += sim->ev_kind_count[k];
    pp->events_run += after - before;
}

/* The end of the window that starts at the earliest pending event m: the next grid point, or
 * the next known action or the run's limit when sooner. */
static uint64_t window_end(const struct sim_par *par, uint64_t m, uint64_t known)
{
    uint64_t g = par->grid_ns, e = m / g * g + g;
    if (known < e) e = known;
    if (par->limit + 1 < e) e = par->limit + 1;
    return e;
}

/* After the barrier, what every thread reads alike (none writes it before the next barrier):
 * the earliest pending event, whether an action is due. */
static uint64_t earliest_pending(const struct sim_par *par, uint32_t parity)
{
    uint64_t m = FE_SIM_NO_TIME;
    for (uint32_t j = 0; j < par->k; j++) {
        const struct sim_par_part *q = &par->parts[j];
        uint64_t o = outbox_min(q, parity);
        if (q->pub[parity].next_t < m) m = q->pub[parity].next_t;
        if (o < m) m = o;
    }
    return m;
}

/* After a window without actions, the next one's end: decided alike by every thread (or
 * process) from the earliest event of any part and the next known action. */
static uint64_t next_end(const struct sim_par *par, uint32_t parity, uint64_t end, uint64_t known)
{
    uint64_t m = earliest_pending(par, parity);
    if (m < end) m = end;
    return window_end(par, m < known ? m : known, known);
}

static bool action_due(const struct sim_par *par, uint32_t parity, uint64_t end, uint64_t known)
{
    for (uint32_t j = 0; j < par->k; j++) {
        const struct sim_par_part *q = &par->parts[j];
        if (q->pub[parity].failed || q->pub[parity].ended) return true;
    }
    return known <= end || end == par->limit + 1;
}

/* The earliest pending event of any part (all threads stopped). Over MPI, of this process's
 * part, with the frames an action sent to other processes, still in its outbox (with threads
 * the outboxes are empty here: an action puts its frames on the wires). */
static uint64_t queues_min(const struct sim_par *par)
{
    uint64_t m = FE_SIM_NO_TIME;
    for (uint32_t j = 0; j < par->k; j++) {
        const struct sim_par_part *pp = &par->parts[j];
        if (!pp->sim) continue;
        uint64_t t = fe_evq_peek(&pp->sim->q), o = outbox_min(pp, pp->parity);
        if (t < m) m = t;
        if (o < m) m = o;
    }
    return m;
}

/* The next window from `from` on (par->end), or the stop when nothing is left. */
static void plan_window(struct sim_par *par, uint64_t from)
{
    struct fe_sim *sim = par->main;
    uint64_t m = queues_min(par), known = next_known(par);
    if (m == FE_SIM_NO_TIME && sim->next_flow >= sim->n_flows) {
        sim->finished = true;
        par->stop = true;
        return;
    }
    if (m < from) m = from;
    par->end = window_end(par, m < known ? m : known, known);
}

/* The actions due at `end` (thread 0, every inbox filed), then the next window. */
static void between_windows_actions(struct sim_par *par, uint64_t end)
{
    struct fe_sim *sim = par->main;
    for (uint32_t j = 0; j < par->k; j++)
        if (par->parts[j].sim && sim_failed(par->parts[j].sim)) sim_fail(sim);
    par->done_to = end;
    if (!sim_failed(sim)) global_actions(par, end, end != par->limit + 1);
    if (sim->halt & (SIM_HALT_ERROR | SIM_HALT_ALL_DONE)) {
        sim->finished = true;
        par->stop = true;
        return;
    }
    if (end == par->limit + 1) {
        par->stop = true;
        return;
    }
    plan_window(par, end);
}

/* Thread 0 between windows that need it, the others waiting: every part's inbox (what an action
 * puts on a wire goes behind the frames already sent on it), the actions, then the next window
 * (or the stop) and the next known action in slot ks of par->known. */
static void between_windows(struct sim_par *par, uint64_t end, uint32_t parity, uint32_t ks)
{
    for (uint32_t j = 0; j < par->k; j++) file_inbox(&par->parts[j], parity);
    merge_pfc_logs(par);
    between_windows_actions(par, end);
    par->known[ks] = next_known(par);
}

static void publish(struct sim_par_part *pp, uint32_t parity)
{
    struct fe_sim *sim = pp->sim;
    pp->pub[parity].next_t = fe_evq_peek(&sim->q);
    pp->pub[parity].ended = sim->n_ended != 0;
    pp->pub[parity].failed = sim_failed(sim);
    pp->phase_flag = false;
}

/* The start of a run whose first flows were batched (make_batch): each part's thread makes
 * the QPs of its hosts (where they will be used, at once for all parts), then thread 0 does the
 * run's first actions, which start those flows with them (sim_flow_start), while the others
 * wait. False when the run stops there. */
static bool start_with_batch(struct sim_par_part *pp)
{
    struct sim_par *par = pp->par;
    struct fe_sim *sim = par->main;
    struct sim_flow_batch *fb = sim->batch; /* set before the threads, freed after a barrier */
    if (!fb) return true;
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    sim_flow_batch_make(sim, fb, par->part_of, pp->id);
    pp->setup_ns += clock_ns(CLOCK_MONOTONIC) - t0;
    barrier_wait(par, pp);
    if (pp->id == 0) {
        sim_par_start_run(par);
        sim->batch = NULL;
        sim_flow_batch_free(fb); /* (empty: the actions took every flow) */
    }
    barrier_wait(par, pp);
    return !par->stop;
}

/* A part's thread: its window's events, the barrier, then either its inbox and the next window
 * (decided alike by every thread from what the parts published), or, when an action is due,
 * thread 0 files every inbox and does the actions while the others wait at a second barrier. */
static void *part_thread(void *arg)
{
    struct sim_par_part *pp = arg;
    struct sim_par *par = pp->par;
    uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (!start_with_batch(pp)) {
        pp->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
        return NULL;
    }
    uint64_t end = par->end;
    uint32_t ks = par->ks; /* the slot of par->known */
    for (;;) {
        uint32_t parity = pp->parity;
        uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
        run_events(pp, end - 1);
        publish(pp, parity);
        pp->windows++;
        pp->run_ns += clock_ns(CLOCK_MONOTONIC) - t0;
        barrier_wait(par, pp);
        uint64_t known = par->known[ks];
        pp->parity = parity ^ 1;
        clear_outboxes(pp, pp->parity);
        if (action_due(par, parity, end, known)) {
            ks ^= 1;
            if (pp->id == 0) {
                t0 = clock_ns(CLOCK_MONOTONIC);
                between_windows(par, end, parity, ks);
                pp->serial_ns += clock_ns(CLOCK_MONOTONIC) - t0;
            }
            barrier_wait(par, pp);
            if (par->stop) break;
            end = par->end;
            continue;
        }
        t0 = clock_ns(CLOCK_MONOTONIC);
        file_inbox(pp, parity);
        pp->inbox_ns += clock_ns(CLOCK_MONOTONIC) - t0;
        end = next_end(par, parity, end, known);
    }
    if (pp->id == 0) par->ks = ks;
    pp->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    return NULL;
}

/* ---- setting up ---- */

static void free_part(struct sim_par_part *pp, uint32_t k)
{
    for (int b = 0; b < 2; b++) {
        if (!pp->out[b]) continue;
        for (uint32_t j = 0; j < k; j++) free(pp->out[b][j].v);
        free(pp->out[b]);
    }
    free(pp->ports);
    free(pp->pfc.v);
    if (pp->sim) {
        fe_evq_free(&pp->sim->q);
        free(pp->sim->ended);
        free(pp->sim);
    }
}

void sim_par_destroy(struct fe_sim *sim)
{
    struct sim_par *par = sim->par;
    if (!par) return;
    for (uint32_t j = 0; j < par->k; j++) {
        struct fe_sim *ps = par->parts[j].sim;
        if (ps) {
            /* their chunks hold frames that may sit anywhere (a wire, another pool) */
            for (uint32_t c = 0; c < ps->n_chunks; c++) free(ps->chunks[c]);
            free(ps->chunks);
        }
        free_part(&par->parts[j], par->k);
    }
    free(par->parts);
    free(par->part_of);
    sim_mpi_free(par->mpi);
    free(par);
    sim->par = NULL;
}

/* A copy of the simulator for part pp: the shared state as it is, its own queue, pool,
 * counters and clock. */
static int make_copy(struct fe_sim *sim, struct sim_par_part *pp)
{
    struct fe_sim *ps = aligned_alloc(_Alignof(struct fe_sim), sizeof(*ps));
    if (!ps) return FE_ENOMEM;
    *ps = *sim;
    pp->sim = ps;
    ps->par = NULL;
    ps->part = pp;
    ps->free_pkts = NULL;
    ps->pkts_in_use = 0;
    ps->chunks = NULL;
    ps->n_chunks = ps->cap_chunks = 0;
    ps->pool_pkts = 0;
    memset(&ps->st, 0, sizeof(ps->st));
    memset(ps->ev_kind_count, 0, sizeof(ps->ev_kind_count));
    ps->halt = 0;
    ps->grid_due = FE_SIM_NO_TIME;
    ps->n_ended = 0;
    ps->ended = malloc((sim->n_flows ? sim->n_flows : 1) * sizeof(uint32_t));
    if (!ps->ended) return FE_ENOMEM;
    ps->lookahead = pp->par->lookahead;
    ps->la_n = ps->la_head = 0;
    ps->ns3_lazy_txdone = false;
    int rc = fe_evq_init(&ps->q, sim->q.kind);
    if (!rc) rc = fe_evq_set_ranks(&ps->q, sim->q.fifo_base);
    if (rc) return rc;
    fe_evq_set_keys_fn(&ps->q, part_wire_keys, pp);
    ps->q.now = sim->q.now;
    return 0;
}

static int init_part(struct sim_par *par, uint32_t j)
{
    struct fe_sim *sim = par->main;
    struct sim_par_part *pp = &par->parts[j];
    pp->par = par;
    pp->id = j;
    for (int b = 0; b < 2; b++) {
        pp->out[b] = calloc(par->k, sizeof(struct outbox));
        if (!pp->out[b]) return FE_ENOMEM;
        for (uint32_t d = 0; d < par->k; d++) pp->out[b][d].min_t = FE_SIM_NO_TIME;
    }
    if (par->only_part >= 0 && j != (uint32_t)par->only_part) return 0; /* another process's */
    pp->ports = malloc((sim->n_ports_total ? sim->n_ports_total : 1) * sizeof(*pp->ports));
    if (!pp->ports) return FE_ENOMEM;
    for (uint32_t i = 0; i < sim->n_ports_total; i++)
        if (par->part_of[sim->ports[i].node->id] == j) pp->ports[pp->n_ports++] = &sim->ports[i];
    return make_copy(sim, pp);
}

/* Why this simulator cannot run in parts, NULL when it can. */
static const char *unsupported(const struct fe_sim *sim, const struct fe_sim_partition *p)
{
    if (sim->par) return "it already runs in parallel";
    if (sim->now || sim->q.popped || sim->finished) return "the run has begun";
    if (sim->eb) return "event building's control messages do not travel as frames";
    if (sim->ns3_frames) return "ns-3 timing orders arrivals with every other event (FIFO)";
    if (sim->pfc_cb && zero_delay_link(sim))
        return "the PFC log (--pfc): a link without delay delivers at FIFO ranks";
    if (sim->test_rx) return "a test hook receives frames";
    if (p->n_nodes != sim->n_nodes) return "the partition is for another network";
    if (p->lookahead_ns == FE_SIM_NO_TIME) return "the partition cuts no link (one part)";
    if (!p->lookahead_ns) return "a cut link has no delay";
    return NULL;
}

/* The events the simulator holds go to the parts of their objects; the flow starts and the
 * contention window are the run's (next_known). */
static void distribute_events(struct sim_par *par)
{
    struct fe_sim *sim = par->main;
    uint64_t t, data;
    while (fe_evq_pop(&sim->q, &t, &data)) {
        if ((void *)(uintptr_t)(data & ~EV_KIND_MASK) == sim) continue;
        move_event(par, t, data);
    }
}

int sim_par_setup(struct fe_sim *sim, const struct fe_sim_partition *p, int32_t only_part,
                  char *why, size_t why_cap)
{
    const char *no = unsupported(sim, p);
    if (no) {
        sim_errf(why, why_cap, "%s", no);
        return FE_ENOTSUP;
    }
    /* the parts run on the queue and with the lookahead the simulator chose for the whole
     * network (the wheel's single event per frame and the lookahead's loads pay the same in a
     * part); the main simulator only does the global actions, without it */
    bool lookahead = sim->lookahead;
    int rc = fe_sim_set_lookahead(sim, false);
    if (rc) return rc;
    sim->ns3_lazy_txdone = false;
    struct sim_par *par = aligned_alloc(_Alignof(struct sim_par), sizeof(*par));
    if (!par) return FE_ENOMEM;
    memset(par, 0, sizeof(*par));
    par->lookahead = lookahead;
    sim->par = par;
    par->main = sim;
    par->only_part = only_part;
    par->k = p->k;
    par->grid_ns = p->grid_ns ? p->grid_ns : 1;
    par->lookahead_ns = p->lookahead_ns;
    par->part_of = malloc((sim->n_nodes ? sim->n_nodes : 1) * sizeof(uint32_t));
    par->parts = aligned_alloc(_Alignof(struct sim_par_part), p->k * sizeof(*par->parts));
    if (!par->part_of || !par->parts) goto nomem;
    memset(par->parts, 0, p->k * sizeof(*par->parts));
    memcpy(par->part_of, p->part, sim->n_nodes * sizeof(uint32_t));
    for (uint32_t j = 0; j < p->k; j++)
        if (init_part(par, j)) goto nomem;
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        struct sim_port *pt = &sim->ports[i];
        if (par->part_of[pt->node->id] != par->part_of[pt->peer->node->id])
            pt->link_mode = SIM_LINK_CUT;
    }
    distribute_events(par);
    /* the main simulator's queue holds what a global action schedules, until it is handed
     * over: a heap, whose clock may be moved forward (the calendar's buckets follow it); the
     * keys it gives frames on wires are read for their time only (hand_over), so that it has
     * none to renumber */
    uint64_t ranks = sim->q.fifo_base;
    fe_evq_free(&sim->q);
    rc = fe_evq_init(&sim->q, FE_SIM_EVQ_HEAP);
    if (!rc) rc = fe_evq_set_ranks(&sim->q, ranks);
    if (rc) goto nomem;
    return 0;
nomem:
    sim_par_destroy(sim);
    sim_errf(why, why_cap, "out of memory");
    return FE_ENOMEM;
}

int fe_sim_set_parallel(struct fe_sim *sim, const struct fe_sim_partition *p, char *why,
                        size_t why_cap)
{
    return sim_par_setup(sim, p, -1, why, why_cap);
}

/* ---- a run ---- */

/* The parts' counters into the main simulator's (sums; the peak headroom a maximum). */
static void fold_counters(struct sim_par *par)
{
    struct fe_sim *sim = par->main;
    _Static_assert(sizeof(struct fe_sim_stats) % sizeof(uint64_t) == 0, "all uint64_t");
    const size_t n = sizeof(struct fe_sim_stats) / sizeof(uint64_t);
    const size_t hr = offsetof(struct fe_sim_stats, max_headroom_bytes) / sizeof(uint64_t);
    for (uint32_t j = 0; j < par->k; j++) {
        struct fe_sim *ps = par->parts[j].sim;
        if (!ps) continue;
        uint64_t *d = (uint64_t *)&sim->st, *s = (uint64_t *)&ps->st;
        for (size_t i = 0; i < n; i++) d[i] = i == hr ? (s[i] > d[i] ? s[i] : d[i]) : d[i] + s[i];
        memset(&ps->st, 0, sizeof(ps->st));
        for (size_t i = 0; i < 16; i++) sim->ev_kind_count[i] += ps->ev_kind_count[i];
        memset(ps->ev_kind_count, 0, sizeof(ps->ev_kind_count));
        sim->pkts_in_use += ps->pkts_in_use;
        ps->pkts_in_use = 0;
        sim->pool_pkts += ps->pool_pkts;
        ps->pool_pkts = 0;
        if (sim_failed(ps)) sim_fail(sim);
    }
}

/* The threads of parts 1.. and part 0 on this one, until the stop. */
static int run_threads(struct sim_par *par)
{
    uint32_t started = 1;
    int rc = 0;
    for (; started < par->k; started++)
        if (pthread_create(&par->parts[started].th, NULL, part_thread, &par->parts[started])) break;
    if (started < par->k) {
        /* the barrier counts k threads: without them all, nothing may run */
        rc = FE_ENOMEM;
        par->stop = true;
        par->end = FE_SIM_NO_TIME;
    }
    if (!rc) part_thread(&par->parts[0]);
    for (uint32_t j = 1; j < started; j++) pthread_join(par->parts[j].th, NULL);
    return rc;
}

/* The simulator's clock after a run: the last event's time when it finished, else the limit. */
static void set_clock(struct sim_par *par)
{
    struct fe_sim *sim = par->main;
    uint64_t last = 0;
    for (uint32_t j = 0; j < par->k; j++)
        if (par->parts[j].sim && par->parts[j].sim->now > last) last = par->parts[j].sim->now;
    /* finished: the last actions' time (the stop when all are done) or the last event's */
    if (!sim->finished)
        sim->now = par->limit;
    else if (last > sim->now)
        sim->now = last;
    if (par->limit == sim->stop_ns) sim->finished = true;
}

void sim_par_start_run(struct sim_par *par)
{
    struct fe_sim *sim = par->main;
    /* the actions due at the start (the first flows, or those at the last run's limit) */
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    global_actions(par, par->done_to, true);
    par->parts[0].serial_ns += clock_ns(CLOCK_MONOTONIC) - t0;
    if (sim->halt & (SIM_HALT_ERROR | SIM_HALT_ALL_DONE))
        par->stop = sim->finished = true;
    else
        plan_window(par, par->done_to);
    par->known[par->ks] = next_known(par);
}

/* The flows due at the run's start batched, their slots taken, for their QPs to be made on the
 * threads (true). With threads (over MPI a process makes every QP, its part's and the others'),
 * when the actions due then start flows and, before, release no QP (sim_do_actions: the flows
 * that ended): the slots are then taken as sim_flow_start would. */
static bool make_batch(struct sim_par *par)
{
    struct fe_sim *sim = par->main;
    uint64_t t = par->done_to;
    if (par->only_part >= 0 || sim_failed(sim) || sim->grid_due <= t || next_known(par) > t)
        return false;
    for (uint32_t j = 0; j < par->k; j++)
        if (par->parts[j].sim->n_ended) return false; /* (collect_ended would take them) */
    sim->batch = sim_flow_batch_new(sim, t > sim->now ? t : sim->now);
    return sim->batch != NULL;
}

void sim_par_end_run(struct sim_par *par)
{
    merge_pfc_logs(par);
    fold_counters(par);
    set_clock(par);
}

bool sim_par_set_limit(struct sim_par *par, uint64_t until_ns)
{
    struct fe_sim *sim = par->main;
    uint64_t limit = until_ns < sim->stop_ns ? until_ns : sim->stop_ns;
    if (limit > FE_SIM_MAX_TIME) limit = FE_SIM_MAX_TIME;
    if (limit + 1 < par->done_to) return false;
    par->limit = limit;
    par->stop = false;
    return true;
}

int sim_par_result(struct sim_par *par, int rc)
{
    struct fe_sim *sim = par->main;
    if (rc || sim_failed(sim)) {
        sim->finished = true;
        return rc ? rc : FE_ENOMEM;
    }
    if (sim->finished && !sim->window_closed) sim_window_close(sim);
    return sim->finished ? 1 : 0;
}

int sim_par_run(struct fe_sim *sim, uint64_t until_ns)
{
    struct sim_par *par = sim->par;
    if (par->only_part >= 0) return sim_mpi_run(sim, until_ns);
    if (!sim_par_set_limit(par, until_ns)) return 0;
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    int rc = 0;
    if (make_batch(par)) {
        rc = run_threads(par); /* the run's start on them (start_with_batch) */
        if (sim->batch) {      /* the threads did not start */
            sim_flow_batch_free(sim->batch);
            sim->batch = NULL;
        }
    } else {
        sim_par_start_run(par);
        if (!par->stop) rc = run_threads(par);
    }
    par->wall_ns += clock_ns(CLOCK_MONOTONIC) - t0;
    sim_par_end_run(par);
    return sim_par_result(par, rc);
}

void fe_sim_parallel_info(const struct fe_sim *sim, struct fe_sim_par_info *out)
{
    memset(out, 0, sizeof(*out));
    const struct sim_par *par = sim->par;
    if (!par) return;
    out->parts = par->k;
    out->grid_ns = par->grid_ns;
    out->lookahead_ns = par->lookahead_ns;
    out->barriers = par->barriers;
    out->wall_ns = par->wall_ns;
    for (uint32_t j = 0; j < par->k && j < FE_SIM_MAX_INFO_PARTS; j++) {
        const struct sim_par_part *pp = &par->parts[j];
        out->events[j] = pp->events_run;
        out->windows[j] = pp->windows;
        out->frames_out[j] = pp->frames_out;
        out->run_ns[j] = pp->run_ns;
        out->wait_ns[j] = pp->wait_ns;
        out->inbox_ns[j] = pp->inbox_ns;
        out->serial_ns[j] = pp->serial_ns;
        out->setup_ns[j] = pp->setup_ns;
        out->cpu_ns[j] = pp->cpu_ns;
        out->sleeps[j] = pp->sleeps;
    }
}

/* A figure per part (ms), as "a / b / c". */
static void print_ms(FILE *f, const char *what, const uint64_t *v, uint32_t k)
{
    fprintf(f, "%s", what);
    for (uint32_t j = 0; j < k; j++) fprintf(f, "%s%.1f", j ? " / " : " ", v[j] / 1e6);
}

void fe_sim_parallel_print_times(FILE *f, const char *prefix, const struct fe_sim_par_info *pi)
{
    uint32_t k = pi->parts < FE_SIM_MAX_INFO_PARTS ? pi->parts : FE_SIM_MAX_INFO_PARTS;
    uint64_t wait = 0, sleeps = 0;
    for (uint32_t j = 0; j < k; j++) {
        wait += pi->wait_ns[j];
        sleeps += pi->sleeps[j];
    }
    fprintf(f, "%sthreads' time, ms of %.1f wall:", prefix, pi->wall_ns / 1e6);
    print_ms(f, " events", pi->run_ns, k);
    print_ms(f, "; barrier waits", pi->wait_ns, k);
    print_ms(f, "; inbox", pi->inbox_ns, k);
    fprintf(f, "; serial actions %.1f", pi->serial_ns[0] / 1e6);
    print_ms(f, "; QP set-up", pi->setup_ns, k);
    print_ms(f, "; thread CPU", pi->cpu_ns, k);
    fprintf(f, "; waiting %.0f %% of the wall time per thread, %llu futex sleeps\n",
            k && pi->wall_ns ? 100.0 * (double)wait / ((double)pi->wall_ns * k) : 0.0,
            (unsigned long long)sleeps);
}

/* ---- the steps of a window, for parallel_mpi.c (parallel_int.h) ---- */

void sim_par_run_window(struct sim_par_part *pp, uint64_t end, uint32_t parity)
{
    run_events(pp, end - 1);
    publish(pp, parity);
    pp->windows++;
}

void sim_par_clear_outboxes(struct sim_par_part *pp, uint32_t parity)
{
    clear_outboxes(pp, parity);
}

uint64_t sim_par_outbox_min(const struct sim_par_part *pp, uint32_t parity)
{
    return outbox_min(pp, parity);
}

bool sim_par_action_due(const struct sim_par *par, uint32_t parity, uint64_t end)
{
    return action_due(par, parity, end, next_known(par));
}

uint64_t sim_par_next_end(const struct sim_par *par, uint32_t parity, uint64_t end)
{
    return next_end(par, parity, end, next_known(par));
}

void sim_par_merge_pfc(struct sim_par *par)
{
    merge_pfc_logs(par);
}

void sim_par_between_windows(struct sim_par *par, uint64_t end)
{
    between_windows_actions(par, end);
}

/* Whether node's state is simulated in this process: over MPI, the nodes of other processes'
 * parts are here only as they were built (their QPs numbered alike), never run. */
bool sim_par_node_here(const struct fe_sim *sim, uint32_t node)
{
    const struct sim_par *par = sim->par;
    return !par || par->only_part < 0 || par->part_of[node] == (uint32_t)par->only_part;
}
