/* feroce sim: the packet-level simulator (src/sim). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feroce/err.h"
#include "feroce/sim.h"
#include "sim/parallel_mpi.h"
#include "sim/partition.h"
#include "tools/cli.h"
#include "web/web_sim.h"

static const char usage_text[] =
    "usage: feroce sim SCENARIO|FILE.yaml [options]\n"
    "       feroce sim --hpcc CONFIG.txt [--topology FILE] [--flows FILE] [options]\n"
    "       feroce sim --ns3-roce CONFIG.json [--skip-unsupported-flows] [options]\n"
    "       feroce sim --replay TRACE.csv --web [ADDR:]PORT\n"
    "Runs a packet-level simulation of a RoCEv2 fabric (PFC, ECN/RED, shared-buffer switches)\n"
    "whose hosts run feroce's real transport and congestion control.\n\n"
    "Built-in scenarios (the LST AdvCam studies' set-ups, docs/sim.md): run 'feroce sim "
    "--list'.\n\n"
    "options:\n"
    "  --cc NAME            congestion control of every flow (feroce cc lists them)\n"
    "  --param NAME=VALUE   CC parameter for every flow's profile (repeatable, or a,b lists)\n"
    "  --set KEY=VALUE      scenario setting, as in the YAML file: switch.buffer=4MB,\n"
    "                       host.mtu=1024, link.delay=2us, flow.bytes=55MB,\n"
    "                       eb.policy=availability (event building) ... (repeatable)\n"
    "  --ns3-compat         the ns-3 RDMA simulators' modelling: DCQCN as dcqcn-hpcc-ns3,\n"
    "                       congestion flag on ACKs (no CNPs), an ACK per packet, XOFF/XON\n"
    "                       pause, no preamble/IFG on links, HPCC ns-3's frame sizes and\n"
    "                       timing (host.frames=hpcc-ns3: whole ns per frame) and its\n"
    "                       switch MMU (reserve, resume offset, buffer carving);\n"
    "                       checked against HPCC ns-3 (docs/sim.md)\n"
    "  --seed N             random seed (RED marking, link loss, ECMP salt)\n"
    "  --until TIME         stop at this simulated time (e.g. 50ms); default: when every\n"
    "                       flow has completed (or the scenario's stop time)\n"
    "  --json               print the results as JSON\n"
    "  --all-flows          list every flow (the text report shows the first 64)\n"
    "  --trace FILE         CSV trace: per-flow throughput, CC variables (Rc, Rt, alpha...),\n"
    "                       queue depth of every switch port, at --trace-interval\n"
    "  --trace-interval T   sampling interval of the trace (default 100us)\n"
    "  --plot FILE.svg|png  draw per-flow throughput and CC rate over time (SVG written by\n"
    "                       feroce; PNG drawn by gnuplot)\n"
    "  --progress           progress line on stderr (default when stderr is a terminal)\n"
    "  --no-progress        never print the progress line\n"
    "  --queue calendar|heap|wheel  event-queue implementation (default: calendar, wheel from\n"
    "                       256 ports)\n"
    "  --hpcc CONFIG        HPCC ns-3 config.txt; its TOPOLOGY_FILE and FLOW_FILE are read\n"
    "                       relative to the config's directory unless --topology/--flows\n"
    "                       are given; fct.txt and pfc.txt are written when the config\n"
    "                       names FCT_OUTPUT_FILE / PFC_OUTPUT_FILE (or --fct / --pfc)\n"
    "  --fct FILE, --pfc FILE   HPCC-format outputs (override the config's)\n"
    "  --ns3-roce CONFIG    ns3-roce (Eren121/ns3-roce) config.json; its topology_file and\n"
    "                       flows_file are read relative to the config's directory; node\n"
    "                       numbers are list positions; its RdmaHw DCQCN attributes, Mtu,\n"
    "                       QbbEnabled, PauseTime, EcnEnabled + ecn list, BufferSize,\n"
    "                       simulator_stop_time (0: until the foreground flows end),\n"
    "                       ack_high_prio and rng_seed are used; attributes feroce does not\n"
    "                       model are listed on stderr (docs/sim.md)\n"
    "  --skip-unsupported-flows  run an ns3-roce file whose flows include types feroce\n"
    "                       cannot model (multicast), without them (a warning names them);\n"
    "                       by default such a file is refused\n"
    "  --web [ADDR:]PORT    live dashboard of the run (docs/dashboard.md): a sample every\n"
    "                       --trace-interval of simulated time; then serves the finished run\n"
    "  --web-speed X|max    simulated seconds per wall second (0.1: 100 ms of simulated time a\n"
    "                       second, the default); max: as fast as it goes\n"
    "  --web-hold TIME      serve the finished run this long (default: until Ctrl-C)\n"
    "  --replay TRACE.csv   with --web: browse a trace written by --trace\n"
    "  --partition-report K[,K...]  after the run, how the network splits into K parts for\n"
    "                       parallel simulation: per part its nodes, ports and share of the\n"
    "                       run's events, the cut links, the lookahead (windows per ms) and\n"
    "                       the frames that cross (at most 8 values of K)\n"
    "  --threads N          simulate in N parts, a thread each (conservative, synchronised\n"
    "                       every smallest link delay; the results are those of one thread);\n"
    "                       default: 1 below 256 ports, else the cores. Runs that cannot be\n"
    "                       cut (event building, ns-3 timing) use one, and say why\n"
    "  --partition FILE     the parts, as 'NODE PART' lines (hosts not listed follow their\n"
    "                       switch), instead of the automatic partitioning\n"
    "  --mpi                under mpirun: a part per process (docs/sim.md, Runs over MPI);\n"
    "                       rank 0 writes the results, byte for byte those of one thread\n"
    "  --list               list the built-in scenarios\n";

static int list_builtins(void)
{
    size_t n;
    const struct fe_sim_builtin *b = fe_sim_builtins(&n);
    for (size_t i = 0; i < n; i++) printf("  %-14s %s\n", b[i].name, b[i].summary);
    return 0;
}

#define MAX_ARGS 64

struct opts {
    const char *scenario, *cc, *hpcc, *roce, *topology, *flows, *trace, *plot, *fct, *pfc;
    const char *web, *replay; /* --web, --replay */
    struct fe_web_sim_opts web_o;
    const char *params[MAX_ARGS];
    const char *sets[MAX_ARGS];
    int n_params, n_sets;
    bool ns3, json, all_flows, have_seed, skip_unsupported;
    int progress; /* -1 auto */
    uint64_t seed, until_ns, trace_interval_ns;
    enum fe_sim_queue_kind queue;
    bool queue_set;                 /* --queue given (else the simulator's choice) */
    const char *partition;          /* --partition FILE */
    uint32_t report_k[8], n_report; /* --partition-report */
    uint32_t threads;               /* --threads, 0: by the size */
    bool mpi;                       /* --mpi */
};

static int add_arg(const char *val, const char **list, int *n, const char *opt)
{
    if (*n >= MAX_ARGS) {
        fprintf(stderr, "feroce sim: too many %s\n", opt);
        return -1;
    }
    list[(*n)++] = val;
    return 0;
}

static int param_opt(const char *val, void *p)
{
    struct opts *o = p;
    return add_arg(val, o->params, &o->n_params, "--param");
}

static int set_opt(const char *val, void *p)
{
    struct opts *o = p;
    return add_arg(val, o->sets, &o->n_sets, "--set");
}

static int trace_interval_opt(const char *val, void *p)
{
    uint64_t *ns = p;
    if (fe_parse_duration_ns(val, ns, "trace interval")) return -1;
    if (!*ns) {
        fprintf(stderr, "feroce sim: the trace interval must be > 0\n");
        return -1;
    }
    return 0;
}

static int queue_opt(const char *q, void *p)
{
    struct opts *o = p;
    o->queue_set = true;
    if (!strcmp(q, "heap"))
        o->queue = FE_SIM_EVQ_HEAP;
    else if (!strcmp(q, "wheel"))
        o->queue = FE_SIM_EVQ_WHEEL;
    else if (!strcmp(q, "calendar"))
        o->queue = FE_SIM_EVQ_CALENDAR;
    else {
        fprintf(stderr, "feroce sim: --queue calendar, heap or wheel\n");
        return -1;
    }
    return 0;
}

static int partition_report_opt(const char *val, void *p)
{
    struct opts *o = p;
    const char *s = val;
    for (;;) {
        char *end;
        unsigned long k = strtoul(s, &end, 10);
        if (end == s || k < 1 || k > FE_SIM_MAX_PARTS || o->n_report == 8 ||
            (*end && *end != ',')) {
            fprintf(stderr, "feroce sim: --partition-report: up to 8 counts of parts, 1 to %u\n",
                    FE_SIM_MAX_PARTS);
            return -1;
        }
        o->report_k[o->n_report++] = (uint32_t)k;
        if (!*end) return 0;
        s = end + 1;
    }
}

static int web_speed_opt(const char *val, void *p)
{
    double *speed = p;
    char *end;
    *speed = strcmp(val, "max") ? strtod(val, &end) : 0;
    if (strcmp(val, "max") && (*end || !(*speed > 0) || *speed > 1e6)) {
        fprintf(stderr, "feroce sim: --web-speed: a factor > 0 (simulated s per wall s) or max\n");
        return -1;
    }
    return 0;
}

static int scenario_arg(const char *a, void *p)
{
    struct opts *o = p;
    if (o->scenario) {
        fprintf(stderr, "feroce sim: more than one scenario given ('%s')\n", a);
        return -1;
    }
    o->scenario = a;
    return 0;
}

/* One source of flows: a scenario, an HPCC config or an ns3-roce config. */
static int check_sources(const struct opts *o)
{
    if ((o->web || o->replay) && !fe_web_sim_available()) {
        fprintf(stderr, "feroce sim: --web is not built in (this build had no libmicrohttpd, "
                        "no npm, or FEROCE_WEB=OFF)\n");
        return -1;
    }
    if (o->replay) {
        if (o->web && !o->scenario && !o->hpcc && !o->roce) return 0;
        fprintf(stderr, "feroce sim: --replay TRACE.csv needs --web and no scenario\n");
        return -1;
    }
    if (!o->scenario && !o->hpcc && !o->roce) {
        fputs(usage_text, stderr);
        return -1;
    }
    if (!!o->scenario + !!o->hpcc + !!o->roce > 1) {
        fprintf(stderr, "feroce sim: give one of a scenario, --hpcc, --ns3-roce\n");
        return -1;
    }
    if (o->roce && (o->topology || o->flows)) {
        fprintf(stderr, "feroce sim: --topology/--flows are for --hpcc (an ns3-roce config "
                        "names its files)\n");
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof(*o));
    o->progress = -1;
    o->until_ns = FE_SIM_NO_TIME;
    o->trace_interval_ns = 100000;
    o->web_o.speed = 0.1;
    o->web_o.hold_ns = UINT64_MAX;
    const struct fe_opt opts[] = {
        {FE_OPT_STR_("--cc", o->cc)},
        {FE_OPT_STR_("--hpcc", o->hpcc)},
        {FE_OPT_STR_("--ns3-roce", o->roce)},
        {FE_OPT_FLAG_("--skip-unsupported-flows", o->skip_unsupported)},
        {FE_OPT_STR_("--topology", o->topology)},
        {FE_OPT_STR_("--flows", o->flows)},
        {FE_OPT_STR_("--trace", o->trace)},
        {FE_OPT_STR_("--plot", o->plot)},
        {FE_OPT_STR_("--fct", o->fct)},
        {FE_OPT_STR_("--pfc", o->pfc)},
        {FE_OPT_FN_("--param", param_opt, o)},
        {FE_OPT_FN_("--set", set_opt, o)},
        {FE_OPT_FLAG_("--ns3-compat", o->ns3)},
        {FE_OPT_FLAG_("--json", o->json)},
        {FE_OPT_FLAG_("--all-flows", o->all_flows)},
        {FE_OPT_SET_("--progress", o->progress, 1)},
        {FE_OPT_SET_("--no-progress", o->progress, 0)},
        {FE_OPT_UINT_("--seed", o->seed), .what = "seed", .seen = &o->have_seed},
        {FE_OPT_TIME_("--until", o->until_ns), .what = "time"},
        {FE_OPT_FN_("--trace-interval", trace_interval_opt, &o->trace_interval_ns)},
        {FE_OPT_FN_("--queue", queue_opt, o)},
        {FE_OPT_STR_("--web", o->web)},
        {FE_OPT_FN_("--web-speed", web_speed_opt, &o->web_o.speed)},
        {FE_OPT_TIME_("--web-hold", o->web_o.hold_ns)},
        {FE_OPT_STR_("--replay", o->replay)},
        {FE_OPT_FN_("--partition-report", partition_report_opt, o)},
        {FE_OPT_STR_("--partition", o->partition)},
        {FE_OPT_U32MAX_("--threads", o->threads, FE_SIM_MAX_PARTS), .what = "thread count"},
        {FE_OPT_FLAG_("--mpi", o->mpi)},
        {0},
    };
    const struct fe_opt *const tables[] = {opts, NULL};
    const struct fe_cli cli = {
        .cmd = "sim", .tables = tables, .positional = scenario_arg, .ctx = o};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    return check_sources(o);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Applies --cc, --param, --set, --seed, --ns3-compat to the loaded scenario. */
static int apply_opts(const struct opts *o, struct fe_sim_scenario *sc)
{
    char err[512] = "";
    if (o->cc) {
        bool none = !strcmp(o->cc, "none");
        for (uint32_t i = 0; i < sc->n_cc; i++) {
            if (fe_sim_scenario_set_cc(sc, (int)i, none ? NULL : o->cc, NULL, err, sizeof(err)) <
                0) {
                fprintf(stderr, "feroce sim: %s\n", err);
                return -1;
            }
        }
    }
    for (int k = 0; k < o->n_params; k++) {
        for (uint32_t i = 0; i < sc->n_cc; i++) {
            struct fe_sim_cc *c = &sc->cc[i];
            if (!c->algo) {
                fprintf(stderr, "feroce sim: --param %s: no congestion control (use --cc)\n",
                        o->params[k]);
                return -1;
            }
            if (fe_cc_params_parse(&c->params, o->params[k], err, sizeof(err))) {
                fprintf(stderr, "feroce sim: --param %s: %s\n", o->params[k], err);
                return -1;
            }
        }
    }
    for (int k = 0; k < o->n_sets; k++) {
        if (fe_sim_scenario_set(sc, o->sets[k], err, sizeof(err))) {
            fprintf(stderr, "feroce sim: --set %s: %s\n", o->sets[k], err);
            return -1;
        }
    }
    if (o->have_seed) sc->seed = o->seed;
    if (o->ns3) fe_sim_scenario_ns3_compat(sc);
    return 0;
}

/* The ETA: from the share of all flows' bytes received, or of the simulated time to end_ns
 * (--until, or the scenario's stop time) when that is further along. */
static void progress_line(struct fe_sim *sim, uint64_t t0, uint64_t total_bytes, uint64_t end_ns)
{
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    double wall = (fe_wall_ns() - t0) / 1e9;
    uint64_t done = 0;
    for (uint32_t i = 0; i < fe_sim_n_flows(sim); i++) {
        struct fe_sim_flow_stats fs;
        fe_sim_flow_stats(sim, i, &fs);
        done += fs.rx_bytes;
    }
    double bytes_frac = total_bytes ? (double)done / (double)total_bytes : 0, frac = bytes_frac;
    if (end_ns != FE_SIM_NO_TIME && end_ns && (double)st.now_ns / (double)end_ns > frac)
        frac = (double)st.now_ns / (double)end_ns;
    char eta[32] = "?";
    if (frac > 0.001) snprintf(eta, sizeof(eta), "%.1f s", wall * (1 - frac) / frac);
    fprintf(stderr, "\rsim %.3f ms  %.1f M events  %.1f M events/s  %.0f %% of bytes  ETA %s   ",
            st.now_ns / 1e6, st.events / 1e6, wall > 0 ? st.events / 1e6 / wall : 0,
            bytes_frac * 100, eta);
}

/* Every flow that is not in the background has completed (ns3-roce's end of the run). */
static bool foreground_done(const struct fe_sim *sim, const struct fe_sim_ns3roce_info *ri)
{
    for (uint32_t i = 0; i < ri->n_flows && i < fe_sim_n_flows(sim); i++) {
        struct fe_sim_flow_stats fs;
        if (ri->background[i]) continue;
        fe_sim_flow_stats(sim, i, &fs);
        if (!fs.done) return false;
    }
    return true;
}

/* One simulation run: the options, the simulator and the files it writes. */
struct sim_run {
    struct opts o;
    struct fe_sim_hpcc_files hf;
    struct fe_sim_ns3roce_info ri;
    struct fe_sim *sim;
    struct fe_sim_trace *tr;
    struct fe_web_sim *web; /* --web */
    FILE *pfc;
    const char *fct_path, *pfc_path;
    bool fg_stop, progress;
    int mpi_rank; /* --mpi: this process's */
    uint64_t total_bytes, end_ns, wall_ns;
    int r; /* < 0: the run or one of its outputs failed */
};

/* The scenario from a built-in name, a YAML file, an HPCC or an ns3-roce config. */
static int load_scenario(struct sim_run *s, struct fe_sim_scenario *sc, char *err, size_t cap)
{
    const struct opts *o = &s->o;
    if (o->hpcc) return fe_sim_hpcc_load(o->hpcc, o->topology, o->flows, sc, &s->hf, err, cap);
    if (o->roce) {
        struct fe_sim_ns3roce_opts ro = {.skip_unsupported = o->skip_unsupported, .warn = stderr};
        return fe_sim_ns3roce_load(o->roce, &ro, sc, &s->ri, err, cap);
    }
    if (ends_with(o->scenario, ".yaml") || ends_with(o->scenario, ".yml") ||
        strchr(o->scenario, '/'))
        return fe_sim_scenario_load_yaml(o->scenario, sc, err, cap);
    return fe_sim_builtin_load(o->scenario, sc, err, cap);
}

/* Loads the scenario, applies the options and creates the simulator: 0, or an exit code. */
static int create_sim(struct sim_run *s)
{
    struct fe_sim_scenario sc;
    char err[512] = "";
    int rc;
    if (s->o.plot && fe_sim_plot_check(s->o.plot, err, sizeof(err))) { /* now, not after the run */
        fprintf(stderr, "feroce sim: %s\n", err);
        return 2;
    }
    if (load_scenario(s, &sc, err, sizeof(err))) {
        fprintf(stderr, "feroce sim: %s\n", err);
        return 1;
    }
    if (apply_opts(&s->o, &sc)) {
        fe_sim_scenario_free(&sc);
        return 2;
    }
    /* ns3-roce: with background flows and no stop time, the run ends when the foreground
     * flows are done (checked every 10 us of simulated time) */
    s->fg_stop = s->ri.n_background && sc.stop_ns == FE_SIM_NO_TIME;
    s->sim = fe_sim_create(&sc, &rc, err, sizeof(err));
    s->end_ns = s->o.until_ns < sc.stop_ns ? s->o.until_ns : sc.stop_ns;
    for (uint32_t i = 0; i < sc.n_flows; i++) s->total_bytes += sc.flows[i].bytes;
    fe_sim_scenario_free(&sc);
    if (!s->sim) {
        fprintf(stderr, "feroce sim: %s\n", err);
        return 1;
    }
    if (s->o.queue_set && (rc = fe_sim_set_queue(s->sim, s->o.queue)) != 0) {
        fprintf(stderr, "feroce sim: --queue: %s\n", fe_strerror(rc));
        return 1;
    }
    return 0;
}

/* Why the run cannot be cut into parts by the options, NULL when it can. A trace's samples are
 * taken between fe_sim_run calls, when every part's thread has stopped; over MPI the queues and
 * the CC states they read are in their own processes. */
static const char *parallel_blocked(const struct opts *o)
{
    if ((o->trace || o->plot) && o->mpi)
        return "--trace and --plot read every node's state, kept by its own process";
    if (o->web && o->mpi) return "--web reads every node's state, kept by its own process";
    if (o->n_report) return "--partition-report counts a sequential run";
    return NULL;
}

/* The parts: --partition's file, or the automatic partition into n (as many as it fills). */
static int make_partition(struct sim_run *s, uint32_t n, struct fe_sim_partition *p, char *err,
                          size_t cap)
{
    if (s->o.partition) return fe_sim_partition_load(s->sim, s->o.partition, p, err, cap);
    int rc = fe_sim_partition_auto(s->sim, n, p, err, cap);
    if (rc) return rc;
    struct fe_sim_partition_stats st;
    fe_sim_partition_stats(s->sim, p, &st);
    if (st.used_parts >= n || st.used_parts < 2) return 0;
    fe_sim_partition_free(p);
    return fe_sim_partition_auto(s->sim, st.used_parts, p, err, cap);
}

/* --threads (or its default: one below 256 ports, else the cores): 0, or an exit code. */
static int setup_threads(struct sim_run *s)
{
    uint32_t n = s->o.threads;
    bool asked = n != 0 || s->o.partition;
    if (!n && s->o.partition) n = 2;
    if (!n) {
        uint32_t ports = 0;
        for (uint32_t i = 0; i < fe_sim_n_nodes(s->sim); i++) ports += fe_sim_node_ports(s->sim, i);
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n = ports >= 256 && cores > 1 ? (uint32_t)cores : 1;
    }
    if (n <= 1) return 0;
    const char *no = parallel_blocked(&s->o);
    char why[512] = "";
    struct fe_sim_partition p;
    if (!no) {
        int rc = make_partition(s, n, &p, why, sizeof(why));
        if (rc) {
            fprintf(stderr, "feroce sim: %s\n", why);
            return rc == FE_EINVAL ? 2 : 1;
        }
        rc = fe_sim_set_parallel(s->sim, &p, why, sizeof(why));
        fe_sim_partition_free(&p);
        if (rc && rc != FE_ENOTSUP) {
            fprintf(stderr, "feroce sim: %s\n", why);
            return 1;
        }
        if (!rc) return 0;
        no = why;
    }
    if (asked) fprintf(stderr, "feroce sim: --threads %u: running on one thread: %s\n", n, no);
    return 0;
}

/* --mpi: the parts are the processes (rank r simulates part r); what cannot be cut is refused
 * (every rank decides alike, rank 0 says why); only rank 0 writes (its stdout, the HPCC files).
 * 0, or an exit code (every rank gets the same). */
static int setup_mpi(struct sim_run *s, int rank, int size)
{
    if (size == 1) return 0; /* mpirun -np 1: the sequential run */
    const char *no =
        s->o.threads ? "--threads: the parts are the processes" : parallel_blocked(&s->o);
    if (no) {
        if (!rank) fprintf(stderr, "feroce sim: --mpi: %s\n", no);
        return 2;
    }
    if (rank) {
        s->fct_path = NULL;
        if (!freopen("/dev/null", "w", stdout)) return 1;
    }
    struct fe_sim_partition p;
    char why[512] = "";
    int rc = s->o.partition ? fe_sim_partition_load(s->sim, s->o.partition, &p, why, sizeof(why))
                            : fe_sim_partition_auto(s->sim, (uint32_t)size, &p, why, sizeof(why));
    if (!rc) {
        rc = fe_sim_set_mpi(s->sim, &p, why, sizeof(why));
        fe_sim_partition_free(&p);
    }
    if (rc) {
        if (!rank) fprintf(stderr, "feroce sim: --mpi: %s\n", why);
        return rc == FE_ENOTSUP || rc == FE_EINVAL ? 2 : 1;
    }
    return 0;
}

/* Below this many events per part per window a barrier (two cache-line hand-overs, a futex
 * sleep when the other thread is not running) costs about what the window's work does. */
#define SIM_FEW_EVENTS_PER_WINDOW 50

/* When the threads mostly waited, say why it likely was: windows too small for the barrier
 * (a small fabric: one thread is faster), or the other thread not running (a loaded machine). */
static void print_parallel_hint(const struct fe_sim_par_info *pi)
{
    uint32_t k = pi->parts < FE_SIM_MAX_INFO_PARTS ? pi->parts : FE_SIM_MAX_INFO_PARTS;
    uint64_t wait_ns = 0, events = 0;
    for (uint32_t j = 0; j < k; j++) {
        wait_ns += pi->wait_ns[j];
        events += pi->events[j];
    }
    if (!k || !pi->wall_ns || !pi->windows[0] || 2 * wait_ns < (uint64_t)k * pi->wall_ns) return;
    double per_window = (double)events / k / (double)pi->windows[0];
    if (per_window < SIM_FEW_EVENTS_PER_WINDOW)
        fprintf(stderr,
                "feroce sim: the threads waited most of the run, with %.1f events per part per "
                "%llu ns window: too few to pay for a barrier, one thread is faster here (the "
                "default runs fabrics below 256 ports on one)\n",
                per_window, (unsigned long long)pi->grid_ns);
    else
        fprintf(stderr,
                "feroce sim: the threads waited most of the run, with %.1f events per part per "
                "window: the machine is likely loaded (a waiting thread sleeps while the other "
                "is not running)\n",
                per_window);
}

/* With --threads or --mpi: the parts, the windows and barriers, and each part's events
 * (stderr; over MPI rank 0's, after a collective). */
static void print_parallel(const struct sim_run *s)
{
    struct fe_sim_par_info pi;
    if (s->o.mpi)
        fe_sim_mpi_info(s->sim, &pi);
    else
        fe_sim_parallel_info(s->sim, &pi);
    if (!pi.parts || (!s->o.threads && !s->o.partition && !s->o.mpi) || s->mpi_rank) return;
    fprintf(stderr, "%s: %u parts, grid %llu ns, lookahead %llu ns, %llu barriers; events",
            s->o.mpi ? "mpi" : "parallel", pi.parts, (unsigned long long)pi.grid_ns,
            (unsigned long long)pi.lookahead_ns, (unsigned long long)pi.barriers);
    for (uint32_t j = 0; j < pi.parts && j < FE_SIM_MAX_INFO_PARTS; j++)
        fprintf(stderr, " %llu", (unsigned long long)pi.events[j]);
    fprintf(stderr, "; windows %llu; frames between parts", (unsigned long long)pi.windows[0]);
    for (uint32_t j = 0; j < pi.parts && j < FE_SIM_MAX_INFO_PARTS; j++)
        fprintf(stderr, " %llu", (unsigned long long)pi.frames_out[j]);
    fprintf(stderr, "\n");
    if (!s->o.mpi) fe_sim_parallel_print_times(stderr, "parallel: ", &pi); /* threads' times */
    if (!s->o.mpi) print_parallel_hint(&pi);
}

/* The PFC log (written as the run goes) and the trace: 0, or -1 after a message. */
static int open_outputs(struct sim_run *s)
{
    const struct opts *o = &s->o;
    s->fct_path = o->fct ? o->fct : s->hf.fct_out[0] ? s->hf.fct_out : NULL;
    s->pfc_path = o->pfc ? o->pfc : s->hf.pfc_out[0] ? s->hf.pfc_out : NULL;
    if (s->pfc_path) {
        /* over MPI every rank keeps its part's lines and merges them all; rank 0 writes them */
        s->pfc = fopen(s->mpi_rank ? "/dev/null" : s->pfc_path, "w");
        if (!s->pfc) {
            fprintf(stderr, "feroce sim: cannot write %s\n", s->pfc_path);
            return -1;
        }
        fe_sim_hpcc_log_pfc(s->sim, s->pfc);
    }
    if (o->trace || o->plot) {
        char err[512] = "";
        s->tr = fe_sim_trace_open(s->sim, o->trace, o->trace_interval_ns, err, sizeof(err));
        if (!s->tr) {
            fprintf(stderr, "feroce sim: %s\n", err);
            return -1;
        }
    }
    return 0;
}

/* The dashboard (--web), started once the run is set up: a run refused (over MPI) does not
 * leave a server holding a page of nothing. 0, or -1 after a message. */
static int start_web(struct sim_run *s)
{
    const struct opts *o = &s->o;
    if (!o->web) return 0;
    char err[512] = "";
    struct fe_web_sim_opts wo = o->web_o;
    wo.addr = o->web;
    wo.interval_ns = o->trace_interval_ns;
    s->web = fe_web_sim_start(s->sim, &wo, err, sizeof(err));
    if (s->web) return 0;
    fprintf(stderr, "feroce sim: %s\n", err);
    return -1;
}

/* The simulated time to run to next: the trace's next sample, the progress line's next
 * look, the ns3-roce foreground check, --until. */
static uint64_t next_stop(const struct sim_run *s)
{
    uint64_t step = FE_SIM_NO_TIME, now = fe_sim_now(s->sim);
    if (s->tr) step = fe_sim_trace_next(s->tr);
    if (s->web && fe_web_sim_next(s->web) < step) step = fe_web_sim_next(s->web);
    if (s->progress && now + 200000 < step) step = now + 200000;
    if (s->fg_stop && now + 10000 < step) step = now + 10000;
    if (s->o.until_ns < step) step = s->o.until_ns;
    return step;
}

/* Over MPI the ranks agreed on the rank that failed first: rank 0 names it and why, alone. */
static void print_failure(const struct sim_run *s)
{
    char why[256];
    if (s->o.mpi && fe_sim_mpi_failure(s->sim, why, sizeof(why)) >= 0) {
        if (!s->mpi_rank) fprintf(stderr, "feroce sim: --mpi: %s\n", why);
        return;
    }
    fprintf(stderr, "feroce sim: simulation failed: %s\n", fe_strerror(s->r));
}

static void run_loop(struct sim_run *s)
{
    s->progress = s->o.progress == 1 || (s->o.progress == -1 && isatty(2));
    uint64_t t0 = fe_wall_ns(), last_print = t0;
    for (;;) {
        s->r = fe_sim_run(s->sim, next_stop(s));
        if (s->r < 0) break;
        if (s->tr && fe_sim_now(s->sim) >= fe_sim_trace_next(s->tr)) fe_sim_trace_sample(s->tr);
        if (s->web && fe_sim_now(s->sim) >= fe_web_sim_next(s->web)) fe_web_sim_sample(s->web);
        if (s->progress && fe_wall_ns() - last_print > 250000000) {
            last_print = fe_wall_ns();
            progress_line(s->sim, t0, s->total_bytes, s->end_ns);
        }
        if (s->r == 1 || fe_sim_now(s->sim) >= s->o.until_ns) break;
        if (fe_cli_signals) break; /* --web catches Ctrl-C: the run ends here, reported */
        if (s->fg_stop && foreground_done(s->sim, &s->ri)) break;
    }
    s->wall_ns = fe_wall_ns() - t0;
    if (s->progress) fprintf(stderr, "\r%*s\r", 100, "");
    if (s->r < 0) print_failure(s);
}

/* The plot and the trace file, whose last rows are written on close. */
static void close_trace(struct sim_run *s)
{
    char err[512] = "";
    if (s->o.plot && fe_sim_trace_plot(s->tr, s->o.plot, err, sizeof(err))) {
        fprintf(stderr, "feroce sim: %s\n", err);
        s->r = -1;
    }
    if (fe_sim_trace_close(s->tr)) {
        fprintf(stderr, "feroce sim: cannot write %s\n", s->o.trace);
        s->r = -1;
    }
    s->tr = NULL;
}

/* HPCC's fct.txt, and the PFC log's last writes. */
static void write_hpcc_outputs(struct sim_run *s)
{
    if (s->fct_path) {
        FILE *f = fopen(s->fct_path, "w");
        if (f) fe_sim_hpcc_write_fct(s->sim, f);
        if (!f || ferror(f) | fclose(f)) {
            fprintf(stderr, "feroce sim: cannot write %s\n", s->fct_path);
            s->r = -1;
        }
    }
    if (s->pfc && (ferror(s->pfc) | fclose(s->pfc))) {
        fprintf(stderr, "feroce sim: cannot write %s\n", s->pfc_path);
        s->r = -1;
    }
    s->pfc = NULL;
    /* ns-3 users look for these beside their files: say where they went */
    if (!s->o.json && s->r >= 0 && (s->fct_path || s->pfc_path)) {
        printf("HPCC outputs:");
        if (s->fct_path) printf(" flow completions in %s", s->fct_path);
        if (s->pfc_path) printf("%s PFC events in %s", s->fct_path ? "," : "", s->pfc_path);
        printf("\n");
    }
}

/* --partition-report: each K asked for (or the --partition file's), with the run's counts. */
static void print_partitions(struct sim_run *s)
{
    uint32_t n = s->o.partition ? 1 : s->o.n_report;
    for (uint32_t i = 0; i < n; i++) {
        struct fe_sim_partition p;
        char err[512] = "";
        int rc = s->o.partition
                     ? fe_sim_partition_load(s->sim, s->o.partition, &p, err, sizeof(err))
                     : fe_sim_partition_auto(s->sim, s->o.report_k[i], &p, err, sizeof(err));
        if (rc) {
            fprintf(stderr, "feroce sim: %s\n", err);
            s->r = -1;
            return;
        }
        fe_sim_partition_report(stdout, s->sim, &p);
        fe_sim_partition_free(&p);
    }
}

static void print_report(struct sim_run *s)
{
    if (s->tr) close_trace(s);
    struct fe_sim_report_opts ro = {
        .json = s->o.json, .all_flows = s->o.all_flows, .wall_ns = s->wall_ns};
    fe_sim_report(stdout, s->sim, &ro);
    if (s->o.n_report) print_partitions(s);
    write_hpcc_outputs(s);
}

static int run(int argc, char **argv)
{
    struct sim_run s;
    memset(&s, 0, sizeof(s));
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--list")) return list_builtins();
    if (parse_args(argc, argv, &s.o)) return 2;
    if (s.o.replay) {
        s.o.web_o.addr = s.o.web;
        fe_cli_catch_stop_signals();
        return fe_web_sim_replay(s.o.replay, &s.o.web_o);
    }
    if (s.o.web) fe_cli_catch_stop_signals();
    int rank = 0, size = 1;
    if (s.o.mpi) {
        char why[512] = "";
        if (fe_sim_mpi_init(&rank, &size, why, sizeof(why))) {
            fprintf(stderr, "feroce sim: %s\n", why);
            return 2;
        }
        s.o.progress = 0;
        s.mpi_rank = rank;
    }
    int rc = create_sim(&s);
    if (!rc && open_outputs(&s)) rc = 1;
    if (!rc) rc = s.o.mpi ? setup_mpi(&s, rank, size) : setup_threads(&s);
    if (!rc && start_web(&s)) rc = 1;
    if (!rc) {
        run_loop(&s);
        print_parallel(&s);
        print_report(&s);
        rc = s.r < 0 ? 1 : 0;
    }
    fe_web_sim_finish(s.web);
    if (s.tr) fe_sim_trace_close(s.tr);
    if (s.pfc) fclose(s.pfc);
    fe_sim_destroy(s.sim);
    fe_sim_ns3roce_info_free(&s.ri);
    if (s.o.mpi) fe_sim_mpi_finalize();
    return rc;
}

const struct fe_cmd fe_cmd_sim = {
    "sim", "packet-level simulation of a RoCEv2 fabric (PFC, ECN, DCQCN)", usage_text, run};
