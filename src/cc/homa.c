/* Homa-style receiver-driven credit (Montazeri et al., SIGCOMM 2018): the sender may send one
 * round trip's worth of bytes unscheduled; everything beyond needs the receiver's grants, which
 * ACKs carry as a cumulative byte offset. The credit is the larger of the two and never moves
 * back (a reordered, older grant changes nothing); the requester never sends past it. Rate and
 * window are left to the receiver's grant pacing. */
#include "cc/cc_internal.h"

struct homa {
    uint64_t unscheduled, granted, credit, sent;
};

enum { P_RTTBYTES };
static const struct fe_cc_param homa_params[] = {
    [P_RTTBYTES] = {"rtt_bytes", "B",
                    "unscheduled bytes (0 = line rate x base RTT, 10 us if the RTT is unknown)", 0,
                    0, 1e12, true},
};

static void homa_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                      struct fe_cc_out *out)
{
    struct homa *s = ctx;
    uint64_t line_Bps = (env->line_rate_bps ? env->line_rate_bps : 100000000000ull) / 8;
    uint64_t rtt_ns = env->base_rtt_ns ? env->base_rtt_ns : 10000;
    s->unscheduled = p->v[P_RTTBYTES] ? (uint64_t)p->v[P_RTTBYTES]
                                      : line_Bps / 1000000 * rtt_ns / 1000 +
                                            line_Bps % 1000000 * rtt_ns / 1000000000;
    s->credit = s->unscheduled;
    out->credit_bytes = s->credit;
    out->rate_Bps = FE_CC_UNLIMITED;
    out->window_bytes = FE_CC_UNLIMITED;
}

static void homa_send(void *ctx, uint64_t now_ns, uint32_t bytes, struct fe_cc_out *out)
{
    struct homa *s = ctx;
    (void)now_ns;
    (void)out;
    s->sent += bytes;
}

static void homa_ack(void *ctx, uint64_t now_ns, const struct fe_cc_ack *ack, struct fe_cc_out *out)
{
    struct homa *s = ctx;
    (void)now_ns;
    if (ack->credit_bytes > s->granted) s->granted = ack->credit_bytes;
    if (s->granted > s->credit) {
        s->credit = s->granted;
        out->credit_bytes = s->credit;
    }
}

static int homa_trace(const void *ctx, struct fe_cc_trace *v, int max)
{
    const struct homa *s = ctx;
    const struct fe_cc_trace all[] = {
        {"credit", "B", (double)s->credit},
        {"granted", "B", (double)s->granted},
        {"unscheduled", "B", (double)s->unscheduled},
        {"sent", "B", (double)s->sent},
    };
    int n = (int)(sizeof all / sizeof all[0]);
    if (n > max) n = max;
    for (int i = 0; i < n; i++) v[i] = all[i];
    return n;
}

const struct fe_cc_algo fe_cc_homa = {
    .name = "homa",
    .summary = "Homa-style receiver credit: RTTbytes unscheduled, then only granted bytes",
    .caps = FE_CC_CAP_ACK_EVERY_PKT | FE_CC_CAP_RX_GRANTS,
    .ctx_size = sizeof(struct homa),
    .params = homa_params,
    .n_params = sizeof homa_params / sizeof homa_params[0],
    .init = homa_init,
    .on_send = homa_send,
    .on_ack = homa_ack,
    .trace = homa_trace,
};
