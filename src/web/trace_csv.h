/* The simulator's CSV trace (`feroce sim --trace`, src/sim/trace.c) read back, for `feroce sim
 * --replay TRACE.csv --web`: a header "time_us,f0_gbps,f0_rate_gbps,f0_VAR[UNIT]...,
 * q_NODE_pK_bytes..." and one row of numbers per sample. Outside input: anything else is
 * refused with "NAME:LINE: what" (fuzzed: tests/web/fuzz_trace_csv.c). No I/O, no web layer. */
#ifndef FE_WEB_TRACE_CSV_H
#define FE_WEB_TRACE_CSV_H

#include <stddef.h>
#include <stdint.h>

#define FE_TRACE_CSV_MAX_FLOWS 64
#define FE_TRACE_CSV_MAX_VARS  16
#define FE_TRACE_CSV_MAX_PORTS 256
#define FE_TRACE_CSV_MAX_CELLS (16u << 20) /* rows x columns: 128 MiB of values at most */

enum fe_trace_col_kind {
    FE_TRACE_TIME,
    FE_TRACE_GBPS,
    FE_TRACE_RATE,
    FE_TRACE_VAR,
    FE_TRACE_QUEUE
};

struct fe_trace_col {
    uint8_t kind;  /* enum fe_trace_col_kind */
    uint16_t flow; /* GBPS, RATE, VAR: the flow; QUEUE: the port */
    uint8_t var;   /* VAR: index into the flow's vars */
};

struct fe_trace_var {
    char name[24], unit[24];
};

struct fe_trace_csv {
    unsigned n_flows, n_ports, n_cols;
    size_t n_rows;
    unsigned n_vars[FE_TRACE_CSV_MAX_FLOWS];
    struct fe_trace_var vars[FE_TRACE_CSV_MAX_FLOWS][FE_TRACE_CSV_MAX_VARS];
    char port[FE_TRACE_CSV_MAX_PORTS][48]; /* "NODE.pK" */
    struct fe_trace_col *cols;             /* n_cols */
    double *v; /* n_rows x n_cols, row-major; an empty cell (a CC variable of a flow not
                * running) is NaN */
};

/* Parses text (len bytes, a NUL not required): 0, or -1 with "name:line: what" in err and t
 * empty. */
int fe_trace_csv_parse(const char *text, size_t len, const char *name, struct fe_trace_csv *t,
                       char *err, size_t err_cap);
void fe_trace_csv_free(struct fe_trace_csv *t);

#endif
