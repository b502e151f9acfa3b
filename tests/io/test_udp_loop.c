/* UDP backend and event loop on loopback: batches, per-datagram TOS/ECN both ways, truncation,
 * source addresses, deadlines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/io.h"

#define LO 0x7F000001u

static struct fe_udpsock *open_lo(uint16_t port)
{
    struct fe_udpsock_config c;
    fe_udpsock_config_default(&c);
    c.bind_ip = LO;
    c.bind_port = port;
    int err = 1;
    struct fe_udpsock *u = fe_udpsock_open(&c, &err);
    assert_non_null(u);
    assert_int_equal(err, 0);
    return u;
}

static void test_batch_tos(void **state)
{
    (void)state;
    struct fe_udpsock *a = open_lo(0), *b = open_lo(0);
    uint32_t aip, bip;
    uint16_t aport, bport;
    fe_udpsock_local(a, &aip, &aport);
    fe_udpsock_local(b, &bip, &bport);
    assert_int_equal(aip, LO);
    assert_true(aport != 0 && bport != 0 && aport != bport);

    enum { N = 40 };
    static uint8_t tx[N][4200], rx[N][4200];
    struct fe_dgram d[N], r[N];
    for (int i = 0; i < N; i++) {
        uint32_t len = 100 + (uint32_t)i * 100;
        for (uint32_t k = 0; k < len; k++) tx[i][k] = (uint8_t)(i * 7 + k);
        d[i] = (struct fe_dgram){.buf = tx[i],
                                 .len = len,
                                 .ip = bip,
                                 .port = bport,
                                 .tos = (uint8_t)((26 << 2) | (i % 4))}; /* every ECN codepoint */
    }
    assert_int_equal(fe_udpsock_send(a, d, N), N);
    int got = 0;
    uint64_t until = fe_io_now_ns() + 2000000000ull;
    while (got < N && fe_io_now_ns() < until) {
        for (int i = got; i < N; i++) r[i] = (struct fe_dgram){.buf = rx[i], .cap = sizeof rx[i]};
        int n = fe_udpsock_recv(b, r + got, N - got);
        assert_true(n >= 0);
        got += n;
    }
    assert_int_equal(got, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(r[i].len, d[i].len);
        assert_memory_equal(r[i].buf, tx[i], d[i].len);
        assert_int_equal(r[i].tos, d[i].tos); /* CE (3) included: ECN survives the socket */
        assert_int_equal(r[i].ip, LO);
        assert_int_equal(r[i].port, aport);
        assert_false(r[i].trunc);
    }
    const struct fe_udpsock_stats *st = fe_udpsock_stats(a);
    assert_int_equal(st->tx_dgrams, N);
    assert_true(st->tx_calls >= 1 && st->tx_calls < N); /* batched */

    /* nothing more: 0, not an error */
    r[0] = (struct fe_dgram){.buf = rx[0], .cap = sizeof rx[0]};
    assert_int_equal(fe_udpsock_recv(b, r, 1), 0);

    /* truncation is reported */
    d[0].len = 3000;
    assert_int_equal(fe_udpsock_send(a, d, 1), 1);
    r[0] = (struct fe_dgram){.buf = rx[0], .cap = 1000};
    int n = 0;
    for (int k = 0; k < 1000 && n == 0; k++) n = fe_udpsock_recv(b, r, 1);
    assert_int_equal(n, 1);
    assert_true(r[0].trunc);
    assert_int_equal(fe_udpsock_stats(b)->rx_trunc, 1);

    uint64_t rcv, snd;
    fe_udpsock_bufsizes(b, &rcv, &snd);
    assert_true(rcv > 0 && snd > 0);
    fe_udpsock_close(a);
    fe_udpsock_close(b);
}

static struct fe_udpsock *open_lo_offload(bool offload)
{
    struct fe_udpsock_config c;
    fe_udpsock_config_default(&c);
    c.bind_ip = LO;
    c.no_gso = !offload;
    c.gro = offload;
    int err = 1;
    struct fe_udpsock *u = fe_udpsock_open(&c, &err);
    assert_non_null(u);
    assert_int_equal(err, 0);
    return u;
}

/* A batch shaped like RoCE traffic: runs of equal packets (GSO candidates) broken by a shorter
 * last packet, a CE mark in the middle of an ECT(0) run, another destination, a longer packet. */
enum { GN = 60 };
static uint8_t gtx[GN][4200];
static struct fe_dgram gd[GN];

static void gso_batch(uint16_t port, uint16_t other_port)
{
    for (int i = 0; i < GN; i++) {
        uint32_t len = i < 20 ? 1040 : i < 40 ? 4112 : 300 + (uint32_t)i;
        if (i == 9 || i == 33) len = 517; /* short last of a run */
        if (i == 20) len = 4128;          /* first packet, RETH: longer than what follows */
        uint8_t tos = 0x02;               /* ECT(0) */
        if (i == 5 || i == 6 || i == 25 || i == 50) tos = 0x03; /* CE marks */
        if (i >= 44 && i < 48) tos = (uint8_t)((26 << 2) | 1);
        for (uint32_t k = 0; k < len; k++) gtx[i][k] = (uint8_t)(i * 13 + k * 7);
        gd[i] = (struct fe_dgram){.buf = gtx[i], .len = len, .ip = LO, .port = port, .tos = tos};
        if (i == 15 || i == 16) gd[i].port = other_port;
    }
}

/* Receives `want` datagrams from u in chunks of `chunk` (copied, or borrowed from the socket's
 * GRO buffers), checking each against gd[] (those to port only), in order. Returns how many
 * times segments were left kept in the socket (fe_udpsock_rx_pending > 0) after a call. */
static int expect_batch(struct fe_udpsock *u, uint16_t port, int chunk, bool borrow)
{
    int kept = 0;
    static uint8_t rx[FE_IO_MAX_BATCH][4300];
    int next = 0;
    uint64_t until = fe_io_now_ns() + 2000000000ull;
    while (fe_io_now_ns() < until) {
        while (next < GN && gd[next].port != port) next++;
        if (next == GN) break;
        struct fe_dgram r[FE_IO_MAX_BATCH];
        for (int i = 0; i < chunk; i++) r[i] = (struct fe_dgram){.buf = rx[i], .cap = sizeof rx[i]};
        int n = borrow ? fe_udpsock_recv_borrow(u, r, chunk) : fe_udpsock_recv(u, r, chunk);
        assert_true(n >= 0 && n <= chunk);
        if (fe_udpsock_rx_pending(u) > 0) kept++;
        for (int i = 0; i < n; i++) {
            while (next < GN && gd[next].port != port) next++;
            assert_true(next < GN);
            assert_false(r[i].trunc);
            assert_int_equal(r[i].len, gd[next].len);
            assert_int_equal(r[i].tos, gd[next].tos); /* ECN per datagram, CE included */
            assert_memory_equal(r[i].buf, gd[next].buf, gd[next].len);
            next++;
        }
    }
    while (next < GN && gd[next].port != port) next++;
    assert_int_equal(next, GN);
    struct fe_dgram extra = {.buf = rx[0], .cap = sizeof rx[0]};
    assert_int_equal(fe_udpsock_recv(u, &extra, 1), 0);
    assert_int_equal(fe_udpsock_rx_pending(u), 0);
    return kept;
}

/* GSO on the sender and GRO on the receiver, each on or off: the receiver always sees the same
 * datagrams with the same TOS, whatever the kernel coalesced. */
static void test_gso_gro_identical(void **state)
{
    (void)state;
    for (int mode = 0; mode < 8; mode++) {
        bool tx_off = mode & 1, rx_off = mode & 2, borrow = mode & 4;
        struct fe_udpsock *a = open_lo_offload(!tx_off), *b = open_lo_offload(!rx_off);
        struct fe_udpsock *o = open_lo_offload(true);
        uint16_t bport, oport;
        fe_udpsock_local(b, NULL, &bport);
        fe_udpsock_local(o, NULL, &oport);
        gso_batch(bport, oport);
        assert_int_equal(fe_udpsock_send(a, gd, GN), GN);
        assert_int_equal(fe_udpsock_stats(a)->tx_errors, 0);
        if (tx_off)
            assert_int_equal(fe_udpsock_stats(a)->tx_gso_sends, 0);
        else if (!fe_udpsock_stats(a)->tx_gso_sends)
            print_message("note: kernel refused UDP GSO; tested the fallback\n");
        /* 3: segments kept across calls */
        int kept = expect_batch(b, bport, (mode & 3) == 0 ? 3 : 32, borrow);
        expect_batch(o, oport, 1, borrow);
        if (!tx_off && !rx_off && fe_udpsock_stats(a)->tx_gso_sends) {
            assert_true(fe_udpsock_stats(b)->rx_gro_dgrams > 0); /* loopback keeps GSO whole */
            if ((mode & 3) == 0) assert_true(kept > 0); /* and says so: poll cannot see them */
        }
        if (rx_off) assert_int_equal(kept, 0);
        if (rx_off) assert_int_equal(fe_udpsock_stats(b)->rx_gro_dgrams, 0);
        assert_int_equal(fe_udpsock_stats(b)->rx_dgrams, GN - 2);
        fe_udpsock_close(a);
        fe_udpsock_close(b);
        fe_udpsock_close(o);
    }
}

/* Datagrams sent in three pieces (fe_dgram.mid: head, payload from elsewhere, tail), with GSO on
 * and off: the receiver sees the same bytes as from whole datagrams. */
static void test_mid_pieces(void **state)
{
    (void)state;
    static uint8_t hb[GN][64];
    static struct fe_dgram gm[GN];
    for (int mode = 0; mode < 2; mode++) {
        struct fe_udpsock *a = open_lo_offload(mode == 0), *b = open_lo_offload(true);
        struct fe_udpsock *o = open_lo_offload(true);
        uint16_t bport, oport;
        fe_udpsock_local(b, NULL, &bport);
        fe_udpsock_local(o, NULL, &oport);
        gso_batch(bport, oport);
        for (int i = 0; i < GN; i++) {
            uint32_t h = (uint32_t)(i % 5) * 4, t = i % 3 ? 4 + (uint32_t)(i % 4) : 0;
            uint32_t len = gd[i].len;
            memcpy(hb[i], gtx[i], h);
            memcpy(hb[i] + h, gtx[i] + len - t, t);
            gm[i] = gd[i];
            gm[i].buf = hb[i];
            gm[i].len = h + t;
            gm[i].head_len = h;
            gm[i].mid = gtx[i] + h;
            gm[i].mid_len = len - h - t;
        }
        assert_int_equal(fe_udpsock_send(a, gm, GN), GN);
        assert_int_equal(fe_udpsock_stats(a)->tx_errors, 0);
        uint64_t bytes = 0;
        for (int i = 0; i < GN; i++) bytes += gd[i].len;
        assert_int_equal(fe_udpsock_stats(a)->tx_bytes, bytes);
        expect_batch(b, bport, 32, mode == 1);
        expect_batch(o, oport, 1, false);
        fe_udpsock_close(a);
        fe_udpsock_close(b);
        fe_udpsock_close(o);
    }
}

static void test_loop(void **state)
{
    (void)state;
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    int err;
    struct fe_loop *l = fe_loop_create(&lc, &err);
    assert_non_null(l);
    struct fe_udpsock *a = open_lo(0), *b = open_lo(0);
    uint16_t bport;
    fe_udpsock_local(b, NULL, &bport);
    assert_int_equal(fe_loop_add(l, fe_udpsock_fd(b), 7), 0);

    /* deadline: returns 0 at or after it */
    int tags[4];
    uint64_t t0 = fe_io_now_ns();
    assert_int_equal(fe_loop_wait(l, t0 + 2000000, tags, 4), 0);
    assert_true(fe_io_now_ns() >= t0 + 2000000);

    /* readable: returns the tag well before a far deadline */
    uint8_t x[8] = {1};
    struct fe_dgram d = {.buf = x, .len = 8, .ip = LO, .port = bport};
    assert_int_equal(fe_udpsock_send(a, &d, 1), 1);
    t0 = fe_io_now_ns();
    int n = fe_loop_wait(l, t0 + 5000000000ull, tags, 4);
    assert_int_equal(n, 1);
    assert_int_equal(tags[0], 7);
    assert_true(fe_io_now_ns() - t0 < 2000000000ull);

    /* busy-poll mode honours deadlines as well */
    fe_loop_destroy(l);
    lc.busy_poll = true;
    l = fe_loop_create(&lc, &err);
    assert_non_null(l);
    t0 = fe_io_now_ns();
    assert_int_equal(fe_loop_wait(l, t0 + 1000000, tags, 4), 0);
    assert_true(fe_io_now_ns() >= t0 + 1000000);
    fe_loop_destroy(l);
    fe_udpsock_close(a);
    fe_udpsock_close(b);
}

static void test_addr(void **state)
{
    (void)state;
    uint32_t ip = 0;
    uint16_t port = 99;
    assert_int_equal(fe_io_parse_addr("10.1.2.3", &ip, &port), 0);
    assert_int_equal(ip, 0x0A010203);
    assert_int_equal(port, 99);
    assert_int_equal(fe_io_parse_addr("127.0.0.1:4791", &ip, &port), 0);
    assert_int_equal(port, 4791);
    assert_int_equal(fe_io_parse_addr("127.0.0.1:65536", &ip, &port), FE_EINVAL);
    assert_int_equal(fe_io_parse_addr("127.0.0:1", &ip, &port), FE_EINVAL);
    assert_int_equal(fe_io_parse_addr(":1", &ip, &port), FE_EINVAL);
    assert_int_equal(fe_io_parse_addr("1.2.3.4:", &ip, &port), FE_EINVAL);
    char buf[32];
    assert_string_equal(fe_io_addr_str(0x0A010203, 17185, buf, sizeof buf), "10.1.2.3:17185");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_tos),  cmocka_unit_test(test_gso_gro_identical),
        cmocka_unit_test(test_mid_pieces), cmocka_unit_test(test_loop),
        cmocka_unit_test(test_addr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
