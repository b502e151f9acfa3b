/* The pacer: exact credit arithmetic, burst cap, strict pacing, rate changes, extremes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cc/pacer_impl.h"
#include "feroce/cc.h"

/* 10 Gb/s = 1.25e9 B/s: a full 4096-byte bucket sends one packet at once, the next one waits
 * 4096 / 1.25 ns = 3276.8 ns, rounded up to 3277. */
static void first_packet_then_wait(void **state)
{
    (void)state;
    struct fe_pacer p;
    fe_pacer_init(&p, 4096, 1000);
    assert_int_equal(fe_pacer_when(&p, 1250000000u, 4096, 1000), 1000);
    fe_pacer_consume(&p, 1250000000u, 4096, 1000);
    assert_int_equal(fe_pacer_when(&p, 1250000000u, 4096, 1000), 1000 + 3277);
    /* one nanosecond earlier is not enough credit */
    assert_int_equal(fe_pacer_when(&p, 1250000000u, 4096, 1000 + 3276), 1000 + 3277);
    assert_int_equal(fe_pacer_when(&p, 1250000000u, 4096, 1000 + 3277), 1000 + 3277);
}

/* 1000-byte packets at 3e8 B/s, each sent as soon as allowed: packet k leaves at exactly
 * ceil(k x 1000 / 0.3) ns = ceil(k x 10000 / 3) (the first leaves at 0 from the full bucket,
 * whose 1000 bytes offset exactly one packet). Rounding each send time up must not lose the
 * fraction: no drift after 200000 packets. */
static void no_drift(void **state)
{
    (void)state;
    struct fe_pacer p;
    fe_pacer_init(&p, 1000, 0);
    uint64_t t = 0;
    for (uint64_t k = 0; k < 200000; k++) {
        t = fe_pacer_when(&p, 300000000u, 1000, t);
        assert_int_equal(t, (k * 10000 + 2) / 3);
        fe_pacer_consume(&p, 300000000u, 1000, t);
    }
}

/* After a long idle period the credit is capped at the burst: 4 x 1024 bytes leave at once,
 * the fifth waits 1024 bytes at 1e9 B/s = 1024 ns. */
static void burst_cap(void **state)
{
    (void)state;
    struct fe_pacer p;
    fe_pacer_init(&p, 4096, 0);
    fe_pacer_consume(&p, 1000000000u, 4096, 0);
    uint64_t now = 5000000000u; /* 5 s idle */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(fe_pacer_when(&p, 1000000000u, 1024, now), now);
        fe_pacer_consume(&p, 1000000000u, 1024, now);
    }
    assert_int_equal(fe_pacer_when(&p, 1000000000u, 1024, now), now + 1024);
}

/* A packet larger than the burst leaves when the bucket is full and leaves a debt: burst 100,
 * packet 1000 at 1e9 B/s: after it, the credit is -900 bytes and the next one needs 100, so it
 * waits 1000 ns. Burst 0 is strict pacing: 1000 bytes every 1000 ns. */
static void packet_larger_than_burst(void **state)
{
    (void)state;
    struct fe_pacer p;
    fe_pacer_init(&p, 100, 0);
    assert_int_equal(fe_pacer_when(&p, 1000000000u, 1000, 0), 0);
    fe_pacer_consume(&p, 1000000000u, 1000, 0);
    assert_int_equal(fe_pacer_when(&p, 1000000000u, 1000, 0), 1000);

    fe_pacer_init(&p, 0, 0);
    uint64_t t = 0;
    for (int k = 0; k < 10; k++) {
        t = fe_pacer_when(&p, 1000000000u, 1000, t);
        assert_int_equal(t, (uint64_t)k * 1000);
        fe_pacer_consume(&p, 1000000000u, 1000, t);
    }
}

/* Unlimited rate: always now. Rate 0: never. */
static void unlimited_and_zero(void **state)
{
    (void)state;
    struct fe_pacer p;
    fe_pacer_init(&p, 1000, 0);
    fe_pacer_consume(&p, FE_CC_UNLIMITED, 1000, 0);
    assert_int_equal(fe_pacer_when(&p, FE_CC_UNLIMITED, 1000, 7), 7);
    fe_pacer_consume(&p, 1000, 1000, 0);
    assert_true(fe_pacer_when(&p, 0, 1000, 1000000) == FE_CC_NO_TIMER);
}

/* Time elapsed before a rate change is paid at the old rate once banked with sync: 1000 ns at
 * 1e9 B/s = 1000 bytes; then at 1 B/s the remaining 1000 bytes of a 2000-byte packet take
 * 1000 s. Without the sync the same call would see 1000 ns at 1 B/s: no credit at all. */
static void sync_on_rate_change(void **state)
{
    (void)state;
    struct fe_pacer p;
    fe_pacer_init(&p, 4096, 0);
    fe_pacer_consume(&p, 1000000000u, 4096, 0); /* credit 0 */
    fe_pacer_sync(&p, 1000000000u, 1000);
    assert_int_equal(fe_pacer_when(&p, 1, 2000, 1000), 1000 + 1000ull * 1000000000u);
}

/* Extremes must neither overflow nor stall: enormous rates and gaps, huge bursts, and a caller
 * that never waits (the debt saturates instead of wrapping). */
static void extremes(void **state)
{
    (void)state;
    struct fe_pacer p;
    fe_pacer_init(&p, UINT64_MAX, 0);
    assert_int_equal(p.burst_bytes, UINT32_MAX);
    fe_pacer_consume(&p, UINT64_MAX - 1, UINT32_MAX, 0);
    assert_int_equal(fe_pacer_when(&p, UINT64_MAX - 1, UINT32_MAX, UINT64_MAX - 10),
                     UINT64_MAX - 10);
    for (int i = 0; i < 10000; i++) fe_pacer_consume(&p, 1, UINT32_MAX, 0);
    assert_true(p.credit < 0);
    uint64_t w = fe_pacer_when(&p, 1, 1, 0);
    assert_true(w > 1000000000ull * 1000000000ull); /* debt of > 1e9 s at 1 B/s */
    /* time going backwards is treated as no time elapsed */
    fe_pacer_init(&p, 1000, 1000);
    fe_pacer_consume(&p, 1000000000u, 1000, 1000);
    assert_int_equal(fe_pacer_when(&p, 1000000000u, 1000, 10), 2000);
}

/* The requester's shortcut, a release priced from the pacer's last update without a look at
 * the cap, must answer as fe_pacer_when does: random states (credit full, capped, short, in
 * debt), rates (0, 1, ordinary, beyond the slack limit, unlimited) and sizes (0, within, beyond
 * the burst). */
static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void when_from_last_matches(void **state)
{
    (void)state;
    static const uint64_t rates[] = {0,
                                     1,
                                     3,
                                     125000,
                                     300000000u,
                                     1250000000u,
                                     FE_PACER_MAX_SLACK - 1,
                                     FE_PACER_MAX_SLACK,
                                     FE_PACER_MAX_SLACK + 7,
                                     UINT64_MAX - 1,
                                     FE_CC_UNLIMITED};
    static const uint64_t bursts[] = {0, 1, 1000, 4096, 65536, UINT32_MAX};
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 200000; i++) {
        struct fe_pacer p;
        uint64_t burst = bursts[rnd(&x) % (sizeof bursts / sizeof bursts[0])];
        uint64_t rate = rates[rnd(&x) % (sizeof rates / sizeof rates[0])];
        if (rnd(&x) % 4 == 0) rate = rnd(&x) % 100000000000ull;
        uint64_t last = rnd(&x) % 4 ? rnd(&x) % 1000000000000ull : UINT64_MAX - rnd(&x) % 1000;
        fe_pacer_init(&p, burst, last);
        /* a credit anywhere from a saturated debt to beyond the cap */
        int64_t cap = fe_pacer_cap(&p, rate);
        switch (rnd(&x) % 5) {
        case 0:
            p.credit = cap;
            break;
        case 1:
            p.credit = cap + (int64_t)(rnd(&x) % 1000);
            break;
        case 2:
            p.credit = FE_PACER_DEBT_FLOOR + (int64_t)(rnd(&x) % 1000);
            break;
        default:
            p.credit = cap - (int64_t)(rnd(&x) % ((uint64_t)cap + 5000000000000ull + 1));
        }
        uint32_t bytes = (uint32_t)(rnd(&x) % 3 ? rnd(&x) % 9000 : rnd(&x));
        assert_int_equal(fe_pacer_when_from_last_inline(&p, rate, bytes),
                         fe_pacer_when(&p, rate, bytes, p.last_ns));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_packet_then_wait),
        cmocka_unit_test(no_drift),
        cmocka_unit_test(burst_cap),
        cmocka_unit_test(packet_larger_than_burst),
        cmocka_unit_test(unlimited_and_zero),
        cmocka_unit_test(sync_on_rate_change),
        cmocka_unit_test(extremes),
        cmocka_unit_test(when_from_last_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
