/* The SURF RoCEv2Dcqcn cycle model: register readbacks against the VHDL's (*_regs.txt, all
 * three phases, writes applied at the cycle the testbench made them), and the RTL rules one by
 * one on small runs whose expected cycles and values follow from the rules by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/cc.h"
#include "feroce/surf.h"

#ifndef FE_SURF_GOLDEN_DIR
#error "FE_SURF_GOLDEN_DIR must name tests/cc/surf-golden"
#endif

#define L FE_SURF_LINE_RATE_BPS

struct changes {
    uint64_t cycle[64];
    struct fe_surf_state s[64];
    int n;
};

static void record(void *ctx, uint64_t cycle, const struct fe_surf_state *s)
{
    struct changes *c = ctx;
    if (c->n < 64) {
        c->cycle[c->n] = cycle;
        c->s[c->n++] = *s;
    }
}

static void init_model(struct fe_surf *m, struct changes *c)
{
    fe_surf_init(m, NULL, L);
    memset(c, 0, sizeof *c);
    fe_surf_set_change_fn(m, record, c);
}

static void drive(struct fe_surf *m, uint64_t d)
{
    fe_surf_run_until(m, d);
    assert_int_equal(fe_surf_cnp_drive(m, d), 0);
}

/* ---- readbacks against the golden *_regs.txt ---- */

struct golden_run {
    struct fe_surf m;
    uint64_t cnp[256];
    size_t n_cnp, next;
};

static void load_schedule(struct golden_run *g, const char *c)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s_cnp_schedule.txt", FE_SURF_GOLDEN_DIR, c, c);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    unsigned long long d;
    while (g->n_cnp < 256 && fscanf(f, "%llu", &d) == 1) g->cnp[g->n_cnp++] = d;
    fclose(f);
}

static void run_golden_to(struct golden_run *g, uint64_t cycle)
{
    while (g->next < g->n_cnp && g->cnp[g->next] + FE_SURF_CNP_LATENCY < cycle) {
        uint64_t d = g->cnp[g->next++];
        fe_surf_run_until(&g->m, d);
        assert_int_equal(fe_surf_cnp_drive(&g->m, d), 0);
    }
    fe_surf_run_until(&g->m, cycle);
}

/* "... read 0xADDR = 0xVALUE = ... issued at cycle N": the value visible at N + 1. */
static int check_read_line(struct golden_run *g, const char *line)
{
    const char *r = strstr(line, " read 0x"), *at = strstr(line, "issued at cycle ");
    if (!r || !at) return 0;
    unsigned addr, want;
    unsigned long long issued;
    assert_int_equal(sscanf(r, " read 0x%x = 0x%x", &addr, &want), 2);
    assert_int_equal(sscanf(at, "issued at cycle %llu", &issued), 1);
    run_golden_to(g, issued + 1);
    uint32_t got;
    assert_int_equal(fe_surf_axil_read(&g->m, addr, &got), FE_SURF_OKAY);
    if (got != want) fprintf(stderr, "%s", line);
    assert_int_equal(got, want);
    return 1;
}

static void readbacks_of_case(const char *c)
{
    struct golden_run *g = calloc(1, sizeof *g);
    assert_non_null(g);
    fe_surf_init(&g->m, NULL, L);
    load_schedule(g, c);
    char path[512], line[256];
    snprintf(path, sizeof path, "%s/%s/%s_regs.txt", FE_SURF_GOLDEN_DIR, c, c);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int reads = 0, writes = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long done;
        const char *at = strstr(line, "done at cycle ");
        struct fe_surf_reg_write w;
        char err[160];
        if (!strncmp(line, "write ", 6) && at && sscanf(at, "done at cycle %llu", &done) == 1) {
            assert_int_equal(fe_surf_parse_reg_line(line, &w, err, sizeof err), 1);
            run_golden_to(g, done);
            assert_int_equal(fe_surf_axil_write(&g->m, w.addr, w.value), FE_SURF_OKAY);
            writes++;
        } else {
            reads += check_read_line(g, line);
        }
    }
    fclose(f);
    assert_int_equal(reads, 30);
    assert_true(writes == 0 || writes >= 6);
    free(g);
}

static void readbacks_a(void **state)
{
    (void)state, readbacks_of_case("a");
}
static void readbacks_b(void **state)
{
    (void)state, readbacks_of_case("b");
}
static void readbacks_c(void **state)
{
    (void)state, readbacks_of_case("c");
}
static void readbacks_d(void **state)
{
    (void)state, readbacks_of_case("d");
}
static void readbacks_e(void **state)
{
    (void)state, readbacks_of_case("e");
}

/* ---- register file ---- */

static void defaults_and_decerr(void **state)
{
    (void)state;
    struct fe_surf m;
    fe_surf_init(&m, NULL, L);
    uint32_t v = 1;
    assert_int_equal(fe_surf_axil_read(&m, 0x000, &v), FE_SURF_OKAY);
    assert_int_equal(v, 0x000147FC);
    assert_int_equal(fe_surf_axil_read(&m, 0x014, &v), FE_SURF_OKAY);
    assert_int_equal(v, 0x21920271);
    assert_int_equal(fe_surf_axil_read(&m, 0x010, &v), FE_SURF_OKAY);
    assert_int_equal(v, 234375);
    assert_int_equal(fe_surf_axil_read(&m, 0x028, &v), FE_SURF_DECERR);
    assert_int_equal(fe_surf_axil_read(&m, 0x002, &v), FE_SURF_DECERR);
    assert_int_equal(fe_surf_axil_write(&m, 0x100, 1), FE_SURF_DECERR);
    /* read-only fields ignore writes; only bit 10 of 0x020 is writable */
    assert_int_equal(fe_surf_axil_write(&m, 0x018, 5), FE_SURF_OKAY);
    assert_int_equal(fe_surf_axil_write(&m, 0x020, 0xffffffff), FE_SURF_OKAY);
    assert_int_equal(fe_surf_axil_read(&m, 0x018, &v), FE_SURF_OKAY);
    assert_int_equal(v, L);
    assert_int_equal(fe_surf_axil_read(&m, 0x020, &v), FE_SURF_OKAY);
    assert_int_equal(v, 1023 | 1 << 10);
    /* the packings: every field masked to its width */
    assert_int_equal(fe_surf_axil_write(&m, 0x000, 0xffffffff), FE_SURF_OKAY);
    assert_int_equal(m.reg.alpha_g, 1023);
    assert_int_equal(m.reg.dec_gain, 15);
    assert_int_equal(m.reg.stage_f, 255);
    assert_int_equal(m.reg.clamp, 1);
    assert_int_equal(fe_surf_axil_read(&m, 0x000, &v), FE_SURF_OKAY);
    assert_int_equal(v, 0x007FFFFF);
}

static void reg_lines(void **state)
{
    (void)state;
    struct fe_surf_reg_write w;
    char err[160];
    assert_int_equal(fe_surf_parse_reg_line("0x004 = 6000000\n", &w, err, sizeof err), 1);
    assert_int_equal(w.addr, 4);
    assert_int_equal(w.value, 6000000);
    assert_int_equal(fe_surf_parse_reg_line("20=0x7A12 # rate inc", &w, err, sizeof err), 1);
    assert_int_equal(w.addr, 0x014);
    assert_int_equal(w.value, 0x7a12);
    assert_int_equal(fe_surf_parse_reg_line("  # nothing", &w, err, sizeof err), 0);
    assert_int_equal(fe_surf_parse_reg_line("final read 0x018 = 0x1 = 1", &w, err, sizeof err), 0);
    assert_int_equal(fe_surf_parse_reg_line("programmed read 0x018 = 0x4A817C80 = 1250000000 "
                                            "(bit31=0) issued at cycle 84",
                                            &w, err, sizeof err),
                     0);
    assert_int_equal(fe_surf_parse_reg_line("programmed read 0x010 = 0x00007A12 = 31250 (bit31=0) "
                                            "issued at cycle 76",
                                            &w, err, sizeof err),
                     1);
    assert_int_equal(w.value, 31250);
    const char *bad[] = {"0x004",
                         "0x004 =",
                         "0x004 = 6000000 extra",
                         "0x028 = 1",
                         "0x006 = 1",
                         "0x018 = 1",
                         "0x004 = 4294967296",
                         "0x004 = -1",
                         "programmed read 0x004 = 0x10 = 17",
                         "write 0x004 = 16 (0x11) done at cycle 3",
                         "hello"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = 0;
        assert_int_equal(fe_surf_parse_reg_line(bad[i], &w, err, sizeof err), -1);
        assert_true(err[0] != 0);
    }
}

/* ---- the rules ---- */

/* Case a by hand: drive 1562 -> cnpRe 1566 -> Rc = L - floor(L * 1023 / 2048) visible at
 * 1566 + 625 + 6; alpha decays at 1566 + 8594 + 3 + 2; the first increase (fast recovery) at
 * 1566 + 234375 + 6, timeStage one cycle before. */
static void first_cut_latency(void **state)
{
    (void)state;
    struct fe_surf m;
    struct changes c;
    init_model(&m, &c);
    drive(&m, 1562);
    fe_surf_run_until(&m, 236000);
    assert_int_equal(c.cycle[0], 2197);
    assert_int_equal(c.s[0].rc_Bps, 625610352);
    assert_int_equal(c.s[0].rt_Bps, L);
    assert_int_equal(c.cycle[1], 10165);
    assert_int_equal(c.s[1].alpha, 1019);
    assert_int_equal(c.cycle[2] - c.cycle[1], 8596);
    int k = c.n - 2;
    assert_int_equal(c.cycle[k], 235946);
    assert_int_equal(c.s[k].stage, 1);
    assert_int_equal(c.cycle[k + 1], 235947);
    assert_int_equal(c.s[k + 1].rc_Bps, 937805176);
}

/* The pulse needs cnp low at a sampled edge: a drive one cycle after the previous extends it. */
static void adjacent_drives_merge(void **state)
{
    (void)state;
    struct fe_surf m;
    struct changes c;
    init_model(&m, &c);
    drive(&m, 100);
    drive(&m, 101);
    drive(&m, 103);
    fe_surf_run_until(&m, 200);
    assert_int_equal(m.cnps_seen, 2);
    assert_int_equal(fe_surf_cnp_drive(&m, 50), -1); /* in the past */
}

/* A CNP whose cnpRe falls on a decrease sample edge U (or U+1, U+2) while a decrease is in
 * progress is absorbed: one cut, not two. One cycle earlier it is merged into the same cut. */
static void decrease_absorption(void **state)
{
    (void)state;
    for (int off = -1; off <= 3; off++) {
        struct fe_surf m;
        struct changes c;
        init_model(&m, &c);
        fe_surf_axil_write(&m, 0x014, 100 | 60000u << 16); /* I_dec 100, no alpha update */
        drive(&m, 0);                                      /* E1 = 4, U0 = 107 */
        drive(&m, (uint64_t)(107 - 4 + off));              /* second cnpRe at U0 + off */
        fe_surf_run_until(&m, 400);
        int cuts = 0;
        for (int i = 0; i < c.n; i++) cuts += c.s[i].rc_Bps != (i ? c.s[i - 1].rc_Bps : L);
        assert_int_equal(cuts, off == 3 ? 2 : 1);
        assert_int_equal(c.cycle[0], 110);
    }
}

/* alpha' = floor((alpha * G + 512) / 1024) + (1024 - G), kept to 10 bits: G = 512 and
 * alpha = 1023 give 512 + 512 = 1024, which wraps to 0. */
static void alpha_wraps(void **state)
{
    (void)state;
    struct fe_surf m;
    struct changes c;
    init_model(&m, &c);
    fe_surf_axil_write(&m, 0x000, 512 | 1 << 10 | 5 << 14);
    fe_surf_axil_write(&m, 0x014, 60000 | 20u << 16); /* I_a 20: A0 = E1 + 23 */
    drive(&m, 0);                                     /* E1 = 4, first CNP sets no alpha flag */
    drive(&m, 10);                                    /* E = 14: flags alpha */
    fe_surf_run_until(&m, 30);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.cycle[0], 29);
    assert_int_equal(c.s[0].alpha, 0);
}

/* The increase timer reset of a CNP whose E + 1 is the transition or step edge is lost: the
 * step goes ahead and timeStage is not cleared. One cycle earlier it restarts the timer. */
static void lost_timer_reset(void **state)
{
    (void)state;
    for (int off = -3; off <= -1; off++) {
        struct fe_surf m;
        struct changes c;
        init_model(&m, &c);
        fe_surf_axil_write(&m, 0x010, 1000);
        fe_surf_axil_write(&m, 0x014, 60000 | 60000u << 16);
        drive(&m, 0);                          /* E1 = 4: S = 1008 */
        drive(&m, (uint64_t)(1008 + off - 4)); /* E = S + off */
        fe_surf_run_until(&m, 1100);
        bool stepped = false;
        for (int i = 0; i < c.n; i++) stepped |= c.s[i].stage == 1 && c.cycle[i] == 1009;
        assert_int_equal(stepped, off >= -2);
    }
}

/* Bypass: Rc and Rt stay at the line rate, alpha at 1023; cnpCnt counts (0x020 one cycle after
 * the counter). */
static void bypass_counts(void **state)
{
    (void)state;
    struct fe_surf m;
    struct changes c;
    init_model(&m, &c);
    fe_surf_axil_write(&m, 0x024, 1);
    drive(&m, 10);
    fe_surf_run_until(&m, 15);
    uint32_t v;
    fe_surf_axil_read(&m, 0x020, &v);
    assert_int_equal(v >> 11, 0); /* counter visible at 15, register at 16 */
    fe_surf_run_until(&m, 16);
    fe_surf_axil_read(&m, 0x020, &v);
    assert_int_equal(v, 1023 | 1 << 11);
    fe_surf_run_until(&m, 5000000);
    assert_int_equal(c.n, 0);
    assert_int_equal(fe_surf_next_event(&m), UINT64_MAX);
}

/* byte_per_clk = floor(Rc * 1801440 / 2^32) in Q16.16: exactly 8 B/clk at the line rate,
 * 4.003906 and 6.001953 after the first cut and the first recovery (README token rates). */
static void token_rate(void **state)
{
    (void)state;
    assert_int_equal(fe_surf_token_rate_q16(L, FE_SURF_CLOCK_HZ), 8u << 16);
    assert_int_equal(fe_surf_token_rate_q16(625610352, FE_SURF_CLOCK_HZ), 262400);
    assert_int_equal(fe_surf_token_rate_q16(937805176, FE_SURF_CLOCK_HZ), 393344);
}

/* dcqcn-surf-rtl, the cycle model as a CC algorithm: a CNP at 10 us is the drive at cycle
 * floor(10000 / 6.4) = 1562, so the first cut, visible at cycle 2197 (edge 2196), is seen at
 * ceil(2196 x 6.4) = 14055 ns; the timer asks for exactly that instant. */
static void cc_algorithm_rounds_to_the_clock(void **state)
{
    (void)state;
    const struct fe_cc_algo *a = fe_cc_find("dcqcn-surf-rtl");
    assert_non_null(a);
    static _Alignas(16) unsigned char mem[2048];
    assert_true(fe_cc_instance_size(a) <= sizeof mem);
    struct fe_cc *cc = (struct fe_cc *)mem;
    struct fe_cc_params p;
    fe_cc_params_default(&p, a);
    struct fe_cc_env env = {.line_rate_bps = 10000000000ull, .mtu_bytes = 4096};
    fe_cc_init(cc, &p, &env);
    assert_int_equal(cc->out.rate_Bps, L);
    assert_int_equal(cc->out.timer_ns, UINT64_MAX);
    fe_cc_on_cnp(cc, 10000);
    uint64_t t = cc->out.timer_ns;
    while (t < 14055) {
        fe_cc_on_timer(cc, t);
        assert_int_equal(cc->out.rate_Bps, L);
        t = cc->out.timer_ns;
    }
    assert_int_equal(t, 14055);
    fe_cc_on_timer(cc, 14054);
    assert_int_equal(cc->out.rate_Bps, L);
    fe_cc_on_timer(cc, 14055);
    assert_int_equal(cc->out.rate_Bps, 625610352);
    /* Table II in microseconds: 3 us is 469 cycles, 40 us 6250, 2 ms 312500 */
    char err[128];
    assert_int_equal(fe_cc_params_parse(&p,
                                        "rate_reduce_monitor_period=3,dce_tcp_rtt=40,"
                                        "rpg_time_reset=2000,clamp_tgt_rate=1",
                                        err, sizeof err),
                     0);
    fe_cc_init(cc, &p, &env);
    fe_cc_on_cnp(cc, 10000);
    fe_cc_on_timer(cc, 2041 * 64 / 10); /* case b: the first cut is visible at cycle 2041 */
    assert_int_equal(cc->out.rate_Bps, 625610352);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readbacks_a),
        cmocka_unit_test(readbacks_b),
        cmocka_unit_test(readbacks_c),
        cmocka_unit_test(readbacks_d),
        cmocka_unit_test(readbacks_e),
        cmocka_unit_test(defaults_and_decerr),
        cmocka_unit_test(reg_lines),
        cmocka_unit_test(first_cut_latency),
        cmocka_unit_test(adjacent_drives_merge),
        cmocka_unit_test(decrease_absorption),
        cmocka_unit_test(alpha_wraps),
        cmocka_unit_test(lost_timer_reset),
        cmocka_unit_test(bypass_counts),
        cmocka_unit_test(token_rate),
        cmocka_unit_test(cc_algorithm_rounds_to_the_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
