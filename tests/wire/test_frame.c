/* Whole frames: encode/decode for IPv4, IPv6, VLAN and the three framings; every rejection
 * reason reachable from a frame; counters; Ethernet padding; truncation at every length. */
#include "wire_test.h"

#include "feroce/err.h"
#include "feroce/icrc.h"
#include "feroce/wire.h"
#include "wire/bytes.h"

static struct fe_path path4(void)
{
    struct fe_path p = {.src_mac = {0x02, 0xfe, 0, 0, 0, 0x0b},
                        .dst_mac = {0xb8, 0xce, 0xf6, 0x12, 0x34, 0x56},
                        .ipver = 4,
                        .src_ip4 = 0xc0a80a0b,
                        .dst_ip4 = 0xc0a80a01,
                        .udp_sport = 40128 + 256};
    return p;
}

static struct fe_path path6(void)
{
    struct fe_path p = path4();
    p.ipver = 6;
    static const uint8_t a[16] = {0xfd, 0, 0, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b};
    memcpy(p.src_ip6, a, 16);
    memcpy(p.dst_ip6, a, 16);
    p.dst_ip6[15] = 1;
    p.flow_label = 0xabcde;
    p.ttl = 7;
    return p;
}

static struct fe_pkt write_first(const uint8_t *payload, uint32_t len)
{
    struct fe_pkt p = {
        .bth = {.opcode = FE_OP_WRITE_FIRST, .pkey = 0xffff, .dqpn = 0x11, .psn = 0xffffff},
        .reth = {.va = 0x7f0000001000ull, .rkey = 0x2a, .dma_len = 3 * 1024},
        .payload = payload,
        .payload_len = len,
        .ecn = FE_ECN_ECT0,
        .dscp = 26,
        .pcp = 3};
    return p;
}

static void check_same_pkt(const struct fe_pkt *a, const struct fe_pkt *b)
{
    assert_int_equal(a->bth.opcode, b->bth.opcode);
    assert_int_equal(a->bth.dqpn, b->bth.dqpn);
    assert_int_equal(a->bth.psn, b->bth.psn);
    assert_int_equal(a->reth.va, b->reth.va);
    assert_int_equal(a->reth.rkey, b->reth.rkey);
    assert_int_equal(a->reth.dma_len, b->reth.dma_len);
    assert_int_equal(a->payload_len, b->payload_len);
    assert_memory_equal(a->payload, b->payload, a->payload_len);
}

static void round_trip(enum fe_framing fr, const struct fe_path *path, bool vlan)
{
    uint8_t payload[1024];
    for (int i = 0; i < 1024; i++) payload[i] = (uint8_t)(i * 31 + 7);
    struct fe_path p = *path;
    p.vlan = vlan;
    p.vid = 100;
    for (uint32_t len = 0; len <= 1024; len += (len < 8 ? 1 : 203)) {
        struct fe_pkt pk = write_first(payload, len);
        uint8_t buf[FE_MAX_FRAME_LEN];
        int n = fe_frame_encode(buf, sizeof buf, fr, &p, 0x1234, &pk);
        assert_true(n > 0);
        size_t expect_len = fe_pkt_wire_len(&pk);
        if (fr == FE_FRAME_ETH) expect_len += fe_path_overhead_bytes(&p) - 4;
        if (fr == FE_FRAME_IP) expect_len += fe_path_overhead_bytes(&p) - 4 - 14 - (vlan ? 4 : 0);
        assert_int_equal((size_t)n, expect_len);
        struct fe_frame f;
        enum fe_parse_reason why;
        struct fe_parse_stats st = {0};
        assert_int_equal(fe_frame_decode(buf, (size_t)n, fr, true, &f, &why, &st), 0);
        assert_int_equal(why, FE_PR_OK);
        assert_int_equal(st.ok, 1);
        assert_int_equal(f.pkt.icrc, FE_ICRC_OK);
        assert_int_equal(f.icrc_calc, f.icrc_wire);
        check_same_pkt(&pk, &f.pkt);
        if (fr == FE_FRAME_BTH) {
            assert_int_equal(f.ipver, 0);
            assert_int_equal(f.bth_off, 0);
            continue;
        }
        assert_int_equal(f.pkt.ecn, FE_ECN_ECT0);
        assert_int_equal(f.pkt.dscp, 26);
        assert_int_equal(f.ipver, p.ipver);
        assert_int_equal(f.udp.sport, 40384);
        assert_int_equal(f.udp.dport, 4791);
        if (p.ipver == 4) {
            assert_int_equal(f.udp.checksum, 0);
        } else {
            /* RFC 8200: a real checksum; summing pseudo-header + datagram gives all-ones */
            const uint8_t *ip = buf + f.l3_off, *u = buf + f.l4_off;
            uint32_t sum = 17 + f.udp.len;
            for (int i = 8; i < 40; i += 2) sum += fe_be16(ip + i);
            for (size_t i = 0; i + 1 < f.udp.len; i += 2) sum += fe_be16(u + i);
            while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
            assert_int_equal(sum, 0xffff);
            assert_int_not_equal(f.udp.checksum, 0);
        }
        if (p.ipver == 4) {
            assert_int_equal(f.ip4.id, 0x1234);
            assert_int_equal(f.ip4.ttl, 64);
            assert_int_equal(f.ip4.frag, 0x4000);
            assert_int_equal(f.ip4.src, p.src_ip4);
            assert_int_equal(f.ip4.dst, p.dst_ip4);
        } else {
            assert_int_equal(f.ip6.flow_label, 0xabcde);
            assert_int_equal(f.ip6.hop_limit, 7);
            assert_memory_equal(f.ip6.src, p.src_ip6, 16);
            assert_memory_equal(f.ip6.dst, p.dst_ip6, 16);
        }
        if (fr == FE_FRAME_ETH) {
            assert_int_equal(f.eth.has_vlan, vlan);
            assert_int_equal(f.pkt.pcp, vlan ? 3 : 0);
            if (vlan) assert_int_equal(f.eth.vid, 100);
            assert_int_equal(f.l3_off, vlan ? 18 : 14);
            assert_memory_equal(f.eth.src, p.src_mac, 6);
        } else {
            assert_int_equal(f.l3_off, 0);
        }
        assert_int_equal(f.bth_off, f.l4_off + 8);

        /* Every truncation is rejected; bit flips past the headers give a bad ICRC, counted. */
        for (size_t cut = 1; cut <= (size_t)n; cut += 1 + cut / 8) {
            uint8_t *t = test_malloc((size_t)n - cut + 1);
            memcpy(t, buf, (size_t)n - cut);
            enum fe_parse_reason w2;
            assert_int_equal(fe_frame_decode(t, (size_t)n - cut, fr, true, &f, &w2, &st),
                             FE_EPARSE);
            assert_int_not_equal(w2, FE_PR_OK);
            test_free(t);
        }
        uint8_t c[FE_MAX_FRAME_LEN];
        memcpy(c, buf, (size_t)n);
        c[n - 5] ^= 0x10;
        uint64_t before = st.rejected[FE_PR_ICRC];
        assert_int_equal(fe_frame_decode(c, (size_t)n, fr, true, &f, &why, &st), 0);
        assert_int_equal(why, FE_PR_ICRC);
        assert_int_equal(f.pkt.icrc, FE_ICRC_BAD);
        assert_int_equal(st.rejected[FE_PR_ICRC], before + 1);
        /* without verification the same frame is accepted, ICRC unchecked */
        assert_int_equal(fe_frame_decode(c, (size_t)n, fr, false, &f, &why, NULL), 0);
        assert_int_equal(f.pkt.icrc, FE_ICRC_UNCHECKED);
        assert_int_equal(why, FE_PR_OK);
    }
}

static void test_round_trips(void **state)
{
    (void)state;
    struct fe_path p4 = path4(), p6 = path6();
    for (int v = 0; v < 2; v++) {
        round_trip(FE_FRAME_ETH, &p4, v);
        round_trip(FE_FRAME_ETH, &p6, v);
    }
    round_trip(FE_FRAME_IP, &p4, false);
    round_trip(FE_FRAME_IP, &p6, false);
    round_trip(FE_FRAME_BTH, &p4, false);
}

static void test_overhead_and_encode_errors(void **state)
{
    (void)state;
    struct fe_path p = path4();
    assert_int_equal(fe_path_overhead_bytes(&p), 14 + 20 + 8 + 4);
    p.vlan = true;
    assert_int_equal(fe_path_overhead_bytes(&p), 18 + 20 + 8 + 4);
    p = path6();
    assert_int_equal(fe_path_overhead_bytes(&p), 14 + 40 + 8 + 4);
    assert_int_equal(fe_path_overhead_bytes(NULL), 46);

    uint8_t buf[FE_MAX_FRAME_LEN];
    uint8_t pl[100] = {0};
    struct fe_pkt pk = write_first(pl, 100);
    int n = fe_frame_encode(buf, sizeof buf, FE_FRAME_ETH, &p, 0, &pk);
    assert_int_equal(n, 14 + 40 + 8 + 28 + 100 + 4);
    for (size_t cap = 0; cap < (size_t)n; cap++)
        assert_int_equal(fe_frame_encode(buf, cap, FE_FRAME_ETH, &p, 0, &pk), FE_ENOSPC);
    p.ipver = 5;
    assert_int_equal(fe_frame_encode(buf, sizeof buf, FE_FRAME_ETH, &p, 0, &pk), FE_EINVAL);
    assert_int_equal(fe_frame_encode(buf, sizeof buf, FE_FRAME_IP, NULL, 0, &pk), FE_EINVAL);
    assert_int_equal(fe_frame_encode(buf, sizeof buf, (enum fe_framing)7, &p, 0, &pk), FE_EINVAL);
    /* BTH framing needs no path */
    assert_int_equal(fe_frame_encode(buf, sizeof buf, FE_FRAME_BTH, NULL, 0, &pk), 28 + 100 + 4);
    pk.bth.opcode = 0x15;
    assert_int_equal(fe_frame_encode(buf, sizeof buf, FE_FRAME_BTH, NULL, 0, &pk), FE_EINVAL);
    /* UDP length would not fit 16 bits */
    static uint8_t big[70000];
    struct fe_pkt bp = write_first(big, 65536);
    p = path4();
    assert_int_equal(fe_frame_encode(big, sizeof big, FE_FRAME_ETH, &p, 0, &bp), FE_EINVAL);
}

/* A valid CNP frame; tests mutate it. Returns its length. */
static size_t cnp_frame(uint8_t *buf, bool v6)
{
    struct fe_path p = v6 ? path6() : path4();
    struct fe_pkt c = {.bth = {.opcode = FE_OP_CNP, .pkey = 0xffff, .becn = true, .dqpn = 0x100},
                       .payload_len = 16,
                       .dscp = 48,
                       .ecn = FE_ECN_NOT_ECT};
    int n = fe_frame_encode(buf, FE_MAX_FRAME_LEN, FE_FRAME_ETH, &p, 9, &c);
    assert_int_equal(n, 14 + (v6 ? 40 : 20) + 8 + 12 + 16 + 4);
    return (size_t)n;
}

/* Fixes the IPv4 checksum and the ICRC after a mutation. */
static void refresh(uint8_t *buf, size_t n)
{
    if (buf[14] >> 4 == 4) {
        size_t ihl = (size_t)(buf[14] & 15) * 4;
        buf[24] = buf[25] = 0;
        fe_put16(buf + 24, fe_ipv4_checksum(buf + 14, ihl));
    }
    fe_icrc_fill_ip(buf + 14, n - 14);
}

/* A rejected frame is zeroed but for its framing (wire.h): nothing half-parsed is left. */
static void expect_cleared(const struct fe_frame *f)
{
    assert_int_equal(f->framing, FE_FRAME_ETH);
    assert_int_equal(f->eth.ethertype, 0);
    assert_int_equal(f->eth.pcp, 0);
    assert_int_equal(f->ipver, 0);
    assert_int_equal(f->ip4.total_len, 0);
    assert_int_equal(f->ip6.payload_len, 0);
    assert_int_equal(f->udp.len, 0);
    assert_int_equal(f->l3_off, 0);
    assert_int_equal(f->l4_off, 0);
    assert_int_equal(f->bth_off, 0);
    assert_int_equal(f->icrc_wire, 0);
    assert_int_equal(f->icrc_calc, 0);
    assert_int_equal(f->pkt.bth.opcode, 0);
    assert_int_equal(f->pkt.bth.psn, 0);
    assert_int_equal(f->pkt.payload_len, 0);
    assert_null(f->pkt.payload);
}

static void expect_frame(const uint8_t *buf, size_t n, enum fe_parse_reason r)
{
    struct fe_frame f;
    memset(&f, 0xa5, sizeof f); /* what a caller's reused frame may hold */
    enum fe_parse_reason why = FE_PR_MAX;
    struct fe_parse_stats st = {0};
    int rc = fe_frame_decode(buf, n, FE_FRAME_ETH, true, &f, &why, &st);
    assert_int_equal(why, r);
    if (r == FE_PR_OK || r == FE_PR_ICRC) {
        assert_int_equal(rc, 0);
        assert_int_equal(st.ok, r == FE_PR_OK);
    } else {
        assert_int_equal(rc, FE_EPARSE);
        assert_int_equal(st.ok, 0);
        expect_cleared(&f);
    }
    if (r != FE_PR_OK) assert_int_equal(st.rejected[r], 1);
}

static void test_every_frame_reason(void **state)
{
    (void)state;
    uint8_t b[FE_MAX_FRAME_LEN + 64];
    size_t n = cnp_frame(b, false);
    expect_frame(b, n, FE_PR_OK);
    {
        struct fe_frame f;
        fe_frame_decode(b, n, FE_FRAME_ETH, true, &f, NULL, NULL);
        assert_int_equal(f.pkt.bth.opcode, FE_OP_CNP);
        assert_int_equal(f.pkt.dscp, 48);
        assert_int_equal(f.pkt.ecn, 0);
        assert_true(f.pkt.bth.becn);
        assert_int_equal(f.pkt.payload_len, 16);
    }
    /* Ethernet padding after the IP packet is ignored */
    memset(b + n, 0, 6);
    expect_frame(b, n + 6, FE_PR_OK);
    expect_frame(b, 13, FE_PR_ETH_SHORT);
    b[12] = 0x08, b[13] = 0x06; /* ARP */
    expect_frame(b, n, FE_PR_ETH_TYPE);
    b[12] = 0x81, b[13] = 0x00; /* VLAN tag cut short */
    expect_frame(b, 17, FE_PR_VLAN_SHORT);
    n = cnp_frame(b, false);
    expect_frame(b, 14, FE_PR_IP_SHORT);
    expect_frame(b, 33, FE_PR_IP_SHORT);
    b[14] = 0x65; /* IPv6 header behind the IPv4 EtherType */
    expect_frame(b, n, FE_PR_IP_VERSION);
    b[14] = 0x44;
    expect_frame(b, n, FE_PR_IP_IHL);
    n = cnp_frame(b, false);
    expect_frame(b, n - 1, FE_PR_IP_LEN);
    b[20] = 0x20; /* MF */
    refresh(b, n);
    expect_frame(b, n, FE_PR_IP_FRAGMENT);
    n = cnp_frame(b, false);
    b[25] ^= 1;
    expect_frame(b, n, FE_PR_IP_CHECKSUM);
    n = cnp_frame(b, false);
    b[23] = 6; /* TCP */
    refresh(b, n);
    expect_frame(b, n, FE_PR_IP_PROTO);
    /* IPv4 total length leaves less than a UDP header */
    n = cnp_frame(b, false);
    fe_put16(b + 16, 20 + 7);
    refresh(b, n);
    expect_frame(b, n, FE_PR_UDP_SHORT);
    n = cnp_frame(b, false);
    fe_put16(b + 38, (uint16_t)(8 + 32 - 4)); /* UDP length shorter than the IP payload */
    expect_frame(b, n, FE_PR_UDP_LEN);
    n = cnp_frame(b, false);
    fe_put16(b + 36, 4792);
    expect_frame(b, n, FE_PR_UDP_PORT);
    /* IP/UDP lengths that leave less than a BTH */
    n = cnp_frame(b, false);
    fe_put16(b + 16, 20 + 8 + 11);
    fe_put16(b + 38, 8 + 11);
    refresh(b, n);
    expect_frame(b, n, FE_PR_BTH_SHORT);
    n = cnp_frame(b, false);
    b[43] = 0x01; /* TVer */
    refresh(b, n);
    expect_frame(b, n, FE_PR_BTH_TVER);
    n = cnp_frame(b, false);
    b[42] = 0x24; /* UC SEND_ONLY */
    refresh(b, n);
    expect_frame(b, n, FE_PR_OPCODE);
    n = cnp_frame(b, false);
    b[42] = FE_OP_ACK;
    fe_put16(b + 16, 20 + 8 + 12 + 3);
    fe_put16(b + 38, 8 + 12 + 3);
    refresh(b, n);
    expect_frame(b, n, FE_PR_EXT_SHORT);
    n = cnp_frame(b, false);
    b[42] = FE_OP_ACK; /* 16 bytes after the BTH: AETH + 12 bytes of payload */
    refresh(b, n);
    expect_frame(b, n, FE_PR_PAYLOAD);
    n = cnp_frame(b, false);
    b[42] = FE_OP_WRITE_MIDDLE;
    b[43] = 0x10; /* pad 1 on 16 bytes: payload 15 + 1 pad: fine */
    refresh(b, n);
    expect_frame(b, n, FE_PR_OK);
    n = cnp_frame(b, false);
    b[42] = FE_OP_ACK;
    b[43] = 0x10;
    fe_put16(b + 16, 20 + 8 + 12 + 4 + 4);
    fe_put16(b + 38, 8 + 12 + 4 + 4);
    refresh(b, 14 + 20 + 8 + 12 + 4 + 4);
    expect_frame(b, n, FE_PR_PAD);
    n = cnp_frame(b, false);
    fe_put16(b + 16, 20 + 8 + 12 + 3);
    fe_put16(b + 38, 8 + 12 + 3);
    refresh(b, n);
    expect_frame(b, n, FE_PR_ICRC_SHORT);
    n = cnp_frame(b, false);
    b[60] = 1; /* CNP reserved bytes are covered by the ICRC */
    expect_frame(b, n, FE_PR_ICRC);
    n = cnp_frame(b, false);
    fe_put16(b + 16, 20 + 8 + 12 + 12 + 4);
    fe_put16(b + 38, 8 + 12 + 12 + 4);
    refresh(b, n);
    expect_frame(b, n, FE_PR_CNP_LEN);

    /* IPv6: next header, payload length */
    n = cnp_frame(b, true);
    expect_frame(b, n, FE_PR_OK);
    b[20] = 0; /* hop-by-hop extension header */
    expect_frame(b, n, FE_PR_IP_PROTO);
    n = cnp_frame(b, true);
    b[14] = 0x45; /* IPv4 header behind the IPv6 EtherType */
    expect_frame(b, n, FE_PR_IP_VERSION);
    n = cnp_frame(b, true);
    expect_frame(b, n - 1, FE_PR_IP_LEN);
    fe_put16(b + 18, 7);
    expect_frame(b, n, FE_PR_UDP_SHORT);
    /* IP framing with a garbage version nibble */
    uint8_t g[64] = {0x15};
    struct fe_frame f;
    enum fe_parse_reason why;
    assert_int_equal(fe_frame_decode(g, sizeof g, FE_FRAME_IP, true, &f, &why, NULL), FE_EPARSE);
    assert_int_equal(why, FE_PR_IP_VERSION);
    assert_int_equal(fe_frame_decode(g, 0, FE_FRAME_IP, true, &f, &why, NULL), FE_EPARSE);
    assert_int_equal(why, FE_PR_IP_SHORT);
    assert_int_equal(fe_frame_decode(g, 11, FE_FRAME_BTH, true, &f, &why, NULL), FE_EPARSE);
    assert_int_equal(why, FE_PR_BTH_SHORT);
}

/* A frame whose IPv4 header carries options: decoded, ICRC over the options. */
static void test_ipv4_options(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = cnp_frame(b, false);
    memmove(b + 14 + 24, b + 14 + 20, n - 34);
    b[14] = 0x46;
    memcpy(b + 34, "\x01\x01\x01\x00", 4); /* NOP NOP NOP EOL */
    n += 4;
    fe_put16(b + 16, (uint16_t)(n - 14));
    refresh(b, n);
    struct fe_frame f;
    enum fe_parse_reason why;
    assert_int_equal(fe_frame_decode(b, n, FE_FRAME_ETH, true, &f, &why, NULL), 0);
    assert_int_equal(why, FE_PR_OK);
    assert_int_equal(f.ip4.ihl, 6);
    assert_int_equal(f.l4_off, 38);
    assert_int_equal(f.pkt.icrc, FE_ICRC_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_overhead_and_encode_errors),
        cmocka_unit_test(test_every_frame_reason),
        cmocka_unit_test(test_ipv4_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
