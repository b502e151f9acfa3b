/* ns3-roce JSON scenarios (src/sim/ns3roce.c): what a config + topology + flows triple becomes
 * (nodes, links, flows, DCQCN parameters, PFC/ECN, payload), and the messages for bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "feroce/err.h"
#include "feroce/sim.h"

static const char cfg_text[] =
    "{\"default_attributes\": {\n"
    "  \"ns3::SwitchNode::EcnEnabled\": true,\n"
    "  \"ns3::QbbNetDevice::PauseTime\": 5e-6,\n"
    "  \"ns3::QbbNetDevice::QbbEnabled\": true,\n"
    "  \"ns3::QbbNetDevice::DynamicThreshold\": true,\n"
    "  \"ns3::RdmaHw::ClampTargetRate\": true,\n"
    "  \"ns3::RdmaHw::AlphaResumInterval\": 2.0,\n"
    "  \"ns3::RdmaHw::RPTimer\": 900.0,\n"
    "  \"ns3::RdmaHw::FastRecoveryTimes\": 1,\n"
    "  \"ns3::RdmaHw::EwmaGain\": 0.00390625,\n"
    "  \"ns3::RdmaHw::RateAI\": \"50Mb/s\",\n"
    "  \"ns3::RdmaHw::RateHAI\": \"1MB/s\",\n"
    "  \"ns3::RdmaHw::L2ChunkSize\": 4000,\n"
    "  \"ns3::RdmaHw::L2AckInterval\": 4000,\n"
    "  \"ns3::RdmaHw::CcMode\": 1,\n"
    "  \"ns3::RdmaHw::RateDecreaseInterval\": 8,\n"
    "  \"ns3::RdmaHw::MinRate\": \"200Mb/s\",\n"
    "  \"ns3::RdmaHw::Mtu\": 1500,\n"
    "  \"ns3::SwitchMmu::BufferSize\": \"12MiB\"},\n"
    " \"topology_file\": \"t.json\", \"flows_file\": \"f.json\",\n"
    " \"simulator_stop_time\": 0, \"ack_high_prio\": true, \"rng_seed\": 9,\n"
    " \"ecn\": [\n"
    "  {\"bandwidth_bps\": 1e9, \"min_buf_bytes\": 5, \"max_buf_bytes\": 200, "
    "\"max_probability\": 0.01},\n"
    "  {\"bandwidth_bps\": 10e9, \"min_buf_bytes\": 50, \"max_buf_bytes\": 400, "
    "\"max_probability\": 0.2},\n"
    "  {\"bandwidth_bps\": 40e9, \"min_buf_bytes\": 100, \"max_buf_bytes\": 800, "
    "\"max_probability\": 0.2}],\n"
    " \"modules\": [{\"path\": \"ns3::PfcMonitor\", \"enable\": true, \"attributes\": {}}]}\n";

/* a switch (listed third: node 2), four hosts at 10 Gb/s and an uplink host at 40 Gb/s */
static const char topo_text[] =
    "{\"nodes\": [{\"id\": 0, \"is_switch\": false}, {\"id\": 1, \"is_switch\": false},\n"
    "  {\"id\": 2, \"is_switch\": true}, {\"id\": 3, \"is_switch\": false},\n"
    "  {\"id\": 4, \"is_switch\": false}, {\"id\": 5, \"is_switch\": false}],\n"
    " \"groups\": [],\n"
    " \"links\": [\n"
    "  {\"src\": 2, \"dst\": 0, \"bandwidth\": 10e9, \"latency\": 1e-6, \"error_rate\": 0},\n"
    "  {\"src\": 2, \"dst\": 1, \"bandwidth\": 10e9, \"latency\": 1e-6, \"error_rate\": 0},\n"
    "  {\"src\": 2, \"dst\": 3, \"bandwidth\": 10e9, \"latency\": 2e-6, \"error_rate\": 0.001},\n"
    "  {\"src\": 2, \"dst\": 4, \"bandwidth\": 10e9, \"latency\": 1e-6},\n"
    "  {\"src\": 5, \"dst\": 2, \"bandwidth\": 40000000000, \"latency\": 1e-6}]}\n";

static const char flows_text[] =
    "{\"flows\": [\n"
    " {\"path\": \"ns3::RdmaFlowUnicast\", \"enable\": true, \"start_time\": 0.0,\n"
    "  \"in_background\": false, \"attributes\": {\"SourceNode\": 0, \"DestinationNode\": 4,\n"
    "  \"WriteByteAmount\": 1e6, \"PfcPriority\": 3, \"IsReliable\": true}},\n"
    " {\"path\": \"ns3::RdmaFlowUnicast\", \"enable\": true, \"start_time\": 0.0005,\n"
    "  \"in_background\": true, \"attributes\": {\"SourceNode\": 1, \"DestinationNode\": 4,\n"
    "  \"WriteByteAmount\": 2000000, \"PfcPriority\": 2}},\n"
    " {\"path\": \"ns3::RdmaFlowUnicast\", \"enable\": false, \"start_time\": 0.0,\n"
    "  \"attributes\": {\"SourceNode\": 100, \"DestinationNode\": 101}},\n"
    " {\"path\": \"ns3::AgFlowMcastPhase\", \"enable\": false, \"attributes\": {}},\n"
    " {\"path\": \"ns3::RdmaFlowUnicast\", \"enable\": true, \"start_time\": 0.0,\n"
    "  \"attributes\": {\"SourceNode\": 3, \"DestinationNode\": 4, \"WriteByteAmount\": 1e6}}\n"
    "]}\n";

struct out {
    struct fe_sim_scenario sc;
    struct fe_sim_ns3roce_info info;
    char err[512];
    char *notes;
    size_t notes_len;
};

static int load3(struct out *o, const char *cfg, const char *topo, const char *flows, bool skip)
{
    FILE *w = open_memstream(&o->notes, &o->notes_len);
    assert_non_null(w);
    struct fe_sim_ns3roce_opts opts = {.skip_unsupported = skip, .warn = w};
    o->err[0] = 0;
    int rc = fe_sim_ns3roce_parse(cfg, strlen(cfg), "c.json", topo, strlen(topo), "t.json", flows,
                                  strlen(flows), "f.json", &opts, &o->sc, &o->info, o->err,
                                  sizeof(o->err));
    fclose(w);
    return rc;
}

static void done(struct out *o)
{
    fe_sim_scenario_free(&o->sc);
    fe_sim_ns3roce_info_free(&o->info);
    free(o->notes);
}

static double param(const struct fe_sim_scenario *sc, const char *name)
{
    int k = fe_cc_param_index(sc->cc[0].algo, name);
    assert_true(k >= 0);
    return sc->cc[0].params.v[k];
}

static void test_mapping(void **state)
{
    (void)state;
    if (!fe_sim_ns3roce_available()) skip();
    struct out o;
    assert_int_equal(load3(&o, cfg_text, topo_text, flows_text, false), 0);
    const struct fe_sim_scenario *sc = &o.sc;
    /* nodes by list position */
    assert_int_equal(sc->n_nodes, 6);
    assert_true(sc->nodes[2].is_switch);
    assert_false(sc->nodes[0].is_switch || sc->nodes[5].is_switch);
    assert_int_equal(sc->n_links, 5);
    assert_int_equal(sc->links[0].a, 2);
    assert_int_equal(sc->links[0].b, 0);
    assert_true(sc->links[0].rate_bps == 10000000000ull);
    assert_true(sc->links[2].delay_ns == 2000);
    assert_true(sc->links[2].loss == 0.001);
    assert_true(sc->links[4].rate_bps == 40000000000ull);
    /* flows: disabled ones are not there; defaults PfcPriority 3 */
    assert_int_equal(sc->n_flows, 3);
    assert_int_equal(o.info.n_flows, 3);
    assert_int_equal(o.info.n_disabled, 2);
    assert_int_equal(o.info.n_background, 1);
    assert_false(o.info.background[0]);
    assert_true(o.info.background[1]);
    assert_int_equal(sc->flows[0].src, 0);
    assert_int_equal(sc->flows[0].dst, 4);
    assert_true(sc->flows[0].bytes == 1000000);
    assert_true(sc->flows[1].start_ns == 500000);
    assert_int_equal(sc->flows[1].prio, 2);
    assert_int_equal(sc->flows[2].prio, 3);
    /* Mtu = payload per packet */
    assert_int_equal(sc->flows[0].msg_bytes, 1500);
    assert_int_equal(sc->host.mtu_bytes, 2048);
    /* DCQCN as the HPCC reader maps CC_MODE 1 */
    assert_string_equal(sc->cc[0].algo->name, "dcqcn-hpcc-ns3");
    assert_true(param(sc, "rpg_time_reset") == 900);
    assert_true(param(sc, "dce_tcp_rtt") == 2);
    assert_true(param(sc, "rate_reduce_monitor_period") == 8);
    assert_true(param(sc, "dce_tcp_g") == 1020); /* (1 - 1/256) x 1024 */
    assert_true(param(sc, "rpg_threshold") == 1);
    assert_true(param(sc, "clamp_tgt_rate") == 1);
    assert_true(param(sc, "rpg_ai_rate") == 50);
    assert_true(param(sc, "rpg_hai_rate") == 8); /* 1 MB/s (bytes in ns-3) = 8 Mb/s */
    assert_true(param(sc, "rpg_min_rate") == 200);
    /* switch: PFC on the flows' priorities, pause 5 us at 10 Gb/s = 98 quanta, 12 MiB */
    assert_true(sc->sw.pfc);
    assert_int_equal(sc->sw.lossless_mask, (1 << 3) | (1 << 2));
    assert_int_equal(sc->sw.pause_quanta, 98);
    assert_true(sc->sw.buffer_bytes == 12 * 1048576ull);
    /* ECN: 10 Gb/s ports take the 1 Gb/s entry (strictly below), 40 Gb/s the 10 Gb/s one */
    assert_true(sc->sw.ecn);
    assert_int_equal(sc->sw.n_red, 2);
    for (int i = 0; i < 2; i++) {
        const struct fe_sim_red *r = &sc->sw.red[i];
        if (r->rate_bps == 10000000000ull) {
            assert_true(r->kmin_bytes == 5000 && r->kmax_bytes == 200000);
            assert_int_equal(r->pmax_ppm, 10000);
        } else {
            assert_true(r->rate_bps == 40000000000ull);
            assert_true(r->kmin_bytes == 50000 && r->kmax_bytes == 400000);
            assert_int_equal(r->pmax_ppm, 200000);
        }
    }
    /* host: ACKs high priority, an ACK about every 4000 bytes (3 packets of 1500) */
    assert_int_equal(sc->host.ack_pcp, 7);
    assert_int_equal(sc->host.ack_every, 3);
    assert_true(sc->seed == 9);
    assert_true(sc->stop_ns == FE_SIM_NO_TIME);
    /* notes: ignored attributes and modules, once */
    assert_non_null(strstr(o.notes, "ignored: ns3::RdmaHw::L2ChunkSize"));
    assert_non_null(strstr(o.notes, "modules not run: ns3::PfcMonitor"));
    assert_null(strstr(o.notes, "node \"id\""));
    done(&o);
}

/* the triple runs: every foreground flow completes, no drops with PFC */
static void test_runs(void **state)
{
    (void)state;
    if (!fe_sim_ns3roce_available()) skip();
    struct out o;
    assert_int_equal(load3(&o, cfg_text, topo_text, flows_text, false), 0);
    /* no link loss for this check */
    for (uint32_t i = 0; i < o.sc.n_links; i++) o.sc.links[i].loss = 0;
    int rc;
    char err[256];
    struct fe_sim *sim = fe_sim_create(&o.sc, &rc, err, sizeof(err));
    assert_non_null(sim);
    fe_sim_run(sim, 100000000);
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    assert_true(st.drops_total == 0);
    for (uint32_t i = 0; i < fe_sim_n_flows(sim); i++) {
        struct fe_sim_flow_stats fs;
        fe_sim_flow_stats(sim, i, &fs);
        assert_true(fs.done && !fs.failed);
    }
    fe_sim_destroy(sim);
    done(&o);
}

/* A config naming its two files, and a switch with two servers (the error and skip tests). */
static const char named_files[] = "{\"topology_file\": \"t\", \"flows_file\": \"f\"}";
static const char two_servers[] =
    "{\"nodes\": [{\"is_switch\": true}, {}, {}], \"links\": [{\"src\": 0, \"dst\": 1},"
    " {\"src\": 0, \"dst\": 2}]}";

static void test_ids_and_bisection(void **state)
{
    (void)state;
    if (!fe_sim_ns3roce_available()) skip();
    static const char star[] =
        "{\"nodes\": [{\"id\": 7, \"is_switch\": true}, {\"id\": 0}, {\"id\": 1}, {\"id\": 2},"
        " {\"id\": 3}], \"links\": [{\"src\": 0, \"dst\": 1}, {\"src\": 0, \"dst\": 2},"
        " {\"src\": 0, \"dst\": 3}, {\"src\": 0, \"dst\": 4}]}";
    static const char flows[] =
        "{\"flows\": [{\"path\": \"ns3::RdmaFlowBisection\", \"enable\": true,"
        " \"attributes\": {\"WriteByteAmount\": 5000}}]}";
    struct out o;
    assert_int_equal(load3(&o, named_files, star, flows, false), 0);
    /* defaults: links 100 Gb/s 1 us, PFC off, ECN off, DCQCN with ns3-roce's defaults */
    assert_true(o.sc.links[0].rate_bps == 100000000000ull && o.sc.links[0].delay_ns == 1000);
    assert_false(o.sc.sw.pfc);
    assert_false(o.sc.sw.ecn);
    assert_true(o.sc.seed == 50);
    assert_true(param(&o.sc, "rpg_time_reset") == 1500);
    assert_int_equal(o.sc.flows[0].msg_bytes, 1000);
    /* servers 1..4: 1 -> 3, then 4 -> 2 */
    assert_int_equal(o.sc.n_flows, 2);
    assert_int_equal(o.sc.flows[0].src, 1);
    assert_int_equal(o.sc.flows[0].dst, 3);
    assert_int_equal(o.sc.flows[1].src, 4);
    assert_int_equal(o.sc.flows[1].dst, 2);
    assert_non_null(strstr(o.notes, "nodes[0] is node 0, its id says 7"));
    done(&o);
}

static void expect_error(const char *cfg, const char *topo, const char *flows, bool skip,
                         const char *msg)
{
    struct out o;
    int rc = load3(&o, cfg, topo, flows, skip);
    if (rc == 0 || !strstr(o.err, msg))
        fail_msg("expected an error containing '%s', got %d '%s'", msg, rc, o.err);
    assert_int_equal(o.sc.n_nodes, 0); /* left empty */
    done(&o);
}

static void test_errors(void **state)
{
    (void)state;
    if (!fe_sim_ns3roce_available()) skip();
    static const char fl[] =
        "{\"flows\": [{\"path\": \"ns3::RdmaFlowUnicast\", \"enable\": true, \"attributes\":"
        " {\"SourceNode\": 1, \"DestinationNode\": 2, \"WriteByteAmount\": 1000}}]}";
    expect_error("{\"topology_file\": \"t\", ", two_servers, fl, false, "c.json:1: invalid JSON");
    expect_error("[1]", two_servers, fl, false, "c.json: the top-level value must be an object");
    expect_error("{\"flows_file\": \"f\"}", two_servers, fl, false,
                 "c.json: topology_file: missing");
    expect_error(named_files, "{\"nodes\": [{}], \"links\": [{\"src\": 0, \"dst\": 0}]} x", fl,
                 false, "t.json: invalid JSON: text after the top-level value");
    expect_error(named_files,
                 "{\"nodes\": [{}, {}], \"links\": [{\"src\": 0, \"dst\": 1},"
                 " {\"src\": 0, \"dst\": 1, \"bandwidth\": \"10G\"}]}",
                 fl, false, "t.json: links[1].bandwidth: not a number");
    expect_error(named_files, "{\"nodes\": [{}, {}], \"links\": [{\"src\": 0, \"dst\": 2}]}", fl,
                 false, "t.json: links[0].dst: 2 not in [0, 1]");
    expect_error(named_files, "{\"nodes\": [{\"is_switch\": 1}], \"links\": []}", fl, false,
                 "t.json: nodes[0].is_switch: not a boolean");
    expect_error(named_files, two_servers,
                 "{\"flows\": [{\"path\": \"ns3::RdmaFlowUnicast\", \"enable\": true,"
                 " \"attributes\": {\"SourceNode\": 0, \"DestinationNode\": 2,"
                 " \"WriteByteAmount\": 10}}]}",
                 false, "f.json: flows[0].attributes: SourceNode 0 is a switch");
    expect_error(named_files, two_servers,
                 "{\"flows\": [{\"path\": \"ns3::RdmaFlowUnicast\", \"enable\": true,"
                 " \"attributes\": {\"SourceNode\": 1, \"DestinationNode\": 2,"
                 " \"WriteByteAmount\": 10, \"Foo\": 1}}]}",
                 false, "f.json: flows[0].attributes.Foo: not an attribute of this flow type");
    expect_error(named_files, two_servers,
                 "{\"flows\": [{\"path\": \"ns3::RdmaFlowUnicast\", \"enable\": true,"
                 " \"attributes\": {\"SourceNode\": 1.5, \"DestinationNode\": 2}}]}",
                 false, "f.json: flows[0].attributes.SourceNode: 1.5 is not an integer");
    /* multicast: refused, or skipped on request (then nothing is left to run here) */
    static const char mc[] =
        "{\"flows\": [{\"path\": \"ns3::AgFlowMcastPhase\", \"enable\": true, \"attributes\":"
        " {\"MulticastRootCount\": 2}}]}";
    expect_error(named_files, two_servers, mc, false,
                 "f.json: flows[0]: ns3::AgFlowMcastPhase (multicast) cannot be simulated");
    expect_error(named_files, two_servers, mc, true,
                 "f.json: no flow to simulate (0 disabled, 1 of types");
    expect_error("{\"topology_file\": \"t\", \"flows_file\": \"f\", \"default_attributes\":"
                 " {\"ns3::RdmaHw::Mtu\": 9000}}",
                 two_servers, fl, false, "c.json: default_attributes.ns3::RdmaHw::Mtu: 9000");
    expect_error("{\"topology_file\": \"t\", \"flows_file\": \"f\", \"default_attributes\":"
                 " {\"ns3::RdmaHw::RateAI\": \"fast\"}}",
                 two_servers, fl, false,
                 "c.json: default_attributes.ns3::RdmaHw::RateAI: not a rate");
    expect_error("{\"topology_file\": \"t\", \"flows_file\": \"f\", \"default_attributes\":"
                 " {\"ns3::RdmaHw::CcMode\": 2}}",
                 two_servers, fl, false, "CC_MODE 2 is not available");
    /* ECN on: a port rate with no entry strictly below it */
    expect_error("{\"topology_file\": \"t\", \"flows_file\": \"f\", \"default_attributes\":"
                 " {\"ns3::SwitchNode::EcnEnabled\": true}, \"ecn\": [{\"bandwidth_bps\": 100e9,"
                 " \"min_buf_bytes\": 1, \"max_buf_bytes\": 2, \"max_probability\": 0.1}]}",
                 two_servers, fl, false,
                 "c.json: ecn: no entry with bandwidth_bps below the 100 Gb/s");
    expect_error("{\"topology_file\": \"t\", \"flows_file\": \"f\", \"ecn\": [{\"bandwidth_bps\":"
                 " 1e9, \"min_buf_bytes\": 1, \"max_probability\": 0.1}]}",
                 two_servers, fl, false, "c.json: ecn[0].max_buf_bytes: missing");
}

/* the skip option keeps the rest and says what it dropped */
static void test_skip(void **state)
{
    (void)state;
    if (!fe_sim_ns3roce_available()) skip();
    static const char fl[] =
        "{\"flows\": [{\"path\": \"ns3::RdmaFlowMulticast\", \"enable\": true},"
        " {\"path\": \"ns3::RdmaFlowUnicast\", \"enable\": true, \"attributes\":"
        " {\"SourceNode\": 1, \"DestinationNode\": 2, \"WriteByteAmount\": 1000,"
        " \"IsReliable\": false}}]}";
    struct out o;
    assert_int_equal(load3(&o, named_files, two_servers, fl, true), 0);
    assert_int_equal(o.sc.n_flows, 1);
    assert_int_equal(o.info.n_skipped, 1);
    assert_non_null(strstr(o.notes, "flows[0]: skipping ns3::RdmaFlowMulticast (multicast)"));
    assert_non_null(strstr(o.notes, "IsReliable false (UD)"));
    done(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_mapping), cmocka_unit_test(test_runs),
                                       cmocka_unit_test(test_ids_and_bisection),
                                       cmocka_unit_test(test_errors), cmocka_unit_test(test_skip)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
