/* feroce send: a software front-end board. Serves the side channel as the FPGA does (or takes
 * its peer from the command line) and streams a data pattern as RDMA WRITE (with immediate)
 * through the feroce transport and congestion control, printing a live line per interval. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/cc.h"
#include "feroce/frontend.h"
#include "feroce/io.h"
#include "feroce/report.h"
#include "tools/cli.h"
#include "tools/eb_wire.h"
#include "tools/io_opts.h"
#include "tools/send_perftest.h"

static const char usage[] =
    "usage: feroce send [OPTIONS]\n"
    "A software front-end: answers the side channel (UDP 17185) like the Lite-RoCEv2 firmware and\n"
    "streams a data pattern as RDMA WRITE / WRITE with immediate (immediate = message number) on\n"
    "1..16 QPs, with any congestion control. Without --peer-qpn it waits for a host (feroce recv)\n"
    "to open QPs and send a tx-meta start; with --peer-qpn it connects by itself.\n"
    "\n"
    "data path:\n"
    "  --backend udp|raw       UDP socket (RoCEv2 from the BTH as payload) or raw Ethernet (udp)\n"
    "  --bind ADDR[:PORT]      UDP: data socket (0.0.0.0:4791); raw: our IPv4 address\n"
    "  --if IFNAME             raw: the interface; --mac MAC: our MAC (the interface's)\n"
    "  --raw-backend auto|packet|xdp   raw: AF_PACKET or AF_XDP; auto takes AF_XDP where it\n"
    "                          loses nothing (docs/io-raw.md) (auto)\n"
    "  --to ADDR[:PORT]        UDP: send data here (e.g. a feroce switch port), not to the peer\n"
    "side channel (front-end role):\n"
    "  --sc ADDR[:PORT]        listen here (0.0.0.0:17185; raw: our address, port 17185)\n"
    "  --autostart             stream when a QP is RTS, without waiting for a tx-meta start\n"
    "  --once                  exit when every opened QP has finished its stream or was closed\n"
    "  --allow CIDR[,CIDR...]  answer only hosts in these networks (repeatable; default any)\n"
    "  --sc-mode liberal|strict|firmware   how requests are read (liberal): liberal takes what\n"
    "                          host software written for the firmware sends (QP by its QPN alone,\n"
    "                          tx-meta start without MODIFY_QP_RTS); strict checks the host's\n"
    "                          address and QPN and wants RTS; firmware behaves as the Lite-RoCEv2\n"
    "                          board (RTS on OPEN, replies from port 34661, a pool of 4 QPs;\n"
    "                          docs/compatibility.md)\n"
    "manual peer (no side channel):\n"
    "  --peer ADDR[:PORT] --peer-qpn N [--peer-psn N] --rkey K --va V [--qpn N] [--qps N]\n"
    "                          QP i talks to peer QPN N+i, rkey K+i, VA V + i*slots*msg-size\n"
    "stream:\n"
    "  --op write|write-imm|send|send-imm   (write-imm)      --imm-every M  (1)\n"
    "  --msg-size SIZE (64K)  --count N (0 = until stopped)  --duration TIME  --gap TIME\n"
    "  --slots N (64): receiver ring slots    --pattern counter|frames (counter)\n"
    "transport and congestion control:\n"
    "  --mtu N (4096)  --cc NAME (none)  --param NAME=VALUE[,...] (repeatable)\n"
    "  --line-rate RATE (100Gbps)  --burst SIZE: pacer burst (64K)  --replay SIZE (2M)\n"
    "  --ack-timeout TIME (10ms: software peers on shared cores; the firmware uses less)\n"
    "  --ack-timeout-max TIME (1s): a timeout with no progress doubles the timer up to this\n"
    "                          before timeouts spend --retry (a slow receiver is not a loss;\n"
    "                          sequence NAKs still resend at once); = --ack-timeout: no backoff\n"
    "  --retry N (7)  --rnr-retry N (7 = infinite)  --ackreq-every N (32)\n"
    "test hooks (interop): --drop-every N   --drop-psn P[,P...]   (data packets, on purpose)\n"
    "perftest: --perftest ADDR[:PORT]  be an ib_write_bw client of the server at ADDR (TCP\n"
    "                          18515; raw backend; --count/--duration, --msg-size, --peer-psn)\n"
    "process: --cpu N  --busy-poll  --interval TIME (1s, 0 = no live line)  --quiet  --json\n"
    "event building: --eb-source ID --eb-builders M ...  a front-end writing each event's\n"
    "                          fragment to its builder (feroce send --eb-source 0 --eb-help)\n"
    "web: --web [ADDR:]PORT  live dashboard (docs/dashboard.md)  --web-hold TIME  --web-write\n"
    "\n"
    "Live line per QP: Gb/s (acknowledged payload), Rc Rt alpha (from the CC), retransmitted\n"
    "packets, PSN-to-ACK latency mean and p99. Exit status 0 when no QP failed.\n";

struct opts {
    struct fe_frontend_config fc;
    struct fe_cc_params ccp;
    bool have_ccp;
    struct fe_io_opts io;
    bool once;
    const char *perftest; /* ib_write_bw server */
};

/* --bind: the side channel listens where the data does unless --sc said otherwise */
static int bind_opt(const char *val, void *p)
{
    struct fe_frontend_config *c = p;
    if (fe_io_bind_opt(val, &c->ep)) return -1;
    if (!c->sc_bind_ip) c->sc_bind_ip = c->ep.raw.ip;
    return 0;
}

static int allow_opt(const char *val, void *p)
{
    struct fe_sc_fe_config *c = p;
    return fe_allow_parse(val, c->allow, &c->n_allow) ? -1 : 0;
}

static int to_opt(const char *val, void *p)
{
    struct fe_frontend_config *c = p;
    c->to_port = FE_ROCEV2_UDP_PORT;
    return fe_io_parse_addr(val, &c->to_ip, &c->to_port);
}

static int sc_opt(const char *val, void *p)
{
    struct fe_frontend_config *c = p;
    return fe_io_parse_addr(val, &c->sc_bind_ip, &c->sc_port);
}

static int sc_mode_opt(const char *val, void *p)
{
    struct fe_frontend_config *c = p;
    if (!strcmp(val, "liberal")) {
        c->sc.mode = FE_SC_FE_LIBERAL;
    } else if (!strcmp(val, "strict")) {
        c->sc.mode = FE_SC_FE_STRICT;
    } else if (!strcmp(val, "firmware")) {
        c->sc.mode = FE_SC_FE_FIRMWARE;
        c->sc.max_qps = FE_SC_FW_QPS;
        c->sc_reply_src_port = FE_SC_FW_REPLY_PORT;
    } else {
        return -1;
    }
    return 0;
}

static int peer_opt(const char *val, void *p)
{
    struct fe_frontend_config *c = p;
    c->peer_port = FE_ROCEV2_UDP_PORT;
    return fe_io_parse_addr(val, &c->peer_ip, &c->peer_port);
}

static int op_opt(const char *val, void *p)
{
    enum fe_wr_op *op = p;
    if (!strcmp(val, "write"))
        *op = FE_WR_WRITE;
    else if (!strcmp(val, "write-imm"))
        *op = FE_WR_WRITE_IMM;
    else if (!strcmp(val, "send"))
        *op = FE_WR_SEND;
    else if (!strcmp(val, "send-imm"))
        *op = FE_WR_SEND_IMM;
    else
        return -1;
    return 0;
}

static int pattern_opt(const char *val, void *p)
{
    return fe_data_pattern_parse(val, p);
}

static int cc_opt(const char *val, void *p)
{
    const struct fe_cc_algo **algo = p;
    *algo = fe_cc_find(val);
    if (!*algo) {
        fprintf(stderr, "feroce send: unknown congestion control '%s' (feroce cc lists them)\n",
                val);
        return -1;
    }
    return 0;
}

/* The CC's parameters as given; the algorithm is known only once every option is read. */
struct cc_args {
    const struct fe_cc_algo *algo;
    const char *params[16];
    int n_params;
};

static int param_opt(const char *val, void *p)
{
    struct cc_args *a = p;
    if (a->n_params < 16) a->params[a->n_params++] = val;
    return 0;
}

static int drop_psn_opt(const char *val, void *p)
{
    struct fe_frontend_config *c = p;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", val);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (c->n_drop_psn >= 32) {
            fprintf(stderr, "feroce send: at most 32 PSNs to drop\n");
            return -1;
        }
        if (fe_parse_u32_max(t, &c->drop_psn[c->n_drop_psn++], "--drop-psn", 0xFFFFFF)) return -1;
    }
    return 0;
}

/* The algorithm with --param applied, after the options. */
static int set_cc(struct opts *o, const struct cc_args *a)
{
    if (!a->algo) {
        if (!a->n_params) return 0;
        fprintf(stderr, "feroce send: --param needs --cc\n");
        return -1;
    }
    fe_cc_params_default(&o->ccp, a->algo);
    for (int k = 0; k < a->n_params; k++) {
        char err[256];
        if (fe_cc_params_parse(&o->ccp, a->params[k], err, sizeof err)) {
            fprintf(stderr, "feroce send: %s\n", err);
            return -1;
        }
    }
    o->have_ccp = true;
    o->fc.qp.cc_algo = a->algo;
    return 0;
}

#define SAY FE_OPT_SAY_INVALID

static int parse_table(int argc, char **argv, struct opts *o, struct cc_args *cc, bool *manual)
{
    struct fe_frontend_config *c = &o->fc;
    struct fe_stream_config *st = &c->stream;
    const struct fe_opt opts[] = {
        {FE_OPT_FN_("--bind", bind_opt, c), .flags = SAY},
        {FE_OPT_FN_("--to", to_opt, c), .flags = SAY},
        {FE_OPT_FN_("--sc", sc_opt, c), .flags = SAY},
        {FE_OPT_FLAG_("--autostart", c->autostart)},
        {FE_OPT_FLAG_("--once", o->once)},
        {FE_OPT_FN_("--sc-mode", sc_mode_opt, c), .flags = SAY},
        {FE_OPT_FN_("--allow", allow_opt, &c->sc), .flags = SAY},
        {FE_OPT_FN_("--peer", peer_opt, c), .flags = SAY},
        {FE_OPT_U32MAX_("--peer-qpn", c->peer_qpn, 0xFFFFFF), .seen = manual},
        {FE_OPT_U32MAX_("--peer-psn", c->peer_psn, 0xFFFFFF)},
        {FE_OPT_U32MAX_("--rkey", c->peer_rkey, UINT32_MAX)},
        {FE_OPT_FN_("--va", fe_cli_u64_opt, &c->peer_va), .flags = SAY},
        {FE_OPT_U32MAX_("--qpn", c->local_qpn, 0xFFFFFF)},
        {FE_OPT_U32MAX_("--qps", c->n_qps, FE_FRONTEND_MAX_QPS)},
        {FE_OPT_FN_("--op", op_opt, &st->op), .flags = SAY},
        {FE_OPT_U32MAX_("--imm-every", st->imm_every, UINT32_MAX)},
        {FE_OPT_SIZE_("--msg-size", st->msg_bytes), .min = 1, .max = 64u << 20, .flags = SAY},
        {FE_OPT_UINT_("--count", st->count)},
        {FE_OPT_TIME_("--duration", c->duration_ns)},
        {FE_OPT_TIME_("--gap", st->gap_ns)},
        {FE_OPT_U32MAX_("--slots", st->slots, 1u << 24), .min = 1, .flags = SAY},
        {FE_OPT_FN_("--pattern", pattern_opt, &st->pattern), .flags = SAY},
        {FE_OPT_FN_("--cc", cc_opt, &cc->algo)},
        {FE_OPT_FN_("--param", param_opt, cc)},
        {FE_OPT_RATE_("--line-rate", c->qp.line_rate_bps)},
        {FE_OPT_SIZE_("--replay", c->qp.replay_bytes)},
        {FE_OPT_SIZE_("--burst", c->qp.pacer_burst_bytes)},
        {FE_OPT_TIME_("--ack-timeout", c->qp.ack_timeout_ns)},
        {FE_OPT_TIME_("--ack-timeout-max", c->qp.ack_timeout_max_ns)},
        {FE_OPT_U32MAX_("--retry", c->qp.retry_cnt, 7)},
        {FE_OPT_U32MAX_("--rnr-retry", c->qp.rnr_retry, 7)},
        {FE_OPT_U32MAX_("--ackreq-every", c->qp.ackreq_every, 65535)},
        {FE_OPT_UINT_("--drop-every", c->drop_every)},
        {FE_OPT_FN_("--drop-psn", drop_psn_opt, c)},
        {FE_OPT_STR_("--perftest", o->perftest)},
        {0},
    };
    struct fe_opt shared[FE_IO_OPTS_N + 1];
    fe_io_opts_table(shared, &o->io, &c->ep, &c->qp.mtu_bytes);
    const struct fe_opt *const tables[] = {opts, shared, NULL};
    const struct fe_cli cli = {.cmd = "send", .tables = tables};
    return fe_cli_parse(&cli, argc, argv) < 0 ? -1 : 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    struct fe_frontend_config *c = &o->fc;
    fe_frontend_config_default(c);
    c->ep.udp.bind_ip = 0;
    fe_io_opts_default(&o->io);
    /* Software on shared cores: timer wake-ups are coarse, so the pacer releases bursts, and
     * scheduling hiccups of milliseconds must not look like losses. */
    c->qp.pacer_burst_bytes = 65536;
    c->qp.ack_timeout_ns = 10000000ull;
    c->qp.ack_timeout_max_ns = 1000000000ull;
    struct cc_args cc = {0};
    bool manual = false;
    if (parse_table(argc, argv, o, &cc, &manual)) return -1;
    c->sc_enable = !manual;
    if (manual && !c->peer_ip) {
        fprintf(stderr, "feroce send: --peer-qpn needs --peer ADDR\n");
        return -1;
    }
    if (fe_io_opts_check("send", &c->ep)) return -1;
    /* a timer set above the backoff ceiling: no backoff */
    if (c->qp.ack_timeout_max_ns < c->qp.ack_timeout_ns)
        c->qp.ack_timeout_max_ns = c->qp.ack_timeout_ns;
    return set_cc(o, &cc);
}

struct snap {
    uint64_t bytes, retx, samples, sum_ns, hist[32];
};

static void take(const struct fe_frontend_flow *fl, struct snap *s)
{
    const struct fe_qp_counters *c = fe_qp_counters(fl->qp);
    s->bytes = fl->bytes_completed;
    s->retx = c->retx_pkts;
    s->samples = c->rtt_samples;
    s->sum_ns = c->rtt_sum_ns;
    memcpy(s->hist, c->rtt_hist, sizeof s->hist);
}

static void live_line(const struct fe_frontend_flow *fl, const struct snap *prev, double dt_s,
                      double t_s)
{
    struct snap now;
    take(fl, &now);
    struct fe_cc_view v;
    fe_cc_view_of(fe_qp_cc(fl->qp), &v);
    double gbps = (double)(now.bytes - prev->bytes) * 8 / dt_s / 1e9;
    uint64_t ns = now.samples - prev->samples;
    double mean_us = ns ? (double)(now.sum_ns - prev->sum_ns) / (double)ns / 1e3 : 0;
    double p99_us = (double)fe_hist_quantile_ns(now.hist, prev->hist, 32, 0.99) / 1e3;
    printf("%7.1fs qp %-5u %7.3f Gb/s", t_s, fl->qpn, gbps);
    if (v.has_rc) printf("  Rc %7.3f Rt %7.3f Gb/s", v.rc_bps / 1e9, v.rt_bps / 1e9);
    if (v.has_alpha) printf("  alpha %.3f", v.alpha);
    printf("  retx %" PRIu64 "  lat %.1f/%.1f us (mean/p99)  msgs %" PRIu64 "%s\n",
           now.retx - prev->retx, mean_us, p99_us, fl->completed,
           fl->error      ? "  ERROR"
           : fl->finished ? "  done"
                          : "");
}

/* A sender being run: the options, the engine, the loop and the live line's snapshots. */
struct send_run {
    struct opts o;
    struct fe_loop *loop;
    struct fe_frontend *f;
    struct fe_send_perftest pt;
    int data_fd;
    uint64_t t0, t1;
    struct snap prev[FE_FRONTEND_MAX_QPS];
    uint64_t next_tick, last_tick;
    bool blocked, stopping;
    uint64_t done_ns, stop_deadline;
};

static void print_banner(const struct send_run *r)
{
    char a[32];
    uint32_t ip;
    uint16_t port;
    fe_ep_local(fe_frontend_ep(r->f), &ip, &port);
    if (r->o.fc.sc_enable)
        printf("feroce send: data %s, side channel %s, waiting for a host\n",
               fe_io_addr_str(ip, port, a, sizeof a),
               r->o.fc.ep.backend == FE_BACKEND_UDP ? "udp" : "raw");
    fflush(stdout);
}

/* The event loop, the perftest connection when asked for, and the front-end. */
static int setup_sender(struct send_run *r)
{
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    lc.busy_poll = r->o.io.busy_poll;
    lc.cpu = r->o.io.cpu;
    int err;
    r->loop = fe_loop_create(&lc, &err);
    if (!r->loop) {
        fprintf(stderr, "feroce send: event loop: %s\n", fe_io_fail_str(err));
        return -1;
    }
    if (r->o.perftest && (fe_send_perftest_parse(&r->pt, r->o.perftest) ||
                          fe_send_perftest_connect(&r->pt, &r->o.fc)))
        return -1;
    char msg[256];
    r->t0 = fe_io_now_ns();
    r->f = fe_frontend_create(&r->o.fc, r->t0, &err, msg, sizeof msg);
    if (!r->f) {
        fprintf(stderr, "feroce send: %s\n", msg[0] ? msg : fe_io_fail_str(err));
        return -1;
    }
    int fds[4], nfd = fe_frontend_fds(r->f, fds, 4);
    for (int i = 0; i < nfd; i++) fe_loop_add(r->loop, fds[i], i);
    r->data_fd = fds[0];
    fe_cli_catch_stop_signals();
    if (!r->o.io.quiet && !r->o.io.json) print_banner(r);
    if (fe_web_io_send(&r->o.io.web, r->f, &r->o.fc)) return -1;
    uint64_t interval = r->o.io.interval_ns;
    r->next_tick = r->t0 + (interval ? interval : UINT64_MAX / 2);
    r->last_tick = r->t0;
    return 0;
}

static void print_live(struct send_run *r, uint64_t now)
{
    double dt = (double)(now - r->last_tick) / 1e9;
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        const struct fe_frontend_flow *fl = fe_frontend_flow(r->f, i);
        if (!fl->used || !fl->qp) continue;
        live_line(fl, &r->prev[i], dt, (double)(now - r->t0) / 1e9);
        take(fl, &r->prev[i]);
    }
    fflush(stdout);
    r->last_tick = now;
    while (r->next_tick <= now) r->next_tick += r->o.io.interval_ns;
}

/* Every stream is done and there is no reason to wait: no side channel, a stop was asked
 * for, or --once and the host closed its QPs (it answers CLOSE_QP; 2 s at most). */
static bool finished(struct send_run *r, uint64_t now)
{
    bool done = fe_frontend_done(r->f);
    if (done && !r->done_ns) r->done_ns = now;
    if (!done) r->done_ns = 0;
    return done && (!r->o.fc.sc_enable || r->stopping ||
                    (r->o.once && (fe_sc_fe_open_count(fe_frontend_sc(r->f)) == 0 ||
                                   now > r->done_ns + 2000000000ull)));
}

/* Sleeps until the engine's deadline or the next live line; 1 ms while the socket is full. */
static unsigned wait_events(struct send_run *r, uint64_t now)
{
    uint64_t dl = fe_frontend_next_deadline(r->f);
    if (r->o.io.interval_ns && r->next_tick < dl) dl = r->next_tick;
    if (r->stopping && r->stop_deadline < dl) dl = r->stop_deadline;
    dl = fe_web_io_deadline(&r->o.io.web, dl);
    return fe_io_wait(r->loop, fe_frontend_ep(r->f), r->data_fd, &r->blocked, now, dl);
}

static void run_loop(struct send_run *r)
{
    unsigned ready = FE_READY_ALL;
    for (;;) {
        uint64_t now = fe_io_now_ns();
        fe_frontend_step(r->f, now, ready);
        if (fe_cli_signals && !r->stopping) { /* first signal: finish in-flight messages */
            fe_frontend_stop(r->f, now);
            r->stopping = true;
            r->stop_deadline = now + 2000000000ull;
        }
        if (fe_cli_signals > 1 || (r->stopping && now > r->stop_deadline)) break;
        if (r->o.io.interval_ns && now >= r->next_tick && !r->o.io.quiet && !r->o.io.json)
            print_live(r, now);
        fe_web_io_step(&r->o.io.web, now);
        if (finished(r, now)) break;
        ready = wait_events(r, now);
    }
    r->t1 = fe_io_now_ns();
}

/* A WRITE outside the receiver's region means the two sides disagree on the ring. */
static void explain_access_error(const struct send_run *r)
{
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        const struct fe_frontend_flow *fl = fe_frontend_flow(r->f, i);
        if (fl->used && fl->error && fl->fail_status == FE_WC_REM_ACCESS_ERR) {
            fprintf(stderr,
                    "feroce send: the receiver refused a WRITE outside its region: the\n"
                    "  ring must hold --slots x --msg-size; use the same --slots on both "
                    "sides (%u here)\n",
                    fl->stream.slots);
            return;
        }
    }
}

struct send_totals {
    uint64_t msgs, bytes, retx;
    int k; /* flows printed */
};

/* One flow's result, as a JSON object or a line; 1 when it failed. */
static int print_flow(const struct send_run *r, const struct fe_frontend_flow *fl,
                      struct send_totals *t)
{
    const struct fe_qp_counters *c = fl->qp ? fe_qp_counters(fl->qp) : &fl->final;
    uint64_t end = fl->finished_ns ? fl->finished_ns : r->t1;
    double secs = fl->started_ns && end > fl->started_ns ? (double)(end - fl->started_ns) / 1e9 : 0;
    double gbps = secs > 0 ? (double)fl->bytes_completed * 8 / secs / 1e9 : 0;
    double mean_us = c->rtt_samples ? (double)c->rtt_sum_ns / (double)c->rtt_samples / 1e3 : 0;
    double p99_us = (double)fe_hist_quantile_ns(c->rtt_hist, NULL, 32, 0.99) / 1e3;
    t->msgs += fl->completed;
    t->bytes += fl->bytes_completed;
    t->retx += c->retx_pkts;
    const char *status = fl->error ? fe_wc_status_name(fl->fail_status) : "ok";
    if (r->o.io.json) {
        printf("%s{\"qpn\":%u,\"peer_qpn\":%u,\"msgs\":%" PRIu64 ",\"posted\":%" PRIu64
               ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"gbps\":%.6f,\"tx_pkts\":%" PRIu64
               ",\"retx_pkts\":%" PRIu64 ",\"timeouts\":%" PRIu64 ",\"timeout_backoffs\":%" PRIu64
               ",\"rnr_naks\":%" PRIu64 ",\"seq_naks\":%" PRIu64 ",\"cnps\":%" PRIu64
               ",\"dropped_on_purpose\":%" PRIu64
               ",\"rtt_mean_us\":%.3f,\"rtt_p99_us\":%.3f,\"error\":%s,\"status\":\"%s\"}",
               t->k++ ? "," : "", fl->qpn, fl->peer_qpn, fl->completed, fl->posted,
               fl->bytes_completed, secs, gbps, c->tx_pkts, c->retx_pkts, c->timeouts,
               c->timeout_backoffs, c->rx_rnr_naks, c->rx_naks[FE_NAK_PSN_SEQ], c->rx_cnps,
               fl->dropped_on_purpose, mean_us, p99_us, fl->error ? "true" : "false", status);
    } else if (!r->o.io.quiet || fl->error) {
        printf("qp %u -> %u: %" PRIu64 " messages, %.3f GB in %.3f s = %.3f Gb/s, %" PRIu64
               " retransmitted packets (%" PRIu64 " timeouts, %" PRIu64 " RNR NAKs, %" PRIu64
               " sequence NAKs), %" PRIu64 " CNPs, latency %.1f/%.1f us%s%s\n",
               fl->qpn, fl->peer_qpn, fl->completed, (double)fl->bytes_completed / 1e9, secs, gbps,
               c->retx_pkts, c->timeouts, c->rx_rnr_naks, c->rx_naks[FE_NAK_PSN_SEQ], c->rx_cnps,
               mean_us, p99_us, fl->error ? ", FAILED: " : "", fl->error ? status : "");
    }
    return fl->error ? 1 : 0;
}

/* Every flow's result and the totals: 0 when no QP failed. */
static int print_summary(const struct send_run *r)
{
    int rc = 0;
    struct send_totals t = {0};
    explain_access_error(r);
    if (r->o.io.json) printf("{\"tool\":\"send\",\"flows\":[");
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        const struct fe_frontend_flow *fl = fe_frontend_flow(r->f, i);
        if (fl->used && print_flow(r, fl, &t)) rc = 1;
    }
    double secs = (double)(r->t1 - r->t0) / 1e9;
    const struct fe_sc_stats *ss = &fe_frontend_sc(r->f)->stats;
    const struct fe_ep_stats *es = fe_ep_stats(fe_frontend_ep(r->f));
    if (r->o.io.json) {
        printf("],\"total\":{\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"retx_pkts\":%" PRIu64
               ",\"seconds\":%.6f},\"refused\":{\"sc_source\":%" PRIu64
               ",\"sc_replies_limited\":%" PRIu64 ",\"data_source\":%" PRIu64
               ",\"data_no_qp\":%" PRIu64 "},",
               t.msgs, t.bytes, t.retx, secs, ss->rejected[FE_SC_R_SOURCE], ss->replies_limited,
               es->rx_refused_source, es->rx_no_qp);
        fe_io_print_raw(fe_frontend_ep(r->f), true);
        printf("\"ok\":%s}\n", rc ? "false" : "true");
    } else if (!r->o.io.quiet) {
        printf("total: %" PRIu64 " messages, %.3f GB, %" PRIu64 " retransmitted packets\n", t.msgs,
               (double)t.bytes / 1e9, t.retx);
        if (ss->rejected[FE_SC_R_SOURCE] || ss->replies_limited || es->rx_refused_source)
            printf("refused: side channel %" PRIu64 " (source), %" PRIu64
                   " replies over the rate; data %" PRIu64 " (not from the QP's peer)\n",
                   ss->rejected[FE_SC_R_SOURCE], ss->replies_limited, es->rx_refused_source);
        fe_io_print_raw(fe_frontend_ep(r->f), false);
    }
    return rc;
}

static int run(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* event building: a mode of its own (eb_send.c) */
        if (!strcmp(argv[i], "--eb-source")) return fe_eb_send_main(argc, argv);
    struct send_run r;
    memset(&r, 0, sizeof r);
    if (parse_opts(argc, argv, &r.o)) return 2;
    if (r.o.have_ccp) r.o.fc.qp.cc_params = &r.o.ccp;
    int rc = 1;
    if (!setup_sender(&r)) {
        run_loop(&r);
        rc = print_summary(&r);
        fe_web_io_finish(&r.o.io.web, "send");
        if (r.o.perftest && fe_send_perftest_finish(&r.pt, fe_frontend_flow(r.f, 0), r.t1,
                                                    r.o.io.quiet || r.o.io.json))
            rc = 1;
    }
    fe_frontend_destroy(r.f);
    fe_loop_destroy(r.loop);
    return rc;
}

const struct fe_cmd fe_cmd_send = {
    "send",
    "software front-end: stream RDMA WRITEs (side channel, any CCA; --eb-source: event building)",
    usage, run};
