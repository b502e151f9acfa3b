/* Partitions of the network for parallel simulation (partition.h). */
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/partition.h"
#include "sim/sim_internal.h"

/* The share of an ACK per data packet when the algorithm coalesces them (the hosts ask for one
 * before the window blocks: a few per window), one per ACK_COALESCED_PKTS: a power of two, so
 * that the predicted ACKs are exact (EXACT_SUM_BOUND) */
#define ACK_COALESCED_PKTS  4
#define ACK_SHARE_COALESCED (1.0 / ACK_COALESCED_PKTS)
_Static_assert((ACK_COALESCED_PKTS & (ACK_COALESCED_PKTS - 1)) == 0, "a power of two");
/* A part may take this much more than its share of the events before another is preferred */
#define BALANCE_SLACK 1.03
#define REFINE_PASSES 8

/* The nodes in groups that stay together: a switch and the hosts attached to it. */
struct groups {
    uint32_t n;
    uint32_t *of_node; /* node -> group */
    double *w;         /* predicted events */
    uint32_t *adj_off; /* CSR over groups: neighbours and the cost of cutting each link */
    uint32_t *adj_to;
    double *adj_cost;
    uint64_t *adj_delay;
};

static uint64_t min_link_delay(const struct fe_sim *sim)
{
    uint64_t d = FE_SIM_NO_TIME;
    for (uint32_t i = 0; i < sim->n_ports_total; i++)
        if (sim->ports[i].delay_ns < d) d = sim->ports[i].delay_ns;
    return d;
}

static int alloc_partition(const struct fe_sim *sim, uint32_t k, struct fe_sim_partition *p)
{
    memset(p, 0, sizeof(*p));
    p->k = k;
    p->n_nodes = sim->n_nodes;
    p->part = calloc(sim->n_nodes ? sim->n_nodes : 1, sizeof(uint32_t));
    p->node_events = calloc(sim->n_nodes ? sim->n_nodes : 1, sizeof(double));
    p->port_frames = calloc(sim->n_ports_total ? sim->n_ports_total : 1, sizeof(double));
    p->grid_ns = min_link_delay(sim);
    return p->part && p->node_events && p->port_frames ? 0 : FE_ENOMEM;
}

void fe_sim_partition_free(struct fe_sim_partition *p)
{
    if (!p) return;
    free(p->part);
    free(p->node_events);
    free(p->port_frames);
    p->part = NULL;
    p->node_events = NULL;
    p->port_frames = NULL;
}

/* ---- prediction: events per node and frames per port ---- */

/* One way of a flow: `frames` from host src to dst by the routes of an ECMP hash. */
struct walk {
    uint32_t src, dst, hash;
    double frames;
};

/* The frames of a flow: its data packets, and the ACKs back (one per packet, or a share). */
static void flow_frames(const struct fe_sim *sim, const struct sim_flow *f, double *pkts,
                        double *acks)
{
    uint32_t pay = sim->sc.host.mtu_bytes;
    if (f->spec.msg_bytes && f->spec.msg_bytes < pay) pay = f->spec.msg_bytes;
    *pkts = (double)((f->spec.bytes + pay - 1) / (pay ? pay : 1));
    *acks = sim->cc_acks_every_pkt[f->spec.cc] ? *pkts : *pkts * ACK_SHARE_COALESCED;
}

/* Follows a way's frames by the routes, adding them to each port that sends them and each node
 * they pass (a transmit-complete where they leave, an arrival where they come in). */
static void walk_frames(const struct fe_sim *sim, const struct walk *w, double *node_ev,
                        double *port_frames)
{
    const struct sim_node *n = &sim->nodes[w->src];
    struct sim_port *out = n->n_ports ? &n->ports[0] : NULL;
    for (uint32_t hops = 0; out && hops <= sim->n_nodes; hops++) {
        port_frames[out - sim->ports] += w->frames;
        node_ev[out->node->id] += w->frames;
        const struct sim_node *next = out->peer->node;
        node_ev[next->id] += w->frames;
        if (next->id == w->dst || !next->sw) return;
        out = sim_route(next->sw, w->dst, w->hash);
    }
}

/* Flow by flow, each way's frames along its whole route. */
static void predict_by_flow(const struct fe_sim *sim, double *node_ev, double *port_frames)
{
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        const struct sim_flow *f = &sim->flows[i];
        double pkts, acks;
        flow_frames(sim, f, &pkts, &acks);
        struct walk fwd = {f->spec.src, f->spec.dst, f->hash_fwd, pkts};
        struct walk rev = {f->spec.dst, f->spec.src, f->hash_rev, acks};
        walk_frames(sim, &fwd, node_ev, port_frames);
        walk_frames(sim, &rev, node_ev, port_frames);
    }
}

/* The prediction adds up frame counts: whole packets, and ACKs in 1/ACK_COALESCED_PKTS. Below
 * this bound every sum of such numbers is exact (a double holds every multiple of 2^-k below
 * 2^(53-k)), so that the sums do not depend on the order of their terms. */
#define EXACT_SUM_BOUND (0x1p52 / ACK_COALESCED_PKTS)

/* Whether every sum the prediction makes stays below EXACT_SUM_BOUND, with `total` the frames of
 * all the ways: a way adds to a port at most once per hop, to a node twice, in at most
 * n_nodes + 1 hops. */
static bool sums_exact(const struct fe_sim *sim, double total)
{
    double max_ports = 0;
    for (uint32_t i = 0; i < sim->n_nodes; i++)
        if (sim->nodes[i].n_ports > max_ports) max_ports = sim->nodes[i].n_ports;
    return max_ports + total * 2 * ((double)sim->n_nodes + 2) < EXACT_SUM_BOUND;
}

/* The ways by destination (CSR: those to node d at way[first[d] .. first[d + 1]]), and the
 * frames of all of them. */
struct ways {
    struct walk *way;
    uint32_t *first;
    double total;
};

static void add_way(struct ways *ws, uint32_t src, uint32_t dst, uint32_t hash, double frames)
{
    ws->way[ws->first[dst + 1]++] = (struct walk){src, dst, hash, frames};
    ws->total += frames;
}

static int ways_by_dst(const struct fe_sim *sim, struct ways *ws)
{
    uint32_t nn = sim->n_nodes;
    ws->way = malloc((2 * (size_t)sim->n_flows + 1) * sizeof(*ws->way));
    ws->first = calloc((size_t)nn + 2, sizeof(uint32_t));
    if (!ws->way || !ws->first) return FE_ENOMEM;
    for (uint32_t i = 0; i < sim->n_flows; i++) {
        ws->first[sim->flows[i].spec.dst + 2]++;
        ws->first[sim->flows[i].spec.src + 2]++;
    }
    for (uint32_t d = 0; d < nn; d++) ws->first[d + 2] += ws->first[d + 1];
    ws->total = 0;
    for (uint32_t i = 0; i < sim->n_flows; i++) { /* first[d + 1]: the next of d's ways */
        const struct sim_flow *f = &sim->flows[i];
        double pkts, acks;
        flow_frames(sim, f, &pkts, &acks);
        add_way(ws, f->spec.src, f->spec.dst, f->hash_fwd, pkts);
        add_way(ws, f->spec.dst, f->spec.src, f->hash_rev, acks);
    }
    return 0;
}

/* Toward one destination at a time, the part of a route that no hash decides: from a switch
 * whose way to dst is one port, and so on to dst, the frames of every way that gets there go
 * along together (pending), once per switch rather than once per way. */
struct tails {
    uint32_t dst;
    uint32_t *stamp;  /* per node: dst + 1 when tail and pending are dst's */
    int32_t *tail;    /* hops the frames make from the node without a hash, -1: a hash decides */
    double *pending;  /* frames at the node that go on by its tail */
    uint32_t *chain;  /* work space: the nodes of a tail being followed */
    uint32_t *queued; /* the nodes with pending frames */
    uint32_t n_queued;
    uint32_t *hop_port, *hop_node; /* per node: its port 0 (a way's first hop), and its peer */
};

static void first_hops(const struct fe_sim *sim, struct tails *t)
{
    for (uint32_t i = 0; i < sim->n_nodes; i++) {
        const struct sim_node *n = &sim->nodes[i];
        t->hop_port[i] = n->n_ports ? (uint32_t)(&n->ports[0] - sim->ports) : UINT32_MAX;
        t->hop_node[i] = n->n_ports ? n->ports[0].peer->node->id : UINT32_MAX;
    }
}

static void set_tail(struct tails *t, uint32_t node, int32_t hops)
{
    t->stamp[node] = t->dst + 1;
    t->tail[node] = hops;
    t->pending[node] = 0;
}

/* The hops from switch x to dst by routes of one port each (0: no route), -1 where a hash
 * picks the port (or the single-port routes loop). */
static int32_t tail_hops(const struct fe_sim *sim, struct tails *t, uint32_t x)
{
    uint32_t n = 0, y = x, dst = t->dst;
    int32_t hops = -1;
    for (;;) {
        if (t->stamp[y] == dst + 1) {
            hops = t->tail[y];
            break;
        }
        if (n > sim->n_nodes) break; /* a loop: the frames keep their hop count (walk_frames) */
        const struct sim_route *r = &sim->nodes[y].sw->route[dst];
        if (r->n > 1 || !r->port) {
            hops = r->n > 1 ? -1 : 0;
            set_tail(t, y, hops);
            break;
        }
        const struct sim_node *next = r->port->peer->node;
        if (next->id == dst || !next->sw) {
            hops = 1;
            set_tail(t, y, hops);
            break;
        }
        t->chain[n++] = y;
        y = next->id;
    }
    while (n--) {
        hops = hops < 0 ? -1 : hops + 1;
        set_tail(t, t->chain[n], hops);
    }
    return t->tail[x];
}

/* A way's frames hop by hop until a switch from which they go on by its tail, whole (the hops
 * then stay within walk_frames' bound). */
static void walk_to_tail(const struct fe_sim *sim, struct tails *t, const struct walk *w,
                         double *port_frames)
{
    uint32_t first = t->hop_port[w->src], at = t->hop_node[w->src];
    if (first == UINT32_MAX) return;
    port_frames[first] += w->frames;
    for (uint32_t hops = 1;; hops++) { /* hops made */
        const struct sim_node *n = &sim->nodes[at];
        if (at == w->dst || !n->sw) return;
        int32_t tail = tail_hops(sim, t, at);
        if (tail >= 0 && hops - 1 + (uint32_t)tail <= sim->n_nodes) {
            if (t->pending[at] == 0) t->queued[t->n_queued++] = at;
            t->pending[at] += w->frames;
            return;
        }
        struct sim_port *out = sim_route(n->sw, w->dst, w->hash);
        if (!out || hops > sim->n_nodes) return;
        port_frames[out - sim->ports] += w->frames;
        at = out->peer->node->id;
    }
}

/* The pending frames of each switch along its tail. */
static void walk_tails(const struct fe_sim *sim, struct tails *t, double *port_frames)
{
    for (uint32_t i = 0; i < t->n_queued; i++) {
        uint32_t x = t->queued[i];
        double frames = t->pending[x];
        t->pending[x] = 0;
        struct sim_port *out = sim->nodes[x].sw->route[t->dst].port;
        while (out) {
            port_frames[out - sim->ports] += frames;
            const struct sim_node *next = out->peer->node;
            if (next->id == t->dst || !next->sw) break;
            out = next->sw->route[t->dst].port;
        }
    }
    t->n_queued = 0;
}

static void free_tails(struct tails *t, struct ways *ws)
{
    free(t->stamp);
    free(t->tail);
    free(t->pending);
    free(t->chain);
    free(t->queued);
    free(ws->way);
    free(ws->first);
    free(t->hop_port);
    free(t->hop_node);
}

/* The frames per port of every way, by destination with their tails shared; the events per
 * node from the ports' frames. The same sums as predict_by_flow's when they are exact
 * (sums_exact), in another order. FE_EINVAL when they might not be, FE_ENOMEM, before it adds
 * anything. */
static int predict_by_dst(const struct fe_sim *sim, double *node_ev, double *port_frames)
{
    size_t nn = (size_t)sim->n_nodes + 1;
    struct ways ws = {0};
    struct tails t = {.stamp = calloc(nn, sizeof(uint32_t)),
                      .tail = malloc(nn * sizeof(int32_t)),
                      .pending = calloc(nn, sizeof(double)),
                      .chain = malloc((nn + 1) * sizeof(uint32_t)),
                      .queued = malloc(nn * sizeof(uint32_t)),
                      .hop_port = malloc(nn * sizeof(uint32_t)),
                      .hop_node = malloc(nn * sizeof(uint32_t))};
    int rc = t.stamp && t.tail && t.pending && t.chain && t.queued && t.hop_port && t.hop_node
                 ? ways_by_dst(sim, &ws)
                 : FE_ENOMEM;
    if (!rc && !sums_exact(sim, ws.total)) rc = FE_EINVAL;
    if (!rc) first_hops(sim, &t);
    for (uint32_t d = 0; !rc && d < sim->n_nodes; d++) {
        t.dst = d;
        for (uint32_t i = ws.first[d]; i < ws.first[d + 1]; i++)
            walk_to_tail(sim, &t, &ws.way[i], port_frames);
        walk_tails(sim, &t, port_frames);
    }
    for (uint32_t i = 0; !rc && i < sim->n_ports_total; i++) {
        const struct sim_port *p = &sim->ports[i];
        node_ev[p->node->id] += port_frames[i];
        node_ev[p->peer->node->id] += port_frames[i];
    }
    free_tails(&t, &ws);
    return rc;
}

/* Events and frames predicted from the flows (and one per port, so that a scenario without
 * flows still balances its ports); port_frames comes zeroed. By destination when that gives
 * the same sums, else (or without the memory for it) flow by flow. */
static void predict_load(const struct fe_sim *sim, double *node_ev, double *port_frames)
{
    for (uint32_t i = 0; i < sim->n_nodes; i++) node_ev[i] = sim->nodes[i].n_ports;
    if (predict_by_dst(sim, node_ev, port_frames)) predict_by_flow(sim, node_ev, port_frames);
}

/* Events and frames of the run so far: each frame a port sent is a transmit-complete at its node
 * and an arrival at the peer's; scaled to the run's event count (host timers, pauses). */
static bool measure_load(const struct fe_sim *sim, double *node_ev, double *port_frames)
{
    double frames = 0;
    for (uint32_t i = 0; i < sim->n_ports_total; i++) frames += (double)sim->ports[i].tx_pkts;
    if (frames == 0) return false;
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    double scale = (double)st.events / (2 * frames);
    for (uint32_t i = 0; i < sim->n_nodes; i++) node_ev[i] = 0;
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        const struct sim_port *p = &sim->ports[i];
        port_frames[i] = (double)p->tx_pkts;
        node_ev[p->node->id] += (double)p->tx_pkts * scale;
        node_ev[p->peer->node->id] += (double)p->tx_pkts * scale;
    }
    return true;
}

/* ---- groups ---- */

static void free_groups(struct groups *g)
{
    free(g->of_node);
    free(g->w);
    free(g->adj_off);
    free(g->adj_to);
    free(g->adj_cost);
    free(g->adj_delay);
}

/* A host's group is the switch it attaches to; a host joined to a host, the lower one's. */
static uint32_t group_root(const struct fe_sim *sim, uint32_t node)
{
    const struct sim_node *n = &sim->nodes[node];
    if (n->is_switch || n->n_ports != 1) return node;
    const struct sim_node *peer = n->ports[0].peer->node;
    if (peer->is_switch) return peer->id;
    return peer->id < node ? peer->id : node;
}

/* Group numbers in node order of their roots, and their weights. */
static int number_groups(const struct fe_sim *sim, const double *node_ev, struct groups *g)
{
    uint32_t n = sim->n_nodes;
    uint32_t *num = malloc((n ? n : 1) * sizeof(uint32_t));
    g->of_node = malloc((n ? n : 1) * sizeof(uint32_t));
    g->w = calloc(n ? n : 1, sizeof(double));
    if (!num || !g->of_node || !g->w) {
        free(num);
        return FE_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) num[i] = UINT32_MAX;
    g->n = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = group_root(sim, i);
        if (num[r] == UINT32_MAX) num[r] = g->n++;
        g->of_node[i] = num[r];
        g->w[num[r]] += node_ev[i];
    }
    free(num);
    return 0;
}

/* The cost of cutting port i's link (both directions' frames), higher for short delays: the
 * lookahead is the shortest cut delay. */
static double cut_cost(const struct fe_sim *sim, const double *port_frames, uint32_t i,
                       uint64_t max_delay)
{
    const struct sim_port *p = &sim->ports[i];
    double frames = port_frames[i] + port_frames[p->peer - sim->ports] + 1;
    double d = p->delay_ns ? (double)p->delay_ns : 0.5;
    return frames * ((double)max_delay / d);
}

/* The group graph: an entry per port whose peer is in another group (duplicates kept: the costs
 * add up). */
static int build_adjacency(const struct fe_sim *sim, const double *port_frames, struct groups *g)
{
    uint32_t np = sim->n_ports_total;
    uint64_t max_delay = 1;
    for (uint32_t i = 0; i < np; i++)
        if (sim->ports[i].delay_ns > max_delay) max_delay = sim->ports[i].delay_ns;
    g->adj_off = calloc(g->n + 1, sizeof(uint32_t));
    g->adj_to = malloc((np ? np : 1) * sizeof(uint32_t));
    g->adj_cost = malloc((np ? np : 1) * sizeof(double));
    g->adj_delay = malloc((np ? np : 1) * sizeof(uint64_t));
    if (!g->adj_off || !g->adj_to || !g->adj_cost || !g->adj_delay) return FE_ENOMEM;
    for (uint32_t i = 0; i < np; i++) {
        uint32_t a = g->of_node[sim->ports[i].node->id];
        if (a != g->of_node[sim->ports[i].peer->node->id]) g->adj_off[a + 1]++;
    }
    for (uint32_t a = 0; a < g->n; a++) g->adj_off[a + 1] += g->adj_off[a];
    uint32_t *fill = calloc(g->n ? g->n : 1, sizeof(uint32_t));
    if (!fill) return FE_ENOMEM;
    for (uint32_t i = 0; i < np; i++) {
        const struct sim_port *p = &sim->ports[i];
        uint32_t a = g->of_node[p->node->id], b = g->of_node[p->peer->node->id];
        if (a == b) continue;
        uint32_t at = g->adj_off[a] + fill[a]++;
        g->adj_to[at] = b;
        g->adj_cost[at] = cut_cost(sim, port_frames, i, max_delay);
        g->adj_delay[at] = p->delay_ns;
    }
    free(fill);
    return 0;
}

/* ---- assignment ---- */

struct assign {
    uint32_t k;
    uint32_t *part_of; /* group -> part, UINT32_MAX before it is placed */
    double *load;      /* per part */
    double *aff;       /* work space: per part, the cost of the links to it */
    double cap;        /* a part's share of the events, with the slack */
};

static const double *g_sort_w; /* qsort context (partitioning is single-threaded) */
static int cmp_heavier(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (g_sort_w[x] != g_sort_w[y]) return g_sort_w[x] > g_sort_w[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* aff[q]: the cost of g's links to groups placed in part q */
static void affinity(const struct groups *g, const struct assign *as, uint32_t grp)
{
    for (uint32_t q = 0; q < as->k; q++) as->aff[q] = 0;
    for (uint32_t e = g->adj_off[grp]; e < g->adj_off[grp + 1]; e++) {
        uint32_t q = as->part_of[g->adj_to[e]];
        if (q != UINT32_MAX) as->aff[q] += g->adj_cost[e];
    }
}

/* The part for a group: among those it fits in, the one it is most linked to, then the least
 * loaded, then the first; when it fits nowhere, the least loaded. */
static uint32_t best_part(const struct assign *as, double w)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t q = 0; q < as->k; q++) {
        bool fits = as->load[q] == 0 || as->load[q] + w <= as->cap;
        if (!fits) continue;
        if (best == UINT32_MAX || as->aff[q] > as->aff[best] ||
            (as->aff[q] == as->aff[best] && as->load[q] < as->load[best]))
            best = q;
    }
    if (best != UINT32_MAX) return best;
    best = 0;
    for (uint32_t q = 1; q < as->k; q++)
        if (as->load[q] < as->load[best]) best = q;
    return best;
}

/* The heaviest groups first, each to best_part. */
static int place_groups(const struct groups *g, struct assign *as)
{
    uint32_t *order = malloc((g->n ? g->n : 1) * sizeof(uint32_t));
    if (!order) return FE_ENOMEM;
    for (uint32_t i = 0; i < g->n; i++) order[i] = i;
    g_sort_w = g->w;
    qsort(order, g->n, sizeof(uint32_t), cmp_heavier);
    for (uint32_t i = 0; i < g->n; i++) {
        uint32_t grp = order[i];
        affinity(g, as, grp);
        uint32_t q = best_part(as, g->w[grp]);
        as->part_of[grp] = q;
        as->load[q] += g->w[grp];
    }
    free(order);
    return 0;
}

/* Moves groups to the part they are most linked to while that cuts less and keeps the balance
 * (a part is never emptied). */
static void refine(const struct groups *g, struct assign *as, const uint32_t *members)
{
    uint32_t *count = (uint32_t *)members; /* per part: its groups */
    for (int pass = 0; pass < REFINE_PASSES; pass++) {
        bool moved = false;
        for (uint32_t grp = 0; grp < g->n; grp++) {
            uint32_t p = as->part_of[grp];
            if (count[p] <= 1) continue;
            affinity(g, as, grp);
            uint32_t best = p;
            for (uint32_t q = 0; q < as->k; q++) {
                if (q == p || as->load[q] + g->w[grp] > as->cap) continue;
                if (as->aff[q] > as->aff[best]) best = q;
            }
            if (best == p) continue;
            as->part_of[grp] = best;
            as->load[p] -= g->w[grp];
            as->load[best] += g->w[grp];
            count[p]--;
            count[best]++;
            moved = true;
        }
        if (!moved) break;
    }
}

/* The move that lowers the heaviest part h's load most cheaply: a group of h (h keeps another)
 * to a part that stays below h's load, the one that adds the least cut cost, then the one that
 * evens the pair most. Returns false when no move lowers h's load for a cut cost below the
 * events it takes off h (a cut frame costs less than an event: its arrival is an event anyway). */
static bool pick_balancing_move(const struct groups *g, struct assign *as, uint32_t h,
                                const uint32_t *count, uint32_t *grp_out, uint32_t *to_out)
{
    double best_cost = 0, best_peak = as->load[h];
    bool found = false;
    if (count[h] <= 1) return false;
    for (uint32_t grp = 0; grp < g->n; grp++) {
        if (as->part_of[grp] != h) continue;
        affinity(g, as, grp);
        for (uint32_t q = 0; q < as->k; q++) {
            double w = g->w[grp];
            if (q == h || as->load[q] + w >= as->load[h]) continue;
            double peak = as->load[h] - w > as->load[q] + w ? as->load[h] - w : as->load[q] + w;
            double cost = as->aff[h] - as->aff[q];
            if (cost > as->load[h] - peak) continue;
            if (!found || cost < best_cost || (cost == best_cost && peak < best_peak)) {
                found = true;
                best_cost = cost;
                best_peak = peak;
                *grp_out = grp;
                *to_out = q;
            }
        }
    }
    return found;
}

/* Takes load off the heaviest part while a move lowers it (refine fills parts up to the cap: the
 * slack lets it cut less, but the heaviest part sets the pace of every window). */
static void balance(const struct groups *g, struct assign *as, uint32_t *count)
{
    for (uint32_t moves = 0; moves < g->n; moves++) {
        uint32_t h = 0;
        for (uint32_t q = 1; q < as->k; q++)
            if (as->load[q] > as->load[h]) h = q;
        uint32_t grp, to;
        if (!pick_balancing_move(g, as, h, count, &grp, &to)) return;
        as->part_of[grp] = to;
        as->load[h] -= g->w[grp];
        as->load[to] += g->w[grp];
        count[h]--;
        count[to]++;
    }
}

static int assign_groups(const struct groups *g, uint32_t k, uint32_t *part_of)
{
    struct assign as = {.k = k, .part_of = part_of};
    as.load = calloc(k, sizeof(double));
    as.aff = calloc(k, sizeof(double));
    uint32_t *count = calloc(k, sizeof(uint32_t));
    int rc = FE_ENOMEM;
    if (as.load && as.aff && count) {
        double total = 0;
        for (uint32_t i = 0; i < g->n; i++) total += g->w[i];
        as.cap = total / k * BALANCE_SLACK;
        for (uint32_t i = 0; i < g->n; i++) part_of[i] = UINT32_MAX;
        rc = place_groups(g, &as);
        if (!rc) {
            for (uint32_t i = 0; i < g->n; i++) count[part_of[i]]++;
            refine(g, &as, count);
            balance(g, &as, count);
        }
    }
    free(as.load);
    free(as.aff);
    free(count);
    return rc;
}

/* The smallest delay of a link whose ends lie in different parts. */
static uint64_t cut_lookahead(const struct fe_sim *sim, const uint32_t *part)
{
    uint64_t la = FE_SIM_NO_TIME;
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        const struct sim_port *p = &sim->ports[i];
        if (part[p->node->id] != part[p->peer->node->id] && p->delay_ns < la) la = p->delay_ns;
    }
    return la;
}

int fe_sim_partition_auto(const struct fe_sim *sim, uint32_t k, struct fe_sim_partition *p,
                          char *err, size_t err_cap)
{
    if (k < 1 || k > FE_SIM_MAX_PARTS) {
        sim_errf(err, err_cap, "partitions: 1 to %u", FE_SIM_MAX_PARTS);
        return FE_EINVAL;
    }
    struct groups g;
    memset(&g, 0, sizeof(g));
    uint32_t *part_of = NULL;
    int rc = alloc_partition(sim, k, p);
    if (!rc) {
        predict_load(sim, p->node_events, p->port_frames);
        rc = number_groups(sim, p->node_events, &g);
    }
    if (!rc) rc = build_adjacency(sim, p->port_frames, &g);
    if (!rc && !(part_of = malloc((g.n ? g.n : 1) * sizeof(uint32_t)))) rc = FE_ENOMEM;
    if (!rc) rc = assign_groups(&g, k, part_of);
    if (!rc) {
        for (uint32_t i = 0; i < sim->n_nodes; i++) p->part[i] = part_of[g.of_node[i]];
        p->lookahead_ns = cut_lookahead(sim, p->part);
    }
    free(part_of);
    free_groups(&g);
    if (rc == FE_ENOMEM) sim_errf(err, err_cap, "out of memory partitioning");
    if (rc) fe_sim_partition_free(p);
    return rc;
}

/* ---- a user's partition ---- */

/* The node named tok (a name, or an index when no node has that name), UINT32_MAX if none. */
static uint32_t find_node(const struct fe_sim *sim, const char *tok)
{
    for (uint32_t i = 0; i < sim->n_nodes; i++)
        if (!strcmp(sim->sc.nodes[i].name, tok)) return i;
    char *end;
    unsigned long v = strtoul(tok, &end, 10);
    if (*tok >= '0' && *tok <= '9' && !*end && v < sim->n_nodes) return (uint32_t)v;
    return UINT32_MAX;
}

/* One "NODE PART" line (its comment cut; at most 255 characters before it): 0, or FE_EINVAL. */
static int parse_line(const struct fe_sim *sim, char *line, uint32_t lineno, const char *what,
                      struct fe_sim_partition *p, char *err, size_t err_cap)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char name[FE_SIM_NAME_LEN + 1], part[16], extra[2];
    int n = sscanf(line, "%32s %15s %1s", name, part, extra);
    if (n <= 0) return 0; /* blank */
    if (n != 2) {
        sim_errf(err, err_cap, "%s:%u: expected 'NODE PART'", what, lineno);
        return FE_EINVAL;
    }
    uint32_t node = find_node(sim, name);
    char *end;
    unsigned long v = strtoul(part, &end, 10);
    if (node == UINT32_MAX) {
        sim_errf(err, err_cap, "%s:%u: no node '%s'", what, lineno, name);
        return FE_EINVAL;
    }
    if (*end || part[0] < '0' || part[0] > '9' || v >= FE_SIM_MAX_PARTS) {
        sim_errf(err, err_cap, "%s:%u: part '%s': 0 to %u", what, lineno, part,
                 FE_SIM_MAX_PARTS - 1);
        return FE_EINVAL;
    }
    if (p->part[node] != UINT32_MAX) {
        sim_errf(err, err_cap, "%s:%u: node '%s' given twice", what, lineno, name);
        return FE_EINVAL;
    }
    p->part[node] = (uint32_t)v;
    if (v + 1 > p->k) p->k = (uint32_t)v + 1;
    return 0;
}

/* Hosts not listed follow their ToR; a switch not listed is an error; a cut link needs a delay
 * (the parts could not run apart for any time). */
static int complete_parse(const struct fe_sim *sim, const char *what, struct fe_sim_partition *p,
                          char *err, size_t err_cap)
{
    for (uint32_t i = 0; i < sim->n_nodes; i++) {
        if (p->part[i] != UINT32_MAX) continue;
        uint32_t r = group_root(sim, i);
        if (r == i || p->part[r] == UINT32_MAX) {
            sim_errf(err, err_cap, "%s: node '%s' has no part", what, sim->sc.nodes[i].name);
            return FE_EINVAL;
        }
        p->part[i] = p->part[r];
    }
    p->lookahead_ns = cut_lookahead(sim, p->part);
    if (p->lookahead_ns == 0) {
        sim_errf(err, err_cap, "%s: a link without delay joins two parts", what);
        return FE_EINVAL;
    }
    predict_load(sim, p->node_events, p->port_frames);
    return 0;
}

int fe_sim_partition_parse(const struct fe_sim *sim, const char *text, size_t len, const char *what,
                           struct fe_sim_partition *p, char *err, size_t err_cap)
{
    int rc = alloc_partition(sim, 0, p);
    for (uint32_t i = 0; !rc && i < sim->n_nodes; i++) p->part[i] = UINT32_MAX;
    uint32_t lineno = 0;
    for (size_t pos = 0; !rc && pos < len;) {
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        char line[256];
        /* a long comment may be cut, not what precedes it: "sw <252 blanks>12" would be part 1 */
        const char *hash = memchr(text + pos, '#', end - pos);
        size_t used = hash ? (size_t)(hash - (text + pos)) : end - pos;
        size_t n = end - pos < sizeof(line) - 1 ? end - pos : sizeof(line) - 1;
        lineno++;
        if (used > sizeof(line) - 1) {
            sim_errf(err, err_cap, "%s:%u: longer than %zu characters before its comment", what,
                     lineno, sizeof(line) - 1);
            rc = FE_EINVAL;
            break;
        }
        memcpy(line, text + pos, n);
        line[n] = 0;
        rc = parse_line(sim, line, lineno, what, p, err, err_cap);
        pos = end + 1;
    }
    if (!rc && !p->k) {
        sim_errf(err, err_cap, "%s: no node listed", what);
        rc = FE_EINVAL;
    }
    if (!rc) rc = complete_parse(sim, what, p, err, err_cap);
    if (rc == FE_ENOMEM) sim_errf(err, err_cap, "out of memory");
    if (rc) fe_sim_partition_free(p);
    return rc;
}

int fe_sim_partition_load(const struct fe_sim *sim, const char *path, struct fe_sim_partition *p,
                          char *err, size_t err_cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sim_errf(err, err_cap, "cannot open %s", path);
        return FE_EINVAL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
        }
        buf = b;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        sim_errf(err, err_cap, "cannot read %s", path);
        return bad ? FE_EINVAL : FE_ENOMEM;
    }
    int rc = fe_sim_partition_parse(sim, buf, n, path, p, err, err_cap);
    free(buf);
    return rc;
}

/* ---- report ---- */

/* The load a partition's figures count: the run's when it has sent frames (true), else the
 * prediction the partition was made with (a partition of this network's). */
static bool load_of(const struct fe_sim *sim, const struct fe_sim_partition *p, double *node_ev,
                    double *port_frames)
{
    if (measure_load(sim, node_ev, port_frames)) return true;
    if (p->node_events && p->port_frames && p->n_nodes == sim->n_nodes) {
        memcpy(node_ev, p->node_events, sim->n_nodes * sizeof(double));
        memcpy(port_frames, p->port_frames, sim->n_ports_total * sizeof(double));
    } else {
        predict_load(sim, node_ev, port_frames);
    }
    return false;
}

struct part_sums {
    double *ev;
    uint32_t *nodes, *ports;
};

static void sum_parts(const struct fe_sim *sim, const struct fe_sim_partition *p,
                      const double *node_ev, struct part_sums *s)
{
    for (uint32_t i = 0; i < sim->n_nodes; i++) {
        uint32_t q = p->part[i];
        s->ev[q] += node_ev[i];
        s->nodes[q]++;
        s->ports[q] += sim->nodes[i].n_ports;
    }
}

static void fill_stats(const struct fe_sim *sim, const struct fe_sim_partition *p,
                       const struct part_sums *s, const double *port_frames,
                       struct fe_sim_partition_stats *out)
{
    double frames = 0, cross = 0;
    for (uint32_t i = 0; i < sim->n_ports_total; i++) {
        const struct sim_port *pt = &sim->ports[i];
        frames += port_frames[i];
        if (p->part[pt->node->id] != p->part[pt->peer->node->id]) {
            cross += port_frames[i];
            out->cut_links++;
        }
    }
    out->cut_links /= 2;
    out->cross_frames_share = frames > 0 ? cross / frames : 0;
    for (uint32_t q = 0; q < p->k; q++) {
        out->events_total += s->ev[q];
        if (s->ev[q] > out->events_max_part) out->events_max_part = s->ev[q];
        if (s->nodes[q]) out->used_parts++;
    }
    out->balance_bound = out->events_max_part > 0 ? out->events_total / out->events_max_part : 1;
    out->lookahead_ns = p->lookahead_ns;
    uint64_t la = p->lookahead_ns;
    out->windows_per_ms = la && la != FE_SIM_NO_TIME ? 1e6 / (double)la : 0;
    /* the windows of the run: its simulated time over the lookahead */
    double windows = la && la != FE_SIM_NO_TIME && sim->now ? (double)sim->now / (double)la : 1;
    if (windows < 1) windows = 1;
    out->events_per_window = out->used_parts ? out->events_total / out->used_parts / windows : 0;
}

void fe_sim_partition_stats(const struct fe_sim *sim, const struct fe_sim_partition *p,
                            struct fe_sim_partition_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->k = p->k;
    size_t nn = sim->n_nodes ? sim->n_nodes : 1, np = sim->n_ports_total ? sim->n_ports_total : 1;
    double *node_ev = calloc(nn, sizeof(double)), *port_frames = calloc(np, sizeof(double));
    struct part_sums s = {calloc(p->k ? p->k : 1, sizeof(double)),
                          calloc(p->k ? p->k : 1, sizeof(uint32_t)),
                          calloc(p->k ? p->k : 1, sizeof(uint32_t))};
    if (node_ev && port_frames && s.ev && s.nodes && s.ports) {
        out->measured = load_of(sim, p, node_ev, port_frames);
        sum_parts(sim, p, node_ev, &s);
        fill_stats(sim, p, &s, port_frames, out);
    }
    free(node_ev);
    free(port_frames);
    free(s.ev);
    free(s.nodes);
    free(s.ports);
}

static void report_parts(FILE *f, const struct fe_sim *sim, const struct fe_sim_partition *p,
                         double total)
{
    size_t nn = sim->n_nodes ? sim->n_nodes : 1, np = sim->n_ports_total ? sim->n_ports_total : 1;
    double *node_ev = calloc(nn, sizeof(double)), *port_frames = calloc(np, sizeof(double));
    struct part_sums s = {calloc(p->k, sizeof(double)), calloc(p->k, sizeof(uint32_t)),
                          calloc(p->k, sizeof(uint32_t))};
    if (node_ev && port_frames && s.ev && s.nodes && s.ports) {
        load_of(sim, p, node_ev, port_frames);
        sum_parts(sim, p, node_ev, &s);
        fprintf(f, "  part  nodes  ports  events\n");
        for (uint32_t q = 0; q < p->k; q++) {
            if (q == 16 && p->k > 17) {
                fprintf(f, "  ... (%u parts)\n", p->k - 17);
                q = p->k - 1;
            }
            fprintf(f, "  %4u  %5u  %5u  %5.1f %%\n", q, s.nodes[q], s.ports[q],
                    total > 0 ? 100 * s.ev[q] / total : 0);
        }
    }
    free(node_ev);
    free(port_frames);
    free(s.ev);
    free(s.nodes);
    free(s.ports);
}

void fe_sim_partition_report(FILE *f, const struct fe_sim *sim, const struct fe_sim_partition *p)
{
    struct fe_sim_partition_stats st;
    fe_sim_partition_stats(sim, p, &st);
    fprintf(f, "partition into %u parts (%u with nodes), events %s:\n", st.k, st.used_parts,
            st.measured ? "of the run (from the frames each port sent)" : "predicted");
    report_parts(f, sim, p, st.events_total);
    if (st.lookahead_ns == FE_SIM_NO_TIME) {
        fprintf(f, "  no link cut: one part runs everything\n");
        return;
    }
    fprintf(f,
            "  cut links %u, lookahead %llu ns (%.0f windows per simulated ms), frames over "
            "cut links %.1f %%\n",
            st.cut_links, (unsigned long long)st.lookahead_ns, st.windows_per_ms,
            100 * st.cross_frames_share);
    fprintf(f,
            "  largest part %.1f %% of the events: speedup at most %.2f; %.0f events per part "
            "per window%s\n",
            st.events_total > 0 ? 100 * st.events_max_part / st.events_total : 0, st.balance_bound,
            st.events_per_window, st.measured ? "" : " (relative: no run yet)");
}
