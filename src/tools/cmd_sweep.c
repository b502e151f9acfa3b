/* feroce sweep: campaigns of simulations (src/sweep, docs/sweep.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep/sweep.h"
#include "tools/cli.h"

static const char usage_text[] =
    "usage: feroce sweep run CAMPAIGN.yaml [--db FILE] [-j N] [--retry-failed] [--dry-run]\n"
    "       feroce sweep run CAMPAIGN.yaml --slurm [--partition P] [--array-max K] [--wait]\n"
    "       feroce sweep task CAMPAIGN.yaml [--db FILE] [--task I] [-j N]\n"
    "       feroce sweep collect CAMPAIGN.yaml [--db FILE]\n"
    "       feroce sweep report CAMPAIGN.yaml|FILE.db [--where EXPR] [--sort EXPR] [options]\n"
    "Runs a campaign: a base scenario, fixed settings and parameters to vary (a grid of lists\n"
    "or ranges, random or Latin-hypercube samples, seeds), every point an independent\n"
    "simulation. Results go to an SQLite database (default: CAMPAIGN.db beside the campaign):\n"
    "table runs (parameters and metrics as columns) and table flows (per flow). A campaign\n"
    "that was stopped resumes where it stopped; stored points are never run again.\n"
    "Campaign files, keys and metrics: docs/sweep.md.\n\n"
    "run options:\n"
    "  --db FILE            the database (default: the campaign's name with .db)\n"
    "  -j, --workers N      points run at once (default: the number of cores)\n"
    "  --retry-failed       run again the points stored as failed\n"
    "  --dry-run            list the points (id and parameters) and what is stored\n"
    "  --stop-after N       run at most N points, then stop (resume later)\n"
    "  --progress, --no-progress   progress bar on stderr (default: when a terminal)\n"
    "  --slurm              submit the pending points as one Slurm job array (sbatch); each\n"
    "                       task runs its share (feroce sweep task) and writes one file per\n"
    "                       point to DB.results/ on the shared filesystem\n"
    "  --partition P        Slurm partition\n"
    "  --array-max K        at most K array tasks (default: one per point, up to 1000)\n"
    "  --wait               wait for the job (sbatch --wait), then collect\n"
    "  --sbatch-args ARGS   more sbatch options (space separated)\n"
    "task options: --task I (default $SLURM_ARRAY_TASK_ID), -j N (default\n"
    "  $SLURM_CPUS_PER_TASK or 1), --db FILE (locates DB.results/)\n"
    "collect: merges DB.results/ into the database (idempotent: run it any number of times)\n\n"
    "report options:\n"
    "  --where EXPR         filter, e.g. 'jain >= 0.99 and peak_queue < 200KB' (columns,\n"
    "                       numbers with units, and/or/not, comparisons, + - * /)\n"
    "  --sort EXPR[,..]     order, e.g. 'peak_queue desc, jain' (default: campaign order)\n"
    "  --columns A,B,...    columns shown (default: parameters, seed and the main metrics)\n"
    "  --failed             include failed points (default: ok only)\n"
    "  --limit N            at most N rows\n"
    "  --csv FILE|-         write CSV (every column unless --columns) instead of the table\n"
    "  --plot FILE.png|svg  with --metric M and --x P: a heatmap over --x and --y P, or lines\n"
    "                       of M over --x (one per value of --y P with --lines); gnuplot\n"
    "  --metric M, --x P, --y P, --lines\n";

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* CAMPAIGN.yaml -> CAMPAIGN.db (beside it). */
static void default_db(const char *campaign, char *out, size_t cap)
{
    size_t n = strlen(campaign);
    if (ends_with(campaign, ".yaml"))
        n -= 5;
    else if (ends_with(campaign, ".yml"))
        n -= 4;
    snprintf(out, cap, "%.*s.db", (int)n, campaign);
}

struct sweep_opts {
    const char *campaign, *db, *partition, *sbatch_args, *sbatch;
    struct sw_run_opts run;
    struct sw_slurm_opts slurm;
    struct sw_report_opts report;
    bool slurm_mode, dry_run, lines;
    long task;
    char db_buf[4096];
};

static int need(int argc, char **argv, int i)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "feroce sweep: %s needs a value\n", argv[i]);
        return -1;
    }
    return 0;
}

static int parse_count(const char *s, long min, long *out, const char *what)
{
    uint64_t v;
    if (fe_parse_u64(s, &v, what)) return -1;
    if ((long)v < min || v > 1000000000) {
        fprintf(stderr, "feroce sweep: %s: at least %ld\n", what, min);
        return -1;
    }
    *out = (long)v;
    return 0;
}

static int parse_opt(int argc, char **argv, int *i, struct sweep_opts *o)
{
    const char *a = argv[*i];
    long v;
#define VAL(dst)                                                                                   \
    do {                                                                                           \
        if (need(argc, argv, *i)) return -1;                                                       \
        dst = argv[++*i];                                                                          \
        return 0;                                                                                  \
    } while (0)
    if (!strcmp(a, "--db")) VAL(o->db);
    if (!strcmp(a, "--partition")) VAL(o->slurm.partition);
    if (!strcmp(a, "--sbatch-args")) VAL(o->slurm.extra);
    if (!strcmp(a, "--sbatch")) VAL(o->slurm.sbatch);
    if (!strcmp(a, "--where")) VAL(o->report.where);
    if (!strcmp(a, "--sort")) VAL(o->report.sort);
    if (!strcmp(a, "--columns")) VAL(o->report.columns);
    if (!strcmp(a, "--csv")) VAL(o->report.csv);
    if (!strcmp(a, "--plot")) VAL(o->report.plot);
    if (!strcmp(a, "--metric")) VAL(o->report.metric);
    if (!strcmp(a, "--x")) VAL(o->report.x);
    if (!strcmp(a, "--y")) VAL(o->report.y);
#undef VAL
    if (!strcmp(a, "-j") || !strcmp(a, "--workers") || !strcmp(a, "--array-max") ||
        !strcmp(a, "--task") || !strcmp(a, "--limit") || !strcmp(a, "--stop-after")) {
        if (need(argc, argv, *i) || parse_count(argv[++*i], !strcmp(a, "--task") ? 0 : 1, &v, a))
            return -1;
        if (!strcmp(a, "--array-max"))
            o->slurm.array_max = (uint32_t)v;
        else if (!strcmp(a, "--task"))
            o->task = v;
        else if (!strcmp(a, "--limit"))
            o->report.limit = v;
        else if (!strcmp(a, "--stop-after"))
            o->run.stop_after = (uint32_t)v;
        else
            o->run.workers = (int)v;
        return 0;
    }
    if (!strcmp(a, "--slurm"))
        o->slurm_mode = true;
    else if (!strcmp(a, "--wait"))
        o->slurm.wait = true;
    else if (!strcmp(a, "--retry-failed"))
        o->run.retry_failed = true;
    else if (!strcmp(a, "--dry-run"))
        o->dry_run = true;
    else if (!strcmp(a, "--progress"))
        o->run.progress = 1;
    else if (!strcmp(a, "--no-progress"))
        o->run.progress = 0;
    else if (!strcmp(a, "--quiet"))
        o->run.quiet = true;
    else if (!strcmp(a, "--failed"))
        o->report.failed_too = true;
    else if (!strcmp(a, "--lines"))
        o->lines = true;
    else {
        fprintf(stderr, "feroce sweep: unknown option '%s' (feroce sweep --help)\n", a);
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct sweep_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->run.progress = -1;
    o->task = -1;
    for (int i = 2; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if (parse_opt(argc, argv, &i, o)) return -1;
        } else if (!o->campaign) {
            o->campaign = argv[i];
        } else {
            fprintf(stderr, "feroce sweep: more than one campaign given ('%s')\n", argv[i]);
            return -1;
        }
    }
    if (!o->campaign) {
        fputs(usage_text, stderr);
        return -1;
    }
    if (!o->db) {
        default_db(o->campaign, o->db_buf, sizeof(o->db_buf));
        o->db = ends_with(o->campaign, ".db") ? o->campaign : o->db_buf;
    }
    return 0;
}

static int dry_run(const struct sw_campaign *c, const char *db)
{
    char err[SW_ERR_LEN];
    struct sw_store *s = access(db, F_OK) ? NULL : sw_store_open_ro(db, err, sizeof(err));
    printf("%u points (base %s)\n", c->n_points, c->base_hash);
    for (uint32_t k = 0; k < c->n_points; k++) {
        const struct sw_point *p = &c->points[k];
        printf("%s", p->id);
        for (uint32_t i = 0; i < c->spec.n_params; i++)
            printf(" %s=%s", c->spec.params[i].key, p->values[i]);
        if (p->has_seed) printf(" seed=%llu", (unsigned long long)p->seed);
        enum sw_status st;
        if (s && sw_store_has(s, p->id, &st)) printf("  [stored%s]", st == SW_OK ? "" : ", failed");
        printf("\n");
    }
    sw_store_close(s);
    return 0;
}

static int cmd_run(struct sweep_opts *o, struct sw_campaign *c, struct sw_store *s)
{
    char err[SW_ERR_LEN] = "";
    if (o->slurm_mode) {
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0) {
            fprintf(stderr, "feroce sweep: cannot find my own executable\n");
            return 1;
        }
        exe[n] = 0;
        if (sw_slurm_submit(c, o->db, s, &o->slurm, exe, err, sizeof(err))) {
            fprintf(stderr, "feroce sweep: %s\n", err);
            return 1;
        }
        return 0;
    }
    struct sw_run_stats st;
    int rc = sw_run_local(c, s, &o->run, &st, err, sizeof(err));
    if (!o->run.quiet) {
        printf("%u points: %u stored before, %u run (%u ok, %u failed) in %.2f s -> %s\n", st.total,
               st.stored_before, st.ran, st.ok, st.failed, st.wall_s, o->db);
        if (st.ran)
            printf("orchestration: %.3f s of CPU, %.2f %% of the runs' %.2f s\n", st.own_cpu_s,
                   st.runs_cpu_s > 0 ? 100 * st.own_cpu_s / st.runs_cpu_s : 0, st.runs_cpu_s);
    }
    if (rc) fprintf(stderr, "feroce sweep: %s\n", err);
    return rc ? 1 : 0;
}

static int cmd_collect(struct sweep_opts *o, struct sw_campaign *c, struct sw_store *s)
{
    char err[SW_ERR_LEN] = "", dir[4200];
    sw_results_dir(o->db, dir, sizeof(dir));
    uint32_t added = 0, files = 0;
    if (sw_collect(c, s, dir, &added, &files, err, sizeof(err))) {
        fprintf(stderr, "feroce sweep: %s\n", err);
        return 1;
    }
    printf("collected %u result files from %s: %u new points -> %s\n", files, dir, added, o->db);
    return 0;
}

static int cmd_task(struct sweep_opts *o, struct sw_campaign *c)
{
    char err[SW_ERR_LEN] = "", dir[4200];
    long task = o->task;
    const char *e = getenv("SLURM_ARRAY_TASK_ID");
    if (task < 0 && e) task = atol(e);
    if (task < 0) {
        fprintf(stderr, "feroce sweep task: --task I (or $SLURM_ARRAY_TASK_ID)\n");
        return 2;
    }
    int workers = o->run.workers;
    e = getenv("SLURM_CPUS_PER_TASK");
    if (!workers) workers = e && atoi(e) > 0 ? atoi(e) : 1;
    sw_results_dir(o->db, dir, sizeof(dir));
    if (sw_slurm_task(c, dir, task, workers, err, sizeof(err))) {
        fprintf(stderr, "feroce sweep task: %s\n", err);
        return 1;
    }
    return 0;
}

static int cmd_report(struct sweep_opts *o)
{
    char err[SW_ERR_LEN] = "";
    struct sw_store *s = sw_store_open_ro(o->db, err, sizeof(err));
    if (!s) {
        fprintf(stderr, "feroce sweep report: %s\n", err);
        return 1;
    }
    struct sw_report_opts r = o->report;
    r.lines = o->lines;
    int rc = sw_report(s, &r, stdout, err, sizeof(err));
    if (rc) fprintf(stderr, "feroce sweep report: %s\n", err);
    sw_store_close(s);
    return rc ? 1 : 0;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *sub = argv[1];
    bool is_run = !strcmp(sub, "run"), is_task = !strcmp(sub, "task"),
         is_collect = !strcmp(sub, "collect"), is_report = !strcmp(sub, "report");
    if (!is_run && !is_task && !is_collect && !is_report) {
        fprintf(stderr, "feroce sweep: unknown subcommand '%s' (run, task, collect, report)\n",
                sub);
        return 2;
    }
    struct sweep_opts o;
    if (parse_args(argc, argv, &o)) return 2;
    if (is_report) return cmd_report(&o);
    struct sw_campaign c;
    char err[SW_ERR_LEN] = "";
    if (sw_campaign_load(o.campaign, &c, err, sizeof(err))) {
        fprintf(stderr, "feroce sweep: %s\n", err);
        return 2;
    }
    int rc;
    if (o.dry_run) {
        rc = dry_run(&c, o.db);
    } else if (is_task) {
        rc = cmd_task(&o, &c);
    } else {
        struct sw_store *s = sw_store_open(o.db, &c, err, sizeof(err));
        if (!s) {
            fprintf(stderr, "feroce sweep: %s: %s\n", o.db, err);
            sw_campaign_free(&c);
            return 1;
        }
        rc = is_run ? cmd_run(&o, &c, s) : cmd_collect(&o, &c, s);
        sw_store_close(s);
    }
    sw_campaign_free(&c);
    return rc;
}

const struct fe_cmd fe_cmd_sweep = {
    "sweep", "campaigns of simulations: grids, samples, seeds; SQLite results; Slurm", usage_text,
    run};
