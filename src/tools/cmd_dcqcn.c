/* feroce dcqcn: the DCQCN reaction point as a golden model. Feeds a schedule of CNP arrivals
 * and a sending pattern to one reaction point and writes CSV of Rc, Rt, alpha and the stage
 * counters, exactly and deterministically (integer nanoseconds, the same code as the simulator
 * and the socket tools), so firmware engineers can diff it against their RTL. */
#include <errno.h>
#include <math.h>
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
    "Example (design.md 'emulated switch check'):\n"
    "  feroce dcqcn --profile surf --monitor 32us:5G --until 20ms\n";

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

static int run(int argc, char **argv)
{
    if (fe_dcqcn_surf_wanted(argc, argv)) return fe_dcqcn_surf_main(argc, argv);
    const char *profile = "connectx", *csv = NULL, *send_rate = "rc", *cnp_file = NULL;
    const char *param_args[MAX_PARAM_ARGS];
    int n_param_args = 0;
    uint64_t line_bps = 10000000000ull, until_ns = 0, step_ns = 0, pkt_bytes = 4096;
    int have_until = 0;
    struct cnp_src cs = {0};
    cs.stop_ns = UINT64_MAX;
    int have_stop = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE                                                                                 \
    do {                                                                                           \
        if (!v) {                                                                                  \
            fprintf(stderr, "feroce dcqcn: %s needs a value\n", a);                                \
            return 2;                                                                              \
        }                                                                                          \
        i++;                                                                                       \
    } while (0)
        if (!strcmp(a, "--profile")) {
            NEED_VALUE;
            profile = v;
        } else if (!strcmp(a, "--param")) {
            NEED_VALUE;
            if (n_param_args == MAX_PARAM_ARGS) {
                fputs("feroce dcqcn: too many --param options\n", stderr);
                return 2;
            }
            param_args[n_param_args++] = v;
        } else if (!strcmp(a, "--line-rate")) {
            NEED_VALUE;
            if (fe_parse_rate_bps(v, &line_bps, "--line-rate")) return 2;
        } else if (!strcmp(a, "--send-rate")) {
            NEED_VALUE;
            send_rate = v;
        } else if (!strcmp(a, "--pkt-bytes")) {
            NEED_VALUE;
            if (fe_parse_size_bytes(v, &pkt_bytes, "--pkt-bytes")) return 2;
        } else if (!strcmp(a, "--cnp-file")) {
            NEED_VALUE;
            cnp_file = v;
        } else if (!strcmp(a, "--cnp-every")) {
            NEED_VALUE;
            if (fe_parse_duration_ns(v, &cs.every_ns, "--cnp-every")) return 2;
        } else if (!strcmp(a, "--cnp-start")) {
            NEED_VALUE;
            if (fe_parse_duration_ns(v, &cs.start_ns, "--cnp-start")) return 2;
        } else if (!strcmp(a, "--cnp-stop")) {
            NEED_VALUE;
            if (fe_parse_duration_ns(v, &cs.stop_ns, "--cnp-stop")) return 2;
            have_stop = 1;
        } else if (!strcmp(a, "--monitor")) {
            NEED_VALUE;
            char buf[64];
            const char *colon = strchr(v, ':');
            if (!colon || (size_t)(colon - v) >= sizeof buf) {
                fprintf(stderr, "feroce dcqcn: --monitor wants WINDOW:RATE, got '%s'\n", v);
                return 2;
            }
            memcpy(buf, v, (size_t)(colon - v));
            buf[colon - v] = 0;
            if (fe_parse_duration_ns(buf, &cs.mon_window_ns, "--monitor window") ||
                fe_parse_rate_bps(colon + 1, &cs.mon_bps, "--monitor rate"))
                return 2;
        } else if (!strcmp(a, "--until")) {
            NEED_VALUE;
            if (fe_parse_duration_ns(v, &until_ns, "--until")) return 2;
            have_until = 1;
        } else if (!strcmp(a, "--step")) {
            NEED_VALUE;
            if (fe_parse_duration_ns(v, &step_ns, "--step")) return 2;
        } else if (!strcmp(a, "--csv")) {
            NEED_VALUE;
            csv = v;
        } else {
            fprintf(stderr, "feroce dcqcn: unknown option '%s' (feroce dcqcn --help)\n", a);
            return 2;
        }
#undef NEED_VALUE
    }
    if (!have_until) {
        fputs("feroce dcqcn: --until is required (e.g. --until 20ms)\n", stderr);
        return 2;
    }
    if (pkt_bytes == 0 || pkt_bytes > UINT32_MAX) {
        fputs("feroce dcqcn: --pkt-bytes must be 1 .. 4294967295\n", stderr);
        return 2;
    }
    if (cs.mon_window_ns == 0 && cs.mon_bps) {
        fputs("feroce dcqcn: --monitor window must be > 0\n", stderr);
        return 2;
    }
    if (!have_stop) cs.stop_ns = until_ns;
    cs.next_every = cs.start_ns;

    const char *algo_name = !strcmp(profile, "connectx")   ? "dcqcn"
                            : !strcmp(profile, "surf")     ? "dcqcn-surf"
                            : !strcmp(profile, "hpcc-ns3") ? "dcqcn-hpcc-ns3"
                                                           : profile;
    const struct fe_cc_algo *algo = fe_cc_find(algo_name);
    if (!algo || strncmp(algo->name, "dcqcn", 5)) {
        fprintf(stderr, "feroce dcqcn: unknown profile '%s' (connectx, surf, hpcc-ns3)\n", profile);
        return 2;
    }
    struct fe_cc_params params;
    fe_cc_params_default(&params, algo);
    for (int k = 0; k < n_param_args; k++) {
        char err[600];
        if (fe_cc_params_parse(&params, param_args[k], err, sizeof err)) {
            fprintf(stderr, "feroce dcqcn: %s\n", err);
            return 2;
        }
    }

    uint64_t fixed_Bps = 0;
    int follow_rc = 0;
    if (!strcmp(send_rate, "rc")) {
        follow_rc = 1;
    } else {
        uint64_t bps;
        if (fe_parse_rate_bps(send_rate, &bps, "--send-rate")) return 2;
        fixed_Bps = bps / 8;
    }
    if (cnp_file && load_cnp_file(cnp_file, &cs)) return 2;

    FILE *o = stdout;
    if (csv && !(o = fopen(csv, "w"))) {
        fprintf(stderr, "feroce dcqcn: %s: %s\n", csv, strerror(errno));
        free(cs.file_t);
        return 2;
    }

    size_t size = fe_cc_instance_size(algo);
    struct fe_cc *cc = aligned_alloc(16, (size + 15) & ~(size_t)15);
    if (!cc) {
        fputs("feroce dcqcn: out of memory\n", stderr);
        if (o != stdout) fclose(o);
        free(cs.file_t);
        return 1;
    }
    struct fe_cc_env env = {.line_rate_bps = line_bps, .mtu_bytes = 4096, .now_ns = 0};
    fe_cc_init(cc, &params, &env);

    /* ---- header ---- */
    fprintf(o, "# feroce dcqcn golden model: profile %s (algorithm %s: %s)\n", profile, algo->name,
            algo->summary);
    fprintf(o, "# line_rate_bps %llu\n", (unsigned long long)line_bps);
    for (size_t k = 0; k < algo->n_params; k++) {
        const struct fe_cc_param *d = &algo->params[k];
        fprintf(o, "# param %s = %.17g %s  [%.17g, %.17g]%s  %s\n", d->name, params.v[k], d->unit,
                d->min, d->max, params.v[k] != d->def ? " (set)" : "", d->help);
    }
    if (follow_rc)
        fprintf(o, "# send: %llu-byte packets paced at Rc (credit accumulator, burst one packet)\n",
                (unsigned long long)pkt_bytes);
    else if (fixed_Bps)
        fprintf(o, "# send: %llu-byte packets at a fixed %llu B/s\n", (unsigned long long)pkt_bytes,
                (unsigned long long)fixed_Bps);
    else
        fputs("# send: nothing (timers only)\n", o);
    if (cnp_file) fprintf(o, "# cnp: %zu from file %s\n", cs.file_n, cnp_file);
    if (cs.every_ns)
        fprintf(o, "# cnp: every %llu ns from %llu ns to %llu ns\n",
                (unsigned long long)cs.every_ns, (unsigned long long)cs.start_ns,
                (unsigned long long)cs.stop_ns);
    if (cs.mon_window_ns)
        fprintf(o,
                "# cnp: monitor, at the end of each %llu ns window whose bytes exceed %llu b/s\n",
                (unsigned long long)cs.mon_window_ns, (unsigned long long)cs.mon_bps);
    fprintf(o, "# until_ns %llu; rows %s\n", (unsigned long long)until_ns,
            step_ns ? "every step" : "at every change and every CNP");
    if (step_ns) fprintf(o, "# step_ns %llu\n", (unsigned long long)step_ns);

    struct fe_cc_trace tr[FE_CC_MAX_TRACE];
    int ntr = fe_cc_trace(cc, tr, FE_CC_MAX_TRACE);
    const char *cols[] = {"Rc", "Rt", "alpha", "T", "BC"};
    int idx[5];
    for (int c = 0; c < 5; c++) {
        idx[c] = -1;
        for (int k = 0; k < ntr; k++)
            if (!strcmp(tr[k].name, cols[c])) idx[c] = k;
        if (idx[c] < 0) {
            fprintf(stderr, "feroce dcqcn: %s does not trace %s\n", algo->name, cols[c]);
            return 1;
        }
    }
    fputs("# units:", o);
    for (int c = 0; c < 5; c++) fprintf(o, " %s [%s]", cols[c], tr[idx[c]].unit);
    fputs("; event: what happened at that time (cnp, timer, send)\n", o);
    const char *ru = tr[idx[0]].unit;
    const char *rate_sfx = !strcmp(ru, "Mb/s") ? "Mbps" : !strcmp(ru, "B/s") ? "Bps" : "bps";
    const char *alpha_name = tr[idx[2]].unit[0] ? "alpha_1024" : "alpha";
    fprintf(o, "time_ns,Rc_%s,Rt_%s,%s,T,BC,event\n", rate_sfx, rate_sfx, alpha_name);

    /* ---- run ---- */
    struct fe_pacer pacer;
    fe_pacer_init(&pacer, pkt_bytes, 0);
    uint64_t cur_rate = follow_rc ? cc->out.rate_Bps : fixed_Bps;
    int sending = follow_rc || fixed_Bps;
    uint64_t next_send =
        sending ? fe_pacer_when(&pacer, cur_rate, (uint32_t)pkt_bytes, 0) : UINT64_MAX;
    uint64_t mon_end = cs.mon_window_ns ? cs.mon_window_ns : UINT64_MAX, mon_bytes = 0;
    uint64_t next_step = step_ns ? 0 : UINT64_MAX;
    double last[5] = {-1, -1, -1, -1, -1};
    int printed_any = 0;
    uint64_t rows = 0, cnps = 0, sends = 0;

    for (;;) {
        uint64_t t = next_cnp(&cs);
        if (cc->out.timer_ns < t) t = cc->out.timer_ns;
        if (next_send < t) t = next_send;
        if (mon_end < t) t = mon_end;
        if (next_step < t) t = next_step;
        if (!printed_any && t > 0) t = 0; /* the initial state is always the first row */
        if (t > until_ns) break;

        int ev_timer = 0, ev_cnp = 0, ev_send = 0;
        if (cc->out.timer_ns <= t) {
            fe_cc_on_timer(cc, t);
            ev_timer = 1;
        }
        /* the monitor's window ends before the CNPs and sends of this nanosecond */
        int forged = 0;
        if (mon_end == t) {
            forged = over_threshold(mon_bytes, cs.mon_bps, cs.mon_window_ns);
            mon_bytes = 0;
            mon_end = t > UINT64_MAX - cs.mon_window_ns ? UINT64_MAX : t + cs.mon_window_ns;
        }
        for (int n = take_cnps(&cs, t) + forged; n > 0; n--) {
            fe_cc_on_cnp(cc, t);
            ev_cnp = 1;
            cnps++;
        }
        if (follow_rc && cc->out.rate_Bps != cur_rate) {
            fe_pacer_sync(&pacer, cur_rate, t); /* time so far was paid at the old rate */
            cur_rate = cc->out.rate_Bps;
        }
        while (sending && next_send <= t) {
            fe_pacer_consume(&pacer, cur_rate, (uint32_t)pkt_bytes, t);
            fe_cc_on_send(cc, t, (uint32_t)pkt_bytes);
            mon_bytes += pkt_bytes;
            ev_send = 1;
            sends++;
            if (follow_rc && cc->out.rate_Bps != cur_rate) {
                fe_pacer_sync(&pacer, cur_rate, t);
                cur_rate = cc->out.rate_Bps;
            }
            next_send = fe_pacer_when(&pacer, cur_rate, (uint32_t)pkt_bytes, t);
        }
        /* a CNP or timer may have changed the rate since the next send was planned */
        if (sending) next_send = fe_pacer_when(&pacer, cur_rate, (uint32_t)pkt_bytes, t);

        ntr = fe_cc_trace(cc, tr, FE_CC_MAX_TRACE);
        double now[5];
        int changed = 0;
        for (int c = 0; c < 5; c++) {
            now[c] = tr[idx[c]].value;
            changed |= now[c] != last[c];
        }
        int at_step = step_ns && t == next_step;
        if (at_step) next_step = t > UINT64_MAX - step_ns ? UINT64_MAX : t + step_ns;
        if (!printed_any || (step_ns ? at_step : changed || ev_cnp)) {
            fprintf(o, "%llu", (unsigned long long)t);
            for (int c = 0; c < 5; c++) print_num(o, now[c]);
            char ev[32] = "";
            if (ev_cnp) strcat(ev, "cnp");
            if (ev_timer) strcat(ev, ev[0] ? "+timer" : "timer");
            if (ev_send) strcat(ev, ev[0] ? "+send" : "send");
            fprintf(o, ",%s\n", ev[0] ? ev : "-");
            memcpy(last, now, sizeof last);
            printed_any = 1;
            rows++;
        }
        if (t == UINT64_MAX) break;
    }
    ntr = fe_cc_trace(cc, tr, FE_CC_MAX_TRACE);
    fprintf(o, "# end: %llu rows, %llu CNPs, %llu packets sent", (unsigned long long)rows,
            (unsigned long long)cnps, (unsigned long long)sends);
    for (int k = 0; k < ntr; k++)
        if (!strcmp(tr[k].name, "cuts")) fprintf(o, ", %llu cuts", (unsigned long long)tr[k].value);
    fputc('\n', o);
    int rc = 0;
    if (o != stdout && fclose(o)) {
        fprintf(stderr, "feroce dcqcn: %s: %s\n", csv, strerror(errno));
        rc = 1;
    }
    free(cc);
    free(cs.file_t);
    return rc;
}

const struct fe_cmd fe_cmd_dcqcn = {"dcqcn",
                                    "DCQCN reaction point golden model: CNP schedule in, CSV of "
                                    "Rc/Rt/alpha/T/BC out",
                                    usage_text, run};
