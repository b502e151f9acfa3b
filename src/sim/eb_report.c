/* Event building in the simulator: the results (the ledger's counts, building latency, per
 * builder throughput and slot occupancy), as figures, JSON and text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/eb.h"
#include "sim/sim_internal.h"

bool fe_sim_eb_enabled(const struct fe_sim *sim)
{
    return sim->eb != NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Trigger-to-complete of the built events: p50, p99, max (nearest rank). */
static void latencies(const struct sim_eb *eb, struct fe_sim_eb_stats *out)
{
    uint64_t *v = malloc((eb->n_events ? eb->n_events : 1) * sizeof(uint64_t)), n = 0;
    if (!v) return;
    for (uint64_t e = 0; e < eb->triggered; e++)
        if (fe_eb_ledger_state(eb->ledger, e) == FE_EB_BUILT)
            v[n++] = eb->complete_ns[e] - eb->trigger_ns[e];
    if (n) {
        qsort(v, n, sizeof(uint64_t), cmp_u64);
        out->latency_p50_ns = v[(n - 1) / 2];
        out->latency_p99_ns = v[(n * 99 + 99) / 100 - 1];
        out->latency_max_ns = v[n - 1];
    }
    free(v);
}

static uint64_t live_rnr_naks(const struct fe_sim *sim, const struct sim_eb *eb)
{
    uint64_t n = eb->rnr_naks;
    if (eb->done) return n;
    for (uint32_t i = 0; i < eb->cfg.n_frontends * eb->cfg.n_builders; i++) {
        const struct sim_flow *f = &sim->flows[eb->first_flow + i];
        if (f->resp && f->resp->qp) n += fe_qp_counters(f->resp->qp)->tx_rnr_naks;
    }
    return n;
}

void fe_sim_eb_stats(const struct fe_sim *sim, struct fe_sim_eb_stats *out)
{
    memset(out, 0, sizeof(*out));
    const struct sim_eb *eb = sim->eb;
    if (!eb) return;
    struct fe_eb_ledger_report r;
    bool ok = fe_eb_ledger_check(eb->ledger, &r);
    out->triggered = eb->triggered;
    out->built = r.count[FE_EB_BUILT];
    out->incomplete = r.count[FE_EB_INCOMPLETE];
    out->lost = r.count[FE_EB_LOST];
    out->busy = r.count[FE_EB_BUSY];
    out->missing = r.count[FE_EB_NONE];
    out->twice = r.twice;
    out->ledger_ok = ok && eb->triggered == eb->n_events;
    latencies(eb, out);
    for (uint32_t s = 0; s < eb->cfg.n_frontends; s++) out->busy_fragments += eb->fes[s].busy;
    out->rnr_naks = live_rnr_naks(sim, eb);
    out->first_trigger_ns = eb->first_trigger_ns;
    out->last_final_ns = eb->last_final_ns;
}

int fe_sim_eb_builder_stats(const struct fe_sim *sim, uint32_t builder,
                            struct fe_sim_eb_builder_stats *out)
{
    memset(out, 0, sizeof(*out));
    const struct sim_eb *eb = sim->eb;
    if (!eb || builder >= eb->cfg.n_builders) return FE_EINVAL;
    const struct eb_builder *b = &eb->bs[builder];
    out->node = eb->cfg.builders[builder];
    out->built = b->built;
    out->incomplete = b->incomplete;
    out->lost = b->lost;
    out->built_bytes = b->built_bytes;
    out->refused = b->refused;
    out->left = b->left;
    out->max_slots_used = b->max_used;
    uint64_t end = b->last_final_ns > eb->first_trigger_ns ? b->last_final_ns : sim->now;
    double span_s = (double)(end - eb->first_trigger_ns) / 1e9;
    if (span_s > 0) {
        out->events_per_s = (double)b->built / span_s;
        out->gbps = (double)b->built_bytes * 8 / span_s / 1e9;
        uint64_t area = b->used_area;
        if (end > b->used_t) area += (uint64_t)b->used * (end - b->used_t);
        out->mean_slots_used = (double)area / (span_s * 1e9);
    }
    return 0;
}

static const char *policy_name(const struct sim_eb *eb)
{
    return eb->cfg.policy == FE_SIM_EB_AVAILABILITY ? "availability" : "round-robin";
}

void sim_eb_report_json(FILE *f, const struct fe_sim *sim)
{
    const struct sim_eb *eb = sim->eb;
    if (!eb) return;
    struct fe_sim_eb_stats st;
    fe_sim_eb_stats(sim, &st);
    fprintf(f,
            ",\n  \"event_building\": {\"policy\": \"%s\", \"triggered\": %llu, \"built\": %llu, "
            "\"incomplete\": %llu, \"lost\": %llu, \"busy\": %llu, \"missing\": %llu, "
            "\"twice\": %llu, \"ledger_ok\": %s, \"busy_fragments\": %llu, \"rnr_naks\": %llu,\n"
            "    \"latency_ns\": {\"p50\": %llu, \"p99\": %llu, \"max\": %llu},\n"
            "    \"first_trigger_ns\": %llu, \"last_final_ns\": %llu,\n    \"builders\": [",
            policy_name(eb), (unsigned long long)st.triggered, (unsigned long long)st.built,
            (unsigned long long)st.incomplete, (unsigned long long)st.lost,
            (unsigned long long)st.busy, (unsigned long long)st.missing,
            (unsigned long long)st.twice, st.ledger_ok ? "true" : "false",
            (unsigned long long)st.busy_fragments, (unsigned long long)st.rnr_naks,
            (unsigned long long)st.latency_p50_ns, (unsigned long long)st.latency_p99_ns,
            (unsigned long long)st.latency_max_ns, (unsigned long long)st.first_trigger_ns,
            (unsigned long long)st.last_final_ns);
    for (uint32_t b = 0; b < eb->cfg.n_builders; b++) {
        struct fe_sim_eb_builder_stats bs;
        fe_sim_eb_builder_stats(sim, b, &bs);
        fprintf(f, "%s\n      {\"node\": ", b ? "," : "");
        sim_json_str(f, sim->sc.nodes[bs.node].name);
        fprintf(f,
                ", \"built\": %llu, \"incomplete\": %llu, \"lost\": "
                "%llu, \"events_per_s\": %.1f, \"gbps\": %.4f, \"slots_max\": %u, "
                "\"slots_mean\": %.3f, \"refused\": %llu, \"left\": %s}",
                (unsigned long long)bs.built, (unsigned long long)bs.incomplete,
                (unsigned long long)bs.lost, bs.events_per_s, bs.gbps, bs.max_slots_used,
                bs.mean_slots_used, (unsigned long long)bs.refused, bs.left ? "true" : "false");
    }
    fprintf(f, "\n    ]}");
}

void sim_eb_report_text(FILE *f, const struct fe_sim *sim)
{
    const struct sim_eb *eb = sim->eb;
    if (!eb) return;
    struct fe_sim_eb_stats st;
    fe_sim_eb_stats(sim, &st);
    fprintf(f,
            "event building (%s, %u front-ends, %u builders, %u slots): triggered %llu, built "
            "%llu, incomplete %llu, lost %llu, busy %llu; ledger %s",
            policy_name(eb), eb->cfg.n_frontends, eb->cfg.n_builders, eb->cfg.slots,
            (unsigned long long)st.triggered, (unsigned long long)st.built,
            (unsigned long long)st.incomplete, (unsigned long long)st.lost,
            (unsigned long long)st.busy, st.ledger_ok ? "ok" : "NOT OK");
    if (!st.ledger_ok)
        fprintf(f, " (%llu without a final state, %llu twice)", (unsigned long long)st.missing,
                (unsigned long long)st.twice);
    fprintf(f,
            "\n  latency trigger to complete: p50 %.3f ms, p99 %.3f ms, max %.3f ms; busy "
            "fragments %llu; RNR NAKs %llu\n",
            st.latency_p50_ns / 1e6, st.latency_p99_ns / 1e6, st.latency_max_ns / 1e6,
            (unsigned long long)st.busy_fragments, (unsigned long long)st.rnr_naks);
    fprintf(f, "  %-8s %9s %10s %6s %10s %8s %10s %10s\n", "builder", "built", "incomplete", "lost",
            "events/s", "Gb/s", "slots max", "slots mean");
    for (uint32_t b = 0; b < eb->cfg.n_builders; b++) {
        struct fe_sim_eb_builder_stats bs;
        fe_sim_eb_builder_stats(sim, b, &bs);
        fprintf(f, "  %-8s %9llu %10llu %6llu %10.1f %8.3f %10u %10.2f%s\n",
                sim->sc.nodes[bs.node].name, (unsigned long long)bs.built,
                (unsigned long long)bs.incomplete, (unsigned long long)bs.lost, bs.events_per_s,
                bs.gbps, bs.max_slots_used, bs.mean_slots_used, bs.left ? "  (left)" : "");
    }
}
