/* Discrete-event queue of the simulator: integer nanoseconds, FIFO among events of the same time
 * (within 2^20 schedulings), deterministic. Two interchangeable implementations, measured by
 * `feroce bench sim`: a 4-ary heap and a timing wheel of 1 ns slots with a heap for the far
 * future. An event is a time and a 64-bit word (the simulator packs an aligned object pointer and
 * a 4-bit kind into it). */
#ifndef FE_SIM_ENGINE_H
#define FE_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/sim.h"

#define FE_EVQ_SEQ_BITS    20
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
    uint64_t seq;
    size_t n; /* pending events */
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
/* t >= the time of the last popped event and t <= FE_SIM_MAX_TIME, else FE_ERANGE. */
int fe_evq_push(struct fe_evq *q, uint64_t t, uint64_t data);
/* Pops the earliest event; false when empty. Advances q->now to its time. */
bool fe_evq_pop(struct fe_evq *q, uint64_t *t, uint64_t *data);
/* Pops the earliest event if its time is <= limit; false otherwise (or when empty). */
bool fe_evq_pop_until(struct fe_evq *q, uint64_t limit, uint64_t *t, uint64_t *data);
/* Time of the earliest pending event, FE_SIM_NO_TIME when empty. */
uint64_t fe_evq_peek(struct fe_evq *q);
static inline size_t fe_evq_size(const struct fe_evq *q)
{
    return q->n;
}

#endif
