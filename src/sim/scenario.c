/* Scenario descriptions: defaults, building helpers, CC profiles and the ns-3 compatible
 * modelling switch. The parsers (scenario_yaml.c, ns3.c) and the built-ins (builtin.c) fill
 * one in; fe_sim_create() copies it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"

void fe_sim_scenario_init(struct fe_sim_scenario *sc)
{
    memset(sc, 0, sizeof(*sc));
    snprintf(sc->name, sizeof(sc->name), "scenario");
    sc->seed = 1;
    sc->stop_ns = FE_SIM_NO_TIME;
    sc->window_start_ns = FE_SIM_NO_TIME;
    sc->window_end_ns = FE_SIM_NO_TIME;

    struct fe_sim_switch_cfg *w = &sc->sw;
    w->buffer_bytes = 12u << 20;
    w->reserve_bytes = FE_SIM_AUTO;
    w->dt_alpha = 1.0 / 8;
    w->pfc = true;
    w->lossless_mask = 1u << 3;
    w->pfc_mode = FE_SIM_PFC_QUANTA;
    w->pause_quanta = 0xFFFF;
    w->headroom_bytes = 0;
    w->xon_offset_bytes = FE_SIM_AUTO;
    w->ecn = false;
    w->ecmp = true;
    w->cnp_monitor_bps = 0;
    w->cnp_monitor_window_ns = 32000;

    struct fe_sim_host_cfg *h = &sc->host;
    h->mtu_bytes = 4096;
    h->replay_bytes = 0;
    h->ack_every = 32;
    h->ackreq_every = 32;
    /* IB local ACK timeout 14 (67 ms), the ConnectX default: a PFC-paused fabric can hold a
     * packet for milliseconds, and a shorter timer would retransmit what is only queued. */
    h->ack_timeout_ns = 67108864;
    h->retry_cnt = 7;
    h->np_enable = true;
    h->ecn_echo_on_ack = false;
    h->cnp_interval_ns = 4000;
    h->data_pcp = 3;
    h->data_dscp = 26;
    h->ack_pcp = 3;
    h->cnp_pcp = FE_CNP_PCP;
    h->cnp_dscp = FE_CNP_DSCP;
    h->pacer_burst_bytes = 0;
    h->count_ifg = true;
    h->min_frame_bytes = 64;

    /* event building: off (no hosts); the rest are its defaults (docs/sim.md) */
    struct fe_sim_eb *e = &sc->eb;
    e->policy = FE_SIM_EB_ROUND_ROBIN;
    e->trigger = FE_SIM_EB_PERIODIC;
    e->rate_hz = 10000;
    e->events = 1000;
    e->start_ns = 100000;
    e->dist = FE_SIM_EB_FIXED;
    e->frag_bytes = 8192;
    e->frag_min_bytes = 1;
    e->frag_max_bytes = 8192;
    e->frag_sd_bytes = 1024;
    e->slots = 16;
    e->timeout_ns = 1000000;
    e->consumer_bps = 8000000000ull;
    e->fe_queue = 2;
    e->tokens = 0;
    e->rnr_timer = 4; /* 40 us */
    e->ctrl_delay_ns = 10000;
    e->ctrl_interval_ns = 20000;
    e->lead_events = 32;
    e->reserve_slots = 1;
    e->run_events = 1;
    e->builder_timeout_ns = 1000000;
    e->slow_builder = FE_SIM_EB_NONE;
    e->slow_bps = 1000000000ull;
    e->leave_builder = FE_SIM_EB_NONE;

    sc->n_cc = 1;
    snprintf(sc->cc[0].label, sizeof(sc->cc[0].label), "default");
    sc->cc[0].algo = NULL;
}

void fe_sim_scenario_free(struct fe_sim_scenario *sc)
{
    free(sc->nodes);
    free(sc->links);
    free(sc->flows);
    sc->nodes = NULL;
    sc->links = NULL;
    sc->flows = NULL;
    sc->n_nodes = sc->n_links = sc->n_flows = 0;
    sc->cap_nodes = sc->cap_links = sc->cap_flows = 0;
}

static int grow(void **v, uint32_t *cap, uint32_t n, size_t elem)
{
    if (n < *cap) return 0;
    if (n >= (1u << 30)) return FE_ERANGE;
    uint32_t c = *cap ? *cap * 2 : 16;
    void *nv = realloc(*v, (size_t)c * elem);
    if (!nv) return FE_ENOMEM;
    *v = nv;
    *cap = c;
    return 0;
}

int fe_sim_scenario_add_node(struct fe_sim_scenario *sc, const char *name, bool is_switch)
{
    int rc = grow((void **)&sc->nodes, &sc->cap_nodes, sc->n_nodes, sizeof(*sc->nodes));
    if (rc) return rc;
    struct fe_sim_node *n = &sc->nodes[sc->n_nodes];
    memset(n, 0, sizeof(*n));
    if (name)
        snprintf(n->name, sizeof(n->name), "%s", name);
    else
        snprintf(n->name, sizeof(n->name), "%u", sc->n_nodes);
    n->is_switch = is_switch;
    return (int)sc->n_nodes++;
}

int fe_sim_scenario_add_link(struct fe_sim_scenario *sc, uint32_t a, uint32_t b, uint64_t rate_bps,
                             uint64_t delay_ns, double loss)
{
    if (a >= sc->n_nodes || b >= sc->n_nodes || a == b || !rate_bps || !(loss >= 0 && loss <= 1) ||
        delay_ns > FE_SIM_MAX_TIME / 4)
        return FE_EINVAL;
    int rc = grow((void **)&sc->links, &sc->cap_links, sc->n_links, sizeof(*sc->links));
    if (rc) return rc;
    struct fe_sim_link *l = &sc->links[sc->n_links];
    l->a = a;
    l->b = b;
    l->rate_bps = rate_bps;
    l->delay_ns = delay_ns;
    l->loss = loss;
    return (int)sc->n_links++;
}

int fe_sim_scenario_add_flow(struct fe_sim_scenario *sc, const struct fe_sim_flow *f)
{
    if (f->src >= sc->n_nodes || f->dst >= sc->n_nodes || f->src == f->dst || !f->bytes ||
        f->cc >= sc->n_cc || f->start_ns > FE_SIM_MAX_TIME)
        return FE_EINVAL;
    int rc = grow((void **)&sc->flows, &sc->cap_flows, sc->n_flows, sizeof(*sc->flows));
    if (rc) return rc;
    sc->flows[sc->n_flows] = *f;
    return (int)sc->n_flows++;
}

int fe_sim_scenario_find_node(const struct fe_sim_scenario *sc, const char *name)
{
    for (uint32_t i = 0; i < sc->n_nodes; i++)
        if (!strcmp(sc->nodes[i].name, name)) return (int)i;
    return FE_ENOENT;
}

int fe_sim_scenario_set_cc(struct fe_sim_scenario *sc, int index, const char *algo,
                           const char *params, char *err, size_t err_cap)
{
    if (index < 0) {
        if (sc->n_cc >= FE_SIM_MAX_CC) {
            sim_errf(err, err_cap, "too many congestion-control profiles (at most %d)",
                     FE_SIM_MAX_CC);
            return FE_ERANGE;
        }
        index = (int)sc->n_cc;
    } else if ((uint32_t)index > sc->n_cc || index >= FE_SIM_MAX_CC) {
        sim_errf(err, err_cap, "no congestion-control profile %d", index);
        return FE_EINVAL;
    }
    const struct fe_cc_algo *a = NULL;
    if (algo && *algo) {
        a = fe_cc_find(algo);
        if (!a) {
            char list[256] = "";
            size_t o = 0;
            for (const struct fe_cc_algo *const *l = fe_cc_list(); *l && o < sizeof(list) - 1; l++)
                o +=
                    (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", o ? ", " : "", (*l)->name);
            sim_errf(err, err_cap, "unknown congestion control '%s' (known: %s)", algo, list);
            return FE_ENOENT;
        }
    }
    struct fe_sim_cc *c = &sc->cc[index];
    struct fe_sim_cc tmp;
    memset(&tmp, 0, sizeof(tmp));
    snprintf(tmp.label, sizeof(tmp.label), "%s", a ? a->name : "none");
    tmp.algo = a;
    if (a) {
        fe_cc_params_default(&tmp.params, a);
        if (params && *params) {
            char e[200] = "";
            int rc = fe_cc_params_parse(&tmp.params, params, e, sizeof(e));
            if (rc) {
                sim_errf(err, err_cap, "%s: %s", a->name, e);
                return rc;
            }
        }
    } else if (params && *params) {
        sim_errf(err, err_cap, "parameters given without a congestion control");
        return FE_EINVAL;
    }
    *c = tmp;
    if ((uint32_t)index == sc->n_cc) sc->n_cc++;
    return index;
}

/* Multiplier from a rate unit of a CC parameter table to b/s (0 = not a rate). */
static double rate_unit_bps(const char *unit)
{
    if (!strcmp(unit, "Mb/s")) return 1e6;
    if (!strcmp(unit, "B/s")) return 8;
    if (!strcmp(unit, "b/s")) return 1;
    if (!strcmp(unit, "Gb/s")) return 1e9;
    return 0;
}

/* The same DCQCN settings under another profile: parameters of the same name are carried over,
 * rates converted between the profiles' units, other units copied only when they agree. */
static void dcqcn_translate(struct fe_sim_cc *c, const struct fe_cc_algo *to)
{
    struct fe_cc_params np;
    fe_cc_params_default(&np, to);
    for (size_t i = 0; i < to->n_params; i++) {
        const struct fe_cc_param *tp = &to->params[i];
        int j = fe_cc_param_index(c->algo, tp->name);
        if (j < 0) continue;
        const struct fe_cc_param *fp = &c->algo->params[j];
        double v = c->params.v[j];
        double fu = rate_unit_bps(fp->unit), tu = rate_unit_bps(tp->unit);
        if (fu && tu)
            v = v * fu / tu;
        else if (strcmp(fp->unit, tp->unit))
            continue;
        if (tp->integer) v = (double)(long long)(v + 0.5);
        if (v < tp->min || v > tp->max) continue;
        np.v[i] = v;
    }
    c->algo = to;
    c->params = np;
    snprintf(c->label, sizeof(c->label), "%s", to->name);
}

void fe_sim_scenario_ns3_compat(struct fe_sim_scenario *sc)
{
    sc->host.ecn_echo_on_ack = true;
    sc->host.ack_every = 1;
    sc->host.ackreq_every = 1;
    sc->host.count_ifg = false;
    sc->host.frames = FE_SIM_FRAMES_HPCC_NS3;
    /* their MMU's constants (switch-mmu.cc): 4 KiB reserve per port, RESUME 3 KiB under the
     * threshold, the buffer carved as theirs (ns3_mmu: headroom 3 x rate x delay, or feroce's
     * lossless sizing where that is larger, unless set) */
    if (sc->sw.reserve_bytes == FE_SIM_AUTO) sc->sw.reserve_bytes = 4096;
    if (sc->sw.xon_offset_bytes == FE_SIM_AUTO) sc->sw.xon_offset_bytes = 3072;
    sc->sw.pfc_mode = FE_SIM_PFC_XOFF_XON;
    sc->sw.ns3_mmu = true;
    /* their DCQCN model */
    const struct fe_cc_algo *ns3 = fe_cc_find("dcqcn-hpcc-ns3");
    for (uint32_t i = 0; i < sc->n_cc && ns3; i++) {
        struct fe_sim_cc *c = &sc->cc[i];
        if (c->algo && c->algo != ns3 && (c->algo->caps & FE_CC_CAP_DCQCN)) dcqcn_translate(c, ns3);
    }
}
