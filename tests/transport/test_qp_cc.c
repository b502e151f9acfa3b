/* The requester's congestion-control hooks, with a probe algorithm that records every event
 * and lets the test set its outputs: on_send with frame bytes, pacing at out.rate_Bps from a
 * full bucket (no warm-up) and the pacer's release time as the deadline, the window, receiver
 * credit, on_ack (RTT, ECN echo, INT, credit), on_cnp, on_nack, and the CC timer. */
#include "qp_util.h"

struct probe {
    int sends, acks, cnps, nacks, timers;
    uint64_t send_bytes_last, send_bytes_sum;
    struct fe_cc_ack last_ack;
    uint32_t nack_psn;
};

static struct probe *g_probe;
static struct fe_cc_out g_init; /* outputs init starts with */
static bool g_credit_from_ack;
static uint64_t g_event_rate; /* when not 0: the rate on_timer and on_cnp set */

static void p_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                   struct fe_cc_out *out)
{
    (void)p;
    (void)env;
    g_probe = ctx;
    *out = g_init;
}
static void p_send(void *ctx, uint64_t now_ns, uint32_t bytes, struct fe_cc_out *out)
{
    (void)now_ns;
    (void)out;
    struct probe *s = ctx;
    s->sends++;
    s->send_bytes_last = bytes;
    s->send_bytes_sum += bytes;
}
static void p_ack(void *ctx, uint64_t now_ns, const struct fe_cc_ack *a, struct fe_cc_out *out)
{
    (void)now_ns;
    struct probe *s = ctx;
    s->acks++;
    s->last_ack = *a;
    if (g_credit_from_ack && a->credit_bytes) out->credit_bytes = a->credit_bytes;
}
static void p_cnp(void *ctx, uint64_t now_ns, struct fe_cc_out *out)
{
    (void)now_ns;
    ((struct probe *)ctx)->cnps++;
    if (g_event_rate) out->rate_Bps = g_event_rate;
}
static void p_nack(void *ctx, uint64_t now_ns, uint32_t psn, struct fe_cc_out *out)
{
    (void)now_ns;
    (void)out;
    struct probe *s = ctx;
    s->nacks++;
    s->nack_psn = psn;
}
static void p_timer(void *ctx, uint64_t now_ns, struct fe_cc_out *out)
{
    struct probe *s = ctx;
    s->timers++;
    out->timer_ns = now_ns + 5000;
    if (g_event_rate) out->rate_Bps = g_event_rate;
}

static const struct fe_cc_algo probe_algo = {
    .name = "probe",
    .summary = "test probe",
    .ctx_size = sizeof(struct probe),
    .init = p_init,
    .on_send = p_send,
    .on_ack = p_ack,
    .on_cnp = p_cnp,
    .on_nack = p_nack,
    .on_timer = p_timer,
};

#define MTU 1024

static struct fe_qp *mk(uint64_t rate, uint64_t window, uint64_t credit, uint64_t timer)
{
    g_init = (struct fe_cc_out){rate, window, credit, timer};
    struct fe_qp_config c;
    tq_config(&c, false);
    c.mtu_bytes = MTU;
    c.cc_algo = &probe_algo;
    c.pacer_burst_bytes = 0; /* one MTU frame */
    return tq_create(&c, 0);
}

static void post(struct fe_qp *qp, uint32_t len)
{
    struct fe_wr w = tq_wr(FE_WR_WRITE, NULL, len, 0, 1);
    assert_int_equal(fe_qp_post_send(qp, &w), 0);
}

static void test_on_send_frame_bytes(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(FE_CC_UNLIMITED, FE_CC_UNLIMITED, FE_CC_UNLIMITED, FE_CC_NO_TIMER);
    assert_ptr_equal(fe_qp_cc(qp)->algo, &probe_algo);
    post(qp, 2 * MTU + 3);
    struct fe_pkt p[4];
    assert_int_equal(tq_tx_all(qp, 0, p, 4), 3);
    size_t ovh = fe_path_overhead_bytes(&fe_qp_config(qp)->path);
    assert_int_equal(ovh, 14 + 20 + 8 + 4);
    assert_int_equal(g_probe->sends, 3);
    assert_int_equal(g_probe->send_bytes_last, fe_pkt_wire_len(&p[2]) + ovh);
    assert_int_equal(g_probe->send_bytes_sum, fe_pkt_wire_len(&p[0]) + fe_pkt_wire_len(&p[1]) +
                                                  fe_pkt_wire_len(&p[2]) + 3 * ovh);
    /* retransmissions are sent bytes too */
    fe_qp_handle_expiry(qp, fe_qp_next_deadline(qp));
    assert_int_equal(tq_tx_all(qp, 1000000, p, 4), 3);
    assert_int_equal(g_probe->sends, 6);
    fe_qp_destroy(qp);
}

static void test_pacing(void **state)
{
    (void)state;
    /* 1 byte per ns (8 Gb/s); the bucket holds one MTU frame and starts full */
    struct fe_qp *qp = mk(1000000000, FE_CC_UNLIMITED, FE_CC_UNLIMITED, FE_CC_NO_TIMER);
    post(qp, 10 * MTU);
    struct fe_pkt p;
    uint64_t now = 0;
    assert_int_equal(fe_qp_tx(qp, now, &p), 1); /* no warm-up: the first leaves at once */
    uint32_t frame =
        (uint32_t)(fe_pkt_wire_len(&p) + fe_path_overhead_bytes(&fe_qp_config(qp)->path));
    assert_int_equal(fe_qp_tx(qp, now, &p), 0);
    for (int i = 1; i < 10; i++) {
        uint64_t d = fe_qp_next_deadline(qp);
        assert_true(d > now);
        assert_true(fe_qp_tx(qp, d - 1, &p) == 0);
        now = d;
        assert_int_equal(fe_qp_tx(qp, now, &p), 1);
        assert_int_equal(p.bth.psn, (uint32_t)i);
    }
    /* ten frames at 1 B/ns: the last leaves after the first nine were paid for */
    assert_true(now >= 9ull * (frame - 64) && now <= 9ull * (frame + 64));
    assert_int_equal(fe_qp_next_deadline(qp), 1000000); /* only the retransmit timer now */
    fe_qp_destroy(qp);

    /* rate 0: nothing leaves, and no deadline from the pacer */
    qp = mk(0, FE_CC_UNLIMITED, FE_CC_UNLIMITED, FE_CC_NO_TIMER);
    post(qp, 2 * MTU);
    assert_int_equal(fe_qp_tx(qp, 0, &p), 1); /* the bucket's initial burst */
    assert_int_equal(fe_qp_tx(qp, 1000000, &p), 0);
    assert_int_equal(fe_qp_next_deadline(qp), 1000000); /* the retransmit timer only */
    fe_qp_destroy(qp);
}

static void test_window(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(FE_CC_UNLIMITED, 2 * MTU, FE_CC_UNLIMITED, FE_CC_NO_TIMER);
    post(qp, 5 * MTU);
    struct fe_pkt p[8];
    assert_int_equal(tq_tx_all(qp, 0, p, 8), 2);
    struct fe_pkt a = tq_ack(QPN_A, 0, fe_aeth_syn_ack(31), 0);
    assert_int_equal(fe_qp_rx(qp, 10, &a), 0);
    assert_int_equal(tq_tx_all(qp, 10, p, 8), 1);
    assert_int_equal(p[0].bth.psn, 2);
    assert_int_equal(g_probe->last_ack.acked_bytes, MTU);
    assert_int_equal(g_probe->last_ack.inflight_bytes, MTU);
    assert_int_equal(g_probe->last_ack.psn, 0);
    assert_int_equal(g_probe->last_ack.rtt_ns, 10);
    fe_qp_destroy(qp);

    /* a window below one packet still lets one packet out at a time */
    qp = mk(FE_CC_UNLIMITED, 100, FE_CC_UNLIMITED, FE_CC_NO_TIMER);
    post(qp, 3 * MTU);
    assert_int_equal(tq_tx_all(qp, 0, p, 8), 1);
    a = tq_ack(QPN_A, 0, fe_aeth_syn_ack(31), 0);
    assert_int_equal(fe_qp_rx(qp, 10, &a), 0);
    assert_int_equal(tq_tx_all(qp, 10, p, 8), 1);
    fe_qp_destroy(qp);
}

static void test_credit(void **state)
{
    (void)state;
    g_credit_from_ack = true;
    struct fe_qp *qp = mk(FE_CC_UNLIMITED, FE_CC_UNLIMITED, 1500, FE_CC_NO_TIMER);
    post(qp, 4 * MTU);
    struct fe_pkt p[8];
    assert_int_equal(tq_tx_all(qp, 0, p, 8), 1); /* 1024 <= 1500 < 2048 */
    /* the receiver's grant arrives on an ACK (Homa-style) */
    struct fe_pkt a = tq_ack(QPN_A, 0xFFFFFF, fe_aeth_syn_ack(31), 0);
    a.credit_bytes = 3 * MTU;
    assert_int_equal(fe_qp_rx(qp, 10, &a), 0);
    assert_int_equal(g_probe->last_ack.credit_bytes, 3 * MTU);
    assert_int_equal(g_probe->last_ack.acked_bytes, 0);
    assert_int_equal(tq_tx_all(qp, 10, p, 8), 2);
    /* retransmissions do not spend credit */
    fe_qp_handle_expiry(qp, fe_qp_next_deadline(qp));
    assert_int_equal(tq_tx_all(qp, 1000000, p, 8), 3);
    fe_qp_destroy(qp);

    /* end to end: the responder's grant (fe_qp_set_grant) drives the requester */
    struct fe_qp_config cb;
    tq_config(&cb, true);
    cb.mtu_bytes = MTU;
    struct fe_qp *b = tq_create(&cb, 0);
    struct fe_mr sink = {.rkey = RKEY_B, .va = VA_B, .len = 1 << 20};
    assert_int_equal(fe_qp_reg_mr(b, &sink), 0);
    struct fe_qp *a2 = mk(FE_CC_UNLIMITED, FE_CC_UNLIMITED, 0, FE_CC_NO_TIMER);
    post(a2, 8 * MTU);
    tq_pump(a2, b, 0);
    assert_int_equal(fe_qp_counters(a2)->tx_pkts, 0);
    fe_qp_set_grant(b, 5 * MTU);
    tq_pump(a2, b, 1);
    assert_int_equal(fe_qp_counters(a2)->tx_pkts, 5);
    fe_qp_set_grant(b, 8 * MTU);
    tq_pump(a2, b, 2);
    assert_int_equal(fe_qp_counters(a2)->tx_pkts, 8);
    assert_int_equal(fe_qp_counters(a2)->tx_msgs_completed, 1);
    fe_qp_destroy(a2);
    fe_qp_destroy(b);
    g_credit_from_ack = false;
}

static void test_ack_signals(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(FE_CC_UNLIMITED, FE_CC_UNLIMITED, FE_CC_UNLIMITED, FE_CC_NO_TIMER);
    post(qp, 3 * MTU);
    struct fe_pkt p[4];
    assert_int_equal(tq_tx_all(qp, 100, p, 4), 3);
    struct fe_int md = {.nhops = 2};
    md.hop[1].qlen_bytes = 777;
    struct fe_pkt a = tq_ack(QPN_A, 1, fe_aeth_syn_ack(31), 0);
    a.bth.becn = true;
    a.int_md = &md;
    a.credit_bytes = 99;
    assert_int_equal(fe_qp_rx(qp, 600, &a), 0);
    assert_int_equal(g_probe->acks, 1);
    assert_true(g_probe->last_ack.ecn_echo);
    assert_ptr_equal(g_probe->last_ack.int_md, &md);
    assert_int_equal(g_probe->last_ack.credit_bytes, 99);
    assert_int_equal(g_probe->last_ack.rtt_ns, 500);
    assert_int_equal(g_probe->last_ack.acked_bytes, 2 * MTU);
    /* a duplicate ACK still reports its signals, with nothing acknowledged */
    a.int_md = NULL;
    a.bth.becn = false;
    assert_int_equal(fe_qp_rx(qp, 700, &a), 0);
    assert_int_equal(g_probe->acks, 2);
    assert_int_equal(g_probe->last_ack.acked_bytes, 0);
    assert_int_equal(g_probe->last_ack.rtt_ns, 0);
    /* sequence NAK -> on_nack with its PSN */
    struct fe_pkt n = tq_ack(QPN_A, 2, fe_aeth_syn_nak(FE_NAK_PSN_SEQ), 0);
    assert_int_equal(fe_qp_rx(qp, 800, &n), 0);
    assert_int_equal(g_probe->nacks, 1);
    assert_int_equal(g_probe->nack_psn, 2);
    /* CNP -> on_cnp */
    struct fe_pkt cnp = tq_ack(QPN_A, 0, 0, 0);
    cnp.bth.opcode = FE_OP_CNP;
    assert_int_equal(fe_qp_rx(qp, 900, &cnp), 0);
    assert_int_equal(g_probe->cnps, 1);
    fe_qp_destroy(qp);
}

static void test_cc_timer(void **state)
{
    (void)state;
    struct fe_qp *qp = mk(FE_CC_UNLIMITED, FE_CC_UNLIMITED, FE_CC_UNLIMITED, 3000);
    assert_int_equal(fe_qp_next_deadline(qp), 3000); /* merged into the deadline */
    fe_qp_handle_expiry(qp, 2999);
    assert_int_equal(g_probe->timers, 0);
    fe_qp_handle_expiry(qp, 3000);
    assert_int_equal(g_probe->timers, 1);
    assert_int_equal(fe_qp_next_deadline(qp), 8000);
    post(qp, 10);
    assert_int_equal(tq_tx_all(qp, 4000, (struct fe_pkt[2]){0}, 2), 1);
    assert_int_equal(fe_qp_next_deadline(qp), 8000); /* before the ACK timeout (1 ms) */
    fe_qp_destroy(qp);
}

/* A rate set by a CC event (timer, CNP) moves the release of the packet the pacer holds to what
 * the pacer says at the new rate, at once: the deadline shows it before anything is sent. */
static void rate_event(struct fe_qp *qp, bool by_cnp, uint64_t rate, uint64_t now)
{
    g_event_rate = rate;
    if (by_cnp) {
        struct fe_pkt cnp = {.bth = {.opcode = FE_OP_CNP,
                                     .pkey = FE_PKEY_DEFAULT,
                                     .dqpn = fe_qp_config(qp)->local_qpn,
                                     .becn = true}};
        assert_int_equal(fe_qp_rx(qp, now, &cnp), 0);
    } else {
        fe_qp_handle_expiry(qp, now);
    }
    g_event_rate = 0;
}

static void test_rate_change_moves_release(void **state)
{
    (void)state;
    const uint64_t r1 = 1000000000, r2 = 250000000, r3 = 2000000000; /* B/s */
    for (int by_cnp = 0; by_cnp < 2; by_cnp++) {
        struct fe_qp *qp = mk(r1, FE_CC_UNLIMITED, FE_CC_UNLIMITED, by_cnp ? FE_CC_NO_TIMER : 100);
        post(qp, 10 * MTU);
        struct fe_pkt p;
        assert_int_equal(fe_qp_tx(qp, 0, &p), 1);
        /* the same bucket by hand: its burst is an MTU frame with every header (RETH, ImmDt);
         * the first packet is a WRITE FIRST (RETH), the next a MIDDLE */
        uint32_t first =
            (uint32_t)(fe_pkt_wire_len(&p) + fe_path_overhead_bytes(&fe_qp_config(qp)->path));
        uint32_t middle = first - FE_RETH_LEN;
        struct fe_pacer m;
        fe_pacer_init(&m, first + FE_IMMDT_LEN, 0);
        fe_pacer_consume(&m, r1, first, 0);
        uint64_t at_r1 = fe_pacer_when(&m, r1, middle, 0);
        uint64_t at_r2 = fe_pacer_when(&m, r2, middle, 0);
        uint64_t at_r3 = fe_pacer_when(&m, r3, middle, 0);
        assert_true(100 < at_r3 && at_r3 < at_r1 && at_r1 < at_r2 && at_r2 < 5100);
        assert_int_equal(fe_qp_next_deadline(qp), by_cnp ? at_r1 : 100);

        /* slower: the release moves later (the probe's timer is next due at 5100) */
        rate_event(qp, by_cnp, r2, 100);
        assert_int_equal(fe_qp_next_deadline(qp), at_r2);
        assert_int_equal(fe_qp_tx(qp, at_r1, &p), 0);
        if (by_cnp) {
            /* faster again, from the same bucket: earlier */
            rate_event(qp, by_cnp, r3, 200);
            assert_int_equal(fe_qp_next_deadline(qp), at_r3);
            assert_int_equal(fe_qp_tx(qp, at_r3 - 1, &p), 0);
            assert_int_equal(fe_qp_tx(qp, at_r3, &p), 1);
        } else {
            assert_int_equal(fe_qp_tx(qp, at_r2 - 1, &p), 0);
            assert_int_equal(fe_qp_tx(qp, at_r2, &p), 1);
        }
        assert_int_equal(p.bth.psn, 1);
        fe_qp_destroy(qp);
    }
}

/* Real algorithms plug in by name (the registry), and parameters validate. */
static void test_registry_algo(void **state)
{
    (void)state;
    const struct fe_cc_algo *none = fe_cc_find("none");
    assert_non_null(none);
    struct fe_qp_config c;
    tq_config(&c, false);
    c.cc_algo = none;
    struct fe_cc_params params;
    fe_cc_params_default(&params, &probe_algo);
    c.cc_params = &params; /* params of another algorithm */
    int err = 0;
    const char *why = NULL;
    assert_null(fe_qp_create(&c, 0, &err, &why));
    assert_string_equal(why, "cc_params");
    const struct fe_cc_algo *dcqcn = fe_cc_find("dcqcn");
    if (dcqcn) {
        c.cc_algo = dcqcn;
        c.cc_params = NULL;
        struct fe_qp *qp = tq_create(&c, 0);
        assert_int_equal(fe_qp_cc(qp)->out.rate_Bps, c.line_rate_bps / 8);
        fe_qp_destroy(qp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_send_frame_bytes),
        cmocka_unit_test(test_pacing),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_credit),
        cmocka_unit_test(test_ack_signals),
        cmocka_unit_test(test_cc_timer),
        cmocka_unit_test(test_rate_change_moves_release),
        cmocka_unit_test(test_registry_algo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
