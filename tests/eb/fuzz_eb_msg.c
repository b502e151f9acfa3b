/* libFuzzer target: the event-building side-channel messages, and what consumes them.
 * Properties: no crash or UB; an accepted message re-encodes to the same bytes and a refused one
 * has a reason; a side-channel decoder without event building refuses every accepted one; fed as
 * a sequence (64-byte records) to a front-end's table and an event manager, lookups stay in
 * range and every chunk the manager issues encodes, decodes and is accepted by a table; a ring
 * message's geometry keeps every fragment inside the builder's region; a START names one of its
 * builder's events; JOINs fed to a late builder's join decide a first event of that builder at
 * or after every proposal made before the decision. */
#include <stdlib.h>
#include <string.h>

#include "feroce/eb.h"
#include "feroce/sidechannel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

#define N_BUILDERS 4
#define N_SLOTS    16

static void check_codec(const uint8_t *data, size_t size)
{
    struct fe_eb_msg m;
    enum fe_eb_msg_reason why;
    if (fe_eb_msg_decode(data, size, &m, &why) == 0) {
        uint8_t out[FE_EB_MSG_LEN];
        CHECK(fe_eb_msg_encode(out, &m) == 0);
        CHECK(memcmp(out, data, FE_EB_MSG_LEN) == 0);
        CHECK(fe_eb_msg_is_eb(data, size));
        struct fe_sc_msg sm;
        enum fe_sc_reason sw;
        CHECK(fe_sc_decode(data, size, &sm, &sw) < 0 && sw == FE_SC_R_REQUEST);
    } else {
        CHECK(why > FE_EB_M_OK && why < FE_EB_M_MAX);
    }
}

/* A chunk the manager issued: valid on the wire, and the next piece of the front-end's table. */
static void check_issued(const struct fe_eb_table *c, struct fe_eb_fe_table *mine)
{
    struct fe_eb_msg m = {.type = FE_EB_MSG_TABLE, .u.table = *c}, d;
    uint8_t b[FE_EB_MSG_LEN];
    CHECK(fe_eb_msg_encode(b, &m) == 0);
    CHECK(fe_eb_msg_decode(b, sizeof b, &d, NULL) == 0);
    for (unsigned i = 0; i < c->n_runs; i++) {
        CHECK(c->run[i].builder < N_BUILDERS && c->run[i].first_slot < N_SLOTS);
        CHECK(c->run[i].count >= 1);
    }
    /* chunks follow one another, or jump over events every front-end passed */
    CHECK(c->first_event >= fe_eb_fe_table_end(mine));
    fe_eb_fe_table_forget(mine, c->first_event);
    CHECK(fe_eb_fe_table_add(mine, &d.u.table) == 0);
}

/* A ring a front-end accepts: the last source's fragment of the last slot ends inside the
 * region (n_slots x slot_bytes), with no overflow on the way. */
static void check_ring(const struct fe_eb_ring *r)
{
    CHECK(r->n_slots >= 1 && r->n_slots <= FE_EB_MAX_SLOTS && r->qpn <= 0xFFFFFF);
    CHECK(r->frag_max_bytes >= 1 && r->slot_bytes >= r->frag_max_bytes);
    CHECK(r->slot_bytes <= FE_EB_MAX_SLOT_BYTES);
    uint64_t region = (uint64_t)r->n_slots * r->slot_bytes;
    CHECK(region / r->n_slots == r->slot_bytes);
    uint32_t last_src = (uint32_t)(r->slot_bytes / r->frag_max_bytes) - 1;
    uint64_t end = fe_eb_frag_offset(r->n_slots - 1, r->slot_bytes, last_src, r->frag_max_bytes) +
                   r->frag_max_bytes;
    CHECK(end <= region);
    if (r->policy == FE_EB_POLICY_RR) CHECK(r->builder < r->n_builders);
}

static struct fe_eb_positions *pos; /* builder 1's view of the same chunks */
static struct fe_eb_rr_join *join;  /* builder 1's join (round-robin over N_BUILDERS) */
static uint64_t join_max;           /* largest proposal before the decision */
static bool join_zero;              /* a proposal of 0 (on time) before the decision */

static void check_start(const struct fe_eb_start *st)
{
    CHECK(st->n_builders >= 1 && st->builder < st->n_builders);
    CHECK(fe_eb_rr_first_at(st->first_event, st->builder, st->n_builders) == st->first_event);
}

static void feed_join(const struct fe_eb_join *j, uint64_t now)
{
    CHECK(j->has_first || !j->first_event);
    uint64_t e0;
    bool before = fe_eb_rr_join_first(join, &e0);
    int rc = fe_eb_rr_join_propose(join, now, j->source, j->next_event, false);
    CHECK(rc == 0 || (rc == FE_EINVAL && j->source >= N_BUILDERS));
    if (!before && rc == 0 && j->next_event > join_max) join_max = j->next_event;
    if (!before && rc == 0 && !j->next_event) join_zero = true;
    if (fe_eb_rr_join_first(join, &e0)) {
        CHECK(e0 % N_BUILDERS == 1);
        if (join_zero) /* an on-time front-end sends from the first event: the ring stays */
            CHECK(e0 == 1);
        else if (join_max <= UINT64_MAX - N_BUILDERS)
            CHECK(e0 >= join_max && e0 - join_max < N_BUILDERS);
        else /* beyond its last event: its last one */
            CHECK(e0 > UINT64_MAX - N_BUILDERS);
        CHECK(!fe_eb_rr_join_waiting(join));
    }
}

static void feed(struct fe_eb_fe_table *t, struct fe_eb_mgr *mgr, const struct fe_eb_msg *m,
                 uint64_t now)
{
    if (m->type == FE_EB_MSG_TABLE) {
        int rc = fe_eb_fe_table_add(t, &m->u.table);
        CHECK(rc == 0 || rc == 1 || rc == FE_EAGAIN || rc == FE_ENOSPC || rc == FE_EINVAL);
        uint64_t before = fe_eb_positions_below(pos, UINT64_MAX);
        rc = fe_eb_positions_add(pos, &m->u.table);
        CHECK(rc == 0 || rc == 1 || rc == FE_EAGAIN || rc == FE_ENOSPC);
        CHECK(fe_eb_positions_below(pos, UINT64_MAX) >= before);
    } else if (m->type == FE_EB_MSG_ANNOUNCE) {
        fe_eb_mgr_announce(mgr, now, m->u.announce.builder, m->u.announce.released);
    } else if (m->type == FE_EB_MSG_RING) {
        check_ring(&m->u.ring);
    } else if (m->type == FE_EB_MSG_START) {
        check_start(&m->u.start);
    } else if (m->type == FE_EB_MSG_JOIN) {
        feed_join(&m->u.join, now);
    } else if (m->type == FE_EB_MSG_PROGRESS) {
        fe_eb_mgr_progress(mgr, m->u.progress.next_event % 100000);
        fe_eb_fe_table_forget(t, m->u.progress.next_event);
    }
}

static void check_lookups(struct fe_eb_fe_table *t, uint64_t event)
{
    struct fe_eb_target x;
    int rc = fe_eb_fe_table_lookup(t, event, &x);
    CHECK(rc == 0 || rc == FE_EAGAIN || rc == FE_ENOENT);
    if (rc == 0) CHECK(x.slot < N_SLOTS);
    if (rc == FE_ENOENT) CHECK(event < fe_eb_fe_table_end(t));
    uint64_t seq = fe_eb_positions_below(pos, event), e;
    if (seq && fe_eb_positions_event(pos, seq - 1, &e) == 0) CHECK(e < event);
    if (fe_eb_positions_event(pos, seq, &e) == 0) CHECK(e >= event);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_codec(data, size);

    struct fe_eb_fe_table *t, *mine;
    CHECK(fe_eb_fe_table_create(&t, 8, N_SLOTS, 0) == 0);
    CHECK(fe_eb_fe_table_create(&mine, FE_EB_TABLE_RUNS, N_SLOTS, 0) == 0);
    CHECK(fe_eb_positions_create(&pos, 1, 8, 0) == 0);
    /* as many sources as builders: one proposal each decides */
    CHECK(fe_eb_rr_join_create(&join, N_BUILDERS, 1, N_BUILDERS, 1000) == 0);
    join_max = 0;
    join_zero = false;
    struct fe_eb_mgr_config mc;
    fe_eb_mgr_config_default(&mc);
    mc.n_builders = N_BUILDERS;
    mc.n_slots = N_SLOTS;
    mc.reserve = 2;
    mc.run_events = 3;
    mc.lead_events = 50;
    mc.builder_timeout_ns = 1000;
    struct fe_eb_mgr mgr;
    CHECK(fe_eb_mgr_init(&mgr, &mc) == 0);

    uint64_t now = 0;
    for (size_t i = 0; i + FE_EB_MSG_LEN <= size; i += FE_EB_MSG_LEN) {
        const uint8_t *rec = data + i;
        check_codec(rec, FE_EB_MSG_LEN);
        struct fe_eb_msg m;
        now += rec[63];
        if (fe_eb_msg_decode(rec, FE_EB_MSG_LEN, &m, NULL) == 0) feed(t, &mgr, &m, now);
        check_lookups(t, (uint64_t)rec[62] << 8 | rec[61]);
        struct fe_eb_table c;
        while (fe_eb_mgr_poll(&mgr, now, &c)) check_issued(&c, mine);
        for (uint16_t b = 0; b < N_BUILDERS; b++) {
            const struct fe_eb_mgr_builder *mb = &mgr.b[b];
            CHECK(mb->released <= mb->assigned);
            CHECK(mb->assigned - mb->released <= N_SLOTS);
        }
    }
    fe_eb_mgr_free(&mgr);
    fe_eb_fe_table_destroy(t);
    fe_eb_fe_table_destroy(mine);
    fe_eb_positions_destroy(pos);
    fe_eb_rr_join_destroy(join);
    return 0;
}
