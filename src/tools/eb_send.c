/* feroce send --eb-source ID: a front-end of event building. Builders open one QP each on it
 * through the side channel (as feroce recv does) and tell it, with a RING message, which QP is
 * theirs and their ring's geometry. Then, per triggered event, it asks the assignment
 * (round-robin, or the event manager's chunks) which builder and slot, and writes its fragment
 * there as an RDMA WRITE with immediate; it reports its progress to the manager. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feroce/endpoint.h"
#include "feroce/sidechannel.h"
#include "tools/cli.h"
#include "tools/eb_wire.h"
#include "tools/io_opts.h"

#define EBS_WINDOW    64 /* fragments posted and not yet completed, per builder */
#define EBS_MAX_BLD   FE_SC_MAX_QPS
#define EBS_REPORT_NS 2000000ull
#define EBS_RUNS      4096

static const char eb_usage[] =
    "usage: feroce send --eb-source ID --eb-builders M [OPTIONS]\n"
    "An event-building front-end: builders (feroce builder) open one QP each on its side\n"
    "channel and send their ring's geometry; each triggered event's fragment is written (RDMA\n"
    "WRITE with immediate) into the slot of the builder the assignment names: round-robin, or\n"
    "the event manager's (feroce evm) tables. Fragment bytes are a function of (event, source,\n"
    "offset), so the builders verify every byte. See docs/event-building.md.\n"
    "\n"
    "  --eb-source ID          this front-end's source index (0..N-1; builders list front-ends\n"
    "                          in this order)\n"
    "  --eb-builders M         builders to wait for before triggering (1..16)\n"
    "  --events K              events to trigger (1000)\n"
    "  --trigger-hz R          trigger rate (0: as fast as the builders take them) (10000)\n"
    "  --frag-bytes N|MIN-MAX  fragment size, a fixed function of (event, source) (4K)\n"
    "  --manager ADDR:PORT     the event manager: progress reports go there (tables policy)\n"
    "  --busy wait|skip        no assignment for an event yet: hold the trigger (deadtime,\n"
    "                          the default), or skip its fragment and count it busy\n"
    "  --builder-timeout TIME  a builder silent this long (no announcement) is down: its\n"
    "                          fragments are dropped and counted, never waited for, until it\n"
    "                          announces again (300ms; 0: wait for its QP to fail)\n"
    "  --ring-timeout TIME     start without the builders whose ring has not arrived this\n"
    "                          long after the first: down (2s; 0: wait for every ring).\n"
    "                          Round-robin: one whose ring comes later (or a restarted one)\n"
    "                          joins at an event every front-end agrees on (JOIN, START);\n"
    "                          its fragments before are dropped and counted\n"
    "  --eb-report FILE        write this front-end's counts (sent, dropped, busy per builder)\n"
    "                          for feroce eb-check --report\n"
    "  --bind ADDR[:PORT]      data socket (127.0.0.1:4791)\n"
    "  --sc ADDR[:PORT]        side channel (the data address, port 17185)\n"
    "  --backend raw --if IFNAME [--raw-backend auto|packet|xdp]   whole frames on the\n"
    "                          interface (docs/io-raw.md); the side channel and the messages\n"
    "                          go through it too, at the --bind address\n"
    "  --timeout TIME          give up (60s)   --linger TIME after the last event (300ms)\n"
    "  --mtu N (4096)  --ack-timeout TIME (4ms)  --retry N (7)  --quiet  --json  --eb-help\n"
    "\n"
    "Exit status 0 when every event was sent, throttled (busy) or dropped for a dead builder.\n";

struct ebs_opts {
    uint16_t source;
    uint32_t n_builders;
    uint64_t events, trigger_hz;
    struct fe_ebw_sizes sizes;
    struct fe_ebw_addr manager;
    bool have_manager, have_source;
    struct fe_ep_config ep;
    uint32_t sc_ip;
    uint16_t sc_port;
    struct fe_qp_config qp;
    uint64_t timeout_ns, linger_ns, builder_timeout_ns, ring_timeout_ns;
    bool quiet, json, busy_wait;
    const char *report;
    uint32_t ignore_starts; /* test hook FEROCE_EB_IGNORE_START: STARTs per builder ignored */
};

struct ebs_flow {
    struct fe_qp *qp;
    struct fe_sc_qp_info peer;
    int builder; /* -1 until its RING arrived */
    bool error;
    uint64_t posted, completed, frags, bytes;
    uint8_t *pool; /* EBS_WINDOW x frag_max: fragments in flight */
};

struct ebs_builder {
    int flow; /* -1: not bound */
    struct fe_eb_ring ring;
    uint64_t sent;          /* fragments posted to it */
    uint64_t undeliverable; /* fragments for it not sent: its QP failed (it died) */
    uint64_t dropped;       /* fragments for it not sent: it was down (silent) */
    uint64_t released;      /* its announced watermark: ring positions it has released */
    uint64_t heard_ns;      /* its newest ring or announcement */
    uint64_t downs;         /* times it was declared down */
    bool down;
    bool needs_join; /* round-robin: no ring when triggering started, or a new one since: it
                      * joins at its START's event */
    bool late_said;  /* its late ring reported */
    bool join_known; /* its START arrived: join_event is where its ring starts */
    uint64_t join_event;
    uint64_t offer; /* the first event offered to it in JOIN (0: not yet) */
    uint32_t sc_ip; /* where its ring came from: JOINs go there */
    uint16_t sc_port;
    uint32_t starts_ignored; /* test hook: its STARTs ignored so far */
};

struct ebs {
    struct ebs_opts o;
    struct fe_ep *ep;
    struct fe_ebw_chan sc;
    struct fe_sc_fe scfe;
    struct fe_loop *loop;
    struct ebs_flow flow[FE_SC_MAX_QPS];
    struct ebs_builder bld[EBS_MAX_BLD];
    struct fe_eb_fe_table *table;
    uint8_t policy;
    uint32_t n_slots;
    unsigned slot_bits;
    bool started, geometry_bad;
    uint64_t next_event, busy, sent_events, stalls;
    uint64_t closed_frags, closed_bytes;    /* of flows the builders closed */
    uint64_t retx_pkts, timeouts, rnr_naks; /* the transport's, over every flow */
    uint64_t stall_ns, deadtime_ns;         /* busy raised to the trigger: since, in all */
    uint64_t max_stall_ns;                  /* the longest single deadtime */
    uint64_t t0, start_ns, end_ns, next_trigger_ns, next_report_ns, done_ns;
    uint64_t first_ring_ns; /* 0 until a builder's ring arrived */
    unsigned final_reports;
    bool blocked;
};

/* ---- options ---- */

static int manager_opt(const char *val, void *p)
{
    struct ebs_opts *o = p;
    unsigned n = 0;
    if (fe_ebw_addr_list(val, &o->manager, &n, 1, 0, "--manager")) return -1;
    o->have_manager = true;
    return 0;
}

static int busy_opt(const char *val, void *p)
{
    bool *wait = p;
    if (!strcmp(val, "wait"))
        *wait = true;
    else if (!strcmp(val, "skip"))
        *wait = false;
    else
        return -1;
    return 0;
}

static int sc_opt(const char *val, void *p)
{
    struct ebs_opts *o = p;
    return fe_io_parse_addr(val, &o->sc_ip, &o->sc_port);
}

/* Test hook FEROCE_EB_IGNORE_START=N (tests/io/eb_loopback.sh): ignore the first N STARTs of
 * each builder, as if lost, so that a late builder's START is resent and, past the join margin,
 * comes after the trigger passed its first event. Read once; a malformed value is refused. */
static int read_test_hook(struct ebs_opts *o)
{
    const char *e = getenv("FEROCE_EB_IGNORE_START");
    if (!e) return 0;
    char *end;
    errno = 0;
    unsigned long v = strtoul(e, &end, 10);
    if (errno || end == e || *end || e[0] == '-' || v > UINT32_MAX) {
        fprintf(stderr, "feroce send: FEROCE_EB_IGNORE_START='%s': expected a count\n", e);
        return -1;
    }
    o->ignore_starts = (uint32_t)v;
    return 0;
}

static int parse(int argc, char **argv, struct ebs_opts *o)
{
    memset(o, 0, sizeof *o);
    fe_ep_config_default(&o->ep);
    fe_qp_config_default(&o->qp);
    o->qp.ack_timeout_ns = 4000000;
    o->qp.ack_timeout_max_ns = 64000000;
    o->qp.rnr_retry = 7;
    o->n_builders = 1;
    o->events = 1000;
    o->trigger_hz = 10000;
    o->sizes = (struct fe_ebw_sizes){4096, 4096};
    o->sc_port = FE_SC_PORT;
    o->busy_wait = true;
    o->timeout_ns = 60000000000ull;
    o->linger_ns = 300000000ull;
    o->builder_timeout_ns = 300000000ull;
    o->ring_timeout_ns = 2000000000ull;
    uint32_t src = 0;
    struct fe_io_opts io;
    fe_io_opts_default(&io);
    const struct fe_opt opts[] = {
        {FE_OPT_U32MAX_("--eb-source", src, FE_EB_MAX_SOURCES - 1), .seen = &o->have_source,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_U32MAX_("--eb-builders", o->n_builders, EBS_MAX_BLD), .min = 1,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_UINT_("--events", o->events), .min = 1, .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_UINT_("--trigger-hz", o->trigger_hz)},
        {FE_OPT_FN_("--frag-bytes", fe_ebw_sizes_opt, &o->sizes)},
        {FE_OPT_FN_("--manager", manager_opt, o)},
        {FE_OPT_FN_("--sc", sc_opt, o), .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_FN_("--busy", busy_opt, &o->busy_wait), .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_TIME_("--timeout", o->timeout_ns)},
        {FE_OPT_TIME_("--linger", o->linger_ns)},
        {FE_OPT_TIME_("--builder-timeout", o->builder_timeout_ns)},
        {FE_OPT_TIME_("--ring-timeout", o->ring_timeout_ns)},
        {FE_OPT_STR_("--eb-report", o->report)},
        {FE_OPT_TIME_("--ack-timeout", o->qp.ack_timeout_ns)},
        {FE_OPT_U32MAX_("--retry", o->qp.retry_cnt, 7)},
        {0},
    };
    struct fe_opt shared[FE_IO_OPTS_N + 1];
    fe_io_opts_table(shared, &io, &o->ep, &o->qp.mtu_bytes);
    const struct fe_opt *const tables[] = {opts, shared, NULL};
    const struct fe_cli cli = {.cmd = "send", .tables = tables};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    if (!o->have_source) {
        fprintf(stderr, "feroce send: --eb-source ID is needed for event building\n");
        return -1;
    }
    if (fe_io_opts_check("send", &o->ep)) return -1;
    o->source = (uint16_t)src;
    o->quiet = io.quiet;
    o->json = io.json;
    if (!o->sc_ip) o->sc_ip = o->ep.udp.bind_ip;
    return read_test_hook(o);
}

/* ---- flows (one per builder QP) ---- */

static void flow_drop(struct ebs *s, unsigned i)
{
    struct ebs_flow *f = &s->flow[i];
    if (f->qp) {
        const struct fe_qp_counters *q = fe_qp_counters(f->qp);
        s->retx_pkts += q->retx_pkts;
        s->timeouts += q->timeouts;
        s->rnr_naks += q->rx_rnr_naks;
        fe_ep_remove_qp(s->ep, f->qp);
        fe_qp_destroy(f->qp);
    }
    free(f->pool);
    s->closed_frags += f->frags;
    s->closed_bytes += f->bytes;
    if (f->builder >= 0 && s->bld[f->builder].flow == (int)i) s->bld[f->builder].flow = -1;
    memset(f, 0, sizeof *f);
    f->builder = -1;
}

static void flow_open(struct ebs *s, unsigned i, const struct fe_sc_event *ev, uint64_t now)
{
    flow_drop(s, i);
    struct ebs_flow *f = &s->flow[i];
    struct fe_qp_config qc = s->o.qp;
    qc.local_qpn = ev->qpn;
    qc.remote_qpn = ev->peer.qpn;
    qc.sq_psn = ev->sq_psn;
    qc.rq_psn = fe_io_random_u32() & FE_PSN_MASK;
    qc.remote_va = ev->peer.va;
    qc.remote_rkey = ev->peer.rkey;
    int err = 0;
    f->qp = fe_qp_create(&qc, now, &err, NULL);
    if (!f->qp || fe_ep_add_qp(s->ep, f->qp, ev->peer.ip, FE_ROCEV2_UDP_PORT, 0)) {
        fprintf(stderr, "feroce send: cannot set up the QP for a builder: %s\n", fe_strerror(err));
        flow_drop(s, i);
        fe_sc_fe_release(&s->scfe, ev->qpn);
        return;
    }
    f->peer = ev->peer;
}

/* ---- builders up and down ----
 * A builder announces its watermark to every front-end every few ms. One silent for
 * --builder-timeout is down (it died, or cannot be reached): its fragments are dropped and
 * counted instead of filling its QP's queue, which would hold the trigger, and with it the
 * fragments for every other builder, until that QP's retries give up (about a second). The
 * events it was given are lost either way; the readout stalls at most the detection time. */

static void builder_heard(struct ebs *s, uint16_t id, uint64_t now)
{
    struct ebs_builder *b = &s->bld[id];
    b->heard_ns = now;
    if (!b->down) return;
    if (b->needs_join && !b->join_known) {
        /* Its ring positions would start at event 0, which the front-ends passed: it stays
         * down until its START says at which event its ring starts (every front-end's offer
         * taken into account). */
        if (!s->o.quiet && !b->late_said)
            fprintf(stderr,
                    "feroce send: eb-source %u: builder %u's ring arrived after the start: "
                    "offered events from %" PRIu64 " on, dropped until it says where it "
                    "starts\n",
                    s->o.source, id, b->offer);
        b->late_said = true;
        return;
    }
    b->down = false;
    if (!s->o.quiet)
        fprintf(stderr, "feroce send: eb-source %u: builder %u heard (ring or announcement): up\n",
                s->o.source, id);
}

static void check_builders_down(struct ebs *s, uint64_t now)
{
    if (!s->o.builder_timeout_ns || s->done_ns) return; /* builders leave after the run */
    for (unsigned id = 0; id < s->o.n_builders; id++) {
        struct ebs_builder *b = &s->bld[id];
        if (b->down || b->flow < 0 || now - b->heard_ns < s->o.builder_timeout_ns) continue;
        b->down = true;
        b->downs++;
        if (!s->o.quiet)
            fprintf(stderr,
                    "feroce send: eb-source %u: builder %u silent for %.0f ms: down, its "
                    "fragments dropped\n",
                    s->o.source, id, (double)(now - b->heard_ns) / 1e6);
    }
}

/* ---- the ring message: which QP leads to which builder ---- */

static bool ring_fits(struct ebs *s, const struct fe_eb_ring *r)
{
    const char *why = NULL;
    if (r->builder >= s->o.n_builders)
        why = "builder id beyond --eb-builders";
    else if ((uint64_t)(s->o.source + 1) * r->frag_max_bytes > r->slot_bytes)
        why = "this source's fragment does not fit in the slot";
    else if (s->o.sizes.max_bytes > r->frag_max_bytes)
        why = "--frag-bytes is larger than the builder's fragment maximum";
    else if (s->n_slots && (r->n_slots != s->n_slots || r->policy != s->policy))
        why = "builders disagree on the slot count or the policy";
    else if (r->policy == FE_EB_POLICY_RR && r->n_builders != s->o.n_builders)
        why = "round-robin over another builder count";
    if (!why) return true;
    if (!s->geometry_bad)
        fprintf(stderr, "feroce send: refused builder %u's ring: %s\n", r->builder, why);
    s->geometry_bad = true;
    return false;
}

/* Round-robin: the answer to each ring, and to each START. Offers every event (0) when the
 * builder's ring came before the start, else the next event plus the margin; echoes the
 * builder's start once known. */
static void send_join(struct ebs *s, uint16_t id, uint64_t now)
{
    struct ebs_builder *b = &s->bld[id];
    if (s->policy != FE_EB_POLICY_RR) return;
    if (b->needs_join && !b->offer) b->offer = fe_eb_rr_join_offer(s->next_event, s->o.trigger_hz);
    struct fe_eb_msg m = {.type = FE_EB_MSG_JOIN};
    m.u.join = (struct fe_eb_join){.source = s->o.source,
                                   .builder = id,
                                   .has_first = b->join_known,
                                   .next_event = b->needs_join ? b->offer : 0,
                                   .first_event = b->join_known ? b->join_event : 0};
    (void)fe_ebw_send(&s->sc, now, b->sc_ip, b->sc_port, &m);
}

/* A builder whose ring binds once triggering started (it came late, or it restarted) must
 * start its ring where every front-end can still give it events. */
static void mark_needs_join(struct ebs *s, struct ebs_builder *b)
{
    if (!s->started || s->policy != FE_EB_POLICY_RR) return;
    if (!b->down) b->downs++;
    b->down = true;
    b->needs_join = true;
    b->join_known = false;
    b->late_said = false;
    b->offer = 0;
    b->released = 0;
}

static void ring_input(struct ebs *s, const struct fe_eb_ring *r, uint32_t ip, uint16_t port,
                       uint64_t now)
{
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) {
        struct ebs_flow *f = &s->flow[i];
        if (!f->qp || f->peer.qpn != r->qpn || f->peer.ip != ip) continue;
        if (f->builder == r->builder) { /* a repeat */
            builder_heard(s, r->builder, now);
            send_join(s, r->builder, now);
            return;
        }
        if (!ring_fits(s, r)) return;
        if (!f->pool && !(f->pool = malloc((size_t)EBS_WINDOW * r->frag_max_bytes))) return;
        struct ebs_builder *b = &s->bld[r->builder];
        if (b->flow >= 0 && b->flow != (int)i) s->flow[b->flow].builder = -1;
        b->flow = (int)i;
        b->ring = *r;
        b->sc_ip = ip;
        b->sc_port = port;
        f->builder = r->builder;
        if (!s->first_ring_ns) s->first_ring_ns = now;
        s->n_slots = r->n_slots;
        s->policy = r->policy;
        s->slot_bits = fe_eb_slot_bits(r->n_slots);
        mark_needs_join(s, b);
        send_join(s, r->builder, now); /* makes the offer that builder_heard reports */
        builder_heard(s, r->builder, now);
        /* the table's slots wrap at the builders' S: made when the first ring tells it */
        if (!s->table && r->policy == FE_EB_POLICY_TABLES &&
            fe_eb_fe_table_create(&s->table, EBS_RUNS, r->n_slots, r->first_event))
            s->geometry_bad = true;
        return;
    }
}

/* ---- side channel (hosts open QPs) and the event-building messages ---- */

static void sc_event(struct ebs *s, const struct fe_sc_event *ev, uint64_t now)
{
    if (ev->slot >= FE_SC_MAX_QPS) return;
    if (ev->type == FE_SC_EV_OPENED || (ev->type == FE_SC_EV_UPDATED && !s->started))
        flow_open(s, ev->slot, ev, now);
    else if (ev->type == FE_SC_EV_CLOSED)
        flow_drop(s, ev->slot);
}

/* Round-robin: the builder's ring starts at st->first_event. Its events before are dropped
 * here (they are its loss); if the trigger has passed that event, the ones between were
 * dropped too, and the builder declares them incomplete. */
static void start_input(struct ebs *s, const struct fe_eb_start *st, uint32_t ip, uint64_t now)
{
    struct ebs_builder *b = &s->bld[st->builder];
    if (s->policy != FE_EB_POLICY_RR || st->n_builders != s->o.n_builders || b->flow < 0 ||
        s->flow[b->flow].peer.ip != ip)
        return;
    if (b->starts_ignored < s->o.ignore_starts) {
        b->starts_ignored++;
        if (!s->o.quiet)
            fprintf(stderr, "feroce send: eb-source %u: test hook: builder %u's START %u ignored\n",
                    s->o.source, st->builder, b->starts_ignored);
        return;
    }
    if (!b->join_known) {
        b->join_known = true;
        b->join_event = st->first_event;
        /* its ring's watermark starts at that event's position */
        uint64_t pos = fe_eb_rr_position(st->first_event, s->o.n_builders);
        if (pos > b->released) b->released = pos;
        if (!s->o.quiet)
            fprintf(stderr, "feroce send: eb-source %u: builder %u starts at event %" PRIu64 "%s\n",
                    s->o.source, st->builder, st->first_event,
                    s->next_event > st->first_event ? " (passed already: the events between are "
                                                      "dropped, incomplete at the builder)"
                                                    : "");
        builder_heard(s, st->builder, now);
    }
    send_join(s, st->builder, now);
}

/* Rings, STARTs and announcements are taken from the builder that holds the QP (ring_input,
 * below), chunks from the manager only. */
static void eb_input(struct ebs *s, const uint8_t *buf, size_t len, uint32_t ip, uint16_t port,
                     uint64_t now)
{
    struct fe_eb_msg m;
    enum fe_eb_msg_reason why;
    if (fe_eb_msg_decode(buf, len, &m, &why) != 0) return;
    if (m.type == FE_EB_MSG_RING) {
        ring_input(s, &m.u.ring, ip, port, now);
    } else if (m.type == FE_EB_MSG_START && m.u.start.builder < s->o.n_builders) {
        start_input(s, &m.u.start, ip, now);
    } else if (m.type == FE_EB_MSG_ANNOUNCE && m.u.announce.builder < EBS_MAX_BLD) {
        struct ebs_builder *b = &s->bld[m.u.announce.builder];
        if (b->flow < 0 || s->flow[b->flow].peer.ip != ip) return;
        if (m.u.announce.released > b->released) b->released = m.u.announce.released;
        builder_heard(s, m.u.announce.builder, now);
    } else if (m.type == FE_EB_MSG_TABLE && s->table && s->o.have_manager &&
               ip == s->o.manager.ip && port == s->o.manager.port) {
        if (m.u.table.first_event <= s->next_event) fe_eb_fe_table_forget(s->table, s->next_event);
        (void)fe_eb_fe_table_add(s->table, &m.u.table);
    }
}

/* One datagram on the side-channel port (fe_ebw_chan: its socket, or the raw endpoint's hook). */
static void sc_input(void *arg, uint64_t now, const uint8_t *buf, size_t len, uint32_t ip,
                     uint16_t port)
{
    struct ebs *s = arg;
    if (fe_eb_msg_is_eb(buf, len)) {
        eb_input(s, buf, len, ip, port, now);
        return;
    }
    struct fe_sc_fe_result res;
    if (fe_sc_fe_input(&s->scfe, now, buf, len, ip, port, &res) != 0) return;
    for (int e = 0; e < res.n_events; e++) sc_event(s, &res.ev[e], now);
    if (res.reply) /* lost (raw: the host's MAC still resolving): the host asks again */
        (void)fe_ebw_chan_send(&s->sc, now, res.reply_ip, res.reply_port, res.reply_msg,
                               FE_SC_MSG_LEN);
}

/* ---- triggering ---- */

enum { SENT, STALL };

/* The builder's QP failed (it died): its fragment cannot be delivered; the event is its loss. */
static bool flow_dead(const struct ebs_flow *f)
{
    return f->error || fe_qp_state(f->qp) == FE_QPS_ERROR;
}

static int send_fragment(struct ebs *s, uint64_t e, const struct fe_eb_target *t)
{
    struct ebs_builder *b = &s->bld[t->builder];
    /* down, or before its ring's start (it joined late) */
    if (b->down || (b->join_known && e < b->join_event)) {
        b->dropped++;
        return SENT;
    }
    if (b->flow < 0 || flow_dead(&s->flow[b->flow])) {
        b->undeliverable++;
        return SENT;
    }
    struct ebs_flow *f = &s->flow[b->flow];
    if (f->posted - f->completed >= EBS_WINDOW || !fe_qp_sq_room(f->qp)) return STALL;
    if (s->policy == FE_EB_POLICY_RR &&
        !fe_eb_rr_may_write(e, s->o.n_builders, b->released, b->ring.n_slots))
        return STALL;
    uint32_t len = fe_ebw_frag_bytes(&s->o.sizes, e, s->o.source);
    uint8_t *buf = f->pool + (size_t)(f->posted % EBS_WINDOW) * b->ring.frag_max_bytes;
    fe_ebw_fill(buf, len, s->o.source, e);
    struct fe_wr wr = {
        .op = FE_WR_WRITE_IMM,
        .cookie = e,
        .data = buf,
        .len = len,
        .remote_offset =
            fe_eb_frag_offset(t->slot, b->ring.slot_bytes, s->o.source, b->ring.frag_max_bytes),
        .imm = fe_eb_imm_make(s->slot_bits, t->slot, e),
    };
    int rc = fe_qp_post_send(f->qp, &wr);
    if (rc == FE_ENOSPC) return STALL;
    if (rc) {
        f->error = true;
        b->undeliverable++;
        return SENT;
    }
    f->posted++;
    b->sent++;
    f->frags++;
    f->bytes += len;
    return SENT;
}

static int trigger_one(struct ebs *s, uint64_t e)
{
    struct fe_eb_target t;
    if (s->policy == FE_EB_POLICY_RR) {
        t = fe_eb_rr_assign(e, s->o.n_builders, s->n_slots);
    } else if (fe_eb_fe_table_lookup(s->table, e, &t) != 0) {
        /* No assignment: never guess. Raise busy to the trigger (deadtime: wait for the
         * table), or with --busy skip send nothing for this event and count it. */
        if (s->o.busy_wait) return STALL;
        s->busy++;
        return SENT;
    }
    int rc = send_fragment(s, e, &t);
    if (rc == SENT) s->sent_events++;
    return rc;
}

/* Every builder's ring arrived, or --ring-timeout passed since the first one did: a builder
 * that died (or never came up) before its ring got here must not hold the readout. Timed from
 * the first ring, not from this process's start: front-ends are often started before the
 * builders, and until one ring arrives the policy and slot count are unknown, so there is
 * nothing to start with anyway. Not --builder-timeout: that bounds the silence between
 * announcements sent every 5 ms, while a live builder's ring can trail the first by its
 * process start plus the side channel's 100 ms retries (over 300 ms on a loaded host). */
static bool rings_settled(const struct ebs *s, uint64_t now)
{
    bool all = true;
    for (unsigned b = 0; b < s->o.n_builders; b++)
        if (s->bld[b].flow < 0) all = false;
    if (all) return true;
    return s->first_ring_ns && s->o.ring_timeout_ns &&
           now - s->first_ring_ns >= s->o.ring_timeout_ns;
}

static bool ready_to_start(const struct ebs *s, uint64_t now)
{
    if (!rings_settled(s, now) || s->geometry_bad) return false;
    return s->policy == FE_EB_POLICY_RR ||
           (s->table && fe_eb_fe_table_end(s->table) > s->next_event);
}

/* A builder without a ring at the start is down, as a silent one: its events are dropped and
 * counted until its ring arrives (builder_heard takes it up). */
static void start_without_missing(struct ebs *s, uint64_t now)
{
    for (unsigned id = 0; id < s->o.n_builders; id++) {
        struct ebs_builder *b = &s->bld[id];
        if (b->flow >= 0) continue;
        b->down = true;
        b->needs_join = s->policy == FE_EB_POLICY_RR;
        b->downs++;
        b->heard_ns = now;
        if (!s->o.quiet)
            fprintf(stderr,
                    "feroce send: eb-source %u: starting without builder %u: no ring %.0f ms "
                    "after the first (--ring-timeout); down, its fragments dropped\n",
                    s->o.source, id, (double)(now - s->first_ring_ns) / 1e6);
    }
}

static void trigger(struct ebs *s, uint64_t now)
{
    if (!s->started) {
        if (!ready_to_start(s, now)) return;
        start_without_missing(s, now);
        s->started = true;
        s->start_ns = s->next_trigger_ns = now;
    }
    uint64_t period = s->o.trigger_hz ? 1000000000ull / s->o.trigger_hz : 0;
    while (s->next_event < s->o.events && now >= s->next_trigger_ns) {
        if (trigger_one(s, s->next_event) == STALL) {
            if (!s->stall_ns) s->stall_ns = now;
            return;
        }
        if (s->stall_ns) { /* triggers during the deadtime are lost, not caught up */
            s->stalls++;
            s->deadtime_ns += now - s->stall_ns;
            if (now - s->stall_ns > s->max_stall_ns) s->max_stall_ns = now - s->stall_ns;
            s->stall_ns = 0;
            if (now > s->next_trigger_ns + period) s->next_trigger_ns = now;
        }
        s->next_event++;
        if (s->table) fe_eb_fe_table_forget(s->table, s->next_event);
        s->next_trigger_ns += period;
    }
    if (s->next_event == s->o.events && !s->end_ns) s->end_ns = now;
}

static void completions(struct ebs *s)
{
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) {
        struct ebs_flow *f = &s->flow[i];
        if (!f->qp) continue;
        struct fe_cqe c[64];
        int n;
        while ((n = fe_qp_poll_cq(f->qp, c, 64)) > 0)
            for (int k = 0; k < n; k++) {
                f->completed++;
                if (c[k].status != FE_WC_SUCCESS && !f->error) {
                    f->error = true;
                    fprintf(stderr, "feroce send: eb-source %u: the QP to builder %d failed (%s)\n",
                            s->o.source, f->builder, fe_wc_status_name(c[k].status));
                }
            }
        if (fe_qp_state(f->qp) == FE_QPS_ERROR) {
            f->error = true;
            f->completed = f->posted; /* flushed */
        }
    }
}

/* A down builder's fragments in flight are its loss: the run does not wait for its QP to give
 * them up. */
static bool all_completed(const struct ebs *s)
{
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) {
        const struct ebs_flow *f = &s->flow[i];
        if (f->builder >= 0 && s->bld[f->builder].down) continue;
        if (f->qp && f->completed < f->posted) return false;
    }
    return true;
}

static void report(struct ebs *s, uint64_t now)
{
    if (!s->o.have_manager || now < s->next_report_ns) return;
    struct fe_eb_msg m = {.type = FE_EB_MSG_PROGRESS};
    m.u.progress.source = s->o.source;
    m.u.progress.next_event = s->next_event;
    m.u.progress.busy_events = s->busy;
    (void)fe_ebw_send(&s->sc, now, s->o.manager.ip, s->o.manager.port, &m);
    s->next_report_ns = now + EBS_REPORT_NS;
    if (s->done_ns) s->final_reports++;
}

/* ---- run ---- */

static int setup(struct ebs *s)
{
    int err = 0;
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) s->flow[i].builder = -1;
    for (unsigned b = 0; b < EBS_MAX_BLD; b++) s->bld[b].flow = -1;
    s->ep = fe_ep_create(&s->o.ep, &err);
    if (!s->ep) {
        char m[256];
        fprintf(stderr, "feroce send: %s\n", fe_ep_open_error(&s->o.ep, err, m, sizeof m));
        return -1;
    }
    struct fe_sc_fe_config sc;
    fe_sc_fe_config_default(&sc);
    fe_ep_local(s->ep, &sc.local_ip, NULL);
    sc.reply_rate_per_s = 0;
    if (fe_sc_fe_init(&s->scfe, &sc)) return -1;
    if (fe_ebw_chan_open(&s->sc, s->ep, s->o.sc_ip, s->o.sc_port, sc_input, s, "send")) return -1;
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    if (!(s->loop = fe_loop_create(&lc, &err))) {
        fprintf(stderr, "feroce send: event loop: %s\n", fe_io_fail_str(err));
        return -1;
    }
    fe_loop_add(s->loop, fe_ep_fd(s->ep), 0);
    if (fe_ebw_chan_fd(&s->sc) >= 0) fe_loop_add(s->loop, fe_ebw_chan_fd(&s->sc), 1);
    fe_cli_catch_stop_signals();
    return 0;
}

static uint64_t next_wake(const struct ebs *s, uint64_t now)
{
    uint64_t dl = fe_ep_next_deadline(s->ep);
    /* held back (no table, or the builder's queue full): what unblocks it arrives on a socket */
    uint64_t t = s->stall_ns ? now + 1000000ull : s->next_trigger_ns;
    if (s->started && s->next_event < s->o.events && t < dl) dl = t;
    if (s->o.have_manager && s->next_report_ns < dl) dl = s->next_report_ns;
    if (dl > now + 20000000ull) dl = now + 20000000ull;
    return dl;
}

static void run_loop(struct ebs *s)
{
    unsigned ready = FE_READY_ALL;
    s->t0 = fe_io_now_ns();
    for (;;) {
        uint64_t now = fe_io_now_ns();
        bool drained = !(ready & 2u) || fe_ebw_chan_poll(&s->sc, now);
        if ((ready & 1u) || fe_ep_rx_pending(s->ep)) fe_ep_poll_rx(s->ep, now, 512);
        fe_ep_handle_expiry(s->ep, now);
        completions(s);
        /* after a pause of this process, hear the builders out before calling one silent */
        if (drained) check_builders_down(s, now);
        trigger(s, now);
        fe_ep_poll_tx(s->ep, now, 512);
        /* the table lookups may have found the policy only now */
        if (!s->done_ns && s->next_event == s->o.events && all_completed(s)) s->done_ns = now;
        report(s, now);
        if (s->done_ns && now >= s->done_ns + s->o.linger_ns &&
            (!s->o.have_manager || s->final_reports >= 5))
            break;
        if (fe_cli_signals || now >= s->t0 + s->o.timeout_ns) break;
        ready = fe_io_wait(s->loop, s->ep, fe_ep_fd(s->ep), &s->blocked, now, next_wake(s, now));
    }
}

/* --eb-report: what this front-end did with each event it triggered, per builder, for feroce
 * eb-check to hold against the builders' records. */
static int write_report(const struct ebs *s)
{
    if (!s->o.report) return 0;
    static struct fe_eb_report r;
    r = (struct fe_eb_report){.source = s->o.source,
                              .n_builders = (uint16_t)s->o.n_builders,
                              .triggered = s->next_event,
                              .busy = s->busy};
    for (unsigned b = 0; b < s->o.n_builders; b++)
        r.b[b] = (struct fe_eb_report_builder){s->bld[b].sent, s->bld[b].dropped,
                                               s->bld[b].undeliverable};
    uint8_t buf[FE_EB_REPORT_HEADER_BYTES + EBS_MAX_BLD * FE_EB_REPORT_BUILDER_BYTES];
    size_t len = fe_eb_report_bytes(r.n_builders);
    FILE *f = fopen(s->o.report, "wb");
    bool ok = f && fe_eb_report_encode(buf, sizeof buf, &r) == 0 && fwrite(buf, 1, len, f) == len;
    if (f && fclose(f)) ok = false;
    if (!ok) fprintf(stderr, "feroce send: cannot write the report %s\n", s->o.report);
    return ok ? 0 : -1;
}

static int summary(struct ebs *s)
{
    char who[32];
    snprintf(who, sizeof who, "eb-source %u", s->o.source);
    fe_ebw_print_raw(who, &s->sc);
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) flow_drop(s, i); /* takes their counters */
    uint64_t frags = s->closed_frags, bytes = s->closed_bytes, undeliverable = 0, dropped = 0;
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) {
        frags += s->flow[i].frags;
        bytes += s->flow[i].bytes;
    }
    for (unsigned b = 0; b < s->o.n_builders; b++) {
        undeliverable += s->bld[b].undeliverable;
        dropped += s->bld[b].dropped;
    }
    uint64_t end = s->end_ns ? s->end_ns : fe_io_now_ns();
    double secs = s->started && end > s->start_ns ? (double)(end - s->start_ns) / 1e9 : 0;
    double ev_s = secs > 0 ? (double)s->next_event / secs : 0;
    double gbps = secs > 0 ? (double)bytes * 8 / secs / 1e9 : 0;
    bool ok = s->next_event == s->o.events;
    bool report_ok = write_report(s) == 0;
    if (s->o.json) {
        printf("{\"source\":%u,\"triggered\":%" PRIu64 ",\"fragments\":%" PRIu64
               ",\"bytes\":%" PRIu64 ",\"busy\":%" PRIu64 ",\"dropped\":%" PRIu64
               ",\"undeliverable\":%" PRIu64 ",\"stalls\":%" PRIu64 ",\"deadtime_ns\":%" PRIu64
               ",\"max_stall_ns\":%" PRIu64 ",\"retx_pkts\":%" PRIu64 ",\"timeouts\":%" PRIu64
               ",\"rnr_naks\":%" PRIu64 ",\"events_per_s\":%.0f,\"gbps\":%.3f,\"ok\":%s}\n",
               s->o.source, s->next_event, frags, bytes, s->busy, dropped, undeliverable, s->stalls,
               s->deadtime_ns, s->max_stall_ns, s->retx_pkts, s->timeouts, s->rnr_naks, ev_s, gbps,
               ok ? "true" : "false");
    } else if (!s->o.quiet) {
        printf("eb-source %u: triggered %" PRIu64 "/%" PRIu64 " events, %" PRIu64
               " fragments (%" PRIu64 " bytes), busy %" PRIu64 ", dropped %" PRIu64
               " (builder down), undeliverable %" PRIu64
               " (its QP failed), deadtime %.1f ms (longest %.1f), %.0f events/s, %.3f Gb/s; "
               "retransmitted %" PRIu64 " packets, %" PRIu64 " timeouts, %" PRIu64 " RNR NAKs\n",
               s->o.source, s->next_event, s->o.events, frags, bytes, s->busy, dropped,
               undeliverable, (double)s->deadtime_ns / 1e6, (double)s->max_stall_ns / 1e6, ev_s,
               gbps, s->retx_pkts, s->timeouts, s->rnr_naks);
    }
    if (!ok)
        fprintf(stderr, "feroce send: eb-source %u stopped at event %" PRIu64 " of %" PRIu64 "%s\n",
                s->o.source, s->next_event, s->o.events,
                s->started ? "" : " (never started: builders or tables missing)");
    return ok && report_ok ? 0 : 1;
}

int fe_eb_send_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* --help is feroce send's own (main.c answers it) */
        if (!strcmp(argv[i], "--eb-help")) {
            fputs(eb_usage, stdout);
            return 0;
        }
    struct ebs *s = calloc(1, sizeof *s);
    if (!s) return 1;
    int rc = 2;
    if (parse(argc, argv, &s->o) == 0) {
        rc = 1;
        if (setup(s) == 0) {
            run_loop(s);
            rc = summary(s);
        }
    }
    for (unsigned i = 0; i < FE_SC_MAX_QPS; i++) flow_drop(s, i);
    fe_eb_fe_table_destroy(s->table);
    fe_ebw_chan_close(&s->sc);
    fe_ep_destroy(s->ep);
    fe_loop_destroy(s->loop);
    free(s);
    return rc;
}
