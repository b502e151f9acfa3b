/* The options `feroce send` and `feroce recv` share: the endpoint (--backend, --bind, --if,
 * --mac, --raw-backend), the MTU, and the process (--cpu, --busy-poll, --interval, --quiet,
 * --json). Each tool parses them with its own options: fe_io_opts_table gives their
 * fe_cli_parse table. */
#ifndef FE_TOOLS_IO_OPTS_H
#define FE_TOOLS_IO_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "feroce/endpoint.h"
#include "tools/cli.h"
#include "web/web_io.h"

struct fe_io_opts {
    int cpu; /* -1: not pinned */
    bool busy_poll, quiet, json;
    uint64_t interval_ns;   /* of the live line, 0 = none */
    struct fe_web_opts web; /* --web, --web-hold, --web-write (docs/dashboard.md) */
};

/* Not pinned, no busy polling, a live line every second. */
void fe_io_opts_default(struct fe_io_opts *o);

/* The shared options as entries of a fe_cli_parse table: FE_IO_OPTS_N of them, then the end.
 * --bind ADDR[:PORT] (port 4791 unless given) sets the UDP socket's address and the raw
 * backend's IP. */
#define FE_IO_OPTS_N 14
void fe_io_opts_table(struct fe_opt t[FE_IO_OPTS_N + 1], struct fe_io_opts *o,
                      struct fe_ep_config *ep, uint32_t *mtu_bytes);

/* The endpoint's backend options alone, for a tool with a --bind of its own (feroce evm):
 * --backend, --if, --mac, --raw-backend; FE_IO_EP_OPTS_N of them, then the end. */
#define FE_IO_EP_OPTS_N 4
void fe_io_ep_opts_table(struct fe_opt t[FE_IO_EP_OPTS_N + 1], struct fe_ep_config *ep);

/* --bind's conversion, for a tool that does more with it: 0, or -1. */
int fe_io_bind_opt(const char *val, void *ep);

/* The endpoint's options are complete (the raw backend needs --if and --bind): 0, or -1 after a
 * message. */
int fe_io_opts_check(const char *cmd, const struct fe_ep_config *ep);

/* Whether UDP port `port` of `ip` (host order) is free to bind: the demos pick loopback
 * addresses that another demo on the machine does not hold. */
bool fe_io_udp_port_free(uint32_t ip, uint16_t port);

/* The raw backend's path (AF_PACKET or AF_XDP) and its frame counters, kernel drops included:
 * a JSON member followed by a comma, or a text line; nothing for the UDP backend. */
void fe_io_print_raw(const struct fe_ep *ep, bool json);

struct fe_loop;
/* A tool's wait for its next event: until deadline_ns, or 1 ms while the endpoint's socket is
 * full (asking the loop for its writability then, data_fd; *blocked keeps what was asked).
 * Returns the ready bits of the loop's tags. */
unsigned fe_io_wait(struct fe_loop *loop, struct fe_ep *ep, int data_fd, bool *blocked,
                    uint64_t now_ns, uint64_t deadline_ns);

#endif
