/* The options `feroce send` and `feroce recv` share: the endpoint (--backend, --bind, --if,
 * --mac), the MTU, and the process (--cpu, --busy-poll, --interval, --quiet, --json). Each
 * tool parses them with its own options: fe_io_opts_table gives their fe_cli_parse table. */
#ifndef FE_TOOLS_IO_OPTS_H
#define FE_TOOLS_IO_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "feroce/endpoint.h"
#include "tools/cli.h"

struct fe_io_opts {
    int cpu; /* -1: not pinned */
    bool busy_poll, quiet, json;
    uint64_t interval_ns; /* of the live line, 0 = none */
};

/* Not pinned, no busy polling, a live line every second. */
void fe_io_opts_default(struct fe_io_opts *o);

/* The shared options as entries of a fe_cli_parse table: FE_IO_OPTS_N of them, then the end.
 * --bind ADDR[:PORT] (port 4791 unless given) sets the UDP socket's address and the raw
 * backend's IP. */
#define FE_IO_OPTS_N 10
void fe_io_opts_table(struct fe_opt t[FE_IO_OPTS_N + 1], struct fe_io_opts *o,
                      struct fe_ep_config *ep, uint32_t *mtu_bytes);

/* --bind's conversion, for a tool that does more with it: 0, or -1. */
int fe_io_bind_opt(const char *val, void *ep);

/* The endpoint's options are complete (the raw backend needs --if and --bind): 0, or -1 after a
 * message. */
int fe_io_opts_check(const char *cmd, const struct fe_ep_config *ep);

#endif
