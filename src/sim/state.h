/* The simulator object (struct fe_sim) and its events: what every event and frame reads, the
 * event kinds, scheduling, the random generator. */
#ifndef FE_SIM_STATE_H
#define FE_SIM_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/sim.h"
#include "sim/engine.h"
#include "sim/host.h"
#include "sim/pkt.h"
#include "sim/port.h"
#include "sim/switch.h"

/* Event kinds: the low 4 bits of an event word, the rest an object pointer aligned to 16. (Flow
 * starts and the window's edges are no events: global actions, grid.h.) */
enum ev_kind {
    EV_ARRIVE = 1,  /* struct sim_port of a switch: the first frame on the wire toward it arrives */
    EV_TX_DONE,     /* struct sim_port: transmitter free, send the next frame */
    EV_PAUSE_END,   /* struct sim_port: a pause (QUANTA mode) may have expired */
    EV_PFC_REFRESH, /* struct sim_port: re-send PAUSE for priorities still congested */
    EV_HOST_WAKE,   /* struct sim_host: a QP deadline */
    EV_ARRIVE_HOST, /* EV_ARRIVE at a host's port: its own kind, so that the dispatch's one
                     * indirect jump decides it (sim_arrive_event) */
    EV_EB,          /* struct sim_eb: event building's timers (eb_ctrl.c) */
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
#define SIM_HALT_GRID     4u /* a flow ended: fe_sim_run stops at the grid boundary (grid.h) */

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
    uint8_t egress_hooks;   /* SIM_QD_* run by some port, RED aside (qdisc.h) */
    /* line 2 */
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
    uint64_t rng[4];           /* ns-3 timing: the one random stream (sim_port_rng) */
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
    /* global actions (grid.h): the grid's period; every event before ran_to_ns has run (and
     * none after, but those of the nanosecond before it); the boundary at which the flows that
     * ended (ended[0 .. n_ended), flow indices) are accounted (FE_SIM_NO_TIME: none) */
    uint64_t grid_ns, ran_to_ns, grid_due;
    uint32_t *ended, n_ended;
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
    struct sim_eb *eb;         /* event building (eb.h), NULL without */
    struct sim_par *par;       /* the parallel run (parallel.c), NULL when sequential */
    struct sim_par_part *part; /* in a partition's copy of the simulator: its part */
    int create_err;            /* last fe_qp_create failure */
    const char *create_why;
    struct sim_flow_batch *batch; /* flows whose QPs were made ahead (flow.c), NULL without */
};

/* ---- rng (xoshiro256**) ---- */
/* One stream per port (RED marking, link loss), seeded from the scenario's seed and the port's
 * global index: a port's draws do not depend on what other ports draw, so they are the same
 * however the topology is cut into partitions. ns-3 timing (--ns3-compat) keeps ns-3's
 * sequential semantics instead: one stream for the whole network, drawn in event order. */
void sim_rng_seed_ports(struct fe_sim *sim, uint64_t seed);
static inline uint64_t sim_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}
static inline uint64_t sim_rng_next(uint64_t s[4])
{
    uint64_t r = sim_rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = sim_rng_rotl(s[3], 45);
    return r;
}
static inline uint32_t sim_rng32(uint64_t s[4])
{
    return (uint32_t)(sim_rng_next(s) >> 32);
}

/* The random stream of port p's draws. */
static inline uint64_t *sim_port_rng(struct fe_sim *sim, struct sim_port *p)
{
    return sim->ns3_frames ? sim->rng : p->rng;
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

/* sim.c: the run loop's events up to limit (inclusive), also each partition's (parallel.c):
 * 0 when none is left up to it, > 0 when it stopped after an event that set sim->halt (a
 * flow ended: SIM_HALT_GRID is cleared, any other bit left set), < 0 when the run failed. One
 * loop for both: a second copy of the dispatch would keep the compiler from inlining the
 * receive paths into either. */
int sim_run_events(struct fe_sim *sim, uint64_t limit);
/* parallel.c: fe_sim_run of a parallel simulator; its end; a frame sent on a cut link (from a
 * partition's copy: it reaches `to` at t, through the outbox to the peer's partition); a phase
 * mark (phases.c) in a copy, done by the run at the end of the window */
int sim_par_run(struct fe_sim *sim, uint64_t until_ns);
void sim_par_destroy(struct fe_sim *sim);
void sim_par_send(struct fe_sim *sim, struct sim_port *to, uint64_t t, struct sim_pkt *pkt);
void sim_par_defer_phase(struct fe_sim *sim);
void sim_par_log_pfc(struct fe_sim *sim, const struct sim_port *p, uint8_t prio, bool pause);
bool sim_par_node_here(const struct fe_sim *sim, uint32_t node);

/* sim_validate.c: 0, or FE_EINVAL with a sentence in err */
int sim_validate(struct fe_sim *sim, char *err, size_t cap);
/* lookahead.c: the next event, with the lookahead (large fabrics), 0 when none is left up to
 * limit */
uint64_t sim_next_lookahead(struct fe_sim *sim, uint64_t limit);
/* topology.c: nodes, ports, routes */
int sim_topology_build(struct fe_sim *sim, char *err, size_t err_cap);
void sim_topology_free(struct fe_sim *sim);

/* ---- test hooks (tests/sim): inject raw frames without the transport ---- */
struct sim_pkt *sim_test_inject(struct fe_sim *sim, uint32_t src_node, uint32_t dst_node,
                                uint8_t prio, uint32_t frame_bytes, bool ect, uint32_t flow_hash,
                                uint64_t tag);

#endif
