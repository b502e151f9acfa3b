/* libibverbs helpers for the tools that run on real RDMA NICs (ConnectX, Soft-RoCE): device
 * and RoCEv2 GID selection, RC QP state transitions, NUMA/CPU placement. Built only when
 * libibverbs-dev is present (FE_HAVE_VERBS) and linked into the `feroce` executable only, so
 * the library itself never depends on libibverbs. */
#ifndef FE_IO_VERBS_H
#define FE_IO_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct fe_verbs_dev {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    char name[IBV_SYSFS_NAME_MAX];
    uint8_t port;
    int gid_index;
    union ibv_gid gid;
    uint32_t ip4; /* IPv4 of the GID (host order), 0 when not IPv4-mapped */
    uint32_t active_mtu_bytes;
    int numa_node; /* -1 when unknown (virtual devices such as rxe) */
};

/* Opens device `name` (NULL: the first one), queries port `port`, picks GID `gid_index`, or
 * with gid_index < 0 the RoCEv2 GID of an IPv4 address (of `want_ip4` when not 0), and
 * allocates a PD. On failure returns a negative fe_err and writes a reason into err. */
int fe_verbs_open(struct fe_verbs_dev *d, const char *name, uint8_t port, int gid_index,
                  uint32_t want_ip4, char *err, size_t errcap);
void fe_verbs_close(struct fe_verbs_dev *d);

/* enum ibv_mtu of 256..4096 bytes, 0 for anything else. */
enum ibv_mtu fe_verbs_mtu_enum(uint32_t bytes);
uint32_t fe_verbs_mtu_bytes(enum ibv_mtu mtu);
const char *fe_verbs_qp_state_name(enum ibv_qp_state s);

/* RESET -> INIT with the given remote access flags; FE_EIO with errno set when refused. */
int fe_verbs_qp_init(struct ibv_qp *qp, const struct fe_verbs_dev *d, unsigned access);

struct fe_verbs_peer {
    uint32_t qpn;    /* the peer's QPN */
    uint32_t ip4;    /* peer IPv4 (host order): its GID is the IPv4-mapped address */
    uint32_t rq_psn; /* first PSN we expect from the peer */
    uint32_t sq_psn; /* first PSN we send */
    uint32_t mtu_bytes;
    uint8_t min_rnr_timer; /* IB RNR timer code we answer with (responder) */
    uint8_t timeout;       /* IB local ACK timeout code (requester); 14 = 67 ms */
    uint8_t retry_cnt, rnr_retry;
    uint8_t traffic_class; /* DSCP << 2 | ECN of what we send */
};

/* INIT -> RTR -> RTS towards `peer`. */
int fe_verbs_qp_connect(struct ibv_qp *qp, const struct fe_verbs_dev *d,
                        const struct fe_verbs_peer *peer, char *err, size_t errcap);

enum ibv_qp_state fe_verbs_qp_state(struct ibv_qp *qp);

/* Pins the calling thread: to CPU `cpu` when >= 0, else to the CPUs of NUMA node `node` when
 * >= 0; does nothing with both < 0. Returns 0 or a negative fe_err; *desc says what was done. */
int fe_verbs_pin(int cpu, int node, char *desc, size_t desccap);

#endif
