/* The packet pool: frames from a free list, grown in chunks (pool.c). */
#ifndef FE_SIM_POOL_H
#define FE_SIM_POOL_H

#include "sim/state.h"

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
     * kind are written by whoever fills the packet. A frame that is not RoCE (PFC) never gets an
     * fe_pkt, yet the MPI exchange reads its pointers: they must not be a slot's old bytes. */
    p->next = NULL;
    if (sim->int_enable) sim_pkt_int(sim, p)->nhops = 0;
    p->pkt.int_md = NULL;
    p->pkt.payload = NULL;
    return p;
}
static inline void sim_pkt_free(struct fe_sim *sim, struct sim_pkt *p)
{
    p->next = sim->free_pkts;
    sim->free_pkts = p;
    sim->pkts_in_use--;
}
void sim_pool_destroy(struct fe_sim *sim);

#endif
