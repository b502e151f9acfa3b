/* feroce demo: the main job on one machine. Three software front-ends stream RDMA WRITEs with
 * immediate through an emulated ECN-marking switch with a bottleneck into one DAQ receiver, on
 * loopback sockets, with DCQCN on; every byte is verified. As the LST AdvCam paper's incast
 * bench, scaled to what this machine can carry. All in one thread and one event loop: the
 * engines are the same ones `feroce send`, `feroce switch` and `feroce recv` run. */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/cc.h"
#include "feroce/daq.h"
#include "feroce/eswitch.h"
#include "feroce/frontend.h"
#include "feroce/io.h"
#include "feroce/report.h"
#include "feroce/sidechannel.h"
#include "feroce/stats.h"
#include "tools/cli.h"
#include "tools/io_opts.h"
#include "tools/eb_wire.h"
#ifdef FE_HAVE_WEB
#include "web/web.h"
#endif

#define MAX_SENDERS 8

static const char usage[] =
    "usage: feroce demo [OPTIONS]\n"
    "Incast on loopback: N software front-ends (feroce send) -> an emulated switch with a\n"
    "bottleneck, RED/ECN marking and a byte-limited queue (feroce switch) -> one DAQ receiver\n"
    "(feroce recv) that opens the QPs over the side channel, verifies every byte and answers CE\n"
    "marks with CNPs; DCQCN in the senders. Prints a live table, then per-flow averages, Jain's\n"
    "fairness index, the aggregate, retransmissions and the verification result.\n"
    "Without --rate it measures what this machine carries on one core and scales the 10 Gb/s\n"
    "scenario down to it (and says so).\n"
    "\n"
    "  --rate RATE        bottleneck rate (and each sender's line rate); default: measured\n"
    "  --senders N        front-ends (3, at most 8)\n"
    "  --duration TIME    streaming time (12s); averages over the last 2/3\n"
    "  --cc NAME          congestion control of the senders (dcqcn); --param NAME=VALUE[,...]\n"
    "  --no-ecn           no marking (the switch only drops): to compare\n"
    "  --kmin/--kmax SIZE --pmax P   RED thresholds (2 ms / 8 ms at the rate; 0.2)\n"
    "  --queue SIZE       switch queue limit (every sender's window: no tail drops)\n"
    "  --replay SIZE      each sender's replay window (8 ms at the rate)\n"
    "  --loss P           random loss at the bottleneck (0)\n"
    "  --msg-size SIZE    message size (2 ms at the rate, 4K..64K), --mtu N (4096)\n"
    "  --base ADDR        loopback addresses used: ADDR+1 receiver, +2.. senders, +100 switch\n"
    "                     (127.77.0.0, else the first free of 127.77.1-31.0)\n"
    "  --probe            only measure what one core carries (Gb/s) and exit\n"
    "  --web [ADDR:]PORT  serve a live dashboard, JSON, SSE and Prometheus metrics there\n"
    "                     (address 127.0.0.1 by default; docs/dashboard.md)\n"
    "  --web-hold TIME    keep serving the final state this long after the run (0)\n"
    "  --web-write        let the page (POST /api/params) change the senders' CC parameters\n"
    "  --json  --quiet\n"
    "  --event-building   event building instead: front-ends, builders and an event manager,\n"
    "                     one builder slowed and killed (feroce demo --event-building --eb-help)\n"
    "\n"
    "Other demonstrations: 'feroce bench icrc' (ICRC speed), 'feroce gen FILE.pcap' and 'feroce\n"
    "decode FILE.pcap' (a RoCEv2 conversation, decoded with every ICRC checked).\n";

struct demo_cfg {
    uint64_t rate_bps;
    unsigned senders;
    uint64_t duration_ns;
    const struct fe_cc_algo *algo;
    struct fe_cc_params ccp;
    bool ecn, shaped, live, json;
    uint64_t kmin, kmax, queue, replay, burst;
    uint32_t pmax_ppm, loss_ppm;
    uint32_t msg_bytes, mtu;
    uint32_t base_ip;
    struct fe_web *web; /* the live web view (--web), fed every SAMPLE_NS */
};

#define SAMPLE_NS 50000000ull /* 20 samples a second for the web view */

struct flow_res {
    double gbps;
    uint64_t msgs, bytes, sent_msgs, posted, retx, timeouts, cnps_rx, cnps_tx, ce, verify_err,
        seq_err;
    bool error;
    double rc_gbps;
};

struct demo_res {
    unsigned n;
    struct flow_res f[MAX_SENDERS];
    double aggregate_gbps, jain, seconds;
    uint64_t verified_bytes, errors, lost_wrs, retx, marked, drops_full, drops_loss;
    uint64_t qmax, qavg;
    bool qp_error, setup_failed;
};

static uint32_t ip_at(const struct demo_cfg *c, unsigned off)
{
    return c->base_ip + off;
}

/* One incast run in progress: the engines, the run's phase and what the live table and the
 * averages need from one iteration to the next. */
struct incast {
    const struct demo_cfg *c;
    struct demo_res *res;
    struct fe_frontend *fe[MAX_SENDERS];
    struct fe_eswitch *sw;
    struct fe_daq *daq;
    struct fe_loop *loop;
    char err[256];
    uint64_t t0;
    unsigned ready[2 + MAX_SENDERS]; /* per component: receiver, switch, senders */
    enum { RUN, DRAIN, LINGER, CLOSE, END } phase;
    uint64_t start, phase_ns, last_progress, last_count;
    uint64_t win_from, win_start_ns, win_bytes0[MAX_SENDERS]; /* the averaging window */
    uint64_t tick, last_tick, prev_bytes[MAX_SENDERS];        /* the live table */
    uint64_t prev_marked, prev_cnps, prev_retx;
    bool header;
    unsigned rot;
    uint64_t next_sample;
};

/* The switch: one access port per sender, the receiver behind the bottleneck. */
static int create_switch(struct incast *x)
{
    const struct demo_cfg *c = x->c;
    struct fe_eswitch_config sc;
    fe_eswitch_config_default(&sc);
    sc.n_ports = c->senders;
    for (unsigned i = 0; i < c->senders; i++) {
        sc.port_ip[i] = ip_at(c, 100);
        sc.port_port[i] = (uint16_t)(7001 + i);
    }
    sc.to_ip = ip_at(c, 1);
    sc.to_port = FE_ROCEV2_UDP_PORT;
    sc.rate_bps = c->shaped ? c->rate_bps : 0;
    sc.queue_bytes = c->queue;
    sc.ecn = c->ecn;
    sc.red.kmin_bytes = c->kmin;
    sc.red.kmax_bytes = c->kmax;
    sc.red.pmax_ppm = c->pmax_ppm;
    sc.loss_ppm = c->loss_ppm;
    sc.seed = 7;
    int e = 0;
    x->sw = fe_eswitch_create(&sc, x->t0, &e, x->err, sizeof x->err);
    return x->sw ? 0 : -1;
}

static int create_sender(struct incast *x, unsigned i)
{
    const struct demo_cfg *c = x->c;
    struct fe_frontend_config fc;
    fe_frontend_config_default(&fc);
    fc.ep.udp.bind_ip = ip_at(c, 2 + i);
    fc.ep.udp.bind_port = FE_ROCEV2_UDP_PORT;
    fc.sc_bind_ip = ip_at(c, 2 + i);
    fc.to_ip = ip_at(c, 100);
    fc.to_port = (uint16_t)(7001 + i);
    fc.stream.msg_bytes = c->msg_bytes;
    fc.qp.mtu_bytes = c->mtu;
    fc.qp.line_rate_bps = c->rate_bps;
    fc.qp.cc_algo = c->algo;
    fc.qp.cc_params = c->algo ? &c->ccp : NULL;
    fc.qp.pacer_burst_bytes = c->burst; /* covers late wake-ups of a busy machine */
    /* longer than the fullest queue's delay plus software hiccups: no spurious resends */
    fc.qp.ack_timeout_ns = 50000000ull + 2 * c->queue * 8000000000ull / c->rate_bps;
    fc.qp.replay_bytes = c->replay;
    fc.qp.retry_cnt = 7;
    int e = 0;
    x->fe[i] = fe_frontend_create(&fc, x->t0, &e, x->err, sizeof x->err);
    return x->fe[i] ? 0 : -1;
}

/* The DAQ receiver, one QP on every sender. */
static int create_receiver(struct incast *x)
{
    const struct demo_cfg *c = x->c;
    struct fe_daq_config dc;
    fe_daq_config_default(&dc);
    dc.ep.udp.bind_ip = ip_at(c, 1);
    dc.ep.udp.bind_port = FE_ROCEV2_UDP_PORT;
    dc.local_ip = ip_at(c, 1);
    dc.n_fe = c->senders;
    for (unsigned i = 0; i < c->senders; i++) {
        dc.fe[i].ip = ip_at(c, 2 + i);
        dc.fe[i].port = FE_SC_PORT;
        dc.fe[i].qps = 1;
    }
    dc.msg_bytes = c->msg_bytes;
    dc.qp.mtu_bytes = c->mtu;
    dc.qp.line_rate_bps = c->rate_bps;
    dc.sc_timeout_ns = 200000000ull;
    int e = 0;
    x->daq = fe_daq_create(&dc, x->t0, &e, x->err, sizeof x->err);
    return x->daq ? 0 : -1;
}

/* One event loop for every engine; tags: component x 64 + fd index. */
static int open_loop(struct incast *x)
{
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    int e = 0;
    x->loop = fe_loop_create(&lc, &e);
    if (!x->loop) {
        snprintf(x->err, sizeof x->err, "event loop: %s", fe_io_fail_str(e));
        return -1;
    }
    int fds[40];
    int n = fe_daq_fds(x->daq, fds, 40);
    for (int k = 0; k < n; k++) fe_loop_add(x->loop, fds[k], 0 * 64 + k);
    n = fe_eswitch_fds(x->sw, fds, 40);
    for (int k = 0; k < n; k++) fe_loop_add(x->loop, fds[k], 1 * 64 + k);
    for (unsigned i = 0; i < x->c->senders; i++) {
        n = fe_frontend_fds(x->fe[i], fds, 40);
        for (int k = 0; k < n; k++) fe_loop_add(x->loop, fds[k], (int)(2 + i) * 64 + k);
    }
    return 0;
}

static int setup_incast(struct incast *x)
{
    if (create_switch(x)) return -1;
    for (unsigned i = 0; i < x->c->senders; i++)
        if (create_sender(x, i)) return -1;
    if (create_receiver(x) || open_loop(x)) return -1;
    for (unsigned i = 0; i < 2 + MAX_SENDERS; i++) x->ready[i] = FE_READY_ALL;
    x->phase = RUN;
    x->phase_ns = x->last_progress = x->t0;
    return 0;
}

static void step_engines(struct incast *x, uint64_t now)
{
    fe_daq_step(x->daq, now, x->ready[0]);
    fe_eswitch_step(x->sw, now, x->ready[1]);
    unsigned n = x->c->senders;
    x->rot = (x->rot + 1) % n; /* senders take turns at going first */
    for (unsigned j = 0; j < n; j++) {
        unsigned i = (x->rot + j) % n;
        fe_frontend_step(x->fe[i], now, x->ready[2 + i]);
    }
    memset(x->ready, 0, sizeof x->ready);
}

/* Progress, QP failures, and the start once every QP is ready to send: -1 when the side
 * channel never got there. */
static int watch_flows(struct incast *x, uint64_t now)
{
    bool all_rts = true;
    uint64_t count = 0;
    for (unsigned i = 0; i < x->c->senders; i++) {
        const struct fe_daq_flow *fl = fe_daq_flow(x->daq, i);
        if (fl->sc_state != FE_SC_H_RTS) all_rts = false;
        if (fl->sc_state == FE_SC_H_FAILED || fl->qp_error) x->res->qp_error = true;
        count += fl->msgs;
    }
    if (count != x->last_count) {
        x->last_count = count;
        x->last_progress = now;
    }
    if (!x->start && all_rts) {
        x->start = now;
        x->tick = now + 1000000000ull;
        x->last_tick = now;
        x->win_from = now + x->c->duration_ns / 3;
    }
    if (!x->start && now > x->t0 + 3000000000ull) {
        snprintf(x->err, sizeof x->err, "the side channel did not connect every QP in 3 s");
        x->res->setup_failed = true;
        return -1;
    }
    /* the averages leave out the first third: DCQCN's first cuts */
    if (x->start && x->win_from && now >= x->win_from) {
        for (unsigned i = 0; i < x->c->senders; i++)
            x->win_bytes0[i] = fe_daq_flow(x->daq, i)->bytes;
        x->win_from = 0;
        x->win_start_ns = now;
    }
    return 0;
}

static void print_live_header(const struct incast *x)
{
    printf("%6s", "t");
    for (unsigned i = 0; i < x->c->senders; i++) printf("  flow%u Gb/s (Rc)  ", i + 1);
    printf("  total    queue  CE/s  CNP/s  retx/s\n");
}

/* A row of the live table: each flow's Gb/s and Rc, the queue, marks, CNPs, resends. */
static void print_live_row(struct incast *x, uint64_t now)
{
    double dt = (double)(now - x->last_tick) / 1e9;
    const struct fe_esw_port_stats *b = fe_eswitch_port_stats(x->sw, x->c->senders);
    uint64_t cnps = 0, retx = 0;
    if (!x->header) print_live_header(x);
    x->header = true;
    printf("%5.0fs", (double)(now - x->start) / 1e9);
    double tot = 0;
    for (unsigned i = 0; i < x->c->senders; i++) {
        const struct fe_daq_flow *fl = fe_daq_flow(x->daq, i);
        double g = (double)(fl->bytes - x->prev_bytes[i]) * 8 / dt / 1e9;
        tot += g;
        x->prev_bytes[i] = fl->bytes;
        const struct fe_frontend_flow *sf = fe_frontend_flow(x->fe[i], 0);
        struct fe_cc_view v = {0};
        if (sf->qp) {
            fe_cc_view_of(fe_qp_cc(sf->qp), &v);
            retx += fe_qp_counters(sf->qp)->retx_pkts;
        }
        if (fl->qp) cnps += fe_qp_counters(fl->qp)->tx_cnps;
        printf("  %6.3f (%6.3f)  ", g, v.has_rc ? v.rc_bps / 1e9 : g);
    }
    printf("  %6.3f  %5" PRIu64 "K  %4" PRIu64 "  %5" PRIu64 "  %6" PRIu64 "\n", tot,
           b->qlen_bytes / 1024, (uint64_t)((double)(b->marked - x->prev_marked) / dt),
           (uint64_t)((double)(cnps - x->prev_cnps) / dt),
           (uint64_t)((double)(retx - x->prev_retx) / dt));
    fflush(stdout);
    x->prev_marked = b->marked;
    x->prev_cnps = cnps;
    x->prev_retx = retx;
    x->last_tick = now;
    while (x->tick <= now) x->tick += 1000000000ull;
}

/* The end of the streaming time: each flow's average over the window, then stop. */
static void stop_streaming(struct incast *x, uint64_t now)
{
    double secs = x->win_start_ns ? (double)(now - x->win_start_ns) / 1e9 : 0;
    for (unsigned i = 0; i < x->c->senders; i++) {
        const struct fe_daq_flow *fl = fe_daq_flow(x->daq, i);
        x->res->f[i].gbps = secs > 0 ? (double)(fl->bytes - x->win_bytes0[i]) * 8 / secs / 1e9 : 0;
        const struct fe_frontend_flow *sf = fe_frontend_flow(x->fe[i], 0);
        struct fe_cc_view v = {0};
        if (sf->qp) fe_cc_view_of(fe_qp_cc(sf->qp), &v);
        x->res->f[i].rc_gbps = v.rc_bps / 1e9;
    }
    x->res->seconds = secs;
    fe_daq_stop(x->daq, now);
}

static void enter(struct incast *x, int phase, uint64_t now)
{
    x->phase = phase;
    x->phase_ns = now;
}

/* RUN -> DRAIN (the senders stop) -> LINGER (last ACKs) -> CLOSE (side channel) -> END. */
static void advance_phase(struct incast *x, uint64_t now)
{
    bool senders_done = true;
    switch (x->phase) {
    case RUN:
        if (fe_cli_signals || (x->start && now >= x->start + x->c->duration_ns)) {
            stop_streaming(x, now);
            enter(x, DRAIN, now);
        }
        break;
    case DRAIN:
        for (unsigned i = 0; i < x->c->senders; i++)
            if (!fe_frontend_done(x->fe[i])) senders_done = false;
        if ((senders_done && now >= x->last_progress + 50000000ull) ||
            now >= x->phase_ns + 10000000000ull || fe_cli_signals > 1)
            enter(x, LINGER, now);
        break;
    case LINGER:
        if (now >= x->phase_ns + 50000000ull) {
            fe_daq_close(x->daq, now);
            enter(x, CLOSE, now);
        }
        break;
    case CLOSE:
        if (fe_daq_sc_idle(x->daq) || now >= x->phase_ns + 2000000000ull) x->phase = END;
        break;
    default:
        break;
    }
}

/* Sleeps until an engine's deadline, the next live row or 20 ms, whichever is first. */
static void wait_events(struct incast *x, uint64_t now)
{
    uint64_t dl = fe_daq_next_deadline(x->daq);
    uint64_t t = fe_eswitch_next_deadline(x->sw);
    if (t < dl) dl = t;
    for (unsigned i = 0; i < x->c->senders; i++) {
        t = fe_frontend_next_deadline(x->fe[i]);
        if (t < dl) dl = t;
    }
    if (x->start && x->c->live && x->tick < dl) dl = x->tick;
    if (x->c->web && x->next_sample && x->next_sample < dl) dl = x->next_sample;
    if (now + 20000000ull < dl) dl = now + 20000000ull;
    int tags[64];
    int nt = fe_loop_wait(x->loop, dl, tags, 64);
    for (int k = 0; k < nt; k++) x->ready[tags[k] / 64] |= 1u << (tags[k] % 64);
}

#ifdef FE_HAVE_WEB
/* Flow i as the web view shows it: the same counters and CC state the live table reads. */
static void sample_flow(struct incast *x, unsigned i, struct fe_web_flow *w)
{
    const struct fe_daq_flow *fl = fe_daq_flow(x->daq, i);
    const struct fe_frontend_flow *sf = fe_frontend_flow(x->fe[i], 0);
    const struct fe_qp_counters *sc = sf->qp ? fe_qp_counters(sf->qp) : &sf->final;
    w->has_rx = w->has_tx = true;
    w->rx_bytes = fl->bytes;
    w->tx_bytes = sc->tx_bytes;
    w->cnps_rx = sc->rx_cnps;
    w->retx_pkts = sc->retx_pkts;
    w->timeouts = sc->timeouts;
    w->rtt_sum_ns = sc->rtt_sum_ns;
    w->rtt_max_ns = sc->rtt_max_ns;
    memcpy(w->rtt_hist, sc->rtt_hist, sizeof w->rtt_hist);
    if (sf->qp) {
        struct fe_cc_view v = {0};
        fe_cc_view_of(fe_qp_cc(sf->qp), &v);
        w->qpn = fe_qp_config(sf->qp)->local_qpn;
        w->has_rc = v.has_rc, w->has_rt = v.has_rt, w->has_alpha = v.has_alpha;
        w->rc_bps = v.rc_bps, w->rt_bps = v.rt_bps, w->alpha = v.alpha;
    }
    if (fl->qp) {
        w->cnps_tx = fe_qp_counters(fl->qp)->tx_cnps;
        w->ce_pkts = fe_qp_counters(fl->qp)->rx_ce_pkts;
    }
}

static void push_sample(struct incast *x, uint64_t now)
{
    struct fe_web_sample s;
    memset(&s, 0, sizeof s);
    s.t_ns = now - x->start;
    s.n_flows = x->c->senders;
    for (unsigned i = 0; i < x->c->senders; i++) sample_flow(x, i, &s.f[i]);
    const struct fe_esw_port_stats *b = fe_eswitch_port_stats(x->sw, x->c->senders);
    s.bottleneck = (struct fe_web_port){.has = true,
                                        .name = "bottleneck",
                                        .rate_bps = x->c->rate_bps,
                                        .kmin_bytes = x->c->kmin,
                                        .kmax_bytes = x->c->kmax,
                                        .q_bytes = b->qlen_bytes,
                                        .q_max_bytes = b->qlen_max_bytes,
                                        .tx_bytes = b->tx_bytes,
                                        .marked = b->marked,
                                        .drops_full = b->drops_full,
                                        .drops_loss = b->drops_loss};
    fe_web_push(x->c->web, &s);
    while (x->next_sample <= now) x->next_sample += SAMPLE_NS;
}

/* --web-write: the parameters the page set, into the senders' running QPs. */
static void take_params(struct incast *x, uint64_t now)
{
    struct fe_cc_params p[FE_WEB_MAX_FLOWS];
    unsigned bits = fe_web_take_params(x->c->web, p);
    for (unsigned i = 0; bits && i < x->c->senders && i < FE_WEB_MAX_FLOWS; i++) {
        const struct fe_frontend_flow *sf = fe_frontend_flow(x->fe[i], 0);
        if (bits & (1u << i) && sf->qp) fe_web_retune_qp(sf->qp, &p[i], now);
    }
}
#endif

/* The web view's sample, every SAMPLE_NS once the flows stream. */
static void feed_web(struct incast *x, uint64_t now)
{
#ifdef FE_HAVE_WEB
    if (!x->c->web || !x->start) return;
    if (!x->next_sample) x->next_sample = now;
    if (now >= x->next_sample) push_sample(x, now);
    take_params(x, now);
#else
    (void)x;
    (void)now;
#endif
}

static int run_loop(struct incast *x)
{
    while (x->phase != END) {
        uint64_t now = fe_io_now_ns();
        step_engines(x, now);
        if (watch_flows(x, now)) return -1;
        if (x->phase == RUN && x->start && x->c->live && now >= x->tick) print_live_row(x, now);
        feed_web(x, now);
        advance_phase(x, now);
        if (x->phase == END) break;
        wait_events(x, now);
    }
    return 0;
}

/* Flow i's counters at the end, from the receiver and the sender. */
static void collect_flow(struct incast *x, unsigned i)
{
    const struct fe_daq_flow *fl = fe_daq_flow(x->daq, i);
    const struct fe_frontend_flow *sf = fe_frontend_flow(x->fe[i], 0);
    struct flow_res *r = &x->res->f[i];
    const struct fe_qp_counters *sc = sf->qp ? fe_qp_counters(sf->qp) : &sf->final;
    r->msgs = fl->msgs;
    r->bytes = fl->bytes;
    r->verify_err = fl->verify_errors;
    r->seq_err = fl->seq_errors;
    r->sent_msgs = sf->completed;
    r->posted = sf->posted;
    r->retx = sc->retx_pkts;
    r->timeouts = sc->timeouts;
    r->cnps_rx = sc->rx_cnps;
    r->error = sf->error || fl->qp_error;
    if (fl->qp) {
        r->cnps_tx = fe_qp_counters(fl->qp)->tx_cnps;
        r->ce = fe_qp_counters(fl->qp)->rx_ce_pkts;
    }
}

/* Per-flow results, their sums and fairness, the bottleneck's counters. */
static void collect_results(struct incast *x)
{
    struct demo_res *res = x->res;
    double g[MAX_SENDERS];
    for (unsigned i = 0; i < x->c->senders; i++) {
        collect_flow(x, i);
        const struct flow_res *r = &res->f[i];
        g[i] = r->gbps;
        res->aggregate_gbps += r->gbps;
        res->verified_bytes += r->bytes;
        res->errors += r->verify_err + r->seq_err;
        /* a work request the sender posted that never reached the consumer is lost */
        res->lost_wrs += r->posted > r->msgs ? r->posted - r->msgs : 0;
        res->retx += r->retx;
        if (r->error) res->qp_error = true;
    }
    /* a run that carried nothing reads as 0, not as perfectly fair shares of nothing */
    res->jain = res->aggregate_gbps > 0 ? fe_jain_index(g, x->c->senders) : 0;
    const struct fe_esw_port_stats *b = fe_eswitch_port_stats(x->sw, x->c->senders);
    res->marked = b->marked;
    res->drops_full = b->drops_full;
    res->drops_loss = b->drops_loss;
    res->qmax = b->qlen_max_bytes;
    res->qavg = b->qlen_avg_bytes;
}

/* One incast run: builds the engines, runs `duration`, drains, closes, collects. */
static int run_incast(const struct demo_cfg *c, struct demo_res *res)
{
    memset(res, 0, sizeof *res);
    res->n = c->senders;
    struct incast x = {.c = c, .res = res, .t0 = fe_io_now_ns()};
    int rc = 1;
    if (!setup_incast(&x) && !run_loop(&x)) {
        collect_results(&x);
        rc = 0;
    }
    if (rc && x.err[0]) fprintf(stderr, "feroce demo: %s\n", x.err);
    fe_loop_destroy(x.loop);
    fe_daq_destroy(x.daq);
    for (unsigned i = 0; i < MAX_SENDERS; i++) fe_frontend_destroy(x.fe[i]);
    fe_eswitch_destroy(x.sw);
    return rc;
}

/* What one core carries through sender -> switch -> receiver, in Gb/s of verified payload. */
static double probe(const struct demo_cfg *base)
{
    struct demo_cfg c = *base;
    c.senders = 1;
    c.shaped = false;
    c.ecn = false;
    c.algo = NULL;
    c.rate_bps = 40000000000ull;
    c.duration_ns = 600000000ull;
    c.live = false;
    c.web = NULL;
    c.loss_ppm = 0;
    c.queue = 8u << 20;
    c.replay = 2u << 20;
    c.msg_bytes = 65536;
    c.burst = 65536;
    /* the best of two runs: what the core can carry, less the noise of one busy moment */
    double best = 0;
    for (int k = 0; k < 2; k++) {
        struct demo_res r;
        if (run_incast(&c, &r) != 0 || r.errors || r.qp_error) return 0;
        if (r.f[0].gbps > best) best = r.f[0].gbps;
    }
    return best;
}

/* What the command line asked for beyond the run's configuration. */
struct demo_opts {
    struct demo_cfg c;
    const char *cc_name;
    const char *params[16];
    int n_params;
    bool quiet, probe_only, talk;
    const char *web;                    /* --web [ADDR:]PORT */
    bool web_write;                     /* --web-write */
    uint64_t web_hold_ns;               /* --web-hold */
    uint64_t kmin, kmax, queue, replay; /* 0: scaled to the rate */
    bool base_given;                    /* --base: else the first free of 32 (pick_base) */
};

static int param_opt(const char *val, void *p)
{
    struct demo_opts *o = p;
    if (o->n_params < 16) o->params[o->n_params++] = val;
    return 0;
}

/* A probability 0..1 as parts per million. */
static int ppm_opt(const char *val, void *p)
{
    char *end;
    double prob = strtod(val, &end);
    *(uint32_t *)p = (uint32_t)(prob * 1e6 + 0.5);
    return *end || prob < 0 || prob > 1 ? -1 : 0;
}

static int mtu_opt(const char *val, void *p)
{
    uint64_t v;
    if (fe_parse_u64(val, &v, "--mtu")) return -1;
    *(uint32_t *)p = (uint32_t)v;
    return v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096 ? -1 : 0;
}

static int base_opt(const char *val, void *p)
{
    uint16_t port;
    return fe_io_parse_addr(val, p, &port);
}

static void default_opts(struct demo_opts *o)
{
    memset(o, 0, sizeof *o);
    struct demo_cfg *c = &o->c;
    c->senders = 3;
    c->duration_ns = 12000000000ull;
    c->ecn = c->shaped = true;
    c->msg_bytes = 0; /* 2 ms at the rate, 4..64 KiB */
    c->mtu = 4096;
    c->pmax_ppm = 200000;
    c->base_ip = 0x7F4D0000; /* 127.77.0.0 */
    o->cc_name = "dcqcn";
}

static int parse_opts(int argc, char **argv, struct demo_opts *o)
{
    default_opts(o);
    struct demo_cfg *c = &o->c;
    const struct fe_opt opts[] = {
        {FE_OPT_RATE_("--rate", c->rate_bps), .min = 1},
        {FE_OPT_UINT_("--senders", c->senders), .min = 1, .max = MAX_SENDERS},
        {FE_OPT_TIME_("--duration", c->duration_ns)},
        {FE_OPT_STR_("--cc", o->cc_name)},
        {FE_OPT_FN_("--param", param_opt, o)},
        {FE_OPT_CLEAR_("--no-ecn", c->ecn)},
        {FE_OPT_SIZE_("--kmin", o->kmin)},
        {FE_OPT_SIZE_("--kmax", o->kmax)},
        {FE_OPT_FN_("--pmax", ppm_opt, &c->pmax_ppm)},
        {FE_OPT_SIZE_("--queue", o->queue)},
        {FE_OPT_SIZE_("--replay", o->replay), .min = 1},
        {FE_OPT_FN_("--loss", ppm_opt, &c->loss_ppm)},
        {FE_OPT_SIZE_("--msg-size", c->msg_bytes), .min = 1, .max = 16u << 20},
        {FE_OPT_FN_("--mtu", mtu_opt, &c->mtu)},
        {FE_OPT_FN_("--base", base_opt, &c->base_ip), .seen = &o->base_given},
        {FE_OPT_FLAG_("--json", c->json)},
        {FE_OPT_FLAG_("--quiet", o->quiet)},
        {FE_OPT_FLAG_("--probe", o->probe_only)},
        {FE_OPT_STR_("--web", o->web)},
        {FE_OPT_TIME_("--web-hold", o->web_hold_ns)},
        {FE_OPT_FLAG_("--web-write", o->web_write)},
        {0},
    };
    const struct fe_opt *const tables[] = {opts, NULL};
    const struct fe_cli cli = {.cmd = "demo", .tables = tables, .flags = FE_OPT_SAY_INVALID};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    if (strcmp(o->cc_name, "none")) {
        c->algo = fe_cc_find(o->cc_name);
        if (!c->algo) {
            fprintf(stderr, "feroce demo: unknown congestion control '%s'\n", o->cc_name);
            return -1;
        }
    }
    o->talk = !c->json && !o->quiet;
#ifndef FE_HAVE_WEB
    if (o->web) {
        fprintf(stderr, "feroce demo: --web is not built in (this build had no libmicrohttpd, "
                        "no npm, or FEROCE_WEB=OFF)\n");
        return -1;
    }
#endif
    return 0;
}

/* Whether the UDP ports a run at c->base_ip binds are free. */
static bool base_free(const struct demo_cfg *c)
{
    if (!fe_io_udp_port_free(ip_at(c, 1), FE_ROCEV2_UDP_PORT)) return false;
    for (unsigned i = 0; i < c->senders; i++)
        if (!fe_io_udp_port_free(ip_at(c, 100), (uint16_t)(7001 + i)) ||
            !fe_io_udp_port_free(ip_at(c, 2 + i), FE_ROCEV2_UDP_PORT) ||
            !fe_io_udp_port_free(ip_at(c, 2 + i), FE_SC_PORT))
            return false;
    return true;
}

/* No --base: the first of 127.77.0.0, 127.77.1.0, ... 127.77.31.0 whose ports are free, so
 * that two demos on one machine (two users, or tests run in parallel) do not collide. */
static void pick_base(struct demo_cfg *c)
{
    uint32_t first = c->base_ip;
    for (unsigned k = 0; k < 32; k++, c->base_ip += 256) {
        if (!base_free(c)) continue;
        if (k)
            fprintf(stderr,
                    "feroce demo: 127.77.0.x is in use (another demo?), using 127.77.%u.x\n", k);
        return;
    }
    c->base_ip = first; /* all taken: the run says which bind failed */
}

/* --probe: what one core carries, and nothing else. */
static int print_probe(const struct demo_cfg *c)
{
    double cap = probe(c);
    if (c->json)
        printf("{\"tool\":\"demo\",\"capacity_gbps\":%.6f}\n", cap);
    else
        printf("one core carries %.3f Gb/s through sender -> switch -> receiver\n", cap);
    return cap > 0 ? 0 : 1;
}

/* Without --rate: the 10 Gb/s scenario scaled down to what this machine carries. */
static void measure_rate(struct demo_opts *o)
{
    struct demo_cfg *c = &o->c;
    if (o->talk) {
        printf("measuring what one core carries through sender -> switch -> receiver ...\n");
        fflush(stdout);
    }
    double cap = probe(c);
    static const double nice[] = {10e9, 5e9, 2e9, 1e9, 500e6, 200e6, 100e6};
    c->rate_bps = 100000000ull;
    for (unsigned i = 0; i < sizeof nice / sizeof nice[0]; i++) {
        /* Headroom: the first round trips offer senders x rate, but DCQCN cuts within
         * milliseconds and the switch queue holds every window. 1.6 x at 1 Gb/s and above
         * keeps the shares fair and the bottleneck full on a core that carries little more;
         * the scaled-down rates of slow or sanitizer builds keep 2.9 x. */
        if (nice[i] * (nice[i] >= 1e9 ? 1.6 : 2.9) <= cap * 1e9) {
            c->rate_bps = (uint64_t)nice[i];
            break;
        }
    }
    if (o->talk)
        printf("this machine carries ~%.2f Gb/s on one core: the 10 Gb/s incast runs scaled "
               "to %.2f Gb/s (bottleneck and every sender's line rate; queue and RED "
               "thresholds scaled alike)\n",
               cap, (double)c->rate_bps / 1e9);
}

/* Software moves packets in bursts (a busy machine wakes a process late; the pacer then sends
 * what it owes), and its round trips take milliseconds, not microseconds: buffers, RED
 * thresholds and windows are set in time at the bottleneck rate. Kmin 2 ms, Kmax 8 ms; each
 * sender's replay window 8 ms; the queue holds every window, so nothing is ever tail-dropped
 * (the role PFC plays in a real lossless fabric) and DCQCN's job is to keep the queue short
 * and the shares fair. */
static void scale_to_rate(struct demo_opts *o)
{
    struct demo_cfg *c = &o->c;
    double Bps = (double)c->rate_bps / 8;
    if (!c->msg_bytes) {
        c->msg_bytes = 65536;
        while (c->msg_bytes > 4096 && c->msg_bytes > Bps * 0.002) c->msg_bytes /= 2;
    }
    c->burst = (uint64_t)fmin(fmax(Bps * 0.0005, 2.0 * c->mtu), 65536);
    c->kmin = o->kmin ? o->kmin : (uint64_t)fmax(Bps * 0.002, 4.0 * c->mtu);
    c->kmax = o->kmax ? o->kmax : (uint64_t)fmax(Bps * 0.008, 16.0 * c->mtu);
    c->replay = o->replay ? o->replay : (uint64_t)fmax(Bps * 0.008, 4.0 * c->msg_bytes);
    c->queue = o->queue ? o->queue : c->senders * c->replay + 64 * (uint64_t)c->mtu;
    if (c->kmax <= c->kmin) c->kmax = c->kmin + c->mtu;
}

/* The ConnectX DCQCN profile, whose timers and steps the demo rescales. By name until
 * struct fe_cc_algo says what an algorithm is. */
/* A DCQCN whose parameters are ConnectX's (Mb/s steps, dce_tcp_rtt): the one scale_dcqcn
 * sets, found by what it declares, not by its name. */
static bool is_connectx_dcqcn(const struct fe_cc_algo *algo)
{
    return (algo->caps & FE_CC_CAP_DCQCN) && fe_cc_param_index(algo, "dce_tcp_rtt") >= 0 &&
           fe_cc_param_index(algo, "rpg_time_reset") >= 0;
}

/* DCQCN (ConnectX profile) keeps its rate steps relative to the port (5 and 50 Mb/s per
 * Gb/s) and gets timers for millisecond feedback: alpha period 100 us at 1 Gb/s (10 us at
 * 10 Gb/s, slower at lower rates where packets are fewer), increase timer 300 us at 10 Gb/s
 * and 3 ms / rate in Gb/s, but never over 1.5 ms. The timer is what makes shares converge (its
 * steps are the same for every flow; the byte counter favours the faster one), so it must fire
 * between a flow's CNPs, which come every 1-3 ms here at any rate; a slower timer lets the
 * shares drift apart. */
static int scale_dcqcn(struct demo_opts *o)
{
    struct demo_cfg *c = &o->c;
    double r = (double)c->rate_bps / 1e9; /* rates relative to a 1 Gb/s port */
    char scaled[160], err[256];
    snprintf(scaled, sizeof scaled,
             "dce_tcp_rtt=%.0f,rpg_time_reset=%.0f,rpg_ai_rate=%.0f,rpg_hai_rate=%.0f",
             fmin(fmax(100 / r, 1), 131071), fmin(fmax(3000 / r, 1), 1500),
             fmin(fmax(5 * r, 1), 65535), fmin(fmax(50 * r, 1), 65535));
    if (fe_cc_params_parse(&c->ccp, scaled, err, sizeof err)) {
        fprintf(stderr, "feroce demo: %s\n", err);
        return -1;
    }
    if (o->talk) printf("DCQCN (ConnectX profile) for software round trips: %s\n", scaled);
    return 0;
}

/* The senders' CC parameters: defaults, scaled for software, then --param. */
static int set_cc_params(struct demo_opts *o)
{
    struct demo_cfg *c = &o->c;
    if (!c->algo) return 0;
    fe_cc_params_default(&c->ccp, c->algo);
    if (is_connectx_dcqcn(c->algo) && scale_dcqcn(o)) return -1;
    for (int k = 0; k < o->n_params; k++) {
        char err[256];
        if (fe_cc_params_parse(&c->ccp, o->params[k], err, sizeof err)) {
            fprintf(stderr, "feroce demo: %s\n", err);
            return -1;
        }
    }
    return 0;
}

static void print_plan(const struct demo_cfg *c)
{
    printf("bottleneck %.2f Gb/s, queue %" PRIu64 " KiB, %s, %s, %u x %u-byte WRITE with "
           "immediate messages, MTU %u, %.0f s\n",
           (double)c->rate_bps / 1e9, c->queue / 1024,
           c->ecn ? "RED/ECN marking" : "no ECN marking", c->algo ? c->algo->name : "no CC",
           c->senders, c->msg_bytes, c->mtu, (double)c->duration_ns / 1e9);
    if (c->ecn)
        printf("RED: Kmin %" PRIu64 " KiB, Kmax %" PRIu64 " KiB, Pmax %.1f%%; replay window "
               "%" PRIu64 " KiB per sender\n",
               c->kmin / 1024, c->kmax / 1024, c->pmax_ppm / 1e4, c->replay / 1024);
    if (c->loss_ppm) printf("random loss at the bottleneck: %.2f%%\n", c->loss_ppm / 1e4);
    fflush(stdout);
}

static void print_json(const struct demo_cfg *c, const struct demo_res *r, bool ok)
{
    printf("{\"tool\":\"demo\",\"rate_bps\":%" PRIu64 ",\"senders\":%u,\"seconds\":%.6f,"
           "\"flows\":[",
           c->rate_bps, c->senders, r->seconds);
    for (unsigned i = 0; i < r->n; i++) {
        const struct flow_res *f = &r->f[i];
        printf("%s{\"gbps\":%.6f,\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"sent_msgs\":%" PRIu64
               ",\"posted\":%" PRIu64 ",\"retx_pkts\":%" PRIu64 ",\"timeouts\":%" PRIu64
               ",\"cnps\":%" PRIu64 ",\"ce_pkts\":%" PRIu64 ",\"verify_errors\":%" PRIu64
               ",\"seq_errors\":%" PRIu64 ",\"error\":%s}",
               i ? "," : "", f->gbps, f->msgs, f->bytes, f->sent_msgs, f->posted, f->retx,
               f->timeouts, f->cnps_rx, f->ce, f->verify_err, f->seq_err,
               f->error ? "true" : "false");
    }
    printf("],\"aggregate_gbps\":%.6f,\"jain\":%.6f,\"verified_bytes\":%" PRIu64
           ",\"errors\":%" PRIu64 ",\"lost_wrs\":%" PRIu64 ",\"retx_pkts\":%" PRIu64
           ",\"marked\":%" PRIu64 ",\"drops_full\":%" PRIu64 ",\"drops_loss\":%" PRIu64
           ",\"qmax_bytes\":%" PRIu64 ",\"qavg_bytes\":%" PRIu64 ",\"windows_bytes\":%" PRIu64
           ",\"qp_error\":%s,\"ok\":%s}\n",
           r->aggregate_gbps, r->jain, r->verified_bytes, r->errors, r->lost_wrs, r->retx,
           r->marked, r->drops_full, r->drops_loss, r->qmax, r->qavg, c->senders * c->replay,
           r->qp_error ? "true" : "false", ok ? "true" : "false");
}

static void print_text(const struct demo_cfg *c, const struct demo_res *r)
{
    double rate = (double)c->rate_bps;
    printf("\nper-flow average over the last %.1f s:\n", r->seconds);
    for (unsigned i = 0; i < r->n; i++)
        printf("  flow %u: %.3f Gb/s (%.1f%% of the bottleneck), %" PRIu64 " messages, %" PRIu64
               " CNPs, %" PRIu64 " retransmitted packets%s\n",
               i + 1, r->f[i].gbps, 100 * r->f[i].gbps * 1e9 / rate, r->f[i].msgs, r->f[i].cnps_rx,
               r->f[i].retx, r->f[i].error ? "  QP ERROR" : "");
    printf("Jain's fairness index: %.4f\n", r->jain);
    printf("aggregate: %.3f Gb/s = %.1f%% of the %.2f Gb/s bottleneck (payload; the rate "
           "counts headers too)\n",
           r->aggregate_gbps, 100 * r->aggregate_gbps * 1e9 / rate, rate / 1e9);
    printf("switch: %" PRIu64 " CE marks, %" PRIu64 " tail drops, %" PRIu64
           " injected losses, queue mean %" PRIu64 " KiB, max %" PRIu64
           " KiB (the senders' windows add up to %" PRIu64 " KiB)\n",
           r->marked, r->drops_full, r->drops_loss, r->qavg / 1024, r->qmax / 1024,
           c->senders * c->replay / 1024);
    printf("retransmissions: %" PRIu64 " packets; lost work requests: %" PRIu64 "\n", r->retx,
           r->lost_wrs);
    printf("data verified: %" PRIu64 " bytes, %" PRIu64 " errors\n", r->verified_bytes, r->errors);
}

#ifdef FE_HAVE_WEB
/* The run as the web view describes it; lives in run()'s frame until the server stops. */
static void describe_run(const struct demo_cfg *c, struct fe_web_run *r)
{
    memset(r, 0, sizeof *r);
    r->tool = "demo";
    snprintf(r->description, sizeof r->description,
             "%u front-ends -> emulated switch (%.2f Gb/s bottleneck, %s) -> 1 DAQ receiver, "
             "%s, %u-byte messages, MTU %u",
             c->senders, (double)c->rate_bps / 1e9, c->ecn ? "RED/ECN" : "no ECN",
             c->algo ? c->algo->name : "no CC", c->msg_bytes, c->mtu);
    r->rate_bps = c->rate_bps;
    r->kmin_bytes = c->kmin;
    r->kmax_bytes = c->kmax;
    r->queue_bytes = c->queue;
    r->n_flows = c->senders;
    r->ccp = c->algo ? &c->ccp : NULL;
}

static int start_web(struct demo_opts *o, struct fe_web_run *run)
{
    char err[256];
    describe_run(&o->c, run);
    run->writable = o->web_write;
    o->c.web = fe_web_start(o->web, run, err, sizeof err);
    if (!o->c.web) {
        fprintf(stderr, "feroce demo: %s\n", err);
        return -1;
    }
    uint32_t ip;
    uint16_t port;
    fe_web_parse_addr(o->web, &ip, &port);
    /* stderr: --json keeps stdout to the one JSON object */
    fprintf(stderr, "feroce demo: dashboard at http://%u.%u.%u.%u:%u/\n", ip >> 24,
            (ip >> 16) & 255, (ip >> 8) & 255, ip & 255, fe_web_port(o->c.web));
    return 0;
}

/* --web-hold: the final state stays up for a look (Ctrl-C ends it early). */
static void stop_web(struct demo_opts *o)
{
    if (!o->c.web) return;
    fe_web_hold("demo", o->web_hold_ns);
    fe_web_stop(o->c.web);
    o->c.web = NULL;
}
#endif

static int run(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* a demonstration of its own (eb_demo.c) */
        if (!strcmp(argv[i], "--event-building")) return fe_eb_demo_main(argc, argv);
    struct demo_opts o;
    if (parse_opts(argc, argv, &o)) return 2;
    struct demo_cfg *c = &o.c;
    fe_cli_catch_stop_signals();
    if (!o.base_given) pick_base(c);
    if (o.probe_only) return print_probe(c);
    if (o.talk)
        printf("feroce demo: %u front-ends -> emulated ECN switch -> 1 DAQ receiver, on loopback\n",
               c->senders);
    if (!c->rate_bps) measure_rate(&o);
    scale_to_rate(&o);
    if (set_cc_params(&o)) return 2;
    c->live = o.talk;
    if (o.talk) print_plan(c);
#ifdef FE_HAVE_WEB
    struct fe_web_run web_run;
    if (o.web && start_web(&o, &web_run)) return 2;
#endif
    struct demo_res r;
    int rc = run_incast(c, &r);
    bool ok = !rc && !r.errors && !r.qp_error && !r.lost_wrs;
    if (!rc && c->json)
        print_json(c, &r, ok);
    else if (!rc && !o.quiet)
        print_text(c, &r);
#ifdef FE_HAVE_WEB
    fflush(stdout);
    stop_web(&o);
#endif
    return ok ? 0 : 1;
}

const struct fe_cmd fe_cmd_demo = {
    "demo", "incast on loopback: 3 front-ends, ECN switch, DAQ receiver, DCQCN", usage, run};
