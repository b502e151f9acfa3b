/* The web view of send, recv and switch (web_io.h): per tool, how its engine's counters become
 * a sample. Runs on the tool's own thread, between its engine's steps: the engine is never
 * read from another thread, and the hand-over to the server only ever try-locks. */
#include "web/web_io.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "feroce/daq.h"
#include "feroce/eswitch.h"
#include "feroce/frontend.h"
#include "feroce/qp.h"
#include "feroce/report.h"
#include "web/web.h"

#define SAMPLE_NS 50000000ull /* 20 samples a second, as the demo */

enum tool { SEND, RECV, SWITCH, EB };

struct fe_web_io {
    enum tool tool;
    struct fe_web *w;
    struct fe_web_run run;
    struct fe_cc_params ccp;
    struct fe_frontend *f;
    struct fe_daq *d;
    struct fe_eswitch *s;
    unsigned bottleneck; /* the switch's shaped port */
    uint64_t t0, next_ns;
    unsigned slot[FE_WEB_MAX_FLOWS]; /* send: the front-end's flow slots shown */
    struct fe_web_eb_run eb;
};

/* ---- samples ---- */

static void qp_flow(const struct fe_qp_counters *c, struct fe_web_flow *w)
{
    w->tx_bytes = c->tx_bytes;
    w->cnps_rx = c->rx_cnps;
    w->retx_pkts = c->retx_pkts;
    w->timeouts = c->timeouts;
    w->rtt_sum_ns = c->rtt_sum_ns;
    w->rtt_max_ns = c->rtt_max_ns;
    memcpy(w->rtt_hist, c->rtt_hist, sizeof w->rtt_hist);
}

/* send: each used flow slot (the first FE_WEB_MAX_FLOWS), as its live line reads it. */
static void sample_send(struct fe_web_io *x, struct fe_web_sample *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS && n < x->run.n_flows; i++) {
        const struct fe_frontend_flow *fl = fe_frontend_flow(x->f, i);
        if (!fl->used) continue;
        struct fe_web_flow *w = &s->f[n];
        x->slot[n++] = i;
        w->qpn = fl->qpn;
        w->has_tx = true;
        qp_flow(fl->qp ? fe_qp_counters(fl->qp) : &fl->final, w);
        if (!fl->qp) continue;
        struct fe_cc_view v;
        fe_cc_view_of(fe_qp_cc(fl->qp), &v);
        w->has_rc = v.has_rc, w->has_rt = v.has_rt, w->has_alpha = v.has_alpha;
        w->rc_bps = v.rc_bps, w->rt_bps = v.rt_bps, w->alpha = v.alpha;
    }
    s->n_flows = n;
}

/* recv: each flow's verified bytes and what its QP answered (CNPs sent, CE marks seen). */
static void sample_recv(struct fe_web_io *x, struct fe_web_sample *s)
{
    unsigned n = fe_daq_n_flows(x->d);
    s->n_flows = n < FE_WEB_MAX_FLOWS ? n : FE_WEB_MAX_FLOWS;
    for (unsigned i = 0; i < s->n_flows; i++) {
        const struct fe_daq_flow *fl = fe_daq_flow(x->d, i);
        struct fe_web_flow *w = &s->f[i];
        w->qpn = fl->qpn;
        w->has_rx = true;
        w->rx_bytes = fl->bytes;
        if (!fl->qp) continue;
        w->cnps_tx = fe_qp_counters(fl->qp)->tx_cnps;
        w->ce_pkts = fe_qp_counters(fl->qp)->rx_ce_pkts;
    }
}

static void port_of(const struct fe_esw_port_stats *p, struct fe_web_port *w)
{
    w->q_bytes = p->qlen_bytes;
    w->q_max_bytes = p->qlen_max_bytes;
    w->tx_bytes = p->tx_bytes;
    w->marked = p->marked;
    w->drops_full = p->drops_full;
    w->drops_loss = p->drops_loss;
}

/* switch: each port's output as a "flow", and the shaped port as the bottleneck. */
static void sample_switch(struct fe_web_io *x, struct fe_web_sample *s)
{
    unsigned n = fe_eswitch_n_ports(x->s);
    s->n_flows = n < FE_WEB_MAX_FLOWS ? n : FE_WEB_MAX_FLOWS;
    for (unsigned i = 0; i < s->n_flows; i++) {
        s->f[i].qpn = i;
        s->f[i].has_tx = true;
        s->f[i].tx_bytes = fe_eswitch_port_stats(x->s, i)->tx_bytes;
    }
    struct fe_web_port *b = &s->bottleneck;
    b->has = true;
    snprintf(b->name, sizeof b->name, "%u", x->bottleneck);
    b->rate_bps = x->run.rate_bps;
    b->kmin_bytes = x->run.kmin_bytes;
    b->kmax_bytes = x->run.kmax_bytes;
    port_of(fe_eswitch_port_stats(x->s, x->bottleneck), b);
}

static void push_sample(struct fe_web_io *x, uint64_t now)
{
    struct fe_web_sample *s = calloc(1, sizeof *s);
    if (!s) return;
    s->t_ns = now - x->t0;
    if (x->tool == SEND) sample_send(x, s);
    if (x->tool == RECV) sample_recv(x, s);
    if (x->tool == SWITCH) sample_switch(x, s);
    if (x->tool == EB) x->eb.fill(x->eb.ctx, s);
    fe_web_push(x->w, s);
    free(s);
}

/* --web-write: the page's parameters into the sender's running QPs. */
static void take_params(struct fe_web_io *x, uint64_t now)
{
    struct fe_cc_params p[FE_WEB_MAX_FLOWS];
    unsigned bits = x->tool == SEND ? fe_web_take_params(x->w, p) : 0;
    for (unsigned i = 0; bits && i < FE_WEB_MAX_FLOWS; i++) {
        const struct fe_frontend_flow *fl = fe_frontend_flow(x->f, x->slot[i]);
        if (bits & (1u << i) && fl->used && fl->qp) fe_web_retune_qp(fl->qp, &p[i], now);
    }
}

void fe_web_io_step(struct fe_web_opts *o, uint64_t now_ns)
{
    struct fe_web_io *x = o->io;
    if (!x) return;
    if (now_ns >= x->next_ns) {
        push_sample(x, now_ns);
        while (x->next_ns <= now_ns) x->next_ns += SAMPLE_NS;
    }
    take_params(x, now_ns);
}

uint64_t fe_web_io_deadline(const struct fe_web_opts *o, uint64_t dl)
{
    return o->io && o->io->next_ns < dl ? o->io->next_ns : dl;
}

/* ---- start and end ---- */

static int start(struct fe_web_opts *o, struct fe_web_io *x, const char *cmd)
{
    char err[256];
    x->run.tool = cmd;
    x->run.writable = o->write && x->tool == SEND;
    x->w = fe_web_start(o->addr, &x->run, err, sizeof err);
    if (!x->w) {
        fprintf(stderr, "feroce %s: %s\n", cmd, err);
        free(x);
        return -1;
    }
    uint32_t ip;
    uint16_t port;
    fe_web_parse_addr(o->addr, &ip, &port);
    fprintf(stderr, "feroce %s: dashboard at http://%u.%u.%u.%u:%u/\n", cmd, ip >> 24,
            (ip >> 16) & 255, (ip >> 8) & 255, ip & 255, fe_web_port(x->w));
    if (o->write && x->tool != SEND)
        fprintf(stderr, "feroce %s: --web-write: only feroce send has CC parameters to set\n", cmd);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    x->t0 = x->next_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    o->io = x;
    return 0;
}

int fe_web_io_send(struct fe_web_opts *o, struct fe_frontend *f,
                   const struct fe_frontend_config *fc)
{
    if (!o->addr) return 0;
    struct fe_web_io *x = calloc(1, sizeof *x);
    if (!x) return -1;
    x->tool = SEND;
    x->f = f;
    if (fc->qp.cc_params)
        x->ccp = *fc->qp.cc_params;
    else if (fc->qp.cc_algo && strcmp(fc->qp.cc_algo->name, "none"))
        fe_cc_params_default(&x->ccp, fc->qp.cc_algo);
    x->run.ccp = x->ccp.algo ? &x->ccp : NULL;
    /* the QPs open when the host asks (side channel): as many as configured are shown */
    x->run.n_flows = fc->n_qps < 1                  ? 1
                     : fc->n_qps > FE_WEB_MAX_FLOWS ? FE_WEB_MAX_FLOWS
                                                    : fc->n_qps;
    snprintf(x->run.description, sizeof x->run.description,
             "software front-end: %u QP%s, %s; throughput is payload sent (retransmissions "
             "included)",
             x->run.n_flows, x->run.n_flows == 1 ? "" : "s",
             x->run.ccp ? x->run.ccp->algo->name : "no CC");
    return start(o, x, "send");
}

int fe_web_io_recv(struct fe_web_opts *o, struct fe_daq *d)
{
    if (!o->addr) return 0;
    struct fe_web_io *x = calloc(1, sizeof *x);
    if (!x) return -1;
    x->tool = RECV;
    x->d = d;
    unsigned n = fe_daq_n_flows(d);
    x->run.n_flows = n < FE_WEB_MAX_FLOWS ? n : FE_WEB_MAX_FLOWS;
    snprintf(x->run.description, sizeof x->run.description,
             "DAQ receiver: %u flow%s; throughput is payload verified", n, n == 1 ? "" : "s");
    return start(o, x, "recv");
}

int fe_web_io_switch(struct fe_web_opts *o, struct fe_eswitch *s, const struct fe_eswitch_config *c)
{
    if (!o->addr) return 0;
    struct fe_web_io *x = calloc(1, sizeof *x);
    if (!x) return -1;
    x->tool = SWITCH;
    x->s = s;
    unsigned n = fe_eswitch_n_ports(s);
    bool udp = c->backend == FE_BACKEND_UDP;
    x->bottleneck = udp ? n - 1 : c->bottleneck_if >= 0 ? (unsigned)c->bottleneck_if : 0;
    x->run.n_flows = n < FE_WEB_MAX_FLOWS ? n : FE_WEB_MAX_FLOWS;
    x->run.flow_label = "port";
    x->run.rate_bps = c->rate_bps;
    x->run.kmin_bytes = c->ecn ? c->red.kmin_bytes : 0;
    x->run.kmax_bytes = c->ecn ? c->red.kmax_bytes : 0;
    x->run.queue_bytes = c->queue_bytes;
    snprintf(x->run.description, sizeof x->run.description,
             "emulated switch: %u ports, port %u shaped to %.3f Gb/s%s; throughput is each "
             "port's output",
             n, x->bottleneck, (double)c->rate_bps / 1e9, c->ecn ? ", RED/ECN" : "");
    return start(o, x, "switch");
}

int fe_web_io_eb(struct fe_web_opts *o, const char *cmd, const struct fe_web_eb_run *r)
{
    if (!o->addr) return 0;
    struct fe_web_io *x = calloc(1, sizeof *x);
    if (!x) return -1;
    x->tool = EB;
    x->eb = *r;
    x->run.n_builders = r->n_builders < FE_WEB_MAX_BUILDERS ? r->n_builders : FE_WEB_MAX_BUILDERS;
    x->run.first_builder = r->first_builder;
    snprintf(x->run.description, sizeof x->run.description, "%s", r->description);
    return start(o, x, cmd);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

#define LAT_MAX 4096

void fe_web_eb_latency(struct fe_web_builder *x, const uint64_t *lat, size_t n)
{
    static uint64_t tmp[LAT_MAX]; /* the tool's one thread only */
    if (n > LAT_MAX) {
        lat += n - LAT_MAX;
        n = LAT_MAX;
    }
    x->has_latency = n > 0;
    if (!n) return;
    memcpy(tmp, lat, n * sizeof *tmp);
    qsort(tmp, n, sizeof *tmp, cmp_u64);
    x->lat_p50_ns = tmp[(size_t)(0.5 * (double)(n - 1) + 0.5)];
    x->lat_p99_ns = tmp[(size_t)(0.99 * (double)(n - 1) + 0.5)];
}

void fe_web_io_finish(struct fe_web_opts *o, const char *cmd)
{
    struct fe_web_io *x = o->io;
    if (!x) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    push_sample(x, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
    fflush(stdout);
    fe_web_hold(cmd, o->hold_ns);
    fe_web_stop(x->w);
    free(x);
    o->io = NULL;
}

uint16_t fe_web_io_port(const struct fe_web_opts *o)
{
    return o->io ? fe_web_port(o->io->w) : 0;
}
