/* The event loop of a feroce process: wait for readable sockets or the next deadline of the
 * core (fe_qp_next_deadline and friends), with nanosecond timeouts (epoll_pwait2 when the
 * kernel has it, else a timerfd), or busy-poll on a pinned core. Also the clock and small
 * address helpers every driver needs. */
#include "feroce/io.h"
#include "io/fail.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define TIMER_TAG (-1000001) /* the timerfd's tag: never returned to callers */

uint64_t fe_io_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool urandom_read(void *buf, size_t len)
{
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f) return false;
    bool ok = fread(buf, 1, len, f) == len;
    fclose(f);
    return ok;
}

uint32_t fe_io_random_u32(void)
{
    uint32_t v;
    ssize_t n;
    do {
        n = getrandom(&v, sizeof v, 0);
    } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof v || urandom_read(&v, sizeof v)) return v;
    fprintf(stderr, "feroce: no random numbers from the kernel\n");
    abort();
}

int64_t fe_io_realtime_offset_ns(void)
{
    struct timespec m, r;
    clock_gettime(CLOCK_MONOTONIC, &m);
    clock_gettime(CLOCK_REALTIME, &r);
    return ((int64_t)r.tv_sec - (int64_t)m.tv_sec) * 1000000000ll + (r.tv_nsec - m.tv_nsec);
}

int fe_io_pin_cpu(int cpu)
{
    if (cpu < 0 || cpu >= CPU_SETSIZE) return FE_EINVAL;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : FE_EIO;
}

int fe_io_parse_addr(const char *s, uint32_t *ip, uint16_t *port)
{
    if (!s) return FE_EINVAL;
    char host[64];
    const char *colon = strrchr(s, ':');
    size_t hl = colon ? (size_t)(colon - s) : strlen(s);
    if (hl == 0 || hl >= sizeof host) return FE_EINVAL;
    memcpy(host, s, hl);
    host[hl] = 0;
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) != 1) return FE_EINVAL;
    if (colon) {
        char *end;
        errno = 0;
        unsigned long p = strtoul(colon + 1, &end, 10);
        if (errno || end == colon + 1 || *end || p > 65535) return FE_EINVAL;
        if (port) *port = (uint16_t)p;
    }
    if (ip) *ip = ntohl(a.s_addr);
    return 0;
}

const char *fe_io_addr_str(uint32_t ip, uint16_t port, char *buf, size_t cap)
{
    snprintf(buf, cap, "%u.%u.%u.%u:%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255,
             port);
    return buf;
}

struct fe_loop {
    struct fe_loop_config cfg;
    int ep;
    int tfd; /* timerfd when epoll_pwait2 is missing */
    bool have_pwait2;
};

void fe_loop_config_default(struct fe_loop_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->cpu = -1;
    cfg->max_wait_ns = 100000000ull;
}

/* fe_io_pin_cpu for the loop, the refusal recorded (fe_io_last_fail). EINVAL is a CPU that this
 * host lacks or this process may not use (a cpuset, taskset). */
static int pin_cpu(int cpu)
{
    int e = fe_io_pin_cpu(cpu);
    if (!e) return 0;
    char step[40], text[96];
    snprintf(step, sizeof step, "pinning to CPU %d", cpu);
    if (e != FE_EIO || errno == EINVAL) {
        snprintf(text, sizeof text, "CPU %d is not one this process may run on", cpu);
        return fe_io_fail_text(FE_EIO, step, EINVAL, text);
    }
    return fe_io_fail_os(FE_EIO, step, NULL);
}

/* epoll_pwait2 when the kernel has it; else a timerfd in the epoll set gives the nanosecond
 * timeouts. */
static int set_up_timer(struct fe_loop *l)
{
#ifdef SYS_epoll_pwait2
    struct timespec ts = {0, 0};
    struct epoll_event probe;
    long r = syscall(SYS_epoll_pwait2, l->ep, &probe, 1, &ts, NULL, (size_t)8);
    l->have_pwait2 = r >= 0;
#endif
    if (l->have_pwait2) return 0;
    l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (l->tfd < 0) return fe_io_fail_os(FE_EIO, "timerfd_create", NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)(int64_t)TIMER_TAG};
    if (epoll_ctl(l->ep, EPOLL_CTL_ADD, l->tfd, &ev) != 0)
        return fe_io_fail_os(FE_EIO, "epoll_ctl", NULL);
    return 0;
}

struct fe_loop *fe_loop_create(const struct fe_loop_config *cfg, int *err)
{
    fe_io_fail_clear();
    struct fe_loop *l = calloc(1, sizeof *l);
    if (!l) {
        if (err) *err = FE_ENOMEM;
        return NULL;
    }
    l->cfg = *cfg;
    if (!l->cfg.max_wait_ns) l->cfg.max_wait_ns = 100000000ull;
    l->tfd = -1;
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    if (l->ep < 0) {
        fe_io_fail_os(FE_EIO, "epoll_create", NULL);
        goto fail;
    }
    if (cfg->cpu >= 0 && pin_cpu(cfg->cpu) != 0) goto fail;
    /* Sleeps are as short as asked: the default 50 us slack would blur a pacer's gaps. */
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    if (set_up_timer(l)) goto fail;
    if (err) *err = 0;
    return l;
fail:
    if (err) *err = FE_EIO;
    fe_loop_destroy(l);
    return NULL;
}

void fe_loop_destroy(struct fe_loop *l)
{
    if (!l) return;
    if (l->ep >= 0) close(l->ep);
    if (l->tfd >= 0) close(l->tfd);
    free(l);
}

int fe_loop_add(struct fe_loop *l, int fd, int tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)(int64_t)tag};
    return epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : FE_EIO;
}

int fe_loop_want_write(struct fe_loop *l, int fd, int tag, bool on)
{
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0u),
                             .data.u64 = (uint64_t)(int64_t)tag};
    return epoll_ctl(l->ep, EPOLL_CTL_MOD, fd, &ev) == 0 ? 0 : FE_EIO;
}

static int collect(struct epoll_event *evs, int n, int *tags, int max)
{
    int k = 0;
    for (int i = 0; i < n && k < max; i++) {
        int tag = (int)(int64_t)evs[i].data.u64;
        if (tag != TIMER_TAG) tags[k++] = tag;
    }
    return k;
}

int fe_loop_wait(struct fe_loop *l, uint64_t deadline_ns, int *tags, int max)
{
    struct epoll_event evs[16];
    int cap = max < 16 ? max : 16;
    if (cap <= 0) return 0;
    uint64_t now = fe_io_now_ns();
    uint64_t limit = now + l->cfg.max_wait_ns;
    if (deadline_ns > limit) deadline_ns = limit;
    if (l->cfg.busy_poll) {
        for (;;) {
            int n = epoll_wait(l->ep, evs, cap, 0);
            if (n > 0) return collect(evs, n, tags, max);
            if (fe_io_now_ns() >= deadline_ns) return 0;
        }
    }
    for (;;) {
        now = fe_io_now_ns();
        uint64_t wait = deadline_ns > now ? deadline_ns - now : 0;
        int n;
#ifdef SYS_epoll_pwait2
        if (l->have_pwait2) {
            struct timespec ts = {(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull)};
            n = (int)syscall(SYS_epoll_pwait2, l->ep, evs, cap, &ts, NULL, (size_t)8);
        } else
#endif
        {
            if (wait == 0) {
                n = epoll_wait(l->ep, evs, cap, 0);
            } else {
                struct itimerspec its;
                memset(&its, 0, sizeof its);
                its.it_value.tv_sec = (time_t)(deadline_ns / 1000000000ull);
                its.it_value.tv_nsec = (long)(deadline_ns % 1000000000ull);
                (void)timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL);
                n = epoll_wait(l->ep, evs, cap, -1);
                uint64_t exp;
                while (read(l->tfd, &exp, sizeof exp) > 0) {
                }
            }
        }
        if (n < 0 && errno == EINTR) return 0; /* a signal: let the caller look at its flags */
        if (n < 0) return FE_EIO;
        int k = collect(evs, n, tags, max);
        if (k > 0 || fe_io_now_ns() >= deadline_ns) return k;
    }
}
