/* Big-endian loads and stores on byte pointers: no alignment or aliasing assumptions, so every
 * codec can read straight from a receive buffer. Private to src/. */
#ifndef FE_WIRE_BYTES_H
#define FE_WIRE_BYTES_H

#include <stdint.h>

static inline uint16_t fe_be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t fe_be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static inline uint32_t fe_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t fe_be64(const uint8_t *p)
{
    return (uint64_t)fe_be32(p) << 32 | fe_be32(p + 4);
}
static inline void fe_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void fe_put24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16);
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)v;
}
static inline void fe_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void fe_put64(uint8_t *p, uint64_t v)
{
    fe_put32(p, (uint32_t)(v >> 32));
    fe_put32(p + 4, (uint32_t)v);
}

/* Sets *why (when given) and returns 0: the common "reject" path of the header parsers. */
#define FE_REJECT(why, reason)                                                                     \
    do {                                                                                           \
        if (why) *(why) = (reason);                                                                \
        return 0;                                                                                  \
    } while (0)

#endif
