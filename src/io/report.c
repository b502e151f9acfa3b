/* Reporting helpers (see include/feroce/report.h). */
#include "feroce/report.h"

#include <math.h>
#include <string.h>

uint64_t fe_hist_quantile_ns(const uint64_t *now, const uint64_t *before, int nbuckets, double q)
{
    uint64_t total = 0;
    for (int i = 0; i < nbuckets; i++) total += now[i] - (before ? before[i] : 0);
    if (!total) return 0;
    uint64_t want = (uint64_t)ceil(q * (double)total), seen = 0;
    if (want < 1) want = 1;
    for (int i = 0; i < nbuckets; i++) {
        seen += now[i] - (before ? before[i] : 0);
        if (seen >= want) return (uint64_t)ldexp(1.41421356, i); /* sqrt(2^i x 2^(i+1)) */
    }
    return (uint64_t)ldexp(1.0, nbuckets);
}

static double rate_bps(const struct fe_cc_trace *t)
{
    if (!strcmp(t->unit, "Mb/s")) return t->value * 1e6;
    if (!strcmp(t->unit, "Gb/s")) return t->value * 1e9;
    if (!strcmp(t->unit, "B/s")) return t->value * 8;
    if (!strcmp(t->unit, "MB/s")) return t->value * 8e6;
    return t->value; /* b/s */
}

void fe_cc_view_of(const struct fe_cc *cc, struct fe_cc_view *v)
{
    struct fe_cc_trace t[FE_CC_MAX_TRACE];
    fe_cc_view_from(t, fe_cc_trace(cc, t, FE_CC_MAX_TRACE), v);
}

void fe_cc_view_from(const struct fe_cc_trace *t, int n, struct fe_cc_view *v)
{
    memset(v, 0, sizeof *v);
    for (int i = 0; i < n; i++) {
        if (!strcmp(t[i].name, "Rc")) {
            v->has_rc = true;
            v->rc_bps = rate_bps(&t[i]);
        } else if (!strcmp(t[i].name, "Rt")) {
            v->has_rt = true;
            v->rt_bps = rate_bps(&t[i]);
        } else if (!strcmp(t[i].name, "alpha")) {
            v->has_alpha = true;
            v->alpha = !strcmp(t[i].unit, "1/1024") ? t[i].value / 1024.0 : t[i].value;
        }
    }
}
