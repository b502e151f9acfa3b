/* An emulated switch on real sockets (`feroce switch`, the demo): a bottleneck egress with a
 * rate, a byte-limited FIFO queue, RED/ECN marking (feroce/red.h, as DCQCN switches do), loss,
 * reordering, duplication, corruption and delay injection, and the firmware paper's threshold
 * mode (forge a CNP to the senders when the throughput over a window exceeds a threshold).
 * Per-port statistics.
 *
 * Two forms:
 *  - UDP (loopback, namespaces): N access ports, each a UDP socket hosts send their RoCEv2
 *    datagrams to. Everything arriving on access ports goes through the one bottleneck queue to
 *    `to` (the receiver), sent from a per-access-port back socket so that the receiver's ACKs,
 *    NAKs and CNPs come back to the right access port and leave through it, unqueued. The TOS
 *    byte travels with each datagram: CE marks reach the receiver.
 *  - raw Ethernet: an L2 learning switch between N interfaces (AF_PACKET, promiscuous); every
 *    egress port has its own queue; the rate, marking and impairments apply to the bottleneck
 *    port. CE marking rewrites the IPv4 ECN bits and checksum (the ICRC does not cover them).
 * Sans-clock like the rest: step(now), next_deadline(). */
#ifndef FEROCE_ESWITCH_H
#define FEROCE_ESWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/endpoint.h"
#include "feroce/red.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_ESW_MAX_PORTS 16

struct fe_eswitch_config {
    enum fe_backend backend;
    /* UDP form */
    unsigned n_ports;
    uint32_t port_ip[FE_ESW_MAX_PORTS]; /* access ports */
    uint16_t port_port[FE_ESW_MAX_PORTS];
    uint32_t to_ip; /* where the bottleneck leads (the receiver's data address) */
    uint16_t to_port;
    /* raw form */
    unsigned n_ifs;
    char ifname[FE_ESW_MAX_PORTS][32];
    int bottleneck_if; /* index into ifname: the shaped port (-1: all ports shaped alike) */
    /* the bottleneck egress */
    uint64_t rate_bps;    /* 0 = not shaped */
    uint64_t queue_bytes; /* tail-drop limit: 1 MiB */
    bool ecn;             /* RED/ECN marking with `red` */
    struct fe_red red;
    uint32_t loss_ppm;    /* random drops (forward direction) */
    uint32_t reorder_ppm; /* a packet is held back and sent after the next one */
    uint32_t dup_ppm;     /* a packet leaves twice */
    uint32_t corrupt_ppm; /* one byte of a RoCEv2 packet past its BTH is flipped: what the ICRC
                           * covers and a receiver must catch (the BTH is left alone so that the
                           * packet still reaches its QP, where it is counted) */
    uint64_t delay_ns;    /* added one-way latency */
    uint64_t seed;
    /* threshold mode (the firmware paper's emulated switch): per sender, when the bytes over a
     * window exceed thresh_bps x window, forge a CNP to that sender's QPs */
    uint64_t thresh_bps;
    uint64_t window_ns;
};
void fe_eswitch_config_default(struct fe_eswitch_config *cfg);

struct fe_esw_port_stats {
    uint64_t rx_pkts, rx_bytes;
    uint64_t tx_pkts, tx_bytes;
    uint64_t drops_full; /* tail drops: queue over its byte limit */
    uint64_t drops_loss; /* injected losses */
    uint64_t marked;     /* CE marks set */
    uint64_t reordered;
    uint64_t duplicated;  /* extra copies sent */
    uint64_t corrupted;   /* packets sent with a flipped byte (a copy of one counts too) */
    uint64_t cnps_forged; /* threshold mode */
    uint64_t qlen_bytes, qlen_max_bytes;
    uint64_t qlen_avg_bytes; /* time average since the first packet */
};

struct fe_eswitch;
struct fe_eswitch *fe_eswitch_create(const struct fe_eswitch_config *cfg, uint64_t now_ns, int *err,
                                     char *errbuf, size_t errcap);
void fe_eswitch_destroy(struct fe_eswitch *s);
/* fds to wait on; tags are their indices. */
int fe_eswitch_fds(const struct fe_eswitch *s, int *fds, int max);
void fe_eswitch_step(struct fe_eswitch *s, uint64_t now_ns, unsigned ready);
uint64_t fe_eswitch_next_deadline(const struct fe_eswitch *s);
/* UDP form: port i is access port i, and port n_ports is the bottleneck (towards `to`).
 * Raw form: port i is interface i. */
unsigned fe_eswitch_n_ports(const struct fe_eswitch *s);
const struct fe_esw_port_stats *fe_eswitch_port_stats(const struct fe_eswitch *s, unsigned i);
/* The address an access port listens on (UDP form). */
void fe_eswitch_port_addr(const struct fe_eswitch *s, unsigned i, uint32_t *ip, uint16_t *port);

#ifdef __cplusplus
}
#endif
#endif
