/* feroce bench raw: the raw Ethernet backend's two kernel paths, AF_PACKET and AF_XDP, in the
 * same run. One flow between two network namespaces joined by a veth pair: `feroce send` in one
 * streams 64 KiB RDMA WRITEs with immediate, `feroce recv` in the other places and verifies
 * every byte; Gb/s is the receiver's verified payload rate in its steady state (after the
 * warm-up), packets/s that rate over the path MTU (full packets). Path MTU 1024 over a veth of
 * MTU 1500 (AF_XDP in the driver's native hook) and 4096 over MTU 9000 (frames past a page:
 * generic hook, multi-buffer). The two paths alternate run by run (which goes first alternates
 * too), so a loaded machine hurts both alike; the figures are medians, the ratio the median of
 * the pairs' ratios. Needs root (namespaces, XDP); removes what it creates. */
#include "tools/cli.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPS 15

/* Set by SIGINT/SIGTERM: the runs stop, the namespaces are still removed. */
static volatile sig_atomic_t stop_asked;
static void on_stop(int sig)
{
    (void)sig;
    stop_asked = 1;
}

struct bench {
    char ns_rx[32], ns_tx[32], dir[64];
    uint64_t reps, seconds;
    bool json;
};

struct sample {
    double gbps;
    bool ok;
    char backend[40];
};

/* Runs argv (NULL-terminated), output to out (NULL: discarded); waits when wait is set.
 * Returns the child's pid (no wait) or its exit status (wait), -1 when it cannot start. */
static int spawn(char *const argv[], const char *out, bool wait)
{
    pid_t p = fork();
    if (p < 0) return -1;
    if (p == 0) {
        if (!freopen(out ? out : "/dev/null", "w", stdout)) _exit(126);
        if (!freopen("/dev/null", "w", stderr)) _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (!wait) return (int)p;
    int st;
    while (waitpid(p, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int sh(const char *cmd)
{
    char *const argv[] = {"sh", "-c", (char *)cmd, NULL};
    return spawn(argv, NULL, true);
}

/* The namespaces (their veth and any XDP program go with them); the results folder too when
 * all is done. */
static void teardown(const struct bench *b, bool all)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ip netns del %s; ip netns del %s", b->ns_rx, b->ns_tx);
    (void)sh(cmd);
    if (all && b->dir[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", b->dir);
        (void)sh(cmd);
    }
}

/* The two namespaces and the veth pair between them, of link MTU link_mtu. */
static int setup(const struct bench *b, unsigned link_mtu)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ip netns add %s && ip netns add %s && "
             "ip link add r0 netns %s type veth peer name t0 netns %s && "
             "ip -n %s link set r0 mtu %u up && ip -n %s link set t0 mtu %u up && "
             "ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && "
             "ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1",
             b->ns_rx, b->ns_tx, b->ns_rx, b->ns_tx, b->ns_rx, link_mtu, b->ns_tx, link_mtu,
             b->ns_rx, b->ns_tx);
    return sh(cmd) == 0 ? 0 : -1;
}

/* A number after "key": in the receiver's JSON (first occurrence). */
static bool json_num(const char *s, const char *key, double *v)
{
    char k[48];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(s, k);
    return p && sscanf(p + strlen(k), "%lf", v) == 1;
}

static void json_str(const char *s, const char *key, char *out, size_t cap)
{
    char k[48];
    snprintf(k, sizeof k, "\"%s\":\"", key);
    const char *p = strstr(s, k);
    out[0] = 0;
    if (!p) return;
    p += strlen(k);
    size_t n = 0;
    while (p[n] && p[n] != '"' && n + 1 < cap) n++;
    memcpy(out, p, n);
    out[n] = 0;
}

static void read_result(const char *path, struct sample *s)
{
    char buf[8192];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    double verr = 1, msgs = 0;
    s->ok = json_num(buf, "gbps", &s->gbps) && json_num(buf, "verify_errors", &verr) &&
            json_num(buf, "msgs", &msgs) && verr == 0 && msgs > 0 && strstr(buf, "\"ok\":true");
    json_str(buf, "backend", s->backend, sizeof s->backend);
}

/* One measured run: receiver, then sender, each pinned to its own CPU. */
static struct sample run_pair(const struct bench *b, const char *kind, unsigned mtu)
{
    struct sample s = {0};
    char self[512], mtu_s[16], dur[24], warm[24], tmo[24], sdur[24], out[96];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l <= 0) return s;
    self[l] = 0;
    snprintf(mtu_s, sizeof mtu_s, "%u", mtu);
    snprintf(dur, sizeof dur, "%us", (unsigned)(b->seconds + 1));
    snprintf(warm, sizeof warm, "%s", "1s");
    snprintf(tmo, sizeof tmo, "%us", (unsigned)(b->seconds + 20));
    /* the receiver reports when its stream ends: the sender stops just after its window */
    snprintf(sdur, sizeof sdur, "%us", (unsigned)(b->seconds + 2));
    snprintf(out, sizeof out, "%s/recv.json", b->dir);
    char *const rx[] = {"ip",
                        "netns",
                        "exec",
                        (char *)b->ns_rx,
                        self,
                        "recv",
                        "--backend",
                        "raw",
                        "--raw-backend",
                        (char *)kind,
                        "--if",
                        "r0",
                        "--bind",
                        "10.234.0.1",
                        "--manual",
                        "1",
                        "--peer",
                        "10.234.0.2",
                        "--peer-qpn",
                        "256",
                        "--psn",
                        "0",
                        "--rkey",
                        "0x1000",
                        "--msg-size",
                        "64K",
                        "--mtu",
                        mtu_s,
                        "--duration",
                        dur,
                        "--warmup",
                        warm,
                        "--timeout",
                        tmo,
                        "--cpu",
                        "0",
                        "--interval",
                        "0",
                        "--json",
                        NULL};
    char *const tx[] = {"ip",
                        "netns",
                        "exec",
                        (char *)b->ns_tx,
                        self,
                        "send",
                        "--backend",
                        "raw",
                        "--raw-backend",
                        (char *)kind,
                        "--if",
                        "t0",
                        "--bind",
                        "10.234.0.2",
                        "--peer",
                        "10.234.0.1",
                        "--peer-qpn",
                        "17",
                        "--rkey",
                        "0x1000",
                        "--va",
                        "0x100000000",
                        "--msg-size",
                        "64K",
                        "--mtu",
                        mtu_s,
                        "--duration",
                        sdur,
                        "--cpu",
                        "1",
                        "--quiet",
                        "--interval",
                        "0",
                        NULL};
    (void)unlink(out);
    int rp = spawn(rx, out, false);
    if (rp < 0) return s;
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL); /* the receiver's socket is up before the first frame */
    int tp = spawn(tx, NULL, false);
    int st;
    while (waitpid(rp, &st, 0) < 0 && errno == EINTR) {
    }
    if (tp > 0) {
        kill(tp, SIGTERM);
        while (waitpid(tp, &st, 0) < 0 && errno == EINTR) {
        }
    }
    read_result(out, &s);
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct mtu_result {
    unsigned mtu, link_mtu;
    double gbps[2], ratio; /* [0] AF_PACKET, [1] AF_XDP: medians */
    char mode[2][40];
    unsigned failed;
};

/* reps pairs of runs at one MTU, the two paths alternating. */
static int measure_mtu(const struct bench *b, struct mtu_result *m)
{
    static const char *const kinds[2] = {"packet", "xdp"};
    double g[2][MAX_REPS], ratio[MAX_REPS];
    unsigned n = 0;
    if (setup(b, m->link_mtu)) return -1;
    for (unsigned r = 0; r < b->reps && !stop_asked; r++) {
        struct sample s[2];
        for (int j = 0; j < 2; j++) {
            int k = (int)(r % 2) ^ j;
            s[k] = run_pair(b, kinds[k], m->mtu);
            snprintf(m->mode[k], sizeof m->mode[k], "%s", s[k].backend);
        }
        if (!s[0].ok || !s[1].ok) {
            m->failed++;
            continue;
        }
        g[0][n] = s[0].gbps;
        g[1][n] = s[1].gbps;
        ratio[n] = s[0].gbps > 0 ? s[1].gbps / s[0].gbps : 0;
        n++;
    }
    teardown(b, false);
    m->gbps[0] = median(g[0], n);
    m->gbps[1] = median(g[1], n);
    m->ratio = median(ratio, n);
    return n ? 0 : -1;
}

static void print_text(const struct mtu_result *m, unsigned n, const struct bench *b)
{
    printf("raw backend, one flow between two namespaces over veth, 64 KiB WRITEs, every byte "
           "verified;\nmedians of %u interleaved pairs of %u s runs (receiver on CPU 0, sender "
           "on CPU 1)\n\n",
           (unsigned)b->reps, (unsigned)b->seconds);
    printf("%5s %5s  %-22s %9s %11s  %-22s %9s %11s  %7s\n", "MTU", "link", "path", "Gb/s",
           "packets/s", "path", "Gb/s", "packets/s", "xdp/pkt");
    for (unsigned i = 0; i < n; i++) {
        const struct mtu_result *r = &m[i];
        printf("%5u %5u  %-22s %9.3f %11.0f  %-22s %9.3f %11.0f  %6.2fx", r->mtu, r->link_mtu,
               r->mode[0], r->gbps[0], r->gbps[0] * 1e9 / 8 / r->mtu, r->mode[1], r->gbps[1],
               r->gbps[1] * 1e9 / 8 / r->mtu, r->ratio);
        if (r->failed) printf("  (%u pairs failed)", r->failed);
        printf("\n");
    }
}

static void print_json(const struct mtu_result *m, unsigned n)
{
    printf("{\"bench\":\"raw\",\"results\":[");
    for (unsigned i = 0; i < n; i++) {
        const struct mtu_result *r = &m[i];
        printf("%s{\"mtu\":%u,\"link_mtu\":%u,\"af_packet\":{\"path\":\"%s\",\"gbps\":%.3f,"
               "\"pps\":%.0f},\"af_xdp\":{\"path\":\"%s\",\"gbps\":%.3f,\"pps\":%.0f},"
               "\"xdp_over_packet\":%.3f,\"failed_pairs\":%u}",
               i ? "," : "", r->mtu, r->link_mtu, r->mode[0], r->gbps[0],
               r->gbps[0] * 1e9 / 8 / r->mtu, r->mode[1], r->gbps[1], r->gbps[1] * 1e9 / 8 / r->mtu,
               r->ratio, r->failed);
    }
    printf("]}\n");
}

static int usage(int rc)
{
    fputs("usage: feroce bench raw [--reps N (3)] [--seconds S (3)] [--json]\n"
          "AF_PACKET against AF_XDP, one flow over veth between two namespaces (needs root).\n",
          rc ? stderr : stdout);
    return rc;
}

static int run(int argc, char **argv)
{
    struct bench b = {.reps = 3, .seconds = 3};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (fe_parse_u64(argv[++i], &b.reps, "repetitions") || !b.reps || b.reps > MAX_REPS)
                return usage(2);
        } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            if (fe_parse_u64(argv[++i], &b.seconds, "seconds") || !b.seconds || b.seconds > 600)
                return usage(2);
        } else if (!strcmp(argv[i], "--json")) {
            b.json = true;
        } else {
            return usage(strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0);
        }
    }
    if (geteuid() != 0 || sh("command -v ip") != 0) {
        printf("bench raw: skipped (needs root and iproute2 for network namespaces)\n");
        return 0;
    }
    snprintf(b.ns_rx, sizeof b.ns_rx, "febr%drx", (int)getpid());
    snprintf(b.ns_tx, sizeof b.ns_tx, "febr%dtx", (int)getpid());
    snprintf(b.dir, sizeof b.dir, "/tmp/feroce-bench-raw-XXXXXX");
    if (!mkdtemp(b.dir)) return 1;
    struct mtu_result m[2] = {{.mtu = 1024, .link_mtu = 1500}, {.mtu = 4096, .link_mtu = 9000}};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = 0;
    unsigned done = 0;
    for (; done < 2 && !stop_asked; done++) {
        if (measure_mtu(&b, &m[done])) {
            fprintf(stderr, "bench raw: no verified pair of runs at MTU %u\n", m[done].mtu);
            rc = 1;
        }
    }
    teardown(&b, true);
    if (stop_asked) {
        fprintf(stderr, "bench raw: interrupted\n");
        rc = 1;
        if (done) done--; /* the MTU under way when asked is incomplete */
    }
    if (b.json)
        print_json(m, done);
    else
        print_text(m, done, &b);
    return rc;
}

const struct fe_bench fe_bench_raw = {
    "raw", "raw backend: AF_PACKET vs AF_XDP, one verified flow over veth between namespaces", run};
