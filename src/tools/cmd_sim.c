/* feroce sim: the packet-level simulator (src/sim). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feroce/err.h"
#include "feroce/sim.h"
#include "tools/cli.h"

static const char usage_text[] =
    "usage: feroce sim SCENARIO|FILE.yaml [options]\n"
    "       feroce sim --hpcc CONFIG.txt [--topology FILE] [--flows FILE] [options]\n"
    "       feroce sim --ns3-roce CONFIG.json [--skip-unsupported-flows] [options]\n"
    "Runs a packet-level simulation of a RoCEv2 fabric (PFC, ECN/RED, shared-buffer switches)\n"
    "whose hosts run feroce's real transport and congestion control.\n\n"
    "Built-in scenarios (design.md section 7): run 'feroce sim --list'.\n\n"
    "options:\n"
    "  --cc NAME            congestion control of every flow (feroce cc lists them)\n"
    "  --param NAME=VALUE   CC parameter for every flow's profile (repeatable, or a,b lists)\n"
    "  --set KEY=VALUE      scenario setting, as in the YAML file: switch.buffer=4MB,\n"
    "                       host.mtu=1024, link.delay=2us, flow.bytes=55MB ... (repeatable)\n"
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
    const char *params[MAX_ARGS];
    const char *sets[MAX_ARGS];
    int n_params, n_sets;
    bool ns3, json, all_flows, have_seed, skip_unsupported;
    int progress; /* -1 auto */
    uint64_t seed, until_ns, trace_interval_ns;
    enum fe_sim_queue_kind queue;
    bool queue_set; /* --queue given (else the simulator's choice) */
};

static int need(int argc, char **argv, int i)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "feroce sim: %s needs a value\n", argv[i]);
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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define VAL(field)                                                                                 \
    do {                                                                                           \
        if (need(argc, argv, i)) return -1;                                                        \
        o->field = argv[++i];                                                                      \
    } while (0)
        if (!strcmp(a, "--cc"))
            VAL(cc);
        else if (!strcmp(a, "--hpcc"))
            VAL(hpcc);
        else if (!strcmp(a, "--ns3-roce"))
            VAL(roce);
        else if (!strcmp(a, "--skip-unsupported-flows"))
            o->skip_unsupported = true;
        else if (!strcmp(a, "--topology"))
            VAL(topology);
        else if (!strcmp(a, "--flows"))
            VAL(flows);
        else if (!strcmp(a, "--trace"))
            VAL(trace);
        else if (!strcmp(a, "--plot"))
            VAL(plot);
        else if (!strcmp(a, "--fct"))
            VAL(fct);
        else if (!strcmp(a, "--pfc"))
            VAL(pfc);
        else if (!strcmp(a, "--param") || !strcmp(a, "--set")) {
            if (need(argc, argv, i)) return -1;
            bool p = !strcmp(a, "--param");
            if ((p ? o->n_params : o->n_sets) >= MAX_ARGS) {
                fprintf(stderr, "feroce sim: too many %s\n", a);
                return -1;
            }
            if (p)
                o->params[o->n_params++] = argv[++i];
            else
                o->sets[o->n_sets++] = argv[++i];
        } else if (!strcmp(a, "--ns3-compat"))
            o->ns3 = true;
        else if (!strcmp(a, "--json"))
            o->json = true;
        else if (!strcmp(a, "--all-flows"))
            o->all_flows = true;
        else if (!strcmp(a, "--progress"))
            o->progress = 1;
        else if (!strcmp(a, "--no-progress"))
            o->progress = 0;
        else if (!strcmp(a, "--seed")) {
            if (need(argc, argv, i) || fe_parse_u64(argv[++i], &o->seed, "seed")) return -1;
            o->have_seed = true;
        } else if (!strcmp(a, "--until")) {
            if (need(argc, argv, i) || fe_parse_duration_ns(argv[++i], &o->until_ns, "time"))
                return -1;
        } else if (!strcmp(a, "--trace-interval")) {
            if (need(argc, argv, i) ||
                fe_parse_duration_ns(argv[++i], &o->trace_interval_ns, "trace interval"))
                return -1;
            if (!o->trace_interval_ns) {
                fprintf(stderr, "feroce sim: the trace interval must be > 0\n");
                return -1;
            }
        } else if (!strcmp(a, "--queue")) {
            if (need(argc, argv, i)) return -1;
            const char *q = argv[++i];
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
        } else if (a[0] == '-') {
            fprintf(stderr, "feroce sim: unknown option '%s' (feroce sim --help)\n", a);
            return -1;
        } else if (!o->scenario) {
            o->scenario = a;
        } else {
            fprintf(stderr, "feroce sim: more than one scenario given ('%s')\n", a);
            return -1;
        }
#undef VAL
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

static int run(int argc, char **argv)
{
    struct opts o;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--list")) return list_builtins();
    if (parse_args(argc, argv, &o)) return 2;
    struct fe_sim_scenario sc;
    char err[512] = "";
    int rc;
    if (o.plot && fe_sim_plot_check(o.plot, err, sizeof(err))) { /* now, not after the run */
        fprintf(stderr, "feroce sim: %s\n", err);
        return 2;
    }
    struct fe_sim_hpcc_files hf;
    memset(&hf, 0, sizeof(hf));
    struct fe_sim_ns3roce_info ri;
    memset(&ri, 0, sizeof(ri));
    if (o.hpcc) {
        rc = fe_sim_hpcc_load(o.hpcc, o.topology, o.flows, &sc, &hf, err, sizeof(err));
    } else if (o.roce) {
        struct fe_sim_ns3roce_opts ro = {.skip_unsupported = o.skip_unsupported, .warn = stderr};
        rc = fe_sim_ns3roce_load(o.roce, &ro, &sc, &ri, err, sizeof(err));
    } else if (ends_with(o.scenario, ".yaml") || ends_with(o.scenario, ".yml") ||
               strchr(o.scenario, '/'))
        rc = fe_sim_scenario_load_yaml(o.scenario, &sc, err, sizeof(err));
    else
        rc = fe_sim_builtin_load(o.scenario, &sc, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "feroce sim: %s\n", err);
        return 1;
    }
    if (apply_opts(&o, &sc)) {
        fe_sim_scenario_free(&sc);
        fe_sim_ns3roce_info_free(&ri);
        return 2;
    }
    /* ns3-roce: with background flows and no stop time, the run ends when the foreground
     * flows are done (checked every 10 us of simulated time) */
    bool fg_stop = ri.n_background && sc.stop_ns == FE_SIM_NO_TIME;
    struct fe_sim *sim = fe_sim_create(&sc, &rc, err, sizeof(err));
    uint64_t total = 0, end_ns = o.until_ns < sc.stop_ns ? o.until_ns : sc.stop_ns;
    for (uint32_t i = 0; i < sc.n_flows; i++) total += sc.flows[i].bytes;
    fe_sim_scenario_free(&sc);
    if (!sim) {
        fprintf(stderr, "feroce sim: %s\n", err);
        fe_sim_ns3roce_info_free(&ri);
        return 1;
    }
    if (o.queue_set) fe_sim_set_queue(sim, o.queue);
    const char *fct_path = o.fct ? o.fct : hf.fct_out[0] ? hf.fct_out : NULL;
    const char *pfc_path = o.pfc ? o.pfc : hf.pfc_out[0] ? hf.pfc_out : NULL;
    FILE *pfc = NULL;
    if (pfc_path) {
        pfc = fopen(pfc_path, "w");
        if (!pfc) {
            fprintf(stderr, "feroce sim: cannot write %s\n", pfc_path);
            fe_sim_destroy(sim);
            return 1;
        }
        fe_sim_hpcc_log_pfc(sim, pfc);
    }
    struct fe_sim_trace *tr = NULL;
    if (o.trace || o.plot) {
        tr = fe_sim_trace_open(sim, o.trace, o.trace_interval_ns, err, sizeof(err));
        if (!tr) {
            fprintf(stderr, "feroce sim: %s\n", err);
            if (pfc) fclose(pfc);
            fe_sim_destroy(sim);
            return 1;
        }
    }
    bool progress = o.progress == 1 || (o.progress == -1 && isatty(2));
    uint64_t t0 = fe_wall_ns(), last_print = t0;
    int r = 0;
    for (;;) {
        uint64_t step = FE_SIM_NO_TIME;
        if (tr) step = fe_sim_trace_next(tr);
        if (progress) {
            uint64_t p = fe_sim_now(sim) + 200000;
            if (p < step) step = p;
        }
        if (fg_stop && fe_sim_now(sim) + 10000 < step) step = fe_sim_now(sim) + 10000;
        if (o.until_ns < step) step = o.until_ns;
        r = fe_sim_run(sim, step);
        if (r < 0) break;
        if (tr && fe_sim_now(sim) >= fe_sim_trace_next(tr)) fe_sim_trace_sample(tr);
        if (progress && fe_wall_ns() - last_print > 250000000) {
            last_print = fe_wall_ns();
            progress_line(sim, t0, total, end_ns);
        }
        if (r == 1 || fe_sim_now(sim) >= o.until_ns) break;
        if (fg_stop && foreground_done(sim, &ri)) break;
    }
    uint64_t wall = fe_wall_ns() - t0;
    if (progress) fprintf(stderr, "\r%*s\r", 100, "");
    if (r < 0) {
        fprintf(stderr, "feroce sim: simulation failed: %s\n", fe_strerror(r));
    }
    if (tr) {
        if (o.plot && fe_sim_trace_plot(tr, o.plot, err, sizeof(err))) {
            fprintf(stderr, "feroce sim: %s\n", err);
            r = -1;
        }
        if (fe_sim_trace_close(tr)) {
            fprintf(stderr, "feroce sim: cannot write %s\n", o.trace);
            r = -1;
        }
    }
    struct fe_sim_report_opts ro = {.json = o.json, .all_flows = o.all_flows, .wall_ns = wall};
    fe_sim_report(stdout, sim, &ro);
    if (fct_path) {
        FILE *f = fopen(fct_path, "w");
        if (f) fe_sim_hpcc_write_fct(sim, f);
        if (!f || ferror(f) | fclose(f)) {
            fprintf(stderr, "feroce sim: cannot write %s\n", fct_path);
            r = -1;
        }
    }
    if (pfc && (ferror(pfc) | fclose(pfc))) {
        fprintf(stderr, "feroce sim: cannot write %s\n", pfc_path);
        r = -1;
    }
    /* ns-3 users look for these beside their files: say where they went */
    if (!o.json && r >= 0 && (fct_path || pfc_path)) {
        printf("HPCC outputs:");
        if (fct_path) printf(" flow completions in %s", fct_path);
        if (pfc_path) printf("%s PFC events in %s", fct_path ? "," : "", pfc_path);
        printf("\n");
    }
    fe_sim_destroy(sim);
    fe_sim_ns3roce_info_free(&ri);
    return r < 0 ? 1 : 0;
}

const struct fe_cmd fe_cmd_sim = {
    "sim", "packet-level simulation of a RoCEv2 fabric (PFC, ECN, DCQCN)", usage_text, run};
