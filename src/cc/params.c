/* Parameter tables: defaults, assignments by name validated against each parameter's range and
 * integrality, and "a=1,b=2" lists. Values come from users (command lines, config files), so
 * every error names the parameter, the value, the allowed range and the unit. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/cc.h"
#include "feroce/err.h"

static int fail(char *err, size_t err_cap, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t err_cap, int code, const char *fmt, ...)
{
    if (err && err_cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_cap, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Whole numbers print exactly ("65535", not "6.5535e+04"); others with enough digits to
 * round-trip what the user typed. */
static void fmt_num(char *buf, size_t cap, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%.15g", v);
}

static size_t n_params(const struct fe_cc_algo *algo)
{
    return algo->n_params < FE_CC_MAX_PARAMS ? algo->n_params : FE_CC_MAX_PARAMS;
}

void fe_cc_params_default(struct fe_cc_params *p, const struct fe_cc_algo *algo)
{
    memset(p, 0, sizeof *p);
    p->algo = algo;
    if (!algo) return;
    for (size_t i = 0; i < n_params(algo); i++) p->v[i] = algo->params[i].def;
}

int fe_cc_param_index(const struct fe_cc_algo *algo, const char *name)
{
    if (!algo || !name) return FE_EINVAL;
    for (size_t i = 0; i < n_params(algo); i++)
        if (!strcmp(algo->params[i].name, name)) return (int)i;
    return FE_ENOENT;
}

int fe_cc_params_set(struct fe_cc_params *p, const char *name, const char *value, char *err,
                     size_t err_cap)
{
    if (!p || !p->algo || !name || !value)
        return fail(err, err_cap, FE_EINVAL, "no algorithm, parameter name or value");
    const struct fe_cc_algo *algo = p->algo;
    int i = fe_cc_param_index(algo, name);
    if (i < 0) {
        char names[512] = "";
        size_t used = 0;
        for (size_t k = 0; k < n_params(algo) && used < sizeof names; k++) {
            int w = snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "",
                             algo->params[k].name);
            if (w < 0) break;
            used += (size_t)w;
        }
        if (!n_params(algo))
            return fail(err, err_cap, FE_ENOENT, "%s has no parameters (got '%s')", algo->name,
                        name);
        return fail(err, err_cap, FE_ENOENT, "%s has no parameter '%s' (it has: %s)", algo->name,
                    name, names);
    }
    const struct fe_cc_param *d = &algo->params[i];

    const char *s = value;
    while (isspace((unsigned char)*s)) s++;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    while (end && isspace((unsigned char)*end)) end++;
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return fail(err, err_cap, FE_EINVAL, "%s: '%s' is not a number (%s)", name, value, d->unit);
    if (d->integer && v != floor(v))
        return fail(err, err_cap, FE_EINVAL, "%s: %s is not a whole number (%s)", name, value,
                    d->unit);
    if (v < d->min || v > d->max) {
        char a[40], lo[40], hi[40];
        fmt_num(a, sizeof a, v);
        fmt_num(lo, sizeof lo, d->min);
        fmt_num(hi, sizeof hi, d->max);
        return fail(err, err_cap, FE_ERANGE, "%s: %s out of range [%s, %s] %s", name, a, lo, hi,
                    d->unit);
    }
    if (v == 0) v = 0; /* no -0 */
    p->v[i] = v;
    return 0;
}

/* Copies [b, e) without surrounding blanks into out (cap bytes); false when it does not fit. */
static int trimmed(const char *b, const char *e, char *out, size_t cap)
{
    while (b < e && isspace((unsigned char)*b)) b++;
    while (e > b && isspace((unsigned char)e[-1])) e--;
    size_t n = (size_t)(e - b);
    if (n >= cap) return 0;
    memcpy(out, b, n);
    out[n] = 0;
    return 1;
}

int fe_cc_params_parse(struct fe_cc_params *p, const char *assignments, char *err, size_t err_cap)
{
    if (!p || !p->algo || !assignments)
        return fail(err, err_cap, FE_EINVAL, "no algorithm or parameter list");
    /* All or nothing: a list with one bad assignment leaves *p untouched. */
    struct fe_cc_params work = *p;
    const char *s = assignments;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return 0;
    for (;;) {
        const char *comma = strchr(s, ',');
        const char *e = comma ? comma : s + strlen(s);
        const char *eq = memchr(s, '=', (size_t)(e - s));
        char name[64], value[64];
        if (!eq)
            return fail(err, err_cap, FE_EINVAL, "'%.*s': expected name=value",
                        (int)(e - s > 60 ? 60 : e - s), s);
        if (!trimmed(s, eq, name, sizeof name) || !name[0])
            return fail(err, err_cap, FE_EINVAL, "'%.*s': missing or too long parameter name",
                        (int)(e - s > 60 ? 60 : e - s), s);
        if (!trimmed(eq + 1, e, value, sizeof value) || !value[0])
            return fail(err, err_cap, FE_EINVAL, "%s: missing or too long value", name);
        int rc = fe_cc_params_set(&work, name, value, err, err_cap);
        if (rc) return rc;
        if (!comma) break;
        s = comma + 1;
    }
    *p = work;
    return 0;
}
