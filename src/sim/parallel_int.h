/* The parallel runtime's parts and windows (parallel.c), shared by its two transports: threads
 * in one process (parallel.c) and processes over MPI (parallel_mpi.c). The window logic (where a
 * window ends, when global actions are due, what they hand over to the parts, the flows that
 * ended) is parallel.c's, for both; a transport differs only in how the outboxes reach their
 * parts and how the parts' published values are read by all (shared memory after a barrier, or
 * an MPI collective). Internal to src/sim. */
#ifndef FE_SIM_PARALLEL_INT_H
#define FE_SIM_PARALLEL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fe_sim;
struct fe_sim_partition;
struct sim_port;
struct sim_pkt;
struct sim_mpi;

struct xframe {
    uint64_t t;
    struct sim_port *to;
    struct sim_pkt *pkt;
};

struct outbox {
    struct xframe *v;
    size_t n, cap;
    uint64_t min_t;
};

/* A PFC log record (--pfc) a part keeps until the merge between windows: its time and receiving
 * port place it in the log. */
struct pfc_rec {
    uint64_t t;
    const struct sim_port *port;
    uint8_t prio;
    bool pause;
};

struct pfc_log {
    struct pfc_rec *v;
    size_t n, cap, head; /* head: the next to merge */
};

/* A part: its copy of the simulator and what its thread publishes at each barrier. A cache line
 * of its own (its thread writes its counters while the others run). */
struct sim_par_part {
    _Alignas(64) struct fe_sim *sim; /* the copy; NULL when the part runs in another process */
    struct sim_par *par;
    uint32_t id;
    struct sim_port **ports; /* its ports (their wires' keys, for the queue's renumbering) */
    uint32_t n_ports;
    struct outbox *out[2]; /* [parity][destination part] */
    uint32_t parity;
    struct pfc_log pfc;
    bool phase_flag; /* a flow completed in this window: phase marks at its end */
    /* published at the end of a window, read by all after the barrier (by its parity: the
     * next window's values go to the other slot while slower threads still read these) */
    struct {
        uint64_t next_t; /* its earliest pending event */
        bool ended, failed;
    } pub[2];
    uint64_t windows, events_run, frames_out;
    /* where its thread's time goes (ns, CLOCK_MONOTONIC read a few times per window, not per
     * event): running its events, waiting at barriers, filing its inbox, the serial actions
     * (thread 0), making the QPs of its hosts for the flows that start with the run
     * (sim_flow_batch_make); and its thread's CPU time */
    uint64_t run_ns, wait_ns, inbox_ns, serial_ns, setup_ns, cpu_ns;
    uint64_t sleeps; /* barrier waits that slept on the futex */
    pthread_t th;
};

struct sim_par {
    struct fe_sim *main;
    uint32_t k;
    uint32_t *part_of; /* node -> part */
    struct sim_par_part *parts;
    uint64_t grid_ns, lookahead_ns;
    bool lookahead; /* the parts' run loops use sim_next_lookahead */
    /* over MPI (parallel_mpi.c): the one part this process simulates, whose copy is the only
     * one (the other parts' copies are NULL: their events and frames are dropped here); -1 with
     * threads, every part here */
    int32_t only_part;
    struct sim_mpi *mpi;
    /* the run in progress */
    uint64_t limit;   /* fe_sim_run's: events up to it */
    uint64_t end;     /* the next window's end (exclusive), set by thread 0 after an action */
    uint64_t done_to; /* the events before it have run, and the actions due before it */
    bool stop;
    uint64_t wall_ns; /* in sim_par_run */
    /* sim_next_action_ns of the main simulator, read by every thread between windows: in two
     * slots, as thread 0 sets the next value while the others may still read this one (the
     * slot changes at each global action, alike in every thread) */
    uint64_t known[2];
    uint32_t ks; /* the slot in use when the threads start and after they stop */
    /* barrier */
    _Alignas(64) atomic_uint arrived;
    _Alignas(64) atomic_uint gen;
    atomic_uint sleepers; /* threads in futex_wait or about to be: the last one wakes them */
    uint64_t barriers;
};

/* parallel.c: the steps of a window, as its threads take them */

/* Sets up the parts (fe_sim_set_parallel), only_part >= 0: this process simulates that part
 * alone (MPI), its peers the others. 0, FE_ENOTSUP with why, FE_ENOMEM. */
int sim_par_setup(struct fe_sim *sim, const struct fe_sim_partition *p, int32_t only_part,
                  char *why, size_t why_cap);
/* The part's events before `end`, then what it publishes for the barrier (its parity). */
void sim_par_run_window(struct sim_par_part *pp, uint64_t end, uint32_t parity);
void sim_par_clear_outboxes(struct sim_par_part *pp, uint32_t parity);
uint64_t sim_par_outbox_min(const struct sim_par_part *pp, uint32_t parity);
/* After the barrier: whether the actions are due at `end`, else the next window's end. */
bool sim_par_action_due(const struct sim_par *par, uint32_t parity, uint64_t end);
uint64_t sim_par_next_end(const struct sim_par *par, uint32_t parity, uint64_t end);
/* Between windows (one thread, or every process alike): the actions due at `end`, then the
 * next window (par->end) or the stop (par->stop). */
void sim_par_between_windows(struct sim_par *par, uint64_t end);
/* A run to until_ns (fe_sim_run's): its limit set; false when it has already run past it. */
bool sim_par_set_limit(struct sim_par *par, uint64_t until_ns);
/* What fe_sim_run returns after the run (rc: the runtime's own error, or 0), the window closed
 * when the simulation finished. */
int sim_par_result(struct sim_par *par, int rc);
/* The start of a run: the actions due at par->done_to, then the first window or the stop. */
void sim_par_start_run(struct sim_par *par);
/* The end of a run: the parts' counters folded into the main simulator's, its clock. */
void sim_par_end_run(struct sim_par *par);

/* The PFC log over MPI: a part's records not yet merged as words (their count, then packed), a
 * peer's unpacked into its part here (0, FE_EINVAL when malformed, FE_ENOMEM), and the parts'
 * records merged into the log (as between windows and at a run's end). */
size_t sim_par_pfc_words(const struct sim_par_part *pp);
void sim_par_pack_pfc(const struct fe_sim *sim, const struct sim_par_part *pp, uint64_t *w);
int sim_par_unpack_pfc(const struct fe_sim *sim, struct sim_par_part *pp, const uint64_t *w,
                       size_t n_words);
void sim_par_merge_pfc(struct sim_par *par);

/* parallel_mpi.c */

/* A frame a global action sent on a cut link over MPI (sim_par_send): to its part's process
 * when it comes from this process's part, else dropped (its own process sends it). */
void sim_mpi_action_send(struct sim_par *par, struct sim_port *to, uint64_t t, struct sim_pkt *pkt);
int sim_mpi_run(struct fe_sim *sim, uint64_t until_ns);
void sim_mpi_free(struct sim_mpi *m);

#endif
