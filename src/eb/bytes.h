/* Big-endian field access for the event-building codecs. */
#ifndef FEROCE_EB_BYTES_H
#define FEROCE_EB_BYTES_H

#include <stdint.h>

static inline void eb_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void eb_put32(uint8_t *p, uint32_t v)
{
    eb_put16(p, (uint16_t)(v >> 16));
    eb_put16(p + 2, (uint16_t)v);
}
static inline void eb_put64(uint8_t *p, uint64_t v)
{
    eb_put32(p, (uint32_t)(v >> 32));
    eb_put32(p + 4, (uint32_t)v);
}
static inline uint16_t eb_get16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}
static inline uint32_t eb_get32(const uint8_t *p)
{
    return ((uint32_t)eb_get16(p) << 16) | eb_get16(p + 2);
}
static inline uint64_t eb_get64(const uint8_t *p)
{
    return ((uint64_t)eb_get32(p) << 32) | eb_get32(p + 4);
}

#endif
