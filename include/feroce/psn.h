/* Packet sequence numbers: 24 bits, modulo 2^24, compared with a half window (2^23). */
#ifndef FEROCE_PSN_H
#define FEROCE_PSN_H

#include <stdbool.h>
#include <stdint.h>

#define FE_PSN_MASK 0xFFFFFFu
#define FE_PSN_HALF 0x800000u

static inline uint32_t fe_psn_add(uint32_t psn, int32_t n)
{
    return (uint32_t)(psn + (uint32_t)n) & FE_PSN_MASK;
}

/* a - b as a signed distance in [-2^23, 2^23). */
static inline int32_t fe_psn_diff(uint32_t a, uint32_t b)
{
    uint32_t d = (a - b) & FE_PSN_MASK;
    return d >= FE_PSN_HALF ? (int32_t)d - (int32_t)(FE_PSN_MASK + 1) : (int32_t)d;
}

static inline bool fe_psn_before(uint32_t a, uint32_t b) { return fe_psn_diff(a, b) < 0; }
static inline bool fe_psn_after(uint32_t a, uint32_t b) { return fe_psn_diff(a, b) > 0; }

#endif
