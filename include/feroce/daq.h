/* A software DAQ receiver: the receiving side of `feroce recv` and of the demo.
 *
 * It opens QPs on one or more front-ends through the side channel (host role) or waits for
 * manually configured peers, registers a ring of `slots` message slots per QP, and for each
 * WRITE with immediate (immediate = sequence number) hands slot (seq mod slots) to a consumer.
 * A slot's receive buffer is re-posted only when the consumer has taken the message, so a slow
 * consumer makes the sender back off through RNR NAKs instead of losing data. At most
 * slots - 1 receive buffers are posted (one per doorbell when the immediate comes every Mth
 * message: (slots - M) / M): the message being placed then never lands in a slot the consumer
 * still owns. The consumer verifies the data pattern byte-exact and may record it.
 * The QPs' notification point answers CE-marked packets with CNPs. */
#ifndef FEROCE_DAQ_H
#define FEROCE_DAQ_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/endpoint.h"
#include "feroce/qp.h"
#include "feroce/sidechannel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flows of one receiver, and front-ends it talks to: bounded only so that a typo cannot ask for
 * millions (each flow's ring and state are allocated for the flows asked for). */
#define FE_DAQ_MAX_FLOWS 4096
#define FE_DAQ_MAX_FE    1024

struct fe_daq_frontend {
    uint32_t ip; /* side channel address of a front-end */
    uint16_t port;
    unsigned qps; /* QPs to open on it */
};

struct fe_daq_config {
    struct fe_ep_config ep;
    uint32_t local_ip; /* our data address, told to front-ends (UDP: the bound IP) */
    /* side channel, host role */
    unsigned n_fe;
    struct fe_daq_frontend fe[FE_DAQ_MAX_FE];
    uint32_t sc_bind_ip; /* UDP backend: the reply socket (raw: the endpoint's address) */
    uint16_t sc_reply_port;
    uint64_t sc_timeout_ns; /* before a request is sent again; the first wait for a stream */
    unsigned sc_tries;      /* sends of a request, and of a tx-meta start with no stream seen */
    /* send the tx-meta start, to every QP at once when all are RTS; again (backing off) until
     * the stream's first packet arrives */
    bool send_start;
    /* manual mode (no side channel): n_manual QPs; QP i expects peer_qpn + i */
    unsigned n_manual;
    uint32_t manual_peer_qpn;
    uint32_t manual_peer_ip;
    uint16_t manual_peer_port;
    /* our QPs: QP i has QPN local_qpn + i, rkey rkey + i, its ring at va + i x slots x msg_bytes.
     * With random_rkey / random_psn (the defaults) each region's rkey and each QP's first PSN
     * are drawn from the kernel instead, new every run: a host that reaches our data port
     * cannot guess them (rkey and psn are then ignored). Tests that need fixed values clear
     * them. */
    uint32_t local_qpn, psn, rkey;
    bool random_rkey, random_psn;
    uint64_t va;
    /* the stream asked for (tx-meta) and the ring */
    uint32_t slots, msg_bytes;
    uint64_t count; /* messages per QP, 0 = until stopped */
    bool imm;       /* WRITE with immediate (per-message completions) rather than plain WRITE */
    /* Doorbell period M (include/feroce/pattern.h): the sender puts an immediate on every Mth
     * message (and on the last); the immediate of message k completes every message up to k.
     * Receive buffers count doorbells, so (slots - M) / M are posted and one is given back when
     * the consumer takes a doorbell's message: the sender can never be more than a ring ahead.
     * Needs slots >= 2 M. 1 = every message. */
    uint32_t imm_every;
    uint64_t gap_ns;
    /* A front-end that restarts (a power cycle, a crash) forgets its QPs and waits for a host to
     * open new ones. With reconnect_ns, a streaming QP that received nothing for that long is
     * taken for lost: it is closed on the front-end (a restarted one answers NO_QP) and opened
     * again, with a new first PSN, until the front-end answers; the new connection streams the
     * messages still missing (all of them without a count), numbered from 0 again. 0 = never
     * (a silent front-end only ends the run at its timeout). */
    uint64_t reconnect_ns;
    /* the consumer */
    uint64_t consume_Bps; /* 0 = as fast as it can */
    bool verify;
    int record_fd;          /* -1 = none: consumed messages are appended here */
    struct fe_qp_config qp; /* transport template (NP/CNP settings, MTU, depths) */
};
void fe_daq_config_default(struct fe_daq_config *cfg);

struct fe_daq_flow {
    bool used;
    uint8_t sc_state; /* enum fe_sc_host_state (manual: FE_SC_H_RTS) */
    unsigned fe_index;
    uint32_t qpn, peer_qpn;
    uint32_t rkey, psn;     /* the ring's rkey and the first PSN expected (random by default) */
    uint64_t va;            /* the ring's address as the sender sees it */
    uint64_t msgs, bytes;   /* consumed (and verified when verify is on) */
    uint64_t verify_errors; /* messages whose bytes were wrong */
    uint64_t seq_errors;    /* immediates out of order (lost or repeated work requests) */
    uint64_t next_seq;
    uint64_t record_lost; /* consumed but not in the record: a write to it failed (see
                           * fe_daq_record_error), and recording stopped there */
    uint64_t queued;      /* completed, waiting for the consumer */
    uint64_t first_ns, last_ns;
    bool qp_error;
    uint64_t reconnects; /* connections given up for silence (cfg.reconnect_ns) */
    uint64_t prev_msgs;  /* msgs consumed over the connections before the current one */
    bool reconnecting;   /* between giving one up and the next one's tx-meta start */
    struct fe_qp *qp;
};

/* Side-channel datagrams refused before any host saw them (each host counts its own refusals
 * in its fe_sc_stats). */
struct fe_daq_stats {
    uint64_t sc_refused_allow; /* from a source outside cfg.ep.allow */
    uint64_t sc_undecodable;   /* not a side-channel message */
    uint64_t sc_no_host;       /* decoded, but names none of our QPs */
};

struct fe_daq;
const struct fe_daq_stats *fe_daq_stats(const struct fe_daq *d);
struct fe_daq *fe_daq_create(const struct fe_daq_config *cfg, uint64_t now_ns, int *err,
                             char *errbuf, size_t errcap);
void fe_daq_destroy(struct fe_daq *d);
int fe_daq_fds(const struct fe_daq *d, int *fds, int max);
/* ready: bit i set when fds[i] is readable (FE_READY_ALL: read them all) */
void fe_daq_step(struct fe_daq *d, uint64_t now_ns, unsigned ready);
uint64_t fe_daq_next_deadline(const struct fe_daq *d);
/* Asks the front-ends to stop streaming (tx-meta stop). */
void fe_daq_stop(struct fe_daq *d, uint64_t now_ns);
/* Sends CLOSE_QP for every open QP. */
void fe_daq_close(struct fe_daq *d, uint64_t now_ns);
/* Every QP reached `count` messages (count > 0), or failed. */
bool fe_daq_done(const struct fe_daq *d);
/* No side-channel exchange outstanding (after fe_daq_close: all closed or failed). */
bool fe_daq_sc_idle(const struct fe_daq *d);
/* Plain WRITE mode: checks every ring slot written so far (call when the stream has ended);
 * returns the number of slots holding a wrong message, and adds messages/bytes to the flows. */
uint64_t fe_daq_verify_rings(struct fe_daq *d);
unsigned fe_daq_n_flows(const struct fe_daq *d);
const struct fe_daq_flow *fe_daq_flow(const struct fe_daq *d, unsigned i);
struct fe_ep *fe_daq_ep(struct fe_daq *d);
/* The errno of the write to record_fd that failed (a full disk), 0 when none did. The record
 * holds every consumed message up to that one, whole or cut short; none after it. */
int fe_daq_record_error(const struct fe_daq *d);
/* Flow i's counters over all its connections: the current QP's (zeros when none) plus the
 * responder counters of the QPs given up by reconnects. */
void fe_daq_flow_counters(const struct fe_daq *d, unsigned i, struct fe_qp_counters *out);
/* Side-channel host state of flow i (NULL in manual mode). */
const struct fe_sc_host *fe_daq_sc(const struct fe_daq *d, unsigned i);

#ifdef __cplusplus
}
#endif
#endif
