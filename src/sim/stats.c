/* Statistics and accessors of a simulator: counters derived from the per-port, per-kind and
 * per-flow ones, per-port and per-flow views, names. */
#include <string.h>

#include "feroce/err.h"
#include "sim/state.h"

const char *fe_sim_drop_name(int reason)
{
    static const char *const names[FE_SIM_DROP_MAX] = {
        "buffer", "headroom", "link", "no-route", "no-qp", "qp",
    };
    return reason >= 0 && reason < FE_SIM_DROP_MAX ? names[reason] : "unknown";
}
uint64_t fe_sim_now(const struct fe_sim *sim)
{
    return sim->now;
}
bool fe_sim_finished(const struct fe_sim *sim)
{
    return sim->finished;
}
const struct fe_sim_scenario *fe_sim_scenario_of(const struct fe_sim *sim)
{
    return &sim->sc;
}
uint32_t fe_sim_n_flows(const struct fe_sim *sim)
{
    return sim->n_flows;
}
uint32_t fe_sim_n_nodes(const struct fe_sim *sim)
{
    return sim->n_nodes;
}
uint32_t fe_sim_node_ports(const struct fe_sim *sim, uint32_t node)
{
    return node < sim->n_nodes ? sim->nodes[node].n_ports : 0;
}
void fe_sim_window(const struct fe_sim *sim, uint64_t *start_ns, uint64_t *end_ns)
{
    *start_ns = sim->window_start;
    *end_ns = sim->window_closed ? sim->window_end : sim->now;
}
void fe_sim_stats(const struct fe_sim *sim, struct fe_sim_stats *out)
{
    *out = sim->st;
    out->pkts_sent = out->ecn_marks = 0; /* per port, counted once per frame */
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        out->pkts_sent += sim->ports[i].tx_pkts;
        out->ecn_marks += sim->ports[i].ecn_marks;
    }
    out->events = 0;
    for (size_t k = 0; k < sizeof(sim->ev_kind_count) / sizeof(sim->ev_kind_count[0]); k++)
        out->events += sim->ev_kind_count[k];
    out->now_ns = sim->now;
    out->drops_total = 0;
    for (int i = 0; i < FE_SIM_DROP_MAX; i++)
        if (i != FE_SIM_DROP_NO_QP && i != FE_SIM_DROP_QP) out->drops_total += sim->st.drops[i];
    out->max_buffer_bytes = 0;
    for (uint32_t i = 0; i < sim->n_nodes; i++)
        if (sim->nodes[i].sw && sim->nodes[i].sw->max_used > out->max_buffer_bytes)
            out->max_buffer_bytes = sim->nodes[i].sw->max_used;
    out->pool_pkts = sim->pool_pkts;
    out->flows_done = sim->flows_done;
    out->flows_started = sim->flows_started;
    /* live QP counters */
    out->retx_pkts = 0;
    out->timeouts = 0;
    out->data_pkts_delivered = 0;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        struct sim_flow_counts n;
        sim_flow_counters(&sim->flows[i], &n);
        out->retx_pkts += n.retx_pkts;
        out->timeouts += n.timeouts;
        out->data_pkts_delivered += n.rx_pkts;
    }
}
int fe_sim_port_stats(const struct fe_sim *sim, uint32_t node, uint32_t port,
                      struct fe_sim_port_stats *out)
{
    if (node >= sim->n_nodes || port >= sim->nodes[node].n_ports) return FE_EINVAL;
    const struct sim_port *p = &sim->nodes[node].ports[port];
    memset(out, 0, sizeof(*out));
    out->peer_node = p->peer->node->id;
    out->peer_port = p->peer->index;
    out->rate_bps = p->rate_bps;
    out->delay_ns = p->delay_ns;
    out->tx_pkts = p->tx_pkts;
    out->tx_bytes = p->tx_bytes;
    out->queue_bytes = p->queue_bytes;
    out->max_queue_bytes = p->max_queue_bytes;
    out->pause_tx = p->pause_tx;
    out->resume_tx = p->resume_tx;
    out->pause_rx = p->pause_rx;
    out->paused_ns = p->paused_ns + (p->paused ? sim->now - p->paused_since : 0);
    out->ecn_marks = p->ecn_marks;
    out->drops = p->drops;
    out->headroom_bytes = sim->nodes[node].is_switch ? p->headroom_bytes : 0;
    return 0;
}
int fe_sim_flow_stats(const struct fe_sim *sim, uint32_t flow, struct fe_sim_flow_stats *out)
{
    if (flow >= sim->n_flows) return FE_EINVAL;
    const struct sim_flow *f = &sim->flows[flow];
    struct sim_flow_counts n;
    sim_flow_counters(f, &n);
    memset(out, 0, sizeof(*out));
    out->src = f->spec.src;
    out->dst = f->spec.dst;
    out->bytes = f->spec.bytes;
    out->start_ns = f->spec.start_ns;
    out->finish_ns = f->finish_ns;
    out->rx_bytes = n.rx_bytes;
    out->acked_bytes = n.acked_bytes;
    out->window_bytes = sim->window_closed ? f->window_bytes
                                           : (sim->window_opened ? n.rx_bytes - f->window_rx0 : 0);
    out->tx_pkts = n.tx_pkts;
    out->retx_pkts = n.retx_pkts;
    out->timeouts = n.timeouts;
    out->cnps_rx = n.cnps_rx;
    out->ecn_marked = n.ce_rx;
    out->rtt_avg_ns = n.rtt_samples ? n.rtt_sum / n.rtt_samples : 0;
    out->rtt_max_ns = n.rtt_max;
    out->rtt_samples = n.rtt_samples;
    out->rtt_sum_ns = n.rtt_sum;
    out->standalone_fct_ns = f->standalone_fct_ns;
    out->started = f->started;
    out->done = f->done;
    out->failed = f->failed;
    return 0;
}
int fe_sim_flow_cc_trace(const struct fe_sim *sim, uint32_t flow, struct fe_cc_trace *vals, int max)
{
    if (flow >= sim->n_flows) return 0;
    const struct sim_flow *f = &sim->flows[flow];
    if (!f->req || !f->req->qp) return 0;
    return fe_cc_trace(fe_qp_cc(f->req->qp), vals, max);
}
uint64_t fe_sim_flow_rate_Bps(const struct fe_sim *sim, uint32_t flow)
{
    if (flow >= sim->n_flows) return 0;
    const struct sim_flow *f = &sim->flows[flow];
    if (!f->req || !f->req->qp) return 0;
    return fe_qp_cc(f->req->qp)->out.rate_Bps;
}
