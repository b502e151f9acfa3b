/* The options `feroce send` and `feroce recv` share: the endpoint (--backend, --bind, --if,
 * --mac), the MTU, and the process (--cpu, --busy-poll, --interval, --quiet, --json). Each
 * tool parses its own options and hands every other one to fe_io_opts_parse. */
#ifndef FE_TOOLS_IO_OPTS_H
#define FE_TOOLS_IO_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "feroce/endpoint.h"

struct fe_io_opts {
    int cpu; /* -1: not pinned */
    bool busy_poll, quiet, json;
    uint64_t interval_ns; /* of the live line, 0 = none */
};

/* Not pinned, no busy polling, a live line every second. */
void fe_io_opts_default(struct fe_io_opts *o);

/* argv[*i] when it is one of the shared options: 1, with *i on its value if it takes one; 0
 * when it is not one of them; -1 after a message "feroce CMD: ...". --bind ADDR[:PORT] (port
 * 4791 unless given) sets the UDP socket's address and the raw backend's IP. */
int fe_io_opts_parse(const char *cmd, int argc, char **argv, int *i, struct fe_io_opts *o,
                     struct fe_ep_config *ep, uint32_t *mtu_bytes);

/* The endpoint's options are complete (the raw backend needs --if and --bind): 0, or -1 after a
 * message. */
int fe_io_opts_check(const char *cmd, const struct fe_ep_config *ep);

/* In a loop over argv by index i, at option a whose value would be val (NULL past the end):
 * takes the value (i moves onto it), or returns -1 after "feroce CMD: OPT needs a value". */
#define FE_OPT_NEED(cmd, a, val, i)                                                                \
    do {                                                                                           \
        if (!(val)) {                                                                              \
            fprintf(stderr, "feroce %s: %s needs a value\n", (cmd), (a));                          \
            return -1;                                                                             \
        }                                                                                          \
        (i)++;                                                                                     \
    } while (0)

#endif
