/* A software DAQ receiver (see include/feroce/daq.h). */
#include "feroce/daq.h"
#include "io/fail.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feroce/frames.h"
#include "io/txmeta.h"

struct daq_rt {
    uint8_t *ring;   /* slots x msg_bytes, registered as the QP's memory region */
    uint32_t *imm_q; /* completed messages waiting for the consumer (low 32 bits of seq) */
    uint8_t *bell_q; /* 1: that message carried the immediate (its buffer goes back) */
    uint32_t q_head; /* FIFO of `slots` entries */
    uint64_t cq_seq; /* next sequence number expected from completions */
    struct fe_sc_host host;
    bool has_host;
    uint8_t last_state;
    bool stop_sent;
    struct fe_txmeta_resend stop; /* the tx-meta stop, sent a few times (stop_watch) */
    /* the tx-meta start, sent again until the stream's first packet (start_watch) */
    struct fe_txmeta_resend start;
    /* reconnects (cfg.reconnect_ns) */
    uint64_t activity, quiet_since_ns; /* packets seen at the QP, and since when no new one */
    uint64_t reopen_at_ns;             /* the next OPEN_QP after a close or a failed open */
    struct fe_qp_counters past;        /* of the QPs given up */
};

struct fe_daq {
    struct fe_daq_config cfg;
    struct fe_ep *ep;
    struct fe_udpsock *sc_sock;
    unsigned n_flows, n_alloc;
    struct fe_daq_flow *flow; /* n_alloc of them */
    struct daq_rt *rt;
    unsigned consume_rr;
    bool started;     /* the tx-meta start went to every ready QP */
    bool stopping;    /* the senders were asked to stop: silence is expected */
    int record_errno; /* the failed write to cfg.record_fd, 0 while none */
    struct fe_daq_stats st;
    int64_t tokens; /* consumer credit, bytes */
    uint64_t tokens_ns;
    unsigned sc_in_flight; /* side-channel requests sent and not answered (SC_WINDOW) */
};

/* Side-channel requests in flight at once. A receiver of many QPs opens (and closes) them a
 * window at a time: sent all at once, a round of replies overflows the reply socket of a busy
 * receiver, every lost one is sent again a retry timeout later with the rest, the replies to
 * those are lost in turn, and hosts give up (FAILED) although every front-end answers. */
#define SC_WINDOW 64u
/* Side-channel datagrams taken per step at most */
#define SC_RX_MAX 256u

void fe_daq_config_default(struct fe_daq_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    fe_ep_config_default(&cfg->ep);
    cfg->sc_reply_port = FE_SC_REPLY_PORT;
    cfg->sc_timeout_ns = 100000000ull;
    cfg->sc_tries = 10;
    cfg->send_start = true;
    cfg->local_qpn = 0x11;
    cfg->psn = 0;
    cfg->rkey = 0x1000;
    cfg->random_rkey = true;
    cfg->random_psn = true;
    cfg->va = 0x100000000ull;
    cfg->slots = 64;
    cfg->msg_bytes = 65536;
    cfg->imm = true;
    cfg->imm_every = 1;
    cfg->verify = true;
    cfg->record_fd = -1;
    fe_qp_config_default(&cfg->qp);
}

unsigned fe_daq_n_flows(const struct fe_daq *d)
{
    return d->n_flows;
}
const struct fe_daq_flow *fe_daq_flow(const struct fe_daq *d, unsigned i)
{
    return i < d->n_flows ? &d->flow[i] : NULL;
}
const struct fe_daq_stats *fe_daq_stats(const struct fe_daq *d)
{
    return &d->st;
}
struct fe_ep *fe_daq_ep(struct fe_daq *d)
{
    return d->ep;
}
const struct fe_sc_host *fe_daq_sc(const struct fe_daq *d, unsigned i)
{
    return i < d->n_flows && d->rt[i].has_host ? &d->rt[i].host : NULL;
}

static uint64_t ring_bytes(const struct fe_daq *d)
{
    return (uint64_t)d->cfg.slots * d->cfg.msg_bytes;
}

/* Creates the QP of flow i once its peer QPN is known, registers the ring, posts receives. */
static int flow_qp(struct fe_daq *d, unsigned i, uint32_t peer_qpn, uint32_t peer_ip,
                   uint16_t peer_port, uint64_t now_ns, char *errbuf, size_t errcap)
{
    struct fe_daq_flow *fl = &d->flow[i];
    struct daq_rt *rt = &d->rt[i];
    struct fe_qp_config qc = d->cfg.qp;
    qc.local_qpn = fl->qpn;
    qc.remote_qpn = peer_qpn;
    qc.rq_psn = fl->psn;
    qc.sq_psn = fe_io_random_u32() & FE_PSN_MASK; /* we send no requests: for symmetry only */
    if (qc.rq_depth < d->cfg.slots) qc.rq_depth = d->cfg.slots;
    if (qc.cq_depth < d->cfg.slots) qc.cq_depth = d->cfg.slots;
    int err = 0;
    const char *why = NULL;
    fl->qp = fe_qp_create(&qc, now_ns, &err, &why);
    if (!fl->qp) {
        if (errbuf)
            snprintf(errbuf, errcap, "cannot create QP %u: %s%s%s", fl->qpn, fe_strerror(err),
                     why ? " in " : "", why ? why : "");
        return err ? err : FE_EINVAL;
    }
    struct fe_mr mr = {.rkey = fl->rkey, .va = fl->va, .len = ring_bytes(d), .base = rt->ring};
    err = fe_qp_reg_mr(fl->qp, &mr);
    if (!err) err = fe_ep_add_qp(d->ep, fl->qp, peer_ip, peer_port, FE_EP_LEARN_PEER);
    /* (slots - M) / M receive buffers: see daq.h */
    uint32_t bells = (d->cfg.slots - d->cfg.imm_every) / d->cfg.imm_every;
    for (uint32_t k = 0; !err && d->cfg.imm && k < bells; k++)
        err = fe_qp_post_recv(fl->qp, k, NULL, 0);
    if (err) {
        if (errbuf) snprintf(errbuf, errcap, "cannot set up QP %u: %s", fl->qpn, fe_strerror(err));
        fe_ep_remove_qp(d->ep, fl->qp);
        fe_qp_destroy(fl->qp);
        fl->qp = NULL;
        return err;
    }
    fl->peer_qpn = peer_qpn;
    return 0;
}

static void sc_send(struct fe_daq *d, unsigned i, const uint8_t *msg, uint64_t now_ns)
{
    const struct fe_sc_host_config *hc = &d->rt[i].host.cfg;
    if (d->sc_sock) {
        struct fe_dgram g = {
            .buf = (uint8_t *)msg, .len = FE_SC_MSG_LEN, .ip = hc->fe_ip, .port = hc->fe_port};
        (void)fe_udpsock_send(d->sc_sock, &g, 1);
    } else {
        (void)fe_ep_send_udp(d->ep, now_ns, hc->fe_ip, d->cfg.sc_reply_port, hc->fe_port, msg,
                             FE_SC_MSG_LEN);
    }
}

static void sc_track(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct daq_rt *rt = &d->rt[i];
    struct fe_daq_flow *fl = &d->flow[i];
    uint8_t st = rt->host.state;
    if (st == rt->last_state) return;
    rt->last_state = st;
    /* between a close and the next open a reconnecting flow is still being opened, not failed */
    fl->sc_state =
        fl->reconnecting && (st == FE_SC_H_CLOSED || st == FE_SC_H_FAILED) ? FE_SC_H_OPENING : st;
    if (rt->start.gave_up && !d->cfg.reconnect_ns) fl->sc_state = FE_SC_H_FAILED;
    if ((st == FE_SC_H_MODIFYING || st == FE_SC_H_RTS) && !fl->qp) {
        char err[160];
        if (flow_qp(d, i, rt->host.remote.qpn, rt->host.remote.ip, FE_ROCEV2_UDP_PORT, now_ns, err,
                    sizeof err) != 0) {
            fprintf(stderr, "feroce: %s\n", err);
            fl->qp_error = true;
            fe_sc_host_close(&rt->host, now_ns);
        }
    }
}

/* The flow a side-channel reply is for: the one whose QPN it names; else, for a firmware-style
 * error reply (which repeats the fields of the board's previous reply), the first flow on that
 * front-end with a request waiting. -1 when none. */
static int sc_host_of(const struct fe_daq *d, const struct fe_sc_msg *m, uint32_t ip)
{
    int waiting = -1;
    for (unsigned i = 0; i < d->n_flows; i++) {
        const struct daq_rt *rt = &d->rt[i];
        if (!rt->has_host || rt->host.cfg.fe_ip != ip) continue;
        if (rt->host.cfg.local.qpn == m->rem.qpn) return (int)i;
        if (waiting < 0 && rt->host.outstanding != FE_SC_REQ_NULL) waiting = (int)i;
    }
    return m->ack_valid && m->ack != FE_SC_ACK_ACK ? waiting : -1;
}

/* The allow-list, on top of each host's own check that a reply comes from its front-end. */
static bool sc_allowed(const struct fe_daq *d, uint32_t ip)
{
    const struct fe_ep_config *ec = &d->cfg.ep;
    if (!ec->n_allow) return true;
    for (unsigned i = 0; i < ec->n_allow; i++)
        if ((ip & ec->allow[i].mask) == ec->allow[i].net) return true;
    return false;
}

static void sc_input(struct fe_daq *d, uint64_t now_ns, const uint8_t *buf, size_t len, uint32_t ip,
                     uint16_t port)
{
    struct fe_sc_msg m;
    enum fe_sc_reason why;
    if (!sc_allowed(d, ip)) {
        d->st.sc_refused_allow++;
        return;
    }
    if (fe_sc_decode(buf, len, &m, &why) != 0) {
        d->st.sc_undecodable++;
        if (d->n_flows && d->rt[0].has_host) d->rt[0].host.stats.rejected[why]++;
        return;
    }
    int i = sc_host_of(d, &m, ip);
    if (i < 0) d->st.sc_no_host++;
    if (i >= 0 && fe_sc_host_input_msg(&d->rt[i].host, now_ns, &m, ip, port, &why) == 0)
        sc_track(d, (unsigned)i, now_ns);
}

static void raw_udp_hook(void *arg, uint64_t now_ns, uint32_t src_ip, uint16_t src_port,
                         uint16_t dst_port, const uint8_t *payload, size_t len)
{
    struct fe_daq *d = arg;
    if (dst_port == d->cfg.sc_reply_port) sc_input(d, now_ns, payload, len, src_ip, src_port);
}

/* The number of flows the configuration asks for, or 0 (errbuf says why) when it cannot work. */
static unsigned validate_config(const struct fe_daq *d, char *errbuf, size_t errcap)
{
    const struct fe_daq_config *cfg = &d->cfg;
    unsigned want = cfg->n_manual;
    for (unsigned k = 0; k < cfg->n_fe; k++) want += cfg->fe[k].qps;
    if (!want || want > FE_DAQ_MAX_FLOWS || (cfg->n_fe && cfg->n_manual)) {
        snprintf(errbuf, errcap, "1..%d QPs, from front-ends or manual, not both",
                 FE_DAQ_MAX_FLOWS);
        return 0;
    }
    if (!cfg->slots || cfg->slots < 2 || !cfg->msg_bytes || ring_bytes(d) > (1ull << 34)) {
        snprintf(errbuf, errcap, "the ring needs >= 2 slots and at most 16 GiB");
        return 0;
    }
    if (!cfg->imm_every || cfg->slots / 2 < cfg->imm_every) {
        snprintf(errbuf, errcap, "the doorbell period must be 1..slots/2 (%u slots)", cfg->slots);
        return 0;
    }
    return want;
}

/* Flow i's rkey, first PSN and ring address: random unless the configuration fixes them. A
 * manual sender is given one rkey K (QP i: K + i) and one PSN by hand, so manual flows share a
 * random base, drawn by alloc_flows. */
static void pick_keys(struct fe_daq *d, unsigned i)
{
    struct fe_daq_flow *fl = &d->flow[i];
    bool manual = d->cfg.n_manual > 0;
    fl->rkey = d->cfg.random_rkey && !manual ? fe_io_random_u32() : d->cfg.rkey + i;
    fl->psn = (d->cfg.random_psn && !manual ? fe_io_random_u32() : d->cfg.psn) & FE_PSN_MASK;
    fl->va = d->cfg.va + (uint64_t)i * ring_bytes(d);
}

/* Numbers the `want` flows and allocates each one's ring and completion FIFO. */
static int alloc_flows(struct fe_daq *d, unsigned want, char *errbuf, size_t errcap)
{
    d->flow = calloc(want, sizeof *d->flow);
    d->rt = calloc(want, sizeof *d->rt);
    if (!d->flow || !d->rt) {
        snprintf(errbuf, errcap, "out of memory for %u flows", want);
        return FE_ENOMEM;
    }
    d->n_alloc = want;
    if (d->cfg.n_manual && d->cfg.random_rkey) d->cfg.rkey = fe_io_random_u32();
    if (d->cfg.n_manual && d->cfg.random_psn) d->cfg.psn = fe_io_random_u32() & FE_PSN_MASK;
    for (unsigned i = 0; i < want; i++) {
        struct fe_daq_flow *fl = &d->flow[i];
        struct daq_rt *rt = &d->rt[i];
        fl->used = true;
        fl->qpn = (d->cfg.local_qpn + i) & 0xFFFFFF;
        pick_keys(d, i);
        rt->ring = calloc(1, ring_bytes(d));
        rt->imm_q = calloc(d->cfg.slots, sizeof *rt->imm_q);
        rt->bell_q = calloc(d->cfg.slots, 1);
        if (!rt->ring || !rt->imm_q || !rt->bell_q) {
            snprintf(errbuf, errcap, "out of memory for %u rings", want);
            return FE_ENOMEM;
        }
        d->n_flows++;
    }
    return 0;
}

/* Where the front-ends' side-channel replies arrive: a UDP socket of its own on the UDP backend,
 * the endpoint's UDP hook on the raw one (the interface carries no kernel address). */
static int open_sc_reply(struct fe_daq *d, uint32_t my_ip, char *errbuf, size_t errcap)
{
    if (d->cfg.ep.backend != FE_BACKEND_UDP) {
        fe_ep_set_udp_hook(d->ep, raw_udp_hook, d);
        return 0;
    }
    int e = 0;
    struct fe_udpsock_config uc;
    fe_udpsock_config_default(&uc);
    uc.bind_ip = d->cfg.sc_bind_ip ? d->cfg.sc_bind_ip : my_ip;
    uc.bind_port = d->cfg.sc_reply_port;
    uc.rcvbuf_bytes = uc.sndbuf_bytes = 256u << 10;
    d->sc_sock = fe_udpsock_open(&uc, &e);
    if (!d->sc_sock) {
        char a[32];
        snprintf(errbuf, errcap, "cannot bind the side-channel reply port %s: %s",
                 fe_io_addr_str(uc.bind_ip, uc.bind_port, a, sizeof a), fe_io_fail_str(e));
        return e ? e : FE_EINVAL;
    }
    return 0;
}

/* Starts the side-channel host of flow i, which talks to front-end k. The start goes out when
 * every QP is ready (fe_daq_step). */
static int open_sc_host(struct fe_daq *d, unsigned i, unsigned k, uint32_t my_ip, uint64_t now_ns)
{
    const struct fe_daq_config *cfg = &d->cfg;
    struct fe_sc_host_config hc;
    fe_sc_host_config_default(&hc);
    hc.fe_ip = cfg->fe[k].ip;
    hc.fe_port = cfg->fe[k].port ? cfg->fe[k].port : FE_SC_PORT;
    hc.reply_port = cfg->sc_reply_port;
    hc.retry_timeout_ns = cfg->sc_timeout_ns;
    hc.max_tries = cfg->sc_tries;
    hc.local.qpn = d->flow[i].qpn;
    hc.local.psn = d->flow[i].psn;
    hc.local.rkey = d->flow[i].rkey;
    hc.local.va = d->flow[i].va;
    hc.local.ip = my_ip;
    int e = fe_sc_host_init(&d->rt[i].host, &hc);
    if (e) return e;
    d->rt[i].has_host = true;
    d->flow[i].fe_index = k;
    fe_sc_host_open(&d->rt[i].host, now_ns);
    sc_track(d, i, now_ns);
    return 0;
}

/* Flows from front-ends: each one's QP is made when its side-channel handshake gives the peer. */
static int open_fe_flows(struct fe_daq *d, uint32_t my_ip, uint64_t now_ns, char *errbuf,
                         size_t errcap)
{
    int e = open_sc_reply(d, my_ip, errbuf, errcap);
    if (e) return e;
    unsigned i = 0;
    for (unsigned k = 0; k < d->cfg.n_fe; k++) {
        for (unsigned q = 0; q < d->cfg.fe[k].qps; q++, i++) {
            e = open_sc_host(d, i, k, my_ip, now_ns);
            if (e) {
                snprintf(errbuf, errcap, "bad side-channel configuration");
                return e;
            }
        }
    }
    return 0;
}

/* Manual flows: the peers are configured, so every QP is made now and ready at once. */
static int open_manual_flows(struct fe_daq *d, uint64_t now_ns, char *errbuf, size_t errcap)
{
    const struct fe_daq_config *cfg = &d->cfg;
    for (unsigned i = 0; i < d->n_flows; i++) {
        int e = flow_qp(d, i, (cfg->manual_peer_qpn + i) & 0xFFFFFF, cfg->manual_peer_ip,
                        cfg->manual_peer_port ? cfg->manual_peer_port : FE_ROCEV2_UDP_PORT, now_ns,
                        errbuf, errcap);
        if (e) return e;
        d->flow[i].sc_state = FE_SC_H_RTS;
    }
    return 0;
}

struct fe_daq *fe_daq_create(const struct fe_daq_config *cfg, uint64_t now_ns, int *err,
                             char *errbuf, size_t errcap)
{
    int e = FE_EINVAL;
    fe_io_fail_clear();
    struct fe_daq *d = calloc(1, sizeof *d);
    if (!d) {
        if (err) *err = FE_ENOMEM;
        return NULL;
    }
    d->cfg = *cfg;
    unsigned want = validate_config(d, errbuf, errcap);
    if (!want) goto fail;
    if (d->cfg.ep.max_qps < want) d->cfg.ep.max_qps = want;
    d->ep = fe_ep_create(&d->cfg.ep, &e);
    if (!d->ep) {
        fe_ep_open_error(&d->cfg.ep, e, errbuf, errcap);
        goto fail;
    }
    uint32_t my_ip = cfg->local_ip;
    if (!my_ip) fe_ep_local(d->ep, &my_ip, NULL);
    e = alloc_flows(d, want, errbuf, errcap);
    if (!e)
        e = cfg->n_fe ? open_fe_flows(d, my_ip, now_ns, errbuf, errcap)
                      : open_manual_flows(d, now_ns, errbuf, errcap);
    if (e) goto fail;
    d->tokens_ns = now_ns;
    if (err) *err = 0;
    return d;
fail:
    fe_daq_destroy(d);
    if (err) *err = e ? e : FE_EINVAL;
    return NULL;
}

void fe_daq_destroy(struct fe_daq *d)
{
    if (!d) return;
    for (unsigned i = 0; i < d->n_alloc; i++) {
        if (d->flow[i].qp) {
            fe_ep_remove_qp(d->ep, d->flow[i].qp);
            fe_qp_destroy(d->flow[i].qp);
        }
        free(d->rt[i].ring);
        free(d->rt[i].imm_q);
        free(d->rt[i].bell_q);
    }
    free(d->flow);
    free(d->rt);
    fe_udpsock_close(d->sc_sock);
    fe_ep_destroy(d->ep);
    free(d);
}

int fe_daq_fds(const struct fe_daq *d, int *fds, int max)
{
    int n = 0;
    if (n < max) fds[n++] = fe_ep_fd(d->ep);
    if (d->sc_sock && n < max) fds[n++] = fe_udpsock_fd(d->sc_sock);
    return n;
}

/* 0, or the errno of the write that failed */
static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno;
        if (w == 0) return EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Completions: queue each message for the consumer, in order. */
static void flow_completions(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct fe_daq_flow *fl = &d->flow[i];
    struct daq_rt *rt = &d->rt[i];
    struct fe_cqe cqe[64];
    int n;
    while ((n = fe_qp_poll_cq(fl->qp, cqe, 64)) > 0) {
        for (int k = 0; k < n; k++) {
            if (cqe[k].status != FE_WC_SUCCESS) {
                if (cqe[k].status != FE_WC_WR_FLUSH_ERR) fl->qp_error = true;
                continue;
            }
            if (cqe[k].opcode != FE_WC_RECV_RDMA_WITH_IMM || !cqe[k].has_imm) continue;
            /* The immediate of message k completes every message up to k (RC places in PSN
             * order): at most M of them since the last doorbell. */
            uint32_t span = cqe[k].imm - (uint32_t)rt->cq_seq + 1;
            if (span == 0 || span > d->cfg.imm_every) {
                fl->seq_errors++; /* a lost or repeated message: resynchronise on it */
                rt->cq_seq = (rt->cq_seq & ~0xFFFFFFFFull) | cqe[k].imm;
                span = 1;
            }
            if (fl->queued + span > d->cfg.slots) { /* cannot happen with the credits posted */
                fl->seq_errors++;
                continue;
            }
            for (uint32_t m = 0; m < span; m++) {
                uint32_t at = (rt->q_head + fl->queued) % d->cfg.slots;
                rt->imm_q[at] = (uint32_t)rt->cq_seq;
                rt->bell_q[at] = m + 1 == span;
                fl->queued++;
                rt->cq_seq++;
            }
            if (!fl->first_ns) fl->first_ns = now_ns;
        }
    }
    if (fe_qp_state(fl->qp) == FE_QPS_ERROR) fl->qp_error = true;
}

static bool consume_one(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct fe_daq_flow *fl = &d->flow[i];
    struct daq_rt *rt = &d->rt[i];
    if (!fl->queued) return false;
    uint32_t imm = rt->imm_q[rt->q_head];
    bool bell = rt->bell_q[rt->q_head];
    uint64_t seq = (fl->next_seq & ~0xFFFFFFFFull) | imm;
    uint32_t slot = (uint32_t)(seq % d->cfg.slots);
    const uint8_t *buf = rt->ring + (size_t)slot * d->cfg.msg_bytes;
    if (d->cfg.verify &&
        fe_data_check(buf, d->cfg.msg_bytes, fl->peer_qpn, seq) != d->cfg.msg_bytes)
        fl->verify_errors++;
    /* After a failed write the record stops: what follows would not start at a message's
     * boundary. Each message it misses is counted. */
    if (d->cfg.record_fd >= 0 && !d->record_errno)
        d->record_errno = write_all(d->cfg.record_fd, buf, d->cfg.msg_bytes);
    if (d->record_errno) fl->record_lost++;
    rt->q_head = (rt->q_head + 1) % d->cfg.slots;
    fl->queued--;
    fl->next_seq = seq + 1;
    fl->msgs++;
    fl->bytes += d->cfg.msg_bytes;
    fl->last_ns = now_ns;
    /* the doorbell's messages are all taken: give the sender its credit back */
    if (bell && fl->qp && fe_qp_state(fl->qp) == FE_QPS_RTS)
        (void)fe_qp_post_recv(fl->qp, seq, NULL, 0);
    return true;
}

/* The consumer: round-robin over flows, at most consume_Bps. */
static void consume(struct fe_daq *d, uint64_t now_ns)
{
    uint64_t rate = d->cfg.consume_Bps;
    int64_t msg = d->cfg.msg_bytes;
    if (rate) {
        uint64_t dt = now_ns - d->tokens_ns;
        d->tokens_ns = now_ns;
        /* the credit is capped at two messages anyway: cap dt so dt x rate cannot overflow */
        if (dt > 100000000ull) dt = 100000000ull;
        d->tokens += (int64_t)(dt * rate / 1000000000u);
        if (d->tokens > 2 * msg) d->tokens = 2 * msg;
    }
    for (;;) {
        if (rate && d->tokens < msg) return;
        bool any = false;
        for (unsigned k = 0; k < d->n_flows; k++) {
            unsigned i = (d->consume_rr + k) % d->n_flows;
            if (consume_one(d, i, now_ns)) {
                d->consume_rr = i + 1;
                any = true;
                if (rate) d->tokens -= msg;
                break;
            }
        }
        if (!any) return;
    }
}

/* A run starts on every front-end at once, when all QPs are connected (or failed): no flow
 * gets a head start. */
static void start_all(struct fe_daq *d)
{
    if (d->started || !d->cfg.send_start || !d->cfg.n_fe) return;
    bool any = false;
    for (unsigned i = 0; i < d->n_flows; i++) {
        const struct fe_sc_host *h = &d->rt[i].host;
        if (h->state == FE_SC_H_RTS && d->flow[i].qp)
            any = true;
        else if (h->state != FE_SC_H_FAILED && h->state != FE_SC_H_CLOSED)
            return;
    }
    d->started = true;
    if (!any) return;
    struct fe_sc_tx_meta tx = {.valid = true, .start = true, .write = true};
    tx.immediate = d->cfg.imm;
    tx.msg_len_bytes = d->cfg.msg_bytes;
    tx.msg_count = d->cfg.count > UINT32_MAX ? 0 : (uint32_t)d->cfg.count;
    tx.gap = d->cfg.gap_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)d->cfg.gap_ns;
    for (unsigned i = 0; i < d->n_flows; i++)
        if (d->rt[i].host.state == FE_SC_H_RTS) (void)fe_sc_host_send_tx_meta(&d->rt[i].host, &tx);
}

/* ---- reconnects: a front-end that went silent (restarted) is connected again ---- */

/* Packets that reached the QP, whatever became of them: its front-end is alive. */
static uint64_t qp_activity(const struct fe_qp *qp)
{
    const struct fe_qp_counters *c = fe_qp_counters(qp);
    return c->rx_pkts + c->rx_dup_pkts + c->rx_ooo_pkts + c->tx_rnr_naks + c->rx_bad_icrc +
           c->rx_dropped + c->rx_bad_rkey + c->rx_bad_access;
}

/* The responder's counters (a receiver sends no requests). */
static void add_counters(struct fe_qp_counters *a, const struct fe_qp_counters *b)
{
    a->rx_pkts += b->rx_pkts;
    a->rx_bytes += b->rx_bytes;
    a->rx_msgs += b->rx_msgs;
    a->rx_dup_pkts += b->rx_dup_pkts;
    a->rx_ooo_pkts += b->rx_ooo_pkts;
    a->tx_acks += b->tx_acks;
    for (int k = 0; k < 5; k++) a->tx_naks[k] += b->tx_naks[k];
    a->tx_rnr_naks += b->tx_rnr_naks;
    a->tx_cnps += b->tx_cnps;
    a->rx_ce_pkts += b->rx_ce_pkts;
    a->rx_bad_icrc += b->rx_bad_icrc;
    a->rx_bad_rkey += b->rx_bad_rkey;
    a->rx_bad_access += b->rx_bad_access;
    a->rx_unsupported += b->rx_unsupported;
    a->rx_dropped += b->rx_dropped;
    a->tx_resp_overflow += b->tx_resp_overflow;
}

void fe_daq_flow_counters(const struct fe_daq *d, unsigned i, struct fe_qp_counters *out)
{
    memset(out, 0, sizeof *out);
    if (i >= d->n_flows) return;
    if (d->flow[i].qp) *out = *fe_qp_counters(d->flow[i].qp);
    add_counters(out, &d->rt[i].past);
}

/* Gives flow i's connection up: the QP goes (its counters are kept), the consumer's sequence
 * starts again (a new connection numbers its messages from 0), and the side channel closes the
 * QP on the front-end (one that restarted answers NO_QP; a dead one times out). */
static void give_up_connection(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct fe_daq_flow *fl = &d->flow[i];
    struct daq_rt *rt = &d->rt[i];
    add_counters(&rt->past, fe_qp_counters(fl->qp));
    fe_ep_remove_qp(d->ep, fl->qp);
    fe_qp_destroy(fl->qp);
    fl->qp = NULL;
    rt->cq_seq = 0;
    rt->q_head = 0;
    fl->next_seq = 0;
    fl->prev_msgs = fl->msgs;
    fl->reconnects++;
    fl->reconnecting = true;
    rt->reopen_at_ns = 0;
    fe_txmeta_resend_reset(&rt->start);
    if (fe_sc_host_close(&rt->host, now_ns) != 0) rt->host.state = FE_SC_H_CLOSED;
    sc_track(d, i, now_ns);
}

/* Opens flow i again with a new first PSN (stale packets of the old connection fall outside
 * its window); the tx-meta start goes out again at RTS, for the messages still missing. */
static void reopen_connection(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct fe_daq_flow *fl = &d->flow[i];
    struct daq_rt *rt = &d->rt[i];
    struct fe_sc_host_config hc = rt->host.cfg;
    if (d->cfg.random_psn) fl->psn = fe_io_random_u32() & FE_PSN_MASK;
    hc.local.psn = fl->psn;
    if (d->cfg.count) {
        uint64_t left = d->cfg.count - fl->msgs;
        hc.start.msg_count = left > UINT32_MAX ? 0 : (uint32_t)left;
    }
    if (fe_sc_host_init(&rt->host, &hc) == 0) fe_sc_host_open(&rt->host, now_ns);
    rt->reopen_at_ns = 0;
    sc_track(d, i, now_ns);
}

/* A reconnecting flow: the next OPEN_QP a side-channel timeout after the last attempt ended
 * (a front-end that refuses at once is not flooded); the new connection is watched once its
 * tx-meta start has gone out. */
static void reconnect_step(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct fe_daq_flow *fl = &d->flow[i];
    struct daq_rt *rt = &d->rt[i];
    uint8_t st = rt->host.state;
    if (st == FE_SC_H_CLOSED || st == FE_SC_H_FAILED) {
        if (!rt->reopen_at_ns) rt->reopen_at_ns = now_ns + d->cfg.sc_timeout_ns;
        if (now_ns >= rt->reopen_at_ns) reopen_connection(d, i, now_ns);
    } else if (st == FE_SC_H_RTS && fl->qp && !rt->host.start_pending) {
        fl->reconnecting = false;
        rt->activity = qp_activity(fl->qp);
        rt->quiet_since_ns = now_ns;
    }
}

/* Watches a streaming flow for silence (cfg.reconnect_ns): a front-end that stopped sending
 * in the middle of a stream is gone or restarted. Messages it completed are consumed first. */
static void watch_flow(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct fe_daq_flow *fl = &d->flow[i];
    struct daq_rt *rt = &d->rt[i];
    if (!d->cfg.reconnect_ns || d->stopping || !rt->has_host) return;
    if (fl->reconnecting) {
        reconnect_step(d, i, now_ns);
        return;
    }
    if (!fl->qp || rt->host.state != FE_SC_H_RTS || !rt->host.cfg.start.valid ||
        rt->host.start_pending || (d->cfg.count && fl->msgs >= d->cfg.count))
        return;
    uint64_t a = qp_activity(fl->qp);
    if (a != rt->activity || !rt->quiet_since_ns) {
        rt->activity = a;
        rt->quiet_since_ns = now_ns;
    } else if (now_ns - rt->quiet_since_ns >= d->cfg.reconnect_ns && !fl->queued) {
        give_up_connection(d, i, now_ns);
    }
}

/* ---- the tx-meta start, resent until the stream shows ---- */

/* Whether flow i waits for the first packet of the stream its tx-meta start asked for. */
static bool start_awaited(const struct fe_daq *d, unsigned i)
{
    return !d->stopping && d->flow[i].qp && qp_activity(d->flow[i].qp) == 0;
}

/* The first wait: a side-channel timeout, plus the stream's gap (the front-end may wait a gap
 * before its first message; the firmware counts it in clock cycles of up to 8 ns). */
static uint64_t start_first_wait(const struct fe_daq *d, const struct fe_sc_host *h)
{
    return d->cfg.sc_timeout_ns + 8ull * h->cfg.start.gap;
}

/* No packet after every start: the front-end never streamed. Without reconnects the flow
 * fails (its QP closed on the front-end); with them, the silence watch opens it again. */
static void start_give_up(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct daq_rt *rt = &d->rt[i];
    struct fe_daq_flow *fl = &d->flow[i];
    char a[32];
    fprintf(stderr,
            "feroce: QP %u: front-end %s sent no packet after %u tx-meta starts (it does not "
            "acknowledge them)%s\n",
            fl->qpn, fe_io_addr_str(rt->host.cfg.fe_ip, rt->host.cfg.fe_port, a, sizeof a),
            rt->start.sends, d->cfg.reconnect_ns ? "; it will be reconnected" : "; giving it up");
    if (d->cfg.reconnect_ns) return;
    fl->sc_state = FE_SC_H_FAILED;
    (void)fe_sc_host_close(&rt->host, now_ns);
}

/* A lost stop would leave the sender streaming until CLOSE_QP (the drain would wait for a
 * quiet that never comes): the stop goes a few times, a side-channel timeout apart. */
static void stop_watch(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct daq_rt *rt = &d->rt[i];
    if (rt->stop_sent)
        (void)fe_txmeta_stop_watch(&rt->stop, &rt->host, d->cfg.sc_timeout_ns, now_ns);
}

/* A front-end does not acknowledge a tx-meta start (the firmware neither), so a lost one
 * would stall the QP for good: the start goes again, backing off, until a packet of the
 * stream reaches the QP (txmeta.c). A duplicate is harmless: the firmware ignores a start
 * while its transfer runs, feroce's front-end a start it has already applied (frontend.c). */
static void start_watch(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct daq_rt *rt = &d->rt[i];
    if (fe_txmeta_start_watch(&rt->start, &rt->host, start_awaited(d, i),
                              start_first_wait(d, &rt->host), d->cfg.sc_tries,
                              now_ns) == FE_TXMETA_GIVE_UP)
        start_give_up(d, i, now_ns);
}

/* Every side-channel reply waiting, up to SC_RX_MAX a step: a step costs a pass over all
 * flows, so a receiver of many QPs that took a few replies a step would leave the rest to
 * overflow the socket. */
static void sc_receive(struct fe_daq *d, uint64_t now_ns)
{
    uint8_t b[8][128];
    struct fe_dgram g[8];
    for (unsigned got = 0; got < SC_RX_MAX;) {
        for (int k = 0; k < 8; k++) g[k] = (struct fe_dgram){.buf = b[k], .cap = sizeof b[k]};
        int n = fe_udpsock_recv(d->sc_sock, g, 8);
        for (int k = 0; k < n; k++)
            sc_input(d, now_ns, g[k].buf, g[k].trunc ? 129 : g[k].len, g[k].ip, g[k].port);
        if (n < 8) return;
        got += (unsigned)n;
    }
}

/* A request the host has not sent yet (tries 0): it waits for room in the window. */
static bool sc_request_unsent(const struct fe_sc_host *h)
{
    return h->outstanding != FE_SC_REQ_NULL && h->tries == 0;
}

static unsigned sc_count_in_flight(const struct fe_daq *d)
{
    unsigned n = 0;
    for (unsigned i = 0; i < d->n_flows; i++) {
        const struct fe_sc_host *h = &d->rt[i].host;
        n += d->rt[i].has_host && h->outstanding != FE_SC_REQ_NULL && h->tries > 0;
    }
    return n;
}

/* Whether flow i's host may send now: anything but a new request goes, a new request only
 * while fewer than `in_flight` (SC_WINDOW) are in flight. */
static bool sc_may_send(const struct fe_daq *d, unsigned i, unsigned in_flight)
{
    return !sc_request_unsent(&d->rt[i].host) || in_flight < SC_WINDOW;
}

static void sc_transmit(struct fe_daq *d, unsigned i, uint64_t now_ns)
{
    struct fe_sc_host *h = &d->rt[i].host;
    uint8_t msg[FE_SC_MSG_LEN];
    while (sc_may_send(d, i, d->sc_in_flight)) {
        bool fresh = sc_request_unsent(h);
        if (!fe_sc_host_poll_tx(h, now_ns, msg)) return;
        sc_send(d, i, msg, now_ns);
        if (fresh && !sc_request_unsent(h)) d->sc_in_flight++;
    }
}

void fe_daq_step(struct fe_daq *d, uint64_t now_ns, unsigned ready)
{
    if (d->sc_sock && (ready & 2u)) sc_receive(d, now_ns);
    if ((ready & 1u) || fe_ep_rx_pending(d->ep)) fe_ep_poll_rx(d->ep, now_ns, 512);
    fe_ep_handle_expiry(d->ep, now_ns);
    for (unsigned i = 0; i < d->n_flows; i++)
        if (d->flow[i].qp) flow_completions(d, i, now_ns);
    /* An ACK says the data is placed, not consumed: it leaves before the consumer reads (and
     * verifies) the messages, or the sender's window would wait for the consumer as well. The
     * credit for a slot is given back only once the consumer is done with it (consume_one). */
    fe_ep_poll_tx(d->ep, now_ns, 512);
    consume(d, now_ns);
    start_all(d);
    d->sc_in_flight = sc_count_in_flight(d);
    for (unsigned i = 0; i < d->n_flows; i++) {
        if (!d->rt[i].has_host) continue;
        sc_transmit(d, i, now_ns);
        sc_track(d, i, now_ns);
        start_watch(d, i, now_ns);
        stop_watch(d, i, now_ns);
        watch_flow(d, i, now_ns);
        sc_transmit(d, i, now_ns);
    }
    fe_ep_poll_tx(d->ep, now_ns, 512);
}

/* When watch_flow has something to do for flow i: the silence limit, or the next open. */
static uint64_t reconnect_deadline(const struct fe_daq *d, unsigned i)
{
    const struct daq_rt *rt = &d->rt[i];
    if (!d->cfg.reconnect_ns || d->stopping || !rt->has_host) return UINT64_MAX;
    if (d->flow[i].reconnecting) return rt->reopen_at_ns ? rt->reopen_at_ns : UINT64_MAX;
    if (!d->flow[i].qp || !rt->quiet_since_ns) return UINT64_MAX;
    return rt->quiet_since_ns + d->cfg.reconnect_ns;
}

uint64_t fe_daq_next_deadline(const struct fe_daq *d)
{
    uint64_t t = fe_ep_next_deadline(d->ep);
    /* counted again: requests that timed out in the last step left the window */
    unsigned in_flight = sc_count_in_flight(d);
    for (unsigned i = 0; i < d->n_flows; i++) {
        if (d->rt[i].has_host && sc_may_send(d, i, in_flight)) {
            uint64_t h = fe_sc_host_next_deadline(&d->rt[i].host);
            if (h < t) t = h;
        }
        uint64_t r = reconnect_deadline(d, i);
        if (r < t) t = r;
        uint64_t s = fe_txmeta_resend_deadline(&d->rt[i].start);
        if (s < t) t = s;
        s = fe_txmeta_resend_deadline(&d->rt[i].stop);
        if (s < t) t = s;
        if (d->flow[i].queued) {
            uint64_t c = d->tokens_ns;
            if (d->cfg.consume_Bps && d->tokens < (int64_t)d->cfg.msg_bytes)
                c += (uint64_t)((d->cfg.msg_bytes - (uint64_t)d->tokens) * 1000000000ull /
                                d->cfg.consume_Bps) +
                     1;
            if (c < t) t = c;
        }
    }
    return t;
}

void fe_daq_stop(struct fe_daq *d, uint64_t now_ns)
{
    (void)now_ns;
    d->stopping = true;
    for (unsigned i = 0; i < d->n_flows; i++) {
        struct daq_rt *rt = &d->rt[i];
        if (!rt->has_host || rt->stop_sent || rt->host.state != FE_SC_H_RTS) continue;
        struct fe_sc_tx_meta tx = rt->host.cfg.start;
        tx.start = false;
        if (fe_sc_host_send_tx_meta(&rt->host, &tx) == 0) rt->stop_sent = true;
    }
}

void fe_daq_close(struct fe_daq *d, uint64_t now_ns)
{
    d->stopping = true;
    for (unsigned i = 0; i < d->n_flows; i++) {
        struct daq_rt *rt = &d->rt[i];
        if (rt->has_host && rt->host.state != FE_SC_H_CLOSED && rt->host.state != FE_SC_H_CLOSING)
            (void)fe_sc_host_close(&rt->host, now_ns);
    }
}

int fe_daq_record_error(const struct fe_daq *d)
{
    return d->record_errno;
}

bool fe_daq_sc_idle(const struct fe_daq *d)
{
    for (unsigned i = 0; i < d->n_flows; i++) {
        const struct daq_rt *rt = &d->rt[i];
        if (rt->has_host && fe_sc_host_next_deadline(&rt->host) != UINT64_MAX) return false;
    }
    return true;
}

bool fe_daq_done(const struct fe_daq *d)
{
    if (!d->cfg.count) return false;
    for (unsigned i = 0; i < d->n_flows; i++) {
        const struct fe_daq_flow *fl = &d->flow[i];
        if (fl->qp_error || fl->sc_state == FE_SC_H_FAILED) continue;
        if (d->cfg.imm) {
            if (fl->msgs < d->cfg.count) return false;
        } else {
            if (!fl->qp || fe_qp_counters(fl->qp)->rx_msgs < d->cfg.count) return false;
        }
    }
    return true;
}

uint64_t fe_daq_verify_rings(struct fe_daq *d)
{
    uint64_t bad = 0;
    for (unsigned i = 0; i < d->n_flows; i++) {
        struct fe_daq_flow *fl = &d->flow[i];
        if (!fl->qp) continue;
        uint64_t written = fe_qp_counters(fl->qp)->rx_msgs;
        uint64_t nslots = written < d->cfg.slots ? written : d->cfg.slots;
        for (uint32_t s = 0; s < nslots; s++) {
            /* the last message that went to slot s */
            uint64_t last = written - 1 - ((written - 1 - s) % d->cfg.slots);
            const uint8_t *buf = d->rt[i].ring + (size_t)s * d->cfg.msg_bytes;
            if (d->cfg.verify &&
                fe_data_check(buf, d->cfg.msg_bytes, fl->peer_qpn, last) != d->cfg.msg_bytes) {
                fl->verify_errors++;
                bad++;
            }
        }
        fl->msgs = written;
        fl->bytes = written * d->cfg.msg_bytes;
    }
    return bad;
}
