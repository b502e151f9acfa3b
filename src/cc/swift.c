/* Swift (Kumar et al., SIGCOMM 2020): a window driven by delay against a target. Below the
 * target the window grows by ai packets per RTT; above it, at most once per RTT, it shrinks by
 * beta x (delay - target) / delay, never more than max_mdf. The target is a base delay plus a
 * per-hop term (hops from INT when present) plus optional flow scaling (a smaller window gets a
 * larger target, for fairness among many flows). A window below one packet is enforced by
 * pacing: one packet every RTT / cwnd. A NACK (loss) cuts by max_mdf. Defaults are the
 * paper's. */
#include <math.h>

#include "cc/cc_internal.h"

struct swift {
    double cwnd, ai, beta, max_mdf, min_cwnd, max_cwnd;
    double base_target_ns, hop_scale_ns, fs_range_ns, fs_alpha, fs_beta;
    double mtu, inv_mtu, rtt_ns, target_ns;
    uint64_t last_decrease_ns;
    bool decreased;
};

enum { P_TARGET, P_HOP, P_FSRANGE, P_FSMIN, P_FSMAX, P_AI, P_BETA, P_MDF, P_MINC, P_MAXC };
static const struct fe_cc_param swift_params[] = {
    [P_TARGET] = {"base_target", "us", "base target delay", 25, 0.001, 1e6, false},
    [P_HOP] = {"hop_scale", "us", "target added per hop (hops from INT records)", 1, 0, 1e6, false},
    [P_FSRANGE] = {"fs_range", "us", "flow-scaling range added at small windows (0 = off)", 0, 0,
                   1e6, false},
    [P_FSMIN] = {"fs_min_cwnd", "packets", "window that gets the whole fs_range", 0.1, 0.001, 1e6,
                 false},
    [P_FSMAX] = {"fs_max_cwnd", "packets", "window that gets no flow scaling", 100, 0.001, 1e6,
                 false},
    [P_AI] = {"ai", "packets/RTT", "additive increase", 1, 0, 1e6, false},
    [P_BETA] = {"beta", "", "multiplicative decrease gain", 0.8, 0, 1, false},
    [P_MDF] = {"max_mdf", "", "largest decrease in one step", 0.5, 0, 1, false},
    [P_MINC] = {"min_cwnd", "packets", "window floor (below 1 the flow is paced)", 0.001, 1e-6, 1e6,
                false},
    [P_MAXC] = {"max_cwnd", "packets", "window ceiling (0 = line rate x (base RTT + target) / MTU)",
                0, 0, 1e9, false},
};

static void publish(const struct swift *s, struct fe_cc_out *out)
{
    double wb = s->cwnd * s->mtu;
    uint64_t w = (uint64_t)(int64_t)wb;     /* < 2^63: one instruction */
    out->window_bytes = w < wb ? w + 1 : w; /* ceil without a libm call */
    if (s->cwnd < 1 && s->rtt_ns > 0)
        out->rate_Bps = (uint64_t)(s->cwnd * s->mtu * 1e9 / s->rtt_ns);
    else
        out->rate_Bps = FE_CC_UNLIMITED;
}

static void swift_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                       struct fe_cc_out *out)
{
    struct swift *s = ctx;
    s->mtu = env->mtu_bytes ? env->mtu_bytes : 4096;
    s->inv_mtu = 1 / s->mtu;
    s->base_target_ns = p->v[P_TARGET] * 1e3;
    s->hop_scale_ns = p->v[P_HOP] * 1e3;
    s->fs_range_ns = p->v[P_FSRANGE] * 1e3;
    /* flow scaling: fs = alpha / sqrt(cwnd) + beta, 0 at fs_max_cwnd, fs_range at fs_min_cwnd */
    double a = 1 / sqrt(p->v[P_FSMIN]), b = 1 / sqrt(p->v[P_FSMAX]);
    s->fs_alpha = a > b ? s->fs_range_ns / (a - b) : 0;
    s->fs_beta = -s->fs_alpha * b;
    s->ai = p->v[P_AI];
    s->beta = p->v[P_BETA];
    s->max_mdf = p->v[P_MDF];
    s->min_cwnd = p->v[P_MINC];
    double line_Bps = (env->line_rate_bps ? (double)env->line_rate_bps : 100e9) / 8;
    s->max_cwnd = p->v[P_MAXC]
                      ? p->v[P_MAXC]
                      : line_Bps * ((double)env->base_rtt_ns + s->base_target_ns) / 1e9 / s->mtu;
    if (s->max_cwnd < s->min_cwnd) s->max_cwnd = s->min_cwnd;
    if (s->max_cwnd < 1) s->max_cwnd = 1;
    s->cwnd = s->max_cwnd;
    s->target_ns = s->base_target_ns;
    out->credit_bytes = FE_CC_UNLIMITED;
    publish(s, out);
}

static double clampw(const struct swift *s, double w)
{
    return w < s->min_cwnd ? s->min_cwnd : w > s->max_cwnd ? s->max_cwnd : w;
}

static bool can_decrease(const struct swift *s, uint64_t now_ns)
{
    return !s->decreased || (double)(now_ns - s->last_decrease_ns) >= s->rtt_ns;
}

static void swift_ack(void *ctx, uint64_t now_ns, const struct fe_cc_ack *ack,
                      struct fe_cc_out *out)
{
    struct swift *s = ctx;
    if (!ack->rtt_ns) return;
    double delay = (double)ack->rtt_ns;
    s->rtt_ns = delay;
    double fs = s->fs_alpha / sqrt(s->cwnd) + s->fs_beta;
    fs = fs < 0 ? 0 : fs > s->fs_range_ns ? s->fs_range_ns : fs;
    s->target_ns =
        s->base_target_ns + fs + (ack->int_md ? ack->int_md->nhops * s->hop_scale_ns : 0);
    double acked = (double)ack->acked_bytes / s->mtu;
    if (delay < s->target_ns) {
        s->cwnd += s->cwnd >= 1 ? s->ai * acked / s->cwnd : s->ai * acked;
    } else if (can_decrease(s, now_ns)) {
        double f = 1 - s->beta * (delay - s->target_ns) / delay;
        s->cwnd *= f > 1 - s->max_mdf ? f : 1 - s->max_mdf;
        s->last_decrease_ns = now_ns;
        s->decreased = true;
    }
    s->cwnd = clampw(s, s->cwnd);
    publish(s, out);
}

static void swift_nack(void *ctx, uint64_t now_ns, uint32_t psn, struct fe_cc_out *out)
{
    struct swift *s = ctx;
    (void)psn;
    if (!can_decrease(s, now_ns)) return;
    s->cwnd = clampw(s, s->cwnd * (1 - s->max_mdf));
    s->last_decrease_ns = now_ns;
    s->decreased = true;
    publish(s, out);
}

static int swift_trace(const void *ctx, struct fe_cc_trace *v, int max)
{
    const struct swift *s = ctx;
    const struct fe_cc_trace all[] = {
        {"cwnd", "packets", s->cwnd},
        {"delay", "us", s->rtt_ns / 1e3},
        {"target", "us", s->target_ns / 1e3},
    };
    int n = (int)(sizeof all / sizeof all[0]);
    if (n > max) n = max;
    for (int i = 0; i < n; i++) v[i] = all[i];
    return n;
}

const struct fe_cc_algo fe_cc_swift = {
    .name = "swift",
    .summary = "Swift: delay-target AIMD window, paced below one packet (SIGCOMM 2020)",
    .ctx_size = sizeof(struct swift),
    .params = swift_params,
    .n_params = sizeof swift_params / sizeof swift_params[0],
    .init = swift_init,
    .on_ack = swift_ack,
    .on_nack = swift_nack,
    .trace = swift_trace,
};
