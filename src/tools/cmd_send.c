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
    "  --to ADDR[:PORT]        UDP: send data here (e.g. a feroce switch port), not to the peer\n"
    "side channel (front-end role):\n"
    "  --sc ADDR[:PORT]        listen here (0.0.0.0:17185; raw: our address, port 17185)\n"
    "  --autostart             stream when a QP is RTS, without waiting for a tx-meta start\n"
    "  --once                  exit when every opened QP has finished its stream or was closed\n"
    "  --allow CIDR[,CIDR...]  answer only hosts in these networks (repeatable; default any)\n"
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
    "  --retry N (7)  --rnr-retry N (7 = infinite)  --ackreq-every N (32)\n"
    "test hooks (interop): --drop-every N   --drop-psn P[,P...]   (data packets, on purpose)\n"
    "perftest: --perftest ADDR[:PORT]  be an ib_write_bw client of the server at ADDR (TCP\n"
    "                          18515; raw backend; --count/--duration, --msg-size, --peer-psn)\n"
    "process: --cpu N  --busy-poll  --interval TIME (1s, 0 = no live line)  --quiet  --json\n"
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

static int peer_opt(const char *val, void *p)
{
    struct fe_frontend_config *c = p;
    c->peer_port = FE_ROCEV2_UDP_PORT;
    return fe_io_parse_addr(val, &c->peer_ip, &c->peer_port);
}

/* A 64-bit address as strtoull reads it (0x.. too). */
static int va_opt(const char *val, void *p)
{
    char *end;
    errno = 0;
    *(uint64_t *)p = strtoull(val, &end, 0);
    return errno || *end ? -1 : 0;
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
        {FE_OPT_FN_("--allow", allow_opt, &c->sc), .flags = SAY},
        {FE_OPT_FN_("--peer", peer_opt, c), .flags = SAY},
        {FE_OPT_U32MAX_("--peer-qpn", c->peer_qpn, 0xFFFFFF), .seen = manual},
        {FE_OPT_U32MAX_("--peer-psn", c->peer_psn, 0xFFFFFF)},
        {FE_OPT_U32MAX_("--rkey", c->peer_rkey, UINT32_MAX)},
        {FE_OPT_FN_("--va", va_opt, &c->peer_va), .flags = SAY},
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
    struct cc_args cc = {0};
    bool manual = false;
    if (parse_table(argc, argv, o, &cc, &manual)) return -1;
    c->sc_enable = !manual;
    if (manual && !c->peer_ip) {
        fprintf(stderr, "feroce send: --peer-qpn needs --peer ADDR\n");
        return -1;
    }
    if (fe_io_opts_check("send", &c->ep)) return -1;
    return set_cc(o, &cc);
}

struct snap {
    uint64_t bytes, retx, samples, sum_ns, hist[32];
};

static void take(const struct fe_fe_flow *fl, struct snap *s)
{
    const struct fe_qp_counters *c = fe_qp_counters(fl->qp);
    s->bytes = fl->bytes_completed;
    s->retx = c->retx_pkts;
    s->samples = c->rtt_samples;
    s->sum_ns = c->rtt_sum_ns;
    memcpy(s->hist, c->rtt_hist, sizeof s->hist);
}

static void live_line(const struct fe_fe_flow *fl, const struct snap *prev, double dt_s, double t_s)
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

static int run(int argc, char **argv)
{
    struct opts o;
    memset(&o, 0, sizeof o);
    if (parse_opts(argc, argv, &o)) return 2;
    if (o.have_ccp) o.fc.qp.cc_params = &o.ccp;
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    lc.busy_poll = o.io.busy_poll;
    lc.cpu = o.io.cpu;
    int err;
    struct fe_loop *loop = fe_loop_create(&lc, &err);
    if (!loop) {
        fprintf(stderr, "feroce send: event loop: %s\n", fe_strerror(err));
        return 1;
    }
    struct fe_send_perftest pt;
    if (o.perftest &&
        (fe_send_perftest_parse(&pt, o.perftest) || fe_send_perftest_connect(&pt, &o.fc))) {
        fe_loop_destroy(loop);
        return 1;
    }
    char msg[256];
    uint64_t t0 = fe_io_now_ns();
    struct fe_frontend *f = fe_frontend_create(&o.fc, t0, &err, msg, sizeof msg);
    if (!f) {
        fprintf(stderr, "feroce send: %s\n", msg[0] ? msg : fe_strerror(err));
        fe_loop_destroy(loop);
        return 1;
    }
    int fds[4], nfd = fe_frontend_fds(f, fds, 4);
    for (int i = 0; i < nfd; i++) fe_loop_add(loop, fds[i], i);
    fe_cli_catch_stop_signals();
    if (!o.io.quiet && !o.io.json) {
        char a[32];
        uint32_t ip;
        uint16_t port;
        fe_ep_local(fe_frontend_ep(f), &ip, &port);
        if (o.fc.sc_enable)
            printf("feroce send: data %s, side channel %s, waiting for a host\n",
                   fe_io_addr_str(ip, port, a, sizeof a),
                   o.fc.ep.backend == FE_BACKEND_UDP ? "udp" : "raw");
        fflush(stdout);
    }
    struct snap prev[FE_FRONTEND_MAX_QPS];
    memset(prev, 0, sizeof prev);
    uint64_t next_tick = t0 + (o.io.interval_ns ? o.io.interval_ns : UINT64_MAX / 2),
             last_tick = t0;
    bool blocked = false, stopping = false;
    unsigned ready = FE_READY_ALL;
    uint64_t done_ns = 0;
    uint64_t stop_deadline = 0;
    for (;;) {
        uint64_t now = fe_io_now_ns();
        fe_frontend_step(f, now, ready);
        ready = 0;
        if (fe_cli_signals && !stopping) { /* first signal: finish in-flight messages, then exit */
            fe_frontend_stop(f, now);
            stopping = true;
            stop_deadline = now + 2000000000ull;
        }
        if (fe_cli_signals > 1 || (stopping && now > stop_deadline)) break;
        if (o.io.interval_ns && now >= next_tick && !o.io.quiet && !o.io.json) {
            double dt = (double)(now - last_tick) / 1e9;
            for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
                const struct fe_fe_flow *fl = fe_frontend_flow(f, i);
                if (!fl->used || !fl->qp) continue;
                live_line(fl, &prev[i], dt, (double)(now - t0) / 1e9);
                take(fl, &prev[i]);
            }
            fflush(stdout);
            last_tick = now;
            while (next_tick <= now) next_tick += o.io.interval_ns;
        }
        bool done = fe_frontend_done(f);
        if (done && !done_ns) done_ns = now;
        if (!done) done_ns = 0;
        /* --once: wait for the host's CLOSE_QP (it answers it), 2 s at most */
        if (done && (!o.fc.sc_enable || stopping ||
                     (o.once && (fe_sc_fe_open_count(fe_frontend_sc(f)) == 0 ||
                                 now > done_ns + 2000000000ull))))
            break;
        uint64_t dl = fe_frontend_next_deadline(f);
        if (o.io.interval_ns && next_tick < dl) dl = next_tick;
        if (stopping && stop_deadline < dl) dl = stop_deadline;
        bool b = fe_ep_tx_blocked(fe_frontend_ep(f));
        if (b != blocked) {
            fe_loop_want_write(loop, fds[0], 0, b);
            blocked = b;
        }
        int tags[4];
        int nt = fe_loop_wait(loop, b ? now + 1000000 : dl, tags, 4);
        for (int k = 0; k < nt; k++) ready |= 1u << tags[k];
    }
    uint64_t t1 = fe_io_now_ns();

    /* summary */
    int rc = 0;
    uint64_t tot_msgs = 0, tot_bytes = 0, tot_retx = 0;
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        const struct fe_fe_flow *fl = fe_frontend_flow(f, i);
        if (fl->used && fl->error && fl->fail_status == FE_WC_REM_ACCESS_ERR) {
            fprintf(stderr,
                    "feroce send: the receiver refused a WRITE outside its region: the\n"
                    "  ring must hold --slots x --msg-size; use the same --slots on both "
                    "sides (%u here)\n",
                    fl->stream.slots);
            break;
        }
    }
    if (o.io.json) printf("{\"tool\":\"send\",\"flows\":[");
    int k = 0;
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        const struct fe_fe_flow *fl = fe_frontend_flow(f, i);
        if (!fl->used) continue;
        const struct fe_qp_counters *c = fl->qp ? fe_qp_counters(fl->qp) : &fl->final;
        uint64_t end = fl->finished_ns ? fl->finished_ns : t1;
        double secs =
            fl->started_ns && end > fl->started_ns ? (double)(end - fl->started_ns) / 1e9 : 0;
        double gbps = secs > 0 ? (double)fl->bytes_completed * 8 / secs / 1e9 : 0;
        double mean_us = c->rtt_samples ? (double)c->rtt_sum_ns / (double)c->rtt_samples / 1e3 : 0;
        double p99_us = (double)fe_hist_quantile_ns(c->rtt_hist, NULL, 32, 0.99) / 1e3;
        if (fl->error) rc = 1;
        tot_msgs += fl->completed;
        tot_bytes += fl->bytes_completed;
        tot_retx += c->retx_pkts;
        if (o.io.json) {
            printf("%s{\"qpn\":%u,\"peer_qpn\":%u,\"msgs\":%" PRIu64 ",\"posted\":%" PRIu64
                   ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"gbps\":%.6f,\"tx_pkts\":%" PRIu64
                   ",\"retx_pkts\":%" PRIu64 ",\"timeouts\":%" PRIu64 ",\"rnr_naks\":%" PRIu64
                   ",\"seq_naks\":%" PRIu64 ",\"cnps\":%" PRIu64 ",\"dropped_on_purpose\":%" PRIu64
                   ",\"rtt_mean_us\":%.3f,\"rtt_p99_us\":%.3f,\"error\":%s,\"status\":\"%s\"}",
                   k++ ? "," : "", fl->qpn, fl->peer_qpn, fl->completed, fl->posted,
                   fl->bytes_completed, secs, gbps, c->tx_pkts, c->retx_pkts, c->timeouts,
                   c->rx_rnr_naks, c->rx_naks[FE_NAK_PSN_SEQ], c->rx_cnps, fl->dropped_on_purpose,
                   mean_us, p99_us, fl->error ? "true" : "false",
                   fl->error ? fe_wc_status_name(fl->fail_status) : "ok");
        } else if (!o.io.quiet || fl->error) {
            printf("qp %u -> %u: %" PRIu64 " messages, %.3f GB in %.3f s = %.3f Gb/s, %" PRIu64
                   " retransmitted packets (%" PRIu64 " timeouts, %" PRIu64 " RNR NAKs, %" PRIu64
                   " sequence NAKs), %" PRIu64 " CNPs, latency %.1f/%.1f us%s%s\n",
                   fl->qpn, fl->peer_qpn, fl->completed, (double)fl->bytes_completed / 1e9, secs,
                   gbps, c->retx_pkts, c->timeouts, c->rx_rnr_naks, c->rx_naks[FE_NAK_PSN_SEQ],
                   c->rx_cnps, mean_us, p99_us, fl->error ? ", FAILED: " : "",
                   fl->error ? fe_wc_status_name(fl->fail_status) : "");
        }
    }
    double secs = (double)(t1 - t0) / 1e9;
    const struct fe_sc_stats *ss = &fe_frontend_sc(f)->stats;
    const struct fe_ep_stats *es = fe_ep_stats(fe_frontend_ep(f));
    if (o.io.json) {
        printf("],\"total\":{\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"retx_pkts\":%" PRIu64
               ",\"seconds\":%.6f},\"refused\":{\"sc_source\":%" PRIu64
               ",\"sc_replies_limited\":%" PRIu64 ",\"data_source\":%" PRIu64
               ",\"data_no_qp\":%" PRIu64 "},\"ok\":%s}\n",
               tot_msgs, tot_bytes, tot_retx, secs, ss->rejected[FE_SC_R_SOURCE],
               ss->replies_limited, es->rx_refused_source, es->rx_no_qp, rc ? "false" : "true");
    } else if (!o.io.quiet) {
        printf("total: %" PRIu64 " messages, %.3f GB, %" PRIu64 " retransmitted packets\n",
               tot_msgs, (double)tot_bytes / 1e9, tot_retx);
        if (ss->rejected[FE_SC_R_SOURCE] || ss->replies_limited || es->rx_refused_source)
            printf("refused: side channel %" PRIu64 " (source), %" PRIu64
                   " replies over the rate; data %" PRIu64 " (not from the QP's peer)\n",
                   ss->rejected[FE_SC_R_SOURCE], ss->replies_limited, es->rx_refused_source);
    }
    if (o.perftest &&
        fe_send_perftest_finish(&pt, fe_frontend_flow(f, 0), t1, o.io.quiet || o.io.json))
        rc = 1;
    fe_frontend_destroy(f);
    fe_loop_destroy(loop);
    return rc;
}

const struct fe_cmd fe_cmd_send = {
    "send", "software front-end: stream RDMA WRITEs (side channel, any CCA)", usage, run};
