/* The live web view of a run (`--web` on demo, sim, send, recv, switch): an HTTP server on its
 * own thread serving the dashboard page, JSON (/api/state, /api/params, /api/history), a
 * Server-Sent Events stream (/api/stream) and Prometheus metrics (/metrics). The tool's loop
 * hands it samples of the counters and CC state it already reads for its own table;
 * fe_web_push and fe_web_take_params never wait on the server, so a slow or hostile client
 * cannot slow the data path. Outside the core: only the CLI links it.
 *
 * Extension point: a tool with more to show adds its fields to struct fe_web_sample, writes
 * them in put_sample_json/build_metrics (web.c) and a panel in web/app.js (PANELS), as event
 * building does (struct fe_web_builder, web_eb.c, the EB panels). */
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
    uint32_t qpn;        /* the sender QP's number */
    bool has_rx, has_tx; /* false: this tool does not see that side (send sees no receiver) */
    uint64_t rx_bytes;   /* payload verified by the receiver */
    uint64_t tx_bytes;   /* payload sent, retransmissions included */
    bool has_rc, has_rt, has_alpha;
    double rc_bps, rt_bps, alpha; /* DCQCN's current and target rate, alpha */
    uint64_t cnps_rx;             /* CNPs the sender received */
    uint64_t cnps_tx;             /* CNPs the receiver sent */
    uint64_t ce_pkts;             /* CE-marked packets the receiver saw */
    uint64_t retx_pkts, timeouts;
    uint64_t rtt_sum_ns, rtt_max_ns;
    uint64_t rtt_hist[FE_WEB_RTT_BUCKETS]; /* PSN-to-ACK latency, bucket i: [2^i, 2^(i+1)) ns */
    uint64_t rtt_count; /* ACKs timed, when there is no histogram (the simulator); else 0 */
};

/* The switch's bottleneck port at one instant (has: false when the tool has no switch). */
struct fe_web_port {
    bool has;
    char name[32];     /* the metrics' port label */
    uint64_t rate_bps; /* the port's rate: the switch threshold of the throughput panel */
    uint64_t kmin_bytes, kmax_bytes;
    uint64_t q_bytes, q_max_bytes;
    uint64_t tx_bytes, marked, drops_full, drops_loss;
};

#define FE_WEB_MAX_BUILDERS 8

/* One event builder at one instant (event building); counters since the start. A has_ flag is
 * false when the tool does not see that value (the event manager sees no built events). */
struct fe_web_builder {
    uint32_t id;
    bool up; /* false: killed, or marked down by the event manager */
    bool has_built, has_bytes, has_lost, has_latency, has_slots;
    uint64_t built, incomplete, bytes; /* events built and declared incomplete, bytes recorded */
    uint64_t lost;                     /* ring positions no fragment reached */
    uint64_t lat_p50_ns, lat_p99_ns;   /* first fragment to recorded, recent events */
    uint32_t slots_used, slots;        /* event slots held (assembling or queued) of the ring */
};

struct fe_web_sample {
    uint64_t t_ns; /* since the run started streaming (simulated time for the simulator) */
    unsigned n_flows;
    struct fe_web_flow f[FE_WEB_MAX_FLOWS];
    struct fe_web_port bottleneck;
    unsigned n_builders; /* event building (0: none) */
    struct fe_web_builder b[FE_WEB_MAX_BUILDERS];
    bool has_busy;
    uint64_t busy_events; /* events the front-ends throttled (no assignment), summed */
};

/* What the run is: fixed for its whole life (the server reads it without a lock). */
struct fe_web_run {
    const char *tool;
    char description[256];
    uint64_t rate_bps; /* the bottleneck (the switch threshold) */
    uint64_t kmin_bytes, kmax_bytes, queue_bytes;
    unsigned n_flows;
    const struct fe_cc_params *ccp; /* every QP's CC parameters at the start (NULL: no CC) */
    const char *clock;              /* "wall" (default) or "simulated": the page's time axis */
    unsigned history_samples;       /* samples kept for /api/history (0: a minute at 20/s) */
    bool compact_history;           /* keep the whole run (every other sample once full), not
                                     * the newest: a simulation, browsed when it is over */
    bool writable;                  /* --web-write: POST /api/params changes CC parameters */
    const char *cc_name;            /* the CC's name when there is no ccp (a replayed trace) */
    const char *flow_label;         /* what a "flow" is: "flow" (default), "port" (switch) */
    bool no_counters;               /* no CNP, retransmission or latency counters (a trace) */
    unsigned n_builders;            /* event building: builders shown (0: none); their ids */
    uint32_t first_builder;         /* are first_builder.. */
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
/* The same, waiting for the lock: for a history loaded at once (a replayed trace), never for a
 * data path. */
void fe_web_push_wait(struct fe_web *w, const struct fe_web_sample *s);
/* --web-write: the QPs whose CC parameters the page changed since the last call (bit i: flow
 * i + 1), their new (validated) parameters in out[i]. One atomic load when nothing changed;
 * a try-lock otherwise (0 when the server holds it: the change waits for the next call). */
unsigned fe_web_take_params(struct fe_web *w, struct fe_cc_params out[FE_WEB_MAX_FLOWS]);
struct fe_qp;
/* Applies parameters the page set (fe_web_take_params) to a running QP: its CC restarts from
 * them as a QP created with them would (DCQCN back at the line rate), at now_ns. Only for the
 * algorithm the QP runs (else nothing: false). */
bool fe_web_retune_qp(struct fe_qp *qp, const struct fe_cc_params *p, uint64_t now_ns);
/* Keeps serving until hold_ns has passed or a stop signal arrives (hold_ns UINT64_MAX: until
 * the signal); says so on stderr as `cmd` when it waits at all. */
void fe_web_hold(const char *cmd, uint64_t hold_ns);
/* Ends the streams, closes every connection and frees the server. */
void fe_web_stop(struct fe_web *w);

#endif
