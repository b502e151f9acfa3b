/* A queue discipline defined outside the simulator's files: registered (sim_qdisc_register), it
 * runs on the switch ports its setup picks, sees every frame join and leave their egress
 * (passing through an idle port or queued behind others), and leaves the known ones as they
 * were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sim/qdisc.h"
#include "sim/sim_internal.h"

#define G10 10000000000ull

static struct {
    uint64_t setups, enq, deq, deq_queued, max_queued_bytes;
} seen;

static bool count_setup(const struct fe_sim *sim, struct sim_port *p)
{
    (void)sim;
    (void)p;
    seen.setups++;
    return true;
}

static void count_enqueue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    (void)sim;
    (void)p;
    (void)pkt;
    seen.enq++;
}

static void count_dequeue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                          uint64_t queued_bytes)
{
    (void)sim;
    (void)p;
    (void)pkt;
    seen.deq++;
    if (queued_bytes) seen.deq_queued++;
    if (queued_bytes > seen.max_queued_bytes) seen.max_queued_bytes = queued_bytes;
}

static const struct sim_qdisc count_qdisc = {
    .name = "count",
    .setup = count_setup,
    .on_enqueue = count_enqueue,
    .on_dequeue = count_dequeue,
};

static uint64_t rx_frames;
static void on_rx(void *user, uint32_t node, const struct sim_pkt *pkt, uint64_t now)
{
    (void)user;
    (void)node;
    (void)pkt;
    (void)now;
    rx_frames++;
}

static void test_registered_discipline(void **state)
{
    (void)state;
    assert_int_equal(sim_qdisc_register(&count_qdisc), 0);
    assert_int_equal(sim_qdisc_register(&count_qdisc), 0); /* once */
    struct sim_qdisc bad = {.name = "bad"};
    assert_true(sim_qdisc_register(&bad) < 0);

    /* a fast sender behind a slow egress: the first frames pass, the others queue */
    struct fe_sim_scenario sc;
    fe_sim_scenario_init(&sc);
    fe_sim_scenario_add_node(&sc, "a", false);
    fe_sim_scenario_add_node(&sc, "sw", true);
    fe_sim_scenario_add_node(&sc, "b", false);
    fe_sim_scenario_add_link(&sc, 0, 1, 4 * G10, 1000, 0);
    fe_sim_scenario_add_link(&sc, 1, 2, G10, 1000, 0);
    char err[256] = "";
    int rc;
    struct fe_sim *sim = fe_sim_create(&sc, &rc, err, sizeof err);
    assert_non_null(sim);
    assert_int_equal(seen.setups, 2); /* the switch's two ports */
    struct sim_port *out = &sim->nodes[1].ports[1];
    unsigned bit = 0;
    while (sim_qdiscs[bit] != &count_qdisc) bit++;
    assert_true(out->qdiscs >> bit & 1);
    assert_true(sim->egress_hooks >= SIM_QD_GENERIC);
    sim->test_rx = on_rx;
    enum { N = 20 };
    for (int i = 0; i < N; i++) sim_test_inject(sim, 0, 2, 3, 1000, false, 1, (uint64_t)i);
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    assert_int_equal(rx_frames, N);
    assert_int_equal(seen.enq, N);
    assert_int_equal(seen.deq, N);
    assert_true(seen.deq_queued > 0 && seen.deq_queued < N);
    assert_true(seen.max_queued_bytes >= 1000);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered_discipline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
