/* feroce bench qp: the transport core in memory, one core: a requester QP streams 64 KiB RDMA
 * WRITEs to a responder QP, every packet and ACK handed over as a decoded fe_pkt (no framing, no
 * ICRC), with the driver loop a real one runs (tx, rx, deadline, expiry, completions, reposting)
 * in simulated time at 100 Gb/s line-rate pacing. MTU 1024 and 4096, no loss and 1 % loss (data
 * and ACKs, seeded).
 *
 * Three ways to receive: "sink" (a sink region: every check, no placement: the protocol core
 * alone), "placed" (payload copied into a 16 MiB region), "framed" (placed, and every packet
 * also encoded and decoded as an IPv4 frame with the ICRC verified: what a socket driver adds).
 * Baseline in the same run: memcpy of the same payload bytes between the same buffers. */
#include "tools/cli.h"

#include "feroce/qp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REGION (16u << 20)
#define MSG    (64u << 10)
#define SQ     64

enum mode { M_SINK, M_PLACED, M_FRAMED };
static const char *const mode_name[] = {"sink", "placed", "framed"};

struct result {
    uint64_t ns, data_pkts, retx, acks, bytes_done, frames;
};

static uint8_t *g_src, *g_dst;

/* CPU time of this thread: on a shared machine, time spent descheduled is not the core's */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t xs(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void mkcfg(struct fe_qp_config *c, bool b, uint32_t mtu)
{
    fe_qp_config_default(c);
    c->local_qpn = b ? 0x22 : 0x11;
    c->remote_qpn = b ? 0x11 : 0x22;
    c->remote_va = 0x10000000;
    c->remote_rkey = 7;
    c->mtu_bytes = mtu;
    c->sq_depth = SQ;
    c->ack_timeout_ns = 100000; /* 100 us: the in-memory RTT is zero */
    c->path.src_ip4 = b ? 0x0a000002 : 0x0a000001;
    c->path.dst_ip4 = b ? 0x0a000001 : 0x0a000002;
}

/* Hands a packet to the peer, directly or through the frame codec (with ICRC). */
static void hand(struct fe_qp *to, uint64_t now, const struct fe_pkt *p, enum mode m,
                 const struct fe_path *path, uint8_t *fbuf)
{
    if (m != M_FRAMED) {
        fe_qp_rx(to, now, p);
        return;
    }
    int n = fe_frame_encode(fbuf, FE_MAX_FRAME_LEN, FE_FRAME_IP, path, 0, p);
    if (n > 0) fe_qp_rx_frame(to, now, fbuf, (size_t)n, FE_FRAME_IP, true);
}

static int run_case(uint32_t mtu, uint32_t loss_ppm, enum mode m, uint64_t min_ns,
                    struct result *res)
{
    struct fe_qp_config ca, cb;
    mkcfg(&ca, false, mtu);
    mkcfg(&cb, true, mtu);
    struct fe_qp *a = fe_qp_create(&ca, 0, NULL, NULL), *b = fe_qp_create(&cb, 0, NULL, NULL);
    if (!a || !b) return -1;
    struct fe_mr mr = {
        .rkey = 7, .va = 0x10000000, .len = REGION, .base = m == M_SINK ? NULL : g_dst};
    fe_qp_reg_mr(b, &mr);
    static uint8_t fbuf[FE_MAX_FRAME_LEN];
    uint64_t rng = 0x243F6A8885A308D3ull, thr = (uint64_t)loss_ppm * (UINT64_MAX / 1000000);
    uint64_t now = 0, posted = 0, done_msgs = 0;
    memset(res, 0, sizeof *res);
    uint64_t t0 = cpu_ns(), t;
    for (uint64_t iter = 0;; iter++) {
        while (posted - done_msgs < SQ) {
            uint64_t off = (posted * MSG) % REGION;
            struct fe_wr w = {.op = FE_WR_WRITE,
                              .cookie = posted,
                              .data = g_src + off,
                              .len = MSG,
                              .remote_offset = off};
            if (fe_qp_post_send(a, &w)) break;
            posted++;
        }
        /* data to the responder, then its answers back; answers may open the window, so
         * only a round without any moves time on */
        struct fe_pkt p;
        int moved = 0;
        while (fe_qp_tx(a, now, &p)) {
            res->data_pkts++;
            if (loss_ppm && xs(&rng) < thr) continue;
            hand(b, now, &p, m, &ca.path, fbuf);
        }
        while (fe_qp_tx(b, now, &p)) {
            res->acks++;
            moved = 1;
            if (loss_ppm && xs(&rng) < thr) continue;
            hand(a, now, &p, m, &cb.path, fbuf);
        }
        struct fe_cqe cq[SQ];
        int n = fe_qp_poll_cq(a, cq, SQ);
        done_msgs += (uint64_t)n;
        if (!moved) {
            uint64_t da = fe_qp_next_deadline(a), e = fe_qp_next_deadline(b);
            uint64_t d = e < da ? e : da;
            if (d == FE_NO_DEADLINE) return -1; /* cannot happen: there is always work */
            if (d > now) now = d;
            if (da <= now) fe_qp_handle_expiry(a, now);
            if (e <= now) fe_qp_handle_expiry(b, now);
        }
        if ((iter & 1023) == 0 && (t = cpu_ns()) - t0 >= min_ns) break;
    }
    res->ns = t - t0;
    res->retx = fe_qp_counters(a)->retx_pkts;
    res->bytes_done = done_msgs * MSG;
    int bad = fe_qp_state(a) != FE_QPS_RTS || fe_qp_state(b) != FE_QPS_RTS;
    fe_qp_destroy(a);
    fe_qp_destroy(b);
    return bad ? -1 : 0;
}

/* ns per packet of memcpy of `mtu` bytes, the same buffers in the same order */
static double baseline_ns(uint32_t mtu, uint64_t min_ns)
{
    uint64_t pkts = 0, off = 0, t0 = cpu_ns(), t;
    do {
        for (int i = 0; i < 1024; i++) {
            memcpy(g_dst + off, g_src + off, mtu);
            off = (off + mtu) % REGION;
        }
        pkts += 1024;
        t = cpu_ns();
    } while (t - t0 < min_ns);
    fe_bench_sink(g_dst[off]);
    return (double)(t - t0) / (double)pkts;
}

static void print_memory(void)
{
    struct fe_qp_config c;
    fe_qp_config_default(&c);
    printf("memory per QP (fe_qp_memory_bytes, all of it allocated at creation):\n");
    printf("  default config (replay 2 MiB = %u entries at MTU 4096, SQ %u, RQ %u, CQ %u): "
           "%.1f KiB\n",
           (unsigned)(c.replay_bytes / c.mtu_bytes), c.sq_depth, c.rq_depth, c.cq_depth,
           (double)fe_qp_memory_bytes(&c) / 1024);
    c.mtu_bytes = 1024;
    printf("  same at MTU 1024 (2048 replay entries): %.1f KiB\n",
           (double)fe_qp_memory_bytes(&c) / 1024);
    c.mtu_bytes = 4096;
    c.sq_depth = 64;
    c.rq_depth = 16;
    c.cq_depth = 80;
    c.replay_bytes = 256u << 10;
    printf("  a simulator-sized QP (replay 256 KiB, SQ 64, RQ 16, CQ 80): %.1f KiB\n",
           (double)fe_qp_memory_bytes(&c) / 1024);
    printf("  a replay entry is 24 B per MTU packet (no payload copy: zero copy from the WR)\n\n");
}

static int run(int argc, char **argv)
{
    uint64_t time_ms = 300, reps = 2;
    int only = -1, verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--time-ms") && i + 1 < argc) {
            if (fe_parse_u64(argv[++i], &time_ms, "time") || time_ms == 0) return 2;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (fe_parse_u64(argv[++i], &reps, "repetitions") || reps == 0) return 2;
        } else if (!strcmp(argv[i], "-v")) {
            verbose = 1;
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            i++;
            for (int m = M_SINK; m <= M_FRAMED; m++)
                if (!strcmp(argv[i], mode_name[m])) only = m;
            if (only < 0) {
                fprintf(stderr, "feroce bench qp: --only sink|placed|framed\n");
                return 2;
            }
        } else {
            int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
            fputs("usage: feroce bench qp [--time-ms N (300)] [--reps N (2)] [--only MODE] [-v]\n"
                  "Requester -> responder in memory on one core; each figure is the best of N\n"
                  "runs of at least M ms. Prints packets/s, payload Gb/s, ns per data packet\n"
                  "and the ratio to a memcpy of the same payload bytes. MODE: sink (protocol\n"
                  "only), placed (+ payload copy), framed (+ frame codec and ICRC).\n",
                  help ? stdout : stderr);
            return help ? 0 : 2;
        }
    }
    g_src = malloc(REGION);
    g_dst = malloc(REGION);
    if (!g_src || !g_dst) return 1;
    uint64_t rng = 88172645463325252ull;
    for (size_t i = 0; i < REGION; i += 8) {
        uint64_t v = xs(&rng);
        memcpy(g_src + i, &v, 8);
    }
    memset(g_dst, 0, REGION);

    printf("QP core, requester -> responder in memory, one core: 64 KiB WRITEs, SQ %u, 100 Gb/s\n"
           "pacing in simulated time, loss on data and ACKs. ns/pkt = CPU time per data packet\n"
           "sent (retransmissions included) for the whole driver loop, both QPs, ACKs included.\n"
           "sink: protocol only; placed: + payload copy into the region; framed: + IPv4 frame\n"
           "encode/decode with ICRC. memcpy: the same payload bytes, same buffers.\n\n",
           SQ);
    print_memory();
    printf("%5s %5s %-7s %10s %8s %8s %6s %9s %7s\n", "MTU", "loss", "mode", "pkts/s", "Gb/s",
           "ns/pkt", "retx%", "memcpy ns", "ratio");
    static const uint32_t mtus[] = {1024, 4096};
    static const uint32_t losses[] = {0, 10000};
    double worst_sink = 0;
    for (size_t mi = 0; mi < 2; mi++) {
        double base = 1e30;
        for (uint64_t r = 0; r < reps; r++) {
            double v = baseline_ns(mtus[mi], time_ms * 1000000 / 2);
            if (v < base) base = v;
        }
        for (size_t li = 0; li < 2; li++) {
            for (int m = M_SINK; m <= M_FRAMED; m++) {
                if (only >= 0 && m != only) continue;
                struct result best = {0}, cur;
                double best_ns = 1e30;
                for (uint64_t r = 0; r < reps; r++) {
                    if (run_case(mtus[mi], losses[li], (enum mode)m, time_ms * 1000000, &cur)) {
                        fprintf(stderr, "bench qp: the QP pair failed\n");
                        return 1;
                    }
                    double ns = (double)cur.ns / (double)cur.data_pkts;
                    if (ns < best_ns) best_ns = ns, best = cur;
                }
                double secs = (double)best.ns / 1e9;
                printf("%5u %4.0f%% %-7s %10.0f %8.1f %8.1f %6.2f %9.1f %6.2fx\n", mtus[mi],
                       losses[li] / 10000.0, mode_name[m], (double)best.data_pkts / secs,
                       (double)best.bytes_done * 8 / secs / 1e9, best_ns,
                       100.0 * (double)best.retx / (double)best.data_pkts, base, best_ns / base);
                if (verbose)
                    printf("      %llu data packets, %llu retransmitted, %llu ACK/NAK, %llu ns\n",
                           (unsigned long long)best.data_pkts, (unsigned long long)best.retx,
                           (unsigned long long)best.acks, (unsigned long long)best.ns);
                if (m == M_SINK && best_ns > worst_sink) worst_sink = best_ns;
                fflush(stdout);
            }
        }
    }
    printf("\nProtocol core (sink rows, ICRC excluded): at most %.1f ns per data packet "
           "(target: well under 100 ns).\nratio = ns/pkt / memcpy ns per packet of the same "
           "payload.\n",
           worst_sink);
    free(g_src);
    free(g_dst);
    return 0;
}

const struct fe_bench fe_bench_qp = {
    "qp", "transport core packets/s and Gb/s in memory (MTU 1024/4096, 0 and 1 % loss)", run};
