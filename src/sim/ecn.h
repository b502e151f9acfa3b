/* Egress marking: RED/ECN, INT stamping, the CNP monitor (ecn.c): the known queue
 * disciplines (qdisc.h). */
#ifndef FE_SIM_ECN_H
#define FE_SIM_ECN_H

#include "sim/state.h"

void sim_ecn_port_setup(const struct fe_sim *sim, struct sim_port *p);
/* RED marking of an ECT frame that leaves queued_bytes (above the port's Kmin) in its queue. */
void sim_ecn_red(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                 uint64_t queued_bytes);
/* An INT record of port p on a data frame (INT on). */
void sim_int_stamp(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt);
/* The CNP monitor at a port facing a host (switch.cnp_monitor_bps). */
void sim_cnp_monitor(struct fe_sim *sim, struct sim_port *p, const struct sim_pkt *pkt);

#endif
