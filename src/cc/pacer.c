/* The pacer's public functions; the arithmetic is in pacer_impl.h. */
#include "cc/pacer_impl.h"

void fe_pacer_init(struct fe_pacer *p, uint64_t burst_bytes, uint64_t now_ns)
{
    p->last_ns = now_ns;
    p->burst_bytes = burst_bytes > UINT32_MAX ? UINT32_MAX : burst_bytes;
    p->credit = fe_pacer_cap(p, 0); /* a fresh pacer may send one burst at once */
}

uint64_t fe_pacer_when(const struct fe_pacer *p, uint64_t rate_Bps, uint32_t bytes, uint64_t now_ns)
{
    return fe_pacer_when_inline(p, rate_Bps, bytes, now_ns);
}

void fe_pacer_sync(struct fe_pacer *p, uint64_t rate_Bps, uint64_t now_ns)
{
    fe_pacer_sync_inline(p, rate_Bps, now_ns);
}

void fe_pacer_consume(struct fe_pacer *p, uint64_t rate_Bps, uint32_t bytes, uint64_t now_ns)
{
    fe_pacer_consume_inline(p, rate_Bps, bytes, now_ns);
}
