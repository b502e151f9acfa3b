/* Shared helpers of the CLI: value parsing with units, the wall clock. */
#include "tools/cli.h"

#include <errno.h>
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
    static const struct unit u[] = {{"", 1},     {"ns", 1},      {"us", 1e3}, {"ms", 1e6},
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
    static const struct unit u[] = {{"", 1},         {"bps", 1},     {"b/s", 1},
                                    {"kbps", 1e3},   {"kb/s", 1e3},  {"mbps", 1e6},
                                    {"mb/s", 1e6},   {"gbps", 1e9},  {"gb/s", 1e9},
                                    {"k", 1e3},      {"m", 1e6},     {"g", 1e9},
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
