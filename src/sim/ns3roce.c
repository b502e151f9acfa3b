/* The ns3-roce simulator's JSON scenarios (Eren121/ns3-roce): a config (default_attributes,
 * topology_file, flows_file, simulator_stop_time, ack_high_prio, rng_seed, ecn, modules), a
 * topology (nodes, links, groups) and flows. The ns-3 attributes are translated into the keys of
 * HPCC's config.txt and handed to the HPCC reader (ns3.c), so one mapping serves both formats;
 * what HPCC's config cannot say (PFC on/off, buffer size, pause time) is set here.
 *
 * Facts from ns3-roce's sources: node ids are positions in `nodes` (ns-3 numbers nodes as it
 * creates them; the `id` field is not used); bandwidth is bit/s and latency seconds; RdmaHw's
 * RPTimer, AlphaResumInterval and RateDecreaseInterval are microseconds; Time attributes given
 * as numbers are seconds; ECN thresholds are multiplied by 1000 (KB) and each switch port takes
 * the entry with the largest bandwidth strictly below its rate; simulator_stop_time 0 runs until
 * the foreground flows finish; ack_high_prio puts ACKs in the highest-priority queue. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/err.h"
#include "sim/sim_internal.h"

#ifndef FE_HAVE_JSONC

bool fe_sim_ns3roce_available(void)
{
    return false;
}

static int no_json(char *err, size_t err_cap)
{
    sim_errf(err, err_cap,
             "this feroce was built without JSON support (libjson-c-dev missing at configure "
             "time, or FEROCE_JSON=OFF): ns3-roce files cannot be read");
    return FE_ENOTSUP;
}

int fe_sim_ns3roce_load(const char *config_path, const struct fe_sim_ns3roce_opts *o,
                        struct fe_sim_scenario *sc, struct fe_sim_ns3roce_info *info, char *err,
                        size_t err_cap)
{
    (void)config_path;
    (void)o;
    fe_sim_scenario_init(sc);
    memset(info, 0, sizeof(*info));
    return no_json(err, err_cap);
}

int fe_sim_ns3roce_parse(const char *config, size_t config_len, const char *config_name,
                         const char *topology, size_t topology_len, const char *topology_name,
                         const char *flows, size_t flows_len, const char *flows_name,
                         const struct fe_sim_ns3roce_opts *o, struct fe_sim_scenario *sc,
                         struct fe_sim_ns3roce_info *info, char *err, size_t err_cap)
{
    (void)config, (void)config_len, (void)config_name, (void)topology, (void)topology_len;
    (void)topology_name, (void)flows, (void)flows_len, (void)flows_name, (void)o;
    fe_sim_scenario_init(sc);
    memset(info, 0, sizeof(*info));
    return no_json(err, err_cap);
}

void fe_sim_ns3roce_info_free(struct fe_sim_ns3roce_info *info)
{
    free(info->background);
    info->background = NULL;
}

#else

#include <json-c/json.h>

/* Where a message points: the file and the JSON path. */
struct jctx {
    const char *file;
    char *err;
    size_t err_cap;
};

__attribute__((format(printf, 3, 4))) static int jerr(const struct jctx *c, const char *path,
                                                      const char *fmt, ...)
{
    char m[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof(m), fmt, ap);
    va_end(ap);
    sim_errf(c->err, c->err_cap, "%s: %s: %s", c->file, path, m);
    return FE_EPARSE;
}

static json_object *parse_json(const char *text, size_t len, const char *name, char *err,
                               size_t err_cap)
{
    if (len > (size_t)1 << 28) {
        sim_errf(err, err_cap, "%s: larger than 256 MiB", name);
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok) {
        sim_errf(err, err_cap, "out of memory");
        return NULL;
    }
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!o || e != json_tokener_success) {
        /* line of the failure, for the user */
        unsigned line = 1;
        for (size_t i = 0; i < end && i < len; i++) line += text[i] == '\n';
        sim_errf(err, err_cap, "%s:%u: invalid JSON: %s", name, line,
                 e == json_tokener_continue ? "unexpected end of file"
                                            : json_tokener_error_desc(e));
        json_object_put(o);
        return NULL;
    }
    for (size_t i = end; i < len; i++) {
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r') {
            sim_errf(err, err_cap, "%s: invalid JSON: text after the top-level value", name);
            json_object_put(o);
            return NULL;
        }
    }
    if (!json_object_is_type(o, json_type_object)) {
        sim_errf(err, err_cap, "%s: the top-level value must be an object", name);
        json_object_put(o);
        return NULL;
    }
    return o;
}

/* Field `key` of obj as a number (absent: *out unchanged, returns 0). */
static int get_num(const struct jctx *c, json_object *obj, const char *path, const char *key,
                   double lo, double hi, double *out)
{
    json_object *v;
    if (!json_object_object_get_ex(obj, key, &v)) return 0;
    char p[160];
    snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", key);
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
        return jerr(c, p, "not a number");
    double d = json_object_get_double(v);
    if (!isfinite(d) || d < lo || d > hi) return jerr(c, p, "%g not in [%g, %g]", d, lo, hi);
    *out = d;
    return 0;
}

static int get_bool(const struct jctx *c, json_object *obj, const char *path, const char *key,
                    bool *out)
{
    json_object *v;
    if (!json_object_object_get_ex(obj, key, &v)) return 0;
    char p[160];
    snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", key);
    if (!json_object_is_type(v, json_type_boolean))
        return jerr(c, p, "not a boolean (true or false)");
    *out = json_object_get_boolean(v);
    return 0;
}

/* An integer field: a JSON number without a fraction (1e6 is fine). */
static int get_uint(const struct jctx *c, json_object *obj, const char *path, const char *key,
                    double hi, uint64_t *out)
{
    double d = -1;
    int rc = get_num(c, obj, path, key, 0, hi, &d);
    if (rc || d < 0) return rc;
    if (d != floor(d)) {
        char p[160];
        snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", key);
        return jerr(c, p, "%g is not an integer", d);
    }
    *out = (uint64_t)d;
    return 0;
}

/* ns-3 DataRate: a string ("50Mb/s", "10Gbps"; B = bytes) or a number of bit/s. */
static int ns3_rate_value(json_object *v, uint64_t *out)
{
    if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) {
        double d = json_object_get_double(v);
        if (!isfinite(d) || d < 1 || d > 1e15) return FE_ERANGE;
        *out = (uint64_t)(d + 0.5);
        return 0;
    }
    if (!json_object_is_type(v, json_type_string)) return FE_EINVAL;
    char s[64];
    const char *t = json_object_get_string(v);
    if (strlen(t) >= sizeof(s)) return FE_EINVAL;
    strcpy(s, t);
    /* ns-3 reads "MB/s" and "MBps" as bytes per second; feroce's parser as bits */
    char *b = strstr(s, "B/s");
    if (!b) b = strstr(s, "Bps");
    uint64_t r;
    if (b) *b = 'b';
    if (sim_parse_rate(s, &r)) return FE_EINVAL;
    if (b) {
        if (r > UINT64_MAX / 8) return FE_ERANGE;
        r *= 8;
    }
    *out = r;
    return 0;
}

/* ns-3 Time: a number of seconds or a string with a unit ("500us"). */
static int ns3_time_value(json_object *v, double *out_s)
{
    if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) {
        double d = json_object_get_double(v);
        if (!isfinite(d) || d < 0 || d * 1e9 > (double)FE_SIM_MAX_TIME) return FE_ERANGE;
        *out_s = d;
        return 0;
    }
    uint64_t ns;
    if (!json_object_is_type(v, json_type_string) || sim_parse_time(json_object_get_string(v), &ns))
        return FE_EINVAL;
    *out_s = (double)ns / 1e9;
    return 0;
}

/* ---- default_attributes ---- */
enum atype { T_UINT, T_NUM, T_BOOL, T_RATE, T_TIME, T_SIZE };
enum {
    A_CCMODE,
    A_MTU,
    A_MINRATE,
    A_EWMA,
    A_FIRSTCNP,
    A_CLAMP,
    A_RPTIMER,
    A_DECINT,
    A_FRT,
    A_ALPHAINT,
    A_AI,
    A_HAI,
    A_ACKINT,
    A_QBB,
    A_PAUSE,
    A_DYNTH,
    A_ECN,
    A_SWCC,
    A_BUFFER,
    A_MAX
};
static const struct attr {
    const char *name;
    enum atype type;
    double def;       /* ns3-roce's default when absent */
    const char *hpcc; /* HPCC config.txt key it becomes, or NULL (set here) */
} attr_tab[A_MAX] = {
    [A_CCMODE] = {"ns3::RdmaHw::CcMode", T_UINT, 1, "CC_MODE"},
    [A_MTU] = {"ns3::RdmaHw::Mtu", T_UINT, 1000, "PACKET_PAYLOAD_SIZE"},
    [A_MINRATE] = {"ns3::RdmaHw::MinRate", T_RATE, 100e6, "MIN_RATE"},
    [A_EWMA] = {"ns3::RdmaHw::EwmaGain", T_NUM, 1.0 / 16, "EWMA_GAIN"},
    [A_FIRSTCNP] = {"ns3::RdmaHw::RateOnFirstCnp", T_NUM, 1.0, NULL},
    [A_CLAMP] = {"ns3::RdmaHw::ClampTargetRate", T_BOOL, 0, "CLAMP_TARGET_RATE"},
    [A_RPTIMER] = {"ns3::RdmaHw::RPTimer", T_NUM, 1500, "RP_TIMER"},
    [A_DECINT] = {"ns3::RdmaHw::RateDecreaseInterval", T_NUM, 4, "RATE_DECREASE_INTERVAL"},
    [A_FRT] = {"ns3::RdmaHw::FastRecoveryTimes", T_UINT, 5, "FAST_RECOVERY_TIMES"},
    [A_ALPHAINT] = {"ns3::RdmaHw::AlphaResumInterval", T_NUM, 55, "ALPHA_RESUME_INTERVAL"},
    [A_AI] = {"ns3::RdmaHw::RateAI", T_RATE, 5e6, "RATE_AI"},
    [A_HAI] = {"ns3::RdmaHw::RateHAI", T_RATE, 50e6, "RATE_HAI"},
    [A_ACKINT] = {"ns3::RdmaHw::L2AckInterval", T_UINT, 0, NULL},
    [A_QBB] = {"ns3::QbbNetDevice::QbbEnabled", T_BOOL, 0, NULL},
    [A_PAUSE] = {"ns3::QbbNetDevice::PauseTime", T_TIME, 5e-6, NULL},
    [A_DYNTH] = {"ns3::QbbNetDevice::DynamicThreshold", T_BOOL, 0, NULL},
    [A_ECN] = {"ns3::SwitchNode::EcnEnabled", T_BOOL, 0, "ENABLE_QCN"},
    [A_SWCC] = {"ns3::SwitchNode::CcMode", T_UINT, 0, NULL},
    [A_BUFFER] = {"ns3::SwitchMmu::BufferSize", T_SIZE, 12 * 1048576.0, NULL},
};

struct ecn_entry {
    double bw_bps, kmin_kb, kmax_kb, pmax;
};

struct roce_cfg {
    double v[A_MAX];
    char topology[512], flows[512];
    double stop_s;
    bool ack_high_prio;
    uint64_t seed;
    int n_ecn;
    struct ecn_entry ecn[FE_SIM_MAX_RED * 4];
    char ignored[1024]; /* attribute names, for one note */
    char modules[512];  /* enabled modules (outputs feroce does not write) */
};

static void append_name(char *list, size_t cap, const char *name)
{
    size_t n = strlen(list);
    if (n + strlen(name) + 3 >= cap) return;
    snprintf(list + n, cap - n, "%s%s", n ? ", " : "", name);
}

static int parse_attr(const struct jctx *c, const struct attr *a, json_object *v, double *out)
{
    char path[160];
    snprintf(path, sizeof(path), "default_attributes.%s", a->name);
    switch (a->type) {
    case T_BOOL:
        if (!json_object_is_type(v, json_type_boolean))
            return jerr(c, path, "not a boolean (true or false)");
        *out = json_object_get_boolean(v) ? 1 : 0;
        return 0;
    case T_UINT:
    case T_NUM: {
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
            return jerr(c, path, "not a number");
        double d = json_object_get_double(v);
        if (!isfinite(d) || d < 0 || d > 1e9) return jerr(c, path, "%g not in [0, 1e9]", d);
        if (a->type == T_UINT && d != floor(d)) return jerr(c, path, "%g is not an integer", d);
        *out = d;
        return 0;
    }
    case T_RATE: {
        uint64_t r;
        if (ns3_rate_value(v, &r))
            return jerr(c, path, "not a rate (a string such as \"50Mb/s\" or bit/s)");
        *out = (double)r;
        return 0;
    }
    case T_TIME:
        if (ns3_time_value(v, out))
            return jerr(c, path, "not a time (seconds, or a string such as \"5us\")");
        return 0;
    case T_SIZE: {
        uint64_t b;
        if (json_object_is_type(v, json_type_string)) {
            if (sim_parse_size(json_object_get_string(v), &b) || b < 1 || b > (1ull << 40))
                return jerr(c, path, "not a size (a string such as \"12MiB\")");
        } else if (json_object_is_type(v, json_type_double) ||
                   json_object_is_type(v, json_type_int)) {
            double d = json_object_get_double(v);
            if (!isfinite(d) || d < 1 || d > (double)(1ull << 40))
                return jerr(c, path, "%g bytes is not a buffer size", d);
            b = (uint64_t)d;
        } else {
            return jerr(c, path, "not a size (a string such as \"12MiB\")");
        }
        *out = (double)b;
        return 0;
    }
    }
    return FE_EINVAL;
}

static int read_default_attributes(const struct jctx *c, json_object *root, struct roce_cfg *cfg)
{
    json_object *v;
    if (!json_object_object_get_ex(root, "default_attributes", &v)) return 0;
    if (!json_object_is_type(v, json_type_object))
        return jerr(c, "default_attributes", "not an object");
    json_object_object_foreach(v, key, val)
    {
        int k;
        for (k = 0; k < A_MAX; k++)
            if (!strcmp(key, attr_tab[k].name)) break;
        if (k == A_MAX) {
            append_name(cfg->ignored, sizeof(cfg->ignored), key);
            continue;
        }
        /* (SwitchNode::CcMode turns INT on for HPCC in ns-3; feroce stamps INT for HPCC
         * flows by itself: read, not used) */
        int rc = parse_attr(c, &attr_tab[k], val, &cfg->v[k]);
        if (rc) return rc;
    }
    return 0;
}

static int read_file_names(const struct jctx *c, json_object *root, struct roce_cfg *cfg)
{
    const char *files[2] = {"topology_file", "flows_file"};
    char *dst[2] = {cfg->topology, cfg->flows};
    for (int i = 0; i < 2; i++) {
        json_object *v;
        if (!json_object_object_get_ex(root, files[i], &v)) return jerr(c, files[i], "missing");
        if (!json_object_is_type(v, json_type_string) || !json_object_get_string_len(v) ||
            (size_t)json_object_get_string_len(v) >= sizeof(cfg->topology))
            return jerr(c, files[i], "not a file name");
        strcpy(dst[i], json_object_get_string(v));
    }
    return 0;
}

static int read_ecn_entry(const struct jctx *c, json_object *e, const char *path,
                          struct ecn_entry *x)
{
    if (!json_object_is_type(e, json_type_object)) return jerr(c, path, "not an object");
    static const char *const keys[4] = {"bandwidth_bps", "min_buf_bytes", "max_buf_bytes",
                                        "max_probability"};
    double *vals[4] = {&x->bw_bps, &x->kmin_kb, &x->kmax_kb, &x->pmax};
    const double hi[4] = {1e15, 1e9, 1e9, 1};
    for (int k = 0; k < 4; k++) {
        *vals[k] = -1;
        int rc = get_num(c, e, path, keys[k], 0, hi[k], vals[k]);
        if (rc) return rc;
        if (*vals[k] < 0) {
            char p[64];
            snprintf(p, sizeof(p), "%s.%s", path, keys[k]);
            return jerr(c, p, "missing");
        }
    }
    if (x->bw_bps < 1) return jerr(c, path, "bandwidth_bps must be positive");
    if (x->kmax_kb < x->kmin_kb)
        return jerr(c, path, "max_buf_bytes is smaller than min_buf_bytes");
    return 0;
}

static int read_ecn(const struct jctx *c, json_object *root, struct roce_cfg *cfg)
{
    json_object *v;
    if (!json_object_object_get_ex(root, "ecn", &v)) return 0;
    if (!json_object_is_type(v, json_type_array)) return jerr(c, "ecn", "not an array");
    size_t n = json_object_array_length(v);
    if (n > sizeof(cfg->ecn) / sizeof(cfg->ecn[0]))
        return jerr(c, "ecn", "more than %zu entries", sizeof(cfg->ecn) / sizeof(cfg->ecn[0]));
    for (size_t i = 0; i < n; i++) {
        char path[32];
        snprintf(path, sizeof(path), "ecn[%zu]", i);
        int rc = read_ecn_entry(c, json_object_array_get_idx(v, i), path, &cfg->ecn[cfg->n_ecn]);
        if (rc) return rc;
        cfg->n_ecn++;
    }
    return 0;
}

static int read_modules(const struct jctx *c, json_object *root, struct roce_cfg *cfg)
{
    json_object *v;
    if (!json_object_object_get_ex(root, "modules", &v)) return 0;
    if (!json_object_is_type(v, json_type_array)) return jerr(c, "modules", "not an array");
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *m = json_object_array_get_idx(v, i), *p;
        char path[32];
        snprintf(path, sizeof(path), "modules[%zu]", i);
        if (!json_object_is_type(m, json_type_object)) return jerr(c, path, "not an object");
        bool en = false;
        int rc = get_bool(c, m, path, "enable", &en);
        if (rc) return rc;
        if (en && json_object_object_get_ex(m, "path", &p) &&
            json_object_is_type(p, json_type_string))
            append_name(cfg->modules, sizeof(cfg->modules), json_object_get_string(p));
    }
    return 0;
}

static int parse_config(const struct jctx *c, json_object *root, struct roce_cfg *cfg)
{
    for (int i = 0; i < A_MAX; i++) cfg->v[i] = attr_tab[i].def;
    cfg->seed = 50;
    int rc = read_default_attributes(c, root, cfg);
    if (!rc) rc = read_file_names(c, root, cfg);
    if (rc) return rc;
    json_object *v;
    if (json_object_object_get_ex(root, "simulator_stop_time", &v) &&
        ns3_time_value(v, &cfg->stop_s))
        return jerr(c, "simulator_stop_time", "not a time in seconds (0 = until the flows end)");
    rc = get_bool(c, root, "", "ack_high_prio", &cfg->ack_high_prio);
    if (!rc) rc = get_uint(c, root, "", "rng_seed", 4294967295.0, &cfg->seed);
    if (!rc) rc = read_ecn(c, root, cfg);
    if (!rc) rc = read_modules(c, root, cfg);
    return rc;
}

/* ---- topology ---- */
/* A node's "id" is not its number; the first that differs, for one note. */
struct moved_id {
    long first;
    double id;
};

static int read_node(const struct jctx *c, json_object *o, size_t i, struct fe_sim_scenario *sc,
                     struct moved_id *moved)
{
    char path[32];
    snprintf(path, sizeof(path), "nodes[%zu]", i);
    if (!json_object_is_type(o, json_type_object)) return jerr(c, path, "not an object");
    bool sw = false;
    double id = (double)i;
    int rc = get_bool(c, o, path, "is_switch", &sw);
    if (!rc) rc = get_num(c, o, path, "id", 0, 4294967295.0, &id);
    if (rc) return rc;
    if (id != (double)i && moved->first < 0) {
        moved->first = (long)i;
        moved->id = id;
    }
    char name[24];
    snprintf(name, sizeof(name), "%zu", i);
    if (fe_sim_scenario_add_node(sc, name, sw) < 0) return jerr(c, path, "out of memory");
    return 0;
}

/* the nodes; their count into *n */
static int read_nodes(const struct jctx *c, json_object *root, struct fe_sim_scenario *sc,
                      FILE *warn, size_t *n_out)
{
    json_object *nodes;
    if (!json_object_object_get_ex(root, "nodes", &nodes)) return jerr(c, "nodes", "missing");
    if (!json_object_is_type(nodes, json_type_array)) return jerr(c, "nodes", "not an array");
    size_t n = json_object_array_length(nodes);
    if (!n) return jerr(c, "nodes", "empty");
    if (n > (1u << 20)) return jerr(c, "nodes", "more than %u nodes", 1u << 20);
    struct moved_id moved = {-1, 0};
    for (size_t i = 0; i < n; i++) {
        int rc = read_node(c, json_object_array_get_idx(nodes, i), i, sc, &moved);
        if (rc) return rc;
    }
    if (moved.first >= 0 && warn)
        fprintf(warn,
                "feroce sim: %s: node \"id\" fields are not used; as in ns3-roce, nodes are "
                "numbered by their position in the list (nodes[%ld] is node %ld, its id says "
                "%g), and links and flows refer to those numbers\n",
                c->file, moved.first, moved.first, moved.id);
    *n_out = n;
    return 0;
}

/* links[i] between two of the n nodes */
static int read_link(const struct jctx *c, json_object *o, size_t i, size_t n,
                     struct fe_sim_scenario *sc)
{
    char path[32];
    snprintf(path, sizeof(path), "links[%zu]", i);
    if (!json_object_is_type(o, json_type_object)) return jerr(c, path, "not an object");
    uint64_t a = UINT64_MAX, b = UINT64_MAX;
    double bw = 100e9, lat = 1e-6, er = 0; /* ns3-roce's defaults */
    int rc = get_uint(c, o, path, "src", (double)(n - 1), &a);
    if (!rc) rc = get_uint(c, o, path, "dst", (double)(n - 1), &b);
    if (!rc) rc = get_num(c, o, path, "bandwidth", 1, 1e15, &bw);
    if (!rc) rc = get_num(c, o, path, "latency", 0, (double)(FE_SIM_MAX_TIME / 4) / 1e9, &lat);
    if (!rc) rc = get_num(c, o, path, "error_rate", 0, 1, &er);
    if (rc) return rc;
    if (a == UINT64_MAX || b == UINT64_MAX) return jerr(c, path, "needs src and dst");
    if (a == b) return jerr(c, path, "src and dst are the same node");
    if (fe_sim_scenario_add_link(sc, (uint32_t)a, (uint32_t)b, (uint64_t)(bw + 0.5),
                                 (uint64_t)(lat * 1e9 + 0.5), er) < 0)
        return jerr(c, path, "invalid link");
    return 0;
}

static int parse_topology(const struct jctx *c, json_object *root, struct fe_sim_scenario *sc,
                          FILE *warn)
{
    json_object *links, *v;
    size_t n = 0;
    int rc = read_nodes(c, root, sc, warn, &n);
    if (rc) return rc;
    if (!json_object_object_get_ex(root, "links", &links)) return jerr(c, "links", "missing");
    if (!json_object_is_type(links, json_type_array)) return jerr(c, "links", "not an array");
    size_t nl = json_object_array_length(links);
    if (nl > (1u << 24)) return jerr(c, "links", "more than %u links", 1u << 24);
    for (size_t i = 0; i < nl; i++) {
        rc = read_link(c, json_object_array_get_idx(links, i), i, n, sc);
        if (rc) return rc;
    }
    if (json_object_object_get_ex(root, "groups", &v) && !json_object_is_type(v, json_type_array))
        return jerr(c, "groups", "not an array");
    return 0;
}

/* ---- flows ---- */
struct flows_out {
    struct fe_sim_ns3roce_info *info;
    uint32_t cap;
    bool noted_ud;
};

static int add_flow(struct fe_sim_scenario *sc, struct flows_out *fo, const struct fe_sim_flow *f,
                    bool bg)
{
    struct fe_sim_ns3roce_info *in = fo->info;
    if (in->n_flows == fo->cap) {
        uint32_t nc = fo->cap ? fo->cap * 2 : 64;
        bool *nb = realloc(in->background, nc * sizeof(bool));
        if (!nb) return FE_ENOMEM;
        in->background = nb;
        fo->cap = nc;
    }
    if (fe_sim_scenario_add_flow(sc, f) < 0) return FE_EINVAL;
    in->background[in->n_flows++] = bg;
    if (bg) in->n_background++;
    return 0;
}

/* Attributes of the unicast and bisection flows. */
static int flow_attrs(const struct jctx *c, json_object *attrs, const char *path, bool unicast,
                      const struct fe_sim_scenario *sc, uint64_t *src, uint64_t *dst,
                      uint64_t *bytes, uint64_t *prio, bool *reliable)
{
    static const char *const known[] = {"SourceNode", "DestinationNode", "WriteByteAmount",
                                        "PfcPriority", "IsReliable"};
    json_object_object_foreach(attrs, key, val)
    {
        (void)val;
        bool ok = false;
        for (int i = unicast ? 0 : 2; i < 5; i++) ok |= !strcmp(key, known[i]);
        if (!ok) {
            char p[200];
            snprintf(p, sizeof(p), "%s.%s", path, key);
            return jerr(c, p, "not an attribute of this flow type");
        }
    }
    double maxid = sc->n_nodes ? sc->n_nodes - 1 : 0;
    int rc = 0;
    if (unicast) {
        rc = get_uint(c, attrs, path, "SourceNode", maxid, src);
        if (!rc) rc = get_uint(c, attrs, path, "DestinationNode", maxid, dst);
        if (rc) return rc;
        if (*src == UINT64_MAX || *dst == UINT64_MAX)
            return jerr(c, path, "needs SourceNode and DestinationNode");
        if (sc->nodes[*src].is_switch)
            return jerr(c, path, "SourceNode %llu is a switch", (unsigned long long)*src);
        if (sc->nodes[*dst].is_switch)
            return jerr(c, path, "DestinationNode %llu is a switch", (unsigned long long)*dst);
        if (*src == *dst) return jerr(c, path, "SourceNode and DestinationNode are the same");
    }
    rc = get_uint(c, attrs, path, "WriteByteAmount", 1e15, bytes);
    if (!rc) rc = get_uint(c, attrs, path, "PfcPriority", 7, prio);
    if (!rc) rc = get_bool(c, attrs, path, "IsReliable", reliable);
    if (rc) return rc;
    if (!*bytes) return jerr(c, path, "WriteByteAmount must be at least one byte");
    return 0;
}

/* A flows[] entry's fields other than its attributes' contents. */
struct flow_head {
    const char *type;
    bool enable, bg;
    double start_s;
    json_object *attrs; /* NULL when absent */
};

static int read_flow_head(const struct jctx *c, json_object *f, const char *path,
                          struct flow_head *fh)
{
    json_object *p, *st;
    *fh = (struct flow_head){NULL, false, false, 0, NULL};
    if (!json_object_is_type(f, json_type_object)) return jerr(c, path, "not an object");
    if (!json_object_object_get_ex(f, "path", &p) || !json_object_is_type(p, json_type_string))
        return jerr(c, path, "path: missing (the flow's ns-3 class, e.g. ns3::RdmaFlowUnicast)");
    fh->type = json_object_get_string(p);
    int rc = get_bool(c, f, path, "enable", &fh->enable);
    if (!rc) rc = get_bool(c, f, path, "in_background", &fh->bg);
    if (rc) return rc;
    if (json_object_object_get_ex(f, "start_time", &st) && ns3_time_value(st, &fh->start_s))
        return jerr(c, path, "start_time is not a time in seconds");
    if (json_object_object_get_ex(f, "attributes", &fh->attrs) &&
        !json_object_is_type(fh->attrs, json_type_object))
        return jerr(c, path, "attributes is not an object");
    return 0;
}

/* A flow type feroce does not model: skipped (*skip) with --skip-unsupported-flows, else an
 * error. */
static int unsupported_flow(const struct jctx *c, const char *path, const char *type,
                            const struct fe_sim_ns3roce_opts *o, struct flows_out *fo, bool *skip)
{
    bool mcast = strstr(type, "Mcast") || strstr(type, "Multicast");
    FILE *warn = o ? o->warn : NULL;
    if (o && o->skip_unsupported) {
        fo->info->n_skipped++;
        if (warn)
            fprintf(warn,
                    "feroce sim: %s: %s: skipping %s%s: feroce models unicast RDMA "
                    "WRITE flows only; the results do not include it\n",
                    c->file, path, type, mcast ? " (multicast)" : "");
        *skip = true;
        return 0;
    }
    sim_errf(c->err, c->err_cap,
             "%s: %s: %s%s cannot be simulated by feroce, which models unicast RDMA WRITE "
             "flows (ns3::RdmaFlowUnicast, ns3::RdmaFlowBisection); set \"enable\": "
             "false in that flow, or run with --skip-unsupported-flows to simulate the "
             "other flows without it",
             c->file, path, type, mcast ? " (multicast)" : "");
    return FE_ENOTSUP;
}

/* bisection: the servers in id order; server i writes to server n/2 + i, the other way round
 * for odd i (as ns3-roce's RdmaFlowBisection) */
static int add_bisection(const struct jctx *c, const char *path, struct fe_sim_scenario *sc,
                         struct flows_out *fo, struct fe_sim_flow *fl, bool bg)
{
    uint32_t hosts = 0;
    for (uint32_t k = 0; k < sc->n_nodes; k++) hosts += !sc->nodes[k].is_switch;
    if (!hosts || hosts % 2)
        return jerr(c, path, "ns3::RdmaFlowBisection needs an even number of servers, not %u",
                    hosts);
    uint32_t *h = malloc(hosts * sizeof(uint32_t));
    if (!h) return jerr(c, path, "out of memory");
    for (uint32_t k = 0, j = 0; k < sc->n_nodes; k++)
        if (!sc->nodes[k].is_switch) h[j++] = k;
    int rc = 0;
    for (uint32_t k = 0; !rc && k < hosts / 2; k++) {
        uint32_t a = h[k], b = h[hosts / 2 + k];
        fl->src = k % 2 ? b : a;
        fl->dst = k % 2 ? a : b;
        if (add_flow(sc, fo, fl, bg)) rc = jerr(c, path, "out of memory");
    }
    free(h);
    return rc;
}

/* an enabled unicast or bisection flow, flows[i] */
static int add_flows_of(const struct jctx *c, size_t i, const struct flow_head *fh, bool unicast,
                        struct fe_sim_scenario *sc, FILE *warn, struct flows_out *fo)
{
    char path[48], apath[64];
    snprintf(path, sizeof(path), "flows[%zu]", i);
    snprintf(apath, sizeof(apath), "flows[%zu].attributes", i);
    uint64_t src = UINT64_MAX, dst = UINT64_MAX, bytes = 0, prio = 3;
    bool reliable = true;
    json_object *attrs = fh->attrs, *empty = NULL;
    if (!attrs) attrs = empty = json_object_new_object();
    int rc = flow_attrs(c, attrs, apath, unicast, sc, &src, &dst, &bytes, &prio, &reliable);
    json_object_put(empty);
    if (rc) return rc;
    if (!reliable && !fo->noted_ud && warn) {
        fo->noted_ud = true;
        fprintf(warn,
                "feroce sim: %s: %s: IsReliable false (UD) flows run as reliable "
                "connections (RC RDMA WRITE with ACKs): feroce has no UD model\n",
                c->file, path);
    }
    struct fe_sim_flow fl = {
        .bytes = bytes, .start_ns = (uint64_t)(fh->start_s * 1e9 + 0.5), .prio = (uint8_t)prio};
    if (!unicast) return add_bisection(c, path, sc, fo, &fl, fh->bg);
    fl.src = (uint32_t)src;
    fl.dst = (uint32_t)dst;
    if (add_flow(sc, fo, &fl, fh->bg)) return jerr(c, path, "out of memory");
    return 0;
}

static int read_flow(const struct jctx *c, json_object *f, size_t i, struct fe_sim_scenario *sc,
                     const struct fe_sim_ns3roce_opts *o, struct flows_out *fo)
{
    char path[48];
    snprintf(path, sizeof(path), "flows[%zu]", i);
    struct flow_head fh;
    int rc = read_flow_head(c, f, path, &fh);
    if (rc) return rc;
    if (!fh.enable) {
        fo->info->n_disabled++; /* ns3-roce skips them before looking at their type */
        return 0;
    }
    bool unicast = !strcmp(fh.type, "ns3::RdmaFlowUnicast");
    bool bisection = !strcmp(fh.type, "ns3::RdmaFlowBisection");
    if (!unicast && !bisection) {
        bool skip = false;
        rc = unsupported_flow(c, path, fh.type, o, fo, &skip);
        if (rc || skip) return rc;
    }
    return add_flows_of(c, i, &fh, unicast, sc, o ? o->warn : NULL, fo);
}

static int parse_flows(const struct jctx *c, json_object *root, struct fe_sim_scenario *sc,
                       const struct fe_sim_ns3roce_opts *o, struct flows_out *fo)
{
    json_object *list;
    if (!json_object_object_get_ex(root, "flows", &list)) return jerr(c, "flows", "missing");
    if (!json_object_is_type(list, json_type_array)) return jerr(c, "flows", "not an array");
    size_t n = json_object_array_length(list);
    for (size_t i = 0; i < n; i++) {
        int rc = read_flow(c, json_object_array_get_idx(list, i), i, sc, o, fo);
        if (rc) return rc;
    }
    return 0;
}

/* ---- the mapping ---- */
/* HPCC's KMIN_MAP, KMAX_MAP and PMAX_MAP values, per distinct switch-port rate */
struct ecn_maps {
    uint64_t rates[FE_SIM_MAX_RED];
    int n_rates;
    char kmin[400], kmax[400], pmax[400];
};

/* the distinct rates of the links with a switch at one end at least */
static int switch_port_rates(const struct jctx *cc, const struct fe_sim_scenario *sc,
                             struct ecn_maps *m)
{
    for (uint32_t i = 0; i < sc->n_links; i++) {
        const struct fe_sim_link *l = &sc->links[i];
        if (!sc->nodes[l->a].is_switch && !sc->nodes[l->b].is_switch) continue;
        int k;
        for (k = 0; k < m->n_rates; k++)
            if (m->rates[k] == l->rate_bps) break;
        if (k < m->n_rates) continue;
        if (m->n_rates == FE_SIM_MAX_RED) {
            sim_errf(cc->err, cc->err_cap,
                     "%s: switch ports of more than %d speeds (ECN is configured "
                     "per speed)",
                     cc->file, FE_SIM_MAX_RED);
            return FE_ENOTSUP;
        }
        m->rates[m->n_rates++] = l->rate_bps;
    }
    return 0;
}

/* the entry with the largest bandwidth strictly below rate, -1 when none */
static int ecn_entry_for(const struct roce_cfg *cfg, uint64_t rate)
{
    int best = -1;
    for (int e = 0; e < cfg->n_ecn; e++)
        if (cfg->ecn[e].bw_bps < (double)rate &&
            (best < 0 || cfg->ecn[e].bw_bps > cfg->ecn[best].bw_bps))
            best = e;
    return best;
}

static void append_map(char *map, size_t cap, uint64_t rate, double v)
{
    size_t a = strlen(map);
    snprintf(map + a, cap - a, " %llu %.17g", (unsigned long long)rate, v);
}

/* ECN: per distinct switch-port rate, the entry with the largest bandwidth strictly below */
static int build_ecn_maps(const struct jctx *cc, const struct roce_cfg *cfg, struct ecn_maps *m,
                          FILE *warn)
{
    for (int r = 0; r < m->n_rates; r++) {
        int best = ecn_entry_for(cfg, m->rates[r]);
        if (best < 0) {
            sim_errf(cc->err, cc->err_cap,
                     "%s: ecn: no entry with bandwidth_bps below the %.6g Gb/s switch ports "
                     "(ns3-roce uses the entry with the largest bandwidth strictly below the "
                     "port rate)",
                     cc->file, (double)m->rates[r] / 1e9);
            return FE_EPARSE;
        }
        const struct ecn_entry *x = &cfg->ecn[best];
        append_map(m->kmin, sizeof(m->kmin), m->rates[r], floor(x->kmin_kb));
        append_map(m->kmax, sizeof(m->kmax), m->rates[r], floor(x->kmax_kb));
        append_map(m->pmax, sizeof(m->pmax), m->rates[r], x->pmax);
        if (warn && x->kmin_kb * 1000 > cfg->v[A_BUFFER])
            fprintf(warn,
                    "feroce sim: %s: ecn[%d] (used for the %.6g Gb/s ports): min_buf_bytes "
                    "%.6g is multiplied by 1000 in ns3-roce (%.6g MB), more than the "
                    "%.6g MiB switch buffer: those ports never mark ECN, as in ns3-roce\n",
                    cc->file, best, (double)m->rates[r] / 1e9, x->kmin_kb, x->kmin_kb * 1000 / 1e6,
                    cfg->v[A_BUFFER] / 1e6);
    }
    return 0;
}

/* text appended at *n while it fits; *n counts what did not fit too */
static void __attribute__((format(printf, 4, 5)))
emit(char *txt, size_t cap, size_t *n, const char *fmt, ...)
{
    if (*n >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    *n += (size_t)vsnprintf(txt + *n, cap - *n, fmt, ap);
    va_end(ap);
}

/* the HPCC config.txt these attributes amount to; its length, cap or more when it did not fit */
static size_t hpcc_config_text(const struct roce_cfg *cfg, bool ecn, const struct ecn_maps *m,
                               char *txt, size_t cap)
{
    size_t n = 0;
    for (int i = 0; i < A_MAX; i++) {
        if (!attr_tab[i].hpcc || i == A_ECN) continue;
        if (attr_tab[i].type == T_RATE)
            emit(txt, cap, &n, "%s %.0fbps\n", attr_tab[i].hpcc, cfg->v[i]);
        else
            emit(txt, cap, &n, "%s %.17g\n", attr_tab[i].hpcc, cfg->v[i]);
    }
    emit(txt, cap, &n, "ENABLE_QCN %d\nHAS_WIN 0\nACK_HIGH_PRIO %d\n", ecn ? 1 : 0,
         cfg->ack_high_prio ? 1 : 0);
    if (ecn)
        emit(txt, cap, &n, "KMIN_MAP %d%s\nKMAX_MAP %d%s\nPMAX_MAP %d%s\n", m->n_rates, m->kmin,
             m->n_rates, m->kmax, m->n_rates, m->pmax);
    return n;
}

/* the attributes as HPCC's config.txt, read by its reader into sc and hf */
static int apply_as_hpcc(const struct jctx *cc, const struct roce_cfg *cfg,
                         struct fe_sim_scenario *sc, struct fe_sim_hpcc_files *hf, FILE *warn)
{
    struct ecn_maps m;
    memset(&m, 0, sizeof(m));
    int rc = switch_port_rates(cc, sc, &m);
    if (rc) return rc;
    bool ecn = cfg->v[A_ECN] != 0 && m.n_rates > 0;
    if (ecn && (rc = build_ecn_maps(cc, cfg, &m, warn))) return rc;
    char txt[2048];
    size_t n = hpcc_config_text(cfg, ecn, &m, txt, sizeof(txt));
    if (n >= sizeof(txt)) {
        sim_errf(cc->err, cc->err_cap, "%s: internal: configuration too long", cc->file);
        return FE_EINVAL;
    }
    memset(hf, 0, sizeof(*hf));
    char e[400];
    rc = fe_sim_hpcc_parse_config(txt, n, "(from default_attributes)", sc, hf, e, sizeof(e));
    if (rc) sim_errf(cc->err, cc->err_cap, "%s: %s", cc->file, e);
    return rc;
}

/* PauseTime: the quanta of PAUSE frames at the servers' link rate */
static void set_pause_quanta(struct fe_sim_scenario *sc, double pause_s)
{
    uint64_t rate = 0;
    for (uint32_t i = 0; i < sc->n_links && !rate; i++)
        if (!sc->nodes[sc->links[i].a].is_switch || !sc->nodes[sc->links[i].b].is_switch)
            rate = sc->links[i].rate_bps;
    if (rate) {
        double q = pause_s * (double)rate / 512;
        sc->sw.pause_quanta = (uint16_t)(q < 1 ? 1 : q > 65535 ? 65535 : q + 0.5);
    }
}

/* what HPCC's config has no key for */
static void apply_unkeyed(const struct roce_cfg *cfg, struct fe_sim_scenario *sc,
                          const struct fe_sim_hpcc_files *hf)
{
    sc->sw.buffer_bytes = (uint64_t)cfg->v[A_BUFFER];
    sc->sw.pfc = cfg->v[A_QBB] != 0;
    sc->seed = cfg->seed;
    sc->stop_ns = cfg->stop_s > 0 ? (uint64_t)(cfg->stop_s * 1e9 + 0.5) : FE_SIM_NO_TIME;
    uint8_t mask = 0;
    for (uint32_t i = 0; i < sc->n_flows; i++) {
        sc->flows[i].msg_bytes = hf->payload; /* packets of exactly Mtu payload */
        mask |= (uint8_t)(1u << (sc->flows[i].prio & 7));
    }
    if (mask) sc->sw.lossless_mask = mask; /* ns3-roce pauses whatever priority congests */
    if (cfg->v[A_ACKINT] > 0) {
        /* L2AckInterval is in bytes: an ACK about every that many payload bytes */
        double pk = ceil(cfg->v[A_ACKINT] / (double)hf->payload);
        sc->host.ack_every = (uint16_t)(pk < 1 ? 1 : pk > 65535 ? 65535 : pk);
    }
    set_pause_quanta(sc, cfg->v[A_PAUSE]);
}

static void note_not_modelled(const struct jctx *cc, const struct roce_cfg *cfg, FILE *warn)
{
    char ign[1400];
    snprintf(ign, sizeof(ign), "%s", cfg->ignored);
    if (cfg->v[A_DYNTH] == 0)
        append_name(ign, sizeof(ign),
                    "ns3::QbbNetDevice::DynamicThreshold=false (feroce's "
                    "switches always use the dynamic threshold)");
    if (cfg->v[A_FIRSTCNP] != 1) append_name(ign, sizeof(ign), "ns3::RdmaHw::RateOnFirstCnp");
    if (warn && ign[0])
        fprintf(warn, "feroce sim: %s: not modelled by feroce, ignored: %s\n", cc->file, ign);
    if (warn && cfg->modules[0])
        fprintf(warn,
                "feroce sim: %s: modules not run: %s (feroce's outputs: the report, --json, "
                "--trace, --plot, --fct, --pfc)\n",
                cc->file, cfg->modules);
}

static int apply(const struct jctx *cc, const struct roce_cfg *cfg, struct fe_sim_scenario *sc,
                 FILE *warn)
{
    if (cfg->v[A_MTU] < 1 || cfg->v[A_MTU] > 4096)
        return jerr(cc, "default_attributes.ns3::RdmaHw::Mtu",
                    "%g: the payload per packet must be 1..4096 bytes", cfg->v[A_MTU]);
    struct fe_sim_hpcc_files hf;
    int rc = apply_as_hpcc(cc, cfg, sc, &hf, warn);
    if (rc) return rc;
    apply_unkeyed(cfg, sc, &hf);
    rc = fe_sim_hpcc_apply(sc, &hf, cc->err, cc->err_cap);
    if (rc) return rc;
    note_not_modelled(cc, cfg, warn);
    return 0;
}

static int parse_all(json_object *croot, const char *config_name, const char *topology,
                     size_t topology_len, const char *topology_name, const char *flows,
                     size_t flows_len, const char *flows_name, const struct fe_sim_ns3roce_opts *o,
                     struct fe_sim_scenario *sc, struct fe_sim_ns3roce_info *info, char *err,
                     size_t err_cap)
{
    struct roce_cfg *cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        sim_errf(err, err_cap, "out of memory");
        return FE_ENOMEM;
    }
    FILE *warn = o ? o->warn : NULL;
    struct jctx cc = {config_name, err, err_cap};
    int rc = parse_config(&cc, croot, cfg);
    json_object *t = NULL, *f = NULL;
    if (!rc) {
        t = parse_json(topology, topology_len, topology_name, err, err_cap);
        if (!t) rc = FE_EPARSE;
    }
    if (!rc) {
        struct jctx tc = {topology_name, err, err_cap};
        rc = parse_topology(&tc, t, sc, warn);
    }
    if (!rc) {
        f = parse_json(flows, flows_len, flows_name, err, err_cap);
        if (!f) rc = FE_EPARSE;
    }
    if (!rc) {
        struct jctx fc = {flows_name, err, err_cap};
        struct flows_out fo = {info, 0, false};
        rc = parse_flows(&fc, f, sc, o, &fo);
        if (!rc && !sc->n_flows) {
            sim_errf(err, err_cap,
                     "%s: no flow to simulate (%u disabled, %u of types feroce cannot model "
                     "skipped)",
                     flows_name, info->n_disabled, info->n_skipped);
            rc = FE_EINVAL;
        }
    }
    if (!rc) rc = apply(&cc, cfg, sc, warn);
    json_object_put(t);
    json_object_put(f);
    free(cfg);
    return rc;
}

bool fe_sim_ns3roce_available(void)
{
    return true;
}

void fe_sim_ns3roce_info_free(struct fe_sim_ns3roce_info *info)
{
    free(info->background);
    info->background = NULL;
}

/* A failed read leaves nothing behind. */
static int finish(int rc, struct fe_sim_scenario *sc, struct fe_sim_ns3roce_info *info)
{
    if (rc) {
        fe_sim_scenario_free(sc);
        fe_sim_ns3roce_info_free(info);
        memset(info, 0, sizeof(*info));
    }
    return rc;
}

int fe_sim_ns3roce_parse(const char *config, size_t config_len, const char *config_name,
                         const char *topology, size_t topology_len, const char *topology_name,
                         const char *flows, size_t flows_len, const char *flows_name,
                         const struct fe_sim_ns3roce_opts *o, struct fe_sim_scenario *sc,
                         struct fe_sim_ns3roce_info *info, char *err, size_t err_cap)
{
    fe_sim_scenario_init(sc);
    memset(info, 0, sizeof(*info));
    json_object *c = parse_json(config, config_len, config_name, err, err_cap);
    if (!c) return FE_EPARSE;
    snprintf(info->topology, sizeof(info->topology), "%s", topology_name);
    snprintf(info->flows, sizeof(info->flows), "%s", flows_name);
    int rc = parse_all(c, config_name, topology, topology_len, topology_name, flows, flows_len,
                       flows_name, o, sc, info, err, err_cap);
    json_object_put(c);
    return finish(rc, sc, info);
}

int fe_sim_ns3roce_load(const char *config_path, const struct fe_sim_ns3roce_opts *o,
                        struct fe_sim_scenario *sc, struct fe_sim_ns3roce_info *info, char *err,
                        size_t err_cap)
{
    fe_sim_scenario_init(sc);
    memset(info, 0, sizeof(*info));
    size_t clen = 0, tlen = 0, flen = 0;
    char *ctext = sim_read_file(config_path, &clen, err, err_cap);
    if (!ctext) return FE_EIO;
    json_object *c = parse_json(ctext, clen, config_path, err, err_cap);
    free(ctext);
    if (!c) return FE_EPARSE;
    /* the two file names, relative to the config's directory (as ns3-roce's FindFile) */
    char dir[512] = "", tpath[512], fpath[512];
    const char *slash = strrchr(config_path, '/');
    if (slash) snprintf(dir, sizeof(dir), "%.*s", (int)(slash - config_path), config_path);
    json_object *tv, *fv;
    int rc = 0;
    if (!json_object_object_get_ex(c, "topology_file", &tv) ||
        !json_object_is_type(tv, json_type_string) ||
        !json_object_object_get_ex(c, "flows_file", &fv) ||
        !json_object_is_type(fv, json_type_string)) {
        sim_errf(err, err_cap, "%s: needs \"topology_file\" and \"flows_file\" (file names)",
                 config_path);
        rc = FE_EPARSE;
    } else if (!sim_path_join(tpath, sizeof(tpath), dir, json_object_get_string(tv)) ||
               !sim_path_join(fpath, sizeof(fpath), dir, json_object_get_string(fv))) {
        sim_errf(err, err_cap, "%s: file name too long", config_path);
        rc = FE_EINVAL;
    }
    char *ttext = NULL, *ftext = NULL;
    if (!rc && !(ttext = sim_read_file(tpath, &tlen, err, err_cap))) rc = FE_EIO;
    if (!rc && !(ftext = sim_read_file(fpath, &flen, err, err_cap))) rc = FE_EIO;
    if (!rc) {
        snprintf(info->topology, sizeof(info->topology), "%s", tpath);
        snprintf(info->flows, sizeof(info->flows), "%s", fpath);
        const char *base = slash ? slash + 1 : config_path;
        snprintf(sc->name, sizeof(sc->name), "%s", base);
        rc = parse_all(c, config_path, ttext, tlen, tpath, ftext, flen, fpath, o, sc, info, err,
                       err_cap);
    }
    free(ttext);
    free(ftext);
    json_object_put(c);
    return finish(rc, sc, info);
}

#endif
