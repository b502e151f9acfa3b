/* Responder rules, one test each: WRITE placement and every access check (rkey, region, RETH
 * length, per packet), sinks and virtual payloads, receive buffers and RNR, SEND too long,
 * out-of-order (one NAK per gap), duplicates, ACK coalescing, bad ICRC, unsupported opcodes,
 * opcode sequence and length errors, MSN, the notification point (CNP, ECN echo), grants,
 * PSN wrap, and the error state. Packets are built by hand. */
#include "qp_util.h"
#include "transport/qp_sim.h"

#define MTU    256
#define REGION 4096

struct rig {
    struct fe_qp *qp;
    uint8_t mem[REGION + 64]; /* 32 guard bytes each side */
    uint8_t src[4 * REGION];
};

/* A responder QP with the simulator's settings `sim` (NULL: none). */
static struct rig *rig_new_sim(void (*tweak)(struct fe_qp_config *),
                               const struct fe_qp_sim_config *sim)
{
    struct rig *r = calloc(1, sizeof *r);
    struct fe_qp_config c;
    tq_config(&c, true);
    c.mtu_bytes = MTU;
    if (tweak) tweak(&c);
    r->qp = sim ? fe_qp_create_sim(&c, sim, 0, NULL, NULL) : tq_create(&c, 0);
    assert_non_null(r->qp);
    memset(r->mem, 0xEE, sizeof r->mem);
    for (size_t i = 0; i < sizeof r->src; i++) r->src[i] = (uint8_t)(i * 13 + 1);
    struct fe_mr mr = {.rkey = RKEY_B, .va = VA_B, .len = REGION, .base = r->mem + 32};
    assert_int_equal(fe_qp_reg_mr(r->qp, &mr), 0);
    return r;
}

static struct rig *rig_new(void (*tweak)(struct fe_qp_config *))
{
    return rig_new_sim(tweak, NULL);
}

static void rig_free(struct rig *r)
{
    fe_qp_destroy(r->qp);
    free(r);
}

static bool untouched(const struct rig *r, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (r->mem[32 + i] != 0xEE) return false;
    return true;
}

static bool guards_ok(const struct rig *r)
{
    for (int i = 0; i < 32; i++)
        if (r->mem[i] != 0xEE || r->mem[32 + REGION + i] != 0xEE) return false;
    return true;
}

/* The next response the responder sends (asserts there is one). */
static struct fe_pkt resp(struct rig *r)
{
    struct fe_pkt p;
    assert_int_equal(fe_qp_tx(r->qp, 0, &p), 1);
    assert_int_equal(p.bth.dqpn, QPN_A);
    assert_int_equal(p.bth.pkey, FE_PKEY_DEFAULT);
    return p;
}

static void no_resp(struct rig *r)
{
    struct fe_pkt p;
    assert_int_equal(fe_qp_tx(r->qp, 0, &p), 0);
}

static void expect_ack(struct rig *r, uint32_t psn, uint32_t msn)
{
    struct fe_pkt p = resp(r);
    assert_int_equal(p.bth.opcode, FE_OP_ACK);
    assert_int_equal(fe_aeth_kind(p.aeth.syndrome), FE_AETH_ACK);
    assert_int_equal(p.bth.psn, psn);
    assert_int_equal(p.aeth.msn, msn);
}

static void expect_nak(struct rig *r, uint32_t psn, uint8_t code)
{
    struct fe_pkt p = resp(r);
    assert_int_equal(p.bth.opcode, FE_OP_ACK);
    assert_int_equal(p.aeth.syndrome, fe_aeth_syn_nak(code));
    assert_int_equal(p.bth.psn, psn);
}

static int rx(struct rig *r, struct fe_pkt p)
{
    return fe_qp_rx(r->qp, 0, &p);
}

static void test_write_in_order(void **state)
{
    (void)state;
    struct rig *r = rig_new(NULL);
    uint64_t va = VA_B + 100;
    uint32_t len = 3 * MTU + 5;
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_FIRST, 0, r->src, MTU, va, RKEY_B, len)), 0);
    no_resp(r); /* no AckReq, not the end, fewer than ack_every */
    assert_int_equal(rx(r, tq_req(FE_OP_WRITE_MIDDLE, 1, r->src + MTU, MTU)), 0);
    assert_int_equal(rx(r, tq_req(FE_OP_WRITE_MIDDLE, 2, r->src + 2 * MTU, MTU)), 0);
    assert_int_equal(rx(r, tq_req(FE_OP_WRITE_LAST, 3, r->src + 3 * MTU, 5)), 0);
    expect_ack(r, 3, 1);
    no_resp(r);
    assert_memory_equal(r->mem + 32 + 100, r->src, len);
    assert_true(untouched(r, 0, 100));
    assert_true(untouched(r, 100 + len, REGION));
    assert_true(guards_ok(r));
    /* a WRITE that ends exactly at the end of the region */
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 4, r->src, 7, VA_B + REGION - 7, RKEY_B, 7)),
                     0);
    expect_ack(r, 4, 2);
    assert_memory_equal(r->mem + 32 + REGION - 7, r->src, 7);
    assert_true(guards_ok(r));
    const struct fe_qp_counters *k = fe_qp_counters(r->qp);
    assert_int_equal(k->rx_pkts, 5);
    assert_int_equal(k->rx_bytes, len + 7);
    assert_int_equal(k->rx_msgs, 2);
    assert_int_equal(k->tx_acks, 2);
    struct fe_qp_psns ps;
    fe_qp_psns(r->qp, &ps);
    assert_int_equal(ps.expected_psn, 5);
    assert_int_equal(ps.msn, 2);
    struct fe_cqe cq[2];
    assert_int_equal(fe_qp_poll_cq(r->qp, cq, 2), 0); /* plain WRITEs complete nothing here */
    rig_free(r);
}

/* Each refused WRITE: NAK remote access error at its PSN, QP to error, nothing written. */
static void refused(struct fe_pkt *pkts, int n, int bad_ctr_rkey, size_t written)
{
    struct rig *r = rig_new(NULL);
    assert_int_equal(fe_qp_post_recv(r->qp, 5, NULL, 0), 0);
    int i;
    for (i = 0; i < n - 1; i++) {
        pkts[i].payload = r->src + (size_t)i * MTU;
        assert_int_equal(rx(r, pkts[i]), 0);
    }
    pkts[i].payload = r->src + (size_t)i * MTU;
    assert_int_equal(rx(r, pkts[i]), FE_EACCESS);
    expect_nak(r, pkts[i].bth.psn, FE_NAK_REMOTE_ACCESS);
    no_resp(r);
    assert_int_equal(fe_qp_state(r->qp), FE_QPS_ERROR);
    const struct fe_qp_counters *k = fe_qp_counters(r->qp);
    assert_int_equal(bad_ctr_rkey ? k->rx_bad_rkey : k->rx_bad_access, 1);
    assert_true(untouched(r, written, REGION));
    assert_true(guards_ok(r));
    struct fe_cqe cq[2];
    assert_int_equal(fe_qp_poll_cq(r->qp, cq, 2), 1); /* the receive buffer, flushed */
    assert_int_equal(cq[0].status, FE_WC_WR_FLUSH_ERR);
    /* in error: later packets are dropped */
    struct fe_pkt again = tq_write(FE_OP_WRITE_ONLY, pkts[i].bth.psn, r->src, 1, VA_B, RKEY_B, 1);
    assert_int_equal(rx(r, again), FE_ESTATE);
    assert_int_equal(k->rx_dropped, 1);
    no_resp(r);
    assert_true(untouched(r, written, REGION));
    rig_free(r);
}

static void test_write_access_checks(void **state)
{
    (void)state;
    struct fe_pkt p[3];
    /* bad rkey */
    p[0] = tq_write(FE_OP_WRITE_ONLY, 0, NULL, 10, VA_B, RKEY_B + 1, 10);
    refused(p, 1, 1, 0);
    /* below the region */
    p[0] = tq_write(FE_OP_WRITE_ONLY, 0, NULL, 10, VA_B - 1, RKEY_B, 10);
    refused(p, 1, 0, 0);
    /* one byte past the end */
    p[0] = tq_write(FE_OP_WRITE_ONLY, 0, NULL, 8, VA_B + REGION - 7, RKEY_B, 8);
    refused(p, 1, 0, 0);
    /* a whole message that would overrun, refused at its FIRST packet */
    p[0] = tq_write(FE_OP_WRITE_FIRST, 0, NULL, MTU, VA_B + REGION - MTU, RKEY_B, 2 * MTU);
    refused(p, 1, 0, 0);
    /* VA + length wrapping around 2^64 */
    p[0] = tq_write(FE_OP_WRITE_ONLY, 0, NULL, 16, UINT64_MAX - 7, RKEY_B, 16);
    refused(p, 1, 0, 0);
    /* a packet carrying more than its RETH announced (FIRST ok, MIDDLE beyond dma_len) */
    p[0] = tq_write(FE_OP_WRITE_FIRST, 0, NULL, MTU, VA_B, RKEY_B, MTU + 10);
    p[1] = tq_req(FE_OP_WRITE_MIDDLE, 1, NULL, MTU);
    refused(p, 2, 0, MTU);
    /* an ONLY longer than its dma_len */
    p[0] = tq_write(FE_OP_WRITE_ONLY, 0, NULL, 20, VA_B, RKEY_B, 10);
    refused(p, 1, 0, 0);
    /* a LAST longer than what remains */
    p[0] = tq_write(FE_OP_WRITE_FIRST, 0, NULL, MTU, VA_B, RKEY_B, MTU + 10);
    p[1] = tq_req(FE_OP_WRITE_LAST, 1, NULL, 11);
    refused(p, 2, 0, MTU);
}

static void test_write_length_errors(void **state)
{
    (void)state;
    /* a message ending short of its dma_len; FIRST/MIDDLE not one MTU; LAST empty; over MTU */
    struct {
        struct fe_pkt p[2];
        int n;
    } k[] = {
        {{tq_write(FE_OP_WRITE_FIRST, 0, NULL, MTU, VA_B, RKEY_B, 3 * MTU),
          tq_req(FE_OP_WRITE_LAST, 1, NULL, MTU)},
         2},
        {{tq_write(FE_OP_WRITE_ONLY, 0, NULL, 5, VA_B, RKEY_B, 10)}, 1},
        {{tq_write(FE_OP_WRITE_FIRST, 0, NULL, MTU - 1, VA_B, RKEY_B, 3 * MTU)}, 1},
        {{tq_write(FE_OP_WRITE_FIRST, 0, NULL, MTU, VA_B, RKEY_B, 3 * MTU),
          tq_req(FE_OP_WRITE_MIDDLE, 1, NULL, MTU + 4)},
         2},
        {{tq_write(FE_OP_WRITE_FIRST, 0, NULL, MTU, VA_B, RKEY_B, 3 * MTU),
          tq_req(FE_OP_WRITE_LAST, 1, NULL, 0)},
         2},
        {{tq_write(FE_OP_WRITE_ONLY, 0, NULL, MTU + 4, VA_B, RKEY_B, MTU + 4)}, 1},
        {{tq_req(FE_OP_SEND_FIRST, 0, NULL, 100)}, 1},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        struct rig *r = rig_new(NULL);
        assert_int_equal(fe_qp_post_recv(r->qp, 1, NULL, 10000), 0);
        for (int j = 0; j < k[i].n; j++) {
            k[i].p[j].payload = r->src;
            int rc = rx(r, k[i].p[j]);
            assert_int_equal(rc, j + 1 < k[i].n ? 0 : FE_EINVAL);
        }
        expect_nak(r, (uint32_t)k[i].n - 1, FE_NAK_INVALID_REQ);
        assert_int_equal(fe_qp_state(r->qp), FE_QPS_ERROR);
        assert_true(untouched(r, k[i].n > 1 ? MTU : 0, REGION));
        rig_free(r);
    }
}

static void test_sink_and_virtual(void **state)
{
    (void)state;
    /* payload NULL into a real region: every check, nothing written */
    struct rig *r = rig_new(NULL);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 0, NULL, 100, VA_B, RKEY_B, 100)), 0);
    assert_true(untouched(r, 0, REGION));
    assert_int_equal(fe_qp_counters(r->qp)->rx_bytes, 100);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 1, NULL, 100, VA_B + REGION, RKEY_B, 100)),
                     FE_EACCESS);
    rig_free(r);
    /* a sink region (base NULL): counted, checked, never stored */
    r = rig_new(NULL);
    struct fe_mr sink = {.rkey = 9, .va = 0, .len = 1ull << 40, .base = NULL};
    assert_int_equal(fe_qp_reg_mr(r->qp, &sink), 0);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 0, r->src, 100, 1ull << 39, 9, 100)), 0);
    assert_int_equal(fe_qp_counters(r->qp)->rx_bytes, 100);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 1, r->src, 100, (1ull << 40) - 50, 9, 100)),
                     FE_EACCESS);
    assert_true(untouched(r, 0, REGION));
    rig_free(r);
    /* a zero-length WRITE touches no memory: no key check (IBA C9-88) */
    r = rig_new(NULL);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 0, NULL, 0, 12345, 777, 0)), 0);
    expect_ack(r, 0, 1);
    rig_free(r);
}

static void test_recv_and_rnr(void **state)
{
    (void)state;
    struct rig *r = rig_new(NULL);
    uint8_t buf[3 * MTU];
    memset(buf, 0, sizeof buf);
    /* SEND without a receive buffer: RNR NAK, nothing executed, PSN not advanced */
    assert_int_equal(rx(r, tq_req(FE_OP_SEND_FIRST, 0, r->src, MTU)), FE_EAGAIN);
    struct fe_pkt p = resp(r);
    assert_int_equal(p.aeth.syndrome, fe_aeth_syn_rnr(1)); /* min_rnr_timer */
    assert_int_equal(p.bth.psn, 0);
    const struct fe_qp_counters *k = fe_qp_counters(r->qp);
    assert_int_equal(k->tx_rnr_naks, 1);
    /* what follows is dropped quietly (no sequence NAK on top of the RNR NAK) */
    assert_int_equal(rx(r, tq_req(FE_OP_SEND_LAST, 1, r->src, 10)), FE_ERANGE);
    no_resp(r);
    struct fe_qp_psns ps;
    fe_qp_psns(r->qp, &ps);
    assert_int_equal(ps.expected_psn, 0);
    /* a buffer arrives; the resent message lands */
    assert_int_equal(fe_qp_post_recv(r->qp, 42, buf, sizeof buf), 0);
    assert_int_equal(rx(r, tq_req(FE_OP_SEND_FIRST, 0, r->src, MTU)), 0);
    struct fe_pkt last = tq_req(FE_OP_SEND_LAST_IMM, 1, r->src + MTU, 10);
    last.imm = 0xCAFEBABE;
    assert_int_equal(rx(r, last), 0);
    expect_ack(r, 1, 1);
    struct fe_cqe cq[4];
    assert_int_equal(fe_qp_poll_cq(r->qp, cq, 4), 1);
    assert_int_equal(cq[0].cookie, 42);
    assert_int_equal(cq[0].status, FE_WC_SUCCESS);
    assert_int_equal(cq[0].opcode, FE_WC_RECV);
    assert_int_equal(cq[0].byte_len, MTU + 10);
    assert_true(cq[0].has_imm);
    assert_int_equal(cq[0].imm, 0xCAFEBABE);
    assert_memory_equal(buf, r->src, MTU + 10);

    /* WRITE with immediate: the data needs no buffer, its last packet does */
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_FIRST, 2, r->src, MTU, VA_B, RKEY_B, MTU + 3)), 0);
    last = tq_req(FE_OP_WRITE_LAST_IMM, 3, r->src + MTU, 3);
    last.imm = 77;
    assert_int_equal(rx(r, last), FE_EAGAIN);
    p = resp(r);
    assert_int_equal(p.aeth.syndrome, fe_aeth_syn_rnr(1));
    assert_int_equal(p.bth.psn, 3);
    assert_true(untouched(r, MTU, REGION)); /* the refused packet wrote nothing */
    assert_int_equal(fe_qp_post_recv(r->qp, 43, NULL, 0), 0);
    assert_int_equal(rx(r, last), 0);
    expect_ack(r, 3, 2);
    assert_memory_equal(r->mem + 32, r->src, MTU + 3);
    assert_int_equal(fe_qp_poll_cq(r->qp, cq, 4), 1);
    assert_int_equal(cq[0].cookie, 43);
    assert_int_equal(cq[0].opcode, FE_WC_RECV_RDMA_WITH_IMM);
    assert_int_equal(cq[0].byte_len, MTU + 3);
    assert_int_equal(cq[0].imm, 77);
    assert_int_equal(fe_qp_state(r->qp), FE_QPS_RTS);
    rig_free(r);
}

static void rnr_code(struct fe_qp_config *c)
{
    c->min_rnr_timer = 14;
}

static void test_send_too_long(void **state)
{
    (void)state;
    struct rig *r = rig_new(rnr_code);
    uint8_t buf[300];
    memset(buf, 0x55, sizeof buf);
    assert_int_equal(fe_qp_post_recv(r->qp, 1, buf, sizeof buf), 0);
    assert_int_equal(fe_qp_post_recv(r->qp, 2, NULL, 1000), 0);
    assert_int_equal(rx(r, tq_req(FE_OP_SEND_FIRST, 0, r->src, MTU)), 0);
    assert_int_equal(rx(r, tq_req(FE_OP_SEND_LAST, 1, r->src + MTU, 100)), FE_EINVAL);
    expect_nak(r, 1, FE_NAK_INVALID_REQ);
    assert_int_equal(fe_qp_state(r->qp), FE_QPS_ERROR);
    struct fe_cqe cq[4];
    assert_int_equal(fe_qp_poll_cq(r->qp, cq, 4), 2);
    assert_int_equal(cq[0].cookie, 1);
    assert_int_equal(cq[0].status, FE_WC_LOC_LEN_ERR);
    assert_int_equal(cq[1].cookie, 2);
    assert_int_equal(cq[1].status, FE_WC_WR_FLUSH_ERR);
    for (int i = MTU; i < 300; i++) assert_int_equal(buf[i], 0x55); /* nothing past the fit */
    rig_free(r);

    /* RNR NAKs carry min_rnr_timer */
    r = rig_new(rnr_code);
    assert_int_equal(rx(r, tq_req(FE_OP_SEND_ONLY, 0, r->src, 1)), FE_EAGAIN);
    struct fe_pkt p = resp(r);
    assert_int_equal(p.aeth.syndrome, fe_aeth_syn_rnr(14));
    rig_free(r);
}

static void test_out_of_order(void **state)
{
    (void)state;
    struct rig *r = rig_new(NULL);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 0, r->src, 1, VA_B, RKEY_B, 1)), 0);
    expect_ack(r, 0, 1);
    /* PSN 1 lost: 2, 3, 4 arrive; one NAK for the gap, carrying the expected PSN */
    for (uint32_t psn = 2; psn <= 4; psn++)
        assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, psn, r->src, 1, VA_B + psn, RKEY_B, 1)),
                         FE_ERANGE);
    expect_nak(r, 1, FE_NAK_PSN_SEQ);
    no_resp(r);
    assert_true(untouched(r, 2, REGION));
    const struct fe_qp_counters *k = fe_qp_counters(r->qp);
    assert_int_equal(k->rx_ooo_pkts, 3);
    assert_int_equal(k->tx_naks[FE_NAK_PSN_SEQ], 1);
    /* the gap fills: normal again; a new gap gets a new NAK */
    for (uint32_t psn = 1; psn <= 3; psn++)
        assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, psn, r->src, 1, VA_B + psn, RKEY_B, 1)),
                         0);
    expect_ack(r, 3, 4); /* merged: three ACKs queued back to back are one */
    no_resp(r);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 6, r->src, 1, VA_B, RKEY_B, 1)), FE_ERANGE);
    expect_nak(r, 4, FE_NAK_PSN_SEQ);
    assert_int_equal(k->tx_naks[FE_NAK_PSN_SEQ], 2);
    /* PSNs more than half the space ahead are "behind": duplicates */
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 4 + 0x800000, r->src, 1, VA_B, RKEY_B, 1)),
                     0);
    expect_ack(r, 3, 4);
    rig_free(r);
}

static void test_duplicates(void **state)
{
    (void)state;
    struct rig *r = rig_new(NULL);
    uint8_t buf[64];
    assert_int_equal(fe_qp_post_recv(r->qp, 1, buf, sizeof buf), 0);
    assert_int_equal(fe_qp_post_recv(r->qp, 2, buf, sizeof buf), 0);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 0, r->src, 8, VA_B, RKEY_B, 8)), 0);
    assert_int_equal(rx(r, tq_req(FE_OP_SEND_ONLY, 1, r->src, 8)), 0);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 2, r->src, 8, VA_B + 8, RKEY_B, 8)), 0);
    expect_ack(r, 2, 3);
    memset(r->mem + 32, 0xAB, 16); /* so a re-execution would show */
    /* duplicates of each: acknowledged again with expected - 1, never re-executed */
    for (uint32_t psn = 0; psn < 3; psn++) {
        struct fe_pkt p = psn == 1 ? tq_req(FE_OP_SEND_ONLY, 1, r->src, 8)
                                   : tq_write(FE_OP_WRITE_ONLY, psn, r->src, 8, VA_B, RKEY_B, 8);
        assert_int_equal(rx(r, p), 0);
        expect_ack(r, 2, 3);
    }
    for (int i = 0; i < 16; i++) assert_int_equal(r->mem[32 + i], 0xAB);
    struct fe_cqe cq[4];
    assert_int_equal(fe_qp_poll_cq(r->qp, cq, 4), 1); /* the SEND once; buffer 2 still posted */
    const struct fe_qp_counters *k = fe_qp_counters(r->qp);
    assert_int_equal(k->rx_dup_pkts, 3);
    assert_int_equal(k->rx_msgs, 3);
    /* a duplicate in the middle of the next message does not disturb it */
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_FIRST, 3, r->src, MTU, VA_B, RKEY_B, 2 * MTU)), 0);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_FIRST, 3, r->src, MTU, VA_B, RKEY_B, 2 * MTU)), 0);
    expect_ack(r, 3, 3);
    assert_int_equal(rx(r, tq_req(FE_OP_WRITE_LAST, 4, r->src + MTU, MTU)), 0);
    expect_ack(r, 4, 4);
    assert_memory_equal(r->mem + 32, r->src, 2 * MTU);
    rig_free(r);
}

static void every4(struct fe_qp_config *c)
{
    c->ack_every = 4;
}

static void test_ack_coalescing(void **state)
{
    (void)state;
    struct rig *r = rig_new(every4);
    /* 10-packet WRITE without AckReq: ACKs after packets 4, 8 and the last */
    uint32_t psn = 0;
    for (int i = 0; i < 10; i++, psn++) {
        uint8_t op = i == 0 ? FE_OP_WRITE_FIRST : i == 9 ? FE_OP_WRITE_LAST : FE_OP_WRITE_MIDDLE;
        struct fe_pkt p = tq_write(op, psn, NULL, MTU, VA_B, RKEY_B, 10 * MTU);
        assert_int_equal(rx(r, p), 0);
        if (i == 3 || i == 7 || i == 9)
            expect_ack(r, psn, i == 9 ? 1 : 0);
        else
            no_resp(r);
    }
    /* AckReq asks for one at once */
    struct fe_pkt p = tq_write(FE_OP_WRITE_FIRST, psn, NULL, MTU, VA_B, RKEY_B, 2 * MTU);
    p.bth.ackreq = true;
    assert_int_equal(rx(r, p), 0);
    expect_ack(r, psn, 1);
    psn++;
    assert_int_equal(rx(r, tq_req(FE_OP_WRITE_LAST, psn++, NULL, MTU)), 0);
    expect_ack(r, psn - 1, 2);
    /* ACKs not yet pulled merge into one: the cumulative latest */
    for (int i = 0; i < 50; i++, psn++)
        assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, psn, NULL, 1, VA_B, RKEY_B, 1)), 0);
    expect_ack(r, psn - 1, 52);
    no_resp(r);
    rig_free(r);
}

static void test_bad_icrc(void **state)
{
    (void)state;
    struct rig *r = rig_new(NULL);
    struct fe_pkt p = tq_write(FE_OP_WRITE_ONLY, 0, r->src, 8, VA_B, RKEY_B, 8);
    p.icrc = FE_ICRC_BAD;
    assert_int_equal(rx(r, p), FE_EPARSE);
    no_resp(r);
    assert_true(untouched(r, 0, REGION));
    assert_int_equal(fe_qp_counters(r->qp)->rx_bad_icrc, 1);
    struct fe_qp_psns ps;
    fe_qp_psns(r->qp, &ps);
    assert_int_equal(ps.expected_psn, 0);
    p.icrc = FE_ICRC_OK;
    assert_int_equal(rx(r, p), 0);
    rig_free(r);
}

static void test_unsupported_opcodes(void **state)
{
    (void)state;
    static const uint8_t ops[] = {FE_OP_READ_REQUEST,
                                  FE_OP_CMP_SWAP,
                                  FE_OP_FETCH_ADD,
                                  FE_OP_SEND_ONLY_INV,
                                  FE_OP_SEND_LAST_INV,
                                  0x15,
                                  0x1F,
                                  0x40,
                                  0xFF};
    for (size_t i = 0; i < sizeof ops; i++) {
        struct rig *r = rig_new(NULL);
        assert_int_equal(fe_qp_post_recv(r->qp, 1, NULL, 100), 0);
        struct fe_pkt p = tq_write(ops[i], 0, NULL, 0, VA_B, RKEY_B, 8);
        assert_int_equal(rx(r, p), FE_ENOTSUP);
        expect_nak(r, 0, FE_NAK_INVALID_REQ);
        assert_int_equal(fe_qp_counters(r->qp)->rx_unsupported, 1);
        assert_int_equal(fe_qp_counters(r->qp)->tx_naks[FE_NAK_INVALID_REQ], 1);
        assert_int_equal(fe_qp_state(r->qp), FE_QPS_ERROR);
        rig_free(r);
    }
}

static void test_opcode_sequence(void **state)
{
    (void)state;
    struct {
        uint8_t a, b;
    } k[] = {
        {FE_OP_WRITE_MIDDLE, 0},               /* MIDDLE outside a message */
        {FE_OP_SEND_LAST, 0},                  /* LAST outside a message */
        {FE_OP_WRITE_FIRST, FE_OP_SEND_LAST},  /* a SEND packet inside a WRITE */
        {FE_OP_WRITE_FIRST, FE_OP_WRITE_ONLY}, /* a new message before the LAST */
        {FE_OP_SEND_FIRST, FE_OP_WRITE_MIDDLE},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        struct rig *r = rig_new(NULL);
        assert_int_equal(fe_qp_post_recv(r->qp, 1, NULL, 10000), 0);
        struct fe_pkt p = tq_write(k[i].a, 0, NULL, MTU, VA_B, RKEY_B, 4 * MTU);
        uint32_t bad_psn = 0;
        if (k[i].b) {
            assert_int_equal(rx(r, p), 0);
            p = tq_write(k[i].b, 1, NULL, MTU, VA_B, RKEY_B, MTU);
            bad_psn = 1;
        }
        assert_int_equal(rx(r, p), FE_EPARSE);
        expect_nak(r, bad_psn, FE_NAK_INVALID_REQ);
        assert_int_equal(fe_qp_state(r->qp), FE_QPS_ERROR);
        rig_free(r);
    }
}

static void test_notification_point(void **state)
{
    (void)state;
    struct rig *r = rig_new(NULL);
    struct fe_pkt p = tq_write(FE_OP_WRITE_ONLY, 0, NULL, 8, VA_B, RKEY_B, 8);
    p.ecn = FE_ECN_CE;
    assert_int_equal(fe_qp_rx(r->qp, 1000, &p), 0);
    /* the CNP was queued before the ACK: responses go out in order */
    struct fe_pkt c = resp(r);
    assert_int_equal(c.bth.opcode, FE_OP_CNP);
    assert_true(c.bth.becn);
    assert_int_equal(c.bth.psn, 0);
    assert_int_equal(c.payload_len, FE_CNP_PAD_LEN);
    assert_null(c.payload);
    assert_int_equal(c.ecn, FE_ECN_NOT_ECT);
    assert_int_equal(c.dscp, 48);
    assert_int_equal(c.pcp, 6);
    assert_int_equal(fe_pkt_wire_len(&c), FE_BTH_LEN + FE_CNP_PAD_LEN + FE_ICRC_LEN);
    expect_ack(r, 0, 1);
    /* at most one CNP per 4 us; CE on duplicates counts too */
    p.bth.psn = 1;
    assert_int_equal(fe_qp_rx(r->qp, 4999, &p), 0);
    expect_ack(r, 1, 2);
    p.bth.psn = 1;
    assert_int_equal(fe_qp_rx(r->qp, 5000, &p), 0); /* a duplicate, CE-marked */
    c = resp(r);
    assert_int_equal(c.bth.opcode, FE_OP_CNP);
    expect_ack(r, 1, 2);
    const struct fe_qp_counters *k = fe_qp_counters(r->qp);
    assert_int_equal(k->rx_ce_pkts, 3);
    assert_int_equal(k->tx_cnps, 2);
    rig_free(r);
}

static void np_off(struct fe_qp_config *c)
{
    c->np_enable = false;
}
static const struct fe_qp_sim_config np_echo = {.np_ecn_echo_on_ack = true};

static void test_np_modes(void **state)
{
    (void)state;
    struct rig *r = rig_new(np_off);
    struct fe_pkt p = tq_write(FE_OP_WRITE_ONLY, 0, NULL, 8, VA_B, RKEY_B, 8);
    p.ecn = FE_ECN_CE;
    assert_int_equal(rx(r, p), 0);
    struct fe_pkt a = resp(r);
    assert_int_equal(a.bth.opcode, FE_OP_ACK);
    assert_false(a.bth.becn);
    no_resp(r);
    assert_int_equal(fe_qp_counters(r->qp)->rx_ce_pkts, 1);
    assert_int_equal(fe_qp_counters(r->qp)->tx_cnps, 0);
    rig_free(r);

    /* ns-3 mode: BECN on the next ACK instead of a CNP */
    r = rig_new_sim(NULL, &np_echo);
    p = tq_write(FE_OP_WRITE_FIRST, 0, NULL, MTU, VA_B, RKEY_B, 2 * MTU);
    p.ecn = FE_ECN_CE;
    assert_int_equal(rx(r, p), 0);
    no_resp(r); /* no CNP, and no ACK yet */
    assert_int_equal(rx(r, tq_req(FE_OP_WRITE_LAST, 1, NULL, MTU)), 0);
    a = resp(r);
    assert_int_equal(a.bth.opcode, FE_OP_ACK);
    assert_true(a.bth.becn);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 2, NULL, 1, VA_B, RKEY_B, 1)), 0);
    a = resp(r);
    assert_false(a.bth.becn); /* echoed once */
    rig_free(r);
}

static void test_grant(void **state)
{
    (void)state;
    struct rig *r = rig_new(NULL);
    no_resp(r);
    fe_qp_set_grant(r->qp, 10000);
    assert_int_equal(fe_qp_next_deadline(r->qp), 0);
    struct fe_pkt a = resp(r); /* a bare ACK for the grant */
    assert_int_equal(a.bth.opcode, FE_OP_ACK);
    assert_int_equal(a.bth.psn, 0xFFFFFF); /* expected - 1 */
    assert_int_equal(a.credit_bytes, 10000);
    no_resp(r);
    fe_qp_set_grant(r->qp, 10000); /* unchanged: nothing to send */
    no_resp(r);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 0, NULL, 1, VA_B, RKEY_B, 1)), 0);
    a = resp(r);
    assert_int_equal(a.credit_bytes, 10000); /* every ACK carries the grant */
    fe_qp_set_grant(r->qp, 20000);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 1, NULL, 1, VA_B, RKEY_B, 1)), 0);
    a = resp(r);
    assert_int_equal(a.credit_bytes, 20000);
    no_resp(r); /* that ACK carried it: no bare one */
    rig_free(r);
}

static const struct fe_qp_sim_config int_on = {.int_echo = true};

/* HPCC's receiver side: ACKs carry the INT records of the latest data packet that had them (a
 * copy: the packet's memory is gone); without int_echo, or before any INT, none. */
static void test_int_echo(void **state)
{
    (void)state;
    struct fe_int md = {.nhops = 2};
    md.hop[0] =
        (struct fe_int_hop){.ts_ns = 11, .tx_bytes = 22, .qlen_bytes = 33, .rate_mbps = 100000};
    md.hop[1] =
        (struct fe_int_hop){.ts_ns = 44, .tx_bytes = 55, .qlen_bytes = 66, .rate_mbps = 25000};
    for (int on = 0; on < 2; on++) {
        struct rig *r = rig_new_sim(NULL, on ? &int_on : NULL);
        assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 0, NULL, 1, VA_B, RKEY_B, 1)), 0);
        struct fe_pkt a = resp(r);
        assert_null(a.int_md); /* no INT seen yet */
        struct fe_pkt p = tq_write(FE_OP_WRITE_ONLY, 1, NULL, 1, VA_B, RKEY_B, 1);
        p.int_md = &md;
        assert_int_equal(rx(r, p), 0);
        md.hop[0].qlen_bytes = 999; /* the sender's copy changes: the echo must not */
        a = resp(r);
        if (!on) {
            assert_null(a.int_md);
        } else {
            assert_non_null(a.int_md);
            assert_int_equal(a.int_md->nhops, 2);
            assert_int_equal(a.int_md->hop[0].qlen_bytes, 33);
            assert_int_equal(a.int_md->hop[1].ts_ns, 44);
            assert_int_equal(a.int_md->hop[1].rate_mbps, 25000);
        }
        /* a data packet without INT keeps the last records (HPCC reads the newest it has) */
        assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 2, NULL, 1, VA_B, RKEY_B, 1)), 0);
        a = resp(r);
        assert_true(on ? a.int_md && a.int_md->hop[0].qlen_bytes == 33 : !a.int_md);
        md.hop[0].qlen_bytes = 33;
        rig_free(r);
    }
}

static void start_high(struct fe_qp_config *c)
{
    c->rq_psn = 0xFFFFFE;
}

static void test_psn_wrap(void **state)
{
    (void)state;
    struct rig *r = rig_new(start_high);
    uint32_t psns[] = {0xFFFFFE, 0xFFFFFF, 0, 1};
    for (int i = 0; i < 4; i++) {
        uint8_t op = i == 0 ? FE_OP_WRITE_FIRST : i == 3 ? FE_OP_WRITE_LAST : FE_OP_WRITE_MIDDLE;
        assert_int_equal(rx(r, tq_write(op, psns[i], r->src + i * MTU, MTU, VA_B, RKEY_B, 4 * MTU)),
                         0);
    }
    expect_ack(r, 1, 1);
    assert_memory_equal(r->mem + 32, r->src, 4 * MTU);
    assert_int_equal(rx(r, tq_req(FE_OP_WRITE_MIDDLE, 0xFFFFFF, NULL, MTU)), 0);
    expect_ack(r, 1, 1); /* a duplicate across the wrap */
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 3, NULL, 1, VA_B, RKEY_B, 1)), FE_ERANGE);
    expect_nak(r, 2, FE_NAK_PSN_SEQ);
    rig_free(r);
}

/* fe_qp_tx: responses leave before data. */
static void test_responses_first(void **state)
{
    (void)state;
    struct rig *r = rig_new(NULL);
    struct fe_wr w = tq_wr(FE_WR_WRITE, NULL, 10, 0, 1);
    assert_int_equal(fe_qp_post_send(r->qp, &w), 0);
    assert_int_equal(rx(r, tq_write(FE_OP_WRITE_ONLY, 0, NULL, 1, VA_B, RKEY_B, 1)), 0);
    struct fe_pkt p;
    assert_int_equal(fe_qp_tx(r->qp, 0, &p), 1);
    assert_int_equal(p.bth.opcode, FE_OP_ACK);
    assert_int_equal(fe_qp_tx(r->qp, 0, &p), 1);
    assert_int_equal(p.bth.opcode, FE_OP_WRITE_ONLY);
    rig_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_in_order),
        cmocka_unit_test(test_int_echo),
        cmocka_unit_test(test_write_access_checks),
        cmocka_unit_test(test_write_length_errors),
        cmocka_unit_test(test_sink_and_virtual),
        cmocka_unit_test(test_recv_and_rnr),
        cmocka_unit_test(test_send_too_long),
        cmocka_unit_test(test_out_of_order),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_ack_coalescing),
        cmocka_unit_test(test_bad_icrc),
        cmocka_unit_test(test_unsupported_opcodes),
        cmocka_unit_test(test_opcode_sequence),
        cmocka_unit_test(test_notification_point),
        cmocka_unit_test(test_np_modes),
        cmocka_unit_test(test_grant),
        cmocka_unit_test(test_psn_wrap),
        cmocka_unit_test(test_responses_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
