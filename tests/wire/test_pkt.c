/* fe_pkt_parse / fe_pkt_write: every opcode round trips; every malformed case has its reason. */
#include "wire_test.h"

#include "feroce/err.h"
#include "feroce/wire.h"

static void random_pkt(uint64_t *s, uint8_t op, struct fe_pkt *p, uint8_t *payload)
{
    memset(p, 0, sizeof *p);
    unsigned f = fe_opcode_flags(op);
    p->bth.opcode = op;
    p->bth.se = wt_rand(s) & 1;
    p->bth.migreq = wt_rand(s) & 1;
    p->bth.pkey = (uint16_t)wt_rand(s);
    p->bth.fecn = wt_rand(s) & 1;
    p->bth.becn = wt_rand(s) & 1;
    p->bth.resv6 = (uint8_t)(wt_rand(s) & 0x3f);
    p->bth.dqpn = (uint32_t)wt_rand(s) & 0xffffff;
    p->bth.ackreq = wt_rand(s) & 1;
    p->bth.resv7 = (uint8_t)(wt_rand(s) & 0x7f);
    p->bth.psn = (uint32_t)wt_rand(s) & FE_PSN_MASK;
    p->reth.va = wt_rand(s);
    p->reth.rkey = (uint32_t)wt_rand(s);
    p->reth.dma_len = (f & FE_OPF_ATOMIC) ? 8 : (uint32_t)wt_rand(s);
    p->aeth.syndrome = (uint8_t)wt_rand(s);
    p->aeth.msn = (uint32_t)wt_rand(s) & 0xffffff;
    p->imm = (uint32_t)wt_rand(s);
    if (f & FE_OPF_PAYLOAD) {
        p->payload_len = (uint32_t)(wt_rand(s) % 4097);
        for (uint32_t i = 0; i < p->payload_len; i++) payload[i] = (uint8_t)wt_rand(s);
        p->payload = payload;
    } else if (f & FE_OPF_CNP) {
        p->payload_len = 16;
    }
}

static void test_round_trip_every_opcode(void **state)
{
    (void)state;
    uint64_t s = 5;
    static uint8_t buf[FE_MAX_FRAME_LEN], payload[4096];
    for (int op = 0; op < 256; op++) {
        unsigned f = fe_opcode_flags((uint8_t)op);
        if (!(f & FE_OPF_KNOWN)) continue;
        for (int k = 0; k < 40; k++) {
            struct fe_pkt p, q;
            random_pkt(&s, (uint8_t)op, &p, payload);
            int n = fe_pkt_write(buf, sizeof buf, &p);
            assert_true(n > 0);
            assert_int_equal((size_t)n, fe_pkt_wire_len(&p));
            assert_int_equal(n % 4, 0);
            enum fe_parse_reason why;
            assert_int_equal(fe_pkt_parse(buf, (size_t)n, &q, &why), 0);
            assert_int_equal(why, FE_PR_OK);
            assert_int_equal(q.bth.opcode, op);
            assert_int_equal(q.bth.se, p.bth.se);
            assert_int_equal(q.bth.migreq, p.bth.migreq);
            assert_int_equal(q.bth.pkey, p.bth.pkey);
            assert_int_equal(q.bth.fecn, p.bth.fecn);
            assert_int_equal(q.bth.becn, p.bth.becn);
            assert_int_equal(q.bth.resv6, p.bth.resv6);
            assert_int_equal(q.bth.dqpn, p.bth.dqpn);
            assert_int_equal(q.bth.ackreq, p.bth.ackreq);
            assert_int_equal(q.bth.resv7, p.bth.resv7);
            assert_int_equal(q.bth.psn, p.bth.psn);
            assert_int_equal(q.bth.padcnt, (f & FE_OPF_PAYLOAD) ? (4 - p.payload_len % 4) % 4 : 0);
            assert_int_equal(q.payload_len, p.payload_len);
            if (f & FE_OPF_PAYLOAD) assert_memory_equal(q.payload, payload, p.payload_len);
            if (f & (FE_OPF_RETH | FE_OPF_ATOMIC)) {
                assert_int_equal(q.reth.va, p.reth.va);
                assert_int_equal(q.reth.rkey, p.reth.rkey);
                assert_int_equal(q.reth.dma_len, p.reth.dma_len);
            }
            if (f & FE_OPF_AETH) {
                assert_int_equal(q.aeth.syndrome, p.aeth.syndrome);
                assert_int_equal(q.aeth.msn, p.aeth.msn);
            }
            if (f & (FE_OPF_IMM | FE_OPF_IETH)) assert_int_equal(q.imm, p.imm);
            if (f & FE_OPF_CNP) {
                assert_int_equal(q.payload_len, 16);
                for (int i = 0; i < 16; i++) assert_int_equal(q.payload[i], 0);
            }
            assert_int_equal(q.icrc, FE_ICRC_UNCHECKED);
            /* shorter buffers are rejected (a payload opcode cut by a whole word would be a
             * valid shorter packet, so only 1..3 bytes there) */
            int maxcut = (f & FE_OPF_PAYLOAD) ? 3 : 5;
            for (int cut = 1; cut <= maxcut && cut <= n; cut++) {
                enum fe_parse_reason w2;
                assert_int_equal(fe_pkt_parse(buf, (size_t)(n - cut), &q, &w2), FE_EPARSE);
                assert_int_not_equal(w2, FE_PR_OK);
            }
        }
    }
}

static void test_layout_write_only_imm(void **state)
{
    (void)state;
    uint8_t pl[5] = {1, 2, 3, 4, 5};
    struct fe_pkt p = {.bth = {.opcode = FE_OP_WRITE_ONLY_IMM,
                               .pkey = 0xffff,
                               .dqpn = 0x11,
                               .ackreq = true,
                               .psn = 7},
                       .reth = {.va = 0x1000, .rkey = 0x77, .dma_len = 5},
                       .imm = 0xa1b2c3d4,
                       .payload = pl,
                       .payload_len = 5};
    uint8_t b[64], want[64];
    int n = fe_pkt_write(b, sizeof b, &p);
    size_t wn = wt_hex("0b30ffff 00000011 80000007  0000000000001000 00000077 00000005"
                       "a1b2c3d4 0102030405 000000 00000000",
                       want, sizeof want);
    assert_int_equal(n, (int)wn);
    assert_memory_equal(b, want, wn);
    /* every smaller capacity: FE_ENOSPC */
    for (int cap = 0; cap < n; cap++) assert_int_equal(fe_pkt_write(b, (size_t)cap, &p), FE_ENOSPC);
}

static void test_write_errors_and_virtual(void **state)
{
    (void)state;
    uint8_t b[128];
    struct fe_pkt p = {.bth = {.opcode = 0x15}};
    assert_int_equal(fe_pkt_write(b, sizeof b, &p), FE_EINVAL);
    p.bth.opcode = FE_OP_ACK;
    p.payload_len = 4;
    assert_int_equal(fe_pkt_write(b, sizeof b, &p), FE_EINVAL);
    p.bth.opcode = FE_OP_CNP;
    p.payload_len = 8;
    assert_int_equal(fe_pkt_write(b, sizeof b, &p), FE_EINVAL);
    /* CNP with no payload: 16 zero bytes */
    p.payload_len = 0;
    memset(b, 0xee, sizeof b);
    assert_int_equal(fe_pkt_write(b, sizeof b, &p), 32);
    for (int i = 12; i < 32; i++) assert_int_equal(b[i], 0);
    /* virtual payload (simulator): zeros */
    p.bth.opcode = FE_OP_WRITE_MIDDLE;
    p.payload = NULL;
    p.payload_len = 13;
    memset(b, 0xee, sizeof b);
    assert_int_equal(fe_pkt_write(b, sizeof b, &p), 12 + 16 + 4);
    assert_int_equal(b[1] >> 4 & 3, 3);
    for (int i = 12; i < 32; i++) assert_int_equal(b[i], 0);
    assert_int_equal(b[32], 0xee);
}

/* Builds BTH + body (body_len bytes of 0xab) + ICRC slot for raw parse tests. */
static size_t raw_pkt(uint8_t *b, uint8_t op, uint8_t pad, size_t body_len)
{
    struct fe_bth h = {.opcode = op, .padcnt = pad, .pkey = 0xffff, .dqpn = 1, .psn = 1};
    fe_bth_write(b, 12, &h);
    memset(b + 12, 0xab, body_len + 4);
    return 12 + body_len + 4;
}

static void expect(const uint8_t *b, size_t n, enum fe_parse_reason r)
{
    struct fe_pkt p;
    enum fe_parse_reason why = FE_PR_OK;
    int rc = fe_pkt_parse(b, n, &p, &why);
    if (r == FE_PR_OK) {
        assert_int_equal(rc, 0);
    } else {
        assert_int_equal(rc, FE_EPARSE);
    }
    assert_int_equal(why, r);
}

static void test_malformed(void **state)
{
    (void)state;
    uint8_t b[256];
    size_t n;
    n = raw_pkt(b, FE_OP_SEND_ONLY, 0, 0);
    expect(b, n, FE_PR_OK);
    expect(b, 11, FE_PR_BTH_SHORT);
    expect(b, 0, FE_PR_BTH_SHORT);
    expect(b, 12, FE_PR_ICRC_SHORT);
    expect(b, 15, FE_PR_ICRC_SHORT);
    b[1] |= 0x01; /* TVer 1 */
    expect(b, n, FE_PR_BTH_TVER);
    for (int op = 0; op < 256; op++) {
        if (fe_opcode_flags((uint8_t)op) & FE_OPF_KNOWN) continue;
        n = raw_pkt(b, (uint8_t)op, 0, 8);
        expect(b, n, FE_PR_OPCODE);
    }
    n = raw_pkt(b, FE_OP_WRITE_FIRST, 0, 16);
    expect(b, n, FE_PR_OK);
    expect(b, 12 + 15, FE_PR_EXT_SHORT);
    expect(b, 12 + 16, FE_PR_ICRC_SHORT);
    expect(b, 12 + 19, FE_PR_ICRC_SHORT);
    n = raw_pkt(b, FE_OP_ACK, 0, 4);
    expect(b, n, FE_PR_OK);
    expect(b, 15, FE_PR_EXT_SHORT);
    n = raw_pkt(b, FE_OP_ACK, 0, 8);
    expect(b, n, FE_PR_PAYLOAD);
    n = raw_pkt(b, FE_OP_ACK, 1, 4);
    expect(b, n, FE_PR_PAD);
    n = raw_pkt(b, FE_OP_CMP_SWAP, 0, 27);
    expect(b, n, FE_PR_ICRC_SHORT); /* 12+27+4 < 12+28+4: the ICRC slot overlaps the AtomicETH */
    n = raw_pkt(b, FE_OP_CMP_SWAP, 0, 28);
    expect(b, n, FE_PR_OK);
    n = raw_pkt(b, FE_OP_WRITE_MIDDLE, 3, 0);
    expect(b, n, FE_PR_PAD); /* pad larger than the payload */
    n = raw_pkt(b, FE_OP_WRITE_MIDDLE, 3, 4);
    expect(b, n, FE_PR_OK);
    n = raw_pkt(b, FE_OP_WRITE_MIDDLE, 0, 5);
    expect(b, n, FE_PR_PAD); /* payload + pad not a multiple of 4 */
    n = raw_pkt(b, FE_OP_CNP, 0, 16);
    expect(b, n, FE_PR_OK);
    n = raw_pkt(b, FE_OP_CNP, 0, 15);
    expect(b, n, FE_PR_CNP_LEN);
    n = raw_pkt(b, FE_OP_CNP, 0, 20);
    expect(b, n, FE_PR_CNP_LEN);
    n = raw_pkt(b, FE_OP_CNP, 2, 16);
    expect(b, n, FE_PR_PAD);
    n = raw_pkt(b, FE_OP_READ_REQUEST, 0, 16 + 4);
    expect(b, n, FE_PR_PAYLOAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_opcode),
        cmocka_unit_test(test_layout_write_only_imm),
        cmocka_unit_test(test_write_errors_and_virtual),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
