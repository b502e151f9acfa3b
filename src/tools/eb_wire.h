/* Event building on the wire: what the front-end (feroce send --eb-source), the builder
 * (feroce builder), the event manager (feroce evm) and the checker (feroce eb-check) share.
 * The logic of assignment, assembly, the manager and the ledger is the core's
 * (include/feroce/eb.h); this is the data convention and the message plumbing around it. */
#ifndef FE_TOOLS_EB_WIRE_H
#define FE_TOOLS_EB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feroce/eb.h"
#include "feroce/io.h"

/* feroce builder's side-channel reply port (--sc-port); the demo checks it is free */
#define FE_EBW_BUILDER_SC_PORT 17186

/* Fragment contents: the counter pattern of feroce/pattern.h with stream id 0xEB000000 | source
 * and message number = the event number, so every byte names its event, source and offset. */
static inline uint32_t fe_ebw_stream(uint32_t source)
{
    return 0xEB000000u | (source & 0xFFFFu);
}
void fe_ebw_fill(uint8_t *dst, size_t len, uint32_t source, uint64_t event);
/* len when dst holds that fragment's bytes, else the index of the first wrong byte. */
size_t fe_ebw_check(const uint8_t *buf, size_t len, uint32_t source, uint64_t event);

/* Fragment sizes: min_bytes..max_bytes, a fixed function of (event, source), so the builder
 * and the checker know each fragment's length without being told. */
struct fe_ebw_sizes {
    uint32_t min_bytes, max_bytes;
};
uint32_t fe_ebw_frag_bytes(const struct fe_ebw_sizes *z, uint64_t event, uint32_t source);
/* "N" or "MIN-MAX" with units (K, M); 0 or -1 after a message naming `what`. */
int fe_ebw_sizes_parse(const char *s, struct fe_ebw_sizes *z, const char *what);
/* fe_cli option parsers shared by the event-building commands: --frag-bytes into a struct
 * fe_ebw_sizes, --policy availability|round-robin into a uint8_t FE_EB_POLICY_*. */
int fe_ebw_sizes_opt(const char *val, void *p);
int fe_ebw_policy_opt(const char *val, void *p);

/* Verifies one event's data as recorded (the arrived fragments in source order): walks the
 * sources in order and takes each one whose fragment is next in buf. Returns the number of
 * fragments recognised and sets *used to the bytes they cover; buf verifies when *used == len
 * and the count is the number of arrived sources. */
uint32_t fe_ebw_match_event(const uint8_t *buf, size_t len, uint64_t event, uint32_t n_sources,
                            const struct fe_ebw_sizes *z, size_t *used);

/* One UDP socket for event-building messages (and, at front-ends and builders, the side
 * channel too). */
struct fe_udpsock *fe_ebw_sock_open(uint32_t ip, uint16_t port, const char *cmd);
/* Encodes and sends one message; false when it could not be encoded or sent. */
bool fe_ebw_send(struct fe_udpsock *s, uint32_t ip, uint16_t port, const struct fe_eb_msg *m);

/* "A:P,A:P,..." (or repeated options): appends addresses; port `def_port` when absent. */
struct fe_ebw_addr {
    uint32_t ip;
    uint16_t port;
};
int fe_ebw_addr_list(const char *s, struct fe_ebw_addr *list, unsigned *n, unsigned max,
                     uint16_t def_port, const char *what);

/* Quantile of a sorted array of n values (q in [0, 1]). */
uint64_t fe_ebw_quantile(const uint64_t *sorted, size_t n, double q);
void fe_ebw_sort_u64(uint64_t *v, size_t n);

/* The commands' entry points that live outside their cmd_ files. */
int fe_eb_send_main(int argc, char **argv); /* feroce send --eb-source ... */
int fe_eb_demo_main(int argc, char **argv); /* feroce demo --event-building ... */

#endif
