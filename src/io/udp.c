/* UDP sockets for RoCEv2-over-UDP-payload (FE_FRAME_BTH): batched with sendmmsg/recvmmsg, the
 * TOS byte (DSCP + ECN) set per datagram on send (IP_TOS control message) and reported per
 * datagram on receive (IP_RECVTOS), so ECN marks survive real sockets. */
#include "feroce/io.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Control space for IP_TOS and a receive timestamp, aligned as cmsg requires. */
union tos_cmsg {
    char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct timespec))];
    struct cmsghdr align;
};

struct fe_udpsock {
    int fd;
    uint32_t ip;
    uint16_t port;
    uint64_t rcvbuf, sndbuf;
    bool timestamps;
    struct fe_udpsock_stats st;
    struct mmsghdr msg[FE_IO_MAX_BATCH];
    struct iovec iov[FE_IO_MAX_BATCH];
    struct sockaddr_in addr[FE_IO_MAX_BATCH];
    union tos_cmsg ctl[FE_IO_MAX_BATCH];
};

void fe_udpsock_config_default(struct fe_udpsock_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->rcvbuf_bytes = 8u << 20; /* ~1.6 ms of 40 Gb/s: bursts into a busy receiver */
    cfg->sndbuf_bytes = 4u << 20;
}

/* The *FORCE variants pass rmem_max/wmem_max when we have CAP_NET_ADMIN; otherwise the plain
 * option gives what the system allows. */
static void size_buffer(int fd, int force_opt, int opt, uint64_t bytes)
{
    if (!bytes) return;
    int v = bytes > (uint64_t)(INT32_MAX / 2) ? INT32_MAX / 2 : (int)bytes;
    if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof v) != 0)
        (void)setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
}

struct fe_udpsock *fe_udpsock_open(const struct fe_udpsock_config *cfg, int *err)
{
    int e = FE_EIO;
    struct fe_udpsock *u = calloc(1, sizeof *u);
    if (!u) {
        e = FE_ENOMEM;
        goto fail;
    }
    u->fd = -1;
    u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (u->fd < 0) goto fail;
    int one = 1;
    if (cfg->reuse_port) (void)setsockopt(u->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (setsockopt(u->fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof one) != 0) goto fail;
    if (cfg->timestamps && setsockopt(u->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0)
        goto fail;
    u->timestamps = cfg->timestamps;
    /* RoCE packets are never fragmented: a datagram larger than the path MTU is an error. */
    int pmtu = IP_PMTUDISC_DO;
    (void)setsockopt(u->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
    size_buffer(u->fd, SO_RCVBUFFORCE, SO_RCVBUF, cfg->rcvbuf_bytes);
    size_buffer(u->fd, SO_SNDBUFFORCE, SO_SNDBUF, cfg->sndbuf_bytes);

    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(cfg->bind_ip);
    sa.sin_port = htons(cfg->bind_port);
    if (bind(u->fd, (struct sockaddr *)&sa, sizeof sa) != 0) goto fail;
    socklen_t sl = sizeof sa;
    if (getsockname(u->fd, (struct sockaddr *)&sa, &sl) != 0) goto fail;
    u->ip = ntohl(sa.sin_addr.s_addr);
    u->port = ntohs(sa.sin_port);
    int v = 0;
    sl = sizeof v;
    if (getsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &v, &sl) == 0) u->rcvbuf = (uint64_t)v;
    sl = sizeof v;
    if (getsockopt(u->fd, SOL_SOCKET, SO_SNDBUF, &v, &sl) == 0) u->sndbuf = (uint64_t)v;
    if (err) *err = 0;
    return u;
fail:
    if (u) {
        int saved = errno;
        if (u->fd >= 0) close(u->fd);
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

int fe_udpsock_send(struct fe_udpsock *u, const struct fe_dgram *d, int n)
{
    if (n <= 0) return 0;
    if (n > FE_IO_MAX_BATCH) n = FE_IO_MAX_BATCH;
    for (int i = 0; i < n; i++) {
        struct sockaddr_in *sa = &u->addr[i];
        memset(sa, 0, sizeof *sa);
        sa->sin_family = AF_INET;
        sa->sin_addr.s_addr = htonl(d[i].ip);
        sa->sin_port = htons(d[i].port);
        u->iov[i].iov_base = d[i].buf;
        u->iov[i].iov_len = d[i].len;
        struct msghdr *h = &u->msg[i].msg_hdr;
        memset(h, 0, sizeof *h);
        h->msg_name = sa;
        h->msg_namelen = sizeof *sa;
        h->msg_iov = &u->iov[i];
        h->msg_iovlen = 1;
        h->msg_control = u->ctl[i].buf;
        h->msg_controllen = CMSG_SPACE(sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(h);
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_TOS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        int tos = d[i].tos;
        memcpy(CMSG_DATA(c), &tos, sizeof tos);
    }
    int done = 0;
    while (done < n) {
        u->st.tx_calls++;
        int r = sendmmsg(u->fd, u->msg + done, (unsigned)(n - done), MSG_DONTWAIT);
        if (r > 0) {
            for (int i = done; i < done + r; i++) u->st.tx_bytes += d[i].len;
            u->st.tx_dgrams += (uint64_t)r;
            done += r;
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
            u->st.tx_again++;
            break;
        }
        /* The first remaining datagram is refused (EMSGSIZE, unreachable...): drop it. */
        u->st.tx_errors++;
        done++;
    }
    return done;
}

int fe_udpsock_recv(struct fe_udpsock *u, struct fe_dgram *d, int n)
{
    if (n <= 0) return 0;
    if (n > FE_IO_MAX_BATCH) n = FE_IO_MAX_BATCH;
    for (int i = 0; i < n; i++) {
        u->iov[i].iov_base = d[i].buf;
        u->iov[i].iov_len = d[i].cap;
        struct msghdr *h = &u->msg[i].msg_hdr;
        memset(h, 0, sizeof *h);
        h->msg_name = &u->addr[i];
        h->msg_namelen = sizeof u->addr[i];
        h->msg_iov = &u->iov[i];
        h->msg_iovlen = 1;
        h->msg_control = u->ctl[i].buf;
        h->msg_controllen = sizeof u->ctl[i].buf;
    }
    int r;
    do {
        u->st.rx_calls++;
        r = recvmmsg(u->fd, u->msg, (unsigned)n, MSG_DONTWAIT, NULL);
    } while (r < 0 && errno == EINTR);
    if (r < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : FE_EIO;
    int64_t off = u->timestamps && r > 0 ? fe_io_realtime_offset_ns() : 0;
    for (int i = 0; i < r; i++) {
        struct msghdr *h = &u->msg[i].msg_hdr;
        d[i].len = u->msg[i].msg_len;
        d[i].trunc = (h->msg_flags & MSG_TRUNC) != 0;
        d[i].ip = ntohl(u->addr[i].sin_addr.s_addr);
        d[i].port = ntohs(u->addr[i].sin_port);
        d[i].tos = 0;
        d[i].ts_ns = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
            if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
                c->cmsg_len >= CMSG_LEN(1)) {
                d[i].tos = *(const uint8_t *)CMSG_DATA(c);
            } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
                       c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(c), sizeof ts);
                int64_t t = (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec - off;
                d[i].ts_ns = t > 0 ? (uint64_t)t : 0;
            }
        }
        if (d[i].trunc) u->st.rx_trunc++;
        u->st.rx_bytes += d[i].len;
    }
    u->st.rx_dgrams += (uint64_t)r;
    return r;
}
