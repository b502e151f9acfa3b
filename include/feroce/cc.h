/* Congestion control: one event API for every algorithm (after SwCC, USENIX ATC 2025).
 *
 * An algorithm is one C file exporting a `const struct fe_cc_algo`; adding one touches that file
 * and one line of src/cc/registry.c (or, outside the library, one fe_cc_register call). What it
 * needs from the network or the receiver beyond the events below it says in `caps`
 * (FE_CC_CAP_*): nothing outside src/cc tests an algorithm's name. Its per-QP state lives in `ctx`
 * (ctx_size bytes, owned by the caller, zeroed before init). It reacts to events and writes its
 * outputs into `struct fe_cc_out`: a sending rate, a window of bytes in flight, and/or receiver
 * credit, which the requester's pacer obeys, plus the time it next wants `on_timer`. Nothing here
 * reads a clock: every event carries now_ns. */
#ifndef FEROCE_CC_H
#define FEROCE_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_CC_UNLIMITED  UINT64_MAX
#define FE_CC_NO_TIMER   UINT64_MAX
#define FE_CC_MAX_PARAMS 40
#define FE_CC_MAX_TRACE  12

/* What an algorithm asks of the pacer. FE_CC_UNLIMITED means "no limit from me". */
struct fe_cc_out {
    uint64_t rate_Bps;     /* sending rate, bytes per second (pacer) */
    uint64_t window_bytes; /* bytes in flight allowed (unacknowledged) */
    uint64_t credit_bytes; /* bytes granted by the receiver so far, cumulative (Homa-style) */
    uint64_t timer_ns;     /* absolute time of the next on_timer call, or FE_CC_NO_TIMER */
};

/* Facts about the path, given at init. */
struct fe_cc_env {
    uint64_t line_rate_bps; /* NIC port rate, bits per second */
    uint32_t mtu_bytes;     /* path MTU (payload bytes per packet) */
    uint64_t base_rtt_ns;   /* unloaded round trip, 0 if unknown */
    uint64_t now_ns;        /* creation time */
};

/* One ACK as the requester saw it. */
struct fe_cc_ack {
    uint32_t psn;                /* acknowledged PSN */
    uint64_t acked_bytes;        /* newly acknowledged payload bytes */
    uint64_t inflight_bytes;     /* unacknowledged payload bytes after this ACK */
    uint64_t rtt_ns;             /* sample from the send time of the acked packet; 0 if none */
    bool ecn_echo;               /* congestion flag carried on the ACK (ns-3 compatible mode) */
    const struct fe_int *int_md; /* INT records echoed by the receiver, NULL when none */
    uint64_t credit_bytes;       /* cumulative credit granted by the receiver (Homa), 0 if none */
};

/* A parameter: names, units and ranges users see; values are doubles validated against
 * [min, max] and, when `integer`, whole. The algorithm converts them to its own (fixed-point)
 * state in init. */
struct fe_cc_param {
    const char *name;
    const char *unit;
    const char *help;
    double def, min, max;
    bool integer;
};

struct fe_cc_params {
    const struct fe_cc_algo *algo;
    double v[FE_CC_MAX_PARAMS]; /* indexed like algo->params */
};

/* A traced variable: a name and its current value in the unit named. */
struct fe_cc_trace {
    const char *name;
    const char *unit;
    double value;
};

/* Capabilities: what an algorithm needs from the network, the receiver or the host around it
 * (struct fe_cc_algo.caps, a bitmask). */
/* Reads INT records: the switches stamp them on its data packets, the responder echoes the
 * latest on its ACKs (fe_cc_ack.int_md); HPCC ns-3's frame model adds its INT header. */
#define FE_CC_CAP_INT 0x1u
/* Reads a timestamp its packets carry (RTT samples): in HPCC ns-3's frame model an 8-byte
 * header on data and ACKs. */
#define FE_CC_CAP_TIMESTAMP 0x2u
/* Needs an ACK for every data packet (the requester asks for one on each, the responder does
 * not coalesce): its model reads every ACK (HPCC's INT, Homa's grants). */
#define FE_CC_CAP_ACK_EVERY_PKT 0x4u
/* Needs the receiver to grant credit (fe_cc_ack.credit_bytes): the responder runs a grant
 * scheduler (struct fe_homa_grants) over its incoming flows. */
#define FE_CC_CAP_RX_GRANTS 0x8u
/* A profile of DCQCN's rate machine (reacts to CNPs): its parameters carry over by name to
 * another DCQCN profile (--ns3-compat, `feroce dcqcn`). */
#define FE_CC_CAP_DCQCN 0x10u

struct fe_cc_algo {
    const char *name;
    const char *summary;
    unsigned caps; /* FE_CC_CAP_* */
    size_t ctx_size;
    const struct fe_cc_param *params;
    size_t n_params;
    /* ctx is zeroed and aligned to 16; p->v holds validated values. Sets the first outputs. */
    void (*init)(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                 struct fe_cc_out *out);
    /* Events. Any may be NULL when the algorithm ignores it. */
    void (*on_send)(void *ctx, uint64_t now_ns, uint32_t bytes, struct fe_cc_out *out);
    void (*on_ack)(void *ctx, uint64_t now_ns, const struct fe_cc_ack *ack, struct fe_cc_out *out);
    void (*on_cnp)(void *ctx, uint64_t now_ns, struct fe_cc_out *out);
    void (*on_nack)(void *ctx, uint64_t now_ns, uint32_t psn, struct fe_cc_out *out);
    void (*on_timer)(void *ctx, uint64_t now_ns, struct fe_cc_out *out);
    /* Writes up to `max` traced variables (e.g. Rc, Rt, alpha, T, BC); returns how many. */
    int (*trace)(const void *ctx, struct fe_cc_trace *vals, int max);
    /* New parameter values while the algorithm runs, as a register write to firmware: the
     * state (rates, alpha, timers' phase) is kept and the new values apply from the next event
     * that reads them. NULL: a change restarts the algorithm (fe_cc_set_params). */
    void (*set_params)(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                       struct fe_cc_out *out);
};

/* Registry. */
const struct fe_cc_algo *fe_cc_find(const char *name);
/* NULL-terminated list of every algorithm. */
const struct fe_cc_algo *const *fe_cc_list(void);
#define FE_CC_MAX_ALGOS 32
/* Adds an algorithm defined outside the library (a test, a tool): fe_cc_find and fe_cc_list see
 * it from then on. The descriptor must outlive its use. FE_EINVAL without a name or init,
 * FE_ESTATE when the name is taken, FE_ENOSPC beyond FE_CC_MAX_ALGOS. Not thread-safe: register
 * before creating QPs or simulators. */
int fe_cc_register(const struct fe_cc_algo *algo);

/* Parameters: defaults, then "name=value" assignments validated with a clear message in err. */
void fe_cc_params_default(struct fe_cc_params *p, const struct fe_cc_algo *algo);
int fe_cc_params_set(struct fe_cc_params *p, const char *name, const char *value, char *err,
                     size_t err_cap);
/* "name=value" or "name=value,name=value,..." */
int fe_cc_params_parse(struct fe_cc_params *p, const char *assignments, char *err, size_t err_cap);
int fe_cc_param_index(const struct fe_cc_algo *algo, const char *name);

/* An instance: algorithm + outputs + context, in one block the caller provides
 * (fe_cc_instance_size bytes, e.g. inside a QP). */
struct fe_cc {
    const struct fe_cc_algo *algo;
    struct fe_cc_out out;
    _Alignas(16) unsigned char ctx[];
};
size_t fe_cc_instance_size(const struct fe_cc_algo *algo);
/* Zeroes the context and calls the algorithm's init. The algorithm is p->algo; with p NULL,
 * cc->algo (set by the caller) with its defaults; with neither, "none". */
void fe_cc_init(struct fe_cc *cc, const struct fe_cc_params *p, const struct fe_cc_env *env);
/* Changes the parameters of a running instance of the same algorithm: the algorithm's
 * set_params where it has one (returns true: state kept), else fe_cc_init (false: restarted). */
bool fe_cc_set_params(struct fe_cc *cc, const struct fe_cc_params *p, const struct fe_cc_env *env);

static inline void fe_cc_on_send(struct fe_cc *cc, uint64_t now_ns, uint32_t bytes)
{
    if (cc->algo->on_send) cc->algo->on_send(cc->ctx, now_ns, bytes, &cc->out);
}
static inline void fe_cc_on_ack(struct fe_cc *cc, uint64_t now_ns, const struct fe_cc_ack *a)
{
    if (cc->algo->on_ack) cc->algo->on_ack(cc->ctx, now_ns, a, &cc->out);
}
static inline void fe_cc_on_cnp(struct fe_cc *cc, uint64_t now_ns)
{
    if (cc->algo->on_cnp) cc->algo->on_cnp(cc->ctx, now_ns, &cc->out);
}
static inline void fe_cc_on_nack(struct fe_cc *cc, uint64_t now_ns, uint32_t psn)
{
    if (cc->algo->on_nack) cc->algo->on_nack(cc->ctx, now_ns, psn, &cc->out);
}
/* Runs on_timer while its deadline has passed (an algorithm may re-arm in the past). */
void fe_cc_on_timer(struct fe_cc *cc, uint64_t now_ns);
int fe_cc_trace(const struct fe_cc *cc, struct fe_cc_trace *vals, int max);

/* ---- Homa receiver: the grant scheduler (FE_CC_CAP_RX_GRANTS) ----
 * Sans-I/O: the receiver (a simulated host, a UDP endpoint) adds a message per incoming flow,
 * tells it how many bytes arrived after each packet, and asks the scheduler which messages
 * to grant more: one round trip of bytes (rtt_bytes) beyond what arrived, to the
 * FE_HOMA_OVERCOMMIT incoming messages with the fewest bytes left (SRPT). Grants only grow; the
 * receiver carries them to the sender (fe_qp_set_grant: on its ACKs, fe_cc_ack.credit_bytes). */
#define FE_HOMA_OVERCOMMIT 2
struct fe_homa_msg {
    uint64_t total_bytes; /* the message's (flow's) length */
    uint64_t rx_bytes;    /* received so far (fe_homa_grants_rx) */
    uint64_t rtt_bytes;   /* granted ahead of rx_bytes (fe_homa_rtt_bytes) */
    uint64_t granted;     /* cumulative grant so far */
    uint32_t index;       /* in the scheduler's list, UINT32_MAX when not in one */
    void *user;           /* the caller's (its QP) */
};
struct fe_homa_grants {
    struct fe_homa_msg **in; /* incoming messages, in the order added (ties: the first wins) */
    uint32_t n, cap;
};
/* RTTbytes of a flow whose algorithm (with values p->v) has an rtt_bytes parameter: that, or
 * when it is 0 or absent, line rate x base RTT; at least 1. */
uint64_t fe_homa_rtt_bytes(const struct fe_cc_algo *algo, const struct fe_cc_params *p,
                           uint64_t line_rate_bps, uint64_t base_rtt_ns);
/* m (its total_bytes and rtt_bytes set) joins the scheduler: 0 or FE_ENOMEM. */
int fe_homa_grants_add(struct fe_homa_grants *g, struct fe_homa_msg *m);
/* m leaves (the last message takes its place); nothing when it is in none. */
void fe_homa_grants_remove(struct fe_homa_grants *g, struct fe_homa_msg *m);
static inline void fe_homa_grants_rx(struct fe_homa_msg *m, uint64_t rx_bytes)
{
    m->rx_bytes = rx_bytes;
}
/* The messages whose grant grew (their `granted` updated), best first, into out (room for
 * FE_HOMA_OVERCOMMIT): returns how many. */
int fe_homa_grants_schedule(struct fe_homa_grants *g, struct fe_homa_msg **out);
void fe_homa_grants_free(struct fe_homa_grants *g);

/* ---- pacer: the firmware's credit accumulator (token bucket) ----
 * Credit grows by rate x elapsed time, capped at `burst_bytes` (plus under one nanosecond of
 * credit, so that whole-nanosecond send times lose nothing); a packet may leave when the credit
 * covers its size, and its size is then taken away. Exact integer arithmetic: credit is kept in
 * byte-nanoseconds-per-second units so no rounding drifts over time. */
struct fe_pacer {
    uint64_t last_ns;
    int64_t credit;       /* bytes x 1e9 */
    uint64_t burst_bytes; /* credit cap */
};
/* The credit starts full (one burst may leave at once). burst_bytes is capped at 2^32 - 1; a
 * packet larger than the burst leaves when the credit is full, so burst 0 is strict pacing (each
 * packet waits until the previous one is paid for). */
void fe_pacer_init(struct fe_pacer *p, uint64_t burst_bytes, uint64_t now_ns);
/* Earliest time >= now_ns at which `bytes` may leave at rate_Bps (FE_CC_UNLIMITED: now;
 * rate 0: FE_CC_NO_TIMER, never). Rounded up to the next whole nanosecond. */
uint64_t fe_pacer_when(const struct fe_pacer *p, uint64_t rate_Bps, uint32_t bytes,
                       uint64_t now_ns);
/* Takes `bytes` out of the credit at now_ns (credit may go negative by at most one packet when
 * the caller waited for fe_pacer_when; a caller that did not wait builds up a debt). */
void fe_pacer_consume(struct fe_pacer *p, uint64_t rate_Bps, uint32_t bytes, uint64_t now_ns);
/* Banks the credit earned at rate_Bps up to now_ns. Call it with the OLD rate when the rate
 * changes, so that time already elapsed is paid at the rate that was in force. */
void fe_pacer_sync(struct fe_pacer *p, uint64_t rate_Bps, uint64_t now_ns);

#ifdef __cplusplus
}
#endif
#endif
