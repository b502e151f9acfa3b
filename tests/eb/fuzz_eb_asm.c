/* libFuzzer target: the builder's assembly under arbitrary sequences of fragments (any source,
 * slot, event and length, duplicates, stragglers), timeouts, releases (right and wrong slots) and
 * progress news, in both position modes (round-robin and tables). Properties: no crash or UB;
 * no event is declared twice; a declared event has as many sources arrived as its bitmap says;
 * the watermark never passes a position that was not released or skipped, and never decreases;
 * every fragment is either accepted or counted under one refusal reason. */
#include <stdlib.h>
#include <string.h>

#include "feroce/eb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

#define N_SOURCES 70 /* two bitmap words */
#define MAX_EVENT 4096

struct state {
    struct fe_eb_asm *a;
    uint8_t declared[MAX_EVENT];
    uint64_t now, fragments, last_watermark;
};

static void check_declared(struct state *st, const struct fe_eb_event *d)
{
    if (d->state == FE_EB_SLOT_FREE) return; /* a skipped position: no event number */
    if (d->event < MAX_EVENT) {              /* raw immediates can name far events: not tracked */
        CHECK(!st->declared[d->event]);
        st->declared[d->event] = 1;
    }
    CHECK(d->n_arrived <= d->n_expected);
    CHECK((d->state == FE_EB_SLOT_COMPLETE) == (d->n_arrived == d->n_expected));
    uint32_t miss[N_SOURCES];
    CHECK(fe_eb_asm_missing(st->a, d->slot, miss, N_SOURCES) == d->n_expected - d->n_arrived);
}

static void check_counts(struct state *st)
{
    const struct fe_eb_asm_stats *s = fe_eb_asm_stats(st->a);
    uint64_t refused = 0;
    for (int r = 0; r < FE_EB_F_MAX; r++) refused += s->refused[r];
    CHECK(s->fragments + refused == st->fragments);
    CHECK(s->released <= s->complete + s->incomplete);
    uint64_t w = fe_eb_asm_released(st->a);
    CHECK(w >= st->last_watermark);
    CHECK(w <= s->released + s->skipped);
    st->last_watermark = w;
}

static void op(struct state *st, const uint8_t *p, unsigned bits, uint32_t n_slots)
{
    struct fe_eb_event d;
    switch (p[0] & 3) {
    case 0: { /* a fragment */
        uint32_t source = p[1] % (N_SOURCES + 2);
        uint32_t slot = p[2] % (n_slots + 1);
        uint64_t event = ((uint64_t)(p[3] & 0x0F) << 8 | p[4]) % MAX_EVENT;
        uint32_t imm = fe_eb_imm_make(bits, slot, event);
        if (p[0] & 0x80) imm = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | p[3] << 8 | p[4];
        st->fragments++;
        int v = fe_eb_asm_fragment(st->a, st->now, source, imm, p[2] * 8u, &d);
        CHECK(v >= FE_EB_F_OK && v < FE_EB_F_MAX);
        if (v == FE_EB_F_COMPLETE) check_declared(st, &d);
        break;
    }
    case 1: /* time passes; declare what is due */
        st->now += (uint64_t)p[1] * p[2];
        while (fe_eb_asm_expire(st->a, st->now, &d)) check_declared(st, &d);
        CHECK(fe_eb_asm_next_deadline(st->a) > st->now);
        break;
    case 2: { /* the consumer releases a slot (possibly one holding nothing) */
        uint32_t slot = p[1] % (n_slots + 1);
        int before = fe_eb_asm_slot_state(st->a, slot);
        int rc = fe_eb_asm_release(st->a, st->now, slot);
        if (rc == 0) CHECK(before == FE_EB_SLOT_COMPLETE || before == FE_EB_SLOT_INCOMPLETE);
        break;
    }
    default: /* the front-ends passed some events */
        fe_eb_asm_passed(st->a, st->now, p[1] % 64, ((uint64_t)p[2] << 4) % MAX_EVENT);
        break;
    }
    check_counts(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    struct fe_eb_asm_config c;
    fe_eb_asm_config_default(&c);
    c.n_sources = N_SOURCES;
    c.n_slots = 1 + data[0] % 16;
    c.rr_builders = data[1] % 4; /* 0: tables */
    c.frag_max_bytes = 1024;
    c.timeout_ns = 1000;
    struct state *st = calloc(1, sizeof *st);
    CHECK(st);
    CHECK(fe_eb_asm_create(&st->a, &c) == 0);
    if (data[1] & 0x80) {
        uint64_t bm[2] = {0x0F0F0F0F0F0F0F0Full, 0x21};
        CHECK(fe_eb_asm_set_expected(st->a, bm) == 0);
    }
    unsigned bits = fe_eb_asm_slot_bits(st->a);
    for (size_t i = 2; i + 5 <= size; i += 5) op(st, data + i, bits, c.n_slots);
    fe_eb_asm_destroy(st->a);
    free(st);
    return 0;
}
