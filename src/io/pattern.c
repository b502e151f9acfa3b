/* The counter pattern of include/feroce/pattern.h: fill and check at memory speed (four 64-bit
 * words per step, two or four per vector operation; partial words at either end byte by byte). The
 * sender fills every message it streams, so this is on the per-byte path of `feroce send`. */
#include "feroce/pattern.h"

#include <stdbool.h>
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
 * the stack where the target lacks it (baseline x86-64: five times slower than this); four words
 * at a time are taken only where the CPU has AVX2 (asked at run time). */
typedef uint64_t u64x2 __attribute__((vector_size(16)));

/* The blocks below make word w0 + n of a run as (w0 + n) ^ key: hi | j == hi + j until the low
 * half wraps (after 2^32 words), which the callers keep the blocks short of. */

/* blocks x 32 bytes of the run from word w0 on, to dst. */
static void fill_blocks_x2(uint8_t *dst, uint64_t blocks, uint64_t w0, uint64_t key)
{
    const u64x2 step = {4, 4}, kv = {key, key};
    u64x2 lo = {w0, w0 + 1}, up = {w0 + 2, w0 + 3};
    for (uint64_t b = 0; b < blocks; b++, dst += 32) {
        u64x2 a = lo ^ kv, c = up ^ kv;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        for (int q = 0; q < 2; q++) {
            a[q] = __builtin_bswap64(a[q]);
            c[q] = __builtin_bswap64(c[q]);
        }
#endif
        memcpy(dst, &a, 16);
        memcpy(dst + 16, &c, 16);
        lo += step;
        up += step;
    }
}

/* The blocks of 256 bytes of buf that hold the run from word w0 on, counted up to the first
 * that differs (or `blocks`): the differences OR-ed without a branch per word. */
static uint64_t check_blocks_x2(const uint8_t *buf, uint64_t blocks, uint64_t w0, uint64_t key)
{
    const u64x2 step = {4, 4}, kv = {key, key};
    u64x2 lo = {w0, w0 + 1}, up = {w0 + 2, w0 + 3};
    for (uint64_t b = 0; b < blocks; b++, buf += 256) {
        u64x2 diff = {0, 0};
        for (unsigned w = 0; w < 256; w += 32) {
            u64x2 a, c;
            memcpy(&a, buf + w, 16);
            memcpy(&c, buf + w + 16, 16);
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
        if (diff[0] | diff[1]) return b;
    }
    return blocks;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X4 1
typedef uint64_t u64x4 __attribute__((vector_size(32)));

__attribute__((target("avx2"))) static void fill_blocks_x4(uint8_t *dst, uint64_t blocks,
                                                           uint64_t w0, uint64_t key)
{
    const u64x4 step = {4, 4, 4, 4}, kv = {key, key, key, key};
    u64x4 lo = {w0, w0 + 1, w0 + 2, w0 + 3};
    for (uint64_t b = 0; b < blocks; b++, dst += 32) {
        u64x4 a = lo ^ kv;
        memcpy(dst, &a, 32);
        lo += step;
    }
}

__attribute__((target("avx2"))) static uint64_t check_blocks_x4(const uint8_t *buf, uint64_t blocks,
                                                                uint64_t w0, uint64_t key)
{
    const u64x4 step = {4, 4, 4, 4}, kv = {key, key, key, key};
    u64x4 lo = {w0, w0 + 1, w0 + 2, w0 + 3};
    for (uint64_t b = 0; b < blocks; b++, buf += 256) {
        u64x4 diff = {0, 0, 0, 0};
        for (unsigned w = 0; w < 256; w += 32) {
            u64x4 a;
            memcpy(&a, buf + w, 32);
            diff |= a ^ lo ^ kv;
            lo += step;
        }
        if (diff[0] | diff[1] | diff[2] | diff[3]) return b;
    }
    return blocks;
}

static bool have_x4(void)
{
    return __builtin_cpu_supports("avx2");
}
#endif

static void fill_blocks(uint8_t *dst, uint64_t blocks, uint64_t w0, uint64_t key)
{
#ifdef HAVE_X4
    if (have_x4()) {
        fill_blocks_x4(dst, blocks, w0, key);
        return;
    }
#endif
    fill_blocks_x2(dst, blocks, w0, key);
}

static uint64_t check_blocks(const uint8_t *buf, uint64_t blocks, uint64_t w0, uint64_t key)
{
#ifdef HAVE_X4
    if (have_x4()) return check_blocks_x4(buf, blocks, w0, key);
#endif
    return check_blocks_x2(buf, blocks, w0, key);
}

void fe_pattern_fill(uint8_t *dst, size_t len, uint32_t stream, uint64_t k, uint64_t offset)
{
    size_t i = 0;
    for (; i < len && ((offset + i) & 7); i++) dst[i] = pattern_byte(stream, k, offset + i);
    const uint64_t key = ((uint64_t)stream + 1) * 0x9E3779B97F4A7C15ull;
    const uint64_t hi = (uint64_t)(uint32_t)k << 32;
    uint64_t j = (offset + i) >> 3;
    /* Blocks of four words up to the low half's wrap; past it the word loop below takes over. */
    uint64_t blocks = (len - i) / 32, to_wrap = ((1ull << 32) - (uint32_t)j) / 4;
    if (blocks > to_wrap) blocks = to_wrap;
    fill_blocks(dst + i, blocks, hi | (uint32_t)j, key);
    i += 32 * blocks;
    j += 4 * blocks;
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
    /* Blocks of 256 bytes up to the low half's wrap; the first that differs, and the words past
     * a wrap, go to the word loop below, which finds the byte. */
    uint64_t blocks = (len - i) / 256, to_wrap = ((1ull << 32) - (uint32_t)j) / 32;
    if (blocks > to_wrap) blocks = to_wrap;
    uint64_t same = check_blocks(buf + i, blocks, hi | (uint32_t)j, key);
    i += 256 * same;
    j += 32 * same;
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
