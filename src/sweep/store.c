/* The campaign database (SQLite): `campaign` (the spec, feroce's version, the base hash),
 * `runs` (one row per point: its parameters and metrics as typed columns) and `flows` (one row
 * per flow of each run). A point's rows are written in one transaction, so a killed campaign
 * never leaves half a point. */
#include <math.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep/sweep.h"

#ifndef FEROCE_VERSION
#define FEROCE_VERSION "unknown"
#endif

struct sw_store {
    sqlite3 *db;
    bool writer;
    sqlite3_stmt *has, *put_run, *put_flow, *del_run;
    uint32_t n_params;
};

static int dberr(sqlite3 *db, const char *what, char *err, size_t err_cap)
{
    snprintf(err, err_cap, "%s: %s", what, db ? sqlite3_errmsg(db) : "cannot open");
    return -1;
}

static int exec(sqlite3 *db, const char *sql, char *err, size_t err_cap)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, err_cap, "database: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static const char *sql_type(enum sw_coltype t)
{
    return t == SW_COL_INT ? "INTEGER" : t == SW_COL_REAL ? "REAL" : "TEXT";
}

/* A growing SQL text. */
struct sbuf {
    char *s;
    size_t n, cap;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0) return;
        if (b->s && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        size_t cap = (b->cap + (size_t)w + 1) * 2;
        char *ns = realloc(b->s, cap);
        if (!ns) return;
        b->s = ns;
        b->cap = cap;
    }
}

static char *runs_schema(const struct sw_campaign *c)
{
    struct sbuf b = {0};
    sb_add(&b, "CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, idx INTEGER, seed INTEGER, "
               "params TEXT");
    for (uint32_t i = 0; i < c->spec.n_params; i++)
        sb_add(&b, ", \"%s\" %s", c->spec.params[i].col, sql_type(c->spec.params[i].type));
    sb_add(&b, ", status TEXT, error TEXT, wall_s REAL, cpu_s REAL");
    for (int i = 0; i < SW_N_METRICS; i++)
        sb_add(&b, ", %s %s", sw_metric_names[i], sw_metric_is_real[i] ? "REAL" : "INTEGER");
    sb_add(&b, ");\nCREATE TABLE IF NOT EXISTS flows (run_id TEXT, flow INTEGER");
    for (int i = 0; i < SW_N_FLOW_FIELDS; i++)
        sb_add(&b, ", %s %s", sw_flow_field_names[i],
               sw_flow_field_is_real[i] ? "REAL" : "INTEGER");
    sb_add(&b, ", PRIMARY KEY (run_id, flow));\n"
               "CREATE TABLE IF NOT EXISTS campaign (key TEXT PRIMARY KEY, value TEXT);");
    return b.s;
}

/* What makes two campaigns share a database: the base and the parameters (names, columns). */
static char *signature(const struct sw_campaign *c)
{
    struct sbuf b = {0};
    sb_add(&b, "base %s\n", c->base_hash);
    for (uint32_t i = 0; i < c->spec.n_params; i++)
        sb_add(&b, "param %s %s %s\n", c->spec.params[i].key, c->spec.params[i].col,
               sql_type(c->spec.params[i].type));
    return b.s;
}

static int get_meta(sqlite3 *db, const char *key, char **out)
{
    sqlite3_stmt *st;
    *out = NULL;
    if (sqlite3_prepare_v2(db, "SELECT value FROM campaign WHERE key = ?", -1, &st, NULL))
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        *out = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return 0;
}

static int put_meta(sqlite3 *db, const char *key, const char *value)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO campaign (key, value) VALUES (?, ?)", -1,
                           &st, NULL))
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

/* Records the campaign in a new database; refuses one made for other points. */
static int check_campaign(sqlite3 *db, const struct sw_campaign *c, char *err, size_t err_cap)
{
    char *sig = signature(c), *old = NULL;
    int rc = sig ? 0 : -1;
    if (!rc && get_meta(db, "signature", &old)) rc = dberr(db, "database", err, err_cap);
    if (!rc && old && strcmp(old, sig)) {
        snprintf(err, err_cap,
                 "the database holds another campaign (its base scenario, fixed settings or "
                 "parameters differ): give another --db, or delete it to start over");
        rc = -1;
    }
    if (!rc && !old) {
        char when[32];
        time_t t = time(NULL);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
        if (exec(db, "BEGIN", err, err_cap) || put_meta(db, "signature", sig) ||
            put_meta(db, "spec", c->spec.text) || put_meta(db, "spec_path", c->spec.path) ||
            put_meta(db, "feroce_version", FEROCE_VERSION) || put_meta(db, "created", when) ||
            put_meta(db, "base_hash", c->base_hash) || exec(db, "COMMIT", err, err_cap))
            rc = dberr(db, "database", err, err_cap);
    }
    free(sig);
    free(old);
    return rc;
}

/* The runs table's column names (n of them), or NULL. */
static char **runs_columns(sqlite3 *db, size_t *n)
{
    sqlite3_stmt *st;
    char **names = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info('runs')", -1, &st, NULL))
        return NULL;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char **nn = realloc(names, (*n + 1) * sizeof(*nn));
        const unsigned char *t = sqlite3_column_text(st, 0);
        if (!nn) break;
        names = nn;
        names[*n] = strdup(t ? (const char *)t : "");
        if (names[*n]) (*n)++;
    }
    sqlite3_finalize(st);
    return names;
}

static bool has_column(char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
}

static long long count_runs(sqlite3 *db)
{
    sqlite3_stmt *st;
    long long n = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM runs", -1, &st, NULL)) return -1;
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Whether the campaign's points build events (the base scenario, or a parameter that names
 * front-ends). */
static bool campaign_has_eb(const struct sw_campaign *c)
{
    if (c->base.eb.n_frontends) return true;
    for (uint32_t i = 0; i < c->spec.n_params; i++)
        if (!strcmp(c->spec.params[i].key, "eb.frontends")) return true;
    return false;
}

/* Adds the metric columns a database made by an older feroce lacks, which resumes it: its
 * points keep NULL there. Refused when those are event-building metrics of an event-building
 * campaign with points stored (they would stay without them), and when the columns are not
 * this feroce's after that (a database of a newer one). */
static int check_columns(sqlite3 *db, const struct sw_campaign *c, char *err, size_t err_cap)
{
    size_t n = 0;
    char **names = runs_columns(db, &n);
    struct sbuf b = {0};
    const char *missing = NULL;
    size_t added = 0;
    sb_add(&b, "BEGIN;");
    for (int i = 0; i < SW_N_METRICS; i++) {
        if (has_column(names, n, sw_metric_names[i])) continue;
        if (!missing) missing = sw_metric_names[i];
        added++;
        sb_add(&b, " ALTER TABLE runs ADD COLUMN %s %s;", sw_metric_names[i],
               sw_metric_is_real[i] ? "REAL" : "INTEGER");
    }
    sb_add(&b, " COMMIT;");
    size_t want = 8 + (size_t)c->spec.n_params + SW_N_METRICS;
    int rc = names && b.s ? 0 : dberr(db, "database", err, err_cap);
    long long stored = rc || !missing ? 0 : count_runs(db);
    if (!rc && missing && stored > 0 && !strncmp(missing, "eb_", 3) && campaign_has_eb(c)) {
        snprintf(err, err_cap,
                 "the database was made by an older feroce without the event-building metrics "
                 "(%s, ...): its %lld stored points would have none; give another --db, or "
                 "delete it to start over",
                 missing, stored);
        rc = -1;
    }
    if (!rc && n + added != want) {
        snprintf(err, err_cap,
                 "the database's runs table has %zu columns where this feroce writes %zu (made "
                 "by another version?): give another --db, or delete it to start over",
                 n + added, want);
        rc = -1;
    }
    if (!rc && missing) rc = exec(db, b.s, err, err_cap);
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    free(b.s);
    return rc;
}

static int prepare(struct sw_store *s, const struct sw_campaign *c, char *err, size_t err_cap)
{
    struct sbuf b = {0};
    sb_add(&b, "INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?");
    for (uint32_t i = 0; i < c->spec.n_params; i++) sb_add(&b, ", ?");
    sb_add(&b, ", ?, ?, ?, ?");
    for (int i = 0; i < SW_N_METRICS; i++) sb_add(&b, ", ?");
    sb_add(&b, ")");
    if (!b.s) return -1;
    s->n_params = c->spec.n_params;
    int rc = sqlite3_prepare_v2(s->db, b.s, -1, &s->put_run, NULL);
    free(b.s);
    b = (struct sbuf){0};
    sb_add(&b, "INSERT OR REPLACE INTO flows VALUES (?, ?");
    for (int i = 0; i < SW_N_FLOW_FIELDS; i++) sb_add(&b, ", ?");
    sb_add(&b, ")");
    if (!rc && b.s) rc = sqlite3_prepare_v2(s->db, b.s, -1, &s->put_flow, NULL);
    free(b.s);
    if (!rc)
        rc = sqlite3_prepare_v2(s->db, "SELECT status FROM runs WHERE id = ?", -1, &s->has, NULL);
    if (!rc) rc = sqlite3_prepare_v2(s->db, "DELETE FROM runs WHERE id = ?", -1, &s->del_run, NULL);
    return rc ? dberr(s->db, "database", err, err_cap) : 0;
}

static struct sw_store *open_db(const char *path, int flags, char *err, size_t err_cap)
{
    struct sw_store *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
        snprintf(err, err_cap, "%s: %s", path, s->db ? sqlite3_errmsg(s->db) : "cannot open");
        sw_store_close(s);
        return NULL;
    }
    sqlite3_busy_timeout(s->db, 30000);
    return s;
}

struct sw_store *sw_store_open(const char *path, const struct sw_campaign *c, char *err,
                               size_t err_cap)
{
    struct sw_store *s = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, err, err_cap);
    if (!s) return NULL;
    /* WAL: a commit appends to the log without syncing the database file, and a kill -9 at
     * any moment leaves the last committed point; NORMAL syncs at checkpoints only. */
    char *schema = runs_schema(c);
    int rc = schema ? 0 : -1;
    if (!rc) rc = exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err, err_cap);
    if (!rc) rc = exec(s->db, schema, err, err_cap);
    free(schema);
    if (!rc) rc = check_campaign(s->db, c, err, err_cap);
    if (!rc) rc = check_columns(s->db, c, err, err_cap);
    if (!rc) rc = prepare(s, c, err, err_cap);
    s->writer = !rc;
    if (rc) {
        sw_store_close(s);
        return NULL;
    }
    return s;
}

struct sw_store *sw_store_open_ro(const char *path, char *err, size_t err_cap)
{
    struct sw_store *s = open_db(path, SQLITE_OPEN_READONLY, err, err_cap);
    if (!s) return NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM runs LIMIT 1", -1, &st, NULL)) {
        snprintf(err, err_cap, "%s: not a feroce sweep database (%s)", path, sqlite3_errmsg(s->db));
        sw_store_close(s);
        return NULL;
    }
    sqlite3_finalize(st);
    return s;
}

void sw_store_close(struct sw_store *s)
{
    if (!s) return;
    /* back to a plain database file, which readers (sqlite3, dataframes, report) open without
     * the -wal and -shm files; fails harmlessly while another connection has it open */
    sqlite3_finalize(s->has);
    sqlite3_finalize(s->put_run);
    sqlite3_finalize(s->put_flow);
    sqlite3_finalize(s->del_run);
    if (s->writer) sqlite3_exec(s->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
    sqlite3_close(s->db);
    free(s);
}

void *sw_store_db(struct sw_store *s)
{
    return s->db;
}

bool sw_store_has(struct sw_store *s, const char *id, enum sw_status *status)
{
    sqlite3_reset(s->has);
    sqlite3_bind_text(s->has, 1, id, -1, SQLITE_TRANSIENT);
    bool found = sqlite3_step(s->has) == SQLITE_ROW;
    if (found && status) {
        const unsigned char *t = sqlite3_column_text(s->has, 0);
        *status = t && !strcmp((const char *)t, "ok") ? SW_OK : SW_FAILED;
    }
    sqlite3_reset(s->has);
    return found;
}

static void bind_num(sqlite3_stmt *st, int k, double v, bool real)
{
    if (isnan(v))
        sqlite3_bind_null(st, k);
    else if (real)
        sqlite3_bind_double(st, k, v);
    else
        sqlite3_bind_int64(st, k, (sqlite3_int64)llround(v));
}

static void bind_param(sqlite3_stmt *st, int k, const struct sw_param *p, const char *value)
{
    double v;
    bool is_int;
    if (p->type == SW_COL_TEXT || !sw_value_number(value, &v, &is_int))
        sqlite3_bind_text(st, k, value, -1, SQLITE_TRANSIENT);
    else
        bind_num(st, k, v, p->type == SW_COL_REAL);
}

static char *params_text(const struct sw_campaign *c, const struct sw_point *p)
{
    struct sbuf b = {0};
    sb_add(&b, "%s", "");
    for (uint32_t i = 0; i < c->spec.n_params; i++)
        sb_add(&b, "%s%s=%s", i ? " " : "", c->spec.params[i].key, p->values[i]);
    return b.s;
}

static int insert_run(struct sw_store *s, const struct sw_campaign *c, const struct sw_point *p,
                      const struct sw_result *r)
{
    sqlite3_stmt *st = s->put_run;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    int k = 1;
    char *pt = params_text(c, p);
    sqlite3_bind_text(st, k++, p->id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, k++, p->index);
    sqlite3_bind_int64(st, k++, (sqlite3_int64)p->seed);
    sqlite3_bind_text(st, k++, pt ? pt : "", -1, SQLITE_TRANSIENT);
    free(pt);
    for (uint32_t i = 0; i < c->spec.n_params; i++)
        bind_param(st, k++, &c->spec.params[i], p->values[i]);
    sqlite3_bind_text(st, k++, r->status == SW_OK ? "ok" : "failed", -1, SQLITE_STATIC);
    if (r->error[0])
        sqlite3_bind_text(st, k++, r->error, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, k++);
    sqlite3_bind_double(st, k++, r->wall_s);
    sqlite3_bind_double(st, k++, r->cpu_s);
    for (int i = 0; i < SW_N_METRICS; i++) bind_num(st, k++, r->m[i], sw_metric_is_real[i]);
    return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

static int insert_flows(struct sw_store *s, const struct sw_result *r)
{
    for (uint32_t f = 0; f < r->n_flows; f++) {
        sqlite3_stmt *st = s->put_flow;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, r->id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, f);
        for (int j = 0; j < SW_N_FLOW_FIELDS; j++)
            bind_num(st, 3 + j, r->flows[f][j], sw_flow_field_is_real[j]);
        if (sqlite3_step(st) != SQLITE_DONE) return -1;
    }
    return 0;
}

int sw_store_put(struct sw_store *s, const struct sw_campaign *c, const struct sw_point *p,
                 const struct sw_result *r, bool replace, char *err, size_t err_cap)
{
    if (exec(s->db, "BEGIN IMMEDIATE", err, err_cap)) return -1;
    int rc = 0;
    if (replace) {
        sqlite3_reset(s->del_run);
        sqlite3_bind_text(s->del_run, 1, p->id, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(s->del_run) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(s->del_run);
        sqlite3_stmt *st;
        if (!rc &&
            !sqlite3_prepare_v2(s->db, "DELETE FROM flows WHERE run_id = ?", -1, &st, NULL)) {
            sqlite3_bind_text(st, 1, p->id, -1, SQLITE_TRANSIENT);
            rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
            sqlite3_finalize(st);
        }
    }
    if (!rc) rc = insert_run(s, c, p, r);
    /* INSERT OR IGNORE: a point stored before keeps its rows (collect runs twice, a Slurm
     * task ran a point the local run also did) */
    if (!rc && sqlite3_changes(s->db) > 0) rc = insert_flows(s, r);
    if (rc) {
        dberr(s->db, "database", err, err_cap);
        exec(s->db, "ROLLBACK", err + strlen(err), 0);
        return -1;
    }
    return exec(s->db, "COMMIT", err, err_cap);
}
