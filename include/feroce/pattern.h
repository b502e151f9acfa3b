/* The data a feroce stream carries and where each message lands: the convention shared by every
 * sender (feroce send) and receiver (feroce recv, feroce verbs-recv), so that any receiver can
 * verify any sender byte for byte.
 *
 * A stream is identified by a 32-bit stream id (the sender's QPN on the wire) and numbers its
 * messages k = 0, 1, 2, ... (64-bit; the immediate carries the low 32 bits).
 *
 * Counter pattern: byte o of message k of stream s is byte (o mod 8) of the little-endian 64-bit
 * word
 *     W(s, k, j) = ((k mod 2^32) << 32 | (j mod 2^32)) XOR K(s),   j = floor(o / 8),
 *     K(s)       = (s + 1) * 0x9E3779B97F4A7C15 (mod 2^64),
 * so every word names its message and position and differs between streams: a misplaced,
 * stale, duplicated or cross-stream byte is caught, and a 1-byte message is still checked.
 *
 * Placement: message k is written at remote offset (k mod nslots) * slot_bytes of the
 * receiver's region (nslots = 0: no wrap, offset k * slot_bytes). slot_bytes defaults to the
 * message length.
 *
 * Immediates (doorbells): with imm_every = M >= 1, message k is a WRITE with immediate k mod 2^32
 * when (k + 1) mod M == 0 or it is the last message of a finite stream; the others are plain
 * WRITEs. A receiver that sees the immediate of message k knows every message <= k has been
 * placed (RC executes in PSN order) and verifies them all. M = 1: every message has one;
 * M = 0: none (the receiver can only check the region at the end).
 *
 * Pure functions: no I/O, no allocation. */
#ifndef FEROCE_PATTERN_H
#define FEROCE_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The 64-bit word of the counter pattern at word index j of message k of stream s. */
static inline uint64_t fe_pattern_word(uint32_t stream, uint64_t k, uint64_t j)
{
    return (((uint64_t)(uint32_t)k << 32) | (uint32_t)j) ^
           ((uint64_t)stream + 1) * 0x9E3779B97F4A7C15ull;
}

/* Writes bytes [offset, offset + len) of message k of stream s into dst. */
void fe_pattern_fill(uint8_t *dst, size_t len, uint32_t stream, uint64_t k, uint64_t offset);

/* Compares buf with bytes [offset, offset + len) of message k of stream s. Returns len when
 * all match, else the index in buf of the first byte that differs. */
size_t fe_pattern_check(const uint8_t *buf, size_t len, uint32_t stream, uint64_t k,
                        uint64_t offset);

/* Remote offset of message k (see Placement above). */
static inline uint64_t fe_stream_offset(uint64_t k, uint64_t slot_bytes, uint64_t nslots)
{
    return (nslots ? k % nslots : k) * slot_bytes;
}

/* Whether message k of a stream of `count` messages (0 = unbounded) carries an immediate. */
static inline bool fe_stream_has_imm(uint64_t k, uint64_t count, uint32_t imm_every)
{
    if (imm_every == 0) return false;
    return (k + 1) % imm_every == 0 || (count && k + 1 == count);
}

#ifdef __cplusplus
}
#endif
#endif
