/* Priority flow control: pause generation and reaction (pfc.c; when to pause: buffer.h). */
#ifndef FE_SIM_PFC_H
#define FE_SIM_PFC_H

#include <stdint.h>

#include "sim/port.h"

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

#endif
