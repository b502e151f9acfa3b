/* HPCC (Li et al., SIGCOMM 2019): a window from in-band telemetry. Each ACK echoes, per hop, the
 * egress queue, bytes sent and timestamp; the normalised inflight U of the most loaded hop
 * (queue / BDP + tx rate / capacity), smoothed over the base RTT T, sets the window
 * W = Wc / (U / eta) + W_AI when U >= eta (or after maxStage additive steps), else Wc + W_AI.
 * Every ACK computes W from the reference window Wc (fast reaction); Wc itself moves once per
 * round trip, when the acknowledged packet was sent after the last reference update. The pacer
 * rate is W / T. Defaults are the paper's. */
#include "cc/cc_internal.h"

struct hpcc {
    double eta, w_ai, t_ns, inv_t_ns, w_init, w_min;
    double U, W, Wc;
    double mtu_slack_bytes; /* MTU - 1: the window admits a packet while inflight < W */
    uint32_t inc_stage, max_stage;
    struct fe_int_hop prev[FE_INT_MAX_HOPS];
    uint32_t rate_mbps[FE_INT_MAX_HOPS]; /* cached 1e9 / capacity: no division per ACK */
    double ns_per_byte[FE_INT_MAX_HOPS];
    uint8_t nhops;
    bool have_prev;
    uint64_t last_update_ns;
};

enum { P_ETA, P_MAXSTAGE, P_WAI, P_BASERTT, P_MINRATE };
static const struct fe_cc_param hpcc_params[] = {
    [P_ETA] = {"eta", "", "target utilisation", 0.95, 0.01, 1, false},
    [P_MAXSTAGE] = {"max_stage", "RTTs", "additive steps before a multiplicative correction", 5, 0,
                    1000, true},
    [P_WAI] = {"w_ai", "B",
               "additive increase per RTT (0 = W_init x (1 - eta) / 64, the "
               "paper's W_init (1 - eta) / N for N = 64 flows)",
               0, 0, 1e9, false},
    [P_BASERTT] = {"base_rtt", "us", "T, the base RTT (0 = the path's, 10 us if unknown)", 0, 0,
                   1e6, false},
    [P_MINRATE] = {"min_rate", "Mb/s", "rate floor (W >= min_rate x T)", 100, 0, 1e6, false},
};

/* HPCC's W bounds the bytes in flight *before* a packet leaves (ns-3: a QP is window-bound once
 * inflight >= W), while the requester admits a packet only when inflight + len <= window: W is
 * published one MTU - 1 larger. Without it, at a BDP of a few MTUs W acts in whole packets
 * (W = 1.9 MTU allows one packet, like W = 1.0), the pacing rate W / T no longer sets the
 * throughput, and flows with the same U drift apart (incast3: 2.3 .. 3.9 Gb/s, Jain 0.945). */
static void publish(const struct hpcc *s, struct fe_cc_out *out)
{
    out->window_bytes = (uint64_t)(int64_t)(s->W + s->mtu_slack_bytes); /* < 2^63 */
    out->rate_Bps = (uint64_t)(int64_t)(s->W * 1e9 * s->inv_t_ns);
}

static void hpcc_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                      struct fe_cc_out *out)
{
    struct hpcc *s = ctx;
    double line_Bps = (env->line_rate_bps ? (double)env->line_rate_bps : 100e9) / 8;
    s->eta = p->v[P_ETA];
    s->max_stage = (uint32_t)p->v[P_MAXSTAGE];
    s->t_ns = p->v[P_BASERTT]    ? p->v[P_BASERTT] * 1e3
              : env->base_rtt_ns ? (double)env->base_rtt_ns
                                 : 10e3;
    if (s->t_ns < 1) s->t_ns = 1; /* a base RTT below 1 ns is meaningless */
    s->inv_t_ns = 1 / s->t_ns;
    s->w_init = line_Bps * s->t_ns / 1e9;
    s->w_ai = p->v[P_WAI] ? p->v[P_WAI] : s->w_init * (1 - s->eta) / 64;
    s->w_min = p->v[P_MINRATE] * 1e6 / 8 * s->t_ns / 1e9;
    if (s->w_min > s->w_init) s->w_min = s->w_init;
    s->W = s->Wc = s->w_init;
    s->mtu_slack_bytes = env->mtu_bytes ? env->mtu_bytes - 1 : 0;
    out->credit_bytes = FE_CC_UNLIMITED;
    publish(s, out);
}

/* U of the most loaded hop, EWMA over T weighted by the time the sample covers. Returns false
 * when there is no previous record to difference against. Per hop:
 * u = min(qlen) / (B x T) + tx_rate / B = (min(qlen) / T + tx_bytes / dt) x (1e9 / B). */
static bool measure_inflight(struct hpcc *s, const struct fe_int *md)
{
    uint8_t n = md->nhops > FE_INT_MAX_HOPS ? FE_INT_MAX_HOPS : md->nhops;
    bool ok = s->have_prev && n == s->nhops && n > 0;
    double u = 0, tau = 0;
    for (uint8_t i = 0; ok && i < n; i++) {
        const struct fe_int_hop *h = &md->hop[i], *o = &s->prev[i];
        if (h->ts_ns <= o->ts_ns || !h->rate_mbps) continue;
        if (h->rate_mbps != s->rate_mbps[i]) {
            s->rate_mbps[i] = h->rate_mbps;
            s->ns_per_byte[i] = 1e9 / (h->rate_mbps * 125000.0);
        }
        double dt = (double)(h->ts_ns - o->ts_ns);
        uint32_t q = h->qlen_bytes < o->qlen_bytes ? h->qlen_bytes : o->qlen_bytes;
        double ui =
            (q * s->inv_t_ns + (double)(h->tx_bytes - o->tx_bytes) / dt) * s->ns_per_byte[i];
        if (ui > u) {
            u = ui;
            tau = dt;
        }
    }
    for (uint8_t i = 0; i < n; i++) s->prev[i] = md->hop[i];
    s->nhops = n;
    s->have_prev = true;
    if (!ok || tau == 0) return false;
    double w = tau < s->t_ns ? tau * s->inv_t_ns : 1;
    s->U = (1 - w) * s->U + w * u;
    return true;
}

static void hpcc_ack(void *ctx, uint64_t now_ns, const struct fe_cc_ack *ack, struct fe_cc_out *out)
{
    struct hpcc *s = ctx;
    if (!ack->int_md) return;
    if (!measure_inflight(s, ack->int_md)) return;
    /* the reference window moves once per RTT: when this ACK is for a packet sent after the
     * last move (without an RTT sample, after one base RTT) */
    uint64_t back = ack->rtt_ns ? ack->rtt_ns : (uint64_t)s->t_ns;
    uint64_t sent_at = back <= now_ns ? now_ns - back : 0;
    bool update_wc = sent_at >= s->last_update_ns;
    double W;
    uint32_t stage;
    if (s->U >= s->eta || s->inc_stage >= s->max_stage) {
        W = s->Wc * s->eta / s->U + s->w_ai;
        stage = 0;
    } else {
        W = s->Wc + s->w_ai;
        stage = s->inc_stage + 1;
    }
    if (W < s->w_min) W = s->w_min;
    if (W > s->w_init) W = s->w_init;
    s->W = W;
    if (update_wc) {
        s->Wc = W;
        s->inc_stage = stage;
        s->last_update_ns = now_ns;
    }
    publish(s, out);
}

static int hpcc_trace(const void *ctx, struct fe_cc_trace *v, int max)
{
    const struct hpcc *s = ctx;
    const struct fe_cc_trace all[] = {
        {"W", "B", s->W},
        {"Wc", "B", s->Wc},
        {"U", "", s->U},
        {"inc_stage", "RTTs", s->inc_stage},
        {"rate", "Mb/s", s->W * 8e3 * s->inv_t_ns},
    };
    int n = (int)(sizeof all / sizeof all[0]);
    if (n > max) n = max;
    for (int i = 0; i < n; i++) v[i] = all[i];
    return n;
}

const struct fe_cc_algo fe_cc_hpcc = {
    .name = "hpcc",
    .summary = "HPCC: window from INT, eta 0.95, maxStage 5 (SIGCOMM 2019)",
    .caps = FE_CC_CAP_INT | FE_CC_CAP_ACK_EVERY_PKT,
    .ctx_size = sizeof(struct hpcc),
    .params = hpcc_params,
    .n_params = sizeof hpcc_params / sizeof hpcc_params[0],
    .init = hpcc_init,
    .on_ack = hpcc_ack,
    .trace = hpcc_trace,
};
