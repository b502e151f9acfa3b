/* Helpers shared by the transport tests: a connected pair of QPs and ways to move packets
 * between them by hand or in bulk. Header-only (static functions), included by each test. */
#ifndef FE_TESTS_QP_UTIL_H
#define FE_TESTS_QP_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/qp.h"

#define QPN_A  0x000011u
#define QPN_B  0x000022u
#define RKEY_B 0x1234u
#define VA_B   0x100000000ull

/* A config for QP A (requester side) talking to QP B, or B to A when `b`. */
static inline void tq_config(struct fe_qp_config *c, bool b)
{
    fe_qp_config_default(c);
    c->local_qpn = b ? QPN_B : QPN_A;
    c->remote_qpn = b ? QPN_A : QPN_B;
    c->remote_va = VA_B;
    c->remote_rkey = RKEY_B;
    c->path.src_ip4 = b ? 0x0a000002 : 0x0a000001;
    c->path.dst_ip4 = b ? 0x0a000001 : 0x0a000002;
    /* tests that are not about pacing send everything at once */
    c->pacer_burst_bytes = 1ull << 32;
}

static inline struct fe_qp *tq_create(const struct fe_qp_config *c, uint64_t now_ns)
{
    int err = 0;
    const char *why = NULL;
    struct fe_qp *qp = fe_qp_create(c, now_ns, &err, &why);
    if (!qp) fail_msg("fe_qp_create: %s (%s)", fe_strerror(err), why ? why : "?");
    return qp;
}

/* All packets `qp` sends at now_ns (at most max). */
static inline int tq_tx_all(struct fe_qp *qp, uint64_t now_ns, struct fe_pkt *pkts, int max)
{
    int n = 0;
    while (n < max && fe_qp_tx(qp, now_ns, &pkts[n])) n++;
    return n;
}

/* Moves packets both ways, immediately and losslessly, until neither side has anything to send
 * at now_ns. Returns the number of packets moved. Payload pointers stay valid: they point into
 * posted WR memory that the test keeps. */
static inline long tq_pump(struct fe_qp *a, struct fe_qp *b, uint64_t now_ns)
{
    long moved = 0;
    for (;;) {
        struct fe_pkt p;
        int any = 0;
        while (fe_qp_tx(a, now_ns, &p)) {
            fe_qp_rx(b, now_ns, &p);
            moved++;
            any = 1;
        }
        while (fe_qp_tx(b, now_ns, &p)) {
            fe_qp_rx(a, now_ns, &p);
            moved++;
            any = 1;
        }
        if (!any) return moved;
    }
}

/* Runs a lossless pair in simulated time until both are idle or `until_ns`; returns the time. */
static inline uint64_t tq_run(struct fe_qp *a, struct fe_qp *b, uint64_t now_ns, uint64_t until_ns)
{
    for (;;) {
        tq_pump(a, b, now_ns);
        uint64_t da = fe_qp_next_deadline(a), db = fe_qp_next_deadline(b);
        uint64_t d = da < db ? da : db;
        if (d == FE_NO_DEADLINE || d > until_ns) return now_ns;
        if (d > now_ns) now_ns = d;
        fe_qp_handle_expiry(a, now_ns);
        fe_qp_handle_expiry(b, now_ns);
    }
}

static inline struct fe_pkt tq_ack(uint32_t dqpn, uint32_t psn, uint8_t syndrome, uint32_t msn)
{
    struct fe_pkt p;
    memset(&p, 0, sizeof p);
    p.bth.opcode = FE_OP_ACK;
    p.bth.pkey = FE_PKEY_DEFAULT;
    p.bth.dqpn = dqpn;
    p.bth.psn = psn;
    p.aeth.syndrome = syndrome;
    p.aeth.msn = msn;
    return p;
}

static inline struct fe_wr tq_wr(enum fe_wr_op op, const void *data, uint32_t len, uint64_t off,
                                 uint64_t cookie)
{
    struct fe_wr w = {.op = op,
                      .cookie = cookie,
                      .data = data,
                      .len = len,
                      .remote_offset = off,
                      .imm = (uint32_t)(cookie * 2654435761u)};
    return w;
}

/* A request packet built by hand (for the responder tests). */
static inline struct fe_pkt tq_req(uint8_t opcode, uint32_t psn, const void *payload, uint32_t len)
{
    struct fe_pkt p;
    memset(&p, 0, sizeof p);
    p.bth.opcode = opcode;
    p.bth.pkey = FE_PKEY_DEFAULT;
    p.bth.dqpn = QPN_B;
    p.bth.psn = psn;
    p.payload = payload;
    p.payload_len = len;
    p.ecn = FE_ECN_ECT0;
    return p;
}

static inline struct fe_pkt tq_write(uint8_t opcode, uint32_t psn, const void *payload,
                                     uint32_t len, uint64_t va, uint32_t rkey, uint32_t dma_len)
{
    struct fe_pkt p = tq_req(opcode, psn, payload, len);
    p.reth.va = va;
    p.reth.rkey = rkey;
    p.reth.dma_len = dma_len;
    return p;
}

#endif
