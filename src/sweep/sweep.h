/* Campaigns of simulations (`feroce sweep`): a campaign file names a base scenario, fixed
 * settings and parameters to vary; it expands to points (one simulation each) that run locally
 * in forked workers or as a Slurm job array, and whose results go to an SQLite database.
 *
 * spec.c    campaign YAML -> struct sw_spec, expansion to points, up-front validation
 * point.c   one point: scenario, run, metrics; the result text format (pipes and Slurm files)
 * store.c   the SQLite database (campaign, runs, flows)
 * runner.c  the local runner (N workers, progress, resume)
 * slurm.c   submission as a job array, `sweep task`, `sweep collect`
 * expr.c    filter and sort expressions -> parameterized SQL
 * report.c  tables, CSV, heatmaps and line plots */
#ifndef FE_SWEEP_H
#define FE_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "feroce/sim.h"

#define SW_ID_LEN  17 /* 16 hex digits + NUL */
#define SW_COL_LEN 64
#define SW_ERR_LEN 512

/* How a parameter's values are stored: as numbers in base units (ns, bytes, bit/s) when they
 * all read as such, else as text. */
enum sw_coltype { SW_COL_INT, SW_COL_REAL, SW_COL_TEXT };

struct sw_param {
    char *key;            /* as in `feroce sim --set` (link.delay) or a CC parameter name */
    char col[SW_COL_LEN]; /* its column: link_delay */
    enum sw_coltype type; /* decided from its values */
    bool sampled;         /* from `sample:` (else `grid:`) */
    uint32_t n_values;    /* grid values */
    char **values;
    double lo, hi; /* sampled: range in the unit below */
    char unit[16]; /* sampled: unit suffix of lo/hi ("KB", "us", "") */
    bool integer;  /* sampled: lo and hi written as integers: round the samples */
    bool log;      /* sampled: uniform in log space */
};

struct sw_spec {
    char *path;     /* the campaign file */
    char *dir;      /* its directory: scenario files are read relative to it */
    char *text;     /* its text, stored in the database */
    char *scenario; /* built-in name or YAML path (resolved) */
    char *hpcc, *topology, *flows;
    char *base_files; /* "scenario=...\n" etc. as written in the campaign (the ids' base) */
    char *cc;         /* congestion control of every profile, NULL = the scenario's */
    bool ns3_compat;
    uint64_t until_ns; /* FE_SIM_NO_TIME: until the flows complete */
    double timeout_s;  /* wall-clock limit of one point, 0 = none */
    uint32_t n_sets;
    char **sets; /* fixed "key=value" */
    uint32_t n_params;
    struct sw_param *params; /* grid parameters first, then sampled ones */
    uint32_t n_samples;
    uint64_t sample_seed;
    bool lhs;         /* Latin hypercube (else independent uniform samples) */
    uint32_t n_seeds; /* 0: the scenario's own seed */
    uint64_t *seeds;
};

struct sw_point {
    char id[SW_ID_LEN]; /* hash of the base, the parameter values and the seed */
    uint32_t index;     /* position in the expansion */
    uint64_t seed;
    bool has_seed;
    char **values; /* one per spec parameter */
};

struct sw_campaign {
    struct sw_spec spec;
    char base_hash[SW_ID_LEN];   /* the scenario and fixed settings the points share */
    struct fe_sim_scenario base; /* loaded, with cc and fixed settings applied */
    uint32_t n_points;
    struct sw_point *points;
};

/* ---- spec.c ---- */
/* Parses a campaign text (name for messages, dir to resolve relative paths). 0, or -1 with a
 * message "name:line: what" in err. */
int sw_spec_parse(const char *text, size_t len, const char *name, const char *dir,
                  struct sw_spec *spec, char *err, size_t err_cap);
void sw_spec_free(struct sw_spec *spec);
/* Reads the campaign file, loads its base scenario, validates every fixed setting and every
 * value of every parameter on it, and expands the points. */
int sw_campaign_load(const char *path, struct sw_campaign *c, char *err, size_t err_cap);
/* The same from a parsed spec (tests). */
int sw_campaign_build(struct sw_campaign *c, char *err, size_t err_cap);
void sw_campaign_free(struct sw_campaign *c);
/* Applies one "key=value" to a scenario: `feroce sim --set` keys, CC parameters by name,
 * cc=ALGO, and red.kmin/red.kmax/red.pmax (every RED entry). */
int sw_apply(struct fe_sim_scenario *sc, const char *key, const char *value, char *err,
             size_t err_cap);
/* A value as a number in base units (time ns, size bytes, rate bit/s, bool 0/1, bare number);
 * false when it is not one. is_int: an integer. */
bool sw_value_number(const char *s, double *out, bool *is_int);
/* A scenario's deep copy (sim.h's arrays included); 0 or -1 (memory). */
int sw_scenario_copy(struct fe_sim_scenario *dst, const struct fe_sim_scenario *src);
/* FNV-1a 64 as 16 hex digits. */
void sw_hash_hex(const void *data, size_t len, uint64_t seed, char out[SW_ID_LEN]);

/* ---- point.c ---- */
enum sw_status { SW_OK = 0, SW_FAILED = 1 };

/* Run metrics, columns of the runs table (name, unit in docs/sweep.md). The eb_ ones are NULL
 * (NaN here) for scenarios without event building. A database whose runs table lacks a column
 * added here is migrated or refused by store.c (check_columns). */
#define SW_METRICS(X)                                                                              \
    X(sim_time_ns, INT)                                                                            \
    X(events, INT)                                                                                 \
    X(n_flows, INT)                                                                                \
    X(flows_done, INT)                                                                             \
    X(flows_failed, INT)                                                                           \
    X(window_flows, INT)                                                                           \
    X(jain, REAL)                                                                                  \
    X(throughput, REAL)                                                                            \
    X(min_throughput, REAL)                                                                        \
    X(max_throughput, REAL)                                                                        \
    X(mean_throughput, REAL)                                                                       \
    X(fct_p50, INT)                                                                                \
    X(fct_p95, INT)                                                                                \
    X(fct_p99, INT)                                                                                \
    X(fct_max, INT)                                                                                \
    X(peak_queue, INT)                                                                             \
    X(peak_buffer, INT)                                                                            \
    X(peak_headroom, INT)                                                                          \
    X(pfc_pauses, INT)                                                                             \
    X(pause_events, INT)                                                                           \
    X(drops, INT)                                                                                  \
    X(ecn_marks, INT)                                                                              \
    X(cnps, INT)                                                                                   \
    X(retx, INT)                                                                                   \
    X(timeouts, INT)                                                                               \
    X(eb_triggered, INT)                                                                           \
    X(eb_built, INT)                                                                               \
    X(eb_incomplete, INT)                                                                          \
    X(eb_lost, INT)                                                                                \
    X(eb_busy, INT)                                                                                \
    X(eb_latency_p50, INT)                                                                         \
    X(eb_latency_p99, INT)                                                                         \
    X(eb_latency_max, INT)                                                                         \
    X(eb_min_built_share, REAL)                                                                    \
    X(eb_min_builder_throughput, REAL)                                                             \
    X(eb_max_builder_throughput, REAL)                                                             \
    X(eb_peak_slots, INT)                                                                          \
    X(eb_rnr_naks, INT)
enum sw_metric {
#define SW_M_ENUM(n, t) SW_M_##n,
    SW_METRICS(SW_M_ENUM)
#undef SW_M_ENUM
        SW_N_METRICS
};
extern const char *const sw_metric_names[SW_N_METRICS];
extern const bool sw_metric_is_real[SW_N_METRICS];

/* Per-flow results, columns of the flows table. */
#define SW_FLOW_FIELDS(X)                                                                          \
    X(src, INT)                                                                                    \
    X(dst, INT)                                                                                    \
    X(bytes, INT)                                                                                  \
    X(start_ns, INT)                                                                               \
    X(fct_ns, INT)                                                                                 \
    X(throughput, REAL)                                                                            \
    X(life_throughput, REAL)                                                                       \
    X(done, INT)                                                                                   \
    X(failed, INT)                                                                                 \
    X(tx_pkts, INT)                                                                                \
    X(retx_pkts, INT)                                                                              \
    X(timeouts, INT)                                                                               \
    X(cnps_rx, INT)                                                                                \
    X(ecn_marked, INT)                                                                             \
    X(rtt_avg_ns, INT)                                                                             \
    X(rtt_max_ns, INT)
enum sw_flow_field {
#define SW_F_ENUM(n, t) SW_F_##n,
    SW_FLOW_FIELDS(SW_F_ENUM)
#undef SW_F_ENUM
        SW_N_FLOW_FIELDS
};
extern const char *const sw_flow_field_names[SW_N_FLOW_FIELDS];
extern const bool sw_flow_field_is_real[SW_N_FLOW_FIELDS];

struct sw_result {
    char id[SW_ID_LEN];
    enum sw_status status;
    char error[SW_ERR_LEN];
    double wall_s, cpu_s;
    double m[SW_N_METRICS];
    uint32_t n_flows;
    double (*flows)[SW_N_FLOW_FIELDS];
};

void sw_result_init(struct sw_result *r, const char *id);
void sw_result_free(struct sw_result *r);
void sw_result_fail(struct sw_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Runs point p of the campaign in this process and fills r (failed with a message when the
 * scenario cannot be built or the simulation fails). */
void sw_point_run(const struct sw_campaign *c, const struct sw_point *p, struct sw_result *r);
/* The result text ("feroce-sweep-result 1" ... "end"); written whole or not at all. */
int sw_result_write(FILE *f, const struct sw_result *r);
/* Parses one; -1 when it is incomplete or malformed (a message in err). */
int sw_result_parse(const char *text, size_t len, struct sw_result *r, char *err, size_t err_cap);

/* ---- store.c ---- */
struct sw_store;
/* Opens (creates) the database of campaign c: its tables, the campaign record. Refuses a
 * database made for a campaign with another base or other parameters. */
struct sw_store *sw_store_open(const char *path, const struct sw_campaign *c, char *err,
                               size_t err_cap);
/* Opens an existing database for reading (report). */
struct sw_store *sw_store_open_ro(const char *path, char *err, size_t err_cap);
void sw_store_close(struct sw_store *s);
/* Whether a result for this id is stored (status in *status when not NULL). */
bool sw_store_has(struct sw_store *s, const char *id, enum sw_status *status);
/* Stores point p's result in one transaction (ignored when one is already stored, unless
 * replace: a failed point retried). */
int sw_store_put(struct sw_store *s, const struct sw_campaign *c, const struct sw_point *p,
                 const struct sw_result *r, bool replace, char *err, size_t err_cap);
void *sw_store_db(struct sw_store *s); /* the sqlite3 handle (report) */

/* ---- runner.c ---- */
struct sw_run_opts {
    int workers;       /* 0 = number of cores */
    int progress;      /* -1 auto (stderr is a terminal), 0, 1 */
    bool retry_failed; /* rerun the points stored as failed */
    bool quiet;
    uint32_t stop_after; /* tests: stop launching after this many points (0 = no limit) */
};
struct sw_run_stats {
    uint32_t total, stored_before, ran, ok, failed;
    double wall_s, runs_cpu_s, own_cpu_s;
};
int sw_run_local(const struct sw_campaign *c, struct sw_store *s, const struct sw_run_opts *o,
                 struct sw_run_stats *st, char *err, size_t err_cap);
/* Runs the points whose indices are given (or all pending when idx is NULL) with `workers`
 * forked workers, handing each result to `done` (in the parent). */
typedef int (*sw_done_cb)(void *user, const struct sw_point *p, const struct sw_result *r);
int sw_run_points(const struct sw_campaign *c, const uint32_t *idx, uint32_t n, int workers,
                  int progress, sw_done_cb done, void *user, double *runs_cpu_s);

/* ---- slurm.c ---- */
struct sw_slurm_opts {
    const char *partition;
    uint32_t array_max; /* at most this many array tasks (0: one per point, up to 1000) */
    bool wait;          /* sbatch --wait, then collect */
    const char *sbatch; /* the program (tests); default "sbatch" */
    const char *extra;  /* more sbatch options, space separated */
};
/* The results directory of a database: DB.results */
void sw_results_dir(const char *db_path, char *out, size_t cap);
int sw_slurm_submit(const struct sw_campaign *c, const char *db_path, struct sw_store *s,
                    const struct sw_slurm_opts *o, const char *self_exe, char *err, size_t err_cap);
/* Runs task `task` of `tasks`: its share of the pending list, one result file per point. */
int sw_slurm_task(const struct sw_campaign *c, const char *results_dir, long task, int workers,
                  char *err, size_t err_cap);
/* Inserts every result file of the directory (INSERT OR IGNORE); *added new points. */
int sw_collect(const struct sw_campaign *c, struct sw_store *s, const char *results_dir,
               uint32_t *added, uint32_t *files, char *err, size_t err_cap);

/* ---- expr.c ---- */
/* A filter (where = true) or a sort list (comma separated, each optionally `desc`/`asc`)
 * translated into SQL over the given column names: identifiers must be columns, numbers with
 * units become bound parameters, strings too. */
struct sw_sql {
    char *text;
    uint32_t n_binds;
    struct {
        bool is_text;
        double num;
        char *str;
    } binds[64];
};
int sw_expr_to_sql(const char *expr, bool sort_list, const char *const *cols, size_t n_cols,
                   struct sw_sql *out, char *err, size_t err_cap);
void sw_sql_free(struct sw_sql *q);

/* ---- report.c ---- */
struct sw_report_opts {
    const char *where, *sort, *columns;
    const char *csv;  /* "-" = stdout */
    const char *plot; /* FILE.png | FILE.svg */
    const char *metric, *x, *y;
    long limit;
    bool failed_too;
    bool lines; /* with x and y: lines of the metric over x, one per value of y */
};
int sw_report(struct sw_store *s, const struct sw_report_opts *o, FILE *out, char *err,
              size_t err_cap);

#endif
