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

static int heap_grow(struct fe_evq_heap *h)
{
    size_t cap = h->cap ? h->cap * 2 : 1024;
    uint64_t *k = realloc(h->key, cap * sizeof(*k));
    if (!k) return FE_ENOMEM;
    h->key = k;
    uint64_t *d = realloc(h->data, cap * sizeof(*d));
    if (!d) return FE_ENOMEM;
    h->data = d;
    h->cap = cap;
    return 0;
}

static int heap_push(struct fe_evq_heap *h, uint64_t key, uint64_t data)
{
    if (h->n == h->cap && heap_grow(h)) return FE_ENOMEM;
    fe_evq_heap_place(h->key, h->data, h->n++, key, data);
    return 0;
}

static void heap_pop(struct fe_evq_heap *h, uint64_t *key, uint64_t *data)
{
    *key = h->key[0];
    *data = h->data[0];
    size_t n = --h->n;
    if (n) fe_evq_heap_sift_down(h->key, h->data, n, h->key[n], h->data[n]);
}

/* ---- wheel ---- */

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

static int wheel_node_ready(struct fe_evq *q)
{
    if (q->free_node != NIL) return 0;
    uint32_t cap = q->nodes_cap ? q->nodes_cap * 2 : 4096;
    if (cap <= q->nodes_cap) return FE_ENOMEM; /* 2^32 nodes */
    struct fe_evq_wnode *nv = realloc(q->nodes, (size_t)cap * sizeof(*nv));
    if (!nv) return FE_ENOMEM;
    for (uint32_t i = q->nodes_cap; i < cap; i++) nv[i].next = i + 1 < cap ? i + 1 : NIL;
    q->nodes = nv;
    q->free_node = q->nodes_cap;
    q->nodes_cap = cap;
    return 0;
}

static int wheel_insert(struct fe_evq *q, uint64_t t, uint64_t data)
{
    if (wheel_node_ready(q)) return FE_ENOMEM;
    fe_evq_wheel_file(q, (uint32_t)(t & SLOT_MASK), data);
    return 0;
}

/* Files an arrival of rank r (< fifo_base) into its slot (sorted when its time comes if it
 * came out of order: fe_evq_wheel_sort). */
static int wheel_insert_arrival(struct fe_evq *q, uint64_t t, uint32_t r, uint64_t data)
{
    if (wheel_node_ready(q)) return FE_ENOMEM;
    fe_evq_wheel_file_arrival(q, (uint32_t)(t & SLOT_MASK), r, data);
    return 0;
}

/* Sorting a slot's arrivals by a bit per rank: each node's rank sets its bit (and keeps the
 * node), the set bits are read back in order. Linear in the arrivals (plus the words of bits
 * the summary names), where a comparison sort of the tens of arrivals of a nanosecond at which
 * a whole synchronised fabric receives is quadratic, or n log n. Two nodes of one rank (one
 * port's frames in one nanosecond: rare) take a stable list sort instead. */

/* fewer arrivals than this in a slot: rank_list_sort, whose cost grows as their square */
#define RANK_LIST_SORT_MAX 8

/* Clears the words of rank bits a summary names. */
static void rank_bits_clear(struct fe_evq *q, uint64_t sum)
{
    for (; sum; sum &= sum - 1) {
        uint32_t w0 = (uint32_t)__builtin_ctzll(sum) << q->rank_sum_shift;
        memset(q->rank_bm + w0, 0, sizeof(*q->rank_bm) << q->rank_sum_shift);
    }
}

/* Sets the bits of the ranks of the list from id (NIL-terminated) and returns their summary
 * (with `all`, a few words of bits, every word's: cheaper to scan than to note), or 0 with
 * every bit clear when two nodes share a rank. */
static inline __attribute__((always_inline)) uint64_t rank_bits_set_as(struct fe_evq *q,
                                                                       uint32_t id, bool all)
{
    const struct fe_evq_wnode *nd = q->nodes;
    uint64_t *bm = q->rank_bm, sum = 0, shared = 0;
    uint32_t *node = q->rank_node;
    unsigned shift = q->rank_sum_shift;
    for (; id != NIL; id = nd[id].next) {
        uint32_t r = nd[id].rank, w = r >> 6;
        uint64_t bit = UINT64_C(1) << (r & 63), old = bm[w];
        shared |= old & bit;
        bm[w] = old | bit;
        node[r] = id;
        if (!all) sum |= UINT64_C(1) << (w >> shift);
    }
    if (all) sum = q->rank_sum_all;
    if (__builtin_expect(shared != 0, 0)) {
        rank_bits_clear(q, sum);
        return 0;
    }
    return sum;
}
static uint64_t rank_bits_set(struct fe_evq *q, uint32_t id)
{
    return q->rank_sum_all ? rank_bits_set_as(q, id, true) : rank_bits_set_as(q, id, false);
}

/* Links the nodes of the set bits in rank order, clearing the bits: returns the first, its
 * last in *last (its next is left as it was). With `one`, a summary bit stands for one word
 * (rank_sum_shift 0: up to 4096 ranks), a loop less. */
static inline __attribute__((always_inline)) uint32_t
rank_bits_join_as(struct fe_evq *q, uint64_t sum, uint32_t *last, bool one)
{
    struct fe_evq_wnode *nd = q->nodes;
    uint64_t *bm = q->rank_bm;
    const uint32_t *node = q->rank_node;
    unsigned shift = one ? 0 : q->rank_sum_shift;
    uint32_t head = NIL, *link = &head, id = NIL, words = 1u << shift;
    for (; sum; sum &= sum - 1) {
        uint32_t w = (uint32_t)__builtin_ctzll(sum) << shift, end = w + words;
        for (; w < end; w++) {
            uint64_t bits = bm[w];
            const uint32_t *wnode = node + w * 64;
            bm[w] = 0;
            for (; bits; bits &= bits - 1) {
                id = wnode[__builtin_ctzll(bits)];
                *link = id;
                link = &nd[id].next;
            }
        }
    }
    *last = id;
    return head;
}
static uint32_t rank_bits_join(struct fe_evq *q, uint64_t sum, uint32_t *last)
{
    return q->rank_sum_shift ? rank_bits_join_as(q, sum, last, false)
                             : rank_bits_join_as(q, sum, last, true);
}

/* The stable sort of a list by rank (NIL-terminated, from id), by insertion: returns the first,
 * its last in *last. Each node goes after the last when its rank allows (a run in order costs
 * one comparison a node), else from the first. */
static uint32_t rank_list_sort(struct fe_evq *q, uint32_t id, uint32_t *last)
{
    struct fe_evq_wnode *nd = q->nodes;
    uint32_t head = NIL, tail = NIL;
    while (id != NIL) {
        uint32_t next = nd[id].next, rank = nd[id].rank, *link = &head;
        if (tail != NIL && nd[tail].rank <= rank)
            link = &nd[tail].next;
        else
            while (*link != NIL && nd[*link].rank <= rank) link = &nd[*link].next;
        nd[id].next = *link;
        if (*link == NIL) tail = id;
        *link = id;
        id = next;
    }
    *last = tail;
    return head;
}

/* Whether the list from id (NIL-terminated) has fewer than n nodes. */
static bool list_shorter(const struct fe_evq *q, uint32_t id, uint32_t n)
{
    for (; id != NIL; id = q->nodes[id].next)
        if (!--n) return false;
    return true;
}

void fe_evq_wheel_sort(struct fe_evq *q, struct fe_evq_slot *sl)
{
    sl->arank = 0;
    if (wheel_node_ready(q)) { /* out of memory: the wheel fails (fe_evq_failed) */
        q->failed = true;
        return;
    }
    /* the arrivals, the first included (a slot with arrivals has one first), as one list; the
     * other events after them (rest) wait */
    struct fe_evq_wnode *nd = q->nodes;
    uint32_t fid = fe_evq_wheel_node(q, sl->first, sl->first_rank), rest = nd[sl->atail].next;
    uint32_t head, last;
    nd[fid].next = sl->head;
    nd[sl->atail].next = NIL;
    /* a few arrivals: insertion costs less than a pass over the words of bits */
    uint64_t sum = list_shorter(q, fid, RANK_LIST_SORT_MAX) ? 0 : rank_bits_set(q, fid);
    head = sum ? rank_bits_join(q, sum, &last) : rank_list_sort(q, fid, &last);
    /* the lowest becomes the first (a slot that sorts holds two arrivals or more) */
    nd[last].next = rest;
    if (rest == NIL) sl->tail = last;
    sl->first = nd[head].data;
    sl->first_rank = nd[head].rank;
    sl->head = nd[head].next;
    sl->atail = last;
    nd[head].next = q->free_node;
    q->free_node = head;
}

/* Moves far-future events that now fall inside the horizon into the wheel, in key order: the
 * arrivals of a slot by rank, the others in their scheduling order, before any push can reach
 * the slot. */
static int migrate(struct fe_evq *q)
{
    struct fe_evq_heap *h = &q->heap;
    while (h->n && (h->key[0] >> FE_EVQ_SEQ_BITS) < q->now + FE_EVQ_WHEEL_SLOTS) {
        uint64_t key, data;
        heap_pop(h, &key, &data);
        uint64_t t = key >> FE_EVQ_SEQ_BITS, low = key & FE_EVQ_SEQ_MASK;
        int rc = low < q->fifo_base ? wheel_insert_arrival(q, t, (uint32_t)low, data)
                                    : wheel_insert(q, t, data);
        if (rc) return rc;
    }
    return 0;
}

/* ---- calendar ---- */

/* rough instruction costs of the slow paths, for the choice of the bucket width */
#define CAL_COST_CROSSING 50 /* a pop that leaves its bitmap word */
#define CAL_COST_FAR      90 /* an event beyond the horizon: heap push, pop, filing */
#define CAL_COST_WALK     30 /* a push that is not at its bucket's tail */
#define CAL_COST_STEP     4  /* and each event it passes */
#define CAL_ADAPT_PERIOD  (1u << 20)
#define CAL_ADAPT_RATIO   4
#define CAL_SHIFT_MAX     24 /* 16.8 ms buckets */

static int cal_grow_nodes(struct fe_evq *q)
{
    uint32_t cap = q->cnode_cap ? q->cnode_cap * 2 : 1024;
    if (cap <= q->cnode_cap) return FE_ENOMEM; /* 2^32 nodes */
    struct fe_evq_cnode *nv = realloc(q->cnode, (size_t)cap * sizeof(*nv));
    if (!nv) return FE_ENOMEM;
    for (uint32_t i = q->cnode_cap; i < cap; i++) nv[i].next = i + 1 < cap ? i + 1 : NIL;
    q->cnode = nv;
    q->cnode_free = q->cnode_cap;
    q->cnode_cap = cap;
    return 0;
}

static void cal_set_far(struct fe_evq *q)
{
    q->far_bucket = q->heap.n ? q->heap.key[0] >> q->cal_key_shift : UINT64_MAX;
}

/* Adds an event to the occupied ring bucket bk, in key order. */
static int cal_add(struct fe_evq *q, struct fe_evq_bucket *bk, uint64_t key, uint64_t data)
{
    if (q->cnode_free == NIL && cal_grow_nodes(q)) return FE_ENOMEM;
    struct fe_evq_cnode *nd = q->cnode;
    uint32_t id = q->cnode_free;
    q->cnode_free = nd[id].next;
    nd[id].key = key;
    nd[id].data = data;
    if (bk->head == NIL ? bk->key <= key : nd[bk->tail].key <= key) {
        /* after the last (the usual case) */
        nd[id].next = NIL;
        if (bk->head == NIL)
            bk->head = id;
        else
            nd[bk->tail].next = id;
        bk->tail = id;
        return 0;
    }
    q->cal_cost_wide += CAL_COST_WALK;
    if (key < bk->key) {
        /* before the first: that one moves to the list's head, the new event takes its place */
        nd[id].key = bk->key;
        nd[id].data = bk->data;
        nd[id].next = bk->head;
        if (bk->head == NIL) bk->tail = id;
        bk->head = id;
        bk->key = key;
        bk->data = data;
        return 0;
    }
    /* after the first, before the list's tail (equal keys, an object's arrivals: after) */
    uint32_t *link = &bk->head;
    while (nd[*link].key <= key) {
        link = &nd[*link].next;
        q->cal_cost_wide += CAL_COST_STEP;
    }
    nd[id].next = *link;
    *link = id;
    return 0;
}

/* Files an event into ring bucket slot. */
static int cal_file(struct fe_evq *q, uint32_t slot, uint64_t key, uint64_t data)
{
    struct fe_evq_bucket *bk = &q->bucket[slot];
    uint64_t *word = &q->cbm[slot >> 6], bit = UINT64_C(1) << (slot & 63);
    if (*word & bit) return cal_add(q, bk, key, data);
    *word |= bit;
    bk->key = key;
    bk->data = data;
    return 0;
}

static void cal_adapt_now(struct fe_evq *q);
static inline void cal_adapt(struct fe_evq *q)
{
    if (q->cal_cost_narrow + q->cal_cost_wide >= CAL_ADAPT_PERIOD) cal_adapt_now(q);
}

int fe_evq_cal_push_more(struct fe_evq *q, struct fe_evq_bucket *bk, uint64_t key, uint64_t data)
{
    int rc = cal_add(q, bk, key, data);
    if (rc) return rc;
    q->n++;
    cal_adapt(q);
    return 0;
}

/* Heap events whose bucket the horizon now reaches, into the ring (in key order: appends). */
static int cal_migrate(struct fe_evq *q)
{
    struct fe_evq_heap *h = &q->heap;
    uint64_t last = q->cal_cur + q->cal_mask;
    int rc = 0;
    while (h->n && h->key[0] >> q->cal_key_shift <= last) {
        uint64_t key = h->key[0], data = h->data[0];
        rc = cal_file(q, (uint32_t)(key >> q->cal_key_shift) & q->cal_mask, key, data);
        if (rc) {
            /* out of memory: an event of the horizon is left out, the order can no longer be
             * kept. The queue fails: its pops find nothing (the caller checks fe_evq_failed). */
            q->failed = true;
            memset(q->cbm, 0, ((size_t)q->cal_mask + 1) / 64 * sizeof(*q->cbm));
            break;
        }
        heap_pop(h, &key, &data);
    }
    cal_set_far(q);
    return rc;
}

int fe_evq_cal_push_far(struct fe_evq *q, uint64_t key, uint64_t data)
{
    uint64_t b = key >> q->cal_key_shift;
    int rc = heap_push(&q->heap, key, data);
    if (rc) return rc;
    if (b < q->far_bucket) q->far_bucket = b;
    q->n++;
    q->cal_cost_narrow += CAL_COST_FAR;
    cal_adapt(q);
    return 0;
}

/* Ring position of the earliest occupied bucket (the ring holds an event): the first set bit
 * from the current bucket's, wrapping around (the positions before it are the ring's latest). */
static uint32_t cal_find(const struct fe_evq *q)
{
    uint32_t pos = (uint32_t)q->cal_cur & q->cal_mask, w = pos >> 6, words = (q->cal_mask >> 6) + 1;
    uint64_t bits = q->cbm[w] & (~UINT64_C(0) << (pos & 63));
    while (!bits) {
        w = (w + 1) & (words - 1);
        bits = q->cbm[w];
    }
    return w * 64 + (uint32_t)__builtin_ctzll(bits);
}

/* Migrations are checked here, not at every pop: the inline pop stays within the bitmap word
 * (64 buckets) of the current bucket, and after a check every event in the heap is more than
 * cal_mask >= 127 buckets ahead of it, so later than anything that pop can take. */
static bool cal_pop_until(struct fe_evq *q, uint64_t limit, uint64_t *t, uint64_t *data)
{
    if (q->failed) return false;
    q->cal_cost_narrow += CAL_COST_CROSSING;
    q->cal_cur = q->now >> q->cal_shift;
    if (q->far_bucket - q->cal_cur <= q->cal_mask && cal_migrate(q)) return false;
    if (q->n == q->heap.n) {
        /* the ring is empty: the horizon jumps to the earliest far event */
        if (!q->n || q->heap.key[0] >> FE_EVQ_SEQ_BITS > limit) return false;
        q->cal_cur = q->heap.key[0] >> q->cal_key_shift;
        if (cal_migrate(q)) return false; /* out of memory: the caller sees an empty queue */
    }
    uint32_t slot = cal_find(q);
    struct fe_evq_bucket *bk = &q->bucket[slot];
    uint64_t when = bk->key >> FE_EVQ_SEQ_BITS;
    if (when > limit) return false;
    q->last_key = bk->key;
    *data = bk->data;
    if (bk->head == NIL)
        q->cbm[slot >> 6] &= ~(UINT64_C(1) << (slot & 63));
    else
        fe_evq_cal_take_next(q, bk);
    *t = q->now = when;
    q->n--;
    q->cal_cur = when >> q->cal_shift;
    if (q->far_bucket - q->cal_cur <= q->cal_mask) cal_migrate(q);
    cal_adapt(q);
    return true;
}

/* Calls fn for every event in the ring. */
static int cal_each(struct fe_evq *q, int (*fn)(struct fe_evq *q, uint64_t *key, uint64_t data))
{
    for (uint32_t i = 0; i <= q->cal_mask; i++) {
        if (!(q->cbm[i >> 6] >> (i & 63) & 1)) continue;
        int rc = fn(q, &q->bucket[i].key, q->bucket[i].data);
        for (uint32_t id = q->bucket[i].head; !rc && id != NIL; id = q->cnode[id].next)
            rc = fn(q, &q->cnode[id].key, q->cnode[id].data);
        if (rc) return rc;
    }
    return 0;
}

static int to_heap(struct fe_evq *q, uint64_t *key, uint64_t data)
{
    return heap_push(&q->heap, *key, data);
}

/* Sets the calendar's geometry: 2^bits buckets of 2^shift ns (pending events are kept). */
int fe_evq_cal_configure(struct fe_evq *q, unsigned bits, unsigned shift)
{
    if (q->kind != FE_SIM_EVQ_CALENDAR || bits < 7 || bits > FE_EVQ_CAL_BITS_MAX ||
        shift > CAL_SHIFT_MAX)
        return FE_EINVAL;
    uint32_t n = 1u << bits;
    /* the ring's events wait in the heap while the ring changes: room for them first, so that
     * a failure leaves the queue as it was */
    while (q->heap.cap < q->n)
        if (heap_grow(&q->heap)) return FE_ENOMEM;
    struct fe_evq_bucket *b = malloc(n * sizeof(*b));
    uint64_t *bm = calloc(n / 64, sizeof(*bm));
    if (!b || !bm) {
        free(b);
        free(bm);
        return FE_ENOMEM;
    }
    if (q->bucket) cal_each(q, to_heap);
    free(q->bucket);
    free(q->cbm);
    q->bucket = b;
    q->cbm = bm;
    for (uint32_t i = 0; i < n; i++) b[i].head = NIL;
    for (uint32_t i = 0; i < q->cnode_cap; i++)
        q->cnode[i].next = i + 1 < q->cnode_cap ? i + 1 : NIL;
    q->cnode_free = q->cnode_cap ? 0 : NIL;
    q->cal_mask = n - 1;
    q->cal_shift = shift;
    q->cal_key_shift = shift + FE_EVQ_SEQ_BITS;
    q->cal_cur = q->now >> shift;
    return cal_migrate(q);
}

/* The bucket width follows the workload: narrow buckets cost pops that leave a bitmap word
 * (the inline pop stays within 64 buckets) and events beyond the shorter horizon (through the
 * heap); wide ones cost pushes that are not at their bucket's tail (a walk down its list). The
 * slow paths tally both (in rough instructions); when one side costs several times the other,
 * the width doubles or halves. Only speed depends on it: the order is the keys'. */
static void cal_adapt_now(struct fe_evq *q)
{
    uint64_t narrow = q->cal_cost_narrow, wide = q->cal_cost_wide;
    q->cal_cost_narrow = q->cal_cost_wide = 0;
    unsigned shift = q->cal_shift;
    if (narrow > CAL_ADAPT_RATIO * wide && shift < CAL_SHIFT_MAX)
        shift++;
    else if (wide > CAL_ADAPT_RATIO * narrow && shift > 0)
        shift--;
    else
        return;
    unsigned bits = (unsigned)__builtin_ctz(q->cal_mask + 1);
    fe_evq_cal_configure(q, bits, shift); /* out of memory: the old width stays */
}

int fe_evq_migrate(struct fe_evq *q)
{
    return q->kind == FE_SIM_EVQ_CALENDAR ? cal_migrate(q) : migrate(q);
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
        memset(q->slots, 0xff, FE_EVQ_WHEEL_SLOTS * sizeof(*q->slots)); /* lists NIL */
    } else if (kind == FE_SIM_EVQ_CALENDAR) {
        q->far_bucket = UINT64_MAX;
        int rc = fe_evq_cal_configure(q, FE_EVQ_CAL_BITS_DEFAULT, FE_EVQ_CAL_SHIFT_DEFAULT);
        if (rc) {
            fe_evq_free(q);
            return rc;
        }
    } else if (kind != FE_SIM_EVQ_HEAP) {
        return FE_EINVAL;
    }
    return 0;
}

void fe_evq_free(struct fe_evq *q)
{
    free(q->heap.key);
    free(q->heap.data);
    free(q->slots);
    free(q->bm0);
    free(q->nodes);
    free(q->ren);
    free(q->bucket);
    free(q->cbm);
    free(q->cnode);
    free(q->rank_bm);
    free(q->rank_node);
    memset(q, 0, sizeof(*q));
}

void fe_evq_set_keys_fn(struct fe_evq *q, fe_evq_keys_fn fn, void *user)
{
    q->keys_fn = fn;
    q->keys_user = user;
}

void fe_evq_renumber_key(struct fe_evq *q, uint64_t *key)
{
    if (q->ren_n == q->ren_cap) {
        size_t cap = q->ren_cap ? q->ren_cap * 2 : 1024;
        uint64_t **r = realloc(q->ren, cap * sizeof(*r));
        if (!r) {
            q->ren_fail = true;
            return;
        }
        q->ren = r;
        q->ren_cap = cap;
    }
    q->ren[q->ren_n++] = key;
}

static int cmp_keyp(const void *a, const void *b)
{
    uint64_t x = **(uint64_t *const *)a, y = **(uint64_t *const *)b;
    return x < y ? -1 : x > y;
}

/* Lists key for the renumbering unless it is an arrival's (fe_evq_arrival_key: its rank is
 * not a scheduling number). */
static void renumber_fifo_key(struct fe_evq *q, uint64_t *key)
{
    if ((*key & FE_EVQ_SEQ_MASK) >= q->fifo_base) fe_evq_renumber_key(q, key);
}

static int list_key(struct fe_evq *q, uint64_t *key, uint64_t data)
{
    (void)data;
    renumber_fifo_key(q, key);
    return 0;
}

/* The scheduling numbers ran out: renumber every pending key (the heap's and the caller's) by
 * its rank among the keys of the same time, from fifo_base (arrivals' keys stay). The mapping
 * keeps the order, so the heap stays a heap. */
static int renumber(struct fe_evq *q)
{
    struct fe_evq_heap *h = &q->heap;
    q->ren_n = 0;
    q->ren_fail = false;
    for (size_t i = 0; i < h->n; i++) renumber_fifo_key(q, &h->key[i]);
    if (q->kind == FE_SIM_EVQ_CALENDAR) cal_each(q, list_key);
    renumber_fifo_key(q, &q->last_key);
    if (q->keys_fn) q->keys_fn(q->keys_user, q);
    if (q->ren_fail) return FE_ENOMEM;
    qsort(q->ren, q->ren_n, sizeof(*q->ren), cmp_keyp);
    uint64_t next = q->fifo_base, prev_t = FE_SIM_NO_TIME, rank = 0;
    for (size_t i = 0; i < q->ren_n; i++) {
        uint64_t t = *q->ren[i] >> FE_EVQ_SEQ_BITS;
        rank = t == prev_t ? rank + 1 : q->fifo_base;
        if (rank > FE_EVQ_SEQ_MASK) return FE_ENOSPC; /* too many events at one nanosecond */
        prev_t = t;
        *q->ren[i] = t << FE_EVQ_SEQ_BITS | rank;
        if (rank + 1 > next) next = rank + 1;
    }
    q->seq = next;
    return 0;
}

int fe_evq_set_ranks(struct fe_evq *q, uint64_t n)
{
    if (n > FE_EVQ_RANKS_MAX) return FE_ERANGE;
    if (q->n) return FE_ESTATE;
    if (q->kind == FE_SIM_EVQ_WHEEL && n) {
        /* the wheel's sort of a slot's arrivals: a bit and a node per rank, the words of bits
         * in groups a summary word's 64 bits cover */
        uint64_t words = (n + 63) / 64;
        unsigned shift = 0;
        while ((words - 1) >> shift >= 64) shift++;
        words = (words + (UINT64_C(1) << shift) - 1) >> shift << shift;
        uint64_t *bm = calloc(words, sizeof(*bm));
        uint32_t *node = malloc(n * sizeof(*node));
        if (!bm || !node) {
            free(bm);
            free(node);
            return FE_ENOMEM;
        }
        free(q->rank_bm);
        free(q->rank_node);
        q->rank_bm = bm;
        q->rank_node = node;
        q->rank_sum_shift = shift;
        /* up to 16 words of bits, a sort reads them all instead of noting the ones it sets */
        q->rank_sum_all = words <= 16 ? (UINT64_C(1) << words) - 1 : 0;
    }
    q->fifo_base = n;
    if (q->seq < n) q->seq = n;
    return 0;
}

int fe_evq_key_slow(struct fe_evq *q, uint64_t t, uint64_t *key)
{
    if (t < q->now || t > FE_SIM_MAX_TIME) return FE_ERANGE;
    if (q->seq > FE_EVQ_SEQ_MASK) {
        fe_evq_settle(q); /* the popped root's key is no longer pending */
        int rc = renumber(q);
        if (rc) return rc;
        if (q->seq > FE_EVQ_SEQ_MASK) return FE_ENOSPC;
    }
    *key = t << FE_EVQ_SEQ_BITS | q->seq++;
    return 0;
}

int fe_evq_grow(struct fe_evq *q)
{
    return heap_grow(&q->heap);
}

int fe_evq_push_slow(struct fe_evq *q, uint64_t t, uint64_t data)
{
    int rc;
    if (q->kind == FE_SIM_EVQ_WHEEL && t >= q->now && t - q->now < FE_EVQ_WHEEL_SLOTS &&
        t <= FE_SIM_MAX_TIME) {
        /* a slot keeps the order of its pushes (far events of that time, from the heap, are
         * filed before any push can reach the slot): no key */
        rc = wheel_insert(q, t, data);
    } else {
        uint64_t key;
        rc = fe_evq_key_slow(q, t, &key);
        if (!rc && q->kind == FE_SIM_EVQ_HEAP) return fe_evq_push_key(q, key, data);
        if (!rc) rc = heap_push(&q->heap, key, data);
    }
    if (rc) return rc;
    q->n++;
    q->pushed++;
    return 0;
}

int fe_evq_push_arrival_slow(struct fe_evq *q, uint64_t t, uint64_t rank, uint64_t data)
{
    uint64_t key;
    int rc = fe_evq_arrival_key(q, t, rank, &key);
    if (rc) return rc;
    if ((key & FE_EVQ_SEQ_MASK) >= q->fifo_base) return fe_evq_push(q, t, data); /* not ranked */
    if (t - q->now < FE_EVQ_WHEEL_SLOTS)
        rc = wheel_insert_arrival(q, t, (uint32_t)rank, data);
    else
        rc = heap_push(&q->heap, key, data);
    if (rc) return rc;
    q->n++;
    q->pushed++;
    return 0;
}

/* Pops the earliest event if its time is <= limit (one scan of the wheel's bitmap). */
bool fe_evq_pop_until_slow(struct fe_evq *q, uint64_t limit, uint64_t *t, uint64_t *data)
{
    if (q->kind == FE_SIM_EVQ_HEAP) return fe_evq_pop_until_track(q, limit, t, data, true);
    if (q->kind == FE_SIM_EVQ_CALENDAR) return cal_pop_until(q, limit, t, data);
    if (!q->n) return false;
    if (!q->wheel_n) {
        uint64_t top = q->heap.key[0] >> FE_EVQ_SEQ_BITS;
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
    *data = fe_evq_wheel_take(q, slot);
    q->now = when;
    *t = when;
    q->n--;
    q->popped++;
    if (q->heap.n) migrate(q);
    return true;
}

bool fe_evq_pop(struct fe_evq *q, uint64_t *t, uint64_t *data)
{
    return fe_evq_pop_until_track(q, FE_SIM_NO_TIME, t, data, true);
}

uint64_t fe_evq_peek(struct fe_evq *q)
{
    fe_evq_settle(q);
    if (!q->n) return FE_SIM_NO_TIME;
    if (q->kind == FE_SIM_EVQ_CALENDAR) {
        q->cal_cur = q->now >> q->cal_shift;
        if (q->far_bucket - q->cal_cur <= q->cal_mask) cal_migrate(q);
        return (q->n > q->heap.n ? q->bucket[cal_find(q)].key : q->heap.key[0]) >> FE_EVQ_SEQ_BITS;
    }
    if (q->kind == FE_SIM_EVQ_HEAP || !q->wheel_n) return q->heap.key[0] >> FE_EVQ_SEQ_BITS;
    uint32_t pos = (uint32_t)(q->now & SLOT_MASK);
    int64_t s = find_from(q, pos);
    if (s < 0) s = find_from(q, 0);
    return q->now + (((uint32_t)s - pos) & SLOT_MASK);
}
