/* A flow's work requests: a requester's send queue topped up and its completions drained, by
 * the flow (flow.c) and by the NIC's scheduler after each packet it sends (host.c): inline. */
#ifndef FE_SIM_FLOW_H
#define FE_SIM_FLOW_H

#include "sim/state.h"

/* How many unstarted WRs a requester's send queue holds: the QP starts at most one WR per
 * packet it sends, and the simulator tops the queue up after each one (top_up), so the QP never
 * finds it empty, nor the next WR missing when its pacer prices the packet after this one.
 * Keeping only a few posted (rather than the whole replay buffer's worth) keeps the send and
 * completion rings that the QP touches per packet in the cache. */
#define SQ_LOOKAHEAD    32
#define SQ_REFILL_BELOW 8

/* Takes the requester's completions out of its CQ: bytes done; false when one failed. */
static bool sim_flow_drain_cq(struct sim_flow *f, struct sim_qp *sq)
{
    enum { BATCH = 64 };
    struct fe_cqe cqe[BATCH];
    int n;
    bool ok = true;
    do { /* fewer than asked for: the CQ is empty */
        n = fe_qp_poll_cq(sq->qp, cqe, BATCH);
        for (int i = 0; i < n; i++) {
            if (cqe[i].status == FE_WC_SUCCESS)
                f->done_bytes += cqe[i].byte_len;
            else
                ok = false;
        }
    } while (n == BATCH);
    return ok;
}

/* Posts message WRs until the requester holds SQ_LOOKAHEAD unstarted ones, as far as the flow
 * has bytes and the QP has room (asking fe_qp_post_send to be refused would cost more). */
static inline __attribute__((always_inline)) void sim_flow_post_more(struct sim_flow *f,
                                                                     struct sim_qp *sq)
{
    uint64_t msg = f->spec.msg_bytes ? f->spec.msg_bytes : (1u << 30);
    uint32_t unstarted = fe_qp_sq_unstarted(sq->qp), room = fe_qp_sq_room(sq->qp);
    uint32_t want = unstarted < SQ_LOOKAHEAD ? SQ_LOOKAHEAD - unstarted : 0;
    for (uint32_t n = want < room ? want : room; n && f->posted_bytes < f->spec.bytes; n--) {
        uint64_t len = f->spec.bytes - f->posted_bytes;
        if (len > msg) len = msg;
        struct fe_wr wr = {.op = FE_WR_WRITE,
                           .cookie = len,
                           .data = NULL,
                           .len = (uint32_t)len,
                           .remote_offset = f->posted_bytes};
        if (fe_qp_post_send(sq->qp, &wr)) break;
        f->posted_bytes += len;
    }
    sq->all_posted = f->posted_bytes >= f->spec.bytes;
}

/* After a requester sent a packet: the send queue topped up when it runs low. The completions
 * are taken out of the CQ first, so that the CQ always has room for what is posted (the QP keeps
 * at most its send queue's depth of WRs posted and not yet drained). A failed WR leaves the QP
 * in error, which after_qp_event sees at its next event. */
static inline __attribute__((always_inline)) void sim_flow_top_up(struct fe_sim *sim,
                                                                  struct sim_qp *sq)
{
    if (fe_qp_sq_unstarted(sq->qp) >= SQ_REFILL_BELOW || sq->all_posted) return;
    struct sim_flow *f = &sim->flows[sq->flow];
    sq->completed_seen = fe_qp_counters(sq->qp)->tx_msgs_completed;
    (void)sim_flow_drain_cq(f, sq);
    sim_flow_post_more(f, sq);
}

/* A requester's completions: bytes done, more WRs posted; the flow finishes when all are done
 * or the QP failed. Returns false when the QP was released. */
bool sim_flow_collect(struct fe_sim *sim, struct sim_qp *sq);
/* Ends a flow now (its requester released, its responder at the end of the grid window): event
 * building's pairs, when every event is accounted for or a pair's requester failed. */
void sim_flow_end(struct fe_sim *sim, struct sim_flow *f);
/* The global part of the flows that ended in the grid window just run (flow.c flow_finish):
 * their responders released, the counts, the window's auto end, the phase mark, the stop when
 * every flow is done (SIM_HALT_ALL_DONE). */
void sim_flows_ended(struct fe_sim *sim);

#endif
