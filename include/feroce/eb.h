/* Event building: which builder gets event E and where each front-end's fragment goes
 * (assignment), how a builder collects the fragments of an event (assembly), the event manager
 * that turns builders' free slots into assignment tables, the 64-byte side-channel messages they
 * exchange, a ledger that proves every triggered event ends in exactly one state, and the
 * event-index record of built events. See docs/event-building.md.
 *
 * Sans-I/O like the transport and CC cores: no I/O, no clock; every call that depends on time
 * takes now_ns. Memory is allocated only at create; the per-fragment and per-event paths never
 * allocate.
 *
 * The ring rule, shared by every policy: the k-th event (k = 0, 1, ...) that builder b receives
 * goes to its slot k mod S, and the fragment of source s of an event in slot j lands at
 * base + j * slot_bytes + s * frag_max_bytes. A front-end therefore computes the remote address
 * from (builder, slot, source) with no round trip. */
#ifndef FEROCE_EB_H
#define FEROCE_EB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_EB_MAX_SOURCES  65535u /* source indices are 16 bits on the side channel */
#define FE_EB_MAX_SLOTS    65536u /* slot indices are 16 bits in a table run */
#define FE_EB_MAX_BUILDERS 65535u

/* ---- the immediate: slot and event number ----
 *
 * A WRITE-with-immediate completion on a real RNIC carries the 32-bit immediate and the length,
 * not the address written, so the immediate names the slot: its high slot_bits bits are the slot,
 * its low 32 - slot_bits bits the low bits of the event number. The builder recovers the full
 * 64-bit event number as the one nearest to the newest event it has opened (serial-number
 * arithmetic, like PSNs): a fragment is read correctly while it is less than 2^(31 - slot_bits)
 * events away from that newest event. slot_bits = ceil(log2 S). */
unsigned fe_eb_slot_bits(uint32_t n_slots);
static inline uint32_t fe_eb_imm_make(unsigned slot_bits, uint32_t slot, uint64_t event)
{
    uint32_t ev_mask = slot_bits ? (uint32_t)(0xFFFFFFFFu >> slot_bits) : 0xFFFFFFFFu;
    return (slot_bits ? slot << (32 - slot_bits) : 0) | ((uint32_t)event & ev_mask);
}
static inline uint32_t fe_eb_imm_slot(unsigned slot_bits, uint32_t imm)
{
    return slot_bits ? imm >> (32 - slot_bits) : 0;
}
/* The 64-bit event nearest to ref whose low (32 - slot_bits) bits are those of imm. */
uint64_t fe_eb_imm_event(unsigned slot_bits, uint32_t imm, uint64_t ref);

/* ---- static round-robin ("barrel shifter") ----
 * builder = E mod M, slot = (E div M) mod S: no manager, no table. */
struct fe_eb_target {
    uint16_t builder;
    uint32_t slot;
};
/* Round-robin: the ring position event E takes at its builder (E mod M), E div M; the slot is
 * the position mod S. A ring that starts at event E0 starts at E0's position. */
static inline uint64_t fe_eb_rr_position(uint64_t event, uint32_t n_builders)
{
    return event / n_builders;
}
static inline struct fe_eb_target fe_eb_rr_assign(uint64_t event, uint32_t n_builders,
                                                  uint32_t n_slots)
{
    struct fe_eb_target t = {(uint16_t)(event % n_builders),
                             (uint32_t)(fe_eb_rr_position(event, n_builders) % n_slots)};
    return t;
}
/* Round-robin: may a front-end write event's fragment now, given its builder's announced
 * watermark `released`? Only once the slot is free: an RNIC places a multi-packet WRITE's data
 * before it checks for the receive the immediate needs, so an RNR NAK alone would come after
 * the slot's previous event was overwritten. (Tables: the manager's credits see to it.) */
static inline bool fe_eb_rr_may_write(uint64_t event, uint32_t n_builders, uint64_t released,
                                      uint32_t n_slots)
{
    return fe_eb_rr_position(event, n_builders) < released + n_slots;
}

/* The first event at or after `event` that round-robin gives to builder (E mod M = builder). */
uint64_t fe_eb_rr_first_at(uint64_t event, uint16_t builder, uint32_t n_builders);

/* ---- round-robin: a builder that joins after the start ----
 * Its ring positions cannot start at the first event: the front-ends have passed it, dropping
 * that builder's fragments. So each front-end that started without it answers its RING with a
 * JOIN naming the first event it can still give it (its next event plus a margin that covers the
 * round trip), and the builder starts its ring at E0, its first event at or after the largest
 * proposal, and tells every front-end E0 with a START (repeated until a JOIN echoes it or a
 * fragment comes). A front-end sends that builder's fragments for every event >= E0 and drops
 * and counts the ones before; one that had passed E0 when it learned it dropped some after E0
 * too, which the builder declares incomplete. Events of the builder below E0 are lost.
 *
 * This is the builder's side: the proposals, and when E0 is decided. A front-end that takes the
 * builder's ring before it starts proposes 0 (it gives every event); while every proposal is 0
 * the builder is on time and nothing is decided. With both a 0 and a late proposal (a mixed
 * start) the ring cannot move past the on-time front-end's fragments: E0 is the builder's first
 * event, and the late front-ends' events between are incomplete. */
/* The front-end's side: the first event it offers a builder whose ring came after it started,
 * its next event plus a margin (a quarter second of triggers at trigger_hz, a fixed count
 * without a rate) that covers the JOIN's and START's round trip before the trigger gets
 * there. */
uint64_t fe_eb_rr_join_offer(uint64_t next_event, uint64_t trigger_hz);

struct fe_eb_rr_join;

/* wait_ns: how long after the first late proposal E0 is decided without the missing ones. */
int fe_eb_rr_join_create(struct fe_eb_rr_join **out, uint32_t n_sources, uint16_t builder,
                         uint32_t n_builders, uint64_t wait_ns);
void fe_eb_rr_join_destroy(struct fe_eb_rr_join *j);
/* Source's JOIN: it can give events from next_event on (0: every one). started: the assembly
 * has taken fragments already, so its ring cannot move: E0 is decided at once as the first
 * event. FE_EINVAL for a source out of range. */
int fe_eb_rr_join_propose(struct fe_eb_rr_join *j, uint64_t now_ns, uint32_t source,
                          uint64_t next_event, bool started);
/* Decides E0 when every source proposed or the wait passed. True when decided. */
bool fe_eb_rr_join_poll(struct fe_eb_rr_join *j, uint64_t now_ns);
/* A late proposal arrived and E0 is not decided: take no fragment yet (the ring's start is
 * about to move). */
bool fe_eb_rr_join_waiting(const struct fe_eb_rr_join *j);
/* True and *first_event once decided (a late join); false while on time or waiting. */
bool fe_eb_rr_join_first(const struct fe_eb_rr_join *j, uint64_t *first_event);
/* The source knows E0 (its JOIN echoed it, or its fragment arrived): no more START to it. */
void fe_eb_rr_join_acked(struct fe_eb_rr_join *j, uint32_t source);
/* Decided and the source has not acknowledged: send it a START. */
bool fe_eb_rr_join_needs_start(const struct fe_eb_rr_join *j, uint32_t source);
/* When fe_eb_rr_join_poll next has work; UINT64_MAX if none. */
uint64_t fe_eb_rr_join_deadline(const struct fe_eb_rr_join *j);

/* Where a fragment goes in the builder's memory (relative to its registered base). */
static inline uint64_t fe_eb_frag_offset(uint32_t slot, uint64_t slot_bytes, uint32_t source,
                                         uint32_t frag_max_bytes)
{
    return (uint64_t)slot * slot_bytes + (uint64_t)source * frag_max_bytes;
}

/* ---- assignment tables (availability policy) ----
 * A table chunk assigns the consecutive events first_event, first_event + 1, ... run by run:
 * run i gives its count events to builder run[i].builder, slots first_slot, first_slot + 1, ...
 * (mod S). Chunks are append-only: once issued, an event's assignment never changes. */
#define FE_EB_TABLE_RUNS 5 /* runs in one 64-byte message */

struct fe_eb_run {
    uint16_t builder;
    uint16_t first_slot;
    uint16_t count; /* events, >= 1 */
};

struct fe_eb_table {
    uint16_t manager; /* sender id */
    uint32_t epoch;   /* the manager's incarnation: chunks of an older one are ignored */
    uint64_t first_event;
    uint32_t skipped; /* events just before first_event that no chunk assigns (every front-end
                       * had passed them): a table ending at first_event - skipped takes this
                       * chunk as the next one. Saturates at 2^32 - 1 (then only a front-end
                       * that passed first_event takes it) */
    uint8_t n_runs;   /* 1..FE_EB_TABLE_RUNS */
    struct fe_eb_run run[FE_EB_TABLE_RUNS];
};
/* Events the chunk covers. */
uint64_t fe_eb_table_events(const struct fe_eb_table *t);
/* True when a table holding events up to end (exclusive) can take the chunk: it overlaps or
 * follows, directly or over events the manager skipped. */
bool fe_eb_table_continues(const struct fe_eb_table *t, uint64_t end);

/* A front-end's (or builder's) copy of the tables: the runs covering [base, end), in a ring
 * sized at create. Lookups are O(1) for events reached in order (a cursor), O(log runs)
 * otherwise. */
struct fe_eb_fe_table;

struct fe_eb_fe_stats {
    uint64_t chunks_added;
    uint64_t chunks_dup;  /* already held (a retransmission): ignored */
    uint64_t chunks_gap;  /* starts beyond the end: a chunk was missed; refused */
    uint64_t chunks_old;  /* older epoch, or ends before the base: ignored */
    uint64_t chunks_full; /* no room for its runs: refused */
    uint64_t assigned;    /* lookups answered */
    uint64_t busy;        /* lookups with no table yet: the event is throttled at this source */
    uint64_t stale;       /* lookups below the base (already forgotten) */
};

/* n_slots: S of the builders (slots wrap modulo S). */
int fe_eb_fe_table_create(struct fe_eb_fe_table **out, uint32_t max_runs, uint32_t n_slots,
                          uint64_t first_event);
void fe_eb_fe_table_destroy(struct fe_eb_fe_table *t);
/* 0 added; 1 ignored (duplicate, older); FE_EAGAIN a gap (chunk beyond the end); FE_ENOSPC. */
int fe_eb_fe_table_add(struct fe_eb_fe_table *t, const struct fe_eb_table *chunk);
/* 0 and *out; FE_EAGAIN when no table covers the event (not yet, or the manager skipped it):
 * busy, do not send it, count it;
 * FE_ENOENT when the event is below the base (forgotten). */
int fe_eb_fe_table_lookup(struct fe_eb_fe_table *t, uint64_t event, struct fe_eb_target *out);
/* The front-end has passed every event below event: forgets the runs that end at or before it,
 * and a chunk that starts at event is then contiguous (the manager does not assign events every
 * front-end has passed, they were busy everywhere). */
void fe_eb_fe_table_forget(struct fe_eb_fe_table *t, uint64_t event);
/* First event not covered: the front-end is busy from there on. */
uint64_t fe_eb_fe_table_end(const struct fe_eb_fe_table *t);
const struct fe_eb_fe_stats *fe_eb_fe_table_stats(const struct fe_eb_fe_table *t);

/* A builder's own view of the tables: which event each of its ring positions holds. It takes the
 * manager's chunks (the same as the front-ends) and keeps its own runs, so that it can tell the
 * assembly which positions the front-ends have passed (fe_eb_asm_passed) and name the event of
 * a skipped position. */
struct fe_eb_positions;

int fe_eb_positions_create(struct fe_eb_positions **out, uint16_t builder, uint32_t max_runs,
                           uint64_t first_event);
void fe_eb_positions_destroy(struct fe_eb_positions *p);
/* Like fe_eb_fe_table_add: 0 taken; 1 ignored (held already, older epoch); FE_EAGAIN a gap;
 * FE_ENOSPC; FE_EINVAL. */
int fe_eb_positions_add(struct fe_eb_positions *p, const struct fe_eb_table *chunk);
/* How many of the builder's positions hold events below event_end (as far as chunks tell). */
uint64_t fe_eb_positions_below(const struct fe_eb_positions *p, uint64_t event_end);
/* The event at position seq: 0 and *event, or FE_ENOENT (not assigned yet, or forgotten). */
int fe_eb_positions_event(const struct fe_eb_positions *p, uint64_t seq, uint64_t *event);
/* Forgets the positions below seq (the watermark has passed them). */
void fe_eb_positions_forget(struct fe_eb_positions *p, uint64_t seq);

/* ---- the event manager (availability policy) ----
 * Builders announce how many of their slots they have released (cumulative, in ring order);
 * front-ends report the next event they will send. The manager keeps
 * credits(b) = S - reserve - (assigned(b) - released(b)) per builder and issues chunks that keep
 * the assigned events up to lead events ahead of the furthest front-end (refilled when half of
 * the lead is used). A builder with no credit, or silent for builder_timeout_ns, gets no new run;
 * so a builder that is full, slow or gone gets at most credits(b) events after its last
 * announcement, none from chunks issued after the timeout, and none numbered at or beyond
 * progress + lead at that time. */
struct fe_eb_mgr_config {
    uint16_t id;          /* sender id in chunks */
    uint32_t epoch;       /* incarnation (raise it on a restart) */
    uint32_t n_builders;  /* 1..FE_EB_MAX_BUILDERS */
    uint32_t n_slots;     /* S, every builder */
    uint32_t reserve;     /* slots kept free per builder (ALICE's 1.1x margin); < n_slots */
    uint32_t run_events;  /* events per run at most: 1 interleaves builders event by event */
    uint64_t lead_events; /* how far ahead of the front-ends the tables reach */
    uint64_t first_event;
    uint64_t builder_timeout_ns; /* silent longer than this: no new runs (0: never) */
};
void fe_eb_mgr_config_default(struct fe_eb_mgr_config *cfg);

struct fe_eb_mgr_builder {
    bool up;                /* has announced, and not timed out or declared down */
    uint64_t assigned;      /* events given to it (its next slot is assigned mod S) */
    uint64_t released;      /* slots it has released, in ring order (newest announcement) */
    uint64_t last_heard_ns; /* time of its newest announcement */
};

struct fe_eb_mgr_stats {
    uint64_t chunks;          /* chunks issued */
    uint64_t events;          /* events assigned */
    uint64_t announces;       /* accepted */
    uint64_t announces_stale; /* older than one already heard (reordered): no effect */
    uint64_t announces_bad;   /* unknown builder, or released > assigned */
    uint64_t timeouts;        /* builders marked down for silence */
    uint64_t starved;         /* polls that wanted to assign but no builder had credit */
};

struct fe_eb_mgr {
    struct fe_eb_mgr_config cfg;
    uint64_t next_event; /* first event not yet assigned */
    uint64_t progress;   /* furthest next-event reported by a front-end */
    uint64_t issued_end; /* end of the last chunk issued */
    uint32_t rr_next;    /* tie-break rotation */
    bool refilling;      /* the assigned events fell below progress + lead / 2: up to the lead */
    struct fe_eb_mgr_builder *b;
    struct fe_eb_mgr_stats stats;
};

int fe_eb_mgr_init(struct fe_eb_mgr *m, const struct fe_eb_mgr_config *cfg);
void fe_eb_mgr_free(struct fe_eb_mgr *m);
/* A builder's announcement: it has released `released` slots in all (monotonic; an older value
 * is harmless). The first one brings the builder up. FE_EINVAL for a bad one (counted). */
int fe_eb_mgr_announce(struct fe_eb_mgr *m, uint64_t now_ns, uint16_t builder, uint64_t released);
/* A front-end will send next_event next (monotonic; older reports are harmless). */
void fe_eb_mgr_progress(struct fe_eb_mgr *m, uint64_t next_event);
/* The builder is gone (e.g. its connection failed): no new runs until it announces again. */
void fe_eb_mgr_builder_down(struct fe_eb_mgr *m, uint16_t builder);
/* 1 and a chunk to send to every front-end (and builder) when one is due, 0 otherwise. Also
 * where silent builders are marked down. Call until it returns 0. */
int fe_eb_mgr_poll(struct fe_eb_mgr *m, uint64_t now_ns, struct fe_eb_table *out);
/* When a builder's silence next expires (fe_eb_mgr_poll is then due); UINT64_MAX if never. */
uint64_t fe_eb_mgr_next_deadline(const struct fe_eb_mgr *m);
/* credits(b), 0 when down. */
uint32_t fe_eb_mgr_credits(const struct fe_eb_mgr *m, uint16_t builder);

/* ---- assembly (one per builder) ---- */
struct fe_eb_asm_config {
    uint32_t n_sources;      /* 1..FE_EB_MAX_SOURCES; every source expected unless set_expected */
    uint32_t n_slots;        /* S, 1..FE_EB_MAX_SLOTS */
    uint32_t frag_max_bytes; /* longest fragment accepted */
    uint64_t timeout_ns;     /* from an event's first fragment to its declaration as incomplete */
    uint64_t first_event;    /* reference for the first immediate; round-robin: the ring
                              * starts at position first_event div M (a builder that joined
                              * late), positions below are late */
    uint32_t rr_builders;    /* round-robin over this many builders: an event's ring position is
                              * E div M. 0: tables (the position is the slot's one in the window
                              * the manager's credits allow) */
};
void fe_eb_asm_config_default(struct fe_eb_asm_config *cfg);

enum fe_eb_slot_state {
    FE_EB_SLOT_FREE = 0,
    FE_EB_SLOT_OPEN,       /* collecting */
    FE_EB_SLOT_COMPLETE,   /* every expected source arrived; waiting for release */
    FE_EB_SLOT_INCOMPLETE, /* timed out; waiting for release */
};

/* What happened to a fragment: accepted, or why it was refused (nothing changed then except a
 * counter). */
enum fe_eb_frag {
    FE_EB_F_OK = 0,    /* accepted, event still open */
    FE_EB_F_COMPLETE,  /* accepted, and it completed the event */
    FE_EB_F_SOURCE,    /* source index out of range or not expected */
    FE_EB_F_SLOT,      /* slot out of range, or not the event's: round-robin, not (E div M) mod S;
                        * tables, its event breaks the order of events along the ring */
    FE_EB_F_LENGTH,    /* longer than frag_max_bytes */
    FE_EB_F_DUPLICATE, /* this source already arrived for this event */
    FE_EB_F_LATE,      /* its event was already declared (complete, incomplete, skipped) */
    FE_EB_F_OVERRUN,   /* the slot still holds an older event not yet released */
    FE_EB_F_MAX
};
const char *fe_eb_frag_name(int verdict);

/* A declared event. */
struct fe_eb_event {
    uint64_t event;
    uint64_t seq; /* k: it was this builder's k-th event (slot = k mod S) */
    uint32_t slot;
    uint8_t state; /* FE_EB_SLOT_COMPLETE or FE_EB_SLOT_INCOMPLETE */
    uint32_t n_arrived, n_expected;
    uint64_t bytes;
    uint64_t first_ns, done_ns;
};

struct fe_eb_asm_stats {
    uint64_t fragments;            /* accepted */
    uint64_t refused[FE_EB_F_MAX]; /* by reason ([OK], [COMPLETE] unused) */
    uint64_t complete, incomplete;
    uint64_t skipped;  /* ring positions no fragment ever reached within the timeout */
    uint64_t released; /* slots released by the consumer */
};

struct fe_eb_asm;

int fe_eb_asm_create(struct fe_eb_asm **out, const struct fe_eb_asm_config *cfg);
void fe_eb_asm_destroy(struct fe_eb_asm *a);
/* The sources expected for events opened from now on (n_sources bits, bit s of word s / 64);
 * FE_EINVAL when empty. */
int fe_eb_asm_set_expected(struct fe_eb_asm *a, const uint64_t *bitmap);
/* One WRITE-with-immediate completion: source index (from the QP), immediate, length. Returns
 * an enum fe_eb_frag; on FE_EB_F_COMPLETE, *done describes the event (done may be NULL). */
int fe_eb_asm_fragment(struct fe_eb_asm *a, uint64_t now_ns, uint32_t source, uint32_t imm,
                       uint32_t len_bytes, struct fe_eb_event *done);
/* Declares the next timed-out event incomplete: 1 and *done, 0 when none is due at now_ns.
 * Call until 0. Also skips ring positions that no fragment reached while later ones did. */
int fe_eb_asm_expire(struct fe_eb_asm *a, uint64_t now_ns, struct fe_eb_event *done);
/* The earliest time fe_eb_asm_expire has work; UINT64_MAX when nothing is open. */
uint64_t fe_eb_asm_next_deadline(const struct fe_eb_asm *a);
/* The front-ends have passed every event below event_end, and seq_end of this builder's ring
 * positions hold such events (with tables: the builder counts the events of its runs in the
 * chunks, which the manager sends to builders too, and the manager forwards the front-ends'
 * progress). A position below seq_end that no fragment reaches within the timeout is skipped
 * even when no later position is reached: an event every source was busy for must not hold a
 * slot, or the builder's credits never come back. Anything for it later is late. Older values
 * are ignored. */
void fe_eb_asm_passed(struct fe_eb_asm *a, uint64_t now_ns, uint64_t seq_end, uint64_t event_end);
/* The consumer has taken the event in slot (recorded or forwarded it): the slot may be reused.
 * FE_ESTATE when the slot holds no declared event. */
int fe_eb_asm_release(struct fe_eb_asm *a, uint64_t now_ns, uint32_t slot);
/* Slots released in ring order (what the builder announces). */
uint64_t fe_eb_asm_released(const struct fe_eb_asm *a);
/* Missing sources of the event in slot (open or declared): writes up to max indices, returns
 * how many are missing. */
uint32_t fe_eb_asm_missing(const struct fe_eb_asm *a, uint32_t slot, uint32_t *out, uint32_t max);
int fe_eb_asm_slot_state(const struct fe_eb_asm *a, uint32_t slot);
unsigned fe_eb_asm_slot_bits(const struct fe_eb_asm *a);
const struct fe_eb_asm_stats *fe_eb_asm_stats(const struct fe_eb_asm *a);

/* ---- side-channel messages (64 bytes, big-endian) ----
 * They ride the side channel's framing with request code 5 (FE_EB_SC_REQUEST), which peers that
 * predate event building refuse without a state change. Byte 2 says which message. */
#define FE_EB_SC_REQUEST 5
#define FE_EB_MSG_LEN    64
#define FE_EB_VERSION    1

enum fe_eb_msg_type {
    FE_EB_MSG_ANNOUNCE = 1, /* builder -> manager: slots released */
    FE_EB_MSG_PROGRESS = 2, /* front-end -> manager: next event, busy count */
    FE_EB_MSG_TABLE = 3,    /* manager -> front-ends, builders: an assignment chunk */
    FE_EB_MSG_RING = 4,     /* builder -> front-end: which QP is its, its ring and the policy */
    FE_EB_MSG_JOIN = 5,     /* front-end -> builder (round-robin): the first event it can give */
    FE_EB_MSG_START = 6,    /* builder -> front-end (round-robin): its ring starts at this event */
};

enum fe_eb_policy {
    FE_EB_POLICY_TABLES = 0, /* availability: the event manager's chunks */
    FE_EB_POLICY_RR = 1,     /* round-robin over n_builders */
};

struct fe_eb_announce {
    uint16_t builder;
    uint32_t n_slots;
    uint64_t released; /* cumulative, ring order */
    uint64_t newest_event;
};

struct fe_eb_progress {
    uint16_t source;
    uint64_t next_event;
    uint64_t busy_events; /* cumulative events throttled at this source */
};

/* A builder tells each front-end, once its QP there is ready to send (and again until the
 * front-end uses it), which of the front-end's QPs leads to it and where fragments go: the rkey
 * and base address came with the side channel's OPEN_QP; this adds the ring's geometry. */
struct fe_eb_ring {
    uint16_t builder;
    uint8_t policy;          /* enum fe_eb_policy */
    uint16_t n_builders;     /* round-robin: M (builder < M); informative with tables */
    uint32_t n_slots;        /* S, 1..FE_EB_MAX_SLOTS */
    uint32_t qpn;            /* the builder's QPN (24 bits): the front-end's QP whose peer it is */
    uint64_t slot_bytes;     /* >= frag_max_bytes, at most FE_EB_MAX_SLOT_BYTES */
    uint32_t frag_max_bytes; /* >= 1: source s writes at slot * slot_bytes + s * frag_max_bytes */
    uint64_t first_event;
};
#define FE_EB_MAX_SLOT_BYTES (1ull << 40)

/* A front-end answers each RING (round-robin) with a JOIN: next_event is the first event of
 * that builder it can still send (0 when it took the ring before starting: every one), and once
 * it knows the builder's start (a START), has_first and first_event echo it. */
struct fe_eb_join {
    uint16_t source;
    uint16_t builder;
    bool has_first;
    uint64_t next_event;
    uint64_t first_event; /* 0 unless has_first */
};

/* A builder that joined late tells each front-end the first event of its ring (E0, one of its
 * own: first_event mod n_builders = builder). */
struct fe_eb_start {
    uint16_t builder;
    uint16_t n_builders; /* >= 1, > builder */
    uint64_t first_event;
};

struct fe_eb_msg {
    uint8_t type; /* enum fe_eb_msg_type */
    union {
        struct fe_eb_announce announce;
        struct fe_eb_progress progress;
        struct fe_eb_table table;
        struct fe_eb_ring ring;
        struct fe_eb_join join;
        struct fe_eb_start start;
    } u;
};

enum fe_eb_msg_reason {
    FE_EB_M_OK = 0,
    FE_EB_M_SHORT,    /* shorter than 64 bytes */
    FE_EB_M_LONG,     /* longer */
    FE_EB_M_NOT_EB,   /* not an event-building message (another side-channel request) */
    FE_EB_M_VERSION,  /* unknown version */
    FE_EB_M_TYPE,     /* unknown message type */
    FE_EB_M_RESERVED, /* a reserved byte is not zero */
    FE_EB_M_RUNS,     /* a table with 0 or too many runs, a run of 0 events, or past 2^64 */
    FE_EB_M_VALUE,    /* another field out of range (a slot count, a ring's geometry, a
                       * START's event not the builder's, a JOIN's flags) */
    FE_EB_M_MAX
};
const char *fe_eb_msg_reason_name(int r);

/* True when a 64-byte side-channel datagram carries request code FE_EB_SC_REQUEST: hand it to
 * fe_eb_msg_decode instead of fe_sc_decode. */
bool fe_eb_msg_is_eb(const uint8_t *buf, size_t len);
/* FE_EINVAL for a message fe_eb_msg_decode would refuse (nothing written). */
int fe_eb_msg_encode(uint8_t out[FE_EB_MSG_LEN], const struct fe_eb_msg *m);
/* 0, or FE_ETRUNC / FE_EPARSE with *why set. */
int fe_eb_msg_decode(const uint8_t *buf, size_t len, struct fe_eb_msg *m,
                     enum fe_eb_msg_reason *why);

/* ---- the ledger: every triggered event ends in exactly one state ---- */
enum fe_eb_final {
    FE_EB_NONE = 0,   /* no final state (yet): "missing" at the end */
    FE_EB_BUILT,      /* complete, built once, at one builder */
    FE_EB_INCOMPLETE, /* declared after the timeout: missing sources */
    FE_EB_LOST,       /* its builder died with it in flight */
    FE_EB_BUSY,       /* no source sent it: no assignment (throttled, the DAQ busy signal) */
    FE_EB_FINAL_MAX
};
const char *fe_eb_final_name(int state);

struct fe_eb_ledger_report {
    uint64_t events;                 /* triggered */
    uint64_t count[FE_EB_FINAL_MAX]; /* by final state; [FE_EB_NONE] = missing */
    uint64_t twice;                  /* second declarations (refused) */
    uint64_t out_of_range;           /* declarations of events never triggered */
    uint64_t first_missing;          /* UINT64_MAX when none */
};

struct fe_eb_ledger;
int fe_eb_ledger_create(struct fe_eb_ledger **out, uint64_t first_event, uint64_t n_events);
void fe_eb_ledger_destroy(struct fe_eb_ledger *l);
/* 0; FE_ESTATE when the event already has a final state (counted twice); FE_ERANGE. */
int fe_eb_ledger_record(struct fe_eb_ledger *l, uint64_t event, enum fe_eb_final state,
                        uint16_t builder, uint32_t n_missing);
int fe_eb_ledger_state(const struct fe_eb_ledger *l, uint64_t event);
/* Counts; true when every event has exactly one final state and nothing came twice. */
bool fe_eb_ledger_check(const struct fe_eb_ledger *l, struct fe_eb_ledger_report *r);

/* ---- event index: one 32-byte record per built event, after a 16-byte header ----
 * header: "FEEBIDX" version(1) record_bytes(4) reserved(4)
 * record: event(8) offset(8) bytes(4) n_arrived(2) n_expected(2) builder(2) state(1) rsvd(5)
 * offsets are contiguous: each record's data follows the previous one's in the data file. */
#define FE_EB_INDEX_HEADER_BYTES 16
#define FE_EB_INDEX_RECORD_BYTES 32

struct fe_eb_index_rec {
    uint64_t event;
    uint64_t offset; /* of the event's data in the data file */
    uint32_t bytes;
    uint16_t n_arrived, n_expected;
    uint16_t builder;
    uint8_t state; /* FE_EB_BUILT or FE_EB_INCOMPLETE */
};

enum fe_eb_index_reason {
    FE_EB_I_OK = 0,
    FE_EB_I_SHORT,   /* truncated header or record */
    FE_EB_I_MAGIC,   /* not an index */
    FE_EB_I_VERSION, /* unknown version or record size */
    FE_EB_I_STATE,   /* state not built/incomplete, or it disagrees with the counts */
    FE_EB_I_COUNTS,  /* n_arrived > n_expected, or n_expected 0 */
    FE_EB_I_OFFSET,  /* not contiguous with the previous record, or overflows */
    FE_EB_I_RESERVED,
    FE_EB_I_MAX
};
const char *fe_eb_index_reason_name(int r);

void fe_eb_index_header(uint8_t out[FE_EB_INDEX_HEADER_BYTES]);
/* FE_EINVAL for a record the reader would refuse on its own (state/counts). */
int fe_eb_index_encode(uint8_t out[FE_EB_INDEX_RECORD_BYTES], const struct fe_eb_index_rec *r);

/* Reads an index held in memory. init checks the header; next returns 1 and a record, 0 at a
 * clean end, or FE_ETRUNC / FE_EPARSE with why set (the reader then stays stopped). */
struct fe_eb_index_reader {
    const uint8_t *buf;
    size_t len, pos;
    uint64_t next_offset; /* where the next record's data must start */
    uint64_t records;
    enum fe_eb_index_reason why;
};
int fe_eb_index_reader_init(struct fe_eb_index_reader *rd, const uint8_t *buf, size_t len);
int fe_eb_index_reader_next(struct fe_eb_index_reader *rd, struct fe_eb_index_rec *out);

/* ---- a front-end's report: what it did with each triggered event ----
 * header (32 bytes): "FEEBSRC" version(1) source(2) n_builders(2) record_bytes(4)
 *                    triggered(8) busy(8)
 * then one 32-byte record per builder: sent(8) dropped(8) undeliverable(8) reserved(8)
 * Every triggered event is busy at the front-end (no assignment: nothing sent) or its fragment
 * was sent to its builder, dropped (the builder was down) or undeliverable (its QP had failed):
 * feroce eb-check requires busy + the sum of the three = triggered. */
#define FE_EB_REPORT_HEADER_BYTES  32
#define FE_EB_REPORT_BUILDER_BYTES 32
#define FE_EB_REPORT_MAX_BUILDERS  256

struct fe_eb_report_builder {
    uint64_t sent;          /* fragments posted to the builder */
    uint64_t dropped;       /* not sent: the builder was down (silent) */
    uint64_t undeliverable; /* not sent: the QP to it had failed */
};

struct fe_eb_report {
    uint16_t source;
    uint16_t n_builders; /* 1..FE_EB_REPORT_MAX_BUILDERS */
    uint64_t triggered;  /* events 0..triggered-1 */
    uint64_t busy;       /* events with no assignment here: nothing sent */
    struct fe_eb_report_builder b[FE_EB_REPORT_MAX_BUILDERS];
};

enum fe_eb_report_reason {
    FE_EB_R_OK = 0,
    FE_EB_R_SHORT,    /* shorter than its header and records */
    FE_EB_R_LONG,     /* bytes after the last record */
    FE_EB_R_MAGIC,    /* not a front-end report */
    FE_EB_R_VERSION,  /* unknown version or record size */
    FE_EB_R_BUILDERS, /* 0 or more than FE_EB_REPORT_MAX_BUILDERS builders */
    FE_EB_R_COUNTS,   /* more events busy, sent, dropped or undeliverable than triggered */
    FE_EB_R_RESERVED, /* a reserved byte is not zero */
    FE_EB_R_MAX
};
const char *fe_eb_report_reason_name(int r);

/* Bytes of a report over n_builders builders. */
size_t fe_eb_report_bytes(uint16_t n_builders);
/* Writes fe_eb_report_bytes(r->n_builders) bytes; FE_EINVAL for a report the decoder would
 * refuse, FE_ENOSPC when cap is too small (nothing written either way). */
int fe_eb_report_encode(uint8_t *out, size_t cap, const struct fe_eb_report *r);
/* 0, or FE_ETRUNC / FE_EPARSE with *why set. */
int fe_eb_report_decode(const uint8_t *buf, size_t len, struct fe_eb_report *r,
                        enum fe_eb_report_reason *why);

#ifdef __cplusplus
}
#endif
#endif
