/* Requester rules, one test each: PSN wrap, cumulative ACKs, Go-Back-N on sequence NAKs,
 * duplicate NAKs, RNR waits and RNR retries, timeouts and retry exhaustion, every NAK code,
 * replay-ring stalls, AckReq policy, Karn's rule. Packets are driven by hand. */
#include "qp_util.h"

#define MTU 256

static struct fe_qp *mk(uint32_t sq_psn, void (*tweak)(struct fe_qp_config *))
{
    struct fe_qp_config c;
    tq_config(&c, false);
    c.mtu_bytes = MTU;
    c.sq_psn = sq_psn;
    if (tweak) tweak(&c);
    return tq_create(&c, 0);
}

static void post(struct fe_qp *qp, enum fe_wr_op op, uint32_t len, uint64_t cookie)
{
    struct fe_wr w = tq_wr(op, NULL, len, 0, cookie);
    assert_int_equal(fe_qp_post_send(qp, &w), 0);
}

static int rx_ack(struct fe_qp *qp, uint64_t now, uint32_t psn, uint8_t syn)
{
    struct fe_pkt a = tq_ack(QPN_A, psn, syn, 0);
    return fe_qp_rx(qp, now, &a);
}

static uint8_t ack_syn(void)
{
    return fe_aeth_syn_ack(FE_AETH_CREDITS_INVALID);
}

/* PSNs of every packet sent at now */
static int sent_psns(struct fe_qp *qp, uint64_t now, uint32_t *psn, int max)
{
    struct fe_pkt p[64];
    int n = tq_tx_all(qp, now, p, max < 64 ? max : 64);
    for (int i = 0; i < n; i++) psn[i] = p[i].bth.psn;
    return n;
}

static void test_psn_wrap(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0xFFFFFE, NULL);
    post(qp, FE_WR_WRITE, 5 * MTU, 1);
    post(qp, FE_WR_SEND, 10, 2);
    uint32_t psn[8];
    assert_int_equal(sent_psns(qp, 0, psn, 8), 6);
    uint32_t want[] = {0xFFFFFE, 0xFFFFFF, 0, 1, 2, 3};
    assert_memory_equal(psn, want, sizeof want);
    /* partial ACK across the wrap */
    assert_int_equal(rx_ack(qp, 10, 0, ack_syn()), 0);
    struct fe_qp_psns ps;
    fe_qp_psns(qp, &ps);
    assert_int_equal(ps.una_psn, 1);
    assert_int_equal(ps.next_psn, 4);
    assert_int_equal(ps.inflight_bytes, 2 * MTU + 10);
    struct fe_cqe cq[4];
    assert_int_equal(fe_qp_poll_cq(qp, cq, 4), 0);
    /* an ACK "before" una across the wrap is stale */
    assert_int_equal(rx_ack(qp, 11, 0xFFFFFF, ack_syn()), 0);
    fe_qp_psns(qp, &ps);
    assert_int_equal(ps.una_psn, 1);
    /* Go-Back-N across the wrap after a timeout that straddles it */
    fe_qp_destroy(qp);
    qp = mk(0xFFFFFD, NULL);
    post(qp, FE_WR_WRITE, 6 * MTU, 1);
    assert_int_equal(sent_psns(qp, 0, psn, 8), 6);
    fe_qp_handle_expiry(qp, fe_qp_next_deadline(qp));
    assert_int_equal(sent_psns(qp, 1000001, psn, 8), 6);
    uint32_t want2[] = {0xFFFFFD, 0xFFFFFE, 0xFFFFFF, 0, 1, 2};
    assert_memory_equal(psn, want2, sizeof want2);
    assert_int_equal(rx_ack(qp, 1000002, 2, ack_syn()), 0);
    assert_int_equal(fe_qp_poll_cq(qp, cq, 4), 1);
    assert_int_equal(cq[0].status, FE_WC_SUCCESS);
    fe_qp_destroy(qp);
}

static void test_cumulative_ack(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(10, NULL);
    post(qp, FE_WR_WRITE, 1, 1);      /* psn 10 */
    post(qp, FE_WR_WRITE, 2, 2);      /* psn 11 */
    post(qp, FE_WR_SEND, 3 * MTU, 3); /* psn 12..14 */
    post(qp, FE_WR_WRITE_IMM, 0, 4);  /* psn 15 */
    uint32_t psn[8];
    assert_int_equal(sent_psns(qp, 0, psn, 8), 6);
    struct fe_cqe cq[8];
    /* one ACK of 11 completes the first two, in order */
    assert_int_equal(rx_ack(qp, 100, 11, ack_syn()), 0);
    assert_int_equal(fe_qp_poll_cq(qp, cq, 8), 2);
    assert_int_equal(cq[0].cookie, 1);
    assert_int_equal(cq[1].cookie, 2);
    assert_int_equal(cq[1].byte_len, 2);
    assert_int_equal(cq[1].opcode, FE_WC_RDMA_WRITE);
    assert_int_equal(fe_qp_counters(qp)->tx_bytes_completed, 1 + 2);
    /* an ACK inside a message completes nothing */
    assert_int_equal(rx_ack(qp, 110, 13, ack_syn()), 0);
    assert_int_equal(fe_qp_poll_cq(qp, cq, 8), 0);
    assert_int_equal(fe_qp_counters(qp)->tx_bytes_completed, 1 + 2);
    struct fe_qp_psns ps;
    fe_qp_psns(qp, &ps);
    assert_int_equal(ps.una_psn, 14);
    assert_int_equal(ps.inflight_bytes, MTU);
    /* duplicate and never-sent ACKs */
    assert_int_equal(rx_ack(qp, 120, 13, ack_syn()), 0);
    assert_int_equal(rx_ack(qp, 120, 16, ack_syn()), FE_ERANGE);
    assert_int_equal(fe_qp_counters(qp)->rx_dropped, 1);
    assert_int_equal(rx_ack(qp, 130, 15, ack_syn()), 0);
    assert_int_equal(fe_qp_poll_cq(qp, cq, 8), 2);
    assert_int_equal(cq[0].cookie, 3);
    assert_int_equal(cq[0].opcode, FE_WC_SEND);
    assert_int_equal(cq[1].cookie, 4);
    const struct fe_qp_counters *k = fe_qp_counters(qp);
    assert_int_equal(k->rx_acks, 5);
    assert_int_equal(k->tx_msgs_completed, 4);
    assert_int_equal(k->tx_bytes_completed, 1 + 2 + 3 * MTU + 0);
    assert_int_equal(fe_qp_next_deadline(qp), FE_NO_DEADLINE); /* timer off when all acked */
    fe_qp_destroy(qp);
}

static void test_seq_nak_go_back_n(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0, NULL);
    post(qp, FE_WR_WRITE, MTU, 1);     /* 0 */
    post(qp, FE_WR_WRITE, 5 * MTU, 2); /* 1..5 */
    uint32_t psn[8];
    assert_int_equal(sent_psns(qp, 0, psn, 8), 6);
    /* NAK(3): 0..2 implicitly acknowledged, resend 3,4,5 */
    assert_int_equal(rx_ack(qp, 50, 3, fe_aeth_syn_nak(FE_NAK_PSN_SEQ)), 0);
    struct fe_cqe cq[4];
    assert_int_equal(fe_qp_poll_cq(qp, cq, 4), 1);
    assert_int_equal(cq[0].cookie, 1);
    struct fe_pkt p[8];
    int n = tq_tx_all(qp, 60, p, 8);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++) assert_int_equal(p[i].bth.psn, 3 + i);
    assert_int_equal(p[0].bth.opcode, FE_OP_WRITE_MIDDLE);
    assert_int_equal(p[2].bth.opcode, FE_OP_WRITE_LAST);
    assert_true(p[2].bth.ackreq); /* the end of a go-back burst asks for an ACK */
    const struct fe_qp_counters *k = fe_qp_counters(qp);
    assert_int_equal(k->rx_naks[FE_NAK_PSN_SEQ], 1);
    assert_int_equal(k->retx_seq_nak, 1);
    assert_int_equal(k->retx_pkts, 3);
    assert_int_equal(k->tx_pkts, 9);
    /* the channel duplicates that NAK: no second Go-Back-N */
    assert_int_equal(rx_ack(qp, 70, 3, fe_aeth_syn_nak(FE_NAK_PSN_SEQ)), 0);
    assert_int_equal(tq_tx_all(qp, 70, p, 8), 0);
    assert_int_equal(k->retx_seq_nak, 1);
    /* a later NAK with progress does go back */
    assert_int_equal(rx_ack(qp, 80, 4, fe_aeth_syn_nak(FE_NAK_PSN_SEQ)), 0);
    assert_int_equal(tq_tx_all(qp, 80, p, 8), 2);
    assert_int_equal(p[0].bth.psn, 4);
    /* stale NAKs (before una, or never sent) are ignored */
    assert_int_equal(rx_ack(qp, 90, 2, fe_aeth_syn_nak(FE_NAK_PSN_SEQ)), 0);
    assert_int_equal(rx_ack(qp, 90, 9, fe_aeth_syn_nak(FE_NAK_PSN_SEQ)), 0);
    assert_int_equal(tq_tx_all(qp, 90, p, 8), 0);
    assert_int_equal(rx_ack(qp, 100, 5, ack_syn()), 0);
    assert_int_equal(fe_qp_poll_cq(qp, cq, 4), 1);
    assert_int_equal(cq[0].status, FE_WC_SUCCESS);
    assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
    fe_qp_destroy(qp);
}

static void retry2(struct fe_qp_config *c)
{
    c->retry_cnt = 2;
}

/* Sequence NAKs without progress and timeouts share the retry budget. */
static void test_seq_nak_retry_exhausted(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0, retry2);
    post(qp, FE_WR_WRITE, 2 * MTU, 1);
    post(qp, FE_WR_SEND, 10, 2);
    uint32_t psn[8];
    assert_int_equal(sent_psns(qp, 0, psn, 8), 3);
    assert_int_equal(rx_ack(qp, 10, 0, fe_aeth_syn_nak(FE_NAK_PSN_SEQ)), 0); /* 2 -> 1 */
    assert_int_equal(sent_psns(qp, 10, psn, 8), 3);
    fe_qp_handle_expiry(qp, fe_qp_next_deadline(qp)); /* 1 -> 0 */
    assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
    assert_int_equal(sent_psns(qp, 2000000, psn, 8), 3);
    assert_int_equal(rx_ack(qp, 2000010, 0, fe_aeth_syn_nak(FE_NAK_PSN_SEQ)), 0); /* out */
    assert_int_equal(fe_qp_state(qp), FE_QPS_ERROR);
    struct fe_cqe cq[4];
    assert_int_equal(fe_qp_poll_cq(qp, cq, 4), 2);
    assert_int_equal(cq[0].status, FE_WC_RETRY_EXC_ERR);
    assert_int_equal(cq[0].cookie, 1);
    assert_int_equal(cq[1].status, FE_WC_WR_FLUSH_ERR);
    assert_int_equal(cq[1].cookie, 2);
    fe_qp_destroy(qp);
}

static void rnr2(struct fe_qp_config *c)
{
    c->rnr_retry = 2;
}

static void test_rnr_wait(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0, NULL);
    post(qp, FE_WR_WRITE, 10, 1); /* 0 */
    post(qp, FE_WR_SEND, 20, 2);  /* 1 */
    post(qp, FE_WR_SEND, 30, 3);  /* 2 */
    uint32_t psn[8];
    assert_int_equal(sent_psns(qp, 0, psn, 8), 3);
    uint64_t t0 = 1000;
    assert_int_equal(rx_ack(qp, t0, 1, fe_aeth_syn_rnr(5)), 0);
    struct fe_cqe cq[4];
    assert_int_equal(fe_qp_poll_cq(qp, cq, 4), 1); /* PSN 0 implicitly acknowledged */
    uint64_t until = t0 + fe_rnr_timer_ns(5);
    assert_int_equal(fe_qp_next_deadline(qp), until);
    assert_int_equal(sent_psns(qp, until - 1, psn, 8), 0);
    /* a duplicate of the RNR NAK changes nothing */
    assert_int_equal(rx_ack(qp, t0 + 5, 1, fe_aeth_syn_rnr(5)), 0);
    assert_int_equal(fe_qp_next_deadline(qp), until);
    fe_qp_handle_expiry(qp, until);
    assert_int_equal(sent_psns(qp, until, psn, 8), 2);
    assert_int_equal(psn[0], 1);
    assert_int_equal(psn[1], 2);
    const struct fe_qp_counters *k = fe_qp_counters(qp);
    assert_int_equal(k->rx_rnr_naks, 2);
    assert_int_equal(k->retx_rnr, 1);
    assert_int_equal(k->retx_pkts, 2);
    /* the retransmit timer runs again from the resume */
    assert_int_equal(fe_qp_next_deadline(qp), until + 1000000);
    /* a sequence NAK for the PSN we are RNR-waiting on does not cut the wait short */
    assert_int_equal(rx_ack(qp, until + 10, 1, fe_aeth_syn_rnr(1)), 0);
    assert_int_equal(rx_ack(qp, until + 11, 1, fe_aeth_syn_nak(FE_NAK_PSN_SEQ)), 0);
    assert_int_equal(sent_psns(qp, until + 12, psn, 8), 0);
    fe_qp_destroy(qp);

    /* every RNR code waits its IB timer */
    for (uint8_t code = 0; code < 32; code++) {
        qp = mk(0, NULL);
        post(qp, FE_WR_SEND, 1, 1);
        assert_int_equal(sent_psns(qp, 0, psn, 8), 1);
        assert_int_equal(rx_ack(qp, 7, 0, fe_aeth_syn_rnr(code)), 0);
        assert_int_equal(fe_qp_next_deadline(qp), 7 + fe_rnr_timer_ns(code));
        fe_qp_destroy(qp);
    }
    assert_int_equal(fe_rnr_timer_ns(0), 655360000ull);
    assert_int_equal(fe_rnr_timer_ns(1), 10000ull);
    assert_int_equal(fe_rnr_timer_ns(31), 491520000ull);
}

static void test_rnr_retry(void **state)
{
    (void)state;
    /* rnr_retry 2: the third RNR NAK without progress fails the WR */
    struct fe_qp *qp = mk(0, rnr2);
    post(qp, FE_WR_SEND, 1, 1);
    post(qp, FE_WR_SEND, 1, 2);
    uint32_t psn[8];
    uint64_t now = 0;
    assert_int_equal(sent_psns(qp, now, psn, 8), 2);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
        assert_int_equal(rx_ack(qp, now, 0, fe_aeth_syn_rnr(1)), 0);
        now = fe_qp_next_deadline(qp);
        fe_qp_handle_expiry(qp, now);
        tq_tx_all(qp, now, (struct fe_pkt[8]){0}, 8);
    }
    assert_int_equal(fe_qp_state(qp), FE_QPS_ERROR);
    struct fe_cqe cq[4];
    assert_int_equal(fe_qp_poll_cq(qp, cq, 4), 2);
    assert_int_equal(cq[0].status, FE_WC_RNR_RETRY_EXC_ERR);
    assert_int_equal(cq[1].status, FE_WC_WR_FLUSH_ERR);
    fe_qp_destroy(qp);

    /* progress refills the budget */
    qp = mk(0, rnr2);
    for (int i = 0; i < 4; i++) post(qp, FE_WR_SEND, 1, (uint64_t)i);
    now = 0;
    tq_tx_all(qp, now, (struct fe_pkt[8]){0}, 8);
    for (uint32_t p = 0; p < 4; p++) {
        for (int i = 0; i < 2; i++) {
            assert_int_equal(rx_ack(qp, now, p, fe_aeth_syn_rnr(1)), 0);
            now = fe_qp_next_deadline(qp);
            fe_qp_handle_expiry(qp, now);
            tq_tx_all(qp, now, (struct fe_pkt[8]){0}, 8);
        }
    }
    assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
    fe_qp_destroy(qp);

    /* rnr_retry 7: infinite */
    qp = mk(0, NULL);
    post(qp, FE_WR_SEND, 1, 1);
    now = 0;
    tq_tx_all(qp, now, (struct fe_pkt[8]){0}, 8);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(rx_ack(qp, now, 0, fe_aeth_syn_rnr(1)), 0);
        now = fe_qp_next_deadline(qp);
        fe_qp_handle_expiry(qp, now);
        assert_int_equal(tq_tx_all(qp, now, (struct fe_pkt[8]){0}, 8), 1);
    }
    assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
    assert_int_equal(fe_qp_counters(qp)->retx_rnr, 100);
    fe_qp_destroy(qp);
}

static void retry3(struct fe_qp_config *c)
{
    c->retry_cnt = 3;
}
static void retry_inf(struct fe_qp_config *c)
{
    c->retry_cnt = FE_RETRY_INFINITE;
}

static void test_timeout(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0, retry3);
    struct fe_cqe cq[4];
    assert_int_equal(fe_qp_post_recv(qp, 99, NULL, 0), 0);
    post(qp, FE_WR_WRITE, 2 * MTU, 1); /* 0,1 */
    post(qp, FE_WR_WRITE, 1, 2);       /* 2 */
    uint32_t psn[8];
    assert_int_equal(sent_psns(qp, 0, psn, 8), 3);
    assert_int_equal(fe_qp_next_deadline(qp), 1000000);
    fe_qp_handle_expiry(qp, 999999); /* early: nothing */
    assert_int_equal(fe_qp_counters(qp)->timeouts, 0);
    fe_qp_handle_expiry(qp, 1000000);
    assert_int_equal(fe_qp_counters(qp)->timeouts, 1);
    assert_int_equal(fe_qp_counters(qp)->retx_timeout, 1);
    assert_int_equal(sent_psns(qp, 1000000, psn, 8), 3);
    assert_int_equal(psn[0], 0);
    assert_int_equal(fe_qp_next_deadline(qp), 2000000);
    /* progress restarts the timer and the budget */
    assert_int_equal(rx_ack(qp, 1500000, 0, ack_syn()), 0);
    assert_int_equal(fe_qp_next_deadline(qp), 2500000);
    /* now exhaust: 3 retries, the 4th timeout fails */
    uint64_t now = 2500000;
    for (int i = 0; i < 3; i++) {
        fe_qp_handle_expiry(qp, now);
        assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
        assert_int_equal(sent_psns(qp, now, psn, 8), 2);
        assert_int_equal(psn[0], 1); /* from last acked + 1 */
        now += 1000000;
        assert_int_equal(fe_qp_next_deadline(qp), now);
    }
    fe_qp_handle_expiry(qp, now);
    assert_int_equal(fe_qp_state(qp), FE_QPS_ERROR);
    assert_int_equal(fe_qp_poll_cq(qp, cq, 4), 3);
    assert_int_equal(cq[0].cookie, 1);
    assert_int_equal(cq[0].status, FE_WC_RETRY_EXC_ERR);
    assert_int_equal(cq[1].cookie, 2);
    assert_int_equal(cq[1].status, FE_WC_WR_FLUSH_ERR);
    assert_int_equal(cq[2].cookie, 99); /* the receive buffer too */
    assert_int_equal(cq[2].status, FE_WC_WR_FLUSH_ERR);
    assert_int_equal(cq[2].opcode, FE_WC_RECV);
    assert_int_equal(fe_qp_counters(qp)->timeouts, 5);
    /* in error: nothing more */
    struct fe_wr w = tq_wr(FE_WR_WRITE, NULL, 1, 0, 3);
    assert_int_equal(fe_qp_post_send(qp, &w), FE_ESTATE);
    assert_int_equal(fe_qp_post_recv(qp, 1, NULL, 0), FE_ESTATE);
    assert_int_equal(sent_psns(qp, now, psn, 8), 0);
    assert_int_equal(fe_qp_next_deadline(qp), FE_NO_DEADLINE);
    assert_int_equal(rx_ack(qp, now, 1, ack_syn()), FE_ESTATE);
    fe_qp_destroy(qp);

    qp = mk(0, retry_inf);
    post(qp, FE_WR_WRITE, 1, 1);
    now = 0;
    for (int i = 0; i < 50; i++) {
        assert_int_equal(sent_psns(qp, now, psn, 8), 1);
        now = fe_qp_next_deadline(qp);
        fe_qp_handle_expiry(qp, now);
    }
    assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
    fe_qp_destroy(qp);
}

static void test_fatal_naks(void **state)
{
    (void)state;
    static const struct {
        uint8_t code, status;
    } k[] = {
        {FE_NAK_INVALID_REQ, FE_WC_REM_INV_REQ_ERR},
        {FE_NAK_REMOTE_ACCESS, FE_WC_REM_ACCESS_ERR},
        {FE_NAK_REMOTE_OP, FE_WC_REM_OP_ERR},
        {FE_NAK_INVALID_RD_REQ, FE_WC_REM_INV_REQ_ERR},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        struct fe_qp *qp = mk(0, NULL);
        post(qp, FE_WR_WRITE, 1, 1); /* 0 */
        post(qp, FE_WR_WRITE, 1, 2); /* 1 */
        post(qp, FE_WR_WRITE, 1, 3); /* 2 */
        post(qp, FE_WR_WRITE, 1, 4); /* not sent yet: the window is closed below */
        uint32_t psn[8];
        assert_int_equal(sent_psns(qp, 0, psn, 3), 3);
        assert_int_equal(rx_ack(qp, 5, 1, fe_aeth_syn_nak(k[i].code)), 0);
        assert_int_equal(fe_qp_state(qp), FE_QPS_ERROR);
        assert_int_equal(fe_qp_counters(qp)->rx_naks[k[i].code], 1);
        struct fe_cqe cq[8];
        assert_int_equal(fe_qp_poll_cq(qp, cq, 8), 4);
        assert_int_equal(cq[0].status, FE_WC_SUCCESS); /* implicitly acknowledged */
        assert_int_equal(cq[1].status, k[i].status);
        assert_int_equal(cq[1].cookie, 2);
        assert_int_equal(cq[2].status, FE_WC_WR_FLUSH_ERR);
        assert_int_equal(cq[3].status, FE_WC_WR_FLUSH_ERR);
        assert_int_equal(cq[3].cookie, 4);
        fe_qp_destroy(qp);
    }
    /* reserved kind and unknown NAK codes are dropped */
    struct fe_qp *qp = mk(0, NULL);
    post(qp, FE_WR_WRITE, 1, 1);
    tq_tx_all(qp, 0, (struct fe_pkt[8]){0}, 8);
    assert_int_equal(rx_ack(qp, 5, 0, 0x40), FE_EPARSE);
    assert_int_equal(rx_ack(qp, 5, 0, fe_aeth_syn_nak(9)), FE_EPARSE);
    assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
    assert_int_equal(fe_qp_counters(qp)->rx_dropped, 2);
    fe_qp_destroy(qp);
}

static void ring4(struct fe_qp_config *c)
{
    c->replay_bytes = 4 * MTU;
    c->ackreq_every = 1000;
}

static void test_replay_stall(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0, ring4);
    for (int i = 0; i < 3; i++) post(qp, FE_WR_WRITE, 3 * MTU, (uint64_t)i);
    struct fe_pkt p[16];
    assert_int_equal(tq_tx_all(qp, 0, p, 16), 4);
    assert_true(p[3].bth.ackreq); /* fills the ring: asks for an ACK */
    assert_false(p[1].bth.ackreq);
    assert_true(p[2].bth.ackreq); /* message end */
    assert_int_equal(tq_tx_all(qp, 0, p, 16), 0);
    assert_int_equal(fe_qp_counters(qp)->replay_full_stalls, 1); /* once per stall */
    struct fe_qp_psns ps;
    fe_qp_psns(qp, &ps);
    assert_int_equal(ps.inflight_bytes, 4 * MTU);
    assert_int_equal(rx_ack(qp, 10, 1, ack_syn()), 0);
    assert_int_equal(tq_tx_all(qp, 10, p, 16), 2);
    assert_int_equal(p[0].bth.psn, 4);
    assert_int_equal(tq_tx_all(qp, 10, p, 16), 0);
    assert_int_equal(fe_qp_counters(qp)->replay_full_stalls, 2);
    fe_qp_destroy(qp);
}

static void every1(struct fe_qp_config *c)
{
    c->ackreq_every = 1;
}

static void test_ackreq_every_packet(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0, every1);
    post(qp, FE_WR_WRITE, 7 * MTU, 1);
    struct fe_pkt p[16];
    assert_int_equal(tq_tx_all(qp, 0, p, 16), 7);
    for (int i = 0; i < 7; i++) assert_true(p[i].bth.ackreq);
    fe_qp_destroy(qp);
}

static void test_karn_rtt(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0, NULL);
    post(qp, FE_WR_WRITE, 1, 1);
    post(qp, FE_WR_WRITE, 1, 2);
    tq_tx_all(qp, 1000, (struct fe_pkt[8]){0}, 1);
    assert_int_equal(rx_ack(qp, 6000, 0, ack_syn()), 0);
    const struct fe_qp_counters *k = fe_qp_counters(qp);
    assert_int_equal(k->rtt_samples, 1);
    assert_int_equal(k->rtt_sum_ns, 5000);
    assert_int_equal(k->rtt_max_ns, 5000);
    assert_int_equal(k->rtt_hist[12], 1); /* [4096, 8192) */
    /* a retransmitted PSN gives no sample */
    tq_tx_all(qp, 7000, (struct fe_pkt[8]){0}, 8);
    fe_qp_handle_expiry(qp, fe_qp_next_deadline(qp));
    assert_int_equal(tq_tx_all(qp, 1007000, (struct fe_pkt[8]){0}, 8), 1);
    assert_int_equal(rx_ack(qp, 1008000, 1, ack_syn()), 0);
    assert_int_equal(k->rtt_samples, 1);
    assert_int_equal(k->tx_msgs_completed, 2);
    fe_qp_destroy(qp);
}

/* The wrong QPN and P_Key are dropped; CNPs reach the CC. */
static void test_rx_filters(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0, NULL);
    struct fe_pkt a = tq_ack(QPN_B, 0, ack_syn(), 0);
    assert_int_equal(fe_qp_rx(qp, 0, &a), FE_ENOENT);
    a = tq_ack(QPN_A, 0, ack_syn(), 0);
    a.bth.pkey = 0x1234;
    assert_int_equal(fe_qp_rx(qp, 0, &a), FE_ENOENT);
    a.bth.pkey = 0x7FFF;  /* limited membership of the default partition */
    a.bth.psn = 0xFFFFFF; /* una - 1: a stale ACK, accepted */
    assert_int_equal(fe_qp_rx(qp, 0, &a), 0);
    a.icrc = FE_ICRC_BAD;
    assert_int_equal(fe_qp_rx(qp, 0, &a), FE_EPARSE);
    a = tq_ack(QPN_A, 0, ack_syn(), 0);
    a.bth.opcode = FE_OP_READ_RESP_ONLY;
    assert_int_equal(fe_qp_rx(qp, 0, &a), FE_ENOTSUP);
    const struct fe_qp_counters *k = fe_qp_counters(qp);
    assert_int_equal(k->rx_dropped, 3);
    assert_int_equal(k->rx_bad_icrc, 1);
    struct fe_pkt cnp = tq_ack(QPN_A, 0, 0, 0);
    cnp.bth.opcode = FE_OP_CNP;
    cnp.bth.becn = true;
    assert_int_equal(fe_qp_rx(qp, 0, &cnp), 0);
    assert_int_equal(k->rx_cnps, 1);
    fe_qp_destroy(qp);
}

static void retry1_backoff(struct fe_qp_config *c)
{
    c->retry_cnt = 1;
    c->ack_timeout_max_ns = 8000000; /* 1 ms doubling to 8 ms */
}

/* A slow receiver: timeouts double the timer up to its ceiling before any spends a retry, and
 * progress brings it back. Without a ceiling the same QP fails at the second timeout. */
static void test_timeout_backoff(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(0, retry1_backoff);
    uint32_t psn[8];
    post(qp, FE_WR_WRITE, 1, 1);
    assert_int_equal(sent_psns(qp, 0, psn, 8), 1);
    const uint64_t due[] = {1000000, 3000000, 7000000, 15000000, 23000000};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(fe_qp_next_deadline(qp), due[i]);
        fe_qp_handle_expiry(qp, due[i]);
        assert_int_equal(sent_psns(qp, due[i], psn, 8), fe_qp_state(qp) == FE_QPS_RTS);
        if (i < 4) assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
    }
    /* 1, 2, 4 ms: backoffs; at 8 ms the one retry, then the failure */
    assert_int_equal(fe_qp_counters(qp)->timeout_backoffs, 3);
    assert_int_equal(fe_qp_counters(qp)->timeouts, 5);
    assert_int_equal(fe_qp_state(qp), FE_QPS_ERROR);
    fe_qp_destroy(qp);

    qp = mk(0, retry1_backoff);
    post(qp, FE_WR_WRITE, 2 * MTU, 1);
    assert_int_equal(sent_psns(qp, 0, psn, 8), 2);
    fe_qp_handle_expiry(qp, 1000000);
    fe_qp_handle_expiry(qp, 3000000);
    assert_int_equal(sent_psns(qp, 3000000, psn, 8), 2);
    assert_int_equal(fe_qp_next_deadline(qp), 7000000);
    assert_int_equal(rx_ack(qp, 3500000, 0, ack_syn()), 0); /* progress: back to 1 ms */
    assert_int_equal(fe_qp_next_deadline(qp), 4500000);
    fe_qp_destroy(qp);

    struct fe_qp_config c;
    fe_qp_config_default(&c);
    c.ack_timeout_max_ns = c.ack_timeout_ns - 1; /* a ceiling below the timer is refused */
    int err = 0;
    const char *why = NULL;
    assert_null(fe_qp_create(&c, 0, &err, &why));
    assert_string_equal(why, "ack_timeout_max_ns");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_psn_wrap),
        cmocka_unit_test(test_cumulative_ack),
        cmocka_unit_test(test_seq_nak_go_back_n),
        cmocka_unit_test(test_seq_nak_retry_exhausted),
        cmocka_unit_test(test_rnr_wait),
        cmocka_unit_test(test_rnr_retry),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_timeout_backoff),
        cmocka_unit_test(test_fatal_naks),
        cmocka_unit_test(test_replay_stall),
        cmocka_unit_test(test_ackreq_every_packet),
        cmocka_unit_test(test_karn_rtt),
        cmocka_unit_test(test_rx_filters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
