/* feroce bench eb: event-building bookkeeping on one core. The builder's assembly
 * (fe_eb_asm_fragment for every fragment, fe_eb_asm_release for every event) in fragments per
 * second, for 16, 256 and 1024 sources, with the fragments of 4 events interleaved in a random
 * order; and the front-end's table lookup per event. The goal is >= 10 M fragments/s: the
 * bookkeeping must never be what limits a builder.
 *
 * Baseline, measured in the same run over the same fragment sequence: a counter per slot
 * incremented per fragment, the event done when it reaches the source count. That is the least
 * any assembly must do (find the slot, count); the ratio says what the rest costs: decoding the
 * immediate, recovering the 64-bit event number, checking source, slot, position, duplicate,
 * the bitmap, the deadline list and the release. It does not include moving the data (the RNIC
 * does that) nor the completion queue poll.
 *
 * Then the whole builder on loopback: one `feroce builder` process (one core: it is single
 * threaded) fed by 4 `feroce send --eb-source` processes as fast as it takes events, round-robin
 * over one builder, 16 KiB fragments; its built Gb/s counts the bytes of built events from the
 * first fragment to the last event built, every byte verified (not recorded to disk). The
 * transport, the completion path, the assembly and the verification are all in it; on a
 * machine with fewer cores than the 5 processes, the front-ends share them. */
#include "tools/cli.h"

#include "feroce/eb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK    4  /* events whose fragments interleave */
#define PATTERNS 64 /* distinct arrival orders, cycled */
#define N_SLOTS  64

struct frag {
    uint16_t source;
    uint16_t ev; /* event within its block */
};

/* PATTERNS random interleavings of BLOCK events x n sources (each source once per event). */
static struct frag *make_patterns(uint32_t n, uint64_t *rng)
{
    size_t len = (size_t)BLOCK * n;
    struct frag *p = malloc(PATTERNS * len * sizeof *p);
    if (!p) return NULL;
    for (int k = 0; k < PATTERNS; k++) {
        struct frag *f = p + k * len;
        for (size_t i = 0; i < len; i++) f[i] = (struct frag){(uint16_t)(i % n), (uint16_t)(i / n)};
        for (size_t i = len - 1; i > 0; i--) {
            *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
            size_t j = *rng % (i + 1);
            struct frag t = f[i];
            f[i] = f[j];
            f[j] = t;
        }
    }
    return p;
}

/* Fragments per second through the assembly, for at least min_ns. */
static double run_asm(uint32_t n, const struct frag *pat, uint64_t min_ns, uint64_t *events_out)
{
    struct fe_eb_asm_config c;
    fe_eb_asm_config_default(&c);
    c.n_sources = n;
    c.n_slots = N_SLOTS;
    c.rr_builders = 1;
    struct fe_eb_asm *a;
    if (fe_eb_asm_create(&a, &c)) return 0;
    unsigned bits = fe_eb_asm_slot_bits(a);
    size_t len = (size_t)BLOCK * n;
    uint64_t frags = 0, events = 0, e0 = 0;
    uint64_t t0 = fe_wall_ns(), t;
    do {
        for (int rep = 0; rep < 16; rep++, e0 += BLOCK) {
            const struct frag *f = pat + ((e0 / BLOCK) % PATTERNS) * len;
            for (size_t i = 0; i < len; i++) {
                uint64_t e = e0 + f[i].ev;
                uint32_t slot = (uint32_t)(e % N_SLOTS);
                struct fe_eb_event d;
                int v =
                    fe_eb_asm_fragment(a, e, f[i].source, fe_eb_imm_make(bits, slot, e), 256, &d);
                if (v == FE_EB_F_COMPLETE) {
                    fe_eb_asm_release(a, e, d.slot);
                    events++;
                }
            }
            frags += len;
        }
        t = fe_wall_ns();
    } while (t - t0 < min_ns);
    *events_out = events;
    uint64_t refused = 0;
    for (int r = 0; r < FE_EB_F_MAX; r++) refused += fe_eb_asm_stats(a)->refused[r];
    fe_bench_sink(refused);
    fe_eb_asm_destroy(a);
    return (double)frags * 1e9 / (double)(t - t0);
}

/* The same sequence, the same immediate and slot arithmetic, a counter per slot. */
static double run_base(uint32_t n, const struct frag *pat, uint64_t min_ns, uint64_t *events_out)
{
    uint32_t count[N_SLOTS] = {0};
    unsigned bits = fe_eb_slot_bits(N_SLOTS);
    size_t len = (size_t)BLOCK * n;
    uint64_t frags = 0, events = 0, e0 = 0, acc = 0;
    uint64_t t0 = fe_wall_ns(), t;
    do {
        for (int rep = 0; rep < 16; rep++, e0 += BLOCK) {
            const struct frag *f = pat + ((e0 / BLOCK) % PATTERNS) * len;
            for (size_t i = 0; i < len; i++) {
                uint64_t e = e0 + f[i].ev;
                uint32_t imm = fe_eb_imm_make(bits, (uint32_t)(e % N_SLOTS), e);
                uint32_t slot = fe_eb_imm_slot(bits, imm);
                acc += f[i].source;
                if (++count[slot] == n) {
                    count[slot] = 0;
                    events++;
                }
            }
            frags += len;
        }
        t = fe_wall_ns();
    } while (t - t0 < min_ns);
    *events_out = events;
    fe_bench_sink(acc);
    return (double)frags * 1e9 / (double)(t - t0);
}

/* Front-end: lookups per second in a table of one-event runs (the worst case: a new run at every
 * event), events in order, the table refilled and forgotten as it goes. */
static double run_lookup(uint64_t min_ns)
{
    struct fe_eb_fe_table *t;
    if (fe_eb_fe_table_create(&t, 4096, N_SLOTS, 0)) return 0;
    struct fe_eb_table c = {.n_runs = FE_EB_TABLE_RUNS};
    uint64_t e = 0, next = 0, acc = 0;
    uint64_t t0 = fe_wall_ns(), now;
    do {
        for (int rep = 0; rep < 4096; rep++, e++) {
            while (next < e + 1024) {
                c.first_event = next;
                for (int i = 0; i < FE_EB_TABLE_RUNS; i++)
                    c.run[i] = (struct fe_eb_run){(uint16_t)((next + i) % 8),
                                                  (uint16_t)(((next + i) / 8) % N_SLOTS), 1};
                fe_eb_fe_table_add(t, &c);
                next += FE_EB_TABLE_RUNS;
            }
            struct fe_eb_target x;
            fe_eb_fe_table_lookup(t, e, &x);
            acc += x.builder + x.slot;
            fe_eb_fe_table_forget(t, e);
        }
        now = fe_wall_ns();
    } while (now - t0 < min_ns);
    fe_bench_sink(acc);
    fe_eb_fe_table_destroy(t);
    return (double)e * 1e9 / (double)(now - t0);
}

/* One builder and 4 front-ends on loopback (127.79.x.y): the builder's JSON summary line. */
static int run_wire(char *json, size_t cap)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = 0;
    enum { FES = 4 };
    pid_t pid[FES + 1];
    int p[2];
    if (pipe(p)) return -1;
    char *b_args[] = {self,           "builder",
                      "--id",         "0",
                      "--builders",   "1",
                      "--policy",     "round-robin",
                      "--fe",         "127.79.1.1,127.79.1.2,127.79.1.3,127.79.1.4",
                      "--bind",       "127.79.2.1",
                      "--events",     "8000",
                      "--slots",      "64",
                      "--frag-max",   "16K",
                      "--frag-bytes", "16K",
                      "--json",       "--event-timeout",
                      "5s",           "--timeout",
                      "60s",          NULL};
    if ((pid[0] = fork()) == 0) {
        dup2(p[1], 1);
        close(p[0]);
        execv(self, b_args);
        _exit(127);
    }
    close(p[1]);
    for (int k = 0; k < FES; k++) {
        char src[12], bind[32]; /* room for any int: gcc checks the widest */
        snprintf(src, sizeof src, "%d", k);
        snprintf(bind, sizeof bind, "127.79.1.%d", k + 1);
        char *f_args[] = {self,       "send", "--eb-source",  src,         "--eb-builders", "1",
                          "--events", "8000", "--trigger-hz", "0",         "--frag-bytes",  "16K",
                          "--bind",   bind,   "--quiet",      "--timeout", "60s",           NULL};
        if ((pid[k + 1] = fork()) == 0) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0) dup2(null, 1);
            execv(self, f_args);
            _exit(127);
        }
    }
    size_t got = 0;
    ssize_t r;
    while (got < cap - 1 && (r = read(p[0], json + got, cap - 1 - got)) > 0) got += (size_t)r;
    json[got] = 0;
    close(p[0]);
    int bad = 0;
    for (int k = 0; k <= FES; k++) {
        int st = 0;
        if (pid[k] < 0 || waitpid(pid[k], &st, 0) != pid[k] || !WIFEXITED(st) || WEXITSTATUS(st))
            bad = 1;
    }
    return bad ? -1 : 0;
}

static void print_wire(void)
{
    char json[2048];
    if (run_wire(json, sizeof json)) {
        printf("builder on loopback: the run failed (the builder said: %s)\n",
               json[0] ? json : "nothing");
        return;
    }
    const char *g = strstr(json, "\"gbps\":"), *e = strstr(json, "\"events_per_s\":");
    const char *v = strstr(json, "\"verify_errors\":"), *i = strstr(json, "\"incomplete\":");
    printf("builder on loopback (4 front-ends, 16 KiB fragments, every byte verified): %.2f Gb/s "
           "built per builder core, %.0f events/s, %llu incomplete, %llu verify errors\n",
           g ? atof(g + 7) : 0, e ? atof(e + 15) : 0, i ? strtoull(i + 13, NULL, 10) : 0,
           v ? strtoull(v + 16, NULL, 10) : 0);
}

static int run(int argc, char **argv)
{
    bool wire = true;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--no-wire")) wire = false;
    uint64_t rng = 0x9E3779B97F4A7C15ull, min_ns = 300000000;
    static const uint32_t sources[] = {16, 256, 1024};
    printf("assembly: fragments of %d events interleaved at random, %d slots, one core\n", BLOCK,
           N_SLOTS);
    printf("  %-8s %14s %14s %8s %12s\n", "sources", "assembly/s", "baseline/s", "ratio",
           "ns/fragment");
    for (size_t k = 0; k < sizeof sources / sizeof sources[0]; k++) {
        uint32_t n = sources[k];
        struct frag *pat = make_patterns(n, &rng);
        if (!pat) return 1;
        uint64_t ev_a = 0, ev_b = 0;
        double base = run_base(n, pat, min_ns, &ev_b);
        double eb = run_asm(n, pat, min_ns, &ev_a);
        printf("  %-8u %12.1f M %12.1f M %7.2fx %12.2f\n", n, eb / 1e6, base / 1e6, base / eb,
               1e9 / eb);
        free(pat);
        if (!ev_a || !ev_b) return 1;
    }
    printf("  ratio = baseline rate / assembly rate: how many times a bare per-slot counter over "
           "the same sequence\n  is faster than the full bookkeeping; goal: assembly >= 10 M "
           "fragments/s\n");
    double lk = run_lookup(min_ns);
    printf("front-end table lookup (one-event runs, in order): %.1f M events/s, %.2f ns/event\n",
           lk / 1e6, 1e9 / lk);
    if (wire) print_wire();
    return 0;
}

const struct fe_bench fe_bench_eb = {
    "eb", "event building: assembly fragments/s, table lookups, built Gb/s on loopback", run};
