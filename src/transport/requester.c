/* Requester (send side of an RC QP): segmentation, PSNs, AckReq policy, the PSN-indexed replay
 * ring, cumulative ACKs, Go-Back-N on sequence NAKs, RNR waits, retransmit timeouts, retry
 * counting, fatal NAKs, and the congestion-control hooks (pacer, window, credit, events).
 *
 * The replay ring stores no payload: an entry names the WR and packet index, and the WR's memory
 * stays valid until its completion (verbs semantics), so a retransmission rebuilds the packet
 * from it. */
#include "transport/qp_internal.h"

#include "cc/pacer_impl.h"
#include "wire/opcode_impl.h"

#include <stdlib.h>

/* Opcodes by WR kind and position: [op][first << 1 | last]. */
static const uint8_t opcode_table[4][4] = {
    [FE_WR_WRITE] = {FE_OP_WRITE_MIDDLE, FE_OP_WRITE_LAST, FE_OP_WRITE_FIRST, FE_OP_WRITE_ONLY},
    [FE_WR_WRITE_IMM] = {FE_OP_WRITE_MIDDLE, FE_OP_WRITE_LAST_IMM, FE_OP_WRITE_FIRST,
                         FE_OP_WRITE_ONLY_IMM},
    [FE_WR_SEND] = {FE_OP_SEND_MIDDLE, FE_OP_SEND_LAST, FE_OP_SEND_FIRST, FE_OP_SEND_ONLY},
    [FE_WR_SEND_IMM] = {FE_OP_SEND_MIDDLE, FE_OP_SEND_LAST_IMM, FE_OP_SEND_FIRST,
                        FE_OP_SEND_ONLY_IMM},
};

static inline struct fe_sq_entry *sq_at(const struct fe_req *r, uint32_t seq)
{
    return &r->sq[seq & (r->sq_cap - 1)];
}

static inline struct fe_replay_entry *ring_at(const struct fe_req *r, uint32_t psn)
{
    return &r->ring[psn & r->ring_mask];
}

static inline uint32_t outstanding(const struct fe_req *r)
{
    return (r->next_psn - r->una_psn) & FE_PSN_MASK;
}

/* The send queue and the replay ring are in place (sq, ring: qp.c sized them by sq_cap and
 * ring_mask + 1). */
void fe_req_init(struct fe_qp *qp)
{
    struct fe_req *r = &qp->req;
    const struct fe_qp_config *c = &qp->cfg;
    r->ring_limit = (uint32_t)(c->replay_bytes / c->mtu_bytes);
    r->mtu_shift = (uint8_t)__builtin_ctz(c->mtu_bytes); /* a power of two (validated) */
    r->una_psn = r->next_psn = r->tx_psn = r->head_psn = c->sq_psn;
    r->ackreq_psn = fe_psn_add(c->sq_psn, -1); /* none in flight */
    r->retry_left = c->retry_cnt;
    r->rnr_left = c->rnr_retry;
    r->remote_va = c->remote_va;
    r->ack_timeout_ns = c->ack_timeout_ns;
    r->remote_qpn = c->remote_qpn;
    r->remote_rkey = c->remote_rkey;
    r->mtu_bytes = c->mtu_bytes;
    r->sq_depth = c->sq_depth;
    r->frame_overhead_bytes = (uint32_t)fe_path_overhead_bytes(&c->path);
    r->ackreq_every = c->ackreq_every;
    r->dscp = c->dscp;
    r->pcp = c->pcp;
    r->data_ecn = c->data_ecn;
    r->retry_cnt = c->retry_cnt;
    r->rnr_retry = c->rnr_retry;
}

int fe_req_post(struct fe_qp *qp, const struct fe_wr *wr)
{
    struct fe_req *r = &qp->req;
    if (!wr || (unsigned)wr->op > FE_WR_SEND_IMM || wr->len > FE_MAX_MSG_BYTES) return FE_EINVAL;
    bool write = wr->op == FE_WR_WRITE || wr->op == FE_WR_WRITE_IMM;
    uint64_t va = r->remote_va;
    if (write &&
        (wr->remote_offset > UINT64_MAX - va || wr->len > UINT64_MAX - va - wr->remote_offset))
        return FE_EINVAL;
    if (r->tail_seq - r->head_seq >= r->sq_depth) return FE_ENOSPC;
    *sq_at(r, r->tail_seq) = (struct fe_sq_entry){
        .cookie = wr->cookie,
        .data = wr->data,
        .target_va = write ? va + wr->remote_offset : 0,
        .len = wr->len,
        .imm = wr->imm,
        .npkts = wr->len ? (uint32_t)(((uint64_t)wr->len + r->mtu_bytes - 1) >> r->mtu_shift) : 1,
        .op = (uint8_t)wr->op};
    r->tail_seq++;
    return 0;
}

/* ---- the next packet to send ---- */

/* What would leave next, ignoring the pacer. Returns false when nothing may leave (nothing to
 * send, RNR wait, replay ring full, CC window or credit closed). Counts a stall at most once.
 * Inlined: fe_req_tx asks it for every packet it sends (to price the one after), and as a call
 * it moved the answer through memory and saved registers around it. */
static inline __attribute__((always_inline)) bool next_pkt(const struct fe_qp *qp,
                                                           struct fe_next_pkt *n)
{
    const struct fe_req *r = &qp->req;
    if (r->rnr_wait) return false;
    if (r->tx_psn != r->next_psn) {
        const struct fe_replay_entry *re = ring_at(r, r->tx_psn);
        n->seq = re->sq_seq;
        n->pkt_idx = re->pkt_idx;
        n->len = re->payload_len;
        n->retx = true;
        return true;
    }
    if (r->send_seq == r->tail_seq) return false;
    if (outstanding(r) >= r->ring_limit) return false;
    const struct fe_sq_entry *e = sq_at(r, r->send_seq);
    uint64_t off = (uint64_t)r->send_pkt * r->mtu_bytes;
    uint64_t left = e->len - off;
    n->seq = r->send_seq;
    n->pkt_idx = r->send_pkt;
    n->len = (uint32_t)(left < r->mtu_bytes ? left : r->mtu_bytes);
    n->retx = false;
    const struct fe_cc_out *o = &qp->cc->out;
    /* Window: payload in flight; one packet may always be out, or a window below one MTU
     * would deadlock. */
    if (r->inflight_bytes && r->inflight_bytes + n->len > o->window_bytes) return false;
    if (o->credit_bytes != FE_CC_UNLIMITED && r->new_bytes_sent + n->len > o->credit_bytes)
        return false;
    return true;
}

/* Whether the next new packet (the send queue's current one) would be held back by the replay
 * ring, the CC window or receiver credit, with the state as it is now. The pacer does not count:
 * time alone releases it. An empty send queue does not count either: a message's last packet
 * always asks for an ACK. */
static bool new_pkt_blocked(const struct fe_qp *qp)
{
    const struct fe_req *r = &qp->req;
    if (r->send_seq == r->tail_seq) return false;
    if (outstanding(r) >= r->ring_limit) return true;
    const struct fe_cc_out *o = &qp->cc->out;
    if (o->window_bytes == FE_CC_UNLIMITED && o->credit_bytes == FE_CC_UNLIMITED) return false;
    const struct fe_sq_entry *e = sq_at(r, r->send_seq);
    uint64_t left = e->len - (uint64_t)r->send_pkt * r->mtu_bytes;
    uint32_t len = (uint32_t)(left < r->mtu_bytes ? left : r->mtu_bytes);
    if (r->inflight_bytes && r->inflight_bytes + len > o->window_bytes) return true;
    return o->credit_bytes != FE_CC_UNLIMITED && r->new_bytes_sent + len > o->credit_bytes;
}

static inline bool is_write(enum fe_wr_op op)
{
    return op == FE_WR_WRITE || op == FE_WR_WRITE_IMM;
}
static inline bool has_imm(enum fe_wr_op op)
{
    return op == FE_WR_WRITE_IMM || op == FE_WR_SEND_IMM;
}

static inline uint8_t opcode_of(const struct fe_sq_entry *e, uint32_t pkt_idx)
{
    unsigned pos = (pkt_idx == 0 ? 2u : 0u) | (pkt_idx + 1 == e->npkts ? 1u : 0u);
    return opcode_table[e->op][pos];
}

/* Frame bytes as the pacer and the CC count them: the opcode's headers, payload, pad, ICRC, and
 * Ethernet/IP/UDP/FCS around them (fe_pkt_wire_len + fe_path_overhead_bytes). Sets n->opcode,
 * which the packet keeps until it leaves. */
static inline uint32_t frame_bytes(const struct fe_qp *qp, struct fe_next_pkt *n)
{
    const struct fe_req *r = &qp->req;
    n->opcode = opcode_of(sq_at(r, n->seq), n->pkt_idx);
    if (r->fixed_overhead_bytes) return n->len + r->fixed_overhead_bytes; /* simulated framing */
    return fe_rc_op_hdr_len(n->opcode) + ((n->len + 3) & ~3u) + FE_ICRC_LEN +
           r->frame_overhead_bytes;
}

/* Release time of a packet of `bytes` at `rate` without the cache: the pacer's answer from its
 * last update (credit accrues from then, so that is the absolute release time), or with ns-3's
 * pacing the time fixed when the previous packet left, whatever the rate now. */
static inline uint64_t release_at(const struct fe_qp *qp, uint64_t rate, uint32_t bytes)
{
    if (__builtin_expect(qp->req.ns3_paced, 0)) return qp->ns3.next_ns;
    return fe_pacer_when_from_last_inline(&qp->req.pacer, rate, bytes);
}

/* release_at, from the cache when the pacer already answered for it (see struct fe_req). */
static inline uint64_t pacer_release(const struct fe_qp *qp, uint64_t rate, uint32_t bytes)
{
    const struct fe_req *r = &qp->req;
    if (r->paced && r->paced_rate_Bps == rate && r->paced_bytes == bytes) return r->paced_until_ns;
    return release_at(qp, rate, bytes);
}

static void arm_timer(struct fe_req *r, uint64_t now_ns)
{
    r->timer_armed = true;
    r->timer_ns = now_ns + r->ack_timeout_ns;
}

/* The steps of fe_req_tx: pick the packet, account for it, fill it, price the next one. They
 * are one function's parts, run for every data packet: inlined. */
#define STEP static inline __attribute__((always_inline))

/* Remembers `n`, of `fbytes` frame bytes, as the next packet, released at `t` at `rate`. */
STEP void hold_priced(struct fe_req *r, const struct fe_next_pkt *n, uint64_t rate, uint32_t fbytes,
                      uint64_t t)
{
    r->paced = true;
    r->paced_rate_Bps = rate;
    r->paced_bytes = fbytes;
    r->paced_until_ns = t;
    r->paced_pkt = *n;
}

/* Nothing may leave: a send queue with work that the replay ring alone holds back is a stall,
 * counted once until a new packet leaves. */
STEP void note_stall(struct fe_qp *qp)
{
    struct fe_req *r = &qp->req;
    if (!r->rnr_wait && r->tx_psn == r->next_psn && r->send_seq != r->tail_seq &&
        outstanding(r) >= r->ring_limit && !r->stalled) {
        r->stalled = true;
        qp->ctr.replay_full_stalls++;
    }
}

/* The next packet when none is priced (or the rate changed): an RNR wait that has ended is
 * over, the packet is worked out and priced. True when it may leave now; false when nothing may
 * leave or the pacer holds it (then it is remembered, priced). */
STEP bool pick_pkt(struct fe_qp *qp, uint64_t now_ns, uint64_t rate, struct fe_next_pkt *n,
                   uint32_t *fbytes)
{
    struct fe_req *r = &qp->req;
    if (r->rnr_wait && now_ns >= r->rnr_until_ns) {
        r->rnr_wait = false;
        if (outstanding(r)) arm_timer(r, now_ns);
    }
    if (!next_pkt(qp, n)) {
        note_stall(qp);
        return false;
    }
    /* The single earliest-send-time hook: the pacer at the CC's rate (with ns-3's pacing, the
     * time fixed when the last packet left). */
    *fbytes = frame_bytes(qp, n);
    if (rate == FE_CC_UNLIMITED) return true;
    uint64_t t = fe_pacer_when_from_last_inline(&r->pacer, rate, *fbytes);
    if (__builtin_expect(r->ns3_paced, 0)) t = qp->ns3.next_ns;
    if (t <= now_ns) return true;
    hold_priced(r, n, rate, *fbytes, t);
    return false;
}

/* A retransmission (Go-Back-N or probe) of PSN tx_psn. Returns the PSN; *ackreq. */
STEP uint32_t account_retx(struct fe_qp *qp, uint64_t now_ns, bool *ackreq)
{
    struct fe_req *r = &qp->req;
    uint32_t psn = r->tx_psn;
    struct fe_replay_entry *re = ring_at(r, psn);
    re->flags |= FE_RE_RETX;
    re->sent_ns = now_ns;
    r->tx_psn = fe_psn_add(psn, 1);
    /* the last packet of a go-back burst asks for an ACK at once */
    *ackreq = (re->flags & FE_RE_ACKREQ) || r->tx_psn == r->next_psn;
    if (r->probe)
        qp->ctr.ackreq_probes++;
    else
        qp->ctr.retx_pkts++;
    r->probe = false;
    return psn;
}

/* AckReq on a new packet: message end, every ackreq_every packets, and the last packet before
 * the requester blocks (replay ring full, CC window or credit closed). Without the latter a
 * coalescing responder waits for packets that cannot come, and only the retransmit timeout
 * would get the flow going again. */
STEP bool new_ackreq(struct fe_qp *qp, bool last)
{
    struct fe_req *r = &qp->req;
    bool ackreq = last || ++r->pkts_since_ackreq >= r->ackreq_every || new_pkt_blocked(qp);
    if (ackreq) r->pkts_since_ackreq = 0;
    return ackreq;
}

/* A new packet: the next PSN, its replay entry, the bytes in flight and the send queue's
 * position. Returns the PSN; *ackreq. */
STEP uint32_t account_new(struct fe_qp *qp, uint64_t now_ns, const struct fe_next_pkt *n, bool last,
                          bool *ackreq)
{
    struct fe_req *r = &qp->req;
    uint32_t psn = r->next_psn;
    struct fe_replay_entry *re = ring_at(r, psn);
    re->sent_ns = now_ns;
    re->sq_seq = n->seq;
    re->pkt_idx = n->pkt_idx;
    re->payload_len = (uint16_t)n->len;
    r->next_psn = r->tx_psn = fe_psn_add(psn, 1);
    r->inflight_bytes += n->len;
    r->new_bytes_sent += n->len;
    if (last) {
        r->send_seq++;
        r->send_pkt = 0;
    } else {
        r->send_pkt++;
    }
    r->stalled = false;
    *ackreq = new_ackreq(qp, last);
    re->flags = *ackreq ? FE_RE_ACKREQ : 0;
    return psn;
}

/* The packet leaves: its PSN, AckReq, the retransmit timer and the counters. */
STEP uint32_t account_inflight(struct fe_qp *qp, uint64_t now_ns, const struct fe_next_pkt *n,
                               bool last, bool *ackreq)
{
    struct fe_req *r = &qp->req;
    uint32_t psn =
        n->retx ? account_retx(qp, now_ns, ackreq) : account_new(qp, now_ns, n, last, ackreq);
    if (*ackreq) r->ackreq_psn = psn;
    if (!r->timer_armed) arm_timer(r, now_ns);
    qp->ctr.tx_pkts++;
    qp->ctr.tx_bytes += n->len;
    return psn;
}

/* The packet itself, pointing into the WR's memory. Member by member (see fe_resp_tx). */
STEP void fill_packet(const struct fe_req *r, struct fe_pkt *out, const struct fe_sq_entry *e,
                      const struct fe_next_pkt *n, uint32_t psn, bool ackreq, bool last)
{
    uint64_t off = (uint64_t)n->pkt_idx * r->mtu_bytes;
    out->bth = (struct fe_bth){.opcode = n->opcode,
                               .pkey = FE_PKEY_DEFAULT,
                               .dqpn = r->remote_qpn,
                               .ackreq = ackreq,
                               .psn = psn};
    if (n->pkt_idx == 0 && is_write(e->op))
        out->reth = (struct fe_reth){.va = e->target_va, .rkey = r->remote_rkey, .dma_len = e->len};
    else
        out->reth = (struct fe_reth){0};
    out->aeth = (struct fe_aeth){0};
    out->imm = last && has_imm(e->op) ? e->imm : 0;
    out->payload = e->data ? e->data + off : NULL;
    out->payload_len = n->len;
    out->ecn = r->data_ecn;
    out->dscp = r->dscp;
    out->pcp = r->pcp;
    out->icrc = FE_ICRC_UNCHECKED;
    out->int_md = NULL;
    out->credit_bytes = 0;
}

/* ns-3's pacing: the next packet may leave one gap of this frame after it, at the rate after
 * the CC saw it leave (timers due at this time have run, as ns-3 runs them before the NIC's
 * next look); the packet price_next priced by the bucket takes that time. Out of line: only
 * --ns3-compat's DCQCN flows take it. */
__attribute__((noinline)) static void note_ns3_gap(struct fe_qp *qp, uint64_t now_ns,
                                                   uint32_t fbytes)
{
    struct fe_req *r = &qp->req;
    uint64_t rate = qp->cc->out.rate_Bps;
    if (rate == FE_CC_UNLIMITED)
        qp->ns3.next_ns = now_ns;
    else if (rate == 0)
        qp->ns3.next_ns = FE_CC_NO_TIMER; /* never, as the pacer would hold it */
    else
        qp->ns3.next_ns = now_ns + qp->ns3.gap_ns(rate * 8, fbytes);
    if (r->paced) r->paced_until_ns = qp->ns3.next_ns;
}

/* Works out the next packet and its release now, while everything is at hand: the deadline
 * query that follows and the send at that time then cost nothing. */
STEP void price_next(struct fe_qp *qp)
{
    struct fe_req *r = &qp->req;
    uint64_t rate = qp->cc->out.rate_Bps;
    struct fe_next_pkt n;
    if (rate == FE_CC_UNLIMITED || !next_pkt(qp, &n)) return;
    uint32_t fbytes = frame_bytes(qp, &n);
    hold_priced(r, &n, rate, fbytes, fe_pacer_when_from_last_inline(&r->pacer, rate, fbytes));
}

/* Not inlined into fe_qp_tx, which then only dispatches (tail calls) and saves no registers for
 * the responses it sends. */
__attribute__((noinline)) int fe_req_tx(struct fe_qp *qp, uint64_t now_ns, struct fe_pkt *out)
{
    struct fe_req *r = &qp->req;
    uint64_t rate = qp->cc->out.rate_Bps;
    struct fe_next_pkt n;
    uint32_t fbytes;
    if (r->paced && rate == r->paced_rate_Bps) {
        /* fast path: the next packet and its release time are known (see struct fe_req) */
        if (now_ns < r->paced_until_ns) return 0;
        n = r->paced_pkt;
        fbytes = r->paced_bytes;
    } else if (!pick_pkt(qp, now_ns, rate, &n, &fbytes)) {
        return 0;
    }
    const struct fe_sq_entry *e = sq_at(r, n.seq);
    fe_pacer_consume_inline(&r->pacer, rate, fbytes, now_ns);
    /* First, while little is live: on_send may move the window, and the AckReq decision below
     * reads the outputs after it. */
    fe_cc_on_send(qp->cc, now_ns, fbytes);
    r->paced = false;
    bool last = n.pkt_idx + 1 == e->npkts, ackreq;
    uint32_t psn = account_inflight(qp, now_ns, &n, last, &ackreq);
    fill_packet(r, out, e, &n, psn, ackreq, last);
    price_next(qp);
    if (__builtin_expect(r->ns3_paced, 0)) note_ns3_gap(qp, now_ns, fbytes);
    return 1;
}

/* The deadline of a packet the pacer has not priced yet (none waits, or a CC changed the outputs
 * behind the QP's back), kept out of line: it needs registers the common path does not. */
__attribute__((noinline)) static uint64_t unpriced_deadline(const struct fe_qp *qp, uint64_t d)
{
    uint64_t rate = qp->cc->out.rate_Bps;
    struct fe_next_pkt n;
    if (next_pkt(qp, &n)) {
        if (rate == FE_CC_UNLIMITED) return 0;
        uint64_t t = pacer_release(qp, rate, frame_bytes(qp, &n));
        if (t < d) d = t;
    }
    return d;
}

uint64_t fe_req_deadline(const struct fe_qp *qp, uint64_t d)
{
    const struct fe_req *r = &qp->req;
    if (r->rnr_wait) return r->rnr_until_ns < d ? r->rnr_until_ns : d;
    if (r->timer_armed && r->timer_ns < d) d = r->timer_ns;
    if (r->paced && qp->cc->out.rate_Bps == r->paced_rate_Bps)
        return r->paced_until_ns < d ? r->paced_until_ns : d;
    if (r->tx_psn == r->next_psn && r->send_seq == r->tail_seq) return d; /* nothing to send */
    return unpriced_deadline(qp, d);
}

/* ---- completion and errors ---- */

static void complete_wr(struct fe_qp *qp, const struct fe_sq_entry *e, enum fe_wc_status st)
{
    bool send = e->op == FE_WR_SEND || e->op == FE_WR_SEND_IMM;
    struct fe_cqe cqe = {.cookie = e->cookie,
                         .status = (uint8_t)st,
                         .opcode = send ? FE_WC_SEND : FE_WC_RDMA_WRITE,
                         .byte_len = e->len};
    fe_qp_push_cqe(qp, &cqe);
}

void fe_req_flush(struct fe_qp *qp, bool fail_wr, uint32_t fail_seq, enum fe_wc_status status)
{
    struct fe_req *r = &qp->req;
    for (uint32_t s = r->head_seq; s != r->tail_seq; s++)
        complete_wr(qp, sq_at(r, s), fail_wr && s == fail_seq ? status : FE_WC_WR_FLUSH_ERR);
    r->head_seq = r->send_seq = r->tail_seq;
    r->send_pkt = 0;
    r->una_psn = r->tx_psn = r->head_psn = r->next_psn;
    r->inflight_bytes = 0;
    r->timer_armed = false;
    r->rnr_wait = false;
    r->paced = false;
    r->probe = false;
}

/* The WR that PSN p (in [una, next)) belongs to. */
static inline uint32_t wr_of_psn(const struct fe_req *r, uint32_t psn)
{
    return ring_at(r, psn)->sq_seq;
}

static void fail(struct fe_qp *qp, uint32_t psn, enum fe_wc_status st)
{
    fe_qp_set_error(qp, true, wr_of_psn(&qp->req, psn), st);
}

static void rtt_sample(struct fe_qp_counters *ctr, uint64_t rtt)
{
    ctr->rtt_samples++;
    ctr->rtt_sum_ns += rtt;
    if (rtt > ctr->rtt_max_ns) ctr->rtt_max_ns = rtt;
    int b = rtt ? 63 - __builtin_clzll(rtt) : 0;
    ctr->rtt_hist[b > 31 ? 31 : b]++;
}

/* Cumulative acknowledgement of every PSN up to `psn` (in [una, next)). Returns the newly
 * acknowledged payload bytes and the RTT sample (0 when none: Karn). Inlined: it runs for every
 * ACK, and as a call it saved and restored most registers. */
static inline __attribute__((always_inline)) uint64_t ack_to(struct fe_qp *qp, uint32_t psn,
                                                             uint64_t now_ns, uint64_t *rtt_ns)
{
    struct fe_req *r = &qp->req;
    const struct fe_replay_entry *last = ring_at(r, psn);
    *rtt_ns = 0;
    if (!(last->flags & FE_RE_RETX)) {
        *rtt_ns = now_ns >= last->sent_ns ? now_ns - last->sent_ns : 0;
        rtt_sample(&qp->ctr, *rtt_ns);
    }
    uint32_t new_una = fe_psn_add(psn, 1);
    uint64_t bytes = 0;
    for (uint32_t p = r->una_psn; p != new_una; p = fe_psn_add(p, 1))
        bytes += ring_at(r, p)->payload_len;
    r->inflight_bytes -= bytes;
    r->una_psn = new_una;
    if (fe_psn_before(r->tx_psn, new_una)) r->tx_psn = new_una;

    /* completions, in order, for every WR whose last PSN is now acknowledged (none when not
     * even its first is: that needs no look at its entry) */
    while (r->head_seq != r->send_seq && r->head_psn != new_una) {
        const struct fe_sq_entry *e = sq_at(r, r->head_seq);
        uint32_t end_psn = fe_psn_add(r->head_psn, (int32_t)e->npkts); /* the next WR's first */
        if (fe_psn_before(new_una, end_psn)) break;
        complete_wr(qp, e, FE_WC_SUCCESS);
        qp->ctr.tx_msgs_completed++;
        qp->ctr.tx_bytes_completed += e->len;
        r->head_seq++;
        r->head_psn = end_psn;
    }
    /* progress: retry budgets refill, a new Go-Back-N may start, the timer restarts */
    r->retry_left = r->retry_cnt;
    if (r->backed_off) {
        r->ack_timeout_ns = qp->cfg.ack_timeout_ns;
        r->backed_off = false;
    }
    r->rnr_left = r->rnr_retry;
    r->nak_psn_valid = false;
    if (outstanding(r))
        arm_timer(r, now_ns);
    else
        r->timer_armed = false;
    return bytes;
}

/* A timeout below the backoff ceiling doubles the timer and spends no retry: the receiver may
 * be slow (a software peer on a busy core), not the packet lost. */
static bool back_off(struct fe_qp *qp)
{
    struct fe_req *r = &qp->req;
    uint64_t max_ns = qp->cfg.ack_timeout_max_ns;
    if (r->ack_timeout_ns >= max_ns) return false;
    r->ack_timeout_ns = r->ack_timeout_ns > max_ns / 2 ? max_ns : 2 * r->ack_timeout_ns;
    r->backed_off = true;
    qp->ctr.timeout_backoffs++;
    return true;
}

/* Budget check for one more retry; false (and the QP in error) when exhausted. */
static bool take_retry(struct fe_qp *qp, uint32_t psn)
{
    struct fe_req *r = &qp->req;
    if (r->retry_cnt == FE_RETRY_INFINITE) return true;
    if (r->retry_left == 0) {
        fail(qp, psn, FE_WC_RETRY_EXC_ERR);
        return false;
    }
    r->retry_left--;
    return true;
}

void fe_req_expiry(struct fe_qp *qp, uint64_t now_ns)
{
    struct fe_req *r = &qp->req;
    if (r->rnr_wait && now_ns >= r->rnr_until_ns) {
        r->rnr_wait = false;
        if (outstanding(r)) arm_timer(r, now_ns);
    }
    if (fe_req_timer_due(qp, now_ns)) { /* outside an RNR wait: the retransmit timer */
        if (!outstanding(r)) {
            r->timer_armed = false;
            return;
        }
        qp->ctr.timeouts++;
        if (!back_off(qp) && !take_retry(qp, r->una_psn)) return;
        qp->ctr.retx_timeout++;
        r->paced = false;
        r->tx_psn = r->una_psn;
        r->probe = false;
        r->nak_psn_valid = false;
        arm_timer(r, now_ns);
    }
}

/* The CC's outputs changed (ACK, CNP, timer); `before` holds them as they were.
 *
 * The packet worked out for the pacer stays the next one unless the window or credit shrank
 * (struct fe_req); a new rate only moves its release, which is worked out again here, once, so
 * that the deadline queries and the send that follow find it ready.
 *
 * A window or credit that closes while the requester waits for the pacer can leave packets in
 * flight none of which asks for an ACK; a coalescing responder would then wait for packets that
 * cannot come, and only the retransmit timeout would end it. Resend the newest with AckReq (TCP's
 * tail loss probe, here at once: the duplicate is re-acknowledged, never re-executed). */
void fe_req_cc_changed(struct fe_qp *qp, const struct fe_cc_out *before)
{
    struct fe_req *r = &qp->req;
    const struct fe_cc_out *o = &qp->cc->out;
    if (o->window_bytes < before->window_bytes || o->credit_bytes < before->credit_bytes) {
        r->paced = false;
    } else if (r->paced && o->rate_Bps != r->paced_rate_Bps) {
        if (o->rate_Bps == FE_CC_UNLIMITED) {
            r->paced = false; /* unpaced sends are not cached */
        } else {
            r->paced_rate_Bps = o->rate_Bps;
            r->paced_until_ns = release_at(qp, o->rate_Bps, r->paced_bytes);
        }
    }
    uint32_t out_n = outstanding(r);
    if (!out_n || r->tx_psn != r->next_psn || r->rnr_wait) return;
    if ((uint32_t)fe_psn_diff(r->ackreq_psn, r->una_psn) < out_n) return; /* an ACK is due */
    if (!new_pkt_blocked(qp)) return;
    uint32_t newest = fe_psn_add(r->next_psn, -1);
    ring_at(r, newest)->flags |= FE_RE_ACKREQ;
    r->tx_psn = newest;
    r->probe = true;
    r->paced = false;
}

static enum fe_wc_status nak_status(uint8_t code)
{
    switch (code) {
    case FE_NAK_REMOTE_ACCESS:
        return FE_WC_REM_ACCESS_ERR;
    case FE_NAK_REMOTE_OP:
        return FE_WC_REM_OP_ERR;
    default:
        return FE_WC_REM_INV_REQ_ERR;
    }
}

/* An RNR NAK for `psn` (in flight): wait the timer it names, then resend from it. */
static void obey_rnr(struct fe_qp *qp, uint64_t now_ns, uint32_t psn, uint8_t timer_code)
{
    struct fe_req *r = &qp->req;
    if (r->rnr_wait && psn == r->tx_psn) return; /* a duplicate of the one we obey */
    if (r->rnr_retry != 7) {
        if (r->rnr_left == 0) {
            fail(qp, psn, FE_WC_RNR_RETRY_EXC_ERR);
            return;
        }
        r->rnr_left--;
    }
    qp->ctr.retx_rnr++;
    r->rnr_wait = true;
    r->rnr_until_ns = now_ns + fe_rnr_timer_ns(timer_code);
    r->tx_psn = psn;
    r->probe = false;
    r->timer_armed = false; /* re-armed when sending resumes */
}

/* A sequence NAK for `psn` (in flight): go back to it, unless we already did for this very NAK
 * (the channel duplicated it) or an RNR wait will resend from there anyway. `progress`: the NAK
 * acknowledged packets before its PSN (then no retry is spent). */
static void obey_seq_nak(struct fe_qp *qp, uint64_t now_ns, uint32_t psn, bool progress)
{
    struct fe_req *r = &qp->req;
    fe_cc_on_nack(qp->cc, now_ns, psn);
    if (r->rnr_wait) return;
    if (!progress && r->nak_psn_valid && r->nak_psn == psn) return;
    if (!progress && !take_retry(qp, psn)) return;
    qp->ctr.retx_seq_nak++;
    r->tx_psn = psn;
    r->probe = false;
    r->nak_psn_valid = true;
    r->nak_psn = psn;
}

/* NAKs (sequence, RNR, fatal) and malformed AETHs: rare, out of line so that the ACK path
 * stays lean. d is the NAK's PSN less una_psn, out_n the packets in flight. */
__attribute__((noinline, cold)) static int
rx_nak(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt, int32_t d, uint32_t out_n)
{
    struct fe_req *r = &qp->req;
    uint8_t syn = pkt->aeth.syndrome;
    uint32_t psn = pkt->bth.psn & FE_PSN_MASK;
    enum fe_aeth_kind kind = fe_aeth_kind(syn);
    uint8_t val = fe_aeth_value(syn);
    r->paced = false; /* NAKs: the next packet may change (Go-Back-N, RNR, error) */
    if (kind == FE_AETH_RESERVED || (kind == FE_AETH_NAK && val > FE_NAK_INVALID_RD_REQ)) {
        qp->ctr.rx_dropped++;
        return FE_EPARSE;
    }
    if (kind == FE_AETH_RNR)
        qp->ctr.rx_rnr_naks++;
    else
        qp->ctr.rx_naks[val]++;
    /* A NAK names a PSN that was sent and not yet acknowledged; older ones are stale. */
    if (d < 0 || (uint32_t)d >= out_n) return 0;
    bool progress = d > 0;
    if (progress) {
        /* a NAK implicitly acknowledges everything before its PSN */
        uint64_t rtt;
        struct fe_cc_ack a = {.psn = fe_psn_add(psn, -1), .credit_bytes = pkt->credit_bytes};
        a.acked_bytes = ack_to(qp, a.psn, now_ns, &rtt);
        a.rtt_ns = rtt;
        a.inflight_bytes = r->inflight_bytes;
        fe_cc_on_ack(qp->cc, now_ns, &a);
    }
    if (kind == FE_AETH_RNR)
        obey_rnr(qp, now_ns, psn, val);
    else if (val != FE_NAK_PSN_SEQ)
        fail(qp, psn, nak_status(val));
    else
        obey_seq_nak(qp, now_ns, psn, progress);
    return 0;
}

int fe_req_rx_ack(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt)
{
    struct fe_req *r = &qp->req;
    uint8_t syn = pkt->aeth.syndrome;
    uint32_t psn = pkt->bth.psn & FE_PSN_MASK;
    uint32_t out_n = outstanding(r);
    int32_t d = fe_psn_diff(psn, r->una_psn);

    if (fe_aeth_kind(syn) == FE_AETH_ACK) {
        qp->ctr.rx_acks++;
        qp->ctr.rx_cnps += pkt->bth.becn; /* congestion echoed on the ACK (ns-3's CNP) */
        /* d == -1 (or older): a duplicate or stale ACK; it still carries CC signals */
        if (d >= 0 && (uint32_t)d >= out_n) {
            qp->ctr.rx_dropped++; /* acknowledges a PSN never sent */
            return FE_ERANGE;
        }
        struct fe_cc_ack a = {.psn = psn,
                              .ecn_echo = pkt->bth.becn,
                              .int_md = pkt->int_md,
                              .credit_bytes = pkt->credit_bytes};
        /* the next packet stays what it was unless the ACK moves tx_psn (during a Go-Back-N)
         * or the window or credit shrinks */
        uint32_t tx_psn = r->tx_psn;
        struct fe_cc_out before = qp->cc->out;
        if (d >= 0) a.acked_bytes = ack_to(qp, psn, now_ns, &a.rtt_ns);
        a.inflight_bytes = r->inflight_bytes;
        fe_cc_on_ack(qp->cc, now_ns, &a);
        if (r->tx_psn != tx_psn) r->paced = false;
        fe_req_cc_changed(qp, &before);
        return 0;
    }
    return rx_nak(qp, now_ns, pkt, d, out_n);
}
