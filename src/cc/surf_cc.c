/* "dcqcn-surf-rtl": the SURF firmware's rate limiter as a congestion-control algorithm, running
 * the cycle model (surf_rp.c) so that simulated and on-the-wire firmware senders behave as the
 * firmware, to the clock cycle. Times are rounded to the clock: a CNP arriving at t ns is a drive
 * at cycle floor(t * f / 1e9), and a change the model makes at edge n is seen at
 * ceil(n * 1e9 / f) ns. Parameters keep dcqcn-surf's names (microsecond intervals rounded to
 * cycles as firmware engineers program them; 3 us is 469 cycles), plus exact cycle counts and the
 * bypass register. */
#include <math.h>

#include "cc/cc_internal.h"
#include "feroce/surf.h"

enum {
    P_TIME_RESET,
    P_DEC_PERIOD,
    P_ALPHA_PERIOD,
    P_THRESHOLD,
    P_MAX_RATE,
    P_AI,
    P_HAI,
    P_MIN,
    P_G,
    P_GD,
    P_CLAMP,
    P_INC_CYCLES,
    P_DEC_CYCLES,
    P_ALPHA_CYCLES,
    P_BYPASS,
    P_CLOCK,
};

static const struct fe_cc_param rtl_params[] = {
    [P_TIME_RESET] = {"rpg_time_reset", "us", "rateIncInterval (rounded to cycles)", 1500, 0,
                      27487790, false},
    [P_DEC_PERIOD] = {"rate_reduce_monitor_period", "us", "rateDecInterval (rounded to cycles)", 4,
                      0, 419, false},
    [P_ALPHA_PERIOD] = {"dce_tcp_rtt", "us", "alphaUpdInterval (rounded to cycles)", 55, 0, 419,
                        false},
    [P_THRESHOLD] = {"rpg_threshold", "events", "timeStageThreshold F", 5, 0, 255, true},
    [P_MAX_RATE] = {"rpg_max_rate", "B/s", "LINE_RATE_G (0 = line rate)", 0, 0, 4294967295.0, true},
    [P_AI] = {"rpg_ai_rate", "B/s", "Rai (0x004)", 6000000, 0, 4294967295.0, true},
    [P_HAI] = {"rpg_hai_rate", "B/s", "Rhai (0x008)", 12000000, 0, 4294967295.0, true},
    [P_MIN] = {"rpg_min_rate", "B/s", "Rmin (0x00C)", 10000000, 0, 4294967295.0, true},
    [P_G] = {"dce_tcp_g", "1/1024", "alphaG = (1 - g) x 1024", 1020, 0, 1023, true},
    [P_GD] = {"rpg_gd", "shift", "10 + dec_gain", 11, 10, 25, true},
    [P_CLAMP] = {"clamp_tgt_rate", "bool", "clampTgtRate", 0, 0, 1, true},
    [P_INC_CYCLES] = {"rate_inc_cycles", "cycles", "rateIncInterval exactly (0 = from us)", 0, 0,
                      4294967295.0, true},
    [P_DEC_CYCLES] = {"rate_dec_cycles", "cycles", "rateDecInterval exactly (0 = from us)", 0, 0,
                      65535, true},
    [P_ALPHA_CYCLES] = {"alpha_upd_cycles", "cycles", "alphaUpdInterval exactly (0 = from us)", 0,
                        0, 65535, true},
    [P_BYPASS] = {"bypass", "bool", "dcqcnBypass (0x024): Rc = Rt = line rate", 0, 0, 1, true},
    [P_CLOCK] = {"clock_hz", "Hz", "the firmware clock", 156250000, 1000000, 1000000000, true},
};

struct rtl {
    struct fe_surf m;
    uint64_t ns_num, cyc_den; /* one cycle is ns_num / cyc_den ns, reduced */
    uint64_t cnps;
};

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static uint32_t cycles_of(double us, double exact, uint32_t clock_hz, uint32_t max)
{
    if (exact > 0) return (uint32_t)exact;
    double c = floor(us * clock_hz / 1e6 + 0.5);
    return c > max ? max : (uint32_t)c;
}

static void set_registers(struct fe_surf_regs *r, const double *v, uint32_t clock_hz)
{
    fe_surf_regs_default(r, clock_hz);
    r->inc_cycles = cycles_of(v[P_TIME_RESET], v[P_INC_CYCLES], clock_hz, UINT32_MAX);
    r->dec_cycles = cycles_of(v[P_DEC_PERIOD], v[P_DEC_CYCLES], clock_hz, 0xffff);
    r->alpha_cycles = cycles_of(v[P_ALPHA_PERIOD], v[P_ALPHA_CYCLES], clock_hz, 0xffff);
    r->stage_f = (uint32_t)v[P_THRESHOLD];
    r->rai_Bps = (uint32_t)v[P_AI];
    r->rhai_Bps = (uint32_t)v[P_HAI];
    r->rmin_Bps = (uint32_t)v[P_MIN];
    r->alpha_g = (uint32_t)v[P_G];
    r->dec_gain = (uint32_t)v[P_GD] - 10;
    r->clamp = (uint32_t)v[P_CLAMP];
    r->bypass = (uint32_t)v[P_BYPASS];
}

/* The cycle whose edge is the last at or before t. */
static uint64_t cycle_at(const struct rtl *s, uint64_t t_ns)
{
    return t_ns / s->ns_num * s->cyc_den + t_ns % s->ns_num * s->cyc_den / s->ns_num;
}

/* The first nanosecond at or after edge n. */
static uint64_t ns_of(const struct rtl *s, uint64_t n)
{
    if (n == UINT64_MAX || n / s->cyc_den > UINT64_MAX / s->ns_num / 2) return FE_CC_NO_TIMER;
    uint64_t whole = n / s->cyc_den * s->ns_num, rest = n % s->cyc_den * s->ns_num;
    return whole + (rest + s->cyc_den - 1) / s->cyc_den;
}

static void publish(struct rtl *s, struct fe_cc_out *out)
{
    out->rate_Bps = s->m.s.rc_Bps;
    out->timer_ns = ns_of(s, fe_surf_next_event(&s->m));
}

static void advance(struct rtl *s, uint64_t now_ns)
{
    fe_surf_run_until(&s->m, cycle_at(s, now_ns) + 1);
}

static void rtl_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                     struct fe_cc_out *out)
{
    struct rtl *s = ctx;
    uint32_t clock_hz = (uint32_t)p->v[P_CLOCK];
    uint64_t line_Bps = p->v[P_MAX_RATE] > 0 ? (uint64_t)p->v[P_MAX_RATE] : env->line_rate_bps / 8;
    if (line_Bps > UINT32_MAX) line_Bps = UINT32_MAX; /* LINE_RATE_G is a 32-bit B/s value */
    struct fe_surf_regs r;
    set_registers(&r, p->v, clock_hz);
    fe_surf_init(&s->m, &r, (uint32_t)line_Bps);
    uint64_t g = gcd_u64(1000000000u, clock_hz);
    s->ns_num = 1000000000u / g;
    s->cyc_den = clock_hz / g;
    s->m.now = cycle_at(s, env->now_ns) + 1; /* the firmware leaves reset at creation */
    out->window_bytes = FE_CC_UNLIMITED;
    publish(s, out);
}

static void rtl_cnp(void *ctx, uint64_t now_ns, struct fe_cc_out *out)
{
    struct rtl *s = ctx;
    advance(s, now_ns);
    s->cnps++;
    fe_surf_cnp_drive(&s->m, cycle_at(s, now_ns));
    publish(s, out);
}

static void rtl_timer(void *ctx, uint64_t now_ns, struct fe_cc_out *out)
{
    struct rtl *s = ctx;
    advance(s, now_ns);
    publish(s, out);
}

static int rtl_trace(const void *ctx, struct fe_cc_trace *v, int max)
{
    const struct rtl *s = ctx;
    const struct fe_cc_trace all[] = {
        {"Rc", "B/s", s->m.s.rc_Bps},      {"Rt", "B/s", s->m.s.rt_Bps},
        {"alpha", "1/1024", s->m.s.alpha}, {"T", "steps", s->m.s.stage},
        {"cnps", "CNPs", (double)s->cnps},
    };
    int n = (int)(sizeof all / sizeof all[0]);
    if (n > max) n = max;
    for (int i = 0; i < n; i++) v[i] = all[i];
    return n;
}

const struct fe_cc_algo fe_cc_dcqcn_surf_rtl = {
    .name = "dcqcn-surf-rtl",
    .summary = "DCQCN, the SURF firmware's VHDL to the clock cycle (cycle model, B/s registers)",
    .ctx_size = sizeof(struct rtl),
    .params = rtl_params,
    .n_params = sizeof rtl_params / sizeof rtl_params[0],
    .init = rtl_init,
    .on_cnp = rtl_cnp,
    .on_timer = rtl_timer,
    .trace = rtl_trace,
};
