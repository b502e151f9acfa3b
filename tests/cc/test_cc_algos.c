/* TIMELY, HPCC, Swift, Homa: each reproduces its known qualitative behaviour. HPCC and Swift run
 * in a small closed loop: N senders through one bottleneck (10 Gb/s, 10 us base RTT) whose
 * queue and INT records feed back one half-RTT later. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/cc.h"
#include "feroce/err.h"

#define LINE_10G 10000000000ull

static _Alignas(16) unsigned char mem[8][1024];

static struct fe_cc *mk(int slot, const char *algo, const char *params, uint64_t base_rtt_ns)
{
    const struct fe_cc_algo *a = fe_cc_find(algo);
    assert_non_null(a);
    assert_true(fe_cc_instance_size(a) <= sizeof mem[0]);
    struct fe_cc_params p;
    char err[200];
    fe_cc_params_default(&p, a);
    if (fe_cc_params_parse(&p, params, err, sizeof err)) fail_msg("%s", err);
    struct fe_cc *cc = (struct fe_cc *)mem[slot];
    struct fe_cc_env env = {
        .line_rate_bps = LINE_10G, .mtu_bytes = 4096, .base_rtt_ns = base_rtt_ns};
    fe_cc_init(cc, &p, &env);
    return cc;
}

static double tv(const struct fe_cc *cc, const char *name)
{
    struct fe_cc_trace v[FE_CC_MAX_TRACE];
    int n = fe_cc_trace(cc, v, FE_CC_MAX_TRACE);
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].name, name)) return v[i].value;
    fail_msg("no trace variable %s", name);
    return -1;
}

static void ack_rtt(struct fe_cc *cc, uint64_t now, uint64_t rtt_ns)
{
    struct fe_cc_ack a = {.acked_bytes = 4096, .rtt_ns = rtt_ns};
    fe_cc_on_ack(cc, now, &a);
}

/* TIMELY, paper defaults (alpha 0.875, beta 0.8, delta 10 Mb/s, T_low 50 us, T_high 500 us,
 * min RTT 20 us), one ACK per 200 us so that each carries a new round trip.
 * RTT 100 us, then 110: rtt_diff = 0.875 x 10 = 8.75 us, gradient 8.75 / 20 = 0.4375, rate x
 * (1 - 0.8 x 0.4375) = 0.65: 10 -> 6.5 Gb/s. It keeps cutting while the RTT rises. A falling RTT
 * adds delta (10 Mb/s), and after 5 non-rising updates in a row 5 x delta. Above T_high (600 us):
 * x (1 - 0.8 x (1 - 500/600)). Below T_low: + delta. */
static void timely_gradient(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(0, "timely", "", 0);
    assert_int_equal(cc->out.rate_Bps, 1250000000u);
    uint64_t t = 0;
    ack_rtt(cc, t += 200000, 100000);
    assert_int_equal(cc->out.rate_Bps, 1250000000u); /* first sample: nothing to compare */
    ack_rtt(cc, t += 200000, 110000);
    assert_true(fabs(tv(cc, "rate") - 6500) < 1e-6);
    double prev = tv(cc, "rate");
    for (uint64_t r = 120000; r <= 200000; r += 10000) {
        ack_rtt(cc, t += 200000, r);
        assert_true(tv(cc, "rate") < prev);
        prev = tv(cc, "rate");
    }
    /* a second ACK within the same round trip (its packet left before the last update) */
    ack_rtt(cc, t + 1000, 300000);
    assert_true(tv(cc, "rate") == prev);
    /* falling RTT: +10 Mb/s per update, +50 from the fifth on */
    double steps[8];
    for (int k = 0; k < 8; k++) {
        ack_rtt(cc, t += 200000, 190000 - 10000 * (uint64_t)k);
        steps[k] = tv(cc, "rate") - prev;
        prev = tv(cc, "rate");
    }
    for (int k = 0; k < 8; k++) assert_true(fabs(steps[k] - (k < 4 ? 10 : 50)) < 1e-6);
    /* above T_high */
    ack_rtt(cc, t += 700000, 600000); /* sent after the last update: 700 us > 600 us ago */
    assert_true(fabs(tv(cc, "rate") - prev * (1 - 0.8 * (1 - 500.0 / 600))) < 1e-6);
    prev = tv(cc, "rate");
    /* below T_low */
    ack_rtt(cc, t += 200000, 40000);
    assert_true(fabs(tv(cc, "rate") - (prev + 10)) < 1e-6);
    assert_true(cc->out.rate_Bps == (uint64_t)(tv(cc, "rate") * 1e6 / 8));
}

/* ---- a single bottleneck with delayed feedback ---- */
#define NS_STEP  100u
#define HIST     1024 /* snapshots kept: 102.4 us */
#define BASE_RTT 10000u
#define C_BPNS   1.25 /* bytes per ns at 10 Gb/s */
struct snap {
    uint64_t ts, tx;
    double q;
};
struct link {
    struct snap h[HIST];
    uint64_t now;
    double q, tx;
};

/* Advances the link by one step with `offered` bytes per ns arriving. */
static void link_step(struct link *l, double offered)
{
    double in = offered * NS_STEP, cap = C_BPNS * NS_STEP;
    double out = l->q + in < cap ? l->q + in : cap;
    l->q += in - out;
    l->tx += out;
    l->now += NS_STEP;
    struct snap *s = &l->h[(l->now / NS_STEP) % HIST];
    s->ts = l->now;
    s->tx = (uint64_t)l->tx;
    s->q = l->q;
}

/* What a packet that crossed the switch half an RTT ago reports now. */
static const struct snap *link_seen(const struct link *l)
{
    uint64_t back = BASE_RTT / 2 / NS_STEP;
    uint64_t i = l->now / NS_STEP;
    return &l->h[(i >= back ? i - back : 0) % HIST];
}

/* HPCC: N flows starting at line rate into a 10 Gb/s bottleneck, one INT hop, ACKs every 1 us
 * per flow. Utilisation must settle at eta = 95 % of capacity with the queue drained. */
static void hpcc_converges_to_eta(void **state)
{
    (void)state;
    for (int n = 1; n <= 4; n += 3) {
        static struct link l;
        memset(&l, 0, sizeof l);
        struct fe_cc *cc[4];
        for (int i = 0; i < n; i++) cc[i] = mk(i, "hpcc", "", BASE_RTT);
        double tx_at_4ms = 0, q_max_late = 0;
        for (uint64_t step = 0; step < 6000000 / NS_STEP; step++) {
            double offered = 0;
            for (int i = 0; i < n; i++) offered += cc[i]->out.rate_Bps / 1e9;
            link_step(&l, offered);
            if (l.now == 4000000) tx_at_4ms = l.tx;
            if (l.now > 4000000 && l.q > q_max_late) q_max_late = l.q;
            for (int i = 0; i < n; i++) {
                if ((l.now + (uint64_t)i * 200) % 1000) continue;
                const struct snap *s = link_seen(&l);
                struct fe_int md = {.nhops = 1};
                md.hop[0].ts_ns = s->ts;
                md.hop[0].tx_bytes = s->tx;
                md.hop[0].qlen_bytes = (uint32_t)s->q;
                md.hop[0].rate_mbps = 10000;
                struct fe_cc_ack a = {.acked_bytes = 1250,
                                      .rtt_ns = BASE_RTT + (uint64_t)(s->q / C_BPNS),
                                      .int_md = &md};
                fe_cc_on_ack(cc[i], l.now, &a);
            }
        }
        double util = (l.tx - tx_at_4ms) / (2000000 * C_BPNS);
        printf("hpcc %d flows: utilisation %.4f, max queue after 4 ms %.0f B\n", n, util,
               q_max_late);
        assert_true(util > 0.93 && util < 0.97);
        assert_true(q_max_late < 4096);
        if (n == 4) { /* symmetric flows share equally */
            for (int i = 1; i < n; i++)
                assert_true(fabs(tv(cc[i], "W") - tv(cc[0], "W")) < 0.05 * tv(cc[0], "W"));
        }
    }
}

/* Swift: N window-limited flows (rate = cwnd x MTU / RTT, at most the 10 Gb/s NIC rate) into
 * the same bottleneck (two or more, since one NIC-limited flow cannot build a queue); the delay
 * they see is 10 us + queue / capacity. With a 25 us target the delay must settle near 25 us
 * while the link stays busy. */
static void swift_holds_target(void **state)
{
    (void)state;
    for (int n = 2; n <= 4; n += 2) {
        static struct link l;
        memset(&l, 0, sizeof l);
        struct fe_cc *cc[4];
        for (int i = 0; i < n; i++) cc[i] = mk(i, "swift", "", BASE_RTT);
        double tx_at_4ms = 0, dsum = 0;
        int dcount = 0;
        for (uint64_t step = 0; step < 6000000 / NS_STEP; step++) {
            const struct snap *s = link_seen(&l);
            double rtt = BASE_RTT + s->q / C_BPNS;
            double offered = 0, rate[4];
            for (int i = 0; i < n; i++) {
                double w = tv(cc[i], "cwnd") * 4096 / rtt; /* bytes per ns, window-limited */
                rate[i] = w < C_BPNS ? w : C_BPNS;
                offered += rate[i];
            }
            link_step(&l, offered);
            if (l.now == 4000000) tx_at_4ms = l.tx;
            if (l.now > 4000000) {
                dsum += rtt;
                dcount++;
            }
            for (int i = 0; i < n; i++) {
                if ((l.now + (uint64_t)i * 200) % 1000) continue;
                struct fe_cc_ack a = {.acked_bytes = (uint64_t)(rate[i] * 1000),
                                      .rtt_ns = (uint64_t)rtt};
                fe_cc_on_ack(cc[i], l.now, &a);
            }
        }
        double util = (l.tx - tx_at_4ms) / (2000000 * C_BPNS), delay = dsum / dcount;
        printf("swift %d flows: utilisation %.4f, mean delay %.2f us (target 25)\n", n, util,
               delay / 1e3);
        assert_true(util > 0.95);
        assert_true(delay > 21000 && delay < 29000);
    }
    /* below one packet the window is enforced by pacing: cwnd x MTU / RTT */
    struct fe_cc *cc = mk(0, "swift", "max_cwnd=0.5", BASE_RTT);
    ack_rtt(cc, 1000, 100000); /* above target: cut (by at most max_mdf 0.5) */
    assert_true(tv(cc, "cwnd") < 1);
    assert_int_equal(cc->out.rate_Bps, (uint64_t)(tv(cc, "cwnd") * 4096 * 1e9 / 100000));
    /* a NACK cuts by max_mdf, at most once per RTT */
    cc = mk(0, "swift", "", BASE_RTT);
    ack_rtt(cc, 1000, 20000); /* RTT sample 20 us */
    double w = tv(cc, "cwnd");
    fe_cc_on_nack(cc, 100000, 0);
    assert_true(fabs(tv(cc, "cwnd") - w * 0.5) < 1e-9);
    fe_cc_on_nack(cc, 101000, 0); /* 1 us later: within the RTT, no second cut */
    assert_true(fabs(tv(cc, "cwnd") - w * 0.5) < 1e-9);
    fe_cc_on_nack(cc, 121000, 0);
    assert_true(fabs(tv(cc, "cwnd") - w * 0.25) < 1e-9);
}

/* Homa: 10 Gb/s x 10 us = 12 500 bytes unscheduled; after that only granted bytes, and a grant
 * never moves the credit back. A sender obeying the credit, with grants arriving late and out
 * of order, never passes the largest grant it has seen. */
static void homa_credit(void **state)
{
    (void)state;
    struct fe_cc *cc = mk(0, "homa", "", BASE_RTT);
    assert_int_equal(cc->out.credit_bytes, 12500);
    assert_true(cc->out.rate_Bps == FE_CC_UNLIMITED);
    struct fe_cc_ack a = {.credit_bytes = 10000};
    fe_cc_on_ack(cc, 1, &a);
    assert_int_equal(cc->out.credit_bytes, 12500);
    a.credit_bytes = 50000;
    fe_cc_on_ack(cc, 2, &a);
    assert_int_equal(cc->out.credit_bytes, 50000);
    a.credit_bytes = 30000; /* older grant, reordered */
    fe_cc_on_ack(cc, 3, &a);
    assert_int_equal(cc->out.credit_bytes, 50000);
    a.credit_bytes = 0; /* an ACK without a grant */
    fe_cc_on_ack(cc, 4, &a);
    assert_int_equal(cc->out.credit_bytes, 50000);

    cc = mk(0, "homa", "rtt_bytes=3000", BASE_RTT);
    uint64_t sent = 0, grant = 0, max_grant_seen = 0, seed = 7;
    uint64_t pending[16] = {0};
    for (int step = 0; step < 20000; step++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        /* the receiver grants up to 4 KB beyond what it has received, in random steps */
        if (grant < sent + 4096) grant += (seed >> 40) % 2048;
        pending[(seed >> 20) % 16] = grant; /* in flight, delivered in random order */
        uint64_t g = pending[(seed >> 28) % 16];
        a.credit_bytes = g;
        fe_cc_on_ack(cc, (uint64_t)step, &a);
        if (g > max_grant_seen) max_grant_seen = g;
        uint64_t credit = cc->out.credit_bytes;
        assert_int_equal(credit, max_grant_seen > 3000 ? max_grant_seen : 3000);
        while (sent + 1000 <= credit) { /* the requester's rule */
            fe_cc_on_send(cc, (uint64_t)step, 1000);
            sent += 1000;
        }
        assert_true(sent <= credit);
    }
    assert_true(sent > 1000000);
    assert_int_equal(tv(cc, "sent"), sent);
}

static void params_and_traces(void **state)
{
    (void)state;
    const char *names[] = {"timely", "hpcc", "swift", "homa"};
    for (int i = 0; i < 4; i++) {
        struct fe_cc *cc = mk(0, names[i], "", 0);
        struct fe_cc_trace v[FE_CC_MAX_TRACE];
        assert_true(fe_cc_trace(cc, v, FE_CC_MAX_TRACE) >= 3);
        assert_true(cc->out.timer_ns == FE_CC_NO_TIMER);
    }
    struct fe_cc_params p;
    char err[200];
    fe_cc_params_default(&p, fe_cc_find("hpcc"));
    assert_int_equal(fe_cc_params_parse(&p, "eta=1.2", err, sizeof err), FE_ERANGE);
    assert_string_equal(err, "eta: 1.2 out of range [0.01, 1] ");
    fe_cc_params_default(&p, fe_cc_find("timely"));
    assert_int_equal(fe_cc_params_parse(&p, "hai_n=2.5", err, sizeof err), FE_EINVAL);
    fe_cc_params_default(&p, fe_cc_find("homa"));
    assert_int_equal(fe_cc_params_parse(&p, "rtt_bytes=-1", err, sizeof err), FE_ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(timely_gradient),    cmocka_unit_test(hpcc_converges_to_eta),
        cmocka_unit_test(swift_holds_target), cmocka_unit_test(homa_credit),
        cmocka_unit_test(params_and_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
