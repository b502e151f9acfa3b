/* DCQCN reaction point: hand-derived traces for each profile (ConnectX, SURF firmware, HPCC
 * ns-3). Every expected number below is worked out in the comment next to it from the published
 * DCQCN rules (the 2015 paper, ConnectX documentation, SURF) and the reference implementations,
 * not taken from a run of this code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/cc.h"
#include "feroce/err.h"

#define LINE_10G 10000000000ull

static _Alignas(16) unsigned char mem_a[1024], mem_b[1024];

static struct fe_cc *mk(unsigned char *mem, const char *algo, const char *params)
{
    const struct fe_cc_algo *a = fe_cc_find(algo);
    assert_non_null(a);
    assert_true(fe_cc_instance_size(a) <= sizeof mem_a);
    struct fe_cc_params p;
    char err[200];
    fe_cc_params_default(&p, a);
    if (fe_cc_params_parse(&p, params, err, sizeof err)) fail_msg("%s", err);
    struct fe_cc *cc = (struct fe_cc *)mem;
    struct fe_cc_env env = {.line_rate_bps = LINE_10G, .mtu_bytes = 4096, .now_ns = 0};
    fe_cc_init(cc, &p, &env);
    return cc;
}

static double tv(const struct fe_cc *cc, const char *name)
{
    struct fe_cc_trace v[FE_CC_MAX_TRACE];
    int n = fe_cc_trace(cc, v, FE_CC_MAX_TRACE);
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].name, name)) return v[i].value;
    fail_msg("no trace variable %s", name);
    return -1;
}

#define RC(cc)    ((uint64_t)tv(cc, "Rc"))
#define RT(cc)    ((uint64_t)tv(cc, "Rt"))
#define ALPHA(cc) tv(cc, "alpha")

/* SURF firmware, 10 Gb/s = 1 250 000 000 B/s, one CNP at t = 1000 ns:
 * alpha is forced to 1023 and the decrease process (period 4 us) starts, so the cut comes at
 * 5000 ns: Rc -= Rc x 1023 >> 11 = 1 278 750 000 000 / 2048 = 624 389 648 (floor), leaving
 * Rc = 625 610 352 = 0.5004882816 x line. No timer increase happened, so Rt stays at line.
 * The alpha process (55 us) at 56 000 ns, no CNP since: (1023 x 1020 + 512) >> 10 =
 * 1 043 972 >> 10 = 1019. The increase timer (1.5 ms) from the CNP: 1 501 000, 3 001 000, ...
 * F = 5: four fast-recovery steps Rc = Rc/2 + Rt/2 (each halved with truncation):
 *   312 805 176 + 625 000 000 = 937 805 176;  468 902 588 + 625 000 000 = 1 093 902 588;
 *   546 951 294 + 625 000 000 = 1 171 951 294;  585 975 647 + 625 000 000 = 1 210 975 647;
 * then one additive step (Rt + 6 MB/s capped at line: 1.25e9): 605 487 823 + 625 000 000 =
 * 1 230 487 823; then hyper steps: 615 243 911 + 625 000 000 = 1 240 243 911. */
static void surf_one_cnp(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(mem_a, "dcqcn-surf", "");
    assert_int_equal(cc->out.rate_Bps, 1250000000u);
    assert_true(cc->out.timer_ns == FE_CC_NO_TIMER);
    fe_cc_on_cnp(cc, 1000);
    assert_int_equal(ALPHA(cc), 1023);
    assert_int_equal(cc->out.timer_ns, 5000);
    fe_cc_on_timer(cc, 4999);
    assert_int_equal(RC(cc), 1250000000u);
    fe_cc_on_timer(cc, 5000);
    assert_int_equal(RC(cc), 625610352u);
    assert_int_equal(cc->out.rate_Bps, 625610352u);
    assert_int_equal(RT(cc), 1250000000u);
    double ratio = 625610352.0 / 1250000000.0;
    assert_true(ratio > 0.500485 && ratio < 0.500495);
    fe_cc_on_timer(cc, 56000);
    assert_int_equal(ALPHA(cc), 1019);

    static const uint64_t rc[] = {937805176,  1093902588, 1171951294,
                                  1210975647, 1230487823, 1240243911};
    static const double stage_after[] = {0, 0, 0, 1, 2, 2};
    for (int k = 0; k < 6; k++) {
        uint64_t t = 1000 + 1500000ull * (uint64_t)(k + 1);
        fe_cc_on_timer(cc, t - 1);
        assert_int_equal(RC(cc), k ? rc[k - 1] : 625610352u);
        fe_cc_on_timer(cc, t);
        assert_int_equal(RC(cc), rc[k]);
        assert_int_equal(RT(cc), 1250000000u);
        assert_true(tv(cc, "stage") == stage_after[k]);
    }
    assert_true(tv(cc, "T") == 5); /* the stage stops at F */
}

/* SURF alpha rounds: (alpha x 1020 + 512) >> 10 = alpha - alpha/256 rounded to nearest. While
 * alpha > 896, alpha/256 is in (3.5, 4], so each tick takes 4: after 32 ticks 1023 - 128 = 895.
 * The 33rd: 895 x 1020 / 1024 = 891.504 -> 892 (truncation would give 891). */
static void surf_alpha_rounding(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(mem_a, "dcqcn-surf", "");
    fe_cc_on_cnp(cc, 1000);
    fe_cc_on_timer(cc, 1000 + 32 * 55000);
    assert_int_equal(ALPHA(cc), 895);
    fe_cc_on_timer(cc, 1000 + 33 * 55000);
    assert_int_equal(ALPHA(cc), 892);
}

/* SURF with clampTgtRate = 1 and F = 2 (one fast recovery, one additive step, then hyper).
 * CNP at 0: cut at 4000 (clamp: Rt = Rc = 1.25e9), Rc = 625 610 352.
 * CNP at 10 000: every CNP restarts the increase timer (now 1 510 000) and stage; the alpha
 * tick at 55 000 sees it: 1019 + (1024 - 1020) = 1023. The cut waits for the decrease grid
 * (0, 4000, 8000, 12 000): at 12 000, alpha still 1023, clamp Rt = 625 610 352,
 * Rc -= 625 610 352 x 1023 >> 11 = 639 999 390 096 / 2048 = 312 499 702 -> 313 110 650.
 * 1 510 000, fast recovery: 156 555 325 + 312 805 176 = 469 360 501.
 * 3 010 000, additive: Rt = 631 610 352, Rc = 234 680 250 + 315 805 176 = 550 485 426.
 * 4 510 000, hyper: Rt = 643 610 352, Rc = 275 242 713 + 321 805 176 = 597 047 889. */
static void surf_clamp_ai_hai(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(mem_a, "dcqcn-surf", "clamp_tgt_rate=1,rpg_threshold=2");
    fe_cc_on_cnp(cc, 0);
    fe_cc_on_timer(cc, 4000);
    assert_int_equal(RC(cc), 625610352u);
    fe_cc_on_cnp(cc, 10000);
    assert_int_equal(cc->out.timer_ns, 12000);
    fe_cc_on_timer(cc, 12000);
    assert_int_equal(RT(cc), 625610352u);
    assert_int_equal(RC(cc), 313110650u);
    fe_cc_on_timer(cc, 55000);
    assert_int_equal(ALPHA(cc), 1023); /* (1023 x 1020 + 512) >> 10 = 1019, + 4 for the CNP */
    fe_cc_on_timer(cc, 110000);
    assert_int_equal(ALPHA(cc), 1019);
    fe_cc_on_timer(cc, 1509999);
    assert_int_equal(RC(cc), 313110650u); /* the increase timer restarted at 10 000 */
    fe_cc_on_timer(cc, 1510000);
    assert_int_equal(RC(cc), 469360501u);
    assert_int_equal(RT(cc), 625610352u);
    fe_cc_on_timer(cc, 3010000);
    assert_int_equal(RT(cc), 631610352u);
    assert_int_equal(RC(cc), 550485426u);
    fe_cc_on_timer(cc, 4510000);
    assert_int_equal(RT(cc), 643610352u);
    assert_int_equal(RC(cc), 597047889u);
}

/* SURF without clampTgtRate: a CNP resets the stage, so the cut that follows finds no timer
 * increase and leaves Rt at line (the saw-tooth of the incast3-asym scenario). Rmin floors. */
static void surf_no_clamp_and_floor(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(mem_a, "dcqcn-surf", "");
    fe_cc_on_cnp(cc, 0);
    fe_cc_on_timer(cc, 1500000); /* cut at 4000, one fast recovery at 1.5 ms */
    assert_int_equal(RC(cc), 937805176u);
    fe_cc_on_cnp(cc, 1600000);
    fe_cc_on_timer(cc, 1604000);
    assert_int_equal(RT(cc), 1250000000u);
    assert_true(RC(cc) < 937805176u);

    /* Rmin 700 MB/s: the first cut (to 625 610 352) stops at 700 000 000. */
    cc = mk(mem_b, "dcqcn-surf", "rpg_min_rate=700000000");
    fe_cc_on_cnp(cc, 0);
    fe_cc_on_timer(cc, 4000);
    assert_int_equal(RC(cc), 700000000u);
}

/* ConnectX, 10 Gb/s = 10 000 Mb/s. The first CNP sets alpha = initial_alpha_value and does not
 * cut. Alpha then decays every 1 us: floor(1019 x 800 / 1024) = floor(796.09) = 796. */
static void connectx_first_cnp(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(mem_a, "dcqcn", "initial_alpha_value=800");
    assert_int_equal(cc->out.rate_Bps, 1250000000u);
    fe_cc_on_cnp(cc, 0);
    assert_int_equal(ALPHA(cc), 800);
    assert_int_equal(cc->out.timer_ns, 1000);
    fe_cc_on_timer(cc, 1000);
    assert_int_equal(ALPHA(cc), 796);
    fe_cc_on_timer(cc, 100000);
    assert_int_equal(RC(cc), 10000);
    assert_int_equal(tv(cc, "cuts"), 0);
    assert_int_equal(cc->out.rate_Bps, 1250000000u);

    /* rate_to_set_on_first_cnp: Rc = Rt = 3000 Mb/s at once */
    cc = mk(mem_b, "dcqcn", "rate_to_set_on_first_cnp=3000");
    fe_cc_on_cnp(cc, 0);
    assert_int_equal(RC(cc), 3000);
    assert_int_equal(RT(cc), 3000);
    assert_int_equal(cc->out.rate_Bps, 375000000u);
}

/* ConnectX cut: CNP at 0 (alpha 1023), CNP at 500 (pending). Alpha ticks every 1 us:
 * at 1000 (CNP seen): floor(1019 x 1023 / 1024) + 5 = 1018 + 5 = 1023; at 2000: 1018; at 3000:
 * floor(1 037 342 / 1024) = 1013. The cut is on the 4 us grid at 4000; the decrease check there
 * was scheduled (at 0) before the alpha tick at 4000 (scheduled at 3000), so it runs first and
 * sees alpha 1013: by alpha 10 000 x 1013 >> 11 = floor(4946.29) = 4946; by min_dec_fac 50:
 * 5000; the smaller wins: Rc = 5054. No increase happened, so Rt stays 10 000.
 * With rpg_min_dec_fac = 60 the bound is 10 000 x 40 / 100 = 4000: Rc = 6000.
 * With rpg_min_rate = 7000: Rc = 7000. */
static void connectx_cut(void **state)
{
    (void)state;
    const char *cfg[] = {"", "rpg_min_dec_fac=60", "rpg_min_rate=7000"};
    const uint64_t want[] = {5054, 6000, 7000};
    for (int i = 0; i < 3; i++) {
        struct fe_cc *cc = mk(mem_a, "dcqcn", cfg[i]);
        fe_cc_on_cnp(cc, 0);
        fe_cc_on_cnp(cc, 500);
        fe_cc_on_timer(cc, 3000);
        assert_int_equal(ALPHA(cc), 1013);
        assert_int_equal(RC(cc), 10000);
        fe_cc_on_timer(cc, 4000);
        assert_int_equal(RC(cc), want[i]);
        assert_int_equal(RT(cc), 10000);
        assert_int_equal(cc->out.rate_Bps, want[i] * 125000u);
        /* the alpha tick at 4000 ran after the cut: floor(1019 x 1013 / 1024) = 1008 */
        assert_int_equal(ALPHA(cc), 1008);
    }
}

/* A live parameter change (the dashboard's --web-write, a firmware register write): after the
 * cut of connectx_cut (Rc 5054, alpha 1008), a new R_AI keeps the state; a new minimum rate
 * above Rc lifts Rc to it; alpha is not reset to its initial value. An algorithm without
 * set_params restarts. */
static void connectx_live_params(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(mem_a, "dcqcn", "");
    fe_cc_on_cnp(cc, 0);
    fe_cc_on_cnp(cc, 500);
    fe_cc_on_timer(cc, 3000);
    fe_cc_on_timer(cc, 4000);
    assert_int_equal(RC(cc), 5054);
    assert_int_equal(ALPHA(cc), 1008);
    struct fe_cc_params p;
    char err[200];
    struct fe_cc_env env = {.line_rate_bps = LINE_10G, .mtu_bytes = 4096, .now_ns = 4000};
    fe_cc_params_default(&p, cc->algo);
    assert_int_equal(fe_cc_params_parse(&p, "rpg_ai_rate=10", err, sizeof err), 0);
    assert_true(fe_cc_set_params(cc, &p, &env));
    assert_int_equal(RC(cc), 5054);
    assert_int_equal(RT(cc), 10000);
    assert_int_equal(ALPHA(cc), 1008);
    assert_int_equal(cc->out.rate_Bps, 5054u * 125000u);
    assert_int_equal(fe_cc_params_parse(&p, "rpg_min_rate=7000", err, sizeof err), 0);
    assert_true(fe_cc_set_params(cc, &p, &env));
    assert_int_equal(RC(cc), 7000);
    assert_int_equal(ALPHA(cc), 1008);
    assert_int_equal(cc->out.rate_Bps, 7000u * 125000u);

    struct fe_cc *t = mk(mem_b, "timely", "");
    fe_cc_params_default(&p, t->algo);
    assert_false(fe_cc_set_params(t, &p, &env));
}

/* ConnectX clamp flags. rpg_gd = 1 makes every cut exactly the min_dec_fac bound (Rc/2), since
 * Rc x alpha >> 1 >= Rc for any alpha >= 2; increase timer 10 us.
 * CNPs at 0 and 500: cut at 4000: Rc = 5000; no increase yet, so no clamp: Rt = 10 000.
 * 14 000 (timer, T = 0, BC = 0 < F = 1): fast recovery Rc = (5000 + 10 000) / 2 = 7500, T = 1.
 * CNP at 15 000, cut at 16 000: T = 1 -> with clamp_tgt_rate_after_time_inc (default) Rt = 7500,
 * without it Rt stays 10 000; Rc = 3750 either way.
 * CNP at 17 000, cut at 20 000: T = BC = 0 -> only clamp_tgt_rate clamps: Rt = 3750, Rc = 1875. */
static void connectx_clamp_flags(void **state)
{
    (void)state;
    const char *cfg[] = {"rpg_gd=1,rpg_time_reset=10",
                         "rpg_gd=1,rpg_time_reset=10,clamp_tgt_rate_after_time_inc=0",
                         "rpg_gd=1,rpg_time_reset=10,clamp_tgt_rate=1"};
    const uint64_t rt_16000[] = {7500, 10000, 7500};
    const uint64_t rt_20000[] = {7500, 10000, 3750};
    for (int i = 0; i < 3; i++) {
        struct fe_cc *cc = mk(mem_a, "dcqcn", cfg[i]);
        fe_cc_on_cnp(cc, 0);
        fe_cc_on_cnp(cc, 500);
        fe_cc_on_timer(cc, 4000);
        assert_int_equal(RC(cc), 5000);
        assert_int_equal(RT(cc), 10000);
        fe_cc_on_timer(cc, 14000);
        assert_int_equal(RC(cc), 7500);
        assert_int_equal(tv(cc, "T"), 1);
        fe_cc_on_cnp(cc, 15000);
        fe_cc_on_timer(cc, 16000);
        assert_int_equal(RC(cc), 3750);
        assert_int_equal(RT(cc), rt_16000[i]);
        assert_int_equal(tv(cc, "T"), 0);
        fe_cc_on_cnp(cc, 17000);
        fe_cc_on_timer(cc, 20000);
        assert_int_equal(RC(cc), 1875);
        assert_int_equal(RT(cc), rt_20000[i]);
    }
}

/* ConnectX increases from both counters, F = 1: hyper when min(T, BC) > 1, additive when
 * max(T, BC) >= 1, else fast recovery; the stage counter is bumped after the step.
 * rate_to_set_on_first_cnp = 8000, rpg_gd = 1, clamp_tgt_rate = 1, timer 10 us, byte counter
 * 16 x 64 = 1024 bytes. CNPs at 0, 500; cut at 4000: Rt = 8000, Rc = 4000; T = BC = 0.
 *  5000 send 1024: T0 BC0 fast recovery   Rc = (4000 + 8000) / 2 = 6000            BC = 1
 *  6000 send 1024: T0 BC1 additive        Rt = 8005, Rc = 14 005 / 2 = 7002        BC = 2
 * 14000 timer:     T0 BC2 additive        Rt = 8010, Rc = 15 012 / 2 = 7506        T = 1
 * 15000 send 1024: T1 BC2 additive        Rt = 8015, Rc = 15 521 / 2 = 7760        BC = 3
 * 24000 timer:     T1 BC3 additive        Rt = 8020, Rc = 15 780 / 2 = 7890        T = 2
 * 25000 send 1024: T2 BC3 hyper           Rt = 8070, Rc = 15 960 / 2 = 7980        BC = 4
 * 26000 send 3000: two events, 952 bytes left over:
 *                  T2 BC4 hyper           Rt = 8120, Rc = 16 100 / 2 = 8050        BC = 5
 *                  T2 BC5 hyper           Rt = 8170, Rc = 16 220 / 2 = 8110        BC = 6 */
static void connectx_ai_hai_byte_counter(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(mem_a, "dcqcn",
                          "rate_to_set_on_first_cnp=8000,rpg_gd=1,clamp_tgt_rate=1,"
                          "rpg_time_reset=10,rpg_byte_reset=16");
    fe_cc_on_cnp(cc, 0);
    fe_cc_on_cnp(cc, 500);
    fe_cc_on_timer(cc, 4000);
    assert_int_equal(RC(cc), 4000);
    assert_int_equal(RT(cc), 8000);
    struct step {
        uint64_t t;
        uint32_t send; /* 0 = timer */
        uint64_t rt, rc, T, BC;
    } steps[] = {
        {5000, 1024, 8000, 6000, 0, 1},  {6000, 1024, 8005, 7002, 0, 2},
        {14000, 0, 8010, 7506, 1, 2},    {15000, 1024, 8015, 7760, 1, 3},
        {24000, 0, 8020, 7890, 2, 3},    {25000, 1024, 8070, 7980, 2, 4},
        {26000, 3000, 8170, 8110, 2, 6},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        fe_cc_on_timer(cc, steps[i].t);
        if (steps[i].send) fe_cc_on_send(cc, steps[i].t, steps[i].send);
        assert_int_equal(RT(cc), steps[i].rt);
        assert_int_equal(RC(cc), steps[i].rc);
        assert_int_equal(tv(cc, "T"), steps[i].T);
        assert_int_equal(tv(cc, "BC"), steps[i].BC);
    }
    assert_int_equal(tv(cc, "bytes"), 952);
    assert_int_equal(tv(cc, "stage"), 2);
    assert_int_equal(cc->out.rate_Bps, 8110u * 125000u);
}

/* ConnectX alpha decay without CNPs: 1023 -> 1018 -> 1013 -> floor(1 032 247 / 1024) = 1008;
 * it reaches 0 and stays there; the alpha process then stops asking for timers (only the
 * 300 us increase timer remains), and a later CNP re-arms it on its original 1 us grid:
 * CNP at 10 000 500 -> tick at 10 001 000: 0 + (1024 - 1019) = 5. */
static void connectx_alpha_decay(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(mem_a, "dcqcn", "");
    fe_cc_on_cnp(cc, 0);
    fe_cc_on_timer(cc, 1000);
    assert_int_equal(ALPHA(cc), 1018);
    fe_cc_on_timer(cc, 2000);
    assert_int_equal(ALPHA(cc), 1013);
    fe_cc_on_timer(cc, 3000);
    assert_int_equal(ALPHA(cc), 1008);
    fe_cc_on_timer(cc, 10000000);
    assert_int_equal(ALPHA(cc), 0);
    assert_int_equal(cc->out.timer_ns, 10200000); /* next multiple of 300 us */
    fe_cc_on_cnp(cc, 10000500);
    assert_int_equal(cc->out.timer_ns, 10001000);
    fe_cc_on_timer(cc, 10001000);
    assert_int_equal(ALPHA(cc), 5);
}

/* HPCC ns-3, 10 Gb/s = 1e10 b/s. CNP at 0: alpha = 1, a cut is pending, the alpha process runs
 * every 1 us and the decrease check at 4 us + 1 ns. Alpha at 4001 after four ticks without CNP:
 * (255/256)^4 = 0.98446631...; Rc = floor(1e10 x (1 - alpha / 2)) = floor(5 077 668 427.26) =
 * 5 077 668 427; no timer increase: Rt stays 1e10. The increase timer starts at the cut:
 * 304 001 fast recovery (T = 0 < F = 1): 2 538 834 213 + 5 000 000 000 = 7 538 834 213;
 * 604 001 additive (T = F): Rt = min(1e10 + 5e6, 1e10), Rc = 3 769 417 106 + 5e9 = 8 769 417 106.
 * An ACK with the ECN echo flag counts as a CNP (ns-3 sets the CNP flag on ACKs). */
static void ns3_first_cnp_cuts(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(mem_a, "dcqcn-hpcc-ns3", "");
    assert_int_equal(cc->out.rate_Bps, 1250000000u);
    fe_cc_on_cnp(cc, 0);
    fe_cc_on_timer(cc, 4000);
    assert_int_equal(RC(cc), 10000000000ull);
    fe_cc_on_timer(cc, 4001);
    assert_int_equal(RC(cc), 5077668427ull);
    assert_int_equal(RT(cc), 10000000000ull);
    assert_int_equal(cc->out.rate_Bps, 5077668427ull / 8);
    fe_cc_on_timer(cc, 304000);
    assert_int_equal(RC(cc), 5077668427ull);
    fe_cc_on_timer(cc, 304001);
    assert_int_equal(RC(cc), 7538834213ull);
    fe_cc_on_timer(cc, 604001);
    assert_int_equal(RC(cc), 8769417106ull);
    assert_int_equal(RT(cc), 10000000000ull);

    struct fe_cc *cc2 = mk(mem_b, "dcqcn-hpcc-ns3", "");
    struct fe_cc_ack ack = {.ecn_echo = true};
    fe_cc_on_ack(cc2, 0, &ack);
    fe_cc_on_timer(cc2, 4001);
    assert_int_equal(RC(cc2), 5077668427ull);
}

/* The result must not depend on how often the driver calls on_timer: one instance is woken at
 * every deadline, the other only when something happens (the catch-up runs the same events in
 * the same order). A pseudo-random CNP and send schedule, every profile. */
static void timer_calls_do_not_matter(void **state)
{
    (void)state;
    const char *algos[] = {"dcqcn", "dcqcn-surf", "dcqcn-hpcc-ns3"};
    for (int a = 0; a < 3; a++) {
        struct fe_cc *x = mk(mem_a, algos[a], "");
        struct fe_cc *y = mk(mem_b, algos[a], "");
        uint64_t seed = 12345 + (uint64_t)a, t = 0;
        for (int i = 0; i < 3000; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            t += (seed >> 33) % 20000;
            while (x->out.timer_ns <= t) fe_cc_on_timer(x, x->out.timer_ns);
            if ((seed >> 20) % 3 == 0) {
                fe_cc_on_cnp(x, t);
                fe_cc_on_cnp(y, t);
            } else {
                fe_cc_on_send(x, t, 4096);
                fe_cc_on_send(y, t, 4096);
            }
        }
        fe_cc_on_timer(x, t + 10000000);
        fe_cc_on_timer(y, t + 10000000);
        struct fe_cc_trace vx[FE_CC_MAX_TRACE], vy[FE_CC_MAX_TRACE];
        int n = fe_cc_trace(x, vx, FE_CC_MAX_TRACE);
        assert_int_equal(n, fe_cc_trace(y, vy, FE_CC_MAX_TRACE));
        for (int i = 0; i < n; i++) assert_true(vx[i].value == vy[i].value);
        assert_true(tv(x, "cuts") > 10);
        assert_int_equal(x->out.rate_Bps, y->out.rate_Bps);
    }
}

/* Errors users see when a value does not fit the profile. */
static void param_errors(void **state)
{
    (void)state;
    struct fe_cc_params p;
    char err[300];
    fe_cc_params_default(&p, fe_cc_find("dcqcn"));
    assert_int_equal(fe_cc_params_parse(&p, "rpg_ai_rate=70000", err, sizeof err), FE_ERANGE);
    assert_string_equal(err, "rpg_ai_rate: 70000 out of range [1, 65535] Mb/s");
    assert_int_equal(fe_cc_params_parse(&p, "dce_tcp_g=1019.5", err, sizeof err), FE_EINVAL);
    assert_int_equal(fe_cc_params_parse(&p, "initial_alpha_value=1024", err, sizeof err),
                     FE_ERANGE);
    fe_cc_params_default(&p, fe_cc_find("dcqcn-surf"));
    assert_int_equal(fe_cc_params_parse(&p, "rpg_byte_reset=100", err, sizeof err), FE_ENOENT);
    assert_non_null(strstr(err, "dcqcn-surf has no parameter 'rpg_byte_reset'"));
    assert_int_equal(fe_cc_params_parse(&p, "rpg_gd=9", err, sizeof err), FE_ERANGE);
    assert_string_equal(err, "rpg_gd: 9 out of range [10, 25] shift");
    fe_cc_params_default(&p, fe_cc_find("dcqcn-hpcc-ns3"));
    assert_int_equal(fe_cc_params_parse(&p, "rpg_ai_rate=2.5,dce_tcp_g=1023.5", err, sizeof err),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(surf_one_cnp),
        cmocka_unit_test(surf_alpha_rounding),
        cmocka_unit_test(surf_clamp_ai_hai),
        cmocka_unit_test(surf_no_clamp_and_floor),
        cmocka_unit_test(connectx_first_cnp),
        cmocka_unit_test(connectx_cut),
        cmocka_unit_test(connectx_clamp_flags),
        cmocka_unit_test(connectx_live_params),
        cmocka_unit_test(connectx_ai_hai_byte_counter),
        cmocka_unit_test(connectx_alpha_decay),
        cmocka_unit_test(ns3_first_cnp_cuts),
        cmocka_unit_test(timer_calls_do_not_matter),
        cmocka_unit_test(param_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
