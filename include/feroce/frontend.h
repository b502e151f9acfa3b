/* A software front-end board: the sending side of `feroce send` and of the demo.
 *
 * It answers the side channel as the FPGA does (or takes its peers from the configuration),
 * runs one RC queue pair per connection (up to 16) through an endpoint, and streams a data
 * pattern as RDMA WRITE or WRITE with immediate (immediate = message sequence number) into the
 * receiver's ring, following the stream convention of feroce/pattern.h: the stream id is the
 * sending QP's QPN, message k goes to remote offset (k mod slots) x msg_bytes.
 * Sans-clock like the core: the caller passes now_ns, waits on the fds until the deadline. */
#ifndef FEROCE_FRONTEND_H
#define FEROCE_FRONTEND_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/endpoint.h"
#include "feroce/frames.h"
#include "feroce/pattern.h"
#include "feroce/qp.h"
#include "feroce/sidechannel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_FRONTEND_MAX_QPS FE_SC_MAX_QPS

struct fe_stream_config {
    enum fe_wr_op op;   /* FE_WR_WRITE or FE_WR_WRITE_IMM */
    uint32_t msg_bytes; /* message length */
    uint64_t count;     /* messages per QP, 0 = until stopped */
    uint32_t slots;     /* receiver ring slots (must match the receiver) */
    uint64_t gap_ns;    /* between message posts of one QP, 0 = as fast as the QP takes them */
    enum fe_data_pattern pattern;
    uint32_t imm_every; /* WRITE_IMM: an immediate on every Mth message (feroce/pattern.h); 1 */
};

struct fe_frontend_config {
    struct fe_ep_config ep;
    uint32_t to_ip; /* when not 0 (UDP backend): send data here (a switch), not to the peer */
    uint16_t to_port;
    /* side channel, front-end role */
    bool sc_enable;
    uint32_t sc_bind_ip;        /* UDP backend: the side-channel socket (raw: the endpoint's IP) */
    uint16_t sc_port;           /* FE_SC_PORT */
    uint16_t sc_reply_src_port; /* replies leave from this port (the firmware's: 0x8765);
                                 * 0: from sc_port */
    struct fe_sc_fe_config sc;
    bool autostart; /* stream as soon as a QP is RTS instead of waiting for a tx-meta start */
    /* manual peers, without side channel: QP i talks to peer_qpn + i, rkey + i,
     * va + i x slots x msg_bytes (feroce recv --manual uses the same layout) */
    unsigned n_qps;
    uint32_t local_qpn; /* first local QPN (manual mode) */
    uint32_t peer_qpn, peer_psn, peer_rkey;
    uint64_t peer_va;
    uint32_t peer_ip;
    uint16_t peer_port;
    /* the stream: defaults; a tx-meta's non-zero length/count override them */
    struct fe_stream_config stream;
    uint64_t duration_ns; /* stop posting after this long from the first start (0 = no limit) */
    /* transport template (QPNs, PSNs, keys are filled per QP) */
    struct fe_qp_config qp;
    /* test hooks: drop data packets on purpose (requests only, never ACKs) */
    uint64_t drop_every;   /* every Nth data packet of each QP, retransmissions included, but
                            * never the same PSN twice in a row (that would livelock Go-Back-N) */
    uint32_t drop_psn[32]; /* the first transmission of each of these PSNs, on every QP */
    unsigned n_drop_psn;
};
void fe_frontend_config_default(struct fe_frontend_config *cfg);

struct fe_frontend_flow {
    bool used;
    bool streaming;  /* posting messages */
    bool finished;   /* count reached (or stopped) and everything completed */
    bool error;      /* the QP went to error or a WR failed */
    int fail_status; /* enum fe_wc_status of the first failed WR */
    uint32_t qpn, peer_qpn;
    struct fe_stream_config stream;
    uint64_t posted, completed; /* messages */
    uint64_t bytes_completed;
    uint64_t started_ns, finished_ns;
    uint64_t dropped_on_purpose;
    bool closed; /* the host closed it: qp is gone, `final` holds its counters */
    struct fe_qp_counters final;
    struct fe_qp *qp;
};

struct fe_frontend;
/* errbuf gets a sentence when creation fails. */
struct fe_frontend *fe_frontend_create(const struct fe_frontend_config *cfg, uint64_t now_ns,
                                       int *err, char *errbuf, size_t errcap);
void fe_frontend_destroy(struct fe_frontend *f);
/* fds to wait on for readability (data endpoint, side channel): returns how many. */
int fe_frontend_fds(const struct fe_frontend *f, int *fds, int max);
/* Does everything due at now_ns: side channel, receive, timers, completions, posting, transmit.
 * `ready`: bit i set when fds[i] is readable (FE_READY_ALL: read them all). */
void fe_frontend_step(struct fe_frontend *f, uint64_t now_ns, unsigned ready);
uint64_t fe_frontend_next_deadline(const struct fe_frontend *f);
/* Stops posting new messages (in-flight ones complete). */
void fe_frontend_stop(struct fe_frontend *f, uint64_t now_ns);
/* True when at least one stream ran and no flow is streaming or has messages in flight. */
bool fe_frontend_done(const struct fe_frontend *f);
/* Flows by slot (FE_FRONTEND_MAX_QPS of them; check .used). */
const struct fe_frontend_flow *fe_frontend_flow(const struct fe_frontend *f, unsigned i);
struct fe_ep *fe_frontend_ep(struct fe_frontend *f);
const struct fe_sc_fe *fe_frontend_sc(const struct fe_frontend *f);

#ifdef __cplusplus
}
#endif
#endif
