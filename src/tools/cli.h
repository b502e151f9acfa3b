/* The feroce CLI: subcommand and benchmark descriptors, and small shared helpers for
 * parsing the values users type (sizes, durations, rates). */
#ifndef FE_TOOLS_CLI_H
#define FE_TOOLS_CLI_H

#include <signal.h>
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

/* MAC address "aa:bb:cc:dd:ee:ff". */
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
