/* The event-building side-channel messages: 64 bytes, big-endian, the side channel's request
 * code 5 in byte 0. Layouts in docs/event-building.md. */
#include <string.h>

#include "eb/bytes.h"
#include "feroce/eb.h"

/* byte 0 as the side channel reads it: info valid (bit 0), request (bits 1..3), no ack */
#define EB_BYTE0 (0x01u | (FE_EB_SC_REQUEST << 1))

/* Bytes 1, 5, 25 and 29 are always zero: a side-channel decoder without event building checks
 * them (the first bytes of its 24-bit slots) before the request code, and must refuse these
 * messages for their unknown request, the reason that names what happened. */
enum {
    OFF_TYPE = 2,
    OFF_VERSION = 3,
    OFF_SENDER = 6,
    /* announce */
    OFF_A_SLOTS = 8,
    OFF_A_RELEASED = 16,
    OFF_A_NEWEST = 32,
    END_A = 40,
    /* progress */
    OFF_P_NEXT = 8,
    OFF_P_BUSY = 16,
    END_P = 24,
    /* table */
    OFF_T_FIRST = 8,
    OFF_T_EPOCH = 16,
    OFF_T_SKIPPED = 20,
    OFF_T_NRUNS = 24,
    OFF_T_RUNS = 30,
    RUN_BYTES = 6,
    /* ring */
    OFF_R_SLOTS = 8,
    OFF_R_QPN = 12,
    OFF_R_SLOT_BYTES = 16,
    OFF_R_POLICY = 24,
    OFF_R_BUILDERS = 26,
    OFF_R_FRAG_MAX = 32,
    OFF_R_FIRST = 40,
    END_R = 48,
    /* join */
    OFF_J_BUILDER = 8,
    OFF_J_FLAGS = 10,
    OFF_J_NEXT = 16,
    OFF_J_FIRST = 32,
    END_J = 40,
    J_HAS_FIRST = 0x01,
    /* start */
    OFF_S_BUILDERS = 8,
    OFF_S_FIRST = 16,
    END_S = 24,
};

const char *fe_eb_msg_reason_name(int r)
{
    static const char *const names[FE_EB_M_MAX] = {
        [FE_EB_M_OK] = "ok",
        [FE_EB_M_SHORT] = "short",
        [FE_EB_M_LONG] = "long",
        [FE_EB_M_NOT_EB] = "not event building",
        [FE_EB_M_VERSION] = "version",
        [FE_EB_M_TYPE] = "message type",
        [FE_EB_M_RESERVED] = "reserved bytes",
        [FE_EB_M_RUNS] = "table runs",
        [FE_EB_M_VALUE] = "field range",
    };
    return r >= 0 && r < FE_EB_M_MAX ? names[r] : "unknown";
}

bool fe_eb_msg_is_eb(const uint8_t *buf, size_t len)
{
    return buf && len >= 1 && buf[0] == EB_BYTE0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

static enum fe_eb_msg_reason check_table_runs(const struct fe_eb_table *t)
{
    if (t->n_runs < 1 || t->n_runs > FE_EB_TABLE_RUNS) return FE_EB_M_RUNS;
    for (unsigned i = 0; i < t->n_runs; i++)
        if (!t->run[i].count) return FE_EB_M_RUNS;
    if (t->first_event > UINT64_MAX - fe_eb_table_events(t)) return FE_EB_M_RUNS;
    return FE_EB_M_OK;
}

static enum fe_eb_msg_reason check_ring(const struct fe_eb_ring *r)
{
    bool ok = r->n_slots >= 1 && r->n_slots <= FE_EB_MAX_SLOTS && r->qpn <= 0xFFFFFFu &&
              r->frag_max_bytes >= 1 && r->slot_bytes >= r->frag_max_bytes &&
              r->slot_bytes <= FE_EB_MAX_SLOT_BYTES && r->policy <= FE_EB_POLICY_RR;
    if (ok && r->policy == FE_EB_POLICY_RR) ok = r->builder < r->n_builders;
    return ok ? FE_EB_M_OK : FE_EB_M_VALUE;
}

/* The flag and the event agree: no event echoed without the flag. */
static enum fe_eb_msg_reason check_join(const struct fe_eb_join *j)
{
    return j->has_first || !j->first_event ? FE_EB_M_OK : FE_EB_M_VALUE;
}

/* E0 is one of the builder's own events: round-robin gives it E with E mod M = builder. */
static enum fe_eb_msg_reason check_start(const struct fe_eb_start *st)
{
    bool ok = st->n_builders >= 1 && st->builder < st->n_builders &&
              st->first_event % st->n_builders == st->builder;
    return ok ? FE_EB_M_OK : FE_EB_M_VALUE;
}

static enum fe_eb_msg_reason check_msg(const struct fe_eb_msg *m)
{
    switch (m->type) {
    case FE_EB_MSG_ANNOUNCE:
        return m->u.announce.n_slots >= 1 && m->u.announce.n_slots <= FE_EB_MAX_SLOTS
                   ? FE_EB_M_OK
                   : FE_EB_M_VALUE;
    case FE_EB_MSG_PROGRESS:
        return FE_EB_M_OK;
    case FE_EB_MSG_TABLE:
        return check_table_runs(&m->u.table);
    case FE_EB_MSG_RING:
        return check_ring(&m->u.ring);
    case FE_EB_MSG_JOIN:
        return check_join(&m->u.join);
    case FE_EB_MSG_START:
        return check_start(&m->u.start);
    default:
        return FE_EB_M_TYPE;
    }
}

static void put_table(uint8_t *out, const struct fe_eb_table *t)
{
    eb_put16(out + OFF_SENDER, t->manager);
    eb_put32(out + OFF_T_EPOCH, t->epoch);
    eb_put32(out + OFF_T_SKIPPED, t->skipped);
    out[OFF_T_NRUNS] = t->n_runs;
    eb_put64(out + OFF_T_FIRST, t->first_event);
    /* n_runs is checked (check_msg); the second bound is for the compiler, which with some
     * profiles cannot see that and warns of writes past the message */
    for (unsigned i = 0; i < t->n_runs && i < FE_EB_TABLE_RUNS; i++) {
        uint8_t *r = out + OFF_T_RUNS + i * RUN_BYTES;
        eb_put16(r, t->run[i].builder);
        eb_put16(r + 2, t->run[i].first_slot);
        eb_put16(r + 4, t->run[i].count);
    }
}

static void put_join_start(uint8_t *out, const struct fe_eb_msg *m)
{
    if (m->type == FE_EB_MSG_JOIN) {
        const struct fe_eb_join *j = &m->u.join;
        eb_put16(out + OFF_SENDER, j->source);
        eb_put16(out + OFF_J_BUILDER, j->builder);
        out[OFF_J_FLAGS] = j->has_first ? J_HAS_FIRST : 0;
        eb_put64(out + OFF_J_NEXT, j->next_event);
        eb_put64(out + OFF_J_FIRST, j->first_event);
    } else {
        const struct fe_eb_start *st = &m->u.start;
        eb_put16(out + OFF_SENDER, st->builder);
        eb_put16(out + OFF_S_BUILDERS, st->n_builders);
        eb_put64(out + OFF_S_FIRST, st->first_event);
    }
}

int fe_eb_msg_encode(uint8_t out[FE_EB_MSG_LEN], const struct fe_eb_msg *m)
{
    if (check_msg(m) != FE_EB_M_OK) return FE_EINVAL;
    memset(out, 0, FE_EB_MSG_LEN);
    out[0] = EB_BYTE0;
    out[OFF_TYPE] = m->type;
    out[OFF_VERSION] = FE_EB_VERSION;
    if (m->type == FE_EB_MSG_ANNOUNCE) {
        const struct fe_eb_announce *a = &m->u.announce;
        eb_put16(out + OFF_SENDER, a->builder);
        eb_put32(out + OFF_A_SLOTS, a->n_slots);
        eb_put64(out + OFF_A_RELEASED, a->released);
        eb_put64(out + OFF_A_NEWEST, a->newest_event);
    } else if (m->type == FE_EB_MSG_PROGRESS) {
        const struct fe_eb_progress *p = &m->u.progress;
        eb_put16(out + OFF_SENDER, p->source);
        eb_put64(out + OFF_P_NEXT, p->next_event);
        eb_put64(out + OFF_P_BUSY, p->busy_events);
    } else if (m->type == FE_EB_MSG_RING) {
        const struct fe_eb_ring *r = &m->u.ring;
        eb_put16(out + OFF_SENDER, r->builder);
        eb_put32(out + OFF_R_SLOTS, r->n_slots);
        eb_put32(out + OFF_R_QPN, r->qpn);
        eb_put64(out + OFF_R_SLOT_BYTES, r->slot_bytes);
        out[OFF_R_POLICY] = r->policy;
        eb_put16(out + OFF_R_BUILDERS, r->n_builders);
        eb_put32(out + OFF_R_FRAG_MAX, r->frag_max_bytes);
        eb_put64(out + OFF_R_FIRST, r->first_event);
    } else if (m->type == FE_EB_MSG_JOIN || m->type == FE_EB_MSG_START) {
        put_join_start(out, m);
    } else {
        put_table(out, &m->u.table);
    }
    return 0;
}

/* Reserved bytes must be zero: room for later versions, which a decoder of this one then refuses
 * instead of misreading. */
static enum fe_eb_msg_reason check_reserved(const uint8_t *b, unsigned type)
{
    bool ok;
    if (b[1] || b[4] || b[5]) return FE_EB_M_RESERVED;
    if (type == FE_EB_MSG_ANNOUNCE) {
        ok = all_zero(b + 12, 4) && all_zero(b + 24, 8) && all_zero(b + END_A, 64 - END_A);
    } else if (type == FE_EB_MSG_PROGRESS) {
        ok = all_zero(b + END_P, 64 - END_P);
    } else if (type == FE_EB_MSG_RING) {
        ok = b[OFF_R_QPN] == 0 && b[25] == 0 && all_zero(b + 28, 4) && all_zero(b + 36, 4) &&
             all_zero(b + END_R, 64 - END_R);
    } else if (type == FE_EB_MSG_JOIN) {
        /* unknown flags are refused: a later version's meaning must not be misread */
        ok = (b[OFF_J_FLAGS] & ~J_HAS_FIRST) == 0 && all_zero(b + 11, 5) && all_zero(b + 24, 8) &&
             all_zero(b + END_J, 64 - END_J);
    } else if (type == FE_EB_MSG_START) {
        ok = all_zero(b + 10, 6) && all_zero(b + END_S, 64 - END_S);
    } else {
        unsigned n = b[OFF_T_NRUNS];
        if (n < 1 || n > FE_EB_TABLE_RUNS) return FE_EB_M_RUNS;
        size_t used_end = OFF_T_RUNS + n * RUN_BYTES;
        ok = all_zero(b + 25, 5) && all_zero(b + used_end, 64 - used_end);
    }
    return ok ? FE_EB_M_OK : FE_EB_M_RESERVED;
}

static enum fe_eb_msg_reason check_frame(const uint8_t *buf, size_t len)
{
    if (!buf || len < FE_EB_MSG_LEN) return FE_EB_M_SHORT;
    if (len > FE_EB_MSG_LEN) return FE_EB_M_LONG;
    if (buf[0] != EB_BYTE0) return FE_EB_M_NOT_EB;
    if (buf[OFF_VERSION] != FE_EB_VERSION) return FE_EB_M_VERSION;
    unsigned t = buf[OFF_TYPE];
    if (t < FE_EB_MSG_ANNOUNCE || t > FE_EB_MSG_START) return FE_EB_M_TYPE;
    return check_reserved(buf, t);
}

static void get_join_start(const uint8_t *b, struct fe_eb_msg *m)
{
    if (m->type == FE_EB_MSG_JOIN) {
        struct fe_eb_join *j = &m->u.join;
        j->source = eb_get16(b + OFF_SENDER);
        j->builder = eb_get16(b + OFF_J_BUILDER);
        j->has_first = b[OFF_J_FLAGS] & J_HAS_FIRST;
        j->next_event = eb_get64(b + OFF_J_NEXT);
        j->first_event = eb_get64(b + OFF_J_FIRST);
    } else {
        struct fe_eb_start *st = &m->u.start;
        st->builder = eb_get16(b + OFF_SENDER);
        st->n_builders = eb_get16(b + OFF_S_BUILDERS);
        st->first_event = eb_get64(b + OFF_S_FIRST);
    }
}

static void get_body(const uint8_t *b, struct fe_eb_msg *m)
{
    if (m->type == FE_EB_MSG_ANNOUNCE) {
        struct fe_eb_announce *a = &m->u.announce;
        a->builder = eb_get16(b + OFF_SENDER);
        a->n_slots = eb_get32(b + OFF_A_SLOTS);
        a->released = eb_get64(b + OFF_A_RELEASED);
        a->newest_event = eb_get64(b + OFF_A_NEWEST);
    } else if (m->type == FE_EB_MSG_PROGRESS) {
        struct fe_eb_progress *p = &m->u.progress;
        p->source = eb_get16(b + OFF_SENDER);
        p->next_event = eb_get64(b + OFF_P_NEXT);
        p->busy_events = eb_get64(b + OFF_P_BUSY);
    } else if (m->type == FE_EB_MSG_RING) {
        struct fe_eb_ring *r = &m->u.ring;
        r->builder = eb_get16(b + OFF_SENDER);
        r->n_slots = eb_get32(b + OFF_R_SLOTS);
        r->qpn = eb_get32(b + OFF_R_QPN);
        r->slot_bytes = eb_get64(b + OFF_R_SLOT_BYTES);
        r->policy = b[OFF_R_POLICY];
        r->n_builders = eb_get16(b + OFF_R_BUILDERS);
        r->frag_max_bytes = eb_get32(b + OFF_R_FRAG_MAX);
        r->first_event = eb_get64(b + OFF_R_FIRST);
    } else if (m->type == FE_EB_MSG_JOIN || m->type == FE_EB_MSG_START) {
        get_join_start(b, m);
    } else {
        struct fe_eb_table *t = &m->u.table;
        t->manager = eb_get16(b + OFF_SENDER);
        t->epoch = eb_get32(b + OFF_T_EPOCH);
        t->skipped = eb_get32(b + OFF_T_SKIPPED);
        t->n_runs = b[OFF_T_NRUNS];
        t->first_event = eb_get64(b + OFF_T_FIRST);
        for (unsigned i = 0; i < t->n_runs; i++) {
            const uint8_t *r = b + OFF_T_RUNS + i * RUN_BYTES;
            t->run[i] = (struct fe_eb_run){eb_get16(r), eb_get16(r + 2), eb_get16(r + 4)};
        }
    }
}

int fe_eb_msg_decode(const uint8_t *buf, size_t len, struct fe_eb_msg *m,
                     enum fe_eb_msg_reason *why)
{
    enum fe_eb_msg_reason r = check_frame(buf, len);
    struct fe_eb_msg tmp;
    if (r == FE_EB_M_OK) {
        memset(&tmp, 0, sizeof tmp);
        tmp.type = buf[OFF_TYPE];
        get_body(buf, &tmp);
        r = check_msg(&tmp);
    }
    if (why) *why = r;
    if (r != FE_EB_M_OK) return r == FE_EB_M_SHORT ? FE_ETRUNC : FE_EPARSE;
    *m = tmp;
    return 0;
}
