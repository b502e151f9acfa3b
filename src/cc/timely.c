/* TIMELY (Mittal et al., SIGCOMM 2015): rate from the RTT gradient. Below T_low add delta; above
 * T_high cut in proportion to how far above; between them follow the EWMA-smoothed RTT
 * difference normalised by the minimum RTT: cut by beta x gradient when it rises, add delta
 * (N x delta after N rising-free completions in a row: hyper-active increase) when it falls.
 * One update per round trip: an ACK updates when the packet it acknowledges was sent after the
 * previous update (the paper's per-completion event). Defaults are the paper's. */
#include "cc/cc_internal.h"

struct timely {
    double rate_bps, min_bps, max_bps, delta_bps;
    double t_low_ns, t_high_ns, min_rtt_ns, beta, alpha;
    double prev_rtt_ns, rtt_diff_ns, gradient;
    uint32_t hai_n, rising_free;
    uint64_t last_update_ns;
    bool have_prev;
};

enum { P_TLOW, P_THIGH, P_DELTA, P_BETA, P_ALPHA, P_HAI, P_MINRTT, P_MINRATE };
static const struct fe_cc_param timely_params[] = {
    [P_TLOW] = {"t_low", "us", "below this RTT, add delta regardless of the gradient", 50, 0, 1e6,
                false},
    [P_THIGH] = {"t_high", "us", "above this RTT, cut by beta x (1 - t_high / rtt)", 500, 0, 1e6,
                 false},
    [P_DELTA] = {"delta", "Mb/s", "additive increase step", 10, 0, 1e6, false},
    [P_BETA] = {"beta", "", "multiplicative decrease factor", 0.8, 0, 1, false},
    [P_ALPHA] = {"ewma_alpha", "", "weight of the newest RTT difference in the EWMA", 0.875, 0, 1,
                 false},
    [P_HAI] = {"hai_n", "completions", "after N non-rising updates in a row, add N x delta", 5, 1,
               1000, true},
    [P_MINRTT] = {"min_rtt", "us", "normalises the gradient", 20, 0.001, 1e6, false},
    [P_MINRATE] = {"min_rate", "Mb/s", "rate floor", 10, 0, 1e6, false},
};

static void publish(const struct timely *s, struct fe_cc_out *out)
{
    out->rate_Bps = (uint64_t)(int64_t)(s->rate_bps * 0.125);
}

static void timely_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                        struct fe_cc_out *out)
{
    struct timely *s = ctx;
    s->max_bps = env->line_rate_bps ? (double)env->line_rate_bps : 100e9;
    s->t_low_ns = p->v[P_TLOW] * 1e3;
    s->t_high_ns = p->v[P_THIGH] * 1e3;
    s->delta_bps = p->v[P_DELTA] * 1e6;
    s->beta = p->v[P_BETA];
    s->alpha = p->v[P_ALPHA];
    s->hai_n = (uint32_t)p->v[P_HAI];
    s->min_rtt_ns = p->v[P_MINRTT] * 1e3;
    s->min_bps = p->v[P_MINRATE] * 1e6;
    if (s->min_bps > s->max_bps) s->min_bps = s->max_bps;
    s->rate_bps = s->max_bps;
    publish(s, out);
}

static void timely_ack(void *ctx, uint64_t now_ns, const struct fe_cc_ack *ack,
                       struct fe_cc_out *out)
{
    struct timely *s = ctx;
    if (!ack->rtt_ns) return;
    double rtt = (double)ack->rtt_ns;
    if (!s->have_prev) {
        s->have_prev = true;
        s->prev_rtt_ns = rtt;
        s->last_update_ns = now_ns;
        return;
    }
    /* once per round trip: only a packet sent after the last update carries news */
    uint64_t sent_at = ack->rtt_ns <= now_ns ? now_ns - ack->rtt_ns : 0;
    if (sent_at < s->last_update_ns) return;
    s->last_update_ns = now_ns;
    double new_diff = rtt - s->prev_rtt_ns;
    s->prev_rtt_ns = rtt;
    s->rtt_diff_ns = (1 - s->alpha) * s->rtt_diff_ns + s->alpha * new_diff;
    s->gradient = s->rtt_diff_ns / s->min_rtt_ns;
    double r = s->rate_bps;
    if (rtt < s->t_low_ns) {
        r += s->delta_bps;
        s->rising_free = 0;
    } else if (rtt > s->t_high_ns) {
        r *= 1 - s->beta * (1 - s->t_high_ns / rtt);
        s->rising_free = 0;
    } else if (s->gradient <= 0) {
        s->rising_free++;
        r += (s->rising_free >= s->hai_n ? s->hai_n : 1) * s->delta_bps;
    } else {
        double f = 1 - s->beta * s->gradient;
        r *= f > 0 ? f : 0;
        s->rising_free = 0;
    }
    s->rate_bps = r < s->min_bps ? s->min_bps : r > s->max_bps ? s->max_bps : r;
    publish(s, out);
}

static int timely_trace(const void *ctx, struct fe_cc_trace *v, int max)
{
    const struct timely *s = ctx;
    const struct fe_cc_trace all[] = {
        {"rate", "Mb/s", s->rate_bps / 1e6},
        {"rtt", "us", s->prev_rtt_ns / 1e3},
        {"rtt_diff", "us", s->rtt_diff_ns / 1e3},
        {"gradient", "", s->gradient},
        {"rising_free", "completions", s->rising_free},
    };
    int n = (int)(sizeof all / sizeof all[0]);
    if (n > max) n = max;
    for (int i = 0; i < n; i++) v[i] = all[i];
    return n;
}

const struct fe_cc_algo fe_cc_timely = {
    .name = "timely",
    .summary = "TIMELY: rate from the RTT gradient (SIGCOMM 2015)",
    .caps = FE_CC_CAP_TIMESTAMP,
    .ctx_size = sizeof(struct timely),
    .params = timely_params,
    .n_params = sizeof timely_params / sizeof timely_params[0],
    .init = timely_init,
    .on_ack = timely_ack,
    .trace = timely_trace,
};
