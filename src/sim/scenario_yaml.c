/* The native scenario file: YAML (libyaml), documented in docs/sim.md. Every value error names
 * its place as "file:line: what". The same keys serve `feroce sim --set section.key=value`. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"

/* alias expansion bound (a file of aliases can grow exponentially) */
#define MAX_VISITS 20000000u

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
    bool ns3_compat; /* ns3_compat: true, applied after the flows */
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
    V_FRAMES,
    V_U64,
    V_SIZE32,    /* a size into a uint32_t */
    V_EBPOLICY,  /* round-robin | availability */
    V_EBTRIGGER, /* periodic | poisson */
    V_EBDIST,    /* fixed | uniform | exponential | normal */
    V_EBBUILDER, /* an index into eb.builders, or none */
    V_EBCC       /* a congestion-control profile by name (needs the scenario's profiles) */
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
#define EB(f) offsetof(struct fe_sim_scenario, eb.f)
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
    /* event building (eb.frontends and eb.builders, host lists, are read apart) */
    {"eb", "policy", V_EBPOLICY, EB(policy), 0, 0, "round-robin | availability"},
    {"eb", "trigger", V_EBTRIGGER, EB(trigger), 0, 0, "periodic | poisson"},
    {"eb", "rate_hz", V_DOUBLE, EB(rate_hz), 1e-3, 1e9, "triggers per second"},
    {"eb", "events", V_U64, EB(events), 1, 1e7, "triggers in all"},
    {"eb", "start", V_TIME, EB(start_ns), 0, 1e13, "first trigger"},
    {"eb", "frag_dist", V_EBDIST, EB(dist), 0, 0, "fixed | uniform | exponential | normal"},
    {"eb", "frag_bytes", V_SIZE32, EB(frag_bytes), 1, 16777216, "fixed size, or the mean"},
    {"eb", "frag_min_bytes", V_SIZE32, EB(frag_min_bytes), 1, 16777216, "uniform: lowest"},
    {"eb", "frag_max_bytes", V_SIZE32, EB(frag_max_bytes), 1, 16777216, "room per source"},
    {"eb", "frag_sd_bytes", V_SIZE32, EB(frag_sd_bytes), 0, 16777216, "normal: deviation"},
    {"eb", "slots", V_U32, EB(slots), 2, 4096, "event slots per builder"},
    {"eb", "timeout", V_TIME, EB(timeout_ns), 1, 1e12, "first fragment to incomplete"},
    {"eb", "consumer_rate", V_RATE, EB(consumer_bps), 0, 0, "each builder's consumer"},
    {"eb", "fe_queue", V_U32, EB(fe_queue), 1, 4096, "send WRs per front-end/builder QP"},
    {"eb", "tokens", V_U32, EB(tokens), 0, 65535, "senders per builder at once; 0 = any"},
    {"eb", "rnr_timer", V_U8, EB(rnr_timer), 0, 31, "IB RNR timer code of builders"},
    {"eb", "cc", V_EBCC, EB(cc), 0, 0, "CC profile of the pairs, by name"},
    {"eb", "ctrl_delay", V_TIME, EB(ctrl_delay_ns), 0, 1e12, "control plane, one way"},
    {"eb", "ctrl_interval", V_TIME, EB(ctrl_interval_ns), 1, 1e12, "announce/progress period"},
    {"eb", "lead_events", V_U64, EB(lead_events), 1, 1000000, "tables ahead of front-ends"},
    {"eb", "reserve_slots", V_U32, EB(reserve_slots), 0, 4095, "kept free per builder"},
    {"eb", "run_events", V_U32, EB(run_events), 1, 65535, "events per run at most"},
    {"eb", "builder_timeout", V_TIME, EB(builder_timeout_ns), 0, 1e13, "silent: no events"},
    {"eb", "slow_builder", V_EBBUILDER, EB(slow_builder), 0, 0, "index in builders, or none"},
    {"eb", "slow_at", V_TIME, EB(slow_at_ns), 0, 1e13, "when it slows down"},
    {"eb", "slow_rate", V_RATE, EB(slow_bps), 0, 0, "its consumer's rate from then on"},
    {"eb", "leave_builder", V_EBBUILDER, EB(leave_builder), 0, 0, "index in builders, or none"},
    {"eb", "leave_at", V_TIME, EB(leave_at_ns), 0, 1e13, "when it leaves"},
};

/* Each parses a value of its type for setting s into dst; FE_ERANGE out of s's range. */
static int set_size(const struct setting *s, const char *value, char *dst)
{
    uint64_t u = 0;
    int rc = 0;
    if (s->type == V_SIZE_AUTO && !strcmp(value, "auto")) {
        u = !strcmp(s->key, "headroom") ? 0 : FE_SIM_AUTO;
    } else {
        rc = sim_parse_size(value, &u);
        if (!rc && (double)u > s->max) rc = FE_ERANGE;
        if (!rc && (double)u < s->min) rc = FE_ERANGE;
    }
    if (!rc) memcpy(dst, &u, sizeof(u));
    return rc;
}

static int set_rate(const struct setting *s, const char *value, char *dst)
{
    (void)s;
    uint64_t u = 0;
    int rc = 0;
    if (strcmp(value, "0") && strcmp(value, "off")) rc = sim_parse_rate(value, &u);
    if (!rc) memcpy(dst, &u, sizeof(u));
    return rc;
}

static int set_time(const struct setting *s, const char *value, char *dst)
{
    uint64_t u = 0;
    int rc = sim_parse_time(value, &u);
    if (!rc && ((double)u > s->max || (double)u < s->min)) rc = FE_ERANGE;
    if (!rc) memcpy(dst, &u, sizeof(u));
    return rc;
}

static int set_bool(const struct setting *s, const char *value, char *dst)
{
    (void)s;
    bool b = false;
    int rc = sim_parse_bool(value, &b);
    if (!rc) memcpy(dst, &b, sizeof(b));
    return rc;
}

static int set_double(const struct setting *s, const char *value, char *dst)
{
    double d = 0;
    int rc = sim_parse_double(value, &d);
    if (!rc && !(d >= s->min && d <= s->max)) rc = FE_ERANGE;
    if (!rc) memcpy(dst, &d, sizeof(d));
    return rc;
}

/* V_U8, V_U16, V_U32, V_U64 */
static int set_uint(const struct setting *s, const char *value, char *dst)
{
    uint64_t u = 0;
    int rc = sim_parse_uint(value, (uint64_t)s->max, &u);
    if (!rc && (double)u < s->min) rc = FE_ERANGE;
    if (rc) return rc;
    if (s->type == V_U64) {
        memcpy(dst, &u, 8);
    } else if (s->type == V_U8) {
        uint8_t v = (uint8_t)u;
        memcpy(dst, &v, 1);
    } else if (s->type == V_U16) {
        uint16_t v = (uint16_t)u;
        memcpy(dst, &v, 2);
    } else {
        uint32_t v = (uint32_t)u;
        memcpy(dst, &v, 4);
    }
    return 0;
}

/* "3" or "3,4" */
static int set_prios(const struct setting *s, const char *value, char *dst)
{
    (void)s;
    uint8_t mask = 0;
    for (const char *p = value; *p; p += p[1] ? 2 : 1) {
        if (*p < '0' || *p > '7' || (p[1] && p[1] != ',')) return FE_EINVAL;
        mask |= (uint8_t)(1u << (*p - '0'));
    }
    memcpy(dst, &mask, 1);
    return 0;
}

static int set_pfc_mode(const struct setting *s, const char *value, char *dst)
{
    (void)s;
    enum fe_sim_pfc_mode m;
    if (!strcmp(value, "quanta"))
        m = FE_SIM_PFC_QUANTA;
    else if (!strcmp(value, "xoff-xon"))
        m = FE_SIM_PFC_XOFF_XON;
    else
        return FE_EINVAL;
    memcpy(dst, &m, sizeof(m));
    return 0;
}

static int set_frames(const struct setting *s, const char *value, char *dst)
{
    (void)s;
    enum fe_sim_frames m;
    if (!strcmp(value, "roce"))
        m = FE_SIM_FRAMES_ROCE;
    else if (!strcmp(value, "hpcc-ns3"))
        m = FE_SIM_FRAMES_HPCC_NS3;
    else
        return FE_EINVAL;
    memcpy(dst, &m, sizeof(m));
    return 0;
}

static int set_size32(const struct setting *s, const char *value, char *dst)
{
    uint64_t u = 0;
    int rc = sim_parse_size(value, &u);
    if (!rc && ((double)u > s->max || (double)u < s->min)) rc = FE_ERANGE;
    if (rc) return rc;
    uint32_t v = (uint32_t)u;
    memcpy(dst, &v, sizeof(v));
    return 0;
}

_Static_assert(sizeof(enum fe_sim_eb_policy) == sizeof(int) &&
                   sizeof(enum fe_sim_eb_trigger) == sizeof(int) &&
                   sizeof(enum fe_sim_eb_dist) == sizeof(int),
               "set_name writes an int");

/* One of names[] (NULL-terminated) into an enum. */
static int set_name(const char *value, const char *const *names, char *dst)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(value, names[i])) {
            memcpy(dst, &i, sizeof(i)); /* the eb enums are ints */
            return 0;
        }
    return FE_EINVAL;
}

static int set_eb_policy(const struct setting *s, const char *value, char *dst)
{
    (void)s;
    static const char *const names[] = {"round-robin", "availability", NULL};
    return set_name(value, names, dst);
}

static int set_eb_trigger(const struct setting *s, const char *value, char *dst)
{
    (void)s;
    static const char *const names[] = {"periodic", "poisson", NULL};
    return set_name(value, names, dst);
}

static int set_eb_dist(const struct setting *s, const char *value, char *dst)
{
    (void)s;
    static const char *const names[] = {"fixed", "uniform", "exponential", "normal", NULL};
    return set_name(value, names, dst);
}

static int set_eb_builder(const struct setting *s, const char *value, char *dst)
{
    (void)s;
    uint64_t u = FE_SIM_EB_NONE;
    if (strcmp(value, "none") && sim_parse_uint(value, FE_SIM_EB_MAX_HOSTS - 1, &u))
        return FE_EINVAL;
    uint32_t v = (uint32_t)u;
    memcpy(dst, &v, sizeof(v));
    return 0;
}

/* The index of the congestion-control profile named label, as flows name theirs (profile 0
 * also answers to "default"); -1 when there is none. */
static int cc_profile(const struct fe_sim_scenario *sc, const char *label)
{
    for (uint32_t i = 0; i < sc->n_cc; i++)
        if (!strcmp(sc->cc[i].label, label) || (i == 0 && !strcmp(label, "default"))) return (int)i;
    return -1;
}

/* eb.cc: a profile name, resolved now (a later relabelling, as by ns3_compat, keeps it) */
static int set_eb_cc(struct fe_sim_scenario *sc, const char *value, char *msg, size_t cap)
{
    int i = cc_profile(sc, value);
    if (i < 0) {
        snprintf(msg, cap, "eb.cc: no congestion-control profile named '%s' (see profiles:)",
                 value);
        return FE_EINVAL;
    }
    sc->eb.cc = (uint8_t)i;
    return 0;
}

/* per value type: its parser, and what a value must be (V_EBCC: set_eb_cc) */
static const struct vtype_ops {
    int (*set)(const struct setting *s, const char *value, char *dst);
    const char *what;
} vtypes[] = {
    [V_SIZE] = {set_size, "a size (e.g. 4MB, 512KiB)"},
    [V_SIZE_AUTO] = {set_size, "a size or auto"},
    [V_RATE] = {set_rate, "a rate (e.g. 10Gbps)"},
    [V_TIME] = {set_time, "a time (e.g. 2us)"},
    [V_BOOL] = {set_bool, "true or false"},
    [V_DOUBLE] = {set_double, "a number"},
    [V_U8] = {set_uint, "an integer"},
    [V_U16] = {set_uint, "an integer"},
    [V_U32] = {set_uint, "an integer"},
    [V_PRIOS] = {set_prios, "priorities 0..7 (e.g. 3 or 3,4)"},
    [V_PFCMODE] = {set_pfc_mode, "quanta or xoff-xon"},
    [V_FRAMES] = {set_frames, "roce or hpcc-ns3"},
    [V_U64] = {set_uint, "an integer"},
    [V_SIZE32] = {set_size32, "a size (e.g. 8KiB)"},
    [V_EBPOLICY] = {set_eb_policy, "round-robin or availability"},
    [V_EBTRIGGER] = {set_eb_trigger, "periodic or poisson"},
    [V_EBDIST] = {set_eb_dist, "fixed, uniform, exponential or normal"},
    [V_EBBUILDER] = {set_eb_builder, "a builder index or none"},
};

/* Parses `value` for setting s into the scenario; a message in msg on error. */
static int apply_setting(struct fe_sim_scenario *sc, const struct setting *s, const char *value,
                         char *msg, size_t cap)
{
    if (s->type == V_EBCC) return set_eb_cc(sc, value, msg, cap);
    int rc = vtypes[s->type].set(s, value, (char *)sc + s->off);
    if (rc == FE_ERANGE)
        snprintf(msg, cap, "%s.%s: '%s' out of range [%g, %g]", s->section, s->key, value, s->min,
                 s->max);
    else if (rc)
        snprintf(msg, cap, "%s.%s: '%s' is not %s", s->section, s->key, value,
                 vtypes[s->type].what);
    return rc;
}

static const struct setting *find_setting(const char *section, const char *key)
{
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
        if (!strcmp(settings[i].section, section) && !strcmp(settings[i].key, key))
            return &settings[i];
    return NULL;
}

/* what the --set helpers return besides 0 and FE_ codes: a value that does not parse */
#define SET_BAD 1

/* seed, stop, name */
static int set_top_key(struct fe_sim_scenario *sc, const char *key, const char *value, char *err,
                       size_t err_cap)
{
    uint64_t u;
    if (!strcmp(key, "seed")) {
        if (sim_parse_uint(value, UINT64_MAX, &u)) return SET_BAD;
        sc->seed = u;
        return 0;
    }
    if (!strcmp(key, "stop")) {
        if (sim_parse_time(value, &u)) return SET_BAD;
        sc->stop_ns = u;
        return 0;
    }
    if (!strcmp(key, "name")) {
        snprintf(sc->name, sizeof(sc->name), "%s", value);
        return 0;
    }
    sim_errf(err, err_cap, "unknown key '%s'", key);
    return FE_ENOENT;
}

/* link.KEY on every link (none: any key is accepted) */
static int set_link_key(struct fe_sim_scenario *sc, const char *key, const char *value, char *err,
                        size_t err_cap)
{
    uint64_t u;
    double d;
    for (uint32_t i = 0; i < sc->n_links; i++) {
        if (!strcmp(key, "rate")) {
            if (sim_parse_rate(value, &u)) return SET_BAD;
            sc->links[i].rate_bps = u;
        } else if (!strcmp(key, "delay")) {
            if (sim_parse_time(value, &u) || u > FE_SIM_MAX_TIME / 4) return SET_BAD;
            sc->links[i].delay_ns = u;
        } else if (!strcmp(key, "loss")) {
            if (sim_parse_double(value, &d) || !(d >= 0 && d <= 1)) return SET_BAD;
            sc->links[i].loss = d;
        } else {
            sim_errf(err, err_cap, "unknown key 'link.%s' (rate, delay, loss)", key);
            return FE_ENOENT;
        }
    }
    return 0;
}

/* flow.KEY on every flow (none: any key is accepted) */
static int set_flow_key(struct fe_sim_scenario *sc, const char *key, const char *value, char *err,
                        size_t err_cap)
{
    uint64_t u;
    for (uint32_t i = 0; i < sc->n_flows; i++) {
        if (!strcmp(key, "size") || !strcmp(key, "bytes")) {
            if (sim_parse_size(value, &u) || !u) return SET_BAD;
            sc->flows[i].bytes = u;
        } else if (!strcmp(key, "msg")) {
            if (sim_parse_size(value, &u) || u > FE_MAX_MSG_BYTES) return SET_BAD;
            sc->flows[i].msg_bytes = (uint32_t)u;
        } else if (!strcmp(key, "start")) {
            if (sim_parse_time(value, &u)) return SET_BAD;
            sc->flows[i].start_ns = u;
        } else {
            sim_errf(err, err_cap, "unknown key 'flow.%s' (size, msg, start)", key);
            return FE_ENOENT;
        }
    }
    return 0;
}

/* eb.frontends / eb.builders: the host list's slot in the scenario */
static uint32_t *eb_hosts(struct fe_sim_scenario *sc, const char *key, uint32_t **n)
{
    bool fe = !strcmp(key, "frontends");
    if (!fe && strcmp(key, "builders")) return NULL;
    *n = fe ? &sc->eb.n_frontends : &sc->eb.n_builders;
    return fe ? sc->eb.frontends : sc->eb.builders;
}

/* eb.frontends=fe0,fe1,... (host names) */
static int set_eb_hosts(struct fe_sim_scenario *sc, uint32_t *list, uint32_t *n, const char *value,
                        char *err, size_t err_cap)
{
    uint32_t k = 0;
    for (const char *p = value; *p;) {
        size_t len = strcspn(p, ",");
        char name[FE_SIM_NAME_LEN];
        if (!len || len >= sizeof(name) || k >= FE_SIM_EB_MAX_HOSTS) return SET_BAD;
        memcpy(name, p, len);
        name[len] = 0;
        int id = fe_sim_scenario_find_node(sc, name);
        if (id < 0 || sc->nodes[id].is_switch) {
            sim_errf(err, err_cap, "eb: no host named '%s'", name);
            return FE_EINVAL;
        }
        list[k++] = (uint32_t)id;
        p += len + (p[len] == ',');
    }
    *n = k;
    return 0;
}

/* SECTION.KEY=value */
static int set_section_key(struct fe_sim_scenario *sc, const char *section, const char *key,
                           const char *value, char *err, size_t err_cap)
{
    if (!strcmp(section, "link")) return set_link_key(sc, key, value, err, err_cap);
    if (!strcmp(section, "flow")) return set_flow_key(sc, key, value, err, err_cap);
    uint32_t *n_hosts, *hosts = !strcmp(section, "eb") ? eb_hosts(sc, key, &n_hosts) : NULL;
    if (hosts) return set_eb_hosts(sc, hosts, n_hosts, value, err, err_cap);
    const struct setting *s = find_setting(section, key);
    if (!s) {
        sim_errf(err, err_cap, "unknown key '%s.%s'", section, key);
        return FE_ENOENT;
    }
    return apply_setting(sc, s, value, err, err_cap) ? FE_EINVAL : 0;
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
    int rc;
    if (dot) {
        *dot = 0;
        rc = set_section_key(sc, buf, dot + 1, value, err, err_cap);
    } else {
        rc = set_top_key(sc, buf, value, err, err_cap);
    }
    if (rc != SET_BAD) return rc;
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

/* one switch.red entry */
static int read_red(struct yctx *c, yaml_node_t *e, struct fe_sim_red *r)
{
    yaml_node_t *rate = map_get(c, e, "rate"), *kmin = map_get(c, e, "kmin"),
                *kmax = map_get(c, e, "kmax"), *pmax = map_get(c, e, "pmax");
    if (!kmin || !kmax || !pmax) return yerr(c, e, "switch.red entries need kmin, kmax and pmax");
    double pm;
    if ((rate && get_rate(c, rate, "red.rate", &r->rate_bps)) ||
        get_size(c, kmin, "red.kmin", &r->kmin_bytes) ||
        get_size(c, kmax, "red.kmax", &r->kmax_bytes) || get_double(c, pmax, "red.pmax", 0, 1, &pm))
        return FE_EPARSE;
    if (r->kmax_bytes < r->kmin_bytes) return yerr(c, e, "red: kmax < kmin");
    r->pmax_ppm = (uint32_t)(pm * 1e6 + 0.5);
    return 0;
}

static int parse_switch_red(struct yctx *c, yaml_node_t *vn)
{
    if (vn->type != YAML_SEQUENCE_NODE) return yerr(c, vn, "switch.red must be a list");
    int n = 0;
    for (yaml_node_item_t *it = vn->data.sequence.items.start; it < vn->data.sequence.items.top;
         it++) {
        yaml_node_t *e = node(c, *it);
        static const char *const keys[] = {"rate", "kmin", "kmax", "pmax", NULL};
        if (check_keys(c, e, "a switch.red entry", keys)) return FE_EPARSE;
        if (n >= FE_SIM_MAX_RED) return yerr(c, e, "at most %d switch.red entries", FE_SIM_MAX_RED);
        struct fe_sim_red r = {0};
        if (read_red(c, e, &r)) return FE_EPARSE;
        c->sc->sw.red[n++] = r;
    }
    c->sc->sw.n_red = n;
    return 0;
}

/* a setting's value as --set would give it: lossless: [3, 4] as "3,4" */
static int setting_value(struct yctx *c, yaml_node_t *vn, const struct setting *s, char *val,
                         size_t cap)
{
    if (s->type == V_PRIOS && vn->type == YAML_SEQUENCE_NODE) {
        size_t o = 0;
        for (yaml_node_item_t *it = vn->data.sequence.items.start; it < vn->data.sequence.items.top;
             it++) {
            const char *v = scalar(node(c, *it));
            if (!v || strlen(v) != 1 || o + 3 > cap)
                return yerr(c, vn, "%s.%s: priorities 0..7", s->section, s->key);
            o += (size_t)snprintf(val + o, cap - o, "%s%s", o ? "," : "", v);
        }
        return 0;
    }
    const char *v = scalar(vn);
    if (!v) return yerr(c, vn, "%s.%s must be a single value", s->section, s->key);
    snprintf(val, cap, "%s", v);
    return 0;
}

static int host_list(struct yctx *c, yaml_node_t *n, uint32_t **out, uint32_t *count);

/* eb.frontends / eb.builders: a list of hosts */
static int read_eb_hosts(struct yctx *c, yaml_node_t *vn, uint32_t *list, uint32_t *n)
{
    uint32_t *ids, count;
    int rc = host_list(c, vn, &ids, &count);
    if (!rc && count > FE_SIM_EB_MAX_HOSTS)
        rc = yerr(c, vn, "eb: at most %u hosts", FE_SIM_EB_MAX_HOSTS);
    if (!rc) {
        memcpy(list, ids, count * sizeof(uint32_t));
        *n = count;
    }
    free(ids);
    return rc;
}

/* switch: / host: / eb: sections, by the settings table (plus switch.red, eb's host lists) */
static int parse_section(struct yctx *c, yaml_node_t *m, const char *section)
{
    if (m->type != YAML_MAPPING_NODE) return yerr(c, m, "%s must be a mapping", section);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = node(c, p->key), *vn = node(c, p->value);
        const char *k = scalar(kn);
        if (!k) return yerr(c, kn, "%s: keys must be plain names", section);
        if (!strcmp(section, "switch") && !strcmp(k, "red")) {
            if (parse_switch_red(c, vn)) return FE_EPARSE;
            continue;
        }
        uint32_t *n_hosts, *hosts = !strcmp(section, "eb") ? eb_hosts(c->sc, k, &n_hosts) : NULL;
        if (hosts) {
            if (read_eb_hosts(c, vn, hosts, n_hosts)) return FE_EPARSE;
            continue;
        }
        const struct setting *s = find_setting(section, k);
        if (!s) return yerr(c, kn, "unknown key '%s' in %s", k, section);
        char val[64] = "", msg[200];
        if (setting_value(c, vn, s, val, sizeof(val))) return FE_EPARSE;
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

/* topology: {kind: star, hosts: N}: hosts h0.. around one switch "sw" */
static int build_star(struct yctx *c, yaml_node_t *m)
{
    uint64_t n;
    yaml_node_t *hn = map_get(c, m, "hosts");
    if (!hn) return yerr(c, m, "star needs hosts: N");
    if (get_uint(c, hn, "hosts", 65536, &n)) return FE_EPARSE;
    if (n < 2) return yerr(c, hn, "star needs at least 2 hosts");
    int sw = fe_sim_scenario_add_node(c->sc, "sw", true);
    for (uint64_t i = 0; i < n; i++) {
        char name[FE_SIM_NAME_LEN];
        snprintf(name, sizeof(name), "h%llu", (unsigned long long)i);
        int h = fe_sim_scenario_add_node(c->sc, name, false);
        if (h < 0 || sw < 0) return yerr(c, m, "too many nodes");
        if (link_nodes(c, m, h, sw, c->link_rate, c->link_delay, c->link_loss)) return FE_EPARSE;
    }
    return 0;
}

/* switches prefix0.. */
static int add_switches(struct yctx *c, yaml_node_t *m, const char *prefix, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        char name[FE_SIM_NAME_LEN];
        snprintf(name, sizeof(name), "%s%llu", prefix, (unsigned long long)i);
        if (fe_sim_scenario_add_node(c->sc, name, true) < 0) return yerr(c, m, "too many nodes");
    }
    return 0;
}

struct leaf_spine {
    uint64_t leaves, spines, hpl, uplink_bps;
};

static int read_leaf_spine(struct yctx *c, yaml_node_t *m, struct leaf_spine *ls)
{
    yaml_node_t *l = map_get(c, m, "leaves"), *s = map_get(c, m, "spines"),
                *h = map_get(c, m, "hosts_per_leaf"), *u = map_get(c, m, "uplink_rate");
    ls->uplink_bps = c->link_rate;
    if (!l || !s || !h) return yerr(c, m, "leaf-spine needs leaves, spines, hosts_per_leaf");
    if (get_uint(c, l, "leaves", 4096, &ls->leaves) ||
        get_uint(c, s, "spines", 4096, &ls->spines) ||
        get_uint(c, h, "hosts_per_leaf", 4096, &ls->hpl) ||
        (u && get_rate(c, u, "uplink_rate", &ls->uplink_bps)))
        return FE_EPARSE;
    if (!ls->leaves || !ls->spines || !ls->hpl) return yerr(c, m, "leaf-spine counts must be > 0");
    if (ls->leaves * ls->hpl > 65536) return yerr(c, m, "at most 65536 hosts");
    return 0;
}

/* topology: {kind: leaf-spine, leaves, spines, hosts_per_leaf}: every leaf linked to every
 * spine, hosts h0.. hosts_per_leaf per leaf */
static int build_leaf_spine(struct yctx *c, yaml_node_t *m)
{
    struct leaf_spine ls;
    if (read_leaf_spine(c, m, &ls)) return FE_EPARSE;
    uint32_t base_leaf = c->sc->n_nodes;
    if (add_switches(c, m, "leaf", ls.leaves)) return FE_EPARSE;
    uint32_t base_spine = c->sc->n_nodes;
    if (add_switches(c, m, "spine", ls.spines)) return FE_EPARSE;
    for (uint64_t i = 0; i < ls.leaves; i++)
        for (uint64_t j = 0; j < ls.spines; j++)
            if (link_nodes(c, m, (int)(base_leaf + i), (int)(base_spine + j), ls.uplink_bps,
                           c->link_delay, c->link_loss))
                return FE_EPARSE;
    for (uint64_t i = 0; i < ls.leaves * ls.hpl; i++) {
        char name[FE_SIM_NAME_LEN];
        snprintf(name, sizeof(name), "h%llu", (unsigned long long)i);
        int hid = fe_sim_scenario_add_node(c->sc, name, false);
        if (hid < 0) return yerr(c, m, "too many nodes");
        if (link_nodes(c, m, hid, (int)(base_leaf + i / ls.hpl), c->link_rate, c->link_delay,
                       c->link_loss))
            return FE_EPARSE;
    }
    return 0;
}

/* topology: {kind: star, ...} | {kind: leaf-spine, ...} */
static int parse_topology(struct yctx *c, yaml_node_t *m)
{
    static const char *const keys[] = {"kind",           "hosts",       "leaves", "spines",
                                       "hosts_per_leaf", "uplink_rate", NULL};
    if (check_keys(c, m, "topology", keys)) return FE_EPARSE;
    yaml_node_t *kn = map_get(c, m, "kind");
    const char *kind = scalar(kn);
    if (!kind) return yerr(c, m, "topology needs a kind (star, leaf-spine)");
    if (!strcmp(kind, "star")) return build_star(c, m);
    if (!strcmp(kind, "leaf-spine")) return build_leaf_spine(c, m);
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
        int a = -1, b = -1; /* set by node_ref on success; for -Wmaybe-uninitialized */
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
    int i = cc_profile(c->sc, label);
    if (i < 0) return yerr(c, n, "no congestion-control profile named '%s' (see profiles:)", label);
    *out = (uint8_t)i;
    return 0;
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

/* hosts named in n, or every host when n is NULL */
static int hosts_or_all(struct yctx *c, yaml_node_t *n, uint32_t **out, uint32_t *count)
{
    yaml_node_t all = {.type = YAML_SCALAR_NODE};
    all.data.scalar.value = (yaml_char_t *)"all";
    return host_list(c, n ? n : &all, out, count);
}

/* src -> dst */
static int add_pair_flow(struct yctx *c, yaml_node_t *e, struct fe_sim_flow *f)
{
    yaml_node_t *s = map_get(c, e, "src"), *d = map_get(c, e, "dst");
    if (!s || !d) return yerr(c, e, "a flow needs src and dst (or a pattern)");
    int a = -1, b = -1; /* set by node_ref on success; for -Wmaybe-uninitialized */
    if (node_ref(c, s, "flow.src", &a) || node_ref(c, d, "flow.dst", &b)) return FE_EPARSE;
    f->src = (uint32_t)a;
    f->dst = (uint32_t)b;
    return add_flow_checked(c, e, f);
}

/* srcs (a list or all; none: every other host) -> dst */
static int add_incast(struct yctx *c, yaml_node_t *e, struct fe_sim_flow *f)
{
    yaml_node_t *d = map_get(c, e, "dst"), *s = map_get(c, e, "srcs");
    if (!d) return yerr(c, e, "an incast needs dst");
    int b = -1;
    if (node_ref(c, d, "flow.dst", &b)) return FE_EPARSE;
    uint32_t *hosts, n;
    int rc = hosts_or_all(c, s, &hosts, &n);
    for (uint32_t i = 0; !rc && i < n; i++) {
        if ((int)hosts[i] == b) continue;
        f->src = hosts[i];
        f->dst = (uint32_t)b;
        rc = add_flow_checked(c, e, f);
    }
    free(hosts);
    return rc;
}

/* a flow between every two hosts (a list or all; none: all) */
static int add_all_to_all(struct yctx *c, yaml_node_t *e, struct fe_sim_flow *f)
{
    uint32_t *hosts, n;
    int rc = hosts_or_all(c, map_get(c, e, "hosts"), &hosts, &n);
    if (!rc && (uint64_t)n * n > 10000000)
        rc = yerr(c, e, "all-to-all over %u hosts: too many flows", n);
    for (uint32_t i = 0; !rc && i < n; i++)
        for (uint32_t j = 0; !rc && j < n; j++) {
            if (i == j) continue;
            f->src = hosts[i];
            f->dst = hosts[j];
            rc = add_flow_checked(c, e, f);
        }
    free(hosts);
    return rc;
}

/* a flow's fields other than its ends */
static int read_flow_fields(struct yctx *c, yaml_node_t *e, struct fe_sim_flow *f)
{
    yaml_node_t *sz = map_get(c, e, "size"), *st = map_get(c, e, "start"),
                *msg = map_get(c, e, "msg"), *pr = map_get(c, e, "prio"), *cc = map_get(c, e, "cc"),
                *sp = map_get(c, e, "sport");
    if (!sz) return yerr(c, e, "a flow needs a size");
    uint64_t u;
    if (get_size(c, sz, "flow.size", &f->bytes)) return FE_EPARSE;
    if (!f->bytes) return yerr(c, sz, "flow.size must be > 0");
    if (st && get_time(c, st, "flow.start", &f->start_ns)) return FE_EPARSE;
    if (msg) {
        if (get_size(c, msg, "flow.msg", &u)) return FE_EPARSE;
        if (!u || u > FE_MAX_MSG_BYTES) return yerr(c, msg, "flow.msg must be 1 B .. 2 GiB");
        f->msg_bytes = (uint32_t)u;
    }
    if (pr) {
        if (get_uint(c, pr, "flow.prio", 7, &u)) return FE_EPARSE;
        f->prio = (uint8_t)u;
    }
    if (cc && cc_index(c, cc, &f->cc)) return FE_EPARSE;
    if (sp) {
        if (get_uint(c, sp, "flow.sport", 65535, &u)) return FE_EPARSE;
        f->sport = (uint16_t)u;
    }
    return 0;
}

/* one flows: entry, a flow or a pattern of them */
static int parse_flow(struct yctx *c, yaml_node_t *e)
{
    static const char *const keys[] = {"src", "dst",   "size",    "start", "msg",   "prio",
                                       "cc",  "sport", "pattern", "srcs",  "hosts", NULL};
    if (check_keys(c, e, "a flow", keys)) return FE_EPARSE;
    struct fe_sim_flow f = {.prio = 0xff};
    if (read_flow_fields(c, e, &f)) return FE_EPARSE;
    yaml_node_t *pat = map_get(c, e, "pattern");
    const char *pattern = pat ? scalar(pat) : NULL;
    if (pat && !pattern) return yerr(c, pat, "flow.pattern must be a name");
    if (!pattern) return add_pair_flow(c, e, &f);
    if (!strcmp(pattern, "incast")) return add_incast(c, e, &f);
    if (!strcmp(pattern, "all-to-all")) return add_all_to_all(c, e, &f);
    return yerr(c, pat, "unknown flow pattern '%s' (incast, all-to-all)", pattern);
}

static int parse_flows(struct yctx *c, yaml_node_t *seq)
{
    if (seq->type != YAML_SEQUENCE_NODE) return yerr(c, seq, "flows must be a list");
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *e = node(c, *it);
        if (c->visits > MAX_VISITS) return yerr(c, e, "scenario too large");
        if (parse_flow(c, e)) return FE_EPARSE;
    }
    return 0;
}

static int read_name(struct yctx *c, yaml_node_t *n)
{
    const char *v;
    if (want_scalar(c, n, "name", &v)) return FE_EPARSE;
    size_t len = strlen(v);
    if (len >= sizeof(c->sc->name))
        return yerr(c, n, "name: %zu characters, at most %zu", len, sizeof(c->sc->name) - 1);
    memcpy(c->sc->name, v, len + 1);
    return 0;
}

static int read_seed(struct yctx *c, yaml_node_t *n)
{
    return get_uint(c, n, "seed", UINT64_MAX, &c->sc->seed);
}

static int read_stop(struct yctx *c, yaml_node_t *n)
{
    return get_time(c, n, "stop", &c->sc->stop_ns);
}

static int read_window(struct yctx *c, yaml_node_t *n)
{
    static const char *const wk[] = {"start", "end", NULL};
    struct fe_sim_scenario *sc = c->sc;
    if (check_keys(c, n, "window", wk)) return FE_EPARSE;
    yaml_node_t *a = map_get(c, n, "start"), *b = map_get(c, n, "end");
    if ((a && get_time(c, a, "window.start", &sc->window_start_ns)) ||
        (b && get_time(c, b, "window.end", &sc->window_end_ns)))
        return FE_EPARSE;
    if (a && b && sc->window_end_ns <= sc->window_start_ns)
        return yerr(c, n, "window.end must be after window.start");
    return 0;
}

/* link: the defaults of the links that follow */
static int read_link_defaults(struct yctx *c, yaml_node_t *n)
{
    static const char *const lk[] = {"rate", "delay", "loss", NULL};
    if (check_keys(c, n, "link", lk)) return FE_EPARSE;
    yaml_node_t *r = map_get(c, n, "rate"), *d = map_get(c, n, "delay"), *l = map_get(c, n, "loss");
    if ((r && get_rate(c, r, "link.rate", &c->link_rate)) ||
        (d && get_time(c, d, "link.delay", &c->link_delay)) ||
        (l && get_double(c, l, "link.loss", 0, 1, &c->link_loss)))
        return FE_EPARSE;
    if (c->link_delay > FE_SIM_MAX_TIME / 4) return yerr(c, d, "link.delay too large");
    return 0;
}

static int read_switch(struct yctx *c, yaml_node_t *n)
{
    return parse_section(c, n, "switch");
}

static int read_host(struct yctx *c, yaml_node_t *n)
{
    return parse_section(c, n, "host");
}

static int read_default_cc(struct yctx *c, yaml_node_t *n)
{
    return parse_cc(c, n, 0, NULL) < 0 ? FE_EPARSE : 0;
}

static int read_profiles(struct yctx *c, yaml_node_t *n)
{
    if (n->type != YAML_MAPPING_NODE) return yerr(c, n, "profiles must be a mapping");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const char *label = scalar(node(c, p->key));
        if (!label || strlen(label) >= FE_SIM_NAME_LEN)
            return yerr(c, n, "profile names: 1..%d characters", FE_SIM_NAME_LEN - 1);
        if (parse_cc(c, node(c, p->value), -1, label) < 0) return FE_EPARSE;
    }
    return 0;
}

static int read_ns3_compat(struct yctx *c, yaml_node_t *n)
{
    const char *v;
    if (want_scalar(c, n, "ns3_compat", &v)) return FE_EPARSE;
    if (sim_parse_bool(v, &c->ns3_compat)) return yerr(c, n, "ns3_compat: true or false");
    return 0;
}

/* switches: / hosts: lists of names */
static int read_names(struct yctx *c, yaml_node_t *n, const char *list, bool is_switch)
{
    if (n->type != YAML_SEQUENCE_NODE) return yerr(c, n, "%s must be a list of names", list);
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        yaml_node_t *e = node(c, *it);
        const char *name = scalar(e);
        if (!name) return yerr(c, e, "%s: names", list);
        if (add_node_checked(c, e, name, is_switch)) return FE_EPARSE;
    }
    return 0;
}

static int read_switches(struct yctx *c, yaml_node_t *n)
{
    return read_names(c, n, "switches", true);
}

static int read_hosts(struct yctx *c, yaml_node_t *n)
{
    return read_names(c, n, "hosts", false);
}

/* nodes: [{name, type: host | switch}] */
static int read_nodes(struct yctx *c, yaml_node_t *n)
{
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
    return 0;
}

/* eb: after the nodes, whose names it uses */
static int read_eb(struct yctx *c, yaml_node_t *n)
{
    return parse_section(c, n, "eb");
}

/* The scenario's top-level keys in the order they are read: the settings first, then the
 * nodes, the links between them and the flows on them. */
static const struct root_key {
    const char *key;
    int (*read)(struct yctx *c, yaml_node_t *n);
} root_keys[] = {
    {"name", read_name},
    {"seed", read_seed},
    {"stop", read_stop},
    {"window", read_window},
    {"link", read_link_defaults},
    {"switch", read_switch},
    {"host", read_host},
    {"cc", read_default_cc},
    {"profiles", read_profiles},
    {"ns3_compat", read_ns3_compat},
    {"topology", parse_topology},
    {"switches", read_switches},
    {"hosts", read_hosts},
    {"nodes", read_nodes},
    {"links", parse_links},
    {"flows", parse_flows},
    {"eb", read_eb},
};

static int parse_root(struct yctx *c, yaml_node_t *root)
{
    static const char *const keys[] = {"name",     "seed",  "stop",  "window",   "link",
                                       "switch",   "host",  "cc",    "profiles", "ns3_compat",
                                       "topology", "nodes", "hosts", "switches", "links",
                                       "flows",    "eb",    NULL};
    if (!root) return yerr(c, NULL, "empty scenario");
    if (check_keys(c, root, "the scenario", keys)) return FE_EPARSE;
    for (size_t i = 0; i < sizeof(root_keys) / sizeof(root_keys[0]); i++) {
        yaml_node_t *n = map_get(c, root, root_keys[i].key);
        if (n && root_keys[i].read(c, n)) return FE_EPARSE;
    }
    if (!c->sc->n_nodes) return yerr(c, root, "no nodes (topology:, nodes:, hosts:/switches:)");
    if (c->ns3_compat) fe_sim_scenario_ns3_compat(c->sc);
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
