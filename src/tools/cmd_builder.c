/* feroce builder: an event builder on the wire. It opens one QP on every front-end (feroce send
 * --eb-source) through the side channel, registers one ring of S event slots that every QP
 * writes into, tells each front-end its ring (RING message), and hands every WRITE-with-immediate
 * completion to the core's assembly (fe_eb_asm). A consumer takes declared events in order,
 * verifies every byte of every fragment, records them to a data file and an event index, and
 * releases the slot; the watermark goes to the event manager (ANNOUNCE), whose chunks and
 * forwarded progress tell the assembly which ring positions the front-ends have passed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feroce/endpoint.h"
#include "feroce/sidechannel.h"
#include "tools/cli.h"
#include "tools/eb_wire.h"
#include "tools/io_opts.h"
#include "web/web.h"

#define B_MAX_FE       1024
#define B_RING_EVERY   100000000ull /* RING repeated until the front-end writes */
#define B_ANNOUNCE_NS  5000000ull
#define B_ANNOUNCE_MIN 500000ull
#define B_MAX_LAT      (1u << 20)
/* Round-robin, joining late: how long to wait for every front-end's proposal before starting
 * the ring with those that came (a missing front-end that had passed the start then drops
 * events after it, which are declared incomplete, not lost unseen). */
#define B_JOIN_WAIT_NS 1000000000ull

static const char usage[] =
    "usage: feroce builder --id B --fe ADDR[:PORT],... [OPTIONS]\n"
    "An event builder: opens a QP on every front-end (feroce send --eb-source; the list order\n"
    "is the source index), registers a ring of --slots event slots of (sources x --frag-max)\n"
    "bytes, assembles each event from the WRITE-with-immediate fragments (fe_eb_asm),\n"
    "verifies every byte, records built events to --out with an index (--out.idx), releases\n"
    "the slot and announces its watermark to the event manager. Events missing sources after\n"
    "--event-timeout are declared incomplete (recorded too, with the sources that arrived).\n"
    "Round-robin, started (or restarted) after the front-ends: it joins at an event they all\n"
    "agree on (their JOIN offers, its START); its events before are lost, FILE.done names it.\n"
    "\n"
    "  --id B                  builder id (0..M-1)\n"
    "  --fe ADDR[:PORT],...    the front-ends' side channels (17185), in source order;\n"
    "                          repeatable\n"
    "  --policy availability|round-robin   (availability: needs --manager)\n"
    "  --builders M            builders in all (round-robin: events E with E mod M = B)\n"
    "  --manager ADDR:PORT     the event manager (feroce evm)\n"
    "  --slots S (64)  --frag-max SIZE (4K)  --frag-bytes N|MIN-MAX (as the front-ends; 4K)\n"
    "  --event-timeout TIME    first fragment to incomplete (200ms)\n"
    "  --consume-rate RATE     the consumer's speed (e.g. 100Mbps; default unlimited)\n"
    "  --consume-delay TIME    ... or a pause per event\n"
    "  --slow-from TIME        the consumer is limited only from this long after the first\n"
    "                          event built\n"
    "  --out FILE              record built events: FILE, FILE.idx (fe_eb_index), and at a clean\n"
    "                          exit FILE.done\n"
    "  --events K              stop when every event below K is declared and released\n"
    "  --bind ADDR[:PORT]      data socket (127.0.0.1:4791)   --sc-port PORT (17186)\n"
    "  --backend raw --if IFNAME [--raw-backend auto|packet|xdp]   whole frames on the\n"
    "                          interface (docs/io-raw.md); the side channel and the messages\n"
    "                          go through it too, at the --bind address\n"
    "  --duration TIME  --timeout TIME (give up; 120s)  --interval TIME (1s)  --quiet  --json\n"
    "  --web [ADDR:]PORT  live dashboard (docs/dashboard.md)  --web-hold TIME\n"
    "\n"
    "Live line: built events/s, Gb/s, incomplete, queue, latency (first fragment to recorded)\n"
    "p50/p99. Exit status 0 when every recorded byte verified.\n";

struct b_opts {
    uint16_t id;
    uint32_t n_builders, n_slots, frag_max;
    uint8_t policy;
    struct fe_ebw_addr fe[B_MAX_FE];
    unsigned n_fe;
    struct fe_ebw_addr manager;
    bool have_manager;
    struct fe_ebw_sizes sizes;
    uint64_t event_timeout_ns, consume_bps, consume_delay_ns, slow_from_ns, events;
    uint64_t duration_ns, timeout_ns;
    const char *out;
    struct fe_ep_config ep;
    uint16_t sc_port;
    struct fe_qp_config qp;
    struct fe_io_opts io;
};

struct b_src {
    struct fe_sc_host host;
    uint8_t last_state;
    struct fe_qp *qp;
    uint32_t qpn, psn;
    uint64_t rx_posted; /* receive buffers posted in all */
    uint64_t ring_next_ns;
    uint64_t start_next_ns; /* START repeated until the front-end echoes it or writes */
    bool wrote;             /* a fragment arrived: it has our ring */
    uint64_t frags;
};

struct b_stats {
    uint64_t built, incomplete, skipped, bytes, verified_bytes, verify_errors;
    uint64_t recorded, record_errors;
};

struct builder {
    struct b_opts o;
    struct fe_ep *ep;
    struct fe_ebw_chan sock;
    struct fe_loop *loop;
    struct b_src *src;
    uint8_t *ring;
    uint64_t slot_bytes, va;
    uint32_t rkey;
    unsigned bits;
    struct fe_eb_asm *a;
    struct fe_eb_asm_config ac;
    struct fe_eb_positions *pos;
    struct fe_eb_rr_join *join; /* round-robin: the front-ends' proposals if we are late */
    uint64_t first_event;       /* the first event of our ring (E0; 0 unless we joined late) */
    uint64_t start_seq;         /* its ring position */
    bool joined;                /* E0 decided and the assembly started there */
    uint32_t *lens;             /* [slot x source]: bytes arrived, 0 = none */
    struct fe_eb_event *q;
    uint32_t q_head, q_count;
    int data_fd, idx_fd;
    uint64_t data_off;
    uint64_t progress; /* the front-ends' (slowest) next event, from the manager */
    uint64_t tokens_ns, next_consume_ns;
    double tokens_bytes;
    uint64_t announced, next_announce_ns, last_announce_ns;
    uint64_t *lat;
    size_t n_lat;
    struct b_stats st;
    uint64_t t0, first_ns, last_built_ns, next_tick, done_ns;
    struct b_stats tick_st;
    bool blocked;
    size_t web_lat_from; /* the latencies the web view's next sample covers start here */
};

/* ---- options ---- */

static int fe_list_opt(const char *val, void *p)
{
    struct b_opts *o = p;
    return fe_ebw_addr_list(val, o->fe, &o->n_fe, B_MAX_FE, FE_SC_PORT, "--fe");
}

static int manager_opt(const char *val, void *p)
{
    struct b_opts *o = p;
    unsigned n = 0;
    if (fe_ebw_addr_list(val, &o->manager, &n, 1, 0, "--manager")) return -1;
    o->have_manager = true;
    return 0;
}

static int check_opts(struct b_opts *o)
{
    const char *why = NULL;
    if (!o->n_fe)
        why = "--fe: at least one front-end";
    else if (o->policy == FE_EB_POLICY_TABLES && !o->have_manager)
        why = "the availability policy needs --manager";
    else if (o->policy == FE_EB_POLICY_RR && o->id >= o->n_builders)
        why = "round-robin: --id must be below --builders";
    else if (o->sizes.max_bytes > o->frag_max)
        why = "--frag-bytes larger than --frag-max";
    else if ((uint64_t)o->n_fe * o->frag_max * o->n_slots > (4ull << 30))
        why = "the ring (slots x sources x frag-max) is over 4 GiB";
    if (!why) return fe_io_opts_check("builder", &o->ep);
    fprintf(stderr, "feroce builder: %s\n", why);
    return -1;
}

static int parse(int argc, char **argv, struct b_opts *o)
{
    memset(o, 0, sizeof *o);
    fe_ep_config_default(&o->ep);
    fe_qp_config_default(&o->qp);
    fe_io_opts_default(&o->io);
    o->n_builders = 1;
    o->n_slots = 64;
    o->frag_max = 4096;
    o->sizes = (struct fe_ebw_sizes){4096, 4096};
    o->event_timeout_ns = 200000000ull;
    o->timeout_ns = 120000000000ull;
    o->sc_port = FE_EBW_BUILDER_SC_PORT;
    uint32_t id = 0;
    bool have_id = false;
    uint64_t fmax = 4096;
    const struct fe_opt opts[] = {
        {FE_OPT_U32MAX_("--id", id, FE_EB_MAX_BUILDERS - 1), .seen = &have_id,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_FN_("--fe", fe_list_opt, o)},
        {FE_OPT_FN_("--policy", fe_ebw_policy_opt, &o->policy), .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_U32MAX_("--builders", o->n_builders, FE_EB_MAX_BUILDERS), .min = 1,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_FN_("--manager", manager_opt, o)},
        {FE_OPT_U32MAX_("--slots", o->n_slots, 4096), .min = 2, .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_SIZE_("--frag-max", fmax), .min = 1, .max = 64u << 20, .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_FN_("--frag-bytes", fe_ebw_sizes_opt, &o->sizes)},
        {FE_OPT_TIME_("--event-timeout", o->event_timeout_ns), .min = 1000000,
         .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_RATE_("--consume-rate", o->consume_bps)},
        {FE_OPT_TIME_("--consume-delay", o->consume_delay_ns)},
        {FE_OPT_TIME_("--slow-from", o->slow_from_ns)},
        {FE_OPT_STR_("--out", o->out)},
        {FE_OPT_UINT_("--events", o->events)},
        {FE_OPT_U32MAX_("--sc-port", o->sc_port, 65535), .min = 1, .flags = FE_OPT_SAY_INVALID},
        {FE_OPT_TIME_("--duration", o->duration_ns)},
        {FE_OPT_TIME_("--timeout", o->timeout_ns)},
        {0},
    };
    struct fe_opt shared[FE_IO_OPTS_N + 1];
    fe_io_opts_table(shared, &o->io, &o->ep, &o->qp.mtu_bytes);
    const struct fe_opt *const tables[] = {opts, shared, NULL};
    const struct fe_cli cli = {.cmd = "builder", .tables = tables};
    if (fe_cli_parse(&cli, argc, argv) < 0) return -1;
    if (!have_id) {
        fprintf(stderr, "feroce builder: --id is needed\n");
        return -1;
    }
    o->id = (uint16_t)id;
    o->frag_max = (uint32_t)fmax;
    return check_opts(o);
}

/* ---- the QPs on the front-ends ---- */

static void post_receives(struct builder *b)
{
    /* Receive buffers are the back-pressure: source s may complete its k-th fragment only
     * while k < watermark + S (the slot it names is then free), else the front-end is RNR-NAKed
     * and retries. With round-robin the k-th fragment of a source is the k-th position. */
    uint64_t allow = fe_eb_asm_released(b->a) - b->start_seq + b->o.n_slots;
    for (unsigned k = 0; k < b->o.n_fe; k++) {
        struct b_src *s = &b->src[k];
        while (s->qp && s->rx_posted < allow && fe_qp_post_recv(s->qp, s->rx_posted, NULL, 0) == 0)
            s->rx_posted++;
    }
}

static int make_qp(struct builder *b, unsigned k, uint64_t now)
{
    struct b_src *s = &b->src[k];
    struct fe_qp_config qc = b->o.qp;
    qc.local_qpn = s->qpn;
    qc.remote_qpn = s->host.remote.qpn;
    qc.rq_psn = s->psn;
    qc.sq_psn = fe_io_random_u32() & FE_PSN_MASK;
    if (qc.rq_depth < b->o.n_slots + 1) qc.rq_depth = b->o.n_slots + 1;
    if (qc.cq_depth < 2 * b->o.n_slots + 64) qc.cq_depth = 2 * b->o.n_slots + 64;
    int err = 0;
    s->qp = fe_qp_create(&qc, now, &err, NULL);
    if (!s->qp) return err ? err : FE_EINVAL;
    struct fe_mr mr = {
        .rkey = b->rkey, .va = b->va, .len = b->slot_bytes * b->o.n_slots, .base = b->ring};
    err = fe_qp_reg_mr(s->qp, &mr);
    if (!err) err = fe_ep_add_qp(b->ep, s->qp, s->host.remote.ip, FE_ROCEV2_UDP_PORT, 0);
    if (err) {
        fe_qp_destroy(s->qp);
        s->qp = NULL;
        return err;
    }
    post_receives(b);
    return 0;
}

static void track_host(struct builder *b, unsigned k, uint64_t now)
{
    struct b_src *s = &b->src[k];
    uint8_t st = s->host.state;
    if (st == s->last_state) return;
    s->last_state = st;
    if ((st == FE_SC_H_MODIFYING || st == FE_SC_H_RTS) && !s->qp) {
        int e = make_qp(b, k, now);
        if (e) fprintf(stderr, "feroce builder: QP on front-end %u: %s\n", k, fe_strerror(e));
    }
    if (st == FE_SC_H_FAILED)
        fprintf(stderr, "feroce builder %u: front-end %u did not answer the side channel\n",
                b->o.id, k);
}

static void send_ring(struct builder *b, unsigned k, uint64_t now)
{
    struct b_src *s = &b->src[k];
    if (s->wrote || !s->qp || s->host.state != FE_SC_H_RTS || now < s->ring_next_ns) return;
    struct fe_eb_msg m = {.type = FE_EB_MSG_RING};
    m.u.ring = (struct fe_eb_ring){
        .builder = b->o.id,
        .policy = b->o.policy,
        .n_builders = (uint16_t)b->o.n_builders,
        .n_slots = b->o.n_slots,
        .qpn = s->qpn,
        .slot_bytes = b->slot_bytes,
        .frag_max_bytes = b->o.frag_max,
        .first_event = 0,
    };
    (void)fe_ebw_send(&b->sock, now, b->o.fe[k].ip, b->o.fe[k].port, &m);
    s->ring_next_ns = now + B_RING_EVERY;
}

/* Round-robin, joined late: every front-end learns where our ring starts; again every
 * B_RING_EVERY until its JOIN echoes it or its fragment arrives (datagrams can be lost). */
static void send_start(struct builder *b, unsigned k, uint64_t now)
{
    struct b_src *s = &b->src[k];
    if (!b->joined || s->wrote || !fe_eb_rr_join_needs_start(b->join, k) || now < s->start_next_ns)
        return;
    struct fe_eb_msg m = {.type = FE_EB_MSG_START};
    m.u.start = (struct fe_eb_start){b->o.id, (uint16_t)b->o.n_builders, b->first_event};
    (void)fe_ebw_send(&b->sock, now, b->o.fe[k].ip, b->o.fe[k].port, &m);
    s->start_next_ns = now + B_RING_EVERY;
}

/* ---- messages in: side-channel replies, the manager's chunks and progress ---- */

static uint64_t rr_positions_below(const struct builder *b, uint64_t event_end)
{
    uint32_t m = b->o.n_builders;
    return event_end > b->o.id ? (event_end - b->o.id + m - 1) / m : 0;
}

static uint64_t positions_below(const struct builder *b, uint64_t event_end)
{
    return b->o.policy == FE_EB_POLICY_RR ? rr_positions_below(b, event_end)
                                          : fe_eb_positions_below(b->pos, event_end);
}

/* E0 is decided: the assembly starts its ring there, unless it took fragments already (then
 * E0 is where it began). */
static void apply_join(struct builder *b, uint64_t now)
{
    uint64_t e0;
    if (b->joined || !b->join || !fe_eb_rr_join_poll(b->join, now) ||
        !fe_eb_rr_join_first(b->join, &e0))
        return;
    if (!fe_eb_asm_stats(b->a)->fragments) {
        struct fe_eb_asm *a;
        b->ac.first_event = e0;
        if (fe_eb_asm_create(&a, &b->ac)) {
            fprintf(stderr, "feroce builder %u: out of memory for the assembly\n", b->o.id);
            return;
        }
        fe_eb_asm_destroy(b->a);
        b->a = a;
        b->start_seq = fe_eb_rr_position(e0, b->o.n_builders);
    }
    b->first_event = e0; /* otherwise our first event: position 0, nothing of ours before */
    b->joined = true;
    if (!b->o.io.quiet)
        fprintf(stderr,
                "feroce builder %u: joined after the front-ends started: ring starts at event "
                "%" PRIu64 "; our events before it are lost\n",
                b->o.id, b->first_event);
}

/* A front-end's JOIN: the first event of ours it can still give (0: every one), and whether it
 * knows our start. */
static void join_input(struct builder *b, unsigned k, const struct fe_eb_join *j, uint64_t now)
{
    if (!b->join || j->builder != b->o.id || j->source != k) return;
    if (b->joined && j->has_first && j->first_event == b->first_event)
        fe_eb_rr_join_acked(b->join, k);
    (void)fe_eb_rr_join_propose(b->join, now, k, j->next_event,
                                fe_eb_asm_stats(b->a)->fragments > 0);
    apply_join(b, now);
}

static void eb_input(struct builder *b, const uint8_t *buf, size_t len, uint64_t now)
{
    struct fe_eb_msg m;
    if (fe_eb_msg_decode(buf, len, &m, NULL) != 0) return;
    if (m.type == FE_EB_MSG_TABLE && b->pos) {
        (void)fe_eb_positions_add(b->pos, &m.u.table);
    } else if (m.type == FE_EB_MSG_PROGRESS) {
        /* again when only the chunks grew: positions_below may have moved */
        if (m.u.progress.next_event > b->progress) b->progress = m.u.progress.next_event;
        fe_eb_asm_passed(b->a, now, positions_below(b, b->progress), b->progress);
    }
}

static void sc_input(struct builder *b, const uint8_t *buf, size_t len, uint32_t ip, uint16_t port,
                     uint64_t now)
{
    struct fe_sc_msg m;
    enum fe_sc_reason why;
    if (fe_sc_decode(buf, len, &m, &why) != 0) return;
    for (unsigned k = 0; k < b->o.n_fe; k++) {
        struct b_src *s = &b->src[k];
        if (s->host.cfg.fe_ip != ip || s->host.cfg.fe_port != port || m.rem.qpn != s->qpn) continue;
        if (fe_sc_host_input_msg(&s->host, now, &m, ip, port, &why) == 0) track_host(b, k, now);
        return;
    }
}

/* A JOIN, from the front-end at its side-channel address. */
static void fe_input(struct builder *b, const uint8_t *buf, size_t len, uint32_t ip, uint16_t port,
                     uint64_t now)
{
    struct fe_eb_msg m;
    if (fe_eb_msg_decode(buf, len, &m, NULL) != 0 || m.type != FE_EB_MSG_JOIN) return;
    for (unsigned k = 0; k < b->o.n_fe; k++)
        if (b->o.fe[k].ip == ip && b->o.fe[k].port == port) {
            join_input(b, k, &m.u.join, now);
            return;
        }
}

/* One datagram on our side-channel port (fe_ebw_chan: its socket, or the raw endpoint's hook). */
static void sock_input(void *arg, uint64_t now, const uint8_t *buf, size_t len, uint32_t ip,
                       uint16_t port)
{
    struct builder *b = arg;
    if (fe_eb_msg_is_eb(buf, len)) {
        /* chunks and progress move the assembly on: from the manager only */
        if (b->o.have_manager && ip == b->o.manager.ip && port == b->o.manager.port)
            eb_input(b, buf, len, now);
        else
            fe_input(b, buf, len, ip, port, now);
    } else {
        sc_input(b, buf, len, ip, port, now);
    }
}

static void sc_output(struct builder *b, uint64_t now)
{
    uint8_t msg[FE_SC_MSG_LEN];
    for (unsigned k = 0; k < b->o.n_fe; k++) {
        struct b_src *s = &b->src[k];
        while (fe_sc_host_poll_tx(&s->host, now, msg)) /* lost: the host's timeout resends */
            (void)fe_ebw_chan_send(&b->sock, now, b->o.fe[k].ip, b->o.fe[k].port, msg,
                                   FE_SC_MSG_LEN);
        track_host(b, k, now);
        send_ring(b, k, now);
        send_start(b, k, now);
    }
}

/* ---- fragments and declared events ---- */

static void enqueue(struct builder *b, const struct fe_eb_event *ev)
{
    b->q[(b->q_head + b->q_count) % b->o.n_slots] = *ev;
    b->q_count++;
}

static void fragments(struct builder *b, uint64_t now)
{
    /* the ring's start is about to move: the completions wait in the CQs (the receive
     * buffers, S per front-end, bound them below the CQ's depth) */
    if (b->join && fe_eb_rr_join_waiting(b->join)) return;
    for (unsigned k = 0; k < b->o.n_fe; k++) {
        struct b_src *s = &b->src[k];
        if (!s->qp) continue;
        struct fe_cqe c[64];
        int n;
        while ((n = fe_qp_poll_cq(s->qp, c, 64)) > 0) {
            for (int i = 0; i < n; i++) {
                if (c[i].status != FE_WC_SUCCESS || c[i].opcode != FE_WC_RECV_RDMA_WITH_IMM)
                    continue;
                s->wrote = true;
                s->frags++;
                struct fe_eb_event ev;
                int v = fe_eb_asm_fragment(b->a, now, k, c[i].imm, c[i].byte_len, &ev);
                if (v != FE_EB_F_OK && v != FE_EB_F_COMPLETE) continue;
                uint32_t slot = fe_eb_imm_slot(b->bits, c[i].imm);
                b->lens[(size_t)slot * b->o.n_fe + k] = c[i].byte_len;
                if (v == FE_EB_F_COMPLETE) enqueue(b, &ev);
            }
        }
    }
}

static void write_index(struct builder *b, const struct fe_eb_index_rec *r)
{
    if (b->idx_fd < 0) return;
    uint8_t rec[FE_EB_INDEX_RECORD_BYTES];
    if (fe_eb_index_encode(rec, r) != 0 || write(b->idx_fd, rec, sizeof rec) != sizeof rec)
        b->st.record_errors++;
}

/* A ring position no fragment reached: its event (if the chunks name it) is incomplete with
 * every source missing. */
static void record_skipped(struct builder *b, const struct fe_eb_event *ev)
{
    uint64_t e;
    b->st.skipped++;
    if (b->o.policy == FE_EB_POLICY_RR)
        e = b->o.id + ev->seq * b->o.n_builders;
    else if (fe_eb_positions_event(b->pos, ev->seq, &e) != 0)
        return;
    if (b->o.events && e >= b->o.events) return;
    struct fe_eb_index_rec r = {.event = e,
                                .offset = b->data_off,
                                .n_expected = (uint16_t)b->o.n_fe,
                                .builder = b->o.id,
                                .state = FE_EB_INCOMPLETE};
    write_index(b, &r);
}

static void expire(struct builder *b, uint64_t now)
{
    struct fe_eb_event ev;
    while (fe_eb_asm_expire(b->a, now, &ev)) {
        if (ev.state == FE_EB_SLOT_FREE)
            record_skipped(b, &ev);
        else
            enqueue(b, &ev);
    }
}

/* Verifies and records the arrived fragments of a declared event, in source order. */
static uint64_t take_event(struct builder *b, const struct fe_eb_event *ev, uint16_t *arrived)
{
    uint64_t bytes = 0;
    *arrived = 0;
    for (unsigned k = 0; k < b->o.n_fe; k++) {
        uint32_t *len = &b->lens[(size_t)ev->slot * b->o.n_fe + k];
        if (!*len) continue;
        const uint8_t *p = b->ring + fe_eb_frag_offset(ev->slot, b->slot_bytes, k, b->o.frag_max);
        bool ok = *len == fe_ebw_frag_bytes(&b->o.sizes, ev->event, k) &&
                  fe_ebw_check(p, *len, k, ev->event) == *len;
        if (ok)
            b->st.verified_bytes += *len;
        else
            b->st.verify_errors++;
        if (b->data_fd >= 0 && write(b->data_fd, p, *len) != (ssize_t)*len) b->st.record_errors++;
        bytes += *len;
        (*arrived)++;
        *len = 0;
    }
    return bytes;
}

/* The consumer's limit applies from --slow-from after the first event built (the front-ends
 * and the other builders start when they will). */
static bool slowed(const struct builder *b, uint64_t now)
{
    return !b->o.slow_from_ns || (b->first_ns && now >= b->first_ns + b->o.slow_from_ns);
}

static void consume_one(struct builder *b, uint64_t now)
{
    struct fe_eb_event ev = b->q[b->q_head];
    b->q_head = (b->q_head + 1) % b->o.n_slots;
    b->q_count--;
    uint16_t arrived;
    uint64_t off = b->data_off;
    uint64_t bytes = take_event(b, &ev, &arrived);
    b->data_off += bytes;
    b->st.bytes += bytes;
    bool complete = ev.state == FE_EB_SLOT_COMPLETE;
    if (complete) {
        b->st.built++;
        if (b->n_lat < B_MAX_LAT) b->lat[b->n_lat++] = now - ev.first_ns;
        b->last_built_ns = now;
        if (!b->first_ns) b->first_ns = ev.first_ns;
    } else {
        b->st.incomplete++;
    }
    if (!b->o.events || ev.event < b->o.events) {
        struct fe_eb_index_rec r = {.event = ev.event,
                                    .offset = off,
                                    .bytes = (uint32_t)bytes,
                                    .n_arrived = arrived,
                                    .n_expected = (uint16_t)ev.n_expected,
                                    .builder = b->o.id,
                                    .state = complete ? FE_EB_BUILT : FE_EB_INCOMPLETE};
        write_index(b, &r);
    }
    fe_eb_asm_release(b->a, now, ev.slot);
    if (b->o.consume_bps && slowed(b, now)) b->tokens_bytes -= (double)bytes;
    if (b->o.consume_delay_ns && slowed(b, now)) b->next_consume_ns = now + b->o.consume_delay_ns;
}

/* The consumer: as fast as it can, or at --consume-rate (a token bucket one event deep), or
 * one event per --consume-delay. */
static void consume(struct builder *b, uint64_t now)
{
    bool limited = slowed(b, now);
    if (limited && b->o.consume_bps) {
        b->tokens_bytes += (double)(now - b->tokens_ns) * (double)b->o.consume_bps / 8e9;
        double cap = (double)b->slot_bytes;
        if (b->tokens_bytes > cap) b->tokens_bytes = cap;
    }
    b->tokens_ns = now;
    uint64_t before = fe_eb_asm_released(b->a);
    while (b->q_count && (!limited || (now >= b->next_consume_ns && b->tokens_bytes >= 0)))
        consume_one(b, now);
    if (fe_eb_asm_released(b->a) != before) post_receives(b);
}

/* When the consumer can take its next event. */
static uint64_t consume_due(const struct builder *b, uint64_t now)
{
    if (!b->q_count) return UINT64_MAX;
    if (!slowed(b, now)) return now;
    uint64_t t = b->next_consume_ns > now ? b->next_consume_ns : now;
    if (b->o.consume_bps && b->tokens_bytes < 0) {
        uint64_t wait = (uint64_t)(-b->tokens_bytes * 8e9 / (double)b->o.consume_bps) + 1;
        if (now + wait > t) t = now + wait;
    }
    return t;
}

/* The watermark goes to the manager (its credits) and to every front-end: with round-robin a
 * front-end writes position p only once p < watermark + S, so that no packet of a fragment (a
 * fragment longer than the MTU is several) lands in a slot the consumer has not released; the
 * receive buffers alone would stop only the last packet. */
static void announce(struct builder *b, uint64_t now)
{
    uint64_t w = fe_eb_asm_released(b->a);
    bool moved = w != b->announced && now >= b->last_announce_ns + B_ANNOUNCE_MIN;
    if (!moved && now < b->next_announce_ns) return;
    struct fe_eb_msg m = {.type = FE_EB_MSG_ANNOUNCE};
    m.u.announce = (struct fe_eb_announce){b->o.id, b->o.n_slots, w, 0};
    if (b->o.have_manager) (void)fe_ebw_send(&b->sock, now, b->o.manager.ip, b->o.manager.port, &m);
    for (unsigned k = 0; k < b->o.n_fe; k++)
        if (b->src[k].qp) (void)fe_ebw_send(&b->sock, now, b->o.fe[k].ip, b->o.fe[k].port, &m);
    b->announced = w;
    b->last_announce_ns = now;
    b->next_announce_ns = now + B_ANNOUNCE_NS;
    if (b->pos) fe_eb_positions_forget(b->pos, w > b->o.n_slots ? w - b->o.n_slots : 0);
}

/* ---- setup, run, report ---- */

static int open_out(struct builder *b)
{
    b->data_fd = b->idx_fd = -1;
    if (!b->o.out) return 0;
    char idx[4096];
    snprintf(idx, sizeof idx, "%s.idx", b->o.out);
    char done[4096];
    snprintf(done, sizeof done, "%s.done", b->o.out);
    (void)unlink(done);
    b->data_fd = open(b->o.out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    b->idx_fd = open(idx, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (b->data_fd < 0 || b->idx_fd < 0) {
        fprintf(stderr, "feroce builder: cannot create %s: %s\n", b->o.out, strerror(errno));
        return -1;
    }
    uint8_t h[FE_EB_INDEX_HEADER_BYTES];
    fe_eb_index_header(h);
    return write(b->idx_fd, h, sizeof h) == sizeof h ? 0 : -1;
}

static int open_sources(struct builder *b, uint64_t now)
{
    uint32_t my_ip;
    fe_ep_local(b->ep, &my_ip, NULL);
    uint32_t qpn0 = 0x1000 + (uint32_t)b->o.id * 0x1000;
    for (unsigned k = 0; k < b->o.n_fe; k++) {
        struct b_src *s = &b->src[k];
        s->qpn = (qpn0 + k) & 0xFFFFFF;
        s->psn = fe_io_random_u32() & FE_PSN_MASK;
        struct fe_sc_host_config hc;
        fe_sc_host_config_default(&hc);
        hc.fe_ip = b->o.fe[k].ip;
        hc.fe_port = b->o.fe[k].port;
        hc.any_src_port = false;
        hc.reply_port = b->o.sc_port;
        hc.max_tries = 100; /* front-ends may start after us */
        hc.local = (struct fe_sc_qp_info){s->qpn, s->psn, b->rkey, b->va, my_ip};
        if (fe_sc_host_init(&s->host, &hc) || fe_sc_host_open(&s->host, now)) return -1;
    }
    return 0;
}

static int setup_core(struct builder *b)
{
    struct fe_eb_asm_config *ac = &b->ac;
    fe_eb_asm_config_default(ac);
    ac->n_sources = b->o.n_fe;
    ac->n_slots = b->o.n_slots;
    ac->frag_max_bytes = b->o.frag_max;
    ac->timeout_ns = b->o.event_timeout_ns;
    ac->rr_builders = b->o.policy == FE_EB_POLICY_RR ? b->o.n_builders : 0;
    if (fe_eb_asm_create(&b->a, ac)) return -1;
    if (b->o.policy == FE_EB_POLICY_RR &&
        fe_eb_rr_join_create(&b->join, b->o.n_fe, b->o.id, b->o.n_builders, B_JOIN_WAIT_NS))
        return -1;
    if (b->o.policy == FE_EB_POLICY_TABLES &&
        fe_eb_positions_create(&b->pos, b->o.id, 4 * b->o.n_slots + 64, 0))
        return -1;
    b->bits = fe_eb_asm_slot_bits(b->a);
    b->slot_bytes = (uint64_t)b->o.n_fe * b->o.frag_max;
    b->ring = calloc(b->o.n_slots, b->slot_bytes);
    b->lens = calloc((size_t)b->o.n_slots * b->o.n_fe, sizeof *b->lens);
    b->q = calloc(b->o.n_slots, sizeof *b->q);
    b->src = calloc(b->o.n_fe, sizeof *b->src);
    b->lat = malloc(B_MAX_LAT * sizeof *b->lat);
    if (!b->ring || !b->lens || !b->q || !b->src || !b->lat) return -1;
    b->rkey = fe_io_random_u32();
    b->va = 0x200000000000ull + ((uint64_t)(fe_io_random_u32() & 0xFFFF) << 24);
    return 0;
}

/* --web: this builder's counters, the latencies since the previous sample, its ring's use. */
static void web_fill(void *ctx, struct fe_web_sample *s)
{
    struct builder *b = ctx;
    struct fe_web_builder *x = &s->b[0];
    s->n_builders = 1;
    x->id = b->o.id;
    x->up = x->has_built = x->has_bytes = x->has_lost = x->has_slots = true;
    x->built = b->st.built;
    x->incomplete = b->st.incomplete;
    x->bytes = b->st.bytes;
    x->lost = fe_eb_asm_stats(b->a)->skipped;
    fe_web_eb_latency(x, b->lat + b->web_lat_from, b->n_lat - b->web_lat_from);
    b->web_lat_from = b->n_lat;
    x->slots = b->o.n_slots;
    for (uint32_t i = 0; i < b->o.n_slots; i++)
        x->slots_used += fe_eb_asm_slot_state(b->a, i) != FE_EB_SLOT_FREE;
}

static int start_web(struct builder *b)
{
    char desc[256];
    snprintf(desc, sizeof desc, "event builder %u: %u front-ends, %u slots", b->o.id, b->o.n_fe,
             b->o.n_slots);
    struct fe_web_eb_run r = {desc, 1, b->o.id, web_fill, b};
    return fe_web_io_eb(&b->o.io.web, "builder", &r);
}

static int setup(struct builder *b)
{
    int err = 0;
    if (setup_core(b)) {
        fprintf(stderr, "feroce builder: out of memory for the ring\n");
        return -1;
    }
    if (open_out(b)) return -1;
    b->o.ep.max_qps = b->o.n_fe + 4;
    if (!(b->ep = fe_ep_create(&b->o.ep, &err))) {
        char m[256];
        fprintf(stderr, "feroce builder: %s\n", fe_ep_open_error(&b->o.ep, err, m, sizeof m));
        return -1;
    }
    uint32_t my_ip;
    fe_ep_local(b->ep, &my_ip, NULL);
    if (fe_ebw_chan_open(&b->sock, b->ep, my_ip, b->o.sc_port, sock_input, b, "builder")) return -1;
    struct fe_loop_config lc;
    fe_loop_config_default(&lc);
    if (!(b->loop = fe_loop_create(&lc, &err))) {
        fprintf(stderr, "feroce builder: event loop: %s\n", fe_io_fail_str(err));
        return -1;
    }
    fe_loop_add(b->loop, fe_ep_fd(b->ep), 0);
    if (fe_ebw_chan_fd(&b->sock) >= 0) fe_loop_add(b->loop, fe_ebw_chan_fd(&b->sock), 1);
    b->t0 = b->tokens_ns = fe_io_now_ns();
    b->next_tick = b->t0 + (b->o.io.interval_ns ? b->o.io.interval_ns : UINT64_MAX / 2);
    fe_cli_catch_stop_signals();
    if (start_web(b)) return -1;
    return open_sources(b, b->t0);
}

/* Every event below --events is declared and released (with tables: the manager said the
 * front-ends passed them, and every position below holds a released one). */
static bool all_done(const struct builder *b)
{
    if (!b->o.events || b->q_count) return false;
    if (b->o.policy == FE_EB_POLICY_TABLES && b->progress < b->o.events) return false;
    return fe_eb_asm_released(b->a) >= positions_below(b, b->o.events);
}

static void live(struct builder *b, uint64_t now)
{
    double dt = (double)(now - b->next_tick + b->o.io.interval_ns) / 1e9;
    uint64_t dn = b->st.built - b->tick_st.built, db = b->st.bytes - b->tick_st.bytes;
    uint64_t p50 = 0, p99 = 0;
    size_t from = b->n_lat > 2048 ? b->n_lat - 2048 : 0, n = b->n_lat - from;
    uint64_t tmp[2048];
    memcpy(tmp, b->lat + from, n * sizeof *tmp);
    fe_ebw_sort_u64(tmp, n);
    p50 = fe_ebw_quantile(tmp, n, 0.5);
    p99 = fe_ebw_quantile(tmp, n, 0.99);
    printf("builder %u: t=%.1fs built %" PRIu64 " (%.0f ev/s, %.3f Gb/s) incomplete %" PRIu64
           " queue %u watermark %" PRIu64 " latency p50 %.2f ms p99 %.2f ms\n",
           b->o.id, (double)(now - b->t0) / 1e9, b->st.built, dt > 0 ? (double)dn / dt : 0,
           dt > 0 ? (double)db * 8 / dt / 1e9 : 0, b->st.incomplete, b->q_count,
           fe_eb_asm_released(b->a), (double)p50 / 1e6, (double)p99 / 1e6);
    fflush(stdout);
    b->tick_st = b->st;
    while (b->next_tick <= now) b->next_tick += b->o.io.interval_ns;
}

static uint64_t next_wake(const struct builder *b, uint64_t now)
{
    uint64_t dl = fe_ep_next_deadline(b->ep);
    uint64_t t = fe_eb_asm_next_deadline(b->a);
    if (t < dl) dl = t;
    if ((t = consume_due(b, now)) < dl) dl = t;
    if (b->join && (t = fe_eb_rr_join_deadline(b->join)) < dl) dl = t;
    if (b->next_announce_ns < dl) dl = b->next_announce_ns;
    if (b->next_tick < dl) dl = b->next_tick;
    dl = fe_web_io_deadline(&b->o.io.web, dl);
    for (unsigned k = 0; k < b->o.n_fe; k++)
        if ((t = fe_sc_host_next_deadline(&b->src[k].host)) < dl) dl = t;
    if (dl > now + 20000000ull) dl = now + 20000000ull;
    return dl;
}

static void close_sources(struct builder *b, uint64_t now)
{
    for (unsigned k = 0; k < b->o.n_fe; k++) (void)fe_sc_host_close(&b->src[k].host, now);
    sc_output(b, now);
}

static void run_loop(struct builder *b)
{
    unsigned ready = FE_READY_ALL;
    for (;;) {
        uint64_t now = fe_io_now_ns();
        if (ready & 2u) fe_ebw_chan_poll(&b->sock, now);
        if ((ready & 1u) || fe_ep_rx_pending(b->ep)) fe_ep_poll_rx(b->ep, now, 512);
        fe_ep_handle_expiry(b->ep, now);
        apply_join(b, now);
        fragments(b, now);
        expire(b, now);
        consume(b, now);
        fe_ep_poll_tx(b->ep, now, 512);
        sc_output(b, now);
        announce(b, now);
        fe_web_io_step(&b->o.io.web, now);
        if (b->o.io.interval_ns && now >= b->next_tick && !b->o.io.quiet && !b->o.io.json)
            live(b, now);
        if (!b->done_ns && all_done(b)) b->done_ns = now;
        /* the last ACKs reach the front-ends before we go */
        if (b->done_ns && now >= b->done_ns + 200000000ull) break;
        if (fe_cli_signals || now >= b->t0 + b->o.timeout_ns ||
            (b->o.duration_ns && now >= b->t0 + b->o.duration_ns))
            break;
        ready = fe_io_wait(b->loop, b->ep, fe_ep_fd(b->ep), &b->blocked, now, next_wake(b, now));
    }
    close_sources(b, fe_io_now_ns());
}

static void mark_done(const struct builder *b, const char *line)
{
    if (!b->o.out) return;
    char done[4096];
    snprintf(done, sizeof done, "%s.done", b->o.out);
    FILE *f = fopen(done, "w");
    if (f) {
        fputs(line, f);
        fclose(f);
    }
}

static void print_transport(const struct builder *b)
{
    const struct fe_ep_stats *e = fe_ep_stats(b->ep);
    const struct fe_udpsock_stats *u = fe_ep_udp_stats(b->ep);
    uint64_t dup = 0, ooo = 0, rnr = 0, naks = 0;
    for (unsigned k = 0; k < b->o.n_fe; k++) {
        if (!b->src[k].qp) continue;
        const struct fe_qp_counters *q = fe_qp_counters(b->src[k].qp);
        dup += q->rx_dup_pkts;
        ooo += q->rx_ooo_pkts;
        rnr += q->tx_rnr_naks;
        for (int i = 0; i < 5; i++) naks += q->tx_naks[i];
    }
    fprintf(stderr,
            "builder %u transport: rx %" PRIu64 " packets, %" PRIu64 " parse errors, %" PRIu64
            " duplicates, %" PRIu64 " out of order, %" PRIu64 " NAKs and %" PRIu64
            " RNR NAKs sent, socket: %" PRIu64 " truncated\n",
            b->o.id, e->rx_pkts, e->rx_parse, dup, ooo, naks, rnr, u ? u->rx_trunc : 0);
    char who[32];
    snprintf(who, sizeof who, "builder %u", b->o.id);
    fe_ebw_print_raw(who, &b->sock);
}

static int summary(struct builder *b)
{
    if (b->o.io.json || !b->o.io.quiet) print_transport(b);
    const struct fe_eb_asm_stats *as = fe_eb_asm_stats(b->a);
    fe_ebw_sort_u64(b->lat, b->n_lat);
    double secs =
        b->last_built_ns > b->first_ns ? (double)(b->last_built_ns - b->first_ns) / 1e9 : 0;
    double ev_s = secs > 0 ? (double)b->st.built / secs : 0;
    double gbps = secs > 0 ? (double)b->st.bytes * 8 / secs / 1e9 : 0;
    uint64_t refused = 0;
    for (int r = FE_EB_F_SOURCE; r < FE_EB_F_MAX; r++) refused += as->refused[r];
    char line[1024];
    snprintf(line, sizeof line,
             "{\"builder\":%u,\"built\":%" PRIu64 ",\"incomplete\":%" PRIu64 ",\"skipped\":%" PRIu64
             ",\"bytes\":%" PRIu64 ",\"verified_bytes\":%" PRIu64 ",\"verify_errors\":%" PRIu64
             ",\"record_errors\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"late\":%" PRIu64
             ",\"overrun\":%" PRIu64
             ",\"events_per_s\":%.0f,\"gbps\":%.3f,\"latency_ns\":{\"p50\":%" PRIu64
             ",\"p99\":%" PRIu64 ",\"max\":%" PRIu64 "},\"first_event\":%" PRIu64 ",\"done\":%s}\n",
             b->o.id, b->st.built, b->st.incomplete, b->st.skipped, b->st.bytes,
             b->st.verified_bytes, b->st.verify_errors, b->st.record_errors, refused,
             as->refused[FE_EB_F_LATE], as->refused[FE_EB_F_OVERRUN], ev_s, gbps,
             fe_ebw_quantile(b->lat, b->n_lat, 0.5), fe_ebw_quantile(b->lat, b->n_lat, 0.99),
             b->n_lat ? b->lat[b->n_lat - 1] : 0, b->first_event, b->done_ns ? "true" : "false");
    if (b->o.io.json)
        fputs(line, stdout);
    else if (!b->o.io.quiet)
        printf("builder %u: built %" PRIu64 ", incomplete %" PRIu64 ", skipped %" PRIu64
               ", %.0f events/s, %.3f Gb/s; data verified: %" PRIu64 " bytes, %" PRIu64
               " errors; latency p50 %.2f ms p99 %.2f ms\n",
               b->o.id, b->st.built, b->st.incomplete, b->st.skipped, ev_s, gbps,
               b->st.verified_bytes, b->st.verify_errors,
               (double)fe_ebw_quantile(b->lat, b->n_lat, 0.5) / 1e6,
               (double)fe_ebw_quantile(b->lat, b->n_lat, 0.99) / 1e6);
    bool ok = !b->st.verify_errors && !b->st.record_errors;
    if (b->data_fd >= 0 && close(b->data_fd)) ok = false;
    if (b->idx_fd >= 0 && close(b->idx_fd)) ok = false;
    b->data_fd = b->idx_fd = -1;
    if (ok) mark_done(b, line);
    return ok && (!b->o.events || b->done_ns) ? 0 : 1;
}

static void destroy(struct builder *b)
{
    for (unsigned k = 0; b->src && k < b->o.n_fe; k++)
        if (b->src[k].qp) {
            fe_ep_remove_qp(b->ep, b->src[k].qp);
            fe_qp_destroy(b->src[k].qp);
        }
    if (b->data_fd >= 0) close(b->data_fd);
    if (b->idx_fd >= 0) close(b->idx_fd);
    fe_eb_asm_destroy(b->a);
    fe_eb_positions_destroy(b->pos);
    fe_eb_rr_join_destroy(b->join);
    fe_ebw_chan_close(&b->sock);
    fe_ep_destroy(b->ep);
    fe_loop_destroy(b->loop);
    free(b->ring);
    free(b->lens);
    free(b->q);
    free(b->src);
    free(b->lat);
    free(b);
}

static int run(int argc, char **argv)
{
    struct builder *b = calloc(1, sizeof *b);
    if (!b) return 1;
    b->data_fd = b->idx_fd = -1;
    int rc = 2;
    if (parse(argc, argv, &b->o) == 0) {
        rc = 1;
        if (setup(b) == 0) {
            run_loop(b);
            b->web_lat_from = b->n_lat; /* the summary sorts them: none for the last sample */
            rc = summary(b);
        }
    }
    fe_web_io_finish(&b->o.io.web, "builder");
    destroy(b);
    return rc;
}

const struct fe_cmd fe_cmd_builder = {
    "builder", "event builder: assemble events from front-ends' fragments, verify, record", usage,
    run};
