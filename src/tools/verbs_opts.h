/* The device options `feroce verbs-send` and `feroce verbs-recv` share: --dev, --port,
 * --gid-index, --ip and --mtu. Both parse with getopt_long: each puts FE_VERBS_LONGOPTS in its
 * option table and hands the codes it does not know to fe_verbs_opts_parse. */
#ifndef FE_TOOLS_VERBS_OPTS_H
#define FE_TOOLS_VERBS_OPTS_H

#include <stdint.h>

#include "io/verbs.h"

struct fe_verbs_opts {
    const char *dev; /* NULL: the first device */
    unsigned port;
    int gid_index;      /* < 0: the RoCEv2 GID of an IPv4 address (of ip4 when not 0) */
    uint32_t ip4;       /* host order */
    uint32_t mtu_bytes; /* 0: the port's active MTU */
};

/* getopt_long codes, above any single character and the tools' own codes */
enum {
    FE_VERBS_O_DEV = 0x1000,
    FE_VERBS_O_PORT,
    FE_VERBS_O_GID,
    FE_VERBS_O_IP,
    FE_VERBS_O_MTU,
};

#define FE_VERBS_LONGOPTS                                                                          \
    {"dev", 1, 0, FE_VERBS_O_DEV}, {"port", 1, 0, FE_VERBS_O_PORT},                                \
        {"gid-index", 1, 0, FE_VERBS_O_GID}, {"ip", 1, 0, FE_VERBS_O_IP},                          \
    {                                                                                              \
        "mtu", 1, 0, FE_VERBS_O_MTU                                                                \
    }

#define FE_VERBS_USAGE                                                                             \
    "  --dev NAME           RDMA device (default: the first one)\n"                                \
    "  --port N             device port (default 1)\n"                                             \
    "  --gid-index N        GID index (default: the RoCEv2 GID of an IPv4 address)\n"              \
    "  --ip ADDR            use the RoCEv2 GID of this local IPv4 address\n"                       \
    "  --mtu BYTES          path MTU, 256..4096 (default: the port's active MTU)\n"

/* Port 1, the RoCEv2 GID of the first IPv4 address, the port's active MTU. */
void fe_verbs_opts_default(struct fe_verbs_opts *o);

/* getopt_long's code c, one the tool does not know, with its argument: 0, or -1 after a message
 * "feroce CMD: ..." (the tool's usage when c is none of FE_VERBS_LONGOPTS either). */
int fe_verbs_opts_parse(const char *cmd, int c, const char *arg, struct fe_verbs_opts *o,
                        const char *usage);

/* Opens the device the options name and settles the MTU (warning when it is above the port's
 * active one): 0, or -1 after a message. */
int fe_verbs_opts_open(const char *cmd, const struct fe_verbs_opts *o, struct fe_verbs_dev *d,
                       uint32_t *mtu_bytes);

#endif
