/* Event building in the simulator (docs/sim.md, "Event building"): front-end hosts write one
 * fragment per triggered event to the builder the assignment names, each pair of hosts over its
 * own flow (a QP pair); builders assemble with the core of feroce/eb.h, a consumer per builder
 * drains built events and frees their slots; with the availability policy an event manager,
 * reached over an out-of-band control plane of fixed delay, hands out assignment chunks. The
 * simulator's own timers (triggers, consumers, deadlines, control messages, faults) live in one
 * heap here behind a single EV_EB event, so that nothing of this costs a scenario without event
 * building anything. eb.c: setup, fragments and builders; eb_ctrl.c: the timers, the trigger, the
 * manager and the faults; eb_report.c: results. */
#ifndef FE_SIM_EB_H
#define FE_SIM_EB_H

#include <stdbool.h>
#include <stdint.h>

#include "feroce/eb.h"
#include "feroce/sim.h"

struct fe_sim;
struct sim_qp;

/* A fragment waiting at its front-end for room in the pair's send queue. */
struct eb_frag {
    uint64_t event;
    uint32_t slot, len_bytes;
};

/* One front-end -> builder QP pair: a flow of the simulation. */
struct eb_pair {
    uint32_t flow;
    uint16_t fe, builder;
    struct eb_frag *q; /* ring of waiting fragments */
    uint32_t q_head, q_n, q_cap;
    bool dead; /* its requester failed (the builder left): fragments are dropped */
    /* the token limit (cfg.tokens): the pair sends only while it holds its builder's token */
    bool token, token_asked;
    uint64_t posted, completed; /* WRs */
    /* round-robin: its builder's released watermark as the front-end last heard it; a fragment
     * of event E goes only while fe_eb_rr_may_write says its slot is free (as on the wire) */
    uint64_t released;
};

struct eb_fe {
    struct fe_eb_fe_table *table; /* availability */
    uint64_t busy;                /* fragments not sent: no table covered the event */
    uint64_t next_event, reported;
};

struct eb_builder {
    struct fe_eb_asm *as;
    struct fe_eb_positions *pos; /* availability */
    uint64_t rate_bps;           /* its consumer's */
    bool left;
    /* declared events waiting for the consumer, oldest first (at most S) */
    struct fe_eb_event *cq;
    uint32_t cq_head, cq_n;
    bool consuming;
    uint64_t asm_wake; /* pending T_ASM time, FE_SIM_NO_TIME when none */
    uint64_t posted_w; /* watermark up to which receives were posted (S ahead of it) */
    /* its token manager: tokens free, and the pairs waiting for one, in order */
    uint32_t tokens_free;
    uint32_t *token_q, token_head, token_n;
    /* results */
    uint64_t built, incomplete, lost, built_bytes, refused;
    uint64_t last_final_ns;     /* its newest final state: the end of its rates' interval */
    uint32_t used, max_used;    /* slots not free */
    uint64_t used_area, used_t; /* slot-ns since first_trigger_ns, and when `used` last changed */
};

enum eb_timer_kind {
    T_TRIGGER = 1,
    T_CONSUMED,   /* idx builder: its consumer took the head event */
    T_ASM,        /* idx builder: an assembly deadline */
    T_TICK,       /* the control plane's period: announcements and progress */
    T_ANNOUNCE,   /* at the manager: idx builder, val released */
    T_PROGRESS,   /* at the manager: idx front-end, val next event */
    T_CHUNK_FE,   /* at front-end idx: a chunk */
    T_CHUNK_B,    /* at builder idx: a chunk */
    T_PASSED,     /* at builder idx: every front-end passed the events below val */
    T_SLOW,       /* the slow builder's consumer slows down */
    T_LEAVE,      /* the leaving builder goes */
    T_TOKEN_ASK,  /* at a builder's token manager: idx pair asks for a token */
    T_TOKEN_GIVE, /* at pair idx's front-end: the token */
    T_TOKEN_BACK, /* at a builder's token manager: idx pair gives it back */
    T_RELEASED,   /* round-robin, at pair idx's front-end: its builder released below val */
};

struct eb_timer {
    uint64_t t, seq; /* seq: equal times in the order they were set */
    uint64_t val;
    uint32_t idx;
    uint8_t kind;
    struct fe_eb_table chunk;
};

/* Aligned like every event object (state.h: the low 4 bits of an event word are its kind). */
struct sim_eb {
    _Alignas(64) struct fe_sim_eb cfg;
    uint32_t first_flow; /* pairs are flows first_flow + fe * M + builder */
    uint64_t slot_bytes; /* n_frontends x frag_max_bytes */
    unsigned slot_bits;
    struct eb_pair *pairs;
    struct eb_fe *fes;
    struct eb_builder *bs;
    struct fe_eb_mgr mgr;
    bool mgr_on;
    uint64_t min_progress; /* the manager's view: every front-end passed the events below it */
    uint64_t *fe_progress; /* per front-end, as the manager heard it */
    /* per event */
    uint64_t n_events, triggered, n_final;
    uint64_t *trigger_ns, *complete_ns;
    uint16_t *ev_builder; /* FE_SIM_EB_NONE: not assigned (yet) */
    struct fe_eb_ledger *ledger;
    uint64_t first_trigger_ns, last_final_ns, next_trigger_ns;
    uint64_t rnr_naks; /* of builders' QPs already released */
    uint64_t rng;      /* splitmix64 state: trigger times and fragment sizes */
    /* timers */
    struct eb_timer *heap;
    uint32_t n_heap, cap_heap;
    uint64_t seq, wake_at;
    bool done;
};

/* ---- eb.c ---- */
/* Checks the configuration, adds the pairs' flows to the simulation's scenario copy, allocates
 * the state (sim->eb). Nothing when the scenario has no event building. */
int sim_eb_create(struct fe_sim *sim, char *err, size_t err_cap);
/* After the flows exist: marks them, schedules the first trigger, faults and ticks. */
int sim_eb_start(struct fe_sim *sim);
void sim_eb_destroy(struct fe_sim *sim);
/* A pair's flow started: the builder's receive buffers for its free slots. */
void sim_eb_flow_started(struct fe_sim *sim, uint32_t flow);
/* The fe_qp settings of a pair's QPs (send queue, receive queue, RNR timer). */
struct fe_qp_config;
void sim_eb_qp_configs(const struct fe_sim *sim, struct fe_qp_config *req,
                       struct fe_qp_config *resp);
/* A builder's QP received a packet: its WRITE-with-immediate completions to the assembly. */
void sim_eb_rx(struct fe_sim *sim, uint32_t flow);
/* A front-end's QP completed WRs or failed: false when the QP was released. */
bool sim_eb_req_collect(struct fe_sim *sim, struct sim_qp *sq);

/* used by eb_ctrl.c */
void eb_send_fragment(struct fe_sim *sim, struct sim_eb *eb, uint32_t fe, uint16_t builder,
                      const struct eb_frag *fr);
void eb_consumed(struct fe_sim *sim, struct sim_eb *eb, uint16_t b);
void eb_expire(struct fe_sim *sim, struct sim_eb *eb, uint16_t b);
void eb_after_asm(struct fe_sim *sim, struct sim_eb *eb, uint16_t b);
void eb_leave(struct fe_sim *sim, struct sim_eb *eb, uint16_t b);
void eb_token_ask(struct fe_sim *sim, struct sim_eb *eb, uint32_t pair);
void eb_token_give(struct fe_sim *sim, struct sim_eb *eb, uint32_t pair);
void eb_token_back(struct fe_sim *sim, struct sim_eb *eb, uint32_t pair);
void eb_released(struct fe_sim *sim, struct sim_eb *eb, uint32_t pair, uint64_t released);
void eb_final(struct sim_eb *eb, uint64_t now, uint64_t event, enum fe_eb_final state, uint16_t b,
              uint32_t n_missing);

/* ---- eb_report.c: the report's event-building parts (nothing without event building) ---- */
#include <stdio.h>
void sim_eb_report_json(FILE *f, const struct fe_sim *sim);
void sim_eb_report_text(FILE *f, const struct fe_sim *sim);
/* output.c: s as a JSON string, escaped */
void sim_json_str(FILE *f, const char *s);

/* ---- eb_ctrl.c ---- */
void eb_timer_set(struct fe_sim *sim, struct sim_eb *eb, uint64_t t, uint8_t kind, uint32_t idx,
                  uint64_t val, const struct fe_eb_table *chunk);
/* The EV_EB event: the due timers. */
void sim_eb_event(struct fe_sim *sim, struct sim_eb *eb);
void eb_first_timers(struct fe_sim *sim, struct sim_eb *eb);

#endif
