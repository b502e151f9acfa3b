/* Discrete-event queue of the simulator: integer nanoseconds, FIFO among events of the same time,
 * deterministic. Two interchangeable implementations, measured by `feroce bench sim`: a 4-ary
 * heap (the simulator's default: its push and pop are inline, a few dozen instructions with the
 * tens to thousands of pending events a fabric has) and a timing wheel of 1 ns slots with a heap
 * for the far future. An event is a time and a 64-bit word (the simulator packs an aligned object
 * pointer and a 4-bit kind into it).
 *
 * Heap keys are time << 20 | a scheduling number: one 64-bit comparison orders by time, then
 * FIFO. When the 20-bit number runs out, the pending events are renumbered by their rank among
 * the events of the same time (kept in order), so FIFO holds over any run length. */
#ifndef FE_SIM_ENGINE_H
#define FE_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/sim.h"

#define FE_EVQ_SEQ_BITS    20
#define FE_EVQ_SEQ_MASK    ((UINT64_C(1) << FE_EVQ_SEQ_BITS) - 1)
#define FE_EVQ_WHEEL_BITS  16
#define FE_EVQ_WHEEL_SLOTS (1u << FE_EVQ_WHEEL_BITS)

struct fe_ev {
    uint64_t key; /* time << FE_EVQ_SEQ_BITS | sequence */
    uint64_t data;
};

struct fe_evq_heap {
    struct fe_ev *v;
    size_t n, cap;
};

struct fe_evq_wnode {
    uint64_t data;
    uint32_t next;
};

struct fe_evq {
    enum fe_sim_queue_kind kind;
    uint64_t now; /* time of the last popped event */
    uint64_t seq; /* next scheduling number (heap keys), <= FE_EVQ_SEQ_MASK + 1 */
    size_t n;     /* pending events */
    uint64_t pushed, popped;
    struct fe_evq_heap heap; /* the heap, or the wheel's far-future overflow */
    /* wheel: slot i holds the events of the one time t in [now, now + slots) with t % slots == i */
    struct fe_evq_slot {
        uint32_t head, tail;
    } * slots;
    uint64_t *bm0;                           /* a bit per slot */
    uint64_t bm1[FE_EVQ_WHEEL_SLOTS / 4096]; /* a bit per bm0 word */
    uint64_t bm2;                            /* a bit per bm1 word */
    struct fe_evq_wnode *nodes;
    uint32_t nodes_cap, free_node;
    size_t wheel_n;
};

int fe_evq_init(struct fe_evq *q, enum fe_sim_queue_kind kind);
void fe_evq_free(struct fe_evq *q);
/* The general cases of fe_evq_push and fe_evq_pop_until (wheel, growth, renumbering, errors). */
int fe_evq_push_slow(struct fe_evq *q, uint64_t t, uint64_t data);
bool fe_evq_pop_until_slow(struct fe_evq *q, uint64_t limit, uint64_t *t, uint64_t *data);

/* t >= the time of the last popped event and t <= FE_SIM_MAX_TIME, else FE_ERANGE. */
static inline int fe_evq_push(struct fe_evq *q, uint64_t t, uint64_t data)
{
    struct fe_evq_heap *h = &q->heap;
    if (q->kind != FE_SIM_EVQ_HEAP || h->n == h->cap || q->seq > FE_EVQ_SEQ_MASK || t < q->now ||
        t > FE_SIM_MAX_TIME)
        return fe_evq_push_slow(q, t, data);
    uint64_t key = t << FE_EVQ_SEQ_BITS | q->seq++;
    struct fe_ev *v = h->v;
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) >> 2;
        if (v[p].key <= key) break;
        v[i] = v[p];
        i = p;
    }
    v[i].key = key;
    v[i].data = data;
    q->n++;
    q->pushed++;
    return 0;
}

/* Pops the earliest event if its time is <= limit; false otherwise (or when empty). Advances
 * q->now to its time. */
static inline bool fe_evq_pop_until(struct fe_evq *q, uint64_t limit, uint64_t *t, uint64_t *data)
{
    if (q->kind != FE_SIM_EVQ_HEAP) return fe_evq_pop_until_slow(q, limit, t, data);
    struct fe_evq_heap *h = &q->heap;
    if (!h->n) return false;
    struct fe_ev *v = h->v;
    uint64_t when = v[0].key >> FE_EVQ_SEQ_BITS;
    if (when > limit) return false;
    *t = q->now = when;
    *data = v[0].data;
    q->n--;
    q->popped++;
    size_t n = --h->n;
    if (!n) return true;
    /* sift the last entry down from the root */
    struct fe_ev last = v[n];
    size_t i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c + 4 <= n) {
            /* full family: a tournament */
            size_t a = v[c + 1].key < v[c].key ? c + 1 : c;
            size_t b = v[c + 3].key < v[c + 2].key ? c + 3 : c + 2;
            c = v[b].key < v[a].key ? b : a;
        } else {
            if (c >= n) break;
            for (size_t j = c + 1; j < n; j++)
                if (v[j].key < v[c].key) c = j;
        }
        if (last.key <= v[c].key) break;
        v[i] = v[c];
        i = c;
    }
    v[i] = last;
    return true;
}
/* Pops the earliest event; false when empty. */
bool fe_evq_pop(struct fe_evq *q, uint64_t *t, uint64_t *data);
/* Time of the earliest pending event, FE_SIM_NO_TIME when empty. */
uint64_t fe_evq_peek(struct fe_evq *q);
static inline size_t fe_evq_size(const struct fe_evq *q)
{
    return q->n;
}

#endif
