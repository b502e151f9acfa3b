/* Event queue: both implementations pop in (time, scheduling order), agree with each other on
 * random workloads including far-future events, and refuse the past. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "feroce/err.h"
#include "feroce/sim.h"
#include "sim/engine.h"

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 17;
}

static void fifo_same_time(enum fe_sim_queue_kind kind)
{
    struct fe_evq q;
    assert_int_equal(fe_evq_init(&q, kind), 0);
    for (uint64_t i = 0; i < 100; i++) assert_int_equal(fe_evq_push(&q, 500, i), 0);
    assert_int_equal(fe_evq_push(&q, 100, 1000), 0);
    uint64_t t, d;
    assert_true(fe_evq_pop(&q, &t, &d));
    assert_int_equal(t, 100);
    assert_int_equal(d, 1000);
    for (uint64_t i = 0; i < 100; i++) {
        assert_true(fe_evq_pop(&q, &t, &d));
        assert_int_equal(t, 500);
        assert_int_equal(d, i);
    }
    assert_false(fe_evq_pop(&q, &t, &d));
    assert_int_equal(fe_evq_push(&q, 499, 1), FE_ERANGE); /* the past */
    assert_int_equal(fe_evq_push(&q, FE_SIM_MAX_TIME + 1, 1), FE_ERANGE);
    assert_int_equal(fe_evq_push(&q, FE_SIM_MAX_TIME, 7), 0);
    assert_true(fe_evq_pop(&q, &t, &d));
    assert_int_equal(t, FE_SIM_MAX_TIME);
    fe_evq_free(&q);
}

/* Arrivals (ranked) come before the other events of their time, by rank, whatever the order of
 * the pushes; the others in push order; an arrival for a time already begun after them; beyond
 * the wheel's horizon too. (Arrivals of equal rank, one port's, carry the same word: their
 * order among themselves is not kept.) */
static void arrivals_first(enum fe_sim_queue_kind kind)
{
    struct fe_evq q;
    assert_int_equal(fe_evq_init(&q, kind), 0);
    assert_int_equal(fe_evq_set_ranks(&q, 64), 0);
    uint64_t seed = 5, far = 200000; /* beyond the wheel's 65.5 us */
    unsigned count[64] = {0};
    for (uint64_t i = 0; i < 100; i++) {
        uint64_t r = lcg(&seed) % 64;
        count[r]++;
        for (uint64_t t = 500; t <= far; t += far - 500) {
            assert_int_equal(fe_evq_push(&q, t, 1000 + i), 0);
            assert_int_equal(fe_evq_push_arrival(&q, t, r, r), 0);
        }
    }
    for (uint64_t t = 500; t <= far; t += far - 500) {
        uint64_t td, d, last = 0;
        unsigned seen[64] = {0};
        for (int i = 0; i < 100; i++) { /* by rank */
            assert_true(fe_evq_pop(&q, &td, &d));
            assert_int_equal(td, t);
            assert_true(d >= last && d < 64);
            seen[d]++;
            last = d;
        }
        assert_memory_equal(seen, count, sizeof(seen));
        if (t == 500) /* an arrival for the time begun: after the events pending */
            assert_int_equal(fe_evq_push_arrival(&q, 500, 0, 77), 0);
        for (uint64_t i = 0; i < 100; i++) {
            assert_true(fe_evq_pop(&q, &td, &d));
            assert_int_equal(d, 1000 + i);
        }
        if (t == 500) {
            assert_true(fe_evq_pop(&q, &td, &d));
            assert_int_equal(td, 500);
            assert_int_equal(d, 77);
        }
    }
    assert_false(fe_evq_pop(&q, &(uint64_t){0}, &(uint64_t){0}));
    fe_evq_free(&q);
}

static void test_arrivals_first(void **s)
{
    (void)s;
    arrivals_first(FE_SIM_EVQ_HEAP);
    arrivals_first(FE_SIM_EVQ_WHEEL);
    arrivals_first(FE_SIM_EVQ_CALENDAR);
}

/* One slot, every case of filing: a first event that is no arrival (the arrival takes its
 * place), arrivals out of rank order among others, two of one rank (kept in filing order on
 * the wheel; the heap keeps no order among equal keys, so there the pair carries one word). */
static void slot_order(enum fe_sim_queue_kind kind)
{
    struct fe_evq q;
    assert_int_equal(fe_evq_init(&q, kind), 0);
    assert_int_equal(fe_evq_set_ranks(&q, 600), 0);
    const uint64_t t = 1000;
    uint64_t dup = kind == FE_SIM_EVQ_WHEEL ? 1 : 0;
    assert_int_equal(fe_evq_push(&q, t, 900), 0);
    assert_int_equal(fe_evq_push_arrival(&q, t, 300, 300), 0);
    assert_int_equal(fe_evq_push(&q, t, 901), 0);
    assert_int_equal(fe_evq_push_arrival(&q, t, 5, 5), 0);
    assert_int_equal(fe_evq_push_arrival(&q, t, 599, 599), 0);
    assert_int_equal(fe_evq_push_arrival(&q, t, 64, 1064), 0);
    assert_int_equal(fe_evq_push(&q, t, 902), 0);
    assert_int_equal(fe_evq_push_arrival(&q, t, 63, 63), 0);
    assert_int_equal(fe_evq_push_arrival(&q, t, 64, 1064 + dup), 0);
    assert_int_equal(fe_evq_push_arrival(&q, t, 0, 0), 0);
    static const uint64_t want[] = {0, 5, 63, 1064, 1065, 300, 599, 900, 901, 902};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        uint64_t td, d;
        assert_true(fe_evq_pop(&q, &td, &d));
        assert_int_equal(td, t);
        assert_int_equal(d, i == 4 ? 1064 + dup : want[i]);
    }
    assert_false(fe_evq_pop(&q, &(uint64_t){0}, &(uint64_t){0}));
    fe_evq_free(&q);
}

static void test_slot_order(void **s)
{
    (void)s;
    slot_order(FE_SIM_EVQ_HEAP);
    slot_order(FE_SIM_EVQ_WHEEL);
    slot_order(FE_SIM_EVQ_CALENDAR);
}

/* The simulator's use of arrivals on a random workload: each pop schedules 0-3 events, some of
 * them arrivals at random ports (ranks) of 0..ranks-1, most at a few common delays (ties of many
 * ports at one nanosecond, filed in no particular rank order), some beyond the wheel's horizon
 * (through its heap) and across its wraps, some at the time begun (taking FIFO order). Every
 * pop is checked against the rule: within a nanosecond the arrivals first in rank order, then
 * the others in the order they were scheduled. An arrival's word is its rank (as one port's
 * event word: equal ranks are one object), the others' a scheduling number. */
#define ARRIVAL_BIT (UINT64_C(1) << 62)
struct order_check {
    uint64_t t, rank, seq;
    bool others; /* an event that is no arrival popped at t */
};

static void check_order(struct order_check *c, uint64_t t, uint64_t d)
{
    if (t != c->t) {
        assert_true(t > c->t);
        *c = (struct order_check){t, 0, 0, false};
    }
    if (d & ARRIVAL_BIT) {
        assert_false(c->others);
        assert_true((d & ~ARRIVAL_BIT) >= c->rank);
        c->rank = d & ~ARRIVAL_BIT;
    } else {
        assert_true(!c->others || d > c->seq);
        c->others = true;
        c->seq = d;
    }
}

static void ranked_workload(enum fe_sim_queue_kind kind, uint64_t ranks, uint64_t *out,
                            size_t n_out)
{
    struct fe_evq q;
    assert_int_equal(fe_evq_init(&q, kind), 0);
    assert_int_equal(fe_evq_set_ranks(&q, ranks), 0);
    uint64_t seed = 11, seq = 1, t = 0, d;
    static const uint64_t delays[] = {0, 1, 331, 1000, 1331, 70000, 150000};
    struct order_check c = {0, 0, 0, false};
    for (uint64_t i = 0; i < 64; i++) {
        uint64_t r = lcg(&seed) % ranks;
        assert_int_equal(fe_evq_push_arrival(&q, 1000, r, ARRIVAL_BIT | r), 0);
    }
    size_t n = 0;
    while (n < n_out && fe_evq_pop(&q, &t, &d)) {
        check_order(&c, t, d);
        out[n++] = t << 32 ^ d;
        unsigned k = (unsigned)(lcg(&seed) % 4);
        for (unsigned j = 0; j < k && q.n < 4000; j++) {
            uint64_t x = lcg(&seed), at = t + delays[x % 7] + (x >> 8) % 2 * (x >> 9) % 3;
            if (x >> 12 & 1) {
                uint64_t r = (x >> 13) % ranks;
                /* at the time begun an arrival takes FIFO order: its word a number */
                uint64_t w = at == t ? seq++ : ARRIVAL_BIT | r;
                assert_int_equal(fe_evq_push_arrival(&q, at, r, w), 0);
            } else {
                assert_int_equal(fe_evq_push(&q, at, seq++), 0);
            }
        }
    }
    assert_int_equal(n, n_out);
    fe_evq_free(&q);
}

static void test_arrivals_random(void **s)
{
    (void)s;
    enum { N = 200000 };
    uint64_t *ref = malloc(N * sizeof(*ref)), *got = malloc(N * sizeof(*got));
    assert_non_null(ref);
    assert_non_null(got);
    /* 600 ranks: the wheel reads all its words of bits; 100000: it notes the ones set */
    static const uint64_t ranks[] = {600, 100000};
    for (int r = 0; r < 2; r++) {
        ranked_workload(FE_SIM_EVQ_HEAP, ranks[r], ref, N);
        ranked_workload(FE_SIM_EVQ_WHEEL, ranks[r], got, N);
        assert_memory_equal(ref, got, N * sizeof(*ref));
        ranked_workload(FE_SIM_EVQ_CALENDAR, ranks[r], got, N);
        assert_memory_equal(ref, got, N * sizeof(*ref));
    }
    free(ref);
    free(got);
}

static void test_fifo_heap(void **s)
{
    (void)s;
    fifo_same_time(FE_SIM_EVQ_HEAP);
}
static void test_fifo_wheel(void **s)
{
    (void)s;
    fifo_same_time(FE_SIM_EVQ_WHEEL);
}
static void test_fifo_calendar(void **s)
{
    (void)s;
    fifo_same_time(FE_SIM_EVQ_CALENDAR);
}

/* A simulation-like workload: pop one, push 0-2 new ones at now + delay (delays from 0 to far
 * beyond the wheel's horizon); both queues must produce the same sequence, in time order. With
 * `peek`, the earliest pending time is compared after each step (the heap then removes its
 * popped root at once; without, the next push takes the root's place). */
static void agree_random(bool peek)
{
    struct fe_evq h, w;
    assert_int_equal(fe_evq_init(&h, FE_SIM_EVQ_HEAP), 0);
    assert_int_equal(fe_evq_init(&w, FE_SIM_EVQ_WHEEL), 0);
    uint64_t seed = 42, id = 0;
    for (int i = 0; i < 2000; i++) {
        uint64_t t = lcg(&seed) % 200000;
        assert_int_equal(fe_evq_push(&h, t, id), 0);
        assert_int_equal(fe_evq_push(&w, t, id), 0);
        id++;
    }
    uint64_t last = 0;
    for (int step = 0; step < 300000; step++) {
        uint64_t th, dh, tw, dw;
        bool a = fe_evq_pop(&h, &th, &dh), b = fe_evq_pop(&w, &tw, &dw);
        assert_int_equal(a, b);
        if (!a) break;
        assert_int_equal(th, tw);
        assert_int_equal(dh, dw);
        assert_true(th >= last);
        last = th;
        int n = (int)(lcg(&seed) % 3);
        if (step > 250000) n = 0;
        for (int k = 0; k < n; k++) {
            uint64_t r = lcg(&seed) % 100, d;
            if (r < 30)
                d = 0; /* same time: FIFO matters */
            else if (r < 90)
                d = lcg(&seed) % 5000;
            else if (r < 98)
                d = 60000 + lcg(&seed) % 20000; /* around the horizon (65536) */
            else
                d = lcg(&seed) % 10000000; /* far future */
            assert_int_equal(fe_evq_push(&h, th + d, id), 0);
            assert_int_equal(fe_evq_push(&w, th + d, id), 0);
            id++;
        }
        assert_int_equal(fe_evq_size(&h), fe_evq_size(&w));
        if (peek) assert_int_equal(fe_evq_peek(&h), fe_evq_peek(&w));
    }
    fe_evq_free(&h);
    fe_evq_free(&w);
}

static void test_agree_random(void **s)
{
    (void)s;
    agree_random(true);
}

static void test_agree_random_no_peek(void **s)
{
    (void)s;
    agree_random(false);
}

/* ---- calendar queue against the heap ----
 * A model of the simulator's use: plain events (push with a time) and "wires", FIFOs of events
 * whose keys are taken when they are scheduled but only the head of each is pushed (push_key),
 * the others listed to the renumbering. The calendar must pop exactly the heap's sequence. */
#define WIRES    16
#define WIRE_CAP 4096

struct model {
    struct fe_evq q;
    struct {
        uint64_t key[WIRE_CAP], data[WIRE_CAP], last_t;
        uint32_t head, n;
    } wire[WIRES];
};

static void model_keys(void *user, struct fe_evq *q)
{
    struct model *m = user;
    for (int w = 0; w < WIRES; w++)
        for (uint32_t i = 1; i < m->wire[w].n; i++)
            fe_evq_renumber_key(q, &m->wire[w].key[(m->wire[w].head + i) % WIRE_CAP]);
}

static void model_init(struct model *m, enum fe_sim_queue_kind kind, unsigned bits, unsigned shift)
{
    memset(m, 0, sizeof(*m));
    assert_int_equal(fe_evq_init(&m->q, kind), 0);
    if (kind == FE_SIM_EVQ_CALENDAR) assert_int_equal(fe_evq_cal_configure(&m->q, bits, shift), 0);
    fe_evq_set_keys_fn(&m->q, model_keys, m);
}

/* schedules an event on wire w at t (not before the wire's last) */
static void model_send(struct model *m, int w, uint64_t t, uint64_t data)
{
    uint64_t key;
    if (t < m->wire[w].last_t) t = m->wire[w].last_t;
    m->wire[w].last_t = t;
    assert_int_equal(fe_evq_key(&m->q, t, &key), 0);
    assert_true(m->wire[w].n < WIRE_CAP);
    uint32_t i = (m->wire[w].head + m->wire[w].n++) % WIRE_CAP;
    m->wire[w].key[i] = key;
    m->wire[w].data[i] = data;
    if (m->wire[w].n == 1) assert_int_equal(fe_evq_push_key(&m->q, key, data), 0);
}

/* the head of wire w was popped: the next one gets its event */
static void model_arrive(struct model *m, int w)
{
    assert_true(m->wire[w].n > 0);
    m->wire[w].head = (m->wire[w].head + 1) % WIRE_CAP;
    if (--m->wire[w].n)
        assert_int_equal(fe_evq_push_key(&m->q, m->wire[w].key[m->wire[w].head],
                                         m->wire[w].data[m->wire[w].head]),
                         0);
}

/* delay mix: ties, serialization-like, propagation-like, around a small ring's horizon, timers */
static uint64_t model_delay(uint64_t *seed)
{
    uint64_t r = lcg(seed) % 100;
    if (r < 20) return 0;
    if (r < 60) return lcg(seed) % 900;
    if (r < 85) return 2000 + lcg(seed) % 3000;
    if (r < 97) return lcg(seed) % 300000;
    return lcg(seed) % 50000000;
}

/* steps: pops (some bounded by a limit) each followed by 0-3 schedulings; returns the
 * calendar's bucket width (log2 ns) at the end */
static unsigned calendar_agrees(unsigned bits, unsigned shift, uint32_t steps, uint64_t seed)
{
    struct model *m[2];
    for (int k = 0; k < 2; k++) {
        m[k] = malloc(sizeof(*m[k]));
        assert_non_null(m[k]);
    }
    model_init(m[0], FE_SIM_EVQ_HEAP, 0, 0);
    model_init(m[1], FE_SIM_EVQ_CALENDAR, bits, shift);
    uint64_t id = 0, now = 0, popped = 0;
    for (int i = 0; i < 500; i++, id++) {
        uint64_t t = lcg(&seed) % 100000;
        for (int k = 0; k < 2; k++) assert_int_equal(fe_evq_push(&m[k]->q, t, id << 8), 0);
    }
    for (uint32_t step = 0; step < steps; step++) {
        uint64_t limit = lcg(&seed) % 8 ? FE_SIM_NO_TIME : now + lcg(&seed) % 3000;
        uint64_t t[2], d[2];
        bool got[2];
        for (int k = 0; k < 2; k++) got[k] = fe_evq_pop_until(&m[k]->q, limit, &t[k], &d[k]);
        assert_int_equal(got[0], got[1]);
        if (got[0]) {
            assert_int_equal(t[0], t[1]);
            assert_int_equal(d[0], d[1]);
            assert_true(t[0] >= now);
            now = t[0];
            popped++;
            if (d[0] & 1)
                for (int k = 0; k < 2; k++) model_arrive(m[k], (int)(d[0] >> 1 & 0x7f));
        } else if (limit == FE_SIM_NO_TIME) {
            break;
        }
        int n = step + 1000 < steps ? (int)(lcg(&seed) % 4) : 0;
        for (int j = 0; j < n; j++, id++) {
            uint64_t at = now + model_delay(&seed);
            if (lcg(&seed) % 2) {
                int w = (int)(lcg(&seed) % WIRES);
                if (m[0]->wire[w].n + 1 >= WIRE_CAP) continue;
                for (int k = 0; k < 2; k++) model_send(m[k], w, at, id << 8 | (uint64_t)w << 1 | 1);
            } else {
                for (int k = 0; k < 2; k++) assert_int_equal(fe_evq_push(&m[k]->q, at, id << 8), 0);
            }
        }
        assert_int_equal(fe_evq_size(&m[0]->q), fe_evq_size(&m[1]->q));
        if (step % 64 == 0) assert_int_equal(fe_evq_peek(&m[0]->q), fe_evq_peek(&m[1]->q));
    }
    assert_true(popped > steps / 2);
    unsigned final_shift = m[1]->q.cal_shift;
    for (int k = 0; k < 2; k++) {
        fe_evq_free(&m[k]->q);
        free(m[k]);
    }
    return final_shift;
}

/* narrow and wide buckets, small and large rings: same-time ties, out-of-order keys from the
 * wires, events beyond the horizon (moved in as it advances), node growth; the width adapts on
 * the way (events move between ring and heap) */
static void test_calendar_geometries(void **s)
{
    (void)s;
    static const unsigned geo[][2] = {{7, 0}, {7, 6}, {10, 4}, {12, 0}, {8, 14}, {16, 2}};
    for (size_t i = 0; i < sizeof(geo) / sizeof(geo[0]); i++)
        calendar_agrees(geo[i][0], geo[i][1], 200000, 1000 + i);
}

/* The bucket width follows the workload: 1 ns buckets over a sparse ring widen (pops leave
 * their bitmap word, events go beyond the 128 ns horizon), 16 us buckets holding hundreds of
 * events narrow (pushes walk the lists). */
static void test_calendar_adapts(void **s)
{
    (void)s;
    assert_true(calendar_agrees(7, 0, 300000, 5) > 0);
    assert_true(calendar_agrees(8, 14, 300000, 6) < 14);
}

/* more schedulings than the key's 20-bit number holds: pending keys (the queue's and the wires')
 * are renumbered on the way */
static void test_calendar_renumbering(void **s)
{
    (void)s;
    calendar_agrees(10, 5, 1200000, 77);
}

/* Many pending events (a million), popped in order. */
static void test_many_pending(void **s)
{
    (void)s;
    for (int k = 0; k < 3; k++) {
        struct fe_evq q;
        assert_int_equal(fe_evq_init(&q, (enum fe_sim_queue_kind)k), 0);
        uint64_t seed = 7;
        for (uint64_t i = 0; i < 1000000; i++)
            assert_int_equal(fe_evq_push(&q, lcg(&seed) % 50000000, i), 0);
        uint64_t t, d, last = 0, n = 0;
        while (fe_evq_pop(&q, &t, &d)) {
            assert_true(t >= last);
            last = t;
            n++;
        }
        assert_int_equal(n, 1000000);
        fe_evq_free(&q);
    }
}

/* FIFO among events of one time across more schedulings than the key's 20-bit number holds
 * (the queue renumbers its pending events when the number runs out). */
static void test_fifo_long_run(void **s)
{
    (void)s;
    for (int k = 0; k < 3; k++) {
        struct fe_evq q;
        assert_int_equal(fe_evq_init(&q, (enum fe_sim_queue_kind)k), 0);
        const uint64_t far = 1000000000;
        uint64_t id = 0;
        /* tie groups at the far time, scheduled before, across and after the renumbering */
        for (int i = 0; i < 5; i++) assert_int_equal(fe_evq_push(&q, far, id++), 0);
        assert_int_equal(fe_evq_push(&q, 0, UINT64_MAX), 0);
        uint64_t t, d, near = 0;
        for (uint32_t i = 0; i < 3u << 20; i++) {
            assert_true(fe_evq_pop(&q, &t, &d));
            assert_int_equal(d, UINT64_MAX);
            if (i % 500000 == 0)
                for (int j = 0; j < 3; j++) assert_int_equal(fe_evq_push(&q, far, id++), 0);
            assert_int_equal(fe_evq_push(&q, ++near, UINT64_MAX), 0);
        }
        for (int i = 0; i < 5; i++) assert_int_equal(fe_evq_push(&q, far, id++), 0);
        assert_true(fe_evq_pop(&q, &t, &d)); /* the last near event */
        for (uint64_t i = 0; i < id; i++) {
            assert_true(fe_evq_pop(&q, &t, &d));
            assert_int_equal(t, far);
            assert_int_equal(d, i);
        }
        assert_false(fe_evq_pop(&q, &t, &d));
        fe_evq_free(&q);
    }
}

/* A run of sc (freed here) on queue `kind` to its end, in steps of step_ns (a run that stops at
 * a time leaves nothing taken ahead), the lookahead on or off, or switched at every step when
 * `toggle`: its stats and its (at most 8) flows' completion times, every flow done. */
enum { FLOWS_MAX = 8 };
static void run_whole(struct fe_sim_scenario *sc, enum fe_sim_queue_kind kind, bool lookahead,
                      bool toggle, uint64_t step_ns, struct fe_sim_stats *st,
                      uint64_t fin[FLOWS_MAX])
{
    char err[256];
    int rc, r;
    assert_true(sc->n_flows <= FLOWS_MAX);
    struct fe_sim *sim = fe_sim_create(sc, &rc, err, sizeof(err));
    assert_non_null(sim);
    assert_int_equal(fe_sim_set_queue(sim, kind), 0);
    assert_int_equal(fe_sim_set_lookahead(sim, lookahead), 0);
    for (uint64_t t = step_ns; (r = fe_sim_run(sim, t)) == 0; t += step_ns)
        if (toggle) assert_int_equal(fe_sim_set_lookahead(sim, lookahead = !lookahead), 0);
    assert_int_equal(r, 1);
    fe_sim_stats(sim, st);
    for (uint32_t i = 0; i < sc->n_flows; i++) {
        struct fe_sim_flow_stats fs;
        assert_int_equal(fe_sim_flow_stats(sim, i, &fs), 0);
        assert_true(fs.done);
        fin[i] = fs.finish_ns;
    }
    fe_sim_destroy(sim);
    fe_sim_scenario_free(sc);
}

/* Runs a and b have the same results (the events they took aside). */
static void assert_same_results(const struct fe_sim_stats *a, const uint64_t fa[FLOWS_MAX],
                                const struct fe_sim_stats *b, const uint64_t fb[FLOWS_MAX])
{
    assert_int_equal(a->now_ns, b->now_ns);
    assert_int_equal(a->pkts_sent, b->pkts_sent);
    assert_int_equal(a->ecn_marks, b->ecn_marks);
    assert_int_equal(a->cnps, b->cnps);
    assert_int_equal(a->pause_frames, b->pause_frames);
    assert_int_equal(a->resume_frames, b->resume_frames);
    assert_int_equal(a->max_buffer_bytes, b->max_buffer_bytes);
    for (uint32_t i = 0; i < FLOWS_MAX; i++) assert_int_equal(fa[i], fb[i]);
}

/* The simulator on the heap and the calendar (one event per busy wire, keys held by the frames
 * behind, renumbered past 2^20 schedulings) and on the wheel (one event per frame), with the run
 * loop's lookahead off and on, runs the same events in the same order: every counter and every
 * flow's completion agree. */
static void test_sim_same_on_all_queues(void **s)
{
    (void)s;
    enum { RUNS = 5 };
    static const enum fe_sim_queue_kind kinds[RUNS] = {FE_SIM_EVQ_HEAP, FE_SIM_EVQ_WHEEL,
                                                       FE_SIM_EVQ_CALENDAR, FE_SIM_EVQ_WHEEL,
                                                       FE_SIM_EVQ_CALENDAR};
    struct fe_sim_stats st[RUNS];
    uint64_t fin[RUNS][FLOWS_MAX] = {{0}};
    for (int k = 0; k < RUNS; k++) {
        struct fe_sim_scenario sc;
        char err[256];
        assert_int_equal(fe_sim_builtin_load("advcam-dcqcn", &sc, err, sizeof(err)), 0);
        sc.host.mtu_bytes = 1024;
        for (uint32_t i = 0; i < sc.n_links; i++) sc.links[i].delay_ns = 2000;
        assert_int_equal(sc.n_flows, 8);
        for (uint32_t i = 0; i < sc.n_flows; i++) {
            sc.flows[i].bytes = 16000000; /* > 2^20 events: the keys are renumbered */
            sc.flows[i].msg_bytes = 1000;
        }
        run_whole(&sc, kinds[k], k >= 3, false, 1000000, &st[k], fin[k]);
    }
    assert_true(st[0].events > (1u << 20));
    for (int k = 1; k < RUNS; k++) {
        assert_int_equal(st[0].events, st[k].events);
        assert_same_results(&st[0], fin[0], &st[k], fin[k]);
    }
}

/* Everything a run reports, to compare two runs: the stats, the window, the phases, the flows. */
struct run_report {
    struct fe_sim_stats st;
    uint64_t win_a, win_b;
    struct fe_sim_summary sum;
    int n_phases;
    struct fe_sim_phase ph[8];
    struct fe_sim_flow_stats fs[FLOWS_MAX];
};

/* incast3 with staggered starts (flow starts, the window's open, its auto end at the first
 * completion, phase marks and checkpoints are global actions) and random marking, run to its
 * end in steps from *seed (0: at once) of 1 ns .. 40 us. */
static void run_cut(uint64_t seed, struct run_report *r)
{
    struct fe_sim_scenario sc;
    char err[256];
    int rc;
    assert_int_equal(fe_sim_builtin_load("incast3", &sc, err, sizeof(err)), 0);
    assert_true(sc.n_flows <= FLOWS_MAX);
    for (uint32_t i = 0; i < sc.n_flows; i++) {
        sc.flows[i].bytes = 1000000 + 300000 * i;
        sc.flows[i].start_ns = 1000 + 37001 * i;
    }
    struct fe_sim *sim = fe_sim_create(&sc, &rc, err, sizeof(err));
    assert_non_null(sim);
    uint64_t t = 0;
    int k = 0;
    if (seed)
        while ((rc = fe_sim_run(sim, t += 1 + lcg(&seed) % 40000)) == 0) k++;
    else
        rc = fe_sim_run(sim, FE_SIM_NO_TIME);
    assert_int_equal(rc, 1);
    if (seed) assert_true(k > 100);
    memset(r, 0, sizeof(*r));
    fe_sim_stats(sim, &r->st);
    fe_sim_window(sim, &r->win_a, &r->win_b);
    fe_sim_summarize(sim, &r->sum);
    r->n_phases = fe_sim_phases(sim, r->ph, 8);
    assert_true(r->n_phases >= 3 && r->n_phases <= 8);
    for (uint32_t i = 0; i < sc.n_flows; i++) {
        assert_int_equal(fe_sim_flow_stats(sim, i, &r->fs[i]), 0);
        assert_true(r->fs[i].done);
    }
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

/* Where a run is cut (fe_sim_run's until) changes nothing: the global actions happen at their
 * times whatever the cuts (grid.h). Every figure of the report, bit for bit. */
static void test_sim_cut_anywhere(void **s)
{
    (void)s;
    static struct run_report whole, cut;
    run_cut(0, &whole);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        run_cut(seed * 7919, &cut);
        assert_memory_equal(&whole, &cut, sizeof(whole));
    }
}

/* --ns3-compat ends every frame's transmission at a switch with an event, in ns-3's order. On
 * a keyed queue without the lookahead only the key of that event is taken, and the event
 * pushed when a frame waits: the same results with fewer events. HPCC's PFC parking lot
 * (tests/sim/ns3/advcam-pfc), past 2^20 keys (renumbered, the taken ones with them), on the
 * calendar and the heap (lazy), the wheel (every event pushed), and the calendar with the
 * lookahead switched on and off every 500 us (lazy and not, in turns). */
static void test_sim_ns3_tx_done_lazy(void **s)
{
    (void)s;
    enum { RUNS = 4 };
    static const enum fe_sim_queue_kind kinds[RUNS] = {FE_SIM_EVQ_CALENDAR, FE_SIM_EVQ_HEAP,
                                                       FE_SIM_EVQ_WHEEL, FE_SIM_EVQ_CALENDAR};
    struct fe_sim_stats st[RUNS];
    uint64_t fin[RUNS][FLOWS_MAX] = {{0}};
    for (int k = 0; k < RUNS; k++) {
        struct fe_sim_scenario sc;
        struct fe_sim_hpcc_files hf;
        char err[256];
        assert_int_equal(fe_sim_hpcc_load(SIM_NS3 "/advcam-pfc/config.txt", NULL, NULL, &sc, &hf,
                                          err, sizeof(err)),
                         0);
        assert_int_equal(sc.n_flows, 8);
        for (uint32_t i = 0; i < sc.n_flows; i++) sc.flows[i].bytes *= 2; /* 10 -> 20 MB */
        fe_sim_scenario_ns3_compat(&sc);
        run_whole(&sc, kinds[k], false, k == 3, 500000, &st[k], fin[k]);
    }
    assert_true(st[0].events > (1u << 20)); /* every event took a key: renumbered */
    assert_true(st[0].pause_frames > 0);
    for (int k = 1; k < RUNS; k++) assert_same_results(&st[0], fin[0], &st[k], fin[k]);
    assert_int_equal(st[0].events, st[1].events);
    /* the wheel pushes every frame's end; lazy and not in turns lie between */
    assert_true(st[0].events < st[3].events && st[3].events < st[2].events);
}

/* Where that order decides: h0 sends at line rate at priority 5 into h2, each frame reaching
 * the switch in the nanosecond its predecessor's transmission ends there; h1's one frame at
 * priority 3 arrives in such a nanosecond (its start is 4 of h0's frame times). In ns-3 both
 * arrivals precede the transmit-complete (scheduled later), both are queued, and strict
 * priority sends h0's frame: h1's waits until h0's flow is done. A port taken as free at the
 * end of its frame would send h1's at once. */
static void test_sim_ns3_tx_done_order(void **s)
{
    (void)s;
    static const char yaml[] =
        "name: tx-done-order\n"
        "link: {rate: 10Gbps, delay: 2us}\n"
        "topology: {kind: star, hosts: 3}\n"
        "host: {mtu: 1024}\n"
        "cc: none\n"
        "flows:\n"
        "  - {src: h0, dst: h2, size: 100KB, msg: 1000, prio: 5, start: 0ns}\n"
        "  - {src: h1, dst: h2, size: 1000, msg: 1000, prio: 3, start: 3352ns}\n";
    static const enum fe_sim_queue_kind kinds[3] = {FE_SIM_EVQ_CALENDAR, FE_SIM_EVQ_HEAP,
                                                    FE_SIM_EVQ_WHEEL};
    struct fe_sim_stats st[3];
    uint64_t fin[3][FLOWS_MAX] = {{0}};
    for (int k = 0; k < 3; k++) {
        struct fe_sim_scenario sc;
        char err[256];
        assert_int_equal(
            fe_sim_scenario_parse_yaml(yaml, sizeof(yaml) - 1, "order", &sc, err, sizeof(err)), 0);
        fe_sim_scenario_ns3_compat(&sc);
        run_whole(&sc, kinds[k], false, false, FE_SIM_NO_TIME, &st[k], fin[k]);
    }
    assert_true(fin[0][1] > fin[0][0]); /* h1's frame went last */
    for (int k = 1; k < 3; k++) assert_same_results(&st[0], fin[0], &st[k], fin[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_heap),
        cmocka_unit_test(test_fifo_wheel),
        cmocka_unit_test(test_fifo_calendar),
        cmocka_unit_test(test_arrivals_first),
        cmocka_unit_test(test_slot_order),
        cmocka_unit_test(test_arrivals_random),
        cmocka_unit_test(test_agree_random),
        cmocka_unit_test(test_agree_random_no_peek),
        cmocka_unit_test(test_calendar_geometries),
        cmocka_unit_test(test_calendar_adapts),
        cmocka_unit_test(test_calendar_renumbering),
        cmocka_unit_test(test_many_pending),
        cmocka_unit_test(test_fifo_long_run),
        cmocka_unit_test(test_sim_same_on_all_queues),
        cmocka_unit_test(test_sim_cut_anywhere),
        cmocka_unit_test(test_sim_ns3_tx_done_lazy),
        cmocka_unit_test(test_sim_ns3_tx_done_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
