/* feroce recv: a software DAQ receiver. Opens QPs on front-ends through the side channel (host
 * role), registers a ring per QP, consumes, verifies and optionally records every message, and
 * lets a slow consumer push back on the senders through RNR NAKs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feroce/daq.h"
#include "feroce/io.h"
#include "tools/cli.h"
#include "tools/io_opts.h"
#include "tools/recv_perftest.h"

static const char usage[] =
    "usage: feroce recv [OPTIONS] --fe ADDR[:PORT][,qps=N] ...\n"
    "A software DAQ receiver: opens QPs on one or more front-ends over the side channel (feroce\n"
    "send, or Lite-RoCEv2 firmware), registers a ring of slots per QP and asks for a stream\n"
    "(tx-meta). Each WRITE with immediate lands in slot (seq mod slots); its receive buffer is\n"
    "given back only when the consumer has taken it, so a slow consumer makes senders back off\n"
    "through RNR NAKs without loss. Every message is verified byte for byte (counter or frames\n"
    "pattern); CE-marked packets are answered with CNPs.\n"
    "\n"
    "  --fe ADDR[:PORT][,qps=N]  a front-end's side channel (port 17185), N QPs on it (1);\n"
    "                          repeatable\n"
    "  --manual N --peer ADDR[:PORT] --peer-qpn Q   no side channel: N QPs for a sender started\n"
    "                          with --peer-qpn (our QPNs), its QPNs Q, Q+1, ...\n"
    "data path:\n"
    "  --backend udp|raw       (udp)\n"
    "  --bind ADDR[:PORT]      UDP: data socket (127.0.0.1:4791); raw: our IPv4 address\n"
    "  --if IFNAME  --mac MAC  raw backend\n"
    "  --raw-backend auto|packet|xdp   raw: AF_PACKET or AF_XDP (auto, docs/io-raw.md)\n"
    "  --sc-port PORT          our side-channel reply port (17186)\n"
    "  --allow CIDR[,CIDR...]  take side-channel replies and data only from these networks\n"
    "                          (repeatable; default any). Data for a QP is taken only from its\n"
    "                          peer's IP in any case (a switch in between: the first sender of\n"
    "                          an executed packet)\n"
    "our QPs: --qpn N (17)  --va V (0x100000000)  --psn N  --rkey K: the first PSN and the rkey\n"
    "         (+ i for QP i); without them each QP's PSN and each ring's rkey are random, new\n"
    "         every run (--json reports them; --manual prints them for the sender)\n"
    "stream asked for: --slots N (64)  --msg-size SIZE (64K)  --count N (0 = until --duration)\n"
    "                  --op write|write-imm (write-imm)  --gap TIME\n"
    "                  --imm-every M (1): the sender's doorbell period (feroce send --imm-every);\n"
    "                  an immediate completes every message up to it; needs --slots >= 2 M\n"
    "consumer: --consume-rate RATE (e.g. 500Mbps; default unlimited)  --no-verify  --record FILE\n"
    "transport: --mtu N (4096)  --no-cnp  --cnp-interval TIME (4us)  --ack-every N (32)\n"
    "           --rnr-timer CODE: IB RNR timer code in RNR NAKs (12 = 0.64 ms)\n"
    "front-ends that restart: --reconnect TIME  a streaming QP that received nothing for this\n"
    "     long is closed on its front-end and opened again until the front-end answers; the new\n"
    "     connection streams the messages still missing (default: never)\n"
    "run: --duration TIME  --timeout TIME (give up; 60s)  --cpu N  --busy-poll\n"
    "     --warmup TIME: per-flow Gb/s counts from then until the stop (steady state only)\n"
    "     --drain TIME: after asking the senders to stop, wait until nothing arrived for this\n"
    "     long (in-flight messages and their retransmissions), then close (1s)\n"
    "     --interval TIME (1s, 0 = no live line)  --quiet  --json\n"
    "web: --web [ADDR:]PORT  live dashboard (docs/dashboard.md)  --web-hold TIME\n"
    "perftest: --perftest-server  be an ib_write_bw server (raw backend): a client on an RDMA\n"
    "     NIC writes --msg-size messages into our ring; ends with its report (docs/perftest.md)\n"
    "     --perftest-listen ADDR[:PORT]: the exchange's TCP address, a kernel address of this\n"
    "     host (default: --bind, port 18515)\n"
    "\n"
    "Exit status 0 when every expected message arrived exactly once and verified.\n";

struct opts {
    struct fe_daq_config dc;
    uint64_t duration_ns, timeout_ns, warmup_ns, drain_ns;
    struct fe_io_opts io;
    const char *record;
    struct fe_recv_perftest pt;
    bool psn_given, rkey_given;
};

/* --fe ADDR[:PORT][,qps=N] */
static int frontend_opt(const char *val, void *p)
{
    struct fe_daq_config *c = p;
    if (c->n_fe >= FE_DAQ_MAX_FE) {
        fprintf(stderr, "feroce recv: at most %d front-ends\n", FE_DAQ_MAX_FE);
        return -1;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "%s", val);
    struct fe_daq_frontend *fe = &c->fe[c->n_fe];
    fe->qps = 1;
    fe->port = 17185;
    char *comma = strchr(buf, ',');
    if (comma) {
        *comma = 0;
        if (strncmp(comma + 1, "qps=", 4) || fe_parse_u32_max(comma + 5, &fe->qps, "qps", 16) ||
            !fe->qps)
            goto bad;
    }
    if (fe_io_parse_addr(buf, &fe->ip, &fe->port)) goto bad;
    c->n_fe++;
    return 0;
bad:
    fprintf(stderr, "feroce recv: invalid value for --fe: '%s'\n", val);
    return -1;
}

static int allow_opt(const char *val, void *p)
{
    struct fe_ep_config *c = p;
    return fe_allow_parse(val, c->allow, &c->n_allow) ? -1 : 0;
}

static int peer_opt(const char *val, void *p)
{
    struct fe_daq_config *c = p;
    c->manual_peer_port = 4791;
    return fe_io_parse_addr(val, &c->manual_peer_ip, &c->manual_peer_port);
}

static int op_opt(const char *val, void *p)
{
    bool *imm = p;
    if (!strcmp(val, "write"))
        *imm = false;
    else if (!strcmp(val, "write-imm"))
        *imm = true;
    else
        return -1;
    return 0;
}

/* bit/s in, bytes/s out: a rate below 8 bit/s still limits */
static int consume_rate_opt(const char *val, void *p)
{
    uint64_t v, *Bps = p;
    if (fe_parse_rate_bps(val, &v, "--consume-rate")) return -1;
    *Bps = v / 8;
    if (v && !*Bps) *Bps = 1;
    return 0;
}

/* The TCP address of the exchange: the kernel's, where --bind is the raw endpoint's own. */
static int perftest_listen_opt(const char *val, void *p)
{
    struct fe_recv_perftest *pt = p;
    return fe_io_parse_addr(val, &pt->listen_ip, &pt->port);
}

#define SAY FE_OPT_SAY_INVALID

static int parse_table(int argc, char **argv, struct opts *o)
{
    struct fe_daq_config *c = &o->dc;
    const struct fe_opt opts[] = {
        {FE_OPT_FN_("--fe", frontend_opt, c)},
        {FE_OPT_U32MAX_("--manual", c->n_manual, FE_DAQ_MAX_FLOWS)},
        {FE_OPT_FN_("--peer", peer_opt, c), .flags = SAY},
        {FE_OPT_U32MAX_("--peer-qpn", c->manual_peer_qpn, 0xFFFFFF)},
        {FE_OPT_FN_("--allow", allow_opt, &c->ep), .flags = SAY},
        {FE_OPT_U32MAX_("--sc-port", c->sc_reply_port, 65535), .min = 1, .flags = SAY},
        {FE_OPT_U32MAX_("--qpn", c->local_qpn, 0xFFFFFF)},
        {FE_OPT_U32MAX_("--psn", c->psn, 0xFFFFFF), .seen = &o->psn_given},
        {FE_OPT_U32MAX_("--rkey", c->rkey, UINT32_MAX), .seen = &o->rkey_given},
        {FE_OPT_FN_("--va", fe_cli_u64_opt, &c->va), .flags = SAY},
        {FE_OPT_U32MAX_("--slots", c->slots, 1u << 20), .min = 2, .flags = SAY},
        {FE_OPT_SIZE_("--msg-size", c->msg_bytes), .min = 1, .max = 64u << 20, .flags = SAY},
        {FE_OPT_UINT_("--count", c->count)},
        {FE_OPT_FN_("--op", op_opt, &c->imm), .flags = SAY},
        {FE_OPT_U32MAX_("--imm-every", c->imm_every, 1u << 19), .min = 1, .flags = SAY},
        {FE_OPT_TIME_("--gap", c->gap_ns)},
        {FE_OPT_TIME_("--reconnect", c->reconnect_ns)},
        {FE_OPT_FN_("--consume-rate", consume_rate_opt, &c->consume_Bps)},
        {FE_OPT_CLEAR_("--no-verify", c->verify)},
        {FE_OPT_STR_("--record", o->record)},
        {FE_OPT_CLEAR_("--no-cnp", c->qp.np_enable)},
        {FE_OPT_TIME_("--cnp-interval", c->qp.cnp_interval_ns)},
        {FE_OPT_U32MAX_("--rnr-timer", c->qp.min_rnr_timer, 31)},
        {FE_OPT_U32MAX_("--ack-every", c->qp.ack_every, 65535), .min = 1, .flags = SAY},
        {FE_OPT_TIME_("--duration", o->duration_ns)},
        {FE_OPT_TIME_("--drain", o->drain_ns)},
        {FE_OPT_TIME_("--warmup", o->warmup_ns)},
        {FE_OPT_TIME_("--timeout", o->timeout_ns)},
        {FE_OPT_FLAG_("--perftest-server", o->pt.enabled)},
        {FE_OPT_FN_("--perftest-listen", perftest_listen_opt, &o->pt), .flags = SAY},
        {0},
    };
    struct fe_opt shared[FE_IO_OPTS_N + 1];
    fe_io_opts_table(shared, &o->io, &c->ep, &c->qp.mtu_bytes);
    const struct fe_opt *const tables[] = {opts, shared, NULL};
    const struct fe_cli cli = {.cmd = "recv", .tables = tables};
    return fe_cli_parse(&cli, argc, argv) < 0 ? -1 : 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    struct fe_daq_config *c = &o->dc;
    fe_daq_config_default(c);
    c->ep.udp.bind_ip = 0x7F000001;
    /* RNR NAKs ask senders to wait 0.64 ms (IB code 12): a consumer that is behind frees a slot
     * in about that time at DAQ rates, and senders do not spin on 10 us retries */
    c->qp.min_rnr_timer = 12;
    fe_io_opts_default(&o->io);
    o->timeout_ns = 60000000000ull;
    o->drain_ns = 1000000000ull;
    o->pt.port = FE_PT_PORT;
    if (parse_table(argc, argv, o)) return -1;
    if (o->pt.enabled) return fe_io_opts_check("recv", &c->ep) ? -1 : 0;
    if (!c->n_fe && !c->n_manual) {
        fprintf(stderr, "feroce recv: name a front-end with --fe ADDR (or use --manual N)\n");
        return -1;
    }
    if (c->n_manual && (!c->manual_peer_ip || c->n_fe)) {
        fprintf(stderr, "feroce recv: --manual needs --peer ADDR and no --fe\n");
        return -1;
    }
    if (fe_io_opts_check("recv", &c->ep)) return -1;
    c->random_psn = !o->psn_given;
    c->random_rkey = !o->rkey_given;
    /* an endless stream (no --count, no --duration) is fine: stop it with Ctrl-C */
    c->local_ip = c->ep.backend == FE_BACKEND_UDP ? c->ep.udp.bind_ip : c->ep.raw.ip;
    return 0;
}

static void live(const struct fe_daq *d, const uint64_t *prev_bytes, double dt, double t)
{
    for (unsigned i = 0; i < fe_daq_n_flows(d); i++) {
        const struct fe_daq_flow *fl = fe_daq_flow(d, i);
        uint64_t bytes = fl->bytes;
        uint64_t cnp = fl->qp ? fe_qp_counters(fl->qp)->tx_cnps : 0;
        uint64_t rnr = fl->qp ? fe_qp_counters(fl->qp)->tx_rnr_naks : 0;
        uint64_t wire = fl->qp ? fe_qp_counters(fl->qp)->rx_bytes : 0;
        printf("%7.1fs qp %-4u <- %-5u %7.3f Gb/s  msgs %" PRIu64 "  queued %" PRIu64
               "  placed %.3f GB  CNPs %" PRIu64 "  RNR NAKs %" PRIu64 "  errors %" PRIu64 "%s\n",
               t, fl->qpn, fl->peer_qpn, (double)(bytes - prev_bytes[i]) * 8 / dt / 1e9, fl->msgs,
               fl->queued, (double)wire / 1e9, cnp, rnr, fl->verify_errors + fl->seq_errors,
               fl->qp_error ? "  QP ERROR" : "");
    }
}

/* Everything refused, by reason: before the QPs (endpoint), on the side channel, and by the
 * transport's own checks (PSN window, rkey, range). */
struct refusals {
    uint64_t source, allow, no_qp, sc_allow, sc_source, sc_other;
    uint64_t dup, ooo, bad_rkey, bad_access;
};

static void count_sc_refusals(const struct fe_sc_host *h, struct refusals *rf)
{
    rf->sc_source += h->stats.rejected[FE_SC_R_SOURCE];
    for (int r = 1; r < FE_SC_R_MAX; r++)
        if (r != FE_SC_R_SOURCE) rf->sc_other += h->stats.rejected[r];
}

static void count_refusals(struct fe_daq *d, struct refusals *rf)
{
    memset(rf, 0, sizeof *rf);
    const struct fe_ep_stats *es = fe_ep_stats(fe_daq_ep(d));
    const struct fe_daq_stats *ds = fe_daq_stats(d);
    rf->source = es->rx_refused_source;
    rf->allow = es->rx_refused_allow;
    rf->no_qp = es->rx_no_qp;
    rf->sc_allow = ds->sc_refused_allow;
    rf->sc_other = ds->sc_no_host;
    for (unsigned i = 0; i < fe_daq_n_flows(d); i++) {
        if (fe_daq_sc(d, i)) count_sc_refusals(fe_daq_sc(d, i), rf);
        struct fe_qp_counters c;
        fe_daq_flow_counters(d, i, &c);
        rf->dup += c.rx_dup_pkts;
        rf->ooo += c.rx_ooo_pkts;
        rf->bad_rkey += c.rx_bad_rkey;
        rf->bad_access += c.rx_bad_access;
    }
}

/* Manual mode: the sender needs our keys (feroce send --rkey K --peer-psn P --va V; QP i has
 * rkey K + i, VA V + i x slots x msg-size). */
static void print_manual_keys(const struct fe_daq *d)
{
    const struct fe_daq_flow *fl = fe_daq_flow(d, 0);
    fprintf(stderr, "feroce recv: for the sender: --rkey 0x%x --peer-psn 0x%x --va 0x%" PRIx64 "\n",
            fl->rkey, fl->psn, fl->va);
}

/* A receiver being run: the options, the engine, the run's phase, and the byte counts the
 * live lines and the steady-state rates are taken from. */
struct recv_run {
    struct opts o;
    struct fe_loop *loop;
    struct fe_daq *d;
    int data_fd;
    uint64_t t0, t1;
    enum { RUN, DRAIN, LINGER, CLOSING, END } phase;
    uint64_t phase_ns, last_progress, last_msgs;
    uint64_t prev_bytes[FE_DAQ_MAX_FLOWS];
    uint64_t next_tick, last_tick;
    bool timed_out, blocked;
    uint64_t warm_bytes[FE_DAQ_MAX_FLOWS], warm_ns, stop_ns;
    uint64_t stop_bytes[FE_DAQ_MAX_FLOWS];
};

/* The record file, the event loop and the DAQ engine. */
static int setup_receiver(struct recv_run *r)
{
    if (r->o.record) {
        r->o.dc.record_fd = open(r->o.record, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (r->o.dc.record_fd < 0) {
            fprintf(stderr, "feroce recv: cannot create %s: %s\n", r->o.record, strerror(errno));
            return -1;
        }
    }
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    lc.busy_poll = r->o.io.busy_poll;
    lc.cpu = r->o.io.cpu;
    int err;
    r->loop = fe_loop_create(&lc, &err);
    if (!r->loop) {
        fprintf(stderr, "feroce recv: event loop: %s\n", fe_io_fail_str(err));
        return -1;
    }
    char msg[256] = "";
    r->t0 = fe_io_now_ns();
    r->d = fe_daq_create(&r->o.dc, r->t0, &err, msg, sizeof msg);
    if (!r->d) {
        fprintf(stderr, "feroce recv: %s\n", msg[0] ? msg : fe_io_fail_str(err));
        return -1;
    }
    if (r->o.dc.n_manual) print_manual_keys(r->d);
    int fds[4], nfd = fe_daq_fds(r->d, fds, 4);
    for (int i = 0; i < nfd; i++) fe_loop_add(r->loop, fds[i], i);
    r->data_fd = fds[0];
    fe_cli_catch_stop_signals();
    r->phase = RUN;
    r->phase_ns = r->last_progress = r->last_tick = r->t0;
    r->next_tick = r->t0 + (r->o.io.interval_ns ? r->o.io.interval_ns : UINT64_MAX / 2);
    return fe_web_io_recv(&r->o.io.web, r->d);
}

/* Anything that arrived (messages or packets, retransmissions too) counts as progress. */
static void note_progress(struct recv_run *r, uint64_t now)
{
    uint64_t msgs = 0;
    for (unsigned i = 0; i < fe_daq_n_flows(r->d); i++) {
        const struct fe_daq_flow *fl = fe_daq_flow(r->d, i);
        msgs += fl->msgs + (fl->qp ? fe_qp_counters(fl->qp)->rx_pkts : 0);
    }
    if (msgs != r->last_msgs) {
        r->last_msgs = msgs;
        r->last_progress = now;
    }
}

static void print_live(struct recv_run *r, uint64_t now)
{
    live(r->d, r->prev_bytes, (double)(now - r->last_tick) / 1e9, (double)(now - r->t0) / 1e9);
    for (unsigned i = 0; i < fe_daq_n_flows(r->d); i++)
        r->prev_bytes[i] = fe_daq_flow(r->d, i)->bytes;
    fflush(stdout);
    r->last_tick = now;
    while (r->next_tick <= now) r->next_tick += r->o.io.interval_ns;
}

/* Byte counts at the end of --warmup and at the stop: the steady state lies between. */
static void snapshot_bytes(const struct fe_daq *d, uint64_t *bytes)
{
    for (unsigned i = 0; i < fe_daq_n_flows(d); i++) bytes[i] = fe_daq_flow(d, i)->bytes;
}

static bool all_failed(const struct fe_daq *d)
{
    for (unsigned i = 0; i < fe_daq_n_flows(d); i++) {
        const struct fe_daq_flow *fl = fe_daq_flow(d, i);
        if (!fl->qp_error && fl->sc_state != FE_SC_H_FAILED) return false;
    }
    return true;
}

static void enter(struct recv_run *r, int phase, uint64_t now)
{
    r->phase = phase;
    r->phase_ns = now;
}

/* RUN until done, --duration, --timeout or a signal; DRAIN: the senders stop, take what is
 * in flight until quiet; LINGER: our last ACKs reach the senders before CLOSE_QP does;
 * CLOSING: the side channel's goodbyes. A second signal cuts every wait short. */
static void advance_phase(struct recv_run *r, uint64_t now)
{
    const struct opts *o = &r->o;
    switch (r->phase) {
    case RUN:
        if (fe_daq_done(r->d) || all_failed(r->d)) {
            enter(r, LINGER, now);
        } else if (fe_cli_signals || (o->duration_ns && now >= r->t0 + o->duration_ns) ||
                   now >= r->t0 + o->timeout_ns) {
            r->timed_out = !fe_cli_signals && !o->duration_ns;
            r->stop_ns = now;
            snapshot_bytes(r->d, r->stop_bytes);
            fe_daq_stop(r->d, now);
            enter(r, DRAIN, now);
        }
        break;
    case DRAIN:
        if (fe_cli_signals > 1 || now >= r->phase_ns + 10 * o->drain_ns + 10000000000ull ||
            (now >= r->last_progress + o->drain_ns && now >= r->phase_ns + o->drain_ns))
            enter(r, LINGER, now);
        break;
    case LINGER:
        if (now >= r->phase_ns + 50000000ull || fe_cli_signals > 1) {
            fe_daq_close(r->d, now);
            enter(r, CLOSING, now);
        }
        break;
    case CLOSING:
        if (fe_daq_sc_idle(r->d) || now >= r->phase_ns + 2000000000ull || fe_cli_signals > 1)
            r->phase = END;
        break;
    default:
        break;
    }
}

/* Sleeps until the engine's deadline or the next live line, 50 ms at most (the phase is
 * checked at least that often); 1 ms while the socket is full. */
static unsigned wait_events(struct recv_run *r, uint64_t now)
{
    uint64_t dl = fe_daq_next_deadline(r->d);
    if (r->o.io.interval_ns && r->next_tick < dl) dl = r->next_tick;
    uint64_t cap = now + 50000000ull;
    if (cap < dl) dl = cap;
    dl = fe_web_io_deadline(&r->o.io.web, dl);
    return fe_io_wait(r->loop, fe_daq_ep(r->d), r->data_fd, &r->blocked, now, dl);
}

static void run_loop(struct recv_run *r)
{
    const struct fe_io_opts *io = &r->o.io;
    unsigned ready = FE_READY_ALL;
    while (r->phase != END) {
        uint64_t now = fe_io_now_ns();
        fe_daq_step(r->d, now, ready);
        note_progress(r, now);
        fe_web_io_step(&r->o.io.web, now);
        if (io->interval_ns && now >= r->next_tick && !io->quiet && !io->json && r->phase == RUN)
            print_live(r, now);
        if (r->o.warmup_ns && !r->warm_ns && now >= r->t0 + r->o.warmup_ns) {
            r->warm_ns = now;
            snapshot_bytes(r->d, r->warm_bytes);
        }
        advance_phase(r, now);
        if (r->phase == END) break;
        ready = wait_events(r, now);
    }
    r->t1 = fe_io_now_ns();
    if (!r->o.dc.imm) fe_daq_verify_rings(r->d);
}

/* A record that misses messages is a failed run: 1 after saying how many. */
static int check_record(const struct recv_run *r)
{
    int rec_err = fe_daq_record_error(r->d);
    if (r->o.dc.record_fd >= 0 && close(r->o.dc.record_fd) && !rec_err) rec_err = errno;
    if (!rec_err) return 0;
    uint64_t missed = 0;
    for (unsigned i = 0; i < fe_daq_n_flows(r->d); i++) missed += fe_daq_flow(r->d, i)->record_lost;
    fprintf(stderr,
            "feroce recv: recording to %s failed (%s): %" PRIu64
            " received messages are not in it\n",
            r->o.record, strerror(rec_err), missed);
    return 1;
}

struct recv_totals {
    uint64_t msgs, bytes, err;
};

static void print_flow_json(unsigned i, const struct fe_daq_flow *fl, const struct fe_sc_host *h,
                            const struct fe_qp_counters *c, double secs, double gbps)
{
    printf("%s{\"qpn\":%u,\"peer_qpn\":%u,\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64
           ",\"seconds\":%.6f,\"gbps\":%.6f,\"verify_errors\":%" PRIu64 ",\"seq_errors\":%" PRIu64
           ",\"rx_pkts\":%" PRIu64 ",\"dup_pkts\":%" PRIu64 ",\"ooo_pkts\":%" PRIu64
           ",\"ce_pkts\":%" PRIu64 ",\"cnps\":%" PRIu64 ",\"rnr_naks\":%" PRIu64
           ",\"seq_naks\":%" PRIu64 ",\"bad_icrc\":%" PRIu64 ",\"record_lost\":%" PRIu64
           ",\"qp_error\":%s,\"side_channel\":\"%s\"",
           i ? "," : "", fl->qpn, fl->peer_qpn, fl->msgs, fl->bytes, secs, gbps, fl->verify_errors,
           fl->seq_errors, c->rx_pkts, c->rx_dup_pkts, c->rx_ooo_pkts, c->rx_ce_pkts, c->tx_cnps,
           c->tx_rnr_naks, c->tx_naks[FE_NAK_PSN_SEQ], c->rx_bad_icrc, fl->record_lost,
           fl->qp_error ? "true" : "false", h ? fe_sc_host_state_name(h->state) : "manual");
    printf(",\"rkey\":%u,\"psn\":%u,\"va\":%" PRIu64 ",\"bad_rkey\":%" PRIu64
           ",\"bad_access\":%" PRIu64 ",\"reconnects\":%" PRIu64 ",\"prev_msgs\":%" PRIu64
           ",\"reconnecting\":%s}",
           fl->rkey, fl->psn, fl->va, c->rx_bad_rkey, c->rx_bad_access, fl->reconnects,
           fl->prev_msgs, fl->reconnecting ? "true" : "false");
}

static void print_flow_text(const struct fe_daq_flow *fl, const struct fe_sc_host *h,
                            const struct fe_qp_counters *c, double gbps, bool lost)
{
    printf(
        "qp %u <- %u: %" PRIu64 " messages, %.3f GB, %.3f Gb/s, %" PRIu64 " verify errors, %" PRIu64
        " sequence errors, %" PRIu64 " CNPs sent, %" PRIu64 " RNR NAKs, %" PRIu64
        " duplicates, %" PRIu64 " bad ICRC, %" PRIu64 " reconnects%s%s%s%s%s%s\n",
        fl->qpn, fl->peer_qpn, fl->msgs, (double)fl->bytes / 1e9, gbps, fl->verify_errors,
        fl->seq_errors, c->tx_cnps, c->tx_rnr_naks, c->rx_dup_pkts, c->rx_bad_icrc, fl->reconnects,
        fl->qp_error ? ", QP ERROR" : "", fl->reconnecting ? ", FRONT-END GONE" : "",
        lost ? ", MESSAGES MISSING" : "", fl->record_lost ? ", NOT ALL RECORDED" : "",
        h && h->state == FE_SC_H_FAILED
            ? (h->timed_out ? ", side channel: no answer" : ", side channel refused: ")
            : "",
        h && h->state == FE_SC_H_FAILED && !h->timed_out ? fe_sc_ack_name(h->fail_ack) : "");
}

/* Flow i's result; 1 when it failed (an error, a message missing or not recorded). */
static int print_flow(const struct recv_run *r, unsigned i, struct recv_totals *t)
{
    const struct fe_daq_flow *fl = fe_daq_flow(r->d, i);
    const struct fe_sc_host *h = fe_daq_sc(r->d, i);
    struct fe_qp_counters all;
    fe_daq_flow_counters(r->d, i, &all);
    const struct fe_qp_counters *c = &all;
    double secs = fl->last_ns > fl->first_ns ? (double)(fl->last_ns - fl->first_ns) / 1e9 : 0;
    double gbps = secs > 0 ? (double)fl->bytes * 8 / secs / 1e9 : 0;
    if (r->warm_ns &&
        r->stop_ns > r->warm_ns) { /* the steady state: from the warm-up to the stop */
        secs = (double)(r->stop_ns - r->warm_ns) / 1e9;
        gbps = (double)(r->stop_bytes[i] - r->warm_bytes[i]) * 8 / secs / 1e9;
    }
    bool lost = r->o.dc.count && fl->msgs != r->o.dc.count;
    t->msgs += fl->msgs;
    t->bytes += fl->bytes;
    t->err += fl->verify_errors + fl->seq_errors;
    if (r->o.io.json)
        print_flow_json(i, fl, h, c, secs, gbps);
    else
        print_flow_text(fl, h, c, gbps, lost);
    return fl->qp_error || fl->verify_errors || fl->seq_errors || lost || fl->record_lost ||
           fl->sc_state == FE_SC_H_FAILED || fl->reconnecting;
}

/* Every flow's result and the totals: 0 when every expected message arrived, verified. */
static void print_refusals_json(const struct refusals *rf)
{
    printf("\"refused\":{\"source\":%" PRIu64 ",\"allow\":%" PRIu64 ",\"no_qp\":%" PRIu64
           ",\"sc_allow\":%" PRIu64 ",\"sc_source\":%" PRIu64 ",\"sc_other\":%" PRIu64
           ",\"dup_psn\":%" PRIu64 ",\"ooo_psn\":%" PRIu64 ",\"bad_rkey\":%" PRIu64
           ",\"bad_access\":%" PRIu64 "}",
           rf->source, rf->allow, rf->no_qp, rf->sc_allow, rf->sc_source, rf->sc_other, rf->dup,
           rf->ooo, rf->bad_rkey, rf->bad_access);
}

static void print_refusals_text(const struct refusals *rf)
{
    if (!(rf->source || rf->allow || rf->no_qp || rf->sc_allow || rf->sc_source || rf->sc_other))
        return;
    printf("refused: data %" PRIu64 " (not the QP's peer), %" PRIu64 " (outside --allow), %" PRIu64
           " (no such QP); side channel %" PRIu64 " (outside --allow), %" PRIu64
           " (not the front-end), %" PRIu64 " (other)\n",
           rf->source, rf->allow, rf->no_qp, rf->sc_allow, rf->sc_source, rf->sc_other);
}

static int print_summary(const struct recv_run *r)
{
    int rc = r->timed_out ? 1 : 0;
    if (check_record(r)) rc = 1;
    struct recv_totals t = {0};
    if (r->o.io.json) printf("{\"tool\":\"recv\",\"flows\":[");
    for (unsigned i = 0; i < fe_daq_n_flows(r->d); i++)
        if (print_flow(r, i, &t)) rc = 1;
    struct refusals rf;
    count_refusals(r->d, &rf);
    if (r->o.io.json) {
        printf("],");
        print_refusals_json(&rf);
        printf(",\"total\":{\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"errors\":%" PRIu64
               ",\"seconds\":%.6f},",
               t.msgs, t.bytes, t.err, (double)(r->t1 - r->t0) / 1e9);
        fe_io_print_raw(fe_daq_ep(r->d), true);
        printf("\"ok\":%s}\n", rc ? "false" : "true");
    } else {
        printf("data verified: %" PRIu64 " bytes, %" PRIu64 " errors%s\n", t.bytes, t.err,
               r->o.dc.verify ? "" : " (verification off)");
        print_refusals_text(&rf);
        if (!r->o.io.quiet) fe_io_print_raw(fe_daq_ep(r->d), false);
        if (r->timed_out) printf("feroce recv: gave up after --timeout\n");
    }
    return rc;
}

static int run(int argc, char **argv)
{
    struct recv_run r;
    memset(&r, 0, sizeof r);
    if (parse_opts(argc, argv, &r.o)) return 2;
    if (r.o.pt.enabled) return fe_recv_perftest_run(&r.o.pt, &r.o.dc, r.o.timeout_ns, r.o.io.quiet);
    int rc = 1;
    if (!setup_receiver(&r)) {
        run_loop(&r);
        rc = print_summary(&r);
        fe_web_io_finish(&r.o.io.web, "recv");
    }
    fe_daq_destroy(r.d);
    fe_loop_destroy(r.loop);
    return rc;
}

const struct fe_cmd fe_cmd_recv = {
    "recv", "software DAQ receiver: open QPs, verify, record, back-pressure", usage, run};
