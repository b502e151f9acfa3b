/* The side channel: Lite-RoCEv2's UDP connection manager, so feroce can stand in for the FPGA
 * front-end or drive one.
 *
 * Every message is exactly 64 bytes, big-endian; 24-bit fields (QPN, PSN) sit in 4-byte slots
 * whose first byte is zero. "loc"/"rem" are from the sender's point of view; a reply swaps them.
 *
 * Flow: the host (DAQ receiver) sends OPEN_QP with its QPN/PSN/rkey/VA/IP; the front-end
 * allocates a QPN (from 256 up) and ACKs with it; the host sends MODIFY_QP_RTS; an optional
 * tx-meta datagram starts a stream; CLOSE_QP frees the QP. The front-end's first send PSN is the
 * host's PSN.
 *
 * Both roles are sans-I/O state machines: the caller passes datagrams (with their source address)
 * and now_ns in, and takes datagrams to send and deadlines out. Malformed datagrams and datagrams
 * from an unexpected source are rejected with a reason counter and change no state. */
#ifndef FEROCE_SIDECHANNEL_H
#define FEROCE_SIDECHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_SC_PORT           17185 /* 0x4321: the front-end listens here */
#define FE_SC_REPLY_PORT     17186 /* replies go to the message's reply_port, this when it is 0 */
#define FE_SC_MSG_LEN        64
#define FE_SC_MAX_QPS        16  /* QPs a front-end serves at most (the firmware's limit) */
#define FE_SC_FIRST_QPN      256 /* front-end QPNs are allocated from here up */
#define FE_SC_HOST_MAX_STRAY 4   /* extra QPs a host closes after resent OPEN_QPs */

enum fe_sc_request {
    FE_SC_REQ_NULL = 0, /* no request (a tx-meta-only datagram) */
    FE_SC_REQ_OPEN_QP = 1,
    FE_SC_REQ_SEND_QP_INFO = 2,
    FE_SC_REQ_MODIFY_QP_RTS = 3,
    FE_SC_REQ_CLOSE_QP = 4,
    FE_SC_REQ_ERROR = 7,
};

enum fe_sc_ack {
    FE_SC_ACK_NULL = 0,
    FE_SC_ACK_ACK = 1,
    FE_SC_ACK_NO_QP = 2, /* no such QP, or no QP left to open */
    FE_SC_ACK_NAK = 3,
    FE_SC_ACK_ERROR = 7,
};

const char *fe_sc_request_name(int request);
const char *fe_sc_ack_name(int ack);

/* One side's QP parameters. */
struct fe_sc_qp_info {
    uint32_t qpn;  /* 24 bits */
    uint32_t psn;  /* 24 bits: the first PSN this side expects (host) / sends (front-end) */
    uint32_t rkey; /* of the side's registered region */
    uint64_t va;   /* base address of that region */
    uint32_t ip;   /* IPv4, host order */
};

/* Transfer metadata: what the front-end should stream. */
struct fe_sc_tx_meta {
    bool valid;
    bool start;     /* start (true) or stop (false) the stream */
    bool immediate; /* WRITE/SEND with immediate */
    bool write;     /* true: RDMA WRITE, false: SEND */
    uint32_t msg_len_bytes;
    uint32_t msg_count; /* 0 = unlimited (feroce) */
    uint32_t gap;       /* between messages: feroce counts nanoseconds, the firmware clock cycles */
};

/* A decoded message, fields in host order. */
struct fe_sc_msg {
    bool info_valid;
    uint8_t request; /* enum fe_sc_request */
    bool ack_valid;
    uint8_t ack; /* enum fe_sc_ack */
    struct fe_sc_qp_info loc, rem;
    uint16_t reply_port;
    struct fe_sc_tx_meta tx;
};

/* Why a datagram was refused: codec reasons first, then state-machine reasons. */
enum fe_sc_reason {
    FE_SC_R_OK = 0,
    FE_SC_R_SHORT,       /* shorter than 64 bytes */
    FE_SC_R_LONG,        /* longer than 64 bytes */
    FE_SC_R_SLOT,        /* a 24-bit field's slot has a non-zero first byte */
    FE_SC_R_REQUEST,     /* unknown request type, or a request without info valid */
    FE_SC_R_ACK,         /* unknown ack type, an ack type without ack valid, or an ack w/o info */
    FE_SC_R_TX_FLAGS,    /* reserved tx flag bits set, or tx flags without tx valid */
    FE_SC_R_EMPTY,       /* neither info, ack nor tx valid */
    FE_SC_R_SOURCE,      /* from an address (or host QP) that does not own the QP / not the peer */
    FE_SC_R_ROLE,        /* a reply sent to the front-end, or a request sent to the host */
    FE_SC_R_UNSOLICITED, /* a reply that matches no outstanding request */
    FE_SC_R_NOT_RTS,     /* tx-meta for a QP that is not ready to send, or for no QP */
    FE_SC_R_MAX
};
const char *fe_sc_reason_name(enum fe_sc_reason r);

struct fe_sc_stats {
    uint64_t rx_ok;                 /* datagrams accepted */
    uint64_t rejected[FE_SC_R_MAX]; /* datagrams refused, by reason ([0] unused) */
    uint64_t tx_msgs;               /* datagrams produced (replies, requests, tx-meta) */
    uint64_t tx_acks[8];            /* front-end: replies by ack type */
    uint64_t retries;               /* host: requests sent again after a timeout */
    uint64_t rts_on_open;     /* host: MODIFY_QP_RTS answered ERROR as the firmware does: RTS */
    uint64_t strays;          /* host: a resent OPEN_QP got a second QP from the front-end */
    uint64_t strays_closed;   /* host: CLOSE_QP sent for such a QP */
    uint64_t replies_limited; /* front-end: replies not sent, over the reply rate */
    uint64_t replies_undeliverable; /* front-end: replies to port 0 (firmware mode) */
};

/* Codec. encode: FE_EINVAL when a 24-bit field is out of range or a type does not fit its bits
 * (the message is then not written). decode: 0, or FE_EPARSE / FE_ETRUNC with *why set. */
int fe_sc_encode(uint8_t out[FE_SC_MSG_LEN], const struct fe_sc_msg *m);
int fe_sc_decode(const uint8_t *buf, size_t len, struct fe_sc_msg *m, enum fe_sc_reason *why);

/* ---- front-end role (the FPGA side: listens on 17185, owns up to 16 QPs) ---- */

/* How the front-end role reads the side channel.
 *  LIBERAL (the default): what host software written for the firmware sends works: a QP is
 *    named by its QPN alone (a host QPN of 0, or another source address, is accepted), a
 *    tx-meta start on a QP that is only OPEN makes it RTS (no MODIFY_QP_RTS needed).
 *  STRICT: only the host that opened a QP (address and host QPN) may drive it; tx-meta needs
 *    RTS; info valid without a request is refused.
 *  FIRMWARE: the Lite-RoCEv2 firmware's behaviour, so that a host tested against feroce works
 *    against the board: RTS on OPEN_QP, a MODIFY after it answered ERROR, a new QPN for every
 *    OPEN_QP, NO_QP/NAK repeating the previous reply with the ack type changed, no reply to
 *    SEND_QP_INFO, ERROR or a MODIFY outside the pool, reply PSN 0, replies to port 0 dropped.
 *    (The firmware also answers from port 0x8765 and has 4 QPs: the I/O layer's settings.) */
enum fe_sc_fe_mode { FE_SC_FE_LIBERAL = 0, FE_SC_FE_STRICT, FE_SC_FE_FIRMWARE };

#define FE_SC_MAX_ALLOW     16
#define FE_SC_FW_REPLY_PORT 0x8765 /* the firmware's replies come from this port */
#define FE_SC_FW_QPS        4      /* the firmware's default QP pool */

/* An allowed source network: (ip & mask) == net, host order. */
struct fe_sc_cidr {
    uint32_t net, mask;
};
/* Parses "A.B.C.D[/N]"; FE_EINVAL when malformed. */
int fe_sc_cidr_parse(const char *s, struct fe_sc_cidr *out);

struct fe_sc_fe_config {
    uint32_t local_ip; /* this front-end's IPv4 address (host order), sent in replies */
    uint32_t rkey;     /* this side's region, sent in replies (a pure sender has none: 0) */
    uint64_t va;
    unsigned max_qps;                         /* 1..FE_SC_MAX_QPS */
    uint32_t first_qpn;                       /* FE_SC_FIRST_QPN */
    uint32_t allowed_ip;                      /* when not 0, only this host may open QPs */
    uint8_t mode;                             /* enum fe_sc_fe_mode */
    struct fe_sc_cidr allow[FE_SC_MAX_ALLOW]; /* when n_allow > 0, only sources in these */
    unsigned n_allow;
    uint32_t reply_rate_per_s; /* replies paced at this rate (0: unpaced; default 1000) */
    uint32_t reply_burst;      /* ... after this many back to back (default 64) */
};
void fe_sc_fe_config_default(struct fe_sc_fe_config *cfg);

enum fe_sc_qp_state { FE_SC_QP_FREE = 0, FE_SC_QP_OPEN, FE_SC_QP_RTS };

struct fe_sc_fe_qp {
    uint8_t state;      /* enum fe_sc_qp_state */
    bool streaming;     /* a tx-meta start was received and not stopped since */
    uint32_t qpn;       /* this front-end's QPN */
    uint32_t sq_psn;    /* first PSN to send: the host's PSN */
    uint32_t host_addr; /* source IPv4 of the OPEN_QP: the only one allowed to drive it */
    uint16_t reply_port;
    struct fe_sc_qp_info peer; /* the host's QP: QPN, PSN, rkey, VA, IP */
    struct fe_sc_tx_meta tx;   /* last tx-meta */
    uint64_t opened_ns;
};

enum fe_sc_event_type {
    FE_SC_EV_OPENED = 1, /* a QP was allocated (or re-opened with new host parameters) */
    FE_SC_EV_UPDATED,    /* SEND_QP_INFO changed the host's parameters */
    FE_SC_EV_RTS,        /* the host moved the QP to ready-to-send */
    FE_SC_EV_START,      /* tx-meta with start: stream as described by ev.tx */
    FE_SC_EV_STOP,       /* tx-meta without start: stop streaming */
    FE_SC_EV_CLOSED,     /* CLOSE_QP (or ERROR) freed the QP */
};
const char *fe_sc_event_name(int type);

struct fe_sc_event {
    uint8_t type; /* enum fe_sc_event_type */
    uint32_t qpn;
    unsigned slot;             /* index in fe_sc_fe.qp */
    struct fe_sc_qp_info peer; /* the host's parameters (OPENED, UPDATED, RTS) */
    uint32_t sq_psn;
    struct fe_sc_tx_meta tx; /* START / STOP */
};

/* What one input produced. */
struct fe_sc_fe_result {
    int n_events;
    struct fe_sc_event ev[2]; /* e.g. RTS then START when one datagram carries both */
    bool reply;               /* send reply_msg to reply_ip:reply_port */
    uint8_t reply_msg[FE_SC_MSG_LEN];
    uint32_t reply_ip;
    uint16_t reply_port;
    enum fe_sc_reason why; /* when the input was refused */
};

struct fe_sc_fe {
    struct fe_sc_fe_config cfg;
    struct fe_sc_fe_qp qp[FE_SC_MAX_QPS]; /* all state lives here (tests compare it) */
    struct fe_sc_stats stats;
    uint8_t last_reply[FE_SC_MSG_LEN]; /* the firmware repeats it in NO_QP/NAK replies */
    uint64_t reply_tat_ns;             /* reply pacing (theoretical arrival time) */
};

/* FE_EINVAL for a bad configuration. */
int fe_sc_fe_init(struct fe_sc_fe *fe, const struct fe_sc_fe_config *cfg);
/* Handles one datagram received from src_ip:src_port (IPv4, host order). Returns 0 when
 * accepted (res says what to do), or a negative fe_err when refused (res->why, a counter, and no
 * state change). A request about an unknown QP is accepted and answered NO_QP. */
int fe_sc_fe_input(struct fe_sc_fe *fe, uint64_t now_ns, const uint8_t *buf, size_t len,
                   uint32_t src_ip, uint16_t src_port, struct fe_sc_fe_result *res);
/* The open QP with this QPN, or NULL. */
const struct fe_sc_fe_qp *fe_sc_fe_find(const struct fe_sc_fe *fe, uint32_t qpn);
/* Frees a QP locally (e.g. its transport went to error); FE_ENOENT when not open. */
int fe_sc_fe_release(struct fe_sc_fe *fe, uint32_t qpn);
unsigned fe_sc_fe_open_count(const struct fe_sc_fe *fe);

/* ---- host role (the DAQ receiver: opens one QP on a front-end) ---- */

struct fe_sc_host_config {
    uint32_t fe_ip;             /* the front-end (host order) */
    uint16_t fe_port;           /* FE_SC_PORT */
    bool any_src_port;          /* accept replies from any source port of fe_ip (the default: the
                                 * firmware replies from 0x8765); otherwise only from fe_port */
    uint16_t reply_port;        /* where the front-end must answer: FE_SC_REPLY_PORT */
    struct fe_sc_qp_info local; /* this host's QPN, first expected PSN, rkey, VA, IP */
    uint64_t retry_timeout_ns;  /* before a request is sent again: 100 ms */
    unsigned max_tries;         /* sends of one request before giving up: 5 */
    struct fe_sc_tx_meta start; /* when .valid, sent once the QP is RTS */
};
void fe_sc_host_config_default(struct fe_sc_host_config *cfg);

enum fe_sc_host_state {
    FE_SC_H_IDLE = 0,
    FE_SC_H_OPENING,   /* OPEN_QP sent, waiting for the ACK */
    FE_SC_H_MODIFYING, /* MODIFY_QP_RTS sent */
    FE_SC_H_RTS,       /* connected: the front-end may send */
    FE_SC_H_CLOSING,   /* CLOSE_QP sent */
    FE_SC_H_CLOSED,
    FE_SC_H_FAILED, /* see fail_ack / timed_out */
};
const char *fe_sc_host_state_name(int state);

struct fe_sc_host {
    struct fe_sc_host_config cfg;
    /* state (tests compare it) */
    uint8_t state;               /* enum fe_sc_host_state */
    uint8_t outstanding;         /* request waiting for its reply, FE_SC_REQ_NULL when none */
    bool send_now;               /* a datagram is due regardless of the deadline */
    bool start_pending;          /* the tx-meta is due */
    bool timed_out;              /* FAILED because max_tries sends got no reply */
    uint8_t fail_ack;            /* FAILED because the front-end answered this ack type */
    unsigned tries;              /* sends of the outstanding request */
    uint64_t deadline_ns;        /* when the outstanding request is sent again */
    struct fe_sc_qp_info remote; /* the front-end's QP (from its OPEN_QP ACK) */
    uint32_t stray_qpn[FE_SC_HOST_MAX_STRAY]; /* second QPs given for a resent OPEN_QP */
    unsigned n_stray;                         /* ... still to close */
    struct fe_sc_stats stats;
};

int fe_sc_host_init(struct fe_sc_host *h, const struct fe_sc_host_config *cfg);
/* IDLE -> OPENING. FE_ESTATE from any other state. */
int fe_sc_host_open(struct fe_sc_host *h, uint64_t now_ns);
/* Queues a tx-meta datagram (start or stop) in RTS; FE_ESTATE otherwise. */
int fe_sc_host_send_tx_meta(struct fe_sc_host *h, const struct fe_sc_tx_meta *tx);
/* Sends CLOSE_QP when the front-end knows the QP; otherwise goes straight to CLOSED. */
int fe_sc_host_close(struct fe_sc_host *h, uint64_t now_ns);
/* Next datagram to send to cfg.fe_ip:cfg.fe_port at now_ns: returns 1 and fills out, or 0.
 * Also where timeouts are handled (a request is resent, or the host gives up: FAILED). */
int fe_sc_host_poll_tx(struct fe_sc_host *h, uint64_t now_ns, uint8_t out[FE_SC_MSG_LEN]);
/* When fe_sc_host_poll_tx has something to do next; UINT64_MAX when nothing. */
uint64_t fe_sc_host_next_deadline(const struct fe_sc_host *h);
/* A datagram received from src_ip:src_port. 0 accepted; negative fe_err when refused (*why,
 * a counter, no state change). */
int fe_sc_host_input(struct fe_sc_host *h, uint64_t now_ns, const uint8_t *buf, size_t len,
                     uint32_t src_ip, uint16_t src_port, enum fe_sc_reason *why);
/* The same for an already decoded message (a receiver with several QPs decodes once and picks
 * the host whose local QPN is msg->rem.qpn). */
int fe_sc_host_input_msg(struct fe_sc_host *h, uint64_t now_ns, const struct fe_sc_msg *m,
                         uint32_t src_ip, uint16_t src_port, enum fe_sc_reason *why);

#ifdef __cplusplus
}
#endif
#endif
