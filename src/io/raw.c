/* Raw Ethernet for whole RoCEv2 frames built by feroce: AF_PACKET batched with
 * sendmmsg/recvmmsg, or AF_XDP (xdp.c) where it can be set up. Both paths share everything past
 * the socket: which frames are ours, ARP and ICMP. Like a front-end board, an endpoint answers ARP
 * requests and ICMP echo requests for its own IPv4 address itself (the interface carries no kernel
 * address), and learns its peers' MACs from ARP. */
#include "feroce/io.h"
#include "io/fail.h"
#include "io/sockbuf.h"
#include "io/xdp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "feroce/wire.h"
#include "wire/bytes.h"

#define ARP_CACHE       64
#define ARP_RETRY_NS    100000000ull /* one request per address per 100 ms at most */
#define RX_SCRATCH      9216
#define IPPROTO_ICMP_NO 1
#define NEEDS_NET_RAW   "needs root or CAP_NET_RAW"

struct arp_entry {
    uint32_t ip;
    uint8_t mac[6];
    bool valid;
    uint64_t asked_ns; /* last request sent (for unresolved entries) */
};

struct fe_raw {
    int fd;             /* AF_PACKET; with AF_XDP only for interface requests */
    struct fe_xdp *xdp; /* frames go through AF_XDP when set */
    char kind_name[40];
    int ifindex;
    struct fe_raw_config cfg;
    uint8_t mac[6];
    struct fe_raw_stats st;
    struct arp_entry arp[ARP_CACHE];
    unsigned arp_next;
    struct mmsghdr msg[FE_IO_MAX_BATCH];
    struct iovec iov[FE_IO_MAX_BATCH];
    struct sockaddr_ll sll[FE_IO_MAX_BATCH];
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl[FE_IO_MAX_BATCH];
    uint8_t reply[128]; /* ARP / small ICMP answers */
    uint8_t icmp_buf[RX_SCRATCH];
};

void fe_raw_config_default(struct fe_raw_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->answer_arp_icmp = true;
    cfg->rcvbuf_bytes = 8u << 20;
    cfg->sndbuf_bytes = 4u << 20;
}

/* An AF_PACKET socket bound to the interface, blind to its own transmissions where the kernel
 * allows. With AF_XDP carrying the frames it stays unbound and receives nothing: it only serves
 * the interface requests (MAC, promiscuous mode). */
static int open_socket(struct fe_raw *r)
{
    int proto = r->xdp ? 0 : htons(ETH_P_ALL);
    r->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
    if (r->fd < 0)
        return fe_io_fail_os(errno == EPERM || errno == EACCES ? FE_EACCESS : FE_EIO, "raw socket",
                             NEEDS_NET_RAW);
    if (r->xdp) return 0;
    struct sockaddr_ll sa;
    memset(&sa, 0, sizeof sa);
    sa.sll_family = AF_PACKET;
    sa.sll_protocol = htons(ETH_P_ALL);
    sa.sll_ifindex = r->ifindex;
    if (bind(r->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        return fe_io_fail_os(FE_EIO, "bind", NULL);
#ifdef PACKET_IGNORE_OUTGOING
    int one = 1;
    (void)setsockopt(r->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
#endif
    return 0;
}

int fe_raw_kind_parse(const char *s, enum fe_raw_kind *kind)
{
    static const char *const names[] = {"auto", "packet", "xdp"};
    for (int k = 0; k < 3; k++)
        if (!strcmp(s, names[k])) {
            *kind = (enum fe_raw_kind)k;
            return 0;
        }
    return -1;
}

/* Receive queues of the interface (sysfs); 1 when it cannot tell. */
static int rx_queues(const char *ifname)
{
    char path[96];
    int n = 0;
    for (; n < 4096; n++) {
        snprintf(path, sizeof path, "/sys/class/net/%s/queues/rx-%d", ifname, n);
        if (access(path, F_OK) != 0) break;
    }
    return n ? n : 1;
}

static bool has_ipv4(const char *ifname)
{
    struct ifaddrs *ifa, *i;
    bool found = false;
    if (getifaddrs(&ifa) != 0) return false;
    for (i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, ifname))
            found = true;
    freeifaddrs(ifa);
    return found;
}

/* Why AF_XDP would take or lose frames that AF_PACKET handles (NULL: it would not). explicit:
 * asked for by name, so a kernel address on the interface is the user's choice. */
static const char *xdp_unfit(const struct fe_raw *r, bool explicit)
{
    if (r->cfg.timestamps) return "kernel receive timestamps need AF_PACKET";
    if (rx_queues(r->cfg.ifname) > 1) return "several receive queues; AF_XDP serves queue 0 only";
    if (explicit) return NULL;
    if (!fe_xdp_built()) return "built without libxdp";
    if (r->cfg.promisc) return "a promiscuous port";
    if (has_ipv4(r->cfg.ifname)) return "the interface has a kernel IPv4 address";
    return NULL;
}

/* AF_XDP when asked for (or auto and fit); AF_PACKET otherwise, always saying why: a run
 * that ends on the slower path for a reason nobody sees cannot be told from one that chose
 * it. */
static void choose_kind(struct fe_raw *r)
{
    bool explicit = r->cfg.kind == FE_RAW_XDP;
    snprintf(r->kind_name, sizeof r->kind_name, "af_packet");
    if (r->cfg.kind == FE_RAW_PACKET) return;
    const char *unfit = xdp_unfit(r, explicit);
    char why[320];
    if (unfit) {
        fprintf(stderr, "feroce: AF_XDP on %s: %s; using AF_PACKET\n", r->cfg.ifname, unfit);
        return;
    }
    r->xdp = fe_xdp_open(r->cfg.ifname, r->ifindex, why, sizeof why);
    if (!r->xdp) {
        fprintf(stderr, "feroce: AF_XDP on %s cannot be set up (%s); using AF_PACKET\n",
                r->cfg.ifname, why);
        return;
    }
    snprintf(r->kind_name, sizeof r->kind_name, "af_xdp %s", fe_xdp_mode(r->xdp));
}

/* Our MAC: the configured one, else the interface's. A MAC of our own (not the interface's), or
 * a switch port, needs promiscuous mode to see its frames. */
static int set_mac(struct fe_raw *r, const struct fe_raw_config *cfg)
{
    static const uint8_t zero[6];
    if (!memcmp(cfg->mac, zero, 6)) {
        struct ifreq ifr;
        memset(&ifr, 0, sizeof ifr);
        memcpy(ifr.ifr_name, r->cfg.ifname, strlen(r->cfg.ifname));
        if (ioctl(r->fd, SIOCGIFHWADDR, &ifr) != 0)
            return fe_io_fail_os(FE_EIO, "reading the interface's MAC", NULL);
        memcpy(r->mac, ifr.ifr_hwaddr.sa_data, 6);
    } else {
        memcpy(r->mac, cfg->mac, 6);
    }
    if (cfg->promisc || memcmp(cfg->mac, zero, 6)) {
        struct packet_mreq mr;
        memset(&mr, 0, sizeof mr);
        mr.mr_ifindex = r->ifindex;
        mr.mr_type = PACKET_MR_PROMISC;
        if (setsockopt(r->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) != 0)
            return fe_io_fail_os(FE_EIO, "promiscuous mode", NEEDS_NET_RAW);
    }
    return 0;
}

/* if_nametoindex said no: ENODEV is an interface that does not exist (strerror's "no such
 * device" would send a reader looking for hardware); anything else is the lookup's own failure. */
static int lookup_failed(void)
{
    if (errno == ENODEV)
        return fe_io_fail_text(FE_ENOENT, "interface lookup", ENODEV, "no such interface");
    return fe_io_fail_os(FE_ENOENT, "interface lookup", NULL);
}

struct fe_raw *fe_raw_open(const struct fe_raw_config *cfg, int *err)
{
    int e = FE_ENOMEM;
    fe_io_fail_clear();
    struct fe_raw *r = calloc(1, sizeof *r);
    if (!r) goto fail;
    r->fd = -1;
    r->cfg = *cfg;
    r->cfg.ifname[sizeof r->cfg.ifname - 1] = 0;
    r->ifindex = (int)if_nametoindex(r->cfg.ifname);
    if (!r->ifindex) {
        e = lookup_failed();
        goto fail;
    }
    choose_kind(r);
    e = open_socket(r);
    if (!e) e = set_mac(r, cfg);
    if (e) goto fail;
    if (!r->xdp) fe_io_size_buffers(r->fd, cfg->rcvbuf_bytes, cfg->sndbuf_bytes);
    int on = 1;
    if (cfg->timestamps && setsockopt(r->fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) {
        e = fe_io_fail_os(FE_EIO, "SO_TIMESTAMPNS", NULL);
        goto fail;
    }
    if (err) *err = 0;
    return r;
fail:
    if (err) *err = e;
    fe_raw_close(r);
    return NULL;
}

void fe_raw_close(struct fe_raw *r)
{
    if (!r) return;
    fe_xdp_close(r->xdp);
    if (r->fd >= 0) close(r->fd);
    free(r);
}

int fe_raw_fd(const struct fe_raw *r)
{
    return r->xdp ? fe_xdp_fd(r->xdp) : r->fd;
}
const char *fe_raw_kind_name(const struct fe_raw *r)
{
    return r->kind_name;
}
void fe_raw_mac(const struct fe_raw *r, uint8_t mac[6])
{
    memcpy(mac, r->mac, 6);
}
const struct fe_raw_stats *fe_raw_stats(const struct fe_raw *r)
{
    struct fe_raw *w = (struct fe_raw *)r; /* the counters are ours to refresh; r is not const */
    if (r->xdp) {
        w->st.rx_kernel_drops = fe_xdp_kernel_drops(r->xdp);
    } else {
        struct tpacket_stats ps; /* reading resets the kernel's counts: add them up */
        socklen_t l = sizeof ps;
        if (!getsockopt(r->fd, SOL_PACKET, PACKET_STATISTICS, &ps, &l))
            w->st.rx_kernel_drops += ps.tp_drops;
    }
    return &r->st;
}

static int send_one(struct fe_raw *r, const uint8_t *buf, size_t len)
{
    struct fe_dgram d = {.buf = (uint8_t *)buf, .len = (uint32_t)len};
    return fe_raw_send(r, &d, 1);
}

int fe_raw_send(struct fe_raw *r, const struct fe_dgram *d, int n)
{
    if (n <= 0) return 0;
    if (n > FE_IO_MAX_BATCH) n = FE_IO_MAX_BATCH;
    if (r->xdp) return fe_xdp_send(r->xdp, d, n, &r->st);
    for (int i = 0; i < n; i++) {
        r->iov[i].iov_base = d[i].buf;
        r->iov[i].iov_len = d[i].len;
        struct msghdr *h = &r->msg[i].msg_hdr;
        memset(h, 0, sizeof *h);
        h->msg_iov = &r->iov[i];
        h->msg_iovlen = 1; /* the socket is bound to the interface: no address needed */
    }
    int done = 0;
    while (done < n) {
        int k = sendmmsg(r->fd, r->msg + done, (unsigned)(n - done), MSG_DONTWAIT);
        if (k > 0) {
            for (int i = done; i < done + k; i++) r->st.tx_bytes += d[i].len;
            r->st.tx_frames += (uint64_t)k;
            done += k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
            r->st.tx_again++;
            break;
        }
        r->st.tx_errors++;
        done++;
    }
    return done;
}

/* ---- ARP ---- */

static struct arp_entry *arp_find(struct fe_raw *r, uint32_t ip)
{
    for (unsigned i = 0; i < ARP_CACHE; i++)
        if (r->arp[i].ip == ip && (r->arp[i].valid || r->arp[i].asked_ns)) return &r->arp[i];
    return NULL;
}

static struct arp_entry *arp_slot(struct fe_raw *r, uint32_t ip)
{
    struct arp_entry *e = arp_find(r, ip);
    if (e) return e;
    e = &r->arp[r->arp_next++ % ARP_CACHE]; /* round-robin replacement: small, bounded */
    memset(e, 0, sizeof *e);
    e->ip = ip;
    return e;
}

static void arp_learn(struct fe_raw *r, uint32_t ip, const uint8_t *mac)
{
    if (!ip || (mac[0] & 1)) return; /* no multicast/broadcast MACs */
    struct arp_entry *e = arp_slot(r, ip);
    memcpy(e->mac, mac, 6);
    e->valid = true;
}

/* Ethernet + ARP (IPv4 over Ethernet): 14 + 28 bytes, padded to the 60-byte minimum. */
static size_t arp_build(uint8_t *b, const uint8_t *dst_mac, const uint8_t *src_mac, uint16_t op,
                        uint32_t sip, const uint8_t *tha, uint32_t tip)
{
    memset(b, 0, 60);
    memcpy(b, dst_mac, 6);
    memcpy(b + 6, src_mac, 6);
    fe_put16(b + 12, FE_ETHERTYPE_ARP);
    fe_put16(b + 14, 1);      /* Ethernet */
    fe_put16(b + 16, 0x0800); /* IPv4 */
    b[18] = 6;
    b[19] = 4;
    fe_put16(b + 20, op);
    memcpy(b + 22, src_mac, 6);
    fe_put32(b + 28, sip);
    memcpy(b + 32, tha, 6);
    fe_put32(b + 38, tip);
    return 60;
}

int fe_raw_resolve(struct fe_raw *r, uint32_t ip, uint8_t mac[6], uint64_t now_ns)
{
    struct arp_entry *e = arp_find(r, ip);
    if (e && e->valid) {
        memcpy(mac, e->mac, 6);
        return 1;
    }
    if (!e) e = arp_slot(r, ip);
    if (!e->asked_ns || now_ns >= e->asked_ns + ARP_RETRY_NS) {
        static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, zero[6];
        size_t n = arp_build(r->reply, bcast, r->mac, 1, r->cfg.ip, zero, ip);
        if (send_one(r, r->reply, n) == 1) r->st.arp_requests_sent++;
        e->asked_ns = now_ns ? now_ns : 1;
    }
    return 0;
}

/* Handles ARP: learns the sender, answers requests for our address. */
static void arp_input(struct fe_raw *r, const uint8_t *f, size_t len)
{
    if (len < 14 + 28) return;
    const uint8_t *a = f + 14;
    if (fe_be16(a) != 1 || fe_be16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4) return;
    uint16_t op = fe_be16(a + 6);
    uint32_t sip = fe_be32(a + 14), tip = fe_be32(a + 24);
    if (r->cfg.ip && tip == r->cfg.ip)
        arp_learn(r, sip, a + 8);
    else if (arp_find(r, sip))
        arp_learn(r, sip, a + 8); /* refresh what we asked about */
    if (op == 1 && r->cfg.ip && tip == r->cfg.ip && r->cfg.answer_arp_icmp) {
        size_t n = arp_build(r->reply, a + 8, r->mac, 2, r->cfg.ip, a + 8, sip);
        if (send_one(r, r->reply, n) == 1) r->st.arp_replies++;
    }
}

/* ICMP echo request to our address -> echo reply (same identifier, sequence and data). Returns
 * true when the frame was an echo request for us. */
static bool icmp_input(struct fe_raw *r, const uint8_t *f, size_t len, size_t l3)
{
    struct fe_ipv4 ip;
    enum fe_parse_reason why;
    size_t ihl = fe_ipv4_parse(f + l3, len - l3, &ip, &why);
    if (!ihl || ip.protocol != IPPROTO_ICMP_NO || ip.dst != r->cfg.ip) return false;
    size_t icmp_off = l3 + ihl, icmp_len = (size_t)ip.total_len - ihl;
    if (ip.total_len < ihl + 8 || l3 + ip.total_len > len || (ip.frag & 0x3fff)) return false;
    const uint8_t *ic = f + icmp_off;
    if (ic[0] != 8 || ic[1] != 0) return false; /* echo request only */
    /* fe_ipv4_checksum is the RFC 1071 sum over any length: ICMP's checksum too */
    if (fe_ipv4_checksum(ic, icmp_len) != 0) return true; /* corrupt: swallowed, not answered */
    if (!r->cfg.answer_arp_icmp || icmp_off + icmp_len > sizeof r->icmp_buf) return true;
    uint8_t *o = r->icmp_buf;
    memcpy(o, f + 6, 6); /* back to the sender's MAC */
    memcpy(o + 6, r->mac, 6);
    fe_put16(o + 12, FE_ETHERTYPE_IPV4);
    struct fe_ipv4 rip = ip;
    rip.ihl = 5;
    rip.src = r->cfg.ip;
    rip.dst = ip.src;
    rip.ttl = 64;
    rip.total_len = (uint16_t)(20 + icmp_len);
    rip.frag = 0x4000; /* DF */
    rip.ecn = 0;
    if (!fe_ipv4_write(o + 14, sizeof r->icmp_buf - 14, &rip)) return true;
    memcpy(o + 34, ic, icmp_len);
    o[34] = 0; /* echo reply */
    o[36] = o[37] = 0;
    fe_put16(o + 36, fe_ipv4_checksum(o + 34, icmp_len));
    if (send_one(r, o, 34 + icmp_len) == 1) r->st.icmp_replies++;
    return true;
}

/* Fills msg[0..n) to receive into d[0..n). */
static inline void rx_prepare(struct fe_raw *r, const struct fe_dgram *d, int n)
{
    for (int i = 0; i < n; i++) {
        r->iov[i].iov_base = d[i].buf;
        r->iov[i].iov_len = d[i].cap;
        struct msghdr *h = &r->msg[i].msg_hdr;
        memset(h, 0, sizeof *h);
        h->msg_name = &r->sll[i];
        h->msg_namelen = sizeof r->sll[i];
        h->msg_iov = &r->iov[i];
        h->msg_iovlen = 1;
        if (r->cfg.timestamps) {
            h->msg_control = r->ctl[i].buf;
            h->msg_controllen = sizeof r->ctl[i].buf;
        }
    }
}

/* One recvmmsg: frames received, 0 when the socket is empty, or FE_EIO. */
static inline int rx_call(struct fe_raw *r, int n)
{
    int k;
    do {
        k = recvmmsg(r->fd, r->msg, (unsigned)n, MSG_DONTWAIT | MSG_TRUNC, NULL);
    } while (k < 0 && errno == EINTR);
    if (k < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : FE_EIO;
    return k;
}

/* Answers ARP and ICMP echo for our address; returns true when the frame was consumed here. */
static inline bool rx_local(struct fe_raw *r, const uint8_t *f, uint32_t len, bool trunc)
{
    uint16_t et = fe_be16(f + 12);
    size_t l3 = 14;
    if (et == FE_ETHERTYPE_VLAN && len >= 18) {
        et = fe_be16(f + 16);
        l3 = 18;
    }
    if (et == FE_ETHERTYPE_ARP && !trunc) {
        arp_input(r, f, len);
        return true;
    }
    return et == FE_ETHERTYPE_IPV4 && !trunc && icmp_input(r, f, len, l3);
}

/* Counts received frame f (len bytes as received into the buffer) and decides whether it goes
 * to the caller: not our own transmissions, not frames for other MACs (unless promiscuous), not
 * the ARP/ICMP consumed here. */
static inline bool rx_accept(struct fe_raw *r, bool outgoing, const uint8_t *f, uint32_t len,
                             bool trunc)
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (outgoing) return false;
    if (trunc) r->st.rx_trunc++;
    r->st.rx_frames++;
    r->st.rx_bytes += len;
    if (len < 14) return false;
    bool for_us = !memcmp(f, r->mac, 6) || !memcmp(f, bcast, 6);
    if (!for_us && !r->cfg.promisc) {
        r->st.rx_not_ours++;
        return false;
    }
    if (!r->cfg.promisc && r->cfg.ip && rx_local(r, f, len, trunc)) return false;
    return true;
}

/* The kernel's receive time of message mh, on the realtime clock shifted by off (0 if none). */
static inline uint64_t rx_timestamp(struct msghdr *mh, int64_t off)
{
    uint64_t ts_ns = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof ts);
            int64_t t = (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec - off;
            ts_ns = t > 0 ? (uint64_t)t : 0;
        }
    }
    return ts_ns;
}

/* Compacts: received frame i becomes output `out` (their buffers swap). */
static inline void rx_deliver(struct fe_raw *r, struct fe_dgram *d, int i, int out, uint32_t len,
                              bool trunc, int64_t off)
{
    if (out != i) {
        uint8_t *tmp = d[out].buf;
        uint32_t tcap = d[out].cap;
        d[out].buf = d[i].buf;
        d[out].cap = d[i].cap;
        d[i].buf = tmp;
        d[i].cap = tcap;
    }
    d[out].ts_ns = r->cfg.timestamps ? rx_timestamp(&r->msg[i].msg_hdr, off) : 0;
    d[out].len = len;
    d[out].trunc = trunc;
    d[out].ip = 0;
    d[out].port = 0;
    d[out].tos = 0;
}

/* One batch from the socket into d[0..n): frames received (their length and truncation set in
 * d), 0 when none wait, or FE_EIO. */
static inline int rx_batch(struct fe_raw *r, struct fe_dgram *d, int n)
{
    if (r->xdp) return fe_xdp_recv(r->xdp, d, n);
    rx_prepare(r, d, n);
    int k = rx_call(r, n);
    for (int i = 0; i < k; i++) {
        uint32_t len = r->msg[i].msg_len;
        d[i].trunc = len > d[i].cap || (r->msg[i].msg_hdr.msg_flags & MSG_TRUNC);
        d[i].len = d[i].trunc ? d[i].cap : len;
    }
    return k;
}

int fe_raw_recv(struct fe_raw *r, struct fe_dgram *d, int n)
{
    if (n <= 0) return 0;
    if (n > FE_IO_MAX_BATCH) n = FE_IO_MAX_BATCH;
    int out = 0;
    /* ARP/ICMP frames are consumed here, so read again until frames for the caller arrive or
     * the socket is empty. */
    for (int round = 0; round < 4 && out == 0; round++) {
        int k = rx_batch(r, d, n);
        if (k <= 0) return k;
        int64_t off = r->cfg.timestamps ? fe_io_realtime_offset_ns() : 0;
        for (int i = 0; i < k; i++) {
            uint32_t len = d[i].len;
            bool trunc = d[i].trunc;
            bool outgoing = !r->xdp && r->sll[i].sll_pkttype == PACKET_OUTGOING;
            if (!rx_accept(r, outgoing, d[i].buf, len, trunc)) continue;
            rx_deliver(r, d, i, out, len, trunc, off);
            out++;
        }
        if (k < n) break; /* the socket is empty */
    }
    return out;
}
