/* The device options `feroce verbs-send` and `feroce verbs-recv` share: --dev, --port,
 * --gid-index, --ip and --mtu. Both parse with fe_cli_parse in getopt_long's manner, with the
 * entries fe_verbs_opts_table gives ahead of their own. */
#ifndef FE_TOOLS_VERBS_OPTS_H
#define FE_TOOLS_VERBS_OPTS_H

#include <stdint.h>

#include "io/verbs.h"
#include "tools/cli.h"

struct fe_verbs_opts {
    const char *dev; /* NULL: the first device */
    unsigned port;
    int gid_index;      /* < 0: the RoCEv2 GID of an IPv4 address (of ip4 when not 0) */
    uint32_t ip4;       /* host order */
    uint32_t mtu_bytes; /* 0: the port's active MTU */
    const char *cmd;    /* "verbs-recv": messages begin "feroce verbs-recv: " */
};

#define FE_VERBS_USAGE                                                                             \
    "  --dev NAME           RDMA device (default: the first one)\n"                                \
    "  --port N             device port (default 1)\n"                                             \
    "  --gid-index N        GID index (default: the RoCEv2 GID of an IPv4 address)\n"              \
    "  --ip ADDR            use the RoCEv2 GID of this local IPv4 address\n"                       \
    "  --mtu BYTES          path MTU, 256..4096 (default: the port's active MTU)\n"

/* Port 1, the RoCEv2 GID of the first IPv4 address, the port's active MTU. */
void fe_verbs_opts_default(struct fe_verbs_opts *o);

/* The device options as fe_cli_parse table entries: FE_VERBS_OPTS_N of them, then the end. */
#define FE_VERBS_OPTS_N 5
void fe_verbs_opts_table(struct fe_opt t[FE_VERBS_OPTS_N + 1], struct fe_verbs_opts *o,
                         const char *cmd);

/* Opens the device the options name and settles the MTU (warning when it is above the port's
 * active one): 0, or -1 after a message. */
int fe_verbs_opts_open(const char *cmd, const struct fe_verbs_opts *o, struct fe_verbs_dev *d,
                       uint32_t *mtu_bytes);

#endif
