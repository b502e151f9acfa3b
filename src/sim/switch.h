/* Switches: routes by destination (ECMP), the shared buffer's totals (buffer.h), forwarding
 * (switch.c). */
#ifndef FE_SIM_SWITCH_H
#define FE_SIM_SWITCH_H

#include <stdint.h>

#include "sim/port.h"

/* The way from a switch to one destination node: its next hop when there is one choice (or the
 * scenario has no ECMP), else the `n` equal-cost ports at nh[off ..] to pick from by hash; port
 * NULL when there is no way (a switch, an unreachable host). */
struct sim_route {
    struct sim_port *port;
    uint32_t off, n;
};

/* The first cache line holds what every frame through the switch reads (buffer.h). */
struct sim_switch {
    _Alignas(64) struct sim_port *ports; /* node->ports */
    uint64_t used_bytes, shared_used;
    uint64_t shared_bytes; /* the part of the buffer above reserves and headroom */
    uint64_t max_used;
    struct sim_route *route; /* by destination node (sim_route) */
    uint16_t *nh;            /* next-hop port indices of the ECMP groups */
    uint32_t salt;           /* ECMP hash seed */
    /* line 2 */
    uint64_t buffer_bytes;
    struct sim_node *node;
    /* A frame of priority p may pass through (buffer.h) while shared_used < pass_below[p]:
     * UINT64_MAX for a lossy priority, for a lossless one the shared use from which the dynamic
     * threshold is 0 (an ingress that admits anything would pause its peer). */
    uint64_t pass_below[FE_SIM_PRIOS];
};

/* 32-bit mix (murmur3 finalizer): ECMP hashes, switch salts. */
static inline uint32_t sim_mix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}
/* Next-hop port at switch sw toward node dst (< n_nodes) for a flow hash; NULL = no route.
 * Every frame asks at every switch (the tables are a few lines per switch, where a per-flow path
 * would be one more cold line per hop in a fabric of many flows). */
static inline struct sim_port *sim_route(const struct sim_switch *sw, uint32_t dst,
                                         uint32_t flow_hash)
{
    const struct sim_route *r = &sw->route[dst];
    if (__builtin_expect(r->n <= 1, 1)) return r->port;
    return &sw->ports[sw->nh[r->off + sim_mix32(flow_hash ^ sw->salt) % r->n]];
}

void sim_switch_receive(struct fe_sim *sim, struct sim_port *in, struct sim_pkt *pkt);

#endif
