/* Options shared by feroce send and feroce recv (io_opts.h). */
#include "tools/io_opts.h"

#include <stdio.h>
#include <string.h>

#include "feroce/io.h"
#include "feroce/wire.h"
#include "tools/cli.h"

void fe_io_opts_default(struct fe_io_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->cpu = -1;
    o->interval_ns = 1000000000ull;
}

int fe_io_opts_parse(const char *cmd, int argc, char **argv, int *i, struct fe_io_opts *o,
                     struct fe_ep_config *ep, uint32_t *mtu_bytes)
{
    const char *a = argv[*i], *val = *i + 1 < argc ? argv[*i + 1] : NULL;
    bool bad = false;
    if (!strcmp(a, "--busy-poll")) {
        o->busy_poll = true;
    } else if (!strcmp(a, "--quiet")) {
        o->quiet = true;
    } else if (!strcmp(a, "--json")) {
        o->json = true;
    } else if (!strcmp(a, "--backend")) {
        FE_OPT_NEED(cmd, a, val, *i);
        bad = fe_backend_parse(val, &ep->backend) != 0;
    } else if (!strcmp(a, "--bind")) {
        FE_OPT_NEED(cmd, a, val, *i);
        uint32_t ip;
        uint16_t port = FE_ROCEV2_UDP_PORT;
        bad = fe_io_parse_addr(val, &ip, &port) != 0;
        if (!bad) {
            ep->udp.bind_ip = ip;
            ep->udp.bind_port = port;
            ep->raw.ip = ip;
        }
    } else if (!strcmp(a, "--if")) {
        FE_OPT_NEED(cmd, a, val, *i);
        snprintf(ep->raw.ifname, sizeof ep->raw.ifname, "%s", val);
    } else if (!strcmp(a, "--mac")) {
        FE_OPT_NEED(cmd, a, val, *i);
        if (fe_parse_mac(val, ep->raw.mac, a)) return -1; /* it says why */
    } else if (!strcmp(a, "--mtu")) {
        FE_OPT_NEED(cmd, a, val, *i);
        if (fe_parse_u32_max(val, mtu_bytes, a, 4096)) return -1;
    } else if (!strcmp(a, "--interval")) {
        FE_OPT_NEED(cmd, a, val, *i);
        if (fe_parse_duration_ns(val, &o->interval_ns, a)) return -1;
    } else if (!strcmp(a, "--cpu")) {
        FE_OPT_NEED(cmd, a, val, *i);
        uint32_t cpu;
        if (fe_parse_u32_max(val, &cpu, a, 4095)) return -1;
        o->cpu = (int)cpu;
    } else {
        return 0;
    }
    if (bad) {
        fprintf(stderr, "feroce %s: invalid value for %s: '%s'\n", cmd, a, val);
        return -1;
    }
    return 1;
}

int fe_io_opts_check(const char *cmd, const struct fe_ep_config *ep)
{
    if (ep->backend == FE_BACKEND_RAW && (!ep->raw.ifname[0] || !ep->raw.ip)) {
        fprintf(stderr, "feroce %s: the raw backend needs --if IFNAME and --bind ADDR\n", cmd);
        return -1;
    }
    return 0;
}
