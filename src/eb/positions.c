/* A builder's own view of the tables: its runs of ring positions and the events they hold.
 * See include/feroce/eb.h. */
#include <stdlib.h>

#include "feroce/eb.h"

struct pos_run {
    uint64_t first_event;
    uint64_t first_seq;
    uint32_t count;
};

struct fe_eb_positions {
    uint16_t builder;
    struct pos_run *run;
    uint32_t cap, head, n; /* ring of runs, oldest at head */
    uint64_t end;          /* events covered by the chunks taken */
    uint64_t seq_end;      /* positions assigned so far */
    uint64_t seq_base;     /* positions forgotten */
    uint32_t epoch;
    bool have_epoch;
};

int fe_eb_positions_create(struct fe_eb_positions **out, uint16_t builder, uint32_t max_runs,
                           uint64_t first_event)
{
    *out = NULL;
    if (!max_runs) return FE_EINVAL;
    struct fe_eb_positions *p = calloc(1, sizeof *p);
    if (!p) return FE_ENOMEM;
    p->run = calloc(max_runs, sizeof *p->run);
    if (!p->run) {
        free(p);
        return FE_ENOMEM;
    }
    p->builder = builder;
    p->cap = max_runs;
    p->end = first_event;
    *out = p;
    return 0;
}

void fe_eb_positions_destroy(struct fe_eb_positions *p)
{
    if (!p) return;
    free(p->run);
    free(p);
}

static struct pos_run *at(const struct fe_eb_positions *p, uint32_t i)
{
    return &p->run[(p->head + i) % p->cap];
}

static bool chunk_valid(const struct fe_eb_table *c)
{
    if (c->n_runs < 1 || c->n_runs > FE_EB_TABLE_RUNS) return false;
    for (unsigned i = 0; i < c->n_runs; i++)
        if (!c->run[i].count) return false;
    return c->first_event <= UINT64_MAX - fe_eb_table_events(c);
}

/* This builder's runs of the chunk that reach past end: how many new entries they need. */
static uint32_t runs_needed(const struct fe_eb_positions *p, const struct fe_eb_table *c)
{
    uint64_t e = c->first_event;
    uint32_t n = 0;
    for (unsigned i = 0; i < c->n_runs; i++) {
        e += c->run[i].count;
        if (c->run[i].builder == p->builder && e > p->end) n++;
    }
    return n;
}

static void append(struct fe_eb_positions *p, uint64_t first_event, uint32_t count)
{
    struct pos_run *last = p->n ? at(p, p->n - 1) : NULL;
    if (last && last->first_event + last->count == first_event && last->count + count > count) {
        last->count += count;
    } else {
        *at(p, p->n++) = (struct pos_run){first_event, p->seq_end, count};
    }
    p->seq_end += count;
}

int fe_eb_positions_add(struct fe_eb_positions *p, const struct fe_eb_table *c)
{
    if (!chunk_valid(c)) return FE_EINVAL;
    if (!fe_eb_table_continues(c, p->end)) return FE_EAGAIN;
    uint64_t c_end = c->first_event + fe_eb_table_events(c);
    if (c_end <= p->end) return 1;
    if (p->have_epoch && c->epoch < p->epoch) return 1;
    if (p->n + runs_needed(p, c) > p->cap) return FE_ENOSPC;
    p->epoch = c->epoch;
    p->have_epoch = true;
    uint64_t e = c->first_event;
    for (unsigned i = 0; i < c->n_runs; i++) {
        uint64_t r_end = e + c->run[i].count;
        if (c->run[i].builder == p->builder && r_end > p->end) {
            uint64_t from = e > p->end ? e : p->end;
            append(p, from, (uint32_t)(r_end - from));
        }
        e = r_end;
    }
    p->end = c_end;
    return 0;
}

/* The last run whose first event is below event_end, or -1. */
static int64_t last_run_below(const struct fe_eb_positions *p, uint64_t event_end)
{
    int64_t lo = 0, hi = (int64_t)p->n - 1, found = -1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (at(p, (uint32_t)mid)->first_event < event_end) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

uint64_t fe_eb_positions_below(const struct fe_eb_positions *p, uint64_t event_end)
{
    int64_t i = last_run_below(p, event_end);
    if (i < 0) return p->n ? at(p, 0)->first_seq : p->seq_base;
    const struct pos_run *r = at(p, (uint32_t)i);
    uint64_t in = event_end - r->first_event;
    return r->first_seq + (in < r->count ? in : r->count);
}

int fe_eb_positions_event(const struct fe_eb_positions *p, uint64_t seq, uint64_t *event)
{
    uint32_t lo = 0, hi = p->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct pos_run *r = at(p, mid);
        if (seq < r->first_seq) {
            hi = mid;
        } else if (seq - r->first_seq >= r->count) {
            lo = mid + 1;
        } else {
            *event = r->first_event + (seq - r->first_seq);
            return 0;
        }
    }
    return FE_ENOENT;
}

void fe_eb_positions_forget(struct fe_eb_positions *p, uint64_t seq)
{
    while (p->n && at(p, 0)->first_seq + at(p, 0)->count <= seq) {
        p->seq_base = at(p, 0)->first_seq + at(p, 0)->count;
        p->head = (p->head + 1) % p->cap;
        p->n--;
    }
}
