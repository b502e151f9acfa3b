/* libFuzzer target for the simulator's CSV trace read back by `feroce sim --replay` (outside
 * input: any file). Checks: a refused trace explains why ("name:line: what") and leaves the
 * result empty; an accepted one has a time column, at least one flow, every flow's columns
 * before the queue columns, rows x columns values with time never going back and every value
 * but an empty CC variable finite and, but for CC variables, not negative. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "web/trace_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_accepted(const struct fe_trace_csv *t)
{
    if (!t->n_flows || !t->n_rows || t->n_cols < 2 || t->cols[0].kind != FE_TRACE_TIME) abort();
    bool ports = false;
    for (unsigned k = 1; k < t->n_cols; k++) {
        const struct fe_trace_col *c = &t->cols[k];
        if (c->kind == FE_TRACE_QUEUE) {
            ports = true;
            if (c->flow >= t->n_ports || !memchr(t->port[c->flow], 0, sizeof t->port[0])) abort();
        } else if (ports || c->flow >= t->n_flows || c->kind == FE_TRACE_TIME) {
            abort();
        } else if (c->kind == FE_TRACE_VAR && c->var >= t->n_vars[c->flow]) {
            abort();
        }
    }
    for (size_t r = 0; r < t->n_rows; r++)
        for (unsigned k = 0; k < t->n_cols; k++) {
            double v = t->v[r * t->n_cols + k];
            bool var = t->cols[k].kind == FE_TRACE_VAR;
            if (isnan(v) ? !var : !isfinite(v) || (!var && v < 0)) abort();
            if (k == 0 && r && v < t->v[(r - 1) * t->n_cols]) abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fe_trace_csv t; /* large: not on the stack */
    char err[300];
    memset(err, 0x55, sizeof err);
    if (fe_trace_csv_parse((const char *)data, size, "fuzz.csv", &t, err, sizeof err)) {
        if (!memchr(err, 0, sizeof err) || strncmp(err, "fuzz.csv:", 9) || t.v || t.cols ||
            t.n_rows)
            abort();
        return 0;
    }
    check_accepted(&t);
    fe_trace_csv_free(&t);
    return 0;
}
