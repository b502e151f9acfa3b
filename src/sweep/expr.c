/* Report expressions: `jain >= 0.99 and peak_queue < 200KB`, `peak_queue desc, jain`.
 * A small recursive-descent parser checks the grammar and every identifier against the
 * table's columns, and writes the SQL itself: identifiers quoted, numbers (units converted to
 * base units, as the columns hold them) and strings bound as parameters. User text never
 * reaches SQL as text.
 *
 *   expr  := and ('or' and)*          cmp  := sum (('<'|'<='|'>'|'>='|'='|'=='|'!='|'<>') sum)?
 *   and   := not ('and' not)*         sum  := prod (('+'|'-') prod)*
 *   not   := 'not' not | cmp          prod := unary (('*'|'/') unary)*
 *   unary := '-' unary | NUMBER[UNIT] | COLUMN | 'STRING' | '(' expr ')' */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sweep/sweep.h"

#define MAX_DEPTH 64

enum tok { T_END, T_NUM, T_ID, T_STR, T_OP, T_AND, T_OR, T_NOT, T_ASC, T_DESC, T_BAD };

struct px {
    const char *s, *p;
    enum tok t;
    const char *ts; /* token text */
    size_t tn;
    double num;
    const char *const *cols;
    size_t n_cols;
    struct sw_sql *out;
    size_t cap;
    int depth;
    char *err;
    size_t err_cap;
    bool failed;
};

static void fail(struct px *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct px *x, const char *fmt, ...)
{
    if (x->failed) return;
    x->failed = true;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(x->err, x->err_cap, "%s (at column %d)", msg, (int)(x->ts - x->s) + 1);
}

static void emit(struct px *x, const char *s, size_t n)
{
    struct sw_sql *q = x->out;
    size_t len = q->text ? strlen(q->text) : 0;
    if (len + n + 2 > x->cap) {
        size_t cap = (len + n + 2) * 2;
        char *t = realloc(q->text, cap);
        if (!t) {
            fail(x, "out of memory");
            return;
        }
        if (!q->text) t[0] = 0;
        q->text = t;
        x->cap = cap;
    }
    memcpy(q->text + len, s, n);
    q->text[len + n] = 0;
}

static void emits(struct px *x, const char *s)
{
    emit(x, s, strlen(s));
}

static bool word_is(const struct px *x, const char *w)
{
    return x->tn == strlen(w) && !strncasecmp(x->ts, w, x->tn);
}

static void next(struct px *x)
{
    while (isspace((unsigned char)*x->p)) x->p++;
    x->ts = x->p;
    char c = *x->p;
    if (!c) {
        x->t = T_END;
        x->tn = 0;
        return;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)x->p[1]))) {
        const char *q = x->p;
        while (isdigit((unsigned char)*q) || *q == '.') q++;
        if ((*q == 'e' || *q == 'E') &&
            (isdigit((unsigned char)q[1]) ||
             ((q[1] == '-' || q[1] == '+') && isdigit((unsigned char)q[2])))) {
            q += 2;
            while (isdigit((unsigned char)*q)) q++;
        }
        while (isalpha((unsigned char)*q) || (*q == '/' && isalpha((unsigned char)q[1]))) q++;
        char buf[64];
        size_t n = (size_t)(q - x->p);
        bool is_int;
        x->tn = n;
        x->p = q;
        if (n >= sizeof(buf)) {
            x->t = T_BAD;
            return;
        }
        memcpy(buf, x->ts, n);
        buf[n] = 0;
        x->t = sw_value_number(buf, &x->num, &is_int) ? T_NUM : T_BAD;
        return;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        const char *q = x->p;
        while (isalnum((unsigned char)*q) || *q == '_') q++;
        x->tn = (size_t)(q - x->p);
        x->p = q;
        x->t = word_is(x, "and")    ? T_AND
               : word_is(x, "or")   ? T_OR
               : word_is(x, "not")  ? T_NOT
               : word_is(x, "asc")  ? T_ASC
               : word_is(x, "desc") ? T_DESC
                                    : T_ID;
        return;
    }
    if (c == '\'') {
        const char *q = x->p + 1;
        while (*q && *q != '\'') q++;
        if (!*q) {
            x->t = T_BAD;
            x->tn = 1;
            return;
        }
        x->tn = (size_t)(q + 1 - x->p);
        x->p = q + 1;
        x->t = T_STR;
        return;
    }
    static const char *const ops[] = {"<=", ">=", "==", "!=", "<>", "<", ">", "=",
                                      "+",  "-",  "*",  "/",  "(",  ")", ",", NULL};
    for (int i = 0; ops[i]; i++) {
        size_t n = strlen(ops[i]);
        if (!strncmp(x->p, ops[i], n)) {
            x->t = T_OP;
            x->tn = n;
            x->p += n;
            return;
        }
    }
    x->t = T_BAD;
    x->tn = 1;
}

static bool is_op(const struct px *x, const char *op)
{
    return x->t == T_OP && x->tn == strlen(op) && !strncmp(x->ts, op, x->tn);
}

static int bind_slot(struct px *x)
{
    if (x->out->n_binds >= sizeof(x->out->binds) / sizeof(x->out->binds[0])) {
        fail(x, "too many values in the expression");
        return -1;
    }
    return (int)x->out->n_binds++;
}

static void parse_or(struct px *x);

static void parse_unary(struct px *x)
{
    if (x->failed) return;
    if (++x->depth > MAX_DEPTH) {
        fail(x, "expression nested too deeply");
        return;
    }
    if (is_op(x, "-")) {
        emits(x, "-");
        next(x);
        parse_unary(x);
    } else if (x->t == T_NUM) {
        int k = bind_slot(x);
        if (k >= 0) {
            x->out->binds[k].num = x->num;
            emits(x, "?");
        }
        next(x);
    } else if (x->t == T_STR) {
        int k = bind_slot(x);
        if (k >= 0) {
            x->out->binds[k].is_text = true;
            x->out->binds[k].str = strndup(x->ts + 1, x->tn - 2);
            if (!x->out->binds[k].str) fail(x, "out of memory");
            emits(x, "?");
        }
        next(x);
    } else if (x->t == T_ID) {
        size_t i = 0;
        while (i < x->n_cols &&
               !(strlen(x->cols[i]) == x->tn && !strncmp(x->cols[i], x->ts, x->tn)))
            i++;
        if (i == x->n_cols) {
            fail(x, "unknown column '%.*s'", (int)x->tn, x->ts);
            return;
        }
        emits(x, "\"");
        emits(x, x->cols[i]);
        emits(x, "\"");
        next(x);
    } else if (is_op(x, "(")) {
        emits(x, "(");
        next(x);
        parse_or(x);
        if (!is_op(x, ")")) {
            fail(x, "expected ')'");
            return;
        }
        emits(x, ")");
        next(x);
    } else if (x->t == T_BAD) {
        fail(x,
             "cannot read '%.*s' (a number with a unit such as 200KB or 2us, a column, "
             "'text')",
             (int)(x->tn ? x->tn : 1), x->ts);
    } else {
        fail(x, "expected a value or a column");
    }
    x->depth--;
}

static void parse_binary(struct px *x, int level)
{
    static const char *const levels[][3] = {{"+", "-", NULL}, {"*", "/", NULL}};
    if (level == 2) {
        parse_unary(x);
        return;
    }
    parse_binary(x, level + 1);
    for (;;) {
        const char *op = NULL;
        for (int i = 0; levels[level][i]; i++)
            if (is_op(x, levels[level][i])) op = levels[level][i];
        if (!op || x->failed) return;
        emits(x, " ");
        emits(x, op);
        emits(x, " ");
        next(x);
        parse_binary(x, level + 1);
    }
}

static void parse_cmp(struct px *x)
{
    static const char *const ops[] = {"<=", ">=", "==", "!=", "<>", "<", ">", "=", NULL};
    parse_binary(x, 0);
    for (int i = 0; ops[i] && !x->failed; i++)
        if (is_op(x, ops[i])) {
            emits(x, " ");
            emits(x, !strcmp(ops[i], "==") ? "=" : ops[i]);
            emits(x, " ");
            next(x);
            parse_binary(x, 0);
            return;
        }
}

static void parse_not(struct px *x)
{
    if (++x->depth > MAX_DEPTH) {
        fail(x, "expression nested too deeply");
        return;
    }
    if (x->t == T_NOT) {
        emits(x, "NOT ");
        next(x);
        parse_not(x);
    } else {
        parse_cmp(x);
    }
    x->depth--;
}

static void parse_and(struct px *x)
{
    parse_not(x);
    while (x->t == T_AND && !x->failed) {
        emits(x, " AND ");
        next(x);
        parse_not(x);
    }
}

static void parse_or(struct px *x)
{
    if (++x->depth > MAX_DEPTH) {
        fail(x, "expression nested too deeply");
        return;
    }
    parse_and(x);
    while (x->t == T_OR && !x->failed) {
        emits(x, " OR ");
        next(x);
        parse_and(x);
    }
    x->depth--;
}

int sw_expr_to_sql(const char *expr, bool sort_list, const char *const *cols, size_t n_cols,
                   struct sw_sql *out, char *err, size_t err_cap)
{
    memset(out, 0, sizeof(*out));
    struct px x = {.s = expr,
                   .p = expr,
                   .cols = cols,
                   .n_cols = n_cols,
                   .out = out,
                   .err = err,
                   .err_cap = err_cap};
    next(&x);
    emits(&x, "(");
    if (x.t == T_END) fail(&x, "an empty expression");
    while (!x.failed) {
        parse_or(&x);
        if (!sort_list || x.failed) break;
        if (x.t == T_ASC || x.t == T_DESC) {
            emits(&x, x.t == T_ASC ? " ASC" : " DESC");
            next(&x);
        }
        if (!is_op(&x, ",")) break;
        emits(&x, ", ");
        next(&x);
    }
    if (!x.failed && x.t != T_END) fail(&x, "unexpected '%.*s'", (int)(x.tn ? x.tn : 1), x.ts);
    if (!sort_list) emits(&x, ")");
    if (x.failed) {
        sw_sql_free(out);
        return -1;
    }
    if (sort_list) memmove(out->text, out->text + 1, strlen(out->text)); /* no '(' */
    return 0;
}

void sw_sql_free(struct sw_sql *q)
{
    for (uint32_t i = 0; i < q->n_binds; i++) free(q->binds[i].str);
    free(q->text);
    memset(q, 0, sizeof(*q));
}
