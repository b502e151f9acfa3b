/* The counter pattern of include/feroce/pattern.h: fill and check at memory speed (four 64-bit
 * words per step, two per vector operation; partial words at either end byte by byte). The sender
 * fills every message it streams, so this is on the per-byte path of `feroce send`. */
#include "feroce/pattern.h"

#include <string.h>

static inline uint64_t to_le64(uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(v);
#else
    return v;
#endif
}

static inline uint8_t pattern_byte(uint32_t stream, uint64_t k, uint64_t o)
{
    return (uint8_t)(fe_pattern_word(stream, k, o >> 3) >> (8 * (o & 7)));
}

/* Two consecutive words: the width every x86-64 has. A wider generic vector is lowered through
 * the stack where the target lacks it (baseline x86-64: five times slower than this). */
typedef uint64_t u64x2 __attribute__((vector_size(16)));

void fe_pattern_fill(uint8_t *dst, size_t len, uint32_t stream, uint64_t k, uint64_t offset)
{
    size_t i = 0;
    for (; i < len && ((offset + i) & 7); i++) dst[i] = pattern_byte(stream, k, offset + i);
    const uint64_t key = ((uint64_t)stream + 1) * 0x9E3779B97F4A7C15ull;
    const uint64_t hi = (uint64_t)(uint32_t)k << 32;
    uint64_t j = (offset + i) >> 3;
    /* hi | j == hi + j until the low half wraps (after 2^32 words), so each block of four is a
     * vector add away from the previous one; past a wrap the word loop below takes over. */
    uint64_t blocks = (len - i) / 32, to_wrap = ((1ull << 32) - (uint32_t)j) / 4;
    if (blocks > to_wrap) blocks = to_wrap;
    if (blocks) {
        const uint64_t w0 = hi | (uint32_t)j;
        const u64x2 step = {4, 4}, kv = {key, key};
        u64x2 lo = {w0, w0 + 1}, up = {w0 + 2, w0 + 3};
        for (uint64_t b = 0; b < blocks; b++) {
            u64x2 a = lo ^ kv, c = up ^ kv;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            for (int q = 0; q < 2; q++) {
                a[q] = __builtin_bswap64(a[q]);
                c[q] = __builtin_bswap64(c[q]);
            }
#endif
            memcpy(dst + i, &a, 16);
            memcpy(dst + i + 16, &c, 16);
            lo += step;
            up += step;
            i += 32;
        }
        j += 4 * blocks;
    }
    for (; i + 8 <= len; i += 8, j++) {
        uint64_t w = to_le64((hi | (uint32_t)j) ^ key);
        memcpy(dst + i, &w, 8);
    }
    for (; i < len; i++) dst[i] = pattern_byte(stream, k, offset + i);
}

size_t fe_pattern_check(const uint8_t *buf, size_t len, uint32_t stream, uint64_t k,
                        uint64_t offset)
{
    size_t i = 0;
    for (; i < len && ((offset + i) & 7); i++)
        if (buf[i] != pattern_byte(stream, k, offset + i)) return i;
    const uint64_t key = ((uint64_t)stream + 1) * 0x9E3779B97F4A7C15ull;
    const uint64_t hi = (uint64_t)(uint32_t)k << 32;
    uint64_t j = (offset + i) >> 3;
    /* Blocks of 256 bytes OR-ing the differences without a branch per word, the expected words
     * made as fe_pattern_fill makes them (a vector add per four); a block that differs, or the
     * words past a wrap of the low half, go to the word loop below, which finds the byte. */
    uint64_t blocks = (len - i) / 256, to_wrap = ((1ull << 32) - (uint32_t)j) / 32;
    if (blocks > to_wrap) blocks = to_wrap;
    if (blocks) {
        const uint64_t w0 = hi | (uint32_t)j;
        const u64x2 step = {4, 4}, kv = {key, key};
        u64x2 lo = {w0, w0 + 1}, up = {w0 + 2, w0 + 3};
        for (uint64_t b = 0; b < blocks; b++) {
            u64x2 diff = {0, 0};
            for (unsigned w = 0; w < 256; w += 32) {
                u64x2 a, c;
                memcpy(&a, buf + i + w, 16);
                memcpy(&c, buf + i + w + 16, 16);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                for (int q = 0; q < 2; q++) {
                    a[q] = __builtin_bswap64(a[q]);
                    c[q] = __builtin_bswap64(c[q]);
                }
#endif
                diff |= (a ^ lo ^ kv) | (c ^ up ^ kv);
                lo += step;
                up += step;
            }
            if (diff[0] | diff[1]) break;
            i += 256;
            j += 32;
        }
    }
    for (; i + 8 <= len; i += 8, j++) {
        uint64_t w = to_le64((hi | (uint32_t)j) ^ key), got;
        memcpy(&got, buf + i, 8);
        if (got != w) {
            while (buf[i] == pattern_byte(stream, k, offset + i)) i++;
            return i;
        }
    }
    for (; i < len; i++)
        if (buf[i] != pattern_byte(stream, k, offset + i)) return i;
    return len;
}
