/* The event-building side-channel messages, the event index, the front-ends' reports and the
 * ledger: round trips, refusals by reason, and that a side-channel peer without event building
 * refuses the new messages without a state change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/eb.h"
#include "feroce/sidechannel.h"

static struct fe_eb_msg table_msg(void)
{
    struct fe_eb_msg m;
    memset(&m, 0, sizeof m);
    m.type = FE_EB_MSG_TABLE;
    m.u.table.manager = 0x0102;
    m.u.table.epoch = 0x03040506;
    m.u.table.first_event = 0x1122334455667788ull;
    m.u.table.skipped = 0x0708090a;
    m.u.table.n_runs = 2;
    m.u.table.run[0] = (struct fe_eb_run){0x0a0b, 0x0c0d, 0x0e0f};
    m.u.table.run[1] = (struct fe_eb_run){1, 2, 3};
    return m;
}

static struct fe_eb_msg ring_msg(void)
{
    struct fe_eb_msg m;
    memset(&m, 0, sizeof m);
    m.type = FE_EB_MSG_RING;
    m.u.ring.builder = 2;
    m.u.ring.policy = FE_EB_POLICY_RR;
    m.u.ring.n_builders = 3;
    m.u.ring.n_slots = 64;
    m.u.ring.qpn = 0x123456;
    m.u.ring.slot_bytes = 0x10000;
    m.u.ring.frag_max_bytes = 0x1000;
    m.u.ring.first_event = 7;
    return m;
}

static struct fe_eb_msg join_msg(void)
{
    struct fe_eb_msg m;
    memset(&m, 0, sizeof m);
    m.type = FE_EB_MSG_JOIN;
    m.u.join = (struct fe_eb_join){.source = 3,
                                   .builder = 2,
                                   .has_first = true,
                                   .next_event = 0x0102030405060708ull,
                                   .first_event = 0x1112131415161718ull};
    return m;
}

static struct fe_eb_msg start_msg(void)
{
    struct fe_eb_msg m;
    memset(&m, 0, sizeof m);
    m.type = FE_EB_MSG_START;
    m.u.start = (struct fe_eb_start){.builder = 2, .n_builders = 3, .first_event = 6257};
    return m;
}

static bool same_table(const struct fe_eb_table *a, const struct fe_eb_table *b)
{
    if (a->manager != b->manager || a->epoch != b->epoch || a->first_event != b->first_event ||
        a->skipped != b->skipped || a->n_runs != b->n_runs)
        return false;
    for (unsigned i = 0; i < a->n_runs; i++)
        if (a->run[i].builder != b->run[i].builder ||
            a->run[i].first_slot != b->run[i].first_slot || a->run[i].count != b->run[i].count)
            return false;
    return true;
}

static bool same_rec(const struct fe_eb_index_rec *a, const struct fe_eb_index_rec *b)
{
    return a->event == b->event && a->offset == b->offset && a->bytes == b->bytes &&
           a->n_arrived == b->n_arrived && a->n_expected == b->n_expected &&
           a->builder == b->builder && a->state == b->state;
}

static void table_layout(void **state)
{
    (void)state;
    struct fe_eb_msg m = table_msg(), d;
    uint8_t b[64];
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    static const uint8_t head[] = {
        0x0B, 0,    3,    1,    0,    0,    0x01, 0x02,              /* header */
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,              /* first event */
        0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,              /* epoch, skipped */
        2,    0,    0,    0,    0,    0,                             /* runs */
        0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0,    1,    0, 2, 0, 3}; /* run 0, run 1 */
    assert_memory_equal(b, head, sizeof head);
    for (size_t i = sizeof head; i < 64; i++) assert_int_equal(b[i], 0);
    assert_true(fe_eb_msg_is_eb(b, 64));
    enum fe_eb_msg_reason why;
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, &why), 0);
    assert_int_equal(why, FE_EB_M_OK);
    assert_true(same_table(&d.u.table, &m.u.table));
}

static void announce_progress_round_trip(void **state)
{
    (void)state;
    struct fe_eb_msg m, d;
    memset(&m, 0, sizeof m);
    m.type = FE_EB_MSG_ANNOUNCE;
    m.u.announce = (struct fe_eb_announce){7, 4096, 123456789012ull, 99};
    uint8_t b[64];
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    assert_int_equal(b[2], 1);
    assert_int_equal(b[7], 7);
    assert_int_equal(b[10], 0x10); /* 4096 at bytes 8..11 */
    assert_int_equal(b[39], 99);   /* newest event at 32..39 */
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, NULL), 0);
    assert_int_equal(d.u.announce.builder, 7);
    assert_int_equal(d.u.announce.n_slots, 4096);
    assert_int_equal(d.u.announce.released, 123456789012ull);
    assert_int_equal(d.u.announce.newest_event, 99);
    m.u.announce.n_slots = 0;
    assert_int_equal(fe_eb_msg_encode(b, &m), FE_EINVAL);

    memset(&m, 0, sizeof m);
    m.type = FE_EB_MSG_PROGRESS;
    m.u.progress = (struct fe_eb_progress){3, 1000, 5};
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    assert_int_equal(b[15], 0xe8); /* 1000 = 0x3e8 at bytes 8..15 */
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, NULL), 0);
    assert_int_equal(d.u.progress.source, 3);
    assert_int_equal(d.u.progress.next_event, 1000);
    assert_int_equal(d.u.progress.busy_events, 5);
}

static void refusals(void **state)
{
    (void)state;
    struct fe_eb_msg m = table_msg(), d;
    uint8_t b[65], c[64];
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    enum fe_eb_msg_reason why;
    assert_int_equal(fe_eb_msg_decode(b, 63, &d, &why), FE_ETRUNC);
    assert_int_equal(why, FE_EB_M_SHORT);
    assert_int_equal(fe_eb_msg_decode(b, 65, &d, &why), FE_EPARSE);
    assert_int_equal(why, FE_EB_M_LONG);
    struct {
        int off;
        uint8_t val;
        enum fe_eb_msg_reason why;
    } cases[] = {
        {0, 0x03, FE_EB_M_NOT_EB}, {3, 2, FE_EB_M_VERSION},   {2, 7, FE_EB_M_TYPE},
        {1, 1, FE_EB_M_RESERVED},  {5, 1, FE_EB_M_RESERVED},  {26, 1, FE_EB_M_RESERVED},
        {25, 1, FE_EB_M_RESERVED}, {29, 1, FE_EB_M_RESERVED}, {42, 1, FE_EB_M_RESERVED},
        {63, 1, FE_EB_M_RESERVED}, {24, 0, FE_EB_M_RUNS},     {24, 6, FE_EB_M_RUNS},
        {41, 0, FE_EB_M_RUNS}, /* run 1 of 0 events */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(c, b, 64);
        c[cases[i].off] = cases[i].val;
        assert_int_equal(fe_eb_msg_decode(c, 64, &d, &why), FE_EPARSE);
        assert_int_equal(why, cases[i].why);
    }
    /* past 2^64 */
    m.u.table.first_event = UINT64_MAX - 5;
    assert_int_equal(fe_eb_msg_encode(c, &m), FE_EINVAL);
    m = table_msg();
    m.u.table.n_runs = 0;
    assert_int_equal(fe_eb_msg_encode(c, &m), FE_EINVAL);
    m.type = 9;
    assert_int_equal(fe_eb_msg_encode(c, &m), FE_EINVAL);
    assert_string_equal(fe_eb_msg_reason_name(FE_EB_M_RUNS), "table runs");
}

/* An older peer: the side channel's own decoder and front-end refuse every new message, and
 * nothing changes. */
static void old_peers_refuse(void **state)
{
    (void)state;
    struct fe_sc_fe fe;
    struct fe_sc_fe_config fc;
    fe_sc_fe_config_default(&fc);
    assert_int_equal(fe_sc_fe_init(&fe, &fc), 0);
    struct fe_eb_msg ms[6];
    memset(ms, 0, sizeof ms);
    ms[0] = table_msg();
    ms[1].type = FE_EB_MSG_ANNOUNCE;
    ms[1].u.announce.n_slots = 1;
    ms[2].type = FE_EB_MSG_PROGRESS;
    ms[3] = ring_msg();
    ms[4] = join_msg();
    ms[5] = start_msg();
    for (int i = 0; i < 6; i++) {
        uint8_t b[64];
        assert_int_equal(fe_eb_msg_encode(b, &ms[i]), 0);
        struct fe_sc_msg sm;
        enum fe_sc_reason why;
        assert_int_equal(fe_sc_decode(b, 64, &sm, &why), FE_EPARSE);
        assert_int_equal(why, FE_SC_R_REQUEST);
        struct fe_sc_fe before = fe;
        struct fe_sc_fe_result res;
        assert_true(fe_sc_fe_input(&fe, 0, b, 64, 1, 1000, &res) < 0);
        assert_memory_equal(before.qp, fe.qp, sizeof fe.qp);
        assert_false(res.reply);
    }
    /* and a side-channel message is not an event-building one */
    struct fe_sc_msg sm;
    memset(&sm, 0, sizeof sm);
    sm.info_valid = true;
    sm.request = FE_SC_REQ_OPEN_QP;
    uint8_t b[64];
    assert_int_equal(fe_sc_encode(b, &sm), 0);
    assert_false(fe_eb_msg_is_eb(b, 64));
}

/* The ring message: its layout, a round trip, and each geometry check. */
static void ring_round_trip_and_refusals(void **state)
{
    (void)state;
    struct fe_eb_msg m = ring_msg(), d;
    uint8_t b[64];
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    static const uint8_t head[] = {0x0B, 0, 4,    1,  0, 0,    0,    2,    /* header, builder 2 */
                                   0,    0, 0,    64, 0, 0x12, 0x34, 0x56, /* S, QPN */
                                   0,    0, 0,    0,  0, 1,    0,    0,    /* slot bytes */
                                   1,    0, 0,    3,  0, 0,    0,    0,    /* policy, builders */
                                   0,    0, 0x10, 0,  0, 0,    0,    0,    /* frag max */
                                   0,    0, 0,    0,  0, 0,    0,    7};   /* first event */
    assert_memory_equal(b, head, sizeof head);
    for (size_t i = sizeof head; i < 64; i++) assert_int_equal(b[i], 0);
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, NULL), 0);
    assert_int_equal(d.type, FE_EB_MSG_RING);
    assert_memory_equal(&d.u.ring, &m.u.ring, sizeof m.u.ring);
    struct fe_eb_msg bad[6];
    for (int i = 0; i < 6; i++) bad[i] = ring_msg();
    bad[0].u.ring.n_slots = 0;
    bad[1].u.ring.qpn = 1u << 24;
    bad[2].u.ring.frag_max_bytes = 0;
    bad[3].u.ring.slot_bytes = 0x0FFF;
    bad[4].u.ring.builder = 3; /* round-robin over 3: builders 0..2 */
    bad[5].u.ring.policy = 2;
    for (int i = 0; i < 6; i++) assert_int_equal(fe_eb_msg_encode(b, &bad[i]), FE_EINVAL);
    /* on the wire: each is refused with a reason, nothing written */
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    b[11] = 0; /* S = 0 */
    enum fe_eb_msg_reason why;
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, &why), FE_EPARSE);
    assert_int_equal(why, FE_EB_M_VALUE);
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    b[12] = 1; /* QPN past 24 bits */
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, &why), FE_EPARSE);
    assert_int_equal(why, FE_EB_M_RESERVED);
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    b[50] = 1;
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, &why), FE_EPARSE);
    assert_int_equal(why, FE_EB_M_RESERVED);
}

/* JOIN and START: their layouts (bytes 24..31 and 1, 5 stay zero, like every message's, so an
 * older side channel refuses them for their request), round trips and refusals. */
static void join_start_round_trip_and_refusals(void **state)
{
    (void)state;
    struct fe_eb_msg m = join_msg(), d;
    uint8_t b[64];
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    static const uint8_t jhead[] = {
        0x0B, 0,    5,    1,    0,    0,    0,    3,     /* source 3 */
        0,    2,    1,    0,    0,    0,    0,    0,     /* builder, flag */
        1,    2,    3,    4,    5,    6,    7,    8,     /* next event */
        0,    0,    0,    0,    0,    0,    0,    0,     /* zero */
        0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}; /* first event */
    assert_memory_equal(b, jhead, sizeof jhead);
    for (size_t i = sizeof jhead; i < 64; i++) assert_int_equal(b[i], 0);
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, NULL), 0);
    assert_int_equal(d.type, FE_EB_MSG_JOIN);
    assert_memory_equal(&d.u.join, &m.u.join, sizeof m.u.join);
    /* an event echoed without the flag */
    m.u.join.has_first = false;
    assert_int_equal(fe_eb_msg_encode(b, &m), FE_EINVAL);
    m.u.join.first_event = 0;
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    assert_int_equal(b[10], 0);
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, NULL), 0);
    assert_false(d.u.join.has_first);
    enum fe_eb_msg_reason why;
    b[39] = 1; /* first event without the flag */
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, &why), FE_EPARSE);
    assert_int_equal(why, FE_EB_M_VALUE);
    static const struct {
        int off;
        uint8_t val;
    } jres[] = {{10, 2}, {11, 1}, {15, 1}, {24, 1}, {25, 1}, {29, 1}, {40, 1}, {63, 1}};
    for (size_t i = 0; i < sizeof jres / sizeof jres[0]; i++) {
        m = join_msg();
        assert_int_equal(fe_eb_msg_encode(b, &m), 0);
        b[jres[i].off] = jres[i].val;
        assert_int_equal(fe_eb_msg_decode(b, 64, &d, &why), FE_EPARSE);
        assert_int_equal(why, FE_EB_M_RESERVED);
    }

    m = start_msg();
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    static const uint8_t shead[] = {0x0B, 0, 6, 1, 0, 0, 0,    2,     /* builder 2 */
                                    0,    3, 0, 0, 0, 0, 0,    0,     /* of 3 */
                                    0,    0, 0, 0, 0, 0, 0x18, 0x71}; /* first event 6257 */
    assert_memory_equal(b, shead, sizeof shead);
    for (size_t i = sizeof shead; i < 64; i++) assert_int_equal(b[i], 0);
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, NULL), 0);
    assert_int_equal(d.type, FE_EB_MSG_START);
    assert_memory_equal(&d.u.start, &m.u.start, sizeof m.u.start);
    struct fe_eb_msg bad[3] = {start_msg(), start_msg(), start_msg()};
    bad[0].u.start.first_event = 6258; /* builder 0's event, not 2's */
    bad[1].u.start.n_builders = 2;     /* builder 2 of 2 */
    bad[2].u.start.n_builders = 0;
    for (int i = 0; i < 3; i++) assert_int_equal(fe_eb_msg_encode(b, &bad[i]), FE_EINVAL);
    m = start_msg();
    assert_int_equal(fe_eb_msg_encode(b, &m), 0);
    b[23] = 0x72; /* 6258 on the wire */
    assert_int_equal(fe_eb_msg_decode(b, 64, &d, &why), FE_EPARSE);
    assert_int_equal(why, FE_EB_M_VALUE);
    for (int off = 10; off < 64; off++) {
        if (off >= 16 && off < 24) continue;
        assert_int_equal(fe_eb_msg_encode(b, &m), 0);
        b[off] = 1;
        assert_int_equal(fe_eb_msg_decode(b, 64, &d, &why), FE_EPARSE);
        assert_int_equal(why, FE_EB_M_RESERVED);
    }
}

static void index_round_trip_and_refusals(void **state)
{
    (void)state;
    uint8_t buf[16 + 3 * 32];
    fe_eb_index_header(buf);
    assert_memory_equal(buf, "FEEBIDX\x01\x00\x00\x00\x20", 12);
    struct fe_eb_index_rec r[3] = {
        {10, 0, 100, 4, 4, 1, FE_EB_BUILT},
        {12, 100, 50, 2, 4, 0, FE_EB_INCOMPLETE},
        {11, 150, 0, 0, 4, 1, FE_EB_INCOMPLETE},
    };
    for (int i = 0; i < 3; i++) assert_int_equal(fe_eb_index_encode(buf + 16 + 32 * i, &r[i]), 0);
    struct fe_eb_index_reader rd;
    struct fe_eb_index_rec o;
    assert_int_equal(fe_eb_index_reader_init(&rd, buf, sizeof buf), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fe_eb_index_reader_next(&rd, &o), 1);
        assert_true(same_rec(&o, &r[i]));
    }
    assert_int_equal(fe_eb_index_reader_next(&rd, &o), 0);

    struct fe_eb_index_rec bad = {1, 0, 1, 3, 4, 0, FE_EB_BUILT};
    assert_int_equal(fe_eb_index_encode(buf, &bad), FE_EINVAL);
    bad.n_expected = 0;
    assert_int_equal(fe_eb_index_encode(buf, &bad), FE_EINVAL);

    struct {
        int off;
        uint8_t val;
        int rc;
        enum fe_eb_index_reason why;
    } cases[] = {
        {0, 'X', FE_EPARSE, FE_EB_I_MAGIC},
        {7, 2, FE_EPARSE, FE_EB_I_VERSION},
        {11, 0x40, FE_EPARSE, FE_EB_I_VERSION},
        {15, 1, FE_EPARSE, FE_EB_I_RESERVED},
        {16 + 26, FE_EB_LOST, FE_EPARSE, FE_EB_I_STATE},
        {16 + 21, 3, FE_EPARSE, FE_EB_I_STATE},  /* built with 3 of 4 */
        {16 + 21, 5, FE_EPARSE, FE_EB_I_COUNTS}, /* 5 of 4 */
        {16 + 32 + 15, 99, FE_EPARSE, FE_EB_I_OFFSET},
        {16 + 31, 1, FE_EPARSE, FE_EB_I_RESERVED},
    };
    uint8_t c[sizeof buf];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(c, buf, sizeof buf);
        c[cases[i].off] = cases[i].val;
        int rc = fe_eb_index_reader_init(&rd, c, sizeof c);
        while (rc == 0 || rc == 1) rc = fe_eb_index_reader_next(&rd, &o);
        assert_int_equal(rc, cases[i].rc);
        assert_int_equal(rd.why, cases[i].why);
        assert_int_equal(fe_eb_index_reader_next(&rd, &o), cases[i].rc); /* stays stopped */
    }
    assert_int_equal(fe_eb_index_reader_init(&rd, buf, sizeof buf - 1), 0);
    int rc;
    while ((rc = fe_eb_index_reader_next(&rd, &o)) == 1) {
    }
    assert_int_equal(rc, FE_ETRUNC);
    assert_int_equal(rd.records, 2);
    assert_int_equal(fe_eb_index_reader_init(&rd, buf, 15), FE_ETRUNC);
}

static void report_round_trip_and_refusals(void **state)
{
    (void)state;
    static struct fe_eb_report r, o;
    r = (struct fe_eb_report){.source = 3, .n_builders = 2, .triggered = 100, .busy = 10};
    r.b[0] = (struct fe_eb_report_builder){50, 0, 0};
    r.b[1] = (struct fe_eb_report_builder){20, 15, 5};
    uint8_t buf[32 + 2 * 32];
    assert_int_equal(fe_eb_report_bytes(2), sizeof buf);
    assert_int_equal(fe_eb_report_encode(buf, sizeof buf - 1, &r), FE_ENOSPC);
    assert_int_equal(fe_eb_report_encode(buf, sizeof buf, &r), 0);
    assert_memory_equal(buf, "FEEBSRC\x01\x00\x03\x00\x02\x00\x00\x00\x20", 16);
    enum fe_eb_report_reason why;
    assert_int_equal(fe_eb_report_decode(buf, sizeof buf, &o, &why), 0);
    assert_int_equal(o.source, 3);
    assert_int_equal(o.n_builders, 2);
    assert_int_equal(o.triggered, 100);
    assert_int_equal(o.busy, 10);
    assert_memory_equal(o.b, r.b, 2 * sizeof r.b[0]);

    r.b[1].dropped = 16; /* 101 events counted, 100 triggered */
    assert_int_equal(fe_eb_report_encode(buf, sizeof buf, &r), FE_EINVAL);
    r.b[1].dropped = 15;
    r.n_builders = 0;
    assert_int_equal(fe_eb_report_encode(buf, sizeof buf, &r), FE_EINVAL);

    struct {
        int off;
        uint8_t val;
        enum fe_eb_report_reason why;
    } cases[] = {
        {0, 'X', FE_EB_R_MAGIC},
        {7, 2, FE_EB_R_VERSION},
        {15, 0x40, FE_EB_R_VERSION},
        {11, 0, FE_EB_R_BUILDERS},
        {10, 1, FE_EB_R_BUILDERS},           /* 258 builders */
        {11, 3, FE_EB_R_SHORT},              /* a third record is not there */
        {11, 1, FE_EB_R_LONG},               /* one record and 32 more bytes */
        {23, 50, FE_EB_R_COUNTS},            /* 50 triggered */
        {32 + 32 + 8, 0x80, FE_EB_R_COUNTS}, /* a count near 2^63 */
        {32 + 31, 1, FE_EB_R_RESERVED},
    };
    uint8_t c[sizeof buf];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(c, buf, sizeof buf);
        c[cases[i].off] = cases[i].val;
        int rc = fe_eb_report_decode(c, sizeof c, &o, &why);
        assert_int_equal(rc, cases[i].why == FE_EB_R_SHORT ? FE_ETRUNC : FE_EPARSE);
        assert_int_equal(why, cases[i].why);
    }
    assert_int_equal(fe_eb_report_decode(buf, 31, &o, &why), FE_ETRUNC);
    assert_int_equal(why, FE_EB_R_SHORT);
}

static void ledger(void **state)
{
    (void)state;
    struct fe_eb_ledger *l;
    assert_int_equal(fe_eb_ledger_create(&l, 100, 5), 0);
    struct fe_eb_ledger_report r;
    assert_false(fe_eb_ledger_check(l, &r));
    assert_int_equal(r.count[FE_EB_NONE], 5);
    assert_int_equal(r.first_missing, 100);
    assert_int_equal(fe_eb_ledger_record(l, 100, FE_EB_BUILT, 1, 0), 0);
    assert_int_equal(fe_eb_ledger_record(l, 101, FE_EB_INCOMPLETE, 1, 2), 0);
    assert_int_equal(fe_eb_ledger_record(l, 102, FE_EB_LOST, 2, 0), 0);
    assert_int_equal(fe_eb_ledger_record(l, 103, FE_EB_BUSY, 0, 0), 0);
    assert_false(fe_eb_ledger_check(l, &r));
    assert_int_equal(r.first_missing, 104);
    assert_int_equal(fe_eb_ledger_record(l, 104, FE_EB_BUILT, 0, 0), 0);
    assert_true(fe_eb_ledger_check(l, &r));
    assert_int_equal(fe_eb_ledger_state(l, 102), FE_EB_LOST);
    assert_int_equal(fe_eb_ledger_record(l, 104, FE_EB_BUILT, 0, 0), FE_ESTATE);
    assert_int_equal(fe_eb_ledger_record(l, 105, FE_EB_BUILT, 0, 0), FE_ERANGE);
    assert_int_equal(fe_eb_ledger_record(l, 99, FE_EB_NONE, 0, 0), FE_EINVAL);
    assert_false(fe_eb_ledger_check(l, &r));
    assert_int_equal(r.twice, 1);
    assert_int_equal(r.out_of_range, 1);
    assert_int_equal(r.count[FE_EB_BUILT], 2);
    assert_string_equal(fe_eb_final_name(FE_EB_BUSY), "busy");
    fe_eb_ledger_destroy(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_layout),
        cmocka_unit_test(announce_progress_round_trip),
        cmocka_unit_test(refusals),
        cmocka_unit_test(old_peers_refuse),
        cmocka_unit_test(ring_round_trip_and_refusals),
        cmocka_unit_test(join_start_round_trip_and_refusals),
        cmocka_unit_test(index_round_trip_and_refusals),
        cmocka_unit_test(report_round_trip_and_refusals),
        cmocka_unit_test(ledger),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
