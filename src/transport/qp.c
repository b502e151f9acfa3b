/* The queue pair object: configuration, memory regions, completion queue, counters, QP error,
 * the deadline, and arbitration of the transmit path between the responder (ACK/NAK/CNP first)
 * and the requester (data). The protocol itself lives in requester.c and responder.c. */
#include "transport/qp_internal.h"

#include <stdlib.h>
#include <string.h>

const char *fe_wc_status_name(int status)
{
    switch (status) {
    case FE_WC_SUCCESS:
        return "success";
    case FE_WC_RETRY_EXC_ERR:
        return "retry exceeded";
    case FE_WC_RNR_RETRY_EXC_ERR:
        return "RNR retry exceeded";
    case FE_WC_REM_ACCESS_ERR:
        return "remote access error";
    case FE_WC_REM_INV_REQ_ERR:
        return "remote invalid request";
    case FE_WC_REM_OP_ERR:
        return "remote operational error";
    case FE_WC_LOC_LEN_ERR:
        return "local length error";
    case FE_WC_WR_FLUSH_ERR:
        return "flushed";
    default:
        return "unknown status";
    }
}

void fe_qp_config_default(struct fe_qp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->local_qpn = 0x100;
    cfg->remote_qpn = 0x100;
    cfg->mtu_bytes = 4096;
    cfg->path.ipver = 4;
    cfg->path.ttl = 64;
    cfg->path.udp_sport = 40128 + 0x100; /* the firmware's 40128 + local QPN */
    cfg->path.udp_dport = FE_ROCEV2_UDP_PORT;
    cfg->dscp = 26;
    cfg->pcp = 3;
    cfg->data_ecn = FE_ECN_ECT0;
    cfg->replay_bytes = 2u << 20;
    cfg->sq_depth = 1024;
    cfg->rq_depth = 1024;
    cfg->cq_depth = 2048; /* sq_depth + rq_depth: every posted WR and buffer fits */
    cfg->max_mr = 16;
    cfg->ack_timeout_ns = 1000000;
    cfg->retry_cnt = 7;
    cfg->rnr_retry = 7;
    cfg->min_rnr_timer = 1;
    cfg->ackreq_every = 32;
    cfg->ack_every = 32;
    cfg->np_enable = true;
    cfg->cnp_interval_ns = 4000;
    cfg->cnp_dscp = FE_CNP_DSCP;
    cfg->cnp_pcp = FE_CNP_PCP;
    cfg->line_rate_bps = 100000000000ull;
}

static const char *validate(const struct fe_qp_config *c)
{
    if (c->local_qpn > FE_PSN_MASK) return "local_qpn";
    if (c->remote_qpn > FE_PSN_MASK) return "remote_qpn";
    if (c->sq_psn > FE_PSN_MASK) return "sq_psn";
    if (c->rq_psn > FE_PSN_MASK) return "rq_psn";
    if (c->mtu_bytes < 256 || c->mtu_bytes > 4096 || (c->mtu_bytes & (c->mtu_bytes - 1)))
        return "mtu_bytes";
    if (c->path.ipver != 4 && c->path.ipver != 6) return "path.ipver";
    if (c->dscp > 63) return "dscp";
    if (c->pcp > 7) return "pcp";
    if (c->data_ecn > 3) return "data_ecn";
    if (c->replay_bytes < c->mtu_bytes || c->replay_bytes / c->mtu_bytes > FE_QP_MAX_REPLAY_PKTS)
        return "replay_bytes";
    if (c->sq_depth < 1 || c->sq_depth > FE_QP_MAX_DEPTH) return "sq_depth";
    if (c->rq_depth > FE_QP_MAX_DEPTH) return "rq_depth";
    if (c->cq_depth < 1 || c->cq_depth > 2 * FE_QP_MAX_DEPTH) return "cq_depth";
    if (c->max_mr > 65536) return "max_mr";
    if (c->ack_timeout_ns == 0) return "ack_timeout_ns";
    if (c->ack_timeout_max_ns && c->ack_timeout_max_ns < c->ack_timeout_ns)
        return "ack_timeout_max_ns";
    if (c->retry_cnt > 7 && c->retry_cnt != FE_RETRY_INFINITE) return "retry_cnt";
    if (c->rnr_retry > 7) return "rnr_retry";
    if (c->min_rnr_timer > 31) return "min_rnr_timer";
    if (c->ackreq_every < 1) return "ackreq_every";
    if (c->ack_every < 1) return "ack_every";
    if (c->cnp_dscp > 63) return "cnp_dscp";
    if (c->cnp_pcp > 7) return "cnp_pcp";
    if (c->line_rate_bps == 0) return "line_rate_bps";
    if (c->cc_params && c->cc_algo && c->cc_params->algo != c->cc_algo) return "cc_params";
    return NULL;
}

/* The CC instance by whole cache lines, aligned: its outputs and the start of its context then
 * share one line (an algorithm keeps what it reads per packet there). */
static size_t cc_block_bytes(const struct fe_cc_algo *algo)
{
    return (fe_cc_instance_size(algo) + 63) & ~(size_t)63;
}

/* Where a QP's CC state lives: right after it, in the same allocation (fe_qp_create). */
static struct fe_cc *qp_cc_block(struct fe_qp *qp)
{
    _Static_assert(sizeof(struct fe_qp) % 64 == 0, "the CC state starts on a cache line");
    return (struct fe_cc *)(void *)(qp + 1);
}

/* The CC algorithm a configuration names: cc_algo, else its parameters', else "none". */
static const struct fe_cc_algo *config_algo(const struct fe_qp_config *cfg)
{
    const struct fe_cc_algo *algo = cfg->cc_algo;
    if (!algo && cfg->cc_params) algo = cfg->cc_params->algo;
    if (!algo) algo = fe_cc_find("none");
    return algo;
}

/* Where a QP's arrays lie in its one block, by byte offset from the struct fe_qp at its start,
 * each on a cache line of its own; `bytes` is the whole. Capacities are powers of two, indexed
 * by a mask (fe_req_init, the responder). */
struct qp_layout {
    uint32_t sq_cap, ring_cap, rq_cap;
    size_t sq, ring, rq, cq, mr, bytes;
};

static size_t line_up(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static void plan_layout(const struct fe_qp_config *cfg, const struct fe_cc_algo *algo,
                        struct qp_layout *l)
{
    l->sq_cap = fe_pow2_at_least(cfg->sq_depth);
    l->ring_cap = fe_pow2_at_least((uint32_t)(cfg->replay_bytes / cfg->mtu_bytes));
    l->rq_cap = fe_pow2_at_least(cfg->rq_depth ? cfg->rq_depth : 1);
    l->sq = sizeof(struct fe_qp) + cc_block_bytes(algo);
    l->ring = l->sq + line_up((size_t)l->sq_cap * sizeof(struct fe_sq_entry));
    l->rq = l->ring + line_up((size_t)l->ring_cap * sizeof(struct fe_replay_entry));
    l->cq = l->rq + line_up((size_t)l->rq_cap * sizeof(struct fe_recv_entry));
    l->mr = l->cq + line_up((size_t)cfg->cq_depth * sizeof(struct fe_cqe));
    l->bytes = l->mr + (cfg->max_mr > 1 ? line_up((size_t)cfg->max_mr * sizeof(struct fe_mr)) : 0);
}

size_t fe_qp_memory_bytes(const struct fe_qp_config *cfg)
{
    if (validate(cfg)) return 0;
    const struct fe_cc_algo *algo = config_algo(cfg);
    if (!algo) return 0;
    struct qp_layout l;
    plan_layout(cfg, algo, &l);
    return l.bytes;
}

/* The CC instance, with the configuration's parameters or the algorithm's defaults. */
static void init_cc(struct fe_qp *qp, const struct fe_qp_config *cfg, const struct fe_cc_algo *algo,
                    uint64_t now_ns)
{
    struct fe_cc_params defaults;
    const struct fe_cc_params *params = cfg->cc_params;
    if (!params) {
        fe_cc_params_default(&defaults, algo);
        params = &defaults;
    }
    struct fe_cc_env env = {.line_rate_bps = cfg->line_rate_bps,
                            .mtu_bytes = cfg->mtu_bytes,
                            .base_rtt_ns = cfg->base_rtt_ns,
                            .now_ns = now_ns};
    fe_cc_init(qp->cc, params, &env);
    qp->cc_timers = algo->on_timer != NULL;
}

/* The pacer starts with a full bucket: the first packets leave at once (no warm-up). Its
 * default size is the largest data frame: one MTU with the most headers (WRITE_ONLY_IMM). */
static void init_pacer(struct fe_qp *qp, const struct fe_qp_config *cfg, uint64_t now_ns)
{
    const struct fe_req *r = &qp->req;
    uint64_t burst = cfg->pacer_burst_bytes ? cfg->pacer_burst_bytes
                     : r->fixed_overhead_bytes
                         ? (uint64_t)cfg->mtu_bytes + r->fixed_overhead_bytes
                         : (uint64_t)cfg->mtu_bytes + fe_pkt_hdr_len(FE_OP_WRITE_ONLY_IMM) +
                               FE_ICRC_LEN + r->frame_overhead_bytes;
    fe_pacer_init(&qp->req.pacer, burst, now_ns);
}

struct fe_qp *fe_qp_create(const struct fe_qp_config *cfg, uint64_t now_ns, int *err,
                           const char **why_field)
{
    return fe_qp_create_sim(cfg, NULL, now_ns, err, why_field);
}

/* The simulator's settings, before anything reads them (the pacer's burst: init_pacer). */
static void apply_sim_config(struct fe_qp *qp, const struct fe_qp_sim_config *sim)
{
    if (!sim) return;
    qp->resp.np_ecn_echo_on_ack = sim->np_ecn_echo_on_ack;
    qp->resp.int_echo = sim->int_echo;
    qp->req.fixed_overhead_bytes = sim->frame_overhead_bytes;
    qp->req.ns3_paced = sim->ns3_gap_ns != NULL;
    qp->ns3.gap_ns = sim->ns3_gap_ns;
}

/* The QP's arrays in its block (plan_layout), and the capacities that index them. */
static void place_arrays(struct fe_qp *qp, const struct qp_layout *l, uint32_t max_mr)
{
    char *base = (char *)qp;
    qp->cc = qp_cc_block(qp);
    qp->req.sq_cap = l->sq_cap;
    qp->req.sq = (struct fe_sq_entry *)(void *)(base + l->sq);
    qp->req.ring_mask = l->ring_cap - 1;
    qp->req.ring = (struct fe_replay_entry *)(void *)(base + l->ring);
    qp->resp.rq_cap = l->rq_cap;
    qp->resp.rq = (struct fe_recv_entry *)(void *)(base + l->rq);
    qp->cq = (struct fe_cqe *)(void *)(base + l->cq);
    qp->resp.mr = max_mr > 1 ? (struct fe_mr *)(void *)(base + l->mr) : &qp->resp.mr_one;
}

/* The QP in `mem` (laid out by l), in RTS, from a valid configuration. Only the object and its
 * CC state are cleared: every array entry is written before it is read (the send queue's by
 * posting, the replay ring's by sending, the receive queue's by posting a buffer, the CQ's by a
 * completion, the regions' by registering), so clearing them would only touch memory early. */
static struct fe_qp *build_qp(void *mem, const struct qp_layout *l, const struct fe_qp_config *cfg,
                              const struct fe_cc_algo *algo, const struct fe_qp_sim_config *sim,
                              uint64_t now_ns)
{
    struct fe_qp *qp = mem;
    memset(qp, 0, l->sq);
    place_arrays(qp, l, cfg->max_mr);
    qp->cfg = *cfg;
    qp->cfg.cc_algo = algo;
    qp->state = FE_QPS_RTS;
    qp->local_qpn = cfg->local_qpn;
    qp->cq_cap = cfg->cq_depth;
    fe_req_init(qp);
    fe_resp_init(qp);
    apply_sim_config(qp, sim);
    init_cc(qp, cfg, algo, now_ns);
    init_pacer(qp, cfg, now_ns);
    return qp;
}

/* The configuration's CC algorithm and layout, or the error and the field at fault. */
static int check_config(const struct fe_qp_config *cfg, const struct fe_cc_algo **algo,
                        struct qp_layout *l, const char **why)
{
    *why = validate(cfg);
    if (*why) return FE_EINVAL;
    *algo = config_algo(cfg);
    if (!*algo) {
        *why = "cc_algo";
        return FE_ENOENT;
    }
    plan_layout(cfg, *algo, l);
    return 0;
}

static struct fe_qp *report(struct fe_qp *qp, int e, const char *why, int *err,
                            const char **why_field)
{
    if (err) *err = e;
    if (why_field) *why_field = why;
    return qp;
}

/* A checked configuration's QP in a block of its own. */
static struct fe_qp *create_on_heap(const struct qp_layout *l, const struct fe_qp_config *cfg,
                                    const struct fe_cc_algo *algo,
                                    const struct fe_qp_sim_config *sim, uint64_t now_ns, int *err,
                                    const char **why_field)
{
    /* one block, by cache line (struct fe_qp) with its CC state right after it (qp_cc_block):
     * every packet reads both. malloc and a rounding up, as aligned_alloc costs more per QP. */
    void *block = malloc(l->bytes + 63);
    if (!block) return report(NULL, FE_ENOMEM, "memory", err, why_field);
    void *mem = (void *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    struct fe_qp *qp = build_qp(mem, l, cfg, algo, sim, now_ns);
    qp->heap_block = block;
    return report(qp, 0, NULL, err, why_field);
}

struct fe_qp *fe_qp_create_sim(const struct fe_qp_config *cfg, const struct fe_qp_sim_config *sim,
                               uint64_t now_ns, int *err, const char **why_field)
{
    const struct fe_cc_algo *algo;
    struct qp_layout l;
    const char *why;
    int e = check_config(cfg, &algo, &l, &why);
    if (e) return report(NULL, e, why, err, why_field);
    return create_on_heap(&l, cfg, algo, sim, now_ns, err, why_field);
}

struct fe_qp *fe_qp_create_sim_alloc(void *(*alloc)(void *user, size_t bytes), void *user,
                                     const struct fe_qp_config *cfg,
                                     const struct fe_qp_sim_config *sim, uint64_t now_ns, int *err,
                                     const char **why_field)
{
    const struct fe_cc_algo *algo;
    struct qp_layout l;
    const char *why;
    int e = check_config(cfg, &algo, &l, &why);
    if (e) return report(NULL, e, why, err, why_field);
    void *mem = alloc(user, l.bytes);
    if (!mem) return create_on_heap(&l, cfg, algo, sim, now_ns, err, why_field);
    if ((uintptr_t)mem & 63) return report(NULL, FE_EINVAL, "memory", err, why_field);
    return report(build_qp(mem, &l, cfg, algo, sim, now_ns), 0, NULL, err, why_field);
}

void fe_qp_destroy(struct fe_qp *qp)
{
    if (qp) free(qp->heap_block); /* NULL: the creator's memory (fe_qp_create_sim_alloc) */
}

const struct fe_qp_config *fe_qp_config(const struct fe_qp *qp)
{
    return &qp->cfg;
}
enum fe_qp_state fe_qp_state(const struct fe_qp *qp)
{
    return qp->state;
}
const struct fe_qp_counters *fe_qp_counters(const struct fe_qp *qp)
{
    return &qp->ctr;
}
struct fe_cc *fe_qp_cc(struct fe_qp *qp)
{
    return qp->cc;
}

void fe_qp_psns(const struct fe_qp *qp, struct fe_qp_psns *out)
{
    out->next_psn = qp->req.next_psn;
    out->una_psn = qp->req.una_psn;
    out->expected_psn = qp->resp.epsn;
    out->msn = qp->resp.msn;
    out->inflight_bytes = qp->req.inflight_bytes;
}

int fe_qp_find_mr(const struct fe_qp *qp, uint32_t rkey)
{
    for (uint32_t i = 0; i < qp->resp.n_mr; i++)
        if (qp->resp.mr[i].rkey == rkey) return (int)i;
    return -1;
}

int fe_qp_reg_mr(struct fe_qp *qp, const struct fe_mr *mr)
{
    if (!mr || mr->len > UINT64_MAX - mr->va) return FE_EINVAL;
    if (fe_qp_find_mr(qp, mr->rkey) >= 0) return FE_EINVAL;
    if (qp->resp.n_mr >= qp->cfg.max_mr) return FE_ENOSPC;
    qp->resp.mr[qp->resp.n_mr++] = *mr;
    return 0;
}

/* ---- completion queue ---- */

/* Every posted WR and receive buffer reserves its completion, so the CQ never overflows. */
static bool cq_can_reserve(const struct fe_qp *qp)
{
    return qp->cq_count + qp->cq_reserved < qp->cq_cap;
}

void fe_qp_push_cqe(struct fe_qp *qp, const struct fe_cqe *cqe)
{
    if (qp->cq_reserved) qp->cq_reserved--;
    if (qp->cq_count >= qp->cq_cap) return; /* unreachable: reserved at posting */
    /* cq_cap is any depth, not a power of two: wrap by one subtraction (head + count < 2 cap) */
    uint32_t i = qp->cq_head + qp->cq_count;
    if (i >= qp->cq_cap) i -= qp->cq_cap;
    qp->cq[i] = *cqe;
    qp->cq_count++;
}

int fe_qp_poll_cq(struct fe_qp *qp, struct fe_cqe *out, int max)
{
    int n = 0;
    uint32_t head = qp->cq_head;
    while (n < max && qp->cq_count) {
        out[n++] = qp->cq[head];
        if (++head == qp->cq_cap) head = 0;
        qp->cq_count--;
    }
    /* an emptied CQ starts again at its first entry: a CQ polled often stays in a few cache
     * lines instead of walking its whole ring */
    qp->cq_head = qp->cq_count ? head : 0;
    return n;
}

int fe_qp_post_send(struct fe_qp *qp, const struct fe_wr *wr)
{
    if (qp->state != FE_QPS_RTS) return FE_ESTATE;
    if (!cq_can_reserve(qp)) return FE_ENOSPC;
    int rc = fe_req_post(qp, wr);
    if (rc == 0) qp->cq_reserved++;
    return rc;
}

int fe_qp_rx_write_next(const struct fe_qp *qp, uint32_t *psn, uint8_t **dst, uint64_t *left_bytes,
                        uint32_t *mtu_bytes)
{
    const struct fe_resp *r = &qp->resp;
    if (qp->state != FE_QPS_RTS || !r->in_msg || r->msg_send || r->msg_mr < 0 || !r->msg_left)
        return 0;
    const struct fe_mr *mr = &r->mr[r->msg_mr];
    if (!mr->base) return 0;
    *psn = r->epsn;
    *dst = mr->base + (r->msg_va - mr->va);
    *left_bytes = r->msg_left;
    *mtu_bytes = r->mtu_bytes;
    return 1;
}

uint32_t fe_qp_sq_unstarted(const struct fe_qp *qp)
{
    return qp->req.tail_seq - qp->req.send_seq;
}

void fe_qp_prefetch_tx(const struct fe_qp *qp)
{
    /* the QP's first line (state, CC, responses pending), the requester, which follows it, and
     * the CC's output (its rate and timer), which qp_cc_block puts right after the QP: found
     * without reading qp->cc from a line still on its way */
    const char *p = (const char *)qp;
    for (size_t off = 0; off < offsetof(struct fe_qp, req) + sizeof(qp->req); off += 64)
        __builtin_prefetch(p + off);
    __builtin_prefetch(qp + 1);
}

void fe_qp_prefetch_rx(const struct fe_qp *qp)
{
    /* the first line (dispatch), the responder's two, and its per-packet counters */
    __builtin_prefetch(qp);
    __builtin_prefetch(&qp->resp);
    __builtin_prefetch((const char *)&qp->resp + 64);
    __builtin_prefetch(&qp->ctr.rx_pkts);
}

uint32_t fe_qp_sq_room(const struct fe_qp *qp)
{
    if (qp->state != FE_QPS_RTS) return 0;
    uint32_t used = qp->req.tail_seq - qp->req.head_seq;
    uint32_t sq = used < qp->req.sq_depth ? qp->req.sq_depth - used : 0;
    uint32_t cq_used = qp->cq_count + qp->cq_reserved;
    uint32_t cq = cq_used < qp->cq_cap ? qp->cq_cap - cq_used : 0;
    return sq < cq ? sq : cq;
}

uint32_t fe_qp_replay_room(const struct fe_qp *qp)
{
    uint32_t out = (qp->req.next_psn - qp->req.una_psn) & FE_PSN_MASK;
    return out < qp->req.ring_limit ? qp->req.ring_limit - out : 0;
}

int fe_qp_post_recv(struct fe_qp *qp, uint64_t cookie, uint8_t *buf, uint32_t len)
{
    struct fe_resp *r = &qp->resp;
    if (qp->state != FE_QPS_RTS) return FE_ESTATE;
    if (r->rq_count >= qp->cfg.rq_depth || !cq_can_reserve(qp)) return FE_ENOSPC;
    r->rq[(r->rq_head + r->rq_count) & (r->rq_cap - 1)] =
        (struct fe_recv_entry){.cookie = cookie, .buf = buf, .len = len};
    r->rq_count++;
    qp->cq_reserved++;
    return 0;
}

/* ---- error ---- */

void fe_qp_set_error(struct fe_qp *qp, bool fail_wr, uint32_t fail_seq, enum fe_wc_status status)
{
    if (qp->state == FE_QPS_ERROR) return;
    qp->state = FE_QPS_ERROR;
    fe_req_flush(qp, fail_wr, fail_seq, status);
    fe_resp_flush(qp);
}

/* ---- transmit arbitration, deadline, receive dispatch ---- */

int fe_qp_tx(struct fe_qp *qp, uint64_t now_ns, struct fe_pkt *out)
{
    /* Responses first: they are small, and holding them back would stall the peer. Queued NAKs
     * still leave after an error (the peer must learn why). */
    if (fe_resp_pending(qp)) return fe_resp_tx(qp, now_ns, out);
    if (qp->state != FE_QPS_RTS) return 0;
    return fe_req_tx(qp, now_ns, out);
}

_Static_assert(FE_CC_NO_TIMER == FE_NO_DEADLINE, "a CC without a timer adds no deadline");

uint64_t fe_qp_next_deadline(const struct fe_qp *qp)
{
    if (fe_resp_pending(qp)) return 0;
    if (qp->state != FE_QPS_RTS) return FE_NO_DEADLINE;
    /* the CC's timer first: then the requester's part is a tail call (FE_CC_NO_TIMER is
     * FE_NO_DEADLINE) */
    return fe_req_deadline(qp, qp->cc_timers ? qp->cc->out.timer_ns : FE_NO_DEADLINE);
}

/* The requester's timers, then the CC's; out of line, as most expiries a driver sees are the
 * pacer releasing a packet, with no timer due. */
__attribute__((noinline)) static void run_timers(struct fe_qp *qp, uint64_t now_ns)
{
    fe_req_expiry(qp, now_ns);
    if (qp->state == FE_QPS_RTS && qp->cc_timers && qp->cc->out.timer_ns <= now_ns) {
        struct fe_cc_out before = qp->cc->out;
        fe_cc_on_timer(qp->cc, now_ns);
        fe_req_cc_changed(qp, &before);
    }
}

void fe_qp_handle_expiry(struct fe_qp *qp, uint64_t now_ns)
{
    if (qp->state != FE_QPS_RTS) return;
    if (fe_req_timer_due(qp, now_ns) || (qp->cc_timers && qp->cc->out.timer_ns <= now_ns))
        run_timers(qp, now_ns);
}

int fe_qp_rx(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt)
{
    if (pkt->icrc == FE_ICRC_BAD) {
        qp->ctr.rx_bad_icrc++;
        return FE_EPARSE;
    }
    /* P_Key check as IBA 9.2.4 (the membership bit aside): RoCE uses the default key. */
    if (pkt->bth.dqpn != qp->local_qpn || (pkt->bth.pkey & 0x7FFF) != 0x7FFF) {
        qp->ctr.rx_dropped++;
        return FE_ENOENT;
    }
    if (qp->state != FE_QPS_RTS) {
        qp->ctr.rx_dropped++;
        return FE_ESTATE;
    }
    uint8_t op = pkt->bth.opcode;
    if (op == FE_OP_ACK) return fe_req_rx_ack(qp, now_ns, pkt);
    if (op == FE_OP_CNP) {
        qp->ctr.rx_cnps++;
        struct fe_cc_out before = qp->cc->out;
        fe_cc_on_cnp(qp->cc, now_ns);
        fe_req_cc_changed(qp, &before);
        return 0;
    }
    if (op >= FE_OP_READ_RESP_FIRST && op <= FE_OP_ATOMIC_ACK) {
        /* read responses and atomic ACKs: this QP never asks for them */
        qp->ctr.rx_dropped++;
        return FE_ENOTSUP;
    }
    return fe_resp_rx(qp, now_ns, pkt);
}

int fe_qp_rx_frame(struct fe_qp *qp, uint64_t now_ns, const uint8_t *buf, size_t len,
                   enum fe_framing framing, bool verify_icrc)
{
    struct fe_frame f;
    enum fe_parse_reason why;
    int rc = fe_frame_decode(buf, len, framing, verify_icrc, &f, &why, NULL);
    if (rc < 0) {
        qp->ctr.rx_dropped++;
        return rc;
    }
    return fe_qp_rx(qp, now_ns, &f.pkt);
}

void fe_qp_set_grant(struct fe_qp *qp, uint64_t credit_bytes)
{
    if (credit_bytes != qp->resp.grant_bytes) {
        qp->resp.grant_bytes = credit_bytes;
        qp->grant_dirty = true;
    }
}
