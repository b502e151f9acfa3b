/* Public functions of the I/O layer that no tool calls: an endpoint's counters and the peer
 * address it sends a QP's packets to (learned from the packets that arrive), the data-pattern
 * names, the address an emulated switch's access port got from an ephemeral bind, and why an
 * endpoint could not be opened. Two endpoints carry one WRITE between two QPs over UDP on
 * loopback. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/endpoint.h"
#include "feroce/eswitch.h"
#include "feroce/frames.h"
#include "feroce/icrc.h"

#define LO        0x7F000001u
#define MSG_BYTES 3000u /* three packets at MTU 1024 */

static struct fe_ep *open_ep(void)
{
    struct fe_ep_config c;
    fe_ep_config_default(&c);
    c.udp.bind_ip = LO;
    c.udp.bind_port = 0;
    int err = 1;
    struct fe_ep *ep = fe_ep_create(&c, &err);
    assert_non_null(ep);
    assert_int_equal(err, 0);
    return ep;
}

static struct fe_qp *open_qp(uint32_t local_qpn, uint32_t remote_qpn)
{
    struct fe_qp_config c;
    fe_qp_config_default(&c);
    c.local_qpn = local_qpn;
    c.remote_qpn = remote_qpn;
    c.mtu_bytes = 1024;
    c.remote_va = 0x10000;
    c.remote_rkey = 0x77;
    c.ack_timeout_ns = 100000000ull; /* loopback on a loaded machine: no spurious retries */
    int err = 1;
    const char *why = NULL;
    struct fe_qp *qp = fe_qp_create(&c, fe_io_now_ns(), &err, &why);
    assert_non_null(qp);
    return qp;
}

/* Moves packets both ways until the sender's WRITE has completed (2 s at most). */
static void run_until_complete_len(struct fe_ep *a, struct fe_qp *qa, struct fe_ep *b, uint32_t len)
{
    uint64_t until = fe_io_now_ns() + 2000000000ull;
    struct fe_cqe cqe;
    int got = 0;
    while (!got && fe_io_now_ns() < until) {
        uint64_t now = fe_io_now_ns();
        fe_ep_handle_expiry(a, now);
        fe_ep_poll_tx(a, now, 64);
        fe_ep_poll_rx(b, now, 64);
        fe_ep_poll_tx(b, now, 64);
        fe_ep_poll_rx(a, now, 64);
        got = fe_qp_poll_cq(qa, &cqe, 1);
    }
    assert_int_equal(got, 1);
    assert_int_equal(cqe.status, FE_WC_SUCCESS);
    assert_int_equal(cqe.byte_len, len);
}

static void run_until_complete(struct fe_ep *a, struct fe_qp *qa, struct fe_ep *b)
{
    run_until_complete_len(a, qa, b, MSG_BYTES);
}

/* Two loopback endpoints with a QP each, a WRITEs to b's region over dst (the pattern
 * i * mul + add in src, `bytes` of it). */
struct ep_pair {
    struct fe_ep *a, *b;
    struct fe_qp *qa, *qb;
    uint32_t bip;
    uint16_t bport;
};
static struct ep_pair open_pair(uint8_t *src, uint8_t *dst, uint32_t bytes, uint8_t mul,
                                uint8_t add)
{
    struct ep_pair p = {.a = open_ep(), .b = open_ep()};
    fe_ep_local(p.b, &p.bip, &p.bport);
    p.qa = open_qp(0x100, 0x200);
    p.qb = open_qp(0x200, 0x100);
    for (uint32_t i = 0; i < bytes; i++) src[i] = (uint8_t)(i * mul + add);
    struct fe_mr mr = {.rkey = 0x77, .va = 0x10000, .len = bytes, .base = dst};
    assert_int_equal(fe_qp_reg_mr(p.qb, &mr), 0);
    assert_int_equal(fe_ep_add_qp(p.a, p.qa, p.bip, p.bport, 0), 0);
    assert_int_equal(fe_ep_add_qp(p.b, p.qb, LO, 0, FE_EP_LEARN_PEER), 0);
    return p;
}
static void close_pair(struct ep_pair *p)
{
    fe_ep_remove_qp(p->a, p->qa);
    fe_ep_remove_qp(p->b, p->qb);
    fe_qp_destroy(p->qa);
    fe_qp_destroy(p->qb);
    fe_ep_destroy(p->a);
    fe_ep_destroy(p->b);
}

/* Payloads the endpoint sends from WR memory (512 B and more), with every pad count, first,
 * middle, last and only packets: the receiver verifies each ICRC and places the same bytes. */
static void test_endpoint_payload_pieces(void **state)
{
    (void)state;
    static uint8_t src[MSG_BYTES], dst[MSG_BYTES];
    struct ep_pair p = open_pair(src, dst, MSG_BYTES, 29, 7);
    struct fe_ep *a = p.a, *b = p.b;
    struct fe_qp *qa = p.qa;
    static const uint32_t lens[] = {2999, 2998, 2997, 1536, 600};
    for (unsigned k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        memset(dst, 0, sizeof dst);
        struct fe_wr wr = {.op = FE_WR_WRITE, .cookie = k, .data = src, .len = lens[k]};
        assert_int_equal(fe_qp_post_send(qa, &wr), 0);
        run_until_complete_len(a, qa, b, lens[k]);
        assert_memory_equal(dst, src, lens[k]);
    }
    assert_int_equal(fe_ep_stats(b)->rx_bad_icrc, 0);
    assert_int_equal(fe_ep_stats(b)->rx_parse, 0);
    close_pair(&p);
}

/* A forged WRITE MIDDLE from the sender's address to b's QP: PSN psn, payload bytes of 0xEE,
 * len bytes in all (BTH + payload + ICRC when it is a whole packet), its ICRC good or not. */
static void forge_middle(struct fe_udpsock *u, uint32_t bip, uint16_t bport, uint32_t psn,
                         uint32_t len, bool good_icrc)
{
    static uint8_t payload[1024], buf[2048];
    memset(payload, 0xEE, sizeof payload);
    struct fe_pkt pkt;
    memset(&pkt, 0, sizeof pkt);
    pkt.bth.opcode = FE_OP_WRITE_MIDDLE;
    pkt.bth.pkey = 0xFFFF;
    pkt.bth.dqpn = 0x200;
    pkt.bth.psn = psn;
    pkt.payload = payload;
    pkt.payload_len = sizeof payload;
    int n = fe_pkt_write(buf, sizeof buf, &pkt);
    assert_true(n > 0);
    assert_int_equal(fe_icrc_fill_bth(buf, (size_t)n), 0);
    if (!good_icrc) buf[n - 1] ^= 0x5A;
    struct fe_dgram d = {.buf = buf, .len = len, .ip = bip, .port = bport};
    assert_int_equal(fe_udpsock_send(u, &d, 1), 1);
}

/* The receiver takes the middle packets of a WRITE straight into its region. What lands there
 * but is not executed (a bad ICRC) is written again by the real packets; what does not fit the
 * prediction (another PSN, another size) is handled as usual and counted. The message arrives
 * whole and right. */
static void test_endpoint_direct_placement(void **state)
{
    (void)state;
    enum { BYTES = 8 * 1024 };
    static uint8_t src[BYTES], dst[BYTES];
    struct ep_pair p = open_pair(src, dst, BYTES, 31, 3);
    struct fe_ep *a = p.a, *b = p.b;
    struct fe_qp *qa = p.qa, *qb = p.qb;
    uint32_t bip = p.bip;
    uint16_t bport = p.bport;
    struct fe_udpsock_config uc;
    fe_udpsock_config_default(&uc);
    uc.bind_ip = LO;
    int err = 1;
    struct fe_udpsock *forger = fe_udpsock_open(&uc, &err);
    assert_non_null(forger);

    struct fe_wr wr = {.op = FE_WR_WRITE, .cookie = 1, .data = src, .len = BYTES};
    assert_int_equal(fe_qp_post_send(qa, &wr), 0);
    /* the first packet only: b is in the middle of the WRITE */
    uint64_t now = fe_io_now_ns();
    assert_int_equal(fe_ep_poll_tx(a, now, 1), 1);
    uint32_t psn = fe_qp_config(qa)->sq_psn;
    uint64_t until = now + 2000000000ull;
    while (fe_qp_counters(qb)->rx_pkts < 1 && fe_io_now_ns() < until)
        fe_ep_poll_rx(b, fe_io_now_ns(), 64);
    assert_int_equal(fe_qp_counters(qb)->rx_pkts, 1);
    forge_middle(forger, bip, bport, psn + 1, 12 + 1024 + 4, false); /* in place, then dropped */
    forge_middle(forger, bip, bport, psn + 3, 12 + 1024 + 4, true);  /* out of sequence */
    forge_middle(forger, bip, bport, psn + 1, 102, true);            /* cut short */
    run_until_complete_len(a, qa, b, BYTES);
    assert_memory_equal(dst, src, BYTES);
    const struct fe_ep_stats *sb = fe_ep_stats(b);
    assert_true(sb->rx_direct_pkts >= 1);
    assert_true(sb->rx_bad_icrc >= 1);
    assert_true(sb->rx_parse >= 1);
    assert_true(fe_qp_counters(qb)->rx_ooo_pkts >= 1);
    fe_udpsock_close(forger);
    close_pair(&p);
}

static void test_endpoint_stats_and_peer(void **state)
{
    (void)state;
    struct fe_ep *a = open_ep(), *b = open_ep();
    uint32_t aip, bip;
    uint16_t aport, bport;
    fe_ep_local(a, &aip, &aport);
    fe_ep_local(b, &bip, &bport);
    assert_int_equal(aip, LO);

    struct fe_qp *qa = open_qp(0x100, 0x200), *qb = open_qp(0x200, 0x100);
    static uint8_t src[MSG_BYTES], dst[MSG_BYTES];
    for (uint32_t i = 0; i < MSG_BYTES; i++) src[i] = (uint8_t)(i * 13 + 1);
    struct fe_mr mr = {.rkey = 0x77, .va = 0x10000, .len = MSG_BYTES, .base = dst};
    assert_int_equal(fe_qp_reg_mr(qb, &mr), 0);

    /* the receiver is told a wrong port for its peer and learns the right one */
    assert_int_equal(fe_ep_add_qp(a, qa, bip, bport, 0), 0);
    assert_int_equal(fe_ep_add_qp(b, qb, LO, 9, FE_EP_LEARN_PEER), 0);
    uint32_t ip = 0;
    uint16_t port = 0;
    assert_int_equal(fe_ep_peer(b, qb, &ip, &port), 0);
    assert_int_equal(ip, LO);
    assert_int_equal(port, 9);
    assert_int_equal(fe_ep_peer(a, qb, &ip, &port), FE_ENOENT); /* not attached to a */

    struct fe_wr wr = {.op = FE_WR_WRITE, .cookie = 1, .data = src, .len = MSG_BYTES};
    assert_int_equal(fe_qp_post_send(qa, &wr), 0);
    run_until_complete(a, qa, b);
    assert_memory_equal(dst, src, MSG_BYTES);

    assert_int_equal(fe_ep_peer(b, qb, &ip, &port), 0);
    assert_int_equal(ip, aip);
    assert_int_equal(port, aport);
    assert_int_equal(fe_ep_peer(a, qa, NULL, &port), 0); /* either output may be NULL */
    assert_int_equal(port, bport);

    const struct fe_ep_stats *sa = fe_ep_stats(a), *sb = fe_ep_stats(b);
    assert_true(sa->tx_pkts >= 3 && sa->tx_bytes > MSG_BYTES);
    assert_true(sb->rx_pkts >= 3);
    assert_true(sb->tx_pkts >= 1 && sa->rx_pkts >= 1); /* the ACK */
    assert_int_equal(sb->rx_no_qp, 0);
    assert_int_equal(sb->rx_bad_icrc, 0);
    assert_int_equal(sb->rx_parse, 0);

    /* the backend's own counters, NULL for the backend the endpoint does not use */
    const struct fe_udpsock_stats *ua = fe_ep_udp_stats(a), *ub = fe_ep_udp_stats(b);
    assert_non_null(ua);
    assert_non_null(ub);
    assert_int_equal(ua->tx_dgrams, sa->tx_pkts);
    assert_int_equal(ub->rx_dgrams, sb->rx_dgrams);
    assert_null(fe_ep_raw_stats(a));

    assert_int_equal(fe_ep_remove_qp(a, qa), 0);
    assert_int_equal(fe_ep_peer(a, qa, &ip, &port), FE_ENOENT);
    fe_ep_remove_qp(b, qb);
    fe_qp_destroy(qa);
    fe_qp_destroy(qb);
    fe_ep_destroy(a);
    fe_ep_destroy(b);
}

static void test_data_pattern_name(void **state)
{
    (void)state;
    static const enum fe_data_pattern all[] = {FE_PAT_COUNTER, FE_PAT_FRAMES};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        enum fe_data_pattern back = (enum fe_data_pattern) - 1;
        assert_int_equal(fe_data_pattern_parse(fe_data_pattern_name(all[i]), &back), 0);
        assert_int_equal(back, all[i]);
    }
    assert_string_equal(fe_data_pattern_name(FE_PAT_COUNTER), "counter");
    assert_string_equal(fe_data_pattern_name(FE_PAT_FRAMES), "frames");
}

static void test_eswitch_port_addr(void **state)
{
    (void)state;
    struct fe_eswitch_config c;
    fe_eswitch_config_default(&c);
    c.backend = FE_BACKEND_UDP;
    c.n_ports = 2;
    c.port_ip[0] = c.port_ip[1] = LO;
    c.port_port[0] = c.port_port[1] = 0; /* ephemeral: only the switch knows them */
    c.to_ip = LO;
    c.to_port = 9;
    int err = 1;
    char msg[128] = "";
    struct fe_eswitch *s = fe_eswitch_create(&c, fe_io_now_ns(), &err, msg, sizeof msg);
    assert_non_null(s);
    uint32_t ip[2] = {0, 0};
    uint16_t port[2] = {0, 0};
    for (unsigned i = 0; i < 2; i++) {
        fe_eswitch_port_addr(s, i, &ip[i], &port[i]);
        assert_int_equal(ip[i], LO);
        assert_true(port[i] != 0);
    }
    assert_true(port[0] != port[1]);
    /* beyond the access ports: the outputs are left as they were */
    uint32_t ip_out = 1;
    uint16_t port_out = 1;
    fe_eswitch_port_addr(s, 2, &ip_out, &port_out);
    assert_int_equal(ip_out, 1);
    assert_int_equal(port_out, 1);
    fe_eswitch_destroy(s);
}

/* Receives datagrams on u until `want` arrived or 2 s passed, stepping the switch meanwhile. */
static int switch_collect(struct fe_eswitch *s, struct fe_udpsock *u, uint8_t (*buf)[256], int want)
{
    int got = 0;
    uint64_t until = fe_io_now_ns() + 2000000000ull;
    while (got < want && fe_io_now_ns() < until) {
        fe_eswitch_step(s, fe_io_now_ns(), ~0u);
        struct fe_dgram d[8];
        for (int i = 0; i < 8; i++) d[i] = (struct fe_dgram){.buf = buf[got + i], .cap = 256};
        int n = fe_udpsock_recv(u, d, want - got < 8 ? want - got : 8);
        if (n > 0) got += n;
    }
    return got;
}

/* --dup 1 --corrupt 1: every packet leaves twice, each with one byte flipped past its BTH; the
 * ICRC catches every one, and the BTH still names the QP. */
static void test_eswitch_dup_corrupt(void **state)
{
    (void)state;
    struct fe_udpsock_config uc;
    fe_udpsock_config_default(&uc);
    uc.bind_ip = LO;
    int err = 1;
    struct fe_udpsock *rx = fe_udpsock_open(&uc, &err), *tx = fe_udpsock_open(&uc, &err);
    assert_non_null(rx);
    assert_non_null(tx);
    struct fe_eswitch_config c;
    fe_eswitch_config_default(&c);
    c.n_ports = 1;
    c.port_ip[0] = LO;
    fe_udpsock_local(rx, &c.to_ip, &c.to_port);
    c.dup_ppm = c.corrupt_ppm = 1000000;
    char msg[128] = "";
    struct fe_eswitch *s = fe_eswitch_create(&c, fe_io_now_ns(), &err, msg, sizeof msg);
    assert_non_null(s);
    uint32_t sip;
    uint16_t sport;
    fe_eswitch_port_addr(s, 0, &sip, &sport);

    enum { N = 8 };
    uint8_t pkt[256];
    struct fe_pkt p;
    fe_cnp_build(&p, 0x123, FE_CNP_DSCP, FE_CNP_PCP);
    int len = fe_frame_encode(pkt, sizeof pkt, FE_FRAME_BTH, NULL, 0, &p);
    assert_true(len > FE_BTH_LEN);
    for (int i = 0; i < N; i++) {
        struct fe_dgram d = {.buf = pkt, .len = (uint32_t)len, .ip = sip, .port = sport};
        assert_int_equal(fe_udpsock_send(tx, &d, 1), 1);
    }
    static uint8_t got[2 * N + 8][256];
    assert_int_equal(switch_collect(s, rx, got, 2 * N), 2 * N);
    for (int i = 0; i < 2 * N; i++) {
        struct fe_frame f;
        enum fe_parse_reason why;
        assert_int_equal(fe_frame_decode(got[i], (size_t)len, FE_FRAME_BTH, true, &f, &why, NULL),
                         0);
        assert_int_equal(f.pkt.icrc, FE_ICRC_BAD);
        assert_int_equal(f.pkt.bth.dqpn, 0x123);
        assert_memory_equal(got[i], pkt, FE_BTH_LEN);
    }
    const struct fe_esw_port_stats *b = fe_eswitch_port_stats(s, 1);
    assert_int_equal(b->duplicated, N);
    assert_int_equal(b->corrupted, 2 * N); /* every copy a receiver sees fail */
    assert_int_equal(b->tx_pkts, 2 * N);
    fe_eswitch_destroy(s);
    fe_udpsock_close(rx);
    fe_udpsock_close(tx);
}

/* A failed open keeps the system call and its errno beside the fe_err, and the next open forgets
 * them: a bind to an address taken, then to an address of no interface here (TEST-NET-1), then a
 * configuration refused before any system call. */
static void test_open_failure_cause(void **state)
{
    (void)state;
    struct fe_ep *held = open_ep();
    struct fe_ep_config c;
    fe_ep_config_default(&c);
    fe_ep_local(held, &c.udp.bind_ip, &c.udp.bind_port);
    int err = 0;
    assert_null(fe_ep_create(&c, &err));
    assert_int_equal(err, FE_EIO);
    assert_string_equal(fe_io_last_fail()->step, "bind");
    assert_int_equal(fe_io_last_fail()->os_errno, EADDRINUSE);
    assert_string_equal(fe_io_fail_str(err), "address already in use");
    char m[256], want[96], a[24];
    snprintf(want, sizeof want, "cannot open the data socket on %s: address already in use",
             fe_io_addr_str(c.udp.bind_ip, c.udp.bind_port, a, sizeof a));
    assert_string_equal(fe_ep_open_error(&c, err, m, sizeof m), want);

    c.udp.bind_ip = 0xC0000201u; /* 192.0.2.1 */
    assert_null(fe_ep_create(&c, &err));
    assert_int_equal(fe_io_last_fail()->os_errno, EADDRNOTAVAIL);
    assert_non_null(strstr(fe_io_fail_str(err), "(not an address of this host)"));

    c.batch = 0;
    assert_null(fe_ep_create(&c, &err));
    assert_int_equal(err, FE_EINVAL);
    assert_string_equal(fe_io_last_fail()->step, "");
    assert_int_equal(fe_io_last_fail()->os_errno, 0);
    assert_string_equal(fe_io_fail_str(err), fe_strerror(FE_EINVAL));
    fe_ep_destroy(held);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoint_stats_and_peer),
        cmocka_unit_test(test_endpoint_payload_pieces),
        cmocka_unit_test(test_endpoint_direct_placement),
        cmocka_unit_test(test_data_pattern_name),
        cmocka_unit_test(test_eswitch_port_addr),
        cmocka_unit_test(test_eswitch_dup_corrupt),
        cmocka_unit_test(test_open_failure_cause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
