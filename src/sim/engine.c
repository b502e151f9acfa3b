/* Event queue: a 4-ary heap, or a timing wheel of 1 ns slots over a 65.5 us horizon with a heap
 * for later events. Both pop in (time, scheduling order); see engine.h (the heap's push and pop
 * are inline there; here are growth, renumbering, the wheel). */
#include "sim/engine.h"

#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"

#define SLOT_MASK (FE_EVQ_WHEEL_SLOTS - 1u)
#define NIL       UINT32_MAX

/* ---- 4-ary min-heap on key ---- */

static int heap_push(struct fe_evq_heap *h, uint64_t key, uint64_t data)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 1024;
        struct fe_ev *v = realloc(h->v, cap * sizeof(*v));
        if (!v) return FE_ENOMEM;
        h->v = v;
        h->cap = cap;
    }
    size_t i = h->n++;
    struct fe_ev *v = h->v;
    while (i > 0) {
        size_t p = (i - 1) >> 2;
        if (v[p].key <= key) break;
        v[i] = v[p];
        i = p;
    }
    v[i].key = key;
    v[i].data = data;
    return 0;
}

static void heap_pop(struct fe_evq_heap *h, struct fe_ev *out)
{
    struct fe_ev *v = h->v;
    *out = v[0];
    struct fe_ev last = v[--h->n];
    size_t n = h->n, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n) break;
        size_t best = c;
        uint64_t bk = v[c].key;
        if (c + 4 <= n) {
            /* full family: a tournament without data-dependent branches */
            size_t a = v[c + 1].key < bk ? c + 1 : c;
            size_t b = v[c + 3].key < v[c + 2].key ? c + 3 : c + 2;
            best = v[b].key < v[a].key ? b : a;
            bk = v[best].key;
        } else {
            for (size_t j = c + 1; j < n; j++) {
                if (v[j].key < bk) {
                    bk = v[j].key;
                    best = j;
                }
            }
        }
        if (last.key <= bk) break;
        v[i] = v[best];
        i = best;
    }
    v[i] = last;
}

/* ---- wheel ---- */

static inline void bit_set(struct fe_evq *q, uint32_t slot)
{
    uint32_t w = slot >> 6;
    if (!q->bm0[w]) {
        q->bm1[w >> 6] |= 1ull << (w & 63);
        q->bm2 |= 1ull << (w >> 6);
    }
    q->bm0[w] |= 1ull << (slot & 63);
}

static inline void bit_clear(struct fe_evq *q, uint32_t slot)
{
    uint32_t w = slot >> 6;
    q->bm0[w] &= ~(1ull << (slot & 63));
    if (!q->bm0[w]) {
        q->bm1[w >> 6] &= ~(1ull << (w & 63));
        if (!q->bm1[w >> 6]) q->bm2 &= ~(1ull << (w >> 6));
    }
}

/* First occupied slot >= pos, or -1. */
static int64_t find_from(const struct fe_evq *q, uint32_t pos)
{
    uint32_t w = pos >> 6;
    uint64_t bits = q->bm0[w] & (~0ull << (pos & 63));
    if (bits) return (int64_t)(w * 64 + (uint32_t)__builtin_ctzll(bits));
    uint32_t w1 = w + 1;
    if (w1 >= FE_EVQ_WHEEL_SLOTS / 64) return -1;
    uint32_t i1 = w1 >> 6;
    uint64_t b1 = q->bm1[i1] & (~0ull << (w1 & 63));
    if (!b1) {
        uint32_t i2 = i1 + 1;
        if (i2 >= FE_EVQ_WHEEL_SLOTS / 4096) return -1;
        uint64_t b2 = q->bm2 & (~0ull << i2);
        if (!b2) return -1;
        i1 = (uint32_t)__builtin_ctzll(b2);
        b1 = q->bm1[i1];
    }
    uint32_t word = i1 * 64 + (uint32_t)__builtin_ctzll(b1);
    return (int64_t)(word * 64 + (uint32_t)__builtin_ctzll(q->bm0[word]));
}

static int wheel_insert(struct fe_evq *q, uint64_t t, uint64_t data)
{
    if (q->free_node == NIL) {
        uint32_t cap = q->nodes_cap ? q->nodes_cap * 2 : 4096;
        struct fe_evq_wnode *nv = realloc(q->nodes, (size_t)cap * sizeof(*nv));
        if (!nv) return FE_ENOMEM;
        for (uint32_t i = q->nodes_cap; i < cap; i++) nv[i].next = i + 1 < cap ? i + 1 : NIL;
        q->nodes = nv;
        q->free_node = q->nodes_cap;
        q->nodes_cap = cap;
    }
    uint32_t id = q->free_node;
    q->free_node = q->nodes[id].next;
    q->nodes[id].data = data;
    q->nodes[id].next = NIL;
    uint32_t slot = (uint32_t)(t & SLOT_MASK);
    struct fe_evq_slot *sl = &q->slots[slot];
    if (sl->head == NIL) {
        sl->head = id;
        bit_set(q, slot);
    } else {
        q->nodes[sl->tail].next = id;
    }
    sl->tail = id;
    q->wheel_n++;
    return 0;
}

/* Moves far-future events that now fall inside the horizon into the wheel, in (time, seq) order
 * so that the FIFO order within a slot is kept. */
static int migrate(struct fe_evq *q)
{
    struct fe_evq_heap *h = &q->heap;
    while (h->n && (h->v[0].key >> FE_EVQ_SEQ_BITS) < q->now + FE_EVQ_WHEEL_SLOTS) {
        struct fe_ev e;
        heap_pop(h, &e);
        int rc = wheel_insert(q, e.key >> FE_EVQ_SEQ_BITS, e.data);
        if (rc) return rc;
    }
    return 0;
}

int fe_evq_init(struct fe_evq *q, enum fe_sim_queue_kind kind)
{
    memset(q, 0, sizeof(*q));
    q->kind = kind;
    q->free_node = NIL;
    if (kind == FE_SIM_EVQ_WHEEL) {
        q->slots = malloc(FE_EVQ_WHEEL_SLOTS * sizeof(*q->slots));
        q->bm0 = calloc(FE_EVQ_WHEEL_SLOTS / 64, sizeof(uint64_t));
        if (!q->slots || !q->bm0) {
            fe_evq_free(q);
            return FE_ENOMEM;
        }
        memset(q->slots, 0xff, FE_EVQ_WHEEL_SLOTS * sizeof(*q->slots));
    } else if (kind != FE_SIM_EVQ_HEAP) {
        return FE_EINVAL;
    }
    return 0;
}

void fe_evq_free(struct fe_evq *q)
{
    free(q->heap.v);
    free(q->slots);
    free(q->bm0);
    free(q->nodes);
    memset(q, 0, sizeof(*q));
}

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = ((const struct fe_ev *)a)->key, y = ((const struct fe_ev *)b)->key;
    return x < y ? -1 : x > y;
}

/* The scheduling numbers ran out: renumber the heap's events by their rank among the events of
 * the same time. Sorted, the array is still a valid heap, and the order is unchanged. */
static int renumber(struct fe_evq *q)
{
    struct fe_evq_heap *h = &q->heap;
    qsort(h->v, h->n, sizeof(*h->v), cmp_key);
    uint64_t next = 0, prev_t = FE_SIM_NO_TIME, rank = 0;
    for (size_t i = 0; i < h->n; i++) {
        uint64_t t = h->v[i].key >> FE_EVQ_SEQ_BITS;
        rank = t == prev_t ? rank + 1 : 0;
        if (rank > FE_EVQ_SEQ_MASK) return FE_ENOSPC; /* 2^20 events at one nanosecond */
        prev_t = t;
        h->v[i].key = t << FE_EVQ_SEQ_BITS | rank;
        if (rank + 1 > next) next = rank + 1;
    }
    q->seq = next;
    return 0;
}

int fe_evq_push_slow(struct fe_evq *q, uint64_t t, uint64_t data)
{
    if (t < q->now || t > FE_SIM_MAX_TIME) return FE_ERANGE;
    if (q->seq > FE_EVQ_SEQ_MASK) {
        int rc = renumber(q);
        if (rc) return rc;
        if (q->seq > FE_EVQ_SEQ_MASK) return FE_ENOSPC;
    }
    int rc;
    if (q->kind == FE_SIM_EVQ_WHEEL && t - q->now < FE_EVQ_WHEEL_SLOTS)
        rc = wheel_insert(q, t, data);
    else
        rc = heap_push(&q->heap, t << FE_EVQ_SEQ_BITS | q->seq, data);
    if (rc) return rc;
    q->seq++;
    q->n++;
    q->pushed++;
    return 0;
}

/* Pops the earliest event if its time is <= limit (one scan of the wheel's bitmap). */
bool fe_evq_pop_until_slow(struct fe_evq *q, uint64_t limit, uint64_t *t, uint64_t *data)
{
    if (!q->n) return false;
    if (q->kind == FE_SIM_EVQ_HEAP) {
        if ((q->heap.v[0].key >> FE_EVQ_SEQ_BITS) > limit) return false;
        struct fe_ev e;
        heap_pop(&q->heap, &e);
        q->now = e.key >> FE_EVQ_SEQ_BITS;
        *t = q->now;
        *data = e.data;
        q->n--;
        q->popped++;
        return true;
    }
    if (!q->wheel_n) {
        uint64_t top = q->heap.v[0].key >> FE_EVQ_SEQ_BITS;
        if (top > limit) return false;
        q->now = top;
        if (migrate(q)) return false; /* out of memory: the caller sees an empty queue */
    }
    uint32_t pos = (uint32_t)(q->now & SLOT_MASK);
    int64_t s = find_from(q, pos);
    if (s < 0) s = find_from(q, 0);
    uint32_t slot = (uint32_t)s;
    uint64_t when = q->now + ((slot - pos) & SLOT_MASK);
    if (when > limit) return false;
    struct fe_evq_slot *sl = &q->slots[slot];
    uint32_t id = sl->head;
    sl->head = q->nodes[id].next;
    if (sl->head == NIL) bit_clear(q, slot);
    *data = q->nodes[id].data;
    q->nodes[id].next = q->free_node;
    q->free_node = id;
    q->wheel_n--;
    q->now = when;
    *t = when;
    q->n--;
    q->popped++;
    if (q->heap.n) migrate(q);
    return true;
}

bool fe_evq_pop(struct fe_evq *q, uint64_t *t, uint64_t *data)
{
    return fe_evq_pop_until(q, FE_SIM_NO_TIME, t, data);
}

uint64_t fe_evq_peek(struct fe_evq *q)
{
    if (!q->n) return FE_SIM_NO_TIME;
    if (q->kind == FE_SIM_EVQ_HEAP || !q->wheel_n) return q->heap.v[0].key >> FE_EVQ_SEQ_BITS;
    uint32_t pos = (uint32_t)(q->now & SLOT_MASK);
    int64_t s = find_from(q, pos);
    if (s < 0) s = find_from(q, 0);
    return q->now + (((uint32_t)s - pos) & SLOT_MASK);
}
