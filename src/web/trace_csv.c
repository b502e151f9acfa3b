/* The simulator's CSV trace read back (trace_csv.h): the header names every column, each row
 * has exactly as many numbers. Checked field by field so that a truncated, edited or foreign
 * file is refused with its line rather than drawn wrong. */
#include "web/trace_csv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELD 128 /* a header name or a number */

struct cursor {
    const char *p, *end;
    const char *name;
    size_t line;
    char *err;
    size_t err_cap;
};

static int fail(struct cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct cursor *c, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->err_cap, "%s:%zu: %s", c->name, c->line, what);
    return -1;
}

/* The next field of the current line into f (NUL-terminated): 1 with more fields to come on
 * the line, 0 at its end, -1 (after a message) when too long or not printable. */
static int next_field(struct cursor *c, char f[MAX_FIELD])
{
    size_t n = 0;
    while (c->p < c->end && *c->p != ',' && *c->p != '\n') {
        unsigned char ch = (unsigned char)*c->p++;
        if (ch == '\r' && (c->p == c->end || *c->p == '\n')) continue;
        if (ch < 0x20 || ch > 0x7e) return fail(c, "byte 0x%02x: not a CSV trace", ch);
        if (n + 1 >= MAX_FIELD) return fail(c, "field longer than %d bytes", MAX_FIELD - 1);
        f[n++] = (char)ch;
    }
    f[n] = 0;
    if (c->p < c->end && *c->p == ',') {
        c->p++;
        return 1;
    }
    if (c->p < c->end) c->p++; /* the newline */
    return 0;
}

/* "f<i>_" at s: the flow number, s past it; -1 when not that form. */
static long flow_prefix(const char **s)
{
    if ((*s)[0] != 'f' || (*s)[1] < '0' || (*s)[1] > '9') return -1;
    char *end;
    long v = strtol(*s + 1, &end, 10);
    if (*end != '_' || v < 0 || v >= FE_TRACE_CSV_MAX_FLOWS) return -1;
    *s = end + 1;
    return v;
}

/* A CC variable column's "NAME" or "NAME[UNIT]". */
static int var_col(struct cursor *c, struct fe_trace_csv *t, unsigned flow, const char *s,
                   struct fe_trace_col *col)
{
    if (t->n_vars[flow] >= FE_TRACE_CSV_MAX_VARS)
        return fail(c, "flow %u: more than %d CC variables", flow, FE_TRACE_CSV_MAX_VARS);
    struct fe_trace_var *v = &t->vars[flow][t->n_vars[flow]];
    const char *br = strchr(s, '[');
    size_t nl = br ? (size_t)(br - s) : strlen(s);
    if (!nl || nl >= sizeof v->name) return fail(c, "column f%u_%s: bad variable name", flow, s);
    memcpy(v->name, s, nl);
    v->name[nl] = 0;
    v->unit[0] = 0;
    if (br) {
        size_t ul = strlen(br + 1);
        if (!ul || br[ul] != ']' || ul - 1 >= sizeof v->unit || memchr(br + 1, '[', ul))
            return fail(c, "column f%u_%s: expected NAME[UNIT]", flow, s);
        memcpy(v->unit, br + 1, ul - 1);
        v->unit[ul - 1] = 0;
    }
    *col = (struct fe_trace_col){
        .kind = FE_TRACE_VAR, .flow = (uint16_t)flow, .var = (uint8_t)t->n_vars[flow]++};
    return 0;
}

/* "q_NODE_pK_bytes": a switch port's queue. */
static int queue_col(struct cursor *c, struct fe_trace_csv *t, const char *s,
                     struct fe_trace_col *col)
{
    size_t n = strlen(s);
    const char *p = NULL;
    for (const char *q = s + 2; (q = strstr(q, "_p")); q++) p = q; /* the last "_p" */
    if (n < 11 || strncmp(s, "q_", 2) || strcmp(s + n - 6, "_bytes") || !p || p == s + 2)
        return fail(c, "column '%s': not a trace column", s);
    char *end;
    unsigned long k = strtoul(p + 2, &end, 10);
    if (end == p + 2 || strcmp(end, "_bytes") || k > 65535)
        return fail(c, "column '%s': expected q_NODE_pPORT_bytes", s);
    if (t->n_ports >= FE_TRACE_CSV_MAX_PORTS)
        return fail(c, "more than %d switch ports", FE_TRACE_CSV_MAX_PORTS);
    snprintf(t->port[t->n_ports], sizeof t->port[0], "%.*s.p%lu", (int)(p - s - 2), s + 2, k);
    *col = (struct fe_trace_col){.kind = FE_TRACE_QUEUE, .flow = (uint16_t)t->n_ports++};
    return 0;
}

/* One header name: flows in order (f0 first, each flow's gbps column opening it), then ports. */
static int header_col(struct cursor *c, struct fe_trace_csv *t, const char *f,
                      struct fe_trace_col *col)
{
    const char *s = f;
    long flow = flow_prefix(&s);
    if (flow < 0) {
        if (!t->n_cols) return fail(c, "the first column is '%s', not time_us", f);
        return queue_col(c, t, f, col);
    }
    if (t->n_ports) return fail(c, "column '%s' after the queue columns", f);
    if (!strcmp(s, "gbps")) {
        if ((unsigned long)flow != t->n_flows)
            return fail(c, "column '%s': flow %ld where flow %u was expected", f, flow, t->n_flows);
        t->n_flows++;
        *col = (struct fe_trace_col){.kind = FE_TRACE_GBPS, .flow = (uint16_t)flow};
        return 0;
    }
    if ((unsigned long)flow + 1 != t->n_flows)
        return fail(c, "column '%s' is not with flow %ld's other columns", f, flow);
    if (!strcmp(s, "rate_gbps")) {
        *col = (struct fe_trace_col){.kind = FE_TRACE_RATE, .flow = (uint16_t)flow};
        return 0;
    }
    return var_col(c, t, (unsigned)flow, s, col);
}

static int parse_header(struct cursor *c, struct fe_trace_csv *t)
{
    char f[MAX_FIELD];
    size_t cap = 1 + FE_TRACE_CSV_MAX_FLOWS * (2 + FE_TRACE_CSV_MAX_VARS) + FE_TRACE_CSV_MAX_PORTS;
    t->cols = calloc(cap, sizeof *t->cols);
    if (!t->cols) return fail(c, "out of memory");
    c->line = 1;
    if (c->p == c->end) return fail(c, "empty file");
    int more;
    do {
        more = next_field(c, f);
        if (more < 0) return -1;
        if (t->n_cols == 0) {
            if (strcmp(f, "time_us")) return fail(c, "the first column is '%s', not time_us", f);
            t->cols[t->n_cols++] = (struct fe_trace_col){.kind = FE_TRACE_TIME};
            continue;
        }
        if (t->n_cols >= cap) return fail(c, "too many columns");
        if (header_col(c, t, f, &t->cols[t->n_cols])) return -1;
        t->n_cols++;
    } while (more);
    return 0;
}

/* A cell: a finite number, or empty for a CC variable (the flow was not running). */
static int parse_cell(struct cursor *c, const struct fe_trace_col *col, const char *f, double *v)
{
    if (!*f) {
        if (col->kind != FE_TRACE_VAR) return fail(c, "empty value");
        *v = NAN;
        return 0;
    }
    char *end;
    errno = 0;
    *v = strtod(f, &end);
    if (*end || errno || !isfinite(*v)) return fail(c, "'%s' is not a number", f);
    if (col->kind != FE_TRACE_VAR && *v < 0) return fail(c, "%s: negative", f);
    return 0;
}

static int parse_row(struct cursor *c, struct fe_trace_csv *t, double *row, double prev_time)
{
    char f[MAX_FIELD];
    for (unsigned k = 0; k < t->n_cols; k++) {
        int more = next_field(c, f);
        if (more < 0 || parse_cell(c, &t->cols[k], f, &row[k])) return -1;
        if (!more && k + 1 < t->n_cols)
            return fail(c, "%u values where the header has %u columns", k + 1, t->n_cols);
        if (more && k + 1 == t->n_cols)
            return fail(c, "more values than the header's %u columns", t->n_cols);
    }
    if (row[0] < prev_time) return fail(c, "time %.3f us before the previous row's", row[0]);
    return 0;
}

static int parse_rows(struct cursor *c, struct fe_trace_csv *t)
{
    size_t cap = 0;
    double prev = 0;
    while (c->p < c->end) {
        c->line++;
        if (*c->p == '\n' || (*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n')) {
            c->p += *c->p == '\r' ? 2 : 1; /* a blank line: only at the end */
            if (c->p < c->end) return fail(c, "blank line");
            break;
        }
        if ((t->n_rows + 1) * t->n_cols > FE_TRACE_CSV_MAX_CELLS)
            return fail(c, "more than %u values", FE_TRACE_CSV_MAX_CELLS);
        if (t->n_rows == cap) {
            cap = cap ? cap * 2 : 256;
            double *v = realloc(t->v, cap * t->n_cols * sizeof *v);
            if (!v) return fail(c, "out of memory");
            t->v = v;
        }
        double *row = &t->v[t->n_rows * t->n_cols];
        if (parse_row(c, t, row, prev)) return -1;
        prev = row[0];
        t->n_rows++;
    }
    if (!t->n_rows) return fail(c, "no samples after the header");
    return 0;
}

int fe_trace_csv_parse(const char *text, size_t len, const char *name, struct fe_trace_csv *t,
                       char *err, size_t err_cap)
{
    memset(t, 0, sizeof *t);
    struct cursor c = {.p = text, .end = text + len, .name = name, .err = err, .err_cap = err_cap};
    if (parse_header(&c, t) || parse_rows(&c, t)) {
        fe_trace_csv_free(t);
        return -1;
    }
    if (!t->n_flows) {
        c.line = 1;
        fail(&c, "no flow columns (f0_gbps ...)");
        fe_trace_csv_free(t);
        return -1;
    }
    return 0;
}

void fe_trace_csv_free(struct fe_trace_csv *t)
{
    free(t->cols);
    free(t->v);
    memset(t, 0, sizeof *t);
}
