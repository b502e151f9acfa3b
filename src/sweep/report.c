/* `feroce sweep report`: the runs table filtered and sorted on expressions (expr.c), printed as
 * a table or CSV, or drawn by gnuplot: a heatmap of one metric over two parameters, or lines
 * over one (averaged over the seeds and whatever else is not on an axis). */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep/sweep.h"

struct cols {
    char **name;
    size_t n;
    size_t first_param, n_params; /* the parameter columns sit between params and status */
};

static void cols_free(struct cols *c)
{
    for (size_t i = 0; i < c->n; i++) free(c->name[i]);
    free(c->name);
    memset(c, 0, sizeof(*c));
}

static int read_cols(sqlite3 *db, struct cols *c, char *err, size_t err_cap)
{
    memset(c, 0, sizeof(*c));
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info('runs')", -1, &st, NULL)) {
        snprintf(err, err_cap, "database: %s", sqlite3_errmsg(db));
        return -1;
    }
    size_t status = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char **nn = realloc(c->name, (c->n + 1) * sizeof(*nn));
        if (!nn) break;
        c->name = nn;
        nn[c->n] = strdup((const char *)sqlite3_column_text(st, 0));
        if (!nn[c->n]) break;
        if (!strcmp(nn[c->n], "params")) c->first_param = c->n + 1;
        if (!strcmp(nn[c->n], "status")) status = c->n;
        c->n++;
    }
    sqlite3_finalize(st);
    c->n_params = status > c->first_param ? status - c->first_param : 0;
    return 0;
}

static int find_col(const struct cols *c, const char *name, size_t len)
{
    for (size_t i = 0; i < c->n; i++)
        if (strlen(c->name[i]) == len && !strncmp(c->name[i], name, len)) return (int)i;
    return -1;
}

/* Whether any run built events (a database from before the eb_ columns has none). */
static bool has_eb(sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM runs WHERE eb_triggered IS NOT NULL LIMIT 1", -1, &st,
                           NULL))
        return false;
    bool yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* The columns to show: given (A,B,...), every one (CSV), or the parameters and main metrics
 * (event building's when runs built events: their flows are the builders' pairs). */
static int pick_cols(const struct cols *c, const struct sw_report_opts *o, bool all, bool eb,
                     int *pick, size_t *n, char *err, size_t err_cap)
{
    *n = 0;
    if (o->columns) {
        for (const char *p = o->columns; *p;) {
            size_t len = strcspn(p, ",");
            while (len && p[len - 1] == ' ') len--;
            int k = find_col(c, p, len);
            if (k < 0) {
                snprintf(err, err_cap, "--columns: unknown column '%.*s'", (int)len, p);
                return -1;
            }
            if (*n < 256) pick[(*n)++] = k;
            p += strcspn(p, ",");
            if (*p == ',') p++;
            while (*p == ' ') p++;
        }
        return 0;
    }
    if (all) {
        for (size_t i = 0; i < c->n && i < 256; i++) pick[(*n)++] = (int)i;
        return 0;
    }
    for (size_t i = 0; i < c->n_params && *n < 200; i++) pick[(*n)++] = (int)(c->first_param + i);
    static const char *const main_cols[] = {"seed",    "status",     "jain",        "throughput",
                                            "fct_p99", "peak_queue", "peak_buffer", "pfc_pauses",
                                            "drops",   "ecn_marks",  "cnps",        "retx",
                                            "wall_s",  "error",      NULL};
    static const char *const eb_cols[] = {"seed",
                                          "status",
                                          "eb_built",
                                          "eb_incomplete",
                                          "eb_lost",
                                          "eb_busy",
                                          "eb_latency_p50",
                                          "eb_latency_p99",
                                          "eb_min_built_share",
                                          "eb_min_builder_throughput",
                                          "eb_peak_slots",
                                          "eb_rnr_naks",
                                          "wall_s",
                                          "error",
                                          NULL};
    const char *const *main = eb ? eb_cols : main_cols;
    for (int i = 0; main[i]; i++) {
        if ((!strcmp(main[i], "status") || !strcmp(main[i], "error")) && !o->failed_too) continue;
        int k = find_col(c, main[i], strlen(main[i]));
        if (k >= 0) pick[(*n)++] = k;
    }
    return 0;
}

static void bind_all(sqlite3_stmt *st, int first, const struct sw_sql *q)
{
    for (uint32_t i = 0; i < q->n_binds; i++) {
        if (q->binds[i].is_text)
            sqlite3_bind_text(st, first + (int)i, q->binds[i].str, -1, SQLITE_STATIC);
        else
            sqlite3_bind_double(st, first + (int)i, q->binds[i].num);
    }
}

struct query {
    struct sw_sql where, sort;
    bool has_where, has_sort;
};

static void query_free(struct query *q)
{
    if (q->has_where) sw_sql_free(&q->where);
    if (q->has_sort) sw_sql_free(&q->sort);
}

static int build_query(const struct cols *c, const struct sw_report_opts *o, struct query *q,
                       char *err, size_t err_cap)
{
    memset(q, 0, sizeof(*q));
    char msg[300];
    if (o->where) {
        if (sw_expr_to_sql(o->where, false, (const char *const *)c->name, c->n, &q->where, msg,
                           sizeof(msg))) {
            snprintf(err, err_cap, "--where: %s", msg);
            return -1;
        }
        q->has_where = true;
    }
    if (o->sort) {
        if (sw_expr_to_sql(o->sort, true, (const char *const *)c->name, c->n, &q->sort, msg,
                           sizeof(msg))) {
            snprintf(err, err_cap, "--sort: %s", msg);
            query_free(q);
            return -1;
        }
        q->has_sort = true;
    }
    return 0;
}

/* "WHERE status = 'ok' AND (filter)" (no user text: the filter is SQL built by expr.c) */
static void where_sql(FILE *m, const struct query *q, bool failed_too)
{
    fprintf(m, " WHERE %s%s%s", failed_too ? "1" : "status = 'ok'", q->has_where ? " AND " : "",
            q->has_where ? q->where.text : "");
}

static void cell_text(sqlite3_stmt *st, int i, char *out, size_t cap)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        snprintf(out, cap, "-");
        break;
    case SQLITE_INTEGER:
        snprintf(out, cap, "%lld", (long long)sqlite3_column_int64(st, i));
        break;
    case SQLITE_FLOAT:
        snprintf(out, cap, "%.6g", sqlite3_column_double(st, i));
        break;
    default:
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, i));
    }
}

static void csv_cell(FILE *f, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return;
    if (sqlite3_column_type(st, i) == SQLITE_FLOAT) {
        fprintf(f, "%.17g", sqlite3_column_double(st, i));
        return;
    }
    const char *s = (const char *)sqlite3_column_text(st, i);
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int print_rows(sqlite3_stmt *st, const struct cols *c, const int *pick, size_t n, FILE *out)
{
    size_t rows = 0, cap = 0;
    char **cells = NULL;
    size_t width[256];
    bool text[256] = {false}; /* a column with text is aligned left, numbers right */
    for (size_t j = 0; j < n; j++) width[j] = strlen(c->name[pick[j]]);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if ((rows + 1) * n > cap) {
            cap = (rows + 1) * n * 2;
            char **nc = realloc(cells, cap * sizeof(*nc));
            if (!nc) break;
            cells = nc;
        }
        for (size_t j = 0; j < n; j++) {
            char buf[512];
            cell_text(st, (int)j, buf, sizeof(buf));
            text[j] |= sqlite3_column_type(st, (int)j) == SQLITE_TEXT;
            cells[rows * n + j] = strdup(buf);
            size_t w = strlen(buf);
            if (w > width[j]) width[j] = w < 60 ? w : 60;
        }
        rows++;
    }
    for (size_t j = 0; j < n; j++)
        fprintf(out, "%-*s%s", (int)width[j], c->name[pick[j]], j + 1 < n ? "  " : "\n");
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < n; j++) {
            const char *s = cells[r * n + j] ? cells[r * n + j] : "?";
            fprintf(out, "%*s%s", text[j] ? -(int)width[j] : (int)width[j], s,
                    j + 1 < n ? "  " : "\n");
        }
    fprintf(out, "(%zu rows)\n", rows);
    for (size_t i = 0; i < rows * n; i++) free(cells[i]);
    free(cells);
    return 0;
}

static int table_or_csv(sqlite3 *db, const struct cols *c, const struct sw_report_opts *o,
                        const struct query *q, FILE *out, char *err, size_t err_cap)
{
    int pick[256];
    size_t n;
    bool eb = !o->columns && !o->csv && has_eb(db);
    if (pick_cols(c, o, o->csv != NULL, eb, pick, &n, err, err_cap)) return -1;
    char *sql = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&sql, &len);
    if (!m) return -1;
    fputs("SELECT ", m);
    for (size_t j = 0; j < n; j++) fprintf(m, "%s\"%s\"", j ? ", " : "", c->name[pick[j]]);
    fputs(" FROM runs", m);
    where_sql(m, q, o->failed_too);
    fprintf(m, " ORDER BY %s", q->has_sort ? q->sort.text : "idx");
    if (o->limit > 0) fprintf(m, " LIMIT %ld", o->limit);
    fclose(m);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    free(sql);
    if (rc) {
        snprintf(err, err_cap, "database: %s", sqlite3_errmsg(db));
        return -1;
    }
    bind_all(st, 1, &q->where);
    bind_all(st, 1 + (int)q->where.n_binds, &q->sort);
    if (!o->csv) {
        print_rows(st, c, pick, n, out);
    } else {
        FILE *f = strcmp(o->csv, "-") ? fopen(o->csv, "w") : out;
        if (!f) {
            snprintf(err, err_cap, "%s: %s", o->csv, strerror(errno));
            sqlite3_finalize(st);
            return -1;
        }
        for (size_t j = 0; j < n; j++) fprintf(f, "%s%s", c->name[pick[j]], j + 1 < n ? "," : "\n");
        while (sqlite3_step(st) == SQLITE_ROW)
            for (size_t j = 0; j < n; j++) {
                csv_cell(f, st, (int)j);
                fputc(j + 1 < n ? ',' : '\n', f);
            }
        if (f != out && (ferror(f) | fclose(f))) {
            snprintf(err, err_cap, "%s: write error", o->csv);
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    return 0;
}

/* ---- plots ---- */

/* Distinct axis values, in order: numbers when they all are, else text. */
struct axis {
    char **label;
    double *num;
    size_t n;
    bool numeric;
};

static void axis_free(struct axis *a)
{
    for (size_t i = 0; i < a->n; i++) free(a->label[i]);
    free(a->label);
    free(a->num);
    memset(a, 0, sizeof(*a));
}

static size_t axis_index(struct axis *a, sqlite3_stmt *st, int col)
{
    char buf[256];
    cell_text(st, col, buf, sizeof(buf));
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->label[i], buf)) return i;
    char **nl = realloc(a->label, (a->n + 1) * sizeof(*nl));
    double *nn = nl ? realloc(a->num, (a->n + 1) * sizeof(*nn)) : NULL;
    if (nl) a->label = nl;
    if (!nn) return SIZE_MAX;
    a->num = nn;
    int t = sqlite3_column_type(st, col);
    if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) a->numeric = false;
    a->num[a->n] = sqlite3_column_double(st, col);
    a->label[a->n] = strdup(buf);
    return a->n++;
}

static int run_gnuplot(const char *script, char *err, size_t err_cap)
{
    char *const argv[] = {"gnuplot", (char *)(uintptr_t)script, NULL};
    extern char **environ;
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
    if (rc) {
        snprintf(err, err_cap, "%s",
                 rc == ENOENT ? "plots need gnuplot (Debian: gnuplot-nox)" : "cannot run gnuplot");
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        snprintf(err, err_cap, "gnuplot failed (status %d)", status);
        return -1;
    }
    return 0;
}

static void axis_tics(FILE *f, const char *which, const struct axis *a)
{
    fprintf(f, "set %stics (", which);
    for (size_t i = 0; i < a->n; i++) {
        fputs(i ? ", " : "", f);
        fe_gnuplot_quote(f, a->label[i]);
        fprintf(f, " %zu", i);
    }
    fputs(")\n", f);
}

static int check_axis(const struct cols *c, const char *name, const char *what, char *err,
                      size_t err_cap)
{
    if (!name || find_col(c, name, strlen(name)) < 0) {
        snprintf(err, err_cap, "--plot needs %s COLUMN%s%s%s", what, name ? " ('" : "",
                 name ? name : "", name ? "' is not a column)" : "");
        return -1;
    }
    return 0;
}

/* The data block and the plot commands, from rows (x, y, value) or (x, value). */
static int write_plot(FILE *f, sqlite3_stmt *st, const struct sw_report_opts *o, bool heat)
{
    struct axis ax = {.numeric = true}, ay = {.numeric = true};
    size_t n = 0;
    fputs("$d << EOD\n", f);
    int vcol = o->y ? 2 : 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_type(st, vcol) == SQLITE_NULL) continue;
        size_t ix = axis_index(&ax, st, 0), iy = o->y ? axis_index(&ay, st, 1) : 0;
        if (ix == SIZE_MAX || iy == SIZE_MAX) break;
        fprintf(f, "%zu %zu %.9g %.9g\n", ix, iy, ax.num[ix], sqlite3_column_double(st, vcol));
        n++;
    }
    fputs("EOD\n", f);
    fputs("set encoding utf8\nset grid\n", f);
    fputs("set title ", f);
    char title[512];
    snprintf(title, sizeof(title), "%s%s%s", o->metric, o->where ? "   where " : "",
             o->where ? o->where : "");
    fe_gnuplot_quote(f, title);
    fputs("\nset xlabel ", f);
    fe_gnuplot_quote(f, o->x);
    fputc('\n', f);
    if (heat) {
        fputs("set ylabel ", f);
        fe_gnuplot_quote(f, o->y);
        fprintf(f, "\nunset grid\nset palette rgb 33,13,10\nset cblabel ");
        fe_gnuplot_quote(f, o->metric);
        fprintf(f, "\nset xrange [-0.5:%zu.5]\nset yrange [-0.5:%zu.5]\n", ax.n ? ax.n - 1 : 0,
                ay.n ? ay.n - 1 : 0);
        axis_tics(f, "x", &ax);
        axis_tics(f, "y", &ay);
        fputs("plot $d using 1:2:4 with image notitle, $d using 1:2:(sprintf('%.4g', $4)) "
              "with labels font ',9' notitle\n",
              f);
    } else {
        fputs("set ylabel ", f);
        fe_gnuplot_quote(f, o->metric);
        fputs("\nset key outside right top\n", f);
        if (!ax.numeric) axis_tics(f, "x", &ax);
        const char *xcol = ax.numeric ? "3" : "1";
        if (!o->y) {
            fprintf(f, "plot $d using %s:4 with linespoints lw 1.5 pt 7 notitle\n", xcol);
        } else {
            fputs("plot", f);
            for (size_t j = 0; j < ay.n; j++) {
                fprintf(f,
                        "%s $d using %s:($2 == %zu ? $4 : NaN) with linespoints lw 1.5 pt 7 "
                        "title ",
                        j ? ", \\\n" : "", xcol, j);
                char t[300];
                snprintf(t, sizeof(t), "%s=%s", o->y, ay.label[j]);
                fe_gnuplot_quote(f, t);
            }
            fputc('\n', f);
        }
    }
    axis_free(&ax);
    axis_free(&ay);
    return n ? 0 : -1;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int plot(sqlite3 *db, const struct cols *c, const struct sw_report_opts *o,
                const struct query *q, char *err, size_t err_cap)
{
    bool png = ends_with(o->plot, ".png"), svg = ends_with(o->plot, ".svg");
    if (!png && !svg) {
        snprintf(err, err_cap, "--plot FILE.png or FILE.svg");
        return -1;
    }
    if (!o->metric) {
        snprintf(err, err_cap, "--plot needs --metric EXPR (e.g. jain, peak_queue)");
        return -1;
    }
    if (check_axis(c, o->x, "--x", err, err_cap) ||
        (o->y && check_axis(c, o->y, "--y", err, err_cap)))
        return -1;
    struct sw_sql m;
    char msg[300];
    if (sw_expr_to_sql(o->metric, false, (const char *const *)c->name, c->n, &m, msg,
                       sizeof(msg))) {
        snprintf(err, err_cap, "--metric: %s", msg);
        return -1;
    }
    bool heat = o->y && !o->lines;
    char *sql = NULL;
    size_t len = 0;
    FILE *ms = open_memstream(&sql, &len);
    if (!ms) {
        sw_sql_free(&m);
        return -1;
    }
    if (o->y)
        fprintf(ms, "SELECT \"%s\", \"%s\", avg(%s) FROM runs", o->x, o->y, m.text);
    else
        fprintf(ms, "SELECT \"%s\", avg(%s) FROM runs", o->x, m.text);
    where_sql(ms, q, o->failed_too);
    /* lines: each y's points in a row, as gnuplot breaks a line at the other series' NaNs */
    fprintf(ms, !o->y  ? " GROUP BY 1 ORDER BY 1"
                : heat ? " GROUP BY 1, 2 ORDER BY 1, 2"
                       : " GROUP BY 1, 2 ORDER BY 2, 1");
    fclose(ms);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    free(sql);
    if (rc) {
        snprintf(err, err_cap, "database: %s", sqlite3_errmsg(db));
        sw_sql_free(&m);
        return -1;
    }
    bind_all(st, 1, &m);
    bind_all(st, 1 + (int)m.n_binds, &q->where);
    char script[] = "/tmp/feroce-sweep-plot-XXXXXX";
    int fd = mkstemp(script);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, err_cap, "cannot write a temporary file: %s", strerror(errno));
        sqlite3_finalize(st);
        sw_sql_free(&m);
        return -1;
    }
    fprintf(f, "set terminal %s size 900,650 font 'sans,10' noenhanced\nset output ",
            png ? "pngcairo" : "svg");
    fe_gnuplot_quote(f, o->plot);
    fputc('\n', f);
    if (write_plot(f, st, o, heat)) {
        snprintf(err, err_cap, "nothing to plot (no rows with a value of %s)", o->metric);
        rc = -1;
    }
    sqlite3_finalize(st);
    sw_sql_free(&m);
    if (ferror(f) | fclose(f) && !rc) {
        snprintf(err, err_cap, "cannot write the gnuplot script");
        rc = -1;
    }
    if (!rc) rc = run_gnuplot(script, err, err_cap);
    unlink(script);
    return rc;
}

int sw_report(struct sw_store *s, const struct sw_report_opts *o, FILE *out, char *err,
              size_t err_cap)
{
    sqlite3 *db = sw_store_db(s);
    struct cols c;
    if (read_cols(db, &c, err, err_cap)) return -1;
    struct query q;
    int rc = build_query(&c, o, &q, err, err_cap);
    if (!rc) {
        if (o->plot)
            rc = plot(db, &c, o, &q, err, err_cap);
        else
            rc = table_or_csv(db, &c, o, &q, out, err, err_cap);
        query_free(&q);
    }
    cols_free(&c);
    return rc;
}
