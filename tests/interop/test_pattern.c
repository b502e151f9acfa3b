/* The stream pattern convention (include/feroce/pattern.h): known answers, piecewise fills equal
 * a whole fill, every single-byte corruption is found at its position, and messages, streams and
 * positions never collide; placement and doorbell rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/pattern.h"

/* Byte o of message k of stream s, straight from the header's definition. */
static uint8_t ref_byte(uint32_t s, uint64_t k, uint64_t o)
{
    uint64_t key = ((uint64_t)s + 1) * 0x9E3779B97F4A7C15ull;
    uint64_t w = (((uint64_t)(uint32_t)k << 32) | (uint32_t)(o / 8)) ^ key;
    return (uint8_t)(w >> (8 * (o % 8)));
}

static void test_known_answer(void **state)
{
    (void)state;
    uint8_t b[16];
    fe_pattern_fill(b, sizeof b, 0, 0, 0);
    /* K(0) = 0x9E3779B97F4A7C15, little-endian; word 1 has j = 1. */
    const uint8_t want[16] = {0x15, 0x7C, 0x4A, 0x7F, 0xB9, 0x79, 0x37, 0x9E,
                              0x14, 0x7C, 0x4A, 0x7F, 0xB9, 0x79, 0x37, 0x9E};
    assert_memory_equal(b, want, 16);
    fe_pattern_fill(b, 8, 0, 1, 0); /* k = 1 flips bit 32 */
    assert_int_equal(b[4], 0xB9 ^ 0x01);
    assert_int_equal(fe_pattern_word(0, 1, 0) >> 32, 0x9E3779B9u ^ 1u);
}

static void test_matches_definition(void **state)
{
    (void)state;
    uint8_t b[257];
    const uint32_t streams[] = {0, 1, 256, 0xFFFFFF, 0xFFFFFFFFu};
    const uint64_t ks[] = {0, 1, 0xFFFFFFFFull, 0x100000000ull, 12345678901ull};
    for (size_t si = 0; si < 5; si++)
        for (size_t ki = 0; ki < 5; ki++)
            for (uint64_t off = 0; off < 20; off += 3) {
                fe_pattern_fill(b, sizeof b, streams[si], ks[ki], off);
                for (size_t i = 0; i < sizeof b; i++)
                    assert_int_equal(b[i], ref_byte(streams[si], ks[ki], off + i));
                assert_int_equal(fe_pattern_check(b, sizeof b, streams[si], ks[ki], off), sizeof b);
            }
}

/* The word index wraps at 2^32 words (32 GiB into a message): the vector fill must hand over. */
static void test_word_index_wrap(void **state)
{
    (void)state;
    uint8_t b[300];
    for (uint64_t back = 0; back < 70; back += 1) {
        uint64_t off = (1ull << 35) - back * 5 - 1;
        fe_pattern_fill(b, sizeof b, 5, 77, off);
        for (size_t i = 0; i < sizeof b; i++) assert_int_equal(b[i], ref_byte(5, 77, off + i));
        assert_int_equal(fe_pattern_check(b, sizeof b, 5, 77, off), sizeof b);
    }
}

static void test_piecewise_fill(void **state)
{
    (void)state;
    enum { N = 10000 };
    uint8_t *whole = malloc(N), *pieces = malloc(N);
    assert_non_null(whole);
    assert_non_null(pieces);
    fe_pattern_fill(whole, N, 7, 99, 0);
    srand(1);
    for (size_t o = 0; o < N;) {
        size_t n = 1 + (size_t)rand() % 700;
        if (n > N - o) n = N - o;
        fe_pattern_fill(pieces + o, n, 7, 99, o);
        assert_int_equal(fe_pattern_check(pieces + o, n, 7, 99, o), n);
        o += n;
    }
    assert_memory_equal(whole, pieces, N);
    free(whole);
    free(pieces);
}

static void test_every_corruption_found(void **state)
{
    (void)state;
    uint8_t b[67];
    for (uint64_t off = 0; off < 9; off++)
        for (size_t len = 1; len <= sizeof b; len += 11)
            for (size_t i = 0; i < len; i++) {
                fe_pattern_fill(b, len, 3, 5, off);
                b[i] ^= (uint8_t)(1u << (i % 8));
                assert_int_equal(fe_pattern_check(b, len, 3, 5, off), i);
            }
}

/* Long buffers go through the block compare: a flip anywhere is still found at its index. */
static void test_corruption_in_long_buffers(void **state)
{
    (void)state;
    enum { N = 4099 };
    static uint8_t b[N];
    const size_t pos[] = {0, 7, 8, 255, 256, 257, 511, 1000, 2047, 4095, 4096, 4098};
    for (uint64_t off = 0; off < 10; off++)
        for (size_t p = 0; p < sizeof pos / sizeof pos[0]; p++) {
            fe_pattern_fill(b, N, 0xABCDEF, 77, off);
            assert_int_equal(fe_pattern_check(b, N, 0xABCDEF, 77, off), N);
            b[pos[p]] ^= 0x10;
            assert_int_equal(fe_pattern_check(b, N, 0xABCDEF, 77, off), pos[p]);
            b[N - 1] ^= 1; /* a second error later does not hide the first */
            assert_int_equal(fe_pattern_check(b, N, 0xABCDEF, 77, off), pos[p]);
        }
}

static void test_no_collisions(void **state)
{
    (void)state;
    uint8_t a[64], b[64];
    fe_pattern_fill(a, 64, 1, 10, 0);
    /* another message, another stream, another position: every word differs */
    fe_pattern_fill(b, 64, 1, 11, 0);
    for (int w = 0; w < 8; w++) assert_memory_not_equal(a + 8 * w, b + 8 * w, 8);
    fe_pattern_fill(b, 64, 2, 10, 0);
    for (int w = 0; w < 8; w++) assert_memory_not_equal(a + 8 * w, b + 8 * w, 8);
    fe_pattern_fill(b, 64, 1, 10, 64);
    for (int w = 0; w < 8; w++) assert_memory_not_equal(a + 8 * w, b + 8 * w, 8);
    /* a 1-byte message is still checked */
    uint8_t one;
    fe_pattern_fill(&one, 1, 1, 10, 0);
    assert_int_equal(fe_pattern_check(&one, 1, 1, 10, 0), 1);
    one ^= 0x80;
    assert_int_equal(fe_pattern_check(&one, 1, 1, 10, 0), 0);
    assert_int_equal(fe_pattern_check(&one, 0, 1, 10, 0), 0); /* empty: all (none) match */
}

static void test_placement_and_doorbells(void **state)
{
    (void)state;
    assert_int_equal(fe_stream_offset(0, 4096, 8), 0);
    assert_int_equal(fe_stream_offset(9, 4096, 8), 4096);
    assert_int_equal(fe_stream_offset(9, 4096, 0), 9 * 4096);
    assert_true(fe_stream_offset(0x100000001ull, 1, 0) == 0x100000001ull);
    /* M = 1: all; M = 0: none; M = 4: 3, 7, ... and the last of a finite stream */
    for (uint64_t k = 0; k < 20; k++) {
        assert_true(fe_stream_has_imm(k, 0, 1));
        assert_false(fe_stream_has_imm(k, 20, 0));
        if (k < 10) assert_int_equal(fe_stream_has_imm(k, 10, 4), k == 3 || k == 7 || k == 9);
        assert_int_equal(fe_stream_has_imm(k, 0, 4), k % 4 == 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answer),
        cmocka_unit_test(test_matches_definition),
        cmocka_unit_test(test_word_index_wrap),
        cmocka_unit_test(test_piecewise_fill),
        cmocka_unit_test(test_every_corruption_found),
        cmocka_unit_test(test_corruption_in_long_buffers),
        cmocka_unit_test(test_no_collisions),
        cmocka_unit_test(test_placement_and_doorbells),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
