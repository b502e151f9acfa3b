/* Small helpers shared by the wire tests: hex vectors, a seeded PRNG, cmocka includes. */
#ifndef FE_WIRE_TEST_H
#define FE_WIRE_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* Parses hex (whitespace ignored) into out; returns the byte count. */
static inline size_t wt_hex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int hi = -1;
    for (; *s; s++) {
        int v;
        if (*s >= '0' && *s <= '9')
            v = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            v = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            v = *s - 'A' + 10;
        else
            continue;
        if (hi < 0) {
            hi = v;
        } else {
            assert_true(n < cap);
            out[n++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    assert_true(hi < 0);
    return n;
}

/* xorshift64*: deterministic, seeded per test. */
static inline uint64_t wt_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#endif
