/* feroce gen FILE.pcap: a scripted RoCEv2 exchange between a front-end board and a DAQ server
 * (or random valid frames for interop tests), for Wireshark, tshark, scapy and `feroce decode`. */
#include "tools/cli.h"

#include "feroce/err.h"
#include "feroce/pcap.h"
#include "feroce/wire.h"

#include <string.h>

#define LINK_BPS   10000000000ull         /* timestamps as on a 10 Gb/s link */
#define ONE_WAY_NS 1500u                  /* NIC + switch + cable, one way */
#define T0_NS      1717200000000000000ull /* 2024-06-01 00:00:00 UTC: fixed for reproducible files */

/* The two hosts: a front-end board streaming into a DAQ server's memory. */
#define FE_QPN    0x000100u /* front-end QPs are allocated from 256 up (side channel) */
#define HOST_QPN  0x000011u /* the first user QP number Linux rxe hands out */
#define RKEY      0x00001e07u
#define VA0       0x00007f3a4c000000ull
#define DSCP_DATA 26 /* RoCE traffic class 106 = DSCP 26 + ECT(0), the ConnectX default */
#define PCP_DATA  3
#define DSCP_CNP  48
#define PCP_CNP   6

struct gen {
    struct fe_pcap_writer *w;
    enum fe_framing framing;
    struct fe_path to_host, to_fe;
    uint64_t t_ns;
    uint16_t id_fe, id_host;
    unsigned count;
    int err;
    uint64_t rng;
};

static uint64_t rnd(struct gen *g)
{
    uint64_t x = g->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    g->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Encodes, stamps and writes one frame; the clock advances by its time on the wire. */
static void emit(struct gen *g, bool from_fe, const struct fe_pkt *pkt)
{
    static uint8_t buf[FE_MAX_FRAME_LEN];
    if (g->err) return;
    const struct fe_path *path = from_fe ? &g->to_host : &g->to_fe;
    uint16_t id = from_fe ? g->id_fe++ : g->id_host++;
    int n = fe_frame_encode(buf, sizeof buf, g->framing, path, id, pkt);
    if (n < 0) {
        fprintf(stderr, "feroce gen: encode: %s\n", fe_strerror(n));
        g->err = n;
        return;
    }
    if ((g->err = fe_pcap_write(g->w, g->t_ns, buf, (size_t)n))) {
        fprintf(stderr, "feroce gen: write: %s\n", fe_strerror(g->err));
        return;
    }
    g->count++;
    /* serialization incl. preamble, FCS and inter-frame gap (24 bytes) */
    uint64_t bytes = (uint64_t)n + (g->framing == FE_FRAME_ETH ? 24 : 24 + 14);
    g->t_ns += bytes * 8 * 1000000000ull / LINK_BPS;
}

static void wait_ns(struct gen *g, uint64_t ns)
{
    g->t_ns += ns;
}

/* Detector-like data: 16-bit big-endian ADC samples, pedestal ~400 counts with noise. */
static void fill_adc(struct gen *g, uint8_t *p, uint32_t len)
{
    for (uint32_t i = 0; i + 1 < len; i += 2) {
        uint16_t v = (uint16_t)(400 + rnd(g) % 24);
        p[i] = (uint8_t)(v >> 8);
        p[i + 1] = (uint8_t)v;
    }
    if (len & 1) p[len - 1] = 0;
}

static struct fe_pkt data_pkt(uint8_t op, uint32_t psn, const uint8_t *pl, uint32_t len)
{
    struct fe_pkt p = {
        .bth = {.opcode = op, .pkey = FE_PKEY_DEFAULT, .dqpn = HOST_QPN, .psn = psn & FE_PSN_MASK},
        .payload = pl,
        .payload_len = len,
        .ecn = FE_ECN_ECT0,
        .dscp = DSCP_DATA,
        .pcp = PCP_DATA};
    return p;
}

static struct fe_pkt ack_pkt(uint8_t syndrome, uint32_t psn, uint32_t msn)
{
    struct fe_pkt p = {.bth = {.opcode = FE_OP_ACK,
                               .pkey = FE_PKEY_DEFAULT,
                               .dqpn = FE_QPN,
                               .psn = psn & FE_PSN_MASK},
                       .aeth = {.syndrome = syndrome, .msn = msn},
                       .ecn = FE_ECN_NOT_ECT,
                       .dscp = DSCP_DATA,
                       .pcp = PCP_DATA};
    return p;
}

/* A WRITE of `len` bytes at `va` segmented by `mtu`, starting at *psn. `skip_psn` (if it is one
 * of the message's PSNs) is "lost in the fabric": not written to the capture. `only_from` sends
 * only the packets from that PSN on (a go-back-N retransmission). */
static void write_msg(struct gen *g, uint32_t *psn, uint64_t va, uint32_t len, uint32_t mtu,
                      bool imm, uint32_t immdt, uint8_t ecn, int64_t skip_psn, int64_t only_from)
{
    static uint8_t data[1u << 16];
    fill_adc(g, data, len);
    uint32_t npk = len <= mtu ? 1 : (len + mtu - 1) / mtu;
    for (uint32_t i = 0; i < npk; i++) {
        uint32_t off = i * mtu, n = len - off < mtu ? len - off : mtu;
        uint8_t op;
        if (npk == 1)
            op = imm ? FE_OP_WRITE_ONLY_IMM : FE_OP_WRITE_ONLY;
        else if (i == 0)
            op = FE_OP_WRITE_FIRST;
        else if (i + 1 < npk)
            op = FE_OP_WRITE_MIDDLE;
        else
            op = imm ? FE_OP_WRITE_LAST_IMM : FE_OP_WRITE_LAST;
        struct fe_pkt p = data_pkt(op, *psn + i, data + off, n);
        p.reth = (struct fe_reth){.va = va, .rkey = RKEY, .dma_len = len};
        p.imm = immdt;
        p.ecn = ecn;
        p.bth.ackreq = i + 1 == npk;
        bool skip = skip_psn >= 0 && (uint32_t)skip_psn == p.bth.psn;
        bool before = only_from >= 0 && fe_psn_before(p.bth.psn, (uint32_t)only_from);
        if (!skip && !before) emit(g, true, &p);
    }
    *psn = fe_psn_add(*psn, (int32_t)npk);
}

/* Where the scripted conversation is: the front-end's next PSN, the responder's MSN, the
 * next message's address. */
struct script {
    uint32_t psn, msn, mtu;
    uint64_t va;
};

static void ack(struct gen *g, struct script *sc, uint32_t psn)
{
    struct fe_pkt a = ack_pkt(fe_aeth_syn_ack(FE_AETH_CREDITS_INVALID), psn, ++sc->msn);
    emit(g, false, &a);
}

/* 1. a three-packet WRITE (FIRST, MIDDLE, LAST with 3 bytes of pad), ECT(0) */
static void script_write_across_wrap(struct gen *g, struct script *sc)
{
    uint32_t len1 = 2 * sc->mtu + sc->mtu / 2 - 3;
    write_msg(g, &sc->psn, sc->va, len1, sc->mtu, false, 0, FE_ECN_ECT0, -1, -1);
    sc->va += (len1 + 63) & ~63u; /* messages start on cache lines */
    wait_ns(g, ONE_WAY_NS);
    ack(g, sc, fe_psn_add(sc->psn, -1));
}

/* 2. WRITE with immediate (event number), marked CE by a congested switch; the receiver
 *    answers with a CNP (DSCP 48, Not-ECT, PCP 6, BECN, PSN 0, 16 zero bytes) and an ACK. */
static void script_ce_and_cnp(struct gen *g, struct script *sc)
{
    write_msg(g, &sc->psn, sc->va, 200, sc->mtu, true, 0x00000001, FE_ECN_CE, -1, -1);
    sc->va += 256;
    wait_ns(g, ONE_WAY_NS);
    struct fe_pkt cnp = {.bth = {.opcode = FE_OP_CNP,
                                 .pkey = FE_PKEY_DEFAULT,
                                 .becn = true,
                                 .dqpn = FE_QPN,
                                 .psn = 0},
                         .payload_len = FE_CNP_PAD_LEN,
                         .ecn = FE_ECN_NOT_ECT,
                         .dscp = DSCP_CNP,
                         .pcp = PCP_CNP};
    emit(g, false, &cnp);
    ack(g, sc, fe_psn_add(sc->psn, -1));
}

/* 3. a SEND with no receive posted yet: RNR NAK (timer 14 = 1.28 ms), resent, ACKed */
static void script_rnr(struct gen *g, struct script *sc)
{
    static const char run_msg[] = "feroce run 42: spill start";
    wait_ns(g, 20000);
    struct fe_pkt s =
        data_pkt(FE_OP_SEND_ONLY, sc->psn, (const uint8_t *)run_msg, (uint32_t)sizeof run_msg - 1);
    s.bth.ackreq = true;
    emit(g, true, &s);
    wait_ns(g, ONE_WAY_NS);
    struct fe_pkt a = ack_pkt(fe_aeth_syn_rnr(14), sc->psn, sc->msn);
    emit(g, false, &a);
    wait_ns(g, fe_rnr_timer_ns(14));
    emit(g, true, &s);
    wait_ns(g, ONE_WAY_NS);
    ack(g, sc, sc->psn);
    sc->psn = fe_psn_add(sc->psn, 1);
}

/* 4. a WRITE whose MIDDLE packet is lost: the LAST gets a PSN sequence error NAK carrying
 *    the expected PSN; the sender goes back to it (Go-Back-N) and the message completes. */
static void script_lost_middle(struct gen *g, struct script *sc)
{
    wait_ns(g, 20000);
    uint32_t first = sc->psn, lost = fe_psn_add(sc->psn, 1);
    uint32_t len4 = 3 * sc->mtu;
    write_msg(g, &sc->psn, sc->va, len4, sc->mtu, false, 0, FE_ECN_ECT0, lost, -1);
    wait_ns(g, ONE_WAY_NS);
    struct fe_pkt a = ack_pkt(fe_aeth_syn_nak(FE_NAK_PSN_SEQ), lost, sc->msn);
    emit(g, false, &a);
    wait_ns(g, ONE_WAY_NS);
    sc->psn = first;
    write_msg(g, &sc->psn, sc->va, len4, sc->mtu, false, 0, FE_ECN_ECT0, -1, lost);
    wait_ns(g, ONE_WAY_NS);
    ack(g, sc, fe_psn_add(sc->psn, -1));
}

static void scripted(struct gen *g, uint32_t mtu)
{
    /* the first WRITE crosses the 2^24 wrap */
    struct script sc = {.psn = 0xfffffd, .msn = 0, .mtu = mtu, .va = VA0};
    script_write_across_wrap(g, &sc);
    script_ce_and_cnp(g, &sc);
    script_rnr(g, &sc);
    script_lost_middle(g, &sc);
}

static void random_frames(struct gen *g, unsigned n, uint32_t mtu, int ipver)
{
    static uint8_t pl[4096];
    uint8_t ops[32];
    unsigned nops = 0;
    for (unsigned op = 0; op < 256; op++)
        if (fe_opcode_flags((uint8_t)op) & FE_OPF_KNOWN) ops[nops++] = (uint8_t)op;
    for (unsigned i = 0; i < n && !g->err; i++) {
        uint8_t op = ops[rnd(g) % nops];
        unsigned f = fe_opcode_flags(op);
        struct fe_pkt p = {
            .bth = {.opcode = op,
                    .se = rnd(g) & 1,
                    .migreq = rnd(g) & 1,
                    .pkey = (rnd(g) & 3) ? FE_PKEY_DEFAULT : (uint16_t)rnd(g),
                    .fecn = rnd(g) & 1,
                    .becn = rnd(g) & 1,
                    .dqpn = (uint32_t)rnd(g) & 0xffffff,
                    .ackreq = rnd(g) & 1,
                    .psn = (uint32_t)rnd(g) & FE_PSN_MASK},
            .reth = {.va = rnd(g), .rkey = (uint32_t)rnd(g), .dma_len = (uint32_t)rnd(g)},
            .aeth = {.syndrome = (uint8_t)(rnd(g) & 0x7f), .msn = (uint32_t)rnd(g) & 0xffffff},
            .imm = (uint32_t)rnd(g),
            .ecn = (uint8_t)(rnd(g) & 3),
            .dscp = (uint8_t)(rnd(g) & 0x3f),
            .pcp = (uint8_t)(rnd(g) & 7)};
        if (f & FE_OPF_PAYLOAD) {
            p.payload_len = (uint32_t)(rnd(g) % (mtu + 1));
            for (uint32_t k = 0; k < p.payload_len; k++) pl[k] = (uint8_t)rnd(g);
            p.payload = pl;
        } else if (f & FE_OPF_CNP) {
            p.payload_len = FE_CNP_PAD_LEN;
        }
        struct fe_path *path = &g->to_host;
        path->ipver = (uint8_t)(ipver ? ipver : (rnd(g) & 1 ? 6 : 4));
        path->ttl = (uint8_t)(8 + rnd(g) % 248); /* >= 8: tshark warns about tiny TTLs */
        path->flow_label = (uint32_t)rnd(g) & 0xfffff;
        path->udp_sport = (uint16_t)(49152 + rnd(g) % 16384);
        path->vlan = (rnd(g) & 3) == 0;
        path->vid = (uint16_t)(1 + rnd(g) % 4094);
        g->id_fe = (uint16_t)rnd(g);
        emit(g, true, &p);
        wait_ns(g, 1000);
    }
}

static void set_paths(struct gen *g, int ipver, int vlan)
{
    struct fe_path fe = {
        .src_mac = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x0b}, /* FPGA board */
        .dst_mac = {0xb8, 0xce, 0xf6, 0x4e, 0x21, 0x9a}, /* ConnectX-5 port */
        .vlan = vlan >= 0,
        .vid = (uint16_t)(vlan >= 0 ? vlan : 0),
        .ipver = (uint8_t)ipver,
        .src_ip4 = 0xc0a80a0b, /* 192.168.10.11 */
        .dst_ip4 = 0xc0a80a01, /* 192.168.10.1 */
        .src_ip6 = {0xfd, 0x00, 0x00, 0xfe, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0x0b},
        .dst_ip6 = {0xfd, 0x00, 0x00, 0xfe, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0x01},
        .ttl = 64,
        .flow_label = 0x3a5c1,
        .udp_sport = (uint16_t)(40128 + FE_QPN)};
    struct fe_path host = fe;
    memcpy(host.src_mac, fe.dst_mac, 6);
    memcpy(host.dst_mac, fe.src_mac, 6);
    host.src_ip4 = fe.dst_ip4;
    host.dst_ip4 = fe.src_ip4;
    memcpy(host.src_ip6, fe.dst_ip6, 16);
    memcpy(host.dst_ip6, fe.src_ip6, 16);
    host.flow_label = 0x7b2e4;
    host.udp_sport = (uint16_t)(40128 + HOST_QPN);
    g->to_host = fe;
    g->to_fe = host;
}

struct gen_opts {
    const char *path;
    int ipver, vlan, random_ipver;
    uint64_t mtu, nrandom, seed;
    enum fe_framing framing;
};

static int ipv6_opt(const char *val, void *p)
{
    struct gen_opts *o = p;
    (void)val;
    o->ipver = o->random_ipver = 6;
    return 0;
}

static int ipv4_opt(const char *val, void *p)
{
    struct gen_opts *o = p;
    (void)val;
    o->ipver = o->random_ipver = 4;
    return 0;
}

static int mtu_opt(const char *val, void *p)
{
    uint64_t *mtu = p;
    if (fe_parse_u64(val, mtu, "MTU")) return -1;
    if (*mtu != 256 && *mtu != 512 && *mtu != 1024 && *mtu != 2048 && *mtu != 4096) {
        fprintf(stderr, "feroce gen: --mtu must be 256, 512, 1024, 2048 or 4096\n");
        return -1;
    }
    return 0;
}

static int vlan_opt(const char *val, void *p)
{
    uint64_t v;
    if (fe_parse_u64(val, &v, "VLAN id")) return -1;
    if (v > 4094) {
        fprintf(stderr, "feroce gen: --vlan must be 0..4094\n");
        return -1;
    }
    *(int *)p = (int)v;
    return 0;
}

static int random_opt(const char *val, void *p)
{
    uint64_t *n = p;
    if (fe_parse_u64(val, n, "packet count")) return -1;
    if (*n == 0 || *n > 1000000) {
        fprintf(stderr, "feroce gen: --random takes 1..1000000\n");
        return -1;
    }
    return 0;
}

static int path_arg(const char *a, void *p)
{
    struct gen_opts *o = p;
    if (o->path) {
        fprintf(stderr, "feroce gen: one output file only\n");
        return -1;
    }
    o->path = a;
    return 0;
}

static int parse_opts(int argc, char **argv, struct gen_opts *o)
{
    *o = (struct gen_opts){.ipver = 4, .vlan = -1, .mtu = 1024, .seed = 1, .framing = FE_FRAME_ETH};
    const struct fe_opt opts[] = {
        {FE_OPT_FN0_("--ipv6", ipv6_opt, o)},
        {FE_OPT_FN0_("--ipv4", ipv4_opt, o)},
        {FE_OPT_SET_("--raw-ip", o->framing, FE_FRAME_IP)},
        {FE_OPT_FN_("--mtu", mtu_opt, &o->mtu)},
        {FE_OPT_FN_("--vlan", vlan_opt, &o->vlan)},
        {FE_OPT_FN_("--random", random_opt, &o->nrandom)},
        {FE_OPT_UINT_("--seed", o->seed), .what = "seed"},
        {0},
    };
    const struct fe_opt *const tables[] = {opts, NULL};
    const struct fe_cli cli = {
        .cmd = "gen", .tables = tables, .positional = path_arg, .ctx = o, .dash_is_arg = true};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    if (!o->path) {
        fputs("usage: feroce gen FILE.pcap [--ipv6] [--mtu N] [--vlan VID] [--raw-ip] "
              "[--random N [--seed S]]\n",
              stderr);
        return -1;
    }
    return 0;
}

static int run(int argc, char **argv)
{
    struct gen_opts o;
    if (parse_opts(argc, argv, &o)) return 2;
    struct gen g = {.framing = o.framing,
                    .t_ns = T0_NS,
                    .id_fe = 0x1c46,
                    .id_host = 0x5d03,
                    .rng = o.seed * 0x9E3779B97F4A7C15ull + 1};
    set_paths(&g, o.ipver, o.vlan);
    char err[256];
    if (fe_pcap_writer_open(&g.w, o.path, o.framing, err, sizeof err)) {
        fprintf(stderr, "feroce gen: %s\n", err);
        return 1;
    }
    if (o.nrandom)
        random_frames(&g, (unsigned)o.nrandom, (uint32_t)o.mtu, o.random_ipver);
    else
        scripted(&g, (uint32_t)o.mtu);
    int rc = fe_pcap_writer_close(g.w);
    if (g.err || rc) {
        fprintf(stderr, "feroce gen: failed writing %s\n", o.path);
        return 1;
    }
    printf("feroce gen: wrote %u packets to %s\n", g.count, o.path);
    return 0;
}

const struct fe_cmd fe_cmd_gen = {
    "gen", "write a pcap of a scripted RoCEv2 exchange (or random frames)",
    "usage: feroce gen FILE.pcap [--ipv6] [--mtu N] [--vlan VID] [--raw-ip]\n"
    "       feroce gen FILE.pcap --random N [--seed S] [--ipv4|--ipv6] [--mtu N] [--raw-ip]\n"
    "Writes a capture of a front-end board (192.168.10.11, QP 0x100, UDP source port 40384)\n"
    "streaming into a DAQ server (192.168.10.1, QP 0x11, port 40145), as seen on a 10 Gb/s link:\n"
    "  1. a three-packet RDMA WRITE (FIRST, MIDDLE, LAST) across the PSN wrap, ECT(0), and its "
    "ACK\n"
    "  2. a WRITE with immediate marked CE by a switch, the receiver's CNP (DSCP 48, Not-ECT,\n"
    "     PCP 6, BECN, PSN 0) and ACK\n"
    "  3. a SEND met with an RNR NAK (timer 1.28 ms), resent after the timer, ACKed\n"
    "  4. a WRITE whose MIDDLE packet is lost: PSN sequence error NAK, Go-Back-N resend, ACK\n"
    "Open it in Wireshark, or read it with 'feroce decode FILE.pcap'.\n"
    "  --ipv6       IPv6 (fd00:0:fe:a::b -> fd00:0:fe:a::1) instead of IPv4\n"
    "  --mtu N      path MTU for segmentation: 256, 512, 1024 (default), 2048, 4096\n"
    "  --vlan VID   802.1Q tag with VLAN VID (carries PCP 3 for data, 6 for the CNP)\n"
    "  --raw-ip     raw IP capture (no Ethernet header)\n"
    "  --random N   instead of the script: N random valid frames of every RC opcode and CNP, with\n"
    "               random fields, ECN, DSCP, TTL, VLAN and payload sizes up to the MTU\n"
    "  --seed S     seed for --random and for the payload bytes (default 1)\n"
    "  --ipv4       with --random: IPv4 only (default: both, at random)\n",
    run};
