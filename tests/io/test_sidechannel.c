/* Side channel: codec layout and strictness, front-end and host state machines, and the two
 * talking to each other (with lost datagrams). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "feroce/sidechannel.h"
#include "io/txmeta.h"

#define HOST_IP 0x0A000001u /* 10.0.0.1 */
#define FE_IP   0x0A000002u /* 10.0.0.2 */
#define MS      1000000ull

static struct fe_sc_msg open_req(uint32_t host_qpn, uint32_t psn)
{
    struct fe_sc_msg m;
    memset(&m, 0, sizeof m);
    m.info_valid = true;
    m.request = FE_SC_REQ_OPEN_QP;
    m.loc.qpn = host_qpn;
    m.loc.psn = psn;
    m.loc.rkey = 0x1234;
    m.loc.va = 0x1122334455667788ull;
    m.loc.ip = HOST_IP;
    m.rem.ip = FE_IP;
    m.reply_port = 17186;
    return m;
}

static void enc(uint8_t *buf, const struct fe_sc_msg *m)
{
    assert_int_equal(fe_sc_encode(buf, m), 0);
}

/* The layout of include/feroce/sidechannel.h, byte by byte. */
static void test_layout(void **state)
{
    (void)state;
    struct fe_sc_msg m = open_req(0x123456, 0xABCDEF);
    m.rem.qpn = 0x000101;
    m.rem.psn = 0x7;
    m.rem.rkey = 0xCAFEBABE;
    m.rem.va = 0x0102030405060708ull;
    m.tx.valid = true;
    m.tx.start = true;
    m.tx.write = true;
    m.tx.msg_len_bytes = 0x11223344;
    m.tx.msg_count = 0x55667788;
    m.tx.gap = 0x99AABBCC;
    uint8_t b[64];
    enc(b, &m);
    assert_int_equal(b[0], 0x01 | (1 << 1));
    const uint8_t loc[24] = {0,    0x12, 0x34, 0x56, 0,    0xAB, 0xCD, 0xEF, 0,  0, 0x12, 0x34,
                             0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 10, 0, 0,    1};
    assert_memory_equal(b + 1, loc, 24);
    const uint8_t rem[24] = {0, 0, 1, 1, 0, 0, 0, 7, 0xCA, 0xFE, 0xBA, 0xBE,
                             1, 2, 3, 4, 5, 6, 7, 8, 10,   0,    0,    2};
    assert_memory_equal(b + 25, rem, 24);
    assert_int_equal(b[49], 17186 >> 8);
    assert_int_equal(b[50], 17186 & 0xFF);
    assert_int_equal(b[51], 0x01 | 0x02 | 0x08);
    const uint8_t tail[12] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
                              0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC};
    assert_memory_equal(b + 52, tail, 12);

    struct fe_sc_msg d;
    enum fe_sc_reason why;
    assert_int_equal(fe_sc_decode(b, 64, &d, &why), 0);
    assert_int_equal(why, FE_SC_R_OK);
    uint8_t b2[64];
    enc(b2, &d);
    assert_memory_equal(b, b2, 64);
    assert_int_equal(d.loc.qpn, 0x123456);
    assert_int_equal(d.rem.rkey, 0xCAFEBABE);
    assert_true(d.tx.start && d.tx.write && !d.tx.immediate);

    /* A reply: ack type in bits 7..5, ack valid bit 4. */
    m = open_req(1, 0);
    m.ack_valid = true;
    m.ack = FE_SC_ACK_NO_QP;
    enc(b, &m);
    assert_int_equal(b[0], 0x01 | (1 << 1) | 0x10 | (2 << 5));
}

static void expect_reject(const uint8_t *b, size_t len, enum fe_sc_reason r)
{
    struct fe_sc_msg d;
    enum fe_sc_reason why = FE_SC_R_OK;
    assert_true(fe_sc_decode(b, len, &d, &why) < 0);
    assert_int_equal(why, r);
}

static void test_decode_strict(void **state)
{
    (void)state;
    struct fe_sc_msg m = open_req(5, 6);
    uint8_t good[80], b[80];
    memset(good, 0, sizeof good);
    enc(good, &m);
    expect_reject(good, 63, FE_SC_R_SHORT);
    expect_reject(good, 0, FE_SC_R_SHORT);
    expect_reject(NULL, 64, FE_SC_R_SHORT);
    expect_reject(good, 65, FE_SC_R_LONG);
    expect_reject(good, 80, FE_SC_R_LONG);
    const int slots[4] = {1, 5, 25, 29};
    for (int i = 0; i < 4; i++) {
        memcpy(b, good, 64);
        b[slots[i]] = 1;
        expect_reject(b, 64, FE_SC_R_SLOT);
    }
    for (unsigned r = 5; r <= 6; r++) { /* unknown request types */
        memcpy(b, good, 64);
        b[0] = (uint8_t)(0x01 | (r << 1));
        expect_reject(b, 64, FE_SC_R_REQUEST);
    }
    memcpy(b, good, 64);
    b[0] = (uint8_t)(0x00 | (1 << 1)); /* a request without info valid */
    expect_reject(b, 64, FE_SC_R_REQUEST);
    memcpy(b, good, 64);
    b[0] = 0x01 | 0x10 | (FE_SC_ACK_NO_QP << 5); /* info valid without a request: accepted, */
    struct fe_sc_msg nr;                         /* as the firmware's replies carry it */
    assert_int_equal(fe_sc_decode(b, 64, &nr, NULL), 0);
    assert_true(nr.info_valid && nr.request == FE_SC_REQ_NULL && nr.ack == FE_SC_ACK_NO_QP);
    for (unsigned a = 4; a <= 6; a++) {
        memcpy(b, good, 64);
        b[0] = (uint8_t)(0x01 | (1 << 1) | 0x10 | (a << 5));
        expect_reject(b, 64, FE_SC_R_ACK);
    }
    memcpy(b, good, 64);
    b[0] = (uint8_t)(0x01 | (1 << 1) | (1 << 5)); /* ack type without ack valid */
    expect_reject(b, 64, FE_SC_R_ACK);
    memcpy(b, good, 64);
    b[0] = (uint8_t)(0x10 | (1 << 5)); /* an ack that answers nothing */
    expect_reject(b, 64, FE_SC_R_ACK);
    memcpy(b, good, 64);
    b[51] = 0x11; /* reserved tx bit */
    expect_reject(b, 64, FE_SC_R_TX_FLAGS);
    memcpy(b, good, 64);
    b[51] = 0x02; /* start without valid */
    expect_reject(b, 64, FE_SC_R_TX_FLAGS);
    memset(b, 0, 64);
    expect_reject(b, 64, FE_SC_R_EMPTY);

    /* encode refuses what decode would refuse */
    uint8_t o[64];
    m.loc.qpn = 0x1000000;
    assert_int_equal(fe_sc_encode(o, &m), FE_EINVAL);
    m = open_req(1, 1);
    m.request = 5;
    assert_int_equal(fe_sc_encode(o, &m), FE_EINVAL);
    m = open_req(1, 1);
    m.info_valid = false;
    assert_int_equal(fe_sc_encode(o, &m), FE_EINVAL);
    memset(&m, 0, sizeof m);
    assert_int_equal(fe_sc_encode(o, &m), FE_EINVAL);
}

static struct fe_sc_fe new_fe(void)
{
    struct fe_sc_fe fe;
    struct fe_sc_fe_config c;
    fe_sc_fe_config_default(&c);
    c.local_ip = FE_IP;
    c.mode = FE_SC_FE_STRICT; /* the liberal and firmware modes are tested apart */
    assert_int_equal(fe_sc_fe_init(&fe, &c), 0);
    return fe;
}

static int fe_in(struct fe_sc_fe *fe, const struct fe_sc_msg *m, uint32_t src,
                 struct fe_sc_fe_result *res)
{
    uint8_t b[64];
    enc(b, m);
    return fe_sc_fe_input(fe, 0, b, 64, src, 40000, res);
}

static struct fe_sc_msg reply_of(const struct fe_sc_fe_result *res)
{
    struct fe_sc_msg r;
    assert_true(res->reply);
    assert_int_equal(fe_sc_decode(res->reply_msg, 64, &r, NULL), 0);
    assert_true(r.info_valid && r.ack_valid);
    return r;
}

static void test_fe_open_modify_start_close(void **state)
{
    (void)state;
    struct fe_sc_fe fe = new_fe();
    struct fe_sc_fe_result res;
    struct fe_sc_msg m = open_req(0x11, 0x1000);
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
    assert_int_equal(res.n_events, 1);
    assert_int_equal(res.ev[0].type, FE_SC_EV_OPENED);
    assert_int_equal(res.ev[0].qpn, 256);
    assert_int_equal(res.ev[0].peer.qpn, 0x11);
    assert_int_equal(res.ev[0].sq_psn, 0x1000); /* first send PSN = the host's PSN */
    assert_int_equal(res.reply_ip, HOST_IP);
    assert_int_equal(res.reply_port, 17186);
    struct fe_sc_msg r = reply_of(&res);
    assert_int_equal(r.request, FE_SC_REQ_OPEN_QP);
    assert_int_equal(r.ack, FE_SC_ACK_ACK);
    assert_int_equal(r.loc.qpn, 256); /* swapped: our side in loc */
    assert_int_equal(r.loc.ip, FE_IP);
    assert_int_equal(r.rem.qpn, 0x11);
    assert_int_equal(r.rem.va, 0x1122334455667788ull);
    assert_int_equal(r.rem.rkey, 0x1234);

    /* The reply port named in the message is honoured; 0 means 17186. */
    struct fe_sc_msg m2 = open_req(0x12, 0);
    m2.reply_port = 5555;
    assert_int_equal(fe_in(&fe, &m2, HOST_IP, &res), 0);
    assert_int_equal(res.ev[0].qpn, 257);
    assert_int_equal(res.reply_port, 5555);

    /* OPEN_QP sent again with the same parameters (lost ACK): same QPN, no new QP. */
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
    assert_int_equal(res.n_events, 0);
    assert_int_equal(reply_of(&res).loc.qpn, 256);
    assert_int_equal(fe_sc_fe_open_count(&fe), 2);

    /* MODIFY_QP_RTS, and again (answered, not re-executed). */
    struct fe_sc_msg mod = m;
    mod.request = FE_SC_REQ_MODIFY_QP_RTS;
    mod.rem.qpn = 256;
    assert_int_equal(fe_in(&fe, &mod, HOST_IP, &res), 0);
    assert_int_equal(res.n_events, 1);
    assert_int_equal(res.ev[0].type, FE_SC_EV_RTS);
    assert_int_equal(reply_of(&res).ack, FE_SC_ACK_ACK);
    assert_int_equal(fe_in(&fe, &mod, HOST_IP, &res), 0);
    assert_int_equal(res.n_events, 0);
    assert_int_equal(fe_sc_fe_find(&fe, 256)->state, FE_SC_QP_RTS);

    /* tx-meta starts the stream: no reply. */
    struct fe_sc_msg tx;
    memset(&tx, 0, sizeof tx);
    tx.loc = m.loc;
    tx.rem.qpn = 256;
    tx.tx.valid = tx.tx.start = tx.tx.immediate = tx.tx.write = true;
    tx.tx.msg_len_bytes = 8192;
    tx.tx.msg_count = 100;
    assert_int_equal(fe_in(&fe, &tx, HOST_IP, &res), 0);
    assert_false(res.reply);
    assert_int_equal(res.n_events, 1);
    assert_int_equal(res.ev[0].type, FE_SC_EV_START);
    assert_int_equal(res.ev[0].tx.msg_len_bytes, 8192);
    assert_true(fe_sc_fe_find(&fe, 256)->streaming);
    tx.tx.start = false;
    assert_int_equal(fe_in(&fe, &tx, HOST_IP, &res), 0);
    assert_int_equal(res.ev[0].type, FE_SC_EV_STOP);

    /* tx-meta for a QP that is open but not RTS, or for none: refused. */
    tx.rem.qpn = 257;
    tx.loc.qpn = 0x12;
    assert_true(fe_in(&fe, &tx, HOST_IP, &res) < 0);
    assert_int_equal(res.why, FE_SC_R_NOT_RTS);
    tx.rem.qpn = 300;
    assert_true(fe_in(&fe, &tx, HOST_IP, &res) < 0);
    assert_int_equal(fe.stats.rejected[FE_SC_R_NOT_RTS], 2);

    /* MODIFY + start in one datagram: two events. */
    struct fe_sc_msg both = m2;
    both.request = FE_SC_REQ_MODIFY_QP_RTS;
    both.rem.qpn = 257;
    both.tx.valid = both.tx.start = true;
    assert_int_equal(fe_in(&fe, &both, HOST_IP, &res), 0);
    assert_int_equal(res.n_events, 2);
    assert_int_equal(res.ev[0].type, FE_SC_EV_RTS);
    assert_int_equal(res.ev[1].type, FE_SC_EV_START);

    /* CLOSE_QP frees; closing again answers NO_QP. */
    struct fe_sc_msg cl = mod;
    cl.request = FE_SC_REQ_CLOSE_QP;
    assert_int_equal(fe_in(&fe, &cl, HOST_IP, &res), 0);
    assert_int_equal(res.ev[0].type, FE_SC_EV_CLOSED);
    assert_int_equal(reply_of(&res).ack, FE_SC_ACK_ACK);
    assert_null(fe_sc_fe_find(&fe, 256));
    assert_int_equal(fe_in(&fe, &cl, HOST_IP, &res), 0);
    assert_int_equal(res.n_events, 0);
    r = reply_of(&res);
    assert_int_equal(r.ack, FE_SC_ACK_NO_QP);
    assert_int_equal(r.request, FE_SC_REQ_CLOSE_QP);
    assert_int_equal(r.loc.qpn, 256);
    assert_int_equal(fe.stats.tx_acks[FE_SC_ACK_NO_QP], 1);

    /* The freed QPN is given out again. */
    struct fe_sc_msg m3 = open_req(0x13, 0);
    assert_int_equal(fe_in(&fe, &m3, HOST_IP, &res), 0);
    assert_int_equal(res.ev[0].qpn, 256);
}

static void test_fe_unknown_qp_and_full(void **state)
{
    (void)state;
    struct fe_sc_fe fe = new_fe();
    struct fe_sc_fe_result res;
    struct fe_sc_msg cl = open_req(7, 0);
    cl.request = FE_SC_REQ_CLOSE_QP;
    cl.rem.qpn = 999;
    assert_int_equal(fe_in(&fe, &cl, HOST_IP, &res), 0);
    assert_int_equal(reply_of(&res).ack, FE_SC_ACK_NO_QP);
    cl.request = FE_SC_REQ_MODIFY_QP_RTS;
    assert_int_equal(fe_in(&fe, &cl, HOST_IP, &res), 0);
    assert_int_equal(reply_of(&res).ack, FE_SC_ACK_NO_QP);
    cl.request = FE_SC_REQ_SEND_QP_INFO;
    assert_int_equal(fe_in(&fe, &cl, HOST_IP, &res), 0);
    assert_int_equal(reply_of(&res).ack, FE_SC_ACK_NO_QP);

    for (uint32_t i = 0; i < FE_SC_MAX_QPS; i++) {
        struct fe_sc_msg m = open_req(100 + i, i);
        assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
        assert_int_equal(res.ev[0].qpn, 256 + i);
    }
    struct fe_sc_fe before;
    memcpy(&before, &fe, sizeof fe);
    struct fe_sc_msg m = open_req(500, 0);
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
    assert_int_equal(res.n_events, 0);
    assert_int_equal(reply_of(&res).ack, FE_SC_ACK_NO_QP);
    assert_memory_equal(before.qp, fe.qp, sizeof fe.qp);
}

/* Every refused datagram: a counter, no reply, no state change. */
static void test_fe_rejects_change_nothing(void **state)
{
    (void)state;
    struct fe_sc_fe fe = new_fe();
    struct fe_sc_fe_result res;
    struct fe_sc_msg m = open_req(0x11, 0);
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
    struct fe_sc_msg mod = m;
    mod.request = FE_SC_REQ_MODIFY_QP_RTS;
    mod.rem.qpn = 256;

    uint8_t bad[8][80];
    size_t blen[8];
    uint32_t bsrc[8];
    int n = 0;
    enc(bad[n], &mod); /* truncated */
    blen[n] = 40, bsrc[n++] = HOST_IP;
    enc(bad[n], &mod); /* oversized */
    blen[n] = 80, bsrc[n++] = HOST_IP;
    enc(bad[n], &mod); /* malformed slot */
    bad[n][26] = 0, bad[n][25] = 0xFF;
    blen[n] = 64, bsrc[n++] = HOST_IP;
    enc(bad[n], &mod); /* from another host */
    blen[n] = 64, bsrc[n++] = HOST_IP + 1;
    struct fe_sc_msg other = mod; /* the right host, a different host QP */
    other.loc.qpn = 0x99;
    enc(bad[n], &other);
    blen[n] = 64, bsrc[n++] = HOST_IP;
    struct fe_sc_msg rep = mod; /* a reply where requests are expected */
    rep.ack_valid = true;
    rep.ack = FE_SC_ACK_ACK;
    enc(bad[n], &rep);
    blen[n] = 64, bsrc[n++] = HOST_IP;
    struct fe_sc_msg cl = mod; /* CLOSE_QP from another host */
    cl.request = FE_SC_REQ_CLOSE_QP;
    enc(bad[n], &cl);
    blen[n] = 64, bsrc[n++] = 0x7F000001;
    const enum fe_sc_reason want[] = {FE_SC_R_SHORT,  FE_SC_R_LONG, FE_SC_R_SLOT,  FE_SC_R_SOURCE,
                                      FE_SC_R_SOURCE, FE_SC_R_ROLE, FE_SC_R_SOURCE};
    for (int i = 0; i < n; i++) {
        struct fe_sc_fe before;
        memcpy(&before, &fe, sizeof fe);
        uint64_t cnt = fe.stats.rejected[want[i]];
        assert_true(fe_sc_fe_input(&fe, 0, bad[i], blen[i], bsrc[i], 1, &res) < 0);
        assert_int_equal(res.why, want[i]);
        assert_false(res.reply);
        assert_int_equal(res.n_events, 0);
        assert_int_equal(fe.stats.rejected[want[i]], cnt + 1);
        assert_memory_equal(before.qp, fe.qp, sizeof fe.qp);
    }
    assert_int_equal(fe_sc_fe_find(&fe, 256)->state, FE_SC_QP_OPEN);

    /* allowed_ip: other hosts cannot even open */
    struct fe_sc_fe_config c;
    fe_sc_fe_config_default(&c);
    c.mode = FE_SC_FE_STRICT;
    c.allowed_ip = HOST_IP;
    assert_int_equal(fe_sc_fe_init(&fe, &c), 0);
    assert_true(fe_in(&fe, &m, HOST_IP + 5, &res) < 0);
    assert_int_equal(res.why, FE_SC_R_SOURCE);
    assert_int_equal(fe_sc_fe_open_count(&fe), 0);
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);

    c.max_qps = 17;
    assert_int_equal(fe_sc_fe_init(&fe, &c), FE_EINVAL);
}

/* ---- host role and interop ---- */

static struct fe_sc_host new_host(uint32_t qpn, bool start)
{
    struct fe_sc_host h;
    struct fe_sc_host_config c;
    fe_sc_host_config_default(&c);
    c.fe_ip = FE_IP;
    c.local.qpn = qpn;
    c.local.psn = 0x777;
    c.local.rkey = 0xAA;
    c.local.va = 0x10000;
    c.local.ip = HOST_IP;
    c.retry_timeout_ns = 10 * MS;
    c.max_tries = 3;
    c.any_src_port = false; /* the strict check; the firmware's own port is tested apart */
    if (start) {
        c.start.valid = c.start.start = c.start.write = c.start.immediate = true;
        c.start.msg_len_bytes = 4096;
    }
    assert_int_equal(fe_sc_host_init(&h, &c), 0);
    return h;
}

/* Moves datagrams between a host and a front-end until both are quiet; `drop` says which
 * host->fe (even bits) and fe->host (odd bits) datagrams are lost, in order. */
struct link_log {
    int n_events;
    struct fe_sc_event ev[16];
};

static void pump(struct fe_sc_host *h, struct fe_sc_fe *fe, uint64_t *now, uint32_t drop,
                 struct link_log *log)
{
    int k = 0;
    for (int guard = 0; guard < 64; guard++) {
        uint8_t b[64];
        if (!fe_sc_host_poll_tx(h, *now, b)) {
            uint64_t d = fe_sc_host_next_deadline(h);
            if (d == UINT64_MAX) return;
            if (d > *now) *now = d;
            continue;
        }
        bool lost = (drop >> (k++ & 31)) & 1;
        if (lost) continue;
        struct fe_sc_fe_result res;
        assert_int_equal(fe_sc_fe_input(fe, *now, b, 64, HOST_IP, 40000, &res), 0);
        for (int i = 0; i < res.n_events && log && log->n_events < 16; i++)
            log->ev[log->n_events++] = res.ev[i];
        if (!res.reply) continue;
        lost = (drop >> (k++ & 31)) & 1;
        if (lost) continue;
        assert_int_equal(res.reply_ip, HOST_IP);
        assert_int_equal(res.reply_port, h->cfg.reply_port);
        assert_int_equal(fe_sc_host_input(h, *now, res.reply_msg, 64, FE_IP, FE_SC_PORT, NULL), 0);
    }
    fail_msg("pump did not settle");
}

static void test_interop(void **state)
{
    (void)state;
    struct fe_sc_fe fe = new_fe();
    struct fe_sc_host h = new_host(0x42, true);
    uint64_t now = 1000;
    struct link_log log = {0};
    assert_int_equal(fe_sc_host_open(&h, now), 0);
    pump(&h, &fe, &now, 0, &log);
    assert_int_equal(h.state, FE_SC_H_RTS);
    assert_int_equal(h.remote.qpn, 256);
    assert_int_equal(h.remote.psn, 0x777);
    assert_int_equal(h.remote.ip, FE_IP);
    assert_int_equal(log.n_events, 3);
    assert_int_equal(log.ev[0].type, FE_SC_EV_OPENED);
    assert_int_equal(log.ev[1].type, FE_SC_EV_RTS);
    assert_int_equal(log.ev[2].type, FE_SC_EV_START);
    assert_int_equal(log.ev[2].tx.msg_len_bytes, 4096);
    assert_int_equal(log.ev[1].peer.va, 0x10000);
    assert_int_equal(log.ev[1].peer.rkey, 0xAA);
    assert_int_equal(h.stats.retries, 0);
    assert_int_equal(now, 1000); /* nothing waited */

    assert_int_equal(fe_sc_host_close(&h, now), 0);
    log.n_events = 0;
    pump(&h, &fe, &now, 0, &log);
    assert_int_equal(h.state, FE_SC_H_CLOSED);
    assert_int_equal(log.ev[0].type, FE_SC_EV_CLOSED);
    assert_int_equal(fe_sc_fe_open_count(&fe), 0);
}

static void test_interop_losses(void **state)
{
    (void)state;
    /* Every pattern of losses over the first 6 datagrams: the host ends up RTS with exactly one
     * QP open on the front-end, or FAILED after max_tries when too much is lost. */
    for (uint32_t drop = 0; drop < 64; drop++) {
        struct fe_sc_fe fe = new_fe();
        struct fe_sc_host h = new_host(0x42, false);
        uint64_t now = 0;
        assert_int_equal(fe_sc_host_open(&h, now), 0);
        pump(&h, &fe, &now, drop, NULL);
        if (h.state == FE_SC_H_RTS) {
            assert_int_equal(fe_sc_fe_open_count(&fe), 1);
            assert_int_equal(fe_sc_fe_find(&fe, h.remote.qpn)->state, FE_SC_QP_RTS);
        } else {
            assert_int_equal(h.state, FE_SC_H_FAILED);
            assert_true(h.timed_out);
        }
        if (drop == 1) { /* OPEN_QP lost once: resent after the timeout */
            assert_int_equal(h.state, FE_SC_H_RTS);
            assert_int_equal(h.stats.retries, 1);
            assert_int_equal(now, 10 * MS);
        }
        if (drop == 2) { /* its ACK lost: OPEN_QP resent, same QP */
            assert_int_equal(h.state, FE_SC_H_RTS);
            assert_int_equal(h.remote.qpn, 256);
        }
        if (drop == 0x7) { /* three OPEN_QPs lost: max_tries (3) used up */
            assert_int_equal(h.state, FE_SC_H_FAILED);
        }
    }
    /* Silence: 3 tries, then FAILED. */
    struct fe_sc_host h = new_host(1, false);
    uint8_t b[64];
    assert_int_equal(fe_sc_host_open(&h, 0), 0);
    assert_int_equal(fe_sc_host_poll_tx(&h, 0, b), 1);
    assert_int_equal(fe_sc_host_poll_tx(&h, 0, b), 0);
    assert_int_equal(fe_sc_host_next_deadline(&h), 10 * MS);
    assert_int_equal(fe_sc_host_poll_tx(&h, 10 * MS - 1, b), 0);
    assert_int_equal(fe_sc_host_poll_tx(&h, 10 * MS, b), 1);
    assert_int_equal(fe_sc_host_poll_tx(&h, 20 * MS, b), 1);
    assert_int_equal(fe_sc_host_poll_tx(&h, 30 * MS, b), 0);
    assert_int_equal(h.state, FE_SC_H_FAILED);
    assert_true(h.timed_out);
    assert_int_equal(h.stats.retries, 2);
    assert_int_equal(fe_sc_host_next_deadline(&h), UINT64_MAX);
}

static void test_host_rejects(void **state)
{
    (void)state;
    struct fe_sc_fe fe = new_fe();
    struct fe_sc_host h = new_host(0x42, false);
    uint8_t b[64];
    struct fe_sc_fe_result res;
    enum fe_sc_reason why;
    assert_int_equal(fe_sc_host_open(&h, 0), 0);
    assert_int_equal(fe_sc_host_poll_tx(&h, 0, b), 1);
    assert_int_equal(fe_sc_fe_input(&fe, 0, b, 64, HOST_IP, 1, &res), 0);

    struct fe_sc_host before;
    memcpy(&before, &h, sizeof h);
    size_t state_len = offsetof(struct fe_sc_host, stats);
    /* wrong source address, wrong source port, truncated, a request, unsolicited replies */
    assert_true(fe_sc_host_input(&h, 0, res.reply_msg, 64, FE_IP + 1, FE_SC_PORT, &why) < 0);
    assert_int_equal(why, FE_SC_R_SOURCE);
    assert_true(fe_sc_host_input(&h, 0, res.reply_msg, 64, FE_IP, 9999, &why) < 0);
    assert_int_equal(why, FE_SC_R_SOURCE);
    assert_true(fe_sc_host_input(&h, 0, res.reply_msg, 63, FE_IP, FE_SC_PORT, &why) < 0);
    assert_int_equal(why, FE_SC_R_SHORT);
    assert_true(fe_sc_host_input(&h, 0, b, 64, FE_IP, FE_SC_PORT, &why) < 0);
    assert_int_equal(why, FE_SC_R_ROLE);
    struct fe_sc_msg r = reply_of(&res);
    struct fe_sc_msg w = r;
    w.request = FE_SC_REQ_MODIFY_QP_RTS; /* answers a request we did not make */
    enc(b, &w);
    assert_true(fe_sc_host_input(&h, 0, b, 64, FE_IP, FE_SC_PORT, &why) < 0);
    assert_int_equal(why, FE_SC_R_UNSOLICITED);
    w = r;
    w.rem.qpn = 0x43; /* about another host QP */
    enc(b, &w);
    assert_true(fe_sc_host_input(&h, 0, b, 64, FE_IP, FE_SC_PORT, &why) < 0);
    assert_int_equal(why, FE_SC_R_UNSOLICITED);
    assert_memory_equal(&before, &h, state_len);
    assert_int_equal(h.stats.rejected[FE_SC_R_SOURCE], 2);

    /* the real reply is accepted; then a duplicate of it is unsolicited */
    assert_int_equal(fe_sc_host_input(&h, 0, res.reply_msg, 64, FE_IP, FE_SC_PORT, &why), 0);
    assert_int_equal(h.state, FE_SC_H_MODIFYING);
    memcpy(&before, &h, sizeof h);
    assert_true(fe_sc_host_input(&h, 0, res.reply_msg, 64, FE_IP, FE_SC_PORT, &why) < 0);
    assert_int_equal(why, FE_SC_R_UNSOLICITED);
    assert_memory_equal(&before, &h, state_len);

    /* any_src_port accepts the firmware's configurable source port */
    struct fe_sc_host h2 = new_host(0x42, false);
    h2.cfg.any_src_port = true;
    assert_int_equal(fe_sc_host_open(&h2, 0), 0);
    assert_int_equal(fe_sc_host_poll_tx(&h2, 0, b), 1);
    assert_int_equal(fe_sc_host_input(&h2, 0, res.reply_msg, 64, FE_IP, 1234, &why), 0);

    /* A front-end with no QP left: the host fails with NO_QP. */
    struct fe_sc_fe_config c;
    fe_sc_fe_config_default(&c);
    c.max_qps = 1;
    assert_int_equal(fe_sc_fe_init(&fe, &c), 0);
    struct fe_sc_host a = new_host(1, false), bh = new_host(2, false);
    uint64_t now = 0;
    assert_int_equal(fe_sc_host_open(&a, 0), 0);
    pump(&a, &fe, &now, 0, NULL);
    assert_int_equal(a.state, FE_SC_H_RTS);
    assert_int_equal(fe_sc_host_open(&bh, 0), 0);
    pump(&bh, &fe, &now, 0, NULL);
    assert_int_equal(bh.state, FE_SC_H_FAILED);
    assert_int_equal(bh.fail_ack, FE_SC_ACK_NO_QP);
    assert_false(bh.timed_out);

    /* Closing a QP the front-end already forgot: NO_QP counts as closed. */
    assert_int_equal(fe_sc_fe_release(&fe, a.remote.qpn), 0);
    assert_int_equal(fe_sc_host_close(&a, now), 0);
    pump(&a, &fe, &now, 0, NULL);
    assert_int_equal(a.state, FE_SC_H_CLOSED);
    assert_int_equal(fe_sc_host_close(&a, now), FE_ESTATE);
}

/* A firmware reply: ack type `ack` to request `req`, naming the board's QP loc_qpn and the
 * host's QP rem_qpn, sent from the firmware's reply port 0x8765. */
static int fw_reply(struct fe_sc_host *h, uint8_t req, uint8_t ack, uint32_t loc_qpn,
                    uint32_t rem_qpn)
{
    struct fe_sc_msg m = {.info_valid = true, .request = req, .ack_valid = true, .ack = ack};
    m.loc.qpn = loc_qpn;
    m.rem.qpn = rem_qpn;
    uint8_t b[64];
    enc(b, &m);
    enum fe_sc_reason why;
    return fe_sc_host_input(h, 0, b, 64, FE_IP, 0x8765, &why);
}

/* The firmware's side channel: replies from 0x8765, RTS on OPEN (a MODIFY after it is answered
 * ERROR), a second QP for a resent OPEN_QP, error replies that repeat its previous fields. */
static void test_host_firmware(void **state)
{
    (void)state;
    struct fe_sc_host h = new_host(0x42, true);
    h.cfg.any_src_port = true;
    uint8_t b[64];
    struct fe_sc_msg m;
    assert_int_equal(fe_sc_host_open(&h, 0), 0);
    assert_int_equal(fe_sc_host_poll_tx(&h, 0, b), 1);
    assert_int_equal(fw_reply(&h, FE_SC_REQ_OPEN_QP, FE_SC_ACK_ACK, 0x100, 0x42), 0);
    assert_int_equal(h.state, FE_SC_H_MODIFYING);
    /* the reply to our resent OPEN_QP: a second QP, closed before anything else is sent */
    assert_int_equal(fw_reply(&h, FE_SC_REQ_OPEN_QP, FE_SC_ACK_ACK, 0x101, 0x42), 0);
    assert_int_equal(h.stats.strays, 1);
    assert_int_equal(fe_sc_host_next_deadline(&h), 0);
    assert_int_equal(fe_sc_host_poll_tx(&h, 0, b), 1);
    assert_int_equal(fe_sc_decode(b, 64, &m, NULL), 0);
    assert_int_equal(m.request, FE_SC_REQ_CLOSE_QP);
    assert_int_equal(m.rem.qpn, 0x101);
    assert_int_equal(h.remote.qpn, 0x100);
    assert_int_equal(fe_sc_host_poll_tx(&h, 0, b), 1); /* then our MODIFY */
    assert_int_equal(fe_sc_decode(b, 64, &m, NULL), 0);
    assert_int_equal(m.request, FE_SC_REQ_MODIFY_QP_RTS);
    assert_int_equal(m.rem.qpn, 0x100);
    /* the stray's CLOSE ACK is not ours to wait for: unsolicited, nothing changes */
    assert_true(fw_reply(&h, FE_SC_REQ_CLOSE_QP, FE_SC_ACK_ACK, 0x101, 0x42) < 0);
    /* MODIFY answered ERROR: the board made the QP ready at OPEN */
    assert_int_equal(fw_reply(&h, FE_SC_REQ_MODIFY_QP_RTS, FE_SC_ACK_ERROR, 0x100, 0x42), 0);
    assert_int_equal(h.state, FE_SC_H_RTS);
    assert_int_equal(h.stats.rts_on_open, 1);
    assert_int_equal(fe_sc_host_poll_tx(&h, 0, b), 1); /* the tx-meta start follows */
    assert_int_equal(fe_sc_decode(b, 64, &m, NULL), 0);
    assert_true(m.tx.valid && m.tx.start);

    /* NO_QP repeating the board's previous reply (another host QP, an OPEN of before) */
    struct fe_sc_host h2 = new_host(0x43, false);
    h2.cfg.any_src_port = true;
    assert_int_equal(fe_sc_host_open(&h2, 0), 0);
    assert_int_equal(fe_sc_host_poll_tx(&h2, 0, b), 1);
    assert_true(fw_reply(&h2, FE_SC_REQ_OPEN_QP, FE_SC_ACK_ACK, 0x100, 0x42) < 0); /* not ours */
    assert_int_equal(fw_reply(&h2, FE_SC_REQ_OPEN_QP, FE_SC_ACK_NO_QP, 0x100, 0x42), 0);
    assert_int_equal(h2.state, FE_SC_H_FAILED);
    assert_int_equal(h2.fail_ack, FE_SC_ACK_NO_QP);
    assert_false(h2.timed_out);
    /* with nothing outstanding, an error reply is unsolicited */
    assert_true(fw_reply(&h2, FE_SC_REQ_NULL, FE_SC_ACK_NAK, 0, 0) < 0);
}

static struct fe_sc_fe new_fe_mode(enum fe_sc_fe_mode mode)
{
    struct fe_sc_fe fe;
    struct fe_sc_fe_config c;
    fe_sc_fe_config_default(&c);
    c.local_ip = FE_IP;
    c.mode = (uint8_t)mode;
    if (mode == FE_SC_FE_FIRMWARE) c.max_qps = FE_SC_FW_QPS;
    assert_int_equal(fe_sc_fe_init(&fe, &c), 0);
    return fe;
}

/* The default front-end, driven as the Rust host client drives the firmware: OPEN_QP, no
 * MODIFY, a tx-meta start with info valid and no request and loc QPN 0, CLOSE_QP with loc QPN
 * 0 from another address. */
static void test_fe_liberal(void **state)
{
    (void)state;
    struct fe_sc_fe fe = new_fe_mode(FE_SC_FE_LIBERAL);
    struct fe_sc_fe_result res;
    struct fe_sc_msg m = open_req(0x11, 0x1000);
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
    assert_int_equal(reply_of(&res).loc.qpn, 256);
    struct fe_sc_msg tx = {.info_valid = true, .request = FE_SC_REQ_NULL};
    tx.rem.qpn = 256;
    tx.tx = (struct fe_sc_tx_meta){
        .valid = true, .start = true, .write = true, .msg_len_bytes = 4096, .msg_count = 10};
    assert_int_equal(fe_in(&fe, &tx, HOST_IP, &res), 0);
    assert_int_equal(res.n_events, 2);
    assert_int_equal(res.ev[0].type, FE_SC_EV_RTS);
    assert_int_equal(res.ev[1].type, FE_SC_EV_START);
    assert_int_equal(res.ev[1].tx.msg_count, 10);
    assert_false(res.reply);
    struct fe_sc_msg cl = {.info_valid = true, .request = FE_SC_REQ_CLOSE_QP};
    cl.rem.qpn = 256;
    assert_int_equal(fe_in(&fe, &cl, HOST_IP + 7, &res), 0);
    assert_int_equal(res.ev[0].type, FE_SC_EV_CLOSED);
    assert_int_equal(reply_of(&res).ack, FE_SC_ACK_ACK);
    assert_int_equal(fe_sc_fe_open_count(&fe), 0);

    /* the same datagrams, strict: refused, nothing changes */
    struct fe_sc_fe st = new_fe_mode(FE_SC_FE_STRICT);
    assert_int_equal(fe_in(&st, &m, HOST_IP, &res), 0);
    assert_true(fe_in(&st, &tx, HOST_IP, &res) < 0);
    assert_int_equal(res.why, FE_SC_R_REQUEST);
    tx.info_valid = false;
    assert_true(fe_in(&st, &tx, HOST_IP, &res) < 0);
    assert_int_equal(res.why, FE_SC_R_SOURCE); /* loc QPN 0 is not the host's QP */
    assert_true(fe_in(&st, &cl, HOST_IP + 7, &res) < 0);
    assert_int_equal(fe_sc_fe_open_count(&st), 1);

    /* allow-list: a /24 */
    struct fe_sc_fe_config c;
    fe_sc_fe_config_default(&c);
    assert_int_equal(fe_sc_cidr_parse("192.168.10.0/24", &c.allow[0]), 0);
    c.n_allow = 1;
    assert_int_equal(fe_sc_fe_init(&fe, &c), 0);
    assert_true(fe_in(&fe, &m, 0xC0A80B01, &res) < 0); /* 192.168.11.1 */
    assert_int_equal(res.why, FE_SC_R_SOURCE);
    assert_int_equal(fe_in(&fe, &m, 0xC0A80A63, &res), 0); /* 192.168.10.99 */
    struct fe_sc_cidr x;
    assert_int_equal(fe_sc_cidr_parse("10.0.0.1", &x), 0);
    assert_int_equal(x.mask, 0xFFFFFFFFu);
    assert_int_equal(fe_sc_cidr_parse("0.0.0.0/0", &x), 0);
    assert_int_equal(x.mask, 0);
    const char *bad[] = {"10.0.0", "10.0.0.256", "10.0.0.1/33", "10.0.0.1/", "1.2.3.4x", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(fe_sc_cidr_parse(bad[i], &x), FE_EINVAL);
}

/* Replies are paced: a burst, then one per interval. */
static void test_fe_reply_rate(void **state)
{
    (void)state;
    struct fe_sc_fe fe = new_fe_mode(FE_SC_FE_LIBERAL);
    struct fe_sc_fe_result res;
    struct fe_sc_msg cl = {.info_valid = true, .request = FE_SC_REQ_CLOSE_QP};
    cl.rem.qpn = 999; /* answered NO_QP, every time */
    uint8_t b[64];
    enc(b, &cl);
    int replies = 0;
    for (int i = 0; i < 200; i++) {
        assert_int_equal(fe_sc_fe_input(&fe, 0, b, 64, HOST_IP, 1, &res), 0);
        replies += res.reply;
    }
    assert_int_equal(replies, 65); /* the burst of 64 and the one due at time 0 */
    assert_int_equal(fe.stats.replies_limited, 135);
    assert_int_equal(fe_sc_fe_input(&fe, 1000000000ull, b, 64, HOST_IP, 1, &res), 0);
    assert_true(res.reply); /* a second later the budget is back */
}

/* The firmware's side channel, as `feroce send --sc-mode firmware` plays it. */
static void test_fe_firmware(void **state)
{
    (void)state;
    struct fe_sc_fe fe = new_fe_mode(FE_SC_FE_FIRMWARE);
    struct fe_sc_fe_result res;
    struct fe_sc_msg m = open_req(0x11, 0x1000);
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
    assert_int_equal(res.n_events, 2); /* OPENED and RTS at once */
    assert_int_equal(res.ev[1].type, FE_SC_EV_RTS);
    struct fe_sc_msg r = reply_of(&res);
    assert_int_equal(r.loc.qpn, 256);
    assert_int_equal(r.loc.psn, 0);                     /* the firmware's replies say PSN 0 */
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0); /* the same OPEN: a new QP */
    assert_int_equal(reply_of(&res).loc.qpn, 257);
    struct fe_sc_msg mod = m;
    mod.request = FE_SC_REQ_MODIFY_QP_RTS;
    mod.rem.qpn = 256;
    assert_int_equal(fe_in(&fe, &mod, HOST_IP, &res), 0);
    assert_int_equal(reply_of(&res).ack, FE_SC_ACK_ERROR);
    mod.rem.qpn = 0x999; /* outside the pool: no answer at all */
    assert_int_equal(fe_in(&fe, &mod, HOST_IP, &res), 0);
    assert_false(res.reply);
    struct fe_sc_msg info = m;
    info.request = FE_SC_REQ_SEND_QP_INFO;
    info.rem.qpn = 256;
    assert_int_equal(fe_in(&fe, &info, HOST_IP, &res), 0);
    assert_false(res.reply);
    /* pool of 4: the fifth OPEN gets NO_QP repeating the previous reply's fields */
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
    uint8_t prev[64];
    memcpy(prev, res.reply_msg, 64);
    assert_int_equal(fe_in(&fe, &m, HOST_IP, &res), 0);
    assert_true(res.reply);
    assert_memory_equal(res.reply_msg + 1, prev + 1, 63);
    r = reply_of(&res);
    assert_int_equal(r.ack, FE_SC_ACK_NO_QP);
    /* reply port 0 means port 0: not deliverable */
    struct fe_sc_msg cl = m;
    cl.request = FE_SC_REQ_CLOSE_QP;
    cl.rem.qpn = 256;
    cl.reply_port = 0;
    assert_int_equal(fe_in(&fe, &cl, HOST_IP, &res), 0);
    assert_false(res.reply);
    assert_int_equal(fe.stats.replies_undeliverable, 1);
    assert_int_equal(fe_sc_fe_open_count(&fe), 3);
}

/* A host in RTS whose tx-meta start went out at t=0 (fe_sc_host sends it on entering RTS). */
static struct fe_sc_host started_host(void)
{
    struct fe_sc_host h = new_host(0x11, true);
    uint8_t out[FE_SC_MSG_LEN];
    h.state = FE_SC_H_RTS;
    h.start_pending = true;
    assert_int_equal(fe_sc_host_poll_tx(&h, 0, out), 1);
    assert_false(h.start_pending);
    return h;
}

/* The start goes again 100 ms after the first, backing off to 1 s, 5 in all; then the watch
 * gives up once, and is silent after. */
static void test_txmeta_start_resend(void **state)
{
    (void)state;
    struct fe_sc_host h = started_host();
    struct fe_txmeta_resend r;
    fe_txmeta_resend_reset(&r);
    assert_int_equal(fe_txmeta_start_watch(&r, &h, true, 100 * MS, 5, 0), FE_TXMETA_WAIT);
    assert_int_equal(fe_txmeta_resend_deadline(&r), 100 * MS);
    assert_int_equal(fe_txmeta_start_watch(&r, &h, true, 100 * MS, 5, 99 * MS), FE_TXMETA_WAIT);
    assert_false(h.start_pending);
    const uint64_t at[] = {100 * MS, 300 * MS, 700 * MS, 1500 * MS}; /* waits 200, 400, 800 */
    uint8_t out[FE_SC_MSG_LEN];
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(fe_txmeta_start_watch(&r, &h, true, 100 * MS, 5, at[i]), FE_TXMETA_SENT);
        assert_true(h.start_pending);
        assert_int_equal(fe_sc_host_poll_tx(&h, at[i], out), 1); /* the same start again */
        struct fe_sc_msg m;
        assert_int_equal(fe_sc_decode(out, sizeof out, &m, NULL), 0);
        assert_true(m.tx.valid && m.tx.start);
        assert_int_equal(r.sends, i + 2);
    }
    assert_int_equal(fe_txmeta_resend_deadline(&r), 2500 * MS); /* capped at 1 s */
    assert_int_equal(fe_txmeta_start_watch(&r, &h, true, 100 * MS, 5, 2500 * MS),
                     FE_TXMETA_GIVE_UP);
    assert_true(r.gave_up);
    assert_int_equal(fe_txmeta_resend_deadline(&r), UINT64_MAX);
    assert_int_equal(fe_txmeta_start_watch(&r, &h, true, 100 * MS, 5, 9000 * MS), FE_TXMETA_WAIT);
    assert_false(h.start_pending);
    fe_txmeta_resend_reset(&r); /* a new connection watches again */
    assert_int_equal(fe_txmeta_start_watch(&r, &h, true, 100 * MS, 5, 9000 * MS), FE_TXMETA_WAIT);
    assert_int_equal(fe_txmeta_resend_deadline(&r), 9100 * MS);
}

/* Once data shows, no start is ever sent again (the firmware would start an ended transfer all
 * over); nor is one while the QP is not RTS, none is configured, or the first is not out. */
static void test_txmeta_start_not_after_data(void **state)
{
    (void)state;
    struct fe_sc_host h = started_host();
    struct fe_txmeta_resend r;
    fe_txmeta_resend_reset(&r);
    assert_int_equal(fe_txmeta_start_watch(&r, &h, true, 100 * MS, 5, 0), FE_TXMETA_WAIT);
    assert_int_equal(fe_txmeta_start_watch(&r, &h, false, 100 * MS, 5, 50 * MS), FE_TXMETA_WAIT);
    assert_int_equal(fe_txmeta_resend_deadline(&r), UINT64_MAX);
    for (uint64_t t = 100 * MS; t < 20000 * MS; t += 100 * MS)
        assert_int_equal(fe_txmeta_start_watch(&r, &h, false, 100 * MS, 5, t), FE_TXMETA_WAIT);
    assert_false(h.start_pending);

    struct fe_sc_host q = started_host();
    fe_txmeta_resend_reset(&r);
    q.start_pending = true; /* not out yet: no schedule */
    assert_int_equal(fe_txmeta_start_watch(&r, &q, true, 100 * MS, 5, 0), FE_TXMETA_WAIT);
    assert_int_equal(fe_txmeta_resend_deadline(&r), UINT64_MAX);
    q = started_host();
    q.state = FE_SC_H_CLOSING;
    assert_int_equal(fe_txmeta_start_watch(&r, &q, true, 100 * MS, 5, 0), FE_TXMETA_WAIT);
    assert_int_equal(fe_txmeta_resend_deadline(&r), UINT64_MAX);
    struct fe_sc_host n = new_host(0x12, false);
    n.state = FE_SC_H_RTS;
    assert_int_equal(fe_txmeta_start_watch(&r, &n, true, 100 * MS, 5, 0), FE_TXMETA_WAIT);
    assert_int_equal(fe_txmeta_resend_deadline(&r), UINT64_MAX);
}

/* A stop goes FE_TXMETA_STOP_SENDS times in all, one wait apart, and no more once the QP
 * leaves RTS (CLOSE_QP, acknowledged, ends the stream then). */
static void test_txmeta_stop_resend(void **state)
{
    (void)state;
    struct fe_sc_host h = started_host();
    struct fe_txmeta_resend r;
    fe_txmeta_resend_reset(&r);
    struct fe_sc_tx_meta stop = h.cfg.start;
    stop.start = false;
    assert_int_equal(fe_sc_host_send_tx_meta(&h, &stop), 0);
    assert_int_equal(fe_txmeta_stop_watch(&r, &h, 100 * MS, 1000 * MS), FE_TXMETA_WAIT);
    uint8_t out[FE_SC_MSG_LEN];
    assert_int_equal(fe_sc_host_poll_tx(&h, 1000 * MS, out), 1); /* the first stop */
    assert_int_equal(fe_txmeta_stop_watch(&r, &h, 100 * MS, 1000 * MS), FE_TXMETA_WAIT);
    assert_int_equal(fe_txmeta_resend_deadline(&r), 1100 * MS);
    unsigned sent = 1;
    for (uint64_t t = 1000 * MS; t <= 3000 * MS; t += 10 * MS) {
        if (fe_txmeta_stop_watch(&r, &h, 100 * MS, t) != FE_TXMETA_SENT) continue;
        assert_int_equal(fe_sc_host_poll_tx(&h, t, out), 1);
        struct fe_sc_msg m;
        assert_int_equal(fe_sc_decode(out, sizeof out, &m, NULL), 0);
        assert_true(m.tx.valid && !m.tx.start);
        sent++;
    }
    assert_int_equal(sent, FE_TXMETA_STOP_SENDS);
    assert_int_equal(fe_txmeta_resend_deadline(&r), UINT64_MAX);

    struct fe_sc_host c = started_host();
    fe_txmeta_resend_reset(&r);
    assert_int_equal(fe_sc_host_send_tx_meta(&c, &stop), 0);
    assert_int_equal(fe_sc_host_poll_tx(&c, 0, out), 1);
    assert_int_equal(fe_txmeta_stop_watch(&r, &c, 100 * MS, 0), FE_TXMETA_WAIT);
    assert_int_equal(fe_sc_host_close(&c, 50 * MS), 0);
    assert_int_equal(fe_txmeta_stop_watch(&r, &c, 100 * MS, 200 * MS), FE_TXMETA_WAIT);
    assert_false(c.start_pending);
    assert_int_equal(fe_txmeta_resend_deadline(&r), UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_decode_strict),
        cmocka_unit_test(test_fe_open_modify_start_close),
        cmocka_unit_test(test_fe_unknown_qp_and_full),
        cmocka_unit_test(test_fe_rejects_change_nothing),
        cmocka_unit_test(test_interop),
        cmocka_unit_test(test_interop_losses),
        cmocka_unit_test(test_host_rejects),
        cmocka_unit_test(test_host_firmware),
        cmocka_unit_test(test_fe_liberal),
        cmocka_unit_test(test_fe_reply_rate),
        cmocka_unit_test(test_fe_firmware),
        cmocka_unit_test(test_txmeta_start_resend),
        cmocka_unit_test(test_txmeta_start_not_after_data),
        cmocka_unit_test(test_txmeta_stop_resend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
