/* The simulator's web view (web_sim.h): a sample per interval of simulated time, read through
 * the simulator's public API (flow stats, CC trace, port stats) as --trace does, and the
 * replay of a trace file written by --trace. */
#include "web/web_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "feroce/report.h"
#include "feroce/sim.h"
#include "tools/cli.h"
#include "web/trace_csv.h"
#include "web/web.h"

#define SIM_HISTORY 3000u /* samples a page opened late (or after the run) still gets */

struct fe_web_sim {
    struct fe_sim *sim;
    struct fe_web *w;
    struct fe_web_run run;
    struct fe_web_sim_opts o;
    uint64_t next_ns, wall0_ns;
    uint32_t bn_node, bn_port; /* the bottleneck shown: the deepest queue so far */
    uint64_t bn_max_bytes;
    bool bn_set;
};

/* ---- the live run ---- */

/* A port's RED thresholds: the entry of its rate, else of the largest rate below it. */
static void red_of(const struct fe_sim_scenario *sc, uint64_t rate_bps, struct fe_web_port *p)
{
    const struct fe_sim_red *best = NULL;
    for (int i = 0; sc->sw.ecn && i < sc->sw.n_red; i++) {
        const struct fe_sim_red *r = &sc->sw.red[i];
        if (r->rate_bps == rate_bps) {
            best = r;
            break;
        }
        if (r->rate_bps <= rate_bps && (!best || r->rate_bps > best->rate_bps)) best = r;
    }
    p->kmin_bytes = best ? best->kmin_bytes : 0;
    p->kmax_bytes = best ? best->kmax_bytes : 0;
}

/* Follows the switch port whose queue has been the deepest so far: the bottleneck, whichever
 * it is in the scenario, without the line jumping between ports at every sample. */
static void pick_bottleneck(struct fe_web_sim *ws)
{
    const struct fe_sim_scenario *sc = fe_sim_scenario_of(ws->sim);
    for (uint32_t n = 0; n < fe_sim_n_nodes(ws->sim); n++) {
        if (!sc->nodes[n].is_switch) continue;
        for (uint32_t k = 0; k < fe_sim_node_ports(ws->sim, n); k++) {
            struct fe_sim_port_stats ps;
            if (fe_sim_port_stats(ws->sim, n, k, &ps)) continue;
            if (ps.max_queue_bytes > ws->bn_max_bytes || !ws->bn_set) {
                ws->bn_set = true;
                ws->bn_max_bytes = ps.max_queue_bytes;
                ws->bn_node = n;
                ws->bn_port = k;
            }
        }
    }
}

static void sample_port(struct fe_web_sim *ws, struct fe_web_port *p)
{
    const struct fe_sim_scenario *sc = fe_sim_scenario_of(ws->sim);
    struct fe_sim_port_stats ps;
    pick_bottleneck(ws);
    if (!ws->bn_set || fe_sim_port_stats(ws->sim, ws->bn_node, ws->bn_port, &ps)) return;
    p->has = true;
    snprintf(p->name, sizeof p->name, "%.20s.p%u", sc->nodes[ws->bn_node].name, ws->bn_port);
    p->rate_bps = ps.rate_bps;
    red_of(sc, ps.rate_bps, p);
    p->q_bytes = ps.queue_bytes;
    p->q_max_bytes = ps.max_queue_bytes;
    p->tx_bytes = ps.tx_bytes;
    p->marked = ps.ecn_marks;
    p->drops_full = ps.drops;
}

static void sample_flow(struct fe_web_sim *ws, uint32_t i, struct fe_web_flow *f)
{
    struct fe_sim_flow_stats fs;
    fe_sim_flow_stats(ws->sim, i, &fs);
    f->qpn = i;
    f->has_rx = true;
    f->rx_bytes = fs.rx_bytes;
    f->cnps_rx = fs.cnps_rx;
    f->ce_pkts = fs.ecn_marked;
    f->retx_pkts = fs.retx_pkts;
    f->timeouts = fs.timeouts;
    f->rtt_count = fs.rtt_samples;
    f->rtt_sum_ns = fs.rtt_sum_ns;
    f->rtt_max_ns = fs.rtt_max_ns;
    struct fe_cc_trace t[FE_CC_MAX_TRACE];
    struct fe_cc_view v;
    fe_cc_view_from(t, fe_sim_flow_cc_trace(ws->sim, i, t, FE_CC_MAX_TRACE), &v);
    f->has_rc = v.has_rc, f->has_rt = v.has_rt, f->has_alpha = v.has_alpha;
    f->rc_bps = v.rc_bps, f->rt_bps = v.rt_bps, f->alpha = v.alpha;
}

static void sleep_until_wall(uint64_t wall_ns)
{
    sig_atomic_t seen = fe_cli_signals;
    for (uint64_t now = fe_wall_ns(); now < wall_ns && fe_cli_signals == seen; now = fe_wall_ns()) {
        uint64_t d = wall_ns - now < 50000000u ? wall_ns - now : 50000000u;
        struct timespec ts = {0, (long)d};
        nanosleep(&ts, NULL);
    }
}

void fe_web_sim_sample(struct fe_web_sim *ws)
{
    struct fe_web_sample *s = calloc(1, sizeof *s);
    uint64_t now = fe_sim_now(ws->sim);
    if (s) {
        s->t_ns = now;
        s->n_flows = ws->run.n_flows;
        for (uint32_t i = 0; i < s->n_flows; i++) sample_flow(ws, i, &s->f[i]);
        sample_port(ws, &s->bottleneck);
        fe_web_push(ws->w, s);
        free(s);
    }
    ws->next_ns = now + ws->o.interval_ns;
    /* paced: simulated time runs at o.speed x the wall clock (never ahead of it) */
    if (ws->o.speed > 0) sleep_until_wall(ws->wall0_ns + (uint64_t)((double)now / ws->o.speed));
}

uint64_t fe_web_sim_next(const struct fe_web_sim *ws)
{
    return ws->next_ns;
}

static void print_url(const char *addr, const struct fe_web *w)
{
    uint32_t ip;
    uint16_t port;
    fe_web_parse_addr(addr, &ip, &port);
    fprintf(stderr, "feroce sim: dashboard at http://%u.%u.%u.%u:%u/\n", ip >> 24, (ip >> 16) & 255,
            (ip >> 8) & 255, ip & 255, fe_web_port(w));
}

/* The scenario's first CC profile, shown on the page (every flow's, unless profiles differ). */
static void describe_sim(struct fe_web_sim *ws)
{
    const struct fe_sim_scenario *sc = fe_sim_scenario_of(ws->sim);
    struct fe_web_run *r = &ws->run;
    uint32_t n = fe_sim_n_flows(ws->sim);
    r->tool = "sim";
    r->clock = "simulated";
    r->history_samples = SIM_HISTORY;
    r->compact_history = true;
    r->n_flows = n < FE_WEB_MAX_FLOWS ? n : FE_WEB_MAX_FLOWS;
    r->ccp = sc->n_cc && sc->cc[0].algo ? &sc->cc[0].params : NULL;
    snprintf(r->description, sizeof r->description,
             "simulation %s: %u flows%s, %u nodes, %s; a sample every %.1f us of simulated time",
             sc->name, n, n > FE_WEB_MAX_FLOWS ? " (the first 8 shown)" : "", sc->n_nodes,
             r->ccp ? r->ccp->algo->name : "no CC", (double)ws->o.interval_ns / 1e3);
}

struct fe_web_sim *fe_web_sim_start(struct fe_sim *sim, const struct fe_web_sim_opts *o, char *err,
                                    size_t err_cap)
{
    struct fe_web_sim *ws = calloc(1, sizeof *ws);
    if (!ws) {
        snprintf(err, err_cap, "--web: out of memory");
        return NULL;
    }
    ws->sim = sim;
    ws->o = *o;
    if (!ws->o.interval_ns) ws->o.interval_ns = 100000;
    describe_sim(ws);
    ws->w = fe_web_start(o->addr, &ws->run, err, err_cap);
    if (!ws->w) {
        free(ws);
        return NULL;
    }
    print_url(o->addr, ws->w);
    ws->next_ns = fe_sim_now(sim);
    ws->wall0_ns = fe_wall_ns();
    return ws;
}

void fe_web_sim_finish(struct fe_web_sim *ws)
{
    if (!ws) return;
    fe_web_sim_sample(ws); /* the end of the run */
    fflush(stdout);
    fe_web_hold("sim", ws->o.hold_ns);
    fe_web_stop(ws->w);
    free(ws);
}

/* ---- a trace file ---- */

/* The queue column with the deepest queue over the whole trace (-1: none). */
static int deepest_port(const struct fe_trace_csv *t)
{
    int best = -1;
    double max = -1;
    for (unsigned k = 0; k < t->n_cols; k++) {
        if (t->cols[k].kind != FE_TRACE_QUEUE) continue;
        for (size_t r = 0; r < t->n_rows; r++)
            if (t->v[r * t->n_cols + k] > max) max = t->v[r * t->n_cols + k], best = (int)k;
    }
    return best;
}

/* Row r as a sample: throughput integrated into byte counters (the page derives rates from
 * counters), CC variables through their units, the deepest port's queue. */
static void replay_row(const struct fe_trace_csv *t, size_t r, int qcol, struct fe_web_sample *s)
{
    const double *row = &t->v[r * t->n_cols];
    double dt_s = r ? (row[0] - t->v[(r - 1) * t->n_cols]) / 1e6 : 0;
    struct fe_cc_trace vars[FE_WEB_MAX_FLOWS][FE_TRACE_CSV_MAX_VARS];
    int nv[FE_WEB_MAX_FLOWS] = {0};
    s->t_ns = (uint64_t)llround(row[0] * 1e3);
    s->n_flows = t->n_flows < FE_WEB_MAX_FLOWS ? t->n_flows : FE_WEB_MAX_FLOWS;
    for (unsigned k = 1; k < t->n_cols; k++) {
        const struct fe_trace_col *c = &t->cols[k];
        if (c->kind == FE_TRACE_QUEUE || c->flow >= s->n_flows) continue;
        struct fe_web_flow *f = &s->f[c->flow];
        f->qpn = c->flow;
        f->has_rx = true;
        if (c->kind == FE_TRACE_GBPS) f->rx_bytes += (uint64_t)llround(row[k] * 1e9 / 8 * dt_s);
        if (c->kind == FE_TRACE_VAR && !isnan(row[k])) {
            const struct fe_trace_var *v = &t->vars[c->flow][c->var];
            vars[c->flow][nv[c->flow]++] = (struct fe_cc_trace){v->name, v->unit, row[k]};
        }
    }
    for (unsigned i = 0; i < s->n_flows; i++) {
        struct fe_cc_view v;
        fe_cc_view_from(vars[i], nv[i], &v);
        struct fe_web_flow *f = &s->f[i];
        f->has_rc = v.has_rc, f->has_rt = v.has_rt, f->has_alpha = v.has_alpha;
        f->rc_bps = v.rc_bps, f->rt_bps = v.rt_bps, f->alpha = v.alpha;
    }
    if (qcol >= 0) {
        s->bottleneck.has = true;
        snprintf(s->bottleneck.name, sizeof s->bottleneck.name, "%.31s",
                 t->port[t->cols[qcol].flow]);
        s->bottleneck.q_bytes = (uint64_t)row[qcol];
        if (s->bottleneck.q_bytes > s->bottleneck.q_max_bytes)
            s->bottleneck.q_max_bytes = s->bottleneck.q_bytes;
    }
}

/* Every row into the server's history, at most SIM_HISTORY of them (evenly spaced). */
static void replay_rows(const struct fe_trace_csv *t, struct fe_web *w)
{
    struct fe_web_sample *s = calloc(1, sizeof *s);
    if (!s) return;
    int qcol = deepest_port(t);
    size_t step = (t->n_rows + SIM_HISTORY - 1) / SIM_HISTORY;
    for (size_t r = 0; r < t->n_rows; r++) {
        uint64_t keep[FE_WEB_MAX_FLOWS], qmax = s->bottleneck.q_max_bytes;
        for (unsigned i = 0; i < FE_WEB_MAX_FLOWS; i++) keep[i] = s->f[i].rx_bytes;
        memset(s, 0, sizeof *s);
        for (unsigned i = 0; i < FE_WEB_MAX_FLOWS; i++) s->f[i].rx_bytes = keep[i];
        s->bottleneck.q_max_bytes = qmax;
        replay_row(t, r, qcol, s);
        if (r % step == 0 || r + 1 == t->n_rows) fe_web_push_wait(w, s);
    }
    free(s);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *b = cap > (1u << 30) ? NULL : realloc(buf, cap * 2);
        if (!b) free(buf);
        buf = b;
        cap *= 2;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

int fe_web_sim_replay(const char *path, const struct fe_web_sim_opts *o)
{
    size_t len;
    char *text = read_all(path, &len), err[300];
    struct fe_trace_csv *t = calloc(1, sizeof *t);
    if (!text || !t) {
        fprintf(stderr, "feroce sim: --replay %s: cannot read it\n", path);
        free(text);
        free(t);
        return 1;
    }
    int rc = fe_trace_csv_parse(text, len, path, t, err, sizeof err);
    free(text);
    if (rc) {
        fprintf(stderr, "feroce sim: --replay: %s\n", err);
        free(t);
        return 1;
    }
    struct fe_web_run run = {
        .tool = "sim", .clock = "simulated", .history_samples = SIM_HISTORY, .no_counters = true};
    run.cc_name = t->n_vars[0] ? "(from the trace)" : NULL;
    run.n_flows = t->n_flows < FE_WEB_MAX_FLOWS ? t->n_flows : FE_WEB_MAX_FLOWS;
    snprintf(run.description, sizeof run.description,
             "replay of %.120s: %u flows%s, %zu samples over %.3f ms of simulated time", path,
             t->n_flows, t->n_flows > FE_WEB_MAX_FLOWS ? " (the first 8 shown)" : "", t->n_rows,
             t->v[(t->n_rows - 1) * t->n_cols] / 1e3);
    struct fe_web *w = fe_web_start(o->addr, &run, err, sizeof err);
    if (!w) {
        fprintf(stderr, "feroce sim: %s\n", err);
        fe_trace_csv_free(t);
        free(t);
        return 1;
    }
    print_url(o->addr, w);
    replay_rows(t, w);
    fe_trace_csv_free(t);
    free(t);
    fe_web_hold("sim", o->hold_ns);
    fe_web_stop(w);
    return 0;
}
