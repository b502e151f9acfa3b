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
#include "feroce/endpoint.h"
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

/* The channel of the event-building messages (and, at front-ends and builders, of the side
 * channel too): one port of our address. On the UDP backend it is a socket of its own; on the
 * raw backend the interface carries no kernel address, so it is the endpoint's UDP hook (the
 * datagrams for our address on that port) and fe_ep_send_udp. Either way the same 64-byte
 * datagrams reach the same input function: only the transport differs. */
typedef void (*fe_ebw_input_fn)(void *arg, uint64_t now_ns, const uint8_t *buf, size_t len,
                                uint32_t ip, uint16_t port);
struct fe_ebw_chan {
    struct fe_udpsock *sock; /* UDP backend */
    struct fe_ep *ep;        /* raw backend */
    uint16_t port;
    fe_ebw_input_fn input;
    void *arg;
    uint64_t send_failed; /* not sent: socket full, or (raw) the peer's MAC still resolving */
};
/* ep: the tool's endpoint; NULL or a UDP one means a socket of its own on ip:port. On the raw
 * backend ip must be 0 or the endpoint's. The channel must not move while open (the hook keeps
 * its address). 0, or -1 after a message naming `cmd`. */
int fe_ebw_chan_open(struct fe_ebw_chan *c, struct fe_ep *ep, uint32_t ip, uint16_t port,
                     fe_ebw_input_fn input, void *arg, const char *cmd);
/* Closes the socket; on the raw backend the endpoint's owner destroys the endpoint. */
void fe_ebw_chan_close(struct fe_ebw_chan *c);
/* The socket's fd to wait on, or -1 on the raw backend (wait on the endpoint's fd). */
int fe_ebw_chan_fd(const struct fe_ebw_chan *c);
/* UDP backend: reads one batch of waiting datagrams and hands each to the input function; false
 * when the batch was full (more may wait). On the raw backend nothing (true): fe_ep_poll_rx hands
 * them over as they come. */
bool fe_ebw_chan_poll(struct fe_ebw_chan *c, uint64_t now_ns);
/* Sends one datagram from our port; false when it could not be sent (the protocol repeats what
 * matters). */
bool fe_ebw_chan_send(struct fe_ebw_chan *c, uint64_t now_ns, uint32_t ip, uint16_t port,
                      const uint8_t *buf, size_t len);
/* Encodes and sends one message; false when it could not be encoded or sent. */
bool fe_ebw_send(struct fe_ebw_chan *c, uint64_t now_ns, uint32_t ip, uint16_t port,
                 const struct fe_eb_msg *m);
/* The raw backend's path, its counters and the channel's messages not sent: one line on stderr
 * after `who`; nothing on the UDP backend. */
void fe_ebw_print_raw(const char *who, const struct fe_ebw_chan *c);

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
