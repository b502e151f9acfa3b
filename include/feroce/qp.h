/* Reliable-connection queue pair, sans-I/O: requester (send side) and responder (receive side)
 * of one RC connection.
 *
 * The QP never does I/O and never reads a clock. The caller:
 *   - posts work requests (fe_qp_post_send) and receive buffers (fe_qp_post_recv);
 *   - pulls packets to transmit (fe_qp_tx) and frames them (fe_frame_encode, or the simulator);
 *   - pushes received packets in (fe_qp_rx, or fe_qp_rx_frame for raw bytes);
 *   - asks for the next deadline (fe_qp_next_deadline) and calls fe_qp_handle_expiry when it
 *     passes;
 *   - polls completions (fe_qp_poll_cq) and reads counters.
 * All memory is allocated by fe_qp_create and bounded by the configuration.
 *
 * Zero copy: a posted WR's data must stay valid and unchanged until its completion, exactly as
 * with verbs; packets returned by fe_qp_tx point into it. `replay_bytes` bounds the payload in
 * flight (unacknowledged), as the firmware's replay buffer does. */
#ifndef FEROCE_QP_H
#define FEROCE_QP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/cc.h"
#include "feroce/err.h"
#include "feroce/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_NO_DEADLINE        UINT64_MAX
#define FE_MAX_MSG_BYTES      (1u << 31)
#define FE_RETRY_INFINITE     0xFF       /* retry_cnt: never give up (rxe treats 7 so; IBA not) */
#define FE_QP_MAX_REPLAY_PKTS (1u << 22) /* replay_bytes / mtu_bytes at most (PSN half window) */
#define FE_QP_MAX_DEPTH       (1u << 24) /* sq_depth, rq_depth at most */

enum fe_wr_op { FE_WR_WRITE = 0, FE_WR_WRITE_IMM, FE_WR_SEND, FE_WR_SEND_IMM };

struct fe_wr {
    enum fe_wr_op op;
    uint64_t cookie;        /* returned in the completion */
    const uint8_t *data;    /* NULL = virtual payload (simulator): lengths only */
    uint32_t len;           /* 0 .. 2^31 bytes */
    uint64_t remote_offset; /* WRITE: target = remote_va + remote_offset */
    uint32_t imm;           /* *_IMM: the immediate (host order) */
};

enum fe_wc_status {
    FE_WC_SUCCESS = 0,
    FE_WC_RETRY_EXC_ERR,     /* transport retries exhausted (timeouts / sequence NAKs) */
    FE_WC_RNR_RETRY_EXC_ERR, /* RNR retries exhausted */
    FE_WC_REM_ACCESS_ERR,    /* peer answered NAK remote access error */
    FE_WC_REM_INV_REQ_ERR,   /* peer answered NAK invalid request */
    FE_WC_REM_OP_ERR,        /* peer answered NAK remote operational error */
    FE_WC_LOC_LEN_ERR,       /* responder: receive buffer too small for a SEND */
    FE_WC_WR_FLUSH_ERR,      /* flushed because the QP went to error */
};
const char *fe_wc_status_name(int status);

enum fe_wc_opcode {
    FE_WC_SEND = 0,           /* requester: SEND / SEND with immediate completed */
    FE_WC_RDMA_WRITE,         /* requester: WRITE / WRITE with immediate completed */
    FE_WC_RECV,               /* responder: a SEND arrived into a receive buffer */
    FE_WC_RECV_RDMA_WITH_IMM, /* responder: a WRITE with immediate consumed a receive buffer */
};

struct fe_cqe {
    uint64_t cookie; /* the WR's or the receive buffer's */
    uint8_t status;  /* enum fe_wc_status */
    uint8_t opcode;  /* enum fe_wc_opcode */
    bool has_imm;
    uint32_t imm;
    uint32_t byte_len; /* message length (receive side: bytes placed) */
};

/* A registered memory region on the responder. base == NULL is a sink: every check is made and
 * bytes are counted, nothing is stored (simulator, benchmarks). */
struct fe_mr {
    uint32_t rkey;
    uint64_t va;
    uint64_t len;
    uint8_t *base;
};

enum fe_qp_state { FE_QPS_RTS = 0, FE_QPS_ERROR = 1 };

struct fe_qp_config {
    uint32_t local_qpn, remote_qpn; /* 24 bits */
    uint32_t sq_psn;                /* first PSN this QP sends */
    uint32_t rq_psn;                /* first PSN this QP expects */
    uint64_t remote_va;             /* WRITE target base */
    uint32_t remote_rkey;
    uint32_t mtu_bytes;    /* 256, 512, 1024, 2048 or 4096 */
    struct fe_path path;   /* addressing, for whoever frames the packets */
    uint8_t dscp, pcp;     /* marking of data packets */
    uint8_t data_ecn;      /* ECN codepoint of data packets (ECT(0) when the CCA reacts to ECN) */
    uint64_t replay_bytes; /* payload bytes in flight at most */
    uint32_t sq_depth;     /* posted send WRs at most */
    uint32_t rq_depth;     /* posted receive buffers at most */
    uint32_t cq_depth;     /* completions queued at most (posting fails when it could overflow) */
    uint32_t max_mr;       /* memory regions registered at most */
    uint64_t ack_timeout_ns;
    /* Retransmit backoff: a timeout with no progress since the last one doubles the timer, up
     * to this, without spending a retry (a slow receiver is not a lost packet); from there on
     * each timeout spends one. Progress brings the timer back to ack_timeout_ns. 0 (or
     * ack_timeout_ns): no backoff, every timeout spends a retry. */
    uint64_t ack_timeout_max_ns;
    uint8_t retry_cnt;     /* 0..7, or FE_RETRY_INFINITE */
    uint8_t rnr_retry;     /* 0..7, 7 = infinite */
    uint8_t min_rnr_timer; /* code the responder sends in RNR NAKs */
    uint16_t ackreq_every; /* requester: AckReq on a message's last packet and every N; 1 = all
                            * (and always on the last packet the CC window, receiver credit
                            * or replay buffer lets it send) */
    uint16_t ack_every;    /* responder: ACK at least every N packets (coalescing) */
    /* Notification point (responder): answer CE-marked data with a CNP, at most one per
     * cnp_interval_ns. */
    bool np_enable;
    uint64_t cnp_interval_ns; /* min_time_between_cnps */
    uint8_t cnp_dscp, cnp_pcp;
    /* Congestion control of the requester: NULL = "none" (line rate). */
    const struct fe_cc_algo *cc_algo;
    const struct fe_cc_params *cc_params; /* NULL = the algorithm's defaults */
    uint64_t line_rate_bps;
    uint64_t base_rtt_ns;
    uint64_t pacer_burst_bytes; /* 0 = one MTU */
};

/* Defaults: QPNs 0x100, MTU 4096, PSNs 0, replay 2 MiB, SQ/RQ depths 1024, CQ 2048, 16 MRs,
 * IPv4 path with UDP source port 40128 + 0x100, ACK timeout 1 ms (IB timeout 14 is
 * 67 ms; the firmware uses far less), retry 7, rnr_retry 7, min_rnr_timer 1 (0.01 ms),
 * ackreq_every 32, ack_every 32, NP on with 4 us, CNP DSCP 48 / PCP 6, data ECT(0), DSCP 26,
 * PCP 3, line rate 100 Gb/s, no CC. */
void fe_qp_config_default(struct fe_qp_config *cfg);

struct fe_qp_counters {
    /* requester */
    uint64_t tx_pkts, tx_bytes; /* data packets / payload bytes, retransmissions included */
    uint64_t tx_msgs_completed;
    uint64_t retx_pkts;                            /* every retransmitted packet */
    uint64_t retx_seq_nak, retx_timeout, retx_rnr; /* Go-Back-N episodes by cause */
    uint64_t ackreq_probes; /* newest packet resent with AckReq: the CC closed the window on
                             * packets none of which asked for an ACK (not in retx_pkts) */
    uint64_t timeouts;
    uint64_t timeout_backoffs; /* timeouts that doubled the timer instead of spending a retry */
    uint64_t rx_acks, rx_naks[5], rx_rnr_naks; /* NAKs by code (fe_nak_code) */
    uint64_t rx_cnps;
    uint64_t replay_full_stalls; /* times input stalled on a full replay buffer */
    uint64_t rtt_samples, rtt_sum_ns, rtt_max_ns;
    uint64_t rtt_hist[32];       /* PSN-to-ACK latency, bucket i: [2^i, 2^(i+1)) ns */
    uint64_t tx_bytes_completed; /* payload bytes of the tx_msgs_completed */
    /* responder */
    uint64_t rx_pkts, rx_bytes; /* accepted data packets / payload bytes placed */
    uint64_t rx_msgs;
    uint64_t rx_dup_pkts, rx_ooo_pkts; /* duplicates re-acked / out-of-order dropped */
    uint64_t tx_acks, tx_naks[5], tx_rnr_naks;
    uint64_t tx_cnps, rx_ce_pkts;
    uint64_t rx_bad_icrc;
    uint64_t rx_bad_rkey, rx_bad_access; /* refused WRITEs (rkey / range) */
    uint64_t rx_unsupported;             /* opcodes answered with NAK invalid request */
    uint64_t rx_dropped;                 /* packets dropped for other reasons (wrong QPN, ...) */
    uint64_t tx_resp_overflow;           /* responses lost: response ring full (driver lag) */
};

struct fe_qp;

/* Validates the configuration (FE_EINVAL with the field named in *why_field when not NULL) and
 * allocates everything the QP will ever use. */
struct fe_qp *fe_qp_create(const struct fe_qp_config *cfg, uint64_t now_ns, int *err,
                           const char **why_field);
void fe_qp_destroy(struct fe_qp *qp);
/* Bytes a QP of `cfg` occupies (0 when cfg is invalid), in the one block fe_qp_create allocates
 * (with at most 63 more to align it on a cache line): the memory per QP. */
size_t fe_qp_memory_bytes(const struct fe_qp_config *cfg);
const struct fe_qp_config *fe_qp_config(const struct fe_qp *qp);

int fe_qp_reg_mr(struct fe_qp *qp, const struct fe_mr *mr);

/* FE_ENOSPC when the send queue (or the completion queue it would need) is full;
 * FE_ESTATE in error; FE_EINVAL for a bad length or opcode. */
int fe_qp_post_send(struct fe_qp *qp, const struct fe_wr *wr);
int fe_qp_post_recv(struct fe_qp *qp, uint64_t cookie, uint8_t *buf, uint32_t len);
/* Posted send WRs none of whose packets has left yet (a producer that fills its buffers just
 * in time keeps this small). */
uint32_t fe_qp_sq_unstarted(const struct fe_qp *qp);
/* Send WRs fe_qp_post_send would accept now: room in the send queue and, for their
 * completions, in the completion queue (0 in error). */
uint32_t fe_qp_sq_room(const struct fe_qp *qp);
/* New packets the requester may still send before an acknowledgement (ACK or NAK, through
 * fe_qp_rx) frees room in its replay ring. Until then it starts at most this many send WRs, so a
 * producer holding more unstarted WRs than this (fe_qp_sq_unstarted) may post its next ones
 * later without changing what the QP sends. */
uint32_t fe_qp_replay_room(const struct fe_qp *qp);

/* Next packet to transmit at now_ns: responses (ACK/NAK/CNP) first, then data when the pacer,
 * window and credit allow. Returns 1 and fills *out (pointing into WR memory), or 0. */
int fe_qp_tx(struct fe_qp *qp, uint64_t now_ns, struct fe_pkt *out);

/* A received packet addressed to this QP (BTH DestQP = local_qpn, P_Key 0xFFFF/0x7FFF, else
 * dropped). Always consumes it: bad ones are dropped and counted. Returns 0, or a negative
 * fe_err saying why it was dropped. */
int fe_qp_rx(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt);
/* The same from raw bytes: fe_frame_decode (ICRC verified when asked), then fe_qp_rx. Frames that
 * do not parse are dropped and counted in rx_dropped. */
int fe_qp_rx_frame(struct fe_qp *qp, uint64_t now_ns, const uint8_t *buf, size_t len,
                   enum fe_framing framing, bool verify_icrc);

/* Where the responder would place the next in-sequence packet of the RDMA WRITE in progress:
 * its PSN, the region bytes it writes (*dst, the rest of the message, *left_bytes) and the path
 * MTU (every packet but the last carries exactly that). 0 when no WRITE with bytes left is in
 * progress into a region with memory. A driver may receive payloads straight there: fe_qp_rx
 * does not copy a payload already where it belongs, and bytes that land there for a packet
 * that is not executed are written again by the packets that complete the message. */
int fe_qp_rx_write_next(const struct fe_qp *qp, uint32_t *psn, uint8_t **dst, uint64_t *left_bytes,
                        uint32_t *mtu_bytes);

/* Absolute time of the next thing to do: a retransmit or RNR timer, a CC timer, or the pacer's
 * release of pending data (<= now when a packet is ready). FE_NO_DEADLINE when idle. */
uint64_t fe_qp_next_deadline(const struct fe_qp *qp);
void fe_qp_handle_expiry(struct fe_qp *qp, uint64_t now_ns);

int fe_qp_poll_cq(struct fe_qp *qp, struct fe_cqe *out, int max);

/* Responder side of receiver-driven CC (Homa-style): the cumulative byte grant that this QP's
 * ACKs carry (fe_pkt.credit_bytes) from now on; the driver's grant scheduler sets it. A changed
 * grant is sent at the latest with the next ACK; fe_qp_tx emits a bare ACK for it when needed. */
void fe_qp_set_grant(struct fe_qp *qp, uint64_t credit_bytes);

enum fe_qp_state fe_qp_state(const struct fe_qp *qp);
const struct fe_qp_counters *fe_qp_counters(const struct fe_qp *qp);
/* The requester's CC instance (always present; "none" when not configured), for reading its
 * outputs and traces. Events reach it through fe_qp_rx and fe_qp_handle_expiry: the requester
 * keeps its next packet and release time across calls, so outputs changed behind its back are
 * seen only at its next event. */
struct fe_cc *fe_qp_cc(struct fe_qp *qp);

/* PSN state for tools and tests. */
struct fe_qp_psns {
    uint32_t next_psn;     /* next new PSN to send */
    uint32_t una_psn;      /* oldest unacknowledged PSN */
    uint32_t expected_psn; /* responder: next expected PSN */
    uint32_t msn;          /* responder: message sequence number */
    uint64_t inflight_bytes;
};
void fe_qp_psns(const struct fe_qp *qp, struct fe_qp_psns *out);

#ifdef __cplusplus
}
#endif
#endif
