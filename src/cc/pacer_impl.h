/* The pacer: the firmware's credit accumulator (token bucket) in exact integer arithmetic.
 * Credit is kept in bytes x 1e9 so that rate_Bps x elapsed_ns adds without rounding.
 *
 * Send times are whole nanoseconds, so a packet released at ceil(t) finds up to one nanosecond
 * of credit more than it needed; if the burst cap cut that excess off, a flow whose burst is one
 * packet would lose it on every packet and run up to 1 ns per packet slow (over 1 % at 100 Gb/s
 * with 1 KB packets). The cap therefore includes just under one nanosecond of credit.
 *
 * Every quantity stays inside int64: bursts and packets are below 2^32 bytes, the slack below
 * 1e15, and a debt saturates at INT64_MIN / 2. */
#ifndef FE_CC_PACER_IMPL_H
#define FE_CC_PACER_IMPL_H

#include "feroce/cc.h"

/* Inline so that the requester's per-packet path (a consume and the next release for every data
 * packet) makes no calls; pacer.c wraps them as the public fe_pacer_* functions. */

#define FE_PACER_NS_PER_S   1000000000LL
#define FE_PACER_DEBT_FLOOR (INT64_MIN / 2)
#define FE_PACER_MAX_SLACK  1000000000000000ull

static inline __attribute__((always_inline)) int64_t fe_pacer_cap(const struct fe_pacer *p,
                                                                  uint64_t rate_Bps)
{
    uint64_t slack = rate_Bps == 0 || rate_Bps == FE_CC_UNLIMITED
                         ? 0
                         : (rate_Bps < FE_PACER_MAX_SLACK ? rate_Bps : FE_PACER_MAX_SLACK) - 1;
    return (int64_t)p->burst_bytes * FE_PACER_NS_PER_S + (int64_t)slack;
}

/* Credit at now_ns when it has grown at rate_Bps since last_ns, saturating at the cap (a checked
 * multiplication instead of a division: this runs for every packet). */
static inline __attribute__((always_inline)) int64_t
fe_pacer_credit_at(const struct fe_pacer *p, uint64_t rate_Bps, uint64_t now_ns)
{
    int64_t cap = fe_pacer_cap(p, rate_Bps);
    if (p->credit >= cap || rate_Bps == FE_CC_UNLIMITED) return cap;
    if (now_ns <= p->last_ns || rate_Bps == 0) return p->credit;
    uint64_t dt = now_ns - p->last_ns;
    uint64_t room = (uint64_t)(cap - p->credit);
    uint64_t earned; /* dt x rate: an overflow or more than the room fills the bucket */
    if (__builtin_mul_overflow(dt, rate_Bps, &earned) || earned >= room) return cap;
    return p->credit + (int64_t)earned;
}

/* fe_pacer_when */
static inline __attribute__((always_inline)) uint64_t
fe_pacer_when_inline(const struct fe_pacer *p, uint64_t rate_Bps, uint32_t bytes, uint64_t now_ns)
{
    if (rate_Bps == FE_CC_UNLIMITED) return now_ns;
    if (now_ns < p->last_ns) now_ns = p->last_ns;
    /* A packet larger than the burst leaves when the bucket is full (and leaves a debt); with
     * burst 0 every packet waits until the previous one's debt is paid: strict pacing. */
    uint64_t need_bytes = bytes < p->burst_bytes ? bytes : p->burst_bytes;
    int64_t need = (int64_t)need_bytes * FE_PACER_NS_PER_S;
    int64_t c = fe_pacer_credit_at(p, rate_Bps, now_ns);
    if (c >= need) return now_ns;
    if (rate_Bps == 0) return FE_CC_NO_TIMER; /* never */
    uint64_t deficit = (uint64_t)(need - c);
    uint64_t wait = deficit / rate_Bps + (deficit % rate_Bps != 0);
    return wait > UINT64_MAX - now_ns ? UINT64_MAX : now_ns + wait;
}

/* fe_pacer_when from the last update (now_ns = p->last_ns), as the requester asks: the credit
 * has not grown since, and the cap needs no look, since it is at least the burst and so at
 * least what the packet needs (a capped credit covers it too). */
static inline __attribute__((always_inline)) uint64_t
fe_pacer_when_from_last_inline(const struct fe_pacer *p, uint64_t rate_Bps, uint32_t bytes)
{
    uint64_t now_ns = p->last_ns;
    if (rate_Bps == FE_CC_UNLIMITED) return now_ns;
    uint64_t need_bytes = bytes < p->burst_bytes ? bytes : p->burst_bytes;
    int64_t need = (int64_t)need_bytes * FE_PACER_NS_PER_S;
    if (p->credit >= need) return now_ns;
    if (rate_Bps == 0) return FE_CC_NO_TIMER; /* never */
    uint64_t deficit = (uint64_t)(need - p->credit);
    uint64_t wait = deficit / rate_Bps + (deficit % rate_Bps != 0);
    return wait > UINT64_MAX - now_ns ? UINT64_MAX : now_ns + wait;
}

/* fe_pacer_sync */
static inline __attribute__((always_inline)) void
fe_pacer_sync_inline(struct fe_pacer *p, uint64_t rate_Bps, uint64_t now_ns)
{
    p->credit = fe_pacer_credit_at(p, rate_Bps, now_ns);
    if (now_ns > p->last_ns) p->last_ns = now_ns;
}

/* fe_pacer_consume */
static inline __attribute__((always_inline)) void
fe_pacer_consume_inline(struct fe_pacer *p, uint64_t rate_Bps, uint32_t bytes, uint64_t now_ns)
{
    fe_pacer_sync_inline(p, rate_Bps, now_ns);
    int64_t take = (int64_t)bytes * FE_PACER_NS_PER_S;
    p->credit = p->credit - FE_PACER_DEBT_FLOOR < take ? FE_PACER_DEBT_FLOOR : p->credit - take;
}

#endif
