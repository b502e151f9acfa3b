/* Private state of a queue pair, shared by qp.c (object, queues, arbitration), requester.c (send
 * side) and responder.c (receive side). Nothing here is part of the public API. */
#ifndef FE_TRANSPORT_QP_INTERNAL_H
#define FE_TRANSPORT_QP_INTERNAL_H

#include "feroce/qp.h"
#include "feroce/psn.h"
#include "transport/qp_sim.h"

#include <stddef.h>
#include <stdint.h>

/* One posted send WR, as the requester keeps it: 40 bytes instead of struct fe_wr's 48 plus
 * bookkeeping, because a requester walks its send queue once per message (post, send, complete)
 * and the bytes per entry are cache lines per packet for small messages. What every phase reads
 * comes first, so that an entry which straddles two lines mostly needs only one of them. */
struct fe_sq_entry {
    uint32_t len;
    uint32_t npkts; /* packets of the message, >= 1 */
    uint8_t op;     /* enum fe_wr_op */
    uint32_t imm;
    uint64_t cookie;
    uint64_t target_va; /* WRITE: remote_va + remote_offset */
    const uint8_t *data;
};

/* Replay ring entry, one per unacknowledged PSN: where to find the packet again (zero copy: in
 * the WR's memory) and when it left, for RTT samples. What an ACK reads comes first (as in
 * struct fe_sq_entry). */
#define FE_RE_RETX   0x01 /* sent more than once: no RTT sample from it (Karn) */
#define FE_RE_ACKREQ 0x02 /* carried AckReq: a retransmission carries it again */
struct fe_replay_entry {
    uint16_t payload_len;
    uint8_t flags;
    uint32_t sq_seq; /* the WR (send-queue sequence number) */
    uint64_t sent_ns;
    uint32_t pkt_idx; /* packet index within the message */
};

/* The packet that would leave next: WR, packet index, payload bytes, retransmission or not, and
 * its opcode (set when it is priced). */
struct fe_next_pkt {
    uint32_t seq, pkt_idx, len;
    bool retx;
    uint8_t opcode;
};

/* The requester, by cache line (see struct fe_qp for where each line falls). */
struct fe_req {
    /* What the deadline of either side reads (fe_req_deadline, fe_req_timer_due): these 40
     * bytes share the QP's first line. */
    bool rnr_wait;
    bool timer_armed;
    bool paced;        /* see paced_rate_Bps */
    bool probe;        /* tx_psn is a probe (fe_req_cc_changed), not a Go-Back-N */
    uint32_t tx_psn;   /* next PSN to transmit: < next_psn while going back N */
    uint32_t next_psn; /* next new PSN */
    /* Send queue: WRs by 32-bit sequence numbers (slot = seq % sq_cap).
     * [head, send): at least one packet sent (PSNs assigned); [send, tail): not yet started. */
    uint32_t send_seq, tail_seq;
    uint32_t una_psn;  /* oldest unacknowledged */
    uint64_t timer_ns; /* retransmit timeout deadline */
    uint64_t paced_until_ns;

    /* The next packet and the pacer's answer for it, worked out when the previous one left (or
     * when the pacer held it back): its release time depends only on the rate, the packet's
     * size and the bucket, and the bucket only changes when a packet leaves. Whatever can change
     * the next packet or close the window on it (a NAK, a timeout, a window or credit that
     * shrinks, a flush) clears `paced`; a CC event that changes the rate works the release out
     * again (fe_req_cc_changed), and the rate is compared at use for changes made behind the
     * QP's back. */
    uint64_t paced_rate_Bps;
    struct fe_next_pkt paced_pkt;
    uint32_t paced_bytes;
    uint32_t send_pkt; /* next new packet index of WR send_seq */
    struct fe_pacer pacer;

    /* The send queue and the replay ring, PSN-indexed: entry of PSN p = ring[p & ring_mask].
     * It holds [una, next). */
    struct fe_sq_entry *sq;
    struct fe_replay_entry *ring;
    uint32_t sq_cap;
    uint32_t ring_mask;
    uint32_t ring_limit; /* entries allowed: replay_bytes / mtu */
    uint32_t head_seq;
    uint32_t head_psn; /* first PSN of WR head_seq: WRs take consecutive PSNs in order */
    uint32_t pkts_since_ackreq;
    uint32_t ackreq_psn; /* newest PSN sent with AckReq: an ACK is due while it is in flight */
    uint64_t inflight_bytes;
    uint64_t new_bytes_sent; /* cumulative first-transmission payload (receiver credit) */

    /* The configuration the packets need, copied from struct fe_qp_config (same names), then
     * the retry state. */
    uint64_t remote_va;
    uint64_t ack_timeout_ns; /* the retransmit timer now: the configured one, or backed off */
    uint32_t remote_qpn, remote_rkey, mtu_bytes, sq_depth;
    uint32_t frame_overhead_bytes; /* fe_path_overhead_bytes(&cfg.path) */
    uint32_t fixed_overhead_bytes; /* fe_qp_sim_config.frame_overhead_bytes */
    uint16_t ackreq_every;
    uint8_t dscp, pcp, data_ecn, retry_cnt, rnr_retry;
    uint8_t mtu_shift; /* log2(mtu_bytes): packets per message without a division */
    uint8_t retry_left, rnr_left;
    bool nak_psn_valid; /* obeyed a sequence NAK for nak_psn since the last progress: */
    bool stalled;       /* the last attempt found the replay ring full (counted once) */
    bool backed_off;    /* ack_timeout_ns is above the configured one (progress resets it) */
    bool ns3_paced;     /* paced as HPCC ns-3 (struct fe_qp: ns3_gap_ns) */
    uint32_t nak_psn;   /* a duplicate of it starts no second Go-Back-N */
    uint64_t rnr_until_ns;
};

struct fe_recv_entry {
    uint64_t cookie;
    uint8_t *buf; /* NULL: a sink that counts only */
    uint32_t len;
};

/* A queued response: ACK / NAK / RNR NAK (AETH syndrome) or CNP. */
struct fe_resp_entry {
    bool cnp;
    bool becn;
    uint8_t syndrome;
    uint32_t psn;
    uint32_t msn;
};
#define FE_RESP_RING 16 /* power of two */

/* The responder, by cache line: what every data packet and its ACK read in the first two
 * (with the memory region of a QP that has one, and the response ring's first entries: the ring
 * starts again at its first entry whenever it empties), the rest after. */
struct fe_resp {
    uint32_t epsn; /* expected PSN */
    uint32_t msn;
    uint32_t pkts_since_ack;
    uint32_t ring_head; /* responses waiting for fe_qp_tx: ring[ring_head], fe_qp.resp_count */
    bool nak_sent;      /* one sequence NAK per gap */
    bool becn_pending;  /* ns-3 mode: the next ACK echoes congestion */
    bool in_msg;        /* a message is in progress (after a FIRST, until its LAST) */
    bool msg_send;      /* SEND family (else WRITE) */
    bool cnp_ever;
    /* configuration, copied from struct fe_qp_config and fe_qp_sim_config (same names) */
    bool int_echo, np_enable, np_ecn_echo_on_ack;
    uint16_t ack_every;
    uint8_t dscp, pcp, data_ecn, min_rnr_timer, cnp_dscp, cnp_pcp;
    uint64_t msg_va;   /* WRITE: next VA */
    uint64_t msg_left; /* WRITE: bytes of dma_len still expected */
    int32_t msg_mr;    /* WRITE: region index, -1 when none (zero-length WRITE) */
    uint32_t remote_qpn, mtu_bytes;
    uint32_t n_mr;

    uint64_t grant_bytes;
    struct fe_mr *mr; /* mr_one when max_mr <= 1 */
    struct fe_mr mr_one;
    /* Consecutive ACKs are merged (they are cumulative). */
    struct fe_resp_entry ring[FE_RESP_RING];

    uint64_t msg_off;   /* SEND: bytes placed in the receive buffer */
    uint64_t msg_bytes; /* WRITE: dma_len of a message of several packets */
    uint64_t last_cnp_ns;
    uint64_t cnp_interval_ns;

    /* Receive queue (FIFO; the head is the buffer a SEND in progress fills). */
    struct fe_recv_entry *rq;
    uint32_t rq_cap, rq_head, rq_count;

    struct fe_int last_int; /* int_echo: INT of the latest data packet (nhops 0 = none yet) */
};

/* HPCC ns-3's pacing (fe_qp_sim_config.ns3_gap_ns; fe_req.ns3_paced): the gap function and the
 * release it gave the next packet when the last one left. */
struct fe_req_ns3 {
    uint64_t (*gap_ns)(uint64_t rate_bps, uint32_t frame_bytes);
    uint64_t next_ns;
};

/* By cache line (the object is allocated 64-byte aligned): a simulated network keeps many QPs
 * busy at once, so every line a packet touches is likely a miss. A requester's packet touches
 * the first five lines (the first one, dispatch and deadline, shared with the responder; the
 * fifth holds the CQ and the first counters) and three more of the counters'; a responder's
 * packet the first line, its own two (resp) and one of the counters'. The counters start 24
 * bytes into a line, after the CQ: then the requester's first ones (tx_pkts ..
 * tx_msgs_completed) share the CQ's line and the responder's per-packet ones (rx_pkts ..
 * tx_acks) fall into one line. The cold rest (configuration, rare counters) comes last. */
struct fe_qp {
    _Alignas(64) enum fe_qp_state state;
    uint32_t local_qpn;
    struct fe_cc *cc;
    uint32_t resp_count; /* responses queued in resp.ring */
    bool grant_dirty;    /* resp.grant_bytes changed since the last ACK left */
    /* The CC algorithm has on_timer; without, its timer_ns stays FE_CC_NO_TIMER (the time of
     * the next on_timer call) and the deadline does not read the CC's line for it. */
    bool cc_timers;
    struct fe_req req;

    _Alignas(64) struct fe_cqe *cq;
    uint32_t cq_cap, cq_head, cq_count;
    uint32_t cq_reserved; /* CQEs promised to posted WRs and receive buffers */
    struct fe_qp_counters ctr;

    _Alignas(64) struct fe_resp resp;
    struct fe_qp_config cfg;
    struct fe_req_ns3 ns3;
    /* What fe_qp_destroy frees: the malloc block that holds the QP and its arrays (qp.c, one
     * allocation), NULL when the QP lives in its creator's memory (fe_qp_create_sim_alloc). */
    void *heap_block;
};

#if UINTPTR_MAX > UINT32_MAX /* the lines above, on 64-bit targets */
_Static_assert(offsetof(struct fe_qp, req.paced_rate_Bps) == 64, "fe_req's head fills line 0");
_Static_assert(offsetof(struct fe_qp, cq) == 256, "the requester fits lines 0-3");
_Static_assert(offsetof(struct fe_qp, ctr) % 64 == 24, "the counters start 24 bytes into a line");
_Static_assert(offsetof(struct fe_resp, grant_bytes) == 64, "the responder's first line is full");
_Static_assert(offsetof(struct fe_resp, ring[1]) <= 128, "ring[0] on the responder's 2nd line");
#endif

/* Responses (or a grant ACK) waiting: they leave before data. */
static inline bool fe_resp_pending(const struct fe_qp *qp)
{
    return qp->resp_count || (qp->grant_dirty && qp->state == FE_QPS_RTS);
}

/* Whether fe_req_expiry has something to do: an RNR wait that ends, or (outside one) the
 * retransmit timer. fe_req_expiry tests the timer with it, so the two cannot drift apart. */
static inline bool fe_req_timer_due(const struct fe_qp *qp, uint64_t now_ns)
{
    const struct fe_req *r = &qp->req;
    return r->rnr_wait ? now_ns >= r->rnr_until_ns : r->timer_armed && now_ns >= r->timer_ns;
}

/* The smallest power of two >= n (1 for 0): ring and queue capacities, indexed by a mask. */
static inline uint32_t fe_pow2_at_least(uint32_t n)
{
    uint32_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

/* qp.c */
void fe_qp_push_cqe(struct fe_qp *qp, const struct fe_cqe *cqe);
/* Moves the QP to error: the requester's failing WR (sq sequence number, when `fail_wr`) gets
 * `status`, every other outstanding WR and receive buffer is flushed. */
void fe_qp_set_error(struct fe_qp *qp, bool fail_wr, uint32_t fail_seq, enum fe_wc_status status);
int fe_qp_find_mr(const struct fe_qp *qp, uint32_t rkey);

/* requester.c */
void fe_req_init(struct fe_qp *qp);
int fe_req_post(struct fe_qp *qp, const struct fe_wr *wr);
int fe_req_tx(struct fe_qp *qp, uint64_t now_ns, struct fe_pkt *out);
/* The requester's deadline, or `d` when that comes first. */
uint64_t fe_req_deadline(const struct fe_qp *qp, uint64_t d);
void fe_req_expiry(struct fe_qp *qp, uint64_t now_ns);
void fe_req_cc_changed(struct fe_qp *qp, const struct fe_cc_out *before);
int fe_req_rx_ack(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt);
void fe_req_flush(struct fe_qp *qp, bool fail_wr, uint32_t fail_seq, enum fe_wc_status status);

/* responder.c */
void fe_resp_init(struct fe_qp *qp);
int fe_resp_rx(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt);
int fe_resp_tx(struct fe_qp *qp, uint64_t now_ns, struct fe_pkt *out);
void fe_resp_flush(struct fe_qp *qp);

#endif
