/* Assignment: round-robin, the front-end's tables, the event manager's credits and its bounds
 * for a full, slow or gone builder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/eb.h"

static void round_robin(void **state)
{
    (void)state;
    struct fe_eb_target t = fe_eb_rr_assign(0, 3, 4);
    assert_int_equal(t.builder, 0);
    assert_int_equal(t.slot, 0);
    t = fe_eb_rr_assign(7, 3, 4); /* 7 = 2 * 3 + 1 */
    assert_int_equal(t.builder, 1);
    assert_int_equal(t.slot, 2);
    t = fe_eb_rr_assign(12 * 5 + 2, 3, 4); /* 20th event of builder 2: slot 20 mod 4 */
    assert_int_equal(t.builder, 2);
    assert_int_equal(t.slot, 0);
    /* the ring rule: builder b's k-th event goes to slot k mod S */
    for (uint64_t e = 0; e < 1000; e++) {
        t = fe_eb_rr_assign(e, 5, 8);
        assert_int_equal(t.slot, (e / 5) % 8);
    }
    assert_int_equal(fe_eb_frag_offset(3, 4096, 5, 256), 3 * 4096 + 5 * 256);
}

/* Round-robin writes only into free slots: 3 builders, 4 slots; with nothing released, events
 * 0..11 (positions 0..3) may go and event 12 (position 4, slot 0 again) waits until the builder
 * has released one position. */
static void round_robin_may_write(void **state)
{
    (void)state;
    for (uint64_t e = 0; e < 12; e++) assert_true(fe_eb_rr_may_write(e, 3, 0, 4));
    assert_false(fe_eb_rr_may_write(12, 3, 0, 4));
    assert_false(fe_eb_rr_may_write(14, 3, 0, 4));
    assert_true(fe_eb_rr_may_write(12, 3, 1, 4));
    assert_false(fe_eb_rr_may_write(15, 3, 1, 4));
}

static struct fe_eb_table chunk(uint64_t first, unsigned n, const struct fe_eb_run *runs)
{
    struct fe_eb_table c;
    memset(&c, 0, sizeof c);
    c.first_event = first;
    c.n_runs = (uint8_t)n;
    memcpy(c.run, runs, n * sizeof *runs);
    return c;
}

static void fe_table_lookup(void **state)
{
    (void)state;
    struct fe_eb_fe_table *t;
    assert_int_equal(fe_eb_fe_table_create(&t, 4, 8, 100), 0);
    struct fe_eb_target x;
    assert_int_equal(fe_eb_fe_table_lookup(t, 100, &x), FE_EAGAIN); /* busy: no table */
    struct fe_eb_run r1[] = {{1, 6, 3}, {2, 0, 2}};
    struct fe_eb_table c1 = chunk(100, 2, r1);
    assert_int_equal(fe_eb_table_events(&c1), 5);
    assert_int_equal(fe_eb_fe_table_add(t, &c1), 0);
    assert_int_equal(fe_eb_fe_table_end(t), 105);
    uint16_t want_b[] = {1, 1, 1, 2, 2};
    uint32_t want_s[] = {6, 7, 0, 0, 1}; /* slots wrap mod 8 */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(fe_eb_fe_table_lookup(t, 100 + (uint64_t)i, &x), 0);
        assert_int_equal(x.builder, want_b[i]);
        assert_int_equal(x.slot, want_s[i]);
    }
    assert_int_equal(fe_eb_fe_table_lookup(t, 105, &x), FE_EAGAIN);
    /* a retransmission is ignored; a chunk past the end is a gap */
    assert_int_equal(fe_eb_fe_table_add(t, &c1), 1);
    struct fe_eb_run r2[] = {{0, 0, 4}};
    struct fe_eb_table c2 = chunk(106, 1, r2);
    assert_int_equal(fe_eb_fe_table_add(t, &c2), FE_EAGAIN);
    /* overlapping: only the new events are taken */
    struct fe_eb_run r3[] = {{2, 0, 3}, {0, 0, 2}};
    struct fe_eb_table c3 = chunk(103, 2, r3);
    assert_int_equal(fe_eb_fe_table_add(t, &c3), 0);
    assert_int_equal(fe_eb_fe_table_end(t), 108);
    assert_int_equal(fe_eb_fe_table_lookup(t, 104, &x), 0);
    assert_int_equal(x.builder, 2);
    assert_int_equal(x.slot, 1);
    assert_int_equal(fe_eb_fe_table_lookup(t, 105, &x), 0);
    assert_int_equal(x.builder, 2);
    assert_int_equal(x.slot, 2);
    assert_int_equal(fe_eb_fe_table_lookup(t, 107, &x), 0);
    assert_int_equal(x.builder, 0);
    assert_int_equal(x.slot, 1);
    /* lookups out of order (binary search) */
    assert_int_equal(fe_eb_fe_table_lookup(t, 101, &x), 0);
    assert_int_equal(x.slot, 7);
    /* full: 4 runs held (1, 2, 2', 0) */
    struct fe_eb_run r4[] = {{3, 0, 1}};
    struct fe_eb_table c4 = chunk(108, 1, r4);
    assert_int_equal(fe_eb_fe_table_add(t, &c4), FE_ENOSPC);
    fe_eb_fe_table_forget(t, 103);
    assert_int_equal(fe_eb_fe_table_lookup(t, 102, &x), FE_ENOENT);
    assert_int_equal(fe_eb_fe_table_add(t, &c4), 0);
    assert_int_equal(fe_eb_fe_table_lookup(t, 108, &x), 0);
    assert_int_equal(x.builder, 3);
    /* still partly held: a duplicate; once forgotten: old */
    assert_int_equal(fe_eb_fe_table_add(t, &c1), 1);
    fe_eb_fe_table_forget(t, 108);
    assert_int_equal(fe_eb_fe_table_add(t, &c1), 1);
    const struct fe_eb_fe_stats *st = fe_eb_fe_table_stats(t);
    assert_int_equal(st->chunks_added, 3);
    assert_int_equal(st->chunks_dup, 2);
    assert_int_equal(st->chunks_old, 1);
    assert_int_equal(st->chunks_gap, 1);
    assert_int_equal(st->chunks_full, 1);
    assert_int_equal(st->busy, 2);
    assert_int_equal(st->stale, 1);
    /* invalid chunks */
    struct fe_eb_run bad[] = {{0, 8, 1}};
    struct fe_eb_table cb = chunk(109, 1, bad);
    assert_int_equal(fe_eb_fe_table_add(t, &cb), FE_EINVAL);
    fe_eb_fe_table_destroy(t);
}

static struct fe_eb_mgr mgr(uint32_t n_builders, uint32_t n_slots, uint32_t reserve,
                            uint32_t run_events, uint64_t lead)
{
    struct fe_eb_mgr_config c;
    fe_eb_mgr_config_default(&c);
    c.n_builders = n_builders;
    c.n_slots = n_slots;
    c.reserve = reserve;
    c.run_events = run_events;
    c.lead_events = lead;
    c.builder_timeout_ns = 1000;
    struct fe_eb_mgr m;
    assert_int_equal(fe_eb_mgr_init(&m, &c), 0);
    return m;
}

/* Builders are assigned in turns, each run's slots continue that builder's ring. */
static void manager_interleaves(void **state)
{
    (void)state;
    struct fe_eb_mgr m = mgr(3, 8, 2, 1, 12);
    struct fe_eb_table c;
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 0); /* no builder has announced */
    assert_int_equal(m.stats.starved, 1);
    for (uint16_t b = 0; b < 3; b++) assert_int_equal(fe_eb_mgr_announce(&m, 0, b, 0), 0);
    assert_int_equal(fe_eb_mgr_credits(&m, 0), 6);
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 1);
    assert_int_equal(c.first_event, 0);
    assert_int_equal(c.n_runs, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(c.run[i].builder, i % 3);
        assert_int_equal(c.run[i].first_slot, i / 3);
        assert_int_equal(c.run[i].count, 1);
    }
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 1);
    assert_int_equal(c.first_event, 5);
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 1);
    assert_int_equal(c.first_event, 10);
    assert_int_equal(fe_eb_table_events(&c), 2);
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 0); /* lead of 12 reached */
    /* less than half the lead left: refilled up to the lead, as far as credits go */
    fe_eb_mgr_progress(&m, 5);
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 0);
    fe_eb_mgr_progress(&m, 7);
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 1);
    assert_int_equal(c.first_event, 12);
    assert_int_equal(fe_eb_table_events(&c), 5);
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 1);
    assert_int_equal(c.first_event, 17);
    assert_int_equal(fe_eb_table_events(&c), 1);
    /* 18 events, 6 per builder: no credit left anywhere */
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 0);
    assert_int_equal(m.stats.starved, 2);
    for (uint16_t b = 0; b < 3; b++) assert_int_equal(fe_eb_mgr_credits(&m, b), 0);
    /* a front-end passed events with no table: they are not assigned any more */
    fe_eb_mgr_announce(&m, 0, 0, 6);
    fe_eb_mgr_progress(&m, 30);
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 1);
    assert_int_equal(c.first_event, 30);
    fe_eb_mgr_free(&m);
}

/* A full builder gets nothing until it releases; a slow one gets only what it releases. */
static void full_builder_gets_nothing(void **state)
{
    (void)state;
    struct fe_eb_mgr m = mgr(2, 4, 1, 4, 1000);
    struct fe_eb_table c;
    fe_eb_mgr_announce(&m, 0, 0, 0);
    fe_eb_mgr_announce(&m, 0, 1, 0);
    uint64_t per_b[2] = {0, 0};
    while (fe_eb_mgr_poll(&m, 0, &c))
        for (int i = 0; i < c.n_runs; i++) per_b[c.run[i].builder] += c.run[i].count;
    assert_int_equal(per_b[0], 3); /* S - reserve */
    assert_int_equal(per_b[1], 3);
    assert_int_equal(m.next_event, 6);
    /* builder 1 releases two: it alone gets the next two events */
    assert_int_equal(fe_eb_mgr_announce(&m, 10, 1, 2), 0);
    assert_int_equal(fe_eb_mgr_poll(&m, 10, &c), 1);
    assert_int_equal(c.n_runs, 1);
    assert_int_equal(c.run[0].builder, 1);
    assert_int_equal(c.run[0].first_slot, 3);
    assert_int_equal(c.run[0].count, 2);
    /* a reordered older announcement changes nothing; releasing more than assigned is bad */
    assert_int_equal(fe_eb_mgr_announce(&m, 11, 1, 1), 0);
    assert_int_equal(m.stats.announces_stale, 1);
    assert_int_equal(fe_eb_mgr_announce(&m, 11, 1, 6), FE_EINVAL);
    assert_int_equal(fe_eb_mgr_announce(&m, 11, 7, 0), FE_EINVAL);
    assert_int_equal(m.stats.announces_bad, 2);
    fe_eb_mgr_free(&m);
}

/* A builder that goes silent gets at most its credits after its last announcement, none after
 * the timeout, and never an event beyond progress + lead at the time it is marked down. */
static void silent_builder_bound(void **state)
{
    (void)state;
    struct fe_eb_mgr m = mgr(4, 16, 2, 1, 40);
    struct fe_eb_table c;
    for (uint16_t b = 0; b < 4; b++) fe_eb_mgr_announce(&m, 0, b, 0);
    uint64_t assigned_dead_after = 0, max_dead_event = 0, bound_event = UINT64_MAX;
    uint32_t credits_at_death = 0;
    uint64_t released[4] = {0, 0, 0, 0};
    uint64_t now = 0;
    for (int round = 0; round < 200; round++, now += 100) {
        if (round == 20) credits_at_death = fe_eb_mgr_credits(&m, 3);
        while (fe_eb_mgr_poll(&m, now, &c)) {
            uint64_t e = c.first_event;
            for (int i = 0; i < c.n_runs; i++) {
                if (c.run[i].builder == 3 && round >= 20) {
                    assigned_dead_after += c.run[i].count;
                    max_dead_event = e + c.run[i].count - 1;
                }
                e += c.run[i].count;
            }
        }
        if (round >= 20 && !m.b[3].up && bound_event == UINT64_MAX)
            bound_event = m.progress + m.cfg.lead_events;
        /* the live builders release everything; the front-ends keep up */
        for (uint16_t b = 0; b < 4; b++) {
            if (b == 3 && round >= 20) continue;
            released[b] = m.b[b].assigned;
            fe_eb_mgr_announce(&m, now, b, released[b]);
        }
        fe_eb_mgr_progress(&m, m.next_event);
    }
    assert_false(m.b[3].up);
    assert_int_equal(m.stats.timeouts, 1);
    assert_true(assigned_dead_after <= credits_at_death);
    assert_true(max_dead_event < bound_event);
    assert_true(m.next_event > 1000); /* the others carried on */
    assert_int_equal(fe_eb_mgr_credits(&m, 3), 0);
    assert_int_equal(fe_eb_mgr_next_deadline(&m), now - 100 + 1000);
    /* it comes back */
    fe_eb_mgr_announce(&m, now, 3, m.b[3].assigned);
    assert_int_equal(fe_eb_mgr_credits(&m, 3), 14);
    fe_eb_mgr_builder_down(&m, 3);
    assert_int_equal(fe_eb_mgr_credits(&m, 3), 0);
    fe_eb_mgr_free(&m);
}

static void manager_bad_config(void **state)
{
    (void)state;
    struct fe_eb_mgr_config c;
    fe_eb_mgr_config_default(&c);
    struct fe_eb_mgr m;
    c.reserve = c.n_slots;
    assert_int_equal(fe_eb_mgr_init(&m, &c), FE_EINVAL);
    fe_eb_mgr_config_default(&c);
    c.n_builders = 0;
    assert_int_equal(fe_eb_mgr_init(&m, &c), FE_EINVAL);
}

/* Long runs are merged into one run per builder while the chunk lasts. */
static void runs_merge(void **state)
{
    (void)state;
    struct fe_eb_mgr m = mgr(1, 64, 0, 4, 30);
    struct fe_eb_table c;
    fe_eb_mgr_announce(&m, 0, 0, 0);
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 1);
    assert_int_equal(c.n_runs, 1);
    assert_int_equal(c.run[0].count, 30);
    fe_eb_mgr_free(&m);
}

/* Chunks chain over events the manager skipped; a builder follows its own positions. */
static void skipped_events_and_positions(void **state)
{
    (void)state;
    struct fe_eb_fe_table *t;
    struct fe_eb_positions *p1;
    assert_int_equal(fe_eb_fe_table_create(&t, 16, 8, 0), 0);
    assert_int_equal(fe_eb_positions_create(&p1, 1, 16, 0), 0);
    struct fe_eb_run r1[] = {{0, 0, 2}, {1, 0, 3}, {0, 2, 1}};
    struct fe_eb_table c1 = chunk(0, 3, r1); /* events 0-1 -> b0, 2-4 -> b1, 5 -> b0 */
    assert_int_equal(fe_eb_fe_table_add(t, &c1), 0);
    assert_int_equal(fe_eb_positions_add(p1, &c1), 0);
    /* events 6..9 skipped: the next chunk starts at 10 */
    struct fe_eb_run r2[] = {{1, 3, 2}, {0, 3, 1}, {1, 5, 1}};
    struct fe_eb_table c2 = chunk(10, 3, r2); /* 10-11 -> b1, 12 -> b0, 13 -> b1 */
    struct fe_eb_table gap = c2;
    gap.skipped = 3; /* says the previous chunk ended at 7: a chunk is missing */
    assert_int_equal(fe_eb_fe_table_add(t, &gap), FE_EAGAIN);
    assert_int_equal(fe_eb_positions_add(p1, &gap), FE_EAGAIN);
    c2.skipped = 4;
    assert_int_equal(fe_eb_fe_table_add(t, &c2), 0);
    assert_int_equal(fe_eb_positions_add(p1, &c2), 0);
    struct fe_eb_target x;
    assert_int_equal(fe_eb_fe_table_lookup(t, 7, &x), FE_EAGAIN); /* skipped: busy */
    assert_int_equal(fe_eb_fe_table_lookup(t, 12, &x), 0);
    assert_int_equal(x.builder, 0);
    assert_int_equal(x.slot, 3);
    assert_int_equal(fe_eb_fe_table_lookup(t, 5, &x), 0);
    assert_int_equal(x.slot, 2);
    /* builder 1's positions: 0-2 hold events 2-4, 3-4 hold 10-11, 5 holds 13 */
    uint64_t e;
    uint64_t want[] = {2, 3, 4, 10, 11, 13};
    for (uint64_t s = 0; s < 6; s++) {
        assert_int_equal(fe_eb_positions_event(p1, s, &e), 0);
        assert_int_equal(e, want[s]);
    }
    assert_int_equal(fe_eb_positions_event(p1, 6, &e), FE_ENOENT);
    assert_int_equal(fe_eb_positions_below(p1, 0), 0);
    assert_int_equal(fe_eb_positions_below(p1, 3), 1);
    assert_int_equal(fe_eb_positions_below(p1, 8), 3);
    assert_int_equal(fe_eb_positions_below(p1, 12), 5);
    assert_int_equal(fe_eb_positions_below(p1, 100), 6);
    assert_int_equal(fe_eb_positions_add(p1, &c1), 1); /* held already */
    fe_eb_positions_forget(p1, 3);
    assert_int_equal(fe_eb_positions_event(p1, 1, &e), FE_ENOENT);
    assert_int_equal(fe_eb_positions_event(p1, 3, &e), 0);
    assert_int_equal(e, 10);
    assert_int_equal(fe_eb_positions_below(p1, 5), 3);
    fe_eb_positions_destroy(p1);
    fe_eb_fe_table_destroy(t);
}

/* The manager says how many events it skipped before each chunk. */
static void manager_chunks_chain(void **state)
{
    (void)state;
    struct fe_eb_mgr_config mc;
    fe_eb_mgr_config_default(&mc);
    mc.n_builders = 2;
    mc.lead_events = 8;
    struct fe_eb_mgr m;
    assert_int_equal(fe_eb_mgr_init(&m, &mc), 0);
    fe_eb_mgr_announce(&m, 0, 0, 0);
    fe_eb_mgr_announce(&m, 0, 1, 0);
    struct fe_eb_table c;
    uint64_t end = 0;
    while (fe_eb_mgr_poll(&m, 0, &c)) {
        assert_true(fe_eb_table_continues(&c, end));
        assert_int_equal(c.skipped, 0);
        end = c.first_event + fe_eb_table_events(&c);
    }
    fe_eb_mgr_progress(&m, 20);
    assert_int_equal(fe_eb_mgr_poll(&m, 0, &c), 1);
    assert_int_equal(c.first_event, 20);
    assert_int_equal(c.skipped, 12);
    assert_true(fe_eb_table_continues(&c, end));
    fe_eb_mgr_free(&m);
}

/* Round-robin, a late builder: the first of its events at or after a given one. */
static void rr_first_at(void **state)
{
    (void)state;
    assert_int_equal(fe_eb_rr_first_at(0, 2, 3), 2);
    assert_int_equal(fe_eb_rr_first_at(2, 2, 3), 2);
    assert_int_equal(fe_eb_rr_first_at(3, 2, 3), 5);
    assert_int_equal(fe_eb_rr_first_at(6256, 2, 3), 6257);
    assert_int_equal(fe_eb_rr_first_at(7, 0, 1), 7);
    /* past its last event: its last one, no wrap to a small number */
    uint64_t last = fe_eb_rr_first_at(UINT64_MAX, 1, 3);
    assert_int_equal(last % 3, 1);
    assert_true(last > UINT64_MAX - 3);
}

/* The builder's side of a late join: on time while every proposal is 0; the first late one
 * holds the fragments until every front-end proposed (or the wait passed); E0 is the builder's
 * first event at or after the largest proposal; START goes to each front-end until acknowledged. */
static void rr_join_decides(void **state)
{
    (void)state;
    struct fe_eb_rr_join *j;
    assert_int_equal(fe_eb_rr_join_create(&j, 3, 3, 3, 0), FE_EINVAL);
    fe_eb_rr_join_destroy(j);
    assert_int_equal(fe_eb_rr_join_create(&j, 0, 1, 3, 100), FE_EINVAL);
    assert_int_equal(fe_eb_rr_join_create(&j, 3, 1, 3, 100), 0);
    uint64_t e0 = 0;
    assert_int_equal(fe_eb_rr_join_propose(j, 0, 3, 10, false), FE_EINVAL);
    assert_false(fe_eb_rr_join_waiting(j));
    assert_false(fe_eb_rr_join_first(j, &e0));
    assert_false(fe_eb_rr_join_needs_start(j, 0));
    assert_int_equal(fe_eb_rr_join_deadline(j), UINT64_MAX);
    assert_int_equal(fe_eb_rr_join_propose(j, 10, 1, 1000, false), 0);
    assert_true(fe_eb_rr_join_waiting(j));
    assert_int_equal(fe_eb_rr_join_deadline(j), 110);
    assert_false(fe_eb_rr_join_poll(j, 109));
    assert_int_equal(fe_eb_rr_join_propose(j, 15, 0, 900, false), 0);
    assert_true(fe_eb_rr_join_waiting(j));
    assert_int_equal(fe_eb_rr_join_propose(j, 20, 2, 1002, false), 0);
    assert_false(fe_eb_rr_join_waiting(j));
    assert_true(fe_eb_rr_join_first(j, &e0));
    assert_int_equal(e0, 1003); /* builder 1's first event at or after 1002 */
    /* decided once: a later, larger proposal does not move it */
    assert_int_equal(fe_eb_rr_join_propose(j, 30, 1, 5000, false), 0);
    assert_true(fe_eb_rr_join_first(j, &e0));
    assert_int_equal(e0, 1003);
    for (uint32_t s = 0; s < 3; s++) assert_true(fe_eb_rr_join_needs_start(j, s));
    fe_eb_rr_join_acked(j, 1);
    fe_eb_rr_join_acked(j, 7); /* out of range: ignored */
    assert_false(fe_eb_rr_join_needs_start(j, 1));
    assert_true(fe_eb_rr_join_needs_start(j, 2));
    assert_false(fe_eb_rr_join_needs_start(j, 3));
    fe_eb_rr_join_destroy(j);

    /* a front-end that never answers: decided when the wait passed, with the others */
    assert_int_equal(fe_eb_rr_join_create(&j, 2, 0, 2, 100), 0);
    assert_int_equal(fe_eb_rr_join_propose(j, 50, 0, 41, false), 0);
    assert_false(fe_eb_rr_join_poll(j, 149));
    assert_true(fe_eb_rr_join_poll(j, 150));
    assert_true(fe_eb_rr_join_first(j, &e0));
    assert_int_equal(e0, 42);
    fe_eb_rr_join_destroy(j);

    /* the assembly took fragments already: the ring stays where it began */
    assert_int_equal(fe_eb_rr_join_create(&j, 2, 1, 2, 100), 0);
    assert_int_equal(fe_eb_rr_join_propose(j, 0, 1, 500, true), 0);
    assert_true(fe_eb_rr_join_first(j, &e0));
    assert_int_equal(e0, 1);
    fe_eb_rr_join_destroy(j);
}

/* Every proposal 0: on time, nothing decided, no START. */
static void rr_join_on_time(void **state)
{
    (void)state;
    struct fe_eb_rr_join *j;
    uint64_t e0 = 0;
    assert_int_equal(fe_eb_rr_join_create(&j, 2, 1, 3, 100), 0);
    assert_int_equal(fe_eb_rr_join_propose(j, 0, 0, 0, false), 0);
    assert_int_equal(fe_eb_rr_join_propose(j, 5, 1, 0, true), 0);
    assert_false(fe_eb_rr_join_poll(j, 1000));
    assert_false(fe_eb_rr_join_waiting(j));
    assert_false(fe_eb_rr_join_first(j, &e0));
    assert_false(fe_eb_rr_join_needs_start(j, 0));
    fe_eb_rr_join_destroy(j);
}

/* Mixed start: a front-end that took the ring before it started (0) sends from the first event
 * on, maybe already (its fragments held while the builder waits): the ring cannot move past
 * them, whichever proposal comes first; E0 is the first event, at once, and the late
 * front-ends' events between are incomplete. Before, E0 went to the largest proposal and the
 * on-time front-end's early fragments took receive buffers that were never given back: it
 * waited on RNR NAKs (io_eb_loopback, mixed start). */
static void rr_join_mixed_start(void **state)
{
    (void)state;
    struct fe_eb_rr_join *j;
    uint64_t e0 = 0;
    /* on time first, then late: decided at the late one */
    assert_int_equal(fe_eb_rr_join_create(&j, 4, 2, 3, 100), 0);
    assert_int_equal(fe_eb_rr_join_propose(j, 0, 2, 0, false), 0);
    assert_int_equal(fe_eb_rr_join_propose(j, 1, 0, 1442, false), 0);
    assert_false(fe_eb_rr_join_waiting(j));
    assert_true(fe_eb_rr_join_first(j, &e0));
    assert_int_equal(e0, 2);
    assert_int_equal(fe_eb_rr_join_deadline(j), UINT64_MAX);
    for (uint32_t s = 0; s < 4; s++) assert_true(fe_eb_rr_join_needs_start(j, s));
    /* later proposals do not move it */
    assert_int_equal(fe_eb_rr_join_propose(j, 2, 1, 1500, false), 0);
    assert_true(fe_eb_rr_join_first(j, &e0));
    assert_int_equal(e0, 2);
    fe_eb_rr_join_destroy(j);

    /* late first (waiting), then on time: decided then, before every source proposed */
    assert_int_equal(fe_eb_rr_join_create(&j, 4, 2, 3, 100), 0);
    assert_int_equal(fe_eb_rr_join_propose(j, 0, 0, 1442, false), 0);
    assert_int_equal(fe_eb_rr_join_propose(j, 1, 1, 1445, false), 0);
    assert_true(fe_eb_rr_join_waiting(j));
    assert_int_equal(fe_eb_rr_join_propose(j, 2, 3, 0, false), 0);
    assert_false(fe_eb_rr_join_waiting(j));
    assert_true(fe_eb_rr_join_first(j, &e0));
    assert_int_equal(e0, 2);
    fe_eb_rr_join_destroy(j);

    /* waiting, then the assembly took fragments (a late JOIN repeated): the ring stays */
    assert_int_equal(fe_eb_rr_join_create(&j, 2, 0, 3, 100), 0);
    assert_int_equal(fe_eb_rr_join_propose(j, 0, 0, 1442, false), 0);
    assert_true(fe_eb_rr_join_waiting(j));
    assert_int_equal(fe_eb_rr_join_propose(j, 1, 0, 1442, true), 0);
    assert_true(fe_eb_rr_join_first(j, &e0));
    assert_int_equal(e0, 0);
    fe_eb_rr_join_destroy(j);
}

/* A late builder's offer: the next event plus a quarter second of triggers (a fixed count
 * without a rate, at least one event), never wrapping past the last event. */
static void rr_join_offer(void **state)
{
    (void)state;
    assert_int_equal(fe_eb_rr_join_offer(1000, 10000), 3500);
    assert_int_equal(fe_eb_rr_join_offer(1000, 0), 1000 + 16384);
    assert_int_equal(fe_eb_rr_join_offer(1000, 3), 1001);
    assert_true(fe_eb_rr_join_offer(UINT64_MAX - 10, 10000) == UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_robin),
        cmocka_unit_test(round_robin_may_write),
        cmocka_unit_test(fe_table_lookup),
        cmocka_unit_test(manager_interleaves),
        cmocka_unit_test(full_builder_gets_nothing),
        cmocka_unit_test(silent_builder_bound),
        cmocka_unit_test(manager_bad_config),
        cmocka_unit_test(runs_merge),
        cmocka_unit_test(skipped_events_and_positions),
        cmocka_unit_test(manager_chunks_chain),
        cmocka_unit_test(rr_first_at),
        cmocka_unit_test(rr_join_decides),
        cmocka_unit_test(rr_join_on_time),
        cmocka_unit_test(rr_join_mixed_start),
        cmocka_unit_test(rr_join_offer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
