/* Builds the network of a scenario: nodes, a port per link end, switch buffers (reserves and
 * PFC headroom carved out of the shared buffer), and shortest-path routes to every host with
 * all equal-cost next hops kept for ECMP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"

/* the routes' work space: BFS distances and queue, and per node the next hops' capacity and
 * length in its switch's nh */
struct route_ws {
    uint32_t *dist, *fifo, *cap, *len;
};

/* BFS from host h through switches only (hosts do not forward). */
static void bfs_from_host(const struct fe_sim *sim, uint32_t h, struct route_ws *w)
{
    uint32_t n = sim->n_nodes;
    for (uint32_t i = 0; i < n; i++) w->dist[i] = UINT32_MAX;
    uint32_t qh = 0, qt = 0;
    w->dist[h] = 0;
    w->fifo[qt++] = h;
    while (qh < qt) {
        uint32_t u = w->fifo[qh++];
        if (u != h && !sim->nodes[u].is_switch) continue;
        for (uint32_t k = 0; k < sim->nodes[u].n_ports; k++) {
            uint32_t v = sim->nodes[u].ports[k].peer->node->id;
            if (w->dist[v] != UINT32_MAX) continue;
            w->dist[v] = w->dist[u] + 1;
            w->fifo[qt++] = v;
        }
    }
}

static int check_reachable(const struct fe_sim *sim, uint32_t h, const uint32_t *dist, char *err,
                           size_t err_cap)
{
    for (uint32_t hj = 0; hj < sim->n_hosts; hj++) {
        uint32_t o = sim->hosts[hj].node->id;
        if (o != h && dist[o] == UINT32_MAX) {
            sim_errf(err, err_cap, "host %s cannot reach host %s", sim->sc.nodes[o].name,
                     sim->sc.nodes[h].name);
            return FE_EINVAL;
        }
    }
    return 0;
}

/* the route of switch node s to host h: every port one hop closer to h */
static int add_route(struct fe_sim *sim, uint32_t s, uint32_t h, struct route_ws *w)
{
    struct sim_node *node = &sim->nodes[s];
    struct sim_switch *sw = node->sw;
    struct sim_route *r = &sw->route[h];
    r->off = w->len[s];
    for (uint32_t k = 0; k < node->n_ports; k++) {
        uint32_t v = node->ports[k].peer->node->id;
        if (w->dist[v] + 1 != w->dist[s]) continue;
        if (v != h && !sim->nodes[v].is_switch) continue;
        if (w->len[s] == w->cap[s]) {
            uint32_t c = w->cap[s] ? w->cap[s] * 2 : 64;
            uint16_t *nh = realloc(sw->nh, c * sizeof(uint16_t));
            if (!nh) return FE_ENOMEM;
            sw->nh = nh;
            w->cap[s] = c;
        }
        sw->nh[w->len[s]++] = (uint16_t)k;
        r->n++;
    }
    /* one choice, or no ECMP: the first next hop, found without a hash */
    if (r->n) r->port = &node->ports[sw->nh[r->off]];
    if (!sim->sc.sw.ecmp) r->n = r->n ? 1 : 0;
    return 0;
}

static int routes_to_host(struct fe_sim *sim, uint32_t h, struct route_ws *w, char *err,
                          size_t err_cap)
{
    bfs_from_host(sim, h, w);
    int rc = check_reachable(sim, h, w->dist, err, err_cap);
    for (uint32_t s = 0; !rc && s < sim->n_nodes; s++)
        if (sim->nodes[s].sw && w->dist[s] != UINT32_MAX) rc = add_route(sim, s, h, w);
    return rc;
}

static bool alloc_route_tables(struct fe_sim *sim)
{
    for (uint32_t s = 0; s < sim->n_nodes; s++) {
        struct sim_switch *sw = sim->nodes[s].sw;
        if (!sw) continue;
        sw->route = calloc(sim->n_nodes, sizeof(*sw->route));
        if (!sw->route) return false;
    }
    return true;
}

static int build_routes(struct fe_sim *sim, char *err, size_t err_cap)
{
    uint32_t n = sim->n_nodes;
    struct route_ws w = {malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)),
                         calloc(n, sizeof(uint32_t)), calloc(n, sizeof(uint32_t))};
    int rc = FE_ENOMEM;
    if (w.dist && w.fifo && w.cap && w.len && alloc_route_tables(sim)) {
        rc = 0;
        for (uint32_t hi = 0; !rc && hi < sim->n_hosts; hi++)
            rc = routes_to_host(sim, sim->hosts[hi].node->id, &w, err, err_cap);
    }
    if (rc == FE_ENOMEM) sim_errf(err, err_cap, "out of memory building routes");
    free(w.dist);
    free(w.fifo);
    free(w.cap);
    free(w.len);
    return rc;
}

/* each node's link count into deg, the links checked */
static int count_links(const struct fe_sim_scenario *sc, uint32_t *deg, char *err, size_t err_cap)
{
    uint32_t n = sc->n_nodes;
    for (uint32_t i = 0; i < sc->n_links; i++) {
        const struct fe_sim_link *l = &sc->links[i];
        if (l->a >= n || l->b >= n || l->a == l->b) {
            sim_errf(err, err_cap, "link %u joins invalid nodes", i);
            return FE_EINVAL;
        }
        if (!l->rate_bps) {
            sim_errf(err, err_cap, "link %s-%s has rate 0", sc->nodes[l->a].name,
                     sc->nodes[l->b].name);
            return FE_EINVAL;
        }
        deg[l->a]++;
        deg[l->b]++;
    }
    return 0;
}

/* the ports, switches and hosts, zeroed (at least one of each, for the allocators) */
static int alloc_elements(struct fe_sim *sim, uint32_t n_sw, uint32_t n_host, char *err,
                          size_t err_cap)
{
    sim->n_ports_total = 2 * sim->sc.n_links;
    size_t n_ports = sim->n_ports_total ? sim->n_ports_total : 1;
    sim->ports = aligned_alloc(_Alignof(struct sim_port), n_ports * sizeof(struct sim_port));
    sim->sws =
        aligned_alloc(_Alignof(struct sim_switch), (n_sw ? n_sw : 1) * sizeof(struct sim_switch));
    sim->hosts =
        aligned_alloc(_Alignof(struct sim_host), (n_host ? n_host : 1) * sizeof(struct sim_host));
    if (!sim->ports || !sim->sws || !sim->hosts) {
        sim_errf(err, err_cap, "out of memory");
        return FE_ENOMEM;
    }
    memset(sim->ports, 0, n_ports * sizeof(struct sim_port));
    memset(sim->hosts, 0, (n_host ? n_host : 1) * sizeof(struct sim_host));
    memset(sim->sws, 0, (n_sw ? n_sw : 1) * sizeof(struct sim_switch));
    return 0;
}

/* node i with deg ports from *off on; its switch or host the next free one */
static int place_node(struct fe_sim *sim, uint32_t i, uint32_t deg, uint32_t *off, uint32_t *si,
                      uint32_t *hi, char *err, size_t err_cap)
{
    const struct fe_sim_scenario *sc = &sim->sc;
    struct sim_node *node = &sim->nodes[i];
    node->id = i;
    node->is_switch = sc->nodes[i].is_switch;
    node->ports = &sim->ports[*off];
    *off += deg;
    if (node->is_switch) {
        if (deg > 65535) {
            sim_errf(err, err_cap, "switch %s has too many ports", sc->nodes[i].name);
            return FE_EINVAL;
        }
        node->sw = &sim->sws[(*si)++];
        node->sw->node = node;
        node->sw->ports = node->ports;
        node->sw->salt = (uint32_t)(sim->sc.seed * 0x9E3779B9u) ^ sim_mix32(i + 1);
        return 0;
    }
    if (deg != 1) {
        sim_errf(err, err_cap, "host %s has %u links; a host needs exactly one", sc->nodes[i].name,
                 deg);
        return FE_EINVAL;
    }
    node->host = &sim->hosts[*hi];
    node->host->node = node;
    node->host->sim = sim;
    node->host->host_index = *hi;
    (*hi)++;
    return 0;
}

/* the nodes, their ports, switches (*n_sw) and hosts */
static int place_nodes(struct fe_sim *sim, const uint32_t *deg, uint32_t *n_sw_out, char *err,
                       size_t err_cap)
{
    const struct fe_sim_scenario *sc = &sim->sc;
    uint32_t n_sw = 0, n_host = 0;
    for (uint32_t i = 0; i < sc->n_nodes; i++) {
        if (sc->nodes[i].is_switch)
            n_sw++;
        else
            n_host++;
    }
    int rc = alloc_elements(sim, n_sw, n_host, err, err_cap);
    uint32_t off = 0, si = 0, hi = 0;
    for (uint32_t i = 0; !rc && i < sc->n_nodes; i++)
        rc = place_node(sim, i, deg[i], &off, &si, &hi, err, err_cap);
    if (rc) return rc;
    *n_sw_out = n_sw;
    sim->n_hosts = n_host;
    return 0;
}

static void connect_link(struct fe_sim *sim, const struct fe_sim_link *l)
{
    struct sim_node *a = &sim->nodes[l->a], *b = &sim->nodes[l->b];
    struct sim_port *pa = &a->ports[a->n_ports], *pb = &b->ports[b->n_ports];
    pa->index = (uint16_t)a->n_ports++; /* at most 65535 ports (place_node) */
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

/* the priorities with a reserve in switch buffers: those of flows, ACKs and CNPs */
static uint8_t prios_in_use(const struct fe_sim_scenario *sc)
{
    uint8_t used =
        (uint8_t)(1u << sc->host.data_pcp | 1u << sc->host.ack_pcp | 1u << sc->host.cnp_pcp);
    for (uint32_t f = 0; f < sc->n_flows; f++)
        if (sc->flows[f].prio < FE_SIM_PRIOS) used |= (uint8_t)(1u << sc->flows[f].prio);
    return used;
}

/* the bytes of sw's buffer its ports' reserves and PFC headroom take; sets up their ECN */
static uint64_t carve_ports(struct fe_sim *sim, struct sim_switch *sw, uint8_t used)
{
    const struct fe_sim_scenario *sc = &sim->sc;
    uint8_t lossless = sc->sw.pfc ? sc->sw.lossless_mask : 0;
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
    return carved;
}

/* sim_buffer_threshold is floor(free x alpha / 2^16) of the free shared bytes: not 0 while at
 * least ceil(2^16 / alpha) are free */
static void set_pass_below(const struct fe_sim *sim, struct sim_switch *sw)
{
    uint64_t min_free =
        sim->dt_alpha_q16 ? (sim->dt_alpha_q16 + 65535) / sim->dt_alpha_q16 : UINT64_MAX;
    for (uint8_t prio = 0; prio < FE_SIM_PRIOS; prio++)
        sw->pass_below[prio] = !(sim->lossless_prios >> prio & 1) ? UINT64_MAX
                               : sw->shared_bytes >= min_free     ? sw->shared_bytes - min_free + 1
                                                                  : 0;
}

/* Switch buffers: reserves for the priorities in use and headroom for the lossless ones. */
static int setup_switch_buffers(struct fe_sim *sim, uint32_t n_sw, char *err, size_t err_cap)
{
    uint8_t used = prios_in_use(&sim->sc);
    for (uint32_t s = 0; s < n_sw; s++) {
        struct sim_switch *sw = &sim->sws[s];
        uint64_t carved = carve_ports(sim, sw, used);
        sw->buffer_bytes = sim->sc.sw.buffer_bytes;
        if (carved >= sw->buffer_bytes) {
            sim_errf(err, err_cap,
                     "switch %s: buffer of %llu bytes too small for its reserves and PFC "
                     "headroom (%llu bytes)",
                     sim->sc.nodes[sw->node->id].name, (unsigned long long)sw->buffer_bytes,
                     (unsigned long long)carved);
            return FE_EINVAL;
        }
        sw->shared_bytes = sw->buffer_bytes - carved;
        set_pass_below(sim, sw);
    }
    return 0;
}

int sim_topology_build(struct fe_sim *sim, char *err, size_t err_cap)
{
    const struct fe_sim_scenario *sc = &sim->sc;
    uint32_t n = sc->n_nodes, n_sw = 0;
    sim->n_nodes = n;
    sim->nodes = calloc(n ? n : 1, sizeof(struct sim_node));
    uint32_t *deg = calloc(n ? n : 1, sizeof(uint32_t));
    if (!sim->nodes || !deg) {
        free(deg);
        sim_errf(err, err_cap, "out of memory");
        return FE_ENOMEM;
    }
    int rc = count_links(sc, deg, err, err_cap);
    if (!rc) rc = place_nodes(sim, deg, &n_sw, err, err_cap);
    free(deg);
    if (rc) return rc;
    for (uint32_t i = 0; i < sc->n_links; i++) connect_link(sim, &sc->links[i]);
    rc = setup_switch_buffers(sim, n_sw, err, err_cap);
    if (rc) return rc;
    for (uint32_t h = 0; h < sim->n_hosts; h++) {
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
