/* Partitions of a simulated network for parallel simulation (partition.c): each node of the
 * topology is given to one of K parts, each part simulated by its own thread (parallel.c). A
 * frame sent on a link whose ends lie in different parts (a cut link) crosses to the other part
 * at the next synchronisation, so the parts can run apart for the smallest propagation delay of
 * any cut link (the lookahead).
 *
 * The automatic partitioning keeps each host with the switch it attaches to (its ToR: cutting a
 * host's link would cut the busiest links and gain nothing), balances the predicted events
 * (ports, and the frames of every flow through the nodes of its path, data one way and ACKs the
 * other), cuts the links of least traffic and prefers those of long delay (a cut link of short
 * delay shortens every window). It is deterministic: the same scenario gives the same parts.
 *
 * A user's partition (--partition FILE) lists "NODE PART" lines: a node's name (or index) and
 * its part; '#' starts a comment. Hosts not listed follow their ToR; every switch is listed. */
#ifndef FE_SIM_PARTITION_H
#define FE_SIM_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fe_sim;

#define FE_SIM_MAX_PARTS 1024

struct fe_sim_partition {
    uint32_t k; /* parts (some may be empty when K exceeds the node groups) */
    uint32_t n_nodes;
    uint32_t *part;        /* node -> part */
    double *node_events;   /* events predicted per node (relative: a share, not a count) */
    double *port_frames;   /* frames predicted per port (the cut's costs) */
    uint64_t lookahead_ns; /* smallest delay of a cut link; FE_SIM_NO_TIME when none is cut */
    uint64_t grid_ns;      /* smallest delay of any link */
};

/* The automatic partition into k parts (1..FE_SIM_MAX_PARTS): 0, FE_EINVAL, FE_ENOMEM. */
int fe_sim_partition_auto(const struct fe_sim *sim, uint32_t k, struct fe_sim_partition *p,
                          char *err, size_t err_cap);
/* A user's partition from text ("NODE PART" lines, above); what names it in messages. */
int fe_sim_partition_parse(const struct fe_sim *sim, const char *text, size_t len, const char *what,
                           struct fe_sim_partition *p, char *err, size_t err_cap);
/* fe_sim_partition_parse on a file's contents. */
int fe_sim_partition_load(const struct fe_sim *sim, const char *path, struct fe_sim_partition *p,
                          char *err, size_t err_cap);
void fe_sim_partition_free(struct fe_sim_partition *p);

/* What a partition predicts for a run: per part its nodes, ports and share of the events; the
 * cut links, the lookahead, windows per simulated ms, and the frames that cross. After a run
 * (measured: the frames each port sent in it, and its event count) the events are those of the
 * run, else the prediction. */
struct fe_sim_partition_stats {
    uint32_t k, used_parts, cut_links;
    uint64_t lookahead_ns;
    double windows_per_ms;
    double events_total, events_max_part; /* of the run, or predicted (relative) */
    double cross_frames_share;            /* frames sent on cut links / all frames */
    double events_per_window;             /* per part, on average over the used parts */
    double balance_bound;                 /* events_total / events_max_part */
    bool measured;
};
void fe_sim_partition_stats(const struct fe_sim *sim, const struct fe_sim_partition *p,
                            struct fe_sim_partition_stats *out);
/* The report of fe_sim_partition_stats, with a line per part (the first 16 and the last). */
void fe_sim_partition_report(FILE *f, const struct fe_sim *sim, const struct fe_sim_partition *p);

/* Runs the simulator in parallel, a thread per part of p (before its first run): 0, or
 * FE_ENOTSUP with the reason in why (it then runs sequentially), FE_ENOMEM. */
int fe_sim_set_parallel(struct fe_sim *sim, const struct fe_sim_partition *p, char *why,
                        size_t why_cap);

/* What a parallel run did, per part (the first FE_SIM_MAX_INFO_PARTS): parts is 0 when the
 * simulator runs sequentially. Where each part's thread spent the run's wall time (wall_ns, the
 * runs so far): running its events, waiting at barriers (for the slowest part, or for the serial
 * actions), filing the frames other parts sent it, the global actions done serially (part 0's
 * thread, the others wait), making its hosts' QPs for the flows that start with a run; and the
 * thread's CPU time. sleeps: barrier waits that slept. */
#define FE_SIM_MAX_INFO_PARTS 64
struct fe_sim_par_info {
    uint32_t parts;
    uint64_t grid_ns, lookahead_ns;
    uint64_t barriers;
    uint64_t wall_ns;
    uint64_t events[FE_SIM_MAX_INFO_PARTS], windows[FE_SIM_MAX_INFO_PARTS];
    uint64_t frames_out[FE_SIM_MAX_INFO_PARTS];
    uint64_t run_ns[FE_SIM_MAX_INFO_PARTS], wait_ns[FE_SIM_MAX_INFO_PARTS];
    uint64_t inbox_ns[FE_SIM_MAX_INFO_PARTS], serial_ns[FE_SIM_MAX_INFO_PARTS];
    uint64_t setup_ns[FE_SIM_MAX_INFO_PARTS];
    uint64_t cpu_ns[FE_SIM_MAX_INFO_PARTS], sleeps[FE_SIM_MAX_INFO_PARTS];
};
void fe_sim_parallel_info(const struct fe_sim *sim, struct fe_sim_par_info *out);
/* Where the parts' threads spent the run (ms per part: events, barrier waits, inbox filing,
 * serial actions, QP set-up, thread CPU) and the share of the wall time spent waiting: a line,
 * after `prefix`. */
void fe_sim_parallel_print_times(FILE *f, const char *prefix, const struct fe_sim_par_info *pi);

#endif
