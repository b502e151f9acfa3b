/* The campaign file (YAML, docs/sweep.md): parsing, validation on the base scenario and
 * expansion into points. Errors name their place as "file:line: what". */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "feroce/err.h"
#include "sweep/sweep.h"

#define MAX_VALUES 100000u   /* per parameter */
#define MAX_POINTS 10000000u /* per campaign */

struct pctx {
    yaml_document_t *doc;
    const char *name, *dir;
    struct sw_spec *spec;
    char *err;
    size_t err_cap;
};

static int perr(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int perr(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(c->err, c->err_cap, "%s:%lu: %s", c->name,
             n ? (unsigned long)n->start_mark.line + 1 : 0ul, msg);
    return -1;
}

static yaml_node_t *ynode(struct pctx *c, int id)
{
    return yaml_document_get_node(c->doc, id);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- numbers with units ---- */

struct unit {
    const char *s;
    double mult;
};
/* The simulator's units (src/sim/units.c): KB = 1000, KiB = 1024. */
static const struct unit units[] = {{"ns", 1},
                                    {"us", 1e3},
                                    {"ms", 1e6},
                                    {"s", 1e9},
                                    {"b", 1},
                                    {"kb", 1e3},
                                    {"kib", 1024},
                                    {"mb", 1e6},
                                    {"mib", 1048576},
                                    {"gb", 1e9},
                                    {"gib", 1073741824.0},
                                    {"k", 1e3},
                                    {"m", 1e6},
                                    {"g", 1e9},
                                    {"bps", 1},
                                    {"b/s", 1},
                                    {"kbps", 1e3},
                                    {"kb/s", 1e3},
                                    {"mbps", 1e6},
                                    {"mb/s", 1e6},
                                    {"gbps", 1e9},
                                    {"gb/s", 1e9},
                                    {"tbps", 1e12},
                                    {"tb/s", 1e12},
                                    {NULL, 0}};

/* Splits "12.5KB" into 12.5 and "KB"; false when it does not start with a number. */
static bool split_number(const char *s, double *v, const char **unit)
{
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return false;
    errno = 0;
    char *end;
    *v = strtod(s, &end);
    if (errno || end == s || !isfinite(*v)) return false;
    if (!strncasecmp(s, "inf", 3) || !strncasecmp(s, "nan", 3) ||
        !strncasecmp(s + (*s == '-' || *s == '+'), "inf", 3) ||
        !strncasecmp(s + (*s == '-' || *s == '+'), "nan", 3) || strpbrk(s, "xX"))
        return false;
    while (isspace((unsigned char)*end)) end++;
    *unit = end;
    return true;
}

static double unit_mult(const char *u)
{
    size_t n = strlen(u);
    while (n && isspace((unsigned char)u[n - 1])) n--;
    if (!n) return 1;
    for (const struct unit *x = units; x->s; x++)
        if (strlen(x->s) == n && !strncasecmp(u, x->s, n)) return x->mult;
    return 0;
}

bool sw_value_number(const char *s, double *out, bool *is_int)
{
    static const char *const t[] = {"true", "yes", "on"}, *const f[] = {"false", "no", "off"};
    for (int i = 0; i < 3; i++) {
        if (!strcasecmp(s, t[i]) || !strcasecmp(s, f[i])) {
            *out = !strcasecmp(s, t[i]);
            *is_int = true;
            return true;
        }
    }
    double v;
    const char *u;
    if (!split_number(s, &v, &u)) return false;
    double m = unit_mult(u);
    if (m == 0) return false;
    *out = v * m;
    *is_int = fabs(*out) < 9e15 && *out == floor(*out);
    return true;
}

/* ---- hashing ---- */

void sw_hash_hex(const void *data, size_t len, uint64_t seed, char out[SW_ID_LEN])
{
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    /* FNV-1a mixes its last bytes poorly into the high bits: a final avalanche */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    snprintf(out, SW_ID_LEN, "%016llx", (unsigned long long)h);
}

/* ---- the YAML walk ---- */

static int get_u64(struct pctx *c, yaml_node_t *n, const char *what, uint64_t max, uint64_t *out)
{
    const char *s = scalar(n);
    if (!s || !*s || *s == '-' || *s == '+') return perr(c, n, "%s: expected a whole number", what);
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return perr(c, n, "%s: expected a whole number <= %llu", what, (unsigned long long)max);
    *out = v;
    return 0;
}

static int get_str(struct pctx *c, yaml_node_t *n, const char *what, char **out)
{
    const char *s = scalar(n);
    if (!s || !*s) return perr(c, n, "%s: expected a value", what);
    free(*out);
    *out = xstrdup(s);
    return *out ? 0 : perr(c, n, "out of memory");
}

/* A path relative to the campaign's directory (absolute paths are kept). */
static int get_path(struct pctx *c, yaml_node_t *n, const char *what, char **out)
{
    const char *s = scalar(n);
    if (!s || !*s) return perr(c, n, "%s: expected a file name", what);
    size_t len = strlen(c->dir) + strlen(s) + 2;
    free(*out);
    *out = malloc(len);
    if (!*out) return perr(c, n, "out of memory");
    if (s[0] == '/' || !c->dir[0])
        snprintf(*out, len, "%s", s);
    else
        snprintf(*out, len, "%s/%s", c->dir, s);
    return 0;
}

static bool is_builtin(const char *s)
{
    size_t n;
    const struct fe_sim_builtin *b = fe_sim_builtins(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(b[i].name, s)) return true;
    return false;
}

/* The array of n elements, growing one at a time, with room for element n (NULL when out of
 * memory; the old array stays valid). Its capacity doubles when n reaches a power of two, so a
 * range of MAX_VALUES values costs a few dozen reallocations, not one each (and a copy each
 * with some allocators: quadratic). */
static void *room_for(void *v, uint32_t n, size_t elem_bytes)
{
    if (n & (n - 1)) return v; /* n is not 0 or a power of two: there is room */
    return realloc(v, (n ? 2 * (size_t)n : 1) * elem_bytes);
}

static int push_str(char ***v, uint32_t *n, const char *s)
{
    char **nv = room_for(*v, *n, sizeof(**v));
    if (!nv) return -1;
    *v = nv;
    if (!(nv[*n] = xstrdup(s))) return -1;
    (*n)++;
    return 0;
}

/* ---- the values a list holds so far, to refuse a repeated one in O(1) per value ----
 * A list may hold MAX_VALUES values: comparing each to every earlier one was quadratic. An open
 * addressing table of 1 + each value's index in its list (0: free), at most half full. */
struct seen {
    uint32_t *slot;
    size_t mask;
};

static int seen_init(struct seen *t, size_t n_items)
{
    if (n_items > MAX_VALUES + 1) n_items = MAX_VALUES + 1; /* the list is refused past that */
    size_t cap = 16;
    while (cap < 2 * n_items) cap *= 2;
    t->slot = calloc(cap, sizeof(*t->slot));
    t->mask = cap - 1;
    return t->slot ? 0 : -1;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t hash_u64(uint64_t x)
{
    x ^= x >> 33; /* murmur3's finalizer: seeds 1, 2, 3... spread over the table */
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* true when s is already one of values[]; otherwise records that values[i] will be s. */
static bool seen_str(struct seen *t, char *const *values, const char *s, uint32_t i)
{
    size_t h = (size_t)hash_str(s) & t->mask;
    for (; t->slot[h]; h = (h + 1) & t->mask)
        if (!strcmp(values[t->slot[h] - 1], s)) return true;
    t->slot[h] = i + 1;
    return false;
}

static bool seen_u64(struct seen *t, const uint64_t *values, uint64_t u, uint32_t i)
{
    size_t h = (size_t)hash_u64(u) & t->mask;
    for (; t->slot[h]; h = (h + 1) & t->mask)
        if (values[t->slot[h] - 1] == u) return true;
    t->slot[h] = i + 1;
    return false;
}

static int parse_sets(struct pctx *c, yaml_node_t *m)
{
    if (m->type != YAML_MAPPING_NODE) return perr(c, m, "set: expected a mapping KEY: VALUE");
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = ynode(c, p->key), *v = ynode(c, p->value);
        const char *ks = scalar(k), *vs = scalar(v);
        if (!ks || !*ks || !vs || !*vs) return perr(c, k, "set: expected KEY: VALUE");
        size_t len = strlen(ks) + strlen(vs) + 2;
        char *a = malloc(len);
        if (!a) return perr(c, k, "out of memory");
        snprintf(a, len, "%s=%s", ks, vs);
        int rc = push_str(&c->spec->sets, &c->spec->n_sets, a);
        free(a);
        if (rc) return perr(c, k, "out of memory");
    }
    return 0;
}

static struct sw_param *new_param(struct pctx *c, yaml_node_t *k, const char *key)
{
    struct sw_spec *s = c->spec;
    for (uint32_t i = 0; i < s->n_params; i++)
        if (!strcmp(s->params[i].key, key)) {
            perr(c, k, "'%s' is varied twice", key);
            return NULL;
        }
    struct sw_param *np = realloc(s->params, (s->n_params + 1) * sizeof(*np));
    if (!np) {
        perr(c, k, "out of memory");
        return NULL;
    }
    s->params = np;
    struct sw_param *p = &np[s->n_params];
    memset(p, 0, sizeof(*p));
    if (!(p->key = xstrdup(key))) {
        perr(c, k, "out of memory");
        return NULL;
    }
    s->n_params++;
    return p;
}

/* from/to/step with one unit: "5KB".."50KB" by "5KB" */
static int expand_range(struct pctx *c, yaml_node_t *m, struct sw_param *p)
{
    yaml_node_t *fr = NULL, *to = NULL, *st = NULL;
    for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < m->data.mapping.pairs.top; q++) {
        const char *k = scalar(ynode(c, q->key));
        yaml_node_t *v = ynode(c, q->value);
        if (k && !strcmp(k, "from"))
            fr = v;
        else if (k && !strcmp(k, "to"))
            to = v;
        else if (k && !strcmp(k, "step"))
            st = v;
        else
            return perr(c, m, "%s: a range has from, to and step", p->key);
    }
    double a, b, d;
    const char *ua, *ub, *ud;
    if (!fr || !to || !st || !scalar(fr) || !scalar(to) || !scalar(st))
        return perr(c, m, "%s: a range needs from, to and step", p->key);
    if (!split_number(scalar(fr), &a, &ua) || !split_number(scalar(to), &b, &ub) ||
        !split_number(scalar(st), &d, &ud))
        return perr(c, m, "%s: range bounds and step must be numbers (with a unit)", p->key);
    if (strcasecmp(ua, ub) || (*ud && strcasecmp(ua, ud)))
        return perr(c, m, "%s: from, to and step must have the same unit", p->key);
    if (!(d > 0) || b < a) return perr(c, m, "%s: a range needs from <= to and step > 0", p->key);
    double count = floor((b - a) / d * (1 + 1e-12) + 1e-9) + 1;
    if (count > MAX_VALUES) return perr(c, m, "%s: more than %u values", p->key, MAX_VALUES);
    for (uint32_t i = 0; i < (uint32_t)count; i++) {
        char v[64];
        double x = a + d * i;
        if (fabs(x) < 1e-12 * fabs(d)) x = 0;
        snprintf(v, sizeof(v), "%.10g%s", x, ua);
        if (push_str(&p->values, &p->n_values, v)) return perr(c, m, "out of memory");
    }
    return 0;
}

/* KEY: [A, B, ...]: each value once, refused at the first that repeats an earlier one. */
static int push_list_values(struct pctx *c, yaml_node_t *v, struct sw_param *p, struct seen *t)
{
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        const char *s = scalar(ynode(c, *it));
        if (!s || !*s) return perr(c, v, "%s: expected a list of values", p->key);
        if (p->n_values >= MAX_VALUES)
            return perr(c, v, "%s: more than %u values", p->key, MAX_VALUES);
        if (seen_str(t, p->values, s, p->n_values))
            return perr(c, v, "%s: value '%s' twice", p->key, s);
        if (push_str(&p->values, &p->n_values, s)) return perr(c, v, "out of memory");
    }
    return 0;
}

static int parse_list(struct pctx *c, yaml_node_t *v, struct sw_param *p)
{
    struct seen t;
    size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (seen_init(&t, n)) return perr(c, v, "out of memory");
    int rc = push_list_values(c, v, p, &t);
    free(t.slot);
    return rc;
}

static int parse_grid(struct pctx *c, yaml_node_t *m)
{
    if (m->type != YAML_MAPPING_NODE) return perr(c, m, "grid: expected a mapping KEY: VALUES");
    for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < m->data.mapping.pairs.top; q++) {
        yaml_node_t *k = ynode(c, q->key), *v = ynode(c, q->value);
        const char *key = scalar(k);
        if (!key || !*key) return perr(c, k, "grid: expected a key");
        struct sw_param *p = new_param(c, k, key);
        if (!p) return -1;
        if (v && v->type == YAML_SEQUENCE_NODE) {
            if (parse_list(c, v, p)) return -1;
        } else if (v && v->type == YAML_MAPPING_NODE) {
            if (expand_range(c, v, p)) return -1;
        } else if (scalar(v) && *scalar(v)) {
            if (push_str(&p->values, &p->n_values, scalar(v))) return perr(c, v, "out of memory");
        } else {
            return perr(c, v, "%s: expected a list, a range {from, to, step} or a value", key);
        }
        if (!p->n_values) return perr(c, v, "%s: no values", key);
    }
    return 0;
}

/* KEY: {min: A, max: B, log: true} or KEY: [A, B] */
static int parse_sample_param(struct pctx *c, yaml_node_t *k, yaml_node_t *v)
{
    const char *key = scalar(k);
    if (!key || !*key) return perr(c, k, "sample: expected a key");
    struct sw_param *p = new_param(c, k, key);
    if (!p) return -1;
    p->sampled = true;
    yaml_node_t *lo = NULL, *hi = NULL;
    if (v && v->type == YAML_SEQUENCE_NODE &&
        v->data.sequence.items.top - v->data.sequence.items.start == 2) {
        lo = ynode(c, v->data.sequence.items.start[0]);
        hi = ynode(c, v->data.sequence.items.start[1]);
    } else if (v && v->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top;
             q++) {
            const char *kk = scalar(ynode(c, q->key));
            yaml_node_t *vv = ynode(c, q->value);
            if (kk && !strcmp(kk, "min"))
                lo = vv;
            else if (kk && !strcmp(kk, "max"))
                hi = vv;
            else if (kk && !strcmp(kk, "log")) {
                const char *s = scalar(vv);
                if (!s || (strcmp(s, "true") && strcmp(s, "false")))
                    return perr(c, vv, "%s: log: true or false", key);
                p->log = !strcmp(s, "true");
            } else
                return perr(c, v, "%s: a sampled parameter has min, max and log", key);
        }
    }
    double a, b;
    const char *ua, *ub;
    if (!lo || !hi || !scalar(lo) || !scalar(hi) || !split_number(scalar(lo), &a, &ua) ||
        !split_number(scalar(hi), &b, &ub))
        return perr(c, v, "%s: expected {min: A, max: B} or [A, B] (numbers, with a unit)", key);
    if (strcasecmp(ua, ub) || strlen(ua) >= sizeof(p->unit))
        return perr(c, v, "%s: min and max must have the same unit", key);
    if (!(a < b)) return perr(c, v, "%s: min must be < max", key);
    if (p->log && !(a > 0)) return perr(c, v, "%s: a log range needs min > 0", key);
    p->lo = a;
    p->hi = b;
    snprintf(p->unit, sizeof(p->unit), "%s", ua);
    p->integer = !strpbrk(scalar(lo), ".eE") && !strpbrk(scalar(hi), ".eE");
    return 0;
}

static int parse_sample(struct pctx *c, yaml_node_t *m)
{
    if (m->type != YAML_MAPPING_NODE) return perr(c, m, "sample: expected a mapping");
    struct sw_spec *s = c->spec;
    bool have_n = false;
    for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < m->data.mapping.pairs.top; q++) {
        yaml_node_t *k = ynode(c, q->key), *v = ynode(c, q->value);
        const char *key = scalar(k);
        uint64_t u;
        if (!key) return perr(c, k, "sample: expected a key");
        if (!strcmp(key, "n")) {
            if (get_u64(c, v, "sample.n", MAX_POINTS, &u)) return -1;
            if (!u) return perr(c, v, "sample.n: at least 1");
            s->n_samples = (uint32_t)u;
            have_n = true;
        } else if (!strcmp(key, "seed")) {
            if (get_u64(c, v, "sample.seed", UINT64_MAX, &s->sample_seed)) return -1;
        } else if (!strcmp(key, "method")) {
            const char *mv = scalar(v);
            if (mv && !strcmp(mv, "lhs"))
                s->lhs = true;
            else if (mv && !strcmp(mv, "random"))
                s->lhs = false;
            else
                return perr(c, v, "sample.method: random or lhs");
        } else if (!strcmp(key, "params")) {
            if (v->type != YAML_MAPPING_NODE) return perr(c, v, "sample.params: a mapping");
            for (yaml_node_pair_t *r = v->data.mapping.pairs.start; r < v->data.mapping.pairs.top;
                 r++)
                if (parse_sample_param(c, ynode(c, r->key), ynode(c, r->value))) return -1;
        } else {
            return perr(c, k, "sample: unknown key '%s' (n, seed, method, params)", key);
        }
    }
    if (!have_n) return perr(c, m, "sample: n (the number of samples) is required");
    return 0;
}

/* seeds: [A, B, ...]: each once, refused at the first that repeats an earlier one. */
static int push_seed_values(struct pctx *c, yaml_node_t *v, struct seen *t)
{
    struct sw_spec *s = c->spec;
    uint64_t u;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        if (get_u64(c, ynode(c, *it), "seeds", UINT64_MAX, &u)) return -1;
        if (seen_u64(t, s->seeds, u, s->n_seeds))
            return perr(c, v, "seeds: %llu twice", (unsigned long long)u);
        uint64_t *ns = room_for(s->seeds, s->n_seeds, sizeof(*ns));
        if (!ns) return perr(c, v, "out of memory");
        s->seeds = ns;
        ns[s->n_seeds++] = u;
        if (s->n_seeds > MAX_VALUES) return perr(c, v, "seeds: too many");
    }
    if (!s->n_seeds) return perr(c, v, "seeds: an empty list");
    return 0;
}

static int parse_seed_list(struct pctx *c, yaml_node_t *v)
{
    struct seen t;
    size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (seen_init(&t, n)) return perr(c, v, "out of memory");
    int rc = push_seed_values(c, v, &t);
    free(t.slot);
    return rc;
}

static int parse_seeds(struct pctx *c, yaml_node_t *v)
{
    struct sw_spec *s = c->spec;
    uint64_t u;
    if (v->type == YAML_SEQUENCE_NODE) return parse_seed_list(c, v);
    if (get_u64(c, v, "seeds", MAX_VALUES, &u)) return -1;
    if (!u) return perr(c, v, "seeds: at least 1");
    s->seeds = malloc(u * sizeof(*s->seeds));
    if (!s->seeds) return perr(c, v, "out of memory");
    for (uint64_t i = 0; i < u; i++) s->seeds[i] = i + 1;
    s->n_seeds = (uint32_t)u;
    return 0;
}

static int parse_top_key(struct pctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
    struct sw_spec *s = c->spec;
    /* the base's files as written, not as resolved: a campaign read through another path
     * (the Slurm job uses absolute ones) keeps its ids */
    if (!strcmp(key, "scenario") || !strcmp(key, "hpcc") || !strcmp(key, "topology") ||
        !strcmp(key, "flows")) {
        const char *sv = scalar(v);
        size_t len =
            (s->base_files ? strlen(s->base_files) : 0) + strlen(key) + (sv ? strlen(sv) : 0) + 3;
        char *nb = realloc(s->base_files, len);
        if (!nb) return perr(c, v, "out of memory");
        if (!s->base_files) nb[0] = 0;
        s->base_files = nb;
        snprintf(nb + strlen(nb), len - strlen(nb), "%s=%s\n", key, sv ? sv : "");
    }
    if (!strcmp(key, "scenario")) {
        const char *sv = scalar(v);
        if (sv && is_builtin(sv)) return get_str(c, v, "scenario", &s->scenario);
        return get_path(c, v, "scenario", &s->scenario);
    }
    if (!strcmp(key, "hpcc")) return get_path(c, v, "hpcc", &s->hpcc);
    if (!strcmp(key, "topology")) return get_path(c, v, "topology", &s->topology);
    if (!strcmp(key, "flows")) return get_path(c, v, "flows", &s->flows);
    if (!strcmp(key, "cc")) return get_str(c, v, "cc", &s->cc);
    if (!strcmp(key, "ns3_compat")) {
        const char *b = scalar(v);
        if (!b || (strcmp(b, "true") && strcmp(b, "false")))
            return perr(c, v, "ns3_compat: true or false");
        s->ns3_compat = !strcmp(b, "true");
        return 0;
    }
    if (!strcmp(key, "until") || !strcmp(key, "timeout")) {
        /* until: simulated time; timeout: wall-clock time of one point (bare number = s) */
        bool until = !strcmp(key, "until");
        double x;
        const char *u, *t = scalar(v);
        static const char *const tu[] = {"", "ns", "us", "ms", "s", "min", "h"};
        bool ok = t && split_number(t, &x, &u) && x >= 0;
        int i = 0;
        while (ok && i < 7 && strcasecmp(u, tu[i])) i++;
        if (!ok || i == 7 || (until && i > 4) || (!until && (x <= 0 || (i >= 1 && i <= 3))))
            return perr(c, v,
                        until ? "until: expected a simulated time (e.g. 50ms)"
                              : "timeout: expected a wall-clock time (e.g. 90s, 10min, 2h)");
        if (!until) {
            s->timeout_s = x * (i == 5 ? 60 : i == 6 ? 3600 : 1);
            return 0;
        }
        x *= unit_mult(u);
        if (x > (double)FE_SIM_MAX_TIME) return perr(c, v, "until: too long");
        s->until_ns = (uint64_t)llround(x);
        return 0;
    }
    if (!strcmp(key, "set")) return parse_sets(c, v);
    if (!strcmp(key, "grid")) return parse_grid(c, v);
    if (!strcmp(key, "sample")) return parse_sample(c, v);
    if (!strcmp(key, "seeds")) return parse_seeds(c, v);
    return perr(c, k,
                "unknown key '%s' (scenario, hpcc, topology, flows, cc, ns3_compat, until, "
                "timeout, set, grid, sample, seeds)",
                key);
}

/* Column names: the key with every other character as '_' (link.delay -> link_delay); the
 * names of the fixed and metric columns are refused. */
static int name_columns(struct pctx *c)
{
    static const char *const fixed[] = {"id",    "idx",    "seed",   "status", "error", "wall_s",
                                        "cpu_s", "params", "run_id", "flow",   NULL};
    struct sw_spec *s = c->spec;
    for (uint32_t i = 0; i < s->n_params; i++) {
        struct sw_param *p = &s->params[i];
        size_t j = 0;
        for (const char *k = p->key; *k && j + 1 < sizeof(p->col); k++)
            p->col[j++] = isalnum((unsigned char)*k) ? *k : '_';
        p->col[j] = 0;
        if (isdigit((unsigned char)p->col[0])) p->col[0] = '_';
        bool clash = false;
        for (int f = 0; fixed[f]; f++) clash |= !strcasecmp(p->col, fixed[f]);
        for (int m = 0; m < SW_N_METRICS; m++) clash |= !strcasecmp(p->col, sw_metric_names[m]);
        for (uint32_t q = 0; q < i; q++) clash |= !strcasecmp(p->col, s->params[q].col);
        if (clash)
            return perr(c, NULL, "parameter '%s': its column name '%s' is taken", p->key, p->col);
    }
    return 0;
}

/* Whether a collection is referred to twice (an alias): aliases could repeat a node
 * exponentially, and a campaign has no use for them. */
static bool has_alias(yaml_document_t *doc)
{
    size_t n = (size_t)(doc->nodes.top - doc->nodes.start);
    unsigned char *refs = calloc(n + 1, 1);
    bool alias = !refs;
    for (yaml_node_t *m = doc->nodes.start; m < doc->nodes.top && !alias; m++) {
        if (m->type == YAML_MAPPING_NODE) {
            for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
                 p++)
                alias |= refs[p->key]++ || refs[p->value]++;
        } else if (m->type == YAML_SEQUENCE_NODE) {
            for (yaml_node_item_t *it = m->data.sequence.items.start;
                 it < m->data.sequence.items.top; it++)
                alias |= refs[*it]++ > 0;
        }
    }
    free(refs);
    return alias;
}

int sw_spec_parse(const char *text, size_t len, const char *name, const char *dir,
                  struct sw_spec *spec, char *err, size_t err_cap)
{
    memset(spec, 0, sizeof(*spec));
    spec->until_ns = FE_SIM_NO_TIME;
    yaml_parser_t parser;
    yaml_document_t doc;
    struct pctx c = {&doc, name, dir ? dir : "", spec, err, err_cap};
    if (!yaml_parser_initialize(&parser)) return perr(&c, NULL, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, err_cap, "%s:%lu: %s", name, (unsigned long)parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "YAML error");
        yaml_parser_delete(&parser);
        return -1;
    }
    yaml_parser_delete(&parser);
    int rc = 0;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (has_alias(&doc)) rc = perr(&c, NULL, "aliases are not supported in a campaign");
    if (!rc && (!root || root->type != YAML_MAPPING_NODE))
        rc = perr(&c, root, "expected a mapping (scenario:, grid:, ...)");
    for (yaml_node_pair_t *p = rc ? NULL : root->data.mapping.pairs.start;
         p && p < root->data.mapping.pairs.top && !rc; p++) {
        yaml_node_t *k = ynode(&c, p->key), *v = ynode(&c, p->value);
        const char *key = scalar(k);
        bool twice = false;
        for (yaml_node_pair_t *q = root->data.mapping.pairs.start; key && q < p; q++) {
            const char *kq = scalar(ynode(&c, q->key));
            twice |= kq && !strcmp(kq, key);
        }
        if (!key)
            rc = perr(&c, k, "expected a key");
        else if (twice)
            rc = perr(&c, k, "'%s' given twice", key);
        else if (!v)
            rc = perr(&c, k, "%s: no value", key);
        else
            rc = parse_top_key(&c, key, k, v);
    }
    if (!rc && !!spec->scenario + !!spec->hpcc != 1)
        rc = perr(&c, root, "give one base: scenario: (built-in name or YAML file) or hpcc:");
    if (!rc && (spec->topology || spec->flows) && !spec->hpcc)
        rc = perr(&c, root, "topology: and flows: go with hpcc:");
    if (!rc) rc = name_columns(&c);
    if (!rc && (!(spec->text = malloc(len + 1)) || !(spec->path = xstrdup(name)) ||
                !(spec->dir = xstrdup(dir ? dir : ""))))
        rc = perr(&c, NULL, "out of memory");
    if (!rc) {
        memcpy(spec->text, text, len);
        spec->text[len] = 0;
    }
    yaml_document_delete(&doc);
    if (rc) sw_spec_free(spec);
    return rc;
}

void sw_spec_free(struct sw_spec *s)
{
    free(s->path);
    free(s->dir);
    free(s->text);
    free(s->scenario);
    free(s->hpcc);
    free(s->topology);
    free(s->flows);
    free(s->base_files);
    free(s->cc);
    for (uint32_t i = 0; i < s->n_sets; i++) free(s->sets[i]);
    free(s->sets);
    for (uint32_t i = 0; i < s->n_params; i++) {
        for (uint32_t j = 0; j < s->params[i].n_values; j++) free(s->params[i].values[j]);
        free(s->params[i].values);
        free(s->params[i].key);
    }
    free(s->params);
    free(s->seeds);
    memset(s, 0, sizeof(*s));
}

/* ---- applying settings ---- */

static int apply_red(struct fe_sim_scenario *sc, const char *key, const char *value, char *err,
                     size_t err_cap)
{
    double v;
    bool is_int;
    bool pmax = !strcmp(key, "red.pmax");
    if (strcmp(key, "red.kmin") && strcmp(key, "red.kmax") && !pmax) {
        snprintf(err, err_cap, "unknown key '%s' (red.kmin, red.kmax, red.pmax)", key);
        return FE_ENOENT;
    }
    if (!sw_value_number(value, &v, &is_int) || v < 0 || (pmax && v > 1) || (!pmax && v > 1e12)) {
        snprintf(err, err_cap, "%s: bad value '%s' (%s)", key, value,
                 pmax ? "a probability 0..1" : "a size, e.g. 50KB");
        return FE_EINVAL;
    }
    if (!sc->sw.n_red) {
        snprintf(err, err_cap, "%s: the scenario has no RED/ECN entry to change", key);
        return FE_EINVAL;
    }
    for (int i = 0; i < sc->sw.n_red; i++) {
        struct fe_sim_red *r = &sc->sw.red[i];
        if (pmax)
            r->pmax_ppm = (uint32_t)(v * 1e6 + 0.5);
        else if (!strcmp(key, "red.kmin"))
            r->kmin_bytes = (uint64_t)llround(v);
        else
            r->kmax_bytes = (uint64_t)llround(v);
    }
    return 0;
}

static int apply_cc_param(struct fe_sim_scenario *sc, const char *key, const char *value, char *err,
                          size_t err_cap)
{
    char msg[256] = "";
    bool any = false;
    for (uint32_t i = 0; i < sc->n_cc; i++) {
        struct fe_sim_cc *c = &sc->cc[i];
        if (!c->algo) continue;
        any = true;
        if (fe_cc_params_set(&c->params, key, value, msg, sizeof(msg))) {
            snprintf(err, err_cap, "%s=%s: %s", key, value, msg);
            return FE_EINVAL;
        }
    }
    if (!any) {
        snprintf(err, err_cap,
                 "'%s' is not a scenario key and the scenario has no congestion "
                 "control for a CC parameter of that name",
                 key);
        return FE_ENOENT;
    }
    return 0;
}

int sw_apply(struct fe_sim_scenario *sc, const char *key, const char *value, char *err,
             size_t err_cap)
{
    if (!strcmp(key, "cc")) {
        bool none = !strcmp(value, "none");
        for (uint32_t i = 0; i < sc->n_cc; i++)
            if (fe_sim_scenario_set_cc(sc, (int)i, none ? NULL : value, NULL, err, err_cap) < 0)
                return FE_EINVAL;
        return 0;
    }
    if (!strncmp(key, "red.", 4)) return apply_red(sc, key, value, err, err_cap);
    if (strchr(key, '.') || !strcmp(key, "seed") || !strcmp(key, "stop") || !strcmp(key, "name")) {
        char a[512];
        if ((size_t)snprintf(a, sizeof(a), "%s=%s", key, value) >= sizeof(a)) {
            snprintf(err, err_cap, "%s: value too long", key);
            return FE_EINVAL;
        }
        return fe_sim_scenario_set(sc, a, err, err_cap);
    }
    return apply_cc_param(sc, key, value, err, err_cap);
}

static int apply_assignment(struct fe_sim_scenario *sc, const char *a, char *err, size_t err_cap)
{
    char key[256];
    const char *eq = strchr(a, '=');
    if (!eq || (size_t)(eq - a) >= sizeof(key)) {
        snprintf(err, err_cap, "'%s': expected KEY=VALUE", a);
        return FE_EINVAL;
    }
    memcpy(key, a, (size_t)(eq - a));
    key[eq - a] = 0;
    return sw_apply(sc, key, eq + 1, err, err_cap);
}

int sw_scenario_copy(struct fe_sim_scenario *dst, const struct fe_sim_scenario *src)
{
    *dst = *src;
    dst->nodes = NULL;
    dst->links = NULL;
    dst->flows = NULL;
    dst->cap_nodes = src->n_nodes;
    dst->cap_links = src->n_links;
    dst->cap_flows = src->n_flows;
    if (src->n_nodes && !(dst->nodes = malloc(src->n_nodes * sizeof(*src->nodes)))) goto fail;
    if (src->n_links && !(dst->links = malloc(src->n_links * sizeof(*src->links)))) goto fail;
    if (src->n_flows && !(dst->flows = malloc(src->n_flows * sizeof(*src->flows)))) goto fail;
    if (src->n_nodes) memcpy(dst->nodes, src->nodes, src->n_nodes * sizeof(*src->nodes));
    if (src->n_links) memcpy(dst->links, src->links, src->n_links * sizeof(*src->links));
    if (src->n_flows) memcpy(dst->flows, src->flows, src->n_flows * sizeof(*src->flows));
    return 0;
fail:
    fe_sim_scenario_free(dst);
    return -1;
}

/* ---- the campaign ---- */

static int load_base(struct sw_campaign *c, char *err, size_t err_cap)
{
    struct sw_spec *s = &c->spec;
    char msg[SW_ERR_LEN] = "";
    int rc;
    if (s->hpcc) {
        struct fe_sim_hpcc_files hf;
        rc = fe_sim_hpcc_load(s->hpcc, s->topology, s->flows, &c->base, &hf, msg, sizeof(msg));
    } else if (is_builtin(s->scenario)) {
        rc = fe_sim_builtin_load(s->scenario, &c->base, msg, sizeof(msg));
    } else {
        rc = fe_sim_scenario_load_yaml(s->scenario, &c->base, msg, sizeof(msg));
    }
    if (rc) {
        snprintf(err, err_cap, "%s: the base scenario: %s", s->path, msg);
        return -1;
    }
    if (s->cc && sw_apply(&c->base, "cc", s->cc, msg, sizeof(msg))) {
        snprintf(err, err_cap, "%s: cc: %s", s->path, msg);
        return -1;
    }
    for (uint32_t i = 0; i < s->n_sets; i++)
        if (apply_assignment(&c->base, s->sets[i], msg, sizeof(msg))) {
            snprintf(err, err_cap, "%s: set: %s", s->path, msg);
            return -1;
        }
    return 0;
}

/* Every value of every parameter on a copy of the base: an unknown key or a bad value is
 * refused before anything runs. */
static int validate_param(struct sw_campaign *c, const struct sw_param *p, const char *value,
                          char *err, size_t err_cap)
{
    struct fe_sim_scenario sc;
    char msg[SW_ERR_LEN] = "";
    if (sw_scenario_copy(&sc, &c->base)) {
        snprintf(err, err_cap, "out of memory");
        return -1;
    }
    int rc = sw_apply(&sc, p->key, value, msg, sizeof(msg));
    fe_sim_scenario_free(&sc);
    if (rc)
        snprintf(err, err_cap, "%s: %s %s: %s", c->spec.path, p->sampled ? "sample" : "grid",
                 p->key, msg);
    return rc ? -1 : 0;
}

static void type_param(struct sw_param *p, char **values, uint32_t n)
{
    p->type = SW_COL_INT;
    for (uint32_t i = 0; i < n; i++) {
        double v;
        bool is_int;
        if (!sw_value_number(values[i], &v, &is_int)) {
            p->type = SW_COL_TEXT;
            return;
        }
        if (!is_int) p->type = SW_COL_REAL;
    }
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s)
{
    return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0);
}

static void sample_text(const struct sw_param *p, double u, char *out, size_t cap)
{
    double v =
        p->log ? exp(log(p->lo) + u * (log(p->hi) - log(p->lo))) : p->lo + u * (p->hi - p->lo);
    if (p->integer)
        snprintf(out, cap, "%.0f%s", floor(v + 0.5), p->unit);
    else
        snprintf(out, cap, "%.6g%s", v, p->unit);
}

/* samples[k][j]: sample k's value of the j-th sampled parameter */
static char **draw_samples(const struct sw_spec *s, uint32_t n_sampled, const uint32_t *which)
{
    uint32_t n = s->n_samples;
    char **out = calloc((size_t)n * n_sampled + 1, sizeof(*out));
    uint32_t *perm = malloc((n ? n : 1) * sizeof(*perm));
    if (!out || !perm) goto fail;
    uint64_t rng = s->sample_seed;
    for (uint32_t j = 0; j < n_sampled; j++) {
        const struct sw_param *p = &s->params[which[j]];
        for (uint32_t k = 0; k < n; k++) perm[k] = k;
        if (s->lhs)
            for (uint32_t k = n; k > 1; k--) {
                uint32_t r = (uint32_t)(splitmix(&rng) % k);
                uint32_t t = perm[k - 1];
                perm[k - 1] = perm[r];
                perm[r] = t;
            }
        for (uint32_t k = 0; k < n; k++) {
            double u = uniform01(&rng);
            if (s->lhs) u = (perm[k] + u) / n;
            char v[64];
            sample_text(p, u, v, sizeof(v));
            if (!(out[(size_t)k * n_sampled + j] = xstrdup(v))) goto fail;
        }
    }
    free(perm);
    return out;
fail:
    if (out)
        for (size_t i = 0; i < (size_t)n * n_sampled; i++) free(out[i]);
    free(out);
    free(perm);
    return NULL;
}

static void base_hash(struct sw_campaign *c)
{
    const struct sw_spec *s = &c->spec;
    char buf[8192];
    size_t n = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        int w = snprintf(buf + n, sizeof(buf) - n, __VA_ARGS__);                                   \
        if (w > 0) n = n + (size_t)w < sizeof(buf) ? n + (size_t)w : sizeof(buf) - 1;              \
    } while (0)
    ADD("%scc=%s\nns3=%d\nuntil=%llu\n", s->base_files ? s->base_files : "", s->cc ? s->cc : "",
        s->ns3_compat, (unsigned long long)s->until_ns);
    for (uint32_t i = 0; i < s->n_sets; i++) ADD("set %s\n", s->sets[i]);
#undef ADD
    sw_hash_hex(buf, n, 0, c->base_hash);
}

static void point_id(const struct sw_campaign *c, struct sw_point *p)
{
    const struct sw_spec *s = &c->spec;
    char buf[8192];
    size_t n = (size_t)snprintf(buf, sizeof(buf), "%s\n", c->base_hash);
    /* by key, so that reordering the campaign's parameters keeps the ids */
    bool used[256] = {false};
    for (uint32_t k = 0; k < s->n_params && k < 256; k++) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < s->n_params && i < 256; i++)
            if (!used[i] &&
                (best == UINT32_MAX || strcmp(s->params[i].key, s->params[best].key) < 0))
                best = i;
        used[best] = true;
        int w = snprintf(buf + n, sizeof(buf) - n, "%s=%s\n", s->params[best].key, p->values[best]);
        if (w > 0) n = n + (size_t)w < sizeof(buf) ? n + (size_t)w : sizeof(buf) - 1;
    }
    if (p->has_seed) {
        int w = snprintf(buf + n, sizeof(buf) - n, "seed=%llu\n", (unsigned long long)p->seed);
        if (w > 0) n = n + (size_t)w < sizeof(buf) ? n + (size_t)w : sizeof(buf) - 1;
    }
    sw_hash_hex(buf, n, 0, p->id);
}

static int count_points(const struct sw_spec *s, uint64_t *total, char *err, size_t err_cap)
{
    uint64_t t = s->n_seeds ? s->n_seeds : 1;
    bool sampled = false;
    for (uint32_t i = 0; i < s->n_params; i++) {
        if (s->params[i].sampled)
            sampled = true;
        else
            t *= s->params[i].n_values;
        if (t > MAX_POINTS) break;
    }
    if (sampled && t <= MAX_POINTS) t *= s->n_samples ? s->n_samples : 1;
    if (t > MAX_POINTS) {
        snprintf(err, err_cap, "%s: more than %u points", s->path, MAX_POINTS);
        return -1;
    }
    if (sampled && !s->n_samples) {
        snprintf(err, err_cap, "%s: sample: n is required", s->path);
        return -1;
    }
    *total = t;
    return 0;
}

/* The points: grid values (first parameter slowest), then samples, then seeds. */
static int expand(struct sw_campaign *c, char *err, size_t err_cap)
{
    const struct sw_spec *s = &c->spec;
    uint64_t total;
    if (count_points(s, &total, err, err_cap)) return -1;
    uint32_t n_sampled = 0, which[256];
    if (s->n_params > 256) {
        snprintf(err, err_cap, "%s: more than 256 parameters", s->path);
        return -1;
    }
    for (uint32_t i = 0; i < s->n_params; i++)
        if (s->params[i].sampled) which[n_sampled++] = i;
    char **samples = NULL;
    if (n_sampled && !(samples = draw_samples(s, n_sampled, which))) goto oom;
    c->points = calloc(total, sizeof(*c->points));
    if (!c->points) goto oom;
    uint32_t n_seeds = s->n_seeds ? s->n_seeds : 1, n_samp = n_sampled ? s->n_samples : 1;
    for (uint64_t k = 0; k < total; k++) {
        struct sw_point *p = &c->points[k];
        p->index = (uint32_t)k;
        p->has_seed = s->n_seeds > 0;
        p->seed = s->n_seeds ? s->seeds[k % n_seeds] : c->base.seed;
        uint64_t rest = k / n_seeds, samp = rest % n_samp;
        rest /= n_samp;
        if (!(p->values = calloc(s->n_params ? s->n_params : 1, sizeof(*p->values)))) goto oom;
        c->n_points = (uint32_t)k + 1;
        for (uint32_t i = s->n_params; i-- > 0;) {
            const struct sw_param *q = &s->params[i];
            if (q->sampled) continue;
            p->values[i] = xstrdup(q->values[rest % q->n_values]);
            rest /= q->n_values;
            if (!p->values[i]) goto oom;
        }
        for (uint32_t j = 0; j < n_sampled; j++)
            if (!(p->values[which[j]] = xstrdup(samples[samp * n_sampled + j]))) goto oom;
        point_id(c, p);
    }
    if (samples) {
        for (size_t i = 0; i < (size_t)s->n_samples * n_sampled; i++) free(samples[i]);
        free(samples);
    }
    return 0;
oom:
    if (samples) {
        for (size_t i = 0; i < (size_t)s->n_samples * n_sampled; i++) free(samples[i]);
        free(samples);
    }
    snprintf(err, err_cap, "out of memory");
    return -1;
}

/* Validates each parameter's values (grid: all; sampled: the bounds and the drawn values) and
 * gives each its column type. */
static int validate_params(struct sw_campaign *c, char *err, size_t err_cap)
{
    struct sw_spec *s = &c->spec;
    for (uint32_t i = 0; i < s->n_params; i++) {
        struct sw_param *p = &s->params[i];
        if (!p->sampled) {
            for (uint32_t j = 0; j < p->n_values; j++)
                if (validate_param(c, p, p->values[j], err, err_cap)) return -1;
            type_param(p, p->values, p->n_values);
            continue;
        }
        char **vals = malloc((c->n_points ? c->n_points : 1) * sizeof(*vals));
        if (!vals) return -1;
        uint32_t n = 0;
        for (uint32_t k = 0; k < c->n_points; k++) {
            bool seen = false;
            /* the samples repeat over grid points and seeds: validate each text once */
            for (uint32_t j = 0; j < n && !seen && j < 64; j++)
                seen = !strcmp(vals[j], c->points[k].values[i]);
            if (!seen && validate_param(c, p, c->points[k].values[i], err, err_cap)) {
                free(vals);
                return -1;
            }
            vals[n++] = c->points[k].values[i];
        }
        type_param(p, vals, n);
        free(vals);
    }
    return 0;
}

int sw_campaign_build(struct sw_campaign *c, char *err, size_t err_cap)
{
    if (load_base(c, err, err_cap)) return -1;
    base_hash(c);
    if (expand(c, err, err_cap)) return -1;
    return validate_params(c, err, err_cap);
}

int sw_campaign_load(const char *path, struct sw_campaign *c, char *err, size_t err_cap)
{
    memset(c, 0, sizeof(*c));
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_cap, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *nt = cap > (16u << 20) ? NULL : realloc(text, cap);
            if (!nt) {
                free(text);
                fclose(f);
                snprintf(err, err_cap, "%s: too large", path);
                return -1;
            }
            text = nt;
        }
        size_t r = fread(text + len, 1, cap - len, f);
        len += r;
        if (!r) break;
    }
    fclose(f);
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        dir[0] = 0;
    int rc = sw_spec_parse(text, len, path, dir, &c->spec, err, err_cap);
    free(text);
    if (rc) return -1;
    fe_sim_scenario_init(&c->base);
    rc = sw_campaign_build(c, err, err_cap);
    if (rc) sw_campaign_free(c);
    return rc;
}

void sw_campaign_free(struct sw_campaign *c)
{
    for (uint32_t k = 0; k < c->n_points; k++) {
        for (uint32_t i = 0; i < c->spec.n_params; i++) free(c->points[k].values[i]);
        free(c->points[k].values);
    }
    free(c->points);
    fe_sim_scenario_free(&c->base);
    sw_spec_free(&c->spec);
    memset(c, 0, sizeof(*c));
}
