/* Packet-level simulator of a RoCEv2 fabric: switches with a shared buffer, PFC and RED/ECN,
 * links with rate and delay, hosts whose NIC runs feroce's real requester/responder (fe_qp) and
 * congestion-control algorithms (fe_cc).
 *
 * A scenario (struct fe_sim_scenario) describes nodes, links, flows and the switch and host
 * models; parsers build one from a native YAML file, the HPCC ns-3 text files or a built-in name.
 * fe_sim_create() turns it into a simulation, fe_sim_run() advances it, and the stats calls read
 * per-flow, per-port and global figures at any time. Time is integer nanoseconds; a run is a pure
 * function of the scenario and its seed. */
#ifndef FEROCE_SIM_H
#define FEROCE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "feroce/cc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_SIM_NO_TIME  UINT64_MAX
#define FE_SIM_MAX_RED  8  /* RED/ECN entries by port speed */
#define FE_SIM_MAX_CC   16 /* congestion-control profiles per scenario */
#define FE_SIM_NAME_LEN 32
#define FE_SIM_MAX_TIME ((UINT64_C(1) << 44) - 1) /* 4.9 hours of simulated time */
#define FE_SIM_PRIOS    8
#define FE_SIM_AUTO     UINT64_MAX /* a size derived from the model (documented per field) */

enum fe_sim_pfc_mode {
    FE_SIM_PFC_QUANTA = 0,  /* PAUSE carries quanta; the peer pauses for that long (a timer, as
                             * real NICs and switches do); the pausing side refreshes it */
    FE_SIM_PFC_XOFF_XON = 1 /* pause until RESUME (the ns-3 simulators' model) */
};

/* How frames are sized on links and in switch buffers. */
enum fe_sim_frames {
    FE_SIM_FRAMES_ROCE = 0,    /* the real RoCEv2 frames: Ethernet + IPv4 + UDP + BTH (+ RETH,
                                * AETH, ImmDt) + payload + ICRC + FCS, 64 bytes at least */
    FE_SIM_FRAMES_HPCC_NS3 = 1 /* as HPCC's ns-3 sizes them: data = payload + 48 (its PPP header
                                * of 14, IPv4 20, UDP 8, SeqTs 6) + INT (42 with HPCC, 8 with
                                * TIMELY); ACK/NAK 60 (88 with HPCC's INT); PFC 43. And times
                                * them: each frame's serialization cut to whole ns, a switch
                                * port busy until its transmit-complete event, a QP's line rate
                                * that of those frames (link.c, switch.c, host.c) */
};

/* ECN marking at egress for ports of one speed. */
struct fe_sim_red {
    uint64_t rate_bps; /* ports of exactly this rate; the entry with the largest rate <= the port
                        * rate applies when none matches exactly */
    uint64_t kmin_bytes, kmax_bytes;
    uint32_t pmax_ppm;
};

struct fe_sim_switch_cfg {
    uint64_t buffer_bytes;  /* shared buffer per switch */
    uint64_t reserve_bytes; /* guaranteed per (ingress port, priority); AUTO = one max frame */
    double dt_alpha;        /* dynamic threshold: alpha x free shared buffer (ns-3: 1/8) */
    bool pfc;               /* PFC on the lossless priorities */
    uint8_t lossless_mask;  /* bit p: priority p is lossless (PFC), default 1 << 3 */
    enum fe_sim_pfc_mode pfc_mode;
    uint16_t pause_quanta;     /* quanta of 512 bit times in PAUSE frames (QUANTA mode) */
    uint64_t headroom_bytes;   /* per (port, lossless priority); 0 = sized from rate and delay */
    uint64_t xon_offset_bytes; /* resume this far under the threshold; AUTO = 2 max frames */
    /* Carve the buffer as HPCC's ns-3 MMU does (switch-mmu.cc, third.cc), so that its dynamic
     * threshold comes out to the byte: one reserve per port (its high-priority queue, ACKs
     * included, is outside the MMU) and a headroom of 3 x rate x delay per port, raised to the
     * lossless sizing where that is larger (set by --ns3-compat) */
    bool ns3_mmu;
    bool ecn; /* RED/ECN marking at egress */
    int n_red;
    struct fe_sim_red red[FE_SIM_MAX_RED];
    bool int_enable; /* stamp INT records (HPCC); on automatically for HPCC flows */
    bool ecmp;       /* spread over equal-cost next hops by flow hash (else the first) */
    /* Emulated-switch check (the SURF firmware's cocotb test): the switch port facing a
     * receiver forges a CNP to a flow's sender when the flow's throughput over a window
     * (tumbling, cnp_monitor_window_ns) exceeds cnp_monitor_bps. 0 = off. */
    uint64_t cnp_monitor_bps;
    uint64_t cnp_monitor_window_ns;
};

/* One congestion-control configuration that flows refer to by index (0 = the default). */
struct fe_sim_cc {
    char label[FE_SIM_NAME_LEN];
    const struct fe_cc_algo *algo; /* NULL = "none" (line rate) */
    struct fe_cc_params params;
};

struct fe_sim_host_cfg {
    uint32_t mtu_bytes;    /* payload bytes per packet (256..4096) */
    uint64_t replay_bytes; /* per QP: payload in flight at most; 0 = fe_qp's default */
    uint16_t ack_every;    /* responder ACK coalescing */
    uint16_t ackreq_every; /* requester AckReq every N packets */
    uint64_t ack_timeout_ns;
    uint8_t retry_cnt;
    bool np_enable;           /* notification point: CNPs for CE-marked data */
    bool ecn_echo_on_ack;     /* ns-3 style: congestion flag on ACKs instead of CNPs */
    uint64_t cnp_interval_ns; /* min_time_between_cnps */
    uint8_t data_pcp, data_dscp;
    uint8_t ack_pcp; /* priority ACKs travel at (data_pcp unless ACKs are high prio) */
    uint8_t cnp_pcp, cnp_dscp;
    uint64_t pacer_burst_bytes; /* 0 = one MTU */
    bool count_ifg;             /* links carry preamble + inter-frame gap (20 B) per frame */
    uint64_t min_frame_bytes;   /* Ethernet minimum frame (64) */
    enum fe_sim_frames frames;  /* frame sizes (ROCE; HPCC_NS3 in --ns3-compat) */
    bool window_bdp;            /* bytes in flight per QP <= the largest path BDP (HPCC HAS_WIN) */
};

struct fe_sim_node {
    char name[FE_SIM_NAME_LEN];
    bool is_switch;
};

struct fe_sim_link {
    uint32_t a, b; /* node indices */
    uint64_t rate_bps;
    uint64_t delay_ns; /* propagation, one way */
    double loss;       /* per-frame drop probability (data, ACK, CNP; not PFC frames) */
};

struct fe_sim_flow {
    uint32_t src, dst; /* host node indices */
    uint64_t bytes;    /* total payload */
    uint64_t start_ns;
    uint32_t msg_bytes; /* split into messages of this size; 0 = as few as possible */
    uint8_t prio;       /* priority (PCP) of its data; 0xff = the host default */
    uint8_t cc;         /* index into fe_sim_scenario.cc */
    uint16_t sport;     /* UDP source port (ECMP entropy); 0 = assigned */
    uint16_t dport;     /* as given by HPCC flow files; informative */
};

/* Event building (docs/sim.md, "Event building"): front-end hosts each write one fragment per
 * triggered event, as an RDMA WRITE with immediate, to the builder host the assignment names (one
 * QP per front-end/builder pair); builders assemble events with the core of feroce/eb.h and a
 * consumer drains them. Off while n_frontends is 0. */
#define FE_SIM_EB_MAX_HOSTS 64 /* front-ends, and builders, at most */
#define FE_SIM_EB_NONE      0xFFFFu

enum fe_sim_eb_policy {
    FE_SIM_EB_ROUND_ROBIN = 0, /* fe_eb_rr_assign: builder E mod M */
    FE_SIM_EB_AVAILABILITY = 1 /* an event manager's tables from builders' free slots */
};
enum fe_sim_eb_trigger { FE_SIM_EB_PERIODIC = 0, FE_SIM_EB_POISSON = 1 };
enum fe_sim_eb_dist {
    FE_SIM_EB_FIXED = 0,   /* frag_bytes */
    FE_SIM_EB_UNIFORM,     /* frag_min_bytes .. frag_max_bytes */
    FE_SIM_EB_EXPONENTIAL, /* mean frag_bytes, clipped to 1 .. frag_max_bytes */
    FE_SIM_EB_NORMAL       /* mean frag_bytes, deviation frag_sd_bytes, clipped likewise */
};

struct fe_sim_eb {
    uint32_t n_frontends, n_builders;
    uint32_t frontends[FE_SIM_EB_MAX_HOSTS], builders[FE_SIM_EB_MAX_HOSTS]; /* host nodes */
    enum fe_sim_eb_policy policy;
    enum fe_sim_eb_trigger trigger;
    double rate_hz;    /* triggers per second */
    uint64_t events;   /* triggers in all (the run lasts until each has a final state) */
    uint64_t start_ns; /* first trigger */
    enum fe_sim_eb_dist dist;
    uint32_t frag_bytes;     /* fixed size, or the mean */
    uint32_t frag_min_bytes; /* uniform: lower bound */
    uint32_t frag_max_bytes; /* each source's room in a slot: the largest fragment */
    uint32_t frag_sd_bytes;  /* normal: standard deviation */
    uint32_t slots;          /* S: event slots per builder */
    uint64_t timeout_ns;     /* first fragment to incomplete */
    uint64_t consumer_bps;   /* each builder's consumer drains built events at this rate */
    uint32_t fe_queue;       /* send WRs per front-end/builder QP (the rest wait at the source) */
    uint32_t tokens;         /* per builder: front-ends sending to it at once (its token
                              * manager, ALICE-style incast control); 0 = no limit */
    uint8_t rnr_timer;       /* IB RNR timer code builders answer with (1 = 10 us) */
    uint8_t cc;              /* congestion-control profile of the fragments' QPs */
    /* availability: the event manager and its out-of-band control plane */
    uint64_t ctrl_delay_ns;      /* one way, every control message */
    uint64_t ctrl_interval_ns;   /* builders announce, front-ends report progress, this often */
    uint64_t lead_events;        /* how far ahead of the front-ends the tables reach */
    uint32_t reserve_slots;      /* slots each builder keeps free */
    uint32_t run_events;         /* events per run at most */
    uint64_t builder_timeout_ns; /* silent this long: no new events */
    /* faults (builder indices in builders[], FE_SIM_EB_NONE = none) */
    uint32_t slow_builder;
    uint64_t slow_at_ns;
    uint64_t slow_bps; /* its consumer's rate from slow_at_ns on */
    uint32_t leave_builder;
    uint64_t leave_at_ns; /* it stops: its QPs vanish, it answers and announces nothing */
};

struct fe_sim_scenario {
    char name[64];
    uint64_t seed;
    uint64_t stop_ns;         /* FE_SIM_NO_TIME = until every flow completes */
    uint64_t window_start_ns; /* contention window; FE_SIM_NO_TIME = automatic */
    uint64_t window_end_ns;
    struct fe_sim_switch_cfg sw;
    struct fe_sim_host_cfg host;
    uint32_t n_cc;
    struct fe_sim_cc cc[FE_SIM_MAX_CC];
    uint32_t n_nodes, n_links, n_flows;
    struct fe_sim_node *nodes;
    struct fe_sim_link *links;
    struct fe_sim_flow *flows;
    uint32_t cap_nodes, cap_links, cap_flows;
    struct fe_sim_eb eb; /* event building; off while eb.n_frontends is 0 */
};

/* Defaults: 12 MiB buffer, 1/8 dynamic threshold, PFC on priority 3 in QUANTA mode, ECN off,
 * MTU 4096, ACK every 32, NP on (4 us), CNPs at PCP 6, IFG counted, no CC, seed 1, no stop. */
void fe_sim_scenario_init(struct fe_sim_scenario *sc);
void fe_sim_scenario_free(struct fe_sim_scenario *sc);
/* Appends; return the new index or a negative fe_err. */
int fe_sim_scenario_add_node(struct fe_sim_scenario *sc, const char *name, bool is_switch);
int fe_sim_scenario_add_link(struct fe_sim_scenario *sc, uint32_t a, uint32_t b, uint64_t rate_bps,
                             uint64_t delay_ns, double loss);
int fe_sim_scenario_add_flow(struct fe_sim_scenario *sc, const struct fe_sim_flow *f);
int fe_sim_scenario_find_node(const struct fe_sim_scenario *sc, const char *name);
/* Sets the default CC (cc[0]) or adds a profile: algorithm by name and "name=value,..." params.
 * Returns the profile index or a negative fe_err with a message in err. */
int fe_sim_scenario_set_cc(struct fe_sim_scenario *sc, int index, const char *algo,
                           const char *params, char *err, size_t err_cap);
/* One setting as "key=value" with the keys of the YAML file: switch.KEY, host.KEY, and
 * link.rate/delay/loss, flow.size/msg/start (applied to every link / flow), seed, stop, name. */
int fe_sim_scenario_set(struct fe_sim_scenario *sc, const char *assignment, char *err,
                        size_t err_cap);
/* The modelling choices of the ns-3 RDMA simulators: DCQCN's hpcc-ns3 profile, congestion on
 * ACKs (no CNPs), an ACK per packet, XOFF/XON pause, no preamble/IFG on links, their frame
 * sizes (FE_SIM_FRAMES_HPCC_NS3) and, unless set, their MMU's 4 KiB reserve and 3 KiB resume
 * offset. Headroom stays lossless. */
void fe_sim_scenario_ns3_compat(struct fe_sim_scenario *sc);

/* ---- running ---- */
enum fe_sim_queue_kind { FE_SIM_EVQ_HEAP = 0, FE_SIM_EVQ_WHEEL = 1, FE_SIM_EVQ_CALENDAR = 2 };

struct fe_sim;

/* Builds the simulation (routes, buffers, headroom). FE_EINVAL with a message in err for a
 * scenario that cannot run (disconnected hosts, a buffer smaller than its headroom, ...). */
struct fe_sim *fe_sim_create(const struct fe_sim_scenario *sc, int *err_out, char *err,
                             size_t err_cap);
void fe_sim_destroy(struct fe_sim *sim);
/* Advances until `until_ns` (inclusive), the scenario's stop time, or the end of all flows.
 * Returns 1 when the simulation has finished (no more work or stop time reached), 0 otherwise. */
int fe_sim_run(struct fe_sim *sim, uint64_t until_ns);
uint64_t fe_sim_now(const struct fe_sim *sim);
bool fe_sim_finished(const struct fe_sim *sim);
/* Event-queue implementation (for benchmarks); call before the first fe_sim_run. */
int fe_sim_set_queue(struct fe_sim *sim, enum fe_sim_queue_kind kind);
/* The run loop's lookahead, on by default from 256 ports (a large fabric, where what an event
 * reads is rarely in cache): events of the same nanosecond taken out of the queue a few at a time,
 * each one's state loaded while those before it run. Results are the same either way (for
 * benchmarks and tests). FE_ESTATE when a halted run left events taken ahead. */
int fe_sim_set_lookahead(struct fe_sim *sim, bool on);

/* ---- results ---- */
enum fe_sim_drop {
    FE_SIM_DROP_BUFFER = 0, /* shared buffer: no room under the dynamic threshold (lossy) */
    FE_SIM_DROP_HEADROOM,   /* lossless priority overflowed its PFC headroom */
    FE_SIM_DROP_LINK,       /* random link loss */
    FE_SIM_DROP_NO_ROUTE,
    FE_SIM_DROP_NO_QP, /* arrived at a host for a QP that no longer exists (late duplicates) */
    FE_SIM_DROP_QP,    /* refused by the QP (out of order after a loss, ...): a consequence of
                        * network drops, not one; neither counts in drops_total */
    FE_SIM_DROP_MAX
};
const char *fe_sim_drop_name(int reason);

struct fe_sim_stats {
    uint64_t now_ns;
    uint64_t events;
    uint64_t data_pkts_delivered; /* data packets accepted by responders */
    uint64_t pkts_sent;           /* frames started on any link */
    uint64_t drops[FE_SIM_DROP_MAX];
    uint64_t drops_total;
    uint64_t pause_frames; /* PAUSE frames sent (refreshes included) */
    uint64_t resume_frames;
    uint64_t pause_events;      /* transitions to paused, by switches */
    uint64_t host_pause_events; /* times a host port was paused */
    uint64_t ecn_marks;
    uint64_t cnps; /* CNPs sent by notification points */
    uint64_t retx_pkts;
    uint64_t timeouts;
    uint64_t max_buffer_bytes;   /* peak use of any switch buffer */
    uint64_t max_headroom_bytes; /* peak headroom use of any (port, priority) */
    uint64_t pool_pkts;          /* packet descriptors allocated (peak in flight) */
    uint64_t flows_done, flows_started;
    uint64_t qp_stalls; /* QP reported work due but yielded no packet (should be 0) */
};
void fe_sim_stats(const struct fe_sim *sim, struct fe_sim_stats *out);

struct fe_sim_flow_stats {
    uint32_t src, dst;
    uint64_t bytes; /* flow size */
    uint64_t start_ns;
    uint64_t finish_ns;    /* completion at the requester; FE_SIM_NO_TIME while running */
    uint64_t rx_bytes;     /* payload delivered to the responder so far */
    uint64_t acked_bytes;  /* payload acknowledged to the requester */
    uint64_t window_bytes; /* delivered within the contention window (once known) */
    uint64_t tx_pkts, retx_pkts, timeouts;
    uint64_t cnps_rx;    /* CNPs the requester received */
    uint64_t ecn_marked; /* CE-marked packets the responder received */
    uint64_t rtt_avg_ns, rtt_max_ns;
    uint64_t rtt_samples, rtt_sum_ns; /* ACKs timed and their sum (a live view's differences) */
    double standalone_fct_ns; /* FCT alone on an idle network (HPCC's "standalone_fct") */
    bool started, done;
    bool failed; /* ended in error (retries exhausted, ...) */
};
uint32_t fe_sim_n_flows(const struct fe_sim *sim);
int fe_sim_flow_stats(const struct fe_sim *sim, uint32_t flow, struct fe_sim_flow_stats *out);
/* The flow's CC variables (Rc, Rt, alpha...) now; 0 when the flow is not running. */
int fe_sim_flow_cc_trace(const struct fe_sim *sim, uint32_t flow, struct fe_cc_trace *vals,
                         int max);
/* Current sending rate of the flow's CC (bytes/s; FE_CC_UNLIMITED when none). */
uint64_t fe_sim_flow_rate_Bps(const struct fe_sim *sim, uint32_t flow);

/* The contention window actually used: [last flow start, first flow end] unless given. */
void fe_sim_window(const struct fe_sim *sim, uint64_t *start_ns, uint64_t *end_ns);

/* Figures over the contention window: per flow throughput (payload bits per second), and over
 * the flows active during the whole window their Jain index, aggregate, min and max. */
struct fe_sim_summary {
    uint64_t window_start_ns, window_end_ns;
    uint32_t n_window_flows;
    double jain, aggregate_bps, min_bps, max_bps, mean_bps;
    uint64_t drops_total, pause_frames, cnps, ecn_marks;
};
void fe_sim_summarize(const struct fe_sim *sim, struct fe_sim_summary *out);
double fe_sim_flow_window_bps(const struct fe_sim *sim, uint32_t flow);
/* Over the flow's life: bytes / (finish - start) (or up to now while running). */
double fe_sim_flow_life_bps(const struct fe_sim *sim, uint32_t flow);

/* Phases: the intervals between changes of the set of active flows (a start or an end), with
 * the payload throughput of each active flow (kept for scenarios of at most 64 flows), over the
 * whole phase and over its second half: after a change, congestion control takes time to settle
 * (DCQCN with a 2 ms increase timer climbs for tens of ms), and the second half gives the rates
 * it settles to. The middle is found to within 1/32 of the phase. */
#define FE_SIM_MAX_PHASE_FLOWS 64
struct fe_sim_phase_rates {
    double aggregate_bps, min_bps, max_bps, mean_bps, jain;
};
struct fe_sim_phase {
    uint64_t start_ns, end_ns;
    uint32_t n_active;
    double aggregate_bps, min_bps, max_bps, mean_bps, jain;
    uint64_t half_start_ns; /* the second half: from here to end_ns */
    struct fe_sim_phase_rates half;
};
/* Fills up to max phases (the last one ends now); returns how many there are. */
int fe_sim_phases(const struct fe_sim *sim, struct fe_sim_phase *out, int max);
/* Throughput of one flow in phase k (0 when not active in it). */
double fe_sim_phase_flow_bps(const struct fe_sim *sim, int k, uint32_t flow);

struct fe_sim_port_stats {
    uint32_t peer_node, peer_port;
    uint64_t rate_bps, delay_ns;
    uint64_t tx_pkts, tx_bytes;
    uint64_t queue_bytes; /* now, all priorities */
    uint64_t max_queue_bytes;
    uint64_t pause_tx, resume_tx; /* PFC frames this port sent */
    uint64_t pause_rx;            /* PAUSE frames received (this port's transmitter stopped) */
    uint64_t paused_ns;           /* time this port's transmitter spent paused (any priority) */
    uint64_t ecn_marks;
    uint64_t drops;
    uint64_t headroom_bytes; /* configured headroom per lossless priority */
};
uint32_t fe_sim_n_nodes(const struct fe_sim *sim);
uint32_t fe_sim_node_ports(const struct fe_sim *sim, uint32_t node);
int fe_sim_port_stats(const struct fe_sim *sim, uint32_t node, uint32_t port,
                      struct fe_sim_port_stats *out);
const struct fe_sim_scenario *fe_sim_scenario_of(const struct fe_sim *sim);

/* PFC log: called for every PAUSE (pause = true, refreshes included) and RESUME frame a port
 * receives, when it arrives (HPCC's pfc.txt logs the same). */
typedef void (*fe_sim_pfc_cb)(void *user, uint64_t now_ns, uint32_t node, bool node_is_switch,
                              uint32_t port, uint8_t prio, bool pause);
void fe_sim_set_pfc_log(struct fe_sim *sim, fe_sim_pfc_cb cb, void *user);

/* Event-building results (all zero when the scenario has none). */
struct fe_sim_eb_stats {
    uint64_t triggered, built, incomplete, lost, busy;
    uint64_t missing; /* triggered events with no final state (yet) */
    uint64_t twice;   /* second declarations refused by the ledger (must be 0) */
    bool ledger_ok;   /* every event exactly one final state */
    uint64_t latency_p50_ns, latency_p99_ns, latency_max_ns; /* trigger to complete, built */
    uint64_t busy_fragments; /* fragments not sent: no table covered the event (busy) */
    uint64_t rnr_naks;       /* RNR NAKs builders sent (no receive posted: ring full) */
    uint64_t first_trigger_ns, last_final_ns;
};
struct fe_sim_eb_builder_stats {
    uint32_t node;
    uint64_t built, incomplete, lost;
    uint64_t built_bytes;
    double events_per_s, gbps; /* built, from the first trigger to its last final state */
    uint32_t max_slots_used;
    double mean_slots_used; /* time-weighted, over the same interval */
    uint64_t refused;       /* fragments the assembly refused (late, duplicate, overrun ...) */
    bool left;
};
bool fe_sim_eb_enabled(const struct fe_sim *sim);
void fe_sim_eb_stats(const struct fe_sim *sim, struct fe_sim_eb_stats *out);
int fe_sim_eb_builder_stats(const struct fe_sim *sim, uint32_t builder,
                            struct fe_sim_eb_builder_stats *out);

/* The report: per-flow table, contention window, phases, network counters; or JSON. */
struct fe_sim_report_opts {
    bool json;
    bool all_flows;   /* text: list every flow (else the first 64) */
    uint64_t wall_ns; /* wall time of the run, for the speed figures (0 = not shown) */
};
void fe_sim_report(FILE *f, const struct fe_sim *sim, const struct fe_sim_report_opts *o);

/* Traces: CSV rows at an interval (per-flow throughput and CC rate in Gb/s, the CC's own
 * variables, switch queue depths), kept in memory for fe_sim_trace_plot. The caller runs the
 * simulation up to fe_sim_trace_next() and calls fe_sim_trace_sample() there. csv_path may be
 * NULL (plot only). */
struct fe_sim_trace;
struct fe_sim_trace *fe_sim_trace_open(struct fe_sim *sim, const char *csv_path,
                                       uint64_t interval_ns, char *err, size_t err_cap);
uint64_t fe_sim_trace_next(const struct fe_sim_trace *t);
void fe_sim_trace_sample(struct fe_sim_trace *t);
/* A plot of per-flow throughput and CC rate over time: path ending in .svg (written by feroce)
 * or .png (drawn by gnuplot, which must be on PATH). */
int fe_sim_trace_plot(const struct fe_sim_trace *t, const char *path, char *err, size_t err_cap);
/* Writes s as a gnuplot single-quoted string (nothing substituted, a quote doubled, control
 * characters as '?'), for anything that writes gnuplot scripts from user-given names. */
void fe_gnuplot_quote(FILE *f, const char *s);
/* Whether fe_sim_trace_plot can write path (its extension; gnuplot for .png): 0 or FE_EINVAL with
 * the reason, before a run whose plot would fail at its end. */
int fe_sim_plot_check(const char *path, char *err, size_t err_cap);
/* Closes the trace: 0, or FE_EIO when its CSV could not be written in full (a full disk). */
int fe_sim_trace_close(struct fe_sim_trace *t);

/* ---- scenario sources ---- */
/* Built-in reference scenarios: the experiments published with the LST Advanced Camera's RoCEv2 +
 * DCQCN firmware (docs/sim.md, "Built-in scenarios"). */
struct fe_sim_builtin {
    const char *name;
    const char *summary;
};
const struct fe_sim_builtin *fe_sim_builtins(size_t *n);
int fe_sim_builtin_load(const char *name, struct fe_sim_scenario *sc, char *err, size_t err_cap);

/* Native scenario file (YAML, docs/sim.md). Errors read "file:line: what". Both initialize sc
 * (fe_sim_scenario_init) and leave it empty on error. */
int fe_sim_scenario_load_yaml(const char *path, struct fe_sim_scenario *sc, char *err,
                              size_t err_cap);
int fe_sim_scenario_parse_yaml(const char *text, size_t len, const char *name,
                               struct fe_sim_scenario *sc, char *err, size_t err_cap);

/* HPCC ns-3 files. fe_sim_hpcc_load reads config.txt and the topology and flow files it names
 * (relative to the config's directory unless overridden, NULL = from the config). */
struct fe_sim_hpcc_files {
    char topology[512], flow[512], fct_out[512], pfc_out[512];
    uint32_t payload; /* PACKET_PAYLOAD_SIZE (HPCC's default 1000 when not given) */
    /* config values that need the topology (fe_sim_hpcc_apply) */
    int cc_mode;          /* CC_MODE */
    bool has_win;         /* HAS_WIN (HPCC's default 1) */
    bool global_t;        /* GLOBAL_T (default 1): one base RTT and window for every flow */
    uint64_t rate_ai_bps; /* RATE_AI, 0 = not given */
    uint64_t max_rtt_ns;  /* set by fe_sim_hpcc_apply: HPCC's maxRtt and maxBdp */
    uint64_t max_bdp_bytes;
};
int fe_sim_hpcc_load(const char *config_path, const char *topology_override,
                     const char *flow_override, struct fe_sim_scenario *sc,
                     struct fe_sim_hpcc_files *files, char *err, size_t err_cap);
int fe_sim_hpcc_parse_config(const char *text, size_t len, const char *name,
                             struct fe_sim_scenario *sc, struct fe_sim_hpcc_files *files, char *err,
                             size_t err_cap);
int fe_sim_hpcc_parse_topology(const char *text, size_t len, const char *name,
                               struct fe_sim_scenario *sc, char *err, size_t err_cap);
int fe_sim_hpcc_parse_flows(const char *text, size_t len, const char *name,
                            struct fe_sim_scenario *sc, char *err, size_t err_cap);
/* What HPCC derives from the topology once it is read (fe_sim_hpcc_load calls it): maxRtt and
 * maxBdp over every pair of hosts (shortest paths; RTT = 2 x delays + payload serialization per
 * hop, as its third.cc computes them); with GLOBAL_T, HPCC's base RTT T and additive step
 * (RATE_AI x T); with HAS_WIN, a window of maxBdp bytes per QP. */
int fe_sim_hpcc_apply(struct fe_sim_scenario *sc, struct fe_sim_hpcc_files *files, char *err,
                      size_t err_cap);
/* fct.txt lines for the completed flows, by completion time:
 * "sip dip sport dport size start_ns fct_ns standalone_fct_ns" (IPs in hex as HPCC numbers). */
void fe_sim_hpcc_write_fct(const struct fe_sim *sim, FILE *f);
/* pfc.txt lines "time_ns node node_type ifindex type" as the PFC frames arrive. */
void fe_sim_hpcc_log_pfc(struct fe_sim *sim, FILE *f);

/* ns3-roce (Eren121/ns3-roce) JSON scenarios: a config naming a topology and a flows file
 * (docs/sim.md). The values are translated into what the HPCC reader builds (its DCQCN keys,
 * ECN maps, payload), so both formats give the same model for the same network. Node ids are
 * list positions, as ns3-roce numbers them. Unicast and bisection flows run; flows feroce cannot
 * model (multicast) refuse the file unless skip_unsupported is set (then a warning names them).
 * Attributes feroce does not model are listed once on `warn`. Errors read
 * "FILE: json.path: what". Needs libjson-c at build time (fe_sim_ns3roce_available()). */
struct fe_sim_ns3roce_opts {
    bool skip_unsupported; /* skip flows of types feroce cannot model, with a warning */
    FILE *warn;            /* notes on ignored attributes and skipped flows; NULL = none */
};
struct fe_sim_ns3roce_info {
    char topology[512], flows[512]; /* the files read */
    uint32_t n_flows;               /* == the scenario's flows */
    bool *background;               /* per flow: in_background (need not complete) */
    uint32_t n_background, n_disabled, n_skipped;
};
bool fe_sim_ns3roce_available(void);
int fe_sim_ns3roce_load(const char *config_path, const struct fe_sim_ns3roce_opts *o,
                        struct fe_sim_scenario *sc, struct fe_sim_ns3roce_info *info, char *err,
                        size_t err_cap);
/* The same from three texts already in memory (names are used in messages only). */
int fe_sim_ns3roce_parse(const char *config, size_t config_len, const char *config_name,
                         const char *topology, size_t topology_len, const char *topology_name,
                         const char *flows, size_t flows_len, const char *flows_name,
                         const struct fe_sim_ns3roce_opts *o, struct fe_sim_scenario *sc,
                         struct fe_sim_ns3roce_info *info, char *err, size_t err_cap);
void fe_sim_ns3roce_info_free(struct fe_sim_ns3roce_info *info);

#ifdef __cplusplus
}
#endif
#endif
