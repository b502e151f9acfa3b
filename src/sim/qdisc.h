/* Egress queue disciplines of a switch port: what happens to a frame as it joins the port's
 * egress (on_enqueue) and as it leaves it (on_dequeue, with the bytes it leaves behind in its
 * priority's queue). The buffer's admission (buffer.h) and PFC (pfc.h) come before them; the
 * link after.
 *
 * The known ones are RED/ECN marking, INT stamping and the CNP monitor (ecn.c). They run inline,
 * each behind one test, in sim_qdisc_egress below: RED per port (p->mark_above_bytes), INT and
 * the CNP monitor when their bit is in sim->egress_hooks (the union of what the ports run). A
 * frame with nothing to do, most of them, costs the RED test and one load of egress_hooks.
 *
 * Adding one: write its file (qdisc_NAME.c, listed in CMakeLists.txt) with a
 * `const struct sim_qdisc sim_qdisc_NAME` (a setup that says which ports run it, and its hooks),
 * and add it to sim_qdiscs[] in qdisc.c after the known ones (or sim_qdisc_register it): its
 * bit is
 * SIM_QD_GENERIC << (its index - SIM_QD_N_KNOWN). The ports that run it get that bit in
 * p->qdiscs, and it runs out of line, through its function pointers, after the known ones. */
#ifndef FE_SIM_QDISC_H
#define FE_SIM_QDISC_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/ecn.h"
#include "sim/state.h"

/* Bits of p->qdiscs and sim->egress_hooks, by index in sim_qdiscs[]. */
enum {
    SIM_QD_RED = 1u << 0,         /* RED/ECN marking (p->mark_above_bytes gates it) */
    SIM_QD_INT = 1u << 1,         /* INT records on data frames */
    SIM_QD_CNP_MONITOR = 1u << 2, /* CNPs forged above a rate (switch.cnp_monitor_bps) */
    SIM_QD_N_KNOWN = 3,
    SIM_QD_GENERIC = 1u << 3, /* the first registered one; at most 5 of them (8 bits) */
};
#define SIM_QD_MAX 8

struct sim_qdisc {
    const char *name;
    /* At build, for every switch port: true when the discipline runs there (it may set up the
     * port's fields it reads). */
    bool (*setup)(const struct fe_sim *sim, struct sim_port *p);
    /* A frame joins the port's egress: queued, or sent at once when the port is idle. NULL: no
     * hook. */
    void (*on_enqueue)(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt);
    /* A frame leaves, queued_bytes left in its priority's queue. NULL: no hook. */
    void (*on_dequeue)(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                       uint64_t queued_bytes);
};

extern const struct sim_qdisc sim_qdisc_red, sim_qdisc_int, sim_qdisc_cnp_monitor;
/* Every discipline: the known ones first, in their bits' order; NULL-terminated (qdisc.c). */
extern const struct sim_qdisc *sim_qdiscs[SIM_QD_MAX + 1];
/* Adds one at run time (a test, an experiment) before the simulators that use it are created:
 * 0 (also when it is there already), FE_EINVAL without a setup, FE_ENOSPC beyond SIM_QD_MAX. */
int sim_qdisc_register(const struct sim_qdisc *q);

/* At build: the disciplines that run on switch port p (p->qdiscs, sim->egress_hooks). */
void sim_qdisc_port_setup(struct fe_sim *sim, struct sim_port *p);
/* The hooks of the CNP monitor and the registered disciplines (out of line). */
void sim_qdisc_enqueue_slow(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt);
void sim_qdisc_egress_slow(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt,
                           uint64_t queued_bytes, bool joined_now);

/* A frame joins the port's queue (it will leave through sim_qdisc_dequeue). */
static inline void sim_qdisc_enqueue(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    if (__builtin_expect(sim->egress_hooks >= SIM_QD_GENERIC, 0))
        sim_qdisc_enqueue_slow(sim, p, pkt);
}

/* A frame leaves (joined_now: it joined the idle port's egress just now, and passes through)
 * with queued_bytes behind it: the known disciplines inline, the others out of line. RoCE or
 * test frames only: PFC frames never queue there. */
static inline __attribute__((always_inline)) void
sim_qdisc_egress(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt, uint64_t queued_bytes,
                 bool joined_now)
{
    if (sim_pkt_ect(pkt) && queued_bytes > p->mark_above_bytes)
        sim_ecn_red(sim, p, pkt, queued_bytes);
    uint8_t hooks = sim->egress_hooks;
    if (__builtin_expect(hooks, 0)) {
        if ((hooks & SIM_QD_INT) && pkt->pkt.payload_len) sim_int_stamp(sim, p, pkt);
        if (hooks & ~SIM_QD_INT) sim_qdisc_egress_slow(sim, p, pkt, queued_bytes, joined_now);
    }
}

static inline __attribute__((always_inline)) void sim_qdisc_dequeue(struct fe_sim *sim,
                                                                    struct sim_port *p,
                                                                    struct sim_pkt *pkt,
                                                                    uint64_t queued_bytes)
{
    sim_qdisc_egress(sim, p, pkt, queued_bytes, false);
}

/* A frame that joins the idle port's egress and leaves at once. */
static inline __attribute__((always_inline)) void
sim_qdisc_pass(struct fe_sim *sim, struct sim_port *p, struct sim_pkt *pkt)
{
    sim_qdisc_egress(sim, p, pkt, 0, true);
}

#endif
