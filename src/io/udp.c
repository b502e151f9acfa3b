/* UDP sockets for RoCEv2-over-UDP-payload (FE_FRAME_BTH): batched with sendmmsg/recvmmsg, the
 * TOS byte (DSCP + ECN) set per datagram on send (IP_TOS control message) and reported per
 * datagram on receive (IP_RECVTOS), so ECN marks survive real sockets. Runs of equal packets to
 * one peer go as one UDP GSO send: the sending kernel walks its stack once per run instead of
 * once per packet. A run never mixes TOS values, so every packet keeps its own ECN codepoint.
 * Optionally (gro) the receiver takes UDP GRO super-datagrams and splits them by segment size. */
#include "feroce/io.h"
#include "io/fail.h"
#include "io/sockbuf.h"
#include "io/udp_rx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Control space for IP_TOS, UDP_SEGMENT / UDP_GRO and a receive timestamp, aligned as cmsg
 * requires. */
union tos_cmsg {
    char buf[2 * CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct timespec))];
    struct cmsghdr align;
};

enum {
    GSO_MAX_SEGS = 64,       /* kernel UDP_MAX_SEGMENTS on older kernels (128 on newer) */
    UDP_MAX_PAYLOAD = 65507, /* 65535 - IPv4 header - UDP header */
    GRO_MSGS = 8,            /* super-datagrams per recvmmsg */
    GRO_BUF_BYTES = 65536,   /* one GRO super-datagram at most */
    STAGE_BYTES = 262144,    /* GSO runs gathered per send call (a few 64 KiB runs) */
    STAGE_MAX_MID = 2048,    /* payload pieces from this size on go as iovecs: the copy costs
                              * what the kernel's walk of three iovecs per packet saves */
};

/* A received (possibly coalesced) datagram not yet handed out in full. */
struct gro_slot {
    uint32_t len, seg; /* seg 0: not coalesced */
    uint32_t ip;
    uint16_t port;
    uint8_t tos;
    bool trunc;
    uint64_t ts_ns;
};

struct fe_udpsock {
    int fd;
    uint32_t ip;
    uint16_t port;
    uint64_t rcvbuf, sndbuf;
    bool timestamps;
    bool gso;       /* send runs with UDP_SEGMENT (cleared when the kernel refuses) */
    uint8_t *stage; /* STAGE_BYTES: GSO runs of pieced datagrams gathered (NULL: not yet) */
    uint32_t stage_used;
    uint8_t *gro_buf; /* GRO_MSGS x GRO_BUF_BYTES when UDP GRO is on, else NULL */
    int gro_n, gro_i; /* slots filled by the last recvmmsg / next one to hand out */
    uint32_t gro_off; /* bytes of slot gro_i already handed out */
    struct gro_slot gro[GRO_MSGS];
    struct fe_udpsock_stats st;
    struct mmsghdr msg[FE_IO_MAX_BATCH];
    struct iovec iov[3 * FE_IO_MAX_BATCH]; /* tx: up to three pieces per datagram (fe_dgram.mid) */
    struct sockaddr_in addr[FE_IO_MAX_BATCH];
    union tos_cmsg ctl[FE_IO_MAX_BATCH];
};

void fe_udpsock_config_default(struct fe_udpsock_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->rcvbuf_bytes = 8u << 20; /* ~1.6 ms of 40 Gb/s: bursts into a busy receiver */
    cfg->sndbuf_bytes = 4u << 20;
}

/* Per-socket options: TOS and (optionally) timestamps reported on receive, no fragmentation. */
static int set_socket_options(struct fe_udpsock *u, const struct fe_udpsock_config *cfg)
{
    int one = 1;
    if (cfg->reuse_port) (void)setsockopt(u->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (setsockopt(u->fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof one) != 0)
        return fe_io_fail_os(FE_EIO, "IP_RECVTOS", NULL);
    if (cfg->timestamps && setsockopt(u->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0)
        return fe_io_fail_os(FE_EIO, "SO_TIMESTAMPNS", NULL);
    u->timestamps = cfg->timestamps;
    /* RoCE packets are never fragmented: a datagram larger than the path MTU is an error. */
    int pmtu = IP_PMTUDISC_DO;
    (void)setsockopt(u->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
    u->gso = !cfg->no_gso;
    return 0;
}

/* Without GRO a GSO super-datagram is cut up again on receive; with it, it stays whole. A kernel
 * without UDP_GRO leaves the socket on plain receives. */
static int enable_gro(struct fe_udpsock *u)
{
    u->gro_buf = malloc((size_t)GRO_MSGS * GRO_BUF_BYTES);
    if (!u->gro_buf) return FE_ENOMEM;
    int one = 1;
    if (setsockopt(u->fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) != 0) {
        free(u->gro_buf);
        u->gro_buf = NULL;
    }
    return 0;
}

/* What a refused bind means: a port below 1024 is privileged; above, only a security module
 * refuses, which says nothing we could add to. */
static const char *bind_perm_hint(uint16_t port)
{
    return port && port < 1024 ? "ports below 1024 need root or CAP_NET_BIND_SERVICE" : NULL;
}

/* Binds to the configured address and reads back the address and buffer sizes granted. */
static int bind_local(struct fe_udpsock *u, const struct fe_udpsock_config *cfg)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(cfg->bind_ip);
    sa.sin_port = htons(cfg->bind_port);
    if (bind(u->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        return fe_io_fail_os(FE_EIO, "bind", bind_perm_hint(cfg->bind_port));
    socklen_t sl = sizeof sa;
    if (getsockname(u->fd, (struct sockaddr *)&sa, &sl) != 0)
        return fe_io_fail_os(FE_EIO, "getsockname", NULL);
    u->ip = ntohl(sa.sin_addr.s_addr);
    u->port = ntohs(sa.sin_port);
    int v = 0;
    sl = sizeof v;
    if (getsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &v, &sl) == 0) u->rcvbuf = (uint64_t)v;
    sl = sizeof v;
    if (getsockopt(u->fd, SOL_SOCKET, SO_SNDBUF, &v, &sl) == 0) u->sndbuf = (uint64_t)v;
    return 0;
}

struct fe_udpsock *fe_udpsock_open(const struct fe_udpsock_config *cfg, int *err)
{
    int e = FE_ENOMEM;
    fe_io_fail_clear();
    struct fe_udpsock *u = calloc(1, sizeof *u);
    if (!u) goto fail;
    u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    e = u->fd < 0 ? fe_io_fail_os(FE_EIO, "socket", NULL) : set_socket_options(u, cfg);
    if (!e && cfg->gro) e = enable_gro(u);
    if (e) goto fail;
    fe_io_size_buffers(u->fd, cfg->rcvbuf_bytes, cfg->sndbuf_bytes);
    e = bind_local(u, cfg);
    if (e) goto fail;
    if (err) *err = 0;
    return u;
fail:
    if (u) {
        int saved = errno;
        if (u->fd >= 0) close(u->fd);
        free(u->gro_buf);
        free(u);
        errno = saved;
    }
    if (err) *err = e;
    return NULL;
}

void fe_udpsock_close(struct fe_udpsock *u)
{
    if (!u) return;
    close(u->fd);
    free(u->gro_buf);
    free(u->stage);
    free(u);
}

int fe_udpsock_fd(const struct fe_udpsock *u)
{
    return u->fd;
}

void fe_udpsock_local(const struct fe_udpsock *u, uint32_t *ip, uint16_t *port)
{
    if (ip) *ip = u->ip;
    if (port) *port = u->port;
}

void fe_udpsock_bufsizes(const struct fe_udpsock *u, uint64_t *rcv_bytes, uint64_t *snd_bytes)
{
    if (rcv_bytes) *rcv_bytes = u->rcvbuf;
    if (snd_bytes) *snd_bytes = u->sndbuf;
}

const struct fe_udpsock_stats *fe_udpsock_stats(const struct fe_udpsock *u)
{
    return &u->st;
}

/* Bytes of datagram d on the wire. */
static inline uint32_t dgram_bytes(const struct fe_dgram *d)
{
    return d->len + (d->mid ? d->mid_len : 0);
}

/* Whether d[1] can follow d[0] in one GSO send: same peer and TOS. */
static inline bool gso_same_flow(const struct fe_dgram *a, const struct fe_dgram *b)
{
    return a->ip == b->ip && a->port == b->port && a->tos == b->tos;
}

/* Whether d[0] should go alone although the shorter d[1] could close a run with it: d[1] opens
 * a run of equal datagrams of its own (a WRITE's first packet, RETH and all, before its middle
 * ones). Either way the kernel builds as many skbs; alone, the first packet leaves the middle
 * ones together in one datagram, which a receiver can take straight into place. */
static inline bool gso_first_alone(const struct fe_dgram *d, int n, uint32_t seg)
{
    if (n < 3 || !gso_same_flow(&d[0], &d[1]) || !gso_same_flow(&d[1], &d[2])) return false;
    uint32_t next = dgram_bytes(&d[1]);
    return next < seg && dgram_bytes(&d[2]) == next;
}

/* How many datagrams from d[0] form one GSO run: same address and TOS, same length except a
 * shorter last one, within the kernel's segment and size limits. */
static int gso_run(const struct fe_dgram *d, int n)
{
    uint32_t seg = dgram_bytes(&d[0]), total = seg;
    int k = 1;
    if (!seg || gso_first_alone(d, n, seg)) return 1;
    while (k < n && k < GSO_MAX_SEGS && gso_same_flow(&d[0], &d[k])) {
        uint32_t len = dgram_bytes(&d[k]);
        if (!len || len > seg || total + len > UDP_MAX_PAYLOAD) break;
        total += len;
        k++;
        if (len < seg) break;
    }
    return k;
}

/* The iovecs of one datagram: its bytes, or (mid) head, mid and tail; returns their count. */
static inline int dgram_iov(struct iovec *iov, const struct fe_dgram *d)
{
    if (!d->mid) {
        iov[0] = (struct iovec){d->buf, d->len};
        return 1;
    }
    int n = 0;
    if (d->head_len) iov[n++] = (struct iovec){d->buf, d->head_len};
    iov[n++] = (struct iovec){(void *)(uintptr_t)d->mid, d->mid_len};
    if (d->len > d->head_len) iov[n++] = (struct iovec){d->buf + d->head_len, d->len - d->head_len};
    return n;
}

/* A GSO run of datagrams in pieces (head, payload in WR memory, tail) gathered into the stage,
 * one iovec for the run: the kernel's copy walks each iovec on its own, and for three pieces per
 * packet of a small payload that walk costs more than the copy here. Returns 1 (iov[0] set) or 0
 * when the run goes as it is: a single datagram, no pieces, payloads of STAGE_MAX_MID bytes or
 * more, or no room left in the stage. */
static int stage_run(struct fe_udpsock *u, struct iovec *iov, const struct fe_dgram *d, int k)
{
    if (k < 2 || !d[0].mid || d[0].mid_len >= STAGE_MAX_MID) return 0;
    uint32_t total = 0;
    for (int j = 0; j < k; j++) total += dgram_bytes(&d[j]);
    if (!u->stage && !(u->stage = malloc(STAGE_BYTES))) return 0;
    if (total > STAGE_BYTES - u->stage_used) return 0;
    uint8_t *dst = u->stage + u->stage_used;
    iov[0] = (struct iovec){dst, total};
    for (int j = 0; j < k; j++) {
        const struct fe_dgram *x = &d[j];
        if (!x->mid) {
            memcpy(dst, x->buf, x->len);
            dst += x->len;
            continue;
        }
        memcpy(dst, x->buf, x->head_len);
        memcpy(dst + x->head_len, x->mid, x->mid_len);
        memcpy(dst + x->head_len + x->mid_len, x->buf + x->head_len, x->len - x->head_len);
        dst += x->head_len + x->mid_len + (x->len - x->head_len);
    }
    u->stage_used += total;
    return 1;
}

/* Fills message m for the k datagrams from d[0] (one GSO run when k > 1): the peer's address,
 * the packets' iovecs (the kernel gathers them and cuts the run at seg bytes), the TOS and, for
 * a run, the segment size. Returns the iovecs used. */
static inline int tx_fill_msg(struct fe_udpsock *u, int m, struct iovec *iov,
                              const struct fe_dgram *d, int k)
{
    struct sockaddr_in *sa = &u->addr[m];
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_addr.s_addr = htonl(d[0].ip);
    sa->sin_port = htons(d[0].port);
    int niov = stage_run(u, iov, d, k);
    if (!niov)
        for (int j = 0; j < k; j++) niov += dgram_iov(iov + niov, &d[j]);
    struct msghdr *h = &u->msg[m].msg_hdr;
    memset(h, 0, sizeof *h);
    h->msg_name = sa;
    h->msg_namelen = sizeof *sa;
    h->msg_iov = iov;
    h->msg_iovlen = (size_t)niov;
    h->msg_control = u->ctl[m].buf;
    h->msg_controllen = CMSG_SPACE(sizeof(int));
    memset(u->ctl[m].buf, 0, sizeof u->ctl[m].buf);
    struct cmsghdr *c = CMSG_FIRSTHDR(h);
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_TOS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    int tos = d[0].tos;
    memcpy(CMSG_DATA(c), &tos, sizeof tos);
    if (k > 1) {
        h->msg_controllen += CMSG_SPACE(sizeof(uint16_t));
        c = CMSG_NXTHDR(h, c);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        uint16_t seg = (uint16_t)dgram_bytes(&d[0]);
        memcpy(CMSG_DATA(c), &seg, sizeof seg);
    }
    return niov;
}

/* Builds the messages for d[0..n): returns their count, cnt[m] = datagrams carried by message m. */
static inline int tx_prepare(struct fe_udpsock *u, const struct fe_dgram *d, int n, int *cnt)
{
    int nmsg = 0, niov = 0;
    u->stage_used = 0;
    for (int i = 0; i < n; nmsg++) {
        int k = u->gso ? gso_run(d + i, n - i) : 1;
        cnt[nmsg] = k;
        niov += tx_fill_msg(u, nmsg, &u->iov[niov], d + i, k);
        i += k;
    }
    return nmsg;
}

/* Counts the r messages from m that were sent (d: the first datagram they carry); returns the
 * datagrams they carried. */
static inline int tx_count_sent(struct fe_udpsock *u, const struct fe_dgram *d, const int *cnt,
                                int m, int r)
{
    int done = 0;
    for (int j = m; j < m + r; j++) {
        for (int q = done; q < done + cnt[j]; q++) u->st.tx_bytes += dgram_bytes(&d[q]);
        u->st.tx_dgrams += (uint64_t)cnt[j];
        if (cnt[j] > 1) u->st.tx_gso_sends++;
        done += cnt[j];
    }
    return done;
}

/* No GSO here (old kernel, device without checksum offload, segment above the path MTU)? */
static inline bool gso_refused(int cnt, int e)
{
    return cnt > 1 && (e == EINVAL || e == EIO || e == ENOPROTOOPT || e == EOPNOTSUPP);
}

int fe_udpsock_send(struct fe_udpsock *u, const struct fe_dgram *d, int n)
{
    if (n <= 0) return 0;
    if (n > FE_IO_MAX_BATCH) n = FE_IO_MAX_BATCH;
    int cnt[FE_IO_MAX_BATCH];
    int nmsg = tx_prepare(u, d, n, cnt);
    int done = 0, m = 0; /* datagrams / messages consumed */
    while (m < nmsg) {
        u->st.tx_calls++;
        int r = sendmmsg(u->fd, u->msg + m, (unsigned)(nmsg - m), MSG_DONTWAIT);
        if (r > 0) {
            done += tx_count_sent(u, d + done, cnt, m, r);
            m += r;
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
            u->st.tx_again++;
            break;
        }
        if (gso_refused(cnt[m], errno)) {
            /* Send the rest, and everything after, one datagram per message. */
            u->gso = false;
            return done + fe_udpsock_send(u, d + done, n - done);
        }
        /* The first remaining message is refused (EMSGSIZE, unreachable...): drop it. */
        u->st.tx_errors += (uint64_t)cnt[m];
        done += cnt[m++];
    }
    return done;
}

/* Hands out the next datagram (or segment of a GRO super-datagram) kept from recvmmsg: copied
 * into out->buf, or (borrow) out->buf pointed at it inside the socket's own buffer. */
static void gro_take(struct fe_udpsock *u, struct fe_dgram *out, bool borrow)
{
    const struct gro_slot *s = &u->gro[u->gro_i];
    uint8_t *src = u->gro_buf + (size_t)u->gro_i * GRO_BUF_BYTES + u->gro_off;
    uint32_t left = s->len - u->gro_off;
    uint32_t len = s->seg && s->seg < left ? s->seg : left;
    if (borrow) {
        out->buf = src;
        out->len = len;
        out->trunc = s->trunc || len > out->cap; /* as if copied into cap bytes */
    } else {
        uint32_t copy = len < out->cap ? len : out->cap;
        memcpy(out->buf, src, copy);
        out->len = copy;
        out->trunc = s->trunc || copy < len;
    }
    out->ip = s->ip;
    out->port = s->port;
    out->tos = s->tos;
    out->ts_ns = s->ts_ns;
    out->mid = NULL;
    u->gro_off += len;
    if (u->gro_off >= s->len) {
        u->gro_i++;
        u->gro_off = 0;
    }
}

/* Fills msg[0..n) to receive into bufs of cap bytes each. */
static void rx_prepare(struct fe_udpsock *u, int n, uint8_t *const *bufs, const uint32_t *caps)
{
    for (int i = 0; i < n; i++) {
        u->iov[i].iov_base = bufs[i];
        u->iov[i].iov_len = caps[i];
        struct msghdr *h = &u->msg[i].msg_hdr;
        memset(h, 0, sizeof *h);
        h->msg_name = &u->addr[i];
        h->msg_namelen = sizeof u->addr[i];
        h->msg_iov = &u->iov[i];
        h->msg_iovlen = 1;
        h->msg_control = u->ctl[i].buf;
        h->msg_controllen = sizeof u->ctl[i].buf;
    }
}

/* Source, TOS, timestamp and GRO segment size of received message i. */
static void rx_meta(struct fe_udpsock *u, int i, int64_t off, struct gro_slot *s)
{
    struct msghdr *h = &u->msg[i].msg_hdr;
    s->len = u->msg[i].msg_len;
    s->trunc = (h->msg_flags & MSG_TRUNC) != 0;
    s->ip = ntohl(u->addr[i].sin_addr.s_addr);
    s->port = ntohs(u->addr[i].sin_port);
    s->tos = 0;
    s->seg = 0;
    s->ts_ns = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS && c->cmsg_len >= CMSG_LEN(1)) {
            s->tos = *(const uint8_t *)CMSG_DATA(c);
        } else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
                   c->cmsg_len >= CMSG_LEN(sizeof(int))) {
            int seg;
            memcpy(&seg, CMSG_DATA(c), sizeof seg);
            s->seg = seg > 0 ? (uint32_t)seg : 0;
        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
                   c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof ts);
            int64_t t = (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec - off;
            s->ts_ns = t > 0 ? (uint64_t)t : 0;
        }
    }
}

static int recv_calls(struct fe_udpsock *u, int n)
{
    int r;
    do {
        u->st.rx_calls++;
        r = recvmmsg(u->fd, u->msg, (unsigned)n, MSG_DONTWAIT, NULL);
    } while (r < 0 && errno == EINTR);
    if (r < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : FE_EIO;
    return r;
}

static void count_rx(struct fe_udpsock *u, const struct fe_dgram *d, int n)
{
    for (int i = 0; i < n; i++) {
        if (d[i].trunc) u->st.rx_trunc++;
        u->st.rx_bytes += d[i].len;
    }
    u->st.rx_dgrams += (uint64_t)n;
}

int fe_udpsock_rx_pending(const struct fe_udpsock *u)
{
    if (!u->gro_buf || u->gro_i >= u->gro_n) return 0;
    int k = 0;
    for (int i = u->gro_i; i < u->gro_n; i++) {
        const struct gro_slot *s = &u->gro[i];
        uint32_t left = s->len - (i == u->gro_i ? u->gro_off : 0);
        k += s->seg ? (int)((left + s->seg - 1) / s->seg) : 1;
    }
    return k;
}

/* Fills msg[0..n) for a receive into the GRO buffers, slot i into buffer i. */
static void rx_prepare_gro(struct fe_udpsock *u, int n)
{
    uint8_t *bufs[GRO_MSGS];
    uint32_t caps[GRO_MSGS];
    for (int i = 0; i < n; i++) {
        bufs[i] = u->gro_buf + (size_t)i * GRO_BUF_BYTES;
        caps[i] = GRO_BUF_BYTES;
    }
    rx_prepare(u, n, bufs, caps);
}

/* Metadata of the r messages just received into the GRO slots; they are kept from slot `from`
 * on. */
static void gro_keep(struct fe_udpsock *u, int r, int from)
{
    int64_t off = u->timestamps && r > 0 ? fe_io_realtime_offset_ns() : 0;
    for (int i = 0; i < r; i++) {
        rx_meta(u, i, off, &u->gro[i]);
        if (u->gro[i].seg && u->gro[i].len > u->gro[i].seg) u->st.rx_gro_dgrams++;
    }
    u->gro_n = r > 0 ? r : 0;
    u->gro_i = r > from ? from : u->gro_n;
    u->gro_off = 0;
}

int fe_udpsock_recv_scatter(struct fe_udpsock *u, const struct iovec *iov, int niov, int n,
                            struct fe_udp_rx *first)
{
    if (!u->gro_buf || u->gro_i < u->gro_n) return FE_ENOTSUP;
    if (n > GRO_MSGS) n = GRO_MSGS;
    if (n < 1) n = 1;
    rx_prepare_gro(u, n);
    u->msg[0].msg_hdr.msg_iov = (struct iovec *)(uintptr_t)iov; /* the kernel only reads it */
    u->msg[0].msg_hdr.msg_iovlen = (size_t)niov;
    int r = recv_calls(u, n);
    if (r <= 0) return r;
    gro_keep(u, r, 1);
    const struct gro_slot *s = &u->gro[0];
    *first = (struct fe_udp_rx){.len = s->len,
                                .seg = s->seg,
                                .trunc = s->trunc,
                                .ip = s->ip,
                                .port = s->port,
                                .tos = s->tos,
                                .ts_ns = s->ts_ns};
    u->st.rx_dgrams += s->seg ? (s->len + s->seg - 1) / s->seg : 1;
    u->st.rx_bytes += s->len;
    if (s->trunc) u->st.rx_trunc++;
    return r;
}

static int recv_batch(struct fe_udpsock *u, struct fe_dgram *d, int n, bool borrow)
{
    if (n <= 0) return 0;
    if (n > FE_IO_MAX_BATCH) n = FE_IO_MAX_BATCH;
    uint8_t *bufs[FE_IO_MAX_BATCH];
    uint32_t caps[FE_IO_MAX_BATCH];
    if (u->gro_buf) {
        /* Kept segments first, then at most one system call into the GRO buffers. */
        int out = 0;
        while (out < n && u->gro_i < u->gro_n) gro_take(u, &d[out++], borrow);
        /* Borrowed segments live in the GRO buffers: no new receive over them in this call. */
        if (out < n && !(borrow && out)) {
            int want = n - out < GRO_MSGS ? n - out : GRO_MSGS;
            rx_prepare_gro(u, want);
            int r = recv_calls(u, want);
            if (r < 0 && !out) return r;
            gro_keep(u, r, 0);
            while (out < n && u->gro_i < u->gro_n) gro_take(u, &d[out++], borrow);
        }
        count_rx(u, d, out);
        return out;
    }
    for (int i = 0; i < n; i++) {
        bufs[i] = d[i].buf;
        caps[i] = d[i].cap;
    }
    rx_prepare(u, n, bufs, caps);
    int r = recv_calls(u, n);
    if (r <= 0) return r;
    int64_t off = u->timestamps ? fe_io_realtime_offset_ns() : 0;
    for (int i = 0; i < r; i++) {
        struct gro_slot s;
        rx_meta(u, i, off, &s);
        d[i].len = s.len;
        d[i].trunc = s.trunc;
        d[i].ip = s.ip;
        d[i].port = s.port;
        d[i].tos = s.tos;
        d[i].ts_ns = s.ts_ns;
        d[i].mid = NULL;
    }
    count_rx(u, d, r);
    return r;
}

int fe_udpsock_recv(struct fe_udpsock *u, struct fe_dgram *d, int n)
{
    return recv_batch(u, d, n, false);
}

int fe_udpsock_recv_borrow(struct fe_udpsock *u, struct fe_dgram *d, int n)
{
    return recv_batch(u, d, n, true);
}
