/* feroce demo --event-building: event building on loopback, each piece its own process as in
 * a real readout: front-ends (feroce send --eb-source), builders (feroce builder) and the event
 * manager (feroce evm). One builder is slowed partway, killed with SIGKILL and restarted a while
 * later (it rejoins: the manager takes it up again, or with round-robin it joins at an event the
 * front-ends agree on); a live table shows built events/s, Gb/s and latency per builder; the end
 * is the accounting of every triggered event (feroce eb-check) and the verification of every
 * recorded byte. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "feroce/sidechannel.h"
#include "feroce/wire.h"
#include "tools/cli.h"
#include "tools/eb_wire.h"
#include "tools/io_opts.h"
#include "web/web.h"
#include "web/web_io.h"

#define D_MAX_FE 8
#define D_MAX_B  8

static const char eb_usage[] =
    "usage: feroce demo --event-building [OPTIONS]\n"
    "Event building on loopback: front-ends (feroce send --eb-source), builders (feroce\n"
    "builder) and an event manager (feroce evm), each its own process. Every event's fragments\n"
    "go to the builder the assignment names; builders verify every byte and record events. One\n"
    "builder is slowed partway, killed with SIGKILL and, under round-robin, restarted: it\n"
    "rejoins. A live table of\n"
    "built events/s, Gb/s and latency per builder; then the accounting of every triggered\n"
    "event.\n"
    "\n"
    "  --frontends N (4)  --builders M (3)  --events K (60000)  --trigger-hz R (10000)\n"
    "  --frag-bytes N|MIN-MAX (1K-4K)  --slots S (64)\n"
    "  --policy availability|round-robin (availability)\n"
    "  --slow B --slow-at TIME --slow-rate RATE   builder B's consumer drops to RATE TIME after\n"
    "                     it built its first event (the last builder, 1s, 40Mbps)\n"
    "  --kill-at TIME     SIGKILL the slow builder that long after it built its first event\n"
    "                     (1.5s; 0 = never)\n"
    "  --restart-after TIME   start the killed builder again (its records to another file)\n"
    "                     that long after the kill; it rejoins (round-robin: 1s; availability:\n"
    "                     0 = never, as the manager does not take a restarted builder back yet)\n"
    "  --base A.B         loopback addresses A.B.1.x front-ends, A.B.2.x builders, A.B.3.1\n"
    "                     the manager (127.78, else the first free of 127.86-99)\n"
    "  --keep DIR         keep the records and logs in DIR (default: a temporary directory,\n"
    "                     removed)\n"
    "  --web [ADDR:]PORT  live dashboard of every builder (docs/dashboard.md)  --web-hold TIME\n";

/* --restart-after not given: 1 s under round-robin (the restarted builder joins at an event the
 * front-ends agree on); never under availability, where the manager cannot take a restarted
 * builder back yet (its ring positions would have to start where the manager's count for it
 * stands), so the default demo shows what works. */
#define RESTART_BY_POLICY UINT64_MAX
#define RESTART_RR_NS     1000000000ull

struct d_opts {
    uint32_t n_fe, n_b, slots, slow;
    uint64_t events, trigger_hz, slow_at_ns, slow_bps, kill_at_ns, restart_after_ns;
    const char *sizes, *keep, *base;
    uint8_t policy;
    bool slow_given, base_given;
    char base_buf[16]; /* the base pick_base chose */
    struct fe_web_opts web;
};

struct d_child {
    pid_t pid;
    int out; /* builders: their live lines */
    char line[512];
    size_t len;
    bool killed, exited;
    bool restarted; /* a builder started again after its kill (its records: builderB.r.dat) */
    int status;
    /* the builder's newest live line */
    uint64_t built, incomplete;
    unsigned queue;
    double ev_s, gbps, p50, p99;
    double sum_ev_s, sum_gbps; /* the lines since the table's last row (--web: 10 a second) */
    unsigned n_lines;
};

struct demo {
    struct d_opts o;
    char dir[256];
    char self[4096];
    struct d_child fe[D_MAX_FE], b[D_MAX_B], evm;
    uint64_t t0, built_ns, killed_ns;
    char mgr[64];
};

/* Whether the UDP ports the processes of a run at 127.B bind are free. */
static bool base_free(const struct d_opts *o, uint32_t b)
{
    uint32_t net = 127u << 24 | b << 16;
    if (!fe_io_udp_port_free(net | 3u << 8 | 1u, 17200)) return false;
    for (uint32_t i = 1; i <= o->n_fe; i++)
        if (!fe_io_udp_port_free(net | 1u << 8 | i, FE_ROCEV2_UDP_PORT) ||
            !fe_io_udp_port_free(net | 1u << 8 | i, FE_SC_PORT))
            return false;
    for (uint32_t i = 1; i <= o->n_b; i++)
        if (!fe_io_udp_port_free(net | 2u << 8 | i, FE_ROCEV2_UDP_PORT) ||
            !fe_io_udp_port_free(net | 2u << 8 | i, FE_EBW_BUILDER_SC_PORT))
            return false;
    return true;
}

/* No --base: 127.78, else the first free of 127.86 .. 127.99, so that two demos on one machine
 * (two users, or tests run in parallel) do not collide. */
static void pick_base(struct d_opts *o)
{
    for (uint32_t b = 78; b <= 99; b = b == 78 ? 86 : b + 1) {
        if (!base_free(o, b)) continue;
        snprintf(o->base_buf, sizeof o->base_buf, "127.%u", b);
        o->base = o->base_buf;
        if (b != 78)
            fprintf(stderr, "feroce demo: 127.78 is in use (another demo?), using %s\n", o->base);
        return;
    }
}

static int parse(int argc, char **argv, struct d_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n_fe = 4;
    o->n_b = 3;
    o->slots = 64;
    o->events = 60000;
    o->trigger_hz = 10000;
    o->slow_at_ns = 1000000000ull;
    o->slow_bps = 40000000ull;
    o->kill_at_ns = 1500000000ull;
    o->restart_after_ns = RESTART_BY_POLICY;
    o->sizes = "1K-4K";
    o->base = "127.78";
    bool flag = false;
    const struct fe_opt opts[] = {
        {FE_OPT_FLAG_("--event-building", flag)},
        {FE_OPT_U32MAX_("--frontends", o->n_fe, D_MAX_FE), .min = 1},
        {FE_OPT_U32MAX_("--builders", o->n_b, D_MAX_B), .min = 2},
        {FE_OPT_UINT_("--events", o->events), .min = 1},
        {FE_OPT_UINT_("--trigger-hz", o->trigger_hz)},
        {FE_OPT_STR_("--frag-bytes", o->sizes)},
        {FE_OPT_U32MAX_("--slots", o->slots, 4096), .min = 2},
        {FE_OPT_FN_("--policy", fe_ebw_policy_opt, &o->policy)},
        {FE_OPT_U32MAX_("--slow", o->slow, D_MAX_B - 1), .seen = &o->slow_given},
        {FE_OPT_TIME_("--slow-at", o->slow_at_ns)},
        {FE_OPT_RATE_("--slow-rate", o->slow_bps), .min = 1},
        {FE_OPT_TIME_("--kill-at", o->kill_at_ns)},
        {FE_OPT_TIME_("--restart-after", o->restart_after_ns)},
        {FE_OPT_STR_("--base", o->base), .seen = &o->base_given},
        {FE_OPT_STR_("--keep", o->keep)},
        {FE_OPT_STR_("--web", o->web.addr)},
        {FE_OPT_TIME_("--web-hold", o->web.hold_ns)},
        {0},
    };
    const struct fe_opt *const tables[] = {opts, NULL};
    const struct fe_cli cli = {.cmd = "demo", .tables = tables, .flags = FE_OPT_SAY_INVALID};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    struct fe_ebw_sizes z;
    if (fe_ebw_sizes_parse(o->sizes, &z, "--frag-bytes")) return -1;
    if (o->restart_after_ns == RESTART_BY_POLICY)
        o->restart_after_ns = o->policy == FE_EB_POLICY_RR ? RESTART_RR_NS : 0;
    if (!o->slow_given) o->slow = o->n_b - 1;
    if (o->slow >= o->n_b) {
        fprintf(stderr, "feroce demo: --slow must name one of the %u builders\n", o->n_b);
        return -1;
    }
    unsigned a, b;
    char tail;
    if (sscanf(o->base, "%u.%u%c", &a, &b, &tail) != 2 || a != 127 || b > 255) {
        fprintf(stderr, "feroce demo: --base must be 127.B (a loopback /16)\n");
        return -1;
    }
    if (!o->base_given) pick_base(o);
    return 0;
}

/* ---- children ---- */

/* Starts `feroce ARGS...` with stdout to a pipe (builders) or to LOG in the run's directory. */
static int spawn(struct demo *d, struct d_child *c, const char *log, char *const *args)
{
    int p[2] = {-1, -1};
    if (!log && pipe(p)) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        char path[512];
        int fd;
        if (log) {
            snprintf(path, sizeof path, "%s/%s", d->dir, log);
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        } else {
            close(p[0]);
            fd = p[1];
        }
        if (fd >= 0) dup2(fd, 1);
        if (log && fd >= 0) {
            dup2(fd, 2);
        } else { /* a builder: its stdout is the live table's, its stderr a log */
            snprintf(path, sizeof path, "%s/builder-%d.err", d->dir, (int)getpid());
            int e = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (e >= 0) dup2(e, 2);
        }
        execv(d->self, args);
        _exit(127);
    }
    if (!log) {
        close(p[1]);
        c->out = p[0];
    } else {
        c->out = -1;
    }
    c->pid = pid;
    return 0;
}

#define ARG(...)                                                                                   \
    (char *[])                                                                                     \
    {                                                                                              \
        __VA_ARGS__, NULL                                                                          \
    }

static void addr(char *buf, size_t cap, const struct demo *d, int net, unsigned host)
{
    snprintf(buf, cap, "%s.%d.%u", d->o.base, net, host);
}

static int start_evm(struct demo *d, char *mgr, size_t cap)
{
    snprintf(mgr, cap, "%s.3.1:17200", d->o.base);
    if (d->o.policy != FE_EB_POLICY_TABLES) return 0;
    char nb[16], nf[16], k[32], s[16], rec[512];
    snprintf(nb, sizeof nb, "%u", d->o.n_b);
    snprintf(nf, sizeof nf, "%u", d->o.n_fe);
    snprintf(k, sizeof k, "%" PRIu64, d->o.events);
    snprintf(s, sizeof s, "%u", d->o.slots);
    snprintf(rec, sizeof rec, "%s/assignments.bin", d->dir);
    return spawn(d, &d->evm, "evm.log",
                 ARG(d->self, "evm", "--builders", nb, "--frontends", nf, "--bind", mgr, "--events",
                     k, "--slots", s, "--record", rec, "--interval", "0"));
}

static int start_fe(struct demo *d, unsigned i, const char *mgr)
{
    char src[16], nb[16], k[32], hz[32], bind[32], log[32], rep[512];
    snprintf(src, sizeof src, "%u", i);
    snprintf(rep, sizeof rep, "%s/fe%u.rep", d->dir, i);
    snprintf(nb, sizeof nb, "%u", d->o.n_b);
    snprintf(k, sizeof k, "%" PRIu64, d->o.events);
    snprintf(hz, sizeof hz, "%" PRIu64, d->o.trigger_hz);
    addr(bind, sizeof bind, d, 1, i + 1);
    snprintf(log, sizeof log, "fe%u.log", i);
    bool tables = d->o.policy == FE_EB_POLICY_TABLES;
    return spawn(d, &d->fe[i], log,
                 ARG(d->self, "send", "--eb-source", src, "--eb-builders", nb, "--events", k,
                     "--trigger-hz", hz, "--bind", bind, "--frag-bytes", (char *)d->o.sizes,
                     "--timeout", "120s", "--eb-report", rep, tables ? "--manager" : "--linger",
                     tables ? (char *)mgr : "300ms"));
}

/* The builder's records: the first run's, or the restarted one's (the killed run's stay for
 * eb-check --earlier). */
static void builder_out(char *buf, size_t cap, const struct demo *d, unsigned i, bool restarted)
{
    snprintf(buf, cap, "%s/builder%u%s.dat", d->dir, i, restarted ? ".r" : "");
}

static int start_builder(struct demo *d, unsigned i, const char *mgr)
{
    char id[16], nb[16], k[32], s[16], bind[32], fes[D_MAX_FE * 20] = "", out[512];
    char rate[32], at[32];
    snprintf(id, sizeof id, "%u", i);
    snprintf(nb, sizeof nb, "%u", d->o.n_b);
    snprintf(k, sizeof k, "%" PRIu64, d->o.events);
    snprintf(s, sizeof s, "%u", d->o.slots);
    addr(bind, sizeof bind, d, 2, i + 1);
    for (unsigned f = 0; f < d->o.n_fe; f++) {
        char a[24];
        addr(a, sizeof a, d, 1, f + 1);
        strcat(fes, f ? "," : "");
        strcat(fes, a);
    }
    builder_out(out, sizeof out, d, i, d->b[i].restarted);
    bool slow = i == d->o.slow && !d->b[i].restarted; /* restarted at full speed */
    snprintf(rate, sizeof rate, "%" PRIu64 "bps", slow ? d->o.slow_bps : 0);
    snprintf(at, sizeof at, "%" PRIu64 "ns", d->o.slow_at_ns);
    bool tables = d->o.policy == FE_EB_POLICY_TABLES;
    char *args[48] = {d->self,
                      "builder",
                      "--id",
                      id,
                      "--builders",
                      nb,
                      "--policy",
                      tables ? "availability" : "round-robin",
                      "--fe",
                      fes,
                      "--bind",
                      bind,
                      "--events",
                      k,
                      "--slots",
                      s,
                      "--frag-bytes",
                      (char *)d->o.sizes,
                      "--out",
                      out,
                      "--event-timeout",
                      "3s",
                      "--timeout",
                      "120s",
                      "--interval",
                      d->o.web.addr ? "100ms" : "1s"}; /* the page's 10 Hz */
    unsigned n = 26;                                   /* after --interval */
    if (tables) {
        args[n++] = "--manager";
        args[n++] = (char *)mgr;
    }
    if (slow) {
        args[n++] = "--consume-rate";
        args[n++] = rate;
        args[n++] = "--slow-from";
        args[n++] = at;
    }
    args[n] = NULL;
    return spawn(d, &d->b[i], NULL, args);
}

/* A builder's live line: "builder B: t=Ts built N (X ev/s, Y Gb/s) incomplete I queue Q ...
 * p50 P ms p99 Q ms" */
static void take_line(struct d_child *c)
{
    uint64_t built, inc;
    unsigned q;
    double ev, g, p50, p99;
    const char *s = strstr(c->line, " built ");
    const char *l = strstr(c->line, "latency p50 ");
    const char *i = strstr(c->line, " incomplete ");
    if (s && l && i && sscanf(s, " built %" SCNu64 " (%lf ev/s, %lf Gb/s)", &built, &ev, &g) == 3 &&
        sscanf(i, " incomplete %" SCNu64 " queue %u", &inc, &q) == 2 &&
        sscanf(l, "latency p50 %lf ms p99 %lf ms", &p50, &p99) == 2) {
        c->incomplete = inc;
        c->queue = q;
        c->sum_ev_s += ev;
        c->sum_gbps += g;
        c->n_lines++;
        c->built = built;
        c->ev_s = ev;
        c->gbps = g;
        c->p50 = p50;
        c->p99 = p99;
    }
}

static void read_lines(struct d_child *c)
{
    char buf[4096];
    ssize_t n = read(c->out, buf, sizeof buf);
    if (n <= 0) {
        close(c->out);
        c->out = -1;
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n' || c->len == sizeof c->line - 1) {
            c->line[c->len] = 0;
            take_line(c);
            c->len = 0;
        } else {
            c->line[c->len++] = buf[i];
        }
    }
}

static void print_header(const struct demo *d)
{
    printf("        ");
    for (unsigned i = 0; i < d->o.n_b; i++)
        printf("| b%u %6s %7s %10s %5s %9s %-8s", i, "built", "ev/s", "Gb/s", "p50", "p99 ms", "");
    printf("\n");
}

static void print_table(struct demo *d, uint64_t now)
{
    printf("t=%4.1fs ", (double)(now - d->t0) / 1e9);
    for (unsigned i = 0; i < d->o.n_b; i++) {
        struct d_child *c = &d->b[i];
        if (c->n_lines) { /* the second's mean, not its last line's 100 ms (--web) */
            c->ev_s = c->sum_ev_s / c->n_lines;
            c->gbps = c->sum_gbps / c->n_lines;
            c->sum_ev_s = c->sum_gbps = 0;
            c->n_lines = 0;
        }
        const char *tag = c->killed                                          ? "KILLED"
                          : c->restarted && c->built                         ? "REJOINED"
                          : c->restarted                                     ? "RESTART"
                          : i == d->o.slow && now >= d->t0 + d->o.slow_at_ns ? "slow"
                                                                             : "";
        printf("| b%u %6" PRIu64 " %5.0f/s %5.3f Gb/s %5.1f %6.1f ms %-8s", i, c->built,
               c->killed ? 0.0 : c->ev_s, c->killed ? 0.0 : c->gbps, c->p50, c->p99, tag);
    }
    printf("\n");
    fflush(stdout);
}

static bool reap(struct d_child *c)
{
    if (!c->pid || c->exited) return true;
    if (waitpid(c->pid, &c->status, WNOHANG) == c->pid) c->exited = true;
    return c->exited;
}

static bool all_exited(struct demo *d)
{
    bool all = reap(&d->evm);
    for (unsigned i = 0; i < d->o.n_fe; i++) all = reap(&d->fe[i]) && all;
    for (unsigned i = 0; i < d->o.n_b; i++) all = reap(&d->b[i]) && all;
    return all;
}

static void kill_all(struct demo *d)
{
    struct d_child *all[1 + D_MAX_FE + D_MAX_B];
    unsigned n = 0;
    all[n++] = &d->evm;
    for (unsigned i = 0; i < d->o.n_fe; i++) all[n++] = &d->fe[i];
    for (unsigned i = 0; i < d->o.n_b; i++) all[n++] = &d->b[i];
    for (unsigned i = 0; i < n; i++)
        if (all[i]->pid && !all[i]->exited) {
            kill(all[i]->pid, SIGKILL);
            waitpid(all[i]->pid, &all[i]->status, 0);
            all[i]->exited = true;
        }
}

/* --web: each builder as its newest live line has it (a killed one stays at its last). */
static void web_fill(void *ctx, struct fe_web_sample *s)
{
    struct demo *d = ctx;
    s->n_builders = d->o.n_b < FE_WEB_MAX_BUILDERS ? d->o.n_b : FE_WEB_MAX_BUILDERS;
    for (unsigned i = 0; i < s->n_builders; i++) {
        const struct d_child *c = &d->b[i];
        struct fe_web_builder *x = &s->b[i];
        x->id = i;
        x->up = !c->killed && !c->exited;
        x->has_built = true;
        x->has_slots = x->up; /* a killed builder's ring is gone */
        x->built = c->built;
        x->incomplete = c->incomplete;
        x->has_latency = x->up && c->built;
        x->lat_p50_ns = (uint64_t)(c->p50 * 1e6);
        x->lat_p99_ns = (uint64_t)(c->p99 * 1e6);
        x->slots_used = c->queue;
        x->slots = d->o.slots;
    }
}

static int start_web(struct demo *d)
{
    char desc[256];
    snprintf(desc, sizeof desc,
             "event building on loopback: %u front-ends, %u builders (b%u slowed, killed, then "
             "restarted unless --restart-after 0); "
             "each builder as its live line reports it every 100 ms",
             d->o.n_fe, d->o.n_b, d->o.slow);
    struct fe_web_eb_run r = {desc, d->o.n_b, 0, web_fill, d};
    return fe_web_io_eb(&d->o.web, "demo", &r);
}

/* The killed builder, started again --restart-after later: a new process with the same id (its
 * records to another file), at full speed. Its live line starts again from 0 built. */
static void restart_killed(struct demo *d, uint64_t now)
{
    struct d_child *c = &d->b[d->o.slow];
    if (!c->killed || !d->o.restart_after_ns || now < d->killed_ns + d->o.restart_after_ns) return;
    if (!c->exited) waitpid(c->pid, &c->status, 0); /* SIGKILLed: gone at once */
    if (c->out >= 0) close(c->out);
    *c = (struct d_child){.out = -1, .restarted = true};
    if (start_builder(d, d->o.slow, d->mgr)) {
        printf("-- builder %u could not be restarted\n", d->o.slow);
        c->killed = c->exited = true; /* counted as the killed one */
        d->o.restart_after_ns = 0;
        return;
    }
    printf("-- builder %u restarted: %s\n", d->o.slow,
           d->o.policy == FE_EB_POLICY_TABLES
               ? "it comes back up, but the manager does not give a restarted builder events "
                 "yet (its positions would have to start where the manager's count stands)"
               : "it rejoins at an event every front-end agrees on (round-robin join)");
}

static void watch(struct demo *d)
{
    uint64_t next = d->t0 + 1000000000ull;
    while (!all_exited(d) && !fe_cli_signals) {
        struct pollfd p[D_MAX_B];
        unsigned map[D_MAX_B], n = 0;
        for (unsigned i = 0; i < d->o.n_b; i++)
            if (d->b[i].out >= 0) {
                p[n] = (struct pollfd){.fd = d->b[i].out, .events = POLLIN};
                map[n++] = i;
            }
        uint64_t t = fe_wall_ns(), dl = fe_web_io_deadline(&d->o.web, t + 100000000ull);
        (void)poll(p, n, dl > t ? (int)((dl - t + 999999) / 1000000) : 0);
        for (unsigned k = 0; k < n; k++)
            if (p[k].revents) read_lines(&d->b[map[k]]);
        uint64_t now = fe_wall_ns();
        fe_web_io_step(&d->o.web, now);
        struct d_child *slow = &d->b[d->o.slow];
        if (!d->built_ns && slow->built) d->built_ns = now; /* building started */
        if (d->o.kill_at_ns && d->built_ns && !slow->killed && !slow->restarted &&
            now >= d->built_ns + d->o.kill_at_ns) {
            slow->killed = true;
            if (reap(slow)) {
                printf("-- builder %u had finished before --kill-at\n", d->o.slow);
                slow->killed = false;
                d->o.kill_at_ns = 0;
            } else {
                kill(slow->pid, SIGKILL);
                d->killed_ns = now;
                printf("-- builder %u killed (SIGKILL)\n", d->o.slow);
            }
        }
        restart_killed(d, now);
        if (now >= next) {
            print_table(d, now);
            next += 1000000000ull;
        }
    }
}

/* The accounting: feroce eb-check over every builder's record and every front-end's report. */
static int check(struct demo *d)
{
    char k[32], nf[16], asg[512], sizes[64];
    char outs[D_MAX_B][512], reps[D_MAX_FE][512];
    char *args[18 + 2 * D_MAX_B + 2 * D_MAX_FE], earlier[512];
    unsigned n = 0;
    snprintf(k, sizeof k, "%" PRIu64, d->o.events);
    snprintf(nf, sizeof nf, "%u", d->o.n_fe);
    snprintf(asg, sizeof asg, "%s/assignments.bin", d->dir);
    snprintf(sizes, sizeof sizes, "%s", d->o.sizes);
    bool tables = d->o.policy == FE_EB_POLICY_TABLES;
    char *fixed[] = {
        d->self, "eb-check",     "--events", k,          "--sources",
        nf,      "--frag-bytes", sizes,      "--policy", tables ? "availability" : "round-robin"};
    for (unsigned i = 0; i < sizeof fixed / sizeof *fixed; i++) args[n++] = fixed[i];
    if (tables) {
        args[n++] = "--assignments";
        args[n++] = asg;
    }
    for (unsigned i = 0; i < d->o.n_b; i++) {
        if (d->b[i].restarted) { /* the killed run's records, then the restarted one's */
            builder_out(earlier, sizeof earlier, d, i, false);
            args[n++] = "--earlier";
            args[n++] = earlier;
        }
        builder_out(outs[i], sizeof outs[i], d, i, d->b[i].restarted);
        args[n++] = "--builder";
        args[n++] = outs[i];
    }
    for (unsigned i = 0; i < d->o.n_fe; i++) {
        snprintf(reps[i], sizeof reps[i], "%s/fe%u.rep", d->dir, i);
        args[n++] = "--report";
        args[n++] = reps[i];
    }
    args[n] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execv(d->self, args);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int exited_ok(const struct d_child *c)
{
    return c->killed || (WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0);
}

static void remove_dir(const struct demo *d)
{
    if (d->o.keep) return;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    if (system(cmd) != 0) fprintf(stderr, "feroce demo: could not remove %s\n", d->dir);
}

static int make_dir(struct demo *d)
{
    if (d->o.keep) {
        snprintf(d->dir, sizeof d->dir, "%s", d->o.keep);
        if (mkdir(d->dir, 0755) && errno != EEXIST) return -1;
        return 0;
    }
    snprintf(d->dir, sizeof d->dir, "/tmp/feroce-eb-XXXXXX");
    return mkdtemp(d->dir) ? 0 : -1;
}

static int start_all(struct demo *d)
{
    if (start_evm(d, d->mgr, sizeof d->mgr)) return -1;
    for (unsigned i = 0; i < d->o.n_b; i++)
        if (start_builder(d, i, d->mgr)) return -1;
    for (unsigned i = 0; i < d->o.n_fe; i++)
        if (start_fe(d, i, d->mgr)) return -1;
    return 0;
}

int fe_eb_demo_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* --help is feroce demo's own (main.c answers it) */
        if (!strcmp(argv[i], "--eb-help")) {
            fputs(eb_usage, stdout);
            return 0;
        }
    struct demo *d = calloc(1, sizeof *d);
    if (!d) return 1;
    int rc = 2;
    if (parse(argc, argv, &d->o)) goto out;
    rc = 1;
    ssize_t n = readlink("/proc/self/exe", d->self, sizeof d->self - 1);
    if (n <= 0 || make_dir(d)) {
        fprintf(stderr, "feroce demo: cannot find myself or make a directory for the run\n");
        goto out;
    }
    char kill_s[96] = "never killed";
    if (d->o.kill_at_ns && d->o.restart_after_ns)
        snprintf(kill_s, sizeof kill_s, "killed %.1f s (restarted %.1f s later)",
                 (double)d->o.kill_at_ns / 1e9, (double)d->o.restart_after_ns / 1e9);
    else if (d->o.kill_at_ns)
        snprintf(kill_s, sizeof kill_s, "killed %.1f s", (double)d->o.kill_at_ns / 1e9);
    printf("event building on loopback: %u front-ends, %u builders, %s; %" PRIu64
           " events at %" PRIu64 " Hz, fragments %s; builder %u slowed to %" PRIu64
           " Mb/s %.1f s and %s after it built its first event\n",
           d->o.n_fe, d->o.n_b,
           d->o.policy == FE_EB_POLICY_TABLES ? "event manager (availability)" : "round-robin",
           d->o.events, d->o.trigger_hz, d->o.sizes, d->o.slow, d->o.slow_bps / 1000000,
           (double)d->o.slow_at_ns / 1e9, kill_s);
    fflush(stdout);
    fe_cli_catch_stop_signals();
    if (start_web(d)) {
        remove_dir(d);
        goto out;
    }
    print_header(d);
    d->t0 = fe_wall_ns();
    if (start_all(d) == 0) {
        watch(d);
        bool ok = !fe_cli_signals;
        kill_all(d);
        for (unsigned i = 0; i < d->o.n_fe; i++) ok = ok && exited_ok(&d->fe[i]);
        for (unsigned i = 0; i < d->o.n_b; i++) ok = ok && exited_ok(&d->b[i]);
        print_table(d, fe_wall_ns());
        if (!ok) printf("a process failed: see the logs in %s (--keep DIR keeps them)\n", d->dir);
        rc = check(d) == 0 && ok ? 0 : 1;
    } else {
        fprintf(stderr, "feroce demo: cannot start the processes\n");
        kill_all(d);
    }
    for (unsigned i = 0; i < d->o.n_b; i++)
        if (d->b[i].out >= 0) close(d->b[i].out);
    remove_dir(d);
    fe_web_io_finish(&d->o.web, "demo");
out:
    free(d);
    return rc;
}
