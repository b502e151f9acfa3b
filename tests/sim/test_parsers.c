/* Scenario sources: the native YAML file (valid files, generators, every error with its
 * file:line), --set assignments, and the HPCC ns-3 text files (config, topology, flows) with
 * fct.txt output. */
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
#include "sim/partition.h"

#ifndef SIM_DATA
#error SIM_DATA must name tests/sim/data
#endif

static void run_to_end(const struct fe_sim_scenario *sc)
{
    char err[256] = "";
    int rc;
    struct fe_sim *sim = fe_sim_create(sc, &rc, err, sizeof(err));
    if (!sim) fprintf(stderr, "%s\n", err);
    assert_non_null(sim);
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    assert_int_equal(st.drops_total, 0);
    assert_int_equal(st.flows_done, sc->n_flows);
    fe_sim_destroy(sim);
}

static void test_yaml_file(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    char err[256] = "";
    int rc = fe_sim_scenario_load_yaml(SIM_DATA "/incast4.yaml", &sc, err, sizeof(err));
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_string_equal(sc.name, "incast4");
    assert_int_equal(sc.seed, 7);
    assert_int_equal(sc.n_nodes, 6);
    assert_int_equal(sc.n_links, 5);
    assert_int_equal(sc.n_flows, 4);
    assert_int_equal(sc.sw.buffer_bytes, 4u << 20);
    assert_true(sc.sw.ecn);
    assert_int_equal(sc.sw.n_red, 1);
    assert_int_equal(sc.sw.red[0].kmin_bytes, 5000);
    assert_int_equal(sc.sw.red[0].kmax_bytes, 200000);
    assert_int_equal(sc.sw.red[0].pmax_ppm, 10000);
    assert_int_equal(sc.sw.lossless_mask, 1u << 3);
    assert_int_equal(sc.links[3].delay_ns, 2000);
    assert_int_equal(sc.links[1].delay_ns, 1000);
    assert_int_equal(sc.flows[1].start_ns, 100000);
    assert_int_equal(sc.flows[3].msg_bytes, 65536);
    assert_int_equal(sc.n_cc, 2);
    assert_string_equal(sc.cc[0].algo->name, "dcqcn");
    assert_int_equal(sc.flows[2].cc, 1);
    int k = fe_cc_param_index(sc.cc[0].algo, "rpg_time_reset");
    assert_true(sc.cc[0].params.v[k] == 55);
    k = fe_cc_param_index(sc.cc[1].algo, "rpg_ai_rate");
    assert_true(sc.cc[1].params.v[k] == 10);
    assert_int_equal(sc.host.cnp_interval_ns, 4000);
    run_to_end(&sc);
    fe_sim_scenario_free(&sc);
}

static void test_yaml_generators(void **s)
{
    (void)s;
    static const char text[] = "name: gen\n"
                               "link: {rate: 100Gbps, delay: 1us}\n"
                               "topology: {kind: leaf-spine, leaves: 2, spines: 2, "
                               "hosts_per_leaf: 2}\n"
                               "flows:\n"
                               "  - {pattern: all-to-all, size: 100KB}\n"
                               "  - {pattern: incast, dst: h0, srcs: [h1, h2], size: 50KB}\n"
                               "  - {pattern: incast, dst: h3, size: 10KB, start: 5us}\n";
    struct fe_sim_scenario sc;
    char err[256] = "";
    int rc = fe_sim_scenario_parse_yaml(text, strlen(text), "gen.yaml", &sc, err, sizeof(err));
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(sc.n_nodes, 8);
    assert_int_equal(sc.n_links, 4 + 4);
    assert_int_equal(sc.n_flows, 12 + 2 + 3);
    assert_int_equal(sc.links[0].rate_bps, 100000000000ull);
    run_to_end(&sc);
    fe_sim_scenario_free(&sc);

    static const char star[] = "topology: {kind: star, hosts: 3}\nflows: [{src: h1, dst: h0, "
                               "size: 1MB}]\n";
    assert_int_equal(fe_sim_scenario_parse_yaml(star, strlen(star), "s", &sc, err, sizeof(err)), 0);
    assert_int_equal(sc.n_nodes, 4);
    fe_sim_scenario_free(&sc);
}

struct bad {
    const char *text, *needle;
};

static void test_yaml_errors(void **s)
{
    (void)s;
    static const struct bad cases[] = {
        {"hosts: [a]\nswitches: [s]\nlinks: [[a, s]]\nflows:\n  - {src: a, dst: x, size: 1MB}\n",
         "x.yaml:5: flow.dst: no node named 'x'"},
        {"switch:\n  buffer: lots\n", "x.yaml:2: switch.buffer: 'lots' is not a size"},
        {"switch:\n  bufer: 1MB\n", "x.yaml:2: unknown key 'bufer' in switch"},
        {"host:\n  mtu: 9000\n", "x.yaml:2: host.mtu: '9000' out of range"},
        {"cc: {algo: nosuch}\nhosts: [a]\n", "unknown congestion control 'nosuch'"},
        {"cc: {algo: dcqcn, params: {rpg_gd: 99}}\n", "x.yaml:1: dcqcn:"},
        {"hosts: [a, a]\n", "x.yaml:1: node 'a' defined twice"},
        {"flows: [1, 2\n", "x.yaml:2:"},
        {"- 1\n- 2\n", "must be a mapping"},
        {"topology: {kind: ring}\n", "unknown topology kind 'ring'"},
        {"hosts: [a]\nlinks: [[a, a]]\n", "two different nodes"},
        {"hosts: [a, b]\nswitches: [s]\nlinks: [[a, s], [b, s]]\nflows: [{src: a, dst: b}]\n",
         "needs a size"},
        {"hosts: [a, b]\nswitches: [s]\nlinks: [[a, s], [b, s]]\n"
         "flows: [{src: a, dst: s, size: 1}]\n",
         "between hosts"},
        {"stop: soon\n", "x.yaml:1: stop: 'soon' is not a time"},
        {"name: nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\n",
         "x.yaml:1: name: 70 characters, at most 63"},
        {"link: {rate: fast}\n", "'fast' is not a rate"},
        {"switch:\n  red:\n    - {kmin: 5KB, kmax: 1KB, pmax: 0.1}\n", "kmax < kmin"},
        {"switch:\n  red:\n    - {kmin: 5KB, kmax: 10KB, pmax: 2}\n", "red.pmax"},
        {"switch:\n  pfc_mode: sometimes\n", "quanta or xoff-xon"},
        {"name: x\n", "no nodes"},
        {"window: {start: 5ms, end: 1ms}\n", "window.end must be after"},
        {"flows: [{pattern: everyone, size: 1}]\nhosts: [a]\n", "unknown flow pattern"},
        {"", "empty scenario"},
        {"hosts: [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n", "1..31 characters"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fe_sim_scenario sc;
        char err[400] = "";
        int rc = fe_sim_scenario_parse_yaml(cases[i].text, strlen(cases[i].text), "x.yaml", &sc,
                                            err, sizeof(err));
        if (rc == 0 || !strstr(err, cases[i].needle))
            fprintf(stderr, "case %zu: rc %d, error '%s', wanted '%s'\n", i, rc, err,
                    cases[i].needle);
        assert_true(rc < 0);
        assert_non_null(strstr(err, cases[i].needle));
        assert_int_equal(sc.n_nodes, 0); /* left empty */
    }
}

static void test_set(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    char err[256];
    assert_int_equal(fe_sim_builtin_load("incast3", &sc, err, sizeof(err)), 0);
    assert_int_equal(fe_sim_scenario_set(&sc, "switch.buffer=1MiB", err, sizeof(err)), 0);
    assert_int_equal(sc.sw.buffer_bytes, 1u << 20);
    assert_int_equal(fe_sim_scenario_set(&sc, "host.mtu=1024", err, sizeof(err)), 0);
    assert_int_equal(sc.host.mtu_bytes, 1024);
    assert_int_equal(fe_sim_scenario_set(&sc, "link.delay=2us", err, sizeof(err)), 0);
    for (uint32_t i = 0; i < sc.n_links; i++) assert_int_equal(sc.links[i].delay_ns, 2000);
    assert_int_equal(fe_sim_scenario_set(&sc, "flow.size=5MB", err, sizeof(err)), 0);
    for (uint32_t i = 0; i < sc.n_flows; i++) assert_int_equal(sc.flows[i].bytes, 5000000);
    assert_int_equal(fe_sim_scenario_set(&sc, "seed=9", err, sizeof(err)), 0);
    assert_int_equal(sc.seed, 9);
    assert_int_equal(fe_sim_scenario_set(&sc, "switch.lossless=3,4", err, sizeof(err)), 0);
    assert_int_equal(sc.sw.lossless_mask, (1u << 3) | (1u << 4));
    assert_int_equal(fe_sim_scenario_set(&sc, "switch.headroom=auto", err, sizeof(err)), 0);
    assert_int_equal(sc.sw.headroom_bytes, 0);
    assert_int_equal(fe_sim_scenario_set(&sc, "switch.pfc_mode=xoff-xon", err, sizeof(err)), 0);
    assert_int_equal(sc.sw.pfc_mode, FE_SIM_PFC_XOFF_XON);
    assert_int_equal(sc.host.frames, FE_SIM_FRAMES_ROCE);
    assert_int_equal(fe_sim_scenario_set(&sc, "host.frames=hpcc-ns3", err, sizeof(err)), 0);
    assert_int_equal(sc.host.frames, FE_SIM_FRAMES_HPCC_NS3);
    assert_true(fe_sim_scenario_set(&sc, "host.frames=ns3", err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "roce or hpcc-ns3"));
    assert_true(fe_sim_scenario_set(&sc, "switch.nope=1", err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "unknown key"));
    assert_true(fe_sim_scenario_set(&sc, "host.mtu=x", err, sizeof(err)) < 0);
    assert_true(fe_sim_scenario_set(&sc, "novalue", err, sizeof(err)) < 0);
    assert_true(fe_sim_scenario_set(&sc, "link.loss=2", err, sizeof(err)) < 0);
    assert_true(fe_sim_scenario_set(&sc, "switch.lossless=9", err, sizeof(err)) < 0);
    fe_sim_scenario_free(&sc);
}

static void test_hpcc(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    struct fe_sim_hpcc_files files;
    char err[400] = "";
    int rc =
        fe_sim_hpcc_load(SIM_DATA "/hpcc/config.txt", NULL, NULL, &sc, &files, err, sizeof(err));
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(sc.n_nodes, 5);
    assert_true(sc.nodes[0].is_switch);
    assert_false(sc.nodes[1].is_switch);
    assert_int_equal(sc.n_links, 4);
    assert_int_equal(sc.links[3].rate_bps, 25000000000ull);
    assert_int_equal(sc.links[0].delay_ns, 1000);
    assert_int_equal(sc.n_flows, 3);
    assert_int_equal(sc.flows[0].start_ns, 2000000000ull);
    assert_int_equal(sc.flows[2].start_ns, 2000100000ull);
    assert_int_equal(sc.flows[0].sport, 10000);
    assert_int_equal(sc.flows[0].dport, 100);
    assert_int_equal(sc.flows[0].prio, 3);
    assert_int_equal(sc.flows[0].msg_bytes, 1000);
    assert_int_equal(sc.host.mtu_bytes, 1024);
    assert_int_equal(sc.sw.buffer_bytes, 16u << 20);
    assert_int_equal(sc.stop_ns, 2010000000ull);
    assert_true(sc.sw.ecn);
    assert_int_equal(sc.sw.n_red, 2);
    assert_int_equal(sc.sw.red[1].kmin_bytes, 400000);
    assert_int_equal(sc.sw.red[1].pmax_ppm, 200000);
    assert_string_equal(sc.cc[0].algo->name, "dcqcn-hpcc-ns3");
    int k = fe_cc_param_index(sc.cc[0].algo, "rpg_time_reset");
    assert_true(sc.cc[0].params.v[k] == 300);
    k = fe_cc_param_index(sc.cc[0].algo, "rpg_min_rate");
    assert_true(sc.cc[0].params.v[k] == 100);
    assert_non_null(strstr(files.topology, "hpcc/topology.txt"));
    assert_non_null(strstr(files.fct_out, "hpcc/fct.txt"));
    int e;
    struct fe_sim *sim = fe_sim_create(&sc, &e, err, sizeof(err));
    assert_non_null(sim);
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fe_sim_hpcc_write_fct(sim, f);
    fclose(f);
    /* "0b000201 0b000101 10000 100 2000000 2000000000 FCT standalone" */
    int lines = 0;
    for (char *p = buf; (p = strchr(p, '\n')); p++) lines++;
    assert_int_equal(lines, 3);
    unsigned sip, dip, sport, dport;
    unsigned long long size, start, fct, alone;
    assert_int_equal(sscanf(buf, "%8x %8x %u %u %llu %llu %llu %llu", &sip, &dip, &sport, &dport,
                            &size, &start, &fct, &alone),
                     8);
    assert_true(dip == 0x0b000101);
    assert_true(fct >= alone && alone > 0);
    free(buf);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

static void test_hpcc_errors(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    char err[400];
    static const struct bad topo[] = {
        {"3 1 2\n0\n0 1 100Gbps 0.001ms 0\n0 2 fast 0.001ms 0\n", "t.txt:4: 'fast' is not a rate"},
        {"3 1 3\n0\n0 1 100Gbps 0.001ms 0\n", "expected 3 links"},
        {"3 4 2\n", "switches among"},
        {"x\n", "t.txt:1: expected 'N_nodes"},
        {"3 1 1\n7\n", "switch id '7'"},
        {"3 1 1\n0\n0 9 10Gbps 1us 0\n", "node ids < 3"},
        {"3 1 1\n0\n0 1 10Gbps 1us 5\n", "error rate"},
    };
    for (size_t i = 0; i < sizeof(topo) / sizeof(topo[0]); i++) {
        fe_sim_scenario_init(&sc);
        err[0] = 0;
        int rc = fe_sim_hpcc_parse_topology(topo[i].text, strlen(topo[i].text), "t.txt", &sc, err,
                                            sizeof(err));
        if (!rc || !strstr(err, topo[i].needle))
            fprintf(stderr, "topo %zu: '%s' wanted '%s'\n", i, err, topo[i].needle);
        assert_true(rc < 0);
        assert_non_null(strstr(err, topo[i].needle));
        fe_sim_scenario_free(&sc);
    }
    static const struct bad flows[] = {
        {"2\n1 2 3 100 1000 0\n", "expected 2 flows"},
        {"1\n1 0 3 100 1000 0\n", "two different hosts"},
        {"1\n1 2 9 100 1000 0\n", "f.txt:2:"},
        {"1\n1 2 3 100 1000 soon\n", "f.txt:2:"},
    };
    for (size_t i = 0; i < sizeof(flows) / sizeof(flows[0]); i++) {
        fe_sim_scenario_init(&sc);
        static const char t[] = "3 1 2\n0\n0 1 10Gbps 1us 0\n0 2 10Gbps 1us 0\n";
        assert_int_equal(fe_sim_hpcc_parse_topology(t, strlen(t), "t", &sc, err, sizeof(err)), 0);
        err[0] = 0;
        int rc = fe_sim_hpcc_parse_flows(flows[i].text, strlen(flows[i].text), "f.txt", &sc, err,
                                         sizeof(err));
        if (!rc || !strstr(err, flows[i].needle))
            fprintf(stderr, "flows %zu: '%s' wanted '%s'\n", i, err, flows[i].needle);
        assert_true(rc < 0);
        assert_non_null(strstr(err, flows[i].needle));
        fe_sim_scenario_free(&sc);
    }
    static const struct bad cfg[] = {
        {"CC_MODE 8\n", "CC_MODE 8 is not available"},
        {"RATE_AI fast\n", "c.txt:1: RATE_AI"},
        {"LINK_DOWN 1000 0 1\n", "LINK_DOWN"},
        {"KMIN_MAP 1 100 5\nKMAX_MAP 1 200 5\nPMAX_MAP 1 100 0.1\nENABLE_QCN 1\n", "disagree"},
        {"ENABLE_QCN 1\n", "needs KMIN_MAP"},
        {"PACKET_PAYLOAD_SIZE 9000\n", "PACKET_PAYLOAD_SIZE"},
    };
    for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
        fe_sim_scenario_init(&sc);
        struct fe_sim_hpcc_files files;
        memset(&files, 0, sizeof(files));
        err[0] = 0;
        int rc = fe_sim_hpcc_parse_config(cfg[i].text, strlen(cfg[i].text), "c.txt", &sc, &files,
                                          err, sizeof(err));
        if (!rc || !strstr(err, cfg[i].needle))
            fprintf(stderr, "cfg %zu: '%s' wanted '%s'\n", i, err, cfg[i].needle);
        assert_true(rc < 0);
        assert_non_null(strstr(err, cfg[i].needle));
        fe_sim_scenario_free(&sc);
    }
}

/* L2_ACK_INTERVAL counts bytes in HPCC (an ACK when the expected sequence passes a multiple
 * of it): packets of PACKET_PAYLOAD_SIZE per ACK, at least one. */
static void test_hpcc_ack_interval(void **s)
{
    (void)s;
    static const struct {
        const char *text;
        unsigned every;
    } c[] = {
        {"PACKET_PAYLOAD_SIZE 1000\nL2_ACK_INTERVAL 1\n", 1},
        {"PACKET_PAYLOAD_SIZE 1000\nL2_ACK_INTERVAL 4000\n", 4},
        {"PACKET_PAYLOAD_SIZE 1000\nL2_ACK_INTERVAL 4001\n", 5},
        {"L2_ACK_INTERVAL 2000\n", 2}, /* HPCC's default payload, 1000 */
        {"PACKET_PAYLOAD_SIZE 4000\nL2_ACK_INTERVAL 1000000000\n", 65535},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct fe_sim_scenario sc;
        struct fe_sim_hpcc_files files;
        char err[400] = "";
        fe_sim_scenario_init(&sc);
        memset(&files, 0, sizeof(files));
        assert_int_equal(fe_sim_hpcc_parse_config(c[i].text, strlen(c[i].text), "c", &sc, &files,
                                                  err, sizeof(err)),
                         0);
        assert_int_equal(sc.host.ack_every, c[i].every);
        fe_sim_scenario_free(&sc);
    }
}

/* What HPCC's third.cc prints for these files ("maxRtt=... maxBdp=...") and derives from them. */
static void test_hpcc_apply(void **s)
{
    (void)s;
    static const struct {
        const char *config;
        uint64_t rtt_ns, bdp_bytes;
    } want[] = {
        {SIM_DATA "/../ns3/advcam-dcqcn/config.txt", 19200, 24000},
        {SIM_DATA "/../ns3/advcam-hpcc25/config.txt", 17280, 54000},
        {SIM_DATA "/../ns3/hpcc-sample/config.txt", 4160, 52000},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        struct fe_sim_scenario sc;
        struct fe_sim_hpcc_files files;
        char err[400] = "";
        int rc = fe_sim_hpcc_load(want[i].config, NULL, NULL, &sc, &files, err, sizeof(err));
        if (rc) fprintf(stderr, "%s\n", err);
        assert_int_equal(rc, 0);
        assert_int_equal(files.max_rtt_ns, want[i].rtt_ns);
        assert_int_equal(files.max_bdp_bytes, want[i].bdp_bytes);
        if (files.cc_mode == 3) {
            /* T = maxRtt; the window admits a packet while under maxBdp */
            int k = fe_cc_param_index(sc.cc[0].algo, "base_rtt");
            assert_true(sc.cc[0].params.v[k] == want[i].rtt_ns / 1e3);
            assert_int_equal(sc.host.replay_bytes, want[i].bdp_bytes + 999);
        } else {
            assert_int_equal(sc.host.replay_bytes, 0); /* HAS_WIN 0 */
        }
        fe_sim_scenario_free(&sc);
    }
}

/* A user's partition (--partition FILE): a line is read whole up to its comment; one longer
 * than the parser's line is refused, not cut ("sw <blanks>12" was read as part 1). */
static void test_partition_lines(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    char err[256] = "";
    assert_int_equal(fe_sim_builtin_load("incast3", &sc, err, sizeof(err)), 0);
    struct fe_sim *sim = fe_sim_create(&sc, NULL, err, sizeof(err));
    fe_sim_scenario_free(&sc);
    assert_non_null(sim);
    struct fe_sim_partition p;
    char text[600];
    snprintf(text, sizeof(text), "sw 0\nA 1 #%0300d\n", 0); /* a long comment: fine */
    assert_int_equal(fe_sim_partition_parse(sim, text, strlen(text), "p", &p, err, sizeof(err)), 0);
    assert_int_equal(p.k, 2);
    fe_sim_partition_free(&p);
    snprintf(text, sizeof(text), "sw%*s12\n", 252, "");
    assert_int_equal(fe_sim_partition_parse(sim, text, strlen(text), "p", &p, err, sizeof(err)),
                     FE_EINVAL);
    assert_string_equal(err, "p:1: longer than 255 characters before its comment");
    snprintf(text, sizeof(text), "sw%*s1 # part 1\n", 251, ""); /* 255 before the comment */
    assert_int_equal(fe_sim_partition_parse(sim, text, strlen(text), "p", &p, err, sizeof(err)), 0);
    assert_int_equal(p.k, 2);
    fe_sim_partition_free(&p);
    fe_sim_destroy(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_file),
        cmocka_unit_test(test_yaml_generators),
        cmocka_unit_test(test_yaml_errors),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_hpcc),
        cmocka_unit_test(test_hpcc_errors),
        cmocka_unit_test(test_hpcc_apply),
        cmocka_unit_test(test_hpcc_ack_interval),
        cmocka_unit_test(test_partition_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
