/* The HPCC ns-3 simulator's text files (alibaba-edu/High-Precision-Congestion-Control): config.txt,
 * topology.txt, flow.txt in; fct.txt and pfc.txt out, in their formats
 * (../shared/ns3-formats/README.md). Keys of config.txt feroce does not model are ignored, as
 * HPCC ignores unknown keys; values it models are checked ("file:line: what"). */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"

/* ---- a line tokenizer ---- */
struct lines {
    const char *p, *end, *name;
    unsigned long line;
};

/* Next non-empty line split into up to max tokens; returns the count, 0 at the end. */
static int next_line(struct lines *l, char tok[][128], int max)
{
    while (l->p < l->end) {
        const char *s = l->p;
        const char *e = memchr(s, '\n', (size_t)(l->end - s));
        if (!e) e = l->end;
        l->p = e < l->end ? e + 1 : e;
        l->line++;
        int n = 0;
        const char *q = s;
        while (q < e) {
            while (q < e && isspace((unsigned char)*q)) q++;
            if (q >= e || *q == '#') break;
            const char *t = q;
            while (q < e && !isspace((unsigned char)*q)) q++;
            if (n < max) {
                size_t len = (size_t)(q - t) < 127 ? (size_t)(q - t) : 127;
                memcpy(tok[n], t, len);
                tok[n][len] = 0;
            }
            n++;
        }
        if (n) return n;
    }
    return 0;
}

/* "file:line: what" */
static void __attribute__((format(printf, 4, 5)))
line_err(const struct lines *l, char *err, size_t err_cap, const char *fmt, ...)
{
    char m[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof(m), fmt, ap);
    va_end(ap);
    sim_errf(err, err_cap, "%s:%lu: %s", l->name, l->line, m);
}

#define LERR(l, ...) line_err((l), err, err_cap, __VA_ARGS__)

static bool copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n + 1 > cap) return false;
    memcpy(dst, src, n + 1);
    return true;
}

/* ns-3 rate strings: "100Gbps", "50Mb/s" */
static int ns3_rate(const char *s, uint64_t *out)
{
    return sim_parse_rate(s, out);
}

/* ns-3 time strings: "0.001ms", "1us"; bare numbers are seconds in ns-3 */
static int ns3_time(const char *s, uint64_t *out)
{
    double d;
    if (!sim_parse_double(s, &d)) {
        if (!(d >= 0 && d * 1e9 <= (double)FE_SIM_MAX_TIME)) return FE_ERANGE;
        *out = (uint64_t)(d * 1e9 + 0.5);
        return 0;
    }
    return sim_parse_time(s, out);
}

/* ---- topology.txt ---- */
struct topo_counts {
    uint64_t nodes, switches, links;
};

static int read_topology_counts(struct lines *l, struct topo_counts *tc, char *err, size_t err_cap)
{
    char tok[8][128];
    int n = next_line(l, tok, 8);
    if (n < 3 || sim_parse_uint(tok[0], 1u << 20, &tc->nodes) ||
        sim_parse_uint(tok[1], 1u << 20, &tc->switches) ||
        sim_parse_uint(tok[2], 1u << 24, &tc->links)) {
        LERR(l, "expected 'N_nodes N_switches N_links'");
        return FE_EPARSE;
    }
    if (tc->switches > tc->nodes || !tc->nodes) {
        LERR(l, "%llu switches among %llu nodes", (unsigned long long)tc->switches,
             (unsigned long long)tc->nodes);
        return FE_EPARSE;
    }
    return 0;
}

/* nodes named by their ids */
static int add_numbered_nodes(struct lines *l, struct fe_sim_scenario *sc, uint64_t nodes,
                              char *err, size_t err_cap)
{
    for (uint64_t i = 0; i < nodes; i++) {
        char nm[24];
        snprintf(nm, sizeof(nm), "%llu", (unsigned long long)i);
        if (fe_sim_scenario_add_node(sc, nm, false) < 0) {
            LERR(l, "out of memory");
            return FE_ENOMEM;
        }
    }
    return 0;
}

static int mark_switch(struct lines *l, struct fe_sim_scenario *sc, uint32_t base, uint64_t nodes,
                       const char *tok, char *err, size_t err_cap)
{
    uint64_t id;
    if (sim_parse_uint(tok, nodes - 1, &id)) {
        LERR(l, "switch id '%.40s' is not a node id < %llu", tok, (unsigned long long)nodes);
        return FE_EPARSE;
    }
    if (sc->nodes[base + id].is_switch) {
        LERR(l, "switch id %llu listed twice", (unsigned long long)id);
        return FE_EPARSE;
    }
    sc->nodes[base + id].is_switch = true;
    return 0;
}

/* switch ids: one or more lines until all are read */
static int read_switch_ids(struct lines *l, struct fe_sim_scenario *sc, uint32_t base,
                           const struct topo_counts *tc, char *err, size_t err_cap)
{
    uint64_t got = 0;
    while (got < tc->switches) {
        char big[64][128];
        int k = next_line(l, big, 64);
        if (!k) {
            LERR(l, "expected %llu switch ids, found %llu", (unsigned long long)tc->switches,
                 (unsigned long long)got);
            return FE_EPARSE;
        }
        if (k > 64) {
            LERR(l, "at most 64 switch ids per line");
            return FE_EPARSE;
        }
        for (int i = 0; i < k && got < tc->switches; i++, got++) {
            int rc = mark_switch(l, sc, base, tc->nodes, big[i], err, err_cap);
            if (rc) return rc;
        }
    }
    return 0;
}

/* one 'src dst rate delay error_rate' line */
static int read_link(struct lines *l, struct fe_sim_scenario *sc, uint32_t base, uint64_t nodes,
                     char tok[][128], int n, char *err, size_t err_cap)
{
    uint64_t a, b, rate, delay;
    double loss = 0;
    if (n < 4 || sim_parse_uint(tok[0], nodes - 1, &a) || sim_parse_uint(tok[1], nodes - 1, &b)) {
        LERR(l, "expected 'src dst rate delay error_rate' with node ids < %llu",
             (unsigned long long)nodes);
        return FE_EPARSE;
    }
    if (ns3_rate(tok[2], &rate)) {
        LERR(l, "'%s' is not a rate (e.g. 100Gbps)", tok[2]);
        return FE_EPARSE;
    }
    if (ns3_time(tok[3], &delay) || delay > FE_SIM_MAX_TIME / 4) {
        LERR(l, "'%s' is not a delay (e.g. 0.001ms)", tok[3]);
        return FE_EPARSE;
    }
    if (n >= 5 && (sim_parse_double(tok[4], &loss) || !(loss >= 0 && loss <= 1))) {
        LERR(l, "error rate '%s' must be in [0, 1]", tok[4]);
        return FE_EPARSE;
    }
    if (a == b) {
        LERR(l, "a link joins two different nodes");
        return FE_EPARSE;
    }
    if (fe_sim_scenario_add_link(sc, base + (uint32_t)a, base + (uint32_t)b, rate, delay, loss) <
        0) {
        LERR(l, "invalid link");
        return FE_EPARSE;
    }
    return 0;
}

int fe_sim_hpcc_parse_topology(const char *text, size_t len, const char *name,
                               struct fe_sim_scenario *sc, char *err, size_t err_cap)
{
    struct lines l = {text, text + len, name, 0};
    struct topo_counts tc;
    int rc = read_topology_counts(&l, &tc, err, err_cap);
    if (rc) return rc;
    uint32_t base = sc->n_nodes;
    rc = add_numbered_nodes(&l, sc, tc.nodes, err, err_cap);
    if (!rc) rc = read_switch_ids(&l, sc, base, &tc, err, err_cap);
    for (uint64_t i = 0; !rc && i < tc.links; i++) {
        char tok[8][128];
        int n = next_line(&l, tok, 8);
        if (!n) {
            LERR(&l, "expected %llu links, found %llu", (unsigned long long)tc.links,
                 (unsigned long long)i);
            return FE_EPARSE;
        }
        rc = read_link(&l, sc, base, tc.nodes, tok, n, err, err_cap);
    }
    return rc;
}

/* ---- flow.txt ---- */
/* source ports per (src, dst) pair from 10000, as HPCC assigns them */
struct sport_pairs {
    struct sport_pair {
        uint32_t src, dst;
        uint16_t next;
    } * v;
    size_t n, cap;
};

static int next_sport(struct sport_pairs *ps, uint32_t src, uint32_t dst, uint16_t *sport)
{
    size_t k;
    for (k = 0; k < ps->n; k++)
        if (ps->v[k].src == src && ps->v[k].dst == dst) break;
    if (k == ps->n) {
        if (ps->n == ps->cap) {
            size_t cap = ps->cap ? ps->cap * 2 : 64;
            struct sport_pair *nv = realloc(ps->v, cap * sizeof(*nv));
            if (!nv) return FE_ENOMEM;
            ps->v = nv;
            ps->cap = cap;
        }
        ps->v[ps->n++] = (struct sport_pair){src, dst, 10000};
    }
    *sport = ps->v[k].next++;
    return 0;
}

/* one 'src dst pg dport size start_s' line into f (its source port still unset) */
static int read_flow(struct lines *l, const struct fe_sim_scenario *sc, char tok[][128], int n,
                     struct fe_sim_flow *f, char *err, size_t err_cap)
{
    uint64_t src, dst, pg, dport, size, start;
    uint64_t maxid = sc->n_nodes ? sc->n_nodes - 1 : 0;
    if (n < 6 || sim_parse_uint(tok[0], maxid, &src) || sim_parse_uint(tok[1], maxid, &dst) ||
        sim_parse_uint(tok[2], 7, &pg) || sim_parse_uint(tok[3], 65535, &dport) ||
        sim_parse_uint(tok[4], UINT64_MAX / 2, &size) || ns3_time(tok[5], &start)) {
        LERR(l, "expected 'src dst pg dport size start_s' (node ids < %u, pg 0..7)", sc->n_nodes);
        return FE_EPARSE;
    }
    if (sc->nodes[src].is_switch || sc->nodes[dst].is_switch || src == dst || !size) {
        LERR(l, "a flow runs between two different hosts and has a size");
        return FE_EPARSE;
    }
    *f = (struct fe_sim_flow){.src = (uint32_t)src,
                              .dst = (uint32_t)dst,
                              .bytes = size,
                              .start_ns = start,
                              .prio = (uint8_t)pg,
                              .dport = (uint16_t)dport};
    return 0;
}

int fe_sim_hpcc_parse_flows(const char *text, size_t len, const char *name,
                            struct fe_sim_scenario *sc, char *err, size_t err_cap)
{
    struct lines l = {text, text + len, name, 0};
    char tok[8][128];
    int n = next_line(&l, tok, 8);
    uint64_t count;
    if (n < 1 || sim_parse_uint(tok[0], 10000000, &count)) {
        LERR(&l, "expected the number of flows");
        return FE_EPARSE;
    }
    struct sport_pairs pairs = {NULL, 0, 0};
    int rc = 0;
    for (uint64_t i = 0; !rc && i < count; i++) {
        n = next_line(&l, tok, 8);
        if (!n) {
            LERR(&l, "expected %llu flows, found %llu", (unsigned long long)count,
                 (unsigned long long)i);
            rc = FE_EPARSE;
            break;
        }
        struct fe_sim_flow f;
        rc = read_flow(&l, sc, tok, n, &f, err, err_cap);
        if (!rc) rc = next_sport(&pairs, f.src, f.dst, &f.sport);
        if (!rc && fe_sim_scenario_add_flow(sc, &f) < 0) {
            LERR(&l, "invalid flow");
            rc = FE_EPARSE;
        }
    }
    free(pairs.v);
    return rc;
}

/* ---- config.txt ---- */
static int set_cc_param(struct fe_sim_scenario *sc, const char *name, double v)
{
    struct fe_sim_cc *c = &sc->cc[0];
    if (!c->algo) return 0;
    int i = fe_cc_param_index(c->algo, name);
    if (i < 0) return 0;
    const struct fe_cc_param *p = &c->algo->params[i];
    if (v < p->min) v = p->min;
    if (v > p->max) v = p->max;
    if (p->integer) v = (double)(long long)(v + 0.5);
    c->params.v[i] = v;
    return 0;
}

struct hpcc_cfg {
    int cc_mode;
    bool have[64];
    double num[64];
    uint64_t kmin_map[FE_SIM_MAX_RED][2], kmax_map[FE_SIM_MAX_RED][2];
    double pmax_map[FE_SIM_MAX_RED][2];
    int n_kmin, n_kmax, n_pmax;
};

enum {
    K_QCN,
    K_PAYLOAD,
    K_BUFFER,
    K_STOP,
    K_ALPHA,
    K_DEC,
    K_CLAMP,
    K_TIMER,
    K_G,
    K_F,
    K_AI,
    K_HAI,
    K_MINRATE,
    K_ACKHI,
    K_ACKINT,
    K_UTARGET,
    K_MITHRESH,
    K_HASWIN,
    K_ERR,
    K_FASTREACT,
    K_GLOBALT,
    K_MULTIRATE,
    K_MAX
};
static const char *const num_keys[K_MAX] = {"ENABLE_QCN",
                                            "PACKET_PAYLOAD_SIZE",
                                            "BUFFER_SIZE",
                                            "SIMULATOR_STOP_TIME",
                                            "ALPHA_RESUME_INTERVAL",
                                            "RATE_DECREASE_INTERVAL",
                                            "CLAMP_TARGET_RATE",
                                            "RP_TIMER",
                                            "EWMA_GAIN",
                                            "FAST_RECOVERY_TIMES",
                                            "RATE_AI",
                                            "RATE_HAI",
                                            "MIN_RATE",
                                            "ACK_HIGH_PRIO",
                                            "L2_ACK_INTERVAL",
                                            "U_TARGET",
                                            "MI_THRESH",
                                            "HAS_WIN",
                                            "ERROR_RATE_PER_LINK",
                                            "FAST_REACT",
                                            "GLOBAL_T",
                                            "MULTI_RATE"};

static int read_map(struct lines *l, char tok[][128], int n, uint64_t (*m)[2], double (*pm)[2],
                    int *count, char *err, size_t err_cap)
{
    uint64_t k;
    if (n < 2 || sim_parse_uint(tok[1], FE_SIM_MAX_RED, &k) || n < 2 + 2 * (int)k) {
        LERR(l, "%s: expected 'n rate1 value1 ...' with n <= %d", tok[0], FE_SIM_MAX_RED);
        return FE_EPARSE;
    }
    for (uint64_t i = 0; i < k; i++) {
        uint64_t rate;
        double v;
        if (sim_parse_uint(tok[2 + 2 * i], UINT64_MAX / 2, &rate) ||
            sim_parse_double(tok[3 + 2 * i], &v) || v < 0 || v > 1e9) {
            LERR(l, "%s: bad pair '%s %s'", tok[0], tok[2 + 2 * i], tok[3 + 2 * i]);
            return FE_EPARSE;
        }
        if (m) {
            m[i][0] = rate;
            m[i][1] = (uint64_t)(v * 1000 + 0.5); /* KB = 1000 B, as HPCC's MMU */
        } else {
            if (v > 1) {
                LERR(l, "%s: probability %g > 1", tok[0], v);
                return FE_EPARSE;
            }
            pm[i][0] = (double)rate;
            pm[i][1] = v;
        }
    }
    *count = (int)k;
    return 0;
}

/* the keys naming a file, NULL for any other */
static char *file_key(struct fe_sim_hpcc_files *files, const char *k)
{
    if (!strcmp(k, "TOPOLOGY_FILE")) return files->topology;
    if (!strcmp(k, "FLOW_FILE")) return files->flow;
    if (!strcmp(k, "FCT_OUTPUT_FILE")) return files->fct_out;
    if (!strcmp(k, "PFC_OUTPUT_FILE")) return files->pfc_out;
    return NULL;
}

/* a key of num_keys; any other is ignored, as HPCC does */
static int read_num_key(struct lines *l, char tok[][128], int n, struct hpcc_cfg *h, char *err,
                        size_t err_cap)
{
    const char *k = tok[0];
    int i = 0;
    while (i < K_MAX && strcmp(k, num_keys[i])) i++;
    if (i == K_MAX) return 0;
    uint64_t r;
    double v;
    if (n < 2) {
        LERR(l, "%s needs a value", k);
        return FE_EPARSE;
    }
    if (i == K_AI || i == K_HAI || i == K_MINRATE) {
        if (ns3_rate(tok[1], &r)) {
            LERR(l, "%s: '%s' is not a rate (e.g. 50Mb/s)", k, tok[1]);
            return FE_EPARSE;
        }
        v = (double)r;
    } else if (sim_parse_double(tok[1], &v) || v < 0 || v > 1e9) {
        LERR(l, "%s: '%s' is not a number in [0, 1e9]", k, tok[1]);
        return FE_EPARSE;
    }
    h->have[i] = true;
    h->num[i] = v;
    return 0;
}

static int read_config_line(struct lines *l, char tok[][128], int n, struct hpcc_cfg *h,
                            struct fe_sim_hpcc_files *files, char *err, size_t err_cap)
{
    const char *k = tok[0];
    char *dst = file_key(files, k);
    if (dst) {
        if (n < 2 || !copy_str(dst, sizeof(files->topology), tok[1])) {
            LERR(l, "%s needs a file name", k);
            return FE_EPARSE;
        }
        return 0;
    }
    if (!strcmp(k, "CC_MODE")) {
        uint64_t m;
        if (n < 2 || sim_parse_uint(tok[1], 100, &m)) {
            LERR(l, "CC_MODE needs a number");
            return FE_EPARSE;
        }
        h->cc_mode = (int)m;
        return 0;
    }
    if (!strcmp(k, "KMIN_MAP"))
        return read_map(l, tok, n, h->kmin_map, NULL, &h->n_kmin, err, err_cap);
    if (!strcmp(k, "KMAX_MAP"))
        return read_map(l, tok, n, h->kmax_map, NULL, &h->n_kmax, err, err_cap);
    if (!strcmp(k, "PMAX_MAP"))
        return read_map(l, tok, n, NULL, h->pmax_map, &h->n_pmax, err, err_cap);
    if (!strcmp(k, "LINK_DOWN")) {
        if (n >= 2 && strcmp(tok[1], "0")) {
            LERR(l, "LINK_DOWN (a link failure during the run) is not modelled");
            return FE_ENOTSUP;
        }
        return 0;
    }
    return read_num_key(l, tok, n, h, err, err_cap);
}

/* HPCC's DCQCN keys as the parameters of dcqcn-hpcc-ns3: the value divided by div */
static const struct {
    int key;
    const char *param;
    double div;
} dcqcn_keys[] = {
    {K_ALPHA, "dce_tcp_rtt", 1},    {K_DEC, "rate_reduce_monitor_period", 1},
    {K_CLAMP, "clamp_tgt_rate", 1}, {K_TIMER, "rpg_time_reset", 1},
    {K_F, "rpg_threshold", 1},      {K_AI, "rpg_ai_rate", 1e6},
    {K_HAI, "rpg_hai_rate", 1e6},   {K_MINRATE, "rpg_min_rate", 1e6},
};

static void set_dcqcn_params(struct fe_sim_scenario *sc, const struct hpcc_cfg *h)
{
    for (size_t i = 0; i < sizeof(dcqcn_keys) / sizeof(dcqcn_keys[0]); i++)
        if (h->have[dcqcn_keys[i].key])
            set_cc_param(sc, dcqcn_keys[i].param, h->num[dcqcn_keys[i].key] / dcqcn_keys[i].div);
    if (h->have[K_G]) set_cc_param(sc, "dce_tcp_g", (1 - h->num[K_G]) * 1024);
}

static void set_hpcc_params(struct fe_sim_scenario *sc, const struct hpcc_cfg *h)
{
    if (h->have[K_UTARGET]) set_cc_param(sc, "eta", h->num[K_UTARGET]);
    /* HPCC's defaults: MI_THRESH 5, MULTI_RATE 1 (a rate per hop, not modelled: feroce's
     * HPCC keeps one rate from the most loaded hop, which is MULTI_RATE 0) */
    set_cc_param(sc, "max_stage", h->have[K_MITHRESH] ? h->num[K_MITHRESH] : 5);
    if (h->have[K_MINRATE]) set_cc_param(sc, "min_rate", h->num[K_MINRATE] / 1e6);
    sc->sw.int_enable = true;
}

/* the congestion control of CC_MODE */
static int apply_cc_mode(struct fe_sim_scenario *sc, const struct hpcc_cfg *h, const char *name,
                         char *err, size_t err_cap)
{
    static const char *const algos[] = {[1] = "dcqcn-hpcc-ns3", [3] = "hpcc", [7] = "timely"};
    const char *algo = h->cc_mode >= 0 && h->cc_mode < 8 ? algos[h->cc_mode] : NULL;
    if (!algo) {
        sim_errf(err, err_cap, "%s: CC_MODE %d is not available (1 DCQCN, 3 HPCC, 7 TIMELY)", name,
                 h->cc_mode);
        return FE_ENOTSUP;
    }
    char e[200];
    if (fe_sim_scenario_set_cc(sc, 0, algo, NULL, e, sizeof(e)) < 0) {
        sim_errf(err, err_cap, "%s: %s", name, e);
        return FE_ENOTSUP;
    }
    if (h->cc_mode == 1)
        set_dcqcn_params(sc, h);
    else if (h->cc_mode == 3)
        set_hpcc_params(sc, h);
    return 0;
}

static int apply_payload(struct fe_sim_scenario *sc, const struct hpcc_cfg *h,
                         struct fe_sim_hpcc_files *files, const char *name, char *err,
                         size_t err_cap)
{
    /* HPCC's default payload is 1000 bytes */
    double payload = h->have[K_PAYLOAD] ? h->num[K_PAYLOAD] : 1000;
    if (payload < 1 || payload > 4096) {
        sim_errf(err, err_cap, "%s: PACKET_PAYLOAD_SIZE must be 1..4096", name);
        return FE_EPARSE;
    }
    /* a payload of exactly that size per packet: one message per packet, the MTU above it */
    sc->host.mtu_bytes = 256;
    while (sc->host.mtu_bytes < payload) sc->host.mtu_bytes *= 2;
    sc->host.replay_bytes = 0;
    files->payload = (uint32_t)payload;
    return 0;
}

static int apply_stop_time(struct fe_sim_scenario *sc, const struct hpcc_cfg *h, const char *name,
                           char *err, size_t err_cap)
{
    if (!h->have[K_STOP]) return 0;
    if (h->num[K_STOP] * 1e9 > (double)FE_SIM_MAX_TIME) {
        sim_errf(err, err_cap, "%s: SIMULATOR_STOP_TIME beyond %.0f s", name,
                 FE_SIM_MAX_TIME / 1e9);
        return FE_ERANGE;
    }
    sc->stop_ns = (uint64_t)(h->num[K_STOP] * 1e9 + 0.5);
    return 0;
}

static void apply_acks(struct fe_sim_scenario *sc, const struct hpcc_cfg *h,
                       const struct fe_sim_hpcc_files *files)
{
    if (h->have[K_ACKHI] && h->num[K_ACKHI] != 0) sc->host.ack_pcp = 7;
    if (h->have[K_ACKINT] && h->num[K_ACKINT] >= 1) {
        /* bytes in HPCC (an ACK each time the expected sequence passes a multiple of it, its
         * RdmaHw::ReceiverCheckSeq): about every interval / payload packets */
        double pk = ceil(h->num[K_ACKINT] / (double)(files->payload ? files->payload : 1000));
        sc->host.ack_every = (uint16_t)(pk > 65535 ? 65535 : pk);
    }
}

/* HPCC's defaults when the key is absent (third.cc): a window, one global T */
static void keep_for_apply(struct fe_sim_hpcc_files *files, const struct hpcc_cfg *h)
{
    files->cc_mode = h->cc_mode;
    files->has_win = h->have[K_HASWIN] ? h->num[K_HASWIN] != 0 : true;
    files->global_t = h->have[K_GLOBALT] ? h->num[K_GLOBALT] != 0 : true;
    files->rate_ai_bps = h->have[K_AI] ? (uint64_t)h->num[K_AI] : 0;
}

/* the ECN point of one KMIN_MAP rate from the other two maps; false when they lack it */
static bool red_for_rate(const struct hpcc_cfg *h, struct fe_sim_red *r)
{
    bool kx = false, px = false;
    for (int j = 0; j < h->n_kmax; j++)
        if (h->kmax_map[j][0] == r->rate_bps) {
            r->kmax_bytes = h->kmax_map[j][1];
            kx = true;
        }
    for (int j = 0; j < h->n_pmax; j++)
        if ((uint64_t)h->pmax_map[j][0] == r->rate_bps) {
            r->pmax_ppm = (uint32_t)(h->pmax_map[j][1] * 1e6 + 0.5);
            px = true;
        }
    return kx && px && r->kmax_bytes >= r->kmin_bytes;
}

/* ECN maps (exact port rate, as HPCC looks them up) */
static int apply_red_maps(struct fe_sim_scenario *sc, const struct hpcc_cfg *h, const char *name,
                          char *err, size_t err_cap)
{
    sc->sw.n_red = 0;
    for (int i = 0; i < h->n_kmin; i++) {
        struct fe_sim_red r = {.rate_bps = h->kmin_map[i][0], .kmin_bytes = h->kmin_map[i][1]};
        if (!red_for_rate(h, &r)) {
            sim_errf(err, err_cap, "%s: KMIN_MAP, KMAX_MAP and PMAX_MAP disagree for %llu b/s",
                     name, (unsigned long long)r.rate_bps);
            return FE_EPARSE;
        }
        sc->sw.red[sc->sw.n_red++] = r;
    }
    if (sc->sw.ecn && !sc->sw.n_red) {
        sim_errf(err, err_cap, "%s: ENABLE_QCN 1 needs KMIN_MAP, KMAX_MAP and PMAX_MAP", name);
        return FE_EPARSE;
    }
    return 0;
}

static int apply_config(struct fe_sim_scenario *sc, const struct hpcc_cfg *h,
                        struct fe_sim_hpcc_files *files, const char *name, char *err,
                        size_t err_cap)
{
    int rc = apply_cc_mode(sc, h, name, err, err_cap);
    if (rc) return rc;
    if (h->have[K_QCN]) sc->sw.ecn = h->num[K_QCN] != 0;
    rc = apply_payload(sc, h, files, name, err, err_cap);
    if (rc) return rc;
    if (h->have[K_BUFFER]) sc->sw.buffer_bytes = (uint64_t)(h->num[K_BUFFER] * 1048576.0 + 0.5);
    rc = apply_stop_time(sc, h, name, err, err_cap);
    if (rc) return rc;
    apply_acks(sc, h, files);
    keep_for_apply(files, h);
    return apply_red_maps(sc, h, name, err, err_cap);
}

int fe_sim_hpcc_parse_config(const char *text, size_t len, const char *name,
                             struct fe_sim_scenario *sc, struct fe_sim_hpcc_files *files, char *err,
                             size_t err_cap)
{
    struct lines l = {text, text + len, name, 0};
    char tok[40][128];
    struct hpcc_cfg h;
    memset(&h, 0, sizeof(h));
    h.cc_mode = 1;
    int n;
    while ((n = next_line(&l, tok, 40))) {
        if (n > 40) {
            LERR(&l, "too many values");
            return FE_EPARSE;
        }
        int rc = read_config_line(&l, tok, n, &h, files, err, err_cap);
        if (rc) return rc;
    }
    return apply_config(sc, &h, files, name, err, err_cap);
}

/* ---- settings derived from the topology ---- */
/* HPCC's CalculateRoute state: the links of every node (both directions, CSR), the BFS queue,
 * and per node its hop count, delay, payload serialization and bottleneck */
struct route_ws {
    uint32_t *deg, *adj, *queue, *touched, *dist;
    uint64_t *delay, *txd, *bw;
};

static void route_ws_free(struct route_ws *w)
{
    free(w->deg);
    free(w->adj);
    free(w->queue);
    free(w->touched);
    free(w->dist);
    free(w->delay);
    free(w->txd);
    free(w->bw);
}

static bool route_ws_alloc(struct route_ws *w, uint32_t n, uint32_t n_links)
{
    w->deg = calloc(n + 1, sizeof(uint32_t));
    w->adj = malloc((2 * (size_t)n_links + 1) * sizeof(uint32_t)); /* link index */
    w->queue = malloc((size_t)n * sizeof(uint32_t));
    w->touched = malloc((size_t)n * sizeof(uint32_t));
    w->dist = malloc((size_t)n * sizeof(uint32_t));
    w->delay = malloc((size_t)n * sizeof(uint64_t));
    w->txd = malloc((size_t)n * sizeof(uint64_t));
    w->bw = malloc((size_t)n * sizeof(uint64_t));
    return w->deg && w->adj && w->queue && w->touched && w->dist && w->delay && w->txd && w->bw;
}

static bool build_adjacency(struct route_ws *w, const struct fe_sim_scenario *sc)
{
    uint32_t n = sc->n_nodes;
    for (uint32_t i = 0; i < sc->n_links; i++) {
        w->deg[sc->links[i].a + 1]++;
        w->deg[sc->links[i].b + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) w->deg[i + 1] += w->deg[i];
    uint32_t *fill = calloc(n, sizeof(uint32_t));
    if (!fill) return false;
    for (uint32_t i = 0; i < sc->n_links; i++) {
        uint32_t a = sc->links[i].a, b = sc->links[i].b;
        w->adj[w->deg[a] + fill[a]++] = i;
        w->adj[w->deg[b] + fill[b]++] = i;
    }
    free(fill);
    return true;
}

/* BFS from host h through switches; a node's delay, payload serialization (integer ns per hop)
 * and bottleneck come from the path that reached it first. Returns the nodes reached. */
static uint32_t bfs_from_host(struct route_ws *w, const struct fe_sim_scenario *sc, uint32_t h,
                              uint64_t payload)
{
    uint32_t head = 0, tail = 0, n_touched = 0;
    w->queue[tail++] = h;
    w->touched[n_touched++] = h;
    w->dist[h] = 0;
    w->delay[h] = w->txd[h] = 0;
    w->bw[h] = UINT64_MAX;
    while (head < tail) {
        uint32_t u = w->queue[head++];
        for (uint32_t k = w->deg[u]; k < w->deg[u + 1]; k++) {
            const struct fe_sim_link *l = &sc->links[w->adj[k]];
            uint32_t v = l->a == u ? l->b : l->a;
            if (w->dist[v] != UINT32_MAX || !l->rate_bps) continue;
            w->dist[v] = w->dist[u] + 1;
            w->delay[v] = w->delay[u] + l->delay_ns;
            w->txd[v] = w->txd[u] + payload * 8000000000u / l->rate_bps;
            w->bw[v] = w->bw[u] < l->rate_bps ? w->bw[u] : l->rate_bps;
            w->touched[n_touched++] = v;
            if (sc->nodes[v].is_switch) w->queue[tail++] = v;
        }
    }
    return n_touched;
}

/* maxRtt and maxBdp over the hosts a BFS from h reached; resets what it reached */
static void take_max_paths(struct route_ws *w, const struct fe_sim_scenario *sc, uint32_t h,
                           uint32_t n_touched, struct fe_sim_hpcc_files *files)
{
    for (uint32_t i = 0; i < n_touched; i++) {
        uint32_t j = w->touched[i];
        w->dist[j] = UINT32_MAX;
        if (sc->nodes[j].is_switch || j == h) continue;
        uint64_t rtt = 2 * w->delay[j] + w->txd[j];
        /* rtt x bw / 1e9 / 8, without overflow for any delay the parser admits */
        uint64_t bdp = (uint64_t)((double)rtt * (double)w->bw[j] / 8e9);
        if (rtt > files->max_rtt_ns) files->max_rtt_ns = rtt;
        if (bdp > files->max_bdp_bytes) files->max_bdp_bytes = bdp;
    }
}

/* HPCC's CalculateRoute: BFS from every host. Only the nodes a BFS reached are read and reset
 * (`touched`), so the cost is hosts x their reachable part, not hosts x nodes (a topology may
 * declare many unlinked nodes). */
static int find_max_paths(const struct fe_sim_scenario *sc, struct fe_sim_hpcc_files *files,
                          uint64_t payload, char *err, size_t err_cap)
{
    uint32_t n = sc->n_nodes;
    struct route_ws w;
    int rc = 0;
    if (!route_ws_alloc(&w, n, sc->n_links) || !build_adjacency(&w, sc)) {
        sim_errf(err, err_cap, "out of memory");
        rc = FE_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) w.dist[i] = UINT32_MAX;
    for (uint32_t h = 0; h < n; h++) {
        if (sc->nodes[h].is_switch) continue;
        uint32_t n_touched = bfs_from_host(&w, sc, h, payload);
        take_max_paths(&w, sc, h, n_touched, files);
    }
out:
    route_ws_free(&w);
    return rc;
}

static void apply_window(struct fe_sim_scenario *sc, const struct fe_sim_hpcc_files *files,
                         uint64_t payload)
{
    if (files->global_t && files->max_rtt_ns) {
        if (files->cc_mode == 3) {
            /* T = maxRtt for every flow; ns-3's rate step RATE_AI is a window step of
             * RATE_AI x T */
            set_cc_param(sc, "base_rtt", (double)files->max_rtt_ns / 1e3);
            if (files->rate_ai_bps)
                set_cc_param(sc, "w_ai",
                             (double)files->rate_ai_bps / 8 * (double)files->max_rtt_ns / 1e9);
        }
        if (files->has_win) {
            /* ns-3 lets a packet leave while the bytes in flight are under the window; the
             * requester admits one when they stay within its replay buffer */
            uint64_t w = files->max_bdp_bytes + payload - 1;
            sc->host.replay_bytes = w > sc->host.mtu_bytes ? w : sc->host.mtu_bytes;
            sc->host.window_bdp = false;
        }
    } else if (files->has_win) {
        sc->host.window_bdp = true; /* per pair in HPCC; the largest flow path BDP here */
    }
}

int fe_sim_hpcc_apply(struct fe_sim_scenario *sc, struct fe_sim_hpcc_files *files, char *err,
                      size_t err_cap)
{
    uint64_t payload = files->payload ? files->payload : 1000;
    files->max_rtt_ns = files->max_bdp_bytes = 0;
    if (!sc->n_nodes) return 0;
    int rc = find_max_paths(sc, files, payload, err, err_cap);
    if (rc) return rc;
    apply_window(sc, files, payload);
    return 0;
}

/* HPCC configs name files relative to where run.py ran (e.g. "mix/topology.txt"); feroce takes
 * them relative to the config's directory, and falls back to the base name there. */
static char *read_rel(const char *dir, const char *file, char *used, size_t used_cap, size_t *len,
                      char *err, size_t err_cap)
{
    if (!sim_path_join(used, used_cap, dir, file)) {
        sim_errf(err, err_cap, "%s: path too long", file);
        return NULL;
    }
    FILE *f = fopen(used, "rb");
    if (!f && file[0] != '/') {
        const char *base = strrchr(file, '/');
        if (base && sim_path_join(used, used_cap, dir, base + 1)) f = fopen(used, "rb");
    }
    if (f) fclose(f);
    return sim_read_file(used, len, err, err_cap);
}

typedef int (*hpcc_parser)(const char *text, size_t len, const char *name,
                           struct fe_sim_scenario *sc, char *err, size_t err_cap);

/* Reads and parses the file named in file: as given when the command line named it (override),
 * else found by read_rel, and then file holds the path used. */
static int load_input(const char *dir, bool override, char *file, size_t file_cap,
                      hpcc_parser parse, struct fe_sim_scenario *sc, char *err, size_t err_cap)
{
    char used[512];
    size_t len;
    char *text = override ? sim_read_file(file, &len, err, err_cap)
                          : read_rel(dir, file, used, sizeof(used), &len, err, err_cap);
    if (!text) return FE_EIO;
    if (!override) copy_str(file, file_cap, used);
    int rc = parse(text, len, file, sc, err, err_cap);
    free(text);
    return rc;
}

static int load_config(const char *config_path, const char *base, struct fe_sim_scenario *sc,
                       struct fe_sim_hpcc_files *files, char *err, size_t err_cap)
{
    size_t len;
    char *text = sim_read_file(config_path, &len, err, err_cap);
    if (!text) return FE_EIO;
    snprintf(sc->name, sizeof(sc->name), "%s", base);
    int rc = fe_sim_hpcc_parse_config(text, len, config_path, sc, files, err, err_cap);
    free(text);
    return rc;
}

static int check_input_names(const char *config_path, const char *topology_override,
                             const char *flow_override, struct fe_sim_hpcc_files *files, char *err,
                             size_t err_cap)
{
    if ((topology_override &&
         !copy_str(files->topology, sizeof(files->topology), topology_override)) ||
        (flow_override && !copy_str(files->flow, sizeof(files->flow), flow_override))) {
        sim_errf(err, err_cap, "file name too long");
        return FE_EINVAL;
    }
    if (!files->topology[0] || !files->flow[0]) {
        sim_errf(err, err_cap, "%s: needs TOPOLOGY_FILE and FLOW_FILE (or --topology, --flows)",
                 config_path);
        return FE_EINVAL;
    }
    return 0;
}

/* outputs: relative to the config's directory too */
static void place_outputs(const char *dir, struct fe_sim_hpcc_files *files)
{
    char tmp[512];
    if (files->fct_out[0] && sim_path_join(tmp, sizeof(tmp), dir, files->fct_out))
        copy_str(files->fct_out, sizeof(files->fct_out), tmp);
    if (files->pfc_out[0] && sim_path_join(tmp, sizeof(tmp), dir, files->pfc_out))
        copy_str(files->pfc_out, sizeof(files->pfc_out), tmp);
}

int fe_sim_hpcc_load(const char *config_path, const char *topology_override,
                     const char *flow_override, struct fe_sim_scenario *sc,
                     struct fe_sim_hpcc_files *files, char *err, size_t err_cap)
{
    fe_sim_scenario_init(sc);
    memset(files, 0, sizeof(*files));
    char dir[512] = "";
    const char *slash = strrchr(config_path, '/');
    if (slash) snprintf(dir, sizeof(dir), "%.*s", (int)(slash - config_path), config_path);
    int rc = load_config(config_path, slash ? slash + 1 : config_path, sc, files, err, err_cap);
    if (!rc)
        rc = check_input_names(config_path, topology_override, flow_override, files, err, err_cap);
    if (!rc)
        rc = load_input(dir, topology_override != NULL, files->topology, sizeof(files->topology),
                        fe_sim_hpcc_parse_topology, sc, err, err_cap);
    if (!rc)
        rc = load_input(dir, flow_override != NULL, files->flow, sizeof(files->flow),
                        fe_sim_hpcc_parse_flows, sc, err, err_cap);
    if (!rc && files->payload)
        for (uint32_t i = 0; i < sc->n_flows; i++) sc->flows[i].msg_bytes = files->payload;
    if (!rc) rc = fe_sim_hpcc_apply(sc, files, err, err_cap);
    if (rc) {
        fe_sim_scenario_free(sc);
        return rc;
    }
    place_outputs(dir, files);
    return 0;
}

/* ---- outputs ---- */
static uint32_t hpcc_ip(uint32_t id)
{
    return 0x0b000001u + ((id / 256) * 0x00010000u) + ((id % 256) * 0x00000100u);
}

static int cmp_finish(const void *a, const void *b, void *ctx)
{
    const struct fe_sim *sim = ctx;
    struct fe_sim_flow_stats x, y;
    fe_sim_flow_stats(sim, *(const uint32_t *)a, &x);
    fe_sim_flow_stats(sim, *(const uint32_t *)b, &y);
    if (x.finish_ns != y.finish_ns) return x.finish_ns < y.finish_ns ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void fe_sim_hpcc_write_fct(const struct fe_sim *sim, FILE *f)
{
    uint32_t n = fe_sim_n_flows(sim), k = 0;
    uint32_t *order = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!order) return;
    for (uint32_t i = 0; i < n; i++) {
        struct fe_sim_flow_stats fs;
        fe_sim_flow_stats(sim, i, &fs);
        if (fs.done && !fs.failed) order[k++] = i;
    }
    qsort_r(order, k, sizeof(uint32_t), cmp_finish, (void *)sim);
    for (uint32_t j = 0; j < k; j++) {
        struct fe_sim_flow_stats fs;
        fe_sim_flow_stats(sim, order[j], &fs);
        const struct fe_sim_flow *fl = &sim->flows[order[j]].spec;
        fprintf(f, "%08x %08x %u %u %llu %llu %llu %llu\n", hpcc_ip(fs.src), hpcc_ip(fs.dst),
                fl->sport, fl->dport, (unsigned long long)fs.bytes, (unsigned long long)fs.start_ns,
                (unsigned long long)(fs.finish_ns - fs.start_ns),
                (unsigned long long)(fs.standalone_fct_ns + 0.5));
    }
    free(order);
}

static void pfc_line(void *user, uint64_t now, uint32_t node, bool is_switch, uint32_t port,
                     uint8_t prio, bool pause)
{
    (void)prio;
    /* time node node_type (0 host, 1 switch) ifindex (ns-3 counts the loopback as 0) type */
    fprintf((FILE *)user, "%llu %u %u %u %u\n", (unsigned long long)now, node, is_switch ? 1u : 0u,
            port + 1, pause ? 1u : 0u);
}

void fe_sim_hpcc_log_pfc(struct fe_sim *sim, FILE *f)
{
    fe_sim_set_pfc_log(sim, pfc_line, f);
}
