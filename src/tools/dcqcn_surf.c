/* feroce dcqcn --profile surf with the firmware's own inputs: register writes (as the firmware
 * programs them over AXI-Lite), CNP drive cycles, a run length in cycles. Outputs the change
 * events of Rc, Rt, alpha and timeStage, or the firmware's AXI-Lite view (what an ILA capture of
 * register reads shows), both cycle-exact against the VHDL (tests/cc/surf_golden.sh). */
#include "tools/dcqcn_surf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/surf.h"
#include "tools/cli.h"

#define MAX_REG_ARGS 64

struct surf_opts {
    const char *regs_files[MAX_REG_ARGS], *reg_args[MAX_REG_ARGS];
    int n_regs_files, n_reg_args;
    const char *cnp_file, *csv;
    uint32_t clock_hz, line_Bps;
    uint64_t until, every;
    uint32_t frame_bytes;
    int have_until;
    enum { OUT_EVENTS, OUT_AXIL, OUT_EGRESS } out;
    int n_out;
};

static const char *const surf_flags[] = {
    "--regs",   "--reg",      "--cnp-cycles", "--until-cycle",  "--events", "--axil",
    "--egress", "--clock-hz", "--axil-every", "--egress-frame", "--window", NULL};

int fe_dcqcn_surf_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        for (int k = 0; surf_flags[k]; k++)
            if (!strcmp(argv[i], surf_flags[k])) return 1;
    return 0;
}

static int fail(const char *msg, const char *arg)
{
    fprintf(stderr, "feroce dcqcn: %s%s\n", msg, arg ? arg : "");
    return 2;
}

static int parse_line_rate(const char *v, uint32_t *out)
{
    uint64_t bps;
    if (fe_parse_rate_bps(v, &bps, "--line-rate")) return -1;
    if (bps % 8 || bps == 0 || bps / 8 > UINT32_MAX) {
        fprintf(stderr, "feroce dcqcn: --line-rate must be a whole number of bytes per second, "
                        "above 0 and below 2^32 B/s\n");
        return -1;
    }
    *out = (uint32_t)(bps / 8);
    return 0;
}

static int set_output(struct surf_opts *o, int which)
{
    if (o->n_out++ && (int)o->out != which)
        return fail("--events, --axil and --egress are separate runs: give one", NULL);
    o->out = which;
    return 0;
}

static int take_list(const char **list, int *n, const char *v, const char *what)
{
    if (*n == MAX_REG_ARGS) return fail("too many ", what);
    list[(*n)++] = v;
    return 0;
}

/* One option with its value (v, NULL when none follows); returns 1 if it took v, 0 if not, -1. */
static int parse_one(struct surf_opts *o, const char *a, const char *v)
{
    if (!strcmp(a, "--events")) return set_output(o, OUT_EVENTS) ? -1 : 0;
    if (!strcmp(a, "--axil")) return set_output(o, OUT_AXIL) ? -1 : 0;
    if (!strcmp(a, "--egress")) return set_output(o, OUT_EGRESS) ? -1 : 0;
    if (!v) return fail(a, " needs a value"), -1;
    uint64_t u;
    if (!strcmp(a, "--profile")) {
        if (strcmp(v, "surf")) return fail("the cycle-model options need --profile surf", NULL), -1;
    } else if (!strcmp(a, "--regs")) {
        if (take_list(o->regs_files, &o->n_regs_files, v, "--regs files")) return -1;
    } else if (!strcmp(a, "--reg")) {
        if (take_list(o->reg_args, &o->n_reg_args, v, "--reg options")) return -1;
    } else if (!strcmp(a, "--cnp-cycles")) {
        o->cnp_file = v;
    } else if (!strcmp(a, "--csv")) {
        o->csv = v;
    } else if (!strcmp(a, "--line-rate")) {
        if (parse_line_rate(v, &o->line_Bps)) return -1;
    } else if (!strcmp(a, "--clock-hz")) {
        if (fe_parse_u32_max(v, &o->clock_hz, "--clock-hz", UINT32_MAX)) return -1;
        if (o->clock_hz < 1000000) return fail("--clock-hz must be at least 1000000", NULL), -1;
    } else if (!strcmp(a, "--until-cycle")) {
        if (fe_parse_u64(v, &o->until, "--until-cycle")) return -1;
        if (o->until > (1ull << 48)) return fail("--until-cycle must be at most 2^48", NULL), -1;
        o->have_until = 1;
    } else if (!strcmp(a, "--axil-every") || !strcmp(a, "--window")) {
        if (fe_parse_u64(v, &u, "--window")) return -1;
        if (u < 9 || u > UINT32_MAX) return fail("--window must be 9 to 2^32-1 cycles", NULL), -1;
        o->every = u;
    } else if (!strcmp(a, "--egress-frame")) {
        if (fe_parse_u32_max(v, &o->frame_bytes, "--egress-frame", 32)) return -1;
        if (!o->frame_bytes)
            return fail("--egress-frame must be 1 to 32 bytes (one beat)", NULL), -1;
    } else {
        return fail("unknown option for the surf cycle model: ", a), -1;
    }
    return 1;
}

static int parse_opts(struct surf_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->clock_hz = FE_SURF_CLOCK_HZ;
    o->line_Bps = FE_SURF_LINE_RATE_BPS;
    o->every = 156;
    o->frame_bytes = 32;
    for (int i = 1; i < argc; i++) {
        int took = parse_one(o, argv[i], i + 1 < argc ? argv[i + 1] : NULL);
        if (took < 0) return -1;
        i += took;
    }
    if (!o->have_until) return fail("--until-cycle N is required", NULL), -1;
    return 0;
}

static int apply_reg_line(struct fe_surf *m, const char *line, const char *where)
{
    struct fe_surf_reg_write w;
    char err[160];
    int r = fe_surf_parse_reg_line(line, &w, err, sizeof err);
    if (r < 0) {
        fprintf(stderr, "feroce dcqcn: %s: %s\n", where, err);
        return -1;
    }
    if (r) fe_surf_axil_write(m, w.addr, w.value);
    return 0;
}

/* Calls fn on each line of path with "path:N" for its messages; stops at the first error. A line
 * longer than the buffer is refused, not read in pieces. */
static int for_each_line(const char *path, int (*fn)(char *line, const char *where, void *arg),
                         void *arg)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "feroce dcqcn: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[512], where[300];
    unsigned lineno = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, "%s:%u", path, lineno);
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "feroce dcqcn: %s: line too long\n", where);
            rc = -1;
        } else {
            rc = fn(line, where, arg);
        }
    }
    fclose(f);
    return rc;
}

static int reg_file_line(char *line, const char *where, void *m)
{
    return apply_reg_line(m, line, where);
}

static int apply_regs_file(struct fe_surf *m, const char *path)
{
    return for_each_line(path, reg_file_line, m);
}

static int program(struct fe_surf *m, const struct surf_opts *o)
{
    for (int i = 0; i < o->n_regs_files; i++)
        if (apply_regs_file(m, o->regs_files[i])) return -1;
    for (int i = 0; i < o->n_reg_args; i++) {
        char line[300];
        snprintf(line, sizeof line, "%s", o->reg_args[i]);
        if (apply_reg_line(m, line, "--reg")) return -1;
    }
    return 0;
}

struct cnp_list {
    uint64_t *d;
    size_t n, cap;
};

static int push_cnp(struct cnp_list *c, uint64_t d)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        uint64_t *n = realloc(c->d, cap * sizeof *n);
        if (!n) return -1;
        c->d = n;
        c->cap = cap;
    }
    c->d[c->n++] = d;
    return 0;
}

/* One drive cycle per line; the value's text is s (comments and blanks removed). */
static int parse_cnp_line(char *s, struct cnp_list *c, const char *where)
{
    uint64_t d;
    char *end;
    if (*s < '0' || *s > '9') goto bad;
    errno = 0;
    d = strtoull(s, &end, 10);
    if (errno || *end || d > (1ull << 48)) goto bad;
    if (c->n && d < c->d[c->n - 1]) {
        fprintf(stderr,
                "feroce dcqcn: %s: drive cycles must not decrease (%" PRIu64 " after %" PRIu64
                ")\n",
                where, d, c->d[c->n - 1]);
        return -1;
    }
    return push_cnp(c, d);
bad:
    fprintf(stderr,
            "feroce dcqcn: %s: expected a drive cycle (a whole number up to 2^48), got '%.40s'\n",
            where, s);
    return -1;
}

static int cnp_file_line(char *line, const char *where, void *c)
{
    line[strcspn(line, "#\r\n")] = 0;
    char *s = line, *e = s + strlen(s);
    while (*s == ' ' || *s == '\t') s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
    return *s ? parse_cnp_line(s, c, where) : 0;
}

static int load_cnps(const char *path, struct cnp_list *c)
{
    return for_each_line(path, cnp_file_line, c);
}

/* Runs the model to `cycle`, feeding the CNP drives before it. */
static void run_to(struct fe_surf *m, const struct cnp_list *c, size_t *next, uint64_t cycle)
{
    while (*next < c->n && c->d[*next] + FE_SURF_CNP_LATENCY < cycle) {
        uint64_t d = c->d[(*next)++];
        fe_surf_run_until(m, d);
        fe_surf_cnp_drive(m, d);
    }
    fe_surf_run_until(m, cycle);
}

struct event_out {
    FILE *o;
    uint64_t until;
};

static void print_event(void *ctx, uint64_t cycle, const struct fe_surf_state *s)
{
    struct event_out *e = ctx;
    if (cycle > e->until) return;
    fprintf(e->o, "%" PRIu64 ",%u,%u,%u,%u\n", cycle, s->rc_Bps, s->rt_Bps, s->alpha, s->stage);
}

static void write_events(struct fe_surf *m, const struct cnp_list *c, const struct surf_opts *o,
                         FILE *out)
{
    struct event_out e = {out, o->until};
    fputs("cycle,Rc,Rt,alpha,timeStage\n", out);
    print_event(&e, 0, &m->s);
    fe_surf_set_change_fn(m, print_event, &e);
    size_t next = 0;
    run_to(m, c, &next, o->until + 1);
}

static uint32_t read_at(struct fe_surf *m, const struct cnp_list *c, size_t *next, uint32_t addr,
                        uint64_t cycle)
{
    uint32_t v;
    run_to(m, c, next, cycle);
    fe_surf_axil_read(m, addr, &v);
    return v;
}

static void write_axil(struct fe_surf *m, const struct cnp_list *c, const struct surf_opts *o,
                       FILE *out)
{
    fputs("cycle_Rc,Rc,cycle_Rt,Rt,cycle_r020,alpha,cnpCnt,r020_raw\n", out);
    size_t next = 0;
    for (uint64_t k = o->every; k + 9 <= o->until; k += o->every) {
        uint32_t rc = read_at(m, c, &next, FE_SURF_REG_RC, k + 1);
        uint32_t rt = read_at(m, c, &next, FE_SURF_REG_RT, k + 5);
        uint32_t st = read_at(m, c, &next, FE_SURF_REG_STATUS, k + 9);
        fprintf(out, "%" PRIu64 ",%u,%" PRIu64 ",%u,%" PRIu64 ",%u,%u,0x%08X\n", k + 1, rc, k + 5,
                rt, k + 9, st & 0x3ff, st >> 11 & 0xffff, st);
    }
}

struct window {
    uint64_t start, bytes, beats;
};

static void print_window(FILE *out, const struct window *w, uint64_t len)
{
    fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", w->start, len, w->bytes,
            w->beats);
}

/* Steps the bucket every cycle (it changes every cycle); the DCQCN model still jumps. A beat
 * released at edge n is counted at n + FE_SURF_EGRESS_LATENCY, in whole windows of K cycles. */
static void write_egress(struct fe_surf *m, const struct cnp_list *c, const struct surf_opts *o,
                         FILE *out)
{
    struct fe_surf_bucket b;
    fe_surf_bucket_init(&b, o->frame_bytes);
    uint32_t rc_hist[FE_SURF_TOKEN_LAG + 1];
    for (unsigned i = 0; i <= FE_SURF_TOKEN_LAG; i++) rc_hist[i] = m->s.rc_Bps;
    struct window w = {0, 0, 0};
    size_t next = 0;
    fputs("win_start_cycle,win_cycles,bytes,beats\n", out);
    for (uint64_t n = 0; n + FE_SURF_EGRESS_LATENCY < o->until; n++) {
        run_to(m, c, &next, n);
        memmove(rc_hist + 1, rc_hist, FE_SURF_TOKEN_LAG * sizeof *rc_hist);
        rc_hist[0] = m->s.rc_Bps;
        uint64_t at = n + FE_SURF_EGRESS_LATENCY;
        if (at >= w.start + o->every) {
            print_window(out, &w, o->every);
            w = (struct window){w.start + o->every, 0, 0};
        }
        if (n < FE_SURF_RESET_CYCLES) continue;
        if (fe_surf_bucket_edge(&b,
                                fe_surf_token_rate_q16(rc_hist[FE_SURF_TOKEN_LAG], o->clock_hz))) {
            w.bytes += o->frame_bytes;
            w.beats++;
        }
    }
    if (w.start + o->every <= o->until) print_window(out, &w, o->every);
}

static FILE *open_out(const char *csv)
{
    if (!csv) return stdout;
    FILE *f = fopen(csv, "w");
    if (!f) fprintf(stderr, "feroce dcqcn: %s: %s\n", csv, strerror(errno));
    return f;
}

int fe_dcqcn_surf_main(int argc, char **argv)
{
    struct surf_opts o;
    if (parse_opts(&o, argc, argv)) return 2;
    struct fe_surf_regs regs;
    fe_surf_regs_default(&regs, o.clock_hz);
    struct fe_surf m;
    fe_surf_init(&m, &regs, o.line_Bps);
    struct cnp_list c = {0};
    if (program(&m, &o) || (o.cnp_file && load_cnps(o.cnp_file, &c))) {
        free(c.d);
        return 2;
    }
    FILE *out = open_out(o.csv);
    if (!out) {
        free(c.d);
        return 1;
    }
    if (o.out == OUT_AXIL)
        write_axil(&m, &c, &o, out);
    else if (o.out == OUT_EGRESS)
        write_egress(&m, &c, &o, out);
    else
        write_events(&m, &c, &o, out);
    int rc = 0;
    if (out != stdout ? fclose(out) : fflush(out)) {
        fprintf(stderr, "feroce dcqcn: %s: %s\n", o.csv ? o.csv : "stdout", strerror(errno));
        rc = 1;
    }
    free(c.d);
    return rc;
}
