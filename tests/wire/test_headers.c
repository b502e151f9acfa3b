/* Single-header codecs: round trips, every length boundary, malformed input rejected. */
#include "wire_test.h"

#include "feroce/wire.h"

static void test_eth(void **state)
{
    (void)state;
    struct fe_eth h = {.dst = {1, 2, 3, 4, 5, 6},
                       .src = {7, 8, 9, 10, 11, 12},
                       .ethertype = FE_ETHERTYPE_IPV4},
                  g;
    uint8_t b[32];
    enum fe_parse_reason why;
    assert_int_equal(fe_eth_write(b, 13, &h), 0);
    assert_int_equal(fe_eth_write(b, 14, &h), 14);
    assert_int_equal(fe_eth_parse(b, 14, &g, &why), 14);
    assert_int_equal(why, FE_PR_OK);
    assert_memory_equal(g.dst, h.dst, 6);
    assert_memory_equal(g.src, h.src, 6);
    assert_int_equal(g.ethertype, FE_ETHERTYPE_IPV4);
    assert_false(g.has_vlan);
    assert_int_equal(fe_eth_parse(b, 13, &g, &why), 0);
    assert_int_equal(why, FE_PR_ETH_SHORT);

    h.has_vlan = true;
    h.pcp = 6;
    h.dei = true;
    h.vid = 4095;
    h.ethertype = FE_ETHERTYPE_IPV6;
    assert_int_equal(fe_eth_write(b, 17, &h), 0);
    assert_int_equal(fe_eth_write(b, 18, &h), 18);
    assert_int_equal(b[12], 0x81);
    assert_int_equal(b[13], 0x00);
    assert_int_equal(b[14], 0xdf); /* PCP 6, DEI 1, VID high nibble f */
    for (size_t l = 14; l < 18; l++) {
        assert_int_equal(fe_eth_parse(b, l, &g, &why), 0);
        assert_int_equal(why, FE_PR_VLAN_SHORT);
    }
    assert_int_equal(fe_eth_parse(b, 18, &g, &why), 18);
    assert_true(g.has_vlan);
    assert_int_equal(g.pcp, 6);
    assert_true(g.dei);
    assert_int_equal(g.vid, 4095);
    assert_int_equal(g.ethertype, FE_ETHERTYPE_IPV6);
}

static void test_ipv4(void **state)
{
    (void)state;
    struct fe_ipv4 h = {.dscp = 48,
                        .ecn = FE_ECN_CE,
                        .total_len = 60,
                        .id = 0xbeef,
                        .frag = 0x4000,
                        .ttl = 3,
                        .protocol = 17,
                        .src = 0x0a000001,
                        .dst = 0xc0a80a01},
                   g;
    uint8_t b[64] = {0};
    enum fe_parse_reason why;
    assert_int_equal(fe_ipv4_write(b, 19, &h), 0);
    assert_int_equal(fe_ipv4_write(b, 20, &h), 20);
    assert_int_equal(fe_ipv4_checksum(b, 20), 0); /* a filled checksum sums to zero */
    assert_int_equal(fe_ipv4_parse(b, 60, &g, &why), 20);
    assert_int_equal(why, FE_PR_OK);
    assert_int_equal(g.ihl, 5);
    assert_int_equal(g.dscp, 48);
    assert_int_equal(g.ecn, FE_ECN_CE);
    assert_int_equal(g.total_len, 60);
    assert_int_equal(g.id, 0xbeef);
    assert_int_equal(g.frag, 0x4000);
    assert_int_equal(g.ttl, 3);
    assert_int_equal(g.protocol, 17);
    assert_int_equal(g.src, 0x0a000001);
    assert_int_equal(g.dst, 0xc0a80a01);
    assert_int_equal(g.checksum, (b[10] << 8) | b[11]);

    /* RFC 1071 example bytes from a well-known header: 45 00 00 73 00 00 40 00 40 11 .. c0 a8 00
     * 01 c0 a8 00 c7 has checksum b8 61. */
    uint8_t k[20];
    size_t kn = wt_hex("4500007300004000401100 00c0a80001c0a800c7", k, sizeof k);
    assert_int_equal(kn, 20);
    assert_int_equal(fe_ipv4_checksum(k, 20), 0xb861);
    assert_int_equal(fe_ipv4_checksum((const uint8_t *)"\x01", 1), 0xfeff); /* odd length */

#define EXPECT_REJECT(len, reason)                                                                 \
    do {                                                                                           \
        assert_int_equal(fe_ipv4_parse(b, (len), &g, &why), 0);                                    \
        assert_int_equal(why, (reason));                                                           \
    } while (0)
    EXPECT_REJECT(19, FE_PR_IP_SHORT);
    EXPECT_REJECT(59, FE_PR_IP_LEN); /* total length 60 > 59 bytes */
    uint8_t save[20];
    memcpy(save, b, 20);
    b[0] = 0x65;
    EXPECT_REJECT(60, FE_PR_IP_VERSION);
    b[0] = 0x44;
    EXPECT_REJECT(60, FE_PR_IP_IHL);
    b[0] = 0x46; /* IHL 6: 24 bytes, checksum now wrong too, but length first */
    EXPECT_REJECT(23, FE_PR_IP_SHORT);
    memcpy(b, save, 20);
    b[3] = 19; /* total length below the header */
    EXPECT_REJECT(60, FE_PR_IP_LEN);
    memcpy(b, save, 20);
    b[6] = 0x20; /* MF */
    EXPECT_REJECT(60, FE_PR_IP_FRAGMENT);
    b[6] = 0x40;
    b[7] = 0x01; /* DF + offset 1 */
    EXPECT_REJECT(60, FE_PR_IP_FRAGMENT);
    memcpy(b, save, 20);
    b[11] ^= 1;
    EXPECT_REJECT(60, FE_PR_IP_CHECKSUM);
    memcpy(b, save, 20);
    b[12] ^= 1;
    EXPECT_REJECT(60, FE_PR_IP_CHECKSUM);
#undef EXPECT_REJECT

    /* IPv4 with options (IHL 6) parses and returns 24. */
    uint8_t o[32] = {0x46, 0, 0, 28, 0,  0, 0x40, 0, 64, 17, 0, 0,
                     10,   0, 0, 1,  10, 0, 0,    2, 1,  1,  1, 0};
    uint16_t cs = fe_ipv4_checksum(o, 24);
    o[10] = (uint8_t)(cs >> 8);
    o[11] = (uint8_t)cs;
    assert_int_equal(fe_ipv4_parse(o, 28, &g, &why), 24);
    assert_int_equal(g.ihl, 6);
}

static void test_ipv6(void **state)
{
    (void)state;
    struct fe_ipv6 h = {.dscp = 26,
                        .ecn = FE_ECN_ECT0,
                        .flow_label = 0xfedcb,
                        .payload_len = 20,
                        .next_header = 17,
                        .hop_limit = 255},
                   g;
    for (int i = 0; i < 16; i++) {
        h.src[i] = (uint8_t)i;
        h.dst[i] = (uint8_t)(0xf0 | i);
    }
    uint8_t b[64];
    enum fe_parse_reason why;
    assert_int_equal(fe_ipv6_write(b, 39, &h), 0);
    assert_int_equal(fe_ipv6_write(b, 40, &h), 40);
    assert_int_equal(b[0], 0x66); /* version 6, TC high nibble 0x6 (DSCP 26 = 0x68 >> 4) */
    assert_int_equal(fe_ipv6_parse(b, 60, &g, &why), 40);
    assert_int_equal(why, FE_PR_OK);
    assert_int_equal(g.dscp, 26);
    assert_int_equal(g.ecn, FE_ECN_ECT0);
    assert_int_equal(g.flow_label, 0xfedcb);
    assert_int_equal(g.payload_len, 20);
    assert_int_equal(g.next_header, 17);
    assert_int_equal(g.hop_limit, 255);
    assert_memory_equal(g.src, h.src, 16);
    assert_memory_equal(g.dst, h.dst, 16);
    assert_int_equal(fe_ipv6_parse(b, 39, &g, &why), 0);
    assert_int_equal(why, FE_PR_IP_SHORT);
    assert_int_equal(fe_ipv6_parse(b, 59, &g, &why), 0);
    assert_int_equal(why, FE_PR_IP_LEN);
    b[0] = 0x46;
    assert_int_equal(fe_ipv6_parse(b, 60, &g, &why), 0);
    assert_int_equal(why, FE_PR_IP_VERSION);
    b[0] = 0x66;
    b[4] = b[5] = 0; /* jumbogram marker */
    assert_int_equal(fe_ipv6_parse(b, 60, &g, &why), 0);
    assert_int_equal(why, FE_PR_IP_LEN);
}

static void test_udp(void **state)
{
    (void)state;
    struct fe_udp h = {.sport = 40384, .dport = 4791, .len = 20, .checksum = 0}, g;
    uint8_t b[32];
    enum fe_parse_reason why;
    assert_int_equal(fe_udp_write(b, 7, &h), 0);
    assert_int_equal(fe_udp_write(b, 8, &h), 8);
    assert_int_equal(fe_udp_parse(b, 20, &g, &why), 8);
    assert_int_equal(g.sport, 40384);
    assert_int_equal(g.dport, 4791);
    assert_int_equal(g.len, 20);
    assert_int_equal(fe_udp_parse(b, 7, &g, &why), 0);
    assert_int_equal(why, FE_PR_UDP_SHORT);
    assert_int_equal(fe_udp_parse(b, 19, &g, &why), 0);
    assert_int_equal(why, FE_PR_UDP_LEN);
    h.len = 7;
    fe_udp_write(b, 8, &h);
    assert_int_equal(fe_udp_parse(b, 20, &g, &why), 0);
    assert_int_equal(why, FE_PR_UDP_LEN);
}

static void test_bth(void **state)
{
    (void)state;
    struct fe_bth h = {.opcode = FE_OP_WRITE_FIRST,
                       .se = true,
                       .migreq = true,
                       .padcnt = 3,
                       .tver = 0,
                       .pkey = 0x8001,
                       .fecn = true,
                       .becn = false,
                       .resv6 = 0x15,
                       .dqpn = 0xabcdef,
                       .ackreq = true,
                       .resv7 = 0x55,
                       .psn = 0xfffffe},
                  g;
    uint8_t b[16];
    enum fe_parse_reason why;
    assert_int_equal(fe_bth_write(b, 11, &h), 0);
    assert_int_equal(fe_bth_write(b, 12, &h), 12);
    uint8_t want[12];
    wt_hex("06 f0 8001 95 abcdef d5 fffffe", want, 12);
    assert_memory_equal(b, want, 12);
    assert_int_equal(fe_bth_parse(b, 12, &g, &why), 12);
    assert_int_equal(why, FE_PR_OK);
    assert_memory_equal(&g.opcode, &h.opcode, 1);
    assert_true(g.se && g.migreq && g.fecn && !g.becn && g.ackreq);
    assert_int_equal(g.padcnt, 3);
    assert_int_equal(g.pkey, 0x8001);
    assert_int_equal(g.resv6, 0x15);
    assert_int_equal(g.dqpn, 0xabcdef);
    assert_int_equal(g.resv7, 0x55);
    assert_int_equal(g.psn, 0xfffffe);
    /* oversize fields are masked on write */
    h.dqpn = 0x1abcdef;
    h.psn = 0x1000001;
    fe_bth_write(b, 12, &h);
    fe_bth_parse(b, 12, &g, &why);
    assert_int_equal(g.dqpn, 0xabcdef);
    assert_int_equal(g.psn, 1);
    assert_int_equal(fe_bth_parse(b, 11, &g, &why), 0);
    assert_int_equal(why, FE_PR_BTH_SHORT);
    b[1] |= 1;
    assert_int_equal(fe_bth_parse(b, 12, &g, &why), 0);
    assert_int_equal(why, FE_PR_BTH_TVER);
}

static void test_reth_aeth(void **state)
{
    (void)state;
    struct fe_reth r = {.va = 0x0123456789abcdefull, .rkey = 0xcafef00d, .dma_len = 0xffffffff}, rg;
    struct fe_aeth a = {.syndrome = 0x60, .msn = 0x123456}, ag;
    uint8_t b[16];
    enum fe_parse_reason why;
    assert_int_equal(fe_reth_write(b, 15, &r), 0);
    assert_int_equal(fe_reth_write(b, 16, &r), 16);
    assert_int_equal(b[0], 0x01);
    assert_int_equal(b[15], 0xff);
    assert_int_equal(fe_reth_parse(b, 16, &rg, &why), 16);
    assert_int_equal(rg.va, r.va);
    assert_int_equal(rg.rkey, r.rkey);
    assert_int_equal(rg.dma_len, r.dma_len);
    assert_int_equal(fe_reth_parse(b, 15, &rg, &why), 0);
    assert_int_equal(why, FE_PR_EXT_SHORT);
    assert_int_equal(fe_aeth_write(b, 3, &a), 0);
    assert_int_equal(fe_aeth_write(b, 4, &a), 4);
    assert_int_equal(fe_aeth_parse(b, 4, &ag, &why), 4);
    assert_int_equal(ag.syndrome, 0x60);
    assert_int_equal(ag.msn, 0x123456);
    assert_int_equal(fe_aeth_parse(b, 3, &ag, &why), 0);
    assert_int_equal(why, FE_PR_EXT_SHORT);
}

/* Parsers are given only `len` bytes: random input of every length never makes them read
 * further (ASan in the sanitizer build checks the heap copy's bounds). */
static void test_no_overread(void **state)
{
    (void)state;
    uint64_t s = 7;
    for (size_t len = 0; len <= 64; len++) {
        for (int k = 0; k < 50; k++) {
            uint8_t *p = test_malloc(len ? len : 1);
            for (size_t i = 0; i < len; i++) p[i] = (uint8_t)wt_rand(&s);
            if (len) p[0] = (uint8_t)((k & 1 ? 0x45 : 0x60) | (p[0] & 0x0f & (k & 2 ? 0xf : 0)));
            enum fe_parse_reason why;
            struct fe_eth e;
            struct fe_ipv4 i4;
            struct fe_ipv6 i6;
            struct fe_udp u;
            struct fe_bth bt;
            struct fe_reth r;
            struct fe_aeth a;
            assert_true(fe_eth_parse(p, len, &e, &why) <= len);
            assert_true(fe_ipv4_parse(p, len, &i4, &why) <= len);
            assert_true(fe_ipv6_parse(p, len, &i6, &why) <= len);
            assert_true(fe_udp_parse(p, len, &u, &why) <= len);
            assert_true(fe_bth_parse(p, len, &bt, &why) <= len);
            assert_true(fe_reth_parse(p, len, &r, &why) <= len);
            assert_true(fe_aeth_parse(p, len, &a, &why) <= len);
            test_free(p);
        }
    }
}

/* The RFC 1071 sum, 16-bit big-endian word by word, against fe_ipv4_checksum on random headers
 * of every length 0..69 (odd lengths, all-ones words, carries). */
static uint16_t checksum_ref(const uint8_t *p, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i + 1 < n; i += 2) s += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1) s += (uint32_t)p[n - 1] << 8;
    while (s >> 16) s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

static void test_ipv4_checksum_ref(void **state)
{
    (void)state;
    uint8_t b[70];
    uint64_t r = 0x5eed;
    for (int it = 0; it < 20000; it++) {
        size_t n = (size_t)it % sizeof b;
        for (size_t i = 0; i < n; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            b[i] = it % 5 == 0 ? 0xff : (uint8_t)(r >> 33);
        }
        assert_int_equal(fe_ipv4_checksum(b, n), checksum_ref(b, n));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eth),
        cmocka_unit_test(test_ipv4),
        cmocka_unit_test(test_ipv4_checksum_ref),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_udp),
        cmocka_unit_test(test_bth),
        cmocka_unit_test(test_reth_aeth),
        cmocka_unit_test(test_no_overread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
