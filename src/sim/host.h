/* Hosts: a NIC port running fe_qp requesters and responders, their QP slots, the scheduler's
 * bookkeeping, and the flows they carry. */
#ifndef FE_SIM_HOST_H
#define FE_SIM_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/cc.h"
#include "feroce/qp.h"
#include "feroce/sim.h"
#include "sim/port.h"

/* One QP on a host, with the scheduler's bookkeeping. The first 64 bytes hold what every packet
 * of the QP reads (the fat-tree's 32 k QPs do not stay in cache); the rest is for the receiver's
 * grants. Slot in host->qps: qpn & 0xFFFF. */
struct sim_qp {
    _Alignas(64) struct fe_qp *qp; /* NULL once released */
    struct sim_qp *ready_next;
    struct fe_qp *ready_next_qp;    /* ready_next->qp (NULL once released): ready_pop prefetches
                                     * it without waiting for ready_next's line */
    uint32_t route_dst, route_hash; /* its packets' destination node and ECMP hash */
    uint64_t deadline;              /* as last read from fe_qp_next_deadline */
    uint64_t completed_seen;        /* requester: tx_msgs_completed when last polled */
    uint32_t qpn;                   /* generation << 16 | slot */
    uint32_t flow;                  /* flow index */
    bool requester;                 /* the flow's source side */
    bool in_ready;                  /* in host->ready */
    bool held;                      /* a packet of a paused priority waits in the port queue */
    bool dead;                      /* released; freed when the ready FIFO drops it */
    bool rx_grants;                 /* responder under the host's grant scheduler */
    bool timed;                     /* in host->timers */
    bool all_posted; /* requester: its flow's bytes are all posted (the flow's line stays cold) */
    bool rx_hook;    /* responder: rx_grants or eb_rx, out of line after each packet */
    /* second line */
    struct sim_host *host;
    bool eb_rx; /* responder of an event-building pair: its completions go to the builder */
    /* rx_grants: its message in host->grants (user: this sim_qp) */
    struct fe_homa_msg grant;
};

/* A QPN's low bits are its slot in host->qps (its generation above them). */
#define SLOT_BITS 16
#define MAX_SLOTS ((1u << SLOT_BITS) - 1)

/* An entry of a host's deadline heap: the key kept in the array. */
struct sim_timer {
    uint64_t deadline;
    uint32_t qpn; /* equal deadlines in QPN order; the QP is host->qps[qpn & 0xFFFF] */
};

/* The first 64 bytes are what every event of the host reads. */
struct sim_host {
    _Alignas(64) struct sim_port *port;     /* its NIC port, node->ports[0] */
    struct sim_qp **qps;                    /* by slot; NULL = free slot */
    struct sim_qp *ready_head, *ready_tail; /* QPs with deadline <= now, round robin */
    struct sim_timer *timers;               /* min-heap by (deadline, qpn) */
    uint32_t *tpos;                         /* by slot: position in timers (QP timed) */
    uint64_t wake_at;                       /* earliest pending EV_HOST_WAKE */
    uint32_t n_qps, n_timers;
    uint32_t node_id;
    struct sim_node *node;
    struct fe_sim *sim;
    uint32_t host_index;
    uint8_t *gens; /* QPN generation per slot: stale packets miss */
    uint32_t cap_qps;
    uint32_t *free_slots;
    uint32_t n_free;
    struct fe_homa_grants grants; /* responders of flows whose CC needs grants (rx_grants) */
    uint64_t next_sport;
    /* its sim_qps come from chunks of its own, not a malloc each (a run starts thousands):
     * the freed ones linked by ready_next */
    struct sim_qp *free_qps;
    struct sim_qp **qp_chunks;
    uint32_t n_qp_chunks, qp_chunk_slots;
    /* The fe_qps of the flows that start with a run (sim_flow_batch_make) lie in blocks of its
     * own, each sized for the QPs still due there (qp_mem_due), freed with the host: a malloc
     * each would grow a second thread's malloc arena a page at a time. */
    void **qp_mem_blocks;
    uint32_t n_qp_mem_blocks, qp_mem_due;
    char *qp_mem_next, *qp_mem_end;
};

/* A flow's share of its QPs' counters. */
struct sim_flow_counts {
    uint64_t tx_pkts, retx_pkts, timeouts, cnps_rx, rtt_samples, rtt_sum, rtt_max;
    uint64_t acked_bytes; /* payload of the WRs completed */
    uint64_t rx_pkts;     /* data packets its responder accepted */
    uint64_t rx_bytes, ce_rx;
};

/* The first cache line holds what its requester's packets read (host.c top_up). */
struct sim_flow {
    _Alignas(64) struct fe_sim_flow spec;
    uint64_t posted_bytes; /* payload posted as WRs so far */
    uint64_t done_bytes;   /* payload completed (CQEs) */
    struct sim_qp *req, *resp;
    uint64_t finish_ns;
    uint64_t window_rx0; /* ctr.rx_bytes when the window opened */
    uint64_t window_bytes;
    bool window_open_seen, window_closed;
    struct sim_flow_counts ctr;       /* as last synced (kept after the QPs are destroyed) */
    uint32_t hash_fwd, hash_rev;      /* ECMP hashes of data and of ACKs/CNPs */
    uint64_t mon_start_ns, mon_bytes; /* CNP monitor window (switch.cnp_monitor_bps) */
    uint32_t req_qpn;                 /* the requester's QPN (the CNP monitor's CNPs) */
    uint64_t base_rtt_ns;             /* unloaded RTT of its path */
    uint64_t path_rate_bps;           /* bottleneck rate of its path */
    double standalone_fct_ns;
    bool started, done, failed;
    bool eb; /* an event-building pair (sim/eb.h): its WRs are fragments */
};

int sim_host_init(struct fe_sim *sim, struct sim_host *h);
void sim_host_free(struct sim_host *h);
void sim_host_receive(struct fe_sim *sim, struct sim_host *h, struct sim_pkt *pkt);
void sim_host_wake(struct fe_sim *sim, struct sim_host *h);
/* (sim_host_kick: port.h) */
/* A QP in a free slot of h, with a new QPN (not yet in h->qps: sim_host_install_qp). */
struct sim_qp *sim_host_new_qp(struct sim_host *h, uint32_t flow, bool requester, int *rc);
void sim_host_install_qp(struct sim_host *h, struct sim_qp *sq);
/* Room for one fe_qp of `bytes` (fe_qp_memory_bytes) in h's blocks, 64-byte aligned, for
 * fe_qp_create_sim_alloc (NULL when out of memory). A new block holds qp_mem_due QPs of that size;
 * each call counts one of them done. */
void *sim_host_qp_mem(struct sim_host *h, size_t bytes);
/* Takes the QP out of the host; packets still addressed to it are dropped as stale. */
void sim_host_release_qp(struct sim_host *h, struct sim_qp *sq);
/* Files the QP as ready or under a timer after its deadline may have changed. */
void sim_host_schedule_qp(struct fe_sim *sim, struct sim_host *h, struct sim_qp *sq);
/* The host's wake-up event at its earliest QP deadline. */
void sim_host_arm_wake(struct fe_sim *sim, struct sim_host *h);

struct fe_qp_sim_config;

/* ---- flow.c, path.c, qp_config.c ---- */
int sim_flow_start(struct fe_sim *sim, uint32_t flow);

/* The flows due to start together at now_ns, next in start order (flow_order[first..first+n)),
 * whose QPs are made ahead: their slots and QPNs in start order on one thread (as
 * sim_flow_start takes them), then their fe_qps by each part's thread for the hosts of its part
 * (parallel.c), then sim_flow_start takes them in start order. made[2i], made[2i+1]: flow i's
 * requester and responder. */
struct sim_flow_made {
    struct sim_qp *sq;
    int create_err; /* fe_qp_create's (sq->qp NULL), else fe_qp_reg_mr's */
    const char *create_why;
};
struct sim_flow_batch {
    uint32_t first, n, next; /* next: the first not yet taken by sim_flow_start */
    uint64_t now_ns;
    struct sim_flow_made *made;
};
/* The batch of the flows due at now_ns (NULL when none, or out of memory: they start as
 * usual), their QPs in their hosts' slots. */
struct sim_flow_batch *sim_flow_batch_new(struct fe_sim *sim, uint64_t now_ns);
/* The fe_qps of the batch's QPs whose host is in `part` (part_of: node -> part). */
void sim_flow_batch_make(const struct fe_sim *sim, struct sim_flow_batch *fb,
                         const uint32_t *part_of, uint32_t part);
/* The QPs sim_flow_start did not take released, the batch freed. */
void sim_flow_batch_free(struct sim_flow_batch *fb);
/* Base RTT, bottleneck rate and standalone FCT of a flow's path (at creation). */
int sim_flow_path_info(struct fe_sim *sim, struct sim_flow *f);
/* The responder's sink region, where the requester writes. */
#define SIM_FLOW_VA   0x100000
#define SIM_FLOW_RKEY 0x5151
/* The line rate of the flow's requester (its CC's ceiling). */
uint64_t sim_flow_line_bps(const struct fe_sim *sim, const struct sim_flow *f);
/* The requester's (ca) and the responder's (cb) fe_qp configurations. */
void sim_flow_qp_configs(const struct fe_sim *sim, const struct sim_flow *f, const struct sim_qp *a,
                         const struct sim_qp *b, uint64_t line_bps, struct fe_qp_config *ca,
                         struct fe_qp_config *cb, struct fe_qp_sim_config *sa,
                         struct fe_qp_sim_config *sb);
/* The flow's counters as its live QPs have them now (the synced copies of released ones). */
void sim_flow_counters(const struct sim_flow *f, struct sim_flow_counts *out);
/* Copies them into f->ctr: at a window edge, a phase mark, and before its QPs are released. */
void sim_flow_sync_counters(struct sim_flow *f);

#endif
