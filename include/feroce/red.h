/* RED/ECN marking as DCQCN switches do it (and the ns-3 RDMA simulators): from the instantaneous
 * egress queue of a priority, P = 0 below Kmin, Pmax (q - Kmin)/(Kmax - Kmin) up to Kmax, 1 above.
 * Shared by the simulator's switch and the emulated `feroce switch`. */
#ifndef FEROCE_RED_H
#define FEROCE_RED_H

#include <stdbool.h>
#include <stdint.h>

struct fe_red {
    uint64_t kmin_bytes, kmax_bytes;
    uint32_t pmax_ppm; /* Pmax in parts per million */
};

/* Marking probability in units of 2^-32 (UINT32_MAX = always). */
static inline uint32_t fe_red_prob32(const struct fe_red *r, uint64_t q_bytes)
{
    if (q_bytes <= r->kmin_bytes) return 0;
    if (q_bytes > r->kmax_bytes || r->kmax_bytes <= r->kmin_bytes) return UINT32_MAX;
    /* pmax (as 2^-32 units) scaled by the queue's position between Kmin and Kmax */
    uint64_t pmax32 = ((uint64_t)r->pmax_ppm << 32) / 1000000u;
    if (pmax32 > UINT32_MAX) pmax32 = UINT32_MAX;
    return (uint32_t)(pmax32 * (q_bytes - r->kmin_bytes) / (r->kmax_bytes - r->kmin_bytes));
}

/* Decision with a uniform 32-bit random number from the caller's (seeded) generator. */
static inline bool fe_red_mark(const struct fe_red *r, uint64_t q_bytes, uint32_t rnd32)
{
    uint32_t p = fe_red_prob32(r, q_bytes);
    return p == UINT32_MAX || rnd32 < p;
}

#endif
