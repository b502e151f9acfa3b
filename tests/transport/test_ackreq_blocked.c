/* AckReq when the requester blocks: with ACK coalescing (ackreq_every and the responder's
 * ack_every > 1) the last packet the requester can send before its CC window, receiver credit or
 * replay ring stops it must ask for an ACK, or the flow waits for the retransmit timeout. A
 * probe algorithm with fixed outputs (optionally shrinking the window in on_send) drives it. */
#include "qp_util.h"

#define MTU 1024

static struct fe_cc_out g_init;
static uint64_t g_shrink_after_sends; /* on_send: window -> g_shrunk_window after this many */
static uint64_t g_shrunk_window;
static uint64_t g_ack_window; /* on_ack: window -> this, when not 0 */

struct probe {
    uint64_t sends;
};

static void p_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                   struct fe_cc_out *out)
{
    (void)ctx;
    (void)p;
    (void)env;
    *out = g_init;
}
static void p_send(void *ctx, uint64_t now_ns, uint32_t bytes, struct fe_cc_out *out)
{
    (void)now_ns;
    (void)bytes;
    struct probe *s = ctx;
    if (++s->sends == g_shrink_after_sends) out->window_bytes = g_shrunk_window;
}

static void p_ack(void *ctx, uint64_t now_ns, const struct fe_cc_ack *a, struct fe_cc_out *out)
{
    (void)ctx;
    (void)now_ns;
    (void)a;
    if (g_ack_window) out->window_bytes = g_ack_window;
}

static const struct fe_cc_algo probe_algo = {
    .name = "probe-fixed",
    .summary = "fixed window and credit",
    .ctx_size = sizeof(struct probe),
    .init = p_init,
    .on_send = p_send,
    .on_ack = p_ack,
};

static int setup(void **state)
{
    (void)state;
    g_init = (struct fe_cc_out){FE_CC_UNLIMITED, FE_CC_UNLIMITED, FE_CC_UNLIMITED, FE_CC_NO_TIMER};
    g_shrink_after_sends = 0;
    g_shrunk_window = 0;
    g_ack_window = 0;
    return 0;
}

/* A requester with the probe CC and the default coalescing (AckReq every 32, ACK every 32), and
 * its peer. */
static void mk_pair(struct fe_qp **a, struct fe_qp **b, uint64_t window, uint64_t credit)
{
    g_init.window_bytes = window;
    g_init.credit_bytes = credit;
    struct fe_qp_config ca, cb;
    tq_config(&ca, false);
    tq_config(&cb, true);
    ca.mtu_bytes = cb.mtu_bytes = MTU;
    ca.cc_algo = &probe_algo;
    assert_int_equal(ca.ackreq_every, 32);
    assert_int_equal(cb.ack_every, 32);
    *a = tq_create(&ca, 0);
    *b = tq_create(&cb, 0);
    struct fe_mr mr = {.rkey = RKEY_B, .va = VA_B, .len = 1ull << 32, .base = NULL};
    assert_int_equal(fe_qp_reg_mr(*b, &mr), 0);
}

static void post_write(struct fe_qp *a, uint32_t len, uint64_t cookie)
{
    struct fe_wr w = tq_wr(FE_WR_WRITE, NULL, len, 0, cookie);
    assert_int_equal(fe_qp_post_send(a, &w), 0);
}

static int completed(struct fe_qp *a)
{
    struct fe_cqe c[64];
    int n, total = 0;
    while ((n = fe_qp_poll_cq(a, c, 64)) > 0)
        for (int i = 0; i < n; i++) {
            assert_int_equal(c[i].status, FE_WC_SUCCESS);
            total++;
        }
    return total;
}

/* The acceptance case: a window of 8 packets, one 4 MiB WRITE (4096 packets). Every window's
 * last packet asks for an ACK, so the transfer completes without a single timeout, within the
 * same instant (lossless, zero-delay channel, no pacing). */
static void test_window_steady_progress(void **state)
{
    (void)state;
    struct fe_qp *a, *b;
    mk_pair(&a, &b, 8 * MTU, FE_CC_UNLIMITED);
    post_write(a, 4u << 20, 1);
    uint64_t t = tq_run(a, b, 0, 100000000);
    assert_int_equal(completed(a), 1);
    const struct fe_qp_counters *ca = fe_qp_counters(a);
    assert_int_equal(ca->timeouts, 0);
    assert_int_equal(ca->retx_pkts, 0);
    assert_int_equal(ca->tx_pkts, 4096);
    assert_true(t < fe_qp_config(a)->ack_timeout_ns);
    /* one ACK per window, not one per packet */
    assert_int_equal(ca->rx_acks, 4096 / 8);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
}

/* Exactly the packet that fills the window asks, and nothing more than the policy: with a
 * window of 5.5 packets and no ACKs, packets 0..4 leave and only packet 4 carries AckReq. */
static void test_window_last_packet_asks(void **state)
{
    (void)state;
    struct fe_qp *a, *b;
    mk_pair(&a, &b, 5 * MTU + MTU / 2, FE_CC_UNLIMITED);
    post_write(a, 100 * MTU, 1);
    struct fe_pkt p[16];
    assert_int_equal(tq_tx_all(a, 0, p, 16), 5);
    for (int i = 0; i < 5; i++) assert_int_equal(p[i].bth.ackreq, i == 4);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
}

/* The decision reads the CC's outputs after on_send: a window that shrinks below what is in
 * flight as the 6th packet leaves makes the 6th the one that asks. */
static void test_window_shrinks_in_on_send(void **state)
{
    (void)state;
    struct fe_qp *a, *b;
    g_shrink_after_sends = 6;
    g_shrunk_window = 4 * MTU;
    mk_pair(&a, &b, 10 * MTU, FE_CC_UNLIMITED);
    post_write(a, 64 * MTU, 1);
    struct fe_pkt p[16];
    assert_int_equal(tq_tx_all(a, 0, p, 16), 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(p[i].bth.ackreq, i == 5);
        assert_int_equal(fe_qp_rx(b, 0, &p[i]), 0);
    }
    uint64_t t = tq_run(a, b, 0, 100000000);
    assert_int_equal(completed(a), 1);
    assert_int_equal(fe_qp_counters(a)->timeouts, 0);
    assert_true(t < fe_qp_config(a)->ack_timeout_ns);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
}

/* Messages of random sizes (1 B .. 20 KB) under a window that is no multiple of the MTU: no
 * timeouts, every message completes. */
static void test_window_random_messages(void **state)
{
    (void)state;
    struct fe_qp *a, *b;
    mk_pair(&a, &b, 5000, FE_CC_UNLIMITED);
    uint32_t x = 12345;
    int done = 0, posted = 0;
    uint64_t t = 0;
    while (done < 2000) {
        while (posted < 2000 && posted - done < 64) {
            x = x * 1103515245u + 12345u;
            post_write(a, 1 + (x >> 8) % 20000, (uint64_t)posted);
            posted++;
        }
        t = tq_run(a, b, t, 100000000);
        done += completed(a);
        assert_int_equal(fe_qp_counters(a)->timeouts, 0);
    }
    assert_true(t < fe_qp_config(a)->ack_timeout_ns);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
}

/* Receiver credit: 20 packets granted of a 100-packet message; the 20th asks for the ACK that
 * will bring the next grant. */
static void test_credit_last_packet_asks(void **state)
{
    (void)state;
    struct fe_qp *a, *b;
    mk_pair(&a, &b, FE_CC_UNLIMITED, 20 * MTU);
    post_write(a, 100 * MTU, 1);
    struct fe_pkt p[32];
    assert_int_equal(tq_tx_all(a, 0, p, 32), 20);
    for (int i = 0; i < 20; i++) assert_int_equal(p[i].bth.ackreq, i == 19);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
}

/* No window, no credit: AckReq stays the plain policy (every 32nd and the message's last). */
static void test_unlimited_policy_unchanged(void **state)
{
    (void)state;
    struct fe_qp *a, *b;
    mk_pair(&a, &b, FE_CC_UNLIMITED, FE_CC_UNLIMITED);
    post_write(a, 100 * MTU, 1);
    struct fe_pkt p[128];
    assert_int_equal(tq_tx_all(a, 0, p, 128), 100);
    for (int i = 0; i < 100; i++) assert_int_equal(p[i].bth.ackreq, (i + 1) % 32 == 0 || i == 99);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
}

/* The window closes on an ACK while the pacer holds the requester back: the packets in flight
 * were sent under an open window, none asked for an ACK, and the responder (ACK every 4) has
 * counted only two of them since its last ACK. The requester resends the newest with AckReq
 * (a probe, not a retransmission); its duplicate is re-acknowledged and the flow goes on. */
static void test_window_closed_by_ack_probes(void **state)
{
    (void)state;
    struct fe_qp *a, *b;
    g_init.rate_Bps = 1000000000; /* 1 B/ns: about 1.1 us per frame */
    mk_pair(&a, &b, 16 * MTU, FE_CC_UNLIMITED);
    g_ack_window = MTU; /* the first ACK closes the window to one packet */
    struct fe_qp_config cb = *fe_qp_config(b);
    fe_qp_destroy(b);
    cb.ack_every = 4;
    b = tq_create(&cb, 0);
    struct fe_mr mr = {.rkey = RKEY_B, .va = VA_B, .len = 1ull << 32, .base = NULL};
    assert_int_equal(fe_qp_reg_mr(b, &mr), 0);
    post_write(a, 100 * MTU, 1);
    /* six paced packets, none with AckReq; all reach the responder */
    uint64_t now = 0;
    struct fe_pkt p;
    for (int i = 0; i < 6; i++) {
        now = fe_qp_next_deadline(a) > now ? fe_qp_next_deadline(a) : now;
        assert_int_equal(fe_qp_tx(a, now, &p), 1);
        assert_int_equal(p.bth.psn, (uint32_t)i);
        assert_false(p.bth.ackreq);
        assert_int_equal(fe_qp_rx(b, now, &p), 0);
    }
    /* the responder's 4th packet brought one ACK (PSN 3), which closes the window */
    assert_int_equal(fe_qp_tx(b, now, &p), 1);
    assert_int_equal(p.bth.psn, 3);
    assert_int_equal(fe_qp_tx(b, now, &p), 0);
    assert_int_equal(fe_qp_rx(a, now, &p), 0);
    /* the probe: PSN 5 again, asking */
    now = fe_qp_next_deadline(a) > now ? fe_qp_next_deadline(a) : now;
    assert_true(now < fe_qp_config(a)->ack_timeout_ns);
    assert_int_equal(fe_qp_tx(a, now, &p), 1);
    assert_int_equal(p.bth.psn, 5);
    assert_true(p.bth.ackreq);
    assert_int_equal(fe_qp_counters(a)->ackreq_probes, 1);
    assert_int_equal(fe_qp_rx(b, now, &p), 0);
    /* and the rest flows, one packet per round trip, each asking */
    uint64_t t = tq_run(a, b, now, 100000000);
    assert_int_equal(completed(a), 1);
    const struct fe_qp_counters *ca = fe_qp_counters(a);
    assert_int_equal(ca->timeouts, 0);
    assert_int_equal(ca->retx_pkts, 0);
    assert_int_equal(ca->ackreq_probes, 1);
    assert_int_equal(ca->tx_pkts, 101);
    assert_true(t < fe_qp_config(a)->ack_timeout_ns);
    fe_qp_destroy(a);
    fe_qp_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_window_steady_progress, setup),
        cmocka_unit_test_setup(test_window_last_packet_asks, setup),
        cmocka_unit_test_setup(test_window_shrinks_in_on_send, setup),
        cmocka_unit_test_setup(test_window_random_messages, setup),
        cmocka_unit_test_setup(test_credit_last_packet_asks, setup),
        cmocka_unit_test_setup(test_unlimited_policy_unchanged, setup),
        cmocka_unit_test_setup(test_window_closed_by_ack_probes, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
