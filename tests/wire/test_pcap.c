/* pcap writer/reader: round trip of frames and nanosecond timestamps, link types, errors. */
#include "wire_test.h"

#include "feroce/err.h"
#include "feroce/pcap.h"
#include "feroce/wire.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/feroce-test-pcap-XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_round_trip(void **state)
{
    (void)state;
    for (int fr = FE_FRAME_ETH; fr <= FE_FRAME_IP; fr++) {
        char path[256];
        snprintf(path, sizeof path, "%s/rt%d.pcap", dir, fr);
        struct fe_pcap_writer *w;
        assert_int_equal(fe_pcap_writer_open(&w, path, (enum fe_framing)fr, NULL, 0), 0);
        static uint8_t frames[50][FE_MAX_FRAME_LEN];
        size_t lens[50];
        uint64_t ts[50];
        uint64_t s = 3, t = 1717200000123456789ull;
        for (int i = 0; i < 50; i++) {
            lens[i] = i == 0 ? 0 : (size_t)(wt_rand(&s) % FE_MAX_FRAME_LEN);
            for (size_t k = 0; k < lens[i]; k++) frames[i][k] = (uint8_t)wt_rand(&s);
            ts[i] = t;
            t += 1 + wt_rand(&s) % 5000; /* nanosecond steps survive */
            assert_int_equal(fe_pcap_write(w, ts[i], frames[i], lens[i]), 0);
        }
        assert_int_equal(fe_pcap_writer_close(w), 0);

        struct fe_pcap_reader *r;
        assert_int_equal(fe_pcap_reader_open(&r, path, NULL, 0), 0);
        assert_int_equal(fe_pcap_reader_framing(r), fr);
        assert_int_equal(fe_pcap_reader_linktype(r), fr == FE_FRAME_ETH ? DLT_EN10MB : DLT_RAW);
        struct fe_pcap_rec rec;
        for (int i = 0; i < 50; i++) {
            assert_int_equal(fe_pcap_read(r, &rec), 1);
            assert_int_equal(rec.ts_ns, ts[i]);
            assert_int_equal(rec.len, lens[i]);
            assert_int_equal(rec.orig_len, lens[i]);
            if (lens[i]) assert_memory_equal(rec.data, frames[i], lens[i]);
        }
        assert_int_equal(fe_pcap_read(r, &rec), 0);
        assert_int_equal(fe_pcap_read(r, &rec), 0);
        fe_pcap_reader_close(r);
    }
}

/* Frames written by fe_frame_encode come back and decode with a good ICRC. */
static void test_frames_through_pcap(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/frames.pcap", dir);
    struct fe_pcap_writer *w;
    assert_int_equal(fe_pcap_writer_open(&w, path, FE_FRAME_ETH, NULL, 0), 0);
    struct fe_path p = {.ipver = 4, .src_ip4 = 1, .dst_ip4 = 2, .udp_sport = 50000};
    uint8_t pl[300];
    memset(pl, 0x5a, sizeof pl);
    uint8_t buf[FE_MAX_FRAME_LEN];
    for (uint32_t i = 0; i < 10; i++) {
        struct fe_pkt k = {.bth = {.opcode = FE_OP_SEND_ONLY, .dqpn = 0x11, .psn = i},
                           .payload = pl,
                           .payload_len = 30 * i};
        p.ipver = (uint8_t)(i & 1 ? 6 : 4);
        int n = fe_frame_encode(buf, sizeof buf, FE_FRAME_ETH, &p, (uint16_t)i, &k);
        assert_true(n > 0);
        assert_int_equal(fe_pcap_write(w, 1000 * i, buf, (size_t)n), 0);
    }
    assert_int_equal(fe_pcap_writer_close(w), 0);
    struct fe_pcap_reader *r;
    assert_int_equal(fe_pcap_reader_open(&r, path, NULL, 0), 0);
    struct fe_pcap_rec rec;
    uint32_t i = 0;
    while (fe_pcap_read(r, &rec) == 1) {
        struct fe_frame f;
        enum fe_parse_reason why;
        assert_int_equal(fe_frame_decode(rec.data, rec.len, FE_FRAME_ETH, true, &f, &why, NULL), 0);
        assert_int_equal(f.pkt.icrc, FE_ICRC_OK);
        assert_int_equal(f.pkt.bth.psn, i);
        assert_int_equal(f.pkt.payload_len, 30 * i);
        assert_int_equal(rec.ts_ns, 1000 * i);
        i++;
    }
    assert_int_equal(i, 10);
    fe_pcap_reader_close(r);
}

/* A Linux cooked (SLL) capture, as `tcpdump -i any` writes: the 16-byte header is skipped. */
static void test_cooked_and_errors(void **state)
{
    (void)state;
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/sll.pcap", dir);
    pcap_t *p = pcap_open_dead(DLT_LINUX_SLL, 65535);
    pcap_dumper_t *d = pcap_dump_open(p, path);
    assert_non_null(d);
    uint8_t rec[16 + 64] = {0};
    rec[14] = 0x08; /* protocol IPv4 */
    rec[16] = 0x45;
    struct pcap_pkthdr h = {
        .ts = {.tv_sec = 5, .tv_usec = 7}, .caplen = sizeof rec, .len = sizeof rec + 100};
    pcap_dump((u_char *)d, &h, rec);
    h.caplen = 10; /* shorter than the cooked header */
    pcap_dump((u_char *)d, &h, rec);
    pcap_dump_close(d);
    pcap_close(p);
    struct fe_pcap_reader *r;
    assert_int_equal(fe_pcap_reader_open(&r, path, err, sizeof err), 0);
    assert_int_equal(fe_pcap_reader_framing(r), FE_FRAME_IP);
    struct fe_pcap_rec x;
    assert_int_equal(fe_pcap_read(r, &x), 1);
    assert_int_equal(x.len, 64);
    assert_int_equal(x.orig_len, 164);
    assert_int_equal(x.data[0], 0x45);
    assert_int_equal(x.ts_ns, 5000007000ull); /* microsecond file read at ns precision */
    assert_int_equal(fe_pcap_read(r, &x), 1);
    assert_int_equal(x.len, 0);
    assert_int_equal(fe_pcap_read(r, &x), 0);
    fe_pcap_reader_close(r);

    /* unsupported link type, missing file, unwritable path, BTH framing */
    snprintf(path, sizeof path, "%s/usb.pcap", dir);
    p = pcap_open_dead(DLT_USB_LINUX, 65535);
    d = pcap_dump_open(p, path);
    pcap_dump_close(d);
    pcap_close(p);
    assert_int_equal(fe_pcap_reader_open(&r, path, err, sizeof err), FE_ENOTSUP);
    assert_non_null(strstr(err, "link type"));
    snprintf(path, sizeof path, "%s/missing.pcap", dir);
    assert_int_equal(fe_pcap_reader_open(&r, path, err, sizeof err), FE_EIO);
    assert_null(r);
    struct fe_pcap_writer *w;
    snprintf(path, sizeof path, "%s/no/such/dir.pcap", dir);
    assert_int_equal(fe_pcap_writer_open(&w, path, FE_FRAME_ETH, err, sizeof err), FE_EIO);
    assert_int_equal(fe_pcap_writer_open(&w, path, FE_FRAME_BTH, err, sizeof err), FE_ENOTSUP);
    assert_int_equal(fe_pcap_writer_close(NULL), 0);
    fe_pcap_reader_close(NULL);
    /* a file that is not a capture */
    snprintf(path, sizeof path, "%s/text.pcap", dir);
    FILE *f = fopen(path, "w");
    fputs("hello, not a pcap\n", f);
    fclose(f);
    assert_int_equal(fe_pcap_reader_open(&r, path, err, sizeof err), FE_EIO);
}

/* Writes a microsecond Ethernet pcap of `n` records of `len` bytes each, the last one claiming
 * `last_wire_len` bytes on the wire and keeping only `last_kept` of its bytes in the file. */
static void write_raw_pcap(const char *path, int n, uint32_t len, uint32_t last_wire_len,
                           uint32_t last_kept)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    const uint32_t gh[6] = {0xa1b2c3d4u, 2u | 4u << 16, 0, 0, 65535, DLT_EN10MB};
    assert_int_equal(fwrite(gh, sizeof gh, 1, f), 1);
    uint8_t data[256] = {0};
    assert_true(len <= sizeof data);
    for (int i = 0; i < n; i++) {
        bool last = i == n - 1;
        const uint32_t rh[4] = {1, (uint32_t)i, len, last ? last_wire_len : len};
        assert_int_equal(fwrite(rh, sizeof rh, 1, f), 1);
        size_t kept = last ? last_kept : len;
        assert_int_equal(fwrite(data, 1, kept, f), kept);
    }
    assert_int_equal(fclose(f), 0);
}

/* Corrupt records end the reading with FE_EIO and say which record and why: more bytes
 * captured than on the wire (libpcap lets that through), a record cut by the end of the file
 * and a captured length past the file's snap length (libpcap's checks). */
static void test_corrupt_records(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/corrupt.pcap", dir);
    struct fe_pcap_reader *r;
    struct fe_pcap_rec rec;

    write_raw_pcap(path, 2, 64, 10, 64);
    assert_int_equal(fe_pcap_reader_open(&r, path, NULL, 0), 0);
    assert_string_equal(fe_pcap_reader_error(r), "");
    assert_int_equal(fe_pcap_read(r, &rec), 1);
    assert_int_equal(fe_pcap_read(r, &rec), FE_EIO);
    assert_string_equal(fe_pcap_reader_error(r),
                        "record 2: 64 bytes captured but only 10 on the wire (corrupt file)");
    fe_pcap_reader_close(r);

    write_raw_pcap(path, 1, 64, 64, 30);
    assert_int_equal(fe_pcap_reader_open(&r, path, NULL, 0), 0);
    assert_int_equal(fe_pcap_read(r, &rec), FE_EIO);
    assert_non_null(strstr(fe_pcap_reader_error(r), "record 1: truncated"));
    fe_pcap_reader_close(r);

    write_raw_pcap(path, 1, 64, 64, 64);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    const uint32_t huge = 0x7fffffffu;
    assert_int_equal(fseek(f, 24 + 8, SEEK_SET), 0); /* the record's captured length */
    assert_int_equal(fwrite(&huge, sizeof huge, 1, f), 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(fe_pcap_reader_open(&r, path, NULL, 0), 0);
    assert_int_equal(fe_pcap_read(r, &rec), FE_EIO);
    assert_non_null(strstr(fe_pcap_reader_error(r), "record 1: invalid packet capture length"));
    fe_pcap_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_frames_through_pcap),
        cmocka_unit_test(test_cooked_and_errors),
        cmocka_unit_test(test_corrupt_records),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
