/* Discrete-event queue of the simulator: integer nanoseconds, FIFO among events of the same time,
 * deterministic. Three interchangeable implementations that pop in the same order, measured by
 * `feroce bench sim`:
 *  - a calendar queue (the simulator's choice below 256 ports): a ring of buckets 2^k ns wide,
 *    each a list in key order whose first event is kept in the bucket, a bitmap of the occupied
 *    ones, and the heap for events beyond the ring's horizon (moved in as it advances). Push and
 *    pop are inline and cost the same at any size; the width k follows the workload (cal_adapt);
 *  - a 4-ary heap (push and pop inline, log(n));
 *  - a timing wheel of 1 ns slots with a heap for the far future, one event per frame and no
 *    keys (the choice for larger fabrics, whose many events of the same nanosecond it files at
 *    their slot's tail).
 * An event is a time and a 64-bit word (the simulator packs an aligned object pointer and a
 * 4-bit kind into it).
 *
 * A heap pop leaves the popped entry at the root: the push that usually follows in the same event
 * takes its place with one sift-down (instead of a sift-down to fill the root and a sift-up).
 *
 * Keys (heap, calendar) are time << 20 | a scheduling number: one 64-bit comparison orders by
 * time, then FIFO. When the 20-bit number runs out, the pending events are renumbered by their
 * rank among the events of the same time (kept in order), so FIFO holds over any run length.
 *
 * A caller that keeps events in FIFOs of its own (the simulator: the frames on a link arrive in
 * the order they were sent) takes a key for each when it schedules it (fe_evq_key) and pushes
 * only the head of each FIFO (fe_evq_push_key, heap and calendar): the queue stays small and the
 * events pop exactly as if all had been pushed. Such a caller lists the keys it holds, for the
 * renumbering, from the function it gives to fe_evq_set_keys_fn. */
#ifndef FE_SIM_ENGINE_H
#define FE_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/err.h"
#include "feroce/sim.h"

#define FE_EVQ_SEQ_BITS    20
#define FE_EVQ_SEQ_MASK    ((UINT64_C(1) << FE_EVQ_SEQ_BITS) - 1)
#define FE_EVQ_WHEEL_BITS  16
#define FE_EVQ_WHEEL_SLOTS (1u << FE_EVQ_WHEEL_BITS)

/* keys and data in separate arrays: a family of four keys is 32 contiguous bytes */
struct fe_evq_heap {
    uint64_t *key; /* time << FE_EVQ_SEQ_BITS | scheduling number */
    uint64_t *data;
    size_t n, cap;
};

struct fe_evq_wnode {
    uint64_t data;
    uint32_t next;
    uint32_t rank; /* an arrival's (fe_evq_push_arrival) */
};

/* Calendar queue: a bucket's first event is kept in place (most buckets hold one: a push and a
 * pop touch one line), the others in a list of nodes in key order */
struct fe_evq_cnode {
    uint64_t key, data;
    uint32_t next;
};
struct fe_evq_bucket {
    uint64_t key, data;  /* the first event (when the bucket's bit is set) */
    uint32_t head, tail; /* the events after it, FE_EVQ_NIL when none */
};

#define FE_EVQ_NIL       UINT32_MAX
#define FE_EVQ_FIFO_RANK UINT32_MAX
/* above every rank (< FE_EVQ_RANKS_MAX): an out-of-order arrival keeps a slot's arank there */
#define FE_EVQ_UNSORTED (UINT32_MAX - 1)

/* The hot paths are inlined at every call site (else the compiler may keep one out-of-line
 * copy, whose call and saved registers cost as much as the work) */
#define FE_EVQ_HOT               static inline __attribute__((always_inline))
#define FE_EVQ_CAL_BITS_MAX      16
#define FE_EVQ_CAL_BITS_DEFAULT  12
#define FE_EVQ_CAL_SHIFT_DEFAULT 4

struct fe_evq;
/* Lists the keys a caller holds: calls fe_evq_renumber_key for each. */
typedef void (*fe_evq_keys_fn)(void *user, struct fe_evq *q);

struct fe_evq {
    enum fe_sim_queue_kind kind;
    uint64_t now; /* time of the last popped event */
    /* heap, calendar: the key of the last popped event, its place among those of its time (a
     * caller compares the keys it took with it; renumbered with them): see
     * fe_evq_pop_until_track */
    uint64_t last_key;
    uint64_t seq; /* next scheduling number (heap keys), <= FE_EVQ_SEQ_MASK + 1 */
    /* keys' low bits below it are ranks of arrivals (fe_evq_arrival_key), from it on
     * scheduling numbers (fe_evq_set_ranks) */
    uint64_t fifo_base;
    size_t n; /* pending events */
    uint64_t pushed, popped;
    /* heap: the root is the event popped last, still in place: the next push takes its slot (one
     * sift-down instead of a sift-down and a sift-up), the next pop removes it first */
    bool root_popped;
    struct fe_evq_heap heap; /* the heap, or the wheel's far-future overflow */
    /* wheel: slot i holds the events of the one time t in [now, now + slots) with t % slots == i:
     * the arrivals (fe_evq_push_arrival) in rank order, then the others in the order of their
     * pushes. Its first event lives in the slot itself (most slots hold one: a pop reads one
     * line), with its rank (FE_EVQ_FIFO_RANK: not an arrival; a slot holding an arrival has one
     * first; only kept until the slot's time begins); the others in a list of nodes, the arrivals'
     * first (up to atail). Arrivals are appended as they come and, when one came out of rank order
     * (arank), put in order once, when the slot's time comes (a time begun takes no more): many
     * ports receive at the same nanosecond in a synchronised fabric, and one sort of a slot costs
     * less than placing each arrival in a list. bm0's bit says whether the slot holds an event. */
    struct fe_evq_slot {
        uint64_t first;
        uint32_t first_rank;
        uint32_t head, tail; /* the events after the first, UINT32_MAX when none */
        /* the last arrival of that list, UINT32_MAX when none (a time begun takes no more) */
        uint32_t atail;
        /* the rank of the last arrival filed, FE_EVQ_UNSORTED once one came after a higher
         * rank (then the slot is sorted before its first pop) */
        uint32_t arank;
    } * slots;
    /* wheel, sorting a slot's arrivals (fe_evq_wheel_sort): a bit per rank (all clear between
     * sorts), the node of each rank, fifo_base of them (fe_evq_set_ranks); a bit of the
     * summary word stands for 2^rank_sum_shift words of rank_bm */
    uint64_t *rank_bm;
    uint32_t *rank_node;
    unsigned rank_sum_shift;
    uint64_t rank_sum_all; /* the summary of every word, when there are few (else 0) */
    uint64_t *bm0;         /* a bit per slot */
    uint64_t bm1[FE_EVQ_WHEEL_SLOTS / 4096]; /* a bit per bm0 word */
    uint64_t bm2;                            /* a bit per bm1 word */
    struct fe_evq_wnode *nodes;
    uint32_t nodes_cap, free_node;
    size_t wheel_n;
    /* calendar: the events of bucket b = time >> cal_shift (absolute number) are at ring position
     * b & cal_mask while b - cal_cur <= cal_mask; later events wait in the heap (its earliest
     * bucket: far_bucket, UINT64_MAX when empty) and move in as the horizon reaches them. Within
     * a bucket, events are in key order. cal_cur is the bucket of now when the pop last left a
     * bitmap word (the inline pop stays within one and leaves cal_cur alone). */
    unsigned cal_shift, cal_key_shift; /* bucket width 2^cal_shift ns; cal_shift + SEQ_BITS */
    uint32_t cal_mask;                 /* buckets - 1 */
    uint64_t cal_cur, far_bucket;
    struct fe_evq_bucket *bucket;
    uint64_t *cbm; /* a bit per occupied bucket */
    struct fe_evq_cnode *cnode;
    uint32_t cnode_cap, cnode_free;
    uint64_t cal_cost_narrow, cal_cost_wide; /* see cal_adapt */
    bool failed; /* out of memory while moving events in: see fe_evq_failed */
    /* renumbering */
    fe_evq_keys_fn keys_fn;
    void *keys_user;
    uint64_t **ren;
    size_t ren_n, ren_cap;
    bool ren_fail;
};

int fe_evq_init(struct fe_evq *q, enum fe_sim_queue_kind kind);
void fe_evq_free(struct fe_evq *q);
/* The general cases of the inline functions below (wheel, growth, renumbering, errors). */
int fe_evq_push_slow(struct fe_evq *q, uint64_t t, uint64_t data);
int fe_evq_key_slow(struct fe_evq *q, uint64_t t, uint64_t *key);
int fe_evq_grow(struct fe_evq *q);
bool fe_evq_pop_until_slow(struct fe_evq *q, uint64_t limit, uint64_t *t, uint64_t *data);
int fe_evq_migrate(struct fe_evq *q); /* wheel, calendar: far events now inside the horizon, in */
/* Calendar: an event beyond the horizon; an event for an occupied bucket. */
int fe_evq_cal_push_far(struct fe_evq *q, uint64_t key, uint64_t data);
int fe_evq_cal_push_more(struct fe_evq *q, struct fe_evq_bucket *bk, uint64_t key, uint64_t data);
/* Calendar: 2^bits buckets (7..FE_EVQ_CAL_BITS_MAX) of 2^shift ns; pending events are kept. */
int fe_evq_cal_configure(struct fe_evq *q, unsigned bits, unsigned shift);
/* The caller's keys (see above): fn lists them when the queue renumbers. */
void fe_evq_set_keys_fn(struct fe_evq *q, fe_evq_keys_fn fn, void *user);
void fe_evq_renumber_key(struct fe_evq *q, uint64_t *key);

/* Ranks 0 .. n-1 are reserved for arrivals (fe_evq_arrival_key): scheduling numbers start at
 * n. Before any event is pushed; n <= FE_EVQ_RANKS_MAX, else FE_ERANGE. */
#define FE_EVQ_RANKS_MAX (UINT64_C(1) << (FE_EVQ_SEQ_BITS - 1))
int fe_evq_set_ranks(struct fe_evq *q, uint64_t n);

/* A key for an event at t (its place in the order is now), for fe_evq_push_key. t >= the time
 * of the last popped event and t <= FE_SIM_MAX_TIME, else FE_ERANGE. */
FE_EVQ_HOT int fe_evq_key(struct fe_evq *q, uint64_t t, uint64_t *key)
{
    if (q->seq > FE_EVQ_SEQ_MASK || t < q->now || t > FE_SIM_MAX_TIME) {
        uint64_t k = 0; /* the caller's key, whose address does not escape, stays in a register */
        int rc = fe_evq_key_slow(q, t, &k);
        *key = k;
        return rc;
    }
    *key = t << FE_EVQ_SEQ_BITS | q->seq++;
    return 0;
}

/* A key for an arrival at t of rank `rank` (< the n of fe_evq_set_ranks): it comes before every
 * other event of t, and among the arrivals of t in rank order (equal ranks: the same object,
 * any order). An arrival for the time of the last popped event (whose events have begun), or
 * of a rank not reserved (none are: arrivals in FIFO order), takes a scheduling number
 * instead, like any other event. */
FE_EVQ_HOT int fe_evq_arrival_key(struct fe_evq *q, uint64_t t, uint64_t rank, uint64_t *key)
{
    if (__builtin_expect(t <= q->now || rank >= q->fifo_base || t > FE_SIM_MAX_TIME, 0))
        return fe_evq_key(q, t, key);
    *key = t << FE_EVQ_SEQ_BITS | rank;
    return 0;
}

/* 4-ary heap: puts (key, data) at free slot i and sifts it up to its place. */
static inline void fe_evq_heap_place(uint64_t *k, uint64_t *d, size_t i, uint64_t key,
                                     uint64_t data)
{
    while (i > 0) {
        size_t p = (i - 1) >> 2;
        if (k[p] <= key) break;
        k[i] = k[p];
        d[i] = d[p];
        i = p;
    }
    k[i] = key;
    d[i] = data;
}

/* 4-ary heap of n entries whose root slot is free: puts (key, data) there and sifts it down. */
static inline void fe_evq_heap_sift_down(uint64_t *k, uint64_t *d, size_t n, uint64_t key,
                                         uint64_t data)
{
    size_t i = 0;
    for (;;) {
        size_t c = 4 * i + 1, m;
        uint64_t km;
        if (c + 4 <= n) {
            /* full family: a tournament by index arithmetic (no branch to mispredict) */
            size_t a = c + (k[c + 1] < k[c]);
            size_t b = c + 2 + (k[c + 3] < k[c + 2]);
            m = a ^ ((a ^ b) & ((size_t)0 - (size_t)(k[b] < k[a])));
            km = k[m];
        } else {
            if (c >= n) break;
            m = c;
            km = k[c];
            for (size_t j = c + 1; j < n; j++)
                if (k[j] < km) km = k[m = j];
        }
        if (key <= km) break;
        k[i] = km;
        d[i] = d[m];
        i = m;
    }
    k[i] = key;
    d[i] = data;
}

/* Heap: removes the root left in place by the last pop (root_popped). */
static inline void fe_evq_settle(struct fe_evq *q)
{
    struct fe_evq_heap *h = &q->heap;
    if (!q->root_popped) return;
    q->root_popped = false;
    size_t n = --h->n;
    if (n) fe_evq_heap_sift_down(h->key, h->data, n, h->key[n], h->data[n]);
}

/* Calendar: a pop took a bucket's first event and more follow: the next one moves into place. */
FE_EVQ_HOT void fe_evq_cal_take_next(struct fe_evq *q, struct fe_evq_bucket *bk)
{
    uint32_t id = bk->head;
    struct fe_evq_cnode *nd = &q->cnode[id];
    bk->key = nd->key;
    bk->data = nd->data;
    bk->head = nd->next;
    nd->next = q->cnode_free;
    q->cnode_free = id;
}

/* Pushes an event with a key from fe_evq_key (its time not before the last popped event's).
 * Heap and calendar (FE_ENOTSUP on the wheel). */
FE_EVQ_HOT int fe_evq_push_key(struct fe_evq *q, uint64_t key, uint64_t data)
{
    if (q->kind == FE_SIM_EVQ_CALENDAR) {
        /* the usual case inline: an empty bucket inside the horizon takes the event in place */
        uint64_t b = key >> q->cal_key_shift;
        uint32_t slot = (uint32_t)b & q->cal_mask;
        uint64_t bit = UINT64_C(1) << (slot & 63), *word = &q->cbm[slot >> 6];
        struct fe_evq_bucket *bk = &q->bucket[slot];
        if (b - q->cal_cur > q->cal_mask) return fe_evq_cal_push_far(q, key, data);
        if (*word & bit) return fe_evq_cal_push_more(q, bk, key, data);
        *word |= bit;
        bk->key = key;
        bk->data = data;
        q->n++;
        return 0;
    }
    struct fe_evq_heap *h = &q->heap;
    if (q->kind != FE_SIM_EVQ_HEAP) return FE_ENOTSUP;
    if (q->root_popped) {
        q->root_popped = false;
        fe_evq_heap_sift_down(h->key, h->data, h->n, key, data);
    } else {
        if (h->n == h->cap && fe_evq_grow(q)) return FE_ENOMEM;
        fe_evq_heap_place(h->key, h->data, h->n++, key, data);
    }
    q->n++;
    q->pushed++;
    return 0;
}

/* Wheel: whether a slot holds an event; marks it occupied in the bitmaps. */
static inline bool fe_evq_wheel_used(const struct fe_evq *q, uint32_t slot)
{
    return q->bm0[slot >> 6] >> (slot & 63) & 1;
}
static inline void fe_evq_wheel_mark(struct fe_evq *q, uint32_t slot)
{
    uint32_t w = slot >> 6;
    if (!q->bm0[w]) {
        q->bm1[w >> 6] |= UINT64_C(1) << (w & 63);
        q->bm2 |= UINT64_C(1) << (w >> 6);
    }
    q->bm0[w] |= UINT64_C(1) << (slot & 63);
}

/* Wheel: a node for (data, rank), taken from the free list (a free node must be at hand); the
 * caller sets its next. */
static inline uint32_t fe_evq_wheel_node(struct fe_evq *q, uint64_t data, uint32_t rank)
{
    struct fe_evq_wnode *nd = q->nodes;
    uint32_t id = q->free_node;
    q->free_node = nd[id].next;
    nd[id].data = data;
    nd[id].rank = rank;
    return id;
}

/* Wheel: appends an event that is not an arrival to a slot (a free node must be at hand). */
static inline void fe_evq_wheel_file(struct fe_evq *q, uint32_t slot, uint64_t data)
{
    struct fe_evq_slot *sl = &q->slots[slot];
    if (!fe_evq_wheel_used(q, slot)) {
        fe_evq_wheel_mark(q, slot);
        sl->first = data;
        sl->first_rank = FE_EVQ_FIFO_RANK;
        sl->arank = 0;
    } else {
        uint32_t id = fe_evq_wheel_node(q, data, FE_EVQ_FIFO_RANK);
        q->nodes[id].next = FE_EVQ_NIL;
        if (sl->head == FE_EVQ_NIL)
            sl->head = id;
        else
            q->nodes[sl->tail].next = id;
        sl->tail = id;
    }
    q->wheel_n++;
}

/* Wheel: files an arrival of rank `rank` (< fifo_base) into a slot whose time has not begun,
 * after its other arrivals (a free node must be at hand). A first event that is no arrival
 * moves to the head of the list: the arrival takes its place. */
FE_EVQ_HOT void fe_evq_wheel_file_arrival(struct fe_evq *q, uint32_t slot, uint32_t rank,
                                          uint64_t data)
{
    struct fe_evq_slot *sl = &q->slots[slot];
    struct fe_evq_wnode *nd = q->nodes;
    q->wheel_n++;
    if (!fe_evq_wheel_used(q, slot)) {
        fe_evq_wheel_mark(q, slot);
    } else if (__builtin_expect(sl->first_rank != FE_EVQ_FIFO_RANK, 1)) {
        uint32_t id = fe_evq_wheel_node(q, data, rank), after;
        if (sl->atail == FE_EVQ_NIL) {
            after = sl->head;
            sl->head = id;
        } else {
            after = nd[sl->atail].next;
            nd[sl->atail].next = id;
        }
        nd[id].next = after;
        if (after == FE_EVQ_NIL) sl->tail = id;
        sl->atail = id;
        sl->arank = rank < sl->arank ? FE_EVQ_UNSORTED : rank;
        return;
    } else {
        uint32_t id = fe_evq_wheel_node(q, sl->first, FE_EVQ_FIFO_RANK);
        nd[id].next = sl->head;
        if (sl->head == FE_EVQ_NIL) sl->tail = id;
        sl->head = id;
    }
    sl->first = data;
    sl->first_rank = rank;
    sl->atail = FE_EVQ_NIL;
    sl->arank = rank;
}

/* Wheel: puts a slot's arrivals in rank order (the first event included). */
void fe_evq_wheel_sort(struct fe_evq *q, struct fe_evq_slot *sl);

/* Wheel: removes and returns the first event of an occupied slot; the next takes its place. */
static inline uint64_t fe_evq_wheel_take(struct fe_evq *q, uint32_t slot)
{
    struct fe_evq_slot *sl = &q->slots[slot];
    if (__builtin_expect(sl->arank == FE_EVQ_UNSORTED, 0)) fe_evq_wheel_sort(q, sl);
    uint64_t data = sl->first;
    uint32_t id = sl->head;
    q->wheel_n--;
    if (id == FE_EVQ_NIL) {
        uint32_t w = slot >> 6;
        q->bm0[w] &= ~(UINT64_C(1) << (slot & 63));
        if (!q->bm0[w]) {
            q->bm1[w >> 6] &= ~(UINT64_C(1) << (w & 63));
            if (!q->bm1[w >> 6]) q->bm2 &= ~(UINT64_C(1) << (w >> 6));
        }
        return data;
    }
    struct fe_evq_wnode *nd = &q->nodes[id];
    sl->head = nd->next;
    sl->first = nd->data; /* first_rank stays: a time begun takes no arrival that reads it */
    nd->next = q->free_node;
    q->free_node = id;
    return data;
}

/* t >= the time of the last popped event and t <= FE_SIM_MAX_TIME, else FE_ERANGE. */
FE_EVQ_HOT int fe_evq_push(struct fe_evq *q, uint64_t t, uint64_t data)
{
    uint64_t key;
    if (q->kind == FE_SIM_EVQ_CALENDAR) {
        int rc = fe_evq_key(q, t, &key);
        return rc ? rc : fe_evq_push_key(q, key, data);
    }
    if (q->kind == FE_SIM_EVQ_WHEEL) {
        if (t < q->now || t - q->now >= FE_EVQ_WHEEL_SLOTS || t > FE_SIM_MAX_TIME ||
            q->free_node == UINT32_MAX)
            return fe_evq_push_slow(q, t, data);
        /* inside the horizon with a free node: append to the slot of t (wheel_insert) */
        fe_evq_wheel_file(q, (uint32_t)(t & (FE_EVQ_WHEEL_SLOTS - 1u)), data);
        q->n++;
        q->pushed++;
        return 0;
    }
    int rc = fe_evq_key(q, t, &key);
    if (rc) return rc;
    return fe_evq_push_key(q, key, data);
}

/* An arrival at t of rank `rank` (see fe_evq_arrival_key): before the other events of t, in rank
 * order. Every kind of queue. */
int fe_evq_push_arrival_slow(struct fe_evq *q, uint64_t t, uint64_t rank, uint64_t data);
FE_EVQ_HOT int fe_evq_push_arrival(struct fe_evq *q, uint64_t t, uint64_t rank, uint64_t data)
{
    if (q->kind != FE_SIM_EVQ_WHEEL) {
        uint64_t key;
        int rc = fe_evq_arrival_key(q, t, rank, &key);
        return rc ? rc : fe_evq_push_key(q, key, data);
    }
    /* the usual case inline: a later time inside the horizon, a ranked port, a free node */
    if (t <= q->now || t - q->now >= FE_EVQ_WHEEL_SLOTS || t > FE_SIM_MAX_TIME ||
        rank >= q->fifo_base || q->free_node == FE_EVQ_NIL)
        return fe_evq_push_arrival_slow(q, t, rank, data);
    fe_evq_wheel_file_arrival(q, (uint32_t)(t & (FE_EVQ_WHEEL_SLOTS - 1u)), (uint32_t)rank, data);
    q->n++;
    q->pushed++;
    return 0;
}

/* fe_evq_pop_until_slow through locals of its own: the caller's t and data, whose addresses do
 * not escape, can stay in registers across its loop. */
FE_EVQ_HOT bool fe_evq_pop_until_call(struct fe_evq *q, uint64_t limit, uint64_t *t, uint64_t *data)
{
    uint64_t t1, data1;
    if (!fe_evq_pop_until_slow(q, limit, &t1, &data1)) return false;
    *t = t1;
    *data = data1;
    return true;
}

/* Pops the earliest event if its time is <= limit; false otherwise (or when empty). Advances
 * q->now to its time, and sets q->last_key (heap, calendar) when `track` (a constant at each
 * call: the usual pop does not pay for it) or the pop takes a slow path. */
FE_EVQ_HOT bool fe_evq_pop_until_track(struct fe_evq *q, uint64_t limit, uint64_t *t,
                                       uint64_t *data, bool track)
{
    if (q->kind == FE_SIM_EVQ_CALENDAR) {
        /* the usual case inline: the next event in the bitmap word of the current bucket */
        uint32_t pos = (uint32_t)q->cal_cur & q->cal_mask;
        uint64_t *word = &q->cbm[pos >> 6], bits = *word & (~UINT64_C(0) << (pos & 63));
        if (!bits) return fe_evq_pop_until_call(q, limit, t, data);
        unsigned bit = (unsigned)__builtin_ctzll(bits);
        struct fe_evq_bucket *bk = &q->bucket[(pos & ~63u) + bit];
        uint64_t key = bk->key, when = key >> FE_EVQ_SEQ_BITS;
        if (when > limit) return false;
        if (track) q->last_key = key;
        *data = bk->data;
        if (__builtin_expect(bk->head == FE_EVQ_NIL, 1)) /* most buckets hold one event */
            *word &= ~(UINT64_C(1) << bit);
        else
            fe_evq_cal_take_next(q, bk);
        *t = q->now = when; /* cal_cur stays: the slow path catches up when it leaves the word */
        q->n--;
        return true;
    }
    if (q->kind == FE_SIM_EVQ_WHEEL) {
        /* the usual case inline: the next event in the bitmap word of the current time */
        uint32_t pos = (uint32_t)(q->now & (FE_EVQ_WHEEL_SLOTS - 1u)), w = pos >> 6;
        uint64_t bits = q->wheel_n ? q->bm0[w] & (~UINT64_C(0) << (pos & 63)) : 0;
        if (!bits) return fe_evq_pop_until_call(q, limit, t, data);
        uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(bits);
        uint64_t when = q->now + (slot - pos);
        if (when > limit) return false;
        *data = fe_evq_wheel_take(q, slot);
        q->now = when;
        *t = when;
        q->n--;
        q->popped++;
        if (q->heap.n && (q->heap.key[0] >> FE_EVQ_SEQ_BITS) < q->now + FE_EVQ_WHEEL_SLOTS)
            fe_evq_migrate(q);
        return true;
    }
    struct fe_evq_heap *h = &q->heap;
    fe_evq_settle(q);
    if (!h->n) return false;
    uint64_t when = h->key[0] >> FE_EVQ_SEQ_BITS;
    if (when > limit) return false;
    if (track) q->last_key = h->key[0];
    *t = q->now = when;
    *data = h->data[0];
    q->n--;
    q->popped++;
    q->root_popped = true; /* removed by the next push or pop */
    return true;
}
FE_EVQ_HOT bool fe_evq_pop_until(struct fe_evq *q, uint64_t limit, uint64_t *t, uint64_t *data)
{
    return fe_evq_pop_until_track(q, limit, t, data, false);
}
/* Pops the earliest event; false when empty. */
bool fe_evq_pop(struct fe_evq *q, uint64_t *t, uint64_t *data);
/* Time of the earliest pending event, FE_SIM_NO_TIME when empty. */
uint64_t fe_evq_peek(struct fe_evq *q);
static inline size_t fe_evq_size(const struct fe_evq *q)
{
    return q->n;
}
/* Calendar: true when memory ran out while moving events in (the pops then find nothing). */
static inline bool fe_evq_failed(const struct fe_evq *q)
{
    return q->failed;
}

#endif
