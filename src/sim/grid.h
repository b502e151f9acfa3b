/* Global actions and the grid: the interface between the simulator's run loop and a parallel
 * runtime (see docs/sim.md, "Order of events and determinism").
 *
 * Some things read or change the state of every node at one time: flow starts, the contention
 * window's edges, phase marks and checkpoints, the accounting of the flows that ended (their
 * responders released, the window's auto end, the stop when every flow is done). They run
 * between events, never inside one:
 *  - those whose time T is known in advance (a flow's start, the window's set edges, the next
 *    checkpoint) at T, after every event before T and before any at T;
 *  - those an event triggers (a flow's completion) at the end of its grid window: the grid is
 *    the period G = sim_grid_ns (the shortest propagation delay of any link, at least 1 ns),
 *    windows [kG, (k+1)G); a completion at t in [kG, (k+1)G) is accounted at (k+1)G, after
 *    every event before it and before any at it. The flow's finish time stays t.
 * A frame sent in one grid window arrives in a later one (its link's delay >= G), so the
 * partitions of a parallel run can each run a grid window's events on their own, then meet at
 * its end for the actions; the sequential run (fe_sim_run) does exactly the same things in the
 * same order, and where a run is cut (fe_sim_run's until) changes nothing.
 *
 * A parallel runtime drives each partition as fe_sim_run drives the whole network:
 *     for (;;) {
 *         uint64_t next = sim_next_action_ns(sim);          (the earliest over all partitions)
 *         if (next <= sim->ran_to_ns) { sim_do_actions(sim, next); continue; }
 *         uint64_t end = min(next, (ran_to_ns / G + 1) * G, stop + 1);
 *         sim_run_before(sim, end);                           (each partition, in parallel)
 *     }
 * a flow ending inside [ran_to_ns, end) makes sim_next_action_ns the grid boundary after it,
 * which is end or later when end is at most the next boundary. */
#ifndef FE_SIM_GRID_H
#define FE_SIM_GRID_H

#include <stdint.h>

struct fe_sim;

/* The grid's period G in ns: the shortest propagation delay of any link of the topology, 1 when
 * it is 0 (a 0-delay link delivers within the nanosecond: such a link cannot be cut). */
uint64_t sim_grid_ns(const struct fe_sim *sim);
/* The earliest time at which global actions are due, FE_SIM_NO_TIME when none is. */
uint64_t sim_next_action_ns(const struct fe_sim *sim);
/* Runs every event before end_ns (the events before sim->ran_to_ns have run; end_ns must not
 * pass sim_next_action_ns, nor the grid boundary after ran_to_ns): 0, or < 0 (out of memory). */
int sim_run_before(struct fe_sim *sim, uint64_t end_ns);
/* Does the global actions due at t (every event before t has run, none at t): the flows ended
 * in the grid window before t accounted, the checkpoint, the flows starting, the window's set
 * edge. sim->halt then has SIM_HALT_ALL_DONE when every flow is done. */
void sim_do_actions(struct fe_sim *sim, uint64_t t);

#endif
