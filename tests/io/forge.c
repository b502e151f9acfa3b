/* forge: sends forged RoCEv2 RDMA WRITE ONLY packets (BTH onward as UDP payload, as feroce's UDP
 * backend carries them; the ICRC computed by fe_frame_encode) at a receiver's data port, from a
 * UDP socket bound to --from, or (root) through a raw IP_HDRINCL socket with a spoofed source
 * address and port (--spoof). Packet k has PSN psn + k, rkey rkeys[k mod n] (or a random one),
 * VA vas[k mod n]. Prints the number of packets sent. Used by tests/io/forged.sh. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "feroce/io.h"
#include "feroce/psn.h"
#include "feroce/wire.h"

#define MAX_LIST 64

struct forge_opts {
    uint32_t to_ip, from_ip, spoof_ip;
    uint16_t to_port, spoof_port;
    uint32_t qpn, psn, n, len;
    uint32_t rkeys[MAX_LIST];
    unsigned n_rkeys; /* 0: a random rkey per packet */
    uint64_t vas[MAX_LIST];
    unsigned n_vas;
    unsigned gap_us;
};

static int parse_list(const char *s, uint64_t *out, unsigned *n)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n >= MAX_LIST) return -1;
        char *end;
        errno = 0;
        out[(*n)++] = strtoull(t, &end, 0);
        if (errno || *end) return -1;
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: forge --to IP:PORT (--from IP | --spoof IP:PORT) --qpn Q --psn P --n N\n"
            "             [--rkeys K,K.. | random] [--vas V,V..] [--len L] [--gap-us U]\n");
    return 2;
}

static int parse_opts(int argc, char **argv, struct forge_opts *o)
{
    memset(o, 0, sizeof *o);
    o->len = 64;
    o->gap_us = 50;
    o->vas[o->n_vas++] = 0x100000000ull;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        uint64_t tmp[MAX_LIST];
        unsigned nt = 0;
        uint16_t no_port = 0;
        int bad = 0;
        if (!strcmp(k, "--to"))
            bad = fe_io_parse_addr(v, &o->to_ip, &o->to_port);
        else if (!strcmp(k, "--from"))
            bad = fe_io_parse_addr(v, &o->from_ip, &no_port);
        else if (!strcmp(k, "--spoof"))
            bad = fe_io_parse_addr(v, &o->spoof_ip, &o->spoof_port);
        else if (!strcmp(k, "--qpn"))
            o->qpn = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(k, "--psn"))
            o->psn = (uint32_t)strtoul(v, NULL, 0) & FE_PSN_MASK;
        else if (!strcmp(k, "--n"))
            o->n = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(k, "--len"))
            o->len = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(k, "--gap-us"))
            o->gap_us = (unsigned)strtoul(v, NULL, 0);
        else if (!strcmp(k, "--rkeys")) {
            if (strcmp(v, "random")) {
                bad = parse_list(v, tmp, &nt);
                for (unsigned j = 0; j < nt; j++) o->rkeys[j] = (uint32_t)tmp[j];
                o->n_rkeys = nt;
            }
        } else if (!strcmp(k, "--vas")) {
            o->n_vas = 0;
            bad = parse_list(v, o->vas, &o->n_vas);
        } else
            bad = 1;
        if (bad) return usage();
    }
    if (!o->to_ip || !o->to_port || (!o->from_ip && !o->spoof_ip) || !o->n || o->len > 4096 ||
        !o->n_vas)
        return usage();
    return 0;
}

/* Packet k: BTH onward with the ICRC; its length. */
static int build(const struct forge_opts *o, uint32_t k, uint8_t *buf, size_t cap)
{
    static uint8_t payload[4096];
    memset(payload, 0xEE, sizeof payload);
    struct fe_pkt p;
    memset(&p, 0, sizeof p);
    p.bth.opcode = FE_OP_WRITE_ONLY;
    p.bth.pkey = FE_PKEY_DEFAULT;
    p.bth.dqpn = o->qpn;
    p.bth.ackreq = true;
    p.bth.psn = fe_psn_add(o->psn, (int32_t)k);
    p.reth.rkey = o->n_rkeys ? o->rkeys[k % o->n_rkeys] : fe_io_random_u32();
    p.reth.va = o->vas[k % o->n_vas];
    p.reth.dma_len = o->len;
    p.payload = payload;
    p.payload_len = o->len;
    return fe_frame_encode(buf, cap, FE_FRAME_BTH, NULL, 0, &p);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

/* IPv4 + UDP in front of a BTH-onward packet; the kernel fills the IP checksum (IP_HDRINCL). */
static size_t wrap_spoofed(const struct forge_opts *o, const uint8_t *bth, size_t n, uint8_t *out)
{
    memset(out, 0, 28);
    out[0] = 0x45;
    put16(out + 2, (uint16_t)(28 + n));
    out[6] = 0x40; /* DF */
    out[8] = 64;
    out[9] = IPPROTO_UDP;
    put32(out + 12, o->spoof_ip);
    put32(out + 16, o->to_ip);
    put16(out + 20, o->spoof_port);
    put16(out + 22, o->to_port);
    put16(out + 24, (uint16_t)(8 + n)); /* UDP checksum 0: the ICRC protects the packet */
    memcpy(out + 28, bth, n);
    return 28 + n;
}

static int open_socket(const struct forge_opts *o)
{
    int fd;
    if (o->spoof_ip) {
        fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW); /* IP_HDRINCL implied */
        if (fd < 0) perror("forge: raw socket (needs root)");
        return fd;
    }
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(o->from_ip)};
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a)) {
        perror("forge: bind");
        return -1;
    }
    return fd;
}

int main(int argc, char **argv)
{
    struct forge_opts o;
    if (parse_opts(argc, argv, &o)) return 2;
    int fd = open_socket(&o);
    if (fd < 0) return 1;
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(o.to_port), .sin_addr.s_addr = htonl(o.to_ip)};
    uint32_t sent = 0;
    for (uint32_t k = 0; k < o.n; k++) {
        uint8_t pkt[4200], ip[4300];
        int n = build(&o, k, pkt, sizeof pkt);
        if (n <= 0) return 1;
        const uint8_t *b = pkt;
        size_t len = (size_t)n;
        if (o.spoof_ip) {
            len = wrap_spoofed(&o, pkt, len, ip);
            b = ip;
        }
        if (sendto(fd, b, len, 0, (struct sockaddr *)&to, sizeof to) == (ssize_t)len) sent++;
        /* paced: the receiver's socket must not overflow, or the counts would not add up */
        struct timespec ts = {0, (long)o.gap_us * 1000};
        nanosleep(&ts, NULL);
    }
    close(fd);
    printf("%u\n", sent);
    return sent == o.n ? 0 : 1;
}
