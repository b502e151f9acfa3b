/* Event assembly at one builder: completion, refusals by reason, the timeout, late fragments,
 * release and the ring watermark, skipped positions, the immediate's wrap rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "feroce/eb.h"

#define MS 1000000ull

static struct fe_eb_asm *make(uint32_t n_sources, uint32_t n_slots, uint64_t timeout_ns)
{
    struct fe_eb_asm_config c;
    fe_eb_asm_config_default(&c);
    c.n_sources = n_sources;
    c.n_slots = n_slots;
    c.frag_max_bytes = 1000;
    c.timeout_ns = timeout_ns;
    struct fe_eb_asm *a;
    assert_int_equal(fe_eb_asm_create(&a, &c), 0);
    return a;
}

static int frag(struct fe_eb_asm *a, uint64_t now, uint32_t src, uint32_t slot, uint64_t ev,
                struct fe_eb_event *done)
{
    unsigned bits = fe_eb_asm_slot_bits(a);
    return fe_eb_asm_fragment(a, now, src, fe_eb_imm_make(bits, slot, ev), 100, done);
}

static void completes_when_all_arrived(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(3, 4, MS);
    struct fe_eb_event d;
    assert_int_equal(frag(a, 10, 2, 0, 0, &d), FE_EB_F_OK);
    assert_int_equal(frag(a, 11, 0, 0, 0, &d), FE_EB_F_OK);
    assert_int_equal(frag(a, 12, 1, 0, 0, &d), FE_EB_F_COMPLETE);
    assert_int_equal(d.event, 0);
    assert_int_equal(d.slot, 0);
    assert_int_equal(d.seq, 0);
    assert_int_equal(d.state, FE_EB_SLOT_COMPLETE);
    assert_int_equal(d.n_arrived, 3);
    assert_int_equal(d.bytes, 300);
    assert_int_equal(d.first_ns, 10);
    assert_int_equal(fe_eb_asm_stats(a)->complete, 1);
    /* a duplicate after completion, and nothing reopens it */
    assert_int_equal(frag(a, 13, 1, 0, 0, &d), FE_EB_F_DUPLICATE);
    assert_int_equal(fe_eb_asm_released(a), 0);
    assert_int_equal(fe_eb_asm_release(a, 14, 0), 0);
    assert_int_equal(fe_eb_asm_released(a), 1);
    assert_int_equal(fe_eb_asm_release(a, 14, 0), FE_ESTATE);
    /* after release, its fragments are late: never built twice */
    assert_int_equal(frag(a, 15, 0, 0, 0, &d), FE_EB_F_LATE);
    assert_int_equal(fe_eb_asm_stats(a)->refused[FE_EB_F_LATE], 1);
    fe_eb_asm_destroy(a);
}

static void refusals_by_reason(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(2, 4, MS);
    unsigned bits = fe_eb_asm_slot_bits(a);
    assert_int_equal(bits, 2);
    assert_int_equal(fe_eb_asm_fragment(a, 0, 2, fe_eb_imm_make(bits, 0, 0), 1, NULL),
                     FE_EB_F_SOURCE);
    assert_int_equal(fe_eb_asm_fragment(a, 0, 0, fe_eb_imm_make(bits, 0, 0), 1001, NULL),
                     FE_EB_F_LENGTH);
    assert_int_equal(frag(a, 0, 0, 1, 1, NULL), FE_EB_F_OK);
    assert_int_equal(frag(a, 0, 0, 1, 1, NULL), FE_EB_F_DUPLICATE);
    /* slot 1 holds event 1: event 5 for the same slot is an overrun, refused */
    assert_int_equal(frag(a, 0, 1, 1, 5, NULL), FE_EB_F_OVERRUN);
    const struct fe_eb_asm_stats *st = fe_eb_asm_stats(a);
    assert_int_equal(st->refused[FE_EB_F_SOURCE], 1);
    assert_int_equal(st->refused[FE_EB_F_LENGTH], 1);
    assert_int_equal(st->refused[FE_EB_F_DUPLICATE], 1);
    assert_int_equal(st->refused[FE_EB_F_OVERRUN], 1);
    assert_int_equal(st->fragments, 1);
    fe_eb_asm_destroy(a);

    /* 3 slots in 2 bits: slot index 3 does not exist */
    a = make(1, 3, MS);
    assert_int_equal(frag(a, 0, 0, 3, 0, NULL), FE_EB_F_SLOT);
    fe_eb_asm_destroy(a);
}

static void timeout_declares_incomplete_with_missing(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(130, 8, MS);
    struct fe_eb_event d;
    assert_int_equal(fe_eb_asm_next_deadline(a), UINT64_MAX);
    for (uint32_t s = 0; s < 130; s++)
        if (s != 7 && s != 129) assert_int_equal(frag(a, 100, s, 0, 0, &d), FE_EB_F_OK);
    assert_int_equal(fe_eb_asm_next_deadline(a), 100 + MS);
    assert_int_equal(fe_eb_asm_expire(a, 100 + MS - 1, &d), 0);
    assert_int_equal(fe_eb_asm_expire(a, 100 + MS, &d), 1);
    assert_int_equal(d.state, FE_EB_SLOT_INCOMPLETE);
    assert_int_equal(d.n_arrived, 128);
    assert_int_equal(d.n_expected, 130);
    uint32_t miss[4];
    assert_int_equal(fe_eb_asm_missing(a, 0, miss, 4), 2);
    assert_int_equal(miss[0], 7);
    assert_int_equal(miss[1], 129);
    assert_int_equal(fe_eb_asm_expire(a, 100 + MS, &d), 0);
    /* the missing source arrives late: counted, the event stays incomplete */
    assert_int_equal(frag(a, 200 + MS, 7, 0, 0, &d), FE_EB_F_LATE);
    assert_int_equal(fe_eb_asm_slot_state(a, 0), FE_EB_SLOT_INCOMPLETE);
    assert_int_equal(frag(a, 200 + MS, 3, 0, 0, &d), FE_EB_F_DUPLICATE);
    assert_int_equal(fe_eb_asm_release(a, 300 + MS, 0), 0);
    assert_int_equal(frag(a, 400 + MS, 129, 0, 0, &d), FE_EB_F_LATE);
    assert_int_equal(fe_eb_asm_stats(a)->incomplete, 1);
    fe_eb_asm_destroy(a);
}

/* Deadlines in opening order: the second event's expiry waits for its own timeout, and a
 * completed event leaves the deadline list. */
static void deadlines_in_order(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(2, 4, 1000);
    struct fe_eb_event d;
    frag(a, 0, 0, 0, 0, &d);
    frag(a, 10, 0, 1, 1, &d);
    frag(a, 20, 0, 2, 2, &d);
    assert_int_equal(frag(a, 30, 1, 0, 0, &d), FE_EB_F_COMPLETE);
    assert_int_equal(fe_eb_asm_next_deadline(a), 1010);
    assert_int_equal(fe_eb_asm_expire(a, 1015, &d), 1);
    assert_int_equal(d.event, 1);
    assert_int_equal(fe_eb_asm_expire(a, 1015, &d), 0);
    assert_int_equal(fe_eb_asm_next_deadline(a), 1020);
    fe_eb_asm_destroy(a);
}

/* The watermark counts releases in ring order: an out-of-order release waits for the earlier
 * slot. */
static void watermark_in_ring_order(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(1, 4, MS);
    for (uint32_t e = 0; e < 4; e++) assert_int_equal(frag(a, e, 0, e, e, NULL), FE_EB_F_COMPLETE);
    assert_int_equal(fe_eb_asm_release(a, 5, 1), 0);
    assert_int_equal(fe_eb_asm_release(a, 5, 2), 0);
    assert_int_equal(fe_eb_asm_released(a), 0);
    assert_int_equal(fe_eb_asm_release(a, 6, 0), 0);
    assert_int_equal(fe_eb_asm_released(a), 3);
    assert_int_equal(fe_eb_asm_release(a, 7, 3), 0);
    assert_int_equal(fe_eb_asm_released(a), 4);
    /* second lap: event 4 in slot 0 */
    assert_int_equal(frag(a, 8, 0, 0, 4, NULL), FE_EB_F_COMPLETE);
    fe_eb_asm_destroy(a);
}

/* A ring position no fragment reached while later ones did is skipped after a timeout, so the
 * watermark moves on; its stragglers are late. */
static void unreached_position_is_skipped(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(1, 4, 1000);
    struct fe_eb_event d;
    assert_int_equal(frag(a, 0, 0, 0, 0, &d), FE_EB_F_COMPLETE);
    assert_int_equal(fe_eb_asm_release(a, 1, 0), 0);
    /* seq 1 (event 1, slot 1) never comes; seq 2 does */
    assert_int_equal(frag(a, 100, 0, 2, 2, &d), FE_EB_F_COMPLETE);
    assert_int_equal(fe_eb_asm_release(a, 101, 2), 0);
    assert_int_equal(fe_eb_asm_released(a), 1);
    assert_int_equal(fe_eb_asm_next_deadline(a), 1100);
    assert_int_equal(fe_eb_asm_expire(a, 1099, &d), 0);
    assert_int_equal(fe_eb_asm_expire(a, 1100, &d), 1);
    assert_int_equal(d.state, FE_EB_SLOT_FREE);
    assert_int_equal(d.seq, 1);
    assert_int_equal(d.slot, 1);
    assert_int_equal(fe_eb_asm_released(a), 3);
    assert_int_equal(fe_eb_asm_stats(a)->skipped, 1);
    assert_int_equal(frag(a, 1200, 0, 1, 1, &d), FE_EB_F_LATE);
    assert_int_equal(fe_eb_asm_next_deadline(a), UINT64_MAX);
    fe_eb_asm_destroy(a);
}

/* The waited-for position arrives after all: no deadline is left behind (a stale one would wake
 * the caller in a loop). */
static void late_head_clears_wait(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(1, 4, 1000);
    assert_int_equal(frag(a, 0, 0, 0, 0, NULL), FE_EB_F_COMPLETE);
    assert_int_equal(fe_eb_asm_release(a, 1, 0), 0);
    assert_int_equal(frag(a, 100, 0, 2, 2, NULL), FE_EB_F_COMPLETE);
    assert_int_equal(fe_eb_asm_next_deadline(a), 1100);
    assert_int_equal(frag(a, 200, 0, 1, 1, NULL), FE_EB_F_COMPLETE);
    assert_int_equal(fe_eb_asm_next_deadline(a), UINT64_MAX);
    fe_eb_asm_destroy(a);
}

/* Immediate wrap rule: 4 slots leave 30 event bits; the event is read relative to the newest
 * one opened, so counting past 2^30 continues. */
static void immediate_wraps(void **state)
{
    (void)state;
    assert_int_equal(fe_eb_slot_bits(1), 0);
    assert_int_equal(fe_eb_slot_bits(4), 2);
    assert_int_equal(fe_eb_slot_bits(5), 3);
    assert_int_equal(fe_eb_slot_bits(65536), 16);
    uint64_t span = 1ull << 30;
    uint32_t imm = fe_eb_imm_make(2, 3, span + 5);
    assert_int_equal(fe_eb_imm_slot(2, imm), 3);
    assert_int_equal(fe_eb_imm_event(2, imm, span - 10), span + 5);
    assert_int_equal(fe_eb_imm_event(2, fe_eb_imm_make(2, 0, span - 3), span + 2), span - 3);
    /* nothing below event 0 */
    assert_int_equal(fe_eb_imm_event(2, fe_eb_imm_make(2, 0, span - 1), 0), span - 1);
    assert_int_equal(fe_eb_imm_event(0, 7, 0xFFFFFFF0ull), 0x100000007ull);

    struct fe_eb_asm_config c;
    fe_eb_asm_config_default(&c);
    c.n_slots = 4;
    c.first_event = span - 4;
    struct fe_eb_asm *a;
    assert_int_equal(fe_eb_asm_create(&a, &c), 0);
    struct fe_eb_event d;
    for (uint64_t e = span - 4; e < span + 6; e++) {
        uint32_t slot = (uint32_t)(e % 4);
        assert_int_equal(fe_eb_asm_fragment(a, e, 0, fe_eb_imm_make(2, slot, e), 1, &d),
                         FE_EB_F_COMPLETE);
        assert_int_equal(d.event, e);
        assert_int_equal(fe_eb_asm_release(a, e, slot), 0);
    }
    fe_eb_asm_destroy(a);
}

/* Round-robin: a builder knows each event's ring position (E div M); a front-end ahead of the
 * builder's watermark by a whole ring is refused (overrun: the RNR back-pressure), a position
 * already passed is late, and a fragment in the wrong slot is refused. */
static void round_robin_positions(void **state)
{
    (void)state;
    struct fe_eb_asm_config c;
    fe_eb_asm_config_default(&c);
    c.n_slots = 2;
    c.rr_builders = 3; /* this is builder 1 of 3: events 1, 4, 7, 10, ... */
    c.timeout_ns = 100;
    struct fe_eb_asm *a;
    assert_int_equal(fe_eb_asm_create(&a, &c), 0);
    unsigned bits = fe_eb_asm_slot_bits(a);
    struct fe_eb_event d;
    assert_int_equal(fe_eb_asm_fragment(a, 0, 0, fe_eb_imm_make(bits, 1, 1), 1, &d), FE_EB_F_SLOT);
    /* event 4 (position 1) arrives before event 1 (position 0) */
    assert_int_equal(fe_eb_asm_fragment(a, 0, 0, fe_eb_imm_make(bits, 1, 4), 1, &d),
                     FE_EB_F_COMPLETE);
    assert_int_equal(d.seq, 1);
    assert_int_equal(fe_eb_asm_release(a, 1, 1), 0);
    /* event 7 (position 2, slot 0) is a ring ahead of the watermark (0): refused */
    assert_int_equal(fe_eb_asm_fragment(a, 2, 0, fe_eb_imm_make(bits, 0, 7), 1, &d),
                     FE_EB_F_OVERRUN);
    assert_int_equal(fe_eb_asm_released(a), 0);
    /* event 1 never comes: position 0 is skipped after the timeout, as event 4 was reached */
    assert_int_equal(fe_eb_asm_expire(a, 100, &d), 1);
    assert_int_equal(d.state, FE_EB_SLOT_FREE);
    assert_int_equal(d.seq, 0);
    assert_int_equal(fe_eb_asm_released(a), 2);
    assert_int_equal(fe_eb_asm_fragment(a, 101, 0, fe_eb_imm_make(bits, 0, 1), 1, &d),
                     FE_EB_F_LATE);
    assert_int_equal(fe_eb_asm_fragment(a, 102, 0, fe_eb_imm_make(bits, 0, 7), 1, &d),
                     FE_EB_F_COMPLETE);
    assert_int_equal(d.seq, 2);
    fe_eb_asm_destroy(a);
}

/* Round-robin, a builder that joined late at E0 = 10 (builder 1 of 3, 2 slots): its ring
 * starts at position 10 div 3 = 3, events before are late (the front-ends dropped them), and
 * nothing waits for positions 0..2. */
static void round_robin_late_start(void **state)
{
    (void)state;
    struct fe_eb_asm_config c;
    fe_eb_asm_config_default(&c);
    c.n_slots = 2;
    c.rr_builders = 3;
    c.first_event = 10;
    c.timeout_ns = 100;
    struct fe_eb_asm *a;
    assert_int_equal(fe_eb_asm_create(&a, &c), 0);
    unsigned bits = fe_eb_asm_slot_bits(a);
    struct fe_eb_event d;
    assert_int_equal(fe_eb_asm_released(a), 3);
    assert_int_equal(fe_eb_asm_next_deadline(a), UINT64_MAX);
    assert_int_equal(fe_eb_asm_fragment(a, 0, 0, fe_eb_imm_make(bits, 0, 7), 1, &d), FE_EB_F_LATE);
    assert_int_equal(fe_eb_asm_fragment(a, 0, 0, fe_eb_imm_make(bits, 1, 10), 1, &d),
                     FE_EB_F_COMPLETE);
    assert_int_equal(d.seq, 3);
    assert_int_equal(fe_eb_asm_release(a, 1, 1), 0);
    assert_int_equal(fe_eb_asm_released(a), 4);
    /* event 19 (position 6) is a ring ahead of the watermark (4): refused */
    assert_int_equal(fe_eb_asm_fragment(a, 2, 0, fe_eb_imm_make(bits, 0, 19), 1, &d),
                     FE_EB_F_OVERRUN);
    assert_int_equal(fe_eb_asm_fragment(a, 2, 0, fe_eb_imm_make(bits, 0, 13), 1, &d),
                     FE_EB_F_COMPLETE);
    assert_int_equal(d.seq, 4);
    assert_int_equal(fe_eb_asm_expire(a, 1000, &d), 0);
    assert_int_equal(fe_eb_asm_stats(a)->skipped, 0);
    fe_eb_asm_destroy(a);
}

/* Tables: positions the front-ends have passed are skipped after the timeout even when no later
 * one was reached (every source was busy for them), and the floor makes their stragglers late. */
static void passed_positions_are_skipped(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(2, 4, 1000);
    struct fe_eb_event d;
    fe_eb_asm_passed(a, 50, 2, 10); /* positions 0 and 1 hold events below 10 */
    assert_int_equal(fe_eb_asm_next_deadline(a), 1050);
    assert_int_equal(fe_eb_asm_expire(a, 1050, &d), 1);
    assert_int_equal(d.seq, 0);
    assert_int_equal(fe_eb_asm_expire(a, 1050, &d), 1);
    assert_int_equal(d.seq, 1);
    assert_int_equal(fe_eb_asm_expire(a, 1050, &d), 0);
    assert_int_equal(fe_eb_asm_released(a), 2);
    assert_int_equal(fe_eb_asm_stats(a)->skipped, 2);
    /* event 5 was one of them: late; event 12 takes position 2 (slot 2) */
    assert_int_equal(frag(a, 1100, 0, 0, 5, &d), FE_EB_F_LATE);
    assert_int_equal(frag(a, 1100, 0, 2, 12, &d), FE_EB_F_OK);
    fe_eb_asm_passed(a, 1100, 1, 5); /* older news: ignored */
    assert_int_equal(fe_eb_asm_next_deadline(a), 2100);
    fe_eb_asm_destroy(a);
}

/* Tables: events increase along the ring, so an event claiming a slot out of that order is
 * refused, and an event built at one position is never built again at another. */
static void ring_order_enforced(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(1, 4, 1000);
    assert_int_equal(frag(a, 0, 0, 0, 10, NULL), FE_EB_F_COMPLETE);
    assert_int_equal(frag(a, 0, 0, 2, 30, NULL), FE_EB_F_COMPLETE);
    assert_int_equal(frag(a, 0, 0, 1, 40, NULL), FE_EB_F_SLOT); /* after 30, before it */
    assert_int_equal(frag(a, 0, 0, 1, 5, NULL), FE_EB_F_SLOT);  /* before 10 */
    assert_int_equal(frag(a, 0, 0, 1, 10, NULL), FE_EB_F_SLOT); /* 10 again */
    assert_int_equal(frag(a, 0, 0, 1, 20, NULL), FE_EB_F_COMPLETE);
    for (uint32_t j = 0; j < 3; j++) assert_int_equal(fe_eb_asm_release(a, 1, j), 0);
    assert_int_equal(fe_eb_asm_released(a), 3);
    /* below the watermark: 30 was released there */
    assert_int_equal(frag(a, 2, 0, 3, 30, NULL), FE_EB_F_SLOT);
    assert_int_equal(frag(a, 2, 0, 3, 31, NULL), FE_EB_F_COMPLETE);
    assert_int_equal(fe_eb_asm_stats(a)->refused[FE_EB_F_SLOT], 4);
    fe_eb_asm_destroy(a);
}

static void expected_subset(void **state)
{
    (void)state;
    struct fe_eb_asm *a = make(70, 2, MS);
    uint64_t bm[2] = {0, 0};
    assert_int_equal(fe_eb_asm_set_expected(a, bm), FE_EINVAL);
    bm[1] = 1ull << 6; /* source 70: does not exist */
    assert_int_equal(fe_eb_asm_set_expected(a, bm), FE_EINVAL);
    bm[0] = 1ull << 3;
    bm[1] = 1ull << 5; /* sources 3 and 69 */
    assert_int_equal(fe_eb_asm_set_expected(a, bm), 0);
    assert_int_equal(frag(a, 0, 4, 0, 0, NULL), FE_EB_F_SOURCE);
    assert_int_equal(fe_eb_asm_slot_state(a, 0), FE_EB_SLOT_FREE);
    assert_int_equal(frag(a, 0, 69, 0, 0, NULL), FE_EB_F_OK);
    assert_int_equal(frag(a, 0, 5, 0, 0, NULL), FE_EB_F_SOURCE);
    assert_int_equal(frag(a, 0, 3, 0, 0, NULL), FE_EB_F_COMPLETE);
    fe_eb_asm_destroy(a);
}

static void bad_config(void **state)
{
    (void)state;
    struct fe_eb_asm_config c;
    fe_eb_asm_config_default(&c);
    struct fe_eb_asm *a;
    c.n_sources = 0;
    assert_int_equal(fe_eb_asm_create(&a, &c), FE_EINVAL);
    fe_eb_asm_config_default(&c);
    c.n_slots = FE_EB_MAX_SLOTS + 1;
    assert_int_equal(fe_eb_asm_create(&a, &c), FE_EINVAL);
    assert_null(a);
    assert_string_equal(fe_eb_frag_name(FE_EB_F_LATE), "late");
    assert_string_equal(fe_eb_frag_name(99), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(completes_when_all_arrived),
        cmocka_unit_test(refusals_by_reason),
        cmocka_unit_test(timeout_declares_incomplete_with_missing),
        cmocka_unit_test(deadlines_in_order),
        cmocka_unit_test(watermark_in_ring_order),
        cmocka_unit_test(unreached_position_is_skipped),
        cmocka_unit_test(late_head_clears_wait),
        cmocka_unit_test(immediate_wraps),
        cmocka_unit_test(round_robin_positions),
        cmocka_unit_test(round_robin_late_start),
        cmocka_unit_test(passed_positions_are_skipped),
        cmocka_unit_test(ring_order_enforced),
        cmocka_unit_test(expected_subset),
        cmocka_unit_test(bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
