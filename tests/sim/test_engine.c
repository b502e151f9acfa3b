/* Event queue: both implementations pop in (time, scheduling order), agree with each other on
 * random workloads including far-future events, and refuse the past. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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

/* Many pending events (a million), popped in order. */
static void test_many_pending(void **s)
{
    (void)s;
    for (int k = 0; k < 2; k++) {
        struct fe_evq q;
        assert_int_equal(fe_evq_init(&q, k ? FE_SIM_EVQ_WHEEL : FE_SIM_EVQ_HEAP), 0);
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
    for (int k = 0; k < 2; k++) {
        struct fe_evq q;
        assert_int_equal(fe_evq_init(&q, k ? FE_SIM_EVQ_WHEEL : FE_SIM_EVQ_HEAP), 0);
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

/* The simulator on the heap (one event per busy wire, keys held by the frames behind, renumbered
 * past 2^20 schedulings) and on the wheel (one event per frame) runs the same events in the same
 * order: every counter and every flow's completion agree. */
static void test_sim_same_on_both_queues(void **s)
{
    (void)s;
    struct fe_sim_stats st[2];
    uint64_t fin[2][8];
    for (int k = 0; k < 2; k++) {
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
        int rc;
        struct fe_sim *sim = fe_sim_create(&sc, &rc, err, sizeof(err));
        assert_non_null(sim);
        assert_int_equal(fe_sim_set_queue(sim, k ? FE_SIM_EVQ_WHEEL : FE_SIM_EVQ_HEAP), 0);
        assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
        fe_sim_stats(sim, &st[k]);
        for (uint32_t i = 0; i < 8; i++) {
            struct fe_sim_flow_stats fs;
            assert_int_equal(fe_sim_flow_stats(sim, i, &fs), 0);
            assert_true(fs.done);
            fin[k][i] = fs.finish_ns;
        }
        fe_sim_destroy(sim);
        fe_sim_scenario_free(&sc);
    }
    assert_true(st[0].events > (1u << 20));
    assert_int_equal(st[0].events, st[1].events);
    assert_int_equal(st[0].now_ns, st[1].now_ns);
    assert_int_equal(st[0].pkts_sent, st[1].pkts_sent);
    assert_int_equal(st[0].ecn_marks, st[1].ecn_marks);
    assert_int_equal(st[0].cnps, st[1].cnps);
    assert_int_equal(st[0].pause_frames, st[1].pause_frames);
    assert_int_equal(st[0].max_buffer_bytes, st[1].max_buffer_bytes);
    for (uint32_t i = 0; i < 8; i++) assert_int_equal(fin[0][i], fin[1][i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_heap),
        cmocka_unit_test(test_fifo_wheel),
        cmocka_unit_test(test_agree_random),
        cmocka_unit_test(test_agree_random_no_peek),
        cmocka_unit_test(test_many_pending),
        cmocka_unit_test(test_fifo_long_run),
        cmocka_unit_test(test_sim_same_on_both_queues),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
