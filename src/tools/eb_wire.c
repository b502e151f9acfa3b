/* Event building on the wire: the shared data convention and message plumbing (eb_wire.h). */
#include "tools/eb_wire.h"

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

struct fe_udpsock *fe_ebw_sock_open(uint32_t ip, uint16_t port, const char *cmd)
{
    struct fe_udpsock_config uc;
    fe_udpsock_config_default(&uc);
    uc.bind_ip = ip;
    uc.bind_port = port;
    uc.rcvbuf_bytes = uc.sndbuf_bytes = 1u << 20;
    int e = 0;
    struct fe_udpsock *s = fe_udpsock_open(&uc, &e);
    if (!s) {
        char a[32];
        fprintf(stderr, "feroce %s: cannot bind %s: %s\n", cmd,
                fe_io_addr_str(ip, port, a, sizeof a), fe_strerror(e));
    }
    return s;
}

bool fe_ebw_send(struct fe_udpsock *s, uint32_t ip, uint16_t port, const struct fe_eb_msg *m)
{
    uint8_t b[FE_EB_MSG_LEN];
    if (fe_eb_msg_encode(b, m) != 0) return false;
    struct fe_dgram d = {.buf = b, .len = FE_EB_MSG_LEN, .ip = ip, .port = port};
    return fe_udpsock_send(s, &d, 1) == 1;
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
