/* The web view's server: libmicrohttpd with a thread per connection (an SSE stream may wait
 * for the next sample without holding up other clients), bounded by a connection limit, a
 * per-address limit, an idle timeout and a request memory limit. Samples arrive through a
 * ring guarded by a mutex the data path only ever try-locks. */
#include "web/web.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "web/assets.h"

#define RING_SAMPLES     1200u /* a minute at 20 samples/s: a page opened late sees the past */
#define SSE_POLL_NS      20000000L
#define SSE_KEEPALIVE_NS 5000000000ull

struct fe_web {
    struct MHD_Daemon *d;
    const struct fe_web_run *run;
    uint16_t port;
    pthread_mutex_t mu;
    struct fe_web_sample ring[RING_SAMPLES];
    uint64_t seq; /* samples pushed (under mu): the newest is ring[(seq - 1) % RING_SAMPLES] */
    atomic_uint_fast64_t seq_seen; /* seq, readable without the lock */
    atomic_uint_fast64_t dropped;
    atomic_bool stopping;
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

void fe_web_push(struct fe_web *w, const struct fe_web_sample *s)
{
    if (pthread_mutex_trylock(&w->mu)) {
        atomic_fetch_add(&w->dropped, 1);
        return;
    }
    w->ring[w->seq % RING_SAMPLES] = *s;
    w->seq++;
    atomic_store(&w->seq_seen, w->seq);
    pthread_mutex_unlock(&w->mu);
}

/* The newest sample into *out: false when there is none yet. */
static bool latest_sample(struct fe_web *w, struct fe_web_sample *out, uint64_t *seq)
{
    pthread_mutex_lock(&w->mu);
    bool have = w->seq > 0;
    if (have)
        *out = w->ring[(w->seq - 1) % RING_SAMPLES];
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
    bool have = seq >= 1 && seq <= w->seq && w->seq - seq < RING_SAMPLES;
    if (have) *out = w->ring[(seq - 1) % RING_SAMPLES];
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
    uint64_t n = 0;
    for (int i = 0; i < FE_WEB_RTT_BUCKETS; i++) n += f->rtt_hist[i];
    return n;
}

static void put_flow_json(struct sbuf *b, const struct fe_web_flow *f, unsigned i)
{
    put(b,
        "%s{\"flow\":%u,\"qpn\":%" PRIu32 ",\"rx_bytes\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
        ",\"rc_bps\":%.0f,\"rt_bps\":%.0f,\"alpha\":%.6f,\"cnps_rx\":%" PRIu64
        ",\"cnps_tx\":%" PRIu64 ",\"ce_pkts\":%" PRIu64 ",\"retx_pkts\":%" PRIu64
        ",\"timeouts\":%" PRIu64 ",\"rtt_count\":%" PRIu64 ",\"rtt_sum_ns\":%" PRIu64
        ",\"rtt_max_ns\":%" PRIu64 "}",
        i ? "," : "", i + 1, f->qpn, f->rx_bytes, f->tx_bytes, f->has_rc ? f->rc_bps : -1.0,
        f->has_rt ? f->rt_bps : -1.0, f->has_alpha ? f->alpha : -1.0, f->cnps_rx, f->cnps_tx,
        f->ce_pkts, f->retx_pkts, f->timeouts, rtt_count(f), f->rtt_sum_ns, f->rtt_max_ns);
}

/* One sample as a JSON object (the SSE events and /api/state's "sample"). */
static void put_sample_json(struct sbuf *b, const struct fe_web_sample *s, uint64_t seq)
{
    put(b, "{\"seq\":%" PRIu64 ",\"t_s\":%.6f,\"flows\":[", seq, (double)s->t_ns / 1e9);
    for (unsigned i = 0; i < s->n_flows && i < FE_WEB_MAX_FLOWS; i++) put_flow_json(b, &s->f[i], i);
    const struct fe_web_port *p = &s->bottleneck;
    put(b,
        "],\"switch\":{\"q_bytes\":%" PRIu64 ",\"q_max_bytes\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
        ",\"marked\":%" PRIu64 ",\"drops_full\":%" PRIu64 ",\"drops_loss\":%" PRIu64 "}}",
        p->q_bytes, p->q_max_bytes, p->tx_bytes, p->marked, p->drops_full, p->drops_loss);
}

static void put_run_json(struct sbuf *b, const struct fe_web_run *r)
{
    put(b, "{\"tool\":");
    put_json_str(b, r->tool);
    put(b, ",\"description\":");
    put_json_str(b, r->description);
    put(b,
        ",\"rate_bps\":%" PRIu64 ",\"kmin_bytes\":%" PRIu64 ",\"kmax_bytes\":%" PRIu64
        ",\"queue_bytes\":%" PRIu64 ",\"flows\":%u,\"cc\":",
        r->rate_bps, r->kmin_bytes, r->kmax_bytes, r->queue_bytes, r->n_flows);
    put_json_str(b, r->ccp && r->ccp->algo ? r->ccp->algo->name : "none");
    put(b, "}");
}

static void build_state(struct fe_web *w, struct sbuf *b)
{
    struct fe_web_sample s;
    uint64_t seq;
    bool have = latest_sample(w, &s, &seq);
    put(b, "{\"run\":");
    put_run_json(b, w->run);
    put(b, ",\"samples_dropped\":%" PRIu64 ",\"sample\":", (uint64_t)atomic_load(&w->dropped));
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
    uint64_t first = last > RING_SAMPLES ? last - RING_SAMPLES + 1 : 1;
    struct fe_web_sample *s = malloc(sizeof *s);
    bool comma = false;
    put(b, "{\"samples\":[");
    for (uint64_t k = first; s && k <= last; k++) {
        if (!sample_at(w, k, s)) continue;
        if (comma) put(b, ",");
        put_sample_json(b, s, k);
        comma = true;
    }
    put(b, "]}\n");
    if (!s) b->oom = true;
    free(s);
}

/* Every QP's CC parameters: the same set for each flow of the run. */
static void build_params(struct fe_web *w, struct sbuf *b)
{
    const struct fe_cc_params *p = w->run->ccp;
    put(b, "{\"writable\":false,\"qps\":[");
    for (unsigned q = 0; q < w->run->n_flows; q++) {
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

static void put_flow_counters(struct sbuf *b, const struct fe_web_sample *s)
{
    metric_head(b, "flow_received_bytes_total", "counter", "Payload bytes the receiver verified.");
    PER_FLOW(b, s, "flow_received_bytes_total", "%" PRIu64, f->rx_bytes);
    metric_head(b, "flow_sent_bytes_total", "counter",
                "Payload bytes the sender transmitted, retransmissions included.");
    PER_FLOW(b, s, "flow_sent_bytes_total", "%" PRIu64, f->tx_bytes);
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

static void put_switch(struct sbuf *b, const struct fe_web_run *r, const struct fe_web_sample *s)
{
    const struct fe_web_port *p = &s->bottleneck;
    const char *l = "port=\"bottleneck\"";
    metric_head(b, "switch_rate_bytes_per_second", "gauge", "The bottleneck port's rate.");
    put(b, "feroce_switch_rate_bytes_per_second{%s} %" PRIu64 "\n", l, r->rate_bps / 8);
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
    put_flow_counters(b, &s);
    put_flow_cc(b, &s);
    put_flow_latency(b, &s);
    put_switch(b, w->run, &s);
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

/* An SSE client's position: the last sample sent, and the event being written out. */
struct stream {
    struct fe_web *w;
    uint64_t sent_seq;
    uint64_t idle_ns;
    struct sbuf ev;
    size_t off;
};

static void sleep_ns(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* The next event into st->ev: the newest sample when there is one the client has not had, a
 * comment now and then to keep proxies from closing a quiet stream. 0 when stopping. */
static int next_event(struct stream *st)
{
    struct fe_web *w = st->w;
    while (!atomic_load(&w->stopping)) {
        if (atomic_load(&w->seq_seen) != st->sent_seq) {
            struct fe_web_sample s;
            uint64_t seq;
            if (latest_sample(w, &s, &seq)) {
                st->ev.len = 0;
                put(&st->ev, "data: ");
                put_sample_json(&st->ev, &s, seq);
                put(&st->ev, "\n\n");
                st->sent_seq = seq;
                st->idle_ns = 0;
                return st->ev.oom ? 0 : 1;
            }
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

/* Only GET and HEAD, without a body. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    if (!*req_cls) { /* the headers are in: answer once the body (if any) is known */
        *req_cls = c;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0; /* a body nobody asked for is ignored */
        return MHD_YES;
    }
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only (read-only view)\n");
    return route(cls, c, url);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap; /* client errors are the client's: the tool's output stays clean */
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
    pthread_mutex_init(&w->mu, NULL);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(ip);
    const struct fe_web_limits *l = &default_limits;
    w->d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
        NULL, NULL, on_request, w, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, l->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        l->max_per_ip, MHD_OPTION_CONNECTION_TIMEOUT, l->timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, l->request_memory_bytes, MHD_OPTION_THREAD_STACK_SIZE,
        (size_t)(256 * 1024), MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!w->d) {
        snprintf(err, err_cap, "--web %s: cannot listen there (in use, or not a local address)",
                 addr);
        pthread_mutex_destroy(&w->mu);
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
    free(w);
}
