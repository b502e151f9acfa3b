/* feroce bench sim: the simulator's speed.
 *   1. event queue: ns per hold operation (pop + push) of the calendar queue, the 4-ary heap and
 *      the timing wheel at 64 .. 1M pending events, the ratios measured in the same run;
 *   2. advcam-dcqcn as HPCC ns-3 runs it: 1000-byte payloads, 2 us links, 55 MB per sender,
 *      until every flow completes: CPU and wall time, events/s, events per data packet,
 *      instructions per data packet (hardware counter, when the machine has one), with the
 *      default queue (calendar) and, as the baseline in the same run, the heap; the fastest
 *      of five runs of each (ns-3 is compared only in 3, where it is run);
 *   3. the same from HPCC ns-3's files (tests/sim/ns3/advcam-dcqcn) with --ns3-compat and,
 *      given HPCC ns-3's program (--ns3 PROGRAM), ns-3 on those files in the same run;
 *   4. a 128-host two-tier fat-tree (8 leaves x 16 hosts, 16 spines, 100 Gb/s, 1 us) with an
 *      all-to-all incast (16256 flows, DCQCN), 10 ms simulated: events/s and memory; and its
 *      run loop's lookahead on against off, in alternating slices of one simulation.
 * Options: --quick (smaller runs), --queue calendar|heap|wheel (for 2 and 4), --ns3 PROGRAM,
 * --ns3-files DIR (for 3: another directory of HPCC files). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <linux/perf_event.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "feroce/sim.h"
#include "sim/engine.h"
#include "sim/partition.h"
#include "sim/sim_internal.h"
#include "tools/cli.h"

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 20;
}

/* Hold model: n pending, then ops x (pop, push at t + delay) with simulator-like delays. */
static double hold_ns(enum fe_sim_queue_kind kind, uint32_t n, uint32_t ops)
{
    struct fe_evq q;
    if (fe_evq_init(&q, kind)) return 0;
    uint64_t seed = 12345;
    for (uint32_t i = 0; i < n; i++) fe_evq_push(&q, lcg(&seed) % (n * 100ull + 1000), i);
    uint64_t t0 = fe_wall_ns(), sum = 0;
    for (uint32_t i = 0; i < ops; i++) {
        uint64_t t, d;
        fe_evq_pop(&q, &t, &d);
        sum += d;
        uint64_t r = lcg(&seed) % 100;
        /* serialization (tens of ns .. us), propagation (1-2 us), rarely a timer (ms) */
        uint64_t delay = r < 60   ? 80 + lcg(&seed) % 3300
                         : r < 99 ? 1000 + lcg(&seed) % 4000
                                  : 300000 + lcg(&seed) % 3000000;
        fe_evq_push(&q, t + delay, d);
    }
    uint64_t dt = fe_wall_ns() - t0;
    fe_bench_sink(sum);
    fe_evq_free(&q);
    return (double)dt / ops;
}

/* CPU time of this process: on a shared machine it is the figure to compare, the wall clock
 * also counts the time other processes held the core */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* User-space instructions retired, from the hardware counter: -1 when there is none (VMs,
 * perf_event_paranoid). Opened once per run. */
static int instr_open(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static int64_t instr_read(int fd)
{
    uint64_t v;
    if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) return -1;
    return (int64_t)v;
}

/* A field of /proc/self/status in kB ("VmHWM:", "VmRSS:"), -1 where it cannot be read. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (kb < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0) kb = strtol(line + n, NULL, 10);
    fclose(f);
    return kb;
}

/* The peak RSS since the last reset_peak_rss (getrusage's, since the start, without /proc). */
static long peak_rss_kb(void)
{
    long kb = status_kb("VmHWM:");
    if (kb >= 0) return kb;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Before a section: what earlier runs freed is handed back (release_freed: a 2-thread run's second
 * malloc arena keeps it otherwise), and the peak restarts from the RSS now, so that each section's
 * peak is its own runs' and not the largest of the process's life. Returns the RSS now in kB. */
static void release_freed(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static long reset_peak_rss(void)
{
    release_freed();
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, "5", 1) != 1) { /* an older kernel: the peak stays the process's */
        }
        close(fd);
    }
    long kb = status_kb("VmRSS:");
    return kb >= 0 ? kb : peak_rss_kb();
}

struct run_result {
    double wall_s, cpu_s;
    int64_t instr;                /* -1: no counter */
    enum fe_sim_queue_kind queue; /* the queue it ran on */
    uint64_t events, data_pkts, pool, sim_ns, flows_done, flows;
    uint64_t arrivals, tx_done, wakes, pause_ends, pfc_refreshes; /* events by kind */
    double agg_gbps, jain;
};

/* A simulation of sc on queue `kind` (< 0: the simulator's own choice); NULL after a message. */
static struct fe_sim *create_sim(struct fe_sim_scenario *sc, int kind)
{
    char err[256] = "";
    int rc;
    struct fe_sim *sim = fe_sim_create(sc, &rc, err, sizeof(err));
    if (!sim) {
        fprintf(stderr, "bench sim: %s\n", err);
        return NULL;
    }
    if (kind >= 0) fe_sim_set_queue(sim, (enum fe_sim_queue_kind)kind);
    return sim;
}

/* kind as for create_sim. The figures are those of the run from its start to `until`. */
static int run_sim(struct fe_sim_scenario *sc, int kind, uint64_t until, struct run_result *r)
{
    struct fe_sim *sim = create_sim(sc, kind);
    if (!sim) return 1;
    enum fe_sim_queue_kind queue = sim->q.kind;
    int fd = instr_open();
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    uint64_t t0 = fe_wall_ns(), c0 = cpu_ns();
    int rc = fe_sim_run(sim, until);
    uint64_t dt = fe_wall_ns() - t0, dc = cpu_ns() - c0;
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    int64_t instr = instr_read(fd);
    if (fd >= 0) close(fd);
    if (rc < 0) {
        fprintf(stderr, "bench sim: run failed\n");
        fe_sim_destroy(sim);
        return 1;
    }
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    struct fe_sim_summary sum;
    fe_sim_summarize(sim, &sum);
    memset(r, 0, sizeof(*r));
    r->queue = queue;
    r->wall_s = dt / 1e9;
    r->cpu_s = dc / 1e9;
    r->instr = instr;
    r->events = st.events;
    r->data_pkts = st.data_pkts_delivered;
    r->pool = st.pool_pkts;
    r->sim_ns = st.now_ns;
    r->flows_done = st.flows_done;
    r->flows = fe_sim_n_flows(sim);
    r->agg_gbps = sum.aggregate_bps / 1e9;
    r->jain = sum.jain;
    const uint64_t *k = sim->ev_kind_count;
    r->arrivals = k[EV_ARRIVE] + k[EV_ARRIVE_HOST];
    r->tx_done = k[EV_TX_DONE];
    r->wakes = k[EV_HOST_WAKE];
    r->pause_ends = k[EV_PAUSE_END];
    r->pfc_refreshes = k[EV_PFC_REFRESH];
    fe_sim_destroy(sim);
    return 0;
}

/* n per data packet of the run */
static double per_data_pkt(const struct run_result *r, uint64_t n)
{
    return (double)n / (double)(r->data_pkts ? r->data_pkts : 1);
}

static void print_run(const char *what, const struct run_result *r)
{
    printf("  %-8s %7.3f s CPU (%.3f s wall)  %6.3f s simulated  %6.2f M events  %5.1f M "
           "events/s of CPU  %4.2f events/data packet  %.2f M data packets  %llu/%llu flows "
           "done\n",
           what, r->cpu_s, r->wall_s, r->sim_ns / 1e9, r->events / 1e6,
           r->cpu_s > 0 ? r->events / 1e6 / r->cpu_s : 0,
           r->data_pkts ? (double)r->events / (double)r->data_pkts : 0, r->data_pkts / 1e6,
           (unsigned long long)r->flows_done, (unsigned long long)r->flows);
    printf("  %-8s events by kind: arrivals %.2f, tx-done %.2f, host wake-ups %.2f, pause "
           "ends %.2f, PFC refresh %.2f per data packet; peak packets in flight %llu\n",
           "", per_data_pkt(r, r->arrivals), per_data_pkt(r, r->tx_done), per_data_pkt(r, r->wakes),
           per_data_pkt(r, r->pause_ends), per_data_pkt(r, r->pfc_refreshes),
           (unsigned long long)r->pool);
    if (r->instr >= 0)
        printf("  %-8s %.0f instructions per data packet, %.0f per event\n", "",
               (double)r->instr / (double)(r->data_pkts ? r->data_pkts : 1),
               (double)r->instr / (double)(r->events ? r->events : 1));
    else
        printf("  %-8s instructions: no hardware counter here (valgrind --tool=callgrind counts "
               "them)\n",
               "");
}

#define ADVCAM_RUNS 5

static const char *queue_name(enum fe_sim_queue_kind k)
{
    return k == FE_SIM_EVQ_CALENDAR ? "(calendar)" : k == FE_SIM_EVQ_WHEEL ? "(wheel)" : "(heap)";
}

/* The default queue (the calendar) and, as the baseline measured in the same run, the heap;
 * only one of them with --queue. */
/* advcam-dcqcn as HPCC ns-3 runs it (a tenth of the bytes when quick) */
static int advcam_scenario(struct fe_sim_scenario *sc, bool quick)
{
    char err[256];
    if (fe_sim_builtin_load("advcam-dcqcn", sc, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    sc->host.mtu_bytes = 1024;
    for (uint32_t i = 0; i < sc->n_links; i++) sc->links[i].delay_ns = 2000;
    for (uint32_t i = 0; i < sc->n_flows; i++) {
        sc->flows[i].bytes = quick ? 5500000 : 55000000;
        sc->flows[i].msg_bytes = 1000;
    }
    return 0;
}

static int bench_advcam(bool quick, int only_queue)
{
    struct fe_sim_scenario sc;
    if (advcam_scenario(&sc, quick)) return 1;
    printf("advcam-dcqcn, 1000-byte payloads (one message each, as HPCC's per-packet ACKs), 2 us "
           "links, %s MB per sender, until every flow completes:\n",
           quick ? "5.5" : "55");
    static const enum fe_sim_queue_kind kinds[2] = {FE_SIM_EVQ_CALENDAR, FE_SIM_EVQ_HEAP};
    /* Several runs, the queues alternating, and the fastest of each kept: on a shared machine a
     * single run's CPU time varies by a third (other work evicts the caches and takes the
     * memory bandwidth), the fastest is the figure that repeats. */
    int runs = quick ? 1 : ADVCAM_RUNS;
    struct run_result r[2];
    double cpu[2][ADVCAM_RUNS];
    memset(r, 0, sizeof(r));
    int ran = 0;
    for (int i = 0; i < runs; i++) {
        for (int k = 0; k < 2; k++) {
            if (only_queue >= 0 && (int)kinds[k] != only_queue) continue;
            struct run_result one;
            if (run_sim(&sc, kinds[k], FE_SIM_NO_TIME, &one)) {
                fe_sim_scenario_free(&sc);
                return 1;
            }
            cpu[k][i] = one.cpu_s;
            if (!i || one.cpu_s < r[k].cpu_s) r[k] = one;
            ran |= 1 << k;
        }
    }
    for (int k = 0; k < 2; k++) {
        if (!(ran >> k & 1)) continue;
        print_run(queue_name(r[k].queue), &r[k]);
        if (runs > 1) {
            printf("  %-8s fastest of %d runs; CPU s of each:", "", runs);
            for (int i = 0; i < runs; i++) printf(" %.3f", cpu[k][i]);
            printf("\n");
        }
    }
    const struct run_result *d = ran & 1 ? &r[0] : &r[1];
    printf("  contention window: aggregate %.3f Gb/s, Jain %.4f\n", d->agg_gbps, d->jain);
    if (ran == 3) {
        printf("  heap (baseline, same run) / calendar (default): CPU time x%.2f",
               r[1].cpu_s / r[0].cpu_s);
        if (r[0].instr > 0 && r[1].instr > 0)
            printf(", instructions x%.2f", (double)r[1].instr / (double)r[0].instr);
        printf(" (same events: %s)\n", r[0].events == r[1].events ? "yes" : "NO");
    }
    fe_sim_scenario_free(&sc);
    return 0;
}

/* ---- advcam from HPCC ns-3's own files, and (--ns3 PROGRAM) HPCC ns-3 itself on them ---- */

#define NS3_FILES_DEFAULT "tests/sim/ns3/advcam-dcqcn"
#define NS3_RUNS          ADVCAM_RUNS /* as many as feroce's, the fastest of each */
#define NS3_FILE_MAX      (1 << 20)   /* the HPCC inputs are text files of a few KB */

/* A new temporary directory holding a copy of dir's regular files: ns-3 reads its inputs and
 * writes its outputs (fct.txt, pfc.txt, mix.tr, ...) relative to its working directory, which
 * must not be the source tree. */
static int copy_dir(const char *dir, char *tmp, size_t cap)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    if (snprintf(tmp, cap, "%s/feroce-bench-ns3-XXXXXX", base) >= (int)cap || !mkdtemp(tmp)) {
        fprintf(stderr, "bench sim: mkdtemp in %s: %s\n", base, strerror(errno));
        tmp[0] = '\0';
        return 1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "bench sim: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        char from[1024], to[1024];
        struct stat sb;
        if (snprintf(from, sizeof(from), "%s/%s", dir, e->d_name) >= (int)sizeof(from) ||
            snprintf(to, sizeof(to), "%s/%s", tmp, e->d_name) >= (int)sizeof(to) ||
            stat(from, &sb) || !S_ISREG(sb.st_mode))
            continue;
        if (sb.st_size > NS3_FILE_MAX) {
            fprintf(stderr, "bench sim: %s: over %d bytes, not an HPCC input\n", from,
                    NS3_FILE_MAX);
            rc = 1;
            break;
        }
        char *text = malloc((size_t)sb.st_size + 1);
        FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
        size_t n = text && in ? fread(text, 1, (size_t)sb.st_size, in) : 0;
        if (!text || !in || !out || n != (size_t)sb.st_size || fwrite(text, 1, n, out) != n) {
            fprintf(stderr, "bench sim: copying %s to %s failed\n", from, tmp);
            rc = 1;
        }
        free(text);
        if (in) fclose(in);
        if (out && fclose(out)) rc = 1;
    }
    closedir(d);
    return rc;
}

/* Removes what copy_dir made and ns-3 wrote: the directory's files, then it. */
static void remove_dir(const char *tmp)
{
    DIR *d = opendir(tmp);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        char p[1024];
        if (e->d_name[0] == '.' ||
            snprintf(p, sizeof(p), "%s/%s", tmp, e->d_name) >= (int)sizeof(p))
            continue;
        unlink(p);
    }
    closedir(d);
    rmdir(tmp);
}

/* `prog config` in tmp, its output in tmp/ns3.log; its CPU time (user + system, from wait4). */
static int run_ns3(const char *prog, const char *tmp, const char *config, double *cpu_s)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa)) return 1;
    /* in order: the directory first, so that ns3.log is created in it */
    int rc = posix_spawn_file_actions_addchdir_np(&fa, tmp);
    if (!rc) rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (!rc)
        rc =
            posix_spawn_file_actions_addopen(&fa, 1, "ns3.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    char *argv[] = {(char *)prog, (char *)config, NULL};
    pid_t pid;
    extern char **environ;
    if (!rc) rc = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        fprintf(stderr, "bench sim: cannot run %s: %s\n", prog, strerror(rc));
        return 1;
    }
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "bench sim: wait4: %s\n", strerror(errno));
            return 1;
        }
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "bench sim: %s %s failed (%s %d); its output is in %s/ns3.log\n", prog,
                config, WIFEXITED(st) ? "exit status" : "signal",
                WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), tmp);
        return 1;
    }
    *cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    return 0;
}

/* HPCC's fct.txt: "sip dip sport dport size start_ns fct_ns standalone_fct_ns" per completed
 * flow; how many, their bytes, and the last completion. */
static int read_fct(const char *path, uint64_t *flows, uint64_t *bytes, uint64_t *end_ns)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench sim: ns-3 wrote no %s: %s\n", path, strerror(errno));
        return 1;
    }
    char line[512];
    *flows = *bytes = *end_ns = 0;
    int rc = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long size, start, fct;
        if (sscanf(line, "%*s %*s %*s %*s %llu %llu %llu", &size, &start, &fct) != 3) {
            fprintf(stderr, "bench sim: %s: not an fct.txt line: %.80s", path, line);
            rc = 1;
            break;
        }
        (*flows)++;
        *bytes += size;
        if (start + fct > *end_ns) *end_ns = start + fct;
    }
    fclose(f);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The speed scenario as HPCC's files describe it (tests/sim/ns3/advcam-dcqcn: the same fabric,
 * payloads and flows as bench_advcam's, with ns-3's DCQCN settings), run with --ns3-compat;
 * with a PROGRAM, HPCC ns-3's scratch/third built by the user (it is not in Debian), run on
 * the same files in the same run, alternating with feroce on them and (unless quick, which
 * runs a tenth of the bytes) on bench_advcam's scenario: the speed ratio the issue quotes,
 * measured, each run between the others' so that this VM's slow and fast phases fall on all. */
static int bench_ns3_files(const char *dir, const char *prog, bool quick)
{
    char config[1024], err[256];
    if (snprintf(config, sizeof(config), "%s/config.txt", dir) >= (int)sizeof(config)) return 1;
    if (access(config, R_OK)) { /* run() refused --ns3 without them */
        printf("advcam-dcqcn from HPCC ns-3's files: skipped (no %s; run from the source tree "
               "or give --ns3-files DIR)\n",
               config);
        return 0;
    }
    struct fe_sim_scenario sc;
    struct fe_sim_hpcc_files hf;
    if (fe_sim_hpcc_load(config, NULL, NULL, &sc, &hf, err, sizeof(err))) {
        fprintf(stderr, "bench sim: %s\n", err);
        return 1;
    }
    fe_sim_scenario_ns3_compat(&sc);
    uint64_t total = 0;
    for (uint32_t i = 0; i < sc.n_flows; i++) total += sc.flows[i].bytes;
    printf("advcam-dcqcn from HPCC ns-3's files (%s), feroce --ns3-compat%s:\n", dir,
           prog ? ", and HPCC ns-3 on the same files, alternating" : "");
    char tmp[512] = "";
    char rprog[PATH_MAX];
    if (prog && (!realpath(prog, rprog) || copy_dir(dir, tmp, sizeof(tmp)))) {
        if (!tmp[0]) fprintf(stderr, "bench sim: %s: %s\n", prog, strerror(errno));
        goto fail;
    }
    int runs = quick ? 1 : ADVCAM_RUNS, ns3_runs = quick ? 1 : NS3_RUNS;
    struct run_result r;
    memset(&r, 0, sizeof(r));
    double cpu[ADVCAM_RUNS], ns3_cpu[NS3_RUNS], adv_cpu[ADVCAM_RUNS], ns3_best = 0, adv_best = 0;
    struct fe_sim_scenario adv;
    bool with_adv = prog && !quick;
    if (with_adv && advcam_scenario(&adv, false)) goto fail;
    for (int i = 0; i < runs; i++) {
        struct run_result one;
        if (with_adv) {
            if (run_sim(&adv, FE_SIM_EVQ_CALENDAR, FE_SIM_NO_TIME, &one)) goto fail_adv;
            adv_cpu[i] = one.cpu_s;
            if (!i || one.cpu_s < adv_best) adv_best = one.cpu_s;
        }
        if (run_sim(&sc, -1, FE_SIM_NO_TIME, &one)) goto fail_adv;
        cpu[i] = one.cpu_s;
        if (!i || one.cpu_s < r.cpu_s) r = one;
        if (prog && i < ns3_runs) {
            if (run_ns3(rprog, tmp, "config.txt", &ns3_cpu[i])) goto fail_adv;
            if (!i || ns3_cpu[i] < ns3_best) ns3_best = ns3_cpu[i];
        }
    }
    if (with_adv) fe_sim_scenario_free(&adv);
    print_run(queue_name(r.queue), &r);
    printf("  %-8s fastest of %d runs; CPU s of each:", "", runs);
    for (int i = 0; i < runs; i++) printf(" %.3f", cpu[i]);
    printf("\n");
    if (prog) {
        /* ns-3 writes FCT_OUTPUT_FILE relative to its directory: the same name in tmp */
        const char *name = hf.fct_out;
        size_t dl = strlen(dir);
        if (!strncmp(name, dir, dl) && name[dl] == '/') name += dl + 1;
        char fct[1024];
        uint64_t flows, bytes, end_ns;
        if (snprintf(fct, sizeof(fct), "%s/%s", tmp, name) >= (int)sizeof(fct) ||
            read_fct(fct, &flows, &bytes, &end_ns))
            goto fail;
        if (flows != sc.n_flows || bytes != total) {
            fprintf(stderr,
                    "bench sim: ns-3 completed %llu flows of %llu bytes, the files describe %u of "
                    "%llu: not the same run (see %s)\n",
                    (unsigned long long)flows, (unsigned long long)bytes, sc.n_flows,
                    (unsigned long long)total, tmp);
            goto fail;
        }
        printf("  (ns-3)   %7.3f s CPU  last flow done at %.3f s simulated (feroce: %.3f s)  "
               "%llu/%u flows done\n",
               ns3_best, end_ns / 1e9, r.sim_ns / 1e9, (unsigned long long)flows, sc.n_flows);
        printf("  %-8s fastest of %d runs; CPU s of each:", "", ns3_runs);
        for (int i = 0; i < ns3_runs; i++) printf(" %.3f", ns3_cpu[i]);
        printf("\n");
        if (with_adv) {
            printf(
                "  (advcam) %7.3f s CPU  advcam-dcqcn as above (calendar), alternating with these; "
                "CPU s of each:",
                adv_best);
            for (int i = 0; i < runs; i++) printf(" %.3f", adv_cpu[i]);
            printf("\n");
        }
        printf("  HPCC ns-3 / feroce, measured in this run: x%.1f on these files (--ns3-compat)",
               ns3_best / r.cpu_s);
        if (with_adv)
            printf(", x%.1f against advcam-dcqcn (feroce's own modelling)", ns3_best / adv_best);
        printf("\n");
        /* The machine's speed drifts over seconds: a ratio of runs made back to back compares
         * like with like, whatever the phase each pair fell in. */
        double pair[NS3_RUNS];
        printf("  %-8s pairs, each ns-3 run / the feroce run on these files just before it:", "");
        for (int i = 0; i < ns3_runs; i++) printf(" x%.1f", pair[i] = ns3_cpu[i] / cpu[i]);
        qsort(pair, (size_t)ns3_runs, sizeof pair[0], cmp_double);
        printf("; median x%.1f\n", pair[ns3_runs / 2]);
        remove_dir(tmp);
    }
    fe_sim_scenario_free(&sc);
    return 0;
fail_adv:
    if (with_adv) fe_sim_scenario_free(&adv);
fail:
    if (tmp[0]) fprintf(stderr, "bench sim: ns-3's directory kept: %s\n", tmp);
    fe_sim_scenario_free(&sc);
    return 1;
}

/* The run loop's lookahead (on in a large fabric) against the same loop without it, in one
 * simulation: from its second millisecond (the first starts 32 k QPs), slices run alternately
 * with and without (on, off, off, on, ...), so that this VM's drifts in speed, which last
 * seconds to minutes, fall on both alike; the ratio of their CPU time per event. The lookahead
 * changes no result (test_sim_same_on_all_queues runs advcam both ways). */
static int bench_lookahead(struct fe_sim_scenario *sc, int kind, bool quick)
{
    enum { SLICES = 40 };
    const uint64_t from = 1000000, slice_ns = 50000;
    int slices = quick ? 4 : SLICES;
    struct fe_sim *sim = create_sim(sc, kind);
    if (!sim) return 1;
    int rc;
    fe_sim_run(sim, from);
    double cpu_s[2] = {0, 0}, events[2] = {0, 0};
    for (int i = 0; i < slices; i++) {
        int on = (i + i / 2) % 2 == 0; /* on, off, off, on, on, off, ... */
        struct fe_sim_stats a, b;
        fe_sim_stats(sim, &a);
        if (fe_sim_set_lookahead(sim, on)) {
            fe_sim_destroy(sim);
            return 1;
        }
        uint64_t c0 = cpu_ns();
        rc = fe_sim_run(sim, from + (uint64_t)(i + 1) * slice_ns);
        uint64_t dc = cpu_ns() - c0;
        fe_sim_stats(sim, &b);
        if (rc < 0) {
            fprintf(stderr, "bench sim: run failed\n");
            fe_sim_destroy(sim);
            return 1;
        }
        cpu_s[on] += dc / 1e9;
        events[on] += (double)(b.events - a.events);
    }
    fe_sim_destroy(sim);
    printf("  run-loop lookahead on / off (%.0f -> %.0f us in %d alternating slices): CPU time per "
           "event x%.3f\n",
           from / 1e3, (from + (uint64_t)slices * slice_ns) / 1e3, slices,
           cpu_s[1] / events[1] / (cpu_s[0] / events[0]));
    return 0;
}

/* kind < 0: the simulator's own choice (the wheel, for its 512 ports) */
static int bench_fattree(bool quick, int kind)
{
    /* 8 leaves x 16 hosts, 16 spines: every leaf has 16 ports down and 16 up, 1:1 */
    static const char yaml[] =
        "name: fat-tree-128\n"
        "link: {rate: 100Gbps, delay: 1us}\n"
        "topology: {kind: leaf-spine, leaves: 8, spines: 16, hosts_per_leaf: 16}\n"
        "switch:\n  buffer: 32MiB\n  ecn: true\n"
        "  red: [{rate: 100Gbps, kmin: 400KB, kmax: 1600KB, pmax: 0.2}]\n"
        "host: {mtu: 4096, replay: 256KiB}\n"
        "cc: dcqcn\n"
        "flows: [{pattern: all-to-all, size: 1MB}]\n";
    struct fe_sim_scenario sc;
    char err[256];
    if (fe_sim_scenario_parse_yaml(yaml, sizeof(yaml) - 1, "fat-tree", &sc, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    uint64_t until = quick ? 1000000 : 10000000;
    printf("fat-tree, 128 hosts (8 leaves x 16, 16 spines, 100 Gb/s, 1 us), all-to-all incast "
           "(%u flows of 1 MB, DCQCN), %.0f ms simulated:\n",
           sc.n_flows, until / 1e6);
    long rss0 = reset_peak_rss();
    struct run_result r;
    if (run_sim(&sc, kind, until, &r)) return 1;
    print_run(queue_name(r.queue), &r);
    printf("  peak RSS %.1f MB (at the start: %.1f MB)\n", peak_rss_kb() / 1024.0, rss0 / 1024.0);
    if (bench_lookahead(&sc, kind, quick)) return 1;
    /* every host sends 127 flows and receives 127: at line rate that alone takes this long, so
     * with fair sharing no flow completes much before it */
    printf("  each host sends and receives 127 x 1 MB: %.2f ms at 100 Gb/s before any payload "
           "overhead, so flows complete only after that\n",
           127.0 * 1e6 * 8 / 100e9 * 1e3);
    fe_sim_scenario_free(&sc);
    return 0;
}

/* ---- parallel simulation: speedup at 2 threads ---- */

/* One run of sc to `until` on `threads` parts (1: sequential): wall time, events, what each part
 * did; the results' fingerprint (events, data packets, flows done, ECN marks) to compare. */
struct par_result {
    double wall_s;
    uint64_t events, data_pkts, flows_done, ecn_marks;
    struct fe_sim_par_info pi;
};

static int run_par(struct fe_sim_scenario *sc, uint32_t threads, uint64_t until,
                   struct par_result *r)
{
    memset(r, 0, sizeof(*r));
    struct fe_sim *sim = create_sim(sc, -1);
    if (!sim) return 1;
    if (threads > 1) {
        struct fe_sim_partition p;
        char why[256] = "";
        int rc = fe_sim_partition_auto(sim, threads, &p, why, sizeof(why));
        if (!rc) {
            rc = fe_sim_set_parallel(sim, &p, why, sizeof(why));
            fe_sim_partition_free(&p);
        }
        if (rc) {
            fprintf(stderr, "bench sim: parallel: %s\n", why);
            fe_sim_destroy(sim);
            return 1;
        }
    }
    uint64_t t0 = fe_wall_ns();
    int rc = fe_sim_run(sim, until);
    r->wall_s = (fe_wall_ns() - t0) / 1e9;
    struct fe_sim_stats st;
    fe_sim_stats(sim, &st);
    r->events = st.events;
    r->data_pkts = st.data_pkts_delivered;
    r->flows_done = st.flows_done;
    r->ecn_marks = st.ecn_marks;
    fe_sim_parallel_info(sim, &r->pi);
    fe_sim_destroy(sim);
    if (rc < 0) fprintf(stderr, "bench sim: run failed\n");
    return rc < 0;
}

/* The smallest share of a core any thread of a parallel run had (its CPU time over the run's
 * wall time): below 1, another job took the core, and the wall clock measured that. */
static double core_share(const struct fe_sim_par_info *pi)
{
    double share = 1;
    uint32_t k = pi->parts < FE_SIM_MAX_INFO_PARTS ? pi->parts : FE_SIM_MAX_INFO_PARTS;
    for (uint32_t j = 0; j < k && pi->wall_ns; j++) {
        double s = (double)pi->cpu_ns[j] / (double)pi->wall_ns;
        if (s < share) share = s;
    }
    return share;
}

/* Speedup at 2 threads: 1-thread and 2-thread runs alternate (the machine's drifts fall on
 * both), the median of the pairs' ratios. Wall time: meaningful only on an idle machine (the
 * load average and the threads' share of a core are printed); the parts' event counts and
 * barriers do not depend on it. */
static int bench_parallel_on(const char *what, struct fe_sim_scenario *sc, uint64_t until,
                             int pairs)
{
    double ratio[8], wall1 = 0, wall2 = 0, load[1] = {0};
    struct par_result r1, r2;
    long rss0 = reset_peak_rss();
    getloadavg(load, 1);
    for (int i = 0; i < pairs; i++) {
        /* each run's peak alone: a run does not start on what the last one's arenas kept */
        if (run_par(sc, 1, until, &r1)) return 1;
        release_freed();
        if (run_par(sc, 2, until, &r2)) return 1;
        release_freed();
        ratio[i] = r1.wall_s / r2.wall_s;
        wall1 += r1.wall_s;
        wall2 += r2.wall_s;
    }
    qsort(ratio, (size_t)pairs, sizeof(double), cmp_double);
    bool same = r1.events == r2.events && r1.data_pkts == r2.data_pkts &&
                r1.flows_done == r2.flows_done && r1.ecn_marks == r2.ecn_marks;
    double share = core_share(&r2.pi);
    printf("  %s, %.0f us simulated: 2 threads x%.2f (median of %d pairs; load average %.1f on "
           "%ld cores before; each thread of the last 2-thread run had %.0f %% of a core or "
           "more%s)\n",
           what, until / 1e3, ratio[pairs / 2], pairs, load[0], sysconf(_SC_NPROCESSORS_ONLN),
           100 * share,
           share < 0.9 ? ": the machine is busy, the wall-clock ratio is not the speedup" : "");
    printf("    1 thread %.2f M events/s, 2 threads %.2f M events/s (wall); results %s\n",
           r1.events / 1e6 / (wall1 / pairs), r2.events / 1e6 / (wall2 / pairs),
           same ? "identical" : "DIFFER (a bug: a parallel run must match one thread's)");
    printf("    parts: events %llu + %llu (largest %.1f %%), %llu windows, %llu barriers, frames "
           "between parts %llu + %llu\n",
           (unsigned long long)r2.pi.events[0], (unsigned long long)r2.pi.events[1],
           100.0 * (double)(r2.pi.events[0] > r2.pi.events[1] ? r2.pi.events[0] : r2.pi.events[1]) /
               (double)(r2.pi.events[0] + r2.pi.events[1] ? r2.pi.events[0] + r2.pi.events[1] : 1),
           (unsigned long long)r2.pi.windows[0], (unsigned long long)r2.pi.barriers,
           (unsigned long long)r2.pi.frames_out[0], (unsigned long long)r2.pi.frames_out[1]);
    fe_sim_parallel_print_times(stdout, "    last 2-thread run: ", &r2.pi);
    printf("    peak RSS %.1f MB (at the start: %.1f MB)\n", peak_rss_kb() / 1024.0, rss0 / 1024.0);
    return 0;
}

/* A leaf-spine of leaves x hosts_per_leaf hosts, 100 Gb/s links of 1 us, DCQCN: all-to-all when
 * small, else each host sends 1 MB to 4 hosts of other leaves. */
static int fattree_scenario(uint32_t leaves, uint32_t per_leaf, uint32_t spines,
                            struct fe_sim_scenario *sc)
{
    uint32_t hosts = leaves * per_leaf;
    size_t cap = 4096 + (size_t)hosts * 4 * 48;
    char *y = malloc(cap);
    if (!y) return 1;
    int n = snprintf(y, cap,
                     "name: fat-tree-%u\nlink: {rate: 100Gbps, delay: 1us}\n"
                     "topology: {kind: leaf-spine, leaves: %u, spines: %u, hosts_per_leaf: %u}\n"
                     "switch:\n  buffer: 32MiB\n  ecn: true\n"
                     "  red: [{rate: 100Gbps, kmin: 400KB, kmax: 1600KB, pmax: 0.2}]\n"
                     "host: {mtu: 4096, replay: 256KiB}\ncc: dcqcn\nflows:\n",
                     hosts, leaves, spines, per_leaf);
    static const uint32_t shift[4] = {1, 5, 11, 17}, off[4] = {1, 3, 7, 13};
    if (hosts <= 128)
        n += snprintf(y + n, cap - (size_t)n, "  - {pattern: all-to-all, size: 1MB}\n");
    else
        for (uint32_t h = 0; h < hosts; h++)
            for (int k = 0; k < 4; k++)
                n += snprintf(y + n, cap - (size_t)n, "  - {src: h%u, dst: h%u, size: 1MB}\n", h,
                              (h + shift[k] * per_leaf + off[k]) % hosts);
    char err[256];
    int rc = fe_sim_scenario_parse_yaml(y, (size_t)n, "fat-tree", sc, err, sizeof(err));
    free(y);
    if (rc) fprintf(stderr, "bench sim: %s\n", err);
    return rc != 0;
}

static int bench_parallel(bool quick)
{
    struct fe_sim_scenario sc;
    int pairs = quick ? 1 : 3;
    printf("parallel simulation, 2 threads against 1 (the same run):\n");
    if (fattree_scenario(8, 16, 16, &sc)) return 1;
    int rc = bench_parallel_on("fat-tree 128 hosts (all-to-all, 16256 flows)", &sc,
                               quick ? 200000 : 1000000, pairs);
    fe_sim_scenario_free(&sc);
    if (rc || fattree_scenario(32, 32, 32, &sc)) return 1;
    rc = bench_parallel_on("fat-tree 1024 hosts (32 leaves x 32, 32 spines; 4096 flows)", &sc,
                           quick ? 50000 : 300000, pairs);
    fe_sim_scenario_free(&sc);
    return rc;
}

static int run(int argc, char **argv)
{
    bool quick = false, parallel_only = false;
    int only_queue = -1;
    const char *ns3 = NULL, *ns3_files = NS3_FILES_DEFAULT;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--parallel"))
            parallel_only = true;
        else if (!strcmp(argv[i], "--ns3") && i + 1 < argc)
            ns3 = argv[++i];
        else if (!strcmp(argv[i], "--ns3-files") && i + 1 < argc)
            ns3_files = argv[++i];
        else if (!strcmp(argv[i], "--queue") && i + 1 < argc) {
            i++;
            only_queue = !strcmp(argv[i], "wheel")      ? FE_SIM_EVQ_WHEEL
                         : !strcmp(argv[i], "calendar") ? FE_SIM_EVQ_CALENDAR
                                                        : FE_SIM_EVQ_HEAP;
        } else {
            fprintf(stderr, "usage: feroce bench sim [--quick] [--parallel] [--queue "
                            "calendar|heap|wheel] [--ns3 PROGRAM] [--ns3-files DIR]\n");
            return 2;
        }
    }
    if (ns3) { /* before minutes of runs */
        char config[1024];
        snprintf(config, sizeof(config), "%s/config.txt", ns3_files);
        if (access(config, R_OK)) {
            fprintf(stderr,
                    "bench sim: --ns3 runs on HPCC files: %s: %s (run from the source "
                    "tree or give --ns3-files DIR)\n",
                    config, strerror(errno));
            return 2;
        }
        if (access(ns3, X_OK)) {
            fprintf(stderr, "bench sim: --ns3 %s: %s\n", ns3, strerror(errno));
            return 2;
        }
    }
    if (parallel_only) return bench_parallel(quick);
    printf("event queue, hold model (pop + push, simulator-like delays), ns per operation:\n");
    static const uint32_t sizes[] = {64, 4096, 262144, 1048576};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint32_t ops = quick ? 500000 : 4000000;
        double h = hold_ns(FE_SIM_EVQ_HEAP, sizes[i], ops);
        double w = hold_ns(FE_SIM_EVQ_WHEEL, sizes[i], ops);
        double c = hold_ns(FE_SIM_EVQ_CALENDAR, sizes[i], ops);
        printf("  %8u pending: calendar %6.1f ns, heap %6.1f ns, wheel %6.1f ns  (calendar/heap "
               "%.2f, wheel/heap %.2f)\n",
               sizes[i], c, h, w, c / h, w / h);
    }
    if (bench_advcam(quick, only_queue)) return 1;
    if (bench_ns3_files(ns3_files, ns3, quick)) return 1;
    /* the fat-tree once, with the default queue (the wheel, for its 512 ports) unless one is asked
     * for */
    if (bench_fattree(quick, only_queue)) return 1;
    if (bench_parallel(quick)) return 1;
    return 0;
}

const struct fe_bench fe_bench_sim = {"sim", "simulator events/s (event queue, advcam, fat-tree)",
                                      run};
