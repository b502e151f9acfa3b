/* Traces: a CSV row every interval with, per flow, the payload throughput over the interval,
 * the CC's sending rate (Gb/s, the same unit for every algorithm) and the CC's own variables
 * (Rc, Rt, alpha... in their units, named in the header), and the queue of every switch port.
 * The same samples are kept in memory for --plot. At most 64 flows and 256 ports are traced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"
#include "sim/trace.h"

#define MAX_TRACE_FLOWS 64
#define MAX_TRACE_PORTS 256

static int cc_var_names(const struct fe_sim_cc *c, struct fe_cc_trace *names, int max)
{
    if (!c->algo || !c->algo->trace) return 0;
    size_t sz = fe_cc_instance_size(c->algo);
    struct fe_cc *cc = aligned_alloc(16, (sz + 15) & ~(size_t)15);
    if (!cc) return 0;
    memset(cc, 0, sz);
    struct fe_cc_env env = {.line_rate_bps = 10000000000ull, .mtu_bytes = 4096, .now_ns = 0};
    fe_cc_init(cc, &c->params, &env);
    int n = fe_cc_trace(cc, names, max);
    free(cc);
    return n;
}

struct fe_sim_trace *fe_sim_trace_open(struct fe_sim *sim, const char *csv_path,
                                       uint64_t interval_ns, char *err, size_t err_cap)
{
    struct fe_sim_trace *t = calloc(1, sizeof(*t));
    if (!t) {
        sim_errf(err, err_cap, "out of memory");
        return NULL;
    }
    t->sim = sim;
    t->interval_ns = interval_ns ? interval_ns : 100000;
    t->next_ns = fe_sim_now(sim);
    t->n_flows = sim->n_flows < MAX_TRACE_FLOWS ? sim->n_flows : MAX_TRACE_FLOWS;
    t->last_rx = calloc(t->n_flows ? t->n_flows : 1, sizeof(uint64_t));
    t->n_vars = calloc(t->n_flows ? t->n_flows : 1, sizeof(int));
    if (!t->last_rx || !t->n_vars) goto oom;
    for (uint32_t n = 0; n < sim->n_nodes && t->n_ports < MAX_TRACE_PORTS; n++) {
        if (!sim->nodes[n].is_switch) continue;
        for (uint32_t p = 0; p < sim->nodes[n].n_ports && t->n_ports < MAX_TRACE_PORTS; p++) {
            t->port_node[t->n_ports] = n;
            t->port_idx[t->n_ports++] = p;
        }
    }
    if (csv_path) {
        t->csv = fopen(csv_path, "w");
        if (!t->csv) {
            sim_errf(err, err_cap, "cannot write %s", csv_path);
            fe_sim_trace_close(t);
            return NULL;
        }
        fprintf(t->csv, "time_us");
        for (uint32_t i = 0; i < t->n_flows; i++) {
            fprintf(t->csv, ",f%u_gbps,f%u_rate_gbps", i, i);
            struct fe_cc_trace names[FE_CC_MAX_TRACE];
            int nv = cc_var_names(&sim->sc.cc[sim->flows[i].spec.cc], names, FE_CC_MAX_TRACE);
            t->n_vars[i] = nv;
            for (int v = 0; v < nv; v++)
                fprintf(t->csv, ",f%u_%s%s%s%s", i, names[v].name, *names[v].unit ? "[" : "",
                        names[v].unit, *names[v].unit ? "]" : "");
        }
        for (uint32_t k = 0; k < t->n_ports; k++)
            fprintf(t->csv, ",q_%s_p%u_bytes", sim->sc.nodes[t->port_node[k]].name, t->port_idx[k]);
        fputc('\n', t->csv);
    }
    return t;
oom:
    sim_errf(err, err_cap, "out of memory");
    fe_sim_trace_close(t);
    return NULL;
}

uint64_t fe_sim_trace_next(const struct fe_sim_trace *t)
{
    return t->next_ns;
}

static int keep_sample(struct fe_sim_trace *t)
{
    if (t->n_samples == t->cap_samples) {
        size_t cap = t->cap_samples ? t->cap_samples * 2 : 256;
        size_t per = 1 + 2 * (size_t)t->n_flows;
        double *v = realloc(t->samples, cap * per * sizeof(double));
        if (!v) return FE_ENOMEM;
        t->samples = v;
        t->cap_samples = cap;
    }
    return 0;
}

void fe_sim_trace_sample(struct fe_sim_trace *t)
{
    struct fe_sim *sim = t->sim;
    uint64_t now = fe_sim_now(sim);
    double dt = t->n_samples || t->last_ns ? (double)(now - t->last_ns) : 0;
    bool keep = keep_sample(t) == 0;
    size_t per = 1 + 2 * (size_t)t->n_flows;
    double *row = keep ? &t->samples[t->n_samples * per] : NULL;
    if (row) row[0] = now / 1e3;
    if (t->csv) fprintf(t->csv, "%.3f", now / 1e3);
    for (uint32_t i = 0; i < t->n_flows; i++) {
        struct fe_sim_flow_stats fs;
        fe_sim_flow_stats(sim, i, &fs);
        double gbps = dt > 0 ? (double)(fs.rx_bytes - t->last_rx[i]) * 8 / dt : 0;
        t->last_rx[i] = fs.rx_bytes;
        uint64_t r = fe_sim_flow_rate_Bps(sim, i);
        double rate = !fs.started || fs.done ? 0
                      : r == FE_CC_UNLIMITED ? (double)sim->flows[i].path_rate_bps / 1e9
                                             : (double)r * 8 / 1e9;
        if (row) {
            row[1 + 2 * i] = gbps;
            row[2 + 2 * i] = rate;
        }
        if (t->csv) {
            fprintf(t->csv, ",%.4f,%.4f", gbps, rate);
            struct fe_cc_trace v[FE_CC_MAX_TRACE];
            int nv = fe_sim_flow_cc_trace(sim, i, v, FE_CC_MAX_TRACE);
            for (int k = 0; k < t->n_vars[i]; k++) {
                if (k < nv)
                    fprintf(t->csv, ",%.6g", v[k].value);
                else
                    fputc(',', t->csv);
            }
        }
    }
    if (t->csv) {
        for (uint32_t k = 0; k < t->n_ports; k++)
            fprintf(
                t->csv, ",%llu",
                (unsigned long long)sim->nodes[t->port_node[k]].ports[t->port_idx[k]].queue_bytes);
        fputc('\n', t->csv);
    }
    if (row) t->n_samples++;
    t->last_ns = now;
    t->next_ns = now + t->interval_ns;
}

int fe_sim_trace_close(struct fe_sim_trace *t)
{
    if (!t) return 0;
    int rc = t->csv && (ferror(t->csv) | fclose(t->csv)) ? FE_EIO : 0;
    free(t->last_rx);
    free(t->n_vars);
    free(t->samples);
    free(t);
    return rc;
}
