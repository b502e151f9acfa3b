/* Event building on the wire: the shared data convention and message plumbing (eb_wire.h). */
#include "tools/eb_wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/pattern.h"
#include "tools/cli.h"

void fe_ebw_fill(uint8_t *dst, size_t len, uint32_t source, uint64_t event)
{
    fe_pattern_fill(dst, len, fe_ebw_stream(source), event, 0);
}

size_t fe_ebw_check(const uint8_t *buf, size_t len, uint32_t source, uint64_t event)
{
    return fe_pattern_check(buf, len, fe_ebw_stream(source), event, 0);
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint32_t fe_ebw_frag_bytes(const struct fe_ebw_sizes *z, uint64_t event, uint32_t source)
{
    if (z->max_bytes <= z->min_bytes) return z->min_bytes;
    uint64_t span = (uint64_t)z->max_bytes - z->min_bytes + 1;
    return z->min_bytes + (uint32_t)(mix64(event * 65537u + source) % span);
}

int fe_ebw_sizes_parse(const char *s, struct fe_ebw_sizes *z, const char *what)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *dash = strchr(buf, '-');
    if (dash) *dash = 0;
    uint64_t lo, hi;
    if (fe_parse_size_bytes(buf, &lo, what)) return -1;
    hi = lo;
    if (dash && fe_parse_size_bytes(dash + 1, &hi, what)) return -1;
    if (!lo || hi < lo || hi > (64u << 20)) {
        fprintf(stderr, "feroce: %s must be 1 byte..64 MiB (MIN-MAX with MIN <= MAX): '%s'\n", what,
                s);
        return -1;
    }
    z->min_bytes = (uint32_t)lo;
    z->max_bytes = (uint32_t)hi;
    return 0;
}

int fe_ebw_sizes_opt(const char *val, void *p)
{
    return fe_ebw_sizes_parse(val, p, "--frag-bytes");
}

int fe_ebw_policy_opt(const char *val, void *p)
{
    uint8_t *pol = p;
    if (!strcmp(val, "availability"))
        *pol = FE_EB_POLICY_TABLES;
    else if (!strcmp(val, "round-robin"))
        *pol = FE_EB_POLICY_RR;
    else
        return -1;
    return 0;
}

uint32_t fe_ebw_match_event(const uint8_t *buf, size_t len, uint64_t event, uint32_t n_sources,
                            const struct fe_ebw_sizes *z, size_t *used)
{
    size_t pos = 0;
    uint32_t n = 0;
    for (uint32_t s = 0; s < n_sources && pos < len; s++) {
        uint32_t f = fe_ebw_frag_bytes(z, event, s);
        if (f > len - pos || fe_ebw_check(buf + pos, f, s, event) != f) continue;
        pos += f;
        n++;
    }
    *used = pos;
    return n;
}

static int sock_open(struct fe_ebw_chan *c, uint32_t ip, uint16_t port, const char *cmd)
{
    struct fe_udpsock_config uc;
    fe_udpsock_config_default(&uc);
    uc.bind_ip = ip;
    uc.bind_port = port;
    uc.rcvbuf_bytes = uc.sndbuf_bytes = 1u << 20;
    int e = 0;
    c->sock = fe_udpsock_open(&uc, &e);
    if (c->sock) return 0;
    char a[32];
    fprintf(stderr, "feroce %s: cannot bind %s: %s\n", cmd, fe_io_addr_str(ip, port, a, sizeof a),
            fe_io_fail_str(e));
    return -1;
}

static void raw_hook(void *arg, uint64_t now_ns, uint32_t src_ip, uint16_t src_port,
                     uint16_t dst_port, const uint8_t *payload, size_t len)
{
    struct fe_ebw_chan *c = arg;
    if (dst_port == c->port) c->input(c->arg, now_ns, payload, len, src_ip, src_port);
}

int fe_ebw_chan_open(struct fe_ebw_chan *c, struct fe_ep *ep, uint32_t ip, uint16_t port,
                     fe_ebw_input_fn input, void *arg, const char *cmd)
{
    memset(c, 0, sizeof *c);
    c->port = port;
    c->input = input;
    c->arg = arg;
    if (!ep || fe_ep_config(ep)->backend != FE_BACKEND_RAW) return sock_open(c, ip, port, cmd);
    uint32_t my_ip;
    fe_ep_local(ep, &my_ip, NULL);
    if (ip && ip != my_ip) {
        char a[32];
        fprintf(stderr,
                "feroce %s: on the raw backend the side channel is at the --bind address, "
                "not %s\n",
                cmd, fe_io_addr_str(ip, port, a, sizeof a));
        return -1;
    }
    c->ep = ep;
    fe_ep_set_udp_hook(ep, raw_hook, c);
    return 0;
}

void fe_ebw_chan_close(struct fe_ebw_chan *c)
{
    fe_udpsock_close(c->sock);
    c->sock = NULL;
}

int fe_ebw_chan_fd(const struct fe_ebw_chan *c)
{
    return c->sock ? fe_udpsock_fd(c->sock) : -1;
}

bool fe_ebw_chan_poll(struct fe_ebw_chan *c, uint64_t now_ns)
{
    if (!c->sock) return true; /* the raw endpoint's hook hands them over in its own poll */
    uint8_t b[32][128];
    struct fe_dgram d[32];
    for (int i = 0; i < 32; i++) d[i] = (struct fe_dgram){.buf = b[i], .cap = sizeof b[i]};
    int n = fe_udpsock_recv(c->sock, d, 32);
    for (int i = 0; i < n; i++) /* a truncated one is longer than any message: refused */
        c->input(c->arg, now_ns, d[i].buf, d[i].trunc ? sizeof b[i] + 1 : d[i].len, d[i].ip,
                 d[i].port);
    return n < 32;
}

bool fe_ebw_chan_send(struct fe_ebw_chan *c, uint64_t now_ns, uint32_t ip, uint16_t port,
                      const uint8_t *buf, size_t len)
{
    bool ok;
    if (c->sock) {
        struct fe_dgram d = {.buf = (uint8_t *)buf, .len = (uint32_t)len, .ip = ip, .port = port};
        ok = fe_udpsock_send(c->sock, &d, 1) == 1;
    } else {
        ok = c->ep && fe_ep_send_udp(c->ep, now_ns, ip, c->port, port, buf, len) == 0;
    }
    if (!ok) c->send_failed++;
    return ok;
}

bool fe_ebw_send(struct fe_ebw_chan *c, uint64_t now_ns, uint32_t ip, uint16_t port,
                 const struct fe_eb_msg *m)
{
    uint8_t b[FE_EB_MSG_LEN];
    if (fe_eb_msg_encode(b, m) != 0) return false;
    return fe_ebw_chan_send(c, now_ns, ip, port, b, sizeof b);
}

void fe_ebw_print_raw(const char *who, const struct fe_ebw_chan *c)
{
    const struct fe_raw_stats *st = c->ep ? fe_ep_raw_stats(c->ep) : NULL;
    const char *kind = c->ep ? fe_ep_raw_kind_name(c->ep) : NULL;
    if (!st || !kind) return;
    fprintf(stderr,
            "%s raw: %s, %" PRIu64 " frames received, %" PRIu64 " dropped by the kernel, %" PRIu64
            " truncated; %" PRIu64 " sent, %" PRIu64 " send errors; %" PRIu64
            " messages not sent (peer's MAC resolving, or the ring full)\n",
            who, kind, st->rx_frames, st->rx_kernel_drops, st->rx_trunc, st->tx_frames,
            st->tx_errors, c->send_failed);
}

int fe_ebw_addr_list(const char *s, struct fe_ebw_addr *list, unsigned *n, unsigned max,
                     uint16_t def_port, const char *what)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n >= max) {
            fprintf(stderr, "feroce: at most %u addresses for %s\n", max, what);
            return -1;
        }
        struct fe_ebw_addr a = {0, def_port};
        if (fe_io_parse_addr(t, &a.ip, &a.port) || !a.port) {
            fprintf(stderr, "feroce: invalid address for %s: '%s'\n", what, t);
            return -1;
        }
        list[(*n)++] = a;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void fe_ebw_sort_u64(uint64_t *v, size_t n)
{
    if (n > 1) qsort(v, n, sizeof *v, cmp_u64);
}

uint64_t fe_ebw_quantile(const uint64_t *sorted, size_t n, double q)
{
    if (!n) return 0;
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}
