/* Shared helpers of the CLI: value parsing with units, the wall clock. */
#include "tools/cli.h"

#include <errno.h>
#include <getopt.h>
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
    if (errno || end == s || !(v >= 0)) goto bad; /* NaN too: it would not convert */
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
    if (!s) goto bad;
    /* a digit first after any blanks ("1, 2" lists): strtoull negates after a sign, and " -1"
     * would be 2^64-1 */
    const char *d = s + strspn(s, " \t\n\v\f\r");
    if (*d < '0' || *d > '9') goto bad;
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

int fe_cli_u64_opt(const char *val, void *p)
{
    char *end;
    errno = 0;
    *(uint64_t *)p = strtoull(val, &end, 0);
    return errno || *end || !*val ? -1 : 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Six fields of one or two hex digits between colons. Digits only: sscanf's %x took a blank,
 * a sign or "0x" first (" 2:0:0:0:0:1", "+2:...", "0x2:..."). */
int fe_parse_mac(const char *s, uint8_t mac[6], const char *what)
{
    uint8_t v[6];
    const char *p = s;
    if (!p) goto bad;
    for (int i = 0; i < 6; i++) {
        if (i && *p++ != ':') goto bad;
        int hi = hex_value(*p), lo;
        if (hi < 0) goto bad;
        p++;
        if ((lo = hex_value(*p)) >= 0) {
            hi = hi * 16 + lo;
            p++;
        }
        v[i] = (uint8_t)hi;
    }
    if (*p) goto bad;
    memcpy(mac, v, sizeof v); /* all checked: a refusal writes nothing */
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

/* ---- options ---- */

static const struct fe_opt *find_opt(const struct fe_cli *cli, const char *name)
{
    for (const struct fe_opt *const *t = cli->tables; *t; t++)
        for (const struct fe_opt *o = *t; o->name; o++)
            if (!strcmp(o->name, name)) return o;
    return NULL;
}

static bool takes_value(const struct fe_opt *o)
{
    return o->kind != FE_OPT_SET && o->kind != FE_OPT_FN0;
}

/* Stores v in a field of `size` bytes (the number kinds fit in their field by their bounds). */
static void store_uint(void *p, size_t size, uint64_t v)
{
    if (size == 1) {
        uint8_t x = (uint8_t)v;
        memcpy(p, &x, 1);
    } else if (size == 2) {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
    } else if (size == 4) {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

static bool in_bounds(const struct fe_opt *o, uint64_t v)
{
    return v >= o->min && (!o->max || v <= o->max);
}

/* Converts val by the option's kind: 0, or -1 (the value parsers say why, bounds do not). */
static int convert(const struct fe_opt *o, const char *val, uint64_t *v)
{
    const char *what = o->what ? o->what : o->name;
    switch (o->kind) {
    case FE_OPT_UINT:
        return fe_parse_u64(val, v, what) || !in_bounds(o, *v) ? -1 : 0;
    case FE_OPT_U32MAX: {
        uint32_t x;
        if (fe_parse_u32_max(val, &x, what, o->max)) return -1;
        *v = x;
        return x < o->min ? -1 : 0;
    }
    case FE_OPT_SIZE:
        return fe_parse_size_bytes(val, v, what) || !in_bounds(o, *v) ? -1 : 0;
    case FE_OPT_TIME:
        return fe_parse_duration_ns(val, v, what) || !in_bounds(o, *v) ? -1 : 0;
    case FE_OPT_RATE:
        return fe_parse_rate_bps(val, v, what) || !in_bounds(o, *v) ? -1 : 0;
    default:
        *v = o->min;
        return 0;
    }
}

static int apply_opt(const struct fe_opt *o, const char *val)
{
    uint64_t v;
    switch (o->kind) {
    case FE_OPT_STR:
        *(const char **)o->p = val;
        return 0;
    case FE_OPT_FN:
    case FE_OPT_FN0:
        return o->fn(val, o->p);
    default:
        if (convert(o, val, &v)) return -1;
        store_uint(o->p, o->size, v);
        return 0;
    }
}

/* One option and its value (NULL when it takes none): 0, or -1 after a message. */
static int take_opt(const struct fe_cli *cli, const struct fe_opt *o, const char *val)
{
    if (apply_opt(o, val)) {
        if ((cli->flags | o->flags) & FE_OPT_SAY_INVALID)
            fprintf(stderr, "feroce %s: invalid value for %s: '%s'\n", cli->cmd, o->name,
                    val ? val : "");
        return -1;
    }
    if (o->seen) *o->seen = true;
    return 0;
}

static bool is_option(const struct fe_cli *cli, const char *a)
{
    return a[0] == '-' && (a[1] || !cli->dash_is_arg);
}

static int parse_plain(const struct fe_cli *cli, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct fe_opt *o = find_opt(cli, a);
        if (!o && cli->positional && !is_option(cli, a)) {
            if (cli->positional(a, cli->ctx)) return -1;
            continue;
        }
        if (!o) {
            fprintf(stderr, "feroce %s: unknown option '%s' (feroce %s --help)\n", cli->cmd, a,
                    cli->cmd);
            return -1;
        }
        const char *val = NULL;
        if (takes_value(o)) {
            if (i + 1 >= argc) {
                fprintf(stderr, "feroce %s: %s needs a value\n", cli->cmd, a);
                return -1;
            }
            val = argv[++i];
        }
        if (take_opt(cli, o, val)) return -1;
    }
    return argc;
}

#define MAX_GETOPT_OPTS 64
#define GETOPT_CODE     0x1000 /* above any character getopt_long returns */

/* getopt_long over the same tables: the verbs tools have always taken --name=value and
 * abbreviations, and scripts may rely on them. */
static int parse_getopt(const struct fe_cli *cli, int argc, char **argv)
{
    struct option lo[MAX_GETOPT_OPTS + 1];
    const struct fe_opt *by_index[MAX_GETOPT_OPTS];
    int n = 0;
    for (const struct fe_opt *const *t = cli->tables; *t; t++)
        for (const struct fe_opt *o = *t; o->name && n < MAX_GETOPT_OPTS; o++, n++) {
            /* distinct codes: getopt_long then calls a prefix of two options ambiguous */
            lo[n] = (struct option){o->name + 2, takes_value(o) ? 1 : 0, NULL, GETOPT_CODE + n};
            by_index[n] = o;
        }
    lo[n] = (struct option){0, 0, 0, 0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (c < GETOPT_CODE || c >= GETOPT_CODE + n) { /* getopt_long said what is wrong */
            fputs(cli->getopt_usage, stderr);
            return -1;
        }
        const struct fe_opt *o = by_index[c - GETOPT_CODE];
        if (take_opt(cli, o, takes_value(o) ? optarg : NULL)) return -1;
    }
    return optind;
}

int fe_cli_parse(const struct fe_cli *cli, int argc, char **argv)
{
    return cli->getopt_usage ? parse_getopt(cli, argc, argv) : parse_plain(cli, argc, argv);
}
