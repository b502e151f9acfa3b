/* The feroce CLI: subcommand and benchmark descriptors, and small shared helpers for
 * parsing the values users type (sizes, durations, rates). */
#ifndef FE_TOOLS_CLI_H
#define FE_TOOLS_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fe_cmd {
    const char *name;
    const char *summary;               /* one line for `feroce help` */
    const char *usage;                 /* full text for `feroce NAME --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name; returns exit code */
};

struct fe_bench {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the benchmark name */
};

extern const struct fe_cmd *const fe_cmds[];
extern const struct fe_bench *const fe_benches[];

/* True when argv has -h or --help; prints cmd->usage to stdout. */
int fe_cli_wants_help(const struct fe_cmd *cmd, int argc, char **argv);

/* Value parsers: return 0 on success, -1 with a message on stderr naming `what`.
 * Durations accept ns, us, ms, s (bare number = ns); sizes accept B, K/KB/KiB, M/MB/MiB, G
 * (K = 1024); rates accept bps, Kbps, Mbps, Gbps (also Kb/s, Mb/s, Gb/s; bare number = bit/s). */
int fe_parse_duration_ns(const char *s, uint64_t *out, const char *what);
int fe_parse_size_bytes(const char *s, uint64_t *out, const char *what);
int fe_parse_rate_bps(const char *s, uint64_t *out, const char *what);
int fe_parse_u64(const char *s, uint64_t *out, const char *what);

/* ---- options: one parser for every subcommand ----
 * A subcommand describes its options in tables of struct fe_opt (built where the fields live)
 * and fe_cli_parse walks argv once: it finds each option, takes its value, converts and stores
 * it, and says what went wrong as "feroce CMD: ...". The usage texts stay hand-written: their
 * layout groups options the way users think of them, which a table cannot. */
enum fe_opt_kind {
    FE_OPT_SET,    /* no value: stores `min` into the field (a flag, --no-X, a mode) */
    FE_OPT_STR,    /* the value itself, const char * */
    FE_OPT_UINT,   /* a whole number (0x.. too) in [min, max]; out of range fails silently */
    FE_OPT_U32MAX, /* as fe_parse_u32_max: "must be at most max"; below min fails silently */
    FE_OPT_SIZE,   /* bytes with a unit (fe_parse_size_bytes), in [min, max] */
    FE_OPT_TIME,   /* ns with a unit (fe_parse_duration_ns), in [min, max] */
    FE_OPT_RATE,   /* bit/s with a unit (fe_parse_rate_bps), in [min, max] */
    FE_OPT_FN,     /* fn(value, p) converts and stores; 0, or -1 (it may say why) */
    FE_OPT_FN0,    /* as FE_OPT_FN with no value (fn gets NULL) */
};

/* After a failed value, also print "feroce CMD: invalid value for NAME: 'VALUE'". */
#define FE_OPT_SAY_INVALID 1u

struct fe_opt {
    const char *name; /* "--rate"; NULL ends a table */
    enum fe_opt_kind kind;
    void *p;           /* the field (FE_OPT_FN: what fn gets) */
    size_t size;       /* the field's size, for the number kinds (1, 2, 4 or 8) */
    uint64_t min, max; /* max 0: no upper bound */
    const char *what;  /* the name in the value parsers' messages (default: name) */
    int (*fn)(const char *val, void *p);
    bool *seen; /* set to true when the option was given */
    unsigned flags;
};

/* Initialisers: {FE_OPT_TIME_("--until", o->until_ns), .seen = &have_until} */
#define FE_OPT_SET_(n, f, v)                                                                       \
    .name = (n), .kind = FE_OPT_SET, .p = &(f), .size = sizeof(f), .min = (v)
#define FE_OPT_FLAG_(n, f)       FE_OPT_SET_(n, f, 1)
#define FE_OPT_CLEAR_(n, f)      FE_OPT_SET_(n, f, 0)
#define FE_OPT_STR_(n, f)        .name = (n), .kind = FE_OPT_STR, .p = &(f)
#define FE_OPT_NUM_(k, n, f)     .name = (n), .kind = (k), .p = &(f), .size = sizeof(f)
#define FE_OPT_UINT_(n, f)       FE_OPT_NUM_(FE_OPT_UINT, n, f)
#define FE_OPT_U32MAX_(n, f, hi) FE_OPT_NUM_(FE_OPT_U32MAX, n, f), .max = (hi)
#define FE_OPT_SIZE_(n, f)       FE_OPT_NUM_(FE_OPT_SIZE, n, f)
#define FE_OPT_TIME_(n, f)       FE_OPT_NUM_(FE_OPT_TIME, n, f)
#define FE_OPT_RATE_(n, f)       FE_OPT_NUM_(FE_OPT_RATE, n, f)
#define FE_OPT_FN_(n, f, arg)    .name = (n), .kind = FE_OPT_FN, .fn = (f), .p = (arg)
#define FE_OPT_FN0_(n, f, arg)   .name = (n), .kind = FE_OPT_FN0, .fn = (f), .p = (arg)

struct fe_cli {
    const char *cmd;                    /* "send": messages begin "feroce send: " */
    const struct fe_opt *const *tables; /* NULL-terminated, searched in order */
    unsigned flags;                     /* FE_OPT_SAY_INVALID for every option */
    /* an argument that is not an option ("-" is one when dash_is_arg); NULL: none taken */
    int (*positional)(const char *arg, void *ctx);
    void *ctx;
    bool dash_is_arg;
    /* getopt_long's rules instead (--name=value, unique prefixes, its messages, arguments
     * after the options): this usage goes to stderr after an unknown option */
    const char *getopt_usage;
};

/* Parses argv[1..argc): the index of the first argument left (argc, or getopt_long's optind),
 * or -1 after a message. */
int fe_cli_parse(const struct fe_cli *cli, int argc, char **argv);

/* MAC address "aa:bb:cc:dd:ee:ff". */
/* An FE_OPT_FN parser: a 64-bit value as strtoull reads it (0x.. too), e.g. an address. */
int fe_cli_u64_opt(const char *val, void *p);
int fe_parse_mac(const char *s, uint8_t mac[6], const char *what);
/* A whole number that fits in 32 bits and is at most `max`. */
int fe_parse_u32_max(const char *s, uint32_t *out, const char *what, uint64_t max);

/* SIGINT/SIGTERM counter for long-running tools: the first asks for a clean stop (finish what
 * is in flight), a second for a prompt exit. */
extern volatile sig_atomic_t fe_cli_signals;
void fe_cli_catch_stop_signals(void);

/* Monotonic wall clock for tools and benchmarks (the core never reads a clock). */
uint64_t fe_wall_ns(void);

/* Keeps the optimiser from discarding a benchmark's result. */
void fe_bench_sink(uint64_t v);

#endif
