/* The local runner: every point in its own forked process (a crash, an abort or an endless
 * allocation of one point is that point's failure, never the campaign's), at most N at once;
 * each sends its result text through a pipe and the parent stores it. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweep/sweep.h"

struct slot {
    pid_t pid;
    int fd;
    double start_s;
    bool timed_out;
    uint32_t point;
    char *buf;
    size_t n, cap;
};

static volatile sig_atomic_t stop_requests;

static void on_stop(int sig)
{
    (void)sig;
    stop_requests++;
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double tv_s(struct timeval t)
{
    return t.tv_sec + t.tv_usec / 1e6;
}

/* In the child: run the point, write the whole result to the pipe, exit. */
static void child_run(const struct sw_campaign *c, const struct sw_point *p, int fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(3); /* the parent died before prctl */
    signal(SIGINT, SIG_IGN);      /* Ctrl-C is the parent's to handle: finish this point */
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, 1);
        close(null);
    }
    /* tests make one point abort, to check that a crash is that point's failure only */
    const char *crash = getenv("FEROCE_SWEEP_CRASH_INDEX");
    if (crash && strtoul(crash, NULL, 10) == p->index) abort();
    struct sw_result r;
    sw_point_run(c, p, &r);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m || sw_result_write(m, &r) || fclose(m)) _exit(4);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(5);
        off += (size_t)w;
    }
    _exit(0);
}

static int launch(const struct sw_campaign *c, uint32_t point, struct slot *slots, int n_slots,
                  struct slot *s)
{
    int fds[2];
    if (pipe(fds)) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        for (int i = 0; i < n_slots; i++)
            if (slots[i].pid > 0) close(slots[i].fd);
        child_run(c, &c->points[point], fds[1]);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    s->pid = pid;
    s->fd = fds[0];
    s->point = point;
    s->n = 0;
    s->start_s = mono_s();
    s->timed_out = false;
    return 0;
}

static void describe_exit(int status, struct sw_result *r)
{
    if (WIFSIGNALED(status))
        sw_result_fail(r, "the run was killed by signal %d (%s)", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status) && WEXITSTATUS(status))
        sw_result_fail(r, "the run exited with status %d", WEXITSTATUS(status));
    else
        sw_result_fail(r, "the run ended without a complete result");
}

/* The child closed its pipe: reap it and make its result. */
static void finish(const struct sw_campaign *c, struct slot *s, struct sw_result *r)
{
    close(s->fd);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof(ru));
    while (wait4(s->pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    s->pid = 0;
    const struct sw_point *p = &c->points[s->point];
    char err[128];
    bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!clean || sw_result_parse(s->buf ? s->buf : "", s->n, r, err, sizeof(err)) ||
        strcmp(r->id, p->id)) {
        sw_result_free(r);
        sw_result_init(r, p->id);
        if (s->timed_out)
            sw_result_fail(r, "timed out after %.0f s (the campaign's timeout)", c->spec.timeout_s);
        else
            describe_exit(clean ? 0 : status, r);
        r->wall_s = mono_s() - s->start_s;
    }
    r->cpu_s = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

/* Reads what the child sent; true at its end. */
static bool drain(struct slot *s)
{
    for (;;) {
        if (s->n + 65536 > s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 131072;
            char *nb = realloc(s->buf, cap + 1);
            if (!nb) return true;
            s->buf = nb;
            s->cap = cap;
        }
        ssize_t r = read(s->fd, s->buf + s->n, s->cap - s->n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return false;
        if (r <= 0) return true;
        s->n += (size_t)r;
        if ((size_t)r < 65536) return false;
    }
}

static void fmt_time(double s, char *out, size_t cap)
{
    if (s < 0 || s > 1e8)
        snprintf(out, cap, "?");
    else if (s < 60)
        snprintf(out, cap, "%.0fs", s);
    else if (s < 3600)
        snprintf(out, cap, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    else
        snprintf(out, cap, "%.0fh%02.0fm", floor(s / 3600), fmod(s, 3600) / 60);
}

static void progress(uint32_t done, uint32_t failed, uint32_t n, int running, double t0)
{
    const int W = 30;
    int fill = n ? (int)((uint64_t)done * W / n) : W;
    char bar[64], eta[32], el[32];
    for (int i = 0; i < W; i++) bar[i] = i < fill ? '#' : '.';
    bar[W] = 0;
    double e = mono_s() - t0;
    fmt_time(done ? e / done * (n - done) : -1, eta, sizeof(eta));
    fmt_time(e, el, sizeof(el));
    fprintf(stderr, "\r[%s] %u/%u  %u failed  %d running  %s elapsed  ETA %s   ", bar, done, n,
            failed, running, el, eta);
}

/* The workers of one sw_run_points call. */
struct pool {
    const struct sw_campaign *c;
    const uint32_t *idx;
    uint32_t n, next, finished, failed;
    int workers, running, rc;
    struct slot *slots;
    struct pollfd *pf;
    sw_done_cb done;
    void *user;
    double *runs_cpu_s;
};

static void launch_free_slots(struct pool *w)
{
    for (int i = 0; i < w->workers && w->next < w->n && !stop_requests && !w->rc; i++) {
        if (w->slots[i].pid) continue;
        if (launch(w->c, w->idx[w->next], w->slots, w->workers, &w->slots[i])) {
            w->rc = -1;
            return;
        }
        w->next++;
        w->running++;
    }
}

/* Points over the campaign's timeout, and every point after a second Ctrl-C, are killed;
 * their pipes then close and reap_finished sees them. */
static void kill_overdue(struct pool *w)
{
    double limit = w->c->spec.timeout_s;
    for (int i = 0; i < w->workers; i++) {
        struct slot *s = &w->slots[i];
        if (!s->pid) continue;
        if (stop_requests > 1) {
            kill(s->pid, SIGKILL);
        } else if (limit > 0 && !s->timed_out && mono_s() - s->start_s > limit) {
            s->timed_out = true;
            kill(s->pid, SIGKILL);
        }
    }
}

/* Waits up to 250 ms for the workers' pipes; hands each complete result to the callback. */
static void reap_finished(struct pool *w)
{
    int k = 0;
    for (int i = 0; i < w->workers; i++)
        if (w->slots[i].pid) w->pf[k++] = (struct pollfd){.fd = w->slots[i].fd, .events = POLLIN};
    if (!k || poll(w->pf, (nfds_t)k, 250) <= 0) return;
    for (int j = 0; j < k; j++) {
        if (!(w->pf[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        struct slot *s = NULL;
        for (int i = 0; i < w->workers && !s; i++)
            if (w->slots[i].pid && w->slots[i].fd == w->pf[j].fd) s = &w->slots[i];
        if (!s || !drain(s)) continue;
        struct sw_result r;
        bool dropped = stop_requests > 1;
        finish(w->c, s, &r);
        w->running--;
        if (!dropped) {
            w->finished++;
            w->failed += r.status != SW_OK;
            if (w->runs_cpu_s) *w->runs_cpu_s += r.cpu_s;
            if (w->done(w->user, &w->c->points[s->point], &r)) w->rc = -1;
        }
        sw_result_free(&r);
    }
}

int sw_run_points(const struct sw_campaign *c, const uint32_t *idx, uint32_t n, int workers,
                  int show, sw_done_cb done, void *user, double *runs_cpu_s)
{
    if (workers <= 0) workers = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (workers <= 0) workers = 1;
    if ((uint32_t)workers > n) workers = n ? (int)n : 1;
    struct pool w = {.c = c,
                     .idx = idx,
                     .n = n,
                     .workers = workers,
                     .done = done,
                     .user = user,
                     .runs_cpu_s = runs_cpu_s};
    w.slots = calloc((size_t)workers, sizeof(*w.slots));
    w.pf = calloc((size_t)workers, sizeof(*w.pf));
    if (!w.slots || !w.pf) {
        free(w.slots);
        free(w.pf);
        return -1;
    }
    struct sigaction sa = {.sa_handler = on_stop}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    stop_requests = 0;
    double t0 = mono_s(), last = 0;
    while ((w.next < n && !stop_requests && !w.rc) || w.running) {
        launch_free_slots(&w);
        kill_overdue(&w);
        reap_finished(&w);
        if (show && mono_s() - last > 0.25) {
            last = mono_s();
            progress(w.finished, w.failed, n, w.running, t0);
        }
    }
    if (show) {
        progress(w.finished, w.failed, n, w.running, t0);
        fputc('\n', stderr);
    }
    for (int i = 0; i < workers; i++) free(w.slots[i].buf);
    free(w.slots);
    free(w.pf);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return w.rc ? w.rc : stop_requests ? 1 : 0;
}

struct local_ctx {
    const struct sw_campaign *c;
    struct sw_store *store;
    struct sw_run_stats *st;
    bool *replace;
    char err[SW_ERR_LEN];
};

static int store_result(void *user, const struct sw_point *p, const struct sw_result *r)
{
    struct local_ctx *x = user;
    x->st->ran++;
    if (r->status == SW_OK)
        x->st->ok++;
    else
        x->st->failed++;
    return sw_store_put(x->store, x->c, p, r, x->replace[p->index], x->err, sizeof(x->err));
}

int sw_run_local(const struct sw_campaign *c, struct sw_store *s, const struct sw_run_opts *o,
                 struct sw_run_stats *st, char *err, size_t err_cap)
{
    memset(st, 0, sizeof(*st));
    st->total = c->n_points;
    uint32_t *todo = malloc((c->n_points ? c->n_points : 1) * sizeof(*todo));
    bool *replace = calloc(c->n_points ? c->n_points : 1, sizeof(*replace));
    if (!todo || !replace) {
        free(todo);
        free(replace);
        snprintf(err, err_cap, "out of memory");
        return -1;
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < c->n_points; k++) {
        enum sw_status status;
        if (sw_store_has(s, c->points[k].id, &status)) {
            if (!(o->retry_failed && status == SW_FAILED)) {
                st->stored_before++;
                continue;
            }
            replace[k] = true;
        }
        if (!o->stop_after || n < o->stop_after) todo[n++] = k;
    }
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    double t0 = mono_s();
    struct local_ctx x = {.c = c, .store = s, .st = st, .replace = replace};
    int show = o->progress < 0 ? isatty(2) : o->progress;
    int rc = n ? sw_run_points(c, todo, n, o->workers, show && !o->quiet, store_result, &x,
                               &st->runs_cpu_s)
               : 0;
    getrusage(RUSAGE_SELF, &r1);
    st->wall_s = mono_s() - t0;
    st->own_cpu_s = tv_s(r1.ru_utime) + tv_s(r1.ru_stime) - tv_s(r0.ru_utime) - tv_s(r0.ru_stime);
    free(todo);
    free(replace);
    if (rc < 0) snprintf(err, err_cap, "%s", x.err[0] ? x.err : "cannot start a worker");
    if (rc > 0) snprintf(err, err_cap, "interrupted: run again to resume");
    return rc;
}
