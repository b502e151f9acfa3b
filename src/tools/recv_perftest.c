/* feroce recv --perftest-server (see recv_perftest.h). */
#include "tools/recv_perftest.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "feroce/endpoint.h"
#include "feroce/err.h"
#include "feroce/io.h"
#include "io/perftest.h"

/* The exchange runs on a thread of its own (blocking TCP), in three stages the receiver's loop
 * waits for: keys known (the daq can be built), sync done (WRITEs may come), finished (the
 * client's end-of-test key and report arrived). */
enum stage { ST_CONNECTING, ST_KEYS, ST_GO, ST_SYNCED, ST_FINISHED, ST_FAILED };

struct server {
    const struct fe_recv_perftest *p;
    int lfd, fd;
    uint64_t timeout_ns;
    struct fe_pt_dest local;
    struct fe_pt_session s;
    struct fe_pt_report theirs;
    uint32_t mtu_bytes;
    atomic_int stage;
    int rc;
};

static int listen_on(struct server *sv, uint32_t ip)
{
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(sv->p->port), .sin_addr.s_addr = htonl(ip)};
    int one = 1;
    sv->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sv->lfd < 0) return FE_EIO;
    setsockopt(sv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(sv->lfd, (struct sockaddr *)&sa, sizeof sa) || listen(sv->lfd, 1)) return FE_EIO;
    return 0;
}

static int accept_client(struct server *sv)
{
    struct pollfd pf = {.fd = sv->lfd, .events = POLLIN};
    int ms = (int)(sv->timeout_ns / 1000000u);
    if (poll(&pf, 1, ms) != 1) {
        snprintf(sv->s.err, sizeof sv->s.err, "no client connected");
        return FE_EIO;
    }
    sv->fd = accept(sv->lfd, NULL, NULL);
    if (sv->fd < 0) return FE_EIO;
    struct timeval tv = {.tv_sec = (time_t)(sv->timeout_ns / 1000000000u) + 1};
    setsockopt(sv->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return 0;
}

static void wait_stage(struct server *sv, int stage)
{
    while (atomic_load(&sv->stage) < stage) usleep(1000);
}

static void *exchange_main(void *arg)
{
    struct server *sv = arg;
    sv->rc = accept_client(sv);
    if (!sv->rc) sv->rc = fe_pt_server_start(&sv->s, sv->fd, 4096, 64, sv->mtu_bytes, &sv->local);
    if (sv->rc) goto fail;
    atomic_store(&sv->stage, ST_KEYS);
    wait_stage(sv, ST_GO); /* our QP exists: the client may go to RTS and write */
    if ((sv->rc = fe_pt_client_sync(&sv->s, &sv->local))) goto fail;
    atomic_store(&sv->stage, ST_SYNCED);
    /* A server reports nothing of its own; the client prints its figures and sends them. */
    struct fe_pt_report mine = {0, 0, 0, 0, 0};
    if ((sv->rc = fe_pt_client_finish(&sv->s, &sv->local, &mine, &sv->theirs))) goto fail;
    atomic_store(&sv->stage, ST_FINISHED);
    return NULL;
fail:
    atomic_store(&sv->stage, ST_FAILED);
    return NULL;
}

/* Our QP as the client is told it: the region's rkey is drawn here when it is to be random (the
 * receiver would otherwise draw another one than we announced). */
static void local_key(struct server *sv, struct fe_daq_config *dc)
{
    uint32_t ip = dc->ep.raw.ip;
    if (dc->random_rkey) dc->rkey = fe_io_random_u32();
    dc->random_rkey = false;
    sv->local.qpn = dc->local_qpn;
    sv->local.psn = dc->psn;
    sv->local.rkey = dc->rkey;
    sv->local.vaddr = dc->va;
    sv->local.out_reads = 1;
    sv->local.gid[10] = sv->local.gid[11] = 0xff;
    for (int i = 0; i < 4; i++) sv->local.gid[12 + i] = (uint8_t)(ip >> (24 - 8 * i));
}

/* Until our receiver exists, a raw endpoint on our address answers the client's ARP: it
 * resolves our MAC when its QP goes to RTR, during the exchange. */
static int wait_keys(struct server *sv, const struct fe_daq_config *dc)
{
    int err;
    struct fe_ep *keeper = fe_ep_create(&dc->ep, &err);
    if (!keeper) return err;
    while (atomic_load(&sv->stage) < ST_KEYS) {
        uint64_t now = fe_io_now_ns();
        fe_ep_poll_rx(keeper, now, 64);
        fe_ep_poll_tx(keeper, now, 64);
        struct pollfd pf = {.fd = fe_ep_fd(keeper), .events = POLLIN};
        poll(&pf, 1, 1);
    }
    fe_ep_destroy(keeper);
    return atomic_load(&sv->stage) == ST_FAILED ? sv->rc : 0;
}

/* One QP for the client: plain WRITEs into the first ring, from the client's QP and PSN. */
static void point_at_client(struct fe_daq_config *dc, const struct server *sv)
{
    const uint8_t *g = sv->s.remote.gid;
    dc->n_fe = 0;
    dc->n_manual = 1;
    dc->manual_peer_qpn = sv->s.remote.qpn;
    dc->manual_peer_ip =
        (uint32_t)g[12] << 24 | (uint32_t)g[13] << 16 | (uint32_t)g[14] << 8 | g[15];
    dc->manual_peer_port = FE_ROCEV2_UDP_PORT;
    dc->psn = sv->s.remote.psn; /* the first PSN the client sends, not one of ours */
    dc->random_psn = false;
    dc->qp.mtu_bytes = sv->s.mtu_bytes;
    dc->imm = false;
    dc->verify = false;
    dc->count = 0;
}

static void run_until_finished(struct server *sv, struct fe_daq *d)
{
    int fds[4], nfd = fe_daq_fds(d, fds, 4);
    atomic_store(&sv->stage, ST_GO);
    while (atomic_load(&sv->stage) < ST_FINISHED) {
        struct pollfd pf[4];
        for (int i = 0; i < nfd; i++) pf[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        poll(pf, (nfds_t)nfd, 1);
        fe_daq_step(d, fe_io_now_ns(), FE_READY_ALL);
    }
    /* the last ACKs reach the client before it tears its QP down */
    for (uint64_t end = fe_io_now_ns() + 20000000ull; fe_io_now_ns() < end;)
        fe_daq_step(d, fe_io_now_ns(), FE_READY_ALL);
}

static int report(const struct server *sv, struct fe_daq *d, bool quiet)
{
    const struct fe_daq_flow *fl = fe_daq_flow(d, 0);
    const struct fe_qp_counters *c = fl->qp ? fe_qp_counters(fl->qp) : NULL;
    uint64_t placed = c ? c->rx_bytes : 0, want;
    /* the client's figures are outside input: a product that wraps must not pass as small */
    if (__builtin_mul_overflow(sv->theirs.size_bytes, sv->theirs.iters, &want)) want = UINT64_MAX;
    if (!quiet)
        printf("perftest server: ib_write_bw client (QPN %u, perftest %.2f, MTU %u): %" PRIu64
               " x %" PRIu64 " B reported, %" PRIu64 " B placed, %" PRIu64
               " packets, %.2f MB/s by the client\n",
               sv->s.remote.qpn, sv->s.remote_version, sv->s.mtu_bytes, sv->theirs.iters,
               sv->theirs.size_bytes, placed, c ? c->rx_pkts : 0, sv->theirs.bw_avg_MBps);
    if (fl->qp_error || placed < want) {
        fprintf(stderr, "feroce recv: the client reported %" PRIu64 " B, %" PRIu64 " B placed%s\n",
                want, placed, fl->qp_error ? ", QP ERROR" : "");
        return 1;
    }
    return 0;
}

int fe_recv_perftest_run(const struct fe_recv_perftest *p, struct fe_daq_config *dc,
                         uint64_t timeout_ns, bool quiet)
{
    if (dc->ep.backend != FE_BACKEND_RAW) {
        fprintf(stderr, "feroce recv: --perftest-server needs --backend raw (the client is a "
                        "RoCE NIC or Soft-RoCE: whole frames, real ICRC)\n");
        return 2;
    }
    struct server sv = {
        .p = p, .lfd = -1, .fd = -1, .timeout_ns = timeout_ns, .mtu_bytes = dc->qp.mtu_bytes};
    atomic_init(&sv.stage, ST_CONNECTING);
    local_key(&sv, dc);
    if (listen_on(&sv, p->listen_ip ? p->listen_ip : dc->ep.raw.ip)) {
        fprintf(stderr, "feroce recv: cannot listen on TCP port %u: %m\n", p->port);
        if (sv.lfd >= 0) close(sv.lfd);
        return 1;
    }
    if (!quiet) { /* a test (or a user's script) starts the client after this line */
        char a[32];
        printf("perftest server: listening on %s\n",
               fe_io_addr_str(p->listen_ip ? p->listen_ip : dc->ep.raw.ip, p->port, a, sizeof a));
        fflush(stdout);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, exchange_main, &sv)) {
        close(sv.lfd);
        return 1;
    }
    int rc = wait_keys(&sv, dc);
    struct fe_daq *d = NULL;
    if (!rc) {
        char err[160];
        point_at_client(dc, &sv);
        d = fe_daq_create(dc, fe_io_now_ns(), &rc, err, sizeof err);
        if (!d) fprintf(stderr, "feroce recv: %s\n", err);
    }
    if (d)
        run_until_finished(&sv, d);
    else
        atomic_store(&sv.stage, ST_GO); /* let the thread end: its socket is closed below */
    if (sv.fd >= 0 && !d) shutdown(sv.fd, SHUT_RDWR);
    pthread_join(t, NULL);
    int out = 1;
    if (atomic_load(&sv.stage) == ST_FAILED)
        fprintf(stderr, "feroce recv: perftest client: %s\n", sv.s.err);
    else if (d)
        out = report(&sv, d, quiet);
    fe_daq_destroy(d);
    if (sv.fd >= 0) close(sv.fd);
    close(sv.lfd);
    return out;
}
