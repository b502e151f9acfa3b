/* pcap files of RoCEv2 frames (libpcap): a writer for captures that Wireshark/tshark open, and
 * a reader for what they, tcpdump or feroce wrote. Tools and tests only: not a per-packet core
 * path (the core never does I/O). */
#ifndef FEROCE_PCAP_H
#define FEROCE_PCAP_H

#include <stddef.h>
#include <stdint.h>

#include "feroce/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fe_pcap_writer;
struct fe_pcap_reader;

/* Creates `path` (nanosecond timestamps) for frames of `framing`: FE_FRAME_ETH is written as
 * LINKTYPE_ETHERNET, FE_FRAME_IP as LINKTYPE_RAW; FE_FRAME_BTH has no link type (FE_ENOTSUP).
 * On failure returns FE_EIO/FE_EINVAL/FE_ENOTSUP and, when `err` is given, a message. */
int fe_pcap_writer_open(struct fe_pcap_writer **out, const char *path, enum fe_framing framing,
                        char *err, size_t errcap);
/* Appends one frame with timestamp ts_ns (nanoseconds since the Unix epoch, or any origin). */
int fe_pcap_write(struct fe_pcap_writer *w, uint64_t ts_ns, const uint8_t *frame, size_t len);
/* Flushes and closes; returns FE_EIO when any write failed. NULL is a no-op. */
int fe_pcap_writer_close(struct fe_pcap_writer *w);

/* One record. `data` stays valid until the next fe_pcap_read or close. */
struct fe_pcap_rec {
    uint64_t ts_ns;
    const uint8_t *data;
    size_t len;      /* bytes captured (after any Linux cooked header) */
    size_t orig_len; /* bytes on the wire; > len + cooked header when the capture cut it */
};

/* Opens a pcap or pcapng file. Ethernet captures read as FE_FRAME_ETH; raw-IP captures
 * (LINKTYPE_RAW, IPV4, IPV6) and Linux cooked captures (`tcpdump -i any`: SLL, SLL2; the cooked
 * header is skipped) as FE_FRAME_IP. Other link types: FE_ENOTSUP. */
int fe_pcap_reader_open(struct fe_pcap_reader **out, const char *path, char *err, size_t errcap);
enum fe_framing fe_pcap_reader_framing(const struct fe_pcap_reader *r);
int fe_pcap_reader_linktype(const struct fe_pcap_reader *r); /* the DLT_ value */
/* 1 with *rec filled, 0 at the end of the file, FE_EIO on a read error: a truncated or corrupt
 * record (libpcap's checks, and captured bytes > bytes on the wire); the file cannot be read
 * past it. */
int fe_pcap_read(struct fe_pcap_reader *r, struct fe_pcap_rec *rec);
/* Why the last fe_pcap_read returned FE_EIO ("record N: ..."); "" before any error. */
const char *fe_pcap_reader_error(const struct fe_pcap_reader *r);
void fe_pcap_reader_close(struct fe_pcap_reader *r);

#ifdef __cplusplus
}
#endif
#endif
