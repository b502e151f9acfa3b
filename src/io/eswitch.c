/* The emulated switch (see include/feroce/eswitch.h). */
#include "feroce/eswitch.h"
#include "io/fail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/wire.h"

#define PKT_MAX     9216
#define HDR_ALIGN   8
#define SKIP        UINT32_MAX
#define MAX_SENDERS 32
#define MAX_QPNS    8
#define WIRE_EXTRA  46 /* UDP form: Ethernet 14 + IPv4 20 + UDP 8 + FCS 4 around a datagram */
#define CNP_SPORT   0xC0DE

/* ---- a byte-ring FIFO of packets ---- */
struct qhdr {
    uint32_t len; /* SKIP: wrap to the start */
    uint16_t out; /* egress target (access port / interface) */
    uint8_t tos;
    uint8_t pad;
    uint64_t t_ns; /* when it may leave at the earliest (arrival + delay) */
};

struct fifo {
    uint8_t *mem;
    size_t cap, head, tail;
    uint32_t n;
    uint64_t bytes, limit;
};

static size_t ent_size(uint32_t len)
{
    return (sizeof(struct qhdr) + len + HDR_ALIGN - 1) & ~(size_t)(HDR_ALIGN - 1);
}

static int fifo_init(struct fifo *f, uint64_t limit)
{
    f->limit = limit;
    f->cap = (size_t)limit * 2 + 4 * (PKT_MAX + sizeof(struct qhdr));
    f->mem = malloc(f->cap);
    return f->mem ? 0 : FE_ENOMEM;
}

/* Room for `need` bytes: where to write, or NULL. */
static uint8_t *fifo_reserve(struct fifo *f, size_t need)
{
    if (f->n == 0) f->head = f->tail = 0;
    if (f->n == 0 || f->tail > f->head) {
        if (f->cap - f->tail >= need + sizeof(struct qhdr)) return f->mem + f->tail;
        if (f->head > need) { /* wrap */
            if (f->cap - f->tail >= sizeof(struct qhdr)) {
                struct qhdr skip = {.len = SKIP};
                memcpy(f->mem + f->tail, &skip, sizeof skip);
            }
            f->tail = 0;
            return f->mem;
        }
        return NULL;
    }
    if (f->head - f->tail > need) return f->mem + f->tail;
    return NULL;
}

static bool fifo_push(struct fifo *f, const uint8_t *data, uint32_t len, uint16_t out, uint8_t tos,
                      uint64_t t_ns)
{
    if (f->bytes + len > f->limit) return false;
    size_t need = ent_size(len);
    uint8_t *p = fifo_reserve(f, need);
    if (!p) return false;
    struct qhdr h = {.len = len, .out = out, .tos = tos, .t_ns = t_ns};
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, data, len);
    f->tail = (size_t)(p - f->mem) + need;
    f->n++;
    f->bytes += len;
    return true;
}

static struct qhdr *fifo_peek(struct fifo *f, uint8_t **data)
{
    if (!f->n) return NULL;
    if (f->cap - f->head < sizeof(struct qhdr)) f->head = 0;
    struct qhdr *h = (struct qhdr *)(void *)(f->mem + f->head);
    if (h->len == SKIP) {
        f->head = 0;
        h = (struct qhdr *)(void *)f->mem;
    }
    *data = (uint8_t *)(h + 1);
    return h;
}

static void fifo_pop(struct fifo *f)
{
    uint8_t *d;
    struct qhdr *h = fifo_peek(f, &d);
    if (!h) return;
    f->bytes -= h->len;
    f->head += ent_size(h->len);
    f->n--;
}

/* ---- the switch ---- */
struct eport {
    struct fifo q;
    bool shaped;         /* rate, marking and impairments apply */
    uint64_t busy_until; /* the link is transmitting until then */
    uint64_t q_since_ns; /* time-average queue: integral of bytes x ns since the first */
    uint64_t q_last_ns;
    long double q_integral;
    /* reorder: one packet held back until the next one has left */
    bool held;
    uint8_t held_buf[PKT_MAX];
    uint32_t held_len;
    uint16_t held_out;
    uint8_t held_tos;
    uint64_t held_ns;
    struct fe_esw_port_stats st;
};

struct sender { /* threshold mode: who sends data, and its QPs (learned from returning ACKs) */
    bool used;
    unsigned port; /* UDP: access port; raw: interface */
    uint32_t ip, rcv_ip;
    uint8_t mac[6], rcv_mac[6];
    uint32_t qpn[MAX_QPNS];
    unsigned n_qpn;
    uint64_t win_bytes;
};

struct arrival { /* a received packet waiting to be handled in time order */
    struct fe_dgram *d;
    unsigned port;
};

struct fe_eswitch {
    struct fe_eswitch_config cfg;
    unsigned n_ports; /* UDP: access ports + 1 (the bottleneck); raw: interfaces */
    /* UDP form */
    struct fe_udpsock *acc[FE_ESW_MAX_PORTS], *back[FE_ESW_MAX_PORTS];
    uint32_t peer_ip[FE_ESW_MAX_PORTS];
    uint16_t peer_port[FE_ESW_MAX_PORTS];
    /* raw form */
    struct fe_raw *raw[FE_ESW_MAX_PORTS];
    struct {
        uint8_t mac[6];
        uint16_t port;
        bool used;
    } fdb[256];
    unsigned fdb_next;
    struct eport port[FE_ESW_MAX_PORTS + 1];
    struct sender snd[MAX_SENDERS];
    uint64_t win_start;
    uint64_t rng;
    /* ingress backlogs: FE_IO_MAX_BATCH per input port */
    uint8_t *in_mem;
    struct fe_dgram *in_d;
    struct arrival *in_list;
    uint8_t rx[FE_IO_MAX_BATCH][PKT_MAX];
    struct fe_dgram d[FE_IO_MAX_BATCH];
    /* packets leaving in the current serve() */
    struct fe_dgram out_d[2 * FE_IO_MAX_BATCH];
    uint16_t out_tgt[FE_IO_MAX_BATCH];
    bool out_done[FE_IO_MAX_BATCH];
    int n_out;
};

void fe_eswitch_config_default(struct fe_eswitch_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->backend = FE_BACKEND_UDP;
    cfg->bottleneck_if = -1;
    cfg->to_port = FE_ROCEV2_UDP_PORT;
    cfg->queue_bytes = 1u << 20;
    /* DCQCN's defaults of the 2015 paper, scaled from 40 Gb/s ports: Kmin 5 KB, Kmax 200 KB */
    cfg->red.kmin_bytes = 5 * 1024;
    cfg->red.kmax_bytes = 200 * 1024;
    cfg->red.pmax_ppm = 10000;
    cfg->seed = 1;
    cfg->window_ns = 32000;
}

static uint32_t rnd32(struct fe_eswitch *s)
{
    uint64_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->rng = x;
    return (uint32_t)(x >> 32);
}

static bool chance_ppm(struct fe_eswitch *s, uint32_t ppm)
{
    return ppm && (uint64_t)rnd32(s) * 1000000u < (uint64_t)ppm << 32;
}

unsigned fe_eswitch_n_ports(const struct fe_eswitch *s)
{
    return s->n_ports;
}
const struct fe_esw_port_stats *fe_eswitch_port_stats(const struct fe_eswitch *s, unsigned i)
{
    return i < s->n_ports ? &s->port[i].st : NULL;
}
void fe_eswitch_port_addr(const struct fe_eswitch *s, unsigned i, uint32_t *ip, uint16_t *port)
{
    if (s->cfg.backend == FE_BACKEND_UDP && i < s->cfg.n_ports)
        fe_udpsock_local(s->acc[i], ip, port);
}

/* The bottleneck queue (UDP form), or interface i's queue (raw form). */
static unsigned bottleneck(const struct fe_eswitch *s)
{
    return s->cfg.n_ports;
}

void fe_eswitch_destroy(struct fe_eswitch *s)
{
    if (!s) return;
    for (unsigned i = 0; i < FE_ESW_MAX_PORTS; i++) {
        fe_udpsock_close(s->acc[i]);
        fe_udpsock_close(s->back[i]);
        fe_raw_close(s->raw[i]);
    }
    for (unsigned i = 0; i <= FE_ESW_MAX_PORTS; i++) free(s->port[i].q.mem);
    free(s->in_mem);
    free(s->in_d);
    free(s->in_list);
    free(s);
}

/* Rejects a configuration the switch cannot run (errbuf says why). */
static int validate_config(const struct fe_eswitch_config *cfg, char *errbuf, size_t errcap)
{
    if (cfg->thresh_bps && !cfg->window_ns) {
        snprintf(errbuf, errcap, "threshold mode needs a window");
        return FE_EINVAL;
    }
    if (cfg->queue_bytes < PKT_MAX) {
        snprintf(errbuf, errcap, "the queue must hold at least %d bytes", PKT_MAX);
        return FE_EINVAL;
    }
    if (cfg->backend == FE_BACKEND_UDP &&
        (!cfg->n_ports || cfg->n_ports > FE_ESW_MAX_PORTS || !cfg->to_ip)) {
        snprintf(errbuf, errcap, "1..%d access ports (--port) and a destination (--to)",
                 FE_ESW_MAX_PORTS);
        return FE_EINVAL;
    }
    if (cfg->backend != FE_BACKEND_UDP &&
        (!cfg->n_ifs || cfg->n_ifs > FE_ESW_MAX_PORTS || cfg->bottleneck_if >= (int)cfg->n_ifs)) {
        snprintf(errbuf, errcap, "1..%d interfaces (--if) and a valid bottleneck",
                 FE_ESW_MAX_PORTS);
        return FE_EINVAL;
    }
    return 0;
}

/* UDP form: per access port, the socket senders reach and a back socket (an ephemeral port on
 * the same address) that forwards towards the destination. */
static int open_udp_ports(struct fe_eswitch *s, char *errbuf, size_t errcap)
{
    const struct fe_eswitch_config *cfg = &s->cfg;
    s->n_ports = cfg->n_ports + 1;
    for (unsigned i = 0; i < cfg->n_ports; i++) {
        int e = 0;
        struct fe_udpsock_config uc;
        fe_udpsock_config_default(&uc);
        uc.bind_ip = cfg->port_ip[i];
        uc.bind_port = cfg->port_port[i];
        uc.timestamps = true;
        s->acc[i] = fe_udpsock_open(&uc, &e);
        char a[32];
        if (!s->acc[i]) {
            snprintf(errbuf, errcap, "cannot bind access port %s: %s",
                     fe_io_addr_str(uc.bind_ip, uc.bind_port, a, sizeof a), fe_io_fail_str(e));
            return e ? e : FE_EINVAL;
        }
        uc.bind_port = 0;
        uc.timestamps = false;
        s->back[i] = fe_udpsock_open(&uc, &e);
        if (!s->back[i]) {
            snprintf(errbuf, errcap, "cannot open a socket on %s: %s",
                     fe_io_addr_str(uc.bind_ip, 0, a, sizeof a), fe_io_fail_str(e));
            return e ? e : FE_EINVAL;
        }
    }
    return 0;
}

/* Raw form: every interface promiscuous, as a switch port; the endpoints answer ARP themselves. */
static int open_raw_ports(struct fe_eswitch *s, char *errbuf, size_t errcap)
{
    const struct fe_eswitch_config *cfg = &s->cfg;
    s->n_ports = cfg->n_ifs;
    for (unsigned i = 0; i < cfg->n_ifs; i++) {
        int e = 0;
        struct fe_raw_config rc;
        fe_raw_config_default(&rc);
        snprintf(rc.ifname, sizeof rc.ifname, "%s", cfg->ifname[i]);
        rc.promisc = true;
        rc.answer_arp_icmp = false;
        rc.timestamps = true;
        s->raw[i] = fe_raw_open(&rc, &e);
        if (!s->raw[i]) {
            snprintf(errbuf, errcap, "cannot open interface %s: %s", cfg->ifname[i],
                     fe_io_fail_str(e));
            return e ? e : FE_EINVAL;
        }
    }
    return 0;
}

/* One egress queue per port; only the bottleneck (UDP form), or the chosen interface (raw form,
 * every one when none is chosen), is shaped. */
static int alloc_queues(struct fe_eswitch *s, char *errbuf, size_t errcap)
{
    const struct fe_eswitch_config *cfg = &s->cfg;
    for (unsigned i = 0; i < s->n_ports; i++) {
        int e = fifo_init(&s->port[i].q, cfg->queue_bytes);
        if (e) {
            snprintf(errbuf, errcap, "out of memory for the queues");
            return e;
        }
        s->port[i].shaped = cfg->backend == FE_BACKEND_UDP
                                ? i == bottleneck(s)
                                : (cfg->bottleneck_if < 0 || (int)i == cfg->bottleneck_if);
    }
    return 0;
}

/* The receive batch and the ingress backlogs (FE_IO_MAX_BATCH packets per input port). */
static int alloc_ingress(struct fe_eswitch *s, char *errbuf, size_t errcap)
{
    for (int i = 0; i < FE_IO_MAX_BATCH; i++) s->d[i].buf = s->rx[i];
    size_t slots = (size_t)s->n_ports * FE_IO_MAX_BATCH;
    s->in_mem = malloc(slots * PKT_MAX);
    s->in_d = calloc(slots, sizeof *s->in_d);
    s->in_list = calloc(slots, sizeof *s->in_list);
    if (!s->in_mem || !s->in_d || !s->in_list) {
        snprintf(errbuf, errcap, "out of memory for the ingress buffers");
        return FE_ENOMEM;
    }
    return 0;
}

struct fe_eswitch *fe_eswitch_create(const struct fe_eswitch_config *cfg, uint64_t now_ns, int *err,
                                     char *errbuf, size_t errcap)
{
    fe_io_fail_clear();
    struct fe_eswitch *s = calloc(1, sizeof *s);
    if (!s) {
        if (err) *err = FE_ENOMEM;
        return NULL;
    }
    s->cfg = *cfg;
    s->rng = cfg->seed ? cfg->seed * 0x9E3779B97F4A7C15ull : 1;
    s->win_start = now_ns;
    int e = validate_config(cfg, errbuf, errcap);
    if (!e)
        e = cfg->backend == FE_BACKEND_UDP ? open_udp_ports(s, errbuf, errcap)
                                           : open_raw_ports(s, errbuf, errcap);
    if (!e) e = alloc_queues(s, errbuf, errcap);
    if (!e) e = alloc_ingress(s, errbuf, errcap);
    if (e) {
        fe_eswitch_destroy(s);
        if (err) *err = e;
        return NULL;
    }
    if (err) *err = 0;
    return s;
}

int fe_eswitch_fds(const struct fe_eswitch *s, int *fds, int max)
{
    int n = 0;
    if (s->cfg.backend == FE_BACKEND_UDP) {
        for (unsigned i = 0; i < s->cfg.n_ports && n < max; i++)
            fds[n++] = fe_udpsock_fd(s->acc[i]);
        for (unsigned i = 0; i < s->cfg.n_ports && n < max; i++)
            fds[n++] = fe_udpsock_fd(s->back[i]);
    } else {
        for (unsigned i = 0; i < s->cfg.n_ifs && n < max; i++) fds[n++] = fe_raw_fd(s->raw[i]);
    }
    return n;
}

/* ---- threshold mode ---- */

static struct sender *sender_find(struct fe_eswitch *s, unsigned port, uint32_t ip, bool add)
{
    bool udp = s->cfg.backend == FE_BACKEND_UDP;
    for (unsigned i = 0; i < MAX_SENDERS; i++) {
        struct sender *x = &s->snd[i];
        if (x->used && (udp ? x->port == port : x->ip == ip)) return x;
    }
    if (!add) return NULL;
    for (unsigned i = 0; i < MAX_SENDERS; i++) {
        struct sender *x = &s->snd[i];
        if (!x->used) {
            memset(x, 0, sizeof *x);
            x->used = true;
            x->port = port;
            x->ip = ip;
            return x;
        }
    }
    return NULL;
}

static void sender_learn_qpn(struct sender *x, uint32_t qpn)
{
    for (unsigned i = 0; i < x->n_qpn; i++)
        if (x->qpn[i] == qpn) return;
    if (x->n_qpn < MAX_QPNS)
        x->qpn[x->n_qpn++] = qpn;
    else
        x->qpn[qpn % MAX_QPNS] = qpn;
}

static void forge_cnps(struct fe_eswitch *s, struct sender *x, uint64_t now_ns)
{
    (void)now_ns;
    for (unsigned k = 0; k < x->n_qpn; k++) {
        struct fe_pkt p;
        fe_cnp_build(&p, x->qpn[k], FE_CNP_DSCP, FE_CNP_PCP);
        uint8_t buf[256];
        struct fe_dgram d = {.buf = buf};
        int len;
        if (s->cfg.backend == FE_BACKEND_UDP) {
            len = fe_frame_encode(buf, sizeof buf, FE_FRAME_BTH, NULL, 0, &p);
            if (len <= 0 || !s->peer_ip[x->port]) continue;
            d.len = (uint32_t)len;
            d.ip = s->peer_ip[x->port];
            d.port = s->peer_port[x->port];
            d.tos = FE_CNP_DSCP << 2;
            if (fe_udpsock_send(s->acc[x->port], &d, 1) != 1) continue;
        } else {
            struct fe_path path;
            memset(&path, 0, sizeof path);
            memcpy(path.src_mac, x->rcv_mac, 6);
            memcpy(path.dst_mac, x->mac, 6);
            path.ipver = 4;
            path.src_ip4 = x->rcv_ip;
            path.dst_ip4 = x->ip;
            path.udp_sport = CNP_SPORT;
            path.udp_dport = FE_ROCEV2_UDP_PORT;
            len = fe_frame_encode(buf, sizeof buf, FE_FRAME_ETH, &path, 0, &p);
            if (len <= 0) continue;
            d.len = (uint32_t)len;
            if (fe_raw_send(s->raw[x->port], &d, 1) != 1) continue;
        }
        s->port[x->port].st.cnps_forged++;
    }
}

static void threshold_tick(struct fe_eswitch *s, uint64_t now_ns)
{
    if (!s->cfg.thresh_bps) return;
    uint64_t w = s->cfg.window_ns;
    while (now_ns >= s->win_start + w) {
        /* bytes x 8 / window > threshold, in integers */
        uint64_t limit = s->cfg.thresh_bps / 8 * w / 1000000000u;
        for (unsigned i = 0; i < MAX_SENDERS; i++) {
            struct sender *x = &s->snd[i];
            if (x->used && x->win_bytes > limit) forge_cnps(s, x, now_ns);
            x->win_bytes = 0;
        }
        s->win_start += w;
        if (now_ns >= s->win_start + 4 * w) s->win_start = now_ns - (now_ns - s->win_start) % w;
    }
}

/* ---- queueing ---- */

/* Accounts the queue length held since the last change, before it changes at now_ns. */
static void q_account(struct eport *p, uint64_t now_ns)
{
    if (!p->q_since_ns) p->q_since_ns = p->q_last_ns = now_ns;
    if (now_ns > p->q_last_ns) {
        p->q_integral += (long double)p->q.bytes * (long double)(now_ns - p->q_last_ns);
        p->q_last_ns = now_ns;
    }
    if (p->q_last_ns > p->q_since_ns)
        p->st.qlen_avg_bytes =
            (uint64_t)(p->q_integral / (long double)(p->q_last_ns - p->q_since_ns));
}

static void enqueue(struct fe_eswitch *s, unsigned qi, const uint8_t *data, uint32_t len,
                    uint16_t out, uint8_t tos, uint64_t now_ns)
{
    struct eport *p = &s->port[qi];
    q_account(p, now_ns);
    if (p->shaped && chance_ppm(s, s->cfg.loss_ppm)) {
        p->st.drops_loss++;
        return;
    }
    bool was_empty = p->q.n == 0 && !p->held;
    if (!fifo_push(&p->q, data, len, out, tos, now_ns + (p->shaped ? s->cfg.delay_ns : 0))) {
        p->st.drops_full++;
        return;
    }
    if (was_empty && p->busy_until < now_ns) p->busy_until = now_ns;
    p->st.qlen_bytes = p->q.bytes;
    if (p->q.bytes > p->st.qlen_max_bytes) p->st.qlen_max_bytes = p->q.bytes;
}

/* Sets CE on an ECN-capable packet: UDP form in the TOS byte; raw form in the frame's IP header
 * (IPv4 checksum updated; the ICRC masks these bits). */
static bool mark_ce(struct fe_eswitch *s, uint8_t *data, uint32_t len, uint8_t *tos)
{
    if (s->cfg.backend == FE_BACKEND_UDP) {
        if ((*tos & 3) == FE_ECN_NOT_ECT || (*tos & 3) == FE_ECN_CE) return false;
        *tos |= 3;
        return true;
    }
    size_t l3 = 14;
    if (len < 14) return false;
    uint16_t et = (uint16_t)(data[12] << 8 | data[13]);
    if (et == FE_ETHERTYPE_VLAN && len >= 18) {
        et = (uint16_t)(data[16] << 8 | data[17]);
        l3 = 18;
    }
    if (et == FE_ETHERTYPE_IPV4 && len >= l3 + 20) {
        uint8_t *ip = data + l3;
        size_t ihl = (size_t)(ip[0] & 15) * 4;
        if (ihl < 20 || len < l3 + ihl) return false;
        if ((ip[1] & 3) == FE_ECN_NOT_ECT || (ip[1] & 3) == FE_ECN_CE) return false;
        ip[1] |= 3;
        ip[10] = ip[11] = 0;
        uint16_t c = fe_ipv4_checksum(ip, ihl);
        ip[10] = (uint8_t)(c >> 8);
        ip[11] = (uint8_t)c;
        return true;
    }
    if (et == FE_ETHERTYPE_IPV6 && len >= l3 + 40) {
        uint8_t *ip = data + l3;
        uint8_t ecn = (ip[1] >> 4) & 3;
        if (ecn == FE_ECN_NOT_ECT || ecn == FE_ECN_CE) return false;
        ip[1] |= 0x30;
        return true;
    }
    return false;
}

/* Where the BTH starts in a packet of this switch, and *end where the ICRC ends: the whole
 * datagram in the UDP form; the UDP payload (port 4791) of a frame in the raw form (Ethernet
 * padding excluded). -1 when it is not RoCEv2. */
static long roce_offset(const struct fe_eswitch *s, const uint8_t *data, uint32_t len,
                        uint32_t *end)
{
    *end = len;
    if (s->cfg.backend == FE_BACKEND_UDP) return 0;
    size_t l3 = 14;
    if (len < 14) return -1;
    uint16_t et = (uint16_t)(data[12] << 8 | data[13]);
    if (et == FE_ETHERTYPE_VLAN && len >= 18) {
        et = (uint16_t)(data[16] << 8 | data[17]);
        l3 = 18;
    }
    size_t l4;
    uint8_t proto;
    if (et == FE_ETHERTYPE_IPV4 && len >= l3 + 20) {
        l4 = l3 + (size_t)(data[l3] & 15) * 4;
        proto = data[l3 + 9];
    } else if (et == FE_ETHERTYPE_IPV6 && len >= l3 + 40) {
        l4 = l3 + 40;
        proto = data[l3 + 6];
    } else {
        return -1;
    }
    if (proto != 17 || len < l4 + 8) return -1;
    if ((uint16_t)(data[l4 + 2] << 8 | data[l4 + 3]) != FE_ROCEV2_UDP_PORT) return -1;
    size_t udp_len = (size_t)(data[l4 + 4] << 8 | data[l4 + 5]);
    if (udp_len < 8 || l4 + udp_len > len) return -1;
    *end = (uint32_t)(l4 + udp_len);
    return (long)(l4 + 8);
}

/* Flips one byte (by a non-zero mask) between the end of the BTH and the end of the ICRC: the
 * ICRC, a CRC-32, catches every such change, and the packet still names its QP. */
static bool corrupt(struct fe_eswitch *s, struct eport *p, uint8_t *data, uint32_t len)
{
    if (!chance_ppm(s, s->cfg.corrupt_ppm)) return false;
    uint32_t end;
    long at = roce_offset(s, data, len, &end);
    if (at < 0 || (uint64_t)at + FE_BTH_LEN >= end) return false;
    uint32_t from = (uint32_t)at + FE_BTH_LEN;
    uint32_t i = from + rnd32(s) % (end - from);
    data[i] ^= (uint8_t)(1u + rnd32(s) % 255u);
    p->st.corrupted++;
    return true;
}

static uint64_t wire_bytes(const struct fe_eswitch *s, uint32_t len)
{
    return s->cfg.backend == FE_BACKEND_UDP ? (uint64_t)len + WIRE_EXTRA : (uint64_t)len + 4;
}

/* Transmits one packet of egress port qi to its target. */
/* Packets leave in batches: emit() collects (the bytes stay where they are: popped FIFO
 * entries are not overwritten before the next push, and nothing is pushed while serving),
 * flush() sends each target's packets with one system call. */
static void flush(struct fe_eswitch *s, unsigned qi)
{
    int n = s->n_out;
    for (int i = 0; i < n; i++) {
        if (s->out_done[i]) continue;
        uint16_t out = s->out_tgt[i];
        int m = 0;
        for (int j = i; j < n; j++) { /* this target's packets, in order */
            if (s->out_done[j] || s->out_tgt[j] != out) continue;
            s->out_d[FE_IO_MAX_BATCH + m++] = s->out_d[j];
            s->out_done[j] = true;
        }
        struct fe_dgram *d = &s->out_d[FE_IO_MAX_BATCH];
        int sent = 0;
        while (sent < m) {
            int k = s->cfg.backend == FE_BACKEND_UDP
                        ? fe_udpsock_send(s->back[out], d + sent, m - sent)
                        : fe_raw_send(s->raw[out], d + sent, m - sent);
            if (k <= 0) break; /* the kernel refused: they are lost, like on a full link */
            sent += k;
        }
        s->port[qi].st.tx_pkts += (uint64_t)sent;
        for (int j = 0; j < sent; j++) s->port[qi].st.tx_bytes += d[j].len;
    }
    s->n_out = 0;
}

static void emit(struct fe_eswitch *s, unsigned qi, const uint8_t *data, uint32_t len, uint16_t out,
                 uint8_t tos)
{
    if (s->n_out == FE_IO_MAX_BATCH) flush(s, qi);
    struct fe_dgram *d = &s->out_d[s->n_out];
    *d = (struct fe_dgram){.buf = (uint8_t *)data, .len = len, .tos = tos};
    if (s->cfg.backend == FE_BACKEND_UDP) {
        d->ip = s->cfg.to_ip;
        d->port = s->cfg.to_port;
    }
    s->out_tgt[s->n_out] = out;
    s->out_done[s->n_out] = false;
    s->n_out++;
}

/* Serves egress port qi as far as its rate allows at now_ns. */
static void serve(struct fe_eswitch *s, unsigned qi, uint64_t now_ns)
{
    struct eport *p = &s->port[qi];
    if (p->q_since_ns) q_account(p, now_ns);
    for (;;) {
        uint8_t *data;
        struct qhdr *h = fifo_peek(&p->q, &data);
        if (!h) {
            if (p->held && now_ns >= p->held_ns + 1000000u) { /* nothing followed: let it go */
                emit(s, qi, p->held_buf, p->held_len, p->held_out, p->held_tos);
                flush(s, qi);
                p->held = false;
            }
            break;
        }
        uint64_t start = p->busy_until > h->t_ns ? p->busy_until : h->t_ns;
        if (p->shaped && s->cfg.rate_bps && start > now_ns) break;
        if (!p->shaped && h->t_ns > now_ns) break;
        uint32_t len = h->len;
        uint16_t out = h->out;
        uint8_t tos = h->tos;
        if (p->shaped && s->cfg.rate_bps)
            p->busy_until = start + wire_bytes(s, len) * 8000000000ull / s->cfg.rate_bps;
        /* RED on the queue the packet leaves behind (as DCQCN switches mark at egress); the
         * packet is marked and sent in place: nothing is pushed while serving */
        if (p->shaped && s->cfg.ecn && fe_red_mark(&s->cfg.red, p->q.bytes - len, rnd32(s)) &&
            mark_ce(s, data, len, &tos))
            p->st.marked++;
        bool bad = p->shaped && corrupt(s, p, data, len); /* in place, as the marking */
        if (p->shaped && !p->held && chance_ppm(s, s->cfg.reorder_ppm)) {
            flush(s, qi); /* held_buf may still be queued for sending */
            memcpy(p->held_buf, data, len);
            p->held_len = len;
            p->held_out = out;
            p->held_tos = tos;
            p->held_ns = now_ns;
            p->held = true;
            p->st.reordered++;
        } else {
            emit(s, qi, data, len, out, tos);
            if (p->shaped && chance_ppm(s, s->cfg.dup_ppm)) { /* the copy follows at once */
                emit(s, qi, data, len, out, tos);
                p->st.duplicated++;
                p->st.corrupted += bad; /* a receiver sees both copies fail */
            }
            if (p->held) { /* the held packet goes right after the one that overtook it */
                emit(s, qi, p->held_buf, p->held_len, p->held_out, p->held_tos);
                p->held = false;
            }
        }
        fifo_pop(&p->q);
        p->st.qlen_bytes = p->q.bytes;
    }
    flush(s, qi);
}

/* ---- UDP form ---- */

static void udp_reverse(struct fe_eswitch *s, unsigned k, uint64_t now_ns)
{
    (void)now_ns;
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < FE_IO_MAX_BATCH; i++) s->d[i].cap = PKT_MAX;
        int n = fe_udpsock_recv(s->back[k], s->d, FE_IO_MAX_BATCH);
        if (n <= 0) return;
        int m = 0;
        for (int i = 0; i < n; i++) {
            struct fe_dgram *d = &s->d[i];
            if (d->trunc || !s->peer_ip[k]) continue;
            struct eport *b = &s->port[bottleneck(s)];
            b->st.rx_pkts++;
            b->st.rx_bytes += d->len;
            if (s->cfg.thresh_bps && d->len >= FE_BTH_LEN) { /* learn the senders' QPNs */
                struct fe_bth bth;
                enum fe_parse_reason why;
                if (fe_bth_parse(d->buf, d->len, &bth, &why) && bth.opcode == FE_OP_ACK) {
                    struct sender *x = sender_find(s, k, s->peer_ip[k], true);
                    if (x) sender_learn_qpn(x, bth.dqpn);
                }
            }
            d->ip = s->peer_ip[k];
            d->port = s->peer_port[k];
            if (m != i) {
                struct fe_dgram t = s->d[m];
                s->d[m] = *d;
                *d = t;
            }
            m++;
        }
        int sent = fe_udpsock_send(s->acc[k], s->d, m);
        if (sent > 0) {
            s->port[k].st.tx_pkts += (uint64_t)sent;
            for (int i = 0; i < sent; i++) s->port[k].st.tx_bytes += s->d[i].len;
        }
        for (int i = 0; i < FE_IO_MAX_BATCH; i++) s->d[i].buf = s->rx[i];
        if (n < FE_IO_MAX_BATCH) return;
    }
}

/* ---- raw form: an L2 learning switch ---- */

static int fdb_lookup(const struct fe_eswitch *s, const uint8_t *mac)
{
    for (unsigned i = 0; i < 256; i++)
        if (s->fdb[i].used && !memcmp(s->fdb[i].mac, mac, 6)) return s->fdb[i].port;
    return -1;
}

static void fdb_learn(struct fe_eswitch *s, const uint8_t *mac, unsigned port)
{
    if (mac[0] & 1) return;
    for (unsigned i = 0; i < 256; i++) {
        if (s->fdb[i].used && !memcmp(s->fdb[i].mac, mac, 6)) {
            s->fdb[i].port = (uint16_t)port;
            return;
        }
    }
    unsigned i = s->fdb_next++ % 256;
    memcpy(s->fdb[i].mac, mac, 6);
    s->fdb[i].port = (uint16_t)port;
    s->fdb[i].used = true;
}

static void raw_learn_roce(struct fe_eswitch *s, unsigned port, const uint8_t *f, uint32_t len)
{
    struct fe_frame fr;
    enum fe_parse_reason why;
    if (fe_frame_decode(f, len, FE_FRAME_ETH, false, &fr, &why, NULL) != 0 || fr.ipver != 4) return;
    unsigned fl = fe_opcode_flags(fr.pkt.bth.opcode);
    if (fl & FE_OPF_REQUEST) { /* data from a sender: count it */
        struct sender *x = sender_find(s, port, fr.ip4.src, true);
        if (!x) return;
        x->port = port;
        memcpy(x->mac, fr.eth.src, 6);
        memcpy(x->rcv_mac, fr.eth.dst, 6);
        x->rcv_ip = fr.ip4.dst;
        x->win_bytes += len;
    } else if (fr.pkt.bth.opcode == FE_OP_ACK) { /* an ACK names the sender's QP */
        struct sender *x = sender_find(s, 0, fr.ip4.dst, false);
        if (x) sender_learn_qpn(x, fr.pkt.bth.dqpn);
    }
}

/* ---- ingress, in arrival order ----
 * A switch process that was not scheduled for a while finds a backlog in its sockets. Taking
 * it as if it all arrived now would invent a queue (and CE marks) the link never had, so every
 * packet is handled at its kernel arrival time: the ready ports' backlogs are merged by time and
 * the egress ports are served up to each arrival before it is queued. */
static int by_time(const void *a, const void *b)
{
    uint64_t x = ((const struct arrival *)a)->d->ts_ns, y = ((const struct arrival *)b)->d->ts_ns;
    return x < y ? -1 : x > y;
}

static void arrive_udp(struct fe_eswitch *s, unsigned k, struct fe_dgram *d, uint64_t t)
{
    s->peer_ip[k] = d->ip; /* replies go back to whoever sends here */
    s->peer_port[k] = d->port;
    s->port[k].st.rx_pkts++;
    s->port[k].st.rx_bytes += d->len;
    if (s->cfg.thresh_bps) {
        struct sender *x = sender_find(s, k, d->ip, true);
        if (x) x->win_bytes += d->len;
    }
    enqueue(s, bottleneck(s), d->buf, d->len, (uint16_t)k, d->tos, t);
}

static void arrive_raw(struct fe_eswitch *s, unsigned k, struct fe_dgram *d, uint64_t t)
{
    if (d->len < 14) return;
    s->port[k].st.rx_pkts++;
    s->port[k].st.rx_bytes += d->len;
    fdb_learn(s, d->buf + 6, k);
    if (s->cfg.thresh_bps) raw_learn_roce(s, k, d->buf, d->len);
    int out = (d->buf[0] & 1) ? -1 : fdb_lookup(s, d->buf);
    if (out == (int)k) return; /* stays on its segment */
    for (unsigned j = 0; j < s->n_ports; j++) {
        if (j == k || (out >= 0 && (int)j != out)) continue;
        enqueue(s, j, d->buf, d->len, (uint16_t)j, 0, t);
    }
}

static void ingress(struct fe_eswitch *s, unsigned ready, uint64_t now_ns)
{
    bool udp = s->cfg.backend == FE_BACKEND_UDP;
    unsigned nin = udp ? s->cfg.n_ports : s->n_ports;
    for (int round = 0; round < 8; round++) {
        unsigned n = 0;
        bool more = false;
        for (unsigned k = 0; k < nin; k++) {
            if (!(ready & (1u << k))) continue;
            struct fe_dgram *d = s->in_d + (size_t)k * FE_IO_MAX_BATCH;
            for (int i = 0; i < FE_IO_MAX_BATCH; i++) {
                d[i].buf = s->in_mem + ((size_t)k * FE_IO_MAX_BATCH + (size_t)i) * PKT_MAX;
                d[i].cap = PKT_MAX;
            }
            int got = udp ? fe_udpsock_recv(s->acc[k], d, FE_IO_MAX_BATCH)
                          : fe_raw_recv(s->raw[k], d, FE_IO_MAX_BATCH);
            if (got <= 0) {
                ready &= ~(1u << k);
                continue;
            }
            if (got == FE_IO_MAX_BATCH)
                more = true;
            else
                ready &= ~(1u << k);
            for (int i = 0; i < got; i++) {
                if (d[i].trunc) continue;
                /* no timestamp, or one from the future (clock step): now */
                if (!d[i].ts_ns || d[i].ts_ns > now_ns) d[i].ts_ns = now_ns;
                s->in_list[n++] = (struct arrival){.d = &d[i], .port = k};
            }
        }
        qsort(s->in_list, n, sizeof s->in_list[0], by_time);
        for (unsigned i = 0; i < n; i++) {
            uint64_t t = s->in_list[i].d->ts_ns;
            threshold_tick(s, t);
            for (unsigned j = 0; j < s->n_ports; j++) serve(s, j, t);
            if (udp)
                arrive_udp(s, s->in_list[i].port, s->in_list[i].d, t);
            else
                arrive_raw(s, s->in_list[i].port, s->in_list[i].d, t);
        }
        if (!more) break;
    }
}

void fe_eswitch_step(struct fe_eswitch *s, uint64_t now_ns, unsigned ready)
{
    ingress(s, ready, now_ns);
    if (s->cfg.backend == FE_BACKEND_UDP) {
        unsigned np = s->cfg.n_ports;
        for (unsigned k = 0; k < np; k++)
            if (ready & (1u << (np + k))) udp_reverse(s, k, now_ns);
    }
    threshold_tick(s, now_ns);
    for (unsigned i = 0; i < s->n_ports; i++) serve(s, i, now_ns);
}

uint64_t fe_eswitch_next_deadline(const struct fe_eswitch *s)
{
    uint64_t d = UINT64_MAX;
    for (unsigned i = 0; i < s->n_ports; i++) {
        const struct eport *p = &s->port[i];
        if (p->q.n) {
            uint8_t *data;
            struct qhdr *h = fifo_peek((struct fifo *)&p->q, &data);
            uint64_t t = h->t_ns;
            if (p->shaped && s->cfg.rate_bps && p->busy_until > t) t = p->busy_until;
            if (t < d) d = t;
        } else if (p->held && p->held_ns + 1000000u < d) {
            d = p->held_ns + 1000000u;
        }
    }
    if (s->cfg.thresh_bps && s->win_start + s->cfg.window_ns < d)
        d = s->win_start + s->cfg.window_ns;
    return d;
}
