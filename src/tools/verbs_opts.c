#include "tools/verbs_opts.h"

#include <arpa/inet.h>
#include <stdio.h>

#include "tools/cli.h"

void fe_verbs_opts_default(struct fe_verbs_opts *o)
{
    *o = (struct fe_verbs_opts){.port = 1, .gid_index = -1};
}

int fe_verbs_opts_parse(const char *cmd, int c, const char *arg, struct fe_verbs_opts *o,
                        const char *usage)
{
    uint64_t v;
    switch (c) {
    case FE_VERBS_O_DEV:
        o->dev = arg;
        return 0;
    case FE_VERBS_O_PORT:
        if (fe_parse_u64(arg, &v, "--port")) return -1;
        if (!v || v > 255) {
            fprintf(stderr, "feroce %s: --port must be 1..255\n", cmd);
            return -1;
        }
        o->port = (unsigned)v;
        return 0;
    case FE_VERBS_O_GID:
        if (fe_parse_u64(arg, &v, "--gid-index")) return -1;
        if (v > 255) {
            fprintf(stderr, "feroce %s: --gid-index must be 0..255\n", cmd);
            return -1;
        }
        o->gid_index = (int)v;
        return 0;
    case FE_VERBS_O_IP: {
        struct in_addr a;
        if (inet_pton(AF_INET, arg, &a) != 1) {
            fprintf(stderr, "feroce %s: invalid --ip '%s'\n", cmd, arg);
            return -1;
        }
        o->ip4 = ntohl(a.s_addr);
        return 0;
    }
    case FE_VERBS_O_MTU:
        if (fe_parse_u64(arg, &v, "--mtu") || !fe_verbs_mtu_enum((uint32_t)v)) {
            fprintf(stderr, "feroce %s: --mtu must be 256, 512, 1024, 2048 or 4096\n", cmd);
            return -1;
        }
        o->mtu_bytes = (uint32_t)v;
        return 0;
    default:
        fputs(usage, stderr);
        return -1;
    }
}

int fe_verbs_opts_open(const char *cmd, const struct fe_verbs_opts *o, struct fe_verbs_dev *d,
                       uint32_t *mtu_bytes)
{
    char err[256];
    if (fe_verbs_open(d, o->dev, (uint8_t)o->port, o->gid_index, o->ip4, err, sizeof err)) {
        fprintf(stderr, "feroce %s: %s\n", cmd, err);
        return -1;
    }
    *mtu_bytes = o->mtu_bytes ? o->mtu_bytes : d->active_mtu_bytes;
    if (*mtu_bytes > d->active_mtu_bytes)
        fprintf(stderr, "feroce %s: warning: --mtu %u above the port's active MTU %u\n", cmd,
                *mtu_bytes, d->active_mtu_bytes);
    return 0;
}
