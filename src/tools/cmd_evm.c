/* feroce evm: the event manager of event building on the wire. Builders' announcements and
 * front-ends' progress come in over the side channel's event-building messages; the core's
 * manager (fe_eb_mgr) turns them into assignment chunks, sent to every front-end and builder and
 * repeated while they matter (a chunk after a lost one is refused as a gap until its
 * predecessor comes again). It forwards the slowest front-end's progress to the builders and
 * records every chunk it issued (the assignment record feroce eb-check reads). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feroce/endpoint.h"
#include "tools/cli.h"
#include "tools/eb_wire.h"
#include "tools/io_opts.h"
#include "web/web.h"

#define M_MAX_FE       4096
#define M_MAX_B        1024
#define M_CHUNKS       1024 /* recent chunks kept for repeats */
#define M_FORWARD_NS   5000000ull
#define M_REPEAT_NS    20000000ull
#define M_REPEAT_MAX   64
#define M_DEFAULT_PORT 17200

static const char usage[] =
    "usage: feroce evm --builders M --frontends N [OPTIONS]\n"
    "The event manager: takes builders' announcements (free slots) and front-ends' progress,\n"
    "issues assignment chunks (fe_eb_mgr: each run to the builder with the most credits) to\n"
    "every front-end and builder, repeats recent ones, marks a silent builder down, forwards\n"
    "the slowest front-end's progress to the builders and records every chunk it issued.\n"
    "\n"
    "  --bind ADDR[:PORT]      where builders and front-ends reach it (127.0.0.1:17200)\n"
    "  --backend raw --if IFNAME [--raw-backend auto|packet|xdp]   the messages as whole\n"
    "                          frames on the interface, at the --bind address (docs/io-raw.md)\n"
    "  --builders M  --frontends N\n"
    "  --policy availability|round-robin   round-robin needs no tables: the manager then only\n"
    "                          forwards progress (availability)\n"
    "  --slots S (64)  --reserve R (S/8)  --lead EVENTS (M x (S - R) / 2)  --run-events N (4)\n"
    "  --builder-timeout TIME  silent longer: no new events (300ms)\n"
    "  --record FILE           the assignment record: every chunk issued, as its 64-byte TABLE\n"
    "  --events K              exit once every front-end passed K (after --linger, 1s)\n"
    "  --timeout TIME (120s)  --interval TIME (1s)  --quiet  --json\n"
    "  --web [ADDR:]PORT  live dashboard (docs/dashboard.md)  --web-hold TIME\n";

struct m_opts {
    uint32_t ip;
    uint16_t port;
    uint32_t n_builders, n_fe, n_slots, reserve, run_events;
    uint64_t lead, builder_timeout_ns, events, timeout_ns, linger_ns, interval_ns;
    uint8_t policy;
    bool reserve_given, lead_given, quiet, json;
    const char *record;
    struct fe_web_opts web;
    struct fe_ep_config ep; /* the raw backend's interface; UDP: a socket on --bind */
};

struct m_peer {
    struct fe_ebw_addr a;
    bool known;
    uint64_t progress, busy;
};

struct evm {
    struct m_opts o;
    struct fe_ep *ep; /* raw backend only */
    struct fe_ebw_chan sock;
    struct fe_loop *loop;
    struct fe_eb_mgr mgr;
    bool have_mgr;
    struct m_peer fe[M_MAX_FE], b[M_MAX_B];
    struct fe_eb_table chunk[M_CHUNKS];
    uint64_t n_chunks;
    int record_fd;
    uint64_t record_errors, bad_msgs, t0, next_forward, next_repeat, next_tick, all_passed_ns;
    uint64_t repeats;
};

static int bind_opt(const char *val, void *p)
{
    struct m_opts *o = p;
    return fe_io_parse_addr(val, &o->ip, &o->port);
}

static int parse(int argc, char **argv, struct m_opts *o)
{
    memset(o, 0, sizeof *o);
    o->ip = 0x7F000001;
    o->port = M_DEFAULT_PORT;
    o->n_slots = 64;
    o->run_events = 4;
    o->builder_timeout_ns = 300000000ull;
    o->timeout_ns = 120000000000ull;
    o->linger_ns = 1000000000ull;
    o->interval_ns = 1000000000ull;
    fe_ep_config_default(&o->ep);
    bool bind_given = false;
    const struct fe_opt opts[] = {
        {FE_OPT_FN_("--bind", bind_opt, o), .seen = &bind_given, .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_U32MAX_("--builders", o->n_builders, M_MAX_B), .min = 1,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_U32MAX_("--frontends", o->n_fe, M_MAX_FE), .min = 1, .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_FN_("--policy", fe_ebw_policy_opt, &o->policy), .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_U32MAX_("--slots", o->n_slots, 4096), .min = 2, .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_U32MAX_("--reserve", o->reserve, 4096), .seen = &o->reserve_given},
        {FE_OPT_UINT_("--lead", o->lead), .min = 1, .seen = &o->lead_given,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_U32MAX_("--run-events", o->run_events, 65535), .min = 1,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_TIME_("--builder-timeout", o->builder_timeout_ns)},
        {FE_OPT_STR_("--record", o->record)},
        {FE_OPT_UINT_("--events", o->events)},
        {FE_OPT_TIME_("--timeout", o->timeout_ns)},
        {FE_OPT_TIME_("--linger", o->linger_ns)},
        {FE_OPT_TIME_("--interval", o->interval_ns)},
        {FE_OPT_FLAG_("--quiet", o->quiet)},
        {FE_OPT_FLAG_("--json", o->json)},
        {FE_OPT_STR_("--web", o->web.addr)},
        {FE_OPT_TIME_("--web-hold", o->web.hold_ns)},
        {0},
    };
    struct fe_opt ep_opts[FE_IO_EP_OPTS_N + 1];
    fe_io_ep_opts_table(ep_opts, &o->ep);
    const struct fe_opt *const tables[] = {opts, ep_opts, NULL};
    const struct fe_cli cli = {.cmd = "evm", .tables = tables};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    o->ep.raw.ip = bind_given ? o->ip : 0; /* not the loopback default on an interface */
    if (fe_io_opts_check("evm", &o->ep)) return -1;
    if (!o->n_builders || !o->n_fe) {
        fprintf(stderr, "feroce evm: --builders and --frontends are needed\n");
        return -1;
    }
    if (!o->reserve_given) o->reserve = o->n_slots / 8;
    if (o->reserve >= o->n_slots) {
        fprintf(stderr, "feroce evm: --reserve must be below --slots\n");
        return -1;
    }
    if (!o->lead_given) o->lead = (uint64_t)o->n_builders * (o->n_slots - o->reserve) / 2;
    if (!o->lead) o->lead = 1;
    return 0;
}

/* ---- out: chunks to everyone, progress to the builders ---- */

static void send_all(struct evm *v, uint64_t now, const struct fe_eb_msg *m, bool to_fe)
{
    for (unsigned i = 0; to_fe && i < v->o.n_fe; i++)
        if (v->fe[i].known) (void)fe_ebw_send(&v->sock, now, v->fe[i].a.ip, v->fe[i].a.port, m);
    for (unsigned i = 0; i < v->o.n_builders; i++)
        if (v->b[i].known) (void)fe_ebw_send(&v->sock, now, v->b[i].a.ip, v->b[i].a.port, m);
}

static void record_chunk(struct evm *v, const struct fe_eb_table *c)
{
    if (v->record_fd < 0) return;
    uint8_t b[FE_EB_MSG_LEN];
    struct fe_eb_msg m = {.type = FE_EB_MSG_TABLE, .u.table = *c};
    if (fe_eb_msg_encode(b, &m) || write(v->record_fd, b, sizeof b) != sizeof b) v->record_errors++;
}

static void issue(struct evm *v, uint64_t now)
{
    if (!v->have_mgr) return;
    struct fe_eb_table c;
    while (fe_eb_mgr_poll(&v->mgr, now, &c)) {
        record_chunk(v, &c);
        v->chunk[v->n_chunks++ % M_CHUNKS] = c;
        struct fe_eb_msg m = {.type = FE_EB_MSG_TABLE, .u.table = c};
        send_all(v, now, &m, true);
    }
}

static uint64_t min_progress(const struct evm *v, bool *all)
{
    uint64_t p = UINT64_MAX;
    *all = true;
    for (unsigned i = 0; i < v->o.n_fe; i++) {
        if (!v->fe[i].known) *all = false;
        if (v->fe[i].progress < p) p = v->fe[i].progress;
    }
    return p;
}

/* Chunks are repeated while a front-end may still need them: those ending after the slowest
 * front-end's progress (a table refuses a chunk after a missed one until that one comes). */
static void repeat(struct evm *v, uint64_t now)
{
    if (now < v->next_repeat) return;
    v->next_repeat = now + M_REPEAT_NS;
    bool all;
    uint64_t p = min_progress(v, &all);
    uint64_t from = v->n_chunks > M_CHUNKS ? v->n_chunks - M_CHUNKS : 0;
    unsigned sent = 0;
    for (uint64_t i = from; i < v->n_chunks && sent < M_REPEAT_MAX; i++) {
        const struct fe_eb_table *c = &v->chunk[i % M_CHUNKS];
        if (c->first_event + fe_eb_table_events(c) <= p) continue;
        struct fe_eb_msg m = {.type = FE_EB_MSG_TABLE, .u.table = *c};
        send_all(v, now, &m, true);
        sent++;
        v->repeats++;
    }
}

static void forward_progress(struct evm *v, uint64_t now)
{
    if (now < v->next_forward) return;
    v->next_forward = now + M_FORWARD_NS;
    bool all;
    uint64_t p = min_progress(v, &all);
    if (!all) return;
    struct fe_eb_msg m = {.type = FE_EB_MSG_PROGRESS};
    m.u.progress.source = 0xFFFF;
    m.u.progress.next_event = p;
    send_all(v, now, &m, false);
    if (v->o.events && p >= v->o.events && !v->all_passed_ns) v->all_passed_ns = now;
}

/* ---- in ---- */

/* One datagram on our port (fe_ebw_chan: its socket, or the raw endpoint's hook). */
static void input(void *arg, uint64_t now, const uint8_t *buf, size_t len, uint32_t ip,
                  uint16_t port)
{
    struct evm *v = arg;
    struct fe_eb_msg m;
    enum fe_eb_msg_reason why;
    if (fe_eb_msg_decode(buf, len, &m, &why) != 0) {
        v->bad_msgs++;
        return;
    }
    if (m.type == FE_EB_MSG_ANNOUNCE) {
        const struct fe_eb_announce *a = &m.u.announce;
        if (a->builder >= v->o.n_builders || a->n_slots != v->o.n_slots) {
            v->bad_msgs++;
            return;
        }
        v->b[a->builder] = (struct m_peer){{ip, port}, true, 0, 0};
        if (v->have_mgr) (void)fe_eb_mgr_announce(&v->mgr, now, a->builder, a->released);
    } else if (m.type == FE_EB_MSG_PROGRESS) {
        const struct fe_eb_progress *p = &m.u.progress;
        if (p->source >= v->o.n_fe) {
            v->bad_msgs++;
            return;
        }
        struct m_peer *f = &v->fe[p->source];
        f->a = (struct fe_ebw_addr){ip, port};
        f->known = true;
        if (p->next_event > f->progress) f->progress = p->next_event;
        if (p->busy_events > f->busy) f->busy = p->busy_events;
        if (v->have_mgr) fe_eb_mgr_progress(&v->mgr, p->next_event);
    } else {
        v->bad_msgs++; /* tables and rings are not for the manager */
    }
}

static void receive(struct evm *v, uint64_t now)
{
    fe_ebw_chan_poll(&v->sock, now);
    if (v->ep) fe_ep_poll_rx(v->ep, now, 512); /* raw: its hook hands the messages to input */
}

/* ---- run ---- */

static void live(struct evm *v, uint64_t now)
{
    if (now < v->next_tick || v->o.quiet || v->o.json || !v->o.interval_ns) return;
    while (v->next_tick <= now) v->next_tick += v->o.interval_ns;
    bool all;
    uint64_t p = min_progress(v, &all);
    printf("evm: t=%.1fs progress %" PRIu64 " chunks %" PRIu64 " assigned %" PRIu64 " |",
           (double)(now - v->t0) / 1e9, all ? p : 0, v->have_mgr ? v->mgr.stats.chunks : 0,
           v->have_mgr ? v->mgr.stats.events : 0);
    for (unsigned i = 0; v->have_mgr && i < v->o.n_builders; i++)
        printf(" b%u %s credits %u", i, v->mgr.b[i].up ? "up" : "DOWN",
               fe_eb_mgr_credits(&v->mgr, (uint16_t)i));
    printf("\n");
    fflush(stdout);
}

/* --web: each builder's state at the manager (up, slots not yet free to assign) and the
 * front-ends' throttled events. */
static void web_fill(void *ctx, struct fe_web_sample *s)
{
    struct evm *v = ctx;
    s->n_builders = v->o.n_builders < FE_WEB_MAX_BUILDERS ? v->o.n_builders : FE_WEB_MAX_BUILDERS;
    for (unsigned i = 0; i < s->n_builders; i++) {
        struct fe_web_builder *x = &s->b[i];
        x->id = i;
        x->up = !v->have_mgr || v->mgr.b[i].up;
        x->has_slots = v->have_mgr;
        uint32_t free = v->have_mgr ? fe_eb_mgr_credits(&v->mgr, (uint16_t)i) : 0;
        x->slots = v->o.n_slots;
        x->slots_used = free < v->o.n_slots ? v->o.n_slots - free : 0;
    }
    s->has_busy = true;
    for (unsigned i = 0; i < v->o.n_fe; i++) s->busy_events += v->fe[i].busy;
}

static int start_web(struct evm *v)
{
    char desc[256];
    snprintf(desc, sizeof desc,
             "event manager: %u builders, %u front-ends, %u slots each; slots in use are those "
             "not yet free to assign",
             v->o.n_builders, v->o.n_fe, v->o.n_slots);
    struct fe_web_eb_run r = {desc, v->o.n_builders, 0, web_fill, v};
    return fe_web_io_eb(&v->o.web, "evm", &r);
}

static int setup(struct evm *v)
{
    v->record_fd = -1;
    if (v->o.record) {
        v->record_fd = open(v->o.record, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (v->record_fd < 0) {
            fprintf(stderr, "feroce evm: cannot create %s: %s\n", v->o.record, strerror(errno));
            return -1;
        }
    }
    if (v->o.policy == FE_EB_POLICY_TABLES) {
        struct fe_eb_mgr_config mc;
        fe_eb_mgr_config_default(&mc);
        mc.n_builders = v->o.n_builders;
        mc.n_slots = v->o.n_slots;
        mc.reserve = v->o.reserve;
        mc.run_events = v->o.run_events;
        mc.lead_events = v->o.lead;
        mc.builder_timeout_ns = v->o.builder_timeout_ns;
        mc.epoch = 1;
        if (fe_eb_mgr_init(&v->mgr, &mc)) {
            fprintf(stderr, "feroce evm: bad manager configuration\n");
            return -1;
        }
        v->have_mgr = true;
    }
    int err = 0;
    char msg[256];
    if (v->o.ep.backend == FE_BACKEND_RAW && !(v->ep = fe_ep_create(&v->o.ep, &err))) {
        fprintf(stderr, "feroce evm: %s\n", fe_ep_open_error(&v->o.ep, err, msg, sizeof msg));
        return -1;
    }
    if (fe_ebw_chan_open(&v->sock, v->ep, v->o.ip, v->o.port, input, v, "evm")) return -1;
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    if (!(v->loop = fe_loop_create(&lc, &err))) {
        fprintf(stderr, "feroce evm: event loop: %s\n", fe_io_fail_str(err));
        return -1;
    }
    fe_loop_add(v->loop, v->ep ? fe_ep_fd(v->ep) : fe_ebw_chan_fd(&v->sock), 0);
    v->t0 = fe_io_now_ns();
    v->next_tick = v->t0 + v->o.interval_ns;
    fe_cli_catch_stop_signals();
    return start_web(v);
}

static void run_loop(struct evm *v)
{
    for (;;) {
        uint64_t now = fe_io_now_ns();
        receive(v, now);
        issue(v, now);
        repeat(v, now);
        forward_progress(v, now);
        live(v, now);
        fe_web_io_step(&v->o.web, now);
        if (v->all_passed_ns && now >= v->all_passed_ns + v->o.linger_ns) break;
        if (fe_cli_signals || now >= v->t0 + v->o.timeout_ns) break;
        uint64_t dl = v->next_forward < v->next_repeat ? v->next_forward : v->next_repeat;
        if (v->have_mgr && fe_eb_mgr_next_deadline(&v->mgr) < dl)
            dl = fe_eb_mgr_next_deadline(&v->mgr);
        dl = fe_web_io_deadline(&v->o.web, dl);
        int tags[2];
        (void)fe_loop_wait(v->loop, dl > now ? dl : now, tags, 2);
    }
}

static int summary(struct evm *v)
{
    fe_ebw_print_raw("evm", &v->sock);
    bool all;
    uint64_t p = min_progress(v, &all);
    const struct fe_eb_mgr_stats *s = v->have_mgr ? &v->mgr.stats : NULL;
    printf("%s\"progress\":%" PRIu64 ",\"chunks\":%" PRIu64 ",\"events_assigned\":%" PRIu64
           ",\"announces\":%" PRIu64 ",\"builder_timeouts\":%" PRIu64 ",\"starved\":%" PRIu64
           ",\"repeats\":%" PRIu64 ",\"bad_messages\":%" PRIu64 ",\"builders_down\":[",
           v->o.json ? "{" : "evm: {", all ? p : 0, s ? s->chunks : 0, s ? s->events : 0,
           s ? s->announces : 0, s ? s->timeouts : 0, s ? s->starved : 0, v->repeats, v->bad_msgs);
    bool first = true;
    for (unsigned i = 0; v->have_mgr && i < v->o.n_builders; i++)
        if (!v->mgr.b[i].up) {
            printf("%s%u", first ? "" : ",", i);
            first = false;
        }
    printf("]}\n");
    int rc = v->record_errors ? 1 : 0;
    if (v->record_fd >= 0 && close(v->record_fd)) rc = 1;
    if (v->record_errors) fprintf(stderr, "feroce evm: the assignment record is incomplete\n");
    return rc;
}

static int run(int argc, char **argv)
{
    struct evm *v = calloc(1, sizeof *v);
    if (!v) return 1;
    int rc = 2;
    if (parse(argc, argv, &v->o) == 0) {
        rc = 1;
        if (setup(v) == 0) {
            run_loop(v);
            rc = summary(v);
        }
    }
    fe_web_io_finish(&v->o.web, "evm");
    if (v->have_mgr) fe_eb_mgr_free(&v->mgr);
    fe_ebw_chan_close(&v->sock);
    fe_ep_destroy(v->ep);
    fe_loop_destroy(v->loop);
    free(v);
    return rc;
}

const struct fe_cmd fe_cmd_evm = {
    "evm", "event manager: turn builders' free slots into assignment tables for front-ends", usage,
    run};
