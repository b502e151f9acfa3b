/* Event building in the simulator (docs/sim.md, "Event building"): with one slow builder,
 * round-robin piles events onto it while the availability policy keeps the latency bounded with
 * nothing incomplete; every triggered event ends in exactly one state (the ledger), also when a
 * builder leaves; the YAML keys and --set. */
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

#ifndef SIM_DATA
#define SIM_DATA "tests/sim/data"
#endif

/* advcam-eb with settings, run to its end */
static struct fe_sim *run_builtin(const char *const *sets, struct fe_sim_scenario *sc)
{
    char err[256] = "";
    assert_int_equal(fe_sim_builtin_load("advcam-eb", sc, err, sizeof(err)), 0);
    for (const char *const *s = sets; *s; s++) {
        int rc = fe_sim_scenario_set(sc, *s, err, sizeof(err));
        if (rc) fprintf(stderr, "%s: %s\n", *s, err);
        assert_int_equal(rc, 0);
    }
    int rc;
    struct fe_sim *sim = fe_sim_create(sc, &rc, err, sizeof(err));
    if (!sim) fprintf(stderr, "%s\n", err);
    assert_non_null(sim);
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    return sim;
}

/* Nothing missing, nothing twice, and the states add up to the triggers. */
static void ledger_holds(const struct fe_sim_eb_stats *st, uint64_t events)
{
    assert_true(st->ledger_ok);
    assert_int_equal(st->triggered, events);
    assert_int_equal(st->missing, 0);
    assert_int_equal(st->twice, 0);
    assert_int_equal(st->built + st->incomplete + st->lost + st->busy, events);
}

static void print(const char *what, const struct fe_sim_eb_stats *st)
{
    printf("  %-28s built %llu incomplete %llu lost %llu busy %llu  p50 %.3f ms p99 %.3f ms "
           "max %.3f ms\n",
           what, (unsigned long long)st->built, (unsigned long long)st->incomplete,
           (unsigned long long)st->lost, (unsigned long long)st->busy, st->latency_p50_ns / 1e6,
           st->latency_p99_ns / 1e6, st->latency_max_ns / 1e6);
}

/* advcam-eb: b0's consumer drops to 1 Gb/s at 20 ms. Round-robin keeps sending it a quarter of
 * the events, eight times what it drains: its ring fills, the front-ends hold its fragments until
 * it announces a released slot (the wire's rule, fe_eb_rr_may_write: no write reaches a full
 * ring, so no RNR NAK) and the latency grows with the run. The availability policy gives b0 only
 * what it frees. */
static void test_slow_builder_policies(void **s)
{
    (void)s;
    static const char *const rr[] = {"eb.policy=round-robin", NULL};
    static const char *const av[] = {"eb.policy=availability", NULL};
    struct fe_sim_scenario sc_rr, sc_av;
    struct fe_sim *sim_rr = run_builtin(rr, &sc_rr), *sim_av = run_builtin(av, &sc_av);
    struct fe_sim_eb_stats a, b;
    fe_sim_eb_stats(sim_rr, &a);
    fe_sim_eb_stats(sim_av, &b);
    print("round-robin, slow b0:", &a);
    print("availability, slow b0:", &b);
    ledger_holds(&a, sc_rr.eb.events);
    ledger_holds(&b, sc_av.eb.events);
    /* round-robin: events pile up at b0 (p99 over 50 ms, and growing with the run) */
    assert_true(a.latency_p99_ns > 50000000);
    assert_int_equal(a.rnr_naks, 0);
    /* availability: bounded, nothing incomplete or lost, at least 50 times better */
    assert_int_equal(b.incomplete, 0);
    assert_int_equal(b.lost, 0);
    assert_int_equal(b.built, sc_av.eb.events);
    assert_true(b.latency_p99_ns < 1000000);
    assert_true(a.latency_p99_ns > 50 * b.latency_p99_ns);
    /* and the slow builder got less than a third of a fast one's share */
    struct fe_sim_eb_builder_stats slow, fast;
    fe_sim_eb_builder_stats(sim_av, 0, &slow);
    fe_sim_eb_builder_stats(sim_av, 1, &fast);
    assert_true(slow.built * 3 < fast.built);
    fe_sim_destroy(sim_rr);
    fe_sim_destroy(sim_av);
    fe_sim_scenario_free(&sc_rr);
    fe_sim_scenario_free(&sc_av);
}

/* Round-robin with the latency growing: more events, a longer tail (it has no bound). */
static void test_round_robin_unbounded(void **s)
{
    (void)s;
    static const char *const short_run[] = {"eb.policy=round-robin", "eb.events=3000", NULL};
    static const char *const long_run[] = {"eb.policy=round-robin", "eb.events=6000", NULL};
    struct fe_sim_scenario sc1, sc2;
    struct fe_sim *s1 = run_builtin(short_run, &sc1), *s2 = run_builtin(long_run, &sc2);
    struct fe_sim_eb_stats a, b;
    fe_sim_eb_stats(s1, &a);
    fe_sim_eb_stats(s2, &b);
    print("round-robin, 3000 events:", &a);
    print("round-robin, 6000 events:", &b);
    ledger_holds(&a, 3000);
    ledger_holds(&b, 6000);
    assert_true(b.latency_max_ns > a.latency_max_ns * 3 / 2);
    fe_sim_destroy(s1);
    fe_sim_destroy(s2);
    fe_sim_scenario_free(&sc1);
    fe_sim_scenario_free(&sc2);
}

/* b1 leaves at 50 ms (no slow builder): its events in flight are lost, with both policies;
 * round-robin keeps sending it every fourth event (all lost), availability stops within its
 * credits and the manager's timeout. */
static void test_builder_leaves(void **s)
{
    (void)s;
    static const char *const rr[] = {"eb.policy=round-robin", "eb.slow_builder=none",
                                     "eb.leave_builder=1", "eb.leave_at=50ms", NULL};
    static const char *const av[] = {"eb.policy=availability", "eb.slow_builder=none",
                                     "eb.leave_builder=1", "eb.leave_at=50ms", NULL};
    struct fe_sim_scenario sc_rr, sc_av;
    struct fe_sim *sim_rr = run_builtin(rr, &sc_rr), *sim_av = run_builtin(av, &sc_av);
    struct fe_sim_eb_stats a, b;
    fe_sim_eb_stats(sim_rr, &a);
    fe_sim_eb_stats(sim_av, &b);
    print("round-robin, b1 leaves:", &a);
    print("availability, b1 leaves:", &b);
    ledger_holds(&a, sc_rr.eb.events);
    ledger_holds(&b, sc_av.eb.events);
    assert_true(a.lost > 1000);
    assert_true(b.lost > 0);
    /* at most S - reserve after its last announcement, plus what a builder timeout assigns */
    assert_true(b.lost <= sc_av.eb.slots + 64);
    assert_int_equal(b.incomplete, 0);
    struct fe_sim_eb_builder_stats left;
    fe_sim_eb_builder_stats(sim_av, 1, &left);
    assert_true(left.left);
    assert_int_equal(left.lost, b.lost);
    fe_sim_destroy(sim_rr);
    fe_sim_destroy(sim_av);
    fe_sim_scenario_free(&sc_rr);
    fe_sim_scenario_free(&sc_av);
}

/* The token limit (2 front-ends at a time per builder): availability still builds every event;
 * round-robin's events at the slow builder now arrive spread out and go incomplete. */
static void test_tokens(void **s)
{
    (void)s;
    static const char *const rr[] = {"eb.policy=round-robin", "eb.tokens=2", NULL};
    static const char *const av[] = {"eb.policy=availability", "eb.tokens=2", NULL};
    struct fe_sim_scenario sc_rr, sc_av;
    struct fe_sim *sim_rr = run_builtin(rr, &sc_rr), *sim_av = run_builtin(av, &sc_av);
    struct fe_sim_eb_stats a, b;
    fe_sim_eb_stats(sim_rr, &a);
    fe_sim_eb_stats(sim_av, &b);
    print("round-robin, 2 tokens:", &a);
    print("availability, 2 tokens:", &b);
    ledger_holds(&a, sc_rr.eb.events);
    ledger_holds(&b, sc_av.eb.events);
    assert_int_equal(b.built, sc_av.eb.events);
    assert_true(b.latency_p99_ns < 1000000);
    struct fe_sim_eb_builder_stats slow, fast;
    fe_sim_eb_builder_stats(sim_rr, 0, &slow);
    fe_sim_eb_builder_stats(sim_rr, 1, &fast);
    assert_true(slow.incomplete > 100);
    assert_int_equal(fast.incomplete, 0);
    assert_int_equal(a.incomplete, slow.incomplete);
    fe_sim_destroy(sim_rr);
    fe_sim_destroy(sim_av);
    fe_sim_scenario_free(&sc_rr);
    fe_sim_scenario_free(&sc_av);
}

/* The YAML file: Poisson triggers, uniform sizes, availability, a slow builder. */
static void test_yaml_scenario(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    char err[256] = "";
    int rc = fe_sim_scenario_load_yaml(SIM_DATA "/eb.yaml", &sc, err, sizeof(err));
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(sc.eb.n_frontends, 4);
    assert_int_equal(sc.eb.n_builders, 2);
    assert_int_equal(sc.eb.policy, FE_SIM_EB_AVAILABILITY);
    assert_int_equal(sc.eb.trigger, FE_SIM_EB_POISSON);
    assert_int_equal(sc.eb.dist, FE_SIM_EB_UNIFORM);
    assert_int_equal(sc.eb.frag_min_bytes, 1024);
    assert_int_equal(sc.eb.slow_builder, 1);
    assert_int_equal(sc.eb.slow_bps, 500000000);
    assert_int_equal(sc.eb.leave_builder, FE_SIM_EB_NONE);
    assert_int_equal(sc.eb.cc, 1); /* the profile named pairs */
    struct fe_sim *sim = fe_sim_create(&sc, &rc, err, sizeof(err));
    assert_non_null(sim);
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    struct fe_sim_eb_stats st;
    fe_sim_eb_stats(sim, &st);
    print("eb.yaml:", &st);
    ledger_holds(&st, 400);
    assert_int_equal(st.built, 400);
    /* the JSON object */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    struct fe_sim_report_opts o = {.json = true};
    fe_sim_report(f, sim, &o);
    fclose(f);
    static const char *const keys[] = {"\"event_building\"",
                                       "\"triggered\": 400",
                                       "\"built\": 400",
                                       "\"incomplete\": 0",
                                       "\"lost\": 0",
                                       "\"latency_ns\": {\"p50\"",
                                       "\"p99\"",
                                       "\"max\"",
                                       "\"builders\": [",
                                       "\"gbps\""};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strstr(buf, keys[i])) fail_msg("no %s in the JSON", keys[i]);
    free(buf);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
}

/* Fixed, exponential and normal sizes, periodic and Poisson triggers: every event built. */
static void test_distributions(void **s)
{
    (void)s;
    static const char *const dists[] = {"fixed", "exponential", "normal", "uniform"};
    for (int d = 0; d < 4; d++) {
        char dist[64];
        snprintf(dist, sizeof(dist), "eb.frag_dist=%s", dists[d]);
        const char *sets[] = {"eb.events=500",
                              "eb.slow_builder=none",
                              "eb.frag_max_bytes=16KiB",
                              "eb.frag_min_bytes=2KiB",
                              dist,
                              d & 1 ? "eb.trigger=poisson" : "seed=1",
                              d & 2 ? "eb.policy=availability" : "seed=2",
                              NULL};
        struct fe_sim_scenario sc;
        struct fe_sim *sim = run_builtin(sets, &sc);
        struct fe_sim_eb_stats st;
        fe_sim_eb_stats(sim, &st);
        ledger_holds(&st, 500);
        assert_int_equal(st.built, 500);
        fe_sim_destroy(sim);
        fe_sim_scenario_free(&sc);
    }
}

/* --set refuses what it cannot read; create refuses an inconsistent configuration. */
static void test_settings_refused(void **s)
{
    (void)s;
    struct fe_sim_scenario sc;
    char err[256] = "";
    assert_int_equal(fe_sim_builtin_load("advcam-eb", &sc, err, sizeof(err)), 0);
    static const char *const bad[] = {"eb.policy=fastest",
                                      "eb.trigger=sometimes",
                                      "eb.frag_dist=zipf",
                                      "eb.slots=1",
                                      "eb.frontends=nosuch",
                                      "eb.slow_builder=x",
                                      "eb.frontends=spine",
                                      "eb.nokey=1",
                                      "eb.cc=nosuch",
                                      "eb.cc=1",
                                      "eb.cc="};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (!fe_sim_scenario_set(&sc, bad[i], err, sizeof(err))) fail_msg("%s accepted", bad[i]);
    assert_non_null(strstr(err, "no congestion-control profile named ''"));
    /* eb.cc names a profile as flows' cc: do; profile 0 also answers to "default" */
    assert_int_equal(fe_sim_scenario_set_cc(&sc, -1, "dcqcn", "", err, sizeof(err)), 1);
    snprintf(sc.cc[1].label, sizeof(sc.cc[1].label), "pairs");
    assert_int_equal(fe_sim_scenario_set(&sc, "eb.cc=pairs", err, sizeof(err)), 0);
    assert_int_equal(sc.eb.cc, 1);
    assert_int_equal(fe_sim_scenario_set(&sc, "eb.cc=default", err, sizeof(err)), 0);
    assert_int_equal(sc.eb.cc, 0);
    assert_int_equal(fe_sim_scenario_set(&sc, "eb.frontends=fe0,fe1", err, sizeof(err)), 0);
    assert_int_equal(sc.eb.n_frontends, 2);
    assert_int_equal(fe_sim_scenario_set(&sc, "eb.frag_bytes=64KiB", err, sizeof(err)), 0);
    int rc;
    err[0] = 0;
    assert_null(fe_sim_create(&sc, &rc, err, sizeof(err)));
    assert_int_equal(rc, FE_EINVAL);
    assert_non_null(strstr(err, "frag_max_bytes"));
    assert_int_equal(fe_sim_scenario_set(&sc, "eb.frag_bytes=8KiB", err, sizeof(err)), 0);
    assert_int_equal(fe_sim_scenario_set(&sc, "eb.builders=b0,fe0", err, sizeof(err)), 0);
    assert_null(fe_sim_create(&sc, &rc, err, sizeof(err)));
    fe_sim_scenario_free(&sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_builder_policies), cmocka_unit_test(test_round_robin_unbounded),
        cmocka_unit_test(test_builder_leaves),        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_yaml_scenario),         cmocka_unit_test(test_distributions),
        cmocka_unit_test(test_settings_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
