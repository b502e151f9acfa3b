/* libFuzzer target: arbitrary bytes as a capture file (pcap or pcapng), read as `feroce decode`
 * reads one: fe_pcap_reader_open on a path, fe_pcap_read to the end, each record decoded with
 * fe_frame_decode. The bytes live in a memfd opened through /proc/self/fd, so the reader takes
 * the same path (fopen, libpcap) as on a user's file without touching the disk. */
#include "feroce/err.h"
#include "feroce/pcap.h"
#include "feroce/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The largest record libpcap hands out for the link types the reader accepts (its
 * MAXIMUM_SNAPLEN; bigger captured lengths are a read error). */
#define MAX_RECORD_BYTES 262144u

static int capture_fd(void)
{
    static int fd = -1;
    if (fd < 0) fd = memfd_create("fuzz_pcap", 0);
    if (fd < 0) abort();
    return fd;
}

static void put_file(int fd, const uint8_t *data, size_t size)
{
    if (ftruncate(fd, 0) != 0) abort();
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
        if (n <= 0) abort();
        done += (size_t)n;
    }
}

/* A record must lie inside the reader's buffer (ASan checks the reads) and be consistent. */
static void check_record(const struct fe_pcap_rec *rec)
{
    if (rec->len > MAX_RECORD_BYTES) abort();
    if (rec->len && !rec->data) abort();
    if (rec->orig_len < rec->len) abort(); /* the reader refuses caplen > len */
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < rec->len; i++) sum ^= rec->data[i];
    (void)sum;
}

static void decode_record(enum fe_framing framing, const struct fe_pcap_rec *rec,
                          struct fe_parse_stats *st)
{
    struct fe_frame f;
    enum fe_parse_reason why = FE_PR_MAX;
    int rc = fe_frame_decode(rec->data, rec->len, framing, true, &f, &why, st);
    if (rc == 0) {
        if (why != FE_PR_OK && why != FE_PR_ICRC) abort();
        if (f.pkt.payload_len &&
            (f.pkt.payload < rec->data || f.pkt.payload + f.pkt.payload_len > rec->data + rec->len))
            abort();
    } else if (rc != FE_EPARSE || why == FE_PR_OK || why >= FE_PR_MAX) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = capture_fd();
    put_file(fd, data, size);
    char path[64], err[256] = "";
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct fe_pcap_reader *r = NULL;
    int rc = fe_pcap_reader_open(&r, path, err, sizeof err);
    if (rc != 0) {
        if (r || !err[0] || (rc != FE_EIO && rc != FE_ENOTSUP)) abort();
        return 0;
    }
    enum fe_framing framing = fe_pcap_reader_framing(r);
    if (framing != FE_FRAME_ETH && framing != FE_FRAME_IP) abort();
    struct fe_parse_stats st = {0};
    struct fe_pcap_rec rec;
    uint64_t n = 0;
    while ((rc = fe_pcap_read(r, &rec)) == 1) {
        check_record(&rec);
        decode_record(framing, &rec, &st);
        n++;
        if (n > size) abort(); /* every record takes bytes of the file */
    }
    if (rc != 0 && (rc != FE_EIO || !fe_pcap_reader_error(r)[0])) abort();
    fe_pcap_reader_close(r);
    return 0;
}
