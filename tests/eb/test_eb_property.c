/* Property tests of assignment and assembly together: a small discrete-time world of front-ends,
 * builders, their consumers and (availability policy) the event manager, with random delays,
 * arrival orders, duplicates, lost fragments, late fragments after a timeout, lost and reordered
 * table chunks, a slow builder and a builder killed mid-run. Whatever happens, the ledger must
 * show every triggered event in exactly one final state: built once, incomplete, lost (its
 * builder died) or busy (no source had an assignment for it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/eb.h"

#define TICK_NS    1000u
#define WHEEL      256u /* > any delay, in ticks */
#define MAX_B      8
#define MAX_SRC    1100
#define NO_BUILDER 0xFFFFu

enum kind { K_FRAG, K_CHUNK, K_ANNOUNCE, K_PROGRESS, K_PASSED };

struct item {
    uint8_t kind;
    uint16_t to;    /* builder (FRAG, ANNOUNCE) or source (CHUNK) */
    uint32_t a;     /* source (FRAG), chunk index (CHUNK) */
    uint32_t imm;   /* FRAG */
    uint64_t value; /* released (ANNOUNCE), next event (PROGRESS), positions (ASSIGNED) */
};

struct bucket {
    struct item *v;
    size_t n, cap;
};

struct declared {
    uint64_t event;
    uint32_t slot;
    uint8_t state;
};

struct params {
    bool avail;
    uint32_t n_builders, n_sources, n_slots;
    uint64_t n_events, pad_events;
    uint32_t max_delay;     /* ticks */
    uint32_t p_drop, p_dup; /* per mille */
    uint32_t timeout_ticks;
    int slow; /* builder releasing one event per slow_period ticks, or -1 */
    uint32_t slow_period;
    int kill; /* builder killed at kill_tick, or -1 */
    uint64_t kill_tick;
    uint32_t reserve, run_events, lead;
};

struct world {
    struct params p;
    uint64_t rng;
    uint64_t now; /* ticks */
    struct bucket wheel[WHEEL];
    struct fe_eb_asm *as[MAX_B];
    bool alive[MAX_B];
    struct declared *cq[MAX_B]; /* consumer queue: declared, not yet recorded */
    size_t cq_n[MAX_B], cq_cap[MAX_B];
    struct fe_eb_fe_table *fe[MAX_SRC];
    struct fe_eb_mgr mgr;
    struct fe_eb_table *chunks;
    size_t n_chunks, cap_chunks;
    uint64_t *seq_event[MAX_B];         /* availability: builder's k-th event */
    struct fe_eb_positions *pos[MAX_B]; /* the same, as the builders keep it */
    size_t seq_n[MAX_B], seq_cap[MAX_B];
    uint16_t *target; /* per event: its builder as the front-ends found it */
    uint32_t *n_busy; /* per event: sources that had no assignment */
    struct fe_eb_ledger *ledger;
    /* the killed builder's bound */
    uint64_t kill_released, after_kill_assigned, kill_max_event, kill_bound;
    uint64_t busy_fragments;
    uint64_t frags_in_flight;
    uint64_t chunk_due[MAX_SRC]; /* the manager's messages to a front-end arrive in order */
};

static uint64_t rnd(struct world *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}
static uint32_t below(struct world *w, uint32_t n)
{
    return (uint32_t)(rnd(w) % n);
}
static bool chance(struct world *w, uint32_t per_mille)
{
    return below(w, 1000) < per_mille;
}

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return v;
    *cap = *cap ? 2 * *cap : 64;
    void *nv = realloc(v, *cap * size);
    assert_non_null(nv);
    return nv;
}

static void push(struct world *w, uint32_t delay, struct item it)
{
    assert_true(delay >= 1 && delay < WHEEL);
    struct bucket *b = &w->wheel[(w->now + delay) % WHEEL];
    b->v = grow(b->v, &b->cap, b->n, sizeof *b->v);
    b->v[b->n++] = it;
    if (it.kind == K_FRAG) w->frags_in_flight++;
}

static uint32_t delay(struct world *w)
{
    return 1 + below(w, w->p.max_delay);
}

/* ---- the manager's chunks: logged, sent to every front-end ---- */

static void send_chunk(struct world *w, uint32_t s, size_t k)
{
    uint64_t due = w->now + delay(w);
    if (due < w->chunk_due[s]) due = w->chunk_due[s];
    w->chunk_due[s] = due;
    push(w, (uint32_t)(due - w->now),
         (struct item){.kind = K_CHUNK, .to = (uint16_t)s, .a = (uint32_t)k});
}

static void log_chunk(struct world *w, const struct fe_eb_table *c)
{
    for (uint32_t b = 0; b < w->p.n_builders; b++)
        assert_int_equal(fe_eb_positions_add(w->pos[b], c), 0);
    w->chunks = grow(w->chunks, &w->cap_chunks, w->n_chunks, sizeof *w->chunks);
    w->chunks[w->n_chunks] = *c;
    uint64_t e = c->first_event;
    for (unsigned i = 0; i < c->n_runs; i++) {
        uint16_t b = c->run[i].builder;
        for (uint32_t k = 0; k < c->run[i].count; k++, e++) {
            w->seq_event[b] = grow(w->seq_event[b], &w->seq_cap[b], w->seq_n[b], sizeof(uint64_t));
            /* the ring rule: the run's slots continue the builder's ring */
            assert_int_equal((c->run[i].first_slot + k) % w->p.n_slots, w->seq_n[b] % w->p.n_slots);
            w->seq_event[b][w->seq_n[b]++] = e;
            if ((int)b == w->p.kill && w->now >= w->p.kill_tick) {
                w->after_kill_assigned++;
                w->kill_max_event = e;
            }
        }
    }
    for (uint32_t s = 0; s < w->p.n_sources; s++) {
        if (chance(w, 50)) continue; /* lost: the retransmission below covers it */
        send_chunk(w, s, w->n_chunks);
        if (chance(w, 100)) send_chunk(w, s, w->n_chunks); /* duplicated */
    }
    w->n_chunks++;
}

static void run_manager(struct world *w)
{
    struct fe_eb_table c;
    while (fe_eb_mgr_poll(&w->mgr, w->now * TICK_NS, &c)) log_chunk(w, &c);
    if (w->p.kill >= 0 && w->now >= w->p.kill_tick && !w->mgr.b[w->p.kill].up &&
        w->kill_bound == UINT64_MAX)
        w->kill_bound = w->mgr.progress + w->mgr.cfg.lead_events;
    /* a front-end that missed a chunk gets it again: the manager repeats the chunks from the
     * one holding the end of the front-end's table on (the front-end reports that end) */
    if (w->n_chunks && w->now % 8 == 0)
        for (uint32_t s = 0; s < w->p.n_sources; s++) {
            uint64_t end = fe_eb_fe_table_end(w->fe[s]);
            size_t i = w->n_chunks;
            while (i > 0 && w->chunks[i - 1].first_event > end) i--;
            for (size_t k = i ? i - 1 : 0; k < w->n_chunks; k++) send_chunk(w, s, k);
        }
}

/* ---- front-ends: one trigger per tick ---- */

static bool find_target(struct world *w, uint32_t s, uint64_t e, struct fe_eb_target *t)
{
    if (!w->p.avail) {
        *t = fe_eb_rr_assign(e, w->p.n_builders, w->p.n_slots);
        return true;
    }
    int rc = fe_eb_fe_table_lookup(w->fe[s], e, t);
    fe_eb_fe_table_forget(w->fe[s], e);
    assert_true(rc == 0 || rc == FE_EAGAIN);
    return rc == 0;
}

static void send_fragment(struct world *w, uint32_t s, uint64_t e, struct fe_eb_target t)
{
    uint32_t imm = fe_eb_imm_make(fe_eb_slot_bits(w->p.n_slots), t.slot, e);
    struct item it = {.kind = K_FRAG, .to = t.builder, .a = s, .imm = imm};
    bool pad = e >= w->p.n_events;
    if (pad || !chance(w, w->p.p_drop)) push(w, delay(w), it);
    if (!pad && chance(w, w->p.p_dup)) push(w, delay(w) + w->p.max_delay, it);
}

static void trigger(struct world *w, uint64_t e)
{
    uint16_t target = NO_BUILDER;
    uint32_t busy = 0;
    for (uint32_t s = 0; s < w->p.n_sources; s++) {
        struct fe_eb_target t;
        if (!find_target(w, s, e, &t)) {
            busy++;
            continue;
        }
        /* every front-end that has an answer has the same one */
        if (target != NO_BUILDER) assert_int_equal(t.builder, target);
        target = t.builder;
        send_fragment(w, s, e, t);
    }
    if (w->p.avail) {
        for (uint32_t s = 0; s < w->p.n_sources; s++) fe_eb_fe_table_forget(w->fe[s], e + 1);
        push(w, delay(w), (struct item){.kind = K_PROGRESS, .value = e + 1});
    }
    if (e >= w->p.n_events) return;
    w->target[e] = target;
    w->n_busy[e] = busy;
    w->busy_fragments += busy;
    if (busy == w->p.n_sources)
        assert_int_equal(fe_eb_ledger_record(w->ledger, e, FE_EB_BUSY, NO_BUILDER, busy), 0);
}

/* ---- builders ---- */

static void declare(struct world *w, uint16_t b, const struct fe_eb_event *d)
{
    w->cq[b] = grow(w->cq[b], &w->cq_cap[b], w->cq_n[b], sizeof(struct declared));
    w->cq[b][w->cq_n[b]++] = (struct declared){d->event, d->slot, d->state};
}

static void deliver_fragment(struct world *w, const struct item *it)
{
    if (!w->alive[it->to]) return;
    struct fe_eb_event d;
    int v = fe_eb_asm_fragment(w->as[it->to], w->now * TICK_NS, it->a, it->imm, 100, &d);
    assert_true(v == FE_EB_F_OK || v == FE_EB_F_COMPLETE || v == FE_EB_F_DUPLICATE ||
                v == FE_EB_F_LATE || v == FE_EB_F_OVERRUN);
    if (v == FE_EB_F_COMPLETE) declare(w, it->to, &d);
    if (v == FE_EB_F_OVERRUN) {
        /* round-robin has no credits: the builder's receive queue pushes back (RNR) and the
         * front-end retries */
        assert_false(w->p.avail);
        push(w, 20 + delay(w), *it); /* the RNR retry timer */
    }
}

static uint64_t skipped_event(struct world *w, uint16_t b, uint64_t seq)
{
    if (!w->p.avail) return b + seq * w->p.n_builders;
    assert_true(seq < w->seq_n[b]);
    uint64_t e;
    assert_int_equal(fe_eb_positions_event(w->pos[b], seq, &e), 0);
    assert_int_equal(e, w->seq_event[b][seq]);
    return e;
}

static void expire(struct world *w, uint16_t b)
{
    struct fe_eb_event d;
    while (fe_eb_asm_expire(w->as[b], w->now * TICK_NS, &d)) {
        if (d.state != FE_EB_SLOT_FREE) {
            declare(w, b, &d);
            continue;
        }
        /* a ring position nothing reached: its event sent this builder no fragment */
        uint64_t e = skipped_event(w, b, d.seq);
        if (e >= w->p.n_events || fe_eb_ledger_state(w->ledger, e) == FE_EB_BUSY) continue;
        assert_int_equal(fe_eb_ledger_record(w->ledger, e, FE_EB_INCOMPLETE, b, w->p.n_sources), 0);
    }
}

static void consume(struct world *w, uint16_t b)
{
    size_t n = w->cq_n[b];
    if ((int)b == w->p.slow) n = (w->now % w->p.slow_period == 0 && n) ? 1 : 0;
    for (size_t i = 0; i < n; i++) {
        const struct declared *d = &w->cq[b][i];
        uint32_t miss = fe_eb_asm_missing(w->as[b], d->slot, NULL, 0);
        if (d->event < w->p.n_events) {
            enum fe_eb_final f = d->state == FE_EB_SLOT_COMPLETE ? FE_EB_BUILT : FE_EB_INCOMPLETE;
            assert_int_equal(fe_eb_ledger_record(w->ledger, d->event, f, b, miss), 0);
        }
        assert_int_equal(fe_eb_asm_release(w->as[b], w->now * TICK_NS, d->slot), 0);
    }
    if (n) memmove(w->cq[b], w->cq[b] + n, (w->cq_n[b] - n) * sizeof(struct declared));
    w->cq_n[b] -= n;
    if (w->p.avail)
        push(w, delay(w),
             (struct item){.kind = K_ANNOUNCE, .to = b, .value = fe_eb_asm_released(w->as[b])});
}

/* Builder b learns that the front-ends passed every event below event_end; the chunks it
 * received tell it which of its positions hold such events. */
static void passed(struct world *w, uint16_t b, uint64_t event_end)
{
    size_t lo = 0, hi = w->seq_n[b];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->seq_event[b][mid] < event_end)
            lo = mid + 1;
        else
            hi = mid;
    }
    assert_int_equal(fe_eb_positions_below(w->pos[b], event_end), lo);
    fe_eb_asm_passed(w->as[b], w->now * TICK_NS, lo, event_end);
}

static void deliver(struct world *w)
{
    struct bucket *bk = &w->wheel[w->now % WHEEL];
    for (size_t i = 0; i < bk->n; i++) {
        struct item it = bk->v[i];
        switch (it.kind) {
        case K_FRAG:
            w->frags_in_flight--;
            deliver_fragment(w, &it);
            break;
        case K_CHUNK: {
            int rc = fe_eb_fe_table_add(w->fe[it.to], &w->chunks[it.a]);
            assert_true(rc == 0 || rc == 1 || rc == FE_EAGAIN);
            break;
        }
        case K_ANNOUNCE:
            if (fe_eb_mgr_announce(&w->mgr, w->now * TICK_NS, it.to, it.value) == 0 &&
                (int)it.to == w->p.kill)
                w->kill_released = it.value;
            break;
        case K_PROGRESS:
            /* the manager forwards the front-ends' progress to the builders */
            fe_eb_mgr_progress(&w->mgr, it.value);
            for (uint16_t b = 0; b < w->p.n_builders; b++)
                push(w, delay(w), (struct item){.kind = K_PASSED, .to = b, .value = it.value});
            break;
        case K_PASSED:
            if (w->alive[it.to]) passed(w, it.to, it.value);
            break;
        }
    }
    bk->n = 0;
}

static void step(struct world *w, bool triggering, uint64_t e)
{
    if (w->p.kill >= 0 && w->now == w->p.kill_tick) w->alive[w->p.kill] = false;
    if (w->p.avail) run_manager(w);
    if (triggering) trigger(w, e);
    deliver(w);
    for (uint16_t b = 0; b < w->p.n_builders; b++) {
        if (!w->alive[b]) continue;
        expire(w, b);
        consume(w, b);
    }
    w->now++;
}

/* ---- setup, run, verdict ---- */

static void setup(struct world *w, const struct params *p, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    w->p = *p;
    w->rng = seed * 0x9E3779B97F4A7C15ull + 1;
    w->kill_bound = UINT64_MAX;
    for (uint32_t b = 0; b < p->n_builders; b++) {
        struct fe_eb_asm_config c;
        fe_eb_asm_config_default(&c);
        c.n_sources = p->n_sources;
        c.n_slots = p->n_slots;
        c.timeout_ns = (uint64_t)p->timeout_ticks * TICK_NS;
        c.rr_builders = p->avail ? 0 : p->n_builders;
        assert_int_equal(fe_eb_asm_create(&w->as[b], &c), 0);
        assert_int_equal(fe_eb_positions_create(&w->pos[b], (uint16_t)b, 1 << 16, 0), 0);
        w->alive[b] = true;
    }
    for (uint32_t s = 0; s < p->n_sources && p->avail; s++)
        assert_int_equal(fe_eb_fe_table_create(&w->fe[s], 4096, p->n_slots, 0), 0);
    if (p->avail) {
        struct fe_eb_mgr_config mc;
        fe_eb_mgr_config_default(&mc);
        mc.n_builders = p->n_builders;
        mc.n_slots = p->n_slots;
        mc.reserve = p->reserve;
        mc.run_events = p->run_events;
        mc.lead_events = p->lead;
        mc.builder_timeout_ns = 50ull * TICK_NS;
        assert_int_equal(fe_eb_mgr_init(&w->mgr, &mc), 0);
        for (uint16_t b = 0; b < p->n_builders; b++) fe_eb_mgr_announce(&w->mgr, 0, b, 0);
    }
    w->target = calloc(p->n_events, sizeof *w->target);
    w->n_busy = calloc(p->n_events, sizeof *w->n_busy);
    assert_non_null(w->target);
    assert_non_null(w->n_busy);
    assert_int_equal(fe_eb_ledger_create(&w->ledger, 0, p->n_events), 0);
}

static bool quiet(const struct world *w)
{
    /* chunks, announcements and progress reports never stop; fragments do */
    if (w->frags_in_flight) return false;
    for (uint32_t b = 0; b < w->p.n_builders; b++)
        if (w->alive[b] && (w->cq_n[b] || fe_eb_asm_next_deadline(w->as[b]) != UINT64_MAX))
            return false;
    return true;
}

/* What no builder declared: its builder died (lost). Anything else stays missing. */
static void classify_lost(struct world *w)
{
    for (uint64_t e = 0; e < w->p.n_events; e++) {
        if (fe_eb_ledger_state(w->ledger, e) != FE_EB_NONE) continue;
        uint16_t b = w->target[e];
        if (b != NO_BUILDER && !w->alive[b])
            assert_int_equal(fe_eb_ledger_record(w->ledger, e, FE_EB_LOST, b, 0), 0);
    }
}

static void teardown(struct world *w)
{
    for (uint32_t b = 0; b < w->p.n_builders; b++) {
        fe_eb_asm_destroy(w->as[b]);
        fe_eb_positions_destroy(w->pos[b]);
        free(w->cq[b]);
        free(w->seq_event[b]);
    }
    for (uint32_t s = 0; s < w->p.n_sources; s++) fe_eb_fe_table_destroy(w->fe[s]);
    if (w->p.avail) fe_eb_mgr_free(&w->mgr);
    for (uint32_t i = 0; i < WHEEL; i++) free(w->wheel[i].v);
    free(w->chunks);
    free(w->target);
    free(w->n_busy);
    fe_eb_ledger_destroy(w->ledger);
}

static void report(const struct world *w, const struct fe_eb_ledger_report *r, uint64_t seed)
{
    fprintf(stderr,
            "seed %llu %s M=%u N=%u S=%u: built %llu incomplete %llu lost %llu busy %llu "
            "missing %llu (first %lld) twice %llu\n",
            (unsigned long long)seed, w->p.avail ? "avail" : "rr", w->p.n_builders, w->p.n_sources,
            w->p.n_slots, (unsigned long long)r->count[FE_EB_BUILT],
            (unsigned long long)r->count[FE_EB_INCOMPLETE],
            (unsigned long long)r->count[FE_EB_LOST], (unsigned long long)r->count[FE_EB_BUSY],
            (unsigned long long)r->count[FE_EB_NONE], (long long)r->first_missing,
            (unsigned long long)r->twice);
    if (!w->p.avail) return;
    const struct fe_eb_mgr_stats *ms = &w->mgr.stats;
    fprintf(stderr, "  manager: chunks %llu events %llu starved %llu timeouts %llu\n",
            (unsigned long long)ms->chunks, (unsigned long long)ms->events,
            (unsigned long long)ms->starved, (unsigned long long)ms->timeouts);
    const struct fe_eb_fe_stats *fs = fe_eb_fe_table_stats(w->fe[0]);
    fprintf(stderr, "  front-end 0: chunks added %llu dup %llu gap %llu old %llu busy %llu\n",
            (unsigned long long)fs->chunks_added, (unsigned long long)fs->chunks_dup,
            (unsigned long long)fs->chunks_gap, (unsigned long long)fs->chunks_old,
            (unsigned long long)fs->busy);
}

static struct fe_eb_ledger_report run_world(struct world *w, uint64_t seed)
{
    uint64_t total = w->p.n_events + w->p.pad_events;
    /* the first chunks reach every front-end before the first trigger */
    for (uint32_t t = 0; t < 2 * w->p.max_delay + 1; t++) step(w, false, 0);
    for (uint64_t e = 0; e < total; e++) step(w, true, e);
    for (uint64_t t = 0; t < 100000 && !quiet(w); t++) step(w, false, 0);
    assert_true(quiet(w));
    classify_lost(w);
    struct fe_eb_ledger_report r;
    bool ok = fe_eb_ledger_check(w->ledger, &r);
    if (!ok || getenv("EB_VERBOSE")) report(w, &r, seed);
    assert_true(ok);
    for (uint32_t b = 0; b < w->p.n_builders; b++) {
        const struct fe_eb_asm_stats *st = fe_eb_asm_stats(w->as[b]);
        assert_int_equal(st->refused[FE_EB_F_SOURCE] + st->refused[FE_EB_F_SLOT] +
                             st->refused[FE_EB_F_LENGTH],
                         0);
        if (w->p.avail) assert_int_equal(st->refused[FE_EB_F_OVERRUN], 0);
    }
    return r;
}

static struct params random_params(struct world *w, bool avail)
{
    static const uint32_t sources[] = {1, 2, 3, 8, 40, 70, 1030};
    struct params p = {0};
    p.avail = avail;
    p.n_builders = 1 + below(w, MAX_B);
    p.n_sources = sources[below(w, 7)];
    p.n_slots = 2 + below(w, 15);
    p.n_events = p.n_sources > 100 ? 300 : 1500;
    p.pad_events = 4ull * p.n_builders * p.n_slots + 64;
    p.max_delay = 1 + below(w, 20);
    p.p_drop = below(w, 3) ? below(w, 20) : 0;
    p.p_dup = below(w, 50);
    p.timeout_ticks = 3 * p.max_delay + below(w, 30);
    p.slow = below(w, 3) ? -1 : (int)below(w, p.n_builders);
    p.slow_period = 2 + below(w, 10);
    p.kill = (below(w, 3) || p.n_builders < 2) ? -1 : (int)below(w, p.n_builders);
    p.kill_tick = below(w, (uint32_t)p.n_events);
    p.reserve = below(w, p.n_slots / 4 + 1);
    p.run_events = 1 + below(w, 4);
    p.lead = 8 + below(w, 64);
    return p;
}

static void random_worlds(bool avail, int trials)
{
    for (int i = 0; i < trials; i++) {
        uint64_t seed = (uint64_t)i + (avail ? 1000 : 0);
        struct world *w = calloc(1, sizeof *w);
        assert_non_null(w);
        w->rng = seed * 0x2545F4914F6CDD1Dull + 7;
        struct params p = random_params(w, avail);
        setup(w, &p, seed);
        run_world(w, seed);
        teardown(w);
        free(w);
    }
}

static void rr_every_event_once(void **state)
{
    (void)state;
    random_worlds(false, 30);
}

static void avail_every_event_once(void **state)
{
    (void)state;
    random_worlds(true, 30);
}

/* A killed builder (availability): its in-flight events are lost, accounted, and it gets no new
 * events beyond the bound: at most its credits after its last announcement, none numbered past
 * progress + lead when the manager marked it down. The others carry on. */
static void avail_killed_builder_bound(void **state)
{
    (void)state;
    struct params p = {.avail = true,
                       .n_builders = 4,
                       .n_sources = 8,
                       .n_slots = 64,
                       .n_events = 4000,
                       .pad_events = 200,
                       .max_delay = 5,
                       .p_drop = 0,
                       .p_dup = 10,
                       .timeout_ticks = 30,
                       .slow = -1,
                       .slow_period = 1,
                       .kill = 2,
                       .kill_tick = 1000,
                       .reserve = 2,
                       .run_events = 2,
                       .lead = 48};
    struct world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    setup(w, &p, 42);
    struct fe_eb_ledger_report r = run_world(w, 42);
    assert_true(r.count[FE_EB_LOST] > 0);
    assert_true(r.count[FE_EB_LOST] <= p.n_slots + 2 * p.lead);
    assert_true(r.count[FE_EB_BUILT] > 3500);
    assert_true(w->after_kill_assigned <= p.n_slots - p.reserve);
    assert_true(w->kill_bound != UINT64_MAX);
    assert_true(w->kill_max_event < w->kill_bound);
    teardown(w);
    free(w);
}

/* A slow builder (availability) gets fewer events: it is given only what it releases, and the
 * others take the rest, with nothing lost. */
static void avail_slow_builder_gets_less(void **state)
{
    (void)state;
    struct params p = {.avail = true,
                       .n_builders = 4,
                       .n_sources = 4,
                       .n_slots = 32,
                       .n_events = 4000,
                       .pad_events = 200,
                       .max_delay = 3,
                       .p_drop = 0,
                       .p_dup = 0,
                       .timeout_ticks = 20,
                       .slow = 1,
                       .slow_period = 20,
                       .kill = -1,
                       .kill_tick = 0,
                       .reserve = 1,
                       .run_events = 1,
                       .lead = 32};
    struct world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    setup(w, &p, 7);
    struct fe_eb_ledger_report r = run_world(w, 7);
    assert_int_equal(r.count[FE_EB_LOST], 0);
    assert_int_equal(r.count[FE_EB_INCOMPLETE], 0);
    uint64_t slow = w->mgr.b[1].assigned, fast = w->mgr.b[0].assigned;
    assert_true(slow * 4 < fast);
    assert_true(r.count[FE_EB_BUILT] > 3900);
    teardown(w);
    free(w);
}

/* Round-robin with a slow builder: nothing is lost, but its slots fill and the front-ends'
 * fragments to it are pushed back (overrun, retried) */
static void rr_slow_builder_backs_up(void **state)
{
    (void)state;
    struct params p = {.avail = false,
                       .n_builders = 3,
                       .n_sources = 4,
                       .n_slots = 4,
                       .n_events = 600,
                       .pad_events = 100,
                       .max_delay = 3,
                       .p_drop = 0,
                       .p_dup = 0,
                       .timeout_ticks = 1000,
                       .slow = 0,
                       .slow_period = 10,
                       .kill = -1,
                       .kill_tick = 0};
    struct world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    setup(w, &p, 9);
    struct fe_eb_ledger_report r = run_world(w, 9);
    assert_int_equal(r.count[FE_EB_BUILT], 600);
    assert_true(fe_eb_asm_stats(w->as[0])->refused[FE_EB_F_OVERRUN] > 100);
    assert_int_equal(fe_eb_asm_stats(w->as[1])->refused[FE_EB_F_OVERRUN], 0);
    teardown(w);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rr_every_event_once),
        cmocka_unit_test(avail_every_event_once),
        cmocka_unit_test(avail_killed_builder_bound),
        cmocka_unit_test(avail_slow_builder_gets_less),
        cmocka_unit_test(rr_slow_builder_backs_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
