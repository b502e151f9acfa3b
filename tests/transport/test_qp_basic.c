/* QP basics: configuration checks, posting limits, and the lossless happy path of every
 * operation between two QPs (segmentation, placement, completions, counters). */
#include "qp_util.h"

static void test_config_validation(void **state)
{
    (void)state;
    struct fe_qp_config c;
    /* each invalid field is named */
#define EXPECT_BAD(field, stmt)                                                                    \
    do {                                                                                           \
        tq_config(&c, false);                                                                      \
        stmt;                                                                                      \
        int err = 0;                                                                               \
        const char *why = NULL;                                                                    \
        struct fe_qp *qp = fe_qp_create(&c, 0, &err, &why);                                        \
        assert_null(qp);                                                                           \
        assert_int_equal(err, FE_EINVAL);                                                          \
        assert_string_equal(why, field);                                                           \
        assert_int_equal(fe_qp_memory_bytes(&c), 0);                                               \
    } while (0)
    EXPECT_BAD("local_qpn", c.local_qpn = 1u << 24);
    EXPECT_BAD("remote_qpn", c.remote_qpn = 1u << 24);
    EXPECT_BAD("sq_psn", c.sq_psn = 1u << 24);
    EXPECT_BAD("rq_psn", c.rq_psn = 1u << 24);
    EXPECT_BAD("mtu_bytes", c.mtu_bytes = 1500);
    EXPECT_BAD("mtu_bytes", c.mtu_bytes = 128);
    EXPECT_BAD("mtu_bytes", c.mtu_bytes = 8192);
    EXPECT_BAD("path.ipver", c.path.ipver = 5);
    EXPECT_BAD("dscp", c.dscp = 64);
    EXPECT_BAD("pcp", c.pcp = 8);
    EXPECT_BAD("data_ecn", c.data_ecn = 4);
    EXPECT_BAD("replay_bytes", c.replay_bytes = 1000);
    EXPECT_BAD("replay_bytes", c.replay_bytes = (uint64_t)4096 << 23);
    EXPECT_BAD("sq_depth", c.sq_depth = 0);
    EXPECT_BAD("cq_depth", c.cq_depth = 0);
    EXPECT_BAD("ack_timeout_ns", c.ack_timeout_ns = 0);
    EXPECT_BAD("retry_cnt", c.retry_cnt = 8);
    EXPECT_BAD("rnr_retry", c.rnr_retry = 8);
    EXPECT_BAD("min_rnr_timer", c.min_rnr_timer = 32);
    EXPECT_BAD("ackreq_every", c.ackreq_every = 0);
    EXPECT_BAD("ack_every", c.ack_every = 0);
    EXPECT_BAD("cnp_dscp", c.cnp_dscp = 64);
    EXPECT_BAD("cnp_pcp", c.cnp_pcp = 8);
    EXPECT_BAD("line_rate_bps", c.line_rate_bps = 0);
#undef EXPECT_BAD

    tq_config(&c, false);
    c.retry_cnt = FE_RETRY_INFINITE;
    struct fe_qp *qp = tq_create(&c, 0);
    assert_int_equal(fe_qp_state(qp), FE_QPS_RTS);
    assert_true(fe_qp_memory_bytes(&c) > 2048 * 16); /* the replay ring dominates */
    assert_string_equal(fe_qp_cc(qp)->algo->name, "none");
    assert_int_equal(fe_qp_next_deadline(qp), FE_NO_DEADLINE);
    fe_qp_destroy(qp);
    fe_qp_destroy(NULL);
}

/* fe_qp_sq_room: what fe_qp_post_send accepts, bounded by the send queue and by the completion
 * queue that posted WRs and receive buffers reserve. */
static void test_sq_room(void **state)
{
    (void)state;
    struct fe_qp_config c;
    tq_config(&c, false);
    c.sq_depth = 4;
    c.rq_depth = 4;
    c.cq_depth = 6;
    struct fe_qp *qp = tq_create(&c, 0);
    struct fe_wr w = tq_wr(FE_WR_WRITE, NULL, 10, 0, 1);
    assert_int_equal(fe_qp_sq_room(qp), 4);
    assert_int_equal(fe_qp_post_send(qp, &w), 0);
    assert_int_equal(fe_qp_sq_room(qp), 3); /* send queue */
    for (uint64_t i = 0; i < 4; i++) assert_int_equal(fe_qp_post_recv(qp, i, NULL, 0), 0);
    assert_int_equal(fe_qp_sq_room(qp), 1); /* completion queue: 1 + 4 of 6 reserved */
    assert_int_equal(fe_qp_post_send(qp, &w), 0);
    assert_int_equal(fe_qp_sq_room(qp), 0);
    assert_int_equal(fe_qp_post_send(qp, &w), FE_ENOSPC);
    fe_qp_destroy(qp);
}

/* fe_qp_replay_room: new packets the requester may send before an acknowledgement; it bounds the
 * send WRs started meanwhile (a Go-Back-N resends without taking room). */
static void test_replay_room(void **state)
{
    (void)state;
    struct fe_qp_config c;
    tq_config(&c, false);
    c.mtu_bytes = 256;
    c.replay_bytes = 4 * 256;
    c.sq_psn = FE_PSN_MASK - 1; /* the count wraps with the PSNs */
    struct fe_qp *qp = tq_create(&c, 0);
    assert_int_equal(fe_qp_replay_room(qp), 4);
    struct fe_wr w = tq_wr(FE_WR_WRITE, NULL, 256, 0, 1);
    for (int i = 0; i < 6; i++) assert_int_equal(fe_qp_post_send(qp, &w), 0);
    struct fe_pkt p[8];
    assert_int_equal(tq_tx_all(qp, 0, p, 1), 1);
    assert_int_equal(fe_qp_replay_room(qp), 3);
    /* the WRs started while room lasts: as many as the room, the rest stay unstarted */
    assert_int_equal(tq_tx_all(qp, 0, p + 1, 8), 3);
    assert_int_equal(fe_qp_replay_room(qp), 0);
    assert_int_equal(fe_qp_sq_unstarted(qp), 2);
    /* an ACK of the first two frees two entries */
    struct fe_pkt a = tq_ack(QPN_A, p[1].bth.psn, fe_aeth_syn_ack(FE_AETH_CREDITS_INVALID), 2);
    assert_int_equal(fe_qp_rx(qp, 1, &a), 0);
    assert_int_equal(fe_qp_replay_room(qp), 2);
    /* a sequence NAK's Go-Back-N resends the two in flight without taking room */
    a = tq_ack(QPN_A, p[2].bth.psn, fe_aeth_syn_nak(FE_NAK_PSN_SEQ), 2);
    assert_int_equal(fe_qp_rx(qp, 2, &a), 0);
    assert_int_equal(tq_tx_all(qp, 2, p, 2), 2);
    assert_int_equal(p[1].bth.psn, fe_psn_add(p[0].bth.psn, 1));
    assert_int_equal(fe_qp_counters(qp)->retx_pkts, 2);
    assert_int_equal(fe_qp_replay_room(qp), 2);
    assert_int_equal(fe_qp_sq_unstarted(qp), 2);
    fe_qp_destroy(qp);
}

static void test_post_limits(void **state)
{
    (void)state;
    struct fe_qp_config c;
    tq_config(&c, false);
    c.sq_depth = 4;
    c.rq_depth = 4;
    c.cq_depth = 6;
    struct fe_qp *qp = tq_create(&c, 0);
    struct fe_wr w = tq_wr(FE_WR_WRITE, NULL, 10, 0, 1);
    w.op = (enum fe_wr_op)7;
    assert_int_equal(fe_qp_post_send(qp, &w), FE_EINVAL);
    w = tq_wr(FE_WR_WRITE, NULL, FE_MAX_MSG_BYTES + 1u, 0, 1);
    assert_int_equal(fe_qp_post_send(qp, &w), FE_EINVAL);
    w = tq_wr(FE_WR_WRITE, NULL, 10, UINT64_MAX - VA_B - 5, 1);
    assert_int_equal(fe_qp_post_send(qp, &w), FE_EINVAL);
    w = tq_wr(FE_WR_WRITE, NULL, FE_MAX_MSG_BYTES, 0, 1);
    assert_int_equal(fe_qp_post_send(qp, &w), 0);
    for (int i = 0; i < 3; i++) assert_int_equal(fe_qp_post_send(qp, &w), 0);
    assert_int_equal(fe_qp_post_send(qp, &w), FE_ENOSPC); /* SQ full */
    assert_int_equal(fe_qp_post_recv(qp, 1, NULL, 0), 0);
    assert_int_equal(fe_qp_post_recv(qp, 2, NULL, 0), 0);
    assert_int_equal(fe_qp_post_recv(qp, 3, NULL, 0), FE_ENOSPC); /* CQ reservations: 6 */
    fe_qp_destroy(qp);

    tq_config(&c, false);
    c.max_mr = 2;
    qp = tq_create(&c, 0);
    struct fe_mr mr = {.rkey = 1, .va = 0, .len = 10};
    assert_int_equal(fe_qp_reg_mr(qp, &mr), 0);
    assert_int_equal(fe_qp_reg_mr(qp, &mr), FE_EINVAL); /* same rkey */
    mr.rkey = 2;
    mr.va = UINT64_MAX - 5;
    assert_int_equal(fe_qp_reg_mr(qp, &mr), FE_EINVAL); /* wraps */
    mr.va = 0;
    assert_int_equal(fe_qp_reg_mr(qp, &mr), 0);
    mr.rkey = 3;
    assert_int_equal(fe_qp_reg_mr(qp, &mr), FE_ENOSPC);
    fe_qp_destroy(qp);
}

/* Segmentation of one WRITE as the requester emits it. */
static void test_segmentation(void **state)
{
    (void)state;
    struct fe_qp_config c;
    tq_config(&c, false);
    c.mtu_bytes = 256;
    c.ackreq_every = 4;
    c.sq_psn = 100;
    struct fe_qp *qp = tq_create(&c, 0);
    static uint8_t data[256 * 9 + 17];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)i;
    struct fe_wr w = tq_wr(FE_WR_WRITE_IMM, data, sizeof data, 4096, 7);
    assert_int_equal(fe_qp_post_send(qp, &w), 0);
    struct fe_pkt p[16];
    int n = tq_tx_all(qp, 0, p, 16);
    assert_int_equal(n, 10);
    for (int i = 0; i < n; i++) {
        assert_int_equal(p[i].bth.psn, 100 + i);
        assert_int_equal(p[i].bth.dqpn, QPN_B);
        assert_int_equal(p[i].bth.pkey, FE_PKEY_DEFAULT);
        assert_ptr_equal(p[i].payload, data + 256 * i);
        assert_int_equal(p[i].payload_len, i < 9 ? 256 : 17);
        assert_int_equal(p[i].ecn, FE_ECN_ECT0);
        assert_int_equal(p[i].dscp, 26);
        assert_int_equal(p[i].pcp, 3);
        /* AckReq every 4th packet and on the last */
        assert_int_equal(p[i].bth.ackreq, (i % 4) == 3 || i == 9);
    }
    assert_int_equal(p[0].bth.opcode, FE_OP_WRITE_FIRST);
    assert_int_equal(p[0].reth.va, VA_B + 4096);
    assert_int_equal(p[0].reth.rkey, RKEY_B);
    assert_int_equal(p[0].reth.dma_len, sizeof data);
    for (int i = 1; i < 9; i++) assert_int_equal(p[i].bth.opcode, FE_OP_WRITE_MIDDLE);
    assert_int_equal(p[9].bth.opcode, FE_OP_WRITE_LAST_IMM);
    assert_int_equal(p[9].imm, w.imm);
    const struct fe_qp_counters *ct = fe_qp_counters(qp);
    assert_int_equal(ct->tx_pkts, 10);
    assert_int_equal(ct->tx_bytes, sizeof data);
    struct fe_qp_psns ps;
    fe_qp_psns(qp, &ps);
    assert_int_equal(ps.next_psn, 110);
    assert_int_equal(ps.una_psn, 100);
    assert_int_equal(ps.inflight_bytes, sizeof data);
    fe_qp_destroy(qp);

    /* each kind's ONLY / FIRST-LAST opcodes, and the zero-length message */
    static const struct {
        enum fe_wr_op op;
        uint32_t len;
        uint8_t ops[3];
    } k[] = {
        {FE_WR_WRITE, 0, {FE_OP_WRITE_ONLY}},
        {FE_WR_WRITE, 256, {FE_OP_WRITE_ONLY}},
        {FE_WR_WRITE, 257, {FE_OP_WRITE_FIRST, FE_OP_WRITE_LAST}},
        {FE_WR_WRITE_IMM, 1, {FE_OP_WRITE_ONLY_IMM}},
        {FE_WR_SEND, 0, {FE_OP_SEND_ONLY}},
        {FE_WR_SEND, 512, {FE_OP_SEND_FIRST, FE_OP_SEND_LAST}},
        {FE_WR_SEND_IMM, 100, {FE_OP_SEND_ONLY_IMM}},
        {FE_WR_SEND_IMM, 600, {FE_OP_SEND_FIRST, FE_OP_SEND_MIDDLE, FE_OP_SEND_LAST_IMM}},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        qp = tq_create(&c, 0);
        w = tq_wr(k[i].op, NULL, k[i].len, 0, 1);
        assert_int_equal(fe_qp_post_send(qp, &w), 0);
        n = tq_tx_all(qp, 0, p, 16);
        int want = k[i].len <= 256 ? 1 : (int)((k[i].len + 255) / 256);
        assert_int_equal(n, want);
        for (int j = 0; j < n; j++) {
            assert_int_equal(p[j].bth.opcode, k[i].ops[j]);
            assert_null(p[j].payload); /* virtual payload stays virtual */
            bool reth = j == 0 && (k[i].op == FE_WR_WRITE || k[i].op == FE_WR_WRITE_IMM);
            assert_int_equal(p[j].reth.dma_len, reth ? k[i].len : 0);
        }
        assert_true(p[n - 1].bth.ackreq);
        fe_qp_destroy(qp);
    }
}

/* Lossless transfer of every operation; memory and completions exact. */
static void test_pair_all_ops(void **state)
{
    (void)state;
    for (uint32_t mtu = 256; mtu <= 4096; mtu *= 2) {
        struct fe_qp_config ca, cb;
        tq_config(&ca, false);
        tq_config(&cb, true);
        ca.mtu_bytes = cb.mtu_bytes = mtu;
        ca.sq_psn = cb.rq_psn = 0xFFFF00; /* crosses the 2^24 wrap */
        struct fe_qp *a = tq_create(&ca, 0), *b = tq_create(&cb, 0);
        enum { REGION = 1 << 20 };
        uint8_t *mem = calloc(1, REGION), *src = malloc(REGION), *rbuf = calloc(1, 65536);
        for (int i = 0; i < REGION; i++) src[i] = (uint8_t)(i * 7 + 3);
        struct fe_mr mr = {.rkey = RKEY_B, .va = VA_B, .len = REGION, .base = mem};
        assert_int_equal(fe_qp_reg_mr(b, &mr), 0);
        for (int i = 0; i < 8; i++)
            assert_int_equal(fe_qp_post_recv(b, 100 + i, rbuf + i * 8192, 8192), 0);

        struct fe_wr ws[] = {
            tq_wr(FE_WR_WRITE, src, 100000, 0, 1),
            tq_wr(FE_WR_WRITE, src + 5, 0, 0, 2),
            tq_wr(FE_WR_WRITE_IMM, src + 200000, 70001, 200000, 3),
            tq_wr(FE_WR_SEND, src + 7, 8192, 0, 4),
            tq_wr(FE_WR_SEND_IMM, src + 9, 1, 0, 5),
            tq_wr(FE_WR_SEND, src, 0, 0, 6),
            tq_wr(FE_WR_WRITE_IMM, src, 0, 0, 7),
            tq_wr(FE_WR_WRITE, src + REGION - 4096, 4096, REGION - 4096, 8),
        };
        int nw = (int)(sizeof ws / sizeof ws[0]);
        for (int i = 0; i < nw; i++) assert_int_equal(fe_qp_post_send(a, &ws[i]), 0);
        tq_run(a, b, 0, 1000000);

        struct fe_cqe cq[32];
        int n = fe_qp_poll_cq(a, cq, 32);
        assert_int_equal(n, nw);
        for (int i = 0; i < n; i++) {
            assert_int_equal(cq[i].status, FE_WC_SUCCESS);
            assert_int_equal(cq[i].cookie, ws[i].cookie);
            assert_int_equal(cq[i].byte_len, ws[i].len);
            bool send = ws[i].op == FE_WR_SEND || ws[i].op == FE_WR_SEND_IMM;
            assert_int_equal(cq[i].opcode, send ? FE_WC_SEND : FE_WC_RDMA_WRITE);
        }
        n = fe_qp_poll_cq(b, cq, 32);
        assert_int_equal(n, 5); /* WRITE_IMM x2, SEND x3 */
        uint32_t want_len[] = {70001, 8192, 1, 0, 0};
        uint8_t want_op[] = {FE_WC_RECV_RDMA_WITH_IMM, FE_WC_RECV, FE_WC_RECV, FE_WC_RECV,
                             FE_WC_RECV_RDMA_WITH_IMM};
        uint64_t want_imm[] = {ws[2].imm, 0, ws[4].imm, 0, ws[6].imm};
        bool want_has[] = {true, false, true, false, true};
        for (int i = 0; i < n; i++) {
            assert_int_equal(cq[i].status, FE_WC_SUCCESS);
            assert_int_equal(cq[i].cookie, 100 + i);
            assert_int_equal(cq[i].byte_len, want_len[i]);
            assert_int_equal(cq[i].opcode, want_op[i]);
            assert_int_equal(cq[i].has_imm, want_has[i]);
            if (want_has[i]) assert_int_equal(cq[i].imm, want_imm[i]);
        }
        assert_memory_equal(mem, src, 100000);
        for (int i = 100000; i < 200000; i++) assert_int_equal(mem[i], 0);
        assert_memory_equal(mem + 200000, src + 200000, 70001);
        assert_memory_equal(mem + REGION - 4096, src + REGION - 4096, 4096);
        /* receive buffers in posting order: the WRITE_IMM took the first */
        assert_memory_equal(rbuf + 8192, src + 7, 8192);
        assert_int_equal(rbuf[16384], src[9]);
        for (int i = 0; i < 8192; i++) assert_int_equal(rbuf[i], 0);

        const struct fe_qp_counters *ka = fe_qp_counters(a), *kb = fe_qp_counters(b);
        assert_int_equal(ka->tx_msgs_completed, nw);
        assert_int_equal(kb->rx_msgs, nw);
        assert_int_equal(ka->retx_pkts, 0);
        assert_int_equal(kb->rx_dup_pkts + kb->rx_ooo_pkts + kb->rx_dropped, 0);
        assert_int_equal(ka->tx_pkts, kb->rx_pkts);
        assert_int_equal(ka->tx_bytes, kb->rx_bytes);
        assert_true(ka->rx_acks > 0 && ka->rx_acks == kb->tx_acks);
        struct fe_qp_psns pa, pb;
        fe_qp_psns(a, &pa);
        fe_qp_psns(b, &pb);
        assert_int_equal(pa.next_psn, pa.una_psn);
        assert_int_equal(pa.next_psn, pb.expected_psn);
        assert_int_equal(pb.msn, nw);
        assert_int_equal(pa.inflight_bytes, 0);
        assert_int_equal(fe_qp_next_deadline(a), FE_NO_DEADLINE);
        assert_int_equal(fe_qp_next_deadline(b), FE_NO_DEADLINE);
        fe_qp_destroy(a);
        fe_qp_destroy(b);
        free(mem);
        free(src);
        free(rbuf);
    }
}

/* Both directions at once: each QP is requester and responder. */
static void test_pair_bidirectional(void **state)
{
    (void)state;
    struct fe_qp_config ca, cb;
    tq_config(&ca, false);
    tq_config(&cb, true);
    ca.mtu_bytes = cb.mtu_bytes = 1024;
    cb.remote_rkey = 77;
    struct fe_qp *a = tq_create(&ca, 0), *b = tq_create(&cb, 0);
    static uint8_t ma[65536], mb[65536], src[65536];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i ^ (i >> 8));
    struct fe_mr ra = {.rkey = 77, .va = VA_B, .len = sizeof ma, .base = ma};
    struct fe_mr rb = {.rkey = RKEY_B, .va = VA_B, .len = sizeof mb, .base = mb};
    assert_int_equal(fe_qp_reg_mr(a, &ra), 0);
    assert_int_equal(fe_qp_reg_mr(b, &rb), 0);
    for (int i = 0; i < 16; i++) {
        struct fe_wr w = tq_wr(FE_WR_WRITE, src + i * 4096, 4096, i * 4096, i);
        assert_int_equal(fe_qp_post_send(a, &w), 0);
        assert_int_equal(fe_qp_post_send(b, &w), 0);
    }
    tq_run(a, b, 0, 1000000);
    assert_memory_equal(ma, src, sizeof src);
    assert_memory_equal(mb, src, sizeof src);
    struct fe_cqe cq[32];
    assert_int_equal(fe_qp_poll_cq(a, cq, 32), 16);
    assert_int_equal(fe_qp_poll_cq(b, cq, 32), 16);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
}

/* fe_qp_rx_frame: whole frames in, ICRC verified; broken ones dropped and counted. */
static void test_rx_frame(void **state)
{
    (void)state;
    struct fe_qp_config ca, cb;
    tq_config(&ca, false);
    tq_config(&cb, true);
    struct fe_qp *a = tq_create(&ca, 0), *b = tq_create(&cb, 0);
    static uint8_t mem[8192], src[3000];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 3);
    struct fe_mr mr = {.rkey = RKEY_B, .va = VA_B, .len = sizeof mem, .base = mem};
    assert_int_equal(fe_qp_reg_mr(b, &mr), 0);
    struct fe_wr w = tq_wr(FE_WR_WRITE, src, sizeof src, 100, 1);
    assert_int_equal(fe_qp_post_send(a, &w), 0);
    struct fe_pkt p;
    assert_int_equal(fe_qp_tx(a, 0, &p), 1);
    static uint8_t frame[FE_MAX_FRAME_LEN];
    for (int framing = FE_FRAME_ETH; framing <= FE_FRAME_BTH; framing++) {
        int n = fe_frame_encode(frame, sizeof frame, (enum fe_framing)framing, &ca.path, 7, &p);
        assert_true(n > 0);
        frame[n - 10] ^= 0x40; /* a flipped payload bit: ICRC mismatch */
        assert_int_equal(fe_qp_rx_frame(b, 0, frame, (size_t)n, (enum fe_framing)framing, true),
                         FE_EPARSE);
        frame[n - 10] ^= 0x40;
        assert_int_equal(fe_qp_rx_frame(b, 0, frame, 10, (enum fe_framing)framing, true),
                         FE_EPARSE); /* truncated: does not parse */
    }
    const struct fe_qp_counters *kb = fe_qp_counters(b);
    assert_int_equal(kb->rx_bad_icrc, 3);
    assert_int_equal(kb->rx_dropped, 3);
    assert_int_equal(kb->rx_pkts, 0);
    int n = fe_frame_encode(frame, sizeof frame, FE_FRAME_IP, &ca.path, 7, &p);
    assert_int_equal(fe_qp_rx_frame(b, 0, frame, (size_t)n, FE_FRAME_IP, true), 0);
    assert_int_equal(kb->rx_pkts, 1);
    assert_memory_equal(mem + 100, src, p.payload_len);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
}

static void test_wc_names(void **state)
{
    (void)state;
    for (int s = FE_WC_SUCCESS; s <= FE_WC_WR_FLUSH_ERR; s++)
        assert_string_not_equal(fe_wc_status_name(s), "unknown status");
    assert_string_equal(fe_wc_status_name(99), "unknown status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_validation),
        cmocka_unit_test(test_post_limits),
        cmocka_unit_test(test_sq_room),
        cmocka_unit_test(test_replay_room),
        cmocka_unit_test(test_segmentation),
        cmocka_unit_test(test_pair_all_ops),
        cmocka_unit_test(test_pair_bidirectional),
        cmocka_unit_test(test_rx_frame),
        cmocka_unit_test(test_wc_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
