/* The native scenario file: YAML (libyaml), documented in docs/sim.md. Every value error names
 * its place as "file:line: what". The same keys serve `feroce sim --set section.key=value`. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"

#define MAX_VISITS                                                                                 \
    20000000u /* alias expansion bound (a file of aliases can grow exponentially)                  \
               */

struct yctx {
    yaml_document_t *doc;
    const char *file;
    struct fe_sim_scenario *sc;
    char *err;
    size_t err_cap;
    uint64_t visits;
    /* link defaults */
    uint64_t link_rate, link_delay;
    double link_loss;
};

static int yerr(struct yctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int yerr(struct yctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sim_errf(c->err, c->err_cap, "%s:%lu: %s", c->file,
             n ? (unsigned long)n->start_mark.line + 1 : 0ul, msg);
    return FE_EPARSE;
}

static yaml_node_t *node(struct yctx *c, int id)
{
    c->visits++;
    return yaml_document_get_node(c->doc, id);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* ---- settings shared with --set ---- */

enum vtype {
    V_SIZE,
    V_SIZE_AUTO,
    V_RATE,
    V_TIME,
    V_BOOL,
    V_DOUBLE,
    V_U8,
    V_U16,
    V_U32,
    V_PRIOS,
    V_PFCMODE,
    V_FRAMES
};

struct setting {
    const char *section, *key;
    enum vtype type;
    size_t off; /* in struct fe_sim_scenario */
    double min, max;
    const char *help;
};

#define SW(f) offsetof(struct fe_sim_scenario, sw.f)
#define HO(f) offsetof(struct fe_sim_scenario, host.f)
static const struct setting settings[] = {
    {"switch", "buffer", V_SIZE, SW(buffer_bytes), 1, 1e12, "shared buffer per switch"},
    {"switch", "reserve", V_SIZE_AUTO, SW(reserve_bytes), 0, 1e9, "per (port, priority)"},
    {"switch", "alpha", V_DOUBLE, SW(dt_alpha), 1e-6, 64, "dynamic threshold"},
    {"switch", "pfc", V_BOOL, SW(pfc), 0, 1, ""},
    {"switch", "lossless", V_PRIOS, SW(lossless_mask), 0, 0, "PFC priorities"},
    {"switch", "pfc_mode", V_PFCMODE, SW(pfc_mode), 0, 0, "quanta | xoff-xon"},
    {"switch", "pause_quanta", V_U16, SW(pause_quanta), 1, 65535, ""},
    {"switch", "headroom", V_SIZE_AUTO, SW(headroom_bytes), 0, 1e9, ""},
    {"switch", "xon_offset", V_SIZE_AUTO, SW(xon_offset_bytes), 0, 1e9, ""},
    {"switch", "ecn", V_BOOL, SW(ecn), 0, 1, ""},
    {"switch", "int", V_BOOL, SW(int_enable), 0, 1, ""},
    {"switch", "ecmp", V_BOOL, SW(ecmp), 0, 1, ""},
    {"switch", "cnp_monitor", V_RATE, SW(cnp_monitor_bps), 0, 0, "forge CNPs above this rate"},
    {"switch", "cnp_monitor_window", V_TIME, SW(cnp_monitor_window_ns), 1, 1e12, ""},
    {"host", "mtu", V_U32, HO(mtu_bytes), 256, 4096, ""},
    {"host", "replay", V_SIZE, HO(replay_bytes), 0, 1e10, ""},
    {"host", "ack_every", V_U16, HO(ack_every), 1, 65535, ""},
    {"host", "ackreq_every", V_U16, HO(ackreq_every), 1, 65535, ""},
    {"host", "ack_timeout", V_TIME, HO(ack_timeout_ns), 1, 1e12, ""},
    {"host", "retry", V_U8, HO(retry_cnt), 0, 7, ""},
    {"host", "np", V_BOOL, HO(np_enable), 0, 1, ""},
    {"host", "ecn_echo_on_ack", V_BOOL, HO(ecn_echo_on_ack), 0, 1, ""},
    {"host", "cnp_interval", V_TIME, HO(cnp_interval_ns), 0, 1e12, ""},
    {"host", "data_pcp", V_U8, HO(data_pcp), 0, 7, ""},
    {"host", "data_dscp", V_U8, HO(data_dscp), 0, 63, ""},
    {"host", "ack_pcp", V_U8, HO(ack_pcp), 0, 7, ""},
    {"host", "cnp_pcp", V_U8, HO(cnp_pcp), 0, 7, ""},
    {"host", "cnp_dscp", V_U8, HO(cnp_dscp), 0, 63, ""},
    {"host", "pacer_burst", V_SIZE, HO(pacer_burst_bytes), 0, 1e9, ""},
    {"host", "ifg", V_BOOL, HO(count_ifg), 0, 1, ""},
    {"host", "min_frame", V_SIZE, HO(min_frame_bytes), 0, 9000, ""},
    {"host", "frames", V_FRAMES, HO(frames), 0, 0, "roce | hpcc-ns3"},
};

/* Parses `value` for setting s into the scenario; a message in msg on error. */
static int apply_setting(struct fe_sim_scenario *sc, const struct setting *s, const char *value,
                         char *msg, size_t cap)
{
    char *base = (char *)sc + s->off;
    uint64_t u = 0;
    double d = 0;
    bool b = false;
    int rc = 0;
    switch (s->type) {
    case V_SIZE:
    case V_SIZE_AUTO:
        if (s->type == V_SIZE_AUTO && !strcmp(value, "auto")) {
            u = !strcmp(s->key, "headroom") ? 0 : FE_SIM_AUTO;
        } else {
            rc = sim_parse_size(value, &u);
            if (!rc && (double)u > s->max) rc = FE_ERANGE;
            if (!rc && (double)u < s->min) rc = FE_ERANGE;
        }
        if (!rc) memcpy(base, &u, sizeof(u));
        break;
    case V_RATE:
        if (!strcmp(value, "0") || !strcmp(value, "off"))
            u = 0;
        else
            rc = sim_parse_rate(value, &u);
        if (!rc) memcpy(base, &u, sizeof(u));
        break;
    case V_TIME:
        rc = sim_parse_time(value, &u);
        if (!rc && ((double)u > s->max || (double)u < s->min)) rc = FE_ERANGE;
        if (!rc) memcpy(base, &u, sizeof(u));
        break;
    case V_BOOL:
        rc = sim_parse_bool(value, &b);
        if (!rc) memcpy(base, &b, sizeof(b));
        break;
    case V_DOUBLE:
        rc = sim_parse_double(value, &d);
        if (!rc && !(d >= s->min && d <= s->max)) rc = FE_ERANGE;
        if (!rc) memcpy(base, &d, sizeof(d));
        break;
    case V_U8:
    case V_U16:
    case V_U32:
        rc = sim_parse_uint(value, (uint64_t)s->max, &u);
        if (!rc && (double)u < s->min) rc = FE_ERANGE;
        if (!rc) {
            if (s->type == V_U8) {
                uint8_t v = (uint8_t)u;
                memcpy(base, &v, 1);
            } else if (s->type == V_U16) {
                uint16_t v = (uint16_t)u;
                memcpy(base, &v, 2);
            } else {
                uint32_t v = (uint32_t)u;
                memcpy(base, &v, 4);
            }
        }
        break;
    case V_PRIOS: {
        /* "3" or "3,4" */
        uint8_t mask = 0;
        const char *p = value;
        while (*p) {
            if (*p < '0' || *p > '7' || (p[1] && p[1] != ',')) {
                rc = FE_EINVAL;
                break;
            }
            mask |= (uint8_t)(1u << (*p - '0'));
            p += p[1] ? 2 : 1;
        }
        if (!rc) memcpy(base, &mask, 1);
        break;
    }
    case V_PFCMODE: {
        enum fe_sim_pfc_mode m;
        if (!strcmp(value, "quanta"))
            m = FE_SIM_PFC_QUANTA;
        else if (!strcmp(value, "xoff-xon"))
            m = FE_SIM_PFC_XOFF_XON;
        else {
            rc = FE_EINVAL;
            break;
        }
        memcpy(base, &m, sizeof(m));
        break;
    }
    case V_FRAMES: {
        enum fe_sim_frames m;
        if (!strcmp(value, "roce"))
            m = FE_SIM_FRAMES_ROCE;
        else if (!strcmp(value, "hpcc-ns3"))
            m = FE_SIM_FRAMES_HPCC_NS3;
        else {
            rc = FE_EINVAL;
            break;
        }
        memcpy(base, &m, sizeof(m));
        break;
    }
    }
    if (rc) {
        static const char *const what[] = {"a size (e.g. 4MB, 512KiB)",
                                           "a size or auto",
                                           "a rate (e.g. 10Gbps)",
                                           "a time (e.g. 2us)",
                                           "true or false",
                                           "a number",
                                           "an integer",
                                           "an integer",
                                           "an integer",
                                           "priorities 0..7 (e.g. 3 or 3,4)",
                                           "quanta or xoff-xon",
                                           "roce or hpcc-ns3"};
        if (rc == FE_ERANGE)
            snprintf(msg, cap, "%s.%s: '%s' out of range [%g, %g]", s->section, s->key, value,
                     s->min, s->max);
        else
            snprintf(msg, cap, "%s.%s: '%s' is not %s", s->section, s->key, value, what[s->type]);
    }
    return rc;
}

static const struct setting *find_setting(const char *section, const char *key)
{
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
        if (!strcmp(settings[i].section, section) && !strcmp(settings[i].key, key))
            return &settings[i];
    return NULL;
}

/* --set KEY=VALUE */
int fe_sim_scenario_set(struct fe_sim_scenario *sc, const char *assignment, char *err,
                        size_t err_cap)
{
    char buf[256];
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment || (size_t)(eq - assignment) >= sizeof(buf)) {
        sim_errf(err, err_cap, "expected KEY=VALUE");
        return FE_EINVAL;
    }
    memcpy(buf, assignment, (size_t)(eq - assignment));
    buf[eq - assignment] = 0;
    const char *value = eq + 1;
    char *dot = strchr(buf, '.');
    if (!dot) {
        uint64_t u;
        if (!strcmp(buf, "seed")) {
            if (sim_parse_uint(value, UINT64_MAX, &u)) goto bad;
            sc->seed = u;
            return 0;
        }
        if (!strcmp(buf, "stop")) {
            if (sim_parse_time(value, &u)) goto bad;
            sc->stop_ns = u;
            return 0;
        }
        if (!strcmp(buf, "name")) {
            snprintf(sc->name, sizeof(sc->name), "%s", value);
            return 0;
        }
        sim_errf(err, err_cap, "unknown key '%s'", buf);
        return FE_ENOENT;
    }
    *dot = 0;
    const char *section = buf, *key = dot + 1;
    if (!strcmp(section, "link")) {
        uint64_t u;
        double d;
        for (uint32_t i = 0; i < sc->n_links; i++) {
            if (!strcmp(key, "rate")) {
                if (sim_parse_rate(value, &u)) goto bad;
                sc->links[i].rate_bps = u;
            } else if (!strcmp(key, "delay")) {
                if (sim_parse_time(value, &u) || u > FE_SIM_MAX_TIME / 4) goto bad;
                sc->links[i].delay_ns = u;
            } else if (!strcmp(key, "loss")) {
                if (sim_parse_double(value, &d) || !(d >= 0 && d <= 1)) goto bad;
                sc->links[i].loss = d;
            } else {
                sim_errf(err, err_cap, "unknown key 'link.%s' (rate, delay, loss)", key);
                return FE_ENOENT;
            }
        }
        return 0;
    }
    if (!strcmp(section, "flow")) {
        uint64_t u;
        for (uint32_t i = 0; i < sc->n_flows; i++) {
            if (!strcmp(key, "size") || !strcmp(key, "bytes")) {
                if (sim_parse_size(value, &u) || !u) goto bad;
                sc->flows[i].bytes = u;
            } else if (!strcmp(key, "msg")) {
                if (sim_parse_size(value, &u) || u > FE_MAX_MSG_BYTES) goto bad;
                sc->flows[i].msg_bytes = (uint32_t)u;
            } else if (!strcmp(key, "start")) {
                if (sim_parse_time(value, &u)) goto bad;
                sc->flows[i].start_ns = u;
            } else {
                sim_errf(err, err_cap, "unknown key 'flow.%s' (size, msg, start)", key);
                return FE_ENOENT;
            }
        }
        return 0;
    }
    const struct setting *s = find_setting(section, key);
    if (!s) {
        sim_errf(err, err_cap, "unknown key '%s.%s'", section, key);
        return FE_ENOENT;
    }
    return apply_setting(sc, s, value, err, err_cap) ? FE_EINVAL : 0;
bad:
    sim_errf(err, err_cap, "bad value '%s' for %s", value, assignment);
    return FE_EINVAL;
}

/* ---- YAML walking ---- */

/* A mapping's value for key, or NULL. */
static yaml_node_t *map_get(struct yctx *c, yaml_node_t *m, const char *key)
{
    if (!m || m->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(c, p->key));
        if (k && !strcmp(k, key)) return node(c, p->value);
    }
    return NULL;
}

/* Every key of mapping m must be in `allowed` (NULL-terminated). */
static int check_keys(struct yctx *c, yaml_node_t *m, const char *where, const char *const *allowed)
{
    if (m->type != YAML_MAPPING_NODE) return yerr(c, m, "%s must be a mapping", where);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = node(c, p->key);
        const char *k = scalar(kn);
        if (!k) return yerr(c, kn, "%s: keys must be plain names", where);
        bool ok = false;
        for (const char *const *a = allowed; *a; a++) ok |= !strcmp(*a, k);
        if (!ok) return yerr(c, kn, "unknown key '%s' in %s", k, where);
    }
    return 0;
}

static int want_scalar(struct yctx *c, yaml_node_t *n, const char *what, const char **out)
{
    *out = scalar(n);
    if (!*out) return yerr(c, n, "%s must be a single value", what);
    return 0;
}

static int get_time(struct yctx *c, yaml_node_t *n, const char *what, uint64_t *out)
{
    const char *v;
    if (want_scalar(c, n, what, &v)) return FE_EPARSE;
    if (sim_parse_time(v, out))
        return yerr(c, n, "%s: '%s' is not a time (e.g. 2us, 10ms)", what, v);
    return 0;
}

static int get_size(struct yctx *c, yaml_node_t *n, const char *what, uint64_t *out)
{
    const char *v;
    if (want_scalar(c, n, what, &v)) return FE_EPARSE;
    if (sim_parse_size(v, out))
        return yerr(c, n, "%s: '%s' is not a size (e.g. 4MB, 64KiB)", what, v);
    return 0;
}

static int get_rate(struct yctx *c, yaml_node_t *n, const char *what, uint64_t *out)
{
    const char *v;
    if (want_scalar(c, n, what, &v)) return FE_EPARSE;
    if (sim_parse_rate(v, out)) return yerr(c, n, "%s: '%s' is not a rate (e.g. 10Gbps)", what, v);
    return 0;
}

static int get_double(struct yctx *c, yaml_node_t *n, const char *what, double lo, double hi,
                      double *out)
{
    const char *v;
    if (want_scalar(c, n, what, &v)) return FE_EPARSE;
    if (sim_parse_double(v, out) || !(*out >= lo && *out <= hi))
        return yerr(c, n, "%s: '%s' is not a number in [%g, %g]", what, v, lo, hi);
    return 0;
}

static int get_uint(struct yctx *c, yaml_node_t *n, const char *what, uint64_t max, uint64_t *out)
{
    const char *v;
    if (want_scalar(c, n, what, &v)) return FE_EPARSE;
    if (sim_parse_uint(v, max, out))
        return yerr(c, n, "%s: '%s' is not an integer in [0, %llu]", what, v,
                    (unsigned long long)max);
    return 0;
}

/* switch: / host: sections, by the settings table (plus switch.red) */
static int parse_section(struct yctx *c, yaml_node_t *m, const char *section)
{
    if (m->type != YAML_MAPPING_NODE) return yerr(c, m, "%s must be a mapping", section);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = node(c, p->key), *vn = node(c, p->value);
        const char *k = scalar(kn);
        if (!k) return yerr(c, kn, "%s: keys must be plain names", section);
        if (!strcmp(section, "switch") && !strcmp(k, "red")) {
            if (vn->type != YAML_SEQUENCE_NODE) return yerr(c, vn, "switch.red must be a list");
            int n = 0;
            for (yaml_node_item_t *it = vn->data.sequence.items.start;
                 it < vn->data.sequence.items.top; it++) {
                yaml_node_t *e = node(c, *it);
                static const char *const keys[] = {"rate", "kmin", "kmax", "pmax", NULL};
                if (check_keys(c, e, "a switch.red entry", keys)) return FE_EPARSE;
                if (n >= FE_SIM_MAX_RED)
                    return yerr(c, e, "at most %d switch.red entries", FE_SIM_MAX_RED);
                struct fe_sim_red r = {0};
                yaml_node_t *rate = map_get(c, e, "rate"), *kmin = map_get(c, e, "kmin"),
                            *kmax = map_get(c, e, "kmax"), *pmax = map_get(c, e, "pmax");
                if (!kmin || !kmax || !pmax)
                    return yerr(c, e, "switch.red entries need kmin, kmax and pmax");
                double pm;
                if ((rate && get_rate(c, rate, "red.rate", &r.rate_bps)) ||
                    get_size(c, kmin, "red.kmin", &r.kmin_bytes) ||
                    get_size(c, kmax, "red.kmax", &r.kmax_bytes) ||
                    get_double(c, pmax, "red.pmax", 0, 1, &pm))
                    return FE_EPARSE;
                if (r.kmax_bytes < r.kmin_bytes) return yerr(c, e, "red: kmax < kmin");
                r.pmax_ppm = (uint32_t)(pm * 1e6 + 0.5);
                c->sc->sw.red[n++] = r;
            }
            c->sc->sw.n_red = n;
            continue;
        }
        const struct setting *s = find_setting(section, k);
        if (!s) return yerr(c, kn, "unknown key '%s' in %s", k, section);
        char val[64] = "";
        if (s->type == V_PRIOS && vn->type == YAML_SEQUENCE_NODE) {
            /* lossless: [3, 4] */
            size_t o = 0;
            for (yaml_node_item_t *it = vn->data.sequence.items.start;
                 it < vn->data.sequence.items.top; it++) {
                const char *v = scalar(node(c, *it));
                if (!v || strlen(v) != 1 || o + 3 > sizeof(val))
                    return yerr(c, vn, "%s.%s: priorities 0..7", section, k);
                o += (size_t)snprintf(val + o, sizeof(val) - o, "%s%s", o ? "," : "", v);
            }
        } else {
            const char *v = scalar(vn);
            if (!v) return yerr(c, vn, "%s.%s must be a single value", section, k);
            snprintf(val, sizeof(val), "%s", v);
        }
        char msg[200];
        if (apply_setting(c->sc, s, val, msg, sizeof(msg))) return yerr(c, vn, "%s", msg);
    }
    return 0;
}

/* cc: {algo, params} where params is "a=b,c=d" or a mapping */
static int parse_cc(struct yctx *c, yaml_node_t *m, int index, const char *label)
{
    static const char *const keys[] = {"algo", "params", NULL};
    const char *algo = scalar(m);
    yaml_node_t *params = NULL;
    if (!algo) {
        if (check_keys(c, m, "cc", keys)) return FE_EPARSE;
        yaml_node_t *a = map_get(c, m, "algo");
        if (!a || !(algo = scalar(a))) return yerr(c, m, "cc needs an algo");
        params = map_get(c, m, "params");
    }
    char plist[1024] = "";
    if (params) {
        const char *s = scalar(params);
        if (s) {
            snprintf(plist, sizeof(plist), "%s", s);
        } else if (params->type == YAML_MAPPING_NODE) {
            size_t o = 0;
            for (yaml_node_pair_t *p = params->data.mapping.pairs.start;
                 p < params->data.mapping.pairs.top; p++) {
                const char *k = scalar(node(c, p->key)), *v = scalar(node(c, p->value));
                if (!k || !v) return yerr(c, params, "cc params: name: value pairs");
                int w = snprintf(plist + o, sizeof(plist) - o, "%s%s=%s", o ? "," : "", k, v);
                if (w < 0 || (size_t)w >= sizeof(plist) - o)
                    return yerr(c, params, "cc params too long");
                o += (size_t)w;
            }
        } else {
            return yerr(c, params, "cc params: a mapping or \"name=value,...\"");
        }
    }
    char e[300] = "";
    int rc = fe_sim_scenario_set_cc(c->sc, index, !strcmp(algo, "none") ? NULL : algo, plist, e,
                                    sizeof(e));
    if (rc < 0) return yerr(c, m, "%s", e);
    if (label) snprintf(c->sc->cc[rc].label, sizeof(c->sc->cc[rc].label), "%s", label);
    return rc;
}

static int add_node_checked(struct yctx *c, yaml_node_t *at, const char *name, bool is_switch)
{
    if (!*name || strlen(name) >= FE_SIM_NAME_LEN)
        return yerr(c, at, "node name '%s' must be 1..%d characters", name, FE_SIM_NAME_LEN - 1);
    if (fe_sim_scenario_find_node(c->sc, name) >= 0)
        return yerr(c, at, "node '%s' defined twice", name);
    int id = fe_sim_scenario_add_node(c->sc, name, is_switch);
    if (id < 0) return yerr(c, at, "too many nodes");
    return 0;
}

static int link_nodes(struct yctx *c, yaml_node_t *at, int a, int b, uint64_t rate, uint64_t delay,
                      double loss)
{
    if (a == b) return yerr(c, at, "a link needs two different nodes");
    if (fe_sim_scenario_add_link(c->sc, (uint32_t)a, (uint32_t)b, rate, delay, loss) < 0)
        return yerr(c, at, "invalid link");
    return 0;
}

/* topology: {kind: star, hosts: N} | {kind: leaf-spine, leaves, spines, hosts_per_leaf} */
static int parse_topology(struct yctx *c, yaml_node_t *m)
{
    static const char *const keys[] = {"kind",           "hosts",       "leaves", "spines",
                                       "hosts_per_leaf", "uplink_rate", NULL};
    if (check_keys(c, m, "topology", keys)) return FE_EPARSE;
    yaml_node_t *kn = map_get(c, m, "kind");
    const char *kind = scalar(kn);
    if (!kind) return yerr(c, m, "topology needs a kind (star, leaf-spine)");
    char name[FE_SIM_NAME_LEN];
    if (!strcmp(kind, "star")) {
        uint64_t n;
        yaml_node_t *hn = map_get(c, m, "hosts");
        if (!hn) return yerr(c, m, "star needs hosts: N");
        if (get_uint(c, hn, "hosts", 65536, &n)) return FE_EPARSE;
        if (n < 2) return yerr(c, hn, "star needs at least 2 hosts");
        int sw = fe_sim_scenario_add_node(c->sc, "sw", true);
        for (uint64_t i = 0; i < n; i++) {
            snprintf(name, sizeof(name), "h%llu", (unsigned long long)i);
            int h = fe_sim_scenario_add_node(c->sc, name, false);
            if (h < 0 || sw < 0) return yerr(c, m, "too many nodes");
            if (link_nodes(c, m, h, sw, c->link_rate, c->link_delay, c->link_loss))
                return FE_EPARSE;
        }
        return 0;
    }
    if (!strcmp(kind, "leaf-spine")) {
        uint64_t leaves, spines, hpl, up = c->link_rate;
        yaml_node_t *l = map_get(c, m, "leaves"), *s = map_get(c, m, "spines"),
                    *h = map_get(c, m, "hosts_per_leaf"), *u = map_get(c, m, "uplink_rate");
        if (!l || !s || !h) return yerr(c, m, "leaf-spine needs leaves, spines, hosts_per_leaf");
        if (get_uint(c, l, "leaves", 4096, &leaves) || get_uint(c, s, "spines", 4096, &spines) ||
            get_uint(c, h, "hosts_per_leaf", 4096, &hpl) ||
            (u && get_rate(c, u, "uplink_rate", &up)))
            return FE_EPARSE;
        if (!leaves || !spines || !hpl) return yerr(c, m, "leaf-spine counts must be > 0");
        if (leaves * hpl > 65536) return yerr(c, m, "at most 65536 hosts");
        uint32_t base_leaf = c->sc->n_nodes;
        for (uint64_t i = 0; i < leaves; i++) {
            snprintf(name, sizeof(name), "leaf%llu", (unsigned long long)i);
            if (fe_sim_scenario_add_node(c->sc, name, true) < 0)
                return yerr(c, m, "too many nodes");
        }
        uint32_t base_spine = c->sc->n_nodes;
        for (uint64_t i = 0; i < spines; i++) {
            snprintf(name, sizeof(name), "spine%llu", (unsigned long long)i);
            if (fe_sim_scenario_add_node(c->sc, name, true) < 0)
                return yerr(c, m, "too many nodes");
        }
        for (uint64_t i = 0; i < leaves; i++)
            for (uint64_t j = 0; j < spines; j++)
                if (link_nodes(c, m, (int)(base_leaf + i), (int)(base_spine + j), up, c->link_delay,
                               c->link_loss))
                    return FE_EPARSE;
        for (uint64_t i = 0; i < leaves * hpl; i++) {
            snprintf(name, sizeof(name), "h%llu", (unsigned long long)i);
            int hid = fe_sim_scenario_add_node(c->sc, name, false);
            if (hid < 0) return yerr(c, m, "too many nodes");
            if (link_nodes(c, m, hid, (int)(base_leaf + i / hpl), c->link_rate, c->link_delay,
                           c->link_loss))
                return FE_EPARSE;
        }
        return 0;
    }
    return yerr(c, kn, "unknown topology kind '%s' (star, leaf-spine)", kind);
}

static int node_ref(struct yctx *c, yaml_node_t *n, const char *what, int *out)
{
    const char *name = scalar(n);
    if (!name) return yerr(c, n, "%s must be a node name", what);
    *out = fe_sim_scenario_find_node(c->sc, name);
    if (*out < 0) return yerr(c, n, "%s: no node named '%s'", what, name);
    return 0;
}

static int parse_links(struct yctx *c, yaml_node_t *seq)
{
    if (seq->type != YAML_SEQUENCE_NODE) return yerr(c, seq, "links must be a list");
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *e = node(c, *it);
        int a = -1,
            b = -1; /* set by node_ref on success; initialised for -O3 -Wmaybe-uninitialized */
        uint64_t rate = c->link_rate, delay = c->link_delay;
        double loss = c->link_loss;
        if (e->type == YAML_SEQUENCE_NODE) {
            /* [a, b] */
            if (e->data.sequence.items.top - e->data.sequence.items.start != 2)
                return yerr(c, e, "a link as a list is [node, node]");
            if (node_ref(c, node(c, e->data.sequence.items.start[0]), "link", &a) ||
                node_ref(c, node(c, e->data.sequence.items.start[1]), "link", &b))
                return FE_EPARSE;
        } else {
            static const char *const keys[] = {"a", "b", "rate", "delay", "loss", NULL};
            if (check_keys(c, e, "a link", keys)) return FE_EPARSE;
            yaml_node_t *an = map_get(c, e, "a"), *bn = map_get(c, e, "b");
            if (!an || !bn) return yerr(c, e, "a link needs a and b");
            if (node_ref(c, an, "link.a", &a) || node_ref(c, bn, "link.b", &b)) return FE_EPARSE;
            yaml_node_t *r = map_get(c, e, "rate"), *d = map_get(c, e, "delay"),
                        *l = map_get(c, e, "loss");
            if ((r && get_rate(c, r, "link.rate", &rate)) ||
                (d && get_time(c, d, "link.delay", &delay)) ||
                (l && get_double(c, l, "link.loss", 0, 1, &loss)))
                return FE_EPARSE;
        }
        if (link_nodes(c, e, a, b, rate, delay, loss)) return FE_EPARSE;
    }
    return 0;
}

static int cc_index(struct yctx *c, yaml_node_t *n, uint8_t *out)
{
    const char *label = scalar(n);
    if (!label) return yerr(c, n, "flow.cc must be a profile name");
    for (uint32_t i = 0; i < c->sc->n_cc; i++) {
        if (!strcmp(c->sc->cc[i].label, label) || (i == 0 && !strcmp(label, "default"))) {
            *out = (uint8_t)i;
            return 0;
        }
    }
    return yerr(c, n, "no congestion-control profile named '%s' (see profiles:)", label);
}

/* Every host, or the hosts named in a list. */
static int host_list(struct yctx *c, yaml_node_t *n, uint32_t **out, uint32_t *count)
{
    *count = 0;
    *out = malloc((c->sc->n_nodes ? c->sc->n_nodes : 1) * sizeof(uint32_t));
    if (!*out) return yerr(c, n, "out of memory");
    const char *s = scalar(n);
    if (s && !strcmp(s, "all")) {
        for (uint32_t i = 0; i < c->sc->n_nodes; i++)
            if (!c->sc->nodes[i].is_switch) (*out)[(*count)++] = i;
        return 0;
    }
    if (n->type != YAML_SEQUENCE_NODE) return yerr(c, n, "a list of hosts or 'all'");
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        int id = -1;
        if (node_ref(c, node(c, *it), "host", &id)) return FE_EPARSE;
        if (*count >= c->sc->n_nodes) return yerr(c, n, "too many hosts listed");
        (*out)[(*count)++] = (uint32_t)id;
    }
    return 0;
}

static int add_flow_checked(struct yctx *c, yaml_node_t *at, struct fe_sim_flow *f)
{
    if (c->sc->nodes[f->src].is_switch || c->sc->nodes[f->dst].is_switch)
        return yerr(c, at, "flows run between hosts, not switches");
    if (f->src == f->dst) return yerr(c, at, "a flow needs two different hosts");
    if (c->sc->n_flows >= 10000000) return yerr(c, at, "too many flows");
    if (fe_sim_scenario_add_flow(c->sc, f) < 0) return yerr(c, at, "invalid flow");
    return 0;
}

static int parse_flows(struct yctx *c, yaml_node_t *seq)
{
    if (seq->type != YAML_SEQUENCE_NODE) return yerr(c, seq, "flows must be a list");
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *e = node(c, *it);
        if (c->visits > MAX_VISITS) return yerr(c, e, "scenario too large");
        static const char *const keys[] = {"src", "dst",   "size",    "start", "msg",   "prio",
                                           "cc",  "sport", "pattern", "srcs",  "hosts", NULL};
        if (check_keys(c, e, "a flow", keys)) return FE_EPARSE;
        struct fe_sim_flow f = {.prio = 0xff};
        yaml_node_t *sz = map_get(c, e, "size"), *st = map_get(c, e, "start"),
                    *msg = map_get(c, e, "msg"), *pr = map_get(c, e, "prio"),
                    *cc = map_get(c, e, "cc"), *sp = map_get(c, e, "sport"),
                    *pat = map_get(c, e, "pattern");
        if (!sz) return yerr(c, e, "a flow needs a size");
        uint64_t u;
        if (get_size(c, sz, "flow.size", &f.bytes)) return FE_EPARSE;
        if (!f.bytes) return yerr(c, sz, "flow.size must be > 0");
        if (st && get_time(c, st, "flow.start", &f.start_ns)) return FE_EPARSE;
        if (msg) {
            if (get_size(c, msg, "flow.msg", &u)) return FE_EPARSE;
            if (!u || u > FE_MAX_MSG_BYTES) return yerr(c, msg, "flow.msg must be 1 B .. 2 GiB");
            f.msg_bytes = (uint32_t)u;
        }
        if (pr) {
            if (get_uint(c, pr, "flow.prio", 7, &u)) return FE_EPARSE;
            f.prio = (uint8_t)u;
        }
        if (cc && cc_index(c, cc, &f.cc)) return FE_EPARSE;
        if (sp) {
            if (get_uint(c, sp, "flow.sport", 65535, &u)) return FE_EPARSE;
            f.sport = (uint16_t)u;
        }
        const char *pattern = pat ? scalar(pat) : NULL;
        if (pat && !pattern) return yerr(c, pat, "flow.pattern must be a name");
        if (!pattern) {
            yaml_node_t *s = map_get(c, e, "src"), *d = map_get(c, e, "dst");
            if (!s || !d) return yerr(c, e, "a flow needs src and dst (or a pattern)");
            int a = -1,
                b = -1; /* set by node_ref on success; initialised for -O3 -Wmaybe-uninitialized */
            if (node_ref(c, s, "flow.src", &a) || node_ref(c, d, "flow.dst", &b)) return FE_EPARSE;
            f.src = (uint32_t)a;
            f.dst = (uint32_t)b;
            if (add_flow_checked(c, e, &f)) return FE_EPARSE;
        } else if (!strcmp(pattern, "incast")) {
            /* srcs (a list or all) -> dst */
            yaml_node_t *d = map_get(c, e, "dst"), *s = map_get(c, e, "srcs");
            if (!d) return yerr(c, e, "an incast needs dst");
            int b = -1;
            if (node_ref(c, d, "flow.dst", &b)) return FE_EPARSE;
            uint32_t *hosts, n;
            yaml_node_t all = {.type = YAML_SCALAR_NODE};
            all.data.scalar.value = (yaml_char_t *)"all";
            int rc = host_list(c, s ? s : &all, &hosts, &n); /* no srcs: every other host */
            if (rc) {
                free(hosts);
                return FE_EPARSE;
            }
            for (uint32_t i = 0; i < n; i++) {
                if ((int)hosts[i] == b) continue;
                f.src = hosts[i];
                f.dst = (uint32_t)b;
                if (add_flow_checked(c, e, &f)) {
                    free(hosts);
                    return FE_EPARSE;
                }
            }
            free(hosts);
        } else if (!strcmp(pattern, "all-to-all")) {
            yaml_node_t *h = map_get(c, e, "hosts");
            uint32_t *hosts, n;
            int rc;
            if (h) {
                rc = host_list(c, h, &hosts, &n);
            } else {
                yaml_node_t all = {.type = YAML_SCALAR_NODE};
                all.data.scalar.value = (yaml_char_t *)"all";
                rc = host_list(c, &all, &hosts, &n);
            }
            if (rc) {
                free(hosts);
                return FE_EPARSE;
            }
            if ((uint64_t)n * n > 10000000) {
                free(hosts);
                return yerr(c, e, "all-to-all over %u hosts: too many flows", n);
            }
            for (uint32_t i = 0; i < n; i++)
                for (uint32_t j = 0; j < n; j++) {
                    if (i == j) continue;
                    f.src = hosts[i];
                    f.dst = hosts[j];
                    if (add_flow_checked(c, e, &f)) {
                        free(hosts);
                        return FE_EPARSE;
                    }
                }
            free(hosts);
        } else {
            return yerr(c, pat, "unknown flow pattern '%s' (incast, all-to-all)", pattern);
        }
    }
    return 0;
}

static int parse_root(struct yctx *c, yaml_node_t *root)
{
    static const char *const keys[] = {"name",     "seed",  "stop",  "window",   "link",
                                       "switch",   "host",  "cc",    "profiles", "ns3_compat",
                                       "topology", "nodes", "hosts", "switches", "links",
                                       "flows",    NULL};
    if (!root) return yerr(c, NULL, "empty scenario");
    if (check_keys(c, root, "the scenario", keys)) return FE_EPARSE;
    struct fe_sim_scenario *sc = c->sc;
    yaml_node_t *n;
    if ((n = map_get(c, root, "name"))) {
        const char *v;
        if (want_scalar(c, n, "name", &v)) return FE_EPARSE;
        size_t len = strlen(v);
        if (len >= sizeof(sc->name))
            return yerr(c, n, "name: %zu characters, at most %zu", len, sizeof(sc->name) - 1);
        memcpy(sc->name, v, len + 1);
    }
    if ((n = map_get(c, root, "seed")) && get_uint(c, n, "seed", UINT64_MAX, &sc->seed))
        return FE_EPARSE;
    if ((n = map_get(c, root, "stop")) && get_time(c, n, "stop", &sc->stop_ns)) return FE_EPARSE;
    if ((n = map_get(c, root, "window"))) {
        static const char *const wk[] = {"start", "end", NULL};
        if (check_keys(c, n, "window", wk)) return FE_EPARSE;
        yaml_node_t *a = map_get(c, n, "start"), *b = map_get(c, n, "end");
        if ((a && get_time(c, a, "window.start", &sc->window_start_ns)) ||
            (b && get_time(c, b, "window.end", &sc->window_end_ns)))
            return FE_EPARSE;
        if (a && b && sc->window_end_ns <= sc->window_start_ns)
            return yerr(c, n, "window.end must be after window.start");
    }
    if ((n = map_get(c, root, "link"))) {
        static const char *const lk[] = {"rate", "delay", "loss", NULL};
        if (check_keys(c, n, "link", lk)) return FE_EPARSE;
        yaml_node_t *r = map_get(c, n, "rate"), *d = map_get(c, n, "delay"),
                    *l = map_get(c, n, "loss");
        if ((r && get_rate(c, r, "link.rate", &c->link_rate)) ||
            (d && get_time(c, d, "link.delay", &c->link_delay)) ||
            (l && get_double(c, l, "link.loss", 0, 1, &c->link_loss)))
            return FE_EPARSE;
        if (c->link_delay > FE_SIM_MAX_TIME / 4) return yerr(c, d, "link.delay too large");
    }
    if ((n = map_get(c, root, "switch")) && parse_section(c, n, "switch")) return FE_EPARSE;
    if ((n = map_get(c, root, "host")) && parse_section(c, n, "host")) return FE_EPARSE;
    if ((n = map_get(c, root, "cc")) && parse_cc(c, n, 0, NULL) < 0) return FE_EPARSE;
    if ((n = map_get(c, root, "profiles"))) {
        if (n->type != YAML_MAPPING_NODE) return yerr(c, n, "profiles must be a mapping");
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            const char *label = scalar(node(c, p->key));
            if (!label || strlen(label) >= FE_SIM_NAME_LEN)
                return yerr(c, n, "profile names: 1..%d characters", FE_SIM_NAME_LEN - 1);
            if (parse_cc(c, node(c, p->value), -1, label) < 0) return FE_EPARSE;
        }
    }
    bool ns3 = false;
    if ((n = map_get(c, root, "ns3_compat"))) {
        const char *v;
        if (want_scalar(c, n, "ns3_compat", &v)) return FE_EPARSE;
        if (sim_parse_bool(v, &ns3)) return yerr(c, n, "ns3_compat: true or false");
    }
    /* nodes */
    if ((n = map_get(c, root, "topology")) && parse_topology(c, n)) return FE_EPARSE;
    static const char *const lists[] = {"switches", "hosts"};
    for (int k = 0; k < 2; k++) {
        if (!(n = map_get(c, root, lists[k]))) continue;
        if (n->type != YAML_SEQUENCE_NODE)
            return yerr(c, n, "%s must be a list of names", lists[k]);
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            yaml_node_t *e = node(c, *it);
            const char *name = scalar(e);
            if (!name) return yerr(c, e, "%s: names", lists[k]);
            if (add_node_checked(c, e, name, k == 0)) return FE_EPARSE;
        }
    }
    if ((n = map_get(c, root, "nodes"))) {
        if (n->type != YAML_SEQUENCE_NODE) return yerr(c, n, "nodes must be a list");
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            yaml_node_t *e = node(c, *it);
            static const char *const nk[] = {"name", "type", NULL};
            if (check_keys(c, e, "a node", nk)) return FE_EPARSE;
            const char *name = scalar(map_get(c, e, "name")), *type = scalar(map_get(c, e, "type"));
            if (!name || !type) return yerr(c, e, "a node needs name and type");
            if (strcmp(type, "host") && strcmp(type, "switch"))
                return yerr(c, e, "node type must be host or switch");
            if (add_node_checked(c, e, name, !strcmp(type, "switch"))) return FE_EPARSE;
        }
    }
    if ((n = map_get(c, root, "links")) && parse_links(c, n)) return FE_EPARSE;
    if ((n = map_get(c, root, "flows")) && parse_flows(c, n)) return FE_EPARSE;
    if (!sc->n_nodes) return yerr(c, root, "no nodes (topology:, nodes:, hosts:/switches:)");
    if (ns3) fe_sim_scenario_ns3_compat(sc);
    return 0;
}

int fe_sim_scenario_parse_yaml(const char *text, size_t len, const char *name,
                               struct fe_sim_scenario *sc, char *err, size_t err_cap)
{
    fe_sim_scenario_init(sc);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        sim_errf(err, err_cap, "%s: out of memory", name);
        return FE_ENOMEM;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        sim_errf(err, err_cap, "%s:%lu: %s", name, (unsigned long)parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "YAML syntax error");
        yaml_parser_delete(&parser);
        return FE_EPARSE;
    }
    struct yctx c = {.doc = &doc,
                     .file = name,
                     .sc = sc,
                     .err = err,
                     .err_cap = err_cap,
                     .link_rate = 10000000000ull,
                     .link_delay = 1000,
                     .link_loss = 0};
    int rc = parse_root(&c, yaml_document_get_root_node(&doc));
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc) fe_sim_scenario_free(sc);
    return rc;
}

int fe_sim_scenario_load_yaml(const char *path, struct fe_sim_scenario *sc, char *err,
                              size_t err_cap)
{
    size_t len;
    char *text = sim_read_file(path, &len, err, err_cap);
    if (!text) return FE_EIO;
    int rc = fe_sim_scenario_parse_yaml(text, len, path, sc, err, err_cap);
    free(text);
    return rc;
}
