/* The web view's server: libmicrohttpd with a thread per connection (an SSE stream may wait
 * for the next sample without holding up other clients), bounded by a connection limit, a
 * per-address limit, an idle timeout and a request memory limit. Samples arrive through a
 * ring guarded by a mutex the data path only ever try-locks; CC parameter changes
 * (--web-write) go the other way through a mailbox the data path also only try-locks. */
#include "web/web.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "feroce/io.h"
#include "feroce/qp.h"
#include "tools/cli.h"
#include "io/fail.h"
#include "web/assets.h"
#include "web/form.h"

#define RING_SAMPLES     1200u /* a minute at 20 samples/s: a page opened late sees the past */
#define SSE_POLL_NS      20000000L
#define SSE_KEEPALIVE_NS 5000000000ull
#define SSE_BATCH        64u   /* samples per write when a stream catches up */
#define MAX_MARKS        64u   /* parameter changes marked on the charts */
#define MAX_BODY_BYTES   1024u /* a POST /api/params body: "flow=N&set=NAME=VALUE,..." */

/* A parameter change, as the charts mark it. */
struct mark {
    uint64_t t_ns;
    unsigned flow; /* 0: every flow */
    char text[160];
};

struct fe_web {
    struct MHD_Daemon *d;
    const struct fe_web_run *run;
    uint16_t port;
    pthread_mutex_t mu;
    struct fe_web_sample *ring;
    uint64_t *slot_seq; /* the sample number in each slot of ring */
    unsigned ring_cap;
    bool compact; /* run->compact_history: ring is a list of n_kept, halved when full */
    unsigned n_kept;
    uint64_t seq;                  /* samples pushed (under mu) */
    atomic_uint_fast64_t seq_seen; /* seq, readable without the lock */
    atomic_uint_fast64_t dropped;
    atomic_bool stopping;
    /* --web-write: each QP's parameters as the page set them, and those not yet taken */
    pthread_mutex_t pmu;
    struct fe_cc_params qp_params[FE_WEB_MAX_FLOWS];
    atomic_uint pending; /* bit i: qp_params[i] changed since fe_web_take_params */
    struct mark marks[MAX_MARKS];
    atomic_uint n_marks;
};

bool fe_web_available(void)
{
    return true;
}

int fe_web_parse_addr(const char *s, uint32_t *ip, uint16_t *port)
{
    char host[64] = "127.0.0.1";
    const char *p = strrchr(s, ':');
    if (p) {
        size_t n = (size_t)(p - s);
        if (n == 0 || n >= sizeof host) return -1;
        memcpy(host, s, n);
        host[n] = 0;
        p++;
    } else {
        p = s;
    }
    char *end;
    unsigned long v = strtoul(p, &end, 10);
    struct in_addr a;
    if (!*p || *end || v > 65535 || inet_pton(AF_INET, host, &a) != 1) return -1;
    *ip = ntohl(a.s_addr);
    *port = (uint16_t)v;
    return 0;
}

/* ---- the ring ---- */

/* A full compact history keeps every other sample: the whole run at half the density. */
static void halve(struct fe_web *w)
{
    for (unsigned i = 0; i < w->ring_cap / 2; i++) {
        w->ring[i] = w->ring[2 * i + 1];
        w->slot_seq[i] = w->slot_seq[2 * i + 1];
    }
    w->n_kept = w->ring_cap / 2;
}

/* Stores s as the next sample (under mu). */
static void store(struct fe_web *w, const struct fe_web_sample *s)
{
    if (w->compact && w->n_kept == w->ring_cap) halve(w);
    unsigned slot = w->compact ? w->n_kept++ : (unsigned)(w->seq % w->ring_cap);
    w->ring[slot] = *s;
    w->slot_seq[slot] = ++w->seq;
    atomic_store(&w->seq_seen, w->seq);
}

void fe_web_push(struct fe_web *w, const struct fe_web_sample *s)
{
    if (pthread_mutex_trylock(&w->mu)) {
        atomic_fetch_add(&w->dropped, 1);
        return;
    }
    store(w, s);
    pthread_mutex_unlock(&w->mu);
}

void fe_web_push_wait(struct fe_web *w, const struct fe_web_sample *s)
{
    pthread_mutex_lock(&w->mu);
    store(w, s);
    pthread_mutex_unlock(&w->mu);
}

/* The slot of sample seq (under mu): -1 when it was overwritten, dropped or is not there. */
static long slot_of(const struct fe_web *w, uint64_t seq)
{
    if (seq < 1 || seq > w->seq) return -1;
    if (!w->compact) return w->seq - seq < w->ring_cap ? (long)((seq - 1) % w->ring_cap) : -1;
    unsigned lo = 0, hi = w->n_kept;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (w->slot_seq[mid] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < w->n_kept && w->slot_seq[lo] == seq ? (long)lo : -1;
}

/* The newest sample into *out: false when there is none yet. */
static bool latest_sample(struct fe_web *w, struct fe_web_sample *out, uint64_t *seq)
{
    pthread_mutex_lock(&w->mu);
    long slot = slot_of(w, w->seq);
    bool have = slot >= 0;
    if (have)
        *out = w->ring[slot];
    else
        memset(out, 0, sizeof *out);
    *seq = w->seq;
    pthread_mutex_unlock(&w->mu);
    return have;
}

/* Sample `seq` (1-based) into *out: false when it was overwritten or is not there yet. One
 * lock per sample, so that copying the history never holds the data path off for long. */
static bool sample_at(struct fe_web *w, uint64_t seq, struct fe_web_sample *out)
{
    pthread_mutex_lock(&w->mu);
    long slot = slot_of(w, seq);
    bool have = slot >= 0;
    if (have) *out = w->ring[slot];
    pthread_mutex_unlock(&w->mu);
    return have;
}

/* ---- text building ---- */

struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
};

static void put(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = b->oom ? 0 : vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (b->oom || n < 0) return;
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static void sbuf_init(struct sbuf *b)
{
    b->cap = 4096;
    b->len = 0;
    b->p = malloc(b->cap);
    b->oom = !b->p;
    if (b->p) b->p[0] = 0;
}

/* A JSON string from trusted text (run description): quotes and control bytes escaped. */
static void put_json_str(struct sbuf *b, const char *s)
{
    put(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            put(b, "\\%c", c);
        else if (c < 0x20)
            put(b, "\\u%04x", c);
        else
            put(b, "%c", c);
    }
    put(b, "\"");
}

static uint64_t rtt_count(const struct fe_web_flow *f)
{
    uint64_t n = f->rtt_count;
    for (int i = 0; i < FE_WEB_RTT_BUCKETS; i++) n += f->rtt_hist[i];
    return n;
}

/* A counter, or null when the tool does not see it. */
static void put_count(struct sbuf *b, const char *name, bool has, uint64_t v)
{
    if (has)
        put(b, ",\"%s\":%" PRIu64, name, v);
    else
        put(b, ",\"%s\":null", name);
}

static void put_flow_json(struct sbuf *b, const struct fe_web_flow *f, unsigned i)
{
    put(b, "%s{\"flow\":%u,\"qpn\":%" PRIu32, i ? "," : "", i + 1, f->qpn);
    put_count(b, "rx_bytes", f->has_rx, f->rx_bytes);
    put_count(b, "tx_bytes", f->has_tx, f->tx_bytes);
    put(b,
        ",\"rc_bps\":%.0f,\"rt_bps\":%.0f,\"alpha\":%.6f,\"cnps_rx\":%" PRIu64
        ",\"cnps_tx\":%" PRIu64 ",\"ce_pkts\":%" PRIu64 ",\"retx_pkts\":%" PRIu64
        ",\"timeouts\":%" PRIu64 ",\"rtt_count\":%" PRIu64 ",\"rtt_sum_ns\":%" PRIu64
        ",\"rtt_max_ns\":%" PRIu64 "}",
        f->has_rc ? f->rc_bps : -1.0, f->has_rt ? f->rt_bps : -1.0, f->has_alpha ? f->alpha : -1.0,
        f->cnps_rx, f->cnps_tx, f->ce_pkts, f->retx_pkts, f->timeouts, rtt_count(f), f->rtt_sum_ns,
        f->rtt_max_ns);
}

/* A duration in seconds, or null when the tool does not see it. */
static void put_seconds(struct sbuf *b, const char *name, bool has, uint64_t ns)
{
    if (has)
        put(b, ",\"%s\":%.9f", name, (double)ns / 1e9);
    else
        put(b, ",\"%s\":null", name);
}

static void put_builder_json(struct sbuf *b, const struct fe_web_builder *x, unsigned i)
{
    put(b, "%s{\"builder\":%" PRIu32 ",\"up\":%s", i ? "," : "", x->id, x->up ? "true" : "false");
    put_count(b, "built", x->has_built, x->built);
    put_count(b, "incomplete", x->has_built, x->incomplete);
    put_count(b, "bytes", x->has_bytes, x->bytes);
    put_count(b, "lost", x->has_lost, x->lost);
    put_seconds(b, "latency_p50_s", x->has_latency, x->lat_p50_ns);
    put_seconds(b, "latency_p99_s", x->has_latency, x->lat_p99_ns);
    put_count(b, "slots_used", x->has_slots, x->slots_used);
    put_count(b, "slots", x->has_slots, x->slots);
    put(b, "}");
}

/* Event building: the builders, and the front-ends' throttled events (only when there is). */
static void put_eb_json(struct sbuf *b, const struct fe_web_sample *s)
{
    if (!s->n_builders) return;
    put(b, ",\"builders\":[");
    for (unsigned i = 0; i < s->n_builders && i < FE_WEB_MAX_BUILDERS; i++)
        put_builder_json(b, &s->b[i], i);
    put(b, "]");
    put_count(b, "busy_events", s->has_busy, s->busy_events);
}

/* One sample as a JSON object (the SSE events and /api/state's "sample"). */
static void put_sample_json(struct sbuf *b, const struct fe_web_sample *s, uint64_t seq)
{
    put(b, "{\"seq\":%" PRIu64 ",\"t_s\":%.6f,\"flows\":[", seq, (double)s->t_ns / 1e9);
    for (unsigned i = 0; i < s->n_flows && i < FE_WEB_MAX_FLOWS; i++) put_flow_json(b, &s->f[i], i);
    put(b, "]");
    put_eb_json(b, s);
    const struct fe_web_port *p = &s->bottleneck;
    if (!p->has) {
        put(b, ",\"switch\":null}");
        return;
    }
    put(b, ",\"switch\":{\"port\":");
    put_json_str(b, p->name);
    put(b,
        ",\"rate_bps\":%" PRIu64 ",\"kmin_bytes\":%" PRIu64 ",\"kmax_bytes\":%" PRIu64
        ",\"q_bytes\":%" PRIu64 ",\"q_max_bytes\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
        ",\"marked\":%" PRIu64 ",\"drops_full\":%" PRIu64 ",\"drops_loss\":%" PRIu64 "}}",
        p->rate_bps, p->kmin_bytes, p->kmax_bytes, p->q_bytes, p->q_max_bytes, p->tx_bytes,
        p->marked, p->drops_full, p->drops_loss);
}

static void put_run_json(struct sbuf *b, const struct fe_web_run *r)
{
    put(b, "{\"tool\":");
    put_json_str(b, r->tool);
    put(b, ",\"description\":");
    put_json_str(b, r->description);
    put(b,
        ",\"rate_bps\":%" PRIu64 ",\"kmin_bytes\":%" PRIu64 ",\"kmax_bytes\":%" PRIu64
        ",\"queue_bytes\":%" PRIu64 ",\"flows\":%u,\"writable\":%s,\"clock\":",
        r->rate_bps, r->kmin_bytes, r->kmax_bytes, r->queue_bytes, r->n_flows,
        r->writable ? "true" : "false");
    put_json_str(b, r->clock ? r->clock : "wall");
    put(b, ",\"counters\":%s,\"flow_label\":", r->no_counters ? "false" : "true");
    put_json_str(b, r->flow_label ? r->flow_label : "flow");
    put(b, ",\"cc\":");
    put_json_str(b, r->ccp && r->ccp->algo ? r->ccp->algo->name : r->cc_name ? r->cc_name : "none");
    put(b, ",\"builders\":%u,\"first_builder\":%" PRIu32 "}", r->n_builders, r->first_builder);
}

/* The parameter changes so far, oldest first: what the charts mark. */
static void put_marks_json(struct fe_web *w, struct sbuf *b, unsigned from)
{
    unsigned n = atomic_load(&w->n_marks);
    put(b, "[");
    for (unsigned k = from; k < n; k++) {
        const struct mark *m = &w->marks[k];
        put(b, "%s{\"t_s\":%.6f,\"flow\":%u,\"text\":", k > from ? "," : "", (double)m->t_ns / 1e9,
            m->flow);
        put_json_str(b, m->text);
        put(b, "}");
    }
    put(b, "]");
}

static void build_state(struct fe_web *w, struct sbuf *b)
{
    struct fe_web_sample s;
    uint64_t seq;
    bool have = latest_sample(w, &s, &seq);
    put(b, "{\"run\":");
    put_run_json(b, w->run);
    put(b, ",\"samples_dropped\":%" PRIu64 ",\"marks\":", (uint64_t)atomic_load(&w->dropped));
    put_marks_json(w, b, 0);
    put(b, ",\"sample\":");
    if (have)
        put_sample_json(b, &s, seq);
    else
        put(b, "null");
    put(b, "}\n");
}

/* Every sample the ring still holds, oldest first: what a page opened mid-run draws first. */
static void build_history(struct fe_web *w, struct sbuf *b)
{
    uint64_t last = atomic_load(&w->seq_seen);
    uint64_t first = last > w->ring_cap && !w->compact ? last - w->ring_cap + 1 : 1;
    struct fe_web_sample *s = malloc(sizeof *s);
    bool comma = false;
    put(b, "{\"samples\":[");
    for (uint64_t k = first; s && k <= last; k++) {
        if (!sample_at(w, k, s)) continue;
        if (comma) put(b, ",");
        put_sample_json(b, s, k);
        comma = true;
    }
    put(b, "],\"marks\":");
    put_marks_json(w, b, 0);
    put(b, "}\n");
    if (!s) b->oom = true;
    free(s);
}

/* Every QP's CC parameters, as the page last set them (under pmu). */
static void build_params(struct fe_web *w, struct sbuf *b)
{
    put(b, "{\"writable\":%s,\"qps\":[", w->run->writable ? "true" : "false");
    pthread_mutex_lock(&w->pmu);
    for (unsigned q = 0; q < w->run->n_flows && q < FE_WEB_MAX_FLOWS; q++) {
        const struct fe_cc_params *p = w->run->ccp ? &w->qp_params[q] : NULL;
        put(b, "%s{\"flow\":%u,\"cc\":", q ? "," : "", q + 1);
        put_json_str(b, p && p->algo ? p->algo->name : "none");
        put(b, ",\"params\":[");
        for (size_t k = 0; p && p->algo && k < p->algo->n_params; k++) {
            const struct fe_cc_param *d = &p->algo->params[k];
            put(b, "%s{\"name\":", k ? "," : "");
            put_json_str(b, d->name);
            put(b, ",\"unit\":");
            put_json_str(b, d->unit ? d->unit : "");
            put(b, ",\"value\":%.17g,\"default\":%.17g}", p->v[k], d->def);
        }
        put(b, "]}");
    }
    pthread_mutex_unlock(&w->pmu);
    put(b, "]}\n");
}

/* ---- Prometheus text exposition ---- */

static void metric_head(struct sbuf *b, const char *name, const char *type, const char *help)
{
    put(b, "# HELP feroce_%s %s\n# TYPE feroce_%s %s\n", name, help, name, type);
}

/* One line per flow of a per-flow value: val(f) in the metric's base unit. */
#define PER_FLOW(b, s, name, fmt, expr)                                                            \
    for (unsigned i = 0; i < (s)->n_flows; i++) {                                                  \
        const struct fe_web_flow *f = &(s)->f[i];                                                  \
        put(b, "feroce_%s{flow=\"%u\",qp=\"%" PRIu32 "\"} " fmt "\n", name, i + 1, f->qpn, expr);  \
    }

static void put_flow_bytes(struct sbuf *b, const struct fe_web_sample *s)
{
    if (s->n_flows && s->f[0].has_rx) {
        metric_head(b, "flow_received_bytes_total", "counter",
                    "Payload bytes the receiver verified.");
        PER_FLOW(b, s, "flow_received_bytes_total", "%" PRIu64, f->rx_bytes);
    }
    if (s->n_flows && s->f[0].has_tx) {
        metric_head(b, "flow_sent_bytes_total", "counter",
                    "Payload bytes the sender transmitted, retransmissions included.");
        PER_FLOW(b, s, "flow_sent_bytes_total", "%" PRIu64, f->tx_bytes);
    }
}

static void put_flow_counters(struct sbuf *b, const struct fe_web_sample *s)
{
    put_flow_bytes(b, s);
    metric_head(b, "flow_cnps_received_total", "counter", "CNPs the sender QP received.");
    PER_FLOW(b, s, "flow_cnps_received_total", "%" PRIu64, f->cnps_rx);
    metric_head(b, "flow_cnps_sent_total", "counter", "CNPs the receiver QP sent.");
    PER_FLOW(b, s, "flow_cnps_sent_total", "%" PRIu64, f->cnps_tx);
    metric_head(b, "flow_ce_packets_total", "counter", "CE-marked packets the receiver saw.");
    PER_FLOW(b, s, "flow_ce_packets_total", "%" PRIu64, f->ce_pkts);
    metric_head(b, "flow_retransmitted_packets_total", "counter", "Packets the sender resent.");
    PER_FLOW(b, s, "flow_retransmitted_packets_total", "%" PRIu64, f->retx_pkts);
    metric_head(b, "flow_ack_timeouts_total", "counter", "ACK timeouts of the sender QP.");
    PER_FLOW(b, s, "flow_ack_timeouts_total", "%" PRIu64, f->timeouts);
}

/* The switch: each port's output (its "flows" are its ports). */
static void put_port_bytes(struct sbuf *b, const struct fe_web_sample *s)
{
    metric_head(b, "switch_port_transmitted_bytes_total", "counter", "Bytes each port sent.");
    for (unsigned i = 0; i < s->n_flows; i++)
        put(b, "feroce_switch_port_transmitted_bytes_total{port=\"%u\"} %" PRIu64 "\n", i,
            s->f[i].tx_bytes);
}

/* DCQCN's state: rates in bytes per second (the exposition's base unit), alpha a ratio. */
static void put_flow_cc(struct sbuf *b, const struct fe_web_sample *s)
{
    metric_head(b, "cc_current_rate_bytes_per_second", "gauge", "Rc: the sender's current rate.");
    PER_FLOW(b, s, "cc_current_rate_bytes_per_second", "%.0f", f->has_rc ? f->rc_bps / 8 : 0);
    metric_head(b, "cc_target_rate_bytes_per_second", "gauge", "Rt: the sender's target rate.");
    PER_FLOW(b, s, "cc_target_rate_bytes_per_second", "%.0f", f->has_rt ? f->rt_bps / 8 : 0);
    metric_head(b, "cc_alpha_ratio", "gauge",
                "DCQCN alpha: the estimated share of marked packets.");
    PER_FLOW(b, s, "cc_alpha_ratio", "%.6f", f->has_alpha ? f->alpha : 0);
}

/* PSN-to-ACK latency as a histogram: the QP's power-of-two buckets, cumulative. */
static void put_flow_latency(struct sbuf *b, const struct fe_web_sample *s)
{
    metric_head(b, "flow_psn_ack_latency_seconds", "histogram",
                "Time from sending a PSN to its ACK, per sender QP.");
    for (unsigned i = 0; i < s->n_flows; i++) {
        const struct fe_web_flow *f = &s->f[i];
        uint64_t cum = 0;
        for (int k = 0; k < FE_WEB_RTT_BUCKETS; k++) {
            cum += f->rtt_hist[k];
            put(b,
                "feroce_flow_psn_ack_latency_seconds_bucket{flow=\"%u\",qp=\"%" PRIu32
                "\",le=\"%.9g\"} %" PRIu64 "\n",
                i + 1, f->qpn, (double)(2ull << k) / 1e9, cum);
        }
        cum = rtt_count(f); /* the simulator counts without a histogram: all in +Inf */
        put(b,
            "feroce_flow_psn_ack_latency_seconds_bucket{flow=\"%u\",qp=\"%" PRIu32
            "\",le=\"+Inf\"} %" PRIu64 "\n",
            i + 1, f->qpn, cum);
        put(b, "feroce_flow_psn_ack_latency_seconds_sum{flow=\"%u\",qp=\"%" PRIu32 "\"} %.9f\n",
            i + 1, f->qpn, (double)f->rtt_sum_ns / 1e9);
        put(b,
            "feroce_flow_psn_ack_latency_seconds_count{flow=\"%u\",qp=\"%" PRIu32 "\"} %" PRIu64
            "\n",
            i + 1, f->qpn, cum);
    }
}

static void put_switch(struct sbuf *b, const struct fe_web_sample *s)
{
    const struct fe_web_port *p = &s->bottleneck;
    char l[64];
    snprintf(l, sizeof l, "port=\"%s\"", p->name[0] ? p->name : "bottleneck");
    metric_head(b, "switch_rate_bytes_per_second", "gauge", "The bottleneck port's rate.");
    put(b, "feroce_switch_rate_bytes_per_second{%s} %" PRIu64 "\n", l, p->rate_bps / 8);
    metric_head(b, "switch_queue_bytes", "gauge", "Bytes queued at the port now.");
    put(b, "feroce_switch_queue_bytes{%s} %" PRIu64 "\n", l, p->q_bytes);
    metric_head(b, "switch_queue_max_bytes", "gauge", "The port queue's high-water mark.");
    put(b, "feroce_switch_queue_max_bytes{%s} %" PRIu64 "\n", l, p->q_max_bytes);
    metric_head(b, "switch_transmitted_bytes_total", "counter", "Bytes the port sent on.");
    put(b, "feroce_switch_transmitted_bytes_total{%s} %" PRIu64 "\n", l, p->tx_bytes);
    metric_head(b, "switch_ce_marked_packets_total", "counter", "Packets the port marked CE.");
    put(b, "feroce_switch_ce_marked_packets_total{%s} %" PRIu64 "\n", l, p->marked);
    metric_head(b, "switch_dropped_packets_total", "counter", "Packets the port dropped.");
    put(b, "feroce_switch_dropped_packets_total{%s,reason=\"queue_full\"} %" PRIu64 "\n", l,
        p->drops_full);
    put(b, "feroce_switch_dropped_packets_total{%s,reason=\"injected_loss\"} %" PRIu64 "\n", l,
        p->drops_loss);
}

/* One line per builder: `has` picks the builders that see the value. */
#define PER_BUILDER(b, s, name, has, fmt, expr)                                                    \
    for (unsigned i = 0; i < (s)->n_builders && i < FE_WEB_MAX_BUILDERS; i++) {                    \
        const struct fe_web_builder *x = &(s)->b[i];                                               \
        if (has) put(b, "feroce_eb_%s{builder=\"%" PRIu32 "\"} " fmt "\n", name, x->id, expr);     \
    }

static void put_eb_latency(struct sbuf *b, const struct fe_web_sample *s)
{
    metric_head(b, "eb_build_latency_p50_seconds", "gauge",
                "Median time from an event's first fragment to its record, recent events.");
    PER_BUILDER(b, s, "build_latency_p50_seconds", x->has_latency, "%.9f",
                (double)x->lat_p50_ns / 1e9);
    metric_head(b, "eb_build_latency_p99_seconds", "gauge",
                "99th percentile of the same, recent events.");
    PER_BUILDER(b, s, "build_latency_p99_seconds", x->has_latency, "%.9f",
                (double)x->lat_p99_ns / 1e9);
}

/* Event building: a family only when some builder has the value (an empty family is noise). */
static void put_eb(struct sbuf *b, const struct fe_web_sample *s)
{
    bool built = false, bytes = false, lost = false, lat = false, slots = false;
    for (unsigned i = 0; i < s->n_builders && i < FE_WEB_MAX_BUILDERS; i++) {
        built |= s->b[i].has_built, bytes |= s->b[i].has_bytes, lost |= s->b[i].has_lost;
        lat |= s->b[i].has_latency, slots |= s->b[i].has_slots;
    }
    metric_head(b, "eb_builder_up", "gauge", "1 while the builder runs (not killed, not down).");
    PER_BUILDER(b, s, "builder_up", true, "%d", x->up ? 1 : 0);
    if (built) {
        metric_head(b, "eb_built_events_total", "counter", "Events built complete.");
        PER_BUILDER(b, s, "built_events_total", x->has_built, "%" PRIu64, x->built);
        metric_head(b, "eb_incomplete_events_total", "counter",
                    "Events declared incomplete (a source missing at the event timeout).");
        PER_BUILDER(b, s, "incomplete_events_total", x->has_built, "%" PRIu64, x->incomplete);
    }
    if (bytes) {
        metric_head(b, "eb_recorded_bytes_total", "counter", "Bytes of events recorded.");
        PER_BUILDER(b, s, "recorded_bytes_total", x->has_bytes, "%" PRIu64, x->bytes);
    }
    if (lost) {
        metric_head(b, "eb_lost_events_total", "counter", "Ring positions no fragment reached.");
        PER_BUILDER(b, s, "lost_events_total", x->has_lost, "%" PRIu64, x->lost);
    }
    if (lat) put_eb_latency(b, s);
    if (slots) {
        metric_head(b, "eb_slots_used", "gauge", "Event slots of the ring in use.");
        PER_BUILDER(b, s, "slots_used", x->has_slots, "%" PRIu32, x->slots_used);
        metric_head(b, "eb_slots", "gauge", "Event slots of the ring.");
        PER_BUILDER(b, s, "slots", x->has_slots, "%" PRIu32, x->slots);
    }
    if (s->has_busy) {
        metric_head(b, "eb_busy_events_total", "counter",
                    "Events the front-ends throttled for want of an assignment.");
        put(b, "feroce_eb_busy_events_total %" PRIu64 "\n", s->busy_events);
    }
}

static void build_metrics(struct fe_web *w, struct sbuf *b)
{
    struct fe_web_sample s;
    uint64_t seq;
    bool have = latest_sample(w, &s, &seq);
    metric_head(b, "run_info", "gauge", "The run being observed (always 1).");
    put(b, "feroce_run_info{tool=\"%s\",cc=\"%s\"} 1\n", w->run->tool,
        w->run->ccp && w->run->ccp->algo ? w->run->ccp->algo->name : "none");
    metric_head(b, "web_samples_total", "counter", "Samples the tool handed to the web view.");
    put(b, "feroce_web_samples_total %" PRIu64 "\n", seq);
    metric_head(b, "web_samples_dropped_total", "counter",
                "Samples dropped because the server held the lock.");
    put(b, "feroce_web_samples_dropped_total %" PRIu64 "\n", (uint64_t)atomic_load(&w->dropped));
    if (!have) return;
    metric_head(b, "run_elapsed_seconds", "gauge", "Time since the run started streaming.");
    put(b, "feroce_run_elapsed_seconds %.6f\n", (double)s.t_ns / 1e9);
    if (w->run->flow_label && !strcmp(w->run->flow_label, "port")) {
        put_port_bytes(b, &s);
    } else if (s.n_flows) {
        put_flow_counters(b, &s);
        put_flow_cc(b, &s);
        put_flow_latency(b, &s);
    }
    if (s.bottleneck.has) put_switch(b, &s);
    if (s.n_builders) put_eb(b, &s);
}

/* ---- the server ---- */

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, const char *type,
                                struct sbuf *b)
{
    if (b->oom) {
        free(b->p);
        return MHD_NO;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(b->len, b->p, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(b->p);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_static(struct MHD_Connection *c, unsigned status, const char *type,
                                   const void *data, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)(uintptr_t)data, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
    return send_static(c, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* An SSE client's position: the last sample and mark sent, and the events being written out. */
struct stream {
    struct fe_web *w;
    uint64_t sent_seq;
    unsigned sent_marks;
    uint64_t idle_ns;
    struct sbuf ev;
    size_t off;
};

static void sleep_ns(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* The samples the client has not had into st->ev, one event each, oldest first (up to
 * SSE_BATCH; a client that fell behind the ring skips what it lost): a simulation pushes faster
 * than the page polls, and each of its samples is a point of the charts. */
static void put_new_samples(struct stream *st, uint64_t last)
{
    struct fe_web *w = st->w;
    uint64_t first = st->sent_seq + 1;
    if (!w->compact && last >= w->ring_cap && first <= last - w->ring_cap)
        first = last - w->ring_cap + 1;
    if (last - first + 1 > SSE_BATCH) last = first + SSE_BATCH - 1;
    struct fe_web_sample *s = malloc(sizeof *s);
    for (uint64_t k = first; s && k <= last; k++) {
        if (!sample_at(w, k, s)) continue;
        put(&st->ev, "data: ");
        put_sample_json(&st->ev, s, k);
        put(&st->ev, "\n\n");
    }
    if (!s) st->ev.oom = true;
    free(s);
    st->sent_seq = last;
}

/* The parameter changes the client has not had, as "mark" events. */
static void put_new_marks(struct stream *st, unsigned n)
{
    put(&st->ev, "event: mark\ndata: ");
    put_marks_json(st->w, &st->ev, st->sent_marks);
    put(&st->ev, "\n\n");
    st->sent_marks = n;
}

/* The next events into st->ev: the samples and marks the client has not had, a comment now
 * and then to keep proxies from closing a quiet stream. 0 when stopping. */
static int next_event(struct stream *st)
{
    struct fe_web *w = st->w;
    while (!atomic_load(&w->stopping)) {
        uint64_t last = atomic_load(&w->seq_seen);
        unsigned marks = atomic_load(&w->n_marks);
        if (last != st->sent_seq || marks != st->sent_marks) {
            st->ev.len = 0;
            if (marks != st->sent_marks) put_new_marks(st, marks);
            if (last != st->sent_seq) put_new_samples(st, last);
            st->idle_ns = 0;
            if (st->ev.len || st->ev.oom) return st->ev.oom ? 0 : 1;
        }
        if (st->idle_ns >= SSE_KEEPALIVE_NS) {
            st->ev.len = 0;
            put(&st->ev, ": idle\n\n");
            st->idle_ns = 0;
            return 1;
        }
        sleep_ns(SSE_POLL_NS);
        st->idle_ns += SSE_POLL_NS;
    }
    return 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct stream *st = cls;
    if (st->off >= st->ev.len) {
        if (!next_event(st)) return MHD_CONTENT_READER_END_OF_STREAM;
        st->off = 0;
    }
    size_t n = st->ev.len - st->off;
    if (n > max) n = max;
    memcpy(buf, st->ev.p + st->off, n);
    st->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    struct stream *st = cls;
    free(st->ev.p);
    free(st);
}

static enum MHD_Result send_stream(struct fe_web *w, struct MHD_Connection *c)
{
    struct stream *st = calloc(1, sizeof *st);
    if (!st) return MHD_NO;
    st->w = w;
    /* from the newest sample on: /api/history has the past */
    st->sent_seq = atomic_load(&w->seq_seen);
    if (st->sent_seq) st->sent_seq--;
    st->sent_marks = atomic_load(&w->n_marks);
    sbuf_init(&st->ev);
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 8192, stream_read, st, stream_free);
    if (!r) {
        stream_free(st);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_asset(struct MHD_Connection *c, const char *url)
{
    for (const struct fe_web_asset *a = fe_web_assets; a->path; a++)
        if (!strcmp(url, a->path)) return send_static(c, MHD_HTTP_OK, a->type, a->data, a->len);
    return send_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

static enum MHD_Result route(struct fe_web *w, struct MHD_Connection *c, const char *url)
{
    struct sbuf b;
    if (!strcmp(url, "/api/stream")) return send_stream(w, c);
    if (!strcmp(url, "/api/history")) {
        sbuf_init(&b);
        build_history(w, &b);
        return send_buf(c, MHD_HTTP_OK, "application/json", &b);
    }
    if (!strcmp(url, "/api/state") || !strcmp(url, "/api/params") || !strcmp(url, "/metrics")) {
        sbuf_init(&b);
        if (!strcmp(url, "/api/state")) {
            build_state(w, &b);
            return send_buf(c, MHD_HTTP_OK, "application/json", &b);
        }
        if (!strcmp(url, "/api/params")) {
            build_params(w, &b);
            return send_buf(c, MHD_HTTP_OK, "application/json", &b);
        }
        build_metrics(w, &b);
        return send_buf(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", &b);
    }
    return send_asset(c, !strcmp(url, "/") ? "/index.html" : url);
}

/* ---- --web-write: POST /api/params ---- */

/* A request's body, kept up to MAX_BODY_BYTES (a longer one is refused whole). */
struct req {
    size_t len;
    bool too_long;
    char body[MAX_BODY_BYTES + 1];
};

static void add_mark(struct fe_web *w, int flow, const char *set)
{
    unsigned n = atomic_load(&w->n_marks);
    if (n >= MAX_MARKS) return; /* the first changes stay marked; later ones still apply */
    struct fe_web_sample s;
    uint64_t seq;
    latest_sample(w, &s, &seq);
    struct mark *m = &w->marks[n];
    m->t_ns = s.t_ns;
    m->flow = flow < 0 ? 0 : (unsigned)flow + 1;
    snprintf(m->text, sizeof m->text, "%s%.140s", flow < 0 ? "all: " : "", set);
    atomic_store(&w->n_marks, n + 1);
}

/* Validates `set` as the command line's --param does (fe_cc_params_parse) on a copy of each
 * QP's parameters, and only when every QP takes it stores them for the data path to take. */
static bool apply_set(struct fe_web *w, int flow, const char *set, char *err, size_t cap)
{
    unsigned lo = flow < 0 ? 0 : (unsigned)flow;
    unsigned hi = flow < 0 ? w->run->n_flows : (unsigned)flow + 1;
    if (hi > FE_WEB_MAX_FLOWS) hi = FE_WEB_MAX_FLOWS;
    struct fe_cc_params next[FE_WEB_MAX_FLOWS];
    pthread_mutex_lock(&w->pmu);
    for (unsigned q = lo; q < hi; q++) {
        next[q] = w->qp_params[q];
        if (fe_cc_params_parse(&next[q], set, err, cap)) {
            pthread_mutex_unlock(&w->pmu);
            return false;
        }
    }
    unsigned bits = 0;
    for (unsigned q = lo; q < hi; q++) {
        w->qp_params[q] = next[q];
        bits |= 1u << q;
    }
    atomic_fetch_or(&w->pending, bits);
    add_mark(w, flow, set);
    pthread_mutex_unlock(&w->pmu);
    return true;
}

static enum MHD_Result post_params(struct fe_web *w, struct MHD_Connection *c, struct req *r)
{
    char flow_s[16], set[256], err[256];
    if (!w->run->writable)
        return send_text(c, MHD_HTTP_FORBIDDEN, "read-only: start the tool with --web-write\n");
    if (!w->run->ccp || !w->run->ccp->algo)
        return send_text(c, MHD_HTTP_CONFLICT, "this run has no congestion control\n");
    if (r->too_long) return send_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "body too long\n");
    r->body[r->len] = 0;
    if (!fe_web_form_field(r->body, "flow", flow_s, sizeof flow_s) ||
        !fe_web_form_field(r->body, "set", set, sizeof set))
        return send_text(c, MHD_HTTP_BAD_REQUEST,
                         "expected a form: flow=N|all&set=NAME=VALUE[,NAME=VALUE...]\n");
    int flow = fe_web_parse_flow(flow_s, w->run->n_flows);
    if (flow == -2) return send_text(c, MHD_HTTP_BAD_REQUEST, "flow: 1..flows or all\n");
    if (!apply_set(w, flow, set, err, sizeof err)) {
        struct sbuf b;
        sbuf_init(&b);
        put(&b, "%s\n", err);
        return send_buf(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", &b);
    }
    struct sbuf b;
    sbuf_init(&b);
    build_params(w, &b);
    return send_buf(c, MHD_HTTP_OK, "application/json", &b);
}

unsigned fe_web_take_params(struct fe_web *w, struct fe_cc_params out[FE_WEB_MAX_FLOWS])
{
    if (!atomic_load_explicit(&w->pending, memory_order_relaxed)) return 0;
    if (pthread_mutex_trylock(&w->pmu)) return 0;
    unsigned bits = atomic_exchange(&w->pending, 0);
    for (unsigned q = 0; q < FE_WEB_MAX_FLOWS; q++)
        if (bits & (1u << q)) out[q] = w->qp_params[q];
    pthread_mutex_unlock(&w->pmu);
    return bits;
}

bool fe_web_retune_qp(struct fe_qp *qp, const struct fe_cc_params *p, uint64_t now_ns)
{
    struct fe_cc *cc = fe_qp_cc(qp);
    if (!cc || cc->algo != p->algo) return false;
    const struct fe_qp_config *cfg = fe_qp_config(qp);
    struct fe_cc_env env = {.line_rate_bps = cfg->line_rate_bps,
                            .mtu_bytes = cfg->mtu_bytes,
                            .base_rtt_ns = cfg->base_rtt_ns,
                            .now_ns = now_ns};
    fe_cc_set_params(cc, p, &env);
    return true;
}

/* Keeps the body of a POST (the one request that has one); GET, HEAD and POST only. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **req_cls)
{
    (void)version;
    bool post = !strcmp(method, "POST");
    if (!*req_cls) { /* the headers are in: answer once the body (if any) is known */
        struct req *r = post ? calloc(1, sizeof *r) : NULL;
        if (post && !r) return MHD_NO;
        *req_cls = post ? (void *)r : (void *)c;
        return MHD_YES;
    }
    if (*upload_size) {
        if (post) {
            struct req *r = *req_cls;
            if (r->len + *upload_size > MAX_BODY_BYTES)
                r->too_long = true;
            else
                memcpy(r->body + r->len, upload_data, *upload_size), r->len += *upload_size;
        }
        *upload_size = 0; /* a body nobody asked for is ignored */
        return MHD_YES;
    }
    if (post && !strcmp(url, "/api/params")) return post_params(cls, c, *req_cls);
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                         "GET only (and POST /api/params with --web-write)\n");
    return route(cls, c, url);
}

/* Frees a POST's body once its request is done. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)toe;
    if (*req_cls && *req_cls != (void *)c) free(*req_cls);
    *req_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap; /* client errors are the client's: the tool's output stays clean */
}

/* Why the server could not listen on sa: libmicrohttpd only says that it failed (its log goes
 * nowhere, above), so the bind is tried again here for its errno, worded as the data sockets'
 * (io/fail.c). */
static const char *listen_failure(const struct sockaddr_in *sa)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fe_io_fail_os(FE_EIO, "socket", NULL);
        return fe_io_fail_str(FE_EIO);
    }
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    bool bound = bind(fd, (const struct sockaddr *)sa, sizeof *sa) == 0;
    if (!bound)
        fe_io_fail_os(FE_EIO, "bind",
                      ntohs(sa->sin_port) < 1024
                          ? "ports below 1024 need root or CAP_NET_BIND_SERVICE"
                          : NULL);
    close(fd);
    return bound ? "the HTTP server did not start" : fe_io_fail_str(FE_EIO);
}

static const struct fe_web_limits default_limits = {
    .max_connections = 64, .max_per_ip = 32, .timeout_s = 15, .request_memory_bytes = 32768};

struct fe_web *fe_web_start(const char *addr, const struct fe_web_run *run, char *err,
                            size_t err_cap)
{
    uint32_t ip;
    uint16_t port;
    if (fe_web_parse_addr(addr, &ip, &port)) {
        snprintf(err, err_cap, "--web %s: expected [ADDR:]PORT (IPv4 address)", addr);
        return NULL;
    }
    struct fe_web *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, err_cap, "--web: out of memory");
        return NULL;
    }
    w->run = run;
    w->ring_cap = run->history_samples ? run->history_samples : RING_SAMPLES;
    w->compact = run->compact_history && w->ring_cap >= 2;
    w->ring = calloc(w->ring_cap, sizeof *w->ring);
    w->slot_seq = calloc(w->ring_cap, sizeof *w->slot_seq);
    if (!w->ring || !w->slot_seq) {
        snprintf(err, err_cap, "--web: out of memory");
        free(w->ring);
        free(w->slot_seq);
        free(w);
        return NULL;
    }
    for (unsigned q = 0; q < FE_WEB_MAX_FLOWS; q++)
        if (run->ccp) w->qp_params[q] = *run->ccp;
    pthread_mutex_init(&w->mu, NULL);
    pthread_mutex_init(&w->pmu, NULL);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(ip);
    const struct fe_web_limits *l = &default_limits;
    w->d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
        NULL, NULL, on_request, w, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, l->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        l->max_per_ip, MHD_OPTION_CONNECTION_TIMEOUT, l->timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, l->request_memory_bytes, MHD_OPTION_THREAD_STACK_SIZE,
        (size_t)(256 * 1024), MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    if (!w->d) {
        snprintf(err, err_cap, "--web %s: cannot listen there: %s", addr, listen_failure(&sa));
        pthread_mutex_destroy(&w->mu);
        pthread_mutex_destroy(&w->pmu);
        free(w->ring);
        free(w->slot_seq);
        free(w);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(w->d, MHD_DAEMON_INFO_BIND_PORT);
    w->port = di ? di->port : port;
    return w;
}

uint16_t fe_web_port(const struct fe_web *w)
{
    return w->port;
}

void fe_web_stop(struct fe_web *w)
{
    if (!w) return;
    atomic_store(&w->stopping, true);
    MHD_stop_daemon(w->d);
    pthread_mutex_destroy(&w->mu);
    pthread_mutex_destroy(&w->pmu);
    free(w->ring);
    free(w->slot_seq);
    free(w);
}

void fe_web_hold(const char *cmd, uint64_t hold_ns)
{
    if (!hold_ns) return;
    if (hold_ns == UINT64_MAX)
        fprintf(stderr, "feroce %s: run done; the dashboard stays up until Ctrl-C\n", cmd);
    else
        fprintf(stderr, "feroce %s: run done; the dashboard stays up %.1f s (Ctrl-C ends it)\n",
                cmd, (double)hold_ns / 1e9);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sig_atomic_t seen = fe_cli_signals;
    while (fe_cli_signals == seen) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t el =
            (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)(t.tv_nsec - t0.tv_nsec);
        if (el >= hold_ns) break;
        sleep_ns(50000000L);
    }
}
