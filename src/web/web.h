/* The live web view of a run (`feroce demo --web`): an HTTP server on its own thread serving
 * the dashboard page, JSON (/api/state, /api/params), a Server-Sent Events stream (/api/stream)
 * and Prometheus metrics (/metrics). The tool's loop hands it samples of the counters and CC
 * state it already reads for its own table; fe_web_push never waits on the server, so a slow
 * or hostile client cannot slow the data path. Outside the core: only the CLI links it. */
#ifndef FE_WEB_H
#define FE_WEB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/cc.h"

#define FE_WEB_MAX_FLOWS   8
#define FE_WEB_RTT_BUCKETS 32

/* One flow (one sender QP and its receiver QP) at one instant; counters since the start. */
struct fe_web_flow {
    uint32_t qpn;      /* the sender QP's number */
    uint64_t rx_bytes; /* payload verified by the receiver */
    uint64_t tx_bytes; /* payload sent, retransmissions included */
    bool has_rc, has_rt, has_alpha;
    double rc_bps, rt_bps, alpha; /* DCQCN's current and target rate, alpha */
    uint64_t cnps_rx;             /* CNPs the sender received */
    uint64_t cnps_tx;             /* CNPs the receiver sent */
    uint64_t ce_pkts;             /* CE-marked packets the receiver saw */
    uint64_t retx_pkts, timeouts;
    uint64_t rtt_sum_ns, rtt_max_ns;
    uint64_t rtt_hist[FE_WEB_RTT_BUCKETS]; /* PSN-to-ACK latency, bucket i: [2^i, 2^(i+1)) ns */
};

/* The switch's bottleneck port at one instant. */
struct fe_web_port {
    uint64_t q_bytes, q_max_bytes;
    uint64_t tx_bytes, marked, drops_full, drops_loss;
};

struct fe_web_sample {
    uint64_t t_ns; /* since the run started streaming */
    unsigned n_flows;
    struct fe_web_flow f[FE_WEB_MAX_FLOWS];
    struct fe_web_port bottleneck;
};

/* What the run is: fixed for its whole life (the server reads it without a lock). */
struct fe_web_run {
    const char *tool;
    char description[256];
    uint64_t rate_bps; /* the bottleneck (the switch threshold) */
    uint64_t kmin_bytes, kmax_bytes, queue_bytes;
    unsigned n_flows;
    const struct fe_cc_params *ccp; /* every QP's CC parameters (NULL: no CC) */
};

struct fe_web_limits {
    unsigned max_connections, max_per_ip, timeout_s;
    size_t request_memory_bytes; /* a request's headers must fit (larger: refused) */
};

/* True when this binary was built with the web layer. */
bool fe_web_available(void);
/* "[ADDR:]PORT" (address 127.0.0.1 by default; port 0: any free one). */
int fe_web_parse_addr(const char *s, uint32_t *ip, uint16_t *port);

struct fe_web;
/* Starts serving on addr (see fe_web_parse_addr); `run` must outlive the server. NULL with a
 * sentence in err when it cannot. */
struct fe_web *fe_web_start(const char *addr, const struct fe_web_run *run, char *err,
                            size_t err_cap);
/* The port it listens on (the one chosen when 0 was asked). */
uint16_t fe_web_port(const struct fe_web *w);
/* Records a sample; drops it (and counts the drop) rather than wait for the server. */
void fe_web_push(struct fe_web *w, const struct fe_web_sample *s);
/* Ends the streams, closes every connection and frees the server. */
void fe_web_stop(struct fe_web *w);

#endif
