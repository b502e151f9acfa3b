/* Built-in reference scenarios: the LST AdvCam paper's experiments.
 * Every link is 10 Gb/s with 1 us of propagation, MTU 4096. */
#include <stdio.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"

#define G10 10000000000ull
#define MB  1000000ull

static const struct fe_sim_builtin builtins[] = {
    {"advcam-pfc", "AdvCam parking lot, PFC only: leaves 2 and 4 ~1.58 Gb/s, leaf 3 ~0.81 Gb/s"},
    {"advcam-dcqcn", "AdvCam, PFC + ECN + DCQCN (2015 paper defaults): eight fair shares"},
    {"incast3", "3 senders, 1 switch, DCQCN SURF profile (Table II): ~3.3, ~4.9, ~9.7 Gb/s"},
    {"incast3-nocc", "incast3 without congestion control (PFC only): on/off, unfair"},
    {"incast3-asym", "incast3 with flow A's increase timer at 200 ms, clamp off: saw-tooth"},
    {"switch-check", "SURF firmware cocotb test: one sender, a CNP when > 5 Gb/s over 32 us"},
    {"advcam-eb", "event building: 8 front-ends, 4 builders, DCQCN; builder b0 slows at 20 ms"},
};

const struct fe_sim_builtin *fe_sim_builtins(size_t *n)
{
    *n = sizeof(builtins) / sizeof(builtins[0]);
    return builtins;
}

static void red_dcqcn_paper(struct fe_sim_scenario *sc)
{
    /* DCQCN (SIGCOMM 2015): Kmin 5 KB, Kmax 200 KB, Pmax 1 % */
    sc->sw.ecn = true;
    sc->sw.n_red = 1;
    sc->sw.red[0] = (struct fe_sim_red){G10, 5000, 200000, 10000};
}

/* The 2015 paper's DCQCN as profile 0, with its RED: g = 1/256, alpha and rate timers 55 us,
 * F = 5, R_AI 40 Mb/s, CNPs at most every 50 us. Its 10 MB byte counter exceeds what the
 * ConnectX register holds (32767 x 64 B = 2 MiB); R_HAI is not given there: 200 Mb/s. */
static int dcqcn_paper(struct fe_sim_scenario *sc, char *err, size_t cap)
{
    red_dcqcn_paper(sc);
    int rc = fe_sim_scenario_set_cc(sc, 0, "dcqcn",
                                    "dce_tcp_g=1020,dce_tcp_rtt=55,rpg_time_reset=55,"
                                    "rpg_byte_reset=32767,rpg_threshold=5,rpg_ai_rate=40,"
                                    "rpg_hai_rate=200",
                                    err, cap);
    if (rc < 0) return rc;
    sc->host.cnp_interval_ns = 50000;
    return 0;
}

/* receiver 0 - root 1 - leaves 2, 3, 4; senders 5-6 on 2, 7-10 on 3, 11-12 on 4 */
static int advcam(struct fe_sim_scenario *sc, bool dcqcn, char *err, size_t cap)
{
    snprintf(sc->name, sizeof(sc->name), dcqcn ? "advcam-dcqcn" : "advcam-pfc");
    static const char *const names[] = {"rx", "root", "leaf2", "leaf3", "leaf4", "s5", "s6",
                                        "s7", "s8",   "s9",    "s10",   "s11",   "s12"};
    for (int i = 0; i < 13; i++) fe_sim_scenario_add_node(sc, names[i], i >= 1 && i <= 4);
    fe_sim_scenario_add_link(sc, 0, 1, G10, 1000, 0);
    for (uint32_t l = 2; l <= 4; l++) fe_sim_scenario_add_link(sc, 1, l, G10, 1000, 0);
    for (uint32_t s = 5; s <= 12; s++) {
        uint32_t leaf = s <= 6 ? 2 : s <= 10 ? 3 : 4;
        fe_sim_scenario_add_link(sc, s, leaf, G10, 1000, 0);
    }
    if (dcqcn) {
        int rc = dcqcn_paper(sc, err, cap);
        if (rc < 0) return rc;
    }
    /* Equal flows; with DCQCN the last sender has more, so that it is seen climbing to line rate
     * once the others are done. DCQCN's shares fluctuate by +-20 % over 10 ms windows with these
     * parameters and average out over about a second: the contention phase lasts ~1.3 s. */
    for (uint32_t s = 5; s <= 12; s++) {
        struct fe_sim_flow f = {.src = s, .dst = 0, .bytes = (dcqcn ? 200 : 25) * MB, .prio = 0xff};
        if (dcqcn && s == 12) f.bytes = 260 * MB;
        int rc = fe_sim_scenario_add_flow(sc, &f);
        if (rc < 0) return rc;
    }
    return 0;
}

/* receiver 0 - switch 1 - senders A (2), B (3), C (4); flows end one after another */
static int incast3(struct fe_sim_scenario *sc, const char *name, char *err, size_t cap)
{
    snprintf(sc->name, sizeof(sc->name), "%s", name);
    fe_sim_scenario_add_node(sc, "rx", false);
    fe_sim_scenario_add_node(sc, "sw", true);
    fe_sim_scenario_add_node(sc, "A", false);
    fe_sim_scenario_add_node(sc, "B", false);
    fe_sim_scenario_add_node(sc, "C", false);
    for (uint32_t i = 0; i < 5; i++)
        if (i != 1) fe_sim_scenario_add_link(sc, i, 1, G10, 1000, 0);
    bool cc = strcmp(name, "incast3-nocc") != 0;
    /* The paper's hardware test (Table II): g = 1/256, Rai 6 MB/s, Rhai 12 MB/s, rate decrease
     * interval 3 us, alpha interval 40 us, rate increase interval 2 ms, F = 5, clamp on. */
    static const char *const table2 = "dce_tcp_g=1020,rpg_ai_rate=6000000,rpg_hai_rate=12000000,"
                                      "rate_reduce_monitor_period=3,dce_tcp_rtt=40,"
                                      "rpg_time_reset=2000,rpg_threshold=5,clamp_tgt_rate=1";
    uint8_t cc_a = 0;
    if (cc) {
        /* The hardware test's switch marking is not given: the DCQCN paper's RED, as in advcam
         * (a linear 150 KB..1.5 MB ramp to 100 %, or a step at 20..100 KB, give the same
         * phases within a few per cent; the saw-tooth period of incast3-asym varies between
         * ~0.7 and ~1.7 s with the marking). */
        red_dcqcn_paper(sc);
        int rc = fe_sim_scenario_set_cc(sc, 0, "dcqcn-surf", table2, err, cap);
        if (rc < 0) return rc;
        if (!strcmp(name, "incast3-asym")) {
            char p[512];
            snprintf(p, sizeof(p), "%s,rpg_time_reset=200000,clamp_tgt_rate=0", table2);
            rc = fe_sim_scenario_set_cc(sc, -1, "dcqcn-surf", p, err, cap);
            if (rc < 0) return rc;
            cc_a = (uint8_t)rc;
        }
    }
    /* Phases of ~0.7, ~0.5 and ~0.25 s: long against DCQCN's climbs with a 2 ms increase timer
     * (+96 Mb/s per step). incast3-asym keeps all three busy for 6 s: flow A's timer fires only
     * after 200 ms without a CNP (each CNP restarts it), which its shrinking rate makes rare,
     * so the teeth come every ~1-1.7 s. */
    bool asym = !strcmp(name, "incast3-asym");
    static const uint64_t sizes[3] = {300 * MB, 600 * MB, 900 * MB};
    if (asym) sc->stop_ns = 6000000000ull;
    for (uint32_t i = 0; i < 3; i++) {
        struct fe_sim_flow f = {
            .src = 2 + i, .dst = 0, .bytes = asym ? 8000 * MB : sizes[i], .prio = 0xff};
        if (i == 0) f.cc = cc_a;
        int rc = fe_sim_scenario_add_flow(sc, &f);
        if (rc < 0) return rc;
    }
    return 0;
}

/* The firmware paper's emulated switch: one sender at 10 Gb/s, a monitor forging a CNP whenever
 * the flow exceeds 5 Gb/s over 32 us. The first CNP (alpha 1) halves Rc, later ones, with alpha
 * decayed, cut less; Rc climbs back in between. SURF profile with its reset values. */
static int switch_check(struct fe_sim_scenario *sc, char *err, size_t cap)
{
    snprintf(sc->name, sizeof(sc->name), "switch-check");
    fe_sim_scenario_add_node(sc, "rx", false);
    fe_sim_scenario_add_node(sc, "sw", true);
    fe_sim_scenario_add_node(sc, "fe", false);
    fe_sim_scenario_add_link(sc, 0, 1, G10, 1000, 0);
    fe_sim_scenario_add_link(sc, 2, 1, G10, 1000, 0);
    sc->sw.cnp_monitor_bps = 5000000000ull;
    sc->sw.cnp_monitor_window_ns = 32000;
    int rc = fe_sim_scenario_set_cc(sc, 0, "dcqcn-surf", NULL, err, cap);
    if (rc < 0) return rc;
    sc->stop_ns = 20000000;
    struct fe_sim_flow f = {.src = 2, .dst = 0, .bytes = 1000 * MB, .prio = 0xff};
    return fe_sim_scenario_add_flow(sc, &f) < 0 ? FE_EINVAL : 0;
}

/* Event building: front-ends fe0-fe3 on leaf1, fe4-fe7 on leaf2, builders b0-b3 on leaf3, the
 * leaves on one spine by 40 Gb/s uplinks; hosts at 10 Gb/s. 8 KiB fragments at 30 kHz are
 * 15.7 Gb/s in all, 3.9 Gb/s per builder against consumers of 8 Gb/s: room everywhere until
 * b0's consumer drops to 1 Gb/s at 20 ms, 1/8 of what round-robin keeps sending it. 6000
 * events (200 ms of triggers): a few seconds of wall time. */
static int advcam_eb(struct fe_sim_scenario *sc, char *err, size_t cap)
{
    snprintf(sc->name, sizeof(sc->name), "advcam-eb");
    char name[16];
    fe_sim_scenario_add_node(sc, "spine", true);
    for (int l = 1; l <= 3; l++) {
        snprintf(name, sizeof(name), "leaf%d", l);
        int leaf = fe_sim_scenario_add_node(sc, name, true);
        fe_sim_scenario_add_link(sc, 0, (uint32_t)leaf, 4 * G10, 1000, 0);
    }
    struct fe_sim_eb *e = &sc->eb;
    for (uint32_t i = 0; i < 8; i++) {
        snprintf(name, sizeof(name), "fe%u", i);
        int n = fe_sim_scenario_add_node(sc, name, false);
        fe_sim_scenario_add_link(sc, (uint32_t)n, i < 4 ? 1 : 2, G10, 1000, 0);
        e->frontends[e->n_frontends++] = (uint32_t)n;
    }
    for (uint32_t i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "b%u", i);
        int n = fe_sim_scenario_add_node(sc, name, false);
        fe_sim_scenario_add_link(sc, (uint32_t)n, 3, G10, 1000, 0);
        e->builders[e->n_builders++] = (uint32_t)n;
    }
    int rc = dcqcn_paper(sc, err, cap);
    if (rc < 0) return rc;
    e->rate_hz = 30000;
    e->events = 6000;
    e->frag_bytes = e->frag_max_bytes = 8192;
    e->slots = 16;
    e->consumer_bps = 8 * G10 / 10;
    e->slow_builder = 0;
    e->slow_at_ns = 20000000;
    e->slow_bps = G10 / 10;
    sc->stop_ns = 5000000000ull;
    return 0;
}

int fe_sim_builtin_load(const char *name, struct fe_sim_scenario *sc, char *err, size_t err_cap)
{
    fe_sim_scenario_init(sc);
    int rc;
    if (!strcmp(name, "advcam-pfc"))
        rc = advcam(sc, false, err, err_cap);
    else if (!strcmp(name, "advcam-dcqcn"))
        rc = advcam(sc, true, err, err_cap);
    else if (!strcmp(name, "incast3") || !strcmp(name, "incast3-nocc") ||
             !strcmp(name, "incast3-asym"))
        rc = incast3(sc, name, err, err_cap);
    else if (!strcmp(name, "switch-check"))
        rc = switch_check(sc, err, err_cap);
    else if (!strcmp(name, "advcam-eb"))
        rc = advcam_eb(sc, err, err_cap);
    else {
        sim_errf(err, err_cap, "unknown built-in scenario '%s'", name);
        rc = FE_ENOENT;
    }
    if (rc < 0) {
        if (err && !*err) sim_errf(err, err_cap, "%s: %s", name, fe_strerror(rc));
        fe_sim_scenario_free(sc);
        return rc;
    }
    return 0;
}
