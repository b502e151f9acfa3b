#include "tools/verbs_opts.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

void fe_verbs_opts_default(struct fe_verbs_opts *o)
{
    *o = (struct fe_verbs_opts){.port = 1, .gid_index = -1};
}

static int port_opt(const char *val, void *p)
{
    struct fe_verbs_opts *o = p;
    uint64_t v;
    if (fe_parse_u64(val, &v, "--port")) return -1;
    if (!v || v > 255) {
        fprintf(stderr, "feroce %s: --port must be 1..255\n", o->cmd);
        return -1;
    }
    o->port = (unsigned)v;
    return 0;
}

static int gid_opt(const char *val, void *p)
{
    struct fe_verbs_opts *o = p;
    uint64_t v;
    if (fe_parse_u64(val, &v, "--gid-index")) return -1;
    if (v > 255) {
        fprintf(stderr, "feroce %s: --gid-index must be 0..255\n", o->cmd);
        return -1;
    }
    o->gid_index = (int)v;
    return 0;
}

static int ip_opt(const char *val, void *p)
{
    struct fe_verbs_opts *o = p;
    struct in_addr a;
    if (inet_pton(AF_INET, val, &a) != 1) {
        fprintf(stderr, "feroce %s: invalid --ip '%s'\n", o->cmd, val);
        return -1;
    }
    o->ip4 = ntohl(a.s_addr);
    return 0;
}

static int mtu_opt(const char *val, void *p)
{
    struct fe_verbs_opts *o = p;
    uint64_t v;
    if (fe_parse_u64(val, &v, "--mtu") || !fe_verbs_mtu_enum((uint32_t)v)) {
        fprintf(stderr, "feroce %s: --mtu must be 256, 512, 1024, 2048 or 4096\n", o->cmd);
        return -1;
    }
    o->mtu_bytes = (uint32_t)v;
    return 0;
}

void fe_verbs_opts_table(struct fe_opt t[FE_VERBS_OPTS_N + 1], struct fe_verbs_opts *o,
                         const char *cmd)
{
    o->cmd = cmd;
    const struct fe_opt table[FE_VERBS_OPTS_N + 1] = {
        {FE_OPT_STR_("--dev", o->dev)},          {FE_OPT_FN_("--port", port_opt, o)},
        {FE_OPT_FN_("--gid-index", gid_opt, o)}, {FE_OPT_FN_("--ip", ip_opt, o)},
        {FE_OPT_FN_("--mtu", mtu_opt, o)},
    };
    memcpy(t, table, sizeof table);
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
