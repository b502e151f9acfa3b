/* Public functions of the simulator that no tool calls: whether a run has finished, the nodes
 * and ports an embedder walks to read every port's counters, and one flow's throughput in one
 * phase. A star of three hosts, two flows into h0, the second starting later. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/sim.h"

static const char scenario[] = "name: api\n"
                               "topology: {kind: star, hosts: 3}\n"
                               "flows:\n"
                               "  - {src: h1, dst: h0, size: 300KB}\n"
                               "  - {src: h2, dst: h0, size: 300KB, start: 100us}\n";

static struct fe_sim *build(struct fe_sim_scenario *sc)
{
    char err[256] = "";
    int rc =
        fe_sim_scenario_parse_yaml(scenario, sizeof scenario - 1, "api.yaml", sc, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    struct fe_sim *sim = fe_sim_create(sc, &rc, err, sizeof err);
    if (!sim) fprintf(stderr, "%s\n", err);
    assert_non_null(sim);
    return sim;
}

static void test_finished(void **state)
{
    (void)state;
    struct fe_sim_scenario sc;
    struct fe_sim *sim = build(&sc);
    assert_false(fe_sim_finished(sim));
    assert_int_equal(fe_sim_run(sim, 50000), 0);
    assert_false(fe_sim_finished(sim));
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    assert_true(fe_sim_finished(sim));
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    assert_int_equal(st.flows_done, 2);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

/* Every port is reachable through fe_sim_n_nodes and fe_sim_node_ports, and each link's two
 * ends name each other. */
static void test_nodes_and_ports(void **state)
{
    (void)state;
    struct fe_sim_scenario sc;
    struct fe_sim *sim = build(&sc);
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    uint32_t n = fe_sim_n_nodes(sim);
    assert_int_equal(n, sc.n_nodes);
    assert_int_equal(n, 4); /* sw, h0, h1, h2 */
    int sw = fe_sim_scenario_find_node(&sc, "sw");
    assert_true(sw >= 0);
    uint64_t tx_pkts = 0;
    for (uint32_t node = 0; node < n; node++) {
        uint32_t ports = fe_sim_node_ports(sim, node);
        assert_int_equal(ports, node == (uint32_t)sw ? 3 : 1);
        for (uint32_t p = 0; p < ports; p++) {
            struct fe_sim_port_stats ps, back;
            assert_int_equal(fe_sim_port_stats(sim, node, p, &ps), 0);
            assert_int_equal(fe_sim_port_stats(sim, ps.peer_node, ps.peer_port, &back), 0);
            assert_int_equal(back.peer_node, node);
            assert_int_equal(back.peer_port, p);
            tx_pkts += ps.tx_pkts;
        }
    }
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    assert_int_equal(tx_pkts, st.pkts_sent);
    assert_int_equal(fe_sim_node_ports(sim, n), 0); /* no such node */
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

/* Per flow and phase: 0 where the flow is not active, and the active flows' rates add up to the
 * phase's aggregate. */
static void test_phase_flow_bps(void **state)
{
    (void)state;
    struct fe_sim_scenario sc;
    struct fe_sim *sim = build(&sc);
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    struct fe_sim_phase ph[8];
    int np = fe_sim_phases(sim, ph, 8);
    assert_true(np >= 3); /* h1 alone, both, the one left */
    assert_true(fe_sim_phase_flow_bps(sim, 0, 0) > 0);
    assert_true(fe_sim_phase_flow_bps(sim, 0, 1) == 0); /* not started yet */
    for (int k = 0; k < np && k < 8; k++) {
        double sum = 0;
        uint32_t active = 0;
        for (uint32_t f = 0; f < fe_sim_n_flows(sim); f++) {
            double b = fe_sim_phase_flow_bps(sim, k, f);
            assert_true(b >= 0);
            sum += b;
            active += b > 0;
        }
        assert_true(active <= ph[k].n_active);
        assert_true(fabs(sum - ph[k].aggregate_bps) <= 1e-6 * (ph[k].aggregate_bps + 1));
    }
    /* out of range: 0, not an error */
    assert_true(fe_sim_phase_flow_bps(sim, -1, 0) == 0);
    assert_true(fe_sim_phase_flow_bps(sim, np, 0) == 0);
    assert_true(fe_sim_phase_flow_bps(sim, 0, fe_sim_n_flows(sim)) == 0);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finished),
        cmocka_unit_test(test_nodes_and_ports),
        cmocka_unit_test(test_phase_flow_bps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
