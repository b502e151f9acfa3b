/* "none": no congestion control, the NIC's line rate and no window (PFC-only fabrics). */
#include "cc/cc_internal.h"

static void none_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                      struct fe_cc_out *out)
{
    (void)ctx;
    (void)p;
    out->rate_Bps = env->line_rate_bps ? env->line_rate_bps / 8 : FE_CC_UNLIMITED;
    out->window_bytes = FE_CC_UNLIMITED;
    out->credit_bytes = FE_CC_UNLIMITED;
    out->timer_ns = FE_CC_NO_TIMER;
}

const struct fe_cc_algo fe_cc_none = {
    .name = "none",
    .summary = "no congestion control: line rate, no window (PFC only)",
    .ctx_size = 0,
    .params = NULL,
    .n_params = 0,
    .init = none_init,
};
