/* Parallel simulation over MPI: parallel.c's parts and windows, one process (rank) per part.
 * The MPI calls themselves are the module's (parallel_mpi_module.c, loaded by fe_sim_mpi_init
 * with dlopen): this file is built into every feroce and the library without linking libmpi.
 *
 * Every rank builds the whole simulator from the same inputs, so that nodes, ports, hosts and
 * flows have the same indices everywhere, and sets up parallel.c's parts with only its own
 * part's copy (sim_par_setup, only_part = its rank): it runs that part's events; the objects of
 * the other parts stay in its memory as they were built, never run (flow.c starts their QPs
 * idle: sim_par_node_here). The window logic is parallel.c's (sim_par_run_window,
 * sim_par_action_due, sim_par_next_end, sim_par_between_windows); what differs from threads:
 *   - the exchange: at the end of each window a rank's outboxes (the frames its part sent on cut
 *     links) go to their parts' ranks as bytes with one MPI_Alltoallv (arrival time, receiving
 *     port's index, the frame without its pointers, its INT records when INT is on); the
 *     receiver files them on its wires with the same arrival keys as filing an outbox does;
 *   - the reads of what the parts publish: one MPI_Allgather of each part's earliest pending
 *     event (its outbox's frames included), whether a flow ended, whether it failed; every rank
 *     then takes the same decisions as parallel.c's threads after their barrier;
 *   - the flows that ended: their records (index, finish time, failure, completed bytes, the
 *     requester's counters) to every rank, which marks them done and releases their requesters
 *     (so that each host's QP slots, hence the QP numbers of later flows, follow the same
 *     history everywhere) and adds them to its part's list of ended flows;
 *   - the global actions run on every rank alike; before them the flows' receive counters are
 *     summed from the ranks of their destinations (the phases and the window read them), and a
 *     frame an action sends on a cut link goes to its part's rank right after the action, from
 *     the rank of its sender only (sim_mpi_action_send);
 *   - the PFC log's lines (--pfc), which each part keeps, go to every rank where the threads
 *     merge theirs (between windows with actions, at a run's end); every rank merges them, rank
 *     0 into the file (the others' log is /dev/null);
 *   - at the end of each run the flows', ports' and switches' counters are gathered from the
 *     ranks that own them, and the run's counters summed: every rank can report the whole run
 *     (rank 0 does). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feroce/err.h"
#include "sim/parallel_int.h"
#include "sim/parallel_mpi.h"
#include "sim/parallel_mpi_module.h"
#include "sim/partition.h"
#include "sim/sim_internal.h"

/* The MPI module's calls, once fe_sim_mpi_init loaded it; this process's rank, their number. */
static const struct fe_sim_mpi_module *mod;
static int mpi_rank, mpi_size = 1;

/* A frame on the way: its arrival time and receiving port, then the frame. */
struct xhdr {
    uint64_t t;
    uint32_t port; /* index in sim->ports */
    uint32_t has_int;
};

/* A finished flow's record, in uint64_t: index, failed, finish time, completed bytes, then its
 * counters (struct sim_flow_counts, the requester's as it released its QP). */
enum { CTR_WORDS = sizeof(struct sim_flow_counts) / sizeof(uint64_t) };
_Static_assert(sizeof(struct sim_flow_counts) % sizeof(uint64_t) == 0, "all uint64_t");
enum { FIN_FLOW, FIN_FAILED, FIN_T, FIN_DONE_BYTES, FIN_CTR, FIN_WORDS = FIN_CTR + CTR_WORDS };

/* What a part publishes at the end of a window (sim_par_part.pub), in the Allgather. */
enum { PUB_NEXT_T, PUB_ENDED, PUB_FAILED, PUB_WORDS };

/* The counters exchanged as words, one list each, from which both the packing and the
 * unpacking are made (they cannot disagree on an index): a flow's responder's (rx, c its
 * fe_qp_counters), its requester's (req, c its counters, f the flow), a port's (p). */
/* clang-format off */
#define RX_FIELDS(X) X(c->rx_pkts) X(c->rx_bytes) X(c->rx_ce_pkts)
#define REQ_FIELDS(X)                                                                          \
    X(c->tx_pkts) X(c->retx_pkts) X(c->timeouts) X(c->rx_cnps) X(c->rtt_samples)               \
    X(c->rtt_sum_ns) X(c->rtt_max_ns) X(c->tx_bytes_completed) X(f->done_bytes)
#define PORT_FIELDS(X)                                                                         \
    X(p->tx_pkts) X(p->tx_bytes) X(p->queue_bytes) X(p->max_queue_bytes) X(p->pause_tx)        \
    X(p->resume_tx) X(p->pause_rx) X(p->paused_ns) X(p->paused) X(p->paused_since)             \
    X(p->ecn_marks) X(p->drops) X(p->headroom_bytes)
/* clang-format on */
#define COUNT_ONE(field)  +1
#define PACK_ONE(field)   w[i++] = (field);
#define UNPACK_ONE(field) (field) = w[i++];

/* A flow's live counters in the gathers: the responder's (rx), then the requester's (req). */
enum {
    RX_WORDS = 0 RX_FIELDS(COUNT_ONE),
    REQ_WORDS = 0 REQ_FIELDS(COUNT_ONE),
    FLOW_WORDS = RX_WORDS + REQ_WORDS
};

/* A port's counters in the final gather. */
enum { PORT_WORDS = 0 PORT_FIELDS(COUNT_ONE) };

enum { N_STATS = sizeof(struct fe_sim_stats) / sizeof(uint64_t), N_KINDS = 16 };
_Static_assert(sizeof(struct fe_sim_stats) % sizeof(uint64_t) == 0, "all uint64_t");

struct bytes {
    uint8_t *v;
    size_t n, cap;
};

struct sim_mpi {
    struct sim_par *par;
    struct sim_par_part *pp; /* this rank's part */
    uint32_t k, rank;
    size_t frame_bytes; /* a frame's bytes in a message: the frame and its INT records */
    struct bytes *out;  /* [k] the frames for each rank, as bytes */
    struct bytes in, all;
    int *counts;   /* [4k]: sent, their offsets, received, their offsets */
    uint64_t *pub; /* [k][PUB_WORDS + k]: what each part published, the bytes it sends each */
    /* the run's counters summed over the ranks at the last gather (the main simulator's then):
     * what the main simulator has more since is this rank's */
    uint64_t base_st[N_STATS], base_kinds[N_KINDS], base_in_use, base_pool;
    uint64_t barriers;
    /* preallocated for the gathers, whose sizes are fixed once built: a rank that could not
     * allocate could not take its part in the collective */
    uint64_t *flow_v; /* [n_flows][FLOW_WORDS] */
    uint64_t *port_v; /* [n_ports_total][PORT_WORDS] then [n_nodes] */
    uint64_t *info_v; /* [k][3] */
    /* failures: this rank's first (enum mpi_fail), whether another part published one, and
     * what the ranks agreed on (the lowest failing rank, its reason; fail_rank -1: none) */
    uint8_t fail_here;
    bool remote_failed;
    int32_t fail_rank;
    uint8_t fail_reason;
    uint64_t fail_ns;
    /* test hook (FEROCE_SIM_MPI_FAIL=RANK,WINDOW): that rank cannot allocate the frames it sends
     * at the end of that window; no rank and window otherwise */
    uint32_t test_fail_rank;
    uint64_t test_fail_window;
};

/* Why a rank failed, told to all at the next collective that decides the run's course (the
 * window's Allgather, the agreement on the next window, the set-up's). */
enum mpi_fail {
    FAIL_NONE,
    FAIL_SIM,
    FAIL_SEND_MEM,
    FAIL_RECV_MEM,
    FAIL_ENDS_MEM,
    FAIL_PFC_MEM,
    FAIL_PAYLOAD,
    FAIL_BAD_BYTES,
    FAIL_SETUP_MEM,
    FAIL_REFUSED,
    N_FAIL
};
static const char *const fail_text[N_FAIL] = {
    [FAIL_NONE] = "no failure",
    [FAIL_SIM] = "out of memory in the simulator (its events or frames)",
    [FAIL_SEND_MEM] = "out of memory for the frames to send",
    [FAIL_RECV_MEM] = "out of memory for the frames received",
    [FAIL_ENDS_MEM] = "out of memory for the ended flows' records",
    [FAIL_PFC_MEM] = "out of memory for the PFC log's records",
    [FAIL_PAYLOAD] = "a frame with a real payload cannot go to another process",
    [FAIL_BAD_BYTES] = "the frames received are malformed",
    [FAIL_SETUP_MEM] = "out of memory setting up",
    [FAIL_REFUSED] = "refused the run",
};

/* This rank fails for `why` (its first reason is the one kept): its part stops as on any error
 * of the simulator. */
static void mpi_fail(struct sim_mpi *m, enum mpi_fail why)
{
    if (!m->fail_here) m->fail_here = (uint8_t)why;
    sim_fail(m->pp->sim);
}

/* What this rank reports: its first reason, else its simulator's sticky error (its part's, or
 * its actions' when the failure of another part did not cause it). */
static uint8_t local_failure(const struct sim_mpi *m)
{
    if (m->fail_here) return m->fail_here;
    if (sim_failed(m->pp->sim) || (sim_failed(m->par->main) && !m->remote_failed)) return FAIL_SIM;
    return FAIL_NONE;
}

/* A failure as one word for a MIN over the ranks: the lowest failing rank wins. */
static uint64_t failure_word(uint32_t rank, uint8_t why)
{
    return why ? (uint64_t)rank << 8 | why : UINT64_MAX;
}

static void set_agreed_failure(struct sim_mpi *m, uint64_t w, uint64_t t_ns)
{
    if (w == UINT64_MAX || m->fail_rank >= 0) return;
    m->fail_rank = (int32_t)(w >> 8);
    m->fail_reason = (w & 0xff) < N_FAIL ? (uint8_t)(w & 0xff) : FAIL_SIM;
    m->fail_ns = t_ns;
}

/* FEROCE_SIM_MPI_FAIL=RANK,WINDOW (tests/sim/mpi_sim.sh): that rank fails to allocate the
 * frames it sends at the end of its window number WINDOW (from 1), as out of memory would; with
 * WINDOW 0, its set-up. A compare per window otherwise. */
static void read_test_hook(struct sim_mpi *m)
{
    m->test_fail_window = UINT64_MAX;
    const char *e = getenv("FEROCE_SIM_MPI_FAIL");
    unsigned rank;
    unsigned long long window;
    if (e && sscanf(e, "%u,%llu", &rank, &window) == 2) {
        m->test_fail_rank = rank;
        m->test_fail_window = window;
    }
}

static bool test_fail_now(const struct sim_mpi *m)
{
    return m->pp->windows == m->test_fail_window && m->rank == m->test_fail_rank;
}

static int grow(struct bytes *b, size_t need)
{
    if (b->n + need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + need) cap *= 2;
    uint8_t *v = realloc(b->v, cap);
    if (!v) return -1;
    b->v = v;
    b->cap = cap;
    return 0;
}

static bool node_here(const struct sim_mpi *m, uint32_t node)
{
    return m->par->part_of[node] == m->rank;
}

/* ---- frames between ranks ---- */

void sim_mpi_action_send(struct sim_par *par, struct sim_port *to, uint64_t t, struct sim_pkt *pkt)
{
    struct sim_mpi *m = par->mpi;
    if (!node_here(m, to->peer->node->id)) { /* its sender's rank sends it */
        sim_pkt_free(par->main, pkt);
        return;
    }
    /* into this part's outbox, as its own frames; exchanged right after the action */
    struct fe_sim *ps = m->pp->sim;
    ps->part = m->pp;
    sim_par_send(ps, to, t, pkt);
}

/* The part's outbox of `parity` as bytes for each rank; its frames freed. */
static void pack_outboxes(struct sim_mpi *m, uint32_t parity)
{
    struct fe_sim *ps = m->pp->sim;
    size_t rec = sizeof(struct xhdr) + m->frame_bytes;
    for (uint32_t j = 0; j < m->k; j++) {
        struct outbox *ob = &m->pp->out[parity][j];
        struct bytes *b = &m->out[j];
        b->n = 0;
        for (size_t i = 0; i < ob->n; i++) {
            struct sim_pkt *pkt = ob->v[i].pkt;
            /* the simulator's payloads are virtual: a real one could not travel */
            if (pkt->pkt.payload || grow(b, rec)) {
                mpi_fail(m, pkt->pkt.payload ? FAIL_PAYLOAD : FAIL_SEND_MEM);
            } else {
                struct xhdr h = {ob->v[i].t, (uint32_t)(ob->v[i].to - ps->ports),
                                 pkt->pkt.int_md != NULL};
                memcpy(b->v + b->n, &h, sizeof(h));
                memcpy(b->v + b->n + sizeof(h), pkt, m->frame_bytes);
                b->n += rec;
            }
            sim_pkt_free(ps, pkt);
        }
        ob->n = 0;
    }
}

/* The bytes for each rank one after the other (m->all), their counts and offsets. A rank that
 * cannot (out of memory) sends nothing and fails: the collectives stay matched. */
static void lay_out(struct sim_mpi *m)
{
    int k = (int)m->k, *sc = m->counts, *sd = sc + k;
    size_t total = 0;
    for (int j = 0; j < k; j++) total += m->out[j].n;
    m->all.n = 0;
    bool ok = total <= INT32_MAX && !test_fail_now(m) && !grow(&m->all, total ? total : 1);
    for (int j = 0; j < k; j++) {
        sc[j] = ok ? (int)m->out[j].n : 0;
        sd[j] = (int)m->all.n;
        if (ok && m->out[j].n) memcpy(m->all.v + m->all.n, m->out[j].v, m->out[j].n);
        m->all.n += (size_t)sc[j];
    }
    if (!ok) mpi_fail(m, FAIL_SEND_MEM);
}

/* The bytes (m->all) to their ranks, theirs into m->in; the counts to receive are known
 * (m->counts' third quarter). */
static void alltoall_bytes(struct sim_mpi *m)
{
    int k = (int)m->k, *sc = m->counts, *sd = sc + k, *rc = sd + k, *rd = rc + k;
    size_t in_total = 0;
    for (int j = 0; j < k; j++) {
        if (rc[j] < 0) rc[j] = 0;
        rd[j] = (int)in_total;
        in_total += (size_t)rc[j];
    }
    m->in.n = 0;
    if (in_total > INT32_MAX || grow(&m->in, in_total ? in_total : 1)) {
        /* cannot receive: still in the collective, into nothing */
        mpi_fail(m, FAIL_RECV_MEM);
        for (int j = 0; j < k; j++) rc[j] = rd[j] = 0;
        in_total = 0;
    }
    mod->alltoallv_bytes(m->all.v, sc, sd, m->in.v, rc, rd);
    m->in.n = in_total;
    m->barriers++;
}

/* The frames received (m->in) onto this part's wires, with their arrival keys. They are this
 * program's own bytes, checked all the same: whole records, for ports of this part. */
static void file_received(struct sim_mpi *m)
{
    struct fe_sim *ps = m->pp->sim;
    size_t rec = sizeof(struct xhdr) + m->frame_bytes;
    if (m->in.n % rec) {
        mpi_fail(m, FAIL_BAD_BYTES);
        return;
    }
    for (size_t off = 0; off < m->in.n; off += rec) {
        struct xhdr h;
        memcpy(&h, m->in.v + off, sizeof(h));
        if (h.port >= ps->n_ports_total || !node_here(m, ps->ports[h.port].node->id) ||
            h.has_int > 1 || (h.has_int && !ps->int_enable)) {
            mpi_fail(m, FAIL_BAD_BYTES);
            return;
        }
        struct sim_pkt *pkt = sim_pkt_alloc(ps);
        if (!pkt) return;
        memcpy(pkt, m->in.v + off + sizeof(h), m->frame_bytes);
        pkt->next = NULL;
        pkt->pkt.payload = NULL;
        pkt->pkt.int_md = h.has_int ? sim_pkt_int(ps, pkt) : NULL;
        sim_link_wire_file(ps, &ps->ports[h.port], h.t, pkt);
    }
}

/* The frames of the outbox of `parity` (an action's) to their ranks, and theirs onto this
 * part's wires: the counts, then the bytes. */
static void exchange_frames(struct sim_mpi *m, uint32_t parity)
{
    int k = (int)m->k, *sc = m->counts, *rc = sc + 2 * k;
    pack_outboxes(m, parity);
    lay_out(m);
    mod->alltoall_int(sc, rc);
    alltoall_bytes(m);
    file_received(m);
}

/* The end of a window, where the threads meet at their barrier: what every part published
 * (the other parts' values into their sim_par_part.pub, as the threads read them after the
 * barrier) with the byte counts each sends to each, in one Allgather; then the frames. */
static void end_window(struct sim_mpi *m, uint32_t parity)
{
    struct sim_par_part *pp = m->pp;
    const size_t w = PUB_WORDS + m->k;
    int k = (int)m->k, *sc = m->counts, *rc = sc + 2 * k;
    pack_outboxes(m, parity);
    lay_out(m);
    uint64_t o = sim_par_outbox_min(pp, parity), *mine = m->pub + (size_t)m->rank * w;
    mine[PUB_NEXT_T] = pp->pub[parity].next_t < o ? pp->pub[parity].next_t : o;
    mine[PUB_ENDED] = pp->pub[parity].ended;
    /* the window's failures and this exchange's so far (the frames to send) */
    mine[PUB_FAILED] = local_failure(m);
    pp->pub[parity].failed = mine[PUB_FAILED] != FAIL_NONE;
    for (int j = 0; j < k; j++) mine[PUB_WORDS + j] = (uint64_t)sc[j];
    mod->allgather_u64(m->pub, (int)w);
    for (uint32_t j = 0; j < m->k; j++) {
        const uint64_t *v = m->pub + (size_t)j * w;
        rc[j] = v[PUB_WORDS + m->rank] <= INT32_MAX ? (int)v[PUB_WORDS + m->rank] : 0;
        if (j == m->rank) continue;
        m->par->parts[j].pub[parity].next_t = v[PUB_NEXT_T];
        m->par->parts[j].pub[parity].ended = v[PUB_ENDED] != 0;
        m->par->parts[j].pub[parity].failed = v[PUB_FAILED] != 0;
    }
    alltoall_bytes(m);
    file_received(m);
}

/* ---- flows: ends and counters ---- */

/* A flow another rank ended: done here too, its requester released, its counters those the
 * requester had; into this part's list of ended flows (accounted at the grid point after). */
static void apply_end(struct sim_mpi *m, const uint64_t *r)
{
    struct fe_sim *sim = m->par->main, *ps = m->pp->sim;
    if (r[FIN_FLOW] >= sim->n_flows || ps->n_ended >= sim->n_flows) {
        mpi_fail(m, FAIL_BAD_BYTES);
        return;
    }
    struct sim_flow *f = &sim->flows[r[FIN_FLOW]];
    if (f->done) {
        mpi_fail(m, FAIL_BAD_BYTES);
        return;
    }
    memcpy(&f->ctr, r + FIN_CTR, sizeof(f->ctr));
    f->done = true;
    f->failed = r[FIN_FAILED] != 0;
    f->finish_ns = r[FIN_T];
    f->done_bytes = r[FIN_DONE_BYTES];
    struct sim_qp *req = f->req;
    f->req = NULL;
    if (req) sim_host_release_qp(req->host, req);
    ps->ended[ps->n_ended++] = (uint32_t)r[FIN_FLOW];
}

/* Every rank's `words` words (mine; NULL with 0 words when this rank could not make them) to
 * every rank, a collective: all of them, rank j's at m->counts[k + j], m->counts[j] of them; NULL
 * when out of memory (this rank fails for `why`, its counts then read 0). */
static uint64_t *allgather_words(struct sim_mpi *m, const uint64_t *mine, int words,
                                 enum mpi_fail why)
{
    int k = (int)m->k, *cnt = m->counts, *dis = cnt + k;
    mod->allgather_int(words, cnt);
    size_t total = 0;
    for (int j = 0; j < k; j++) {
        dis[j] = (int)total;
        total += cnt[j] >= 0 ? (size_t)cnt[j] : 0;
    }
    uint64_t *all = malloc((total ? total : 1) * sizeof(uint64_t));
    if (!all) { /* still in the collective, into nothing */
        mpi_fail(m, why);
        for (int j = 0; j < k; j++) cnt[j] = dis[j] = 0;
    }
    mod->allgatherv_u64(mine ? mine : all, words, all, cnt, dis);
    return all;
}

/* The flows this part ended in the window to every rank, theirs applied here. */
static void exchange_ends(struct sim_mpi *m)
{
    struct fe_sim *sim = m->par->main, *ps = m->pp->sim;
    uint32_t n_own = ps->n_ended;
    uint64_t *mine = malloc((n_own ? n_own : 1) * FIN_WORDS * sizeof(uint64_t));
    int words = mine ? (int)(n_own * FIN_WORDS) : 0;
    if (!mine) mpi_fail(m, FAIL_ENDS_MEM);
    for (uint32_t i = 0; mine && i < n_own; i++) {
        const struct sim_flow *f = &sim->flows[ps->ended[i]];
        uint64_t *r = mine + (size_t)i * FIN_WORDS;
        r[FIN_FLOW] = ps->ended[i];
        r[FIN_FAILED] = f->failed;
        r[FIN_T] = f->finish_ns;
        r[FIN_DONE_BYTES] = f->done_bytes;
        memcpy(r + FIN_CTR, &f->ctr, sizeof(f->ctr));
    }
    uint64_t *all = allgather_words(m, mine, words, FAIL_ENDS_MEM);
    const int *cnt = m->counts, *dis = cnt + m->k;
    for (int j = 0; all && j < (int)m->k; j++) {
        if (j == (int)m->rank || cnt[j] % FIN_WORDS) continue;
        for (int w = 0; w < cnt[j]; w += FIN_WORDS) apply_end(m, all + dis[j] + w);
    }
    free(all);
    free(mine);
}

/* The PFC log's records of every part to every rank, before they are merged (between windows,
 * at a run's end): rank 0's merge writes the log, the others' write nowhere (cmd_sim.c). */
static void exchange_pfc(struct sim_mpi *m)
{
    struct sim_par *par = m->par;
    struct fe_sim *sim = par->main;
    if (!sim->pfc_cb) return;
    size_t n_own = sim_par_pfc_words(m->pp);
    uint64_t *mine = n_own <= INT_MAX ? malloc((n_own ? n_own : 1) * sizeof(uint64_t)) : NULL;
    int words = mine ? (int)n_own : 0;
    if (mine)
        sim_par_pack_pfc(sim, m->pp, mine);
    else
        mpi_fail(m, FAIL_PFC_MEM);
    uint64_t *all = allgather_words(m, mine, words, FAIL_PFC_MEM);
    const int *cnt = m->counts, *dis = cnt + m->k;
    for (int j = 0; all && j < (int)m->k; j++) {
        if (j == (int)m->rank || cnt[j] <= 0) continue;
        int rc = sim_par_unpack_pfc(sim, &par->parts[j], all + dis[j], (size_t)cnt[j]);
        if (rc) mpi_fail(m, rc == FE_ENOMEM ? FAIL_PFC_MEM : FAIL_BAD_BYTES);
    }
    free(all);
    free(mine);
}

/* The counters a QP of another rank's part has there, into its idle copy here (the report and
 * the phases read a flow's counters from its live QPs). */
static struct fe_qp_counters *qp_counters_rw(struct sim_qp *sq)
{
    return (struct fe_qp_counters *)(uintptr_t)fe_qp_counters(sq->qp);
}

static void rx_words(const struct sim_qp *resp, uint64_t *w)
{
    const struct fe_qp_counters *c = fe_qp_counters(resp->qp);
    size_t i = 0;
    RX_FIELDS(PACK_ONE)
}
static void set_rx(struct sim_qp *resp, const uint64_t *w)
{
    struct fe_qp_counters *c = qp_counters_rw(resp);
    size_t i = 0;
    RX_FIELDS(UNPACK_ONE)
}
static void req_words(const struct sim_flow *f, uint64_t *w)
{
    const struct fe_qp_counters *c = fe_qp_counters(f->req->qp);
    size_t i = 0;
    REQ_FIELDS(PACK_ONE)
}
static void set_req(struct sim_flow *f, const uint64_t *w)
{
    struct fe_qp_counters *c = qp_counters_rw(f->req);
    size_t i = 0;
    REQ_FIELDS(UNPACK_ONE)
}

/* The live QPs' counters of every flow from the ranks of their hosts: the responders' always
 * (before global actions: the phases and the window read them), the requesters' too when
 * `req` (at the end of a run, for the report). */
static void mirror_flows(struct sim_mpi *m, bool req)
{
    struct fe_sim *sim = m->par->main;
    size_t n = sim->n_flows;
    if (!n) return;
    uint64_t *v = m->flow_v;
    memset(v, 0, n * FLOW_WORDS * sizeof(uint64_t));
    for (uint32_t i = 0; i < n; i++) {
        const struct sim_flow *f = &sim->flows[i];
        uint64_t *w = v + (size_t)i * FLOW_WORDS;
        if (f->resp && f->resp->qp && node_here(m, f->spec.dst)) rx_words(f->resp, w);
        if (req && f->req && f->req->qp && node_here(m, f->spec.src)) req_words(f, w + RX_WORDS);
    }
    mod->allreduce_u64(v, (int)(n * FLOW_WORDS), FE_SIM_MPI_SUM);
    for (uint32_t i = 0; i < n; i++) {
        struct sim_flow *f = &sim->flows[i];
        const uint64_t *w = v + (size_t)i * FLOW_WORDS;
        if (f->resp && f->resp->qp && !node_here(m, f->spec.dst)) set_rx(f->resp, w);
        if (req && f->req && f->req->qp && !node_here(m, f->spec.src)) set_req(f, w + RX_WORDS);
    }
}

/* ---- the end of a run: every object's counters from its rank ---- */

static void port_words(const struct sim_port *p, uint64_t *w)
{
    size_t i = 0;
    PORT_FIELDS(PACK_ONE)
}
static void set_port(struct sim_port *p, const uint64_t *w)
{
    size_t i = 0;
    PORT_FIELDS(UNPACK_ONE)
}

/* The ports' counters and the switches' peak buffer use, from the ranks of their nodes. */
static void gather_ports(struct sim_mpi *m)
{
    struct fe_sim *sim = m->par->main;
    size_t n = sim->n_ports_total, words = n * PORT_WORDS + sim->n_nodes;
    uint64_t *v = m->port_v;
    memset(v, 0, words * sizeof(uint64_t));
    for (uint32_t i = 0; i < n; i++)
        if (node_here(m, sim->ports[i].node->id)) port_words(&sim->ports[i], v + i * PORT_WORDS);
    uint64_t *sw = v + n * PORT_WORDS;
    for (uint32_t i = 0; i < sim->n_nodes; i++)
        if (sim->nodes[i].sw && node_here(m, i)) sw[i] = sim->nodes[i].sw->max_used;
    mod->allreduce_u64(v, (int)words, FE_SIM_MPI_SUM);
    for (uint32_t i = 0; i < n; i++)
        if (!node_here(m, sim->ports[i].node->id)) set_port(&sim->ports[i], v + i * PORT_WORDS);
    for (uint32_t i = 0; i < sim->n_nodes; i++)
        if (sim->nodes[i].sw && !node_here(m, i)) sim->nodes[i].sw->max_used = sw[i];
}

/* The run's counters (parallel.c folded this part's into the main simulator's) summed over the
 * ranks: what each main simulator has more than the last sum is its rank's (its part's events,
 * and what the actions did on its nodes); the peak headroom is a maximum. */
static void gather_counters(struct sim_mpi *m)
{
    struct fe_sim *sim = m->par->main;
    const size_t hr = offsetof(struct fe_sim_stats, max_headroom_bytes) / sizeof(uint64_t);
    enum { W = N_STATS + N_KINDS + 2 };
    uint64_t v[W], st[N_STATS], mx;
    memcpy(st, &sim->st, sizeof(st));
    for (size_t i = 0; i < N_STATS; i++) v[i] = st[i] - m->base_st[i];
    for (size_t i = 0; i < N_KINDS; i++) v[N_STATS + i] = sim->ev_kind_count[i] - m->base_kinds[i];
    v[N_STATS + N_KINDS] = sim->pkts_in_use - m->base_in_use;
    v[N_STATS + N_KINDS + 1] = sim->pool_pkts - m->base_pool;
    mx = st[hr];
    v[hr] = 0;
    mod->allreduce_u64(v, W, FE_SIM_MPI_SUM);
    mod->allreduce_u64(&mx, 1, FE_SIM_MPI_MAX);
    for (size_t i = 0; i < N_STATS; i++) st[i] = m->base_st[i] + v[i];
    st[hr] = mx;
    memcpy(&sim->st, st, sizeof(st));
    memcpy(m->base_st, st, sizeof(st));
    for (size_t i = 0; i < N_KINDS; i++) sim->ev_kind_count[i] = m->base_kinds[i] += v[N_STATS + i];
    sim->pkts_in_use = m->base_in_use += v[N_STATS + N_KINDS];
    sim->pool_pkts = m->base_pool += v[N_STATS + N_KINDS + 1];
}

/* ---- the windows ---- */

/* After the actions (every rank alike) or their start: the frames they sent to other parts'
 * ranks go there now, and the ranks agree on the next window, as one thread would decide it
 * for all parts: the earliest window end any rank planned (plan_window's end only grows with
 * the earliest pending event, so the earliest of the ends is the end planned from the
 * earliest event), the stop when no rank has anything left, the failure of any. */
static void agree_next(struct sim_mpi *m, bool at_limit)
{
    struct sim_par *par = m->par;
    struct fe_sim *sim = par->main;
    struct sim_par_part *pp = m->pp;
    exchange_frames(m, pp->parity);
    sim_par_clear_outboxes(pp, pp->parity);
    /* stops every rank takes alike: all flows done, the run's limit */
    bool common_stop = par->stop && (sim->halt & SIM_HALT_ALL_DONE || at_limit);
    uint64_t v[2] = {failure_word(m->rank, local_failure(m)), common_stop ? 0
                                                              : par->stop ? FE_SIM_NO_TIME
                                                                          : par->end};
    mod->allreduce_u64(v, 2, FE_SIM_MPI_MIN);
    if (v[0] != UINT64_MAX) { /* a rank failed: all stop here, together */
        set_agreed_failure(m, v[0], par->done_to);
        sim_fail(sim);
        par->stop = sim->finished = true;
        return;
    }
    if (common_stop) return;
    /* a rank with nothing left planned the stop (and the run finished); not when others have */
    par->stop = v[1] == FE_SIM_NO_TIME;
    sim->finished = par->stop;
    par->end = v[1];
}

static void mpi_between_windows(struct sim_mpi *m, uint32_t parity, uint64_t end)
{
    struct sim_par *par = m->par;
    for (uint32_t j = 0; j < m->k; j++)
        if (j != m->rank && par->parts[j].pub[parity].failed) {
            m->remote_failed = true;
            sim_fail(par->main);
        }
    mirror_flows(m, false);
    exchange_pfc(m);
    sim_par_merge_pfc(par);
    sim_par_between_windows(par, end);
    agree_next(m, end == par->limit + 1);
}

/* The windows until the stop: as parallel.c's part_thread, with the exchange and the gathers
 * where the threads meet at their barrier. */
static void run_windows(struct sim_mpi *m)
{
    struct sim_par *par = m->par;
    struct sim_par_part *pp = m->pp;
    uint64_t end = par->end;
    for (;;) {
        uint32_t parity = pp->parity;
        sim_par_run_window(pp, end, parity);
        end_window(m, parity);
        bool ended = false;
        for (uint32_t j = 0; j < m->k; j++) ended |= par->parts[j].pub[parity].ended;
        if (ended) exchange_ends(m);
        pp->parity = parity ^ 1;
        sim_par_clear_outboxes(pp, pp->parity);
        if (sim_par_action_due(par, parity, end)) {
            mpi_between_windows(m, parity, end);
            if (par->stop) return;
            end = par->end;
            continue;
        }
        end = sim_par_next_end(par, parity, end);
    }
}

/* The simulator's clock after a run as parallel.c sets it, from the last event of any part. */
static void agree_clock(struct sim_mpi *m)
{
    uint64_t last = m->pp->sim->now;
    mod->allreduce_u64(&last, 1, FE_SIM_MPI_MAX);
    m->pp->sim->now = last;
}

int sim_mpi_run(struct fe_sim *sim, uint64_t until_ns)
{
    struct sim_par *par = sim->par;
    struct sim_mpi *m = par->mpi;
    if (!sim_par_set_limit(par, until_ns)) return 0;
    mirror_flows(m, false);
    sim_par_start_run(par);
    agree_next(m, false);
    if (!par->stop) run_windows(m);
    mirror_flows(m, true);
    agree_clock(m);
    exchange_pfc(m);
    sim_par_end_run(par);
    gather_counters(m);
    gather_ports(m);
    return sim_par_result(par, 0);
}

/* ---- setting up ---- */

void sim_mpi_free(struct sim_mpi *m)
{
    if (!m) return;
    if (m->out)
        for (uint32_t j = 0; j < m->k; j++) free(m->out[j].v);
    free(m->out);
    free(m->in.v);
    free(m->all.v);
    free(m->counts);
    free(m->pub);
    free(m->flow_v);
    free(m->port_v);
    free(m->info_v);
    free(m);
}

static int init_mpi(struct sim_mpi *m, const struct fe_sim *sim)
{
    m->frame_bytes = sizeof(struct sim_pkt) + (sim->int_enable ? sizeof(struct fe_int) : 0);
    m->out = calloc(m->k, sizeof(*m->out));
    m->counts = calloc(4 * (size_t)m->k, sizeof(int));
    m->pub = calloc((size_t)m->k * (PUB_WORDS + m->k), sizeof(uint64_t));
    m->flow_v = calloc(sim->n_flows ? sim->n_flows * FLOW_WORDS : 1, sizeof(uint64_t));
    m->port_v = calloc(sim->n_ports_total * PORT_WORDS + sim->n_nodes + 1, sizeof(uint64_t));
    m->info_v = calloc(3 * (size_t)m->k, sizeof(uint64_t));
    if (!m->out || !m->counts || !m->pub || !m->flow_v || !m->port_v || !m->info_v)
        return FE_ENOMEM;
    memcpy(m->base_st, &sim->st, sizeof(m->base_st));
    memcpy(m->base_kinds, sim->ev_kind_count, sizeof(m->base_kinds));
    m->base_in_use = sim->pkts_in_use;
    m->base_pool = sim->pool_pkts;
    return 0;
}

/* This rank's part of the set-up: 0, FE_ENOTSUP with why, FE_ENOMEM. */
static int set_up_here(struct fe_sim *sim, const struct fe_sim_partition *p, char *why,
                       size_t why_cap)
{
    struct sim_mpi *m = calloc(1, sizeof(*m));
    if (!m) return FE_ENOMEM;
    m->k = (uint32_t)mpi_size;
    m->rank = (uint32_t)mpi_rank;
    m->fail_rank = -1;
    read_test_hook(m);
    int rc = m->test_fail_window == 0 && m->rank == m->test_fail_rank ? FE_ENOMEM : 0;
    if (!rc) rc = init_mpi(m, sim);
    if (!rc) rc = sim_par_setup(sim, p, mpi_rank, why, why_cap);
    if (rc) {
        sim_mpi_free(m);
        return rc;
    }
    m->par = sim->par;
    m->pp = &m->par->parts[mpi_rank];
    m->par->mpi = m;
    return 0;
}

/* The ranks agree on the set-up: a rank that failed alone (out of memory) must not leave the
 * others waiting in the run's first collective. */
static int agree_set_up(int rc, char *why, size_t why_cap)
{
    uint8_t r = !rc ? FAIL_NONE : rc == FE_ENOMEM ? FAIL_SETUP_MEM : FAIL_REFUSED;
    uint64_t w = failure_word((uint32_t)mpi_rank, r);
    mod->allreduce_u64(&w, 1, FE_SIM_MPI_MIN);
    if (w == UINT64_MAX || (w >> 8) == (uint64_t)mpi_rank) return rc; /* its own why */
    r = (w & 0xff) < N_FAIL ? (uint8_t)(w & 0xff) : FAIL_SIM;
    sim_errf(why, why_cap, "rank %llu failed: %s", (unsigned long long)(w >> 8), fail_text[r]);
    return r == FAIL_REFUSED ? FE_ENOTSUP : FE_ENOMEM;
}

int fe_sim_set_mpi(struct fe_sim *sim, const struct fe_sim_partition *p, char *why, size_t why_cap)
{
    if (!mod) {
        sim_errf(why, why_cap, "MPI is not initialized (fe_sim_mpi_init)");
        return FE_ENOTSUP;
    }
    if (p->k != (uint32_t)mpi_size) {
        sim_errf(why, why_cap, "the partition has %u parts for %d processes", p->k, mpi_size);
        return FE_ENOTSUP;
    }
    _Static_assert(sizeof(((struct fe_sim *)0)->ev_kind_count) / sizeof(uint64_t) == N_KINDS,
                   "event kinds");
    int rc = set_up_here(sim, p, why, why_cap);
    if (rc == FE_ENOMEM)
        sim_errf(why, why_cap, "rank %d failed: %s", mpi_rank, fail_text[FAIL_SETUP_MEM]);
    return agree_set_up(rc, why, why_cap);
}

int fe_sim_mpi_failure(const struct fe_sim *sim, char *why, size_t why_cap)
{
    const struct sim_par *par = sim->par;
    if (!par || !par->mpi || par->mpi->fail_rank < 0) return -1;
    const struct sim_mpi *m = par->mpi;
    sim_errf(why, why_cap, "rank %d failed (simulated time %llu ns): %s", (int)m->fail_rank,
             (unsigned long long)m->fail_ns, fail_text[m->fail_reason]);
    return m->fail_rank;
}

void fe_sim_mpi_info(const struct fe_sim *sim, struct fe_sim_par_info *out)
{
    memset(out, 0, sizeof(*out));
    const struct sim_par *par = sim->par;
    if (!par || !par->mpi) return;
    const struct sim_mpi *m = par->mpi;
    uint64_t mine[3] = {m->pp->events_run, m->pp->frames_out, m->pp->windows};
    uint64_t *all = m->info_v;
    memcpy(all + 3 * (size_t)m->rank, mine, sizeof(mine));
    mod->allgather_u64(all, 3);
    out->parts = m->k;
    out->grid_ns = par->grid_ns;
    out->lookahead_ns = par->lookahead_ns;
    out->barriers = m->barriers;
    for (uint32_t j = 0; j < m->k && j < FE_SIM_MAX_INFO_PARTS; j++) {
        out->events[j] = all[3 * j];
        out->frames_out[j] = all[3 * j + 1];
        out->windows[j] = all[3 * j + 2];
    }
}

bool fe_sim_mpi_built(void)
{
#ifdef FE_HAVE_MPI
    return true;
#else
    return false;
#endif
}

/* Started by mpirun (or another launcher that sets its variables): MPI_Init alone would start
 * a one-process "singleton" world, not the run that was asked for. */
static bool under_launcher(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

/* The directory of the running executable, with its final '/': "" when unknown. */
static void exe_dir(char *dir, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
    if (n <= 0) n = 0;
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = 0;
    else
        dir[0] = 0;
}

/* The module at `path` loaded and checked: 0, or -1 with why. RTLD_GLOBAL: Open MPI's own
 * components, which it dlopens in MPI_Init, resolve symbols of libmpi's libraries globally. */
static int load_module(const char *path, char *why, size_t why_cap)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        sim_errf(why, why_cap, "--mpi: cannot load the MPI module %s: %s", path, dlerror());
        return -1;
    }
    const struct fe_sim_mpi_module *m = dlsym(h, FE_SIM_MPI_MODULE_SYMBOL);
    if (!m || m->abi != FE_SIM_MPI_MODULE_ABI) {
        sim_errf(why, why_cap, "--mpi: %s is not this feroce's MPI module (%s)", path,
                 m ? "another version" : "no " FE_SIM_MPI_MODULE_SYMBOL);
        dlclose(h);
        return -1;
    }
    /* never closed: Open MPI does not support being unloaded, and its frames keep their names
     * to the end for the leak checker's suppressions */
    mod = m;
    return 0;
}

/* The MPI module: $FEROCE_MPI_MODULE, else beside the executable (the build tree), else where
 * `make install` puts it, relative to the executable (a moved install tree) then absolute.
 * The first that exists is loaded: 0, or -1 with why. */
static int find_module(char *why, size_t why_cap)
{
    const char *env = getenv("FEROCE_MPI_MODULE");
    if (env && *env) return load_module(env, why, why_cap);
    char dir[4096], path[4096 + 256];
    exe_dir(dir, sizeof(dir));
    const char *tries[][2] = {{dir, FE_SIM_MPI_MODULE_FILE},
                              {dir, FE_MPI_MODULE_REL "/" FE_SIM_MPI_MODULE_FILE},
                              {"", FE_MPI_MODULE_DIR "/" FE_SIM_MPI_MODULE_FILE}};
    for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
        if (i < 2 && !dir[0]) continue;
        snprintf(path, sizeof(path), "%s%s", tries[i][0], tries[i][1]);
        if (!access(path, F_OK)) return load_module(path, why, why_cap);
    }
    sim_errf(why, why_cap,
             "--mpi: the MPI module " FE_SIM_MPI_MODULE_FILE " is neither beside %s nor in "
             "%s (FEROCE_MPI_MODULE=path sets it)",
             dir[0] ? dir : "the executable", FE_MPI_MODULE_DIR);
    return -1;
}

int fe_sim_mpi_init(int *rank, int *size, char *why, size_t why_cap)
{
    *rank = 0;
    *size = 1;
    if (!fe_sim_mpi_built()) {
        sim_errf(why, why_cap, "--mpi: this feroce was built without MPI (libopenmpi-dev)");
        return FE_ENOTSUP;
    }
    if (!under_launcher()) {
        sim_errf(why, why_cap, "--mpi: not started by mpirun (mpirun -np N feroce sim ... --mpi)");
        return FE_ENOTSUP;
    }
    if (!mod && find_module(why, why_cap)) return FE_ENOTSUP;
    char e[256] = "";
    if (mod->init(rank, size, e, sizeof(e))) {
        sim_errf(why, why_cap, "--mpi: %s", e);
        return FE_ENOTSUP;
    }
    mpi_rank = *rank;
    mpi_size = *size;
    return 0;
}

void fe_sim_mpi_finalize(void)
{
    if (mod) mod->finalize();
}
