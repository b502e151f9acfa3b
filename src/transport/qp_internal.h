/* Private state of a queue pair, shared by qp.c (object, queues, arbitration), requester.c (send
 * side) and responder.c (receive side). Nothing here is part of the public API. */
#ifndef FE_TRANSPORT_QP_INTERNAL_H
#define FE_TRANSPORT_QP_INTERNAL_H

#include "feroce/qp.h"
#include "feroce/psn.h"

/* One posted send WR and where its packets went. */
struct fe_sq_entry {
    struct fe_wr wr;
    uint64_t target_va; /* WRITE: remote_va + remote_offset */
    uint32_t npkts;     /* packets of the message, >= 1 */
    uint32_t first_psn; /* set when its first packet leaves */
};

/* Replay ring entry, one per unacknowledged PSN: where to find the packet again (zero copy: in
 * the WR's memory) and when it left, for RTT samples. */
#define FE_RE_RETX   0x01 /* sent more than once: no RTT sample from it (Karn) */
#define FE_RE_ACKREQ 0x02 /* carried AckReq: a retransmission carries it again */
struct fe_replay_entry {
    uint64_t sent_ns;
    uint32_t sq_seq;  /* the WR (send-queue sequence number) */
    uint32_t pkt_idx; /* packet index within the message */
    uint16_t payload_len;
    uint8_t flags;
};

/* The packet that would leave next: WR, packet index, payload bytes, retransmission or not. */
struct fe_next_pkt {
    uint32_t seq, pkt_idx, len;
    bool retx;
};

struct fe_req {
    /* Send queue: WRs by 32-bit sequence numbers (slot = seq % sq_cap).
     * [head, send): at least one packet sent (PSNs assigned); [send, tail): not yet started. */
    struct fe_sq_entry *sq;
    uint32_t sq_cap;
    uint32_t head_seq, send_seq, tail_seq;
    uint32_t send_pkt; /* next new packet index of WR send_seq */

    /* Replay ring, PSN-indexed: entry of PSN p = ring[p & ring_mask]. Holds [una, next). */
    struct fe_replay_entry *ring;
    uint32_t ring_mask;
    uint32_t ring_limit; /* entries allowed: replay_bytes / mtu */
    uint8_t mtu_shift;   /* log2(mtu_bytes): packets per message without a division */

    uint32_t una_psn;  /* oldest unacknowledged */
    uint32_t next_psn; /* next new PSN */
    uint32_t tx_psn;   /* next PSN to transmit: < next_psn while going back N */
    uint64_t inflight_bytes;
    uint64_t new_bytes_sent; /* cumulative first-transmission payload (receiver credit) */
    uint32_t pkts_since_ackreq;
    uint32_t ackreq_psn; /* newest PSN sent with AckReq: an ACK is due while it is in flight */
    bool probe;          /* tx_psn is a probe (fe_req_cc_changed), not a Go-Back-N */

    uint8_t retry_left, rnr_left;
    bool nak_psn_valid; /* obeyed a sequence NAK for nak_psn since the last progress: */
    uint32_t nak_psn;   /* a duplicate of it starts no second Go-Back-N */
    bool stalled;       /* the last attempt found the replay ring full (counted once) */

    bool timer_armed;
    uint64_t timer_ns; /* retransmit timeout deadline */

    bool rnr_wait;
    uint64_t rnr_until_ns;

    /* The next packet and the pacer's answer for it, worked out when the previous one left (or
     * when the pacer held it back): its release time depends only on the rate, the packet's
     * size and the bucket, and the bucket only changes when a packet leaves. Whatever can change
     * the next packet or close the window on it (a NAK, a timeout, a window or credit that
     * shrinks, a flush) clears `paced`; a CC event that changes the rate works the release out
     * again (fe_req_cc_changed), and the rate is compared at use for changes made behind the
     * QP's back. */
    bool paced;
    uint64_t paced_rate_Bps;
    uint32_t paced_bytes;
    uint64_t paced_until_ns;
    struct fe_next_pkt paced_pkt;
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

struct fe_resp {
    uint32_t epsn; /* expected PSN */
    uint32_t msn;
    bool nak_sent;     /* one sequence NAK per gap */
    bool becn_pending; /* ns-3 mode: the next ACK echoes congestion */
    bool grant_dirty;  /* changed since the last ACK left */
    bool cnp_ever;
    uint64_t last_cnp_ns;
    uint64_t grant_bytes;

    /* Responses waiting for fe_qp_tx (ring below); consecutive ACKs are merged (they are
     * cumulative). */
    uint32_t ring_head, ring_count;
    uint32_t pkts_since_ack;

    /* Message in progress (after a FIRST, until its LAST). */
    bool in_msg;
    bool msg_send;     /* SEND family (else WRITE) */
    uint64_t msg_va;   /* WRITE: next VA */
    uint64_t msg_left; /* WRITE: bytes of dma_len still expected */
    int32_t msg_mr;    /* WRITE: region index, -1 when none (zero-length WRITE) */
    uint64_t msg_off;  /* SEND: bytes placed in the receive buffer */
    uint64_t msg_bytes;

    /* Receive queue (FIFO; the head is the buffer a SEND in progress fills). */
    struct fe_recv_entry *rq;
    uint32_t rq_cap, rq_head, rq_count;

    struct fe_resp_entry ring[FE_RESP_RING];

    struct fe_int last_int; /* int_echo: INT of the latest data packet (nhops 0 = none yet) */
};

/* The configuration fields the packet paths read, copied from struct fe_qp_config (same names)
 * so that they share cache lines with the state instead of spreading over the whole
 * configuration (which starts with the 72-byte path). Set at creation, never changed. */
struct fe_qp_pkt_cfg {
    uint32_t local_qpn, remote_qpn;
    uint32_t remote_rkey;
    uint32_t mtu_bytes;
    uint64_t remote_va;
    uint32_t sq_depth;
    uint64_t ack_timeout_ns;
    uint64_t cnp_interval_ns;
    uint16_t ackreq_every, ack_every;
    uint8_t dscp, pcp, data_ecn;
    uint8_t cnp_dscp, cnp_pcp;
    uint8_t retry_cnt, rnr_retry, min_rnr_timer;
    bool np_enable, np_ecn_echo_on_ack, int_echo;
};

/* Per-packet state first, cold configuration and counters last, by cache line (the object is
 * allocated 64-byte aligned): a simulated fat-tree keeps tens of thousands of QPs active, so
 * every line an event touches is likely a miss. */
struct fe_qp {
    _Alignas(64) struct fe_qp_pkt_cfg pc;
    enum fe_qp_state state;
    uint32_t frame_overhead_bytes; /* fe_path_overhead_bytes(&cfg.path) */
    uint32_t fixed_overhead_bytes; /* cfg.sim_frame_overhead_bytes: frames = payload + this */

    struct fe_cc *cc;
    struct fe_pacer pacer;

    struct fe_cqe *cq;
    uint32_t cq_cap, cq_head, cq_count;
    uint32_t cq_reserved; /* CQEs promised to posted WRs and receive buffers */

    struct fe_req req;
    struct fe_resp resp;

    struct fe_mr *mr;
    uint32_t n_mr;

    _Alignas(64) struct fe_qp_counters ctr; /* per-packet ones in its first lines */
    struct fe_qp_config cfg;
};

/* Responses (or a grant ACK) waiting: they leave before data. */
static inline bool fe_resp_pending(const struct fe_qp *qp)
{
    return qp->resp.ring_count || (qp->resp.grant_dirty && qp->state == FE_QPS_RTS);
}

/* Whether fe_req_expiry has something to do: an RNR wait that ends, or (outside one) the
 * retransmit timer. fe_req_expiry tests the timer with it, so the two cannot drift apart. */
static inline bool fe_req_timer_due(const struct fe_qp *qp, uint64_t now_ns)
{
    const struct fe_req *r = &qp->req;
    return r->rnr_wait ? now_ns >= r->rnr_until_ns : r->timer_armed && now_ns >= r->timer_ns;
}

/* qp.c */
void fe_qp_push_cqe(struct fe_qp *qp, const struct fe_cqe *cqe);
/* Moves the QP to error: the requester's failing WR (sq sequence number, when `fail_wr`) gets
 * `status`, every other outstanding WR and receive buffer is flushed. */
void fe_qp_set_error(struct fe_qp *qp, bool fail_wr, uint32_t fail_seq, enum fe_wc_status status);
int fe_qp_find_mr(const struct fe_qp *qp, uint32_t rkey);

/* requester.c */
int fe_req_init(struct fe_qp *qp);
int fe_req_post(struct fe_qp *qp, const struct fe_wr *wr);
int fe_req_tx(struct fe_qp *qp, uint64_t now_ns, struct fe_pkt *out);
uint64_t fe_req_deadline(const struct fe_qp *qp);
void fe_req_expiry(struct fe_qp *qp, uint64_t now_ns);
void fe_req_cc_changed(struct fe_qp *qp, const struct fe_cc_out *before);
int fe_req_rx_ack(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt);
void fe_req_flush(struct fe_qp *qp, bool fail_wr, uint32_t fail_seq, enum fe_wc_status status);

/* responder.c */
int fe_resp_rx(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt);
int fe_resp_tx(struct fe_qp *qp, uint64_t now_ns, struct fe_pkt *out);
void fe_resp_flush(struct fe_qp *qp);

#endif
