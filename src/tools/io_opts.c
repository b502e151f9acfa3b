/* Options shared by feroce send and feroce recv (io_opts.h). */
#include "tools/io_opts.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "feroce/io.h"
#include "feroce/wire.h"
#include "tools/cli.h"

void fe_io_opts_default(struct fe_io_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->cpu = -1;
    o->interval_ns = 1000000000ull;
}

static int backend_opt(const char *val, void *ep)
{
    return fe_backend_parse(val, &((struct fe_ep_config *)ep)->backend);
}

int fe_io_bind_opt(const char *val, void *p)
{
    struct fe_ep_config *ep = p;
    uint32_t ip;
    uint16_t port = FE_ROCEV2_UDP_PORT;
    if (fe_io_parse_addr(val, &ip, &port)) return -1;
    ep->udp.bind_ip = ip;
    ep->udp.bind_port = port;
    ep->raw.ip = ip;
    return 0;
}

static int if_opt(const char *val, void *ep)
{
    struct fe_ep_config *e = ep;
    snprintf(e->raw.ifname, sizeof e->raw.ifname, "%s", val);
    return 0;
}

static int raw_backend_opt(const char *val, void *ep)
{
    return fe_raw_kind_parse(val, &((struct fe_ep_config *)ep)->raw.kind);
}

static int mac_opt(const char *val, void *ep)
{
    return fe_parse_mac(val, ((struct fe_ep_config *)ep)->raw.mac, "--mac");
}

void fe_io_ep_opts_table(struct fe_opt t[FE_IO_EP_OPTS_N + 1], struct fe_ep_config *ep)
{
    const struct fe_opt table[FE_IO_EP_OPTS_N + 1] = {
        {FE_OPT_FN_("--backend", backend_opt, ep), .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_FN_("--if", if_opt, ep)},
        {FE_OPT_FN_("--mac", mac_opt, ep)}, /* it says why */
        {FE_OPT_FN_("--raw-backend", raw_backend_opt, ep), .flags = FE_OPT_SAY_INVALID},
    };
    memcpy(t, table, sizeof table);
}

void fe_io_opts_table(struct fe_opt t[FE_IO_OPTS_N + 1], struct fe_io_opts *o,
                      struct fe_ep_config *ep, uint32_t *mtu_bytes)
{
    const struct fe_opt table[FE_IO_OPTS_N - FE_IO_EP_OPTS_N + 1] = {
        {FE_OPT_FLAG_("--busy-poll", o->busy_poll)},
        {FE_OPT_FLAG_("--quiet", o->quiet)},
        {FE_OPT_FLAG_("--json", o->json)},
        {FE_OPT_FN_("--bind", fe_io_bind_opt, ep), .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_U32MAX_("--mtu", *mtu_bytes, 4096)},
        {FE_OPT_TIME_("--interval", o->interval_ns)},
        {FE_OPT_U32MAX_("--cpu", o->cpu, 4095)},
        {FE_OPT_STR_("--web", o->web.addr)},
        {FE_OPT_TIME_("--web-hold", o->web.hold_ns)},
        {FE_OPT_FLAG_("--web-write", o->web.write)},
    };
    size_t n = FE_IO_OPTS_N - FE_IO_EP_OPTS_N;
    memcpy(t, table, n * sizeof *t);
    fe_io_ep_opts_table(t + n, ep); /* with the end */
}

unsigned fe_io_wait(struct fe_loop *loop, struct fe_ep *ep, int data_fd, bool *blocked,
                    uint64_t now_ns, uint64_t deadline_ns)
{
    bool b = fe_ep_tx_blocked(ep);
    if (b != *blocked) {
        fe_loop_want_write(loop, data_fd, 0, b);
        *blocked = b;
    }
    int tags[4];
    int nt = fe_loop_wait(loop, b ? now_ns + 1000000 : deadline_ns, tags, 4);
    unsigned ready = 0;
    for (int k = 0; k < nt; k++) ready |= 1u << tags[k];
    return ready;
}

void fe_io_print_raw(const struct fe_ep *ep, bool json)
{
    const struct fe_raw_stats *st = fe_ep_raw_stats(ep);
    const char *kind = fe_ep_raw_kind_name(ep);
    if (!st || !kind) return;
    if (json)
        printf("\"raw\":{\"backend\":\"%s\",\"rx_frames\":%" PRIu64 ",\"rx_kernel_drops\":%" PRIu64
               ",\"rx_trunc\":%" PRIu64 ",\"tx_frames\":%" PRIu64 ",\"tx_again\":%" PRIu64
               ",\"tx_errors\":%" PRIu64 "},",
               kind, st->rx_frames, st->rx_kernel_drops, st->rx_trunc, st->tx_frames, st->tx_again,
               st->tx_errors);
    else
        printf("raw: %s, %" PRIu64 " frames received, %" PRIu64 " dropped by the kernel, %" PRIu64
               " truncated; %" PRIu64 " sent, %" PRIu64 " send errors\n",
               kind, st->rx_frames, st->rx_kernel_drops, st->rx_trunc, st->tx_frames,
               st->tx_errors);
}

int fe_io_opts_check(const char *cmd, const struct fe_ep_config *ep)
{
    if (ep->backend == FE_BACKEND_RAW && (!ep->raw.ifname[0] || !ep->raw.ip)) {
        fprintf(stderr, "feroce %s: the raw backend needs --if IFNAME and --bind ADDR\n", cmd);
        return -1;
    }
    return 0;
}

bool fe_io_udp_port_free(uint32_t ip, uint16_t port)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return true; /* cannot tell: the run reports its own error */
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(ip);
    bool taken = bind(fd, (struct sockaddr *)&a, sizeof a) && errno == EADDRINUSE;
    close(fd);
    return !taken;
}
