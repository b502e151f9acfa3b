/* Shared helpers of the CLI: value parsing with units, the wall clock. */
#include "tools/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int fe_cli_wants_help(const struct fe_cmd *cmd, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(cmd->usage, stdout);
            return 1;
        }
    }
    return 0;
}

struct unit {
    const char *suffix;
    double mult;
};

/* Parses "<number><suffix>" with a suffix from `units` (case-insensitive). */
static int parse_with_units(const char *s, const struct unit *units, uint64_t *out,
                            const char *what)
{
    if (!s || !*s) goto bad;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0) goto bad;
    double mult = 0;
    for (const struct unit *u = units; u->suffix; u++) {
        if (!strcasecmp(end, u->suffix)) {
            mult = u->mult;
            break;
        }
    }
    if (mult == 0) goto bad;
    double r = v * mult;
    if (r > 1.8e19) goto bad;
    *out = (uint64_t)(r + 0.5);
    return 0;
bad:
    fprintf(stderr, "feroce: invalid %s '%s'\n", what, s ? s : "");
    return -1;
}

int fe_parse_duration_ns(const char *s, uint64_t *out, const char *what)
{
    static const struct unit u[] = {{"", 1},    {"ns", 1},    {"us", 1e3}, {"ms", 1e6},
                                    {"s", 1e9}, {"sec", 1e9}, {NULL, 0}};
    return parse_with_units(s, u, out, what);
}

int fe_parse_size_bytes(const char *s, uint64_t *out, const char *what)
{
    static const struct unit u[] = {{"", 1},
                                    {"b", 1},
                                    {"k", 1024},
                                    {"kb", 1024},
                                    {"kib", 1024},
                                    {"m", 1024.0 * 1024},
                                    {"mb", 1024.0 * 1024},
                                    {"mib", 1024.0 * 1024},
                                    {"g", 1024.0 * 1024 * 1024},
                                    {"gb", 1024.0 * 1024 * 1024},
                                    {"gib", 1024.0 * 1024 * 1024},
                                    {NULL, 0}};
    return parse_with_units(s, u, out, what);
}

int fe_parse_rate_bps(const char *s, uint64_t *out, const char *what)
{
    static const struct unit u[] = {{"", 1},       {"bps", 1},    {"b/s", 1},    {"kbps", 1e3},
                                    {"kb/s", 1e3}, {"mbps", 1e6}, {"mb/s", 1e6}, {"gbps", 1e9},
                                    {"gb/s", 1e9}, {"k", 1e3},    {"m", 1e6},    {"g", 1e9},
                                    {NULL, 0}};
    return parse_with_units(s, u, out, what);
}

int fe_parse_u64(const char *s, uint64_t *out, const char *what)
{
    if (!s || !*s || *s == '-') goto bad;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end) goto bad;
    *out = v;
    return 0;
bad:
    fprintf(stderr, "feroce: invalid %s '%s'\n", what, s ? s : "");
    return -1;
}

uint64_t fe_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fe_bench_sink(uint64_t v)
{
    static volatile uint64_t sink;
    sink = sink ^ v; /* a read too: clang flags a volatile that is only written */
}

int fe_parse_mac(const char *s, uint8_t mac[6], const char *what)
{
    unsigned v[6];
    char tail;
    if (!s ||
        sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
        goto bad;
    for (int i = 0; i < 6; i++) {
        if (v[i] > 255) goto bad;
        mac[i] = (uint8_t)v[i];
    }
    return 0;
bad:
    fprintf(stderr, "feroce: invalid %s '%s' (want aa:bb:cc:dd:ee:ff)\n", what, s ? s : "");
    return -1;
}

int fe_parse_u32_max(const char *s, uint32_t *out, const char *what, uint64_t max)
{
    uint64_t v;
    if (fe_parse_u64(s, &v, what)) return -1;
    if (max > UINT32_MAX) max = UINT32_MAX;
    if (v > max) {
        fprintf(stderr, "feroce: %s must be at most %" PRIu64 "\n", what, max);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

volatile sig_atomic_t fe_cli_signals;

static void on_stop_signal(int sig)
{
    (void)sig;
    fe_cli_signals++;
}

void fe_cli_catch_stop_signals(void)
{
    signal(SIGINT, on_stop_signal);
    signal(SIGTERM, on_stop_signal);
}
