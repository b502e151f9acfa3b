/* ICRC: known answers from independent sources, fast path vs reference, masking rules. */
#include "wire_test.h"

#include "feroce/err.h"
#include "feroce/icrc.h"
#include "feroce/wire.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "wire/crc_impl.h"

/* Every kernel equals zlib's crc32 on every length 0..3000 (all the folding loops' entry and
 * exit cases, every tail length), every alignment 0..3, chained and from non-zero starting
 * values; whatever kernel the dispatch chose, fe_crc32 too. */
static void test_crc32_backend_matches_zlib(void **state)
{
    (void)state;
    static uint8_t buf[70000];
    uint64_t s = 0x1234;
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)wt_rand(&s);
    for (size_t len = 0; len <= 3000; len++) {
        for (size_t a = 0; a < 4; a++) {
            uint32_t init = a == 0 ? 0 : (uint32_t)wt_rand(&s);
            uint32_t z = (uint32_t)crc32(init, buf + a, (uInt)len);
            assert_int_equal(fe_crc32(init, buf + a, len), z);
            assert_int_equal(fe_crc32_base(init, buf + a, len), z);
            for (int k = 0; k < FE_CRC_KERNELS; k++)
                if (fe_crc32_kernel_usable((enum fe_crc_kernel)k))
                    assert_int_equal(fe_crc32_with((enum fe_crc_kernel)k, init, buf + a, len), z);
        }
    }
    for (size_t len = 3001; len < sizeof buf; len = len * 3 / 2 + 7) {
        uint32_t z = (uint32_t)crc32(0, buf, (uInt)len);
        assert_int_equal(fe_crc32(0, buf, len), z);
        size_t h = len / 3; /* chaining in two pieces gives the same value */
        assert_int_equal(fe_crc32(fe_crc32(0, buf, h), buf + h, len - h), z);
    }
    assert_non_null(strstr(fe_crc32_backend(), fe_crc32_base_name()));
    printf("CRC backend on this machine: %s; ICRC kernel: %s\n", fe_crc32_backend(),
           fe_crc32_kernel_name(fe_crc32_icrc_kernel()));
}

/* Every usable kernel, at random lengths and alignments, plain and with a random head mask,
 * equals zlib over the same (masked) bytes. */
static void test_crc32_kernels_random(void **state)
{
    (void)state;
    static uint8_t buf[20000], masked[20000];
    uint8_t mask[FE_CRC32_MASK_BYTES];
    uint64_t s = 0xc0ffee;
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)wt_rand(&s);
    for (int it = 0; it < 4000; it++) {
        size_t a = wt_rand(&s) % 64;
        size_t len = FE_CRC32_FOLD_MIN + wt_rand(&s) % (sizeof buf - 64 - FE_CRC32_FOLD_MIN);
        uint32_t init = (uint32_t)wt_rand(&s);
        for (size_t i = 0; i < sizeof mask; i++) {
            uint64_t r = wt_rand(&s);
            mask[i] = r % 4 ? 0 : (uint8_t)(r >> 8);
        }
        memcpy(masked, buf + a, len);
        for (size_t i = 0; i < sizeof mask; i++) masked[i] |= mask[i];
        uint32_t z = (uint32_t)crc32(init, buf + a, (uInt)len);
        uint32_t zm = (uint32_t)crc32(init, masked, (uInt)len);
        for (int k = 0; k < FE_CRC_KERNELS; k++) {
            fe_crc32_fold_fn f = fe_crc32_fold_of((enum fe_crc_kernel)k);
            if (!f || !fe_crc32_kernel_usable((enum fe_crc_kernel)k)) continue;
            assert_int_equal(f(init, buf + a, len, NULL), z);
            assert_int_equal(f(init, buf + a, len, mask), zm);
        }
        assert_int_equal(fe_crc32_with(FE_CRC_BASE, init, buf + a, len), z);
    }
}

/* One kernel against zlib over buf[0, len), plain and (from FE_CRC32_FOLD_MIN on) with a random
 * head mask through the kernel's folding function. */
static void check_kernel_at(enum fe_crc_kernel k, const uint8_t *buf, size_t len, uint64_t *s)
{
    uint32_t init = (uint32_t)wt_rand(s);
    assert_int_equal(fe_crc32_with(k, init, buf, len), (uint32_t)crc32(init, buf, (uInt)len));
    fe_crc32_fold_fn f = fe_crc32_fold_of(k);
    if (!f || len < FE_CRC32_FOLD_MIN) return;
    static uint8_t masked[9001];
    uint8_t mask[FE_CRC32_MASK_BYTES];
    for (size_t i = 0; i < sizeof mask; i++) mask[i] = wt_rand(s) % 3 ? 0 : (uint8_t)wt_rand(s);
    memcpy(masked, buf, len);
    for (size_t i = 0; i < sizeof mask; i++) masked[i] |= mask[i];
    assert_int_equal(f(init, buf, len, mask), (uint32_t)crc32(init, masked, (uInt)len));
    const struct fe_crc32_split_fns *h = fe_crc32_split_of(k);
    if (!h) return;
    struct fe_crc32_split sp;
    h->begin(&sp, init, buf, len, mask); /* the same CRC in two halves */
    assert_int_equal(h->end(&sp), (uint32_t)crc32(init, masked, (uInt)len));
}

/* Every kernel usable here, random lengths 0..9000 and alignments 0..63, with the data right
 * after an inaccessible page and right before one: a kernel that reads outside its buffer (the
 * 512-bit kernel's masked first load reaches up to 63 bytes before it) faults here. */
static void test_crc32_kernels_at_page_edges(void **state)
{
    (void)state;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), span = (9000 / pg + 2) * pg;
    uint8_t *m =
        mmap(NULL, span + 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(m, pg, PROT_NONE), 0);
    assert_int_equal(mprotect(m + pg + span, pg, PROT_NONE), 0);
    uint8_t *lo = m + pg, *hi = m + pg + span; /* the readable span */
    uint64_t s = 0x9e37;
    for (size_t i = 0; i < span; i++) lo[i] = (uint8_t)wt_rand(&s);
    for (int it = 0; it < 3000; it++) {
        size_t len = wt_rand(&s) % 9001, a = wt_rand(&s) % 64;
        for (int k = 0; k < FE_CRC_KERNELS; k++) {
            if (!fe_crc32_kernel_usable((enum fe_crc_kernel)k)) continue;
            check_kernel_at((enum fe_crc_kernel)k, lo + a, len, &s);       /* page before */
            check_kernel_at((enum fe_crc_kernel)k, hi - a - len, len, &s); /* page after */
        }
    }
    munmap(m, span + 2 * pg);
}

static void test_seed(void **state)
{
    (void)state;
    static const uint8_t ff[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(FE_ICRC_SEED, (uint32_t)crc32(0, ff, 8));
    assert_int_equal(FE_ICRC_SEED, ~0xDEBB20E3u);
}

/* A CNP captured on a ConnectX-4 Lx (published with scapy's RoCE tests): real hardware ICRC. */
static const char cx4_cnp[] =
    "e41d2dab2bc27cfe90643b32080045c2003c718c400040119161 0a001101 0a001201"
    "000012b700280000 8100ffff40000118000000 00"
    "00000000000000000000000000000000 82fd002a";

static void test_kat_connectx4_cnp(void **state)
{
    (void)state;
    uint8_t f[128];
    size_t n = wt_hex(cx4_cnp, f, sizeof f);
    assert_int_equal(n, 74);
    uint32_t v;
    assert_int_equal(fe_icrc_ip(f + 14, n - 14, &v), 0);
    assert_int_equal(v, 0x2a00fd82u); /* wire bytes 82 fd 00 2a, least significant first */
    assert_int_equal(fe_icrc_verify_ip(f + 14, n - 14), 1);
    struct fe_frame fr;
    enum fe_parse_reason why;
    assert_int_equal(fe_frame_decode(f, n, FE_FRAME_ETH, true, &fr, &why, NULL), 0);
    assert_int_equal(why, FE_PR_OK);
    assert_int_equal(fr.pkt.icrc, FE_ICRC_OK);
    assert_int_equal(fr.pkt.bth.opcode, FE_OP_CNP);
    assert_true(fr.pkt.bth.becn);
    assert_int_equal(fr.pkt.bth.dqpn, 0x000118);
    assert_int_equal(fr.pkt.bth.psn, 0);
    assert_int_equal(fr.pkt.payload_len, 16);
    assert_int_equal(fr.ip4.id, 0x718c);
    assert_int_equal(fr.udp.sport, 0);
}

/* scapy's RoCE regression packet (UC SEND_ONLY, scapy-computed ICRC 78 f3 53 f3), followed by 4
 * bytes of Ethernet padding past the IP length. UC opcodes are not RC: feroce refuses them, but
 * the ICRC over the IP packet must still match. */
static const char scapy_uc[] =
    "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca2"
    "2460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f300000000";

static void test_kat_scapy_uc(void **state)
{
    (void)state;
    uint8_t f[128];
    size_t n = wt_hex(scapy_uc, f, sizeof f);
    assert_int_equal(n, 82);
    uint32_t v;
    assert_int_equal(fe_icrc_ip(f + 14, 64, &v), 0);
    assert_int_equal(v, 0xf353f378u);
    struct fe_frame fr;
    enum fe_parse_reason why;
    assert_int_equal(fe_frame_decode(f, n, FE_FRAME_ETH, true, &fr, &why, NULL), FE_EPARSE);
    assert_int_equal(why, FE_PR_OPCODE);
}

/* RC WRITE_ONLY_IMM built by scapy (IPv4, DSCP 26 ECT(0), FECN set, PSN 0xfffffe, 37 bytes of
 * payload + 3 pad); ICRC from scapy.contrib.roce: 2b ba 1e 64. */
static const char scapy_write_imm[] =
    "b8cef601020302fe000000010800456a00681c46400040118878c0a80a0bc0a80a019dc012b7005400000b30ffff"
    "8000001180fffffe00007f3a123450001234abcd00000025deadbeef000102030405060708090a0b0c0d0e0f1011"
    "12131415161718191a1b1c1d1e1f20212223240000002bba1e64";

static void test_kat_scapy_write_imm(void **state)
{
    (void)state;
    uint8_t f[256];
    size_t n = wt_hex(scapy_write_imm, f, sizeof f);
    struct fe_frame fr;
    enum fe_parse_reason why;
    assert_int_equal(fe_frame_decode(f, n, FE_FRAME_ETH, true, &fr, &why, NULL), 0);
    assert_int_equal(fr.pkt.icrc, FE_ICRC_OK);
    assert_int_equal(fr.icrc_wire, 0x641eba2bu);
    assert_int_equal(fr.pkt.bth.opcode, FE_OP_WRITE_ONLY_IMM);
    assert_int_equal(fr.pkt.bth.padcnt, 3);
    assert_int_equal(fr.pkt.payload_len, 37);
    assert_int_equal(fr.pkt.reth.va, 0x00007f3a12345000ull);
    assert_int_equal(fr.pkt.reth.rkey, 0x1234abcd);
    assert_int_equal(fr.pkt.reth.dma_len, 37);
    assert_int_equal(fr.pkt.imm, 0xdeadbeef);
    assert_int_equal(fr.pkt.ecn, FE_ECN_ECT0);
    assert_int_equal(fr.pkt.dscp, 26);
    assert_true(fr.pkt.bth.fecn);
    assert_true(fr.pkt.bth.ackreq);
    assert_int_equal(fr.pkt.bth.psn, 0xfffffe);

    /* Re-encoding the decoded packet on the same path gives the identical frame. */
    struct fe_path path = {.ipver = 4,
                           .src_ip4 = fr.ip4.src,
                           .dst_ip4 = fr.ip4.dst,
                           .ttl = fr.ip4.ttl,
                           .udp_sport = fr.udp.sport};
    memcpy(path.src_mac, fr.eth.src, 6);
    memcpy(path.dst_mac, fr.eth.dst, 6);
    uint8_t g[256];
    int m = fe_frame_encode(g, sizeof g, FE_FRAME_ETH, &path, fr.ip4.id, &fr.pkt);
    assert_int_equal(m, (int)n);
    assert_memory_equal(f, g, n);
}

/* IPv6 WRITE_MIDDLE, 1024 bytes of payload (i*7+3), traffic class DSCP 26 + ECT(0), flow label
 * 0x12345, built with scapy's IPv6 layer; ICRC computed by a separate Python masking of the IPv6
 * header (scapy.contrib.roce has no IPv6 ICRC): 0xbf22c765. */
static void test_kat_ipv6(void **state)
{
    (void)state;
    static const char hdr[] = "b8cef601020302fe0000000186dd66a1234504181140fd0000fe00000000000000"
                              "0000000011fd0000fe0000000000000000000000019dc012b7041800000700ffff"
                              "0000001100000005";
    uint8_t f[1200];
    size_t n = wt_hex(hdr, f, sizeof f);
    assert_int_equal(n, 74);
    for (int i = 0; i < 1024; i++) f[n++] = (uint8_t)((i * 7 + 3) & 0xff);
    fe_icrc_store(f + n, 0xbf22c765u);
    n += 4;
    struct fe_frame fr;
    enum fe_parse_reason why;
    assert_int_equal(fe_frame_decode(f, n, FE_FRAME_ETH, true, &fr, &why, NULL), 0);
    assert_int_equal(why, FE_PR_OK);
    assert_int_equal(fr.pkt.icrc, FE_ICRC_OK);
    assert_int_equal(fr.ipver, 6);
    assert_int_equal(fr.ip6.flow_label, 0x12345);
    assert_int_equal(fr.pkt.ecn, FE_ECN_ECT0);
    assert_int_equal(fr.pkt.dscp, 26);
    assert_int_equal(fr.pkt.payload_len, 1024);
}

/* Random IPv4/IPv6 packets: fast path == reference; variant fields masked, invariant ones not. */
static void test_fast_equals_reference_and_masking(void **state)
{
    (void)state;
    uint64_t s = 42;
    static uint8_t pkt[FE_MAX_FRAME_LEN], scratch[FE_MAX_FRAME_LEN];
    for (int iter = 0; iter < 2000; iter++) {
        int v6 = iter & 1;
        size_t iphl = v6 ? 40 : 20 + 4 * (wt_rand(&s) % 11); /* IPv4 with options too */
        size_t len = iphl + 8 + 12 + 4 + wt_rand(&s) % 4097;
        for (size_t i = 0; i < len; i++) pkt[i] = (uint8_t)wt_rand(&s);
        pkt[0] = v6 ? (uint8_t)(0x60 | (pkt[0] & 0x0f)) : (uint8_t)(0x40 | iphl / 4);
        uint32_t a, b, c;
        assert_int_equal(fe_icrc_ip(pkt, len, &a), 0);
        assert_int_equal(fe_icrc_ip_ref(pkt, len, scratch, &b), 0);
        assert_int_equal(a, b);
        /* variant fields: any value gives the same ICRC */
        size_t udp = iphl, bth = iphl + 8;
        const size_t *vf;
        static const size_t v4f[] = {1, 8, 10, 11}, v6f[] = {1, 2, 3, 7};
        vf = v6 ? v6f : v4f;
        for (int k = 0; k < 4; k++) pkt[vf[k]] ^= (uint8_t)(1 + wt_rand(&s) % 255);
        if (v6) pkt[0] ^= 0x0f & (uint8_t)(1 + wt_rand(&s) % 15);
        pkt[udp + 6] ^= 0x5a;
        pkt[udp + 7] ^= 0xa5;
        pkt[bth + 4] ^= 0xc3;
        assert_int_equal(fe_icrc_ip(pkt, len, &c), 0);
        assert_int_equal(c, a);
        /* invariant fields: identification / payload length / QPN / last covered byte */
        size_t inv[] = {v6 ? 4u : 4u, bth + 5, len - 5};
        for (size_t k = 0; k < 3; k++) {
            pkt[inv[k]] ^= 0x01;
            assert_int_equal(fe_icrc_ip(pkt, len, &c), 0);
            assert_int_not_equal(c, a);
            pkt[inv[k]] ^= 0x01;
        }
        /* the ICRC field itself is not covered */
        pkt[len - 1] ^= 0xff;
        assert_int_equal(fe_icrc_ip(pkt, len, &c), 0);
        assert_int_equal(c, a);
    }
}

static void test_bth_framing(void **state)
{
    (void)state;
    uint8_t p[64];
    for (int i = 0; i < 64; i++) p[i] = (uint8_t)(i * 13);
    uint8_t m[8 + 60];
    memset(m, 0xff, 8);
    memcpy(m + 8, p, 60);
    m[8 + 4] = 0xff;
    uint32_t v;
    assert_int_equal(fe_icrc_bth(p, 64, &v), 0);
    assert_int_equal(v, (uint32_t)crc32(0, m, sizeof m));
    assert_int_equal(fe_icrc_fill_bth(p, 64), 0);
    assert_int_equal(fe_icrc_verify_bth(p, 64), 1);
    p[20] ^= 1;
    assert_int_equal(fe_icrc_verify_bth(p, 64), 0);
    p[4] ^= 0x80; /* FECN: masked */
    p[20] ^= 1;
    assert_int_equal(fe_icrc_verify_bth(p, 64), 1);
}

/* The BTH framing at every length 16..4300 (the one-pass folding kernels from 256 covered bytes
 * on) equals zlib over eight 0xFF bytes and the packet with BTH byte 4 masked. */
static void test_bth_framing_lengths(void **state)
{
    (void)state;
    static uint8_t p[4300], m[8 + 4300];
    uint64_t s = 0xb7b7;
    for (size_t i = 0; i < sizeof p; i++) p[i] = (uint8_t)wt_rand(&s);
    memset(m, 0xff, 8);
    memcpy(m + 8, p, sizeof p);
    m[8 + 4] = 0xff;
    for (size_t len = 16; len <= sizeof p; len++) {
        uint32_t v;
        assert_int_equal(fe_icrc_bth(p, len, &v), 0);
        assert_int_equal(v, (uint32_t)crc32(0, m, (uInt)(8 + len - 4)));
    }
}

static void test_errors(void **state)
{
    (void)state;
    uint8_t p[128] = {0x45};
    uint32_t v;
    assert_int_equal(fe_icrc_ip(p, 20 + 8 + 12 + 3, &v), FE_EINVAL);
    assert_int_equal(fe_icrc_ip(p, 20 + 8 + 12 + 4, &v), 0);
    p[0] = 0x44; /* IHL 4 */
    assert_int_equal(fe_icrc_ip(p, 100, &v), FE_EINVAL);
    p[0] = 0x55;
    assert_int_equal(fe_icrc_ip(p, 100, &v), FE_EINVAL);
    p[0] = 0x60;
    assert_int_equal(fe_icrc_ip(p, 40 + 8 + 12 + 3, &v), FE_EINVAL);
    assert_int_equal(fe_icrc_ip(p, 0, &v), FE_EINVAL);
    assert_int_equal(fe_icrc_bth(p, 15, &v), FE_EINVAL);
    assert_int_equal(fe_icrc_verify_ip(p, 10), FE_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32_backend_matches_zlib),
        cmocka_unit_test(test_crc32_kernels_random),
        cmocka_unit_test(test_crc32_kernels_at_page_edges),
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_kat_connectx4_cnp),
        cmocka_unit_test(test_kat_scapy_uc),
        cmocka_unit_test(test_kat_scapy_write_imm),
        cmocka_unit_test(test_kat_ipv6),
        cmocka_unit_test(test_fast_equals_reference_and_masking),
        cmocka_unit_test(test_bth_framing),
        cmocka_unit_test(test_bth_framing_lengths),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
