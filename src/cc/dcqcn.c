/* DCQCN reaction point, in the three flavours users compare against.
 *
 * Each profile is its own algorithm name, with the ConnectX parameter names but the units,
 * defaults and arithmetic of the implementation it reproduces, because a profile changes what a
 * value means (rpg_ai_rate is Mb/s on a ConnectX, a byte/s register on the SURF firmware):
 *   "dcqcn"           ConnectX (mlx5 sysfs ecn/roce_rp): integer Mb/s, alpha Q0.10, timer and
 *                     byte counter; the first CNP sets alpha = initial_alpha_value, does not cut.
 *   "dcqcn-surf"      SURF RoCEv2 firmware (LST AdvCam, slaclab/surf Dcqcn.vhd): integer B/s,
 *                     alpha Q0.10 with rounding, timer only, every CNP restarts the increase
 *                     timer and stage; the first CNP forces alpha = 1023 and cuts.
 *   "dcqcn-hpcc-ns3"  HPCC's ns-3 RdmaHw "mlx" mode: b/s, alpha a double, timer only, cuts on the
 *                     first CNP (1 ns after the first rate-decrease period).
 *
 * Three periodic processes start at the first CNP: alpha update, rate-decrease check (a cut
 * when a CNP arrived in the period), rate increase. Events at the same nanosecond run in the
 * order a discrete-event simulator would run them (ns-3: by scheduling time): by deadline, then
 * by the time they were scheduled, then alpha < decrease < increase. Timers due at or before an
 * event's time run before it. Rate-decrease and alpha ticks that cannot change anything (no CNP
 * pending; alpha already 0) are not scheduled, but the grid they fall on is kept, so the result
 * is identical to free-running timers. */
#include <math.h>
#include <stdint.h>

#include "cc/cc_internal.h"

enum profile { P_CONNECTX = 0, P_SURF = 1, P_NS3 = 2 };
enum ev { EV_ALPHA = 0, EV_DEC = 1, EV_INC = 2, N_EV = 3 };
#define NEVER UINT64_MAX

/* Each profile's parameters, indexed like its table (the order 'feroce cc' lists them in). */
enum connectx_param {
    CX_TIME_RESET,
    CX_BYTE_RESET,
    CX_THRESHOLD,
    CX_MAX_RATE,
    CX_AI_RATE,
    CX_HAI_RATE,
    CX_GD,
    CX_MIN_DEC_FAC,
    CX_MIN_RATE,
    CX_FIRST_RATE,
    CX_G,
    CX_ALPHA_PERIOD,
    CX_DEC_PERIOD,
    CX_INITIAL_ALPHA,
    CX_CLAMP,
    CX_CLAMP_AFTER_TIME_INC
};
enum surf_param {
    SF_TIME_RESET,
    SF_DEC_PERIOD,
    SF_ALPHA_PERIOD,
    SF_THRESHOLD,
    SF_MAX_RATE,
    SF_AI_RATE,
    SF_HAI_RATE,
    SF_MIN_RATE,
    SF_G,
    SF_GD,
    SF_CLAMP
};
enum ns3_param {
    N3_TIME_RESET,
    N3_DEC_PERIOD,
    N3_ALPHA_PERIOD,
    N3_G,
    N3_THRESHOLD,
    N3_AI_RATE,
    N3_HAI_RATE,
    N3_MIN_RATE,
    N3_MAX_RATE,
    N3_FIRST_RATE,
    N3_CLAMP
};

/* By cache line of the instance: struct fe_cc's outputs, then this context from byte 48. */
struct dcqcn {
    /* Beside the outputs: what every packet sent reads (dcqcn_send), and the flags. */
    bool active;       /* a CNP has arrived: the processes run */
    uint8_t profile;   /* enum profile */
    bool cnp_alpha;    /* CNP since the last alpha update */
    bool cnp_dec;      /* CNP since the last rate-decrease check */
    uint32_t bc_bytes; /* byte counter period (0 = off) */
    uint64_t bytes;    /* byte counter */
    /* What every timer tick reads (run_due, the alpha update, publish). Rates are in the
     * profile's unit: Mb/s (connectx), B/s (surf), b/s (hpcc-ns3). */
    uint64_t next[N_EV];     /* deadline, NEVER when not scheduled */
    uint64_t sched_at[N_EV]; /* when it was (virtually) scheduled: the tie-break */
    uint64_t rc;
    uint32_t alpha; /* Q0.10 (connectx, surf) */
    uint32_t g;     /* (1 - g) x 1024 (connectx, surf) */
    /* Rescheduling, increases. */
    uint64_t period[N_EV]; /* ns */
    uint64_t anchor[N_EV]; /* grid of the free-running processes */
    uint64_t rt;
    uint32_t T, BC; /* increase events by timer / byte counter since the last cut */
    /* The rest. */
    uint64_t max_rate, min_rate, ai, hai, first_rate;
    uint32_t gd, min_dec_fac, initial_alpha, F;
    bool clamp_always, clamp_after_time_inc;
    double alpha_d; /* hpcc-ns3 */
    double g_d;     /* hpcc-ns3: g itself */
    uint64_t cnps, cuts;
};

static uint64_t to_Bps(const struct dcqcn *s, uint64_t r)
{
    switch (s->profile) {
    case P_CONNECTX:
        return r * 125000u;
    case P_SURF:
        return r;
    default:
        return r / 8;
    }
}

static void schedule(struct dcqcn *s, int ev, uint64_t at, uint64_t sched_at)
{
    s->next[ev] = at;
    s->sched_at[ev] = sched_at;
}

/* First point of a process's grid strictly after now (a tick at `now` itself has run). */
static uint64_t grid_after(const struct dcqcn *s, int ev, uint64_t now)
{
    uint64_t a = s->anchor[ev], per = s->period[ev];
    if (now < a) return a;
    return a + ((now - a) / per + 1) * per;
}

static void publish(const struct dcqcn *s, struct fe_cc_out *out)
{
    out->rate_Bps = to_Bps(s, s->rc);
    uint64_t t = s->next[0];
    for (int e = 1; e < N_EV; e++)
        if (s->next[e] < t) t = s->next[e];
    out->timer_ns = t;
}

/* ---- the three processes ---- */

static void alpha_update(struct dcqcn *s)
{
    if (s->profile == P_NS3) {
        s->alpha_d = s->cnp_alpha ? (1 - s->g_d) * s->alpha_d + s->g_d : (1 - s->g_d) * s->alpha_d;
    } else if (s->profile == P_SURF) {
        /* The RTL rounds: (alpha x G + 512) >> 10. It keeps 10 bits of the sum, which wraps to 0
         * for G <= 512 after a CNP; we saturate at 1023 instead (the intended value). */
        uint32_t a = (s->alpha * s->g + 512) >> 10;
        if (s->cnp_alpha) a += 1024 - s->g;
        s->alpha = a > 1023 ? 1023 : a;
    } else {
        uint32_t a = s->alpha * s->g / 1024;
        if (s->cnp_alpha) a += 1024 - s->g;
        s->alpha = a > 1023 ? 1023 : a;
    }
    s->cnp_alpha = false;
}

static bool alpha_idle(const struct dcqcn *s)
{
    return !s->cnp_alpha && (s->profile == P_NS3 ? s->alpha_d == 0 : s->alpha == 0);
}

static void cut(struct dcqcn *s, uint64_t t)
{
    s->cuts++;
    if (s->profile == P_CONNECTX) {
        if (s->clamp_always || s->BC > 0 || (s->clamp_after_time_inc && s->T > 0)) s->rt = s->rc;
        uint64_t by_alpha = (s->rc * s->alpha) >> s->gd;
        uint64_t by_fac = s->rc * (100 - s->min_dec_fac) / 100;
        s->rc -= by_alpha < by_fac ? by_alpha : by_fac;
        if (s->rc < s->min_rate) s->rc = s->min_rate;
        s->T = s->BC = 0;
        s->bytes = 0;
        schedule(s, EV_INC, t + s->period[EV_INC], t);
    } else if (s->profile == P_SURF) {
        /* No stage reset and no timer restart here: every CNP already did both. */
        if (s->clamp_always || (s->clamp_after_time_inc && s->T > 0)) s->rt = s->rc;
        s->rc -= (s->rc * s->alpha) >> s->gd;
        if (s->rc < s->min_rate) s->rc = s->min_rate;
    } else {
        if (s->clamp_always || s->T != 0) s->rt = s->rc;
        uint64_t r = (uint64_t)((double)s->rc * (1 - s->alpha_d / 2));
        s->rc = r > s->min_rate ? r : s->min_rate;
        s->T = 0;
        schedule(s, EV_INC, t + s->period[EV_INC], t);
    }
}

static void raise_rt(struct dcqcn *s, uint64_t step)
{
    s->rt = s->rt + step > s->max_rate ? s->max_rate : s->rt + step;
}

/* One increase event; by_bytes: from the byte counter (connectx), else from the timer. */
static void increase(struct dcqcn *s, bool by_bytes)
{
    if (s->profile == P_CONNECTX) {
        uint32_t lo = s->T < s->BC ? s->T : s->BC, hi = s->T < s->BC ? s->BC : s->T;
        if (lo > s->F)
            raise_rt(s, s->hai);
        else if (hi >= s->F)
            raise_rt(s, s->ai);
        s->rc = (s->rc + s->rt) / 2;
        if (by_bytes)
            s->BC++;
        else
            s->T++;
    } else if (s->profile == P_SURF) {
        /* F - 1 fast-recovery steps, one additive step, then hyper steps (the stage stops). */
        if (s->T + 1 == s->F)
            raise_rt(s, s->ai);
        else if (s->T + 1 > s->F)
            raise_rt(s, s->hai);
        s->rc = s->rc / 2 + s->rt / 2;
        if (s->T + 1 <= s->F) s->T++;
    } else {
        /* F fast-recovery steps, one additive step, then hyper steps. */
        if (s->T == s->F)
            raise_rt(s, s->ai);
        else if (s->T > s->F)
            raise_rt(s, s->hai);
        s->rc = s->rc / 2 + s->rt / 2;
        if (s->T != UINT32_MAX) s->T++;
    }
}

static void fire(struct dcqcn *s, int ev)
{
    uint64_t t = s->next[ev];
    s->next[ev] = NEVER;
    switch (ev) {
    case EV_ALPHA:
        alpha_update(s);
        if (!alpha_idle(s)) schedule(s, EV_ALPHA, t + s->period[EV_ALPHA], t);
        break;
    case EV_DEC:
        /* Scheduled only while a CNP is pending, so this tick cuts. */
        s->cnp_dec = false;
        cut(s, t);
        break;
    default:
        schedule(s, EV_INC, t + s->period[EV_INC], t);
        increase(s, false);
        break;
    }
}

static void run_due(struct dcqcn *s, uint64_t now)
{
    for (;;) {
        int best = -1;
        for (int e = 0; e < N_EV; e++) {
            if (s->next[e] > now) continue;
            if (best < 0 || s->next[e] < s->next[best] ||
                (s->next[e] == s->next[best] && s->sched_at[e] < s->sched_at[best]))
                best = e;
        }
        if (best < 0) return;
        fire(s, best);
    }
}

/* ---- events ---- */

static void dcqcn_cnp(void *ctx, uint64_t now_ns, struct fe_cc_out *out)
{
    struct dcqcn *s = ctx;
    run_due(s, now_ns);
    s->cnps++;
    if (!s->active) {
        s->active = true;
        for (int e = 0; e < N_EV; e++) s->anchor[e] = now_ns;
        s->T = s->BC = 0;
        s->bytes = 0;
        if (s->first_rate)
            s->rc = s->rt = s->first_rate < s->max_rate ? s->first_rate : s->max_rate;
        s->cnp_alpha = false;
        switch (s->profile) {
        case P_CONNECTX:
            s->alpha = s->initial_alpha;
            s->cnp_dec = false; /* the first CNP does not cut by itself */
            schedule(s, EV_ALPHA, now_ns + s->period[EV_ALPHA], now_ns);
            schedule(s, EV_INC, now_ns + s->period[EV_INC], now_ns);
            break;
        case P_SURF:
            s->alpha = 1023;
            s->cnp_dec = true;
            schedule(s, EV_ALPHA, now_ns + s->period[EV_ALPHA], now_ns);
            schedule(s, EV_DEC, now_ns + s->period[EV_DEC], now_ns);
            schedule(s, EV_INC, now_ns + s->period[EV_INC], now_ns);
            break;
        default:
            s->alpha_d = 1.0;
            s->cnp_dec = true;
            /* ns-3 adds 1 ns so that the first cut follows the alpha update; the increase
             * timer starts at the first cut. */
            s->anchor[EV_DEC] = now_ns + 1;
            schedule(s, EV_ALPHA, now_ns + s->period[EV_ALPHA], now_ns);
            schedule(s, EV_DEC, now_ns + 1 + s->period[EV_DEC], now_ns);
            break;
        }
    } else {
        if (!s->cnp_alpha && s->next[EV_ALPHA] == NEVER) {
            uint64_t at = grid_after(s, EV_ALPHA, now_ns);
            schedule(s, EV_ALPHA, at, at - s->period[EV_ALPHA]);
        }
        if (!s->cnp_dec && s->next[EV_DEC] == NEVER) {
            uint64_t at = grid_after(s, EV_DEC, now_ns);
            schedule(s, EV_DEC, at, at - s->period[EV_DEC]);
        }
        s->cnp_alpha = s->cnp_dec = true;
        if (s->profile == P_SURF) { /* every CNP restarts the increase timer and stage */
            s->T = 0;
            schedule(s, EV_INC, now_ns + s->period[EV_INC], now_ns);
        }
    }
    publish(s, out);
}

static void dcqcn_timer(void *ctx, uint64_t now_ns, struct fe_cc_out *out);

/* The byte counter's increase events, out of line: dcqcn_send runs for every packet sent, and
 * then it needs no registers saved. */
__attribute__((noinline)) static void byte_counter_events(struct dcqcn *s, struct fe_cc_out *out)
{
    while (s->bytes >= s->bc_bytes) {
        s->bytes -= s->bc_bytes;
        increase(s, true);
    }
    publish(s, out);
}

static inline void count_bytes(struct dcqcn *s, uint32_t bytes, struct fe_cc_out *out)
{
    if (!s->bc_bytes || !s->active) return;
    s->bytes += bytes;
    if (s->bytes >= s->bc_bytes) byte_counter_events(s, out);
}

/* A packet sent after a timer fell due: the timers first (out of line, as above). */
__attribute__((noinline)) static void send_after_due(struct dcqcn *s, uint64_t now_ns,
                                                     uint32_t bytes, struct fe_cc_out *out)
{
    dcqcn_timer(s, now_ns, out);
    count_bytes(s, bytes, out);
}

static void dcqcn_send(void *ctx, uint64_t now_ns, uint32_t bytes, struct fe_cc_out *out)
{
    struct dcqcn *s = ctx;
    if (out->timer_ns <= now_ns)
        send_after_due(s, now_ns, bytes, out);
    else
        count_bytes(s, bytes, out);
}

static void dcqcn_ack(void *ctx, uint64_t now_ns, const struct fe_cc_ack *ack,
                      struct fe_cc_out *out)
{
    /* ns-3 compatible notification: congestion echoed on the ACK counts as a CNP. */
    if (ack->ecn_echo) dcqcn_cnp(ctx, now_ns, out);
}

static void dcqcn_timer(void *ctx, uint64_t now_ns, struct fe_cc_out *out)
{
    struct dcqcn *s = ctx;
    run_due(s, now_ns);
    publish(s, out);
}

static uint64_t us_to_ns(double us)
{
    double ns = us * 1000.0;
    if (ns < 1) return 1;
    return ns > 1e18 ? (uint64_t)1e18 : (uint64_t)llround(ns);
}

/* Rates in the profile's unit; max 0 = the line rate. */
static void set_rates(struct dcqcn *s, uint64_t line, uint64_t max, uint64_t min, uint64_t ai,
                      uint64_t hai, uint64_t first)
{
    s->max_rate = max && max < line ? max : line;
    if (!s->max_rate) s->max_rate = 1;
    s->min_rate = min < s->max_rate ? min : s->max_rate;
    s->ai = ai;
    s->hai = hai;
    s->first_rate = first;
    s->rc = s->rt = s->max_rate;
}

static void set_periods(struct dcqcn *s, double alpha_us, double dec_us, double inc_us)
{
    s->period[EV_ALPHA] = us_to_ns(alpha_us);
    s->period[EV_DEC] = us_to_ns(dec_us);
    s->period[EV_INC] = us_to_ns(inc_us);
}

/* ConnectX: every setting is a parameter; rates in Mb/s. */
static void init_connectx(struct dcqcn *s, const double *v, uint64_t line_bps)
{
    set_rates(s, line_bps / 1000000u, (uint64_t)v[CX_MAX_RATE], (uint64_t)v[CX_MIN_RATE],
              (uint64_t)v[CX_AI_RATE], (uint64_t)v[CX_HAI_RATE], (uint64_t)v[CX_FIRST_RATE]);
    s->F = (uint32_t)v[CX_THRESHOLD];
    s->gd = (uint32_t)v[CX_GD];
    s->min_dec_fac = (uint32_t)v[CX_MIN_DEC_FAC];
    s->initial_alpha = (uint32_t)v[CX_INITIAL_ALPHA];
    s->alpha = s->initial_alpha;
    s->g = (uint32_t)v[CX_G];
    s->clamp_always = v[CX_CLAMP] != 0;
    s->clamp_after_time_inc = v[CX_CLAMP_AFTER_TIME_INC] != 0;
    s->bc_bytes = (uint32_t)v[CX_BYTE_RESET] * 64; /* at most 32767 x 64 */
    set_periods(s, v[CX_ALPHA_PERIOD], v[CX_DEC_PERIOD], v[CX_TIME_RESET]);
}

/* SURF firmware: rates are B/s registers. It has no byte counter and no first-CNP rate, its
 * alpha resets to 1023 (and the first CNP sets it there again), and a cut after a timer increase
 * always sets Rt = Rc (the RTL's clamp). */
static void init_surf(struct dcqcn *s, const double *v, uint64_t line_bps)
{
    set_rates(s, line_bps / 8, (uint64_t)v[SF_MAX_RATE], (uint64_t)v[SF_MIN_RATE],
              (uint64_t)v[SF_AI_RATE], (uint64_t)v[SF_HAI_RATE], 0);
    s->F = (uint32_t)v[SF_THRESHOLD];
    s->gd = (uint32_t)v[SF_GD];
    s->initial_alpha = 1023;
    s->alpha = s->initial_alpha;
    s->g = (uint32_t)v[SF_G];
    s->clamp_always = v[SF_CLAMP] != 0;
    s->clamp_after_time_inc = true;
    set_periods(s, v[SF_ALPHA_PERIOD], v[SF_DEC_PERIOD], v[SF_TIME_RESET]);
}

/* HPCC's ns-3 model: rates are given in Mb/s like its config file and kept in b/s, converted as
 * ns-3's DataRate does; alpha and its gain are doubles, the cut is Rc x (1 - alpha / 2), and
 * there is no byte counter. */
static void init_ns3(struct dcqcn *s, const double *v, uint64_t line_bps)
{
    set_rates(s, line_bps, (uint64_t)(v[N3_MAX_RATE] * 1e6), (uint64_t)(v[N3_MIN_RATE] * 1e6),
              (uint64_t)(v[N3_AI_RATE] * 1e6), (uint64_t)(v[N3_HAI_RATE] * 1e6),
              (uint64_t)(v[N3_FIRST_RATE] * 1e6));
    s->F = (uint32_t)v[N3_THRESHOLD];
    s->g_d = (1024 - v[N3_G]) / 1024;
    s->clamp_always = v[N3_CLAMP] != 0;
    set_periods(s, v[N3_ALPHA_PERIOD], v[N3_DEC_PERIOD], v[N3_TIME_RESET]);
}

/* The profile's settings from p, with its reset state (rates at the maximum, alpha initial). */
static void load_profile(struct dcqcn *s, const struct fe_cc_params *p, const struct fe_cc_env *env)
{
    uint64_t line_bps = env->line_rate_bps ? env->line_rate_bps : 100000000000ull;
    if (p->algo == &fe_cc_dcqcn_surf) {
        s->profile = P_SURF;
        init_surf(s, p->v, line_bps);
    } else if (p->algo == &fe_cc_dcqcn_ns3) {
        s->profile = P_NS3;
        init_ns3(s, p->v, line_bps);
    } else {
        s->profile = P_CONNECTX;
        init_connectx(s, p->v, line_bps);
    }
}

static void dcqcn_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                       struct fe_cc_out *out)
{
    struct dcqcn *s = ctx;
    load_profile(s, p, env);
    s->alpha_d = 1.0;
    for (int e = 0; e < N_EV; e++) s->next[e] = NEVER;
    out->window_bytes = FE_CC_UNLIMITED;
    out->credit_bytes = FE_CC_UNLIMITED;
    publish(s, out);
}

/* A register write while running: the settings change, the state stays. The rates are kept
 * within the new bounds; timers already armed fire when they were due, the next ones at the
 * new periods (the firmware's counters compare against the register from then on). */
static void dcqcn_set_params(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                             struct fe_cc_out *out)
{
    struct dcqcn *s = ctx;
    uint64_t rc = s->rc, rt = s->rt;
    uint32_t alpha = s->alpha;
    load_profile(s, p, env);
    s->alpha = alpha;
    s->rc = rc > s->max_rate ? s->max_rate : rc < s->min_rate ? s->min_rate : rc;
    s->rt = rt > s->max_rate ? s->max_rate : rt < s->min_rate ? s->min_rate : rt;
    publish(s, out);
}

static int dcqcn_trace(const void *ctx, struct fe_cc_trace *v, int max)
{
    const struct dcqcn *s = ctx;
    static const char *const rate_unit[] = {"Mb/s", "B/s", "b/s"};
    uint32_t stage;
    if (s->profile == P_CONNECTX) {
        uint32_t lo = s->T < s->BC ? s->T : s->BC, hi = s->T < s->BC ? s->BC : s->T;
        stage = lo > s->F ? 2 : hi >= s->F ? 1 : 0;
    } else if (s->profile == P_SURF) {
        stage = s->T + 1 > s->F ? 2 : s->T + 1 == s->F ? 1 : 0;
    } else {
        stage = s->T > s->F ? 2 : s->T == s->F ? 1 : 0;
    }
    const struct fe_cc_trace all[] = {
        {"Rc", rate_unit[s->profile], (double)s->rc},
        {"Rt", rate_unit[s->profile], (double)s->rt},
        {"alpha", s->profile == P_NS3 ? "" : "1/1024",
         s->profile == P_NS3 ? s->alpha_d : (double)s->alpha},
        {"T", "events", s->T},
        {"BC", "events", s->BC},
        {"stage", "0 FR/1 AI/2 HAI", stage},
        {"bytes", "B", (double)s->bytes},
        {"cnp_pending", "", s->cnp_dec},
        {"cnps", "", (double)s->cnps},
        {"cuts", "", (double)s->cuts},
    };
    int n = (int)(sizeof all / sizeof all[0]);
    if (n > max) n = max;
    for (int i = 0; i < n; i++) v[i] = all[i];
    return n;
}

/* ---- parameter tables ---- */

static const struct fe_cc_param connectx_params[] = {
    [CX_TIME_RESET] = {"rpg_time_reset", "us", "rate-increase timer period", 300, 1, 131071, true},
    [CX_BYTE_RESET] = {"rpg_byte_reset", "64 B", "rate-increase byte counter period (0 = off)",
                       32767, 0, 32767, true},
    [CX_THRESHOLD] = {"rpg_threshold", "events",
                      "stage threshold F (fast recovery -> additive -> hyper)", 1, 1, 31, true},
    [CX_MAX_RATE] = {"rpg_max_rate", "Mb/s", "maximum rate (0 = line rate)", 0, 0, 1000000, true},
    [CX_AI_RATE] = {"rpg_ai_rate", "Mb/s", "additive increase of Rt", 5, 1, 65535, true},
    [CX_HAI_RATE] = {"rpg_hai_rate", "Mb/s", "hyper increase of Rt", 50, 1, 65535, true},
    [CX_GD] = {"rpg_gd", "shift", "cut = Rc x alpha >> rpg_gd", 11, 1, 15, true},
    [CX_MIN_DEC_FAC] = {"rpg_min_dec_fac", "%", "one cut leaves at least this share of Rc", 50, 1,
                        100, true},
    [CX_MIN_RATE] = {"rpg_min_rate", "Mb/s", "rate floor", 1, 1, 1000000, true},
    [CX_FIRST_RATE] = {"rate_to_set_on_first_cnp", "Mb/s", "Rc = Rt on the first CNP (0 = keep)", 0,
                       0, 1000000, true},
    [CX_G] = {"dce_tcp_g", "1/1024", "alpha gain, stored as (1 - g) x 1024", 1019, 0, 1023, true},
    [CX_ALPHA_PERIOD] = {"dce_tcp_rtt", "us", "alpha update period", 1, 1, 131071, true},
    [CX_DEC_PERIOD] = {"rate_reduce_monitor_period", "us", "at most one cut per period", 4, 1,
                       131071, true},
    [CX_INITIAL_ALPHA] = {"initial_alpha_value", "1/1024", "alpha set by the first CNP", 1023, 0,
                          1023, true},
    [CX_CLAMP] = {"clamp_tgt_rate", "bool", "every cut sets Rt = Rc", 0, 0, 1, true},
    [CX_CLAMP_AFTER_TIME_INC] =
        {"clamp_tgt_rate_after_time_inc", "bool",
         "a cut sets Rt = Rc also after timer increases (always after byte-counter ones)", 1, 0, 1,
         true},
};

/* SURF register names in the help; defaults are the firmware's reset values. */
static const struct fe_cc_param surf_params[] = {
    [SF_TIME_RESET] = {"rpg_time_reset", "us", "rateIncInterval: rate-increase timer period", 1500,
                       1, 27487790, true},
    [SF_DEC_PERIOD] = {"rate_reduce_monitor_period", "us",
                       "rateDecInterval: rate-decrease check period", 4, 1, 419, true},
    [SF_ALPHA_PERIOD] = {"dce_tcp_rtt", "us", "alphaUpdInterval: alpha update period", 55, 1, 419,
                         true},
    [SF_THRESHOLD] = {"rpg_threshold", "events",
                      "timeStageThreshold F: F-1 fast recovery steps, one additive", 5, 1, 255,
                      true},
    [SF_MAX_RATE] = {"rpg_max_rate", "B/s", "LINE_RATE_G: maximum rate (0 = line rate)", 0, 0,
                     4294967295.0, true},
    [SF_AI_RATE] = {"rpg_ai_rate", "B/s", "Rai: additive increase of Rt", 6000000, 0, 4294967295.0,
                    true},
    [SF_HAI_RATE] = {"rpg_hai_rate", "B/s", "Rhai: hyper increase of Rt", 12000000, 0, 4294967295.0,
                     true},
    [SF_MIN_RATE] = {"rpg_min_rate", "B/s", "Rmin: rate floor", 10000000, 0, 4294967295.0, true},
    [SF_G] = {"dce_tcp_g", "1/1024", "alphaG = (1 - g) x 1024", 1020, 0, 1023, true},
    [SF_GD] = {"rpg_gd", "shift", "10 + dec_gain: cut = Rc x alpha >> rpg_gd", 11, 10, 25, true},
    [SF_CLAMP] = {"clamp_tgt_rate", "bool", "clampTgtRate: every cut sets Rt = Rc", 0, 0, 1, true},
};

/* ns-3 config names in the help; defaults are HPCC's run.py "--cc dcqcn" at 25 Gb/s. */
static const struct fe_cc_param ns3_params[] = {
    [N3_TIME_RESET] = {"rpg_time_reset", "us", "RP_TIMER: rate-increase timer period", 300, 0.001,
                       1e9, false},
    [N3_DEC_PERIOD] = {"rate_reduce_monitor_period", "us", "RATE_DECREASE_INTERVAL", 4, 0.001, 1e9,
                       false},
    [N3_ALPHA_PERIOD] = {"dce_tcp_rtt", "us", "ALPHA_RESUME_INTERVAL: alpha update period", 1,
                         0.001, 1e9, false},
    [N3_G] = {"dce_tcp_g", "1/1024", "(1 - EWMA_GAIN) x 1024", 1020, 0, 1024, false},
    [N3_THRESHOLD] = {"rpg_threshold", "events", "FAST_RECOVERY_TIMES F", 1, 0, 1000000, true},
    [N3_AI_RATE] = {"rpg_ai_rate", "Mb/s", "RATE_AI", 5, 0, 1e7, false},
    [N3_HAI_RATE] = {"rpg_hai_rate", "Mb/s", "RATE_HAI", 50, 0, 1e7, false},
    [N3_MIN_RATE] = {"rpg_min_rate", "Mb/s", "MIN_RATE", 1000, 0, 1e7, false},
    [N3_MAX_RATE] = {"rpg_max_rate", "Mb/s", "maximum rate (0 = line rate)", 0, 0, 1e7, false},
    [N3_FIRST_RATE] = {"rate_to_set_on_first_cnp", "Mb/s", "Rc = Rt on the first CNP (0 = keep)", 0,
                       0, 1e7, false},
    [N3_CLAMP] = {"clamp_tgt_rate", "bool", "CLAMP_TARGET_RATE: every cut sets Rt = Rc", 0, 0, 1,
                  true},
};

#define DCQCN_COMMON                                                                               \
    .ctx_size = sizeof(struct dcqcn), .init = dcqcn_init, .on_send = dcqcn_send,                   \
    .on_ack = dcqcn_ack, .on_cnp = dcqcn_cnp, .on_timer = dcqcn_timer, .trace = dcqcn_trace,       \
    .set_params = dcqcn_set_params, .caps = FE_CC_CAP_DCQCN

const struct fe_cc_algo fe_cc_dcqcn = {
    .name = "dcqcn",
    .summary = "DCQCN, ConnectX profile (Mb/s, alpha Q0.10, timer + byte counter)",
    .params = connectx_params,
    .n_params = sizeof connectx_params / sizeof connectx_params[0],
    DCQCN_COMMON,
};
const struct fe_cc_algo fe_cc_dcqcn_surf = {
    .name = "dcqcn-surf",
    .summary = "DCQCN, SURF/LST AdvCam firmware profile (B/s, alpha Q0.10, timer only)",
    .params = surf_params,
    .n_params = sizeof surf_params / sizeof surf_params[0],
    DCQCN_COMMON,
};
const struct fe_cc_algo fe_cc_dcqcn_ns3 = {
    .name = "dcqcn-hpcc-ns3",
    .summary = "DCQCN, HPCC ns-3 simulator profile (b/s, alpha double, timer only)",
    .params = ns3_params,
    .n_params = sizeof ns3_params / sizeof ns3_params[0],
    DCQCN_COMMON,
};
