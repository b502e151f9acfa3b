/* CC instances: one block holding the algorithm, its outputs and its per-QP context, and the
 * timer loop that lets an algorithm catch up on deadlines that passed while nobody called it. */
#include "feroce/cc.h"

#include <stddef.h>
#include <string.h>

#include "cc/cc_internal.h"

size_t fe_cc_instance_size(const struct fe_cc_algo *algo)
{
    if (!algo) algo = &fe_cc_none;
    size_t n = offsetof(struct fe_cc, ctx) + algo->ctx_size;
    return (n + 15) & ~(size_t)15;
}

void fe_cc_init(struct fe_cc *cc, const struct fe_cc_params *p, const struct fe_cc_env *env)
{
    const struct fe_cc_algo *algo = p && p->algo ? p->algo : cc->algo;
    struct fe_cc_params defaults;
    if (!algo) algo = &fe_cc_none;
    if (!p || p->algo != algo) {
        fe_cc_params_default(&defaults, algo);
        p = &defaults;
    }
    cc->algo = algo;
    cc->out.rate_Bps = FE_CC_UNLIMITED;
    cc->out.window_bytes = FE_CC_UNLIMITED;
    cc->out.credit_bytes = FE_CC_UNLIMITED;
    cc->out.timer_ns = FE_CC_NO_TIMER;
    memset(cc->ctx, 0, algo->ctx_size);
    struct fe_cc_env e = {0};
    if (env) e = *env;
    if (algo->init) algo->init(cc->ctx, p, &e, &cc->out);
}

bool fe_cc_set_params(struct fe_cc *cc, const struct fe_cc_params *p, const struct fe_cc_env *env)
{
    if (!cc->algo->set_params || p->algo != cc->algo) {
        fe_cc_init(cc, p, env);
        return false;
    }
    struct fe_cc_env e = {0};
    if (env) e = *env;
    cc->algo->set_params(cc->ctx, p, &e, &cc->out);
    return true;
}

void fe_cc_on_timer(struct fe_cc *cc, uint64_t now_ns)
{
    if (!cc->algo->on_timer) {
        cc->out.timer_ns = FE_CC_NO_TIMER;
        return;
    }
    /* Each call handles the earliest due deadline; an algorithm that re-arms without moving its
     * deadline forward would spin, so a deadline that does not advance ends the loop. */
    while (cc->out.timer_ns <= now_ns) {
        uint64_t due = cc->out.timer_ns;
        cc->algo->on_timer(cc->ctx, now_ns, &cc->out);
        if (cc->out.timer_ns <= due) break;
    }
}

int fe_cc_trace(const struct fe_cc *cc, struct fe_cc_trace *vals, int max)
{
    if (!cc->algo->trace || max <= 0) return 0;
    int n = cc->algo->trace(cc->ctx, vals, max);
    return n < 0 ? 0 : (n > max ? max : n);
}
