/* An endpoint: the glue between queue pairs (the sans-I/O core) and one network backend (a UDP
 * socket or a raw Ethernet interface). It receives batches, decodes them (ICRC checked), hands
 * each packet to the QP its BTH names, pulls what the QPs may send now, frames it and sends it
 * in batches. All protocol logic stays in the QPs; this only moves bytes. */
#ifndef FEROCE_ENDPOINT_H
#define FEROCE_ENDPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/io.h"
#include "feroce/qp.h"
#include "feroce/sidechannel.h"
#include "feroce/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

enum fe_backend { FE_BACKEND_UDP = 0, FE_BACKEND_RAW = 1 };
/* "udp" / "raw"; FE_EINVAL for others. */
int fe_backend_parse(const char *s, enum fe_backend *out);

struct fe_ep_config {
    enum fe_backend backend;
    struct fe_udpsock_config udp; /* UDP: the data socket (RoCEv2 BTH onward as payload) */
    struct fe_raw_config raw;     /* raw: interface, our MAC and IPv4 address */
    bool verify_icrc;             /* true */
    unsigned batch;               /* packets per system call, 1..FE_IO_MAX_BATCH: 32 */
    unsigned max_qps;             /* 64 */
    /* When n_allow > 0, RoCE packets from sources outside these networks are refused before
     * any decoding (counted in rx_refused_allow). */
    struct fe_sc_cidr allow[FE_SC_MAX_ALLOW];
    unsigned n_allow;
};
void fe_ep_config_default(struct fe_ep_config *cfg);
/* "CIDR[,CIDR...]" (fe_sc_cidr_parse each) appended to list[*n], at most FE_SC_MAX_ALLOW in all;
 * FE_EINVAL when one is malformed, FE_ENOSPC when too many. */
int fe_allow_parse(const char *s, struct fe_sc_cidr *list, unsigned *n);

/* UDP: send to wherever this QP's packets come from (a switch in between: its address). The
 * source IP is learned from the first packet the QP executes (right PSN and rkey) and then
 * pinned; the port follows later executed packets. */
#define FE_EP_LEARN_PEER 1u

struct fe_ep_stats {
    uint64_t rx_dgrams;      /* datagrams / frames received */
    uint64_t rx_pkts;        /* RoCE packets handed to a QP */
    uint64_t rx_direct_pkts; /* UDP: of those, received with the payload straight in place */
    uint64_t rx_parse;       /* refused by the decoder (reasons in `parse`) */
    uint64_t rx_bad_icrc;    /* handed to the QP, which drops and counts them */
    uint64_t rx_no_qp;       /* DestQP not on this endpoint */
    uint64_t rx_trunc;
    uint64_t rx_other; /* raw: frames that are not RoCE, ARP or ICMP for us */
    /* Refused before the QP saw them (as rxe's check_addr for RC): from a source IP that is
     * not the QP's peer, or outside the allow-list. */
    uint64_t rx_refused_source, rx_refused_allow;
    uint64_t tx_pkts, tx_bytes;
    uint64_t tx_dropped_hook; /* dropped on purpose by the test hook */
    uint64_t tx_no_route;     /* raw: polls that held a ready QP back, its peer's MAC unknown */
    uint64_t tx_encode_err;
    uint64_t tx_socket_full; /* times a batch had to wait for the socket */
    struct fe_parse_stats parse;
};

/* Test hook: return true to drop this packet instead of sending it (the QP believes it sent). */
typedef bool (*fe_ep_drop_fn)(void *arg, uint32_t local_qpn, const struct fe_pkt *pkt);
/* Raw backend: a UDP datagram for our address on a port other than 4791 (the side channel). */
typedef void (*fe_ep_udp_fn)(void *arg, uint64_t now_ns, uint32_t src_ip, uint16_t src_port,
                             uint16_t dst_port, const uint8_t *payload, size_t len);

struct fe_ep;
/* On failure NULL, *err the fe_err, and the system call that failed in fe_io_last_fail. */
struct fe_ep *fe_ep_create(const struct fe_ep_config *cfg, int *err);
/* The message for a fe_ep_create(cfg) that failed with err, the address and the cause:
 * "cannot open the data socket on 127.0.0.5:4791: address already in use", "cannot open the
 * data interface eth9: no such interface". Into buf (256 bytes hold any); returns buf. */
const char *fe_ep_open_error(const struct fe_ep_config *cfg, int err, char *buf, size_t cap);
void fe_ep_destroy(struct fe_ep *ep);
/* The fd to wait on for readability. */
int fe_ep_fd(const struct fe_ep *ep);
const struct fe_ep_config *fe_ep_config(const struct fe_ep *ep);
/* Our address: UDP bound address / raw configured IPv4 and port 4791. */
void fe_ep_local(const struct fe_ep *ep, uint32_t *ip, uint16_t *port);

/* Attaches a QP (not owned); packets for it go to peer_ip:peer_port (UDP) or to peer_ip on the
 * link (raw, MAC by ARP). FE_ENOSPC when max_qps are attached, FE_EINVAL for a duplicate QPN. */
int fe_ep_add_qp(struct fe_ep *ep, struct fe_qp *qp, uint32_t peer_ip, uint16_t peer_port,
                 unsigned flags);
int fe_ep_remove_qp(struct fe_ep *ep, struct fe_qp *qp);
/* Where packets of this QP currently go. */
int fe_ep_peer(const struct fe_ep *ep, const struct fe_qp *qp, uint32_t *ip, uint16_t *port);

void fe_ep_set_drop_hook(struct fe_ep *ep, fe_ep_drop_fn fn, void *arg);
void fe_ep_set_udp_hook(struct fe_ep *ep, fe_ep_udp_fn fn, void *arg);

/* Receives up to `budget` datagrams and hands them to their QPs. Returns how many were read
 * (0 when none was waiting). */
int fe_ep_poll_rx(struct fe_ep *ep, uint64_t now_ns, int budget);
/* Sends what the QPs may send at now_ns (round-robin over QPs, one packet each in turn), up to
 * `budget` packets. Packets the socket cannot take yet stay queued here. Returns packets sent. */
int fe_ep_poll_tx(struct fe_ep *ep, uint64_t now_ns, int budget);
/* True when received packets wait inside the endpoint (UDP GRO segments kept from the last
 * receive): poll does not see them, so call fe_ep_poll_rx before sleeping. */
bool fe_ep_rx_pending(const struct fe_ep *ep);
/* Earliest time something is due: a QP deadline, or now when packets wait to be sent or
 * received. */
uint64_t fe_ep_next_deadline(const struct fe_ep *ep);
/* Calls fe_qp_handle_expiry on every QP whose deadline has passed. */
void fe_ep_handle_expiry(struct fe_ep *ep, uint64_t now_ns);
/* True when queued packets wait for the socket to drain (wait for writability). */
bool fe_ep_tx_blocked(const struct fe_ep *ep);

/* Raw backend: sends one UDP datagram from our address (side channel). FE_EAGAIN while the
 * destination MAC is being resolved. UDP backend: FE_ENOTSUP (use a socket). */
int fe_ep_send_udp(struct fe_ep *ep, uint64_t now_ns, uint32_t dst_ip, uint16_t src_port,
                   uint16_t dst_port, const uint8_t *payload, size_t len);

const struct fe_ep_stats *fe_ep_stats(const struct fe_ep *ep);
/* The backend's own counters (NULL for the other backend). */
const struct fe_udpsock_stats *fe_ep_udp_stats(const struct fe_ep *ep);
const struct fe_raw_stats *fe_ep_raw_stats(const struct fe_ep *ep);
/* The raw backend's path (fe_raw_kind_name), NULL for UDP. */
const char *fe_ep_raw_kind_name(const struct fe_ep *ep);

#ifdef __cplusplus
}
#endif
#endif
