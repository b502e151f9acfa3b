/* "An algorithm is one file plus one registry line": a toy algorithm defined here, outside the
 * library, registered with fe_cc_register, then run by name in the simulator and over UDP on
 * loopback. It sends at a fixed rate (its one parameter) with no window, and counts its
 * callbacks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/cc.h"
#include "feroce/endpoint.h"
#include "feroce/err.h"
#include "feroce/io.h"
#include "feroce/qp.h"
#include "feroce/sim.h"

/* ---- the algorithm: what a new one's file holds ---- */

struct toy {
    uint64_t rate_Bps;
};

enum { P_RATE };
static const struct fe_cc_param toy_params[] = {
    [P_RATE] = {"rate", "Mb/s", "the fixed sending rate", 1000, 1, 1e6, false},
};

/* Callbacks of every instance, for the test to see that they ran. */
static struct {
    uint64_t inits, sends, send_bytes, acks;
} toy_calls;

static void toy_init(void *ctx, const struct fe_cc_params *p, const struct fe_cc_env *env,
                     struct fe_cc_out *out)
{
    struct toy *s = ctx;
    (void)env;
    s->rate_Bps = (uint64_t)(p->v[P_RATE] * 1e6 / 8);
    out->rate_Bps = s->rate_Bps;
    out->window_bytes = FE_CC_UNLIMITED;
    out->credit_bytes = FE_CC_UNLIMITED;
    out->timer_ns = FE_CC_NO_TIMER;
    toy_calls.inits++;
}

static void toy_send(void *ctx, uint64_t now_ns, uint32_t bytes, struct fe_cc_out *out)
{
    (void)ctx;
    (void)now_ns;
    (void)out;
    toy_calls.sends++;
    toy_calls.send_bytes += bytes;
}

static void toy_ack(void *ctx, uint64_t now_ns, const struct fe_cc_ack *ack, struct fe_cc_out *out)
{
    (void)ctx;
    (void)now_ns;
    (void)ack;
    (void)out;
    toy_calls.acks++;
}

static int toy_trace(const void *ctx, struct fe_cc_trace *v, int max)
{
    const struct toy *s = ctx;
    if (max < 1) return 0;
    v[0] = (struct fe_cc_trace){"rate", "Mb/s", (double)s->rate_Bps * 8 / 1e6};
    return 1;
}

static const struct fe_cc_algo toy_algo = {
    .name = "toy",
    .summary = "test: a fixed rate",
    .caps = 0,
    .ctx_size = sizeof(struct toy),
    .params = toy_params,
    .n_params = sizeof toy_params / sizeof toy_params[0],
    .init = toy_init,
    .on_send = toy_send,
    .on_ack = toy_ack,
    .trace = toy_trace,
};

static int setup(void **state)
{
    (void)state;
    static bool done;
    if (!done && fe_cc_register(&toy_algo)) return -1;
    done = true;
    return 0;
}

static void test_register(void **state)
{
    (void)state;
    assert_ptr_equal(fe_cc_find("toy"), &toy_algo);
    bool listed = false;
    for (const struct fe_cc_algo *const *a = fe_cc_list(); *a; a++) listed |= *a == &toy_algo;
    assert_true(listed);
    /* a name taken, a descriptor without init */
    assert_int_equal(fe_cc_register(&toy_algo), FE_ESTATE);
    struct fe_cc_algo bad = {.name = "toy2"};
    assert_int_equal(fe_cc_register(&bad), FE_EINVAL);
    assert_null(fe_cc_find("toy2"));
    /* its parameter through the usual parser */
    struct fe_cc_params p;
    fe_cc_params_default(&p, fe_cc_find("toy"));
    char err[200];
    assert_int_equal(fe_cc_params_parse(&p, "rate=2500", err, sizeof err), 0);
    assert_true(p.v[P_RATE] == 2500);
    assert_true(fe_cc_params_parse(&p, "rate=0", err, sizeof err) < 0);
}

/* ---- (a) in the simulator: a flow of the toy algorithm, chosen by name ---- */

#define G10 10000000000ull

/* The flow time of `bytes` between two hosts through a switch at 10 Gb/s, the toy at rate_mbps. */
static double sim_fct_ns(const char *params, uint64_t bytes, uint64_t *rate_seen_Bps)
{
    struct fe_sim_scenario sc;
    fe_sim_scenario_init(&sc);
    fe_sim_scenario_add_node(&sc, "a", false);
    fe_sim_scenario_add_node(&sc, "sw", true);
    fe_sim_scenario_add_node(&sc, "b", false);
    assert_true(fe_sim_scenario_add_link(&sc, 0, 1, G10, 1000, 0) >= 0);
    assert_true(fe_sim_scenario_add_link(&sc, 1, 2, G10, 1000, 0) >= 0);
    char err[256] = "";
    assert_int_equal(fe_sim_scenario_set_cc(&sc, 0, "toy", params, err, sizeof err), 0);
    struct fe_sim_flow f = {.src = 0, .dst = 2, .bytes = bytes, .prio = 0xff};
    assert_true(fe_sim_scenario_add_flow(&sc, &f) >= 0);
    int rc = 0;
    struct fe_sim *sim = fe_sim_create(&sc, &rc, err, sizeof err);
    if (!sim) fprintf(stderr, "fe_sim_create: %s\n", err);
    assert_non_null(sim);
    assert_int_equal(fe_sim_run(sim, 1000000), 0); /* 1 ms in: the flow runs */
    *rate_seen_Bps = fe_sim_flow_rate_Bps(sim, 0);
    assert_int_equal(fe_sim_run(sim, FE_SIM_NO_TIME), 1);
    struct fe_sim_flow_stats st;
    assert_int_equal(fe_sim_flow_stats(sim, 0, &st), 0);
    assert_true(st.done);
    assert_false(st.failed);
    assert_int_equal(st.rx_bytes, bytes);
    double fct = (double)(st.finish_ns - st.start_ns);
    fe_sim_destroy(sim);
    fe_sim_scenario_free(&sc);
    return fct;
}

static void test_sim(void **state)
{
    (void)state;
    const uint64_t bytes = 2000000;
    uint64_t before = toy_calls.sends, rate;
    /* the toy's rule: payload at most its rate (frame headers count against it too) */
    double fct = sim_fct_ns("rate=2000", bytes, &rate);
    assert_int_equal(rate, 250000000);
    double ideal = (double)bytes * 8 / 2e9 * 1e9;
    fprintf(stderr, "toy at 2 Gb/s: %.0f ns for %.0f ns of payload at that rate\n", fct, ideal);
    assert_true(fct >= ideal && fct < ideal * 1.1);
    assert_true(toy_calls.sends - before >= bytes / 4096);
    /* half the rate, twice the time */
    double fct2 = sim_fct_ns("rate=1000", bytes, &rate);
    assert_int_equal(rate, 125000000);
    assert_true(fct2 > fct * 1.9 && fct2 < fct * 2.1);
}

/* ---- (b) over UDP on loopback: two endpoints, a requester of the toy algorithm ---- */

#define LO 0x7F000001u

static struct fe_ep *open_ep(void)
{
    struct fe_ep_config c;
    fe_ep_config_default(&c);
    c.backend = FE_BACKEND_UDP;
    c.udp.bind_ip = LO;
    c.udp.bind_port = 0;
    int err = 1;
    struct fe_ep *ep = fe_ep_create(&c, &err);
    assert_non_null(ep);
    assert_int_equal(err, 0);
    return ep;
}

static struct fe_qp *make_qp(uint32_t qpn, uint32_t peer_qpn, const struct fe_cc_params *cc)
{
    struct fe_qp_config c;
    fe_qp_config_default(&c);
    c.local_qpn = qpn;
    c.remote_qpn = peer_qpn;
    c.remote_va = 0x100000;
    c.remote_rkey = 0x77;
    c.mtu_bytes = 1024;
    c.line_rate_bps = G10;
    c.cc_algo = cc ? cc->algo : NULL;
    c.cc_params = cc;
    int err = 0;
    const char *why = NULL;
    struct fe_qp *qp = fe_qp_create(&c, fe_io_now_ns(), &err, &why);
    if (!qp) fprintf(stderr, "fe_qp_create: %d %s\n", err, why ? why : "");
    assert_non_null(qp);
    return qp;
}

static void test_udp(void **state)
{
    (void)state;
    enum { BYTES = 256 * 1024, RATE_MBPS = 200 };
    struct fe_ep *ea = open_ep(), *eb = open_ep();
    uint32_t aip, bip;
    uint16_t aport, bport;
    fe_ep_local(ea, &aip, &aport);
    fe_ep_local(eb, &bip, &bport);

    struct fe_cc_params p;
    fe_cc_params_default(&p, fe_cc_find("toy"));
    char err[200];
    char set[32];
    snprintf(set, sizeof set, "rate=%d", RATE_MBPS);
    assert_int_equal(fe_cc_params_parse(&p, set, err, sizeof err), 0);
    uint64_t inits = toy_calls.inits, sends = toy_calls.sends, acks = toy_calls.acks;
    struct fe_qp *req = make_qp(0x11, 0x22, &p), *resp = make_qp(0x22, 0x11, NULL);
    assert_int_equal(toy_calls.inits, inits + 1);

    static uint8_t src[BYTES], dst[BYTES];
    for (size_t i = 0; i < BYTES; i++) src[i] = (uint8_t)(i * 31 + 7);
    struct fe_mr mr = {.rkey = 0x77, .va = 0x100000, .len = BYTES, .base = dst};
    assert_int_equal(fe_qp_reg_mr(resp, &mr), 0);
    assert_int_equal(fe_ep_add_qp(ea, req, bip, bport, 0), 0);
    assert_int_equal(fe_ep_add_qp(eb, resp, aip, aport, 0), 0);

    struct fe_wr wr = {.op = FE_WR_WRITE, .cookie = 1, .data = src, .len = BYTES};
    assert_int_equal(fe_qp_post_send(req, &wr), 0);
    uint64_t t0 = fe_io_now_ns(), until = t0 + 5000000000ull;
    struct fe_cqe cqe;
    int n = 0;
    while (!n && fe_io_now_ns() < until) {
        uint64_t now = fe_io_now_ns();
        fe_ep_handle_expiry(ea, now);
        fe_ep_handle_expiry(eb, now);
        fe_ep_poll_tx(ea, now, 32);
        fe_ep_poll_rx(eb, now, 32);
        fe_ep_poll_tx(eb, now, 32);
        fe_ep_poll_rx(ea, now, 32);
        n = fe_qp_poll_cq(req, &cqe, 1);
    }
    uint64_t elapsed = fe_io_now_ns() - t0;
    assert_int_equal(n, 1);
    assert_int_equal(cqe.status, FE_WC_SUCCESS);
    assert_memory_equal(dst, src, BYTES);
    /* the toy's callbacks ran, and its rate held the transfer back */
    assert_true(toy_calls.sends - sends >= BYTES / 1024);
    assert_true(toy_calls.acks > acks);
    double floor_ns = (double)BYTES * 8 / (RATE_MBPS * 1e6) * 1e9;
    fprintf(stderr, "toy over UDP: %llu bytes in %.2f ms (%.2f ms at %d Mb/s)\n",
            (unsigned long long)BYTES, elapsed / 1e6, floor_ns / 1e6, RATE_MBPS);
    assert_true((double)elapsed > floor_ns * 0.9);

    fe_ep_remove_qp(ea, req);
    fe_ep_remove_qp(eb, resp);
    fe_qp_destroy(req);
    fe_qp_destroy(resp);
    fe_ep_destroy(ea);
    fe_ep_destroy(eb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register),
        cmocka_unit_test(test_sim),
        cmocka_unit_test(test_udp),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
