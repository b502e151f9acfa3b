/* Results: contention-window and per-phase throughput, Jain's index, and the report in text or
 * JSON (per-flow table, aggregate, drops, PFC, CNPs). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "feroce/stats.h"
#include "sim/eb.h"
#include "sim/grid.h"
#include "sim/sim_internal.h"

double fe_sim_flow_window_bps(const struct fe_sim *sim, uint32_t flow)
{
    uint64_t a, b;
    fe_sim_window(sim, &a, &b);
    struct fe_sim_flow_stats fs;
    if (b <= a || fe_sim_flow_stats(sim, flow, &fs)) return 0;
    return (double)fs.window_bytes * 8e9 / (double)(b - a);
}

double fe_sim_flow_life_bps(const struct fe_sim *sim, uint32_t flow)
{
    struct fe_sim_flow_stats fs;
    if (fe_sim_flow_stats(sim, flow, &fs) || !fs.started) return 0;
    uint64_t end = fs.done ? fs.finish_ns : sim->now;
    if (end <= fs.start_ns) return 0;
    return (double)fs.rx_bytes * 8e9 / (double)(end - fs.start_ns);
}

/* A flow's completion is seen by the rest of the network (the window, the phases) at the grid
 * boundary after it (grid.h): it is active until then. */
static bool active_whole_window(const struct fe_sim *sim, uint32_t i, uint64_t a, uint64_t b)
{
    const struct sim_flow *f = &sim->flows[i];
    uint64_t g = sim_grid_ns(sim);
    return f->spec.start_ns <= a && (!f->done || (f->finish_ns / g + 1) * g >= b);
}

void fe_sim_summarize(const struct fe_sim *sim, struct fe_sim_summary *out)
{
    memset(out, 0, sizeof(*out));
    fe_sim_window(sim, &out->window_start_ns, &out->window_end_ns);
    /* every window flow's rate, for Jain's index; only if that fails, the first ones' */
    double few[FE_SIM_MAX_PHASE_FLOWS];
    double *xs = malloc((sim->n_flows ? sim->n_flows : 1) * sizeof(*xs));
    uint32_t cap = xs ? sim->n_flows : FE_SIM_MAX_PHASE_FLOWS;
    if (!xs) xs = few;
    double sum = 0;
    out->min_bps = INFINITY;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        if (!active_whole_window(sim, i, out->window_start_ns, out->window_end_ns)) continue;
        double x = fe_sim_flow_window_bps(sim, i);
        if (out->n_window_flows < cap) xs[out->n_window_flows] = x;
        out->n_window_flows++;
        sum += x;
        if (x < out->min_bps) out->min_bps = x;
        if (x > out->max_bps) out->max_bps = x;
    }
    if (!out->n_window_flows) out->min_bps = 0;
    out->aggregate_bps = sum;
    out->mean_bps = out->n_window_flows ? sum / out->n_window_flows : 0;
    out->jain = fe_jain_index(xs, out->n_window_flows < cap ? out->n_window_flows : cap);
    if (xs != few) free(xs);
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    out->drops_total = st.drops_total;
    out->pause_frames = st.pause_frames;
    out->cnps = st.cnps;
    out->ecn_marks = st.ecn_marks;
}

/* rx bytes of flow i at boundary k (k == n_phase_pts: now) */
static uint64_t phase_rx(const struct fe_sim *sim, uint32_t k, uint32_t i)
{
    if (k < sim->n_phase_pts) return sim->phase_rx[(size_t)k * sim->n_flows + i];
    struct fe_sim_flow_stats fs;
    fe_sim_flow_stats(sim, i, &fs);
    return fs.rx_bytes;
}

static int n_phases(const struct fe_sim *sim)
{
    if (!sim->n_phase_pts) return 0;
    /* the last boundary starts a phase only if time went on after it and something ran */
    bool tail = sim->now > sim->phase_t[sim->n_phase_pts - 1];
    if (tail) {
        bool any = false;
        for (uint32_t i = 0; i < sim->n_flows; i++)
            any |= sim->phase_active[(size_t)(sim->n_phase_pts - 1) * sim->n_flows + i] != 0;
        tail = any;
    }
    return (int)sim->n_phase_pts - 1 + (tail ? 1 : 0);
}

/* bytes received between t0 and t1, in bit/s (0 for an empty interval) */
static double rate_bps(uint64_t bytes, uint64_t t0, uint64_t t1)
{
    return t1 > t0 ? (double)bytes * 8e9 / (double)(t1 - t0) : 0;
}

/* The end of phase k: the next boundary, or now for the last one. */
static uint64_t phase_end(const struct fe_sim *sim, uint32_t k)
{
    return k + 1 < sim->n_phase_pts ? sim->phase_t[k + 1] : sim->now;
}

double fe_sim_phase_flow_bps(const struct fe_sim *sim, int k, uint32_t flow)
{
    if (k < 0 || k >= n_phases(sim) || flow >= sim->n_flows) return 0;
    if (!sim->phase_active[(size_t)k * sim->n_flows + flow]) return 0;
    uint64_t b = phase_rx(sim, (uint32_t)k + 1, flow) - phase_rx(sim, (uint32_t)k, flow);
    return rate_bps(b, sim->phase_t[k], phase_end(sim, (uint32_t)k));
}

/* Aggregate, spread and Jain's index of the rates x[0..n). */
static struct fe_sim_phase_rates phase_rates(const double *x, uint32_t n)
{
    struct fe_sim_phase_rates r = {0, n ? INFINITY : 0, 0, 0, 1.0};
    for (uint32_t i = 0; i < n; i++) {
        r.aggregate_bps += x[i];
        if (x[i] < r.min_bps) r.min_bps = x[i];
        if (x[i] > r.max_bps) r.max_bps = x[i];
    }
    r.mean_bps = n ? r.aggregate_bps / n : 0;
    r.jain = fe_jain_index(x, n);
    return r;
}

int fe_sim_phases(const struct fe_sim *sim, struct fe_sim_phase *out, int max)
{
    int n = n_phases(sim);
    for (int k = 0; k < n && k < max; k++) {
        struct fe_sim_phase *p = &out[k];
        memset(p, 0, sizeof(*p));
        p->start_ns = sim->phase_t[k];
        p->end_ns = phase_end(sim, (uint32_t)k);
        const uint64_t *mid_rx;
        p->half_start_ns = sim_phase_middle(sim, (uint32_t)k, &mid_rx);
        double whole[FE_SIM_MAX_PHASE_FLOWS], half[FE_SIM_MAX_PHASE_FLOWS];
        for (uint32_t i = 0; i < sim->n_flows; i++) {
            if (!sim->phase_active[(size_t)k * sim->n_flows + i]) continue;
            uint64_t end_rx = phase_rx(sim, (uint32_t)k + 1, i);
            whole[p->n_active] =
                rate_bps(end_rx - phase_rx(sim, (uint32_t)k, i), p->start_ns, p->end_ns);
            half[p->n_active++] = rate_bps(end_rx - mid_rx[i], p->half_start_ns, p->end_ns);
        }
        struct fe_sim_phase_rates w = phase_rates(whole, p->n_active);
        p->aggregate_bps = w.aggregate_bps;
        p->min_bps = w.min_bps;
        p->max_bps = w.max_bps;
        p->mean_bps = w.mean_bps;
        p->jain = w.jain;
        p->half = phase_rates(half, p->n_active);
    }
    return n;
}

/* ---- report ---- */

static void fmt_bytes(char *b, size_t cap, uint64_t v)
{
    if (v >= 1000000000ull)
        snprintf(b, cap, "%.2f GB", (double)v / 1e9);
    else if (v >= 1000000)
        snprintf(b, cap, "%.2f MB", (double)v / 1e6);
    else if (v >= 1000)
        snprintf(b, cap, "%.1f KB", (double)v / 1e3);
    else
        snprintf(b, cap, "%llu B", (unsigned long long)v);
}

static const char *node_name(const struct fe_sim *sim, uint32_t n)
{
    return sim->sc.nodes[n].name;
}

/* putc_unlocked: fputc locks the stream for every character once the process has started threads
 * (a parallel run), and the results are written by one thread, after the parts have joined. */
static void json_str(FILE *f, const char *s)
{
    putc_unlocked('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            putc_unlocked(*s, f);
    }
    putc_unlocked('"', f);
}

void sim_json_str(FILE *f, const char *s)
{
    json_str(f, s);
}

static void json_stats(FILE *f, const struct fe_sim_stats *st)
{
    fprintf(f, "  \"drops\": {\"total\": %llu", (unsigned long long)st->drops_total);
    for (int i = 0; i < FE_SIM_DROP_MAX; i++)
        fprintf(f, ", \"%s\": %llu", fe_sim_drop_name(i), (unsigned long long)st->drops[i]);
    fprintf(f,
            "},\n  \"pfc\": {\"pause_frames\": %llu, \"resume_frames\": %llu, \"pause_events\": "
            "%llu, \"host_pauses\": %llu},\n",
            (unsigned long long)st->pause_frames, (unsigned long long)st->resume_frames,
            (unsigned long long)st->pause_events, (unsigned long long)st->host_pause_events);
    fprintf(f,
            "  \"ecn_marks\": %llu,\n  \"cnps\": %llu,\n  \"retransmitted_packets\": %llu,\n"
            "  \"timeouts\": %llu,\n  \"max_buffer_bytes\": %llu,\n  \"max_headroom_bytes\": "
            "%llu,\n",
            (unsigned long long)st->ecn_marks, (unsigned long long)st->cnps,
            (unsigned long long)st->retx_pkts, (unsigned long long)st->timeouts,
            (unsigned long long)st->max_buffer_bytes, (unsigned long long)st->max_headroom_bytes);
}

static void json_flow(FILE *f, const struct fe_sim *sim, uint32_t i)
{
    struct fe_sim_flow_stats fs;
    fe_sim_flow_stats(sim, i, &fs);
    fprintf(f, "%s\n    {\"id\": %u, \"src\": ", i ? "," : "", i);
    json_str(f, node_name(sim, fs.src));
    fprintf(f, ", \"dst\": ");
    json_str(f, node_name(sim, fs.dst));
    fprintf(f,
            ", \"bytes\": %llu, \"start_ns\": %llu, \"finish_ns\": %lld, \"fct_ns\": %lld, "
            "\"rx_bytes\": %llu, \"window_bps\": %.0f, \"life_bps\": %.0f, \"cnps\": %llu, "
            "\"ecn_marked\": %llu, \"retx\": %llu, \"timeouts\": %llu, \"rtt_avg_ns\": %llu, "
            "\"failed\": %s}",
            (unsigned long long)fs.bytes, (unsigned long long)fs.start_ns,
            fs.done ? (long long)fs.finish_ns : -1LL,
            fs.done ? (long long)(fs.finish_ns - fs.start_ns) : -1LL,
            (unsigned long long)fs.rx_bytes, fe_sim_flow_window_bps(sim, i),
            fe_sim_flow_life_bps(sim, i), (unsigned long long)fs.cnps_rx,
            (unsigned long long)fs.ecn_marked, (unsigned long long)fs.retx_pkts,
            (unsigned long long)fs.timeouts, (unsigned long long)fs.rtt_avg_ns,
            fs.failed ? "true" : "false");
}

static void json_phases(FILE *f, const struct fe_sim *sim)
{
    struct fe_sim_phase ph[2 * FE_SIM_MAX_PHASE_FLOWS + 2];
    int np = fe_sim_phases(sim, ph, (int)(sizeof(ph) / sizeof(ph[0])));
    for (int k = 0; k < np; k++)
        fprintf(
            f,
            "%s\n    {\"start_ns\": %llu, \"end_ns\": %llu, \"flows\": %u, \"aggregate_bps\": "
            "%.0f, \"mean_bps\": %.0f, \"min_bps\": %.0f, \"max_bps\": %.0f, \"jain\": %.6f, "
            "\"second_half\": {\"start_ns\": %llu, \"aggregate_bps\": %.0f, \"mean_bps\": %.0f, "
            "\"min_bps\": %.0f, \"max_bps\": %.0f, \"jain\": %.6f}}",
            k ? "," : "", (unsigned long long)ph[k].start_ns, (unsigned long long)ph[k].end_ns,
            ph[k].n_active, ph[k].aggregate_bps, ph[k].mean_bps, ph[k].min_bps, ph[k].max_bps,
            ph[k].jain, (unsigned long long)ph[k].half_start_ns, ph[k].half.aggregate_bps,
            ph[k].half.mean_bps, ph[k].half.min_bps, ph[k].half.max_bps, ph[k].half.jain);
}

static void report_json(FILE *f, const struct fe_sim *sim, const struct fe_sim_report_opts *o)
{
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    struct fe_sim_summary sum;
    fe_sim_summarize(sim, &sum);
    fprintf(f, "{\n  \"scenario\": ");
    json_str(f, sim->sc.name);
    fprintf(f, ",\n  \"seed\": %llu,\n  \"sim_time_ns\": %llu,\n  \"finished\": %s,\n",
            (unsigned long long)sim->sc.seed, (unsigned long long)st.now_ns,
            sim->finished ? "true" : "false");
    fprintf(f, "  \"wall_s\": %.6f,\n  \"events\": %llu,\n  \"data_packets\": %llu,\n",
            o->wall_ns / 1e9, (unsigned long long)st.events,
            (unsigned long long)st.data_pkts_delivered);
    fprintf(f,
            "  \"window\": {\"start_ns\": %llu, \"end_ns\": %llu, \"flows\": %u, "
            "\"aggregate_bps\": %.0f, \"jain\": %.6f, \"min_bps\": %.0f, \"max_bps\": %.0f},\n",
            (unsigned long long)sum.window_start_ns, (unsigned long long)sum.window_end_ns,
            sum.n_window_flows, sum.aggregate_bps, sum.jain, sum.min_bps, sum.max_bps);
    json_stats(f, &st);
    fprintf(f, "  \"flows\": [");
    for (uint32_t i = 0; i < sim->n_flows; i++) json_flow(f, sim, i);
    fprintf(f, "\n  ],\n  \"phases\": [");
    json_phases(f, sim);
    fprintf(f, "\n  ]");
    sim_eb_report_json(f, sim);
    fprintf(f, "\n}\n");
}

static void text_header(FILE *f, const struct fe_sim *sim, const struct fe_sim_stats *st,
                        double wall)
{
    fprintf(f, "scenario %s (seed %llu): %.6f s simulated%s", sim->sc.name,
            (unsigned long long)sim->sc.seed, st->now_ns / 1e9,
            sim->finished ? "" : " (not finished)");
    if (wall > 0)
        fprintf(f, " in %.3f s wall, %.2f M events (%.1f M events/s, %.1f per data packet)", wall,
                st->events / 1e6, st->events / 1e6 / wall,
                st->data_pkts_delivered ? (double)st->events / (double)st->data_pkts_delivered : 0);
}

static void text_flow(FILE *f, const struct fe_sim *sim, uint32_t i)
{
    struct fe_sim_flow_stats fs;
    fe_sim_flow_stats(sim, i, &fs);
    char sz[32], fct[32];
    fmt_bytes(sz, sizeof(sz), fs.bytes);
    if (fs.done)
        snprintf(fct, sizeof(fct), "%.3f", (fs.finish_ns - fs.start_ns) / 1e6);
    else
        snprintf(fct, sizeof(fct), "%s", fs.started ? "running" : "-");
    fprintf(f, "%5u %-8s %-8s %10s %10.3f %11s %11.3f %9.3f %8llu %6llu %6llu%s\n", i,
            node_name(sim, fs.src), node_name(sim, fs.dst), sz, fs.start_ns / 1e6, fct,
            fe_sim_flow_window_bps(sim, i) / 1e9, fe_sim_flow_life_bps(sim, i) / 1e9,
            (unsigned long long)fs.cnps_rx, (unsigned long long)fs.retx_pkts,
            (unsigned long long)fs.timeouts, fs.failed ? "  FAILED" : "");
}

/* the flows table: the first 64 unless all_flows */
static void text_flows(FILE *f, const struct fe_sim *sim, bool all_flows)
{
    fprintf(f, "\n\n%5s %-8s %-8s %10s %10s %11s %11s %9s %8s %6s %6s\n", "flow", "src", "dst",
            "size", "start ms", "FCT ms", "window Gb/s", "life Gb/s", "CNPs", "retx", "t/o");
    uint32_t shown = sim->n_flows;
    if (!all_flows && shown > 64) shown = 64;
    for (uint32_t i = 0; i < shown; i++) text_flow(f, sim, i);
    if (shown < sim->n_flows)
        fprintf(f, "  ... %u more flow%s (--all-flows)\n", sim->n_flows - shown,
                sim->n_flows - shown == 1 ? "" : "s");
}

static void text_phase(FILE *f, const struct fe_sim_phase *p)
{
    fprintf(f,
            "  %9.3f - %9.3f ms  %3u flow%s  each %.3f (%.3f .. %.3f) Gb/s  aggregate "
            "%.3f Gb/s  Jain %.4f\n",
            p->start_ns / 1e6, p->end_ns / 1e6, p->n_active, p->n_active == 1 ? " " : "s",
            p->mean_bps / 1e9, p->min_bps / 1e9, p->max_bps / 1e9, p->aggregate_bps / 1e9, p->jain);
    const struct fe_sim_phase_rates *h = &p->half;
    if (p->half_start_ns > p->start_ns)
        fprintf(f,
                "  %9.3f - %9.3f ms  2nd half  each %.3f (%.3f .. %.3f) Gb/s  aggregate "
                "%.3f Gb/s  Jain %.4f\n",
                p->half_start_ns / 1e6, p->end_ns / 1e6, h->mean_bps / 1e9, h->min_bps / 1e9,
                h->max_bps / 1e9, h->aggregate_bps / 1e9, h->jain);
}

static void text_phases(FILE *f, const struct fe_sim *sim, uint64_t now_ns)
{
    struct fe_sim_phase ph[2 * FE_SIM_MAX_PHASE_FLOWS + 2];
    int np = fe_sim_phases(sim, ph, (int)(sizeof(ph) / sizeof(ph[0])));
    if (np <= 1) return;
    /* phases shorter than 1 % of the run are packet-granularity noise: not listed */
    uint64_t min_len = now_ns / 100;
    int hidden = 0;
    fprintf(f, "phases (between flow starts and ends; each one's second half, where the rates "
               "have settled, below it):\n");
    for (int k = 0; k < np && k < (int)(sizeof(ph) / sizeof(ph[0])); k++) {
        if (ph[k].end_ns - ph[k].start_ns < min_len)
            hidden++;
        else
            text_phase(f, &ph[k]);
    }
    if (hidden)
        fprintf(f, "  (%d phase%s shorter than 1 %% of the run not shown)\n", hidden,
                hidden == 1 ? "" : "s");
}

static void text_stats(FILE *f, const struct fe_sim_stats *st)
{
    fprintf(f, "drops %llu (", (unsigned long long)st->drops_total);
    for (int i = 0; i < FE_SIM_DROP_MAX; i++)
        if (i != FE_SIM_DROP_NO_QP && i != FE_SIM_DROP_QP)
            fprintf(f, "%s%s %llu", i ? ", " : "", fe_sim_drop_name(i),
                    (unsigned long long)st->drops[i]);
    fprintf(f, "; %llu discarded by responders", (unsigned long long)st->drops[FE_SIM_DROP_QP]);
    char mb[32], mh[32];
    fmt_bytes(mb, sizeof(mb), st->max_buffer_bytes);
    fmt_bytes(mh, sizeof(mh), st->max_headroom_bytes);
    fprintf(f,
            "); PFC: %llu PAUSE frames, %llu RESUME, %llu pause events at switches, %llu at "
            "hosts; ECN marks %llu; CNPs %llu; retransmitted packets %llu, timeouts %llu; peak "
            "buffer %s, peak headroom %s\n",
            (unsigned long long)st->pause_frames, (unsigned long long)st->resume_frames,
            (unsigned long long)st->pause_events, (unsigned long long)st->host_pause_events,
            (unsigned long long)st->ecn_marks, (unsigned long long)st->cnps,
            (unsigned long long)st->retx_pkts, (unsigned long long)st->timeouts, mb, mh);
}

void fe_sim_report(FILE *f, const struct fe_sim *sim, const struct fe_sim_report_opts *o)
{
    if (o->json) {
        report_json(f, sim, o);
        return;
    }
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    struct fe_sim_summary sum;
    fe_sim_summarize(sim, &sum);
    text_header(f, sim, &st, o->wall_ns / 1e9);
    text_flows(f, sim, o->all_flows);
    fprintf(f,
            "\ncontention window %.3f - %.3f ms: %u flow%s, aggregate %.3f Gb/s, Jain %.4f, "
            "per flow %.3f .. %.3f Gb/s\n",
            sum.window_start_ns / 1e6, sum.window_end_ns / 1e6, sum.n_window_flows,
            sum.n_window_flows == 1 ? "" : "s", sum.aggregate_bps / 1e9, sum.jain,
            sum.min_bps / 1e9, sum.max_bps / 1e9);
    text_phases(f, sim, st.now_ns);
    text_stats(f, &st);
    sim_eb_report_text(f, sim);
}
