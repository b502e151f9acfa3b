/* PSN arithmetic modulo 2^24, opcode table, AETH syndromes and the RNR timer table. */
#include "wire_test.h"

#include "feroce/psn.h"
#include "feroce/wire.h"

#include <stdio.h>

static void test_psn(void **state)
{
    (void)state;
    assert_int_equal(fe_psn_add(0xffffff, 1), 0);
    assert_int_equal(fe_psn_add(0xfffffe, 5), 3);
    assert_int_equal(fe_psn_add(3, -5), 0xfffffe);
    assert_int_equal(fe_psn_add(0, -1), 0xffffff);
    assert_int_equal(fe_psn_add(0x123456, 0), 0x123456);
    assert_int_equal(fe_psn_diff(0, 0xffffff), 1);
    assert_int_equal(fe_psn_diff(0xffffff, 0), -1);
    assert_int_equal(fe_psn_diff(5, 5), 0);
    assert_int_equal(fe_psn_diff(3, 0xfffffe), 5);
    /* half window: 2^23 - 1 ahead is after, 2^23 apart counts as before */
    assert_int_equal(fe_psn_diff(0x7fffff, 0), 0x7fffff);
    assert_int_equal(fe_psn_diff(0x800000, 0), -0x800000);
    assert_true(fe_psn_after(0x7fffff, 0));
    assert_true(fe_psn_before(0x800000, 0));
    assert_true(fe_psn_before(0xffffff, 0));
    assert_true(fe_psn_after(0, 0xffffff));
    assert_false(fe_psn_before(7, 7));
    assert_false(fe_psn_after(7, 7));
    uint64_t s = 99;
    for (int i = 0; i < 100000; i++) {
        uint32_t a = (uint32_t)wt_rand(&s) & FE_PSN_MASK;
        int32_t n = (int32_t)(wt_rand(&s) % FE_PSN_HALF) - (int32_t)(FE_PSN_HALF / 2);
        uint32_t b = fe_psn_add(a, n);
        assert_true(b <= FE_PSN_MASK);
        assert_int_equal(fe_psn_diff(b, a), n);
        assert_int_equal(fe_psn_diff(a, b), -n);
        assert_int_equal(fe_psn_after(b, a), n > 0);
        assert_int_equal(fe_psn_before(b, a), n < 0);
    }
}

static void test_opcodes(void **state)
{
    (void)state;
    int known = 0;
    for (int op = 0; op < 256; op++) {
        unsigned f = fe_opcode_flags((uint8_t)op);
        if (f & FE_OPF_KNOWN) {
            known++;
            assert_string_not_equal(fe_opcode_name((uint8_t)op), "UNKNOWN");
            assert_true(fe_pkt_hdr_len((uint8_t)op) >= FE_BTH_LEN);
            assert_false((f & FE_OPF_REQUEST) && (f & FE_OPF_RESPONSE));
            if (f & FE_OPF_SUPPORTED) assert_true(f & (FE_OPF_SEND | FE_OPF_WRITE));
            if (f & FE_OPF_IMM) assert_true(f & FE_OPF_LAST);
        } else {
            assert_int_equal(f, 0);
            assert_string_equal(fe_opcode_name((uint8_t)op), "UNKNOWN");
            assert_int_equal(fe_pkt_hdr_len((uint8_t)op), 0);
        }
    }
    assert_int_equal(known, 23 + 1); /* RC 0x00..0x17 without 0x15, plus CNP */
    assert_int_equal(fe_opcode_flags(0x15), 0);
    assert_int_equal(fe_opcode_flags(0x24), 0); /* UC SEND_ONLY is not RC */
    assert_int_equal(fe_opcode_flags(0x64), 0); /* UD */
    assert_string_equal(fe_opcode_name(FE_OP_WRITE_FIRST), "WRITE_FIRST");
    assert_string_equal(fe_opcode_name(FE_OP_SEND_ONLY_IMM), "SEND_ONLY_IMM");
    assert_string_equal(fe_opcode_name(FE_OP_ACK), "ACK");
    assert_string_equal(fe_opcode_name(FE_OP_CNP), "CNP");
    assert_int_equal(fe_pkt_hdr_len(FE_OP_WRITE_FIRST), 28);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_WRITE_MIDDLE), 12);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_WRITE_ONLY_IMM), 32);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_SEND_LAST_IMM), 16);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_ACK), 16);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_ATOMIC_ACK), 24);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_CMP_SWAP), 40);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_READ_REQUEST), 28);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_READ_RESP_MIDDLE), 12);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_READ_RESP_LAST), 16);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_SEND_ONLY_INV), 16);
    assert_int_equal(fe_pkt_hdr_len(FE_OP_CNP), 12);
    unsigned w = fe_opcode_flags(FE_OP_WRITE_ONLY_IMM);
    assert_true((w & (FE_OPF_RETH | FE_OPF_IMM | FE_OPF_FIRST | FE_OPF_LAST | FE_OPF_WRITE |
                      FE_OPF_SUPPORTED | FE_OPF_REQUEST | FE_OPF_PAYLOAD)) ==
                (FE_OPF_RETH | FE_OPF_IMM | FE_OPF_FIRST | FE_OPF_LAST | FE_OPF_WRITE |
                 FE_OPF_SUPPORTED | FE_OPF_REQUEST | FE_OPF_PAYLOAD));
    assert_false(fe_opcode_flags(FE_OP_READ_REQUEST) & FE_OPF_SUPPORTED);
    assert_false(fe_opcode_flags(FE_OP_FETCH_ADD) & FE_OPF_SUPPORTED);
    assert_true(fe_opcode_flags(FE_OP_FETCH_ADD) & FE_OPF_ATOMIC);
    assert_false(fe_opcode_flags(FE_OP_SEND_ONLY_INV) & FE_OPF_SUPPORTED);
    assert_true(fe_opcode_flags(FE_OP_CNP) & FE_OPF_CNP);
    assert_false(fe_opcode_flags(FE_OP_CNP) & FE_OPF_PAYLOAD);
    assert_true(fe_opcode_flags(FE_OP_ACK) & FE_OPF_RESPONSE);
    assert_false(fe_opcode_flags(FE_OP_WRITE_MIDDLE) & (FE_OPF_FIRST | FE_OPF_LAST));
}

static void test_aeth(void **state)
{
    (void)state;
    assert_int_equal(fe_aeth_syn_ack(31), 0x1f);
    assert_int_equal(fe_aeth_syn_rnr(14), 0x2e);
    assert_int_equal(fe_aeth_syn_nak(FE_NAK_REMOTE_ACCESS), 0x62);
    assert_int_equal(fe_aeth_kind(0x1f), FE_AETH_ACK);
    assert_int_equal(fe_aeth_kind(0x2e), FE_AETH_RNR);
    assert_int_equal(fe_aeth_kind(0x40), FE_AETH_RESERVED);
    assert_int_equal(fe_aeth_kind(0x60), FE_AETH_NAK);
    assert_int_equal(fe_aeth_value(0x2e), 14);
    /* IBA table 45 */
    assert_int_equal(fe_rnr_timer_ns(0), 655360000ull);
    assert_int_equal(fe_rnr_timer_ns(1), 10000ull);
    assert_int_equal(fe_rnr_timer_ns(5), 60000ull);
    assert_int_equal(fe_rnr_timer_ns(14), 1280000ull);
    assert_int_equal(fe_rnr_timer_ns(18), 5120000ull);
    assert_int_equal(fe_rnr_timer_ns(31), 491520000ull);
    for (uint8_t c = 2; c < 32; c++) assert_true(fe_rnr_timer_ns(c) > fe_rnr_timer_ns(c - 1));
    char buf[64];
    assert_string_equal(fe_aeth_describe(0x1f, buf, sizeof buf), "ACK credits=31 (no credit info)");
    assert_string_equal(fe_aeth_describe(0x05, buf, sizeof buf), "ACK credits=5");
    assert_string_equal(fe_aeth_describe(0x2e, buf, sizeof buf), "RNR NAK timer=14 (1.28 ms)");
    assert_string_equal(fe_aeth_describe(0x20, buf, sizeof buf), "RNR NAK timer=0 (655.36 ms)");
    assert_string_equal(fe_aeth_describe(0x21, buf, sizeof buf), "RNR NAK timer=1 (0.01 ms)");
    assert_string_equal(fe_aeth_describe(0x60, buf, sizeof buf), "NAK PSN sequence error");
    assert_string_equal(fe_aeth_describe(0x61, buf, sizeof buf), "NAK invalid request");
    assert_string_equal(fe_aeth_describe(0x62, buf, sizeof buf), "NAK remote access error");
    assert_string_equal(fe_aeth_describe(0x63, buf, sizeof buf), "NAK remote operational error");
    assert_string_equal(fe_aeth_describe(0x64, buf, sizeof buf), "NAK invalid RD request");
    assert_string_equal(fe_aeth_describe(0x65, buf, sizeof buf), "NAK code=5 (reserved)");
    assert_string_equal(fe_aeth_describe(0x41, buf, sizeof buf), "reserved syndrome 0x41");
    assert_string_equal(fe_aeth_describe(0x81, buf, sizeof buf), "reserved syndrome 0x81");
    char small[8];
    fe_aeth_describe(0x60, small, sizeof small);
    assert_int_equal(strlen(small), 7); /* truncated, terminated */
    assert_string_equal(fe_nak_code_name(9), "reserved NAK code");
}

static void test_reason_names(void **state)
{
    (void)state;
    for (int r = 0; r < FE_PR_MAX; r++) {
        assert_non_null(fe_parse_reason_name((enum fe_parse_reason)r));
        assert_non_null(fe_parse_reason_text((enum fe_parse_reason)r));
        for (int q = 0; q < r; q++)
            assert_string_not_equal(fe_parse_reason_name((enum fe_parse_reason)r),
                                    fe_parse_reason_name((enum fe_parse_reason)q));
    }
    assert_string_equal(fe_parse_reason_name(FE_PR_UDP_PORT), "udp_port");
    assert_string_equal(fe_parse_reason_name(FE_PR_MAX), "invalid");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_psn),
        cmocka_unit_test(test_opcodes),
        cmocka_unit_test(test_aeth),
        cmocka_unit_test(test_reason_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
