/* Internal structures of the simulator, shared by its files (one per role):
 * engine.c (event queue), pool.c (packet descriptors), link.c (serialization, propagation, loss),
 * buffer.h (shared-buffer admission), pfc.c (pause generation and reaction), ecn.c (RED marking,
 * INT), switch.c (forwarding, queues), host.c (NIC running fe_qp), topology.c (build, routes),
 * sim.c (public API, the run loop). */
#ifndef FE_SIM_INTERNAL_H
#define FE_SIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/cc.h"
#include "feroce/qp.h"
#include "feroce/red.h"
#include "feroce/sim.h"
#include "sim/engine.h"

/* Event kinds: the low 4 bits of an event word, the rest an object pointer aligned to 16. */
enum ev_kind {
    EV_ARRIVE = 1,  /* struct sim_port of a switch: the first frame on the wire toward it arrives */
    EV_TX_DONE,     /* struct sim_port: transmitter free, send the next frame */
    EV_PAUSE_END,   /* struct sim_port: a pause (QUANTA mode) may have expired */
    EV_PFC_REFRESH, /* struct sim_port: re-send PAUSE for priorities still congested */
    EV_HOST_WAKE,   /* struct sim_host: a QP deadline */
    EV_FLOW_START,  /* struct fe_sim: start the next flows */
    EV_WINDOW,      /* struct fe_sim: the contention window opens */
    EV_ARRIVE_HOST, /* EV_ARRIVE at a host's port: its own kind, so that the dispatch's one
                     * indirect jump decides it (sim_arrive_event) */
};
#define EV_KIND_MASK 0xFull

/* Events the run loop of a large fabric holds ahead of their turn (sim.c next_lookahead) */
#define SIM_LOOKAHEAD 8

/* A phase's checkpoints (struct fe_sim ckpt_*): at most this many, the first SIM_CKPT_DT0_NS
 * apart; the middle is then found to within 1/32 of the phase. */
#define SIM_CKPTS       64
#define SIM_CKPT_DT0_NS 10000

/* Why the run loop stops early (struct fe_sim's halt) */
#define SIM_HALT_ERROR    1u /* out of memory: the run fails */
#define SIM_HALT_ALL_DONE 2u /* every flow completed */
#define SIM_HALT_CKPT     4u /* a phase began: fe_sim_run plans its checkpoints */

enum pkt_kind { PKT_ROCE = 0, PKT_PFC = 1, PKT_TEST = 2 };

#define PFC_FRAME_BYTES 64 /* MAC control frame, FCS included */
#define IFG_BYTES       20 /* preamble + SFD + inter-frame gap */

struct sim_port;

/* Two cache lines. The fe_pkt comes first: its headers up to the payload pointer fill the first
 * line, which only the hosts read; the second holds the rest of it (payload length, ECN, INT) and
 * the simulator's own fields, everything a switch reads. Fields that are never live together
 * share storage: the wire key (on a wire) and the owner (in a host's port queue), and the
 * per-kind fields. A frame's INT records, when INT is on, are stored right after it
 * (sim_pkt_int). */
struct sim_pkt {
    _Alignas(64) struct fe_pkt pkt;
    struct sim_pkt *next; /* queue link / on the wire / free list */
    union {
        uint64_t wire_key;    /* on the wire, behind another frame: its event key */
        struct sim_qp *owner; /* in a host's port queue: the QP whose packet waits out a pause */
    };
    /* RoCE and test frames: routed by destination at every switch (sim_route) */
    uint32_t dst;            /* destination node */
    uint32_t hash;           /* ECMP hash */
    union {                  /* by kind */
        uint32_t flow;       /* PKT_ROCE: flow index */
        uint64_t tag;        /* PKT_TEST: the caller's value */
        struct {             /* PKT_PFC */
            uint16_t quanta; /* 0 = resume */
            uint8_t prio;
        } pfc;
    };
    uint32_t frame_bytes; /* frame on the wire, FCS included (buffer accounting) */
    uint16_t in_port;     /* queued at a switch: its ingress port there, or SIM_NO_INGRESS */
    uint8_t prio;         /* traffic class / PFC priority */
    uint8_t kind;         /* enum pkt_kind */
};
_Static_assert(sizeof(struct sim_pkt) == 128, "a frame is two cache lines");

/* in_port of a frame made by a switch (CNP monitor): not in that switch's buffer */
#define SIM_NO_INGRESS UINT16_MAX

/* A frame's ECN codepoint is ECT: the switches may mark it. */
static inline bool sim_pkt_ect(const struct sim_pkt *pkt)
{
    return pkt->pkt.ecn == FE_ECN_ECT0 || pkt->pkt.ecn == FE_ECN_ECT1;
}

/* Output queue of one priority. */
struct sim_queue {
    struct sim_pkt *head, *tail;
    uint64_t bytes;
};

/* Ingress accounting of one (port, priority) at a switch. */
struct sim_ingress {
    uint64_t reserve_used, shared_used, hdrm_used;
    bool xoff; /* we told the peer to pause this priority */
};

/* One priority of a port, in one cache line: its output queue, and the accounting of the frames
 * that arrive on the port (a port sends one way what it receives the other: data out, their
 * ACKs in). */
struct sim_tc {
    _Alignas(64) struct sim_queue q;
    struct sim_ingress in;
};
_Static_assert(sizeof(struct sim_tc) == 64, "a priority is one cache line");

struct sim_node;

/* Hot fields first, by cache line: what every frame through the port touches (the transmitter,
 * the owner, the flags), then the counters, the queues' totals and the frames on the wire toward
 * it, then one line per priority (sim_tc); the control queue, the marking parameters, the pause
 * state and statistics after them. */
struct sim_port {
    /* line 1: the transmitter and the owner */
    _Alignas(64) struct sim_port *peer;
    struct sim_switch *sw; /* the switch of this port, NULL at a host */
    struct sim_host *host; /* the host of this port, NULL at a switch */
    uint64_t busy_until;   /* end of the frame being serialized */
    union {
        struct {
            uint64_t ser_fp_per_byte; /* serialization time of a byte in 2^-24 ns */
            uint64_t ser_frac;        /* fraction of a ns carried to the next frame (2^-24 ns) */
        };
        /* ns-3 timing (SIM_LINK_NS3, link.c): the last frame size and its time, as a port
         * sends few sizes */
        struct {
            uint64_t ns3_ser_bytes;
            uint64_t ns3_ser_ns;
        };
    };
    uint64_t delay_ns;
    uint16_t index;
    bool txdone_pending;
    bool pause_ev_pending;
    bool ctrl_pending; /* ctrl has frames */
    uint8_t nonempty;  /* bit p: queue p has frames */
    uint8_t paused;    /* bit p: our transmitter must not send priority p */
    uint8_t link_mode; /* enum sim_link_mode (sim_link_set_mode) */
    /* line 2: sending, and the frames on the wire toward this port, in arrival order (link.c) */
    uint64_t mark_above_bytes; /* egress marking (RED) above this queue length: red.kmin_bytes,
                                * or UINT64_MAX when the port does not mark (ecn.c) */
    /* (counters apart: the compiler would pair adjacent ones in vector adds) */
    uint64_t tx_pkts;
    uint64_t loss32; /* loss probability in 2^-32 units (0 = none) */
    uint64_t tx_bytes;
    uint64_t queue_bytes;
    struct sim_pkt *wire_head, *wire_tail;
    uint64_t max_queue_bytes;
    /* lines 3-10 */
    struct sim_tc tc[FE_SIM_PRIOS];
    struct sim_queue ctrl; /* PFC frames: strict priority over everything */
    struct fe_red red;     /* egress marking on this port (when mark_above_bytes is set) */
    bool refresh_pending;
    uint64_t headroom_bytes;
    uint64_t paused_until[FE_SIM_PRIOS]; /* QUANTA mode */
    uint64_t paused_since;               /* start of the current pause (any priority) */
    struct sim_node *node;
    uint64_t rate_bps;
    /* ns-3 timing, sim->ns3_lazy_txdone (switch.c): the key of the transmit-complete event of
     * the frame on the wire, taken when it started and not pushed (yet) */
    bool txdone_reserved;
    uint64_t txdone_key;
    /* stats */
    uint64_t pause_tx, resume_tx, pause_rx, paused_ns, ecn_marks, drops;
};

struct sim_switch;
struct sim_host;

struct sim_node {
    uint32_t id;
    bool is_switch;
    uint32_t n_ports;
    struct sim_port *ports;
    struct sim_switch *sw;
    struct sim_host *host;
};

/* The way from a switch to one destination node: its next hop when there is one choice (or the
 * scenario has no ECMP), else the `n` equal-cost ports at nh[off ..] to pick from by hash; port
 * NULL when there is no way (a switch, an unreachable host). */
struct sim_route {
    struct sim_port *port;
    uint32_t off, n;
};

/* The first cache line holds what every frame through the switch reads (buffer.h). */
struct sim_switch {
    _Alignas(64) struct sim_port *ports; /* node->ports */
    uint64_t used_bytes, shared_used;
    uint64_t shared_bytes; /* the part of the buffer above reserves and headroom */
    uint64_t max_used;
    struct sim_route *route; /* by destination node (sim_route) */
    uint16_t *nh;            /* next-hop port indices of the ECMP groups */
    uint32_t salt;           /* ECMP hash seed */
    /* line 2 */
    uint64_t buffer_bytes;
    struct sim_node *node;
    /* A frame of priority p may pass through (buffer.h) while shared_used < pass_below[p]:
     * UINT64_MAX for a lossy priority, for a lossless one the shared use from which the dynamic
     * threshold is 0 (an ingress that admits anything would pause its peer). */
    uint64_t pass_below[FE_SIM_PRIOS];
};

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
    /* second line */
    struct sim_host *host;
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
    uint64_t base_rtt_ns;             /* unloaded RTT of its path */
    uint64_t path_rate_bps;           /* bottleneck rate of its path */
    double standalone_fct_ns;
    bool started, done, failed;
};

/* The frame-size table entry of an opcode (fe_pkt_wire_len + wire_extra): the fixed bytes (at
 * most 110: headers, ICRC, CNP pad, Ethernet/IP/UDP/FCS), and whether the payload, padded to 4,
 * adds to them. */
struct sim_op_frame {
    uint8_t fixed_bytes;
    bool payload;
};

/* What every event and frame reads comes first, in two cache lines (copies of the scenario's
 * settings among them), then the frame-size table, the counters and the event queue. */
struct fe_sim {
    /* line 1 */
    _Alignas(64) uint64_t now;
    struct sim_pkt *free_pkts; /* packet pool */
    uint64_t pkts_in_use;
    struct sim_flow *flows;
    uint64_t reserve_bytes;   /* sc.sw.reserve_bytes (buffer.h) */
    uint64_t dt_alpha_q16;    /* dynamic-threshold alpha in 2^-16 */
    uint64_t min_frame_bytes; /* sc.host.min_frame_bytes */
    uint32_t ifg;             /* preamble + IFG counted on links */
    bool ns3_frames;          /* host.frames == FE_SIM_FRAMES_HPCC_NS3 */
    bool ns3_lazy_txdone;     /* and the queue has keys and no lookahead (switch.c) */
    bool wire_heads_only;     /* only the first frame on a wire has an event (heap queue) */
    bool int_enable;
    uint8_t lossless_prios; /* bit p: priority p is lossless (sc.sw.pfc and its lossless_mask) */
    /* line 2 */
    uint64_t cnp_monitor_bps; /* sc.sw.cnp_monitor_bps */
    uint64_t rng[4];
    uint32_t n_flows;
    uint32_t flows_done;
    uint8_t halt;              /* SIM_HALT_*: the run loop's one test after each event */
    uint8_t data_pcp, ack_pcp; /* sc.host's */
    /* the frame-size table (sim_frame_bytes): data opcodes and ACKs share its first line */
    _Alignas(64) struct sim_op_frame op_frame[256];
    /* stats counted as they happen (CNPs, drops, stalls ...); fe_sim_stats derives the rest
     * (events, frames sent, ECN marks, data packets delivered: those fields stay 0 here) from
     * the per-kind, per-port and per-flow counters */
    _Alignas(64) struct fe_sim_stats st;
    _Alignas(64) uint64_t ev_kind_count[16]; /* events by kind (benchmarks) */
    struct fe_evq q;
    /* the run loop's lookahead (large fabrics, sim.c): events of the current nanosecond taken
     * out of the queue ahead of their turn, la_n of them from la[la_head] on (a ring) */
    bool lookahead;
    uint32_t la_head, la_n;
    uint64_t la[SIM_LOOKAHEAD];
    struct fe_sim_scenario sc; /* own copy */
    uint64_t stop_ns;
    uint32_t n_nodes;
    struct sim_node *nodes;
    struct sim_port *ports; /* all ports, nodes point into it */
    uint32_t n_ports_total;
    struct sim_switch *sws;
    struct sim_host *hosts;
    uint32_t n_hosts;
    uint32_t *flow_order; /* flows by start time */
    uint32_t next_flow;   /* next in flow_order to start */
    uint32_t flows_started, flows_active;
    uint64_t window_start, window_end;
    bool window_auto_end, window_opened, window_closed;
    /* phases: rx_bytes of every flow at each change of the active set (<= 64 flows) */
    uint32_t n_phase_pts, cap_phase_pts;
    uint64_t *phase_t;
    uint64_t *phase_rx;    /* n_phase_pts x n_flows */
    uint8_t *phase_active; /* n_phase_pts x n_flows: active from that point on */
    /* and near each phase's middle, for its second half (rates settled after a change): the
     * open phase's checkpoints, rx_bytes of every flow every ckpt_dt_ns from its start
     * (fe_sim_run stops at each: where a run is cut changes nothing), at most SIM_CKPTS, then
     * every other is dropped and the spacing doubles; when the phase ends, the one nearest its
     * middle is kept */
    uint64_t ckpt_next, ckpt_dt_ns; /* ckpt_next FE_SIM_NO_TIME: none due */
    uint32_t n_ckpt;
    uint64_t *ckpt_t, *ckpt_rx;           /* SIM_CKPTS, SIM_CKPTS x n_flows */
    uint64_t *phase_mid_t, *phase_mid_rx; /* per boundary: the middle of the phase it starts */
    /* packet pool */
    struct sim_pkt **chunks;
    uint32_t n_chunks, cap_chunks;
    uint64_t pool_pkts;
    /* settings derived from the scenario */
    uint32_t wire_extra;                   /* bytes around BTH-onward: Ethernet + IP + UDP + FCS */
    uint32_t ns3_int_bytes;                /* ns3_frames: INT header on data and ACKs */
    uint32_t pfc_frame_bytes;              /* PAUSE/RESUME frame */
    uint32_t max_frame_bytes;              /* largest data frame (reserve, headroom) */
    uint64_t window_bdp_bytes;             /* host.window_bdp: replay bytes per QP */
    bool cc_acks_every_pkt[FE_SIM_MAX_CC]; /* the algorithm's model ACKs every data packet */
    fe_sim_pfc_cb pfc_cb;
    void *pfc_user;
    /* test hook: PKT_TEST frames reaching a host */
    void (*test_rx)(void *user, uint32_t node, const struct sim_pkt *pkt, uint64_t now_ns);
    void *test_user;
    bool finished;
    int create_err; /* last fe_qp_create failure */
    const char *create_why;
};

/* printf into err (when not NULL) */
void sim_errf(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- rng (xoshiro256**) ---- */
void sim_rng_seed(struct fe_sim *sim, uint64_t seed);
static inline uint64_t sim_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}
static inline uint64_t sim_rng_next(struct fe_sim *sim)
{
    uint64_t *s = sim->rng;
    uint64_t r = sim_rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = sim_rng_rotl(s[3], 45);
    return r;
}
static inline uint32_t sim_rng32(struct fe_sim *sim)
{
    return (uint32_t)(sim_rng_next(sim) >> 32);
}

/* ---- events ---- */
/* Sticky internal error (out of memory): the run stops and reports it. */
static inline void sim_fail(struct fe_sim *sim)
{
    sim->halt |= SIM_HALT_ERROR;
}
static inline bool sim_failed(const struct fe_sim *sim)
{
    return sim->halt & SIM_HALT_ERROR;
}

static inline void sim_schedule(struct fe_sim *sim, uint64_t t, void *obj, enum ev_kind kind)
{
    if (fe_evq_push(&sim->q, t, (uint64_t)(uintptr_t)obj | (uint64_t)kind)) sim_fail(sim);
}

/* The event word of a frame's arrival at port `to`. */
static inline uint64_t sim_arrive_event(const struct sim_port *to)
{
    return (uint64_t)(uintptr_t)to | (to->sw ? EV_ARRIVE : EV_ARRIVE_HOST);
}

/* The arrival event `ev` (EV_ARRIVE or EV_ARRIVE_HOST) of port `to`: takes the first frame off
 * its wire and schedules the next one's, with the same event word. Inline in both arms of the
 * dispatch. */
static inline __attribute__((always_inline)) struct sim_pkt *
sim_link_arrive(struct fe_sim *sim, struct sim_port *to, uint64_t ev)
{
    struct sim_pkt *pkt = to->wire_head;
    to->wire_head = pkt->next;
    if (!to->wire_head) {
        to->wire_tail = NULL;
    } else {
        /* the next frame's arrival reads its second line: ask for it now (in a large fabric it
         * has left the caches while on the wire) */
        __builtin_prefetch(&to->wire_head->next);
        if (sim->wire_heads_only && fe_evq_push_key(&sim->q, to->wire_head->wire_key, ev))
            sim_fail(sim);
    }
    pkt->next = NULL;
    return pkt;
}

/* ---- pool.c ---- */
/* The INT records stored after the frame (pool.c), NULL when INT is off. */
static inline struct fe_int *sim_pkt_int(const struct fe_sim *sim, const struct sim_pkt *p)
{
    return sim->int_enable ? (struct fe_int *)(uintptr_t)(p + 1) : NULL;
}
/* Adds a chunk of packets to the free list: 0, or -1 when out of memory. */
int sim_pool_grow(struct fe_sim *sim);
/* A packet from the free list (inline: once the pool has grown to the peak in flight, this is
 * all a packet costs); NULL and the run failed (sim_fail) when out of memory. */
static inline struct sim_pkt *sim_pkt_alloc(struct fe_sim *sim)
{
    if (!sim->free_pkts && sim_pool_grow(sim)) {
        sim_fail(sim);
        return NULL;
    }
    struct sim_pkt *p = sim->free_pkts;
    sim->free_pkts = p->next;
    sim->pkts_in_use++;
    /* Only the fields every user relies on are cleared; the full fe_pkt and the fields of its
     * kind are written by whoever fills the packet. */
    p->next = NULL;
    if (sim->int_enable) sim_pkt_int(sim, p)->nhops = 0;
    p->pkt.int_md = NULL;
    return p;
}
static inline void sim_pkt_free(struct fe_sim *sim, struct sim_pkt *p)
{
    p->next = sim->free_pkts;
    sim->free_pkts = p;
    sim->pkts_in_use--;
}
void sim_pool_destroy(struct fe_sim *sim);

/* ---- link.c ---- */
/* Bytes a frame occupies on the wire: the frame, preamble and inter-frame gap. */
static inline uint32_t sim_wire_bytes(const struct fe_sim *sim, const struct sim_pkt *pkt)
{
    return pkt->frame_bytes + sim->ifg;
}
/* Nanoseconds to serialize `bytes` on port p (exact on average: the remainder is carried). */
static inline uint64_t sim_link_ser_ns(struct sim_port *p, uint32_t wire_bytes)
{
    /* Fixed point (2^-24 ns per byte) with the fraction carried to the next frame, so that
     * back-to-back frames run at the link rate whatever the rounding of one frame (relative
     * error < 1e-6 at 400 Gb/s), without a division per frame. */
    uint64_t fp = (uint64_t)wire_bytes * p->ser_fp_per_byte + p->ser_frac;
    p->ser_frac = fp & ((1u << 24) - 1);
    return fp >> 24;
}
/* a frame as HPCC's ns-3 times it (--ns3-compat): its Time, cut to whole nanoseconds */
uint64_t sim_link_ns3_ser_ns(uint64_t rate_bps, uint32_t wire_bytes);
/* sim_link_ns3_ser_ns on a port of ns-3 timing, for a size other than its last (link.c) */
uint64_t sim_link_ns3_ser_new(struct sim_port *p, uint32_t wire_bytes);
/* sim_link_ns3_ser_ns on a port of ns-3 timing: its floating point and 128-bit steps were 5 % of
 * an ns-3 run's instructions, and a port sends few frame sizes (data one way, or ACKs), so the
 * last size's time is kept */
static inline uint64_t sim_link_ns3_ser_port(struct sim_port *p, uint32_t wire_bytes)
{
    return wire_bytes == p->ns3_ser_bytes ? p->ns3_ser_ns : sim_link_ns3_ser_new(p, wire_bytes);
}
/* The transmitter of p starts sending pkt, for ser nanoseconds (the frames sent are the ports'
 * tx_pkts, summed by fe_sim_stats). */
static inline void sim_link_start(struct fe_sim *sim, struct sim_port *p, const struct sim_pkt *pkt,
                                  uint64_t ser)
{
    p->busy_until = sim->now + ser;
    p->tx_pkts++;
    p->tx_bytes += pkt->frame_bytes;
}
/* pkt enters the wire toward `to` behind the frames on it, to arrive at the time of key (from
 * fe_evq_key): the first frame's arrival is an event, the others wait for theirs (heap,
 * calendar). */
static inline __attribute__((always_inline)) void
sim_link_wire_put(struct fe_sim *sim, struct sim_port *to, struct sim_pkt *pkt, uint64_t key)
{
    pkt->next = NULL;
    if (to->wire_tail) {
        pkt->wire_key = key;
        to->wire_tail->next = pkt;
        to->wire_tail = pkt;
    } else {
        to->wire_head = to->wire_tail = pkt;
        if (fe_evq_push_key(&sim->q, key, sim_arrive_event(to))) sim_fail(sim);
    }
}
/* How a port's frames are sent (sim_link_set_mode). */
enum sim_link_mode {
    SIM_LINK_FAST,    /* inline, serialization in fixed point */
    SIM_LINK_NS3,     /* inline, serialization as HPCC's ns-3 times it (--ns3-compat) */
    SIM_LINK_GENERAL, /* sim_link_send_general: a lossy link, the wheel (an event per frame) */
};
/* sim_link_send in every case. */
void sim_link_send_general(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt);
/* Starts sending pkt on port p now: the port is busy for its serialization, and the frame
 * arrives at the peer one propagation delay after its last bit (unless the link loses it).
 * Inline: every frame passes here at every hop, and a call costs as much as the work (the event
 * queue's slow paths make it save and restore registers). */
static inline __attribute__((always_inline)) void
sim_link_send(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    uint64_t ser;
    if (p->link_mode != SIM_LINK_FAST) {
        if (p->link_mode == SIM_LINK_GENERAL) {
            sim_link_send_general(sim, p, pkt);
            return;
        }
        ser = sim_link_ns3_ser_port(p, sim_wire_bytes(sim, pkt));
    } else {
        ser = sim_link_ser_ns(p, sim_wire_bytes(sim, pkt));
    }
    sim_link_start(sim, p, pkt, ser);
    uint64_t key;
    if (fe_evq_key(&sim->q, p->busy_until + p->delay_ns, &key)) sim_fail(sim);
    sim_link_wire_put(sim, p->peer, pkt, key);
}
/* fe_evq_keys_fn: the keys of the frames on the wires. */
void sim_link_wire_keys(void *sim, struct fe_evq *q);
/* Sets every port's link_mode (after the topology is built, and when the queue changes). */
void sim_link_set_mode(struct fe_sim *sim);
/* Sets ns3_lazy_txdone (switch.c) after the queue or the lookahead changed. */
void sim_set_lazy_txdone(struct fe_sim *sim);
/* Bytes of the frame that carries fp, as the scenario's frame model sizes it (host.frames). */
static inline uint32_t sim_frame_bytes(const struct fe_sim *sim, const struct fe_pkt *fp)
{
    uint64_t fb;
    if (sim->ns3_frames) {
        /* HPCC ns-3: data = its PPP header (14 bytes there, Ethernet-sized) + IPv4 + UDP +
         * SeqTs (48) + INT + payload; ACK/NAK = PPP + IPv4 + qbbHeader (12) + INT, padded to
         * 60 bytes */
        if (fp->payload_len && fp->bth.opcode != FE_OP_CNP)
            fb = (uint64_t)fp->payload_len + 48 + sim->ns3_int_bytes;
        else
            fb = (12 + sim->ns3_int_bytes < 26 ? 26 : 12 + sim->ns3_int_bytes) + 34;
        return (uint32_t)fb; /* no minimum frame in their model */
    }
    uint8_t op = fp->bth.opcode;
    fb = sim->op_frame[op].fixed_bytes +
         (sim->op_frame[op].payload ? ((uint64_t)fp->payload_len + 3) & ~(uint64_t)3 : 0);
    if (fb < sim->min_frame_bytes) fb = sim->min_frame_bytes;
    return (uint32_t)fb;
}

/* ---- port transmit side (switch.c) ---- */
static inline void sim_port_enqueue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    struct sim_queue *q = &p->tc[pkt->prio].q;
    pkt->next = NULL;
    if (q->tail)
        q->tail->next = pkt;
    else
        q->head = pkt;
    q->tail = pkt;
    q->bytes += pkt->frame_bytes;
    p->nonempty |= (uint8_t)(1u << pkt->prio);
    p->queue_bytes += pkt->frame_bytes;
    if (p->queue_bytes > p->max_queue_bytes) p->max_queue_bytes = p->queue_bytes;
    (void)sim;
}
/* The priority a port serves first among those in mask (not 0): the highest PCP. */
static inline uint8_t sim_top_prio(uint8_t mask)
{
    return (uint8_t)(31 - __builtin_clz((unsigned)mask));
}
static inline struct sim_pkt *sim_port_dequeue(struct sim_port *p, uint8_t prio)
{
    struct sim_queue *q = &p->tc[prio].q;
    struct sim_pkt *pkt = q->head;
    q->head = pkt->next;
    if (!q->head) {
        q->tail = NULL;
        p->nonempty &= (uint8_t) ~(1u << prio);
    } else {
        /* the next dequeue reads the new head's second line: in a deep queue it is cold */
        __builtin_prefetch(&q->head->next);
    }
    q->bytes -= pkt->frame_bytes;
    p->queue_bytes -= pkt->frame_bytes;
    pkt->next = NULL;
    return pkt;
}
/* Sends the next eligible frame if the transmitter is free. */
void sim_port_kick(struct fe_sim *sim, struct sim_port *p);
void sim_port_tx_done(struct fe_sim *sim, struct sim_port *p);
void sim_switch_receive(struct fe_sim *sim, struct sim_port *in, struct sim_pkt *pkt);

/* ---- buffer.h: shared-buffer admission (inline) ---- */

/* ---- pfc.c ---- */
uint64_t sim_pfc_headroom(const struct fe_sim *sim, const struct sim_port *p);
/* Send PAUSE (and arm its refresh) / RESUME for ingress (in, prio); buffer.h decides when. */
void sim_pfc_xoff(struct fe_sim *sim, struct sim_port *in, uint8_t prio);
void sim_pfc_xon(struct fe_sim *sim, struct sim_port *in, uint8_t prio);
/* A PFC frame reached port p: pause or resume its transmitter. */
void sim_pfc_receive(struct fe_sim *sim, struct sim_port *p, const struct sim_pkt *pfc);
void sim_pfc_refresh(struct fe_sim *sim, struct sim_port *p);
void sim_pfc_pause_end(struct fe_sim *sim, struct sim_port *p);
/* Priorities port p may send now (bit set = allowed); ends pauses whose quanta ran out. */
uint8_t sim_pfc_allowed_slow(struct fe_sim *sim, struct sim_port *p);
static inline uint8_t sim_pfc_allowed(struct fe_sim *sim, struct sim_port *p)
{
    return p->paused ? sim_pfc_allowed_slow(sim, p) : 0xFF;
}

/* ---- ecn.c ---- */
void sim_ecn_port_setup(const struct fe_sim *sim, struct sim_port *p);
/* RED marking of an ECT frame that leaves queued_bytes (above the port's Kmin) in its queue. */
void sim_ecn_red(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                 uint64_t queued_bytes);
/* An INT record of port p on a data frame (INT on). */
void sim_int_stamp(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt);
/* At egress dequeue of a data frame (RoCE or test; PFC frames never queue there): RED marking
 * of ECT frames on queued_bytes, what the frame leaves in its queue, and INT stamping (inline:
 * the frames with nothing to do, most of them, cost a test). */
static inline void sim_ecn_on_dequeue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                                      uint64_t queued_bytes)
{
    if (sim_pkt_ect(pkt) && queued_bytes > p->mark_above_bytes)
        sim_ecn_red(sim, p, pkt, queued_bytes);
    if (sim->int_enable && pkt->pkt.payload_len) sim_int_stamp(sim, p, pkt);
}
/* The CNP monitor at a port facing a host (switch.cnp_monitor_bps). */
void sim_cnp_monitor(struct fe_sim *sim, struct sim_port *p, const struct sim_pkt *pkt);

/* ---- host.c ---- */
int sim_host_init(struct fe_sim *sim, struct sim_host *h);
void sim_host_free(struct sim_host *h);
void sim_host_receive(struct fe_sim *sim, struct sim_host *h, struct sim_pkt *pkt);
void sim_host_wake(struct fe_sim *sim, struct sim_host *h);
/* Transmitter free or a pause lifted: send the next frame if any. */
void sim_host_kick(struct fe_sim *sim, struct sim_host *h);
int sim_flow_start(struct fe_sim *sim, uint32_t flow);
/* Base RTT, bottleneck rate and standalone FCT of a flow's path (at creation). */
int sim_flow_path_info(struct fe_sim *sim, struct sim_flow *f);
void sim_window_close(struct fe_sim *sim);
/* Records a phase boundary now (after flows started or ended). */
void sim_phase_mark(struct fe_sim *sim);
/* The point near the middle of phase k (k < n_phase_pts; the open one: from its checkpoints so
 * far): its time, and every flow's rx_bytes there (n_flows of them); the phase's start when it
 * has no checkpoint. */
uint64_t sim_phase_middle(const struct fe_sim *sim, uint32_t k, const uint64_t **rx);
/* The flow's counters as its live QPs have them now (the synced copies of released ones). */
void sim_flow_counters(const struct sim_flow *f, struct sim_flow_counts *out);
/* Copies them into f->ctr: at a window edge, a phase mark, and before its QPs are released. */
void sim_flow_sync_counters(struct sim_flow *f);

/* ---- topology.c ---- */
int sim_topology_build(struct fe_sim *sim, char *err, size_t err_cap);
void sim_topology_free(struct fe_sim *sim);
/* 32-bit mix (murmur3 finalizer): ECMP hashes, switch salts. */
static inline uint32_t sim_mix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}
/* Next-hop port at switch sw toward node dst (< n_nodes) for a flow hash; NULL = no route.
 * Every frame asks at every switch (the tables are a few lines per switch, where a per-flow path
 * would be one more cold line per hop in a fabric of many flows). */
static inline struct sim_port *sim_route(const struct sim_switch *sw, uint32_t dst,
                                         uint32_t flow_hash)
{
    const struct sim_route *r = &sw->route[dst];
    if (__builtin_expect(r->n <= 1, 1)) return r->port;
    return &sw->ports[sw->nh[r->off + sim_mix32(flow_hash ^ sw->salt) % r->n]];
}

/* ---- units.c: value parsers (0 or a negative fe_err) ---- */
int sim_parse_size(const char *s, uint64_t *out);
int sim_parse_rate(const char *s, uint64_t *out);
int sim_parse_time(const char *s, uint64_t *out);
int sim_parse_bool(const char *s, bool *out);
int sim_parse_double(const char *s, double *out);
int sim_parse_uint(const char *s, uint64_t max, uint64_t *out);
/* dir/file (file alone when it is absolute or dir is empty); false when it does not fit. */
bool sim_path_join(char *out, size_t cap, const char *dir, const char *file);
/* Whole file, NUL-terminated (at most 256 MiB); NULL with a message. */
char *sim_read_file(const char *path, size_t *len, char *err, size_t err_cap);

/* ---- test hooks (tests/sim): inject raw frames without the transport ---- */
struct sim_pkt *sim_test_inject(struct fe_sim *sim, uint32_t src_node, uint32_t dst_node,
                                uint8_t prio, uint32_t frame_bytes, bool ect, uint32_t flow_hash,
                                uint64_t tag);

#endif
