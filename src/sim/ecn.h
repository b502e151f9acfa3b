/* Egress marking: RED/ECN, INT stamping, the CNP monitor (ecn.c). */
#ifndef FE_SIM_ECN_H
#define FE_SIM_ECN_H

#include "sim/state.h"

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

#endif
