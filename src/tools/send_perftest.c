/* feroce send --perftest (see send_perftest.h). */
#include "tools/send_perftest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "feroce/endpoint.h"
#include "feroce/err.h"
#include "feroce/io.h"

#define CONNECT_TRIES 300 /* 30 s: the server may still be starting */

struct handshake {
    struct fe_send_perftest *p;
    uint32_t mtu_bytes;
    int rc;
    atomic_bool done;
};

static void *handshake_main(void *arg)
{
    struct handshake *h = arg;
    struct fe_send_perftest *p = h->p;
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(p->server_port),
                             .sin_addr.s_addr = htonl(p->server_ip)};
    h->rc = FE_EIO;
    for (int i = 0; i < CONNECT_TRIES; i++) {
        p->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (p->fd < 0) break;
        if (!connect(p->fd, (struct sockaddr *)&sa, sizeof sa)) {
            h->rc = 0;
            break;
        }
        close(p->fd);
        p->fd = -1;
        usleep(100000);
    }
    if (h->rc) {
        snprintf(p->s.err, sizeof p->s.err, "cannot connect: %s", strerror(errno));
    } else {
        struct timeval tv = {.tv_sec = 30}; /* a server that stops answering is an error */
        setsockopt(p->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        h->rc = fe_pt_client_start(&p->s, p->fd, 4096, 64, h->mtu_bytes, &p->local);
        if (!h->rc) h->rc = fe_pt_client_sync(&p->s, &p->local);
    }
    atomic_store(&h->done, true);
    return NULL;
}

int fe_send_perftest_parse(struct fe_send_perftest *p, const char *arg)
{
    memset(p, 0, sizeof *p);
    p->fd = -1;
    p->server_port = FE_PT_PORT;
    if (fe_io_parse_addr(arg, &p->server_ip, &p->server_port)) {
        fprintf(stderr, "feroce send: invalid --perftest address '%s'\n", arg);
        return FE_EINVAL;
    }
    return 0;
}

/* The server is a RoCE NIC or Soft-RoCE, and a perftest run has an end. */
static int check_config(const struct fe_frontend_config *fc)
{
    if (fc->ep.backend != FE_BACKEND_RAW) {
        fprintf(stderr, "feroce send: --perftest needs --backend raw (the server is a RoCE NIC "
                        "or Soft-RoCE: whole frames, real ICRC)\n");
        return FE_EINVAL;
    }
    if (!fc->stream.count && !fc->duration_ns) {
        fprintf(stderr, "feroce send: --perftest needs --count or --duration\n");
        return FE_EINVAL;
    }
    return 0;
}

/* Our side of the exchange: QPN, first PSN, and the IPv4-mapped GID of our address. */
static void set_local(struct fe_send_perftest *p, const struct fe_frontend_config *fc)
{
    uint32_t ip = fc->ep.raw.ip;
    p->local.qpn = fc->local_qpn;
    p->local.psn = fc->peer_psn; /* the server expects what we send first */
    p->local.out_reads = 1;
    p->local.gid[10] = p->local.gid[11] = 0xff;
    p->local.gid[12] = (uint8_t)(ip >> 24);
    p->local.gid[13] = (uint8_t)(ip >> 16);
    p->local.gid[14] = (uint8_t)(ip >> 8);
    p->local.gid[15] = (uint8_t)ip;
}

/* The TCP exchange in a thread. The server resolves our MAC by ARP when its QP goes to RTR,
 * mid-exchange: a raw endpoint on our address answers until the front-end takes over. */
static int run_handshake(struct fe_send_perftest *p, const struct fe_frontend_config *fc)
{
    int err;
    struct fe_ep *keeper = fe_ep_create(&fc->ep, &err);
    if (!keeper) {
        fprintf(stderr, "feroce send: raw endpoint on %s: %s\n", fc->ep.raw.ifname,
                fe_strerror(err));
        return err;
    }
    struct handshake h = {.p = p, .mtu_bytes = fc->qp.mtu_bytes};
    atomic_init(&h.done, false);
    pthread_t t;
    if (pthread_create(&t, NULL, handshake_main, &h)) {
        fe_ep_destroy(keeper);
        return FE_ENOMEM;
    }
    while (!atomic_load(&h.done)) {
        uint64_t now = fe_io_now_ns();
        fe_ep_poll_rx(keeper, now, 64);
        fe_ep_poll_tx(keeper, now, 64);
        struct pollfd pf = {.fd = fe_ep_fd(keeper), .events = POLLIN};
        poll(&pf, 1, 1);
    }
    pthread_join(t, NULL);
    fe_ep_destroy(keeper);
    if (h.rc) {
        char a[32];
        fprintf(stderr, "feroce send: perftest server %s: %s\n",
                fe_io_addr_str(p->server_ip, p->server_port, a, sizeof a), p->s.err);
        if (p->fd >= 0) close(p->fd);
        p->fd = -1;
    }
    return h.rc;
}

int fe_send_perftest_connect(struct fe_send_perftest *p, struct fe_frontend_config *fc)
{
    int rc = check_config(fc);
    if (rc) return rc;
    set_local(p, fc);
    rc = run_handshake(p, fc);
    if (rc) return rc;
    fc->sc_enable = false;
    fc->n_qps = 1;
    fc->peer_ip = p->server_ip;
    fc->peer_port = FE_ROCEV2_UDP_PORT;
    fc->peer_qpn = p->s.remote.qpn;
    fc->peer_rkey = p->s.remote.rkey;
    fc->peer_va = p->s.remote.vaddr;
    fc->qp.mtu_bytes = p->s.mtu_bytes;
    /* ib_write_bw posts no receives: plain WRITEs, all into its one buffer */
    fc->stream.op = FE_WR_WRITE;
    fc->stream.slots = 1;
    return 0;
}

int fe_send_perftest_finish(struct fe_send_perftest *p, const struct fe_frontend_flow *fl,
                            uint64_t end_ns, bool quiet)
{
    char a[32];
    double secs =
        fl->started_ns && end_ns > fl->started_ns ? (double)(end_ns - fl->started_ns) / 1e9 : 0;
    struct fe_pt_report mine = {
        .size_bytes = fl->stream.msg_bytes,
        .iters = fl->completed,
        .bw_avg_MBps = secs > 0 ? (double)fl->bytes_completed / secs / (1 << 20) : 0,
        .msg_rate_Mpps = secs > 0 ? (double)fl->completed / secs / 1e6 : 0,
    };
    mine.bw_peak_MBps = mine.bw_avg_MBps; /* one stream, one rate */
    struct fe_pt_report theirs;
    int rc = fe_pt_client_finish(&p->s, &p->local, &mine, &theirs);
    close(p->fd);
    p->fd = -1;
    if (rc)
        fprintf(stderr, "feroce send: perftest server %s: %s\n",
                fe_io_addr_str(p->server_ip, p->server_port, a, sizeof a), p->s.err);
    else if (!quiet)
        printf("perftest: %" PRIu64 " x %u B to ib_write_bw %s (QPN %u, perftest %.2f, MTU %u): "
               "%.2f MB/s\n",
               fl->completed, fl->stream.msg_bytes,
               fe_io_addr_str(p->server_ip, p->server_port, a, sizeof a), p->s.remote.qpn,
               p->s.remote_version, p->s.mtu_bytes, mine.bw_avg_MBps);
    return rc;
}
