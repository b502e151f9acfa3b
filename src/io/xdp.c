/* AF_XDP frame transport (xdp.h): one socket on queue 0 of an interface, its UMEM split into
 * receive buffers (always in the kernel's fill ring or in the RX ring) and transmit buffers (on
 * a free list, in the TX ring or in the completion ring). libxdp's default program redirects
 * every frame of that queue to the socket. Frames longer than a UMEM chunk travel as
 * multi-buffer chains (XDP_USE_SG) where the kernel allows it. */
#include "io/xdp.h"

#include <stdio.h>
#include <string.h>

#ifndef FE_HAVE_XDP

bool fe_xdp_built(void)
{
    return false;
}
struct fe_xdp *fe_xdp_open(const char *ifname, int ifindex, char *why, size_t why_len)
{
    (void)ifname;
    (void)ifindex;
    snprintf(why, why_len, "this feroce was built without libxdp");
    return NULL;
}
void fe_xdp_close(struct fe_xdp *x)
{
    (void)x;
}
int fe_xdp_fd(const struct fe_xdp *x)
{
    (void)x;
    return -1;
}
const char *fe_xdp_mode(const struct fe_xdp *x)
{
    (void)x;
    return "none";
}
int fe_xdp_send(struct fe_xdp *x, const struct fe_dgram *d, int n, struct fe_raw_stats *st)
{
    (void)x;
    (void)d;
    (void)n;
    (void)st;
    return 0;
}
int fe_xdp_recv(struct fe_xdp *x, struct fe_dgram *d, int n)
{
    (void)x;
    (void)d;
    (void)n;
    return 0;
}
uint64_t fe_xdp_kernel_drops(struct fe_xdp *x)
{
    (void)x;
    return 0;
}

#else

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

/* Older uapi headers lack the multi-buffer flags the running kernel may have (Linux 6.6+). */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

#define CHUNK_BYTES     4096u /* one UMEM frame: a page, the largest aligned chunk */
#define RX_HEADROOM     256u  /* XDP_PACKET_HEADROOM: the kernel writes received data past it */
#define RX_CHUNKS       2048u
#define TX_CHUNKS       2048u
#define RING_DESCS      2048u
#define RX_PEEK_DESCS   256u /* descriptors looked at per receive call: whole chains of a batch */
#define KICK_TRIES      8    /* sendto calls per send: copy mode moves 32 frames per call */
#define TX_RECLAIM_DESC TX_CHUNKS
#define MAX_CHAIN       4 /* chunks per transmitted frame: 16 KiB, past any jumbo MTU */
/* A closed AF_XDP socket holds its queue until the kernel frees it, after an RCU grace period
 * in a workqueue that takes rtnl: binding the queue right after its last user exited (the
 * previous run on this interface) fails with EBUSY for a few hundred ms, longer while other
 * work holds rtnl. The bind is tried again for this long before the queue is taken as held. */
#define BUSY_WAIT_MS    3000
#define BUSY_STEP_MS    10

struct fe_xdp {
    struct xsk_umem *umem;
    struct xsk_socket *xsk;
    struct xsk_ring_prod fill, tx;
    struct xsk_ring_cons comp, rx;
    uint8_t *area;
    size_t area_bytes;
    uint64_t tx_free[TX_CHUNKS];
    uint32_t n_tx_free;
    struct xdp_program *prog;
    int ifindex;
    enum xdp_attach_mode mode;
    bool attached, sg, zc;
};

bool fe_xdp_built(void)
{
    return true;
}

/* libbpf and libxdp print their own diagnostics; the last warning becomes part of our reason
 * (their informational lines, such as libxdp's fallback to a program without a dispatcher, are
 * not reasons). */
static char last_msg[160];
__attribute__((format(printf, 1, 0))) static int keep_msg(const char *fmt, va_list ap)
{
    char m[sizeof last_msg];
    vsnprintf(m, sizeof m, fmt, ap);
    size_t l = strlen(m);
    while (l && (m[l - 1] == '\n' || m[l - 1] == ' ')) m[--l] = 0;
    if (l) memcpy(last_msg, m, l + 1);
    return 0;
}
__attribute__((format(printf, 2, 0))) static int libbpf_msg(enum libbpf_print_level level,
                                                            const char *fmt, va_list ap)
{
    return level == LIBBPF_WARN ? keep_msg(fmt, ap) : 0;
}
__attribute__((format(printf, 2, 0))) static int libxdp_msg(enum libxdp_print_level level,
                                                            const char *fmt, va_list ap)
{
    return level == LIBXDP_WARN ? keep_msg(fmt, ap) : 0;
}

static int if_mtu(const char *ifname)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    int mtu = ioctl(fd, SIOCGIFMTU, &ifr) == 0 ? ifr.ifr_mtu : 0;
    close(fd);
    return mtu;
}

static int area_map(struct fe_xdp *x)
{
    x->area_bytes = (size_t)(RX_CHUNKS + TX_CHUNKS) * CHUNK_BYTES;
    void *a = mmap(NULL, x->area_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) return -ENOMEM;
    x->area = a;
    return 0;
}

/* A UMEM per attempt: a failed bind leaves the first one's rings set up, and a second bind on
 * it would find them busy. */
static int umem_create(struct fe_xdp *x)
{
    struct xsk_umem_config uc = {
        .fill_size = RING_DESCS,
        .comp_size = RING_DESCS,
        .frame_size = CHUNK_BYTES,
        .frame_headroom = 0,
        .flags = 0,
    };
    int e = xsk_umem__create(&x->umem, x->area, x->area_bytes, &x->fill, &x->comp, &uc);
    if (e) x->umem = NULL;
    return e;
}

/* Every receive chunk into the fill ring; the transmit chunks onto the free list. */
static int umem_populate(struct fe_xdp *x)
{
    uint32_t idx;
    if (xsk_ring_prod__reserve(&x->fill, RX_CHUNKS, &idx) != RX_CHUNKS) return -ENOSPC;
    for (uint32_t i = 0; i < RX_CHUNKS; i++)
        *xsk_ring_prod__fill_addr(&x->fill, idx + i) = (uint64_t)i * CHUNK_BYTES;
    xsk_ring_prod__submit(&x->fill, RX_CHUNKS);
    for (uint32_t i = 0; i < TX_CHUNKS; i++)
        x->tx_free[i] = (uint64_t)(RX_CHUNKS + i) * CHUNK_BYTES;
    x->n_tx_free = TX_CHUNKS;
    return 0;
}

/* libxdp's default AF_XDP program: redirects every frame of a queue that has a socket in its
 * map, passes the rest to the kernel. */
static int prog_load(struct fe_xdp *x)
{
    static const char *const files[] = {"xsk_def_xdp_prog_5.3.o", "xsk_def_xdp_prog.o"};
    long e = -ENOENT;
    for (int i = 0; i < 2 && !x->prog; i++) {
        struct xdp_program *p = xdp_program__find_file(files[i], NULL, NULL);
        e = libxdp_get_error(p);
        if (!e) x->prog = p;
    }
    return (int)e;
}

/* Native first (the driver's hook: faster), generic when the driver refuses (no XDP support,
 * or an MTU too large for its single-buffer XDP). */
static int prog_attach(struct fe_xdp *x)
{
    int e = xdp_program__attach(x->prog, x->ifindex, XDP_MODE_NATIVE, 0);
    if (!e) {
        x->mode = XDP_MODE_NATIVE;
        return 0;
    }
    if (e == -EPERM || e == -EACCES) return e;
    e = xdp_program__attach(x->prog, x->ifindex, XDP_MODE_SKB, 0);
    if (!e) x->mode = XDP_MODE_SKB;
    return e;
}

/* One attempt at a bound socket, with or without multi-buffer. A UMEM per attempt: a failed
 * bind leaves the first one's rings set up. */
static int socket_create(struct fe_xdp *x, const char *ifname, bool sg)
{
    uint16_t bind = XDP_USE_NEED_WAKEUP | (sg ? XDP_USE_SG : 0);
    if (x->mode == XDP_MODE_SKB) bind |= XDP_COPY; /* zero-copy needs the driver's hook */
    struct xsk_socket_config sc = {
        .rx_size = RING_DESCS,
        .tx_size = RING_DESCS,
        .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
        .xdp_flags = 0,
        .bind_flags = bind,
    };
    int e = umem_create(x);
    if (!e) e = xsk_socket__create(&x->xsk, ifname, 0, x->umem, &x->rx, &x->tx, &sc);
    if (e) {
        x->xsk = NULL;
        if (x->umem) xsk_umem__delete(x->umem);
        x->umem = NULL;
        return e;
    }
    x->sg = sg;
    struct xdp_options opt;
    socklen_t ol = sizeof opt;
    if (!getsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_OPTIONS, &opt, &ol))
        x->zc = opt.flags & XDP_OPTIONS_ZEROCOPY;
    return 0;
}

/* socket_create, tried again while the queue is still held by a socket that was closed (see
 * BUSY_WAIT_MS); *waited_ms says how long it waited. */
static int socket_create_when_free(struct fe_xdp *x, const char *ifname, bool sg, int *waited_ms)
{
    int e;
    while ((e = socket_create(x, ifname, sg)) == -EBUSY && *waited_ms < BUSY_WAIT_MS) {
        usleep(BUSY_STEP_MS * 1000);
        *waited_ms += BUSY_STEP_MS;
    }
    return e;
}

/* Multi-buffer only when frames can exceed a chunk, and single-buffer again on a kernel
 * without it. */
static int socket_bind(struct fe_xdp *x, const char *ifname, int *waited_ms)
{
    int mtu = if_mtu(ifname);
    bool want_sg = mtu <= 0 || (uint32_t)mtu + 18u > CHUNK_BYTES - RX_HEADROOM;
    int e = socket_create_when_free(x, ifname, want_sg, waited_ms);
    if (e && e != -EBUSY && want_sg && e != -EPERM && e != -EACCES)
        e = socket_create_when_free(x, ifname, false, waited_ms);
    return e;
}

/* The socket into the program's map at its queue: from then on the queue's frames are ours. */
static int map_socket(struct fe_xdp *x)
{
    struct bpf_map *m = bpf_object__find_map_by_name(xdp_program__bpf_obj(x->prog), "xsks_map");
    if (!m) return -ENOENT;
    return xsk_socket__update_xskmap(x->xsk, bpf_map__fd(m));
}

static void say_why(char *why, size_t why_len, const char *step, int e)
{
    if (!why || !why_len) return;
    const char *hint =
        e == -EPERM || e == -EACCES ? " (needs CAP_NET_ADMIN, CAP_BPF, CAP_NET_RAW)" : "";
    if (last_msg[0])
        snprintf(why, why_len, "%s: %s%s; %s", step, strerror(-e), hint, last_msg);
    else
        snprintf(why, why_len, "%s: %s%s", step, strerror(-e), hint);
}

/* EBUSY after the whole wait: a live socket holds the queue (another program on this
 * interface), or the kernel is slower still to free a closed one. */
static void say_bind_why(char *why, size_t why_len, int e, int waited_ms)
{
    char step[96];
    if (e == -EBUSY)
        snprintf(step, sizeof step,
                 "AF_XDP socket (queue 0 still held by another socket after %d ms)", waited_ms);
    else
        snprintf(step, sizeof step, "AF_XDP socket");
    say_why(why, why_len, step, e);
}

struct fe_xdp *fe_xdp_open(const char *ifname, int ifindex, char *why, size_t why_len)
{
    last_msg[0] = 0;
    libbpf_set_print(libbpf_msg);
    libxdp_set_print(libxdp_msg);
    struct fe_xdp *x = calloc(1, sizeof *x);
    if (!x) {
        say_why(why, why_len, "memory", -ENOMEM);
        return NULL;
    }
    int e = area_map(x);
    if (e) {
        say_why(why, why_len, "UMEM", e);
        goto fail;
    }
    x->ifindex = ifindex;
    if ((e = prog_load(x))) {
        say_why(why, why_len, "libxdp's program", e);
        goto fail;
    }
    if ((e = prog_attach(x))) {
        say_why(why, why_len, "attaching the XDP program", e);
        goto fail;
    }
    x->attached = true;
    int waited_ms = 0;
    if ((e = socket_bind(x, ifname, &waited_ms))) {
        say_bind_why(why, why_len, e, waited_ms);
        goto fail;
    }
    if (waited_ms)
        fprintf(stderr,
                "feroce: AF_XDP on %s: queue 0 was still held by a closed socket; "
                "bound after %d ms\n",
                ifname, waited_ms);
    if ((e = map_socket(x))) {
        say_why(why, why_len, "the program's socket map", e);
        goto fail;
    }
    e = umem_populate(x);
    if (e) {
        say_why(why, why_len, "fill ring", e);
        goto fail;
    }
    return x;
fail:
    fe_xdp_close(x);
    return NULL;
}

void fe_xdp_close(struct fe_xdp *x)
{
    if (!x) return;
    if (x->xsk) xsk_socket__delete(x->xsk);
    if (x->umem) xsk_umem__delete(x->umem);
    if (x->attached) (void)xdp_program__detach(x->prog, x->ifindex, x->mode, 0);
    if (x->prog) xdp_program__close(x->prog);
    if (x->area) munmap(x->area, x->area_bytes);
    free(x);
}

int fe_xdp_fd(const struct fe_xdp *x)
{
    return xsk_socket__fd(x->xsk);
}

const char *fe_xdp_mode(const struct fe_xdp *x)
{
    if (x->mode == XDP_MODE_SKB) return "generic copy";
    return x->zc ? "native zero-copy" : "native copy";
}

/* Transmit chunks the kernel is done with go back to the free list. */
static void tx_reclaim(struct fe_xdp *x)
{
    uint32_t idx;
    uint32_t k = xsk_ring_cons__peek(&x->comp, TX_RECLAIM_DESC, &idx);
    for (uint32_t i = 0; i < k; i++) {
        uint64_t a = xsk_umem__extract_addr(*xsk_ring_cons__comp_addr(&x->comp, idx + i));
        x->tx_free[x->n_tx_free++] = a - a % CHUNK_BYTES;
    }
    if (k) xsk_ring_cons__release(&x->comp, k);
}

/* Copies frame f into chunks from the free list, as descriptors from idx on. */
static void tx_fill(struct fe_xdp *x, const struct fe_dgram *f, uint32_t idx, uint32_t descs)
{
    uint32_t off = 0;
    for (uint32_t j = 0; j < descs; j++) {
        uint32_t l = f->len - off < CHUNK_BYTES ? f->len - off : CHUNK_BYTES;
        uint64_t a = x->tx_free[--x->n_tx_free];
        memcpy(x->area + a, f->buf + off, l);
        struct xdp_desc *dsc = xsk_ring_prod__tx_desc(&x->tx, idx + j);
        dsc->addr = a;
        dsc->len = l;
        dsc->options = j + 1 < descs ? XDP_PKT_CONTD : 0;
        off += l;
    }
}

/* Copy mode transmits in the sendto call, 32 descriptors per call; EAGAIN asks for another. */
static void tx_kick(struct fe_xdp *x)
{
    if (x->zc && !xsk_ring_prod__needs_wakeup(&x->tx)) return;
    for (int t = 0; t < KICK_TRIES; t++) {
        if (sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0) return;
        if (errno != EAGAIN && errno != EINTR) return; /* EBUSY, ENOBUFS: the device is full */
        if (__atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE) == *x->tx.producer) return;
    }
}

int fe_xdp_send(struct fe_xdp *x, const struct fe_dgram *d, int n, struct fe_raw_stats *st)
{
    tx_reclaim(x);
    int done = 0;
    uint32_t descs_total = 0;
    for (; done < n; done++) {
        uint32_t descs = (d[done].len + CHUNK_BYTES - 1) / CHUNK_BYTES;
        if (!descs || (descs > 1 && !x->sg) || descs > MAX_CHAIN) {
            st->tx_errors++; /* empty, or longer than this socket can carry */
            continue;
        }
        uint32_t idx;
        if (descs > x->n_tx_free || xsk_ring_prod__reserve(&x->tx, descs, &idx) != descs) {
            st->tx_again++;
            break;
        }
        tx_fill(x, &d[done], idx, descs);
        descs_total += descs;
        st->tx_frames++;
        st->tx_bytes += d[done].len;
    }
    if (descs_total) xsk_ring_prod__submit(&x->tx, descs_total);
    tx_kick(x);
    return done;
}

/* Received chunks back into the fill ring (which always has room: it holds RX_CHUNKS). */
static void rx_refill(struct fe_xdp *x, uint32_t rx_idx, uint32_t k)
{
    uint32_t idx;
    if (xsk_ring_prod__reserve(&x->fill, k, &idx) != k) return; /* cannot happen, see above */
    for (uint32_t i = 0; i < k; i++) {
        uint64_t a = xsk_umem__extract_addr(xsk_ring_cons__rx_desc(&x->rx, rx_idx + i)->addr);
        *xsk_ring_prod__fill_addr(&x->fill, idx + i) = a - a % CHUNK_BYTES;
    }
    xsk_ring_prod__submit(&x->fill, k);
}

/* Copies the chain of descriptors [first, last] into f: truncated at f->cap. */
static void rx_copy(struct fe_xdp *x, struct fe_dgram *f, uint32_t first, uint32_t last)
{
    uint32_t len = 0;
    bool trunc = false;
    for (uint32_t i = first; i <= last; i++) {
        const struct xdp_desc *dsc = xsk_ring_cons__rx_desc(&x->rx, i);
        uint32_t l = dsc->len;
        if (len + l > f->cap) {
            l = f->cap - len;
            trunc = true;
        }
        memcpy(f->buf + len, xsk_umem__get_data(x->area, xsk_umem__add_offset_to_addr(dsc->addr)),
               l);
        len += l;
    }
    f->len = len;
    f->trunc = trunc;
}

int fe_xdp_recv(struct fe_xdp *x, struct fe_dgram *d, int n)
{
    uint32_t idx;
    uint32_t avail = xsk_ring_cons__peek(&x->rx, RX_PEEK_DESCS, &idx);
    if (!avail) {
        if (xsk_ring_prod__needs_wakeup(&x->fill))
            (void)recvfrom(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, NULL);
        return 0;
    }
    uint32_t used = 0;
    int out = 0;
    while (out < n && used < avail) {
        uint32_t end = used;
        while (end < avail && (xsk_ring_cons__rx_desc(&x->rx, idx + end)->options & XDP_PKT_CONTD))
            end++;
        if (end == avail) break; /* the rest of this chain is not in the ring yet */
        rx_copy(x, &d[out++], idx + used, idx + end);
        used = end + 1;
    }
    xsk_ring_cons__cancel(&x->rx, avail - used);
    if (used) {
        rx_refill(x, idx, used);
        xsk_ring_cons__release(&x->rx, used);
    }
    return out;
}

uint64_t fe_xdp_kernel_drops(struct fe_xdp *x)
{
    struct xdp_statistics s;
    socklen_t l = sizeof s;
    memset(&s, 0, sizeof s);
    if (getsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_STATISTICS, &s, &l)) return 0;
    return s.rx_dropped + s.rx_ring_full + s.rx_invalid_descs + s.tx_invalid_descs;
}

#endif
