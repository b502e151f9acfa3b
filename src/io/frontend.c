/* A software front-end board (see include/feroce/frontend.h): side channel in the FPGA role,
 * one QP per connection, a data-pattern stream per QP. Protocol work is the core's. */
#include "feroce/frontend.h"
#include "io/fail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MSG_BYTES (64u << 20)
#define MAX_WINDOW    1024u

struct flow_rt {
    uint8_t *mem; /* window x msg_bytes: messages posted and not yet completed */
    size_t mem_len;
    uint32_t window;
    /* Buffers are reused last-freed first: a message takes the buffer of the message that
     * completed last, so the buffers in use are about those in flight, not the whole window,
     * and stay in cache between fill, ICRC and the kernel's copy (round robin over a window
     * of megabytes would miss the cache on every fill). */
    uint32_t *buf_of;    /* window entries: the buffer of message seq, at seq % window */
    uint32_t *free_bufs; /* window entries: a stack of free buffers, n_free of them */
    uint32_t n_free;
    uint64_t next_post_ns;
    uint64_t data_pkts;   /* data packets seen by the drop hook */
    uint32_t psn_dropped; /* bit j: drop_psn[j] already dropped once */
    /* drop_every drops a PSN at most once: a resend is lost only if that PSN never was, so
     * a go-back window of k x N packets cannot lose the same PSNs on every round (a livelock,
     * not a test). Bit (psn mod 2^16) for the last 2^16 PSNs, far more than a replay window;
     * bits are cleared as new PSNs appear. */
    uint64_t *dropped; /* 1024 words, allocated with drop_every */
    uint32_t max_psn;  /* newest PSN seen */
    bool seen_any;
    /* The tx-meta start applied since the QP opened (or its last stop): a host resends its
     * start until it sees the stream (none is acknowledged), so the same start again is a
     * duplicate, never a second stream. */
    bool meta_started;
    struct fe_sc_tx_meta meta_start;
};

enum { DROP_BITS = 1u << 16 };

static bool drop_bit(const uint64_t *b, uint32_t psn)
{
    return b[(psn % DROP_BITS) / 64] >> (psn % 64) & 1u;
}

static void drop_bit_set(uint64_t *b, uint32_t psn, bool on)
{
    uint64_t m = 1ull << (psn % 64);
    uint64_t *w = &b[(psn % DROP_BITS) / 64];
    *w = on ? *w | m : *w & ~m;
}

struct fe_frontend {
    struct fe_frontend_config cfg;
    struct fe_ep *ep;
    struct fe_udpsock *sc_sock;       /* UDP backend: the side channel's socket */
    struct fe_udpsock *sc_reply_sock; /* ... replies from another port (firmware mode) */
    struct fe_sc_fe sc;
    struct fe_frontend_flow flow[FE_FRONTEND_MAX_QPS];
    struct flow_rt rt[FE_FRONTEND_MAX_QPS];
    bool any_started, stopped;
    uint64_t first_start_ns;
    uint64_t now_ns; /* of the current step (for the raw side-channel hook) */
};

void fe_frontend_config_default(struct fe_frontend_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    fe_ep_config_default(&cfg->ep);
    cfg->sc_enable = true;
    cfg->sc_port = FE_SC_PORT;
    fe_sc_fe_config_default(&cfg->sc);
    cfg->n_qps = 1;
    cfg->local_qpn = FE_SC_FIRST_QPN;
    cfg->stream.op = FE_WR_WRITE_IMM;
    cfg->stream.msg_bytes = 65536;
    cfg->stream.slots = 64;
    cfg->stream.pattern = FE_PAT_COUNTER;
    cfg->stream.imm_every = 1;
    fe_qp_config_default(&cfg->qp);
}

const struct fe_frontend_flow *fe_frontend_flow(const struct fe_frontend *f, unsigned i)
{
    return i < FE_FRONTEND_MAX_QPS ? &f->flow[i] : NULL;
}
struct fe_ep *fe_frontend_ep(struct fe_frontend *f)
{
    return f->ep;
}
const struct fe_sc_fe *fe_frontend_sc(const struct fe_frontend *f)
{
    return &f->sc;
}

/* ---- flows ---- */

static void flow_close(struct fe_frontend *f, unsigned i)
{
    struct fe_frontend_flow *fl = &f->flow[i];
    if (fl->qp) {
        fl->final = *fe_qp_counters(fl->qp);
        fl->closed = true;
        fe_ep_remove_qp(f->ep, fl->qp);
        fe_qp_destroy(fl->qp);
        fl->qp = NULL;
    }
    fl->streaming = false;
}

static int flow_open(struct fe_frontend *f, unsigned i, uint32_t local_qpn,
                     const struct fe_sc_qp_info *peer, uint16_t peer_port, uint64_t now_ns,
                     char *errbuf, size_t errcap)
{
    flow_close(f, i);
    struct fe_frontend_flow *fl = &f->flow[i];
    struct flow_rt *rt = &f->rt[i];
    free(rt->mem);
    free(rt->dropped);
    free(rt->buf_of);
    memset(fl, 0, sizeof *fl);
    memset(rt, 0, sizeof *rt);
    if (f->cfg.drop_every && !(rt->dropped = calloc(DROP_BITS / 64, sizeof(uint64_t)))) {
        if (errbuf) snprintf(errbuf, errcap, "out of memory");
        return FE_ENOMEM;
    }
    struct fe_qp_config qc = f->cfg.qp;
    qc.local_qpn = local_qpn;
    qc.remote_qpn = peer->qpn;
    qc.sq_psn = peer->psn; /* the front-end's first send PSN is the host's PSN */
    qc.rq_psn = fe_io_random_u32() & FE_PSN_MASK; /* a host sends us no requests: no guess */
    qc.remote_va = peer->va;
    qc.remote_rkey = peer->rkey;
    int err = 0;
    const char *why = NULL;
    struct fe_qp *qp = fe_qp_create(&qc, now_ns, &err, &why);
    if (!qp) {
        if (errbuf)
            snprintf(errbuf, errcap, "cannot create QP %u: %s%s%s", local_qpn, fe_strerror(err),
                     why ? " in " : "", why ? why : "");
        return err ? err : FE_EINVAL;
    }
    uint32_t ip = f->cfg.to_ip ? f->cfg.to_ip : peer->ip;
    uint16_t port = f->cfg.to_ip ? f->cfg.to_port : peer_port;
    err = fe_ep_add_qp(f->ep, qp, ip, port, 0);
    if (err) {
        fe_qp_destroy(qp);
        if (errbuf)
            snprintf(errbuf, errcap, "cannot attach QP %u: %s", local_qpn, fe_strerror(err));
        return err;
    }
    fl->used = true;
    fl->qp = qp;
    fl->qpn = local_qpn;
    fl->peer_qpn = peer->qpn;
    return 0;
}

/* The buffers of a stream of w messages of msg_bytes: all free. Messages of the last stream
 * still in flight keep theirs (the transport sends from them until they complete): then the
 * layout stays, and a stream that needs another one cannot start. */
static bool flow_buffers(struct fe_frontend_flow *fl, struct flow_rt *rt, uint32_t w,
                         uint32_t msg_bytes)
{
    if (fl->posted != fl->completed)
        return rt->buf_of && w == rt->window && msg_bytes == fl->stream.msg_bytes;
    size_t need = (size_t)w * msg_bytes;
    if (rt->mem_len < need) {
        uint8_t *m = realloc(rt->mem, need);
        if (!m) return false;
        rt->mem = m;
        rt->mem_len = need;
    }
    uint32_t *idx = realloc(rt->buf_of, 2 * (size_t)w * sizeof *idx);
    if (!idx) return false;
    rt->buf_of = idx;
    rt->free_bufs = idx + w;
    for (uint32_t k = 0; k < w; k++) rt->free_bufs[k] = w - 1 - k; /* buffer 0 on top */
    rt->n_free = w;
    rt->window = w;
    return true;
}

static void flow_start(struct fe_frontend *f, unsigned i, const struct fe_sc_tx_meta *tx,
                       uint64_t now_ns)
{
    struct fe_frontend_flow *fl = &f->flow[i];
    struct flow_rt *rt = &f->rt[i];
    if (!fl->qp || fl->error || fl->streaming) return;
    struct fe_stream_config s = f->cfg.stream;
    if (tx) {
        s.op = tx->write ? (tx->immediate ? FE_WR_WRITE_IMM : FE_WR_WRITE)
                         : (tx->immediate ? FE_WR_SEND_IMM : FE_WR_SEND);
        if (tx->msg_len_bytes) s.msg_bytes = tx->msg_len_bytes;
        if (tx->msg_count) s.count = tx->msg_count;
        if (tx->gap) s.gap_ns = tx->gap;
    }
    if (!s.msg_bytes || s.msg_bytes > MAX_MSG_BYTES || !s.slots) {
        fl->error = true;
        return;
    }
    uint64_t w = f->cfg.qp.replay_bytes / s.msg_bytes + 2;
    if (w > f->cfg.qp.sq_depth) w = f->cfg.qp.sq_depth;
    if (w > MAX_WINDOW) w = MAX_WINDOW;
    if (w < 1) w = 1;
    if (!flow_buffers(fl, rt, (uint32_t)w, s.msg_bytes)) {
        fl->error = true;
        return;
    }
    /* A new stream continues the sequence numbers: the receiver's ring and immediates go on. */
    rt->next_post_ns = now_ns;
    fl->stream = s;
    fl->streaming = true;
    fl->finished = false;
    fl->started_ns = now_ns;
    if (!f->any_started) {
        f->any_started = true;
        f->first_start_ns = now_ns;
    }
}

/* Messages are generated just before the QP needs them (at most POST_AHEAD posted and not yet
 * started), as a front-end fills its buffer when data arrives: the data is still in cache when it
 * is framed. The window of posted messages still bounds what is in flight. */
enum { POST_AHEAD = 3 };

static bool can_post(const struct fe_frontend_flow *fl, const struct flow_rt *rt)
{
    return fl->streaming && fl->posted - fl->completed < rt->window &&
           (!fl->stream.count || fl->posted < fl->stream.count) &&
           fe_qp_sq_unstarted(fl->qp) < POST_AHEAD;
}

static void flow_post(struct fe_frontend *f, unsigned i, uint64_t now_ns)
{
    struct fe_frontend_flow *fl = &f->flow[i];
    struct flow_rt *rt = &f->rt[i];
    const struct fe_stream_config *s = &fl->stream;
    while (can_post(fl, rt) && now_ns >= rt->next_post_ns) {
        if (!rt->n_free) break; /* cannot happen: a free buffer per message not in flight */
        uint32_t b = rt->free_bufs[rt->n_free - 1];
        uint8_t *buf = rt->mem + (size_t)b * s->msg_bytes;
        fe_data_fill(s->pattern, buf, s->msg_bytes, fl->qpn, fl->posted);
        enum fe_wr_op op = s->op;
        if (op == FE_WR_WRITE_IMM && !fe_stream_has_imm(fl->posted, s->count, s->imm_every))
            op = FE_WR_WRITE; /* doorbells on every imm_every-th message only */
        struct fe_wr wr = {
            .op = op,
            .cookie = fl->posted,
            .data = buf,
            .len = s->msg_bytes,
            .remote_offset = fe_stream_offset(fl->posted, s->msg_bytes, s->slots),
            .imm = (uint32_t)fl->posted,
        };
        int rc = fe_qp_post_send(fl->qp, &wr);
        if (rc == FE_ENOSPC) break;
        if (rc) {
            fl->error = true;
            fl->streaming = false;
            break;
        }
        rt->buf_of[fl->posted % rt->window] = b;
        rt->n_free--;
        fl->posted++;
        if (s->gap_ns) { /* a late post catches up by at most one gap */
            uint64_t base = rt->next_post_ns + s->gap_ns < now_ns ? now_ns : rt->next_post_ns;
            rt->next_post_ns = base + s->gap_ns;
        }
    }
    if (fl->streaming && s->count && fl->posted >= s->count) fl->streaming = false;
}

static void flow_complete(struct fe_frontend *f, unsigned i, uint64_t now_ns)
{
    struct fe_frontend_flow *fl = &f->flow[i];
    struct fe_cqe cqe[64];
    int n;
    while ((n = fe_qp_poll_cq(fl->qp, cqe, 64)) > 0) {
        for (int k = 0; k < n; k++) {
            if (cqe[k].status == FE_WC_SUCCESS) {
                struct flow_rt *rt = &f->rt[i];
                if (rt->n_free < rt->window) /* messages complete in order */
                    rt->free_bufs[rt->n_free++] = rt->buf_of[fl->completed % rt->window];
                fl->completed++;
                fl->bytes_completed += cqe[k].byte_len ? cqe[k].byte_len : fl->stream.msg_bytes;
            } else if (!fl->error) {
                fl->error = true;
                fl->fail_status = cqe[k].status;
            }
        }
    }
    if (fe_qp_state(fl->qp) == FE_QPS_ERROR && !fl->error) {
        fl->error = true;
        fl->fail_status = FE_WC_WR_FLUSH_ERR;
    }
    if (fl->error) fl->streaming = false;
    if (!fl->streaming && !fl->finished && fl->completed == fl->posted &&
        (fl->posted > 0 || f->stopped)) {
        fl->finished = true;
        fl->finished_ns = now_ns;
    }
}

/* ---- side channel ---- */

static bool same_tx_meta(const struct fe_sc_tx_meta *a, const struct fe_sc_tx_meta *b)
{
    return a->write == b->write && a->immediate == b->immediate &&
           a->msg_len_bytes == b->msg_len_bytes && a->msg_count == b->msg_count && a->gap == b->gap;
}

/* A start the flow has already applied (the host resent it) changes nothing: the stream it
 * started goes on, or has ended, and is not restarted. */
static void start_by_meta(struct fe_frontend *f, unsigned i, const struct fe_sc_tx_meta *tx,
                          uint64_t now_ns)
{
    struct flow_rt *rt = &f->rt[i];
    if (rt->meta_started && same_tx_meta(&rt->meta_start, tx)) return;
    bool was_streaming = f->flow[i].streaming;
    flow_start(f, i, tx, now_ns);
    if (was_streaming || !f->flow[i].streaming) return;
    rt->meta_started = true;
    rt->meta_start = *tx;
}

static void sc_event(struct fe_frontend *f, const struct fe_sc_event *ev, uint64_t now_ns)
{
    unsigned i = ev->slot;
    if (i >= FE_FRONTEND_MAX_QPS) return;
    switch (ev->type) {
    case FE_SC_EV_OPENED: {
        struct fe_sc_qp_info peer = ev->peer;
        peer.psn = ev->sq_psn;
        char err[160];
        if (flow_open(f, i, ev->qpn, &peer, FE_ROCEV2_UDP_PORT, now_ns, err, sizeof err) != 0) {
            fprintf(stderr, "feroce: side channel: %s\n", err);
            fe_sc_fe_release(&f->sc, ev->qpn);
        }
        break;
    }
    case FE_SC_EV_UPDATED: /* new host parameters: a fresh QP (nothing was sent on the old one) */
    {
        struct fe_sc_qp_info peer = ev->peer;
        peer.psn = ev->sq_psn;
        if (!f->flow[i].streaming)
            flow_open(f, i, ev->qpn, &peer, FE_ROCEV2_UDP_PORT, now_ns, NULL, 0);
        break;
    }
    case FE_SC_EV_RTS:
        if (f->cfg.autostart) flow_start(f, i, NULL, now_ns);
        break;
    case FE_SC_EV_START:
        start_by_meta(f, i, &ev->tx, now_ns);
        break;
    case FE_SC_EV_STOP:
        f->flow[i].streaming = false;
        f->rt[i].meta_started = false;
        break;
    case FE_SC_EV_CLOSED:
        if (f->flow[i].qp) { /* take the last completions into the final counts */
            /* UDP: the ACKs come on another socket; raw: they were read before (same queue) */
            if (f->sc_sock) fe_ep_poll_rx(f->ep, now_ns, 512);
            flow_complete(f, i, now_ns);
        }
        flow_close(f, i);
        break;
    default:
        break;
    }
}

static void sc_reply(struct fe_frontend *f, const struct fe_sc_fe_result *res, uint64_t now_ns)
{
    if (!res->reply) return;
    if (f->sc_sock) {
        struct fe_dgram d = {.buf = (uint8_t *)res->reply_msg,
                             .len = FE_SC_MSG_LEN,
                             .ip = res->reply_ip,
                             .port = res->reply_port};
        (void)fe_udpsock_send(f->sc_reply_sock ? f->sc_reply_sock : f->sc_sock, &d, 1);
    } else {
        /* raw: the host's MAC may still be resolving; the host retries on its timeout */
        uint16_t sport = f->cfg.sc_reply_src_port ? f->cfg.sc_reply_src_port : f->cfg.sc_port;
        (void)fe_ep_send_udp(f->ep, now_ns, res->reply_ip, sport, res->reply_port, res->reply_msg,
                             FE_SC_MSG_LEN);
    }
}

static void sc_input(struct fe_frontend *f, uint64_t now_ns, const uint8_t *buf, size_t len,
                     uint32_t ip, uint16_t port)
{
    struct fe_sc_fe_result res;
    if (fe_sc_fe_input(&f->sc, now_ns, buf, len, ip, port, &res) != 0) return;
    for (int e = 0; e < res.n_events; e++) sc_event(f, &res.ev[e], now_ns);
    sc_reply(f, &res, now_ns);
}

static void raw_udp_hook(void *arg, uint64_t now_ns, uint32_t src_ip, uint16_t src_port,
                         uint16_t dst_port, const uint8_t *payload, size_t len)
{
    struct fe_frontend *f = arg;
    if (dst_port == f->cfg.sc_port) sc_input(f, now_ns, payload, len, src_ip, src_port);
}

static bool drop_hook(void *arg, uint32_t qpn, const struct fe_pkt *pkt)
{
    struct fe_frontend *f = arg;
    if (!(fe_opcode_flags(pkt->bth.opcode) & FE_OPF_REQUEST)) return false;
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        struct fe_frontend_flow *fl = &f->flow[i];
        if (!fl->used || fl->qpn != qpn) continue;
        struct flow_rt *rt = &f->rt[i];
        rt->data_pkts++;
        uint32_t psn = pkt->bth.psn & FE_PSN_MASK;
        bool drop = false;
        if (rt->dropped) {
            int32_t ahead = rt->seen_any ? fe_psn_diff(psn, rt->max_psn) : 1;
            if (ahead >= (int32_t)DROP_BITS)
                memset(rt->dropped, 0, DROP_BITS / 8);
            else
                for (int32_t k = 1; k <= ahead; k++) /* new PSNs: forget their old aliases */
                    drop_bit_set(rt->dropped, fe_psn_add(psn, k - ahead), false);
            if (ahead > 0) rt->max_psn = psn;
            rt->seen_any = true;
            drop = rt->data_pkts % f->cfg.drop_every == 0 && !drop_bit(rt->dropped, psn);
            if (drop) drop_bit_set(rt->dropped, psn, true);
        }
        for (unsigned j = 0; j < f->cfg.n_drop_psn && j < 32; j++) {
            if (f->cfg.drop_psn[j] == pkt->bth.psn && !(rt->psn_dropped & (1u << j))) {
                rt->psn_dropped |= 1u << j;
                drop = true;
            }
        }
        if (drop) fl->dropped_on_purpose++;
        return drop;
    }
    return false;
}

/* ---- lifecycle ---- */

/* Rejects a configuration the front-end cannot run (errbuf says why). */
static int validate_config(const struct fe_frontend_config *cfg, char *errbuf, size_t errcap)
{
    if (cfg->stream.op != FE_WR_WRITE && cfg->stream.op != FE_WR_WRITE_IMM &&
        cfg->stream.op != FE_WR_SEND && cfg->stream.op != FE_WR_SEND_IMM) {
        snprintf(errbuf, errcap, "unknown operation");
        return FE_EINVAL;
    }
    if (!cfg->stream.slots || !cfg->stream.msg_bytes || cfg->stream.msg_bytes > MAX_MSG_BYTES) {
        snprintf(errbuf, errcap, "message size must be 1..%u bytes and slots >= 1", MAX_MSG_BYTES);
        return FE_EINVAL;
    }
    if (cfg->stream.pattern == FE_PAT_FRAMES && cfg->stream.msg_bytes < FE_DETFRAME_HDR) {
        snprintf(errbuf, errcap, "frames need messages of at least %d bytes", FE_DETFRAME_HDR);
        return FE_EINVAL;
    }
    if (!cfg->sc_enable && (cfg->n_qps < 1 || cfg->n_qps > FE_FRONTEND_MAX_QPS)) {
        snprintf(errbuf, errcap, "1..%d QPs", FE_FRONTEND_MAX_QPS);
        return FE_EINVAL;
    }
    return 0;
}

/* The firmware answers from a port of its own: a second socket, used for sending only. */
static int open_sc_reply(struct fe_frontend *f, struct fe_udpsock_config *uc, char *errbuf,
                         size_t errcap)
{
    if (!f->cfg.sc_reply_src_port || f->cfg.sc_reply_src_port == f->cfg.sc_port) return 0;
    int e = 0;
    uc->bind_port = f->cfg.sc_reply_src_port;
    f->sc_reply_sock = fe_udpsock_open(uc, &e);
    if (f->sc_reply_sock) return 0;
    char a[32];
    snprintf(errbuf, errcap, "cannot bind %s for the side channel's replies: %s",
             fe_io_addr_str(f->cfg.sc_bind_ip, f->cfg.sc_reply_src_port, a, sizeof a),
             fe_io_fail_str(e));
    return e ? e : FE_EINVAL;
}

/* The side channel in the FPGA role: hosts open the QPs. It listens on a UDP socket of its own
 * on the UDP backend, through the endpoint's UDP hook on the raw one (the interface carries no
 * kernel address). */
static int open_sc(struct fe_frontend *f, char *errbuf, size_t errcap)
{
    const struct fe_frontend_config *cfg = &f->cfg;
    struct fe_sc_fe_config sc = cfg->sc;
    if (!sc.local_ip) fe_ep_local(f->ep, &sc.local_ip, NULL);
    if (!sc.local_ip) sc.local_ip = cfg->sc_bind_ip;
    int e = fe_sc_fe_init(&f->sc, &sc);
    if (e) {
        snprintf(errbuf, errcap, "bad side-channel configuration");
        return e;
    }
    if (cfg->ep.backend != FE_BACKEND_UDP) {
        fe_ep_set_udp_hook(f->ep, raw_udp_hook, f);
        return 0;
    }
    struct fe_udpsock_config uc;
    fe_udpsock_config_default(&uc);
    uc.bind_ip = cfg->sc_bind_ip;
    uc.bind_port = cfg->sc_port;
    uc.rcvbuf_bytes = uc.sndbuf_bytes = 256u << 10;
    f->sc_sock = fe_udpsock_open(&uc, &e);
    if (!f->sc_sock) {
        char a[32];
        snprintf(errbuf, errcap, "cannot listen on %s for the side channel: %s",
                 fe_io_addr_str(cfg->sc_bind_ip, cfg->sc_port, a, sizeof a), fe_io_fail_str(e));
        return e ? e : FE_EINVAL;
    }
    return open_sc_reply(f, &uc, errbuf, errcap);
}

/* Without a side channel the peers are configured: every QP is opened and started now. */
static int open_manual_flows(struct fe_frontend *f, uint64_t now_ns, char *errbuf, size_t errcap)
{
    const struct fe_frontend_config *cfg = &f->cfg;
    for (unsigned i = 0; i < cfg->n_qps; i++) {
        struct fe_sc_qp_info peer = {
            .qpn = (cfg->peer_qpn + i) & 0xFFFFFF,
            .psn = cfg->peer_psn,
            .rkey = cfg->peer_rkey + i,
            .va = cfg->peer_va + (uint64_t)i * cfg->stream.slots * cfg->stream.msg_bytes,
            .ip = cfg->peer_ip,
        };
        int e =
            flow_open(f, i, (cfg->local_qpn + i) & 0xFFFFFF, &peer,
                      cfg->peer_port ? cfg->peer_port : FE_ROCEV2_UDP_PORT, now_ns, errbuf, errcap);
        if (e) return e;
        flow_start(f, i, NULL, now_ns);
    }
    return 0;
}

struct fe_frontend *fe_frontend_create(const struct fe_frontend_config *cfg, uint64_t now_ns,
                                       int *err, char *errbuf, size_t errcap)
{
    fe_io_fail_clear();
    struct fe_frontend *f = calloc(1, sizeof *f);
    if (!f) {
        if (err) *err = FE_ENOMEM;
        return NULL;
    }
    f->cfg = *cfg;
    if (errbuf && errcap) errbuf[0] = 0;
    int e = validate_config(cfg, errbuf, errcap);
    if (e) goto fail;
    f->ep = fe_ep_create(&cfg->ep, &e);
    if (!f->ep) {
        fe_ep_open_error(&cfg->ep, e, errbuf, errcap);
        goto fail;
    }
    fe_ep_set_drop_hook(f->ep, drop_hook, f);
    e = cfg->sc_enable ? open_sc(f, errbuf, errcap) : open_manual_flows(f, now_ns, errbuf, errcap);
    if (e) goto fail;
    if (err) *err = 0;
    return f;
fail:
    fe_frontend_destroy(f);
    if (err) *err = e ? e : FE_EINVAL;
    return NULL;
}

void fe_frontend_destroy(struct fe_frontend *f)
{
    if (!f) return;
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        flow_close(f, i);
        free(f->rt[i].mem);
        free(f->rt[i].dropped);
        free(f->rt[i].buf_of);
    }
    fe_udpsock_close(f->sc_sock);
    fe_udpsock_close(f->sc_reply_sock);
    fe_ep_destroy(f->ep);
    free(f);
}

int fe_frontend_fds(const struct fe_frontend *f, int *fds, int max)
{
    int n = 0;
    if (n < max) fds[n++] = fe_ep_fd(f->ep);
    if (f->sc_sock && n < max) fds[n++] = fe_udpsock_fd(f->sc_sock);
    return n;
}

void fe_frontend_stop(struct fe_frontend *f, uint64_t now_ns)
{
    (void)now_ns;
    f->stopped = true;
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) f->flow[i].streaming = false;
}

void fe_frontend_step(struct fe_frontend *f, uint64_t now_ns, unsigned ready)
{
    f->now_ns = now_ns;
    if (f->sc_sock && (ready & 2u)) {
        uint8_t b[8][128];
        struct fe_dgram d[8];
        for (int i = 0; i < 8; i++) d[i] = (struct fe_dgram){.buf = b[i], .cap = sizeof b[i]};
        int n = fe_udpsock_recv(f->sc_sock, d, 8);
        for (int i = 0; i < n; i++)
            sc_input(f, now_ns, d[i].buf, d[i].trunc ? 129 : d[i].len, d[i].ip, d[i].port);
    }
    if ((ready & 1u) || fe_ep_rx_pending(f->ep)) fe_ep_poll_rx(f->ep, now_ns, 512);
    fe_ep_handle_expiry(f->ep, now_ns);
    if (f->cfg.duration_ns && f->any_started && !f->stopped &&
        now_ns >= f->first_start_ns + f->cfg.duration_ns)
        fe_frontend_stop(f, now_ns);
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        if (!f->flow[i].qp) continue;
        flow_complete(f, i, now_ns);
        flow_post(f, i, now_ns);
    }
    fe_ep_poll_tx(f->ep, now_ns, 512);
}

uint64_t fe_frontend_next_deadline(const struct fe_frontend *f)
{
    uint64_t d = fe_ep_next_deadline(f->ep);
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        const struct fe_frontend_flow *fl = &f->flow[i];
        /* the QP took messages in the last step: the next ones can be made now */
        if (fl->qp && can_post(fl, &f->rt[i]) && f->rt[i].next_post_ns < d)
            d = f->rt[i].next_post_ns;
    }
    if (f->cfg.duration_ns && f->any_started && !f->stopped) {
        uint64_t end = f->first_start_ns + f->cfg.duration_ns;
        if (end < d) d = end;
    }
    return d;
}

bool fe_frontend_done(const struct fe_frontend *f)
{
    if (!f->any_started) return false;
    for (unsigned i = 0; i < FE_FRONTEND_MAX_QPS; i++) {
        const struct fe_frontend_flow *fl = &f->flow[i];
        if (!fl->used || !fl->qp || fl->error) continue;
        if (!fl->finished) return false; /* streaming, in flight, or not started yet */
    }
    return true;
}
