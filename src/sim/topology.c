/* Builds the network of a scenario: nodes, a port per link end, switch buffers (reserves and
 * PFC headroom carved out of the shared buffer), and shortest-path routes to every host with
 * all equal-cost next hops kept for ECMP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"

static int build_routes(struct fe_sim *sim, char *err, size_t err_cap)
{
    uint32_t n = sim->n_nodes;
    uint32_t *dist = malloc(n * sizeof(uint32_t));
    uint32_t *fifo = malloc(n * sizeof(uint32_t));
    uint32_t *cap = calloc(n, sizeof(uint32_t));
    uint32_t *len = calloc(n, sizeof(uint32_t));
    int rc = FE_ENOMEM;
    if (!dist || !fifo || !cap || !len) goto out;
    for (uint32_t s = 0; s < n; s++) {
        struct sim_switch *sw = sim->nodes[s].sw;
        if (!sw) continue;
        sw->route = calloc(n, sizeof(*sw->route));
        if (!sw->route) goto out;
    }
    for (uint32_t hi = 0; hi < sim->n_hosts; hi++) {
        uint32_t h = sim->hosts[hi].node->id;
        /* BFS from host h through switches only (hosts do not forward). */
        for (uint32_t i = 0; i < n; i++) dist[i] = UINT32_MAX;
        uint32_t qh = 0, qt = 0;
        dist[h] = 0;
        fifo[qt++] = h;
        while (qh < qt) {
            uint32_t u = fifo[qh++];
            if (u != h && !sim->nodes[u].is_switch) continue;
            for (uint32_t k = 0; k < sim->nodes[u].n_ports; k++) {
                uint32_t v = sim->nodes[u].ports[k].peer->node->id;
                if (dist[v] != UINT32_MAX) continue;
                dist[v] = dist[u] + 1;
                fifo[qt++] = v;
            }
        }
        for (uint32_t hj = 0; hj < sim->n_hosts; hj++) {
            uint32_t o = sim->hosts[hj].node->id;
            if (o != h && dist[o] == UINT32_MAX) {
                sim_errf(err, err_cap, "host %s cannot reach host %s", sim->sc.nodes[o].name,
                         sim->sc.nodes[h].name);
                rc = FE_EINVAL;
                goto out;
            }
        }
        for (uint32_t s = 0; s < n; s++) {
            struct sim_node *node = &sim->nodes[s];
            if (!node->sw || dist[s] == UINT32_MAX) continue;
            struct sim_switch *sw = node->sw;
            struct sim_route *r = &sw->route[h];
            r->off = len[s];
            for (uint32_t k = 0; k < node->n_ports; k++) {
                uint32_t v = node->ports[k].peer->node->id;
                if (dist[v] + 1 != dist[s]) continue;
                if (v != h && !sim->nodes[v].is_switch) continue;
                if (len[s] == cap[s]) {
                    uint32_t c = cap[s] ? cap[s] * 2 : 64;
                    uint16_t *nh = realloc(sw->nh, c * sizeof(uint16_t));
                    if (!nh) goto out;
                    sw->nh = nh;
                    cap[s] = c;
                }
                sw->nh[len[s]++] = (uint16_t)k;
                r->n++;
            }
            /* one choice, or no ECMP: the first next hop, found without a hash */
            if (r->n) r->port = &node->ports[sw->nh[r->off]];
            if (!sim->sc.sw.ecmp) r->n = r->n ? 1 : 0;
        }
    }
    rc = 0;
out:
    if (rc == FE_ENOMEM) sim_errf(err, err_cap, "out of memory building routes");
    free(dist);
    free(fifo);
    free(cap);
    free(len);
    return rc;
}

int sim_topology_build(struct fe_sim *sim, char *err, size_t err_cap)
{
    const struct fe_sim_scenario *sc = &sim->sc;
    uint32_t n = sc->n_nodes;
    sim->n_nodes = n;
    sim->nodes = calloc(n ? n : 1, sizeof(struct sim_node));
    uint32_t *deg = calloc(n ? n : 1, sizeof(uint32_t));
    if (!sim->nodes || !deg) {
        free(deg);
        sim_errf(err, err_cap, "out of memory");
        return FE_ENOMEM;
    }
    for (uint32_t i = 0; i < sc->n_links; i++) {
        const struct fe_sim_link *l = &sc->links[i];
        if (l->a >= n || l->b >= n || l->a == l->b) {
            free(deg);
            sim_errf(err, err_cap, "link %u joins invalid nodes", i);
            return FE_EINVAL;
        }
        if (!l->rate_bps) {
            free(deg);
            sim_errf(err, err_cap, "link %s-%s has rate 0", sc->nodes[l->a].name,
                     sc->nodes[l->b].name);
            return FE_EINVAL;
        }
        deg[l->a]++;
        deg[l->b]++;
    }
    sim->n_ports_total = 2 * sc->n_links;
    sim->ports =
        aligned_alloc(_Alignof(struct sim_port),
                      (sim->n_ports_total ? sim->n_ports_total : 1) * sizeof(struct sim_port));
    uint32_t n_sw = 0, n_host = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (sc->nodes[i].is_switch)
            n_sw++;
        else
            n_host++;
    }
    sim->sws =
        aligned_alloc(_Alignof(struct sim_switch), (n_sw ? n_sw : 1) * sizeof(struct sim_switch));
    sim->hosts =
        aligned_alloc(_Alignof(struct sim_host), (n_host ? n_host : 1) * sizeof(struct sim_host));
    if (!sim->ports || !sim->sws || !sim->hosts) {
        free(deg);
        sim_errf(err, err_cap, "out of memory");
        return FE_ENOMEM;
    }
    memset(sim->ports, 0, (sim->n_ports_total ? sim->n_ports_total : 1) * sizeof(struct sim_port));
    memset(sim->hosts, 0, (n_host ? n_host : 1) * sizeof(struct sim_host));
    memset(sim->sws, 0, (n_sw ? n_sw : 1) * sizeof(struct sim_switch));
    uint32_t off = 0, si = 0, hi = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct sim_node *node = &sim->nodes[i];
        node->id = i;
        node->is_switch = sc->nodes[i].is_switch;
        node->ports = &sim->ports[off];
        off += deg[i];
        if (node->is_switch) {
            if (deg[i] > 65535) {
                free(deg);
                sim_errf(err, err_cap, "switch %s has too many ports", sc->nodes[i].name);
                return FE_EINVAL;
            }
            node->sw = &sim->sws[si++];
            node->sw->node = node;
            node->sw->ports = node->ports;
            node->sw->salt = (uint32_t)(sim->sc.seed * 0x9E3779B9u) ^ sim_mix32(i + 1);
        } else {
            if (deg[i] != 1) {
                sim_errf(err, err_cap, "host %s has %u links; a host needs exactly one",
                         sc->nodes[i].name, deg[i]);
                free(deg);
                return FE_EINVAL;
            }
            node->host = &sim->hosts[hi];
            node->host->node = node;
            node->host->sim = sim;
            node->host->host_index = hi;
            hi++;
        }
    }
    free(deg);
    sim->n_hosts = n_host;
    for (uint32_t i = 0; i < sc->n_links; i++) {
        const struct fe_sim_link *l = &sc->links[i];
        struct sim_node *a = &sim->nodes[l->a], *b = &sim->nodes[l->b];
        struct sim_port *pa = &a->ports[a->n_ports], *pb = &b->ports[b->n_ports];
        pa->index = (uint16_t)a->n_ports++; /* at most 65535 ports (above) */
        pb->index = (uint16_t)b->n_ports++;
        pa->node = a;
        pb->node = b;
        pa->sw = a->sw;
        pb->sw = b->sw;
        pa->host = a->host;
        pb->host = b->host;
        pa->peer = pb;
        pb->peer = pa;
        pa->rate_bps = pb->rate_bps = l->rate_bps;
        pa->ser_fp_per_byte = pb->ser_fp_per_byte =
            (uint64_t)((8e9 * 16777216.0) / (double)l->rate_bps + 0.5);
        pa->delay_ns = pb->delay_ns = l->delay_ns;
        double loss = l->loss < 0 ? 0 : l->loss > 1 ? 1 : l->loss;
        pa->loss32 = pb->loss32 = (uint64_t)(loss * 4294967296.0);
    }
    /* Switch buffers: reserves for the priorities in use and headroom for the lossless ones. */
    uint8_t used =
        (uint8_t)(1u << sc->host.data_pcp | 1u << sc->host.ack_pcp | 1u << sc->host.cnp_pcp);
    for (uint32_t f = 0; f < sc->n_flows; f++)
        if (sc->flows[f].prio < FE_SIM_PRIOS) used |= (uint8_t)(1u << sc->flows[f].prio);
    uint8_t lossless = sc->sw.pfc ? sc->sw.lossless_mask : 0;
    for (uint32_t s = 0; s < n_sw; s++) {
        struct sim_switch *sw = &sim->sws[s];
        struct sim_node *node = sw->node;
        uint64_t carved = 0;
        for (uint32_t k = 0; k < node->n_ports; k++) {
            struct sim_port *p = &node->ports[k];
            p->headroom_bytes = sim_pfc_headroom(sim, p);
            sim_qdisc_port_setup(sim, p);
            if (sc->sw.ns3_mmu) { /* SwitchMmu::ConfigNPort: a reserve and a headroom per port */
                carved += sc->sw.reserve_bytes + p->headroom_bytes;
                continue;
            }
            carved += (uint64_t)__builtin_popcount(used) * sc->sw.reserve_bytes;
            carved += (uint64_t)__builtin_popcount(lossless) * p->headroom_bytes;
        }
        sw->buffer_bytes = sc->sw.buffer_bytes;
        if (carved >= sw->buffer_bytes) {
            sim_errf(err, err_cap,
                     "switch %s: buffer of %llu bytes too small for its reserves and PFC "
                     "headroom (%llu bytes)",
                     sc->nodes[node->id].name, (unsigned long long)sw->buffer_bytes,
                     (unsigned long long)carved);
            return FE_EINVAL;
        }
        sw->shared_bytes = sw->buffer_bytes - carved;
        /* sim_buffer_threshold is floor(free x alpha / 2^16) of the free shared bytes: not 0
         * while at least ceil(2^16 / alpha) are free */
        uint64_t min_free =
            sim->dt_alpha_q16 ? (sim->dt_alpha_q16 + 65535) / sim->dt_alpha_q16 : UINT64_MAX;
        for (uint8_t prio = 0; prio < FE_SIM_PRIOS; prio++)
            sw->pass_below[prio] = !(sim->lossless_prios >> prio & 1) ? UINT64_MAX
                                   : sw->shared_bytes >= min_free ? sw->shared_bytes - min_free + 1
                                                                  : 0;
    }
    for (uint32_t h = 0; h < n_host; h++) {
        sim_ecn_port_setup(sim, &sim->hosts[h].node->ports[0]);
        sim->hosts[h].node->ports[0].mark_above_bytes = UINT64_MAX; /* hosts do not mark */
    }
    return build_routes(sim, err, err_cap);
}

void sim_topology_free(struct fe_sim *sim)
{
    if (sim->sws) {
        for (uint32_t i = 0; i < sim->n_nodes; i++) {
            struct sim_switch *sw = sim->nodes ? sim->nodes[i].sw : NULL;
            if (!sw) continue;
            free(sw->route);
            free(sw->nh);
        }
    }
    free(sim->nodes);
    free(sim->ports);
    free(sim->sws);
    free(sim->hosts);
    sim->nodes = NULL;
    sim->ports = NULL;
    sim->sws = NULL;
    sim->hosts = NULL;
}
