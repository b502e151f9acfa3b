/* Responder (receive side of an RC QP), after Linux rxe: expected PSN, one sequence NAK per
 * gap, duplicates re-acknowledged and never re-executed, WRITE placement checked against the
 * memory region and the message's RETH, receive buffers for SEND and WRITE with immediate (RNR
 * NAK when none), coalesced ACKs, MSN, and the DCQCN notification point (CNP on CE).
 *
 * Every check of a packet happens before any of its effects: a refused packet writes nothing
 * and changes no message state. */
#include "transport/qp_internal.h"

#include <string.h>

void fe_resp_init(struct fe_qp *qp)
{
    struct fe_resp *r = &qp->resp;
    const struct fe_qp_config *c = &qp->cfg;
    r->epsn = c->rq_psn;
    r->msg_mr = -1;
    r->np_enable = c->np_enable;
    r->ack_every = c->ack_every;
    r->dscp = c->dscp;
    r->pcp = c->pcp;
    r->data_ecn = c->data_ecn;
    r->min_rnr_timer = c->min_rnr_timer;
    r->cnp_dscp = c->cnp_dscp;
    r->cnp_pcp = c->cnp_pcp;
    r->remote_qpn = c->remote_qpn;
    r->mtu_bytes = c->mtu_bytes;
    r->cnp_interval_ns = c->cnp_interval_ns;
}

/* ---- the response ring ---- */

static bool ring_push(struct fe_qp *qp, const struct fe_resp_entry *e)
{
    struct fe_resp *r = &qp->resp;
    if (qp->resp_count >= FE_RESP_RING) {
        qp->ctr.tx_resp_overflow++; /* the driver did not pull; the peer's timer recovers */
        return false;
    }
    r->ring[(r->ring_head + qp->resp_count) & (FE_RESP_RING - 1)] = *e;
    qp->resp_count++;
    return true;
}

/* ACK of `psn` (everything up to it). ACKs are cumulative, so one still waiting in the ring
 * behind no other response is brought up to date instead of queueing another. Inlined: most
 * data packets ask for one. */
static inline __attribute__((always_inline)) void queue_ack(struct fe_qp *qp, uint32_t psn)
{
    struct fe_resp *r = &qp->resp;
    r->pkts_since_ack = 0;
    if (qp->resp_count) {
        struct fe_resp_entry *t =
            &r->ring[(r->ring_head + qp->resp_count - 1) & (FE_RESP_RING - 1)];
        if (!t->cnp && fe_aeth_kind(t->syndrome) == FE_AETH_ACK) {
            t->psn = psn;
            t->msn = r->msn;
            t->becn |= r->becn_pending;
            r->becn_pending = false;
            return;
        }
    }
    struct fe_resp_entry e = {.syndrome = fe_aeth_syn_ack(FE_AETH_CREDITS_INVALID),
                              .psn = psn,
                              .msn = r->msn,
                              .becn = r->becn_pending};
    if (ring_push(qp, &e)) r->becn_pending = false;
}

static void queue_nak(struct fe_qp *qp, uint8_t syndrome, uint32_t psn)
{
    struct fe_resp_entry e = {.syndrome = syndrome, .psn = psn, .msn = qp->resp.msn};
    ring_push(qp, &e);
}

/* The response to send next: the ring's head, else a bare ACK that only carries a new grant.
 * Inlined into fe_resp_tx, as are the steps below. */
static inline __attribute__((always_inline)) bool pop_response(struct fe_qp *qp,
                                                               struct fe_resp_entry *e)
{
    struct fe_resp *r = &qp->resp;
    if (qp->resp_count) {
        *e = r->ring[r->ring_head];
        /* an emptied ring starts again at its first entry, which stays in the line the
         * responder reads anyway (struct fe_resp) */
        r->ring_head = --qp->resp_count ? (r->ring_head + 1) & (FE_RESP_RING - 1) : 0;
        return true;
    }
    if (!qp->grant_dirty) return false;
    *e = (struct fe_resp_entry){.syndrome = fe_aeth_syn_ack(FE_AETH_CREDITS_INVALID),
                                .psn = fe_psn_add(r->epsn, -1),
                                .msn = r->msn};
    return true;
}

/* An ACK or NAK. Responses travel in the QP's traffic class, with its ECN codepoint so that ECN
 * switches mark them rather than drop them. Member by member: a literal for the whole packet
 * zeroes all of it first (a string instruction) and then stores the fields again. */
static inline __attribute__((always_inline)) void fill_ack(struct fe_qp *qp, struct fe_pkt *out,
                                                           const struct fe_resp_entry *e)
{
    struct fe_resp *r = &qp->resp;
    out->bth = (struct fe_bth){.opcode = FE_OP_ACK,
                               .becn = e->becn,
                               .pkey = FE_PKEY_DEFAULT,
                               .dqpn = r->remote_qpn,
                               .psn = e->psn};
    out->reth = (struct fe_reth){0};
    out->aeth = (struct fe_aeth){.syndrome = e->syndrome, .msn = e->msn & FE_PSN_MASK};
    out->imm = 0;
    out->payload = NULL;
    out->payload_len = 0;
    out->ecn = r->data_ecn;
    out->dscp = r->dscp;
    out->pcp = r->pcp;
    out->icrc = FE_ICRC_UNCHECKED;
    out->int_md = r->int_echo && r->last_int.nhops ? &r->last_int : NULL;
    out->credit_bytes = r->grant_bytes;
    qp->grant_dirty = false;
}

static inline __attribute__((always_inline)) void count_response(struct fe_qp *qp, uint8_t syndrome)
{
    switch (fe_aeth_kind(syndrome)) {
    case FE_AETH_ACK:
        qp->ctr.tx_acks++;
        break;
    case FE_AETH_RNR:
        qp->ctr.tx_rnr_naks++;
        break;
    default:
        qp->ctr.tx_naks[fe_aeth_value(syndrome) % 5]++;
        break;
    }
}

/* Not inlined into fe_qp_tx (see fe_req_tx). */
__attribute__((noinline)) int fe_resp_tx(struct fe_qp *qp, uint64_t now_ns, struct fe_pkt *out)
{
    (void)now_ns;
    struct fe_resp_entry e;
    if (!pop_response(qp, &e)) return 0;
    if (e.cnp) {
        fe_cnp_build(out, qp->resp.remote_qpn, qp->resp.cnp_dscp, qp->resp.cnp_pcp);
        qp->ctr.tx_cnps++;
        return 1;
    }
    fill_ack(qp, out, &e);
    count_response(qp, e.syndrome);
    return 1;
}

/* ---- receive queue ---- */

static void complete_recv(struct fe_qp *qp, enum fe_wc_status st, uint8_t opcode, bool has_imm,
                          uint32_t imm, uint64_t byte_len)
{
    struct fe_resp *r = &qp->resp;
    const struct fe_recv_entry *b = &r->rq[r->rq_head];
    struct fe_cqe cqe = {.cookie = b->cookie,
                         .status = (uint8_t)st,
                         .opcode = opcode,
                         .has_imm = has_imm,
                         .imm = imm,
                         .byte_len = (uint32_t)byte_len};
    r->rq_head = (r->rq_head + 1) & (r->rq_cap - 1);
    r->rq_count--;
    fe_qp_push_cqe(qp, &cqe);
}

void fe_resp_flush(struct fe_qp *qp)
{
    while (qp->resp.rq_count) complete_recv(qp, FE_WC_WR_FLUSH_ERR, FE_WC_RECV, false, 0, 0);
    qp->resp.in_msg = false;
    qp->grant_dirty = false;
}

/* ---- packet processing ---- */

/* A fatal error of the request at `psn`: NAK with `code`, QP to error. */
static int fatal(struct fe_qp *qp, uint32_t psn, uint8_t code, int err)
{
    queue_nak(qp, fe_aeth_syn_nak(code), psn);
    fe_qp_set_error(qp, false, 0, FE_WC_SUCCESS);
    return err;
}

/* Notification point: a CE-marked packet. */
static void congestion(struct fe_qp *qp, uint64_t now_ns)
{
    struct fe_resp *r = &qp->resp;
    qp->ctr.rx_ce_pkts++;
    if (!r->np_enable) return;
    if (r->np_ecn_echo_on_ack) {
        r->becn_pending = true;
        return;
    }
    if (r->cnp_ever && now_ns - r->last_cnp_ns < r->cnp_interval_ns) return;
    struct fe_resp_entry e = {.cnp = true};
    if (ring_push(qp, &e)) {
        r->cnp_ever = true;
        r->last_cnp_ns = now_ns;
    }
}

/* [va, va + len) inside the region? (no overflow: mr.va + mr.len was checked at
 * registration) */
static inline bool in_mr(const struct fe_mr *mr, uint64_t va, uint64_t len)
{
    return va >= mr->va && va - mr->va <= mr->len && len <= mr->len - (va - mr->va);
}

/* The steps of fe_resp_rx, after Linux rxe's responder (check_psn, check_op_seq, ...). Each
 * check returns NEXT to go on, or what fe_resp_rx returns (0, or a negative fe_err) when the
 * packet ends there. Inlined: they are one function's parts, run for every data packet. */
#define NEXT 1
#define STEP static inline __attribute__((always_inline))

/* What every packet reports before its PSN is looked at: congestion (CE) and, for HPCC's
 * sender, the switches' telemetry to echo. */
STEP void note_congestion(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt)
{
    struct fe_resp *r = &qp->resp;
    if (pkt->ecn == FE_ECN_CE) congestion(qp, now_ns);
    if (r->int_echo && pkt->int_md && pkt->int_md->nhops) {
        r->last_int = *pkt->int_md;
        if (r->last_int.nhops > FE_INT_MAX_HOPS) r->last_int.nhops = FE_INT_MAX_HOPS;
    }
}

/* Only the expected PSN executes. */
STEP int check_psn(struct fe_qp *qp, uint32_t psn)
{
    struct fe_resp *r = &qp->resp;
    int32_t d = fe_psn_diff(psn, r->epsn);
    if (d == 0) return NEXT;
    if (d < 0) {
        /* a duplicate: acknowledge again (its ACK may have been lost), never execute */
        qp->ctr.rx_dup_pkts++;
        queue_ack(qp, fe_psn_add(r->epsn, -1));
        return 0;
    }
    qp->ctr.rx_ooo_pkts++;
    if (!r->nak_sent) {
        r->nak_sent = true;
        queue_nak(qp, fe_aeth_syn_nak(FE_NAK_PSN_SEQ), r->epsn);
    }
    return FE_ERANGE;
}

STEP int check_op_supported(struct fe_qp *qp, uint32_t psn, unsigned fl)
{
    if ((fl & (FE_OPF_SUPPORTED | FE_OPF_REQUEST)) == (FE_OPF_SUPPORTED | FE_OPF_REQUEST))
        return NEXT;
    qp->ctr.rx_unsupported++;
    return fatal(qp, psn, FE_NAK_INVALID_REQ, FE_ENOTSUP);
}

/* FIRST/ONLY outside a message, MIDDLE/LAST of the same kind inside. */
STEP int check_op_seq(struct fe_qp *qp, uint32_t psn, unsigned fl)
{
    const struct fe_resp *r = &qp->resp;
    bool first = fl & FE_OPF_FIRST, send = fl & FE_OPF_SEND;
    if (r->in_msg ? (first || send != r->msg_send) : !first)
        return fatal(qp, psn, FE_NAK_INVALID_REQ, FE_EPARSE);
    return NEXT;
}

/* FIRST and MIDDLE carry exactly one MTU, LAST 1..MTU, ONLY 0..MTU. */
STEP int check_length(struct fe_qp *qp, uint32_t psn, unsigned fl, uint32_t len)
{
    uint32_t mtu = qp->resp.mtu_bytes;
    bool first = fl & FE_OPF_FIRST, last = fl & FE_OPF_LAST;
    if (len > mtu || (!last && len != mtu) || (last && !first && len == 0))
        return fatal(qp, psn, FE_NAK_INVALID_REQ, FE_EINVAL);
    return NEXT;
}

/* A receive buffer: SEND (all packets use the head one), WRITE with immediate at its end. */
STEP int check_resource(struct fe_qp *qp, uint32_t psn, unsigned fl)
{
    struct fe_resp *r = &qp->resp;
    if (!(fl & (FE_OPF_SEND | FE_OPF_IMM)) || r->rq_count) return NEXT;
    /* RNR: nothing executed, PSN not advanced; later packets are dropped as for a gap */
    queue_nak(qp, fe_aeth_syn_rnr(r->min_rnr_timer), psn);
    r->nak_sent = true;
    return FE_EAGAIN;
}

/* SEND: the payload at the receive buffer's next offset; its last packet completes it. */
STEP int execute_send(struct fe_qp *qp, const struct fe_pkt *pkt, uint32_t psn, unsigned fl)
{
    struct fe_resp *r = &qp->resp;
    const struct fe_recv_entry *b = &r->rq[r->rq_head];
    bool last = fl & FE_OPF_LAST;
    uint32_t len = pkt->payload_len;
    uint64_t off = fl & FE_OPF_FIRST ? 0 : r->msg_off;
    if (len > b->len || off > b->len - len) {
        /* rxe: local length error on the receive, NAK invalid request to the peer */
        complete_recv(qp, FE_WC_LOC_LEN_ERR, FE_WC_RECV, false, 0, off);
        return fatal(qp, psn, FE_NAK_INVALID_REQ, FE_EINVAL);
    }
    if (b->buf && pkt->payload && len) memcpy(b->buf + off, pkt->payload, len);
    r->msg_off = off + len;
    r->in_msg = !last;
    r->msg_send = true;
    if (last) complete_recv(qp, FE_WC_SUCCESS, FE_WC_RECV, fl & FE_OPF_IMM, pkt->imm, r->msg_off);
    return NEXT;
}

/* Where a WRITE's packet goes: the next VA, the bytes of the message still expected and its
 * memory region (-1 when none). */
struct write_dest {
    uint64_t va, left;
    int32_t mi;
};

/* A WRITE's first packet: its RETH's key and range, against the registered regions. */
STEP int check_rkey(struct fe_qp *qp, const struct fe_pkt *pkt, uint32_t psn, struct write_dest *w)
{
    w->va = pkt->reth.va;
    w->left = pkt->reth.dma_len;
    w->mi = -1;
    /* zero-length WRITEs touch no memory: no key or range to check (IBA C9-88) */
    if (!w->left) return NEXT;
    w->mi = fe_qp_find_mr(qp, pkt->reth.rkey);
    if (w->mi < 0) {
        qp->ctr.rx_bad_rkey++;
        return fatal(qp, psn, FE_NAK_REMOTE_ACCESS, FE_EACCESS);
    }
    if (!in_mr(&qp->resp.mr[w->mi], w->va, w->left)) {
        qp->ctr.rx_bad_access++;
        return fatal(qp, psn, FE_NAK_REMOTE_ACCESS, FE_EACCESS);
    }
    return NEXT;
}

/* This packet's range: inside what the RETH announced, which the first packet found inside the
 * region (a message with bytes left has one); and the message ends exactly where it said. */
STEP int check_write_range(struct fe_qp *qp, uint32_t psn, bool last, uint32_t len,
                           const struct write_dest *w)
{
    if (len > w->left || (len && w->mi < 0)) {
        qp->ctr.rx_bad_access++;
        return fatal(qp, psn, FE_NAK_REMOTE_ACCESS, FE_EACCESS);
    }
    if (last && len != w->left) return fatal(qp, psn, FE_NAK_INVALID_REQ, FE_EINVAL);
    return NEXT;
}

/* The checked payload into the region (nothing for a sink or a virtual payload). */
STEP void place_payload(const struct fe_resp *r, const struct fe_pkt *pkt, uint32_t len,
                        const struct write_dest *w)
{
    if (!len) return;
    const struct fe_mr *mr = &r->mr[w->mi];
    if (!mr->base || !pkt->payload) return;
    uint8_t *dst = mr->base + (w->va - mr->va);
    /* a driver may have received the payload where it belongs (fe_qp_rx_write_next) */
    if (pkt->payload != dst) memmove(dst, pkt->payload, len);
}

/* After the payload: the message goes on at the next VA, or its last packet ends it (and a
 * WRITE with immediate consumes the receive buffer). */
STEP void update_write_msg(struct fe_qp *qp, const struct fe_pkt *pkt, unsigned fl, uint32_t len,
                           const struct write_dest *w)
{
    struct fe_resp *r = &qp->resp;
    bool first = fl & FE_OPF_FIRST;
    if (fl & FE_OPF_LAST) {
        r->in_msg = false; /* the message state is read by no other packet */
        if (fl & FE_OPF_IMM)
            complete_recv(qp, FE_WC_SUCCESS, FE_WC_RECV_RDMA_WITH_IMM, true, pkt->imm,
                          first ? w->left : r->msg_bytes);
        return;
    }
    if (first) r->msg_bytes = w->left;
    r->msg_va = w->va + len;
    r->msg_left = w->left - len;
    r->msg_mr = w->mi;
    r->in_msg = true;
    r->msg_send = false;
}

STEP int execute_write(struct fe_qp *qp, const struct fe_pkt *pkt, uint32_t psn, unsigned fl)
{
    struct fe_resp *r = &qp->resp;
    uint32_t len = pkt->payload_len;
    struct write_dest w = {.va = r->msg_va, .left = r->msg_left, .mi = r->msg_mr};
    int rc;
    if ((fl & FE_OPF_FIRST) && (rc = check_rkey(qp, pkt, psn, &w)) != NEXT) return rc;
    if ((rc = check_write_range(qp, psn, fl & FE_OPF_LAST, len, &w)) != NEXT) return rc;
    place_payload(r, pkt, len, &w);
    update_write_msg(qp, pkt, fl, len, &w);
    return NEXT;
}

/* An executed packet: the PSN advances, a message's last packet counts in the MSN, and an ACK
 * is queued when asked for, at a message's end, or every ack_every packets. */
STEP void advance(struct fe_qp *qp, const struct fe_pkt *pkt, uint32_t psn, unsigned fl)
{
    struct fe_resp *r = &qp->resp;
    bool last = fl & FE_OPF_LAST;
    r->epsn = fe_psn_add(psn, 1);
    r->nak_sent = false;
    qp->ctr.rx_pkts++;
    qp->ctr.rx_bytes += pkt->payload_len;
    if (last) {
        r->msn = (r->msn + 1) & FE_PSN_MASK;
        qp->ctr.rx_msgs++;
    }
    if (pkt->bth.ackreq || last || ++r->pkts_since_ack >= r->ack_every) queue_ack(qp, psn);
}

int fe_resp_rx(struct fe_qp *qp, uint64_t now_ns, const struct fe_pkt *pkt)
{
    uint32_t psn = pkt->bth.psn & FE_PSN_MASK;
    int rc;
    note_congestion(qp, now_ns, pkt);
    if ((rc = check_psn(qp, psn)) != NEXT) return rc;
    unsigned fl = fe_opcode_flags(pkt->bth.opcode);
    if ((rc = check_op_supported(qp, psn, fl)) != NEXT) return rc;
    if ((rc = check_op_seq(qp, psn, fl)) != NEXT) return rc;
    if ((rc = check_length(qp, psn, fl, pkt->payload_len)) != NEXT) return rc;
    if ((rc = check_resource(qp, psn, fl)) != NEXT) return rc;
    rc = fl & FE_OPF_SEND ? execute_send(qp, pkt, psn, fl) : execute_write(qp, pkt, psn, fl);
    if (rc != NEXT) return rc;
    advance(qp, pkt, psn, fl);
    return 0;
}
