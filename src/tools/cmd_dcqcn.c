/* feroce dcqcn: the DCQCN reaction point as a golden model. Feeds a schedule of CNP arrivals
 * and a sending pattern to one reaction point and writes CSV of Rc, Rt, alpha and the stage
 * counters, exactly and deterministically (integer nanoseconds, the same code as the simulator
 * and the socket tools), so firmware engineers can diff it against their RTL. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/cc.h"
#include "tools/cli.h"
#include "tools/dcqcn_surf.h"

#define MAX_PARAM_ARGS 64

struct cnp_src {
    uint64_t *file_t; /* sorted CNP times from --cnp-file */
    size_t file_n, file_i;
    uint64_t every_ns, start_ns, stop_ns, next_every; /* --cnp-every */
    uint64_t mon_window_ns, mon_bps;                  /* --monitor */
};

static const char usage_text[] =
    "usage: feroce dcqcn [--profile P] [--param NAME=VALUE[,NAME=VALUE...]]... [--line-rate R]\n"
    "                    [--send-rate rc|0|R] [--pkt-bytes N]\n"
    "                    [--cnp-file F] [--cnp-every T [--cnp-start T] [--cnp-stop T]]\n"
    "                    [--monitor WINDOW:RATE] --until T [--step T] [--csv FILE]\n"
    "\n"
    "Runs one DCQCN reaction point through a schedule of CNP arrivals and prints CSV of its\n"
    "state: time_ns, Rc, Rt, alpha, T (timer increases since the last cut), BC (byte-counter\n"
    "increases), and what happened at that time. Integer nanoseconds, exact and deterministic:\n"
    "the golden model to compare an RTL reaction point against. A header of '#' lines echoes the\n"
    "profile, every parameter with its value and unit, and the schedule.\n"
    "\n"
    "  --profile P      connectx (default; algorithm 'dcqcn': Mb/s, alpha Q0.10, timer and byte\n"
    "                   counter, first CNP sets alpha and does not cut), surf (algorithm\n"
    "                   'dcqcn-surf': the SURF/LST AdvCam firmware, B/s registers, timer only,\n"
    "                   first CNP cuts), hpcc-ns3 (algorithm 'dcqcn-hpcc-ns3': HPCC's ns-3 model,\n"
    "                   b/s, alpha a double). Each profile has its own units and defaults for the\n"
    "                   ConnectX parameter names; 'feroce cc' lists them.\n"
    "  --param A=V,...  set parameters by name (repeatable), validated against their ranges\n"
    "  --line-rate R    NIC line rate (default 10G); rpg_max_rate 0 means this rate\n"
    "  --send-rate S    what drives on_send (and so the ConnectX byte counter): 'rc' (default)\n"
    "                   sends --pkt-bytes packets paced at the current Rc by the feroce pacer;\n"
    "                   a rate (e.g. 5G) sends at that fixed rate; 0 sends nothing\n"
    "  --pkt-bytes N    bytes per packet given to on_send (default 4096)\n"
    "  --cnp-file F     CNP arrival times, one per line (bare number = ns, or with ns/us/ms/s),\n"
    "                   non-decreasing; '#' starts a comment\n"
    "  --cnp-every T    a CNP every T, from --cnp-start (default 0) to --cnp-stop (default\n"
    "                   --until)\n"
    "  --monitor W:R    the firmware paper's emulated switch: a CNP at the end of every\n"
    "                   tumbling window W in which the bytes sent exceed rate R (e.g. 32us:5G)\n"
    "  --until T        end of the run (required)\n"
    "  --step T         print a row every T instead of at every change and every CNP\n"
    "  --csv FILE       write the CSV to FILE instead of stdout\n"
    "\n"
    "At one nanosecond, timers due run first, then CNPs, then sends; timers that fall on the same\n"
    "nanosecond run in the order they were scheduled (as in ns-3). Time values accept ns, us, ms,\n"
    "s; rates bps, Kbps, Mbps, Gbps (or K, M, G).\n"
    "\n"
    "Example (the SURF firmware's emulated switch check: a CNP when a sender is over 5 Gb/s in\n"
    "a 32 us window):\n"
    "  feroce dcqcn --profile surf --monitor 32us:5G --until 20ms\n"
    "\n" FE_DCQCN_SURF_USAGE;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int load_cnp_file(const char *path, struct cnp_src *c)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "feroce dcqcn: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[256];
    size_t cap = 0, lineno = 0;
    uint64_t prev = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *s = line, *e;
        while (*s == ' ' || *s == '\t') s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
        if (!*s) continue;
        uint64_t t;
        char what[300];
        snprintf(what, sizeof what, "CNP time on line %zu of %s", lineno, path);
        if (fe_parse_duration_ns(s, &t, what)) goto fail;
        if (c->file_n && t < prev) {
            fprintf(stderr,
                    "feroce dcqcn: %s:%zu: CNP times must not decrease (%s after %llu ns)\n", path,
                    lineno, s, (unsigned long long)prev);
            goto fail;
        }
        if (c->file_n == cap) {
            cap = cap ? cap * 2 : 256;
            uint64_t *n = realloc(c->file_t, cap * sizeof *n);
            if (!n) goto fail;
            c->file_t = n;
        }
        c->file_t[c->file_n++] = prev = t;
    }
    fclose(f);
    qsort(c->file_t, c->file_n, sizeof *c->file_t, cmp_u64); /* already sorted: a no-op */
    return 0;
fail:
    fclose(f);
    return -1;
}

static uint64_t next_cnp(const struct cnp_src *c)
{
    uint64_t t = UINT64_MAX;
    if (c->file_i < c->file_n) t = c->file_t[c->file_i];
    if (c->every_ns && c->next_every <= c->stop_ns && c->next_every < t) t = c->next_every;
    return t;
}

/* Takes the CNPs due at exactly t; returns how many. */
static int take_cnps(struct cnp_src *c, uint64_t t)
{
    int n = 0;
    while (c->file_i < c->file_n && c->file_t[c->file_i] == t) c->file_i++, n++;
    if (c->every_ns && c->next_every == t && t <= c->stop_ns) {
        n++;
        c->next_every = t > UINT64_MAX - c->every_ns ? UINT64_MAX : t + c->every_ns;
    }
    return n;
}

/* Bits in a window exceed rate x window, exactly: bits > floor(rate x W / 1e9). */
static int over_threshold(uint64_t bytes, uint64_t rate_bps, uint64_t window_ns)
{
    uint64_t lim = (rate_bps / 1000000000u) * window_ns +
                   (rate_bps % 1000000000u) * (window_ns % 1000000000u) / 1000000000u +
                   (rate_bps % 1000000000u) * (window_ns / 1000000000u);
    return bytes * 8 > lim;
}

static void print_num(FILE *o, double v)
{
    if (v > -9e15 && v < 9e15 && v == (double)(int64_t)v)
        fprintf(o, ",%lld", (long long)v);
    else
        fprintf(o, ",%.17g", v);
}

/* What the command line asked for. */
struct dcqcn_opts {
    const char *profile, *csv, *send_rate, *cnp_file;
    const char *param_args[MAX_PARAM_ARGS];
    int n_param_args;
    uint64_t line_bps, until_ns, step_ns, pkt_bytes;
    bool have_until, have_stop;
    struct cnp_src cs;
};

/* One run of the golden model: the reaction point, what drives it and what was printed. */
struct golden {
    const struct dcqcn_opts *o;
    struct cnp_src *cs;
    const struct fe_cc_algo *algo;
    struct fe_cc_params params;
    uint64_t fixed_Bps; /* --send-rate R */
    bool follow_rc;     /* --send-rate rc */
    FILE *out;
    struct fe_cc *cc;
    int idx[5]; /* of Rc, Rt, alpha, T, BC in the algorithm's trace */
    struct fe_pacer pacer;
    uint64_t cur_rate, next_send, mon_end, mon_bytes, next_step;
    bool sending, printed_any;
    double last[5];
    uint64_t rows, cnps, sends;
};

static const char *const trace_cols[5] = {"Rc", "Rt", "alpha", "T", "BC"};

static int add_param(const char *val, void *p)
{
    struct dcqcn_opts *o = p;
    if (o->n_param_args == MAX_PARAM_ARGS) {
        fputs("feroce dcqcn: too many --param options\n", stderr);
        return -1;
    }
    o->param_args[o->n_param_args++] = val;
    return 0;
}

/* --monitor WINDOW:RATE */
static int parse_monitor(const char *v, void *p)
{
    struct cnp_src *cs = p;
    char buf[64];
    const char *colon = strchr(v, ':');
    if (!colon || (size_t)(colon - v) >= sizeof buf) {
        fprintf(stderr, "feroce dcqcn: --monitor wants WINDOW:RATE, got '%s'\n", v);
        return -1;
    }
    memcpy(buf, v, (size_t)(colon - v));
    buf[colon - v] = 0;
    if (fe_parse_duration_ns(buf, &cs->mon_window_ns, "--monitor window") ||
        fe_parse_rate_bps(colon + 1, &cs->mon_bps, "--monitor rate"))
        return -1;
    return 0;
}

static int check_opts(struct dcqcn_opts *o)
{
    if (!o->have_until) {
        fputs("feroce dcqcn: --until is required (e.g. --until 20ms)\n", stderr);
        return -1;
    }
    if (o->pkt_bytes == 0 || o->pkt_bytes > UINT32_MAX) {
        fputs("feroce dcqcn: --pkt-bytes must be 1 .. 4294967295\n", stderr);
        return -1;
    }
    if (o->cs.mon_window_ns == 0 && o->cs.mon_bps) {
        fputs("feroce dcqcn: --monitor window must be > 0\n", stderr);
        return -1;
    }
    if (!o->have_stop) o->cs.stop_ns = o->until_ns;
    o->cs.next_every = o->cs.start_ns;
    return 0;
}

static int parse_opts(int argc, char **argv, struct dcqcn_opts *o)
{
    *o = (struct dcqcn_opts){
        .profile = "connectx", .send_rate = "rc", .line_bps = 10000000000ull, .pkt_bytes = 4096};
    o->cs.stop_ns = UINT64_MAX;
    struct cnp_src *cs = &o->cs;
    const struct fe_opt opts[] = {
        {FE_OPT_STR_("--profile", o->profile)},
        {FE_OPT_FN_("--param", add_param, o)},
        {FE_OPT_RATE_("--line-rate", o->line_bps)},
        {FE_OPT_STR_("--send-rate", o->send_rate)},
        {FE_OPT_SIZE_("--pkt-bytes", o->pkt_bytes)},
        {FE_OPT_STR_("--cnp-file", o->cnp_file)},
        {FE_OPT_TIME_("--cnp-every", cs->every_ns)},
        {FE_OPT_TIME_("--cnp-start", cs->start_ns)},
        {FE_OPT_TIME_("--cnp-stop", cs->stop_ns), .seen = &o->have_stop},
        {FE_OPT_FN_("--monitor", parse_monitor, cs)},
        {FE_OPT_TIME_("--until", o->until_ns), .seen = &o->have_until},
        {FE_OPT_TIME_("--step", o->step_ns)},
        {FE_OPT_STR_("--csv", o->csv)},
        {0},
    };
    const struct fe_opt *const tables[] = {opts, NULL};
    const struct fe_cli cli = {.cmd = "dcqcn", .tables = tables};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    return check_opts(o);
}

/* Every profile runs an algorithm of the DCQCN family, whose trace has the golden model's
 * columns. By name until struct fe_cc_algo says what an algorithm is. */
static bool is_dcqcn_family(const struct fe_cc_algo *algo)
{
    return algo->caps & FE_CC_CAP_DCQCN;
}

/* The profile's algorithm and its parameters, --param applied. */
static int choose_algo(struct golden *g)
{
    const char *profile = g->o->profile;
    const char *algo_name = !strcmp(profile, "connectx")   ? "dcqcn"
                            : !strcmp(profile, "surf")     ? "dcqcn-surf"
                            : !strcmp(profile, "hpcc-ns3") ? "dcqcn-hpcc-ns3"
                                                           : profile;
    g->algo = fe_cc_find(algo_name);
    if (!g->algo || !is_dcqcn_family(g->algo)) {
        fprintf(stderr, "feroce dcqcn: unknown profile '%s' (connectx, surf, hpcc-ns3)\n", profile);
        return -1;
    }
    fe_cc_params_default(&g->params, g->algo);
    for (int k = 0; k < g->o->n_param_args; k++) {
        char err[600];
        if (fe_cc_params_parse(&g->params, g->o->param_args[k], err, sizeof err)) {
            fprintf(stderr, "feroce dcqcn: %s\n", err);
            return -1;
        }
    }
    return 0;
}

/* --send-rate: follow Rc, a fixed rate, or nothing. */
static int choose_sending(struct golden *g)
{
    if (!strcmp(g->o->send_rate, "rc")) {
        g->follow_rc = true;
        return 0;
    }
    uint64_t bps;
    if (fe_parse_rate_bps(g->o->send_rate, &bps, "--send-rate")) return -1;
    g->fixed_Bps = bps / 8;
    return 0;
}

/* The output and the reaction point: 0, 1 (out of memory) or 2 (a usage error). */
static int open_golden(struct golden *g)
{
    const char *csv = g->o->csv;
    if (choose_algo(g) || choose_sending(g)) return 2;
    if (g->o->cnp_file && load_cnp_file(g->o->cnp_file, g->cs)) return 2;
    g->out = stdout;
    if (csv && !(g->out = fopen(csv, "w"))) {
        fprintf(stderr, "feroce dcqcn: %s: %s\n", csv, strerror(errno));
        return 2;
    }
    size_t size = fe_cc_instance_size(g->algo);
    g->cc = aligned_alloc(16, (size + 15) & ~(size_t)15);
    if (!g->cc) {
        fputs("feroce dcqcn: out of memory\n", stderr);
        return 1;
    }
    struct fe_cc_env env = {.line_rate_bps = g->o->line_bps, .mtu_bytes = 4096, .now_ns = 0};
    fe_cc_init(g->cc, &g->params, &env);
    return 0;
}

/* The '#' header: profile, every parameter, the sending pattern and the CNP schedule. */
static void print_header(const struct golden *g)
{
    const struct dcqcn_opts *o = g->o;
    const struct cnp_src *cs = g->cs;
    FILE *out = g->out;
    fprintf(out, "# feroce dcqcn golden model: profile %s (algorithm %s: %s)\n", o->profile,
            g->algo->name, g->algo->summary);
    fprintf(out, "# line_rate_bps %llu\n", (unsigned long long)o->line_bps);
    for (size_t k = 0; k < g->algo->n_params; k++) {
        const struct fe_cc_param *d = &g->algo->params[k];
        fprintf(out, "# param %s = %.17g %s  [%.17g, %.17g]%s  %s\n", d->name, g->params.v[k],
                d->unit, d->min, d->max, g->params.v[k] != d->def ? " (set)" : "", d->help);
    }
    if (g->follow_rc)
        fprintf(out,
                "# send: %llu-byte packets paced at Rc (credit accumulator, burst one packet)\n",
                (unsigned long long)o->pkt_bytes);
    else if (g->fixed_Bps)
        fprintf(out, "# send: %llu-byte packets at a fixed %llu B/s\n",
                (unsigned long long)o->pkt_bytes, (unsigned long long)g->fixed_Bps);
    else
        fputs("# send: nothing (timers only)\n", out);
    if (o->cnp_file) fprintf(out, "# cnp: %zu from file %s\n", cs->file_n, o->cnp_file);
    if (cs->every_ns)
        fprintf(out, "# cnp: every %llu ns from %llu ns to %llu ns\n",
                (unsigned long long)cs->every_ns, (unsigned long long)cs->start_ns,
                (unsigned long long)cs->stop_ns);
    if (cs->mon_window_ns)
        fprintf(out,
                "# cnp: monitor, at the end of each %llu ns window whose bytes exceed %llu b/s\n",
                (unsigned long long)cs->mon_window_ns, (unsigned long long)cs->mon_bps);
    fprintf(out, "# until_ns %llu; rows %s\n", (unsigned long long)o->until_ns,
            o->step_ns ? "every step" : "at every change and every CNP");
    if (o->step_ns) fprintf(out, "# step_ns %llu\n", (unsigned long long)o->step_ns);
}

/* Finds the columns in the algorithm's trace and prints their units and the CSV header. */
static int print_columns(struct golden *g)
{
    struct fe_cc_trace tr[FE_CC_MAX_TRACE];
    int ntr = fe_cc_trace(g->cc, tr, FE_CC_MAX_TRACE);
    for (int c = 0; c < 5; c++) {
        g->idx[c] = -1;
        for (int k = 0; k < ntr; k++)
            if (!strcmp(tr[k].name, trace_cols[c])) g->idx[c] = k;
        if (g->idx[c] < 0) {
            fprintf(stderr, "feroce dcqcn: %s does not trace %s\n", g->algo->name, trace_cols[c]);
            return -1;
        }
    }
    fputs("# units:", g->out);
    for (int c = 0; c < 5; c++) fprintf(g->out, " %s [%s]", trace_cols[c], tr[g->idx[c]].unit);
    fputs("; event: what happened at that time (cnp, timer, send)\n", g->out);
    const char *ru = tr[g->idx[0]].unit;
    const char *rate_sfx = !strcmp(ru, "Mb/s") ? "Mbps" : !strcmp(ru, "B/s") ? "Bps" : "bps";
    const char *alpha_name = tr[g->idx[2]].unit[0] ? "alpha_1024" : "alpha";
    fprintf(g->out, "time_ns,Rc_%s,Rt_%s,%s,T,BC,event\n", rate_sfx, rate_sfx, alpha_name);
    return 0;
}

static void start_loop(struct golden *g)
{
    uint32_t pkt = (uint32_t)g->o->pkt_bytes;
    fe_pacer_init(&g->pacer, g->o->pkt_bytes, 0);
    g->cur_rate = g->follow_rc ? g->cc->out.rate_Bps : g->fixed_Bps;
    g->sending = g->follow_rc || g->fixed_Bps;
    g->next_send = g->sending ? fe_pacer_when(&g->pacer, g->cur_rate, pkt, 0) : UINT64_MAX;
    g->mon_end = g->cs->mon_window_ns ? g->cs->mon_window_ns : UINT64_MAX;
    g->next_step = g->o->step_ns ? 0 : UINT64_MAX;
    for (int c = 0; c < 5; c++) g->last[c] = -1;
}

/* The next time anything happens: a CNP, the timer, a send, the monitor, a step. */
static uint64_t next_event(const struct golden *g)
{
    uint64_t t = next_cnp(g->cs);
    if (g->cc->out.timer_ns < t) t = g->cc->out.timer_ns;
    if (g->next_send < t) t = g->next_send;
    if (g->mon_end < t) t = g->mon_end;
    if (g->next_step < t) t = g->next_step;
    if (!g->printed_any && t > 0) t = 0; /* the initial state is always the first row */
    return t;
}

/* The monitor's window ending at t: 1 when it forges a CNP. */
static int end_monitor_window(struct golden *g, uint64_t t)
{
    if (g->mon_end != t) return 0;
    uint64_t w = g->cs->mon_window_ns;
    int forged = over_threshold(g->mon_bytes, g->cs->mon_bps, w);
    g->mon_bytes = 0;
    g->mon_end = t > UINT64_MAX - w ? UINT64_MAX : t + w;
    return forged;
}

/* Time so far was paid at the old rate. */
static void follow_rate(struct golden *g, uint64_t t)
{
    if (g->follow_rc && g->cc->out.rate_Bps != g->cur_rate) {
        fe_pacer_sync(&g->pacer, g->cur_rate, t);
        g->cur_rate = g->cc->out.rate_Bps;
    }
}

/* The packets due by t: 1 when there was one. */
static int send_due(struct golden *g, uint64_t t)
{
    uint32_t pkt = (uint32_t)g->o->pkt_bytes;
    int sent = 0;
    while (g->sending && g->next_send <= t) {
        fe_pacer_consume(&g->pacer, g->cur_rate, pkt, t);
        fe_cc_on_send(g->cc, t, pkt);
        g->mon_bytes += pkt;
        sent = 1;
        g->sends++;
        follow_rate(g, t);
        g->next_send = fe_pacer_when(&g->pacer, g->cur_rate, pkt, t);
    }
    /* a CNP or timer may have changed the rate since the next send was planned */
    if (g->sending) g->next_send = fe_pacer_when(&g->pacer, g->cur_rate, pkt, t);
    return sent;
}

/* A row when something changed (or at a step): time, the five columns, the events. */
static void print_row(struct golden *g, uint64_t t, int ev_cnp, int ev_timer, int ev_send)
{
    struct fe_cc_trace tr[FE_CC_MAX_TRACE];
    fe_cc_trace(g->cc, tr, FE_CC_MAX_TRACE);
    double now[5];
    int changed = 0;
    for (int c = 0; c < 5; c++) {
        now[c] = tr[g->idx[c]].value;
        changed |= now[c] != g->last[c];
    }
    uint64_t step_ns = g->o->step_ns;
    int at_step = step_ns && t == g->next_step;
    if (at_step) g->next_step = t > UINT64_MAX - step_ns ? UINT64_MAX : t + step_ns;
    if (g->printed_any && !(step_ns ? at_step : changed || ev_cnp)) return;
    fprintf(g->out, "%llu", (unsigned long long)t);
    for (int c = 0; c < 5; c++) print_num(g->out, now[c]);
    char ev[32] = "";
    if (ev_cnp) strcat(ev, "cnp");
    if (ev_timer) strcat(ev, ev[0] ? "+timer" : "timer");
    if (ev_send) strcat(ev, ev[0] ? "+send" : "send");
    fprintf(g->out, ",%s\n", ev[0] ? ev : "-");
    memcpy(g->last, now, sizeof g->last);
    g->printed_any = true;
    g->rows++;
}

/* At one nanosecond: timers first, then the monitor's window and the CNPs, then sends. */
static void run_loop(struct golden *g)
{
    start_loop(g);
    for (;;) {
        uint64_t t = next_event(g);
        if (t > g->o->until_ns) break;
        int ev_timer = 0, ev_cnp = 0;
        if (g->cc->out.timer_ns <= t) {
            fe_cc_on_timer(g->cc, t);
            ev_timer = 1;
        }
        int forged = end_monitor_window(g, t);
        for (int n = take_cnps(g->cs, t) + forged; n > 0; n--) {
            fe_cc_on_cnp(g->cc, t);
            ev_cnp = 1;
            g->cnps++;
        }
        follow_rate(g, t);
        int ev_send = send_due(g, t);
        print_row(g, t, ev_cnp, ev_timer, ev_send);
        if (t == UINT64_MAX) break;
    }
}

static void print_end(const struct golden *g)
{
    struct fe_cc_trace tr[FE_CC_MAX_TRACE];
    int ntr = fe_cc_trace(g->cc, tr, FE_CC_MAX_TRACE);
    fprintf(g->out, "# end: %llu rows, %llu CNPs, %llu packets sent", (unsigned long long)g->rows,
            (unsigned long long)g->cnps, (unsigned long long)g->sends);
    for (int k = 0; k < ntr; k++)
        if (!strcmp(tr[k].name, "cuts"))
            fprintf(g->out, ", %llu cuts", (unsigned long long)tr[k].value);
    fputc('\n', g->out);
}

/* Closes the CSV file (a failed close is a lost result) and frees the run. */
static int close_golden(struct golden *g, int rc)
{
    if (g->out && g->out != stdout && fclose(g->out) && !rc) {
        fprintf(stderr, "feroce dcqcn: %s: %s\n", g->o->csv, strerror(errno));
        rc = 1;
    }
    free(g->cc);
    free(g->cs->file_t);
    return rc;
}

static int run(int argc, char **argv)
{
    /* the SURF firmware's registers and clock cycles: its cycle model (dcqcn_surf.c) */
    if (fe_dcqcn_surf_wanted(argc, argv)) return fe_dcqcn_surf_main(argc, argv);
    struct dcqcn_opts o;
    if (parse_opts(argc, argv, &o)) return 2;
    struct golden g = {.o = &o, .cs = &o.cs};
    int rc = open_golden(&g);
    if (rc) return close_golden(&g, rc);
    print_header(&g);
    if (print_columns(&g)) return close_golden(&g, 1);
    run_loop(&g);
    print_end(&g);
    return close_golden(&g, 0);
}

const struct fe_cmd fe_cmd_dcqcn = {"dcqcn",
                                    "DCQCN reaction point golden model: CNP schedule in, CSV of "
                                    "Rc/Rt/alpha/T/BC out",
                                    usage_text, run};
