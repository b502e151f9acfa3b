/* One point: its scenario (the base with the point's values and seed), the run, the metrics;
 * and the result text, which carries a result from a worker to the database (a pipe locally,
 * a file per point under Slurm). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "feroce/err.h"
#include "sweep/sweep.h"

#define SW_NAME(n, t) #n,
#define SW_REAL(n, t) (sizeof(#t) == sizeof("REAL")),
const char *const sw_metric_names[SW_N_METRICS] = {SW_METRICS(SW_NAME)};
const bool sw_metric_is_real[SW_N_METRICS] = {SW_METRICS(SW_REAL)};
const char *const sw_flow_field_names[SW_N_FLOW_FIELDS] = {SW_FLOW_FIELDS(SW_NAME)};
const bool sw_flow_field_is_real[SW_N_FLOW_FIELDS] = {SW_FLOW_FIELDS(SW_REAL)};
#undef SW_NAME
#undef SW_REAL

/* The format's version changes with the metric list: a result file of another version is
 * refused by name rather than misread. */
#define RESULT_MAGIC     "feroce-sweep-result 2"
#define RESULT_MAGIC_OLD "feroce-sweep-result "

void sw_result_init(struct sw_result *r, const char *id)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->id, sizeof(r->id), "%s", id ? id : "");
    for (int i = 0; i < SW_N_METRICS; i++) r->m[i] = NAN;
}

void sw_result_free(struct sw_result *r)
{
    free(r->flows);
    r->flows = NULL;
    r->n_flows = 0;
}

void sw_result_fail(struct sw_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof(r->error), fmt, ap);
    va_end(ap);
    r->status = SW_FAILED;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank quantile of sorted values. */
static double quantile(const double *v, uint32_t n, double q)
{
    if (!n) return NAN;
    double rank = ceil(q * n);
    uint32_t i = rank < 1 ? 0 : (uint32_t)rank - 1;
    return v[i < n ? i : n - 1];
}

static void collect_flows(const struct fe_sim *sim, struct sw_result *r)
{
    uint32_t n = fe_sim_n_flows(sim);
    r->flows = calloc(n ? n : 1, sizeof(*r->flows));
    double *fct = malloc((n ? n : 1) * sizeof(*fct));
    if (!r->flows || !fct) {
        free(fct);
        sw_result_fail(r, "out of memory");
        return;
    }
    r->n_flows = n;
    uint32_t n_done = 0, n_failed = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct fe_sim_flow_stats fs;
        fe_sim_flow_stats(sim, i, &fs);
        double *f = r->flows[i];
        f[SW_F_src] = fs.src;
        f[SW_F_dst] = fs.dst;
        f[SW_F_bytes] = (double)fs.bytes;
        f[SW_F_start_ns] = (double)fs.start_ns;
        f[SW_F_fct_ns] = fs.done ? (double)(fs.finish_ns - fs.start_ns) : NAN;
        f[SW_F_throughput] = fe_sim_flow_window_bps(sim, i);
        f[SW_F_life_throughput] = fe_sim_flow_life_bps(sim, i);
        f[SW_F_done] = fs.done;
        f[SW_F_failed] = fs.failed;
        f[SW_F_tx_pkts] = (double)fs.tx_pkts;
        f[SW_F_retx_pkts] = (double)fs.retx_pkts;
        f[SW_F_timeouts] = (double)fs.timeouts;
        f[SW_F_cnps_rx] = (double)fs.cnps_rx;
        f[SW_F_ecn_marked] = (double)fs.ecn_marked;
        f[SW_F_rtt_avg_ns] = (double)fs.rtt_avg_ns;
        f[SW_F_rtt_max_ns] = (double)fs.rtt_max_ns;
        if (fs.done) fct[n_done++] = (double)(fs.finish_ns - fs.start_ns);
        n_failed += fs.failed;
    }
    qsort(fct, n_done, sizeof(*fct), cmp_double);
    r->m[SW_M_n_flows] = n;
    r->m[SW_M_flows_done] = n_done;
    r->m[SW_M_flows_failed] = n_failed;
    r->m[SW_M_fct_p50] = quantile(fct, n_done, 0.50);
    r->m[SW_M_fct_p95] = quantile(fct, n_done, 0.95);
    r->m[SW_M_fct_p99] = quantile(fct, n_done, 0.99);
    r->m[SW_M_fct_max] = n_done ? fct[n_done - 1] : NAN;
    free(fct);
}

/* The deepest queue of any switch port (hosts' NIC queues are the senders' own backlog). */
static uint64_t peak_switch_queue(const struct fe_sim *sim)
{
    const struct fe_sim_scenario *sc = fe_sim_scenario_of(sim);
    uint64_t peak = 0;
    for (uint32_t node = 0; node < fe_sim_n_nodes(sim); node++) {
        if (!sc->nodes[node].is_switch) continue;
        for (uint32_t port = 0; port < fe_sim_node_ports(sim, node); port++) {
            struct fe_sim_port_stats ps;
            if (!fe_sim_port_stats(sim, node, port, &ps) && ps.max_queue_bytes > peak)
                peak = ps.max_queue_bytes;
        }
    }
    return peak;
}

/* Per builder: the smallest share of the built events, the lowest and highest built rate, the
 * most slots held at once; what sizing the builders looks at. */
static void collect_eb_builders(const struct fe_sim *sim, const struct fe_sim_eb_stats *st,
                                double *m)
{
    double min_share = NAN, min_bps = NAN, max_bps = NAN, peak_slots = 0;
    for (uint32_t b = 0; b < FE_SIM_EB_MAX_HOSTS; b++) {
        struct fe_sim_eb_builder_stats bs;
        if (fe_sim_eb_builder_stats(sim, b, &bs)) break;
        double share = st->built ? (double)bs.built / (double)st->built : NAN;
        double bps = bs.gbps * 1e9;
        if (!(share >= min_share)) min_share = share;
        if (!(bps >= min_bps)) min_bps = bps;
        if (!(bps <= max_bps)) max_bps = bps;
        if (bs.max_slots_used > peak_slots) peak_slots = bs.max_slots_used;
    }
    m[SW_M_eb_min_built_share] = min_share;
    m[SW_M_eb_min_builder_throughput] = min_bps;
    m[SW_M_eb_max_builder_throughput] = max_bps;
    m[SW_M_eb_peak_slots] = peak_slots;
}

/* The ledger's counts and the building latency (built events only: none built, no latency). */
static void collect_eb(const struct fe_sim *sim, double *m)
{
    if (!fe_sim_eb_enabled(sim)) return; /* the eb_ metrics stay NaN: NULL in the database */
    struct fe_sim_eb_stats st;
    fe_sim_eb_stats(sim, &st);
    m[SW_M_eb_triggered] = (double)st.triggered;
    m[SW_M_eb_built] = (double)st.built;
    m[SW_M_eb_incomplete] = (double)st.incomplete;
    m[SW_M_eb_lost] = (double)st.lost;
    m[SW_M_eb_busy] = (double)st.busy;
    m[SW_M_eb_latency_p50] = st.built ? (double)st.latency_p50_ns : NAN;
    m[SW_M_eb_latency_p99] = st.built ? (double)st.latency_p99_ns : NAN;
    m[SW_M_eb_latency_max] = st.built ? (double)st.latency_max_ns : NAN;
    m[SW_M_eb_rnr_naks] = (double)st.rnr_naks;
    collect_eb_builders(sim, &st, m);
}

static void collect_metrics(const struct fe_sim *sim, struct sw_result *r)
{
    struct fe_sim_stats st;
    struct fe_sim_summary su;
    fe_sim_stats(sim, &st);
    fe_sim_summarize(sim, &su);
    double *m = r->m;
    m[SW_M_sim_time_ns] = (double)st.now_ns;
    m[SW_M_events] = (double)st.events;
    m[SW_M_window_flows] = su.n_window_flows;
    m[SW_M_jain] = su.n_window_flows ? su.jain : NAN;
    m[SW_M_throughput] = su.aggregate_bps;
    m[SW_M_min_throughput] = su.min_bps;
    m[SW_M_max_throughput] = su.max_bps;
    m[SW_M_mean_throughput] = su.mean_bps;
    m[SW_M_peak_queue] = (double)peak_switch_queue(sim);
    m[SW_M_peak_buffer] = (double)st.max_buffer_bytes;
    m[SW_M_peak_headroom] = (double)st.max_headroom_bytes;
    m[SW_M_pfc_pauses] = (double)st.pause_frames;
    m[SW_M_pause_events] = (double)st.pause_events;
    m[SW_M_drops] = (double)st.drops_total;
    m[SW_M_ecn_marks] = (double)st.ecn_marks;
    m[SW_M_cnps] = (double)st.cnps;
    m[SW_M_retx] = (double)st.retx_pkts;
    m[SW_M_timeouts] = (double)st.timeouts;
    collect_eb(sim, m);
    collect_flows(sim, r);
}

static int point_scenario(const struct sw_campaign *c, const struct sw_point *p,
                          struct fe_sim_scenario *sc, struct sw_result *r)
{
    char msg[SW_ERR_LEN - 64] = "";
    if (sw_scenario_copy(sc, &c->base)) {
        sw_result_fail(r, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < c->spec.n_params; i++)
        if (sw_apply(sc, c->spec.params[i].key, p->values[i], msg, sizeof(msg))) {
            sw_result_fail(r, "%s", msg);
            fe_sim_scenario_free(sc);
            return -1;
        }
    if (p->has_seed) sc->seed = p->seed;
    if (c->spec.ns3_compat) fe_sim_scenario_ns3_compat(sc);
    return 0;
}

void sw_point_run(const struct sw_campaign *c, const struct sw_point *p, struct sw_result *r)
{
    double t0 = now_s();
    sw_result_init(r, p->id);
    struct fe_sim_scenario sc;
    if (point_scenario(c, p, &sc, r)) return;
    char msg[SW_ERR_LEN - 64] = "";
    int rc = 0;
    struct fe_sim *sim = fe_sim_create(&sc, &rc, msg, sizeof(msg));
    fe_sim_scenario_free(&sc);
    if (!sim) {
        sw_result_fail(r, "%s", msg[0] ? msg : fe_strerror(rc));
        return;
    }
    rc = fe_sim_run(sim, c->spec.until_ns);
    if (rc < 0)
        sw_result_fail(r, "simulation failed: %s", fe_strerror(rc));
    else
        collect_metrics(sim, r);
    fe_sim_destroy(sim);
    r->wall_s = now_s() - t0;
}

/* ---- the result text ---- */

static void put_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(" nan", f);
    else
        fprintf(f, " %.17g", v);
}

int sw_result_write(FILE *f, const struct sw_result *r)
{
    char error[SW_ERR_LEN];
    snprintf(error, sizeof(error), "%s", r->error);
    for (char *e = error; *e; e++)
        if (*e == '\n' || *e == '\r') *e = ' ';
    fprintf(f, RESULT_MAGIC "\nid %s\nstatus %s\nerror %s\nwall_s %.9g\ncpu_s %.9g\n", r->id,
            r->status == SW_OK ? "ok" : "failed", error, r->wall_s, r->cpu_s);
    for (int i = 0; i < SW_N_METRICS; i++) {
        fprintf(f, "m %s", sw_metric_names[i]);
        put_num(f, r->m[i]);
        fputc('\n', f);
    }
    fprintf(f, "flows %u\n", r->n_flows);
    for (uint32_t k = 0; k < r->n_flows; k++) {
        fputc('f', f);
        for (int j = 0; j < SW_N_FLOW_FIELDS; j++) put_num(f, r->flows[k][j]);
        fputc('\n', f);
    }
    fputs("end\n", f);
    return ferror(f) ? -1 : 0;
}

/* Reads a number or "nan"; advances *p. */
static int get_num(const char **p, const char *end, double *v)
{
    while (*p < end && **p == ' ') (*p)++;
    char buf[64];
    size_t n = 0;
    while (*p < end && **p != ' ' && **p != '\n' && n + 1 < sizeof(buf)) buf[n++] = *(*p)++;
    buf[n] = 0;
    if (!n) return -1;
    if (!strcmp(buf, "nan")) {
        *v = NAN;
        return 0;
    }
    char *e;
    *v = strtod(buf, &e);
    return *e || !isfinite(*v) ? -1 : 0;
}

/* The line at *p (without its newline) as [s, e); false at the end. */
static bool next_line(const char **p, const char *end, const char **s, const char **e)
{
    if (*p >= end) return false;
    *s = *p;
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl) return false; /* every line of a complete result ends with a newline */
    *e = nl;
    *p = nl + 1;
    return true;
}

static bool starts(const char *s, const char *e, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(e - s) >= n && !memcmp(s, word, n);
}

static int parse_header(const char **p, const char *end, struct sw_result *r)
{
    const char *s, *e;
    if (!next_line(p, end, &s, &e) || (size_t)(e - s) != strlen(RESULT_MAGIC) ||
        memcmp(s, RESULT_MAGIC, (size_t)(e - s)))
        return -1;
    if (!next_line(p, end, &s, &e) || !starts(s, e, "id ") || e - s - 3 != SW_ID_LEN - 1) return -1;
    memcpy(r->id, s + 3, SW_ID_LEN - 1);
    r->id[SW_ID_LEN - 1] = 0;
    for (int i = 0; i < SW_ID_LEN - 1; i++)
        if (!strchr("0123456789abcdef", r->id[i])) return -1;
    if (!next_line(p, end, &s, &e) || !starts(s, e, "status ")) return -1;
    if (e - s == 9 && !memcmp(s + 7, "ok", 2))
        r->status = SW_OK;
    else if (e - s == 13 && !memcmp(s + 7, "failed", 6))
        r->status = SW_FAILED;
    else
        return -1;
    if (!next_line(p, end, &s, &e) || !starts(s, e, "error ")) return -1;
    size_t n =
        (size_t)(e - s - 6) < sizeof(r->error) - 1 ? (size_t)(e - s - 6) : sizeof(r->error) - 1;
    memcpy(r->error, s + 6, n);
    r->error[n] = 0;
    if (memchr(r->error, 0, n)) return -1;
    const char *q;
    if (!next_line(p, end, &s, &e) || !starts(s, e, "wall_s ")) return -1;
    q = s + 6;
    if (get_num(&q, e, &r->wall_s) || q != e) return -1;
    if (!next_line(p, end, &s, &e) || !starts(s, e, "cpu_s ")) return -1;
    q = s + 5;
    if (get_num(&q, e, &r->cpu_s) || q != e) return -1;
    return 0;
}

static int parse_body(const char **p, const char *end, struct sw_result *r)
{
    const char *s, *e, *q;
    for (int i = 0; i < SW_N_METRICS; i++) {
        size_t n = strlen(sw_metric_names[i]);
        if (!next_line(p, end, &s, &e) || !starts(s, e, "m ") || (size_t)(e - s) < n + 3 ||
            memcmp(s + 2, sw_metric_names[i], n) || s[2 + n] != ' ')
            return -1;
        q = s + 2 + n;
        if (get_num(&q, e, &r->m[i]) || q != e) return -1;
    }
    double nf;
    if (!next_line(p, end, &s, &e) || !starts(s, e, "flows ")) return -1;
    q = s + 5;
    if (get_num(&q, e, &nf) || q != e || nf < 0 || nf > 1e7 || nf != floor(nf)) return -1;
    /* each flow line is longer than 2 bytes per field: a count the text cannot hold is a lie */
    if (nf * 2 * SW_N_FLOW_FIELDS > (double)(end - *p)) return -1;
    r->n_flows = (uint32_t)nf;
    r->flows = calloc(r->n_flows ? r->n_flows : 1, sizeof(*r->flows));
    if (!r->flows) return -1;
    for (uint32_t k = 0; k < r->n_flows; k++) {
        if (!next_line(p, end, &s, &e) || !starts(s, e, "f ")) return -1;
        q = s + 1;
        for (int j = 0; j < SW_N_FLOW_FIELDS; j++)
            if (get_num(&q, e, &r->flows[k][j])) return -1;
        if (q != e) return -1;
    }
    if (!next_line(p, end, &s, &e) || e - s != 3 || memcmp(s, "end", 3)) return -1;
    return 0;
}

/* A result written by a feroce with another metric list (its first line names the format). */
static bool other_version(const char *text, size_t len)
{
    size_t n = strlen(RESULT_MAGIC_OLD), m = strlen(RESULT_MAGIC);
    return len > n && !memcmp(text, RESULT_MAGIC_OLD, n) &&
           !(len > m && !memcmp(text, RESULT_MAGIC, m) && text[m] == '\n');
}

int sw_result_parse(const char *text, size_t len, struct sw_result *r, char *err, size_t err_cap)
{
    sw_result_init(r, NULL);
    if (other_version(text, len)) {
        snprintf(err, err_cap,
                 "a result written by another version of feroce (other metrics): "
                 "run its point again");
        return -1;
    }
    const char *p = text, *end = text + len;
    if (parse_header(&p, end, r) || parse_body(&p, end, r) || p != end) {
        sw_result_free(r);
        snprintf(err, err_cap, "an incomplete or malformed result");
        return -1;
    }
    return 0;
}
