/* Event assembly at one builder: fragments (WRITE-with-immediate completions) into event slots,
 * completion, the timeout sweep, release and the ring watermark the builder announces.
 * See include/feroce/eb.h and docs/event-building.md. */
#include <stdlib.h>
#include <string.h>

#include "feroce/eb.h"

#define NO_TIME UINT64_MAX

struct slot {
    uint64_t event;    /* current occupant, or the last one (valid when used) */
    uint64_t seq;      /* its ring position: the builder's seq-th event (seq mod S = slot) */
    uint64_t first_ns; /* first fragment of the occupant */
    uint64_t bytes;
    uint32_t n_arrived, n_expected;
    uint8_t state; /* enum fe_eb_slot_state */
    bool used;
    bool skipped; /* its position was skipped: event is a floor, not an event */
};

/* Open slots in opening order: their deadlines (first_ns + timeout) are in the same order, so
 * the next one is at the head. Entries whose slot was declared since are skipped (stale). */
struct open_entry {
    uint32_t slot;
    uint64_t seq;
};

struct fe_eb_asm {
    struct fe_eb_asm_config cfg;
    unsigned slot_bits;
    uint32_t words; /* 64-bit words of a source bitmap */
    struct slot *slot;
    uint64_t *arrived;  /* n_slots x words */
    uint64_t *expected; /* n_slots x words: the expected set when the event opened */
    uint64_t *expect_now;
    uint32_t n_expect_now;
    uint64_t newest; /* newest event opened: the reference for the immediate's event bits */
    struct open_entry *open;
    uint32_t open_cap, open_head, open_count;
    uint64_t released_w;   /* ring watermark: seqs below it are released (or skipped) */
    uint64_t seq_end;      /* one past the newest seq opened */
    uint64_t passed_seq;   /* positions the front-ends have passed (fe_eb_asm_passed) */
    uint64_t passed_event; /* events the front-ends have passed */
    uint64_t w_event;      /* newest event at a released position below the watermark */
    bool have_w_event;
    uint64_t head_wait_ns; /* since when the watermark's position has been unopened while a
                            * later one was opened; NO_TIME when it is not */
    struct fe_eb_asm_stats stats;
};

unsigned fe_eb_slot_bits(uint32_t n_slots)
{
    unsigned b = 0;
    while (b < 32 && (1ull << b) < n_slots) b++;
    return b;
}

uint64_t fe_eb_imm_event(unsigned slot_bits, uint32_t imm, uint64_t ref)
{
    unsigned bits = 32 - slot_bits;
    uint64_t span = 1ull << bits, mask = span - 1;
    uint64_t diff = ((uint64_t)imm - ref) & mask;
    if (diff < span / 2) return ref + diff;
    uint64_t back = span - diff;
    /* Nearest is below ref; below event 0 there is nothing, so take the one above. */
    return back <= ref ? ref - back : ref + diff;
}

void fe_eb_asm_config_default(struct fe_eb_asm_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->n_sources = 1;
    cfg->n_slots = 64;
    cfg->frag_max_bytes = 65536;
    cfg->timeout_ns = 10000000; /* 10 ms */
}

static bool config_ok(const struct fe_eb_asm_config *c)
{
    return c->n_sources >= 1 && c->n_sources <= FE_EB_MAX_SOURCES && c->n_slots >= 1 &&
           c->n_slots <= FE_EB_MAX_SLOTS && c->timeout_ns > 0;
}

int fe_eb_asm_create(struct fe_eb_asm **out, const struct fe_eb_asm_config *cfg)
{
    *out = NULL;
    if (!config_ok(cfg)) return FE_EINVAL;
    struct fe_eb_asm *a = calloc(1, sizeof *a);
    if (!a) return FE_ENOMEM;
    a->cfg = *cfg;
    a->slot_bits = fe_eb_slot_bits(cfg->n_slots);
    a->words = (cfg->n_sources + 63) / 64;
    size_t bm = (size_t)cfg->n_slots * a->words;
    a->open_cap = 2 * cfg->n_slots;
    a->slot = calloc(cfg->n_slots, sizeof *a->slot);
    a->arrived = calloc(bm, sizeof *a->arrived);
    a->expected = calloc(bm, sizeof *a->expected);
    a->expect_now = calloc(a->words, sizeof *a->expect_now);
    a->open = calloc(a->open_cap, sizeof *a->open);
    if (!a->slot || !a->arrived || !a->expected || !a->expect_now || !a->open) {
        fe_eb_asm_destroy(a);
        return FE_ENOMEM;
    }
    for (uint32_t s = 0; s < cfg->n_sources; s++) a->expect_now[s / 64] |= 1ull << (s % 64);
    a->n_expect_now = cfg->n_sources;
    a->newest = cfg->first_event;
    /* a round-robin builder that joined late: the positions of the events before its first
     * one are behind it (the front-ends dropped them), not waited for */
    if (cfg->rr_builders)
        a->released_w = a->seq_end = fe_eb_rr_position(cfg->first_event, cfg->rr_builders);
    a->head_wait_ns = NO_TIME;
    *out = a;
    return 0;
}

void fe_eb_asm_destroy(struct fe_eb_asm *a)
{
    if (!a) return;
    free(a->slot);
    free(a->arrived);
    free(a->expected);
    free(a->expect_now);
    free(a->open);
    free(a);
}

int fe_eb_asm_set_expected(struct fe_eb_asm *a, const uint64_t *bitmap)
{
    uint32_t n = 0;
    uint64_t tail = a->cfg.n_sources % 64 ? ~0ull << (a->cfg.n_sources % 64) : 0;
    if (bitmap[a->words - 1] & tail) return FE_EINVAL;
    for (uint32_t w = 0; w < a->words; w++) n += (uint32_t)__builtin_popcountll(bitmap[w]);
    if (!n) return FE_EINVAL;
    memcpy(a->expect_now, bitmap, a->words * sizeof *bitmap);
    a->n_expect_now = n;
    return 0;
}

static int refuse(struct fe_eb_asm *a, enum fe_eb_frag why)
{
    a->stats.refused[why]++;
    return why;
}

static void fill_event(const struct fe_eb_asm *a, uint32_t j, uint64_t now_ns,
                       struct fe_eb_event *ev)
{
    const struct slot *s = &a->slot[j];
    ev->event = s->event;
    ev->seq = s->seq;
    ev->slot = j;
    ev->state = s->state;
    ev->n_arrived = s->n_arrived;
    ev->n_expected = s->n_expected;
    ev->bytes = s->bytes;
    ev->first_ns = s->first_ns;
    ev->done_ns = now_ns;
}

/* Drops declared slots from the head of the open list, so its head is the next deadline. */
static void pop_stale(struct fe_eb_asm *a)
{
    while (a->open_count) {
        const struct open_entry *e = &a->open[a->open_head];
        const struct slot *s = &a->slot[e->slot];
        if (s->state == FE_EB_SLOT_OPEN && s->seq == e->seq) return;
        a->open_head = (a->open_head + 1) % a->open_cap;
        a->open_count--;
    }
}

/* Keeps only the live entries, in order: happens when more than S entries went stale behind a
 * long-open head, so its cost is amortized over those S openings. */
static void compact_open(struct fe_eb_asm *a)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < a->open_count; i++) {
        struct open_entry e = a->open[(a->open_head + i) % a->open_cap];
        const struct slot *s = &a->slot[e.slot];
        if (s->state == FE_EB_SLOT_OPEN && s->seq == e.seq) a->open[n++] = e;
    }
    a->open_head = 0;
    a->open_count = n;
}

static void push_open(struct fe_eb_asm *a, uint32_t j)
{
    if (a->open_count == a->open_cap) compact_open(a);
    struct open_entry *e = &a->open[(a->open_head + a->open_count) % a->open_cap];
    e->slot = j;
    e->seq = a->slot[j].seq;
    a->open_count++;
}

static bool head_unopened(const struct fe_eb_asm *a)
{
    const struct slot *h = &a->slot[a->released_w % a->cfg.n_slots];
    uint64_t reached = a->seq_end > a->passed_seq ? a->seq_end : a->passed_seq;
    return !(h->used && h->seq == a->released_w) && reached > a->released_w;
}

static void update_head_wait(struct fe_eb_asm *a, uint64_t now_ns)
{
    if (!head_unopened(a))
        a->head_wait_ns = NO_TIME;
    else if (a->head_wait_ns == NO_TIME)
        a->head_wait_ns = now_ns;
}

static void open_slot(struct fe_eb_asm *a, uint32_t j, uint64_t event, uint64_t seq,
                      uint64_t now_ns)
{
    struct slot *s = &a->slot[j];
    s->event = event;
    s->seq = seq;
    s->used = true;
    s->skipped = false;
    s->first_ns = now_ns;
    s->bytes = 0;
    s->n_arrived = 0;
    s->n_expected = a->n_expect_now;
    s->state = FE_EB_SLOT_OPEN;
    memset(a->arrived + (size_t)j * a->words, 0, a->words * sizeof(uint64_t));
    memcpy(a->expected + (size_t)j * a->words, a->expect_now, a->words * sizeof(uint64_t));
    if (event > a->newest) a->newest = event;
    if (seq + 1 > a->seq_end) a->seq_end = seq + 1;
    push_open(a, j);
    update_head_wait(a, now_ns);
}

/* Which state the slot is in decides whether the fragment's event is the occupant, an older
 * (late) or a newer (overrun) one. */
static int check_event(const struct fe_eb_asm *a, const struct slot *s, uint64_t event, uint32_t j,
                       uint32_t source)
{
    if (s->state == FE_EB_SLOT_FREE)
        return s->used && event <= s->event ? FE_EB_F_LATE : FE_EB_F_OK;
    if (event < s->event) return FE_EB_F_LATE;
    if (event > s->event) return FE_EB_F_OVERRUN;
    if (s->state == FE_EB_SLOT_OPEN) return FE_EB_F_OK;
    const uint64_t *arr = a->arrived + (size_t)j * a->words;
    return (arr[source / 64] >> (source % 64)) & 1 ? FE_EB_F_DUPLICATE : FE_EB_F_LATE;
}

/* The ring position a new event in free slot j takes. Round-robin: seq = E div M exactly, and
 * the slot must be seq mod S. Otherwise the one position of slot j in the window
 * [watermark, watermark + S): the manager's credits never let a front-end further ahead. A
 * position before the window was passed (late); one beyond it would overwrite a position the
 * builder has not finished with (overrun). */
/* The slot holding ring position p, when it still records that position's event. */
static const struct slot *at_position(const struct fe_eb_asm *a, uint64_t p)
{
    const struct slot *s = &a->slot[p % a->cfg.n_slots];
    return s->used && !s->skipped && s->seq == p ? s : NULL;
}

/* Events increase along a builder's ring positions (the manager assigns them in order). An event
 * that would break that order at position seq is in the wrong slot: a front-end disagrees with
 * the tables, or the event was already built at another position. Checked against the nearest
 * recorded position on each side within the window, and below it against the newest event
 * released there: so no event is built twice, whatever slot its fragments claim. */
static bool in_ring_order(const struct fe_eb_asm *a, uint64_t seq, uint64_t event)
{
    uint64_t w = a->released_w, n = a->cfg.n_slots;
    const struct slot *before = NULL, *after = NULL;
    for (uint64_t p = seq; p > w && !before;) before = at_position(a, --p);
    for (uint64_t p = seq + 1; p < w + n && !after; p++) after = at_position(a, p);
    if (before ? before->event >= event : a->have_w_event && a->w_event >= event) return false;
    return !after || after->event > event;
}

static int check_position(const struct fe_eb_asm *a, const struct slot *s, uint32_t j,
                          uint64_t event, uint64_t *seq)
{
    uint64_t w = a->released_w, n = a->cfg.n_slots;
    if (a->cfg.rr_builders) {
        *seq = event / a->cfg.rr_builders;
        if (*seq % n != j) return FE_EB_F_SLOT;
    } else {
        if (s->used && s->seq >= w) return FE_EB_F_OVERRUN;
        *seq = w + (j + n - w % n) % n;
        if (!in_ring_order(a, *seq, event)) return FE_EB_F_SLOT;
    }
    if (*seq < w) return FE_EB_F_LATE;
    return *seq >= w + n ? FE_EB_F_OVERRUN : FE_EB_F_OK;
}

static int record(struct fe_eb_asm *a, uint32_t j, uint32_t source, uint32_t len, uint64_t now_ns,
                  struct fe_eb_event *done)
{
    struct slot *s = &a->slot[j];
    uint64_t *arr = a->arrived + (size_t)j * a->words;
    uint64_t bit = 1ull << (source % 64);
    if (!(a->expected[(size_t)j * a->words + source / 64] & bit)) return refuse(a, FE_EB_F_SOURCE);
    if (arr[source / 64] & bit) return refuse(a, FE_EB_F_DUPLICATE);
    arr[source / 64] |= bit;
    s->n_arrived++;
    s->bytes += len;
    a->stats.fragments++;
    if (s->n_arrived < s->n_expected) return FE_EB_F_OK;
    s->state = FE_EB_SLOT_COMPLETE;
    a->stats.complete++;
    if (done) fill_event(a, j, now_ns, done);
    pop_stale(a);
    return FE_EB_F_COMPLETE;
}

int fe_eb_asm_fragment(struct fe_eb_asm *a, uint64_t now_ns, uint32_t source, uint32_t imm,
                       uint32_t len_bytes, struct fe_eb_event *done)
{
    if (source >= a->cfg.n_sources) return refuse(a, FE_EB_F_SOURCE);
    if (len_bytes > a->cfg.frag_max_bytes) return refuse(a, FE_EB_F_LENGTH);
    uint32_t j = fe_eb_imm_slot(a->slot_bits, imm);
    if (j >= a->cfg.n_slots) return refuse(a, FE_EB_F_SLOT);
    uint64_t event = fe_eb_imm_event(a->slot_bits, imm, a->newest);
    struct slot *s = &a->slot[j];
    int v = check_event(a, s, event, j, source);
    if (v != FE_EB_F_OK) return refuse(a, (enum fe_eb_frag)v);
    if (s->state == FE_EB_SLOT_FREE) {
        uint64_t seq;
        v = check_position(a, s, j, event, &seq);
        if (v != FE_EB_F_OK) return refuse(a, (enum fe_eb_frag)v);
        /* An unexpected source must not open a slot it cannot complete. */
        if (!((a->expect_now[source / 64] >> (source % 64)) & 1)) return refuse(a, FE_EB_F_SOURCE);
        open_slot(a, j, event, seq, now_ns);
    }
    return record(a, j, source, len_bytes, now_ns, done);
}

static void advance_watermark(struct fe_eb_asm *a)
{
    for (;;) {
        const struct slot *h = &a->slot[a->released_w % a->cfg.n_slots];
        if (h->state != FE_EB_SLOT_FREE || !h->used || h->seq != a->released_w) return;
        if (!h->skipped && (!a->have_w_event || h->event > a->w_event)) {
            a->w_event = h->event;
            a->have_w_event = true;
        }
        a->released_w++;
    }
}

/* The watermark's position was never reached while later ones were, for a whole timeout: its
 * event sent this builder nothing (all sources busy, or every fragment lost). It is consumed so
 * that the ring moves on; anything for it later is late (its floor is the newest event). */
static void skip_head(struct fe_eb_asm *a, struct fe_eb_event *done, uint64_t now_ns)
{
    uint32_t j = (uint32_t)(a->released_w % a->cfg.n_slots);
    struct slot *s = &a->slot[j];
    s->seq = a->released_w;
    s->used = true;
    s->skipped = true;
    /* Its event is older than both the newest opened and any the front-ends have passed. */
    s->event = a->newest;
    if (a->passed_event && a->passed_event - 1 > s->event) s->event = a->passed_event - 1;
    s->state = FE_EB_SLOT_FREE;
    memset(done, 0, sizeof *done);
    done->event = UINT64_MAX;
    done->seq = a->released_w;
    done->slot = j;
    done->state = FE_EB_SLOT_FREE;
    done->n_expected = a->n_expect_now;
    done->done_ns = now_ns;
    a->stats.skipped++;
    a->released_w++;
    advance_watermark(a);
    uint64_t since = a->head_wait_ns;
    a->head_wait_ns = NO_TIME;
    update_head_wait(a, now_ns);
    /* Consecutive unreached positions share one wait. */
    if (a->head_wait_ns != NO_TIME) a->head_wait_ns = since;
}

int fe_eb_asm_expire(struct fe_eb_asm *a, uint64_t now_ns, struct fe_eb_event *done)
{
    pop_stale(a);
    if (a->open_count) {
        const struct open_entry *e = &a->open[a->open_head];
        struct slot *s = &a->slot[e->slot];
        if (now_ns >= s->first_ns + a->cfg.timeout_ns) {
            s->state = FE_EB_SLOT_INCOMPLETE;
            a->stats.incomplete++;
            fill_event(a, e->slot, now_ns, done);
            pop_stale(a);
            return 1;
        }
    }
    if (a->head_wait_ns != NO_TIME && now_ns >= a->head_wait_ns + a->cfg.timeout_ns &&
        head_unopened(a)) {
        skip_head(a, done, now_ns);
        return 1;
    }
    return 0;
}

uint64_t fe_eb_asm_next_deadline(const struct fe_eb_asm *a)
{
    uint64_t t = NO_TIME;
    if (a->open_count) t = a->slot[a->open[a->open_head].slot].first_ns + a->cfg.timeout_ns;
    if (a->head_wait_ns != NO_TIME && a->head_wait_ns + a->cfg.timeout_ns < t)
        t = a->head_wait_ns + a->cfg.timeout_ns;
    return t;
}

void fe_eb_asm_passed(struct fe_eb_asm *a, uint64_t now_ns, uint64_t seq_end, uint64_t event_end)
{
    if (event_end > a->passed_event) a->passed_event = event_end;
    if (seq_end <= a->passed_seq) return;
    a->passed_seq = seq_end;
    update_head_wait(a, now_ns);
}

int fe_eb_asm_release(struct fe_eb_asm *a, uint64_t now_ns, uint32_t slot)
{
    if (slot >= a->cfg.n_slots) return FE_EINVAL;
    struct slot *s = &a->slot[slot];
    if (s->state != FE_EB_SLOT_COMPLETE && s->state != FE_EB_SLOT_INCOMPLETE) return FE_ESTATE;
    s->state = FE_EB_SLOT_FREE;
    a->stats.released++;
    advance_watermark(a);
    update_head_wait(a, now_ns);
    return 0;
}

uint64_t fe_eb_asm_released(const struct fe_eb_asm *a)
{
    return a->released_w;
}

uint32_t fe_eb_asm_missing(const struct fe_eb_asm *a, uint32_t slot, uint32_t *out, uint32_t max)
{
    if (slot >= a->cfg.n_slots || !a->slot[slot].used) return 0;
    const uint64_t *arr = a->arrived + (size_t)slot * a->words;
    const uint64_t *exp = a->expected + (size_t)slot * a->words;
    uint32_t n = 0;
    for (uint32_t w = 0; w < a->words; w++) {
        uint64_t miss = exp[w] & ~arr[w];
        while (miss) {
            uint32_t src = w * 64 + (uint32_t)__builtin_ctzll(miss);
            if (n < max) out[n] = src;
            n++;
            miss &= miss - 1;
        }
    }
    return n;
}

int fe_eb_asm_slot_state(const struct fe_eb_asm *a, uint32_t slot)
{
    return slot < a->cfg.n_slots ? a->slot[slot].state : FE_EINVAL;
}

unsigned fe_eb_asm_slot_bits(const struct fe_eb_asm *a)
{
    return a->slot_bits;
}

const struct fe_eb_asm_stats *fe_eb_asm_stats(const struct fe_eb_asm *a)
{
    return &a->stats;
}

const char *fe_eb_frag_name(int verdict)
{
    static const char *const names[FE_EB_F_MAX] = {
        [FE_EB_F_OK] = "ok",     [FE_EB_F_COMPLETE] = "complete", [FE_EB_F_SOURCE] = "source",
        [FE_EB_F_SLOT] = "slot", [FE_EB_F_LENGTH] = "length",     [FE_EB_F_DUPLICATE] = "duplicate",
        [FE_EB_F_LATE] = "late", [FE_EB_F_OVERRUN] = "overrun",
    };
    return verdict >= 0 && verdict < FE_EB_F_MAX ? names[verdict] : "unknown";
}
