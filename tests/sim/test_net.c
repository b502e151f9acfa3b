/* The network model with test frames injected at hosts (no transport): link timing, store and
 * forward, PFC losslessness and its headroom, drops without PFC, ECN marking, strict priority,
 * ECMP, random loss, determinism, scenario errors and the buffer's pass-through bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "feroce/err.h"
#include "sim/buffer.h"
#include "sim/sim_internal.h"

#define G10       10000000000ull
#define MTU_FRAME 4158u /* 4096 payload + BTH + ICRC + Ethernet/IPv4/UDP/FCS */

struct rx_log {
    uint64_t n, bytes, ce, last_ns, first_ns;
    uint64_t per_tag[16];
    uint64_t times[64];
    uint64_t sum; /* checksum of (tag, time) for determinism */
};

static void on_rx(void *user, uint32_t node, const struct sim_pkt *pkt, uint64_t now)
{
    (void)node;
    struct rx_log *l = user;
    if (l->n < 64) l->times[l->n] = now;
    if (!l->n) l->first_ns = now;
    l->n++;
    l->bytes += pkt->frame_bytes;
    if (pkt->pkt.ecn == FE_ECN_CE) l->ce++;
    l->per_tag[pkt->tag & 15]++;
    l->last_ns = now;
    l->sum = l->sum * 1000003u + (pkt->tag ^ now);
}

static struct fe_sim *make(struct fe_sim_scenario *sc, struct rx_log *log)
{
    char err[256] = "";
    int rc;
    struct fe_sim *sim = fe_sim_create(sc, &rc, err, sizeof(err));
    if (!sim) fprintf(stderr, "fe_sim_create: %s\n", err);
    assert_non_null(sim);
    sim->test_rx = on_rx;
    sim->test_user = log;
    return sim;
}

/* n senders and one receiver (node 0) on one switch (node 1). */
static void star(struct fe_sim_scenario *sc, int n, uint64_t rate, uint64_t delay)
{
    fe_sim_scenario_init(sc);
    fe_sim_scenario_add_node(sc, "rx", false);
    fe_sim_scenario_add_node(sc, "sw", true);
    assert_int_equal(fe_sim_scenario_add_link(sc, 0, 1, rate, delay, 0), 0);
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "tx%d", i);
        int id = fe_sim_scenario_add_node(sc, name, false);
        fe_sim_scenario_add_link(sc, (uint32_t)id, 1, rate, delay, 0);
    }
}

static void test_link_timing(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    fe_sim_scenario_init(&sc);
    fe_sim_scenario_add_node(&sc, "a", false);
    fe_sim_scenario_add_node(&sc, "b", false);
    fe_sim_scenario_add_link(&sc, 0, 1, G10, 1000, 0);
    struct rx_log log = {0};
    struct fe_sim *sim = make(&sc, &log);
    for (int i = 0; i < 10; i++) sim_test_inject(sim, 0, 1, 3, 1000, false, 1, 0);
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    assert_int_equal(log.n, 10);
    /* 1000 B + 20 B preamble/IFG = 816 ns at 10 Gb/s, then 1 us of propagation */
    for (int i = 0; i < 10; i++) assert_int_equal(log.times[i], 816u * (i + 1) + 1000);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

static void test_store_and_forward(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    star(&sc, 1, G10, 1000);
    struct rx_log log = {0};
    struct fe_sim *sim = make(&sc, &log);
    for (int i = 0; i < 5; i++) sim_test_inject(sim, 2, 0, 3, 1000, false, 1, 0);
    fe_sim_run(sim, FE_SIM_NO_TIME);
    assert_int_equal(log.n, 5);
    assert_int_equal(log.times[0], 2 * (816 + 1000));
    for (int i = 1; i < 5; i++) assert_int_equal(log.times[i] - log.times[i - 1], 816);
    /* rate carried exactly: 4158 + 20 B at 10 Gb/s is 3342.4 ns */
    fe_sim_destroy(sim);
    sim = make(&sc, &log);
    memset(&log, 0, sizeof(log));
    for (int i = 0; i < 1000; i++) sim_test_inject(sim, 2, 0, 3, MTU_FRAME, false, 1, 0);
    fe_sim_run(sim, FE_SIM_NO_TIME);
    uint64_t span = log.last_ns - log.first_ns;
    uint64_t exact = 3342400ull * 999 / 1000;
    /* each port carries its own remainder: the two hops may each be 1 ns off */
    assert_true(span >= exact - 2 && span <= exact + 2);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

/* Eight senders at line rate into one 10 Gb/s port, 1 us links, MTU-size frames: PFC keeps it
 * lossless, the receiver's link stays full, and headroom use stays within what was sized. */
static void incast(struct fe_sim_scenario *sc, struct rx_log *log, struct fe_sim_stats *st,
                   int senders, int frames, uint64_t *ideal_ns)
{
    struct fe_sim *sim = make(sc, log);
    for (int f = 0; f < frames; f++)
        for (int i = 0; i < senders; i++)
            sim_test_inject(sim, (uint32_t)(2 + i), 0, 3, MTU_FRAME, false, (uint32_t)i,
                            (uint64_t)i);
    fe_sim_run(sim, FE_SIM_NO_TIME);
    fe_sim_stats(sim, st);
    *ideal_ns = (uint64_t)senders * (uint64_t)frames * (MTU_FRAME + 20) * 8 / 10;
    uint64_t hr = sim->nodes[1].ports[0].headroom_bytes;
    assert_true(st->max_headroom_bytes <= hr);
    fe_sim_destroy(sim);
}

static void test_pfc_lossless_incast(void **s)
{
    (void)s;
    for (int mode = 0; mode < 2; mode++) {
        for (int small = 0; small < 2; small++) {
            struct fe_sim_scenario sc;
            star(&sc, 8, G10, 1000);
            sc.sw.pfc_mode = mode ? FE_SIM_PFC_XOFF_XON : FE_SIM_PFC_QUANTA;
            if (small) sc.sw.buffer_bytes = 400000; /* pauses early and often */
            struct rx_log log = {0};
            struct fe_sim_stats st;
            uint64_t ideal;
            incast(&sc, &log, &st, 8, 400, &ideal);
            assert_int_equal(st.drops_total, 0);
            assert_int_equal(log.n, 8 * 400);
            assert_true(st.pause_frames > 0);
            assert_true(st.host_pause_events > 0);
            /* the bottleneck stays busy: within 0.5 % of back-to-back */
            assert_true(log.last_ns < ideal + ideal / 200 + 10000);
            for (int i = 0; i < 8; i++) assert_int_equal(log.per_tag[i], 400);
            fe_sim_scenario_free(&sc);
        }
    }
}

/* The ns-3 simulators' headroom (3 x rate x delay = 3750 B at 10 Gb/s and 1 us) is smaller than
 * one MTU frame: the same incast drops. feroce's sizing does not. */
static void test_ns3_headroom_drops(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    star(&sc, 8, G10, 1000);
    sc.sw.headroom_bytes = 3 * G10 / 8 * 1000 / 1000000000;
    sc.sw.buffer_bytes = 2u << 20;
    sc.sw.pfc_mode = FE_SIM_PFC_XOFF_XON;
    struct rx_log log = {0};
    struct fe_sim_stats st;
    uint64_t ideal;
    incast(&sc, &log, &st, 8, 200, &ideal);
    assert_true(st.drops[FE_SIM_DROP_HEADROOM] > 0);
    assert_int_equal(log.n + st.drops_total, 8 * 200);
    fe_sim_scenario_free(&sc);
}

static void test_no_pfc_drops(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    star(&sc, 8, G10, 1000);
    sc.sw.pfc = false;
    sc.sw.buffer_bytes = 1u << 20;
    struct rx_log log = {0};
    struct fe_sim_stats st;
    uint64_t ideal;
    incast(&sc, &log, &st, 8, 200, &ideal);
    assert_true(st.drops[FE_SIM_DROP_BUFFER] > 0);
    assert_int_equal(st.pause_frames, 0);
    assert_int_equal(log.n + st.drops[FE_SIM_DROP_BUFFER], 8 * 200);
    fe_sim_scenario_free(&sc);
}

/* QUANTA mode: a PAUSE holds for quanta x 512 bit times, then the port sends again by itself. */
static void test_pause_quanta_timer(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    star(&sc, 1, G10, 1000);
    struct rx_log log = {0};
    struct fe_sim *sim = make(&sc, &log);
    struct sim_port *tx = &sim->nodes[2].ports[0];
    struct sim_pkt pfc;
    memset(&pfc, 0, sizeof(pfc));
    pfc.kind = PKT_PFC;
    pfc.pfc.prio = 3;
    pfc.pfc.quanta = 100; /* 100 x 512 bits = 5120 ns at 10 Gb/s */
    sim_pfc_receive(sim, tx, &pfc);
    for (int i = 0; i < 3; i++) sim_test_inject(sim, 2, 0, 3, 1000, false, 1, 0);
    sim_test_inject(sim, 2, 0, 5, 1000, false, 1, 9); /* other priority: not paused */
    fe_sim_run(sim, FE_SIM_NO_TIME);
    assert_int_equal(log.n, 4);
    assert_int_equal(log.per_tag[9], 1);
    /* the priority-5 frame went first, the others only after 5120 ns */
    assert_int_equal(log.times[0], 2 * 1816);
    assert_int_equal(log.times[1], 5120 + 2 * 1816);
    struct fe_sim_port_stats ps;
    fe_sim_port_stats(sim, 2, 0, &ps);
    assert_int_equal(ps.pause_rx, 1);
    assert_int_equal(ps.paused_ns, 5120);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

static void test_ecn_marking(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    star(&sc, 3, G10, 1000);
    sc.sw.ecn = true;
    sc.sw.n_red = 1;
    sc.sw.red[0] = (struct fe_sim_red){G10, 5000, 200000, 10000};
    /* one sender at line rate: no queue, no marks */
    struct rx_log log = {0};
    struct fe_sim *sim = make(&sc, &log);
    for (int i = 0; i < 500; i++) sim_test_inject(sim, 2, 0, 3, MTU_FRAME, true, 1, 0);
    fe_sim_run(sim, FE_SIM_NO_TIME);
    assert_int_equal(log.n, 500);
    assert_int_equal(log.ce, 0);
    fe_sim_destroy(sim);
    /* three: the queue passes Kmax, ECT frames are marked, the not-ECT ones never */
    memset(&log, 0, sizeof(log));
    sim = make(&sc, &log);
    for (int i = 0; i < 500; i++) {
        sim_test_inject(sim, 2, 0, 3, MTU_FRAME, true, 1, 0);
        sim_test_inject(sim, 3, 0, 3, MTU_FRAME, true, 2, 1);
        sim_test_inject(sim, 4, 0, 3, MTU_FRAME, false, 3, 2);
    }
    fe_sim_run(sim, FE_SIM_NO_TIME);
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    assert_int_equal(log.n, 1500);
    assert_true(log.ce > 300);
    assert_true(log.ce <= 1000);
    assert_int_equal(st.ecn_marks, log.ce);
    struct fe_sim_port_stats ps;
    fe_sim_port_stats(sim, 1, 0, &ps);
    assert_true(ps.max_queue_bytes > 200000);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

static void test_strict_priority(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    star(&sc, 2, G10, 1000);
    sc.sw.pfc = false;
    struct rx_log log = {0};
    struct fe_sim *sim = make(&sc, &log);
    /* a burst at priority 3 builds a queue; priority 6 frames sent a little later overtake it */
    for (int i = 0; i < 200; i++) sim_test_inject(sim, 2, 0, 3, MTU_FRAME, false, 1, 0);
    for (int i = 0; i < 200; i++) sim_test_inject(sim, 3, 0, 3, MTU_FRAME, false, 1, 0);
    fe_sim_run(sim, 100000);
    sim_test_inject(sim, 3, 0, 6, 1000, false, 1, 5);
    /* it waits at most for the frame on the wire at each hop */
    fe_sim_run(sim, 100000 + 2 * 3343 + 2 * 1816 + 816);
    assert_int_equal(log.per_tag[5], 1);
    fe_sim_run(sim, FE_SIM_NO_TIME);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

/* Two leaves joined by two spines: flows spread over both by hash (or one without ECMP). */
static void test_ecmp(void **s)
{
    (void)s;
    for (int ecmp = 0; ecmp < 2; ecmp++) {
        struct fe_sim_scenario sc;
        fe_sim_scenario_init(&sc);
        sc.sw.ecmp = ecmp;
        int a = fe_sim_scenario_add_node(&sc, "a", false);
        int b = fe_sim_scenario_add_node(&sc, "b", false);
        int l1 = fe_sim_scenario_add_node(&sc, "l1", true);
        int l2 = fe_sim_scenario_add_node(&sc, "l2", true);
        int s1 = fe_sim_scenario_add_node(&sc, "s1", true);
        int s2 = fe_sim_scenario_add_node(&sc, "s2", true);
        fe_sim_scenario_add_link(&sc, (uint32_t)a, (uint32_t)l1, G10, 1000, 0);
        fe_sim_scenario_add_link(&sc, (uint32_t)b, (uint32_t)l2, G10, 1000, 0);
        fe_sim_scenario_add_link(&sc, (uint32_t)l1, (uint32_t)s1, G10, 1000, 0);
        fe_sim_scenario_add_link(&sc, (uint32_t)l1, (uint32_t)s2, G10, 1000, 0);
        fe_sim_scenario_add_link(&sc, (uint32_t)l2, (uint32_t)s1, G10, 1000, 0);
        fe_sim_scenario_add_link(&sc, (uint32_t)l2, (uint32_t)s2, G10, 1000, 0);
        struct rx_log log = {0};
        struct fe_sim *sim = make(&sc, &log);
        for (uint32_t h = 0; h < 64; h++)
            sim_test_inject(sim, (uint32_t)a, (uint32_t)b, 3, 1000, false, h * 2654435761u, 0);
        fe_sim_run(sim, FE_SIM_NO_TIME);
        assert_int_equal(log.n, 64);
        struct fe_sim_port_stats p1, p2;
        fe_sim_port_stats(sim, (uint32_t)l1, 1, &p1);
        fe_sim_port_stats(sim, (uint32_t)l1, 2, &p2);
        assert_int_equal(p1.tx_pkts + p2.tx_pkts, 64);
        if (ecmp) {
            assert_true(p1.tx_pkts >= 16 && p2.tx_pkts >= 16);
        } else {
            assert_true(p1.tx_pkts == 64 || p2.tx_pkts == 64);
        }
        fe_sim_destroy(sim);
        fe_sim_scenario_free(&sc);
    }
}

static void run_lossy(uint64_t seed, struct rx_log *log, struct fe_sim_stats *st)
{
    struct fe_sim_scenario sc;
    fe_sim_scenario_init(&sc);
    sc.seed = seed;
    fe_sim_scenario_add_node(&sc, "a", false);
    fe_sim_scenario_add_node(&sc, "b", false);
    fe_sim_scenario_add_link(&sc, 0, 1, G10, 1000, 0.1);
    memset(log, 0, sizeof(*log));
    struct fe_sim *sim = make(&sc, log);
    for (int i = 0; i < 10000; i++) sim_test_inject(sim, 0, 1, 3, 1000, false, 1, (uint64_t)i);
    fe_sim_run(sim, FE_SIM_NO_TIME);
    fe_sim_stats(sim, st);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

static void test_link_loss_and_determinism(void **s)
{
    (void)s;
    struct rx_log a, b, c;
    struct fe_sim_stats sa, sb, sc;
    run_lossy(1, &a, &sa);
    run_lossy(1, &b, &sb);
    run_lossy(2, &c, &sc);
    assert_int_equal(a.n + sa.drops[FE_SIM_DROP_LINK], 10000);
    assert_true(sa.drops[FE_SIM_DROP_LINK] > 800 && sa.drops[FE_SIM_DROP_LINK] < 1200);
    assert_int_equal(a.n, b.n);
    assert_int_equal(a.sum, b.sum);
    assert_int_equal(sa.events, sb.events);
    assert_true(a.sum != c.sum);
}

static void expect_error(struct fe_sim_scenario *sc, const char *needle)
{
    char err[256] = "";
    int rc = 0;
    struct fe_sim *sim = fe_sim_create(sc, &rc, err, sizeof(err));
    assert_null(sim);
    assert_int_equal(rc, FE_EINVAL);
    if (!strstr(err, needle)) fprintf(stderr, "error '%s' lacks '%s'\n", err, needle);
    assert_non_null(strstr(err, needle));
    fe_sim_scenario_free(sc);
}

static void test_errors(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    star(&sc, 1, G10, 1000);
    fe_sim_scenario_add_link(&sc, 0, 2, G10, 1000, 0);
    expect_error(&sc, "needs exactly one");

    star(&sc, 1, G10, 1000);
    int x = fe_sim_scenario_add_node(&sc, "x", false);
    int y = fe_sim_scenario_add_node(&sc, "y", true);
    fe_sim_scenario_add_link(&sc, (uint32_t)x, (uint32_t)y, G10, 1000, 0);
    expect_error(&sc, "cannot reach");

    star(&sc, 8, G10, 1000);
    sc.sw.buffer_bytes = 50000;
    expect_error(&sc, "too small");

    star(&sc, 1, G10, 1000);
    sc.host.mtu_bytes = 1500;
    expect_error(&sc, "MTU");

    star(&sc, 1, G10, 1000);
    sc.sw.ecn = true;
    expect_error(&sc, "RED");

    star(&sc, 1, G10, 1000);
    assert_int_equal(fe_sim_scenario_add_link(&sc, 0, 0, G10, 1, 0), FE_EINVAL);
    assert_int_equal(fe_sim_scenario_add_link(&sc, 0, 1, 0, 1, 0), FE_EINVAL);
    assert_int_equal(fe_sim_scenario_add_link(&sc, 0, 1, G10, 1, 1.5), FE_EINVAL);
    struct fe_sim_flow f = {.src = 0, .dst = 0, .bytes = 1};
    assert_int_equal(fe_sim_scenario_add_flow(&sc, &f), FE_EINVAL);
    fe_sim_scenario_free(&sc);
}

/* The pass-through bound set at build (buffer.h) agrees with the dynamic threshold it stands
 * for: a lossless priority passes while the threshold is not 0, a lossy one always. */
static void test_pass_through_bound(void **s)
{
    (void)s;
    static const double alphas[] = {1.0 / 8, 1, 64, 1.0 / 65536, 3.0 / 65536, 0.3};
    for (size_t a = 0; a < sizeof(alphas) / sizeof(alphas[0]); a++) {
        struct fe_sim_scenario sc;
        struct rx_log log = {0};
        star(&sc, 2, G10, 1000);
        sc.sw.pfc = true;
        sc.sw.dt_alpha = alphas[a];
        struct fe_sim *sim = make(&sc, &log);
        struct sim_switch *sw = &sim->sws[0];
        uint64_t saved = sw->shared_used,
                 step = 65536 / (sim->dt_alpha_q16 ? sim->dt_alpha_q16 : 1);
        for (uint8_t prio = 0; prio < FE_SIM_PRIOS; prio++) {
            if (!(sim->lossless_prios >> prio & 1)) {
                assert_true(sw->pass_below[prio] == UINT64_MAX);
                continue;
            }
            const uint64_t around[] = {0, 1, step, sw->shared_bytes};
            for (size_t i = 0; i < sizeof(around) / sizeof(around[0]); i++)
                for (int64_t d = -3; d <= 3; d++) {
                    uint64_t free_bytes = around[i] + (uint64_t)d;
                    if ((int64_t)around[i] + d < 0 || free_bytes > sw->shared_bytes) continue;
                    sw->shared_used = sw->shared_bytes - free_bytes;
                    assert_int_equal(sim_buffer_threshold(sw, sim) > 0,
                                     sw->shared_used < sw->pass_below[prio]);
                }
        }
        sw->shared_used = saved;
        fe_sim_destroy(sim);
        fe_sim_scenario_free(&sc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link_timing),
        cmocka_unit_test(test_store_and_forward),
        cmocka_unit_test(test_pfc_lossless_incast),
        cmocka_unit_test(test_ns3_headroom_drops),
        cmocka_unit_test(test_no_pfc_drops),
        cmocka_unit_test(test_pause_quanta_timer),
        cmocka_unit_test(test_ecn_marking),
        cmocka_unit_test(test_strict_priority),
        cmocka_unit_test(test_ecmp),
        cmocka_unit_test(test_link_loss_and_determinism),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_pass_through_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
