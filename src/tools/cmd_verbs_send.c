/* feroce verbs-send: a software front-end on an RDMA NIC (ConnectX, Soft-RoCE).
 *
 * The FPGA side of the side channel (UDP 17185, the same state machine as
 * `feroce send`) over a verbs device: each QP a host opens becomes an RC QP of the NIC, and a
 * tx-meta start streams the counter pattern (or detector frames) as RDMA WRITE / WRITE with
 * immediate, following include/feroce/pattern.h (message k at slot k mod N, immediate k on the
 * doorbells). With the NIC's own transport as the requester, this drives feroce's receiver
 * (`feroce recv`) or any DAQ host from a real RoCE stack.
 *
 * The side channel's state machine numbers a front-end's QPs from 256; a NIC numbers its QPs
 * itself, so QPNs are translated at the boundary: what goes out names the NIC's QPN, what comes
 * in is mapped back. */
#include "tools/cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "feroce/err.h"
#include "feroce/frames.h"
#include "feroce/pattern.h"
#include "feroce/sidechannel.h"
#include "io/verbs.h"
#include "tools/verbs_opts.h"

#define MAX_WINDOW 256

struct vqp {
    struct ibv_qp *qp; /* NULL when the slot is free */
    struct ibv_mr *mr;
    uint8_t *buf; /* window x msg_bytes */
    uint32_t buf_bytes;
    struct fe_sc_qp_info peer;
    uint32_t sq_psn;
    bool connected, streaming, finished, error;
    struct fe_sc_tx_meta tx;
    uint64_t posted, completed, bytes;
    uint64_t started_ns, finished_ns;
    int fail_status;
    /* the last stream's totals, kept after CLOSE_QP */
    uint32_t nic_qpn, peer_qpn;
};

struct opts {
    struct fe_verbs_opts dev;
    uint16_t sc_port;
    uint32_t slots, imm_every, window;
    enum fe_data_pattern pattern;
    bool once, quiet;
    uint64_t timeout_ns;
};

static const char usage[] =
    "usage: feroce verbs-send [OPTIONS]\n"
    "A software front-end on an RDMA NIC (ConnectX, Soft-RoCE): answers the side channel (UDP\n"
    "17185) like the Lite-RoCEv2 firmware, makes each QP a host opens an RC QP of the NIC, and\n"
    "on a tx-meta start streams RDMA WRITE / WRITE with immediate through the NIC's transport,\n"
    "following feroce's stream convention (so feroce recv and verbs-recv verify every "
    "byte).\n" FE_VERBS_USAGE "  --sc-port N          side channel port (default 17185)\n"
    "  --slots N            receiver ring slots: message k goes to slot k mod N (default 64)\n"
    "  --imm-every M        with a WRITE-with-immediate stream, the immediate on every Mth\n"
    "                       message and the last (default 1)\n"
    "  --window N           WRITEs in flight per QP (default 16, at most 256)\n"
    "  --pattern P          counter (default) or frames\n"
    "  --once               exit when every opened QP has finished its stream and was closed\n"
    "  --timeout DURATION   give up when nothing happens for this long (default 60s; 0 never)\n"
    "  --quiet              final summary only\n"
    "Exit status 0 when no stream failed.\n";

static int pattern_opt(const char *val, void *p)
{
    if (fe_data_pattern_parse(val, p)) {
        fprintf(stderr, "feroce verbs-send: --pattern is counter or frames\n");
        return -1;
    }
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    fe_verbs_opts_default(&o->dev);
    o->sc_port = FE_SC_PORT;
    o->slots = 64;
    o->imm_every = 1;
    o->window = 16;
    o->pattern = FE_PAT_COUNTER;
    o->timeout_ns = 60000000000ull;
    struct fe_opt dev[FE_VERBS_OPTS_N + 1];
    fe_verbs_opts_table(dev, &o->dev, "verbs-send");
    const struct fe_opt opts[] = {
        {FE_OPT_UINT_("--sc-port", o->sc_port), .min = 1, .max = 65535},
        {FE_OPT_UINT_("--slots", o->slots), .min = 1, .max = 1u << 24},
        {FE_OPT_UINT_("--imm-every", o->imm_every), .min = 1, .max = UINT32_MAX},
        {FE_OPT_UINT_("--window", o->window), .min = 1, .max = MAX_WINDOW},
        {FE_OPT_FN_("--pattern", pattern_opt, &o->pattern)},
        {FE_OPT_FLAG_("--once", o->once)},
        {FE_OPT_TIME_("--timeout", o->timeout_ns)},
        {FE_OPT_FLAG_("--quiet", o->quiet)},
        {0},
    };
    const struct fe_opt *const tables[] = {dev, opts, NULL};
    const struct fe_cli cli = {.cmd = "verbs-send", .tables = tables, .getopt_usage = usage};
    int first = fe_cli_parse(&cli, argc, argv);
    if (first < 0) return -1;
    if (first < argc) {
        fprintf(stderr, "feroce verbs-send: unexpected argument '%s'\n%s", argv[first], usage);
        return -1;
    }
    return 0;
}

struct ctx {
    struct opts o;
    struct fe_verbs_dev dev;
    struct ibv_cq *cq;
    struct fe_sc_fe sc;
    struct vqp q[FE_SC_MAX_QPS];
    uint32_t mtu;
    unsigned opened;
    int sock;               /* the side channel's */
    uint64_t last_event_ns; /* the last datagram or completion, for --timeout */
    uint64_t done_ns;       /* since when every stream is done (--once) */
};

static void vqp_free(struct vqp *v)
{
    if (v->qp) ibv_destroy_qp(v->qp);
    if (v->mr) ibv_dereg_mr(v->mr);
    free(v->buf);
    v->qp = NULL;
    v->mr = NULL;
    v->buf = NULL;
    v->buf_bytes = 0;
}

static int vqp_open(struct ctx *c, unsigned slot, const struct fe_sc_event *ev)
{
    struct vqp *v = &c->q[slot];
    vqp_free(v);
    memset(v, 0, sizeof *v);
    struct ibv_qp_init_attr qa;
    memset(&qa, 0, sizeof qa);
    qa.send_cq = c->cq;
    qa.recv_cq = c->cq;
    qa.qp_type = IBV_QPT_RC;
    qa.sq_sig_all = 1;
    qa.cap.max_send_wr = c->o.window;
    qa.cap.max_recv_wr = 1;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    v->qp = ibv_create_qp(c->dev.pd, &qa);
    if (!v->qp || fe_verbs_qp_init(v->qp, &c->dev, 0)) {
        fprintf(stderr, "feroce verbs-send: cannot create a QP: %s\n", strerror(errno));
        vqp_free(v);
        return -1;
    }
    v->peer = ev->peer;
    v->sq_psn = ev->sq_psn;
    v->nic_qpn = v->qp->qp_num;
    v->peer_qpn = ev->peer.qpn;
    c->opened++;
    return 0;
}

static int vqp_connect(struct ctx *c, struct vqp *v)
{
    char err[200];
    struct fe_verbs_peer p = {.qpn = v->peer.qpn,
                              .ip4 = v->peer.ip,
                              .rq_psn = 0,
                              .sq_psn = v->sq_psn,
                              .mtu_bytes = c->mtu,
                              .min_rnr_timer = 1,
                              .timeout = 14, /* 67 ms */
                              .retry_cnt = 7,
                              .rnr_retry = 7};
    if (fe_verbs_qp_connect(v->qp, &c->dev, &p, err, sizeof err)) {
        fprintf(stderr, "feroce verbs-send: %s\n", err);
        v->error = true;
        return -1;
    }
    v->connected = true;
    return 0;
}

static int vqp_start(struct ctx *c, struct vqp *v, const struct fe_sc_tx_meta *tx, uint64_t now)
{
    if (!tx->write || !tx->msg_len_bytes) {
        fprintf(stderr, "feroce verbs-send: only WRITE streams of a given length are served\n");
        v->error = true;
        return -1;
    }
    uint64_t need = (uint64_t)c->o.window * tx->msg_len_bytes;
    if (need > (1ull << 31)) {
        fprintf(stderr, "feroce verbs-send: window x message size is too large\n");
        v->error = true;
        return -1;
    }
    if (v->buf_bytes < need) {
        if (v->mr) ibv_dereg_mr(v->mr);
        free(v->buf);
        v->mr = NULL;
        v->buf = malloc(need);
        v->buf_bytes = v->buf ? (uint32_t)need : 0;
        if (v->buf) v->mr = ibv_reg_mr(c->dev.pd, v->buf, need, IBV_ACCESS_LOCAL_WRITE);
        if (!v->mr) {
            fprintf(stderr, "feroce verbs-send: cannot register %" PRIu64 " bytes: %s%s\n", need,
                    strerror(errno), v->buf ? " (memlock limit?)" : "");
            v->error = true;
            return -1;
        }
    }
    v->tx = *tx;
    v->streaming = true;
    v->finished = false;
    v->started_ns = now;
    return 0;
}

/* Posts messages while the window has room; message k's buffer is window slot k mod W. */
static void vqp_post(struct ctx *c, struct vqp *v)
{
    while (v->streaming && !v->error && v->posted - v->completed < c->o.window &&
           (!v->tx.msg_count || v->posted < v->tx.msg_count)) {
        uint64_t k = v->posted;
        uint32_t len = v->tx.msg_len_bytes;
        uint8_t *p = v->buf + (k % c->o.window) * len;
        /* the stream id is the sending QP's number on the wire: the NIC's */
        fe_data_fill(c->o.pattern, p, len, v->nic_qpn, k);
        struct ibv_sge sge = {.addr = (uintptr_t)p, .length = len, .lkey = v->mr->lkey};
        struct ibv_send_wr wr, *bad;
        memset(&wr, 0, sizeof wr);
        wr.wr_id = k;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        if (v->tx.immediate && fe_stream_has_imm(k, v->tx.msg_count, c->o.imm_every)) {
            wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
            wr.imm_data = htonl((uint32_t)k);
        }
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = v->peer.va + fe_stream_offset(k, len, c->o.slots);
        wr.wr.rdma.rkey = v->peer.rkey;
        int rc = ibv_post_send(v->qp, &wr, &bad);
        if (rc) {
            fprintf(stderr, "feroce verbs-send: ibv_post_send: %s\n", strerror(rc));
            v->error = true;
            return;
        }
        v->posted++;
    }
}

static struct vqp *by_nic_qpn(struct ctx *c, uint32_t qpn, unsigned *slot)
{
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++)
        if (c->q[i].qp && c->q[i].qp->qp_num == qpn) {
            if (slot) *slot = i;
            return &c->q[i];
        }
    return NULL;
}

/* One side-channel datagram: translate, run the state machine, act, answer. */
/* What the side channel's state machine decided for a QP slot. */
static void on_sc_event(struct ctx *c, const struct fe_sc_event *ev, uint64_t now)
{
    struct vqp *v = &c->q[ev->slot];
    switch (ev->type) {
    case FE_SC_EV_OPENED:
        vqp_open(c, ev->slot, ev);
        break;
    case FE_SC_EV_UPDATED:
        v->peer = ev->peer;
        v->sq_psn = ev->sq_psn;
        break;
    case FE_SC_EV_RTS:
        if (v->qp && !v->connected) vqp_connect(c, v);
        break;
    case FE_SC_EV_START:
        if (v->qp && v->connected) vqp_start(c, v, &ev->tx, now);
        break;
    case FE_SC_EV_STOP:
        v->streaming = false;
        break;
    case FE_SC_EV_CLOSED:
        v->streaming = false;
        if (v->qp) {
            ibv_destroy_qp(v->qp);
            v->qp = NULL;
        }
        break;
    default:
        break;
    }
}

/* The state machine's reply, naming our QP as the NIC numbers it. */
static void send_reply(struct ctx *c, const struct fe_sc_fe_result *res)
{
    struct fe_sc_msg r;
    enum fe_sc_reason why;
    if (fe_sc_decode(res->reply_msg, FE_SC_MSG_LEN, &r, &why)) return;
    uint32_t first = c->sc.cfg.first_qpn;
    if (r.loc.qpn >= first && r.loc.qpn < first + FE_SC_MAX_QPS) {
        struct vqp *v = &c->q[r.loc.qpn - first];
        if (v->nic_qpn) r.loc.qpn = v->nic_qpn;
    }
    uint8_t out[FE_SC_MSG_LEN];
    if (fe_sc_encode(out, &r)) return;
    struct sockaddr_in to = {.sin_family = AF_INET,
                             .sin_port = htons(res->reply_port),
                             .sin_addr.s_addr = htonl(res->reply_ip)};
    sendto(c->sock, out, sizeof out, 0, (struct sockaddr *)&to, sizeof to);
}

/* A datagram from a host: its QPN mapped back to the state machine's, fed to it, then its
 * events and reply. */
static void on_datagram(struct ctx *c, const uint8_t *buf, size_t n, const struct sockaddr_in *from,
                        uint64_t now)
{
    struct fe_sc_msg m;
    enum fe_sc_reason why;
    if (fe_sc_decode(buf, n, &m, &why)) {
        fprintf(stderr, "side channel: refused a datagram (%s)\n", fe_sc_reason_name(why));
        return;
    }
    unsigned slot;
    if (m.rem.qpn && by_nic_qpn(c, m.rem.qpn, &slot)) m.rem.qpn = c->sc.cfg.first_qpn + slot;
    uint8_t in[FE_SC_MSG_LEN];
    if (fe_sc_encode(in, &m)) return;
    struct fe_sc_fe_result res;
    if (fe_sc_fe_input(&c->sc, now, in, sizeof in, ntohl(from->sin_addr.s_addr),
                       ntohs(from->sin_port), &res)) {
        fprintf(stderr, "side channel: refused (%s)\n", fe_sc_reason_name(res.why));
        return;
    }
    for (int i = 0; i < res.n_events; i++) on_sc_event(c, &res.ev[i], now);
    if (res.reply) send_reply(c, &res);
}

static void on_wc(struct ctx *c, const struct ibv_wc *wc, uint64_t now)
{
    unsigned slot;
    struct vqp *v = by_nic_qpn(c, wc->qp_num, &slot);
    if (!v) return;
    if (wc->status != IBV_WC_SUCCESS) {
        if (!v->error)
            fprintf(stderr, "qp %u: %s (vendor 0x%x)\n", v->nic_qpn, ibv_wc_status_str(wc->status),
                    wc->vendor_err);
        v->error = true;
        v->fail_status = wc->status;
        return;
    }
    v->completed++;
    v->bytes += v->tx.msg_len_bytes;
    if (v->tx.msg_count && v->completed >= v->tx.msg_count && !v->finished) {
        v->finished = true;
        v->streaming = false;
        v->finished_ns = now;
    }
}

/* The CQ, the side channel's state machine and its socket. */
static int setup_sender(struct ctx *c)
{
    char ipb[INET_ADDRSTRLEN];
    c->cq = ibv_create_cq(c->dev.ctx, FE_SC_MAX_QPS * (int)c->o.window + 16, NULL, NULL, 0);
    if (!c->cq) {
        fprintf(stderr, "feroce verbs-send: ibv_create_cq: %s\n", strerror(errno));
        return -1;
    }
    struct fe_sc_fe_config sc;
    fe_sc_fe_config_default(&sc);
    sc.local_ip = c->dev.ip4;
    if (fe_sc_fe_init(&c->sc, &sc)) return -1;
    c->sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(c->o.sc_port)};
    if (c->sock < 0 || bind(c->sock, (struct sockaddr *)&sa, sizeof sa)) {
        fprintf(stderr, "feroce verbs-send: UDP port %u: %s\n", c->o.sc_port, strerror(errno));
        return -1;
    }
    struct in_addr ia = {.s_addr = htonl(c->dev.ip4)};
    if (!c->o.quiet) {
        printf("verbs-send: %s GID %d (%s), MTU %u, side channel port %u, waiting for a host\n",
               c->dev.name, c->dev.gid_index, inet_ntop(AF_INET, &ia, ipb, sizeof ipb), c->mtu,
               c->o.sc_port);
        fflush(stdout);
    }
    return 0;
}

/* Every datagram waiting, then every completion. */
static void take_input(struct ctx *c, uint64_t *now)
{
    uint8_t buf[256];
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    ssize_t n;
    while ((n = recvfrom(c->sock, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl)) >= 0) {
        on_datagram(c, buf, (size_t)n, &from, *now);
        c->last_event_ns = *now;
        fl = sizeof from;
    }
    struct ibv_wc wc[32];
    int k;
    while ((k = ibv_poll_cq(c->cq, 32, wc)) > 0) {
        *now = fe_wall_ns();
        for (int i = 0; i < k; i++) on_wc(c, &wc[i], *now);
        c->last_event_ns = *now;
    }
}

/* --once and every stream done: the host's CLOSE_QPs came (all QPs gone), or 2 s passed. */
static bool once_done(struct ctx *c, bool all_done, uint64_t now)
{
    if (!c->o.once || !all_done) return false;
    if (!c->done_ns) c->done_ns = now;
    return fe_sc_fe_open_count(&c->sc) == 0 || now > c->done_ns + 2000000000ull;
}

static void run_loop(struct ctx *c)
{
    fe_cli_catch_stop_signals();
    c->last_event_ns = fe_wall_ns();
    while (!fe_cli_signals) {
        uint64_t now = fe_wall_ns();
        take_input(c, &now);
        bool busy = false, all_done = c->opened > 0;
        for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) {
            struct vqp *v = &c->q[i];
            if (v->qp) vqp_post(c, v);
            busy |= v->streaming && !v->error;
            if (v->qp && !v->finished && !v->error) all_done = false;
        }
        if (once_done(c, all_done, now)) break;
        if (c->o.timeout_ns && now - c->last_event_ns > c->o.timeout_ns) {
            fprintf(stderr, "feroce verbs-send: nothing for %.1f s, giving up\n",
                    (double)c->o.timeout_ns / 1e9);
            break;
        }
        if (!busy) {
            struct pollfd pf = {.fd = c->sock, .events = POLLIN};
            poll(&pf, 1, 1);
        }
    }
}

/* A line per QP that streamed: 0 when none failed. */
static int print_summary(const struct ctx *c)
{
    int rc = 0;
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) {
        const struct vqp *v = &c->q[i];
        if (!v->nic_qpn) continue;
        uint64_t end = v->finished_ns ? v->finished_ns : fe_wall_ns();
        double secs =
            v->started_ns && end > v->started_ns ? (double)(end - v->started_ns) / 1e9 : 0;
        printf("qp %u -> %u: %" PRIu64 " messages, %" PRIu64 " bytes, %.3f Gb/s, %s\n", v->nic_qpn,
               v->peer_qpn, v->completed, v->bytes,
               secs > 0 ? (double)v->bytes * 8 / secs / 1e9 : 0.0,
               v->error      ? ibv_wc_status_str((enum ibv_wc_status)v->fail_status)
               : v->finished ? "done"
                             : "unfinished");
        if (v->error) rc = 1;
    }
    return rc;
}

static int run(int argc, char **argv)
{
    struct ctx *c = calloc(1, sizeof *c); /* every QP slot's state: large for a stack */
    if (!c) return 1;
    c->sock = -1;
    int rc = 2;
    if (parse_opts(argc, argv, &c->o)) goto out;
    rc = 1;
    if (fe_verbs_opts_open("verbs-send", &c->o.dev, &c->dev, &c->mtu)) goto out;
    if (!setup_sender(c)) {
        run_loop(c);
        rc = print_summary(c);
    }
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) vqp_free(&c->q[i]);
    if (c->cq) ibv_destroy_cq(c->cq);
    if (c->sock >= 0) close(c->sock);
    fe_verbs_close(&c->dev);
    fflush(stdout);
out:
    free(c);
    return rc;
}

const struct fe_cmd fe_cmd_verbs_send = {
    "verbs-send", "software front-end on an RDMA NIC (libibverbs): side channel, stream WRITEs",
    usage, run};
