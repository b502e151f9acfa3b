/* feroce bench loopback: single-flow throughput of the real data path, sender -> receiver over
 * loopback UDP, one core each (two pinned threads): a software front-end streaming 64 KiB RDMA
 * WRITEs with immediate through the feroce transport, and a DAQ receiver placing them in its
 * ring, at path MTU 1024 and 4096; then the same with the consumer verifying every byte.
 * Baselines in the same run: plain UDP sendmmsg/recvmmsg of datagrams of the same size between
 * two pinned threads, nothing else done with them, and the kernel's ceiling, the same with UDP
 * GSO on send and GRO on receive. The ratios are what the RDMA transport (PSNs, ACKs, ICRC both
 * ways, placement, completions, verification) costs.
 * With --web, the feroce path runs again with the receiver's dashboard served (as `feroce recv
 * --web` does) and a client on it as the page and Prometheus are: the SSE stream read the whole
 * time, /api/history once, /metrics every second. The ratio is what watching costs. */
#include "tools/cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "feroce/daq.h"
#include "feroce/frontend.h"
#include "feroce/io.h"
#ifdef FE_HAVE_WEB
#include "web/web_io.h"
#endif

struct run {
    uint32_t base_ip;
    uint32_t mtu;
    uint64_t warm_ns, measure_ns;
    bool verify;
    bool web; /* serve the receiver's dashboard with a client on it (--web) */
    int cpu_tx, cpu_rx;
    atomic_bool stop, rx_ready, tx_known;
    pthread_t tx_thread; /* written before tx_known is set */
    /* the receiver QP's keys (random since the receiver draws them): written before rx_ready */
    uint32_t rx_qpn, rx_rkey, rx_psn;
    uint64_t rx_va;
    /* results (receiver thread) */
    uint64_t bytes;
    double secs;
    double cpu_tx_s, cpu_rx_s; /* CPU time each thread used during the measured window */
    /* of which in busy-poll steps that moved no packet (feroce runs): the tx thread's running
     * sum, and the window's share of each side */
    _Atomic uint64_t tx_idle_ns;
    double idle_tx_s, idle_rx_s;
    int err;
    uint64_t web_bytes;                       /* what the client read from the dashboard */
    struct fe_udpsock_stats tx_sock, rx_sock; /* each side's socket, whole run */
    struct fe_qp_counters tx_qp;              /* the sender's QP, whole run */
    uint64_t tx_socket_full;                  /* times the sender's batch waited for its socket */
    double direct_share; /* of the data packets received, those whose payload went straight into
                          * the ring */
};

/* Pins the calling thread and names it (tx / rx) for profilers. */
static void pin(int cpu, const char *name)
{
    if (cpu >= 0) (void)fe_io_pin_cpu(cpu);
    (void)pthread_setname_np(pthread_self(), name);
}

/* CPU seconds used so far by the sender thread and by the calling thread: on a shared machine
 * throughput per CPU-second of the busier thread is what one core would carry. */
static void thread_cpu(struct run *r, double *tx_s, double *rx_s)
{
    struct timespec ts;
    clockid_t id;
    *tx_s = *rx_s = 0;
    if (atomic_load(&r->tx_known) && pthread_getcpuclockid(r->tx_thread, &id) == 0 &&
        clock_gettime(id, &ts) == 0)
        *tx_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        *rx_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Closes the measured window of a baseline run: bytes received in window_ns, and the CPU time
 * each thread used since tx0 / rx0. */
static void window_end(struct run *r, uint64_t bytes, uint64_t window_ns, double tx0, double rx0)
{
    r->bytes = bytes;
    r->secs = (double)window_ns / 1e9;
    thread_cpu(r, &r->cpu_tx_s, &r->cpu_rx_s);
    r->cpu_tx_s -= tx0;
    r->cpu_rx_s -= rx0;
}

/* A busy-poll step that moved no packet and ran unpreempted (shorter than this) counts as idle:
 * left out of the work CPU time, since a loaded machine stretches the waits between packets. */
#define IDLE_STEP_MAX_NS 20000u

/* Adds the step [t0, t1) to *idle_ns when it moved no packet (moved: the endpoint's packets in
 * and out before and after it). */
static inline void count_idle_step(uint64_t *idle_ns, uint64_t t0, uint64_t t1, uint64_t before,
                                   const struct fe_ep_stats *es)
{
    if (es->rx_dgrams + es->tx_pkts == before && t1 - t0 < IDLE_STEP_MAX_NS) *idle_ns += t1 - t0;
}

/* ---- the dashboard open on the receiver (--web) ---- */

#ifdef FE_HAVE_WEB
/* GET path from the dashboard on port; reads until the server closes or stop: bytes read. */
static uint64_t http_get(uint16_t port, const char *path, atomic_bool *stop)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(0x7F000001u);
    struct timeval tv = {0, 200000}; /* wakes up to look at stop */
    uint64_t n = 0;
    if (fd < 0) return 0;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char req[128], buf[16384];
    int len =
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n", path);
    if (!connect(fd, (struct sockaddr *)&a, sizeof a) && write(fd, req, (size_t)len) == len) {
        while (!atomic_load(stop)) {
            ssize_t k = read(fd, buf, sizeof buf);
            if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) break;
            if (k > 0) n += (uint64_t)k;
        }
    }
    close(fd);
    return n;
}

struct page {
    struct run *r;
    uint16_t port;
    atomic_bool stop;
    pthread_t stream, scrape;
    uint64_t stream_bytes, scrape_bytes;
};

/* The page: its history once, then the stream until the run ends. */
static void *page_stream(void *arg)
{
    struct page *p = arg;
    p->stream_bytes = http_get(p->port, "/api/history", &p->stop);
    p->stream_bytes += http_get(p->port, "/api/stream", &p->stop);
    return NULL;
}

/* Prometheus: /metrics every second. */
static void *page_scrape(void *arg)
{
    struct page *p = arg;
    while (!atomic_load(&p->stop)) {
        p->scrape_bytes += http_get(p->port, "/metrics", &p->stop);
        for (int i = 0; i < 10 && !atomic_load(&p->stop); i++) usleep(100000);
    }
    return NULL;
}

static bool page_open(struct page *p, struct run *r, uint16_t port)
{
    memset(p, 0, sizeof *p);
    p->r = r;
    p->port = port;
    if (pthread_create(&p->stream, NULL, page_stream, p)) return false;
    if (pthread_create(&p->scrape, NULL, page_scrape, p)) {
        atomic_store(&p->stop, true);
        pthread_join(p->stream, NULL);
        return false;
    }
    return true;
}

static void page_close(struct page *p)
{
    atomic_store(&p->stop, true);
    pthread_join(p->stream, NULL);
    pthread_join(p->scrape, NULL);
    p->r->web_bytes = p->stream_bytes + p->scrape_bytes;
}
#endif

/* ---- feroce path ---- */

static void *feroce_rx(void *arg)
{
    struct run *r = arg;
    pin(r->cpu_rx, "bench-rx");
    struct fe_daq_config dc;
    fe_daq_config_default(&dc);
    dc.ep.udp.bind_ip = r->base_ip + 1;
    dc.local_ip = r->base_ip + 1;
    dc.n_manual = 1;
    dc.manual_peer_qpn = 256;
    dc.manual_peer_ip = r->base_ip + 2;
    dc.msg_bytes = 65536;
    dc.verify = r->verify;
    dc.qp.mtu_bytes = r->mtu;
    char err[200];
    struct fe_daq *d = fe_daq_create(&dc, fe_io_now_ns(), &r->err, err, sizeof err);
    if (!d) {
        fprintf(stderr, "bench loopback: %s\n", err);
        atomic_store(&r->rx_ready, true);
        return NULL;
    }
#ifdef FE_HAVE_WEB
    struct fe_web_opts wo = {.addr = r->web ? "127.0.0.1:0" : NULL};
    struct page page;
    bool paged = r->web && !fe_web_io_recv(&wo, d) && page_open(&page, r, fe_web_io_port(&wo));
    if (r->web && !paged) r->err = FE_EIO;
#endif
    const struct fe_daq_flow *fl = fe_daq_flow(d, 0);
    r->rx_qpn = fl->qpn;
    r->rx_rkey = fl->rkey;
    r->rx_psn = fl->psn;
    r->rx_va = fl->va;
    atomic_store(&r->rx_ready, true);
    uint64_t t0 = fe_io_now_ns(), w0 = 0, b0 = 0, now = t0, idle_ns = 0, idle0 = 0, tx_idle0 = 0;
    double tx0 = 0, rx0 = 0;
    const struct fe_ep_stats *es = fe_ep_stats(fe_daq_ep(d));
    while (!atomic_load(&r->stop)) {
        uint64_t before = es->rx_dgrams + es->tx_pkts, start = now;
        fe_daq_step(d, now, FE_READY_ALL);
#ifdef FE_HAVE_WEB
        fe_web_io_step(&wo, now);
#endif
        now = fe_io_now_ns();
        count_idle_step(&idle_ns, start, now, before, es);
        if (!w0 && now >= t0 + r->warm_ns) {
            w0 = now;
            b0 = fe_daq_flow(d, 0)->bytes;
            thread_cpu(r, &tx0, &rx0);
            idle0 = idle_ns;
            tx_idle0 = atomic_load_explicit(&r->tx_idle_ns, memory_order_relaxed);
        }
        if (w0 && now >= w0 + r->measure_ns) {
            window_end(r, fe_daq_flow(d, 0)->bytes - b0, now - w0, tx0, rx0);
            r->idle_rx_s = (double)(idle_ns - idle0) / 1e9;
            r->idle_tx_s =
                (double)(atomic_load_explicit(&r->tx_idle_ns, memory_order_relaxed) - tx_idle0) /
                1e9;
            if (fe_daq_flow(d, 0)->verify_errors || fe_daq_flow(d, 0)->qp_error) r->err = FE_EIO;
            r->direct_share = es->rx_pkts ? (double)es->rx_direct_pkts / (double)es->rx_pkts : 0;
            break;
        }
    }
    atomic_store(&r->stop, true);
    const struct fe_udpsock_stats *us = fe_ep_udp_stats(fe_daq_ep(d));
    if (us) r->rx_sock = *us;
#ifdef FE_HAVE_WEB
    if (paged) page_close(&page);
    fe_web_io_finish(&wo, "bench");
#endif
    fe_daq_destroy(d);
    return NULL;
}

static void *feroce_tx(void *arg)
{
    struct run *r = arg;
    pin(r->cpu_tx, "bench-tx");
    while (!atomic_load(&r->rx_ready)) usleep(1000);
    struct fe_frontend_config fc;
    fe_frontend_config_default(&fc);
    fc.sc_enable = false;
    fc.ep.udp.bind_ip = r->base_ip + 2;
    fc.n_qps = 1;
    fc.local_qpn = 256;
    if (r->err) return NULL; /* the receiver could not start */
    fc.peer_qpn = r->rx_qpn;
    fc.peer_rkey = r->rx_rkey;
    fc.peer_psn = r->rx_psn;
    fc.peer_va = r->rx_va;
    fc.peer_ip = r->base_ip + 1;
    fc.stream.msg_bytes = 65536;
    fc.qp.mtu_bytes = r->mtu;
    fc.qp.line_rate_bps = 400000000000ull;
    fc.qp.pacer_burst_bytes = 262144;
    fc.qp.ack_timeout_ns = 20000000ull;
    char err[200];
    struct fe_frontend *f = fe_frontend_create(&fc, fe_io_now_ns(), &r->err, err, sizeof err);
    if (!f) {
        fprintf(stderr, "bench loopback: %s\n", err);
        atomic_store(&r->stop, true);
        return NULL;
    }
    const struct fe_ep_stats *es = fe_ep_stats(fe_frontend_ep(f));
    uint64_t now = fe_io_now_ns(), idle_ns = 0;
    while (!atomic_load(&r->stop)) {
        uint64_t before = es->rx_dgrams + es->tx_pkts, start = now;
        fe_frontend_step(f, now, FE_READY_ALL);
        now = fe_io_now_ns();
        count_idle_step(&idle_ns, start, now, before, es);
        atomic_store_explicit(&r->tx_idle_ns, idle_ns, memory_order_relaxed);
    }
    const struct fe_udpsock_stats *us = fe_ep_udp_stats(fe_frontend_ep(f));
    if (us) r->tx_sock = *us;
    const struct fe_frontend_flow *ff = fe_frontend_flow(f, 0);
    if (ff && ff->qp) r->tx_qp = *fe_qp_counters(ff->qp);
    r->tx_socket_full = es->tx_socket_full;
    fe_frontend_destroy(f);
    return NULL;
}

/* ---- baseline: the same datagram sizes over plain UDP ---- */

static void *udp_rx(void *arg)
{
    struct run *r = arg;
    pin(r->cpu_rx, "bench-rx");
    struct fe_udpsock_config uc;
    fe_udpsock_config_default(&uc);
    uc.bind_ip = r->base_ip + 1;
    uc.bind_port = 4792;
    uc.no_gso = true; /* the baseline is plain sendmmsg/recvmmsg */
    struct fe_udpsock *u = fe_udpsock_open(&uc, &r->err);
    atomic_store(&r->rx_ready, true);
    if (!u) return NULL;
    static uint8_t mem[FE_IO_MAX_BATCH][4608];
    struct fe_dgram d[32];
    uint64_t t0 = fe_io_now_ns(), w0 = 0, bytes = 0;
    double tx0 = 0, rx0 = 0;
    while (!atomic_load(&r->stop)) {
        for (int i = 0; i < 32; i++) d[i] = (struct fe_dgram){.buf = mem[i], .cap = sizeof mem[i]};
        int n = fe_udpsock_recv(u, d, 32);
        uint64_t now = fe_io_now_ns();
        if (!w0 && now >= t0 + r->warm_ns) {
            w0 = now;
            bytes = 0;
            thread_cpu(r, &tx0, &rx0);
        }
        for (int i = 0; i < n; i++) bytes += d[i].len;
        if (w0 && now >= w0 + r->measure_ns) {
            window_end(r, bytes, now - w0, tx0, rx0);
            break;
        }
    }
    atomic_store(&r->stop, true);
    fe_udpsock_close(u);
    return NULL;
}

static void *udp_tx(void *arg)
{
    struct run *r = arg;
    pin(r->cpu_tx, "bench-tx");
    while (!atomic_load(&r->rx_ready)) usleep(1000);
    struct fe_udpsock_config uc;
    fe_udpsock_config_default(&uc);
    uc.bind_ip = r->base_ip + 2;
    uc.no_gso = true;
    struct fe_udpsock *u = fe_udpsock_open(&uc, &r->err);
    if (!u) {
        atomic_store(&r->stop, true);
        return NULL;
    }
    static uint8_t buf[4608];
    memset(buf, 0xA5, sizeof buf);
    /* a RoCE data packet: BTH 12 + payload + ICRC 4 (the RETH of first packets aside) */
    uint32_t len = r->mtu + 16;
    struct fe_dgram d[32];
    for (int i = 0; i < 32; i++)
        d[i] = (struct fe_dgram){.buf = buf, .len = len, .ip = r->base_ip + 1, .port = 4792};
    while (!atomic_load(&r->stop)) (void)fe_udpsock_send(u, d, 32);
    fe_udpsock_close(u);
    return NULL;
}

/* ---- ceiling: the same datagrams with UDP GSO on send and UDP GRO on receive ----
 * One sendmmsg carries GSO_MSGS super-datagrams of up to 64 KiB, each cut by the kernel into
 * segments of the packet size; the receiver asks for GRO so a loopback GSO skb arrives whole.
 * Sockets are opened here directly: this is what the kernel can do, not what feroce does. */

enum { GSO_MSGS = 8, GSO_BYTES = 65000 };

static int gso_socket(uint32_t ip, uint16_t port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return -1;
    int v = 8 << 20;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof v);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof v);
    struct timeval tv = {0, 100000}; /* the receiver must notice stop */
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(ip);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void *gso_rx(void *arg)
{
    struct run *r = arg;
    pin(r->cpu_rx, "bench-rx");
    int fd = gso_socket(r->base_ip + 1, 4792), one = 1;
    if (fd >= 0 && setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd < 0) r->err = FE_EIO;
    atomic_store(&r->rx_ready, true);
    if (fd < 0) return NULL;
    static uint8_t mem[GSO_MSGS][65536];
    struct mmsghdr m[GSO_MSGS];
    struct iovec iov[GSO_MSGS];
    uint64_t t0 = fe_io_now_ns(), w0 = 0, bytes = 0;
    double tx0 = 0, rx0 = 0;
    while (!atomic_load(&r->stop)) {
        memset(m, 0, sizeof m);
        for (int i = 0; i < GSO_MSGS; i++) {
            iov[i] = (struct iovec){mem[i], sizeof mem[i]};
            m[i].msg_hdr.msg_iov = &iov[i];
            m[i].msg_hdr.msg_iovlen = 1;
        }
        int n = recvmmsg(fd, m, GSO_MSGS, MSG_WAITFORONE, NULL);
        uint64_t now = fe_io_now_ns();
        if (!w0 && now >= t0 + r->warm_ns) {
            w0 = now;
            bytes = 0;
            thread_cpu(r, &tx0, &rx0);
        }
        for (int i = 0; i < n; i++) bytes += m[i].msg_len;
        if (w0 && now >= w0 + r->measure_ns) {
            window_end(r, bytes, now - w0, tx0, rx0);
            break;
        }
    }
    atomic_store(&r->stop, true);
    close(fd);
    return NULL;
}

static void *gso_tx(void *arg)
{
    struct run *r = arg;
    pin(r->cpu_tx, "bench-tx");
    while (!atomic_load(&r->rx_ready)) usleep(1000);
    int fd = gso_socket(r->base_ip + 2, 0);
    if (fd < 0) {
        r->err = FE_EIO;
        atomic_store(&r->stop, true);
        return NULL;
    }
    uint16_t seg = (uint16_t)(r->mtu + 16);
    uint32_t total = GSO_BYTES / seg * seg;
    static uint8_t buf[GSO_BYTES];
    memset(buf, 0xA5, sizeof buf);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(4792)};
    to.sin_addr.s_addr = htonl(r->base_ip + 1);
    union {
        char b[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctl[GSO_MSGS];
    struct mmsghdr m[GSO_MSGS];
    struct iovec iov[GSO_MSGS];
    memset(m, 0, sizeof m);
    memset(ctl, 0, sizeof ctl);
    for (int i = 0; i < GSO_MSGS; i++) {
        iov[i] = (struct iovec){buf, total};
        struct msghdr *h = &m[i].msg_hdr;
        h->msg_name = &to;
        h->msg_namelen = sizeof to;
        h->msg_iov = &iov[i];
        h->msg_iovlen = 1;
        h->msg_control = ctl[i].b;
        h->msg_controllen = sizeof ctl[i].b;
        struct cmsghdr *c = CMSG_FIRSTHDR(h);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof seg);
        memcpy(CMSG_DATA(c), &seg, sizeof seg);
    }
    while (!atomic_load(&r->stop)) {
        if (sendmmsg(fd, m, GSO_MSGS, MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != ENOBUFS) {
            r->err = FE_EIO; /* the kernel refuses GSO: no ceiling to report */
            atomic_store(&r->stop, true);
        }
    }
    close(fd);
    return NULL;
}

static double run_pair(struct run *r, void *(*tx)(void *), void *(*rx)(void *))
{
    atomic_store(&r->stop, false);
    atomic_store(&r->rx_ready, false);
    atomic_store(&r->tx_known, false);
    r->bytes = 0;
    r->direct_share = 0;
    memset(&r->tx_sock, 0, sizeof r->tx_sock);
    memset(&r->rx_sock, 0, sizeof r->rx_sock);
    memset(&r->tx_qp, 0, sizeof r->tx_qp);
    r->tx_socket_full = 0;
    r->secs = r->cpu_tx_s = r->cpu_rx_s = r->idle_tx_s = r->idle_rx_s = 0;
    atomic_store(&r->tx_idle_ns, 0);
    r->err = 0;
    pthread_t a, b;
    if (pthread_create(&b, NULL, rx, r)) return 0;
    if (pthread_create(&a, NULL, tx, r)) {
        atomic_store(&r->stop, true);
        pthread_join(b, NULL);
        return 0;
    }
    r->tx_thread = a;
    atomic_store(&r->tx_known, true);
    pthread_join(b, NULL);
    atomic_store(&r->stop, true);
    pthread_join(a, NULL);
    if (r->err || r->secs <= 0) return 0;
    return (double)r->bytes * 8 / r->secs / 1e9;
}

/* Gb/s per CPU-second of the busier data-path thread of the run just done. */
static double per_core(const struct run *r)
{
    double busy_s = r->cpu_tx_s > r->cpu_rx_s ? r->cpu_tx_s : r->cpu_rx_s;
    return busy_s > 0 ? (double)r->bytes * 8 / busy_s / 1e9 : 0;
}

/* --web: the feroce path again with the dashboard open on the receiver; fe is its rate
 * without (the run just before). 1 when the run failed. */
static int web_pass(struct run *r, double fe, double fe_core)
{
    r->web_bytes = 0;
    double with = run_pair(r, feroce_tx, feroce_rx), with_core = per_core(r);
    r->web = false;
    double again = run_pair(r, feroce_tx, feroce_rx); /* the drift of the machine meanwhile */
    double without = (fe + again) / 2, without_core = (fe_core + per_core(r)) / 2;
    r->web = true;
    printf("       with the dashboard open (SSE stream read throughout, /metrics every 1 s, "
           "%.1f KB read): %.2f Gb/s; without: %.2f and %.2f Gb/s; ratio %.3f (%+.1f %%)\n",
           (double)r->web_bytes / 1e3, with, fe, again, without > 0 ? with / without : 0,
           without > 0 ? 100 * (with / without - 1) : 0);
    printf("       per CPU-second of the busier thread: %.2f Gb/s with, %.2f without; ratio "
           "%.3f\n",
           with_core, without_core, without_core > 0 ? with_core / without_core : 0);
    fflush(stdout);
    return with <= 0 || !r->web_bytes;
}

/* The feroce pair with verification off or on; Gb/s, and the CPU figures in *r. */
static double run_feroce(struct run *r, bool verify, int *err)
{
    r->verify = verify;
    double g = run_pair(r, feroce_tx, feroce_rx);
    *err |= r->err;
    return g;
}

/* CPU milliseconds per GB delivered of each side: on a loaded machine the figure that moves
 * least with what else runs. */
static void cpu_per_gb(const struct run *r, double *tx_ms, double *rx_ms)
{
    double gb = (double)r->bytes / 1e9;
    *tx_ms = gb > 0 ? 1e3 * r->cpu_tx_s / gb : 0;
    *rx_ms = gb > 0 ? 1e3 * r->cpu_rx_s / gb : 0;
}

/* System calls per 64 KiB message on each side (whole run): what the kernel path is asked. */
static void print_calls(const struct run *r)
{
    double msgs = (double)r->rx_sock.tx_dgrams > 0 ? (double)r->tx_sock.tx_bytes / 65536 : 0;
    if (msgs <= 0) return;
    printf("       per message: sender %.2f sends (%.2f GSO), %.2f receives (%.2f ACKs); receiver "
           "%.2f receives (%.2f GRO), %.2f sends\n",
           (double)r->tx_sock.tx_calls / msgs, (double)r->tx_sock.tx_gso_sends / msgs,
           (double)r->tx_sock.rx_calls / msgs, (double)r->tx_sock.rx_dgrams / msgs,
           (double)r->rx_sock.rx_calls / msgs, (double)r->rx_sock.rx_gro_dgrams / msgs,
           (double)r->rx_sock.tx_calls / msgs);
}

/* What held the sender back (whole run): its replay window full with nothing acknowledged, the
 * receiver out of credit (RNR), packets sent again, its socket full; and the mean time from a
 * packet to its ACK. */
static void print_stalls(const struct run *r)
{
    const struct fe_qp_counters *t = &r->tx_qp;
    printf("       sender held back: replay window full %llu times, RNR NAKs %llu, packets resent "
           "%llu (%llu timeouts), socket full %llu times; mean ACK time %.1f us\n",
           (unsigned long long)t->replay_full_stalls, (unsigned long long)t->rx_rnr_naks,
           (unsigned long long)t->retx_pkts, (unsigned long long)t->timeouts,
           (unsigned long long)r->tx_socket_full,
           t->rtt_samples ? (double)t->rtt_sum_ns / (double)t->rtt_samples / 1e3 : 0);
}

static void print_cpu(const char *what, const struct run *r)
{
    printf("       %s: per CPU-second of the busier thread %.2f Gb/s (sender had %.0f %% of a "
           "core, receiver %.0f %%); payloads received in place %.0f %%\n",
           what, per_core(r), r->secs > 0 ? 100 * r->cpu_tx_s / r->secs : 0,
           r->secs > 0 ? 100 * r->cpu_rx_s / r->secs : 0, 100 * r->direct_share);
    print_calls(r);
    print_stalls(r);
}

/* One line: CPU ms per GB, sender / receiver, of the feroce runs and the baselines (NULL: not
 * run). */
static void print_cpu_per_gb(const struct run *placed, const struct run *verified,
                             const struct run *plain, const struct run *ceiling)
{
    const struct run *runs[4] = {placed, verified, plain, ceiling};
    static const char *const names[4] = {"placed", "verified", "plain UDP", "ceiling"};
    printf("       CPU ms per GB, sender / receiver:");
    for (int i = 0; i < 4; i++) {
        if (!runs[i]) continue;
        double tx, rx;
        cpu_per_gb(runs[i], &tx, &rx);
        printf("%s %s %.0f / %.0f", i ? ";" : "", names[i], tx, rx);
    }
    printf("\n");
    if (!placed || !verified) return;
    printf("       work CPU ms per GB (busy-poll steps that moved nothing left out), sender / "
           "receiver:");
    for (int i = 0; i < 2; i++) {
        const struct run *w = runs[i];
        double gb = (double)w->bytes / 1e9;
        printf("%s %s %.0f / %.0f", i ? ";" : "", names[i],
               gb > 0 ? 1e3 * (w->cpu_tx_s - w->idle_tx_s) / gb : 0,
               gb > 0 ? 1e3 * (w->cpu_rx_s - w->idle_rx_s) / gb : 0);
    }
    printf("\n");
}

static int run(int argc, char **argv)
{
    struct run r;
    memset(&r, 0, sizeof r);
    uint64_t ms = 2000;
    uint32_t only_mtu = 0;
    bool feroce_only = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--time-ms") && i + 1 < argc) {
            if (fe_parse_u64(argv[++i], &ms, "--time-ms")) return 2;
        } else if (!strcmp(argv[i], "--mtu") && i + 1 < argc) {
            if (fe_parse_u32_max(argv[++i], &only_mtu, "--mtu", 4096)) return 2;
        } else if (!strcmp(argv[i], "--feroce-only")) {
            feroce_only = true; /* for profiling feroce's own path */
        } else if (!strcmp(argv[i], "--web")) {
            r.web = true;
        } else {
            fprintf(stderr, "usage: feroce bench loopback [--time-ms MS (2000)] "
                            "[--mtu 1024|4096 (both)] [--feroce-only] [--web]\n");
            return 2;
        }
    }
#ifndef FE_HAVE_WEB
    if (r.web) {
        fprintf(stderr, "bench loopback: --web is not built in (no libmicrohttpd or npm)\n");
        return 2;
    }
#endif
    if (only_mtu && only_mtu != 1024 && only_mtu != 4096) {
        fprintf(stderr, "bench loopback: --mtu is 1024 or 4096\n");
        return 2;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    r.cpu_tx = ncpu >= 2 ? 0 : -1;
    r.cpu_rx = ncpu >= 2 ? 1 : -1;
    r.base_ip = 0x7F000000u | (uint32_t)((90 + getpid() % 100) << 16) |
                (uint32_t)(((unsigned)getpid() / 100 % 250) << 8);
    r.warm_ns = 300000000ull;
    r.measure_ns = ms * 1000000ull;
    printf("sender -> receiver over loopback UDP, one pinned core each%s; 64 KiB WRITE with "
           "immediate messages, placed, then placed with every byte verified\n",
           ncpu >= 2 ? "" : " (one CPU only: unpinned)");
    printf("%-6s %12s %14s %16s %18s %9s %9s\n", "MTU", "feroce Gb/s", "verified Gb/s",
           "plain UDP Gb/s", "UDP GSO/GRO Gb/s", "/ceiling", "verified");
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        r.mtu = k ? 4096 : 1024;
        if (only_mtu && r.mtu != only_mtu) continue;
        int fe_err = 0;
        double fe = run_feroce(&r, false, &fe_err);
        struct run placed = r;
        double ver = run_feroce(&r, true, &fe_err);
        struct run verified = r;
        double base = feroce_only ? 0 : run_pair(&r, udp_tx, udp_rx);
        struct run plain = r;
        double gso = feroce_only ? 0 : run_pair(&r, gso_tx, gso_rx);
        printf("%-6u %12.2f %14.2f %16.2f %18.2f %9.2f %9.2f%s%s\n", r.mtu, fe, ver, base, gso,
               gso > 0 ? fe / gso : 0, gso > 0 ? ver / gso : 0,
               fe_err ? "  (feroce run failed)" : "",
               gso > 0 || feroce_only ? "" : "  (GSO/GRO refused)");
        print_cpu("placed", &placed);
        print_cpu("verified", &verified);
        print_cpu_per_gb(&placed, &verified, feroce_only ? NULL : &plain, feroce_only ? NULL : &r);
        fflush(stdout);
        if (fe <= 0 || ver <= 0 || fe_err || (base <= 0 && !feroce_only)) rc = 1;
        r.verify = false; /* the dashboard's cost is measured on the placed path */
        if (r.web && web_pass(&r, fe, per_core(&placed))) rc = 1;
    }
    printf("feroce Gb/s: payload of completed messages placed in the receiver's ring; verified: "
           "the same, every byte checked by the consumer; plain UDP: datagram bytes received "
           "(BTH + payload + ICRC sized), sender blasting without flow control; GSO/GRO (the "
           "ceiling): the same with %u-byte super-datagrams cut into packets by the kernel\n",
           (unsigned)GSO_BYTES);
    return rc;
}

const struct fe_bench fe_bench_loopback = {
    "loopback", "single-flow Gb/s over loopback, one core each, vs plain UDP", run};
