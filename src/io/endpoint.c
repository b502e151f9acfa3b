/* Endpoint: moves packets between queue pairs and one backend (UDP socket or raw Ethernet).
 * No protocol logic here: the QPs decide what to send and when; this frames, batches, sends,
 * receives, decodes and dispatches by destination QPN. */
#include "feroce/endpoint.h"
#include "feroce/icrc.h"
#include "io/fail.h"
#include "io/udp_rx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RX_BUF_LEN      9216         /* a jumbo frame: anything longer is truncated and counted */
#define ROCE_SPORT_BASE 40128        /* raw: UDP source port = 40128 + local QPN, as the firmware */
#define ARP_WAIT_NS     100000000ull /* fe_raw_resolve asks again at most this often */
/* Receiving into a WRITE's region: at most this many packets predicted (the kernel's GSO limit
 * on older kernels), in one datagram of at most this size, with this many datagrams asked for
 * in the same call. rxmem holds the gathered datagram and what goes beyond the prediction. */
#define DIRECT_MAX_SEGS        64
#define DIRECT_MAX_DGRAM_BYTES 65507u
#define DIRECT_GATHER_BYTES    65536u
#define DIRECT_RECV_MSGS       3 /* the middle packets, the last one, the next message's first */
#define DIRECT_BACKOFF         8
_Static_assert((size_t)FE_IO_MAX_BATCH *RX_BUF_LEN >= 2 * DIRECT_GATHER_BYTES,
               "rxmem holds a gathered datagram and the overflow of a plan");

struct ep_qp {
    struct fe_qp *qp;
    uint32_t qpn;
    uint32_t ip;
    uint16_t port;
    unsigned flags;
    struct fe_path path; /* raw */
    bool mac_ok;
    bool src_pinned;      /* packets from another source IP than `ip` are refused */
    uint64_t arp_wait_ns; /* raw, MAC unknown: when to ask ARP again at the latest */
};

struct fe_ep {
    struct fe_ep_config cfg;
    struct fe_udpsock *udp;
    struct fe_raw *raw;
    uint32_t ip;
    uint16_t port;
    uint8_t mac[6];
    struct ep_qp *qps;
    unsigned n_qps, rr, last_hit;
    /* QPN -> index + 1 into qps (0: empty), open addressing, rebuilt when QPs come and go:
     * a receiver with a thousand QPs finds each packet's QP in a probe or two */
    uint32_t *qpn_idx;
    unsigned qpn_mask;
    uint16_t ip_id;
    fe_ep_drop_fn drop;
    void *drop_arg;
    fe_ep_udp_fn udp_hook;
    void *udp_arg;
    struct fe_ep_stats st;
    /* pending transmit batch: txd[tx_head .. tx_n) are encoded and not yet sent */
    int tx_head, tx_n;
    uint8_t *txmem, *rxmem;
    struct fe_dgram txd[FE_IO_MAX_BATCH], rxd[FE_IO_MAX_BATCH];
    /* receive straight into a WRITE's region: the predicted packets' BTHs and ICRCs */
    uint8_t dir_hdr[DIRECT_MAX_SEGS][FE_BTH_LEN];
    uint8_t dir_tail[DIRECT_MAX_SEGS][FE_ICRC_LEN];
    struct iovec dir_iov[3 * DIRECT_MAX_SEGS + 1];
    unsigned dir_backoff; /* receives to go as usual before the next plan */
    bool dir_recent;      /* the last datagram received by a plan was as predicted */
    bool dir_whole;       /* ... and it held all the middle packets left: the datagrams after it are
                           * the last packet and the next message's first, received in the same call */
};

int fe_backend_parse(const char *s, enum fe_backend *out)
{
    if (!strcmp(s, "udp"))
        *out = FE_BACKEND_UDP;
    else if (!strcmp(s, "raw"))
        *out = FE_BACKEND_RAW;
    else
        return FE_EINVAL;
    return 0;
}

void fe_ep_config_default(struct fe_ep_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->backend = FE_BACKEND_UDP;
    fe_udpsock_config_default(&cfg->udp);
    cfg->udp.bind_port = FE_ROCEV2_UDP_PORT;
    cfg->udp.gro = true; /* kept segments are reported by fe_ep_rx_pending */
    fe_raw_config_default(&cfg->raw);
    cfg->verify_icrc = true;
    cfg->batch = 32;
    cfg->max_qps = 64;
}

int fe_allow_parse(const char *s, struct fe_sc_cidr *list, unsigned *n)
{
    char buf[512];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) return FE_EINVAL;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n >= FE_SC_MAX_ALLOW) return FE_ENOSPC;
        if (t != buf) t += strspn(t, " \t"); /* "a, b": blanks after a comma, not elsewhere */
        if (fe_sc_cidr_parse(t, &list[*n])) return FE_EINVAL;
        (*n)++;
    }
    return 0;
}

struct fe_ep *fe_ep_create(const struct fe_ep_config *cfg, int *err)
{
    int e = FE_EINVAL;
    struct fe_ep *ep = NULL;
    fe_io_fail_clear();
    if (!cfg->batch || cfg->batch > FE_IO_MAX_BATCH || !cfg->max_qps) goto fail;
    ep = calloc(1, sizeof *ep);
    e = FE_ENOMEM;
    if (!ep) goto fail;
    ep->cfg = *cfg;
    ep->qps = calloc(cfg->max_qps, sizeof *ep->qps);
    ep->qpn_mask = 1;
    while (ep->qpn_mask < 2 * cfg->max_qps) ep->qpn_mask <<= 1;
    ep->qpn_idx = calloc(ep->qpn_mask, sizeof *ep->qpn_idx);
    ep->qpn_mask--;
    ep->txmem = malloc((size_t)FE_IO_MAX_BATCH * FE_MAX_FRAME_LEN);
    ep->rxmem = malloc((size_t)FE_IO_MAX_BATCH * RX_BUF_LEN);
    if (!ep->qps || !ep->qpn_idx || !ep->txmem || !ep->rxmem) goto fail;
    for (int i = 0; i < FE_IO_MAX_BATCH; i++) {
        ep->txd[i].buf = ep->txmem + (size_t)i * FE_MAX_FRAME_LEN;
        ep->txd[i].cap = FE_MAX_FRAME_LEN;
    }
    if (cfg->backend == FE_BACKEND_UDP) {
        ep->udp = fe_udpsock_open(&cfg->udp, &e);
        if (!ep->udp) goto fail;
        fe_udpsock_local(ep->udp, &ep->ip, &ep->port);
    } else if (cfg->backend == FE_BACKEND_RAW) {
        ep->raw = fe_raw_open(&cfg->raw, &e);
        if (!ep->raw) goto fail;
        fe_raw_mac(ep->raw, ep->mac);
        ep->ip = cfg->raw.ip;
        ep->port = FE_ROCEV2_UDP_PORT;
    } else {
        e = FE_EINVAL;
        goto fail;
    }
    if (err) *err = 0;
    return ep;
fail:
    fe_ep_destroy(ep);
    if (err) *err = e;
    return NULL;
}

const char *fe_ep_open_error(const struct fe_ep_config *cfg, int err, char *buf, size_t cap)
{
    char where[48], a[24];
    if (cfg->backend == FE_BACKEND_RAW)
        snprintf(where, sizeof where, "interface %s", cfg->raw.ifname);
    else
        snprintf(where, sizeof where, "socket on %s",
                 fe_io_addr_str(cfg->udp.bind_ip, cfg->udp.bind_port, a, sizeof a));
    snprintf(buf, cap, "cannot open the data %s: %s", where, fe_io_fail_str(err));
    return buf;
}

void fe_ep_destroy(struct fe_ep *ep)
{
    if (!ep) return;
    fe_udpsock_close(ep->udp);
    fe_raw_close(ep->raw);
    free(ep->qps);
    free(ep->qpn_idx);
    free(ep->txmem);
    free(ep->rxmem);
    free(ep);
}

int fe_ep_fd(const struct fe_ep *ep)
{
    return ep->udp ? fe_udpsock_fd(ep->udp) : fe_raw_fd(ep->raw);
}
const struct fe_ep_config *fe_ep_config(const struct fe_ep *ep)
{
    return &ep->cfg;
}
const struct fe_ep_stats *fe_ep_stats(const struct fe_ep *ep)
{
    return &ep->st;
}
const struct fe_udpsock_stats *fe_ep_udp_stats(const struct fe_ep *ep)
{
    return ep->udp ? fe_udpsock_stats(ep->udp) : NULL;
}
const char *fe_ep_raw_kind_name(const struct fe_ep *ep)
{
    return ep->raw ? fe_raw_kind_name(ep->raw) : NULL;
}

const struct fe_raw_stats *fe_ep_raw_stats(const struct fe_ep *ep)
{
    return ep->raw ? fe_raw_stats(ep->raw) : NULL;
}

void fe_ep_local(const struct fe_ep *ep, uint32_t *ip, uint16_t *port)
{
    if (ip) *ip = ep->ip;
    if (port) *port = ep->port;
}

void fe_ep_set_drop_hook(struct fe_ep *ep, fe_ep_drop_fn fn, void *arg)
{
    ep->drop = fn;
    ep->drop_arg = arg;
}

void fe_ep_set_udp_hook(struct fe_ep *ep, fe_ep_udp_fn fn, void *arg)
{
    ep->udp_hook = fn;
    ep->udp_arg = arg;
}

static unsigned qpn_slot(const struct fe_ep *ep, uint32_t qpn)
{
    return (qpn * 2654435761u) & ep->qpn_mask;
}

static void rebuild_qpn_idx(struct fe_ep *ep)
{
    memset(ep->qpn_idx, 0, (ep->qpn_mask + 1) * sizeof *ep->qpn_idx);
    for (unsigned i = 0; i < ep->n_qps; i++) {
        unsigned h = qpn_slot(ep, ep->qps[i].qpn);
        while (ep->qpn_idx[h]) h = (h + 1) & ep->qpn_mask;
        ep->qpn_idx[h] = i + 1;
    }
}

static struct ep_qp *find_qpn(struct fe_ep *ep, uint32_t qpn)
{
    if (ep->last_hit < ep->n_qps && ep->qps[ep->last_hit].qpn == qpn) return &ep->qps[ep->last_hit];
    for (unsigned h = qpn_slot(ep, qpn); ep->qpn_idx[h]; h = (h + 1) & ep->qpn_mask) {
        unsigned i = ep->qpn_idx[h] - 1;
        if (ep->qps[i].qpn == qpn) {
            ep->last_hit = i;
            return &ep->qps[i];
        }
    }
    return NULL;
}

int fe_ep_add_qp(struct fe_ep *ep, struct fe_qp *qp, uint32_t peer_ip, uint16_t peer_port,
                 unsigned flags)
{
    uint32_t qpn = fe_qp_config(qp)->local_qpn;
    if (find_qpn(ep, qpn)) return FE_EINVAL;
    if (ep->n_qps >= ep->cfg.max_qps) return FE_ENOSPC;
    struct ep_qp *q = &ep->qps[ep->n_qps++];
    memset(q, 0, sizeof *q);
    q->qp = qp;
    q->qpn = qpn;
    q->ip = peer_ip;
    q->port = peer_port ? peer_port : FE_ROCEV2_UDP_PORT;
    q->flags = flags;
    /* UDP with learning: the peer is known once it executed a packet (it may be a switch) */
    q->src_pinned = peer_ip && (ep->raw || !(flags & FE_EP_LEARN_PEER));
    if (ep->raw) {
        q->path = fe_qp_config(qp)->path;
        memcpy(q->path.src_mac, ep->mac, 6);
        q->path.ipver = 4;
        q->path.src_ip4 = ep->ip;
        q->path.dst_ip4 = peer_ip;
        q->path.udp_sport = (uint16_t)(ROCE_SPORT_BASE + (qpn & 0xffff));
        q->path.udp_dport = FE_ROCEV2_UDP_PORT;
        q->mac_ok = fe_raw_resolve(ep->raw, peer_ip, q->path.dst_mac, 0) == 1;
    }
    rebuild_qpn_idx(ep);
    return 0;
}

int fe_ep_remove_qp(struct fe_ep *ep, struct fe_qp *qp)
{
    for (unsigned i = 0; i < ep->n_qps; i++) {
        if (ep->qps[i].qp == qp) {
            ep->qps[i] = ep->qps[--ep->n_qps];
            ep->rr = 0;
            ep->last_hit = 0;
            rebuild_qpn_idx(ep);
            return 0;
        }
    }
    return FE_ENOENT;
}

int fe_ep_peer(const struct fe_ep *ep, const struct fe_qp *qp, uint32_t *ip, uint16_t *port)
{
    for (unsigned i = 0; i < ep->n_qps; i++) {
        if (ep->qps[i].qp == qp) {
            if (ip) *ip = ep->qps[i].ip;
            if (port) *port = ep->qps[i].port;
            return 0;
        }
    }
    return FE_ENOENT;
}

/* ---- receive ---- */

static void udp_for_hook(struct fe_ep *ep, uint64_t now_ns, const uint8_t *f, size_t len)
{
    struct fe_eth eth;
    struct fe_ipv4 ip;
    struct fe_udp udp;
    enum fe_parse_reason why;
    size_t off = fe_eth_parse(f, len, &eth, &why);
    if (!off || eth.ethertype != FE_ETHERTYPE_IPV4) goto other;
    size_t ihl = fe_ipv4_parse(f + off, len - off, &ip, &why);
    if (!ihl || ip.protocol != FE_IPPROTO_UDP || ip.dst != ep->ip || (ip.frag & 0x3fff)) goto other;
    size_t end = off + ip.total_len;
    off += ihl;
    size_t ul = fe_udp_parse(f + off, end - off, &udp, &why);
    if (!ul || udp.len < FE_UDP_HDR_LEN || off + udp.len > end) goto other;
    ep->udp_hook(ep->udp_arg, now_ns, ip.src, udp.sport, udp.dport, f + off + ul,
                 (size_t)udp.len - FE_UDP_HDR_LEN);
    return;
other:
    ep->st.rx_other++;
}

static bool allowed(const struct fe_ep *ep, uint32_t src_ip)
{
    for (unsigned i = 0; i < ep->cfg.n_allow; i++)
        if ((src_ip & ep->cfg.allow[i].mask) == ep->cfg.allow[i].net) return true;
    return false;
}

/* Decodes one datagram / frame into fr; false when it is not a RoCE packet for us (counted). */
static bool decode(struct fe_ep *ep, uint64_t now_ns, const struct fe_dgram *d, struct fe_frame *fr)
{
    enum fe_parse_reason why = FE_PR_OK;
    if (d->trunc) {
        ep->st.rx_trunc++;
        return false;
    }
    if (ep->udp) {
        if (fe_frame_decode(d->buf, d->len, FE_FRAME_BTH, ep->cfg.verify_icrc, fr, &why,
                            &ep->st.parse) != 0) {
            ep->st.rx_parse++;
            return false;
        }
        fr->pkt.ecn = d->tos & 3; /* the kernel owns the IP header: ECN comes from IP_RECVTOS */
        return true;
    }
    if (fe_frame_decode(d->buf, d->len, FE_FRAME_ETH, ep->cfg.verify_icrc, fr, &why,
                        &ep->st.parse) != 0) {
        if (why == FE_PR_UDP_PORT && ep->udp_hook)
            udp_for_hook(ep, now_ns, d->buf, d->len);
        else if (why == FE_PR_ETH_TYPE)
            ep->st.rx_other++;
        else
            ep->st.rx_parse++;
        return false;
    }
    if (fr->ipver != 4 || fr->ip4.dst != ep->ip) {
        ep->st.rx_other++;
        return false;
    }
    return true;
}

/* Learning QPs follow their peer (UDP: address and port; raw: MAC), only on a packet the QP
 * executed: a guessed duplicate or out-of-sequence PSN moves nothing. */
static void learn_peer(struct fe_ep *ep, struct ep_qp *q, const struct fe_dgram *d,
                       const struct fe_frame *fr)
{
    if (ep->udp) {
        q->ip = d->ip;
        q->port = d->port;
        q->src_pinned = true;
    } else if (fr->ip4.src == q->ip) {
        memcpy(q->path.dst_mac, fr->eth.src, 6);
        q->mac_ok = true;
    }
}

/* A decoded packet from src_ip to its QP, when the source may send to it. fr: the frame it
 * came in (raw backend; learning reads its MAC). */
static void deliver(struct fe_ep *ep, uint64_t now_ns, const struct fe_dgram *d,
                    const struct fe_frame *fr, const struct fe_pkt *pkt, uint32_t src_ip)
{
    struct ep_qp *q = find_qpn(ep, pkt->bth.dqpn);
    if (!q) {
        ep->st.rx_no_qp++;
        return;
    }
    if (q->src_pinned && src_ip != q->ip) {
        ep->st.rx_refused_source++;
        return;
    }
    if (pkt->icrc == FE_ICRC_BAD) ep->st.rx_bad_icrc++;
    ep->st.rx_pkts++;
    bool learn = (q->flags & FE_EP_LEARN_PEER) && pkt->icrc != FE_ICRC_BAD;
    uint64_t executed = learn ? fe_qp_counters(q->qp)->rx_pkts : 0;
    int rc = fe_qp_rx(q->qp, now_ns, pkt);
    if (learn && rc == 0 && fe_qp_counters(q->qp)->rx_pkts != executed) learn_peer(ep, q, d, fr);
}

static void rx_one(struct fe_ep *ep, uint64_t now_ns, const struct fe_dgram *d)
{
    if (ep->udp && ep->cfg.n_allow && !allowed(ep, d->ip)) { /* before the ICRC is computed */
        ep->st.rx_refused_allow++;
        return;
    }
    struct fe_frame fr;
    if (!decode(ep, now_ns, d, &fr)) return;
    uint32_t src_ip = ep->udp ? d->ip : fr.ip4.src;
    if (ep->raw && ep->cfg.n_allow && !allowed(ep, src_ip)) {
        ep->st.rx_refused_allow++;
        return;
    }
    deliver(ep, now_ns, d, &fr, &fr.pkt, src_ip);
}

/* ---- receive straight into the region of a WRITE in progress (UDP with GRO) ----
 * The payloads of a message's middle packets are the bulk of its bytes. While a WRITE is in
 * progress their place is known before they arrive (fe_qp_rx_write_next), so the first datagram
 * of a receive is scattered: each predicted packet's BTH and ICRC into small buffers, its payload
 * where the responder would put it. Whatever does not fit the prediction (another opcode, PSN,
 * QP or size) is gathered back into one buffer and handled as any datagram: the bytes it left
 * in the region are written again by the packets that complete the message. */

/* The prediction for the next datagram: k packets of seg bytes from psn on for QP q. */
struct direct_plan {
    struct ep_qp *q;
    uint32_t psn, mtu, k, seg;
    uint8_t *dst;
};

/* A plan when the QP of the last packet is in the middle of a WRITE with two packets or more
 * to come (the last one's header differs: it is not predicted). */
static bool plan_direct(struct fe_ep *ep, struct direct_plan *p)
{
    if (ep->last_hit >= ep->n_qps) return false;
    p->q = &ep->qps[ep->last_hit];
    uint64_t left;
    if (!fe_qp_rx_write_next(p->q->qp, &p->psn, &p->dst, &left, &p->mtu) || left <= p->mtu ||
        p->mtu % 4)
        return false;
    p->seg = FE_BTH_LEN + p->mtu + FE_ICRC_LEN;
    uint64_t k = (left - 1) / p->mtu;
    if (k > DIRECT_MAX_SEGS) k = DIRECT_MAX_SEGS;
    if (k > DIRECT_MAX_DGRAM_BYTES / p->seg) k = DIRECT_MAX_DGRAM_BYTES / p->seg;
    p->k = (uint32_t)k;
    return k > 0;
}

/* The iovecs of the plan; a last one takes what goes beyond it. Returns their count. */
static int direct_iov(struct fe_ep *ep, const struct direct_plan *p)
{
    int n = 0;
    for (uint32_t j = 0; j < p->k; j++) {
        ep->dir_iov[n++] = (struct iovec){ep->dir_hdr[j], FE_BTH_LEN};
        ep->dir_iov[n++] = (struct iovec){p->dst + (size_t)j * p->mtu, p->mtu};
        ep->dir_iov[n++] = (struct iovec){ep->dir_tail[j], FE_ICRC_LEN};
    }
    ep->dir_iov[n++] = (struct iovec){ep->rxmem + DIRECT_GATHER_BYTES, DIRECT_GATHER_BYTES};
    return n;
}

/* Whether the datagram is what the plan predicted: m packets (*m) of its size, each a WRITE
 * MIDDLE of its QP with the next PSN and no pad. */
static bool direct_matches(struct fe_ep *ep, const struct direct_plan *p,
                           const struct fe_udp_rx *rx, uint32_t *m, struct fe_bth *bth)
{
    uint32_t seg = rx->seg ? rx->seg : rx->len;
    if (rx->trunc || seg != p->seg || rx->len % seg || rx->len / seg > p->k) return false;
    *m = rx->len / seg;
    for (uint32_t j = 0; j < *m; j++) {
        enum fe_parse_reason why;
        if (!fe_bth_parse(ep->dir_hdr[j], FE_BTH_LEN, &bth[j], &why) ||
            bth[j].opcode != FE_OP_WRITE_MIDDLE || bth[j].padcnt || bth[j].dqpn != p->q->qpn ||
            bth[j].psn != ((p->psn + j) & FE_PSN_MASK))
            return false;
    }
    return true;
}

/* The ICRC of predicted packet j, over its pieces as fe_icrc_bth does over the whole. */
static uint8_t direct_icrc(struct fe_ep *ep, const struct direct_plan *p, uint32_t j)
{
    if (!ep->cfg.verify_icrc) return FE_ICRC_UNCHECKED;
    uint8_t h[FE_BTH_LEN];
    memcpy(h, ep->dir_hdr[j], FE_BTH_LEN);
    h[4] = 0xff; /* BTH byte 4 (FECN, BECN, reserved): variant */
    uint32_t crc = fe_crc32(FE_ICRC_SEED, h, FE_BTH_LEN);
    crc = fe_crc32(crc, p->dst + (size_t)j * p->mtu, p->mtu);
    if (crc == fe_icrc_load(ep->dir_tail[j])) {
        ep->st.parse.ok++;
        return FE_ICRC_OK;
    }
    ep->st.parse.rejected[FE_PR_ICRC]++;
    return FE_ICRC_BAD;
}

/* The m predicted packets, their payloads already in place. */
static void direct_deliver(struct fe_ep *ep, uint64_t now_ns, const struct direct_plan *p,
                           const struct fe_udp_rx *rx, uint32_t m, const struct fe_bth *bth)
{
    struct fe_dgram d = {.ip = rx->ip, .port = rx->port, .tos = rx->tos, .ts_ns = rx->ts_ns};
    for (uint32_t j = 0; j < m; j++) {
        if (ep->cfg.n_allow && !allowed(ep, rx->ip)) {
            ep->st.rx_refused_allow++;
            continue;
        }
        struct fe_pkt pkt = {.bth = bth[j],
                             .payload = p->dst + (size_t)j * p->mtu,
                             .payload_len = p->mtu,
                             .ecn = rx->tos & 3};
        pkt.icrc = direct_icrc(ep, p, j);
        deliver(ep, now_ns, &d, NULL, &pkt, rx->ip);
    }
}

/* A datagram that did not fit the plan: its pieces gathered into one buffer in order, then
 * handled segment by segment as any other. Returns the segments. */
static uint32_t direct_fallback(struct fe_ep *ep, uint64_t now_ns, int niov,
                                const struct fe_udp_rx *rx)
{
    uint32_t len = 0;
    for (int i = 0; i < niov && len < rx->len; i++) {
        uint32_t take = rx->len - len < ep->dir_iov[i].iov_len ? rx->len - len
                                                               : (uint32_t)ep->dir_iov[i].iov_len;
        memmove(ep->rxmem + len, ep->dir_iov[i].iov_base, take);
        len += take;
    }
    uint32_t seg = rx->seg ? rx->seg : len, n = 0;
    for (uint32_t off = 0; off < len || (!len && !n); off += seg, n++) {
        struct fe_dgram d = {.buf = ep->rxmem + off,
                             .len = len - off < seg ? len - off : seg,
                             .ip = rx->ip,
                             .port = rx->port,
                             .tos = rx->tos,
                             .trunc = rx->trunc,
                             .ts_ns = rx->ts_ns};
        rx_one(ep, now_ns, &d);
        if (!seg) break;
    }
    return n ? n : 1;
}

/* One receive with the first datagram scattered by the plan. Returns the packets handled, 0
 * when the socket was empty, -1 without a plan (the caller receives as usual); *drained when
 * the socket had no more than was asked for. */
static int rx_direct(struct fe_ep *ep, uint64_t now_ns, int want, bool *drained)
{
    struct direct_plan p;
    if (ep->dir_backoff) {
        ep->dir_backoff--;
        return -1;
    }
    if (!plan_direct(ep, &p)) return -1;
    int niov = direct_iov(ep, &p);
    struct fe_udp_rx rx;
    int r = fe_udpsock_recv_scatter(ep->udp, ep->dir_iov, niov, want, &rx);
    if (r == FE_ENOTSUP) return -1;
    *drained = r < want;
    if (r <= 0) return 0;
    struct fe_bth bth[DIRECT_MAX_SEGS];
    uint32_t m;
    ep->dir_recent = direct_matches(ep, &p, &rx, &m, bth);
    if (ep->dir_recent) {
        ep->dir_whole = m == p.k;
        ep->st.rx_direct_pkts += m;
        direct_deliver(ep, now_ns, &p, &rx, m, bth);
    } else {
        /* Traffic the plan does not foresee (several QPs interleaved, a resend): the gather
         * is a copy more, so the next receives go as usual before the next try. */
        ep->dir_backoff = DIRECT_BACKOFF;
        m = direct_fallback(ep, now_ns, niov, &rx);
    }
    ep->st.rx_dgrams += m;
    return (int)m;
}

int fe_ep_poll_rx(struct fe_ep *ep, uint64_t now_ns, int budget)
{
    int total = 0;
    bool drained = false; /* the last receive emptied the socket */
    while (total < budget) {
        int want = budget - total;
        if (want > (int)ep->cfg.batch) want = (int)ep->cfg.batch;
        /* segments kept from the last call come first; the socket is read after them */
        int kept = ep->udp ? fe_udpsock_rx_pending(ep->udp) : 0;
        if (ep->udp && !kept) {
            if (drained) break;
            int msgs = ep->dir_whole ? DIRECT_RECV_MSGS : 1;
            int got = rx_direct(ep, now_ns, want < msgs ? want : msgs, &drained);
            if (got == 0) break;
            if (got > 0) {
                total += got;
                continue;
            }
            /* Between two messages of a stream received in place, one datagram (the next first
             * packet) puts the next receive back on the plan; a batch would take the middle
             * packets that follow it as well, into the socket's buffers. */
            if (ep->dir_recent) want = 1;
        }
        for (int i = 0; i < want; i++) {
            ep->rxd[i].buf = ep->rxmem + (size_t)i * RX_BUF_LEN;
            ep->rxd[i].cap = RX_BUF_LEN;
        }
        int n = ep->udp ? fe_udpsock_recv_borrow(ep->udp, ep->rxd, want)
                        : fe_raw_recv(ep->raw, ep->rxd, want);
        if (n <= 0) break;
        ep->st.rx_dgrams += (uint64_t)n;
        for (int i = 0; i < n; i++) rx_one(ep, now_ns, &ep->rxd[i]);
        total += n;
        if (n < want && n > kept) break; /* the socket is empty */
    }
    return total;
}

/* ---- transmit ---- */

static int backend_send(struct fe_ep *ep, const struct fe_dgram *d, int n)
{
    return ep->udp ? fe_udpsock_send(ep->udp, d, n) : fe_raw_send(ep->raw, d, n);
}

/* Copies the payloads that pending datagrams send from WR memory into their own slots: what
 * is left for a later call must not depend on WR memory, which the application may reuse once
 * the WR completes. */
static void own_pending(struct fe_ep *ep)
{
    for (int i = ep->tx_head; i < ep->tx_n; i++) {
        struct fe_dgram *d = &ep->txd[i];
        if (!d->mid) continue;
        memmove(d->buf + d->head_len + d->mid_len, d->buf + d->head_len, d->len - d->head_len);
        memcpy(d->buf + d->head_len, d->mid, d->mid_len);
        d->len += d->mid_len;
        d->mid = NULL;
    }
}

/* Sends the pending batch; true when it all went. */
static bool flush(struct fe_ep *ep)
{
    while (ep->tx_head < ep->tx_n) {
        int k = backend_send(ep, ep->txd + ep->tx_head, ep->tx_n - ep->tx_head);
        if (k <= 0) {
            ep->st.tx_socket_full++;
            own_pending(ep);
            return false;
        }
        ep->tx_head += k;
    }
    ep->tx_head = ep->tx_n = 0;
    return true;
}

/* Raw: whether q's peer MAC is known. A QP is not served before: what it would send stays in it
 * (a frame without a destination would be lost, and the QP would believe it sent, then time out
 * and retransmit). fe_raw_resolve asks ARP (rate-limited); the reply wakes the loop through the
 * endpoint's fd, a lost one through fe_ep_next_deadline. */
static bool peer_resolved(struct fe_ep *ep, struct ep_qp *q, uint64_t now_ns)
{
    if (q->mac_ok) return true;
    q->mac_ok = fe_raw_resolve(ep->raw, q->ip, q->path.dst_mac, now_ns) == 1;
    if (q->mac_ok) return true;
    if (fe_qp_next_deadline(q->qp) <= now_ns) ep->st.tx_no_route++;
    q->arp_wait_ns = now_ns + ARP_WAIT_NS;
    return false;
}

/* Payloads from this size on are sent from WR memory (UDP): one copy fewer per packet. */
#define ZERO_COPY_MIN_BYTES 512

/* UDP framing of a data packet without copying its payload: BTH and extension headers, then
 * pad and ICRC, in the slot; the payload stays where the WR put it (d->mid). The ICRC is
 * fe_icrc_bth's over the same bytes, in three pieces. Returns the wire length or < 0. */
static int encode_udp_mid(struct fe_dgram *d, const struct fe_pkt *pkt)
{
    struct fe_pkt h = *pkt;
    h.payload = NULL;
    h.payload_len = 0;
    int n = fe_pkt_write(d->buf, FE_MAX_FRAME_LEN, &h);
    if (n < FE_BTH_LEN + FE_ICRC_LEN) return n < 0 ? n : FE_EINVAL;
    uint32_t hdr = (uint32_t)n - FE_ICRC_LEN, plen = pkt->payload_len;
    uint32_t pad = (4 - (plen & 3)) & 3;
    d->buf[1] = (uint8_t)((d->buf[1] & ~0x30) | pad << 4); /* PadCnt of the real payload */
    uint8_t c[64]; /* BTH + RETH + ImmDt at most on a data packet */
    if (hdr > sizeof c) return FE_EINVAL;
    memcpy(c, d->buf, hdr);
    c[4] = 0xff; /* BTH byte 4 (FECN, BECN, reserved): variant */
    uint32_t crc = fe_crc32(fe_crc32(FE_ICRC_SEED, c, hdr), pkt->payload, plen);
    uint8_t *tail = d->buf + hdr;
    memset(tail, 0, pad);
    if (pad) crc = fe_crc32(crc, tail, pad);
    fe_icrc_store(tail + pad, crc);
    d->head_len = hdr;
    d->mid = pkt->payload;
    d->mid_len = plen;
    d->len = hdr + pad + FE_ICRC_LEN;
    return (int)(d->len + plen);
}

/* Whether pkt goes without a copy: UDP, a real payload worth it, and a whole packet that still
 * fits its slot (own_pending may have to copy it there). */
static bool zero_copy(const struct fe_ep *ep, const struct fe_pkt *pkt)
{
    return ep->udp && pkt->payload && pkt->payload_len >= ZERO_COPY_MIN_BYTES &&
           (fe_opcode_flags(pkt->bth.opcode) & FE_OPF_PAYLOAD) &&
           fe_pkt_wire_len(pkt) <= FE_MAX_FRAME_LEN;
}

/* Frames one packet of q into txd[slot]; false when it is not to be sent. */
static bool encode(struct fe_ep *ep, struct ep_qp *q, const struct fe_pkt *pkt, int slot)
{
    if (ep->drop && ep->drop(ep->drop_arg, q->qpn, pkt)) {
        ep->st.tx_dropped_hook++;
        return false;
    }
    struct fe_dgram *d = &ep->txd[slot];
    int len;
    d->mid = NULL;
    if (zero_copy(ep, pkt)) {
        len = encode_udp_mid(d, pkt);
        d->ip = q->ip;
        d->port = q->port;
        d->tos = (uint8_t)((pkt->dscp << 2) | (pkt->ecn & 3));
    } else if (ep->udp) {
        len = fe_frame_encode(d->buf, FE_MAX_FRAME_LEN, FE_FRAME_BTH, NULL, 0, pkt);
        d->ip = q->ip;
        d->port = q->port;
        d->tos = (uint8_t)((pkt->dscp << 2) | (pkt->ecn & 3));
    } else {
        len = fe_frame_encode(d->buf, FE_MAX_FRAME_LEN, FE_FRAME_ETH, &q->path, ep->ip_id++, pkt);
    }
    if (len <= 0) {
        ep->st.tx_encode_err++;
        return false;
    }
    if (!d->mid) d->len = (uint32_t)len;
    ep->st.tx_pkts++;
    ep->st.tx_bytes += (uint64_t)len;
    return true;
}

int fe_ep_poll_tx(struct fe_ep *ep, uint64_t now_ns, int budget)
{
    int sent = 0;
    if (!flush(ep)) return 0;
    while (sent < budget && ep->n_qps) {
        int fill = 0, misses = 0;
        int cap = (int)ep->cfg.batch;
        if (cap > budget - sent) cap = budget - sent;
        int cap_max = budget - sent < FE_IO_MAX_BATCH ? budget - sent : FE_IO_MAX_BATCH;
        bool open_msg = false; /* the last packet framed is not its message's last */
        /* A message's packets of one size go as one GSO run, received as one GRO datagram
         * (scattered into place at the receiver): a batch goes past its size, up to the
         * largest, rather than cut a message. */
        while ((fill < cap || (open_msg && fill < cap_max)) && misses < (int)ep->n_qps) {
            if (ep->rr >= ep->n_qps) ep->rr = 0;
            struct ep_qp *q = &ep->qps[ep->rr++];
            struct fe_pkt pkt;
            if ((ep->raw && !peer_resolved(ep, q, now_ns)) || fe_qp_tx(q->qp, now_ns, &pkt) != 1) {
                misses++;
                continue;
            }
            misses = 0;
            unsigned fl = fe_opcode_flags(pkt.bth.opcode);
            open_msg = (fl & FE_OPF_PAYLOAD) && !(fl & FE_OPF_LAST);
            if (encode(ep, q, &pkt, fill)) fill++;
        }
        if (fill == 0) break;
        ep->tx_head = 0;
        ep->tx_n = fill;
        sent += fill;
        if (!flush(ep)) break;
        if (fill < cap) break; /* the QPs have nothing more right now */
    }
    return sent;
}

bool fe_ep_tx_blocked(const struct fe_ep *ep)
{
    return ep->tx_head < ep->tx_n;
}

bool fe_ep_rx_pending(const struct fe_ep *ep)
{
    return ep->udp && fe_udpsock_rx_pending(ep->udp) > 0;
}

uint64_t fe_ep_next_deadline(const struct fe_ep *ep)
{
    if (ep->tx_head < ep->tx_n || fe_ep_rx_pending(ep)) return 0;
    uint64_t d = FE_NO_DEADLINE;
    for (unsigned i = 0; i < ep->n_qps; i++) {
        const struct ep_qp *e = &ep->qps[i];
        uint64_t q = fe_qp_next_deadline(e->qp);
        /* a QP waiting for ARP sends nothing before the reply (or the next request) */
        if (ep->raw && !e->mac_ok && q < e->arp_wait_ns) q = e->arp_wait_ns;
        if (q < d) d = q;
    }
    return d;
}

void fe_ep_handle_expiry(struct fe_ep *ep, uint64_t now_ns)
{
    for (unsigned i = 0; i < ep->n_qps; i++)
        if (fe_qp_next_deadline(ep->qps[i].qp) <= now_ns)
            fe_qp_handle_expiry(ep->qps[i].qp, now_ns);
}

int fe_ep_send_udp(struct fe_ep *ep, uint64_t now_ns, uint32_t dst_ip, uint16_t src_port,
                   uint16_t dst_port, const uint8_t *payload, size_t len)
{
    if (!ep->raw) return FE_ENOTSUP;
    if (len > 1400) return FE_EINVAL;
    uint8_t mac[6];
    if (fe_raw_resolve(ep->raw, dst_ip, mac, now_ns) != 1) return FE_EAGAIN;
    uint8_t f[1500];
    struct fe_eth eth;
    memset(&eth, 0, sizeof eth);
    memcpy(eth.dst, mac, 6);
    memcpy(eth.src, ep->mac, 6);
    eth.ethertype = FE_ETHERTYPE_IPV4;
    size_t off = fe_eth_write(f, sizeof f, &eth);
    struct fe_ipv4 ip;
    memset(&ip, 0, sizeof ip);
    ip.ihl = 5;
    ip.ttl = 64;
    ip.protocol = FE_IPPROTO_UDP;
    ip.total_len = (uint16_t)(FE_IPV4_HDR_LEN + FE_UDP_HDR_LEN + len);
    ip.id = ep->ip_id++;
    ip.frag = 0x4000;
    ip.src = ep->ip;
    ip.dst = dst_ip;
    size_t n = off ? fe_ipv4_write(f + off, sizeof f - off, &ip) : 0;
    if (!n) return FE_EINVAL;
    off += n;
    struct fe_udp udp = {.sport = src_port,
                         .dport = dst_port,
                         .len = (uint16_t)(FE_UDP_HDR_LEN + len),
                         .checksum = 0};
    n = fe_udp_write(f + off, sizeof f - off, &udp);
    if (!n) return FE_EINVAL;
    off += n;
    memcpy(f + off, payload, len);
    off += len;
    if (off < 60) {
        memset(f + off, 0, 60 - off);
        off = 60;
    }
    struct fe_dgram d = {.buf = f, .len = (uint32_t)off};
    return fe_raw_send(ep->raw, &d, 1) == 1 ? 0 : FE_EAGAIN;
}
