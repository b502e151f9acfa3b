/* Packet descriptors: allocated in chunks as the number in flight grows, recycled through a free
 * list, so memory follows the peak number of packets in flight, and the per-packet path never
 * calls malloc once the pool has grown to that peak. */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

#define CHUNK_PKTS 1024

int sim_pool_grow(struct fe_sim *sim)
{
    if (sim->n_chunks == sim->cap_chunks) {
        uint32_t cap = sim->cap_chunks ? sim->cap_chunks * 2 : 16;
        struct sim_pkt **c = realloc(sim->chunks, cap * sizeof(*c));
        if (!c) return -1;
        sim->chunks = c;
        sim->cap_chunks = cap;
    }
    /* INT records live right after each packet, and only when INT is on: a smaller packet
     * keeps more of them in cache */
    const size_t align = _Alignof(struct sim_pkt);
    size_t stride = sizeof(struct sim_pkt) + (sim->int_enable ? sizeof(struct fe_int) : 0);
    stride = (stride + align - 1) & ~(align - 1);
    unsigned char *chunk = aligned_alloc(align, CHUNK_PKTS * stride);
    if (!chunk) return -1;
    sim->chunks[sim->n_chunks++] = (struct sim_pkt *)(void *)chunk;
    for (int i = CHUNK_PKTS - 1; i >= 0; i--) {
        struct sim_pkt *p = (struct sim_pkt *)(void *)(chunk + (size_t)i * stride);
        p->next = sim->free_pkts;
        sim->free_pkts = p;
    }
    sim->pool_pkts += CHUNK_PKTS;
    return 0;
}

void sim_pool_destroy(struct fe_sim *sim)
{
    for (uint32_t i = 0; i < sim->n_chunks; i++) free(sim->chunks[i]);
    free(sim->chunks);
    sim->chunks = NULL;
    sim->n_chunks = sim->cap_chunks = 0;
    sim->free_pkts = NULL;
}
