/* Measurement: the contention window, the phases (each change of the set of active flows) and
 * their checkpoints (phases.c). */
#ifndef FE_SIM_PHASES_H
#define FE_SIM_PHASES_H

#include <stdint.h>

#include "sim/state.h"

/* The contention window opens (every flow's rx_bytes then) / closes (the bytes since). */
void sim_window_open(struct fe_sim *sim);
void sim_window_close(struct fe_sim *sim);
/* Records a phase boundary now (after flows started or ended). */
void sim_phase_mark(struct fe_sim *sim);
/* The point near the middle of phase k (k < n_phase_pts; the open one: from its checkpoints so
 * far): its time, and every flow's rx_bytes there (n_flows of them); the phase's start when it
 * has no checkpoint. */
uint64_t sim_phase_middle(const struct fe_sim *sim, uint32_t k, const uint64_t **rx);
/* A checkpoint of the open phase now (fe_sim_run stopped here for it). */
void sim_phase_checkpoint(struct fe_sim *sim);

#endif
