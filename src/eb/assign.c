/* A front-end's copy of the assignment tables: append-only runs in a ring, looked up per event.
 * See include/feroce/eb.h. */
#include <stdlib.h>
#include <string.h>

#include "feroce/eb.h"

struct held_run {
    uint64_t first; /* first event of the run */
    uint32_t count;
    uint32_t first_slot;
    uint16_t builder;
};

struct fe_eb_fe_table {
    struct held_run *run;
    uint32_t cap, head, n; /* ring of runs, oldest at head */
    uint32_t cursor;       /* logical index of the last run a lookup hit */
    uint32_t n_slots;
    uint32_t epoch;
    bool have_epoch;
    uint64_t base, end; /* covered: [base, end) */
    struct fe_eb_fe_stats stats;
};

uint64_t fe_eb_table_events(const struct fe_eb_table *t)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < t->n_runs && i < FE_EB_TABLE_RUNS; i++) n += t->run[i].count;
    return n;
}

bool fe_eb_table_continues(const struct fe_eb_table *c, uint64_t end)
{
    return c->first_event <= end || c->first_event - c->skipped == end;
}

int fe_eb_fe_table_create(struct fe_eb_fe_table **out, uint32_t max_runs, uint32_t n_slots,
                          uint64_t first_event)
{
    *out = NULL;
    if (!max_runs || !n_slots || n_slots > FE_EB_MAX_SLOTS) return FE_EINVAL;
    struct fe_eb_fe_table *t = calloc(1, sizeof *t);
    if (!t) return FE_ENOMEM;
    t->run = calloc(max_runs, sizeof *t->run);
    if (!t->run) {
        free(t);
        return FE_ENOMEM;
    }
    t->cap = max_runs;
    t->n_slots = n_slots;
    t->base = t->end = first_event;
    *out = t;
    return 0;
}

void fe_eb_fe_table_destroy(struct fe_eb_fe_table *t)
{
    if (!t) return;
    free(t->run);
    free(t);
}

static struct held_run *at(struct fe_eb_fe_table *t, uint32_t i)
{
    return &t->run[(t->head + i) % t->cap];
}

static bool check_epoch(struct fe_eb_fe_table *t, const struct fe_eb_table *c)
{
    if (t->have_epoch && c->epoch < t->epoch) return false;
    t->epoch = c->epoch;
    t->have_epoch = true;
    return true;
}

/* Runs of the chunk that hold events at or after end: how many must be stored. */
static uint32_t runs_needed(const struct fe_eb_table *c, uint64_t end)
{
    uint64_t e = c->first_event;
    uint32_t n = 0;
    for (unsigned i = 0; i < c->n_runs; i++) {
        e += c->run[i].count;
        if (e > end) n++;
    }
    return n;
}

static bool chunk_valid(const struct fe_eb_fe_table *t, const struct fe_eb_table *c)
{
    if (c->n_runs < 1 || c->n_runs > FE_EB_TABLE_RUNS) return false;
    for (unsigned i = 0; i < c->n_runs; i++)
        if (!c->run[i].count || c->run[i].first_slot >= t->n_slots) return false;
    return c->first_event <= UINT64_MAX - fe_eb_table_events(c);
}

int fe_eb_fe_table_add(struct fe_eb_fe_table *t, const struct fe_eb_table *c)
{
    if (!chunk_valid(t, c)) return FE_EINVAL;
    uint64_t c_end = c->first_event + fe_eb_table_events(c);
    if (!fe_eb_table_continues(c, t->end)) {
        t->stats.chunks_gap++;
        return FE_EAGAIN;
    }
    if (c_end <= t->end) {
        if (c_end <= t->base)
            t->stats.chunks_old++;
        else
            t->stats.chunks_dup++;
        return 1;
    }
    uint32_t need = runs_needed(c, t->end);
    if (t->n + need > t->cap) {
        t->stats.chunks_full++;
        return FE_ENOSPC;
    }
    if (!check_epoch(t, c)) {
        t->stats.chunks_old++;
        return 1;
    }
    if (c->first_event > t->end) {
        /* the manager skipped events every front-end had passed: they stay unassigned (busy) */
        t->end = c->first_event;
        if (!t->n) t->base = t->end;
    }
    uint64_t e = c->first_event;
    for (unsigned i = 0; i < c->n_runs; i++) {
        const struct fe_eb_run *r = &c->run[i];
        uint64_t r_end = e + r->count;
        if (r_end > t->end) {
            /* A chunk that overlaps what is held contributes only its new events. */
            uint64_t skip = t->end > e ? t->end - e : 0;
            struct held_run *h = at(t, t->n++);
            h->first = e + skip;
            h->count = (uint32_t)(r->count - skip);
            h->first_slot = (uint32_t)((r->first_slot + skip) % t->n_slots);
            h->builder = r->builder;
            t->end = r_end;
        }
        e = r_end;
    }
    t->stats.chunks_added++;
    return 0;
}

static bool run_has(const struct held_run *r, uint64_t event)
{
    return event >= r->first && event - r->first < r->count;
}

/* The run holding event (known to be in [base, end)): the cursor, its successor, or a binary
 * search. */
static uint32_t find_run(struct fe_eb_fe_table *t, uint64_t event)
{
    if (t->cursor < t->n && run_has(at(t, t->cursor), event)) return t->cursor;
    if (t->cursor + 1 < t->n && run_has(at(t, t->cursor + 1), event)) return t->cursor + 1;
    uint32_t lo = 0, hi = t->n - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (at(t, mid)->first <= event)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int fe_eb_fe_table_lookup(struct fe_eb_fe_table *t, uint64_t event, struct fe_eb_target *out)
{
    if (event >= t->end) {
        t->stats.busy++;
        return FE_EAGAIN;
    }
    if (event < t->base) {
        t->stats.stale++;
        return FE_ENOENT;
    }
    uint32_t i = find_run(t, event);
    const struct held_run *r = at(t, i);
    if (!run_has(r, event)) {
        /* between two chunks, over events the manager skipped: never assigned */
        t->stats.busy++;
        return FE_EAGAIN;
    }
    t->cursor = i;
    out->builder = r->builder;
    out->slot = (uint32_t)((r->first_slot + (event - r->first)) % t->n_slots);
    t->stats.assigned++;
    return 0;
}

void fe_eb_fe_table_forget(struct fe_eb_fe_table *t, uint64_t event)
{
    /* Events the front-end has passed need no table any more, so a chunk starting at event
     * (the manager skips what every front-end has passed) is contiguous. */
    if (event > t->end) t->end = event;
    while (t->n && at(t, 0)->first + at(t, 0)->count <= event) {
        t->head = (t->head + 1) % t->cap;
        t->n--;
        t->cursor = t->cursor ? t->cursor - 1 : 0;
    }
    t->base = t->n ? at(t, 0)->first : t->end;
}

uint64_t fe_eb_fe_table_end(const struct fe_eb_fe_table *t)
{
    return t->end;
}

const struct fe_eb_fe_stats *fe_eb_fe_table_stats(const struct fe_eb_fe_table *t)
{
    return &t->stats;
}
